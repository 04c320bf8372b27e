//! The cost function (SPEC §5): the ranking stage.
//!
//! An estate placement costs, in points (1 point = 1 ms of RTT on a
//! connection in constant use):
//!
//! - round trip: Σ over flows of `round_trip_weight × weight × RTT(ms)`,
//! - cross-site: Σ over flows whose ends are on different sites of
//!   `cross_site_weight × MB/s`,
//! - headroom: Σ over clusters and resources (CPU, memory) of
//!   `headroom_weight × max(0, u − threshold) / (1 − threshold)` where `u`
//!   is projected utilisation,
//!
//! and a move additionally pays `copy_weight_per_gb × data_gb` once.
//!
//! [`Ctx`] holds everything resolved once per evaluation (RTT table,
//! effective fact values and classes, adjacency); [`State`] is a placement
//! that moves mutate. All loops run in index order, which is id order.

use serde::{Deserialize, Serialize};

use crate::constraints::{self, Fit, FitCode, Load};
use crate::estate::Estate;
use crate::fact::{Class, Fact, FactRef};
use crate::policy::Policy;
use crate::rtt::RttTable;

// ---------------------------------------------------------------------------
// Each term's formula, written once. The cost (`Ctx`, `State`), the flow-gain
// cache (`deltas.rs`), the bound (`bound.rs`), the advice's cache
// maintenance (`advise.rs`), Why (`why.rs`) and outcomes (`outcome.rs`)
// call these rather than spell the arithmetic again: a term changed here
// changes everywhere, and the bound cannot silently drift from the cost.
// Each keeps the order of operations the results were always computed in,
// so no bit of any output moves.

/// Round-trip points per millisecond of RTT on a flow of `weight`:
/// `round_trip_weight × weight`. Times the RTT, the round-trip term.
#[inline]
pub fn round_trip_per_ms(policy: &Policy, weight: f64) -> f64 {
    policy.round_trip_weight * weight
}

/// Cross-site points of a flow of `mb_s` whose ends are on different
/// sites: `cross_site_weight × MB/s` (nothing when on one site).
#[inline]
pub fn cross_site_points(policy: &Policy, mb_s: f64) -> f64 {
    policy.cross_site_weight * mb_s
}

/// Headroom points of one resource at projected utilisation `u`:
/// `headroom_weight × max(0, u − threshold) / (1 − threshold)`, exactly
/// zero at or below the threshold.
#[inline]
pub fn headroom_points(policy: &Policy, u: f64) -> f64 {
    let t = policy.headroom_threshold;
    if u > t {
        policy.headroom_weight * (u - t) / (1.0 - t)
    } else {
        0.0
    }
}

/// The slope of [`headroom_points`] past the threshold, per unit of load of
/// a resource of `size` (cores or GiB): `headroom_weight / ((1 − threshold)
/// × size)`. The bound's tangents and Why's capacity pieces read it.
#[inline]
pub fn headroom_slope(policy: &Policy, size: f64) -> f64 {
    policy.headroom_weight / ((1.0 - policy.headroom_threshold) * size)
}

/// Copy points of moving a service holding `data_gb` (its data in the
/// copy): `copy_weight_per_gb × data_gb`, paid once per move.
#[inline]
pub fn copy_points(policy: &Policy, data_gb: f64) -> f64 {
    policy.copy_weight_per_gb * data_gb
}

/// Everything about an estate that does not change while moves are tried.
#[derive(Clone)]
pub struct Ctx<'a> {
    pub estate: &'a Estate,
    pub policy: &'a Policy,
    pub now: i64,
    pub rtt: RttTable,
    /// Effective weight per flow (unknown → policy assumption).
    pub weight: Vec<f64>,
    /// Effective MB/s per flow (unknown → policy assumption).
    pub mb_s: Vec<f64>,
    /// Per service: `(flow index, peer service index)`, in flow order.
    pub adjacency: Vec<Vec<(usize, usize)>>,
    /// Site of each cluster.
    pub site_of: Vec<usize>,
}

