//! A proven reference for Berth's advice (issue 33, `docs/quality.md`,
//! "Against a proven optimum"): the engine's placement problem written as a
//! mixed-integer program and solved by HiGHS, which proves optimality (or
//! says how far it got) where the engine's own branch-and-bound
//! (`berth_engine::optimum`) runs out of nodes.
//!
//! The engine stays pure and WebAssembly-clean: this crate is outside it,
//! links HiGHS (C++), reads a clock (the time limit) and is meant for the
//! server side and for measurements.
//!
//! # What is modelled
//!
//! Exactly the problem `berth_engine::optimum::solve` searches, within a
//! move cap:
//!
//! - **Choices.** Each *movable* service `s` (`optimum::domains`: both
//!   requests known, at least one statically allowed destination of known
//!   free capacity) has a binary `x[s,c]` for its current cluster and each
//!   of those destinations, `Σ_c x[s,c] = 1`. Every other service stays.
//! - **Cost** = `State::totals().cost` of the final placement + the copy
//!   cost of every service moved, term by term:
//!   - a flow between two services that stay is a constant;
//!   - a flow between a movable service and one that stays, and a
//!     service's flow to itself, is a cost on `x[s,c]`
//!     (`Ctx::flow_cost`, round trip + cross-site);
//!   - the flows between two movable services `u < v` (both directions,
//!     summed) are a cost on pair variables `z[a,b] ≥ 0` with
//!     `Σ_b z[a,b] = x[u,a]` and `Σ_a z[a,b] = x[v,b]`: with binary `x` the
//!     only solution is `z[a,b] = x[u,a]·x[v,b]`, and the relaxation is the
//!     tight (local-marginal) one;
//!   - copy: `copy_weight_per_gb × data_gb` on every `x[s,c]` with `c` not
//!     the current cluster;
//!   - headroom: per cluster and per resource of known free capacity, the
//!     engine's `w × max(0, u − θ) / (1 − θ)` with `u = (total − free +
//!     L) / total` is convex and piecewise linear in the net load moved in
//!     `L` (itself linear in `x`), so a variable `h ≥ 0`,
//!     `h ≥ α + β·L` is exact under minimisation. Clusters no movable
//!     service can enter or leave keep their headroom as a constant.
//! - **Capacity** (the relaxed condition of `optimum`): every cluster that
//!   receives a service ends with its net load within its certified
//!   capacity, free × (1 − margin) of the fact's class at `now`
//!   (`anneal::capacities`), CPU and memory. A cluster that receives
//!   nothing has net load ≤ 0, and the capacity is ≥ 0 (free figures are
//!   ≥ 0 and margins ≤ 1, both checked on load), so the row `L ≤
//!   capacity` holds unconditionally and needs no on/off variable.
//! - **Move cap**: `Σ_s x[s, current] ≥ movable − max_moves`.
//!
//! Not modelled: the *order* of the moves. As in `optimum`, the model is
//! over final placements; the solution is then ordered with
//! `anneal::order_moves` (moves out before moves in, each certified
//! against the moves before it), and [`Outcome::order`] says whether an
//! order was found. When none is, the proven optimum is a lower bound for
//! every decider (no order of certified moves reaches a cheaper placement
//! than the relaxed optimum), not a placement a decider can propose. The
//! bars of `docs/advice.md` §5 play no part either: they are what the
//! measurements compare against.
//!
//! # Checked against the engine
//!
//! [`solve`] evaluates the model's objective at the placement HiGHS
//! returns, term by term ([`Mip::evaluate`]), and the engine's own
//! `anneal::placement_cost` of the same placement; it returns
//! [`Error::Mismatch`] when they differ by more than [`AGREE`]. The tests
//! compare the proven optimum with the engine's exhaustive search on every
//! small generated estate.

use std::collections::BTreeMap;
use std::time::Instant;

use berth_engine::anneal::{self, Order};
use berth_engine::cost::{Ctx, State};
use berth_engine::optimum;
use highs::{Col, HighsModelStatus, RowProblem, Sense};

