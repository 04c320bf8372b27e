//! Policy: every weight and bar with its unit, meaning, default and range,
//! grouped as the engine groups them. Operators edit it; every edit is
//! checked at its field by the engine's own rules and its effect on the
//! advice is projected in the browser, at the top of the page, before
//! anything is saved. The server checks the role and the values again;
//! its refusals land at the fields too. After a save the new digest is
//! shown, and every result computed after it uses the new policy.

mod duration;
mod preview;
mod table;

use std::collections::BTreeMap;

use berth_engine::policy::{Group, Kind};
use berth_engine::Policy;
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

/// The number a field's typed text means: seconds or a duration in words
/// for a duration ("900", "15 min"), a plain number otherwise.
fn parse_value(f: &PolicyField, text: &str) -> Option<f64> {
    if duration::is_duration(f.unit) {
        duration::parse(text)
    } else {
        text.trim().parse::<f64>().ok().filter(|x| x.is_finite())
    }
}

/// The edited policy, the problems with it by field path, and the policy
/// the engine reads from it when there are none.
type Draft = Option<(Value, BTreeMap<String, String>, Option<Policy>)>;

/// The page's state, shared by its parts.
#[derive(Clone, Copy)]
pub struct PolicyState {
    policy: RwSignal<Option<Value>>,
    /// The text typed into each edited field, by path.
    edits: RwSignal<BTreeMap<String, String>>,
    /// The server's refusals of the last save, by path.
    refused: RwSignal<BTreeMap<String, String>>,
    error: RwSignal<Option<String>>,
    engine_ready: RwSignal<bool>,
    draft: Memo<Draft>,
}

impl PolicyState {
    /// The problem shown at a field: the page's own check, else the
    /// server's refusal.
    fn problem_of(self, path: &str) -> Option<String> {
        self.draft
            .with(|d| d.as_ref().and_then(|d| d.1.get(path).cloned()))
            .or_else(|| self.refused.with(|r| r.get(path).cloned()))
    }
}

