//! The estate model (SPEC §1). It is built only by the loader (`load.rs`)
//! from the estate file format (`docs/estate-format.md`).
//!
//! Every collection is sorted by id at load, and every computation iterates
//! in that order, so the order of arrays in a file can never change a
//! result (not even the last bit of a floating-point sum).

use serde::Serialize;

use crate::fact::Fact;

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
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
    /// The cluster's name in Karmada (a `Cluster` object), where it differs
    /// from the id; `None` = the id. Read only by plan manifests.
    pub karmada_cluster: Option<String>,
    /// The cluster's name in Open Cluster Management (a `ManagedCluster`),
    /// where it differs from the id; `None` = the id.
    pub ocm_cluster: Option<String>,
    /// The cluster's name in the service mesh's metrics (Istio's
    /// `source_cluster`/`destination_cluster`), where it differs from the
    /// id; `None` = the id. Read only by the mesh import.
    pub mesh_cluster: Option<String>,
}

impl Cluster {
    /// The name Karmada knows this cluster by.
    pub fn karmada_name(&self) -> &str {
        self.karmada_cluster.as_deref().unwrap_or(&self.id)
    }
    /// The name Open Cluster Management knows this cluster by.
    pub fn ocm_name(&self) -> &str {
        self.ocm_cluster.as_deref().unwrap_or(&self.id)
    }
}

/// The Kubernetes object a service is (`workload` in the estate file):
/// what a multi-cluster controller's policy selects to move it.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Workload {
    /// e.g. `apps/v1`; `None` = the default of a built-in workload kind
    /// (`Workload::api_version`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub api_version: Option<String>,
    /// e.g. `Deployment`.
    pub kind: String,
    pub namespace: String,
    pub name: String,
}

impl Workload {
    /// The API version: as written, or `apps/v1` for the workload kinds
    /// the Kubernetes import reads; `None` for another kind written
    /// without one.
    pub fn api_version(&self) -> Option<&str> {
        match (&self.api_version, self.kind.as_str()) {
            (Some(v), _) => Some(v),
            (None, "Deployment" | "StatefulSet" | "DaemonSet" | "ReplicaSet") => Some("apps/v1"),
            (None, _) => None,
        }
    }

    /// The workload a `kubernetes:<cluster>/<namespace>/<Kind>/<name>`
    /// provenance names (`docs/kubernetes-import.md`; an empty namespace
    /// is `default`, as the import reads it).
    pub fn from_source(source: &str) -> Option<Workload> {
        let rest = source.strip_prefix("kubernetes:")?;
        let mut parts = rest.rsplitn(4, '/');
        let name = parts.next()?;
        let kind = parts.next()?;
        let namespace = parts.next()?;
        parts.next()?; // the cluster id (the rest: it may hold a `/`)
        if name.is_empty() || kind.is_empty() {
            return None;
        }
        Some(Workload {
            api_version: None,
            kind: kind.to_string(),
            namespace: if namespace.is_empty() {
                "default".to_string()
            } else {
                namespace.to_string()
            },
            name: name.to_string(),
        })
    }
}

/// An RTT between two sites (`link`) or two clusters (`path`); `a < b`.
#[derive(Clone, Debug, PartialEq)]
pub struct RttFact {
    pub a: usize,
    pub b: usize,
    pub rtt_ms: Fact,
    pub bandwidth_mb_s: Option<f64>,
}

/// A service fact that is known, or unknown with the reason it could not
/// be told (docs/estate-format.md "Unknown data"): written
/// `{"unknown": "<why>"}` (or `null`) in the estate file.
#[derive(Clone, Debug, PartialEq)]
pub enum Told<T> {
    Known(T),
    /// Why nobody could tell it, e.g. "PersistentVolumeClaims could not
    /// be listed: forbidden".
    Unknown(String),
}

impl<T: Copy> Told<T> {
    /// The value when known.
    pub fn known(&self) -> Option<T> {
        match self {
            Told::Known(v) => Some(*v),
            Told::Unknown(_) => None,
        }
    }

