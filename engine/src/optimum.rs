//! Reference solvers for research (`docs/quality.md`): an exact
//! branch-and-bound over final placements ([`solve`]) and a seeded
//! simulated annealing ([`local_search`]). Both use the engine's own cost
//! (`cost::Ctx::flow_cost`, `Ctx::headroom`, the copy cost of `cost`) and
//! certified fit (`cost::State::certainly_fits`), and both are pure: no
//! clock (budgets are counts of search nodes and evaluations), no hash
//! iteration, their own PRNG (`gen::Rng`), `libm` for `exp`/`pow`.
//!
//! **What is searched.** A placement gives every service a cluster; the
//! *movable* services are those with both requests known and at least one
//! statically allowed destination of known free capacity
//! ([`domains`]); each chooses its current cluster or one of those. Its
//! cost is `State::totals().cost` plus the copy cost of every service not
//! where it is now — what `decider::score` charges. The search space is
//! the *relaxed* feasible set: every cluster that receives a service has
//! its final net load within its certified capacity (free × (1 − margin)).
//! A placement is *orderable* when [`order_moves`] finds an order of its
//! moves in which each is certified against the placement so far, as
//! `decider::score` checks them: the only placements a decider can reach.
//! The exact search keeps only orderable incumbents, so what it returns
//! can always be proposed, and says when a cheaper relaxed placement
//! existed that it could not order.
//!
//! **The bound** of a node (as in the test solver this was promoted from,
//! `engine/tests/common/exact.rs`, kept there as an independent check):
//! the exact cost of what is decided, plus each undecided service's
//! cheapest choice given the decided ones, plus each flow between two
//! undecided services at its cheapest pair of choices, plus each cluster's
//! headroom at its smallest reachable load. A node is also cut when a
//! cluster that received a service cannot get back within its certified
//! capacity even if every undecided service left it.

use crate::constraints::Load;
use crate::cost::{Ctx, State};
use crate::gen::Rng;

/// Tolerance of the capacity test inside the searches (cores / GiB), so
/// that a placement that can be certified is never lost to rounding in
/// the running sums. Every returned order is re-checked exactly with
/// `State::certainly_fits`, which is what scoring uses.
const CAP_TOL: f64 = 1e-9;

/// Relative tolerance under which two costs count as equal in the
/// searches (pruning and "better than the incumbent"): far below any
/// cost difference that matters (costs are points, 10⁻²…10⁶), far above
/// the rounding of sums of a few thousand terms.
const COST_TOL: f64 = 1e-9;

/// Moves `(service, destination)`, in the order they are applied.
pub type Order = Vec<(usize, usize)>;

/// Copy cost of moving `service` away from where it is now, points (≥ 0).
fn copy_cost(ctx: &Ctx, service: usize) -> f64 {
    ctx.policy.copy_weight_per_gb * ctx.estate.services[service].data_gb
}

/// Cost of a final placement: estate cost plus the copy cost of every
/// service whose cluster differs from where it is now.
pub fn placement_cost(ctx: &Ctx, placement: &[usize]) -> f64 {
    let estate = ctx.estate;
    let mut state = State::initial(estate);
    let mut copy = 0.0;
    for (s, &c) in placement.iter().enumerate() {
        if c != estate.services[s].cluster {
            state.apply(ctx, s, c);
            copy += copy_cost(ctx, s);
        }
    }
    state.totals(ctx).cost + copy
}

/// Certified capacity of each cluster for net load moved in: free × (1 −
/// margin of the fact's class at `now`), CPU and memory; `None` when
/// either free capacity is unknown (such a cluster receives nothing).
fn capacities(ctx: &Ctx) -> Vec<Option<(f64, f64)>> {
    ctx.estate
        .clusters
        .iter()
        .map(|c| {
            let cap = |f: &crate::fact::Fact| {
                f.value
                    .map(|v| v * (1.0 - ctx.policy.margin(f.class_at(ctx.now, ctx.policy))))
            };
            Some((cap(&c.cpu_free)?, cap(&c.memory_free_gib)?))
        })
        .collect()
}

/// Each service's choices: its current cluster first, then the statically
/// allowed clusters of known free capacity in id order. Empty: it cannot
/// move (immovable, a request unknown, or nowhere certifiable to go).
pub fn domains(ctx: &Ctx) -> Vec<Vec<usize>> {
    let estate = ctx.estate;
    let caps = capacities(ctx);
    crate::advise::feasibility(estate)
        .candidates
        .to_lists()
        .into_iter()
        .enumerate()
        .map(|(s, cands)| {
            let svc = &estate.services[s];
            if svc.cpu.is_none() || svc.memory_gib.is_none() {
                return Vec::new();
            }
            let to: Vec<usize> = cands.into_iter().filter(|&c| caps[c].is_some()).collect();
            if to.is_empty() {
                Vec::new()
            } else {
                std::iter::once(svc.cluster).chain(to).collect()
            }
        })
        .collect()
}

