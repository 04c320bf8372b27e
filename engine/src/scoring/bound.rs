//! A proven lower bound on the cost any reachable placement could reach
//! (`docs/advice.md` §6a): what every advice result carries as `bound`.
//!
//! *Reachable* is the optimum's definition of `docs/quality.md`, or wider:
//! every moved service statically allowed at its destination with both
//! requests known, and every receiving cluster's fit certified for all its
//! arrivals given all its departures. The quantity bounded is
//! `State::totals(P).cost + Σ copy cost of the services P moves`.
//!
//! The relaxation drops the coupling between services and bounds each
//! part of the cost by its own minimum:
//!
//! - flows between two services that cannot move: their exact points;
//! - each movable service: the cheapest of its choices (stay, or any
//!   destination it could reach) for its copy cost plus its flows to
//!   services that cannot move, computed per site with exact corrections
//!   for the clusters where the peers are and where measured paths end;
//! - each flow between two movable services: a lower bound on its
//!   cheapest pair of ends (same cluster if both may share one, else same
//!   site, else the cheapest pair of different sites plus its cross-site
//!   points);
//! - headroom: per cluster and resource, a tangent of the (convex)
//!   headroom term, a constant plus a slope charged to each movable
//!   service that ends on the cluster, carried into its choice above.
//!
//! On estates small enough (`pairwise.rs`, at most 300,000 cells) a
//! second, tighter bound keeps the coupling the first drops: the dual of
//! the LP relaxation with pair variables, with headroom, capacity and the
//! move cap as Lagrangian prices. The larger of the two is returned.
//!
//! Work is `O(Σ candidates + flows × (clusters/64 + sites))`, the sites
//! being those a service could be in: no flow ever looks at a pair of
//! clusters. Every loop runs in index order. The headroom arithmetic
//! repeats `Ctx::headroom_with` (per resource, for its tangent): a new
//! cost term needs its bound here too (ARCHITECTURE.md).

use serde::{Deserialize, Serialize};

mod pairwise;

use crate::candidates::Candidates;
use crate::constraints::Load;
use crate::cost::{headroom_points, headroom_slope, Ctx};

/// The bound as a result carries it.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Bound {
    /// No reachable placement costs less (estate points + copy points).
    pub cost_at_least: f64,
    /// `totals_before.cost − cost_at_least`: no placement improves more.
    pub improvement_at_most: f64,
    /// The advice's improvement (before − after − copy) as a fraction of
    /// `improvement_at_most`: a floor on the share of the best possible
    /// improvement these moves capture. `None` when nothing can be gained.
    pub captured_at_least: Option<f64>,
}

/// Below this many points of `improvement_at_most` nothing can be gained
/// and no share is given: the same threshold as `docs/quality.md`'s
/// "nothing to gain" (a millionth of a millisecond on one busy
/// connection), far below the 2-point bar and far above rounding.
pub const NOTHING_TO_GAIN: f64 = 1e-6;

/// Relative slack taken off the bound: its parts are summed in another
/// order than `State::totals` sums the same points, which can differ in
/// the last bits (≤ n·ε relative for n terms; 10⁻⁹ covers n up to 10⁶
/// terms many times over), and a *proven* bound must not gain them.
const ROUNDING_SLACK: f64 = 1e-9;

/// Tolerance of the capacity filter (cores / GiB): a destination is ruled
/// out only when the request exceeds its certified room by more than
/// rounding could explain, so the filter never refuses a certified fit.
const CAP_TOL: f64 = 1e-9;

impl Bound {
    /// The bound for an advice whose estate cost before is `before` and
    /// whose moves end at `after_with_copy` (estate cost after + copy).
    pub fn new(cost_at_least: f64, before: f64, after_with_copy: f64) -> Bound {
        // The current placement is reachable, so the bound never exceeds it.
        let cost_at_least = cost_at_least.min(before);
        let improvement_at_most = before - cost_at_least;
        let captured_at_least = (improvement_at_most > NOTHING_TO_GAIN)
            .then(|| ((before - after_with_copy) / improvement_at_most).clamp(0.0, 1.0));
        Bound {
            cost_at_least,
            improvement_at_most,
            captured_at_least,
        }
    }
}

/// A set of small indices (clusters or sites) as bits, borrowed: one row
/// of a [`Table`] or a whole [`Bits`].
#[derive(Clone, Copy)]
struct Set<'a>(&'a [u64]);

