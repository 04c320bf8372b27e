//! What every handler reads requests with and answers in: query strings
//! and bodies refused as JSON errors, body limits and the body deadline,
//! the engine's per-caller budget and result size limit, ids, the
//! evaluation time, and JSON bodies that are already serialised.

use axum::body::{Body, Bytes};
use axum::http::{header, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use serde::{Deserialize, Serialize};
use serde_json::json;

use berth_engine::estate;

use crate::auth::Caller;
use crate::clock::now_s;
use crate::error::{counted, ApiError, ApiResult};
use crate::heavy::{HeavyBook, HeavyCounts};
use crate::state::AppState;

/// Body limits. Estate files get room for a 5,000-service estate (~12 MB
/// as JSON) with margin; compare bodies carry replies of up to the decider
/// limit each; everything else is small.
pub const ESTATE_BODY_LIMIT: usize = 64 * 1024 * 1024;
pub const COMPARE_BODY_LIMIT: usize = 16 * 1024 * 1024;
pub const SMALL_BODY_LIMIT: usize = 1024 * 1024;
/// Observation batches and fact updates (`POST …/observations`,
/// `POST …/facts`): a batch holds at most 50,000 updates
/// (`facts::MAX_UPDATES`), each under 300 bytes as an agent writes it
/// (a flow with both service ids, the value, class and time), so 16 MiB
/// fits the largest batch with room, where 64 MiB let one request hold
/// four times that for nothing.
pub const FACTS_BODY_LIMIT: usize = 16 * 1024 * 1024;
/// Kubernetes manifests (`POST …/import/kubernetes`): an agent's re-sync
/// sends every list it read (Deployments, Pods, Services, … as the API
/// server gave them). Parsing costs about 30× the body (manifests become
/// JSON values; measured with `scripts/measure-memory.py`: a 9 MiB body
/// adds about 290 MiB), so 16 MiB — some 5,000 Deployments of the size
/// the script sends — bounds one import near 500 MiB; with one import
/// at a time per token and [`HEAVY_IN_PROCESS`] in all ([`heavy_permit`])
/// that is what bounds imports' memory.
pub const KUBERNETES_BODY_LIMIT: usize = 16 * 1024 * 1024;

/// Heavy requests (Kubernetes imports, estate uploads) one token or user
/// may have in service at once. Such a request holds a multiple of its
/// body in memory while it is parsed (about 30× for Kubernetes lists,
/// measured by `scripts/measure-memory.py`); an agent or a person never
/// needs two at once, so a second waits for nothing: it is answered 429
/// at once and retried.
pub const HEAVY_PER_CALLER: usize = 1;
/// Whole estate files being sent to one token or user at once: two, for a
/// person with two tabs open; they share one copy of the document.
pub const FILES_PER_CALLER: usize = 2;
/// Heavy requests in service at once in the whole process, whoever sends
/// them: the bound on their memory together (each at most its body limit
/// times its parse factor — a 16 MiB Kubernetes import about 500 MiB while
/// it is parsed). Two keeps that near a gigabyte; a third caller is told
/// to retry in a second, and imports take seconds.
pub const HEAVY_IN_PROCESS: usize = 2;

/// A heavy request's place, held until dropped (for a response body,
/// until it is sent or its connection closes).
pub struct HeavyPermit {
    book: std::sync::Arc<std::sync::Mutex<HeavyCounts>>,
    subject: String,
    /// Whether it also holds one of the process's [`HEAVY_IN_PROCESS`].
    in_process: bool,
}

impl Drop for HeavyPermit {
    fn drop(&mut self) {
        let mut c = self.book.lock().expect("heavy counts lock");
        if self.in_process {
            c.total = c.total.saturating_sub(1);
        }
        if let Some(n) = c.by_subject.get_mut(&self.subject) {
            *n = n.saturating_sub(1);
            if *n == 0 {
                c.by_subject.remove(&self.subject);
            }
        }
    }
}

/// Take a place for a heavy request of `subject` (`token:<id>` or a user
/// name), or answer 429 naming the limit: [`HEAVY_PER_CALLER`] per caller,
/// [`HEAVY_IN_PROCESS`] in all.
pub fn heavy_permit(book: &HeavyBook, subject: &str, what: &str) -> ApiResult<HeavyPermit> {
    take_heavy(book, subject, what, true, HEAVY_PER_CALLER)
}

/// [`heavy_permit`] for a large *answer* sent from shared memory (a whole
/// estate file): bounded per caller only, so one caller's stalled readers
/// cannot hold places every other caller needs.
pub fn heavy_permit_per_caller(
    book: &HeavyBook,
    subject: &str,
    what: &str,
) -> ApiResult<HeavyPermit> {
    take_heavy(book, subject, what, false, FILES_PER_CALLER)
}

fn take_heavy(
    book: &HeavyBook,
    subject: &str,
    what: &str,
    in_process: bool,
    per_caller: usize,
) -> ApiResult<HeavyPermit> {
    let mut c = book.counts.lock().expect("heavy counts lock");
    // Imports and files are counted apart: a file being read does not
    // stop its reader's import.
    let key = if in_process {
        subject.to_string()
    } else {
        format!("{subject} (files)")
    };
    let mine = c.by_subject.get(&key).copied().unwrap_or(0);
    if mine >= per_caller {
        return Err(ApiError::HeavyBusy(format!(
            "{subject} already has {mine} large request{} in service (at most {per_caller} at once per token or user); {what} was not started: retry when one has finished",
            if mine == 1 { "" } else { "s" }
        )));
    }
    if in_process && c.total >= HEAVY_IN_PROCESS {
        return Err(ApiError::HeavyBusy(format!(
            "the server has {} large requests in service (at most {HEAVY_IN_PROCESS} at once); {what} was not started: retry shortly",
            c.total
        )));
    }
    if in_process {
        c.total += 1;
    }
    *c.by_subject.entry(key.clone()).or_insert(0) += 1;
    Ok(HeavyPermit {
        book: book.counts.clone(),
        subject: key,
        in_process,
    })
}

/// A response body streamed from shared text in 64 KiB pieces, holding a
/// heavy permit until it is sent or dropped: a reader that stalls holds
/// its place and one piece (plus the socket's buffer), never a copy of the
/// whole text, which many readers share.
pub struct SharedBody {
    text: std::sync::Arc<String>,
    at: usize,
    _permit: Option<HeavyPermit>,
}

/// Piece size of [`SharedBody`]: large enough that writing costs few
/// calls, small enough that a stalled reader holds kilobytes.
const SHARED_PIECE: usize = 64 * 1024;

impl SharedBody {
    pub fn new(text: std::sync::Arc<String>, permit: Option<HeavyPermit>) -> SharedBody {
        SharedBody {
            text,
            at: 0,
            _permit: permit,
        }
    }
}

impl http_body::Body for SharedBody {
    type Data = Bytes;
    type Error = std::convert::Infallible;

    fn poll_frame(
        mut self: std::pin::Pin<&mut Self>,
        _: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Option<Result<http_body::Frame<Bytes>, Self::Error>>> {
        let len = self.text.len();
        if self.at >= len {
            self._permit = None;
            return std::task::Poll::Ready(None);
        }
        let end = (self.at + SHARED_PIECE).min(len);
        let piece = Bytes::copy_from_slice(&self.text.as_bytes()[self.at..end]);
        self.at = end;
        std::task::Poll::Ready(Some(Ok(http_body::Frame::data(piece))))
    }

    fn is_end_stream(&self) -> bool {
        self.at >= self.text.len()
    }

    fn size_hint(&self) -> http_body::SizeHint {
        http_body::SizeHint::with_exact((self.text.len() - self.at) as u64)
    }
}

/// Estate documents being sent, by (estate, version): readers of the same
/// version share one copy for as long as any of them is being sent.
pub fn shared_document(
    book: &HeavyBook,
    id: &str,
    version: i64,
) -> (
    Option<std::sync::Arc<String>>,
    impl FnOnce(String) -> std::sync::Arc<String>,
) {
    let docs = book.docs.clone();
    let key = (id.to_string(), version);
    let found = {
        let mut m = docs.lock().expect("shared documents lock");
        m.retain(|_, w| w.strong_count() > 0);
        m.get(&key).and_then(std::sync::Weak::upgrade)
    };
    let keep = move |text: String| {
        let text = std::sync::Arc::new(text);
        docs.lock()
            .expect("shared documents lock")
            .insert(key, std::sync::Arc::downgrade(&text));
        text
    };
    (found, keep)
}

/// Query parameters, refused as JSON errors like everything else (axum's
/// own `Query` answers in plain text).
pub struct Query<T>(pub T);

impl<T: serde::de::DeserializeOwned, S: Send + Sync> axum::extract::FromRequestParts<S>
    for Query<T>
{
    type Rejection = ApiError;
    async fn from_request_parts(
        parts: &mut axum::http::request::Parts,
        _: &S,
    ) -> Result<Query<T>, ApiError> {
        axum::extract::Query::<T>::try_from_uri(&parts.uri)
            .map(|q| Query(q.0))
            .map_err(|e| ApiError::bad_request(format!("query string: {}", e.body_text())))
    }
}

/// The error a request body gives when it has not arrived whole by its
/// deadline (`berth serve --body-timeout-s`; the listener sets it).
#[derive(Debug, thiserror::Error)]
#[error("the request body did not arrive within {limit_s} s")]
pub struct BodyTimedOut {
    pub limit_s: u64,
}

/// `e` itself or the first error it wraps that is a `T`.
fn cause<'a, T: std::error::Error + 'static>(
    e: &'a (dyn std::error::Error + 'static),
) -> Option<&'a T> {
    let mut cur = Some(e);
    while let Some(err) = cur {
        if let Some(t) = err.downcast_ref::<T>() {
            return Some(t);
        }
        cur = err.source();
    }
    None
}

