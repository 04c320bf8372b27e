//! The plan in Markdown, for people: totals, the saving, each step's moves
//! with their evidence, and the workloads they touch.

use super::*;

// ---- Markdown ----------------------------------------------------------

/// A table cell: `|` escaped, line breaks as spaces.
pub(super) fn cell(s: &str) -> String {
    s.replace('\\', "\\\\")
        .replace('|', "\\|")
        .replace(['\n', '\r'], " ")
}

/// An age in words: `45 s`, `12 min`, `3 h 5 min`, `2 d 4 h`.
pub fn age(s: i64) -> String {
    match s {
        s if s < 60 => format!("{s} s"),
        s if s < 3600 => format!("{} min", s / 60),
        s if s < 86_400 => format!("{} h {} min", s / 3600, s % 3600 / 60),
        s => format!("{} d {} h", s / 86_400, s % 86_400 / 3600),
    }
}

pub(super) fn value(v: Option<f64>) -> String {
    match v {
        Some(v) => format!("{}", (v * 1000.0).round() / 1000.0),
        None => "unknown".into(),
    }
}

pub(super) fn totals_line(t: &Totals) -> String {
    let terms: Vec<String> = t
        .iter()
        .map(|(term, v)| format!("{} {v:.1}", term.label()))
        .collect();
    format!(
        "cost {:.1} ({}); cross-site traffic {:.1} MB/s",
        t.cost,
        terms.join(", "),
        t.cross_site_mb_s
    )
}

/// The change as a saving, in the one sign convention of every page and
/// export (issue 34): points saved are positive, points added negative;
/// traffic is said as less or more. (The JSON's `change` stays
/// after − before, a difference, as documented in docs/plans.md.)
pub(super) fn saving_line(t: &Totals) -> String {
    let terms: Vec<String> = t
        .iter()
        .map(|(term, v)| format!("{} {}", term.label(), signed(-v)))
        .collect();
    let mb = t.cross_site_mb_s;
    let traffic = if mb <= 0.0 {
        format!("{:.1} MB/s less cross-site traffic", -mb)
    } else {
        format!("{mb:.1} MB/s more cross-site traffic")
    };
    format!(
        "{} points ({}); {traffic}",
        signed(-t.cost),
        terms.join(", ")
    )
}

pub(super) fn workload_words(w: &Option<Workload>) -> String {
    match w {
        Some(w) => format!(
            "`{} {}/{}`{}",
            w.kind,
            w.namespace,
            w.name,
            w.api_version()
                .map(|v| format!(" ({v})"))
                .unwrap_or_default()
        ),
        None => {
            "not named in the estate (set `workload` on the service to export manifests)".into()
        }
    }
}

/// The plan as Markdown, for a pull request or a ticket.
pub fn markdown(p: &Plan) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "# Change plan: {}\n", p.estate);
    let selection = match p.selection.kind {
        "advice" => format!("every recommended move ({})", p.moves.len()),
        "services" => format!(
            "the recommended moves of {}",
            p.selection
                .services
                .as_deref()
                .unwrap_or_default()
                .iter()
                .map(|s| format!("`{s}`"))
                .collect::<Vec<_>>()
                .join(", ")
        ),
        _ => format!(
            "what-if scenario \"{}\"",
            p.selection.scenario.as_deref().unwrap_or_default()
        ),
    };
    let _ = writeln!(out, "- Estate version: `{}`", p.estate_version);
    let _ = writeln!(out, "- Policy digest: `{}`", p.policy_digest);
    let _ = writeln!(out, "- Evaluated at: {}", p.now);
    let _ = writeln!(out, "- Selection: {selection}");
    let _ = writeln!(out, "- Before: {}", totals_line(&p.totals_before));
    let _ = writeln!(out, "- After: {}", totals_line(&p.totals_after));
    let _ = writeln!(out, "- Saving: {}", saving_line(&p.change));
    if let Some(n) = &p.note {
        let _ = writeln!(out, "\n> Note: {n}.");
    }
    let _ = writeln!(out, "\n## Moves\n");
    if p.moves.is_empty() {
        let _ = writeln!(out, "No move: staying put is best.");
    } else {
        let _ = writeln!(out, "| # | Service | From → To | Gain | Confidence |");
        let _ = writeln!(out, "|---|---|---|---|---|");
        for (n, members) in md_steps(p) {
            let ms: Vec<&PlanMove> = members.iter().map(|&i| &p.moves[i]).collect();
            let services: Vec<String> = ms.iter().map(|m| format!("`{}`", m.service)).collect();
            let ways: Vec<String> = ms
                .iter()
                .map(|m| format!("`{}` → `{}`", m.from, m.to))
                .collect();
            // A compound step's gain and confidence are the group's.
            let (gain, confidence) = match (&ms[0].group, ms.len()) {
                (Some(g), 2..) => (
                    g.gain,
                    ms.iter()
                        .map(|m| m.confidence)
                        .max()
                        .unwrap_or(ms[0].confidence),
                ),
                _ => (ms[0].gain, ms[0].confidence),
            };
            let _ = writeln!(
                out,
                "| {n} | {} | {} | {} | {} |",
                services.join(" + "),
                ways.join("; "),
                signed(gain),
                confidence.as_str()
            );
        }
    }
    for (n, members) in md_steps(p) {
        if members.len() > 1 {
            let ms: Vec<&PlanMove> = members.iter().map(|&i| &p.moves[i]).collect();
            let names: Vec<String> = ms.iter().map(|m| format!("`{}`", m.service)).collect();
            let names: Vec<&str> = names.iter().map(String::as_str).collect();
            let g = ms[0].group.as_ref();
            let _ = writeln!(
                out,
                "\n### {n}. Move {} together: {} points\n",
                crate::text::and_list(&names),
                signed(g.map_or(0.0, |g| g.gain))
            );
            if let Some(g) = g {
                let _ = writeln!(out, "One step: {}", g.summary);
                for f in &g.flips {
                    let _ = writeln!(out, "- {}", f.sentence);
                }
            }
            for m in ms {
                move_section(&mut out, m, None);
            }
        } else {
            move_section(&mut out, &p.moves[members[0]], Some(n));
        }
    }
    workloads_section(&mut out, &p.workloads);
    if !p.warnings.is_empty() {
        let _ = writeln!(out, "\n## Warnings\n");
        for w in &p.warnings {
            let step = w.step.map(|s| format!("step {s}: ")).unwrap_or_default();
            let _ = writeln!(out, "- `{}` {step}{}", w.code.as_str(), w.message);
        }
    }
    let _ = writeln!(
        out,
        "\n---\nWritten by Berth from estate version `{}` and policy `{}`. Berth moves nothing: apply the moves with the tools that do (`berth plan export --format karmada|ocm`).",
        p.estate_version, p.policy_digest
    );
    out
}

