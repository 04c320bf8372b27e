//! Signed requests to external deciders (SPEC §9), and the reference
//! verifier a decider ports to check them.
//!
//! When a decider has a secret, every request Berth sends it carries two
//! independent signatures of the exact body bytes, so a decider can tell a
//! real call from a guessed address or a replay with whatever library its
//! language has:
//!
//! - **`Berth-Signature`**, Stripe's webhook convention:
//!   `t=<unix seconds>,v1=<hex HMAC-SHA256>` over `"<t>.<body>"`. The HMAC
//!   key is the **whole secret string as UTF-8, prefix included**
//!   (`whsec_…`), because that is what the official `stripe` libraries do
//!   (`stripe.WebhookSignature.verify_header` computes
//!   `hmac.new(secret.encode("utf-8"), …)` on the secret as given), so they
//!   verify Berth's header unchanged.
//! - **Standard Webhooks**: `webhook-id`, `webhook-timestamp` and
//!   `webhook-signature: v1,<base64 HMAC-SHA256>` over
//!   `"<webhook-id>.<webhook-timestamp>.<body>"`. The HMAC key is the
//!   base64-decoded part after `whsec_` (the raw key bytes), as every
//!   Standard Webhooks library derives it.
//!
//! During a rotation overlap the request is signed with the current secret
//! and the previous one: `Berth-Signature` carries one `v1=` per secret and
//! `webhook-signature` one `v1,…` per secret, separated by a space, current
//! first. A verifier accepts the request if any signature matches its key.
//!
//! Secrets have the Standard Webhooks form: `whsec_` followed by base64
//! (standard alphabet, padded) of the key bytes; [`generate`] makes 32.
//! A [`Secret`] never prints itself: `Debug` shows a redaction and the
//! [`Secret::fingerprint`], and there is no `Display` or `Serialize`.
//!
//! The verifier ([`verify_berth`], [`verify_standard`]) is deliberately
//! small and written so it can be ported line for line to another
//! language; `docs/decider-webhook.md` walks through it. The test vectors
//! in `docs/decider-webhook.openapi.yaml` pin both schemes exactly.

use std::fmt;
use std::str::FromStr;

use base64::engine::general_purpose::STANDARD as BASE64;
use base64::Engine as _;
use hmac::{Hmac, Mac};
use sha2::{Digest, Sha256};
use subtle::{Choice, ConstantTimeEq};
use zeroize::Zeroizing;

/// Header names, lowercase (HTTP header names are case-insensitive; the
/// documents write `Berth-Signature`).
pub const BERTH_SIGNATURE: &str = "berth-signature";
pub const WEBHOOK_ID: &str = "webhook-id";
pub const WEBHOOK_TIMESTAMP: &str = "webhook-timestamp";
pub const WEBHOOK_SIGNATURE: &str = "webhook-signature";

/// Every secret starts with this, as in the Standard Webhooks
/// specification, so a leaked one is recognisable to secret scanners and
/// people.
pub const SECRET_PREFIX: &str = "whsec_";
/// Key bytes of a generated secret: 32 bytes = 256 bits, the output size
/// of SHA-256 (a longer HMAC key adds no strength).
pub const GENERATED_KEY_BYTES: usize = 32;
/// Fewest key bytes accepted: 24 (192 bits), the least the Standard
/// Webhooks specification allows for a symmetric secret; a shorter key is
/// refused rather than silently used.
pub const MIN_KEY_BYTES: usize = 24;
/// Most key bytes accepted: 64 (512 bits), the most the same
/// specification allows (and SHA-256's block size: HMAC would hash a
/// longer key down first, so it would add nothing).
pub const MAX_KEY_BYTES: usize = 64;
/// The usual replay window: 5 minutes, the default of the Stripe and
/// Standard Webhooks libraries. Enough for clock skew between hosts, short
/// enough that a captured request is soon useless.
pub const DEFAULT_TOLERANCE_S: i64 = 300;
/// Longest signature header the verifier reads, bytes. Two signatures
/// (rotation) take about 150 bytes; 2 KiB leaves room for a dozen while
/// bounding the work a hostile header can cause.
pub const MAX_HEADER_BYTES: usize = 2048;
/// Longest `webhook-id` the verifier reads, bytes. Berth's ids are 36
/// bytes; 256 is the string limit used everywhere in the decider contract.
pub const MAX_WEBHOOK_ID_BYTES: usize = 256;
/// Most digits in a timestamp: 12 digits reach the year 33658, so no
/// timestamp that fits is ever refused, and parsing cannot overflow.
const MAX_TIMESTAMP_DIGITS: usize = 12;

type HmacSha256 = Hmac<Sha256>;

// ---------------------------------------------------------------------------
// Secrets.

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

/// A fresh `webhook-id`: `msg_` + 32 hex digits (128 random bits), so ids
/// never repeat and a decider can use them to drop duplicates.
pub fn new_webhook_id() -> String {
    let mut bytes = [0u8; 16];
    getrandom::fill(&mut bytes).expect("the operating system's random source works");
    format!("msg_{}", hex::encode(bytes))
}

