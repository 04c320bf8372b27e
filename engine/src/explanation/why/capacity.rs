//! Flip values of a free-capacity fact: the headroom curve has kinks and
//! fit is a step, so the range is cut into linear pieces and each piece is
//! solved in closed form.

use super::*;

/// Free capacity of cluster `k`: the headroom curve has kinks and fit is a
/// step, so the range is cut into pieces on which everything is linear,
/// walked outwards from the current value.
pub(super) fn analyse_capacity(sc: &Scene, id: FactId, k: usize) -> (Found, Found) {
    let ctx = sc.ctx;
    let p = ctx.policy;
    let c = &ctx.estate.clusters[k];
    let svc = &ctx.estate.services[sc.s];
    let Some(x0) = id.value(ctx) else {
        return (None, None);
    };
    let dest = sc.cands.iter().position(|&c| c == k);
    if k != sc.from && dest.is_none() {
        return (None, None);
    }
    // The requests are known: `explain_move` refuses a service whose
    // request is not, so `*_in_load` is the request itself here.
    let (cpu, memory_gib) = (svc.cpu_in_load(), svc.memory_in_load());
    let (size, need, res) = match id {
        FactId::Cpu(_) => (c.cpu_total, cpu, Capacity::Cpu),
        _ => (c.memory_total_gib, memory_gib, Capacity::Memory),
    };
    let in_of = |l: Load| match res {
        Capacity::Cpu => l.cpu_in,
        Capacity::Memory => l.memory_in,
    };
    let load = sc.state.load[k];
    let moved_in = in_of(load);
    // Loads at which the headroom of this resource is evaluated.
    let (l_lo, l_hi) = if k == sc.from {
        (moved_in - need, moved_in)
    } else {
        (moved_in, moved_in + need)
    };
    let kink = |m: f64| size * (1.0 - p.headroom_threshold) + m;
    let mut cuts = vec![kink(l_lo), kink(l_hi)];
    if dest.is_some() {
        let class = id
            .fact(ctx.estate)
            .map_or(Class::Guessed, |f| f.class_at(ctx.now, p));
        let margin = p.margin(class);
        if margin < 1.0 {
            cuts.push((need + moved_in) / (1.0 - margin));
        }
    }
    let cap = size.max(x0);
    cuts.retain(|&x| x.is_finite() && x > 0.0 && x < cap && x != x0);
    cuts.sort_by(f64::total_cmp);
    cuts.dedup();

    let with = |x: f64| match res {
        Capacity::Cpu => (Some(x), c.memory_free_gib.value),
        Capacity::Memory => (c.cpu_free.value, Some(x)),
    };
    let headroom_at = |l: Load, x: f64| {
        let (cpu, mem) = with(x);
        ctx.headroom_with(k, l, cpu, mem)
    };
    // d(headroom)/dx of this resource at load `m`, on the side of `mid`.
    let slope = |m: f64, mid: f64| {
        let u = (size - mid + m) / size;
        if u > p.headroom_threshold {
            -crate::cost::headroom_slope(p, size)
        } else {
            0.0
        }
    };
    let piece = |refx: f64, mid: f64| -> Piece {
        let mut g: Vec<Lin> = sc.g.iter().map(|&v| Lin::flat(v)).collect();
        let mut fit = sc.fit.clone();
        let mut cc = Lin::flat(sc.cc);
        if k == sc.from {
            let lf = sc.state.load[k];
            let without = Load {
                cpu_in: lf.cpu_in - cpu,
                memory_in: lf.memory_in - memory_gib,
            };
            let (h, h_after) = (headroom_at(lf, refx), headroom_at(without, refx));
            let leave = h - h_after;
            let (s_hi, s_lo) = (slope(l_hi, mid), slope(l_lo, mid));
            let d_leave = s_hi - s_lo;
            let m = s_hi.abs() + s_lo.abs();
            cc = Lin {
                v: sc.here + leave,
                d: d_leave,
                m,
            };
            let depart = h_after - h;
            for (kk, gk) in g.iter_mut().enumerate() {
                *gk = Lin {
                    v: sc.gain_of(kk, depart, sc.arrive[kk]),
                    d: d_leave,
                    m,
                };
            }
        } else if let Some(kk) = dest {
            let after = Load {
                cpu_in: load.cpu_in + cpu,
                memory_in: load.memory_in + memory_gib,
            };
            let arrive = headroom_at(after, refx) - headroom_at(load, refx);
            let depart = sc.h_from_after - sc.h_from;
            let (s_hi, s_lo) = (slope(l_hi, mid), slope(l_lo, mid));
            g[kk] = Lin {
                v: sc.gain_of(kk, depart, arrive),
                d: -(s_hi - s_lo),
                m: s_hi.abs() + s_lo.abs(),
            };
            fit[kk] = fits_with(ctx, k, load, cpu, memory_gib, Some((res, mid)));
        }
        Piece {
            refx,
            cc,
            g,
            fit,
            tie: 0.0,
        }
        .with_tie(refx == x0)
    };

    walk(sc, x0, cap, &cuts, piece)
}

