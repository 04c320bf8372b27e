//! `berth import kubernetes --context` and `berth agent --kubernetes`
//! against a fake Kubernetes API server on loopback, through the real
//! `kube` client and a kubeconfig file, by running the built binary.
//!
//! The fake holds the shared fixtures (`shared/fixtures/kubernetes/`) as
//! an API server stores them once applied — namespace set, uid and
//! resourceVersion added, plus the ReplicaSets and Pods the Deployments
//! make and a few Nodes — and answers list requests in the shape a real
//! one does: `DeploymentList` with `metadata.resourceVersion`,
//! `metadata.continue` and `remainingItemCount`, items without their
//! `apiVersion`/`kind`, `limit` honoured, `Status` objects for errors. It
//! can refuse one kind (403 Forbidden) and expire a continue token (410
//! Expired), and it counts every request.

mod fakes;

use fakes::stop_agent as stop;

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::extract::{Query, State};
use axum::http::{HeaderMap, StatusCode, Uri};
use axum::response::{IntoResponse, Response};
use axum::{Json, Router};
use fakes::{berth, run};
use serde_json::{json, Value};

/// The bearer token the fake API server accepts (the kubeconfig's user).
const KUBE_TOKEN: &str = "fake-kube-reader-token-0123456789";

/// Objects per page the tests ask for: small, so every kind with more
/// than four objects (Deployments, Services, Pods, …) takes pages.
const PAGE: usize = 4;

