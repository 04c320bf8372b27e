//! The exact optimum of an estate's placement, for measuring how much of it
//! the sequential advice captures (`docs/quality.md`). Shared by
//! `tests/quality.rs` and `examples/quality.rs`; not part of the engine.
//!
//! **The optimum** is the minimum, over every placement `P` that can be
//! reached from the current one where
//!
//! - every service whose cluster differs in `P` is statically allowed there
//!   (`constraints::statically_allowed`; immovable services stay), and
//! - every cluster that receives at least one service has its fit
//!   *certified* (`constraints::fit` = `Fits`, i.e. at the pessimistic end
//!   of its free-capacity facts) for everything moved in, given everything
//!   that moved out — so a cluster of unknown free capacity receives
//!   nothing,
//!
//! of `State::totals(P).cost + Σ copy cost of the services moved`. Each
//! service is counted as moved at most once (a service that comes back is
//! not moved). The bars of SPEC §5 and the 40-move limit play no part: the
//! estates searched have fewer than 40 movable services, and the bars are
//! what the measurement is meant to expose.
//!
//! This is a relaxation of what any sequential recommender can reach: the
//! final capacity condition allows e.g. two services of full clusters to
//! swap, which no order of single certified moves can do. Every placement
//! the baseline (or a scored decider) reaches satisfies it — a cluster's
//! load after its last arrival was certified and departures only lower it —
//! so `optimum ≤ baseline` always holds, and the tests check it.
//!
//! **The search** is a depth-first branch-and-bound over the movable
//! services (those with at least one statically allowed destination whose
//! free capacity is known), each choosing its current cluster or one of
//! those destinations. The cost splits into a constant (flows between
//! services that cannot move), a per-service part (flows to services that
//! cannot move, plus its copy cost), a per-pair part (flows between two
//! movable services) and headroom (a non-decreasing function of each
//! cluster's final load). The lower bound at a node is exact for what is
//! decided, plus, for each undecided service, its cheapest choice given the
//! decided ones; for each flow between two undecided services, its
//! cheapest pair of choices; and for each cluster, the headroom of its
//! smallest reachable load (every undecided service gone from it). A node
//! is also cut when a cluster that has received a service cannot get back
//! under its certified capacity even if every undecided service left it.
//! The first incumbent comes from a small local search of its own (single
//! reassignments and whole-cluster group moves, from the current
//! placement), never from the baseline's result, so `optimum ≤ baseline`
//! is a real check.

#![allow(dead_code)]

use berth_engine::advise::feasibility;
use berth_engine::constraints::{self, Fit, Load};
use berth_engine::cost::{Ctx, State};
use berth_engine::{Estate, Policy};

/// Tolerance of the capacity test inside the search (cores / GiB), so that
/// a placement the sequential advice certified is never lost to rounding.
/// The returned placement is re-checked with `constraints::fit` exactly.
const CAP_TOL: f64 = 1e-9;

#[derive(Clone, Debug)]
pub struct Optimum {
    /// `State::totals().cost` of the current placement.
    pub cost_before: f64,
    /// Estate cost plus copy cost of the best placement found, recomputed
    /// with `State::totals` (not the search's running sum).
    pub cost: f64,
    pub placement: Vec<usize>,
    /// Services that could move (the search's variables).
    pub movable: usize,
    /// Product of the domain sizes: placements exhaustive search would try.
    pub space: f64,
    /// Search nodes visited.
    pub nodes: u64,
    /// False when the node budget ran out: `cost` is then only an upper
    /// bound on the optimum.
    pub complete: bool,
}

impl Optimum {
    pub fn improvement(&self) -> f64 {
        self.cost_before - self.cost
    }
}

/// Cost of a final placement: estate cost + copy cost of every service
/// whose cluster differs from where it is now.
pub fn placement_cost(ctx: &Ctx, placement: &[usize]) -> f64 {
    let estate = ctx.estate;
    let mut state = State::initial(estate);
    let mut copy = 0.0;
    for (s, &c) in placement.iter().enumerate() {
        if c != estate.services[s].cluster {
            state.apply(ctx, s, c);
            copy += ctx.policy.copy_weight_per_gb * estate.services[s].data_gb_in_copy();
        }
    }
    state.totals(ctx).cost + copy
}