impl<'a> Ctx<'a> {
    pub fn new(estate: &'a Estate, policy: &'a Policy, now: i64) -> Ctx<'a> {
        let rtt = RttTable::build(estate, policy, now);
        let weight = estate
            .flows
            .iter()
            .map(|f| f.weight.value.unwrap_or(policy.unknown_flow.weight))
            .collect();
        let mb_s = estate
            .flows
            .iter()
            .map(|f| f.mb_s.value.unwrap_or(policy.unknown_flow.mb_s))
            .collect();
        let mut adjacency = vec![Vec::new(); estate.services.len()];
        for (i, f) in estate.flows.iter().enumerate() {
            adjacency[f.from].push((i, f.to));
            adjacency[f.to].push((i, f.from));
        }
        let site_of = estate.clusters.iter().map(|c| c.site).collect();
        Ctx {
            estate,
            policy,
            now,
            rtt,
            weight,
            mb_s,
            adjacency,
            site_of,
        }
    }

    /// Round-trip and cross-site points of one flow between two clusters.
    #[inline]
    pub fn flow_cost(&self, flow: usize, a: usize, b: usize) -> (f64, f64) {
        let rt = self.round_trip_per_ms(flow) * self.rtt.get(a, b).ms;
        let xs = if self.site_of[a] != self.site_of[b] {
            self.cross_site_points(flow)
        } else {
            0.0
        };
        (rt, xs)
    }

    /// [`Ctx::flow_cost`] between two clusters of sites `a` and `b` whose
    /// RTT is the site-level rung (no shared cluster, no measured path):
    /// the same expression on the same numbers (`deltas.rs`).
    #[inline]
    pub fn flow_cost_sites(&self, flow: usize, a: usize, b: usize) -> (f64, f64) {
        let rt = self.round_trip_per_ms(flow) * self.rtt.site(a, b).ms;
        let xs = if a != b {
            self.cross_site_points(flow)
        } else {
            0.0
        };
        (rt, xs)
    }

    /// [`round_trip_per_ms`] of `flow`, its effective weight.
    #[inline]
    pub fn round_trip_per_ms(&self, flow: usize) -> f64 {
        round_trip_per_ms(self.policy, self.weight[flow])
    }

    /// [`cross_site_points`] of `flow`, its effective MB/s.
    #[inline]
    pub fn cross_site_points(&self, flow: usize) -> f64 {
        cross_site_points(self.policy, self.mb_s[flow])
    }

    /// [`copy_points`] of moving `service` (≥ 0; known data only).
    #[inline]
    pub fn copy_points(&self, service: usize) -> f64 {
        copy_points(self.policy, self.estate.services[service].data_gb_in_copy())
    }

    /// Headroom points of `cluster` carrying `load` beyond its facts.
    /// Exactly zero at or below the threshold; unknown free capacity
    /// contributes nothing (it is surfaced as *can't tell* instead).
    pub fn headroom(&self, cluster: usize, load: Load) -> f64 {
        let c = &self.estate.clusters[cluster];
        self.headroom_with(cluster, load, c.cpu_free.value, c.memory_free_gib.value)
    }

    /// [`Ctx::headroom`] with the free-capacity values given rather than
    /// read from the cluster's facts: the same arithmetic, for analyses
    /// that ask what a different value of a capacity fact would do
    /// (`why.rs`).
    #[inline]
    pub fn headroom_with(
        &self,
        cluster: usize,
        load: Load,
        cpu_free: Option<f64>,
        memory_free_gib: Option<f64>,
    ) -> f64 {
        let c = &self.estate.clusters[cluster];
        let p = self.policy;
        let mut total = 0.0;
        for (free, size, moved_in) in [
            (cpu_free, c.cpu_total, load.cpu_in),
            (memory_free_gib, c.memory_total_gib, load.memory_in),
        ] {
            if let Some(free) = free {
                let u = (size - free + moved_in) / size;
                if u > p.headroom_threshold {
                    total += headroom_points(p, u);
                }
            }
        }
        total
    }

    pub fn flow_fact(&self, flow: usize, which: FlowFact) -> FactRef {
        let f = &self.estate.flows[flow];
        let (fact, name): (&Fact, &str) = match which {
            FlowFact::Weight => (&f.weight, "weight"),
            FlowFact::MbS => (&f.mb_s, "mb_s"),
        };
        let assumed = match which {
            FlowFact::Weight => self.weight[flow],
            FlowFact::MbS => self.mb_s[flow],
        };
        let s = &self.estate.services;
        fact_ref(
            format!("flow {}→{} {name}", s[f.from].id, s[f.to].id),
            fact,
            assumed,
            self.now,
            self.policy,
        )
    }

    /// The coverage fact of `service`'s traffic as a result row (key
    /// `traffic <service>`, value the observation window in seconds,
    /// `null` when never observed); `None` when its flows are declared
    /// complete (`Estate::traffic_of`, docs/advice.md §2 "Traffic coverage").
    pub fn traffic_fact(&self, service: usize) -> Option<FactRef> {
        let fact = self.estate.traffic_of(service)?;
        let mut r = fact_ref(
            format!("traffic {}", self.estate.services[service].id),
            &fact,
            f64::NAN,
            self.now,
            self.policy,
        );
        if fact.value.is_none() {
            r.value = None;
            r.source = crate::estate::NEVER_OBSERVED.into();
        }
        Some(r)
    }

    /// The facts of `service` nobody could tell, as result rows: its data
    /// size (key `data size <service>`) and whether it keeps data on local
    /// volumes (`local volumes <service>`), each with value `null`, class
    /// `guessed` and the reason as its source (docs/advice.md §4 "Unknown
    /// data"). Empty when both are known.
    pub fn unknown_facts(&self, service: usize) -> impl Iterator<Item = FactRef> + '_ {
        let s = &self.estate.services[service];
        [
            (UNKNOWN_DATA, s.data_gb.why_unknown()),
            (UNKNOWN_LOCAL, s.constraints.local_volumes.why_unknown()),
        ]
        .into_iter()
        .filter_map(move |(key, why)| {
            let why = why?;
            Some(FactRef {
                fact: format!("{key} {}", s.id),
                value: None,
                class: Class::Guessed,
                stored_class: Class::Guessed,
                source: why.to_string(),
                age_s: 0,
                derivation: None,
            })
        })
    }

    pub fn capacity_fact(&self, cluster: usize, which: Capacity) -> FactRef {
        let c = &self.estate.clusters[cluster];
        let (fact, name) = match which {
            Capacity::Cpu => (&c.cpu_free, "cpu_free"),
            Capacity::Memory => (&c.memory_free_gib, "memory_free_gib"),
        };
        let mut r = fact_ref(
            format!("{} {name}", c.id),
            fact,
            f64::NAN,
            self.now,
            self.policy,
        );
        if fact.value.is_none() {
            r.value = None;
        }
        r
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FlowFact {
    Weight,
    MbS,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Capacity {
    Cpu,
    Memory,
}

/// The key prefix of an unknown data size ([`Ctx::unknown_facts`]). Three
/// words with the id: no other fact key has that shape (a capacity key is
/// `<cluster> cpu_free`, and ids hold no space), so none can collide.
pub const UNKNOWN_DATA: &str = "data size";
/// The key prefix of an unknown local-volume status.
pub const UNKNOWN_LOCAL: &str = "local volumes";

/// A stored fact as a result row. An unknown value shows the assumption
/// used in its place, and its class is `guessed`.
pub fn fact_ref(key: String, fact: &Fact, assumed: f64, now: i64, policy: &Policy) -> FactRef {
    FactRef {
        fact: key,
        value: fact.value.or(Some(assumed)).filter(|v| !v.is_nan()),
        class: fact.class_at(now, policy),
        stored_class: fact.class,
        source: if fact.value.is_some() {
            fact.source.clone()
        } else {
            "unknown (policy assumption)".into()
        },
        age_s: fact.age_s(now),
        derivation: None,
    }
}

/// Points of an estate placement, by term (the terms with
/// [`Term::in_totals`]), and their sum `cost`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Totals {
    pub cost: f64,
    pub round_trip: f64,
    pub cross_site: f64,
    pub headroom: f64,
    /// MB/s of traffic between different sites (a quantity, not points).
    pub cross_site_mb_s: f64,
}

impl Totals {
    /// The estate's points of term `t`; `None` for a term paid per move
    /// only (not [`Term::in_totals`]).
    pub fn get(&self, t: Term) -> Option<f64> {
        match t {
            Term::RoundTrip => Some(self.round_trip),
            Term::CrossSite => Some(self.cross_site),
            Term::Headroom => Some(self.headroom),
            Term::Copy => None,
        }
    }

    fn slot(&mut self, t: Term) -> Option<&mut f64> {
        match t {
            Term::RoundTrip => Some(&mut self.round_trip),
            Term::CrossSite => Some(&mut self.cross_site),
            Term::Headroom => Some(&mut self.headroom),
            Term::Copy => None,
        }
    }

    /// `(term, points)` of every term the estate pays, in [`Term::ALL`]
    /// order.
    pub fn iter(&self) -> impl Iterator<Item = (Term, f64)> + '_ {
        Term::ALL
            .into_iter()
            .filter_map(|t| self.get(t).map(|v| (t, v)))
    }

    /// Sets `cost` to the sum of the terms, in [`Term::ALL`] order.
    fn sum_cost(&mut self) {
        // −0.0 is the exact identity of `+`: the sum is `a + b + …` as
        // written out, bit for bit.
        self.cost = self.iter().fold(-0.0, |sum, (_, v)| sum + v);
    }

    /// `after − before`, quantity by quantity.
    pub fn change(before: &Totals, after: &Totals) -> Totals {
        let mut change = Totals {
            cost: after.cost - before.cost,
            cross_site_mb_s: after.cross_site_mb_s - before.cross_site_mb_s,
            ..Totals::default()
        };
        for t in Term::ALL {
            if let (Some(slot), Some(b), Some(a)) = (change.slot(t), before.get(t), after.get(t)) {
                *slot = a - b;
            }
        }
        change
    }
}

