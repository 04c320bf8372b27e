//! External deciders (SPEC §9) and the advice driver (SPEC §11): the part
//! of Berth that reaches out of the box on its own.
//!
//! - [`vault`] seals decider secrets at rest under a key kept outside the
//!   database.
//! - [`signing`] signs each call (Stripe-convention `Berth-Signature` and
//!   Standard Webhooks headers) and holds the reference verifier.
//! - [`address`] decides which IP addresses may ever be reached.
//! - [`forward`] is the only code that opens a connection to a decider:
//!   one stored URL, checked addresses only, no redirects or proxies,
//!   size and time limits, a cap on concurrent calls.
//! - This module ties them together: registration rules, and [`call`],
//!   which builds nothing itself — it is handed the exact request bytes —
//!   signs them, sends them, and classifies the answer.
//! - [`driver`] runs passes over stale estates and deciders in the
//!   background; after each, [`notify`] queues and sends notifications
//!   through the same forwarder and signing.

pub mod address;
pub mod driver;
pub mod forward;
pub mod notify;
pub mod signing;
pub mod vault;

use std::sync::Arc;
use std::time::{Duration, Instant};

use berth_engine::decider::{self, DeciderError};
use bytes::Bytes;
use serde::Serialize;

use crate::store::DeciderRow;

/// Timeouts an administrator may set, milliseconds. At least a second: a
/// decider doing real work over a network needs it. At most 25 s: a person
/// is waiting on the Deciders page, and proxies in front of Berth commonly
/// cut requests at 30 s.
pub const MIN_TIMEOUT_MS: i64 = 1_000;
pub const MAX_TIMEOUT_MS: i64 = 25_000;
/// The driver's interval per decider, seconds: not more often than once a
/// minute (the estate rarely changes faster, and a decider is someone
/// else's service), not less often than weekly (beyond that, ask by hand).
pub const MIN_INTERVAL_S: i64 = 60;
pub const MAX_INTERVAL_S: i64 = 7 * 24 * 3600;
/// Rotation overlap: how long the previous secret keeps being sent. A day
/// by default — time for a decider's owner to deploy the new secret during
/// working hours; at most a week, so an old secret cannot linger.
pub const DEFAULT_OVERLAP_S: i64 = 24 * 3600;
pub const MAX_OVERLAP_S: i64 = 7 * 24 * 3600;
/// Names: what people type and see on the Deciders page and in URLs.
pub const MAX_NAME_CHARS: usize = 64;
/// URL length: long enough for any real endpoint with a path and query.
pub const MAX_URL_CHARS: usize = 2048;

/// Outbound machinery shared by the API and the driver.
pub struct Outbound {
    pub forwarder: forward::Forwarder,
    /// `None`: no at-rest key configured, so secrets can be neither set nor
    /// used (a decider with a stored secret then fails rather than being
    /// called unsigned).
    pub vault: Option<vault::Vault>,
}

/// What a driver pass and its notifications work with, handed over by
/// whoever runs them (`serve`, tests): the database, the parsed-estate
/// cache, the outbound machinery, and this process's pass lock (one pass
/// at a time on SQLite; PostgreSQL uses an advisory lock across
/// replicas). Cheap to clone: all shared inside.
#[derive(Clone)]
pub struct Handles {
    pub db: crate::db::Db,
    pub cache: crate::cache::Cache,
    pub outbound: Arc<Outbound>,
    pub pass_lock: Arc<tokio::sync::Mutex<()>>,
}

/// A decider name: lower-case letters, digits, `-`, `_`, `.`, starting
/// with a letter or digit; not the name
/// of a built-in (their entries would be indistinguishable).
pub fn check_name(name: &str) -> Result<(), String> {
    if name.is_empty() || name.chars().count() > MAX_NAME_CHARS {
        return Err(format!(
            "a decider name must be 1 to {MAX_NAME_CHARS} characters"
        ));
    }
    if !name
        .chars()
        .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || "-_.".contains(c))
    {
        return Err(format!(
            "{name:?}: a decider name may hold only lower-case letters, digits, '-', '_' and '.'"
        ));
    }
    // `.` and `..` (and names like `-x`) read as paths or flags wherever a
    // name is shown or used in a URL: a name starts with a letter or digit.
    if !name.starts_with(|c: char| c.is_ascii_lowercase() || c.is_ascii_digit()) {
        return Err(format!(
            "{name:?}: a decider name must start with a lower-case letter or a digit"
        ));
    }
    if berth_engine::front::BUILTIN_NAMES.contains(&name) {
        return Err(format!(
            "{name:?} is the name of a built-in decider; choose another"
        ));
    }
    Ok(())
}

