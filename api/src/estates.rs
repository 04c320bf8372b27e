//! Estates as the server lists them, and the envelope every engine result
//! travels in.

use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;
use serde_json::Value;

#[cfg(feature = "schema")]
use crate::{Nullable, Timestamp};
#[cfg(feature = "schema")]
use schemars::JsonSchema;

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
    /// Starts at 1; bumped by every change of the estate document
    /// (import, fact update), not by a policy change.
    #[cfg_attr(feature = "schema", schemars(range(min = 1)))]
    pub version: i64,
    /// Digest of the estate's canonical content (the engine's
    /// `estate_version`).
    pub content_digest: String,
    /// SHA-256 of the full policy, first 16 hex digits.
    pub policy_digest: String,
    #[cfg_attr(feature = "schema", schemars(with = "Timestamp"))]
    pub created_at: String,
    /// Last change of the document or the policy.
    #[cfg_attr(feature = "schema", schemars(with = "Timestamp"))]
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
    /// The newest observation time of any fact with a value (RFC 3339),
    /// or `null` when no fact has one.
    #[cfg_attr(feature = "schema", schemars(with = "Nullable<Timestamp>"))]
    pub newest_observation: Option<String>,
    /// Only on `GET /api/estates/{id}`: the time from which even the
    /// newest fact is past the policy's measured and reported windows
    /// (newest_observation + staleness.measured_s + staleness.reported_s),
    /// so every fact is inferred or guessed. The pages show a banner from
    /// then on.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "schema", schemars(with = "Option<Nullable<Timestamp>>"))]
    pub stale_since: Option<Option<String>>,
    pub counts: Counts,
}

/// What every engine result is wrapped in: what it was computed from, and
/// the result, as the engine's exact bytes. See "Engine results and the
/// cache".
#[derive(Debug, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
pub struct ResultEnvelope {
    /// The estate id.
    pub estate: String,
    /// The estate version the result was computed from.
    #[cfg_attr(feature = "schema", schemars(range(min = 1)))]
    pub version: i64,
    /// Digest of the estate's canonical content (the result's own
    /// `estate_version`).
    pub content_digest: String,
    pub policy_digest: String,
    /// The evaluation time.
    #[cfg_attr(feature = "schema", schemars(with = "Timestamp"))]
    pub now: String,
    /// Hex SHA-256 of the exact bytes of `result` as sent (compact JSON),
    /// so a client running the same engine can check that its own result
    /// is identical.
    #[cfg_attr(feature = "schema", schemars(regex(pattern = "^[0-9a-f]{64}$")))]
    pub result_digest: String,
    /// The engine's result; its schema depends on the operation.
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

/// Register this module's published schemas (`server/src/http/openapi.rs`).
#[cfg(feature = "schema")]
pub(crate) fn schemas(generator: &mut schemars::SchemaGenerator) {
    let _ = generator.subschema_for::<EstateList>();
    let _ = generator.subschema_for::<EstateSummary>();
    let _ = generator.subschema_for::<ResultEnvelope>();
}
