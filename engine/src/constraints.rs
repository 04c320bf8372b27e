//! Hard constraints and three-valued fit (SPEC §4): the feasibility stage.
//!
//! Nothing here looks at cost. A destination that fails a hard constraint
//! is refused with a stable code and a message a person understands; no
//! saving elsewhere can override it. Capacity fit is three-valued: it is
//! certified only at the pessimistic end of the free-capacity fact's
//! margin, refused only at the optimistic end, and anything in between (or
//! an unknown free capacity, or an unknown request) is *can't tell*, with
//! the fact named.

use serde::Serialize;

use crate::estate::{Estate, Health};
use crate::policy::Policy;

/// Stable refusal codes. The strings are a public contract (API, deciders,
/// the web pages); add new ones, never rename.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Code {
    /// Data bound to a node or cluster: the service cannot leave.
    LocalVolumes,
    /// Pinned to specific nodes: the service cannot leave its cluster.
    Pinned,
    /// The destination's site is in a jurisdiction the service may not use.
    Jurisdiction,
    /// The destination is in another trust zone.
    TrustZone,
    /// The destination's tier is not allowed for the service.
    Tier,
    /// The destination is draining and takes nothing new.
    ClusterDraining,
    /// The destination is down.
    ClusterDown,
    /// Not enough CPU even at the optimistic end of the free-CPU fact.
    NoRoomCpu,
    /// Not enough memory even at the optimistic end of the free-memory fact.
    NoRoomMemory,
    /// Fit can't be told: free capacity unknown or too uncertain.
    CantTell,
    /// A proposal named a service that does not exist.
    UnknownService,
    /// A proposal named a cluster that does not exist.
    UnknownCluster,
    /// A proposal to move a service where it already is.
    AlreadyThere,
    /// A proposal for a service that an earlier proposal of the same
    /// decider already named (accepted or refused): only the first counts.
    ProposedTwice,
    /// A proposal whose fields are missing or malformed.
    Malformed,
    /// The destination is being evacuated (in a what-if scenario).
    Evacuated,
}

impl Code {
    pub fn as_str(self) -> &'static str {
        match self {
            Code::LocalVolumes => "local_volumes",
            Code::Pinned => "pinned",
            Code::Jurisdiction => "jurisdiction",
            Code::TrustZone => "trust_zone",
            Code::Tier => "tier",
            Code::ClusterDraining => "cluster_draining",
            Code::ClusterDown => "cluster_down",
            Code::NoRoomCpu => "no_room_cpu",
            Code::NoRoomMemory => "no_room_memory",
            Code::CantTell => "cant_tell",
            Code::UnknownService => "unknown_service",
            Code::UnknownCluster => "unknown_cluster",
            Code::AlreadyThere => "already_there",
            Code::ProposedTwice => "proposed_twice",
            Code::Malformed => "malformed",
            Code::Evacuated => "evacuated",
        }
    }
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Refusal {
    pub code: Code,
    pub message: String,
}

/// Does `service` refuse to leave its cluster whatever the destination?
pub fn immobility(estate: &Estate, service: usize) -> Option<Refusal> {
    let s = &estate.services[service];
    let here = &estate.clusters[s.cluster].id;
    if s.constraints.local_volumes {
        return Some(Refusal {
            code: Code::LocalVolumes,
            message: format!("{} keeps its data on local volumes in {here}", s.id),
        });
    }
    if s.constraints.pinned {
        return Some(Refusal {
            code: Code::Pinned,
            message: format!("{} is pinned to nodes of {here}", s.id),
        });
    }
    None
}

/// Whether `service` may move to `cluster` as far as the static hard
/// constraints go: the allocation-free twin of [`static_refusals`], for
/// the hot path. `static_refusals(..).is_empty()` must equal this.
pub fn statically_allowed(estate: &Estate, service: usize, cluster: usize) -> bool {
    let s = &estate.services[service];
    let c = &estate.clusters[cluster];
    let k = &s.constraints;
    !k.local_volumes
        && !k.pinned
        && matches!(c.health, Health::Healthy | Health::Watch)
        && k.jurisdictions
            .as_ref()
            .is_none_or(|j| j.contains(&estate.sites[c.site].jurisdiction))
        && required_zone(estate, service) == c.trust_zone
        && k.tiers.as_ref().is_none_or(|t| t.contains(&c.tier))
}

