//! Where could it go? Every cluster ranked for one service by the
//! engine's single-service placement scorer (`berth place`, `GET
//! …/place/{service}`), computed in the browser: eligible clusters by
//! score with their terms drawn as a small waterfall, then the ineligible
//! ones with the rule that refuses each. The service is in the address
//! (`?service=`), so a link from a move or a shared address opens it.

use berth_engine::place::{self, Candidate, Placement};
use leptos::prelude::*;
use leptos_router::hooks::use_query_map;

use super::signed;
use crate::client;
use crate::common::{Auth, ErrorLine, Gate};
use crate::engine;

/// A serialisable enum's name as the API writes it (`fits`, `tier`…).
fn name_of<T: serde::Serialize>(v: &T) -> String {
    serde_json::to_value(v)
        .ok()
        .and_then(|v| v.as_str().map(str::to_string))
        .unwrap_or_default()
}

#[component]
pub fn PlacePage() -> impl IntoView {
    let auth = expect_context::<Auth>();
    let ready = RwSignal::new(false);
    let error = RwSignal::new(None::<String>);
    let services = RwSignal::new(Vec::<String>::new());
    let service = RwSignal::new(String::new());
    Effect::new(move |_| {
        let Some(id) = auth.estate.get() else { return };
        leptos::task::spawn_local(async move {
            match client::loaded(&id).await {
                Ok(l) => {
                    services.set(engine::service_ids(&l));
                    ready.set(true);
                }
                Err(f) => error.set(Some(f.message)),
            }
        });
    });
    // The service named in the address (the router's view of it, which a
    // link within the app has already updated when this runs).
    let query = use_query_map();
    Effect::new(move |_| {
        if !ready.get() {
            return;
        }
        if let Some(s) = query.with(|q| q.get("service")) {
            if s != service.get_untracked() {
                service.set(s);
            }
        }
    });
    // The choice goes into the address.
    Effect::new(move |_| {
        let s = service.get();
        if ready.get_untracked() {
            client::replace_query(&[("service", (!s.is_empty()).then_some(s.as_str()))]);
        }
    });
    let result = Memo::new(move |_| {
        if !ready.get() {
            return None;
        }
        let s = service.get();
        if s.is_empty() {
            return None;
        }
        let l = client::loaded_now()?;
        let t0 = client::perf_ms();
        let r = place::place(&l.estate, &l.policy, client::eval_now(), &s);
        Some(r.map(|p| (p, client::perf_ms() - t0)))
    });
    view! {
        <h1>"Where could it go?"</h1>
        <Gate>
            <ErrorLine message=error.into()/>
            <p class="hint">"Every cluster ranked for one service as the advice judges it, in your browser: first the moves the advice could recommend (gain at least the bar, a certified fit), by the advice's gain; then staying; then the rest; then the clusters a rule refuses and why. The placement scorer's own score and terms (the ones evacuations use: headroom bonus, incumbency, blast radius, youth) are shown beside the gain and only break ties."</p>
            <label for="place-service">"Service "</label>
            <crate::common::ServicePicker id="place-service" services=services.into() value=service.into()
                on_pick=Callback::new(move |v: String| service.set(v))/>
            {move || match result.get() {
                None if !ready.get() => view! { <p class="loading" role="status">"Loading the estate into the engine…"</p> }.into_any(),
                None => view! { <p class="empty">"Pick a service to rank every cluster for it."</p> }.into_any(),
                Some(Err(m)) => view! { <p class="error" role="alert">{m}</p> }.into_any(),
                Some(Ok((p, ms))) => view! { <PlacementView p=p ms=ms/> }.into_any(),
            }}
        </Gate>
    }
}

