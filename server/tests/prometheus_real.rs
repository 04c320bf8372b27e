//! The mesh importer against a real Prometheus (Debian's `prometheus`
//! package; `scripts/install-tools.sh` installs it). Realistic Istio series
//! are written in OpenMetrics text, backfilled with `promtool tsdb
//! create-blocks-from openmetrics`, and served by `prometheus` on a free
//! loopback port with no scrape targets. Then:
//!
//! - every default query must be accepted and answer (the old bytes query,
//!   refused by every real Prometheus, is shown refused);
//! - `berth import prometheus --url … --dry-run` must send the weights
//!   (Little's law) and MB/s computed here, independently, from the
//!   written series, within 1 %;
//! - the recorded responses in `tests/fixtures/prometheus/` (used by
//!   `prometheus_import.rs` and `agent.rs` through a fake Prometheus) must
//!   be what this Prometheus answers. To re-record them (after changing a
//!   default query or the graph below):
//!
//!   ```sh
//!   BERTH_RECORD_FIXTURES=1 cargo test --release -p berth --test prometheus_real
//!   ```
//!
//!   which rewrites the three fixtures and `examples/prometheus/istio-results.json`;
//! - a Prometheus without Istio's metrics makes the import fail loudly and
//!   the agent warn (and carry on).
//!
//! Skipped, with a message, only when `promtool` is absent and
//! `BERTH_REQUIRE_PROMETHEUS` is unset.

mod fakes;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};

use berth::import::prometheus::{DEFAULT_BYTES_QUERY, DEFAULT_DURATION_QUERY, DEFAULT_RATE_QUERY};
use fakes::{berth, fake_berth, run, terminate, TOKEN};
use serde_json::Value;

/// The fixtures' evaluation time (2026-11-30T04:05:00Z): recorded
/// responses are dated by it.
const FIXTURE_TIME: i64 = 1796011500;
/// Istio's usual scrape interval.
const STEP: i64 = 15;
/// The window of the default queries.
const WINDOW: i64 = 300;

/// One workload edge of the graph: requests/s, mean duration (ms; `None`:
/// no duration histogram), request and response bytes/s (`None`: no such
/// series at all). Online-Boutique-like, and chosen so that a real
/// Prometheus answers the values the hand-written fixtures once had.
struct EdgeSpec {
    src: (&'static str, &'static str),
    dst: (&'static str, &'static str),
    rps: f64,
    mean_ms: Option<f64>,
    req_bps: Option<f64>,
    resp_bps: Option<f64>,
}

const fn e(
    src: (&'static str, &'static str),
    dst: (&'static str, &'static str),
    rps: f64,
    mean_ms: Option<f64>,
    req_bps: Option<f64>,
    resp_bps: Option<f64>,
) -> EdgeSpec {
    EdgeSpec {
        src,
        dst,
        rps,
        mean_ms,
        req_bps,
        resp_bps,
    }
}

const SHOP: &str = "shop";
const GRAPH: [EdgeSpec; 10] = [
    e(
        ("istio-system", "istio-ingressgateway"),
        (SHOP, "shop-gateway"),
        215.3,
        Some(72.5),
        Some(4104220.0),
        Some(35000000.0),
    ),
    e(
        (SHOP, "shop-gateway"),
        (SHOP, "shop-frontend"),
        212.4,
        Some(66.4),
        Some(4204101.3),
        Some(34000000.0),
    ),
    e(
        (SHOP, "shop-frontend"),
        (SHOP, "shop-bff"),
        150.2,
        Some(60.1),
        Some(2070000.0),
        Some(10000000.0),
    ),
    // A collector: no duration histogram, and it answers with no body (no
    // response-bytes series): the bytes query must still count the edge.
    e(
        (SHOP, "shop-frontend"),
        (SHOP, "clickstream-collector"),
        310.7,
        None,
        Some(4950000.0),
        None,
    ),
    e(
        (SHOP, "shop-bff"),
        ("checkout", "checkout"),
        20.5,
        Some(146.3),
        Some(15233.2),
        Some(800000.0),
    ),
    // Idle: the series exist, nothing moves (duration 0/0 = NaN).
    e(
        (SHOP, "shop-bff"),
        (SHOP, "promotions"),
        0.0,
        Some(0.0),
        Some(0.0),
        Some(0.0),
    ),
    e(
        (SHOP, "shop-bff"),
        (SHOP, "catalog-v1"),
        60.0,
        Some(80.5),
        Some(1000000.0),
        Some(6000000.0),
    ),
    e(
        (SHOP, "shop-bff"),
        (SHOP, "catalog-v2"),
        40.0,
        Some(75.25),
        Some(500000.0),
        Some(6000000.0),
    ),
    // To a payment provider outside the mesh.
    e(
        ("checkout", "checkout"),
        ("unknown", "unknown"),
        8.1,
        Some(212.0),
        Some(20000.0),
        Some(100000.0),
    ),
    e(
        ("search", "search"),
        ("search", "search"),
        1.5,
        Some(3.0),
        Some(1000.0),
        Some(1000.0),
    ),
];

