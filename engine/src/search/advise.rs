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

/// Per-service feasibility: the clusters it may go to (static constraints
/// only) and, if none, why.
pub struct Feasibility {
    pub candidates: Candidates,
    pub immovable: Vec<Immovable>,
}

pub fn feasibility(estate: &Estate) -> Feasibility {
    feasibility_with(estate, Cache::Shared)
}

/// [`feasibility`], with the candidate lists shared per constraint profile
/// or (`Cache::PerCandidate`, the reference) checked for every service and
/// cluster on their own.
pub fn feasibility_with(estate: &Estate, cache: Cache) -> Feasibility {
    let nc = estate.clusters.len();
    let mut candidates = Candidates::with_capacity(estate.services.len());
    let mut profiles = std::collections::BTreeMap::new();
    let mut immovable = Vec::new();
    for (si, s) in estate.services.iter().enumerate() {
        let here = &estate.clusters[s.cluster].id;
        if let Some(r) = constraints::immobility(estate, si) {
            candidates.push(None, s.cluster);
            immovable.push(Immovable {
                service: s.id.clone(),
                cluster: here.clone(),
                reasons: vec![Reason {
                    code: r.code(),
                    message: r.message(estate),
                    clusters: Vec::new(),
                }],
            });
            continue;
        }
        let allowed = |c: usize| constraints::statically_allowed(estate, si, c);
        let list = match cache {
            Cache::Shared => *profiles
                .entry(constraints::static_profile(estate, si))
                .or_insert_with(|| candidates.add_list((0..nc).filter(|&c| allowed(c)).collect())),
            Cache::PerCandidate => {
                candidates.add_list((0..nc).filter(|&c| c != s.cluster && allowed(c)).collect())
            }
        };
        candidates.push(Some(list), s.cluster);
        if candidates.of(si).is_empty() && nc > 1 {
            // Only now spell out why, cluster by cluster.
            let mut refused: Vec<(RefusalCode, usize)> = Vec::new();
            for c in (0..nc).filter(|&c| c != s.cluster) {
                refused.extend(constraints::static_refusal_codes(estate, si, c).map(|r| (r, c)));
            }
            immovable.push(Immovable {
                service: s.id.clone(),
                cluster: here.clone(),
                reasons: group_reasons(estate, refused),
            });
        }
    }
    Feasibility {
        candidates,
        immovable,
    }
}

/// Group refusals by code, listing the clusters each ruled out; ordered by
/// code, clusters in id order, the words of the first cluster only.
fn group_reasons(estate: &Estate, mut refused: Vec<(RefusalCode, usize)>) -> Vec<Reason> {
    let id = |c: usize| &estate.clusters[c].id;
    refused.sort_by(|a, b| (a.0.code(), id(a.1)).cmp(&(b.0.code(), id(b.1))));
    let mut out: Vec<Reason> = Vec::new();
    for (r, c) in refused {
        match out.last_mut() {
            Some(last) if last.code == r.code() => last.clusters.push(id(c).clone()),
            _ => out.push(Reason {
                code: r.code(),
                message: r.message(estate),
                clusters: vec![id(c).clone()],
            }),
        }
    }
    out
}

/// Per service, what [`best_move`] reads before looking at any candidate,
/// kept between steps: these change only when the service's flow gains
/// are refreshed or its cluster's load changes, and are recomputed then by
/// the same expressions (so to the same bits).
struct Prospects {
    /// Copy points of moving it (≤ 0; the same for every destination).
    copy: Vec<f64>,
    /// What leaving saves in headroom at its cluster: the best the
    /// headroom term can be (arriving can only cost).
    leave: Vec<f64>,
    /// Both bars against its current cost.
    bar: Vec<f64>,
    /// The most any of its moves could gain: best flow gain + leave + copy.
    most: Vec<f64>,
    /// Per cluster, the services that started there (a service that moves
    /// is not considered again, so these are all that can be unmoved there).
    on: Vec<Vec<usize>>,
    /// Per service, how far its cached flow costs may be off since its
    /// peers moved (0: fresh). A stale service's `bar` and `most` are
    /// bounds, and it is refreshed before anything reads its candidates:
    /// a hub with thousands of peers is refreshed when it could matter,
    /// not every time one of them moves.
    slack: Vec<f64>,
}

impl Prospects {
    fn new(ctx: &Ctx, state: &State, deltas: &Deltas) -> Prospects {
        let n = ctx.estate.services.len();
        let mut on = vec![Vec::new(); ctx.estate.clusters.len()];
        for s in 0..n {
            on[state.placement[s]].push(s);
        }
        let mut p = Prospects {
            copy: (0..n).map(|s| cost::copy_term(ctx, s)).collect(),
            leave: vec![0.0; n],
            bar: vec![0.0; n],
            most: vec![f64::NEG_INFINITY; n],
            on,
            slack: vec![0.0; n],
        };
        for s in 0..n {
            p.update(ctx, state, deltas, s);
        }
        p
    }

