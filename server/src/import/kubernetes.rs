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

use serde::Deserialize;
use serde_json::{Map, Value};

use berth_engine::json_shape::describe;

use super::quantity;
use super::{ImportError, Imported, ImportedFlow, ImportedService, Input, Note, NoteCode};

/// The importer's name: the prefix of every `source` it writes.
pub const IMPORTER: &str = "kubernetes";

#[derive(Clone, Copy, Debug, Default)]
pub struct Options {
    /// Keep going past objects that cannot be understood, reporting them
    /// as skipped; without it any error means nothing is produced.
    pub skip_invalid: bool,
}

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

// ---------------------------------------------------------------------------
// Documents and objects.

/// One Kubernetes object found in the input.
#[derive(Clone, Debug)]
struct Obj {
    file: String,
    document: usize,
    /// Pointer of the object within its document (`/items/3` in a List).
    at: String,
    kind: String,
    /// As written; `None` when the manifest names none.
    namespace: Option<String>,
    name: String,
    value: Value,
}

impl Obj {
    fn ns(&self) -> &str {
        self.namespace.as_deref().unwrap_or(DEFAULT_NAMESPACE)
    }

    /// `Deployment shop/cart`, or `Deployment cart` without a namespace.
    fn label(&self) -> String {
        match &self.namespace {
            Some(ns) => format!("{} {ns}/{}", self.kind, self.name),
            None => format!("{} {}", self.kind, self.name),
        }
    }

    fn err(&self, path: &str, message: String) -> ImportError {
        ImportError {
            file: self.file.clone(),
            document: Some(self.document),
            line: None,
            object: Some(self.label()),
            path: format!("{}{path}", self.at),
            message,
        }
    }

    /// `namespace/Kind/name`: the provenance key.
    fn key(&self) -> String {
        format!("{}/{}/{}", self.ns(), self.kind, self.name)
    }
}

/// The documents of one input, as JSON values (YAML converted), each with
/// its 1-based index; a syntax error ends the file.
fn documents(input: &Input, errors: &mut Vec<ImportError>) -> Vec<(usize, Value)> {
    let file_err = |document: Option<usize>, line: Option<usize>, message: String| ImportError {
        file: input.name.to_string(),
        document,
        line,
        object: None,
        path: String::new(),
        message,
    };
    let first = input.text.trim_start_matches('\u{feff}').trim_start();
    if first.starts_with('{') || first.starts_with('[') {
        return match serde_json::from_str::<Value>(first) {
            Ok(v) => vec![(1, v)],
            Err(e) => {
                errors.push(file_err(
                    Some(1),
                    Some(e.line()),
                    format!("not valid JSON: {e}"),
                ));
                Vec::new()
            }
        };
    }
    let mut out = Vec::new();
    for (i, doc) in serde_yaml::Deserializer::from_str(input.text).enumerate() {
        match serde_yaml::Value::deserialize(doc) {
            Ok(v) => out.push((i + 1, yaml_to_json(v))),
            Err(e) => {
                errors.push(file_err(
                    Some(i + 1),
                    e.location().map(|l| l.line()),
                    format!("not valid YAML: {e}"),
                ));
                break;
            }
        }
    }
    out
}

/// A YAML value as JSON: tags dropped, non-string keys written as text,
/// numbers kept exactly as far as JSON can (a quantity such as `0.1` stays
/// `0.1`), non-finite floats as text (no Kubernetes field takes one).
fn yaml_to_json(v: serde_yaml::Value) -> Value {
    use serde_yaml::Value as Y;
    match v {
        Y::Null => Value::Null,
        Y::Bool(b) => Value::Bool(b),
        Y::Number(n) => {
            if let Some(i) = n.as_i64() {
                Value::from(i)
            } else if let Some(u) = n.as_u64() {
                Value::from(u)
            } else {
                let f = n.as_f64().unwrap_or(f64::NAN);
                serde_json::Number::from_f64(f)
                    .map_or_else(|| Value::String(n.to_string()), Value::Number)
            }
        }
        Y::String(s) => Value::String(s),
        Y::Sequence(items) => Value::Array(items.into_iter().map(yaml_to_json).collect()),
        Y::Mapping(m) => {
            let mut out = Map::new();
            for (k, v) in m {
                let key = match yaml_to_json(k) {
                    Value::String(s) => s,
                    other => other.to_string(),
                };
                out.insert(key, yaml_to_json(v));
            }
            Value::Object(out)
        }
        Y::Tagged(t) => yaml_to_json(t.value),
    }
}

/// The objects of one document: the document itself, or the items of a
/// `List` (or `DeploymentList`, …, whose items may omit their kind).
fn objects(
    file: &str,
    document: usize,
    v: Value,
    out: &mut Vec<Obj>,
    errors: &mut Vec<ImportError>,
) {
    let err = |at: String, message: String| ImportError {
        file: file.to_string(),
        document: Some(document),
        line: None,
        object: None,
        path: at,
        message,
    };
    let Value::Object(m) = v else {
        if !v.is_null() {
            errors.push(err(
                String::new(),
                format!("expected a Kubernetes object, found {}", describe(&v)),
            ));
        }
        return;
    };
    let kind = m.get("kind").and_then(Value::as_str).map(str::to_string);
    let list_item_kind = kind
        .as_deref()
        .and_then(|k| k.strip_suffix("List"))
        .filter(|_| matches!(m.get("items"), Some(Value::Array(_))))
        .map(str::to_string);
    if let Some(item_kind) = list_item_kind {
        let Some(Value::Array(items)) = m.get("items") else {
            unreachable!("checked above")
        };
        for (i, item) in items.iter().enumerate() {
            let at = format!("/items/{i}");
            let Value::Object(im) = item else {
                errors.push(err(
                    at,
                    format!("expected a Kubernetes object, found {}", describe(item)),
                ));
                continue;
            };
            let mut item = im.clone();
            if !item.contains_key("kind") && !item_kind.is_empty() {
                item.insert("kind".into(), Value::String(item_kind.clone()));
            }
            object(file, document, at, Value::Object(item), out, errors);
        }
        return;
    }
    object(file, document, String::new(), Value::Object(m), out, errors);
}