/// Largest difference (points) allowed between the model's objective at a
/// placement and the engine's cost of it. Costs are sums of at most a few
/// thousand terms of 10⁻²…10⁴ points, whose rounding is ~10⁻¹⁰; a modelling
/// error is at least a flow's or a copy's cost, ≥ 10⁻³ on every estate
/// measured.
pub const AGREE: f64 = 1e-6;

/// Absolute optimality gap (points) under which HiGHS stops as optimal:
/// the same tolerance as [`AGREE`], far below any difference a user sees
/// (costs are shown to two decimals).
pub const ABS_GAP: f64 = 1e-6;

/// Tolerance (cores / GiB) of the capacity check on the solution, as the
/// engine's searches use (`anneal` `CAP_TOL`).
const CAP_TOL: f64 = 1e-9;

/// How far [`solve`] may go.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Limits {
    /// Moved services at most (`usize::MAX`: no cap).
    pub max_moves: usize,
    /// Wall-clock seconds HiGHS may take (model building excluded).
    pub time_limit_s: f64,
}

/// The size of a model.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Size {
    /// Services with a choice.
    pub movable: usize,
    /// Binary assignment columns `x[s,c]`.
    pub assignments: usize,
    /// Pairs of movable services with flows between them.
    pub pairs: usize,
    /// Pair columns `z[a,b]`.
    pub pair_columns: usize,
    /// All columns and rows of the program.
    pub columns: usize,
    pub rows: usize,
}

/// What HiGHS proved.
#[derive(Clone, Debug, PartialEq)]
pub enum Status {
    /// Optimal within [`ABS_GAP`] points.
    Optimal,
    /// Stopped before a proof (time limit or another HiGHS limit): the
    /// placement is the best found and `bound` the best bound.
    StoppedEarly(String),
}

/// One solve.
#[derive(Clone, Debug)]
pub struct Outcome {
    pub status: Status,
    /// `State::totals().cost` of the current placement.
    pub cost_before: f64,
    /// The engine's cost of the placement found (`anneal::placement_cost`:
    /// estate cost + copy cost).
    pub cost: f64,
    /// HiGHS's objective of it (equal to `cost` within [`AGREE`] up to
    /// HiGHS's integrality tolerance).
    pub objective: f64,
    /// The best proven lower bound on the cost of any placement of the
    /// model (within the move cap): `cost` when optimal.
    pub bound: f64,
    pub placement: Vec<usize>,
    /// The moves in a certified order (`Ok`), or the longest certified
    /// prefix found (`Err`) when the placement cannot be ordered.
    pub order: Result<Order, Order>,
    /// Branch-and-bound nodes HiGHS explored; −1 when the bindings cannot
    /// read it (HiGHS 1.16 keeps it as a 64-bit counter, which the
    /// `highs` crate's integer reader does not return).
    pub nodes: i64,
    /// Seconds to build the model and to solve it.
    pub build_s: f64,
    pub solve_s: f64,
    pub size: Size,
}

impl Outcome {
    pub fn proven(&self) -> bool {
        self.status == Status::Optimal
    }
    /// Improvement of the placement found: cost before − cost (copy
    /// included).
    pub fn improvement(&self) -> f64 {
        self.cost_before - self.cost
    }
    /// The most any placement of the model can improve: cost before −
    /// bound.
    pub fn best_possible(&self) -> f64 {
        self.cost_before - self.bound
    }
    /// Gap in points between the placement found and the bound.
    pub fn gap(&self) -> f64 {
        (self.cost - self.bound).max(0.0)
    }
}

#[derive(Debug)]
pub enum Error {
    /// What the model does not cover: headroom undefined (threshold ≥ 1,
    /// or a non-positive total on a cluster whose load can change), or a
    /// negative certified capacity (neither can be loaded).
    Unsupported(String),
    /// HiGHS refused the model or failed.
    Highs(String),
    /// The model's objective and the engine's cost of the same placement
    /// differ: a modelling error, never a result.
    Mismatch { model: f64, engine: f64 },
}

