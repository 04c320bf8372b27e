//! Workloads: what one workload object says about its service —
//! requests, data, local storage, pinning and owner.

use super::*;

/// What the walk over one workload found (before ids and edges).
pub(super) struct Workload<'o> {
    /// Borrowed: a copy of every workload's object doubled the memory
    /// an import takes (issue 37 item 4).
    pub(super) obj: &'o Obj,
    /// Pointer of the pod spec within the object.
    pub(super) spec: String,
    /// Labels of the pods (what a Service selects).
    pub(super) pod_labels: BTreeMap<String, String>,
    pub(super) service: ImportedService,
    pub(super) notes: Vec<(NoteCode, String)>,
}

/// Everything besides workloads that the walk consults.
#[derive(Default)]
pub(super) struct Index<'a> {
    /// (namespace, name) → the Service's selector.
    pub(super) services: BTreeMap<(String, String), BTreeMap<String, String>>,
    pub(super) claims: BTreeMap<(String, String), &'a Obj>,
    /// Claims that could not be read (their errors are reported once).
    pub(super) bad_claims: std::collections::BTreeSet<(String, String)>,
    pub(super) volumes: BTreeMap<String, &'a Obj>,
    /// (namespace, claim name) → the PersistentVolume whose
    /// `spec.claimRef` names that claim (bound, or reserved for it).
    pub(super) claim_refs: BTreeMap<(String, String), &'a Obj>,
    pub(super) storage_classes: BTreeMap<String, &'a Obj>,
    /// The StorageClass marked default, when the input has one.
    pub(super) default_class: Option<String>,
    pub(super) config_maps: BTreeMap<(String, String), &'a Obj>,
    /// (namespace, variable) → value of the Service links Kubernetes gives
    /// pods in that namespace ([`service_link`]).
    pub(super) service_links: BTreeMap<(String, String), String>,
    /// Kinds the source could not list (a `Status` 403 in the input, as
    /// `kube_source` hands on a kind the API refused): kind → message.
    pub(super) unread: BTreeMap<&'static str, String>,
}

