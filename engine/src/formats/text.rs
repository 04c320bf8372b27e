//! Plain-text rendering of results, for people (`--format text`) and for
//! the golden tests, which print ranked moves with their factors.

use std::fmt::Write;

use crate::advise::{Advice, Move};
use crate::cost::{Term, Terms, Totals};
use crate::money::{self, Money, Saving, Transfer};
use crate::why::MoveWhy;

/// Kept here for callers that format like the text does (tests, tools).
pub use crate::numfmt::signed;

/// One line per move: `cart c-par-1→c-fra-1 +12.4 [rtt +15.1, xsite +3.0, copy -2.7] reported`.
/// Terms that are exactly zero are left out.
pub fn move_line(m: &Move) -> String {
    let terms = nonzero_terms(&m.terms);
    format!(
        "{} {}→{} {} [{}] {}",
        m.service,
        m.from,
        m.to,
        signed(m.gain),
        terms.join(", "),
        m.confidence.as_str()
    )
}

/// A step of the advice as people read it: one move, or every member of
/// a compound step together. The pages, the text output, the plan
/// exports and the notifications number recommendations by these steps
/// (`number`), so "step 8" is the same thing everywhere; a member of a
/// compound step is never a numbered recommendation of its own.
#[derive(Clone, Debug, PartialEq)]
pub struct StepOf {
    /// 1, 2, … among the recommended steps, in order; `None` for a step
    /// resting on guesses, which is listed apart and never recommended.
    pub number: Option<usize>,
    /// Indices into the advice's moves, in the order they are applied
    /// (one for a single move).
    pub moves: Vec<usize>,
    /// Points: the move's gain, or the group's (the sum of its members').
    pub gain: f64,
    /// The weakest deciding fact of the step (the group's for a group).
    pub confidence: crate::fact::Class,
}

/// The advice's moves as steps, in order (see [`StepOf`]).
pub fn steps(moves: &[Move]) -> Vec<StepOf> {
    let mut out = Vec::new();
    let mut number = 0;
    for (i, m) in moves.iter().enumerate() {
        let (members, gain, confidence) = match &m.group {
            None => (vec![i], m.gain, m.confidence),
            // A later member was taken with its group's first.
            Some(g) if g.steps.first() != Some(&m.step) => continue,
            Some(g) => (
                g.steps
                    .iter()
                    .filter_map(|s| moves.iter().position(|o| o.step == *s))
                    .collect(),
                g.gain,
                g.confidence,
            ),
        };
        let number = m.is_recommended().then(|| {
            number += 1;
            number
        });
        out.push(StepOf {
            number,
            moves: members,
            gain,
            confidence,
        });
    }
    out
}

/// A step's title in words: `cart c-par-1→c-fra-2` for a single move;
/// for a compound step "Move carrier-gateway and shipping-quotes to
/// c-fra-3 together" (each destination named when they differ).
pub fn step_title(moves: &[Move], step: &StepOf) -> String {
    let members: Vec<&Move> = step.moves.iter().map(|&i| &moves[i]).collect();
    match members.as_slice() {
        [] => String::new(),
        [m] => format!("{} {}→{}", m.service, m.from, m.to),
        _ => {
            let names: Vec<&str> = members.iter().map(|m| m.service.as_str()).collect();
            if members.iter().all(|m| m.to == members[0].to) {
                format!("Move {} to {} together", and_list(&names), members[0].to)
            } else {
                let each: Vec<String> = members
                    .iter()
                    .map(|m| format!("{} to {}", m.service, m.to))
                    .collect();
                let each: Vec<&str> = each.iter().map(String::as_str).collect();
                format!("Move {} together", and_list(&each))
            }
        }
    }
}

/// "a", "a and b", "a, b and c".
pub fn and_list(items: &[&str]) -> String {
    match items {
        [] => String::new(),
        [a] => (*a).to_string(),
        [rest @ .., last] => format!("{} and {last}", rest.join(", ")),
    }
}

