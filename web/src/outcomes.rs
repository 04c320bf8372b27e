//! "Applied moves" on the Placement page (issue 36, `docs/outcomes.md`):
//! every move carried out in the estate, what Berth had said of it, and
//! what was measured after it — predicted against observed, the ratio,
//! what the observation rests on, or what it is still waiting for — and
//! the estate's calibration. Read from `GET /api/estates/{id}/outcomes`;
//! the wording helpers are pure and tested here.

use berth_engine::outcome::{Applied, Report, Status};
use leptos::prelude::*;

use crate::client;
use crate::common::{Auth, ErrorLine};
use crate::pages::signed;

/// The state of one applied step in words.
pub fn status_word(a: &Applied) -> &'static str {
    match a.outcome.as_ref().map(|o| o.status) {
        Some(Status::Observed) => "observed",
        Some(Status::Waiting) => "waiting",
        Some(Status::Superseded) => "superseded",
        None => "not judged",
    }
}

/// What Berth had said of a step, in words.
pub fn basis_words(a: &Applied) -> String {
    match a.basis.as_str() {
        "advised" => match &a.advised_at {
            Some(at) => format!("advised in the advice of {at}"),
            None => "advised".into(),
        },
        "planned" => "planned in a review".into(),
        // A saved what-if that contained the move: held to what that
        // what-if predicted for it (`docs/outcomes.md`).
        "whatif" => {
            let name = a.scenario.as_deref().unwrap_or("(unnamed)");
            match &a.advised_at {
                Some(at) => format!("tried in the what-if \u{201c}{name}\u{201d} saved {at}: held to what it predicted"),
                None => format!("tried in the what-if \u{201c}{name}\u{201d}: held to what it predicted"),
            }
        }
        _ => "not advised: judged by the model at the move".into(),
    }
}

/// The ratio of observed to predicted, as a percentage; `None` without
/// an observation or with a prediction of exactly zero.
pub fn ratio_text(a: &Applied) -> Option<String> {
    let r = a.outcome.as_ref()?.observed.as_ref()?.ratio?;
    Some(format!("{:.0} % of the prediction", r * 100.0))
}

/// One applied step.
fn applied_item(a: &Applied) -> impl IntoView {
    let status = status_word(a);
    let members = a
        .identity
        .split('+')
        .map(|t| t.replacen('|', ": ", 1).replacen('|', " → ", 1))
        .collect::<Vec<_>>()
        .join(", together with ");
    let basis = basis_words(a);
    let body = match &a.outcome {
        None => view! { <p class="warn">{a.error.clone().unwrap_or_default()}</p> }.into_any(),
        Some(o) => {
            let predicted = format!("{} points", signed(o.predicted_gain, 1));
            let predicted_by = match a.basis.as_str() {
                "advised" => "predicted by the advice",
                "planned" => "predicted",
                "whatif" => "predicted by the what-if",
                _ => "predicted by the model at the move",
            };
            let observed = o.observed.as_ref().map(|ob| {
                let ratio = ratio_text(a).map(|r| format!(" ({r})")).unwrap_or_default();
                view! {
                    <tr><th scope="row">"observed, at the demand before the move"</th>
                        <td class="n" data-testid="observed-before">{format!("{} points{ratio}", signed(ob.gain_at_demand_before, 1))}</td></tr>
                    <tr><th scope="row">"observed, at the demand since"</th>
                        <td class="n">{format!("{} points", signed(ob.gain_at_demand_after, 1))}</td></tr>
                    <tr><th scope="row">"cross-site traffic"</th>
                        <td class="n">{format!("{:.2} → {:.2} MB/s", ob.cross_site_mb_s_before, ob.cross_site_mb_s_after)}</td></tr>
                    <tr><th scope="row">"headroom at both clusters"</th>
                        <td class="n">{format!("{:.1} → {:.1} points", ob.headroom_before, ob.headroom_after)}</td></tr>
                    <tr><th scope="row">"rests on"</th>
                        <td class="n"><span class=format!("badge conf-{}", ob.confidence.as_str())>{ob.confidence.as_str()}</span>" facts"</td></tr>
                }
            });
            let waiting = o
                .waiting_for
                .iter()
                .map(|w| view! { <li>{w.clone()}</li> })
                .collect::<Vec<_>>();
            let notes = o
                .notes
                .iter()
                .map(|n| view! { <li class="hint">{n.clone()}</li> })
                .collect::<Vec<_>>();
            view! {
                <table class="outcome">
                    <tr><th scope="row">{predicted_by}</th><td class="n" data-testid="predicted">{predicted}</td></tr>
                    {observed}
                </table>
                {(!waiting.is_empty()).then(|| view! { <p>"Waiting for:"</p><ul class="waiting">{waiting}</ul> })}
                {(!notes.is_empty()).then(|| view! { <ul class="notes">{notes}</ul> })}
            }
            .into_any()
        }
    };
    view! {
        <li data-identity=a.identity.clone() data-status=status data-testid="applied-move">
            <strong>{members}</strong>" "<span class=format!("badge status-{status}")>{status}</span>
            <p class="hint">{format!("{basis}; noticed by {} ({})", a.noticed_by.replace('_', " "), a.kind)}</p>
            {body}
        </li>
    }
}

/// The estate's outcomes report, read once per estate by the Placement
/// page and shared with everything on it that quotes it: the Applied
/// moves section, the Why panels (the calibration) and the history chart
/// (its marks). `None` until read.
#[derive(Clone, Copy)]
pub struct Outcomes {
    pub report: RwSignal<Option<Report>>,
}

