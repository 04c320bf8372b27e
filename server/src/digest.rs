//! Digests: SHA-256 as hex, for token and session hashes, result
//! digests, and the short digests request bodies are cached and
//! deduplicated under. A leaf: it imports nothing of the crate.

use sha2::{Digest, Sha256};

/// SHA-256 of a text as 64 hex digits: how tokens and session ids are
/// stored (never the secret itself), and a result's digest.
pub fn sha256_hex(s: &str) -> String {
    hex::encode(Sha256::digest(s.as_bytes()))
}

/// SHA-256 of raw bytes as 64 hex digits (an observation batch's body).
pub fn sha256_hex_bytes(bytes: &[u8]) -> String {
    hex::encode(Sha256::digest(bytes))
}

/// The first 128 bits of SHA-256 as hex: a request body in a cache key.
pub fn body_digest(bytes: &[u8]) -> String {
    hex::encode(&Sha256::digest(bytes)[..16])
}