/// Why a compound step's member would not pay alone, in words, from the
/// group's `alone` entry: "alone it would cost 14.2 points", "alone it
/// gains 4.9 points, under its bar of 6.0", "alone it would not certainly
/// fit on c-fra-3". `None` when it would clear its bar alone (a member of
/// a weighed group can).
pub fn alone_words(a: &crate::group::Alone) -> Option<String> {
    if !a.fits {
        return Some(format!("alone it would not certainly fit on {}", a.to));
    }
    if a.gain < 0.0 {
        Some(format!("alone it would cost {:.1} points", -a.gain))
    } else if a.gain < a.bar {
        Some(format!(
            "alone it would gain {:.1} points, under its bar of {:.1}",
            a.gain, a.bar
        ))
    } else {
        None
    }
}

fn group_kind_words(k: crate::group::GroupKind) -> &'static str {
    match k {
        crate::group::GroupKind::Together => "moved together",
        crate::group::GroupKind::Gathered => "gathered together",
        crate::group::GroupKind::MakeRoom => "one makes room for the other",
        crate::group::GroupKind::Planned => "moved together to a searched placement",
    }
}

/// `rtt +15.1`, … for each term that is not exactly zero, in term order.
fn nonzero_terms(t: &Terms) -> Vec<String> {
    t.iter()
        .filter(|&(_, v)| v != 0.0)
        .map(|(term, v)| format!("{} {}", term.short(), signed(v)))
        .collect()
}

fn totals(t: &Totals, money: Option<&Transfer>) -> String {
    let terms: Vec<String> = t
        .iter()
        .map(|(term, v)| format!("{} {v:.1}", term.label()))
        .collect();
    let dollars = money
        .map(|m| format!(" (transfer {})", money::dollars_month(m.usd_month)))
        .unwrap_or_default();
    format!(
        "cost {:.1} ({}); cross-site traffic {:.1} MB/s{dollars}",
        t.cost,
        terms.join(", "),
        t.cross_site_mb_s
    )
}

/// A step's cross-site traffic and money in words: "cross-site traffic
/// −2.1 MB/s, saves $110/month".
fn step_money_line(v: &Saving) -> String {
    format!(
        "cross-site traffic {}{:.1} MB/s, {} {}",
        match v.cross_site_mb_s {
            x if x > 0.0 => "\u{2212}",
            x if x < 0.0 => "+",
            _ => "",
        },
        v.cross_site_mb_s.abs(),
        if v.usd_month >= 0.0 { "saves" } else { "adds" },
        money::dollars_month(v.usd_month)
    )
}

/// The whole advice as a report for people.
pub fn advice(a: &Advice) -> String {
    advice_report(a, &[], None)
}

/// The advice as a report for people, with each move's explanation
/// (`why::explain`, aligned with the moves) printed under it.
pub fn advice_with_why(a: &Advice, why: &[MoveWhy]) -> String {
    advice_report(a, why, None)
}

/// The advice as a report for people: with each move's explanation when
/// `why` has them, and with the traffic read as money (`money::of_advice`)
/// when given — what `berth advise --format text` prints.
pub fn advice_report(a: &Advice, why: &[MoveWhy], money: Option<&Money>) -> String {
    let mut out = String::new();
    report_headline(&mut out, a, money);
    let _ = writeln!(out);
    report_steps(&mut out, a, why, money);
    report_unmoved(&mut out, a);
    out
}