/// Is `placement` in the optimum's feasible set? Static constraints for
/// every moved service, and `constraints::fit` = `Fits` on every receiving
/// cluster for all arrivals at once, given all departures.
pub fn feasible(ctx: &Ctx, placement: &[usize]) -> bool {
    let estate = ctx.estate;
    let n = estate.clusters.len();
    let (mut arrive, mut leave) = (vec![Load::default(); n], vec![Load::default(); n]);
    let mut receives = vec![false; n];
    for (s, &c) in placement.iter().enumerate() {
        let svc = &estate.services[s];
        if c == svc.cluster {
            continue;
        }
        if !constraints::statically_allowed(estate, s, c) {
            return false;
        }
        // A move is certified only with both requests known.
        let (Some(cpu), Some(memory_gib)) = (svc.cpu, svc.memory_gib) else {
            return false;
        };
        receives[c] = true;
        arrive[c].cpu_in += cpu;
        arrive[c].memory_in += memory_gib;
        leave[svc.cluster].cpu_in += cpu;
        leave[svc.cluster].memory_in += memory_gib;
    }
    (0..n).filter(|&c| receives[c]).all(|c| {
        let load = Load {
            cpu_in: -leave[c].cpu_in,
            memory_in: -leave[c].memory_in,
        };
        let fit = constraints::fit(
            estate,
            ctx.policy,
            ctx.now,
            c,
            load,
            arrive[c].cpu_in,
            arrive[c].memory_in,
        );
        fit == Fit::Fits
    })
}

/// Certified capacity of each cluster: free × (1 − margin of the class at
/// `now`) for CPU and memory; `None` when either free capacity is unknown.
fn capacities(estate: &Estate, policy: &Policy, now: i64) -> Vec<Option<(f64, f64)>> {
    estate
        .clusters
        .iter()
        .map(|c| {
            let cap = |f: &berth_engine::fact::Fact| {
                f.value
                    .map(|v| v * (1.0 - policy.margin(f.class_at(now, policy))))
            };
            Some((cap(&c.cpu_free)?, cap(&c.memory_free_gib)?))
        })
        .collect()
}

/// Each service's choices: its current cluster first, then the statically
/// allowed clusters of known free capacity (empty list: it cannot move).
pub fn domains(ctx: &Ctx) -> Vec<Vec<usize>> {
    let estate = ctx.estate;
    let caps = capacities(estate, ctx.policy, ctx.now);
    feasibility(estate)
        .candidates
        .to_lists()
        .into_iter()
        .enumerate()
        .map(|(s, cands)| {
            let to: Vec<usize> = cands.into_iter().filter(|&c| caps[c].is_some()).collect();
            if to.is_empty() {
                Vec::new()
            } else {
                std::iter::once(estate.services[s].cluster)
                    .chain(to)
                    .collect()
            }
        })
        .collect()
}

struct PairFlow {
    /// Variable indices (positions in the search order) of `from` and `to`.
    a: usize,
    b: usize,
    /// Cost by (choice of a, choice of b).
    cost: Vec<Vec<f64>>,
    min: f64,
}

struct Search<'a> {
    ctx: &'a Ctx<'a>,
    /// Service of each variable, in search order.
    var: Vec<usize>,
    dom: Vec<Vec<usize>>,
    /// Per variable: pair flows to other variables (index into `pairs`).
    var_pairs: Vec<Vec<usize>>,
    pairs: Vec<PairFlow>,
    caps: Vec<Option<(f64, f64)>>,
    /// Per cluster: CPU/memory of undecided variables currently on it.
    undecided_on: Vec<Load>,
    load: Vec<Load>,
    received: Vec<u32>,
    choice: Vec<usize>,
    /// Per variable, per choice: the cost it would add given the decided
    /// variables (its flows to fixed services, copy, flows to decided ones).
    acc: Vec<Vec<f64>>,
    /// Cost of everything decided (and fixed), headroom excluded.
    g: f64,
    /// Σ min over pair flows between two undecided variables.
    pair_rest: f64,
    best: f64,
    best_choice: Vec<usize>,
    nodes: u64,
    budget: u64,
}