    /// Why it is unknown; `None` when known.
    pub fn why_unknown(&self) -> Option<&str> {
        match self {
            Told::Known(_) => None,
            Told::Unknown(why) => Some(why),
        }
    }
}

/// The reason of an unknown written as a bare `null`.
pub const NOT_STATED: &str = "not stated";

#[derive(Clone, Debug, PartialEq)]
pub struct Constraints {
    /// Whether its data is bound to local volumes (`Known(true)`: it
    /// cannot move); unknown: nobody could tell, so no move of it is
    /// backed by evidence (docs/advice.md §4 "Unknown data").
    pub local_volumes: Told<bool>,
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
    /// CPU request, cores; `None` = unknown (e.g. a container that
    /// declares no request). Never read as zero by a fit: every fit that
    /// involves an unknown request is *can't tell*.
    pub cpu: Option<f64>,
    /// Memory request, GiB; `None` = unknown, as for `cpu`.
    pub memory_gib: Option<f64>,
    /// Persistent data a move would copy, GB; unknown: never read as 0 —
    /// the copy term counts only known data ([`Service::data_gb_in_copy`])
    /// and every move of the service rests on the unknown size.
    pub data_gb: Told<f64>,
    pub constraints: Constraints,
    /// Who or what wrote the entry (e.g. an importer's provenance key);
    /// `None` = written by hand. Carried; read only by plan manifests
    /// (`Service::workload_ref`), never by advice.
    pub source: Option<String>,
    /// The Kubernetes object this service is, when the file says so.
    pub workload: Option<Workload>,
    /// What the file says of this service's traffic (`traffic`); `None`:
    /// nothing, the estate's default applies ([`Estate::traffic_of`]).
    pub traffic: Option<Traffic>,
}

/// Whether a service's traffic is known (docs/advice.md §2 "Traffic
/// coverage"): "no flows" means a measured zero only for a service whose
/// traffic something observed.
#[derive(Clone, Debug, PartialEq)]
pub enum Traffic {
    /// The file declares the service's flows complete as written (a
    /// hand-written estate): no coverage fact, the flows' own facts decide.
    Declared,
    /// The coverage fact: `value` is the window, in seconds, over which
    /// a mesh import or agent pass observed the service's traffic, with
    /// its class, source and time like any fact (it ages like any fact);
    /// `value == None`: never observed, *traffic unknown*.
    Observed(Fact),
}

/// The estate-wide default for services that say nothing of their
/// traffic (the file's top-level `traffic`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TrafficDefault {
    /// `"declared"`: every such service's flows are complete as written.
    Declared,
    /// `"unknown"`: no such service's traffic has been observed.
    Unknown,
}

impl TrafficDefault {
    pub fn as_str(self) -> &'static str {
        match self {
            TrafficDefault::Declared => "declared",
            TrafficDefault::Unknown => "unknown",
        }
    }
}

/// The source of the coverage fact of a service whose traffic nothing
/// observed.
pub const NEVER_OBSERVED: &str = "never observed";

/// The owner an importer writes when it cannot tell one (the estate
/// requires an owner): not an owner, so no two services share it.
pub const UNKNOWN_OWNER: &str = "unknown";

impl Service {
    /// Whether the owner is known ([`UNKNOWN_OWNER`] is not).
    pub fn owner_known(&self) -> bool {
        self.owner != UNKNOWN_OWNER
    }

    /// The Kubernetes object this service is: its `workload`, else the one
    /// its Kubernetes-import `source` names; `None` when neither says.
    pub fn workload_ref(&self) -> Option<Workload> {
        self.workload
            .clone()
            .or_else(|| self.source.as_deref().and_then(Workload::from_source))
    }

