//! A decider's or channel's shared secret: its Standard Webhooks form
//! (`whsec_` + base64 of the key bytes), parsing with reasons that never
//! quote it, a fingerprint, generation, and message ids.

use std::fmt;
use std::str::FromStr;

use base64::engine::general_purpose::STANDARD as BASE64;
use base64::Engine as _;
use sha2::{Digest, Sha256};
use zeroize::Zeroizing;

use super::{GENERATED_KEY_BYTES, MAX_KEY_BYTES, MIN_KEY_BYTES, SECRET_PREFIX};

/// A decider's shared secret, `whsec_` + base64 of 24–64 key bytes. Both
/// forms are wiped from memory when it is dropped.
#[derive(Clone)]
pub struct Secret {
    /// The whole string as given (canonical: [`Secret::parse`] refuses any
    /// other spelling). The `Berth-Signature` HMAC key, and what the server
    /// stores (encrypted).
    text: Zeroizing<String>,
    /// The decoded part after the prefix: the Standard Webhooks HMAC key.
    key: Zeroizing<Vec<u8>>,
}

/// Why a string is not a usable secret. The messages never repeat the
/// secret, nor any character of it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SecretError {
    Empty,
    MissingPrefix,
    /// A character outside the standard base64 alphabet, at this 0-based
    /// byte offset of the whole string.
    BadCharacter {
        offset: usize,
        kind: &'static str,
    },
    /// The base64 is not canonical: wrong length, wrong padding, or
    /// non-zero trailing bits.
    BadBase64 {
        message: &'static str,
    },
    TooShort {
        bytes: usize,
    },
    TooLong {
        bytes: usize,
    },
}

impl fmt::Display for SecretError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let form = "a decider secret is `whsec_` followed by base64 (standard alphabet, padded) of 24 to 64 random bytes";
        match self {
            SecretError::Empty => write!(f, "the secret is empty; {form}"),
            SecretError::MissingPrefix => {
                write!(f, "the secret does not start with `whsec_`; {form}")
            }
            SecretError::BadCharacter { offset, kind } => write!(
                f,
                "the secret has {kind} at character {} (counting from 1); {form}",
                offset + 1
            ),
            SecretError::BadBase64 { message } => {
                write!(f, "the part after `whsec_` is not valid base64: {message}")
            }
            SecretError::TooShort { bytes } => write!(
                f,
                "the secret's key is {bytes} bytes; at least {MIN_KEY_BYTES} are required"
            ),
            SecretError::TooLong { bytes } => write!(
                f,
                "the secret's key is {bytes} bytes; at most {MAX_KEY_BYTES} are accepted"
            ),
        }
    }
}

impl std::error::Error for SecretError {}

impl Secret {
    /// Parse a secret in the `whsec_<base64>` form. Strict: the standard
    /// base64 alphabet with its padding, no whitespace, 24–64 key bytes,
    /// so that the string (the `Berth-Signature` key) and the decoded key
    /// (the Standard Webhooks key) correspond one to one.
    pub fn parse(text: &str) -> Result<Secret, SecretError> {
        if text.is_empty() {
            return Err(SecretError::Empty);
        }
        let Some(encoded) = text.strip_prefix(SECRET_PREFIX) else {
            return Err(SecretError::MissingPrefix);
        };
        for (i, c) in encoded.char_indices() {
            let kind = match c {
                'A'..='Z' | 'a'..='z' | '0'..='9' | '+' | '/' | '=' => continue,
                '-' | '_' => "a character of the URL-safe base64 alphabet (`-` or `_`)",
                c if c.is_whitespace() => "whitespace (copy it without spaces or line breaks)",
                c if c.is_ascii() => "a character that is not base64",
                _ => "a non-ASCII character",
            };
            return Err(SecretError::BadCharacter {
                offset: SECRET_PREFIX.len() + i,
                kind,
            });
        }
        let key = Zeroizing::new(BASE64.decode(encoded).map_err(|e| {
            // Our own words: base64's messages quote the offending symbol,
            // which is a character of the secret.
            let message = match e {
                base64::DecodeError::InvalidLength(_) => {
                    "its length is not a whole number of base64 groups (padding with `=` missing?)"
                }
                base64::DecodeError::InvalidPadding => "the `=` padding is wrong",
                base64::DecodeError::InvalidLastSymbol(..) => {
                    "its last character has bits set that encode nothing (not canonical base64)"
                }
                base64::DecodeError::InvalidByte(..) => "`=` appears before the end",
            };
            SecretError::BadBase64 { message }
        })?);
        if key.len() < MIN_KEY_BYTES {
            return Err(SecretError::TooShort { bytes: key.len() });
        }
        if key.len() > MAX_KEY_BYTES {
            return Err(SecretError::TooLong { bytes: key.len() });
        }
        Ok(Secret {
            text: Zeroizing::new(text.to_string()),
            key,
        })
    }

    /// The whole secret, `whsec_…`. Only for storing it (encrypted) and
    /// showing it once when it is generated; never log it.
    pub fn expose(&self) -> &str {
        &self.text
    }

    /// The Standard Webhooks key: the base64-decoded part after `whsec_`.
    pub fn key_bytes(&self) -> &[u8] {
        &self.key
    }

    /// What the API and pages show instead of the secret:
    /// `sha256:` + the first 16 hex digits of SHA-256 of the key bytes. 64
    /// bits tell secrets apart at a glance and reveal nothing usable about
    /// a 192-bit-or-more key; the prefix makes it obviously not a secret.
    pub fn fingerprint(&self) -> String {
        let digest = Sha256::digest(self.key.as_slice());
        format!("sha256:{}", &hex::encode(digest)[..16])
    }
}

impl FromStr for Secret {
    type Err = SecretError;
    fn from_str(s: &str) -> Result<Secret, SecretError> {
        Secret::parse(s)
    }
}

impl fmt::Debug for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Secret(<redacted> {})", self.fingerprint())
    }
}

/// A new secret: `whsec_` + base64 of [`GENERATED_KEY_BYTES`] bytes from
/// the operating system's random source.
pub fn generate() -> Secret {
    let mut key = Zeroizing::new(vec![0u8; GENERATED_KEY_BYTES]);
    getrandom::fill(key.as_mut_slice()).expect("the operating system's random source works");
    let text = Zeroizing::new(format!("{SECRET_PREFIX}{}", BASE64.encode(key.as_slice())));
    Secret { text, key }
}

/// A fresh `webhook-id` (kept with the other random ids in
/// [`crate::random`], which the outcome queue uses too).
pub use crate::random::new_webhook_id;
