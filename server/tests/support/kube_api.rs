//! A fake Kubernetes API server on loopback, for the tests that read a
//! cluster through the real `kube` client (`kubernetes_api.rs`, the
//! agent's re-sync; `outcomes.rs`, a move noticed by a Kubernetes
//! import). Included with `#[path = "support/kube_api.rs"] mod kube_api;`.
//!
//! The fake holds the shared fixtures (`shared/fixtures/kubernetes/`), or
//! the objects a test gives it ([`Script::objects`]), as an API server
//! stores them once applied — namespace set, uid and resourceVersion
//! added, plus the ReplicaSets and Pods the Deployments make and a few
//! Nodes — and answers list requests in the shape a real one does:
//! `DeploymentList` with `metadata.resourceVersion`, `metadata.continue`
//! and `remainingItemCount`, items without their `apiVersion`/`kind`,
//! `limit` honoured, `Status` objects for errors. It can refuse kinds
//! (403 Forbidden, changeable while it runs), expire a continue token
//! (410 Expired), say who the credentials are (`SelfSubjectReview`), and
//! it logs every request with its `User-Agent`.
//!
//! Where each shape comes from: the `Status` bodies of 401, 403 and 410
//! are the ones a real `kube-apiserver` (v1.24) answered, read from
//! `shared/fixtures/kubernetes-api/` (403 with the plural and user put
//! in, as the server words it); list envelopes (`kind`, `apiVersion`,
//! `metadata.resourceVersion`, `continue`, `remainingItemCount`, items
//! without kind) follow `deployments-page1.json`; the two Pods a real
//! scheduler-less server held — `scheduled-probe` bound by a `Binding`,
//! `finished-job` Succeeded — are served as recorded (`pods.json`), and
//! three are derived from them (Failed; `nodeName` in the last-applied
//! configuration; `nodeName` owned by `kubectl-create` in managedFields).
//! The recorded server had no claims, volumes or classes, so the hotel
//! reservation's databases (a claim bound to a hostPath volume each)
//! follow the Kubernetes API reference (core/v1 PersistentVolumeClaim,
//! PersistentVolume; storage.k8s.io/v1 StorageClass), as does the
//! `SelfSubjectReview` answer (authentication.k8s.io/v1, Kubernetes ≥
//! 1.28; the recorded 1.24 server serves none, the fake's default).

#![allow(dead_code)]

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use axum::extract::{Query, State};
use axum::http::{HeaderMap, StatusCode, Uri};
use axum::response::{IntoResponse, Response};
use axum::{Json, Router};
use serde_json::{json, Value};

/// Serve `app` on a free loopback port for the rest of the test.
async fn serve(app: Router) -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr: SocketAddr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    format!("http://{addr}")
}

/// The bearer token the fake API server accepts (the kubeconfig's user).
pub const KUBE_TOKEN: &str = "fake-kube-reader-token-0123456789";

/// The kinds the fake serves: kind, apiVersion, plural, namespaced.
pub const KINDS: [(&str, &str, &str, bool); 12] = [
    ("Deployment", "apps/v1", "deployments", true),
    ("StatefulSet", "apps/v1", "statefulsets", true),
    ("DaemonSet", "apps/v1", "daemonsets", true),
    ("ReplicaSet", "apps/v1", "replicasets", true),
    (
        "ReplicationController",
        "v1",
        "replicationcontrollers",
        true,
    ),
    ("Pod", "v1", "pods", true),
    ("Service", "v1", "services", true),
    ("ConfigMap", "v1", "configmaps", true),
    (
        "PersistentVolumeClaim",
        "v1",
        "persistentvolumeclaims",
        true,
    ),
    ("PersistentVolume", "v1", "persistentvolumes", false),
    ("StorageClass", "storage.k8s.io/v1", "storageclasses", false),
    ("Node", "v1", "nodes", false),
];