/// The moves from the current placement to `placement`, `(service, to)`,
/// in an order where each is certified (`State::certainly_fits`) against
/// the moves before it — what `decider::score` requires. Greedy: at each
/// step the first pending move (in service order) that fits, preferring a
/// move *out of* a cluster that another pending move goes into (move out
/// before moving in). `Err` holds the longest prefix found when no
/// pending move fits any more (the rest cannot be ordered this way).
pub fn order_moves(ctx: &Ctx, placement: &[usize]) -> Result<Order, Order> {
    let estate = ctx.estate;
    let mut pending: Vec<(usize, usize)> = placement
        .iter()
        .enumerate()
        .filter(|&(s, &c)| c != estate.services[s].cluster)
        .map(|(s, &c)| (s, c))
        .collect();
    let mut state = State::initial(estate);
    let mut order = Vec::with_capacity(pending.len());
    // How many pending moves go into each cluster.
    let mut incoming = vec![0usize; estate.clusters.len()];
    for &(_, c) in &pending {
        incoming[c] += 1;
    }
    while !pending.is_empty() {
        let mut pick: Option<usize> = None;
        for (i, &(s, c)) in pending.iter().enumerate() {
            if !state.certainly_fits(ctx, s, c) {
                continue;
            }
            let frees_room = incoming[state.placement[s]] > 0;
            if frees_room {
                pick = Some(i);
                break;
            }
            if pick.is_none() {
                pick = Some(i);
            }
        }
        let Some(i) = pick else {
            return Err(order);
        };
        let (s, c) = pending.remove(i);
        incoming[c] -= 1;
        state.apply(ctx, s, c);
        order.push((s, c));
    }
    Ok(order)
}

/// The placement the moves of `order` reach.
pub fn apply_order(ctx: &Ctx, order: &[(usize, usize)]) -> Vec<usize> {
    let mut p: Vec<usize> = ctx.estate.services.iter().map(|s| s.cluster).collect();
    for &(s, c) in order {
        p[s] = c;
    }
    p
}

// ---------------------------------------------------------------------------
// Simulated annealing.

/// What [`local_search`] found: the cheapest relaxed-feasible placement it
/// visited, its cost and how many candidate changes it evaluated.
#[derive(Clone, Debug)]
pub struct Annealed {
    pub placement: Vec<usize>,
    pub cost: f64,
    pub evaluations: u64,
}

/// The running placement of [`local_search`], with the cluster loads,
/// arrivals and cost kept up to date incrementally.
struct Walk<'a> {
    ctx: &'a Ctx<'a>,
    home: Vec<usize>,
    placement: Vec<usize>,
    load: Vec<Load>,
    /// Services on each cluster that are not at home.
    arrivals: Vec<u32>,
    moved: usize,
    cost: f64,
    caps: Vec<Option<(f64, f64)>>,
    cap_moves: usize,
    /// Scratch: flows touched by a change, and affected clusters.
    flows: Vec<usize>,
    clusters: Vec<usize>,
}

impl Walk<'_> {
    fn request(&self, s: usize) -> (f64, f64) {
        let svc = &self.ctx.estate.services[s];
        // Only services with both requests known are in a domain.
        (svc.cpu.unwrap_or(0.0), svc.memory_gib.unwrap_or(0.0))
    }

    /// Apply `changes` (distinct services, each to a cluster of its
    /// domain), returning the previous clusters so the caller can undo.
    fn set(&mut self, changes: &[(usize, usize)]) -> Vec<(usize, usize)> {
        let mut undo = Vec::with_capacity(changes.len());
        for &(s, to) in changes {
            let from = self.placement[s];
            undo.push((s, from));
            let (cpu, mem) = self.request(s);
            self.load[from].cpu_in -= cpu;
            self.load[from].memory_in -= mem;
            self.load[to].cpu_in += cpu;
            self.load[to].memory_in += mem;
            if from != self.home[s] {
                self.arrivals[from] -= 1;
                self.moved -= 1;
            }
            if to != self.home[s] {
                self.arrivals[to] += 1;
                self.moved += 1;
            }
            self.placement[s] = to;
        }
        undo
    }

    /// Cost of the touched flows and clusters plus copy, as placed now.
    fn local_cost(&self, services: &[usize]) -> f64 {
        let mut total = 0.0;
        for &f in &self.flows {
            let fl = &self.ctx.estate.flows[f];
            let (rt, xs) = self
                .ctx
                .flow_cost(f, self.placement[fl.from], self.placement[fl.to]);
            total += rt + xs;
        }
        for &c in &self.clusters {
            total += self.ctx.headroom(c, self.load[c]);
        }
        for &s in services {
            if self.placement[s] != self.home[s] {
                total += copy_cost(self.ctx, s);
            }
        }
        total
    }

    /// Is every cluster in `self.clusters` within what the relaxation
    /// allows, and the move cap kept?
    fn feasible_here(&self) -> bool {
        self.moved <= self.cap_moves
            && self.clusters.iter().all(|&c| {
                if self.arrivals[c] == 0 {
                    return true;
                }
                match self.caps[c] {
                    None => false,
                    Some((cpu, mem)) => {
                        self.load[c].cpu_in <= cpu + CAP_TOL
                            && self.load[c].memory_in <= mem + CAP_TOL
                    }
                }
            })
    }

    /// The cost change of `changes`, or `None` if the result is not
    /// feasible. Leaves the walk as it was.
    fn delta(&mut self, changes: &[(usize, usize)]) -> Option<f64> {
        self.flows.clear();
        self.clusters.clear();
        let services: Vec<usize> = changes.iter().map(|&(s, _)| s).collect();
        for &(s, to) in changes {
            self.flows
                .extend(self.ctx.adjacency[s].iter().map(|&(f, _)| f));
            self.clusters.push(self.placement[s]);
            self.clusters.push(to);
        }
        self.flows.sort_unstable();
        self.flows.dedup();
        self.clusters.sort_unstable();
        self.clusters.dedup();
        let before = self.local_cost(&services);
        let undo = self.set(changes);
        let ok = self.feasible_here();
        let after = self.local_cost(&services);
        self.set(&undo);
        ok.then_some(after - before)
    }

    fn apply(&mut self, changes: &[(usize, usize)], delta: f64) {
        self.set(changes);
        self.cost += delta;
    }
}

