//! The estate model (SPEC §1) and its loader from the estate file format
//! (`docs/estate-format.md`).
//!
//! Loading is all-or-nothing: every error found is collected with its JSON
//! path (and line, for JSON input), and no `Estate` exists unless there were
//! none. Every collection is sorted by id at load, and every computation
//! iterates in that order, so the order of arrays in a file can never change
//! a result (not even the last bit of a floating-point sum).

use std::collections::{BTreeMap, BTreeSet};

use serde::Serialize;
use serde_json::{Map, Value};

use crate::fact::{Class, Fact};

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Health {
    Healthy,
    Watch,
    Draining,
    Down,
}

impl Health {
    pub fn as_str(self) -> &'static str {
        match self {
            Health::Healthy => "healthy",
            Health::Watch => "watch",
            Health::Draining => "draining",
            Health::Down => "down",
        }
    }
    fn parse(s: &str) -> Option<Health> {
        [
            Health::Healthy,
            Health::Watch,
            Health::Draining,
            Health::Down,
        ]
        .into_iter()
        .find(|h| h.as_str() == s)
    }
}

#[derive(Clone, Debug, PartialEq)]
pub struct Site {
    pub id: String,
    pub name: String,
    /// (lat, lon) in degrees.
    pub coords: Option<(f64, f64)>,
    pub jurisdiction: String,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Cluster {
    pub id: String,
    pub name: Option<String>,
    /// Index into `Estate::sites`.
    pub site: usize,
    pub tier: String,
    pub trust_zone: String,
    pub health: Health,
    pub enrolled_at: Option<i64>,
    pub cpu_total: f64,
    pub memory_total_gib: f64,
    pub cpu_free: Fact,
    pub memory_free_gib: Fact,
}

/// An RTT between two sites (`link`) or two clusters (`path`); `a < b`.
#[derive(Clone, Debug, PartialEq)]
pub struct RttFact {
    pub a: usize,
    pub b: usize,
    pub rtt_ms: Fact,
    pub bandwidth_mb_s: Option<f64>,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct Constraints {
    pub local_volumes: bool,
    pub pinned: bool,
    /// Allowed site jurisdictions; `None` = any.
    pub jurisdictions: Option<Vec<String>>,
    /// Required cluster trust zone; `None` = any.
    pub trust_zone: Option<String>,
    /// Allowed cluster tiers; `None` = any.
    pub tiers: Option<Vec<String>>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Service {
    pub id: String,
    pub name: Option<String>,
    pub owner: String,
    /// Index into `Estate::clusters`.
    pub cluster: usize,
    pub cpu: f64,
    pub memory_gib: f64,
    pub data_gb: f64,
    pub constraints: Constraints,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Flow {
    /// Indices into `Estate::services`.
    pub from: usize,
    pub to: usize,
    pub weight: Fact,
    pub mb_s: Fact,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Estate {
    pub name: String,
    pub observed_at: Option<i64>,
    pub sites: Vec<Site>,
    pub clusters: Vec<Cluster>,
    pub links: Vec<RttFact>,
    pub paths: Vec<RttFact>,
    pub services: Vec<Service>,
    pub flows: Vec<Flow>,
}

impl Estate {
    pub fn cluster_index(&self, id: &str) -> Option<usize> {
        self.clusters
            .binary_search_by(|c| c.id.as_str().cmp(id))
            .ok()
    }
    pub fn service_index(&self, id: &str) -> Option<usize> {
        self.services
            .binary_search_by(|s| s.id.as_str().cmp(id))
            .ok()
    }
    pub fn site_index(&self, id: &str) -> Option<usize> {
        self.sites.binary_search_by(|s| s.id.as_str().cmp(id)).ok()
    }
}

/// One thing wrong with an estate file.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct EstateError {
    /// JSON pointer, e.g. `/clusters/3/cpu_free/class`.
    pub path: String,
    /// 1-based line, where the input format lets us know it.
    pub line: Option<usize>,
    pub message: String,
}

impl std::fmt::Display for EstateError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let path = if self.path.is_empty() {
            "/"
        } else {
            &self.path
        };
        match self.line {
            Some(line) => write!(f, "{path} (line {line}): {}", self.message),
            None => write!(f, "{path}: {}", self.message),
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    Json,
    Yaml,
}

impl Format {
    /// JSON if the first non-blank character opens an object, else YAML.
    pub fn sniff(text: &str) -> Format {
        match text.trim_start().chars().next() {
            Some('{') => Format::Json,
            _ => Format::Yaml,
        }
    }
}

/// Parse and validate an estate file. On any error, every error found.
pub fn load(text: &str, format: Format) -> Result<Estate, Vec<EstateError>> {
    let value: Value = match format {
        Format::Json => serde_json::from_str(text).map_err(|e| {
            vec![EstateError {
                path: String::new(),
                line: Some(e.line()),
                message: format!("not valid JSON: {e}"),
            }]
        })?,
        Format::Yaml => serde_yaml::from_str(text).map_err(|e| {
            vec![EstateError {
                path: String::new(),
                line: e.location().map(|l| l.line()),
                message: format!("not valid YAML: {e}"),
            }]
        })?,
    };
    let mut loader = Loader::default();
    let estate = loader.estate(&value);
    if loader.errors.is_empty() {
        Ok(estate.expect("no errors means an estate"))
    } else {
        let mut errors = loader.errors;
        if format == Format::Json {
            for e in &mut errors {
                e.line = crate::locate::line_of(text, &e.path);
            }
        }
        Err(errors)
    }
}

/// Parse an RFC 3339 time into unix seconds.
pub fn parse_time(s: &str) -> Option<i64> {
    chrono::DateTime::parse_from_rfc3339(s)
        .ok()
        .map(|t| t.timestamp())
}

/// Format unix seconds as RFC 3339 UTC.
pub fn format_time(t: i64) -> String {
    chrono::DateTime::from_timestamp(t, 0)
        .map(|d| d.format("%Y-%m-%dT%H:%M:%SZ").to_string())
        .unwrap_or_else(|| t.to_string())
}

#[derive(Default)]
struct Loader {
    errors: Vec<EstateError>,
    file_time: Option<i64>,
}

/// A JSON object being read, with its path and the keys it may have.
struct Obj<'a> {
    map: &'a Map<String, Value>,
    path: String,
}

impl Loader {
    fn err(&mut self, path: &str, message: impl Into<String>) {
        self.errors.push(EstateError {
            path: path.to_string(),
            line: None,
            message: message.into(),
        });
    }

    fn object<'a>(&mut self, v: &'a Value, path: &str, allowed: &[&str]) -> Option<Obj<'a>> {
        let Some(map) = v.as_object() else {
            self.err(path, format!("expected an object, got {}", kind(v)));
            return None;
        };
        for key in map.keys() {
            if !allowed.contains(&key.as_str()) {
                self.err(
                    &format!("{path}/{}", escape(key)),
                    format!(
                        "unknown field `{key}`; expected one of: {}",
                        allowed.join(", ")
                    ),
                );
            }
        }
        Some(Obj {
            map,
            path: path.to_string(),
        })
    }