/// `shared/fixtures/kubernetes/<name>`, found by walking up from this
/// crate (a worktree is deeper than the main checkout).
pub fn fixture_path(name: &str) -> PathBuf {
    let start = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    for dir in start.ancestors() {
        let path = dir.join("shared/fixtures/kubernetes").join(name);
        if path.is_file() {
            return path;
        }
    }
    panic!(
        "shared/fixtures/kubernetes/{name} not found above {}",
        start.display()
    );
}

pub const FIXTURES: [&str; 2] = ["online-boutique.yaml", "sock-shop.yaml"];

/// The documents of a fixture as JSON values (empty documents dropped).
pub fn documents(name: &str) -> Vec<Value> {
    use serde::Deserialize;
    let text = std::fs::read_to_string(fixture_path(name)).unwrap();
    serde_yaml::Deserializer::from_str(&text)
        .map(|d| serde_json::to_value(serde_yaml::Value::deserialize(d).unwrap()).unwrap())
        .filter(|v: &Value| v.is_object())
        .collect()
}

pub fn namespaced(kind: &str) -> Option<bool> {
    KINDS.iter().find(|k| k.0 == kind).map(|k| k.3)
}

/// A fixture's documents as `kubectl apply -f` leaves them in the API
/// server: a namespaced object that names no namespace is in `default`.
/// (Kinds the fake does not serve are left as they are.)
pub fn applied(mut v: Value) -> Value {
    let kind = v["kind"].as_str().unwrap_or_default().to_string();
    if namespaced(&kind) == Some(true) && v.pointer("/metadata/namespace").is_none() {
        v["metadata"]["namespace"] = json!("default");
    }
    v
}

// ---- the fake API server --------------------------------------------------

/// What to do wrong.
#[derive(Clone, Default)]
pub struct Script {
    /// Plurals answered 403 Forbidden from the start.
    pub forbidden: &'static [&'static str],
    /// Serve the hotel reservation's six MongoDB Deployments, each with
    /// a claim bound to a hostPath PersistentVolume, and its frontend.
    pub hotel: bool,
    /// Serve the Pods recorded from a real API server and those derived
    /// from them (see the top of the file).
    pub recorded_pods: bool,
    /// The user a `SelfSubjectReview` names; `None`: not served (404),
    /// as on the recorded v1.24 server.
    pub user: Option<&'static str>,
    /// A plural whose first continue token is stale when presented (410
    /// Expired), once.
    pub expire_once: Option<&'static str>,
    /// A plural whose continue tokens are always stale.
    pub expire_always: Option<&'static str>,
    /// Add a Ready node that reports no `status.allocatable`.
    pub bare_node: bool,
    /// The objects the cluster holds instead of the shared fixtures'
    /// (Deployments get their ReplicaSets and Pods, and the Nodes and
    /// Job pods are added, as for the fixtures); each as `kubectl apply`
    /// leaves it ([`applied`] is used on it).
    pub objects: Option<Vec<Value>>,
}

/// One request: plural, `limit`, `continue`, the status answered, and
/// the `User-Agent` it came with.
pub type Logged = (String, Option<String>, Option<String>, u16, String);

#[derive(Clone)]
struct Fake {
    /// plural → items as stored (with apiVersion and kind).
    store: Arc<BTreeMap<&'static str, Vec<Value>>>,
    script: Script,
    /// Plurals answered 403 now.
    forbidden: Arc<Mutex<BTreeSet<String>>>,
    /// Continue tokens of `expire_once` found stale so far.
    expired: Arc<Mutex<usize>>,
    /// A new list epoch per first page: tokens name the epoch they
    /// belong to, as a real server's name the resourceVersion.
    epoch: Arc<Mutex<u64>>,
    log: Arc<Mutex<Vec<Logged>>>,
}

pub struct FakeKube {
    pub url: String,
    pub log: Arc<Mutex<Vec<Logged>>>,
    pub store: Arc<BTreeMap<&'static str, Vec<Value>>>,
    pub forbidden: Arc<Mutex<BTreeSet<String>>>,
}

