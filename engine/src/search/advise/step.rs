//! One step of the sequential advice: the best single move from the
//! current placement, each service's prospects kept between steps so that
//! most candidates are never scored.

use super::*;

/// Per service, what [`best_move`] reads before looking at any candidate,
/// kept between steps: these change only when the service's flow gains
/// are refreshed or its cluster's load changes, and are recomputed then by
/// the same expressions (so to the same bits).
pub(super) struct Prospects {
    /// Copy points of moving it (≤ 0; the same for every destination).
    pub(super) copy: Vec<f64>,
    /// What leaving saves in headroom at its cluster: the best the
    /// headroom term can be (arriving can only cost).
    pub(super) leave: Vec<f64>,
    /// Both bars against its current cost.
    pub(super) bar: Vec<f64>,
    /// The most any of its moves could gain: best flow gain + leave + copy.
    pub(super) most: Vec<f64>,
    /// Per cluster, the services that started there (a service that moves
    /// is not considered again, so these are all that can be unmoved there).
    pub(super) on: Vec<Vec<usize>>,
    /// Per service, how far its cached flow costs may be off since its
    /// peers moved (0: fresh). A stale service's `bar` and `most` are
    /// bounds, and it is refreshed before anything reads its candidates:
    /// a hub with thousands of peers is refreshed when it could matter,
    /// not every time one of them moves.
    pub(super) slack: Vec<f64>,
}

impl Prospects {
    pub(super) fn new(ctx: &Ctx, state: &State, deltas: &Deltas) -> Prospects {
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

    pub(super) fn update(&mut self, ctx: &Ctx, state: &State, deltas: &Deltas, s: usize) {
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
    pub(super) fn loosen(&mut self, s: usize, slack: f64) {
        // A hair more than the sum, so rounding in it cannot make the
        // bound too tight (the flow costs it bounds are sums of the same
        // products in another order).
        self.slack[s] += slack * (1.0 + 1e-9) + 1e-12;
    }

    pub(super) fn is_stale(&self, s: usize) -> bool {
        self.slack[s] != 0.0
    }

    /// Bring `s`'s cache and bounds up to the current placement.
    pub(super) fn refresh(
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
    pub(super) fn refresh_all(
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
pub(super) fn rtt_shift(ctx: &Ctx, a: usize, b: usize) -> f64 {
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
pub(super) fn short_of(bound: f64, floor: f64) -> bool {
    bound < floor - 1e-9 * (1.0 + floor.abs())
}

/// The best feasible move that clears both bars, if any — the same move
/// as [`best_move_in_order`], found by looking at the services in order of
/// the most they could gain and stopping once that falls below the best
/// move found. Ties break on service id, then cluster id, as there.
#[allow(clippy::too_many_arguments)]
pub(super) fn best_move(
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
pub(super) struct Hope(f64, usize);

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
pub(super) fn consider(
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
pub(super) fn best_move_in_order(
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