/// Is `c` among the sorted choices `dom`?
fn allows(dom: &[usize], c: usize) -> bool {
    dom[1..].binary_search(&c).is_ok() || dom[0] == c
}

/// Simulated annealing over relaxed-feasible placements, from the current
/// placement, moving at most `cap_moves` services, for `evaluations`
/// candidate changes, from `seed`. Three neighbourhoods, chosen at random
/// each step: **move** one service to another cluster of its domain (60 %:
/// the basic step); **swap** two services of different clusters (20 %:
/// makes room where each cluster is full); **group**: a service and one or
/// two services linked to it by flows, to one cluster (20 %: services that
/// only gain together). The temperature falls geometrically from the
/// median cost increase of a sample of single moves to 10⁻⁴ of it, then
/// a descent over single moves finishes (within the same budget).
pub fn local_search(
    ctx: &Ctx,
    doms: &[Vec<usize>],
    evaluations: u64,
    seed: u64,
    cap_moves: usize,
) -> Annealed {
    let estate = ctx.estate;
    let home: Vec<usize> = estate.services.iter().map(|s| s.cluster).collect();
    let vars: Vec<usize> = (0..estate.services.len())
        .filter(|&s| !doms[s].is_empty())
        .collect();
    // `allows` binary-searches the destinations: `domains` gives them in
    // id order after the current cluster.
    let cost0 = State::initial(estate).totals(ctx).cost;
    let mut walk = Walk {
        ctx,
        home: home.clone(),
        placement: home.clone(),
        load: vec![Load::default(); estate.clusters.len()],
        arrivals: vec![0; estate.clusters.len()],
        moved: 0,
        cost: cost0,
        caps: capacities(ctx),
        cap_moves,
        flows: Vec::new(),
        clusters: Vec::new(),
    };
    if vars.is_empty() || evaluations == 0 {
        return Annealed {
            placement: home,
            cost: cost0,
            evaluations: 0,
        };
    }
    let mut rng = Rng::new(seed);
    let mut used = 0u64;
    // Construction: each service's best single move from the current
    // placement, taken in order of gain (largest first, ties on service
    // id) while it still gains and fits, up to the cap: a greedy start
    // without the bars, so the walk begins where single moves end.
    let mut firsts: Vec<(f64, usize, usize)> = Vec::new();
    for &s in &vars {
        let mut best_move: Option<(f64, usize)> = None;
        for &c in &doms[s][1..] {
            used += 1;
            if let Some(d) = walk.delta(&[(s, c)]) {
                if d < 0.0 && best_move.is_none_or(|(b, _)| d < b) {
                    best_move = Some((d, c));
                }
            }
        }
        if let Some((d, c)) = best_move {
            firsts.push((d, s, c));
        }
    }
    firsts.sort_by(|x, y| x.0.total_cmp(&y.0).then(x.1.cmp(&y.1)));
    for &(_, s, c) in &firsts {
        used += 1;
        if let Some(d) = walk.delta(&[(s, c)]) {
            if d < 0.0 {
                walk.apply(&[(s, c)], d);
            }
        }
    }
    let mut keeper = Keeper::new(ctx, &walk, cost0);
    keeper.offer(&walk);
    // Starting temperature: a tenth of the median cost increase of up to
    // 200 random single moves (200 samples fix a median to a few percent;
    // a tenth keeps the walk near the greedy start instead of undoing it,
    // which matters under the move cap).
    let mut ups = Vec::new();
    for _ in 0..200.min(evaluations / 4) {
        let s = vars[rng.below(vars.len())];
        let c = doms[s][rng.below(doms[s].len())];
        if c == walk.placement[s] {
            continue;
        }
        used += 1;
        if let Some(d) = walk.delta(&[(s, c)]) {
            if d > 0.0 {
                ups.push(d);
            }
        }
    }
    ups.sort_by(f64::total_cmp);
    let t0 = 0.1 * ups.get(ups.len() / 2).copied().unwrap_or(1.0).max(1e-6);
    // The annealing gets 80 % of what is left, the final descent the rest.
    let anneal = evaluations.saturating_sub(used) * 4 / 5;
    // Cooling to 10⁻⁴ × t0: at the end only increases of ~0.01 % of a
    // typical one are accepted, i.e. the walk has become a descent.
    let factor = libm::pow(1e-4, 1.0 / anneal.max(1) as f64);
    let mut t = t0;
    let mut changes: Vec<(usize, usize)> = Vec::with_capacity(3);
    let mut step = 0u64;
    while step < anneal {
        step += 1;
        t *= factor;
        changes.clear();
        let s = vars[rng.below(vars.len())];
        let kind = rng.unit();
        if kind < 0.6 {
            let c = doms[s][rng.below(doms[s].len())];
            if c != walk.placement[s] {
                changes.push((s, c));
            }
        } else if kind < 0.8 {
            let t2 = vars[rng.below(vars.len())];
            let (cs, ct) = (walk.placement[s], walk.placement[t2]);
            if cs != ct && allows(&doms[s], ct) && allows(&doms[t2], cs) {
                changes.push((s, ct));
                changes.push((t2, cs));
            }
        } else {
            let c = doms[s][rng.below(doms[s].len())];
            changes.push((s, c));
            let adj = &ctx.adjacency[s];
            if !adj.is_empty() {
                let p1 = adj[rng.below(adj.len())].1;
                if p1 != s && movable_to(&doms[p1], c) {
                    changes.push((p1, c));
                    let adj1 = &ctx.adjacency[p1];
                    if rng.chance(0.5) && !adj1.is_empty() {
                        let p2 = adj1[rng.below(adj1.len())].1;
                        if p2 != s && p2 != p1 && movable_to(&doms[p2], c) {
                            changes.push((p2, c));
                        }
                    }
                }
            }
            changes.retain(|&(x, c)| walk.placement[x] != c);
        }
        if changes.is_empty() {
            continue;
        }
        used += 1;
        let Some(d) = walk.delta(&changes) else {
            continue;
        };
        if d < 0.0 || rng.unit() < libm::exp(-d / t) {
            walk.apply(&changes, d);
            keeper.offer(&walk);
        }
    }
    // Descent over single moves from the best placement seen, in service
    // and domain order, until no move improves or the budget is spent.
    let best = keeper.relaxed.clone();
    let mut walk_best = Walk {
        placement: home.clone(),
        cost: keeper.relaxed_cost,
        load: vec![Load::default(); estate.clusters.len()],
        arrivals: vec![0; estate.clusters.len()],
        moved: 0,
        ..walk
    };
    let target: Vec<(usize, usize)> = (0..estate.services.len())
        .filter(|&s| best[s] != home[s])
        .map(|s| (s, best[s]))
        .collect();
    walk_best.set(&target);
    let mut improved = true;
    while improved && used < evaluations {
        improved = false;
        for &s in &vars {
            for &c in &doms[s] {
                if c == walk_best.placement[s] || used >= evaluations {
                    continue;
                }
                used += 1;
                if let Some(d) = walk_best.delta(&[(s, c)]) {
                    if d < -COST_TOL * (1.0 + walk_best.cost.abs()) {
                        walk_best.apply(&[(s, c)], d);
                        keeper.offer(&walk_best);
                        improved = true;
                    }
                }
            }
        }
    }
    // The result: the descent's end if its moves can be ordered, else the
    // cheaper of its ordered prefix and the best orderable placement met
    // on the way; its cost recomputed exactly (running sums drift).
    let end = walk_best.placement;
    let placement = match order_moves(ctx, &end) {
        Ok(_) => end,
        Err(prefix) => {
            let p = apply_order(ctx, &prefix);
            if placement_cost(ctx, &p) < placement_cost(ctx, &keeper.ordered) {
                p
            } else {
                keeper.ordered
            }
        }
    };
    let cost = placement_cost(ctx, &placement);
    Annealed {
        placement,
        cost,
        evaluations: used,
    }
}

