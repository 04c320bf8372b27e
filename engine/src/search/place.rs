//! The single-service placement scorer (SPEC §10): where should *one*
//! service go? Used by evacuation in what-if scenarios ([`crate::whatif`]),
//! "where should this service go?" (`berth place`), and re-placement after
//! a cluster dies.
//!
//! Eligibility is health and the hard constraints of SPEC §4 — nothing
//! else refuses. In particular capacity does **not** refuse here: a
//! cluster over its utilisation target meets a soft wall (a flat cost
//! larger than every bonus together, plus a ramp), so that when nothing
//! has room the least overloaded cluster still ranks first. The
//! three-valued fit of [`constraints::fit`] is reported beside each
//! candidate (and unknown free capacity is noted), never hidden.
//!
//! The score is additive and explainable: the sum of six signed terms, in
//! points, each traceable to one weight of [`PlacementWeights`]:
//!
//! | term | value |
//! |---|---|
//! | headroom | `+headroom_bonus × mean over CPU, memory of clamp(1 − u, 0, 1)` |
//! | over_target | `−(over_target_cost + over_target_ramp × Σ max(0, u − target))` if any `u > target`, else 0 |
//! | incumbency | `+incumbency_bonus` on the cluster the service is on now |
//! | network | `−(round-trip + cross-site points of its flows from there)` |
//! | blast_radius | `−blast_radius_cost × other services of the same owner there` |
//! | youth | `+youth_bonus × (1 − age / youth_window_s)` for a cluster younger than the window |
//!
//! `u` is the cluster's utilisation of a resource *after* placing the
//! service, from the central value of its free-capacity fact and the
//! state's load: `(total − free + load_in + request) / total` (the request
//! is not added again on the cluster the service is already on). A
//! resource whose free capacity is unknown — or, away from its current
//! cluster, whose request is unknown — counts no room (no headroom bonus)
//! and no over-target cost, and is noted as *can't tell*.
//!
//! Candidates are sorted eligible first; among them every cluster where
//! the service might fit (fits, can't tell, or incumbent) before those
//! where it certainly does not; then by score (highest first), ties broken
//! on cluster id; ineligible clusters follow in id order with the refusals
//! that rule them out. See `docs/placement.md`.
//!
//! [`PlacementWeights`]: crate::policy::PlacementWeights

use serde::Serialize;

use crate::constraints::{self, Code, Fit, Refusal};
use crate::cost::{Ctx, State};
use crate::estate::{format_time, Estate};
use crate::policy::{PlacementWeights, Policy};

/// A candidate's score, term by term, in points. `score()` is their sum in
/// field order and nothing else.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct PlaceTerms {
    /// Bonus for room left after placing (≥ 0).
    pub headroom: f64,
    /// Soft wall for a cluster over its utilisation target (≤ 0).
    pub over_target: f64,
    /// Bonus for the cluster the service is on now (≥ 0).
    pub incumbency: f64,
    /// Round-trip and cross-site cost of the service's flows (≤ 0).
    pub network: f64,
    /// Cost of stacking one owner's services on one cluster (≤ 0).
    pub blast_radius: f64,
    /// Bonus for a newly enrolled cluster (≥ 0).
    pub youth: f64,
}

impl PlaceTerms {
    pub fn score(&self) -> f64 {
        self.headroom
            + self.over_target
            + self.incumbency
            + self.network
            + self.blast_radius
            + self.youth
    }
}

/// The three-valued capacity fit of the service on a candidate, reported
/// beside the score (it never refuses in this scorer).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum FitVerdict {
    /// The service is already there: nothing to fit.
    Incumbent,
    /// Certified at the pessimistic end of the free-capacity facts.
    Fits,
    /// Not even at the optimistic end.
    DoesNotFit,
    /// In between, or free capacity unknown.
    CantTell,
}

