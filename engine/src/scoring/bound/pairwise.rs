//! The pairwise relaxation of the bound (`docs/advice.md` §6a, "Pairs"):
//! the dual of the LP relaxation of the linearisation with pair variables
//! (`z[a,b]` per pair of services with flows between them, whose row and
//! column sums are the two services' choices), raised by block coordinate
//! ascent (MPLP, Globerson & Jaakkola 2007).
//!
//! The cost of a placement `x` of the movable services is
//! `K + Σ_s θ_s(x_s) + Σ_e θ_e(x_u, x_v)`: a constant, one cost per
//! service and choice, one per pair of services and pair of choices. For
//! *any* messages `λ_{e→s}(k)`, `cost(x) = K + Σ_s S_s(x_s) + Σ_e R_e(x_u,
//! x_v)` with `S_s = θ_s + Σ_{e∋s} λ_{e→s}` and `R_e = θ_e − λ_{e→u} −
//! λ_{e→v}`, an identity; so `K + Σ_s min S_s + Σ_e min R_e` is below
//! every placement's cost, whatever the messages are. The ascent only
//! chooses messages that make it high; the number returned is that sum,
//! recomputed from the messages at the end, so it is a bound however far
//! the ascent got.
//!
//! What couples services through a cluster enters as prices (a
//! Lagrangian relaxation), each of which keeps the sum a bound:
//!
//! - **headroom**: per cluster and resource, `max(0, A + B·L) ≥
//!   t·(A + B·L)` for any `t ∈ [0, 1]`, with `L` the load moved in,
//!   itself `L_min + Σ r_s` over the movable services ending there
//!   (`L_min`: every movable one gone): a constant plus `t·B` per unit of
//!   each service's request, charged where it ends;
//! - **capacity**: a receiving cluster certifies `L ≤ room`, one that
//!   receives nothing has `L ≤ 0 ≤ room`; so `ν·(L − room) ≤ 0` for any
//!   `ν ≥ 0` may be added: a constant plus `ν` per unit of request;
//! - **the move cap**: with `μ ≥ 0`, `μ·(moved(x) − cap) ≤ 0` for every
//!   `x` within the cap: `μ` on every choice away from home, `μ·cap` off
//!   the constant.
//!
//! `t = 1` past the threshold and `0` below it, `ν = μ = 0` reproduce the
//! per-term bound's tangents; the prices are then moved by projected
//! subgradient steps (Polyak's step towards a known cost, the advice's)
//! from the placement the relaxation leans to, the ascent re-run warm after
//! each, and the best bound met is kept.
//!
//! Pure and deterministic: every loop runs in index order, the work is a
//! count (cells × sweeps), and only `+`, `−`, `×`, `min` are used, so the
//! figures are byte-identical natively and in WebAssembly.

use super::Table;
use crate::cost::{headroom_slope, Ctx};

/// Most cells (a service's choices, a pair's pairs of choices) the
/// relaxation is built for. 300,000 `f64`s of costs and as many of
/// messages are ~5 MB, affordable next to an estate of that size in the
/// browser; a 150-service, 12-cluster estate needs ~10⁵. Larger estates
/// keep the per-term bound (`cost_at_least`'s other parts).
pub(super) const MAX_CELLS: usize = 300_000;

/// Cell updates the ascent may do in all (cells × sweeps): ~30 ms of one
/// core natively (an edge update is a handful of flops per cell), the
/// order of `advise`'s own time on the estates it runs on. Half goes to
/// the first ascent; the move-cap price search shares the rest.
pub(super) const WORK: usize = 30_000_000;

/// Rounds of price steps. The bound rises fastest in the first ten; past
/// 40 the steps have shrunk below what moves the shown share on the
/// estates measured (`docs/advice.md` §6a).
const PRICE_ROUNDS: usize = 40;

/// Sweeps at least per round of prices: a warm start needs few.
const ROUND_SWEEPS: usize = 3;

/// Tolerance added to a cluster's certified room (cores / GiB): the
/// capacity check certifies within rounding, so the price must not charge
/// for it (as `CAP_TOL` of the domains, with room to spare).
const ROOM_TOL: f64 = 1e-6;

