//! What-if scenarios (SPEC §8): apply a user's list of moves and cluster
//! evacuations to the estate, and project what changes.
//!
//! A scenario is a what-if, not advice: it is applied **as written**, even
//! where it breaks a hard constraint, and every such break is named in a
//! warning with a stable code ([`WarningCode`]). Only a scenario that
//! cannot be read or names things that do not exist is refused, with the
//! JSON path of each problem (`docs/scenario-format.md`).
//!
//! Steps run in order on one evolving placement ([`State`]):
//!
//! - `move` puts a service on a cluster.
//! - `evacuate` empties a cluster: its services (largest CPU request first,
//!   then memory, then id) are placed one by one by the single-service
//!   scorer ([`crate::place`]), each placement seeing the ones before it;
//!   evacuated clusters are never a destination for the scorer. A service
//!   that cannot leave (pinned, local volumes, or no eligible cluster) stays
//!   and is listed with its reasons.
//!
//! Capacity is judged on where the scenario **ends**: for each cluster that
//! receives services, the net CPU and memory it gains against its free
//! capacity fact, three-valued as in [`crate::constraints::fit`] (an
//! arriving service whose request is unknown makes it *can't tell*). The
//! order of steps therefore never changes a capacity verdict. Two copies of
//! one Kubernetes workload that end on one cluster are one object there
//! and are counted once ([`WarningCode::DuplicateWorkload`]). For every
//! such verdict the projection says how far (in % of the figure) the
//! free-capacity figure could be wrong before the verdict flips.
//!
//! Cost: the estate totals are computed once before and once after; each
//! step costs O(degree) (a move) or O(services on the cluster × clusters ×
//! degree) (an evacuation), never a pass over the whole estate.

use std::collections::{BTreeMap, BTreeSet};

use serde::Serialize;
use serde_json::{Map, Value};

use crate::advise::Reason;
use crate::constraints::{self, Code, FitCode, Refusal, Resource};
use crate::cost::{Ctx, State, Totals};
use crate::estate::{format_time, Estate, Health};
use crate::fact::Class;
use crate::json_shape::describe;
use crate::place::{self, FitVerdict, PlaceTerms};
use crate::policy::Policy;

mod run;
mod scenario;
mod verdicts;
use run::*;
pub use scenario::{locate_errors, Scenario, ScenarioError, Step};
use verdicts::*;

/// The only scenario schema so far.
pub const SCHEMA: u64 = 1;
/// Largest scenario text accepted.
pub const MAX_TEXT_BYTES: usize = 1 << 20;
/// Most steps in one scenario.
pub const MAX_STEPS: usize = 10_000;

// ---------------------------------------------------------------------------
// Projection

/// Stable warning codes: a public contract (API, web pages); add new ones,
/// never rename.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[cfg_attr(feature = "schema", schemars(rename = "ScenarioWarningCode"))]
#[serde(rename_all = "snake_case")]
pub enum WarningCode {
    /// A pinned service is moved off its nodes.
    Pinned,
    /// A service with data on local volumes is moved without its data.
    LocalVolumes,
    /// A service is moved onto a draining cluster.
    ClusterDraining,
    /// A service is moved onto a cluster that is down.
    ClusterDown,
    /// A service is moved out of its allowed jurisdictions.
    Jurisdiction,
    /// A service is moved into another trust zone.
    TrustZone,
    /// A service is moved onto a tier it may not use.
    Tier,
    /// A cluster receives more than it has free even at the optimistic
    /// end of its free-capacity fact: that capacity does not exist.
    OverCapacity,
    /// A cluster's fit can't be told: free capacity unknown, the need
    /// lies within the fact's margin of error, or an arriving service's
    /// request is unknown.
    CantTell,
    /// A cluster ends over the utilisation target (it fits, but with less
    /// room than the policy wants).
    OverTarget,
    /// An evacuation could not move a service off the cluster.
    CannotLeave,
    /// A move puts a service on a cluster an earlier step evacuated.
    IntoEvacuated,
    /// A move moves a service an earlier step already moved.
    MovedAgain,
    /// A move to where the service already is: nothing happens.
    NoOp,
    /// A service is moved onto a cluster where another copy of the same
    /// Kubernetes workload runs (`copies.rs`): one object there, so its
    /// requests are counted once.
    DuplicateWorkload,
}

