//! Plain-text rendering of results, for people (`--format text`) and for
//! the golden tests, which print ranked moves with their factors.

use std::fmt::Write;

use crate::advise::{Advice, Move};
use crate::cost::Totals;

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