    fn update(&mut self, ctx: &Ctx, state: &State, deltas: &Deltas, s: usize) {
        let leave = state.marginal_headroom(ctx, s);
        self.leave[s] = leave;
        let slack = self.slack[s];
        if slack == 0.0 {
            // Same expression as `State::current_cost`, from the cache.
            self.bar[s] = cost::bar(ctx, deltas.here[s] + leave);
            self.most[s] = deltas.best_flows[s] + leave + self.copy[s];
        } else {
            // Stale: the cache is from before some peers moved, and each
            // moved flow changes the flow cost at any cluster by at most
            // its share of `slack`. The current cost is then at least
            // `here - slack` (the bar grows with it: a lower bound), and
            // a gain, which is a difference of two flow costs, at most
            // `best + 2 slack` (an upper bound).
            self.bar[s] = cost::bar(ctx, deltas.here[s] - slack + leave);
            self.most[s] = deltas.best_flows[s] + 2.0 * slack + leave + self.copy[s];
        }
    }

    /// Some of `s`'s peers moved: widen its bounds by `slack` instead of
    /// refreshing its cache (done only when something reads it).
    fn loosen(&mut self, s: usize, slack: f64) {
        // A hair more than the sum, so rounding in it cannot make the
        // bound too tight (the flow costs it bounds are sums of the same
        // products in another order).
        self.slack[s] += slack * (1.0 + 1e-9) + 1e-12;
    }

    fn is_stale(&self, s: usize) -> bool {
        self.slack[s] != 0.0
    }

    /// Bring `s`'s cache and bounds up to the current placement.
    fn refresh(
        &mut self,
        ctx: &Ctx,
        state: &State,
        candidates: &Candidates,
        deltas: &mut Deltas,
        s: usize,
    ) {
        deltas.refresh(ctx, state, candidates.of(s), s);
        self.slack[s] = 0.0;
        self.update(ctx, state, deltas, s);
    }

    /// Refresh every stale service that could still clear its bar: what
    /// the group search and the can't-tell list read afterwards.
    fn refresh_all(
        &mut self,
        ctx: &Ctx,
        state: &State,
        candidates: &Candidates,
        deltas: &mut Deltas,
        moved: &[bool],
    ) {
        for (s, &done) in moved.iter().enumerate() {
            if self.is_stale(s) && !done {
                self.refresh(ctx, state, candidates, deltas, s);
            }
        }
    }
}

/// The most the flow cost of any service at any cluster changes per unit
/// of flow when a peer moves from cluster `a` to `b`: the largest change of
/// an RTT to it, over every cluster's row and every site's row (plain
/// candidates read the site table). Times a flow's round-trip weight, plus
/// its cross-site points (whose crossing may flip), it bounds that flow's
/// change — what [`Prospects::loosen`] adds up.
fn rtt_shift(ctx: &Ctx, a: usize, b: usize) -> f64 {
    let mut most: f64 = 0.0;
    for x in 0..ctx.estate.clusters.len() {
        let row = ctx.rtt.ms_from(x);
        most = most.max((row[b] - row[a]).abs());
    }
    let (sa, sb) = (ctx.site_of[a], ctx.site_of[b]);
    for y in 0..ctx.estate.sites.len() {
        let row = ctx.rtt.site_ms_from(y);
        most = most.max((row[sb] - row[sa]).abs());
    }
    most
}

/// Whether `bound` falls short of `floor`. The bounds are exact up to
/// rounding; the small slack keeps a rounding difference from skipping a
/// move that clears.
#[inline]
fn short_of(bound: f64, floor: f64) -> bool {
    bound < floor - 1e-9 * (1.0 + floor.abs())
}

/// The best feasible move that clears both bars, if any — the same move
/// as [`best_move_in_order`], found by looking at the services in order of
/// the most they could gain and stopping once that falls below the best
/// move found. Ties break on service id, then cluster id, as there.
#[allow(clippy::too_many_arguments)]
fn best_move(
    ctx: &Ctx,
    state: &State,
    candidates: &Candidates,
    deltas: &mut Deltas,
    p: &mut Prospects,
    moved: &[bool],
    blocked: &mut Vec<(f64, usize, usize)>,
    by_site: &mut [(f64, f64)],
    hopeful: &mut Vec<Hope>,
) -> Option<(usize, usize, f64)> {
    blocked.clear();
    hopeful.clear();
    // A service whose best cannot reach its own bar is skipped by the
    // in-order search whatever else it has found (the floor there is at
    // least the bar). For a stale service both are bounds, so it is
    // skipped only when even its bounds say so.
    hopeful.extend(
        (0..candidates.len())
            .filter(|&s| {
                !moved[s] && !short_of(p.most[s], p.bar[s]) && !candidates.of(s).is_empty()
            })
            .map(|s| Hope(p.most[s], s)),
    );
    // Most first, ties by id; a heap, as the search usually stops after a
    // few services and a full sort of every hopeful one each step costs
    // more than the rest of the step on a large estate.
    let mut order = std::collections::BinaryHeap::from(std::mem::take(hopeful));
    let mut best: Option<(usize, usize, f64)> = None;
    while let Some(Hope(_, s)) = order.pop() {
        let floor =
            |best: Option<(usize, usize, f64)>, bar: f64| best.map_or(bar, |b| b.2.max(bar));
        if let Some(b) = best {
            // Every later service could gain at most this much (the
            // order is by `most` as sorted, bounds for stale services).
            if short_of(p.most[s], b.2) {
                break;
            }
        }
        if short_of(p.most[s], floor(best, p.bar[s])) {
            continue;
        }
        if p.is_stale(s) {
            // It might matter: now read what it really gains. Visiting it
            // out of its new order is safe, as the result is the best over
            // every service visited and the break above reads bounds.
            p.refresh(ctx, state, candidates, deltas, s);
            if short_of(p.most[s], floor(best, p.bar[s])) {
                continue;
            }
        }
        consider(
            ctx,
            state,
            candidates,
            deltas,
            s,
            (p.copy[s], p.leave[s], p.bar[s]),
            &mut best,
            blocked,
            by_site,
        );
    }
    // Keep the allocation for the next step.
    *hopeful = order.into_vec();
    best
}

