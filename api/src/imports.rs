//! What changing an estate from outside answers: the Kubernetes import
//! (`POST /api/estates/{id}/import/kubernetes`) with the report of its
//! merge, and a batch of agents' observations (`POST
//! /api/estates/{id}/observations`).
//!
//! Members are declared, and so sent, in alphabetical order: these
//! answers were first written through `serde_json::Value`, whose objects
//! sort their members, and their bytes are kept (a test below holds every
//! type here to it). A new member goes in at its alphabetical place.

use std::collections::BTreeMap;
use std::fmt;

use serde::{Deserialize, Deserializer, Serialize};

#[cfg(feature = "schema")]
use crate::Nullable;
#[cfg(feature = "schema")]
use schemars::JsonSchema;

/// `POST /api/estates/{id}/import/kubernetes`: what the import did, and
/// whether it was written.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema), schemars(deny_unknown_fields))]
pub struct ImportAnswer {
    /// The estate id.
    pub estate: String,
    /// What the merge did (docs/kubernetes-import.md).
    pub report: ImportReport,
    /// The estate version after the import: the new one when it was
    /// written, else the one it was checked against.
    pub version: i64,
    /// True when the import was stored as a new version; false for a dry
    /// run and for an import that changes nothing.
    pub written: bool,
}

/// What merging an import into one cluster of an estate did: services
/// added, changed, removed and left alone, flows, notes, and what was
/// skipped or not imported.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
pub struct ImportReport {
    /// The ids of the services this import added, in id order.
    pub added: Vec<String>,
    /// Services an earlier import of this cluster wrote whose imported
    /// fields changed, in id order.
    pub changed: Vec<ChangedService>,
    /// The estate cluster imported into.
    pub cluster: String,
    /// Flows between imported services that this import added (their
    /// weight and MB/s unknown until measured).
    pub flows_added: Vec<FlowRef>,
    /// Flows an earlier import wrote that this one no longer finds, or
    /// that touch a removed service.
    pub flows_removed: Vec<FlowRef>,
    /// Flows an earlier import wrote whose source (the environment
    /// variable naming the callee) changed.
    pub flows_updated: Vec<FlowRef>,
    /// Objects recognised and not imported (batch workloads, other
    /// kinds), counted by kind.
    pub ignored: BTreeMap<String, usize>,
    /// The importer, e.g. kubernetes: the start of the source written on
    /// every entry it imports.
    pub importer: String,
    /// The ids of services left as they were: skipped in this import, or,
    /// the input being incomplete, not seen in it.
    pub kept: Vec<String>,
    /// What a person should know about the import, by service (notes
    /// about the whole input last).
    pub notes: Vec<ImportNote>,
    /// The ids of the services an earlier import of this cluster wrote
    /// that are missing from this one, and so were removed.
    pub removed: Vec<String>,
    /// Every service of the import, by its id in the estate, with what was
    /// imported for it.
    pub services: Vec<ImportServiceSummary>,
    /// Objects left out because they could not be understood (with
    /// skip_invalid; otherwise they refuse the import).
    pub skipped: Vec<ImportError>,
    /// How many services an earlier import wrote are as they were.
    pub unchanged: usize,
}

impl ImportReport {
    /// True when the merge changed nothing.
    pub fn is_noop(&self) -> bool {
        self.added.is_empty()
            && self.changed.is_empty()
            && self.removed.is_empty()
            && self.flows_added.is_empty()
            && self.flows_updated.is_empty()
            && self.flows_removed.is_empty()
    }
}

