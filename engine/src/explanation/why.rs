//! Why: every recommended move explains itself (SPEC §7).
//!
//! For each move of an [`Advice`], [`explain`] replays the earlier moves
//! and, in the state just before the move's step, lists:
//!
//! - every deciding fact, with its class, source and age (the move's own
//!   `facts`),
//! - the gain's terms, which sum (in the order listed) to the gain, with
//!   the per-flow and per-cluster points behind them,
//! - **flip conditions**: for each deciding fact, the exact value at which
//!   the decision for this service at this step would change — the move
//!   stops clearing the bars, another destination becomes the better one,
//!   or the destination stops fitting — in each direction, or that no value
//!   of the fact changes it. Facts that are not deciding facts but whose
//!   value alone could still change the decision are listed too
//!   (`other_flips`), so that any fact named in neither list provably
//!   cannot change it on its own.
//!
//! The method: one fact is a variable `x`, everything else stays as it is
//! (including the earlier moves). The gain of the service to every
//! candidate destination, its current cost and so the bar are then
//! piecewise linear in `x` (linear for flow weights, MB/s and RTTs;
//! for free capacity, linear between the kinks of the headroom curve, with
//! fit a step at the margin formula's threshold). Each piece is solved in
//! closed form. `docs/why.md` has the formulas and the limits.

use serde::{Deserialize, Serialize};

use crate::json_shape::Word;
use std::collections::BTreeMap;

use crate::advise::{Advice, Move};
use crate::constraints::{self, Load};
use crate::cost::{Capacity, Ctx, FlowFact, State, Terms};
use crate::estate::{Estate, RttFact};
use crate::fact::{Class, Fact, FactRef};
use crate::policy::Policy;
use crate::rtt::{Derivation, RttSource};

/// The explanation of one recommended move.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct MoveWhy {
    pub step: usize,
    pub service: String,
    pub from: String,
    pub to: String,
    /// Points; the sum of `terms`, in the order listed.
    pub gain: f64,
    /// The service's cost before the move (its flows' points where it is,
    /// plus the headroom points it causes there).
    pub current_cost: f64,
    /// The gain the move had to reach: the larger of both bars.
    pub bar: f64,
    /// Which of the two bars is the larger one.
    pub bar_kind: BarKind,
    pub terms: Vec<TermPoints>,
    /// Per flow of the service: its points where the service is and where
    /// it would go. Summed in this order they are exactly the flow part of
    /// the current cost (`from`) and of the cost at the destination (`to`);
    /// the round-trip and cross-site terms are `from − to`.
    pub flows: Vec<FlowPoints>,
    pub headroom: HeadroomPoints,
    /// The best other destination that certainly fits, whether or not it
    /// clears the bars; `None` when there is none.
    pub runner_up: Option<Alternative>,
    /// Every deciding fact (class, source, age), sorted by key: the move's
    /// own `facts`.
    pub facts: Vec<FactRef>,
    /// One per deciding fact, aligned with `facts`.
    pub flips: Vec<Flip>,
    /// Facts that are not deciding facts but whose value alone could
    /// change the decision, sorted by key. Only facts with a threshold.
    pub other_flips: Vec<Flip>,
    /// Set when the explanation could not be computed as asked (the advice
    /// does not match the estate); flips are then empty.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
    /// For a member of a compound step: the group's explanation. The
    /// single-move flips above are then empty (a member alone need not
    /// clear any bar); the group's flips are here.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub group: Option<GroupWhy>,
}

/// Why a compound step (`crate::group`): its terms summed over the
/// members, each member alone, and where the group stops clearing its bar.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct GroupWhy {
    pub summary: String,
    pub gain: f64,
    pub current_cost: f64,
    pub bar: f64,
    /// The members' terms summed, in term order.
    pub terms: Vec<TermPoints>,
    pub alone: Vec<crate::group::Alone>,
    /// Every deciding fact of any member, sorted by key.
    pub facts: Vec<FactRef>,
    /// One per flow weight and MB/s among `facts` (the group's gain and
    /// cost are linear in each, so its threshold is exact), nearest first.
    pub flips: Vec<GroupFlip>,
    /// The other deciding facts, which this analysis does not vary.
    pub not_analysed: Vec<String>,
}

/// Where the group's decision flips when one flow fact changes alone.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct GroupFlip {
    pub fact: String,
    pub class: Class,
    #[serde(deserialize_with = "unit_word")]
    pub unit: Word,
    /// The value the engine used (the policy's assumption when unknown).
    pub value: f64,
    /// Below this the group stops clearing its bar (`None`: no value ≥ 0).
    pub below: Option<f64>,
    /// Above this the group stops clearing its bar.
    pub above: Option<f64>,
    pub sentence: String,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum BarKind {
    /// `min_gain_fraction` × current cost.
    Fraction,
    /// `min_gain_points`.
    Points,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct TermPoints {
    #[serde(deserialize_with = "term_word")]
    pub term: Word,
    pub points: f64,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct FlowPoints {
    /// `from→to` service ids.
    pub flow: String,
    pub peer: String,
    pub peer_cluster: String,
    /// Effective weight (the policy's assumption when unknown).
    pub weight: f64,
    /// Effective MB/s (the policy's assumption when unknown).
    pub mb_s: f64,
    pub rtt_from_ms: f64,
    pub rtt_to_ms: f64,
    pub round_trip_from: f64,
    pub round_trip_to: f64,
    pub cross_site_from: f64,
    pub cross_site_to: f64,
}

/// The headroom term: what leaving saves at the source minus what
/// arriving costs at the destination.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct HeadroomPoints {
    pub from_saves: f64,
    pub to_costs: f64,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[cfg_attr(feature = "schema", schemars(rename = "RunnerUp"))]
pub struct Alternative {
    pub cluster: String,
    pub gain: f64,
    pub clears_bar: bool,
}

/// The flip conditions of one fact.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Flip {
    /// The fact's key, as in `facts`.
    pub fact: String,
    /// The stored fact behind the key when it is shared by other keys: a
    /// site link sets the RTT of every cluster pair across its two sites
    /// that has no measured path, so changing it changes all of them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stored_as: Option<String>,
    /// For an RTT that no stored fact gives: its rung of the evidence
    /// ladder (`great_circle`, `unknown`, `same_site`, `same_cluster`).
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "crate::fact::derivation_word"
    )]
    pub derivation: Option<Word>,
    /// The value is an estimate or a policy value, not a stored fact. Its
    /// thresholds (when computed) say what a measurement would have to
    /// show to change the decision.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub estimated: bool,
    /// For an estimated RTT analysed as a variable: what a measurement of
    /// it would set, `sites fra↔nw` (a site link: every cluster pair across
    /// the two sites without a measured path) or `site fra` (every pair of
    /// its clusters without a measured path).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub applies_to: Option<String>,
    pub value: Option<f64>,
    pub class: Class,
    #[serde(deserialize_with = "unit_word")]
    pub unit: Word,
    pub status: FlipStatus,
    /// The nearest value above the current one at which the decision
    /// changes, and how.
    pub above: Option<Threshold>,
    /// The nearest value below the current one (down to 0).
    pub below: Option<Threshold>,
    /// Plain sentences: one per threshold, or why there is none.
    pub sentences: Vec<String>,
    /// Which stored fact this is, for programs (tests, what-if): not part
    /// of the serialised result.
    #[serde(skip)]
    pub id: Option<FactId>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum FlipStatus {
    /// Computed exactly: thresholds, or no value changes it.
    Exact,
    /// The same-cluster nominal: a policy value no stored fact can
    /// replace (a path joins two different clusters), so nothing to adjust.
    NotAFact,
    /// The fact's value is unknown: there is no value to move from.
    Unknown,
    /// The key could not be traced to a stored fact.
    NotAnalysed,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Threshold {
    /// The exact boundary. Just past it (away from the current value) the
    /// decision changes; between the current value and it, it does not.
    pub value: f64,
    pub effect: Effect,
    pub sentence: String,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[cfg_attr(feature = "schema", schemars(rename = "FlipEffect"))]
#[serde(tag = "effect", rename_all = "snake_case")]
pub enum Effect {
    /// The move's gain would fall below the bar.
    BelowBar { bar: BarKind },
    /// The move would gain nothing (only when the bars are at or below 0).
    NoGain,
    /// Another destination of the service would have the better gain (or
    /// an equal one and the lower cluster id).
    OtherDestination { cluster: String },
    /// The destination would no longer certainly have room.
    NoRoom { cluster: String },
}

/// Every unit a Why names a fact's value in (`FactId::unit`,
/// `unit_of_key`); a flow weight has none.
/// `s` is a traffic observation window, `GB` a data size.
pub const UNITS: [&str; 7] = ["", "MB/s", "ms", "cores", "GiB", "s", "GB"];

fn unit_word<'de, D: serde::Deserializer<'de>>(d: D) -> Result<&'static str, D::Error> {
    crate::json_shape::known_word(d, &UNITS, "unit")
}

/// A term's key read back from a result ([`crate::cost::Term::id`]).
fn term_word<'de, D: serde::Deserializer<'de>>(d: D) -> Result<&'static str, D::Error> {
    let keys = crate::cost::Term::ALL.map(|t| t.id());
    crate::json_shape::known_word(d, &keys, "term")
}

