//! Stage 0: the raw shapes — the file as written, before any meaning is
//! checked — and the fields each object may hold.

use super::*;

// ---------------------------------------------------------------------------
// Raw shapes: the file as written, before any meaning is checked.

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawEstate {
    pub(super) schema: f64,
    pub(super) name: String,
    #[serde(default)]
    pub(super) observed_at: Option<String>,
    #[serde(default)]
    pub(super) traffic: Option<String>,
    pub(super) sites: Vec<RawSite>,
    pub(super) clusters: Vec<RawCluster>,
    #[serde(default)]
    pub(super) links: Option<Vec<RawLink>>,
    #[serde(default)]
    pub(super) paths: Option<Vec<RawPath>>,
    pub(super) services: Vec<RawService>,
    #[serde(default)]
    pub(super) flows: Option<Vec<RawFlow>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawSite {
    pub(super) id: String,
    #[serde(default)]
    pub(super) name: Option<String>,
    #[serde(default)]
    pub(super) lat: Option<f64>,
    #[serde(default)]
    pub(super) lon: Option<f64>,
    pub(super) jurisdiction: String,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawCluster {
    pub(super) id: String,
    #[serde(default)]
    pub(super) name: Option<String>,
    pub(super) site: String,
    pub(super) tier: String,
    pub(super) trust_zone: String,
    pub(super) health: String,
    #[serde(default)]
    pub(super) enrolled_at: Option<String>,
    pub(super) cpu_total: f64,
    pub(super) memory_total_gib: f64,
    #[serde(default)]
    pub(super) cpu_free: RawFact,
    #[serde(default)]
    pub(super) memory_free_gib: RawFact,
    #[serde(default)]
    pub(super) karmada_cluster: Option<String>,
    #[serde(default)]
    pub(super) ocm_cluster: Option<String>,
    #[serde(default)]
    pub(super) mesh_cluster: Option<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawLink {
    pub(super) a: String,
    pub(super) b: String,
    #[serde(default)]
    pub(super) rtt_ms: RawFact,
    #[serde(default)]
    pub(super) bandwidth_mb_s: Option<f64>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawPath {
    pub(super) a: String,
    pub(super) b: String,
    #[serde(default)]
    pub(super) rtt_ms: RawFact,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawService {
    pub(super) id: String,
    #[serde(default)]
    pub(super) name: Option<String>,
    pub(super) owner: String,
    pub(super) cluster: String,
    /// Required, but may be `null` (unknown).
    #[serde(deserialize_with = "nullable_number")]
    pub(super) cpu: Option<f64>,
    #[serde(deserialize_with = "nullable_number")]
    pub(super) memory_gib: Option<f64>,
    #[serde(default)]
    pub(super) data_gb: RawTold<f64>,
    #[serde(default)]
    pub(super) constraints: Option<RawConstraints>,
    #[serde(default)]
    pub(super) source: Option<String>,
    #[serde(default)]
    pub(super) workload: Option<RawWorkload>,
    #[serde(default)]
    pub(super) traffic: RawTraffic,
}

/// A service's `traffic` as written: absent, `"declared"`, or a fact
/// (`null`: never observed; a number or fact object: the window in
/// seconds over which it was observed).
#[derive(Debug, Default)]
pub(super) enum RawTraffic {
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
pub(super) struct RawWorkload {
    #[serde(default)]
    pub(super) api_version: Option<String>,
    pub(super) kind: String,
    pub(super) namespace: String,
    pub(super) name: String,
}

/// A number or `null`. With `deserialize_with` (and no `default`) serde
/// still requires the field to be present, which a plain `Option` would
/// not: an absent request is a typo, an explicit `null` says "unknown".
pub(super) fn nullable_number<'de, D: Deserializer<'de>>(d: D) -> Result<Option<f64>, D::Error> {
    Option::<f64>::deserialize(d)
}

/// A service fact that may be unknown (`data_gb`,
/// `constraints.local_volumes`) as written: absent, its value, `null`, or
/// `{"unknown": "<why>"}` (docs/estate-format.md "Unknown data").
#[derive(Debug, Default)]
pub(super) enum RawTold<T> {
    #[default]
    Absent,
    Value(T),
    Null,
    Unknown(String),
}

/// The values a [`RawTold`] holds: a number or a boolean.
pub(super) trait ToldValue: Sized {
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
pub(super) struct RawConstraints {
    #[serde(default)]
    pub(super) local_volumes: RawTold<bool>,
    #[serde(default)]
    pub(super) pinned: Option<bool>,
    #[serde(default)]
    pub(super) jurisdictions: Option<Vec<String>>,
    #[serde(default)]
    pub(super) trust_zone: Option<String>,
    #[serde(default)]
    pub(super) tiers: Option<Vec<String>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawFlow {
    pub(super) from: String,
    pub(super) to: String,
    #[serde(default)]
    pub(super) weight: RawFact,
    #[serde(default)]
    pub(super) mb_s: RawFact,
}

/// A fact as written: absent/null, a bare number, or an object.
#[derive(Debug, Default)]
pub(super) enum RawFact {
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

pub(super) const FACT_FIELDS: &[&str] = &["value", "class", "source", "observed_at"];
pub(super) const TOP_FIELDS: &[&str] = &[
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
pub(super) const SITE_FIELDS: &[&str] = &["id", "name", "lat", "lon", "jurisdiction"];
pub(super) const CLUSTER_FIELDS: &[&str] = &[
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
pub(super) const LINK_FIELDS: &[&str] = &["a", "b", "rtt_ms", "bandwidth_mb_s"];
pub(super) const PATH_FIELDS: &[&str] = &["a", "b", "rtt_ms"];
pub(super) const SERVICE_FIELDS: &[&str] = &[
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
pub(super) const WORKLOAD_FIELDS: &[&str] = &["api_version", "kind", "namespace", "name"];
pub(super) const CONSTRAINT_FIELDS: &[&str] = &[
    "local_volumes",
    "pinned",
    "jurisdictions",
    "trust_zone",
    "tiers",
];
pub(super) const FLOW_FIELDS: &[&str] = &["from", "to", "weight", "mb_s"];