impl<'a> Set<'a> {
    fn contains(self, i: usize) -> bool {
        self.0[i / 64] & (1 << (i % 64)) != 0
    }
    /// Is some index in all three sets and not `except`ed? Allocates
    /// nothing; `except` is asked only about indices in all three.
    fn any_of_three(self, b: Set, c: Set, except: impl Fn(usize) -> bool) -> bool {
        (0..self.0.len()).any(|w| {
            let mut x = self.0[w] & b.0[w] & c.0[w];
            while x != 0 {
                let i = w * 64 + x.trailing_zeros() as usize;
                if !except(i) {
                    return true;
                }
                x &= x - 1;
            }
            false
        })
    }
    fn meets(self, other: Set) -> bool {
        self.0.iter().zip(other.0).any(|(a, b)| a & b != 0)
    }
    /// Indices in both, ascending.
    fn common(self, other: Set<'a>) -> impl Iterator<Item = usize> + 'a {
        self.0
            .iter()
            .zip(other.0)
            .enumerate()
            .flat_map(|(w, (a, b))| {
                let mut x = a & b;
                std::iter::from_fn(move || {
                    (x != 0).then(|| {
                        let i = x.trailing_zeros() as usize;
                        x &= x - 1;
                        w * 64 + i
                    })
                })
            })
    }
}

/// One set of up to `n` indices, owned.
#[derive(Clone)]
struct Bits(Vec<u64>);

impl Bits {
    fn new(n: usize) -> Bits {
        Bits(vec![0; n.div_ceil(64)])
    }
    fn insert(&mut self, i: usize) {
        self.0[i / 64] |= 1 << (i % 64);
    }
    fn set(&self) -> Set<'_> {
        Set(&self.0)
    }
}

/// One set per row (per service), all in one allocation: a flow looks up
/// the rows of its two ends with one memory access each, not two.
struct Table {
    words: usize,
    bits: Vec<u64>,
}

impl Table {
    fn new(rows: usize, n: usize) -> Table {
        let words = n.div_ceil(64);
        Table {
            words,
            bits: vec![0; rows * words],
        }
    }
    fn insert(&mut self, row: usize, i: usize) {
        self.bits[row * self.words + i / 64] |= 1 << (i % 64);
    }
    fn row(&self, row: usize) -> Set<'_> {
        Set(&self.bits[row * self.words..(row + 1) * self.words])
    }
}

/// Certified room of each cluster: free × (1 − margin of its class at
/// `now`), CPU and memory — exactly what `constraints::resource_fit`
/// certifies against; `None` when either free capacity is unknown (such a
/// cluster receives nothing).
fn certified_room(ctx: &Ctx) -> Vec<Option<(f64, f64)>> {
    let (p, now) = (ctx.policy, ctx.now);
    ctx.estate
        .clusters
        .iter()
        .map(|c| {
            let room =
                |f: &crate::fact::Fact| f.value.map(|v| v * (1.0 - p.margin(f.class_at(now, p))));
            Some((room(&c.cpu_free)?, room(&c.memory_free_gib)?))
        })
        .collect()
}

/// Each service's reachable clusters as a set: where it is, and the
/// statically allowed `candidates` (as `advise::feasibility` computes
/// them) of known free capacity whose certified room, plus everything that
/// could leave them, holds the service's own request. A service
/// that cannot move (no such destination, or a request unknown): its row
/// is empty and `movable` false. One pass over the candidates; nothing
/// per (service, cluster) is kept but a bit.
fn domains(ctx: &Ctx, candidates: &Candidates) -> (Table, Vec<bool>) {
    let estate = ctx.estate;
    let nc = estate.clusters.len();
    let room = certified_room(ctx);
    let request = |s: usize| {
        let svc = &estate.services[s];
        svc.cpu.zip(svc.memory_gib)
    };
    // Who could move at all, and so what could leave each cluster.
    let mut may_leave = vec![Load::default(); nc];
    for s in 0..candidates.len() {
        if let Some((cpu, mem)) = request(s) {
            if candidates.of(s).iter().any(|c| room[c].is_some()) {
                let home = estate.services[s].cluster;
                may_leave[home].cpu_in += cpu;
                may_leave[home].memory_in += mem;
            }
        }
    }
    // A cluster receiving `s` holds at least its request, and certifies at
    // most its room plus all that leaves it.
    // As one threshold per cluster and resource (−∞: receives nothing),
    // so the pass over every candidate is two comparisons.
    let most: Vec<(f64, f64)> = (0..nc)
        .map(|c| match room[c] {
            None => (f64::NEG_INFINITY, f64::NEG_INFINITY),
            Some((rc, rm)) => {
                let l = may_leave[c];
                (
                    rc + l.cpu_in + CAP_TOL * (1.0 + rc.abs() + l.cpu_in),
                    rm + l.memory_in + CAP_TOL * (1.0 + rm.abs() + l.memory_in),
                )
            }
        })
        .collect();
    let fits = |c: usize, cpu: f64, mem: f64| cpu <= most[c].0 && mem <= most[c].1;
    let mut dom = Table::new(candidates.len(), nc);
    let mut movable = vec![false; candidates.len()];
    for (s, can_move) in movable.iter_mut().enumerate() {
        let Some((cpu, mem)) = request(s) else {
            continue;
        };
        for c in candidates.of(s) {
            if fits(c, cpu, mem) {
                dom.insert(s, c);
                *can_move = true;
            }
        }
        if *can_move {
            dom.insert(s, estate.services[s].cluster);
        }
    }
    (dom, movable)
}