/// How each edge's traffic splits over response codes: (code, share of
/// requests and bytes, duration factor). The factors keep the mean over
/// codes at the edge's `mean_ms` (0.9 × 0.95/0.9 + 0.1 × 0.5 = 1).
const CODES: [(&str, f64, f64); 2] = [("200", 0.9, 0.95 / 0.9), ("503", 0.1, 0.5)];

/// The callee's proxy measures a shorter duration than the caller (no
/// network on its side): if the queries mixed the reporters, the weights
/// would be off by far more than 1 %.
const DESTINATION_DURATION_FACTOR: f64 = 0.8;

/// One written series: its metric name and labels, and the per-second rate
/// its counter grows at (value = offset + rate × (t − origin)).
struct Series {
    name: &'static str,
    labels: Vec<(&'static str, String)>,
    edge: usize,
    reporter: &'static str,
    per_s: f64,
    offset: f64,
}

fn series() -> Vec<Series> {
    let mut out = vec![];
    for (i, g) in GRAPH.iter().enumerate() {
        for reporter in ["source", "destination"] {
            // Outside the mesh there is no proxy to report.
            if reporter == "destination" && g.dst.1 == "unknown" {
                continue;
            }
            for (code, share, dur_factor) in CODES {
                let labels = vec![
                    ("reporter", reporter.to_string()),
                    ("source_workload", g.src.1.to_string()),
                    ("source_workload_namespace", g.src.0.to_string()),
                    ("source_app", g.src.1.to_string()),
                    ("source_version", "v1".to_string()),
                    ("source_cluster", "Kubernetes".to_string()),
                    (
                        "source_principal",
                        format!("spiffe://cluster.local/ns/{}/sa/{}", g.src.0, g.src.1),
                    ),
                    ("destination_workload", g.dst.1.to_string()),
                    ("destination_workload_namespace", g.dst.0.to_string()),
                    ("destination_app", g.dst.1.to_string()),
                    (
                        "destination_service",
                        format!("{}.{}.svc.cluster.local", g.dst.1, g.dst.0),
                    ),
                    ("destination_service_name", g.dst.1.to_string()),
                    ("destination_cluster", "Kubernetes".to_string()),
                    ("request_protocol", "http".to_string()),
                    ("response_code", code.to_string()),
                    ("response_flags", "-".to_string()),
                    (
                        "connection_security_policy",
                        if reporter == "source" {
                            "unknown"
                        } else {
                            "mutual_tls"
                        }
                        .to_string(),
                    ),
                ];
                let mut push = |name: &'static str, per_s: f64| {
                    out.push(Series {
                        name,
                        labels: labels.clone(),
                        edge: i,
                        reporter,
                        per_s,
                        // An hour of earlier traffic, and never zero.
                        offset: 1234.0 + per_s * 3600.0,
                    })
                };
                let rps = g.rps * share;
                push("istio_requests_total", rps);
                if let Some(ms) = g.mean_ms {
                    let ms = ms
                        * dur_factor
                        * if reporter == "source" {
                            1.0
                        } else {
                            DESTINATION_DURATION_FACTOR
                        };
                    push("istio_request_duration_milliseconds_sum", rps * ms);
                    push("istio_request_duration_milliseconds_count", rps);
                }
                if let Some(b) = g.req_bps {
                    push("istio_request_bytes_sum", b * share);
                    push("istio_request_bytes_count", rps);
                }
                if let Some(b) = g.resp_bps {
                    push("istio_response_bytes_sum", b * share);
                    push("istio_response_bytes_count", rps);
                }
            }
        }
    }
    out
}