/// The edited policy and every problem with it, by field: the engine's
/// own checks (ranges, and the rules between fields), so the page refuses
/// exactly what the server would.
fn draft_of(policy: Option<Value>, edits: BTreeMap<String, String>) -> Draft {
    let mut p = policy?;
    let mut problems = BTreeMap::<String, String>::new();
    for (path, text) in edits {
        let Some(f) = FIELDS.iter().find(|f| f.path == path) else {
            continue;
        };
        match parse_value(f, &text) {
            Some(x) => policy_fields::set(&mut p, &path, json_number(f, x)),
            None if duration::is_duration(f.unit) => {
                problems.insert(
                    path.clone(),
                    format!(
                        "{text:?} is not a duration; enter seconds ({}) or a time like 15 min, 1 day",
                        shown(f.default)
                    ),
                );
            }
            None => {
                problems.insert(
                    path.clone(),
                    format!(
                        "{text:?} is not a number; enter one like {}",
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
}

/// Rules between fields (e.g. the margins' order) name a group, not a
/// field: said in one list.
#[component]
fn GeneralProblems(st: PolicyState) -> impl IntoView {
    move || {
        let general: Vec<String> = st.draft.with(|d| {
            d.as_ref()
                .map(|d| {
                    d.1.iter()
                        .filter(|(k, _)| !FIELDS.iter().any(|f| f.path == k.as_str()))
                        .map(|(k, m)| format!("{k}: {m}"))
                        .collect()
                })
                .unwrap_or_default()
        });
        (!general.is_empty()).then(|| view! {
            <ul class="error" role="alert" data-testid="policy-problems">{general.into_iter().map(|g| view! { <li>{g}</li> }).collect_view()}</ul>
        })
    }
}

/// Save (after the page's own check), undo, reset all.
#[component]
fn Actions(
    st: PolicyState,
    on_save: Callback<()>,
    busy: RwSignal<bool>,
    reason: RwSignal<String>,
) -> impl IntoView {
    let reset_all = move |_| {
        let Some(p) = st.policy.get_untracked() else {
            return;
        };
        st.refused.set(BTreeMap::new());
        st.edits.set(table::all_defaults(&p));
    };
    view! {
        <p class="field">
            <label for="policy-reason">"Why the change (kept in the audit trail)"</label>
            <input id="policy-reason" data-testid="policy-reason" bind:value=reason/>
        </p>
        <button type="button" on:click=move |_| on_save.run(()) disabled=move || busy.get()>{move || if busy.get() { "Saving…" } else { "Save policy" }}</button>
        " "
        <button type="button" class="small" on:click=move |_| { st.refused.set(BTreeMap::new()); st.edits.set(BTreeMap::new()); }
            disabled=move || st.edits.with(BTreeMap::is_empty)>"Undo my changes"</button>
        " "
        <button type="button" class="small" on:click=reset_all>"Reset all to defaults"</button>
    }
}

/// Refuses a save while a field is wrong: says how many, focuses the
/// first. True when there is nothing to fix.
fn ready_to_save(st: PolicyState, problems: &BTreeMap<String, String>) -> bool {
    if problems.is_empty() {
        return true;
    }
    st.error.set(Some(format!(
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
    false
}

/// Field errors of a refused save go to their fields ("/min_gain_points"
/// or "min_gain_points"); the rest is the line above.
fn place_refusal(st: PolicyState, f: client::Failure) {
    let mut at = BTreeMap::new();
    for e in &f.errors {
        let path = e.path.trim_start_matches('/').replace('/', ".");
        if FIELDS.iter().any(|x| x.path == path) {
            at.insert(path, e.message.clone());
        }
    }
    st.error
        .set(Some(if at.is_empty() { f.message } else { f.summary }));
    st.refused.set(at);
}

#[component]
pub fn PolicyPage() -> impl IntoView {
    let auth = expect_context::<Auth>();
    let policy = RwSignal::new(None::<Value>);
    let edits = RwSignal::new(BTreeMap::<String, String>::new());
    let st = PolicyState {
        policy,
        edits,
        refused: RwSignal::new(BTreeMap::new()),
        error: RwSignal::new(None),
        engine_ready: RwSignal::new(false),
        draft: Memo::new(move |_| draft_of(policy.get(), edits.get())),
    };
    let digest = RwSignal::new(String::new());
    let note = RwSignal::new(None::<String>);
    let busy = RwSignal::new(false);
    let reason = RwSignal::new(String::new());

    Effect::new(move |_| {
        let Some(id) = auth.estate.get() else { return };
        let id2 = id.clone();
        leptos::task::spawn_local(async move {
            match client::get(&berth_api::endpoint::get_policy(&id)).await {
                Ok(v) => {
                    digest.set(v["policy_digest"].as_str().unwrap_or_default().to_string());
                    policy.set(Some(v["policy"].clone()));
                }
                Err(f) => st.error.set(Some(f.message)),
            }
        });
        // The engine in the browser, for the preview.
        leptos::task::spawn_local(async move {
            if client::loaded(&id2).await.is_ok() {
                st.engine_ready.set(true);
            }
        });
    });
    let may_operate = move || matches!(auth.session.get(), Some(Some(s)) if s.may_operate());
    let projected = preview::projection(st);

    let save = Callback::new(move |()| {
        let Some(id) = auth.estate.get_untracked() else {
            return;
        };
        let Some((p, problems, _)) = st.draft.get_untracked() else {
            return;
        };
        if !ready_to_save(st, &problems) {
            return;
        }
        st.error.set(None);
        st.refused.set(BTreeMap::new());
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
                    st.engine_ready.set(false);
                    if client::loaded(&id).await.is_ok() {
                        st.engine_ready.set(true);
                    }
                }
                Err(f) => {
                    note.set(None);
                    place_refusal(st, f);
                }
            }
            busy.set(false);
        });
    });

    view! {
        <h1>"Policy"</h1>
        <Gate>
            <ErrorLine message=st.error.into()/>
            <p>"Policy digest: "<code data-testid="policy-digest">{move || digest.get()}</code></p>
            <Show when=move || !may_operate()>
                <p class="hint" data-testid="viewer-note">"You can read the policy; changing it needs an operator or administrator."</p>
            </Show>
            // The effect first: what the edits would do, and the save,
            // above the fields.
            <Show when=may_operate>
                <preview::Preview st projected/>
                <GeneralProblems st/>
                <Actions st on_save=save busy reason/>
            </Show>
            {move || note.get().map(|n| view! { <p role="status" data-testid="policy-saved">{n}</p> })}
            <table::Tables st editing=Signal::derive(may_operate)/>
        </Gate>
    }
}