/// The nearest flip above and below `x0`: the range `[0, cap]` walked
/// outwards from `x0` piece by piece between the `cuts` (sorted), each
/// piece linear (`piece(refx, mid)`) and solved in closed form.
fn walk(
    sc: &Scene,
    x0: f64,
    cap: f64,
    cuts: &[f64],
    piece: impl Fn(f64, f64) -> Piece,
) -> (Found, Found) {
    let mut above = None;
    if x0 < cap {
        let mut lo = x0;
        for hi in cuts
            .iter()
            .copied()
            .filter(|&x| x > x0)
            .chain(std::iter::once(cap))
        {
            // Values at the current value (exact: the engine's own
            // numbers), else inside the piece, away from its kinks.
            let mid = 0.5 * (lo + hi);
            let refx = if lo == x0 { x0 } else { mid };
            let span = Span {
                lo,
                hi,
                up: true,
                floor: false,
            };
            if let Some(f) = solve(sc, &piece(refx, mid), span) {
                // The range ends at the cluster's total: a flip only there
                // or beyond is no flip.
                if f.0 < cap {
                    above = Some(f);
                }
                break;
            }
            lo = hi;
        }
    }
    let mut below = None;
    if x0 > 0.0 {
        let mut hi = x0;
        for lo in cuts
            .iter()
            .rev()
            .copied()
            .filter(|&x| x < x0)
            .chain(std::iter::once(0.0))
        {
            let mid = 0.5 * (lo + hi);
            let refx = if hi == x0 { x0 } else { mid };
            let span = Span {
                lo,
                hi,
                up: false,
                floor: lo == 0.0,
            };
            if let Some(f) = solve(sc, &piece(refx, mid), span) {
                below = Some(f);
                break;
            }
            hi = lo;
        }
    }
    (above, below)
}

/// Certified fit of the service's requests on cluster `k` carrying `load`,
/// with one free-capacity value replaced: `constraints::fit(..) == Fits`
/// by the same rule (`constraints::resource_fit`).
pub(super) fn fits_with(
    ctx: &Ctx,
    k: usize,
    load: Load,
    cpu: f64,
    memory_gib: f64,
    ov: Option<(Capacity, f64)>,
) -> bool {
    let c = &ctx.estate.clusters[k];
    for (res, resource, fact, need, moved_in) in [
        (
            Capacity::Cpu,
            constraints::Resource::Cpu,
            &c.cpu_free,
            cpu,
            load.cpu_in,
        ),
        (
            Capacity::Memory,
            constraints::Resource::Memory,
            &c.memory_free_gib,
            memory_gib,
            load.memory_in,
        ),
    ] {
        let free = match ov {
            Some((r, x)) if r == res => x,
            _ => match fact.value {
                Some(v) => v,
                None => return false,
            },
        };
        let class = fact.class_at(ctx.now, ctx.policy);
        let verdict =
            constraints::resource_fit(ctx.policy, k, resource, free, class, need, moved_in);
        if !matches!(verdict, constraints::FitCode::Fits) {
            return false;
        }
    }
    true
}

/// Part of a fact's range searched in one direction: `[lo, hi]`, going up
/// from `lo` or down from `hi`. With `floor`, `lo` ends the fact's range
/// (0): a crossing only below it is none.
#[derive(Clone, Copy, Debug)]
pub(super) struct Span {
    pub(super) lo: f64,
    pub(super) hi: f64,
    pub(super) up: bool,
    pub(super) floor: bool,
}

impl Span {
    fn near(self) -> f64 {
        if self.up {
            self.lo
        } else {
            self.hi
        }
    }
}