    /// The CPU request as load accounting counts it when the service moves
    /// (cores). An unknown request moves no *known* load: it counts 0 in
    /// loads and headroom points, exactly as an unknown free capacity
    /// contributes no headroom, and is surfaced instead — every fit that
    /// involves it is *can't tell* (`constraints::fit_request`), advice
    /// lists it under `unknown_requests`, and a what-if that moves it warns.
    #[inline]
    pub fn cpu_in_load(&self) -> f64 {
        self.cpu.unwrap_or(0.0)
    }

    /// The memory request as load accounting counts it (GiB); see
    /// [`Service::cpu_in_load`].
    #[inline]
    pub fn memory_in_load(&self) -> f64 {
        self.memory_gib.unwrap_or(0.0)
    }

    /// The data size as the copy term counts it (GB): an unknown size
    /// copies no *known* data — 0 here, exactly as an unknown request
    /// moves no known load ([`Service::cpu_in_load`]) — and is surfaced
    /// instead: every move of the service names it as a deciding fact,
    /// guessed, so none is recommended (`cost::Ctx::unknown_facts`).
    #[inline]
    pub fn data_gb_in_copy(&self) -> f64 {
        self.data_gb.known().unwrap_or(0.0)
    }

    /// Whether the service is known to keep its data on local volumes
    /// (an unknown status is not a refusal: it is a deciding fact).
    #[inline]
    pub fn local_volumes(&self) -> bool {
        self.constraints.local_volumes == Told::Known(true)
    }

    /// The estate fields of the requests that are unknown, in field order.
    pub fn unknown_requests(&self) -> Vec<&'static str> {
        let mut out = Vec::new();
        if self.cpu.is_none() {
            out.push("cpu");
        }
        if self.memory_gib.is_none() {
            out.push("memory_gib");
        }
        out
    }
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
    /// The file's top-level `traffic`, as written; `None`: absent (see
    /// [`Estate::traffic_of`]).
    pub traffic: Option<TrafficDefault>,
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

    /// The coverage of service `s`'s traffic: `None` when its flows are
    /// declared complete (no coverage fact decides), else the coverage
    /// fact (a value: observed over that many seconds; none: never
    /// observed).
    ///
    /// What the service's own `traffic` says, else the file's top-level
    /// `traffic`. A file that says nothing of coverage (every estate
    /// written before coverage existed) reads as it always did — flows
    /// declared complete — except for a service written by the Kubernetes
    /// import (a `kubernetes:` `source`): manifests show no traffic, so
    /// such a service's traffic is unknown until a mesh import or an agent
    /// pass observes it (docs/advice.md §2 "Traffic coverage").
    pub fn traffic_of(&self, s: usize) -> Option<Fact> {
        let service = &self.services[s];
        match &service.traffic {
            Some(Traffic::Declared) => None,
            Some(Traffic::Observed(f)) => Some(f.clone()),
            None => match self.traffic {
                Some(TrafficDefault::Declared) => None,
                Some(TrafficDefault::Unknown) => Some(Fact::unknown(NEVER_OBSERVED)),
                None => service
                    .source
                    .as_deref()
                    .is_some_and(|src| src.starts_with("kubernetes:"))
                    .then(|| Fact::unknown(NEVER_OBSERVED)),
            },
        }
    }

    /// Every fact of the estate, in model order: clusters' free capacity,
    /// links' and paths' RTTs, flows' weights and MB/s, services' traffic
    /// coverage.
    fn facts_mut(&mut self) -> impl Iterator<Item = &mut crate::fact::Fact> {
        let clusters = self
            .clusters
            .iter_mut()
            .flat_map(|c| [&mut c.cpu_free, &mut c.memory_free_gib]);
        let rtts = self
            .links
            .iter_mut()
            .chain(self.paths.iter_mut())
            .map(|r| &mut r.rtt_ms);
        let flows = self
            .flows
            .iter_mut()
            .flat_map(|f| [&mut f.weight, &mut f.mb_s]);
        let coverage = self
            .services
            .iter_mut()
            .filter_map(|s| match &mut s.traffic {
                Some(Traffic::Observed(f)) => Some(f),
                _ => None,
            });
        clusters.chain(rtts).chain(flows).chain(coverage)
    }

    /// Move every time in the estate (each fact's observation, the file's,
    /// each cluster's enrolment) by `by_s` seconds, keeping every age
    /// relative to a `now` moved by the same amount. The server seeds the
    /// sample estate this way, so its designed mix of fresh and stale facts
    /// (and its young clusters) holds on any day.
    pub fn shift_times(&mut self, by_s: i64) {
        if let Some(t) = self.observed_at.as_mut() {
            *t += by_s;
        }
        for c in &mut self.clusters {
            if let Some(t) = c.enrolled_at.as_mut() {
                *t += by_s;
            }
        }
        for f in self.facts_mut() {
            if let Some(t) = f.observed_at.as_mut() {
                *t += by_s;
            }
        }
    }

    /// The newest observation time of any fact with a value (or of the
    /// file, for facts that carry none): how recently anything was
    /// measured or reported. `None` when no fact has a time.
    pub fn newest_observation(&self) -> Option<i64> {
        self.facts()
            .filter(|f| f.value.is_some())
            .filter_map(|f| f.observed_at.or(self.observed_at))
            .max()
    }

    /// Every fact of the estate, in the order of [`Estate::facts_mut`].
    fn facts(&self) -> impl Iterator<Item = &crate::fact::Fact> {
        let clusters = self
            .clusters
            .iter()
            .flat_map(|c| [&c.cpu_free, &c.memory_free_gib]);
        let rtts = self
            .links
            .iter()
            .chain(self.paths.iter())
            .map(|r| &r.rtt_ms);
        let flows = self.flows.iter().flat_map(|f| [&f.weight, &f.mb_s]);
        let coverage = self.services.iter().filter_map(|s| match &s.traffic {
            Some(Traffic::Observed(f)) => Some(f),
            _ => None,
        });
        clusters.chain(rtts).chain(flows).chain(coverage)
    }
}

