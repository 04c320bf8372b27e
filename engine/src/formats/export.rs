//! The estate back in its file format, canonically ordered, and the
//! estate version: a digest of that canonical form.
//!
//! Exporting then loading gives an equal `Estate` (a test checks it), and
//! since the export is built from the sorted model, two files that differ
//! only in the order of their arrays have the same version.

use serde_json::{json, Map, Value};

use crate::estate::{format_time, Cluster, Estate, Service, Told, Traffic};
use crate::fact::{Class, Fact};

/// A fact that may be unknown: its value, or `{"unknown": "<why>"}`.
fn told<T: serde::Serialize>(t: &Told<T>) -> Value {
    match t {
        Told::Known(v) => json!(v),
        Told::Unknown(why) => json!({ "unknown": why }),
    }
}

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
    let clusters: Vec<Value> = e.clusters.iter().map(|c| cluster_entry(e, c, ft)).collect();
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
    let services: Vec<Value> = e.services.iter().map(|s| service_entry(e, s, ft)).collect();
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
    if let Some(d) = e.traffic {
        top.insert("traffic".into(), json!(d.as_str()));
    }
    top.insert("sites".into(), Value::Array(sites));
    top.insert("clusters".into(), Value::Array(clusters));
    top.insert("links".into(), Value::Array(links));
    top.insert("paths".into(), Value::Array(paths));
    top.insert("services".into(), Value::Array(services));
    top.insert("flows".into(), Value::Array(flows));
    Value::Object(top)
}

/// One cluster as the file writes it.
fn cluster_entry(e: &Estate, c: &Cluster, ft: Option<i64>) -> Value {
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
    if let Some(n) = &c.karmada_cluster {
        m.insert("karmada_cluster".into(), json!(n));
    }
    if let Some(n) = &c.ocm_cluster {
        m.insert("ocm_cluster".into(), json!(n));
    }
    if let Some(n) = &c.mesh_cluster {
        m.insert("mesh_cluster".into(), json!(n));
    }
    Value::Object(m)
}

