//! What is sent to change an estate piece by piece: fact updates (`POST
//! /api/estates/{id}/facts`), agents' observation batches (`POST
//! /api/estates/{id}/observations`) and Kubernetes manifests merged into
//! one cluster (`POST /api/estates/{id}/import/kubernetes`). Their
//! answers are in `imports.rs`.
//!
//! The server reads these with `deny_unknown_fields`, so serde's message
//! for an unknown member lists the members in the order declared here:
//! that order is part of the API's error messages and is kept. Members
//! are sent in the same order.
//!
//! Kinds and classes travel as text: the server reads any text there and
//! says itself what it expects (its messages are part of the API), while
//! the schemas name the values.

use serde::{Deserialize, Deserializer, Serialize};

#[cfg(feature = "schema")]
use crate::Nullable;
#[cfg(feature = "schema")]
use schemars::JsonSchema;

/// For serde's `skip_serializing_if`: never skips, so the member is always
/// sent, yet the schema (derived for what is sent) says it may be absent,
/// as the server reads it (with its default).
fn never<T>(_: &T) -> bool {
    false
}

/// `Some(v)` when the member is there (`v` may be `None`: `null`), `None`
/// when it is absent.
fn present<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Option<f64>>, D::Error> {
    Option::<f64>::deserialize(d).map(Some)
}

/// For the schema of a member serde defaults only to report its absence
/// itself: it has no default a sender may rely on.
#[cfg(feature = "schema")]
fn no_default(schema: &mut schemars::Schema) {
    schema.remove("default");
}

/// One fact. Which ids it needs depends on `fact`, and ids it does not
/// use are refused:
/// - `cpu_free`, `memory_free_gib`: `cluster`; the value may not
///   exceed the cluster's `cpu_total` / `memory_total_gib`;
/// - `rtt_ms`: `a` and `b`, two different sites (a link) or two
///   different clusters (a path);
/// - `flow_weight`, `flow_mb_s`: `from` and `to`, two different
///   services (the flow is added if the estate does not have it);
///   with `from_cluster` (`to_cluster`), `from` (`to`) is a workload
///   name in that cluster, resolved to the estate's service of it:
///   the one a Kubernetes import of that cluster made from that
///   workload, else the service of that id in that cluster, else
///   `CLUSTER/NAME` there (an agent, which may not read the estate,
///   names a replica this way);
/// - `traffic`: `service`, whose traffic was observed (it appears in a
///   mesh's series, or among its scrape targets); the value is the
///   window, in seconds (> 0), over which it was observed, or `null`
///   for never observed (`docs/advice.md` §2, Traffic coverage). With
///   `cluster`, `service` is a workload name in that cluster (an estate
///   cluster's id or `mesh_cluster`), resolved as `from_cluster` is.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct FactUpdate {
    /// What is updated: `cpu_free`, `memory_free_gib`, `rtt_ms`,
    /// `flow_weight`, `flow_mb_s` or `traffic`.
    #[cfg_attr(
        feature = "schema",
        schemars(extend("enum" = ["cpu_free", "memory_free_gib", "rtt_ms", "flow_weight", "flow_mb_s", "traffic"]))
    )]
    pub fact: String,
    /// `traffic`: the service whose traffic was observed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "schema", schemars(with = "String"))]
    pub service: Option<String>,
    /// `cpu_free`, `memory_free_gib`: the cluster; `traffic`: the
    /// cluster `service` is a workload name in (optional).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "schema", schemars(with = "String"))]
    pub cluster: Option<String>,
    /// `rtt_ms`: one end, a site (a link) or a cluster (a path).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "schema", schemars(with = "String"))]
    pub a: Option<String>,
    /// `rtt_ms`: the other end, of the same kind as `a`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "schema", schemars(with = "String"))]
    pub b: Option<String>,
    /// `flow_*`: the calling service.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "schema", schemars(with = "String"))]
    pub from: Option<String>,
    /// `flow_*`: the called service.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "schema", schemars(with = "String"))]
    pub to: Option<String>,
    /// `flow_*` from a sender that may not read the estate (an agent):
    /// `from` is then a workload name in this cluster, resolved to the
    /// estate's service of it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "schema", schemars(with = "String"))]
    pub from_cluster: Option<String>,
    /// As `from_cluster`, for `to`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "schema", schemars(with = "String"))]
    pub to_cluster: Option<String>,
    /// The new value, 0 to 1e12; `null` makes the fact unknown, and an
    /// unknown fact is stored as `guessed` whatever `class` says.
    /// Required (a forgotten member must not silently erase what was
    /// known): absent is refused (`422` at `.../value`). Always sent,
    /// `null` when unknown.
    #[serde(default, deserialize_with = "present")]
    #[cfg_attr(
        feature = "schema",
        schemars(
            with = "Nullable<f64>",
            range(min = 0, max = 1_000_000_000_000i64),
            transform = no_default
        )
    )]
    pub value: Option<Option<f64>>,
    /// The confidence class (`docs/advice.md` §2). Required in a fact
    /// batch; defaults to `measured` in an observation batch.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(
        feature = "schema",
        schemars(with = "String", extend("enum" = ["measured", "reported", "inferred", "guessed"]))
    )]
    pub class: Option<String>,
    /// Where the figure came from. Default `api`. In an observation batch
    /// it is ignored and the sender recorded instead.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "schema", schemars(with = "String"))]
    pub source: Option<String>,
    /// When it was observed, RFC 3339, at most 5 minutes (300 s) ahead of
    /// the server's clock. Default the time the server received the
    /// batch; required in an observation batch (a fact must be able to
    /// age).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(
        feature = "schema",
        schemars(with = "String", extend("format" = "date-time"))
    )]
    pub observed_at: Option<String>,
}