/// `shared/fixtures/kubernetes-api/<name>`: a body recorded from a real
/// API server.
pub fn recorded(name: &str) -> Value {
    let start = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    for dir in start.ancestors() {
        let path = dir.join("shared/fixtures/kubernetes-api").join(name);
        if path.is_file() {
            return serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
        }
    }
    panic!("shared/fixtures/kubernetes-api/{name} not found");
}

/// The hotel reservation's databases as an API server stores them: six
/// MongoDB Deployments, each using a claim bound to a hostPath volume of
/// 1 GiB (node-local data: they cannot move), and a frontend with none.
pub fn hotel_objects() -> Vec<Value> {
    let mut out = vec![json!({
        "apiVersion": "storage.k8s.io/v1", "kind": "StorageClass",
        "metadata": {"name": "standard"},
        "provisioner": "kubernetes.io/no-provisioner",
        "reclaimPolicy": "Delete", "volumeBindingMode": "Immediate"
    })];
    let deployment = |name: &str, volumes: Value| {
        json!({
            "apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": name, "namespace": "hotel", "labels": {"io.kompose.service": name}},
            "spec": {
                "replicas": 1,
                "selector": {"matchLabels": {"io.kompose.service": name}},
                "template": {
                    "metadata": {"labels": {"io.kompose.service": name}},
                    "spec": {
                        "containers": [{"name": name, "image": "mongo:4.4.6",
                            "resources": {"requests": {"cpu": "100m", "memory": "128Mi"}}}],
                        "volumes": volumes
                    }
                }
            }
        })
    };
    out.push(deployment("frontend", json!([])));
    for db in HOTEL_DBS {
        let name = format!("mongodb-{db}");
        let claim = format!("{db}-pvc");
        let volume = format!("{db}-pv");
        out.push(deployment(
            &name,
            json!([{"name": db, "persistentVolumeClaim": {"claimName": claim}}]),
        ));
        out.push(json!({
            "apiVersion": "v1", "kind": "PersistentVolumeClaim",
            "metadata": {"name": claim, "namespace": "hotel"},
            "spec": {"accessModes": ["ReadWriteOnce"], "storageClassName": "standard",
                     "resources": {"requests": {"storage": "1Gi"}}, "volumeName": volume,
                     "volumeMode": "Filesystem"},
            "status": {"phase": "Bound", "accessModes": ["ReadWriteOnce"], "capacity": {"storage": "1Gi"}}
        }));
        out.push(json!({
            "apiVersion": "v1", "kind": "PersistentVolume",
            "metadata": {"name": volume},
            "spec": {"capacity": {"storage": "1Gi"}, "accessModes": ["ReadWriteOnce"],
                     "storageClassName": "standard", "persistentVolumeReclaimPolicy": "Retain",
                     "hostPath": {"path": format!("/data/volumes/{db}"), "type": ""},
                     "claimRef": {"kind": "PersistentVolumeClaim", "namespace": "hotel", "name": claim,
                                  "apiVersion": "v1"},
                     "volumeMode": "Filesystem"},
            "status": {"phase": "Bound"}
        }));
    }
    out
}

/// The hotel reservation's databases (DeathStarBench).
pub const HOTEL_DBS: [&str; 6] = [
    "geo",
    "profile",
    "rate",
    "recommendation",
    "reservation",
    "user",
];

