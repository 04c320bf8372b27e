//! An applied move judged from a real Prometheus (issue 36,
//! docs/outcomes.md): Istio series for `frontend → currency` are
//! backfilled into Debian's `prometheus` with one rate and latency before
//! a planned moment and another after it. A real `berth serve` (its
//! advice driver every 2 s) gets the flow from `berth import prometheus`
//! before that moment; its advice recommends `frontend` c1 → c2; at the
//! moment the estate is uploaded with `frontend` in c2; then `berth agent`
//! reads the mesh after the move and posts the flow. The outcome must
//! rest on the agent's flow: its weight and MB/s after the move are the
//! series' figures after the change (within 1 %, Little's law computed
//! here), and every observed figure is the formula of docs/outcomes.md
//! over the values the import and the agent posted (1e-9 relative).
//!
//! The queries are Istio's defaults with a one-minute window, so that the
//! agent's window lies wholly after the move a minute after it.
//!
//! Skipped, with a message, only when `promtool` is absent and
//! `BERTH_REQUIRE_PROMETHEUS` is unset.

mod fakes;
#[path = "support/prometheus.rs"]
mod prometheus;

use std::process::Stdio;
use std::time::Duration;

use berth_engine::estate::{format_time, parse_time};
use fakes::{berth, run, stop_agent, RealBerth, ADMIN_TOKEN};
use prometheus::{have_prometheus, openmetrics, start_prometheus, Counter};
use serde_json::{json, Value};

/// The scrape interval the series are written at.
const STEP: i64 = 15;
/// Requests/s and mean milliseconds of `frontend → currency` before the
/// move (across sites, 20 ms away: weight 4 by Little's law) and after it
/// (in one cluster, more requests, each faster).
const RPS: (f64, f64) = (100.0, 130.0);
const MEAN_MS: (f64, f64) = (40.0, 12.0);
/// Request and response bytes per request.
const REQ_BYTES: f64 = 500.0;
const RESP_BYTES: f64 = 20000.0;

/// Istio's default queries with a one-minute window instead of five.
fn one_minute_queries() -> Vec<String> {
    let q = berth::import::mesh::Queries::default();
    let w = |s: &str| {
        assert!(s.contains("[5m]"), "{s}");
        s.replace("[5m]", "[1m]")
    };
    vec![
        "--query-rate".into(),
        w(&q.rate),
        "--query-duration".into(),
        w(&q.duration),
        "--query-bytes".into(),
        w(q.bytes.as_deref().unwrap()),
        "--query-coverage".into(),
        w(q.coverage.as_deref().unwrap()),
    ]
}

/// The caller's (source) and callee's (destination) proxies' series of
/// the one edge: only the caller's count (the callee's duration is
/// shorter, a query mixing them would be off).
fn counters() -> Vec<Counter> {
    let mut out = Vec::new();
    for reporter in ["source", "destination"] {
        let labels = vec![
            ("reporter", reporter.to_string()),
            ("source_workload", "frontend".to_string()),
            ("source_workload_namespace", "shop".to_string()),
            ("destination_workload", "currency".to_string()),
            ("destination_workload_namespace", "shop".to_string()),
            ("response_code", "200".to_string()),
        ];
        let side = if reporter == "source" { 1.0 } else { 0.7 };
        let mut c = |name, per_request: (f64, f64)| {
            out.push(Counter {
                name,
                labels: labels.clone(),
                before: RPS.0 * per_request.0,
                after: RPS.1 * per_request.1,
            })
        };
        c("istio_requests_total", (1.0, 1.0));
        c("istio_request_duration_milliseconds_count", (1.0, 1.0));
        c(
            "istio_request_duration_milliseconds_sum",
            (MEAN_MS.0 * side, MEAN_MS.1 * side),
        );
        c("istio_request_bytes_sum", (REQ_BYTES, REQ_BYTES));
        c("istio_response_bytes_sum", (RESP_BYTES, RESP_BYTES));
    }
    out
}

