//! Synthetic estates of realistic shape, from a seed: for property tests,
//! the native/WebAssembly parity test and the benchmarks.
//!
//! Shape: sites in real cities (a few without coordinates), clusters of
//! mixed tier, health and trust zone; applications whose call graphs are
//! trees with heavy-tailed fan-out, plus shared hot data stores that many
//! services call (popularity follows a power law). Most of an application
//! sits in its home cluster; a share is scattered, so there is something to
//! advise. Every fact class, stale facts and unknown values occur.
//!
//! The generator is pure and uses its own PRNG (SplitMix64), so a seed
//! gives the same estate on every platform.

use serde_json::{json, Value};
use sha2::{Digest, Sha256};

use crate::estate::{format_time, load, Estate, Format};

/// Evaluation time the generated facts are aged against.
pub const NOW: i64 = 1_796_011_500; // 2026-11-30T04:05:00Z

/// SplitMix64: tiny, fast, and the same on every target.
#[derive(Clone, Debug)]
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed ^ 0x9E37_79B9_7F4A_7C15)
    }
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    /// Uniform in [0, 1).
    pub fn unit(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }
    pub fn below(&mut self, n: usize) -> usize {
        (self.next_u64() % n.max(1) as u64) as usize
    }
    pub fn range(&mut self, lo: f64, hi: f64) -> f64 {
        lo + (hi - lo) * self.unit()
    }
    pub fn chance(&mut self, p: f64) -> bool {
        self.unit() < p
    }
    /// Pareto-distributed with minimum `min` and shape `alpha`: heavy tail.
    pub fn pareto(&mut self, min: f64, alpha: f64) -> f64 {
        min / libm::pow(1.0 - self.unit(), 1.0 / alpha)
    }
    /// Round to 3 decimals so generated files stay readable.
    fn r3(x: f64) -> f64 {
        (x * 1000.0).round() / 1000.0
    }
}

/// How big an estate to generate.
#[derive(Clone, Debug)]
pub struct Shape {
    pub seed: u64,
    pub services: usize,
    pub clusters: usize,
    pub sites: usize,
    /// Mean number of extra calls per service beyond the call tree.
    pub extra_calls: f64,
}

impl Shape {
    /// A small estate (8–30 services, 3–6 clusters) for property tests.
    pub fn small(seed: u64) -> Shape {
        let mut r = Rng::new(seed.wrapping_mul(7919));
        let clusters = 3 + r.below(4);
        Shape {
            seed,
            services: 8 + r.below(23),
            clusters,
            sites: 2 + r.below(clusters.min(4) - 1),
            extra_calls: 2.0,
        }
    }
    /// A tiny estate (6–12 services, 3–5 clusters): small enough that the
    /// exact optimum can be found by exhaustive search (the quality report,
    /// `docs/quality.md`). Its own seed stream, so other shapes are
    /// unaffected.
    pub fn tiny(seed: u64) -> Shape {
        let mut r = Rng::new(seed.wrapping_mul(104_729));
        let clusters = 3 + r.below(3);
        Shape {
            seed,
            services: 6 + r.below(7),
            clusters,
            sites: 2 + r.below(clusters.min(4) - 1),
            extra_calls: 2.0,
        }
    }
    /// A benchmark estate: ~8 flows per service.
    pub fn sized(seed: u64, services: usize, clusters: usize) -> Shape {
        Shape {
            seed,
            services,
            clusters,
            sites: (clusters / 3).clamp(2, CITIES.len()),
            extra_calls: 7.0,
        }
    }
}

/// Real cities: (id, name, lat, lon, jurisdiction).
const CITIES: &[(&str, &str, f64, f64, &str)] = &[
    ("fra", "Frankfurt", 50.11, 8.68, "eu"),
    ("par", "Paris", 48.86, 2.35, "eu"),
    ("lon", "London", 51.51, -0.13, "uk"),
    ("dub", "Dublin", 53.35, -6.26, "eu"),
    ("ams", "Amsterdam", 52.37, 4.90, "eu"),
    ("sto", "Stockholm", 59.33, 18.07, "eu"),
    ("iad", "Ashburn", 39.04, -77.49, "us"),
    ("cmh", "Columbus", 39.96, -83.00, "us"),
    ("pdx", "Portland", 45.52, -122.68, "us"),
    ("sjc", "San Jose", 37.34, -121.89, "us"),
    ("gru", "São Paulo", -23.55, -46.63, "br"),
    ("sin", "Singapore", 1.35, 103.82, "sg"),
    ("nrt", "Tokyo", 35.68, 139.69, "jp"),
    ("syd", "Sydney", -33.87, 151.21, "au"),
    ("bom", "Mumbai", 19.08, 72.88, "in"),
    ("yul", "Montreal", 45.50, -73.57, "ca"),
    ("waw", "Warsaw", 52.23, 21.01, "eu"),
    ("mad", "Madrid", 40.42, -3.70, "eu"),
    ("zrh", "Zurich", 47.37, 8.54, "ch"),
    ("hkg", "Hong Kong", 22.32, 114.17, "hk"),
];

