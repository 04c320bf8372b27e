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
                    .map_or_else(|| Value::String(n.to_string().into()), Value::Number)
            }
        }
        Y::String(s) => Value::String(s.into_boxed_str()),
        Y::Sequence(items) => Value::Array(items.into_iter().map(yaml_to_json).collect()),
        Y::Mapping(m) => {
            let mut out = Vec::with_capacity(m.len());
            for (k, v) in m {
                let key = match yaml_to_json(k) {
                    Value::String(s) => s,
                    other => other.to_string().into_boxed_str(),
                };
                out.push((key, yaml_to_json(v)));
            }
            Value::Object(Map::from_entries(out))
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
        // Taken, not cloned: a List from the API is most of an agent's
        // re-sync, and a copy of it doubled the import's memory.
        let items = m
            .into_entries()
            .into_iter()
            .find_map(|(k, v)| match v {
                Value::Array(items) if &*k == "items" => Some(items),
                _ => None,
            })
            .expect("checked above");
        for (i, item) in items.into_vec().into_iter().enumerate() {
            let at = format!("/items/{i}");
            let Value::Object(item) = item else {
                errors.push(err(
                    at,
                    format!("expected a Kubernetes object, found {}", describe(&item)),
                ));
                continue;
            };
            let item = if !item.contains_key("kind") && !item_kind.is_empty() {
                let mut entries = item.into_entries();
                entries.push(("kind".into(), Value::String(item_kind.as_str().into())));
                Map::from_entries(entries)
            } else {
                item
            };
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
        Some(Value::String(k)) if !k.is_empty() => k.to_string(),
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
        Some(Value::String(n)) if !n.is_empty() => n.to_string(),
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
        Some(Value::String(ns)) if !ns.is_empty() => Some(ns.to_string()),
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

    fn map(&mut self, path: &str) -> Option<&'o Map> {
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
        for (k, v) in m.iter() {
            match v {
                Value::String(s) => {
                    out.insert(k, s.to_string());
                }
                // Unquoted YAML scalars (`enabled: true`, `tier: 1`) mean
                // the same text to Kubernetes tooling that quotes them.
                Value::Bool(_) | Value::Number(_) => {
                    out.insert(k, v.to_string());
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
            Value::String(s) => s.to_string(),
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
struct Workload<'o> {
    /// Borrowed: a copy of every workload's object doubled the memory
    /// an import takes (issue 37 item 4).
    obj: &'o Obj,
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
    /// (namespace, variable) → value of the Service links Kubernetes gives
    /// pods in that namespace ([`service_link`]).
    service_links: BTreeMap<(String, String), String>,
    /// Kinds the source could not list (a `Status` 403 in the input, as
    /// `kube_source` hands on a kind the API refused): kind → message.
    unread: BTreeMap<&'static str, String>,
}

/// The kinds whose absence leaves a fact unknown, by the plural an API
/// server's `Status` names them with (`details.kind`).
const UNREADABLE: [(&str, &str); 12] = [
    ("deployments", "Deployment"),
    ("statefulsets", "StatefulSet"),
    ("daemonsets", "DaemonSet"),
    ("replicationcontrollers", "ReplicationController"),
    ("persistentvolumeclaims", "PersistentVolumeClaim"),
    ("persistentvolumes", "PersistentVolume"),
    ("storageclasses", "StorageClass"),
    ("configmaps", "ConfigMap"),
    ("services", "Service"),
    ("pods", "Pod"),
    ("replicasets", "ReplicaSet"),
    ("nodes", "Node"),
];

/// The kinds data size and local storage are read from.
const STORAGE_KINDS: [&str; 3] = ["PersistentVolumeClaim", "PersistentVolume", "StorageClass"];

/// A `Status` object saying a kind could not be listed (403 Forbidden,
/// with the kind's plural in `details.kind`): (kind, message). Any other
/// `Status` is `None`.
fn forbidden_kind(o: &Obj) -> Option<(&'static str, String)> {
    let v = &o.value;
    if v.get("reason").and_then(Value::as_str) != Some("Forbidden") {
        return None;
    }
    let plural = v.pointer("/details/kind").and_then(Value::as_str)?;
    let kind = UNREADABLE.iter().find(|(p, _)| *p == plural)?.1;
    let message = v
        .get("message")
        .and_then(Value::as_str)
        .unwrap_or("forbidden")
        .to_string();
    Some((kind, message))
}

/// "PersistentVolumeClaims and StorageClasses could not be listed (403
/// Forbidden)": why a fact read from `kinds` is unknown.
fn unread_reason(kinds: &[&str]) -> String {
    let names: Vec<String> = kinds
        .iter()
        .map(|k| {
            if k.ends_with("Class") {
                format!("{k}es")
            } else {
                format!("{k}s")
            }
        })
        .collect();
    let list = match names.as_slice() {
        [] => String::new(),
        [one] => one.clone(),
        [init @ .., last] => format!("{} and {last}", init.join(", ")),
    };
    format!("{list} could not be listed (403 Forbidden)")
}

/// The phase of a Pod that has run to completion (`Succeeded`, `Failed`):
/// it holds no room and serves nothing.
fn finished_phase(o: &Obj) -> Option<&str> {
    o.value
        .pointer("/status/phase")
        .and_then(Value::as_str)
        .filter(|p| matches!(*p, "Succeeded" | "Failed"))
}

/// Who wrote a Pod's `spec.nodeName`. A manifest (never stored: no
/// `metadata.uid`) is its author's word. A Pod read from an API server
/// carries the node the scheduler bound it to in the same field, so there
/// it counts only when the author wrote it: in the
/// `kubectl.kubernetes.io/last-applied-configuration` annotation, or in
/// a field manager's entry of `metadata.managedFields` that owns
/// `f:spec.f:nodeName` on the Pod itself (a binding, the scheduler's way,
/// is a subresource and leaves no such entry). `Some` says where the
/// author wrote it (empty for a manifest); `None`: the scheduler's.
fn authored_node_name(pod: &Obj) -> Option<String> {
    let meta = pod.value.get("metadata");
    if meta.and_then(|m| m.get("uid")).is_none() {
        return Some(String::new());
    }
    let applied = meta
        .and_then(|m| m.pointer("/annotations/kubectl.kubernetes.io~1last-applied-configuration"))
        .and_then(Value::as_str)
        .and_then(|t| serde_json::from_str::<Value>(t).ok());
    if applied
        .as_ref()
        .and_then(|a| a.pointer("/spec/nodeName"))
        .and_then(Value::as_str)
        .is_some_and(|n| !n.is_empty())
    {
        return Some("in its last-applied configuration".to_string());
    }
    let managers = meta
        .and_then(|m| m.get("managedFields"))
        .and_then(Value::as_array)
        .unwrap_or(&[]);
    managers
        .iter()
        .find(|m| {
            m.get("subresource")
                .and_then(Value::as_str)
                .is_none_or(str::is_empty)
                && m.pointer("/fieldsV1/f:spec/f:nodeName").is_some()
        })
        .map(|m| {
            format!(
                "written by {}",
                m.get("manager")
                    .and_then(Value::as_str)
                    .unwrap_or("a field manager")
            )
        })
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

fn workload<'o>(obj: &'o Obj, index: &Index) -> Result<Workload<'o>, Vec<ImportError>> {
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
        // "1 core", "0.5 cores"; GiB is the same for one.
        let per = |k: usize, one: &str, many: &str, div: f64| {
            pod[k].map_or_else(
                || format!("unknown {many}"),
                |v| {
                    let x = round(v as f64 / div);
                    format!("{x} {}", if x == 1.0 { one } else { many })
                },
            )
        };
        notes.push((
            NoteCode::DaemonSet,
            format!(
                "one pod per node asking {} and {} per pod; the node count is unknown, so the service's requests are unknown",
                per(0, "core", "cores", MILLI),
                per(1, "GiB", "GiB", GIB)
            ),
        ));
    }

    // Persistent data and local storage.
    let mut data_bytes: i128 = 0;
    let mut local: Vec<String> = Vec::new();
    // Claims (templates or claim volumes) and claims the input lacks
    // because they could not be listed.
    let mut uses_claims = false;
    let mut claims_unseen = false;
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
            uses_claims = true;
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
            None if index.unread.contains_key("PersistentVolumeClaim") => {
                claims_unseen = true;
            }
            None => notes.push((
                NoteCode::UnknownData,
                format!(
                    "volume {vname} uses claim {claim_name}, which is not in the input: its size is not counted"
                ),
            )),
        }
        uses_claims = true;
    }
    // What kinds that were not read leave unknown: the size of claims not
    // seen, and whether data is node-local when nothing read says so.
    let mut unread: BTreeMap<String, String> = BTreeMap::new();
    if claims_unseen {
        unread.insert(
            super::DATA_GB.to_string(),
            unread_reason(&["PersistentVolumeClaim"]),
        );
    }
    let storage_unread: Vec<&str> = STORAGE_KINDS
        .into_iter()
        .filter(|k| index.unread.contains_key(k))
        .collect();
    if uses_claims && local.is_empty() && !storage_unread.is_empty() {
        unread.insert(
            super::LOCAL_VOLUMES.to_string(),
            unread_reason(&storage_unread),
        );
    }

    // Pinning.
    let mut pinned: Vec<String> = Vec::new();
    if obj.kind == "DaemonSet" {
        pinned.push("DaemonSet runs on every node".into());
    }
    if let Some(node) = r.string(&format!("{spec}/nodeName")) {
        if !node.is_empty() {
            if obj.kind != "Pod" {
                pinned.push(format!("nodeName is {node}"));
            } else if let Some(by) = authored_node_name(obj) {
                pinned.push(if by.is_empty() {
                    format!("nodeName is {node}")
                } else {
                    format!("nodeName is {node} ({by})")
                });
            }
            // Else the scheduler bound the Pod there: not pinned.
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
        unread,
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
        obj,
        spec,
        pod_labels,
        service,
        notes,
    })
}