/// A service in [`best_move`]'s order: the most it could gain, larger
/// first (`total_cmp`, so a NaN cannot break the order), then lower id.
struct Hope(f64, usize);

impl PartialEq for Hope {
    fn eq(&self, other: &Hope) -> bool {
        self.cmp(other) == std::cmp::Ordering::Equal
    }
}

impl Eq for Hope {}

impl PartialOrd for Hope {
    fn partial_cmp(&self, other: &Hope) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Hope {
    fn cmp(&self, other: &Hope) -> std::cmp::Ordering {
        self.0.total_cmp(&other.0).then(other.1.cmp(&self.1))
    }
}

/// Service `s`'s candidates against the best move found so far (`best`,
/// replaced by a larger gain, or an equal one with lower ids), given its
/// `(copy, leave, bar)`. Feasibility meets ranking here: only a certified
/// fit counts; a move that clears but does not fit is `blocked` while
/// nothing fits.
#[allow(clippy::too_many_arguments)]
fn consider(
    ctx: &Ctx,
    state: &State,
    candidates: &Candidates,
    deltas: &Deltas,
    s: usize,
    (copy, leave, bar): (f64, f64, f64),
    best: &mut Option<(usize, usize, f64)>,
    blocked: &mut Vec<(f64, usize, usize)>,
    by_site: &mut [(f64, f64)],
) {
    for (c, rt, xs) in deltas.each(ctx, s, candidates.of(s), by_site) {
        let floor = best.map_or(bar, |b| b.2.max(bar));
        if short_of(rt + xs + leave + copy, floor) {
            continue;
        }
        let gain = Deltas::terms(ctx, state, s, c, (rt, xs), copy).gain();
        if !(gain >= bar && gain > 0.0) {
            continue;
        }
        if let Some((bs, bc, g)) = *best {
            if gain < g || (gain == g && (s, c) > (bs, bc)) {
                continue;
            }
        }
        if !state.certainly_fits(ctx, s, c) {
            // What a compound step may make room for
            // (`group::make_room`, which orders them). Once a move fits,
            // only blocked moves that beat it get past the floor above.
            blocked.push((gain, s, c));
            continue;
        }
        *best = Some((s, c, gain));
    }
}

/// The best feasible move that clears both bars, if any, looking at every
/// service in id order: the reference [`best_move`] is tested against.
fn best_move_in_order(
    ctx: &Ctx,
    state: &State,
    candidates: &Candidates,
    deltas: &Deltas,
    moved: &[bool],
    blocked: &mut Vec<(f64, usize, usize)>,
    by_site: &mut [(f64, f64)],
) -> Option<(usize, usize, f64)> {
    blocked.clear();
    let mut best: Option<(usize, usize, f64)> = None;
    for (s, &done) in moved.iter().enumerate() {
        if done || candidates.of(s).is_empty() {
            continue;
        }
        let copy = cost::copy_term(ctx, s);
        // Upper bound on the headroom term: what leaving saves at the
        // source (arriving can only cost).
        let leave = state.marginal_headroom(ctx, s);
        // Same expression as `State::current_cost`, from the cache.
        let bar = cost::bar(ctx, deltas.here[s] + leave);
        if short_of(
            deltas.best_flows[s] + leave + copy,
            best.map_or(bar, |b| b.2.max(bar)),
        ) {
            continue;
        }
        consider(
            ctx,
            state,
            candidates,
            deltas,
            s,
            (copy, leave, bar),
            &mut best,
            blocked,
            by_site,
        );
    }
    best
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

/// How much more the targeted plan must improve the estate than the best
/// other plan, as a fraction of that plan's improvement. Its first step is
/// one large group found by a search rather than steps each weighed on its
/// own, which a person checks less easily; 10 % keeps the advice in small
/// steps wherever they come close (the sample estate: the targeted plan
/// would gain 2.8 % more with a 27-service step, and is not taken) while on
/// generated estates every plan that falls more than 10 % short of the
/// reference is replaced (`docs/quality.md`).
pub const TARGET_MARGIN: f64 = 0.10;

/// A scale for comparing improvements: the number of flows (the cost is a
/// sum over flows), so the tolerance stays relative without a first plan.
fn estate_cost_scale(estate: &Estate) -> f64 {
    estate.flows.len() as f64
}

/// Which compound steps a plan searches.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Search {
    /// Gathered groups ([`group::GROW_MEMBERS`]) beside pairs, chains and
    /// make-room.
    pub gather: bool,
    /// Groups weighed against the best single move at every step, not only
    /// when no single move clears ([`group::beats_alone`]).
    pub weighed: bool,
    /// The plan's first step is the moves to the placement a local search
    /// found ([`anneal::local_search`]), as one planned group
    /// ([`planned_group`]).
    pub target: bool,
}

impl Search {
    pub const PAIRS: Search = Search {
        gather: false,
        weighed: false,
        target: false,
    };
    pub const GATHER: Search = Search {
        gather: true,
        weighed: false,
        target: false,
    };
    pub const WEIGHED: Search = Search {
        gather: true,
        weighed: true,
        target: false,
    };
    pub const TARGETED: Search = Search {
        gather: true,
        weighed: true,
        target: true,
    };
}

/// The targeted plan's local search gets this share of the evaluations of
/// the `local-search` decider ([`anneal::evaluations`]). On generated
/// estates of 40 and 80 services a quarter found placements as good for
/// the advice as the full budget (same capture to the tenth of a percent),
/// at a quarter of its run time (advise 18 / 40 ms against 43 / 80 ms).
const TARGET_SHARE: u64 = 4;

/// The targeted plan's first step: the moves from the current placement to
/// `target` as one planned group, if its gain clears its bar. Moves that
/// save nothing are put back first, one at a time in service order, each
/// when the placement then costs no more and the rest can still be ordered
/// (a local search leaves such moves where the cost is flat), so the group
/// holds only moves that matter. Members in `anneal::order_moves`'s
/// certified order. Called before any move, so `state` is the estate as
/// it is.
fn planned_group(
    ctx: &Ctx,
    state: &mut State,
    target: &[usize],
    room: usize,
) -> Option<group::Found> {
    let home: Vec<usize> = ctx.estate.services.iter().map(|s| s.cluster).collect();
    debug_assert_eq!(state.placement, home, "the targeted plan's first step");
    let mut placement = target.to_vec();
    let mut cost_now = anneal::placement_cost(ctx, &placement);
    for s in 0..placement.len() {
        let c = placement[s];
        if c == home[s] {
            continue;
        }
        placement[s] = home[s];
        let back = anneal::placement_cost(ctx, &placement);
        if back <= cost_now + 1e-9 * (1.0 + cost_now.abs())
            && anneal::order_moves(ctx, &placement).is_ok()
        {
            cost_now = back;
        } else {
            placement[s] = c;
        }
    }
    let order = anneal::order_moves(ctx, &placement).ok()?;
    if order.len() < 2 || order.len() > room {
        return None;
    }
    let terms = group::replay(ctx, state, &order)?;
    let gain: f64 = terms.iter().map(Terms::gain).sum();
    let ids: Vec<usize> = order.iter().map(|&(s, _)| s).collect();
    let bar = cost::step_bar(ctx, group::current_cost(ctx, state, &ids), ids.len());
    (gain >= bar && gain > 0.0).then_some(group::Found {
        kind: GroupKind::Planned,
        members: order,
        gain,
    })
}

/// Spends `work` from the weighing budget `left` when it covers it; when
/// it does not, the budget is closed (set to 0): weighing stops for the
/// rest of the plan, so each step is weighed or not by one rule, in order.
fn spend(left: &mut u64, work: u64) -> bool {
    if work <= *left {
        *left -= work;
        true
    } else {
        *left = 0;
        false
    }
}

/// Copy points of the recommended moves (those the evidence backs).
fn recommended_copy(moves: &[Move]) -> f64 {
    moves
        .iter()
        .filter(|m| m.is_recommended())
        .map(|m| -m.terms.copy)
        .sum()
}

/// Points an advice saves: cost before − (cost after + copy cost), of the
/// recommended moves (those the evidence backs) only.
pub fn improvement(advice: &Advice) -> f64 {
    let copy = recommended_copy(&advice.moves);
    advice.totals_before.cost - (advice.totals_after.cost + copy)
}

/// One sequential plan (`docs/advice.md` §6) with the compound steps of
/// `search`.
pub fn plan(estate: &Estate, policy: &Policy, now: i64, cache: Cache, search: Search) -> Advice {
    plan_run(estate, policy, now, cache, search).advice
}

/// What the budgets of an estate buy (`docs/advice.md` §6, "Budgets"),
/// read before any move.
#[derive(Clone, Copy, Debug)]
pub struct Budgets {
    /// [`group::weigh_budget`].
    pub weigh: u64,
    /// The first step's group search ([`group::search_work`]).
    pub first_search: u64,
    /// The targeted plan's local-search evaluations
    /// ([`anneal::evaluations`] ÷ [`TARGET_SHARE`]).
    pub target: u64,
    /// The evaluations its greedy start needs: one per destination of
    /// every service that has a flow ([`target_need`]).
    pub target_need: u64,
}

impl Budgets {
    pub fn of(ctx: &Ctx, candidates: &Candidates) -> Budgets {
        let moved = vec![false; ctx.estate.services.len()];
        Budgets {
            weigh: group::weigh_budget(ctx),
            first_search: group::search_work(ctx, &moved, candidates),
            target: anneal::evaluations(ctx) / TARGET_SHARE,
            target_need: target_need(ctx, candidates),
        }
    }

