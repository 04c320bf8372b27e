//! What the server says about itself: readiness and the advice driver's
//! health (the Health page).
//!
//! Members are declared, and so sent, in alphabetical order: these
//! answers were first written through `serde_json::Value`, whose objects
//! sort their members, and their bytes are kept (a test below holds the
//! types here to it). A new member goes in at its alphabetical place.

use serde::{Deserialize, Serialize};

#[cfg(feature = "schema")]
use crate::{Nullable, Timestamp};
#[cfg(feature = "schema")]
use schemars::JsonSchema;

/// `GET /readyz` when the database answers and is migrated.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema), schemars(deny_unknown_fields))]
pub struct Ready {
    /// The database backend this process uses.
    #[cfg_attr(
        feature = "schema",
        schemars(extend("enum" = ["sqlite", "postgres"]))
    )]
    pub database: String,
    #[cfg_attr(feature = "schema", schemars(extend("const" = "ready")))]
    pub status: String,
}

/// `GET /api/driver`: the background advice driver's health.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema), schemars(deny_unknown_fields))]
pub struct DriverHealth {
    /// How many subjects are stale now (`estate:ID` and
    /// `decider:NAME@ID`), held back ones included.
    pub backlog: u64,
    /// Every subject holding a backoff, by subject.
    pub backoffs: Vec<DriverBackoff>,
    /// Whether this server process runs passes (`false` with
    /// `--no-driver`; another replica may still run them).
    pub enabled: bool,
    /// Seconds between this process's passes (`--driver-every-s`); `0`
    /// when it runs none.
    pub every_s: u64,
    /// The newest pass by any replica; `null` until the first pass ever.
    pub last_pass: Option<DriverPass>,
    /// When the newest pass by any replica ended; `null` until the first
    /// pass ever (a pass that found nothing to do counts).
    #[cfg_attr(feature = "schema", schemars(with = "Nullable<Timestamp>"))]
    pub last_pass_at: Option<String>,
    /// How long the oldest stale subject has been pending, seconds; `null`
    /// when the backlog is empty.
    #[cfg_attr(feature = "schema", schemars(range(min = 0)))]
    pub oldest_pending_age_s: Option<i64>,
}

/// What one pass did.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema), schemars(deny_unknown_fields))]
pub struct DriverPass {
    /// Stale subjects when the pass began.
    #[cfg_attr(feature = "schema", schemars(range(min = 0)))]
    pub backlog: i64,
    /// Decider runs that answered `429` or `503`.
    #[cfg_attr(feature = "schema", schemars(range(min = 0)))]
    pub deferred: i64,
    #[cfg_attr(feature = "schema", schemars(range(min = 0)))]
    pub duration_ms: i64,
    /// Subjects brought up to date (an advice snapshot made, or a decider
    /// run with outcome `ok`).
    #[cfg_attr(feature = "schema", schemars(range(min = 0)))]
    pub evaluated: i64,
    /// Subjects that failed (a decider error, or the estate could not be
    /// loaded).
    #[cfg_attr(feature = "schema", schemars(range(min = 0)))]
    pub failed: i64,
    /// Subjects skipped because their backoff had not ended.
    #[cfg_attr(feature = "schema", schemars(range(min = 0)))]
    pub held_back: i64,
    /// The server process that ran it (`pid-<pid>-<random hex>`).
    pub replica: String,
}

/// A subject the driver leaves alone until `until`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema), schemars(deny_unknown_fields))]
pub struct DriverBackoff {
    /// Consecutive misses; the delay doubles with each.
    #[cfg_attr(feature = "schema", schemars(range(min = 1)))]
    pub attempts: i64,
    /// How its last attempt ended.
    #[cfg_attr(feature = "schema", schemars(extend("enum" = ["deferred", "failed"])))]
    pub kind: String,
    /// The last error's message (at most 500 characters).
    pub last_error: String,
    /// `estate:ID` or `decider:NAME@ID`.
    pub subject: String,
    #[cfg_attr(feature = "schema", schemars(with = "Timestamp"))]
    pub until: String,
}

#[cfg(feature = "schema")]
pub(crate) fn schemas(generator: &mut schemars::SchemaGenerator) {
    let _ = generator.subschema_for::<Ready>();
    let _ = generator.subschema_for::<DriverHealth>();
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn answers_write_their_members_in_alphabetical_order() {
        let h = DriverHealth {
            backlog: 2,
            backoffs: vec![DriverBackoff {
                attempts: 3,
                kind: "failed".into(),
                last_error: "connection refused".into(),
                subject: "decider:ls@sample".into(),
                until: "2026-11-30T04:05:00Z".into(),
            }],
            enabled: true,
            every_s: 60,
            last_pass: Some(DriverPass {
                backlog: 2,
                deferred: 0,
                duration_ms: 12,
                evaluated: 1,
                failed: 1,
                held_back: 0,
                replica: "pid-1-ab".into(),
            }),
            last_pass_at: Some("2026-11-30T04:05:00Z".into()),
            oldest_pending_age_s: Some(30),
        };
        let ready = Ready {
            database: "sqlite".into(),
            status: "ready".into(),
        };
        for typed in [
            serde_json::to_value(&h).unwrap(),
            serde_json::to_value(&ready).unwrap(),
        ] {
            let bytes = serde_json::to_string(&typed).unwrap();
            let again: serde_json::Value = serde_json::from_str(&bytes).unwrap();
            assert_eq!(bytes, serde_json::to_string(&again).unwrap());
        }
        assert_eq!(
            serde_json::to_string(&ready).unwrap(),
            r#"{"database":"sqlite","status":"ready"}"#
        );
        let text = serde_json::to_string(&h).unwrap();
        assert!(
            text.starts_with(r#"{"backlog":2,"backoffs":[{"attempts":3,"#),
            "{text}"
        );
        assert_eq!(serde_json::from_str::<DriverHealth>(&text).unwrap(), h);
    }
}