/// `POST /api/estates/{id}/facts`'s body: updates checked whole and
/// applied in order, all or nothing.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct FactBatch {
    /// 1 to 50,000 updates, checked whole and applied in order.
    #[cfg_attr(feature = "schema", schemars(length(min = 1, max = 50000)))]
    pub updates: Vec<FactUpdate>,
}

/// `POST /api/estates/{id}/observations`'s body: an agent's batch of
/// measured facts, applied whole or not at all, once per `batch_id` and
/// sender.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct ObservationBatch {
    /// The sender's idempotency key, 1–128 characters, no control
    /// characters; unique per estate and sending token (or user), so
    /// another token's ids never collide with it.
    #[cfg_attr(feature = "schema", schemars(length(min = 1, max = 128)))]
    pub batch_id: String,
    /// Up to 50,000 items, as `FactUpdate` but with `observed_at` required
    /// and `class` defaulting to `measured`; `source` is ignored (the
    /// sender is recorded). May be empty only in a batch with a `probe`
    /// and no `cluster`, which registers the probe and applies nothing (no
    /// new version).
    #[cfg_attr(feature = "schema", schemars(length(max = 50000)))]
    pub observations: Vec<FactUpdate>,
    /// The cluster the agent reports for, created when the estate has no
    /// cluster of this id (tokens with `may_create_clusters`, operators
    /// and administrators; see the operation); ignored when it has: from
    /// then on the estate owns its record.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "schema", schemars(with = "ClusterRecord"))]
    pub cluster: Option<ClusterRecord>,
    /// Where this agent answers round-trip probes (a TCP port that
    /// accepts and closes): recorded for its cluster, and the answer
    /// lists the other clusters' (`peers`), which the agent probes and
    /// reports as `rtt_ms` path facts.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "schema", schemars(with = "ProbeRecord"))]
    pub probe: Option<ProbeRecord>,
}

/// An agent's probe address: an IP address and port its peers connect to
/// (no host name: peers would resolve it in their own cluster's DNS).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct ProbeRecord {
    /// A cluster of the estate (or the one the batch's `cluster` creates).
    pub cluster: String,
    /// IP:PORT its peers connect to; not a host name, not 0.0.0.0, not
    /// port 0.
    pub address: String,
}