/// A URL the forwarder would call. An IP-literal host is also checked
/// against the address rules now (with this server's allow-list), so a
/// URL that could never be called is refused at registration rather than
/// failing on every call. A name is not resolved here: its answer may
/// change, so it is checked at every call instead.
pub fn check_url(url: &str, allow: &forward::AllowList) -> Result<(), String> {
    if url.chars().count() > MAX_URL_CHARS {
        return Err(format!("a URL may be at most {MAX_URL_CHARS} characters"));
    }
    let parsed = forward::validate_url(url).map_err(|e| e.to_string())?;
    let ip = match parsed.host() {
        Some(url::Host::Ipv4(a)) => Some(std::net::IpAddr::V4(a)),
        Some(url::Host::Ipv6(a)) => Some(std::net::IpAddr::V6(a)),
        _ => None,
    };
    if let Some(ip) = ip {
        forward::check_addr(ip, allow).map_err(|reason| match address::allow_hint(ip) {
            Some(hint) => format!("{ip} cannot be called: {reason}; {hint}"),
            None => format!("{ip} cannot be called: {reason}"),
        })?;
    }
    Ok(())
}

pub fn check_timeout(ms: i64) -> Result<(), String> {
    if !(MIN_TIMEOUT_MS..=MAX_TIMEOUT_MS).contains(&ms) {
        return Err(format!(
            "{ms} ms: the timeout must be from {MIN_TIMEOUT_MS} to {MAX_TIMEOUT_MS} ms (1 to 25 s)"
        ));
    }
    Ok(())
}

pub fn check_interval(s: Option<i64>) -> Result<(), String> {
    match s {
        Some(s) if !(MIN_INTERVAL_S..=MAX_INTERVAL_S).contains(&s) => Err(format!(
            "{s} s: the interval must be from {MIN_INTERVAL_S} s to {MAX_INTERVAL_S} s (a week), or null for runs on request only"
        )),
        _ => Ok(()),
    }
}

pub fn check_overlap(s: i64) -> Result<(), String> {
    if !(0..=MAX_OVERLAP_S).contains(&s) {
        return Err(format!(
            "{s} s: the overlap must be from 0 to {MAX_OVERLAP_S} s (a week)"
        ));
    }
    Ok(())
}

/// The most of anything a decider sent — a reply body, a header value, a
/// parser message quoting the reply — that an error keeps, in bytes.
/// Errors are stored with every run and listed to viewers 200 runs at a
/// time, so a decider must not be able to make them large: 512 bytes is
/// enough to recognise an error page or a misspelt field, and keeps 200
/// runs' errors within about 100 KiB.
pub const MAX_EXCERPT_BYTES: usize = 512;

/// Whether a `Content-Type` value names JSON: `application/json` or
/// `application/<subtype>+json` (RFC 6839 structured syntax), in any
/// case, with any parameters (`; charset=utf-8`). Anything else — HTML
/// from a proxy's error page, `text/plain`, none at all — is not read as
/// a decider's answer, whatever its bytes look like.
pub fn is_json_media_type(value: &str) -> bool {
    let essence = value.split(';').next().unwrap_or("").trim();
    let Some((kind, subtype)) = essence.split_once('/') else {
        return false;
    };
    if !kind.eq_ignore_ascii_case("application") {
        return false;
    }
    let subtype = subtype.to_ascii_lowercase();
    // RFC 9110 token characters only: no spaces or separators.
    let token = |s: &str| {
        !s.is_empty()
            && s.bytes()
                .all(|b| b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b))
    };
    subtype == "json" || subtype.strip_suffix("+json").is_some_and(token)
}

/// Characters that are escaped in an excerpt: control characters (a
/// terminal or log viewer would act on them), and the invisible format
/// characters that can make text read as something it is not —
/// zero-width spaces and joiners, bidirectional embeddings, overrides and
/// isolates, the word joiner and the byte-order mark.
fn needs_escape(c: char) -> bool {
    c.is_control()
        || matches!(c, '\u{200B}'..='\u{200F}' | '\u{202A}'..='\u{202E}' | '\u{2060}'..='\u{2064}' | '\u{2066}'..='\u{2069}' | '\u{FEFF}')
}

