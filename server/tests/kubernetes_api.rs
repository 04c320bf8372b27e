//! `berth import kubernetes --context` and `berth agent --kubernetes`
//! against a fake Kubernetes API server on loopback, through the real
//! `kube` client and a kubeconfig file, by running the built binary.
//!
//! The fake (`support/kube_api.rs`, shared with `outcomes.rs`) holds the
//! shared fixtures as an API server stores them once applied and answers
//! in the shapes a real one does; that file says where each shape comes
//! from (the bodies recorded from a real server in
//! `shared/fixtures/kubernetes-api/`).

mod fakes;
#[path = "support/kube_api.rs"]
mod kube_api;

use fakes::stop_agent as stop;

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::http::StatusCode;
use axum::Router;
use fakes::{berth, run};
use kube_api::*;
use serde_json::{json, Value};

/// Objects per page the tests ask for: small, so every kind with more
/// than four objects (Deployments, Services, Pods, …) takes pages.
const PAGE: usize = 4;

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
        forbidden: &["configmaps"],
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
        forbidden: &["configmaps"],
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
        .token(serde_json::json!({"name": "agent-c-fra-1", "role": "agent", "estate": "sample", "clusters": ["c-fra-1"], "may_sync_services": true}))
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
        forbidden: &["deployments"],
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

// ---- what a token cannot see, Pods, and who is asking ----------------------

/// The service entry `id` of an estate file.
fn service<'a>(estate: &'a Value, id: &str) -> &'a Value {
    estate["services"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["id"] == id)
        .unwrap_or_else(|| panic!("no service {id}"))
}

/// `berth/VERSION (ROLE; estate ESTATE)`, as every request must say.
fn agent_string(role: &str, estate: &str) -> String {
    format!(
        "berth/{} ({role}; estate {estate})",
        env!("CARGO_PKG_VERSION")
    )
}