/// Most moved services for which [`Keeper::offer`] checks orderability at
/// every new best: the check is quadratic in them, and above this the
/// annealing's result is ordered once at the end instead.
const ORDER_CHECK_MOVES: usize = 200;

/// The best placements an annealing walk has visited: the cheapest
/// relaxed-feasible one, and the cheapest whose moves [`order_moves`] can
/// order (the one that can always be proposed).
struct Keeper<'a> {
    ctx: &'a Ctx<'a>,
    relaxed: Vec<usize>,
    relaxed_cost: f64,
    ordered: Vec<usize>,
    ordered_cost: f64,
}

impl<'a> Keeper<'a> {
    fn new(ctx: &'a Ctx<'a>, walk: &Walk, cost0: f64) -> Keeper<'a> {
        Keeper {
            ctx,
            relaxed: walk.home.clone(),
            relaxed_cost: cost0,
            ordered: walk.home.clone(),
            ordered_cost: cost0,
        }
    }

    fn offer(&mut self, walk: &Walk) {
        let tol = |c: f64| COST_TOL * (1.0 + c.abs());
        if walk.cost < self.relaxed_cost - tol(self.relaxed_cost) {
            self.relaxed_cost = walk.cost;
            self.relaxed.clone_from(&walk.placement);
        }
        if walk.cost < self.ordered_cost - tol(self.ordered_cost)
            && walk.moved <= ORDER_CHECK_MOVES
            && order_moves(self.ctx, &walk.placement).is_ok()
        {
            self.ordered_cost = walk.cost;
            self.ordered.clone_from(&walk.placement);
        }
    }
}

