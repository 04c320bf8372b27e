//! Placement: the recommended moves in order, each with its gain, its
//! confidence and a Why panel (facts, terms, flip conditions); services
//! that cannot move; clusters whose fit cannot be told. Computed in the
//! browser by the engine, then checked against the server by digest.

use std::sync::Arc;

use berth_api::ResultEnvelope;
use berth_engine::advise::{CantTell as CantTellEntry, Move};
use berth_engine::cost::Term;
use berth_engine::fact::Class;
use berth_engine::money::{dollars_month, Money, Saving};
use berth_engine::why::Flip;
use berth_engine::{Advice, MoveWhy};
use leptos::prelude::*;
use leptos_router::hooks::use_navigate;

use super::review::{ReviewLine, Reviews};
use super::{age, fixed, signed};
use crate::client;
use crate::common::{Auth, ErrorLine, Gate, Scenario};
use crate::engine::{self, SnapshotMeta, Step};
use berth_api::ReviewState;

mod cards;
mod filter;
mod lists;
mod why;
mod words;
use cards::*;
use filter::*;
use lists::*;
use why::*;
use words::*;

/// The browser/server parity check of one result.
#[derive(Clone, Debug, PartialEq)]
pub enum Parity {
    Pending,
    Match,
    Mismatch(String),
    /// The server could not be asked; the check did not happen.
    Failed(String),
}

impl Parity {
    pub fn attr(&self) -> &'static str {
        match self {
            Parity::Pending => "pending",
            Parity::Match => "match",
            Parity::Mismatch(_) => "mismatch",
            Parity::Failed(_) => "failed",
        }
    }
}

/// Compare the server's envelope with what the browser computed.
pub fn check_parity(
    envelope: &ResultEnvelope,
    meta: &SnapshotMeta,
    browser_digest: &str,
) -> Parity {
    let server = envelope.result_digest.as_str();
    if envelope.version != meta.version {
        return Parity::Mismatch(format!(
            "The estate changed on the server (version {} there, {} here): reload the page.",
            envelope.version, meta.version
        ));
    }
    if envelope.policy_digest != meta.policy_digest {
        return Parity::Mismatch(format!(
            "The policy changed on the server ({} there, {} here): reload the page.",
            envelope.policy_digest, meta.policy_digest
        ));
    }
    if server == browser_digest {
        Parity::Match
    } else {
        Parity::Mismatch(format!(
            "The browser's result differs from the server's for the same estate, policy and time (digest {} here, {} on the server). This is a bug: report it with the estate.",
            &browser_digest[..browser_digest.len().min(16)],
            &server[..server.len().min(16)]
        ))
    }
}

/// The advice on show and, once computed, every move's Why (aligned with
/// `advice.moves`; empty until then).
#[derive(Debug, PartialEq)]
pub struct Shown {
    pub advice: Advice,
    pub why: Vec<MoveWhy>,
    /// The traffic read as money (`berth_engine::money`, docs/advice.md
    /// §1a), aligned with `advice.moves`.
    pub money: Money,
}

impl Shown {
    /// The Why of move `i`, once computed.
    fn why(&self, i: usize) -> Option<MoveWhy> {
        self.why.get(i).cloned()
    }
}