/// Credentials that may list everything but claims, volumes and classes:
/// re-importing the hotel reservation into an estate that has it keeps
/// each database's data size and local volumes as the earlier import
/// wrote them (same bytes), and says so per kind; a fresh import with
/// those credentials adds the databases with their data size and local
/// volumes unknown, with why, and the advice never recommends moving one
/// on them (`berth advise`). Every request says it is Berth importing
/// into that estate.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_import_that_cannot_read_storage_keeps_what_it_cannot_see() {
    let kube = FakeKube::start(Script {
        hotel: true,
        ..Script::default()
    })
    .await;
    let dir = tempfile::tempdir().unwrap();
    let kc = kubeconfig(dir.path(), &kube.url);
    let estate = estate_file(dir.path());
    let first = dir.path().join("first.json");
    let import = |into: &Path, output: &Path| {
        let mut c = berth_clean();
        c.args(["import", "kubernetes", "--cluster", "c-par", "--into"])
            .arg(into)
            .arg("--output")
            .arg(output)
            .args(["--kubeconfig", s(&kc), "--context", "shop"])
            .args(["--page-size", "7"]);
        run(c)
    };
    let (code, _, err) = import(&estate, &first).await;
    assert_eq!(code, 0, "{err}");
    let before: Value = serde_json::from_str(&std::fs::read_to_string(&first).unwrap()).unwrap();
    for db in HOTEL_DBS {
        let s = service(&before, &format!("mongodb-{db}"));
        assert_eq!(s["data_gb"], json!(1.073741824), "1 GiB claim: {s}");
        assert_eq!(s["constraints"]["local_volumes"], json!(true), "{s}");
    }
    assert_eq!(service(&before, "hotel/frontend")["data_gb"], json!(0.0));
    let every = kube.log.lock().unwrap().clone();
    let ua = agent_string("import", s(&estate));
    assert!(every.len() > 12, "{every:?}");
    assert!(
        every.iter().all(|r| r.4 == ua),
        "User-Agent {ua:?} on every request: {:?}",
        every.iter().map(|r| &r.4).collect::<BTreeSet<_>>()
    );

    // The same cluster, read by credentials that may not list storage.
    kube.forbid(&[
        "persistentvolumeclaims",
        "persistentvolumes",
        "storageclasses",
    ]);
    let second = dir.path().join("second.json");
    let (code, _, err) = import(&first, &second).await;
    assert_eq!(code, 0, "{err}");
    assert_eq!(
        std::fs::read_to_string(&second).unwrap(),
        std::fs::read_to_string(&first).unwrap(),
        "nothing changed: {err}"
    );
    assert!(err.contains("0 added, 0 changed, 0 removed"), "{err}");
    for kind in ["PersistentVolumeClaim", "PersistentVolume", "StorageClass"] {
        assert!(err.contains(&format!("note: {kind} (")), "{kind}: {err}");
    }
    assert!(
        err.contains(
            "the data size and local volumes of services that use claims keep their earlier values"
        ),
        "{err}"
    );
    assert!(
        err.contains(
            "[incomplete_input] mongodb-geo: kept constraints.local_volumes true, data_gb 1.073741824 as the earlier import wrote them (kubernetes:c-par/hotel/Deployment/mongodb-geo): PersistentVolumeClaims, PersistentVolumes and StorageClasses could not be listed (403 Forbidden); PersistentVolumeClaims could not be listed (403 Forbidden)"
        ),
        "{err}"
    );
    let dbs: Vec<String> = HOTEL_DBS.iter().map(|d| format!("mongodb-{d}")).collect();
    assert!(
        err.contains(&format!(
            "[incomplete_input] PersistentVolumeClaims, PersistentVolumes and StorageClasses could not be listed (403 Forbidden): left as the earlier import wrote them: constraints.local_volumes of {}",
            dbs.join(", ")
        )),
        "{err}"
    );
    assert!(
        err.contains(&format!(
            "[incomplete_input] PersistentVolumeClaims could not be listed (403 Forbidden): left as the earlier import wrote them: data_gb of {}",
            dbs.join(", ")
        )),
        "{err}"
    );
    let requests_second = kube.log.lock().unwrap().len() - every.len();
    eprintln!(
        "second import: {requests_second} requests, 3 of them 403; {} values kept",
        2 * HOTEL_DBS.len()
    );

    // A fresh import with those credentials: every database is added,
    // its data size and local volumes written unknown with why — never
    // 0 GB and not bound — and the report says so per service.
    let fresh_path = dir.path().join("fresh.json");
    let (code, _, err) = import(&estate, &fresh_path).await;
    assert_eq!(code, 0, "{err}");
    let fresh: Value =
        serde_json::from_str(&std::fs::read_to_string(&fresh_path).unwrap()).unwrap();
    let both = "PersistentVolumeClaims, PersistentVolumes and StorageClasses could not be listed (403 Forbidden)";
    let claims = "PersistentVolumeClaims could not be listed (403 Forbidden)";
    for db in HOTEL_DBS {
        let id = format!("mongodb-{db}");
        let s = service(&fresh, &id);
        assert_eq!(s["data_gb"], json!({ "unknown": claims }), "{s}");
        assert_eq!(
            s["constraints"],
            json!({ "local_volumes": { "unknown": both } }),
            "{s}"
        );
        assert!(
            err.contains(&format!(
                "[incomplete_input] {id}: added with constraints.local_volumes and data_gb unknown ({both}; {claims}): its moves are listed under \"Not enough evidence\" until an import that can read them states them"
            )),
            "{id}: {err}"
        );
        // The report's table: no 0 GB, and the status said unknown.
        let row = err
            .lines()
            .find(|l| l.trim_start().starts_with(&format!("{id} ")))
            .unwrap_or_else(|| panic!("{id} row: {err}"));
        assert!(
            row.contains(" ? ") && row.ends_with("local volumes unknown"),
            "{row}"
        );
    }
    assert_eq!(service(&fresh, "hotel/frontend")["data_gb"], json!(0.0));
    assert!(!err.contains("not added"), "{err}");

    // The advice on it. A heavy measured caller one site away (Frankfurt)
    // makes moving mongodb-geo worth far more than the bars, and a mesh
    // has observed its traffic: all that is left unknown is its data. The
    // move is listed apart, naming both unknowns and why, and is not made.
    // With the first import's facts (bound to hostPath volumes) the same
    // estate refuses the move outright.
    let advise = |estate: &Value, name: &str| {
        let mut e = estate.clone();
        e["sites"]
            .as_array_mut()
            .unwrap()
            .push(json!({"id": "fra", "lat": 50.11, "lon": 8.68, "jurisdiction": "eu"}));
        e["clusters"].as_array_mut().unwrap().push(json!({
            "id": "c-fra", "site": "fra", "tier": "prod", "trust_zone": "general", "health": "healthy",
            "cpu_total": 64, "memory_total_gib": 256, "cpu_free": 60, "memory_free_gib": 250
        }));
        e["services"].as_array_mut().unwrap().push(json!({
            "id": "caller", "owner": "hotel", "cluster": "c-fra", "cpu": 1, "memory_gib": 1,
            "constraints": {"pinned": true}, "traffic": "declared"
        }));
        // What the mesh saw: mongodb-geo's one caller is `caller` (the
        // import's address-derived edges to it, weight unknown, replaced).
        e["flows"]
            .as_array_mut()
            .unwrap()
            .retain(|f| f["from"] != "mongodb-geo" && f["to"] != "mongodb-geo");
        e["flows"].as_array_mut().unwrap().push(json!({
            "from": "caller", "to": "mongodb-geo",
            "weight": {"value": 10, "class": "measured"}, "mb_s": {"value": 0.5, "class": "measured"}
        }));
        let geo = e["services"]
            .as_array_mut()
            .unwrap()
            .iter_mut()
            .find(|s| s["id"] == "mongodb-geo")
            .unwrap();
        geo["traffic"] = json!({"value": 300, "class": "measured", "source": "mesh:istio/test"});
        let path = dir.path().join(name);
        std::fs::write(&path, e.to_string()).unwrap();
        let mut c = berth_clean();
        c.args(["advise"])
            .arg(&path)
            .args(["--now", "2026-11-30T04:05:00Z", "--format", "json"]);
        run(c)
    };
    let (code, out, err) = advise(&fresh, "fresh-advise.json").await;
    assert_eq!(code, 0, "{err}");
    let advice: Value = serde_json::from_str(&out).unwrap();
    let geo: Vec<&Value> = advice["moves"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["service"] == "mongodb-geo")
        .collect();
    assert_eq!(geo.len(), 1, "{out}");
    let m = geo[0];
    assert_eq!(m["to"], "c-fra", "{m}");
    assert_eq!(m["confidence"], "guessed", "{m}");
    assert!(
        m["gain"].as_f64().unwrap() > m["bar"].as_f64().unwrap(),
        "{m}"
    );
    assert_eq!(
        m["evidence"],
        json!(format!(
            "Not enough evidence to recommend — the data size of mongodb-geo is unknown ({claims}); whether mongodb-geo keeps its data on local volumes is unknown ({both}); 2 of 9 inputs are guesses."
        )),
        "{m}"
    );
    assert_eq!(m["terms"]["copy"], json!(0.0), "{m}");
    let facts: BTreeMap<&str, &Value> = m["facts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| (f["fact"].as_str().unwrap(), f))
        .collect();
    for (key, why) in [
        ("data size mongodb-geo", claims),
        ("local volumes mongodb-geo", both),
    ] {
        let f = facts.get(key).unwrap_or_else(|| panic!("{key}: {facts:?}"));
        assert_eq!(f["value"], Value::Null, "{f}");
        assert_eq!(f["class"], "guessed", "{f}");
        assert_eq!(f["source"], why, "{f}");
    }
    // Not made: the estate after the advice is the one before it, as
    // far as mongodb-geo goes (the gain is set apart).
    assert!(
        advice["unbacked_gain"].as_f64().unwrap() >= m["gain"].as_f64().unwrap(),
        "{advice}"
    );
    eprintln!(
        "fresh import, storage forbidden: mongodb-geo → c-fra gain {} (bar {}), set apart: {}",
        m["gain"], m["bar"], m["evidence"]
    );

    let (code, out, err) = advise(&before, "known-advise.json").await;
    assert_eq!(code, 0, "{err}");
    let advice: Value = serde_json::from_str(&out).unwrap();
    assert!(
        advice["moves"]
            .as_array()
            .unwrap()
            .iter()
            .all(|m| m["service"] != "mongodb-geo"),
        "{out}"
    );
    let refused = advice["immovable"]
        .as_array()
        .unwrap()
        .iter()
        .find(|i| i["service"] == "mongodb-geo")
        .unwrap_or_else(|| panic!("{out}"));
    assert_eq!(refused["reasons"][0]["code"], "local_volumes", "{refused}");
}