/// Sweeps at least and at most. The ascent gains most in its first tens
/// of sweeps; past 2,000 a sweep on these sizes gains nothing measurable.
const MIN_SWEEPS: usize = 20;
const MAX_SWEEPS: usize = 2_000;

/// The ascent stops early once a sweep raises the running bound by less
/// than this share of its magnitude: it has converged to a fixed point of
/// the coordinate ascent (the figures shown are rounded to 0.1 %).
const CONVERGED: f64 = 1e-7;

/// A pair of movable services with flows between them.
struct Edge {
    /// Compact indices of the two services, `u < v`.
    u: usize,
    v: usize,
    /// `θ_e(a, b)` by choice of `u` × choice of `v`, row-major.
    cost: Vec<f64>,
    /// Offsets of `λ_{e→u}` and `λ_{e→v}` in the message store.
    mu: usize,
    mv: usize,
}

/// One resource of one cluster: its headroom `max(0, a + b·L)` (absent:
/// `b` = 0, `a` = 0) and its certified room, and their prices.
struct Piece {
    cluster: usize,
    cpu: bool,
    a: f64,
    b: f64,
    /// `L_min`: the load moved in with every movable service gone (≤ 0).
    least: f64,
    /// Certified room plus tolerance; `None`: nothing can arrive.
    room: Option<f64>,
    /// Price of headroom, in `[0, 1]`, and of capacity (≥ 0, points per
    /// unit of request).
    t: f64,
    nu: f64,
}

/// The relaxation of one estate, built once.
pub(super) struct Pairwise {
    /// Per movable service (compact index): its clusters, home first.
    dom: Vec<Vec<usize>>,
    /// `θ_s(k)` without prices (copy, flows to itself and fixed peers).
    unary: Vec<Vec<f64>>,
    /// Each movable service's CPU and memory request.
    load: Vec<(f64, f64)>,
    pieces: Vec<Piece>,
    /// Per cluster: the price per core and per GiB ending there.
    price: Vec<(f64, f64)>,
    /// The move cap's price.
    mu: f64,
    edges: Vec<Edge>,
    /// Every message, edge by edge.
    msg: Vec<f64>,
    /// Per service: its edges (index, offset of its message), in edge order.
    incident: Vec<Vec<(usize, usize)>>,
    cells: usize,
}

/// What the caller knows already: each service's reachable clusters, who
/// can move, where each is, and each cluster's certified room.
pub(super) struct Inputs<'a> {
    pub dom: &'a Table,
    pub movable: &'a [bool],
    pub home: &'a [usize],
    pub room: &'a [Option<(f64, f64)>],
}

/// θ_s of one movable service `s` over its choices `d` (home first): the
/// copy away from home, and the cost of its flows to itself and to
/// services that stay.
fn unary_costs(ctx: &Ctx, inp: &Inputs, s: usize, d: &[usize]) -> Vec<f64> {
    let estate = ctx.estate;
    let copy = ctx.copy_points(s);
    d.iter()
        .enumerate()
        .map(|(k, &c)| {
            let mut cost = if k == 0 { 0.0 } else { copy };
            let mut last_self = None;
            for &(f, peer) in &ctx.adjacency[s] {
                let fl = &estate.flows[f];
                let (rt, xs) = if peer == s {
                    // A flow to itself is listed twice (once
                    // per end, one after the other): once.
                    if last_self == Some(f) {
                        continue;
                    }
                    last_self = Some(f);
                    ctx.flow_cost(f, c, c)
                } else if inp.movable[peer] {
                    continue;
                } else if fl.from == s {
                    ctx.flow_cost(f, c, inp.home[peer])
                } else {
                    ctx.flow_cost(f, inp.home[peer], c)
                };
                cost += rt + xs;
            }
            cost
        })
        .collect()
}