/// A stored fact, by position in the estate.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum FactId {
    /// `Estate::flows[i].weight`.
    Weight(usize),
    /// `Estate::flows[i].mb_s`.
    MbS(usize),
    /// `Estate::paths[i].rtt_ms`.
    Path(usize),
    /// `Estate::links[i].rtt_ms`.
    Link(usize),
    /// `Estate::clusters[i].cpu_free`.
    Cpu(usize),
    /// `Estate::clusters[i].memory_free_gib`.
    Memory(usize),
    /// The RTT between sites `a < b` when no site link gives it: the
    /// great-circle estimate or the unknown default. It sets every cluster
    /// pair across the two sites without a measured path, as a site link
    /// would; a measurement of it is a site link.
    SiteRtt(usize, usize),
    /// The same-site nominal of site `i`: the RTT of every pair of distinct
    /// clusters on it without a measured path. A measurement of it is a
    /// path for each of those pairs.
    SameSite(usize),
}

/// A measured fact with `value`, for what-if edits.
fn measured(value: f64) -> Fact {
    Fact {
        value: Some(value),
        class: Class::Measured,
        source: "what-if".into(),
        observed_at: None,
    }
}

impl FactId {
    /// Set the fact's value in `estate` (class, source and time kept).
    ///
    /// An estimated RTT becomes evidence: [`FactId::SiteRtt`] a site link
    /// (a link between the sites whose value is unknown gets the value),
    /// [`FactId::SameSite`] a measured path for every pair of the site's
    /// clusters that has no measured path (a path whose value is unknown
    /// gets the value).
    pub fn set(self, estate: &mut Estate, value: f64) {
        match self {
            FactId::SiteRtt(a, b) => {
                let mut found = false;
                for l in &mut estate.links {
                    if (l.a.min(l.b), l.a.max(l.b)) == (a, b) {
                        l.rtt_ms.value = Some(value);
                        found = true;
                    }
                }
                if !found {
                    estate.links.push(RttFact {
                        a,
                        b,
                        rtt_ms: measured(value),
                        bandwidth_mb_s: None,
                    });
                }
            }
            FactId::SameSite(site) => {
                let on: Vec<usize> = (0..estate.clusters.len())
                    .filter(|&c| estate.clusters[c].site == site)
                    .collect();
                for (i, &x) in on.iter().enumerate() {
                    for &y in &on[i + 1..] {
                        let same = |p: &RttFact| (p.a.min(p.b), p.a.max(p.b)) == (x, y);
                        if estate
                            .paths
                            .iter()
                            .any(|p| same(p) && p.rtt_ms.value.is_some())
                        {
                            continue;
                        }
                        let mut found = false;
                        for p in estate.paths.iter_mut().filter(|p| same(p)) {
                            p.rtt_ms.value = Some(value);
                            found = true;
                        }
                        if !found {
                            estate.paths.push(RttFact {
                                a: x,
                                b: y,
                                rtt_ms: measured(value),
                                bandwidth_mb_s: None,
                            });
                        }
                    }
                }
            }
            _ => {
                if let Some(fact) = self.fact_mut(estate) {
                    fact.value = Some(value);
                }
            }
        }
    }

    /// The stored fact; `None` for an estimated RTT.
    pub fn fact(self, estate: &Estate) -> Option<&Fact> {
        Some(match self {
            FactId::Weight(i) => &estate.flows[i].weight,
            FactId::MbS(i) => &estate.flows[i].mb_s,
            FactId::Path(i) => &estate.paths[i].rtt_ms,
            FactId::Link(i) => &estate.links[i].rtt_ms,
            FactId::Cpu(i) => &estate.clusters[i].cpu_free,
            FactId::Memory(i) => &estate.clusters[i].memory_free_gib,
            FactId::SiteRtt(..) | FactId::SameSite(_) => return None,
        })
    }

    fn fact_mut(self, estate: &mut Estate) -> Option<&mut Fact> {
        Some(match self {
            FactId::Weight(i) => &mut estate.flows[i].weight,
            FactId::MbS(i) => &mut estate.flows[i].mb_s,
            FactId::Path(i) => &mut estate.paths[i].rtt_ms,
            FactId::Link(i) => &mut estate.links[i].rtt_ms,
            FactId::Cpu(i) => &mut estate.clusters[i].cpu_free,
            FactId::Memory(i) => &mut estate.clusters[i].memory_free_gib,
            FactId::SiteRtt(..) | FactId::SameSite(_) => return None,
        })
    }

    /// The value the engine uses: the stored value, or for an estimated
    /// RTT the estimate (flow facts: the stored value, not the policy's
    /// assumption for an unknown one).
    pub fn value(self, ctx: &Ctx) -> Option<f64> {
        match self {
            FactId::SiteRtt(a, b) => Some(ctx.rtt.site(a, b).ms),
            FactId::SameSite(i) => Some(ctx.rtt.site(i, i).ms),
            _ => self.fact(ctx.estate).and_then(|f| f.value),
        }
    }

    /// Is this an estimated RTT (no stored fact behind it)?
    pub fn is_estimated(self) -> bool {
        matches!(self, FactId::SiteRtt(..) | FactId::SameSite(_))
    }

    /// The largest value the fact may take: free capacity cannot exceed
    /// the cluster's total (the loader's rule); everything else is only
    /// bounded below, by 0.
    pub fn upper_bound(self, estate: &Estate) -> f64 {
        match self {
            FactId::Cpu(i) => estate.clusters[i].cpu_total,
            FactId::Memory(i) => estate.clusters[i].memory_total_gib,
            _ => f64::INFINITY,
        }
    }

