//! Loading an estate file: text → raw shapes → validated [`Estate`].
//!
//! Two stages, so that each rule is written once:
//!
//! 1. **Shape**: the text becomes [`RawEstate`] — right JSON types, no
//!    unknown fields, required fields present. The fast path deserialises
//!    JSON straight into the raw types; only when that fails (or for YAML)
//!    does the slower walker over a `serde_json::Value` run, which collects
//!    *every* shape error with its path instead of stopping at the first.
//! 2. **Meaning**: [`validate`] turns the raw shapes into the model —
//!    ids, references, duplicates, ranges, classes, times — collecting every
//!    error with its JSON pointer.
//!
//! Errors come in those two rounds: a file with shape errors reports all of
//! them (and no meaning errors, which would mostly be echoes of the shape
//! errors). Loading is all-or-nothing; for JSON each error gets its line.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;

use serde::de::{Deserializer, MapAccess, Visitor};
use serde::Deserialize;
use serde_json::{Map, Value};

use crate::estate::{
    parse_time, Cluster, Constraints, Estate, EstateError, Flow, Format, Health, RttFact, Service,
    Site, Told, Traffic, TrafficDefault, Workload, NOT_STATED,
};
use crate::fact::{Class, Fact};
use crate::json_shape::describe;

// ---------------------------------------------------------------------------
// Raw shapes: the file as written, before any meaning is checked.

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawEstate {
    schema: f64,
    name: String,
    #[serde(default)]
    observed_at: Option<String>,
    #[serde(default)]
    traffic: Option<String>,
    sites: Vec<RawSite>,
    clusters: Vec<RawCluster>,
    #[serde(default)]
    links: Option<Vec<RawLink>>,
    #[serde(default)]
    paths: Option<Vec<RawPath>>,
    services: Vec<RawService>,
    #[serde(default)]
    flows: Option<Vec<RawFlow>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawSite {
    id: String,
    #[serde(default)]
    name: Option<String>,
    #[serde(default)]
    lat: Option<f64>,
    #[serde(default)]
    lon: Option<f64>,
    jurisdiction: String,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawCluster {
    id: String,
    #[serde(default)]
    name: Option<String>,
    site: String,
    tier: String,
    trust_zone: String,
    health: String,
    #[serde(default)]
    enrolled_at: Option<String>,
    cpu_total: f64,
    memory_total_gib: f64,
    #[serde(default)]
    cpu_free: RawFact,
    #[serde(default)]
    memory_free_gib: RawFact,
    #[serde(default)]
    karmada_cluster: Option<String>,
    #[serde(default)]
    ocm_cluster: Option<String>,
    #[serde(default)]
    mesh_cluster: Option<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawLink {
    a: String,
    b: String,
    #[serde(default)]
    rtt_ms: RawFact,
    #[serde(default)]
    bandwidth_mb_s: Option<f64>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawPath {
    a: String,
    b: String,
    #[serde(default)]
    rtt_ms: RawFact,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawService {
    id: String,
    #[serde(default)]
    name: Option<String>,
    owner: String,
    cluster: String,
    /// Required, but may be `null` (unknown).
    #[serde(deserialize_with = "nullable_number")]
    cpu: Option<f64>,
    #[serde(deserialize_with = "nullable_number")]
    memory_gib: Option<f64>,
    #[serde(default)]
    data_gb: RawTold<f64>,
    #[serde(default)]
    constraints: Option<RawConstraints>,
    #[serde(default)]
    source: Option<String>,
    #[serde(default)]
    workload: Option<RawWorkload>,
    #[serde(default)]
    traffic: RawTraffic,
}

/// A service's `traffic` as written: absent, `"declared"`, or a fact
/// (`null`: never observed; a number or fact object: the window in
/// seconds over which it was observed).
#[derive(Debug, Default)]
enum RawTraffic {
    #[default]
    Absent,
    Declared,
    Fact(RawFact),
}

impl<'de> Deserialize<'de> for RawTraffic {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = RawTraffic;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("\"declared\", a number, a fact object or null")
            }
            fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<RawTraffic, E> {
                match v {
                    "declared" => Ok(RawTraffic::Declared),
                    // The walker reports it with its path.
                    _ => Err(E::invalid_value(serde::de::Unexpected::Str(v), &self)),
                }
            }
            fn visit_unit<E>(self) -> Result<RawTraffic, E> {
                Ok(RawTraffic::Fact(RawFact::Unknown))
            }
            fn visit_none<E>(self) -> Result<RawTraffic, E> {
                Ok(RawTraffic::Fact(RawFact::Unknown))
            }
            fn visit_f64<E>(self, v: f64) -> Result<RawTraffic, E> {
                Ok(RawTraffic::Fact(RawFact::Bare(v)))
            }
            fn visit_u64<E>(self, v: u64) -> Result<RawTraffic, E> {
                Ok(RawTraffic::Fact(RawFact::Bare(v as f64)))
            }
            fn visit_i64<E>(self, v: i64) -> Result<RawTraffic, E> {
                Ok(RawTraffic::Fact(RawFact::Bare(v as f64)))
            }
            fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<RawTraffic, A::Error> {
                RawFact::deserialize(serde::de::value::MapAccessDeserializer::new(map))
                    .map(RawTraffic::Fact)
            }
        }
        d.deserialize_any(V)
    }
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawWorkload {
    #[serde(default)]
    api_version: Option<String>,
    kind: String,
    namespace: String,
    name: String,
}

/// A number or `null`. With `deserialize_with` (and no `default`) serde
/// still requires the field to be present, which a plain `Option` would
/// not: an absent request is a typo, an explicit `null` says "unknown".
fn nullable_number<'de, D: Deserializer<'de>>(d: D) -> Result<Option<f64>, D::Error> {
    Option::<f64>::deserialize(d)
}

/// A service fact that may be unknown (`data_gb`,
/// `constraints.local_volumes`) as written: absent, its value, `null`, or
/// `{"unknown": "<why>"}` (docs/estate-format.md "Unknown data").
#[derive(Debug, Default)]
enum RawTold<T> {
    #[default]
    Absent,
    Value(T),
    Null,
    Unknown(String),
}

/// The values a [`RawTold`] holds: a number or a boolean.
trait ToldValue: Sized {
    const EXPECTING: &'static str;
    fn from_f64(_: f64) -> Option<Self> {
        None
    }
    fn from_bool(_: bool) -> Option<Self> {
        None
    }
}

impl ToldValue for f64 {
    const EXPECTING: &'static str = "a number, null or {\"unknown\": \"<why>\"}";
    fn from_f64(v: f64) -> Option<f64> {
        Some(v)
    }
}

impl ToldValue for bool {
    const EXPECTING: &'static str = "true, false, null or {\"unknown\": \"<why>\"}";
    fn from_bool(v: bool) -> Option<bool> {
        Some(v)
    }
}

impl<'de, T: ToldValue> Deserialize<'de> for RawTold<T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V<T>(std::marker::PhantomData<T>);
        impl<'de, T: ToldValue> Visitor<'de> for V<T> {
            type Value = RawTold<T>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str(T::EXPECTING)
            }
            fn visit_unit<E>(self) -> Result<RawTold<T>, E> {
                Ok(RawTold::Null)
            }
            fn visit_none<E>(self) -> Result<RawTold<T>, E> {
                Ok(RawTold::Null)
            }
            fn visit_f64<E: serde::de::Error>(self, v: f64) -> Result<RawTold<T>, E> {
                T::from_f64(v)
                    .map(RawTold::Value)
                    .ok_or_else(|| E::invalid_type(serde::de::Unexpected::Float(v), &self))
            }
            fn visit_u64<E: serde::de::Error>(self, v: u64) -> Result<RawTold<T>, E> {
                self.visit_f64(v as f64)
            }
            fn visit_i64<E: serde::de::Error>(self, v: i64) -> Result<RawTold<T>, E> {
                self.visit_f64(v as f64)
            }
            fn visit_bool<E: serde::de::Error>(self, v: bool) -> Result<RawTold<T>, E> {
                T::from_bool(v)
                    .map(RawTold::Value)
                    .ok_or_else(|| E::invalid_type(serde::de::Unexpected::Bool(v), &self))
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<RawTold<T>, A::Error> {
                // Exactly one key, `unknown`; anything else fails the fast
                // path and the walker reports it with its path.
                #[derive(Deserialize)]
                #[serde(field_identifier, rename_all = "snake_case")]
                enum Key {
                    Unknown,
                }
                let mut why = None;
                while let Some(Key::Unknown) = map.next_key::<Key>()? {
                    if why.is_some() {
                        return Err(serde::de::Error::duplicate_field("unknown"));
                    }
                    why = Some(map.next_value::<String>()?);
                }
                why.map(RawTold::Unknown)
                    .ok_or_else(|| serde::de::Error::missing_field("unknown"))
            }
        }
        d.deserialize_any(V(std::marker::PhantomData))
    }
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawConstraints {
    #[serde(default)]
    local_volumes: RawTold<bool>,
    #[serde(default)]
    pinned: Option<bool>,
    #[serde(default)]
    jurisdictions: Option<Vec<String>>,
    #[serde(default)]
    trust_zone: Option<String>,
    #[serde(default)]
    tiers: Option<Vec<String>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawFlow {
    from: String,
    to: String,
    #[serde(default)]
    weight: RawFact,
    #[serde(default)]
    mb_s: RawFact,
}

/// A fact as written: absent/null, a bare number, or an object.
#[derive(Debug, Default)]
enum RawFact {
    #[default]
    Unknown,
    Bare(f64),
    Full {
        /// `None`: the `value` key is missing; `Some(None)`: explicit null.
        value: Option<Option<f64>>,
        class: Option<String>,
        source: Option<String>,
        observed_at: Option<String>,
    },
}

impl<'de> Deserialize<'de> for RawFact {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = RawFact;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a number, a fact object {value, class, source, observed_at} or null")
            }
            fn visit_unit<E>(self) -> Result<RawFact, E> {
                Ok(RawFact::Unknown)
            }
            fn visit_none<E>(self) -> Result<RawFact, E> {
                Ok(RawFact::Unknown)
            }
            fn visit_f64<E>(self, v: f64) -> Result<RawFact, E> {
                Ok(RawFact::Bare(v))
            }
            fn visit_u64<E>(self, v: u64) -> Result<RawFact, E> {
                Ok(RawFact::Bare(v as f64))
            }
            fn visit_i64<E>(self, v: i64) -> Result<RawFact, E> {
                Ok(RawFact::Bare(v as f64))
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<RawFact, A::Error> {
                let (mut value, mut class, mut source, mut observed_at) = (None, None, None, None);
                // Keys as an identifier enum: no allocation per key (a large
                // estate has four per fact). An unknown key fails the fast
                // path, and the walker then reports it with its path.
                #[derive(Deserialize)]
                #[serde(field_identifier, rename_all = "snake_case")]
                enum Key {
                    Value,
                    Class,
                    Source,
                    ObservedAt,
                }
                while let Some(key) = map.next_key::<Key>()? {
                    match key {
                        Key::Value => value = Some(map.next_value::<Option<f64>>()?),
                        Key::Class => class = Some(map.next_value::<String>()?),
                        Key::Source => source = map.next_value::<Option<String>>()?,
                        Key::ObservedAt => observed_at = map.next_value::<Option<String>>()?,
                    }
                }
                Ok(RawFact::Full {
                    value,
                    class,
                    source,
                    observed_at,
                })
            }
        }
        d.deserialize_any(V)
    }
}

const FACT_FIELDS: &[&str] = &["value", "class", "source", "observed_at"];
const TOP_FIELDS: &[&str] = &[
    "schema",
    "name",
    "observed_at",
    "traffic",
    "sites",
    "clusters",
    "links",
    "paths",
    "services",
    "flows",
];
const SITE_FIELDS: &[&str] = &["id", "name", "lat", "lon", "jurisdiction"];
const CLUSTER_FIELDS: &[&str] = &[
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
    "karmada_cluster",
    "ocm_cluster",
    "mesh_cluster",
];
const LINK_FIELDS: &[&str] = &["a", "b", "rtt_ms", "bandwidth_mb_s"];
const PATH_FIELDS: &[&str] = &["a", "b", "rtt_ms"];
const SERVICE_FIELDS: &[&str] = &[
    "id",
    "name",
    "owner",
    "cluster",
    "cpu",
    "memory_gib",
    "data_gb",
    "constraints",
    "source",
    "workload",
    "traffic",
];
const WORKLOAD_FIELDS: &[&str] = &["api_version", "kind", "namespace", "name"];
const CONSTRAINT_FIELDS: &[&str] = &[
    "local_volumes",
    "pinned",
    "jurisdictions",
    "trust_zone",
    "tiers",
];
const FLOW_FIELDS: &[&str] = &["from", "to", "weight", "mb_s"];

// ---------------------------------------------------------------------------
// Entry point.

/// Parse and validate an estate file. On any error, every error found.
pub fn load(text: &str, format: Format) -> Result<Estate, Vec<EstateError>> {
    let result = match format {
        Format::Json => match crate::strict::from_str::<RawEstate>(text) {
            Ok(raw) => validate(raw, &Broken::default()),
            Err(fast) => {
                let value: Value = serde_json::from_str(text).map_err(|e| {
                    vec![EstateError {
                        path: String::new(),
                        line: Some(e.line()),
                        message: format!("not valid JSON: {e}"),
                    }]
                })?;
                match slow(&value) {
                    // The walker found nothing serde did: report serde's.
                    Ok(_) => Err(vec![EstateError {
                        path: String::new(),
                        line: Some(fast.line()),
                        message: fast.to_string(),
                    }]),
                    Err(errors) => Err(errors),
                }
            }
        },
        Format::Yaml => {
            let non_finite = non_finite_numbers(text);
            if !non_finite.is_empty() {
                return Err(non_finite);
            }
            let value: Value = serde_yaml::from_str(text).map_err(|e| {
                vec![EstateError {
                    path: String::new(),
                    line: e.location().map(|l| l.line()),
                    message: format!("not valid YAML: {e}"),
                }]
            })?;
            slow(&value)
        }
    };
    result.map_err(|mut errors| {
        if format == Format::Json {
            for e in &mut errors {
                if e.line.is_none() {
                    e.line = crate::locate::line_of(text, &e.path);
                }
            }
            // In file order, so they read top to bottom like the file.
            errors.sort_by_key(|e| e.line.unwrap_or(usize::MAX));
        }
        errors
    })
}

/// YAML's `.nan`, `.inf` and `-.inf`, each with its path. JSON has no word
/// for them: converted to a JSON value they would become `null`, which
/// reads as *unknown* — a capacity or an RTT silently dropped. Refused
/// instead, before the conversion. (JSON text cannot spell them at all:
/// serde_json refuses `NaN` and numbers out of range.) Text that is not
/// valid YAML has none; the conversion reports it.
fn non_finite_numbers(text: &str) -> Vec<EstateError> {
    fn walk(v: &serde_yaml::Value, path: String, out: &mut Vec<EstateError>) {
        match v {
            serde_yaml::Value::Number(n) => {
                let word = match n.as_f64() {
                    Some(f) if f.is_nan() => ".nan",
                    Some(f) if f == f64::INFINITY => ".inf",
                    Some(f) if f == f64::NEG_INFINITY => "-.inf",
                    _ => return,
                };
                out.push(EstateError {
                    path,
                    line: None,
                    message: format!("expected a finite number, found {word}"),
                });
            }
            serde_yaml::Value::Sequence(items) => {
                for (i, item) in items.iter().enumerate() {
                    walk(item, format!("{path}/{i}"), out);
                }
            }
            serde_yaml::Value::Mapping(map) => {
                for (key, item) in map {
                    let key = match key {
                        serde_yaml::Value::String(s) => s.clone(),
                        other => serde_yaml::to_string(other)
                            .map(|s| s.trim_end().to_string())
                            .unwrap_or_default(),
                    };
                    walk(item, format!("{path}/{}", escape(&key)), out);
                }
            }
            serde_yaml::Value::Tagged(tagged) => walk(&tagged.value, path, out),
            serde_yaml::Value::Null | serde_yaml::Value::Bool(_) | serde_yaml::Value::String(_) => {
            }
        }
    }
    let mut out = Vec::new();
    if let Ok(doc) = serde_yaml::from_str::<serde_yaml::Value>(text) {
        walk(&doc, String::new(), &mut out);
    }
    out
}

/// The slow path: shape errors from the walker, then meaning errors on
/// whatever was readable, all in one list.
fn slow(value: &Value) -> Result<Estate, Vec<EstateError>> {
    let mut w = Walker::default();
    let raw = w.estate(value);
    match raw {
        Some(raw) if w.errors.is_empty() => validate(raw, &w.broken),
        Some(raw) => {
            let mut errors = w.errors;
            if let Err(meaning) = validate(raw, &w.broken) {
                errors.extend(meaning);
            }
            Err(errors)
        }
        None => Err(w.errors),
    }
}

// ---------------------------------------------------------------------------
// Stage 1 (slow path): a Value walker that reports every shape error.

/// Ids of items dropped for shape errors: references to them are not
/// reported again as unknown.
#[derive(Default)]
struct Broken {
    sites: BTreeSet<String>,
    clusters: BTreeSet<String>,
    services: BTreeSet<String>,
}

#[derive(Default)]
struct Walker {
    errors: Vec<EstateError>,
    broken: Broken,
}

impl Walker {
    fn err(&mut self, path: String, message: String) {
        self.errors.push(EstateError {
            path,
            line: None,
            message,
        });
    }

    fn object<'a>(
        &mut self,
        v: &'a Value,
        path: &str,
        allowed: &[&str],
    ) -> Option<&'a Map<String, Value>> {
        let Some(map) = v.as_object() else {
            self.err(
                path.into(),
                format!("expected an object, found {}", describe(v)),
            );
            return None;
        };
        for key in map.keys() {
            if !allowed.contains(&key.as_str()) {
                self.err(
                    format!("{path}/{}", escape(key)),
                    format!("unknown field; expected one of {}", allowed.join(", ")),
                );
            }
        }
        Some(map)
    }

    /// A required field of any JSON type checked by `get`.
    fn req<T>(
        &mut self,
        m: &Map<String, Value>,
        path: &str,
        key: &str,
        get: impl Fn(&mut Self, &Value, String) -> Option<T>,
    ) -> Option<T> {
        match m.get(key) {
            Some(v) => get(self, v, format!("{path}/{key}")),
            None => {
                self.err(path.into(), format!("missing required field \"{key}\""));
                None
            }
        }
    }

    /// An optional field: absent or null is `Some(None)`; a wrong type `None`.
    fn opt<T>(
        &mut self,
        m: &Map<String, Value>,
        path: &str,
        key: &str,
        get: impl Fn(&mut Self, &Value, String) -> Option<T>,
    ) -> Option<Option<T>> {
        match m.get(key) {
            None | Some(Value::Null) => Some(None),
            Some(v) => get(self, v, format!("{path}/{key}")).map(Some),
        }
    }

    /// A fact that may be unknown ([`RawTold`]): its value read by `get`,
    /// `null`, or an object holding exactly `unknown`, a string.
    fn told<T>(
        &mut self,
        m: &Map<String, Value>,
        path: &str,
        key: &str,
        get: impl Fn(&mut Self, &Value, String) -> Option<T>,
    ) -> Option<RawTold<T>> {
        let at = format!("{path}/{key}");
        match m.get(key) {
            None => Some(RawTold::Absent),
            Some(Value::Null) => Some(RawTold::Null),
            Some(v @ Value::Object(_)) => {
                let o = self.object(v, &at, &["unknown"])?;
                match o.get("unknown") {
                    Some(why) => self
                        .string(why, format!("{at}/unknown"))
                        .map(RawTold::Unknown),
                    None => {
                        self.err(
                            at,
                            "expected {\"unknown\": \"<why>\"}: the reason it could not be told"
                                .into(),
                        );
                        None
                    }
                }
            }
            Some(v) => get(self, v, at).map(RawTold::Value),
        }
    }

    fn string(&mut self, v: &Value, path: String) -> Option<String> {
        match v {
            Value::String(s) => Some(s.clone()),
            _ => {
                self.err(path, format!("expected a string, found {}", describe(v)));
                None
            }
        }
    }

    fn number(&mut self, v: &Value, path: String) -> Option<f64> {
        match v.as_f64() {
            Some(x) => Some(x),
            None => {
                self.err(path, format!("expected a number, found {}", describe(v)));
                None
            }
        }
    }

    /// A number or `null` (unknown): `Some(None)` for null.
    fn nullable_number(&mut self, v: &Value, path: String) -> Option<Option<f64>> {
        match v {
            Value::Null => Some(None),
            _ => match v.as_f64() {
                Some(x) => Some(Some(x)),
                None => {
                    self.err(
                        path,
                        format!("expected a number or null, found {}", describe(v)),
                    );
                    None
                }
            },
        }
    }

    fn boolean(&mut self, v: &Value, path: String) -> Option<bool> {
        match v {
            Value::Bool(b) => Some(*b),
            _ => {
                self.err(
                    path,
                    format!("expected true or false, found {}", describe(v)),
                );
                None
            }
        }
    }

    fn strings(&mut self, v: &Value, path: String) -> Option<Vec<String>> {
        let Value::Array(items) = v else {
            self.err(
                path,
                format!("expected an array of strings, found {}", describe(v)),
            );
            return None;
        };
        let mut out = Vec::new();
        let mut ok = true;
        for (i, item) in items.iter().enumerate() {
            match self.string(item, format!("{path}/{i}")) {
                Some(s) => out.push(s),
                None => ok = false,
            }
        }
        ok.then_some(out)
    }

    fn fact(&mut self, v: &Value, path: String) -> Option<RawFact> {
        match v {
            Value::Null => Some(RawFact::Unknown),
            Value::Number(n) => Some(RawFact::Bare(n.as_f64().unwrap_or(f64::NAN))),
            Value::Object(_) => {
                let m = self.object(v, &path, FACT_FIELDS)?;
                let value = match m.get("value") {
                    None => None,
                    Some(Value::Null) => Some(None),
                    Some(x) => Some(Some(self.number(x, format!("{path}/value"))?)),
                };
                let class = self.opt(m, &path, "class", Self::string)?;
                let source = self.opt(m, &path, "source", Self::string)?;
                let observed_at = self.opt(m, &path, "observed_at", Self::string)?;
                Some(RawFact::Full {
                    value,
                    class,
                    source,
                    observed_at,
                })
            }
            _ => {
                self.err(
                    path,
                    format!(
                        "expected a number, a fact object {{value, class, source, observed_at}} or null, found {}",
                        describe(v)
                    ),
                );
                None
            }
        }
    }

    /// Every element of an optional or required array, each read by `item`.
    fn list<T>(
        &mut self,
        m: &Map<String, Value>,
        key: &str,
        required: bool,
        item: impl Fn(&mut Self, &Value, String) -> Option<T>,
    ) -> Option<Option<Vec<T>>> {
        let path = format!("/{key}");
        match m.get(key) {
            None | Some(Value::Null) if !required => Some(None),
            None => {
                self.err(String::new(), format!("missing required field \"{key}\""));
                None
            }
            Some(Value::Array(items)) => {
                // Readable items are kept even when others are not, so the
                // meaning stage can still report on them.
                let mut out = Vec::with_capacity(items.len());
                for (i, v) in items.iter().enumerate() {
                    match item(self, v, format!("{path}/{i}")) {
                        Some(x) => out.push(x),
                        None => {
                            if let Some(id) = v.get("id").and_then(Value::as_str) {
                                let set = match key {
                                    "sites" => &mut self.broken.sites,
                                    "clusters" => &mut self.broken.clusters,
                                    _ => &mut self.broken.services,
                                };
                                set.insert(id.to_string());
                            }
                        }
                    }
                }
                Some(Some(out))
            }
            Some(v) => {
                self.err(path, format!("expected an array, found {}", describe(v)));
                None
            }
        }
    }

    fn estate(&mut self, v: &Value) -> Option<RawEstate> {
        let m = self.object(v, "", TOP_FIELDS)?;
        let schema = self.req(m, "", "schema", Self::number);
        let name = self.req(m, "", "name", Self::string);
        let observed_at = self.opt(m, "", "observed_at", Self::string);
        let traffic = self.opt(m, "", "traffic", Self::string);
        let sites = self.list(m, "sites", true, |w, v, p| {
            let o = w.object(v, &p, SITE_FIELDS)?;
            let id = w.req(o, &p, "id", Self::string);
            let name = w.opt(o, &p, "name", Self::string);
            let lat = w.opt(o, &p, "lat", Self::number);
            let lon = w.opt(o, &p, "lon", Self::number);
            let jurisdiction = w.req(o, &p, "jurisdiction", Self::string);
            Some(RawSite {
                id: id?,
                name: name?,
                lat: lat?,
                lon: lon?,
                jurisdiction: jurisdiction?,
            })
        });
        let clusters = self.list(m, "clusters", true, |w, v, p| {
            let o = w.object(v, &p, CLUSTER_FIELDS)?;
            let id = w.req(o, &p, "id", Self::string);
            let name = w.opt(o, &p, "name", Self::string);
            let site = w.req(o, &p, "site", Self::string);
            let tier = w.req(o, &p, "tier", Self::string);
            let trust_zone = w.req(o, &p, "trust_zone", Self::string);
            let health = w.req(o, &p, "health", Self::string);
            let enrolled_at = w.opt(o, &p, "enrolled_at", Self::string);
            let cpu_total = w.req(o, &p, "cpu_total", Self::number);
            let memory_total_gib = w.req(o, &p, "memory_total_gib", Self::number);
            let cpu_free = w.opt(o, &p, "cpu_free", Self::fact);
            let memory_free_gib = w.opt(o, &p, "memory_free_gib", Self::fact);
            let karmada_cluster = w.opt(o, &p, "karmada_cluster", Self::string);
            let ocm_cluster = w.opt(o, &p, "ocm_cluster", Self::string);
            let mesh_cluster = w.opt(o, &p, "mesh_cluster", Self::string);
            Some(RawCluster {
                id: id?,
                name: name?,
                site: site?,
                tier: tier?,
                trust_zone: trust_zone?,
                health: health?,
                enrolled_at: enrolled_at?,
                cpu_total: cpu_total?,
                memory_total_gib: memory_total_gib?,
                cpu_free: cpu_free?.unwrap_or_default(),
                memory_free_gib: memory_free_gib?.unwrap_or_default(),
                karmada_cluster: karmada_cluster?,
                ocm_cluster: ocm_cluster?,
                mesh_cluster: mesh_cluster?,
            })
        });
        let links = self.list(m, "links", false, |w, v, p| {
            let o = w.object(v, &p, LINK_FIELDS)?;
            let a = w.req(o, &p, "a", Self::string);
            let b = w.req(o, &p, "b", Self::string);
            let rtt_ms = w.opt(o, &p, "rtt_ms", Self::fact);
            let bandwidth_mb_s = w.opt(o, &p, "bandwidth_mb_s", Self::number);
            Some(RawLink {
                a: a?,
                b: b?,
                rtt_ms: rtt_ms?.unwrap_or_default(),
                bandwidth_mb_s: bandwidth_mb_s?,
            })
        });
        let paths = self.list(m, "paths", false, |w, v, p| {
            let o = w.object(v, &p, PATH_FIELDS)?;
            let a = w.req(o, &p, "a", Self::string);
            let b = w.req(o, &p, "b", Self::string);
            let rtt_ms = w.opt(o, &p, "rtt_ms", Self::fact);
            Some(RawPath {
                a: a?,
                b: b?,
                rtt_ms: rtt_ms?.unwrap_or_default(),
            })
        });
        let services = self.list(m, "services", true, |w, v, p| {
            let o = w.object(v, &p, SERVICE_FIELDS)?;
            let id = w.req(o, &p, "id", Self::string);
            let name = w.opt(o, &p, "name", Self::string);
            let owner = w.req(o, &p, "owner", Self::string);
            let cluster = w.req(o, &p, "cluster", Self::string);
            let cpu = w.req(o, &p, "cpu", Self::nullable_number);
            let memory_gib = w.req(o, &p, "memory_gib", Self::nullable_number);
            let data_gb = w.told(o, &p, "data_gb", Self::number);
            let source = w.opt(o, &p, "source", Self::string);
            let traffic = match o.get("traffic") {
                None => Some(RawTraffic::Absent),
                Some(Value::String(s)) if s == "declared" => Some(RawTraffic::Declared),
                Some(v @ Value::String(_)) => {
                    w.err(
                        format!("{p}/traffic"),
                        format!(
                            "expected \"declared\", a number, a fact object {{value, class, source, observed_at}} or null, found {}",
                            describe(v)
                        ),
                    );
                    None
                }
                Some(v) => w.fact(v, format!("{p}/traffic")).map(RawTraffic::Fact),
            };
            let workload = w.opt(o, &p, "workload", |w, v, wp| {
                let o = w.object(v, &wp, WORKLOAD_FIELDS)?;
                let api_version = w.opt(o, &wp, "api_version", Self::string);
                let kind = w.req(o, &wp, "kind", Self::string);
                let namespace = w.req(o, &wp, "namespace", Self::string);
                let name = w.req(o, &wp, "name", Self::string);
                Some(RawWorkload {
                    api_version: api_version?,
                    kind: kind?,
                    namespace: namespace?,
                    name: name?,
                })
            });
            let constraints = w.opt(o, &p, "constraints", |w, v, cp| {
                let c = w.object(v, &cp, CONSTRAINT_FIELDS)?;
                let local_volumes = w.told(c, &cp, "local_volumes", Self::boolean);
                let pinned = w.opt(c, &cp, "pinned", Self::boolean);
                let jurisdictions = w.opt(c, &cp, "jurisdictions", Self::strings);
                let trust_zone = w.opt(c, &cp, "trust_zone", Self::string);
                let tiers = w.opt(c, &cp, "tiers", Self::strings);
                Some(RawConstraints {
                    local_volumes: local_volumes?,
                    pinned: pinned?,
                    jurisdictions: jurisdictions?,
                    trust_zone: trust_zone?,
                    tiers: tiers?,
                })
            });
            Some(RawService {
                id: id?,
                name: name?,
                owner: owner?,
                cluster: cluster?,
                cpu: cpu?,
                memory_gib: memory_gib?,
                data_gb: data_gb?,
                constraints: constraints?,
                source: source?,
                workload: workload?,
                traffic: traffic?,
            })
        });
        let flows = self.list(m, "flows", false, |w, v, p| {
            let o = w.object(v, &p, FLOW_FIELDS)?;
            let from = w.req(o, &p, "from", Self::string);
            let to = w.req(o, &p, "to", Self::string);
            let weight = w.opt(o, &p, "weight", Self::fact);
            let mb_s = w.opt(o, &p, "mb_s", Self::fact);
            Some(RawFlow {
                from: from?,
                to: to?,
                weight: weight?.unwrap_or_default(),
                mb_s: mb_s?.unwrap_or_default(),
            })
        });
        // Whatever could not be read is already an error; stand-ins let
        // the meaning stage check the rest without echoing those errors.
        Some(RawEstate {
            schema: schema.unwrap_or(1.0),
            name: name.unwrap_or_else(|| "unnamed".into()),
            observed_at: observed_at.flatten(),
            traffic: traffic.flatten(),
            sites: sites.flatten().unwrap_or_default(),
            clusters: clusters.flatten().unwrap_or_default(),
            links: links.flatten(),
            paths: paths.flatten(),
            services: services.flatten().unwrap_or_default(),
            flows: flows.flatten(),
        })
    }
}