/// The largest number an estate accepts (`engine/src/model/load.rs`,
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

/// Connection-string keys that name a host, compared case-insensitively
/// with runs of spaces read as one: ADO.NET and Npgsql (`Host`, `Server`,
/// `Data Source`, `Address`, `Addr`, `Network Address`), libpq (`host`),
/// JDBC properties (`serverName`).
const HOST_KEYS: [&str; 8] = [
    "host",
    "hostname",
    "server",
    "servername",
    "data source",
    "address",
    "addr",
    "network address",
];

/// Of those, the keys whose value is SQL Server's
/// `[protocol:]host[\instance][,port]`: there a comma starts the port,
/// not a second host (as it does in Npgsql's and libpq's `Host=a,b`).
const SERVER_KEYS: [&str; 5] = [
    "server",
    "data source",
    "address",
    "addr",
    "network address",
];

/// SQL Server's protocol prefixes of a `Server` value (`tcp:db,1433`).
const SERVER_PROTOCOLS: [&str; 4] = ["tcp", "np", "lpc", "admin"];

/// The `host[:port]` items a connection string names, when `value` is
/// one: `key=value` pairs separated by `;` (ADO.NET, Npgsql, JDBC
/// properties), or by spaces when there is no `;` (libpq), at least one of
/// whose keys names a host. `None` when no key names a host.
fn connection_string_hosts(value: &str) -> Option<Vec<&str>> {
    let pieces: Vec<&str> = if value.contains(';') {
        value.split(';').collect()
    } else {
        value.split_whitespace().collect()
    };
    let mut found: Option<Vec<&str>> = None;
    for piece in pieces {
        let Some((key, v)) = piece.split_once('=') else {
            continue;
        };
        let key = key
            .split_whitespace()
            .collect::<Vec<_>>()
            .join(" ")
            .to_ascii_lowercase();
        if !HOST_KEYS.contains(&key.as_str()) {
            continue;
        }
        let out = found.get_or_insert_with(Vec::new);
        let v = v.trim().trim_matches(['"', '\'']);
        if SERVER_KEYS.contains(&key.as_str()) {
            let v = match v.split_once(':') {
                Some((protocol, rest))
                    if SERVER_PROTOCOLS.contains(&protocol.to_ascii_lowercase().as_str()) =>
                {
                    rest
                }
                _ => v,
            };
            let v = v.split('\\').next().unwrap_or("");
            match v.split_once(',') {
                Some((host, port)) if port.trim().bytes().all(|b| b.is_ascii_digit()) => {
                    out.push(host.trim());
                }
                _ => out.extend(v.split(',').map(str::trim)),
            }
        } else {
            out.extend(v.split(',').map(str::trim));
        }
    }
    found
}