/// Something a person should know about a candidate that does not make it
/// ineligible: unknown capacity, a fit that can't be told or fails.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[cfg_attr(feature = "schema", schemars(rename = "CandidateNote"))]
pub struct Note {
    pub code: Code,
    /// The fact concerned, e.g. `c-nw-1 cpu_free`.
    pub fact: String,
    pub message: String,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Candidate {
    pub cluster: String,
    /// Index of the cluster in the estate (id order); not serialised.
    #[serde(skip)]
    pub index: usize,
    /// 1-based among eligible candidates; `None` when ineligible.
    pub rank: Option<usize>,
    pub eligible: bool,
    /// The service is on this cluster now.
    pub incumbent: bool,
    /// The sum of `terms`.
    pub score: f64,
    pub terms: PlaceTerms,
    /// Utilisation (0–1, may exceed 1) after placing, central value;
    /// `None` when free capacity is unknown.
    pub cpu_utilisation: Option<f64>,
    pub memory_utilisation: Option<f64>,
    pub fit: FitVerdict,
    /// The advice's gain (its own terms: round trip, cross-site, headroom,
    /// copy) of moving the service here, from the placement the advice
    /// judges it at ([`Placement::judged_after`]); 0 where it runs, `None`
    /// when ineligible. What `berth place` ranks by first.
    pub advice_gain: Option<f64>,
    /// Whether a move here clears the service's bar ([`Placement::bar`])
    /// and certainly fits: a move the advice itself could recommend.
    pub clears_bar: bool,
    /// Why the cluster is ineligible (empty when eligible).
    pub refusals: Vec<Refusal>,
    pub notes: Vec<Note>,
}

/// Rank every cluster for `service`, given the placement and loads in
/// `state` (a cluster that took services earlier has less room).
pub fn rank(ctx: &Ctx, state: &State, service: usize) -> Vec<Candidate> {
    let me = &ctx.estate.services[service];
    // An unknown owner is nobody's: services whose owner nobody knows are
    // not one owner's services stacked on a cluster.
    let same_owner: Vec<usize> = ctx
        .estate
        .services
        .iter()
        .enumerate()
        .filter(|(_, s)| me.owner_known() && s.owner == me.owner)
        .map(|(i, _)| i)
        .collect();
    rank_with(ctx, state, service, &same_owner, &[])
}

/// [`rank`] with the owner's services given (any order, may include
/// `service` itself) and clusters to avoid (`avoid[c]`: being evacuated;
/// empty = none), so that repeated calls need not scan the estate.
pub(crate) fn rank_with(
    ctx: &Ctx,
    state: &State,
    service: usize,
    same_owner: &[usize],
    avoid: &[bool],
) -> Vec<Candidate> {
    let estate = ctx.estate;
    let n = estate.clusters.len();
    let here = state.placement[service];
    let mut owner_count = vec![0usize; n];
    for &m in same_owner {
        if m != service {
            owner_count[state.placement[m]] += 1;
        }
    }
    let mut out: Vec<Candidate> = (0..n)
        .map(|c| {
            let mut refusals: Vec<Refusal> = constraints::static_refusal_codes(estate, service, c)
                // Staying is not leaving: immobility does not refuse home.
                .filter(|r| c != here || !r.is_immobility())
                .map(|r| r.explain(estate))
                .collect();
            if avoid.get(c).copied().unwrap_or(false) {
                refusals.push(Refusal {
                    code: Code::Evacuated,
                    message: format!(
                        "{} is being evacuated in this scenario",
                        estate.clusters[c].id
                    ),
                });
            }
            candidate(ctx, state, service, c, owner_count[c], refusals)
        })
        .collect();
    // A cluster that certainly has no room ranks after every one that might
    // (it stays eligible: when nothing has room the least bad still ranks
    // first, but never above a cluster where the service could fit).
    let might_fit = |c: &Candidate| c.fit != FitVerdict::DoesNotFit;
    out.sort_by(|a, b| {
        b.eligible
            .cmp(&a.eligible)
            .then_with(|| might_fit(b).cmp(&might_fit(a)))
            .then_with(|| {
                if a.eligible {
                    b.score.total_cmp(&a.score)
                } else {
                    std::cmp::Ordering::Equal
                }
            })
            .then(a.index.cmp(&b.index))
    });
    for (k, c) in out.iter_mut().take_while(|c| c.eligible).enumerate() {
        c.rank = Some(k + 1);
    }
    out
}

fn candidate(
    ctx: &Ctx,
    state: &State,
    service: usize,
    c: usize,
    same_owner_here: usize,
    refusals: Vec<Refusal>,
) -> Candidate {
    let estate = ctx.estate;
    let w = &ctx.policy.placement;
    let s = &estate.services[service];
    let cl = &estate.clusters[c];
    let incumbent = state.placement[service] == c;
    let load = state.load[c];
    let mut notes = Vec::new();

    // Headroom and the soft wall, from utilisation after placing.
    let mut room = 0.0;
    let mut excess = 0.0;
    let mut over = false;
    let mut util = [None, None];
    for (k, (free, total, moved_in, request, name, field, word)) in [
        (
            cl.cpu_free.value,
            cl.cpu_total,
            load.cpu_in,
            s.cpu,
            "cpu_free",
            "cpu",
            "CPU",
        ),
        (
            cl.memory_free_gib.value,
            cl.memory_total_gib,
            load.memory_in,
            s.memory_gib,
            "memory_free_gib",
            "memory_gib",
            "memory",
        ),
    ]
    .into_iter()
    .enumerate()
    {
        let Some(free) = free else {
            notes.push(Note {
                code: Code::CantTell,
                fact: format!("{} {name}", cl.id),
                message: format!(
                    "free {word} of {} is unknown: no headroom bonus and no over-target cost \
                     are counted for it",
                    cl.id
                ),
            });
            continue;
        };
        // Where it runs now its request is already in the cluster's free
        // figure, known or not; elsewhere an unknown request is noted like
        // an unknown free capacity, and counted the same way.
        let adding = match (incumbent, request) {
            (true, _) => 0.0,
            (false, Some(r)) => r,
            (false, None) => {
                notes.push(Note {
                    code: Code::CantTell,
                    fact: format!("{} {field}", s.id),
                    message: format!(
                        "the {word} request of {} is unknown: no headroom bonus and no \
                         over-target cost are counted for it",
                        s.id
                    ),
                });
                continue;
            }
        };
        let u = (total - free + moved_in + adding) / total;
        util[k] = Some(u);
        room += (1.0 - u).clamp(0.0, 1.0);
        if u > w.target_utilisation {
            over = true;
            excess += u - w.target_utilisation;
        }
    }
    let headroom = w.headroom_bonus * room / 2.0;
    let over_target = if over {
        -(w.over_target_cost + w.over_target_ramp * excess)
    } else {
        0.0
    };
    let incumbency = if incumbent { w.incumbency_bonus } else { 0.0 };
    let (rt, xs) = state.flow_cost_at(ctx, service, c);
    // `0.0 - x`, not `-x`: a cost of nothing is +0, never -0, in results.
    let network = 0.0 - (rt + xs);
    let blast_radius = 0.0 - w.blast_radius_cost * same_owner_here as f64;
    if !s.owner_known() && w.blast_radius_cost != 0.0 {
        notes.push(Note {
            code: Code::CantTell,
            fact: format!("{} owner", s.id),
            message: format!(
                "the owner of {} is unknown: the blast-radius term is not computed (0)",
                s.id
            ),
        });
    }
    let youth = youth(w, cl.enrolled_at, ctx.now);
    let terms = PlaceTerms {
        headroom,
        over_target,
        incumbency,
        network,
        blast_radius,
        youth,
    };

    let fit = fit_verdict(ctx, state, service, c, incumbent, &mut notes);
    let eligible = refusals.is_empty();
    if !eligible {
        // Capacity remarks about a cluster it cannot go to are noise.
        notes.clear();
    }
    Candidate {
        cluster: cl.id.clone(),
        index: c,
        rank: None,
        eligible,
        incumbent,
        score: terms.score(),
        terms,
        cpu_utilisation: util[0],
        memory_utilisation: util[1],
        fit,
        advice_gain: None,
        clears_bar: false,
        refusals,
        notes,
    }
}

/// The youth bonus of a cluster enrolled at `enrolled_at`: full when new,
/// falling linearly to nothing over the youth window.
fn youth(w: &PlacementWeights, enrolled_at: Option<i64>, now: i64) -> f64 {
    match enrolled_at {
        Some(t) if w.youth_window_s > 0 => {
            let age = (now - t).max(0);
            if age < w.youth_window_s {
                w.youth_bonus * (1.0 - age as f64 / w.youth_window_s as f64)
            } else {
                0.0
            }
        }
        _ => 0.0,
    }
}

/// Whether `service` fits on cluster `c` (its incumbent cluster always
/// does), noting why not or what can't be told.
fn fit_verdict(
    ctx: &Ctx,
    state: &State,
    service: usize,
    c: usize,
    incumbent: bool,
    notes: &mut Vec<Note>,
) -> FitVerdict {
    let cl = &ctx.estate.clusters[c];
    if incumbent {
        FitVerdict::Incumbent
    } else {
        match state.fit(ctx, service, c) {
            Fit::Fits => FitVerdict::Fits,
            Fit::DoesNotFit { refusal } => {
                notes.push(Note {
                    code: refusal.code,
                    fact: format!(
                        "{} {}",
                        cl.id,
                        if refusal.code == Code::NoRoomCpu {
                            "cpu_free"
                        } else {
                            "memory_free_gib"
                        }
                    ),
                    message: refusal.message,
                });
                FitVerdict::DoesNotFit
            }
            Fit::CantTell { fact, message } => {
                // An unknown figure is already noted above.
                if !notes.iter().any(|n| n.fact == fact) {
                    notes.push(Note {
                        code: Code::CantTell,
                        fact,
                        message,
                    });
                }
                FitVerdict::CantTell
            }
        }
    }
}

/// The answer to "where should this service go?", for `berth place`.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Placement {
    pub estate: String,
    pub estate_version: String,
    pub policy_digest: String,
    /// Evaluation time, RFC 3339.
    pub now: String,
    pub service: String,
    pub owner: String,
    /// CPU request, cores; `None` = unknown.
    pub cpu: Option<f64>,
    /// Memory request, GiB; `None` = unknown.
    pub memory_gib: Option<f64>,
    /// The cluster it is on now.
    pub current: String,
    /// The top-ranked eligible cluster; `None` when nothing is eligible.
    pub best: Option<String>,
    /// `stay`, `move` or `nowhere` (no eligible cluster, not even its own).
    #[cfg_attr(feature = "schema", schemars(extend("enum" = ["stay", "move", "nowhere"])))]
    pub verdict: &'static str,
    /// The steps of the recommended moves the ranking is judged after:
    /// those before the service's own step when the advice moves it,
    /// else every recommended move (the advice's placement). The same
    /// evaluation as the advice, so the two never disagree.
    pub judged_after: Vec<usize>,
    /// The smallest gain a move of the service must reach there (both
    /// bars of SPEC §5).
    pub bar: f64,
    /// What the advice does with the service, in words, and why its
    /// destination is not first here when it is not (it moves in a
    /// compound step; it rests on guesses). `None`: the advice does not
    /// move it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub advice: Option<String>,
    pub candidates: Vec<Candidate>,
}

