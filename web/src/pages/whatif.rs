//! What-if: a scenario edited in the browser and re-projected there on
//! every edit, with no request to the server (SPEC §8, §13): moves to
//! legal destinations, cluster evacuations, before/after charts, warnings,
//! capacity sensitivity; named scenarios saved and loaded through the API.

use berth_engine::whatif::{By, ClusterLoad, Evacuation, ProjectedMove, Projection, ResourceLoad};
use leptos::prelude::*;

use super::fixed;
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
    let saved = RwSignal::new(Vec::<String>::new());
    let note = RwSignal::new(None::<String>);
    // The name field's own problem (empty, or not an id), shown under it.
    let name_error = RwSignal::new(None::<String>);
    // The scenario as last saved or loaded: anything else is unsaved work.
    let clean = RwSignal::new(None::<(String, Vec<Step>)>);
    keep_in_address(sc, error, clean);
    let unsaved = Signal::derive(move || {
        let steps = sc.steps.get();
        !steps.is_empty() && clean.with(|c| c.as_ref() != Some(&(sc.name.get(), steps)))
    });
    let refresh_saved = Callback::new(move |id: String| {
        leptos::task::spawn_local(async move {
            match client::get_typed::<berth_api::ScenarioList>(
                &berth_api::endpoint::list_scenarios(&id),
            )
            .await
            {
                Ok(l) => saved.set(l.scenarios.into_iter().map(|x| x.name).collect()),
                Err(f) => error.set(Some(f.message)),
            }
        });
    });
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
        refresh_saved.run(id);
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

    view! {
        <h1>"What-if"</h1>
        <Gate>
            <ErrorLine message=error.into()/>
            <p class="hint">"Every edit is projected by the engine in your browser: nothing is sent to the server until you save."</p>
            <div class="whatif-grid">
                <section aria-labelledby="steps-h" class="panel">
                    <h2 id="steps-h">"Scenario"</h2>
                    <label for="sc-name">"Name"</label>
                    <input id="sc-name" bind:value=sc.name
                        aria-invalid=move || name_error.get().is_some().to_string()
                        aria-describedby="sc-name-error"/>
                    <span id="sc-name-error" class="field-error" role="alert" data-testid="name-error">{move || name_error.get()}</span>
                    {move || unsaved.get().then(|| view! { <p class="hint" data-testid="unsaved">"Not saved: leaving this page's address asks first; the steps are kept in the address."</p> })}
                    <StepList/>
                    <AddMove services ready note/>
                    <AddEvacuation clusters note/>
                    <SavedScenarios saved note name_error clean error refresh_saved unsaved/>
                    {move || note.get().map(|n| view! { <p role="status">{n}</p> })}
                </section>
                <section aria-labelledby="proj-h" class="panel" data-testid="projection">
                    <h2 id="proj-h">"Projection"</h2>
                    {move || match projection.get() {
                        None => view! { <p class="loading" role="status">"Loading the estate into the engine…"</p> }.into_any(),
                        Some(Err(m)) => view! { <p class="error" role="alert">{format!("The scenario cannot be projected: {m}")}</p> }.into_any(),
                        Some(Ok((p, ms))) => {
                            // The policy's utilisation target: where the
                            // headroom penalty starts.
                            let target = client::loaded_now().map_or(0.8, |l| l.policy.headroom_threshold);
                            view! { <ProjectionView p=p ms=ms target=target/> }.into_any()
                        }
                    }}
                </section>
            </div>
        </Gate>
    }
}

/// The scenario lives in the address (`?steps=…&scenario=…`), so a
/// reload or a shared link shows it again; and leaving with unsaved
/// steps asks first.
fn keep_in_address(
    sc: Scenario,
    error: RwSignal<Option<String>>,
    clean: RwSignal<Option<(String, Vec<Step>)>>,
) {
    let from_address = StoredValue::new(true);
    Effect::new(move |_| {
        if from_address.get_value() {
            from_address.set_value(false);
            if sc.steps.get_untracked().is_empty() {
                if let Some(q) = client::query_param("steps") {
                    match engine::steps_from_query(&q) {
                        Ok(steps) => sc.steps.set(steps),
                        Err(m) => error.set(Some(format!(
                            "The address holds a scenario this page cannot read ({m}); it starts empty."
                        ))),
                    }
                }
                if let Some(n) = client::query_param("scenario") {
                    sc.name.set(n);
                }
            }
        }
        let steps = sc.steps.get();
        let name = sc.name.get();
        let q = engine::steps_to_query(&steps);
        let some = !steps.is_empty();
        client::replace_query(&[
            ("steps", some.then_some(q.as_str())),
            ("scenario", some.then_some(name.as_str())),
        ]);
        let unsaved = some && clean.with(|c| c.as_ref() != Some(&(name, steps)));
        client::set_unsaved(unsaved);
    });
    // Leaving the page inside the app keeps the steps (the scenario is
    // shared with the other pages), so nothing is lost: no guard then.
    on_cleanup(|| client::set_unsaved(false));
}