/// The host of Oracle's thin JDBC form, `jdbc:oracle:thin:@[//]host:port…`.
fn oracle_thin_host(piece: &str) -> Option<&str> {
    if !piece.get(..12)?.eq_ignore_ascii_case("jdbc:oracle:") {
        return None;
    }
    let (_, rest) = piece.split_once('@')?;
    let rest = rest.trim_start_matches('/');
    Some(rest.split([':', '/']).next().unwrap_or(""))
}

/// The `host[:port]` items an address holds: a connection string; else a
/// comma-separated list of plain `host[:port]` items and URLs
/// (`scheme://[user@]host[:port][/path]`, `jdbc:postgresql://…`
/// included). After a URL's host, items up to its path are more hosts
/// of the same URL (MongoDB's `mongodb://a:27017,b:27017/db`, JDBC
/// fail-over lists); items after its path has begun are its query.
fn address_items(value: &str) -> Vec<&str> {
    if let Some(items) = connection_string_hosts(value) {
        return items;
    }
    let mut out = Vec::new();
    let mut in_url = false;
    let mut authority_open = false;
    for piece in value.split(',') {
        let piece = piece.trim();
        let path_at = |s: &str| s.find(['/', '?', '#', ';']);
        if let Some(i) = piece.find("://") {
            let rest = &piece[i + 3..];
            let end = path_at(rest);
            out.push(&rest[..end.unwrap_or(rest.len())]);
            in_url = true;
            authority_open = end.is_none();
        } else if let Some(host) = oracle_thin_host(piece) {
            out.push(host);
            in_url = true;
            authority_open = false;
        } else if !in_url || authority_open {
            let end = path_at(piece);
            out.push(&piece[..end.unwrap_or(piece.len())]);
            if in_url && end.is_some() {
                authority_open = false;
            }
        }
    }
    out
}