/// One imported service as written to the estate.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
pub struct ImportServiceSummary {
    /// Cores requested; null when unknown (a container declares none).
    #[cfg_attr(feature = "schema", schemars(with = "Nullable<f64>"))]
    pub cpu: Option<f64>,
    /// GB of persistent data whose size is known (data of unknown size is
    /// in the notes; a size nobody could tell is 0 here and named in
    /// `unknown`).
    pub data_gb: f64,
    /// Its id in the estate.
    pub id: String,
    /// True when its data is on node-local storage, so it cannot move.
    pub local_volumes: bool,
    /// GiB of memory requested; null when unknown.
    #[cfg_attr(feature = "schema", schemars(with = "Nullable<f64>"))]
    pub memory_gib: Option<f64>,
    /// True when it is pinned to specific nodes, so it cannot move.
    pub pinned: bool,
    /// The estate fields written as unknown because the kinds they are
    /// read from could not be listed (`data_gb`,
    /// `constraints.local_volumes`); the notes say why. Absent when none.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub unknown: Vec<String>,
}

/// A service whose imported fields changed.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
pub struct ChangedService {
    /// The estate fields that changed, e.g. cpu or constraints.pinned.
    pub fields: Vec<String>,
    /// The service's id in the estate.
    pub id: String,
}

/// A flow, by the ids of its two services.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
pub struct FlowRef {
    /// The calling service's id.
    pub from: String,
    /// The called service's id.
    pub to: String,
}

/// Something a person should know about an import.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
pub struct ImportNote {
    /// What kind of note it is (a stable code).
    pub code: ImportNoteCode,
    /// The note, in words.
    pub message: String,
    /// The id of the service it is about; null for a note about the whole
    /// input.
    #[cfg_attr(feature = "schema", schemars(with = "Nullable<String>"))]
    pub service: Option<String>,
}

/// What kind of note it is: a stable code (new codes may be added, none
/// is ever renamed).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum ImportNoteCode {
    /// A request is unknown: some container declares none.
    UnknownRequest,
    /// A request was taken from the container's limit (Kubernetes
    /// defaults a missing request to the limit).
    RequestFromLimit,
    /// An init container without a request was left out of the effective
    /// request.
    InitContainerWithoutRequest,
    /// A DaemonSet: one pod per node, node count unknown, cannot move.
    DaemonSet,
    /// Pinned to specific nodes (the reason is in the message).
    Pinned,
    /// Data on node-local storage (the reason is in the message).
    LocalVolumes,
    /// Persistent data whose size is unknown (claim not in the input, or
    /// without a storage request): not counted in data_gb.
    UnknownData,
    /// A node selector or required node affinity that does not pin but
    /// needs matching nodes wherever the service goes.
    NodeSelector,
    /// An address in an environment variable that names nothing in the
    /// input: no flow.
    UnresolvedAddress,
    /// A kind that is not imported (batch workloads, unknown kinds).
    IgnoredKind,
    /// The service's id is qualified because its plain name is taken.
    QualifiedId,
    /// Part of the input could not be read: the merge removed nothing.
    IncompleteInput,
    /// Imported services whose traffic nothing has observed (manifests
    /// show none): how many got no call edge, and what would observe them.
    TrafficUnknown,
}

impl ImportNoteCode {
    /// The code as it is sent.
    pub fn as_str(self) -> &'static str {
        match self {
            ImportNoteCode::UnknownRequest => "unknown_request",
            ImportNoteCode::RequestFromLimit => "request_from_limit",
            ImportNoteCode::InitContainerWithoutRequest => "init_container_without_request",
            ImportNoteCode::DaemonSet => "daemon_set",
            ImportNoteCode::Pinned => "pinned",
            ImportNoteCode::LocalVolumes => "local_volumes",
            ImportNoteCode::UnknownData => "unknown_data",
            ImportNoteCode::NodeSelector => "node_selector",
            ImportNoteCode::UnresolvedAddress => "unresolved_address",
            ImportNoteCode::IgnoredKind => "ignored_kind",
            ImportNoteCode::QualifiedId => "qualified_id",
            ImportNoteCode::IncompleteInput => "incomplete_input",
            ImportNoteCode::TrafficUnknown => "traffic_unknown",
        }
    }
}