    pub fn unit(self) -> &'static str {
        match self {
            FactId::Weight(_) => "",
            FactId::MbS(_) => "MB/s",
            FactId::Path(_) | FactId::Link(_) | FactId::SiteRtt(..) | FactId::SameSite(_) => "ms",
            FactId::Cpu(_) => "cores",
            FactId::Memory(_) => "GiB",
        }
    }

    /// The variable behind the RTT between clusters `a` and `b`: a stored
    /// path or link, or an estimated RTT; the same-cluster nominal has none.
    fn of_rtt(ctx: &Ctx, a: usize, b: usize) -> Result<FactId, Derivation> {
        let rtt = ctx.rtt.get(a, b);
        match rtt.source {
            RttSource::Path(i) => Ok(FactId::Path(i)),
            RttSource::Link(i) => Ok(FactId::Link(i)),
            RttSource::Nominal => match rtt.derivation {
                Derivation::SameSite => Ok(FactId::SameSite(ctx.site_of[a])),
                Derivation::GreatCircle | Derivation::Unknown => {
                    let (x, y) = (ctx.site_of[a], ctx.site_of[b]);
                    Ok(FactId::SiteRtt(x.min(y), x.max(y)))
                }
                d => Err(d),
            },
        }
    }
}

/// Explain every move of `advice`, which must come from
/// `advise(estate, policy, now)`: one [`MoveWhy`] per move, in order.
pub fn explain(estate: &Estate, policy: &Policy, now: i64, advice: &Advice) -> Vec<MoveWhy> {
    let ctx = Ctx::new(estate, policy, now);
    let mut state = State::initial(estate);
    let mut scratch = Scratch {
        link_slot: vec![usize::MAX; estate.links.len()],
        path_slot: vec![usize::MAX; estate.paths.len()],
        site_slot: vec![usize::MAX; estate.sites.len() * estate.sites.len()],
        ns: estate.sites.len(),
    };
    let mut out = Vec::with_capacity(advice.moves.len());
    let mut group_why_now: Option<GroupWhy> = None;
    // A step resting on guesses is listed but not made (`advise`): it is
    // explained on a copy of the placement, dropped after the step.
    let mut aside: Option<State> = None;
    for m in &advice.moves {
        let first_of_step = m.group.as_ref().is_none_or(|g| g.steps[0] == m.step);
        let last_of_step = m
            .group
            .as_ref()
            .is_none_or(|g| g.steps.last() == Some(&m.step));
        if first_of_step {
            aside = m.evidence.is_some().then(|| state.clone());
        }
        let state: &mut State = aside.as_mut().unwrap_or(&mut state);
        let ids = (
            estate.service_index(&m.service),
            estate.cluster_index(&m.to),
        );
        let (Some(s), Some(to)) = ids else {
            out.push(unexplained(
                m,
                "the move names a service or cluster not in this estate",
            ));
            continue;
        };
        if state.placement[s] == to || estate.clusters[state.placement[s]].id != m.from {
            out.push(unexplained(
                m,
                "the move does not match this estate's placement",
            ));
            continue;
        }
        // Static candidates of the service (as `advise::feasibility`).
        let cands: Vec<usize> = (0..estate.clusters.len())
            .filter(|&c| c != state.placement[s] && constraints::statically_allowed(estate, s, c))
            .collect();
        let mut why = explain_move(&ctx, state, &cands, s, to, m, &mut scratch);
        if let Some(g) = &m.group {
            if g.steps.first() == Some(&m.step) {
                group_why_now = group_why(&ctx, state, g);
            }
            why.group = group_why_now.clone();
        }
        out.push(why);
        state.apply(&ctx, s, to);
        if last_of_step {
            aside = None;
        }
    }
    out
}

/// The group's Why from the placement before its first member moves, or
/// `None` when the group does not match the estate.
fn group_why(ctx: &Ctx, state: &State, g: &crate::group::Group) -> Option<GroupWhy> {
    let estate = ctx.estate;
    let mut members = Vec::new();
    for a in &g.alone {
        members.push((
            estate.service_index(&a.service)?,
            estate.cluster_index(&a.to)?,
        ));
    }
    let ids: Vec<usize> = members.iter().map(|&(s, _)| s).collect();
    let mut scratch = state.clone();
    let terms = crate::group::replay(ctx, &mut scratch, &members)?;
    let mut sum = Terms::from_fn(|_| 0.0);
    for t in &terms {
        sum = Terms::from_fn(|k| sum.get(k) + t.get(k));
    }
    let facts = crate::advise::group_facts(ctx, state, &members);

    // Gain and cost of the group for a context (one flow fact changed).
    let eval = |c: &Ctx| -> Option<(f64, f64)> {
        let mut st = state.clone();
        let t = crate::group::replay(c, &mut st, &members)?;
        Some((
            t.iter().map(Terms::gain).sum(),
            crate::group::current_cost(c, state, &ids),
        ))
    };
    let mut flows: Vec<usize> = ids
        .iter()
        .flat_map(|&s| ctx.adjacency[s].iter().map(|&(f, _)| f))
        .collect();
    flows.sort_unstable();
    flows.dedup();
    // The group at the current values: the same for every fact varied.
    let base = eval(ctx);
    let mut flips = Vec::new();
    let mut analysed: Vec<&str> = Vec::new();
    for f in &facts {
        let hit = flows.iter().find_map(|&fl| {
            [FlowFact::Weight, FlowFact::MbS]
                .into_iter()
                .find(|&w| ctx.flow_fact(fl, w).fact == f.fact)
                .map(|w| (fl, w))
        });
        let Some((fl, which)) = hit else {
            continue;
        };
        analysed.push(f.fact.as_str());
        let x0 = match which {
            FlowFact::Weight => ctx.weight[fl],
            FlowFact::MbS => ctx.mb_s[fl],
        };
        let mut c1 = ctx.clone();
        // One unit up: gain and cost are linear in the fact, so two
        // evaluations give them exactly (up to rounding).
        match which {
            FlowFact::Weight => c1.weight[fl] = x0 + 1.0,
            FlowFact::MbS => c1.mb_s[fl] = x0 + 1.0,
        }
        let (Some((g0, k0)), Some((g1, k1))) = (base, eval(&c1)) else {
            continue;
        };
        let (dg, dk) = (g1 - g0, k1 - k0);
        let p = ctx.policy;
        // The group clears when G(x) ≥ max(points, fraction·C(x)) and
        // G(x) > 0: each side linear in x, so the roots are closed form.
        let g_at = |x: f64| g0 + dg * (x - x0);
        let k_at = |x: f64| k0 + dk * (x - x0);
        // The absolute bar once per moved service (`cost::step_bar`).
        let points = p.min_gain_points * members.len() as f64;
        let clears = |x: f64| {
            let g = g_at(x);
            g > 0.0 && g >= points.max(p.min_gain_fraction * k_at(x))
        };
        let mut roots = Vec::new();
        let slope_fraction = dg - p.min_gain_fraction * dk;
        if slope_fraction.abs() > 1e-12 {
            roots.push(x0 - (g0 - p.min_gain_fraction * k0) / slope_fraction);
        }
        if dg.abs() > 1e-12 {
            roots.push(x0 - (g0 - points) / dg);
            roots.push(x0 - g0 / dg);
        }
        let tol = 1e-9 * (1.0 + x0.abs());
        // A root is a flip when the decision differs just beyond it.
        let mut below: Option<f64> = None;
        let mut above: Option<f64> = None;
        for r in roots.into_iter().filter(|r| r.is_finite()) {
            let step = 1e-6 * (1.0 + r.abs());
            if r < x0 - tol && r >= 0.0 && !clears(r - step) {
                below = Some(below.map_or(r, |b: f64| b.max(r)));
            }
            if r > x0 + tol && !clears(r + step) {
                above = Some(above.map_or(r, |a: f64| a.min(r)));
            }
        }
        let r = crate::constraints::round2;
        let unit = unit_of_key(&f.fact);
        let sentence = match (below, above) {
            (None, None) => format!(
                "No value of {} alone stops the group clearing its bar (now {}).",
                f.fact,
                r(x0)
            ),
            (b, a) => {
                let mut parts = Vec::new();
                if let Some(b) = b {
                    parts.push(format!("falls below {}", r(b)));
                }
                if let Some(a) = a {
                    parts.push(format!("rises above {}", r(a)));
                }
                format!(
                    "The group stops clearing its bar if {} {} (now {}{}).",
                    f.fact,
                    parts.join(" or "),
                    r(x0),
                    if unit.is_empty() {
                        String::new()
                    } else {
                        format!(" {unit}")
                    }
                )
            }
        };
        flips.push(GroupFlip {
            fact: f.fact.clone(),
            class: f.class,
            unit,
            value: x0,
            below,
            above,
            sentence,
        });
    }
    // Nearest first: by relative distance to the nearer threshold.
    let distance = |fl: &GroupFlip| {
        let d = |t: Option<f64>| {
            t.map_or(f64::INFINITY, |t| {
                (t - fl.value).abs() / (1.0 + fl.value.abs())
            })
        };
        d(fl.below).min(d(fl.above))
    };
    flips.sort_by(|a, b| {
        distance(a)
            .total_cmp(&distance(b))
            .then_with(|| a.fact.cmp(&b.fact))
    });
    let not_analysed = facts
        .iter()
        .filter(|f| !analysed.contains(&f.fact.as_str()))
        .map(|f| f.fact.clone())
        .collect();
    Some(GroupWhy {
        summary: g.summary.clone(),
        gain: g.gain,
        current_cost: g.current_cost,
        bar: g.bar,
        terms: sum
            .iter()
            .map(|(t, points)| TermPoints {
                term: t.id(),
                points,
            })
            .collect(),
        alone: g.alone.clone(),
        facts,
        flips,
        not_analysed,
    })
}