#[component]
pub fn Placement() -> impl IntoView {
    let auth = expect_context::<Auth>();
    let advice = RwSignal::new(None::<Arc<Shown>>);
    let meta = RwSignal::new(None::<SnapshotMeta>);
    let error = RwSignal::new(None::<String>);
    let parity = RwSignal::new(Parity::Pending);
    let computed_ms = RwSignal::new(None::<f64>);
    let why_ms = RwSignal::new(None::<f64>);
    let now_text = RwSignal::new(String::new());
    let reviews = Reviews::new();
    provide_context(reviews);
    // Applied moves, the Why's calibration and the history's marks read
    // one outcomes report.
    provide_context(crate::outcomes::Outcomes::new());
    // The server's proof of the optimum for this version, once its answer
    // is in (`GET …/advice` carries it; docs/advice.md §6b): the distance
    // line says it instead of the engine's bound.
    let proof = RwSignal::new(None::<berth_api::AdviceProof>);
    provide_context(ProvenGap(proof));

    Effect::new(move |_| {
        let Some(id) = auth.estate.get() else { return };
        leptos::task::spawn_local(async move {
            let l = match client::loaded(&id).await {
                Ok(l) => l,
                Err(f) => {
                    error.set(Some(f.message));
                    return;
                }
            };
            let now = client::eval_now();
            // The moves first, painted at once; then every Why (the
            // larger part of the work) and the parity check over both.
            let t0 = client::perf_ms();
            let computed = engine::advice(&l, now);
            let money = berth_engine::money::of_advice(&l.estate, &l.policy, &computed);
            computed_ms.set(Some(client::perf_ms() - t0));
            advice.set(Some(Arc::new(Shown {
                advice: computed.clone(),
                why: Vec::new(),
                money: money.clone(),
            })));
            now_text.set(engine::format_time(now));
            meta.set(Some(l.meta.clone()));
            // Which of them a decision hides, at the same evaluation time.
            reviews.now.set(engine::format_time(now));
            reviews.load(id.clone());
            client::yield_to_browser().await;
            let t1 = client::perf_ms();
            let why = engine::explain(&l, now, &computed);
            let text = engine::advice_why_bytes(&computed, &why);
            let digest = engine::sha256_hex(text.as_bytes());
            why_ms.set(Some(client::perf_ms() - t1));
            advice.set(Some(Arc::new(Shown {
                advice: computed,
                why,
                money,
            })));
            let url = berth_api::endpoint::get_advice(&id)
                .query("why", "true")
                .query("now", &engine::format_time(now));
            match client::get_typed::<ResultEnvelope>(&url).await {
                Ok(env) => {
                    parity.set(check_parity(&env, &l.meta, &digest));
                    proof.set(
                        env.proof
                            .clone()
                            .filter(|p| p.estate_version == l.meta.version),
                    );
                }
                Err(f) => parity.set(Parity::Failed(format!(
                    "Could not ask the server for its advice to compare: {}",
                    f.message
                ))),
            }
        });
    });

    view! {
        <h1>"Placement"</h1>
        <Gate>
            <ErrorLine message=error.into()/>
            <ErrorLine message=reviews.error.into()/>
            {move || match advice.get() {
                None => view! { <p class="loading" role="status">"Computing the advice in your browser…"</p> }.into_any(),
                Some(a) => view! {
                    // The answer first: what the steps change, how far
                    // from the best, the steps as cards; where the numbers
                    // come from is one folded line at the bottom.
                    <section class="answer" aria-labelledby="moves-h" data-testid="answer">
                        <Moves shown=a.clone() now=now_text.into()/>
                        <Provenance meta=meta.into() now=now_text.into() computed_ms=computed_ms.into() why_ms=why_ms.into() parity=parity.into()/>
                    </section>
                    <super::next_steps::NextSteps/>
                    <WeakMoves shown=a.clone()/>
                    <Immovable shown=a.clone()/>
                    <UnknownRequests shown=a.clone()/>
                    <CantTell shown=a/>
                }.into_any(),
            }}
            <crate::outcomes::AppliedMoves/>
            <crate::history::History/>
        </Gate>
    }
}