    fn array<'a>(&mut self, o: &Obj<'a>, key: &str, required: bool) -> Vec<(String, &'a Value)> {
        let path = format!("{}/{key}", o.path);
        match o.map.get(key) {
            None | Some(Value::Null) if !required => Vec::new(),
            None => {
                self.err(&path, "missing; expected an array");
                Vec::new()
            }
            Some(Value::Array(items)) => items
                .iter()
                .enumerate()
                .map(|(i, v)| (format!("{path}/{i}"), v))
                .collect(),
            Some(v) => {
                self.err(&path, format!("expected an array, got {}", kind(v)));
                Vec::new()
            }
        }
    }

    fn string(&mut self, o: &Obj, key: &str) -> Option<String> {
        let path = format!("{}/{key}", o.path);
        match o.map.get(key) {
            Some(Value::String(s)) if !s.trim().is_empty() && s.len() <= 256 => Some(s.clone()),
            Some(Value::String(_)) => {
                self.err(&path, "expected a non-empty string of at most 256 bytes");
                None
            }
            None => {
                self.err(&path, "missing; expected a string");
                None
            }
            Some(v) => {
                self.err(&path, format!("expected a string, got {}", kind(v)));
                None
            }
        }
    }

    fn opt_string(&mut self, o: &Obj, key: &str) -> Option<String> {
        match o.map.get(key) {
            None | Some(Value::Null) => None,
            Some(_) => self.string(o, key),
        }
    }