impl std::fmt::Display for Error {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Error::Unsupported(m) => write!(f, "not modelled: {m}"),
            Error::Highs(m) => write!(f, "HiGHS: {m}"),
            Error::Mismatch { model, engine } => write!(
                f,
                "the model's objective {model} differs from the engine's cost {engine}"
            ),
        }
    }
}

impl std::error::Error for Error {}

struct Pair {
    u: usize,
    v: usize,
    /// Cost by (choice of u) × (choice of v), row-major.
    cost: Vec<f64>,
}

/// One headroom piece: `max(0, alpha + beta × L)` of cluster `cluster`,
/// `L` the net CPU (`cpu`) or memory load moved in.
struct Headroom {
    cluster: usize,
    cpu: bool,
    alpha: f64,
    beta: f64,
}

/// The mixed-integer program of an estate's placement within a move cap.
pub struct Mip {
    problem: RowProblem,
    home: Vec<usize>,
    /// Per service: its choices (current cluster first; empty: fixed).
    dom: Vec<Vec<usize>>,
    /// Per service: the column of each choice.
    x: Vec<Vec<Col>>,
    /// Per service, per choice: cost on `x` alone (flows to services that
    /// stay, flows to itself, copy).
    x_cost: Vec<Vec<f64>>,
    pairs: Vec<Pair>,
    headroom: Vec<Headroom>,
    /// Flows between services that stay, headroom of clusters whose load
    /// cannot change.
    constant: f64,
    size: Size,
}

fn load_of(ctx: &Ctx, s: usize) -> (f64, f64) {
    let svc = &ctx.estate.services[s];
    (svc.cpu_in_load(), svc.memory_in_load())
}