/// The kinds the fake serves: kind, apiVersion, plural, namespaced.
const KINDS: [(&str, &str, &str, bool); 12] = [
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
fn fixture_path(name: &str) -> PathBuf {
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

const FIXTURES: [&str; 2] = ["online-boutique.yaml", "sock-shop.yaml"];

/// The documents of a fixture as JSON values (empty documents dropped).
fn documents(name: &str) -> Vec<Value> {
    use serde::Deserialize;
    let text = std::fs::read_to_string(fixture_path(name)).unwrap();
    serde_yaml::Deserializer::from_str(&text)
        .map(|d| serde_json::to_value(serde_yaml::Value::deserialize(d).unwrap()).unwrap())
        .filter(|v: &Value| v.is_object())
        .collect()
}

fn namespaced(kind: &str) -> Option<bool> {
    KINDS.iter().find(|k| k.0 == kind).map(|k| k.3)
}

/// A fixture's documents as `kubectl apply -f` leaves them in the API
/// server: a namespaced object that names no namespace is in `default`.
/// (Kinds the fake does not serve are left as they are.)
fn applied(mut v: Value) -> Value {
    let kind = v["kind"].as_str().unwrap_or_default().to_string();
    if namespaced(&kind) == Some(true) && v.pointer("/metadata/namespace").is_none() {
        v["metadata"]["namespace"] = json!("default");
    }
    v
}

// ---- the fake API server --------------------------------------------------

/// What to do wrong.
#[derive(Clone, Default)]
struct Script {
    /// A plural answered 403 Forbidden.
    forbidden: Option<&'static str>,
    /// A plural whose first continue token is stale when presented (410
    /// Expired), once.
    expire_once: Option<&'static str>,
    /// A plural whose continue tokens are always stale.
    expire_always: Option<&'static str>,
    /// Add a Ready node that reports no `status.allocatable`.
    bare_node: bool,
}

/// One request: plural, `limit`, `continue`, and the status answered.
type Logged = (String, Option<String>, Option<String>, u16);

#[derive(Clone)]
struct Fake {
    /// plural → items as stored (with apiVersion and kind).
    store: Arc<BTreeMap<&'static str, Vec<Value>>>,
    script: Script,
    /// Continue tokens of `expire_once` found stale so far.
    expired: Arc<Mutex<usize>>,
    /// A new list epoch per first page: tokens name the epoch they
    /// belong to, as a real server's name the resourceVersion.
    epoch: Arc<Mutex<u64>>,
    log: Arc<Mutex<Vec<Logged>>>,
}

struct FakeKube {
    url: String,
    log: Arc<Mutex<Vec<Logged>>>,
    store: Arc<BTreeMap<&'static str, Vec<Value>>>,
}

/// What the fake's cluster holds besides the fixtures: Ready nodes
/// (a, b, c), a cordoned one (d) and one not Ready (e), each with its
/// allocatable as a kubelet reports it.
fn nodes() -> Vec<Value> {
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
const PLACED_ON: [&str; 4] = ["node-a", "node-b", "node-c", "node-d"];

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
fn cluster_objects(bare_node: bool) -> BTreeMap<&'static str, Vec<Value>> {
    let mut store: BTreeMap<&'static str, Vec<Value>> = BTreeMap::new();
    for name in FIXTURES {
        for v in documents(name) {
            let v = applied(v);
            if let Some(k) = KINDS.iter().find(|k| v["kind"] == k.0) {
                store.entry(k.2).or_default().push(v);
            }
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
    store.insert("pods", pods);
    store.insert("replicasets", sets);
    let mut all_nodes = nodes();
    if bare_node {
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
    let answer = answer(
        &f,
        found.copied(),
        limit.as_deref(),
        token.as_deref(),
        &headers,
    );
    f.log
        .lock()
        .unwrap()
        .push((plural, limit, token, answer.status().as_u16()));
    answer
}

fn answer(
    f: &Fake,
    kind: Option<(&'static str, &'static str, &'static str, bool)>,
    limit: Option<&str>,
    token: Option<&str>,
    headers: &HeaderMap,
) -> Response {
    if headers.get("authorization").and_then(|v| v.to_str().ok())
        != Some(&format!("Bearer {KUBE_TOKEN}"))
    {
        return status(401, "Unauthorized", "Unauthorized");
    }
    let Some((kind, api_version, plural, _)) = kind else {
        return status(
            404,
            "NotFound",
            "the server could not find the requested resource",
        );
    };
    if f.script.forbidden == Some(plural) {
        return status(
            403,
            "Forbidden",
            &format!("{plural} is forbidden: User \"system:serviceaccount:berth:reader\" cannot list resource \"{plural}\" in API group \"\" at the cluster scope"),
        );
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
                return status(
                    410,
                    "Expired",
                    "The provided continue parameter is too old to display a consistent list result. You can start a new list without the continue parameter.",
                );
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
    async fn start(script: Script) -> FakeKube {
        let store = Arc::new(cluster_objects(script.bare_node));
        let fake = Fake {
            store: store.clone(),
            script,
            expired: Arc::default(),
            epoch: Arc::default(),
            log: Arc::default(),
        };
        let log = fake.log.clone();
        let app = Router::new().fallback(api).with_state(fake);
        FakeKube {
            url: fakes::serve(app).await,
            log,
            store,
        }
    }

    fn requests(&self, plural: &str) -> Vec<Logged> {
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
fn kubeconfig(dir: &Path, url: &str) -> PathBuf {
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
    token: {KUBE_TOKEN}
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

/// `berth` with no Kubernetes settings from the environment: no
/// KUBECONFIG, no proxy, not in a pod.
fn berth_clean() -> tokio::process::Command {
    let mut c = berth();
    for v in [
        "KUBECONFIG",
        "KUBERNETES_SERVICE_HOST",
        "HTTPS_PROXY",
        "https_proxy",
        "HTTP_PROXY",
        "http_proxy",
        "NO_PROXY",
        "no_proxy",
    ] {
        c.env_remove(v);
    }
    c
}

/// An estate with the cluster the imports go to.
fn estate_file(dir: &Path) -> PathBuf {
    let path = dir.join("estate.json");
    std::fs::write(
        &path,
        json!({
            "schema": 1,
            "name": "api import test",
            "observed_at": "2026-11-30T04:00:00Z",
            "sites": [{"id": "par", "name": "Paris", "lat": 48.86, "lon": 2.35, "jurisdiction": "eu"}],
            "clusters": [{"id": "c-par", "site": "par", "tier": "prod", "trust_zone": "general", "health": "healthy",
                          "cpu_total": 64, "memory_total_gib": 256, "cpu_free": 40, "memory_free_gib": 160}],
            "services": [{"id": "billing", "owner": "finance", "cluster": "c-par", "cpu": 2, "memory_gib": 4}],
            "flows": []
        })
        .to_string(),
    )
    .unwrap();
    path
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// The fixtures imported from the API (paged by 4, configmaps forbidden,
/// the first continue token of deployments stale) give byte for byte the
/// estate the file import of the same fixtures gives, as the API server
/// holds them (namespace `default` where they name none — the one
/// difference from the raw files, checked below to be only the owner
/// that namespace gives).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_api_import_equals_the_file_import() {
    let kube = FakeKube::start(Script {
        forbidden: Some("configmaps"),
        expire_once: Some("deployments"),
        ..Script::default()
    })
    .await;
    let dir = tempfile::tempdir().unwrap();
    let kc = kubeconfig(dir.path(), &kube.url);
    let estate = estate_file(dir.path());

    let started = Instant::now();
    let mut c = berth_clean();
    c.args(["import", "kubernetes", "--cluster", "c-par", "--into"])
        .arg(&estate)
        .args(["--kubeconfig", s(&kc), "--context", "shop", "--page-size"])
        .arg(PAGE.to_string());
    let (code, api_out, api_err) = run(c).await;
    assert_eq!(code, 0, "{api_err}");
    eprintln!(
        "API import: {:.2} s, {} requests",
        started.elapsed().as_secs_f64(),
        kube.log.lock().unwrap().len()
    );

    // The same fixtures from files, as applied.
    let mut files = Vec::new();
    for name in FIXTURES {
        let path = dir.path().join(name);
        let docs: Vec<String> = documents(name)
            .into_iter()
            .map(|v| serde_yaml::to_string(&applied(v)).unwrap())
            .collect();
        std::fs::write(&path, docs.join("---\n")).unwrap();
        files.push(path);
    }
    let mut c = berth_clean();
    c.args(["import", "kubernetes", "--cluster", "c-par", "--into"])
        .arg(&estate)
        .args(&files);
    let (code, file_out, file_err) = run(c).await;
    assert_eq!(code, 0, "{file_err}");
    assert_eq!(api_out, file_out, "the estates differ");

    // The raw files: the same but for the owner of the services whose
    // manifests name no namespace (Online Boutique): "unknown" from the
    // files, "default" (their namespace) from the API.
    let mut c = berth_clean();
    c.args(["import", "kubernetes", "--cluster", "c-par", "--into"])
        .arg(&estate)
        .args(FIXTURES.map(fixture_path));
    let (code, raw_out, raw_err) = run(c).await;
    assert_eq!(code, 0, "{raw_err}");
    let mut raw: Value = serde_json::from_str(&raw_out).unwrap();
    let mut owned = 0;
    for svc in raw["services"].as_array_mut().unwrap() {
        if svc["source"]
            .as_str()
            .is_some_and(|s| s.starts_with("kubernetes:c-par/default/"))
        {
            // No label, no namespace: the merge writes "unknown".
            assert_eq!(svc["owner"], "unknown", "{svc}");
            svc["owner"] = json!("default");
            owned += 1;
        }
    }
    assert_eq!(owned, 12, "the Online Boutique services");
    let api: Value = serde_json::from_str(&api_out).unwrap();
    assert_eq!(raw, api);
    let imported = api["services"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|s| {
            s["source"]
                .as_str()
                .is_some_and(|s| s.starts_with("kubernetes:"))
        })
        .count();
    assert_eq!(imported, 26, "every Deployment, no owned ReplicaSet or Pod");

    // The report: the same services, the forbidden kind by name, the
    // restarted list, nothing removed.
    let first = |t: &str| {
        t.lines()
            .find(|l| l.starts_with("kubernetes import"))
            .unwrap()
            .to_string()
    };
    assert_eq!(first(&api_err), first(&file_err));
    assert!(
        first(&api_err).contains("26 services — 26 added"),
        "{api_err}"
    );
    assert!(
        api_err.contains("note: ConfigMap (configmaps) not read: the credentials of context shop may not list them (403: configmaps is forbidden: User \"system:serviceaccount:berth:reader\" cannot list resource \"configmaps\""),
        "{api_err}"
    );
    assert!(
        api_err.contains("note: deployments: the list's continue token expired (410 Gone) while paging; listed again from the start"),
        "{api_err}"
    );
    assert!(
        api_err.contains(
            "[incomplete_input] part of the input could not be read: nothing was removed"
        ),
        "{api_err}"
    );

    // Every kind asked for, page by page, never more than a page at once.
    let log = kube.log.lock().unwrap().clone();
    let asked: BTreeSet<&str> = log.iter().map(|r| r.0.as_str()).collect();
    assert_eq!(asked, KINDS.iter().map(|k| k.2).collect::<BTreeSet<_>>());
    for r in &log {
        assert_eq!(r.1.as_deref(), Some("4"), "limit on every request: {r:?}");
    }
    let pages = |n: usize| n.div_ceil(PAGE).max(1);
    for (_, _, plural, _) in KINDS {
        let reqs = kube.requests(plural);
        let n = kube.store.get(plural).map_or(0, Vec::len);
        let expected = match plural {
            "configmaps" => 1,
            // First page, the stale token, then all pages again.
            "deployments" => 2 + pages(n),
            _ => pages(n),
        };
        assert_eq!(reqs.len(), expected, "{plural} ({n} objects): {reqs:?}");
    }
    let deployments = kube.requests("deployments");
    assert_eq!(deployments.len(), 2 + 7, "26 deployments, 4 a page");
    let statuses: Vec<u16> = deployments.iter().map(|r| r.3).collect();
    assert_eq!(statuses, [200, 410, 200, 200, 200, 200, 200, 200, 200]);
    assert_eq!(
        deployments.iter().filter(|r| r.2.is_none()).count(),
        2,
        "listed from the start again after the 410"
    );
    // 28 pods (26 Deployments' and two Job pods): seven pages, six of
    // them asked for with the previous page's continue token.
    let pods = kube.requests("pods");
    assert_eq!(kube.store["pods"].len(), 28);
    assert_eq!(pods.iter().filter(|r| r.2.is_some()).count(), 6, "{pods:?}");
    assert!(pods.iter().all(|r| r.3 == 200));
}

/// What cannot be read fails at once, exit 2, naming what and where.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_sources_fail_clearly() {
    let dir = tempfile::tempdir().unwrap();
    let estate = estate_file(dir.path());
    let import = |args: Vec<String>| {
        let mut c = berth_clean();
        c.args(["import", "kubernetes", "--cluster", "c-par", "--into"])
            .arg(&estate)
            .args(args);
        run(c)
    };
    let strings = |a: &[&str]| a.iter().map(|s| s.to_string()).collect::<Vec<_>>();

    // An unknown context, with the ones the file has.
    let kube = FakeKube::start(Script::default()).await;
    let kc = kubeconfig(dir.path(), &kube.url);
    let (code, out, err) = import(strings(&["--kubeconfig", s(&kc), "--context", "nope"])).await;
    assert_eq!((code, out.as_str()), (2, ""), "{err}");
    assert!(
        err.contains(&format!(
            "{}: no context \"nope\" (it has shop, other)",
            kc.display()
        )),
        "{err}"
    );
    assert!(kube.log.lock().unwrap().is_empty(), "nothing was asked");

    // No such kubeconfig.
    let missing = dir.path().join("no-such-kubeconfig");
    let (code, _, err) = import(strings(&["--kubeconfig", s(&missing)])).await;
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains(&format!("{}: not a readable kubeconfig", missing.display())),
        "{err}"
    );

    // An API server that is not there: the context, its URL, the kind.
    let closed = fakes::closed_port_url();
    let down = dir.path().join("down");
    std::fs::create_dir_all(&down).unwrap();
    let kc_down = kubeconfig(&down, &closed);
    let (code, out, err) =
        import(strings(&["--kubeconfig", s(&kc_down), "--context", "shop"])).await;
    assert_eq!((code, out.as_str()), (2, ""), "{err}");
    assert!(
        err.contains(&format!(
            "context shop ({closed}/): listing deployments (/apis/apps/v1/deployments)"
        )),
        "{err}"
    );

    // A continue token that is stale every time: listed again once, then
    // a failure naming the kind; nothing is written.
    let kube = FakeKube::start(Script {
        expire_always: Some("services"),
        ..Script::default()
    })
    .await;
    let flaky = dir.path().join("flaky");
    std::fs::create_dir_all(&flaky).unwrap();
    let kc = kubeconfig(&flaky, &kube.url);
    let (code, out, err) = import(strings(&[
        "--kubeconfig",
        s(&kc),
        "--context",
        "shop",
        "--page-size",
        "4",
    ]))
    .await;
    assert_eq!((code, out.as_str()), (2, ""), "{err}");
    assert!(
        err.contains("listing services (Service): the continue token expired (410 Gone) twice"),
        "{err}"
    );
    let statuses: Vec<u16> = kube.requests("services").iter().map(|r| r.3).collect();
    assert_eq!(statuses, [200, 410, 200, 410]);

    // The current context is used when none is named: `other`.
    let (code, _, err) = import(strings(&["--kubeconfig", s(&kc), "--page-size", "4"])).await;
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("context other ("), "{err}");
}

// ---- the agent --------------------------------------------------------------

/// A quantity in base units (millicores for CPU, bytes otherwise), for the
/// forms the fixtures and the fake's nodes use.
fn quantity(q: &str, milli: bool) -> f64 {
    let (num, mult) = if let Some(n) = q.strip_suffix('m') {
        (n, 0.001)
    } else if let Some(n) = q.strip_suffix("Ki") {
        (n, 1024.0)
    } else if let Some(n) = q.strip_suffix("Mi") {
        (n, 1024.0 * 1024.0)
    } else if let Some(n) = q.strip_suffix("Gi") {
        (n, 1024.0 * 1024.0 * 1024.0)
    } else {
        (q, 1.0)
    };
    let v: f64 = num.parse().unwrap_or_else(|_| panic!("quantity {q}"));
    v * mult * if milli { 1000.0 } else { 1.0 }
}

/// Free (cores, GiB) of the fake's cluster, worked out here: allocatable
/// of node-a, node-b and node-c (Ready, not cordoned) less the requests
/// of the pods on them that are not finished; a pod asks the larger of
/// its containers' sum and its largest init container.
fn expected_free(store: &BTreeMap<&'static str, Vec<Value>>) -> (f64, f64) {
    let counted = ["node-a", "node-b", "node-c"];
    let mut free = [0.0f64; 2];
    for n in &store["nodes"] {
        if counted.contains(&n["metadata"]["name"].as_str().unwrap()) {
            free[0] += quantity(n["status"]["allocatable"]["cpu"].as_str().unwrap(), true);
            free[1] += quantity(
                n["status"]["allocatable"]["memory"].as_str().unwrap(),
                false,
            );
        }
    }
    for p in &store["pods"] {
        let on = p["spec"]["nodeName"].as_str().unwrap_or("");
        let phase = p["status"]["phase"].as_str().unwrap();
        if !counted.contains(&on) || phase == "Succeeded" || phase == "Failed" {
            continue;
        }
        for (k, res) in ["cpu", "memory"].iter().enumerate() {
            let req = |c: &Value| {
                c.pointer(&format!("/resources/requests/{res}"))
                    .and_then(Value::as_str)
                    .map_or(0.0, |q| quantity(q, k == 0))
            };
            let apps: f64 = p["spec"]["containers"]
                .as_array()
                .unwrap()
                .iter()
                .map(req)
                .sum();
            let init = p["spec"]["initContainers"]
                .as_array()
                .into_iter()
                .flatten()
                .map(req)
                .fold(0.0, f64::max);
            free[k] -= apps.max(init);
        }
    }
    (free[0] / 1000.0, free[1] / (1u64 << 30) as f64)
}

/// `berth agent --kubernetes` against the fake API and a real `berth
/// serve`: every tick the cluster's services are re-synced through the
/// server's import (26 added, then nothing changed) and its free
/// capacity, worked out independently above, arrives as measured, dated
/// when the API was read. The forbidden kind is logged and the rest goes
/// on.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_agent_resyncs_services_and_reports_measured_free_capacity() {
    let kube = FakeKube::start(Script {
        forbidden: Some("configmaps"),
        ..Script::default()
    })
    .await;
    let server = fakes::RealBerth::start().await;
    let dir = tempfile::tempdir().unwrap();
    let kc = kubeconfig(dir.path(), &kube.url);
    let (cpu, mem) = expected_free(&kube.store);
    // The numbers the fake's cluster gives, for the record: 15.75 cores
    // allocatable on the three nodes less what their pods ask.
    assert!(cpu > 0.0 && cpu < 15.75 && mem > 0.0, "{cpu} {mem}");

    // An agent token may re-sync services only when an administrator
    // allowed it to; a plain one is refused, saying how.
    let plain = server.agent_token("plain-agent").await;
    let refused = reqwest::Client::new()
        .post(format!("{}/api/estates/sample/import/kubernetes", server.url))
        .bearer_auth(&plain)
        .json(&serde_json::json!({"cluster": "c-fra-1", "files": [{"name": "x.yaml", "text": "kind: List\nitems: []\n"}]}))
        .send()
        .await
        .unwrap();
    assert_eq!(refused.status(), 403);
    assert!(refused.text().await.unwrap().contains("may_sync_services"));
    let token = server
        .token(serde_json::json!({"name": "agent-c-fra-1", "role": "agent", "estate": "sample", "may_sync_services": true}))
        .await;

    let before = chrono::Utc::now().timestamp();
    let mut c = berth_clean();
    c.args(["agent", "--server", &server.url, "--estate", "sample"])
        .args([
            "--cluster",
            "c-fra-1",
            "--kubernetes",
            "--kubeconfig",
            s(&kc),
        ])
        .args(["--context", "shop", "--interval", "1s", "--page-size", "10"])
        .env("BERTH_TOKEN", &token)
        .stderr(std::process::Stdio::piped());
    let child = c.spawn().unwrap();
    let start = Instant::now();
    let estate = loop {
        assert!(
            start.elapsed() < Duration::from_secs(60),
            "no measured capacity and services within a minute"
        );
        tokio::time::sleep(Duration::from_millis(300)).await;
        let e = server.estate_file().await;
        let c = e["clusters"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["id"] == "c-fra-1")
            .unwrap()
            .clone();
        // Nodes are listed once a tick (five, ten a page): a third
        // listing means two ticks ran to the end, imports included.
        let ticks = kube.requests("nodes").len();
        if c["cpu_free"]["observed_at"] != "2026-11-30T04:03:10Z" && ticks >= 3 {
            break e;
        }
    };
    let (code, log) = stop(child).await;
    let after = chrono::Utc::now().timestamp();
    assert_eq!(code, 0, "{log}");

    let c_fra_1 = estate["clusters"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["id"] == "c-fra-1")
        .unwrap();
    for (fact, want) in [("cpu_free", cpu), ("memory_free_gib", mem)] {
        let f = &c_fra_1[fact];
        let got = f["value"].as_f64().unwrap();
        assert!((got - want).abs() < 1e-9, "{fact}: {got} ≠ {want}");
        assert_eq!(f["class"], "measured", "{f}");
        let at = berth_engine::estate::parse_time(f["observed_at"].as_str().unwrap()).unwrap();
        assert!((before..=after).contains(&at), "{f}: observed at read time");
    }
    let imported: Vec<&Value> = estate["services"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|s| {
            s["source"]
                .as_str()
                .is_some_and(|s| s.starts_with("kubernetes:c-fra-1/"))
        })
        .collect();
    assert_eq!(imported.len(), 26, "every Deployment of the fixtures");
    assert!(imported.iter().all(|s| s["cluster"] == "c-fra-1"));

    let synced: Vec<&str> = log
        .lines()
        .filter(|l| l.contains("services re-synced from the Kubernetes API"))
        .collect();
    assert!(synced.len() >= 2, "{log}");
    assert!(synced[0].contains("added=26"), "{}", synced[0]);
    assert!(
        synced[1].contains("added=0")
            && synced[1].contains("changed=0")
            && synced[1].contains("removed=0"),
        "{}",
        synced[1]
    );
    assert!(
        log.contains("kubernetes: ConfigMap (configmaps) not read"),
        "{log}"
    );
    assert!(
        log.contains("capacity measured from the Kubernetes API"),
        "{log}"
    );
    assert!(
        !log.contains(KUBE_TOKEN),
        "the Kubernetes token is never logged"
    );
    assert!(!log.contains(&token), "nor Berth's");
}

/// A Ready node without `status.allocatable` makes the free capacity
/// unknown: nothing is posted for it (never zero), and the log names the
/// node. (The fake Berth has no import: the re-sync is refused and
/// logged, the ticks go on.)
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_node_without_allocatable_leaves_the_capacity_unknown() {
    let kube = FakeKube::start(Script {
        bare_node: true,
        ..Script::default()
    })
    .await;
    let (server, posts) = fakes::fake_berth(false, vec![]).await;
    let dir = tempfile::tempdir().unwrap();
    let kc = kubeconfig(dir.path(), &kube.url);
    let mut c = berth_clean();
    c.args(["agent", "--server", &server, "--estate", "sample"])
        .args([
            "--cluster",
            "c-fra-1",
            "--context",
            "shop",
            "--kubeconfig",
            s(&kc),
        ])
        .args(["--interval", "1s"])
        .env("BERTH_TOKEN", fakes::TOKEN)
        .stderr(std::process::Stdio::piped());
    let child = c.spawn().unwrap();
    let start = Instant::now();
    while kube.requests("nodes").len() < 3 {
        assert!(
            start.elapsed() < Duration::from_secs(30),
            "three ticks within 30 s"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let (code, log) = stop(child).await;
    assert_eq!(code, 0, "{log}");
    assert!(
        posts.posts.lock().unwrap().is_empty(),
        "nothing to post: {log}"
    );
    assert!(
        log.contains("capacity: node node-f is Ready but reports no status.allocatable: free capacity unknown"),
        "{log}"
    );
    assert!(log.contains("cpu_free=None memory_free_gib=None"), "{log}");
    assert!(log.contains("nothing to send this tick"), "{log}");
    assert!(log.contains("services not re-synced this tick"), "{log}");
}

/// The agent's Kubernetes options: a context without a cluster, with a
/// capacity file, or one the kubeconfig lacks stop it at once (exit 2).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn agent_kubernetes_usage_errors_exit_2() {
    let kube = FakeKube::start(Script::default()).await;
    let dir = tempfile::tempdir().unwrap();
    let kc = kubeconfig(dir.path(), &kube.url);
    let cases: Vec<(Vec<&str>, String)> = vec![
        (vec!["--context", "shop"], "needs --cluster C".to_string()),
        (vec!["--kubernetes"], "--cluster".to_string()),
        (
            vec![
                "--cluster",
                "c-fra-1",
                "--kubernetes",
                "--capacity-file",
                "x.json",
            ],
            "cannot be used with".to_string(),
        ),
        (
            vec![
                "--cluster",
                "c-fra-1",
                "--kubeconfig",
                s(&kc),
                "--context",
                "prod",
            ],
            format!("{}: no context \"prod\" (it has shop, other)", kc.display()),
        ),
    ];
    for (args, expect) in cases {
        let mut c = berth_clean();
        c.args([
            "agent",
            "--server",
            "http://127.0.0.1:9",
            "--estate",
            "sample",
        ])
        .args(["--token", fakes::TOKEN])
        .args(&args);
        let (code, out, err) = run(c).await;
        assert_eq!(code, 2, "{args:?}: {out}\n{err}");
        assert!(
            err.contains(&expect),
            "{args:?}: expected {expect:?} in:\n{err}"
        );
    }
    assert!(kube.log.lock().unwrap().is_empty(), "nothing was asked");
}

/// `--server` with the API: the lists go to the server's import. A second
/// import whose credentials may not list Deployments sends
/// `"incomplete": true`, so the services the first one added stay (as
/// they would not for files that simply lacked them).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn into_a_server_a_forbidden_kind_removes_nothing() {
    let server = fakes::RealBerth::start().await;
    let count = |e: &Value| {
        e["services"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|s| {
                s["source"]
                    .as_str()
                    .is_some_and(|s| s.starts_with("kubernetes:c-par-1/"))
            })
            .count()
    };
    let import = |kc: PathBuf| {
        let mut c = berth_clean();
        c.args(["import", "kubernetes", "--cluster", "c-par-1"])
            .args(["--server", &server.url, "--estate", "sample"])
            .args(["--kubeconfig", s(&kc), "--context", "shop"])
            .env("BERTH_TOKEN", fakes::ADMIN_TOKEN);
        run(c)
    };

    let kube = FakeKube::start(Script::default()).await;
    let dir = tempfile::tempdir().unwrap();
    let (code, out, err) = import(kubeconfig(dir.path(), &kube.url)).await;
    assert_eq!(code, 0, "{out}\n{err}");
    assert!(
        out.starts_with("sample, cluster c-par-1: 26 added"),
        "{out}"
    );
    assert_eq!(count(&server.estate_file().await), 26);

    let refused = FakeKube::start(Script {
        forbidden: Some("deployments"),
        ..Script::default()
    })
    .await;
    let other = dir.path().join("refused");
    std::fs::create_dir_all(&other).unwrap();
    let (code, out, err) = import(kubeconfig(&other, &refused.url)).await;
    assert_eq!(code, 0, "{out}\n{err}");
    assert!(
        err.contains("note: Deployment (deployments) not read"),
        "{err}"
    );
    assert!(out.contains("0 added, 0 changed, 0 removed"), "{out}");
    assert!(
        err.contains("[incomplete_input] part of the input could not be read: nothing was removed"),
        "{err}"
    );
    assert_eq!(count(&server.estate_file().await), 26, "nothing removed");
}