/// Something in an import's input that could not be understood: the
/// file, the document in it, the object and the field, and what is wrong.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
pub struct ImportError {
    /// The 1-based document in a multi-document YAML file (a JSON file is
    /// one document); null for an error about the whole file.
    #[cfg_attr(feature = "schema", schemars(with = "Nullable<usize>", range(min = 1)))]
    pub document: Option<usize>,
    /// The file it is in, by the name it was sent under.
    pub file: String,
    /// The 1-based line, where known (YAML and JSON syntax errors); null
    /// otherwise.
    #[cfg_attr(feature = "schema", schemars(with = "Nullable<usize>", range(min = 1)))]
    pub line: Option<usize>,
    /// What is wrong, in words.
    pub message: String,
    /// The object, e.g. Deployment shop/cart, once its kind is known;
    /// null before.
    #[cfg_attr(feature = "schema", schemars(with = "Nullable<String>"))]
    pub object: Option<String>,
    /// JSON pointer within the document, e.g.
    /// /spec/template/spec/containers/0/resources/requests/cpu; empty for
    /// the whole of it.
    pub path: String,
}

impl fmt::Display for ImportError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.file)?;
        if let Some(l) = self.line {
            write!(f, ":{l}")?;
        }
        if let Some(d) = self.document {
            write!(f, ": document {d}")?;
        }
        if let Some(o) = &self.object {
            write!(f, ": {o}")?;
        }
        if !self.path.is_empty() {
            write!(f, ": {}", self.path)?;
        }
        write!(f, ": {}", self.message)
    }
}

impl From<ImportError> for crate::InputError {
    /// The same error as a 422 lists it.
    fn from(e: ImportError) -> crate::InputError {
        crate::InputError {
            path: e.path,
            line: e.line.map(|l| l as u64),
            message: e.message,
            file: Some(e.file),
            document: e.document.map(|d| d as u64),
            object: e.object,
        }
    }
}

/// `POST /api/estates/{id}/observations`: the batch applied now, or
/// earlier (`duplicate`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema), schemars(deny_unknown_fields))]
pub struct ObservationAnswer {
    /// How many observations the batch held.
    pub applied: u64,
    /// The batch's id, as sent.
    pub batch_id: String,
    /// The cluster this batch created from its cluster record; null when
    /// none was. Absent on a duplicate and on a batch that only registers
    /// a probe.
    #[serde(
        default,
        deserialize_with = "present",
        skip_serializing_if = "Option::is_none"
    )]
    #[cfg_attr(feature = "schema", schemars(with = "Option<Nullable<String>>"))]
    pub cluster_created: Option<Option<String>>,
    /// True when this batch was applied before (a retry): nothing changed
    /// now.
    pub duplicate: bool,
    /// The estate id.
    pub estate: String,
    /// With a probe in the batch: the other clusters' agents' probe
    /// addresses registered in the last 10 minutes, by cluster; empty
    /// otherwise.
    #[serde(default, skip_serializing_if = "never")]
    pub peers: Vec<ProbePeer>,
    /// The estate version the batch produced (the original one for a
    /// duplicate).
    pub version: i64,
}

impl ObservationAnswer {
    /// The cluster this batch created, if it created one.
    pub fn created_cluster(&self) -> Option<&str> {
        self.cluster_created.as_ref()?.as_deref()
    }
}

/// Another cluster's agent, to probe for round trips.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema), schemars(deny_unknown_fields))]
pub struct ProbePeer {
    /// Where it answers probes: an IP address and port.
    pub address: String,
    /// The cluster it reports for.
    pub cluster: String,
    /// When its agent last reported, seconds since 1970.
    pub updated_at: i64,
}

/// For a member that may be absent: present (even as `null`) is `Some`,
/// so what is read writes back the same.
fn present<'de, D: Deserializer<'de>, T: Deserialize<'de>>(
    d: D,
) -> Result<Option<Option<T>>, D::Error> {
    Option::<T>::deserialize(d).map(Some)
}

/// For serde's `skip_serializing_if`: never skips, so the member is always
/// sent, yet the schema (derived for what is sent) says it may be absent,
/// as clients read it (with its default).
fn never<T>(_: &T) -> bool {
    false
}

