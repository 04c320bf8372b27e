//! Hard constraints and three-valued fit (SPEC §4): the feasibility stage.
//!
//! Nothing here looks at cost. A destination that fails a hard constraint
//! is refused with a stable code and a message a person understands; no
//! saving elsewhere can override it. Capacity fit is three-valued: it is
//! certified only at the pessimistic end of the free-capacity fact's
//! margin, refused only at the optimistic end, and anything in between (or
//! an unknown free capacity, or an unknown request) is *can't tell*, with
//! the fact named.
//!
//! Every rule is written once and evaluates to a cheap code kept as data
//! ([`RefusalCode`] for the static constraints, [`FitCode`] for fit), in
//! the style of a scheduler's filter plugins: the hot path asks only
//! whether there is a code and allocates nothing; the words a person
//! reads are built from the code (`explain`) only when a result shows
//! them.

use serde::{Deserialize, Serialize};

use crate::estate::{Cluster, Estate, Health};
use crate::fact::{Class, Fact};
use crate::policy::Policy;

/// Stable refusal codes. The strings are a public contract (API, deciders,
/// the web pages); add new ones, never rename.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[cfg_attr(feature = "schema", schemars(rename = "RefusalCode"))]
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
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Refusal {
    pub code: Code,
    pub message: String,
}

/// A static hard constraint refusing a move, as data: which rule said no
/// and the indices its words need, nothing else. The hot path (advice's
/// candidate filter) asks only whether there is one; the words are built
/// by [`RefusalCode::explain`] when a result shows them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RefusalCode {
    LocalVolumes { service: usize },
    Pinned { service: usize },
    ClusterDraining { cluster: usize },
    ClusterDown { cluster: usize },
    Jurisdiction { service: usize, cluster: usize },
    TrustZone { service: usize, cluster: usize },
    Tier { service: usize, cluster: usize },
}

impl RefusalCode {
    /// The public code of this refusal.
    pub fn code(self) -> Code {
        match self {
            RefusalCode::LocalVolumes { .. } => Code::LocalVolumes,
            RefusalCode::Pinned { .. } => Code::Pinned,
            RefusalCode::ClusterDraining { .. } => Code::ClusterDraining,
            RefusalCode::ClusterDown { .. } => Code::ClusterDown,
            RefusalCode::Jurisdiction { .. } => Code::Jurisdiction,
            RefusalCode::TrustZone { .. } => Code::TrustZone,
            RefusalCode::Tier { .. } => Code::Tier,
        }
    }

    /// Immobility (the service cannot leave whatever the destination).
    pub fn is_immobility(self) -> bool {
        matches!(
            self,
            RefusalCode::LocalVolumes { .. } | RefusalCode::Pinned { .. }
        )
    }

    /// The words a person reads.
    pub fn message(self, estate: &Estate) -> String {
        let service = |s: usize| &estate.services[s];
        let cluster = |c: usize| &estate.clusters[c];
        let home = |s: usize| &estate.clusters[service(s).cluster].id;
        match self {
            RefusalCode::LocalVolumes { service: s } => format!(
                "{} keeps its data on local volumes in {}",
                service(s).id,
                home(s)
            ),
            RefusalCode::Pinned { service: s } => {
                format!("{} is pinned to nodes of {}", service(s).id, home(s))
            }
            RefusalCode::ClusterDraining { cluster: c } => {
                format!("{} is draining and takes no new services", cluster(c).id)
            }
            RefusalCode::ClusterDown { cluster: c } => format!("{} is down", cluster(c).id),
            RefusalCode::Jurisdiction {
                service: s,
                cluster: c,
            } => {
                let site = &estate.sites[cluster(c).site];
                format!(
                    "the data of {} may stay only in {}; {} is in {} ({})",
                    service(s).id,
                    service(s)
                        .constraints
                        .jurisdictions
                        .as_deref()
                        .unwrap_or_default()
                        .join(", "),
                    cluster(c).id,
                    site.jurisdiction,
                    site.name
                )
            }
            RefusalCode::TrustZone {
                service: s,
                cluster: c,
            } => {
                let zone = required_zone(estate, s);
                let why = if service(s).constraints.trust_zone.is_some() {
                    format!("{} must run in trust zone {zone}", service(s).id)
                } else {
                    format!(
                        "{} runs in trust zone {zone} and declares no other (trust zones are never crossed implicitly)",
                        service(s).id
                    )
                };
                format!("{why}; {} is in {}", cluster(c).id, cluster(c).trust_zone)
            }
            RefusalCode::Tier {
                service: s,
                cluster: c,
            } => format!(
                "{} may run only on {} clusters; {} is {}",
                service(s).id,
                service(s)
                    .constraints
                    .tiers
                    .as_deref()
                    .unwrap_or_default()
                    .join("/"),
                cluster(c).id,
                cluster(c).tier
            ),
        }
    }

