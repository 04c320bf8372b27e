//! Review memory on the pages (`docs/reviews.md`): each recommendation's
//! decision (planned, dismissed, snoozed) and where it stands, the form
//! that records one, and the estate's audit trail.
//!
//! The advice is the engine's, unchanged; the server says which
//! recommendations a decision hides at the page's evaluation time
//! (`GET …/reviews?now=`), and the Placement page leaves those out until
//! asked to show them.

use std::collections::BTreeMap;

use leptos::prelude::*;
use serde_json::{json, Value};

use super::{arr, num, s};
use crate::client;
use crate::common::{encode, Auth};

/// The decisions of the estate on show, by identity, with their standing
/// at the page's evaluation time.
#[derive(Clone, Copy)]
pub struct Reviews {
    pub by_identity: RwSignal<BTreeMap<String, Value>>,
    /// Show the dismissed and snoozed recommendations too.
    pub show_hidden: RwSignal<bool>,
    /// The evaluation time the page shows, RFC 3339.
    pub now: RwSignal<String>,
    pub error: RwSignal<Option<String>>,
}

impl Reviews {
    pub fn new() -> Reviews {
        Reviews {
            by_identity: RwSignal::new(BTreeMap::new()),
            show_hidden: RwSignal::new(false),
            now: RwSignal::new(String::new()),
            error: RwSignal::new(None),
        }
    }

    /// Fetch the decisions and their standing at `now`.
    pub fn load(self, estate: String) {
        let now = self.now.get_untracked();
        leptos::task::spawn_local(async move {
            let url = format!("/api/estates/{estate}/reviews?now={}", encode(&now));
            match client::get(&url).await {
                Ok(v) => {
                    let map = arr(&v["reviews"])
                        .into_iter()
                        .map(|r| (s(&r["identity"]), r))
                        .collect();
                    self.by_identity.set(map);
                    self.error.set(None);
                }
                Err(f) => self.error.set(Some(format!(
                    "Could not read the decisions about these recommendations: {}",
                    f.message
                ))),
            }
        });
    }

    /// `planned`, `hidden`, `back`, `absent`, or `None` when undecided.
    pub fn state(&self, identity: &str) -> Option<String> {
        self.by_identity
            .with(|m| m.get(identity).map(|r| s(&r["standing"]["state"])))
    }

    pub fn hidden_count(&self, identities: &[String]) -> usize {
        identities
            .iter()
            .filter(|i| self.state(i).as_deref() == Some("hidden"))
            .count()
    }
}

impl Default for Reviews {
    fn default() -> Self {
        Reviews::new()
    }
}

/// A recommendation's identity, as the engine writes it
/// (`berth_engine::review::identity`): `service|from|to`, or for a compound
/// step every member's triple sorted and joined with `+`.
pub fn identity(moves: &[Value], index: usize) -> String {
    fn triple(m: &Value) -> (&str, &str, &str) {
        let field = |k: &str| m[k].as_str().unwrap_or("");
        (field("service"), field("from"), field("to"))
    }
    let m = &moves[index];
    match m["group"]["steps"].as_array() {
        None => berth_engine::review::identity_of([triple(m)]),
        Some(steps) => berth_engine::review::identity_of(
            moves
                .iter()
                .filter(|o| steps.contains(&o["step"]))
                .map(triple),
        ),
    }
}

/// The snooze conditions a move's Why offers: each deciding fact's exact
/// flip threshold on either side, `(fact, side, value, unit)`. A compound
/// step's come from the group's flips.
pub fn condition_choices(why: &Value) -> Vec<(String, &'static str, f64, String)> {
    let mut out = Vec::new();
    if why["group"].is_object() {
        for f in arr(&why["group"]["flips"]) {
            for side in ["below", "above"] {
                if let Some(v) = f[side].as_f64() {
                    out.push((s(&f["fact"]), side, v, s(&f["unit"])));
                }
            }
        }
    } else {
        for f in arr(&why["flips"]) {
            for side in ["below", "above"] {
                if let Some(v) = f[side]["value"].as_f64() {
                    out.push((s(&f["fact"]), side, v, s(&f["unit"])));
                }
            }
        }
    }
    out
}

