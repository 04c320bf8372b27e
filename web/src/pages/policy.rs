//! Policy: every weight and bar with its unit, meaning, default and range,
//! grouped as the engine groups them. Operators edit it; every edit is
//! checked at its field by the engine's own rules and its effect on the
//! advice is projected in the browser before anything is saved. The
//! server checks the role and the values again; its refusals land at the
//! fields too. After a save the new digest is shown, and every result
//! computed after it uses the new policy.

use std::collections::BTreeMap;

use berth_engine::policy::{Group, Kind};
use berth_engine::{advise, Policy};
use leptos::prelude::*;
use serde_json::Value;

use crate::client;
use crate::common::{Auth, ErrorLine, Gate};
use crate::policy_fields::{self, PolicyField, FIELDS};

/// The groups in the order of [`FIELDS`].
fn groups() -> Vec<Group> {
    let mut g: Vec<Group> = Vec::new();
    for f in FIELDS {
        if !g.contains(&f.group) {
            g.push(f.group);
        }
    }
    g
}

/// A field's number as the policy's JSON writes it.
fn json_number(f: &PolicyField, x: f64) -> Value {
    match f.kind {
        Kind::Integer if x.fract() == 0.0 && x.abs() < 9.0e15 => Value::from(x as i64),
        _ => serde_json::Number::from_f64(x).map_or(Value::Null, Value::Number),
    }
}

/// A number as people write it (no trailing `.0` on whole numbers).
fn shown(x: f64) -> String {
    if x.fract() == 0.0 && x.abs() < 1e15 {
        format!("{}", x as i64)
    } else {
        format!("{x}")
    }
}

/// What the edits change in the advice, projected in the browser.
#[derive(Clone, Debug, PartialEq)]
struct Projected {
    moves_before: usize,
    moves_after: usize,
    added: Vec<String>,
    removed: Vec<String>,
    cost_before: f64,
    cost_after: f64,
    ms: f64,
    /// When it was computed (page clock, ms): tells one projection from
    /// the next when both say the same (the bench waits on it).
    at: f64,
}

fn recommended(a: &berth_engine::advise::Advice) -> Vec<String> {
    a.moves
        .iter()
        .filter(|m| m.evidence.is_none())
        .map(|m| format!("{} → {}", m.service, m.to))
        .collect()
}