/// A cluster as an agent describes it (its flags): the estate file's
/// cluster fields, less the facts the observations carry.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct ClusterRecord {
    /// The cluster's id in the estate.
    pub id: String,
    /// A name for people.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "schema", schemars(with = "String"))]
    pub name: Option<String>,
    /// A site the estate has.
    pub site: String,
    /// Its tier, e.g. prod, staging, edge.
    pub tier: String,
    /// The trust zone; default `general`, the estate format's ordinary
    /// zone (a PCI or other zone must be said).
    #[serde(default = "general", skip_serializing_if = "never")]
    pub trust_zone: String,
    /// Default `healthy`: a cluster that reports is taken to be up; an
    /// operator marks it `watch`/`draining` in the estate.
    #[serde(default = "healthy", skip_serializing_if = "never")]
    #[cfg_attr(
        feature = "schema",
        schemars(extend("enum" = ["healthy", "watch", "draining", "down"]))
    )]
    pub health: String,
    /// Cores.
    #[cfg_attr(feature = "schema", schemars(range(min = 0)))]
    pub cpu_total: f64,
    /// GiB of memory.
    #[cfg_attr(feature = "schema", schemars(range(min = 0)))]
    pub memory_total_gib: f64,
}

impl ClusterRecord {
    /// A record with what the server would default: no name, trust zone
    /// `general`, health `healthy`.
    pub fn new(
        id: &str,
        site: &str,
        tier: &str,
        cpu_total: f64,
        memory_total_gib: f64,
    ) -> ClusterRecord {
        ClusterRecord {
            id: id.to_string(),
            name: None,
            site: site.to_string(),
            tier: tier.to_string(),
            trust_zone: general(),
            health: healthy(),
            cpu_total,
            memory_total_gib,
        }
    }
}

fn general() -> String {
    "general".into()
}

fn healthy() -> String {
    "healthy".into()
}

/// `POST /api/estates/{id}/import/kubernetes`'s body: the manifests of
/// one cluster of the estate.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct KubernetesImportRequest {
    /// The estate cluster the manifests describe.
    pub cluster: String,
    /// Manifest files, each with the name errors are reported under; at
    /// least one (`400` otherwise).
    #[cfg_attr(feature = "schema", schemars(length(min = 1)))]
    pub files: Vec<ManifestFile>,
    /// Leave out objects that cannot be understood (reported as skipped)
    /// instead of refusing the import.
    #[serde(default, skip_serializing_if = "never")]
    pub skip_invalid: bool,
    /// Report what would change and write nothing.
    #[serde(default, skip_serializing_if = "never")]
    pub dry_run: bool,
    /// The files are not everything there is (the sender could not read
    /// some kinds, e.g. a Kubernetes API that refused to list them);
    /// nothing is removed for its absence, as for a file that could not
    /// be read.
    #[serde(default, skip_serializing_if = "never")]
    pub incomplete: bool,
}

/// One manifest file of a Kubernetes import.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct ManifestFile {
    /// The name errors are reported under.
    pub name: String,
    /// YAML (one or several documents) or JSON.
    pub text: String,
}

impl ManifestFile {
    /// The files of a request from (name, text) pairs, in their order.
    pub fn all(files: &[(String, String)]) -> Vec<ManifestFile> {
        files
            .iter()
            .map(|(name, text)| ManifestFile {
                name: name.clone(),
                text: text.clone(),
            })
            .collect()
    }
}

/// Register this module's published schemas (`server/src/http/openapi.rs`).
#[cfg(feature = "schema")]
pub(crate) fn schemas(generator: &mut schemars::SchemaGenerator) {
    let _ = generator.subschema_for::<FactBatch>();
    let _ = generator.subschema_for::<ObservationBatch>();
    let _ = generator.subschema_for::<KubernetesImportRequest>();
}

#[cfg(test)]
mod tests {
    use super::*;

    fn update(text: &str) -> Result<FactUpdate, String> {
        serde_json::from_str(text).map_err(|e| e.to_string())
    }