/// The kinds whose absence leaves a fact unknown, by the plural an API
/// server's `Status` names them with (`details.kind`).
pub(super) const UNREADABLE: [(&str, &str); 12] = [
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
pub(super) const STORAGE_KINDS: [&str; 3] =
    ["PersistentVolumeClaim", "PersistentVolume", "StorageClass"];

/// A `Status` object saying a kind could not be listed (403 Forbidden,
/// with the kind's plural in `details.kind`): (kind, message). Any other
/// `Status` is `None`.
pub(super) fn forbidden_kind(o: &Obj) -> Option<(&'static str, String)> {
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
pub(super) fn unread_reason(kinds: &[&str]) -> String {
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
pub(super) fn finished_phase(o: &Obj) -> Option<&str> {
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
pub(super) fn authored_node_name(pod: &Obj) -> Option<String> {
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

pub(super) fn owned_by_controller(obj: &Obj) -> bool {
    obj.value
        .pointer("/metadata/ownerReferences")
        .and_then(Value::as_array)
        .is_some_and(|a| !a.is_empty())
}

pub(super) fn storage_is_local(class: Option<&str>) -> bool {
    class.is_some_and(|c| {
        let c = c.to_ascii_lowercase();
        LOCAL_STORAGE_HINTS.iter().any(|h| c.contains(h))
    })
}

/// The PersistentVolume a claim is bound to, the way Kubernetes binds
/// them: the claim's `spec.volumeName`, else a volume whose
/// `spec.claimRef` names the claim.
pub(super) fn bound_volume<'a>(claim: &Obj, index: &Index<'a>) -> Option<&'a Obj> {
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
pub(super) fn local_kind(pv: &Obj) -> Option<&'static str> {
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
pub(super) fn claim(
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
pub(super) fn template_instances<'a>(sts: &Obj, template: &str, index: &Index<'a>) -> Vec<&'a Obj> {
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

/// One workload object read: its pod labels, requests, data, local
/// storage, pinning and owner; every error found, or none.
pub(super) fn workload<'o>(obj: &'o Obj, index: &Index) -> Result<Workload<'o>, Vec<ImportError>> {
    let mut r = Reader::new(obj);
    let mut notes: Vec<(NoteCode, String)> = Vec::new();
    let (spec, labels_at) = if obj.kind == "Pod" {
        ("/spec".to_string(), "/metadata/labels")
    } else {
        (
            "/spec/template/spec".to_string(),
            "/spec/template/metadata/labels",
        )
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
    let totals = requests(&mut r, &spec, replicas, &mut notes);
    let storage = storage(&mut r, &spec, index, replicas, &mut notes);
    let pinned = pinning(&mut r, &spec, &mut notes);
    let owner = owner(&mut r, &pod_labels);

    let service = ImportedService {
        key: obj.key(),
        id: String::new(),
        owner,
        cpu: totals[0].map(|m| m as f64 / MILLI),
        memory_gib: totals[1].map(|b| b as f64 / GIB),
        data_gb: storage.data_bytes as f64 / GB,
        local_volumes: !storage.local.is_empty(),
        pinned: !pinned.is_empty(),
        unread: storage.unread,
    };
    in_range(&mut r, &service);
    if !r.errors.is_empty() {
        return Err(r.errors);
    }
    for p in pinned {
        notes.push((NoteCode::Pinned, p));
    }
    for l in storage.local {
        notes.push((NoteCode::LocalVolumes, l));
    }
    Ok(Workload {
        obj,
        spec,
        pod_labels,
        service,
        notes,
    })
}

/// The requests of the whole service, replicas × pod (unknown for a
/// DaemonSet, whose node count the input does not tell: a note says
/// what one pod asks).
fn requests(
    r: &mut Reader,
    spec: &str,
    replicas: Option<u64>,
    notes: &mut Vec<(NoteCode, String)>,
) -> [Amount; 2] {
    let (pod, request_notes) = pod_request(r, spec);
    notes.extend(request_notes);
    let mut totals = [None, None];
    for k in 0..2 {
        totals[k] = match replicas {
            Some(n) => pod[k].map(|p| p.saturating_mul(i128::from(n))),
            None => None,
        };
    }
    if r.obj.kind == "DaemonSet" {
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
    totals
}

/// A workload's persistent data and local storage.
#[derive(Default)]
struct Storage {
    /// Bytes of data whose size is known.
    data_bytes: i128,
    /// Why its data is node-local, one line per reason.
    local: Vec<String>,
    /// Claims (templates or claim volumes) are used.
    uses_claims: bool,
    /// A claim the input lacks because claims could not be listed.
    claims_unseen: bool,
    /// What kinds that were not read leave unknown (estate field → why).
    unread: BTreeMap<String, String>,
}

/// Persistent data and local storage: a StatefulSet's claim templates,
/// then the pod's volumes.
fn storage(
    r: &mut Reader,
    spec: &str,
    index: &Index,
    replicas: Option<u64>,
    notes: &mut Vec<(NoteCode, String)>,
) -> Storage {
    let mut s = Storage::default();
    claim_templates(r, index, replicas, &mut s, notes);
    volumes(r, spec, index, &mut s, notes);
    // What kinds that were not read leave unknown: the size of claims not
    // seen, and whether data is node-local when nothing read says so.
    if s.claims_unseen {
        s.unread.insert(
            super::super::DATA_GB.to_string(),
            unread_reason(&["PersistentVolumeClaim"]),
        );
    }
    let storage_unread: Vec<&str> = STORAGE_KINDS
        .into_iter()
        .filter(|k| index.unread.contains_key(k))
        .collect();
    if s.uses_claims && s.local.is_empty() && !storage_unread.is_empty() {
        s.unread.insert(
            super::super::LOCAL_VOLUMES.to_string(),
            unread_reason(&storage_unread),
        );
    }
    s
}

/// A StatefulSet's volume claim templates: each replica's claim (the
/// field is checked on every kind, only a StatefulSet's is read).
fn claim_templates(
    r: &mut Reader,
    index: &Index,
    replicas: Option<u64>,
    s: &mut Storage,
    notes: &mut Vec<(NoteCode, String)>,
) {
    let obj = r.obj;
    let templates = r.list("/spec/volumeClaimTemplates");
    if obj.kind != "StatefulSet" {
        return;
    }
    for i in 0..templates.len() {
        let p = format!("/spec/volumeClaimTemplates/{i}");
        let tname = r
            .at(&format!("{p}/metadata/name"))
            .and_then(Value::as_str)
            .unwrap_or("?")
            .to_string();
        let instances = template_instances(obj, &tname, index);
        s.uses_claims = true;
        let (bytes, why_local) = claim(r, &p, index, &instances);
        match (bytes, replicas) {
            (Some(b), Some(n)) => {
                s.data_bytes = s.data_bytes.saturating_add(b.saturating_mul(i128::from(n)))
            }
            _ => notes.push((
                NoteCode::UnknownData,
                format!(
                    "volume claim template {tname} has no storage request: its size is not counted"
                ),
            )),
        }
        if let Some(w) = why_local {
            s.local.push(format!("volume claim template {tname}: {w}"));
        }
    }
}

/// The pod's volumes: node-local kinds, and the claims they use.
fn volumes(
    r: &mut Reader,
    spec: &str,
    index: &Index,
    s: &mut Storage,
    notes: &mut Vec<(NoteCode, String)>,
) {
    let obj = r.obj;
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
                s.local.push(format!("volume {vname} is a {kind} volume"));
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
                    Some(b) => s.data_bytes = s.data_bytes.saturating_add(b),
                    None => notes.push((
                        NoteCode::UnknownData,
                        format!("claim {claim_name} has no storage request: its size is not counted"),
                    )),
                }
                if let Some(w) = why_local {
                    s.local.push(format!("claim {claim_name}: {w}"));
                }
            }
            None if index.unread.contains_key("PersistentVolumeClaim") => {
                s.claims_unseen = true;
            }
            None => notes.push((
                NoteCode::UnknownData,
                format!(
                    "volume {vname} uses claim {claim_name}, which is not in the input: its size is not counted"
                ),
            )),
        }
        s.uses_claims = true;
    }
}