/// The workloads the plan changes: one line each, with the clusters the
/// manifests place it on and every copy.
pub(super) fn workloads_section(out: &mut String, workloads: &[PlanWorkload]) {
    if workloads.is_empty() {
        return;
    }
    let _ = writeln!(out, "\n## Kubernetes workloads\n");
    let _ = writeln!(
        out,
        "One manifest per workload (`berth plan export --format karmada|ocm`), placing it on every cluster a copy of it runs in after the plan.\n"
    );
    let _ = writeln!(out, "| Workload | Runs in after the plan | Copies |");
    let _ = writeln!(out, "|---|---|---|");
    for w in workloads {
        let clusters: Vec<String> = w.clusters.iter().map(|c| format!("`{c}`")).collect();
        let copies: Vec<String> = w
            .copies
            .iter()
            .map(|c| {
                if c.from == c.to {
                    format!("`{}` stays on `{}`", c.service, c.from)
                } else {
                    format!("`{}` `{}` → `{}`", c.service, c.from, c.to)
                }
            })
            .collect();
        let _ = writeln!(
            out,
            "| {} | {} | {} |",
            cell(&workload_words(&Some(w.workload.clone()))),
            clusters.join(", "),
            cell(&copies.join("; "))
        );
    }
}

/// The plan's moves as numbered steps: `(number, indices into moves)`.
/// An advice plan numbers them as the pages do (`Plan::step_numbers`, a
/// compound step's members together under one number); a scenario's
/// moves are numbered in its order.
pub(super) fn md_steps(p: &Plan) -> Vec<(usize, Vec<usize>)> {
    let mut out: Vec<(usize, Vec<usize>)> = Vec::new();
    for (i, m) in p.moves.iter().enumerate() {
        match p.step_numbers.get(i).copied().flatten() {
            Some(n) => match out.last_mut() {
                Some((last, members)) if *last == n => members.push(i),
                _ => out.push((n, vec![i])),
            },
            None => out.push((m.step, vec![i])),
        }
    }
    out
}

/// One move's section: a heading of its own (`### N.`) for a single
/// step; under its compound step's heading (`####`, no number) for a
/// member.
pub(super) fn move_section(out: &mut String, m: &PlanMove, number: Option<usize>) {
    match number {
        Some(n) => {
            let _ = writeln!(
                out,
                "\n### {n}. `{}`: `{}` → `{}`\n",
                m.service, m.from, m.to
            );
        }
        None => {
            let _ = writeln!(out, "\n#### `{}`: `{}` → `{}`\n", m.service, m.from, m.to);
        }
    }
    let terms: Vec<String> = m
        .terms
        .iter()
        .map(|(t, v)| format!("{} {}", t.label(), signed(v)))
        .collect();
    let _ = writeln!(
        out,
        "- Gain: {} points (bar {:.1}): {}",
        signed(m.gain),
        m.bar,
        terms.join(", ")
    );
    let _ = writeln!(
        out,
        "- Confidence: {} (the weakest deciding fact)",
        m.confidence.as_str()
    );
    if let Some(e) = &m.evidence {
        let _ = writeln!(out, "- {e}");
    }
    if m.advice_step.is_some() {
        let _ = writeln!(out, "- Recommended by the advice");
    }
    let _ = writeln!(out, "- Workload: {}", workload_words(&m.workload));
    if let Some(n) = &m.note {
        let _ = writeln!(out, "- Note: {n}");
    }
    let _ = writeln!(out, "\nDeciding facts:\n");
    let _ = writeln!(out, "| Fact | Value | Class | Source | Age |");
    let _ = writeln!(out, "|---|---|---|---|---|");
    for f in &m.facts {
        let class = if f.class == f.stored_class {
            f.class.as_str().to_string()
        } else {
            format!("{} (stored {})", f.class.as_str(), f.stored_class.as_str())
        };
        let _ = writeln!(
            out,
            "| {} | {} | {} | {} | {} |",
            cell(&f.fact),
            value(f.value),
            class,
            cell(&f.source),
            age(f.age_s)
        );
    }
    if number.is_none() && m.group.is_some() {
        let _ = writeln!(
            out,
            "\nPart of the compound step above: alone it is not recommended."
        );
    }
    let flips: Vec<&Flip> = m.flips.iter().chain(&m.other_flips).collect();
    if !flips.is_empty() {
        let _ = writeln!(out, "\nFlip conditions (one fact at a time):\n");
        for f in flips {
            for s in &f.sentences {
                let _ = writeln!(out, "- {}: {}", f.fact, s);
            }
        }
    }
}