#[component]
fn PlacementView(p: Placement, ms: f64) -> impl IntoView {
    let verdict = match (p.verdict, p.best.as_deref()) {
        ("stay", _) => format!("{} is best where it is, on {}.", p.service, p.current),
        ("move", Some(best)) => format!(
            "{} would be best on {best} (it is on {}).",
            p.service, p.current
        ),
        _ => format!(
            "No cluster is eligible for {}, not even {}.",
            p.service, p.current
        ),
    };
    let judged = if p.judged_after.is_empty() {
        format!(
            "Judged on the estate as it is; a move must gain at least {:.2} points.",
            p.bar
        )
    } else {
        format!(
            "Judged as the advice judges it, after its step{} {}; a move must gain at least {:.2} points.",
            if p.judged_after.len() == 1 { "" } else { "s" },
            p.judged_after.iter().map(|s| s.to_string()).collect::<Vec<_>>().join(", "),
            p.bar
        )
    };
    let request = |x: Option<f64>, unit: &str| {
        x.map_or_else(|| "unknown".to_string(), |v| format!("{v} {unit}"))
    };
    let (eligible, refused): (Vec<Candidate>, Vec<Candidate>) =
        p.candidates.into_iter().partition(|c| c.eligible);
    // One scale for every waterfall, on the square root of the points: a
    // 1,000-point over-target wall and a 2-point bonus both stay visible.
    let scale = eligible
        .iter()
        .flat_map(|c| {
            let t = c.terms;
            [
                t.headroom,
                t.over_target,
                t.incumbency,
                t.network,
                t.blast_radius,
                t.youth,
            ]
        })
        .map(|v| v.abs().sqrt())
        .fold(1e-9, f64::max);
    let rows = eligible
        .into_iter()
        .map(|c| {
            let t = c.terms;
            let parts = [
                ("headroom", t.headroom),
                ("over target", t.over_target),
                ("incumbency", t.incumbency),
                ("network", t.network),
                ("blast radius", t.blast_radius),
                ("youth", t.youth),
            ];
            // A waterfall: each term a step from where the last ended, green
            // up, red down, on one scale (40 px for the largest term).
            let mut x = 130.0;
            let steps = parts
                .iter()
                .enumerate()
                .filter(|(_, (_, v))| *v != 0.0)
                .map(|(i, (label, v))| {
                    let w = (v.abs().sqrt() / scale * 40.0).max(1.0);
                    let x0 = if *v < 0.0 { x - w } else { x };
                    x = if *v < 0.0 { x - w } else { x + w };
                    view! {
                        <rect x=x0 y=2.0 + i as f64 * 3.0 width=w height="3" class=if *v < 0.0 { "step down" } else { "step up" }>
                            <title>{format!("{label} {}", signed(*v, 2))}</title>
                        </rect>
                    }
                })
                .collect_view();
            let notes = c
                .notes
                .iter()
                .map(|n| n.message.clone())
                .collect::<Vec<_>>()
                .join(" ");
            let util = |u: Option<f64>| u.map_or_else(|| "unknown".into(), |u| format!("{:.0}%", u * 100.0));
            let terms_text = parts
                .iter()
                .filter(|(_, v)| *v != 0.0)
                .map(|(l, v)| format!("{l} {}", signed(*v, 2)))
                .collect::<Vec<_>>()
                .join(", ");
            view! {
                <tr data-cluster=c.cluster.clone() data-rank=c.rank.unwrap_or_default()>
                    <td class="n">{c.rank.unwrap_or_default()}</td>
                    <th scope="row">{c.cluster.clone()}{c.incumbent.then_some(" (now)")}</th>
                    <td class="n" data-testid="advice-gain">{c.advice_gain.map_or_else(|| "—".to_string(), |g| signed(g, 2))}</td>
                    <td>{if c.clears_bar { "yes" } else { "no" }}</td>
                    <td class="n">{format!("{:.2}", c.score)}</td>
                    <td><svg class="waterfall" viewBox="0 0 260 22" role="img" aria-label=format!("terms: {terms_text}")>
                        <line x1="130" x2="130" y1="0" y2="22" class="zero"/>{steps}</svg>
                        <br/><span class="terms-text">{terms_text.clone()}</span></td>
                    <td class="n">{util(c.cpu_utilisation)}</td>
                    <td class="n">{util(c.memory_utilisation)}</td>
                    <td>{name_of(&c.fit)}</td>
                    <td class="hint">{notes}</td>
                </tr>
            }
        })
        .collect_view();
    let refused_items = refused
        .into_iter()
        .map(|c| {
            let why = c
                .refusals
                .iter()
                .map(|r| format!("{} — {}", name_of(&r.code), r.message))
                .collect::<Vec<_>>()
                .join("; ");
            view! { <li data-cluster=c.cluster.clone()><strong>{c.cluster.clone()}</strong>{c.incumbent.then_some(" (now)")}": "{why}</li> }
        })
        .collect_view();
    view! {
        <p data-testid="place-verdict" data-verdict=p.verdict data-best=p.best.clone().unwrap_or_default()><strong>{verdict}</strong></p>
        {p.advice.clone().map(|a| view! { <p data-testid="place-advice">{a}</p> })}
        <p class="hint" data-testid="place-judged">{judged}</p>
        <p class="hint">{format!(
            "Owner {}; requests {} CPU, {} memory. Ranked in your browser in {ms:.1} ms.",
            if p.owner.is_empty() { "unknown" } else { p.owner.as_str() },
            request(p.cpu, "cores"),
            request(p.memory_gib, "GiB")
        )}</p>
        <div class="table-wrap">
            <table data-testid="place-ranked" class="compare">
                <caption>"Eligible clusters, best first by the advice's gain (scorer terms: green raises the score, red lowers it)"</caption>
                <thead><tr><th scope="col">"rank"</th><th scope="col">"cluster"</th><th scope="col">"gain (advice)"</th><th scope="col">"clears the bar"</th><th scope="col">"scorer score"</th><th scope="col">"scorer terms"</th>
                    <th scope="col">"CPU after"</th><th scope="col">"memory after"</th><th scope="col">"fit"</th><th scope="col">"notes"</th></tr></thead>
                <tbody>{rows}</tbody>
            </table>
        </div>
        <h2>"Clusters a rule refuses"</h2>
        <ul data-testid="place-refused">{refused_items}</ul>
    }
}