fn object(
    file: &str,
    document: usize,
    at: String,
    v: Value,
    out: &mut Vec<Obj>,
    errors: &mut Vec<ImportError>,
) {
    let err = |path: &str, object: Option<String>, message: String| ImportError {
        file: file.to_string(),
        document: Some(document),
        line: None,
        object,
        path: format!("{at}{path}"),
        message,
    };
    let kind = match v.get("kind") {
        Some(Value::String(k)) if !k.is_empty() => k.clone(),
        Some(other) => {
            errors.push(err(
                "/kind",
                None,
                format!("expected the kind as a string, found {}", describe(other)),
            ));
            return;
        }
        None => {
            errors.push(err(
                "",
                None,
                "not a Kubernetes object: no \"kind\"".to_string(),
            ));
            return;
        }
    };
    let meta = v.get("metadata");
    let name = meta.and_then(|m| m.get("name"));
    let name = match name {
        Some(Value::String(n)) if !n.is_empty() => n.clone(),
        Some(Value::String(_)) | None | Some(Value::Null) => {
            // A kind that is not read needs no name to be left aside.
            if !reads(&kind) {
                out.push(Obj {
                    file: file.to_string(),
                    document,
                    at,
                    kind,
                    namespace: None,
                    name: String::new(),
                    value: v,
                });
                return;
            }
            errors.push(err(
                "/metadata/name",
                Some(kind),
                "missing the object's name".to_string(),
            ));
            return;
        }
        Some(other) => {
            errors.push(err(
                "/metadata/name",
                Some(kind),
                format!("expected a string, found {}", describe(other)),
            ));
            return;
        }
    };
    let namespace = match meta.and_then(|m| m.get("namespace")) {
        None | Some(Value::Null) => None,
        Some(Value::String(ns)) if !ns.is_empty() => Some(ns.clone()),
        Some(other) => {
            errors.push(err(
                "/metadata/namespace",
                Some(format!("{kind} {name}")),
                format!("expected a non-empty string, found {}", describe(other)),
            ));
            return;
        }
    };
    out.push(Obj {
        file: file.to_string(),
        document,
        at,
        kind,
        namespace,
        name,
        value: v,
    });
}

/// Kinds whose content the importer reads.
fn reads(kind: &str) -> bool {
    is_workload(kind)
        || matches!(
            kind,
            "Pod"
                | "ReplicaSet"
                | "Service"
                | "PersistentVolumeClaim"
                | "PersistentVolume"
                | "StorageClass"
                | "ConfigMap"
        )
}

fn is_workload(kind: &str) -> bool {
    matches!(
        kind,
        "Deployment" | "StatefulSet" | "DaemonSet" | "ReplicationController"
    )
}

// ---------------------------------------------------------------------------
// Reading fields with their paths.

/// A reader over one object that records every error with its path.
struct Reader<'o> {
    obj: &'o Obj,
    errors: Vec<ImportError>,
}

impl<'o> Reader<'o> {
    fn new(obj: &'o Obj) -> Self {
        Reader {
            obj,
            errors: Vec::new(),
        }
    }

    fn err(&mut self, path: &str, message: String) {
        self.errors.push(self.obj.err(path, message));
    }

    /// The value at `path` (a JSON pointer into the object); absent and
    /// null are both `None`.
    fn at(&self, path: &str) -> Option<&'o Value> {
        self.obj.value.pointer(path).filter(|v| !v.is_null())
    }

    fn map(&mut self, path: &str) -> Option<&'o Map<String, Value>> {
        match self.at(path)? {
            Value::Object(m) => Some(m),
            other => {
                self.err(
                    path,
                    format!("expected an object, found {}", describe(other)),
                );
                None
            }
        }
    }

    fn list(&mut self, path: &str) -> &'o [Value] {
        match self.at(path) {
            None => &[],
            Some(Value::Array(a)) => a,
            Some(other) => {
                self.err(
                    path,
                    format!("expected an array, found {}", describe(other)),
                );
                &[]
            }
        }
    }

    fn string(&mut self, path: &str) -> Option<&'o str> {
        match self.at(path)? {
            Value::String(s) => Some(s),
            other => {
                self.err(
                    path,
                    format!("expected a string, found {}", describe(other)),
                );
                None
            }
        }
    }

    /// A string-to-string map such as labels or a selector.
    fn labels(&mut self, path: &str) -> BTreeMap<&'o str, String> {
        let mut out = BTreeMap::new();
        let Some(m) = self.map(path) else {
            return out;
        };
        for (k, v) in m {
            match v {
                Value::String(s) => {
                    out.insert(k.as_str(), s.clone());
                }
                // Unquoted YAML scalars (`enabled: true`, `tier: 1`) mean
                // the same text to Kubernetes tooling that quotes them.
                Value::Bool(_) | Value::Number(_) => {
                    out.insert(k.as_str(), v.to_string());
                }
                other => self.err(
                    &format!("{path}/{}", escape(k)),
                    format!("expected a string, found {}", describe(other)),
                ),
            }
        }
        out
    }

    /// A non-negative whole number (replicas), or the default when absent.
    fn count(&mut self, path: &str, default: u64) -> Option<u64> {
        match self.at(path) {
            None => Some(default),
            Some(Value::Number(n)) if n.as_u64().is_some() => n.as_u64(),
            Some(other) => {
                self.err(
                    path,
                    format!("expected a whole number ≥ 0, found {}", describe(other)),
                );
                None
            }
        }
    }

    /// A quantity at `path`, `None` when absent (or unreadable: error).
    fn quantity(&mut self, path: &str) -> Option<quantity::Quantity> {
        let text = match self.at(path)? {
            Value::String(s) => s.clone(),
            Value::Number(n) => n.to_string(),
            other => {
                self.err(
                    path,
                    format!(
                        "expected a quantity such as 100m or 64Mi, found {}",
                        describe(other)
                    ),
                );
                return None;
            }
        };
        match quantity::parse(&text) {
            Ok(q) => Some(q),
            Err(e) => {
                self.err(path, e);
                None
            }
        }
    }
}

impl Reader<'_> {
    /// A quantity in whole base units: millicores when `milli` (CPU),
    /// else bytes. Absent: `None`; unreadable or too large: an error.
    fn amount(&mut self, path: &str, milli: bool) -> Option<i128> {
        let q = self.quantity(path)?;
        self.scaled(q, path, milli)
    }

    fn scaled(&mut self, q: quantity::Quantity, path: &str, milli: bool) -> Option<i128> {
        let v = if milli { q.milli() } else { q.units() };
        if v.is_none() {
            self.err(path, "quantity out of range".into());
        }
        v
    }
}

fn escape(key: &str) -> String {
    key.replace('~', "~0").replace('/', "~1")
}

// ---------------------------------------------------------------------------
// Requests.

/// A request for one resource in base units (millicores or bytes);
/// `None` = unknown.
type Amount = Option<i128>;

/// Sums saturate: an absurd total stays absurd (and is refused by the
/// range check of `workload`) instead of wrapping or turning unknown.
fn add(a: Amount, b: Amount) -> Amount {
    Some(a?.saturating_add(b?))
}