/// Per pair of sites, the smallest RTT between two *different* clusters of
/// those sites (`apart`, row-major by site), the smallest RTT of any
/// cluster to itself (`together`), and the smallest between two sites
/// (`across`).
struct SiteRtts {
    apart: Vec<f64>,
    together: f64,
    across: f64,
}

fn site_rtts(ctx: &Ctx) -> SiteRtts {
    let estate = ctx.estate;
    let (nc, ns) = (estate.clusters.len(), estate.sites.len());
    let rtt = |a: usize, b: usize| ctx.rtt.get(a, b).ms;
    let site = &ctx.site_of;
    // Per pair of sites, the smallest RTT between two *different* clusters
    // of those sites (site-level value or a measured path), and the
    // smallest RTT of any cluster to itself.
    let mut clusters_in = vec![0usize; ns];
    for &s in site {
        clusters_in[s] += 1;
    }
    let mut apart = vec![f64::INFINITY; ns * ns];
    for a in 0..ns {
        for b in 0..ns {
            if clusters_in[a] > 0 && clusters_in[b] > 0 && (a != b || clusters_in[a] > 1) {
                apart[a * ns + b] = ctx.rtt.site(a, b).ms;
            }
        }
    }
    for p in &estate.paths {
        if p.a != p.b && p.rtt_ms.value.is_some() {
            let ms = rtt(p.a, p.b);
            let (sa, sb) = (site[p.a], site[p.b]);
            apart[sa * ns + sb] = apart[sa * ns + sb].min(ms);
            apart[sb * ns + sa] = apart[sb * ns + sa].min(ms);
        }
    }
    let together = (0..nc).map(|c| rtt(c, c)).fold(f64::INFINITY, f64::min);
    let across = (0..ns)
        .flat_map(|a| (0..ns).filter(move |&b| b != a).map(move |b| (a, b)))
        .map(|(a, b)| apart[a * ns + b])
        .fold(f64::INFINITY, f64::min);
    SiteRtts {
        apart,
        together,
        across,
    }
}

/// Headroom, linearised (the comment inside says how): the constant part
/// summed over clusters, and per cluster the slope `σ` charged per core and
/// per GiB to each movable service that ends there.
fn headroom_tangents(ctx: &Ctx, movable: &[bool], home: &[usize]) -> (f64, Vec<(f64, f64)>) {
    let estate = ctx.estate;
    let (n, nc) = (movable.len(), estate.clusters.len());
    let p = ctx.policy;
    // Headroom, linearised: per cluster and resource, the headroom term
    // `h(L)` is convex and non-decreasing in the load `L` moved in, so it
    // is ≥ its tangent at any point `L*` with slope `σ` = the right
    // derivative there: `h(L) ≥ h(L*) + σ·(L − L*)` for every `L`. The
    // final load is `L = L_min + Σ r` over the movable services that end
    // on the cluster (`L_min`: every movable one gone), so the tangent is
    // a constant per cluster plus `σ·r` charged to each service that ends
    // there — which the per-service minimum below can carry. `L*` is the
    // current load on a cluster already past the threshold (where `h` is
    // linear as long as it stays past it) and `L_min` elsewhere.
    let threshold = p.headroom_threshold;
    let mut gone = vec![Load::default(); nc];
    for s in (0..n).filter(|&s| movable[s]) {
        let svc = &estate.services[s];
        gone[home[s]].cpu_in -= svc.cpu_in_load();
        gone[home[s]].memory_in -= svc.memory_in_load();
    }
    let mut headroom = 0.0;
    let mut slope = vec![(0.0f64, 0.0f64); nc];
    for (c, cl) in estate.clusters.iter().enumerate() {
        let mut k = [0.0f64; 2];
        let mut sl = [0.0f64; 2];
        for (i, (free, size, least)) in [
            (cl.cpu_free.value, cl.cpu_total, gone[c].cpu_in),
            (
                cl.memory_free_gib.value,
                cl.memory_total_gib,
                gone[c].memory_in,
            ),
        ]
        .into_iter()
        .enumerate()
        {
            let Some(free) = free else {
                // Unknown free capacity: no headroom, whatever the load.
                continue;
            };
            let util = |l: f64| (size - free + l) / size;
            let h = |l: f64| headroom_points(p, util(l));
            let at = if util(0.0) > threshold { 0.0 } else { least };
            let sigma = if util(at) >= threshold {
                headroom_slope(p, size)
            } else {
                0.0
            };
            k[i] = h(at) + sigma * (least - at);
            sl[i] = sigma;
        }
        headroom += k[0] + k[1];
        slope[c] = (sl[0], sl[1]);
    }
    (headroom, slope)
}

