//! The types of Berth's HTTP API: what the server writes and what its
//! clients (the web app, the CLI's remote commands, the agent) read.
//!
//! One definition per shape, so a field renamed on one side fails to
//! compile on the other, and the published schemas in
//! `docs/api.openapi.json` are derived from these types (feature
//! `schema`; `server/src/http/openapi.rs` writes the spec).
//!
//! Engine results are not retyped here: they travel inside a
//! [`ResultEnvelope`] as the engine's exact bytes (a
//! [`serde_json::value::RawValue`]), since
//! "same input, same bytes" holds from the engine to every client.

#[cfg(feature = "schema")]
use schemars::JsonSchema;

mod admin;
mod deciders;
pub mod endpoint;
mod error;
mod estates;
mod facts;
mod imports;
mod ops;
mod reviews;
mod session;

pub use admin::{
    ChannelKind, CreatedToken, CreatedUser, NewNotificationChannel, NewToken, NewUser,
    NotificationChannel, NotificationChannelAnswer, NotificationChannelList,
    NotificationChannelSettings, NotificationChannelWithSecret, NotificationDelivery,
    NotificationDeliveryList, TokenInfo, TokenList, User, UserList, TOKEN_NOTE,
};
pub use deciders::{
    CompareRequest, Decider, DeciderAnswer, DeciderList, DeciderSettings, DeciderWithSecret,
    NewDecider, ScenarioList, ScenarioMeta, SecretRotation,
};
pub use error::{ErrorBody, ErrorCode, InputError};
pub use estates::{
    AdviceProof, Counts, EstateList, EstateMeta, EstateSnapshot, EstateSummary, ResultEnvelope,
};
pub use facts::{
    ClusterRecord, FactBatch, FactUpdate, KubernetesImportRequest, ManifestFile, ObservationBatch,
    ProbeRecord,
};
pub use imports::{
    ChangedService, FlowRef, ImportAnswer, ImportError, ImportNote, ImportNoteCode, ImportReport,
    ImportServiceSummary, ObservationAnswer, ProbePeer,
};
pub use ops::{
    AgentHealth, DriverBackoff, DriverHealth, DriverPass, EstateChange, EstateHealth,
    FactKindHealth, ProbeHealth, Ready, TrafficHealth,
};
pub use reviews::{
    AuditEntry, AuditList, ClearReview, NewReview, NewReviewCondition, Review, ReviewAnswer,
    ReviewBasis, ReviewBasisFact, ReviewCondition, ReviewDecision, ReviewList, ReviewStanding,
    ReviewState, Side,
};
pub use session::{Caller, Role, Session};

/// For the schema only: a member that is always sent, `null` when there
/// is nothing (`Option<T>` alone would be derived as "may be absent").
#[cfg(feature = "schema")]
pub struct Nullable<T>(pub Option<T>);

/// For the schema only: an RFC 3339 time (the published `Timestamp`).
#[cfg(feature = "schema")]
pub struct Timestamp;

#[cfg(feature = "schema")]
impl JsonSchema for Timestamp {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "Timestamp".into()
    }

    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({
            "description": "RFC 3339, UTC, whole seconds.",
            "type": "string",
            "format": "date-time",
            "examples": ["2026-11-30T04:05:00Z"]
        })
    }
}

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

/// Every schema the published spec derives from these types, into
/// `generator`'s definitions (`server/src/http/openapi.rs`).
#[cfg(feature = "schema")]
pub fn register_schemas(generator: &mut schemars::SchemaGenerator) {
    error::schemas(generator);
    session::schemas(generator);
    estates::schemas(generator);
    facts::schemas(generator);
    imports::schemas(generator);
    admin::schemas(generator);
    deciders::schemas(generator);
    reviews::schemas(generator);
    ops::schemas(generator);
    let _ = generator.subschema_for::<Timestamp>();
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
    fn a_snapshot_reads_back_with_the_stored_texts_untouched() {
        let (policy, document) = (r#"{"z":1.0e3}"#, r#"{"schema":1,"name":"a\u00e9"}"#);
        let text = EstateSnapshot::write(
            "sample",
            2,
            "cd",
            "pd",
            "2026-11-30T04:05:00Z",
            policy,
            document,
        );
        let s: EstateSnapshot = serde_json::from_str(&text).unwrap();
        assert_eq!((s.estate.as_str(), s.version), ("sample", 2));
        assert_eq!(s.server_now, "2026-11-30T04:05:00Z");
        assert_eq!(s.policy.get(), policy);
        assert_eq!(s.document.get(), document, "escapes and number forms kept");
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