/// The export links and the what-if button, for exactly the steps the
/// list shows (`chosen`: the services of those steps' moves, in order;
/// `filtered`: whether the list is narrowed). Markdown and JSON go
/// through the server's plan (`GET …/plan`, docs/plans.md), all of it or
/// the named services' steps; Karmada and OCM need each moved service's
/// workload in the estate and are disabled with that reason otherwise.
/// A failed export shows the server's reason on the page.
#[component]
fn Actions(
    now: Signal<String>,
    /// `(service, to)` of every move of the steps on screen, in order.
    chosen: Signal<Vec<(String, String)>>,
    /// Steps on screen.
    count: Signal<usize>,
    filtered: Signal<bool>,
    /// Services of the moves on screen whose workload the estate does not name.
    no_workload: Signal<Vec<String>>,
) -> impl IntoView {
    let auth = expect_context::<Auth>();
    let scenario = expect_context::<Scenario>();
    let error = RwSignal::new(None::<String>);
    let busy = RwSignal::new(false);
    let steps_words = move || {
        let n = count.get();
        format!(
            "{n} step{}{}",
            if n == 1 { "" } else { "s" },
            if filtered.get() { " (filtered)" } else { "" }
        )
    };
    let href = move |format: &'static str| {
        let id = auth.estate.get().unwrap_or_default();
        let mut url = berth_api::endpoint::get_plan(&id)
            .query("format", format)
            .query("now", &now.get());
        // Narrowed: the plan of the steps on screen only (the server
        // plans a compound step whole when one member is named).
        if filtered.get() {
            let mut services: Vec<String> = Vec::new();
            for (s, _) in chosen.get() {
                if !services.contains(&s) {
                    services.push(s);
                }
            }
            url = url.query("services", &services.join(","));
        }
        String::from(url)
    };
    // Asked first, then downloaded: a refusal (a 422) is shown here with
    // the server's reason instead of a download the browser drops.
    let download = move |format: &'static str| {
        let url = href(format);
        let name = berth_engine::plan::Format::parse(format)
            .map(|f| f.file_name(&auth.estate.get_untracked().unwrap_or_default()))
            .unwrap_or_default();
        error.set(None);
        busy.set(true);
        leptos::task::spawn_local(async move {
            match client::request_text("GET", &url, None).await {
                Ok(_) => client::download(&url, &name),
                Err(f) => error.set(Some(format!("The {format} export failed: {}", f.message))),
            }
            busy.set(false);
        });
    };
    let link = move |format: &'static str, label: &'static str, manifests: bool| {
        let reason = move || {
            let missing = no_workload.get();
            if !manifests || missing.is_empty() {
                return None;
            }
            let n = missing.len();
            let shown: Vec<&str> = missing.iter().take(3).map(String::as_str).collect();
            Some(format!(
                "{label} needs the Kubernetes workload of every moved service; the estate names none for {}{}. Set workload on them in the estate file, or import them from Kubernetes.",
                berth_engine::text::and_list(&shown),
                if n > 3 { format!(" and {} more", n - 3) } else { String::new() }
            ))
        };
        let disabled = move || reason().is_some() || count.get() == 0;
        view! {
            <button type="button" class="small" data-testid=format!("plan-{format}") data-href=move || href(format)
                disabled=disabled title=move || reason().unwrap_or_default()
                on:click=move |_| download(format)>{label}</button>
        }
    };
    let manifest_reason = move || {
        let missing = no_workload.get();
        (!missing.is_empty() && count.get() > 0).then(|| {
            let n = missing.len();
            format!(
                "Karmada and OCM are off: the estate names no Kubernetes workload for {n} of the moved services."
            )
        })
    };
    let owner = StoredValue::new(Owner::current());
    let take = move |_| {
        let steps: Vec<Step> = chosen
            .get_untracked()
            .into_iter()
            .map(|(service, to)| Step::Move { service, to })
            .collect();
        scenario.steps.set(steps);
        scenario.name.set("recommendations".into());
        let to = crate::common::keep_query(
            "/whatif",
            auth.estate.get_untracked().as_deref(),
            client::query_param("now").as_deref(),
        );
        // See `Placement`: the navigator is asked for when pressed.
        if let Some(owner) = owner.get_value() {
            let navigate = owner.with(use_navigate);
            navigate(&to, Default::default());
        }
    };
    view! {
        <div class="actions" data-testid="plan-export">
            <button type="button" data-testid="take" on:click=take disabled=move || count.get() == 0>
                {move || format!("Take these {} into a what-if", steps_words())}
            </button>
            <span class="export">
                <span data-testid="export-what">{move || format!("Export these {}: ", steps_words())}</span>
                {link("markdown", "Markdown", false)}
                {link("json", "JSON", false)}
                {link("karmada", "Karmada", true)}
                {link("ocm", "OCM", true)}
            </span>
            {move || busy.get().then(|| view! { <span class="hint" role="status">"Writing the plan…"</span> })}
            {move || manifest_reason().map(|r| view! { <p class="hint" data-testid="manifests-off">{r}</p> })}
            {move || error.get().map(|e| view! { <p class="error" role="alert" data-testid="export-error">{e}</p> })}
        </div>
    }
}

