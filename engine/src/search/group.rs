//! Compound steps: when no single move clears its bar, one step of the
//! sequential advice may move a small group of services together
//! (`docs/advice.md`, "Compound steps").
//!
//! Two kinds of group are searched, both read off the flow graph and the
//! blocked moves, never the whole estate:
//!
//! - **together**: two or three services tied by their heaviest flows
//!   (each member among the [`COUPLED`] heaviest peers of another) move to
//!   one cluster. Each alone would tear a heavy flow apart and lose; moved
//!   together they keep it and go where their other peers are.
//! - **make room**: a move that would clear its bar but does not fit (its
//!   destination's free capacity is too small or too uncertain) is made
//!   possible by moving one service out of that destination first.
//!
//! Every member is certified when it is applied, in the group's order, just
//! like a single move: the step is a sequence a person can carry out with no
//! cluster ever over its certified capacity. (A swap between two clusters
//! that each certify nothing is therefore out of reach: whichever service
//! goes first would overfill its destination.) The group's gain is the sum
//! of its members' terms, applied in order, and must clear both bars of
//! SPEC §5 against the group's current cost ([`current_cost`]).
//!
//! The search is in two stages. The first scores every candidate group by
//! arithmetic on the cached per-candidate deltas of `advise` (exact in real
//! numbers, rounded differently); the second replays the promising ones in
//! order of that score, with the engine's own `move_terms` and fit, and
//! keeps the best whose replayed gain clears the bar. Ties break on the
//! members' ids, then the destinations' ids. Everything runs in index
//! (= id) order, so the result is deterministic.

use serde::{Deserialize, Serialize};

use crate::candidates::Candidates;
use crate::constraints::Load;
use crate::cost::{self, Ctx, State, Terms};
use crate::deltas::Deltas;
use crate::fact::Class;

/// How many of a service's heaviest peers can join it in a *together*
/// group. A call tree's heavy traffic runs along a few edges per service
/// (a front end to its API, an API to its store); three keeps the search to
/// about 3 pairs per service while covering the tightly coupled ones.
pub const COUPLED: usize = 3;

/// How many blocked moves (clear the bar, do not fit) are tried with a
/// service leaving their destination, best gain first. Blocked moves with
/// the largest gains are the ones worth making room for; sixteen bounds the
/// search on large estates.
pub const BLOCKED: usize = 16;

/// Estates with at most this many clusters try every cluster as a
/// *together* destination; larger ones only the clusters of sites where
/// one of the pair's other peers runs. A pair may gain by going somewhere
/// none of its peers is (a site between them, or the only one with room),
/// so scanning all is the better search; at 64 clusters it is ≈ 64 cheap
/// scores per pair, while at hundreds of clusters and tens of thousands of
/// services it would dominate advise's run time.
pub const CLUSTER_SCAN: usize = 64;

/// Largest *together* pair-or-chain. Three covers a pair plus the store
/// or client it drags along.
pub const MAX_MEMBERS: usize = 3;

/// Largest *grown* group. Whole applications of 4–9 services, each of which
/// (and each pair of which) loses alone, are where a pair search gives up
/// (`docs/quality.md`); eight covers most of them in one step, and what is
/// left of a larger one then usually gains alone. Each growth step costs
/// one score per peer of the group, and a score is quadratic in the
/// members, so eight keeps a seed's growth to a few thousand flow lookups.
pub const GROW_MEMBERS: usize = 12;

/// How many clusters of the seed's site a grown group's members may go
/// to. Generated and real sites hold a handful of clusters; eight keeps a
/// growth step to eight scores per peer on a site with hundreds.
pub const SITE_CLUSTERS: usize = 8;