/// The estate: `frontend` in c1 (site s1) calls `currency` in c2 (site
/// s2, 20 ms away), which calls `ledger` beside it heavily (so the advice
/// moves the caller, not `currency`).
fn estate(at: i64) -> Value {
    let fact = |v: f64| json!({"value": v, "class": "measured", "source": "probe", "observed_at": format_time(at)});
    let cluster = |id: &str, site: &str| {
        json!({"id": id, "site": site, "tier": "prod", "trust_zone": "general", "health": "healthy",
               "cpu_total": 64, "memory_total_gib": 256, "cpu_free": fact(40.0), "memory_free_gib": fact(200.0)})
    };
    let service = |id: &str, c: &str| json!({"id": id, "owner": "shop", "cluster": c, "cpu": 1, "memory_gib": 2});
    json!({
        "schema": 1,
        "name": "shop",
        "traffic": "declared",
        "sites": [
            {"id": "s1", "name": "S1", "lat": 50.11, "lon": 8.68, "jurisdiction": "eu"},
            {"id": "s2", "name": "S2", "lat": 48.86, "lon": 2.35, "jurisdiction": "eu"}
        ],
        "clusters": [cluster("c1", "s1"), cluster("c2", "s2")],
        "paths": [{"a": "c1", "b": "c2", "rtt_ms": fact(20.0)}],
        "services": [service("frontend", "c1"), service("currency", "c2"), service("ledger", "c2")],
        "flows": [
            {"from": "frontend", "to": "currency", "weight": fact(0.5), "mb_s": fact(0.1)},
            {"from": "currency", "to": "ledger", "weight": fact(20.0), "mb_s": fact(30.0)}
        ]
    })
}

fn close(got: f64, want: f64, rel: f64, what: &str) {
    let scale = want.abs().max(1e-12);
    assert!(
        ((got - want) / scale).abs() <= rel,
        "{what}: got {got}, want {want}"
    );
}

/// `frontend → currency` of an estate file: (weight, MB/s, observed_at).
fn the_flow(file: &Value) -> (f64, f64, i64) {
    let f = fakes::flow(file, "frontend", "currency");
    (
        f["weight"]["value"].as_f64().unwrap(),
        f["mb_s"]["value"].as_f64().unwrap(),
        parse_time(f["weight"]["observed_at"].as_str().unwrap()).unwrap(),
    )
}

async fn send(server: &RealBerth, token: &str, method: reqwest::Method, path: &str, body: &Value) {
    let r = reqwest::Client::new()
        .request(method, format!("{}{path}", server.url))
        .bearer_auth(token)
        .json(body)
        .send()
        .await
        .unwrap();
    let status = r.status();
    assert!(
        status.is_success(),
        "{path}: {status}: {}",
        r.text().await.unwrap()
    );
}