impl Mip {
    /// Build the program of `ctx`'s estate with at most `max_moves` moved
    /// services.
    pub fn build(ctx: &Ctx, max_moves: usize) -> Result<Mip, Error> {
        let estate = ctx.estate;
        let policy = ctx.policy;
        let nc = estate.clusters.len();
        let home: Vec<usize> = estate.services.iter().map(|s| s.cluster).collect();
        let dom = optimum::domains(ctx);
        let movable = |s: usize| !dom[s].is_empty();
        let mut problem = RowProblem::default();
        let mut size = Size::default();

        // Costs on x alone.
        let mut x_cost: Vec<Vec<f64>> = dom
            .iter()
            .enumerate()
            .map(|(s, d)| {
                let copy = anneal::copy_cost(ctx, s);
                (0..d.len())
                    .map(|k| if k == 0 { 0.0 } else { copy })
                    .collect()
            })
            .collect();
        let mut constant = 0.0;
        let mut pair_of: BTreeMap<(usize, usize), usize> = BTreeMap::new();
        let mut pairs: Vec<Pair> = Vec::new();
        for (f, fl) in estate.flows.iter().enumerate() {
            let cost = |a: usize, b: usize| {
                let (rt, xs) = ctx.flow_cost(f, a, b);
                rt + xs
            };
            match (movable(fl.from), movable(fl.to)) {
                (false, false) => constant += cost(home[fl.from], home[fl.to]),
                _ if fl.from == fl.to => {
                    let s = fl.from;
                    for (k, &c) in dom[s].iter().enumerate() {
                        x_cost[s][k] += cost(c, c);
                    }
                }
                (true, false) => {
                    let s = fl.from;
                    for (k, &c) in dom[s].iter().enumerate() {
                        x_cost[s][k] += cost(c, home[fl.to]);
                    }
                }
                (false, true) => {
                    let s = fl.to;
                    for (k, &c) in dom[s].iter().enumerate() {
                        x_cost[s][k] += cost(home[fl.from], c);
                    }
                }
                (true, true) => {
                    let (u, v) = (fl.from.min(fl.to), fl.from.max(fl.to));
                    let p = *pair_of.entry((u, v)).or_insert_with(|| {
                        pairs.push(Pair {
                            u,
                            v,
                            cost: vec![0.0; dom[u].len() * dom[v].len()],
                        });
                        pairs.len() - 1
                    });
                    let dv = dom[v].len();
                    for (ka, &a) in dom[u].iter().enumerate() {
                        for (kb, &b) in dom[v].iter().enumerate() {
                            // The flow's own direction: from → to.
                            let c = if fl.from == u { cost(a, b) } else { cost(b, a) };
                            pairs[p].cost[ka * dv + kb] += c;
                        }
                    }
                }
            }
        }

        // Assignment columns and Σ_c x[s,c] = 1.
        let x: Vec<Vec<Col>> = dom
            .iter()
            .enumerate()
            .map(|(s, d)| {
                (0..d.len())
                    .map(|k| problem.add_integer_column(x_cost[s][k], 0..=1))
                    .collect()
            })
            .collect();
        for xs in x.iter().filter(|xs| !xs.is_empty()) {
            let row: Vec<(Col, f64)> = xs.iter().map(|&c| (c, 1.0)).collect();
            problem.add_row(1.0..=1.0, &row);
            size.movable += 1;
            size.assignments += xs.len();
        }

        // Pair columns with their row and column equalities.
        for p in &pairs {
            let (du, dv) = (dom[p.u].len(), dom[p.v].len());
            let z: Vec<Col> = p
                .cost
                .iter()
                .map(|&c| problem.add_column(c, 0.0..))
                .collect();
            for a in 0..du {
                let mut row: Vec<(Col, f64)> = (0..dv).map(|b| (z[a * dv + b], 1.0)).collect();
                row.push((x[p.u][a], -1.0));
                problem.add_row(0.0..=0.0, &row);
            }
            for b in 0..dv {
                let mut row: Vec<(Col, f64)> = (0..du).map(|a| (z[a * dv + b], 1.0)).collect();
                row.push((x[p.v][b], -1.0));
                problem.add_row(0.0..=0.0, &row);
            }
            size.pairs += 1;
            size.pair_columns += z.len();
        }

        // Per cluster: the columns that change its load (arrivals +req,
        // its own services' staying +req, with the constant −Σ req of its
        // own movable services).
        let mut arrivals: Vec<Vec<(usize, Col)>> = vec![Vec::new(); nc];
        let mut stays: Vec<Vec<(usize, Col)>> = vec![Vec::new(); nc];
        for (s, d) in dom.iter().enumerate() {
            for (k, &c) in d.iter().enumerate() {
                if k == 0 {
                    stays[c].push((s, x[s][k]));
                } else {
                    arrivals[c].push((s, x[s][k]));
                }
            }
        }
        let caps = anneal::capacities(ctx);
        let theta = policy.headroom_threshold;
        let mut headroom = Vec::new();
        for c in 0..nc {
            if arrivals[c].is_empty() && stays[c].is_empty() {
                constant += ctx.headroom(c, Default::default());
                continue;
            }
            let cl = &estate.clusters[c];
            for cpu in [true, false] {
                let req = |s: usize| {
                    let (a, b) = load_of(ctx, s);
                    if cpu {
                        a
                    } else {
                        b
                    }
                };
                let (free, total) = if cpu {
                    (cl.cpu_free.value, cl.cpu_total)
                } else {
                    (cl.memory_free_gib.value, cl.memory_total_gib)
                };
                // L = Σ_arrivals req·x + Σ_stays req·x − Σ_stays req.
                let base: f64 = stays[c].iter().map(|&(s, _)| req(s)).sum();
                let load_terms = |scale: f64| -> Vec<(Col, f64)> {
                    arrivals[c]
                        .iter()
                        .chain(&stays[c])
                        .map(|&(s, col)| (col, scale * req(s)))
                        .filter(|&(_, a)| a != 0.0)
                        .collect()
                };
                // Headroom (unknown free capacity: none, as in the engine).
                if let Some(free) = free {
                    if policy.headroom_weight != 0.0 {
                        if theta >= 1.0 || total <= 0.0 {
                            return Err(Error::Unsupported(format!(
                                "headroom of {} with threshold {theta} and total {total}",
                                cl.id
                            )));
                        }
                        let slope = policy.headroom_weight / (1.0 - theta);
                        let alpha = slope * ((total - free) / total - theta);
                        let beta = slope / total;
                        // h − β Σ req x ≥ α − β base.
                        let h = problem.add_column(1.0, 0.0..);
                        let mut row = load_terms(-beta);
                        row.push((h, 1.0));
                        problem.add_row((alpha - beta * base).., &row);
                        headroom.push(Headroom {
                            cluster: c,
                            cpu,
                            alpha,
                            beta,
                        });
                    }
                }
                // Capacity, where something can arrive.
                if arrivals[c].is_empty() {
                    continue;
                }
                let Some((cap_cpu, cap_mem)) = caps[c] else {
                    // `domains` gives no arrival on such a cluster.
                    return Err(Error::Unsupported(format!(
                        "arrivals on {} of unknown free capacity",
                        cl.id
                    )));
                };
                let cap = if cpu { cap_cpu } else { cap_mem };
                // A cluster that receives nothing ends with L ≤ 0 ≤ cap, so
                // the row may hold unconditionally. A negative certified
                // capacity cannot be read (free figures are ≥ 0 and
                // margins ≤ 1, both checked on load), and would need an
                // on/off row instead: refused rather than modelled wrong.
                if cap < 0.0 {
                    return Err(Error::Unsupported(format!(
                        "negative certified capacity on {}",
                        cl.id
                    )));
                }
                problem.add_row(..=(cap + base), load_terms(1.0));
            }
        }

        // The move cap.
        if max_moves < size.movable {
            let row: Vec<(Col, f64)> = x
                .iter()
                .filter(|xs| !xs.is_empty())
                .map(|xs| (xs[0], 1.0))
                .collect();
            problem.add_row(((size.movable - max_moves) as f64).., &row);
        }

        // The constant, as a column fixed at 1 (the bindings pass no
        // objective offset), so HiGHS's objective and bound are costs.
        problem.add_column(constant, 1.0..=1.0);
        size.columns = problem.num_cols();
        size.rows = problem.num_rows();
        Ok(Mip {
            problem,
            home,
            dom,
            x,
            x_cost,
            pairs,
            headroom,
            constant,
            size,
        })
    }