/// The two resources, in estate field order.
const RESOURCES: [(&str, &str); 2] = [("cpu", "CPU"), ("memory", "memory")];

/// One container's request per resource: `requests`, else `limits`
/// (Kubernetes defaults a missing request to the limit), else unknown.
fn container_request(
    r: &mut Reader,
    path: &str,
    notes: &mut Vec<(NoteCode, String)>,
) -> [Amount; 2] {
    let name = r
        .at(&format!("{path}/name"))
        .and_then(Value::as_str)
        .unwrap_or("?")
        .to_string();
    let mut out = [None, None];
    let mut from_limit = Vec::new();
    for (k, (res, word)) in RESOURCES.iter().enumerate() {
        let req = format!("{path}/resources/requests/{res}");
        let lim = format!("{path}/resources/limits/{res}");
        let value = if r.at(&req).is_some() {
            r.quantity(&req).map(|q| (q, &req))
        } else if r.at(&lim).is_some() {
            let q = r.quantity(&lim);
            if q.is_some() {
                from_limit.push(*word);
            }
            q.map(|q| (q, &lim))
        } else {
            None
        };
        out[k] = value.and_then(|(q, at)| r.scaled(q, at, k == 0));
    }
    if !from_limit.is_empty() {
        let what = match from_limit.as_slice() {
            [one] => format!("a {one} limit but no request"),
            _ => format!("{} limits but no requests", from_limit.join(" and ")),
        };
        notes.push((
            NoteCode::RequestFromLimit,
            format!(
                "container {name} declares {what}: the request is the limit, as Kubernetes sets it"
            ),
        ));
    }
    out
}

/// "CPU", "memory" or "CPU and memory" for the resources flagged.
fn resource_words(which: [bool; 2]) -> String {
    RESOURCES
        .iter()
        .zip(which)
        .filter(|(_, w)| *w)
        .map(|((_, word), _)| *word)
        .collect::<Vec<_>>()
        .join(" and ")
}

/// The pod's effective request per resource, by the Kubernetes rule:
/// `max(Σ app containers + Σ sidecars, max over init containers i of
/// (request_i + Σ sidecars started before i))`, plus the pod overhead.
/// Sidecars are init containers with `restartPolicy: Always`; they run for
/// the pod's life, so like app containers a missing request makes the
/// result unknown. A plain init container without a request is left out
/// of the max with a note. Returns the amounts and the notes.
fn pod_request(r: &mut Reader, spec: &str) -> ([Amount; 2], Vec<(NoteCode, String)>) {
    let mut notes = Vec::new();
    let mut apps = [Some(0i128), Some(0i128)];
    let mut missing: [Vec<String>; 2] = [Vec::new(), Vec::new()];
    let containers = r.list(&format!("{spec}/containers"));
    if containers.is_empty() && r.errors.is_empty() {
        r.err(
            &format!("{spec}/containers"),
            "a pod needs at least one container".into(),
        );
    }
    let name_at = |r: &Reader, p: &str| {
        r.at(&format!("{p}/name"))
            .and_then(Value::as_str)
            .unwrap_or("?")
            .to_string()
    };
    for i in 0..containers.len() {
        let p = format!("{spec}/containers/{i}");
        let req = container_request(r, &p, &mut notes);
        for k in 0..2 {
            if req[k].is_none() {
                missing[k].push(name_at(r, &p));
            }
            apps[k] = add(apps[k], req[k]);
        }
    }
    let mut sidecars = [Some(0i128), Some(0i128)];
    let mut init_max = [Some(0i128), Some(0i128)];
    let inits = r.list(&format!("{spec}/initContainers"));
    for i in 0..inits.len() {
        let p = format!("{spec}/initContainers/{i}");
        let sidecar = r.string(&format!("{p}/restartPolicy")) == Some("Always");
        let req = container_request(r, &p, &mut notes);
        let mut left_out = [false, false];
        for k in 0..2 {
            if sidecar {
                if req[k].is_none() {
                    missing[k].push(format!("{} (sidecar)", name_at(r, &p)));
                }
                sidecars[k] = add(sidecars[k], req[k]);
            } else if let Some(v) = req[k] {
                let peak = sidecars[k].map(|s| s.saturating_add(v));
                init_max[k] = match (init_max[k], peak) {
                    (Some(a), Some(b)) => Some(a.max(b)),
                    _ => None,
                };
            } else {
                left_out[k] = true;
            }
        }
        if left_out.iter().any(|&x| x) {
            notes.push((
                NoteCode::InitContainerWithoutRequest,
                format!(
                    "init container {} declares no {} request; it runs to completion before the app starts, so it is left out",
                    name_at(r, &p),
                    resource_words(left_out).replace(" and ", " or ")
                ),
            ));
        }
    }
    let mut out = [None, None];
    for k in 0..2 {
        let running = add(apps[k], sidecars[k]);
        out[k] = match (running, init_max[k]) {
            (Some(a), Some(b)) => Some(a.max(b)),
            _ => None,
        };
        let overhead = format!("{spec}/overhead/{}", RESOURCES[k].0);
        if r.at(&overhead).is_some() {
            let o = r.amount(&overhead, k == 0);
            out[k] = add(out[k], o);
        }
    }
    // One note when the same containers miss both requests.
    let groups: Vec<([bool; 2], &Vec<String>)> = if missing[0] == missing[1] {
        vec![([true, true], &missing[0])]
    } else {
        vec![([true, false], &missing[0]), ([false, true], &missing[1])]
    };
    for (which, names) in groups {
        if names.is_empty() {
            continue;
        }
        let one = names.len() == 1;
        notes.push((
            NoteCode::UnknownRequest,
            format!(
                "{} request{} unknown: container{} {} declare{} none",
                resource_words(which),
                if which == [true, true] { "s" } else { "" },
                if one { "" } else { "s" },
                names.join(", "),
                if one { "s" } else { "" }
            ),
        ));
    }
    (out, notes)
}

// ---------------------------------------------------------------------------
// Workloads.

/// What the walk over one workload found (before ids and edges).
struct Workload {
    obj: Obj,
    /// Pointer of the pod spec within the object.
    spec: String,
    /// Labels of the pods (what a Service selects).
    pod_labels: BTreeMap<String, String>,
    service: ImportedService,
    notes: Vec<(NoteCode, String)>,
}