/// The report's first lines: what was evaluated, the totals before and
/// after (with money when given), the bound and what guesses would add.
fn report_headline(out: &mut String, a: &Advice, money: Option<&Money>) {
    let _ = writeln!(
        out,
        "Estate {} (version {}), policy {}, evaluated at {}",
        a.estate, a.estate_version, a.policy_digest, a.now
    );
    let _ = writeln!(
        out,
        "Before: {}",
        totals(&a.totals_before, money.map(|m| &m.before))
    );
    let _ = writeln!(
        out,
        "After:  {}",
        totals(&a.totals_after, money.map(|m| &m.after))
    );
    if let Some(m) = money {
        let s = m.saving();
        let _ = writeln!(
            out,
            "Money: the steps {} cross-site traffic by {:.1} MB/s, {} {} of transfer at the policy's prices (a month of 730 h; a reading, not part of the cost)",
            if s.cross_site_mb_s >= 0.0 {
                "cut"
            } else {
                "add"
            },
            s.cross_site_mb_s.abs(),
            if s.usd_month >= 0.0 {
                "saving"
            } else {
                "adding"
            },
            money::dollars_month(s.usd_month)
        );
    }
    let _ = writeln!(out, "{}", bound_line(&a.bound));
    let unbacked = a.moves.iter().filter(|m| m.evidence.is_some()).count();
    if unbacked > 0 {
        let _ = writeln!(
            out,
            "Not counted above: {unbacked} {} resting on guesses (below) would add {} points if the evidence held.",
            if unbacked == 1 { "move" } else { "moves" },
            crate::constraints::round2(a.unbacked_gain)
        );
    }
}

/// The report's steps, numbered, each compound step under its title, with
/// each move's money, evidence and explanation lines.
fn report_steps(out: &mut String, a: &Advice, why: &[MoveWhy], money: Option<&Money>) {
    if a.moves.is_empty() {
        let _ = writeln!(out, "No move clears the bars: staying put is best.");
    } else {
        let _ = writeln!(
            out,
            "Moves that clear the bars, in order, numbered by step (a compound step is one step;\n\
             confidence = the weakest deciding fact; a step resting on guesses says so,\n\
             is marked \"-\" and is not a recommendation):"
        );
        for s in steps(&a.moves) {
            let mark = match s.number {
                Some(n) => format!("{n:>3}."),
                None => "   -".to_string(),
            };
            let first = &a.moves[s.moves[0]];
            if let Some(g) = first.group.as_ref().filter(|_| s.moves.len() > 1) {
                let _ = writeln!(
                    out,
                    "{mark} {}: {} {} ({})",
                    step_title(&a.moves, &s),
                    signed(s.gain),
                    s.confidence.as_str(),
                    group_kind_words(g.kind)
                );
                let _ = writeln!(out, "     {}", g.summary);
            }
            // The step's traffic as money, under its last move's line.
            let step_money = money.map(|m| step_money_line(&m.of_moves(&s.moves)));
            for &i in &s.moves {
                let m = &a.moves[i];
                let indent = if s.moves.len() > 1 {
                    "     ".to_string()
                } else {
                    format!("{mark} ")
                };
                let _ = writeln!(out, "{indent}{}", move_line(m));
                if let Some(line) = step_money
                    .as_ref()
                    .filter(|_| i == *s.moves.last().unwrap_or(&i))
                {
                    let _ = writeln!(out, "     {line}");
                }
                if let Some(e) = m.evidence.as_ref().filter(|_| i == s.moves[0]) {
                    let _ = writeln!(out, "     {e}");
                }
                if let Some(w) = why.get(i) {
                    for line in w.lines() {
                        let _ = writeln!(out, "     {line}");
                    }
                }
            }
        }
    }
}

/// What the report lists besides the steps: services that cannot move,
/// worthwhile moves whose fit can't be told, unknown capacities and
/// requests.
fn report_unmoved(out: &mut String, a: &Advice) {
    if !a.immovable.is_empty() {
        let _ = writeln!(out, "\nCannot move:");
        for i in &a.immovable {
            let reasons: Vec<String> = i
                .reasons
                .iter()
                .map(|r| {
                    if r.clusters.is_empty() {
                        r.message.clone()
                    } else {
                        let n = r.clusters.len();
                        let noun = if n == 1 { "cluster" } else { "clusters" };
                        format!("{} ({n} {noun}, e.g. {})", r.code.as_str(), r.message)
                    }
                })
                .collect();
            let _ = writeln!(
                out,
                "  {} on {}: {}",
                i.service,
                i.cluster,
                reasons.join("; ")
            );
        }
    }
    if !a.cant_tell.is_empty() {
        let _ = writeln!(out, "\nWorthwhile moves whose fit can't be told:");
        for c in &a.cant_tell {
            let _ = writeln!(
                out,
                "  {} {}→{} would gain {}: {} (fact: {})",
                c.service,
                c.from,
                c.cluster,
                signed(c.gain_if_it_fits),
                c.message,
                c.fact
            );
        }
    }
    if !a.unknown_capacity.is_empty() {
        let _ = writeln!(
            out,
            "\nClusters with unknown free capacity (never a destination):"
        );
        for u in &a.unknown_capacity {
            let _ = writeln!(out, "  {}: missing {}", u.cluster, u.missing.join(", "));
        }
    }
    if !a.unknown_requests.is_empty() {
        let _ = writeln!(
            out,
            "\nServices with an unknown request (never moved: whether they fit can't be told):"
        );
        for u in &a.unknown_requests {
            let _ = writeln!(
                out,
                "  {} on {}: missing {}",
                u.service,
                u.cluster,
                u.missing.join(", ")
            );
        }
    }
}