    pub fn size(&self) -> Size {
        self.size
    }

    /// The model's objective at `placement` (every service's cluster),
    /// term by term as the columns carry it: what HiGHS minimises.
    /// `None` when the placement gives a service a cluster outside its
    /// choices (it is not a placement of the model).
    pub fn evaluate(&self, ctx: &Ctx, placement: &[usize]) -> Option<f64> {
        let mut k = vec![0usize; placement.len()];
        for (s, d) in self.dom.iter().enumerate() {
            if d.is_empty() {
                if placement[s] != self.home[s] {
                    return None;
                }
                continue;
            }
            k[s] = d.iter().position(|&c| c == placement[s])?;
        }
        let mut total = self.constant;
        for (s, d) in self.dom.iter().enumerate() {
            if !d.is_empty() {
                total += self.x_cost[s][k[s]];
            }
        }
        for p in &self.pairs {
            total += p.cost[k[p.u] * self.dom[p.v].len() + k[p.v]];
        }
        let mut load = vec![(0.0f64, 0.0f64); ctx.estate.clusters.len()];
        for (s, d) in self.dom.iter().enumerate() {
            if !d.is_empty() && k[s] != 0 {
                let (cpu, mem) = load_of(ctx, s);
                load[self.home[s]].0 -= cpu;
                load[self.home[s]].1 -= mem;
                load[placement[s]].0 += cpu;
                load[placement[s]].1 += mem;
            }
        }
        for h in &self.headroom {
            let l = if h.cpu {
                load[h.cluster].0
            } else {
                load[h.cluster].1
            };
            total += (h.alpha + h.beta * l).max(0.0);
        }
        Some(total)
    }
}

/// Does every cluster that receives a service end within its certified
/// capacity (the model's capacity condition, checked by the engine's
/// arithmetic)?
pub fn relaxed_feasible(ctx: &Ctx, placement: &[usize]) -> bool {
    let estate = ctx.estate;
    let mut state = State::initial(estate);
    let mut receives = vec![false; estate.clusters.len()];
    for (s, &c) in placement.iter().enumerate() {
        if c != estate.services[s].cluster {
            state.apply(ctx, s, c);
            receives[c] = true;
        }
    }
    let caps = anneal::capacities(ctx);
    (0..estate.clusters.len()).all(|c| {
        !receives[c]
            || caps[c].is_some_and(|(cpu, mem)| {
                state.load[c].cpu_in <= cpu + CAP_TOL && state.load[c].memory_in <= mem + CAP_TOL
            })
    })
}

