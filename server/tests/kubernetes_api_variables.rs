//! The variable and address rules of the Kubernetes import (issue 31)
//! through the Kubernetes API: `berth import kubernetes --context` reads
//! a fake API server on loopback through the real `kube` client, and the
//! estate must be byte for byte the file import's of the same objects
//! with `--namespace` (what `kubectl apply -n` leaves in the API server),
//! with the call edges listed here. The manifests: the small ones of
//! `fixtures/kubernetes/variables.yaml` (one per rule) and Bank of Anthos
//! (addresses in ConfigMaps, a JDBC URL, StatefulSets).
//!
//! (`kubernetes_api.rs` tests the reading itself: paging, 403, 410.)

mod fakes;

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use axum::extract::State;
use axum::http::{HeaderMap, StatusCode, Uri};
use axum::response::{IntoResponse, Response};
use axum::{Json, Router};
use berth::kube_source::RESOURCES;
use fakes::{berth, run};
use serde_json::{json, Value};

const KUBE_TOKEN: &str = "fake-kube-variables-token-0123456789";

/// Kinds that live in no namespace, among those the importer lists.
const CLUSTER_SCOPED: [&str; 3] = ["PersistentVolume", "StorageClass", "Node"];

fn documents(text: &str) -> Vec<Value> {
    use serde::Deserialize;
    serde_yaml::Deserializer::from_str(text)
        .map(|d| serde_json::to_value(serde_yaml::Value::deserialize(d).unwrap()).unwrap())
        .filter(Value::is_object)
        .collect()
}

fn shared_fixture(name: &str) -> String {
    let start = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    for dir in start.ancestors() {
        let path = dir.join("shared/fixtures/kubernetes").join(name);
        if path.is_file() {
            return std::fs::read_to_string(path).unwrap();
        }
    }
    panic!(
        "shared/fixtures/kubernetes/{name} not found above {}",
        start.display()
    );
}

/// The objects as the API server stores them after `kubectl apply -n
/// <ns>`: namespaced ones in `ns`, with a uid and resourceVersion; by
/// collection path, in etcd's order (namespace, name).
fn applied(text: &str, ns: &str) -> BTreeMap<String, Vec<Value>> {
    let mut store: BTreeMap<String, Vec<Value>> = BTreeMap::new();
    for mut v in documents(text) {
        let kind = v["kind"].as_str().unwrap().to_string();
        let Some(r) = RESOURCES.iter().find(|r| r.kind == kind) else {
            continue; // a kind the importer does not list
        };
        if !CLUSTER_SCOPED.contains(&r.kind) && v.pointer("/metadata/namespace").is_none() {
            v["metadata"]["namespace"] = json!(ns);
        }
        let name = v["metadata"]["name"].as_str().unwrap().to_string();
        v["metadata"]["uid"] = json!(format!("uid-{ns}-{kind}-{name}"));
        v["metadata"]["resourceVersion"] = json!("7");
        store.entry(r.path()).or_default().push(v);
    }
    for items in store.values_mut() {
        items.sort_by_key(|v| {
            (
                v["metadata"]["namespace"]
                    .as_str()
                    .unwrap_or("")
                    .to_string(),
                v["metadata"]["name"].as_str().unwrap().to_string(),
            )
        });
    }
    store
}

/// A list request answered in one page, in the API server's shape (items
/// without kind and apiVersion); anything else 404; a wrong token 401.
async fn list(
    State(store): State<Arc<BTreeMap<String, Vec<Value>>>>,
    uri: Uri,
    headers: HeaderMap,
) -> Response {
    if headers.get("authorization").and_then(|v| v.to_str().ok())
        != Some(&format!("Bearer {KUBE_TOKEN}"))
    {
        return StatusCode::UNAUTHORIZED.into_response();
    }
    let Some(r) = RESOURCES.iter().find(|r| r.path() == uri.path()) else {
        return StatusCode::NOT_FOUND.into_response();
    };
    let items: Vec<Value> = store
        .get(&r.path())
        .into_iter()
        .flatten()
        .map(|v| {
            let mut v = v.clone();
            let m = v.as_object_mut().unwrap();
            m.remove("kind");
            m.remove("apiVersion");
            v
        })
        .collect();
    Json(json!({
        "kind": format!("{}List", r.kind),
        "apiVersion": r.api_version,
        "metadata": {"resourceVersion": "48213"},
        "items": items,
    }))
    .into_response()
}

fn kubeconfig(dir: &Path, url: &str) -> PathBuf {
    let path = dir.join("kubeconfig");
    std::fs::write(
        &path,
        format!(
            "apiVersion: v1
kind: Config
clusters:
- name: fake
  cluster: {{server: {url}}}
users:
- name: reader
  user: {{token: {KUBE_TOKEN}}}
contexts:
- name: fake
  context: {{cluster: fake, user: reader}}
current-context: fake
"
        ),
    )
    .unwrap();
    path
}

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

fn estate_file(dir: &Path) -> PathBuf {
    let path = dir.join("estate.json");
    std::fs::write(
        &path,
        json!({
            "schema": 1,
            "name": "variables",
            "observed_at": "2026-11-30T04:00:00Z",
            "sites": [{"id": "par", "name": "Paris", "lat": 48.86, "lon": 2.35, "jurisdiction": "eu"}],
            "clusters": [{"id": "c-par", "site": "par", "tier": "prod", "trust_zone": "general", "health": "healthy",
                          "cpu_total": 64, "memory_total_gib": 256, "cpu_free": 40, "memory_free_gib": 160}],
            "services": [],
            "flows": []
        })
        .to_string(),
    )
    .unwrap();
    path
}