/// A placement of every service, and each cluster's load beyond its facts.
#[derive(Clone, Debug)]
pub struct State {
    pub placement: Vec<usize>,
    pub load: Vec<Load>,
}

impl State {
    pub fn initial(estate: &Estate) -> State {
        State {
            placement: estate.services.iter().map(|s| s.cluster).collect(),
            load: vec![Load::default(); estate.clusters.len()],
        }
    }

    pub fn apply(&mut self, ctx: &Ctx, service: usize, to: usize) {
        let s = &ctx.estate.services[service];
        let from = self.placement[service];
        // An unknown request moves no known load (`Service::cpu_in_load`);
        // its fits are *can't tell* instead.
        self.load[from].cpu_in -= s.cpu_in_load();
        self.load[from].memory_in -= s.memory_in_load();
        self.load[to].cpu_in += s.cpu_in_load();
        self.load[to].memory_in += s.memory_in_load();
        self.placement[service] = to;
    }

    pub fn totals(&self, ctx: &Ctx) -> Totals {
        let mut t = Totals::default();
        for (i, f) in ctx.estate.flows.iter().enumerate() {
            let (a, b) = (self.placement[f.from], self.placement[f.to]);
            let (rt, xs) = ctx.flow_cost(i, a, b);
            t.round_trip += rt;
            t.cross_site += xs;
            if ctx.site_of[a] != ctx.site_of[b] {
                t.cross_site_mb_s += ctx.mb_s[i];
            }
        }
        for c in 0..ctx.estate.clusters.len() {
            t.headroom += ctx.headroom(c, self.load[c]);
        }
        t.sum_cost();
        t
    }