/// How many seeds grow: the pairs with the best first-stage scores (the
/// pairs that lose least, where every pair loses). All pairs of a small
/// estate; a bounded number on a large one, whose compound search runs
/// once per step that no single move clears.
pub const GROW_SEEDS: usize = 24;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum GroupKind {
    /// Services tied by heavy flows move to one cluster together.
    Together,
    /// A group grown from a pair along its flows, one peer at a time, the
    /// peer that helps the group most first: typically a whole application
    /// that only gains once most of it has moved.
    Gathered,
    /// The first member leaves a cluster so that the second fits there.
    MakeRoom,
    /// The moves still missing to the placement a local search found, as
    /// one step (`advise`'s targeted plan).
    Planned,
}

/// A compound step, carried by each of its members' moves.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Group {
    pub kind: GroupKind,
    /// The members' steps, in the order they are applied.
    pub steps: Vec<usize>,
    /// The members' service ids, in the order they are applied.
    pub services: Vec<String>,
    /// Points: the sum of the members' gains.
    pub gain: f64,
    /// The group's cost before the step ([`current_cost`]).
    pub current_cost: f64,
    /// The gain the group had to reach: the larger of both bars.
    pub bar: f64,
    /// The weakest deciding fact of any member.
    pub confidence: Class,
    /// Each member moved alone, from the placement before the step.
    pub alone: Vec<Alone>,
    /// Plain words: why the group and not its members.
    pub summary: String,
}

/// One member of a group, moved alone to its group destination.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[cfg_attr(feature = "schema", schemars(rename = "GroupMemberAlone"))]
pub struct Alone {
    pub service: String,
    pub to: String,
    pub gain: f64,
    /// Its own bar (both bars against its own current cost).
    pub bar: f64,
    /// Whether it would certainly fit alone.
    pub fits: bool,
}

/// A group found by [`best`]: members with destinations, in order.
pub(crate) struct Found {
    pub kind: GroupKind,
    pub members: Vec<(usize, usize)>,
    pub gain: f64,
}

/// The cost a group causes where it is: the round-trip and cross-site
/// points of every flow touching a member (each flow once), plus the
/// headroom points the members cause together on their clusters.
pub fn current_cost(ctx: &Ctx, state: &State, members: &[usize]) -> f64 {
    let mut flows: Vec<usize> = members
        .iter()
        .flat_map(|&s| ctx.adjacency[s].iter().map(|&(f, _)| f))
        .collect();
    flows.sort_unstable();
    flows.dedup();
    let mut total = 0.0;
    for f in flows {
        let fl = &ctx.estate.flows[f];
        let (rt, xs) = ctx.flow_cost(f, state.placement[fl.from], state.placement[fl.to]);
        total += rt + xs;
    }
    let mut sources: Vec<usize> = members.iter().map(|&s| state.placement[s]).collect();
    sources.sort_unstable();
    sources.dedup();
    for c in sources {
        let l = state.load[c];
        let mut without = l;
        for &s in members.iter().filter(|&&s| state.placement[s] == c) {
            let svc = &ctx.estate.services[s];
            without.cpu_in -= svc.cpu_in_load();
            without.memory_in -= svc.memory_in_load();
        }
        total += ctx.headroom(c, l) - ctx.headroom(c, without);
    }
    total
}

/// The members' terms when applied in order from `state`, or `None` when
/// one of them does not certainly fit at its turn. `state` is restored
/// bit for bit (placement and loads saved, not recomputed).
pub fn replay(ctx: &Ctx, state: &mut State, members: &[(usize, usize)]) -> Option<Vec<Terms>> {
    let mut saved: Vec<(usize, usize, Load, Load)> = Vec::with_capacity(members.len());
    let mut terms = Vec::with_capacity(members.len());
    let mut ok = true;
    for &(s, c) in members {
        if !state.certainly_fits(ctx, s, c) {
            ok = false;
            break;
        }
        terms.push(cost::move_terms(ctx, state, s, c));
        let from = state.placement[s];
        saved.push((s, from, state.load[from], state.load[c]));
        state.apply(ctx, s, c);
    }
    for &(s, from, lf, lt) in saved.iter().rev() {
        let to = state.placement[s];
        state.placement[s] = from;
        state.load[to] = lt;
        state.load[from] = lf;
    }
    ok.then_some(terms)
}