/// Pods read from the API: the one the scheduler bound (recorded) is
/// not pinned, ones whose author named the node (last-applied
/// configuration, a field manager's nodeName) are; the Succeeded
/// (recorded) and Failed ones are not services and are counted.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pods_pinned_by_their_author_and_only_live_ones() {
    let kube = FakeKube::start(Script {
        recorded_pods: true,
        ..Script::default()
    })
    .await;
    let dir = tempfile::tempdir().unwrap();
    let kc = kubeconfig(dir.path(), &kube.url);
    let estate = estate_file(dir.path());
    let mut c = berth_clean();
    c.args(["import", "kubernetes", "--cluster", "c-par", "--into"])
        .arg(&estate)
        .args(["--kubeconfig", s(&kc), "--context", "shop"]);
    let (code, out, err) = run(c).await;
    assert_eq!(code, 0, "{err}");
    let e: Value = serde_json::from_str(&out).unwrap();
    let scheduled = service(&e, "scheduled-probe");
    assert!(
        scheduled.get("constraints").is_none(),
        "bound by the scheduler, not pinned: {scheduled}"
    );
    assert_eq!(scheduled["cpu"], json!(0.1));
    for (id, node, by) in [
        (
            "applied-probe",
            "node-b",
            "in its last-applied configuration",
        ),
        ("created-probe", "node-c", "written by kubectl-create"),
    ] {
        assert_eq!(
            service(&e, id)["constraints"]["pinned"],
            json!(true),
            "{id}"
        );
        assert!(
            err.contains(&format!("[pinned] {id}: nodeName is {node} ({by})")),
            "{id}: {err}"
        );
    }
    for gone in ["finished-job", "failed-job"] {
        assert!(
            e["services"]
                .as_array()
                .unwrap()
                .iter()
                .all(|s| s["id"] != gone),
            "{gone} is not a service"
        );
    }
    assert!(
        err.contains("[ignored_kind] Pod bank/finished-job (api:shop/pods): phase Succeeded, it has run to completion and serves nothing; not imported"),
        "{err}"
    );
    assert!(err.contains("Pod (Failed) 1"), "{err}");
    assert!(err.contains("Pod (Succeeded) 1"), "{err}");
    // Known requests: the 26 Deployments and three live probes only.
    assert!(err.contains("29 services — 29 added"), "{err}");

    // The same scheduled Pod as a manifest (never stored: no uid) with
    // the node named is pinned: its author wrote it.
    let manifest = dir.path().join("pod.yaml");
    std::fs::write(
        &manifest,
        "apiVersion: v1\nkind: Pod\nmetadata: {name: scheduled-probe, namespace: bank}\nspec:\n  nodeName: node-a\n  containers: [{name: p, image: busybox, resources: {requests: {cpu: 100m, memory: 64Mi}}}]\n",
    )
    .unwrap();
    let mut c = berth_clean();
    c.args(["import", "kubernetes", "--cluster", "c-par", "--into"])
        .arg(&estate)
        .arg(&manifest);
    let (code, out, err) = run(c).await;
    assert_eq!(code, 0, "{err}");
    let e: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(
        service(&e, "scheduled-probe")["constraints"]["pinned"],
        json!(true)
    );
    assert!(
        err.contains("[pinned] scheduled-probe: nodeName is node-a\n"),
        "{err}"
    );
}

