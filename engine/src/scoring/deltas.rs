//! The recommender's cache of flow gains: for every movable service, the
//! round-trip and cross-site points it would save by moving to each of its
//! candidate clusters, everyone else where they are (`docs/advice.md`,
//! "Candidates that share their numbers").
//!
//! A service's flow cost at a cluster `c` depends on `c` only through the
//! RTT from `c` to each peer's cluster and whether the two are on one site.
//! For most clusters that RTT is the *site-level* rung of the ladder (a
//! link, same site, great circle, unknown): it is the same number for every
//! cluster of `c`'s site. Only two kinds of cluster see anything else, and
//! only these are *distinct* for the service:
//!
//! - a cluster where a peer runs (the same-cluster rung), and
//! - a cluster with a measured path to a peer's cluster.
//!
//! Every other candidate of a site — a *plain* one — has exactly the flow
//! gain of any other plain candidate of that site: the same products of the
//! same numbers summed in the same order, so equal to the last bit. The
//! cache therefore keeps one pair per site the service has plain candidates
//! in, plus one per distinct candidate, instead of one per candidate. At
//! 50,000 services × 400 clusters on 20 sites that is about 40 entries per
//! service in place of 400, and a tenth of the flow arithmetic.
//!
//! [`Deltas::exhaustive`] treats every candidate as distinct: the plain
//! per-candidate cache, kept as the reference the property tests compare
//! the shared one against (identical advice, bit for bit).

use crate::candidates::Cands;
use crate::cost::{Ctx, State, Terms};

pub(crate) struct Deltas {
    /// Every candidate computed on its own (the reference).
    exhaustive: bool,
    /// Per cluster, the clusters whose RTT to it is a measured path, in
    /// index order: where a path breaks the site-level rung.
    path_partners: Vec<Vec<usize>>,
    /// Per service: `(site, round trip, cross-site)` gains of moving to a
    /// plain candidate of that site, in site order.
    site: Vec<Vec<(usize, f64, f64)>>,
    /// Per service: `(cluster, round trip, cross-site)` gains of moving to
    /// each distinct candidate, in cluster order.
    distinct: Vec<Vec<(usize, f64, f64)>>,
    /// Per service: round-trip + cross-site points of its flows where it
    /// is (the flow part of its current cost).
    pub here: Vec<f64>,
    /// Per service: the largest gain over its candidates, so a whole
    /// service can be skipped when even that cannot beat the bar.
    pub best_flows: Vec<f64>,
    /// Scratch for `refresh`: clusters marked distinct (by stamp), sites
    /// marked as holding a plain candidate.
    mark: Vec<usize>,
    site_mark: Vec<usize>,
    stamp: usize,
    /// Scratch for `refresh`: the refreshed service's flows.
    flows: Vec<Flow>,
}

impl Deltas {
    /// The shared cache (what advice uses).
    pub fn new(ctx: &Ctx) -> Deltas {
        Deltas::build(ctx, false)
    }

    /// Every candidate on its own: the reference for the tests.
    pub fn exhaustive(ctx: &Ctx) -> Deltas {
        Deltas::build(ctx, true)
    }

    fn build(ctx: &Ctx, exhaustive: bool) -> Deltas {
        let estate = ctx.estate;
        let nc = estate.clusters.len();
        let mut path_partners = vec![Vec::new(); nc];
        for p in estate.paths.iter().filter(|p| p.rtt_ms.value.is_some()) {
            path_partners[p.a].push(p.b);
            path_partners[p.b].push(p.a);
        }
        for v in &mut path_partners {
            v.sort_unstable();
            v.dedup();
        }
        let n = estate.services.len();
        Deltas {
            exhaustive,
            path_partners,
            site: vec![Vec::new(); n],
            distinct: vec![Vec::new(); n],
            here: vec![0.0; n],
            best_flows: vec![f64::NEG_INFINITY; n],
            mark: vec![0; nc],
            site_mark: vec![0; estate.sites.len()],
            stamp: 0,
            flows: Vec::new(),
        }
    }

    /// The round-trip and cross-site gain of moving `s` to its candidate
    /// `c`, from the cache (valid while `s` has not moved and since its
    /// last refresh).
    #[inline]
    pub fn get(&self, ctx: &Ctx, s: usize, c: usize) -> (f64, f64) {
        let d = &self.distinct[s];
        if let Ok(i) = d.binary_search_by_key(&c, |e| e.0) {
            return (d[i].1, d[i].2);
        }
        let site = ctx.site_of[c];
        let v = &self.site[s];
        let i = v
            .binary_search_by_key(&site, |e| e.0)
            .expect("a plain candidate's site is cached");
        (v[i].1, v[i].2)
    }