/// The trust zone `service` must stay in: the one it declares, else the
/// zone of the cluster it runs on now. Trust zones segregate clusters for
/// compliance, so advice never moves a service across a zone boundary
/// that nobody declared it may cross (a PCI enclave takes only services
/// that say they belong there, and no PCI service drifts out).
pub fn required_zone(estate: &Estate, service: usize) -> &str {
    let s = &estate.services[service];
    s.constraints
        .trust_zone
        .as_deref()
        .unwrap_or(&estate.clusters[s.cluster].trust_zone)
}

/// Every static hard constraint (everything but capacity) of moving
/// `service` to `cluster`, in a fixed order. Empty = allowed.
pub fn static_refusals(estate: &Estate, service: usize, cluster: usize) -> Vec<Refusal> {
    let s = &estate.services[service];
    let c = &estate.clusters[cluster];
    let site = &estate.sites[c.site];
    let mut out = Vec::new();
    if let Some(r) = immobility(estate, service) {
        out.push(r);
    }
    match c.health {
        Health::Draining => out.push(Refusal {
            code: Code::ClusterDraining,
            message: format!("{} is draining and takes no new services", c.id),
        }),
        Health::Down => out.push(Refusal {
            code: Code::ClusterDown,
            message: format!("{} is down", c.id),
        }),
        Health::Healthy | Health::Watch => {}
    }
    if let Some(allowed) = &s.constraints.jurisdictions {
        if !allowed.contains(&site.jurisdiction) {
            out.push(Refusal {
                code: Code::Jurisdiction,
                message: format!(
                    "the data of {} may stay only in {}; {} is in {} ({})",
                    s.id,
                    allowed.join(", "),
                    c.id,
                    site.jurisdiction,
                    site.name
                ),
            });
        }
    }
    let zone = required_zone(estate, service);
    if zone != c.trust_zone {
        let why = if s.constraints.trust_zone.is_some() {
            format!("{} must run in trust zone {zone}", s.id)
        } else {
            format!(
                "{} runs in trust zone {zone} and declares no other (trust zones are never crossed implicitly)",
                s.id
            )
        };
        out.push(Refusal {
            code: Code::TrustZone,
            message: format!("{why}; {} is in {}", c.id, c.trust_zone),
        });
    }
    if let Some(tiers) = &s.constraints.tiers {
        if !tiers.contains(&c.tier) {
            out.push(Refusal {
                code: Code::Tier,
                message: format!(
                    "{} may run only on {} clusters; {} is {}",
                    s.id,
                    tiers.join("/"),
                    c.id,
                    c.tier
                ),
            });
        }
    }
    out
}

/// Projected capacity of one cluster after the moves applied so far.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Load {
    /// Net CPU moved in (negative: moved out), cores.
    pub cpu_in: f64,
    /// Net memory moved in, GiB.
    pub memory_in: f64,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(tag = "fit", rename_all = "snake_case")]
pub enum Fit {
    Fits,
    DoesNotFit { refusal: Refusal },
    CantTell { fact: String, message: String },
}

/// Three-valued fit of `cpu`/`memory` extra on `cluster` given its load.
pub fn fit(
    estate: &Estate,
    policy: &Policy,
    now: i64,
    cluster: usize,
    load: Load,
    cpu: f64,
    memory_gib: f64,
) -> Fit {
    fit_needs(
        estate,
        policy,
        now,
        cluster,
        load,
        [Some(cpu), Some(memory_gib)],
        "",
    )
}