/// Credentials that may list nothing: exit 2, nothing written, the kinds
/// and who the API server says they are named; an older API server that
/// cannot say is said so.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn nothing_readable_is_an_error() {
    let all: &'static [&'static str] = &[
        "deployments",
        "statefulsets",
        "daemonsets",
        "replicasets",
        "replicationcontrollers",
        "pods",
        "services",
        "configmaps",
        "persistentvolumeclaims",
        "persistentvolumes",
        "storageclasses",
        "nodes",
    ];
    for user in [Some("restricted"), None] {
        let kube = FakeKube::start(Script {
            forbidden: all,
            user,
            ..Script::default()
        })
        .await;
        let dir = tempfile::tempdir().unwrap();
        let kc = kubeconfig(dir.path(), &kube.url);
        let estate = estate_file(dir.path());
        let output = dir.path().join("out.json");
        let mut c = berth_clean();
        c.args(["import", "kubernetes", "--cluster", "c-par", "--into"])
            .arg(&estate)
            .arg("--output")
            .arg(&output)
            .args(["--kubeconfig", s(&kc), "--context", "shop"]);
        let (code, out, err) = run(c).await;
        assert_eq!((code, out.as_str()), (2, ""), "{err}");
        assert!(!output.exists(), "nothing written");
        assert!(
            err.contains(&format!(
                "context shop ({}/): nothing to import: the credentials of context shop (from {}) may list none of the kinds services are made of (deployments, statefulsets, daemonsets, replicasets, replicationcontrollers, pods: each 403 Forbidden); also forbidden: services, configmaps, persistentvolumeclaims, persistentvolumes, storageclasses, nodes",
                kube.url,
                kc.display()
            )),
            "{err}"
        );
        match user {
            Some(u) => assert!(
                err.contains(&format!(
                    "The API server says they are user \"{u}\" (groups system:authenticated)"
                )),
                "{err}"
            ),
            None => assert!(
                err.contains(
                    "Who they are is not known: this API server serves no SelfSubjectReview"
                ),
                "{err}"
            ),
        }
        let log = kube.log.lock().unwrap().clone();
        assert_eq!(log.iter().filter(|r| r.3 == 403).count(), 12);
        assert!(log
            .iter()
            .all(|r| r.4 == agent_string("import", s(&estate))));
    }
}