#[component]
pub fn PolicyPage() -> impl IntoView {
    let auth = expect_context::<Auth>();
    let policy = RwSignal::new(None::<Value>);
    let digest = RwSignal::new(String::new());
    // The text typed into each edited field, by path.
    let edits = RwSignal::new(BTreeMap::<String, String>::new());
    // The server's refusals of the last save, by path.
    let refused = RwSignal::new(BTreeMap::<String, String>::new());
    let error = RwSignal::new(None::<String>);
    let note = RwSignal::new(None::<String>);
    let busy = RwSignal::new(false);
    let reason = RwSignal::new(String::new());
    let engine_ready = RwSignal::new(false);

    Effect::new(move |_| {
        let Some(id) = auth.estate.get() else { return };
        let id2 = id.clone();
        leptos::task::spawn_local(async move {
            match client::get(&berth_api::endpoint::get_policy(&id)).await {
                Ok(v) => {
                    digest.set(v["policy_digest"].as_str().unwrap_or_default().to_string());
                    policy.set(Some(v["policy"].clone()));
                }
                Err(f) => error.set(Some(f.message)),
            }
        });
        // The engine in the browser, for the preview.
        leptos::task::spawn_local(async move {
            if client::loaded(&id2).await.is_ok() {
                engine_ready.set(true);
            }
        });
    });
    let may_operate = move || matches!(auth.session.get(), Some(Some(s)) if s.may_operate());

    // The edited policy and every problem with it, by field: the engine's
    // own checks (ranges, and the rules between fields), so the page
    // refuses exactly what the server would.
    let draft = Memo::new(move |_| {
        let mut p = policy.get()?;
        let mut problems = BTreeMap::<String, String>::new();
        for (path, text) in edits.get() {
            let Some(f) = FIELDS.iter().find(|f| f.path == path) else {
                continue;
            };
            match text.trim().parse::<f64>() {
                Ok(x) if x.is_finite() => policy_fields::set(&mut p, &path, json_number(f, x)),
                _ => {
                    problems.insert(
                        path.clone(),
                        format!(
                            "{:?} is not a number; enter one like {}",
                            text,
                            shown(f.default)
                        ),
                    );
                }
            }
        }
        let parsed = if problems.is_empty() {
            match Policy::from_json(&p.to_string()) {
                Ok(pol) => Some(pol),
                Err(errs) => {
                    for e in errs {
                        problems.entry(e.field.clone()).or_insert(e.message);
                    }
                    None
                }
            }
        } else {
            None
        };
        Some((p, problems, parsed))
    });
    let problem_of = move |path: &'static str| {
        draft
            .with(|d| d.as_ref().and_then(|d| d.1.get(path).cloned()))
            .or_else(|| refused.with(|r| r.get(path).cloned()))
    };

    // The advice under the saved policy: computed once when the estate is
    // in the engine (again after a save reloads it), not at every edit.
    let saved_advice = Memo::new(move |_| {
        if !engine_ready.get() {
            return None;
        }
        let l = client::loaded_now()?;
        let before = advise(&l.estate, &l.policy, client::eval_now());
        Some((recommended(&before), before.totals_after.cost))
    });
    // The advice under the edited policy beside it, both computed in the
    // browser at the page's evaluation time.
    let preview = Memo::new(move |_| {
        if !engine_ready.get() || edits.with(BTreeMap::is_empty) {
            return None;
        }
        let new_policy = draft.with(|d| d.as_ref().and_then(|d| d.2.clone()))?;
        let l = client::loaded_now()?;
        let now = client::eval_now();
        let t0 = client::perf_ms();
        let (b, cost_before) = saved_advice.get()?;
        let after = advise(&l.estate, &new_policy, now);
        let a = recommended(&after);
        Some(Projected {
            moves_before: b.len(),
            moves_after: a.len(),
            added: a.iter().filter(|m| !b.contains(m)).cloned().collect(),
            removed: b.iter().filter(|m| !a.contains(m)).cloned().collect(),
            cost_before,
            cost_after: after.totals_after.cost,
            ms: client::perf_ms() - t0,
            at: client::perf_ms(),
        })
    });

    let save = move |_| {
        let Some(id) = auth.estate.get_untracked() else {
            return;
        };
        let Some((p, problems, _)) = draft.get_untracked() else {
            return;
        };
        if !problems.is_empty() {
            error.set(Some(format!(
                "{} problem{} to fix before saving (marked below).",
                problems.len(),
                if problems.len() == 1 { "" } else { "s" }
            )));
            if let Some(first) = problems
                .keys()
                .find(|k| FIELDS.iter().any(|f| f.path == k.as_str()))
            {
                client::focus_by_id(&format!("pf-{}", first.replace('.', "-")));
            }
            return;
        }
        error.set(None);
        refused.set(BTreeMap::new());
        busy.set(true);
        leptos::task::spawn_local(async move {
            let why = reason.get_untracked();
            let why = why.trim();
            let path = berth_api::endpoint::put_policy(&id)
                .query_opt("reason", (!why.is_empty()).then_some(why));
            match client::request("PUT", &path, Some(p.to_string())).await {
                Ok(v) => {
                    let d = v["policy_digest"].as_str().unwrap_or_default().to_string();
                    note.set(Some(format!(
                        "Saved. The new policy digest is {d}; every result from now on uses it."
                    )));
                    digest.set(d);
                    policy.set(Some(v["policy"].clone()));
                    edits.set(BTreeMap::new());
                    reason.set(String::new());
                    // The browser's copy of the estate carries the policy.
                    client::forget_snapshot();
                    engine_ready.set(false);
                    if client::loaded(&id).await.is_ok() {
                        engine_ready.set(true);
                    }
                }
                Err(f) => {
                    // Field errors go to their fields ("/min_gain_points"
                    // or "min_gain_points"), the rest to the line above.
                    let mut at = BTreeMap::new();
                    for e in &f.errors {
                        let path = e.path.trim_start_matches('/').replace('/', ".");
                        if FIELDS.iter().any(|x| x.path == path) {
                            at.insert(path, e.message.clone());
                        }
                    }
                    note.set(None);
                    error.set(Some(if at.is_empty() { f.message } else { f.summary }));
                    refused.set(at);
                }
            }
            busy.set(false);
        });
    };
    let reset_all = move |_| {
        let Some(p) = policy.get_untracked() else {
            return;
        };
        let mut e = BTreeMap::new();
        for f in FIELDS {
            let current = policy_fields::get(&p, f.path).and_then(Value::as_f64);
            if current != Some(f.default) {
                e.insert(f.path.to_string(), shown(f.default));
            }
        }
        refused.set(BTreeMap::new());
        edits.set(e);
    };

    view! {
        <h1>"Policy"</h1>
        <Gate>
            <ErrorLine message=error.into()/>
            <p>"Policy digest: "<code data-testid="policy-digest">{move || digest.get()}</code></p>
            <Show when=move || !may_operate()>
                <p class="hint" data-testid="viewer-note">"You can read the policy; changing it needs an operator or administrator."</p>
            </Show>
            {move || policy.get().map(|p| {
                let editing = may_operate();
                groups().into_iter().map(|g| {
                    let rows = FIELDS.iter().filter(|f| f.group == g).map(|f| {
                        let path = f.path;
                        let saved = policy_fields::get(&p, path).and_then(Value::as_f64);
                        let saved_text = saved.map(shown).unwrap_or_default();
                        let id = format!("pf-{}", path.replace('.', "-"));
                        let err_id = format!("{id}-e");
                        let range = format!("{} to {}", shown(f.min), shown(f.max));
                        let editor = if editing {
                            let saved_text2 = saved_text.clone();
                            view! {
                                <input id=id.clone() name=path inputmode="decimal"
                                    prop:value=move || edits.with(|e| e.get(path).cloned()).unwrap_or_else(|| saved_text2.clone())
                                    aria-invalid=move || problem_of(path).is_some().to_string()
                                    aria-describedby=format!("{id}-m {err_id}")
                                    on:input=move |ev| {
                                        let text = event_target_value(&ev);
                                        refused.update(|r| { r.remove(path); });
                                        // The line above speaks of the last save; an edit starts anew.
                                        error.set(None);
                                        edits.update(|e| { e.insert(path.to_string(), text); });
                                    }/>
                                <span id=err_id.clone() class="field-error" role="alert" data-testid=format!("error-{path}")>{move || problem_of(path)}</span>
                            }.into_any()
                        } else {
                            view! { <span id=id.clone()>{saved_text.clone()}</span> }.into_any()
                        };
                        let default = f.default;
                        let reset = editing.then(|| view! {
                            <button type="button" class="small" aria-label=format!("Reset {path} to its default, {}", shown(default))
                                disabled=move || {
                                    let now = edits.with(|e| e.get(path).cloned()).and_then(|t| t.trim().parse::<f64>().ok()).or(saved);
                                    now == Some(default)
                                }
                                on:click=move |_| { error.set(None); edits.update(|e| { e.insert(path.to_string(), shown(default)); }); }>"Reset"</button>
                        });
                        let changed = move || edits.with(|e| e.get(path).is_some_and(|t| Some(t.trim()) != Some(saved_text.as_str())));
                        view! {
                            <tr class:changed=changed>
                                <th scope="row"><label for=id.clone()>{path}</label></th>
                                <td>{editor}</td>
                                <td>{f.unit}</td>
                                <td class="n">{shown(f.default)}</td>
                                <td class="n">{range}</td>
                                <td id=format!("{id}-m")>{f.meaning}</td>
                                <td>{reset}</td>
                            </tr>
                        }
                    }).collect_view();
                    let gname = g.as_str();
                    view! {
                        <section class="policy-group" data-group=gname aria-labelledby=format!("g-{}", gname.replace(' ', "-"))>
                            <h2 id=format!("g-{}", gname.replace(' ', "-"))>{gname[..1].to_uppercase() + &gname[1..]}</h2>
                            <div class="table-wrap">
                                <table class="policy">
                                    <thead><tr><th scope="col">"field"</th><th scope="col">"value"</th><th scope="col">"unit"</th>
                                        <th scope="col">"default"</th><th scope="col">"range"</th><th scope="col">"meaning"</th><th scope="col"><span class="visually-hidden">"reset"</span></th></tr></thead>
                                    <tbody>{rows}</tbody>
                                </table>
                            </div>
                        </section>
                    }
                }).collect_view()
            })}
            <Show when=may_operate>
                // Rules between fields (e.g. the margins' order) name a
                // group, not a field: said here, above the preview.
                {move || {
                    let general: Vec<String> = draft.with(|d| d.as_ref().map(|d| d.1.iter()
                        .filter(|(k, _)| !FIELDS.iter().any(|f| f.path == k.as_str()))
                        .map(|(k, m)| format!("{k}: {m}"))
                        .collect()).unwrap_or_default());
                    (!general.is_empty()).then(|| view! {
                        <ul class="error" role="alert" data-testid="policy-problems">{general.into_iter().map(|g| view! { <li>{g}</li> }).collect_view()}</ul>
                    })
                }}
                <section class="panel" aria-labelledby="preview-h" data-testid="policy-preview">
                    <h2 id="preview-h">"Effect before saving"</h2>
                    {move || match (edits.with(BTreeMap::is_empty), draft.with(|d| d.as_ref().map(|d| d.1.len()).unwrap_or(0)), preview.get()) {
                        (true, _, _) => view! { <p class="hint">"Change a value to see what it would do to the advice, computed in your browser; nothing is saved until you save."</p> }.into_any(),
                        (false, n, _) if n > 0 => view! { <p class="hint">{format!("Fix the {n} marked field{} to see the effect.", if n == 1 { "" } else { "s" })}</p> }.into_any(),
                        (false, _, None) => view! { <p class="loading" role="status">"Loading the estate into the engine…"</p> }.into_any(),
                        (false, _, Some(p)) => {
                            let list = |title: &'static str, items: Vec<String>, testid: &'static str| (!items.is_empty()).then(|| view! {
                                <p>{title}</p><ul data-testid=testid>{items.into_iter().map(|m| view! { <li>{m}</li> }).collect_view()}</ul>
                            });
                            view! {
                                <p data-testid="preview-summary" data-after=p.moves_after data-before=p.moves_before data-at=format!("{:.3}", p.at)>{format!(
                                    "With these values: {} recommended move{} (now {}); the estate's cost after them {:.1} points (now {:.1}: ",
                                    p.moves_after, if p.moves_after == 1 { "" } else { "s" }, p.moves_before, p.cost_after, p.cost_before
                                )}{super::saving_span(p.cost_before, p.cost_after)}{format!("). Projected in {:.0} ms.", p.ms)}</p>
                                {list("Would be recommended, and is not now:", p.added, "preview-added")}
                                {list("Would no longer be recommended:", p.removed, "preview-removed")}
                            }.into_any()
                        }
                    }}
                </section>
                <p class="field">
                    <label for="policy-reason">"Why the change (kept in the audit trail)"</label>
                    <input id="policy-reason" data-testid="policy-reason" bind:value=reason/>
                </p>
                <button type="button" on:click=save disabled=move || busy.get()>{move || if busy.get() { "Saving…" } else { "Save policy" }}</button>
                " "
                <button type="button" class="small" on:click=move |_| { refused.set(BTreeMap::new()); edits.set(BTreeMap::new()); }
                    disabled=move || edits.with(BTreeMap::is_empty)>"Undo my changes"</button>
                " "
                <button type="button" class="small" on:click=reset_all>"Reset all to defaults"</button>
            </Show>
            {move || note.get().map(|n| view! { <p role="status" data-testid="policy-saved">{n}</p> })}
        </Gate>
    }
}
