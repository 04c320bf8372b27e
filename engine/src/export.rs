//! The estate back in its file format, canonically ordered, and the
//! estate version: a digest of that canonical form.
//!
//! Exporting then loading gives an equal `Estate` (a test checks it), and
//! since the export is built from the sorted model, two files that differ
//! only in the order of their arrays have the same version.

use serde_json::{json, Map, Value};
use sha2::{Digest, Sha256};

use crate::estate::{format_time, Estate};
use crate::fact::{Class, Fact};

fn fact(f: &Fact, file_time: Option<i64>) -> Value {
    if f.value.is_none() && f.source == "file" && f.observed_at.is_none() {
        return Value::Null;
    }
    let mut m = Map::new();
    m.insert("value".into(), f.value.map_or(Value::Null, |v| json!(v)));
    let class = if f.value.is_none() {
        Class::Guessed
    } else {
        f.class
    };
    m.insert("class".into(), json!(class.as_str()));
    m.insert("source".into(), json!(f.source));
    if let Some(t) = f.observed_at {
        if Some(t) != file_time || f.value.is_none() {
            m.insert("observed_at".into(), json!(format_time(t)));
        }
    }
    Value::Object(m)
}

/// The estate in the estate file format (schema 1).
pub fn to_file(e: &Estate) -> Value {
    let ft = e.observed_at;
    let sites: Vec<Value> = e
        .sites
        .iter()
        .map(|s| {
            let mut m = Map::new();
            m.insert("id".into(), json!(s.id));
            m.insert("name".into(), json!(s.name));
            if let Some((lat, lon)) = s.coords {
                m.insert("lat".into(), json!(lat));
                m.insert("lon".into(), json!(lon));
            }
            m.insert("jurisdiction".into(), json!(s.jurisdiction));
            Value::Object(m)
        })
        .collect();
    let clusters: Vec<Value> = e
        .clusters
        .iter()
        .map(|c| {
            let mut m = Map::new();
            m.insert("id".into(), json!(c.id));
            if let Some(n) = &c.name {
                m.insert("name".into(), json!(n));
            }
            m.insert("site".into(), json!(e.sites[c.site].id));
            m.insert("tier".into(), json!(c.tier));
            m.insert("trust_zone".into(), json!(c.trust_zone));
            m.insert("health".into(), json!(c.health.as_str()));
            if let Some(t) = c.enrolled_at {
                m.insert("enrolled_at".into(), json!(format_time(t)));
            }
            m.insert("cpu_total".into(), json!(c.cpu_total));
            m.insert("memory_total_gib".into(), json!(c.memory_total_gib));
            m.insert("cpu_free".into(), fact(&c.cpu_free, ft));
            m.insert("memory_free_gib".into(), fact(&c.memory_free_gib, ft));
            Value::Object(m)
        })
        .collect();
    let links: Vec<Value> = e
        .links
        .iter()
        .map(|l| {
            let mut m = Map::new();
            m.insert("a".into(), json!(e.sites[l.a].id));
            m.insert("b".into(), json!(e.sites[l.b].id));
            m.insert("rtt_ms".into(), fact(&l.rtt_ms, ft));
            if let Some(bw) = l.bandwidth_mb_s {
                m.insert("bandwidth_mb_s".into(), json!(bw));
            }
            Value::Object(m)
        })
        .collect();
    let paths: Vec<Value> = e
        .paths
        .iter()
        .map(|p| {
            json!({
                "a": e.clusters[p.a].id,
                "b": e.clusters[p.b].id,
                "rtt_ms": fact(&p.rtt_ms, ft),
            })
        })
        .collect();
    let services: Vec<Value> = e
        .services
        .iter()
        .map(|s| {
            let mut m = Map::new();
            m.insert("id".into(), json!(s.id));
            if let Some(n) = &s.name {
                m.insert("name".into(), json!(n));
            }
            m.insert("owner".into(), json!(s.owner));
            m.insert("cluster".into(), json!(e.clusters[s.cluster].id));
            m.insert("cpu".into(), json!(s.cpu));
            m.insert("memory_gib".into(), json!(s.memory_gib));
            m.insert("data_gb".into(), json!(s.data_gb));
            let k = &s.constraints;
            let mut c = Map::new();
            if k.local_volumes {
                c.insert("local_volumes".into(), json!(true));
            }
            if k.pinned {
                c.insert("pinned".into(), json!(true));
            }
            if let Some(j) = &k.jurisdictions {
                c.insert("jurisdictions".into(), json!(j));
            }
            if let Some(z) = &k.trust_zone {
                c.insert("trust_zone".into(), json!(z));
            }
            if let Some(t) = &k.tiers {
                c.insert("tiers".into(), json!(t));
            }
            if !c.is_empty() {
                m.insert("constraints".into(), Value::Object(c));
            }
            Value::Object(m)
        })
        .collect();
    let flows: Vec<Value> = e
        .flows
        .iter()
        .map(|f| {
            json!({
                "from": e.services[f.from].id,
                "to": e.services[f.to].id,
                "weight": fact(&f.weight, ft),
                "mb_s": fact(&f.mb_s, ft),
            })
        })
        .collect();
    let mut top = Map::new();
    top.insert("schema".into(), json!(1));
    top.insert("name".into(), json!(e.name));
    if let Some(t) = ft {
        top.insert("observed_at".into(), json!(format_time(t)));
    }
    top.insert("sites".into(), Value::Array(sites));
    top.insert("clusters".into(), Value::Array(clusters));
    top.insert("links".into(), Value::Array(links));
    top.insert("paths".into(), Value::Array(paths));
    top.insert("services".into(), Value::Array(services));
    top.insert("flows".into(), Value::Array(flows));
    Value::Object(top)
}

/// Digest of the estate's canonical content (16 hex digits).
pub fn version(e: &Estate) -> String {
    let bytes = serde_json::to_vec(&to_file(e)).expect("estate serialises");
    Sha256::digest(&bytes)
        .iter()
        .take(8)
        .map(|b| format!("{b:02x}"))
        .collect()
}