/// Everything besides workloads that the walk consults.
#[derive(Default)]
struct Index<'a> {
    /// (namespace, name) → the Service's selector.
    services: BTreeMap<(String, String), BTreeMap<String, String>>,
    claims: BTreeMap<(String, String), &'a Obj>,
    /// Claims that could not be read (their errors are reported once).
    bad_claims: std::collections::BTreeSet<(String, String)>,
    volumes: BTreeMap<String, &'a Obj>,
    /// (namespace, claim name) → the PersistentVolume whose
    /// `spec.claimRef` names that claim (bound, or reserved for it).
    claim_refs: BTreeMap<(String, String), &'a Obj>,
    storage_classes: BTreeMap<String, &'a Obj>,
    /// The StorageClass marked default, when the input has one.
    default_class: Option<String>,
    config_maps: BTreeMap<(String, String), &'a Obj>,
}

fn owned_by_controller(obj: &Obj) -> bool {
    obj.value
        .pointer("/metadata/ownerReferences")
        .and_then(Value::as_array)
        .is_some_and(|a| !a.is_empty())
}

fn storage_is_local(class: Option<&str>) -> bool {
    class.is_some_and(|c| {
        let c = c.to_ascii_lowercase();
        LOCAL_STORAGE_HINTS.iter().any(|h| c.contains(h))
    })
}

/// The PersistentVolume a claim is bound to, the way Kubernetes binds
/// them: the claim's `spec.volumeName`, else a volume whose
/// `spec.claimRef` names the claim.
fn bound_volume<'a>(claim: &Obj, index: &Index<'a>) -> Option<&'a Obj> {
    claim
        .value
        .pointer("/spec/volumeName")
        .and_then(Value::as_str)
        .filter(|v| !v.is_empty())
        .and_then(|v| index.volumes.get(v).copied())
        .or_else(|| {
            index
                .claim_refs
                .get(&(claim.ns().to_string(), claim.name.clone()))
                .copied()
        })
}

/// `local` or `hostPath` when the volume is one: its data lives on one node.
fn local_kind(pv: &Obj) -> Option<&'static str> {
    ["local", "hostPath"]
        .into_iter()
        .find(|kind| pv.value.pointer(&format!("/spec/{kind}")).is_some())
}

/// Bytes of a claim (a PVC object at `path` "", or a StatefulSet template
/// at `path` with the claims made from it, `instances`), and why its data
/// is node-local, if it is: its storage class (named, or the default
/// class when it names none) is a node-local one by name or provisioner;
/// the volume it is bound to is a `local` or `hostPath` one; or, unbound,
/// every free volume of its class is one (it will bind to one of them).
fn claim(
    r: &mut Reader,
    path: &str,
    index: &Index,
    instances: &[&Obj],
) -> (Option<i128>, Option<String>) {
    let bytes = r.amount(&format!("{path}/spec/resources/requests/storage"), false);
    let class_at = format!("{path}/spec/storageClassName");
    let class = if r.at(&class_at).is_some() {
        r.string(&class_at)
    } else {
        index.default_class.as_deref()
    };
    if storage_is_local(class) {
        return (
            bytes,
            Some(format!(
                "storage class {:?} is node-local",
                class.unwrap_or("")
            )),
        );
    }
    if let Some((c, sc)) = class.and_then(|c| Some((c, *index.storage_classes.get(c)?))) {
        if let Some(p) = sc.value.pointer("/provisioner").and_then(Value::as_str) {
            if storage_is_local(Some(p)) {
                return (
                    bytes,
                    Some(format!(
                        "storage class {c:?} provisions node-local volumes ({p})"
                    )),
                );
            }
        }
    }
    if path.is_empty() {
        // Read through the reader so a malformed name is reported.
        let _ = r.string("/spec/volumeName");
    }
    let own = [r.obj];
    let claims: &[&Obj] = if path.is_empty() { &own } else { instances };
    let mut bound = false;
    for c in claims {
        if let Some(pv) = bound_volume(c, index) {
            bound = true;
            if let Some(kind) = local_kind(pv) {
                return (
                    bytes,
                    Some(format!(
                        "bound to PersistentVolume {}, a {kind} volume",
                        pv.name
                    )),
                );
            }
        }
    }
    if let (false, Some(c)) = (bound, class.filter(|c| !c.is_empty())) {
        let free: Vec<&&Obj> = index
            .volumes
            .values()
            .filter(|pv| {
                pv.value
                    .pointer("/spec/storageClassName")
                    .and_then(Value::as_str)
                    == Some(c)
                    && pv.value.pointer("/spec/claimRef").is_none()
            })
            .collect();
        if !free.is_empty() && free.iter().all(|pv| local_kind(pv).is_some()) {
            return (
                bytes,
                Some(format!(
                    "not bound yet, and every free PersistentVolume of storage class {c:?} is a local or hostPath volume"
                )),
            );
        }
    }
    (bytes, None)
}

/// The claims a StatefulSet made from its template `template`: Kubernetes
/// names them `<template>-<statefulset>-<ordinal>`.
fn template_instances<'a>(sts: &Obj, template: &str, index: &Index<'a>) -> Vec<&'a Obj> {
    let prefix = format!("{template}-{}-", sts.name);
    index
        .claims
        .range((sts.ns().to_string(), prefix.clone())..)
        .take_while(|((ns, name), _)| ns == sts.ns() && name.starts_with(&prefix))
        .filter(|((_, name), _)| {
            let ordinal = &name[prefix.len()..];
            !ordinal.is_empty() && ordinal.bytes().all(|b| b.is_ascii_digit())
        })
        .map(|(_, c)| *c)
        .collect()
}