/// Register this module's published schemas (`server/src/http/openapi.rs`).
#[cfg(feature = "schema")]
pub(crate) fn schemas(generator: &mut schemars::SchemaGenerator) {
    let _ = generator.subschema_for::<ImportAnswer>();
    let _ = generator.subschema_for::<ObservationAnswer>();
}

#[cfg(test)]
mod tests {
    use super::*;

    fn report() -> ImportReport {
        let flow = || FlowRef {
            from: "a".into(),
            to: "b".into(),
        };
        ImportReport {
            added: vec!["a".into()],
            changed: vec![ChangedService {
                fields: vec!["cpu".into()],
                id: "b".into(),
            }],
            cluster: "c-fra-1".into(),
            flows_added: vec![flow()],
            flows_removed: vec![flow()],
            flows_updated: vec![flow()],
            ignored: [("Job".to_string(), 2), ("CronJob".to_string(), 1)].into(),
            importer: "kubernetes".into(),
            kept: vec!["k".into()],
            notes: vec![ImportNote {
                code: ImportNoteCode::UnknownRequest,
                message: "m".into(),
                service: Some("a".into()),
            }],
            removed: vec!["r".into()],
            services: vec![ImportServiceSummary {
                cpu: Some(0.2),
                data_gb: 0.0,
                id: "a".into(),
                local_volumes: false,
                memory_gib: None,
                pinned: true,
                unknown: vec!["data_gb".into()],
            }],
            skipped: vec![ImportError {
                document: Some(2),
                file: "f.yaml".into(),
                line: None,
                message: "x".into(),
                object: Some("Deployment shop/cart".into()),
                path: "/spec".into(),
            }],
            unchanged: 3,
        }
    }

    /// The bytes a type writes are those of its JSON value (whose objects
    /// sort their members), and read back to the same value.
    fn same_bytes<T: Serialize + for<'de> Deserialize<'de> + PartialEq + fmt::Debug>(v: &T) {
        let typed = serde_json::to_string(v).unwrap();
        let sorted = serde_json::to_value(v).unwrap().to_string();
        assert_eq!(typed, sorted, "members in alphabetical order");
        assert_eq!(&serde_json::from_str::<T>(&typed).unwrap(), v);
    }

    #[test]
    fn answers_write_their_members_in_alphabetical_order_and_read_back() {
        same_bytes(&ImportAnswer {
            estate: "sample".into(),
            report: report(),
            version: 4,
            written: true,
        });
        for cluster_created in [None, Some(None), Some(Some("c-new".to_string()))] {
            same_bytes(&ObservationAnswer {
                applied: 2,
                batch_id: "b".into(),
                cluster_created,
                duplicate: false,
                estate: "sample".into(),
                peers: vec![ProbePeer {
                    address: "10.1.2.3:7946".into(),
                    cluster: "c-par-1".into(),
                    updated_at: 1_700_000_000,
                }],
                version: 5,
            });
        }
    }

    #[test]
    fn an_observation_answer_says_which_cluster_it_created() {
        let read = |text: &str| serde_json::from_str::<ObservationAnswer>(text).unwrap();
        let base = r#""applied":0,"batch_id":"b","duplicate":false,"estate":"e","version":1"#;
        let old = read(&format!("{{{base}}}"));
        assert_eq!((old.created_cluster(), old.peers.len()), (None, 0));
        let none = read(&format!("{{{base},\"cluster_created\":null,\"peers\":[]}}"));
        assert_eq!(none.cluster_created, Some(None));
        let made = read(&format!(
            "{{{base},\"cluster_created\":\"c1\",\"peers\":[]}}"
        ));
        assert_eq!(made.created_cluster(), Some("c1"));
    }

    #[test]
    fn an_import_error_reads_as_an_input_error() {
        let e = report().skipped.remove(0);
        assert_eq!(
            e.to_string(),
            "f.yaml: document 2: Deployment shop/cart: /spec: x"
        );
        let i = crate::InputError::from(e);
        assert_eq!(
            i.line_for_people(),
            "f.yaml: 2: Deployment shop/cart: /spec: x"
        );
    }
}