fn escape(key: &str) -> String {
    key.replace('~', "~0").replace('/', "~1")
}

// ---------------------------------------------------------------------------
// Stage 2: meaning.

/// Largest number accepted anywhere: beyond it a value is a typo, and
/// keeping sums far from overflow keeps every total finite.
const MAX_NUMBER: f64 = 1e12;

struct Validator {
    errors: Vec<EstateError>,
    file_time: Option<i64>,
}

impl Validator {
    fn err(&mut self, path: String, message: String) {
        self.errors.push(EstateError {
            path,
            line: None,
            message,
        });
    }

    /// A non-empty text field of at most 256 bytes, with no hidden
    /// characters ([`crate::chars::name_problem`]).
    fn text(&mut self, s: &str, path: impl FnOnce() -> String) -> bool {
        if s.trim().is_empty() || s.len() > 256 {
            self.err(
                path(),
                "expected a non-empty string of at most 256 bytes".into(),
            );
            return false;
        }
        if let Some(problem) = crate::chars::name_problem(s) {
            self.err(path(), problem);
            return false;
        }
        true
    }

    /// An id by the rules of [`crate::chars::id_problem`].
    fn id(&mut self, s: &str, path: impl FnOnce() -> String) -> bool {
        match crate::chars::id_problem(s) {
            Some(problem) => {
                self.err(path(), problem);
                false
            }
            None => true,
        }
    }

