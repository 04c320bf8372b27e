//! A real Prometheus for tests (Debian's `prometheus` and `promtool`;
//! `scripts/install-tools.sh` installs them): series written in
//! OpenMetrics text are backfilled with `promtool tsdb create-blocks-from
//! openmetrics`, then `prometheus` serves them on a free loopback port
//! with no scrape targets. Included with
//! `#[path = "support/prometheus.rs"] mod prometheus;` by the tests that
//! need it (`outcomes_prometheus.rs`); `prometheus_real.rs` and
//! `traffic_coverage_real.rs` keep their own copies of the same steps.

#![allow(dead_code)]

use std::process::Stdio;
use std::time::{Duration, Instant};

/// A running `prometheus`, killed when dropped.
pub struct Prometheus {
    child: std::process::Child,
    pub url: String,
    dir: tempfile::TempDir,
}

impl Drop for Prometheus {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Whether the real Prometheus tools are here; if not, skip (with a
/// message) unless BERTH_REQUIRE_PROMETHEUS is set.
pub fn have_prometheus() -> bool {
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

/// Backfill `openmetrics` and start Prometheus on a free loopback port;
/// returns once it is ready.
pub async fn start_prometheus(openmetrics: &str) -> Prometheus {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    std::fs::create_dir(&data).unwrap();
    let file = dir.path().join("series.om");
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
    let port = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap().port()
    };
    let log = std::fs::File::create(dir.path().join("prometheus.log")).unwrap();
    let child = std::process::Command::new("prometheus")
        .arg(format!("--storage.tsdb.path={}", data.display()))
        .arg(format!("--web.listen-address=127.0.0.1:{port}"))
        .arg(format!("--config.file={}", config.display()))
        // Backfilled blocks may lie in the future of the wall clock.
        .arg("--storage.tsdb.retention.time=100y")
        .stdout(Stdio::null())
        .stderr(log)
        .spawn()
        .unwrap();
    let p = Prometheus {
        child,
        url: format!("http://127.0.0.1:{port}"),
        dir,
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
            std::fs::read_to_string(p.dir.path().join("prometheus.log")).unwrap_or_default()
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    p
}

/// A counter that grows at `before` per second until `change`, and at
/// `after` from then on (continuous: no reset at the change).
pub struct Counter {
    pub name: &'static str,
    pub labels: Vec<(&'static str, String)>,
    pub before: f64,
    pub after: f64,
}

impl Counter {
    /// Its value at `t`, counting from `origin`.
    pub fn at(&self, t: i64, origin: i64, change: i64) -> f64 {
        if t <= change {
            self.before * (t - origin) as f64
        } else {
            self.before * (change - origin) as f64 + self.after * (t - change) as f64
        }
    }
}

/// The counters at `times`, as OpenMetrics text.
pub fn openmetrics(all: &[Counter], times: &[i64], origin: i64, change: i64) -> String {
    use std::fmt::Write;
    let mut text = String::new();
    for &t in times {
        for c in all {
            let labels: Vec<String> = c
                .labels
                .iter()
                .map(|(k, v)| format!("{k}=\"{v}\""))
                .collect();
            let _ = writeln!(
                text,
                "{}{{{}}} {} {t}",
                c.name,
                labels.join(","),
                c.at(t, origin, change)
            );
        }
    }
    text.push_str("# EOF\n");
    text
}