/// The proven bound in one sentence. Both figures are rounded *down* (one
/// decimal), so the words stay true: "at least" holds of what is printed.
pub fn bound_line(b: &crate::bound::Bound) -> String {
    let down = |x: f64| (x * 10.0).floor() / 10.0;
    let best = down(b.cost_at_least);
    match b.captured_at_least {
        Some(share) => format!(
            "The best possible is at least {best:.1} points; the recommended moves capture at least {:.1} % of the improvement that can exist.",
            down(share * 100.0)
        ),
        None => format!(
            "The best possible is at least {best:.1} points; no placement can improve on this one."
        ),
    }
}

/// A decider comparison as a report for people: one block per decider,
/// accepted moves in the order applied, then "Proposals that were refused"
/// one by one with code and message.
pub fn comparison(c: &crate::decider::Comparison) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "Estate {} (version {}), policy {}, evaluated at {}",
        c.estate, c.estate_version, c.policy_digest, c.now
    );
    let _ = writeln!(out, "Before: {}", totals(&c.totals_before, None));
    for d in &c.deciders {
        let kind = match d.kind {
            crate::decider::DeciderKind::Builtin => "built in",
            crate::decider::DeciderKind::External => "external",
        };
        let time = d
            .run_time_ms
            .map(|ms| format!(", ran in {ms:.1} ms"))
            .unwrap_or_default();
        let _ = writeln!(out, "\n== {} ({kind}{time})", d.name);
        if let Some(e) = &d.error {
            let _ = writeln!(out, "No result: {} ({})", e.message, e.code);
        }
        if let Some(n) = &d.note {
            let _ = writeln!(out, "Note: {n}");
        }
        let Some(r) = &d.result else {
            continue;
        };
        let _ = writeln!(
            out,
            "{} proposal{}: {} accepted ({} below the bar), {} refused",
            r.proposals,
            if r.proposals == 1 { "" } else { "s" },
            r.accepted_count,
            r.below_bar_count,
            r.refused_count
        );
        let _ = writeln!(
            out,
            "Projected gain {} points (net of {:.1} points of data copying); cross-site traffic {} MB/s; weakest confidence {}",
            signed(r.projected_gain),
            r.copy_cost,
            signed(r.cross_site_mb_s_change),
            r.weakest_confidence
                .map_or("none (no accepted move)", |c| c.as_str())
        );
        let _ = writeln!(out, "After: {}", totals(&r.totals_after, None));
        if !r.accepted.is_empty() {
            let _ = writeln!(out, "Accepted, in the order applied:");
            for a in &r.accepted {
                let mut terms = nonzero_terms(&a.terms);
                if terms.is_empty() {
                    terms.push("nothing changes".into());
                }
                let _ = writeln!(
                    out,
                    "{:>3}. [{}] {} {}→{} {} [{}] {} — {}",
                    a.step,
                    a.index,
                    a.service,
                    a.from,
                    a.to,
                    signed(a.gain),
                    terms.join(", "),
                    a.confidence.as_str(),
                    a.verdict
                );
                if let Some(e) = &a.evidence {
                    let _ = writeln!(out, "       {e}");
                }
            }
        }
        if !r.refused.is_empty() {
            let _ = writeln!(out, "Proposals that were refused:");
            for f in &r.refused {
                let fact = f
                    .fact
                    .as_deref()
                    .map(|x| format!(" (fact: {x})"))
                    .unwrap_or_default();
                let _ = writeln!(
                    out,
                    "     [{}] {} → {}: {} — {}{fact}",
                    f.index,
                    f.service_id.as_deref().unwrap_or("?"),
                    f.to.as_deref().unwrap_or("?"),
                    f.code.as_str(),
                    f.message
                );
            }
        }
    }
    out
}