/// One service as the file writes it: requests (`null` when unknown),
/// constraints, provenance, workload and traffic coverage.
fn service_entry(e: &Estate, s: &Service, ft: Option<i64>) -> Value {
    let mut m = Map::new();
    m.insert("id".into(), json!(s.id));
    if let Some(n) = &s.name {
        m.insert("name".into(), json!(n));
    }
    m.insert("owner".into(), json!(s.owner));
    m.insert("cluster".into(), json!(e.clusters[s.cluster].id));
    // `null` for an unknown request (the field is required).
    m.insert("cpu".into(), json!(s.cpu));
    m.insert("memory_gib".into(), json!(s.memory_gib));
    m.insert("data_gb".into(), told(&s.data_gb));
    let k = &s.constraints;
    let mut c = Map::new();
    match &k.local_volumes {
        Told::Known(false) => {}
        lv => {
            c.insert("local_volumes".into(), told(lv));
        }
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
    if let Some(src) = &s.source {
        m.insert("source".into(), json!(src));
    }
    if let Some(w) = &s.workload {
        let mut o = Map::new();
        if let Some(v) = &w.api_version {
            o.insert("api_version".into(), json!(v));
        }
        o.insert("kind".into(), json!(w.kind));
        o.insert("namespace".into(), json!(w.namespace));
        o.insert("name".into(), json!(w.name));
        m.insert("workload".into(), Value::Object(o));
    }
    match &s.traffic {
        None => {}
        Some(Traffic::Declared) => {
            m.insert("traffic".into(), json!("declared"));
        }
        Some(Traffic::Observed(f)) => {
            m.insert("traffic".into(), fact(f, ft));
        }
    }
    Value::Object(m)
}

/// Digest of the estate's canonical content (16 hex digits).
///
/// A service's `source` (provenance) is not part of it: the version
/// changes when a fact or a placement input changes, not when the same
/// content is re-attributed. Nor are the names other tools know things by
/// (a cluster's `karmada_cluster`, `ocm_cluster` and `mesh_cluster`, a
/// service's `workload`): they change the manifests of a plan, never the advice.
///
/// Every field, in the model's sorted order, is encoded unambiguously
/// (numbers as their IEEE bits, strings length-prefixed) and hashed, rather
/// than hashing `to_file`'s JSON: same information, a fraction of the time
/// on a large estate. Array order in the input cannot change it.
pub fn version(e: &Estate) -> String {
    let mut h = Canon(Vec::with_capacity(
        64 * (e.flows.len() + e.services.len()) + 4096,
    ));
    h.str(&e.name);
    h.opt_i64(e.observed_at);
    h.len(e.sites.len());
    for s in &e.sites {
        h.str(&s.id);
        h.str(&s.name);
        match s.coords {
            Some((lat, lon)) => {
                h.u8(1);
                h.f64(lat);
                h.f64(lon);
            }
            None => h.u8(0),
        }
        h.str(&s.jurisdiction);
    }
    h.len(e.clusters.len());
    for c in &e.clusters {
        h.str(&c.id);
        h.opt_str(c.name.as_deref());
        h.len(c.site);
        h.str(&c.tier);
        h.str(&c.trust_zone);
        h.str(c.health.as_str());
        h.opt_i64(c.enrolled_at);
        h.f64(c.cpu_total);
        h.f64(c.memory_total_gib);
        h.fact(&c.cpu_free);
        h.fact(&c.memory_free_gib);
    }
    for list in [&e.links, &e.paths] {
        h.len(list.len());
        for l in list {
            h.len(l.a);
            h.len(l.b);
            h.fact(&l.rtt_ms);
            h.opt_f64(l.bandwidth_mb_s);
        }
    }
    h.len(e.services.len());
    for s in &e.services {
        h.str(&s.id);
        h.opt_str(s.name.as_deref());
        h.str(&s.owner);
        h.len(s.cluster);
        h.request(s.cpu);
        h.request(s.memory_gib);
        // An unknown is encoded after everything else (below), so every
        // estate without one keeps the version it had before they existed.
        h.f64(s.data_gb_in_copy());
        let k = &s.constraints;
        h.u8(s.local_volumes() as u8);
        h.u8(k.pinned as u8);
        h.opt_list(k.jurisdictions.as_deref());
        h.opt_str(k.trust_zone.as_deref());
        h.opt_list(k.tiers.as_deref());
    }
    h.len(e.flows.len());
    for f in &e.flows {
        h.len(f.from);
        h.len(f.to);
        h.fact(&f.weight);
        h.fact(&f.mb_s);
    }
    // Traffic coverage as the engine reads it (`Estate::traffic_of`), not
    // as written: a file that declares what was already read as declared
    // keeps its version, and one whose coverage reads differently (e.g. a
    // Kubernetes import's services, unknown) changes it. Only services
    // with a coverage fact are encoded, after everything else, so every
    // estate whose flows are all declared keeps the version it had before
    // coverage existed.
    for s in 0..e.services.len() {
        if let Some(f) = e.traffic_of(s) {
            h.u8(b'T');
            h.len(s);
            // Never observed is one thing however it was written.
            match f.value {
                Some(_) => h.fact(&f),
                None => h.u8(0),
            }
        }
    }
    // Unknown data (size, local volumes): which, not why — the reason, like
    // a source, changes no fact.
    for (i, s) in e.services.iter().enumerate() {
        let data = s.data_gb.why_unknown().is_some();
        let local = s.constraints.local_volumes.why_unknown().is_some();
        if data || local {
            h.u8(b'U');
            h.len(i);
            h.u8((data as u8) | ((local as u8) << 1));
        }
    }
    let (a, b) = hash128(&h.0);
    format!("{:016x}", a ^ b.rotate_left(17))
}

/// A fast, portable 128-bit hash (two multiply-rotate lanes over 64-bit
/// words, SplitMix64 finalisers). The version detects change; it is not a
/// security boundary, so speed wins over SHA-256 here: on a 5,000-service
/// estate SHA-256 of the canonical bytes cost as much as the advice itself.
fn hash128(bytes: &[u8]) -> (u64, u64) {
    const K1: u64 = 0x9E37_79B9_7F4A_7C15;
    const K2: u64 = 0xC2B2_AE3D_27D4_EB4F;
    let mut a: u64 = 0x243F_6A88_85A3_08D3 ^ bytes.len() as u64;
    let mut b: u64 = 0x1319_8A2E_0370_7344;
    let mut chunks = bytes.chunks_exact(8);
    for c in &mut chunks {
        let w = u64::from_le_bytes(c.try_into().expect("8 bytes"));
        a = (a ^ w).wrapping_mul(K1).rotate_left(31);
        b = (b ^ w.rotate_left(23)).wrapping_mul(K2).rotate_left(29);
    }
    let mut tail = [0u8; 8];
    tail[..chunks.remainder().len()].copy_from_slice(chunks.remainder());
    let w = u64::from_le_bytes(tail);
    a = (a ^ w).wrapping_mul(K1);
    b = (b ^ w).wrapping_mul(K2);
    (mix(a ^ b.rotate_left(32)), mix(b ^ a.rotate_left(16)))
}

fn mix(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// An unambiguous byte encoding of values, hashed in one go at the end
/// (one `update` per field costs more than the hashing itself).
struct Canon(Vec<u8>);

impl Canon {
    fn u8(&mut self, v: u8) {
        self.0.push(v);
    }
    fn len(&mut self, n: usize) {
        self.0.extend_from_slice(&(n as u64).to_le_bytes());
    }
    fn f64(&mut self, v: f64) {
        self.0.extend_from_slice(&v.to_bits().to_le_bytes());
    }
    fn str(&mut self, s: &str) {
        self.len(s.len());
        self.0.extend_from_slice(s.as_bytes());
    }
    fn opt_str(&mut self, s: Option<&str>) {
        match s {
            Some(s) => {
                self.u8(1);
                self.str(s);
            }
            None => self.u8(0),
        }
    }
    fn opt_i64(&mut self, v: Option<i64>) {
        match v {
            Some(v) => {
                self.u8(1);
                self.0.extend_from_slice(&v.to_le_bytes());
            }
            None => self.u8(0),
        }
    }
    fn opt_f64(&mut self, v: Option<f64>) {
        match v {
            Some(v) => {
                self.u8(1);
                self.f64(v);
            }
            None => self.u8(0),
        }
    }
    /// A service request: a known one as its bits, exactly as before
    /// requests could be unknown (so no existing estate changes version);
    /// an unknown one as a NaN, which no loaded number can be (the loader
    /// accepts only finite numbers), so the encoding stays unambiguous.
    fn request(&mut self, v: Option<f64>) {
        const UNKNOWN: u64 = 0x7FF8_0000_0000_0BE7;
        match v {
            Some(v) => self.f64(v),
            None => self.0.extend_from_slice(&UNKNOWN.to_le_bytes()),
        }
    }
    fn opt_list(&mut self, l: Option<&[String]>) {
        match l {
            Some(l) => {
                self.u8(1);
                self.len(l.len());
                for s in l {
                    self.str(s);
                }
            }
            None => self.u8(0),
        }
    }
    fn fact(&mut self, f: &Fact) {
        self.opt_f64(f.value);
        self.u8(f.class as u8);
        self.str(&f.source);
        self.opt_i64(f.observed_at);
    }
}