impl Search<'_> {
    fn headroom(&self, min_load: bool) -> f64 {
        (0..self.load.len())
            .map(|c| {
                let mut l = self.load[c];
                if min_load {
                    l.cpu_in -= self.undecided_on[c].cpu_in;
                    l.memory_in -= self.undecided_on[c].memory_in;
                }
                self.ctx.headroom(c, l)
            })
            .sum()
    }

    /// Can every receiving cluster still get within its certified capacity?
    fn capacity_ok(&self) -> bool {
        (0..self.load.len()).all(|c| {
            if self.received[c] == 0 {
                return true;
            }
            let Some((cpu, mem)) = self.caps[c] else {
                return false;
            };
            let l = self.load[c];
            let u = self.undecided_on[c];
            l.cpu_in - u.cpu_in <= cpu + CAP_TOL && l.memory_in - u.memory_in <= mem + CAP_TOL
        })
    }

    fn lower_bound(&self, depth: usize) -> f64 {
        let mut lb = self.g + self.pair_rest + self.headroom(true);
        for v in depth..self.var.len() {
            lb += self.acc[v].iter().copied().fold(f64::INFINITY, f64::min);
        }
        lb
    }

    fn dfs(&mut self, depth: usize) {
        self.nodes += 1;
        if self.nodes > self.budget {
            return;
        }
        if !self.capacity_ok() {
            return;
        }
        if depth == self.var.len() {
            let cost = self.g + self.headroom(false);
            if cost < self.best {
                self.best = cost;
                self.best_choice.clone_from(&self.choice);
            }
            return;
        }
        let lb = self.lower_bound(depth);
        if lb >= self.best - 1e-9 * (1.0 + self.best.abs()) {
            return;
        }
        let v = depth;
        let s = self.var[v];
        let svc = &self.ctx.estate.services[s];
        let (cpu, mem) = (
            svc.cpu.expect("generated estates have known requests"),
            svc.memory_gib
                .expect("generated estates have known requests"),
        );
        let origin = self.dom[v][0];
        // Cheapest choice first, so a good incumbent comes early.
        let mut order: Vec<usize> = (0..self.dom[v].len()).collect();
        order.sort_by(|&x, &y| self.acc[v][x].total_cmp(&self.acc[v][y]).then(x.cmp(&y)));
        self.undecided_on[origin].cpu_in -= cpu;
        self.undecided_on[origin].memory_in -= mem;
        // Pair flows to undecided variables leave the "rest" pool.
        let mut released = 0.0;
        for &p in &self.var_pairs[v] {
            let pf = &self.pairs[p];
            let other = if pf.a == v { pf.b } else { pf.a };
            if other > v {
                released += pf.min;
            }
        }
        self.pair_rest -= released;
        for k in order {
            let c = self.dom[v][k];
            let g0 = self.g;
            self.g += self.acc[v][k];
            self.choice[v] = k;
            if k != 0 {
                self.load[origin].cpu_in -= cpu;
                self.load[origin].memory_in -= mem;
                self.load[c].cpu_in += cpu;
                self.load[c].memory_in += mem;
                self.received[c] += 1;
            }
            // Undecided peers now know where this end of their flows is.
            for i in 0..self.var_pairs[v].len() {
                let pf = &self.pairs[self.var_pairs[v][i]];
                if pf.a == v && pf.b > v {
                    for kb in 0..self.dom[pf.b].len() {
                        self.acc[pf.b][kb] += pf.cost[k][kb];
                    }
                } else if pf.b == v && pf.a > v {
                    for ka in 0..self.dom[pf.a].len() {
                        self.acc[pf.a][ka] += pf.cost[ka][k];
                    }
                }
            }
            self.dfs(depth + 1);
            for i in 0..self.var_pairs[v].len() {
                let pf = &self.pairs[self.var_pairs[v][i]];
                if pf.a == v && pf.b > v {
                    for kb in 0..self.dom[pf.b].len() {
                        self.acc[pf.b][kb] -= pf.cost[k][kb];
                    }
                } else if pf.b == v && pf.a > v {
                    for ka in 0..self.dom[pf.a].len() {
                        self.acc[pf.a][ka] -= pf.cost[ka][k];
                    }
                }
            }
            if k != 0 {
                self.load[origin].cpu_in += cpu;
                self.load[origin].memory_in += mem;
                self.load[c].cpu_in -= cpu;
                self.load[c].memory_in -= mem;
                self.received[c] -= 1;
            }
            self.g = g0;
        }
        self.pair_rest += released;
        self.undecided_on[origin].cpu_in += cpu;
        self.undecided_on[origin].memory_in += mem;
    }
}

