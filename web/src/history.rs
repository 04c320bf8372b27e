//! The advice history on the Placement page: the driver's snapshots as a
//! chart (cost and cross-site traffic as lines, open recommendations as a
//! step line, on one time axis), the same as a table, and what changed
//! since the last snapshot. Read from `GET /api/estates/{id}/history`
//! (`docs/history.md`); applied moves are marked on it from the outcomes
//! report the Placement page reads (`GET …/outcomes`, which has each
//! move's time). Policy changes and review decisions (who, what, when,
//! from `GET …/audit`) and new estate versions (from the snapshots) are
//! annotations on the same axis. The geometry helpers are pure and tested
//! here.

use berth_api::{AuditEntry, AuditList};
use berth_engine::history::{Changes, FactValue, History, Recommendation};
use berth_engine::outcome::Report;
use leptos::prelude::*;

use crate::client;
use crate::common::{Auth, ErrorLine};
use crate::pages::{fixed, signed};

/// The chart's drawing width in viewBox units. 440 with 12-unit text:
/// at a 390 px phone's ~350 px of content the text is ~10 px, and at the
/// 600 px the stylesheet caps the chart at, 16 px.
const W: f64 = 440.0;
/// Left margin: room for a y-axis label of six characters ("1234.5").
const LEFT: f64 = 52.0;
/// Right margin: the last time label is centred on the last point.
const RIGHT: f64 = 16.0;
/// Height of one panel's plot area; three panels plus the axis stay
/// under a phone screen's height.
const PANEL_H: f64 = 62.0;
/// Space above each panel for its title: 30 keeps the title clear of the
/// previous panel's lowest y label (drawn 4 below that panel's foot).
const TITLE_H: f64 = 30.0;
/// Room under the last panel for the time labels.
const AXIS_H: f64 = 30.0;

/// One point of the series, read from the answer.
#[derive(Clone, Debug, PartialEq)]
pub struct Point {
    pub at: i64,
    pub at_text: String,
    pub version: i64,
    pub policy: String,
    pub cost: f64,
    pub cross: f64,
    pub open: f64,
}

/// The points of a history answer, oldest first (as the engine wrote
/// them); a point whose time does not parse is left out.
pub fn points(history: &History) -> Vec<Point> {
    history
        .points
        .iter()
        .filter_map(|p| {
            Some(Point {
                at: berth_engine::estate::parse_time(&p.at)?,
                at_text: p.at.clone(),
                version: p.estate_version,
                policy: p.policy_digest.clone(),
                cost: p.cost,
                cross: p.cross_site_mb_s,
                open: p.open as f64,
            })
        })
        .collect()
}

/// The y range a panel draws: the values' span with a tenth of it as a
/// margin either side, so a line never runs along the frame; a flat
/// series gets ±1 (or ±5 % of its size, whichever is larger) so it shows
/// as a line through the middle rather than a division by zero. With
/// `from_zero` (counts) the range starts at 0.
pub fn y_range(values: &[f64], from_zero: bool) -> (f64, f64) {
    let lo = values.iter().copied().fold(f64::INFINITY, f64::min);
    let hi = values.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    if !lo.is_finite() || !hi.is_finite() {
        return (0.0, 1.0);
    }
    if from_zero {
        return (0.0, hi.max(1.0));
    }
    if hi - lo < 1e-9 {
        let pad = (lo.abs() * 0.05).max(1.0);
        return (lo - pad, hi + pad);
    }
    let pad = (hi - lo) * 0.1;
    (lo - pad, hi + pad)
}

/// x of time `t` on a plot from `t0` to `t1`: proportional to time; at
/// the centre when the plot is one instant.
pub fn x_at(t: i64, t0: i64, t1: i64) -> f64 {
    let width = W - LEFT - RIGHT;
    if t1 == t0 {
        LEFT + width / 2.0
    } else {
        LEFT + (t - t0) as f64 / (t1 - t0) as f64 * width
    }
}

/// An applied move on the chart (`docs/outcomes.md`): when it was
/// noticed, what moved, and how it turned out.
#[derive(Clone, Debug, PartialEq)]
pub struct Mark {
    pub at: i64,
    pub at_text: String,
    pub identity: String,
    /// The moved services, e.g. `a` or `a+b` for a compound step.
    pub label: String,
    /// The step in words: its moves, its state, its ratio if observed.
    pub words: String,
}