fn unexplained(m: &Move, why: &str) -> MoveWhy {
    MoveWhy {
        step: m.step,
        service: m.service.clone(),
        from: m.from.clone(),
        to: m.to.clone(),
        gain: m.gain,
        current_cost: m.current_cost,
        bar: m.bar,
        bar_kind: BarKind::Fraction,
        terms: Vec::new(),
        flows: Vec::new(),
        headroom: HeadroomPoints {
            from_saves: 0.0,
            to_costs: 0.0,
        },
        runner_up: None,
        facts: m.facts.clone(),
        flips: Vec::new(),
        other_flips: Vec::new(),
        note: Some(format!("not explained: {why}")),
        group: None,
    }
}

/// Reusable lookup tables: RTT fact → slot in the per-move accumulator.
struct Scratch {
    link_slot: Vec<usize>,
    path_slot: Vec<usize>,
    /// `SiteRtt(a, b)` at `a × ns + b`, `SameSite(a)` at `a × ns + a`.
    site_slot: Vec<usize>,
    ns: usize,
}

/// Everything about one service at one step that does not depend on the
/// fact being varied: the engine's own numbers at the current values.
struct Scene<'a, 'c> {
    ctx: &'a Ctx<'c>,
    state: &'a State,
    s: usize,
    from: usize,
    cands: &'a [usize],
    /// Index of the destination in `cands`.
    b: usize,
    /// Flow points where the service is (round trip + cross-site).
    here: f64,
    /// Headroom at the source before and after leaving.
    h_from: f64,
    h_from_after: f64,
    cc: f64,
    copy: f64,
    /// Per candidate: round-trip and cross-site gain, headroom arriving
    /// costs, total gain, certified fit.
    rt: Vec<f64>,
    xs: Vec<f64>,
    arrive: Vec<f64>,
    g: Vec<f64>,
    fit: Vec<bool>,
}

impl Scene<'_, '_> {
    /// The terms of moving to candidate `k`, from this scene's cache: the
    /// same numbers `cost::move_terms` computes (the evaluation of each
    /// term, repeated here for the fact being varied).
    fn terms_of(&self, k: usize, depart: f64, arrive: f64) -> Terms {
        Terms {
            round_trip: self.rt[k],
            cross_site: self.xs[k],
            // `0.0 - x`, not `-x`: no headroom change is +0, not -0.
            headroom: 0.0 - (depart + arrive),
            copy: self.copy,
        }
    }

    fn gain_of(&self, k: usize, depart: f64, arrive: f64) -> f64 {
        self.terms_of(k, depart, arrive).gain()
    }
}

/// A linear function of the fact's value: `v + d (x − refx)`. `m` bounds
/// the magnitudes summed to get `d`, so that a slope that is zero in exact
/// arithmetic (contributions that cancel) is told from a real one.
#[derive(Clone, Copy, Debug)]
struct Lin {
    v: f64,
    d: f64,
    m: f64,
}

impl Lin {
    fn flat(v: f64) -> Lin {
        Lin { v, d: 0.0, m: 0.0 }
    }
}

/// The model on one piece of the fact's range: current cost and each
/// candidate's gain as linear functions, each candidate's fit constant.
struct Piece {
    refx: f64,
    cc: Lin,
    g: Vec<Lin>,
    fit: Vec<bool>,
    /// Differences this small are ties: 0 on a piece anchored at the
    /// current value (the engine's own numbers decide there), else the
    /// rounding of the numbers involved. Two destinations can have equal
    /// gains in exact arithmetic (same site, same size, both past the
    /// headroom threshold) that floating point computes an ulp apart at
    /// different loads; exact arithmetic gives such a tie to the lower id.
    tie: f64,
}

impl Piece {
    fn with_tie(mut self, anchored: bool) -> Piece {
        self.tie = if anchored {
            0.0
        } else {
            let g = self.g.iter().fold(0.0f64, |m, l| m.max(l.v.abs()));
            1e-12 * (1.0 + self.cc.v.abs() + g)
        };
        self
    }
}

/// What changes at a threshold.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Cond {
    NoRoom,
    BarFraction,
    BarPoints,
    NoGain,
    Better(usize),
}

type Found = Option<(f64, Cond)>;

