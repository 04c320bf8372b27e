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

/// `GET /api/estates/{id}/snapshot`: everything the engine in a browser
/// needs, with the document and the policy as the exact stored bytes (the
/// browser loads them with the same engine and must reach the same
/// digests, so they are never parsed and written again on the way).
#[derive(Debug, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
#[cfg_attr(feature = "schema", schemars(rename = "Snapshot"))]
pub struct EstateSnapshot {
    /// The estate id.
    pub estate: String,
    #[cfg_attr(feature = "schema", schemars(range(min = 1)))]
    pub version: i64,
    pub content_digest: String,
    pub policy_digest: String,
    /// The server's clock when it answered, for the browser to evaluate at.
    #[cfg_attr(feature = "schema", schemars(with = "Timestamp"))]
    pub server_now: String,
    /// The full policy as stored.
    #[cfg_attr(feature = "schema", schemars(with = "PolicyDocument"))]
    pub policy: Box<RawValue>,
    /// The estate file as stored (canonical JSON).
    #[cfg_attr(feature = "schema", schemars(with = "EstateDocument"))]
    pub document: Box<RawValue>,
}

impl EstateSnapshot {
    /// The snapshot's bytes around the stored `policy` and `document`
    /// texts, member for member what deserialising reads back; written by
    /// hand so a large document is copied once, never parsed.
    pub fn write(
        estate: &str,
        version: i64,
        content_digest: &str,
        policy_digest: &str,
        server_now: &str,
        policy: &str,
        document: &str,
    ) -> String {
        let s = |v: &str| Value::from(v).to_string();
        format!(
            "{{\"estate\":{},\"version\":{version},\"content_digest\":{},\"policy_digest\":{},\"server_now\":{},\"policy\":{policy},\"document\":{document}}}",
            s(estate),
            s(content_digest),
            s(policy_digest),
            s(server_now),
        )
    }
}

/// For the schema only: the policy, as the engine's policy table
/// publishes it (`Policy`).
#[cfg(feature = "schema")]
struct PolicyDocument;

#[cfg(feature = "schema")]
impl JsonSchema for PolicyDocument {
    fn inline_schema() -> bool {
        true
    }

    fn schema_name() -> std::borrow::Cow<'static, str> {
        "PolicyDocument".into()
    }

    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({ "$ref": "#/components/schemas/Policy" })
    }
}

/// For the schema only: an estate file, as `docs/estate.schema.json`
/// describes it.
#[cfg(feature = "schema")]
struct EstateDocument;

#[cfg(feature = "schema")]
impl JsonSchema for EstateDocument {
    fn inline_schema() -> bool {
        true
    }

    fn schema_name() -> std::borrow::Cow<'static, str> {
        "EstateDocument".into()
    }

    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({ "$ref": "./estate.schema.json" })
    }
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
    /// Only beside advice with its Why (`GET …/advice?why=true`), and only
    /// once at least three advised moves of the estate have been judged:
    /// how well its past predictions held, the sentence every Why quotes
    /// (docs/outcomes.md, "Calibration"). Outside `result`, which stays
    /// the engine's exact bytes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub calibration: Option<String>,
    /// Beside `calibration`, always with it: the same steps split by kind
    /// (single, compound) and by the class of the deciding facts their
    /// predictions rested on when they were made — "advised on reported
    /// facts", not the class of what was observed since — one sentence
    /// per part with at least one step ("single moves: 5 judged, median
    /// 90 % (middle half 80–100 %)"; a part of fewer than three lists its
    /// ratios).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub calibration_parts: Option<Vec<String>>,
    /// Only beside advice, once the server has proven the optimum within
    /// the move cap for the estate's current version and policy (the
    /// driver, in the background after each snapshot; docs/advice.md
    /// §6b): how far the advice of that snapshot is from the best
    /// possible. Absent: the result's own `bound` is what is known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub proof: Option<AdviceProof>,
}

/// The optimum within the move cap, proven by the server's solver
/// (HiGHS, `berth-solver`) for one advice snapshot: its inputs' version
/// and time, and the advice's distance from it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct AdviceProof {
    /// The estate version the proof belongs to.
    pub estate_version: i64,
    /// The snapshot's evaluation time.
    #[cfg_attr(feature = "schema", schemars(with = "Timestamp"))]
    pub evaluated_at: String,
    /// When the proof was finished.
    #[cfg_attr(feature = "schema", schemars(with = "Timestamp"))]
    pub computed_at: String,
    /// The move cap the optimum is within (the policy's `max_moves`).
    pub max_moves: i64,
    /// Points: the estate's cost as it stands, the snapshot's advice's
    /// cost after its moves (copy included), and the proven optimum's.
    pub cost_before: f64,
    pub advice_cost: f64,
    pub optimum_cost: f64,
    /// The share of the best possible improvement the advice leaves:
    /// `1 − (cost_before − advice_cost) / (cost_before − optimum_cost)`,
    /// 0 when nothing can be gained. "Within 2.8 % of the best possible"
    /// is 0.028.
    pub missed: f64,
    /// Milliseconds the solver took (model building included).
    pub solve_ms: i64,
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

    /// [`Self::write`]'s bytes (or [`Self::with_calibration`]'s) with
    /// `proof` added as the last member.
    pub fn with_proof(envelope: &str, proof: &AdviceProof) -> String {
        match envelope.strip_suffix('}') {
            Some(head) => format!(
                "{head},\"proof\":{}}}",
                serde_json::to_string(proof).expect("serialises")
            ),
            None => envelope.to_string(),
        }
    }

    /// [`Self::write`]'s bytes with `calibration` and its `parts` added
    /// as the last members (nothing added for `None`).
    pub fn with_calibration(envelope: &str, calibration: Option<&str>, parts: &[String]) -> String {
        match (calibration, envelope.strip_suffix('}')) {
            (Some(c), Some(head)) => format!(
                "{head},\"calibration\":{},\"calibration_parts\":{}}}",
                Value::from(c),
                Value::from(parts.to_vec())
            ),
            _ => envelope.to_string(),
        }
    }
}

/// Register this module's published schemas (`server/src/http/openapi.rs`).
#[cfg(feature = "schema")]
pub(crate) fn schemas(generator: &mut schemars::SchemaGenerator) {
    let _ = generator.subschema_for::<EstateList>();
    let _ = generator.subschema_for::<EstateSummary>();
    let _ = generator.subschema_for::<ResultEnvelope>();
    let _ = generator.subschema_for::<EstateSnapshot>();
}