/// Read a body up to `limit` bytes; over it is a 413 naming the limit, a
/// body that trickles past the listener's deadline a 408.
pub async fn read_body(body: Body, limit: usize) -> ApiResult<Bytes> {
    // A declared length over the limit is refused before a byte is read.
    use http_body::Body as _;
    if body.size_hint().lower() > limit as u64 {
        return Err(ApiError::TooLarge { limit });
    }
    axum::body::to_bytes(body, limit).await.map_err(|e| {
        if cause::<http_body_util::LengthLimitError>(&e).is_some() {
            ApiError::TooLarge { limit }
        } else if let Some(t) = cause::<BodyTimedOut>(&e) {
            ApiError::BodyTimeout { limit_s: t.limit_s }
        } else {
            ApiError::bad_request(format!("could not read the request body: {e}"))
        }
    })
}

/// Take one engine computation from the caller's budget
/// (`--engine-runs-per-minute`), or answer 429 with `Retry-After`. Called
/// only when a computation is about to start: cached answers are free.
pub fn engine_allowed(state: &AppState, caller: &Caller) -> ApiResult<()> {
    let p = caller.principal()?;
    state
        .engine_limiter
        .check_key(&p.subject)
        .map_err(|e| match e {
            ApiError::RateLimited { retry_after_s } => ApiError::EngineRateLimited {
                subject: p.subject.clone(),
                per_minute: state.config.engine_runs_per_minute,
                retry_after_s,
            },
            other => other,
        })
}