fn explain_move(
    ctx: &Ctx,
    state: &State,
    cands: &[usize],
    s: usize,
    to: usize,
    m: &Move,
    scratch: &mut Scratch,
) -> MoveWhy {
    let estate = ctx.estate;
    let policy = ctx.policy;
    let from = state.placement[s];
    let svc = &estate.services[s];
    let Some(b) = cands.iter().position(|&c| c == to) else {
        return unexplained(m, "the destination is not allowed for this service");
    };
    // Advice never moves a service whose request is unknown (its fits are
    // all can't tell), so such a move does not match the estate.
    let (Some(cpu), Some(memory_gib)) = (svc.cpu, svc.memory_gib) else {
        return unexplained(
            m,
            "the service's request is unknown, so advice cannot have moved it",
        );
    };

    // The engine's numbers at the current values, by the same expressions
    // as `advise` (so comparisons here agree with it bit for bit).
    let (rt0, xs0) = state.flow_cost_at(ctx, s, from);
    let here = rt0 + xs0;
    let l = state.load[from];
    let without = Load {
        cpu_in: l.cpu_in - cpu,
        memory_in: l.memory_in - memory_gib,
    };
    let h_from = ctx.headroom(from, l);
    let h_from_after = ctx.headroom(from, without);
    let leave = h_from - h_from_after;
    let cc = here + leave;
    // Through the cost module, the one place the copy term is written:
    // `0.0 - w×gb` is +0.0 for a service without data, where `-w×gb`
    // would print "-0.0" in the breakdown.
    let copy = crate::cost::copy_term(ctx, s);
    let n = cands.len();
    let mut sc = Scene {
        ctx,
        state,
        s,
        from,
        cands,
        b,
        here,
        h_from,
        h_from_after,
        cc,
        copy,
        rt: Vec::with_capacity(n),
        xs: Vec::with_capacity(n),
        arrive: Vec::with_capacity(n),
        g: Vec::with_capacity(n),
        fit: Vec::with_capacity(n),
    };
    for &c in cands {
        let (rt1, xs1) = state.flow_cost_at(ctx, s, c);
        sc.rt.push(rt0 - rt1);
        sc.xs.push(xs0 - xs1);
        let lc = state.load[c];
        let after = Load {
            cpu_in: lc.cpu_in + cpu,
            memory_in: lc.memory_in + memory_gib,
        };
        sc.arrive.push(ctx.headroom(c, after) - ctx.headroom(c, lc));
        sc.fit.push(fits_with(ctx, c, lc, cpu, memory_gib, None));
    }
    let depart = h_from_after - h_from;
    for k in 0..n {
        let g = sc.gain_of(k, depart, sc.arrive[k]);
        sc.g.push(g);
    }
    let gain = sc.g[b];
    let bar = crate::cost::bar(ctx, cc);
    let bar_kind = if policy.min_gain_fraction * cc >= policy.min_gain_points {
        BarKind::Fraction
    } else {
        BarKind::Points
    };
    let terms = sc
        .terms_of(b, depart, sc.arrive[b])
        .iter()
        .map(|(t, points)| TermPoints {
            term: t.id(),
            points,
        })
        .collect();
    let flows = ctx.adjacency[s]
        .iter()
        .map(|&(f, p)| {
            let q = state.placement[p];
            let (r0, x0) = ctx.flow_cost(f, from, q);
            let (r1, x1) = ctx.flow_cost(f, to, q);
            let fl = &estate.flows[f];
            FlowPoints {
                flow: format!(
                    "{}→{}",
                    estate.services[fl.from].id, estate.services[fl.to].id
                ),
                peer: estate.services[p].id.clone(),
                peer_cluster: estate.clusters[q].id.clone(),
                weight: ctx.weight[f],
                mb_s: ctx.mb_s[f],
                rtt_from_ms: ctx.rtt.get(from, q).ms,
                rtt_to_ms: ctx.rtt.get(to, q).ms,
                round_trip_from: r0,
                round_trip_to: r1,
                cross_site_from: x0,
                cross_site_to: x1,
            }
        })
        .collect();
    let runner_up = (0..n)
        .filter(|&k| k != b && sc.fit[k])
        .fold(None::<usize>, |best, k| match best {
            Some(j) if sc.g[j] >= sc.g[k] => Some(j),
            _ => Some(k),
        })
        .map(|k| Alternative {
            cluster: estate.clusters[cands[k]].id.clone(),
            gain: sc.g[k],
            clears_bar: sc.g[k] >= bar && sc.g[k] > 0.0,
        });

    let mut why = MoveWhy {
        step: m.step,
        service: svc.id.clone(),
        from: estate.clusters[from].id.clone(),
        to: estate.clusters[to].id.clone(),
        gain,
        current_cost: cc,
        bar,
        bar_kind,
        terms,
        flows,
        headroom: HeadroomPoints {
            from_saves: leave,
            to_costs: sc.arrive[b],
        },
        runner_up,
        facts: m.facts.clone(),
        flips: Vec::new(),
        other_flips: Vec::new(),
        note: None,
        group: None,
    };

    // The model must agree with the engine at the current values: the
    // destination fits, clears both bars and beats every fitting rival.
    let decided = sc.fit[b]
        && gain >= bar
        && gain > 0.0
        && (0..n).all(|k| k == b || !sc.fit[k] || sc.g[k] < gain || (sc.g[k] == gain && k > b));
    if !decided && m.group.is_some() {
        // A member of a compound step: the group decides (see `group_why`).
        return why;
    }
    if !decided {
        why.note = Some(
            "not explained: at the current values this move is not the service's best \
             destination (the advice does not come from this estate and policy)"
                .into(),
        );
        return why;
    }

    // RTT facts: how much each moves the current cost (`common`) and each
    // candidate's gain, per ms.
    let rtt_slopes = rtt_slopes(&sc, scratch);

    // Deciding facts: trace each key back to a stored fact.
    let keys = deciding_keys(&sc);
    let mut done: BTreeMap<FactId, (Found, Found)> = BTreeMap::new();
    // Rows keyed by cluster pairs whose RTT comes from one site link share
    // its thresholds: their sentences name every such pair.
    let mut shared: BTreeMap<FactId, Vec<&str>> = BTreeMap::new();
    for f in &m.facts {
        if let Some(Ok(id @ (FactId::Link(_) | FactId::SiteRtt(..) | FactId::SameSite(_)))) =
            keys.get(f.fact.as_str())
        {
            shared.entry(*id).or_default().push(f.fact.as_str());
        }
    }
    for f in &m.facts {
        let flip = match keys.get(f.fact.as_str()) {
            Some(Ok(id)) => {
                let found = *done
                    .entry(*id)
                    .or_insert_with(|| analyse(&sc, *id, &rtt_slopes));
                let label = shared.get(id).map(|k| k.join(", "));
                flip_row(&sc, f.clone(), Some(*id), found, label)
            }
            Some(Err(d)) => not_a_fact(f, *d, policy),
            None if f.value.is_none() => Flip {
                fact: f.fact.clone(),
                stored_as: None,
                derivation: None,
                estimated: false,
                applies_to: None,
                value: None,
                class: f.class,
                unit: unit_of_key(&f.fact),
                status: FlipStatus::Unknown,
                above: None,
                below: None,
                sentences: vec![unknown_sentence(f)],
                id: None,
            },
            None => Flip {
                fact: f.fact.clone(),
                stored_as: None,
                derivation: None,
                estimated: false,
                applies_to: None,
                value: f.value,
                class: f.class,
                unit: unit_of_key(&f.fact),
                status: FlipStatus::NotAnalysed,
                above: None,
                below: None,
                sentences: vec![format!("{}: not analysed.", f.fact)],
                id: None,
            },
        };
        why.flips.push(flip);
    }

    // Every other fact that enters this service's decision: its flows'
    // weights and MB/s, the RTT facts of its flows from the source and from
    // each candidate, and the free capacity of the source and of each
    // candidate. Only those with a threshold are listed.
    let mut universe: Vec<FactId> = Vec::new();
    for &(f, _) in &ctx.adjacency[s] {
        universe.push(FactId::Weight(f));
        universe.push(FactId::MbS(f));
    }
    universe.extend(rtt_slopes.iter().map(|r| r.id));
    for c in std::iter::once(from).chain(cands.iter().copied()) {
        universe.push(FactId::Cpu(c));
        universe.push(FactId::Memory(c));
    }
    for id in universe {
        if done.contains_key(&id) || (is_capacity(id) && id.value(ctx).is_none()) {
            continue;
        }
        let found = analyse(&sc, id, &rtt_slopes);
        done.insert(id, found);
        if found.0.is_none() && found.1.is_none() {
            continue;
        }
        let fact = stored_fact_ref(ctx, id);
        // Keyed by the stored fact itself: no note needed.
        why.other_flips
            .push(flip_row(&sc, fact, Some(id), found, None));
    }
    why.other_flips.sort_by(|a, b| a.fact.cmp(&b.fact));
    why
}

