//! What-if: a scenario edited in the browser and re-projected there on
//! every edit, with no request to the server (SPEC §8, §13): moves to
//! legal destinations, cluster evacuations, before/after charts, warnings,
//! capacity sensitivity; named scenarios saved and loaded through the API.

use leptos::prelude::*;
use serde_json::Value;

use super::{arr, num, s, signed};
use crate::client;
use crate::common::{Auth, ErrorLine, Gate, Scenario};
use crate::engine::{self, Step};

#[component]
pub fn WhatIf() -> impl IntoView {
    let auth = expect_context::<Auth>();
    let sc = expect_context::<Scenario>();
    let ready = RwSignal::new(false);
    let error = RwSignal::new(None::<String>);
    let services = RwSignal::new(Vec::<String>::new());
    let clusters = RwSignal::new(Vec::<String>::new());
    let pick_service = RwSignal::new(String::new());
    let pick_to = RwSignal::new(String::new());
    let pick_evacuate = RwSignal::new(String::new());
    let saved = RwSignal::new(Vec::<String>::new());
    let pick_saved = RwSignal::new(String::new());
    let note = RwSignal::new(None::<String>);

    let refresh_saved = move |id: String| {
        leptos::task::spawn_local(async move {
            match client::get(&format!("/api/estates/{id}/scenarios")).await {
                Ok(v) => saved.set(
                    arr(&v["scenarios"])
                        .iter()
                        .map(|x| {
                            x["name"]
                                .as_str()
                                .map(str::to_string)
                                .unwrap_or_else(|| s(x))
                        })
                        .collect(),
                ),
                Err(f) => error.set(Some(f.message)),
            }
        });
    };
    Effect::new(move |_| {
        let Some(id) = auth.estate.get() else { return };
        let id2 = id.clone();
        leptos::task::spawn_local(async move {
            match client::loaded(&id2).await {
                Ok(l) => {
                    services.set(engine::service_ids(&l));
                    clusters.set(engine::cluster_ids(&l));
                    ready.set(true);
                }
                Err(f) => error.set(Some(f.message)),
            }
        });
        refresh_saved(id);
    });

    // The projection, recomputed in the browser whenever the steps change.
    let projection = Memo::new(move |_| {
        if !ready.get() {
            return None;
        }
        let steps = sc.steps.get();
        let l = client::loaded_now()?;
        let t0 = client::perf_ms();
        let p = engine::project_json(&l, &sc.name.get(), &steps, client::eval_now());
        Some(p.map(|v| (v, client::perf_ms() - t0)))
    });
    let destinations = Memo::new(move |_| {
        ready.get();
        let svc = pick_service.get();
        client::loaded_now()
            .map(|l| engine::legal_destinations(&l, &svc))
            .unwrap_or_default()
    });

    let add_move = move |_| {
        let (service, to) = (pick_service.get_untracked(), pick_to.get_untracked());
        if service.is_empty() || to.is_empty() {
            note.set(Some(
                "Pick a service and one of its legal destinations first.".into(),
            ));
            return;
        }
        note.set(None);
        sc.steps.update(|st| {
            // One move per service in a scenario: a new one replaces it.
            st.retain(|x| !matches!(x, Step::Move { service: s, .. } if *s == service));
            st.push(Step::Move { service, to });
        });
    };
    let add_evacuation = move |_| {
        let c = pick_evacuate.get_untracked();
        if c.is_empty() {
            note.set(Some("Pick a cluster to evacuate first.".into()));
            return;
        }
        note.set(None);
        sc.steps.update(|st| {
            st.retain(|x| !matches!(x, Step::Evacuate(e) if *e == c));
            st.push(Step::Evacuate(c));
        });
    };
    let save = move |_| {
        let Some(id) = auth.estate.get_untracked() else {
            return;
        };
        let name = sc.name.get_untracked();
        let body = engine::scenario_json(&name, &sc.steps.get_untracked());
        leptos::task::spawn_local(async move {
            match client::request(
                "PUT",
                &format!("/api/estates/{id}/scenarios/{name}"),
                Some(body),
            )
            .await
            {
                Ok(_) => {
                    note.set(Some(format!("Saved as {name:?}.")));
                    refresh_saved(id);
                }
                Err(f) => error.set(Some(f.message)),
            }
        });
    };
    let load = move |_| {
        let Some(id) = auth.estate.get_untracked() else {
            return;
        };
        let name = pick_saved.get_untracked();
        if name.is_empty() {
            return;
        }
        leptos::task::spawn_local(async move {
            match client::get(&format!("/api/estates/{id}/scenarios/{name}")).await {
                Ok(v) => match engine::steps_of(&v) {
                    Ok(steps) => {
                        sc.name.set(name.clone());
                        sc.steps.set(steps);
                        note.set(Some(format!("Loaded {name:?}.")));
                    }
                    Err(m) => error.set(Some(m)),
                },
                Err(f) => error.set(Some(f.message)),
            }
        });
    };
    let may_operate = move || matches!(auth.session.get(), Some(Some(s)) if s.may_operate());

    view! {
        <h1>"What-if"</h1>
        <Gate>
            <ErrorLine message=error.into()/>
            <p class="hint">"Every edit is projected by the engine in your browser: nothing is sent to the server until you save."</p>
            <div class="whatif-grid">
                <section aria-labelledby="steps-h" class="panel">
                    <h2 id="steps-h">"Scenario"</h2>
                    <label for="sc-name">"Name"</label>
                    <input id="sc-name" bind:value=sc.name/>
                    <ol class="steps" data-testid="steps" data-count=move || sc.steps.get().len()>
                        {move || sc.steps.get().into_iter().enumerate().map(|(i, st)| {
                            let text = match &st {
                                Step::Move { service, to } => format!("move {service} to {to}"),
                                Step::Evacuate(c) => format!("evacuate {c}"),
                            };
                            let label = format!("Remove step {}: {text}", i + 1);
                            view! {
                                <li>{text}" "
                                    <button type="button" class="small" aria-label=label
                                        on:click=move |_| sc.steps.update(|v| { if i < v.len() { v.remove(i); } })>"Remove"</button>
                                </li>
                            }
                        }).collect_view()}
                    </ol>
                    {move || sc.steps.get().is_empty().then(|| view! { <p class="empty">"No steps yet: add a move or an evacuation."</p> })}
                    <fieldset>
                        <legend>"Add a move"</legend>
                        <label for="mv-service">"Service"</label>
                        <select id="mv-service" on:change=move |ev| { pick_service.set(event_target_value(&ev)); pick_to.set(String::new()); }
                            prop:value=move || pick_service.get()>
                            <option value="">"— pick a service —"</option>
                            {move || services.get().into_iter().map(|x| view! { <option value=x.clone()>{x.clone()}</option> }).collect_view()}
                        </select>
                        <label for="mv-to">"Destination (legal ones only)"</label>
                        <select id="mv-to" on:change=move |ev| pick_to.set(event_target_value(&ev)) prop:value=move || pick_to.get()>
                            <option value="">"— pick a destination —"</option>
                            {move || destinations.get().into_iter().map(|x| view! { <option value=x.clone()>{x.clone()}</option> }).collect_view()}
                        </select>
                        <button type="button" on:click=add_move>"Add move"</button>
                    </fieldset>
                    <fieldset>
                        <legend>"Evacuate a cluster"</legend>
                        <label for="ev-cluster">"Cluster"</label>
                        <select id="ev-cluster" on:change=move |ev| pick_evacuate.set(event_target_value(&ev)) prop:value=move || pick_evacuate.get()>
                            <option value="">"— pick a cluster —"</option>
                            {move || clusters.get().into_iter().map(|x| view! { <option value=x.clone()>{x.clone()}</option> }).collect_view()}
                        </select>
                        <button type="button" on:click=add_evacuation>"Evacuate"</button>
                    </fieldset>
                    <fieldset>
                        <legend>"Saved scenarios"</legend>
                        <Show when=may_operate fallback=|| view! { <p class="hint">"Viewers can load saved scenarios; saving needs an operator."</p> }>
                            <button type="button" on:click=save>"Save under this name"</button>
                        </Show>
                        <label for="saved">"Load"</label>
                        <select id="saved" on:change=move |ev| pick_saved.set(event_target_value(&ev)) prop:value=move || pick_saved.get()>
                            <option value="">"— saved scenarios —"</option>
                            {move || saved.get().into_iter().map(|x| view! { <option value=x.clone()>{x.clone()}</option> }).collect_view()}
                        </select>
                        <button type="button" on:click=load>"Load"</button>
                    </fieldset>
                    {move || note.get().map(|n| view! { <p role="status">{n}</p> })}
                </section>
                <section aria-labelledby="proj-h" class="panel" data-testid="projection">
                    <h2 id="proj-h">"Projection"</h2>
                    {move || match projection.get() {
                        None => view! { <p class="loading" role="status">"Loading the estate into the engine…"</p> }.into_any(),
                        Some(Err(m)) => view! { <p class="error" role="alert">{format!("The scenario cannot be projected: {m}")}</p> }.into_any(),
                        Some(Ok((p, ms))) => view! { <ProjectionView p=p ms=ms/> }.into_any(),
                    }}
                </section>
            </div>
        </Gate>
    }
}

