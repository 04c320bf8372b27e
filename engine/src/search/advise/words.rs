//! A result in words: the group of a compound step described, the
//! evidence behind a move, and what the advice cannot tell.

use super::*;

/// The group of a compound step, from the placement before it: its gain,
/// cost and bar, its confidence (the weakest deciding fact of any member,
/// each taken at its turn), and each member moved alone.
pub(super) fn describe_group(
    ctx: &Ctx,
    state: &mut State,
    kind: GroupKind,
    members: &[(usize, usize)],
    first_step: usize,
) -> Group {
    let estate = ctx.estate;
    let ids: Vec<usize> = members.iter().map(|&(s, _)| s).collect();
    let current_cost = group::current_cost(ctx, state, &ids);
    let bar = cost::step_bar(ctx, current_cost, ids.len());
    let terms = group::replay(ctx, state, members).expect("the search replayed this group");
    let gain: f64 = terms.iter().map(Terms::gain).sum();
    let facts = group_facts(ctx, state, members);
    let alone: Vec<Alone> = members
        .iter()
        .map(|&(s, c)| Alone {
            service: estate.services[s].id.clone(),
            to: estate.clusters[c].id.clone(),
            gain: cost::move_terms(ctx, state, s, c).gain(),
            bar: cost::bar(ctx, state.current_cost(ctx, s)),
            fits: state.certainly_fits(ctx, s, c),
        })
        .collect();
    let summary = group_summary(ctx, kind, &alone, gain, (current_cost, bar));
    Group {
        kind,
        steps: (first_step..first_step + members.len()).collect(),
        services: alone.iter().map(|a| a.service.clone()).collect(),
        gain,
        current_cost,
        bar,
        confidence: cost::confidence(&facts),
        alone,
        summary,
    }
}

/// Every member's deciding facts, each at its turn, merged by key.
pub(crate) fn group_facts(ctx: &Ctx, state: &State, members: &[(usize, usize)]) -> Vec<FactRef> {
    let mut facts = Vec::new();
    let mut scratch = state.clone();
    for &(s, c) in members {
        facts.extend(cost::deciding_facts(ctx, &scratch, s, c));
        scratch.apply(ctx, s, c);
    }
    facts.sort_by(|a, b| a.fact.cmp(&b.fact));
    facts.dedup_by(|a, b| a.fact == b.fact);
    facts
}

/// "Moving cart alone costs 12.4 points; moving cart-redis alone gains
/// nothing; moved together, cart and cart-redis gain 48.0 points against
/// a bar of 7.2 (15 % of their cost, 48.0)." The bar is said with the rule
/// that set it, so a large step reads "12 services must gain at least 24
/// points (2 each); together they gain 4.16".
pub(super) fn group_summary(
    ctx: &Ctx,
    kind: GroupKind,
    alone: &[Alone],
    gain: f64,
    (current_cost, bar): (f64, f64),
) -> String {
    let r = constraints::round2;
    let each: Vec<String> = alone
        .iter()
        .map(|a| {
            let what = if !a.fits {
                format!("does not certainly fit on {}", a.to)
            } else if r(a.gain) == 0.0 {
                "gains nothing".to_string()
            } else if a.gain <= 0.0 {
                format!("costs {} points", r(-a.gain))
            } else if a.gain >= a.bar {
                // A group weighed against single moves may hold a member
                // that would clear its own bar: the group beat that.
                format!("gains {} points", r(a.gain))
            } else {
                format!("gains only {} points (bar {})", r(a.gain), r(a.bar))
            };
            format!("moving {} alone {what}", a.service)
        })
        .collect();
    let names: Vec<&str> = alone.iter().map(|a| a.service.as_str()).collect();
    let together = match kind {
        GroupKind::Together | GroupKind::Gathered | GroupKind::Planned => {
            format!("moved together, {} gain", and_list(&names))
        }
        GroupKind::MakeRoom => {
            format!("with {} leaving first to make room, the two gain", names[0])
        }
    };
    let mut first = each.join("; ");
    if let Some(c) = first.get_mut(0..1) {
        c.make_ascii_uppercase();
    }
    let p = ctx.policy;
    let n = alone.len();
    let rule = if p.min_gain_points * n as f64 >= p.min_gain_fraction * current_cost {
        format!(
            "{n} services must gain at least {} points ({} each)",
            r(bar),
            r(p.min_gain_points)
        )
    } else {
        format!(
            "the step must gain at least {} points ({} % of its cost, {})",
            r(bar),
            r(p.min_gain_fraction * 100.0),
            r(current_cost)
        )
    };
    format!("{first}; {together} {} points; {rule}.", r(gain))
}