/// The flows' part of the bound: the exact cost of each flow between two
/// services that cannot move (`fixed`), and for each flow between two
/// movable ones the cheapest pair of ends their domains allow (`pairs`).
/// Flows with one movable end are folded into that end's own choice.
fn flow_floors(
    ctx: &Ctx,
    movable: &[bool],
    home: &[usize],
    (dom, sites_of_dom): (&Table, &Table),
    (apart, together, across): (&[f64], f64, f64),
) -> (f64, f64) {
    let estate = ctx.estate;
    let ns = estate.sites.len();
    let mut fixed = 0.0;
    let mut pairs = 0.0;
    for (f, fl) in estate.flows.iter().enumerate() {
        let (u, v) = (fl.from, fl.to);
        match (movable[u], movable[v]) {
            (false, false) => {
                let (rt, xs) = ctx.flow_cost(f, home[u], home[v]);
                fixed += rt + xs;
            }
            (true, true) => {
                let w = ctx.round_trip_per_ms(f);
                let x = ctx.cross_site_points(f);
                debug_assert!(w >= 0.0 && x >= 0.0, "the loader refuses negative facts");
                // An infinite RTT marks a pair of ends that does not
                // exist (one site, or a site of one cluster): skipped, so
                // that a zero weight never meets it.
                let at = |r: f64| if r.is_finite() { w * r } else { f64::INFINITY };
                let mut best = at(across) + x;
                if dom.row(u).meets(dom.row(v)) {
                    best = best.min(at(together));
                }
                for s in sites_of_dom.row(u).common(sites_of_dom.row(v)) {
                    best = best.min(at(apart[s * ns + s]));
                }
                debug_assert!(best.is_finite(), "staying put is always a pair");
                pairs += best;
            }
            // Folded into the movable end's own choice below.
            _ => {}
        }
    }
    (fixed, pairs)
}

/// Clusters each cluster has a measured path to: the only places where a
/// cluster-level RTT differs from its sites' value.
fn measured_paths(estate: &crate::estate::Estate) -> Vec<Vec<usize>> {
    let nc = estate.clusters.len();
    let mut path_to: Vec<Vec<usize>> = vec![Vec::new(); nc];
    for p in &estate.paths {
        if p.a != p.b && p.rtt_ms.value.is_some() {
            path_to[p.a].push(p.b);
            path_to[p.b].push(p.a);
        }
    }
    for v in &mut path_to {
        v.sort_unstable();
        v.dedup();
    }
    path_to
}

/// Each movable service's sites: those of its domain's clusters.
fn sites_of_domains(site_set: &[Bits], dom: &Table, movable: &[bool]) -> Table {
    let (n, ns) = (movable.len(), site_set.len());
    let mut sites_of_dom = Table::new(n, ns);
    for s in (0..n).filter(|&s| movable[s]) {
        for (t, set) in site_set.iter().enumerate() {
            if dom.row(s).meets(set.set()) {
                sites_of_dom.insert(s, t);
            }
        }
    }
    sites_of_dom
}