/// The marks of an outcomes report, by time: every applied step that was
/// judged (a step that could not be, for want of its document, has no
/// time to mark).
pub fn marks(r: &Report) -> Vec<Mark> {
    let mut out: Vec<Mark> = r
        .applied
        .iter()
        .filter_map(|a| {
            let o = a.outcome.as_ref()?;
            let at = berth_engine::estate::parse_time(&o.moved_at)?;
            let label = o
                .members
                .iter()
                .map(|m| m.service.as_str())
                .collect::<Vec<_>>()
                .join("+");
            let moves = o
                .members
                .iter()
                .map(|m| format!("{}: {} → {}", m.service, m.from, m.to))
                .collect::<Vec<_>>()
                .join(", together with ");
            let state = match crate::outcomes::ratio_text(a) {
                Some(r) => format!("observed, {r}"),
                None => crate::outcomes::status_word(a).to_string(),
            };
            Some(Mark {
                at,
                at_text: o.moved_at.clone(),
                identity: a.identity.clone(),
                label,
                words: format!("{moves} at {} ({state})", o.moved_at),
            })
        })
        .collect();
    out.sort_by_key(|m| m.at);
    out
}

/// An annotation on the chart: a policy change, a review decision or a
/// new estate version.
#[derive(Clone, Debug, PartialEq)]
pub struct Annotation {
    pub at: i64,
    /// `policy`, `review` or `estate`.
    pub kind: &'static str,
    /// Short, drawn by the line: `policy`, `dismissed`, `v4`.
    pub label: String,
    /// Who, what and when in words (the hover text and the list's line).
    pub words: String,
}

/// One changed policy field as the Policy page names it: the audit keeps
/// a JSON pointer (`/transfer_price/same_site_usd_per_gb`); the page lists
/// the field by its dotted path with its meaning and unit. `(meaning
/// (path), unit)`; a field the table does not know (a policy of another
/// version) by its dotted path alone.
pub fn policy_field_words(field: &str) -> (String, &'static str) {
    let path = field.trim_start_matches('/').replace('/', ".");
    match crate::policy_fields::FIELDS.iter().find(|f| f.path == path) {
        Some(f) => (format!("{} ({path})", f.meaning), f.unit),
        None => (path, ""),
    }
}

/// The policy fields a `policy.changed` entry changed, in words: "cost of
/// traffic whose two ends are on different sites (cross_site_weight): 8.0
/// → 16.0 points per MB/s".
pub fn policy_fields_words(e: &AuditEntry) -> String {
    let changed = e.policy_changes();
    if changed.is_empty() {
        return "no field changed".into();
    }
    changed
        .iter()
        .map(|(f, from, to)| {
            let (words, unit) = policy_field_words(f);
            let unit = if unit.is_empty() {
                String::new()
            } else {
                format!(" {unit}")
            };
            format!("{words}: {from} \u{2192} {to}{unit}")
        })
        .collect::<Vec<_>>()
        .join("; ")
}

/// The estate's cost, cross-site traffic and open recommendations in the
/// last snapshot before `at` and the first at or after it: a change's
/// effect on the advice. `None` when the series does not span `at`.
pub fn effect_across(points: &[Point], at: i64) -> Option<String> {
    let before = points.iter().rev().find(|p| p.at < at)?;
    let after = points.iter().find(|p| p.at >= at)?;
    Some(format!(
        "the estate cost {:.1} \u{2192} {:.1} points, cross-site traffic {:.2} \u{2192} {:.2} MB/s, open recommendations {} \u{2192} {} (snapshots of {} and {})",
        before.cost, after.cost, before.cross, after.cross, before.open, after.open, before.at_text, after.at_text
    ))
}

/// The annotations of the chart, by time: every policy change and review
/// decision of the audit trail from the first snapshot on, and every new
/// estate version between two snapshots (an upload, an import or an
/// agent's facts: the estate does not record who wrote it, so the words
/// say so).
pub fn annotations(audit: &[AuditEntry], points: &[Point]) -> Vec<Annotation> {
    let Some(first) = points.first() else {
        return Vec::new();
    };
    let mut out: Vec<Annotation> = Vec::new();
    for e in audit {
        let Some(at) = berth_engine::estate::parse_time(&e.at) else {
            continue;
        };
        if at < first.at {
            continue;
        }
        let reason = if e.reason.is_empty() {
            String::new()
        } else {
            format!(" \u{2014} \u{201c}{}\u{201d}", e.reason)
        };
        if e.action == "policy.changed" {
            let effect = effect_across(points, at)
                .map(|x| format!(". Across it: {x}"))
                .unwrap_or_default();
            out.push(Annotation {
                at,
                kind: "policy",
                label: "policy".into(),
                words: format!(
                    "Policy changed by {} at {}: {}{reason}{effect}",
                    e.actor,
                    e.at,
                    policy_fields_words(e)
                ),
            });
        } else if let Some(decision) = e.action.strip_prefix("review.") {
            out.push(Annotation {
                at,
                kind: "review",
                label: decision.to_string(),
                words: format!(
                    "Review: {} {decision} {} at {}{reason}",
                    e.actor,
                    e.subject.replace('|', " "),
                    e.at
                ),
            });
        }
    }
    for w in points.windows(2) {
        if w[1].version != w[0].version {
            out.push(Annotation {
                at: w[1].at,
                kind: "estate",
                label: format!("v{}", w[1].version),
                words: format!(
                    "Estate version {} \u{2192} {}, first in the snapshot of {} (an upload, an import or an agent's facts; who wrote it is not recorded)",
                    w[0].version, w[1].version, w[1].at_text
                ),
            });
        }
    }
    out.sort_by(|a, b| a.at.cmp(&b.at).then(a.kind.cmp(b.kind)));
    out
}