// ---------------------------------------------------------------------------
// Signing.

/// The four signature headers of one request (names: [`BERTH_SIGNATURE`],
/// [`WEBHOOK_ID`], [`WEBHOOK_TIMESTAMP`], [`WEBHOOK_SIGNATURE`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SignatureHeaders {
    pub berth_signature: String,
    pub webhook_id: String,
    pub webhook_timestamp: String,
    pub webhook_signature: String,
}

impl SignatureHeaders {
    /// `(name, value)` for each header, in a fixed order.
    pub fn pairs(&self) -> [(&'static str, &str); 4] {
        [
            (BERTH_SIGNATURE, &self.berth_signature),
            (WEBHOOK_ID, &self.webhook_id),
            (WEBHOOK_TIMESTAMP, &self.webhook_timestamp),
            (WEBHOOK_SIGNATURE, &self.webhook_signature),
        ]
    }
}

fn hmac_sha256(key: &[u8], parts: &[&[u8]]) -> [u8; 32] {
    let mut mac = HmacSha256::new_from_slice(key).expect("HMAC accepts a key of any length");
    for p in parts {
        mac.update(p);
    }
    mac.finalize().into_bytes().into()
}

/// `Berth-Signature`'s MAC: key = the whole secret string, message =
/// `"<t>.<body>"`.
fn berth_mac(secret: &Secret, t: &str, body: &[u8]) -> [u8; 32] {
    hmac_sha256(secret.text.as_bytes(), &[t.as_bytes(), b".", body])
}

/// Standard Webhooks' MAC: key = the decoded key bytes, message =
/// `"<id>.<t>.<body>"`.
fn standard_mac(secret: &Secret, id: &str, t: &str, body: &[u8]) -> [u8; 32] {
    hmac_sha256(
        &secret.key,
        &[id.as_bytes(), b".", t.as_bytes(), b".", body],
    )
}

/// Sign one request. `secrets`: the current secret first, then any
/// previous one still inside its rotation overlap; each adds one signature
/// to both headers. `webhook_id` comes from [`new_webhook_id`] (verifiers
/// refuse an id containing `.`); `unix_seconds` is the send time
/// (non-negative); `body` the exact bytes sent.
///
/// With no secret at all the signature headers carry no signature (every
/// verifier refuses them): a decider without a secret gets no signature
/// headers, so do not call this for one.
pub fn sign(
    secrets: &[&Secret],
    webhook_id: &str,
    unix_seconds: i64,
    body: &[u8],
) -> SignatureHeaders {
    let t = unix_seconds.to_string();
    let mut berth_signature = format!("t={t}");
    let mut webhook_signature = String::new();
    for secret in secrets {
        berth_signature.push_str(",v1=");
        berth_signature.push_str(&hex::encode(berth_mac(secret, &t, body)));
        if !webhook_signature.is_empty() {
            webhook_signature.push(' ');
        }
        webhook_signature.push_str("v1,");
        webhook_signature.push_str(&BASE64.encode(standard_mac(secret, webhook_id, &t, body)));
    }
    SignatureHeaders {
        berth_signature,
        webhook_id: webhook_id.to_string(),
        webhook_timestamp: t,
        webhook_signature,
    }
}

// ---------------------------------------------------------------------------
// The reference verifier.
//
// Port this part line for line. It needs only HMAC-SHA256, hex and base64
// decoding, and a constant-time comparison of two 32-byte strings. It is
// strict: a header Berth could not have sent is refused as malformed
// rather than read generously, and nothing in it can panic or allocate
// more than the header's size.

/// Why a request's signature was not accepted. Never a panic: every input
/// ends in `Ok` or one of these.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum VerifyError {
    /// The header is absent or empty.
    Missing { header: &'static str },
    /// The header is longer than the verifier reads.
    TooLong {
        header: &'static str,
        bytes: usize,
        max: usize,
    },
    /// The header is not in the scheme's syntax.
    Malformed {
        header: &'static str,
        message: String,
    },
    /// `Berth-Signature` has no `t=`.
    NoTimestamp,
    /// No signature of the expected scheme (`v1`).
    NoSignature { header: &'static str },
    /// The timestamp is older than the tolerance allows (a replay, or a
    /// clock far behind).
    TooOld { age_s: i64, tolerance_s: i64 },
    /// The timestamp is further in the future than the tolerance allows.
    TooNew { ahead_s: i64, tolerance_s: i64 },
    /// Well-formed and recent, but no signature matches this secret: a
    /// different secret, or a changed body, id or timestamp.
    Mismatch,
}

impl VerifyError {
    /// A stable code, e.g. for a decider's JSON error.
    pub fn code(&self) -> &'static str {
        match self {
            VerifyError::Missing { .. } => "signature_missing",
            VerifyError::TooLong { .. } => "signature_too_long",
            VerifyError::Malformed { .. } => "signature_malformed",
            VerifyError::NoTimestamp => "timestamp_missing",
            VerifyError::NoSignature { .. } => "no_v1_signature",
            VerifyError::TooOld { .. } => "timestamp_too_old",
            VerifyError::TooNew { .. } => "timestamp_too_new",
            VerifyError::Mismatch => "signature_mismatch",
        }
    }
}

impl fmt::Display for VerifyError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            VerifyError::Missing { header } => write!(f, "no {header} header"),
            VerifyError::TooLong { header, bytes, max } => {
                write!(f, "the {header} header is {bytes} bytes; at most {max} are read")
            }
            VerifyError::Malformed { header, message } => {
                write!(f, "the {header} header is malformed: {message}")
            }
            VerifyError::NoTimestamp => write!(f, "the {BERTH_SIGNATURE} header has no `t=`"),
            VerifyError::NoSignature { header } => {
                write!(f, "the {header} header has no v1 signature")
            }
            VerifyError::TooOld { age_s, tolerance_s } => write!(
                f,
                "the request was signed {age_s} s ago; at most {tolerance_s} s are accepted"
            ),
            VerifyError::TooNew {
                ahead_s,
                tolerance_s,
            } => write!(
                f,
                "the request is dated {ahead_s} s in the future; at most {tolerance_s} s are accepted"
            ),
            VerifyError::Mismatch => write!(f, "no signature matches the secret"),
        }
    }
}