/// Points for tables: one decimal with a sign, and exactly zero as `0`.
fn pts(v: f64) -> String {
    if v == 0.0 {
        "0".into()
    } else {
        signed(v)
    }
}

fn pct(u: Option<f64>) -> String {
    match u {
        Some(u) => format!("{:.1}%", u * 100.0),
        None => "?".into(),
    }
}

/// Ranked candidates of the placement scorer as a table: one row per
/// cluster with every term, refusals and notes beneath.
pub fn candidates(cands: &[crate::place::Candidate]) -> String {
    let width = cands
        .iter()
        .map(|c| c.cluster.len())
        .max()
        .unwrap_or(7)
        .max(7);
    let mut out = String::new();
    // The advice's columns, when the ranking is `berth place`'s (a what-if
    // re-placement ranks by the scorer alone).
    let advice = cands.iter().any(|c| c.advice_gain.is_some());
    let gain_cols = |gain: &str, clears: &str| {
        if advice {
            format!(" {gain:>8} {clears:>6} |")
        } else {
            String::new()
        }
    };
    let _ = writeln!(
        out,
        "{:>4}  {:<width$}{} {:>8} = {:>8} {:>11} {:>10} {:>8} {:>12} {:>6}  {:>6} {:>6}  fit",
        "rank",
        "cluster",
        gain_cols("gain", "clears"),
        "score",
        "headroom",
        "over_target",
        "incumbency",
        "network",
        "blast_radius",
        "youth",
        "cpu",
        "mem"
    );
    for c in cands {
        let rank = c.rank.map_or("-".to_string(), |r| r.to_string());
        if c.eligible {
            let t = &c.terms;
            let fit = match c.fit {
                crate::place::FitVerdict::Incumbent => "incumbent",
                crate::place::FitVerdict::Fits => "fits",
                crate::place::FitVerdict::DoesNotFit => "does_not_fit",
                crate::place::FitVerdict::CantTell => "cant_tell",
            };
            let _ = writeln!(
                out,
                "{rank:>4}  {:<width$}{} {:>8} = {:>8} {:>11} {:>10} {:>8} {:>12} {:>6}  {:>6} {:>6}  {fit}",
                c.cluster,
                gain_cols(
                    &c.advice_gain.map_or("-".to_string(), pts),
                    if c.clears_bar { "yes" } else { "no" }
                ),
                pts(c.score),
                pts(t.headroom),
                pts(t.over_target),
                pts(t.incumbency),
                pts(t.network),
                pts(t.blast_radius),
                pts(t.youth),
                pct(c.cpu_utilisation),
                pct(c.memory_utilisation),
            );
        } else {
            let codes: Vec<&str> = c.refusals.iter().map(|r| r.code.as_str()).collect();
            let _ = writeln!(
                out,
                "{rank:>4}  {:<width$} ineligible: {}",
                c.cluster,
                codes.join(", ")
            );
            for r in &c.refusals {
                let _ = writeln!(out, "{:>6}{:<width$}   {}", "", "", r.message);
            }
        }
        for n in &c.notes {
            let _ = writeln!(
                out,
                "{:>6}{:<width$}   note {}: {}",
                "",
                "",
                n.code.as_str(),
                n.message
            );
        }
    }
    out
}