/// A feasible placement at least as good as the current one, by steepest
/// descent over two neighbourhoods: one service to another cluster of its
/// domain, and every service on one cluster that may go to another, to
/// that other (a group move). Only a starting incumbent for [`solve`].
fn local_search(ctx: &Ctx, doms: &[Vec<usize>]) -> Vec<usize> {
    let estate = ctx.estate;
    let mut cur: Vec<usize> = estate.services.iter().map(|s| s.cluster).collect();
    let mut cur_cost = placement_cost(ctx, &cur);
    loop {
        let mut best: Option<(f64, Vec<usize>)> = None;
        let consider = |p: Vec<usize>, best: &mut Option<(f64, Vec<usize>)>| {
            let c = placement_cost(ctx, &p);
            if c < best.as_ref().map_or(cur_cost, |b| b.0) - 1e-12 && feasible(ctx, &p) {
                *best = Some((c, p));
            }
        };
        for (s, d) in doms.iter().enumerate() {
            for &c in d {
                if c != cur[s] {
                    let mut p = cur.clone();
                    p[s] = c;
                    consider(p, &mut best);
                }
            }
        }
        for a in 0..estate.clusters.len() {
            for b in 0..estate.clusters.len() {
                let mut p = cur.clone();
                let mut any = false;
                for (s, d) in doms.iter().enumerate() {
                    if cur[s] == a && a != b && d.contains(&b) {
                        p[s] = b;
                        any = true;
                    }
                }
                if any {
                    consider(p, &mut best);
                }
            }
        }
        match best {
            Some((c, p)) => {
                cur = p;
                cur_cost = c;
            }
            None => return cur,
        }
    }
}

