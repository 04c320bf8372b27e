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

use serde::Serialize;

use crate::constraints::{self, Fit, FitCode, Load};
use crate::estate::Estate;
use crate::fact::{Class, Fact, FactRef};
use crate::policy::Policy;
use crate::rtt::RttTable;

/// Everything about an estate that does not change while moves are tried.
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
        let rt = self.policy.round_trip_weight * self.weight[flow] * self.rtt.get(a, b).ms;
        let xs = if self.site_of[a] != self.site_of[b] {
            self.policy.cross_site_weight * self.mb_s[flow]
        } else {
            0.0
        };
        (rt, xs)
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
                    total += p.headroom_weight * (u - p.headroom_threshold)
                        / (1.0 - p.headroom_threshold);
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

/// Points of an estate placement, by term.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize)]
pub struct Totals {
    pub cost: f64,
    pub round_trip: f64,
    pub cross_site: f64,
    pub headroom: f64,
    /// MB/s of traffic between different sites (a quantity, not points).
    pub cross_site_mb_s: f64,
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
        t.cost = t.round_trip + t.cross_site + t.headroom;
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

/// A move's contribution to the gain, by term; `gain` is their sum, in
/// this order, and nothing else.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize)]
pub struct Terms {
    pub round_trip: f64,
    pub cross_site: f64,
    pub headroom: f64,
    pub copy: f64,
}

impl Terms {
    pub fn gain(&self) -> f64 {
        self.round_trip + self.cross_site + self.headroom + self.copy
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
    0.0 - ctx.policy.copy_weight_per_gb * ctx.estate.services[service].data_gb
}

/// The smallest gain a move of `service` must reach: both bars of SPEC §5.
pub fn bar(ctx: &Ctx, current_cost: f64) -> f64 {
    (ctx.policy.min_gain_fraction * current_cost).max(ctx.policy.min_gain_points)
}

/// Every fact the move of `service` to `to` rests on, deduplicated and
/// sorted by key: flow weights and RTTs whose RTT changes, MB/s whose
/// crossing changes, and the capacity facts behind fit and headroom.
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

/// Confidence of a set of deciding facts: the weakest, never an average.
pub fn confidence(facts: &[FactRef]) -> Class {
    crate::fact::weakest(facts.iter().map(|f| f.class)).unwrap_or(Class::Measured)
}