    /// Code and words, for a result.
    pub fn explain(self, estate: &Estate) -> Refusal {
        Refusal {
            code: self.code(),
            message: self.message(estate),
        }
    }
}

/// One static hard constraint: refuses moving `service` to `cluster`, or
/// not. Each rule is written once, here, and both the yes/no question and
/// the spelled-out refusals run the same list.
type StaticRule = fn(&Estate, usize, usize) -> Option<RefusalCode>;

/// The static hard constraints (everything but capacity), in the fixed
/// order refusals are listed in.
const STATIC_RULES: [StaticRule; 5] = [immobile, cluster_health, jurisdiction, trust_zone, tier];

/// Everything [`STATIC_RULES`] read about the service, apart from
/// immobility (checked first and alone): two services with one profile are
/// allowed on exactly the same clusters (`advise::Candidates` shares their
/// lists). A rule that reads anything else of the service must add it here.
pub type StaticProfile<'a> = (Option<&'a [String]>, &'a str, Option<&'a [String]>);

pub fn static_profile(estate: &Estate, service: usize) -> StaticProfile<'_> {
    let k = &estate.services[service].constraints;
    (
        k.jurisdictions.as_deref(),
        required_zone(estate, service),
        k.tiers.as_deref(),
    )
}

#[inline]
fn immobile(estate: &Estate, service: usize, _cluster: usize) -> Option<RefusalCode> {
    immobility(estate, service)
}

#[inline]
fn cluster_health(estate: &Estate, _service: usize, cluster: usize) -> Option<RefusalCode> {
    match estate.clusters[cluster].health {
        Health::Draining => Some(RefusalCode::ClusterDraining { cluster }),
        Health::Down => Some(RefusalCode::ClusterDown { cluster }),
        Health::Healthy | Health::Watch => None,
    }
}

#[inline]
fn jurisdiction(estate: &Estate, service: usize, cluster: usize) -> Option<RefusalCode> {
    let allowed = estate.services[service]
        .constraints
        .jurisdictions
        .as_ref()?;
    let site = &estate.sites[estate.clusters[cluster].site];
    (!allowed.contains(&site.jurisdiction))
        .then_some(RefusalCode::Jurisdiction { service, cluster })
}

#[inline]
fn trust_zone(estate: &Estate, service: usize, cluster: usize) -> Option<RefusalCode> {
    (required_zone(estate, service) != estate.clusters[cluster].trust_zone)
        .then_some(RefusalCode::TrustZone { service, cluster })
}

#[inline]
fn tier(estate: &Estate, service: usize, cluster: usize) -> Option<RefusalCode> {
    let tiers = estate.services[service].constraints.tiers.as_ref()?;
    (!tiers.contains(&estate.clusters[cluster].tier))
        .then_some(RefusalCode::Tier { service, cluster })
}