/// A token the API server does not accept, and an `http://` URL for a
/// server that speaks HTTPS (its answer as Go's HTTP server words it),
/// each say what to check.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn wrong_credentials_and_scheme_say_what_to_check() {
    let kube = FakeKube::start(Script::default()).await;
    let dir = tempfile::tempdir().unwrap();
    let estate = estate_file(dir.path());
    let kc = kubeconfig_with(dir.path(), &kube.url, "not-the-token");
    let mut c = berth_clean();
    c.args(["import", "kubernetes", "--cluster", "c-par", "--into"])
        .arg(&estate)
        .args(["--kubeconfig", s(&kc), "--context", "shop"]);
    let (code, _, err) = run(c).await;
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains(&format!(
            "listing deployments (/apis/apps/v1/deployments): 401 Unauthorized: the API server does not accept the credentials of context shop (from {}): check its user's token or client certificate",
            kc.display()
        )),
        "{err}"
    );

    let tls = Router::new().fallback(|| async {
        (
            StatusCode::BAD_REQUEST,
            "Client sent an HTTP request to an HTTPS server.\n",
        )
    });
    let url = fakes::serve(tls).await;
    let other = dir.path().join("tls");
    std::fs::create_dir_all(&other).unwrap();
    let kc = kubeconfig(&other, &url);
    let mut c = berth_clean();
    c.args(["import", "kubernetes", "--cluster", "c-par", "--into"])
        .arg(&estate)
        .args(["--kubeconfig", s(&kc), "--context", "shop"]);
    let (code, _, err) = run(c).await;
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains(&format!(
            "400: the server speaks HTTPS but the server URL of context shop (from {}) says http://: write https://",
            kc.display()
        )),
        "{err}"
    );
}

/// `berth agent --kubernetes` against a real `berth serve`: once the
/// hotel reservation is synced, ticks whose credentials may not list
/// claims (nor nodes, so no capacity is posted either) leave the estate
/// at its version, the databases' data and local volumes as they were;
/// ticks that may list nothing write nothing and say why. Every request
/// says it is Berth's agent for that estate.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_agent_keeps_what_a_tick_cannot_read() {
    let kube = FakeKube::start(Script {
        hotel: true,
        user: Some("system:serviceaccount:berth:reader"),
        ..Script::default()
    })
    .await;
    let server = fakes::RealBerth::start().await;
    let dir = tempfile::tempdir().unwrap();
    let kc = kubeconfig(dir.path(), &kube.url);
    let token = server
        .token(json!({"name": "agent-c-fra-1", "role": "agent", "estate": "sample", "clusters": ["c-fra-1"], "may_sync_services": true}))
        .await;
    let mut c = berth_clean();
    c.args(["agent", "--server", &server.url, "--estate", "sample"])
        .args(["--cluster", "c-fra-1", "--kubeconfig", s(&kc)])
        .args(["--context", "shop", "--interval", "1s", "--page-size", "50"])
        .env("BERTH_TOKEN", &token)
        .stderr(std::process::Stdio::piped());
    let child = c.spawn().unwrap();
    let ticks = |n: usize| {
        let kube = &kube;
        async move {
            let start = Instant::now();
            let seen = kube.requests("deployments").len();
            while kube.requests("deployments").len() < seen + n {
                assert!(
                    start.elapsed() < Duration::from_secs(60),
                    "{n} ticks within a minute"
                );
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
        }
    };
    // Two full ticks: synced, then nothing to change.
    ticks(3).await;
    let databases = |e: &Value| -> Vec<Value> {
        HOTEL_DBS
            .iter()
            .map(|d| service(e, &format!("mongodb-{d}")).clone())
            .collect()
    };
    let synced = server.estate_file().await;
    for s in databases(&synced) {
        assert_eq!(s["constraints"]["local_volumes"], json!(true), "{s}");
        assert_eq!(s["data_gb"], json!(1.073741824), "{s}");
    }

    kube.forbid(&["persistentvolumeclaims", "nodes"]);
    ticks(1).await;
    let version = server.get("/api/estates/sample").await["version"].clone();
    assert!(version.is_u64(), "{version}");
    ticks(3).await;
    let after = server.get("/api/estates/sample").await["version"].clone();
    assert_eq!(after, version, "no new version while claims are unread");
    assert_eq!(databases(&server.estate_file().await), databases(&synced));

    kube.forbid(&[
        "deployments",
        "statefulsets",
        "daemonsets",
        "replicasets",
        "replicationcontrollers",
        "pods",
    ]);
    ticks(2).await;
    let (code, log) = stop(child).await;
    assert_eq!(code, 0, "{log}");
    assert_eq!(
        server.get("/api/estates/sample").await["version"],
        version,
        "nothing written when nothing could be read"
    );
    assert!(
        log.contains("changed=0") && log.contains("written=false"),
        "{log}"
    );
    assert!(
        log.contains("Kubernetes API not read this tick, nothing re-synced or measured")
            && log.contains("nothing to import")
            && log.contains(
                "The API server says they are user \"system:serviceaccount:berth:reader\""
            ),
        "{log}"
    );
    assert!(
        log.contains("free capacity not measured: nodes or pods could not be listed"),
        "{log}"
    );
    let every = kube.log.lock().unwrap().clone();
    let ua = agent_string("agent", "sample");
    assert!(every.iter().all(|r| r.4 == ua), "{ua}");
    eprintln!(
        "agent: {} requests, every one with User-Agent {ua}",
        every.len()
    );
}

