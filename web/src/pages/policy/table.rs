//! The Policy page's tables: one per group, a row per field with its
//! value (an input for operators), unit, default, range and meaning.
//! Durations are shown in human units beside their seconds. On a phone
//! each row stacks its cells, each named by its column (style/berth.css).

use std::collections::BTreeMap;

use berth_engine::policy::Group;
use leptos::prelude::*;
use serde_json::Value;

use super::{duration, groups, shown, PolicyState};
use crate::policy_fields::{self, PolicyField, FIELDS};

/// A value as the page shows it: seconds with their human reading.
fn value_words(f: &PolicyField, x: f64) -> String {
    if duration::is_duration(f.unit) {
        format!("{} ({} s)", duration::words(x), shown(x))
    } else {
        shown(x)
    }
}

/// A field's range in words.
fn range_words(f: &PolicyField) -> String {
    if duration::is_duration(f.unit) {
        let end = |x: f64| {
            if x >= 1000.0 * 86_400.0 {
                duration::about(x)
            } else {
                duration::words(x)
            }
        };
        format!("{} to {}", end(f.min), end(f.max))
    } else {
        format!("{} to {}", shown(f.min), shown(f.max))
    }
}

/// The input of one field (operators), its human reading for durations
/// and its problem line.
fn editor(st: PolicyState, f: &'static PolicyField, id: String, saved_text: String) -> AnyView {
    let path = f.path;
    let err_id = format!("{id}-e");
    let is_duration = duration::is_duration(f.unit);
    let typed = move || {
        st.edits
            .with(|e| e.get(path).cloned())
            .unwrap_or_else(|| saved_text.clone())
    };
    let typed2 = typed.clone();
    let reading = move || {
        is_duration
            .then(&typed2)
            .and_then(|t| duration::parse(&t))
            .map(|s| format!("= {}", duration::words(s)))
    };
    view! {
        <input id=id.clone() name=path inputmode=if is_duration { "text" } else { "decimal" }
            prop:value=typed.clone()
            aria-invalid=move || st.problem_of(path).is_some().to_string()
            aria-describedby=format!("{id}-m {id}-h {err_id}")
            on:input=move |ev| {
                let text = event_target_value(&ev);
                st.refused.update(|r| { r.remove(path); });
                // The line above speaks of the last save; an edit starts anew.
                st.error.set(None);
                st.edits.update(|e| { e.insert(path.to_string(), text); });
            }/>
        <span id=format!("{id}-h") class="duration" data-testid=format!("human-{path}")>{reading}</span>
        <span id=err_id class="field-error" role="alert" data-testid=format!("error-{path}")>{move || st.problem_of(path)}</span>
    }
    .into_any()
}

/// One field's row.
fn row(st: PolicyState, p: &Value, f: &'static PolicyField, editing: bool) -> impl IntoView {
    let path = f.path;
    let saved = policy_fields::get(p, path).and_then(Value::as_f64);
    let saved_text = saved.map(shown).unwrap_or_default();
    let id = format!("pf-{}", path.replace('.', "-"));
    let value = if editing {
        editor(st, f, id.clone(), saved_text.clone())
    } else {
        let words = saved.map(|x| value_words(f, x)).unwrap_or_default();
        view! { <span id=id.clone()>{words}</span> }.into_any()
    };
    let default = f.default;
    let reset = editing.then(|| view! {
        <button type="button" class="small" aria-label=format!("Reset {path} to its default, {}", shown(default))
            disabled=move || {
                let now = st.edits.with(|e| e.get(path).cloned()).and_then(|t| super::parse_value(f, &t)).or(saved);
                now == Some(default)
            }
            on:click=move |_| { st.error.set(None); st.edits.update(|e| { e.insert(path.to_string(), shown(default)); }); }>"Reset"</button>
    });
    let changed = move || {
        st.edits.with(|e| {
            e.get(path)
                .is_some_and(|t| Some(t.trim()) != Some(saved_text.as_str()))
        })
    };
    view! {
        <tr class:changed=changed>
            <th scope="row"><label for=id.clone()>{breakable(path)}</label></th>
            <td class="value" data-label="value">{value}</td>
            <td data-label="unit">{f.unit}</td>
            <td class="n" data-label="default">{value_words(f, f.default)}</td>
            <td class="n" data-label="range">{range_words(f)}</td>
            <td id=format!("{id}-m") data-label="meaning">{f.meaning}</td>
            <td class="reset">{reset}</td>
        </tr>
    }
}

/// One group's section and table.
fn group_table(st: PolicyState, p: &Value, g: Group, editing: bool) -> impl IntoView {
    let rows = FIELDS
        .iter()
        .filter(|f| f.group == g)
        .map(|f| row(st, p, f, editing))
        .collect_view();
    let gname = g.as_str();
    let hid = format!("g-{}", gname.replace(' ', "-"));
    view! {
        <section class="policy-group" data-group=gname aria-labelledby=hid.clone()>
            <h2 id=hid.clone()>{gname[..1].to_uppercase() + &gname[1..]}</h2>
            <div class="table-wrap">
                <table class="policy">
                    <thead><tr><th scope="col">"field"</th><th scope="col">"value"</th><th scope="col">"unit"</th>
                        <th scope="col">"default"</th><th scope="col">"range"</th><th scope="col">"meaning"</th><th scope="col"><span class="visually-hidden">"reset"</span></th></tr></thead>
                    <tbody>{rows}</tbody>
                </table>
            </div>
        </section>
    }
}

/// Every group's table, for the policy as saved.
#[component]
pub fn Tables(st: PolicyState, editing: Signal<bool>) -> impl IntoView {
    move || {
        st.policy.get().map(|p| {
            let editing = editing.get();
            groups()
                .into_iter()
                .map(|g| group_table(st, &p, g, editing))
                .collect_view()
        })
    }
}

/// The edits that put every field back to its default.
pub fn all_defaults(p: &Value) -> BTreeMap<String, String> {
    let mut e = BTreeMap::new();
    for f in FIELDS {
        let current = policy_fields::get(p, f.path).and_then(Value::as_f64);
        if current != Some(f.default) {
            e.insert(f.path.to_string(), shown(f.default));
        }
    }
    e
}

/// A field's path with a line-break opportunity after each `_` and `.`, so
/// a narrow column wraps `round_trip_weight` between its words, never
/// inside one (the text, and what a screen reader reads, is unchanged).
fn breakable(path: &'static str) -> impl IntoView {
    path.split_inclusive(['_', '.'])
        .map(|part| view! { {part}<wbr/> })
        .collect_view()
}