/// Does `service` refuse to leave its cluster whatever the destination?
#[inline]
pub fn immobility(estate: &Estate, service: usize) -> Option<RefusalCode> {
    let k = &estate.services[service].constraints;
    if k.local_volumes == crate::estate::Told::Known(true) {
        Some(RefusalCode::LocalVolumes { service })
    } else if k.pinned {
        Some(RefusalCode::Pinned { service })
    } else {
        None
    }
}

/// The first static hard constraint refusing `service` on `cluster`, if
/// any: the hot path, allocating nothing.
#[inline]
pub fn first_static_refusal(
    estate: &Estate,
    service: usize,
    cluster: usize,
) -> Option<RefusalCode> {
    STATIC_RULES
        .iter()
        .find_map(|rule| rule(estate, service, cluster))
}

/// Whether `service` may move to `cluster` as far as the static hard
/// constraints go.
#[inline]
pub fn statically_allowed(estate: &Estate, service: usize, cluster: usize) -> bool {
    first_static_refusal(estate, service, cluster).is_none()
}

/// Every static hard constraint refusing `service` on `cluster`, in the
/// fixed order, as codes. Empty = allowed.
pub fn static_refusal_codes(
    estate: &Estate,
    service: usize,
    cluster: usize,
) -> impl Iterator<Item = RefusalCode> + '_ {
    STATIC_RULES
        .iter()
        .filter_map(move |rule| rule(estate, service, cluster))
}

/// The trust zone `service` must stay in: the one it declares, else the
/// zone of the cluster it runs on now. Trust zones segregate clusters for
/// compliance, so advice never moves a service across a zone boundary
/// that nobody declared it may cross (a PCI enclave takes only services
/// that say they belong there, and no PCI service drifts out).
#[inline]
pub fn required_zone(estate: &Estate, service: usize) -> &str {
    let s = &estate.services[service];
    s.constraints
        .trust_zone
        .as_deref()
        .unwrap_or(&estate.clusters[s.cluster].trust_zone)
}

/// Every static hard constraint (everything but capacity) of moving
/// `service` to `cluster`, in a fixed order, with words. Empty = allowed.
pub fn static_refusals(estate: &Estate, service: usize, cluster: usize) -> Vec<Refusal> {
    static_refusal_codes(estate, service, cluster)
        .map(|r| r.explain(estate))
        .collect()
}

/// Projected capacity of one cluster after the moves applied so far.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Load {
    /// Net CPU moved in (negative: moved out), cores.
    pub cpu_in: f64,
    /// Net memory moved in, GiB.
    pub memory_in: f64,
}

/// Three-valued fit with its words, for results.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(tag = "fit", rename_all = "snake_case")]
pub enum Fit {
    Fits,
    DoesNotFit { refusal: Refusal },
    CantTell { fact: String, message: String },
}

/// A resource whose fit is judged.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Resource {
    Cpu,
    Memory,
}

impl Resource {
    /// The cluster's free-capacity field.
    pub fn free_field(self) -> &'static str {
        match self {
            Resource::Cpu => "cpu_free",
            Resource::Memory => "memory_free_gib",
        }
    }

    /// The service's request field.
    fn request_field(self) -> &'static str {
        match self {
            Resource::Cpu => "cpu",
            Resource::Memory => "memory_gib",
        }
    }

    fn word(self) -> &'static str {
        match self {
            Resource::Cpu => "CPU",
            Resource::Memory => "memory",
        }
    }

    fn unit(self) -> &'static str {
        match self {
            Resource::Cpu => "cores",
            Resource::Memory => "GiB",
        }
    }

    fn free_fact(self, c: &Cluster) -> &Fact {
        match self {
            Resource::Cpu => &c.cpu_free,
            Resource::Memory => &c.memory_free_gib,
        }
    }
}

/// Certainly no room, even at the optimistic end of the free-capacity
/// fact's margin: the numbers its refusal quotes.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct NoRoom {
    pub cluster: usize,
    pub resource: Resource,
    pub need: f64,
    pub optimistic: f64,
    pub class: Class,
    pub margin: f64,
}