/// `berth place --format text`.
pub fn placement(p: &crate::place::Placement) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "Estate {} (version {}), policy {}, evaluated at {}",
        p.estate, p.estate_version, p.policy_digest, p.now
    );
    let verdict = match (p.verdict, &p.best) {
        ("stay", _) => format!("stay on {}", p.current),
        ("move", Some(b)) => format!("best placed on {b}"),
        _ => "no eligible cluster, not even its own".to_string(),
    };
    let request = |v: Option<f64>| v.map_or_else(|| "unknown".to_string(), |v| v.to_string());
    let _ = writeln!(
        out,
        "Placing {} (owner {}; {} CPU, {} GiB), now on {}: {verdict}\n",
        p.service,
        p.owner,
        request(p.cpu),
        request(p.memory_gib),
        p.current
    );
    let after = if p.judged_after.is_empty() {
        "the estate as it is".to_string()
    } else {
        format!(
            "the placement after the advice's {} {}",
            if p.judged_after.len() == 1 {
                "step"
            } else {
                "steps"
            },
            p.judged_after
                .iter()
                .map(|s| s.to_string())
                .collect::<Vec<_>>()
                .join(", ")
        )
    };
    let _ = writeln!(
        out,
        "Ranked as the advice judges it, from {after}: first the moves it could recommend (gain at least the bar of {} points and a certified fit), by gain; then staying; then the rest. `gain` is the advice's (round trip, cross-site, headroom, copy); `score` and its terms are the single-service scorer's, shown beside it and used only to break ties.",
        crate::constraints::round2(p.bar)
    );
    if let Some(a) = &p.advice {
        let _ = writeln!(out, "{a}");
    }
    let _ = writeln!(out);
    out.push_str(&candidates(&p.candidates));
    out
}

/// A what-if projection as a report for people (`berth whatif --format text`).
pub fn projection(p: &crate::whatif::Projection) -> String {
    use crate::whatif::By;
    let mut out = String::new();
    let _ = writeln!(
        out,
        "What-if {:?} on {} (version {}), policy {}, evaluated at {}\n",
        p.scenario, p.estate, p.estate_version, p.policy_digest, p.now
    );
    let _ = writeln!(
        out,
        "{:<18} {:>10} {:>10} {:>10}",
        "", "before", "after", "change"
    );
    let row = |out: &mut String, name: &str, b: f64, a: f64, c: f64| {
        let _ = writeln!(out, "{name:<18} {b:>10.1} {a:>10.1} {:>10}", signed(c));
    };
    row(
        &mut out,
        "cost (points)",
        p.before.cost,
        p.after.cost,
        p.change.cost,
    );
    for t in Term::ALL {
        if let (Some(b), Some(a), Some(c)) = (p.before.get(t), p.after.get(t), p.change.get(t)) {
            row(&mut out, &format!("  {}", t.label()), b, a, c);
        }
    }
    row(
        &mut out,
        "cross-site MB/s",
        p.before.cross_site_mb_s,
        p.after.cross_site_mb_s,
        p.change.cross_site_mb_s,
    );
    if p.moves.is_empty() {
        let _ = writeln!(out, "\nNothing moves.");
    } else {
        let _ = writeln!(out, "\nMoves, in order:");
        for m in &p.moves {
            let by = match m.by {
                By::Move => "move",
                By::Evacuate => "evacuate",
            };
            let _ = writeln!(
                out,
                "  step {:<3} {by:<8} {} {}→{}",
                m.step, m.service, m.from, m.to
            );
        }
    }
    for e in &p.evacuations {
        evacuation(&mut out, e);
    }
    let changed: Vec<_> = p
        .clusters
        .iter()
        .filter(|c| {
            c.cpu.change != 0.0
                || c.memory.change != 0.0
                || !c.cpu.unknown.is_empty()
                || !c.memory.unknown.is_empty()
        })
        .collect();
    if !changed.is_empty() {
        let _ = writeln!(out, "\nClusters whose load changes:");
        for c in changed {
            let line = format!(
                "  {:<12} CPU {:>7} cores {:>7} → {:<7} memory {:>8} GiB {:>7} → {:<7}{}",
                c.id,
                signed(c.cpu.change),
                pct(c.cpu.utilisation_before),
                pct(c.cpu.utilisation_after),
                signed(c.memory.change),
                pct(c.memory.utilisation_before),
                pct(c.memory.utilisation_after),
                if c.evacuated {
                    " (evacuated; what remains is load not modelled as services)"
                } else {
                    ""
                }
            );
            let _ = writeln!(out, "{}", line.trim_end());
            for (word, r) in [("CPU", &c.cpu), ("memory", &c.memory)] {
                if !r.unknown.is_empty() {
                    let _ = writeln!(
                        out,
                        "               {word} change leaves out the unknown request of {}",
                        r.unknown.join(", ")
                    );
                }
            }
        }
    }
    if !p.warnings.is_empty() {
        let _ = writeln!(out, "\nWarnings:");
        for w in &p.warnings {
            let _ = writeln!(out, "  [{}] {}", w.code.as_str(), w.message);
        }
    }
    if !p.sensitivity.is_empty() {
        sensitivity(&mut out, &p.sensitivity);
    }
    out
}