fn fact(r: &mut Rng, value: f64) -> Value {
    if r.chance(0.03) {
        return Value::Null;
    }
    let class = match r.unit() {
        x if x < 0.5 => "measured",
        x if x < 0.8 => "reported",
        x if x < 0.92 => "inferred",
        _ => "guessed",
    };
    // Ages from seconds to weeks, so staleness degradation happens.
    let age = match r.below(4) {
        0 => r.below(600) as i64,
        1 => r.below(7200) as i64,
        2 => r.below(3 * 86_400) as i64,
        _ => r.below(20 * 86_400) as i64,
    };
    json!({
        "value": Rng::r3(value),
        "class": class,
        "source": if class == "measured" { "agent" } else { "file" },
        "observed_at": format_time(NOW - age),
    })
}

/// The estate file (schema 1) for a shape.
pub fn file(shape: &Shape) -> Value {
    let mut r = Rng::new(shape.seed);
    let nsites = shape.sites.clamp(1, CITIES.len());
    // Pick distinct cities.
    let mut order: Vec<usize> = (0..CITIES.len()).collect();
    for i in (1..order.len()).rev() {
        let j = r.below(i + 1);
        order.swap(i, j);
    }
    let sites: Vec<Value> = order[..nsites]
        .iter()
        .enumerate()
        .map(|(k, &i)| {
            let (id, name, lat, lon, j) = CITIES[i];
            // One site in ten has no coordinates (only in bigger estates,
            // keep at least the first two located).
            if k >= 2 && r.chance(0.1) {
                json!({"id": id, "name": name, "jurisdiction": j})
            } else {
                json!({"id": id, "name": name, "lat": lat, "lon": lon, "jurisdiction": j})
            }
        })
        .collect();
    let site_ids: Vec<&str> = order[..nsites].iter().map(|&i| CITIES[i].0).collect();

    let mut clusters = Vec::new();
    let mut cluster_site = Vec::new();
    for c in 0..shape.clusters {
        let site = if c < nsites { c } else { r.below(nsites) };
        cluster_site.push(site);
        clusters.push(cluster(&mut r, c, site_ids[site]));
    }
    let cluster_id = |c: usize| format!("c{:03}-{}", c, site_ids[cluster_site[c]]);

    let mut links = Vec::new();
    for a in 0..nsites {
        for b in a + 1..nsites {
            if r.chance(0.6) {
                let (ca, cb) = (CITIES[order[a]], CITIES[order[b]]);
                let km = crate::rtt::great_circle_km((ca.2, ca.3), (cb.2, cb.3));
                let rtt = crate::rtt::great_circle_rtt_ms(km) * r.range(0.8, 1.3);
                links
                    .push(json!({"a": site_ids[a], "b": site_ids[b], "rtt_ms": fact(&mut r, rtt)}));
            }
        }
    }
    let mut paths = Vec::new();
    let mut seen_paths = std::collections::BTreeSet::new();
    for _ in 0..shape.clusters / 3 {
        let (a, b) = (r.below(shape.clusters), r.below(shape.clusters));
        if a == b || !seen_paths.insert((a.min(b), a.max(b))) {
            continue;
        }
        let same = cluster_site[a] == cluster_site[b];
        let rtt = if same {
            r.range(0.4, 2.0)
        } else {
            r.range(5.0, 150.0)
        };
        paths.push(json!({"a": cluster_id(a), "b": cluster_id(b), "rtt_ms": fact(&mut r, rtt)}));
    }

    // Applications of 10–60 services, each with a home cluster.
    let mut services = Vec::new();
    let mut flows = Vec::new();
    let mut flow_keys = std::collections::BTreeSet::new();
    let mut app = 0;
    let mut made = 0;
    // Hot data stores shared across the estate: ~2 % of services.
    let mut stores: Vec<usize> = Vec::new();
    while made < shape.services {
        let size = (10 + r.below(51)).min(shape.services - made);
        let home = r.below(shape.clusters);
        let first = made;
        for k in 0..size {
            let idx = made + k;
            let scattered = r.chance(0.25);
            let cluster = if scattered {
                r.below(shape.clusters)
            } else {
                home
            };
            let is_store = r.chance(0.04) || (stores.is_empty() && k == size - 1);
            let jurisdiction = CITIES[order[cluster_site[cluster]]].4;
            let constraints = constraints(&mut r, is_store, jurisdiction);
            let cpu = Rng::r3(r.pareto(0.1, 1.8).min(16.0));
            let mut svc = json!({
                "id": format!("a{app:03}-s{k:03}"),
                "owner": format!("team-{}", app % 17),
                "cluster": cluster_id(cluster),
                "cpu": cpu,
                "memory_gib": Rng::r3(cpu * r.range(1.0, 4.0)),
                "data_gb": if is_store { Rng::r3(r.range(5.0, 500.0)) } else { 0.0 },
            });
            if !constraints.is_empty() {
                svc["constraints"] = Value::Object(constraints);
            }
            services.push(svc);
            if is_store {
                stores.push(idx);
            }
        }
        call_tree(&mut r, &mut flows, &mut flow_keys, first, size);
        made += size;
        app += 1;
    }
    // Extra calls: to hot stores (power-law popularity) and within the app.
    for s in 0..made {
        let calls = r.pareto(1.0, 1.5).min(60.0) * shape.extra_calls / 3.0;
        for _ in 0..calls as usize {
            let to = if !stores.is_empty() && r.chance(0.6) {
                // Power law over stores: low index much more popular.
                let u = r.unit();
                stores[((u * u * u) * stores.len() as f64) as usize]
            } else {
                r.below(made)
            };
            if to != s {
                add_flow(&mut r, &mut flows, &mut flow_keys, s, to);
            }
        }
    }
    let flows: Vec<Value> = flows
        .into_iter()
        .map(|(a, b, w, m)| {
            json!({"from": services[a]["id"], "to": services[b]["id"], "weight": w, "mb_s": m})
        })
        .collect();
    json!({
        "schema": 1,
        "name": format!("generated-{}", shape.seed),
        "observed_at": format_time(NOW - 300),
        "sites": sites,
        "clusters": clusters,
        "links": links,
        "paths": paths,
        "services": services,
        "flows": flows,
    })
}