impl NoRoom {
    pub fn code(&self) -> Code {
        match self.resource {
            Resource::Cpu => Code::NoRoomCpu,
            Resource::Memory => Code::NoRoomMemory,
        }
    }

    pub fn explain(&self, estate: &Estate) -> Refusal {
        let unit = self.resource.unit();
        Refusal {
            code: self.code(),
            message: format!(
                "needs {} {unit} but {} has at most {} {unit} free ({} {} ±{}%)",
                round2(self.need),
                estate.clusters[self.cluster].id,
                round2(self.optimistic.max(0.0)),
                self.class.as_str(),
                self.resource.word(),
                round2(self.margin * 100.0)
            ),
        }
    }
}

/// Why fit can't be told, as data.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Unsure {
    /// The service's request is unknown.
    UnknownRequest { service: usize, resource: Resource },
    /// The cluster's free capacity is unknown.
    UnknownFree { cluster: usize, resource: Resource },
    /// The need lies inside the free-capacity fact's margin.
    Between {
        cluster: usize,
        resource: Resource,
        need: f64,
        pessimistic: f64,
        optimistic: f64,
        class: Class,
        margin: f64,
    },
}

impl Unsure {
    /// The fact named, and the words.
    pub fn explain(&self, estate: &Estate) -> (String, String) {
        match *self {
            Unsure::UnknownRequest { service, resource } => {
                let who = &estate.services[service].id;
                (
                    format!("{who} {}", resource.request_field()),
                    format!("the {} request of {who} is unknown", resource.word()),
                )
            }
            Unsure::UnknownFree { cluster, resource } => {
                let c = &estate.clusters[cluster].id;
                (
                    format!("{c} {}", resource.free_field()),
                    format!("free {} of {c} is unknown", resource.word()),
                )
            }
            Unsure::Between {
                cluster,
                resource,
                need,
                pessimistic,
                optimistic,
                class,
                margin,
            } => {
                let c = &estate.clusters[cluster].id;
                let unit = resource.unit();
                (
                    format!("{c} {}", resource.free_field()),
                    format!(
                        "needs {} {unit}; {c} has between {} and {} {unit} free ({} fact, ±{}%)",
                        round2(need),
                        round2(pessimistic.max(0.0)),
                        round2(optimistic),
                        class.as_str(),
                        round2(margin * 100.0)
                    ),
                )
            }
        }
    }
}

/// Three-valued fit as data: what the hot path asks, allocating nothing.
/// [`FitCode::explain`] gives the [`Fit`] a result shows.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum FitCode {
    Fits,
    DoesNotFit(NoRoom),
    CantTell(Unsure),
}

impl FitCode {
    pub fn explain(&self, estate: &Estate) -> Fit {
        match self {
            FitCode::Fits => Fit::Fits,
            FitCode::DoesNotFit(no_room) => Fit::DoesNotFit {
                refusal: no_room.explain(estate),
            },
            FitCode::CantTell(unsure) => {
                let (fact, message) = unsure.explain(estate);
                Fit::CantTell { fact, message }
            }
        }
    }
}

/// The capacity rule for one resource (SPEC §4): `need` more on top of
/// `moved_in` is certified only at the pessimistic end of the known free
/// capacity's margin and refused only at its optimistic end.
#[inline]
pub fn resource_fit(
    policy: &Policy,
    cluster: usize,
    resource: Resource,
    free: f64,
    class: Class,
    need: f64,
    moved_in: f64,
) -> FitCode {
    let margin = policy.margin(class);
    let optimistic = optimistic_free(free, margin, moved_in);
    if need > optimistic {
        return FitCode::DoesNotFit(NoRoom {
            cluster,
            resource,
            need,
            optimistic,
            class,
            margin,
        });
    }
    let pessimistic = pessimistic_free(free, margin, moved_in);
    if need > pessimistic {
        return FitCode::CantTell(Unsure::Between {
            cluster,
            resource,
            need,
            pessimistic,
            optimistic,
            class,
            margin,
        });
    }
    FitCode::Fits
}