/// Rank the clusters for one service of an estate as it is.
pub fn place(
    estate: &Estate,
    policy: &Policy,
    now: i64,
    service_id: &str,
) -> Result<Placement, String> {
    let service = estate.service_index(service_id).ok_or_else(|| {
        format!(
            "unknown service {service_id:?}: the estate has no service with that id \
             (ids are case-sensitive)"
        )
    })?;
    let ctx = Ctx::new(estate, policy, now);
    // The advice's own evaluation: the recommended moves before the
    // service's step (and the earlier members of its compound step), or
    // all of them when it does not move.
    let advice = crate::advise(estate, policy, now);
    let at = advice.moves.iter().position(|m| m.service == service_id);
    let step_start = at.map(|k| {
        let m = &advice.moves[k];
        m.group.as_ref().map_or(k, |g| k - (m.step - g.steps[0]))
    });
    let mut state = State::initial(estate);
    let mut judged_after = Vec::new();
    for (k, m) in advice.moves.iter().enumerate() {
        let own_step = step_start.is_some_and(|first| k >= first);
        if at.is_some_and(|a| k >= a) {
            break;
        }
        // Recommended moves before the step; inside its own step, the
        // members before it (whatever the step's evidence).
        if m.evidence.is_some() && !own_step {
            continue;
        }
        let (Some(sv), Some(to)) = (
            estate.service_index(&m.service),
            estate.cluster_index(&m.to),
        ) else {
            continue;
        };
        state.apply(&ctx, sv, to);
        judged_after.push(m.step);
    }
    let bar = crate::cost::bar(&ctx, state.current_cost(&ctx, service));
    let mut candidates = rank(&ctx, &state, service);
    for c in candidates.iter_mut().filter(|c| c.eligible) {
        let gain = if c.incumbent {
            0.0
        } else {
            crate::cost::move_terms(&ctx, &state, service, c.index).gain()
        };
        c.advice_gain = Some(gain);
        c.clears_bar = !c.incumbent && gain > 0.0 && gain >= bar && c.fit == FitVerdict::Fits;
    }
    // The advice's order: moves it could recommend (clear the bar, fit)
    // by gain; then staying; then the rest, those that might fit first,
    // by gain. The scorer's own score only breaks ties: its extra terms
    // (headroom bonus, incumbency, blast radius, youth) are columns, and
    // never put a destination above one the advice prefers.
    let class = |c: &Candidate| -> u8 {
        match (c.eligible, c.clears_bar, c.incumbent, c.fit) {
            (false, ..) => 4,
            (true, true, ..) => 0,
            (true, false, true, _) => 1,
            (true, false, false, FitVerdict::DoesNotFit) => 3,
            _ => 2,
        }
    };
    candidates.sort_by(|a, b| {
        class(a)
            .cmp(&class(b))
            .then_with(|| {
                let g = |c: &Candidate| c.advice_gain.unwrap_or(f64::NEG_INFINITY);
                g(b).total_cmp(&g(a))
            })
            .then_with(|| {
                if a.eligible {
                    b.score.total_cmp(&a.score)
                } else {
                    std::cmp::Ordering::Equal
                }
            })
            .then(a.index.cmp(&b.index))
    });
    for (k, c) in candidates.iter_mut().enumerate() {
        c.rank = c.eligible.then_some(k + 1);
    }
    let s = &estate.services[service];
    let words = at.map(|k| {
        let m = &advice.moves[k];
        let first = candidates.first().map(|c| c.cluster.as_str());
        let mut w = format!("The advice moves {} to {} at step {}", m.service, m.to, m.step);
        if let Some(g) = &m.group {
            w.push_str(&format!(
                ", as one compound step with {} (steps {}–{}): moved alone it gains {} points",
                g.services
                    .iter()
                    .filter(|x| **x != m.service)
                    .cloned()
                    .collect::<Vec<_>>()
                    .join(", "),
                g.steps[0],
                g.steps[g.steps.len() - 1],
                constraints::round2(m.gain)
            ));
            if first != Some(m.to.as_str()) {
                w.push_str(&format!(
                    ", so it is not first here: the group gains {} points together against its bar {}",
                    constraints::round2(g.gain),
                    constraints::round2(g.bar)
                ));
            }
        }
        if let Some(e) = &m.evidence {
            w.push_str(&format!(" — but not as a recommendation: {e}"));
        }
        w.push('.');
        w
    });
    let best = candidates.first().filter(|c| c.eligible);
    let verdict = match best {
        None => "nowhere",
        Some(c) if c.incumbent => "stay",
        Some(_) => "move",
    };
    Ok(Placement {
        estate: estate.name.clone(),
        estate_version: crate::export::version(estate),
        policy_digest: policy.digest(),
        now: format_time(now),
        service: s.id.clone(),
        owner: s.owner.clone(),
        cpu: s.cpu,
        memory_gib: s.memory_gib,
        current: estate.clusters[s.cluster].id.clone(),
        best: best.map(|c| c.cluster.clone()),
        verdict,
        judged_after,
        bar,
        advice: words,
        candidates,
    })
}
