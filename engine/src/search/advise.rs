//! Sequential advice (SPEC §6): pick the single best move, treat it as
//! done, re-evaluate, repeat — at most `policy.max_moves` times.
//!
//! Feasibility and ranking meet in exactly one place, [`best_move`]: a
//! candidate must pass the static hard constraints (precomputed per
//! service), clear both bars, and *fit* (not "can't tell") before its gain
//! is compared. Ties break on service id, then cluster id.
//!
//! For speed, each service's round-trip and cross-site deltas to each of
//! its candidate clusters are cached and recomputed only for the moved
//! service and its peers; headroom is recomputed on the fly (it depends on
//! the load of only two clusters). The cached numbers are produced by the
//! same expressions as [`cost::move_terms`], so the gain compared here is
//! bit-for-bit the gain reported.

use serde::{Deserialize, Serialize};

use crate::anneal;
use crate::bound::{self, Bound};
pub use crate::candidates::{Candidates, Cands};
use crate::constraints::{self, Code, Fit, FitCode, RefusalCode};
use crate::cost::{self, Ctx, State, Terms, Totals};
use crate::deltas::Deltas;
use crate::estate::{format_time, Estate};
use crate::fact::{Class, FactRef};
use crate::group::{self, Alone, Group, GroupKind};
use crate::policy::Policy;

mod feasibility;
mod run;
mod step;
mod targeted;
mod words;
pub use feasibility::{feasibility, feasibility_with, Feasibility};
use run::*;
use step::*;
use targeted::*;
pub use targeted::{improvement, plan, target_need, Budgets, Search, TARGET_MARGIN};
pub use words::evidence_words;
pub(crate) use words::group_facts;
use words::*;

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Advice {
    /// The estate's name.
    pub estate: String,
    /// Digest of the estate's canonical content.
    pub estate_version: String,
    pub policy_digest: String,
    /// Evaluation time, RFC 3339.
    pub now: String,
    pub totals_before: Totals,
    pub totals_after: Totals,
    /// A proven lower bound on what any reachable placement costs, and
    /// the share of the possible improvement these moves capture at least
    /// (`bound.rs`, `docs/advice.md` §6a).
    pub bound: Bound,
    /// The recommended moves, in the order to make them; the members of a
    /// compound step carry its `group`.
    pub moves: Vec<Move>,
    /// Points the moves listed apart for weak evidence (`evidence` set)
    /// would add if their evidence held: the sum of their gains, each
    /// from the placement of the recommended moves before it. Never part
    /// of `totals_after` or the bound; absent when there are none.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub unbacked_gain: f64,
    /// Services that cannot move anywhere, and why.
    pub immovable: Vec<Immovable>,
    /// Worthwhile destinations whose fit can't be told, with the fact
    /// that is missing or too uncertain (after the recommended moves).
    pub cant_tell: Vec<CantTell>,
    /// Clusters whose free capacity is unknown: never a destination.
    pub unknown_capacity: Vec<UnknownCapacity>,
    /// Services whose CPU or memory request is unknown: never moved (every
    /// fit of theirs is *can't tell*), in id order.
    pub unknown_requests: Vec<UnknownRequest>,
}

fn is_zero(x: &f64) -> bool {
    *x == 0.0
}

