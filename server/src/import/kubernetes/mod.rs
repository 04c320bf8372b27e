//! Kubernetes manifests → [`Imported`] services and flows (SPEC §12).
//!
//! Reads what `kubectl get … -o yaml|json` prints and what manifest files
//! hold: single documents, multi-document YAML, JSON, and `List` objects.
//! Deployments, StatefulSets, DaemonSets, ReplicationControllers, and
//! ReplicaSets and Pods that no controller owns become services; Services,
//! PersistentVolumeClaims, PersistentVolumes and ConfigMaps are read to
//! resolve addresses, data and local storage; everything else is counted
//! and left aside. The rules — requests, data, pinning, call edges, ids —
//! are in `docs/kubernetes-import.md`, one section per function below.
//!
//! Pure: text in, values out. Every error names the file, the document,
//! the object and the field (a JSON pointer within the document).

use std::collections::BTreeMap;

use super::tree::{describe, Map, Value};
use serde::Deserialize;

use super::quantity;
use super::{ImportError, Imported, ImportedFlow, ImportedService, Input, Note, NoteCode};

mod address;
mod edges;
mod env;
mod objects;
mod reader;
mod requests;
mod workload;

use self::{address::*, edges::*, env::*, objects::*, reader::*, requests::*, workload::*};

/// The importer's name: the prefix of every `source` it writes.
pub const IMPORTER: &str = "kubernetes";

#[derive(Clone, Debug, Default)]
pub struct Options {
    /// Keep going past objects that cannot be understood, reporting them
    /// as skipped; without it any error means nothing is produced.
    pub skip_invalid: bool,
    /// The namespace of namespaced objects that name none, as
    /// `kubectl apply -n` gives them one (`None`: `default`, as a manifest
    /// naming none is read; they then have no owner from it). A valid
    /// namespace name ([`namespace_name`]).
    pub namespace: Option<String>,
}

/// Check a namespace name given on the command line (`--namespace`): what
/// Kubernetes accepts, an RFC 1123 label — 1 to 63 lower-case letters,
/// digits and `-`, starting and ending with a letter or digit.
pub fn namespace_name(ns: &str) -> Result<String, String> {
    let edge = |b: Option<&u8>| b.is_some_and(|b| b.is_ascii_lowercase() || b.is_ascii_digit());
    let ok = (1..=63).contains(&ns.len())
        && ns
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
        && edge(ns.as_bytes().first())
        && edge(ns.as_bytes().last());
    if ok {
        Ok(ns.to_string())
    } else {
        Err(format!(
            "{ns:?} is not a namespace name: 1 to 63 lower-case letters, digits and '-', starting and ending with a letter or digit"
        ))
    }
}

/// Kinds that live in no namespace: `--namespace` gives them none.
const CLUSTER_SCOPED: [&str; 15] = [
    "APIService",
    "ClusterRole",
    "ClusterRoleBinding",
    "CSIDriver",
    "CSINode",
    "CustomResourceDefinition",
    "IngressClass",
    "MutatingWebhookConfiguration",
    "Namespace",
    "Node",
    "PersistentVolume",
    "PriorityClass",
    "RuntimeClass",
    "StorageClass",
    "ValidatingWebhookConfiguration",
];

/// Namespace of an object that names none: where `kubectl apply` puts it
/// unless told otherwise, and how in-cluster DNS resolves it.
const DEFAULT_NAMESPACE: &str = "default";

/// Node labels that say which OS or CPU architecture a node has: a
/// selector on them chooses a kind of node, every cluster has such nodes,
/// so it neither pins nor needs noting.
const OS_ARCH_LABELS: [&str; 4] = [
    "kubernetes.io/os",
    "kubernetes.io/arch",
    "beta.kubernetes.io/os",
    "beta.kubernetes.io/arch",
];

/// The node label that names one node: a required match on it pins.
const HOSTNAME_LABEL: &str = "kubernetes.io/hostname";

/// Labels read for the owning team, in order (the first present wins):
/// the recommended Kubernetes label for the application a workload is part
/// of, then the two labels teams most often use for ownership.
const OWNER_LABELS: [&str; 3] = ["app.kubernetes.io/part-of", "team", "owner"];