/// The service one `[user@]host[:port]` item names, with its namespace:
/// `name` is in `own_ns`; `name.ns`, `name.ns.svc` and
/// `name.ns.svc.<cluster domain>` in `ns`. IP addresses, `localhost` and
/// names outside the cluster name none.
fn host_name(item: &str, own_ns: &str) -> Option<(String, String)> {
    let mut h = item.trim();
    if let Some((_, rest)) = h.rsplit_once('@') {
        h = rest;
    }
    if h.starts_with('[') {
        return None; // an IPv6 literal
    }
    if let Some((host, port)) = h.rsplit_once(':') {
        if port.is_empty() || !port.bytes().all(|b| b.is_ascii_alphanumeric()) {
            return None;
        }
        h = host;
    }
    let h = h.trim_end_matches('.').to_ascii_lowercase();
    // A process's own host is no other service.
    if h == "localhost"
        || h.is_empty()
        || !h
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-' || b == b'.')
    {
        return None;
    }
    let labels: Vec<&str> = h.split('.').collect();
    if labels.iter().any(|l| l.is_empty())
        || labels.iter().all(|l| l.bytes().all(|b| b.is_ascii_digit()))
    {
        return None; // malformed, or an IPv4 address
    }
    match labels.as_slice() {
        [name] => Some((name.to_string(), own_ns.to_string())),
        [name, ns] | [name, ns, "svc", ..] => Some((name.to_string(), ns.to_string())),
        _ => None, // a name outside the cluster
    }
}

/// The services an address names, each once, with the namespace each is
/// in (see [`address_items`] and [`host_name`]).
fn hosts(value: &str, own_ns: &str) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for item in address_items(value) {
        if let Some(named) = host_name(item, own_ns) {
            if !out.contains(&named) {
                out.push(named);
            }
        }
    }
    out
}

/// Does this variable announce an address? By its name's ending, by being
/// a connection string that names a host, or by a value shaped like an
/// address (a scheme, a port, a cluster DNS name, or JDBC's `jdbc:`).
fn looks_like_address(name: &str, value: &str) -> bool {
    let upper = name.to_ascii_uppercase();
    if ADDRESS_SUFFIXES.iter().any(|s| upper.ends_with(s)) {
        return true;
    }
    if connection_string_hosts(value).is_some() {
        return true;
    }
    if value.is_empty() || value.chars().any(char::is_whitespace) {
        return false;
    }
    value.contains("://")
        || value.contains(".svc")
        || value
            .get(..5)
            .is_some_and(|p| p.eq_ignore_ascii_case("jdbc:"))
        || value.rsplit_once(':').is_some_and(|(h, p)| {
            !h.is_empty() && !p.is_empty() && p.len() <= 5 && p.bytes().all(|b| b.is_ascii_digit())
        })
}

/// One variable of a running container, as Kubernetes sets it.
struct EnvVar {
    name: String,
    /// The value, `$(VAR)` references expanded; a reference that could not
    /// be resolved is left as written, as Kubernetes leaves an undefined one.
    value: String,
    /// Why each reference left in `value` could not be resolved.
    unresolved: Vec<String>,
}

/// What a variable name stands for while a container's variables are read.
#[derive(Clone)]
enum Def {
    /// A value the input holds, with the unresolved references it carries.
    Known(String, Vec<String>),
    /// A value set when the pod runs or kept where the importer does not
    /// read: why (e.g. "comes from Secret db, which the importer does not
    /// read").
    Unknown(String),
}