/// Import `text` into c-par from the API (the objects applied into `ns`)
/// and from a file with `--namespace ns`; both must succeed and give the
/// same estate. Returns it, with the API import's report.
async fn both_ways(text: &str, ns: &str) -> (Value, String) {
    let app = Router::new()
        .fallback(list)
        .with_state(Arc::new(applied(text, ns)));
    let url = fakes::serve(app).await;
    let dir = tempfile::tempdir().unwrap();
    let estate = estate_file(dir.path());
    let kc = kubeconfig(dir.path(), &url);

    let mut c = berth_clean();
    c.args(["import", "kubernetes", "--cluster", "c-par", "--into"])
        .arg(&estate)
        .arg("--kubeconfig")
        .arg(&kc);
    let (code, api_out, api_err) = run(c).await;
    assert_eq!(code, 0, "{api_err}");

    let file = dir.path().join("manifests.yaml");
    std::fs::write(&file, text).unwrap();
    let mut c = berth_clean();
    c.args(["import", "kubernetes", "--cluster", "c-par", "--into"])
        .arg(&estate)
        .args(["--namespace", ns])
        .arg(&file);
    let (code, file_out, file_err) = run(c).await;
    assert_eq!(code, 0, "{file_err}");
    assert_eq!(api_out, file_out, "the API and file imports differ");
    (serde_json::from_str(&api_out).unwrap(), api_err)
}

fn flows(estate: &Value) -> BTreeSet<(String, String)> {
    estate["flows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            (
                f["from"].as_str().unwrap().to_string(),
                f["to"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

fn pairs(list: &[(&str, &str)]) -> BTreeSet<(String, String)> {
    list.iter()
        .map(|(a, b)| (a.to_string(), b.to_string()))
        .collect()
}

/// Every rule of `variables.yaml` through the API, in namespace
/// otel-demo: `$(VAR)` from an earlier literal and from a ConfigMap, the
/// Service links, connection strings (`Host=`, `Server=tcp:…,1433`, JDBC,
/// a MongoDB URL with two hosts, libpq), and the two references
/// Kubernetes leaves as written, noted.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn variables_through_the_api() {
    let (estate, report) = both_ways(
        include_str!("fixtures/kubernetes/variables.yaml"),
        "otel-demo",
    )
    .await;
    assert_eq!(
        flows(&estate),
        pairs(&[
            ("frontend", "otel-collector"),
            ("checkout", "otel-collector"),
            ("checkout", "cart"),
            ("reports", "orders-db"),
            ("reports", "mssql"),
            ("reports", "ledger-db"),
            ("reports", "mongo-a"),
            ("reports", "mongo-b"),
            ("reports", "pg"),
        ])
    );
    for s in estate["services"].as_array().unwrap() {
        assert_eq!(s["owner"], "otel-demo", "{s}");
        assert!(
            s["source"]
                .as_str()
                .unwrap()
                .starts_with("kubernetes:c-par/otel-demo/"),
            "{s}"
        );
    }
    assert!(
        report.contains("[unresolved_address] checkout: CART_ADDR=$(CART_NAME):7070: $(CART_NAME) is not defined before it in container checkout, and Kubernetes leaves an undefined reference as written: it names no service\n"),
        "{report}"
    );
    assert!(
        report.contains("[unresolved_address] checkout: DB_URL=postgres://$(DB_HOST):5432/orders: $(DB_HOST) comes from Secret checkout-db, which the importer does not read\n"),
        "{report}"
    );
    assert_eq!(
        report.matches("[unresolved_address]").count(),
        2,
        "{report}"
    );
}

/// Bank of Anthos through the API (applied to `default`): the fifteen
/// edges the file import finds, from ConfigMap values and a JDBC URL, to
/// the two database StatefulSets among others.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bank_of_anthos_through_the_api() {
    let (estate, report) = both_ways(&shared_fixture("bank-of-anthos.yaml"), "default").await;
    assert_eq!(
        flows(&estate),
        pairs(&[
            ("frontend", "balancereader"),
            ("frontend", "contacts"),
            ("frontend", "ledgerwriter"),
            ("frontend", "transactionhistory"),
            ("frontend", "userservice"),
            ("ledgerwriter", "balancereader"),
            ("ledgerwriter", "contacts"),
            ("ledgerwriter", "transactionhistory"),
            ("ledgerwriter", "userservice"),
            ("ledgerwriter", "ledger-db"),
            ("balancereader", "ledger-db"),
            ("transactionhistory", "ledger-db"),
            ("contacts", "accounts-db"),
            ("userservice", "accounts-db"),
            ("loadgenerator", "frontend"),
        ])
    );
    assert!(
        report
            .lines()
            .any(|l| l.starts_with("kubernetes import into cluster c-par: 9 services — 9 added")),
        "{report}"
    );
    let statefulsets: Vec<&str> = estate["services"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|s| s["source"].as_str().unwrap().contains("/StatefulSet/"))
        .map(|s| s["id"].as_str().unwrap())
        .collect();
    assert_eq!(statefulsets, ["accounts-db", "ledger-db"]);
}