impl std::error::Error for VerifyError {}

fn malformed(header: &'static str, message: impl Into<String>) -> VerifyError {
    VerifyError::Malformed {
        header,
        message: message.into(),
    }
}

/// Step 1 of both schemes: the header is present and not huge.
fn bounded(header: &'static str, value: &str, max: usize) -> Result<(), VerifyError> {
    if value.is_empty() {
        return Err(VerifyError::Missing { header });
    }
    if value.len() > max {
        return Err(VerifyError::TooLong {
            header,
            bytes: value.len(),
            max,
        });
    }
    Ok(())
}

/// A timestamp as Berth writes it: 1 to 12 ASCII digits, no sign, no
/// leading zero (so the text signed and the number compared are one
/// thing, exactly as the Stripe library re-formats it).
fn parse_unix(header: &'static str, text: &str) -> Result<i64, VerifyError> {
    let digits_only = !text.is_empty() && text.bytes().all(|b| b.is_ascii_digit());
    if !digits_only
        || text.len() > MAX_TIMESTAMP_DIGITS
        || (text.len() > 1 && text.starts_with('0'))
    {
        return Err(malformed(
            header,
            "the timestamp is not whole unix seconds (1 to 12 digits, no sign, no leading zero)",
        ));
    }
    // At most 12 digits: cannot overflow an i64.
    Ok(text.bytes().fold(0i64, |n, b| n * 10 + i64::from(b - b'0')))
}

/// The timestamp is within `tolerance_s` of `now`, in both directions: too
/// old is a replay, too new is a clock that cannot be trusted (or a request
/// pre-signed to be replayed later).
fn check_time(t: i64, now: i64, tolerance_s: i64) -> Result<(), VerifyError> {
    let tolerance_s = tolerance_s.max(0);
    if t < now.saturating_sub(tolerance_s) {
        return Err(VerifyError::TooOld {
            age_s: now.saturating_sub(t),
            tolerance_s,
        });
    }
    if t > now.saturating_add(tolerance_s) {
        return Err(VerifyError::TooNew {
            ahead_s: t.saturating_sub(now),
            tolerance_s,
        });
    }
    Ok(())
}

/// Constant-time: whether any of `candidates` equals `expected`. Every
/// candidate is compared in full, whatever matched before.
fn any_matches(candidates: &[[u8; 32]], expected: &[u8; 32]) -> bool {
    let mut matched = Choice::from(0);
    for c in candidates {
        matched |= c.ct_eq(expected);
    }
    matched.into()
}

/// Verify a `Berth-Signature` header (`t=<unix>,v1=<hex>[,v1=<hex>…]`)
/// against the exact body bytes, the decider's secret, and the current
/// time `now` (unix seconds), accepting a timestamp at most `tolerance_s`
/// away in either direction ([`DEFAULT_TOLERANCE_S`] is the usual value).
pub fn verify_berth(
    header_value: &str,
    body: &[u8],
    secret: &Secret,
    now: i64,
    tolerance_s: i64,
) -> Result<(), VerifyError> {
    const H: &str = BERTH_SIGNATURE;
    // 1. Present, and short enough to read.
    bounded(H, header_value, MAX_HEADER_BYTES)?;
    // 2. Split on ',' into items `key=value`. Every item must have a key
    //    of lowercase letters and digits and a non-empty value; an empty
    //    item (",," or a comma at either end) is malformed.
    let mut t: Option<(i64, &str)> = None;
    let mut signatures: Vec<[u8; 32]> = Vec::new();
    for item in header_value.split(',') {
        let Some((key, value)) = item.split_once('=') else {
            return Err(malformed(
                H,
                "every item is `key=value`, separated by single commas",
            ));
        };
        let key_ok = !key.is_empty()
            && key
                .bytes()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit());
        if !key_ok || value.is_empty() {
            return Err(malformed(
                H,
                "every item is `key=value` with a lowercase key and a value, separated by single commas",
            ));
        }
        match key {
            // 3. Exactly one `t=`.
            "t" => {
                if t.is_some() {
                    return Err(malformed(H, "`t=` appears more than once"));
                }
                t = Some((parse_unix(H, value)?, value));
            }
            // 4. Each `v1=` is exactly 64 lowercase hex digits (32 bytes).
            "v1" => signatures.push(decode_hex32(value)?),
            // Other schemes (e.g. Stripe's test-mode `v0=`, a future
            // `v2=`) are skipped: never trusted, never an error.
            _ => {}
        }
    }
    let Some((t, t_text)) = t else {
        return Err(VerifyError::NoTimestamp);
    };
    if signatures.is_empty() {
        return Err(VerifyError::NoSignature { header: H });
    }
    // 5. Recent, in both directions.
    check_time(t, now, tolerance_s)?;
    // 6. HMAC-SHA256 keyed with the whole secret string (`whsec_…` as
    //    UTF-8) over "<t>.<body>", compared in constant time with each v1.
    let expected = berth_mac(secret, t_text, body);
    if any_matches(&signatures, &expected) {
        Ok(())
    } else {
        Err(VerifyError::Mismatch)
    }
}