impl Outcomes {
    pub fn new() -> Outcomes {
        Outcomes {
            report: RwSignal::new(None),
        }
    }
}

impl Default for Outcomes {
    fn default() -> Self {
        Self::new()
    }
}

/// The sentence a Why quotes from the estate's calibration, or `None`
/// with fewer than three judged advised moves (`docs/outcomes.md`).
pub fn why_quote(r: &Report) -> Option<String> {
    r.calibration_line
        .as_ref()
        .map(|line| format!("How past advice held: {line}."))
}

/// The calibration line in a Why panel, once the report is read and has
/// one; nothing otherwise (a Why never claims a track record it lacks).
#[component]
pub fn WhyCalibration() -> impl IntoView {
    let outcomes = use_context::<Outcomes>();
    move || {
        let quote = outcomes.and_then(|o| o.report.get().as_ref().and_then(why_quote));
        quote.map(|q| view! { <p class="why-calibration" data-testid="why-calibration">{q}</p> })
    }
}

/// The Applied moves section of the Placement page.
#[component]
pub fn AppliedMoves() -> impl IntoView {
    let auth = expect_context::<Auth>();
    let report = use_context::<Outcomes>().unwrap_or_default().report;
    let error = RwSignal::new(None::<String>);
    Effect::new(move |_| {
        let Some(id) = auth.estate.get() else { return };
        leptos::task::spawn_local(async move {
            // Judged at the page's evaluation time, like its advice: with
            // `?now=` the page shows the estate as of then.
            let url = berth_api::endpoint::list_outcomes(&id)
                .query("now", &crate::engine::format_time(client::eval_now()));
            match client::get_typed::<Report>(&url).await {
                Ok(r) => report.set(Some(r)),
                Err(f) => error.set(Some(format!(
                    "Could not read the applied moves: {}",
                    f.message
                ))),
            }
        });
    });
    view! {
        <section class="applied-moves" data-testid="applied-moves">
            <h2>"Applied moves"</h2>
            <ErrorLine message=error.into()/>
            {move || report.get().map(|r| {
                let calibration = match &r.calibration_line {
                    Some(line) => view! { <p data-testid="calibration">{format!("Calibration: {line}.")}</p> }.into_any(),
                    None => view! { <p class="hint" data-testid="calibration">"Calibration: fewer than three advised moves judged yet."</p> }.into_any(),
                };
                if r.applied.is_empty() {
                    return view! {
                        <p class="empty">"No move has been noticed in this estate yet: a Kubernetes import, an agent's re-sync or an estate upload that puts a service on another cluster is recorded here and checked against what is measured after it."</p>
                    }.into_any();
                }
                let items = r.applied.iter().rev().map(applied_item).collect::<Vec<_>>();
                // The calibration by kind of step and by the class of the
                // deciding facts the prediction rested on when it was made
                // ("advised on reported facts"; each step's "rests on" is
                // the observation's class), one line per part.
                let parts = r
                    .calibration_parts
                    .iter()
                    .map(|p| view! { <li data-by=p.by.clone() data-value=p.value.clone()>{format!("{}.", p.line)}</li> })
                    .collect::<Vec<_>>();
                view! {
                    {calibration}
                    {(!parts.is_empty()).then(|| view! {
                        <p class="hint">"By kind of step, and by the class of the facts each prediction rested on when it was advised (not what was observed since):"</p>
                        <ul class="calibration-parts" data-testid="calibration-parts">{parts}</ul>
                    })}
                    <ul class="applied">{items}</ul>
                }.into_any()
            })}
        </section>
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use berth_engine::fact::Class;

    fn applied(basis: &str) -> Applied {
        Applied {
            identity: "a|c1|c2".into(),
            basis: basis.into(),
            kind: "single".into(),
            noticed_by: "kubernetes_import".into(),
            events: vec![1],
            snapshot: None,
            advised_at: Some("2026-11-30T04:00:00Z".into()),
            scenario: None,
            predicted_confidence: Class::Measured,
            predicted_facts: Vec::new(),
            outcome: None,
            error: Some("x".into()),
        }
    }

    #[test]
    fn words_for_each_basis_and_status() {
        assert_eq!(
            basis_words(&applied("advised")),
            "advised in the advice of 2026-11-30T04:00:00Z"
        );
        assert_eq!(basis_words(&applied("planned")), "planned in a review");
        let mut w = applied("whatif");
        w.scenario = Some("drain c1".into());
        assert_eq!(
            basis_words(&w),
            "tried in the what-if \u{201c}drain c1\u{201d} saved 2026-11-30T04:00:00Z: held to what it predicted"
        );
        assert_eq!(
            basis_words(&applied("unadvised")),
            "not advised: judged by the model at the move"
        );
        assert_eq!(status_word(&applied("advised")), "not judged");
        assert_eq!(ratio_text(&applied("advised")), None);
    }

    #[test]
    fn the_why_quotes_the_calibration_only_when_there_is_one() {
        let mut r = Report {
            now: "2026-11-30T06:00:00Z".into(),
            settle_s: 3600,
            applied: vec![applied("advised")],
            calibration: None,
            calibration_line: None,
            calibration_parts: Vec::new(),
        };
        assert_eq!(why_quote(&r), None);
        r.calibration_line = Some(
            "in this estate, 3 applied moves delivered a median 88 % of their predicted gain (middle half 70–100 %)".into(),
        );
        assert_eq!(
            why_quote(&r).unwrap(),
            "How past advice held: in this estate, 3 applied moves delivered a median 88 % of their predicted gain (middle half 70–100 %)."
        );
    }
}