/// `berth agent --kubernetes` against a real `berth serve`, with
/// credentials that may not list claims, volumes or classes from the
/// first tick: the hotel reservation's databases, new to the estate, are
/// written with their data size and local volumes unknown and why (never
/// 0 GB and movable); once a tick can read storage, they get the values
/// it reads, and later ticks change nothing.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_agent_writes_what_it_cannot_read_as_unknown() {
    let kube = FakeKube::start(Script {
        hotel: true,
        // Nodes too, so that no tick posts capacity (which would make a
        // new version at every tick): the version says what the re-sync
        // wrote.
        forbidden: &[
            "persistentvolumeclaims",
            "persistentvolumes",
            "storageclasses",
            "nodes",
        ],
        ..Script::default()
    })
    .await;
    let server = fakes::RealBerth::start().await;
    let dir = tempfile::tempdir().unwrap();
    let kc = kubeconfig(dir.path(), &kube.url);
    let token = server
        .token(json!({"name": "agent-c-fra-1", "role": "agent", "estate": "sample", "clusters": ["c-fra-1"], "may_sync_services": true}))
        .await;
    let mut c = berth_clean();
    c.args(["agent", "--server", &server.url, "--estate", "sample"])
        .args(["--cluster", "c-fra-1", "--kubeconfig", s(&kc)])
        .args(["--context", "shop", "--interval", "1s", "--page-size", "50"])
        .env("BERTH_TOKEN", &token)
        .stderr(std::process::Stdio::piped());
    let child = c.spawn().unwrap();
    let ticks = |n: usize| {
        let kube = &kube;
        async move {
            let start = Instant::now();
            let seen = kube.requests("deployments").len();
            while kube.requests("deployments").len() < seen + n {
                assert!(
                    start.elapsed() < Duration::from_secs(60),
                    "{n} ticks within a minute"
                );
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
        }
    };
    ticks(2).await;
    let claims = "PersistentVolumeClaims could not be listed (403 Forbidden)";
    let both = "PersistentVolumeClaims, PersistentVolumes and StorageClasses could not be listed (403 Forbidden)";
    let unknown = server.estate_file().await;
    for db in HOTEL_DBS {
        let s = service(&unknown, &format!("mongodb-{db}"));
        assert_eq!(s["data_gb"], json!({ "unknown": claims }), "{s}");
        assert_eq!(
            s["constraints"],
            json!({ "local_volumes": { "unknown": both } }),
            "{s}"
        );
    }
    let version = server.get("/api/estates/sample").await["version"].clone();
    ticks(2).await;
    assert_eq!(
        server.get("/api/estates/sample").await["version"],
        version,
        "unknown stays unknown: nothing to write"
    );

    // Storage readable again: the values read replace the unknowns.
    kube.forbid(&["nodes"]);
    ticks(3).await;
    let known = server.estate_file().await;
    for db in HOTEL_DBS {
        let s = service(&known, &format!("mongodb-{db}"));
        assert_eq!(s["data_gb"], json!(1.073741824), "{s}");
        assert_eq!(s["constraints"], json!({ "local_volumes": true }), "{s}");
    }
    let (code, log) = stop(child).await;
    assert_eq!(code, 0, "{log}");
    // Each tick says, per kind not read, what it left alone or unknown.
    for kind in ["PersistentVolumeClaim", "PersistentVolume", "StorageClass"] {
        assert!(
            log.contains(&format!("{kind} ("))
                && log.contains("a new such service gets them unknown, with this reason"),
            "{kind}: {log}"
        );
    }
    eprintln!(
        "agent: {} databases written unknown, then {} GB and local volumes once storage was readable",
        HOTEL_DBS.len(),
        1.073741824
    );
}