/// The optimum by branch-and-bound, visiting at most `budget` nodes.
pub fn solve(estate: &Estate, policy: &Policy, now: i64, budget: u64) -> Optimum {
    let ctx = Ctx::new(estate, policy, now);
    let doms = domains(&ctx);
    let cost_before = State::initial(estate).totals(&ctx).cost;
    let home: Vec<usize> = estate.services.iter().map(|s| s.cluster).collect();
    let is_var: Vec<bool> = doms.iter().map(|d| !d.is_empty()).collect();

    // Spread of each service's own cost over its choices, to order the
    // variables: the ones whose choice matters most go first.
    let spread = |s: usize| {
        let d = &doms[s];
        let costs: Vec<f64> = d
            .iter()
            .map(|&c| {
                ctx.adjacency[s]
                    .iter()
                    .map(|&(f, p)| {
                        let fl = &estate.flows[f];
                        let (a, b) = if fl.from == s {
                            (c, home[p])
                        } else {
                            (home[p], c)
                        };
                        let (rt, xs) = ctx.flow_cost(f, a, b);
                        rt + xs
                    })
                    .sum::<f64>()
            })
            .collect();
        let max = costs.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        let min = costs.iter().copied().fold(f64::INFINITY, f64::min);
        max - min
    };
    let mut var: Vec<usize> = (0..estate.services.len()).filter(|&s| is_var[s]).collect();
    let spreads: Vec<f64> = (0..estate.services.len())
        .map(|s| if is_var[s] { spread(s) } else { 0.0 })
        .collect();
    var.sort_by(|&x, &y| spreads[y].total_cmp(&spreads[x]).then(x.cmp(&y)));
    let mut var_of = vec![usize::MAX; estate.services.len()];
    for (v, &s) in var.iter().enumerate() {
        var_of[s] = v;
    }
    let dom: Vec<Vec<usize>> = var.iter().map(|&s| doms[s].clone()).collect();

    let mut g = 0.0;
    let mut acc: Vec<Vec<f64>> = dom
        .iter()
        .zip(&var)
        .map(|(d, &s)| {
            let copy = policy.copy_weight_per_gb * estate.services[s].data_gb_in_copy();
            (0..d.len())
                .map(|k| if k == 0 { 0.0 } else { copy })
                .collect()
        })
        .collect();
    let mut pairs = Vec::new();
    let mut var_pairs = vec![Vec::new(); var.len()];
    for (f, fl) in estate.flows.iter().enumerate() {
        match (var_of[fl.from], var_of[fl.to]) {
            (usize::MAX, usize::MAX) => {
                let (rt, xs) = ctx.flow_cost(f, home[fl.from], home[fl.to]);
                g += rt + xs;
            }
            (a, usize::MAX) => {
                for (k, &c) in dom[a].iter().enumerate() {
                    let (rt, xs) = ctx.flow_cost(f, c, home[fl.to]);
                    acc[a][k] += rt + xs;
                }
            }
            (usize::MAX, b) => {
                for (k, &c) in dom[b].iter().enumerate() {
                    let (rt, xs) = ctx.flow_cost(f, home[fl.from], c);
                    acc[b][k] += rt + xs;
                }
            }
            (a, b) => {
                let cost: Vec<Vec<f64>> = dom[a]
                    .iter()
                    .map(|&ca| {
                        dom[b]
                            .iter()
                            .map(|&cb| {
                                let (rt, xs) = ctx.flow_cost(f, ca, cb);
                                rt + xs
                            })
                            .collect()
                    })
                    .collect();
                let min = cost.iter().flatten().copied().fold(f64::INFINITY, f64::min);
                var_pairs[a].push(pairs.len());
                var_pairs[b].push(pairs.len());
                pairs.push(PairFlow { a, b, cost, min });
            }
        }
    }
    let pair_rest = pairs.iter().map(|p| p.min).sum();
    let mut undecided_on = vec![Load::default(); estate.clusters.len()];
    for &s in &var {
        let svc = &estate.services[s];
        undecided_on[svc.cluster].cpu_in += svc.cpu.expect("generated estates have known requests");
        undecided_on[svc.cluster].memory_in += svc
            .memory_gib
            .expect("generated estates have known requests");
    }
    let space = dom.iter().map(|d| d.len() as f64).product();
    let nvars = var.len();
    let mut search = Search {
        ctx: &ctx,
        var,
        dom,
        var_pairs,
        pairs,
        caps: capacities(estate, policy, now),
        undecided_on,
        load: vec![Load::default(); estate.clusters.len()],
        received: vec![0; estate.clusters.len()],
        choice: vec![0; nvars],
        acc,
        g,
        pair_rest,
        best: f64::INFINITY,
        best_choice: vec![0; nvars],
        nodes: 0,
        budget,
    };
    // First incumbent: a local search of our own (never the advice being
    // measured), starting from the current placement, which is feasible.
    let start = local_search(&ctx, &doms);
    search.best = placement_cost(&ctx, &start);
    for (v, &s) in search.var.iter().enumerate() {
        search.best_choice[v] = search.dom[v]
            .iter()
            .position(|&c| c == start[s])
            .expect("local search stays in the domains");
    }
    search.dfs(0);
    let mut placement = home.clone();
    for (v, &k) in search.best_choice.iter().enumerate() {
        placement[search.var[v]] = search.dom[v][k];
    }
    assert!(
        feasible(&ctx, &placement),
        "the search returned a placement the exact fit check refuses ({})",
        estate.name
    );
    let cost = placement_cost(&ctx, &placement).min(cost_before);
    Optimum {
        cost_before,
        cost,
        placement,
        movable: nvars,
        space,
        nodes: search.nodes,
        complete: search.nodes <= search.budget,
    }
}

/// The optimum by plain enumeration of every assignment of every service
/// to every cluster, filtered by [`feasible`] alone — independent of the
/// search's domains, bounds and capacity arithmetic — for cross-checking
/// [`solve`]. `None` when there are more than `limit` assignments.
pub fn exhaustive(estate: &Estate, policy: &Policy, now: i64, limit: f64) -> Option<f64> {
    let ctx = Ctx::new(estate, policy, now);
    let (n, c) = (estate.services.len(), estate.clusters.len());
    if (c as f64).powi(n as i32) > limit {
        return None;
    }
    let mut placement: Vec<usize> = vec![0; n];
    let mut best = f64::INFINITY;
    loop {
        if feasible(&ctx, &placement) {
            best = best.min(placement_cost(&ctx, &placement));
        }
        // Next assignment (odometer).
        let mut i = 0;
        while i < n {
            placement[i] += 1;
            if placement[i] < c {
                break;
            }
            placement[i] = 0;
            i += 1;
        }
        if i == n {
            return Some(best);
        }
    }
}

