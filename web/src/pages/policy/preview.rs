//! The Policy page's first panel: what the edited values would do to the
//! advice, computed in the browser's engine at every edit — the moves
//! added, removed and changed (by service, from → to), and the headline
//! totals under the saved policy and under the edited one. One sign
//! convention: a saving is positive and drawn good.

use std::collections::BTreeMap;

use berth_engine::advise::Advice;
use berth_engine::cost::Totals;
use berth_engine::money::dollars_month;
use berth_engine::{advise, Estate, Policy};
use leptos::prelude::*;

use super::PolicyState;
use crate::client;
use crate::pages::{fixed, saving_class, signed};

/// One recommended move: service, from, to.
#[derive(Clone, Debug, PartialEq)]
pub struct Step {
    pub service: String,
    pub from: String,
    pub to: String,
}

/// The advice under one policy, reduced to what the preview compares.
#[derive(Clone, Debug, PartialEq)]
pub struct Outcome {
    pub moves: Vec<Step>,
    /// The estate's totals after the recommended moves.
    pub totals: Totals,
    /// US$ a month of transfer after them, at that policy's prices.
    pub usd_month: f64,
}

impl Outcome {
    pub fn of(estate: &Estate, policy: &Policy, now: i64) -> Outcome {
        let a: Advice = advise(estate, policy, now);
        let money = berth_engine::money::of_advice(estate, policy, &a);
        Outcome {
            moves: a
                .moves
                .iter()
                .filter(|m| m.is_recommended())
                .map(|m| Step {
                    service: m.service.clone(),
                    from: m.from.clone(),
                    to: m.to.clone(),
                })
                .collect(),
            totals: a.totals_after,
            usd_month: money.after.usd_month,
        }
    }
}

/// What the edits change in the advice.
#[derive(Clone, Debug, PartialEq)]
pub struct Projected {
    pub before: Outcome,
    pub after: Outcome,
    /// "cart: c-fra-1 → c-dub-1", recommended only under the edits.
    pub added: Vec<String>,
    /// Recommended now, not under the edits.
    pub removed: Vec<String>,
    /// The same service sent elsewhere: "cart: c-fra-1 → c-dub-1 (instead of → c-fra-2)".
    pub changed: Vec<String>,
    pub ms: f64,
    /// When it was computed (page clock, ms): tells one projection from
    /// the next when both say the same (the bench waits on it).
    pub at: f64,
}

impl Projected {
    pub fn new(before: Outcome, after: Outcome, ms: f64, at: f64) -> Projected {
        let by_service = |o: &Outcome| -> BTreeMap<String, Step> {
            o.moves
                .iter()
                .map(|s| (s.service.clone(), s.clone()))
                .collect()
        };
        let (b, a) = (by_service(&before), by_service(&after));
        let line = |s: &Step| format!("{}: {} → {}", s.service, s.from, s.to);
        let mut added = Vec::new();
        let mut changed = Vec::new();
        for s in &after.moves {
            match b.get(&s.service) {
                None => added.push(line(s)),
                Some(old) if old.to != s.to => {
                    changed.push(format!("{} (instead of → {})", line(s), old.to))
                }
                Some(_) => {}
            }
        }
        let removed = before
            .moves
            .iter()
            .filter(|s| !a.contains_key(&s.service))
            .map(line)
            .collect();
        Projected {
            before,
            after,
            added,
            removed,
            changed,
            ms,
            at,
        }
    }
}

/// The saved policy's outcome and the edited one's, both computed in the
/// browser at the page's evaluation time. The saved one is computed once
/// the estate is in the engine (again after a save reloads it), not at
/// every edit.
pub fn projection(st: PolicyState) -> Memo<Option<Projected>> {
    let saved = Memo::new(move |_| {
        if !st.engine_ready.get() {
            return None;
        }
        let l = client::loaded_now()?;
        Some(Outcome::of(&l.estate, &l.policy, client::eval_now()))
    });
    Memo::new(move |_| {
        if !st.engine_ready.get() || st.edits.with(BTreeMap::is_empty) {
            return None;
        }
        let new_policy = st.draft.with(|d| d.as_ref().and_then(|d| d.2.clone()))?;
        let l = client::loaded_now()?;
        let t0 = client::perf_ms();
        let before = saved.get()?;
        let after = Outcome::of(&l.estate, &new_policy, client::eval_now());
        Some(Projected::new(
            before,
            after,
            client::perf_ms() - t0,
            client::perf_ms(),
        ))
    })
}

/// One headline row: the figure under the saved policy, under the edits,
/// and the saving (before − after: positive is good).
fn total_row(
    label: &'static str,
    testid: &'static str,
    before: f64,
    after: f64,
    text: fn(f64) -> String,
) -> impl IntoView {
    let saved = before - after;
    view! {
        <tr data-testid=testid data-before=format!("{before:.3}") data-after=format!("{after:.3}")>
            <th scope="row">{label}</th>
            <td class="n" data-label="saved policy">{text(before)}</td>
            <td class="n" data-label="these values">{text(after)}</td>
            <td class=format!("n {}", saving_class(saved)) data-label="saving">{text_signed(saved, text)}</td>
        </tr>
    }
}