/// One generated cluster `c` on site `site_id`: tier, trust zone, health,
/// size, free capacity (some nearly full) and enrolment.
fn cluster(r: &mut Rng, c: usize, site_id: &str) -> Value {
    let tier = match r.unit() {
        x if x < 0.75 => "prod",
        x if x < 0.9 => "staging",
        _ => "edge",
    };
    let zone = if r.chance(0.12) { "pci" } else { "general" };
    let health = match r.unit() {
        x if x < 0.88 => "healthy",
        x if x < 0.94 => "watch",
        x if x < 0.98 => "draining",
        _ => "down",
    };
    let cpu_total = (32 * (1 + r.below(16))) as f64;
    let mem_total = cpu_total * 4.0;
    // Free share: mostly 10–60 %, some nearly full.
    let free_share = if r.chance(0.15) {
        r.range(0.01, 0.12)
    } else {
        r.range(0.1, 0.6)
    };
    let mem_free = mem_total * r.range(0.1, 0.6);
    let enrolled = NOW - (r.below(400 * 86_400) as i64 + 600);
    json!({
        "id": format!("c{:03}-{}", c, site_id),
        "site": site_id,
        "tier": tier,
        "trust_zone": zone,
        "health": health,
        "enrolled_at": format_time(enrolled),
        "cpu_total": cpu_total,
        "memory_total_gib": mem_total,
        "cpu_free": fact(r, cpu_total * free_share),
        "memory_free_gib": fact(r, mem_free),
    })
}

/// A generated service's constraints: local volumes (stores only), pinned,
/// its cluster's jurisdiction, a trust zone, a tier — each now and then.
fn constraints(r: &mut Rng, is_store: bool, jurisdiction: &str) -> serde_json::Map<String, Value> {
    let mut constraints = serde_json::Map::new();
    if is_store && r.chance(0.3) {
        constraints.insert("local_volumes".into(), json!(true));
    }
    if r.chance(0.03) {
        constraints.insert("pinned".into(), json!(true));
    }
    if r.chance(0.1) {
        constraints.insert("jurisdictions".into(), json!([jurisdiction]));
    }
    if r.chance(0.05) {
        constraints.insert("trust_zone".into(), json!("pci"));
    }
    if r.chance(0.1) {
        constraints.insert("tiers".into(), json!(["prod"]));
    }
    constraints
}