/// Can the moves from the current placement to `placement` be made one at
/// a time, in some order, each certified (`State::fit` = `Fits`) against
/// the placement so far? Depth-first over the sets of moves done,
/// remembering the sets that lead nowhere. `None` when there are more than
/// `max_moves` moves (too many orders to try).
pub fn sequentially_reachable(ctx: &Ctx, placement: &[usize], max_moves: usize) -> Option<bool> {
    let moves: Vec<(usize, usize)> = placement
        .iter()
        .enumerate()
        .filter(|&(s, &c)| c != ctx.estate.services[s].cluster)
        .map(|(s, &c)| (s, c))
        .collect();
    if moves.len() > max_moves.min(24) {
        return None;
    }
    let full = (1u32 << moves.len()) - 1;
    let mut dead = std::collections::HashSet::new();
    fn go(
        ctx: &Ctx,
        moves: &[(usize, usize)],
        done: u32,
        full: u32,
        dead: &mut std::collections::HashSet<u32>,
    ) -> bool {
        if done == full {
            return true;
        }
        if dead.contains(&done) {
            return false;
        }
        let mut state = State::initial(ctx.estate);
        for (i, &(s, c)) in moves.iter().enumerate() {
            if done & (1 << i) != 0 {
                state.apply(ctx, s, c);
            }
        }
        for (i, &(s, c)) in moves.iter().enumerate() {
            if done & (1 << i) == 0
                && state.fit(ctx, s, c) == Fit::Fits
                && go(ctx, moves, done | (1 << i), full, dead)
            {
                return true;
            }
        }
        dead.insert(done);
        false
    }
    Some(go(ctx, &moves, 0, full, &mut dead))
}

// ---------------------------------------------------------------------------
// The measurement.

/// The default policy with both bars of SPEC §5 set to zero (a move must
/// still gain more than 0).
pub fn zero_bars() -> Policy {
    Policy {
        min_gain_fraction: 0.0,
        min_gain_points: 0.0,
        ..Policy::default()
    }
}

/// Below this optimal improvement (points) an estate has nothing to gain
/// and is left out of the shares (counted separately).
pub const NOTHING_TO_GAIN: f64 = 1e-6;

/// One estate's figures. Improvements are `cost_before − (estate cost
/// after + copy cost of the moves)`, points.
#[derive(Clone, Debug)]
pub struct Row {
    pub seed: u64,
    pub services: usize,
    pub clusters: usize,
    pub movable: usize,
    pub space: f64,
    pub nodes: u64,
    pub complete: bool,
    pub cost_before: f64,
    pub optimal: f64,
    /// Services the optimum moves, and how many of those moves would gain
    /// anything on their own from the current placement.
    pub optimal_moves: usize,
    pub optimal_moves_gaining_alone: usize,
    /// Of those, how many could not be certified alone (the destination's
    /// fit holds only with what the optimum moves out of it).
    pub optimal_moves_blocked_alone: usize,
    /// Can the optimum's moves be made one at a time, each certified, in
    /// some order? (`None`: too many moves to try every order.)
    pub optimal_sequential: Option<bool>,
    /// Whether the optimum's moves, taken as one group, clear the default
    /// bars against the group's current cost (`group::current_cost`): if
    /// not, the bars (SPEC §5) rather than the search keep a sequential
    /// recommender from it, since no step may gain less than its bar.
    pub optimal_clears_bars: bool,
    /// Baseline (`advise`) with the default policy, and its move count.
    pub baseline: f64,
    pub baseline_moves: usize,
    /// Baseline with both bars at zero, and its move count.
    pub baseline_zero: f64,
    pub baseline_zero_moves: usize,
    /// Heaviest-talker foil, scored by `decider::score` (the bars play no
    /// part in scoring, so one figure serves both policies).
    pub heaviest: f64,
}