    fn id(&mut self, o: &Obj, key: &str) -> Option<String> {
        let s = self.string(o, key)?;
        if s.len() > 128 || s.chars().any(|c| c.is_whitespace() || c.is_control()) {
            self.err(
                &format!("{}/{key}", o.path),
                format!("expected an id of at most 128 characters without spaces, got {s:?}"),
            );
            return None;
        }
        Some(s)
    }

    fn number(&mut self, o: &Obj, key: &str, min: f64, exclusive: bool) -> Option<f64> {
        let path = format!("{}/{key}", o.path);
        match o.map.get(key) {
            Some(Value::Number(n)) => {
                let v = n.as_f64().unwrap_or(f64::NAN);
                let ok = v.is_finite() && if exclusive { v > min } else { v >= min };
                if ok && v <= 1e12 {
                    Some(v)
                } else {
                    let rel = if exclusive { ">" } else { "≥" };
                    self.err(&path, format!("expected a number {rel} {min}, got {v}"));
                    None
                }
            }
            None => {
                self.err(&path, "missing; expected a number");
                None
            }
            Some(v) => {
                self.err(&path, format!("expected a number, got {}", kind(v)));
                None
            }
        }
    }

    fn opt_number(&mut self, o: &Obj, key: &str, min: f64) -> Option<Option<f64>> {
        match o.map.get(key) {
            None | Some(Value::Null) => Some(None),
            Some(_) => self.number(o, key, min, false).map(Some),
        }
    }

    fn bool(&mut self, o: &Obj, key: &str) -> bool {
        match o.map.get(key) {
            None | Some(Value::Null) => false,
            Some(Value::Bool(b)) => *b,
            Some(v) => {
                self.err(
                    &format!("{}/{key}", o.path),
                    format!("expected true or false, got {}", kind(v)),
                );
                false
            }
        }
    }

    fn time(&mut self, o: &Obj, key: &str) -> Option<Option<i64>> {
        match o.map.get(key) {
            None | Some(Value::Null) => Some(None),
            Some(Value::String(s)) => match parse_time(s) {
                Some(t) => Some(Some(t)),
                None => {
                    self.err(
                        &format!("{}/{key}", o.path),
                        format!("expected an RFC 3339 time like 2026-11-30T04:00:00Z, got {s:?}"),
                    );
                    None
                }
            },
            Some(v) => {
                self.err(
                    &format!("{}/{key}", o.path),
                    format!("expected an RFC 3339 time string, got {}", kind(v)),
                );
                None
            }
        }
    }

    fn string_list(&mut self, o: &Obj, key: &str) -> Option<Vec<String>> {
        let path = format!("{}/{key}", o.path);
        match o.map.get(key) {
            None | Some(Value::Null) => None,
            Some(Value::Array(items)) => {
                let mut out = BTreeSet::new();
                for (i, v) in items.iter().enumerate() {
                    match v.as_str() {
                        Some(s) if !s.is_empty() => {
                            out.insert(s.to_string());
                        }
                        _ => self.err(
                            &format!("{path}/{i}"),
                            format!("expected a non-empty string, got {}", kind(v)),
                        ),
                    }
                }
                Some(out.into_iter().collect())
            }
            Some(v) => {
                self.err(
                    &path,
                    format!("expected an array of strings, got {}", kind(v)),
                );
                None
            }
        }
    }