/// Solve the placement problem of `ctx`'s estate within `limits`.
pub fn solve(ctx: &Ctx, limits: Limits) -> Result<Outcome, Error> {
    let started = Instant::now();
    let mip = Mip::build(ctx, limits.max_moves)?;
    let build_s = started.elapsed().as_secs_f64();
    let cost_before = State::initial(ctx.estate).totals(ctx).cost;
    let Mip {
        problem,
        home,
        dom,
        x,
        size,
        ..
    } = &mip;
    let mut model = problem.clone().optimise(Sense::Minimise);
    model.make_quiet();
    let set = |model: &mut highs::Model, name: &str, v: f64| {
        model
            .try_set_option(name, v)
            .map_err(|e| Error::Highs(format!("option {name}: {e:?}")))
    };
    set(&mut model, "time_limit", limits.time_limit_s.max(0.001))?;
    set(&mut model, "mip_rel_gap", 0.0)?;
    set(&mut model, "mip_abs_gap", ABS_GAP)?;
    let t = Instant::now();
    let solved = model
        .try_solve()
        .map_err(|e| Error::Highs(format!("{e:?}")))?;
    let solve_s = t.elapsed().as_secs_f64();
    let status = match solved.status() {
        HighsModelStatus::Optimal => Status::Optimal,
        HighsModelStatus::ReachedTimeLimit => {
            Status::StoppedEarly(format!("time limit of {} s", limits.time_limit_s))
        }
        other => Status::StoppedEarly(format!("{other:?}")),
    };
    let nodes = solved.int_info_value(c"mip_node_count").unwrap_or(-1);
    let objective = solved.objective_value();
    let dual = solved
        .double_info_value(c"mip_dual_bound")
        .map_err(|e| Error::Highs(format!("mip_dual_bound: {e:?}")))?;
    let columns = solved.get_solution();
    let columns = columns.columns();
    // The current placement is always feasible (nothing moves), so a
    // solution exists whenever HiGHS reports one; without one (stopped
    // before the first), the current placement stands.
    let has_solution = columns.len() == size.columns && objective.is_finite();
    let mut placement = home.clone();
    if has_solution {
        for (s, xs) in x.iter().enumerate() {
            if xs.is_empty() {
                continue;
            }
            let k = (0..xs.len())
                .max_by(|&a, &b| {
                    columns[xs[a].index()]
                        .total_cmp(&columns[xs[b].index()])
                        .then(b.cmp(&a))
                })
                .unwrap_or(0);
            placement[s] = dom[s][k];
        }
    }
    let cost = anneal::placement_cost(ctx, &placement);
    let model_cost = mip.evaluate(ctx, &placement).unwrap_or(f64::NAN);
    if (model_cost - cost).abs() > AGREE || model_cost.is_nan() {
        return Err(Error::Mismatch {
            model: model_cost,
            engine: cost,
        });
    }
    // HiGHS's dual bound is of its objective; the cost it bounds is the
    // engine's (equal within AGREE), and no bound exceeds a cost found.
    let bound = dual.min(cost);
    let order = anneal::order_moves(ctx, &placement);
    Ok(Outcome {
        status,
        cost_before,
        cost,
        objective: if has_solution { objective } else { cost },
        bound,
        placement,
        order,
        nodes,
        build_s,
        solve_s,
        size: *size,
    })
}

/// Seconds HiGHS may take in [`ProvenOptimum`] unless told otherwise: the
/// medium estates measured prove in a median 0.06–2 s and at most ~6 s
/// on this project's 2-core machines under load (`docs/quality.md`,
/// "Against a proven optimum"), so 30 s leaves room for estates several
/// times harder while a caller still gets an answer in a request's time.
pub const TIME_LIMIT_S: f64 = 30.0;