impl Pairwise {
    /// The relaxation's costs, or `None` when it has more than
    /// [`MAX_CELLS`] cells or the headroom is not piecewise linear
    /// (threshold ≥ 1, a cluster of no size).
    pub(super) fn build(ctx: &Ctx, inp: &Inputs) -> Option<Pairwise> {
        let estate = ctx.estate;
        let nc = estate.clusters.len();
        let n = inp.movable.len();
        let mut index = vec![usize::MAX; n];
        let mut services = Vec::new();
        for s in (0..n).filter(|&s| inp.movable[s]) {
            index[s] = services.len();
            services.push(s);
        }
        // Cells first, from the domains' sizes (the home is in each row),
        // so that a large estate costs one pass over its flows.
        let size: Vec<usize> = services
            .iter()
            .map(|&s| {
                inp.dom
                    .row(s)
                    .0
                    .iter()
                    .map(|w| w.count_ones() as usize)
                    .sum()
            })
            .collect();
        // Pairs with flows between them, flows grouped per pair.
        let mut pair_flows: Vec<(usize, usize, usize)> = estate
            .flows
            .iter()
            .enumerate()
            .filter(|(_, fl)| fl.from != fl.to && inp.movable[fl.from] && inp.movable[fl.to])
            .map(|(f, fl)| {
                let (a, b) = (index[fl.from], index[fl.to]);
                (a.min(b), a.max(b), f)
            })
            .collect();
        pair_flows.sort_unstable();
        let mut cells: usize = size.iter().sum();
        let mut last = None;
        for &(u, v, _) in &pair_flows {
            if last != Some((u, v)) {
                cells = cells.saturating_add(size[u].saturating_mul(size[v]));
                last = Some((u, v));
            }
            if cells > MAX_CELLS {
                return None;
            }
        }
        if cells > MAX_CELLS {
            return None;
        }
        // Choices, home first, then the domain in cluster order.
        let dom: Vec<Vec<usize>> = services
            .iter()
            .map(|&s| {
                let row = inp.dom.row(s);
                std::iter::once(inp.home[s])
                    .chain((0..nc).filter(|&c| c != inp.home[s] && row.contains(c)))
                    .collect()
            })
            .collect();
        debug_assert!(dom.iter().zip(&size).all(|(d, &n)| d.len() == n));

        let pieces = pieces(ctx, inp)?;
        let load: Vec<(f64, f64)> = services
            .iter()
            .map(|&s| {
                let svc = &estate.services[s];
                (svc.cpu_in_load(), svc.memory_in_load())
            })
            .collect();

        // θ_s: copy away from home, flows to itself and to services that
        // stay.
        let unary: Vec<Vec<f64>> = services
            .iter()
            .zip(&dom)
            .map(|(&s, d)| unary_costs(ctx, inp, s, d))
            .collect();

        // θ_e: the flows of each pair, in their own direction.
        let mut edges: Vec<Edge> = Vec::new();
        let mut offset = 0;
        for &(u, v, f) in &pair_flows {
            if edges.last().is_none_or(|e| (e.u, e.v) != (u, v)) {
                let (du, dv) = (dom[u].len(), dom[v].len());
                edges.push(Edge {
                    u,
                    v,
                    cost: vec![0.0; du * dv],
                    mu: offset,
                    mv: offset + du,
                });
                offset += du + dv;
            }
            let e = edges.last_mut().expect("pushed above");
            let forward = index[estate.flows[f].from] == u;
            let dv = dom[v].len();
            for (ka, &a) in dom[u].iter().enumerate() {
                for (kb, &b) in dom[v].iter().enumerate() {
                    let (rt, xs) = if forward {
                        ctx.flow_cost(f, a, b)
                    } else {
                        ctx.flow_cost(f, b, a)
                    };
                    e.cost[ka * dv + kb] += rt + xs;
                }
            }
        }
        let mut incident = vec![Vec::new(); services.len()];
        for (i, e) in edges.iter().enumerate() {
            incident[e.u].push((i, e.mu));
            incident[e.v].push((i, e.mv));
        }
        let mut pw = Pairwise {
            dom,
            unary,
            load,
            pieces,
            price: vec![(0.0, 0.0); nc],
            mu: 0.0,
            edges,
            msg: vec![0.0; offset],
            incident,
            cells,
        };
        pw.set_prices();
        Some(pw)
    }

    /// Each cluster's price per unit of request from its pieces' `t`, `ν`.
    fn set_prices(&mut self) {
        for p in &mut self.price {
            *p = (0.0, 0.0);
        }
        for q in &self.pieces {
            let add = q.t * q.b + q.nu;
            let p = &mut self.price[q.cluster];
            if q.cpu {
                p.0 += add;
            } else {
                p.1 += add;
            }
        }
    }

