//! The types of Berth's HTTP API: what the server writes and what its
//! clients (the web app, the CLI's remote commands, the agent) read.
//!
//! One definition per shape, so a field renamed on one side fails to
//! compile on the other, and the published schemas in
//! `docs/api.openapi.yaml` are compared with the ones derived from these
//! types (feature `schema`, `server/tests/openapi.rs`).
//!
//! Engine results are not retyped here: they travel inside a
//! [`ResultEnvelope`] as the engine's exact bytes (a [`RawValue`]), since
//! "same input, same bytes" holds from the engine to every client.

use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;
use serde_json::Value;

#[cfg(feature = "schema")]
use schemars::JsonSchema;

/// For the schema only: a member that is always sent, `null` when there
/// is nothing (`Option<T>` alone would be derived as "may be absent").
#[cfg(feature = "schema")]
pub struct Nullable<T>(pub Option<T>);

#[cfg(feature = "schema")]
impl<T: JsonSchema> JsonSchema for Nullable<T> {
    fn inline_schema() -> bool {
        true
    }

    fn schema_name() -> std::borrow::Cow<'static, str> {
        format!("Nullable_{}", T::schema_name()).into()
    }

    fn json_schema(generator: &mut schemars::SchemaGenerator) -> schemars::Schema {
        <Option<T>>::json_schema(generator)
    }
}

/// Who a principal is to the server. `viewer` < `operator` < `admin`, each
/// with the rights of those before it; `agent` is apart: a measuring
/// agent's token may post observations to its one estate and nothing else.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum Role {
    Agent,
    Viewer,
    Operator,
    Admin,
}

impl Role {
    pub const ALL: [Role; 4] = [Role::Agent, Role::Viewer, Role::Operator, Role::Admin];

    pub fn as_str(self) -> &'static str {
        match self {
            Role::Agent => "agent",
            Role::Viewer => "viewer",
            Role::Operator => "operator",
            Role::Admin => "admin",
        }
    }

    pub fn parse(s: &str) -> Option<Role> {
        Role::ALL.into_iter().find(|r| r.as_str() == s)
    }

    /// Operators and administrators change estates; viewers only look.
    pub fn may_operate(self) -> bool {
        self >= Role::Operator
    }

    pub fn is_admin(self) -> bool {
        self == Role::Admin
    }
}