/// The decision about one recommendation and, for operators, the form
/// that records or forgets one.
#[component]
pub fn ReviewLine(identity: String, why: Value, label: String) -> impl IntoView {
    let auth = expect_context::<Auth>();
    let reviews = expect_context::<Reviews>();
    let may_operate = move || {
        auth.session
            .get()
            .flatten()
            .is_some_and(|s| s.may_operate())
    };
    let decision = RwSignal::new("dismissed".to_string());
    let reason = RwSignal::new(String::new());
    let link = RwSignal::new(String::new());
    let until = RwSignal::new(String::new());
    let condition = RwSignal::new(String::new());
    let measured = RwSignal::new(false);
    let error = RwSignal::new(None::<String>);
    let busy = RwSignal::new(false);
    let choices = condition_choices(&why);
    let id_for_status = identity.clone();
    let status = move || {
        let r = reviews
            .by_identity
            .with(|m| m.get(&id_for_status).cloned())?;
        let state = s(&r["standing"]["state"]);
        let decided = format!(
            "{} by {} at {}",
            s(&r["decision"]),
            s(&r["decided_by"]),
            s(&r["decided_at"])
        );
        let reason = s(&r["reason"]);
        let link = s(&r["link"]);
        let until = r["until"].as_str().map(str::to_string);
        let cond = r["condition"].is_object().then(|| {
            format!(
                "ask again when {} is {}{} {}",
                s(&r["condition"]["fact"]),
                if r["condition"]["measured"].as_bool() == Some(true) {
                    "measured "
                } else {
                    ""
                },
                s(&r["condition"]["side"]),
                num(&r["condition"]["value"], 2)
            )
        });
        let reasons: Vec<String> = arr(&r["standing"]["reasons"]).iter().map(s).collect();
        Some(view! {
            <div class=format!("review review-{state}") data-testid="review" data-state=state.clone()>
                <span class=format!("badge review-badge review-{}", s(&r["decision"]))>{s(&r["decision"])}</span>" "
                <span class="muted">{decided}</span>
                {(!reason.is_empty()).then(|| view! { <span>" — "{reason.clone()}</span> })}
                {(!link.is_empty()).then(|| view! { " "<a href=link.clone() rel="noopener noreferrer">"tracked here"</a> })}
                {until.map(|u| view! { <span>{format!(" · until {u}")}</span> })}
                {cond.map(|c| view! { <span>{format!(" · {c}")}</span> })}
                {(state == "back").then(|| view! {
                    <p class="review-back" data-testid="review-back"><strong>"Back: "</strong>{reasons.join(" ")}</p>
                })}
            </div>
        })
    };
    // Copy, so the handlers below are too (they are rebuilt whenever the
    // form is shown again).
    let ident = StoredValue::new(identity.clone());
    let save = move |ev: leptos::ev::SubmitEvent| {
        ev.prevent_default();
        let Some(estate) = auth.estate.get_untracked() else {
            return;
        };
        let kind = decision.get_untracked();
        let mut body = json!({"identity": ident.get_value(), "decision": kind});
        let r = reason.get_untracked();
        if !r.trim().is_empty() {
            body["reason"] = json!(r);
        }
        if kind == "planned" && !link.get_untracked().trim().is_empty() {
            body["link"] = json!(link.get_untracked().trim());
        }
        if kind == "snoozed" {
            let u = until.get_untracked();
            if !u.is_empty() {
                // A datetime-local value (minutes), read as UTC.
                body["until"] = json!(format!("{u}:00Z"));
            }
            let c = condition.get_untracked();
            if let Some((fact, side)) = c.split_once('\u{1f}') {
                body["condition"] =
                    json!({"fact": fact, "side": side, "measured": measured.get_untracked()});
            }
        }
        let now = reviews.now.get_untracked();
        busy.set(true);
        leptos::task::spawn_local(async move {
            let url = format!("/api/estates/{estate}/reviews?now={}", encode(&now));
            match client::request("POST", &url, Some(body.to_string())).await {
                Ok(_) => {
                    error.set(None);
                    reviews.load(estate);
                }
                Err(f) => error.set(Some(f.message)),
            }
            busy.set(false);
        });
    };
    let forget = move |_| {
        let Some(estate) = auth.estate.get_untracked() else {
            return;
        };
        let body = json!({"identity": ident.get_value()}).to_string();
        leptos::task::spawn_local(async move {
            let url = format!("/api/estates/{estate}/reviews/clear");
            match client::request("POST", &url, Some(body)).await {
                Ok(_) => {
                    error.set(None);
                    reviews.load(estate);
                }
                Err(f) => error.set(Some(f.message)),
            }
        });
    };
    let id_decided = identity.clone();
    let decided = Signal::derive(move || reviews.by_identity.with(|m| m.contains_key(&id_decided)));
    let options = move || {
        choices
            .iter()
            .map(|(fact, side, v, unit)| {
                let value = format!("{fact}\u{1f}{side}");
                let words = format!("{fact} is {side} {} {unit}", trim(*v));
                view! { <option value=value>{words}</option> }
            })
            .collect_view()
    };
    let summary_label = format!("Review {label}");
    view! {
        {status}
        <Show when=may_operate>
            <details class="review-form">
                <summary aria-label=summary_label.clone()>{move || if decided.get() { "Change the decision" } else { "Plan, dismiss or snooze" }}</summary>
                <form class="inline-form" on:submit=save>
                    <div class="entry-grid">
                        <div class="field">
                            <label>"Decision"
                                <select data-testid="review-decision" on:change=move |ev| decision.set(event_target_value(&ev)) prop:value=move || decision.get()>
                                    <option value="dismissed">"dismiss — does not apply"</option>
                                    <option value="snoozed">"snooze — not now"</option>
                                    <option value="planned">"planned — someone will move it"</option>
                                </select>
                            </label>
                        </div>
                        <div class="field">
                            <label>{move || if decision.get() == "dismissed" { "Reason (required)" } else { "Reason" }}
                                <input data-testid="review-reason" bind:value=reason/>
                            </label>
                        </div>
                        <Show when=move || decision.get() == "planned">
                            <div class="field">
                                <label>"Link to the change"
                                    <input type="url" placeholder="https://" data-testid="review-link" bind:value=link/>
                                </label>
                            </div>
                        </Show>
                        <Show when=move || decision.get() == "snoozed">
                            <div class="field">
                                <label>"Until (UTC)"
                                    <input type="datetime-local" data-testid="review-until" bind:value=until/>
                                </label>
                            </div>
                        </Show>
                    </div>
                    <div class="field" style:display=move || if decision.get() == "snoozed" { "block" } else { "none" }>
                        <label>"Or ask again when"
                            <select data-testid="review-condition" on:change=move |ev| condition.set(event_target_value(&ev))>
                                <option value="">"— no condition —"</option>
                                {options.clone()}
                            </select>
                        </label>
                        <label class="check"><input type="checkbox" bind:checked=measured/>" only once it is measured"</label>
                    </div>
                    <button type="submit" data-testid="review-save" disabled=move || busy.get()>"Save decision"</button>
                    <Show when=move || decided.get()>
                        " "<button type="button" class="small" data-testid="review-forget" on:click=forget>"Forget the decision"</button>
                    </Show>
                    {move || error.get().map(|m| view! { <p class="error" role="alert" data-testid="review-error">{m}</p> })}
                </form>
            </details>
        </Show>
    }
}