    /// The prices' constant: `Σ t·(a + b·L_min) + ν·(L_min − room) −
    /// μ·cap`, and its magnitude.
    fn price_constant(&self, cap: f64) -> (f64, f64) {
        let (mut k, mut m) = (0.0, 0.0);
        for q in &self.pieces {
            let h = q.t * (q.a + q.b * q.least);
            let c = q.room.map_or(0.0, |r| q.nu * (q.least - r));
            k += h + c;
            m += h.abs() + c.abs();
        }
        let taken = if cap.is_finite() { self.mu * cap } else { 0.0 };
        (k - taken, m + taken)
    }

    /// Services with a choice.
    pub(super) fn movable(&self) -> usize {
        self.dom.len()
    }

    /// `θ_s(k)` with the prices as they are.
    fn priced(&self, s: usize, k: usize) -> f64 {
        let c = self.dom[s][k];
        let (rc, rm) = self.load[s];
        let (pc, pm) = self.price[c];
        let mut t = self.unary[s][k] + rc * pc + rm * pm;
        if k != 0 {
            t += self.mu;
        }
        t
    }

    /// `S_s` of every service with the prices as they are, from the
    /// messages as they are.
    fn beliefs(&self) -> Vec<Vec<f64>> {
        self.incident
            .iter()
            .enumerate()
            .map(|(s, inc)| {
                (0..self.dom[s].len())
                    .map(|k| {
                        let mut b = self.priced(s, k);
                        for &(_, off) in inc {
                            b += self.msg[off + k];
                        }
                        b
                    })
                    .collect()
            })
            .collect()
    }

    /// Raise the bound at the prices as they are by sweeps of MPLP edge
    /// updates, in edge order, from the messages as they are (so a second
    /// call warm-starts). At most `budget` cell updates, at least
    /// `min_sweeps` sweeps.
    fn ascend(&mut self, budget: usize, min_sweeps: usize) {
        if self.edges.is_empty() {
            return;
        }
        let sweeps = (budget / self.cells.max(1)).clamp(min_sweeps, MAX_SWEEPS);
        let mut belief = self.beliefs();
        let running = |belief: &[Vec<f64>]| -> f64 {
            belief
                .iter()
                .map(|b| b.iter().copied().fold(f64::INFINITY, f64::min))
                .sum()
        };
        let mut before = running(&belief);
        let mut a_buf = Vec::new();
        let mut b_buf = Vec::new();
        let mut row_min = Vec::new();
        let mut col_min = Vec::new();
        for _ in 0..sweeps {
            for e in &self.edges {
                let (du, dv) = (self.dom[e.u].len(), self.dom[e.v].len());
                // θ^{-e}: each end's belief without this edge's message.
                a_buf.clear();
                a_buf.extend((0..du).map(|k| belief[e.u][k] - self.msg[e.mu + k]));
                b_buf.clear();
                b_buf.extend((0..dv).map(|k| belief[e.v][k] - self.msg[e.mv + k]));
                row_min.clear();
                row_min.resize(du, f64::INFINITY);
                col_min.clear();
                col_min.resize(dv, f64::INFINITY);
                for ka in 0..du {
                    let row = &e.cost[ka * dv..(ka + 1) * dv];
                    let mut rm = f64::INFINITY;
                    for kb in 0..dv {
                        let c = row[kb];
                        rm = rm.min(c + b_buf[kb]);
                        col_min[kb] = col_min[kb].min(c + a_buf[ka]);
                    }
                    row_min[ka] = rm;
                }
                // λ_{e→u}(a) = −½ θ_u^{-e}(a) + ½ min_b [θ_e(a,b) + θ_v^{-e}(b)].
                for ka in 0..du {
                    let m = 0.5 * row_min[ka] - 0.5 * a_buf[ka];
                    self.msg[e.mu + ka] = m;
                    belief[e.u][ka] = a_buf[ka] + m;
                }
                for kb in 0..dv {
                    let m = 0.5 * col_min[kb] - 0.5 * b_buf[kb];
                    self.msg[e.mv + kb] = m;
                    belief[e.v][kb] = b_buf[kb] + m;
                }
            }
            let now = running(&belief);
            if now - before <= CONVERGED * (1.0 + now.abs()) {
                break;
            }
            before = now;
        }
    }