/// Refuse an engine result above `--max-result-mib` (507), before it is
/// wrapped, cached or sent.
pub fn result_fits(state: &AppState, op: &'static str, result: &str) -> ApiResult<()> {
    let limit = state.config.max_result_bytes;
    if result.len() > limit {
        return Err(ApiError::ResultTooLarge {
            op,
            size: result.len(),
            limit,
        });
    }
    Ok(())
}

/// Field errors of a write, all at once, as a 422 like every other content
/// error: `{path, line: null, message}` per field; `what` names the thing
/// refused ("decider", "notification channel", "decision").
pub fn invalid_fields(what: &str, errors: Vec<(&str, String)>) -> ApiError {
    ApiError::invalid(
        format!(
            "invalid {what}: {}; nothing was written",
            counted(errors.len(), "error")
        ),
        errors
            .into_iter()
            .map(|(path, message)| crate::error::input_error(path, None, message))
            .collect::<Vec<_>>(),
    )
}

pub fn utf8(bytes: &Bytes) -> ApiResult<&str> {
    std::str::from_utf8(bytes).map_err(|e| {
        ApiError::bad_request(format!(
            "the body is not UTF-8 text (invalid byte at offset {})",
            e.valid_up_to()
        ))
    })
}

/// Parse a JSON body into `T`, saying where it went wrong.
pub fn json_body<T: serde::de::DeserializeOwned>(bytes: &Bytes, what: &str) -> ApiResult<T> {
    // Strict: a JSON array never passes for an object (serde would fill
    // the fields by position, past every name check).
    berth_engine::strict::from_slice(bytes).map_err(|e| ApiError::BadRequest {
        // serde_json's message already ends "at line L column C".
        message: format!("{what}: {e}"),
        details: json!({"line": e.line(), "column": e.column()}),
    })
}

/// A JSON response from an already-serialised body.
pub fn raw_json(status: StatusCode, body: impl Into<Body>) -> Response {
    (
        status,
        [(
            header::CONTENT_TYPE,
            HeaderValue::from_static("application/json"),
        )],
        body.into(),
    )
        .into_response()
}

pub fn to_json<T: Serialize>(v: &T) -> String {
    serde_json::to_string(v).expect("results serialise")
}

pub fn check_id(what: &str, id: &str) -> ApiResult<()> {
    let ok = !id.is_empty()
        && id.len() <= 64
        && id
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-' || b == b'_')
        && id.as_bytes()[0].is_ascii_alphanumeric();
    if ok {
        Ok(())
    } else {
        Err(ApiError::bad_request(format!(
            "{what} {id:?}: expected 1–64 characters of a–z, 0–9, '-' and '_', starting with a letter or digit"
        )))
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EvalQuery {
    /// RFC 3339 evaluation time; default: now, to the minute.
    pub now: Option<String>,
}

pub fn eval_now(now: &Option<String>) -> ApiResult<i64> {
    match now {
        Some(s) => estate::parse_time(s).ok_or_else(|| {
            ApiError::bad_request(format!(
                "now={s:?}: expected an RFC 3339 time like 2026-11-30T04:05:00Z"
            ))
        }),
        // To the minute: identical requests within a minute share one
        // cached result, and staleness windows are hours long, so nothing
        // a person could see changes within it.
        None => Ok(now_s() / 60 * 60),
    }
}