impl std::fmt::Display for Role {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The stable machine-readable code of an error, part of the contract.
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

/// The body of every error response.
///
/// `error` is kept as text on the reading side, so a client older than
/// the server still reads a code it does not know; the server writes only
/// [`ErrorCode`]s.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
pub struct ErrorBody {
    #[cfg_attr(feature = "schema", schemars(with = "ErrorCode"))]
    pub error: String,
    /// What went wrong and where, for people.
    pub message: String,
    /// `null`, except for `bad_request` on a JSON syntax error (`line`,
    /// `column`) and `invalid` (`errors`: [`InputError`]s).
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
/// also say which file, document and object it is in.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
pub struct InputError {
    /// JSON pointer into the input (`/` for the whole of it).
    pub path: String,
    /// 1-based line where it is known.
    #[cfg_attr(feature = "schema", schemars(with = "Nullable<u64>"))]
    pub line: Option<u64>,
    pub message: String,
    /// The file (imports of several files).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub file: Option<String>,
    /// The 1-based document in a multi-document YAML file.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub document: Option<u64>,
    /// The object, e.g. `Deployment shop/cart`.
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

/// `POST /api/session`'s answer: the session just started.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
pub struct Session {
    pub subject: String,
    pub role: Role,
    #[cfg_attr(feature = "schema", schemars(with = "Nullable<String>"))]
    pub estate: Option<String>,
    pub csrf_token: String,
    pub expires_at: String,
}

/// `GET /api/session`'s answer: who is calling.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
pub struct Caller {
    pub subject: String,
    pub role: Role,
    #[cfg_attr(feature = "schema", schemars(with = "Nullable<String>"))]
    pub estate: Option<String>,
    #[cfg_attr(feature = "schema", schemars(with = "Nullable<String>"))]
    pub csrf_token: Option<String>,
}

/// How many of each kind an estate holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
pub struct Counts {
    pub sites: u64,
    pub clusters: u64,
    pub links: u64,
    pub paths: u64,
    pub services: u64,
    pub flows: u64,
}

/// An estate as `GET /api/estates` lists it: without its document.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
pub struct EstateMeta {
    pub id: String,
    /// The estate's `name` from its file.
    pub name: String,
    pub version: i64,
    pub content_digest: String,
    pub policy_digest: String,
    pub created_at: String,
    pub updated_at: String,
}

/// `GET /api/estates`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
pub struct EstateList {
    pub estates: Vec<EstateMeta>,
}

/// `GET /api/estates/{id}` (with `stale_since`) and the answer to
/// creating one: the estate's metadata, its counts and how fresh it is.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
pub struct EstateSummary {
    /// The members of [`EstateMeta`], at the top level of the object.
    #[serde(flatten)]
    pub meta: EstateMeta,
    /// The newest observation time of any fact with a value.
    #[cfg_attr(feature = "schema", schemars(with = "Nullable<String>"))]
    pub newest_observation: Option<String>,
    /// Only on `GET /api/estates/{id}`: from when even the newest fact is
    /// past the measured and reported windows.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stale_since: Option<Option<String>>,
    pub counts: Counts,
}

/// What every engine result travels in: what it was computed from, and
/// the result as the engine's exact bytes.
#[derive(Debug, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
pub struct ResultEnvelope {
    pub estate: String,
    pub version: i64,
    pub content_digest: String,
    pub policy_digest: String,
    pub now: String,
    /// Hex SHA-256 of the exact bytes of `result`.
    pub result_digest: String,
    #[cfg_attr(feature = "schema", schemars(with = "serde_json::Map<String, Value>"))]
    pub result: Box<RawValue>,
}

impl ResultEnvelope {
    /// The envelope's bytes around an already serialised `result`,
    /// member for member what deserialising reads back. Written by hand so
    /// a large result is copied once, never parsed again.
    #[allow(clippy::too_many_arguments)]
    pub fn write(
        estate: &str,
        version: i64,
        content_digest: &str,
        policy_digest: &str,
        now: &str,
        result_digest: &str,
        result: &str,
    ) -> String {
        let s = |v: &str| Value::from(v).to_string();
        format!(
            "{{\"estate\":{},\"version\":{version},\"content_digest\":{},\"policy_digest\":{},\"now\":{},\"result_digest\":{},\"result\":{result}}}",
            s(estate),
            s(content_digest),
            s(policy_digest),
            s(now),
            s(result_digest),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn roles_are_ordered_and_read_back() {
        assert!(Role::Viewer < Role::Operator && Role::Operator < Role::Admin);
        for r in Role::ALL {
            assert_eq!(Role::parse(r.as_str()), Some(r));
            assert_eq!(serde_json::to_string(&r).unwrap(), format!("\"{r}\""));
        }
        assert!(Role::Operator.may_operate() && !Role::Viewer.may_operate());
        assert!(!Role::Agent.may_operate());
    }

    #[test]
    fn an_envelope_reads_back_with_the_result_bytes_untouched() {
        let result = r#"{"b":1,"a":[1.50,"x"]}"#;
        let text = ResultEnvelope::write(
            "sample",
            3,
            "c\"d",
            "p",
            "2026-11-30T04:05:00Z",
            "ff",
            result,
        );
        let e: ResultEnvelope = serde_json::from_str(&text).unwrap();
        assert_eq!(
            (e.estate.as_str(), e.version, e.content_digest.as_str()),
            ("sample", 3, "c\"d")
        );
        assert_eq!(
            e.result.get(),
            result,
            "bytes, member order and number forms kept"
        );
    }

    #[test]
    fn error_bodies_give_their_input_errors() {
        let text = r#"{"error":"invalid","message":"2 errors","details":{"errors":[{"path":"/a","line":3,"message":"x"},{"path":"","line":null,"message":"y","file":"f.yaml","document":2,"object":"Deployment s/c"}]}}"#;
        let e = ErrorBody::parse(text).unwrap();
        let items = e.input_errors();
        assert_eq!(items.len(), 2);
        assert_eq!(items[0].line_for_people(), "line 3: /a: x");
        assert_eq!(
            items[1].line_for_people(),
            "f.yaml: 2: Deployment s/c: /: y"
        );
        assert!(ErrorBody::parse("<html>bad gateway</html>").is_none());
        let other =
            ErrorBody::parse(r#"{"error":"new_code","message":"m","details":null}"#).unwrap();
        assert_eq!(other.error, "new_code");
    }
}
