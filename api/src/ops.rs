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

/// `GET /api/estates/{id}/health`: what an operator reads to see whether
/// the estate's picture is complete and fresh — its agents and what each
/// sends, recent writes with their notes, its facts by kind (stale and
/// unknown ones counted), round trips missing between sites, and whose
/// traffic has been observed.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema), schemars(deny_unknown_fields))]
pub struct EstateHealth {
    /// The estate's agent tokens (revoked ones included, so a silent
    /// cluster can be told from one whose token was withdrawn), newest
    /// first, each with what it sent.
    pub agents: Vec<AgentHealth>,
    /// The estate's recent writes by people and imports (uploads,
    /// Kubernetes imports and re-syncs, fact updates), newest first, at
    /// most 20. Agents' observation batches are counted under `agents`.
    pub changes: Vec<EstateChange>,
    pub estate: String,
    #[cfg_attr(feature = "schema", schemars(with = "Timestamp"))]
    pub evaluated_at: String,
    /// Every kind of fact, counted at `evaluated_at`.
    pub facts: Vec<FactKindHealth>,
    /// Probe addresses registered by agents, by cluster: where round
    /// trips are measured from.
    pub probes: Vec<ProbeHealth>,
    /// Pairs of distinct sites.
    #[cfg_attr(feature = "schema", schemars(range(min = 0)))]
    pub site_pairs: u64,
    /// Pairs of sites with no round-trip fact: their round trip is a
    /// great-circle estimate (or unknown without coordinates).
    #[cfg_attr(feature = "schema", schemars(range(min = 0)))]
    pub site_pairs_without_rtt: u64,
    pub traffic: TrafficHealth,
    #[cfg_attr(feature = "schema", schemars(range(min = 1)))]
    pub version: i64,
}

/// One agent token and what it has sent to the estate.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema), schemars(deny_unknown_fields))]
pub struct AgentHealth {
    /// Observation batches it sent (every time).
    #[cfg_attr(feature = "schema", schemars(range(min = 0)))]
    pub batches: i64,
    /// The clusters it may write for; `null`: any of the estate's.
    pub clusters: Option<Vec<String>>,
    #[cfg_attr(feature = "schema", schemars(with = "Timestamp"))]
    pub created_at: String,
    /// Its newest observation batch, probe registration or re-sync;
    /// `null`: never heard from.
    #[cfg_attr(feature = "schema", schemars(with = "Nullable<Timestamp>"))]
    pub last_seen_at: Option<String>,
    /// Seconds since `last_seen_at` at the evaluation time.
    pub last_seen_age_s: Option<i64>,
    /// The token's name.
    pub name: String,
    /// Observations applied from its batches (every time).
    #[cfg_attr(feature = "schema", schemars(range(min = 0)))]
    pub observations: i64,
    /// Kubernetes re-syncs of its cluster's services that changed the
    /// estate (`berth agent --kubernetes`).
    #[cfg_attr(feature = "schema", schemars(range(min = 0)))]
    pub resyncs: i64,
    #[cfg_attr(feature = "schema", schemars(with = "Nullable<Timestamp>"))]
    pub revoked_at: Option<String>,
    /// What it sends, in words: "observations", "probe address",
    /// "service re-syncs".
    pub sends: Vec<String>,
    /// The token's id.
    pub token: String,
}

/// A write to the estate from the audit trail.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema), schemars(deny_unknown_fields))]
pub struct EstateChange {
    /// `estate.uploaded`, `estate.imported` (Kubernetes manifests or an
    /// agent's re-sync) or `facts.updated`.
    pub action: String,
    /// Who: a user name or `token:ID`.
    pub actor: String,
    #[cfg_attr(feature = "schema", schemars(with = "Timestamp"))]
    pub at: String,
    /// An import's notes (what it could not read, what it assumed).
    pub notes: Vec<String>,
    /// What it changed, in words.
    pub summary: String,
    /// The estate version it wrote.
    pub version: Option<i64>,
}

/// One kind of fact, counted at the evaluation time.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema), schemars(deny_unknown_fields))]
pub struct FactKindHealth {
    #[cfg_attr(feature = "schema", schemars(range(min = 0)))]
    pub guessed: u64,
    #[cfg_attr(feature = "schema", schemars(range(min = 0)))]
    pub inferred: u64,
    /// "free CPU", "free memory", "round trip between sites", "round trip
    /// between clusters", "flow requests", "flow MB/s".
    pub kind: String,
    #[cfg_attr(feature = "schema", schemars(range(min = 0)))]
    pub measured: u64,
    /// The oldest fact's age, seconds; `null` when none has a time.
    pub oldest_age_s: Option<i64>,
    #[cfg_attr(feature = "schema", schemars(range(min = 0)))]
    pub reported: u64,
    /// With a value but past their class's staleness window (counted at
    /// the class they aged to).
    #[cfg_attr(feature = "schema", schemars(range(min = 0)))]
    pub stale: u64,
    #[cfg_attr(feature = "schema", schemars(range(min = 0)))]
    pub total: u64,
    /// Without a value: not zero, not known.
    #[cfg_attr(feature = "schema", schemars(range(min = 0)))]
    pub unknown: u64,
}

/// An agent's probe address.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema), schemars(deny_unknown_fields))]
pub struct ProbeHealth {
    pub address: String,
    pub cluster: String,
    /// Who registered it (`token:ID`).
    pub submitter: String,
    #[cfg_attr(feature = "schema", schemars(with = "Timestamp"))]
    pub updated_at: String,
}

/// Whose traffic is known.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema), schemars(deny_unknown_fields))]
pub struct TrafficHealth {
    /// Services whose flows the file declares complete.
    #[cfg_attr(feature = "schema", schemars(range(min = 0)))]
    pub declared: u64,
    /// Services whose traffic a mesh import or an agent observed.
    #[cfg_attr(feature = "schema", schemars(range(min = 0)))]
    pub observed: u64,
    #[cfg_attr(feature = "schema", schemars(range(min = 0)))]
    pub services: u64,
    /// Observed, but longer ago than the class's window.
    #[cfg_attr(feature = "schema", schemars(range(min = 0)))]
    pub stale: u64,
    /// Services whose traffic nothing has observed: no flow of theirs
    /// counts as zero.
    #[cfg_attr(feature = "schema", schemars(range(min = 0)))]
    pub unknown: u64,
}

#[cfg(feature = "schema")]
pub(crate) fn schemas(generator: &mut schemars::SchemaGenerator) {
    let _ = generator.subschema_for::<Ready>();
    let _ = generator.subschema_for::<DriverHealth>();
    let _ = generator.subschema_for::<EstateHealth>();
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
