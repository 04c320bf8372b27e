//! `berth agent`, run as a user would: the built binary, ticking every
//! second against a fake Prometheus and a fake Berth (and, end to end, a
//! real `berth serve`), stopped with SIGTERM.

mod fakes;

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use fakes::{berth, fake_berth, fake_prometheus, istio_responses, stop_agent as stop, TOKEN};
use serde_json::Value;

/// Wait until `done` holds, checking every 100 ms, for at most `limit`.
async fn wait_for(limit: Duration, what: &str, mut done: impl FnMut() -> bool) {
    let start = Instant::now();
    while !done() {
        assert!(start.elapsed() < limit, "timed out waiting for {what}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

fn facts(o: &[Value], prefix: &str) -> Vec<Value> {
    o.iter()
        .filter(|o| o["fact"].as_str().unwrap().starts_with(prefix))
        .cloned()
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ticks_retry_under_the_same_batch_id_and_stop_on_sigterm() {
    let (prom, prom_log) = fake_prometheus(istio_responses()).await;
    // The first post is answered 503 with Retry-After: 1.
    let (server, log) = fake_berth(false, vec![(503, Some(1))]).await;
    let dir = tempfile::tempdir().unwrap();
    let capacity = dir.path().join("capacity.json");
    std::fs::write(&capacity, r#"{"cpu_free": 5.5, "memory_free_gib": 58}"#).unwrap();
    // Undated contents are as old as the file: 2026-11-30T04:03:20Z.
    let touched = std::process::Command::new("touch")
        .args(["-d", "@1796011400"])
        .arg(&capacity)
        .status()
        .unwrap();
    assert!(touched.success());

    let mut c = berth();
    c.args([
        "agent",
        "--server",
        &server,
        "--estate",
        "sample",
        "--prometheus",
        &prom,
    ])
    .args([
        "--interval",
        "1s",
        "--cluster",
        "c-fra-1",
        "--capacity-file",
    ])
    .arg(&capacity)
    .args(["--map", "catalog-v1=catalog", "--map", "catalog-v2=catalog"])
    .env("BERTH_TOKEN", TOKEN)
    .stderr(std::process::Stdio::piped());
    let child = c.spawn().unwrap();
    let accepted = || {
        log.posts
            .lock()
            .unwrap()
            .iter()
            .filter(|p| p.1 == 200)
            .count()
    };
    wait_for(Duration::from_secs(20), "three delivered batches", || {
        accepted() >= 3
    })
    .await;
    let (code, stderr) = stop(child).await;
    assert_eq!(code, 0, "{stderr}");

    let posts = log.posts.lock().unwrap().clone();
    let statuses: Vec<u16> = posts.iter().map(|p| p.1).collect();
    // Tick 1: 503 → retried ≥ 1 s later as the same batch → 422 (the
    // agent token cannot read the estate, so istio-ingressgateway went
    // out and was refused) → the rest as `…-pruned` → 200. Later ticks
    // leave istio-ingressgateway out from the start.
    assert_eq!(&statuses[..3], [503, 422, 200], "{statuses:?}");
    assert!(statuses[3..].iter().all(|&s| s == 200), "{statuses:?}");
    let id = |i: usize| posts[i].0["batch_id"].as_str().unwrap().to_string();
    assert_eq!(posts[0].0, posts[1].0, "a retry is the same batch");
    assert!(
        posts[1].2 - posts[0].2 >= Duration::from_secs(1),
        "Retry-After honoured"
    );
    assert_eq!(id(2), format!("{}-pruned", id(0)));
    assert!(id(0).starts_with("agent-"));
    let ids: std::collections::BTreeSet<String> = (2..posts.len()).map(id).collect();
    assert_eq!(
        ids.len(),
        posts.len() - 2,
        "every later tick is a new batch"
    );

    for (body, _, _) in &posts[2..] {
        let obs = body["observations"].as_array().unwrap();
        // Capacity, dated by the file.
        let cap = facts(obs, "cpu_free");
        assert_eq!(cap.len(), 1);
        assert_eq!(cap[0]["cluster"], "c-fra-1");
        assert_eq!(cap[0]["value"], 5.5);
        assert_eq!(cap[0]["class"], "measured");
        assert_eq!(cap[0]["observed_at"], "2026-11-30T04:03:20Z");
        assert_eq!(facts(obs, "memory_free_gib")[0]["value"], 58.0);
        // The flows of the fixtures (see prometheus_import.rs), dated by
        // the evaluation time the agent asked Prometheus for; no source
        // given, so the server names the agent's token.
        let flows = facts(obs, "flow_");
        assert_eq!(flows.len(), 11, "{flows:?}");
        let gw = flows
            .iter()
            .find(|o| o["from"] == "shop-gateway" && o["fact"] == "flow_weight")
            .unwrap();
        assert_eq!(gw["value"], 14.1034);
        assert!(gw.get("source").is_none());
        let at = berth_engine::estate::parse_time(gw["observed_at"].as_str().unwrap()).unwrap();
        let asked: Vec<i64> = prom_log
            .requests
            .lock()
            .unwrap()
            .iter()
            .map(|r| r.1.as_ref().unwrap().parse().unwrap())
            .collect();
        assert!(asked.contains(&at), "{at} not among {asked:?}");
    }

    for line in [
        "agent started",
        "not delivered, retrying: server unavailable (503): scripted failure",
        "left out: no service \"istio-ingressgateway\" in this estate",
        "delivered",
        "stop requested",
        "agent stopped",
    ] {
        assert!(
            stderr.contains(line),
            "missing {line:?} in the log:\n{stderr}"
        );
    }
    assert!(!stderr.contains(TOKEN), "the token is never logged");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn capacity_command_and_prometheus_trouble_do_not_stop_the_agent() {
    // Prometheus times out on the rate query: the mesh part of every tick
    // is skipped, the capacity still goes.
    let mut responses = istio_responses();
    responses.insert(
        "slow".into(),
        (
            503,
            serde_json::json!({"status": "error", "errorType": "timeout", "error": "query timed out"}),
        ),
    );
    let (prom, _) = fake_prometheus(responses).await;
    let (server, log) = fake_berth(false, vec![]).await;
    let mut c = berth();
    c.args([
        "agent",
        "--server",
        &server,
        "--estate",
        "sample",
        "--prometheus",
        &prom,
    ])
    .args([
        "--query-rate",
        "slow",
        "--interval",
        "1s",
        "--cluster",
        "c-par-1",
    ])
    .args([
        "--capacity-command",
        r#"echo '{"cpu_free": 31, "memory_free_gib": null}'"#,
    ])
    .env("BERTH_TOKEN", TOKEN)
    .stderr(std::process::Stdio::piped());
    let started = chrono::Utc::now().timestamp();
    let child = c.spawn().unwrap();
    let posted = || log.posts.lock().unwrap().len();
    wait_for(Duration::from_secs(20), "two batches", || posted() >= 2).await;
    let (code, stderr) = stop(child).await;
    assert_eq!(code, 0, "{stderr}");
    let ended = chrono::Utc::now().timestamp();

    for (body, status, _) in log.posts.lock().unwrap().iter() {
        assert_eq!(*status, 200);
        let obs = body["observations"].as_array().unwrap();
        assert_eq!(obs.len(), 2, "capacity only: {obs:?}");
        assert_eq!(obs[0]["fact"], "cpu_free");
        assert_eq!(obs[0]["value"], 31.0);
        // null: the command does not know; sent as unknown.
        assert_eq!(obs[1]["fact"], "memory_free_gib");
        assert!(obs[1]["value"].is_null());
        // A command's output is dated by the tick.
        let at = berth_engine::estate::parse_time(obs[0]["observed_at"].as_str().unwrap()).unwrap();
        assert!(
            (started..=ended).contains(&at),
            "{at} in {started}..={ended}"
        );
    }
    assert!(
        stderr.contains("mesh metrics not read this tick: rate query: Prometheus answered errorType \"timeout\": query timed out"),
        "{stderr}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failing_capacity_command_is_logged_and_the_next_tick_tries_again() {
    let (server, log) = fake_berth(false, vec![]).await;
    let dir = tempfile::tempdir().unwrap();
    let flag = dir.path().join("second-run");
    // Fails the first time, then prints capacity.
    let cmd = format!(
        r#"if [ -e {0} ]; then echo '{{"cpu_free": 2}}'; else touch {0}; echo 'kubectl: connection refused' >&2; exit 1; fi"#,
        flag.display()
    );
    let mut c = berth();
    c.args([
        "agent",
        "--server",
        &server,
        "--estate",
        "sample",
        "--interval",
        "1s",
    ])
    .args(["--cluster", "c-fra-2", "--capacity-command", &cmd])
    .env("BERTH_TOKEN", TOKEN)
    .stderr(std::process::Stdio::piped());
    let child = c.spawn().unwrap();
    wait_for(Duration::from_secs(20), "a batch", || {
        !log.posts.lock().unwrap().is_empty()
    })
    .await;
    let (code, stderr) = stop(child).await;
    assert_eq!(code, 0, "{stderr}");
    assert!(
        stderr.contains("capacity not read this tick: the capacity command failed (exit status: 1): kubectl: connection refused"),
        "{stderr}"
    );
    assert!(stderr.contains("nothing to send this tick"), "{stderr}");
    assert_eq!(
        log.posts.lock().unwrap()[0].0["observations"][0]["value"],
        2.0
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn usage_errors_exit_2_at_once() {
    let (server, _) = fake_berth(false, vec![]).await;
    let cases: Vec<(Vec<&str>, &str)> = vec![
        (vec![], "nothing to report"),
        (vec!["--capacity-file", "x.json"], "--cluster"),
        (
            vec!["--prometheus", "http://p:9090", "--interval", "0.5s"],
            "between 1s and 24h",
        ),
        (
            vec!["--prometheus", "http://p:9090", "--interval", "5 minutes"],
            "--interval",
        ),
        (
            vec!["--prometheus", "ftp://p:9090"],
            "expected an http:// or https:// URL",
        ),
        (
            vec!["--prometheus", "http://p:9090", "--map", "x"],
            "WORKLOAD=SERVICE",
        ),
    ];
    for (args, expect) in cases {
        let mut c = berth();
        c.args([
            "agent", "--server", &server, "--estate", "sample", "--token", TOKEN,
        ])
        .args(&args);
        let (code, out, err) = fakes::run(c).await;
        assert_eq!(code, 2, "{args:?}: {out}\n{err}");
        assert!(
            err.contains(expect),
            "{args:?}: expected {expect:?} in:\n{err}"
        );
    }
}

/// A proxy in front of a real server that loses the answer to the first
/// batch the server accepted: the server applied it, the agent is told
/// 503 (Retry-After: 1) and must retry the same batch, which the server
/// then recognises as a duplicate. Every answer is recorded (status and
/// body, as the server gave it).
async fn lossy_proxy(upstream: String) -> (String, Arc<Mutex<Vec<(u16, Value)>>>) {
    let seen: Arc<Mutex<Vec<(u16, Value)>>> = Arc::default();
    let lost = Arc::new(AtomicBool::new(false));
    let http = reqwest::Client::new();
    let record = seen.clone();
    let app = axum::Router::new().fallback(move |req: axum::extract::Request| {
        let (http, upstream, seen, lost) =
            (http.clone(), upstream.clone(), record.clone(), lost.clone());
        async move {
            let (parts, body) = req.into_parts();
            let body = axum::body::to_bytes(body, usize::MAX).await.unwrap();
            let mut forward = http.request(
                parts.method.clone(),
                format!("{upstream}{}", parts.uri.path_and_query().unwrap()),
            );
            for name in ["authorization", "content-type"] {
                if let Some(v) = parts.headers.get(name) {
                    forward = forward.header(name, v.clone());
                }
            }
            let resp = forward.body(body).send().await.unwrap();
            let status = resp.status().as_u16();
            let answer: Value = resp.json().await.unwrap_or(Value::Null);
            seen.lock().unwrap().push((status, answer.clone()));
            if status == 200 && !lost.swap(true, Ordering::SeqCst) {
                return axum::response::Response::builder()
                    .status(503)
                    .header("retry-after", "1")
                    .header("content-type", "application/json")
                    .body(axum::body::Body::from(
                        r#"{"error": "unavailable", "message": "lost on the way back"}"#,
                    ))
                    .unwrap();
            }
            axum::response::Response::builder()
                .status(status)
                .header("content-type", "application/json")
                .body(axum::body::Body::from(answer.to_string()))
                .unwrap()
        }
    });
    (fakes::serve(app).await, seen)
}

/// End to end: `berth agent` against a real `berth serve` (through the
/// lossy proxy) and the fake Prometheus, every second, then SIGTERM.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn end_to_end_against_berth_serve() {
    let server = fakes::RealBerth::start().await;
    let token = server.agent_token("agent-c-fra-1").await;
    let (prom, _) = fake_prometheus(istio_responses()).await;
    let (proxy, answers) = lossy_proxy(server.url.clone()).await;
    let dir = tempfile::tempdir().unwrap();
    let capacity = dir.path().join("capacity.json");
    std::fs::write(
        &capacity,
        r#"{"cpu_free": 7.25, "memory_free_gib": 61, "observed_at": "2026-11-30T04:10:00Z"}"#,
    )
    .unwrap();

    let mut c = berth();
    c.args([
        "agent",
        "--server",
        &proxy,
        "--estate",
        "sample",
        "--prometheus",
        &prom,
    ])
    .args([
        "--interval",
        "1s",
        "--cluster",
        "c-fra-1",
        "--capacity-file",
    ])
    .arg(&capacity)
    .args(["--map", "catalog-v1=catalog", "--map", "catalog-v2=catalog"])
    .env("BERTH_TOKEN", &token)
    .stderr(std::process::Stdio::piped());
    let child = c.spawn().unwrap();
    let delivered = || {
        answers
            .lock()
            .unwrap()
            .iter()
            .filter(|(s, a)| *s == 200 && a["duplicate"] == false)
            .count()
    };
    wait_for(Duration::from_secs(30), "three applied batches", || {
        delivered() >= 3
    })
    .await;
    let (code, log) = stop(child).await;
    assert_eq!(code, 0, "{log}");

    // 422 (istio-ingressgateway), the pruned batch applied (its answer
    // lost), the same batch again: a duplicate naming the same version.
    let answers = answers.lock().unwrap().clone();
    assert_eq!(answers[0].0, 422, "{answers:?}");
    assert_eq!(answers[1].0, 200);
    assert_eq!(answers[1].1["duplicate"], false);
    assert_eq!(answers[2].0, 200);
    assert_eq!(answers[2].1["duplicate"], true, "{answers:?}");
    assert_eq!(answers[2].1["batch_id"], answers[1].1["batch_id"]);
    assert_eq!(
        answers[2].1["version"], answers[1].1["version"],
        "applied once"
    );
    let versions: Vec<i64> = answers
        .iter()
        .filter(|(s, a)| *s == 200 && a["duplicate"] == false)
        .map(|(_, a)| a["version"].as_i64().unwrap())
        .collect();
    assert_eq!(
        versions,
        (2..2 + versions.len() as i64).collect::<Vec<_>>(),
        "one version per batch, none twice"
    );
    assert!(log.contains("duplicate=true"), "{log}");

    let estate = server.estate_file().await;
    let c_fra_1 = estate["clusters"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["id"] == "c-fra-1")
        .unwrap();
    // The source recorded is the agent's token, by id and name.
    let source = c_fra_1["cpu_free"]["source"].as_str().unwrap();
    assert!(
        source.starts_with("token:") && source.ends_with(" (agent-c-fra-1)"),
        "{source}"
    );
    let measured = |v: f64, at: &str| serde_json::json!({"value": v, "class": "measured", "source": source, "observed_at": at});
    assert_eq!(c_fra_1["cpu_free"], measured(7.25, "2026-11-30T04:10:00Z"));
    assert_eq!(
        c_fra_1["memory_free_gib"],
        measured(61.0, "2026-11-30T04:10:00Z")
    );
    let gw = fakes::flow(&estate, "shop-gateway", "shop-frontend");
    assert_eq!(gw["weight"]["value"], 14.1034);
    assert_eq!(gw["weight"]["class"], "measured");
    assert_eq!(gw["weight"]["source"], source);
    assert_eq!(gw["mb_s"]["value"], 38.2041);
    assert!(!log.contains(&token), "the token is never logged");
    assert!(!server.log.lock().unwrap().contains(&token));
}

/// `berth agent --create-cluster` (issue 13): a team starts with the
/// estate's sites and lets each cluster's agent add its cluster at the
/// first report — only with a token an administrator allowed to.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_allowed_agent_creates_its_cluster_at_first_report() {
    let server = fakes::RealBerth::start().await;
    let dir = tempfile::tempdir().unwrap();
    let capacity = dir.path().join("capacity.json");
    std::fs::write(
        &capacity,
        r#"{"cpu_free": 30.5, "memory_free_gib": 100, "observed_at": "2026-11-30T04:10:00Z"}"#,
    )
    .unwrap();
    let agent = |token: &str| {
        let mut c = berth();
        c.args(["agent", "--server", &server.url, "--estate", "sample"])
            .args([
                "--interval",
                "1s",
                "--cluster",
                "c-fra-new",
                "--capacity-file",
            ])
            .arg(&capacity)
            .args(["--create-cluster", "--site", "fra", "--tier", "prod"])
            .args(["--cluster-name", "Frankfurt, new hall"])
            .args(["--cpu-total", "48", "--memory-total-gib", "192"])
            .env("BERTH_TOKEN", token)
            .stderr(std::process::Stdio::piped());
        c.spawn().unwrap()
    };
    let has_cluster = |estate: &Value| {
        estate["clusters"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["id"] == "c-fra-new")
            .cloned()
    };

    // A plain agent token may report, not create: refused, said, nothing written.
    let plain = server
        .token(serde_json::json!({"name": "agent-plain", "role": "agent", "estate": "sample", "clusters": ["c-fra-new"]}))
        .await;
    let child = agent(&plain);
    tokio::time::sleep(Duration::from_secs(3)).await;
    let (code, log) = stop(child).await;
    assert_eq!(code, 0, "{log}");
    assert!(log.contains("may not create clusters"), "{log}");
    assert!(has_cluster(&server.estate_file().await).is_none());

    // Allowed: the first batch creates it, with the capacity it reported.
    let allowed = server
        .token(serde_json::json!({"name": "agent-c-fra-new", "role": "agent", "estate": "sample", "clusters": ["c-fra-new"], "may_create_clusters": true}))
        .await;
    let child = agent(&allowed);
    let mut created = None;
    let start = Instant::now();
    while created.is_none() {
        assert!(
            start.elapsed() < Duration::from_secs(30),
            "the cluster was never created"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
        created = has_cluster(&server.estate_file().await);
    }
    // Later batches find it there and only report.
    tokio::time::sleep(Duration::from_millis(2500)).await;
    let (code, log) = stop(child).await;
    assert_eq!(code, 0, "{log}");
    assert_eq!(
        log.matches("created the cluster in the estate").count(),
        1,
        "{log}"
    );
    let c = created.unwrap();
    assert_eq!(c["name"], "Frankfurt, new hall");
    assert_eq!(
        (c["site"].as_str(), c["tier"].as_str()),
        (Some("fra"), Some("prod"))
    );
    assert_eq!(c["trust_zone"], "general");
    assert_eq!(c["health"], "healthy");
    assert_eq!(
        (c["cpu_total"].as_f64(), c["memory_total_gib"].as_f64()),
        (Some(48.0), Some(192.0))
    );
    assert!(c["enrolled_at"].is_string(), "{c}");
    assert_eq!(c["cpu_free"]["value"], 30.5);
    assert_eq!(c["cpu_free"]["class"], "measured");
    let source = c["cpu_free"]["source"].as_str().unwrap();
    assert!(
        source.starts_with("token:") && source.ends_with(" (agent-c-fra-new)"),
        "{source}"
    );

    // Only agent tokens carry the permission.
    let r = reqwest::Client::new()
        .post(format!("{}/api/tokens", server.url))
        .bearer_auth(fakes::ADMIN_TOKEN)
        .json(&serde_json::json!({"name": "x", "role": "viewer", "may_create_clusters": true}))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 400);
}

/// A cluster record the estate cannot take is refused whole, at
/// `/cluster/...`, and nothing of the batch is applied.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_bad_cluster_record_is_refused_at_its_place() {
    let server = fakes::RealBerth::start().await;
    let token = server
        .token(serde_json::json!({"name": "agent-x", "role": "agent", "estate": "sample", "clusters": ["c-mars-1"], "may_create_clusters": true}))
        .await;
    let before = server.estate_file().await;
    let r = reqwest::Client::new()
        .post(format!("{}/api/estates/sample/observations", server.url))
        .bearer_auth(&token)
        .json(&serde_json::json!({
            "batch_id": "bad-record-1",
            "cluster": {"id": "c-mars-1", "site": "mars", "tier": "prod", "cpu_total": 8, "memory_total_gib": 32},
            "observations": [{"fact": "cpu_free", "cluster": "c-mars-1", "value": 4, "observed_at": "2026-11-30T04:10:00Z"}],
        }))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 422);
    let body: Value = r.json().await.unwrap();
    let errors = body["details"]["errors"].as_array().unwrap();
    assert!(
        errors.iter().any(
            |e| e["path"] == "/cluster/site" && e["message"].as_str().unwrap().contains("mars")
        ),
        "{body}"
    );
    assert_eq!(server.estate_file().await, before, "nothing written");
}

/// Round trips between clusters (issue 14): two agents on loopback, each
/// answering probes and told the other's address by the server, post the
/// median of their TCP connects as measured path facts; the advice then
/// takes the path between their clusters as measured (`measured_path`).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_agents_probe_each_other_and_post_measured_round_trips() {
    let server = fakes::RealBerth::start().await;
    let mut agents = vec![];
    let mut tokens = vec![];
    for cluster in ["c-fra-1", "c-par-1"] {
        let token = server.agent_token(&format!("agent-{cluster}")).await;
        let mut c = berth();
        c.args(["agent", "--server", &server.url, "--estate", "sample"])
            .args(["--interval", "1s", "--cluster", cluster])
            // Port 0: the agent takes a free one and advertises it.
            .args(["--probe-listen", "127.0.0.1:0"])
            .env("BERTH_TOKEN", &token)
            .stderr(std::process::Stdio::piped());
        agents.push(c.spawn().unwrap());
        tokens.push(token);
    }
    // Both have registered after their first tick, each learns the other
    // at its next, and measures at the one after.
    let start = Instant::now();
    let path = loop {
        let estate = server.estate_file().await;
        let found = estate["paths"].as_array().unwrap().iter().find(|p| {
            let pair = (p["a"].as_str().unwrap(), p["b"].as_str().unwrap());
            (pair == ("c-fra-1", "c-par-1") || pair == ("c-par-1", "c-fra-1"))
                && p["rtt_ms"]["source"]
                    .as_str()
                    .is_some_and(|s| s.starts_with("token:"))
        });
        if let Some(p) = found {
            break p.clone();
        }
        assert!(
            start.elapsed() < Duration::from_secs(30),
            "no measured round trip within 30 s:\n{}",
            server.log.lock().unwrap()
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    };
    // Two more ticks: by then the other agent has measured too.
    tokio::time::sleep(Duration::from_millis(2500)).await;
    let mut logs = vec![];
    for a in agents {
        let (code, log) = stop(a).await;
        assert_eq!(code, 0, "{log}");
        logs.push(log);
    }
    // The figure as it stands once both have stopped.
    let estate = server.estate_file().await;
    let path = estate["paths"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["a"] == path["a"] && p["b"] == path["b"])
        .unwrap()
        .clone();
    let rtt = &path["rtt_ms"];
    eprintln!("measured path: {path}");
    assert_eq!(rtt["class"], "measured");
    let ms = rtt["value"].as_f64().unwrap();
    assert!(ms > 0.0 && ms < 5.0, "a loopback round trip of {ms} ms");
    let observed = berth_engine::estate::parse_time(rtt["observed_at"].as_str().unwrap()).unwrap();
    let now = chrono::Utc::now().timestamp();
    assert!(
        (now - observed).abs() < 60,
        "observed at {observed}, now {now}"
    );
    for (log, token) in logs.iter().zip(&tokens) {
        assert!(log.contains("round trip measured"), "{log}");
        assert!(!log.contains(token.as_str()), "the token is never logged");
    }

    // The engine takes it as the measured path between the two clusters:
    // the decider request it builds (what every decider sees) has it, and
    // the advice's deciding facts show it with its derivation.
    let at = berth_engine::estate::format_time(now);
    let preview = server
        .get(&format!("/api/estates/sample/preview?now={at}"))
        .await;
    let in_request = preview["result"]["paths"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["a"] == "c-fra-1" && p["b"] == "c-par-1")
        .cloned()
        .unwrap();
    assert_eq!(in_request["class"], "measured", "{in_request}");
    assert_eq!(in_request["rtt_ms"].as_f64(), rtt["value"].as_f64());
    let advice = server
        .get(&format!("/api/estates/sample/advice?now={at}"))
        .await;
    let deciding: Vec<&Value> = advice["result"]["moves"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|m| m["facts"].as_array().unwrap())
        .filter(|f| f["fact"] == "rtt c-fra-1↔c-par-1")
        .collect();
    assert!(
        !deciding.is_empty(),
        "no move rests on the c-fra-1↔c-par-1 round trip: {advice}"
    );
    for f in deciding {
        assert_eq!(f["derivation"], "measured_path", "{f}");
        assert_eq!(f["class"], "measured", "{f}");
        assert!(f["source"].as_str().unwrap().starts_with("token:"), "{f}");
    }
}

/// End to end (issue 14): an agent reporting its cluster's flows (mesh),
/// free capacity and round trips, and the other cluster's agent answering
/// probes, against a real `berth serve` that is killed and restarted while
/// they run. Everything arrives, the batches in flight during the outage
/// are retried and land once the server is back (none given up), the
/// advice changes with the fresh facts, and no token is in any log.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn flows_capacity_and_round_trips_arrive_across_a_server_restart() {
    let server = fakes::RealBerth::start().await;
    let fra = server.agent_token("agent-c-fra-1").await;
    let par = server.agent_token("agent-c-par-1").await;
    let (prom, _) = fake_prometheus(istio_responses()).await;
    let dir = tempfile::tempdir().unwrap();
    let capacity = dir.path().join("capacity.json");
    std::fs::write(&capacity, r#"{"cpu_free": 3.5, "memory_free_gib": 20}"#).unwrap();
    let now = || berth_engine::estate::format_time(chrono::Utc::now().timestamp());
    let advice_path = || format!("/api/estates/sample/advice?now={}", now());
    let before = server.get(&advice_path()).await;

    let agent = |token: &str, args: &[&str]| {
        let mut c = berth();
        c.args([
            "agent",
            "--server",
            &server.url,
            "--estate",
            "sample",
            "--interval",
            "1s",
        ])
        .args(args)
        .args(["--probe-listen", "127.0.0.1:0"])
        .env("BERTH_TOKEN", token)
        .stderr(std::process::Stdio::piped());
        c.spawn().unwrap()
    };
    let cap = capacity.to_str().unwrap().to_string();
    let a = agent(
        &fra,
        &[
            "--cluster",
            "c-fra-1",
            "--prometheus",
            &prom,
            "--capacity-file",
            &cap,
            "--map",
            "catalog-v1=catalog",
            "--map",
            "catalog-v2=catalog",
        ],
    );
    let b = agent(&par, &["--cluster", "c-par-1"]);

    // Everything arrives: capacity, a flow, the round trip.
    let arrived = |estate: &Value| {
        let by_token = |v: &Value| {
            v["source"]
                .as_str()
                .is_some_and(|s| s.starts_with("token:"))
        };
        let cluster = estate["clusters"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["id"] == "c-fra-1")
            .unwrap();
        let path = estate["paths"]
            .as_array()
            .unwrap()
            .iter()
            .find(|p| p["a"] == "c-fra-1" && p["b"] == "c-par-1");
        by_token(&cluster["cpu_free"])
            && by_token(&fakes::flow(estate, "shop-gateway", "shop-frontend")["weight"])
            && path.is_some_and(|p| by_token(&p["rtt_ms"]))
    };
    let start = Instant::now();
    let version_before_restart = loop {
        let estate = server.estate_file().await;
        if arrived(&estate) {
            break estate;
        }
        assert!(
            start.elapsed() < Duration::from_secs(30),
            "not everything arrived:\n{}",
            server.log.lock().unwrap()
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    };
    let _ = version_before_restart;
    let (v0, _) = version(&server).await;

    // Killed, down for 3 ticks, back on the same address and data.
    let server = server.restart(Duration::from_secs(3)).await;
    let (v1, _) = version(&server).await;
    assert_eq!(v1, v0, "a restart loses no version");
    // Batches keep landing after the restart.
    let start = Instant::now();
    loop {
        let (v, _) = version(&server).await;
        if v >= v1 + 3 {
            break;
        }
        assert!(
            start.elapsed() < Duration::from_secs(30),
            "no batch landed after the restart:\n{}",
            server.log.lock().unwrap()
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    let estate = server.estate_file().await;
    assert!(arrived(&estate));
    let after = server.get(&advice_path()).await;

    let mut logs = vec![];
    for child in [a, b] {
        let (code, log) = stop(child).await;
        assert_eq!(code, 0, "{log}");
        logs.push(log);
    }
    // The outage was seen and ridden out: retried, never given up.
    assert!(
        logs.iter().any(|l| l.contains("not delivered, retrying")),
        "{}",
        logs.join("\n")
    );
    for log in &logs {
        assert!(!log.contains("batch not delivered"), "{log}");
    }
    // Fresh measured facts change the advice (the sample's are a day old).
    assert_ne!(
        before["result_digest"], after["result_digest"],
        "the advice did not change"
    );
    let measured = |a: &Value| {
        a["result"]["moves"]
            .as_array()
            .unwrap()
            .iter()
            .flat_map(|m| m["facts"].as_array().unwrap())
            .filter(|f| {
                f["class"] == "measured"
                    && f["source"]
                        .as_str()
                        .is_some_and(|s| s.starts_with("token:"))
            })
            .count()
    };
    assert!(
        measured(&after) > measured(&before),
        "no deciding fact is one the agents measured"
    );
    for (log, token) in logs.iter().zip([&fra, &par]) {
        assert!(!log.contains(token.as_str()));
    }
    let server_log = server.log.lock().unwrap().clone();
    assert!(!server_log.contains(&fra) && !server_log.contains(&par));
}

/// The sample estate's version and content digest, as the admin sees it.
async fn version(server: &fakes::RealBerth) -> (i64, String) {
    let v = server.get("/api/estates/sample").await;
    (
        v["version"].as_i64().unwrap_or_else(|| panic!("{v}")),
        v["content_digest"].as_str().unwrap_or_default().to_string(),
    )
}