/// The nearest point of the span where the decision stops being the
/// destination, and why.
///
/// The decision is the destination while it fits, its gain clears both
/// bars (`g ≥ fraction × cost`, `g ≥ points`) and is positive, and no
/// other fitting candidate has a larger gain (or an equal one and a lower
/// cluster id). Any rival that beats it also clears the bars, so rivals
/// need no bar check of their own.
pub(super) fn solve(sc: &Scene, piece: &Piece, span: Span) -> Found {
    let p = sc.ctx.policy;
    let b = sc.b;
    let gb = piece.g[b];
    let up = span.up;
    let mut best: Option<(f64, Cond, f64)> = None;
    let mut consider = |x: Option<f64>, cond: Cond, along: f64| {
        let Some(x) = x else { return };
        // Conditions met at the same point, up to rounding (an estimated
        // RTT equal to the same-cluster nominal ties several rivals, and
        // the bars, at once): just past it, a bar or fit that fails is
        // what certainly happens; among rivals, the steepest one leads.
        let replace = match best {
            None => true,
            Some((bx, bc, balong)) => {
                let nearer = if up { x < bx } else { x > bx };
                let rival = |c: Cond| matches!(c, Cond::Better(_));
                if (x - bx).abs() <= 1e-9 * x.abs().max(bx.abs()) {
                    match (rival(cond), rival(bc)) {
                        (true, true) => along > balong || (along == balong && nearer),
                        (false, true) => true,
                        (true, false) => false,
                        (false, false) => nearer,
                    }
                } else {
                    nearer
                }
            }
        };
        if replace {
            best = Some((x, cond, along));
        }
    };
    if !piece.fit[b] {
        consider(Some(span.near()), Cond::NoRoom, 0.0);
    }
    let frac = p.min_gain_fraction;
    let conds = [
        (
            Lin {
                v: frac * piece.cc.v - gb.v,
                d: frac * piece.cc.d - gb.d,
                m: frac * piece.cc.m + gb.m,
            },
            false,
            Cond::BarFraction,
        ),
        (
            Lin {
                v: p.min_gain_points - gb.v,
                d: -gb.d,
                m: gb.m,
            },
            false,
            Cond::BarPoints,
        ),
        (
            Lin {
                v: -gb.v,
                d: -gb.d,
                m: gb.m,
            },
            true,
            Cond::NoGain,
        ),
    ];
    for (h, inclusive, cond) in conds {
        consider(cross(h, piece, span, inclusive), cond, 0.0);
    }
    for (k, gk) in piece.g.iter().enumerate() {
        if k == b || !piece.fit[k] {
            continue;
        }
        let h = Lin {
            v: gk.v - gb.v,
            d: gk.d - gb.d,
            m: gk.m + gb.m,
        };
        // Candidates are in cluster order: a lower one wins a tie.
        let along = if up { h.d } else { -h.d };
        consider(cross(h, piece, span, k < b), Cond::Better(k), along);
    }
    best.map(|(x, c, _)| (x, c))
}

/// Where `h(x) = v + d (x − refx)` first satisfies `h > 0` (or `h ≥ 0`
/// when `inclusive`) in the span. `|h| ≤ piece.tie` counts as `h = 0`, and
/// a slope within rounding of the magnitudes behind it as 0.
///
/// By the slope along the way:
/// - flat: the piece flips as a whole or not at all, decided by `v` at
///   the reference point (inside the piece, away from kinks, where exact
///   ties — same site, no headroom — are exact in floating point too);
/// - falling: only if `h` is already clearly positive at the near end;
/// - rising: at the root (closed form). A root within rounding of the far
///   end is left to the next piece, which decides at its own near end; at
///   the floor, the condition is tested at 0 itself (a flow of weight 0
///   contributes nothing, so exact ties there are common).
pub(super) fn cross(h: Lin, piece: &Piece, span: Span, inclusive: bool) -> Option<f64> {
    let Span { lo, hi, up, floor } = span;
    let (refx, tie) = (piece.refx, piece.tie);
    let d = if h.d.abs() <= 1e-12 * h.m { 0.0 } else { h.d };
    let at = |x: f64| if x == refx { h.v } else { h.v + d * (x - refx) };
    let near = span.near();
    let along = if up { d } else { -d };
    if along == 0.0 {
        let v = if h.v.abs() <= tie { 0.0 } else { h.v };
        return (v > 0.0 || (v == 0.0 && inclusive)).then_some(near);
    }
    if along < 0.0 {
        let hn = at(near);
        let tol = 1e-9 * (h.v.abs() + (d * (near - refx)).abs()) + tie;
        return (hn > tol).then_some(near);
    }
    let r = refx - h.v / d;
    let far = if up { hi } else { lo };
    if !far.is_finite() {
        return Some(r.max(lo));
    }
    let tol = 1e-9 * far.abs().max(refx.abs());
    if up {
        return (r < hi - tol).then(|| r.max(lo));
    }
    if r > lo + tol {
        return Some(r.min(hi));
    }
    if !floor {
        return None;
    }
    // Only the end of the range itself can flip: if the condition holds
    // there, up to rounding of the extrapolation.
    let h0 = at(lo);
    let tol0 = 1e-9 * (h.v.abs() + (d * (lo - refx)).abs());
    let holds = h0 > tol0 || (h0.abs() <= tol0 && inclusive);
    holds.then_some(lo)
}