/// The scenario's steps in order, each with Remove.
#[component]
fn StepList() -> impl IntoView {
    let sc = expect_context::<Scenario>();
    view! {
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
    }
}

/// A move of one service to one of its legal destinations.
#[component]
fn AddMove(
    services: RwSignal<Vec<String>>,
    ready: RwSignal<bool>,
    note: RwSignal<Option<String>>,
) -> impl IntoView {
    let sc = expect_context::<Scenario>();
    let pick_service = RwSignal::new(String::new());
    let pick_to = RwSignal::new(String::new());
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
    view! {
    <fieldset>
        <legend>"Add a move"</legend>
        <label for="mv-service">"Service"</label>
        <crate::common::ServicePicker id="mv-service" services=services.into() value=pick_service.into()
            on_pick=Callback::new(move |v: String| { pick_service.set(v); pick_to.set(String::new()); })/>
        <label for="mv-to">"Destination (legal ones only)"</label>
        <select id="mv-to" on:change=move |ev| pick_to.set(event_target_value(&ev)) prop:value=move || pick_to.get()>
            <option value="">"— pick a destination —"</option>
            {move || destinations.get().into_iter().map(|x| view! { <option value=x.clone()>{x.clone()}</option> }).collect_view()}
        </select>
        <button type="button" on:click=add_move>"Add move"</button>
    </fieldset>
    }
}

/// An evacuation of one cluster.
#[component]
fn AddEvacuation(clusters: RwSignal<Vec<String>>, note: RwSignal<Option<String>>) -> impl IntoView {
    let sc = expect_context::<Scenario>();
    let pick_evacuate = RwSignal::new(String::new());
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
    view! {
    <fieldset>
        <legend>"Evacuate a cluster"</legend>
        <label for="ev-cluster">"Cluster"</label>
        <select id="ev-cluster" on:change=move |ev| pick_evacuate.set(event_target_value(&ev)) prop:value=move || pick_evacuate.get()>
            <option value="">"— pick a cluster —"</option>
            {move || clusters.get().into_iter().map(|x| view! { <option value=x.clone()>{x.clone()}</option> }).collect_view()}
        </select>
        <button type="button" on:click=add_evacuation>"Evacuate"</button>
    </fieldset>
    }
}

