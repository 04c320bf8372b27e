//! Scoring a decider's proposals on equal footing: each proposed move is
//! checked against the constraints and weighed against the bars, in the
//! order proposed, as the engine's own moves are.

use super::*;

// ---------------------------------------------------------------------------
// Scoring.

/// How a decider's proposals fared.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct DeciderResult {
    /// Items in the reply, valid or not.
    pub proposals: usize,
    pub accepted_count: usize,
    pub refused_count: usize,
    /// Refusals per code, in code order.
    pub refused_by_code: BTreeMap<Code, usize>,
    /// Accepted moves whose gain does not clear the bars of SPEC §5 (the
    /// baseline would not have suggested them); some may be negative.
    pub below_bar_count: usize,
    /// Estate cost before − after − copy cost of the accepted moves, points.
    pub projected_gain: f64,
    /// Points paid once for copying the accepted moves' data.
    pub copy_cost: f64,
    /// Cross-site traffic after − before, MB/s (negative: less traffic).
    pub cross_site_mb_s_change: f64,
    /// The weakest confidence over the accepted moves; `null` when none.
    pub weakest_confidence: Option<Class>,
    /// The estate after every accepted move.
    pub totals_after: Totals,
    /// In the order applied.
    pub accepted: Vec<Accepted>,
    /// Proposals that were refused, in reply order.
    pub refused: Vec<Refused>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[cfg_attr(feature = "schema", schemars(rename = "AcceptedProposal"))]