fn workload(obj: &Obj, index: &Index) -> Result<Workload, Vec<ImportError>> {
    let mut r = Reader::new(obj);
    let mut notes: Vec<(NoteCode, String)> = Vec::new();
    let spec = if obj.kind == "Pod" {
        "/spec".to_string()
    } else {
        "/spec/template/spec".to_string()
    };
    let labels_at = if obj.kind == "Pod" {
        "/metadata/labels"
    } else {
        "/spec/template/metadata/labels"
    };
    if r.at(&spec).is_none() {
        r.err(&spec, "missing the pod spec".into());
        return Err(r.errors);
    }
    let pod_labels: BTreeMap<String, String> = r
        .labels(labels_at)
        .into_iter()
        .map(|(k, v)| (k.to_string(), v))
        .collect();
    let replicas: Option<u64> = match obj.kind.as_str() {
        "DaemonSet" => None,
        "Pod" => Some(1),
        // The API server's default when `replicas` is absent.
        _ => r.count("/spec/replicas", 1),
    };
    let (pod, request_notes) = pod_request(&mut r, &spec);
    notes.extend(request_notes);

    // Requests of the whole service: replicas × pod.
    let mut totals = [None, None];
    for k in 0..2 {
        totals[k] = match replicas {
            Some(n) => pod[k].map(|p| p.saturating_mul(i128::from(n))),
            None => None,
        };
    }
    if obj.kind == "DaemonSet" {
        let per = |k: usize, unit: &str, div: f64| {
            pod[k].map_or_else(
                || format!("unknown {unit}"),
                |v| format!("{} {unit}", round(v as f64 / div)),
            )
        };
        notes.push((
            NoteCode::DaemonSet,
            format!(
                "one pod per node asking {} and {} per pod; the node count is unknown, so the service's requests are unknown",
                per(0, "cores", MILLI),
                per(1, "GiB", GIB)
            ),
        ));
    }

    // Persistent data and local storage.
    let mut data_bytes: i128 = 0;
    let mut local: Vec<String> = Vec::new();
    let templates = r.list("/spec/volumeClaimTemplates");
    if obj.kind == "StatefulSet" {
        for i in 0..templates.len() {
            let p = format!("/spec/volumeClaimTemplates/{i}");
            let tname = r
                .at(&format!("{p}/metadata/name"))
                .and_then(Value::as_str)
                .unwrap_or("?")
                .to_string();
            let instances = template_instances(obj, &tname, index);
            let (bytes, why_local) = claim(&mut r, &p, index, &instances);
            match (bytes, replicas) {
                (Some(b), Some(n)) => {
                    data_bytes = data_bytes.saturating_add(b.saturating_mul(i128::from(n)))
                }
                _ => notes.push((
                    NoteCode::UnknownData,
                    format!("volume claim template {tname} has no storage request: its size is not counted"),
                )),
            }
            if let Some(w) = why_local {
                local.push(format!("volume claim template {tname}: {w}"));
            }
        }
    }
    let volumes = r.list(&format!("{spec}/volumes"));
    for i in 0..volumes.len() {
        let p = format!("{spec}/volumes/{i}");
        let vname = r
            .at(&format!("{p}/name"))
            .and_then(Value::as_str)
            .unwrap_or("?")
            .to_string();
        for kind in ["hostPath", "local"] {
            if r.at(&format!("{p}/{kind}")).is_some() {
                local.push(format!("volume {vname} is a {kind} volume"));
            }
        }
        let Some(claim_name) = r.string(&format!("{p}/persistentVolumeClaim/claimName")) else {
            continue;
        };
        let claim_key = (obj.ns().to_string(), claim_name.to_string());
        if index.bad_claims.contains(&claim_key) {
            r.err(
                &format!("{p}/persistentVolumeClaim/claimName"),
                format!("uses claim {claim_name}, which could not be read (see its error)"),
            );
            continue;
        }
        match index.claims.get(&claim_key) {
            Some(pvc) => {
                let mut pr = Reader::new(pvc);
                let (bytes, why_local) = claim(&mut pr, "", index, &[]);
                // A claim's errors are its own (reported with it).
                match bytes {
                    Some(b) => data_bytes = data_bytes.saturating_add(b),
                    None => notes.push((
                        NoteCode::UnknownData,
                        format!("claim {claim_name} has no storage request: its size is not counted"),
                    )),
                }
                if let Some(w) = why_local {
                    local.push(format!("claim {claim_name}: {w}"));
                }
            }
            None => notes.push((
                NoteCode::UnknownData,
                format!(
                    "volume {vname} uses claim {claim_name}, which is not in the input: its size is not counted"
                ),
            )),
        }
    }

    // Pinning.
    let mut pinned: Vec<String> = Vec::new();
    if obj.kind == "DaemonSet" {
        pinned.push("DaemonSet runs on every node".into());
    }
    if let Some(node) = r.string(&format!("{spec}/nodeName")) {
        if !node.is_empty() {
            pinned.push(format!("nodeName is {node}"));
        }
    }
    for (k, v) in r.labels(&format!("{spec}/nodeSelector")) {
        if k == HOSTNAME_LABEL {
            pinned.push(format!("nodeSelector {k}={v}"));
        } else if !OS_ARCH_LABELS.contains(&k) {
            notes.push((
                NoteCode::NodeSelector,
                format!("nodeSelector {k}={v}: not pinned, but a destination needs nodes with that label"),
            ));
        }
    }
    let terms_at =
        format!("{spec}/affinity/nodeAffinity/requiredDuringSchedulingIgnoredDuringExecution/nodeSelectorTerms");
    let terms = r.list(&terms_at);
    let mut pins_per_term = Vec::new();
    for t in 0..terms.len() {
        let mut pin = None;
        for (list, key_wanted) in [
            ("matchExpressions", HOSTNAME_LABEL),
            ("matchFields", "metadata.name"),
        ] {
            let exprs = r.list(&format!("{terms_at}/{t}/{list}"));
            for e in 0..exprs.len() {
                let ep = format!("{terms_at}/{t}/{list}/{e}");
                let key = r.string(&format!("{ep}/key")).unwrap_or("");
                let op = r.string(&format!("{ep}/operator")).unwrap_or("");
                let values: Vec<String> = r
                    .list(&format!("{ep}/values"))
                    .iter()
                    .map(|v| v.as_str().map_or_else(|| v.to_string(), str::to_string))
                    .collect();
                if key == key_wanted && op == "In" {
                    pin = Some(format!("{key} in [{}]", values.join(", ")));
                } else if key != key_wanted && !OS_ARCH_LABELS.contains(&key) && !key.is_empty() {
                    // (Avoiding named nodes, `NotIn`, needs nothing of a
                    // destination.)
                    notes.push((
                        NoteCode::NodeSelector,
                        format!(
                            "required node affinity {key} {op} [{}]: not pinned, but a destination needs such nodes",
                            values.join(", ")
                        ),
                    ));
                }
            }
        }
        pins_per_term.push(pin);
    }
    // Terms are alternatives: pinned only when every one of them pins.
    if !pins_per_term.is_empty() && pins_per_term.iter().all(Option::is_some) {
        let each: Vec<String> = pins_per_term.into_iter().flatten().collect();
        pinned.push(format!("required node affinity {}", each.join(" or ")));
    }

    // Owner (a Pod's own labels were read above).
    let meta_labels: BTreeMap<String, String> = if obj.kind == "Pod" {
        pod_labels.clone()
    } else {
        r.labels("/metadata/labels")
            .into_iter()
            .map(|(k, v)| (k.to_string(), v))
            .collect()
    };
    let owner = OWNER_LABELS
        .iter()
        .find_map(|l| {
            meta_labels
                .get(*l)
                .or_else(|| pod_labels.get(*l))
                .filter(|v| !v.trim().is_empty())
                .cloned()
        })
        .or_else(|| obj.namespace.clone());

    let service = ImportedService {
        key: obj.key(),
        id: String::new(),
        owner,
        cpu: totals[0].map(|m| m as f64 / MILLI),
        memory_gib: totals[1].map(|b| b as f64 / GIB),
        data_gb: data_bytes as f64 / GB,
        local_volumes: !local.is_empty(),
        pinned: !pinned.is_empty(),
    };
    for (field, v) in [
        ("cpu", service.cpu),
        ("memory_gib", service.memory_gib),
        ("data_gb", Some(service.data_gb)),
    ] {
        if v.is_some_and(|v| v > MAX_VALUE) {
            r.err(
                "",
                format!(
                    "the service's {field} would be {}, more than an estate accepts ({MAX_VALUE:e}): a typo in a quantity or in replicas?",
                    v.unwrap_or_default()
                ),
            );
        }
    }
    if !r.errors.is_empty() {
        return Err(r.errors);
    }
    for p in &pinned {
        notes.push((NoteCode::Pinned, p.clone()));
    }
    for l in &local {
        notes.push((NoteCode::LocalVolumes, l.clone()));
    }
    Ok(Workload {
        obj: obj.clone(),
        spec,
        pod_labels,
        service,
        notes,
    })
}