/// Environment variable name endings that announce an address of another
/// service (compared case-insensitively). `_SERVICE_HOST` (what Kubernetes
/// itself injects) ends in `_HOST`.
const ADDRESS_SUFFIXES: [&str; 13] = [
    "_ADDR",
    "_ADDRESS",
    "_HOST",
    "_HOSTNAME",
    "_URL",
    "_URI",
    "_ENDPOINT",
    "_ENDPOINTS",
    "_SERVICE",
    "_SERVER",
    "_SERVERS",
    "_BROKERS",
    "_DSN",
];

/// Storage class names containing one of these (case-insensitively) are
/// node-local provisioners (`local-path`, `local-storage`,
/// `openebs-hostpath`, …): data there is bound to one node. The same holds
/// for a StorageClass's provisioner (`rancher.io/local-path`,
/// `openebs.io/local`, `microk8s.io/hostpath`).
const LOCAL_STORAGE_HINTS: [&str; 2] = ["local", "hostpath"];

/// The annotations that make a StorageClass the default one: a claim that
/// names no class is given it when created (the GA name, then the beta
/// one older clusters still set).
const DEFAULT_CLASS_ANNOTATIONS: [&str; 2] = [
    "storageclass.kubernetes.io/is-default-class",
    "storageclass.beta.kubernetes.io/is-default-class",
];

/// Kinds read for what they say about workloads, or known to say nothing
/// about placement: counted under `ignored`, no note.
const KNOWN_KINDS: &[&str] = &[
    "APIService",
    "ClusterRole",
    "ClusterRoleBinding",
    "ConfigMap",
    "ControllerRevision",
    "CustomResourceDefinition",
    "EndpointSlice",
    "Endpoints",
    "Event",
    "HorizontalPodAutoscaler",
    "Ingress",
    "IngressClass",
    "Lease",
    "LimitRange",
    "MutatingWebhookConfiguration",
    "Namespace",
    "NetworkPolicy",
    "Node",
    "PersistentVolume",
    "PersistentVolumeClaim",
    "PodDisruptionBudget",
    "PriorityClass",
    "ResourceQuota",
    "Role",
    "RoleBinding",
    "Secret",
    "Service",
    "ServiceAccount",
    "StorageClass",
    "ValidatingWebhookConfiguration",
];

/// Workload kinds that run to completion: not services, noted.
const BATCH_KINDS: [&str; 2] = ["Job", "CronJob"];

/// Objects given twice (same kind, namespace and name, of the kinds the
/// importer reads): the later one wins, as `kubectl apply` of the same
/// files leaves it; each earlier one is dropped with an error naming
/// where the one that replaced it is (listed under `skipped` with
/// `skip_invalid`).
fn later_wins(objs: Vec<Obj>, errors: &mut Vec<ImportError>) -> Vec<Obj> {
    let key = |o: &Obj| (o.kind.clone(), o.ns().to_string(), o.name.clone());
    let mut last: BTreeMap<(String, String, String), (usize, String)> = BTreeMap::new();
    for (i, o) in objs.iter().enumerate() {
        if reads(&o.kind) {
            let at = if o.at.is_empty() {
                String::new()
            } else {
                format!(" at {}", o.at)
            };
            let place = format!("{} document {}{at}", o.file, o.document);
            last.insert(key(o), (i, place));
        }
    }
    let mut out = Vec::with_capacity(objs.len());
    for (i, o) in objs.into_iter().enumerate() {
        if let Some((winner, place)) = last.get(&key(&o)).filter(|(w, _)| *w != i) {
            debug_assert!(*winner > i);
            errors.push(o.err(
                "",
                format!(
                    "duplicate {}: dropped, the later one in {place} replaces it, as kubectl apply would",
                    o.label()
                ),
            ));
            continue;
        }
        out.push(o);
    }
    out
}