    /// Every candidate of `s` with its round-trip and cross-site gain, in
    /// cluster order: [`Deltas::get`] for all of them in one walk.
    /// `by_site` is scratch of one slot per site.
    pub fn each<'a>(
        &'a self,
        ctx: &'a Ctx,
        s: usize,
        candidates: Cands<'a>,
        by_site: &'a mut [(f64, f64)],
    ) -> impl Iterator<Item = (usize, f64, f64)> + 'a {
        for &(site, r, x) in &self.site[s] {
            by_site[site] = (r, x);
        }
        let by_site = &*by_site;
        let mut distinct = self.distinct[s].iter().peekable();
        candidates.into_iter().map(move |c| {
            if let Some(&&(d, r, x)) = distinct.peek() {
                if d == c {
                    distinct.next();
                    return (c, r, x);
                }
            }
            let (r, x) = by_site[ctx.site_of[c]];
            (c, r, x)
        })
    }

    /// The terms of moving `s` to `c` given its cached flow gains: the
    /// same numbers `cost::move_terms` computes from scratch.
    pub fn terms(
        ctx: &Ctx,
        state: &State,
        s: usize,
        c: usize,
        flows: (f64, f64),
        copy: f64,
    ) -> Terms {
        Terms {
            round_trip: flows.0,
            cross_site: flows.1,
            headroom: crate::cost::headroom_term(ctx, state, s, c),
            copy,
        }
    }

    /// Recompute `s`'s entries from the current placement.
    pub fn refresh(&mut self, ctx: &Ctx, state: &State, candidates: Cands, s: usize) {
        // Each flow's factors once, from the formulas `flow_cost` itself
        // multiplies (`cost::round_trip_per_ms` × ms, and
        // `cost::cross_site_points`), so taking them here changes no bit.
        self.flows.clear();
        self.flows.extend(ctx.adjacency[s].iter().map(|&(f, peer)| {
            let pc = state.placement[peer];
            Flow {
                rt_weight: ctx.round_trip_per_ms(f),
                xs_points: ctx.cross_site_points(f),
                cluster: pc,
                site: ctx.site_of[pc],
            }
        }));
        let flows = &self.flows;
        let (rt0, xs0) = sum_at(ctx, flows, state.placement[s]);
        debug_assert_eq!((rt0, xs0), state.flow_cost_at(ctx, s, state.placement[s]));
        self.here[s] = rt0 + xs0;
        self.stamp += 1;
        let stamp = self.stamp;
        if !self.exhaustive {
            for f in flows {
                self.mark[f.cluster] = stamp;
                for &d in &self.path_partners[f.cluster] {
                    self.mark[d] = stamp;
                }
            }
        }
        let mut best = f64::NEG_INFINITY;
        let distinct = &mut self.distinct[s];
        let site = &mut self.site[s];
        distinct.clear();
        site.clear();
        for c in candidates {
            if self.exhaustive || self.mark[c] == stamp {
                let (rt1, xs1) = sum_at(ctx, flows, c);
                let (r, x) = (rt0 - rt1, xs0 - xs1);
                best = best.max(r + x);
                distinct.push((c, r, x));
            } else {
                let sc = ctx.site_of[c];
                if self.site_mark[sc] != stamp {
                    self.site_mark[sc] = stamp;
                    site.push((sc, 0.0, 0.0));
                }
            }
        }
        site.sort_unstable_by_key(|e| e.0);
        for e in site.iter_mut() {
            let (rt1, xs1) = sum_at_site(ctx, flows, e.0);
            let (r, x) = (rt0 - rt1, xs0 - xs1);
            best = best.max(r + x);
            (e.1, e.2) = (r, x);
        }
        self.best_flows[s] = best;
    }
}

/// One flow of the service being refreshed, with its peer's placement.
struct Flow {
    rt_weight: f64,
    xs_points: f64,
    cluster: usize,
    site: usize,
}

/// `State::flow_cost_at` at cluster `at`: the same products summed in the
/// same (adjacency) order, so the same bits.
#[inline]
fn sum_at(ctx: &Ctx, flows: &[Flow], at: usize) -> (f64, f64) {
    let ms = ctx.rtt.ms_from(at);
    let site = ctx.site_of[at];
    let (mut rt, mut xs) = (0.0, 0.0);
    for f in flows {
        rt += f.rt_weight * ms[f.cluster];
        xs += if f.site != site { f.xs_points } else { 0.0 };
    }
    (rt, xs)
}

/// [`sum_at`] for any plain cluster of `site`, with the site-level RTT
/// each such cluster's table cell holds.
#[inline]
fn sum_at_site(ctx: &Ctx, flows: &[Flow], site: usize) -> (f64, f64) {
    let ms = ctx.rtt.site_ms_from(site);
    let (mut rt, mut xs) = (0.0, 0.0);
    for f in flows {
        rt += f.rt_weight * ms[f.site];
        xs += if f.site != site { f.xs_points } else { 0.0 };
    }
    (rt, xs)
}