/// The work a plan may spend weighing the best group against the best
/// single move at each step (`docs/advice.md` §6, "Budgets"), in units of
/// [`search_work`]: a base, then a share per service and flow. The base
/// buys a weighing at every one of the default 40 steps up to about 40
/// coupled services and the first 24 at 100 (a generated estate of 100
/// services and 480 flows: 975 units a step), where a greedy start most
/// often scatters an application inside its site when the whole of it
/// would gain more elsewhere (`docs/quality.md`). Twice this base (every
/// step at 100 services) captured no more on the medium estates of 40, 80
/// and 150 services (the same median, p5 and mean to 0.1 %), and a step's
/// search costs 3–7 µs a unit on this project's machines (about 40 ms a
/// step at 1,000 services), so the base keeps the weighing near 100 ms per
/// plan at any size.
pub const WEIGH_BASE: u64 = 24_000;

/// Units of weighing budget added per service and per flow of the estate
/// ([`WEIGH_BASE`]): the budget grows with the estate, so adding a service
/// never shortens the weighing of the others (a service with no free peer
/// adds budget and no work), while a step of a large estate's search,
/// which costs about twice its size, is never bought by the share alone —
/// 0.25 keeps the 5,000 × 50 benchmark estate (64,000 units a step,
/// 24,000 + 9,500 of budget) inside its time target.
pub const WEIGH_PER_ITEM: f64 = 0.25;

/// The weighing budget of `ctx`'s estate: [`WEIGH_BASE`] plus
/// [`WEIGH_PER_ITEM`] per service and flow.
pub fn weigh_budget(ctx: &Ctx) -> u64 {
    let items = (ctx.estate.services.len() + ctx.estate.flows.len()) as f64;
    WEIGH_BASE + (WEIGH_PER_ITEM * items) as u64
}

/// The work of one group search from the current state, in the units of
/// the weighing budget: each free service that has a free peer (only those
/// can be in a group) counts 1 plus its flows, which are what the search
/// reads. A service no flow couples to another adds nothing.
pub fn search_work(ctx: &Ctx, moved: &[bool], candidates: &Candidates) -> u64 {
    let free = |s: usize| !moved[s] && !candidates.of(s).is_empty();
    (0..ctx.estate.services.len())
        .filter(|&s| free(s) && ctx.adjacency[s].iter().any(|&(_, p)| p != s && free(p)))
        .map(|s| 1 + ctx.adjacency[s].len() as u64)
        .sum()
}

/// The sum of each member's best certified, gaining single move from
/// `state` (0 for a member with none): what the members would gain moved
/// one at a time, each where it is best alone. A group is taken over a
/// single move only when it gains more than that.
pub fn alone_best(
    ctx: &Ctx,
    state: &State,
    candidates: &Candidates,
    members: &[(usize, usize)],
) -> f64 {
    members
        .iter()
        .map(|&(s, _)| {
            candidates
                .of(s)
                .iter()
                .filter(|&c| state.certainly_fits(ctx, s, c))
                .map(|c| cost::move_terms(ctx, state, s, c).gain())
                .fold(0.0, f64::max)
        })
        .sum()
}

/// Whether moving `found` together gains more than its members would
/// moved one at a time, each where it is best alone ([`alone_best`]), by
/// at least the group's own bar ([`cost::step_bar`]): the group then
/// captures something single moves on the same services cannot, and that
/// extra pays for the step as the step's gain must (every moved service
/// pays the absolute bar — measuring the extra against one service's bar
/// let a two-service group in whose coordination was worth half a step).
pub(crate) fn beats_alone(
    ctx: &Ctx,
    state: &State,
    candidates: &Candidates,
    found: &Found,
) -> bool {
    let ids: Vec<usize> = found.members.iter().map(|&(s, _)| s).collect();
    let bar = cost::step_bar(ctx, current_cost(ctx, state, &ids), ids.len());
    found.gain - alone_best(ctx, state, candidates, &found.members) >= bar
}