/// `$(NAME)` references expanded as Kubernetes expands a variable's value
/// (`third_party/forked/golang/expansion` in Kubernetes): a name `lookup`
/// knows is replaced by its value; `$$` is `$`; a reference to an unknown
/// or undefined name, an unclosed `$(`, and a `$` before anything else
/// stay as written. Returns the text and why each reference stayed
/// (`undefined(name)` for a name `lookup` does not have).
fn expand(
    input: &str,
    lookup: &dyn Fn(&str) -> Option<Def>,
    undefined: &dyn Fn(&str) -> String,
) -> (String, Vec<String>) {
    let b = input.as_bytes();
    let mut out = String::with_capacity(input.len());
    let mut why: Vec<String> = Vec::new();
    let mut checkpoint = 0;
    let mut i = 0;
    while i < b.len() {
        if b[i] != b'$' || i + 1 == b.len() {
            i += 1;
            continue;
        }
        out.push_str(&input[checkpoint..i]);
        match b[i + 1] {
            b'$' => {
                out.push('$');
                i += 2;
            }
            b'(' => match input[i + 2..].find(')') {
                Some(len) => {
                    let end = i + 3 + len;
                    let name = &input[i + 2..end - 1];
                    let reason = match lookup(name) {
                        Some(Def::Known(text, carried)) => {
                            out.push_str(&text);
                            why.extend(carried);
                            None
                        }
                        Some(Def::Unknown(reason)) => Some(format!("$({name}) {reason}")),
                        None => Some(undefined(name)),
                    };
                    if let Some(reason) = reason {
                        out.push_str(&input[i..end]);
                        why.push(reason);
                    }
                    i = end;
                }
                None => {
                    out.push_str("$(");
                    i += 2;
                }
            },
            // Not a reference: the `$` stays, what follows is copied.
            _ => {
                out.push('$');
                i += 1;
            }
        }
        checkpoint = i;
    }
    out.push_str(&input[checkpoint..]);
    let mut seen = std::collections::BTreeSet::new();
    why.retain(|w| seen.insert(w.clone()));
    (out, why)
}

/// The variables Kubernetes gives every container of a pod in `ns` for
/// the Services there (unless the pod sets `enableServiceLinks: false`):
/// `<NAME>_SERVICE_HOST` (the Service's address, here its name) and
/// `<NAME>_SERVICE_PORT` (its first port), `NAME` the Service's name in
/// upper case with `-` as `_`; headless Services have none. And the
/// API server's, which every pod gets.
fn service_link(index: &Index, ns: &str, links: bool, name: &str) -> Option<Def> {
    if name.starts_with("KUBERNETES_SERVICE_") || name.starts_with("KUBERNETES_PORT") {
        return Some(Def::Unknown(
            "is the Kubernetes API server's address, which is no service of the estate".into(),
        ));
    }
    if !links {
        return None;
    }
    index
        .service_links
        .get(&(ns.to_string(), name.to_string()))
        .map(|v| Def::Known(v.clone(), Vec::new()))
}

/// Record the Service links of Service `o` ([`service_link`]): none for
/// a headless Service (`clusterIP: None`).
fn add_service_links(o: &Obj, index: &mut Index) {
    if o.value.pointer("/spec/clusterIP").and_then(Value::as_str) == Some("None") {
        return;
    }
    let prefix = o.name.to_ascii_uppercase().replace('-', "_");
    let ns = o.ns().to_string();
    index.service_links.insert(
        (ns.clone(), format!("{prefix}_SERVICE_HOST")),
        o.name.clone(),
    );
    if let Some(port) = o
        .value
        .pointer("/spec/ports/0/port")
        .and_then(Value::as_u64)
    {
        index
            .service_links
            .insert((ns, format!("{prefix}_SERVICE_PORT")), port.to_string());
    }
}

/// A container's variables, in order of first definition; a variable
/// defined again gets the new value in place.
#[derive(Default)]
struct Vars {
    defs: Vec<(String, Def)>,
    at: BTreeMap<String, usize>,
}

impl Vars {
    fn define(&mut self, name: String, d: Def) {
        match self.at.get(&name) {
            Some(&i) => self.defs[i].1 = d,
            None => {
                self.at.insert(name.clone(), self.defs.len());
                self.defs.push((name, d));
            }
        }
    }

    fn get(&self, name: &str) -> Option<Def> {
        self.at.get(name).map(|&i| self.defs[i].1.clone())
    }
}