    /// `v ≥ min` (or `> min` when `strict`), finite, at most MAX_NUMBER.
    fn number(&mut self, v: f64, min: f64, strict: bool, path: impl FnOnce() -> String) -> bool {
        let ok = v.is_finite() && (if strict { v > min } else { v >= min }) && v <= MAX_NUMBER;
        if !ok {
            let rel = if strict { ">" } else { "≥" };
            self.err(
                path(),
                format!("expected a number {rel} {min} (at most {MAX_NUMBER:e}), found {v}"),
            );
        }
        ok
    }

    /// A fact that may be unknown: absent is `absent`, a value must pass
    /// `check`, `null` is unknown without a reason ([`NOT_STATED`]), and a
    /// reason is text like any other. `None` when refused.
    fn told<T, P: Fn() -> String>(
        &mut self,
        raw: RawTold<T>,
        absent: T,
        path: P,
        check: impl FnOnce(&mut Self, T, &P) -> bool,
    ) -> Option<Told<T>>
    where
        T: Copy,
    {
        match raw {
            RawTold::Absent => Some(Told::Known(absent)),
            RawTold::Value(x) => check(self, x, &path).then_some(Told::Known(x)),
            RawTold::Null => Some(Told::Unknown(NOT_STATED.into())),
            RawTold::Unknown(why) => self
                .text(&why, || format!("{}/unknown", path()))
                .then_some(Told::Unknown(why)),
        }
    }