/// The largest number an estate accepts (`engine/src/load.rs`,
/// `MAX_NUMBER`): a service beyond it is refused here, at its object,
/// rather than by the loader after the merge.
const MAX_VALUE: f64 = 1e12;

/// Millicores per core.
const MILLI: f64 = 1000.0;
/// Bytes per GiB (the estate's memory unit).
const GIB: f64 = (1u64 << 30) as f64;
/// Bytes per GB (the estate's data unit).
const GB: f64 = 1e9;

/// Round for notes only (never for values written to the estate).
fn round(x: f64) -> f64 {
    (x * 1000.0).round() / 1000.0
}

// ---------------------------------------------------------------------------
// Call edges.

/// The hosts an address names, with the namespace each is in: `None` for
/// a value that is not an address. Accepts `host`, `host:port`,
/// `scheme://[user@]host[:port][/path]`, `host.namespace`,
/// `host.namespace.svc[.cluster-domain]`, and comma-separated lists of
/// those.
fn hosts(value: &str, own_ns: &str) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for part in value.split(',') {
        let mut h = part.trim();
        if let Some((_, rest)) = h.split_once("://") {
            h = rest;
        }
        h = h.split(['/', '?', '#']).next().unwrap_or("");
        if let Some((_, rest)) = h.rsplit_once('@') {
            h = rest;
        }
        if h.starts_with('[') {
            continue; // an IPv6 literal
        }
        if let Some((host, port)) = h.rsplit_once(':') {
            if port.is_empty() || !port.bytes().all(|b| b.is_ascii_alphanumeric()) {
                continue;
            }
            h = host;
        }
        let h = h.trim_end_matches('.').to_ascii_lowercase();
        // A process's own host is no other service.
        if h == "localhost" {
            continue;
        }
        if h.is_empty()
            || !h
                .bytes()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-' || b == b'.')
        {
            continue;
        }
        let labels: Vec<&str> = h.split('.').collect();
        if labels.iter().any(|l| l.is_empty())
            || labels.iter().all(|l| l.bytes().all(|b| b.is_ascii_digit()))
        {
            continue; // malformed, or an IPv4 address
        }
        let named = match labels.as_slice() {
            [name] => (name.to_string(), own_ns.to_string()),
            [name, ns] => (name.to_string(), ns.to_string()),
            [name, ns, "svc", ..] => (name.to_string(), ns.to_string()),
            _ => continue, // a name outside the cluster
        };
        out.push(named);
    }
    out
}

/// Does this variable announce an address? By its name's ending, or by a
/// value shaped like one (a scheme, a port, or a cluster DNS name).
fn looks_like_address(name: &str, value: &str) -> bool {
    let upper = name.to_ascii_uppercase();
    if ADDRESS_SUFFIXES.iter().any(|s| upper.ends_with(s)) {
        return true;
    }
    if value.is_empty() || value.chars().any(char::is_whitespace) {
        return false;
    }
    value.contains("://")
        || value.contains(".svc")
        || value.rsplit_once(':').is_some_and(|(h, p)| {
            !h.is_empty() && !p.is_empty() && p.len() <= 5 && p.bytes().all(|b| b.is_ascii_digit())
        })
}

/// (variable, value) pairs of the running containers (app containers and
/// sidecars; a plain init container's calls are start-up checks, not
/// traffic), literal values and values from ConfigMaps in the input.
fn env_vars(w: &Workload, index: &Index) -> Vec<(String, String)> {
    let v = &w.obj.value;
    let ns = w.obj.ns();
    let mut out = Vec::new();
    let config = |name: &str| {
        index
            .config_maps
            .get(&(ns.to_string(), name.to_string()))
            .and_then(|c| c.value.get("data"))
            .and_then(Value::as_object)
    };
    let mut containers: Vec<&Value> = Vec::new();
    if let Some(Value::Array(cs)) = v.pointer(&format!("{}/containers", w.spec)) {
        containers.extend(cs);
    }
    if let Some(Value::Array(cs)) = v.pointer(&format!("{}/initContainers", w.spec)) {
        containers.extend(
            cs.iter()
                .filter(|c| c.get("restartPolicy").and_then(Value::as_str) == Some("Always")),
        );
    }
    for c in containers {
        if let Some(Value::Array(from)) = c.get("envFrom") {
            for f in from {
                let prefix = f.get("prefix").and_then(Value::as_str).unwrap_or("");
                if let Some(data) = f
                    .pointer("/configMapRef/name")
                    .and_then(Value::as_str)
                    .and_then(config)
                {
                    for (k, val) in data {
                        if let Some(s) = val.as_str() {
                            out.push((format!("{prefix}{k}"), s.to_string()));
                        }
                    }
                }
            }
        }
        if let Some(Value::Array(env)) = c.get("env") {
            for e in env {
                let Some(name) = e.get("name").and_then(Value::as_str) else {
                    continue;
                };
                let value = match e.get("value") {
                    Some(Value::String(s)) => Some(s.clone()),
                    Some(Value::Number(n)) => Some(n.to_string()),
                    _ => e.pointer("/valueFrom/configMapKeyRef").and_then(|r| {
                        let cm = r.get("name").and_then(Value::as_str)?;
                        let key = r.get("key").and_then(Value::as_str)?;
                        config(cm)?.get(key)?.as_str().map(str::to_string)
                    }),
                };
                if let Some(value) = value {
                    out.push((name.to_string(), value));
                }
            }
        }
    }
    out
}

