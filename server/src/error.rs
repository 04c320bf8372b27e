//! The one error type of the HTTP API, and how each kind becomes a
//! response: always JSON `{error, message, details}`.
//!
//! Database and internal failures become 500 with a generic message: what
//! went wrong inside is logged, never sent, because a stack of SQL errors
//! tells an attacker more than it tells a user. Everything the caller can
//! fix is a 4xx that says what and where.

use axum::extract::Request;
use axum::http::{header, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use berth_api::ErrorCode;
use serde_json::Value;

use crate::store::StoreError;

#[derive(Debug, thiserror::Error)]
pub enum ApiError {
    /// The request is not what the route expects (shape, types, syntax).
    #[error("{message}")]
    BadRequest { message: String, details: Value },
    /// Well-formed, but its content is invalid (estate/policy/scenario
    /// errors); `details` lists every error with its path and line.
    #[error("{message}")]
    Invalid { message: String, details: Value },
    #[error("not signed in: send a bearer token or sign in")]
    Unauthenticated,
    /// A bearer token was sent, and it is wrong or revoked.
    #[error("the bearer token is unknown or revoked")]
    InvalidToken,
    #[error("{0}")]
    Forbidden(String),
    #[error("{0}")]
    NotFound(String),
    #[error("{0}")]
    Conflict(String),
    #[error("request body too large: the limit for this route is {limit} bytes")]
    TooLarge { limit: usize },
    #[error("too many attempts from this address; retry in {retry_after_s} s")]
    RateLimited { retry_after_s: u64 },
    /// Too many large requests in service for one caller, or in all
    /// (`http::extract::heavy_permit`): 429 with `Retry-After: 1`.
    #[error("{0}")]
    HeavyBusy(String),
    /// The request body did not arrive whole in time (a client sending
    /// it slowly); the connection is closed after the answer.
    #[error("the request body did not arrive within {limit_s} s; the connection is closed")]
    BodyTimeout { limit_s: u64 },
    /// Too many engine computations for one caller.
    #[error("too many engine computations for {subject}: {per_minute} a minute are allowed (--engine-runs-per-minute); retry in {retry_after_s} s")]
    EngineRateLimited {
        subject: String,
        per_minute: u32,
        retry_after_s: u64,
    },
    /// An engine result above the size this server holds in memory.
    #[error("the {op} result is {size} bytes, above this server's limit of {limit} bytes (--max-result-mib); evaluate a smaller estate, or ask the operator to raise the limit")]
    ResultTooLarge {
        op: &'static str,
        size: usize,
        limit: usize,
    },
    #[error("the database is unavailable")]
    Unavailable,
    #[error("internal error")]
    Internal(String),
}

/// The `details` of a body listing input errors: `{"errors": [...]}`,
/// built here only.
fn errors_details(errors: impl serde::Serialize) -> Value {
    serde_json::json!({ "errors": errors })
}

/// One input error at `path` (a JSON pointer into the request), with its
/// line where one is known: the item of `details.errors`.
pub fn input_error(
    path: impl Into<String>,
    line: Option<u64>,
    message: impl Into<String>,
) -> berth_api::InputError {
    berth_api::InputError {
        path: path.into(),
        line,
        message: message.into(),
        file: None,
        document: None,
        object: None,
    }
}

impl ApiError {
    pub fn bad_request(message: impl Into<String>) -> ApiError {
        ApiError::BadRequest {
            message: message.into(),
            details: Value::Null,
        }
    }

    /// 422 `invalid`: `message`, and every input error (`{path, line,
    /// message, …}`) under `details.errors`.
    pub fn invalid(message: impl Into<String>, errors: impl serde::Serialize) -> ApiError {
        ApiError::Invalid {
            message: message.into(),
            details: errors_details(errors),
        }
    }

    /// 400 `bad_request` with input errors under `details.errors`, as
    /// [`ApiError::invalid`] gives them.
    pub fn bad_request_at(message: impl Into<String>, errors: impl serde::Serialize) -> ApiError {
        ApiError::BadRequest {
            message: message.into(),
            details: errors_details(errors),
        }
    }

    /// 422 `invalid` with one input error at `path` (a JSON pointer into
    /// the request), no line.
    pub fn invalid_at(message: impl Into<String>, path: &str, what: impl Into<String>) -> ApiError {
        ApiError::invalid(message, [input_error(path, None, what)])
    }

    pub fn status(&self) -> StatusCode {
        match self {
            ApiError::BadRequest { .. } => StatusCode::BAD_REQUEST,
            ApiError::Invalid { .. } => StatusCode::UNPROCESSABLE_ENTITY,
            ApiError::Unauthenticated | ApiError::InvalidToken => StatusCode::UNAUTHORIZED,
            ApiError::Forbidden(_) => StatusCode::FORBIDDEN,
            ApiError::NotFound(_) => StatusCode::NOT_FOUND,
            ApiError::Conflict(_) => StatusCode::CONFLICT,
            ApiError::TooLarge { .. } => StatusCode::PAYLOAD_TOO_LARGE,
            ApiError::RateLimited { .. }
            | ApiError::EngineRateLimited { .. }
            | ApiError::HeavyBusy(_) => StatusCode::TOO_MANY_REQUESTS,
            ApiError::BodyTimeout { .. } => StatusCode::REQUEST_TIMEOUT,
            // 507 Insufficient Storage: the request is fine, but the server
            // will not hold its answer; neither 413 (that is the request's
            // size) nor 500 (nothing failed) says so.
            ApiError::ResultTooLarge { .. } => StatusCode::INSUFFICIENT_STORAGE,
            ApiError::Unavailable => StatusCode::SERVICE_UNAVAILABLE,
            ApiError::Internal(_) => StatusCode::INTERNAL_SERVER_ERROR,
        }
    }

    /// Stable machine-readable code, part of the API contract.
    /// The stable code of the error body (the API's [`ErrorCode`]).
    pub fn error_code(&self) -> ErrorCode {
        match self {
            ApiError::BadRequest { .. } => ErrorCode::BadRequest,
            ApiError::Invalid { .. } => ErrorCode::Invalid,
            ApiError::Unauthenticated | ApiError::InvalidToken => ErrorCode::Unauthenticated,
            ApiError::Forbidden(_) => ErrorCode::Forbidden,
            ApiError::NotFound(_) => ErrorCode::NotFound,
            ApiError::Conflict(_) => ErrorCode::Conflict,
            ApiError::TooLarge { .. } => ErrorCode::TooLarge,
            ApiError::RateLimited { .. }
            | ApiError::EngineRateLimited { .. }
            | ApiError::HeavyBusy(_) => ErrorCode::RateLimited,
            ApiError::BodyTimeout { .. } => ErrorCode::Timeout,
            ApiError::ResultTooLarge { .. } => ErrorCode::ResultTooLarge,
            ApiError::Unavailable => ErrorCode::Unavailable,
            ApiError::Internal(_) => ErrorCode::Internal,
        }
    }

    pub fn code(&self) -> &'static str {
        self.error_code().as_str()
    }
}