pub struct Accepted {
    /// Position in the decider's reply (0-based).
    pub index: usize,
    /// 1-based position among the accepted moves: the order applied.
    pub step: usize,
    pub service: String,
    pub from: String,
    pub to: String,
    /// Points, after the moves before it; the sum of `terms`.
    pub gain: f64,
    /// The service's cost before this move.
    pub current_cost: f64,
    /// The gain the move would need to clear both bars.
    pub bar: f64,
    /// Does the gain clear both bars? An accepted move need not.
    pub clears_bars: bool,
    /// The verdict on the gain, in words.
    pub verdict: String,
    /// Class of the weakest deciding fact.
    pub confidence: Class,
    /// Plain words when the weakest deciding facts are guesses.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub evidence: Option<String>,
    pub terms: Terms,
    /// The decider's reason.
    pub reason: String,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[cfg_attr(feature = "schema", schemars(rename = "RefusedProposal"))]
pub struct Refused {
    /// Position in the decider's reply (0-based).
    pub index: usize,
    /// As proposed (`null` when the item had none readable).
    #[serde(rename = "serviceId")]
    pub service_id: Option<String>,
    pub to: Option<String>,
    pub reason: Option<String>,
    pub code: Code,
    pub message: String,
    /// For `cant_tell`: the fact that is missing or too uncertain.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fact: Option<String>,
}

/// Validate and score one decider's proposals on the estate as it is.
pub fn score(
    estate: &Estate,
    policy: &Policy,
    now: i64,
    proposals: &[RawProposal],
) -> DeciderResult {
    score_in(&Ctx::new(estate, policy, now), proposals)
}

pub(super) fn verdict(gain: f64, bar: f64) -> (bool, String) {
    let g = signed(gain);
    let b = constraints::round2(bar);
    if gain >= bar && gain > 0.0 {
        (
            true,
            format!("worth it: gain {g} clears the bar of {b} points"),
        )
    } else if gain > 0.0 {
        (
            false,
            format!("below the bar: gain {g} is less than the {b} points a move must gain; the baseline would stay put"),
        )
    } else if gain == 0.0 {
        (false, "no gain: the estate costs the same after it".into())
    } else {
        (
            false,
            format!("harmful: gain {g}; the estate costs more after this move"),
        )
    }
}

pub(super) fn score_in(ctx: &Ctx, proposals: &[RawProposal]) -> DeciderResult {
    let estate = ctx.estate;
    let mut state = State::initial(estate);
    let before = state.totals(ctx);
    // Per service: index of the first proposal naming it, and whether it
    // was accepted (filled in once known).
    let mut first: Vec<Option<(usize, bool)>> = vec![None; estate.services.len()];
    let mut accepted: Vec<Accepted> = Vec::new();
    let mut refused: Vec<Refused> = Vec::new();
    let mut copy_cost = 0.0;
    for (index, raw) in proposals.iter().enumerate() {
        let p = match raw {
            RawProposal::Malformed {
                service_id,
                to,
                reason,
                message,
            } => {
                refused.push(Refused {
                    index,
                    service_id: service_id.clone(),
                    to: to.clone(),
                    reason: reason.clone(),
                    code: Code::Malformed,
                    message: message.clone(),
                    fact: None,
                });
                continue;
            }
            RawProposal::Valid(p) => p,
        };
        let mut refuse = |code: Code, message: String, fact: Option<String>| {
            refused.push(Refused {
                index,
                service_id: Some(p.service_id.clone()),
                to: Some(p.to.clone()),
                reason: Some(p.reason.clone()),
                code,
                message,
                fact,
            })
        };
        let Some(s) = estate.service_index(&p.service_id) else {
            refuse(
                Code::UnknownService,
                format!("there is no service {:?} in this estate", p.service_id),
                None,
            );
            continue;
        };
        if let Some((k, was_accepted)) = first[s] {
            let RawProposal::Valid(earlier) = &proposals[k] else {
                unreachable!("only valid proposals are recorded");
            };
            let outcome = if was_accepted { "accepted" } else { "refused" };
            let message = if earlier.to == p.to {
                format!(
                    "repeats the proposal at index {k} ({} to {}, {outcome}); a service is answered once",
                    p.service_id, p.to
                )
            } else {
                format!(
                    "{} was already proposed at index {k} (to {}, {outcome}); only a service's first proposal counts",
                    p.service_id, earlier.to
                )
            };
            refuse(Code::ProposedTwice, message, None);
            continue;
        }
        first[s] = Some((index, false));
        let c = match destination(ctx, &state, p, s) {
            Ok(c) => c,
            Err((code, message, fact)) => {
                refuse(code, message, fact);
                continue;
            }
        };
        let from = state.placement[s];
        let current_cost = state.current_cost(ctx, s);
        let bar = cost::bar(ctx, current_cost);
        let t = cost::move_terms(ctx, &state, s, c);
        // Show a term that is zero as 0, not -0 (adding +0.0 changes
        // nothing else); `gain` is their sum, as in the advice.
        let terms = t.map(|v| v + 0.0);
        let gain = terms.gain();
        let facts = cost::deciding_facts(ctx, &state, s, c);
        let (clears_bars, verdict) = verdict(gain, bar);
        accepted.push(Accepted {
            index,
            step: accepted.len() + 1,
            service: p.service_id.clone(),
            from: estate.clusters[from].id.clone(),
            to: p.to.clone(),
            gain,
            current_cost,
            bar,
            clears_bars,
            verdict,
            confidence: cost::confidence(&facts),
            evidence: crate::advise::evidence_words(&facts),
            terms,
            reason: p.reason.clone(),
        });
        copy_cost -= terms[Term::Copy];
        state.apply(ctx, s, c);
        first[s] = Some((index, true));
    }
    let after = state.totals(ctx);
    let mut refused_by_code = BTreeMap::new();
    for r in &refused {
        *refused_by_code.entry(r.code).or_insert(0) += 1;
    }
    DeciderResult {
        proposals: proposals.len(),
        accepted_count: accepted.len(),
        refused_count: refused.len(),
        refused_by_code,
        below_bar_count: accepted.iter().filter(|a| !a.clears_bars).count(),
        projected_gain: before.cost - after.cost - copy_cost,
        copy_cost,
        cross_site_mb_s_change: after.cross_site_mb_s - before.cross_site_mb_s,
        weakest_confidence: crate::fact::weakest(accepted.iter().map(|a| a.confidence)),
        totals_after: after,
        accepted,
        refused,
    }
}

/// Where a valid proposal for service `s` goes, or why it is refused (code,
/// message, the fact a can't-tell rests on): a cluster the estate does not
/// have, the cluster it already runs on, a static constraint, or a fit
/// that fails or can't be told.
fn destination(
    ctx: &Ctx,
    state: &State,
    p: &Proposal,
    s: usize,
) -> Result<usize, (Code, String, Option<String>)> {
    let estate = ctx.estate;
    let Some(c) = estate.cluster_index(&p.to) else {
        return Err((
            Code::UnknownCluster,
            format!("there is no cluster {:?} in this estate", p.to),
            None,
        ));
    };
    if state.placement[s] == c {
        return Err((
            Code::AlreadyThere,
            format!("{} already runs on {}", p.service_id, p.to),
            None,
        ));
    }
    let r = constraints::static_refusals(estate, s, c);
    if let Some(head) = r.first() {
        let messages: Vec<&str> = r.iter().map(|r| r.message.as_str()).collect();
        return Err((head.code, messages.join("; "), None));
    }
    match state.fit(ctx, s, c) {
        Fit::Fits => {}
        Fit::DoesNotFit { refusal } => {
            return Err((
                refusal.code,
                format!(
                    "{} does not fit on {}: {}",
                    p.service_id, p.to, refusal.message
                ),
                None,
            ));
        }
        Fit::CantTell { fact, message } => {
            return Err((
                Code::CantTell,
                format!(
                    "can't tell whether {} fits on {}: {message}",
                    p.service_id, p.to
                ),
                Some(fact),
            ));
        }
    }
    Ok(c)
}