/// Points rounded to two decimals, for notes and reasons.
fn pts(x: f64) -> f64 {
    (x * 100.0).round() / 100.0
}

/// The proven reference as a decider (`proposal::Decider`): its
/// proposals are the moves to the solution in a certified order, so
/// `decider::score` accepts every one; its note says what HiGHS proved
/// ("proven optimal within 40 moves …" or "stopped early …, best bound
/// …"). Within `policy.max_moves` moved services, like the baseline, when
/// `capped`; without a cap otherwise.
pub struct ProvenOptimum<'a> {
    pub estate: &'a berth_engine::Estate,
    pub policy: &'a berth_engine::Policy,
    pub now: i64,
    pub capped: bool,
    pub time_limit_s: f64,
}

impl ProvenOptimum<'_> {
    fn cap(&self) -> usize {
        if self.capped {
            self.policy.max_moves
        } else {
            usize::MAX
        }
    }

    /// What the note says of the cap.
    fn within(&self) -> String {
        if self.capped {
            format!(" within {} moves", self.policy.max_moves)
        } else {
            String::new()
        }
    }
}

impl berth_engine::proposal::Decider for ProvenOptimum<'_> {
    fn name(&self) -> &str {
        if self.capped {
            "proven-optimum-capped"
        } else {
            "proven-optimum"
        }
    }

    fn decide(
        &self,
        request: &berth_engine::request::DeciderRequest,
    ) -> Vec<berth_engine::proposal::Proposal> {
        self.decide_noted(request).proposals
    }

    fn decide_noted(
        &self,
        _request: &berth_engine::request::DeciderRequest,
    ) -> berth_engine::proposal::Decision {
        use berth_engine::proposal::{Decision, Proposal};
        let ctx = Ctx::new(self.estate, self.policy, self.now);
        let out = match solve(
            &ctx,
            Limits {
                max_moves: self.cap(),
                time_limit_s: self.time_limit_s,
            },
        ) {
            Ok(out) => out,
            Err(e) => {
                return Decision {
                    proposals: Vec::new(),
                    note: Some(format!("not run: {e}")),
                }
            }
        };
        let within = self.within();
        let (order, unordered) = match &out.order {
            Ok(o) => (o.clone(), 0),
            Err(o) => {
                let all = out
                    .placement
                    .iter()
                    .zip(&self.estate.services)
                    .filter(|(&c, s)| c != s.cluster)
                    .count();
                (o.clone(), all - o.len())
            }
        };
        let mut note = match &out.status {
            Status::Optimal => format!(
                "proven optimal{within} by HiGHS in {:.2} s: {} → {} points",
                out.solve_s,
                pts(out.cost_before),
                pts(out.cost)
            ),
            Status::StoppedEarly(why) if out.bound.is_finite() => format!(
                "stopped early ({why}): best found{within} {} → {} points, not proven; no placement costs less than {} points (gap {} points)",
                pts(out.cost_before),
                pts(out.cost),
                pts(out.bound),
                pts(out.gap())
            ),
            // Stopped before the first relaxation was solved.
            Status::StoppedEarly(why) => format!(
                "stopped early ({why}): best found{within} {} → {} points, not proven; no bound proved yet",
                pts(out.cost_before),
                pts(out.cost)
            ),
        };
        if unordered > 0 {
            note.push_str(&format!(
                "; {unordered} of its moves have no certified order found after the first {}, so only those are proposed",
                order.len()
            ));
        }
        let what = if out.proven() {
            format!("the proven optimum{within} ({} points)", pts(out.cost))
        } else {
            format!(
                "the best placement found{within} ({} points, not proven)",
                pts(out.cost)
            )
        };
        let n = order.len();
        Decision {
            proposals: order
                .iter()
                .enumerate()
                .map(|(i, &(s, c))| Proposal {
                    service_id: self.estate.services[s].id.clone(),
                    to: self.estate.clusters[c].id.clone(),
                    reason: format!("move {} of {n} to {what}", i + 1),
                })
                .collect(),
            note: Some(note),
        }
    }
}