/// Which estate version and policy the result was computed from, the
/// timings and the parity check: one folded line at the bottom of the
/// answer (open by itself when the check fails, which is news).
#[component]
pub fn Provenance(
    meta: Signal<Option<SnapshotMeta>>,
    now: Signal<String>,
    computed_ms: Signal<Option<f64>>,
    why_ms: Signal<Option<f64>>,
    parity: Signal<Parity>,
) -> impl IntoView {
    let bad = move || matches!(parity.get(), Parity::Mismatch(_) | Parity::Failed(_));
    view! {
        <details class="provenance" data-testid="provenance" data-parity=move || parity.get().attr() prop:open=bad>
            <summary>
                {move || match parity.get() {
                    Parity::Pending => view! { <span class="parity pending" role="status">"Checking against the server…"</span> }.into_any(),
                    Parity::Match => view! { <span class="parity ok" role="status">"✓ matches server"</span> }.into_any(),
                    Parity::Mismatch(_) => view! { <span class="parity bad error" role="alert">"✗ differs from the server"</span> }.into_any(),
                    Parity::Failed(_) => view! { <span class="parity bad error" role="alert">"Parity not checked"</span> }.into_any(),
                }}
                {move || meta.get().map(|m| view! {
                    <span class="muted">" · estate version "<strong data-testid="version">{m.version}</strong>
                    " · policy "<code data-testid="policy-digest">{m.policy_digest.clone()}</code>
                    {computed_ms.get().map(|t| format!(" · {t:.0} ms"))}</span>
                })}
            </summary>
            {move || meta.get().map(|m| view! {
                <p>"Estate "<code>{m.estate.clone()}</code>" version "{m.version}", policy "<code>{m.policy_digest.clone()}</code>
                ", evaluated at "<code>{now.get()}</code>
                {computed_ms.get().map(|t| format!(", computed in your browser in {t:.0} ms"))}
                {why_ms.get().map(|t| format!(" (every Why: {t:.0} ms more)"))}
                ". The server computed the same from the same estate, policy and time when the check says so."</p>
            })}
            {move || match parity.get() {
                Parity::Mismatch(m) => Some(view! { <p class="error" role="alert">{m}</p> }),
                Parity::Failed(m) => Some(view! { <p class="error" role="alert">{m}</p> }),
                _ => None,
            }}
        </details>
    }
}

/// A recommendation's identity, as decisions about it are stored
/// (`service|from|to`, a compound step's members joined).
fn identity(moves: &[Move], i: usize) -> String {
    berth_engine::review::identity(moves, i)
}

/// The heading and the one line when nothing is recommended: what stopped
/// it (guesses, unknowns, or nothing to gain) and the distance line.
fn no_steps(advice: &Advice, weak: usize) -> AnyView {
    // Say what stopped it: guesses, unknowns, or nothing to gain.
    let why_none = if weak > 0 {
        format!(
            "No move is recommended: {} possible step{} rest{} on guesses (below). Measure the facts they name to decide.",
            weak,
            if weak == 1 { "" } else { "s" },
            if weak == 1 { "s" } else { "" }
        )
    } else if !advice.unknown_requests.is_empty()
        || !advice.cant_tell.is_empty()
        || !advice.unknown_capacity.is_empty()
    {
        "No move is worth making with what is known: some services or clusters lack the facts to tell (below).".to_string()
    } else {
        "No move is worth making: every service is where it should be, or no move clears the bars."
            .to_string()
    };
    let bound = distance_words(distance_sentence(advice));
    view! {
        <h2 id="moves-h">"Recommended steps"</h2>
        <p class="empty lead" data-testid="moves-empty">{why_none}</p>
        <p class="distance" data-testid="bound">{bound}</p>
    }
    .into_any()
}

