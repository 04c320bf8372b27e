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
//!   which rewrites the four fixtures and `examples/prometheus/istio-results.json`;
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

use berth::import::mesh::Queries;
use berth::import::prometheus::Reading;
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

/// Istio's default queries by the names the fixtures and results files
/// use.
fn default_queries() -> [(&'static str, String); 4] {
    let q = Queries::default();
    [
        ("rate", q.rate),
        ("duration", q.duration),
        ("bytes", q.bytes.unwrap()),
        ("coverage", q.coverage.unwrap()),
    ]
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
    let reading = Reading::default();
    for (name, q) in default_queries() {
        let r = client
            .query(name, &q, now, &reading)
            .await
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        let edges = if name == "duration" { 9 } else { 10 };
        assert_eq!(r.samples.len(), edges, "{name}: {:?}", r.samples);
    }
    let old = "sum by (source_workload, source_workload_namespace, destination_workload, destination_workload_namespace) (rate({__name__=~\"istio_request_bytes_sum|istio_response_bytes_sum\", reporter=\"source\"}[5m]))";
    let refused = client
        .query("bytes", old, now, &reading)
        .await
        .unwrap_err()
        .to_string();
    assert!(refused.contains("same labelset"), "{refused}");

    // The real CLI, against it.
    let (observations, at, out) = dry_run(
        &prom,
        &["--map", "catalog-v1=catalog", "--map", "catalog-v2=catalog"],
    )
    .await;
    let at_text = berth_engine::estate::format_time(at);
    assert!(
        at >= now && at < now + 300,
        "evaluated at {at_text}, data ends at now + 600 s"
    );
    let mut got = BTreeMap::new();
    for o in observations.iter().filter(|o| is_flow(o)) {
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
    // Its series name one cluster, `Kubernetes` (a single-cluster Istio):
    // read with the cluster labels (the default) it imports exactly as
    // read without them — the same flows, figures and notes.
    let map = ["--map", "catalog-v1=catalog", "--map", "catalog-v2=catalog"];
    let (without, _, out_without) =
        dry_run(&prom, &[&map[..], &["--cluster-labels", "none"]].concat()).await;
    let notes = |out: &str| {
        out.split("skipped or incomplete")
            .nth(1)
            .map(|n| n.split("dry run").next().unwrap().to_string())
    };
    assert_eq!(notes(&out), notes(&out_without), "{out}\n{out_without}");
    assert!(
        notes(&out).is_some_and(|n| !n.contains("Kubernetes")),
        "{out}"
    );
    // (Evaluated a moment apart: equal to rounding, as the counters grow
    // linearly.)
    let (with, without) = (by_key(&observations), by_key(&without));
    assert_eq!(
        with.keys().collect::<Vec<_>>(),
        without.keys().collect::<Vec<_>>()
    );
    for (k, v) in &with {
        assert!(
            (v - without[k]).abs() <= 1e-5 * v.abs(),
            "{k:?}: {v} and {}",
            without[k]
        );
    }
    assert!(observations.iter().all(|o| o.get("from_cluster").is_none()));

    // The one-sided edge (request bytes only) is counted, not dropped.
    assert!(got.contains_key(&(
        "flow_mb_s".into(),
        "shop-frontend".into(),
        "clickstream-collector".into()
    )));

    // The recorded fixtures are what this Prometheus answers at their time.
    let mut answers = vec![];
    for (name, q) in default_queries() {
        answers.push((name, raw_query(&prom.url, &q, FIXTURE_TIME).await));
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

// ---- every mesh preset ------------------------------------------------------

/// A call edge of a small graph for the other presets: (namespace, name)
/// of each end ("" for a peer the mesh did not identify), requests/s
/// (`None`: a TCP connection, bytes only), mean duration (ms) as the
/// caller sees it, and bytes/s both ways (`None`: the mesh has no bytes).
struct Call {
    src: (&'static str, &'static str),
    dst: (&'static str, &'static str),
    rps: Option<f64>,
    mean_ms: f64,
    bytes: Option<f64>,
}

const fn call(
    src: (&'static str, &'static str),
    dst: (&'static str, &'static str),
    rps: Option<f64>,
    mean_ms: f64,
    bytes: Option<f64>,
) -> Call {
    Call {
        src,
        dst,
        rps,
        mean_ms,
        bytes,
    }
}

/// What a written series stands for in the independent computation:
/// only the caller's side counts; the other side is written to show it is
/// not counted twice.
#[derive(Clone, Copy, PartialEq)]
enum Part {
    Requests,
    DurationSum,
    DurationCount,
    Bytes,
    OtherSide,
}

struct Written {
    name: &'static str,
    labels: Vec<(&'static str, String)>,
    call: usize,
    part: Part,
    per_s: f64,
}

impl Written {
    /// As a counter series: growing at `per_s` from an hour of earlier
    /// traffic, like the Istio graph's.
    fn series(&self) -> Series {
        Series {
            name: self.name,
            labels: self.labels.clone(),
            edge: self.call,
            reporter: "",
            per_s: self.per_s,
            offset: 1234.0 + self.per_s * 3600.0,
        }
    }
}

fn written_text(all: &[Written], times: &[i64]) -> String {
    openmetrics(&all.iter().map(Written::series).collect::<Vec<_>>(), times)
}

fn written_rate_of(w: &Written, times: &[i64], at: i64) -> f64 {
    written_rate(&w.series(), times, at)
}

/// The flows expected from the written series, computed here: per call,
/// Little's law over the caller's series (`to_s` converts the duration
/// sum's unit to seconds) and the bytes; calls with an unidentified end
/// or `outside` name are left out.
fn expected_calls(
    calls: &[Call],
    all: &[Written],
    times: &[i64],
    at: i64,
    to_s: f64,
    outside: &str,
) -> BTreeMap<(String, String, String), f64> {
    let mut per: BTreeMap<usize, [f64; 4]> = BTreeMap::new();
    for w in all {
        let slot = match w.part {
            Part::Requests => 0,
            Part::DurationSum => 1,
            Part::DurationCount => 2,
            Part::Bytes => 3,
            Part::OtherSide => continue,
        };
        per.entry(w.call).or_default()[slot] += written_rate_of(w, times, at);
    }
    let mut out = BTreeMap::new();
    for (i, [req, sum, count, bytes]) in per {
        let c = &calls[i];
        let unnamed = |n: &str| n.is_empty() || n == outside;
        if unnamed(c.src.1) || unnamed(c.dst.1) {
            continue;
        }
        let key = |fact: &str| (fact.to_string(), c.src.1.to_string(), c.dst.1.to_string());
        if c.rps.is_some() {
            out.insert(key("flow_weight"), req * (sum / count) * to_s);
        }
        if c.bytes.is_some() {
            out.insert(key("flow_mb_s"), bytes / 1e6);
        }
    }
    out
}

/// Run `berth import prometheus --dry-run` with `args`; the observations
/// of the batch it would send, the evaluation time, and its output.
async fn dry_run(prom: &Prometheus, args: &[&str]) -> (Vec<Value>, i64, String) {
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
    .args(args);
    let (code, out, err) = run(c).await;
    assert_eq!(code, 0, "{out}\n{err}");
    let at_text = out
        .split("evaluated at ")
        .nth(1)
        .and_then(|r| r.get(..20).map(String::from))
        .unwrap_or_else(|| panic!("no evaluation time in:\n{out}"));
    let at = berth_engine::estate::parse_time(&at_text).unwrap();
    let batch: Value =
        serde_json::from_str(&out[out.find("the batch would be:\n").unwrap() + 20..]).unwrap();
    (batch["observations"].as_array().unwrap().clone(), at, out)
}

/// Run `berth agent` with `args` against a fake Berth until it posts an
/// observation `keep` accepts; every such observation posted by then,
/// and the agent's log (which must not hold the token).
async fn agent_posts(args: &[&str], keep: impl Fn(&Value) -> bool) -> (Vec<Value>, String) {
    let (server, log) = fake_berth(false, vec![]).await;
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
    .args(args)
    .env("BERTH_TOKEN", TOKEN)
    .stderr(Stdio::piped());
    let child = c.spawn().unwrap();
    let start = Instant::now();
    let kept = loop {
        let posted: Vec<Value> = log
            .posts
            .lock()
            .unwrap()
            .iter()
            .flat_map(|(b, _, _)| b["observations"].as_array().cloned().unwrap_or_default())
            .filter(|o| keep(o))
            .collect();
        if !posted.is_empty() {
            break posted;
        }
        assert!(
            start.elapsed() < Duration::from_secs(20),
            "{args:?}: the agent posted nothing of the kind"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    terminate(&child);
    let out = child.wait_with_output().await.unwrap();
    let agent_log = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(!agent_log.contains(TOKEN));
    (kept, agent_log)
}

/// `berth agent --mesh … --prometheus …`: the flows of its first tick
/// that posted any, and their evaluation time.
async fn agent_flows(prom: &Prometheus, mesh: &str) -> (Vec<Value>, i64) {
    let (flows, _) = agent_posts(&["--prometheus", &prom.url, "--mesh", mesh], |o| {
        o["fact"].as_str().is_some_and(|f| f.starts_with("flow_"))
    })
    .await;
    // One tick's batch: every observation dated by the same evaluation.
    let at = berth_engine::estate::parse_time(flows[0]["observed_at"].as_str().unwrap()).unwrap();
    let first: Vec<Value> = flows
        .into_iter()
        .filter(|o| o["observed_at"] == berth_engine::estate::format_time(at).as_str())
        .collect();
    (first, at)
}

/// Whether an observation is of a flow (the mesh import also says whose
/// traffic it covered: `traffic` observations, which name one service).
fn is_flow(o: &Value) -> bool {
    o["fact"] != "traffic"
}

fn by_key(observations: &[Value]) -> BTreeMap<(String, String, String), f64> {
    observations
        .iter()
        .filter(|o| is_flow(o))
        .map(|o| {
            (
                (
                    o["fact"].as_str().unwrap().to_string(),
                    o["from"].as_str().unwrap().to_string(),
                    o["to"].as_str().unwrap().to_string(),
                ),
                o["value"].as_f64().unwrap(),
            )
        })
        .collect()
}

fn assert_within_1_percent(
    mesh: &str,
    want: &BTreeMap<(String, String, String), f64>,
    got: &BTreeMap<(String, String, String), f64>,
    out: &str,
) {
    eprintln!(
        "{mesh}: {:<12} {:<26} {:>12} {:>12}",
        "fact", "flow", "expected", "got"
    );
    for ((fact, from, to), w) in want {
        let g = got.get(&(fact.clone(), from.clone(), to.clone()));
        eprintln!(
            "{mesh}: {fact:<12} {:<26} {w:>12.6} {:>12}",
            format!("{from} → {to}"),
            g.map_or("–".into(), |g| g.to_string())
        );
    }
    assert_eq!(
        want.keys().collect::<Vec<_>>(),
        got.keys().collect::<Vec<_>>(),
        "{mesh}: the flows sent:\n{out}"
    );
    for (k, w) in want {
        let g = got[k];
        assert!(
            (g - w).abs() <= 0.01 * w.abs(),
            "{mesh}: {k:?}: expected {w}, got {g}\n{out}"
        );
    }
}

/// Serve `all` from a real Prometheus and check what `--mesh mesh` makes
/// of it, the import (dry run) and the agent (its first tick) alike,
/// against the flows computed here; the import's output, for the
/// preset's own checks.
async fn check_preset(
    mesh: &str,
    calls: &[Call],
    all: &[Written],
    to_s: f64,
    outside: &str,
) -> (Vec<Value>, String) {
    let now = chrono::Utc::now().timestamp();
    let times = sample_times(now);
    let prom = start_prometheus(Some(&written_text(all, &times))).await;
    let (obs, at, out) = dry_run(&prom, &["--mesh", mesh]).await;
    let want = expected_calls(calls, all, &times, at, to_s, outside);
    assert_within_1_percent(mesh, &want, &by_key(&obs), &out);
    // The agent reads the same through the same preset, at its own tick.
    let (posted, tick) = agent_flows(&prom, mesh).await;
    let want = expected_calls(calls, all, &times, tick, to_s, outside);
    assert_within_1_percent(&format!("{mesh} (agent)"), &want, &by_key(&posted), "");
    (obs, out)
}

/// A Linkerd mesh: the caller's proxy reports outbound (`dst_…` labels),
/// the callee's inbound with a shorter latency; a call to a host outside
/// the mesh has no `dst_deployment`; a Postgres connection is TCP only.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn linkerd_metrics_give_the_same_figures_as_computed_here() {
    if !have_prometheus() {
        return;
    }
    const CALLS: [Call; 4] = [
        call(
            ("shop", "web"),
            ("shop", "api"),
            Some(120.0),
            40.0,
            Some(3_000_000.0),
        ),
        call(
            ("shop", "api"),
            ("shop", "search"),
            Some(35.5),
            95.0,
            Some(400_000.0),
        ),
        call(("shop", "api"), ("", ""), Some(4.0), 300.0, Some(10_000.0)),
        call(
            ("shop", "api"),
            ("data", "postgres"),
            None,
            0.0,
            Some(1_500_000.0),
        ),
    ];
    let mut all = vec![];
    for (i, c) in CALLS.iter().enumerate() {
        let mut out_labels = vec![
            ("direction", "outbound".to_string()),
            ("deployment", c.src.1.to_string()),
            ("namespace", c.src.0.to_string()),
            ("pod", format!("{}-7d9f8-abcde", c.src.1)),
            ("tls", "true".to_string()),
        ];
        if !c.dst.1.is_empty() {
            out_labels.push(("dst_deployment", c.dst.1.to_string()));
            out_labels.push(("dst_namespace", c.dst.0.to_string()));
        }
        let inbound = vec![
            ("direction", "inbound".to_string()),
            ("deployment", c.dst.1.to_string()),
            ("namespace", c.dst.0.to_string()),
            ("tls", "true".to_string()),
        ];
        let mut push = |name, labels: &Vec<(&'static str, String)>, part, per_s| {
            all.push(Written {
                name,
                labels: labels.clone(),
                call: i,
                part,
                per_s,
            })
        };
        if let Some(rps) = c.rps {
            push("request_total", &out_labels, Part::Requests, rps);
            let mut ok = out_labels.clone();
            ok.push(("classification", "success".into()));
            push("response_total", &ok, Part::OtherSide, rps);
            push(
                "response_latency_ms_sum",
                &out_labels,
                Part::DurationSum,
                rps * c.mean_ms,
            );
            push(
                "response_latency_ms_count",
                &out_labels,
                Part::DurationCount,
                rps,
            );
            if !c.dst.1.is_empty() {
                push("request_total", &inbound, Part::OtherSide, rps);
                push(
                    "response_latency_ms_sum",
                    &inbound,
                    Part::OtherSide,
                    rps * c.mean_ms * 0.8,
                );
                push("response_latency_ms_count", &inbound, Part::OtherSide, rps);
            }
        }
        if let Some(b) = c.bytes {
            let mut dst = out_labels.clone();
            dst.push(("peer", "dst".into()));
            push("tcp_write_bytes_total", &dst, Part::Bytes, b * 0.25);
            push("tcp_read_bytes_total", &dst, Part::Bytes, b * 0.75);
            let mut src = inbound.clone();
            src.push(("peer", "src".into()));
            push("tcp_read_bytes_total", &src, Part::OtherSide, b * 0.25);
        }
    }
    let (obs, out) = check_preset("linkerd", &CALLS, &all, 1.0 / 1000.0, "").await;
    assert!(out.contains("outside_mesh"), "{out}");
    assert!(
        out.contains("no_requests: shop/api → data/postgres"),
        "{out}"
    );
    assert!(obs.iter().all(|o| o["class"] == "measured"), "{obs:?}");
}

/// The OpenTelemetry service graph (Tempo or the collector's connector):
/// `client`/`server` labels, durations in seconds, no bytes; the root
/// requests come from the virtual "user" client.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn otel_service_graph_metrics_give_the_same_figures_as_computed_here() {
    if !have_prometheus() {
        return;
    }
    const CALLS: [Call; 3] = [
        call(("", "user"), ("", "frontend"), Some(50.0), 120.0, None),
        call(
            ("", "frontend"),
            ("", "cartservice"),
            Some(44.0),
            22.5,
            None,
        ),
        call(
            ("", "frontend"),
            ("", "currencyservice"),
            Some(130.0),
            4.2,
            None,
        ),
    ];
    let mut all = vec![];
    for (i, c) in CALLS.iter().enumerate() {
        let labels = vec![
            ("client", c.src.1.to_string()),
            ("server", c.dst.1.to_string()),
            ("connection_type", String::new()),
        ];
        let rps = c.rps.unwrap();
        let mut push = |name, part, per_s| {
            all.push(Written {
                name,
                labels: labels.clone(),
                call: i,
                part,
                per_s,
            })
        };
        push("traces_service_graph_request_total", Part::Requests, rps);
        push(
            "traces_service_graph_request_failed_total",
            Part::OtherSide,
            rps * 0.01,
        );
        push(
            "traces_service_graph_request_server_seconds_sum",
            Part::DurationSum,
            rps * c.mean_ms / 1000.0,
        );
        push(
            "traces_service_graph_request_server_seconds_count",
            Part::DurationCount,
            rps,
        );
        // The client span's, longer by the network: not the one read.
        push(
            "traces_service_graph_request_client_seconds_sum",
            Part::OtherSide,
            rps * c.mean_ms * 1.3 / 1000.0,
        );
        push(
            "traces_service_graph_request_client_seconds_count",
            Part::OtherSide,
            rps,
        );
    }
    let (_, out) = check_preset("otel-servicegraph", &CALLS, &all, 1.0, "user").await;
    assert!(out.contains("the mesh's \"user\" workload"), "{out}");
}

/// Cilium Hubble's httpV2 metric with workload context: both endpoints
/// report (`reporter` client and server); a request to a host outside
/// the cluster (`world`) has no destination workload.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hubble_metrics_give_the_same_figures_as_computed_here() {
    if !have_prometheus() {
        return;
    }
    const CALLS: [Call; 3] = [
        call(("shop", "frontend"), ("", ""), Some(80.0), 150.0, None),
        call(
            ("shop", "frontend"),
            ("shop", "productcatalog"),
            Some(210.0),
            12.0,
            None,
        ),
        call(
            ("shop", "checkout"),
            ("shop", "payment"),
            Some(3.5),
            480.0,
            None,
        ),
    ];
    let mut all = vec![];
    for (i, c) in CALLS.iter().enumerate() {
        for reporter in ["client", "server"] {
            // Only a managed endpoint reports: nothing reports for world.
            if reporter == "server" && c.dst.1.is_empty() {
                continue;
            }
            let mut labels = vec![
                ("method", "GET".to_string()),
                ("protocol", "HTTP/1.1".to_string()),
                ("reporter", reporter.to_string()),
                ("source_namespace", c.src.0.to_string()),
                ("source_workload", c.src.1.to_string()),
            ];
            if !c.dst.1.is_empty() {
                labels.push(("destination_namespace", c.dst.0.to_string()));
                labels.push(("destination_workload", c.dst.1.to_string()));
            }
            let rps = c.rps.unwrap();
            let (part, factor) = if reporter == "client" {
                (
                    (Part::Requests, Part::DurationSum, Part::DurationCount),
                    1.0,
                )
            } else {
                ((Part::OtherSide, Part::OtherSide, Part::OtherSide), 0.8)
            };
            let mut status = labels.clone();
            status.push(("status", "200".into()));
            all.push(Written {
                name: "hubble_http_requests_total",
                labels: status,
                call: i,
                part: part.0,
                per_s: rps,
            });
            all.push(Written {
                name: "hubble_http_request_duration_seconds_sum",
                labels: labels.clone(),
                call: i,
                part: part.1,
                per_s: rps * c.mean_ms * factor / 1000.0,
            });
            all.push(Written {
                name: "hubble_http_request_duration_seconds_count",
                labels,
                call: i,
                part: part.2,
                per_s: rps,
            });
        }
    }
    let (_, out) = check_preset("hubble", &CALLS, &all, 1.0, "").await;
    assert!(out.contains("a peer the mesh did not identify"), "{out}");
}

/// Istio over two clusters: a workload replicated in both gets a flow per
/// replica (`--cluster-labels default`), a cache connection seen only as
/// TCP bytes is measured, a replica whose scrapes stopped for 90 s inside
/// the window goes as *reported*, and a custom query that sums both
/// reporters is warned about.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn istio_clusters_tcp_and_scrape_gaps_on_a_real_prometheus() {
    if !have_prometheus() {
        return;
    }
    // (cluster, src, dst, rps (None: TCP), mean ms, bytes/s)
    type Spec = (
        &'static str,
        &'static str,
        &'static str,
        Option<f64>,
        f64,
        f64,
    );
    const SPECS: [Spec; 3] = [
        (
            "c-a",
            "frontend",
            "cartservice",
            Some(40.0),
            25.0,
            900_000.0,
        ),
        (
            "c-b",
            "frontend",
            "cartservice",
            Some(160.0),
            30.0,
            3_600_000.0,
        ),
        ("c-a", "cartservice", "redis-cart", None, 0.0, 2_000_000.0),
    ];
    let gapped = 1;
    let mut all = vec![];
    for (i, (cluster, src, dst, rps, ms, bytes)) in SPECS.iter().enumerate() {
        for reporter in ["source", "destination"] {
            let labels = vec![
                ("reporter", reporter.to_string()),
                ("source_workload", src.to_string()),
                ("source_workload_namespace", "shop".to_string()),
                ("source_cluster", cluster.to_string()),
                ("destination_workload", dst.to_string()),
                ("destination_workload_namespace", "shop".to_string()),
                ("destination_cluster", cluster.to_string()),
            ];
            let counted = |p| {
                if reporter == "source" {
                    p
                } else {
                    Part::OtherSide
                }
            };
            let mut push = |name, part, per_s| {
                all.push(Written {
                    name,
                    labels: labels.clone(),
                    call: i,
                    part,
                    per_s,
                })
            };
            match rps {
                Some(rps) => {
                    push("istio_requests_total", counted(Part::Requests), *rps);
                    push(
                        "istio_request_duration_milliseconds_sum",
                        counted(Part::DurationSum),
                        rps * ms * if reporter == "source" { 1.0 } else { 0.8 },
                    );
                    push(
                        "istio_request_duration_milliseconds_count",
                        counted(Part::DurationCount),
                        *rps,
                    );
                    push("istio_request_bytes_sum", counted(Part::Bytes), bytes * 0.2);
                    push(
                        "istio_response_bytes_sum",
                        counted(Part::Bytes),
                        bytes * 0.8,
                    );
                }
                None => {
                    push(
                        "istio_tcp_sent_bytes_total",
                        counted(Part::Bytes),
                        bytes * 0.3,
                    );
                    push(
                        "istio_tcp_received_bytes_total",
                        counted(Part::Bytes),
                        bytes * 0.7,
                    );
                }
            }
        }
    }
    let now = chrono::Utc::now().timestamp();
    let times = sample_times(now);
    // The gapped replica's series lose 90 s of samples well inside the
    // window the CLI evaluates (it runs a moment after `now`).
    let mut text = String::new();
    for &t in &times {
        let keep: Vec<Written> = all
            .iter()
            .filter(|w| w.call != gapped || !(now - 200..now - 110).contains(&t))
            .map(|w| Written {
                name: w.name,
                labels: w.labels.clone(),
                call: w.call,
                part: w.part,
                per_s: w.per_s,
            })
            .collect();
        let one = written_text(&keep, &[t]);
        text.push_str(one.trim_end_matches("# EOF\n"));
    }
    text.push_str("# EOF\n");
    let prom = start_prometheus(Some(&text)).await;
    let (obs, at, out) = dry_run(&prom, &["--cluster-labels", "default"]).await;

    // Independently: per replica, Little's law over the source reporter.
    let mut want: BTreeMap<(String, String, String, String), f64> = BTreeMap::new();
    for (i, (cluster, src, dst, rps, _, _)) in SPECS.iter().enumerate() {
        let rate = |part: Part| -> f64 {
            all.iter()
                .filter(|w| w.call == i && w.part == part)
                .map(|w| written_rate_of(w, &times, at))
                .sum()
        };
        let key = |fact: &str| {
            (
                fact.to_string(),
                cluster.to_string(),
                src.to_string(),
                dst.to_string(),
            )
        };
        if rps.is_some() {
            let w =
                rate(Part::Requests) * rate(Part::DurationSum) / rate(Part::DurationCount) / 1000.0;
            want.insert(key("flow_weight"), w);
        }
        want.insert(key("flow_mb_s"), rate(Part::Bytes) / 1e6);
    }
    let mut got = BTreeMap::new();
    for o in obs.iter().filter(|o| is_flow(o)) {
        assert_eq!(o["from_cluster"], o["to_cluster"], "{o}");
        let key = (
            o["fact"].as_str().unwrap().to_string(),
            o["from_cluster"].as_str().unwrap().to_string(),
            o["from"].as_str().unwrap().to_string(),
            o["to"].as_str().unwrap().to_string(),
        );
        let class = if key.1 == "c-b" {
            "reported"
        } else {
            "measured"
        };
        assert_eq!(o["class"], class, "{o}\n{out}");
        got.insert(key, o["value"].as_f64().unwrap());
    }
    eprintln!("istio clusters: want {want:?}\n got {got:?}");
    assert_eq!(
        want.keys().collect::<Vec<_>>(),
        got.keys().collect::<Vec<_>>(),
        "{out}"
    );
    for (k, w) in &want {
        assert!(
            (got[k] - w).abs() <= 0.01 * w,
            "{k:?}: expected {w}, got {}\n{out}",
            got[k]
        );
    }
    assert!(
        out.contains("scrape_gap: c-b:shop/frontend → c-b:shop/cartservice"),
        "{out}"
    );
    assert!(
        out.contains("no_requests: c-a:shop/cartservice → c-a:shop/redis-cart"),
        "{out}"
    );

    // Summing both reporters doubles every request: said, not hidden.
    let (obs, _, out) = dry_run(
        &prom,
        &[
            "--query-rate",
            "sum by (source_workload, source_workload_namespace, destination_workload, destination_workload_namespace) (rate(istio_requests_total[5m]))",
            "--cluster-labels",
            "none",
        ],
    )
    .await;
    assert!(!obs.is_empty());
    assert!(
        out.contains("both_sides: the custom rate query does not select reporter=\"source\""),
        "{out}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_preset_fails_loudly_on_a_prometheus_without_its_metrics() {
    if !have_prometheus() {
        return;
    }
    let prom = start_prometheus(None).await;
    for (mesh, metric) in [
        ("linkerd", "request_total{direction=\"outbound\"}"),
        ("otel-servicegraph", "traces_service_graph_request_total"),
        ("hubble", "hubble_http_requests_total{reporter=\"client\"}"),
    ] {
        let mut c = berth();
        c.args([
            "import",
            "prometheus",
            "--estate",
            "sample",
            "--url",
            &prom.url,
            "--dry-run",
            "--mesh",
            mesh,
        ]);
        let (code, out, err) = run(c).await;
        assert_eq!(code, 1, "{mesh}: {out}\n{err}");
        assert!(
            err.contains(&format!("no mesh metrics ({mesh})")) && err.contains(metric),
            "{mesh}: {err}"
        );
    }
    let mut c = berth();
    c.args([
        "import",
        "prometheus",
        "--estate",
        "sample",
        "--url",
        &prom.url,
        "--dry-run",
        "--mesh",
        "consul",
    ]);
    let (code, _, err) = run(c).await;
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("expected one of istio, linkerd, otel-servicegraph, hubble"),
        "{err}"
    );
}

// ---- round trips a tool already measures -----------------------------------

/// Gauge series in OpenMetrics text: (name, labels, value around which
/// the samples alternate ±10 %, so `avg_over_time` has work to do).
/// A gauge series: its name, labels and base value.
type Gauge<'a> = (&'a str, Vec<(&'a str, &'a str)>, f64);

fn gauges(series: &[Gauge], times: &[i64]) -> String {
    use std::fmt::Write;
    let mut text = String::new();
    for (k, &t) in times.iter().enumerate() {
        for (name, labels, base) in series {
            let labels: Vec<String> = labels.iter().map(|(a, b)| format!("{a}=\"{b}\"")).collect();
            let wobble = if k % 2 == 0 { 0.9 } else { 1.1 };
            let _ = writeln!(text, "{name}{{{}}} {} {t}", labels.join(","), base * wobble);
        }
    }
    text.push_str("# EOF\n");
    text
}

/// `berth agent --rtt-from` for each source against a real Prometheus:
/// the round trips it posts, per pair of clusters, are the ones written
/// (averaged over the window and over both directions), and what is not a
/// round trip between two clusters (a check inside one cluster, a failed
/// probe's −1, another protocol) is left out.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn round_trips_from_blackbox_submariner_cilium_and_liqo() {
    if !have_prometheus() {
        return;
    }
    let now = chrono::Utc::now().timestamp();
    let times: Vec<i64> = (now - 1800..=now + 600).step_by(STEP as usize).collect();
    let series = vec![
        (
            "probe_icmp_duration_seconds",
            vec![
                ("phase", "rtt"),
                ("instance", "10.0.2.1"),
                ("job", "blackbox"),
            ],
            0.0094,
        ),
        (
            "probe_icmp_duration_seconds",
            vec![
                ("phase", "setup"),
                ("instance", "10.0.2.1"),
                ("job", "blackbox"),
            ],
            0.0002,
        ),
        (
            "submariner_connection_latency_seconds",
            vec![
                ("cable_driver", "libreswan"),
                ("local_cluster", "c-fra-1"),
                ("remote_cluster", "c-par-1"),
            ],
            0.009,
        ),
        (
            "submariner_connection_latency_seconds",
            vec![
                ("cable_driver", "libreswan"),
                ("local_cluster", "c-par-1"),
                ("remote_cluster", "c-fra-1"),
            ],
            0.010,
        ),
        (
            "cilium_node_connectivity_latency_seconds",
            vec![
                ("source_cluster", "c-fra-1"),
                ("target_cluster", "c-lon-1"),
                ("type", "node"),
                ("protocol", "icmp"),
                ("source_node_name", "n1"),
                ("target_node_name", "l1"),
            ],
            0.0142,
        ),
        (
            "cilium_node_connectivity_latency_seconds",
            vec![
                ("source_cluster", "c-fra-1"),
                ("target_cluster", "c-lon-1"),
                ("type", "node"),
                ("protocol", "http"),
                ("source_node_name", "n1"),
                ("target_node_name", "l1"),
            ],
            0.0301,
        ),
        (
            "cilium_node_connectivity_latency_seconds",
            vec![
                ("source_cluster", "c-fra-1"),
                ("target_cluster", "c-fra-1"),
                ("type", "node"),
                ("protocol", "icmp"),
                ("source_node_name", "n1"),
                ("target_node_name", "n2"),
            ],
            0.0004,
        ),
        (
            "liqo_peer_latency_us",
            vec![("driver", "wireguard"), ("cluster_id", "c-dub-1")],
            21000.0,
        ),
    ];
    // A node that does not answer reports −1 (written as is, no wobble).
    let mut text = gauges(&series, &times);
    text.truncate(text.len() - "# EOF\n".len());
    for &t in &times {
        text.push_str(&format!(
            "cilium_node_connectivity_latency_seconds{{source_cluster=\"c-fra-1\",target_cluster=\"c-sin-1\",type=\"node\",protocol=\"icmp\"}} -1 {t}\n"
        ));
    }
    text.push_str("# EOF\n");
    let prom = start_prometheus(Some(&text)).await;
    for (source, extra, want) in [
        (
            "blackbox",
            vec!["--map-cluster", "10.0.2.1=c-par-1"],
            vec![("c-fra-1", "c-par-1", 9.4)],
        ),
        ("submariner", vec![], vec![("c-fra-1", "c-par-1", 9.5)]),
        ("cilium", vec![], vec![("c-fra-1", "c-lon-1", 14.2)]),
        ("liqo", vec![], vec![("c-dub-1", "c-fra-1", 21.0)]),
    ] {
        let mut args = vec![
            "--cluster",
            "c-fra-1",
            "--prometheus",
            &prom.url,
            "--rtt-from",
            source,
        ];
        args.extend(&extra);
        let (rtts, agent_log) = agent_posts(&args, |o| o["fact"] == "rtt_ms").await;
        let got: Vec<(String, String, f64)> = rtts
            .iter()
            .map(|o| {
                assert_eq!(o["class"], "measured", "{o}");
                (
                    o["a"].as_str().unwrap().to_string(),
                    o["b"].as_str().unwrap().to_string(),
                    o["value"].as_f64().unwrap(),
                )
            })
            .collect();
        eprintln!("{source}: {got:?}");
        assert_eq!(got.len(), want.len(), "{source}: {got:?}\n{agent_log}");
        for ((a, b, ms), (wa, wb, wms)) in got.iter().zip(&want) {
            assert_eq!((a.as_str(), b.as_str()), (*wa, *wb), "{source}");
            assert!(
                (ms - wms).abs() <= 0.01 * wms,
                "{source}: {a}↔{b} {ms} ms, written {wms}"
            );
        }
        assert!(!agent_log.contains(TOKEN));
    }
}

/// A real `berth serve` on a free loopback port (SQLite in a temporary
/// directory), killed when dropped.
struct BerthServer {
    child: std::process::Child,
    url: String,
    _dir: tempfile::TempDir,
}

impl Drop for BerthServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl BerthServer {
    async fn start() -> BerthServer {
        let dir = tempfile::tempdir().unwrap();
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let child = std::process::Command::new(env!("CARGO_BIN_EXE_berth"))
            .args([
                "serve",
                "--listen",
                &format!("127.0.0.1:{port}"),
                "--data-dir",
            ])
            .arg(dir.path())
            .env("BERTH_ADMIN_TOKEN", TOKEN)
            .env_remove("BERTH_DATABASE_URL")
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let s = BerthServer {
            child,
            url: format!("http://127.0.0.1:{port}"),
            _dir: dir,
        };
        let start = Instant::now();
        while !reqwest::get(format!("{}/readyz", s.url))
            .await
            .is_ok_and(|r| r.status().is_success())
        {
            assert!(
                start.elapsed() < Duration::from_secs(30),
                "berth serve not ready in 30 s"
            );
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        s
    }

    fn http(&self, method: reqwest::Method, path: &str) -> reqwest::RequestBuilder {
        reqwest::Client::new()
            .request(method, format!("{}{path}", self.url))
            .bearer_auth(TOKEN)
    }

    async fn create_estate(&self, id: &str, estate: &Value) {
        let r = self
            .http(reqwest::Method::POST, &format!("/api/estates?id={id}"))
            .header("content-type", "application/json")
            .body(estate.to_string())
            .send()
            .await
            .unwrap();
        let status = r.status();
        assert!(status.is_success(), "{status}: {}", r.text().await.unwrap());
    }

    /// The stored estate file.
    async fn estate(&self, id: &str) -> Value {
        self.http(reqwest::Method::GET, &format!("/api/estates/{id}/file"))
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap()
    }

    /// An agent token for one estate and all its clusters (agent tokens
    /// name their clusters, issue 37): it may post observations, not read
    /// the estate.
    async fn agent_token(&self, estate: &str) -> String {
        let file: Value = self
            .http(reqwest::Method::GET, &format!("/api/estates/{estate}/file"))
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        let clusters: Vec<Value> = file["clusters"]
            .as_array()
            .map(|a| a.iter().map(|c| c["id"].clone()).collect())
            .unwrap_or_default();
        let r: Value = self
            .http(reqwest::Method::POST, "/api/tokens")
            .json(&serde_json::json!({"name": format!("agent-{estate}"), "role": "agent", "estate": estate, "clusters": clusters}))
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        r["token"]
            .as_str()
            .unwrap_or_else(|| panic!("no token in {r}"))
            .to_string()
    }
}

/// `berth import prometheus` against a real server: exit code, stdout,
/// stderr.
async fn import_into(
    prom: &Prometheus,
    server: &BerthServer,
    estate: &str,
    args: &[&str],
) -> (i32, String, String) {
    let mut c = berth();
    c.args([
        "import",
        "prometheus",
        "--server",
        &server.url,
        "--estate",
        estate,
        "--url",
        &prom.url,
    ])
    .args(args)
    .env("BERTH_TOKEN", TOKEN);
    run(c).await
}

/// The evaluation time an import printed.
fn evaluated_at(out: &str) -> i64 {
    let text = out
        .split("evaluated at ")
        .nth(1)
        .and_then(|r| r.get(..20))
        .unwrap_or_else(|| panic!("no evaluation time in:\n{out}"));
    berth_engine::estate::parse_time(text).unwrap()
}

/// The estate's measured flows: (from, to) → (weight, observed_at).
fn measured_weights(estate: &Value) -> BTreeMap<(String, String), (f64, String)> {
    estate["flows"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["weight"]["class"] == "measured")
        .map(|f| {
            (
                (
                    f["from"].as_str().unwrap().to_string(),
                    f["to"].as_str().unwrap().to_string(),
                ),
                (
                    f["weight"]["value"].as_f64().unwrap(),
                    f["weight"]["observed_at"].as_str().unwrap().to_string(),
                ),
            )
        })
        .collect()
}

/// Online Boutique under Istio over two clusters the mesh calls `east-1`
/// and `west-1` while the estate calls them `c-east-1` and `c-west-1`;
/// `currencyservice` runs in both. The default command refuses, naming
/// both clusters and the one `--map-cluster` per cluster that fixes it,
/// and sends nothing; with those flags, or with the estate's clusters
/// declaring `mesh_cluster`, each replica gets its own flows, within 1 %
/// of Little's law over the written series; the agent (whose token may
/// not read the estate) gets the same through the server's resolution;
/// `--cluster-labels none` merges the replicas, as asked.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_multi_cluster_mesh_is_read_per_cluster_or_refused_on_a_real_prometheus() {
    if !have_prometheus() {
        return;
    }
    // (source cluster, workload, destination cluster, workload, req/s, mean ms)
    type Spec = (
        &'static str,
        &'static str,
        &'static str,
        &'static str,
        f64,
        f64,
    );
    const SPECS: [Spec; 5] = [
        ("east-1", "frontend", "east-1", "currencyservice", 60.0, 3.0),
        (
            "west-1",
            "frontend",
            "west-1",
            "currencyservice",
            240.0,
            8.0,
        ),
        // Across clusters: west's checkout calls east's currency.
        (
            "west-1",
            "checkoutservice",
            "east-1",
            "currencyservice",
            30.0,
            12.0,
        ),
        ("east-1", "frontend", "east-1", "cartservice", 50.0, 5.0),
        // To outside the mesh: Istio names its cluster "unknown", which
        // is no cluster to resolve (the edge is skipped as before).
        (
            "west-1",
            "checkoutservice",
            "unknown",
            "unknown",
            5.0,
            200.0,
        ),
    ];
    let mut all = vec![];
    for (i, (sc, src, dc, dst, rps, ms)) in SPECS.iter().enumerate() {
        for reporter in ["source", "destination"] {
            let labels = vec![
                ("reporter", reporter.to_string()),
                ("source_workload", src.to_string()),
                ("source_workload_namespace", "shop".to_string()),
                ("source_cluster", sc.to_string()),
                ("destination_workload", dst.to_string()),
                (
                    "destination_workload_namespace",
                    if *dst == "unknown" { "unknown" } else { "shop" }.to_string(),
                ),
                ("destination_cluster", dc.to_string()),
            ];
            let part = |p| {
                if reporter == "source" {
                    p
                } else {
                    Part::OtherSide
                }
            };
            let mut push = |name, part, per_s| {
                all.push(Written {
                    name,
                    labels: labels.clone(),
                    call: i,
                    part,
                    per_s,
                })
            };
            push("istio_requests_total", part(Part::Requests), *rps);
            push(
                "istio_request_duration_milliseconds_sum",
                part(Part::DurationSum),
                rps * ms * if reporter == "source" { 1.0 } else { 0.8 },
            );
            push(
                "istio_request_duration_milliseconds_count",
                part(Part::DurationCount),
                *rps,
            );
            push("istio_request_bytes_sum", part(Part::Bytes), rps * 400.0);
            push("istio_response_bytes_sum", part(Part::Bytes), rps * 2000.0);
        }
    }
    let now = chrono::Utc::now().timestamp();
    let times = sample_times(now);
    let prom = start_prometheus(Some(&written_text(&all, &times))).await;
    let server = BerthServer::start().await;

    // The estate: east's services as a Kubernetes import of c-east-1
    // named them, west's replicas under the ids an import gives a second
    // replica.
    let estate = |aliases: bool| {
        let cluster = |id: &str, site: &str, mesh: &str| {
            let mut c = serde_json::json!({"id": id, "site": site, "tier": "prod", "trust_zone": "general",
                "health": "healthy", "cpu_total": 64, "memory_total_gib": 256});
            if aliases {
                c["mesh_cluster"] = mesh.into();
            }
            c
        };
        let service = |id: &str, cluster: &str, source: Option<String>| {
            let mut s = serde_json::json!({"id": id, "owner": "boutique", "cluster": cluster, "cpu": 1, "memory_gib": 1});
            if let Some(source) = source {
                s["source"] = source.into();
            }
            s
        };
        let east = |n: &str| {
            service(
                n,
                "c-east-1",
                Some(format!("kubernetes:c-east-1/shop/deployment/{n}")),
            )
        };
        serde_json::json!({
            "schema": 1,
            "name": "boutique",
            "sites": [
                {"id": "east", "name": "East", "jurisdiction": "us"},
                {"id": "west", "name": "West", "jurisdiction": "us"}],
            "clusters": [cluster("c-east-1", "east", "east-1"), cluster("c-west-1", "west", "west-1")],
            "services": [
                east("frontend"), east("currencyservice"), east("cartservice"),
                service("c-west-1/frontend", "c-west-1", None),
                service("c-west-1/currencyservice", "c-west-1", None),
                service("c-west-1/checkoutservice", "c-west-1", None)],
            "flows": []
        })
    };
    server.create_estate("boutique", &estate(false)).await;
    server
        .create_estate("boutique-aliased", &estate(true))
        .await;

    // Independently: per call, Little's law over the caller's series, and
    // the estate service each end is in its cluster.
    let service_of = |cluster: &str, w: &str| match cluster {
        "east-1" => w.to_string(),
        _ => format!("c-west-1/{w}"),
    };
    let want = |at: i64| -> BTreeMap<(String, String), f64> {
        let mut out = BTreeMap::new();
        for (i, (sc, src, dc, dst, _, _)) in SPECS.iter().enumerate() {
            if *dst == "unknown" {
                continue;
            }
            let rate = |part: Part| -> f64 {
                all.iter()
                    .filter(|w| w.call == i && w.part == part)
                    .map(|w| written_rate_of(w, &times, at))
                    .sum()
            };
            let w =
                rate(Part::Requests) * rate(Part::DurationSum) / rate(Part::DurationCount) / 1000.0;
            out.insert((service_of(sc, src), service_of(dc, dst)), w);
        }
        out
    };
    let check = |what: &str, got: &BTreeMap<(String, String), (f64, String)>, at: i64| {
        let want = want(at);
        eprintln!(
            "{what}: {:<52} {:>10} {:>10} {:>8}",
            "flow", "expected", "got", "error"
        );
        for ((from, to), w) in &want {
            let g = got.get(&(from.clone(), to.clone())).map(|g| g.0);
            eprintln!(
                "{what}: {:<52} {w:>10.6} {:>10} {:>7.4}%",
                format!("{from} → {to}"),
                g.map_or("–".into(), |g| g.to_string()),
                g.map_or(f64::NAN, |g| (g - w) / w * 100.0)
            );
        }
        assert_eq!(
            want.keys().collect::<Vec<_>>(),
            got.keys().collect::<Vec<_>>(),
            "{what}"
        );
        for (k, w) in &want {
            let g = got[k].0;
            assert!(
                (g - w).abs() <= 0.01 * w,
                "{what}: {k:?}: expected {w}, got {g}"
            );
        }
    };

    // 1. The default command refuses: both clusters named, with the fix;
    //    nothing sent (the estate is at its first version, no flows).
    let (code, out, err) = import_into(&prom, &server, "boutique", &[]).await;
    assert_eq!(code, 1, "{out}\n{err}");
    for line in [
        "match no cluster of the estate: \"east-1\", \"west-1\"",
        "  --map-cluster east-1=c-east-1\n",
        "  --map-cluster west-1=c-west-1\n",
        "the estate's clusters: c-east-1, c-west-1",
    ] {
        assert!(err.contains(line), "{line:?} not in:\n{err}");
    }
    assert!(
        !err.contains("unknown"),
        "an end outside the mesh has no cluster to name:\n{err}"
    );
    eprintln!("the default command, refused:\n{err}");
    let stored = server.estate("boutique").await;
    assert_eq!(
        stored["flows"],
        serde_json::json!([]),
        "nothing may have been sent"
    );

    // A --map-cluster naming a cluster the estate lacks is refused too.
    let (code, _, err) = import_into(
        &prom,
        &server,
        "boutique",
        &[
            "--map-cluster",
            "east-1=c-east-1",
            "--map-cluster",
            "west-1=c-west-9",
        ],
    )
    .await;
    assert_eq!(code, 1, "{err}");
    assert!(
        err.contains("--map-cluster west-1=c-west-9: the estate has no cluster \"c-west-9\""),
        "{err}"
    );
    assert!(!err.contains("\"east-1\":"), "east-1 is mapped:\n{err}");

    // 2. With one --map-cluster per cluster: a flow per replica.
    let (code, out, err) = import_into(
        &prom,
        &server,
        "boutique",
        &[
            "--map-cluster",
            "east-1=c-east-1",
            "--map-cluster",
            "west-1=c-west-1",
        ],
    )
    .await;
    assert_eq!(code, 0, "{out}\n{err}");
    let at = evaluated_at(&out);
    check(
        "--map-cluster",
        &measured_weights(&server.estate("boutique").await),
        at,
    );

    // 3. With the estate's clusters declaring mesh_cluster: the default
    //    command, no flag.
    let (code, out, err) = import_into(&prom, &server, "boutique-aliased", &[]).await;
    assert_eq!(code, 0, "{out}\n{err}");
    let at = evaluated_at(&out);
    let aliased = measured_weights(&server.estate("boutique-aliased").await);
    check("mesh_cluster", &aliased, at);

    // 4. The agent, whose token may not read the estate: it sends each
    //    end with its cluster as the mesh names it, and the server
    //    resolves it through mesh_cluster the same way.
    let token = server.agent_token("boutique-aliased").await;
    let mut c = berth();
    c.args([
        "agent",
        "--server",
        &server.url,
        "--estate",
        "boutique-aliased",
        "--prometheus",
        &prom.url,
        "--interval",
        "1s",
    ])
    .env("BERTH_TOKEN", &token)
    .stderr(Stdio::piped());
    let child = c.spawn().unwrap();
    let start = Instant::now();
    let agent_flows = loop {
        let got = measured_weights(&server.estate("boutique-aliased").await);
        if got
            .values()
            .any(|(_, t)| aliased.values().all(|(_, a)| a != t))
        {
            break got;
        }
        assert!(
            start.elapsed() < Duration::from_secs(20),
            "the agent changed no flow"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    };
    terminate(&child);
    let log = String::from_utf8_lossy(&child.wait_with_output().await.unwrap().stderr).into_owned();
    let tick = berth_engine::estate::parse_time(
        &agent_flows.values().map(|(_, t)| t.clone()).max().unwrap(),
    )
    .unwrap();
    // Every flow of the tick, dated by it (an earlier import's may remain
    // where a tick did not land yet: wait for all of them).
    assert!(
        agent_flows
            .values()
            .all(|(_, t)| *t == berth_engine::estate::format_time(tick)),
        "{agent_flows:?}\n{log}"
    );
    check("agent, mesh_cluster", &agent_flows, tick);

    // The agent against the estate without aliases: the server refuses
    // the unknown clusters, naming the fix, and the agent says so.
    let token = server.agent_token("boutique").await;
    let before = server.estate("boutique").await;
    let mut c = berth();
    c.args([
        "agent",
        "--server",
        &server.url,
        "--estate",
        "boutique",
        "--prometheus",
        &prom.url,
        "--interval",
        "1s",
    ])
    .env("BERTH_TOKEN", &token)
    .stderr(Stdio::piped());
    let child = c.spawn().unwrap();
    tokio::time::sleep(Duration::from_secs(3)).await;
    terminate(&child);
    let log = String::from_utf8_lossy(&child.wait_with_output().await.unwrap().stderr).into_owned();
    assert!(
        log.contains("ERROR") && log.contains("--map-cluster east-1=CLUSTER"),
        "{log}"
    );
    assert_eq!(
        server.estate("boutique").await["flows"],
        before["flows"],
        "{log}"
    );

    // 5. --cluster-labels none: read without clusters, as asked — the
    //    replicas' calls are merged into the plain names.
    let (obs, at, out) = dry_run(&prom, &["--cluster-labels", "none"]).await;
    let merged = by_key(&obs);
    let all_weights = want(at);
    let sum = all_weights[&("frontend".into(), "currencyservice".into())]
        + all_weights[&(
            "c-west-1/frontend".into(),
            "c-west-1/currencyservice".into(),
        )];
    let got = merged[&(
        "flow_weight".into(),
        "frontend".into(),
        "currencyservice".into(),
    )];
    assert!(
        (got - sum).abs() <= 0.01 * sum,
        "merged: expected {sum}, got {got}\n{out}"
    );
    assert!(obs.iter().all(|o| o.get("from_cluster").is_none()), "{out}");
}
