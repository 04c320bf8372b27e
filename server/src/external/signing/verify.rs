//! The reference verifier a decider ports to check Berth's signatures:
//! both schemes, a tolerance on the timestamp, and typed refusals of
//! malformed headers.

use std::fmt;

use base64::engine::general_purpose::STANDARD as BASE64;
use base64::Engine as _;
use subtle::{Choice, ConstantTimeEq};

use super::*;

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