#[component]
fn Moves(shown: Arc<Shown>, now: Signal<String>) -> impl IntoView {
    let (recommended, weak) = cards(&shown);
    let advice = &shown.advice;
    if recommended.is_empty() {
        return no_steps(advice, weak.len());
    }
    let n_steps = recommended.len();
    let n_moves: usize = recommended.iter().map(|c| c.members.len()).sum();
    let summary = summary_sentence(advice, &shown.money, n_steps, n_moves);
    let totals = totals_sentence(advice);
    let money_note = format!(
        "Transfer {} \u{2192} {} at the policy's prices (730-hour month): a reading, not part of the points.",
        dollars_month(shown.money.before.usd_month),
        dollars_month(shown.money.after.usd_month)
    );
    let distance = distance_words(distance_sentence(advice));
    let identities: Vec<String> = recommended.iter().map(|c| c.identity.clone()).collect();
    let filter = MoveFilter::new();
    let (clusters, sites, owners) = options(&recommended);
    // Gain bars share one scale: the largest gain in the list.
    let scale = recommended
        .iter()
        .map(|c| c.gain)
        .fold(0.0f64, |a, g| a.max(g.abs()));
    let reviews = expect_context::<Reviews>();
    // The workloads the estate names, for the manifests' reason.
    let has_workload: Vec<(String, bool)> = client::loaded_now()
        .map(|l| {
            l.estate
                .services
                .iter()
                .map(|s| (s.id.clone(), s.workload_ref().is_some()))
                .collect()
        })
        .unwrap_or_default();
    // What the list shows: passing the filter and not hidden by a decision
    // (unless the page is showing those). The actions take exactly these.
    let all = Arc::new(recommended.clone());
    let visible = {
        let all = all.clone();
        Memo::new(move |_| {
            let showing_hidden = reviews.show_hidden.get();
            all.iter()
                .enumerate()
                .filter(|(_, c)| {
                    (showing_hidden || reviews.state(&c.identity) != Some(ReviewState::Hidden))
                        && c.passes(&filter)
                })
                .map(|(i, _)| i)
                .collect::<Vec<usize>>()
        })
    };
    let total = {
        let all = all.clone();
        Signal::derive(move || {
            let showing_hidden = reviews.show_hidden.get();
            all.iter()
                .filter(|c| {
                    showing_hidden || reviews.state(&c.identity) != Some(ReviewState::Hidden)
                })
                .count()
        })
    };
    let count = Signal::derive(move || visible.get().len());
    let filtered = {
        let all = all.clone();
        Signal::derive(move || visible.get().len() != all.len())
    };
    let chosen = {
        let all = all.clone();
        Signal::derive(move || {
            visible
                .get()
                .iter()
                .flat_map(|&i| {
                    all[i]
                        .members
                        .iter()
                        .map(|(m, _, _)| (m.service.clone(), m.to.clone()))
                })
                .collect::<Vec<_>>()
        })
    };
    let no_workload = Signal::derive(move || {
        chosen
            .get()
            .into_iter()
            .map(|(s, _)| s)
            .filter(|s| has_workload.iter().any(|(id, w)| id == s && !w))
            .collect::<Vec<String>>()
    });
    let rows = recommended
        .into_iter()
        .map(|c| card_view(c, Some(filter), scale))
        .collect_view();
    view! {
        <h2 id="moves-h">"Recommended steps"</h2>
        <p class="lead" data-testid="summary">{summary}" "{point_definition()}</p>
        <p class="lead-detail" data-testid="headline">{totals}" "<span data-testid="money-note">{money_note}</span></p>
        <p class="distance" data-testid="bound">{distance}</p>
        {hidden_line(identities)}
        <FilterBar filter clusters sites owners count total/>
        <Actions now=now chosen=chosen count=count filtered=filtered no_workload=no_workload/>
        {move || (count.get() == 0).then(|| view! {
            <p class="empty" data-testid="filter-empty">
                "No step matches these filters. "
                <button type="button" class="small" on:click=move |_| filter.clear()>"Clear filters"</button>
            </p>
        })}
        <ol class="moves cards" data-testid="moves">{rows}</ol>
    }
    .into_any()
}

#[cfg(test)]
mod tests {
    use super::*;
    use berth_engine::bound::Bound;
    use berth_engine::why::{Effect, FlipStatus, Threshold};