    /// A fact: a bare number, `{value, class, source, observed_at}`, or
    /// null/absent for unknown.
    fn fact(&mut self, o: &Obj, key: &str) -> Fact {
        let path = format!("{}/{key}", o.path);
        let file = Fact {
            value: None,
            class: Class::Reported,
            source: "file".into(),
            observed_at: self.file_time,
        };
        match o.map.get(key) {
            None | Some(Value::Null) => Fact::unknown("file"),
            Some(Value::Number(n)) => {
                let v = n.as_f64().unwrap_or(f64::NAN);
                if !(v.is_finite() && (0.0..=1e12).contains(&v)) {
                    self.err(&path, format!("expected a fact value ≥ 0, got {v}"));
                }
                Fact {
                    value: Some(v),
                    ..file
                }
            }
            Some(v @ Value::Object(_)) => {
                let Some(f) = self.object(v, &path, &["value", "class", "source", "observed_at"])
                else {
                    return Fact::unknown("file");
                };
                let value = match f.map.get("value") {
                    None => {
                        self.err(&path, "missing `value`; expected a number or null");
                        None
                    }
                    Some(Value::Null) => None,
                    Some(_) => self.number(&f, "value", 0.0, false),
                };
                let class = match f.map.get("class") {
                    Some(Value::String(s)) => match Class::parse(s) {
                        Some(c) => c,
                        None => {
                            self.err(
                                &format!("{path}/class"),
                                format!(
                                    "unknown class {s:?}; expected measured, reported, inferred or guessed"
                                ),
                            );
                            Class::Guessed
                        }
                    },
                    None => Class::Reported,
                    Some(v) => {
                        self.err(
                            &format!("{path}/class"),
                            format!("expected a class name string, got {}", kind(v)),
                        );
                        Class::Guessed
                    }
                };
                let source = self
                    .opt_string(&f, "source")
                    .unwrap_or_else(|| "file".into());
                let observed_at = self.time(&f, "observed_at").flatten().or(self.file_time);
                if value.is_none() {
                    return Fact {
                        value: None,
                        class: Class::Guessed,
                        source,
                        observed_at,
                    };
                }
                Fact {
                    value,
                    class,
                    source,
                    observed_at,
                }
            }
            Some(v) => {
                self.err(
                    &path,
                    format!(
                        "expected a number, a fact object {{value, class, source, observed_at}} or null, got {}",
                        kind(v)
                    ),
                );
                Fact::unknown("file")
            }
        }
    }