/// May a service with choices `dom` be placed on `c` (false when it
/// cannot move at all)?
fn movable_to(dom: &[usize], c: usize) -> bool {
    !dom.is_empty() && allows(dom, c)
}

// ---------------------------------------------------------------------------
// Branch and bound.

/// How far [`solve`] may go.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Limits {
    /// Search nodes at most.
    pub nodes: u64,
    /// Moved services at most (`usize::MAX`: no cap).
    pub max_moves: usize,
}

/// What [`solve`] found.
#[derive(Clone, Debug)]
pub struct Solution {
    /// `State::totals().cost` of the current placement.
    pub cost_before: f64,
    /// Cost (estate + copy) of the best orderable placement found,
    /// recomputed with `State::totals`.
    pub cost: f64,
    pub placement: Vec<usize>,
    /// Its moves in a certified order ([`order_moves`]).
    pub order: Vec<(usize, usize)>,
    /// Services that could move (the search's variables).
    pub movable: usize,
    /// Search nodes visited.
    pub nodes: u64,
    /// True when the search finished within its node budget: `cost` is
    /// then the optimum over every orderable placement.
    pub complete: bool,
    /// A proven lower bound on the cost of any placement the search
    /// covers: `cost` when complete, else the smallest bound over the
    /// nodes left unexplored.
    pub lower_bound: f64,
    /// The cheapest placement the search met that satisfies the relaxed
    /// capacity condition but has no order found by [`order_moves`], when
    /// cheaper than `cost`.
    pub unorderable: Option<f64>,
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
    home: Vec<usize>,
    /// Service of each variable, in search order.
    var: Vec<usize>,
    dom: Vec<Vec<usize>>,
    req: Vec<(f64, f64)>,
    /// Per variable: pair flows to other variables (index into `pairs`).
    var_pairs: Vec<Vec<usize>>,
    pairs: Vec<PairFlow>,
    caps: Vec<Option<(f64, f64)>>,
    /// Per cluster: CPU/memory of undecided variables currently on it.
    undecided_on: Vec<Load>,
    load: Vec<Load>,
    received: Vec<u32>,
    choice: Vec<usize>,
    moved: usize,
    max_moves: usize,
    /// Per variable, per choice: the cost it would add given the decided
    /// variables (its flows to fixed services, copy, flows to decided ones).
    acc: Vec<Vec<f64>>,
    /// Cost of everything decided (and fixed), headroom excluded.
    g: f64,
    /// Σ min over pair flows between two undecided variables.
    pair_rest: f64,
    best: f64,
    best_placement: Vec<usize>,
    best_order: Vec<(usize, usize)>,
    unorderable: Option<f64>,
    nodes: u64,
    budget: u64,
    exhausted: bool,
    /// Smallest lower bound over the nodes the budget left unexplored.
    open_bound: f64,
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
            lb += if self.moved >= self.max_moves {
                // Every remaining variable must stay.
                self.acc[v][0]
            } else {
                self.acc[v].iter().copied().fold(f64::INFINITY, f64::min)
            };
        }
        lb
    }

    fn leaf(&mut self) {
        let cost = self.g + self.headroom(false);
        if cost >= self.best - COST_TOL * (1.0 + self.best.abs()) {
            return;
        }
        let mut placement = self.home.clone();
        for (v, &k) in self.choice.iter().enumerate() {
            placement[self.var[v]] = self.dom[v][k];
        }
        match order_moves(self.ctx, &placement) {
            Ok(order) => {
                self.best = cost;
                self.best_placement = placement;
                self.best_order = order;
            }
            Err(_) => {
                if self.unorderable.is_none_or(|u| cost < u) {
                    self.unorderable = Some(cost);
                }
            }
        }
    }

    fn dfs(&mut self, depth: usize) {
        self.nodes += 1;
        if !self.capacity_ok() {
            return;
        }
        if self.nodes > self.budget {
            self.exhausted = true;
            let lb = if depth == self.var.len() {
                self.g + self.headroom(false)
            } else {
                self.lower_bound(depth)
            };
            self.open_bound = self.open_bound.min(lb);
            return;
        }
        if depth == self.var.len() {
            self.leaf();
            return;
        }
        let lb = self.lower_bound(depth);
        if lb >= self.best - COST_TOL * (1.0 + self.best.abs()) {
            return;
        }
        let v = depth;
        let (cpu, mem) = self.req[v];
        let origin = self.dom[v][0];
        // Cheapest choice first, so a good incumbent comes early; with the
        // move cap reached only staying is left.
        let mut order: Vec<usize> = if self.moved >= self.max_moves {
            vec![0]
        } else {
            (0..self.dom[v].len()).collect()
        };
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
                self.moved += 1;
            }
            self.spread(v, k, 1.0);
            self.dfs(depth + 1);
            self.spread(v, k, -1.0);
            if k != 0 {
                self.load[origin].cpu_in += cpu;
                self.load[origin].memory_in += mem;
                self.load[c].cpu_in -= cpu;
                self.load[c].memory_in -= mem;
                self.received[c] -= 1;
                self.moved -= 1;
            }
            self.g = g0;
        }
        self.pair_rest += released;
        self.undecided_on[origin].cpu_in += cpu;
        self.undecided_on[origin].memory_in += mem;
    }

    /// Tell the undecided peers of `v` (choice `k`) where this end of
    /// their flows is (`sign` 1), or take it back (−1).
    fn spread(&mut self, v: usize, k: usize, sign: f64) {
        for i in 0..self.var_pairs[v].len() {
            let pf = &self.pairs[self.var_pairs[v][i]];
            if pf.a == v && pf.b > v {
                for kb in 0..self.dom[pf.b].len() {
                    self.acc[pf.b][kb] += sign * pf.cost[k][kb];
                }
            } else if pf.b == v && pf.a > v {
                for ka in 0..self.dom[pf.a].len() {
                    self.acc[pf.a][ka] += sign * pf.cost[ka][k];
                }
            }
        }
    }
}

