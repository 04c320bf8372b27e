//! The decider request, schema 1 (SPEC §9): what a decider is told about
//! an estate. `berth preview` prints exactly this.
//!
//! Hard constraints are already applied: each service lists the clusters it
//! may legally go to now (static constraints passed and capacity certified
//! to fit), and separately those whose fit can't be told. The field names
//! are a public contract; new fields are only ever added.

use serde::{Deserialize, Serialize};

use crate::advise::feasibility;
use crate::constraints::Fit;
use crate::cost::{Ctx, State};
use crate::estate::{format_time, Estate};
use crate::fact::Class;
use crate::policy::Policy;

/// The decider request, schema 1 (`docs/deciders.md`, "The request"):
/// what every decider is given, the same for each.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct DeciderRequest {
    pub schema: u32,
    pub estate: String,
    pub estate_version: String,
    pub policy_digest: String,
    pub now: String,
    pub clusters: Vec<RequestCluster>,
    /// One entry for every pair of distinct sites that host clusters.
    pub links: Vec<RequestLink>,
    /// Measured cluster-to-cluster paths (better evidence than `links`).
    pub paths: Vec<RequestPath>,
    /// Services with their requests, data, mobility, `candidates` and
    /// `cant_tell`.
    pub services: Vec<RequestService>,
    pub flows: Vec<RequestFlow>,
}

/// A number with the confidence class it has at evaluation time.
/// `value: null` means unknown.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[cfg_attr(feature = "schema", schemars(rename = "ValuedNow"))]
pub struct Valued {
    pub value: Option<f64>,
    pub class: Class,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct RequestCluster {
    pub id: String,
    pub site: String,
    pub tier: String,
    pub trust_zone: String,
    pub health: String,
    pub cpu_total: f64,
    pub memory_total_gib: f64,
    pub cpu_free: Valued,
    pub memory_free_gib: Valued,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct RequestLink {
    pub a: String,
    pub b: String,
    pub rtt_ms: f64,
    /// Rung of the evidence ladder: `site_link`, `great_circle`, `unknown`.
    pub derivation: String,
    pub class: Class,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct RequestPath {
    pub a: String,
    pub b: String,
    pub rtt_ms: f64,
    pub class: Class,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct RequestService {
    pub id: String,
    pub owner: String,
    pub cluster: String,
    /// CPU request, cores; `null` = unknown (its fits are then all
    /// can't tell, so `candidates` is empty).
    pub cpu: Option<f64>,
    /// Memory request, GiB; `null` = unknown.
    pub memory_gib: Option<f64>,
    /// GB of known data; 0 when the size is unknown (`unknown` then
    /// names `data_gb`).
    pub data_gb: f64,
    /// `movable`, `pinned` or `local_volumes`.
    pub mobility: String,
    /// Clusters it may move to now: constraints passed, fit certified.
    pub candidates: Vec<String>,
    /// Clusters that pass the constraints but whose fit can't be told —
    /// every one of them when whether it keeps data on local volumes is
    /// unknown.
    pub cant_tell: Vec<String>,
    /// Facts of the service nobody could tell (`data_gb`,
    /// `local_volumes`), in that order; absent when none.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub unknown: Vec<String>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct RequestFlow {
    pub from: String,
    pub to: String,
    pub weight: Valued,
    pub mb_s: Valued,
}

pub fn build(estate: &Estate, policy: &Policy, now: i64) -> DeciderRequest {
    let ctx = Ctx::new(estate, policy, now);
    let state = State::initial(estate);
    let feas = feasibility(estate);
    let valued = |f: &crate::fact::Fact| Valued {
        value: f.value,
        class: f.class_at(now, policy),
    };
    let clusters = estate
        .clusters
        .iter()
        .map(|c| RequestCluster {
            id: c.id.clone(),
            site: estate.sites[c.site].id.clone(),
            tier: c.tier.clone(),
            trust_zone: c.trust_zone.clone(),
            health: c.health.as_str().to_string(),
            cpu_total: c.cpu_total,
            memory_total_gib: c.memory_total_gib,
            cpu_free: valued(&c.cpu_free),
            memory_free_gib: valued(&c.memory_free_gib),
        })
        .collect();
    let mut hosts = vec![false; estate.sites.len()];
    for c in &estate.clusters {
        hosts[c.site] = true;
    }
    let mut links = Vec::new();
    for a in 0..estate.sites.len() {
        for b in a + 1..estate.sites.len() {
            if !(hosts[a] && hosts[b]) {
                continue;
            }
            let r = ctx.rtt.site(a, b);
            links.push(RequestLink {
                a: estate.sites[a].id.clone(),
                b: estate.sites[b].id.clone(),
                rtt_ms: r.ms,
                derivation: r.derivation.as_str().to_string(),
                class: r.class,
            });
        }
    }
    let paths = estate
        .paths
        .iter()
        .filter_map(|p| {
            p.rtt_ms.value.map(|v| RequestPath {
                a: estate.clusters[p.a].id.clone(),
                b: estate.clusters[p.b].id.clone(),
                rtt_ms: v,
                class: p.rtt_ms.class_at(now, policy),
            })
        })
        .collect();
    let services = estate
        .services
        .iter()
        .enumerate()
        .map(|(si, s)| {
            let mut candidates = Vec::new();
            let mut cant_tell = Vec::new();
            // Whether it may leave at all can't be told.
            let bound_unknown = s.constraints.local_volumes.why_unknown().is_some();
            for c in feas.candidates.of(si) {
                if bound_unknown {
                    cant_tell.push(estate.clusters[c].id.clone());
                    continue;
                }
                match state.fit(&ctx, si, c) {
                    Fit::Fits => candidates.push(estate.clusters[c].id.clone()),
                    Fit::CantTell { .. } => cant_tell.push(estate.clusters[c].id.clone()),
                    Fit::DoesNotFit { .. } => {}
                }
            }
            RequestService {
                id: s.id.clone(),
                owner: s.owner.clone(),
                cluster: estate.clusters[s.cluster].id.clone(),
                cpu: s.cpu,
                memory_gib: s.memory_gib,
                data_gb: s.data_gb_in_copy(),
                mobility: if s.local_volumes() {
                    "local_volumes"
                } else if s.constraints.pinned {
                    "pinned"
                } else {
                    "movable"
                }
                .to_string(),
                candidates,
                cant_tell,
                unknown: [
                    ("data_gb", s.data_gb.why_unknown()),
                    ("local_volumes", s.constraints.local_volumes.why_unknown()),
                ]
                .into_iter()
                .filter(|(_, why)| why.is_some())
                .map(|(f, _)| f.to_string())
                .collect(),
            }
        })
        .collect();
    let flows = estate
        .flows
        .iter()
        .map(|f| RequestFlow {
            from: estate.services[f.from].id.clone(),
            to: estate.services[f.to].id.clone(),
            weight: valued(&f.weight),
            mb_s: valued(&f.mb_s),
        })
        .collect();
    DeciderRequest {
        schema: 1,
        estate: estate.name.clone(),
        estate_version: crate::export::version(estate),
        policy_digest: policy.digest(),
        now: format_time(now),
        clusters,
        links,
        paths,
        services,
        flows,
    }
}