/// The Pods recorded from a real API server (`scheduled-probe`, whose
/// `nodeName` the `Binding` set; `finished-job`, Succeeded), and three
/// made from them: `failed-job` (Failed), `applied-probe` (its
/// `nodeName` in `kubectl apply`'s last-applied configuration) and
/// `created-probe` (its `nodeName` owned by `kubectl-create`, as
/// `kubectl create -f` of a manifest naming the node leaves it).
pub fn recorded_pods() -> Vec<Value> {
    let list = recorded("pods.json");
    let mut pods: Vec<Value> = list["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| {
            let mut p = p.clone();
            p["apiVersion"] = json!("v1");
            p["kind"] = json!("Pod");
            p
        })
        .collect();
    let by_name = |n: &str| {
        pods.iter()
            .find(|p| p["metadata"]["name"] == n)
            .unwrap()
            .clone()
    };
    let (probe, finished) = (by_name("scheduled-probe"), by_name("finished-job"));
    let mut failed = finished;
    failed["metadata"]["name"] = json!("failed-job");
    failed["status"]["phase"] = json!("Failed");
    let mut applied = probe.clone();
    applied["metadata"]["name"] = json!("applied-probe");
    applied["spec"]["nodeName"] = json!("node-b");
    let last = json!({"apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": "applied-probe", "namespace": "bank"},
        "spec": {"nodeName": "node-b", "containers": [{"name": "p", "image": "busybox",
                 "resources": {"requests": {"cpu": "100m", "memory": "64Mi"}}}]}});
    applied["metadata"]["annotations"] = json!({
        "kubectl.kubernetes.io/last-applied-configuration": format!("{last}\n")
    });
    let mut created = probe;
    created["metadata"]["name"] = json!("created-probe");
    created["spec"]["nodeName"] = json!("node-c");
    created["metadata"]["managedFields"][0]["manager"] = json!("kubectl-create");
    created["metadata"]["managedFields"][0]["fieldsV1"]["f:spec"]["f:nodeName"] = json!({});
    pods.extend([failed, applied, created]);
    pods
}

/// What the fake's cluster holds besides the fixtures: Ready nodes
/// (a, b, c), a cordoned one (d) and one not Ready (e), each with its
/// allocatable as a kubelet reports it.
pub fn nodes() -> Vec<Value> {
    let node = |name: &str, ready: bool, cordoned: bool, cpu: &str, mem: &str| {
        json!({
            "apiVersion": "v1", "kind": "Node",
            "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name}},
            "spec": if cordoned { json!({"unschedulable": true}) } else { json!({}) },
            "status": {
                "capacity": {"cpu": "4", "memory": "16331656Ki", "pods": "110"},
                "allocatable": {"cpu": cpu, "memory": mem, "pods": "110"},
                "conditions": [
                    {"type": "MemoryPressure", "status": "False"},
                    {"type": "Ready", "status": if ready { "True" } else { "Unknown" }}
                ]
            }
        })
    };
    vec![
        node("node-a", true, false, "3920m", "15776Mi"),
        node("node-b", true, false, "3920m", "15776Mi"),
        node("node-c", true, false, "7910m", "31Gi"),
        node("node-d", true, true, "4", "16Gi"),
        node("node-e", false, false, "4", "16Gi"),
    ]
}

/// The nodes pods are placed on, in turn: the cordoned node-d still runs
/// pods placed before it was cordoned.
pub const PLACED_ON: [&str; 4] = ["node-a", "node-b", "node-c", "node-d"];

/// The API server's defaulting of a pod's containers: a resource with a
/// limit and no request gets the limit as its request.
fn default_requests(spec: &mut Value) {
    for list in ["containers", "initContainers"] {
        for c in spec[list].as_array_mut().into_iter().flatten() {
            for res in ["cpu", "memory"] {
                if let Some(l) = c.pointer(&format!("/resources/limits/{res}")).cloned() {
                    if c.pointer(&format!("/resources/requests/{res}")).is_none() {
                        c["resources"]["requests"][res] = l;
                    }
                }
            }
        }
    }
}

