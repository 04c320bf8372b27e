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

mod capacity;
mod flips;
mod group;
mod words;
use capacity::*;
use flips::*;
use group::*;
use words::*;

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