/// One evacuation of a what-if projection: where each service went, with
/// its placement terms, and why each that stays cannot leave.
fn evacuation(out: &mut String, e: &crate::whatif::Evacuation) {
    let _ = writeln!(
        out,
        "\nEvacuating {} (step {}): {} placed, {} cannot leave",
        e.cluster,
        e.step,
        e.placed.len(),
        e.stuck.len()
    );
    for pl in &e.placed {
        let t = &pl.terms;
        let mut terms = Vec::new();
        for (name, v) in [
            ("headroom", t.headroom),
            ("over_target", t.over_target),
            ("incumbency", t.incumbency),
            ("network", t.network),
            ("blast_radius", t.blast_radius),
            ("youth", t.youth),
        ] {
            if v != 0.0 {
                terms.push(format!("{name} {}", signed(v)));
            }
        }
        let _ = writeln!(
            out,
            "  {} → {} score {} [{}]",
            pl.service,
            pl.to,
            signed(pl.score),
            terms.join(", ")
        );
    }
    for s in &e.stuck {
        for r in &s.reasons {
            if r.clusters.is_empty() {
                let _ = writeln!(out, "  {} stays: {}", s.service, r.message);
            } else {
                let _ = writeln!(
                    out,
                    "  {} stays: {} on {} (e.g. {})",
                    s.service,
                    r.code.as_str(),
                    r.clusters.join(", "),
                    r.message
                );
            }
        }
    }
}

/// The capacity sensitivity rows of a what-if projection: how far each
/// free-capacity figure may be wrong before its verdict flips.
fn sensitivity(out: &mut String, rows: &[crate::whatif::Sensitivity]) {
    let _ = writeln!(
        out,
        "\nCapacity sensitivity (how far each free-capacity figure may be wrong before its verdict flips):"
    );
    for s in rows {
        let unit = if s.resource == "cpu" { "cores" } else { "GiB" };
        let tolerance = match s.tolerance_pct {
            Some(t) => format!("{t:.1}%"),
            None => "any amount".into(),
        };
        let (verdict, flips) = if s.verdict == "fits" {
            ("fits", "too high")
        } else {
            ("does not fit", "too low")
        };
        let certainty = match s.fit {
            crate::place::FitVerdict::CantTell => format!(
                "can't tell: within the ±{:.0}% margin of {} {} figure",
                s.margin_pct,
                article(s.class.as_str()),
                s.class.as_str()
            ),
            _ => format!(
                "certain: beyond the ±{:.0}% margin of {} {} figure",
                s.margin_pct,
                article(s.class.as_str()),
                s.class.as_str()
            ),
        };
        let _ = writeln!(
            out,
            "  {} = {} {unit}, scenario adds {}: {verdict} unless the figure is more than {tolerance} {flips} ({certainty})",
            s.fact,
            (s.value * 100.0).round() / 100.0,
            (s.need * 1000.0).round() / 1000.0,
        );
    }
}

/// "a" or "an" before a class name (`an inferred figure`).
fn article(word: &str) -> &'static str {
    if word.starts_with(['a', 'e', 'i', 'o', 'u']) {
        "an"
    } else {
        "a"
    }
}