#[component]
fn ProjectionView(p: Value, ms: f64) -> impl IntoView {
    let f = |v: &Value| v.as_f64().unwrap_or_default();
    let (cb, ca) = (f(&p["before"]["cost"]), f(&p["after"]["cost"]));
    let (xb, xa) = (
        f(&p["before"]["cross_site_mb_s"]),
        f(&p["after"]["cross_site_mb_s"]),
    );
    let warnings = arr(&p["warnings"]);
    let warning_items = warnings
        .iter()
        .map(|w| {
            let code = s(&w["code"]);
            view! { <li data-code=code.clone()><span class="badge warn">{code.clone()}</span>" "{s(&w["message"])}</li> }
        })
        .collect_view();
    let clusters = arr(&p["clusters"]);
    let sensitivity = arr(&p["sensitivity"])
        .into_iter()
        .map(|x| view! {
            <tr><td>{s(&x["cluster"])}</td><td>{s(&x["resource"])}</td><td>{s(&x["verdict"])}</td>
            <td class="n">{num(&x["tolerance_pct"], 1)}</td><td>{s(&x["class"])}</td></tr>
        })
        .collect_view();
    let moves = arr(&p["moves"])
        .into_iter()
        .map(|m| view! { <li>{format!("{}: {} → {} ({})", s(&m["service"]), s(&m["from"]), s(&m["to"]), s(&m["by"]))}</li> })
        .collect_view();
    view! {
        <p class="timing" data-testid="projected-in">{format!("Projected in your browser in {ms:.1} ms.")}</p>
        <div class="charts">
            <BeforeAfter title="Network cost (points)" before=cb after=ca testid="chart-cost"/>
            <BeforeAfter title="Cross-site traffic (MB/s)" before=xb after=xa testid="chart-cross"/>
        </div>
        <p data-testid="totals">{format!("Cost {cb:.1} → {ca:.1} points ({}), cross-site traffic {xb:.2} → {xa:.2} MB/s.", signed(ca - cb, 1))}</p>
        <ClusterLoads clusters=clusters/>
        <h3>"Warnings"</h3>
        {if warnings.is_empty() {
            view! { <p class="empty" data-testid="warnings-none">"No warnings."</p> }.into_any()
        } else {
            view! { <ul class="warnings" data-testid="warnings">{warning_items}</ul> }.into_any()
        }}
        <h3>"Services moved"</h3>
        <ul>{moves}</ul>
        <h3>"Capacity sensitivity"</h3>
        <table>
            <thead><tr><th scope="col">"cluster"</th><th scope="col">"resource"</th><th scope="col">"verdict"</th><th scope="col">"tolerance %"</th><th scope="col">"class"</th></tr></thead>
            <tbody>{sensitivity}</tbody>
        </table>
    }
}