/// Workloads in `ns` whose pod labels include every pair of `selector`.
fn selected<'w>(
    workloads: &'w [Workload],
    ns: &str,
    selector: &BTreeMap<String, String>,
) -> Vec<&'w Workload> {
    if selector.is_empty() {
        return Vec::new();
    }
    workloads
        .iter()
        .filter(|w| {
            w.obj.ns() == ns && selector.iter().all(|(k, v)| w.pod_labels.get(k) == Some(v))
        })
        .collect()
}

/// Flows from every workload's address variables, and notes for
/// addresses that name nothing in the input.
fn edges(
    workloads: &[Workload],
    index: &Index,
) -> (Vec<ImportedFlow>, Vec<(usize, NoteCode, String)>) {
    let mut flows: BTreeMap<(String, String), String> = BTreeMap::new();
    let mut notes = Vec::new();
    for (wi, w) in workloads.iter().enumerate() {
        let ns = w.obj.ns();
        for (var, value) in env_vars(w, index) {
            if !looks_like_address(&var, &value) {
                continue;
            }
            for (host, host_ns) in hosts(&value, ns) {
                let targets: Vec<&Workload> =
                    match index.services.get(&(host_ns.clone(), host.clone())) {
                        Some(selector) => selected(workloads, &host_ns, selector),
                        None => workloads
                            .iter()
                            .filter(|t| t.obj.ns() == host_ns && t.obj.name == host)
                            .collect(),
                    };
                if targets.is_empty() {
                    let what = if index
                        .services
                        .contains_key(&(host_ns.clone(), host.clone()))
                    {
                        format!("Service {host_ns}/{host} selects no workload in the input")
                    } else {
                        format!("{host} (namespace {host_ns}) is neither a Service nor a workload in the input")
                    };
                    notes.push((
                        wi,
                        NoteCode::UnresolvedAddress,
                        format!("{var}={value}: {what}; no flow"),
                    ));
                    continue;
                }
                for t in targets {
                    if t.service.key == w.service.key {
                        continue;
                    }
                    flows
                        .entry((w.service.key.clone(), t.service.key.clone()))
                        .or_insert_with(|| format!("{IMPORTER}:env/{var}"));
                }
            }
        }
    }
    let flows = flows
        .into_iter()
        .map(|((from, to), source)| ImportedFlow { from, to, source })
        .collect();
    (flows, notes)
}

// ---------------------------------------------------------------------------
// Ids.

/// Ids for the workloads, in order: the name when no other workload in
/// the input has it; else `namespace/name`; else `namespace/kind/name`
/// (kind in lower case).
fn ids(workloads: &[Workload]) -> Vec<String> {
    let mut by_name: BTreeMap<&str, Vec<usize>> = BTreeMap::new();
    for (i, w) in workloads.iter().enumerate() {
        by_name.entry(&w.obj.name).or_default().push(i);
    }
    let mut out = vec![String::new(); workloads.len()];
    for group in by_name.values() {
        for &i in group {
            let o = &workloads[i].obj;
            out[i] = if group.len() == 1 {
                o.name.clone()
            } else if group
                .iter()
                .filter(|&&j| workloads[j].obj.ns() == o.ns())
                .count()
                == 1
            {
                format!("{}/{}", o.ns(), o.name)
            } else {
                format!("{}/{}/{}", o.ns(), o.kind.to_ascii_lowercase(), o.name)
            };
        }
    }
    out
}