impl Row {
    /// `Some(share)` of the optimal improvement, `None` when there is
    /// nothing to gain.
    pub fn share(&self, improvement: f64) -> Option<f64> {
        (self.optimal > NOTHING_TO_GAIN).then(|| improvement / self.optimal)
    }
}

/// Improvement the baseline's advice achieves.
pub fn advice_improvement(a: &berth_engine::Advice) -> f64 {
    // Of the recommended moves: those resting on guesses are not made.
    berth_engine::advise::improvement(a)
}

/// Measure one estate: the optimum, the baseline under both policies and
/// the heaviest-talker foil. Panics if the optimum is worse than either
/// (the solver's sanity check).
pub fn measure(seed: u64, estate: &Estate, now: i64, budget: u64) -> Row {
    use berth_engine::decider::{score, Decider, HeaviestTalker, RawProposal};
    let policy = Policy::default();
    let opt = solve(estate, &policy, now, budget);
    let a = berth_engine::advise(estate, &policy, now);
    let z = berth_engine::advise(estate, &zero_bars(), now);
    let request = berth_engine::request::build(estate, &policy, now);
    let raw: Vec<RawProposal> = HeaviestTalker
        .decide(&request)
        .into_iter()
        .map(RawProposal::Valid)
        .collect();
    let ht = score(estate, &policy, now, &raw);
    let ctx = berth_engine::cost::Ctx::new(estate, &policy, now);
    let initial = berth_engine::cost::State::initial(estate);
    let moved: Vec<usize> = (0..estate.services.len())
        .filter(|&s| opt.placement[s] != estate.services[s].cluster)
        .collect();
    let gaining: Vec<usize> = moved
        .iter()
        .copied()
        .filter(|&s| {
            berth_engine::cost::move_terms(&ctx, &initial, s, opt.placement[s]).gain() > 0.0
        })
        .collect();
    let blocked = gaining
        .iter()
        .filter(|&&s| initial.fit(&ctx, s, opt.placement[s]) != Fit::Fits)
        .count();
    let row = Row {
        seed,
        services: estate.services.len(),
        clusters: estate.clusters.len(),
        movable: opt.movable,
        space: opt.space,
        nodes: opt.nodes,
        complete: opt.complete,
        cost_before: opt.cost_before,
        optimal: opt.improvement(),
        optimal_moves: moved.len(),
        optimal_moves_gaining_alone: gaining.len(),
        optimal_moves_blocked_alone: blocked,
        optimal_sequential: sequentially_reachable(&ctx, &opt.placement, 16),
        // As one step: every moved service pays the absolute bar.
        optimal_clears_bars: opt.improvement()
            >= berth_engine::cost::step_bar(
                &ctx,
                berth_engine::group::current_cost(&ctx, &initial, &moved),
                moved.len(),
            ),
        baseline: advice_improvement(&a),
        baseline_moves: a.moves.len(),
        baseline_zero: advice_improvement(&z),
        baseline_zero_moves: z.moves.len(),
        heaviest: ht.projected_gain,
    };
    let tol = 1e-9 * (1.0 + row.cost_before.abs());
    for (what, got) in [
        ("baseline", row.baseline),
        ("baseline (zero bars)", row.baseline_zero),
        ("heaviest talker", row.heaviest),
    ] {
        assert!(
            !opt.complete || got <= row.optimal + tol,
            "{}: {what} improves by {got}, more than the optimum {}",
            estate.name,
            row.optimal
        );
    }
    row
}

/// Median (mean of the middle two for an even count), 5th percentile
/// (nearest rank: the ⌈0.05·n⌉-th smallest) and mean.
pub fn stats(values: &[f64]) -> (f64, f64, f64) {
    let mut v = values.to_vec();
    v.sort_by(f64::total_cmp);
    let n = v.len();
    if n == 0 {
        return (f64::NAN, f64::NAN, f64::NAN);
    }
    let median = if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    };
    let p5 = v[(0.05 * n as f64).ceil().max(1.0) as usize - 1];
    (median, p5, v.iter().sum::<f64>() / n as f64)
}