/// Roughly how wide a mark's label is drawn, in viewBox units: 11-unit
/// text averages a little over half its size per character.
fn label_width(text: &str) -> f64 {
    text.chars().count() as f64 * 6.5
}

/// Where a mark's label goes and what it says: the moved services right
/// of the line, or left of it when they would run past the plot's right
/// edge; several steps of one write, or a name that fits neither side,
/// as a count ("3 moves": the list under the chart names them).
pub fn mark_label(mx: f64, group: &[&Mark]) -> (f64, &'static str, String) {
    let names = group
        .iter()
        .map(|m| m.label.as_str())
        .collect::<Vec<_>>()
        .join(", ");
    let count = if group.len() == 1 {
        "1 move".to_string()
    } else {
        format!("{} moves", group.len())
    };
    let text = if group.len() == 1 {
        names
    } else {
        count.clone()
    };
    let w = label_width(&text);
    if mx + 3.0 + w <= W - RIGHT {
        (mx + 3.0, "start", text)
    } else if mx - 3.0 - w >= LEFT {
        (mx - 3.0, "end", text)
    } else if mx + 3.0 + label_width(&count) <= W - RIGHT {
        (mx + 3.0, "start", count)
    } else {
        (mx - 3.0, "end", count)
    }
}

/// x of each time on the plot: proportional to time between the first and
/// the last; all at the centre when they are one instant.
pub fn xs(times: &[i64]) -> Vec<f64> {
    let (Some(&t0), Some(&t1)) = (times.first(), times.last()) else {
        return Vec::new();
    };
    let width = W - LEFT - RIGHT;
    times
        .iter()
        .map(|&t| {
            if t1 == t0 {
                LEFT + width / 2.0
            } else {
                LEFT + (t - t0) as f64 / (t1 - t0) as f64 * width
            }
        })
        .collect()
}

/// An SVG path through the points; with `step`, holding each value until
/// the next point (a count stays what it was until the next snapshot).
pub fn path(xs: &[f64], ys: &[f64], step: bool) -> String {
    let mut d = String::new();
    for (i, (x, y)) in xs.iter().zip(ys).enumerate() {
        if i == 0 {
            d.push_str(&format!("M{x:.1},{y:.1}"));
        } else if step {
            d.push_str(&format!(" H{x:.1} V{y:.1}"));
        } else {
            d.push_str(&format!(" L{x:.1},{y:.1}"));
        }
    }
    d
}

/// A time on the axis, in UTC: the time of day when the whole series is
/// within a day (with seconds when it is within ten minutes), else the
/// date and the hour.
pub fn time_label(at_text: &str, span_s: i64) -> String {
    // RFC 3339 as the engine writes it: 2026-11-30T04:05:00Z.
    let (date, time) = at_text.split_once('T').unwrap_or((at_text, ""));
    let time = time.trim_end_matches('Z');
    if span_s <= 600 {
        time.to_string()
    } else if span_s <= 86_400 {
        time.get(..5).unwrap_or(time).to_string()
    } else {
        format!(
            "{} {}",
            date.get(5..).unwrap_or(date),
            time.get(..5).unwrap_or(time)
        )
    }
}

/// A y-axis label: whole numbers plainly, others with one decimal.
fn tick(v: f64) -> String {
    if (v - v.round()).abs() < 1e-9 {
        format!("{v:.0}")
    } else {
        format!("{v:.1}")
    }
}

/// One panel: its title, its frame, its min and max, and the series.
fn panel(
    index: usize,
    title: String,
    class: &'static str,
    xs: &[f64],
    values: &[f64],
    step: bool,
) -> impl IntoView {
    let top = index as f64 * (TITLE_H + PANEL_H) + TITLE_H;
    let (lo, hi) = y_range(values, step);
    let y = |v: f64| top + PANEL_H - (v - lo) / (hi - lo) * PANEL_H;
    let ys: Vec<f64> = values.iter().map(|&v| y(v)).collect();
    let d = path(xs, &ys, step);
    let dots: Vec<_> = if step {
        Vec::new()
    } else {
        xs.iter()
            .zip(&ys)
            .map(|(x, y)| view! { <circle cx=format!("{x:.1}") cy=format!("{y:.1}") r="2.5" class=format!("dot {class}")/> })
            .collect::<Vec<_>>()
    };
    // The area under the step line, so a count reads as a quantity.
    let area = step.then(|| match xs.first() {
        Some(x0) => format!("{d} V{:.1} H{x0:.1} Z", y(lo)),
        None => String::new(),
    });
    view! {
        <g class=format!("hpanel {class}")>
            <text x="0" y=top - 6.0 class="ptitle">{title}</text>
            <line x1=LEFT y1=top x2=W - RIGHT y2=top class="grid"/>
            <line x1=LEFT y1=top + PANEL_H x2=W - RIGHT y2=top + PANEL_H class="grid"/>
            <text x=LEFT - 4.0 y=top + 4.0 class="ytick">{tick(hi)}</text>
            <text x=LEFT - 4.0 y=top + PANEL_H + 4.0 class="ytick">{tick(lo)}</text>
            {area.map(|a| view! { <path d=a class=format!("area {class}")/> })}
            <path d=d class=format!("series {class}")/>
            {dots}
        </g>
    }
}