/// Everything the fake serves, by plural, each object as stored.
pub fn cluster_objects(script: &Script) -> BTreeMap<&'static str, Vec<Value>> {
    let mut store: BTreeMap<&'static str, Vec<Value>> = BTreeMap::new();
    let mut objects: Vec<Value> = match &script.objects {
        Some(objects) => objects.iter().cloned().map(applied).collect(),
        None => FIXTURES
            .iter()
            .flat_map(|name| documents(name))
            .map(applied)
            .collect(),
    };
    if script.hotel {
        objects.extend(hotel_objects());
    }
    for v in objects {
        if let Some(k) = KINDS.iter().find(|k| v["kind"] == k.0) {
            store.entry(k.2).or_default().push(v);
        }
    }
    // What the Deployments made: a ReplicaSet each and its pods.
    let mut pods = Vec::new();
    let mut sets = Vec::new();
    let mut n = 0;
    for d in store.get("deployments").cloned().unwrap_or_default() {
        let (ns, name) = (
            d["metadata"]["namespace"].as_str().unwrap(),
            d["metadata"]["name"].as_str().unwrap(),
        );
        let replicas = d["spec"]["replicas"].as_u64().unwrap_or(1);
        let rs = format!("{name}-5d9c7b8f4");
        sets.push(json!({
            "apiVersion": "apps/v1", "kind": "ReplicaSet",
            "metadata": {"name": rs, "namespace": ns, "ownerReferences": [
                {"apiVersion": "apps/v1", "kind": "Deployment", "name": name, "uid": format!("uid-{ns}-{name}"), "controller": true}
            ]},
            "spec": {"replicas": replicas, "selector": d["spec"]["selector"], "template": d["spec"]["template"]},
        }));
        for i in 0..replicas {
            let mut spec = d["spec"]["template"]["spec"].clone();
            default_requests(&mut spec);
            spec["nodeName"] = json!(PLACED_ON[n % PLACED_ON.len()]);
            n += 1;
            pods.push(json!({
                "apiVersion": "v1", "kind": "Pod",
                "metadata": {"name": format!("{rs}-x{i}"), "namespace": ns,
                             "labels": d["spec"]["template"]["metadata"]["labels"],
                             "ownerReferences": [{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": rs, "uid": format!("uid-{ns}-{rs}"), "controller": true}]},
                "spec": spec,
                "status": {"phase": "Running"},
            }));
        }
    }
    // A finished Job's pod on a counted node, and one not scheduled yet:
    // neither holds room on a node.
    let job_pod = |name: &str, node: Option<&str>, phase: &str| {
        let mut spec = json!({"containers": [{"name": "c", "resources": {"requests": {"cpu": "2", "memory": "2Gi"}}}]});
        if let Some(n) = node {
            spec["nodeName"] = json!(n);
        }
        json!({
            "apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "namespace": "default", "ownerReferences": [
                {"apiVersion": "batch/v1", "kind": "Job", "name": "report", "uid": "uid-job", "controller": true}
            ]},
            "spec": spec,
            "status": {"phase": phase},
        })
    };
    pods.push(job_pod("report-29311", Some("node-a"), "Succeeded"));
    pods.push(job_pod("report-29312", None, "Pending"));
    if script.recorded_pods {
        pods.extend(recorded_pods());
    }
    store.insert("pods", pods);
    store.insert("replicasets", sets);
    let mut all_nodes = nodes();
    if script.bare_node {
        let mut n = all_nodes[0].clone();
        n["metadata"]["name"] = json!("node-f");
        n["status"].as_object_mut().unwrap().remove("allocatable");
        all_nodes.push(n);
    }
    store.insert("nodes", all_nodes);
    // Stored order: etcd's key order, namespace then name.
    let mut rv = 1000;
    for items in store.values_mut() {
        items.sort_by(|a, b| {
            let key = |v: &Value| {
                (
                    v.pointer("/metadata/namespace")
                        .and_then(Value::as_str)
                        .unwrap_or("")
                        .to_string(),
                    v["metadata"]["name"].as_str().unwrap().to_string(),
                )
            };
            key(a).cmp(&key(b))
        });
        for v in items.iter_mut() {
            rv += 1;
            let ns = v
                .pointer("/metadata/namespace")
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_string();
            let name = v["metadata"]["name"].as_str().unwrap().to_string();
            v["metadata"]["uid"] = json!(format!("uid-{ns}-{name}"));
            v["metadata"]["resourceVersion"] = json!(rv.to_string());
            v["metadata"]["creationTimestamp"] = json!("2026-11-30T03:00:00Z");
        }
    }
    store
}

