//! The error body every error response carries, and the input errors a
//! 422 lists.

use serde::{Deserialize, Serialize};
use serde_json::Value;

#[cfg(feature = "schema")]
use crate::Nullable;
#[cfg(feature = "schema")]
use schemars::JsonSchema;

/// Stable machine-readable code of an error, part of the API contract.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum ErrorCode {
    BadRequest,
    Invalid,
    Unauthenticated,
    Forbidden,
    NotFound,
    Conflict,
    TooLarge,
    RateLimited,
    /// A request body that did not arrive in time (408).
    Timeout,
    /// A result larger than the server will send (507).
    ResultTooLarge,
    Unavailable,
    Internal,
}

impl ErrorCode {
    pub fn as_str(self) -> &'static str {
        match self {
            ErrorCode::BadRequest => "bad_request",
            ErrorCode::Invalid => "invalid",
            ErrorCode::Unauthenticated => "unauthenticated",
            ErrorCode::Forbidden => "forbidden",
            ErrorCode::NotFound => "not_found",
            ErrorCode::Conflict => "conflict",
            ErrorCode::TooLarge => "too_large",
            ErrorCode::RateLimited => "rate_limited",
            ErrorCode::Timeout => "timeout",
            ErrorCode::ResultTooLarge => "result_too_large",
            ErrorCode::Unavailable => "unavailable",
            ErrorCode::Internal => "internal",
        }
    }
}

/// The error envelope of every error response.
///
/// `error` is kept as text on the reading side, so a client older than
/// the server still reads a code it does not know; the server writes only
/// [`ErrorCode`]s.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema), schemars(rename = "Error"))]
pub struct ErrorBody {
    #[cfg_attr(feature = "schema", schemars(with = "ErrorCode"))]
    pub error: String,
    /// What went wrong and where, for people.
    pub message: String,
    /// `null`, except for `bad_request` on a JSON syntax error (`line`,
    /// `column`) or a form's rule (`errors`: `InputError`s, a new user's
    /// name and password), and `invalid` (`errors`: `InputError`s).
    #[cfg_attr(
        feature = "schema",
        schemars(with = "Nullable<serde_json::Map<String, Value>>")
    )]
    pub details: Value,
}

impl ErrorBody {
    pub fn new(code: ErrorCode, message: impl Into<String>, details: Value) -> ErrorBody {
        ErrorBody {
            error: code.as_str().to_string(),
            message: message.into(),
            details,
        }
    }

    /// Read an error answer; `None` when it is not Berth's (a proxy's
    /// page, an empty body).
    pub fn parse(text: &str) -> Option<ErrorBody> {
        serde_json::from_str(text).ok()
    }

    /// A 422's errors of the input, each at its place; empty otherwise.
    /// An item of another shape is kept whole as the message.
    pub fn input_errors(&self) -> Vec<InputError> {
        let Some(items) = self.details.get("errors").and_then(Value::as_array) else {
            return Vec::new();
        };
        items
            .iter()
            .map(|item| {
                serde_json::from_value(item.clone()).unwrap_or_else(|_| InputError {
                    path: String::new(),
                    line: None,
                    message: item.to_string(),
                    file: None,
                    document: None,
                    object: None,
                })
            })
            .collect()
    }
}

/// One error in an input, at a JSON pointer. Imports of several files
/// (Kubernetes manifests) also say which file, document and object it is
/// in.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
pub struct InputError {
    /// JSON pointer into the input (`/` for the whole of it), e.g.
    /// `/clusters/3/cpu_free/class`.
    pub path: String,
    /// 1-based line, where it is known; `null` otherwise (fact updates,
    /// policy values out of range).
    #[cfg_attr(feature = "schema", schemars(with = "Nullable<u64>", range(min = 1)))]
    pub line: Option<u64>,
    pub message: String,
    /// Imports of several files only: the file it is in.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub file: Option<String>,
    /// Imports of several files only: the 1-based document in a
    /// multi-document YAML file.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "schema", schemars(range(min = 1)))]
    pub document: Option<u64>,
    /// Imports of several files only: the object, e.g. `Deployment
    /// shop/cart`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub object: Option<String>,
}

impl InputError {
    /// `file: N: object: line L: path: message`, with what is known
    /// (the CLI prints this; `/` stands for an empty path).
    pub fn line_for_people(&self) -> String {
        let mut at = String::new();
        if let Some(f) = &self.file {
            at.push_str(&format!("{f}: "));
        }
        if let Some(d) = self.document {
            at.push_str(&format!("{d}: "));
        }
        if let Some(o) = &self.object {
            at.push_str(&format!("{o}: "));
        }
        if let Some(l) = self.line {
            at.push_str(&format!("line {l}: "));
        }
        let path = if self.path.is_empty() {
            "/"
        } else {
            &self.path
        };
        format!("{at}{path}: {}", self.message)
    }
}

/// Register this module's published schemas (`server/src/http/openapi.rs`).
#[cfg(feature = "schema")]
pub(crate) fn schemas(generator: &mut schemars::SchemaGenerator) {
    let _ = generator.subschema_for::<ErrorBody>();
    let _ = generator.subschema_for::<InputError>();
}