    fn time(&mut self, s: &str, path: impl FnOnce() -> String) -> Option<i64> {
        let t = parse_time(s);
        if t.is_none() {
            self.err(
                path(),
                format!("expected an RFC 3339 time such as 2026-11-30T04:00:00Z, found {s:?}"),
            );
        }
        t
    }

    fn fact(&mut self, raw: RawFact, path: impl Fn() -> String) -> Fact {
        match raw {
            RawFact::Unknown => Fact::unknown("file"),
            RawFact::Bare(v) => {
                self.number(v, 0.0, false, &path);
                Fact {
                    value: Some(v),
                    class: Class::Reported,
                    source: "file".into(),
                    observed_at: self.file_time,
                }
            }
            RawFact::Full {
                value,
                class,
                source,
                observed_at,
            } => {
                let (Some(value), Some(class)) = (value, class) else {
                    self.err(path(), "fact object needs \"value\" and \"class\"".into());
                    return Fact::unknown("file");
                };
                if let Some(v) = value {
                    self.number(v, 0.0, false, || format!("{}/value", path()));
                }
                let class = match Class::parse(&class) {
                    Some(c) => c,
                    None => {
                        self.err(
                            format!("{}/class", path()),
                            format!(
                                "expected one of \"measured\", \"reported\", \"inferred\", \"guessed\", found {class:?}"
                            ),
                        );
                        Class::Guessed
                    }
                };
                let source = match source {
                    Some(s) => {
                        self.text(&s, || format!("{}/source", path()));
                        s
                    }
                    None => "file".into(),
                };
                let observed_at = match observed_at {
                    Some(t) => self.time(&t, || format!("{}/observed_at", path())),
                    None => self.file_time,
                };
                Fact {
                    value,
                    // An unknown value is a guess whatever class it claims.
                    class: if value.is_some() {
                        class
                    } else {
                        Class::Guessed
                    },
                    source,
                    observed_at,
                }
            }
        }
    }