/// The lower bound, in points: no reachable placement `P` has
/// `State::totals(P).cost + copy` below it. `candidates` are the statically
/// allowed destinations of `advise::feasibility`.
pub fn cost_at_least(ctx: &Ctx, candidates: &Candidates) -> f64 {
    cost_at_least_within(ctx, candidates, usize::MAX, None)
}

/// [`cost_at_least`] over the reachable placements that move at most
/// `max_moves` services (`usize::MAX`: any number): what an advice result
/// carries, with the policy's `max_moves`. `upper` is the cost (estate +
/// copy) of some placement within the cap — the advice's own — which the
/// pairwise relaxation's price steps aim at; `None`: the current
/// placement's.
pub fn cost_at_least_within(
    ctx: &Ctx,
    candidates: &Candidates,
    max_moves: usize,
    upper: Option<f64>,
) -> f64 {
    let estate = ctx.estate;
    let (nc, ns) = (estate.clusters.len(), estate.sites.len());
    let (dom, movable) = domains(ctx, candidates);
    let home: Vec<usize> = estate.services.iter().map(|s| s.cluster).collect();
    let n = movable.len();
    let rtt = |a: usize, b: usize| ctx.rtt.get(a, b).ms;
    let site = &ctx.site_of;

    let SiteRtts {
        apart,
        together,
        across,
    } = site_rtts(ctx);
    let path_to = measured_paths(estate);
    // Each site's clusters as a set, and each movable service's sites.
    let mut site_set = vec![Bits::new(nc); ns];
    for (c, &t) in site.iter().enumerate() {
        site_set[t].insert(c);
    }
    let sites_of_dom = sites_of_domains(&site_set, &dom, &movable);

    let (fixed, pairs) = flow_floors(
        ctx,
        &movable,
        &home,
        (&dom, &sites_of_dom),
        (&apart, together, across),
    );

    let (headroom, slope) = headroom_tangents(ctx, &movable, &home);
    let (flat, sloped) = flat_and_sloped(&slope);

    // Each movable service's cheapest choice: copy + flows to fixed peers
    // + its share of the headroom tangents where it ends.
    let mut own = 0.0;
    let mut peer_site = vec![(0.0f64, 0.0f64); ns];
    let mut has_peer = vec![false; ns];
    let mut peer_sites: Vec<usize> = Vec::new();
    let mut site_cost = vec![0.0f64; ns];
    let mut corr = vec![0.0f64; nc];
    let mut special: Vec<usize> = Vec::new();
    for s in (0..n).filter(|&s| movable[s]) {
        let svc = &estate.services[s];
        // Known data only: an unknown size is at least 0 GB, so the bound
        // stays a lower bound (docs/advice.md §6a).
        let copy = ctx.copy_points(s);
        let (rc, rm) = (svc.cpu_in_load(), svc.memory_in_load());
        let load_cost = |c: usize| rc * slope[c].0 + rm * slope[c].1;
        // Fixed peers, weights summed per peer site.
        for &(f, peer) in &ctx.adjacency[s] {
            if movable[peer] {
                continue;
            }
            let q = site[home[peer]];
            if !has_peer[q] {
                has_peer[q] = true;
                peer_sites.push(q);
            }
            peer_site[q].0 += ctx.round_trip_per_ms(f);
            peer_site[q].1 += ctx.cross_site_points(f);
        }
        if peer_sites.is_empty() && load_cost(home[s]) == 0.0 {
            // Staying costs nothing of its own, and nothing is below 0.
            continue;
        }
        // Site-level cost of sitting anywhere in each site the service
        // could be in, peer sites in ascending order.
        peer_sites.sort_unstable();
        let sites = sites_of_dom.row(s);
        for (t, cost) in site_cost.iter_mut().enumerate() {
            if !sites.contains(t) {
                continue;
            }
            *cost = peer_sites
                .iter()
                .map(|&q| {
                    let (w, x) = peer_site[q];
                    w * ctx.rtt.site(t, q).ms + if t != q { x } else { 0.0 }
                })
                .sum();
        }
        // Exact corrections where the cluster-level RTT differs from the
        // site-level one: at the peer's own cluster and at the other end
        // of its measured paths.
        for &(f, peer) in &ctx.adjacency[s] {
            if movable[peer] {
                continue;
            }
            let hp = home[peer];
            let w = ctx.round_trip_per_ms(f);
            for c in std::iter::once(hp).chain(path_to[hp].iter().copied()) {
                if !dom.row(s).contains(c) {
                    continue;
                }
                if corr[c] == 0.0 {
                    special.push(c);
                }
                corr[c] += w * (rtt(c, hp) - ctx.rtt.site(site[c], site[hp]).ms);
            }
        }
        // Staying; then, per site, any destination that is neither where
        // a correction applies nor on a cluster with a headroom slope (all
        // such cost the site's sum + copy); then those others one by one.
        let h = home[s];
        let d = dom.row(s);
        let mut best = site_cost[site[h]] + corr[h] + load_cost(h);
        for t in (0..ns).filter(|&t| sites.contains(t)) {
            let except = |c: usize| c == h || special.contains(&c);
            if d.any_of_three(site_set[t].set(), flat.set(), except) {
                best = best.min(site_cost[t] + copy);
            }
        }
        for &c in special.iter().chain(&sloped) {
            if c != h && d.contains(c) {
                best = best.min(site_cost[site[c]] + corr[c] + copy + load_cost(c));
            }
        }
        own += best;
        // Reset the scratch space this service touched.
        for &q in &peer_sites {
            peer_site[q] = (0.0, 0.0);
            has_peer[q] = false;
        }
        peer_sites.clear();
        for &c in &special {
            corr[c] = 0.0;
        }
        special.clear();
    }

    let raw = fixed + pairs + own + headroom;
    let per_term = raw - ROUNDING_SLACK * (1.0 + raw.abs());
    let pairs_bound = pairwise_floor(ctx, (&dom, &movable, &home), fixed, max_moves, upper);
    // Every point of cost is ≥ 0 (facts and weights are), so 0 is a bound
    // too: the slack never takes the bound below it. Both relaxations are
    // bounds; the larger is kept.
    per_term.max(pairs_bound.unwrap_or(0.0)).max(0.0)
}