/// "a, b and c".
pub(super) fn and_list(names: &[&str]) -> String {
    match names.split_last() {
        None => String::new(),
        Some((last, [])) => last.to_string(),
        Some((last, rest)) => format!("{} and {last}", rest.join(", ")),
    }
}

/// "Not enough evidence" wording when the weakest deciding fact is a guess.
pub fn evidence_words(facts: &[FactRef]) -> Option<String> {
    let guesses = facts.iter().filter(|f| f.class == Class::Guessed).count();
    if guesses == 0 {
        return None;
    }
    let total = facts.len();
    let verb = if guesses == 1 {
        "is a guess"
    } else {
        "are guesses"
    };
    // Traffic nobody observed is named first: it is the input most likely
    // to be a hidden zero (docs/advice.md §2 "Traffic coverage").
    let never: Vec<&str> = facts
        .iter()
        .filter(|f| f.value.is_none() && f.source == crate::estate::NEVER_OBSERVED)
        .filter_map(|f| f.fact.strip_prefix("traffic "))
        .collect();
    let unobserved = match never.len() {
        0 => String::new(),
        n => format!(
            "the traffic of {} {} never been observed; ",
            and_list(&never),
            if n == 1 { "has" } else { "have" }
        ),
    };
    let unknown_data = crate::cost::unknown_data_words(facts);
    Some(format!(
        "Not enough evidence to recommend — {unobserved}{unknown_data}{guesses} of {total} inputs {verb}."
    ))
}

/// Per service not moved: its best destination whose fit can't be told,
/// when that destination would clear the bars and beat every destination
/// that certainly fits — the places where uncertainty, not the cost, is
/// what keeps a move from being recommended. One entry per service at
/// most, so the list stays readable on large estates.
pub(super) fn cant_tell(
    ctx: &Ctx,
    state: &State,
    candidates: &Candidates,
    deltas: &mut Deltas,
    prospects: &mut Prospects,
    moved: &[bool],
) -> Vec<CantTell> {
    let mut out = Vec::new();
    let mut by_site = vec![(0.0, 0.0); ctx.estate.sites.len()];
    for (s, &done) in moved.iter().enumerate() {
        let cands = candidates.of(s);
        // A moved service is not moved again (and its cache is not kept).
        if cands.is_empty() || done {
            continue;
        }
        if prospects.is_stale(s) {
            // Its bounds say whether any candidate could clear the bar
            // (the test below, on bounds); only then is it read afresh.
            prospects.update(ctx, state, deltas, s);
            if short_of(prospects.most[s], prospects.bar[s]) {
                continue;
            }
            prospects.refresh(ctx, state, candidates, deltas, s);
        }
        let copy = cost::copy_term(ctx, s);
        let leave = state.marginal_headroom(ctx, s);
        let bar = cost::bar(ctx, deltas.here[s] + leave);
        // The test each candidate meets below, on the best of them: when
        // even that fails, every candidate does (the sums are the same
        // sums, and adding is monotone), so the walk is skipped.
        if short_of(deltas.best_flows[s] + leave + copy, bar) {
            continue;
        }
        let mut best_fit = f64::NEG_INFINITY;
        let mut best_unsure: Option<(f64, usize)> = None;
        for (c, rt, xs) in deltas.each(ctx, s, cands, &mut by_site) {
            if short_of(rt + xs + leave + copy, bar) {
                continue;
            }
            let gain = Deltas::terms(ctx, state, s, c, (rt, xs), copy).gain();
            if !(gain >= bar && gain > 0.0) {
                continue;
            }
            match state.fit_code(ctx, s, c) {
                FitCode::Fits => best_fit = best_fit.max(gain),
                FitCode::CantTell(_) if best_unsure.is_none_or(|(g, _)| gain > g) => {
                    best_unsure = Some((gain, c));
                }
                _ => {}
            }
        }
        let Some((gain, c)) = best_unsure.filter(|&(g, _)| g > best_fit) else {
            continue;
        };
        if let Fit::CantTell { fact, message } = state.fit(ctx, s, c) {
            out.push(CantTell {
                service: ctx.estate.services[s].id.clone(),
                from: ctx.estate.clusters[state.placement[s]].id.clone(),
                cluster: ctx.estate.clusters[c].id.clone(),
                gain_if_it_fits: gain,
                fact,
                message,
            });
        }
    }
    out
}
