//! Small hand-built estates for the golden tests of the placement scorer
//! and the what-if projection. Memory is always 4 GiB per core (totals,
//! free figures and requests alike), so CPU and memory utilisation agree
//! unless a test says otherwise.

#![allow(dead_code)]

/// The exact solver for small estates (quality of advice vs optimum).
pub mod exact;

/// Issue 18's medium estates and their `optimum-capped` reference.
pub mod medium;

/// Generated estates with their guesses read as reported (quality).
pub mod trusted;

use berth_engine::{load, Estate, Format};
use serde_json::{json, Value};

/// Evaluation time of every test (2026-11-30T04:05:00Z).
pub const NOW: i64 = berth_engine::gen::NOW;
pub const NOW_STR: &str = "2026-11-30T04:05:00Z";

/// Four sites with measured links: fra–par 9 ms, fra–lon 14 ms,
/// par–lon 8 ms, and iad 80–90 ms from each.
pub fn sites() -> (Vec<Value>, Vec<Value>) {
    let sites = vec![
        json!({"id": "fra", "jurisdiction": "eu"}),
        json!({"id": "par", "jurisdiction": "eu"}),
        json!({"id": "lon", "jurisdiction": "uk"}),
        json!({"id": "iad", "jurisdiction": "us"}),
    ];
    let link = |a: &str, b: &str, ms: f64| json!({"a": a, "b": b, "rtt_ms": {"value": ms, "class": "measured", "source": "probe", "observed_at": NOW_STR}});
    let links = vec![
        link("fra", "par", 9.0),
        link("fra", "lon", 14.0),
        link("lon", "par", 8.0),
        link("fra", "iad", 90.0),
        link("iad", "par", 85.0),
        link("iad", "lon", 80.0),
    ];
    (sites, links)
}

/// A healthy general-zone prod cluster enrolled long ago, with measured
/// free capacity (memory: 4 GiB per core).
pub fn cluster(id: &str, site: &str, cpu_total: f64, cpu_free: f64) -> Value {
    json!({
        "id": id,
        "site": site,
        "tier": "prod",
        "trust_zone": "general",
        "health": "healthy",
        "enrolled_at": "2024-01-01T00:00:00Z",
        "cpu_total": cpu_total,
        "memory_total_gib": cpu_total * 4.0,
        "cpu_free": {"value": cpu_free, "class": "measured", "source": "agent", "observed_at": NOW_STR},
        "memory_free_gib": {"value": cpu_free * 4.0, "class": "measured", "source": "agent", "observed_at": NOW_STR},
    })
}

/// A service without constraints (memory: 4 GiB per core).
pub fn service(id: &str, owner: &str, cluster: &str, cpu: f64) -> Value {
    json!({"id": id, "owner": owner, "cluster": cluster, "cpu": cpu, "memory_gib": cpu * 4.0})
}

pub fn flow(from: &str, to: &str, weight: f64, mb_s: f64) -> Value {
    json!({"from": from, "to": to, "weight": weight, "mb_s": mb_s})
}

/// `v` with `key` set to `value` (for constraints, health, tier, …).
pub fn with(mut v: Value, key: &str, value: Value) -> Value {
    v[key] = value;
    v
}

pub fn estate(clusters: Vec<Value>, services: Vec<Value>, flows: Vec<Value>) -> Estate {
    let (sites, links) = sites();
    let file = json!({
        "schema": 1,
        "name": "test",
        "observed_at": NOW_STR,
        "sites": sites,
        "links": links,
        "clusters": clusters,
        "services": services,
        "flows": flows,
    });
    load(&file.to_string(), Format::Json).unwrap_or_else(|e| panic!("test estate: {e:?}"))
}

pub fn sample() -> Estate {
    let text = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../examples/estates/sample.json"
    ))
    .expect("sample estate");
    load(&text, Format::Json).expect("sample is valid")
}