fn is_capacity(id: FactId) -> bool {
    matches!(id, FactId::Cpu(_) | FactId::Memory(_))
}

/// Key of every fact `cost::deciding_facts` can name for this move →
/// the stored fact, or the rung of a nominal RTT.
fn deciding_keys(sc: &Scene) -> BTreeMap<String, Result<FactId, Derivation>> {
    let ctx = sc.ctx;
    let to = sc.cands[sc.b];
    let mut keys = BTreeMap::new();
    for &(f, p) in &ctx.adjacency[sc.s] {
        let q = sc.state.placement[p];
        keys.insert(
            ctx.flow_fact(f, FlowFact::Weight).fact,
            Ok(FactId::Weight(f)),
        );
        keys.insert(ctx.flow_fact(f, FlowFact::MbS).fact, Ok(FactId::MbS(f)));
        for c in [sc.from, to] {
            let key = ctx.rtt.fact_ref(ctx.estate, c, q, ctx.now).fact;
            keys.insert(key, FactId::of_rtt(ctx, c, q));
        }
    }
    for c in [sc.from, to] {
        for (which, id) in [
            (Capacity::Cpu, FactId::Cpu(c)),
            (Capacity::Memory, FactId::Memory(c)),
        ] {
            if id.value(ctx).is_some() {
                keys.insert(ctx.capacity_fact(c, which).fact, Ok(id));
            }
        }
    }
    keys
}

/// How one RTT fact moves the current cost and each candidate's gain.
struct RttSlope {
    id: FactId,
    /// d(current cost)/dx; also added to every candidate's gain slope.
    common: f64,
    /// Per candidate: minus d(cost at the candidate)/dx.
    per: Vec<f64>,
}

fn rtt_slopes(sc: &Scene, scratch: &mut Scratch) -> Vec<RttSlope> {
    let ctx = sc.ctx;
    let rw = crate::cost::round_trip_per_ms(ctx.policy, 1.0); // per unit of weight
    let n = sc.cands.len();
    let mut out: Vec<RttSlope> = Vec::new();
    let mut slot_of = |id: FactId, out: &mut Vec<RttSlope>| -> usize {
        let ns = scratch.ns;
        let slot = match id {
            FactId::Link(i) => &mut scratch.link_slot[i],
            FactId::Path(i) => &mut scratch.path_slot[i],
            FactId::SiteRtt(a, b) => &mut scratch.site_slot[a * ns + b],
            FactId::SameSite(a) => &mut scratch.site_slot[a * ns + a],
            _ => unreachable!("only RTT facts"),
        };
        if *slot == usize::MAX {
            *slot = out.len();
            out.push(RttSlope {
                id,
                common: 0.0,
                per: vec![0.0; n],
            });
        }
        *slot
    };
    for &(f, p) in &ctx.adjacency[sc.s] {
        let q = sc.state.placement[p];
        let w = rw * ctx.weight[f];
        if let Ok(id) = FactId::of_rtt(ctx, sc.from, q) {
            let i = slot_of(id, &mut out);
            out[i].common += w;
        }
        for (k, &c) in sc.cands.iter().enumerate() {
            if let Ok(id) = FactId::of_rtt(ctx, c, q) {
                let i = slot_of(id, &mut out);
                out[i].per[k] -= w;
            }
        }
    }
    // Release the slots for the next move.
    for r in &out {
        match r.id {
            FactId::Link(i) => scratch.link_slot[i] = usize::MAX,
            FactId::Path(i) => scratch.path_slot[i] = usize::MAX,
            FactId::SiteRtt(a, b) => scratch.site_slot[a * scratch.ns + b] = usize::MAX,
            FactId::SameSite(a) => scratch.site_slot[a * scratch.ns + a] = usize::MAX,
            _ => {}
        }
    }
    out.sort_by_key(|r| r.id);
    out
}

/// Thresholds of one fact: (above, below).
fn analyse(sc: &Scene, id: FactId, rtt: &[RttSlope]) -> (Found, Found) {
    let ctx = sc.ctx;
    let estate = ctx.estate;
    let n = sc.cands.len();
    // Per candidate: slope of its gain and the magnitude behind it.
    let (x0, cc_d, slopes): (f64, f64, Vec<(f64, f64)>) = match id {
        FactId::Cpu(c) | FactId::Memory(c) => return analyse_capacity(sc, id, c),
        FactId::Weight(f) | FactId::MbS(f) => {
            let fl = &estate.flows[f];
            let peer = if fl.from == sc.s { fl.to } else { fl.from };
            let q = sc.state.placement[peer];
            if let FactId::Weight(_) = id {
                let rw = crate::cost::round_trip_per_ms(ctx.policy, 1.0); // per unit of weight
                let ra = ctx.rtt.get(sc.from, q).ms;
                let per = sc
                    .cands
                    .iter()
                    .map(|&c| {
                        let rc = ctx.rtt.get(c, q).ms;
                        (rw * (ra - rc), rw * (ra + rc))
                    })
                    .collect();
                (ctx.weight[f], rw * ra, per)
            } else {
                let xw = crate::cost::cross_site_points(ctx.policy, 1.0); // per MB/s
                let crosses = |c: usize| (ctx.site_of[c] != ctx.site_of[q]) as u8 as f64;
                let ca = crosses(sc.from);
                let per = sc
                    .cands
                    .iter()
                    .map(|&c| (xw * (ca - crosses(c)), xw * (ca + crosses(c))))
                    .collect();
                (ctx.mb_s[f], xw * ca, per)
            }
        }
        FactId::Path(_) | FactId::Link(_) | FactId::SiteRtt(..) | FactId::SameSite(_) => {
            let Some(x0) = id.value(ctx) else {
                return (None, None);
            };
            match rtt.iter().find(|r| r.id == id) {
                // Weights are never negative: `common` and `-per` are the
                // magnitudes of their sums.
                Some(r) => (
                    x0,
                    r.common,
                    r.per.iter().map(|p| (r.common + p, r.common - p)).collect(),
                ),
                None => (x0, 0.0, vec![(0.0, 0.0); n]),
            }
        }
    };
    let piece = Piece {
        refx: x0,
        cc: Lin {
            v: sc.cc,
            d: cc_d,
            m: cc_d.abs(),
        },
        g: sc
            .g
            .iter()
            .zip(&slopes)
            .map(|(&v, &(d, m))| Lin { v, d, m })
            .collect(),
        fit: sc.fit.clone(),
        tie: 0.0,
    };
    let span = |lo, hi, up| Span {
        lo,
        hi,
        up,
        floor: !up,
    };
    let above = solve(sc, &piece, span(x0, f64::INFINITY, true));
    let below = if x0 > 0.0 {
        solve(sc, &piece, span(0.0, x0, false))
    } else {
        None
    };
    (above, below)
}