    #[test]
    fn a_value_is_required_and_may_be_null() {
        let absent = update(r#"{"fact":"cpu_free","cluster":"c"}"#).unwrap();
        assert_eq!(absent.value, None);
        let null = update(r#"{"fact":"cpu_free","cluster":"c","value":null}"#).unwrap();
        assert_eq!(null.value, Some(None));
        let six = update(r#"{"fact":"cpu_free","cluster":"c","value":6}"#).unwrap();
        assert_eq!(six.value, Some(Some(6.0)));
        // Written back, the value is always there: `null` when unknown.
        for u in [&absent, &null] {
            assert_eq!(
                serde_json::to_string(u).unwrap(),
                r#"{"fact":"cpu_free","cluster":"c","value":null}"#
            );
        }
        assert_eq!(
            serde_json::to_string(&six).unwrap(),
            r#"{"fact":"cpu_free","cluster":"c","value":6.0}"#
        );
    }

    #[test]
    fn unknown_members_are_refused_naming_the_members_in_order() {
        let e = update(r#"{"fact":"cpu_free","value":1,"clustr":"c"}"#).unwrap_err();
        assert!(
            e.contains("unknown field `clustr`, expected one of `fact`, `service`, `cluster`, `a`, `b`, `from`, `to`, `from_cluster`, `to_cluster`, `value`, `class`, `source`, `observed_at`"),
            "{e}"
        );
        let e =
            serde_json::from_str::<ObservationBatch>(r#"{"batch_id":"b","observations":[],"x":1}"#)
                .unwrap_err()
                .to_string();
        assert!(
            e.contains("expected one of `batch_id`, `observations`, `cluster`, `probe`"),
            "{e}"
        );
    }

    #[test]
    fn a_cluster_record_takes_its_defaults() {
        let r: ClusterRecord = serde_json::from_str(
            r#"{"id":"c1","site":"fra","tier":"prod","cpu_total":8,"memory_total_gib":32}"#,
        )
        .unwrap();
        assert_eq!(
            (r.trust_zone.as_str(), r.health.as_str()),
            ("general", "healthy")
        );
        assert_eq!(r, ClusterRecord::new("c1", "fra", "prod", 8.0, 32.0));
        assert_eq!(
            serde_json::to_string(&r).unwrap(),
            r#"{"id":"c1","site":"fra","tier":"prod","trust_zone":"general","health":"healthy","cpu_total":8.0,"memory_total_gib":32.0}"#
        );
    }

    #[test]
    fn requests_read_back_what_they_write() {
        let batch = ObservationBatch {
            batch_id: "agent-1".into(),
            observations: vec![FactUpdate {
                fact: "flow_weight".into(),
                from: Some("a".into()),
                to: Some("b".into()),
                from_cluster: Some("c1".into()),
                value: Some(Some(1.5)),
                observed_at: Some("2026-11-30T04:05:00Z".into()),
                ..FactUpdate::default()
            }],
            cluster: None,
            probe: Some(ProbeRecord {
                cluster: "c1".into(),
                address: "10.1.2.3:7946".into(),
            }),
        };
        let text = serde_json::to_string(&batch).unwrap();
        assert_eq!(
            serde_json::from_str::<ObservationBatch>(&text).unwrap(),
            batch
        );
        let import = KubernetesImportRequest {
            cluster: "c1".into(),
            files: vec![ManifestFile {
                name: "a.yaml".into(),
                text: "kind: X".into(),
            }],
            skip_invalid: true,
            dry_run: false,
            incomplete: false,
        };
        let text = serde_json::to_string(&import).unwrap();
        assert_eq!(
            text,
            r#"{"cluster":"c1","files":[{"name":"a.yaml","text":"kind: X"}],"skip_invalid":true,"dry_run":false,"incomplete":false}"#
        );
        assert_eq!(
            serde_json::from_str::<KubernetesImportRequest>(r#"{"cluster":"c1","files":[]}"#)
                .unwrap(),
            KubernetesImportRequest {
                files: vec![],
                skip_invalid: false,
                ..import
            }
        );
    }
}