impl WarningCode {
    pub const ALL: [WarningCode; 15] = [
        WarningCode::Pinned,
        WarningCode::LocalVolumes,
        WarningCode::ClusterDraining,
        WarningCode::ClusterDown,
        WarningCode::Jurisdiction,
        WarningCode::TrustZone,
        WarningCode::Tier,
        WarningCode::OverCapacity,
        WarningCode::CantTell,
        WarningCode::OverTarget,
        WarningCode::CannotLeave,
        WarningCode::IntoEvacuated,
        WarningCode::MovedAgain,
        WarningCode::NoOp,
        WarningCode::DuplicateWorkload,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            WarningCode::Pinned => "pinned",
            WarningCode::LocalVolumes => "local_volumes",
            WarningCode::ClusterDraining => "cluster_draining",
            WarningCode::ClusterDown => "cluster_down",
            WarningCode::Jurisdiction => "jurisdiction",
            WarningCode::TrustZone => "trust_zone",
            WarningCode::Tier => "tier",
            WarningCode::OverCapacity => "over_capacity",
            WarningCode::CantTell => "cant_tell",
            WarningCode::OverTarget => "over_target",
            WarningCode::CannotLeave => "cannot_leave",
            WarningCode::IntoEvacuated => "into_evacuated",
            WarningCode::MovedAgain => "moved_again",
            WarningCode::NoOp => "no_op",
            WarningCode::DuplicateWorkload => "duplicate_workload",
        }
    }

    /// The warning for breaking a static hard constraint.
    fn of_refusal(code: Code) -> Option<WarningCode> {
        Some(match code {
            Code::Pinned => WarningCode::Pinned,
            Code::LocalVolumes => WarningCode::LocalVolumes,
            Code::ClusterDraining => WarningCode::ClusterDraining,
            Code::ClusterDown => WarningCode::ClusterDown,
            Code::Jurisdiction => WarningCode::Jurisdiction,
            Code::TrustZone => WarningCode::TrustZone,
            Code::Tier => WarningCode::Tier,
            _ => return None,
        })
    }
}

#[derive(Clone, Debug, PartialEq, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[cfg_attr(feature = "schema", schemars(rename = "ScenarioWarning"))]
pub struct Warning {
    pub code: WarningCode,
    /// 1-based step that caused it; `None` for verdicts on the end state.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub step: Option<usize>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub service: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cluster: Option<String>,
    pub message: String,
}

/// How a service came to move.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[cfg_attr(feature = "schema", schemars(rename = "ScenarioMoveCause"))]
#[serde(rename_all = "snake_case")]
pub enum By {
    Move,
    Evacuate,
}

/// One service changing cluster, in the order the scenario did it.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct ProjectedMove {
    /// 1-based step.
    pub step: usize,
    pub service: String,
    pub from: String,
    pub to: String,
    pub by: By,
}

/// One resource of one cluster before and after. Load is what is in use:
/// `total − free` (+ the scenario's net change after); `None` when the
/// free figure is unknown. Utilisation is load / total (may exceed 1).
#[derive(Clone, Debug, PartialEq, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct ResourceLoad {
    pub total: f64,
    /// Net requests moved in by the scenario (negative: moved out).
    pub change: f64,
    pub load_before: Option<f64>,
    pub load_after: Option<f64>,
    pub utilisation_before: Option<f64>,
    pub utilisation_after: Option<f64>,
    /// Services that moved in or out whose request for this resource is
    /// unknown, in id order: `change` (and so the load after) leaves them
    /// out, and a receiving cluster's verdict is *can't tell*. Omitted
    /// when empty.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub unknown: Vec<String>,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct ClusterLoad {
    pub id: String,
    pub health: Health,
    pub evacuated: bool,
    /// Both free-capacity figures are known.
    pub capacity_known: bool,
    /// Cores.
    pub cpu: ResourceLoad,
    /// GiB.
    pub memory: ResourceLoad,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[cfg_attr(feature = "schema", schemars(rename = "PlacedService"))]