fn trim(v: f64) -> String {
    let t = format!("{v:.2}");
    t.trim_end_matches('0').trim_end_matches('.').to_string()
}

/// The estate's audit trail: every decision and policy change, newest first.
#[component]
pub fn AuditTrail() -> impl IntoView {
    let auth = expect_context::<Auth>();
    let entries = RwSignal::new(None::<Vec<Value>>);
    let error = RwSignal::new(None::<String>);
    Effect::new(move |_| {
        let Some(id) = auth.estate.get() else { return };
        leptos::task::spawn_local(async move {
            match client::get(&format!("/api/estates/{id}/audit?limit=50")).await {
                Ok(v) => entries.set(Some(arr(&v["entries"]))),
                Err(f) => error.set(Some(f.message)),
            }
        });
    });
    view! {
        <section aria-labelledby="audit-h" data-testid="audit">
            <h2 id="audit-h">"Audit trail"</h2>
            <p class="hint">"Every decision about a recommendation and every policy change: who, when, what and why. Newest first."</p>
            {move || error.get().map(|m| view! { <p class="error" role="alert">{m}</p> })}
            {move || entries.get().map(|list| {
                if list.is_empty() {
                    return view! { <p class="empty">"Nothing decided or changed yet."</p> }.into_any();
                }
                let rows = list.iter().map(|e| {
                    let what = audit_words(e);
                    view! {
                        <tr data-action=s(&e["action"])>
                            <td>{s(&e["at"])}</td>
                            <td>{s(&e["actor"])}</td>
                            <td><code>{s(&e["action"])}</code></td>
                            <td>{what}</td>
                            <td>{s(&e["reason"])}</td>
                        </tr>
                    }
                }).collect_view();
                view! {
                    <div class="table-scroll">
                        <table>
                            <thead><tr><th scope="col">"when"</th><th scope="col">"who"</th><th scope="col">"action"</th><th scope="col">"what"</th><th scope="col">"why"</th></tr></thead>
                            <tbody>{rows}</tbody>
                        </table>
                    </div>
                }.into_any()
            })}
        </section>
    }
}