/// The variables of the running containers (app containers and sidecars;
/// a plain init container's calls are start-up checks, not traffic), as
/// Kubernetes sets them: `envFrom` first (a later source overrides an
/// earlier one), then `env` in order, overriding; each literal `env`
/// value is expanded from the variables defined before it in its
/// container, then the Service links ([`expand`]). Values from ConfigMaps
/// in the input are known, as is `fieldRef: metadata.namespace`; values
/// from Secrets, other fields and ConfigMaps not in the input are unknown,
/// and a reference to one stays unresolved, with why.
fn env_vars(w: &Workload<'_>, index: &Index) -> Vec<EnvVar> {
    let v = &w.obj.value;
    let ns = w.obj.ns();
    // Some(None): the ConfigMap is in the input but holds no data.
    let config = |name: &str| {
        index
            .config_maps
            .get(&(ns.to_string(), name.to_string()))
            .map(|c| c.value.get("data").and_then(Value::as_object))
    };
    let links = v
        .pointer(&format!("{}/enableServiceLinks", w.spec))
        .and_then(Value::as_bool)
        != Some(false);
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
    let text = |v: &Value, key: &str| v.get(key).and_then(Value::as_str).map(str::to_string);
    let mut out = Vec::new();
    for c in containers {
        let container = text(c, "name").unwrap_or_else(|| "?".into());
        let mut vars = Vars::default();
        // envFrom sources whose variables are unknown.
        let mut opaque: Vec<String> = Vec::new();
        if let Some(Value::Array(from)) = c.get("envFrom") {
            for f in from {
                let prefix = f.get("prefix").and_then(Value::as_str).unwrap_or("");
                if let Some(name) = f.get("configMapRef").and_then(|r| text(r, "name")) {
                    match config(&name) {
                        Some(data) => {
                            for (k, val) in data.into_iter().flatten() {
                                if let Some(s) = val.as_str() {
                                    vars.define(
                                        format!("{prefix}{k}"),
                                        Def::Known(s.to_string(), Vec::new()),
                                    );
                                }
                            }
                        }
                        None => opaque.push(format!("ConfigMap {name}")),
                    }
                }
                if let Some(name) = f.get("secretRef").and_then(|r| text(r, "name")) {
                    opaque.push(format!("Secret {name}"));
                }
            }
        }
        if let Some(Value::Array(env)) = c.get("env") {
            for e in env {
                let Some(name) = text(e, "name") else {
                    continue;
                };
                let literal = match e.get("value") {
                    Some(Value::String(s)) => Some(s.to_string()),
                    Some(Value::Number(n)) => Some(n.to_string()),
                    Some(Value::Bool(b)) => Some(b.to_string()),
                    _ => None,
                };
                let from = e.get("valueFrom");
                let d = match (literal, from) {
                    (Some(s), _) if !s.is_empty() => {
                        let lookup =
                            |r: &str| vars.get(r).or_else(|| service_link(index, ns, links, r));
                        let undefined = |r: &str| {
                            let unless = if opaque.is_empty() {
                                String::new()
                            } else {
                                format!(
                                    " (or only in {}, which the importer cannot read)",
                                    opaque.join(" or ")
                                )
                            };
                            format!(
                                "$({r}) is not defined before it in container {container}{unless}, and Kubernetes leaves an undefined reference as written: it names no service"
                            )
                        };
                        let (value, why) = expand(&s, &lookup, &undefined);
                        Def::Known(value, why)
                    }
                    (_, Some(from)) => {
                        if let Some(r) = from.get("configMapKeyRef") {
                            let (cm, key) = (
                                text(r, "name").unwrap_or_default(),
                                text(r, "key").unwrap_or_default(),
                            );
                            let optional = r.get("optional").and_then(Value::as_bool) == Some(true);
                            match config(&cm) {
                                Some(data) => match data.and_then(|d| d.get(&key)).and_then(Value::as_str) {
                                    Some(s) => Def::Known(s.to_string(), Vec::new()),
                                    // An optional key that is absent sets no variable.
                                    None if optional => continue,
                                    None => Def::Unknown(format!("comes from key {key} of ConfigMap {cm}, which has no such key")),
                                },
                                None => Def::Unknown(format!("comes from ConfigMap {cm}, which is not in the input")),
                            }
                        } else if let Some(r) = from.get("secretKeyRef") {
                            Def::Unknown(format!(
                                "comes from Secret {}, which the importer does not read",
                                text(r, "name").unwrap_or_default()
                            ))
                        } else if let Some(r) = from.get("fieldRef") {
                            match text(r, "fieldPath").as_deref() {
                                Some("metadata.namespace") => {
                                    Def::Known(ns.to_string(), Vec::new())
                                }
                                path => Def::Unknown(format!(
                                    "is set from the pod's {} when it runs",
                                    path.unwrap_or("?")
                                )),
                            }
                        } else if let Some(r) = from.get("resourceFieldRef") {
                            Def::Unknown(format!(
                                "is set from the container's {} when it runs",
                                text(r, "resource").unwrap_or_default()
                            ))
                        } else {
                            continue;
                        }
                    }
                    _ => Def::Known(String::new(), Vec::new()),
                };
                vars.define(name, d);
            }
        }
        for (name, d) in vars.defs {
            if let Def::Known(value, unresolved) = d {
                out.push(EnvVar {
                    name,
                    value,
                    unresolved,
                });
            }
        }
    }
    out
}