/// What the search reads from `advise`: the static candidates and the
/// cached per-candidate round-trip and cross-site gains (valid for every
/// service that has not moved).
pub(crate) struct Inputs<'a> {
    pub candidates: &'a Candidates,
    pub deltas: &'a Deltas,
    pub moved: &'a [bool],
    /// Moves that clear their bar but do not fit: `(gain, service, to)`.
    pub blocked: &'a [(f64, usize, usize)],
    /// How many services may still move.
    pub room: usize,
    /// Whether to grow gathered groups ([`grow`]).
    pub gather: bool,
}

/// One candidate group with its first-stage score.
struct Cand {
    score: f64,
    kind: GroupKind,
    members: Vec<(usize, usize)>,
}

/// The best group that clears its bar, or `None`.
pub(crate) fn best(ctx: &Ctx, state: &mut State, inp: &Inputs) -> Option<Found> {
    if inp.room < 2 {
        return None;
    }
    let free = |s: usize| !inp.moved[s] && !inp.candidates.of(s).is_empty();
    let coupled = coupled(ctx, &free);
    let mut cands: Vec<Cand> = Vec::new();
    let mut seeds: Vec<Cand> = Vec::new();
    together(ctx, state, inp, &coupled, &free, &mut cands, &mut seeds);
    make_room(ctx, state, inp, &free, &mut cands);
    if inp.gather {
        grow(ctx, state, inp, &free, seeds, &mut cands);
    }

    // Second stage: best first score, replayed exactly. The first-stage
    // score equals the replayed gain in real arithmetic, so once it falls
    // clearly below the best replayed gain nothing later can win.
    cands.sort_by(|a, b| {
        b.score
            .total_cmp(&a.score)
            .then_with(|| a.members.cmp(&b.members))
    });
    let mut best: Option<Found> = None;
    for c in cands {
        let slack = 1e-9 * (1.0 + c.score.abs());
        if best.as_ref().is_some_and(|b| c.score < b.gain - slack) {
            break;
        }
        let Some(terms) = replay(ctx, state, &c.members) else {
            continue;
        };
        let gain: f64 = terms.iter().map(Terms::gain).sum();
        let ids: Vec<usize> = c.members.iter().map(|&(s, _)| s).collect();
        let bar = cost::step_bar(ctx, current_cost(ctx, state, &ids), ids.len());
        if !(gain >= bar && gain > 0.0) {
            continue;
        }
        let better = match &best {
            None => true,
            Some(b) => gain > b.gain || (gain == b.gain && c.members < b.members),
        };
        if better {
            best = Some(Found {
                kind: c.kind,
                members: c.members,
                gain,
            });
        }
    }
    best
}

/// Per free service, its [`COUPLED`] heaviest free peers by effective
/// weight summed over both directions (ties to the lower id).
fn coupled(ctx: &Ctx, free: &dyn Fn(usize) -> bool) -> Vec<Vec<usize>> {
    let n = ctx.estate.services.len();
    let mut out = vec![Vec::new(); n];
    let mut peers: Vec<(usize, f64)> = Vec::new();
    for (s, slot) in out.iter_mut().enumerate() {
        if !free(s) {
            continue;
        }
        peers.clear();
        peers.extend(
            ctx.adjacency[s]
                .iter()
                .filter(|&&(_, p)| p != s && free(p))
                .map(|&(f, p)| (p, ctx.weight[f])),
        );
        peers.sort_by_key(|&(p, _)| p);
        let mut merged: Vec<(usize, f64)> = Vec::new();
        for &(p, w) in &peers {
            match merged.last_mut() {
                Some((q, acc)) if *q == p => *acc += w,
                _ => merged.push((p, w)),
            }
        }
        merged.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
        slot.extend(merged.iter().take(COUPLED).map(|&(p, _)| p));
    }
    out
}