/// `server/tests/fixtures/<name>`.
fn local_fixture(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(name)
}

/// An API server whose certificate no CA the context trusts signed (a
/// self-signed one, `fixtures/tls/`, and a kubeconfig that names no CA):
/// the import fails at once, writes nothing, and says which setting of
/// which kubeconfig to check.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unknown_ca_says_which_setting_to_check() {
    use rustls::pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer};
    let cert =
        CertificateDer::from(std::fs::read(local_fixture("tls/self-signed.crt.der")).unwrap());
    let key = PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(
        std::fs::read(local_fixture("tls/self-signed.key.der")).unwrap(),
    ));
    let config = rustls::ServerConfig::builder_with_provider(Arc::new(
        rustls::crypto::ring::default_provider(),
    ))
    .with_safe_default_protocol_versions()
    .unwrap()
    .with_no_client_auth()
    .with_single_cert(vec![cert], key)
    .unwrap();
    let acceptor = tokio_rustls::TlsAcceptor::from(Arc::new(config));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let handshakes = Arc::new(Mutex::new(0usize));
    let seen = handshakes.clone();
    tokio::spawn(async move {
        while let Ok((tcp, _)) = listener.accept().await {
            let acceptor = acceptor.clone();
            let seen = seen.clone();
            tokio::spawn(async move {
                *seen.lock().unwrap() += 1;
                // The client refuses the certificate mid-handshake.
                let _ = acceptor.accept(tcp).await;
            });
        }
    });
    let dir = tempfile::tempdir().unwrap();
    let estate = estate_file(dir.path());
    let before = std::fs::read_to_string(&estate).unwrap();
    let kc = kubeconfig(dir.path(), &format!("https://{addr}"));
    let output = dir.path().join("out.json");
    let mut c = berth_clean();
    c.args(["import", "kubernetes", "--cluster", "c-par", "--into"])
        .arg(&estate)
        .arg("--output")
        .arg(&output)
        .args(["--kubeconfig", s(&kc), "--context", "shop"]);
    let start = Instant::now();
    let (code, _, err) = run(c).await;
    assert_eq!(code, 2, "{err}");
    assert!(start.elapsed() < Duration::from_secs(20), "at once: {err}");
    assert!(*handshakes.lock().unwrap() >= 1, "it reached the server");
    assert!(
        err.contains(&format!(
            "context shop (https://{addr}/): listing deployments (/apis/apps/v1/deployments): the API server's TLS certificate is not signed by a CA that context shop trusts ("
        )) && err.contains("UnknownIssuer")
            && err.contains(&format!(
                "): check certificate-authority or certificate-authority-data of its cluster in {}",
                kc.display()
            )),
        "{err}"
    );
    assert!(!output.exists(), "nothing written");
    assert_eq!(std::fs::read_to_string(&estate).unwrap(), before);
    eprintln!("unknown CA: {err}");
}