/// Work of one search node in elementary steps: its bound sums every
/// undecided choice and every cluster's headroom and capacity. Used to
/// turn a work budget into a node budget ([`node_budget`]).
pub fn node_work(doms: &[Vec<usize>], clusters: usize) -> u64 {
    doms.iter().map(|d| d.len() as u64).sum::<u64>() + 2 * clusters as u64 + 1
}

/// Nodes affordable with `work` elementary steps.
pub fn node_budget(work: u64, doms: &[Vec<usize>], clusters: usize) -> u64 {
    (work / node_work(doms, clusters)).max(1)
}

/// The cheapest orderable placement by branch-and-bound, starting from the
/// incumbent `start` (a placement; it is ordered with [`order_moves`], and
/// an unorderable tail is dropped), within `limits`.
pub fn solve(ctx: &Ctx, doms: &[Vec<usize>], start: &[usize], limits: Limits) -> Solution {
    let estate = ctx.estate;
    let cost_before = State::initial(estate).totals(ctx).cost;
    let home: Vec<usize> = estate.services.iter().map(|s| s.cluster).collect();
    let is_var: Vec<bool> = doms.iter().map(|d| !d.is_empty()).collect();

    // Spread of each service's own cost over its choices, to order the
    // variables: the ones whose choice matters most go first.
    let spread = |s: usize| {
        let costs: Vec<f64> = doms[s]
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
    let req: Vec<(f64, f64)> = var
        .iter()
        .map(|&s| {
            let svc = &estate.services[s];
            (svc.cpu.unwrap_or(0.0), svc.memory_gib.unwrap_or(0.0))
        })
        .collect();

    let mut g = 0.0;
    let mut acc: Vec<Vec<f64>> = dom
        .iter()
        .zip(&var)
        .map(|(d, &s)| {
            let copy = copy_cost(ctx, s);
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
            (a, b) if a == b => {
                // A service's flow to itself: both ends move together.
                for (k, &c) in dom[a].iter().enumerate() {
                    let (rt, xs) = ctx.flow_cost(f, c, c);
                    acc[a][k] += rt + xs;
                }
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
    for (v, &s) in var.iter().enumerate() {
        undecided_on[home[s]].cpu_in += req[v].0;
        undecided_on[home[s]].memory_in += req[v].1;
    }
    let nvars = var.len();
    // The incumbent: `start`, ordered (an unorderable tail dropped) and
    // within the move cap, else the current placement.
    let mut start_order = match order_moves(ctx, start) {
        Ok(o) | Err(o) => o,
    };
    if start_order.len() > limits.max_moves {
        start_order.clear();
    }
    let start_placement = apply_order(ctx, &start_order);
    let start_cost = placement_cost(ctx, &start_placement);
    let (best, best_placement, best_order) = if start_cost < cost_before {
        (start_cost, start_placement, start_order)
    } else {
        (cost_before, home.clone(), Vec::new())
    };
    let mut search = Search {
        ctx,
        home: home.clone(),
        var,
        dom,
        req,
        var_pairs,
        pairs,
        caps: capacities(ctx),
        undecided_on,
        load: vec![Load::default(); estate.clusters.len()],
        received: vec![0; estate.clusters.len()],
        choice: vec![0; nvars],
        moved: 0,
        max_moves: limits.max_moves,
        acc,
        g,
        pair_rest,
        best,
        best_placement,
        best_order,
        unorderable: None,
        nodes: 0,
        budget: limits.nodes,
        exhausted: false,
        open_bound: f64::INFINITY,
    };
    search.dfs(0);
    let cost = placement_cost(ctx, &search.best_placement);
    let complete = !search.exhausted;
    let lower_bound = if complete {
        cost
    } else {
        search.open_bound.min(cost)
    };
    Solution {
        cost_before,
        cost,
        placement: search.best_placement,
        order: search.best_order,
        movable: nvars,
        nodes: search.nodes,
        complete,
        lower_bound,
        unorderable: search.unorderable.filter(|&u| u < cost),
    }
}

// ---------------------------------------------------------------------------
// The reference deciders.

/// Most movable services the `optimum` deciders search. Beyond it the
/// bound's per-node cost (every undecided choice) makes the node budget
/// too small to do more than polish the incumbent, so the decider says it
/// did not run rather than present that as an exact result. 300 keeps a
/// 1,000-service `compare` under a second on one core.
pub const MAX_MOVABLE: usize = 300;

/// Elementary steps of the exact search ([`node_work`] per node):
/// 60 million is ~0.1–0.3 s on one core of the machines measured
/// (`docs/quality.md`), enough to prove the optimum of every `Shape::tiny`
/// estate and most `Shape::small` ones.
pub const SEARCH_WORK: u64 = 60_000_000;

/// Flow evaluations of the simulated annealing (each candidate change
/// costs about the degree of the services it moves): 2 million is
/// ~20–200 ms on one core.
pub const ANNEAL_WORK: u64 = 2_000_000;

/// Candidate changes the annealing evaluates at least and at most: at
/// least 20,000 so a tiny estate gets a thorough walk, at most 200,000 so
/// a sparse large one stays within its time.
pub const MIN_EVALUATIONS: u64 = 20_000;
pub const MAX_EVALUATIONS: u64 = 200_000;

/// The annealing's seed: fixed, so the same estate gets the same result.
pub const SEED: u64 = 0x6265_7274_6852_4546; // "berthREF"

/// Evaluations the annealing gets on this estate: [`ANNEAL_WORK`] over the
/// mean number of flows a service has (+2 for the clusters a change
/// touches), within [[`MIN_EVALUATIONS`], [`MAX_EVALUATIONS`]].
pub fn evaluations(ctx: &Ctx) -> u64 {
    let n = ctx.estate.services.len().max(1) as u64;
    let degree = (2 * ctx.estate.flows.len() as u64) / n;
    (ANNEAL_WORK / (degree + 2)).clamp(MIN_EVALUATIONS, MAX_EVALUATIONS)
}

/// Points rounded to two decimals, for reasons and notes.
fn pts(x: f64) -> f64 {
    crate::constraints::round2(x)
}

pub mod decider {
    //! `optimum`, `optimum-capped` and `local-search` as deciders
    //! (`decider::builtins`): their proposals are the moves to the
    //! placement they found, in a certified order, so `decider::score`
    //! accepts every one; the note says what was proved.

    use super::*;
    use crate::estate::Estate;
    use crate::policy::Policy;
    use crate::proposal::{Decider, Decision, Proposal};
    use crate::request::DeciderRequest;

    fn proposals(ctx: &Ctx, order: &[(usize, usize)], what: &str) -> Vec<Proposal> {
        let n = order.len();
        order
            .iter()
            .enumerate()
            .map(|(i, &(s, c))| Proposal {
                service_id: ctx.estate.services[s].id.clone(),
                to: ctx.estate.clusters[c].id.clone(),
                reason: format!("move {} of {n} to {what}", i + 1),
            })
            .collect()
    }

    /// The exact reference: branch-and-bound over final placements
    /// ([`solve`]) from the better of the annealing's result and the
    /// baseline's advice, within [`SEARCH_WORK`];
    /// `capped` limits it to `policy.max_moves` moved services.
    pub struct Optimum<'a> {
        pub estate: &'a Estate,
        pub policy: &'a Policy,
        pub now: i64,
        pub capped: bool,
    }

    impl Decider for Optimum<'_> {
        fn name(&self) -> &str {
            if self.capped {
                "optimum-capped"
            } else {
                "optimum"
            }
        }
        fn decide(&self, request: &DeciderRequest) -> Vec<Proposal> {
            self.decide_noted(request).proposals
        }
        fn decide_noted(&self, _request: &DeciderRequest) -> Decision {
            let ctx = Ctx::new(self.estate, self.policy, self.now);
            let doms = domains(&ctx);
            let movable = doms.iter().filter(|d| !d.is_empty()).count();
            if movable > MAX_MOVABLE {
                return Decision {
                    proposals: Vec::new(),
                    note: Some(format!(
                        "not run: {movable} movable services, more than the {MAX_MOVABLE} the exact search is bounded to (see local-search)"
                    )),
                };
            }
            let cap = if self.capped {
                self.policy.max_moves
            } else {
                usize::MAX
            };
            // The incumbent: the cheaper of the annealing's placement and
            // the baseline's advice (so the reference is never below the
            // baseline even when the budget stops the proof; the test
            // solver of `tests/common/exact.rs` stays independent of it).
            let annealed = local_search(&ctx, &doms, evaluations(&ctx), SEED, cap);
            let mut advised: Vec<usize> = self.estate.services.iter().map(|s| s.cluster).collect();
            let advice = crate::advise(self.estate, self.policy, self.now);
            for m in advice.moves.iter().take(cap) {
                if let (Some(s), Some(c)) = (
                    self.estate.service_index(&m.service),
                    self.estate.cluster_index(&m.to),
                ) {
                    advised[s] = c;
                }
            }
            let start = if placement_cost(&ctx, &advised) < annealed.cost {
                advised
            } else {
                annealed.placement
            };
            let budget = node_budget(SEARCH_WORK, &doms, self.estate.clusters.len());
            let sol = solve(
                &ctx,
                &doms,
                &start,
                Limits {
                    nodes: budget,
                    max_moves: cap,
                },
            );
            let capped = if self.capped {
                format!(" with at most {} moves", self.policy.max_moves)
            } else {
                String::new()
            };
            let mut note = if sol.complete {
                format!(
                    "proven optimal{capped} after {} nodes: {} → {} points",
                    sol.nodes,
                    pts(sol.cost_before),
                    pts(sol.cost)
                )
            } else {
                format!(
                    "stopped at the node budget ({budget} nodes): best found{capped}, not proven; {} → {} points, lower bound {} points",
                    pts(sol.cost_before),
                    pts(sol.cost),
                    pts(sol.lower_bound)
                )
            };
            if let Some(u) = sol.unorderable {
                note.push_str(&format!(
                    "; a placement costing {} points meets every capacity at the end but no certified order of its moves was found, so this is the best placement whose moves can be ordered",
                    pts(u)
                ));
            }
            let what = if sol.complete {
                format!("the proven optimum{capped} ({} points)", pts(sol.cost))
            } else {
                format!(
                    "the best placement found{capped} ({} points, not proven)",
                    pts(sol.cost)
                )
            };
            Decision {
                proposals: proposals(&ctx, &sol.order, &what),
                note: Some(note),
            }
        }
    }

    /// Simulated annealing ([`local_search`]) with move, swap and group
    /// neighbourhoods, from [`SEED`], within [`evaluations`], capped at
    /// `policy.max_moves` moved services like the baseline.
    pub struct LocalSearch<'a> {
        pub estate: &'a Estate,
        pub policy: &'a Policy,
        pub now: i64,
    }

    impl Decider for LocalSearch<'_> {
        fn name(&self) -> &str {
            "local-search"
        }
        fn decide(&self, request: &DeciderRequest) -> Vec<Proposal> {
            self.decide_noted(request).proposals
        }
        fn decide_noted(&self, _request: &DeciderRequest) -> Decision {
            let ctx = Ctx::new(self.estate, self.policy, self.now);
            let doms = domains(&ctx);
            let evals = evaluations(&ctx);
            let a = local_search(&ctx, &doms, evals, SEED, self.policy.max_moves);
            let cost_before = State::initial(self.estate).totals(&ctx).cost;
            let (order, dropped) = match order_moves(&ctx, &a.placement) {
                Ok(o) => (o, 0),
                Err(o) => {
                    let all = a
                        .placement
                        .iter()
                        .enumerate()
                        .filter(|&(s, &c)| c != self.estate.services[s].cluster)
                        .count();
                    let n = o.len();
                    (o, all - n)
                }
            };
            let reached = apply_order(&ctx, &order);
            let cost = placement_cost(&ctx, &reached);
            let (order, cost) = if cost < cost_before {
                (order, cost)
            } else {
                (Vec::new(), cost_before)
            };
            let mut note = format!(
                "simulated annealing, seed {SEED:#x}, {} evaluations: {} → {} points",
                a.evaluations,
                pts(cost_before),
                pts(cost)
            );
            if dropped > 0 {
                note.push_str(&format!(
                    "; {dropped} moves of the placement found had no certified order and were left out"
                ));
            }
            Decision {
                proposals: proposals(
                    &ctx,
                    &order,
                    &format!("the placement found ({} points)", pts(cost)),
                ),
                note: Some(note),
            }
        }
    }
}