    /// A list constraint: non-empty, no blanks, sorted and de-duplicated.
    fn allow_list(
        &mut self,
        list: Option<Vec<String>>,
        what: &str,
        path: impl Fn() -> String,
    ) -> Option<Vec<String>> {
        let list = list?;
        if list.is_empty() {
            self.err(path(), format!("expected at least one {what}"));
            return None;
        }
        let mut set = BTreeSet::new();
        for (i, s) in list.into_iter().enumerate() {
            if self.text(&s, || format!("{}/{i}", path())) {
                set.insert(s);
            }
        }
        Some(set.into_iter().collect())
    }
}

/// Raw shapes → the model, with every meaning error.
fn validate(raw: RawEstate, broken: &Broken) -> Result<Estate, Vec<EstateError>> {
    let mut v = Validator {
        errors: Vec::new(),
        file_time: None,
    };
    if raw.schema != 1.0 {
        v.err(
            "/schema".into(),
            format!(
                "unsupported schema {}; this version reads schema 1",
                raw.schema
            ),
        );
    }
    v.text(&raw.name, || "/name".into());
    // The published size limits (docs/estate-format.md) are the decider
    // contract's: an estate larger than a decider may be sent could be
    // advised on but never compared, so it is refused here, where every
    // estate enters (files, imports, the API), before anything is built.
    for (what, count, max) in [
        (
            "clusters",
            raw.clusters.len(),
            crate::decider::MAX_REQUEST_CLUSTERS,
        ),
        (
            "services",
            raw.services.len(),
            crate::decider::MAX_REQUEST_SERVICES,
        ),
        (
            "flows",
            raw.flows.as_ref().map_or(0, Vec::len),
            crate::decider::MAX_REQUEST_FLOWS,
        ),
    ] {
        if count > max {
            v.err(
                format!("/{what}"),
                format!("{count} {what}: an estate may hold at most {max} (the decider contract's limit)"),
            );
        }
    }
    if let Some(t) = &raw.observed_at {
        v.file_time = v.time(t, || "/observed_at".into());
    }
    let traffic_default = match raw.traffic.as_deref() {
        None => None,
        Some("declared") => Some(TrafficDefault::Declared),
        Some("unknown") => Some(TrafficDefault::Unknown),
        Some(other) => {
            v.err(
                "/traffic".into(),
                format!("expected one of \"declared\", \"unknown\", found {other:?}"),
            );
            None
        }
    };

    // Ids declared anywhere, valid or not: a reference to an item that was
    // itself refused is dropped quietly, since that item's own error says
    // what to fix (one typo must not echo through every reference).
    let declared = |ids: Vec<&String>, more: &BTreeSet<String>| -> BTreeSet<String> {
        ids.into_iter()
            .cloned()
            .chain(more.iter().cloned())
            .collect()
    };
    let declared_sites = declared(raw.sites.iter().map(|x| &x.id).collect(), &broken.sites);
    let declared_clusters = declared(
        raw.clusters.iter().map(|x| &x.id).collect(),
        &broken.clusters,
    );
    let declared_services = declared(
        raw.services.iter().map(|x| &x.id).collect(),
        &broken.services,
    );

    // Sites.
    let mut first_site: BTreeMap<String, usize> = BTreeMap::new();
    let mut sites = Vec::with_capacity(raw.sites.len());
    for (i, s) in raw.sites.into_iter().enumerate() {
        let p = || format!("/sites/{i}");
        let mut ok = v.id(&s.id, || format!("/sites/{i}/id"));
        ok &= v.text(&s.jurisdiction, || format!("/sites/{i}/jurisdiction"));
        if let Some(n) = &s.name {
            ok &= v.text(n, || format!("/sites/{i}/name"));
        }
        let coords = match (s.lat, s.lon) {
            (Some(lat), Some(lon)) => {
                if !(-90.0..=90.0).contains(&lat) {
                    v.err(
                        format!("/sites/{i}/lat"),
                        format!("expected −90…90, found {lat}"),
                    );
                }
                if !(-180.0..=180.0).contains(&lon) {
                    v.err(
                        format!("/sites/{i}/lon"),
                        format!("expected −180…180, found {lon}"),
                    );
                }
                Some((lat, lon))
            }
            (None, None) => None,
            (Some(_), None) => {
                v.err(p(), "\"lat\" given without \"lon\"".into());
                None
            }
            (None, Some(_)) => {
                v.err(p(), "\"lon\" given without \"lat\"".into());
                None
            }
        };
        // Duplicates are checked whatever else is wrong with either entry.
        if let Some(first) = first_site.get(&s.id) {
            v.err(
                format!("/sites/{i}/id"),
                format!("duplicate site id {:?} (first at /sites/{first})", s.id),
            );
            continue;
        }
        first_site.insert(s.id.clone(), i);
        if !ok {
            continue;
        }
        sites.push(Site {
            name: s.name.unwrap_or_else(|| s.id.clone()),
            id: s.id,
            coords,
            jurisdiction: s.jurisdiction,
        });
    }
    sites.sort_by(|a, b| a.id.cmp(&b.id));
    let site_idx: BTreeMap<&str, usize> = sites
        .iter()
        .enumerate()
        .map(|(i, s)| (s.id.as_str(), i))
        .collect();

    // Clusters.
    let mut first_cluster: BTreeMap<String, usize> = BTreeMap::new();
    // Each `mesh_cluster` alias, with the index of the cluster declaring it.
    let mut mesh_aliases: Vec<(usize, String)> = Vec::new();
    let mut clusters = Vec::with_capacity(raw.clusters.len());
    for (i, c) in raw.clusters.into_iter().enumerate() {
        let at = |f: &str| format!("/clusters/{i}/{f}");
        let mut ok = v.id(&c.id, || at("id"));
        if let Some(n) = &c.name {
            ok &= v.text(n, || at("name"));
        }
        ok &= v.text(&c.tier, || at("tier"));
        ok &= v.text(&c.trust_zone, || at("trust_zone"));
        let site = site_idx.get(c.site.as_str()).copied();
        if site.is_none() && !declared_sites.contains(&c.site) {
            v.err(at("site"), format!("unknown site {:?}", c.site));
        }
        let health = match c.health.as_str() {
            "healthy" => Some(Health::Healthy),
            "watch" => Some(Health::Watch),
            "draining" => Some(Health::Draining),
            "down" => Some(Health::Down),
            other => {
                v.err(
                    at("health"),
                    format!(
                        "expected one of \"healthy\", \"watch\", \"draining\", \"down\", found {other:?}"
                    ),
                );
                None
            }
        };
        let enrolled_at = match &c.enrolled_at {
            Some(t) => {
                let parsed = v.time(t, || at("enrolled_at"));
                ok &= parsed.is_some();
                parsed
            }
            None => None,
        };
        let cpu_total_ok = v.number(c.cpu_total, 0.0, true, || at("cpu_total"));
        let memory_total_ok = v.number(c.memory_total_gib, 0.0, true, || at("memory_total_gib"));
        ok &= cpu_total_ok && memory_total_ok;
        for (name, field) in [
            (&c.karmada_cluster, "karmada_cluster"),
            (&c.ocm_cluster, "ocm_cluster"),
        ] {
            if let Some(problem) = name.as_deref().and_then(crate::k8s::label_problem) {
                v.err(at(field), problem);
                ok = false;
            }
        }
        if let Some(m) = &c.mesh_cluster {
            // A mesh names clusters freely; an id's characters keep the
            // alias usable in `--map-cluster` and `--map CLUSTER:NAME`.
            ok &= v.id(m, || at("mesh_cluster"));
            mesh_aliases.push((i, m.clone()));
        }
        let cpu_free = v.fact(c.cpu_free, || at("cpu_free"));
        let memory_free_gib = v.fact(c.memory_free_gib, || at("memory_free_gib"));
        for (fact, total, total_ok, field, what) in [
            (
                &cpu_free,
                c.cpu_total,
                cpu_total_ok,
                "cpu_free",
                "cpu_total",
            ),
            (
                &memory_free_gib,
                c.memory_total_gib,
                memory_total_ok,
                "memory_free_gib",
                "memory_total_gib",
            ),
        ] {
            // Only against a valid total: a bad total has its own error.
            if let (Some(free), true) = (fact.value, total_ok) {
                // A little slack for rounding in agents' reports.
                if free > total * 1.0001 {
                    v.err(at(field), format!("free {free} exceeds {what} {total}"));
                }
            }
        }
        if let Some(first) = first_cluster.get(&c.id) {
            v.err(
                at("id"),
                format!(
                    "duplicate cluster id {:?} (first at /clusters/{first})",
                    c.id
                ),
            );
            continue;
        }
        first_cluster.insert(c.id.clone(), i);
        let (Some(site), Some(health), true) = (site, health, ok) else {
            continue;
        };
        clusters.push(Cluster {
            id: c.id,
            name: c.name,
            site,
            tier: c.tier,
            trust_zone: c.trust_zone,
            health,
            enrolled_at,
            cpu_total: c.cpu_total,
            memory_total_gib: c.memory_total_gib,
            cpu_free,
            memory_free_gib,
            karmada_cluster: c.karmada_cluster,
            ocm_cluster: c.ocm_cluster,
            mesh_cluster: c.mesh_cluster,
        });
    }
    // A mesh cluster name must stand for one estate cluster: an alias
    // neither repeats another's nor is another cluster's id.
    let mut first_alias: BTreeMap<&str, usize> = BTreeMap::new();
    for (i, m) in &mesh_aliases {
        let at = format!("/clusters/{i}/mesh_cluster");
        if let Some(first) = first_alias.get(m.as_str()) {
            v.err(
                at,
                format!("mesh_cluster {m:?} is also that of /clusters/{first}: a mesh cluster stands for one estate cluster"),
            );
        } else if first_cluster.get(m).is_some_and(|j| j != i) {
            v.err(
                at,
                format!("mesh_cluster {m:?} is the id of /clusters/{}: a mesh cluster stands for one estate cluster", first_cluster[m]),
            );
        } else {
            first_alias.insert(m, *i);
        }
    }
    clusters.sort_by(|a, b| a.id.cmp(&b.id));
    let cluster_idx: BTreeMap<&str, usize> = clusters
        .iter()
        .enumerate()
        .map(|(i, c)| (c.id.as_str(), i))
        .collect();

    // Links and paths.
    let links_raw: Vec<(String, String, RawFact, Option<f64>)> = raw
        .links
        .unwrap_or_default()
        .into_iter()
        .map(|l| (l.a, l.b, l.rtt_ms, l.bandwidth_mb_s))
        .collect();
    let links = rtt_facts(
        &mut v,
        links_raw,
        ("links", "site", "link"),
        &site_idx,
        &declared_sites,
    );
    let paths_raw: Vec<(String, String, RawFact, Option<f64>)> = raw
        .paths
        .unwrap_or_default()
        .into_iter()
        .map(|p| (p.a, p.b, p.rtt_ms, None))
        .collect();
    let paths = rtt_facts(
        &mut v,
        paths_raw,
        ("paths", "cluster", "path"),
        &cluster_idx,
        &declared_clusters,
    );

    // Services.
    let mut first_service: BTreeMap<String, usize> = BTreeMap::new();
    let mut services = Vec::with_capacity(raw.services.len());
    for (i, s) in raw.services.into_iter().enumerate() {
        let at = |f: &str| format!("/services/{i}/{f}");
        let mut ok = v.id(&s.id, || at("id"));
        if let Some(n) = &s.name {
            ok &= v.text(n, || at("name"));
        }
        ok &= v.text(&s.owner, || at("owner"));
        let cluster = cluster_idx.get(s.cluster.as_str()).copied();
        if cluster.is_none() && !declared_clusters.contains(&s.cluster) {
            v.err(at("cluster"), format!("unknown cluster {:?}", s.cluster));
        }
        // `null` is an unknown request: allowed, and never read as zero.
        if let Some(cpu) = s.cpu {
            ok &= v.number(cpu, 0.0, false, || at("cpu"));
        }
        if let Some(memory_gib) = s.memory_gib {
            ok &= v.number(memory_gib, 0.0, false, || at("memory_gib"));
        }
        if let Some(source) = &s.source {
            ok &= v.text(source, || at("source"));
        }
        if let Some(w) = &s.workload {
            let wat = |f: &str| format!("/services/{i}/workload/{f}");
            let checks = [
                ("kind", crate::k8s::kind_problem(&w.kind)),
                ("namespace", crate::k8s::label_problem(&w.namespace)),
                ("name", crate::k8s::subdomain_problem(&w.name)),
                (
                    "api_version",
                    w.api_version
                        .as_deref()
                        .and_then(crate::k8s::api_version_problem),
                ),
            ];
            for (field, problem) in checks {
                if let Some(problem) = problem {
                    v.err(wat(field), problem);
                    ok = false;
                }
            }
        }
        let traffic = match s.traffic {
            RawTraffic::Absent => None,
            RawTraffic::Declared => Some(Traffic::Declared),
            RawTraffic::Fact(raw) => {
                let f = v.fact(raw, || at("traffic"));
                // A window of nothing observed nothing: `null` says that.
                if f.value == Some(0.0) {
                    v.err(
                        at("traffic"),
                        "an observation window must be more than 0 seconds; write null for traffic never observed".into(),
                    );
                    ok = false;
                }
                Some(Traffic::Observed(f))
            }
        };
        let data_gb = v.told(
            s.data_gb,
            0.0,
            || at("data_gb"),
            |v, x, path| v.number(x, 0.0, false, path),
        );
        ok &= data_gb.is_some();
        let rc = s.constraints.unwrap_or_default();
        let cat = |f: &str| format!("/services/{i}/constraints/{f}");
        let local_volumes = v.told(
            rc.local_volumes,
            false,
            || cat("local_volumes"),
            |_, _, _| true,
        );
        ok &= local_volumes.is_some();
        let trust_zone = rc.trust_zone.filter(|z| v.text(z, || cat("trust_zone")));
        let constraints = Constraints {
            local_volumes: local_volumes.unwrap_or(Told::Known(false)),
            pinned: rc.pinned.unwrap_or(false),
            jurisdictions: v.allow_list(rc.jurisdictions, "jurisdiction", || cat("jurisdictions")),
            trust_zone,
            tiers: v.allow_list(rc.tiers, "tier", || cat("tiers")),
        };
        if let Some(first) = first_service.get(&s.id) {
            v.err(
                at("id"),
                format!(
                    "duplicate service id {:?} (first at /services/{first})",
                    s.id
                ),
            );
            continue;
        }
        first_service.insert(s.id.clone(), i);
        let (Some(cluster), true) = (cluster, ok) else {
            continue;
        };
        services.push(Service {
            id: s.id,
            name: s.name,
            owner: s.owner,
            cluster,
            cpu: s.cpu,
            memory_gib: s.memory_gib,
            data_gb: data_gb.unwrap_or(Told::Known(0.0)),
            constraints,
            source: s.source,
            workload: s.workload.map(|w| Workload {
                api_version: w.api_version,
                kind: w.kind,
                namespace: w.namespace,
                name: w.name,
            }),
            traffic,
        });
    }
    services.sort_by(|a, b| a.id.cmp(&b.id));
    let service_idx: BTreeMap<&str, usize> = services
        .iter()
        .enumerate()
        .map(|(i, s)| (s.id.as_str(), i))
        .collect();

    // Flows.
    let mut first_flow: BTreeMap<(usize, usize), usize> = BTreeMap::new();
    let mut first_flow_by_id: BTreeMap<(String, String), usize> = BTreeMap::new();
    let raw_flows = raw.flows.unwrap_or_default();
    let mut flows = Vec::with_capacity(raw_flows.len());
    for (i, f) in raw_flows.into_iter().enumerate() {
        let at = |x: &str| format!("/flows/{i}/{x}");
        let from = service_idx.get(f.from.as_str()).copied();
        if from.is_none() && !declared_services.contains(&f.from) {
            v.err(at("from"), format!("unknown service {:?}", f.from));
        }
        let to = service_idx.get(f.to.as_str()).copied();
        if to.is_none() && !declared_services.contains(&f.to) {
            v.err(at("to"), format!("unknown service {:?}", f.to));
        }
        let weight = v.fact(f.weight, || at("weight"));
        let mb_s = v.fact(f.mb_s, || at("mb_s"));
        // Shape rules on the ids as written, so they are reported even
        // when an end was itself refused.
        if f.from == f.to {
            v.err(
                format!("/flows/{i}"),
                format!("flow from {:?} to itself", f.from),
            );
            continue;
        }
        // Keyed by indices when both ends resolve (the common case, no
        // allocation); by the ids as written only when one does not.
        let first = match (from, to) {
            (Some(a), Some(b)) => first_seen(&mut first_flow, (a, b), i),
            _ => first_seen(&mut first_flow_by_id, (f.from.clone(), f.to.clone()), i),
        };
        if let Some(first) = first {
            v.err(
                format!("/flows/{i}"),
                format!(
                    "duplicate flow {:?} → {:?} (first at /flows/{first}); merge them into one",
                    f.from, f.to
                ),
            );
            continue;
        }
        let (Some(from), Some(to)) = (from, to) else {
            continue;
        };
        flows.push(Flow {
            from,
            to,
            weight,
            mb_s,
        });
    }
    flows.sort_by_key(|f| (f.from, f.to));

    if v.errors.is_empty() && sites.is_empty() {
        v.err("/sites".into(), "expected at least one site".into());
    }
    if v.errors.is_empty() && clusters.is_empty() {
        v.err("/clusters".into(), "expected at least one cluster".into());
    }
    if !v.errors.is_empty() {
        return Err(v.errors);
    }
    Ok(Estate {
        name: raw.name,
        observed_at: v.file_time,
        traffic: traffic_default,
        sites,
        clusters,
        links,
        paths,
        services,
        flows,
    })
}