/// Three-valued fit of `service`'s own requests on `cluster` given its
/// load. A request that is unknown makes the fit *can't tell*, with the
/// request named as the fact (`<service> cpu`, `<service> memory_gib`) —
/// unless the other resource certainly does not fit, which is certain
/// whatever the unknown one is.
pub fn fit_request(
    estate: &Estate,
    policy: &Policy,
    now: i64,
    service: usize,
    cluster: usize,
    load: Load,
) -> Fit {
    let s = &estate.services[service];
    fit_needs(
        estate,
        policy,
        now,
        cluster,
        load,
        [s.cpu, s.memory_gib],
        &s.id,
    )
}

/// [`fit`] with needs that may be unknown (`None`), of the service `who`
/// (named in the can't-tell fact of an unknown need).
fn fit_needs(
    estate: &Estate,
    policy: &Policy,
    now: i64,
    cluster: usize,
    load: Load,
    [cpu, memory_gib]: [Option<f64>; 2],
    who: &str,
) -> Fit {
    let c = &estate.clusters[cluster];
    let mut cant_tell: Option<(String, String)> = None;
    for (fact, need, moved_in, resource, unit, code) in [
        (
            &c.cpu_free,
            cpu,
            load.cpu_in,
            "cpu_free",
            "cores",
            Code::NoRoomCpu,
        ),
        (
            &c.memory_free_gib,
            memory_gib,
            load.memory_in,
            "memory_free_gib",
            "GiB",
            Code::NoRoomMemory,
        ),
    ] {
        let Some(need) = need else {
            let (field, word) = request_words(resource);
            cant_tell.get_or_insert((
                format!("{who} {field}"),
                format!("the {word} request of {who} is unknown"),
            ));
            continue;
        };
        let key = format!("{} {resource}", c.id);
        let Some(free) = fact.value else {
            cant_tell.get_or_insert((
                key,
                format!("free {} of {} is unknown", resource_word(resource), c.id),
            ));
            continue;
        };
        let class = fact.class_at(now, policy);
        let margin = policy.margin(class);
        let pessimistic = pessimistic_free(free, margin, moved_in);
        let optimistic = optimistic_free(free, margin, moved_in);
        if need > optimistic {
            return Fit::DoesNotFit {
                refusal: Refusal {
                    code,
                    message: format!(
                        "needs {} {unit} but {} has at most {} {unit} free ({} {} ±{}%)",
                        round2(need),
                        c.id,
                        round2(optimistic.max(0.0)),
                        class.as_str(),
                        resource_word(resource),
                        round2(margin * 100.0)
                    ),
                },
            };
        }
        if need > pessimistic {
            cant_tell.get_or_insert((
                key,
                format!(
                    "needs {} {unit}; {} has between {} and {} {unit} free ({} fact, ±{}%)",
                    round2(need),
                    c.id,
                    round2(pessimistic.max(0.0)),
                    round2(optimistic),
                    class.as_str(),
                    round2(margin * 100.0)
                ),
            ));
        }
    }
    match cant_tell {
        None => Fit::Fits,
        Some((fact, message)) => Fit::CantTell { fact, message },
    }
}

/// Free capacity at the pessimistic end of its margin, after `moved_in`.
/// The one expression both `fit` and `State::certainly_fits` use.
#[inline]
pub fn pessimistic_free(free: f64, margin: f64, moved_in: f64) -> f64 {
    free * (1.0 - margin) - moved_in
}

/// Free capacity at the optimistic end of its margin, after `moved_in`.
#[inline]
pub fn optimistic_free(free: f64, margin: f64, moved_in: f64) -> f64 {
    free * (1.0 + margin) - moved_in
}

/// The service field and the word for the request matching a cluster's
/// free-capacity field.
fn request_words(resource: &str) -> (&'static str, &'static str) {
    if resource == "cpu_free" {
        ("cpu", "CPU")
    } else {
        ("memory_gib", "memory")
    }
}

fn resource_word(resource: &str) -> &'static str {
    if resource == "cpu_free" {
        "CPU"
    } else {
        "memory"
    }
}

/// Round for messages only (never for computation).
pub fn round2(x: f64) -> f64 {
    (x * 100.0).round() / 100.0
}