/// The cached flow gain (round trip + cross-site) of `s` to cluster `c`,
/// everyone else where they are; `None` when `c` is not a candidate.
fn cached_flows(ctx: &Ctx, inp: &Inputs, s: usize, c: usize) -> Option<f64> {
    if !inp.candidates.of(s).contains(c) {
        return None;
    }
    let (rt, xs) = inp.deltas.get(ctx, s, c);
    Some(rt + xs)
}

/// Headroom gain (saving positive) of moving `members` (with their loads)
/// from where they are to their destinations, all at once.
fn headroom_gain(ctx: &Ctx, state: &State, members: &[(usize, usize)]) -> f64 {
    let mut touched: Vec<usize> = Vec::with_capacity(2 * members.len());
    for &(s, c) in members {
        touched.push(state.placement[s]);
        touched.push(c);
    }
    touched.sort_unstable();
    touched.dedup();
    let mut gain = 0.0;
    for c in touched {
        let before = state.load[c];
        let mut after = before;
        for &(s, to) in members {
            let svc = &ctx.estate.services[s];
            if state.placement[s] == c {
                after.cpu_in -= svc.cpu_in_load();
                after.memory_in -= svc.memory_in_load();
            }
            if to == c {
                after.cpu_in += svc.cpu_in_load();
                after.memory_in += svc.memory_in_load();
            }
        }
        gain += ctx.headroom(c, before) - ctx.headroom(c, after);
    }
    gain
}

/// First-stage score of moving `members` together: each member's cached
/// flow gain, corrected for the flows between members (which the cache
/// prices with the other member where it was), plus the joint headroom
/// gain and the copy terms.
fn score(ctx: &Ctx, state: &State, inp: &Inputs, members: &[(usize, usize)]) -> Option<f64> {
    Some(flow_part(ctx, state, inp, members)? + headroom_gain(ctx, state, members))
}

/// [`score`] without the joint headroom gain.
fn flow_part(ctx: &Ctx, state: &State, inp: &Inputs, members: &[(usize, usize)]) -> Option<f64> {
    let mut total = 0.0;
    for (i, &(s, c)) in members.iter().enumerate() {
        total += cached_flows(ctx, inp, s, c)? + cost::copy_term(ctx, s);
        for &(t, d) in &members[i + 1..] {
            let (s0, t0) = (state.placement[s], state.placement[t]);
            for &(f, p) in &ctx.adjacency[s] {
                if p != t {
                    continue;
                }
                let cost = |x: usize, y: usize| {
                    let (r, x) = ctx.flow_cost(f, x, y);
                    r + x
                };
                // Joint: before − after = cost(s0,t0) − cost(c,d); the two
                // cached gains counted cost(s0,t0) − cost(c,t0) and
                // cost(s0,t0) − cost(s0,d).
                total += cost(c, t0) + cost(s0, d) - cost(s0, t0) - cost(c, d);
            }
        }
    }
    Some(total)
}

/// Whether a first-stage score may clear `bar` once replayed (a small
/// slack: the two stages round differently).
fn clears(score: f64, bar: f64) -> bool {
    score > 0.0 && score >= bar - 1e-9 * (1.0 + bar.abs())
}