    /// Whether the weighed plan weighs the first step at all.
    pub fn weighs(&self) -> bool {
        self.first_search <= self.weigh
    }

    /// Whether the targeted plan's evaluations cover its greedy start.
    pub fn targets(&self) -> bool {
        self.target_need <= self.target
    }
}

/// The evaluations the targeted plan's local search spends on its greedy
/// start (one per destination of each service), counted over the services
/// that have a flow: a service without one adds evaluations to the budget
/// (through [`anneal::evaluations`], which falls with the mean degree) and
/// none to this need, so it never takes the targeted plan away from the
/// others.
pub fn target_need(ctx: &Ctx, candidates: &Candidates) -> u64 {
    (0..ctx.estate.services.len())
        .filter(|&s| !ctx.adjacency[s].is_empty())
        .map(|s| candidates.of(s).len() as u64)
        .sum()
}

/// One plan's advice, whether it searched for a group at any step, and
/// the estate's budgets.
struct PlanRun {
    advice: Advice,
    searched: bool,
    budgets: Budgets,
}

fn plan_run(estate: &Estate, policy: &Policy, now: i64, cache: Cache, search: Search) -> PlanRun {
    let ctx = Ctx::new(estate, policy, now);
    let feas = feasibility_with(estate, cache);
    let mut state = State::initial(estate);
    let totals_before = state.totals(&ctx);
    let n = estate.services.len();
    let mut deltas = match cache {
        Cache::Shared => Deltas::new(&ctx),
        Cache::PerCandidate => Deltas::exhaustive(&ctx),
    };
    for s in 0..n {
        deltas.refresh(&ctx, &state, feas.candidates.of(s), s);
    }
    let mut moved = vec![false; n];
    let mut moves = Vec::new();
    let mut touched = vec![false; n];
    let mut blocked = Vec::new();
    let mut by_site = vec![(0.0, 0.0); estate.sites.len()];
    let mut prospects = Prospects::new(&ctx, &state, &deltas);
    let mut loaded = Vec::new();
    let mut hopeful = Vec::new();
    let mut moved_now = Vec::new();
    let mut unbacked_gain = 0.0;
    // Whether a group search ran (for `advise_with`), and the weighing
    // budget left: each step's weighing spends its search's work, and
    // once a step's weighing costs more than what is left the plan stops
    // weighing (`docs/advice.md` §6, "The weighing budget").
    let mut searched = false;
    let budgets = Budgets::of(&ctx, &feas.candidates);
    let mut weigh_left = if search.weighed { budgets.weigh } else { 0 };
    let target: Option<Vec<usize>> = search.target.then(|| {
        let doms = anneal::domains_from(&ctx, &feas.candidates);
        anneal::local_search(&ctx, &doms, budgets.target, anneal::SEED, policy.max_moves).placement
    });
    while moves.len() < policy.max_moves {
        let single = match cache {
            Cache::Shared => best_move(
                &ctx,
                &state,
                &feas.candidates,
                &mut deltas,
                &mut prospects,
                &moved,
                &mut blocked,
                &mut by_site,
                &mut hopeful,
            ),
            Cache::PerCandidate => best_move_in_order(
                &ctx,
                &state,
                &feas.candidates,
                &deltas,
                &moved,
                &mut blocked,
                &mut by_site,
            ),
        };
        // On estates small enough, a group is also weighed against the best
        // single move at every step: a whole application may gain more
        // moved together than its members would each moved alone, and once
        // singles have scattered it inside its site it can no longer move
        // (each service moves once).
        // The targeted plan starts with the moves to the placement its
        // local search found, as one group, whatever the single moves:
        // that plan is weighed whole against the others (`advise_with`).
        let planned = match &target {
            Some(target) if moves.is_empty() => {
                planned_group(&ctx, &mut state, target, policy.max_moves)
            }
            _ => None,
        };
        let rival = match single {
            _ if planned.is_some() => planned,
            Some((_, _, gain))
                if search.weighed
                    && weigh_left > 0
                    && spend(
                        &mut weigh_left,
                        group::search_work(&ctx, &moved, &feas.candidates),
                    ) =>
            {
                searched = true;
                prospects.refresh_all(&ctx, &state, &feas.candidates, &mut deltas, &moved);
                // Only blocked moves that gain more than the best single
                // move: those every scan order collects (no bound skips a
                // move above the final floor), so the shared and the
                // per-candidate caches see the same list; the others a
                // scan may or may not have met before it found the best.
                blocked.retain(|&(g, _, _)| g > gain);
                let inputs = group::Inputs {
                    candidates: &feas.candidates,
                    deltas: &deltas,
                    moved: &moved,
                    blocked: &blocked,
                    room: policy.max_moves - moves.len(),
                    gather: search.gather,
                };
                group::best(&ctx, &mut state, &inputs).filter(|found| {
                    found.gain > gain && group::beats_alone(&ctx, &state, &feas.candidates, found)
                })
            }
            _ => None,
        };
        // When a group wins over a single move: that move's gain.
        let mut over_single: Option<(usize, usize, f64)> = None;
        let (members, kind) = match (single, rival) {
            (_, Some(found)) => {
                over_single = single;
                (found.members, Some(found.kind))
            }
            (Some((s, to, _)), None) => (vec![(s, to)], None),
            (None, None) => {
                // No single move clears its bar: one step may move a small
                // group together (`group`), then singles resume. The group
                // search reads every cache.
                searched = true;
                prospects.refresh_all(&ctx, &state, &feas.candidates, &mut deltas, &moved);
                let inputs = group::Inputs {
                    candidates: &feas.candidates,
                    deltas: &deltas,
                    moved: &moved,
                    blocked: &blocked,
                    room: policy.max_moves - moves.len(),
                    gather: search.gather,
                };
                match group::best(&ctx, &mut state, &inputs) {
                    Some(found) => (found.members, Some(found.kind)),
                    None => break,
                }
            }
        };
        let group = kind.map(|kind| {
            let mut g = describe_group(&ctx, &mut state, kind, &members, moves.len() + 1);
            if let Some((s, to, gain)) = over_single {
                let alone = group::alone_best(&ctx, &state, &feas.candidates, &members);
                g.summary.push_str(&format!(
                    " Taken over the best single move ({} to {}, +{}): moved one at a time, each where it is best alone, the group's services would gain {}.",
                    estate.services[s].id,
                    estate.clusters[to].id,
                    constraints::round2(gain),
                    constraints::round2(alone)
                ));
            }
            g
        });
        let group_evidence = group
            .as_ref()
            .and_then(|_| evidence_words(&group_facts(&ctx, &state, &members)));
        // A step the evidence cannot back is listed apart ("Not enough
        // evidence to recommend") and is *not made*: the placement the
        // later steps start from, `totals_after` and the bound are those
        // of the recommended steps alone, so the headline is exactly what
        // taking the recommended moves gives (`docs/advice.md`, "Totals
        // are of what is recommended"). Its members are replayed on a copy.
        let backed = match (&group, members.as_slice()) {
            (Some(_), _) => group_evidence.is_none(),
            (None, &[(s, to)]) => {
                evidence_words(&cost::deciding_facts(&ctx, &state, s, to)).is_none()
            }
            (None, _) => unreachable!("a step without a group moves one service"),
        };
        let mut aside = (!backed).then(|| state.clone());
        for &(s, to) in &members {
            let st: &mut State = aside.as_mut().unwrap_or(&mut state);
            let current_cost = st.current_cost(&ctx, s);
            let terms = cost::move_terms(&ctx, st, s, to);
            // A single move's terms replayed give the gain it was chosen
            // by (when a group won, `single` is the move it beat, not
            // one of its members).
            if let (None, Some((_, _, gain))) = (kind, single) {
                debug_assert_eq!(terms.gain(), gain);
            }
            let facts = cost::deciding_facts(&ctx, st, s, to);
            let from = st.placement[s];
            let (bar, confidence, evidence) = match &group {
                Some(g) => (g.bar, g.confidence, group_evidence.clone()),
                None => (
                    cost::bar(&ctx, current_cost),
                    cost::confidence(&facts),
                    evidence_words(&facts),
                ),
            };
            moves.push(Move {
                step: moves.len() + 1,
                service: estate.services[s].id.clone(),
                from: estate.clusters[from].id.clone(),
                to: estate.clusters[to].id.clone(),
                gain: terms.gain(),
                current_cost,
                bar,
                confidence,
                evidence,
                terms,
                facts,
                group: group.clone(),
            });
            st.apply(&ctx, s, to);
            moved[s] = true;
            if backed {
                loaded.extend([from, to]);
                moved_now.push((s, from, to));
            } else {
                unbacked_gain += terms.gain();
            }
        }
        // Only the moved services and their peers see different flow
        // costs, and only those that may still move need their cache. The
        // reference refreshes them now; advice widens their bounds and
        // refreshes each when something reads it (`Prospects::slack`).
        for &(s, from, to) in &moved_now {
            // Only the shared cache widens bounds by it.
            let shift = match cache {
                Cache::Shared => rtt_shift(&ctx, from, to),
                Cache::PerCandidate => 0.0,
            };
            for &(f, peer) in &ctx.adjacency[s] {
                if moved[peer] || feas.candidates.of(peer).is_empty() {
                    continue;
                }
                match cache {
                    Cache::PerCandidate => {
                        if !touched[peer] {
                            touched[peer] = true;
                            deltas.refresh(&ctx, &state, feas.candidates.of(peer), peer);
                            prospects.update(&ctx, &state, &deltas, peer);
                        }
                    }
                    Cache::Shared => {
                        touched[peer] = true;
                        let rt_weight = ctx.round_trip_per_ms(f).abs();
                        let xs_points = ctx.cross_site_points(f).abs();
                        prospects.loosen(peer, rt_weight * shift + xs_points);
                    }
                }
            }
        }
        if cache == Cache::Shared {
            for &(s, _, _) in &moved_now {
                for &(_, peer) in &ctx.adjacency[s] {
                    if touched[peer] {
                        prospects.update(&ctx, &state, &deltas, peer);
                    }
                }
            }
        }
        // Leaving saves something else on a cluster whose load changed.
        loaded.sort_unstable();
        loaded.dedup();
        for &c in &loaded {
            for i in 0..prospects.on[c].len() {
                let s = prospects.on[c][i];
                if !moved[s] {
                    prospects.update(&ctx, &state, &deltas, s);
                }
            }
        }
        loaded.clear();
        for &(s, _, _) in &moved_now {
            for &(_, peer) in &ctx.adjacency[s] {
                touched[peer] = false;
            }
        }
        moved_now.clear();
    }
    let totals_after = state.totals(&ctx);
    let copy = recommended_copy(&moves);
    let bound = Bound::new(
        bound::cost_at_least(&ctx, &feas.candidates),
        totals_before.cost,
        totals_after.cost + copy,
    );
    let cant_tell = cant_tell(
        &ctx,
        &state,
        &feas.candidates,
        &mut deltas,
        &mut prospects,
        &moved,
    );
    let unknown_capacity = estate
        .clusters
        .iter()
        .filter_map(|c| {
            let mut missing = Vec::new();
            if c.cpu_free.value.is_none() {
                missing.push(format!("{} cpu_free", c.id));
            }
            if c.memory_free_gib.value.is_none() {
                missing.push(format!("{} memory_free_gib", c.id));
            }
            (!missing.is_empty()).then(|| UnknownCapacity {
                cluster: c.id.clone(),
                missing,
            })
        })
        .collect();
    let unknown_requests = estate
        .services
        .iter()
        .filter_map(|s| {
            let missing = s.unknown_requests();
            (!missing.is_empty()).then(|| UnknownRequest {
                service: s.id.clone(),
                cluster: estate.clusters[s.cluster].id.clone(),
                missing: missing.into_iter().map(String::from).collect(),
            })
        })
        .collect();
    let advice = Advice {
        estate: estate.name.clone(),
        estate_version: crate::export::version(estate),
        policy_digest: policy.digest(),
        now: format_time(now),
        totals_before,
        totals_after,
        bound,
        moves,
        unbacked_gain,
        immovable: feas.immovable,
        cant_tell,
        unknown_capacity,
        unknown_requests,
    };
    PlanRun {
        advice,
        searched,
        budgets,
    }
}

/// The group of a compound step, from the placement before it: its gain,
/// cost and bar, its confidence (the weakest deciding fact of any member,
/// each taken at its turn), and each member moved alone.
fn describe_group(
    ctx: &Ctx,
    state: &mut State,
    kind: GroupKind,
    members: &[(usize, usize)],
    first_step: usize,
) -> Group {
    let estate = ctx.estate;
    let ids: Vec<usize> = members.iter().map(|&(s, _)| s).collect();
    let current_cost = group::current_cost(ctx, state, &ids);
    let bar = cost::step_bar(ctx, current_cost, ids.len());
    let terms = group::replay(ctx, state, members).expect("the search replayed this group");
    let gain: f64 = terms.iter().map(Terms::gain).sum();
    let facts = group_facts(ctx, state, members);
    let alone: Vec<Alone> = members
        .iter()
        .map(|&(s, c)| Alone {
            service: estate.services[s].id.clone(),
            to: estate.clusters[c].id.clone(),
            gain: cost::move_terms(ctx, state, s, c).gain(),
            bar: cost::bar(ctx, state.current_cost(ctx, s)),
            fits: state.certainly_fits(ctx, s, c),
        })
        .collect();
    let summary = group_summary(ctx, kind, &alone, gain, (current_cost, bar));
    Group {
        kind,
        steps: (first_step..first_step + members.len()).collect(),
        services: alone.iter().map(|a| a.service.clone()).collect(),
        gain,
        current_cost,
        bar,
        confidence: cost::confidence(&facts),
        alone,
        summary,
    }
}

/// Every member's deciding facts, each at its turn, merged by key.
pub(crate) fn group_facts(ctx: &Ctx, state: &State, members: &[(usize, usize)]) -> Vec<FactRef> {
    let mut facts = Vec::new();
    let mut scratch = state.clone();
    for &(s, c) in members {
        facts.extend(cost::deciding_facts(ctx, &scratch, s, c));
        scratch.apply(ctx, s, c);
    }
    facts.sort_by(|a, b| a.fact.cmp(&b.fact));
    facts.dedup_by(|a, b| a.fact == b.fact);
    facts
}

/// "Moving cart alone costs 12.4 points; moving cart-redis alone gains
/// nothing; moved together, cart and cart-redis gain 48.0 points against
/// a bar of 7.2 (15 % of their cost, 48.0)." The bar is said with the rule
/// that set it, so a large step reads "12 services must gain at least 24
/// points (2 each); together they gain 4.16".
fn group_summary(
    ctx: &Ctx,
    kind: GroupKind,
    alone: &[Alone],
    gain: f64,
    (current_cost, bar): (f64, f64),
) -> String {
    let r = constraints::round2;
    let each: Vec<String> = alone
        .iter()
        .map(|a| {
            let what = if !a.fits {
                format!("does not certainly fit on {}", a.to)
            } else if r(a.gain) == 0.0 {
                "gains nothing".to_string()
            } else if a.gain <= 0.0 {
                format!("costs {} points", r(-a.gain))
            } else if a.gain >= a.bar {
                // A group weighed against single moves may hold a member
                // that would clear its own bar: the group beat that.
                format!("gains {} points", r(a.gain))
            } else {
                format!("gains only {} points (bar {})", r(a.gain), r(a.bar))
            };
            format!("moving {} alone {what}", a.service)
        })
        .collect();
    let names: Vec<&str> = alone.iter().map(|a| a.service.as_str()).collect();
    let together = match kind {
        GroupKind::Together | GroupKind::Gathered | GroupKind::Planned => {
            format!("moved together, {} gain", and_list(&names))
        }
        GroupKind::MakeRoom => {
            format!("with {} leaving first to make room, the two gain", names[0])
        }
    };
    let mut first = each.join("; ");
    if let Some(c) = first.get_mut(0..1) {
        c.make_ascii_uppercase();
    }
    let p = ctx.policy;
    let n = alone.len();
    let rule = if p.min_gain_points * n as f64 >= p.min_gain_fraction * current_cost {
        format!(
            "{n} services must gain at least {} points ({} each)",
            r(bar),
            r(p.min_gain_points)
        )
    } else {
        format!(
            "the step must gain at least {} points ({} % of its cost, {})",
            r(bar),
            r(p.min_gain_fraction * 100.0),
            r(current_cost)
        )
    };
    format!("{first}; {together} {} points; {rule}.", r(gain))
}

/// "a, b and c".
fn and_list(names: &[&str]) -> String {
    match names.split_last() {
        None => String::new(),
        Some((last, [])) => last.to_string(),
        Some((last, rest)) => format!("{} and {last}", rest.join(", ")),
    }
}

/// "Not enough evidence" wording when the weakest deciding fact is a guess.
pub fn evidence_words(facts: &[FactRef]) -> Option<String> {
    let guesses = facts.iter().filter(|f| f.class == Class::Guessed).count();
    if guesses == 0 {
        return None;
    }
    let total = facts.len();
    let verb = if guesses == 1 {
        "is a guess"
    } else {
        "are guesses"
    };
    // Traffic nobody observed is named first: it is the input most likely
    // to be a hidden zero (docs/advice.md §2 "Traffic coverage").
    let never: Vec<&str> = facts
        .iter()
        .filter(|f| f.value.is_none() && f.source == crate::estate::NEVER_OBSERVED)
        .filter_map(|f| f.fact.strip_prefix("traffic "))
        .collect();
    let unobserved = match never.len() {
        0 => String::new(),
        n => format!(
            "the traffic of {} {} never been observed; ",
            and_list(&never),
            if n == 1 { "has" } else { "have" }
        ),
    };
    let unknown_data = crate::cost::unknown_data_words(facts);
    Some(format!(
        "Not enough evidence to recommend — {unobserved}{unknown_data}{guesses} of {total} inputs {verb}."
    ))
}

/// Per service not moved: its best destination whose fit can't be told,
/// when that destination would clear the bars and beat every destination
/// that certainly fits — the places where uncertainty, not the cost, is
/// what keeps a move from being recommended. One entry per service at
/// most, so the list stays readable on large estates.
fn cant_tell(
    ctx: &Ctx,
    state: &State,
    candidates: &Candidates,
    deltas: &mut Deltas,
    prospects: &mut Prospects,
    moved: &[bool],
) -> Vec<CantTell> {
    let mut out = Vec::new();
    let mut by_site = vec![(0.0, 0.0); ctx.estate.sites.len()];
    for (s, &done) in moved.iter().enumerate() {
        let cands = candidates.of(s);
        // A moved service is not moved again (and its cache is not kept).
        if cands.is_empty() || done {
            continue;
        }
        if prospects.is_stale(s) {
            // Its bounds say whether any candidate could clear the bar
            // (the test below, on bounds); only then is it read afresh.
            prospects.update(ctx, state, deltas, s);
            if short_of(prospects.most[s], prospects.bar[s]) {
                continue;
            }
            prospects.refresh(ctx, state, candidates, deltas, s);
        }
        let copy = cost::copy_term(ctx, s);
        let leave = state.marginal_headroom(ctx, s);
        let bar = cost::bar(ctx, deltas.here[s] + leave);
        // The test each candidate meets below, on the best of them: when
        // even that fails, every candidate does (the sums are the same
        // sums, and adding is monotone), so the walk is skipped.
        if short_of(deltas.best_flows[s] + leave + copy, bar) {
            continue;
        }
        let mut best_fit = f64::NEG_INFINITY;
        let mut best_unsure: Option<(f64, usize)> = None;
        for (c, rt, xs) in deltas.each(ctx, s, cands, &mut by_site) {
            if short_of(rt + xs + leave + copy, bar) {
                continue;
            }
            let gain = Deltas::terms(ctx, state, s, c, (rt, xs), copy).gain();
            if !(gain >= bar && gain > 0.0) {
                continue;
            }
            match state.fit_code(ctx, s, c) {
                FitCode::Fits => best_fit = best_fit.max(gain),
                FitCode::CantTell(_) if best_unsure.is_none_or(|(g, _)| gain > g) => {
                    best_unsure = Some((gain, c));
                }
                _ => {}
            }
        }
        let Some((gain, c)) = best_unsure.filter(|&(g, _)| g > best_fit) else {
            continue;
        };
        if let Fit::CantTell { fact, message } = state.fit(ctx, s, c) {
            out.push(CantTell {
                service: ctx.estate.services[s].id.clone(),
                from: ctx.estate.clusters[state.placement[s]].id.clone(),
                cluster: ctx.estate.clusters[c].id.clone(),
                gain_if_it_fits: gain,
                fact,
                message,
            });
        }
    }
    out
}