    /// Round-trip and cross-site points of `service`'s flows if it sat on
    /// `at` (everyone else where they are).
    pub fn flow_cost_at(&self, ctx: &Ctx, service: usize, at: usize) -> (f64, f64) {
        let (mut rt, mut xs) = (0.0, 0.0);
        for &(flow, peer) in &ctx.adjacency[service] {
            let (r, x) = ctx.flow_cost(flow, at, self.placement[peer]);
            rt += r;
            xs += x;
        }
        (rt, xs)
    }

    /// Headroom points `service` adds to the cluster it is on: what the
    /// cluster would save if it left.
    pub fn marginal_headroom(&self, ctx: &Ctx, service: usize) -> f64 {
        let s = &ctx.estate.services[service];
        let c = self.placement[service];
        let l = self.load[c];
        let without = Load {
            cpu_in: l.cpu_in - s.cpu_in_load(),
            memory_in: l.memory_in - s.memory_in_load(),
        };
        ctx.headroom(c, l) - ctx.headroom(c, without)
    }

    /// A service's current cost: its flows' round-trip and cross-site
    /// points plus the headroom it causes where it is.
    pub fn current_cost(&self, ctx: &Ctx, service: usize) -> f64 {
        let (rt, xs) = self.flow_cost_at(ctx, service, self.placement[service]);
        rt + xs + self.marginal_headroom(ctx, service)
    }