/// The time axis's labels under the first, the middle and the last point
/// (`x` their positions), each with its tick.
fn time_labels(points: &[Point], x: &[f64], axis_y: f64, span: i64) -> Vec<impl IntoView> {
    // Time labels under the first, the middle and the last point, unless
    // they would overlap (points closer than a label's width).
    let mut label_at: Vec<usize> = vec![0];
    if points.len() > 2 {
        label_at.push(points.len() / 2);
    }
    if points.len() > 1 {
        label_at.push(points.len() - 1);
    }
    let mut shown: Vec<usize> = Vec::new();
    for i in label_at {
        // 60 units: a label of eight characters at 12 units.
        if shown.last().is_none_or(|&j| x[i] - x[j] >= 60.0) {
            shown.push(i);
        }
    }
    shown
        .into_iter()
        .map(|i| {
            let anchor = if i == 0 && points.len() > 1 {
                "start"
            } else if i + 1 == points.len() && points.len() > 1 {
                "end"
            } else {
                "middle"
            };
            view! {
                <line x1=x[i] y1=axis_y x2=x[i] y2=axis_y + 4.0 class="grid"/>
                <text x=x[i] y=axis_y + 16.0 class="xtick" text-anchor=anchor>{time_label(&points[i].at_text, span)}</text>
            }
        })
        .collect::<Vec<_>>()
}