impl Move {
    /// Whether the advice recommends this move: its evidence backs it (no
    /// `evidence` words). A move resting on guesses is listed apart and
    /// not made (`docs/advice.md` §6, "Totals are of what is recommended").
    pub fn is_recommended(&self) -> bool {
        self.evidence.is_none()
    }
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Move {
    /// 1-based position in the sequence.
    pub step: usize,
    pub service: String,
    pub from: String,
    pub to: String,
    /// Points; the sum of `terms` (in field order).
    pub gain: f64,
    /// The service's cost before this move (flows + headroom it causes).
    pub current_cost: f64,
    /// The gain this move had to reach (max of both bars).
    pub bar: f64,
    /// Class of the weakest deciding fact.
    pub confidence: Class,
    /// Plain words when the evidence is too weak to recommend.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub evidence: Option<String>,
    pub terms: Terms,
    /// Every deciding fact, sorted by key.
    pub facts: Vec<FactRef>,
    /// Set when the move is one member of a compound step
    /// ([`crate::group`]): the group moves as one step, its gain clears
    /// the group's bar, and `bar` and `confidence` above are the group's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub group: Option<Group>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Immovable {
    pub service: String,
    pub cluster: String,
    pub reasons: Vec<Reason>,
}

/// One refusal code with the clusters it refused.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[cfg_attr(feature = "schema", schemars(rename = "ImmovableReason"))]
pub struct Reason {
    pub code: Code,
    pub message: String,
    pub clusters: Vec<String>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct CantTell {
    pub service: String,
    pub from: String,
    pub cluster: String,
    /// The gain this move would have if it fitted.
    pub gain_if_it_fits: f64,
    pub fact: String,
    pub message: String,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct UnknownCapacity {
    pub cluster: String,
    pub missing: Vec<String>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct UnknownRequest {
    pub service: String,
    /// Where it runs now (and stays).
    pub cluster: String,
    /// The unknown request fields, e.g. `["cpu", "memory_gib"]`.
    pub missing: Vec<String>,
}

pub fn advise(estate: &Estate, policy: &Policy, now: i64) -> Advice {
    advise_with(estate, policy, now, Cache::Shared)
}

/// How `advise` caches flow gains ([`Deltas`]): shared between the plain
/// candidates of a site (what advice uses), or one entry per candidate (the
/// reference the property tests compare it against).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Cache {
    Shared,
    PerCandidate,
}

pub fn advise_with(estate: &Estate, policy: &Policy, now: i64, cache: Cache) -> Advice {
    // The same plans at every size (`docs/advice.md` §6): three, and the
    // advice is whichever improves the estate most (cost after plus copy
    // cost), the earlier on a tie. The first is the plan without gathered
    // groups, so compound steps never make the advice worse than it was
    // with pairs and chains alone; each later one may take larger groups,
    // whose gain can crowd out a better sequence of smaller steps. A
    // fourth, targeted plan is weighed last, with a margin (below). The
    // weighed and the targeted plans search within budgets that grow with
    // the estate (`docs/advice.md` §6, "Budgets").
    let tol = 1e-9 * (1.0 + estate_cost_scale(estate));
    // The gathered plan first: when it never searched for a group (a
    // single move cleared at every step), the pairs plan, which differs
    // only in that search, is the same plan and is not run again.
    let gathered = plan_run(estate, policy, now, cache, Search::GATHER);
    let budgets = gathered.budgets;
    let mut best = if gathered.searched {
        plan(estate, policy, now, cache, Search::PAIRS)
    } else {
        gathered.advice.clone()
    };
    if improvement(&gathered.advice) > improvement(&best) + tol {
        best = gathered.advice;
    }
    // The weighed plan is the gathered one when its budget does not buy
    // the first step's weighing; then it is not run again either.
    if budgets.weighs() {
        let other = plan(estate, policy, now, cache, Search::WEIGHED);
        if improvement(&other) > improvement(&best) + tol {
            best = other;
        }
    }
    if !budgets.targets() {
        return best;
    }
    // The targeted plan only when it improves the estate by a clear
    // margin more: its first step is one large group, which a person
    // reads less easily than the steps it replaces.
    let mut targeted = plan(estate, policy, now, cache, Search::TARGETED);
    let (won, over) = (improvement(&targeted), improvement(&best));
    if targeted
        .moves
        .first()
        .and_then(|m| m.group.as_ref())
        .is_some_and(|g| g.kind == GroupKind::Planned)
        && won > over * (1.0 + TARGET_MARGIN) + tol
    {
        let note = format!(
            " Taken over the best plan of single moves and smaller groups ({} moves, +{}): this step and the moves after it improve the estate by +{}.",
            best.moves.len(),
            constraints::round2(over),
            constraints::round2(won)
        );
        let first = targeted.moves[0].group.clone();
        for m in targeted.moves.iter_mut() {
            if m.group == first {
                if let Some(g) = m.group.as_mut() {
                    g.summary.push_str(&note);
                }
            }
        }
        return targeted;
    }
    best
}