/// One audit entry's "what" in words: the recommendation, or the policy
/// fields that changed (`field from → to`).
pub fn audit_words(e: &Value) -> String {
    if s(&e["action"]) == "policy.changed" {
        let changed: Vec<String> = arr(&e["detail"]["changed"])
            .iter()
            .map(|c| format!("{} {} → {}", s(&c["field"]), c["from"], c["to"]))
            .collect();
        if changed.is_empty() {
            "policy saved unchanged".to_string()
        } else {
            changed.join("; ")
        }
    } else {
        s(&e["subject"]).replace('|', " ").replace('+', " + ")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn identities_match_the_engine_format() {
        let moves = vec![
            json!({"step": 1, "service": "cart", "from": "c-par-1", "to": "c-fra-2"}),
            json!({"step": 2, "service": "b", "from": "x", "to": "y", "group": {"steps": [2, 3]}}),
            json!({"step": 3, "service": "a", "from": "x", "to": "y", "group": {"steps": [2, 3]}}),
        ];
        assert_eq!(identity(&moves, 0), "cart|c-par-1|c-fra-2");
        assert_eq!(identity(&moves, 1), "a|x|y+b|x|y");
        assert_eq!(identity(&moves, 2), identity(&moves, 1));
    }

    #[test]
    fn identities_agree_with_the_engine_on_the_sample() {
        let text = include_str!("../../../examples/estates/sample.json");
        let e = berth_engine::load(text, berth_engine::Format::Json).expect("the sample loads");
        let now = berth_engine::estate::parse_time("2026-11-30T04:05:00Z").unwrap();
        let a = berth_engine::advise(&e, &berth_engine::Policy::default(), now);
        let v = serde_json::to_value(&a).unwrap();
        let moves = arr(&v["moves"]);
        assert!(
            a.moves.iter().any(|m| m.group.is_some()),
            "the sample has a compound step"
        );
        for i in 0..moves.len() {
            assert_eq!(
                identity(&moves, i),
                berth_engine::review::identity(&a.moves, i)
            );
        }
    }

    #[test]
    fn policy_changes_read_field_by_field() {
        let e = json!({"action": "policy.changed", "detail": {"changed": [
            {"field": "/cross_site_weight", "from": 4.0, "to": 10.0}
        ]}});
        assert_eq!(audit_words(&e), "/cross_site_weight 4.0 → 10.0");
    }
}
