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

pub use crate::anneal::{
    apply_order, evaluations, local_search, order_moves, placement_cost, Annealed, Order,
    ANNEAL_WORK, MAX_EVALUATIONS, MIN_EVALUATIONS, SEED,
};
use crate::anneal::{capacities, copy_cost, CAP_TOL, COST_TOL};
use crate::constraints::Load;
use crate::cost::{Ctx, State};

/// Each service's choices ([`crate::anneal::domains_from`] on the static
/// candidates of `advise::feasibility`).
pub fn domains(ctx: &Ctx) -> Vec<Vec<usize>> {
    crate::anneal::domains_from(ctx, &crate::advise::feasibility(ctx.estate).candidates)
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

/// The variables (services with a choice) in search order: the ones
/// whose choice matters most first — by the spread of a service's own flow
/// cost over its choices, everyone else at home — then by index.
fn variable_order(ctx: &Ctx, doms: &[Vec<usize>], home: &[usize], is_var: &[bool]) -> Vec<usize> {
    let estate = ctx.estate;
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
    var
}

/// The cheapest orderable placement by branch-and-bound, starting from the
/// incumbent `start` (a placement; it is ordered with [`order_moves`], and
/// an unorderable tail is dropped), within `limits`.
pub fn solve(ctx: &Ctx, doms: &[Vec<usize>], start: &[usize], limits: Limits) -> Solution {
    let estate = ctx.estate;
    let cost_before = State::initial(estate).totals(ctx).cost;
    let home: Vec<usize> = estate.services.iter().map(|s| s.cluster).collect();
    let is_var: Vec<bool> = doms.iter().map(|d| !d.is_empty()).collect();

    let var = variable_order(ctx, doms, &home, &is_var);
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
