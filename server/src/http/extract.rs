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
use crate::state::AppState;

/// Body limits. Estate files get room for a 5,000-service estate (~12 MB
/// as JSON) with margin; compare bodies carry replies of up to the decider
/// limit each; everything else is small.
pub const ESTATE_BODY_LIMIT: usize = 64 * 1024 * 1024;
pub const COMPARE_BODY_LIMIT: usize = 16 * 1024 * 1024;
pub const SMALL_BODY_LIMIT: usize = 1024 * 1024;

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
            .map(|(path, message)| json!({"path": path, "line": null, "message": message}))
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
