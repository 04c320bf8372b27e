//! Traffic coverage (`docs/advice.md` §2, Traffic coverage) on a real
//! estate, end to end:
//!
//! 1. Online Boutique's manifests (`shared/fixtures/kubernetes/
//!    online-boutique.yaml`) imported into a full cluster through the
//!    import path the CLI and the server share (`kubernetes::parse`,
//!    `import::merge`): the report says whose traffic is unknown and how
//!    many got no call edge; every move the advice makes rests on traffic
//!    nobody observed, so every one is under "Not enough evidence",
//!    worded "the traffic of X has never been observed".
//! 2. Istio series for the same services backfilled into Debian's real
//!    Prometheus (`promtool tsdb create-blocks-from openmetrics`), read by
//!    the real `berth import prometheus --dry-run`, and its batch applied
//!    as the server applies an observation batch (`facts::apply_with`,
//!    the observations route's mode): every service is covered, and the
//!    same moves are judged on their flows.
//!
//! Both advices are goldens (`UPDATE_EXPECT=1`). Skipped, with a message,
//! only when `promtool` is absent and `BERTH_REQUIRE_PROMETHEUS` is unset.

mod fakes;

use std::fmt::Write;
use std::path::PathBuf;
use std::process::Stdio;
use std::time::{Duration, Instant};

use berth::facts::{apply_with, Mode, Source};
use berth::import::kubernetes::{parse, Options};
use berth::import::{merge, Input, NoteCode};
use berth_api::FactUpdate;
use berth_engine::estate::format_time;
use berth_engine::fact::Class;
use berth_engine::{advise, load, text, Advice, Format, Policy};
use expect_test::expect;
use fakes::{berth, run};
use serde_json::{json, Value};

const STEP: i64 = 15;

/// (caller, callee, requests/s, mean ms as the caller sees it): an Online
/// Boutique under load, every service of the manifests in it.
const CALLS: [(&str, &str, f64, f64); 15] = [
    ("loadgenerator", "frontend", 20.0, 120.0),
    ("frontend", "productcatalogservice", 150.0, 6.0),
    ("frontend", "currencyservice", 200.0, 4.0),
    ("frontend", "cartservice", 40.0, 8.0),
    ("frontend", "recommendationservice", 30.0, 25.0),
    ("frontend", "adservice", 30.0, 12.0),
    ("frontend", "shippingservice", 15.0, 5.0),
    ("frontend", "checkoutservice", 3.0, 180.0),
    ("checkoutservice", "productcatalogservice", 6.0, 6.0),
    ("checkoutservice", "currencyservice", 9.0, 4.0),
    ("checkoutservice", "cartservice", 6.0, 8.0),
    ("checkoutservice", "shippingservice", 6.0, 5.0),
    ("checkoutservice", "paymentservice", 3.0, 30.0),
    ("checkoutservice", "emailservice", 3.0, 40.0),
    ("cartservice", "redis-cart", 80.0, 2.0),
];

fn fixture(name: &str) -> String {
    let start = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    for dir in start.ancestors() {
        let path = dir.join("shared/fixtures/kubernetes").join(name);
        if path.is_file() {
            return std::fs::read_to_string(path).unwrap();
        }
    }
    panic!("shared/fixtures/kubernetes/{name} not found")
}

