//! Prometheus text-format metrics, kept by hand: a few counters and
//! histograms need no dependency. Labels are route *templates*
//! (`/api/estates/{id}/advice`), never raw paths, so a client cannot blow
//! up the number of series by inventing URLs.

use std::collections::BTreeMap;
use std::fmt::Write;
use std::sync::{Arc, Mutex};

/// Upper bounds (seconds) of the latency buckets: from a cached answer
/// (well under a millisecond) to a cold advice run on a large estate.
const BUCKETS_S: [f64; 12] = [
    0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 5.0,
];

#[derive(Default, Clone)]
struct Histogram {
    counts: [u64; BUCKETS_S.len()],
    count: u64,
    sum: f64,
}

impl Histogram {
    fn observe(&mut self, s: f64) {
        for (i, b) in BUCKETS_S.iter().enumerate() {
            if s <= *b {
                self.counts[i] += 1;
            }
        }
        self.count += 1;
        self.sum += s;
    }

    fn render(&self, out: &mut String, name: &str, labels: &str) {
        let sep = if labels.is_empty() { "" } else { "," };
        for (i, b) in BUCKETS_S.iter().enumerate() {
            let _ = writeln!(
                out,
                "{name}_bucket{{{labels}{sep}le=\"{b}\"}} {}",
                self.counts[i]
            );
        }
        let _ = writeln!(
            out,
            "{name}_bucket{{{labels}{sep}le=\"+Inf\"}} {}",
            self.count
        );
        let _ = writeln!(out, "{name}_sum{{{labels}}} {}", self.sum);
        let _ = writeln!(out, "{name}_count{{{labels}}} {}", self.count);
    }
}

#[derive(Default)]
struct Inner {
    /// (route, method, status) → count.
    requests: BTreeMap<(String, String, u16), u64>,
    /// (route, method) → latency.
    latency: BTreeMap<(String, String), Histogram>,
    /// engine operation → run time (cache misses only).
    engine: BTreeMap<&'static str, Histogram>,
    /// (operation, hit|miss) → count.
    cache: BTreeMap<(&'static str, &'static str), u64>,
}

#[derive(Clone, Default)]
pub struct Metrics {
    inner: Arc<Mutex<Inner>>,
}

fn escape(v: &str) -> String {
    v.replace('\\', "\\\\")
        .replace('"', "\\\"")
        .replace('\n', "\\n")
}

impl Metrics {
    pub fn request(&self, route: &str, method: &str, status: u16, seconds: f64) {
        let mut m = self.inner.lock().expect("metrics lock");
        *m.requests
            .entry((route.to_string(), method.to_string(), status))
            .or_default() += 1;
        m.latency
            .entry((route.to_string(), method.to_string()))
            .or_default()
            .observe(seconds);
    }

    pub fn engine_run(&self, op: &'static str, seconds: f64) {
        let mut m = self.inner.lock().expect("metrics lock");
        m.engine.entry(op).or_default().observe(seconds);
    }

    pub fn cache(&self, op: &'static str, hit: bool) {
        let mut m = self.inner.lock().expect("metrics lock");
        *m.cache
            .entry((op, if hit { "hit" } else { "miss" }))
            .or_default() += 1;
    }

    /// The text exposition, with the pool's gauges appended.
    pub fn render(&self, pool_size: u32, pool_idle: usize, pool_max: u32) -> String {
        let m = self.inner.lock().expect("metrics lock");
        let mut out = String::new();
        out.push_str("# HELP berth_http_requests_total HTTP requests by route template, method and status.\n");
        out.push_str("# TYPE berth_http_requests_total counter\n");
        for ((route, method, status), n) in &m.requests {
            let _ = writeln!(
                out,
                "berth_http_requests_total{{route=\"{}\",method=\"{}\",status=\"{status}\"}} {n}",
                escape(route),
                escape(method)
            );
        }
        out.push_str("# HELP berth_http_request_duration_seconds HTTP request latency by route template and method.\n");
        out.push_str("# TYPE berth_http_request_duration_seconds histogram\n");
        for ((route, method), h) in &m.latency {
            h.render(
                &mut out,
                "berth_http_request_duration_seconds",
                &format!("route=\"{}\",method=\"{}\"", escape(route), escape(method)),
            );
        }
        out.push_str(
            "# HELP berth_engine_run_seconds Engine run time per operation (cache misses).\n",
        );
        out.push_str("# TYPE berth_engine_run_seconds histogram\n");
        for (op, h) in &m.engine {
            h.render(
                &mut out,
                "berth_engine_run_seconds",
                &format!("op=\"{op}\""),
            );
        }
        out.push_str(
            "# HELP berth_result_cache_total Result cache lookups by operation and outcome.\n",
        );
        out.push_str("# TYPE berth_result_cache_total counter\n");
        for ((op, outcome), n) in &m.cache {
            let _ = writeln!(
                out,
                "berth_result_cache_total{{op=\"{op}\",outcome=\"{outcome}\"}} {n}"
            );
        }
        out.push_str("# HELP berth_db_pool_connections Database pool connections (open).\n");
        out.push_str("# TYPE berth_db_pool_connections gauge\n");
        let _ = writeln!(out, "berth_db_pool_connections {pool_size}");
        out.push_str("# HELP berth_db_pool_idle_connections Database pool connections (idle).\n");
        out.push_str("# TYPE berth_db_pool_idle_connections gauge\n");
        let _ = writeln!(out, "berth_db_pool_idle_connections {pool_idle}");
        out.push_str("# HELP berth_db_pool_max_connections Database pool size limit.\n");
        out.push_str("# TYPE berth_db_pool_max_connections gauge\n");
        let _ = writeln!(out, "berth_db_pool_max_connections {pool_max}");
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn histogram_buckets_are_cumulative() {
        let m = Metrics::default();
        m.request("/api/estates", "GET", 200, 0.003);
        m.request("/api/estates", "GET", 200, 0.2);
        m.request("/api/estates", "GET", 404, 0.0001);
        let text = m.render(2, 1, 8);
        assert!(text.contains(
            "berth_http_requests_total{route=\"/api/estates\",method=\"GET\",status=\"200\"} 2"
        ));
        assert!(text.contains(
            "berth_http_request_duration_seconds_bucket{route=\"/api/estates\",method=\"GET\",le=\"0.005\"} 2"
        ));
        assert!(text.contains(
            "berth_http_request_duration_seconds_bucket{route=\"/api/estates\",method=\"GET\",le=\"+Inf\"} 3"
        ));
        assert!(text.contains("berth_db_pool_max_connections 8"));
    }
}