    /// Change of headroom points (after − before) over both clusters if
    /// `service` moved to `to`.
    pub fn headroom_delta(&self, ctx: &Ctx, service: usize, to: usize) -> f64 {
        let s = &ctx.estate.services[service];
        let from = self.placement[service];
        if from == to {
            return 0.0;
        }
        let (lf, lt) = (self.load[from], self.load[to]);
        let from_after = Load {
            cpu_in: lf.cpu_in - s.cpu_in_load(),
            memory_in: lf.memory_in - s.memory_in_load(),
        };
        let to_after = Load {
            cpu_in: lt.cpu_in + s.cpu_in_load(),
            memory_in: lt.memory_in + s.memory_in_load(),
        };
        (ctx.headroom(from, from_after) - ctx.headroom(from, lf))
            + (ctx.headroom(to, to_after) - ctx.headroom(to, lt))
    }

    /// The three-valued fit as a code, without building any message: the
    /// hot path. `fit` is this with its words.
    #[inline]
    pub fn fit_code(&self, ctx: &Ctx, service: usize, to: usize) -> FitCode {
        constraints::fit_request_code(ctx.estate, ctx.policy, ctx.now, service, to, self.load[to])
    }

    /// `fit(..) == Fit::Fits`, without building the messages.
    #[inline]
    pub fn certainly_fits(&self, ctx: &Ctx, service: usize, to: usize) -> bool {
        matches!(self.fit_code(ctx, service, to), FitCode::Fits)
    }

    pub fn fit(&self, ctx: &Ctx, service: usize, to: usize) -> Fit {
        self.fit_code(ctx, service, to).explain(ctx.estate)
    }
}

/// The cost terms, as data: a closed list, in the order a move's gain sums
/// them. Text, Why, deciders, what-if and the web loop over [`Term::ALL`]
/// and read a term's words and weight from here; only the evaluation of a
/// term (below, and the caches of `advise` and `why` that repeat it) names
/// it. Adding one: see "Adding a cost term" in ARCHITECTURE.md.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Term {
    RoundTrip,
    CrossSite,
    Headroom,
    Copy,
}

/// What a term is, for people and for the policy.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TermInfo {
    /// Its key in results (`terms`, `totals`, the Why panel's `term`).
    pub id: &'static str,
    /// Its name in text for people, and in `docs/advice.md` §5's table.
    pub label: &'static str,
    /// Its short name in one-line move summaries (`berth advise --format text`).
    pub short: &'static str,
    /// What the policy weight multiplies to make points.
    pub unit: &'static str,
    /// The `Policy` field that weighs it ([`Term::weight`] reads it).
    pub weight_field: &'static str,
    /// Whether an estate placement pays it ([`Totals`]); otherwise it is
    /// paid once per move.
    pub in_totals: bool,
}

impl Term {
    /// Every term, in the order a gain sums them.
    pub const ALL: [Term; 4] = [Term::RoundTrip, Term::CrossSite, Term::Headroom, Term::Copy];

    pub const fn info(self) -> TermInfo {
        match self {
            Term::RoundTrip => TermInfo {
                id: "round_trip",
                label: "round trip",
                short: "rtt",
                unit: "ms of RTT × in-flight requests",
                weight_field: "round_trip_weight",
                in_totals: true,
            },
            Term::CrossSite => TermInfo {
                id: "cross_site",
                label: "cross-site",
                short: "xsite",
                unit: "MB/s between different sites",
                weight_field: "cross_site_weight",
                in_totals: true,
            },
            Term::Headroom => TermInfo {
                id: "headroom",
                label: "headroom",
                short: "headroom",
                unit: "utilisation past the threshold, as a fraction of the rest, per resource",
                weight_field: "headroom_weight",
                in_totals: true,
            },
            Term::Copy => TermInfo {
                id: "copy",
                label: "copy",
                short: "copy",
                unit: "GB of data copied, once per move",
                weight_field: "copy_weight_per_gb",
                in_totals: false,
            },
        }
    }