/// Two horizontal bars, before and after, on one scale.
#[component]
pub fn BeforeAfter(
    title: &'static str,
    before: f64,
    after: f64,
    testid: &'static str,
) -> impl IntoView {
    // 300 px for the larger value: fits beside the labels at 1280 px and
    // scales down with the viewBox on a narrow window.
    let max = before.max(after).max(1e-9);
    let w = |x: f64| (x.max(0.0) / max * 300.0).max(1.0);
    view! {
        <figure class="chart" data-testid=testid data-before=before data-after=after>
            <figcaption>{title}</figcaption>
            <svg viewBox="0 0 420 56" role="img" aria-label=format!("{title}: before {before:.2}, after {after:.2}")>
                <text x="0" y="18" class="lbl">"before"</text>
                <rect x="50" y="6" height="18" width=w(before) class="bar before"/>
                <text x=55.0 + w(before) y="20" class="val">{format!("{before:.1}")}</text>
                <text x="0" y="46" class="lbl">"after"</text>
                <rect x="50" y="34" height="18" width=w(after) class="bar after"/>
                <text x=55.0 + w(after) y="48" class="val">{format!("{after:.1}")}</text>
            </svg>
        </figure>
    }
}

/// CPU utilisation of every cluster before and after, as paired bars.
#[component]
fn ClusterLoads(clusters: Vec<Value>) -> impl IntoView {
    let row_h = 22.0;
    let h = row_h * clusters.len() as f64 + 10.0;
    let bars = clusters
        .iter()
        .enumerate()
        .map(|(i, c)| {
            let y = 5.0 + i as f64 * row_h;
            let u = |k: &str| c["cpu"][k].as_f64();
            // Utilisation 0..1.5 mapped to 0..240 px: past 150 % the bar
            // is clipped (the number beside it still says how far).
            let w = |x: Option<f64>| x.map(|x| (x.clamp(0.0, 1.5) / 1.5 * 240.0).max(1.0)).unwrap_or(0.0);
            let label = |x: Option<f64>| x.map(|x| format!("{:.0}%", x * 100.0)).unwrap_or_else(|| "unknown".into());
            let (b, a) = (u("utilisation_before"), u("utilisation_after"));
            let evac = c["evacuated"].as_bool().unwrap_or(false);
            view! {
                <g>
                    <text x="0" y=y + 13.0 class="lbl">{s(&c["id"])}{if evac { " (evacuated)" } else { "" }}</text>
                    <rect x="150" y=y height="8" width=w(b) class="bar before"/>
                    <rect x="150" y=y + 9.0 height="8" width=w(a) class="bar after"/>
                    <text x="400" y=y + 13.0 class="val">{format!("{} → {}", label(b), label(a))}</text>
                </g>
            }
        })
        .collect_view();
    view! {
        <figure class="chart" data-testid="chart-clusters">
            <figcaption>"CPU utilisation per cluster, before (upper) and after (lower bar); the line marks 100 %"</figcaption>
            <svg viewBox=format!("0 0 520 {h}") role="img" aria-label="CPU utilisation per cluster before and after">
                <line x1="310" x2="310" y1="0" y2=h class="full"/>
                {bars}
            </svg>
        </figure>
    }
}