/// One application's call tree, with heavy-tailed fan-out: each service's
/// parent is chosen preferentially among earlier services with many
/// children. Services `first..first + size`.
fn call_tree(
    r: &mut Rng,
    flows: &mut Vec<FlowRow>,
    keys: &mut std::collections::BTreeSet<(usize, usize)>,
    first: usize,
    size: usize,
) {
    let mut children = vec![0usize; size];
    for k in 1..size {
        let parent = if r.chance(0.5) {
            // Preferential attachment to a busy parent.
            let mut best = r.below(k);
            for _ in 0..2 {
                let c = r.below(k);
                if children[c] > children[best] {
                    best = c;
                }
            }
            best
        } else {
            r.below(k)
        };
        children[parent] += 1;
        add_flow(r, flows, keys, first + parent, first + k);
    }
}

type FlowRow = (usize, usize, Value, Value);

fn add_flow(
    r: &mut Rng,
    flows: &mut Vec<FlowRow>,
    keys: &mut std::collections::BTreeSet<(usize, usize)>,
    from: usize,
    to: usize,
) {
    if !keys.insert((from, to)) {
        return;
    }
    let weight = r.pareto(0.05, 1.2).min(40.0);
    let mb = r.pareto(0.01, 1.1).min(80.0);
    let w = fact(r, weight);
    let m = fact(r, mb);
    flows.push((from, to, w, m));
}

/// The generated estate, loaded through the same loader as a user's file.
pub fn estate(shape: &Shape) -> Estate {
    let text = serde_json::to_string(&file(shape)).expect("serialises");
    load(&text, Format::Json).expect("generated estates are valid")
}

/// Hex SHA-256 of some bytes (for comparing outputs compactly).
pub fn digest(bytes: &[u8]) -> String {
    Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

// ---------------------------------------------------------------------------
// A second generator: topologies chosen on purpose.

/// The flow topology of [`patterned`], each a case the call-tree generator
/// above rarely produces.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Pattern {
    /// Groups of 4–6 services in which every service calls every other:
    /// gains come from moving a whole group together.
    Mesh,
    /// Chains of 3–6 services, each calling the next: moves pay off along
    /// a path, so a single move often helps one flow and hurts the other.
    Chains,
    /// A tenth of the services are hubs; every other one calls one or two
    /// hubs heavily: a hub's placement decides many flows at once.
    HubSpoke,
    /// Meshes on clusters with 2–8 % free: room must be made before a
    /// service can move in.
    Tight,
}

impl Pattern {
    pub const ALL: [Pattern; 4] = [
        Pattern::Mesh,
        Pattern::Chains,
        Pattern::HubSpoke,
        Pattern::Tight,
    ];
    pub fn as_str(self) -> &'static str {
        match self {
            Pattern::Mesh => "mesh",
            Pattern::Chains => "chains",
            Pattern::HubSpoke => "hub-spoke",
            Pattern::Tight => "tight",
        }
    }
}