    pub const fn id(self) -> &'static str {
        self.info().id
    }

    pub const fn label(self) -> &'static str {
        self.info().label
    }

    pub const fn short(self) -> &'static str {
        self.info().short
    }

    pub const fn in_totals(self) -> bool {
        self.info().in_totals
    }

    /// The term with result key `id`.
    pub fn from_id(id: &str) -> Option<Term> {
        Term::ALL.into_iter().find(|t| t.id() == id)
    }

    /// The policy's weight of this term (field [`TermInfo::weight_field`]).
    pub fn weight(self, p: &Policy) -> f64 {
        match self {
            Term::RoundTrip => p.round_trip_weight,
            Term::CrossSite => p.cross_site_weight,
            Term::Headroom => p.headroom_weight,
            Term::Copy => p.copy_weight_per_gb,
        }
    }
}

/// A move's contribution to the gain, by term; `gain` is their sum, in
/// [`Term::ALL`] order, and nothing else. Serialised with one key per term
/// ([`TermInfo::id`]), in that order.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Terms {
    pub round_trip: f64,
    pub cross_site: f64,
    pub headroom: f64,
    pub copy: f64,
}

impl Terms {
    /// Each term's points from `f`, called in [`Term::ALL`] order.
    #[inline]
    pub fn from_fn(mut f: impl FnMut(Term) -> f64) -> Terms {
        let mut t = Terms::default();
        for term in Term::ALL {
            t[term] = f(term);
        }
        t
    }

    /// `f` applied to every term's points.
    #[inline]
    pub fn map(&self, mut f: impl FnMut(f64) -> f64) -> Terms {
        Terms::from_fn(|t| f(self[t]))
    }

    #[inline]
    pub fn get(&self, t: Term) -> f64 {
        self[t]
    }

    /// `(term, points)` in [`Term::ALL`] order.
    pub fn iter(&self) -> impl Iterator<Item = (Term, f64)> + '_ {
        Term::ALL.into_iter().map(|t| (t, self[t]))
    }

    /// The sum of the terms, in [`Term::ALL`] order.
    #[inline]
    pub fn gain(&self) -> f64 {
        // −0.0 is the exact identity of `+`: the sum is `a + b + c + d` as
        // written out, bit for bit.
        Term::ALL.into_iter().fold(-0.0, |sum, t| sum + self[t])
    }
}

impl std::ops::Index<Term> for Terms {
    type Output = f64;

    #[inline]
    fn index(&self, t: Term) -> &f64 {
        match t {
            Term::RoundTrip => &self.round_trip,
            Term::CrossSite => &self.cross_site,
            Term::Headroom => &self.headroom,
            Term::Copy => &self.copy,
        }
    }
}

impl std::ops::IndexMut<Term> for Terms {
    #[inline]
    fn index_mut(&mut self, t: Term) -> &mut f64 {
        match t {
            Term::RoundTrip => &mut self.round_trip,
            Term::CrossSite => &mut self.cross_site,
            Term::Headroom => &mut self.headroom,
            Term::Copy => &mut self.copy,
        }
    }
}

/// Terms of moving `service` to `to` from the state as it is.
pub fn move_terms(ctx: &Ctx, state: &State, service: usize, to: usize) -> Terms {
    let from = state.placement[service];
    let (rt0, xs0) = state.flow_cost_at(ctx, service, from);
    let (rt1, xs1) = state.flow_cost_at(ctx, service, to);
    Terms {
        round_trip: rt0 - rt1,
        cross_site: xs0 - xs1,
        headroom: headroom_term(ctx, state, service, to),
        copy: copy_term(ctx, service),
    }
}

/// The headroom term of a move's gain (saving positive). Written as
/// `0 − delta` so that no change is `+0.0`, never a `-0.0` in results.
#[inline]
pub fn headroom_term(ctx: &Ctx, state: &State, service: usize, to: usize) -> f64 {
    0.0 - state.headroom_delta(ctx, service, to)
}

/// The copy term of a move's gain (≤ 0), `+0.0` for a stateless service.
#[inline]
pub fn copy_term(ctx: &Ctx, service: usize) -> f64 {
    0.0 - ctx.copy_points(service)
}

/// The smallest gain a move of `service` must reach: both bars of SPEC §5.
pub fn bar(ctx: &Ctx, current_cost: f64) -> f64 {
    step_bar(ctx, current_cost, 1)
}