/// Where `key` was first seen, recording `i` if this is the first time.
fn first_seen<K: Ord>(map: &mut BTreeMap<K, usize>, key: K, i: usize) -> Option<usize> {
    match map.entry(key) {
        std::collections::btree_map::Entry::Occupied(e) => Some(*e.get()),
        std::collections::btree_map::Entry::Vacant(e) => {
            e.insert(i);
            None
        }
    }
}

fn rtt_facts(
    v: &mut Validator,
    raw: Vec<(String, String, RawFact, Option<f64>)>,
    (key, what, noun): (&str, &str, &str),
    index: &BTreeMap<&str, usize>,
    declared: &BTreeSet<String>,
) -> Vec<RttFact> {
    let mut out = Vec::with_capacity(raw.len());
    let mut first: BTreeMap<(String, String), usize> = BTreeMap::new();
    for (i, (a, b, rtt, bandwidth)) in raw.into_iter().enumerate() {
        let at = |x: &str| format!("/{key}/{i}/{x}");
        let ia = index.get(a.as_str()).copied();
        if ia.is_none() && !declared.contains(&a) {
            v.err(at("a"), format!("unknown {what} {a:?}"));
        }
        let ib = index.get(b.as_str()).copied();
        if ib.is_none() && !declared.contains(&b) {
            v.err(at("b"), format!("unknown {what} {b:?}"));
        }
        let rtt_ms = v.fact(rtt, || at("rtt_ms"));
        if let Some(bw) = bandwidth {
            v.number(bw, 0.0, false, || at("bandwidth_mb_s"));
        }
        if a == b {
            v.err(
                format!("/{key}/{i}"),
                format!("a {noun} must join two different {what}s; both ends are {a:?}"),
            );
            continue;
        }
        let names = if a < b {
            (a.clone(), b.clone())
        } else {
            (b.clone(), a.clone())
        };
        if let Some(f) = first.get(&names) {
            v.err(
                format!("/{key}/{i}"),
                format!("duplicate {noun} between {a:?} and {b:?} (first at /{key}/{f})"),
            );
            continue;
        }
        first.insert(names, i);
        let (Some(ia), Some(ib)) = (ia, ib) else {
            continue;
        };
        let pair = (ia.min(ib), ia.max(ib));
        out.push(RttFact {
            a: pair.0,
            b: pair.1,
            rtt_ms,
            bandwidth_mb_s: bandwidth,
        });
    }
    out.sort_by_key(|l| (l.a, l.b));
    out
}