/// *Together* groups: a free service and one of its coupled peers, to any
/// cluster that both may go to in a site where one of their other peers
/// runs; and that pair with a third service coupled to either, at the
/// pair's best-scoring cluster.
fn together(
    ctx: &Ctx,
    state: &State,
    inp: &Inputs,
    coupled: &[Vec<usize>],
    free: &dyn Fn(usize) -> bool,
    out: &mut Vec<Cand>,
    seeds: &mut Vec<Cand>,
) {
    let estate = ctx.estate;
    let nc = estate.clusters.len();
    let mut clusters_of_site: Vec<Vec<usize>> = vec![Vec::new(); estate.sites.len()];
    for c in 0..nc {
        clusters_of_site[ctx.site_of[c]].push(c);
    }
    let mut site_mark = vec![usize::MAX; estate.sites.len()];
    let mut sites: Vec<usize> = Vec::new();
    let mut dests: Vec<usize> = Vec::new();
    let mut stamp = 0usize;
    let mut site_best: Vec<(usize, f64, usize)> = Vec::new();
    for a in 0..estate.services.len() {
        for &b in &coupled[a] {
            // Each unordered pair once: from its lower id, unless only the
            // higher one lists it.
            if b < a && coupled[b].contains(&a) {
                continue;
            }
            let (lo, hi) = (a.min(b), a.max(b));
            dests.clear();
            if nc <= CLUSTER_SCAN {
                dests.extend(0..nc);
            } else {
                stamp += 1;
                sites.clear();
                for &m in &[lo, hi] {
                    for &(_, p) in &ctx.adjacency[m] {
                        if p == lo || p == hi {
                            continue;
                        }
                        let site = ctx.site_of[state.placement[p]];
                        if site_mark[site] != stamp {
                            site_mark[site] = stamp;
                            sites.push(site);
                        }
                    }
                }
                sites.sort_unstable();
                for &site in &sites {
                    dests.extend(&clusters_of_site[site]);
                }
            }
            // Only groups that could clear their bar are kept; the bar does
            // not depend on the destination.
            let floor = cost::step_bar(ctx, current_cost(ctx, state, &[lo, hi]), 2);
            let mut best_pair: Option<(f64, usize)> = None;
            // Per site, the pair's best-scoring cluster there: a seed for
            // [`grow`]. A whole application may gain only at a site the
            // pair alone would not pick.
            site_best.clear();
            {
                for &c in &dests {
                    if c == state.placement[lo] || c == state.placement[hi] {
                        continue;
                    }
                    let members = [(lo, c), (hi, c)];
                    let Some(sc) = score(ctx, state, inp, &members) else {
                        continue;
                    };
                    if best_pair.is_none_or(|(g, _)| sc > g) {
                        best_pair = Some((sc, c));
                    }
                    let site = ctx.site_of[c];
                    match site_best.iter_mut().find(|(t, _, _)| *t == site) {
                        Some(slot) if sc > slot.1 => *slot = (site, sc, c),
                        Some(_) => {}
                        None => site_best.push((site, sc, c)),
                    }
                    if clears(sc, floor) {
                        out.push(Cand {
                            score: sc,
                            kind: GroupKind::Together,
                            members: members.to_vec(),
                        });
                    }
                }
            }
            // A third member at the pair's best cluster, whatever the
            // pair's own score: a chain may lose as a pair and gain whole.
            seeds.extend(site_best.iter().map(|&(_, sc, c)| Cand {
                score: sc,
                kind: GroupKind::Gathered,
                members: vec![(lo, c), (hi, c)],
            }));
            let Some((_, c)) = best_pair else {
                continue;
            };
            if MAX_MEMBERS < 3 || inp.room < 3 {
                continue;
            }
            let mut thirds: Vec<usize> = coupled[lo]
                .iter()
                .chain(&coupled[hi])
                .copied()
                .filter(|&d| d != lo && d != hi && free(d) && state.placement[d] != c)
                .collect();
            thirds.sort_unstable();
            thirds.dedup();
            for d in thirds {
                let mut members = vec![(lo, c), (hi, c), (d, c)];
                members.sort_unstable();
                let ids = [members[0].0, members[1].0, members[2].0];
                let floor = cost::step_bar(ctx, current_cost(ctx, state, &ids), ids.len());
                if let Some(sc) = score(ctx, state, inp, &members).filter(|&sc| clears(sc, floor)) {
                    out.push(Cand {
                        score: sc,
                        kind: GroupKind::Together,
                        members,
                    });
                }
            }
        }
    }
}