/// Clusters where arriving or staying costs no headroom slope (as a set),
/// and the (usually few) where it does.
fn flat_and_sloped(slope: &[(f64, f64)]) -> (Bits, Vec<usize>) {
    let mut flat = Bits::new(slope.len());
    let mut sloped = Vec::new();
    for (c, &(a, b)) in slope.iter().enumerate() {
        if a == 0.0 && b == 0.0 {
            flat.insert(c);
        } else {
            sloped.push(c);
        }
    }
    (flat, sloped)
}

/// The pairwise relaxation's bound (`pairwise`), with the flows between
/// services that cannot move (`fixed`, which are outside it) added and the
/// rounding slack taken off; `None` where the relaxation is not built.
fn pairwise_floor(
    ctx: &Ctx,
    (dom, movable, home): (&Table, &[bool], &[usize]),
    fixed: f64,
    max_moves: usize,
    upper: Option<f64>,
) -> Option<f64> {
    let room = certified_room(ctx);
    let inputs = pairwise::Inputs {
        dom,
        movable,
        home,
        room: &room,
    };
    let upper = upper.unwrap_or_else(|| crate::cost::State::initial(ctx.estate).totals(ctx).cost);
    pairwise::Pairwise::build(ctx, &inputs).map(|mut pw| {
        let (value, magnitude) = pw.solve(max_moves, upper);
        let raw = fixed + value;
        raw - ROUNDING_SLACK * (1.0 + fixed.abs() + magnitude)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bits_intersect_and_list_in_order() {
        let mut t = Table::new(3, 130);
        for i in [3, 64, 70, 129] {
            t.insert(0, i);
        }
        for i in [0, 64, 129] {
            t.insert(1, i);
        }
        let (a, b) = (t.row(0), t.row(1));
        assert!(a.contains(70) && !a.contains(71) && !t.row(2).contains(3));
        assert!(a.meets(b));
        assert_eq!(a.common(b).collect::<Vec<_>>(), vec![64, 129]);
        let mut c = Bits::new(130);
        c.insert(5);
        assert!(!a.meets(c.set()));
        c.insert(64);
        c.insert(129);
        assert!(a.any_of_three(b, c.set(), |i| i == 64));
        assert!(!a.any_of_three(b, c.set(), |i| i == 64 || i == 129));
    }

    #[test]
    fn the_share_is_none_when_nothing_can_be_gained() {
        let b = Bound::new(10.0, 10.0, 10.0);
        assert_eq!(b.improvement_at_most, 0.0);
        assert_eq!(b.captured_at_least, None);
        let b = Bound::new(12.0, 10.0, 10.0);
        assert_eq!(b.cost_at_least, 10.0);
        let b = Bound::new(6.0, 10.0, 8.0);
        assert_eq!(b.captured_at_least, Some(0.5));
    }
}