/// The smallest gain a step moving `moved` services must reach: the
/// relative bar against the step's current cost, and the absolute bar once
/// per moved service (`docs/advice.md`, "Every moved service pays the
/// bar"). The absolute bar exists so that no one is asked to move a
/// service for a gain nobody would notice; a compound step that cleared it
/// once, whatever its size, could ask a team to move forty services for
/// the gain of one — so each service it moves must pay it. For one
/// service this is [`bar`].
pub fn step_bar(ctx: &Ctx, current_cost: f64, moved: usize) -> f64 {
    (ctx.policy.min_gain_fraction * current_cost).max(ctx.policy.min_gain_points * moved as f64)
}

/// Every fact the move of `service` to `to` rests on, deduplicated and
/// sorted by key: flow weights and RTTs whose RTT changes, MB/s whose
/// crossing changes, the capacity facts behind fit and headroom, the
/// coverage of the service's traffic (unless its flows are declared), and
/// its data size and local-volume status where nobody could tell them.
pub fn deciding_facts(ctx: &Ctx, state: &State, service: usize, to: usize) -> Vec<FactRef> {
    let from = state.placement[service];
    let mut facts: Vec<FactRef> = Vec::new();
    for &(flow, peer) in &ctx.adjacency[service] {
        let p = state.placement[peer];
        let (r0, r1) = (ctx.rtt.get(from, p), ctx.rtt.get(to, p));
        if r0.ms != r1.ms {
            facts.push(ctx.flow_fact(flow, FlowFact::Weight));
            facts.push(ctx.rtt.fact_ref(ctx.estate, from, p, ctx.now));
            facts.push(ctx.rtt.fact_ref(ctx.estate, to, p, ctx.now));
        }
        let crosses = |c: usize| ctx.site_of[c] != ctx.site_of[p];
        if crosses(from) != crosses(to) {
            facts.push(ctx.flow_fact(flow, FlowFact::MbS));
        }
    }
    facts.push(ctx.capacity_fact(to, Capacity::Cpu));
    facts.push(ctx.capacity_fact(to, Capacity::Memory));
    // What is known of the service's traffic at all: its flows above (or
    // their absence) mean what they say only if something observed it.
    facts.extend(ctx.traffic_fact(service));
    // A move copies the service's data and needs it free of local
    // volumes: unknown, either leaves the move resting on a guess (its
    // copy term counts only known data).
    facts.extend(ctx.unknown_facts(service));
    let s = &ctx.estate.services[service];
    let l = state.load[from];
    let leaving = Load {
        cpu_in: l.cpu_in - s.cpu_in_load(),
        memory_in: l.memory_in - s.memory_in_load(),
    };
    if ctx.headroom(from, l) != ctx.headroom(from, leaving) {
        facts.push(ctx.capacity_fact(from, Capacity::Cpu));
        facts.push(ctx.capacity_fact(from, Capacity::Memory));
    }
    facts.sort_by(|a, b| a.fact.cmp(&b.fact));
    facts.dedup_by(|a, b| a.fact == b.fact);
    facts
}

/// What nobody could tell of the moved services' data, for the "Not
/// enough evidence" words (`advise::evidence_words`): "the data size of
/// db is unknown (PersistentVolumeClaims could not be listed: forbidden);
/// whether db keeps its data on local volumes is unknown (…); ". Empty
/// when every data fact is known.
pub fn unknown_data_words(facts: &[FactRef]) -> String {
    let mut out = String::new();
    for f in facts.iter().filter(|f| f.value.is_none()) {
        let key = |prefix: &str| {
            f.fact
                .strip_prefix(prefix)
                .and_then(|rest| rest.strip_prefix(' '))
        };
        let said = if let Some(id) = key(UNKNOWN_DATA) {
            format!("the data size of {id} is unknown")
        } else if let Some(id) = key(UNKNOWN_LOCAL) {
            format!("whether {id} keeps its data on local volumes is unknown")
        } else {
            continue;
        };
        out.push_str(&format!("{said} ({}); ", f.source));
    }
    out
}