/// *Make room* groups: for the [`BLOCKED`] best blocked moves `a → x`, each
/// free service `b` on `x` moves first to its best-scoring candidate other
/// than `x`, then `a` moves to `x`.
fn make_room(
    ctx: &Ctx,
    state: &State,
    inp: &Inputs,
    free: &dyn Fn(usize) -> bool,
    out: &mut Vec<Cand>,
) {
    let mut blocked = inp.blocked.to_vec();
    blocked.sort_by(|p, q| q.0.total_cmp(&p.0).then((p.1, p.2).cmp(&(q.1, q.2))));
    blocked.truncate(BLOCKED);
    if blocked.is_empty() {
        return;
    }
    let mut on: Vec<Vec<usize>> = vec![Vec::new(); ctx.estate.clusters.len()];
    for s in 0..ctx.estate.services.len() {
        if free(s) {
            on[state.placement[s]].push(s);
        }
    }
    for &(_, a, x) in &blocked {
        for &b in &on[x] {
            if b == a {
                continue;
            }
            let floor = cost::step_bar(ctx, current_cost(ctx, state, &[b, a]), 2);
            let mut best: Option<(f64, usize)> = None;
            for y in inp.candidates.of(b) {
                // `b` goes first, so it must fit as things are.
                if y == x || !state.certainly_fits(ctx, b, y) {
                    continue;
                }
                let Some(sc) = score(ctx, state, inp, &[(b, y), (a, x)]) else {
                    continue;
                };
                if best.is_none_or(|(g, _)| sc > g) {
                    best = Some((sc, y));
                }
            }
            if let Some((sc, y)) = best.filter(|&(sc, _)| clears(sc, floor)) {
                out.push(Cand {
                    score: sc,
                    kind: GroupKind::MakeRoom,
                    members: vec![(b, y), (a, x)],
                });
            }
        }
    }
}