/// One thing wrong with an estate file.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
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

pub use crate::load::{load, yaml_value};

/// Parse an RFC 3339 time into unix seconds.
///
/// The common UTC form `YYYY-MM-DDTHH:MM:SSZ` is parsed by hand (a large
/// estate has one per fact); anything else goes through chrono.
pub fn parse_time(s: &str) -> Option<i64> {
    let b = s.as_bytes();
    if b.len() == 20
        && b[4] == b'-'
        && b[7] == b'-'
        && b[10] == b'T'
        && b[13] == b':'
        && b[16] == b':'
        && b[19] == b'Z'
    {
        let num = |r: std::ops::Range<usize>| -> Option<i64> {
            b[r].iter().try_fold(0i64, |acc, &c| {
                c.is_ascii_digit().then(|| acc * 10 + (c - b'0') as i64)
            })
        };
        let (y, mo, d) = (num(0..4)?, num(5..7)?, num(8..10)?);
        let (h, mi, se) = (num(11..13)?, num(14..16)?, num(17..19)?);
        let leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
        let days_in = [
            31,
            if leap { 29 } else { 28 },
            31,
            30,
            31,
            30,
            31,
            31,
            30,
            31,
            30,
            31,
        ];
        if !(1..=12).contains(&mo)
            || d < 1
            || d > days_in[(mo - 1) as usize]
            || h > 23
            || mi > 59
            || se > 59
        {
            return None;
        }
        return Some(days_from_civil(y, mo, d) * 86_400 + h * 3600 + mi * 60 + se);
    }
    chrono::DateTime::parse_from_rfc3339(s)
        .ok()
        .map(|t| t.timestamp())
}

/// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's
/// civil-from-days inverse).
fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = if y >= 0 { y } else { y - 399 } / 400;
    let yoe = y - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// Format unix seconds as RFC 3339 UTC.
