//! The placement arithmetic shared by the reference solvers and the
//! advice's targeted plan (`docs/advice.md` §6, "Compound steps"): the
//! cost of a final placement, each service's choices, a certified order
//! for a placement's moves, and a seeded simulated annealing
//! ([`local_search`]) over relaxed-feasible placements.
//!
//! A leaf below `advise` and `optimum`: it imports neither, so the advice
//! may start from what the annealing finds and `optimum` may start from
//! the advice without a circle. Pure like the rest of the engine: no
//! clock (the budget is a count of evaluations), no hash iteration, its
//! own PRNG (`gen::Rng`), `libm` for `exp`/`pow`.

use crate::candidates::Candidates;
use crate::constraints::Load;
use crate::cost::{Ctx, State};
use crate::gen::Rng;

/// Tolerance of the capacity test inside the searches (cores / GiB), so
/// that a placement that can be certified is never lost to rounding in
/// the running sums. Every returned order is re-checked exactly with
/// `State::certainly_fits`, which is what scoring uses.
pub(crate) const CAP_TOL: f64 = 1e-9;

/// Relative tolerance under which two costs count as equal in the
/// searches (pruning and "better than the incumbent"): far below any
/// cost difference that matters (costs are points, 10⁻²…10⁶), far above
/// the rounding of sums of a few thousand terms.
pub(crate) const COST_TOL: f64 = 1e-9;

/// Moves `(service, destination)`, in the order they are applied.
pub type Order = Vec<(usize, usize)>;

/// Copy cost of moving `service` away from where it is now, points (≥ 0).
pub fn copy_cost(ctx: &Ctx, service: usize) -> f64 {
    ctx.copy_points(service)
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
pub fn capacities(ctx: &Ctx) -> Vec<Option<(f64, f64)>> {
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

/// Each service's choices: its current cluster first, then its statically
/// allowed clusters (`candidates`) of known free capacity in id order.
/// Empty: it cannot move (immovable, a request unknown, or nowhere
/// certifiable to go).
pub fn domains_from(ctx: &Ctx, candidates: &Candidates) -> Vec<Vec<usize>> {
    let estate = ctx.estate;
    let caps = capacities(ctx);
    candidates
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
    used += greedy_start(&mut walk, doms, &vars);
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
        neighbour(&walk, doms, &vars, &mut rng, &mut changes);
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

/// A random change of the walk's placement into `changes` (empty when it
/// would change nothing): a **move** (60 %), a **swap** (20 %) or a
/// **group** of a service and one or two of its flow peers (20 %).
fn neighbour(
    walk: &Walk,
    doms: &[Vec<usize>],
    vars: &[usize],
    rng: &mut Rng,
    changes: &mut Vec<(usize, usize)>,
) {
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
        let adj = &walk.ctx.adjacency[s];
        if !adj.is_empty() {
            let p1 = adj[rng.below(adj.len())].1;
            if p1 != s && movable_to(&doms[p1], c) {
                changes.push((p1, c));
                let adj1 = &walk.ctx.adjacency[p1];
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
}

/// Construction: each service's best single move from the current
/// placement, taken in order of gain (largest first, ties on service id)
/// while it still gains and fits, up to the cap: a greedy start without
/// the bars, so the walk begins where single moves end. Answers the
/// evaluations spent.
fn greedy_start(walk: &mut Walk, doms: &[Vec<usize>], vars: &[usize]) -> u64 {
    let mut used = 0u64;
    let mut firsts: Vec<(f64, usize, usize)> = Vec::new();
    for &s in vars {
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
    used
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