/// The sample times written: every 15 s over two windows, half an hour up
/// to a little after `FIXTURE_TIME` (for the fixtures), and half an hour
/// up to ten minutes after `now` (the CLI evaluates at its own "now", a
/// moment after this; samples on both sides of it keep `rate()` from
/// extrapolating at the window's end).
fn sample_times(now: i64) -> Vec<i64> {
    let mut out: Vec<i64> = (FIXTURE_TIME - 1800..=FIXTURE_TIME + WINDOW)
        .step_by(STEP as usize)
        .collect();
    out.extend((now - 1800..=now + 600).step_by(STEP as usize));
    out
}

/// Every counter starts its linear growth here.
fn origin() -> i64 {
    FIXTURE_TIME - 1800
}

fn value_at(s: &Series, t: i64) -> f64 {
    s.offset + s.per_s * (t - origin()) as f64
}

fn openmetrics(all: &[Series], times: &[i64]) -> String {
    use std::fmt::Write;
    let mut text = String::new();
    for &t in times {
        for s in all {
            let labels: Vec<String> = s
                .labels
                .iter()
                .map(|(k, v)| format!("{k}=\"{v}\""))
                .collect();
            let _ = writeln!(
                text,
                "{}{{{}}} {} {t}",
                s.name,
                labels.join(","),
                value_at(s, t)
            );
        }
    }
    text.push_str("# EOF\n");
    text
}

/// A running `prometheus`, killed when dropped.
struct Prometheus {
    child: std::process::Child,
    url: String,
    _dir: tempfile::TempDir,
}