/// Workloads in `ns` whose pod labels include every pair of `selector`.
fn selected<'w>(
    workloads: &'w [Workload<'w>],
    ns: &str,
    selector: &BTreeMap<String, String>,
) -> Vec<&'w Workload<'w>> {
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

/// What the import could not read, so that a note about an address never
/// says "no flow" where the merge keeps one.
#[derive(Default)]
struct Unread<'a> {
    /// False when part of the input could not be read at all: the merge
    /// then removes no flow.
    complete: bool,
    /// Workloads skipped, with their pod labels as written: the merge
    /// keeps their entries and every flow touching them.
    workloads: Vec<(&'a Obj, BTreeMap<String, String>)>,
    /// Services skipped, by (namespace, name).
    services: std::collections::BTreeSet<(String, String)>,
}

impl Unread<'_> {
    /// The pod labels of a skipped workload, read leniently.
    fn labels_of(o: &Obj) -> BTreeMap<String, String> {
        let at = if o.kind == "Pod" {
            "/metadata/labels"
        } else {
            "/spec/template/metadata/labels"
        };
        o.value
            .pointer(at)
            .and_then(Value::as_object)
            .into_iter()
            .flatten()
            .filter_map(|(k, v)| Some((k.to_string(), v.as_str()?.to_string())))
            .collect()
    }

    /// Why an address names nothing imported, with what becomes of flows.
    fn why_nothing(&self, index: &Index, host: &str, host_ns: &str) -> String {
        let key = (host_ns.to_string(), host.to_string());
        let skipped = match index.services.get(&key) {
            Some(selector) => self.workloads.iter().find(|(o, labels)| {
                o.ns() == host_ns
                    && !selector.is_empty()
                    && selector.iter().all(|(k, v)| labels.get(k) == Some(v))
            }),
            None => self
                .workloads
                .iter()
                .find(|(o, _)| o.ns() == host_ns && o.name == host),
        };
        if let Some((o, _)) = skipped {
            return format!(
                "{} could not be read (see Skipped): its flows are kept as an earlier import wrote them",
                o.label()
            );
        }
        if self.services.contains(&key) {
            return format!("Service {host_ns}/{host} could not be read (see Skipped); no flow");
        }
        let what = if index.services.contains_key(&key) {
            format!("Service {host_ns}/{host} selects no workload")
        } else {
            format!("{host} (namespace {host_ns}) is neither a Service nor a workload")
        };
        if self.complete {
            format!("{what} in the input; no flow")
        } else {
            format!(
                "{what} in what could be read; part of the input could not be read, so the flows an earlier import wrote are kept"
            )
        }
    }
}