/// [`resource_fit`] against the cluster's free-capacity fact as it stands
/// at `now` (unknown: can't tell).
#[inline]
fn fact_fit(
    estate: &Estate,
    policy: &Policy,
    now: i64,
    cluster: usize,
    resource: Resource,
    need: f64,
    moved_in: f64,
) -> FitCode {
    let fact = resource.free_fact(&estate.clusters[cluster]);
    match fact.value {
        None => FitCode::CantTell(Unsure::UnknownFree { cluster, resource }),
        Some(free) => resource_fit(
            policy,
            cluster,
            resource,
            free,
            fact.class_at(now, policy),
            need,
            moved_in,
        ),
    }
}

/// Both resources together, CPU first: certainly no room for either is
/// no room; otherwise the first can't-tell; otherwise fits.
#[inline]
fn both(per: impl IntoIterator<Item = FitCode>) -> FitCode {
    let mut out = FitCode::Fits;
    for r in per {
        match r {
            FitCode::DoesNotFit(_) => return r,
            FitCode::CantTell(_) if matches!(out, FitCode::Fits) => out = r,
            _ => {}
        }
    }
    out
}

/// Three-valued fit of `cpu`/`memory` extra on `cluster` given its load.
pub fn fit_code(
    estate: &Estate,
    policy: &Policy,
    now: i64,
    cluster: usize,
    load: Load,
    cpu: f64,
    memory_gib: f64,
) -> FitCode {
    both(
        [
            (Resource::Cpu, cpu, load.cpu_in),
            (Resource::Memory, memory_gib, load.memory_in),
        ]
        .into_iter()
        .map(|(r, need, moved_in)| fact_fit(estate, policy, now, cluster, r, need, moved_in)),
    )
}

/// [`fit_code`] with its words.
pub fn fit(
    estate: &Estate,
    policy: &Policy,
    now: i64,
    cluster: usize,
    load: Load,
    cpu: f64,
    memory_gib: f64,
) -> Fit {
    fit_code(estate, policy, now, cluster, load, cpu, memory_gib).explain(estate)
}

/// Three-valued fit of `service`'s own requests on `cluster` given its
/// load. A request that is unknown makes the fit *can't tell*, with the
/// request named as the fact (`<service> cpu`, `<service> memory_gib`) —
/// unless the other resource certainly does not fit, which is certain
/// whatever the unknown one is.
#[inline]
pub fn fit_request_code(
    estate: &Estate,
    policy: &Policy,
    now: i64,
    service: usize,
    cluster: usize,
    load: Load,
) -> FitCode {
    let s = &estate.services[service];
    both(
        [
            (Resource::Cpu, s.cpu, load.cpu_in),
            (Resource::Memory, s.memory_gib, load.memory_in),
        ]
        .into_iter()
        .map(|(resource, need, moved_in)| match need {
            None => FitCode::CantTell(Unsure::UnknownRequest { service, resource }),
            Some(need) => fact_fit(estate, policy, now, cluster, resource, need, moved_in),
        }),
    )
}

/// [`fit_request_code`] with its words.
pub fn fit_request(
    estate: &Estate,
    policy: &Policy,
    now: i64,
    service: usize,
    cluster: usize,
    load: Load,
) -> Fit {
    fit_request_code(estate, policy, now, service, cluster, load).explain(estate)
}

/// Free capacity at the pessimistic end of its margin, after `moved_in`.
#[inline]
pub fn pessimistic_free(free: f64, margin: f64, moved_in: f64) -> f64 {
    free * (1.0 - margin) - moved_in
}

/// Free capacity at the optimistic end of its margin, after `moved_in`.
#[inline]
pub fn optimistic_free(free: f64, margin: f64, moved_in: f64) -> f64 {
    free * (1.0 + margin) - moved_in
}