/// Read manifests. With `skip_invalid`, objects (and the rest of a file
/// after a syntax error) that cannot be understood are reported under
/// `skipped`; without it, any error means nothing is produced and every
/// error found is returned.
pub fn parse(inputs: &[Input], options: Options) -> Result<Imported, Vec<ImportError>> {
    let mut errors = Vec::new();
    let mut objs = Vec::new();
    for input in inputs {
        for (d, v) in documents(input, &mut errors) {
            objects(input.name, d, v, &mut objs, &mut errors);
        }
    }
    if let Some(ns) = &options.namespace {
        for o in &mut objs {
            if o.namespace.is_none() && !CLUSTER_SCOPED.contains(&o.kind.as_str()) {
                o.namespace = Some(ns.clone());
            }
        }
    }
    // Errors so far leave objects unidentified: the input is incomplete.
    let complete = errors.is_empty();
    let mut kept = Vec::new();
    let objs = later_wins(objs, &mut errors);

    let mut imported = Imported {
        importer: IMPORTER,
        ..Imported::default()
    };
    let mut index = Index::default();
    let mut unread = Unread::default();
    let mut candidates = Vec::new();
    for o in &objs {
        if index_object(o, &mut index, &mut unread, &mut errors) {
            candidates.push(o);
        }
        count_ignored(o, &mut imported);
    }
    unread_kind_notes(&index, &mut imported.notes);
    let mut workloads = Vec::new();
    for o in candidates {
        match workload(o, &index) {
            Ok(w) => workloads.push(w),
            Err(e) => {
                kept.push(o.key());
                unread.workloads.push((o, Unread::labels_of(o)));
                errors.extend(e);
            }
        }
    }
    // In input order: file by file, document by document.
    let file_order: BTreeMap<&str, usize> = inputs
        .iter()
        .enumerate()
        .map(|(i, f)| (f.name, i))
        .rev()
        .collect();
    errors.sort_by_key(|e| (file_order.get(e.file.as_str()).copied(), e.document));
    if !errors.is_empty() && !options.skip_invalid {
        return Err(errors);
    }
    imported.skipped = errors;
    kept.sort();
    imported.kept = kept;
    imported.complete = complete;

    let ids = ids(&workloads);
    for (w, id) in workloads.iter_mut().zip(&ids) {
        w.service.id = id.clone();
    }
    // A kind the source could not list leaves the input incomplete too.
    unread.complete = complete && index.unread.is_empty();
    let (flows, edge_notes) = edges(&workloads, &index, &unread);
    imported.flows = flows;
    // Notes in service order, then the input-wide ones.
    let mut order: Vec<usize> = (0..workloads.len()).collect();
    order.sort_by(|&a, &b| workloads[a].service.key.cmp(&workloads[b].service.key));
    let mut service_notes = Vec::new();
    for &i in &order {
        let w = &workloads[i];
        let edge_notes = edge_notes.iter().filter(|(wi, _, _)| *wi == i);
        let own = w.notes.iter().map(|(c, m)| (c, m));
        for (code, message) in own.chain(edge_notes.map(|(_, c, m)| (c, m))) {
            service_notes.push(Note {
                code: *code,
                service: Some(w.service.id.clone()),
                message: message.clone(),
            });
        }
    }
    service_notes.extend(std::mem::take(&mut imported.notes));
    imported.notes = service_notes;
    imported.services = order
        .iter()
        .map(|&i| workloads[i].service.clone())
        .collect();
    Ok(imported)
}