fn text_signed(x: f64, text: fn(f64) -> String) -> String {
    let sign = if x < 0.0 { "\u{2212}" } else { "+" };
    format!("{sign}{}", text(x.abs()))
}

fn points(x: f64) -> String {
    fixed(Some(x), 1)
}

fn mb_s(x: f64) -> String {
    format!("{} MB/s", fixed(Some(x), 1))
}

/// The headline totals, then the moves added, removed and changed.
#[component]
fn Changes(p: Projected) -> impl IntoView {
    let (b, a) = (&p.before, &p.after);
    let list = |title: &'static str, items: Vec<String>, testid: &'static str| {
        (!items.is_empty()).then(|| {
            view! {
                <h3>{title}</h3>
                <ul class="preview-moves" data-testid=testid>{items.into_iter().map(|m| view! { <li>{m}</li> }).collect_view()}</ul>
            }
        })
    };
    let (n_before, n_after) = (b.moves.len(), a.moves.len());
    let unchanged = n_after - p.added.len() - p.changed.len();
    let summary = format!(
        "With these values: {n_after} recommended move{} (now {n_before}): {} added, {} removed, {} sent elsewhere, {unchanged} the same. Estate cost after them {:.1} points (now {:.1}: ",
        if n_after == 1 { "" } else { "s" },
        p.added.len(),
        p.removed.len(),
        p.changed.len(),
        a.totals.cost,
        b.totals.cost
    );
    view! {
        <p data-testid="preview-summary" data-after=n_after data-before=n_before data-at=format!("{:.3}", p.at)>
            {summary}{super::super::saving_span(b.totals.cost, a.totals.cost)}{format!("). Projected in {:.0} ms.", p.ms)}
        </p>
        <table class="preview-totals" data-testid="preview-totals">
            <caption>"The estate after the recommended moves"</caption>
            <thead><tr><th scope="col">"total"</th><th scope="col" class="n">"saved policy"</th>
                <th scope="col" class="n">"these values"</th><th scope="col" class="n">"saving"</th></tr></thead>
            <tbody>
                <tr data-testid="preview-total-moves" data-before=n_before data-after=n_after>
                    <th scope="row">"recommended moves"</th>
                    <td class="n" data-label="saved policy">{n_before}</td>
                    <td class="n" data-label="these values">{n_after}</td>
                    <td class="n" data-label="change">{signed(n_after as f64 - n_before as f64, 0)}</td>
                </tr>
                {total_row("cost (points)", "preview-total-cost", b.totals.cost, a.totals.cost, points)}
                {total_row("round trip (points)", "preview-total-rtt", b.totals.round_trip, a.totals.round_trip, points)}
                {total_row("cross-site traffic", "preview-total-cross", b.totals.cross_site_mb_s, a.totals.cross_site_mb_s, mb_s)}
                {total_row("transfer", "preview-total-usd", b.usd_month, a.usd_month, dollars_month)}
            </tbody>
        </table>
        {list("Would be recommended, and is not now:", p.added, "preview-added")}
        {list("Would no longer be recommended:", p.removed, "preview-removed")}
        {list("Would be sent elsewhere:", p.changed, "preview-changed")}
    }
}

/// The preview panel: a hint until something is edited, what to fix while
/// a field is wrong, then the effect.
#[component]
pub fn Preview(st: PolicyState, projected: Memo<Option<Projected>>) -> impl IntoView {
    let problems = move || {
        st.draft
            .with(|d| d.as_ref().map(|d| d.1.len()).unwrap_or(0))
    };
    view! {
        <section class="panel policy-preview" aria-labelledby="preview-h" data-testid="policy-preview" aria-live="polite">
            <h2 id="preview-h">"Effect before saving"</h2>
            {move || match (st.edits.with(BTreeMap::is_empty), problems(), projected.get()) {
                (true, _, _) => view! { <p class="hint">"Change a value below to see what it would do to the advice, computed in your browser; nothing is saved until you save."</p> }.into_any(),
                (false, n, _) if n > 0 => view! { <p class="hint">{format!("Fix the {n} marked field{} to see the effect.", if n == 1 { "" } else { "s" })}</p> }.into_any(),
                (false, _, None) => view! { <p class="loading" role="status">"Loading the estate into the engine…"</p> }.into_any(),
                (false, _, Some(p)) => view! { <Changes p/> }.into_any(),
            }}
        </section>
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn step(s: &str, from: &str, to: &str) -> Step {
        Step {
            service: s.into(),
            from: from.into(),
            to: to.into(),
        }
    }

    fn outcome(moves: Vec<Step>) -> Outcome {
        Outcome {
            moves,
            totals: Totals::default(),
            usd_month: 0.0,
        }
    }

    #[test]
    fn moves_added_removed_and_sent_elsewhere_by_service() {
        let before = outcome(vec![
            step("a", "x", "y"),
            step("b", "x", "y"),
            step("c", "x", "y"),
        ]);
        let after = outcome(vec![
            step("a", "x", "y"),
            step("b", "x", "z"),
            step("d", "x", "y"),
        ]);
        let p = Projected::new(before, after, 0.0, 0.0);
        assert_eq!(p.added, ["d: x → y"]);
        assert_eq!(p.removed, ["c: x → y"]);
        assert_eq!(p.changed, ["b: x → z (instead of → y)"]);
    }
}