/// An estate file of `services` services on `clusters` clusters over
/// three sites (two for fewer than three clusters), with the topology of
/// `pattern`. Unlike [`file`], every fact is measured and fresh and there
/// are no constraints, unknown values or unhealthy clusters: what varies
/// is the shape of the flows and the room, so a decider's score there
/// says how it copes with that shape. Services start on uniformly random
/// clusters, so there is much to gain. Pure, from `seed`.
pub fn patterned(pattern: Pattern, seed: u64, services: usize, clusters: usize) -> Value {
    let mut r = Rng::new(seed ^ 0x7061_7474_6572_6E00 ^ pattern as u64);
    let clusters = clusters.max(2);
    let nsites = clusters.clamp(2, 3);
    let mut order: Vec<usize> = (0..CITIES.len()).collect();
    for i in (1..order.len()).rev() {
        let j = r.below(i + 1);
        order.swap(i, j);
    }
    let city = |k: usize| CITIES[order[k]];
    let fresh = |value: f64| {
        json!({"value": Rng::r3(value), "class": "measured", "source": "agent",
               "observed_at": format_time(NOW - 60)})
    };
    let sites: Vec<Value> = (0..nsites)
        .map(|k| {
            let (id, name, lat, lon, _) = city(k);
            // One jurisdiction for all, so no constraint is implied.
            json!({"id": id, "name": name, "lat": lat, "lon": lon, "jurisdiction": "eu"})
        })
        .collect();
    let mut links = Vec::new();
    for a in 0..nsites {
        for b in a + 1..nsites {
            let (ca, cb) = (city(a), city(b));
            let km = crate::rtt::great_circle_km((ca.2, ca.3), (cb.2, cb.3));
            // Measured round trips run 10–30 % above the great-circle
            // figure (routing and queueing).
            let rtt = crate::rtt::great_circle_rtt_ms(km) * r.range(1.1, 1.3);
            links.push(json!({"a": ca.0, "b": cb.0, "rtt_ms": fresh(rtt.max(1.0))}));
        }
    }
    let cluster_id = |c: usize| format!("k{:02}-{}", c, city(c % nsites).0);
    let cluster_values: Vec<Value> = (0..clusters)
        .map(|c| {
            let cpu_total = (64 * (1 + r.below(4))) as f64;
            // Tight: 2–8 % free, a few services' worth; otherwise 30–60 %.
            let share = if pattern == Pattern::Tight {
                r.range(0.02, 0.08)
            } else {
                r.range(0.3, 0.6)
            };
            json!({
                "id": cluster_id(c),
                "site": city(c % nsites).0,
                "tier": "prod",
                "trust_zone": "general",
                "health": "healthy",
                "enrolled_at": format_time(NOW - 200 * 86_400),
                "cpu_total": cpu_total,
                "memory_total_gib": cpu_total * 4.0,
                "cpu_free": fresh(cpu_total * share),
                "memory_free_gib": fresh(cpu_total * 4.0 * share),
            })
        })
        .collect();
    let mut svc = Vec::new();
    for s in 0..services {
        // Requests of 0.25–4 cores, heavy-tailed; a tenth are data stores.
        let cpu = Rng::r3(r.pareto(0.25, 2.0).min(4.0));
        let store = r.chance(0.1);
        svc.push(json!({
            "id": format!("{}-{s:03}", pattern.as_str()),
            "owner": "bench",
            "cluster": cluster_id(r.below(clusters)),
            "cpu": cpu,
            "memory_gib": Rng::r3(cpu * 2.0),
            "data_gb": if store { Rng::r3(r.range(5.0, 100.0)) } else { 0.0 },
        }));
    }
    let mut edges: std::collections::BTreeSet<(usize, usize)> = Default::default();
    let group_edges = |edges: &mut std::collections::BTreeSet<(usize, usize)>,
                       r: &mut Rng,
                       lo: usize,
                       hi: usize,
                       mesh: bool| {
        let mut start = 0;
        while start < services {
            let size = (lo + r.below(hi - lo + 1)).min(services - start);
            for a in start..start + size {
                if mesh {
                    for b in start..start + size {
                        if a != b {
                            edges.insert((a, b));
                        }
                    }
                } else if a + 1 < start + size {
                    edges.insert((a, a + 1));
                }
            }
            start += size;
        }
    };
    match pattern {
        Pattern::Mesh | Pattern::Tight => group_edges(&mut edges, &mut r, 4, 6, true),
        Pattern::Chains => group_edges(&mut edges, &mut r, 3, 6, false),
        Pattern::HubSpoke => {
            let hubs = (services / 10).max(1);
            for s in hubs..services {
                edges.insert((s, r.below(hubs)));
                if r.chance(0.5) {
                    edges.insert((s, r.below(hubs)));
                }
            }
            for a in 0..hubs {
                for b in 0..hubs {
                    if a != b && r.chance(0.3) {
                        edges.insert((a, b));
                    }
                }
            }
        }
    }
    let flows: Vec<Value> = edges
        .iter()
        .map(|&(a, b)| {
            let weight = r.pareto(0.5, 1.5).min(40.0);
            let mb = r.pareto(0.1, 1.3).min(50.0);
            json!({"from": svc[a]["id"], "to": svc[b]["id"],
                   "weight": fresh(weight), "mb_s": fresh(mb)})
        })
        .collect();
    json!({
        "schema": 1,
        "name": format!("{}-{seed}", pattern.as_str()),
        "observed_at": format_time(NOW - 60),
        "sites": sites,
        "clusters": cluster_values,
        "links": links,
        "paths": [],
        "services": svc,
        "flows": flows,
    })
}

/// [`patterned`], loaded.
pub fn patterned_estate(pattern: Pattern, seed: u64, services: usize, clusters: usize) -> Estate {
    let text =
        serde_json::to_string(&patterned(pattern, seed, services, clusters)).expect("serialises");
    load(&text, Format::Json).expect("patterned estates are valid")
}