impl Drop for Prometheus {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Whether the real Prometheus tools are here; if not, skip (with a
/// message) unless BERTH_REQUIRE_PROMETHEUS is set.
fn have_prometheus() -> bool {
    let found = std::process::Command::new("sh")
        .args(["-c", "command -v promtool && command -v prometheus"])
        .stdout(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    if !found {
        assert!(
            std::env::var_os("BERTH_REQUIRE_PROMETHEUS").is_none(),
            "BERTH_REQUIRE_PROMETHEUS is set but promtool/prometheus are missing: run scripts/install-tools.sh (apt-get install prometheus)"
        );
        eprintln!("SKIPPED: promtool/prometheus not installed (scripts/install-tools.sh installs them; set BERTH_REQUIRE_PROMETHEUS=1 to fail instead)");
    }
    found
}

/// Backfill `openmetrics` (if any) and start Prometheus on a free loopback
/// port; returns once it is ready.
async fn start_prometheus(openmetrics: Option<&str>) -> Prometheus {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    std::fs::create_dir(&data).unwrap();
    if let Some(text) = openmetrics {
        let file = dir.path().join("istio.om");
        std::fs::write(&file, text).unwrap();
        let out = std::process::Command::new("promtool")
            .args(["tsdb", "create-blocks-from", "openmetrics"])
            .arg(&file)
            .arg(&data)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "promtool: {}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let config = dir.path().join("prometheus.yml");
    std::fs::write(
        &config,
        "global:\n  scrape_interval: 15s\nscrape_configs: []\n",
    )
    .unwrap();
    let port = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap().port()
    };
    let log = std::fs::File::create(dir.path().join("prometheus.log")).unwrap();
    let child = std::process::Command::new("prometheus")
        .arg(format!("--storage.tsdb.path={}", data.display()))
        .arg(format!("--web.listen-address=127.0.0.1:{port}"))
        .arg(format!("--config.file={}", config.display()))
        // The fixture window is fixed in time: keep it whatever the clock.
        .arg("--storage.tsdb.retention.time=100y")
        .stdout(Stdio::null())
        .stderr(log)
        .spawn()
        .unwrap();
    let p = Prometheus {
        child,
        url: format!("http://127.0.0.1:{port}"),
        _dir: dir,
    };
    let http = reqwest::Client::new();
    let start = Instant::now();
    loop {
        if let Ok(r) = http.get(format!("{}/-/ready", p.url)).send().await {
            if r.status().is_success() {
                break;
            }
        }
        assert!(
            start.elapsed() < Duration::from_secs(30),
            "prometheus not ready within 30 s: {}",
            std::fs::read_to_string(p._dir.path().join("prometheus.log")).unwrap_or_default()
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    p
}

/// One instant query's raw answer, its results sorted by labels
/// (Prometheus promises no order; sorted, a re-recording diffs cleanly).
async fn raw_query(url: &str, query: &str, time: i64) -> Value {
    let mut v: Value = reqwest::Client::new()
        .get(format!("{url}/api/v1/query"))
        .query(&[("query", query), ("time", &time.to_string())])
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    if let Some(r) = v["data"]["result"].as_array_mut() {
        r.sort_by_key(|s| s["metric"].to_string());
    }
    v
}

fn fixture_path(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("tests/fixtures/prometheus/{name}.json"))
}

/// A query response in the fixtures' layout: one sample per line.
fn layout(v: &Value, indent: &str) -> String {
    let samples: Vec<String> = v["data"]["result"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| format!("{indent}  {s}"))
        .collect();
    format!(
        "{{\"status\": {}, \"data\": {{\"resultType\": {}, \"result\": [\n{}\n{indent}]}}}}",
        v["status"],
        v["data"]["resultType"],
        samples.join(",\n")
    )
}

fn same_number(a: &str, b: &str) -> bool {
    match (a.parse::<f64>(), b.parse::<f64>()) {
        (Ok(x), Ok(y)) => {
            (x.is_nan() && y.is_nan()) || x == y || (x - y).abs() <= 1e-9 * x.abs().max(y.abs())
        }
        _ => a == b,
    }
}

/// The recorded fixture must be this answer: same samples, same labels,
/// same time, values equal up to floating-point dust.
fn assert_matches_fixture(name: &str, got: &Value) {
    let want: Value =
        serde_json::from_str(&std::fs::read_to_string(fixture_path(name)).unwrap()).unwrap();
    let hint = "re-record with BERTH_RECORD_FIXTURES=1 cargo test --release -p berth --test prometheus_real";
    assert_eq!(want["status"], got["status"], "{name}: {hint}");
    let (w, g) = (
        want["data"]["result"].as_array().unwrap(),
        got["data"]["result"].as_array().unwrap(),
    );
    assert_eq!(w.len(), g.len(), "{name}: {got}\n{hint}");
    for (w, g) in w.iter().zip(g) {
        assert_eq!(w["metric"], g["metric"], "{name}: {hint}");
        assert_eq!(w["value"][0], g["value"][0], "{name}: {hint}");
        let (wv, gv) = (
            w["value"][1].as_str().unwrap(),
            g["value"][1].as_str().unwrap(),
        );
        assert!(
            same_number(wv, gv),
            "{name}: {} recorded {wv}, now {gv}; {hint}",
            g["metric"]
        );
    }
}

/// Per-second rate of a written counter over the window ending at
/// `at`, from the samples written in it (first and last).
fn written_rate(s: &Series, times: &[i64], at: i64) -> f64 {
    let inside: Vec<i64> = times
        .iter()
        .copied()
        .filter(|&t| t > at - WINDOW && t <= at)
        .collect();
    let (a, b) = (inside[0], *inside.last().unwrap());
    (value_at(s, b) - value_at(s, a)) / (b - a) as f64
}

/// The observations Berth should send when evaluating at `at`, computed
/// from the written series: (fact, from, to) → value.
fn expected(all: &[Series], times: &[i64], at: i64) -> BTreeMap<(String, String, String), f64> {
    let service = |w: &str| match w {
        "catalog-v1" | "catalog-v2" => "catalog".to_string(),
        w => w.to_string(),
    };
    // Per workload edge, the caller's proxy only: requests/s, duration
    // sum/s, duration count/s, bytes/s (request + response).
    let mut per_edge: BTreeMap<usize, [Option<f64>; 4]> = BTreeMap::new();
    for s in all.iter().filter(|s| s.reporter == "source") {
        let slot = match s.name {
            "istio_requests_total" => 0,
            "istio_request_duration_milliseconds_sum" => 1,
            "istio_request_duration_milliseconds_count" => 2,
            "istio_request_bytes_sum" | "istio_response_bytes_sum" => 3,
            _ => continue,
        };
        let acc = per_edge.entry(s.edge).or_default();
        *acc[slot].get_or_insert(0.0) += written_rate(s, times, at);
    }
    let mut weights: BTreeMap<(String, String), Option<f64>> = BTreeMap::new();
    let mut bytes: BTreeMap<(String, String), f64> = BTreeMap::new();
    for (i, [req, dur_sum, dur_count, b]) in per_edge {
        let g = &GRAPH[i];
        let (from, to) = (service(g.src.1), service(g.dst.1));
        if g.src.1 == "unknown" || g.dst.1 == "unknown" || from == to {
            continue;
        }
        let req = req.unwrap();
        // Little's law: requests/s × mean seconds per request.
        let w = if req == 0.0 {
            Some(0.0)
        } else {
            dur_sum.zip(dur_count).map(|(s, c)| req * (s / c) / 1000.0)
        };
        let entry = weights
            .entry((from.clone(), to.clone()))
            .or_insert(Some(0.0));
        *entry = entry.zip(w).map(|(a, b)| a + b);
        *bytes.entry((from, to)).or_default() += b.unwrap();
    }
    let mut out = BTreeMap::new();
    for ((from, to), w) in weights {
        if let Some(w) = w {
            out.insert(("flow_weight".into(), from.clone(), to.clone()), w);
        }
        out.insert(
            ("flow_mb_s".into(), from.clone(), to.clone()),
            bytes[&(from, to)] / 1e6,
        );
    }
    out
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_default_queries_work_on_a_real_prometheus() {
    if !have_prometheus() {
        return;
    }
    let now = chrono::Utc::now().timestamp();
    let all = series();
    let times = sample_times(now);
    let prom = start_prometheus(Some(&openmetrics(&all, &times))).await;

    // Every default query is accepted and answers for the graph; the old
    // bytes query (one selector over both names) is refused.
    let client = berth::prom_client::PromClient::new(&prom.url).unwrap();
    for (name, q) in [
        ("rate", DEFAULT_RATE_QUERY),
        ("duration", DEFAULT_DURATION_QUERY),
        ("bytes", DEFAULT_BYTES_QUERY),
    ] {
        let r = client
            .query(name, q, now)
            .await
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        let edges = if name == "duration" { 9 } else { 10 };
        assert_eq!(r.samples.len(), edges, "{name}: {:?}", r.samples);
    }
    let old = "sum by (source_workload, source_workload_namespace, destination_workload, destination_workload_namespace) (rate({__name__=~\"istio_request_bytes_sum|istio_response_bytes_sum\", reporter=\"source\"}[5m]))";
    let refused = client
        .query("bytes", old, now)
        .await
        .unwrap_err()
        .to_string();
    assert!(refused.contains("same labelset"), "{refused}");

    // The real CLI, against it.
    let mut c = berth();
    c.args([
        "import",
        "prometheus",
        "--estate",
        "sample",
        "--url",
        &prom.url,
        "--dry-run",
    ])
    .args(["--map", "catalog-v1=catalog", "--map", "catalog-v2=catalog"]);
    let (code, out, err) = run(c).await;
    assert_eq!(code, 0, "{out}\n{err}");
    let at_text = out
        .split("evaluated at ")
        .nth(1)
        .and_then(|r| r.get(..20).map(String::from))
        .unwrap_or_else(|| panic!("no evaluation time in:\n{out}"));
    let at = berth_engine::estate::parse_time(&at_text).unwrap();
    assert!(
        at >= now && at < now + 300,
        "evaluated at {at_text}, data ends at now + 600 s"
    );
    let batch: Value =
        serde_json::from_str(&out[out.find("the batch would be:\n").unwrap() + 20..]).unwrap();
    let mut got = BTreeMap::new();
    for o in batch["observations"].as_array().unwrap() {
        assert_eq!(o["class"], "measured");
        assert_eq!(o["observed_at"], at_text.as_str());
        let key = (
            o["fact"].as_str().unwrap().to_string(),
            o["from"].as_str().unwrap().to_string(),
            o["to"].as_str().unwrap().to_string(),
        );
        got.insert(key, o["value"].as_f64().unwrap());
    }
    let want = expected(&all, &times, at);
    eprintln!(
        "{:<12} {:<38} {:>14} {:>14}",
        "fact", "flow", "expected", "got"
    );
    for ((fact, from, to), w) in &want {
        let g = got.get(&(fact.clone(), from.clone(), to.clone()));
        eprintln!(
            "{fact:<12} {:<38} {w:>14.6} {:>14}",
            format!("{from} → {to}"),
            g.map_or("–".into(), |g| g.to_string())
        );
    }
    assert_eq!(
        want.keys().collect::<Vec<_>>(),
        got.keys().collect::<Vec<_>>(),
        "the flows sent:\n{out}"
    );
    for (k, w) in &want {
        let g = got[k];
        assert!(
            (g - w).abs() <= 0.01 * w.abs(),
            "{k:?}: expected {w}, got {g}\n{out}"
        );
    }
    // The one-sided edge (request bytes only) is counted, not dropped.
    assert!(got.contains_key(&(
        "flow_mb_s".into(),
        "shop-frontend".into(),
        "clickstream-collector".into()
    )));

    // The recorded fixtures are what this Prometheus answers at their time.
    let mut answers = vec![];
    for (name, q) in [
        ("rate", DEFAULT_RATE_QUERY),
        ("duration", DEFAULT_DURATION_QUERY),
        ("bytes", DEFAULT_BYTES_QUERY),
    ] {
        answers.push((name, raw_query(&prom.url, q, FIXTURE_TIME).await));
    }
    if std::env::var_os("BERTH_RECORD_FIXTURES").is_some() {
        let mut example = vec![];
        for (name, v) in &answers {
            std::fs::write(fixture_path(name), layout(v, "") + "\n").unwrap();
            example.push(format!(" \"{name}\":\n {}", layout(v, " ")));
        }
        let path =
            Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples/prometheus/istio-results.json");
        std::fs::write(path, format!("{{\n{}\n}}\n", example.join(",\n"))).unwrap();
        eprintln!(
            "recorded tests/fixtures/prometheus/*.json and examples/prometheus/istio-results.json"
        );
    }
    for (name, v) in &answers {
        assert_matches_fixture(name, v);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_istio_metrics_the_import_fails_loudly_and_the_agent_warns() {
    if !have_prometheus() {
        return;
    }
    let prom = start_prometheus(None).await;
    let mut c = berth();
    c.args([
        "import",
        "prometheus",
        "--estate",
        "sample",
        "--url",
        &prom.url,
        "--dry-run",
    ]);
    let (code, out, err) = run(c).await;
    assert_eq!(code, 1, "{out}\n{err}");
    for part in [
        "no mesh metrics",
        "istio_requests_total{reporter=\"source\"}",
        "gave no samples",
        "Check that this is the Prometheus that scrapes the mesh",
    ] {
        assert!(err.contains(part), "missing {part:?} in:\n{err}");
    }

    // The agent says so every tick, and keeps running.
    let (server, _log) = fake_berth(false, vec![]).await;
    let mut c = berth();
    c.args([
        "agent",
        "--server",
        &server,
        "--estate",
        "sample",
        "--interval",
        "1s",
        "--prometheus",
        &prom.url,
    ])
    .env("BERTH_TOKEN", TOKEN)
    .stderr(Stdio::piped());
    let mut child = c.spawn().unwrap();
    tokio::time::sleep(Duration::from_secs(3)).await;
    assert!(child.try_wait().unwrap().is_none(), "the agent exited");
    terminate(&child);
    let out = tokio::time::timeout(Duration::from_secs(10), child.wait_with_output())
        .await
        .expect("the agent stops within 10 s of SIGTERM")
        .unwrap();
    let log = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{log}");
    assert!(
        log.lines().any(|l| l.contains("WARN")
            && l.contains("no mesh metrics")
            && l.contains("istio_requests_total")),
        "{log}"
    );
}