fn status(code: u16, reason: &str, message: &str) -> Response {
    (
        StatusCode::from_u16(code).unwrap(),
        Json(json!({
            "kind": "Status", "apiVersion": "v1", "metadata": {},
            "status": "Failure", "message": message, "reason": reason, "code": code
        })),
    )
        .into_response()
}

async fn api(
    State(f): State<Fake>,
    uri: Uri,
    headers: HeaderMap,
    Query(q): Query<HashMap<String, String>>,
) -> Response {
    let path = uri.path();
    let found = KINDS.iter().find(|k| {
        let p = if k.1 == "v1" {
            format!("/api/v1/{}", k.2)
        } else {
            format!("/apis/{}/{}", k.1, k.2)
        };
        p == path
    });
    let plural = found.map_or(path.to_string(), |k| k.2.to_string());
    let limit = q.get("limit").cloned();
    let token = q.get("continue").cloned();
    let answer = if path == "/apis/authentication.k8s.io/v1/selfsubjectreviews" {
        who_am_i(&f, &headers)
    } else {
        answer(
            &f,
            found.copied(),
            limit.as_deref(),
            token.as_deref(),
            &headers,
        )
    };
    let agent = headers
        .get("user-agent")
        .and_then(|v| v.to_str().ok())
        .unwrap_or("")
        .to_string();
    f.log
        .lock()
        .unwrap()
        .push((plural, limit, token, answer.status().as_u16(), agent));
    answer
}

/// `POST /apis/authentication.k8s.io/v1/selfsubjectreviews`: who the
/// bearer is, when the script names a user; else 404, as an API server
/// before 1.27 answers (its `authentication.k8s.io/v1` has no such
/// resource).
fn who_am_i(f: &Fake, headers: &HeaderMap) -> Response {
    if !authorised(headers) {
        return (
            StatusCode::UNAUTHORIZED,
            Json(recorded("unauthorized-401.json")),
        )
            .into_response();
    }
    match f.script.user {
        None => status(
            404,
            "NotFound",
            "the server could not find the requested resource",
        ),
        Some(user) => (
            StatusCode::CREATED,
            Json(json!({
                "kind": "SelfSubjectReview",
                "apiVersion": "authentication.k8s.io/v1",
                "metadata": {"creationTimestamp": null},
                "status": {"userInfo": {"username": user, "groups": ["system:authenticated"]}}
            })),
        )
            .into_response(),
    }
}

fn authorised(headers: &HeaderMap) -> bool {
    headers.get("authorization").and_then(|v| v.to_str().ok())
        == Some(&format!("Bearer {KUBE_TOKEN}"))
}