async fn sleep_until(t: i64) {
    let now = berth::clock::now_s();
    if t > now {
        tokio::time::sleep(Duration::from_secs((t - now) as u64)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_flows_an_agent_measures_after_a_move_feed_its_outcome() {
    if !have_prometheus() {
        return;
    }
    // The server's advice driver: a pass every 2 s (read by the child
    // `berth serve` from its environment), so the advice on the imported
    // flow is taken within seconds.
    std::env::set_var("BERTH_DRIVER_EVERY", "2");
    let setup = berth::clock::now_s();
    // The planned moment of the move, on the scrape grid: time for
    // Prometheus to start, the import and a driver pass first.
    let change = (setup + 45) / STEP * STEP + STEP;
    let origin = setup - 3600;
    let times: Vec<i64> = (origin / STEP * STEP + STEP..=change + 900)
        .step_by(STEP as usize)
        .collect();
    let prom = start_prometheus(&openmetrics(&counters(), &times, origin, change)).await;
    let server = RealBerth::start().await;
    send(
        &server,
        ADMIN_TOKEN,
        reqwest::Method::POST,
        "/api/estates?id=shop",
        &estate(setup - 60),
    )
    .await;
    let queries = one_minute_queries();
    let q: Vec<&str> = queries.iter().map(String::as_str).collect();

    // Before the move: the import reads the series' first rate.
    let mut c = berth();
    c.args([
        "import",
        "prometheus",
        "--server",
        &server.url,
        "--estate",
        "shop",
        "--url",
        &prom.url,
    ])
    .args(&q)
    .env("BERTH_TOKEN", ADMIN_TOKEN);
    let (code, out, err) = run(c).await;
    assert_eq!(code, 0, "{out}\n{err}");
    let before_file = server.get("/api/estates/shop/file").await;
    let (w_b, mb_b, _) = the_flow(&before_file);
    eprintln!("imported before the move: weight {w_b}, MB/s {mb_b}");
    close(w_b, RPS.0 * MEAN_MS.0 / 1000.0, 0.01, "weight before");
    close(
        mb_b,
        RPS.0 * (REQ_BYTES + RESP_BYTES) / 1e6,
        0.01,
        "MB/s before",
    );

    // The driver's advice on it recommends frontend → c2.
    let version = server.get("/api/estates/shop").await["version"].clone();
    let start = std::time::Instant::now();
    let snapshot = loop {
        let s = server.get("/api/estates/shop/advice-snapshots").await;
        if let Some(n) = s["snapshots"]
            .as_array()
            .and_then(|a| a.iter().find(|x| x["estate_version"] == version))
        {
            break n.clone();
        }
        assert!(
            start.elapsed() < Duration::from_secs(30),
            "no advice snapshot of version {version}: {s}"
        );
        tokio::time::sleep(Duration::from_millis(300)).await;
    };
    let first = &snapshot["result"]["moves"][0];
    assert_eq!(
        (&first["service"], &first["to"]),
        (&json!("frontend"), &json!("c2")),
        "{snapshot}"
    );
    let predicted = first["gain"].as_f64().unwrap();

    // The move, at the planned moment (the series change then).
    assert!(
        berth::clock::now_s() < change,
        "the setup took past the planned move at {}",
        format_time(change)
    );
    sleep_until(change).await;
    let mut file = server.get("/api/estates/shop/file").await;
    for s in file["services"].as_array_mut().unwrap() {
        if s["id"] == "frontend" {
            s["cluster"] = json!("c2");
        }
    }
    send(
        &server,
        ADMIN_TOKEN,
        reqwest::Method::PUT,
        "/api/estates/shop/file",
        &file,
    )
    .await;
    let moved_at = berth::clock::now_s();

    // A minute later (the queries' window wholly after the change), the
    // agent reads the mesh and posts the flow.
    sleep_until(change + 62).await;
    let token = server
        .token(json!({"name": "agent-shop", "role": "agent", "estate": "shop", "clusters": ["c1", "c2"]}))
        .await;
    let mut c = berth();
    c.args([
        "agent",
        "--server",
        &server.url,
        "--estate",
        "shop",
        "--prometheus",
        &prom.url,
        "--interval",
        "1s",
    ])
    .args(&q)
    .env("BERTH_TOKEN", &token)
    .stderr(Stdio::piped());
    let child = c.spawn().unwrap();
    let start = std::time::Instant::now();
    let (w_a, mb_a, at) = loop {
        let f = the_flow(&server.get("/api/estates/shop/file").await);
        if f.2 > change + 60 {
            break f;
        }
        assert!(
            start.elapsed() < Duration::from_secs(30),
            "the agent posted no flow after the move"
        );
        tokio::time::sleep(Duration::from_millis(300)).await;
    };
    let (_, log) = stop_agent(child).await;
    eprintln!(
        "the agent after the move, at {}: weight {w_a}, MB/s {mb_a}",
        format_time(at)
    );
    close(w_a, RPS.1 * MEAN_MS.1 / 1000.0, 0.01, "weight after");
    close(
        mb_a,
        RPS.1 * (REQ_BYTES + RESP_BYTES) / 1e6,
        0.01,
        "MB/s after",
    );
    // The agent's flow is the last flow figure; its latest tick may have
    // landed after the one read above.
    let after_file = server.get("/api/estates/shop/file").await;
    let (w_a, mb_a, _) = the_flow(&after_file);

    // Capacity of both clusters since the move (no capacity agent here).
    let o = |fact: &str, v: f64, c: &str| json!({"fact": fact, "value": v, "cluster": c, "observed_at": format_time(berth::clock::now_s())});
    send(
        &server,
        &token,
        reqwest::Method::POST,
        "/api/estates/shop/observations",
        &json!({"batch_id": "capacity-after", "observations": [
            o("cpu_free", 41.0, "c1"), o("memory_free_gib", 202.0, "c1"),
            o("cpu_free", 39.0, "c2"), o("memory_free_gib", 198.0, "c2")
        ]}),
    )
    .await;

    // Judged two hours on: every figure from the formulas.
    let report = server
        .get(&format!(
            "/api/estates/shop/outcomes?now={}",
            format_time(moved_at + 7200)
        ))
        .await;
    let a = &report["applied"][0];
    assert_eq!(a["identity"], "frontend|c1|c2", "{report}");
    assert_eq!(a["basis"], "advised");
    assert_eq!(a["noticed_by"], "estate_upload");
    let o = &a["outcome"];
    assert_eq!(o["status"], "observed", "{o}\n{log}");
    let policy = server.get("/api/estates/shop/policy").await;
    let policy = berth_engine::Policy::from_json(&policy["policy"].to_string()).unwrap();
    let (rtw, xsw) = (policy.round_trip_weight, policy.cross_site_weight);
    let gained_ms = 20.0 - policy.rtt.same_cluster_ms;
    let ob = &o["observed"];
    let f = |k: &str| ob[k].as_f64().unwrap_or_else(|| panic!("{k}: {ob}"));
    close(
        f("round_trip_at_demand_before"),
        rtw * w_b * gained_ms,
        1e-9,
        "round trip, demand before",
    );
    close(
        f("round_trip_at_demand_after"),
        rtw * w_a * gained_ms,
        1e-9,
        "round trip, demand after",
    );
    close(
        f("cross_site_at_demand_before"),
        xsw * mb_b,
        1e-9,
        "cross-site, demand before",
    );
    close(
        f("cross_site_at_demand_after"),
        xsw * mb_a,
        1e-9,
        "cross-site, demand after",
    );
    close(
        f("cross_site_mb_s_before"),
        mb_b,
        1e-9,
        "cross-site MB/s before",
    );
    close(
        f("cross_site_mb_s_after"),
        0.0,
        1e-9,
        "cross-site MB/s after",
    );
    // Both clusters stay far from the headroom threshold; nothing to copy.
    close(f("headroom"), 0.0, 1e-9, "headroom");
    close(f("copy"), 0.0, 1e-9, "copy");
    let gain = rtw * w_b * gained_ms + xsw * mb_b;
    close(
        f("gain_at_demand_before"),
        gain,
        1e-9,
        "gain, demand before",
    );
    close(f("ratio"), gain / predicted, 1e-9, "ratio");
    let flow = &o["flows"][0];
    close(
        flow["weight_after"].as_f64().unwrap(),
        w_a,
        1e-9,
        "the agent's weight",
    );
    close(
        flow["mb_s_after"].as_f64().unwrap(),
        mb_a,
        1e-9,
        "the agent's MB/s",
    );
    eprintln!(
        "outcome: predicted {predicted:.4}, observed {:.4} (ratio {:.4}), at today's demand {:.4}",
        f("gain_at_demand_before"),
        f("ratio"),
        f("gain_at_demand_after")
    );
}
