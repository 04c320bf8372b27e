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

use base64::engine::general_purpose::STANDARD as BASE64;
use base64::Engine as _;
use hmac::{Hmac, Mac};
use sha2::Sha256;

mod secret;
mod verify;

pub use secret::{generate, new_webhook_id, Secret, SecretError};
pub use verify::{verify_berth, verify_standard, VerifyError};

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
    hmac_sha256(secret.expose().as_bytes(), &[t.as_bytes(), b".", body])
}

/// Standard Webhooks' MAC: key = the decoded key bytes, message =
/// `"<id>.<t>.<body>"`.
fn standard_mac(secret: &Secret, id: &str, t: &str, body: &[u8]) -> [u8; 32] {
    hmac_sha256(
        secret.key_bytes(),
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

#[cfg(test)]
mod tests {
    use sha2::Digest;

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