/// Text from outside (an answer, a URL, an error) fit for a terminal or a
/// log line, whole: the characters [`excerpt`] escapes written as
/// `\u{…}` escapes (`\n`, `\r`, `\t` for the common ones), nothing
/// cut. Every message Berth prints or logs that quotes another server's
/// words goes through this or [`excerpt`].
pub fn terminal_safe(text: &str) -> String {
    if !text.chars().any(needs_escape) {
        return text.to_string();
    }
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        match c {
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if needs_escape(c) => out.push_str(&format!("\\u{{{:x}}}", c as u32)),
            c => out.push(c),
        }
    }
    out
}

/// A decider's URL as someone below administrator sees it: the user name
/// and password dropped, every query value and the fragment replaced by
/// `…` (`https://d.example/run?key=…`) — a URL is often a credential's
/// hiding place (`?token=`, `?code=`), and viewers see deciders too.
/// Administrators, who registered it, see it whole.
pub fn url_for_viewers(url: &str) -> String {
    let Ok(mut u) = url::Url::parse(url) else {
        return "…".to_string();
    };
    let _ = u.set_password(None);
    let _ = u.set_username("");
    let names: Vec<String> = u
        .query_pairs()
        .map(|(k, _)| format!("{}=…", terminal_safe(&k)))
        .collect();
    let fragment = u.fragment().is_some();
    u.set_query(None);
    u.set_fragment(None);
    let mut out = u.to_string();
    if !names.is_empty() {
        out.push('?');
        out.push_str(&names.join("&"));
    }
    if fragment {
        out.push_str("#…");
    }
    out
}

/// `n` with thousands separators, as people read sizes: 3,145,728.
fn grouped(n: usize) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// Text a decider sent, fit to keep in an error: control and invisible
/// format characters written as `\u{…}` escapes (`\n`, `\r`, `\t` for
/// the common ones), at most [`MAX_EXCERPT_BYTES`] bytes of the result
/// (cut at a character boundary, never inside an escape), and when cut,
/// `…` and the full size: `…(3,145,728 bytes)`.
pub fn excerpt(text: &str) -> String {
    excerpt_of(text, text.len(), false)
}

/// [`excerpt`] of a body: its bytes read as UTF-8 (invalid sequences
/// replaced), the size noted being the body's. Only the start is decoded,
/// so a 4 MiB body costs no more than a short one.
pub fn excerpt_bytes(body: &[u8]) -> String {
    if body.is_empty() {
        return "(an empty body)".to_string();
    }
    // Every byte read yields at least one byte of excerpt, so this much
    // always fills it when the body is longer.
    let head = &body[..body.len().min(MAX_EXCERPT_BYTES + 4)];
    excerpt_of(
        &String::from_utf8_lossy(head),
        body.len(),
        head.len() < body.len(),
    )
}

/// `text` is all of something `total` bytes long, or with `cut`, its start.
fn excerpt_of(text: &str, total: usize, cut: bool) -> String {
    let mut out = String::new();
    let mut full = true;
    for c in text.chars() {
        let piece = match c {
            '\n' => "\\n".to_string(),
            '\r' => "\\r".to_string(),
            '\t' => "\\t".to_string(),
            c if needs_escape(c) => format!("\\u{{{:x}}}", c as u32),
            c => c.to_string(),
        };
        if out.len() + piece.len() > MAX_EXCERPT_BYTES {
            full = false;
            break;
        }
        out.push_str(&piece);
    }
    if cut || !full {
        out.push_str(&format!("…({} bytes)", grouped(total)));
    }
    out
}

/// How a call ended, for the driver's bookkeeping and the stored run.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "snake_case", tag = "outcome")]
pub enum Outcome {
    /// A 2xx reply that parsed (individual proposals may still be refused).
    Ok,
    /// The decider asked to be called later (429 or 503). Usually clears.
    Deferred {
        #[serde(skip)]
        retry_after: Option<Duration>,
    },
    /// Anything else: an error status, a redirect, a timeout, a refused
    /// address, a malformed body. Usually a bug somewhere.
    Failed,
}