/// Save under the name (operators), load a saved scenario.
#[component]
fn SavedScenarios(
    saved: RwSignal<Vec<String>>,
    note: RwSignal<Option<String>>,
    name_error: RwSignal<Option<String>>,
    clean: RwSignal<Option<(String, Vec<Step>)>>,
    error: RwSignal<Option<String>>,
    refresh_saved: Callback<String>,
    unsaved: Signal<bool>,
) -> impl IntoView {
    let auth = expect_context::<Auth>();
    let sc = expect_context::<Scenario>();
    let pick_saved = RwSignal::new(String::new());
    let save = move |_| {
        let Some(id) = auth.estate.get_untracked() else {
            return;
        };
        let name = sc.name.get_untracked().trim().to_string();
        // Checked here, at the field, with the server's own rule: an empty
        // or odd name would otherwise make a broken address.
        if name.is_empty() {
            name_error.set(Some("Give the scenario a name first.".into()));
            client::focus_by_id("sc-name");
            return;
        }
        if let Some(p) = berth_engine::chars::id_problem(&name) {
            name_error.set(Some(format!("Not a usable name: {p}.")));
            client::focus_by_id("sc-name");
            return;
        }
        name_error.set(None);
        if saved.with_untracked(|s| s.contains(&name))
            && clean.with_untracked(|c| c.as_ref().map(|c| &c.0) != Some(&name))
            && !client::confirm(&format!(
                "A scenario named {name:?} is already saved. Replace it with this one?"
            ))
        {
            note.set(Some(format!("Not saved: {name:?} was kept as it was.")));
            return;
        }
        let steps = sc.steps.get_untracked();
        let body = engine::scenario_json(&name, &steps);
        leptos::task::spawn_local(async move {
            match client::request(
                "PUT",
                &berth_api::endpoint::put_scenario(&id, &name),
                Some(body),
            )
            .await
            {
                Ok(_) => {
                    error.set(None);
                    sc.name.set(name.clone());
                    clean.set(Some((name.clone(), steps)));
                    note.set(Some(format!("Saved as {name:?}.")));
                    refresh_saved.run(id);
                }
                Err(f) => {
                    note.set(None);
                    error.set(Some(f.message));
                }
            }
        });
    };
    let load = move |_| {
        let Some(id) = auth.estate.get_untracked() else {
            return;
        };
        let name = pick_saved.get_untracked();
        if name.is_empty() {
            note.set(Some("Pick a saved scenario to load first.".into()));
            return;
        }
        if unsaved.get_untracked()
            && !client::confirm("The scenario on this page is not saved. Load another and lose it?")
        {
            return;
        }
        leptos::task::spawn_local(async move {
            match client::get(&berth_api::endpoint::get_scenario(&id, &name)).await {
                Ok(v) => match engine::steps_of(&v) {
                    Ok(steps) => {
                        error.set(None);
                        name_error.set(None);
                        sc.name.set(name.clone());
                        clean.set(Some((name.clone(), steps.clone())));
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
    }
}

/// How a projected move came about, in the engine's words (`by`).
fn by_word(by: By) -> &'static str {
    match by {
        By::Move => "move",
        By::Evacuate => "evacuate",
    }
}

/// The line of a service that moved: `service: from → to (by)`.
fn move_line(m: &ProjectedMove) -> String {
    format!("{}: {} → {} ({})", m.service, m.from, m.to, by_word(m.by))
}

/// What an evacuated cluster still holds afterwards, in cores and GiB;
/// `None` when the projection has no such cluster.
fn load_left(clusters: &[ClusterLoad], cluster: &str) -> Option<String> {
    clusters.iter().find(|c| c.id == cluster).map(|c| {
        let part = |r: &ResourceLoad, unit: &str| {
            r.load_after
                .map_or_else(|| format!("unknown {unit}"), |x| format!("{x:.1} {unit}"))
        };
        format!("{} and {}", part(&c.cpu, "cores"), part(&c.memory, "GiB"))
    })
}

/// The sentence heading an evacuation.
fn evacuation_line(e: &Evacuation) -> String {
    let placed = e.placed.len();
    format!(
        "Evacuating {} (step {}): {} service{} placed elsewhere, {} cannot leave.",
        e.cluster,
        e.step,
        placed,
        if placed == 1 { "" } else { "s" },
        e.stuck.len()
    )
}

#[component]
fn ProjectionView(p: Projection, ms: f64, target: f64) -> impl IntoView {
    let (cb, ca) = (p.before.cost, p.after.cost);
    let (xb, xa) = (p.before.cross_site_mb_s, p.after.cross_site_mb_s);
    let Projection {
        before,
        after,
        moves,
        clusters,
        warnings,
        evacuations,
        sensitivity,
        ..
    } = p;
    let warning_items = warnings
        .iter()
        .map(|w| {
            // The code stays an attribute; people read its words.
            let code = w.code.as_str();
            view! { <li data-code=code><span class="badge warn">{warning_words(code)}</span>" "{w.message.clone()}</li> }
        })
        .collect_view();
    let sensitivity = sensitivity
        .into_iter()
        .map(|x| {
            view! {
                <tr><td>{x.cluster}</td><td>{x.resource}</td><td>{x.verdict}</td>
                <td class="n">{fixed(x.tolerance_pct, 1)}</td><td>{x.class.as_str()}</td></tr>
            }
        })
        .collect_view();
    // The traffic as money before and after (docs/advice.md §1a): the
    // projection's moves replayed on the loaded estate.
    let money = client::loaded_now().map(|l| {
        let pairs: Vec<(&str, &str)> = moves
            .iter()
            .map(|m| (m.service.as_str(), m.to.as_str()))
            .collect();
        berth_engine::money::of_placement_change(&l.estate, &l.policy, &pairs)
    });
    let money_words = money.map(|(b, a)| {
        format!(
            " Transfer {} \u{2192} {} at the policy's prices (a 730-hour month; a reading, not part of the points).",
            berth_engine::money::dollars_month(b.usd_month),
            berth_engine::money::dollars_month(a.usd_month)
        )
    });
    let money_saving = money.map(|(b, a)| {
        let d = b.usd_month - a.usd_month;
        view! { <span class=if d < 0.0 { "bad" } else { "good" } data-testid="money-saving">{format!(
            " Saving {}{}.",
            if d < 0.0 { "\u{2212}" } else { "+" },
            berth_engine::money::dollars_month(d)
        )}</span> }
    });
    let moved = moves.len();
    let move_items = moves
        .iter()
        .map(|m| view! { <li>{move_line(m)}</li> })
        .collect_view();
    // The cost by term: what each part of the estate's cost does.
    let terms = berth_engine::cost::Term::ALL
        .into_iter()
        .filter(|t| t.in_totals())
        .map(|t| {
            let (b, a) = (
                before.get(t).unwrap_or_default(),
                after.get(t).unwrap_or_default(),
            );
            view! {
                <tr data-term=t.id()><th scope="row">{t.label()}</th>
                    <td class="n">{format!("{b:.1}")}</td><td class="n">{format!("{a:.1}")}</td>
                    {super::saving_cell(b, a)}</tr>
            }
        })
        .collect_view();
    let evacuations = evacuations
        .into_iter()
        .map(|e| {
            let left = load_left(&clusters, &e.cluster);
            let line = evacuation_line(&e);
            let Evacuation { cluster, stuck, .. } = e;
            let stuck_items = stuck
                .iter()
                .map(|x| {
                    let why = x
                        .reasons
                        .iter()
                        .map(|r| r.message.as_str())
                        .collect::<Vec<_>>()
                        .join("; ");
                    view! { <li><strong>{x.service.clone()}</strong>" — "{why}</li> }
                })
                .collect_view();
            view! {
                <div class="evacuation" data-testid="evacuation" data-cluster=cluster.clone()>
                    <p>{line}</p>
                    {(!stuck.is_empty()).then(|| view! { <ul class="stuck">{stuck_items}</ul> })}
                    {left.map(|l| view! { <p class="hint" data-testid="load-left">{format!(
                        "Still in use on {cluster} afterwards: {l} — the services that cannot leave and load Berth does not model as services (other workloads, system pods)."
                    )}</p> })}
                </div>
            }
        })
        .collect_view();
    view! {
        <p class="timing" data-testid="projected-in">{format!("Projected in your browser in {ms:.1} ms.")}</p>
        <div class="charts">
            <BeforeAfter title="Network cost (points)" before=cb after=ca testid="chart-cost"/>
            <BeforeAfter title="Cross-site traffic (MB/s)" before=xb after=xa testid="chart-cross"/>
        </div>
        <p data-testid="totals">{format!("Cost {cb:.1} → {ca:.1} points (")}{super::saving_span(cb, ca)}{format!("), cross-site traffic {xb:.2} → {xa:.2} MB/s.")}{money_words}{money_saving}</p>
        <table class="terms" data-testid="term-breakdown">
            <caption>"Cost by term (points)"</caption>
            <thead><tr><th scope="col">"term"</th><th scope="col">"before"</th><th scope="col">"after"</th><th scope="col" title="positive: the cost falls; negative: it rises">"saving"</th></tr></thead>
            <tbody>{terms}
                <tr class="total"><th scope="row">"total"</th><td class="n">{format!("{cb:.1}")}</td><td class="n">{format!("{ca:.1}")}</td>{super::saving_cell(cb, ca)}</tr>
            </tbody>
        </table>
        <ClusterLoads clusters=clusters.clone() resource=Resource::Cpu target=target/>
        <ClusterLoads clusters=clusters resource=Resource::Memory target=target/>
        {evacuations}
        <h3>"Warnings"</h3>
        {if warnings.is_empty() {
            view! { <p class="empty" data-testid="warnings-none">"No warnings."</p> }.into_any()
        } else {
            view! { <ul class="warnings" data-testid="warnings">{warning_items}</ul> }.into_any()
        }}
        <h3>"Services moved"</h3>
        {if moved == 0 {
            view! { <p class="empty" data-testid="moved-none">"No service changes cluster in this scenario."</p> }.into_any()
        } else {
            view! { <ul data-testid="moved">{move_items}</ul> }.into_any()
        }}
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

/// Utilisation of one resource (`cpu` or `memory`) of every cluster,
/// before and after, as paired bars, with the policy's target and 100 %
/// marked; an after bar past the target is drawn in the warning colour.
#[component]
fn ClusterLoads(clusters: Vec<ClusterLoad>, resource: Resource, target: f64) -> impl IntoView {
    let row_h = 22.0;
    let h = row_h * clusters.len() as f64 + 10.0;
    // Utilisation 0..1.5 mapped to 0..240 px from x = 150: past 150 % the
    // bar is clipped (the number beside it still says how far).
    let x_of = |u: f64| 150.0 + u.clamp(0.0, 1.5) / 1.5 * 240.0;
    let over = std::cell::Cell::new(0usize);
    let bars = clusters
        .iter()
        .enumerate()
        .map(|(i, c)| {
            let y = 5.0 + i as f64 * row_h;
            let r = resource.of(c);
            let w = |x: Option<f64>| x.map(|x| (x_of(x) - 150.0).max(1.0)).unwrap_or(0.0);
            let label = |x: Option<f64>| x.map(|x| format!("{:.0}%", x * 100.0)).unwrap_or_else(|| "unknown".into());
            let (b, a) = (r.utilisation_before, r.utilisation_after);
            let evac = c.evacuated;
            let hot = a.is_some_and(|a| a > target);
            if hot {
                over.set(over.get() + 1);
            }
            view! {
                <g data-cluster=c.id.clone() data-over=hot.to_string()>
                    <text x="0" y=y + 13.0 class="lbl">{c.id.clone()}{if evac { " (evacuated)" } else { "" }}</text>
                    <rect x="150" y=y height="8" width=w(b) class="bar before"/>
                    <rect x="150" y=y + 9.0 height="8" width=w(a) class=if hot { "bar after over" } else { "bar after" }/>
                    <text x="400" y=y + 13.0 class="val">{format!("{} → {}", label(b), label(a))}{if hot { " over target" } else { "" }}</text>
                </g>
            }
        })
        .collect_view();
    let (what, unit, key) = match resource {
        Resource::Cpu => ("CPU", "cores", "cpu"),
        Resource::Memory => ("Memory", "GiB", "memory"),
    };
    let pct = (target * 100.0).round();
    let caption = format!(
        "{what} utilisation ({unit}) per cluster, before (upper) and after (lower bar); dashed: 100 %, dotted: the policy's {pct:.0} % target"
    );
    let over = over.get();
    view! {
        <figure class="chart" data-testid=format!("chart-clusters-{key}") data-target=target data-over=over>
            <figcaption>{caption}</figcaption>
            <svg viewBox=format!("0 0 560 {h}") role="img" aria-label=format!("{what} utilisation per cluster before and after; {over} over the {pct:.0} % target after")>
                <line x1=x_of(target) x2=x_of(target) y1="0" y2=h class="target"/>
                <line x1=x_of(1.0) x2=x_of(1.0) y1="0" y2=h class="full"/>
                {bars}
            </svg>
        </figure>
    }
}

/// The resource a [`ClusterLoads`] chart draws.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Resource {
    Cpu,
    Memory,
}

impl Resource {
    fn of(self, c: &ClusterLoad) -> &ResourceLoad {
        match self {
            Resource::Cpu => &c.cpu,
            Resource::Memory => &c.memory,
        }
    }
}

/// A what-if warning's code in words (issue 34: codes in words
/// everywhere), for its badge.
pub fn warning_words(code: &str) -> String {
    match code {
        "pinned" => "pinned to its nodes".into(),
        "local_volumes" => "data on local volumes".into(),
        "cluster_draining" => "cluster draining".into(),
        "cluster_down" => "cluster down".into(),
        "jurisdiction" => "outside its jurisdictions".into(),
        "trust_zone" => "another trust zone".into(),
        "tier" => "tier not allowed".into(),
        "over_capacity" => "over capacity".into(),
        "cant_tell" => "fit unknown".into(),
        "over_target" => "over the target".into(),
        "cannot_leave" => "cannot leave".into(),
        "into_evacuated" => "into an evacuated cluster".into(),
        "moved_again" => "moved again".into(),
        "no_op" => "already there".into(),
        "duplicate_workload" => "same workload already there".into(),
        other => other.replace('_', " "),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pages::num;
    use berth_engine::{estate, front, Format, Policy};
    use serde_json::Value;

    const SAMPLE: &str = include_str!("../../../examples/estates/sample.json");
    const NOW: &str = "2026-11-30T04:05:00Z";

    /// The sample's snapshot loaded as the page loads it, a scenario that
    /// moves a service and evacuates a cluster with a pinned service, its
    /// typed projection, and the front end's bytes for the same scenario.
    fn projected() -> (Projection, String) {
        let policy = Policy::default();
        let snapshot = berth_api::EstateSnapshot::write(
            "sample",
            1,
            "x",
            &policy.digest(),
            NOW,
            &serde_json::to_string(&policy).unwrap(),
            SAMPLE,
        );
        let l = engine::load_snapshot(&snapshot).unwrap();
        let now = engine::parse_time(NOW).unwrap();
        let steps = [
            Step::Move {
                service: "checkout".into(),
                to: "c-fra-2".into(),
            },
            Step::Evacuate("c-fra-pci".into()),
        ];
        let p = engine::project_json(&l, "t", &steps, now).unwrap();
        let e = estate::load(SAMPLE, Format::Json).unwrap();
        let bytes = front::whatif(&e, &policy, now, &engine::scenario_json("t", &steps)).unwrap();
        (p, bytes)
    }

    #[test]
    fn the_typed_projection_is_the_front_ends_bytes() {
        let (p, bytes) = projected();
        assert_eq!(front::to_bytes(&p), bytes);
    }

    /// What the page shows from the typed projection is what it showed
    /// when it read the same bytes as JSON.
    #[test]
    fn the_page_reads_what_the_json_says() {
        let (p, bytes) = projected();
        let v: Value = serde_json::from_str(&bytes).unwrap();
        assert!(!p.moves.is_empty() && !p.evacuations.is_empty());
        for (m, j) in p.moves.iter().zip(v["moves"].as_array().unwrap()) {
            let s = |k: &str| j[k].as_str().unwrap().to_string();
            assert_eq!(
                move_line(m),
                format!(
                    "{}: {} → {} ({})",
                    s("service"),
                    s("from"),
                    s("to"),
                    s("by")
                )
            );
        }
        let e = &p.evacuations[0];
        let j = &v["evacuations"][0];
        assert!(!e.stuck.is_empty(), "the pinned service cannot leave");
        let (placed, stuck) = (
            j["placed"].as_array().unwrap().len(),
            j["stuck"].as_array().unwrap().len(),
        );
        assert_eq!(
            evacuation_line(e),
            format!(
                "Evacuating c-fra-pci (step {}): {placed} service{} placed elsewhere, {stuck} cannot leave.",
                j["step"],
                if placed == 1 { "" } else { "s" }
            )
        );
        let c = v["clusters"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["id"] == "c-fra-pci")
            .unwrap();
        let part = |r: &str, unit: &str| {
            c[r]["load_after"]
                .as_f64()
                .map_or_else(|| format!("unknown {unit}"), |x| format!("{x:.1} {unit}"))
        };
        assert_eq!(
            load_left(&p.clusters, "c-fra-pci"),
            Some(format!(
                "{} and {}",
                part("cpu", "cores"),
                part("memory", "GiB")
            ))
        );
        assert_eq!(load_left(&p.clusters, "nowhere"), None);
        let codes: Vec<&str> = p.warnings.iter().map(|w| w.code.as_str()).collect();
        let json_codes: Vec<&str> = v["warnings"]
            .as_array()
            .unwrap()
            .iter()
            .map(|w| w["code"].as_str().unwrap())
            .collect();
        assert_eq!(codes, json_codes);
        assert!(codes.contains(&"cannot_leave"));
        for (x, j) in p
            .sensitivity
            .iter()
            .zip(v["sensitivity"].as_array().unwrap())
        {
            assert_eq!(fixed(x.tolerance_pct, 1), num(&j["tolerance_pct"], 1));
            assert_eq!(x.class.as_str(), j["class"].as_str().unwrap());
            assert_eq!(x.resource, j["resource"].as_str().unwrap());
        }
        for c in &p.clusters {
            let j = v["clusters"]
                .as_array()
                .unwrap()
                .iter()
                .find(|j| j["id"] == c.id.as_str())
                .unwrap();
            for (r, key) in [(Resource::Cpu, "cpu"), (Resource::Memory, "memory")] {
                assert_eq!(
                    r.of(c).utilisation_after,
                    j[key]["utilisation_after"].as_f64()
                );
            }
        }
        for t in berth_engine::cost::Term::ALL
            .into_iter()
            .filter(|t| t.in_totals())
        {
            assert_eq!(p.after.get(t), v["after"][t.id()].as_f64());
        }
    }
}