/// *Gathered* groups: from each of the [`GROW_SEEDS`] best-scoring pairs
/// (at the pair's best cluster), add one free peer of the group at a time,
/// the one whose addition scores best, up to [`GROW_MEMBERS`]; every size
/// from three up that may clear its bar is a candidate. A peer is added even
/// when the group's score falls: a mesh gains only once most of it is there.
fn grow(
    ctx: &Ctx,
    state: &State,
    inp: &Inputs,
    free: &dyn Fn(usize) -> bool,
    mut seeds: Vec<Cand>,
    out: &mut Vec<Cand>,
) {
    let limit = GROW_MEMBERS.min(inp.room);
    if limit < 3 {
        return;
    }
    seeds.sort_by(|a, b| {
        b.score
            .total_cmp(&a.score)
            .then_with(|| a.members.cmp(&b.members))
    });
    seeds.truncate(GROW_SEEDS);
    let mut peers: Vec<usize> = Vec::new();
    // Per service: its destination while it is in the growing group.
    let mut dest_of = vec![usize::MAX; ctx.estate.services.len()];
    let nc = ctx.estate.clusters.len();
    // Each seed grows twice: every member to the seed's cluster, and each
    // member to its best cluster of the seed's site (an application may
    // spread over a site's clusters by room), up to [`SITE_CLUSTERS`] of
    // them in id order. Neither greedy growth contains the other.
    // (the seed's members, the clusters a joining peer may go to)
    type Run = (Vec<(usize, usize)>, Vec<usize>);
    let mut runs: Vec<Run> = Vec::new();
    for seed in &seeds {
        let c = seed.members[0].1;
        runs.push((seed.members.clone(), vec![c]));
        let site_clusters: Vec<usize> = (0..nc)
            .filter(|&d| ctx.site_of[d] == ctx.site_of[c])
            .take(SITE_CLUSTERS)
            .collect();
        if site_clusters.len() > 1 {
            runs.push((seed.members.clone(), site_clusters));
        }
    }
    // Each cluster's load with the growing group moved (`after`), for the
    // clusters the group touches (`touched`); the rest are as in `state`.
    let mut after: Vec<Load> = state.load.clone();
    let mut touched: Vec<usize> = Vec::new();
    for (mut members, site_clusters) in runs {
        // The score's flow part (everything but headroom), kept as the
        // group grows; a peer's addition only adds its own cached gain and
        // the corrections for its flows into the group.
        let Some(mut flows) = flow_part(ctx, state, inp, &members) else {
            continue;
        };
        for &(m, d) in &members {
            dest_of[m] = d;
        }
        let mut headroom = headroom_gain(ctx, state, &members);
        for &(m, d) in &members {
            shift_load(ctx, state, &mut after, &mut touched, m, d);
        }
        while members.len() < limit {
            peers.clear();
            for &(m, _) in &members {
                peers.extend(
                    ctx.adjacency[m]
                        .iter()
                        .map(|&(_, p)| p)
                        .filter(|&p| dest_of[p] == usize::MAX && free(p)),
                );
            }
            peers.sort_unstable();
            peers.dedup();
            let mut best: Option<(f64, f64, f64, usize, usize)> = None;
            for &p in &peers {
                let p0 = state.placement[p];
                for &d in &site_clusters {
                    if d == p0 {
                        continue;
                    }
                    let Some(own) = cached_flows(ctx, inp, p, d) else {
                        continue;
                    };
                    let mut added = own + cost::copy_term(ctx, p);
                    for &(f, t) in &ctx.adjacency[p] {
                        let td = dest_of[t];
                        if td == usize::MAX {
                            continue;
                        }
                        let t0 = state.placement[t];
                        let cost = |x: usize, y: usize| {
                            let (r, x) = ctx.flow_cost(f, x, y);
                            r + x
                        };
                        // As in `score`: the two cached gains priced the
                        // flow with the other end where it was.
                        added += cost(d, t0) + cost(p0, td) - cost(p0, t0) - cost(d, td);
                    }
                    // The headroom change is only at `p`'s two clusters.
                    let svc = &ctx.estate.services[p];
                    let (cpu, mem) = (svc.cpu_in_load(), svc.memory_in_load());
                    let out = Load {
                        cpu_in: after[p0].cpu_in - cpu,
                        memory_in: after[p0].memory_in - mem,
                    };
                    let into = Load {
                        cpu_in: after[d].cpu_in + cpu,
                        memory_in: after[d].memory_in + mem,
                    };
                    let eased = ctx.headroom(p0, after[p0]) - ctx.headroom(p0, out)
                        + ctx.headroom(d, after[d])
                        - ctx.headroom(d, into);
                    let sc = flows + added + headroom + eased;
                    if best.is_none_or(|(g, _, _, _, _)| sc > g) {
                        best = Some((sc, added, eased, p, d));
                    }
                }
            }
            let Some((sc, added, eased, p, d)) = best else {
                break;
            };
            flows += added;
            headroom += eased;
            shift_load(ctx, state, &mut after, &mut touched, p, d);
            dest_of[p] = d;
            members.push((p, d));
            let mut sorted = members.clone();
            sorted.sort_unstable();
            let ids: Vec<usize> = sorted.iter().map(|&(s, _)| s).collect();
            let floor = cost::step_bar(ctx, current_cost(ctx, state, &ids), ids.len());
            if clears(sc, floor) {
                out.push(Cand {
                    score: sc,
                    kind: GroupKind::Gathered,
                    members: sorted,
                });
            }
        }
        for &(m, _) in &members {
            dest_of[m] = usize::MAX;
        }
        for c in touched.drain(..) {
            after[c] = state.load[c];
        }
    }
}

/// Moves `s`'s load from where it is in `state` to `d` in `after`, and
/// notes both clusters as touched (so [`grow`] can reset them).
fn shift_load(
    ctx: &Ctx,
    state: &State,
    after: &mut [Load],
    touched: &mut Vec<usize>,
    s: usize,
    d: usize,
) {
    let svc = &ctx.estate.services[s];
    let s0 = state.placement[s];
    after[s0].cpu_in -= svc.cpu_in_load();
    after[s0].memory_in -= svc.memory_in_load();
    after[d].cpu_in += svc.cpu_in_load();
    after[d].memory_in += svc.memory_in_load();
    touched.extend([s0, d]);
}
