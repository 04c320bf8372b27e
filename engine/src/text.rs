//! Plain-text rendering of results, for people (`--format text`) and for
//! the golden tests, which print ranked moves with their factors.

use std::fmt::Write;

use crate::advise::{Advice, Move};
use crate::cost::Totals;
use crate::why::MoveWhy;

/// One line per move: `cart c-par-1→c-fra-1 +12.4 [rtt +15.1, xsite +3.0, copy -2.7] reported`.
/// Terms that are exactly zero are left out.
pub fn move_line(m: &Move) -> String {
    let mut terms = Vec::new();
    for (name, v) in [
        ("rtt", m.terms.round_trip),
        ("xsite", m.terms.cross_site),
        ("headroom", m.terms.headroom),
        ("copy", m.terms.copy),
    ] {
        if v != 0.0 {
            terms.push(format!("{name} {}", signed(v)));
        }
    }
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

pub fn signed(v: f64) -> String {
    let r = (v * 10.0).round() / 10.0;
    if r >= 0.0 {
        format!("+{:.1}", r.abs())
    } else {
        format!("{r:.1}")
    }
}

fn totals(t: &Totals) -> String {
    format!(
        "cost {:.1} (round trip {:.1}, cross-site {:.1}, headroom {:.1}); cross-site traffic {:.1} MB/s",
        t.cost, t.round_trip, t.cross_site, t.headroom, t.cross_site_mb_s
    )
}

/// The whole advice as a report for people.
pub fn advice(a: &Advice) -> String {
    advice_with_why(a, &[])
}

/// The advice as a report for people, with each move's explanation
/// (`why::explain`, aligned with the moves) printed under it.
pub fn advice_with_why(a: &Advice, why: &[MoveWhy]) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "Estate {} (version {}), policy {}, evaluated at {}",
        a.estate, a.estate_version, a.policy_digest, a.now
    );
    let _ = writeln!(out, "Before: {}", totals(&a.totals_before));
    let _ = writeln!(out, "After:  {}", totals(&a.totals_after));
    let _ = writeln!(out);
    if a.moves.is_empty() {
        let _ = writeln!(out, "No move clears the bars: staying put is best.");
    } else {
        let _ = writeln!(out, "Recommended moves, in order:");
        for m in &a.moves {
            let _ = writeln!(out, "{:>3}. {}", m.step, move_line(m));
            if let Some(e) = &m.evidence {
                let _ = writeln!(out, "     {e}");
            }
            if let Some(w) = why.get(m.step - 1) {
                for line in w.lines() {
                    let _ = writeln!(out, "     {line}");
                }
            }
        }
    }
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
                        format!(
                            "{} ({} clusters: {})",
                            r.code.as_str(),
                            r.clusters.len(),
                            r.message
                        )
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
    out
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
    let _ = writeln!(out, "Before: {}", totals(&c.totals_before));
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
        let Some(r) = &d.result else {
            continue;
        };
        let _ = writeln!(
            out,
            "{} proposals: {} accepted ({} below the bar), {} refused",
            r.proposals, r.accepted_count, r.below_bar_count, r.refused_count
        );
        let _ = writeln!(
            out,
            "Projected gain {} points (net of {:.1} points of data copying); cross-site traffic {} MB/s; weakest confidence {}",
            signed(r.projected_gain),
            r.copy_cost,
            signed(r.cross_site_mb_s_change),
            r.weakest_confidence.map_or("none (no accepted move)", |c| c.as_str())
        );
        let _ = writeln!(out, "After: {}", totals(&r.totals_after));
        if !r.accepted.is_empty() {
            let _ = writeln!(out, "Accepted, in the order applied:");
            for a in &r.accepted {
                let mut terms = Vec::new();
                for (name, v) in [
                    ("rtt", a.terms.round_trip),
                    ("xsite", a.terms.cross_site),
                    ("headroom", a.terms.headroom),
                    ("copy", a.terms.copy),
                ] {
                    if v != 0.0 {
                        terms.push(format!("{name} {}", signed(v)));
                    }
                }
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