    fn estate(&mut self, v: &Value) -> Option<Estate> {
        let top = self.object(
            v,
            "",
            &[
                "schema",
                "name",
                "observed_at",
                "sites",
                "clusters",
                "links",
                "paths",
                "services",
                "flows",
            ],
        )?;
        match top.map.get("schema") {
            Some(Value::Number(n)) if n.as_u64() == Some(1) => {}
            Some(v) => self.err("/schema", format!("expected schema 1, got {v}")),
            None => self.err("/schema", "missing; expected 1"),
        }
        let name = self.string(&top, "name").unwrap_or_default();
        self.file_time = self.time(&top, "observed_at").flatten();

        // Sites.
        let mut sites = Vec::new();
        let mut site_ids = BTreeMap::new();
        for (path, v) in self.array(&top, "sites", true) {
            let Some(o) = self.object(v, &path, &["id", "name", "lat", "lon", "jurisdiction"])
            else {
                continue;
            };
            let id = self.id(&o, "id");
            let nm = self.opt_string(&o, "name");
            let lat = self.opt_number(&o, "lat", -90.0);
            let lon = self.opt_number(&o, "lon", -180.0);
            let jurisdiction = self.string(&o, "jurisdiction");
            let coords = match (lat, lon) {
                (Some(Some(lat)), Some(Some(lon))) => {
                    if lat > 90.0 {
                        self.err(&format!("{path}/lat"), format!("expected ≤ 90, got {lat}"));
                    }
                    if lon > 180.0 {
                        self.err(&format!("{path}/lon"), format!("expected ≤ 180, got {lon}"));
                    }
                    Some((lat, lon))
                }
                (Some(None), Some(None)) => None,
                (Some(_), Some(_)) => {
                    self.err(&path, "expected both `lat` and `lon`, or neither");
                    None
                }
                _ => None,
            };
            if let (Some(id), Some(jurisdiction)) = (id, jurisdiction) {
                if site_ids.insert(id.clone(), path.clone()).is_some() {
                    self.err(&format!("{path}/id"), format!("duplicate site id {id:?}"));
                    continue;
                }
                sites.push(Site {
                    name: nm.unwrap_or_else(|| id.clone()),
                    id,
                    coords,
                    jurisdiction,
                });
            }
        }
        sites.sort_by(|a, b| a.id.cmp(&b.id));
        let site_idx: BTreeMap<&str, usize> = sites
            .iter()
            .enumerate()
            .map(|(i, s)| (s.id.as_str(), i))
            .collect();

        // Clusters.
        let mut clusters = Vec::new();
        let mut cluster_ids = BTreeSet::new();
        for (path, v) in self.array(&top, "clusters", true) {
            let Some(o) = self.object(
                v,
                &path,
                &[
                    "id",
                    "name",
                    "site",
                    "tier",
                    "trust_zone",
                    "health",
                    "enrolled_at",
                    "cpu_total",
                    "memory_total_gib",
                    "cpu_free",
                    "memory_free_gib",
                ],
            ) else {
                continue;
            };
            let id = self.id(&o, "id");
            let nm = self.opt_string(&o, "name");
            let site = self
                .string(&o, "site")
                .and_then(|s| match site_idx.get(s.as_str()) {
                    Some(&i) => Some(i),
                    None => {
                        self.err(&format!("{path}/site"), format!("unknown site {s:?}"));
                        None
                    }
                });
            let tier = self.string(&o, "tier");
            let trust_zone = self.string(&o, "trust_zone");
            let health =
                self.string(&o, "health")
                    .and_then(|h| match Health::parse(&h) {
                        Some(h) => Some(h),
                        None => {
                            self.err(
                        &format!("{path}/health"),
                        format!("unknown health {h:?}; expected healthy, watch, draining or down"),
                    );
                            None
                        }
                    });
            let enrolled_at = self.time(&o, "enrolled_at");
            let cpu_total = self.number(&o, "cpu_total", 0.0, true);
            let memory_total_gib = self.number(&o, "memory_total_gib", 0.0, true);
            let cpu_free = self.fact(&o, "cpu_free");
            let memory_free_gib = self.fact(&o, "memory_free_gib");
            if let (Some(t), Some(f)) = (cpu_total, cpu_free.value) {
                if f > t * 1.0001 {
                    self.err(
                        &format!("{path}/cpu_free"),
                        format!("free CPU {f} exceeds cpu_total {t}"),
                    );
                }
            }
            if let (Some(t), Some(f)) = (memory_total_gib, memory_free_gib.value) {
                if f > t * 1.0001 {
                    self.err(
                        &format!("{path}/memory_free_gib"),
                        format!("free memory {f} GiB exceeds memory_total_gib {t}"),
                    );
                }
            }
            let (
                Some(id),
                Some(site),
                Some(tier),
                Some(trust_zone),
                Some(health),
                Some(enrolled_at),
                Some(cpu_total),
                Some(memory_total_gib),
            ) = (
                id,
                site,
                tier,
                trust_zone,
                health,
                enrolled_at,
                cpu_total,
                memory_total_gib,
            )
            else {
                continue;
            };
            if !cluster_ids.insert(id.clone()) {
                self.err(
                    &format!("{path}/id"),
                    format!("duplicate cluster id {id:?}"),
                );
                continue;
            }
            clusters.push(Cluster {
                id,
                name: nm,
                site,
                tier,
                trust_zone,
                health,
                enrolled_at,
                cpu_total,
                memory_total_gib,
                cpu_free,
                memory_free_gib,
            });
        }
        clusters.sort_by(|a, b| a.id.cmp(&b.id));
        let cluster_idx: BTreeMap<&str, usize> = clusters
            .iter()
            .enumerate()
            .map(|(i, c)| (c.id.as_str(), i))
            .collect();

        let links = self.rtt_facts(&top, "links", "site", &site_idx, true);
        let paths = self.rtt_facts(&top, "paths", "cluster", &cluster_idx, false);

        // Services.
        let mut services = Vec::new();
        let mut service_ids = BTreeSet::new();
        for (path, v) in self.array(&top, "services", true) {
            let Some(o) = self.object(
                v,
                &path,
                &[
                    "id",
                    "name",
                    "owner",
                    "cluster",
                    "cpu",
                    "memory_gib",
                    "data_gb",
                    "constraints",
                ],
            ) else {
                continue;
            };
            let id = self.id(&o, "id");
            let nm = self.opt_string(&o, "name");
            let owner = self.string(&o, "owner");
            let cluster =
                self.string(&o, "cluster")
                    .and_then(|c| match cluster_idx.get(c.as_str()) {
                        Some(&i) => Some(i),
                        None => {
                            self.err(&format!("{path}/cluster"), format!("unknown cluster {c:?}"));
                            None
                        }
                    });
            let cpu = self.number(&o, "cpu", 0.0, false);
            let memory_gib = self.number(&o, "memory_gib", 0.0, false);
            let data_gb = self
                .opt_number(&o, "data_gb", 0.0)
                .map(|d| d.unwrap_or(0.0));
            let constraints = match o.map.get("constraints") {
                None | Some(Value::Null) => Some(Constraints::default()),
                Some(cv) => {
                    let cpath = format!("{path}/constraints");
                    self.object(
                        cv,
                        &cpath,
                        &[
                            "local_volumes",
                            "pinned",
                            "jurisdictions",
                            "trust_zone",
                            "tiers",
                        ],
                    )
                    .map(|c| Constraints {
                        local_volumes: self.bool(&c, "local_volumes"),
                        pinned: self.bool(&c, "pinned"),
                        jurisdictions: self.string_list(&c, "jurisdictions"),
                        trust_zone: self.opt_string(&c, "trust_zone"),
                        tiers: self.string_list(&c, "tiers"),
                    })
                }
            };
            let (
                Some(id),
                Some(owner),
                Some(cluster),
                Some(cpu),
                Some(memory_gib),
                Some(data_gb),
                Some(constraints),
            ) = (id, owner, cluster, cpu, memory_gib, data_gb, constraints)
            else {
                continue;
            };
            if !service_ids.insert(id.clone()) {
                self.err(
                    &format!("{path}/id"),
                    format!("duplicate service id {id:?}"),
                );
                continue;
            }
            services.push(Service {
                id,
                name: nm,
                owner,
                cluster,
                cpu,
                memory_gib,
                data_gb,
                constraints,
            });
        }
        services.sort_by(|a, b| a.id.cmp(&b.id));
        let service_idx: BTreeMap<&str, usize> = services
            .iter()
            .enumerate()
            .map(|(i, s)| (s.id.as_str(), i))
            .collect();

        // Flows.
        let mut flows = Vec::new();
        let mut flow_keys = BTreeMap::new();
        for (path, v) in self.array(&top, "flows", false) {
            let Some(o) = self.object(v, &path, &["from", "to", "weight", "mb_s"]) else {
                continue;
            };
            let end = |this: &mut Self, key: &str| {
                this.string(&o, key)
                    .and_then(|s| match service_idx.get(s.as_str()) {
                        Some(&i) => Some(i),
                        None => {
                            this.err(&format!("{path}/{key}"), format!("unknown service {s:?}"));
                            None
                        }
                    })
            };
            let from = end(self, "from");
            let to = end(self, "to");
            let weight = self.fact(&o, "weight");
            let mb_s = self.fact(&o, "mb_s");
            let (Some(from), Some(to)) = (from, to) else {
                continue;
            };
            if from == to {
                self.err(
                    &format!("{path}/to"),
                    format!(
                        "a flow from service {:?} to itself; expected two different services",
                        services[from].id
                    ),
                );
                continue;
            }
            if let Some(first) = flow_keys.insert((from, to), path.clone()) {
                self.err(
                    &path,
                    format!(
                        "duplicate flow {}→{} (first at {first}); merge them into one",
                        services[from].id, services[to].id
                    ),
                );
                continue;
            }
            flows.push(Flow {
                from,
                to,
                weight,
                mb_s,
            });
        }
        flows.sort_by_key(|f| (f.from, f.to));

        if sites.is_empty() && self.errors.is_empty() {
            self.err("/sites", "expected at least one site");
        }
        if clusters.is_empty() && self.errors.is_empty() {
            self.err("/clusters", "expected at least one cluster");
        }
        Some(Estate {
            name,
            observed_at: self.file_time,
            sites,
            clusters,
            links,
            paths,
            services,
            flows,
        })
    }