impl Outcome {
    pub fn as_str(&self) -> &'static str {
        match self {
            Outcome::Ok => "ok",
            Outcome::Deferred { .. } => "deferred",
            Outcome::Failed => "failed",
        }
    }
}

/// One finished call: the decider's entry for the engine to score, and how
/// it ended.
pub struct Call {
    pub external: decider::External,
    pub outcome: Outcome,
    pub run_time_ms: f64,
}

fn failed(name: &str, code: &str, message: String, ms: f64) -> Call {
    Call {
        external: decider::External {
            name: name.to_string(),
            response: Err(DeciderError {
                code: code.to_string(),
                message,
            }),
            run_time_ms: Some(ms),
        },
        outcome: Outcome::Failed,
        run_time_ms: ms,
    }
}

/// The signature headers of a call to `d` with `body` at `now_unix`:
/// none without a secret; with one, signed with the current secret and
/// the previous one inside its overlap. The failed call when a secret
/// cannot be opened.
fn signature_headers(
    out: &Outbound,
    d: &DeciderRow,
    body: &Bytes,
    now_unix: i64,
) -> Result<Vec<(&'static str, String)>, Call> {
    let mut headers: Vec<(&'static str, String)> = Vec::new();
    // Secrets: the current one first, then the previous one inside its
    // overlap. A decider with a secret is never called unsigned.
    let mut sealed: Vec<&str> = Vec::new();
    if let Some(s) = &d.secret_sealed {
        sealed.push(s);
        if let Some(p) = d.live_previous(now_unix) {
            sealed.push(p);
        }
    }
    if !sealed.is_empty() {
        let Some(vault) = &out.vault else {
            return Err(failed(
                &d.name,
                "no_secret_key",
                "this decider has a secret but the server has no secret key to open it; start the server with BERTH_SECRET_KEY or --secret-key-file".into(),
                0.0,
            ));
        };
        let mut secrets = Vec::new();
        for s in sealed {
            match vault
                .open(&d.name, s)
                .map_err(|e| e.to_string())
                .and_then(|text| signing::Secret::parse(&text).map_err(|e| e.to_string()))
            {
                Ok(secret) => secrets.push(secret),
                Err(e) => {
                    return Err(failed(
                        &d.name,
                        "secret_unusable",
                        format!("the decider's secret cannot be used: {e}"),
                        0.0,
                    ))
                }
            }
        }
        let refs: Vec<&signing::Secret> = secrets.iter().collect();
        let sig = signing::sign(&refs, &signing::new_webhook_id(), now_unix, body);
        headers.push(("berth-signature", sig.berth_signature));
        headers.push(("webhook-id", sig.webhook_id));
        headers.push(("webhook-timestamp", sig.webhook_timestamp));
        headers.push(("webhook-signature", sig.webhook_signature));
    }
    Ok(headers)
}

/// What the decider's reply comes to: a deferral (429, 503), a failure
/// (another status, not JSON, not a schema-1 response) or its entry.
fn read_reply(name: &str, reply: forward::Reply, run_time_ms: f64) -> Call {
    let status = reply.status;
    if status == 429 || status == 503 {
        let later = reply
            .retry_after
            .map(|d| format!(" (it asked to wait {} s)", d.as_secs()))
            .unwrap_or_default();
        return Call {
            external: decider::External {
                name: name.to_string(),
                response: Err(DeciderError {
                    code: "deferred".into(),
                    message: format!("the decider answered {status}: busy, try later{later}"),
                }),
                run_time_ms: Some(run_time_ms),
            },
            outcome: Outcome::Deferred {
                retry_after: reply.retry_after,
            },
            run_time_ms,
        };
    }
    if !(200..300).contains(&status) {
        let said = if reply.body.is_empty() {
            String::new()
        } else {
            format!("; it said: {}", excerpt_bytes(&reply.body))
        };
        return failed(
            name,
            "http_status",
            format!("the decider answered HTTP {status}; only 2xx carries proposals{said}"),
            run_time_ms,
        );
    }
    if !reply
        .content_type
        .as_deref()
        .is_some_and(is_json_media_type)
    {
        let labelled = match &reply.content_type {
            Some(ct) => format!("Content-Type {}", excerpt(ct)),
            None => "no Content-Type".to_string(),
        };
        return failed(
            name,
            "media_type",
            format!(
                "the decider's reply has {labelled}; a reply must be application/json (or application/*+json), so it was not read; it began: {}",
                excerpt_bytes(&reply.body)
            ),
            run_time_ms,
        );
    }
    match decider::parse_response(&reply.body) {
        Ok(raw) => Call {
            external: decider::External {
                name: name.to_string(),
                response: Ok(raw),
                run_time_ms: Some(run_time_ms),
            },
            outcome: Outcome::Ok,
            run_time_ms,
        },
        Err(e) => {
            let e = DeciderError::from(e);
            // The parser's message may quote the reply (serde names the
            // string it found where a list belonged, all of it).
            failed(
                name,
                &e.code,
                format!("the decider's reply: {}", excerpt(&e.message)),
                run_time_ms,
            )
        }
    }
}

/// Call decider `d` with `body` — the exact schema-1 request bytes, the
/// same the Preview shows — signed with its secrets at `now_unix`.
pub async fn call(out: &Outbound, d: &DeciderRow, body: Bytes, now_unix: i64) -> Call {
    let start = Instant::now();
    let ms = |s: Instant| s.elapsed().as_secs_f64() * 1000.0;
    if !d.enabled {
        return failed(
            &d.name,
            "disabled",
            format!(
                "decider {:?} is disabled; an administrator can enable it on the Deciders page",
                d.name
            ),
            0.0,
        );
    }
    // The forwarder sets content-type, user-agent, host and the rest;
    // only the signatures are ours to add.
    let headers = match signature_headers(out, d, &body, now_unix) {
        Ok(h) => h,
        Err(refused) => return refused,
    };
    let timeout = Duration::from_millis(d.timeout_ms.clamp(MIN_TIMEOUT_MS, MAX_TIMEOUT_MS) as u64);
    let reply = match out.forwarder.post(&d.url, &headers, body, timeout).await {
        Ok(r) => r,
        Err(e) => {
            use forward::ForwardError as F;
            let code = match &e {
                // Never contacted: every outbound slot stayed taken. Not
                // the decider's fault, so a deferral, not a failure.
                F::Busy { .. } => {
                    let run_time_ms = ms(start);
                    return Call {
                        external: decider::External {
                            name: d.name.clone(),
                            response: Err(DeciderError {
                                code: "busy".into(),
                                message: e.to_string(),
                            }),
                            run_time_ms: Some(run_time_ms),
                        },
                        outcome: Outcome::Deferred { retry_after: None },
                        run_time_ms,
                    };
                }
                F::Timeout => "timeout",
                F::Blocked { .. } => "blocked",
                F::Redirect { .. } => "redirect",
                F::BadUrl(_) => "bad_url",
                F::RequestTooLarge { .. } => "request_too_large",
                F::ResponseTooLarge { .. } => "too_large",
                F::Resolve(_) | F::Connect(_) | F::Tls(_) | F::Http(_) => "unreachable",
            };
            return failed(&d.name, code, e.to_string(), ms(start));
        }
    };
    read_reply(&d.name, reply, ms(start))
}

/// The schema-1 request for an estate, as the bytes every decider is sent
/// (the same the Preview shows). Built off the async runtime: on a large
/// estate it is engine work.
pub async fn request_body(
    estate: &Arc<berth_engine::Estate>,
    policy: &berth_engine::Policy,
    now: i64,
) -> Result<Bytes, crate::error::ApiError> {
    let (e, p) = (estate.clone(), policy.clone());
    tokio::task::spawn_blocking(move || {
        Bytes::from(
            serde_json::to_vec(&berth_engine::request::build(&e, &p, now)).expect("serialises"),
        )
    })
    .await
    .map_err(|e| crate::error::ApiError::Internal(format!("request task: {e}")))
}

/// [`call`] every decider of `rows` with `body` at once, so one that
/// hangs until its timeout adds nothing to the others' time. The calls
/// come back in the order of `rows`, whatever order they finished in.
pub async fn call_all(
    out: &Arc<Outbound>,
    rows: &[DeciderRow],
    body: Bytes,
    now_unix: i64,
) -> Vec<Call> {
    let mut set = tokio::task::JoinSet::new();
    for (i, d) in rows.iter().enumerate() {
        let (out, d, body) = (out.clone(), d.clone(), body.clone());
        set.spawn(async move { (i, call(&out, &d, body, now_unix).await) });
    }
    let mut calls: Vec<Option<Call>> = (0..rows.len()).map(|_| None).collect();
    while let Some(done) = set.join_next().await {
        let (i, c) = done.expect("a decider call task panicked");
        calls[i] = Some(c);
    }
    calls
        .into_iter()
        .map(|c| c.expect("every call joined"))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_media_types_and_nothing_else() {
        for yes in [
            "application/json",
            "APPLICATION/JSON",
            "application/json; charset=utf-8",
            " application/json ;charset=\"UTF-8\"",
            "application/problem+json",
            "application/vnd.example.v2+json; q=1",
        ] {
            assert!(is_json_media_type(yes), "{yes:?}");
        }
        for no in [
            "",
            "json",
            "text/html",
            "text/json",
            "text/html; charset=application/json",
            "application/jsonp",
            "application/json-seq",
            "application/+json",
            "application/x json+json",
            "application/xml",
            "*/*",
            "application/json/extra",
        ] {
            assert!(!is_json_media_type(no), "{no:?}");
        }
    }

    #[test]
    fn excerpts_are_bounded_escaped_and_sized() {
        assert_eq!(excerpt("short and plain"), "short and plain");
        assert_eq!(
            excerpt("a\nb\tc\u{1b}[31m\u{202E}d\u{200B}"),
            "a\\nb\\tc\\u{1b}[31m\\u{202e}d\\u{200b}"
        );
        let long = "é".repeat(2_000_000);
        let e = excerpt(&long);
        assert!(e.ends_with("…(4,000,000 bytes)"), "{}", &e[e.len() - 40..]);
        let kept = e.strip_suffix("…(4,000,000 bytes)").unwrap();
        assert_eq!(kept.len(), MAX_EXCERPT_BYTES);
        assert!(kept.chars().all(|c| c == 'é'));
        // An escape is never cut in half.
        let escapes = "\u{7}".repeat(1000);
        let kept = excerpt(&escapes);
        let kept = kept.strip_suffix("…(1,000 bytes)").unwrap();
        assert!(kept.len() <= MAX_EXCERPT_BYTES);
        assert_eq!(kept.len() % "\\u{7}".len(), 0);
        assert!(kept.chars().all(|c| "\\u{7}".contains(c)));
        // Bodies: the size is the body's, invalid UTF-8 replaced.
        let body = [b"<html>\xff".as_slice(), &[b'x'; 3 << 20]].concat();
        let e = excerpt_bytes(&body);
        assert!(e.starts_with("<html>\u{FFFD}xxx"), "{e}");
        assert!(e.ends_with("…(3,145,735 bytes)"), "{e}");
        assert!(e.len() < MAX_EXCERPT_BYTES + 32);
        assert_eq!(excerpt_bytes(b"{\"a\": 1}"), "{\"a\": 1}");
        assert_eq!(excerpt_bytes(b""), "(an empty body)");
        assert_eq!(grouped(0), "0");
        assert_eq!(grouped(999), "999");
        assert_eq!(grouped(1000), "1,000");
        assert_eq!(grouped(3_145_728), "3,145,728");
    }
}

#[cfg(test)]
mod issue_37_tests {
    use super::*;

    #[test]
    fn secrets_in_decider_urls_are_masked_for_viewers() {
        assert_eq!(
            url_for_viewers("https://bob:hunter2@d.example:8443/run?key=s3cret&mode=x#frag"),
            "https://d.example:8443/run?key=…&mode=…#…"
        );
        assert_eq!(
            url_for_viewers("http://10.0.0.1/decide"),
            "http://10.0.0.1/decide"
        );
        assert_eq!(url_for_viewers("not a url"), "…");
    }

    #[test]
    fn terminal_safe_escapes_control_and_bidi_characters_whole() {
        let raw = "bad query\u{1b}[31m red \u{202e}gnp.exe\nnext";
        let safe = terminal_safe(raw);
        assert!(!safe.contains('\u{1b}') && !safe.contains('\u{202e}') && !safe.contains('\n'));
        assert_eq!(safe, "bad query\\u{1b}[31m red \\u{202e}gnp.exe\\nnext");
        assert_eq!(terminal_safe("plain"), "plain");
    }
}
