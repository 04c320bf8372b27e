//! A move's Why: its flip conditions nearest first, the terms, the facts.

use super::*;

/// Facts (class, source, age), the term breakdown and the flip conditions
/// of one move.
#[component]
pub fn WhyPanel(why: MoveWhy) -> impl IntoView {
    let terms = why
        .terms
        .iter()
        .map(|t| {
            // The engine's words for the term; its result key when unknown.
            let id = t.term.to_string();
            let label = Term::from_id(&id).map_or(id.clone(), |t| t.label().to_string());
            view! { <tr data-term=id><td>{label}</td><td class="n">{fixed(Some(t.points), 2)}</td></tr> }
        })
        .collect_view();
    let facts = why
        .facts
        .iter()
        .map(|f| {
            // An RTT no stored fact gives is a policy value or an estimate
            // from distance, not a measurement of age 0: say which.
            let derived = match f.derivation {
                Some("same_cluster") => Some(("nominal", "policy value for the same cluster")),
                Some("same_site") => Some(("nominal", "policy value for the same site")),
                Some("unknown") => Some(("nominal", "policy value for an unknown path")),
                Some("great_circle") => {
                    Some(("estimated", "estimated from the distance between sites"))
                }
                _ => None,
            };
            let class = f.class.as_str();
            let (badge, badge_class, source, shown_age) = match derived {
                Some((label, words)) => (
                    label.to_string(),
                    "badge conf-nominal".to_string(),
                    words.to_string(),
                    "—".to_string(),
                ),
                None => (
                    class.to_string(),
                    format!("badge conf-{class}"),
                    f.source.clone(),
                    age(f.age_s),
                ),
            };
            view! {
                <tr data-derived=derived.is_some().to_string()>
                    <td>{f.fact.clone()}</td>
                    <td class="n">{fixed(f.value, 2)}</td>
                    <td><span class=badge_class>{badge}</span></td>
                    <td>{source}</td>
                    <td class="n">{shown_age}</td>
                </tr>
            }
        })
        .collect_view();
    let (ranked, quiet) = rank_flips(why.flips.iter().chain(&why.other_flips).collect());
    let flip_items = ranked
        .into_iter()
        .map(|(margin, f)| {
            let sentences = f.sentences.join(" ");
            let class = f.class.as_str();
            let now = format!("now {} {}", fixed(f.value, 2), f.unit);
            view! {
                <li data-margin=format!("{margin:.6}")>
                    <code>{f.fact.clone()}</code>" "
                    <span class="flip-now">{now}" "<span class=format!("badge conf-{class}")>{class}</span></span>
                    " "<span class="flip-margin">{margin_words(margin)}</span>": "{sentences}
                </li>
            }
        })
        .collect_view();
    let quiet_line = (!quiet.is_empty()).then(|| {
        let names = quiet.iter().map(|f| f.fact.as_str()).collect::<Vec<_>>().join(", ");
        view! {
            <p class="flips-none" data-testid="flips-none">
                {format!("No value of {} fact{} changes this move", quiet.len(), if quiet.len() == 1 { "" } else { "s" })}
                " (or it is a policy value, not a stored fact): "<span class="muted">{names}</span>"."
            </p>
        }
    });
    view! {
        <div class="why-body">
            {why.note.clone().map(|n| view! { <p>{n}</p> })}
            <crate::outcomes::WhyCalibration/>
            <h3>"Flip conditions, nearest first"</h3>
            <ul class="flips" data-testid="flips">{flip_items}</ul>
            {quiet_line}
            <h3>"Terms"</h3>
            <table><thead><tr><th scope="col">"term"</th><th scope="col">"points"</th></tr></thead><tbody>{terms}</tbody></table>
            <h3>"Facts"</h3>
            <table>
                <thead><tr><th scope="col">"fact"</th><th scope="col">"value"</th><th scope="col">"class"</th><th scope="col">"source"</th><th scope="col">"age"</th></tr></thead>
                <tbody>{facts}</tbody>
            </table>
        </div>
    }
}

/// The flip conditions that can change the move, with how far the
/// nearest threshold is from the current value (a share of it: 0.25 is a
/// quarter of the way), nearest first (ties by fact key); and the facts no
/// value of which changes it (or that are policy values), which need no
/// ranking — they are listed in one line.
pub fn rank_flips(flips: Vec<&Flip>) -> (Vec<(f64, &Flip)>, Vec<&Flip>) {
    let mut ranked = Vec::new();
    let mut quiet = Vec::new();
    for f in flips {
        let value = f.value;
        let nearest = [&f.above, &f.below]
            .into_iter()
            .filter_map(|t| t.as_ref().map(|t| t.value))
            .filter_map(|t| {
                let v = value?;
                // A share of the current value; from zero any threshold
                // is all the way (1).
                Some(if v == 0.0 {
                    1.0
                } else {
                    (t - v).abs() / v.abs()
                })
            })
            .fold(None, |m: Option<f64>, d| Some(m.map_or(d, |m| m.min(d))));
        match nearest {
            Some(d) => ranked.push((d, f)),
            None => quiet.push(f),
        }
    }
    ranked.sort_by(|a, b| a.0.total_cmp(&b.0).then_with(|| a.1.fact.cmp(&b.1.fact)));
    (ranked, quiet)
}

/// "12 % away" for a margin of 0.12.
pub(super) fn margin_words(margin: f64) -> String {
    let pct = margin * 100.0;
    if pct < 1.0 {
        "under 1 % away".into()
    } else {
        format!("{pct:.0} % away")
    }
}

/// The words of a reason a service cannot move, said of one service, as
/// the heading of its group (codes are never shown as such).
pub fn reason_words(code: &str) -> String {
    match code {
        "local_volumes" => "Keeps its data on local volumes".into(),
        "pinned" => "Pinned to its cluster's nodes".into(),
        "jurisdiction" => "Every other cluster is in a jurisdiction it may not use".into(),
        "trust_zone" => "Every other cluster is in another trust zone".into(),
        "tier" => "Every other cluster is of a tier it may not use".into(),
        "cluster_draining" => "Every cluster it could go to is draining".into(),
        "cluster_down" => "Every cluster it could go to is down".into(),
        other => other.replace('_', " "),
    }
}