/// Why the workload is pinned to its nodes, one line per reason (none:
/// not pinned); node constraints that do not pin are noted.
fn pinning(r: &mut Reader, spec: &str, notes: &mut Vec<(NoteCode, String)>) -> Vec<String> {
    let obj = r.obj;
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
    if let Some(pin) = node_affinity(r, spec, notes) {
        pinned.push(pin);
    }
    pinned
}

/// Required node affinity that pins: every term (they are alternatives)
/// names nodes or hostnames.
fn node_affinity(
    r: &mut Reader,
    spec: &str,
    notes: &mut Vec<(NoteCode, String)>,
) -> Option<String> {
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
        return Some(format!("required node affinity {}", each.join(" or ")));
    }
    None
}

/// The owner: from a label of the object or its pods, else the
/// namespace (a Pod's own labels are its pod labels).
fn owner(r: &mut Reader, pod_labels: &BTreeMap<String, String>) -> Option<String> {
    let obj = r.obj;
    let meta_labels: BTreeMap<String, String> = if obj.kind == "Pod" {
        pod_labels.clone()
    } else {
        r.labels("/metadata/labels")
            .into_iter()
            .map(|(k, v)| (k.to_string(), v))
            .collect()
    };
    OWNER_LABELS
        .iter()
        .find_map(|l| {
            meta_labels
                .get(*l)
                .or_else(|| pod_labels.get(*l))
                .filter(|v| !v.trim().is_empty())
                .cloned()
        })
        .or_else(|| obj.namespace.clone())
}

/// Refuse, at its object, a service whose figures an estate would not
/// accept.
fn in_range(r: &mut Reader, service: &ImportedService) {
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
}

/// The largest number an estate accepts (`engine/src/model/load.rs`,
/// `MAX_NUMBER`): a service beyond it is refused here, at its object,
/// rather than by the loader after the merge.
pub(super) const MAX_VALUE: f64 = 1e12;

/// Millicores per core.
pub(super) const MILLI: f64 = 1000.0;
/// Bytes per GiB (the estate's memory unit).
pub(super) const GIB: f64 = (1u64 << 30) as f64;
/// Bytes per GB (the estate's data unit).
pub(super) const GB: f64 = 1e9;

/// Round for notes only (never for values written to the estate).
pub(super) fn round(x: f64) -> f64 {
    (x * 1000.0).round() / 1000.0
}