    /// The bound at the prices as they are and move cap `cap` (∞: none),
    /// recomputed from the messages (not from the ascent's running sums):
    /// `Σ_s min S_s + Σ_e min R_e` + the prices' constant, and the
    /// magnitude of the terms summed, for the rounding slack.
    fn value(&self, cap: f64) -> (f64, f64) {
        let belief = self.beliefs();
        let (mut total, mut magnitude) = self.price_constant(cap);
        for (s, (b, inc)) in belief.iter().zip(&self.incident).enumerate() {
            total += b.iter().copied().fold(f64::INFINITY, f64::min);
            // Every term that entered a belief, at its largest.
            let most = (0..b.len())
                .map(|k| {
                    let (rc, rm) = self.load[s];
                    let (pc, pm) = self.price[self.dom[s][k]];
                    self.unary[s][k].abs()
                        + (rc * pc).abs()
                        + (rm * pm).abs()
                        + self.mu
                        + inc
                            .iter()
                            .map(|&(_, off)| self.msg[off + k].abs())
                            .sum::<f64>()
                })
                .fold(0.0, f64::max);
            magnitude += most;
        }
        for e in &self.edges {
            let dv = self.dom[e.v].len();
            let mut least = f64::INFINITY;
            let mut most = 0.0f64;
            for (ka, row) in e.cost.chunks(dv).enumerate() {
                let mu = self.msg[e.mu + ka];
                for (kb, &c) in row.iter().enumerate() {
                    let mv = self.msg[e.mv + kb];
                    least = least.min(c - mu - mv);
                    most = most.max(c.abs() + mu.abs() + mv.abs());
                }
            }
            total += least;
            magnitude += most;
        }
        (total, magnitude)
    }

    /// The best bound the ascent and the price steps reach within the
    /// move cap `max_moves`, given `upper`, the cost of some placement
    /// within the cap (the target of Polyak's step): `(value, magnitude)`.
    pub(super) fn solve(&mut self, max_moves: usize, upper: f64) -> (f64, f64) {
        let capped = max_moves < self.movable();
        let cap = if capped {
            max_moves as f64
        } else {
            f64::INFINITY
        };
        self.ascend(WORK / 4, MIN_SWEEPS);
        let mut best = self.value(cap);
        let per_round = (WORK - WORK / 4) / PRICE_ROUNDS;
        // Polyak's step is scaled by `gamma`, halved after rounds that do
        // not raise the best bound (the usual safeguard when the target is
        // above the dual's optimum).
        let mut gamma = 1.0;
        let mut current = best.0;
        for _ in 0..PRICE_ROUNDS {
            let Some((grad_t, grad_nu, grad_mu)) = self.subgradient(max_moves, capped) else {
                break;
            };
            let norm: f64 =
                grad_t.iter().chain(&grad_nu).map(|g| g * g).sum::<f64>() + grad_mu * grad_mu;
            if norm <= 0.0 || upper <= current {
                break;
            }
            let step = gamma * (upper - current) / norm;
            for (q, (gt, gn)) in self.pieces.iter_mut().zip(grad_t.iter().zip(&grad_nu)) {
                q.t = (q.t + step * gt).clamp(0.0, 1.0);
                q.nu = (q.nu + step * gn).max(0.0);
            }
            self.mu = (self.mu + step * grad_mu).max(0.0);
            self.set_prices();
            self.ascend(per_round, ROUND_SWEEPS);
            let v = self.value(cap);
            current = v.0;
            if v.0 > best.0 {
                best = v;
            } else {
                gamma *= 0.5;
            }
        }
        best
    }