/// Put what the walk over workloads consults in the index (Services,
/// claims, volumes, classes, ConfigMaps, kinds not read); true for an
/// object that may be a service.
fn index_object<'a>(
    o: &'a Obj,
    index: &mut Index<'a>,
    unread: &mut Unread<'a>,
    errors: &mut Vec<ImportError>,
) -> bool {
    match o.kind.as_str() {
        "Service" => {
            let mut r = Reader::new(o);
            let selector: BTreeMap<String, String> = r
                .labels("/spec/selector")
                .into_iter()
                .map(|(k, v)| (k.to_string(), v))
                .collect();
            if r.errors.is_empty() {
                index
                    .services
                    .insert((o.ns().into(), o.name.clone()), selector);
                add_service_links(o, index);
            } else {
                unread.services.insert((o.ns().into(), o.name.clone()));
                errors.extend(r.errors);
            }
        }
        "PersistentVolumeClaim" => {
            // Checked once here, so a bad claim is reported once.
            let mut r = Reader::new(o);
            let _ = claim(&mut r, "", &Index::default(), &[]);
            if r.errors.is_empty() {
                index.claims.insert((o.ns().into(), o.name.clone()), o);
            } else {
                index.bad_claims.insert((o.ns().into(), o.name.clone()));
                errors.extend(r.errors);
            }
        }
        "PersistentVolume" => {
            index.volumes.insert(o.name.clone(), o);
            let claim_ref = |f: &str| {
                o.value
                    .pointer(&format!("/spec/claimRef/{f}"))
                    .and_then(Value::as_str)
                    .filter(|s| !s.is_empty())
            };
            if let Some(name) = claim_ref("name") {
                let ns = claim_ref("namespace").unwrap_or(DEFAULT_NAMESPACE);
                index
                    .claim_refs
                    .insert((ns.to_string(), name.to_string()), o);
            }
        }
        "StorageClass" => {
            index.storage_classes.insert(o.name.clone(), o);
            let default = DEFAULT_CLASS_ANNOTATIONS.iter().any(|a| {
                o.value
                    .pointer("/metadata/annotations")
                    .and_then(|m| m.get(a))
                    .and_then(Value::as_str)
                    == Some("true")
            });
            // Two defaults: Kubernetes gives new claims the newest;
            // the input does not say which, so the first is taken.
            if default && index.default_class.is_none() {
                index.default_class = Some(o.name.clone());
            }
        }
        "ConfigMap" => {
            index.config_maps.insert((o.ns().into(), o.name.clone()), o);
        }
        "Status" => {
            if let Some((kind, message)) = forbidden_kind(o) {
                index.unread.insert(kind, message);
            }
        }
        k if is_workload(k) => return true,
        "Pod" if finished_phase(o).is_some() => {}
        "ReplicaSet" | "Pod" if !owned_by_controller(o) => return true,
        _ => {}
    }
    false
}

/// Count an object that is not imported by kind, and note the kinds not
/// understood and the batch workloads.
fn count_ignored(o: &Obj, imported: &mut Imported) {
    let counted = match o.kind.as_str() {
        k if is_workload(k) => None,
        "Status" if forbidden_kind(o).is_some() => None,
        "Pod" if finished_phase(o).is_some() && !owned_by_controller(o) => {
            let phase = finished_phase(o).unwrap_or_default();
            imported.notes.push(Note {
                code: NoteCode::IgnoredKind,
                service: None,
                message: format!(
                    "{} ({}): phase {phase}, it has run to completion and serves nothing; not imported",
                    o.label(),
                    o.file
                ),
            });
            Some(format!("Pod ({phase})"))
        }
        "ReplicaSet" | "Pod" if !owned_by_controller(o) => None,
        "ReplicaSet" | "Pod" => Some(format!("{} (owned by a controller)", o.kind)),
        k => Some(k.to_string()),
    };
    if let Some(k) = counted {
        *imported.ignored.entry(k).or_default() += 1;
    }
    if BATCH_KINDS.contains(&o.kind.as_str()) {
        imported.notes.push(Note {
            code: NoteCode::IgnoredKind,
            service: None,
            message: format!(
                "{} ({}): a batch workload runs to completion, not a service; not imported",
                o.label(),
                o.file
            ),
        });
    } else if !(reads(&o.kind)
        || KNOWN_KINDS.contains(&o.kind.as_str())
        // A refused kind's `Status` answer is read for what it says.
        || (o.kind == "Status" && forbidden_kind(o).is_some()))
    {
        imported.notes.push(Note {
            code: NoteCode::IgnoredKind,
            service: None,
            message: format!(
                "kind {} ({} document {}) is not understood; not imported",
                o.kind, o.file, o.document
            ),
        });
    }
}

/// Kinds not read: what they leave unknown beyond data and storage
/// (those are said per service).
fn unread_kind_notes(index: &Index, notes: &mut Vec<Note>) {
    for (&kind, message) in &index.unread {
        let what = match kind {
            "ConfigMap" => "addresses held in ConfigMap values are unknown, so no flow is derived from them; flows an earlier import wrote are kept",
            "Service" => "addresses naming a Service cannot be resolved to its workloads; flows an earlier import wrote are kept",
            k if STORAGE_KINDS.contains(&k) || k == "Node" => continue,
            _ => "the services an earlier import made of them are kept",
        };
        notes.push(Note {
            code: NoteCode::IncompleteInput,
            service: None,
            message: format!("{} ({message}): {what}", unread_reason(&[kind])),
        });
    }
}