/// The chart of the series (three panels on one time axis), with a
/// dashed line across the panels where each applied move was noticed.
#[component]
fn Chart(points: Vec<Point>, marks: Vec<Mark>, annots: Vec<Annotation>) -> impl IntoView {
    // The axis spans the snapshots, the marks and the annotations: a move
    // or a change after the last snapshot (the driver has not taken the
    // next yet) is still shown.
    let all = points
        .iter()
        .map(|p| p.at)
        .chain(marks.iter().map(|m| m.at))
        .chain(annots.iter().map(|a| a.at));
    let t0 = all.clone().min().unwrap_or(0);
    let t1 = all.max().unwrap_or(0);
    let x: Vec<f64> = points.iter().map(|p| x_at(p.at, t0, t1)).collect();
    let span = t1 - t0;
    let cost: Vec<f64> = points.iter().map(|p| p.cost).collect();
    let cross: Vec<f64> = points.iter().map(|p| p.cross).collect();
    let open: Vec<f64> = points.iter().map(|p| p.open).collect();
    let h = 3.0 * (TITLE_H + PANEL_H) + AXIS_H;
    // The bottom of the last panel.
    let axis_y = 3.0 * (TITLE_H + PANEL_H);
    let labels = time_labels(&points, &x, axis_y, span);
    // Steps applied by one write share a time: one line for them, its
    // label naming all, written towards the middle of the chart so it
    // never runs past an edge.
    let mut lines: Vec<(i64, Vec<&Mark>)> = Vec::new();
    for m in &marks {
        match lines.last_mut() {
            Some((at, group)) if *at == m.at => group.push(m),
            _ => lines.push((m.at, vec![m])),
        }
    }
    let mark_lines = lines
        .iter()
        .map(|(at, group)| {
            let mx = x_at(*at, t0, t1);
            let (lx, anchor, label) = mark_label(mx, group);
            let title = group.iter().map(|m| m.words.as_str()).collect::<Vec<_>>().join("; ");
            let ids = group.iter().map(|m| m.identity.as_str()).collect::<Vec<_>>().join(" ");
            view! {
                <g class="mark" data-identities=ids>
                    <title>{format!("Applied: {title}")}</title>
                    <line x1=format!("{mx:.1}") y1=TITLE_H - 4.0 x2=format!("{mx:.1}") y2=axis_y class="mark-line"/>
                    <text x=format!("{lx:.1}") y=TITLE_H + 10.0 text-anchor=anchor class="mark-label">{label}</text>
                </g>
            }
        })
        .collect::<Vec<_>>();
    // Annotations: a dotted line each, labelled in the second panel so
    // their labels never sit on the applied moves' (drawn in the first).
    let annot_lines = annots
        .iter()
        .map(|a| {
            let ax = x_at(a.at, t0, t1);
            let w = label_width(&a.label);
            let (lx, anchor) = if ax + 3.0 + w <= W - RIGHT {
                (ax + 3.0, "start")
            } else {
                (ax - 3.0, "end")
            };
            view! {
                <g class=format!("annot annot-{}", a.kind) data-kind=a.kind>
                    <title>{a.words.clone()}</title>
                    <line x1=format!("{ax:.1}") y1=TITLE_H - 4.0 x2=format!("{ax:.1}") y2=axis_y class="annot-line"/>
                    <text x=format!("{lx:.1}") y=2.0 * TITLE_H + PANEL_H + 10.0 text-anchor=anchor class="annot-label">{a.label.clone()}</text>
                </g>
            }
        })
        .collect::<Vec<_>>();
    let annot_items = annots
        .iter()
        .map(|a| view! { <li data-kind=a.kind>{a.words.clone()}</li> })
        .collect::<Vec<_>>();
    let kinds = |k: &str| annots.iter().any(|a| a.kind == k);
    let (has_policy, has_review, has_estate) = (kinds("policy"), kinds("review"), kinds("estate"));
    let n_annots = annots.len();
    let mark_items = marks
        .iter()
        .map(|m| view! { <li data-identity=m.identity.clone()>{m.words.clone()}</li> })
        .collect::<Vec<_>>();
    let has_marks = !marks.is_empty();
    let first = points.first().cloned();
    let last = points.last().cloned();
    let summary = match (first, last) {
        (Some(a), Some(b)) => format!(
            "Over {} snapshots from {} to {}: cost {:.1} → {:.1} points, cross-site traffic {:.2} → {:.2} MB/s, open recommendations {} → {}.",
            points.len(), a.at_text, b.at_text, a.cost, b.cost, a.cross, b.cross, a.open, b.open
        ),
        _ => String::new(),
    };
    view! {
        <figure class="history-chart" data-testid="history-chart" data-points=points.len() data-marks=marks.len() data-mark-lines=lines.len() data-annotations=n_annots>
            <svg viewBox=format!("0 0 {W} {h}") role="img" aria-label=summary.clone()>
                {panel(0, "Cost (points)".into(), "cost", &x, &cost, false)}
                {panel(1, "Cross-site traffic (MB/s)".into(), "cross", &x, &cross, false)}
                {panel(2, "Open recommendations".into(), "open", &x, &open, true)}
                {labels}
                {annot_lines}
                {mark_lines}
                <text x="0" y=axis_y + 16.0 class="xtick">"UTC"</text>
            </svg>
            <figcaption>
                <ul class="legend" data-testid="history-legend">
                    <li><span class="key cost"></span>"cost of the estate as it stood (points)"</li>
                    <li><span class="key cross"></span>"traffic between sites (MB/s)"</li>
                    <li><span class="key open"></span>"recommendations open (count)"</li>
                    {has_marks.then(|| view! { <li><span class="key mark"></span>"an applied move (see Applied moves)"</li> })}
                    {has_policy.then(|| view! { <li><span class="key annot-policy"></span>"a policy change"</li> })}
                    {has_review.then(|| view! { <li><span class="key annot-review"></span>"a review decision"</li> })}
                    {has_estate.then(|| view! { <li><span class="key annot-estate"></span>"a new estate version"</li> })}
                </ul>
                <p class="hint">{summary}</p>
                {(n_annots > 0).then(|| view! {
                    <ul class="annots" data-testid="history-annotations" aria-label="Changes marked on the chart">{annot_items}</ul>
                })}
                {has_marks.then(|| view! {
                    <ul class="marks" data-testid="history-marks" aria-label="Applied moves marked on the chart">{mark_items}</ul>
                })}
            </figcaption>
        </figure>
    }
}

/// The series as a table (the chart's text alternative).
#[component]
fn Table(points: Vec<Point>) -> impl IntoView {
    let rows = points
        .into_iter()
        .rev()
        .map(|p| {
            view! {
                <tr>
                    <td>{p.at_text}</td>
                    <td class="n">{p.version}</td>
                    <td class="n">{format!("{:.1}", p.cost)}</td>
                    <td class="n">{format!("{:.2}", p.cross)}</td>
                    <td class="n">{p.open}</td>
                </tr>
            }
        })
        .collect::<Vec<_>>();
    view! {
        <details class="history-table">
            <summary>"The same as a table"</summary>
            <table data-testid="history-table">
                <caption>"Advice snapshots, newest first"</caption>
                <thead><tr>
                    <th scope="col">"evaluated (UTC)"</th><th scope="col">"estate version"</th>
                    <th scope="col">"cost (points)"</th><th scope="col">"cross-site (MB/s)"</th>
                    <th scope="col">"open"</th>
                </tr></thead>
                <tbody>{rows}</tbody>
            </table>
        </details>
    }
}