/// `n` and the noun, plural unless `n` is 1 (`1 error`, `3 errors`): how
/// error messages count what they refuse.
pub fn counted(n: usize, noun: &str) -> String {
    format!("{n} {noun}{}", if n == 1 { "" } else { "s" })
}

impl From<sqlx::Error> for ApiError {
    fn from(e: sqlx::Error) -> ApiError {
        match &e {
            // A pool that cannot hand out a connection: the database is
            // down or overloaded, which a client may retry.
            sqlx::Error::PoolTimedOut | sqlx::Error::PoolClosed | sqlx::Error::Io(_) => {
                tracing::error!(error = %e, "database unavailable");
                ApiError::Unavailable
            }
            // A unique or foreign-key violation is a conflict the caller
            // caused (a name taken, a parent gone), not a server fault.
            sqlx::Error::Database(db)
                if db.is_unique_violation() || db.is_foreign_key_violation() =>
            {
                ApiError::Conflict("that conflicts with something that already exists".into())
            }
            _ => ApiError::Internal(e.to_string()),
        }
    }
}

/// The store's errors at the HTTP edge, with the same statuses and
/// messages as when the store answered in `ApiError` itself.
impl From<StoreError> for ApiError {
    fn from(e: StoreError) -> ApiError {
        match e {
            StoreError::Database(e) => ApiError::from(e),
            StoreError::Conflict(message) => ApiError::Conflict(message),
        }
    }
}

/// The answer to a request no route matched: a JSON 404 naming it. The
/// router's fallback under `/api/` (`web::pages` sends it there).
pub async fn not_found(req: Request) -> ApiError {
    ApiError::NotFound(format!(
        "no route {} {}; the API is described in docs/api.openapi.json",
        req.method(),
        req.uri().path()
    ))
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let status = self.status();
        let details = match &self {
            ApiError::BadRequest { details, .. } | ApiError::Invalid { details, .. } => {
                details.clone()
            }
            _ => Value::Null,
        };
        let message = match &self {
            ApiError::Internal(inner) => {
                // The inner text goes to the log only.
                tracing::error!(error = %inner, "internal error");
                "internal error; the server log has the details".to_string()
            }
            other => other.to_string(),
        };
        // The API's error body: what every client reads back.
        let body = berth_api::ErrorBody {
            error: self.code().to_string(),
            message,
            details,
        };
        let mut resp = (status, axum::Json(body)).into_response();
        match self {
            ApiError::RateLimited { retry_after_s }
            | ApiError::EngineRateLimited { retry_after_s, .. } => {
                if let Ok(v) = HeaderValue::from_str(&retry_after_s.to_string()) {
                    resp.headers_mut().insert(header::RETRY_AFTER, v);
                }
            }
            // One of the caller's large requests ends soon.
            ApiError::HeavyBusy(_) => {
                resp.headers_mut()
                    .insert(header::RETRY_AFTER, HeaderValue::from_static("1"));
            }
            // The rest of the body may still be on its way: the connection
            // cannot carry another request.
            ApiError::BodyTimeout { .. } => {
                resp.headers_mut()
                    .insert(header::CONNECTION, HeaderValue::from_static("close"));
            }
            _ => {}
        }
        resp
    }
}

pub type ApiResult<T> = Result<T, ApiError>;