fn have_prometheus() -> bool {
    let found = std::process::Command::new("sh")
        .args(["-c", "command -v promtool && command -v prometheus"])
        .stdout(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    if !found {
        assert!(
            std::env::var_os("BERTH_REQUIRE_PROMETHEUS").is_none(),
            "BERTH_REQUIRE_PROMETHEUS is set but promtool/prometheus are missing"
        );
        eprintln!("SKIPPED: promtool/prometheus not installed");
    }
    found
}

/// The Istio counters of `CALLS`, both reporters, every 15 s from half an
/// hour before `now` to ten minutes after (so `rate()` never
/// extrapolates at the window's end), in OpenMetrics text.
fn istio_series(now: i64) -> String {
    let origin = now - 1800;
    let mut text = String::new();
    for t in (origin..=now + 600).step_by(STEP as usize) {
        for (src, dst, rps, ms) in CALLS {
            for reporter in ["source", "destination"] {
                let labels = format!(
                    "reporter=\"{reporter}\",source_workload=\"{src}\",source_workload_namespace=\"default\",source_cluster=\"Kubernetes\",destination_workload=\"{dst}\",destination_workload_namespace=\"default\",destination_cluster=\"Kubernetes\",response_code=\"200\""
                );
                // The callee's proxy sees no network: a shorter duration.
                let ms = if reporter == "source" { ms } else { ms * 0.8 };
                let dt = (t - origin) as f64;
                for (name, per_s) in [
                    ("istio_requests_total", rps),
                    ("istio_request_duration_milliseconds_sum", rps * ms),
                    ("istio_request_duration_milliseconds_count", rps),
                    ("istio_request_bytes_sum", rps * 600.0),
                    ("istio_response_bytes_sum", rps * 3000.0),
                ] {
                    let _ = writeln!(text, "{name}{{{labels}}} {} {t}", 1000.0 + per_s * dt);
                }
            }
        }
    }
    text.push_str("# EOF\n");
    text
}

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

async fn start_prometheus(openmetrics: &str) -> Prometheus {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    std::fs::create_dir(&data).unwrap();
    let file = dir.path().join("istio.om");
    std::fs::write(&file, openmetrics).unwrap();
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
    let config = dir.path().join("prometheus.yml");
    std::fs::write(
        &config,
        "global:\n  scrape_interval: 15s\nscrape_configs: []\n",
    )
    .unwrap();
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let child = std::process::Command::new("prometheus")
        .arg(format!("--storage.tsdb.path={}", data.display()))
        .arg(format!("--web.listen-address=127.0.0.1:{port}"))
        .arg(format!("--config.file={}", config.display()))
        .arg("--storage.tsdb.retention.time=100y")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let p = Prometheus {
        child,
        url: format!("http://127.0.0.1:{port}"),
        _dir: dir,
    };
    let start = Instant::now();
    while !reqwest::get(format!("{}/-/ready", p.url))
        .await
        .is_ok_and(|r| r.status().is_success())
    {
        assert!(
            start.elapsed() < Duration::from_secs(30),
            "prometheus not ready in 30 s"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    p
}

/// One full cluster in Frankfurt (the import's target: 2 cores, 0.05
/// free), room beside it (2 ms) and in Paris (9.5 ms); every fact
/// observed at `now`.
fn estate(now: i64) -> Value {
    json!({
        "schema": 1,
        "name": "boutique from manifests",
        "observed_at": format_time(now),
        "sites": [
            {"id": "fra", "lat": 50.11, "lon": 8.68, "jurisdiction": "eu"},
            {"id": "par", "lat": 48.86, "lon": 2.35, "jurisdiction": "eu"}
        ],
        "clusters": [
            {"id": "c-fra", "site": "fra", "tier": "prod", "trust_zone": "general", "health": "healthy",
             "cpu_total": 2, "memory_total_gib": 16, "cpu_free": 0.05, "memory_free_gib": 6},
            {"id": "c-fra-2", "site": "fra", "tier": "prod", "trust_zone": "general", "health": "healthy",
             "cpu_total": 32, "memory_total_gib": 128, "cpu_free": 24, "memory_free_gib": 100},
            {"id": "c-par", "site": "par", "tier": "prod", "trust_zone": "general", "health": "healthy",
             "cpu_total": 64, "memory_total_gib": 256, "cpu_free": 48, "memory_free_gib": 200}
        ],
        "links": [{"a": "fra", "b": "par", "rtt_ms": 9.5}],
        "paths": [{"a": "c-fra", "b": "c-fra-2", "rtt_ms": 2}],
        "services": []
    })
}

/// Every move (with its evidence sentence, if any), then the totals.
fn show(a: &Advice) -> String {
    let mut out = String::new();
    for m in &a.moves {
        let _ = writeln!(out, "{}. {}", m.step, text::move_line(m));
        if let Some(e) = &m.evidence {
            let _ = writeln!(out, "   {e}");
        }
    }
    let _ = writeln!(
        out,
        "cost {:.1} → {:.1}",
        a.totals_before.cost, a.totals_after.cost
    );
    out
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn manifests_only_moves_wait_for_a_mesh_then_are_judged_on_their_flows() {
    if !have_prometheus() {
        return;
    }
    let now = chrono::Utc::now().timestamp();
    let policy = Policy::default();

    // 1. Manifests only.
    let manifests = fixture("online-boutique.yaml");
    let imported = parse(
        &[Input {
            name: "online-boutique.yaml",
            text: &manifests,
        }],
        Options::default(),
    )
    .unwrap_or_else(|e| panic!("{e:?}"));
    let (doc, report) = merge(&estate(now), "c-fra", &imported).unwrap();
    let note = report
        .notes
        .iter()
        .find(|n| n.code == NoteCode::TrafficUnknown)
        .expect("the import says whose traffic is unknown");
    expect![[r#"traffic never observed for 12 of 12 imported services; every one has a call edge from the input. A move of any of them is listed under "Not enough evidence" until a mesh import (berth import prometheus) or an agent pass observes it"#]].assert_eq(&note.message);
    let e = load(&doc.to_string(), Format::Json).unwrap();
    let before = advise(&e, &policy, now);
    assert!(!before.moves.is_empty(), "a full cluster: something moves");
    for m in &before.moves {
        assert_eq!(m.confidence, Class::Guessed, "{}", m.service);
        let never = format!("the traffic of {} has never been observed", m.service);
        let evidence = m.evidence.as_deref().unwrap_or_default();
        // A compound step names every member; a single move its service.
        assert!(
            evidence.contains(&never)
                || (m.group.is_some()
                    && evidence.contains("never been observed")
                    && evidence.contains(&m.service)),
            "{}: {evidence:?}",
            m.service
        );
    }
    expect![[r#"
        1. loadgenerator c-fra→c-fra-2 +9.6 [rtt -1.7, headroom +11.3] guessed
           Not enough evidence to recommend — the traffic of loadgenerator has never been observed; 2 of 8 inputs are guesses.
        2. adservice c-fra→c-fra-2 +5.8 [rtt -1.7, headroom +7.5] guessed
           Not enough evidence to recommend — the traffic of adservice has never been observed; 2 of 8 inputs are guesses.
        3. cartservice c-fra→c-fra-2 +2.4 [rtt -5.1, headroom +7.5] guessed
           Not enough evidence to recommend — the traffic of cartservice has never been observed; 4 of 10 inputs are guesses.
        4. emailservice c-fra→c-fra-2 +2.1 [rtt -1.7, headroom +3.8] guessed
           Not enough evidence to recommend — the traffic of emailservice has never been observed; 2 of 8 inputs are guesses.
        5. paymentservice c-fra→c-fra-2 +2.1 [rtt -1.7, headroom +3.8] guessed
           Not enough evidence to recommend — the traffic of paymentservice has never been observed; 2 of 8 inputs are guesses.
        cost 17.9 → 17.9
    "#]].assert_eq(&show(&before));

    // 2. A mesh import covering them, through a real Prometheus.
    let prom = start_prometheus(&istio_series(now)).await;
    let mut c = berth();
    c.args([
        "import",
        "prometheus",
        "--estate",
        "boutique",
        "--url",
        &prom.url,
        "--dry-run",
    ]);
    let (code, out, err) = run(c).await;
    assert_eq!(code, 0, "{out}\n{err}");
    let batch: Value =
        serde_json::from_str(&out[out.find("the batch would be:\n").unwrap() + 20..]).unwrap();
    let observations: Vec<FactUpdate> =
        serde_json::from_value(batch["observations"].clone()).unwrap();
    let covered: Vec<&str> = observations
        .iter()
        .filter(|o| o.fact == "traffic")
        .map(|o| o.service.as_deref().unwrap())
        .collect();
    // Every service of the manifests is in the mesh's series.
    let mut services: Vec<&str> = e.services.iter().map(|s| s.id.as_str()).collect();
    services.sort();
    assert_eq!(covered, services, "{out}");
    let at = observations
        .iter()
        .filter_map(|o| berth_engine::estate::parse_time(o.observed_at.as_deref()?))
        .max()
        .unwrap();
    let mode = Mode {
        list: "observations",
        default_class: Some(Class::Measured),
        require_observed_at: true,
        source: Source::Sender("token:mesh-import".into()),
        received_at: at,
    };
    let observed = apply_with(&doc, &observations, &mode).unwrap_or_else(|e| panic!("{e:?}"));
    let e2 = load(&observed.to_string(), Format::Json).unwrap();
    for (i, s) in e2.services.iter().enumerate() {
        let f = e2.traffic_of(i).expect("covered");
        assert_eq!(f.value, Some(300.0), "{}", s.id);
    }
    let after = advise(&e2, &policy, at);
    for m in &after.moves {
        let evidence = m.evidence.as_deref().unwrap_or_default();
        assert!(
            !evidence.contains("never been observed"),
            "{}: {evidence}",
            m.service
        );
        assert!(
            m.facts
                .iter()
                .any(|f| f.fact == format!("traffic {}", m.service) && f.class == Class::Measured),
            "{}: judged with its coverage",
            m.service
        );
    }
    expect![[r#"
        1. cartservice c-fra→c-fra-2 +6.6 [rtt -0.9, headroom +7.5] reported
        2. paymentservice c-fra→c-fra-2 +3.6 [rtt -0.2, headroom +3.8] reported
        3. redis-cart c-fra→c-fra-2 +2.1 [rtt +0.3, headroom +1.9] reported
        cost 15.4 → 3.1
    "#]]
    .assert_eq(&show(&after));
}
