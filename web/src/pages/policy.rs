//! Policy: every weight and bar with its unit and meaning; operators edit
//! and save it (the server checks the role too), and the new digest is
//! shown. Every result computed after the save uses it.

use leptos::prelude::*;
use serde_json::Value;

use crate::client;
use crate::common::{Auth, ErrorLine, Gate};
use crate::policy_fields::{self, FIELDS};

#[component]
pub fn PolicyPage() -> impl IntoView {
    let auth = expect_context::<Auth>();
    let policy = RwSignal::new(None::<Value>);
    let digest = RwSignal::new(String::new());
    let edits = RwSignal::new(Vec::<(String, String)>::new());
    let error = RwSignal::new(None::<String>);
    let note = RwSignal::new(None::<String>);
    let busy = RwSignal::new(false);
    let reason = RwSignal::new(String::new());

    Effect::new(move |_| {
        let Some(id) = auth.estate.get() else { return };
        leptos::task::spawn_local(async move {
            match client::get(&format!("/api/estates/{id}/policy")).await {
                Ok(v) => {
                    digest.set(v["policy_digest"].as_str().unwrap_or_default().to_string());
                    policy.set(Some(v["policy"].clone()));
                }
                Err(f) => error.set(Some(f.message)),
            }
        });
    });
    let may_operate = move || matches!(auth.session.get(), Some(Some(s)) if s.may_operate());
    let save = move |_| {
        let (Some(id), Some(mut p)) = (auth.estate.get_untracked(), policy.get_untracked()) else {
            return;
        };
        for (path, text) in edits.get_untracked() {
            let v: Value = match serde_json::from_str(text.trim()) {
                Ok(v @ Value::Number(_)) => v,
                _ => {
                    error.set(Some(format!(
                        "{path}: {text:?} is not a number; enter a number like 0.5"
                    )));
                    return;
                }
            };
            policy_fields::set(&mut p, &path, v);
        }
        error.set(None);
        busy.set(true);
        leptos::task::spawn_local(async move {
            let why = reason.get_untracked();
            let query = if why.trim().is_empty() {
                String::new()
            } else {
                format!("?reason={}", crate::common::encode(why.trim()))
            };
            match client::request(
                "PUT",
                &format!("/api/estates/{id}/policy{query}"),
                Some(p.to_string()),
            )
            .await
            {
                Ok(v) => {
                    let d = v["policy_digest"].as_str().unwrap_or_default().to_string();
                    note.set(Some(format!(
                        "Saved. The new policy digest is {d}; every result from now on uses it."
                    )));
                    digest.set(d);
                    policy.set(Some(v["policy"].clone()));
                    edits.set(Vec::new());
                    reason.set(String::new());
                    // The browser's copy of the estate carries the policy.
                    client::forget_snapshot();
                }
                Err(f) => error.set(Some(f.message)),
            }
            busy.set(false);
        });
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
                let rows = FIELDS.iter().map(|f| {
                    let (path, unit, meaning) = (f.path, f.unit, f.meaning);
                    let current = policy_fields::get(&p, path).map(|v| v.to_string()).unwrap_or_default();
                    let id = format!("pf-{}", path.replace('.', "-"));
                    let editor = if may_operate() {
                        let path_s = path.to_string();
                        view! {
                            <input id=id.clone() name=path inputmode="decimal" value=current.clone()
                                aria-describedby=format!("{id}-m")
                                on:input=move |ev| {
                                    let text = event_target_value(&ev);
                                    let path_s = path_s.clone();
                                    edits.update(|e| { e.retain(|(p, _)| *p != path_s); e.push((path_s, text)); });
                                }/>
                        }.into_any()
                    } else {
                        view! { <span id=id.clone()>{current.clone()}</span> }.into_any()
                    };
                    view! {
                        <tr>
                            <th scope="row"><label for=id.clone()>{path}</label></th>
                            <td>{editor}</td>
                            <td>{unit}</td>
                            <td id=format!("{id}-m")>{meaning}</td>
                        </tr>
                    }
                }).collect_view();
                view! {
                    <table class="policy">
                        <thead><tr><th scope="col">"field"</th><th scope="col">"value"</th><th scope="col">"unit"</th><th scope="col">"meaning"</th></tr></thead>
                        <tbody>{rows}</tbody>
                    </table>
                }
            })}
            <Show when=may_operate>
                <p class="field">
                    <label for="policy-reason">"Why the change (kept in the audit trail)"</label>
                    <input id="policy-reason" data-testid="policy-reason" bind:value=reason/>
                </p>
                <button type="button" on:click=save disabled=move || busy.get()>{move || if busy.get() { "Saving…" } else { "Save policy" }}</button>
            </Show>
            {move || note.get().map(|n| view! { <p role="status" data-testid="policy-saved">{n}</p> })}
        </Gate>
    }
}