/// One side of a fact change, e.g. "14.0 (measured)".
pub fn fact_side(v: Option<&FactValue>, missing: &str) -> String {
    match v {
        None => missing.to_string(),
        Some(f) => format!("{} ({})", fixed(f.value, 2), f.class.as_str()),
    }
}

/// The moves of a recommendation in one line.
pub fn moves_line(r: &Recommendation) -> String {
    r.moves
        .iter()
        .map(|m| format!("{}: {} → {}", m.service, m.from, m.to))
        .collect::<Vec<_>>()
        .join(", together with ")
}

/// A recommendation of a change, with the facts that changed under it.
fn recommendation(r: &Recommendation) -> impl IntoView {
    let moves = moves_line(r);
    let facts = r
        .facts
        .iter()
        .map(|f| {
            let before = fact_side(f.before.as_ref(), "not in the earlier advice");
            let after = fact_side(f.after.as_ref(), "not in the newer advice");
            view! { <li><code>{f.fact.clone()}</code>": "{before}" → "{after}</li> }
        })
        .collect::<Vec<_>>();
    let gain = r.gain;
    let confidence = r.confidence.as_str();
    let facts = if facts.is_empty() {
        view! { <p class="hint">"No deciding fact changed: the estate around it did."</p> }
            .into_any()
    } else {
        view! { <ul class="facts">{facts}</ul> }.into_any()
    };
    view! {
        <li data-identity=r.identity.clone()>
            <strong>{moves}</strong>
            " "<span class=if gain < 0.0 { "gain bad" } else { "gain good" }>{format!("{} points", signed(gain, 1))}</span>
            " "<span class=format!("badge conf-{confidence}") title="the weakest fact deciding it">{confidence}</span>
            {facts}
        </li>
    }
}

/// One list of the change: appeared, disappeared or changed.
fn change_list(
    title: &'static str,
    testid: &'static str,
    list: Vec<Recommendation>,
) -> impl IntoView {
    let n = list.len();
    let body = if list.is_empty() {
        view! { <p class="empty">"None."</p> }.into_any()
    } else {
        view! { <ul class="changes">{list.iter().map(recommendation).collect::<Vec<_>>()}</ul> }
            .into_any()
    };
    view! {
        <section data-testid=testid data-count=n>
            <h4>{format!("{title} ({n})")}</h4>
            {body}
        </section>
    }
}

/// What changed between the two newest snapshots: the policy changes and
/// new estate versions between them with their effect on the advice, then
/// the recommendations.
#[component]
fn ChangesView(changes: Changes, annots: Vec<Annotation>) -> impl IntoView {
    let from = berth_engine::estate::parse_time(&changes.from_at).unwrap_or(i64::MIN);
    let to = berth_engine::estate::parse_time(&changes.to_at).unwrap_or(i64::MAX);
    let causes = annots
        .into_iter()
        .filter(|a| a.kind != "review" && a.at > from && a.at <= to)
        .map(|a| view! { <li data-kind=a.kind>{a.words}</li> })
        .collect::<Vec<_>>();
    view! {
        <div class="what-changed" data-testid="what-changed">
            <p>{format!("From the snapshot of {} to that of {}.", changes.from_at, changes.to_at)}</p>
            {(!causes.is_empty()).then(|| view! {
                <section data-testid="changes-causes">
                    <h4>"Changed in between"</h4>
                    <ul class="changes">{causes}</ul>
                </section>
            })}
            {change_list("New recommendations", "changes-appeared", changes.appeared)}
            {change_list("Recommendations gone", "changes-disappeared", changes.disappeared)}
            {change_list("Still recommended, deciding facts changed", "changes-changed", changes.changed)}
        </div>
    }
}