/// Confidence of a set of deciding facts: the weakest, never an average.
pub fn confidence(facts: &[FactRef]) -> Class {
    crate::fact::weakest(facts.iter().map(|f| f.class)).unwrap_or(Class::Measured)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn terms_serialise_under_their_ids_in_order() {
        let t = Terms::from_fn(|t| t as usize as f64);
        let json = serde_json::to_string(&t).unwrap();
        let keys: Vec<String> = Term::ALL
            .iter()
            .enumerate()
            .map(|(i, t)| format!("\"{}\":{}.0", t.id(), i))
            .collect();
        assert_eq!(json, format!("{{{}}}", keys.join(",")));
        let mut totals = Totals::default();
        for t in Term::ALL {
            assert_eq!(totals.slot(t).is_some(), t.in_totals(), "{t:?}");
            if let Some(v) = totals.slot(t) {
                *v = 1.0 + t as usize as f64;
            }
        }
        let keys: Vec<String> = totals
            .iter()
            .map(|(t, v)| format!("\"{}\":{v:?}", t.id()))
            .collect();
        assert_eq!(
            serde_json::to_string(&totals).unwrap(),
            format!(
                "{{\"cost\":0.0,{},\"cross_site_mb_s\":0.0}}",
                keys.join(",")
            )
        );
    }

    #[test]
    fn ids_round_trip_and_the_gain_is_the_written_out_sum() {
        for t in Term::ALL {
            assert_eq!(Term::from_id(t.id()), Some(t));
        }
        let t = Terms {
            round_trip: 0.1,
            cross_site: 0.2,
            headroom: -0.0,
            copy: 1e-17,
        };
        assert_eq!(t.gain().to_bits(), (0.1f64 + 0.2 + -0.0 + 1e-17).to_bits());
        let z = Terms::default().map(|_| -0.0);
        assert_eq!(z.gain().to_bits(), (-0.0f64).to_bits());
    }

    /// Every term has its row in `docs/advice.md` §5 (label, then its
    /// weight), and the stated order of the sum is [`Term::ALL`].
    #[test]
    fn every_term_has_its_doc_row() {
        let doc = include_str!("../../../docs/advice.md");
        let policy = serde_json::to_value(Policy::default()).unwrap();
        for t in Term::ALL {
            let i = t.info();
            let row = doc
                .lines()
                .find(|l| l.starts_with(&format!("| {} |", i.label)))
                .unwrap_or_else(|| panic!("docs/advice.md has no row for term {}", i.id));
            assert!(row.contains(&format!("`{}` =", i.weight_field)), "{row}");
            assert_eq!(
                policy[i.weight_field].as_f64(),
                Some(t.weight(&Policy::default())),
                "{}",
                i.weight_field
            );
        }
        let ids: Vec<&str> = Term::ALL.iter().map(|t| t.id()).collect();
        assert!(
            doc.contains(&format!("`{}`", ids.join(" + "))),
            "docs/advice.md states the order of the sum as {}",
            ids.join(" + ")
        );
    }

    /// The other pages that list the terms by key list them all, in order.
    #[test]
    fn docs_list_the_terms_in_order() {
        let flat = |text: &str| text.split_whitespace().collect::<Vec<_>>().join(" ");
        let quoted = |ids: &[&str]| {
            ids.iter()
                .map(|id| format!("`{id}`"))
                .collect::<Vec<_>>()
                .join(", ")
        };
        let all: Vec<&str> = Term::ALL.iter().map(|t| t.id()).collect();
        let totals: Vec<&str> = Totals::default().iter().map(|(t, _)| t.id()).collect();
        let mut totals_keys = vec!["cost"];
        totals_keys.extend(&totals);
        totals_keys.push("cross_site_mb_s");
        for (doc, name, want) in [
            (
                include_str!("../../../docs/why.md"),
                "why.md",
                format!("({})", quoted(&all)),
            ),
            (
                include_str!("../../../docs/scenario-format.md"),
                "scenario-format.md",
                format!("({})", quoted(&totals)),
            ),
            (
                include_str!("../../../docs/advice.md"),
                "advice.md",
                format!("({})", quoted(&totals_keys)),
            ),
        ] {
            assert!(flat(doc).contains(&want), "docs/{name} should list {want}");
        }
        // The published schema is derived from `Totals` (`schema.rs`): its
        // members are the struct's, so the struct must hold the terms.
        let members: Vec<String> = totals_keys.iter().map(|k| format!("\"{k}\":0.0")).collect();
        assert_eq!(
            serde_json::to_string(&Totals::default()).unwrap(),
            format!("{{{}}}", members.join(","))
        );
    }
}