    fn rtt_facts(
        &mut self,
        top: &Obj,
        key: &str,
        what: &str,
        index: &BTreeMap<&str, usize>,
        allow_bandwidth: bool,
    ) -> Vec<RttFact> {
        let allowed: &[&str] = if allow_bandwidth {
            &["a", "b", "rtt_ms", "bandwidth_mb_s"]
        } else {
            &["a", "b", "rtt_ms"]
        };
        let mut out = Vec::new();
        let mut seen = BTreeMap::new();
        for (path, v) in self.array(top, key, false) {
            let Some(o) = self.object(v, &path, allowed) else {
                continue;
            };
            let end = |this: &mut Self, k: &str| {
                this.string(&o, k)
                    .and_then(|s| match index.get(s.as_str()) {
                        Some(&i) => Some(i),
                        None => {
                            this.err(&format!("{path}/{k}"), format!("unknown {what} {s:?}"));
                            None
                        }
                    })
            };
            let a = end(self, "a");
            let b = end(self, "b");
            let rtt_ms = self.fact(&o, "rtt_ms");
            let bandwidth = if allow_bandwidth {
                self.opt_number(&o, "bandwidth_mb_s", 0.0).flatten()
            } else {
                None
            };
            let (Some(a), Some(b)) = (a, b) else {
                continue;
            };
            if a == b {
                self.err(
                    &format!("{path}/b"),
                    format!("expected two different {what}s, got the same one twice"),
                );
                continue;
            }
            let (a, b) = (a.min(b), a.max(b));
            if let Some(first) = seen.insert((a, b), path.clone()) {
                self.err(
                    &path,
                    format!("duplicate {key} entry for the same pair (first at {first})"),
                );
                continue;
            }
            out.push(RttFact {
                a,
                b,
                rtt_ms,
                bandwidth_mb_s: bandwidth,
            });
        }
        out.sort_by_key(|l| (l.a, l.b));
        out
    }
}

fn kind(v: &Value) -> String {
    match v {
        Value::Null => "null".into(),
        Value::Bool(b) => format!("{b}"),
        Value::Number(n) => format!("the number {n}"),
        Value::String(s) if s.len() <= 40 => format!("the string {s:?}"),
        Value::String(_) => "a string".into(),
        Value::Array(_) => "an array".into(),
        Value::Object(_) => "an object".into(),
    }
}

fn escape(key: &str) -> String {
    key.replace('~', "~0").replace('/', "~1")
}