/// The history section of the Placement page.
#[component]
pub fn History() -> impl IntoView {
    let auth = expect_context::<Auth>();
    let outcomes = use_context::<crate::outcomes::Outcomes>();
    let history = RwSignal::new(None::<History>);
    let audit = RwSignal::new(Vec::<AuditEntry>::new());
    let error = RwSignal::new(None::<String>);
    Effect::new(move |_| {
        let Some(id) = auth.estate.get() else { return };
        leptos::task::spawn_local(async move {
            // Who changed the policy or decided a review, and when: the
            // annotations (their absence leaves the chart as it was).
            match client::get_typed::<AuditList>(
                &berth_api::endpoint::estate_audit(&id).query("limit", "200"),
            )
            .await
            {
                Ok(list) => audit.set(list.entries),
                Err(f) => error.set(Some(format!(
                    "Could not read the audit trail for the chart's annotations: {}",
                    f.message
                ))),
            }
            match client::get_typed::<History>(&berth_api::endpoint::get_advice_history(&id)).await
            {
                Ok(h) => history.set(Some(h)),
                Err(f) => error.set(Some(format!(
                    "Could not read the advice history: {}",
                    f.message
                ))),
            }
        });
    });
    view! {
        <section class="history" data-testid="history">
            <h2>"History"</h2>
            <ErrorLine message=error.into()/>
            {move || history.get().map(|h| {
                let pts = points(&h);
                let unreadable = h.unreadable.len();
                let note = (unreadable > 0).then(|| view! {
                    <p class="warn">{format!("{unreadable} snapshot(s) could not be read back and are left out.")}</p>
                });
                if pts.len() < 2 {
                    let n = pts.len();
                    return view! {
                        {note}
                        <p class="empty" data-testid="history-short">{format!(
                            "The advice driver has {} of this estate's advice; a history needs two. It takes one whenever the estate or its policy has changed since the last, at its next pass.",
                            if n == 0 { "no snapshot".to_string() } else { "one snapshot".to_string() }
                        )}</p>
                    }.into_any();
                }
                let marked = outcomes
                    .and_then(|o| o.report.get().as_ref().map(marks))
                    .unwrap_or_default();
                let annots = annotations(&audit.get(), &pts);
                let for_changes = annots.clone();
                view! {
                    {note}
                    <Chart points=pts.clone() marks=marked annots=annots/>
                    <Table points=pts/>
                    <h3>"What changed since the last snapshot"</h3>
                    {match h.changes {
                        None => view! { <p class="empty">"Nothing to compare."</p> }.into_any(),
                        Some(c) => view! { <ChangesView changes=c annots=for_changes/> }.into_any(),
                    }}
                }.into_any()
            })}
        </section>
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use berth_engine::fact::Class;
    use berth_engine::history::Snapshot;
    use berth_engine::{estate, front, Format, Policy};

    #[test]
    fn ranges_pad_the_span_and_never_collapse() {
        assert_eq!(y_range(&[10.0, 20.0], false), (9.0, 21.0));
        assert_eq!(y_range(&[5.0, 5.0], false), (4.0, 6.0));
        assert_eq!(y_range(&[100.0], false), (95.0, 105.0));
        assert_eq!(y_range(&[0.0, 3.0], true), (0.0, 3.0));
        assert_eq!(y_range(&[0.0, 0.0], true), (0.0, 1.0));
        assert_eq!(y_range(&[], false), (0.0, 1.0));
    }

    #[test]
    fn times_are_placed_by_time_and_labelled_by_span() {
        let x = xs(&[100, 150, 300]);
        assert_eq!(x[0], LEFT);
        assert_eq!(x[2], W - RIGHT);
        assert!((x[1] - (LEFT + 0.25 * (W - LEFT - RIGHT))).abs() < 1e-9);
        assert_eq!(xs(&[7, 7]), vec![LEFT + (W - LEFT - RIGHT) / 2.0; 2]);
        assert_eq!(time_label("2026-11-30T04:05:09Z", 300), "04:05:09");
        assert_eq!(time_label("2026-11-30T04:05:09Z", 7200), "04:05");
        assert_eq!(time_label("2026-11-30T04:05:09Z", 200_000), "11-30 04:05");
    }

    #[test]
    fn marks_sit_on_the_time_axis() {
        assert_eq!(x_at(100, 100, 300), LEFT);
        assert_eq!(x_at(300, 100, 300), W - RIGHT);
        assert!((x_at(150, 100, 300) - xs(&[100, 150, 300])[1]).abs() < 1e-9);
        let r = Report {
            now: "2026-11-30T06:00:00Z".into(),
            settle_s: 3600,
            applied: Vec::new(),
            calibration: None,
            calibration_line: None,
            calibration_parts: Vec::new(),
        };
        assert!(marks(&r).is_empty());
        let m = |label: &str| Mark {
            at: 0,
            at_text: String::new(),
            identity: String::new(),
            label: label.into(),
            words: String::new(),
        };
        let (a, b) = (m("analytics-rollup"), m("b"));
        // Room to the right: the name, right of the line.
        assert_eq!(
            mark_label(100.0, &[&a]),
            (103.0, "start", "analytics-rollup".into())
        );
        // Near the right edge: left of it.
        assert_eq!(
            mark_label(400.0, &[&a]),
            (397.0, "end", "analytics-rollup".into())
        );
        // Two steps of one write: counted.
        assert_eq!(
            mark_label(100.0, &[&a, &b]),
            (103.0, "start", "2 moves".into())
        );
    }

    #[test]
    fn policy_changes_and_new_versions_are_annotations_with_their_effect() {
        let p = |at: &str, version: i64, cost: f64| Point {
            at: berth_engine::estate::parse_time(at).unwrap(),
            at_text: at.into(),
            version,
            policy: String::new(),
            cost,
            cross: 1.0,
            open: 2.0,
        };
        let pts = [
            p("2026-11-30T04:00:00Z", 1, 100.0),
            p("2026-11-30T04:10:00Z", 1, 150.0),
            p("2026-11-30T04:20:00Z", 2, 140.0),
        ];
        let detail: serde_json::Value = serde_json::json!({
            "changed": [{"field": "/cross_site_weight", "from": 8.0, "to": 16.0}]
        });
        let entry = |action: &str, at: &str| AuditEntry {
            action: action.into(),
            actor: "ada".into(),
            at: at.into(),
            detail: detail.as_object().unwrap().clone(),
            estate: "e".into(),
            id: 1,
            reason: String::new(),
            subject: "policy".into(),
        };
        let a = annotations(
            &[
                entry("policy.changed", "2026-11-30T04:05:00Z"),
                // Before the first snapshot: not on the chart.
                entry("policy.changed", "2026-11-30T03:00:00Z"),
            ],
            &pts,
        );
        let kinds: Vec<&str> = a.iter().map(|x| x.kind).collect();
        assert_eq!(kinds, ["policy", "estate"]);
        assert_eq!(
            a[0].words,
            "Policy changed by ada at 2026-11-30T04:05:00Z: cost of traffic whose two ends are on different sites (cross_site_weight): 8.0 \u{2192} 16.0 points per MB/s. Across it: the estate cost 100.0 \u{2192} 150.0 points, cross-site traffic 1.00 \u{2192} 1.00 MB/s, open recommendations 2 \u{2192} 2 (snapshots of 2026-11-30T04:00:00Z and 2026-11-30T04:10:00Z)"
        );
        assert_eq!(a[1].label, "v2");
        assert!(a[1].words.starts_with(
            "Estate version 1 \u{2192} 2, first in the snapshot of 2026-11-30T04:20:00Z"
        ));
    }

    #[test]
    fn paths_join_or_step() {
        assert_eq!(path(&[0.0, 10.0], &[5.0, 1.0], false), "M0.0,5.0 L10.0,1.0");
        assert_eq!(path(&[0.0, 10.0], &[5.0, 1.0], true), "M0.0,5.0 H10.0 V1.0");
    }

    #[test]
    fn fact_sides_read_value_and_class() {
        let v = FactValue {
            value: Some(14.0),
            class: Class::Measured,
        };
        assert_eq!(fact_side(Some(&v), "-"), "14.00 (measured)");
        assert_eq!(fact_side(None, "not known"), "not known");
        let u = FactValue {
            value: None,
            class: Class::Guessed,
        };
        assert_eq!(fact_side(Some(&u), "-"), "unknown (guessed)");
    }

    /// The answer of `GET …/history` as the server writes it: the engine's
    /// front end over stored snapshots (here, the sample's advice, the
    /// older one with no moves, then one unreadable).
    fn answer() -> String {
        let e = estate::load(
            include_str!("../../examples/estates/sample.json"),
            Format::Json,
        )
        .unwrap();
        let p = Policy::default();
        let now = estate::parse_time("2026-11-30T04:05:00Z").unwrap();
        let advice = front::advice(&e, &p, now);
        let mut none: serde_json::Value = serde_json::from_str(&advice).unwrap();
        none["moves"] = serde_json::json!([]);
        let snap = |id: i64, at: i64, result: String| Snapshot {
            id,
            evaluated_at: at,
            estate_version: id,
            policy_digest: p.digest(),
            result,
        };
        front::history(&[
            snap(1, now - 3600, none.to_string()),
            snap(2, now, advice),
            snap(3, now - 60, "{}".into()),
        ])
    }

    #[test]
    fn the_engines_history_reads_typed() {
        let bytes = answer();
        let h: History = serde_json::from_str(&bytes).unwrap();
        // Read whole: every member the bytes hold, as reading them as JSON
        // gives it (serde_json may read a float a unit in the last place
        // off, so the typed value is for showing, never written again).
        assert_eq!(
            serde_json::to_value(&h).unwrap(),
            serde_json::from_str::<serde_json::Value>(&bytes).unwrap()
        );
        assert_eq!(h.unreadable, vec![3]);
        let pts = points(&h);
        assert_eq!(pts.len(), 2);
        assert_eq!(pts[0].at_text, "2026-11-30T03:05:00Z");
        assert_eq!((pts[0].version, pts[1].version), (1, 2));
        assert_eq!(pts[0].open, 0.0);
        assert!(pts[1].open >= 1.0);
        assert_eq!(pts[1].cost, h.points[1].cost);
        let c = h.changes.expect("two readable snapshots");
        assert_eq!(c.from_at, "2026-11-30T03:05:00Z");
        assert!(c.disappeared.is_empty() && c.changed.is_empty());
        let r = &c.appeared[0];
        let m = &r.moves[0];
        assert!(moves_line(r).starts_with(&format!("{}: {} → {}", m.service, m.from, m.to)));
    }
}