/// Free capacity of cluster `k`: the headroom curve has kinks and fit is a
/// step, so the range is cut into pieces on which everything is linear,
/// walked outwards from the current value.
fn analyse_capacity(sc: &Scene, id: FactId, k: usize) -> (Found, Found) {
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
fn fits_with(
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
struct Span {
    lo: f64,
    hi: f64,
    up: bool,
    floor: bool,
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
fn solve(sc: &Scene, piece: &Piece, span: Span) -> Found {
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
fn cross(h: Lin, piece: &Piece, span: Span, inclusive: bool) -> Option<f64> {
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

/// `link_label`: the row is keyed by a cluster pair whose RTT comes from a
/// site link (or from an estimate that applies to several pairs); the
/// sentences name the link and every deciding pair it sets (`link_label`),
/// since changing the link changes all of them.
fn flip_row(
    sc: &Scene,
    f: FactRef,
    id: Option<FactId>,
    found: (Found, Found),
    link_label: Option<String>,
) -> Flip {
    let estate = sc.ctx.estate;
    let stored_as = match id {
        Some(FactId::Link(i)) if link_label.is_some() => {
            let l = &estate.links[i];
            Some(format!(
                "site link {}↔{}",
                estate.sites[l.a].id, estate.sites[l.b].id
            ))
        }
        _ => None,
    };
    let unit = id.map_or("", |i| i.unit());
    let value = f.value;
    let estimate = id.and_then(|id| estimate_of(sc.ctx, id));
    let what = match (&link_label, &stored_as, &estimate) {
        (Some(label), Some(link), _) => format!("{label} ({link})"),
        (Some(label), _, Some(e)) => format!("{label} ({}: {})", e.applies_to, e.words),
        // Keyed by the sites themselves (`other_flips`).
        (None, _, Some(e)) => format!("{} ({})", f.fact, e.words),
        _ => f.fact.clone(),
    };
    let measured = estimate.is_some();
    let mk = |t: Found, up: bool| {
        t.map(|(x, cond)| {
            let effect = effect_of(sc, cond);
            let sentence = sentence(&what, measured, up, x, value, unit, &effect, sc);
            Threshold {
                value: x,
                effect,
                sentence,
            }
        })
    };
    let above = mk(found.0, true);
    let below = mk(found.1, false);
    let mut sentences: Vec<String> = above
        .iter()
        .chain(below.iter())
        .map(|t| t.sentence.clone())
        .collect();
    if sentences.is_empty() {
        sentences.push(format!("No value of {} changes it.", f.fact));
    }
    Flip {
        fact: f.fact,
        stored_as,
        derivation: estimate.as_ref().map(|e| e.derivation.as_str()),
        estimated: estimate.is_some(),
        applies_to: estimate.map(|e| e.applies_to),
        value,
        class: f.class,
        unit,
        status: FlipStatus::Exact,
        above,
        below,
        sentences,
        id,
    }
}

/// An estimated RTT analysed as a variable, for words.
struct Estimate {
    derivation: Derivation,
    /// `sites fra↔nw` or `site fra`.
    applies_to: String,
    /// `unknown, 80 ms assumed`, `great-circle estimate 15.38 ms`,
    /// `same-site nominal 1 ms`.
    words: String,
}

fn estimate_of(ctx: &Ctx, id: FactId) -> Option<Estimate> {
    let e = ctx.estate;
    let (a, b) = match id {
        FactId::SiteRtt(a, b) => (a, b),
        FactId::SameSite(a) => (a, a),
        _ => return None,
    };
    let rtt = ctx.rtt.site(a, b);
    let applies_to = if a == b {
        format!("site {}", e.sites[a].id)
    } else {
        format!("sites {}↔{}", e.sites[a].id, e.sites[b].id)
    };
    let words = match rtt.derivation {
        Derivation::Unknown => format!("unknown, {} ms assumed", num(rtt.ms)),
        Derivation::GreatCircle => format!("great-circle estimate {} ms", num(rtt.ms)),
        _ => format!("same-site nominal {} ms", num(rtt.ms)),
    };
    Some(Estimate {
        derivation: rtt.derivation,
        applies_to,
        words,
    })
}

fn not_a_fact(f: &FactRef, d: Derivation, policy: &Policy) -> Flip {
    let what = match d {
        Derivation::SameCluster => format!(
            "the policy's same-cluster nominal ({} ms)",
            num(policy.rtt.same_cluster_ms)
        ),
        Derivation::SameSite => format!(
            "the policy's same-site nominal ({} ms)",
            num(policy.rtt.same_site_ms)
        ),
        Derivation::GreatCircle => "a great-circle estimate from the two sites' coordinates".into(),
        Derivation::Unknown => format!(
            "the policy's default for an unknown RTT ({} ms)",
            num(policy.rtt.unknown_ms)
        ),
        Derivation::MeasuredPath | Derivation::SiteLink => "a stored fact".into(),
    };
    let hint = if d == Derivation::Unknown {
        " (a measured path or a site link would replace it)"
    } else {
        ""
    };
    Flip {
        fact: f.fact.clone(),
        stored_as: None,
        derivation: Some(d.as_str()),
        estimated: true,
        applies_to: None,
        value: f.value,
        class: f.class,
        unit: "ms",
        status: FlipStatus::NotAFact,
        above: None,
        below: None,
        sentences: vec![format!(
            "{} is {what}, not a stored fact: no flip computed{hint}.",
            f.fact
        )],
        id: None,
    }
}

/// The flip sentence of a deciding fact whose value is unknown. Data a
/// reader could not see says why, and what the move's numbers leave out.
fn unknown_sentence(f: &FactRef) -> String {
    let data = crate::cost::unknown_data_words(std::slice::from_ref(f));
    if data.is_empty() {
        return format!(
            "{} is unknown, so there is no value to move from: not analysed.",
            f.fact
        );
    }
    let data = data.trim_end_matches("; ");
    let copy = if f.fact.starts_with(crate::cost::UNKNOWN_DATA) {
        " The copy term counts no data for it: the copy cost is unknown, not 0."
    } else {
        " A move is allowed only because nothing says it is bound; it may not be."
    };
    let mut first = data.to_string();
    if let Some(c) = first.get_mut(0..1) {
        c.make_ascii_uppercase();
    }
    format!("{first}: the move rests on a guess, not analysed.{copy}")
}

fn unit_of_key(key: &str) -> &'static str {
    if key.ends_with("cpu_free") {
        "cores"
    } else if key.ends_with("memory_free_gib") {
        "GiB"
    } else if key.ends_with("mb_s") {
        "MB/s"
    } else if key.starts_with("rtt ") {
        "ms"
    } else if key.starts_with("traffic ") {
        // The window a service's traffic was observed over.
        "s"
    } else if key.starts_with(crate::cost::UNKNOWN_DATA) {
        "GB"
    } else {
        ""
    }
}

/// A stored fact as a result row (for `other_flips`).
fn stored_fact_ref(ctx: &Ctx, id: FactId) -> FactRef {
    let e = ctx.estate;
    match id {
        FactId::Weight(f) => ctx.flow_fact(f, FlowFact::Weight),
        FactId::MbS(f) => ctx.flow_fact(f, FlowFact::MbS),
        FactId::Cpu(c) => ctx.capacity_fact(c, Capacity::Cpu),
        FactId::Memory(c) => ctx.capacity_fact(c, Capacity::Memory),
        FactId::Path(i) => {
            let p = &e.paths[i];
            let mut r = crate::cost::fact_ref(
                format!("rtt {}↔{}", e.clusters[p.a].id, e.clusters[p.b].id),
                &p.rtt_ms,
                f64::NAN,
                ctx.now,
                ctx.policy,
            );
            r.derivation = Some(Derivation::MeasuredPath.as_str());
            r
        }
        FactId::Link(i) => {
            let l = &e.links[i];
            let mut r = crate::cost::fact_ref(
                format!("rtt {}↔{} (site link)", e.sites[l.a].id, e.sites[l.b].id),
                &l.rtt_ms,
                f64::NAN,
                ctx.now,
                ctx.policy,
            );
            r.derivation = Some(Derivation::SiteLink.as_str());
            r
        }
        FactId::SiteRtt(a, b) | FactId::SameSite(a @ b) => {
            let rtt = ctx.rtt.site(a, b);
            let fact = if a == b {
                format!("rtt within site {}", e.sites[a].id)
            } else {
                format!("rtt between sites {}↔{}", e.sites[a].id, e.sites[b].id)
            };
            FactRef {
                fact,
                value: Some(rtt.ms),
                class: rtt.class,
                stored_class: rtt.class,
                source: match rtt.derivation {
                    Derivation::GreatCircle => "great-circle estimate",
                    Derivation::Unknown => "policy default (nothing known)",
                    _ => "policy nominal",
                }
                .into(),
                age_s: 0,
                derivation: Some(rtt.derivation.as_str()),
            }
        }
    }
}

fn effect_of(sc: &Scene, cond: Cond) -> Effect {
    let e = sc.ctx.estate;
    match cond {
        Cond::NoRoom => Effect::NoRoom {
            cluster: e.clusters[sc.cands[sc.b]].id.clone(),
        },
        Cond::BarFraction => Effect::BelowBar {
            bar: BarKind::Fraction,
        },
        Cond::BarPoints => Effect::BelowBar {
            bar: BarKind::Points,
        },
        Cond::NoGain => Effect::NoGain,
        Cond::Better(k) => Effect::OtherDestination {
            cluster: e.clusters[sc.cands[k]].id.clone(),
        },
    }
}

#[allow(clippy::too_many_arguments)]
fn sentence(
    what: &str,
    measured: bool,
    up: bool,
    x: f64,
    now: Option<f64>,
    unit: &str,
    effect: &Effect,
    sc: &Scene,
) -> String {
    let p = sc.ctx.policy;
    let unit = if unit.is_empty() {
        String::new()
    } else {
        format!(" {unit}")
    };
    // An estimate: the threshold is what a measurement would have to show.
    let were = if measured { "were measured" } else { "were" };
    let cond = if Some(x) == now {
        // A tie the destination wins on its id, or a bar met exactly: any
        // change that way flips it.
        format!(
            "{were} any {} than its current {}{unit}",
            if up { "higher" } else { "lower" },
            num_exact(x)
        )
    } else if up {
        format!("{were} above {}{unit}", bound_text(x, true))
    } else if x == 0.0 {
        format!("{were} {}0{unit}", if measured { "at " } else { "" })
    } else {
        format!("{were} below {}{unit}", bound_text(x, false))
    };
    let then = match effect {
        Effect::BelowBar {
            bar: BarKind::Fraction,
        } => format!(
            "this move would no longer clear the bar ({} % of current cost)",
            num(p.min_gain_fraction * 100.0)
        ),
        Effect::BelowBar {
            bar: BarKind::Points,
        } => format!(
            "this move would no longer clear the bar ({} points)",
            num(p.min_gain_points)
        ),
        Effect::NoGain => "this move would no longer gain anything".into(),
        Effect::OtherDestination { cluster } => {
            format!("{cluster} would be the better destination")
        }
        Effect::NoRoom { cluster } => {
            format!("{cluster} would no longer certainly have room for it")
        }
    };
    format!("If {what} {cond}, {then}.")
}

/// A threshold for words, rounded outwards (up for "above", down for
/// "below") so the sentence stays true, with the fewest decimals that keep
/// it within 0.1 % of the exact value.
fn bound_text(x: f64, up: bool) -> String {
    for d in 0..=12i32 {
        let scale = libm::pow(10.0, d as f64);
        let v = x * scale;
        let r = if (v - libm::round(v)).abs() <= 1e-9 * v.abs().max(1.0) {
            libm::round(v)
        } else if up {
            libm::ceil(v)
        } else {
            libm::floor(v)
        } / scale;
        if (r - x).abs() <= 1e-3 * x.abs() || d == 12 {
            return format!("{r:.*}", d as usize);
        }
    }
    unreachable!()
}

/// A fact's value for words, as stored (shortest round-trip form).
fn num_exact(x: f64) -> String {
    format!("{x}")
}

/// A policy number for words: up to 2 decimals, no trailing zeros.
fn num(x: f64) -> String {
    let s = format!("{:.2}", libm::round(x * 100.0) / 100.0);
    s.trim_end_matches('0').trim_end_matches('.').to_string()
}

impl MoveWhy {
    /// The explanation for people: the gain against its bar, then every
    /// flip sentence of the deciding facts, the deciding facts no value of
    /// which changes it, and the other facts that could.
    pub fn lines(&self) -> Vec<String> {
        let mut out = Vec::new();
        if let Some(note) = &self.note {
            out.push(note.clone());
            return out;
        }
        if let Some(g) = &self.group {
            out.push(format!(
                "Part of a group: gain {} here; the group gains {} against its bar {} (group cost {}).",
                crate::numfmt::signed(self.gain),
                crate::numfmt::signed(g.gain),
                num(g.bar),
                num(g.current_cost)
            ));
            out.extend(g.flips.iter().map(|f| f.sentence.clone()));
            if !g.not_analysed.is_empty() {
                out.push(format!(
                    "Not varied for the group: {}.",
                    g.not_analysed.join(", ")
                ));
            }
            return out;
        }
        let bar = match self.bar_kind {
            BarKind::Fraction => format!("the bar {}", num(self.bar)),
            BarKind::Points => format!("the bar {} (minimum points)", num(self.bar)),
        };
        let next = match &self.runner_up {
            Some(a) => format!(
                "; next best {} {}",
                a.cluster,
                crate::numfmt::signed(a.gain)
            ),
            None => "; no other destination certainly fits".into(),
        };
        out.push(format!(
            "Gain {} against {bar} (current cost {}){next}.",
            crate::numfmt::signed(self.gain),
            num(self.current_cost)
        ));
        let mut unchanged = Vec::new();
        for f in &self.flips {
            if f.status == FlipStatus::Exact && f.above.is_none() && f.below.is_none() {
                unchanged.push(f.fact.as_str());
            } else {
                // Rows sharing a site link share their sentences: once.
                for s in &f.sentences {
                    if !out.contains(s) {
                        out.push(s.clone());
                    }
                }
            }
        }
        if !unchanged.is_empty() {
            out.push(format!("No value of {} changes it.", unchanged.join(", ")));
        }
        if !self.other_flips.is_empty() {
            out.push("Other facts that could change it:".into());
            for f in &self.other_flips {
                for s in &f.sentences {
                    out.push(format!("  {s}"));
                }
            }
        }
        out
    }
}