/// An API server that accepts the connection and never answers (a
/// listener on loopback that reads nothing back): the import gives up
/// after the read timeout, says how long it waited and at which step, and
/// writes nothing.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_silent_api_server_times_out_and_says_where() {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let held = Arc::new(Mutex::new(Vec::new()));
    let keep = held.clone();
    tokio::spawn(async move {
        // Accept and hold every connection open, answering nothing.
        while let Ok((tcp, _)) = listener.accept().await {
            keep.lock().unwrap().push(tcp);
        }
    });
    let dir = tempfile::tempdir().unwrap();
    let estate = estate_file(dir.path());
    let kc = kubeconfig(dir.path(), &format!("http://{addr}"));
    let output = dir.path().join("out.json");
    let mut c = berth_clean();
    c.args(["import", "kubernetes", "--cluster", "c-par", "--into"])
        .arg(&estate)
        .arg("--output")
        .arg(&output)
        .args(["--kubeconfig", s(&kc), "--context", "shop"])
        .args(["--page-size", "7"]);
    let start = Instant::now();
    // Longer than `run`'s minute: the read timeout is a minute.
    let out = tokio::time::timeout(Duration::from_secs(150), c.output())
        .await
        .expect("berth gives up within 150 s")
        .expect("berth runs");
    let waited = start.elapsed();
    let code = out.status.code().unwrap_or(-1);
    let err = String::from_utf8(out.stderr).unwrap();
    assert_eq!(code, 2, "{err}");
    assert!(!held.lock().unwrap().is_empty(), "it connected");
    assert!(
        waited >= Duration::from_secs(59) && waited < Duration::from_secs(120),
        "{waited:?}: {err}"
    );
    assert!(
        err.contains(&format!(
            "context shop (http://{addr}/): listing deployments (/apis/apps/v1/deployments): connected, but no answer within 60 s (waiting for a page of 7 objects): the API server is overloaded or the connection is stuck; try again, or a smaller --page-size ("
        )),
        "{err}"
    );
    assert!(!output.exists(), "nothing written");
    eprintln!("silent server, after {waited:?}: {err}");
}

/// An API server whose answer is larger than Berth reads of one answer
/// (`kube_source::ANSWER_LIMIT`, 64 MiB): one that declares more in its
/// `Content-Length` is refused before its body is read, one that sends
/// an endless chunked body is cut off as the bytes pass the limit. Either
/// way the import says which list, the limit and what to try, and writes
/// nothing: an answer can no longer take the memory of an agent.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_answer_over_the_limit_is_refused_and_says_so() {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    const LIMIT: usize = berth::kube_source::ANSWER_LIMIT;
    for endless in [false, true] {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let sent = Arc::new(Mutex::new(0usize));
        let counter = sent.clone();
        tokio::spawn(async move {
            while let Ok((mut tcp, _)) = listener.accept().await {
                let counter = counter.clone();
                tokio::spawn(async move {
                    let mut buf = vec![0u8; 8192];
                    let _ = tcp.read(&mut buf).await;
                    if !endless {
                        let head = format!(
                            "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\r\n{{\"items\":[",
                            LIMIT + 1
                        );
                        let _ = tcp.write_all(head.as_bytes()).await;
                        // Nothing more: the declared length is refused.
                        tokio::time::sleep(Duration::from_secs(30)).await;
                        return;
                    }
                    let head = "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ntransfer-encoding: chunked\r\n\r\n";
                    if tcp.write_all(head.as_bytes()).await.is_err() {
                        return;
                    }
                    let piece = " ".repeat(64 * 1024);
                    let chunk = format!("{:x}\r\n{piece}\r\n", piece.len());
                    // Until the reader hangs up (or far past the limit).
                    for _ in 0..(4 * LIMIT / piece.len()) {
                        if tcp.write_all(chunk.as_bytes()).await.is_err() {
                            return;
                        }
                        *counter.lock().unwrap() += piece.len();
                    }
                });
            }
        });
        let dir = tempfile::tempdir().unwrap();
        let estate = estate_file(dir.path());
        let before = std::fs::read_to_string(&estate).unwrap();
        let kc = kubeconfig(dir.path(), &format!("http://{addr}"));
        let output = dir.path().join("out.json");
        let mut c = berth_clean();
        c.args(["import", "kubernetes", "--cluster", "c-par", "--into"])
            .arg(&estate)
            .arg("--output")
            .arg(&output)
            .args(["--kubeconfig", s(&kc), "--context", "shop"]);
        let (code, _, err) = run(c).await;
        assert_eq!(code, 2, "{err}");
        let what = if endless {
            format!("passed {LIMIT} bytes")
        } else {
            format!("declares {} bytes", LIMIT + 1)
        };
        assert!(
            err.contains(&format!(
                "context shop (http://{addr}/): listing deployments (/apis/apps/v1/deployments): "
            )) && err.contains(&format!(
                "the answer {what}, over the 64 MiB Berth reads of one answer: try a smaller --page-size"
            )),
            "{err}"
        );
        if endless {
            // Cut off near the limit, not read to the end of 256 MiB.
            let sent = *sent.lock().unwrap();
            assert!(sent < 2 * LIMIT, "{sent} bytes were sent before it stopped");
        }
        assert!(!output.exists(), "nothing written");
        assert_eq!(std::fs::read_to_string(&estate).unwrap(), before);
        eprintln!("answer over the limit ({what}): {err}");
    }
}