/// Round for messages only (never for computation).
pub fn round2(x: f64) -> f64 {
    (x * 100.0).round() / 100.0
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gen::{self, Shape, NOW};

    /// Generated estates, some with unknown requests and free capacities so
    /// that every kind of can't-tell occurs.
    fn estates() -> Vec<Estate> {
        let mut out = Vec::new();
        for seed in 0..30 {
            for shape in [Shape::tiny(seed), Shape::small(seed)] {
                let mut e = gen::estate(&shape);
                if seed % 3 == 0 {
                    for (i, s) in e.services.iter_mut().enumerate() {
                        match i % 7 {
                            1 => s.cpu = None,
                            4 => s.memory_gib = None,
                            _ => {}
                        }
                    }
                    e.clusters[0].cpu_free.value = None;
                    let last = e.clusters.len() - 1;
                    e.clusters[last].memory_free_gib.value = None;
                }
                out.push(e);
            }
        }
        out
    }

    /// Loads that put the requests of a cluster's services below, inside
    /// and above the margin of its free-capacity facts.
    fn loads(e: &Estate, c: usize) -> Vec<Load> {
        let cl = &e.clusters[c];
        let (cpu, mem) = (
            cl.cpu_free.value.unwrap_or(1.0),
            cl.memory_free_gib.value.unwrap_or(1.0),
        );
        [-0.5, 0.0, 0.8, 0.9, 0.97, 1.0, 1.1, 2.0]
            .iter()
            .map(|&k| Load {
                cpu_in: cpu * k,
                memory_in: mem * (1.0 - k / 2.0),
            })
            .collect()
    }

    /// The static constraints as SPEC §4 states them, written independently
    /// of the rules above.
    fn allowed_by_spec(e: &Estate, s: usize, c: usize) -> bool {
        let (svc, cl) = (&e.services[s], &e.clusters[c]);
        let k = &svc.constraints;
        let zone = k
            .trust_zone
            .clone()
            .unwrap_or_else(|| e.clusters[svc.cluster].trust_zone.clone());
        k.local_volumes != crate::estate::Told::Known(true)
            && !k.pinned
            && matches!(cl.health, Health::Healthy | Health::Watch)
            && k.jurisdictions
                .as_ref()
                .is_none_or(|j| j.contains(&e.sites[cl.site].jurisdiction))
            && zone == cl.trust_zone
            && k.tiers.as_ref().is_none_or(|t| t.contains(&cl.tier))
    }

    /// Three-valued fit as SPEC §4 states it: no room at the optimistic end
    /// of either resource wins; else anything unknown or inside a margin is
    /// can't tell. `Some(true)` fits, `Some(false)` does not, `None` can't
    /// tell.
    fn fit_by_spec(e: &Estate, p: &Policy, s: usize, c: usize, load: Load) -> Option<bool> {
        let (svc, cl) = (&e.services[s], &e.clusters[c]);
        let mut sure = true;
        for (fact, need, moved_in) in [
            (&cl.cpu_free, svc.cpu, load.cpu_in),
            (&cl.memory_free_gib, svc.memory_gib, load.memory_in),
        ] {
            let (Some(need), Some(free)) = (need, fact.value) else {
                sure = false;
                continue;
            };
            let m = p.margin(fact.class_at(NOW, p));
            if need > free * (1.0 + m) - moved_in {
                return Some(false);
            }
            if need > free * (1.0 - m) - moved_in {
                sure = false;
            }
        }
        sure.then_some(true)
    }

    /// The static codes in the order the refusals are listed.
    const LISTED: [Code; 7] = [
        Code::LocalVolumes,
        Code::Pinned,
        Code::ClusterDraining,
        Code::ClusterDown,
        Code::Jurisdiction,
        Code::TrustZone,
        Code::Tier,
    ];

    #[test]
    fn fast_and_explained_static_refusals_agree() {
        let mut seen = std::collections::BTreeSet::new();
        for e in estates() {
            for s in 0..e.services.len() {
                for c in 0..e.clusters.len() {
                    let fast = first_static_refusal(&e, s, c);
                    let codes: Vec<RefusalCode> = static_refusal_codes(&e, s, c).collect();
                    let explained = static_refusals(&e, s, c);
                    assert_eq!(statically_allowed(&e, s, c), explained.is_empty());
                    assert_eq!(statically_allowed(&e, s, c), allowed_by_spec(&e, s, c));
                    assert_eq!(
                        fast.map(RefusalCode::code),
                        explained.first().map(|r| r.code)
                    );
                    assert_eq!(fast, codes.first().copied());
                    let by_code: Vec<Refusal> = codes.iter().map(|r| r.explain(&e)).collect();
                    assert_eq!(by_code, explained);
                    // Codes come in the fixed order of the rules, each at
                    // most once.
                    let order: Vec<Code> = codes.iter().map(|r| r.code()).collect();
                    let rank = |code: &Code| LISTED.iter().position(|l| l == code);
                    assert!(
                        order.windows(2).all(|w| rank(&w[0]) < rank(&w[1])),
                        "{order:?}"
                    );
                    assert_eq!(
                        codes.iter().filter(|r| r.is_immobility()).count(),
                        usize::from(immobility(&e, s).is_some())
                    );
                    seen.extend(order);
                }
            }
        }
        // Every static rule refused something somewhere.
        for code in LISTED {
            assert!(seen.contains(&code), "{code:?} never refused");
        }
    }

    #[test]
    fn fast_and_explained_fit_agree() {
        let p = Policy::default();
        let mut seen = std::collections::BTreeSet::new();
        for e in estates() {
            for s in 0..e.services.len() {
                for c in 0..e.clusters.len() {
                    for load in loads(&e, c) {
                        let code = fit_request_code(&e, &p, NOW, s, c, load);
                        let explained = fit_request(&e, &p, NOW, s, c, load);
                        assert_eq!(code.explain(&e), explained);
                        let spec = fit_by_spec(&e, &p, s, c, load);
                        let kind = match (&code, &explained) {
                            (FitCode::Fits, Fit::Fits) => {
                                assert_eq!(spec, Some(true));
                                "fits".to_string()
                            }
                            (FitCode::DoesNotFit(n), Fit::DoesNotFit { refusal }) => {
                                assert_eq!(spec, Some(false));
                                assert_eq!(n.code(), refusal.code);
                                assert_eq!(n.cluster, c);
                                format!("{:?}", n.code())
                            }
                            (FitCode::CantTell(u), Fit::CantTell { fact, .. }) => {
                                assert_eq!(spec, None);
                                assert_eq!(u.explain(&e).0, *fact);
                                let kind = match u {
                                    Unsure::UnknownRequest { .. } => "unknown request",
                                    Unsure::UnknownFree { .. } => "unknown free",
                                    Unsure::Between { .. } => "between",
                                };
                                kind.to_string()
                            }
                            other => panic!("fast and explained fit differ: {other:?}"),
                        };
                        seen.insert(kind);
                        // With both requests known, `fit` (explicit needs)
                        // is the same rule.
                        let svc = &e.services[s];
                        if let (Some(cpu), Some(mem)) = (svc.cpu, svc.memory_gib) {
                            assert_eq!(fit_code(&e, &p, NOW, c, load, cpu, mem), code);
                            assert_eq!(fit(&e, &p, NOW, c, load, cpu, mem), explained);
                        }
                    }
                }
            }
        }
        let all = [
            "fits",
            "NoRoomCpu",
            "NoRoomMemory",
            "unknown request",
            "unknown free",
            "between",
        ];
        for kind in all {
            assert!(seen.contains(kind), "{kind} never seen");
        }
    }
}