pub fn format_time(t: i64) -> String {
    chrono::DateTime::from_timestamp(t, 0)
        .map(|d| d.format("%Y-%m-%dT%H:%M:%SZ").to_string())
        .unwrap_or_else(|| t.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fast_time_path_agrees_with_chrono() {
        for s in [
            "1970-01-01T00:00:00Z",
            "2026-11-30T04:05:00Z",
            "2024-02-29T23:59:59Z",
            "2000-03-01T00:00:00Z",
            "1969-12-31T23:59:59Z",
        ] {
            let chrono = chrono::DateTime::parse_from_rfc3339(s).unwrap().timestamp();
            assert_eq!(parse_time(s), Some(chrono), "{s}");
        }
        assert_eq!(parse_time("2025-02-29T00:00:00Z"), None);
        assert_eq!(parse_time("2026-13-01T00:00:00Z"), None);
        assert_eq!(
            parse_time("2026-11-30T05:05:00+01:00"),
            parse_time("2026-11-30T04:05:00Z")
        );
        assert_eq!(parse_time("2026-11-30 04:05"), None);
    }
}

/// Something in a valid estate that is probably a mistake: not an error
/// (the estate loads), but worth saying before anyone trusts the advice.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Lint {
    /// JSON-pointer-like location in canonical (id-sorted) terms, e.g.
    /// `services/payments/constraints/jurisdictions`.
    pub at: String,
    pub message: String,
}

/// Constraint values that match nothing in the estate (a typo such as `EU`
/// for `eu` silently makes a service immovable), and services whose current
/// placement breaks their own constraints.
pub fn lint(e: &Estate) -> Vec<Lint> {
    use std::collections::BTreeSet;
    let jurisdictions: BTreeSet<&str> = e.sites.iter().map(|s| s.jurisdiction.as_str()).collect();
    let tiers: BTreeSet<&str> = e.clusters.iter().map(|c| c.tier.as_str()).collect();
    let zones: BTreeSet<&str> = e.clusters.iter().map(|c| c.trust_zone.as_str()).collect();
    let mut out = Vec::new();
    for s in &e.services {
        let k = &s.constraints;
        let at = |f: &str| format!("services/{}/constraints/{f}", s.id);
        let unknown = |field: &str, noun: &str, values: &[String], known: &BTreeSet<&str>| {
            values
                .iter()
                .filter(|v| !known.contains(v.as_str()))
                .map(|v| Lint {
                    at: at(field),
                    message: format!(
                        "{v:?} matches no {noun} in the estate (known: {})",
                        known.iter().copied().collect::<Vec<_>>().join(", ")
                    ),
                })
                .collect::<Vec<_>>()
        };
        if let Some(j) = &k.jurisdictions {
            out.extend(unknown(
                "jurisdictions",
                "site jurisdiction",
                j,
                &jurisdictions,
            ));
        }
        if let Some(t) = &k.tiers {
            out.extend(unknown("tiers", "cluster tier", t, &tiers));
        }
        if let Some(z) = &k.trust_zone {
            out.extend(unknown(
                "trust_zone",
                "cluster trust zone",
                std::slice::from_ref(z),
                &zones,
            ));
        }
        let here = &e.clusters[s.cluster];
        let mut broken = Vec::new();
        if k.jurisdictions
            .as_ref()
            .is_some_and(|j| !j.contains(&e.sites[here.site].jurisdiction))
        {
            broken.push("jurisdictions");
        }
        if k.tiers.as_ref().is_some_and(|t| !t.contains(&here.tier)) {
            broken.push("tiers");
        }
        if k.trust_zone.as_ref().is_some_and(|z| z != &here.trust_zone) {
            broken.push("trust_zone");
        }
        if !broken.is_empty() {
            out.push(Lint {
                at: format!("services/{}", s.id),
                message: format!(
                    "runs on {} although its own constraints ({}) rule that cluster out",
                    here.id,
                    broken.join(", ")
                ),
            });
        }
    }
    out
}
