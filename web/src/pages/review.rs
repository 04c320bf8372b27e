//! Review memory on the pages (`docs/reviews.md`): each recommendation's
//! decision (planned, dismissed, snoozed) and where it stands, the form
//! that records one, and the estate's audit trail.
//!
//! The advice is the engine's, unchanged; the server says which
//! recommendations a decision hides at the page's evaluation time
//! (`GET …/reviews?now=`), and the Placement page leaves those out until
//! asked to show them.

use std::collections::BTreeMap;

use berth_api::{AuditEntry, AuditList, Review, ReviewList, ReviewState};
use berth_engine::MoveWhy;
use leptos::prelude::*;

use super::fixed;
use crate::client;
use crate::common::{problem_at, refusals_at_fields, Auth};

/// The decisions of the estate on show, by identity, with their standing
/// at the page's evaluation time.
#[derive(Clone, Copy)]
pub struct Reviews {
    pub by_identity: RwSignal<BTreeMap<String, Review>>,
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
            let url = berth_api::endpoint::list_reviews(&estate).query("now", &now);
            match client::get_typed::<ReviewList>(&url).await {
                Ok(list) => {
                    let map = list
                        .reviews
                        .into_iter()
                        .map(|r| (r.identity.clone(), r))
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

    /// Where the decision about `identity` stands, or `None` when
    /// undecided.
    pub fn state(&self, identity: &str) -> Option<ReviewState> {
        self.by_identity
            .with(|m| m.get(identity).map(|r| r.standing.state))
    }

    /// Is the recommendation hidden by a decision (untracked: for event
    /// handlers)?
    pub fn hidden_untracked(&self, identity: &str) -> bool {
        self.by_identity.with_untracked(|m| {
            m.get(identity)
                .is_some_and(|r| r.standing.state == ReviewState::Hidden)
        })
    }

    pub fn hidden_count(&self, identities: &[String]) -> usize {
        identities
            .iter()
            .filter(|i| self.state(i) == Some(ReviewState::Hidden))
            .count()
    }
}

impl Default for Reviews {
    fn default() -> Self {
        Reviews::new()
    }
}

/// The snooze conditions a move's Why offers: each deciding fact's exact
/// flip threshold on either side, `(fact, side, value, unit)`. A compound
/// step's come from the group's flips.
pub fn condition_choices(why: Option<&MoveWhy>) -> Vec<(String, &'static str, f64, String)> {
    let Some(why) = why else {
        // Not explained yet: no thresholds to offer.
        return Vec::new();
    };
    let mut out = Vec::new();
    match &why.group {
        Some(g) => {
            for f in &g.flips {
                for (side, v) in [("below", f.below), ("above", f.above)] {
                    if let Some(v) = v {
                        out.push((f.fact.clone(), side, v, f.unit.to_string()));
                    }
                }
            }
        }
        None => {
            for f in &why.flips {
                for (side, t) in [("below", &f.below), ("above", &f.above)] {
                    if let Some(t) = t {
                        out.push((f.fact.clone(), side, t.value, f.unit.to_string()));
                    }
                }
            }
        }
    }
    out
}

/// What the review form holds, and its state.
#[derive(Clone, Copy)]
struct DecisionForm {
    decision: RwSignal<String>,
    reason: RwSignal<String>,
    link: RwSignal<String>,
    until: RwSignal<String>,
    condition: RwSignal<String>,
    measured: RwSignal<bool>,
    error: RwSignal<Option<String>>,
    busy: RwSignal<bool>,
    /// The engine's rules for a typed decision (the server's own, in its
    /// words) are shown at their fields once the form was sent; a server
    /// refusal lands at its field the same way.
    tried: RwSignal<bool>,
    refused: RwSignal<Vec<(String, String)>>,
}

impl DecisionForm {
    fn new() -> DecisionForm {
        DecisionForm {
            decision: RwSignal::new("dismissed".to_string()),
            reason: RwSignal::new(String::new()),
            link: RwSignal::new(String::new()),
            until: RwSignal::new(String::new()),
            condition: RwSignal::new(String::new()),
            measured: RwSignal::new(false),
            error: RwSignal::new(None),
            busy: RwSignal::new(false),
            tried: RwSignal::new(false),
            refused: RwSignal::new(Vec::new()),
        }
    }

    /// The problems of the decision as typed, by the engine's rules.
    fn problems(self) -> Vec<(&'static str, String)> {
        let (d, r, l, u, c) = (
            self.decision.get(),
            self.reason.get(),
            self.link.get(),
            self.until.get(),
            self.condition.get(),
        );
        let snooze = d == "snoozed";
        berth_engine::review::decision_problems(&berth_engine::review::DecisionInput {
            decision: &d,
            reason: &r,
            // Only what the form sends: the link of a plan, the until and
            // condition of a snooze.
            link: if d == "planned" { l.as_str() } else { "" },
            has_until: snooze && !u.is_empty(),
            has_condition: snooze && !c.is_empty(),
        })
    }

    /// The problem shown at one field.
    fn at(self, path: &'static str) -> Signal<Option<String>> {
        Signal::derive(move || {
            problem_at(
                path,
                &self.problems(),
                self.tried.get(),
                &self.refused.get(),
            )
        })
    }

    /// Record the decision about `identity` (after the engine's check).
    fn save(self, identity: String, estate: String, reviews: Reviews) {
        self.tried.set(true);
        self.refused.set(Vec::new());
        self.error.set(None);
        if !self.problems().is_empty() {
            return;
        }
        let kind = self.decision.get_untracked();
        let mut body = berth_api::NewReview {
            identity,
            decision: kind.clone(),
            reason: String::new(),
            link: String::new(),
            until: None,
            condition: None,
        };
        let r = self.reason.get_untracked();
        if !r.trim().is_empty() {
            body.reason = r;
        }
        if kind == "planned" && !self.link.get_untracked().trim().is_empty() {
            body.link = self.link.get_untracked().trim().to_string();
        }
        if kind == "snoozed" {
            let u = self.until.get_untracked();
            if !u.is_empty() {
                // A datetime-local value (minutes), read as UTC.
                body.until = Some(format!("{u}:00Z"));
            }
            let c = self.condition.get_untracked();
            if let Some((fact, side)) = c.split_once('\u{1f}') {
                body.condition = Some(berth_api::NewReviewCondition {
                    fact: fact.to_string(),
                    side: side.to_string(),
                    value: None,
                    measured: self.measured.get_untracked(),
                });
            }
        }
        let body = serde_json::to_string(&body).expect("a review serialises");
        let now = reviews.now.get_untracked();
        self.busy.set(true);
        leptos::task::spawn_local(async move {
            let url = berth_api::endpoint::review_recommendation(&estate).query("now", &now);
            match client::request("POST", &url, Some(body)).await {
                Ok(_) => {
                    self.error.set(None);
                    self.tried.set(false);
                    reviews.load(estate);
                }
                Err(f) => {
                    let fields = refusals_at_fields(&f);
                    let placed = ["/reason", "/link", "/until"];
                    if fields.iter().all(|(p, _)| placed.contains(&p.as_str()))
                        && !fields.is_empty()
                    {
                        self.refused.set(fields);
                    } else {
                        self.error.set(Some(f.message));
                    }
                }
            }
            self.busy.set(false);
        });
    }

    /// Forget the decision about `identity`.
    fn forget(self, identity: String, estate: String, reviews: Reviews) {
        let body = serde_json::to_string(&berth_api::ClearReview {
            identity,
            reason: String::new(),
        })
        .expect("a review serialises");
        leptos::task::spawn_local(async move {
            let url = berth_api::endpoint::clear_review(&estate);
            match client::request("POST", &url, Some(body)).await {
                Ok(_) => {
                    self.error.set(None);
                    reviews.load(estate);
                }
                Err(f) => self.error.set(Some(f.message)),
            }
        });
    }
}

/// The decision about one recommendation, and where it stands.
fn status_view(reviews: Reviews, identity: String) -> impl IntoView {
    move || {
        let r = reviews.by_identity.with(|m| m.get(&identity).cloned())?;
        let state = r.standing.state.as_str();
        let decision = r.decision.as_str();
        let decided = format!("{decision} by {} at {}", r.decided_by, r.decided_at);
        let reason = r.reason;
        let link = r.link;
        let until = r.until;
        let cond = r.condition.map(|c| {
            format!(
                "ask again when {} is {}{} {}",
                c.fact,
                if c.measured { "measured " } else { "" },
                c.side.as_str(),
                fixed(Some(c.value), 2)
            )
        });
        let reasons = r.standing.reasons;
        Some(view! {
            <div class=format!("review review-{state}") data-testid="review" data-state=state>
                <span class=format!("badge review-badge review-{decision}")>{decision}</span>" "
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
    }
}

/// The decision about one recommendation and, for operators, the form
/// that records or forgets one.
#[component]
pub fn ReviewLine(identity: String, why: Option<MoveWhy>, label: String) -> impl IntoView {
    let auth = expect_context::<Auth>();
    let reviews = expect_context::<Reviews>();
    let may_operate = move || {
        auth.session
            .get()
            .flatten()
            .is_some_and(|s| s.may_operate())
    };
    let form = DecisionForm::new();
    let DecisionForm {
        decision,
        reason,
        link,
        until,
        condition,
        measured,
        error,
        busy,
        ..
    } = form;
    let (reason_problem, link_problem, until_problem) =
        (form.at("/reason"), form.at("/link"), form.at("/until"));
    let choices = condition_choices(why.as_ref());
    // Copy, so the handlers below are too (they are rebuilt whenever the
    // form is shown again).
    let ident = StoredValue::new(identity.clone());
    let save = move |ev: leptos::ev::SubmitEvent| {
        ev.prevent_default();
        if let Some(estate) = auth.estate.get_untracked() {
            form.save(ident.get_value(), estate, reviews);
        }
    };
    let forget = move |_| {
        if let Some(estate) = auth.estate.get_untracked() {
            form.forget(ident.get_value(), estate, reviews);
        }
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
        {status_view(reviews, identity)}
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
                                <input data-testid="review-reason" bind:value=reason
                                    aria-invalid=move || if reason_problem.get().is_some() { "true" } else { "false" }/>
                            </label>
                            <span class="error field-error" role="alert" data-testid="review-reason-problem">{move || reason_problem.get()}</span>
                        </div>
                        <Show when=move || decision.get() == "planned">
                            <div class="field">
                                <label>"Link to the change"
                                    <input type="url" placeholder="https://" data-testid="review-link" bind:value=link
                                        aria-invalid=move || if link_problem.get().is_some() { "true" } else { "false" }/>
                                </label>
                                <span class="error field-error" role="alert" data-testid="review-link-problem">{move || link_problem.get()}</span>
                            </div>
                        </Show>
                        <Show when=move || decision.get() == "snoozed">
                            <div class="field">
                                <label>"Until (UTC)"
                                    <input type="datetime-local" data-testid="review-until" bind:value=until
                                        aria-invalid=move || if until_problem.get().is_some() { "true" } else { "false" }/>
                                </label>
                                <span class="error field-error" role="alert" data-testid="review-until-problem">{move || until_problem.get()}</span>
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
    let entries = RwSignal::new(None::<Vec<AuditEntry>>);
    let error = RwSignal::new(None::<String>);
    Effect::new(move |_| {
        let Some(id) = auth.estate.get() else { return };
        leptos::task::spawn_local(async move {
            match client::get_typed::<AuditList>(
                &berth_api::endpoint::estate_audit(&id).query("limit", "50"),
            )
            .await
            {
                Ok(list) => entries.set(Some(list.entries)),
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
                        <tr data-action=e.action.clone()>
                            <td>{e.at.clone()}</td>
                            <td>{e.actor.clone()}</td>
                            <td><code>{e.action.clone()}</code></td>
                            <td>{what}</td>
                            <td>{e.reason.clone()}</td>
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
pub fn audit_words(e: &AuditEntry) -> String {
    if e.action == "policy.changed" {
        let changed: Vec<String> = e
            .policy_changes()
            .into_iter()
            .map(|(field, from, to)| format!("{field} {from} → {to}"))
            .collect();
        if changed.is_empty() {
            "policy saved unchanged".to_string()
        } else {
            changed.join("; ")
        }
    } else {
        e.subject.replace('|', " ").replace('+', " + ")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn policy_changes_read_field_by_field() {
        let e: AuditEntry = serde_json::from_value(serde_json::json!({
            "id": 1, "estate": "sample", "actor": "admin", "at": "2026-11-30T04:05:00Z",
            "action": "policy.changed", "subject": "policy", "reason": "",
            "detail": {"changed": [{"field": "/cross_site_weight", "from": 4.0, "to": 10.0}]}
        }))
        .unwrap();
        assert_eq!(audit_words(&e), "/cross_site_weight 4.0 → 10.0");
        let e = AuditEntry {
            action: "review.dismissed".into(),
            subject: "a|x|y+b|x|y".into(),
            ..e
        };
        assert_eq!(audit_words(&e), "a x y + b x y");
    }
}