    /// The subgradient of the bound in the prices at the placement the
    /// relaxation leans to (each service at its cheapest belief): per
    /// piece `a + b·L` and `L − room`, and `moved − cap`; `None` when no
    /// price can move (all at a bound with the gradient pointing out).
    fn subgradient(&self, max_moves: usize, capped: bool) -> Option<(Vec<f64>, Vec<f64>, f64)> {
        let belief = self.beliefs();
        let nc = self.price.len();
        let mut l = vec![(0.0f64, 0.0f64); nc];
        let mut moved = 0usize;
        for (s, b) in belief.iter().enumerate() {
            let mut k = 0;
            for (j, &x) in b.iter().enumerate() {
                if x < b[k] {
                    k = j;
                }
            }
            if k != 0 {
                moved += 1;
            }
            let c = self.dom[s][k];
            l[c].0 += self.load[s].0;
            l[c].1 += self.load[s].1;
        }
        let mut any = false;
        let mut gt = Vec::with_capacity(self.pieces.len());
        let mut gn = Vec::with_capacity(self.pieces.len());
        for q in &self.pieces {
            let arriving = if q.cpu {
                l[q.cluster].0
            } else {
                l[q.cluster].1
            };
            let load = q.least + arriving;
            let mut g = q.a + q.b * load;
            if (q.t >= 1.0 && g > 0.0) || (q.t <= 0.0 && g < 0.0) {
                g = 0.0;
            }
            let mut h = q.room.map_or(0.0, |r| load - r);
            if q.nu <= 0.0 && h < 0.0 {
                h = 0.0;
            }
            any |= g != 0.0 || h != 0.0;
            gt.push(g);
            gn.push(h);
        }
        let mut gm = if capped {
            moved as f64 - max_moves as f64
        } else {
            0.0
        };
        if self.mu <= 0.0 && gm < 0.0 {
            gm = 0.0;
        }
        any |= gm != 0.0;
        any.then_some((gt, gn, gm))
    }
}

/// The headroom and room of every cluster and resource of known free
/// capacity, with the starting prices of the per-term bound's tangents
/// (`t` = 1 where the headroom is past its threshold at some reachable
/// load, else 0). `None` when the headroom is not piecewise linear.
fn pieces(ctx: &Ctx, inp: &Inputs) -> Option<Vec<Piece>> {
    let estate = ctx.estate;
    let p = ctx.policy;
    let nc = estate.clusters.len();
    let mut least = vec![(0.0f64, 0.0f64); nc];
    for s in (0..inp.movable.len()).filter(|&s| inp.movable[s]) {
        let svc = &estate.services[s];
        least[inp.home[s]].0 -= svc.cpu_in_load();
        least[inp.home[s]].1 -= svc.memory_in_load();
    }
    let theta = p.headroom_threshold;
    let mut out = Vec::new();
    for (c, cl) in estate.clusters.iter().enumerate() {
        for cpu in [true, false] {
            let (free, size, lmin) = if cpu {
                (cl.cpu_free.value, cl.cpu_total, least[c].0)
            } else {
                (cl.memory_free_gib.value, cl.memory_total_gib, least[c].1)
            };
            let Some(free) = free else {
                // Unknown free capacity: no headroom, and nothing arrives.
                continue;
            };
            let (a, b) = if p.headroom_weight == 0.0 {
                (0.0, 0.0)
            } else {
                if theta >= 1.0 || size <= 0.0 {
                    return None;
                }
                // w·(u − θ)/(1 − θ) with u = (size − free + L)/size.
                let b = headroom_slope(p, size);
                (headroom_points_linear(p, (size - free) / size), b)
            };
            let room = inp.room[c].map(|(rc, rm)| {
                let r = if cpu { rc } else { rm };
                r.max(0.0) + ROOM_TOL * (1.0 + r.abs())
            });
            let t = if a > 0.0 || a + b * lmin >= 0.0 && b > 0.0 {
                1.0
            } else {
                0.0
            };
            out.push(Piece {
                cluster: c,
                cpu,
                a,
                b,
                least: lmin,
                room,
                t,
                nu: 0.0,
            });
        }
    }
    Some(out)
}

/// `headroom_weight × (u − threshold) / (1 − threshold)` without the
/// `max(0, ·)`: the line of which the headroom is the positive part.
fn headroom_points_linear(p: &crate::policy::Policy, u: f64) -> f64 {
    p.headroom_weight * (u - p.headroom_threshold) / (1.0 - p.headroom_threshold)
}