fn decode_hex32(value: &str) -> Result<[u8; 32], VerifyError> {
    let lower_hex = value.len() == 64
        && value
            .bytes()
            .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b));
    if !lower_hex {
        return Err(malformed(
            BERTH_SIGNATURE,
            "a v1 signature is 64 lowercase hex digits",
        ));
    }
    let mut out = [0u8; 32];
    hex::decode_to_slice(value, &mut out)
        .map_err(|_| malformed(BERTH_SIGNATURE, "a v1 signature is not hex"))?;
    Ok(out)
}

/// Verify the Standard Webhooks headers: `webhook-id`, `webhook-timestamp`
/// and `webhook-signature` (`v1,<base64>[ v1,<base64>…]`), against the
/// exact body bytes, the secret, and `now` with `tolerance_s` in both
/// directions.
pub fn verify_standard(
    id: &str,
    timestamp: &str,
    signature_header: &str,
    body: &[u8],
    secret: &Secret,
    now: i64,
    tolerance_s: i64,
) -> Result<(), VerifyError> {
    // 1. All three present, and short enough to read.
    bounded(WEBHOOK_ID, id, MAX_WEBHOOK_ID_BYTES)?;
    bounded(WEBHOOK_TIMESTAMP, timestamp, MAX_TIMESTAMP_DIGITS)?;
    bounded(WEBHOOK_SIGNATURE, signature_header, MAX_HEADER_BYTES)?;
    // The id is signed in front of the timestamp, separated by `.`: an id
    // containing `.` could move that boundary, so it is refused (the
    // Standard Webhooks specification asks ids never to contain one).
    if id.contains('.') {
        return Err(malformed(WEBHOOK_ID, "the id contains `.`"));
    }
    let t = parse_unix(WEBHOOK_TIMESTAMP, timestamp)?;
    // 2. Split on single spaces into `version,signature` items; an empty
    //    item (two spaces, or one at either end) is malformed.
    let mut signatures: Vec<[u8; 32]> = Vec::new();
    for item in signature_header.split(' ') {
        let Some((version, signature)) = item.split_once(',') else {
            return Err(malformed(
                WEBHOOK_SIGNATURE,
                "every item is `version,signature`, separated by single spaces",
            ));
        };
        if version.is_empty() || signature.is_empty() {
            return Err(malformed(
                WEBHOOK_SIGNATURE,
                "every item is `version,signature` with both parts, separated by single spaces",
            ));
        }
        // 3. Each `v1` signature is standard padded base64 of exactly 32
        //    bytes; other versions are skipped, never trusted.
        if version == "v1" {
            signatures.push(decode_base64_32(signature)?);
        }
    }
    if signatures.is_empty() {
        return Err(VerifyError::NoSignature {
            header: WEBHOOK_SIGNATURE,
        });
    }
    // 4. Recent, in both directions.
    check_time(t, now, tolerance_s)?;
    // 5. HMAC-SHA256 keyed with the decoded key bytes over
    //    "<id>.<timestamp>.<body>", compared in constant time.
    let expected = standard_mac(secret, id, timestamp, body);
    if any_matches(&signatures, &expected) {
        Ok(())
    } else {
        Err(VerifyError::Mismatch)
    }
}