// ---------------------------------------------------------------------------
// The whole import.

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
    // Errors so far leave objects unidentified: the input is incomplete.
    let complete = errors.is_empty();
    let mut kept = Vec::new();
    // Duplicates: the first one counts.
    let mut first: BTreeMap<(String, String, String), (String, usize)> = BTreeMap::new();
    let mut unique = Vec::with_capacity(objs.len());
    for o in objs {
        if !reads(&o.kind) {
            unique.push(o);
            continue;
        }
        let k = (o.kind.clone(), o.ns().to_string(), o.name.clone());
        if let Some((file, doc)) = first.get(&k) {
            errors.push(o.err(
                "",
                format!("duplicate {} (first in {file} document {doc})", o.label()),
            ));
            continue;
        }
        first.insert(k, (o.file.clone(), o.document));
        unique.push(o);
    }
    let objs = unique;

    let mut imported = Imported {
        importer: IMPORTER,
        ..Imported::default()
    };
    let mut index = Index::default();
    let mut candidates = Vec::new();
    for o in &objs {
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
                } else {
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
                        .and_then(|m| m.get(*a))
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
            k if is_workload(k) => candidates.push(o),
            "ReplicaSet" | "Pod" if !owned_by_controller(o) => candidates.push(o),
            _ => {}
        }
        let counted = match o.kind.as_str() {
            k if is_workload(k) => None,
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
        } else if !reads(&o.kind) && !KNOWN_KINDS.contains(&o.kind.as_str()) {
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
    let mut workloads = Vec::new();
    for o in candidates {
        match workload(o, &index) {
            Ok(w) => workloads.push(w),
            Err(e) => {
                kept.push(o.key());
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
    let (flows, edge_notes) = edges(&workloads, &index);
    imported.flows = flows;
    // Notes in service order, then the input-wide ones.
    let mut order: Vec<usize> = (0..workloads.len()).collect();
    order.sort_by(|&a, &b| workloads[a].service.key.cmp(&workloads[b].service.key));
    let mut service_notes = Vec::new();
    for &i in &order {
        let w = &workloads[i];
        for (code, message) in &w.notes {
            service_notes.push(Note {
                code: *code,
                service: Some(w.service.id.clone()),
                message: message.clone(),
            });
        }
        for (_, code, message) in edge_notes.iter().filter(|(wi, _, _)| *wi == i) {
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

#[cfg(test)]
mod tests {
    use super::*;

    /// A one-pod Deployment with these containers and init containers
    /// (YAML flow sequences), imported: (cpu, memory GiB) and the notes.
    fn pod(containers: &str, inits: &str, extra: &str) -> (Option<f64>, Option<f64>, Vec<String>) {
        let text = format!(
            "kind: Deployment\nmetadata: {{name: w}}\nspec:\n  template:\n    spec:\n{extra}      containers: {containers}\n      initContainers: {inits}\n"
        );
        let i = parse(
            &[Input {
                name: "t.yaml",
                text: &text,
            }],
            Options::default(),
        )
        .unwrap_or_else(|e| panic!("{e:?}\n{text}"));
        let s = &i.services[0];
        let notes = i
            .notes
            .iter()
            .map(|n| format!("[{}] {}", n.code.as_str(), n.message))
            .collect();
        (s.cpu, s.memory_gib, notes)
    }

    fn c(name: &str, cpu: &str, mem: &str) -> String {
        format!("{{name: {name}, resources: {{requests: {{cpu: {cpu}, memory: {mem}}}}}}}")
    }

    fn sidecar(name: &str, cpu: &str, mem: &str) -> String {
        format!("{{name: {name}, restartPolicy: Always, resources: {{requests: {{cpu: {cpu}, memory: {mem}}}}}}}")
    }

    const GI: f64 = 1.0;
    const MI: f64 = 1.0 / 1024.0;

    #[test]
    fn app_containers_add_up() {
        let (cpu, mem, notes) = pod(
            &format!("[{}, {}]", c("a", "100m", "64Mi"), c("b", "250m", "1Gi")),
            "[]",
            "",
        );
        assert_eq!((cpu, mem), (Some(0.35), Some(GI + 64.0 * MI)));
        assert!(notes.is_empty(), "{notes:?}");
    }

    /// An init container larger than the app sets the pod's request; a
    /// smaller one does not (max, not sum). Per resource.
    #[test]
    fn init_containers_take_the_max() {
        let apps = format!("[{}]", c("app", "100m", "1Gi"));
        let (cpu, mem, _) = pod(
            &apps,
            &format!(
                "[{}, {}]",
                c("migrate", "500m", "128Mi"),
                c("wait", "200m", "2Gi")
            ),
            "",
        );
        assert_eq!((cpu, mem), (Some(0.5), Some(2.0 * GI)));
    }

    /// Sidecars (restartPolicy: Always) run beside the app: they add to
    /// it, and to every init container started after them, not before.
    #[test]
    fn sidecars_count_as_running_containers() {
        let apps = format!("[{}]", c("app", "100m", "100Mi"));
        // Sidecar first: the init container runs beside it, 300m + 200m.
        let (cpu, mem, _) = pod(
            &apps,
            &format!(
                "[{}, {}]",
                sidecar("proxy", "200m", "50Mi"),
                c("init", "300m", "10Mi")
            ),
            "",
        );
        assert_eq!((cpu, mem), (Some(0.5), Some(150.0 * MI)));
        // Init first: it runs alone (300m); then app + sidecar (300m).
        let (cpu, mem, _) = pod(
            &apps,
            &format!(
                "[{}, {}]",
                c("init", "300m", "10Mi"),
                sidecar("proxy", "200m", "50Mi")
            ),
            "",
        );
        assert_eq!((cpu, mem), (Some(0.3), Some(150.0 * MI)));
        // A sidecar with no request runs for the pod's life: unknown.
        let (cpu, mem, notes) = pod(&apps, "[{name: proxy, restartPolicy: Always}]", "");
        assert_eq!((cpu, mem), (None, None));
        assert_eq!(
            notes,
            ["[unknown_request] CPU and memory requests unknown: container proxy (sidecar) declares none"]
        );
    }

    /// A plain init container without a request is left out (noted); an app
    /// container without one makes the request unknown, per resource.
    #[test]
    fn missing_requests() {
        let (cpu, mem, notes) = pod(
            &format!("[{}]", c("app", "1", "1Gi")),
            "[{name: check}]",
            "",
        );
        assert_eq!((cpu, mem), (Some(1.0), Some(GI)));
        assert_eq!(
            notes,
            ["[init_container_without_request] init container check declares no CPU or memory request; it runs to completion before the app starts, so it is left out"]
        );
        let (cpu, mem, notes) = pod(
            &format!(
                "[{}, {{name: b, resources: {{requests: {{memory: 1Gi}}}}}}]",
                c("a", "1", "1Gi")
            ),
            "[]",
            "",
        );
        assert_eq!((cpu, mem), (None, Some(2.0 * GI)));
        assert_eq!(
            notes,
            ["[unknown_request] CPU request unknown: container b declares none"]
        );
    }

    /// A limit without a request is the request (Kubernetes defaulting);
    /// the pod overhead of a RuntimeClass adds to the pod.
    #[test]
    fn limits_and_overhead() {
        let (cpu, mem, notes) = pod(
            "[{name: a, resources: {limits: {cpu: 2, memory: 1Gi}, requests: {memory: 512Mi}}}]",
            "[]",
            "      overhead: {cpu: 250m, memory: 120Mi}\n",
        );
        assert_eq!((cpu, mem), (Some(2.25), Some(632.0 * MI)));
        assert_eq!(
            notes,
            ["[request_from_limit] container a declares a CPU limit but no request: the request is the limit, as Kubernetes sets it"]
        );
    }

    #[test]
    fn addresses() {
        let h = |v: &str| hosts(v, "shop");
        let pair = |a: &str, b: &str| (a.to_string(), b.to_string());
        assert_eq!(h("cart:7070"), [pair("cart", "shop")]);
        assert_eq!(h("http://cart"), [pair("cart", "shop")]);
        assert_eq!(
            h("grpc://user:pw@cart.other:50051/x?y"),
            [pair("cart", "other")]
        );
        assert_eq!(
            h("cart.other.svc.cluster.local:80"),
            [pair("cart", "other")]
        );
        assert_eq!(
            h("cart.other.svc.example.internal"),
            [pair("cart", "other")]
        );
        assert_eq!(
            h("kafka-0:9092,kafka-1:9092"),
            [pair("kafka-0", "shop"), pair("kafka-1", "shop")]
        );
        assert_eq!(h("Cart:80"), [pair("cart", "shop")]);
        for none in [
            "api.example.com",
            "10.0.0.1:80",
            "[::1]:80",
            "localhost:8080",
            ":8080",
            "$(HOST)",
            "",
        ] {
            assert!(h(none).is_empty(), "{none}");
        }
        assert!(looks_like_address("CART_SERVICE_ADDR", "cartservice:7070"));
        assert!(looks_like_address("redis_host", "redis"));
        assert!(looks_like_address("mongo", "user-db:27017"));
        assert!(looks_like_address(
            "ZIPKIN",
            "zipkin.jaeger.svc.cluster.local"
        ));
        assert!(!looks_like_address(
            "JAVA_OPTS",
            "-Xms64m -Dfile=file:/dev/urandom"
        ));
        assert!(!looks_like_address("PORT", "8080"));
        assert!(!looks_like_address("MODE", "cart"));
    }
}