pub struct Placed {
    pub service: String,
    pub to: String,
    /// The scorer's score for the chosen cluster, and its terms.
    pub score: f64,
    pub terms: PlaceTerms,
    /// Fit at the time it was placed (later placements may change the
    /// end-state verdict; see the warnings).
    pub fit: FitVerdict,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[cfg_attr(feature = "schema", schemars(rename = "StuckService"))]
pub struct Stuck {
    pub service: String,
    /// Each refusal code with the clusters it ruled out (none listed when
    /// the service cannot leave whatever the destination).
    pub reasons: Vec<Reason>,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[cfg_attr(feature = "schema", schemars(rename = "ScenarioEvacuation"))]
pub struct Evacuation {
    /// 1-based step.
    pub step: usize,
    pub cluster: String,
    pub placed: Vec<Placed>,
    pub stuck: Vec<Stuck>,
}

/// How far a free-capacity figure could be wrong before the capacity
/// verdict that rests on it changes.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[cfg_attr(feature = "schema", schemars(rename = "ScenarioSensitivity"))]
pub struct Sensitivity {
    /// e.g. `c-fra-2 cpu_free`.
    pub fact: String,
    pub cluster: String,
    /// `cpu` (cores) or `memory` (GiB).
    pub resource: &'static str,
    /// The figure as reported.
    pub value: f64,
    /// Its class at evaluation time, and that class's margin (%).
    pub class: Class,
    pub margin_pct: f64,
    /// Net requests the scenario adds to the cluster.
    pub need: f64,
    /// The services the scenario moves onto the cluster.
    pub services: Vec<String>,
    /// At the figure as reported: `fits` (need ≤ figure) or `does_not_fit`.
    #[cfg_attr(feature = "schema", schemars(extend("enum" = ["fits", "does_not_fit"])))]
    pub verdict: &'static str,
    /// Three-valued fit at the figure's margin: certain only when the
    /// tolerance is at least the margin.
    pub fit: FitVerdict,
    /// Relative error of the figure, in % of it, at which `verdict` flips:
    /// `|figure − need| / figure × 100`. `None` for a figure of 0.
    pub tolerance_pct: Option<f64>,
    /// `lower`: the verdict flips if the true figure is lower by more than
    /// the tolerance (it fits now). `higher`: it flips if the true figure
    /// is higher by more than the tolerance (it does not fit now).
    #[cfg_attr(feature = "schema", schemars(extend("enum" = ["lower", "higher"])))]
    pub direction: &'static str,
}

/// A scenario's projection (`docs/scenario-format.md`, "The
/// projection"): the estate before and after the scenario's steps, every
/// move they made, every cluster's load, and what a person should know.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Projection {
    /// The scenario's name.
    pub scenario: String,
    pub estate: String,
    pub estate_version: String,
    pub policy_digest: String,
    /// Evaluation time, RFC 3339.
    pub now: String,
    pub before: Totals,
    pub after: Totals,
    /// `after − before`, term by term.
    pub change: Totals,
    /// Every service that changed cluster, in order.
    pub moves: Vec<ProjectedMove>,
    /// Every cluster, in id order.
    pub clusters: Vec<ClusterLoad>,
    /// What a person should know: `code`, `message`, and where they
    /// apply `step`, `service`, `cluster`.
    pub warnings: Vec<Warning>,
    pub evacuations: Vec<Evacuation>,
    pub sensitivity: Vec<Sensitivity>,
}

/// Apply `scenario` to the estate as it is and project the result. Errors
/// only for ids the estate does not have (paths, no lines: see
/// [`locate_errors`]).
pub fn project(
    estate: &Estate,
    policy: &Policy,
    now: i64,
    scenario: &Scenario,
) -> Result<Projection, Vec<ScenarioError>> {
    let version = crate::export::version(estate);
    project_with_version(estate, &version, policy, now, scenario)
}

/// [`project`] for a caller that already knows the estate's version
/// ([`crate::export::version`]), e.g. one that keeps the estate loaded
/// while a person edits a scenario: the digest serialises the whole
/// estate, which costs more than the projection itself.
pub fn project_with_version(
    estate: &Estate,
    estate_version: &str,
    policy: &Policy,
    now: i64,
    scenario: &Scenario,
) -> Result<Projection, Vec<ScenarioError>> {
    let errors = scenario.check(estate);
    if !errors.is_empty() {
        return Err(errors);
    }
    let ctx = Ctx::new(estate, policy, now);
    let state = State::initial(estate);
    let before = state.totals(&ctx);
    let mut run = Run {
        ctx: &ctx,
        state,
        members: None,
        owners: None,
        evacuated_at: vec![None; estate.clusters.len()],
        moved: BTreeMap::new(),
        moves: Vec::new(),
        warnings: Vec::new(),
        evacuations: Vec::new(),
    };
    for (i, step) in scenario.steps.iter().enumerate() {
        let k = i + 1;
        match step {
            Step::Move { service, to } => {
                let s = estate.service_index(service).expect("checked");
                let to = estate.cluster_index(to).expect("checked");
                run.do_move(k, s, to);
            }
            Step::Evacuate(c) => {
                let c = estate.cluster_index(c).expect("checked");
                run.evacuate(k, c);
            }
        }
    }
    let merged = merge_copies(&mut run);
    let after = run.state.totals(&ctx);
    let change = Totals::change(&before, &after);

    // Where the scenario ends: which services sit away from home, by
    // cluster (a copy merged into another there brings nothing).
    let mut arrivals: BTreeMap<usize, Vec<usize>> = BTreeMap::new();
    for &s in run.moved.keys() {
        let at = run.state.placement[s];
        if at != estate.services[s].cluster && !merged.contains(&s) {
            arrivals.entry(at).or_default().push(s);
        }
    }
    let mut sensitivity = Vec::new();
    for (&c, arrived) in &arrivals {
        capacity_verdicts(&mut run, c, arrived, &mut sensitivity);
    }

    // Per cluster and resource: moved services whose request is unknown.
    let mut unknown = vec![[BTreeSet::new(), BTreeSet::new()]; estate.clusters.len()];
    for &s in run.moved.keys() {
        let svc = &estate.services[s];
        let (home, at) = (svc.cluster, run.state.placement[s]);
        if home == at {
            continue;
        }
        for (k, r) in [svc.cpu, svc.memory_gib].into_iter().enumerate() {
            if r.is_none() {
                unknown[home][k].insert(s);
                if !merged.contains(&s) {
                    unknown[at][k].insert(s);
                }
            }
        }
    }
    let ids = |set: &BTreeSet<usize>| -> Vec<String> {
        set.iter().map(|&s| estate.services[s].id.clone()).collect()
    };
    let clusters = estate
        .clusters
        .iter()
        .enumerate()
        .map(|(c, cl)| {
            let l = run.state.load[c];
            let res = |free: Option<f64>, total: f64, change: f64, unknown: Vec<String>| {
                let before = free.map(|f| total - f);
                let after = before.map(|b| b + change);
                ResourceLoad {
                    total,
                    change,
                    load_before: before,
                    load_after: after,
                    utilisation_before: before.map(|b| b / total),
                    utilisation_after: after.map(|a| a / total),
                    unknown,
                }
            };
            ClusterLoad {
                id: cl.id.clone(),
                health: cl.health,
                evacuated: run.evacuated_at[c].is_some(),
                capacity_known: cl.cpu_free.value.is_some() && cl.memory_free_gib.value.is_some(),
                cpu: res(
                    cl.cpu_free.value,
                    cl.cpu_total,
                    l.cpu_in,
                    ids(&unknown[c][0]),
                ),
                memory: res(
                    cl.memory_free_gib.value,
                    cl.memory_total_gib,
                    l.memory_in,
                    ids(&unknown[c][1]),
                ),
            }
        })
        .collect();

    Ok(Projection {
        scenario: scenario.name.clone(),
        estate: estate.name.clone(),
        estate_version: estate_version.to_string(),
        policy_digest: policy.digest(),
        now: format_time(now),
        before,
        after,
        change,
        moves: run.moves,
        clusters,
        warnings: run.warnings,
        evacuations: run.evacuations,
        sensitivity,
    })
}

/// Copies of one Kubernetes workload (`copies.rs`) that the scenario ends
/// with on one cluster are one object there — one template, one copy per
/// cluster — so they are counted once. For each cluster and workload, the
/// copy counted is the one that was there before the scenario, else the
/// first to arrive (by step, then id); every other copy that arrived is
/// *merged*: its requests leave its home cluster but are not added to this
/// one (its flows stay: its callers are served by the copy there), with a
/// `duplicate_workload` warning at the step that put it there. Copies that
/// share a cluster in the estate as written are left as they are. Returns
/// the merged services; the warnings are in step order.
fn merge_copies(run: &mut Run) -> BTreeSet<usize> {
    let e = run.ctx.estate;
    let mut merged = BTreeSet::new();
    let placement = &run.state.placement;
    let arrived: Vec<usize> = run
        .moved
        .keys()
        .copied()
        .filter(|&s| placement[s] != e.services[s].cluster)
        .collect();
    if arrived.is_empty() {
        return merged;
    }
    let copies = crate::copies::copies(e);
    // Arrivals per (workload, cluster), in step order.
    let mut at: BTreeMap<(usize, usize), Vec<usize>> = BTreeMap::new();
    for &s in &arrived {
        if let Some(g) = copies.of[s] {
            at.entry((g, placement[s])).or_default().push(s);
        }
    }
    // (step, merged copy, the copy counted, whether it was there before).
    let mut found: Vec<(usize, usize, usize, bool)> = Vec::new();
    for ((g, c), mut came) in at {
        came.sort_by_key(|&s| (run.moved[&s], s));
        let stayed = copies.groups[g]
            .services
            .iter()
            .copied()
            .find(|&o| placement[o] == c && e.services[o].cluster == c);
        let (kept, extra) = match stayed {
            Some(k) => (k, &came[..]),
            None => (came[0], &came[1..]),
        };
        for &s in extra {
            found.push((run.moved[&s], s, kept, stayed.is_some()));
        }
    }
    found.sort_unstable();
    for (step, s, kept, was_there) in found {
        let svc = &e.services[s];
        let c = run.state.placement[s];
        run.state.load[c].cpu_in -= svc.cpu_in_load();
        run.state.load[c].memory_in -= svc.memory_in_load();
        merged.insert(s);
        let g = copies.of[s].expect("a copy");
        let other = &e.services[kept].id;
        let how = if was_there {
            "already runs".to_string()
        } else {
            format!("arrives at step {}", run.moved[&kept])
        };
        run.warn(
            WarningCode::DuplicateWorkload,
            Some(step),
            Some(s),
            Some(c),
            format!(
                "step {step} moves {} onto {}, where {other}, a copy of the same Kubernetes workload ({}), {how}: the two are one object there, counted once ({other}'s requests); {}'s requests are not added to {}",
                svc.id,
                e.clusters[c].id,
                crate::copies::words(&copies.groups[g].workload),
                svc.id,
                e.clusters[c].id
            ),
        );
    }
    // Every warning so far is a step's: keep them in step order.
    run.warnings.sort_by_key(|w| w.step);
    merged
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scenario_errors_name_the_path() {
        let e = Scenario::from_json(
            r#"{
  "schema": 1,
  "name": "x",
  "steps": [
    {"move": {"service": "a", "to": "c1"}},
    {"evacuate": "c2", "move": {"service": "b", "to": "c1"}},
    {"move": {"service": "a", "to": "c3"}},
    {"evacuate": 7},
    {"teleport": "c1"},
    {"move": {"service": "b"}}
  ]
}"#,
        )
        .unwrap_err();
        let got: Vec<String> = e.iter().map(|e| e.to_string()).collect();
        assert_eq!(
            got,
            [
                "/steps/1 (line 6): a step does one thing, not both `move` and `evacuate`; expected {\"move\": {\"service\": \"…\", \"to\": \"…\"}} or {\"evacuate\": \"cluster-id\"}",
                "/steps/2/move/service (line 7): /steps/0 already moves service \"a\"; a scenario does that at most once (edit that step instead)",
                "/steps/3/evacuate (line 8): expected a cluster id (a string), got the number 7",
                "/steps/4/teleport (line 9): unknown field `teleport`; expected one of: move, evacuate",
                "/steps/5/move/to (line 10): missing; expected a cluster id",
            ]
        );
    }

    #[test]
    fn scenario_round_trips_and_limits() {
        let text = r#"{"schema": 1, "name": "n", "steps": [{"evacuate": "c"}, {"move": {"service": "s", "to": "c2"}}]}"#;
        let s = Scenario::from_json(text).unwrap();
        assert_eq!(Scenario::from_json(&s.to_json()).unwrap(), s);
        let e = Scenario::from_json(r#"{"schema": 2, "name": "n", "steps": []}"#).unwrap_err();
        assert_eq!(e[0].path, "/schema");
        let big = format!(
            r#"{{"schema": 1, "name": "n", "steps": [{}]}}"#,
            vec![r#"{"evacuate": "c"}"#; MAX_STEPS + 1].join(",")
        );
        let e = Scenario::from_json(&big).unwrap_err();
        assert!(e[0].message.contains("at most 10000"), "{e:?}");
    }

    #[test]
    fn numbers_in_messages() {
        assert_eq!(num(2.0), "2");
        assert_eq!(num(2.5), "2.5");
        assert_eq!(num(1.234), "1.23");
        assert_eq!(num(-0.001), "0");
    }
}