/// Flows from every workload's address variables, and notes for
/// addresses that name nothing in the input and references that could
/// not be resolved.
fn edges(
    workloads: &[Workload<'_>],
    index: &Index,
    unread: &Unread,
) -> (Vec<ImportedFlow>, Vec<(usize, NoteCode, String)>) {
    let mut flows: BTreeMap<(String, String), String> = BTreeMap::new();
    let mut notes = Vec::new();
    for (wi, w) in workloads.iter().enumerate() {
        let ns = w.obj.ns();
        for var in env_vars(w, index) {
            if !looks_like_address(&var.name, &var.value) {
                continue;
            }
            if !var.unresolved.is_empty() {
                notes.push((
                    wi,
                    NoteCode::UnresolvedAddress,
                    format!("{}={}: {}", var.name, var.value, var.unresolved.join("; ")),
                ));
            }
            for (host, host_ns) in hosts(&var.value, ns) {
                let targets: Vec<&Workload<'_>> =
                    match index.services.get(&(host_ns.clone(), host.clone())) {
                        Some(selector) => selected(workloads, &host_ns, selector),
                        None => workloads
                            .iter()
                            .filter(|t| t.obj.ns() == host_ns && t.obj.name == host)
                            .collect(),
                    };
                if targets.is_empty() {
                    notes.push((
                        wi,
                        NoteCode::UnresolvedAddress,
                        format!(
                            "{}={}: {}",
                            var.name,
                            var.value,
                            unread.why_nothing(index, &host, &host_ns)
                        ),
                    ));
                    continue;
                }
                for t in targets {
                    if t.service.key == w.service.key {
                        continue;
                    }
                    flows
                        .entry((w.service.key.clone(), t.service.key.clone()))
                        .or_insert_with(|| format!("{IMPORTER}:env/{}", var.name));
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
fn ids(workloads: &[Workload<'_>]) -> Vec<String> {
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
                    add_service_links(o, &mut index);
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
            k if is_workload(k) => candidates.push(o),
            "Pod" if finished_phase(o).is_some() => {}
            "ReplicaSet" | "Pod" if !owned_by_controller(o) => candidates.push(o),
            _ => {}
        }
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
    // Kinds not read: what they leave unknown beyond data and storage
    // (those are said per service).
    for (&kind, message) in &index.unread {
        let what = match kind {
            "ConfigMap" => "addresses held in ConfigMap values are unknown, so no flow is derived from them; flows an earlier import wrote are kept",
            "Service" => "addresses naming a Service cannot be resolved to its workloads; flows an earlier import wrote are kept",
            k if STORAGE_KINDS.contains(&k) || k == "Node" => continue,
            _ => "the services an earlier import made of them are kept",
        };
        imported.notes.push(Note {
            code: NoteCode::IncompleteInput,
            service: None,
            message: format!("{} ({message}): {what}", unread_reason(&[kind])),
        });
    }
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

    /// Connection strings and multi-host URLs name their hosts; a URL's
    /// query names none.
    #[test]
    fn connection_strings() {
        let h = |v: &str| hosts(v, "shop");
        let names = |list: &[&str]| -> Vec<(String, String)> {
            list.iter()
                .map(|n| match n.split_once('.') {
                    Some((name, ns)) => (name.to_string(), ns.to_string()),
                    None => (n.to_string(), "shop".to_string()),
                })
                .collect()
        };
        for (value, want) in [
            (
                "Host=postgresql;Port=5432;Database=x;Username=u",
                vec!["postgresql"],
            ),
            (
                "host=pg-0,pg-1:5433;Target Session Attributes=primary",
                vec!["pg-0", "pg-1"],
            ),
            (
                "Server=tcp:sql.data,1433;Database=x;User Id=sa",
                vec!["sql.data"],
            ),
            (
                "Data Source=mssql\\SQLEXPRESS;Initial Catalog=x",
                vec!["mssql"],
            ),
            ("Server=mssql;Database=x", vec!["mssql"]),
            ("SERVER = mssql , 1433 ; Database=x", vec!["mssql"]),
            ("host=pg port=5432 dbname=x", vec!["pg"]),
            (
                "jdbc:postgresql://ledger-db:5432/postgresdb",
                vec!["ledger-db"],
            ),
            (
                "jdbc:postgresql://pg-0:5432,pg-1:5432/db?targetServerType=primary",
                vec!["pg-0", "pg-1"],
            ),
            ("jdbc:sqlserver://mssql:1433;databaseName=x", vec!["mssql"]),
            (
                "jdbc:sqlserver://;serverName=mssql;databaseName=x",
                vec!["mssql"],
            ),
            ("jdbc:oracle:thin:@//oracle:1521/ORCL", vec!["oracle"]),
            ("jdbc:oracle:thin:@oracle.db:1521:ORCL", vec!["oracle.db"]),
            (
                "mongodb://u:p@mongo-0:27017,mongo-1.data:27017/db?replicaSet=rs0",
                vec!["mongo-0", "mongo-1.data"],
            ),
            (
                "PLAINTEXT://kafka-0:9092,PLAINTEXT://kafka-1:9092",
                vec!["kafka-0", "kafka-1"],
            ),
            (
                "http://collector:4318/v1/traces?x=cart,orders",
                vec!["collector"],
            ),
            (
                "redis-cart:6379,password=secret,ssl=false",
                vec!["redis-cart"],
            ),
            ("Server=tcp:db.example.com,1433", vec![]),
            ("jdbc:h2:mem:test", vec![]),
        ] {
            assert_eq!(h(value), names(&want), "{value}");
        }
        assert!(looks_like_address(
            "ConnectionStrings__Db",
            "Host=db;Port=5432"
        ));
        assert!(looks_like_address("PGSERVICE", "host=db port=5432"));
        assert!(looks_like_address("SPRING_DATASOURCE", "jdbc:h2:mem:x"));
        assert!(!looks_like_address("JAVA_OPTS", "-Xmx1g -Dhost=db"));
    }

    /// `$(VAR)` expansion, byte for byte Kubernetes' rules.
    #[test]
    fn expansion() {
        let defs: BTreeMap<&str, Def> = [
            ("A", Def::Known("x".into(), Vec::new())),
            ("C", Def::Known("$(Z)".into(), vec!["Z is carried".into()])),
            ("S", Def::Unknown("comes from a Secret".into())),
        ]
        .into();
        let lookup = |n: &str| defs.get(n).cloned();
        let undefined = |n: &str| format!("{n} undefined");
        let e = |s: &str| {
            let (text, why) = expand(s, &lookup, &undefined);
            (text, why.join("|"))
        };
        let r = |t: &str, w: &str| (t.to_string(), w.to_string());
        assert_eq!(e("http://$(A):1"), r("http://x:1", ""));
        assert_eq!(e("$(A)$(A)"), r("xx", ""));
        assert_eq!(e("$$(A)"), r("$(A)", ""));
        assert_eq!(e("$$$(A)"), r("$x", ""));
        assert_eq!(e("$$$$"), r("$$", ""));
        assert_eq!(e("$(B)/$(A)/$(B)"), r("$(B)/x/$(B)", "B undefined"));
        assert_eq!(e("$(S)"), r("$(S)", "$(S) comes from a Secret"));
        assert_eq!(e("$(C)"), r("$(Z)", "Z is carried"));
        assert_eq!(e("$(A"), r("$(A", ""));
        assert_eq!(e("a$b$"), r("a$b$", ""));
        assert_eq!(e("$"), r("$", ""));
        assert_eq!(e("$()"), r("$()", " undefined"));
        assert_eq!(e("é$(A)ü$é"), r("éxü$é", ""));
    }
}