fn decode_base64_32(value: &str) -> Result<[u8; 32], VerifyError> {
    // 32 bytes are exactly 44 base64 characters (the last one `=`).
    let bad = || {
        malformed(
            WEBHOOK_SIGNATURE,
            "a v1 signature is standard base64 of 32 bytes (44 characters)",
        )
    };
    if value.len() != 44 {
        return Err(bad());
    }
    let mut out = [0u8; 32];
    match BASE64.decode_slice(value, &mut out) {
        Ok(32) => Ok(out),
        _ => Err(bad()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Fixed keys for tests: bytes `start, start+1, …` (never a real secret).
    fn secret(start: u8, len: usize) -> Secret {
        let key: Vec<u8> = (0..len).map(|i| start.wrapping_add(i as u8)).collect();
        Secret::parse(&format!("whsec_{}", BASE64.encode(key))).unwrap()
    }

    const T: i64 = 1_796_011_500; // 2026-11-30T04:05:00Z
    const BODY: &[u8] = b"{\"schema\":1}";

    #[test]
    fn generated_secrets_have_the_standard_form_and_differ() {
        let a = generate();
        let b = generate();
        assert!(a.expose().starts_with("whsec_"));
        assert_eq!(a.expose().len(), 6 + 44);
        assert_eq!(a.key_bytes().len(), 32);
        assert_ne!(a.expose(), b.expose());
        let again = Secret::parse(a.expose()).unwrap();
        assert_eq!(again.key_bytes(), a.key_bytes());
        assert_eq!(again.fingerprint(), a.fingerprint());
        assert_ne!(a.fingerprint(), b.fingerprint());
    }

    #[test]
    fn webhook_ids_are_unique_and_prefixed() {
        let ids: std::collections::BTreeSet<String> = (0..1000).map(|_| new_webhook_id()).collect();
        assert_eq!(ids.len(), 1000);
        for id in &ids {
            assert!(id.starts_with("msg_") && id.len() == 36, "{id}");
        }
    }

    #[test]
    fn secrets_are_refused_with_a_reason_that_does_not_quote_them() {
        let ok = secret(7, 32);
        let body = &ok.expose()[6..];
        let bad_char = |kind: &'static str| move |e: &SecretError| matches!(e, SecretError::BadCharacter { kind: k, .. } if k.contains(kind));
        type Check = Box<dyn Fn(&SecretError) -> bool>;
        let cases: Vec<(String, Check)> = vec![
            (String::new(), Box::new(|e| *e == SecretError::Empty)),
            (
                body.to_string(),
                Box::new(|e| *e == SecretError::MissingPrefix),
            ),
            (
                format!("WHSEC_{body}"),
                Box::new(|e| *e == SecretError::MissingPrefix),
            ),
            (
                format!("whsec_{}", "-".repeat(44)),
                Box::new(bad_char("URL-safe")),
            ),
            (
                format!("{} ", ok.expose()),
                Box::new(bad_char("whitespace")),
            ),
            (format!("whsec_{body}\n"), Box::new(bad_char("whitespace"))),
            (
                format!("whsec_whsec_{body}"),
                Box::new(bad_char("URL-safe")),
            ),
            (format!("whsec_{body}é"), Box::new(bad_char("non-ASCII"))),
            (format!("whsec_{body}*"), Box::new(bad_char("not base64"))),
            (
                format!("whsec_{}", &body[..43]),
                Box::new(|e| matches!(e, SecretError::BadBase64 { .. })),
            ),
            (
                format!("whsec_{}", body.trim_end_matches('=')),
                Box::new(|e| matches!(e, SecretError::BadBase64 { .. })),
            ),
            (
                format!("whsec_{}", "=".repeat(44)),
                Box::new(|e| matches!(e, SecretError::BadBase64 { .. })),
            ),
            (
                format!("whsec_{}", BASE64.encode([1u8; 23])),
                Box::new(|e| *e == SecretError::TooShort { bytes: 23 }),
            ),
            (
                format!("whsec_{}", BASE64.encode([1u8; 65])),
                Box::new(|e| *e == SecretError::TooLong { bytes: 65 }),
            ),
        ];
        for (text, check) in cases {
            let err = Secret::parse(&text).expect_err(&text);
            assert!(check(&err), "{text:?}: {err:?}");
            let message = err.to_string();
            assert!(
                message.contains("secret") || message.contains("base64"),
                "{message}"
            );
            if text.len() > 18 {
                assert!(
                    !message.contains(&text[6..18]),
                    "the message quotes the secret: {message}"
                );
            }
        }
        // 24 and 64 bytes are the bounds, inclusive.
        assert_eq!(secret(0, 24).key_bytes().len(), 24);
        assert_eq!(secret(0, 64).key_bytes().len(), 64);
        assert_eq!(
            "whsec_AAAA".parse::<Secret>().unwrap_err(),
            SecretError::TooShort { bytes: 3 }
        );
    }

    #[test]
    fn debug_shows_a_fingerprint_never_the_secret() {
        let s = secret(42, 32);
        let debug = format!("{s:?} {:?}", vec![s.clone()]);
        assert!(!debug.contains(&s.expose()[6..]), "{debug}");
        assert!(!debug.contains(&s.expose()[6..20]), "{debug}");
        assert!(debug.contains("redacted") && debug.contains(&s.fingerprint()));
        let fp = s.fingerprint();
        assert!(fp.starts_with("sha256:") && fp.len() == 7 + 16, "{fp}");
        assert_eq!(
            fp,
            format!(
                "sha256:{}",
                &hex::encode(Sha256::digest(s.key_bytes()))[..16]
            )
        );
    }

    #[test]
    fn both_schemes_verify_what_sign_produces() {
        let s = secret(1, 32);
        let h = sign(&[&s], "msg_1", T, BODY);
        assert_eq!(h.webhook_timestamp, T.to_string());
        assert!(h.berth_signature.starts_with(&format!("t={T},v1=")));
        assert!(h.webhook_signature.starts_with("v1,"));
        verify_berth(&h.berth_signature, BODY, &s, T, 300).unwrap();
        verify_standard(
            &h.webhook_id,
            &h.webhook_timestamp,
            &h.webhook_signature,
            BODY,
            &s,
            T,
            300,
        )
        .unwrap();
        // The two keys are really different: the whole string for one,
        // the decoded bytes for the other.
        let by_string = hmac_sha256(s.expose().as_bytes(), &[format!("{T}.").as_bytes(), BODY]);
        assert_eq!(
            h.berth_signature,
            format!("t={T},v1={}", hex::encode(by_string))
        );
        let by_key = hmac_sha256(s.key_bytes(), &[format!("msg_1.{T}.").as_bytes(), BODY]);
        assert_eq!(h.webhook_signature, format!("v1,{}", BASE64.encode(by_key)));
    }

    #[test]
    fn rotation_sends_both_and_either_secret_verifies() {
        let (new, old, other) = (secret(1, 32), secret(100, 32), secret(200, 32));
        let h = sign(&[&new, &old], "msg_rot", T, BODY);
        assert_eq!(h.berth_signature.matches(",v1=").count(), 2);
        assert_eq!(h.webhook_signature.split(' ').count(), 2);
        for s in [&new, &old] {
            verify_berth(&h.berth_signature, BODY, s, T, 300).unwrap();
            verify_standard(
                "msg_rot",
                &h.webhook_timestamp,
                &h.webhook_signature,
                BODY,
                s,
                T,
                300,
            )
            .unwrap();
        }
        assert_eq!(
            verify_berth(&h.berth_signature, BODY, &other, T, 300),
            Err(VerifyError::Mismatch)
        );
        assert_eq!(
            verify_standard(
                "msg_rot",
                &h.webhook_timestamp,
                &h.webhook_signature,
                BODY,
                &other,
                T,
                300
            ),
            Err(VerifyError::Mismatch)
        );
        // Current first.
        let current_only = sign(&[&new], "msg_rot", T, BODY);
        assert!(h.berth_signature.starts_with(&current_only.berth_signature));
        assert!(h
            .webhook_signature
            .starts_with(&current_only.webhook_signature));
    }

    #[test]
    fn tampering_with_body_id_or_timestamp_is_a_mismatch() {
        let s = secret(1, 32);
        let h = sign(&[&s], "msg_1", T, BODY);
        let other_body = b"{\"schema\":2}";
        assert_eq!(
            verify_berth(&h.berth_signature, other_body, &s, T, 300),
            Err(VerifyError::Mismatch)
        );
        assert_eq!(
            verify_berth(&h.berth_signature, b"", &s, T, 300),
            Err(VerifyError::Mismatch)
        );
        let moved = h
            .berth_signature
            .replace(&format!("t={T}"), &format!("t={}", T + 1));
        assert_eq!(
            verify_berth(&moved, BODY, &s, T, 300),
            Err(VerifyError::Mismatch)
        );
        let std = |id: &str, ts: &str, body: &[u8]| {
            verify_standard(id, ts, &h.webhook_signature, body, &s, T, 300)
        };
        assert_eq!(
            std("msg_1", &h.webhook_timestamp, other_body),
            Err(VerifyError::Mismatch)
        );
        assert_eq!(
            std("msg_2", &h.webhook_timestamp, BODY),
            Err(VerifyError::Mismatch)
        );
        assert_eq!(
            std("msg_1", &(T + 1).to_string(), BODY),
            Err(VerifyError::Mismatch)
        );
    }

    #[test]
    fn tolerance_holds_in_both_directions_to_the_second() {
        let s = secret(1, 32);
        let h = sign(&[&s], "msg_1", T, BODY);
        let berth = |now| verify_berth(&h.berth_signature, BODY, &s, now, 300);
        let std = |now| {
            verify_standard(
                "msg_1",
                &h.webhook_timestamp,
                &h.webhook_signature,
                BODY,
                &s,
                now,
                300,
            )
        };
        for now in [T - 300, T, T + 300] {
            berth(now).unwrap();
            std(now).unwrap();
        }
        let old = Err(VerifyError::TooOld {
            age_s: 301,
            tolerance_s: 300,
        });
        let new = Err(VerifyError::TooNew {
            ahead_s: 301,
            tolerance_s: 300,
        });
        assert_eq!(berth(T + 301), old);
        assert_eq!(std(T + 301), old);
        assert_eq!(berth(T - 301), new);
        assert_eq!(std(T - 301), new);
        // Zero tolerance: only the exact second; a negative one acts as 0.
        verify_berth(&h.berth_signature, BODY, &s, T, 0).unwrap();
        assert!(verify_berth(&h.berth_signature, BODY, &s, T + 1, -5).is_err());
        // Extreme clocks do not overflow.
        assert!(berth(i64::MAX).is_err() && berth(i64::MIN).is_err());
        assert!(verify_berth(&h.berth_signature, BODY, &s, T, i64::MAX).is_ok());
    }

    #[test]
    fn malformed_berth_headers_are_refused_with_a_typed_error() {
        let s = secret(1, 32);
        let good = sign(&[&s], "msg_1", T, BODY).berth_signature;
        let sig = &good[good.find("v1=").unwrap() + 3..];
        let long = format!("t={T},{}", vec![format!("v0={sig}"); 40].join(","));
        let cases: Vec<(String, &str)> = vec![
            (String::new(), "signature_missing"),
            (long, "signature_too_long"),
            (format!("t={T}"), "no_v1_signature"),
            (format!("t={T},v0={sig}"), "no_v1_signature"),
            (format!("v1={sig}"), "timestamp_missing"),
            (format!("t={T},t={T},v1={sig}"), "signature_malformed"),
            (format!("t={T},,v1={sig}"), "signature_malformed"),
            (format!(",t={T},v1={sig}"), "signature_malformed"),
            (format!("t={T},v1={sig},"), "signature_malformed"),
            (format!("t={T}, v1={sig}"), "signature_malformed"),
            (format!("t={T};v1={sig}"), "signature_malformed"),
            (format!("t={T},V1={sig}"), "signature_malformed"),
            (format!("t={T},v1="), "signature_malformed"),
            (format!("t=,v1={sig}"), "signature_malformed"),
            (format!("t=-{T},v1={sig}"), "signature_malformed"),
            (format!("t=0{T},v1={sig}"), "signature_malformed"),
            (format!("t={T}.5,v1={sig}"), "signature_malformed"),
            (format!("t=9999999999999,v1={sig}"), "signature_malformed"),
            (format!("t={T},v1={}", &sig[..63]), "signature_malformed"),
            (format!("t={T},v1={sig}0"), "signature_malformed"),
            (
                format!("t={T},v1={}", sig.to_uppercase()),
                "signature_malformed",
            ),
            (
                format!("t={T},v1={}", "g".repeat(64)),
                "signature_malformed",
            ),
            (format!("t={T},v1=a"), "signature_malformed"),
            (format!("t={T},v1={sig}=="), "signature_malformed"),
            (
                format!("t={T},v1={}", "é".repeat(32)),
                "signature_malformed",
            ),
            ("t".to_string(), "signature_malformed"),
            ("=".to_string(), "signature_malformed"),
            (",".to_string(), "signature_malformed"),
            (format!("t={T},v1={}", "0".repeat(64)), "signature_mismatch"),
        ];
        for (header, code) in cases {
            let got = verify_berth(&header, BODY, &s, T, 300);
            assert_eq!(
                got.as_ref().map_err(VerifyError::code),
                Err(code),
                "{header:?}: {got:?}"
            );
            assert!(!got.unwrap_err().to_string().is_empty());
        }
        // A v0 next to a good v1 is skipped, not an error.
        verify_berth(&format!("t={T},v0={sig},v1={sig}"), BODY, &s, T, 300).unwrap();
        verify_berth(&format!("v1={sig},t={T}"), BODY, &s, T, 300).unwrap();
    }

    #[test]
    fn malformed_standard_headers_are_refused_with_a_typed_error() {
        let s = secret(1, 32);
        let h = sign(&[&s], "msg_1", T, BODY);
        let sig = &h.webhook_signature[3..];
        let ts = h.webhook_timestamp.as_str();
        let std = |id: &str, ts: &str, header: &str| {
            verify_standard(id, ts, header, BODY, &s, T, 300).map_err(|e| e.code())
        };
        let v1 = format!("v1,{sig}");
        assert_eq!(std("", ts, &v1), Err("signature_missing"));
        assert_eq!(std("msg_1", "", &v1), Err("signature_missing"));
        assert_eq!(std("msg_1", ts, ""), Err("signature_missing"));
        assert_eq!(std("msg.1", ts, &v1), Err("signature_malformed"));
        assert_eq!(std(&"m".repeat(257), ts, &v1), Err("signature_too_long"));
        assert_eq!(
            std("msg_1", "1234567890123", &v1),
            Err("signature_too_long")
        );
        assert_eq!(
            std("msg_1", ts, &vec![v1.as_str(); 60].join(" ")),
            Err("signature_too_long")
        );
        for bad_ts in [
            "-1",
            "+1796011500",
            "1796011500.0",
            "01796011500",
            " 1796011500",
            "abc",
        ] {
            assert_eq!(
                std("msg_1", bad_ts, &v1),
                Err("signature_malformed"),
                "{bad_ts}"
            );
        }
        let bad_headers = [
            format!("v1{sig}"),
            format!("v1,{sig} "),
            format!(" v1,{sig}"),
            format!("v1,{sig}  v1,{sig}"),
            "v1,".to_string(),
            format!(",{sig}"),
            format!("v1,{}", &sig[..43]),
            format!("v1,{}", sig.trim_end_matches('=')),
            format!("v1,{}A", sig),
            format!("v1,{}", hex::encode([0u8; 32])),
            format!("v1,{}", sig.replace('+', "-").replace('/', "_") + "-"),
            format!("v1,{}", "=".repeat(44)),
            format!("v1,{}", "é".repeat(22)),
        ];
        for header in bad_headers {
            assert_eq!(
                std("msg_1", ts, &header),
                Err("signature_malformed"),
                "{header:?}"
            );
        }
        assert_eq!(
            std("msg_1", ts, &format!("v1a,{sig}")),
            Err("no_v1_signature")
        );
        assert_eq!(
            std("msg_1", ts, &format!("v2,{sig}")),
            Err("no_v1_signature")
        );
        assert_eq!(
            std("msg_1", ts, &format!("v1,{}", BASE64.encode([0u8; 32]))),
            Err("signature_mismatch")
        );
        assert_eq!(std("msg_1", ts, &format!("v2,{sig} v1,{sig}")), Ok(()));
    }

    #[test]
    fn no_secret_means_no_signature_and_nothing_verifies() {
        let h = sign(&[], "msg_1", T, BODY);
        assert_eq!(h.berth_signature, format!("t={T}"));
        assert_eq!(h.webhook_signature, "");
        let s = secret(1, 32);
        assert_eq!(
            verify_berth(&h.berth_signature, BODY, &s, T, 300),
            Err(VerifyError::NoSignature {
                header: BERTH_SIGNATURE
            })
        );
        assert_eq!(
            verify_standard(
                "msg_1",
                &h.webhook_timestamp,
                &h.webhook_signature,
                BODY,
                &s,
                T,
                300
            ),
            Err(VerifyError::Missing {
                header: WEBHOOK_SIGNATURE
            })
        );
    }

    /// splitmix64: a tiny deterministic generator, so a failure repeats.
    struct Rng(u64);
    impl Rng {
        fn next(&mut self) -> u64 {
            self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
            let mut z = self.0;
            z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
            z ^ (z >> 31)
        }
        fn below(&mut self, n: usize) -> usize {
            (self.next() % n as u64) as usize
        }
    }

    /// Characters that make up real headers, plus a few that never should.
    const ALPHABET: &[char] = &[
        't', 'v', '0', '1', '=', ',', ' ', 'a', 'f', 'A', 'Z', '+', '/', '9', '.', '-', '_', 'é',
        '\u{0}', '🚢',
    ];

    #[test]
    fn random_garbage_never_panics_and_never_verifies() {
        let s = secret(1, 32);
        let mut rng = Rng(0x5EED);
        for _ in 0..20_000 {
            let len = rng.below(200);
            let text: String = (0..len)
                .map(|_| ALPHABET[rng.below(ALPHABET.len())])
                .collect();
            let ts = T.to_string();
            let now = T + rng.below(1000) as i64 - 500;
            assert!(verify_berth(&text, BODY, &s, now, 300).is_err(), "{text:?}");
            assert!(
                verify_standard("msg_1", &ts, &text, BODY, &s, now, 300).is_err(),
                "{text:?}"
            );
            assert!(
                verify_standard(&text, &text, &text, BODY, &s, now, 300).is_err(),
                "{text:?}"
            );
            // Random bytes as a body, and as a secret attempt.
            let body: Vec<u8> = (0..rng.below(64)).map(|_| rng.next() as u8).collect();
            let _ = Secret::parse(&text);
            assert!(verify_berth(&text, &body, &s, now, 300).is_err());
        }
    }

    #[test]
    fn every_single_character_change_of_a_valid_header_is_refused() {
        let s = secret(1, 32);
        let h = sign(&[&s], "msg_1", T, BODY);
        let replacements = [
            '0', '1', 'a', 'f', 'A', '=', ',', ' ', 'v', 't', '+', '/', 'é',
        ];
        let mutations = |valid: &str| -> Vec<String> {
            let chars: Vec<char> = valid.chars().collect();
            let mut out = Vec::new();
            for i in 0..chars.len() {
                for &r in &replacements {
                    if r != chars[i] {
                        let mut c = chars.clone();
                        c[i] = r;
                        out.push(c.into_iter().collect());
                    }
                }
                let mut removed = chars.clone();
                removed.remove(i);
                out.push(removed.into_iter().collect());
                out.push(chars[..i].iter().collect());
            }
            out
        };
        let berth = mutations(&h.berth_signature);
        assert!(berth.len() > 1000);
        for m in &berth {
            assert!(verify_berth(m, BODY, &s, T, 300).is_err(), "{m:?} verified");
        }
        for m in mutations(&h.webhook_signature) {
            assert!(
                verify_standard("msg_1", &h.webhook_timestamp, &m, BODY, &s, T, 300).is_err(),
                "{m:?} verified"
            );
        }
        for m in mutations(&h.webhook_timestamp) {
            assert!(
                verify_standard(
                    "msg_1",
                    &m,
                    &h.webhook_signature,
                    BODY,
                    &s,
                    T + 1_000_000_000,
                    i64::MAX
                )
                .is_err(),
                "{m:?}"
            );
        }
    }
}