    #[test]
    fn the_distance_from_the_best_names_the_bound_as_a_bound() {
        let text = include_str!("../../../examples/estates/sample.json");
        let e = berth_engine::load(text, berth_engine::Format::Json).expect("the sample loads");
        let now = berth_engine::estate::parse_time("2026-11-30T04:05:00Z").unwrap();
        let mut advice = berth_engine::advise(&e, &berth_engine::Policy::default(), now);
        advice.bound = Bound {
            cost_at_least: 812.46,
            improvement_at_most: 40.0,
            captured_at_least: Some(0.7519),
        };
        // 40 points could be saved at most; 75.19 % of it is captured, so
        // at most 9.93 (rounded up: 10.0) more.
        assert_eq!(
            distance_sentence(&advice),
            "Distance from the best possible: no placement could save more than 10.0 points beyond these steps, so they capture at least 75.1 % of the saving that can exist — a proven bound (no placement costs under 812.4), not a placement Berth found."
        );
    }

    #[test]
    fn the_proven_gap_reads_as_a_share_left_rounded_up() {
        let mut p = berth_api::AdviceProof {
            estate_version: 3,
            evaluated_at: "2026-12-07T14:05:00Z".into(),
            computed_at: "2026-12-07T14:05:09Z".into(),
            max_moves: 40,
            cost_before: 1687.45,
            advice_cost: 1050.84,
            optimum_cost: 975.23,
            missed: 0.10617,
            solve_ms: 9233,
        };
        assert_eq!(
            proven_sentence(&p),
            "Distance from the best possible: within 10.7 % of the best possible within 40 moves (proven by the server's solver for version 3, advice of 2026-12-07 14:05:00 UTC, in 9.2 s)."
        );
        p.missed = 0.0;
        assert!(proven_sentence(&p).starts_with(
            "Distance from the best possible: none. These steps are the best possible within 40 moves"
        ));
    }

    #[test]
    fn a_waterfall_steps_from_zero_to_the_gain() {
        let terms = vec![
            ("round_trip".to_string(), 12.0),
            ("cross_site".to_string(), 3.5),
            ("headroom".to_string(), -2.0),
            ("copy".to_string(), -0.5),
        ];
        let steps = waterfall_steps(&terms);
        assert_eq!(steps[0], ("round_trip".to_string(), 0.0, 12.0));
        assert_eq!(steps[2], ("headroom".to_string(), 15.5, 13.5));
        assert_eq!(steps[3].2, 13.0, "the last step ends at the gain");
        assert!(waterfall_steps(&[]).is_empty());
    }

    fn flip(fact: &str, value: f64, above: Option<f64>, below: Option<f64>) -> Flip {
        let threshold = |v: Option<f64>| {
            v.map(|value| Threshold {
                value,
                effect: Effect::NoGain,
                sentence: String::new(),
            })
        };
        Flip {
            fact: fact.into(),
            stored_as: None,
            derivation: None,
            estimated: false,
            applies_to: None,
            value: Some(value),
            class: Class::Measured,
            unit: "ms",
            status: FlipStatus::Exact,
            above: threshold(above),
            below: threshold(below),
            sentences: Vec::new(),
            id: None,
        }
    }

    #[test]
    fn flips_are_ranked_nearest_first_and_the_quiet_ones_set_apart() {
        let flips = [
            flip("c-dub-1 cpu_free", 44.0, None, Some(16.84)),
            flip("flow a→b weight", 0.4, Some(5.47), None),
            flip("flow a→c mb_s", 35.0, Some(43.9), Some(30.0)),
            flip("rtt c1↔c1", 0.3, None, None),
        ];
        let (ranked, quiet) = rank_flips(flips.iter().collect());
        let order: Vec<&str> = ranked.iter().map(|(_, f)| f.fact.as_str()).collect();
        assert_eq!(
            order,
            ["flow a→c mb_s", "c-dub-1 cpu_free", "flow a→b weight"]
        );
        assert!((ranked[0].0 - 5.0 / 35.0).abs() < 1e-12);
        assert_eq!(quiet.len(), 1);
        assert_eq!(margin_words(0.142857), "14 % away");
        assert_eq!(margin_words(0.004), "under 1 % away");
    }
}