fn answer(
    f: &Fake,
    kind: Option<(&'static str, &'static str, &'static str, bool)>,
    limit: Option<&str>,
    token: Option<&str>,
    headers: &HeaderMap,
) -> Response {
    if !authorised(headers) {
        // As recorded: a real API server's answer to an unknown token.
        return (
            StatusCode::UNAUTHORIZED,
            Json(recorded("unauthorized-401.json")),
        )
            .into_response();
    }
    let Some((kind, api_version, plural, _)) = kind else {
        return status(
            404,
            "NotFound",
            "the server could not find the requested resource",
        );
    };
    if f.forbidden.lock().unwrap().contains(plural) {
        // The recorded 403, worded for this kind and user as the server
        // words it.
        let mut body = recorded("forbidden-403.json");
        let group = api_version.rsplit_once('/').map_or("", |(g, _)| g);
        body["message"] = json!(format!("{plural} is forbidden: User \"system:serviceaccount:berth:reader\" cannot list resource \"{plural}\" in API group \"{group}\" at the cluster scope"));
        body["details"]["kind"] = json!(plural);
        return (StatusCode::FORBIDDEN, Json(body)).into_response();
    }
    let items = f.store.get(plural).cloned().unwrap_or_default();
    let offset = match token {
        None => {
            *f.epoch.lock().unwrap() += 1;
            0
        }
        Some(t) => {
            let parts: Vec<&str> = t.split('.').collect();
            let [p, epoch, offset] = parts.as_slice() else {
                return status(400, "BadRequest", "continue key is not valid");
            };
            let stale = f.script.expire_always == Some(plural)
                || (f.script.expire_once == Some(plural) && {
                    let mut e = f.expired.lock().unwrap();
                    *e += 1;
                    *e == 1
                });
            if *p != plural || epoch.parse::<u64>().is_err() {
                return status(400, "BadRequest", "continue key is not valid");
            }
            if stale {
                // As recorded after etcd compacted.
                return (
                    StatusCode::GONE,
                    Json(recorded("expired-continue-410.json")),
                )
                    .into_response();
            }
            offset.parse::<usize>().unwrap()
        }
    };
    let limit = limit
        .and_then(|l| l.parse::<usize>().ok())
        .filter(|&l| l > 0)
        .unwrap_or(usize::MAX);
    let end = offset.saturating_add(limit).min(items.len());
    let page: Vec<Value> = items[offset..end]
        .iter()
        .map(|v| {
            // A list's items carry neither apiVersion nor kind.
            let mut v = v.clone();
            let m = v.as_object_mut().unwrap();
            m.remove("apiVersion");
            m.remove("kind");
            v
        })
        .collect();
    let mut metadata = json!({"resourceVersion": "48213"});
    if end < items.len() {
        let epoch = *f.epoch.lock().unwrap();
        metadata["continue"] = json!(format!("{plural}.{epoch}.{end}"));
        metadata["remainingItemCount"] = json!(items.len() - end);
    }
    Json(json!({
        "kind": format!("{kind}List"),
        "apiVersion": api_version,
        "metadata": metadata,
        "items": page,
    }))
    .into_response()
}

impl FakeKube {
    pub async fn start(script: Script) -> FakeKube {
        let store = Arc::new(cluster_objects(&script));
        let forbidden: Arc<Mutex<BTreeSet<String>>> = Arc::new(Mutex::new(
            script.forbidden.iter().map(|p| p.to_string()).collect(),
        ));
        let fake = Fake {
            store: store.clone(),
            forbidden: forbidden.clone(),
            script,
            expired: Arc::default(),
            epoch: Arc::default(),
            log: Arc::default(),
        };
        let log = fake.log.clone();
        let app = Router::new().fallback(api).with_state(fake);
        FakeKube {
            url: serve(app).await,
            log,
            store,
            forbidden,
        }
    }

    /// From now on, answer these plurals 403 (and only these).
    pub fn forbid(&self, plurals: &[&str]) {
        *self.forbidden.lock().unwrap() = plurals.iter().map(|p| p.to_string()).collect();
    }

    pub fn requests(&self, plural: &str) -> Vec<Logged> {
        self.log
            .lock()
            .unwrap()
            .iter()
            .filter(|r| r.0 == plural)
            .cloned()
            .collect()
    }
}

/// A kubeconfig naming the server at `url` in two contexts, `shop` and
/// `other` (the current one), with the reader's token.
pub fn kubeconfig(dir: &Path, url: &str) -> PathBuf {
    kubeconfig_with(dir, url, KUBE_TOKEN)
}

/// The same with another token.
pub fn kubeconfig_with(dir: &Path, url: &str, token: &str) -> PathBuf {
    let path = dir.join("kubeconfig");
    std::fs::write(
        &path,
        format!(
            "apiVersion: v1
kind: Config
clusters:
- name: fake
  cluster:
    server: {url}
users:
- name: reader
  user:
    token: {token}
contexts:
- name: shop
  context: {{cluster: fake, user: reader}}
- name: other
  context: {{cluster: fake, user: reader, namespace: elsewhere}}
current-context: other
"
        ),
    )
    .unwrap();
    path
}
