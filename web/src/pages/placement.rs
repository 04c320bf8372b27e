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

/// One step of the advice as a card: a move, or every member of a
/// compound step (`berth_engine::text::steps`, the numbering the text
/// output, the plan exports and the notifications use).
#[derive(Clone)]
struct Card {
    /// 1, 2, … among the recommendations; `None` for a step resting on
    /// guesses (listed apart, never numbered).
    number: Option<usize>,
    title: String,
    /// The members, in the order they are applied, each with its Why
    /// (once computed) and what the filter reads of it.
    members: Vec<(Move, Option<MoveWhy>, MoveContext)>,
    gain: f64,
    /// Cross-site MB/s and US$ a month the step saves (its moves' sum).
    saving: Saving,
    confidence: Class,
    /// The review identity (a compound step's members joined).
    identity: String,
}

impl Card {
    fn first(&self) -> &Move {
        &self.members[0].0
    }

    /// A step passes the filter when any of its moves does, read at the
    /// step's confidence.
    fn passes(&self, f: &MoveFilter) -> bool {
        self.members
            .iter()
            .any(|(m, _, cx)| f.passes(m, cx, self.confidence))
    }

    /// Every cluster the step leaves or joins, space-separated.
    fn clusters(&self) -> String {
        let mut c: Vec<&str> = self
            .members
            .iter()
            .flat_map(|(m, _, _)| [m.from.as_str(), m.to.as_str()])
            .collect();
        c.sort_unstable();
        c.dedup();
        c.join(" ")
    }
}

/// The advice's steps as cards: the recommendations, then the steps
/// resting on guesses.
fn cards(shown: &Shown) -> (Vec<Card>, Vec<Card>) {
    let moves = &shown.advice.moves;
    let (mut rec, mut weak) = (Vec::new(), Vec::new());
    for s in berth_engine::text::steps(moves) {
        let first = s.moves[0];
        let card = Card {
            number: s.number,
            title: berth_engine::text::step_title(moves, &s),
            members: s
                .moves
                .iter()
                .map(|&i| (moves[i].clone(), shown.why(i), MoveContext::of(&moves[i])))
                .collect(),
            gain: s.gain,
            saving: shown.money.of_moves(&s.moves),
            confidence: s.confidence,
            identity: identity(moves, first),
        };
        if card.number.is_some() {
            rec.push(card);
        } else {
            weak.push(card);
        }
    }
    (rec, weak)
}

/// The terms of a step (a compound step's members summed), as the
/// waterfall draws them.
fn card_terms(card: &Card) -> Vec<(String, f64)> {
    let mut out: Vec<(String, f64)> = Vec::new();
    for (m, _, _) in &card.members {
        for (term, v) in m.terms.iter() {
            let id = term.id().to_string();
            match out.iter_mut().find(|(t, _)| *t == id) {
                Some(slot) => slot.1 += v,
                None => out.push((id, v)),
            }
        }
    }
    out
}

/// One card: its number, what it does, its gain (a saving is positive
/// and drawn good, a cost negative and drawn bad), the gain bar on the
/// list's scale and the terms as a waterfall; a compound step lists its
/// members with where each goes and why each alone would not pay. Then
/// the review, the Why and the links. A step a decision hides, or the
/// filter leaves out, is not displayed.
fn card_view(card: Card, filter: Option<MoveFilter>, scale: f64) -> impl IntoView {
    let reviews = expect_context::<Reviews>();
    let auth = expect_context::<Auth>();
    let first = card.first().clone();
    let service = first.service.clone();
    let to = first.to.clone();
    let class = card.confidence.as_str();
    let id_state = card.identity.clone();
    let state = Signal::derive(move || reviews.state(&id_state));
    let grouped = card.members.len() > 1;
    let names: Vec<String> = card
        .members
        .iter()
        .map(|(m, _, _)| m.service.clone())
        .collect();
    // Each Why names its step: a screen reader's list of controls is
    // otherwise a column of identical "Why"s.
    let why_label = if grouped {
        format!(
            "Why move {} together",
            berth_engine::text::and_list(&names.iter().map(String::as_str).collect::<Vec<_>>())
        )
    } else {
        format!("Why move {service} to {to}")
    };
    let review_label = format!("{service} to {to}");
    let why_for_review = card.members[0].1.clone();
    let whys: Vec<(String, Option<MoveWhy>)> = card
        .members
        .iter()
        .map(|(m, w, _)| (m.service.clone(), w.clone()))
        .collect();
    let why_open = RwSignal::new(false);
    let service_for_link = service.clone();
    let service_for_graph = service.clone();
    let graph_href = move || {
        let link = crate::common::service_link(
            "/estate",
            auth.estate.get().as_deref(),
            client::query_param("now").as_deref(),
            &service_for_graph,
        );
        format!("{link}#g-h")
    };
    let place_href = move || {
        crate::common::service_link(
            "/place",
            auth.estate.get().as_deref(),
            client::query_param("now").as_deref(),
            &service_for_link,
        )
    };
    let for_filter = card.clone();
    let shown = move || {
        let by_review = state.get() != Some(ReviewState::Hidden) || reviews.show_hidden.get();
        by_review && filter.as_ref().is_none_or(|f| for_filter.passes(f))
    };
    let gain = card.gain;
    let terms = card_terms(&card);
    let gain_class = if gain >= 0.0 { "gain good" } else { "gain bad" };
    let head = if grouped {
        view! { <span class="step-title">{format!("{}: ", card.title)}</span> }.into_any()
    } else {
        view! {
            <span class="step-title"><strong>{service.clone()}</strong>" "<code>{first.from.clone()}</code>" → "<code>{to.clone()}</code></span>
        }
        .into_any()
    };
    let group = first.group.clone();
    let members = grouped.then(|| {
        let alone = group.as_ref().map(|g| g.alone.clone()).unwrap_or_default();
        let items = card
            .members
            .iter()
            .map(|(m, _, _)| {
                let why_not = alone
                    .iter()
                    .find(|a| a.service == m.service)
                    .and_then(berth_engine::text::alone_words)
                    .map(|w| format!(" — {w}"))
                    .unwrap_or_default();
                view! {
                    <li data-member=m.service.clone()><strong>{m.service.clone()}</strong>" "<code>{m.from.clone()}</code>" → "<code>{m.to.clone()}</code>{why_not}</li>
                }
            })
            .collect_view();
        let summary = group.as_ref().map(|g| g.summary.clone()).unwrap_or_default();
        view! {
            <ul class="members" data-testid="members">{items}</ul>
            <details class="group-step" data-testid="group-step" data-services=names.join(" ")>
                <summary>"Why together"</summary>
                <p>{summary}</p>
            </details>
        }
    });
    view! {
        <li class="move card" data-service=service.clone() data-identity=card.identity.clone()
            data-step=card.number.map(|n| n.to_string()).unwrap_or_default()
            data-clusters=card.clusters()
            data-services=names.join(" ")
            data-moves=card.members.len().to_string()
            data-gain=format!("{gain:.3}")
            data-review=move || state.get().map_or("", ReviewState::as_str)
            style:display=move || if shown() { "" } else { "none" }>
            <div class="move-head">
                {card.number.map(|n| view! { <span class="step-no" aria-label=format!("step {n}")>{n}</span> })}
                {head}
                <span class=gain_class>{format!("{} points", signed(gain, 1))}</span>
                <span class="money" data-testid="step-money" title="cross-site traffic this step cuts (+) or adds (−), and its transfer at the policy's prices a month: a reading, not part of the points">{money_words(&card.saving)}</span>
                <span class=format!("badge conf-{class}") title="the weakest fact deciding this step">{class}</span>
            </div>
            <div class="move-figures">
                <GainBar gain=gain scale=scale/>
                <Waterfall terms=terms gain=gain/>
            </div>
            {first.evidence.clone().map(|e| view! { <p class="evidence">{e}</p> })}
            {members}
            <ReviewLine identity=card.identity.clone() why=why_for_review label=review_label/>
            // The panel is built when first opened: forty closed panels of
            // facts, terms and flip conditions were most of a large
            // estate's page (26,000 of 27,000 elements at 1,000 services).
            <details class="why" on:toggle=move |_| why_open.set(true)>
                <summary aria-label=why_label>"Why"</summary>
                {move || why_open.get().then(|| {
                    let many = whys.len() > 1;
                    whys.iter().map(|(s, w)| {
                        let w = w.clone();
                        view! {
                            {many.then(|| view! { <h3 class="member-why">{s.clone()}</h3> })}
                            {w.map(|why| view! { <WhyPanel why=why/> })}
                        }
                    }).collect_view()
                })}
            </details>
            <p class="card-links">
                <a class="place-link" href=place_href>{format!("Where else could {service} go?")}</a>
                " · "
                <a class="place-link" href=graph_href>{format!("Show {service} on the graph")}</a>
            </p>
        </li>
    }
}

/// The move's gain as a bar, on the scale of the largest gain in its list,
/// so the list reads as a ranking at a glance.
#[component]
fn GainBar(gain: f64, scale: f64) -> impl IntoView {
    let share = if scale > 0.0 {
        (gain.abs() / scale).clamp(0.0, 1.0)
    } else {
        0.0
    };
    view! {
        <span class=if gain < 0.0 { "gain-bar bad" } else { "gain-bar good" } role="img" aria-label=format!("gain {} points, {:.0} % of the largest in the list", signed(gain, 1), share * 100.0)
            data-share=format!("{share:.3}")>
            <span style=format!("width:{:.1}%", share * 100.0)></span>
        </span>
    }
}

/// Where one term's step of a waterfall starts and ends, from the sum of
/// the terms before it: `(term, start, end)` in points.
pub fn waterfall_steps(terms: &[(String, f64)]) -> Vec<(String, f64, f64)> {
    let mut at = 0.0;
    terms
        .iter()
        .map(|(id, p)| {
            let start = at;
            at += p;
            (id.clone(), start, at)
        })
        .collect()
}

/// The move's terms as a small waterfall: each term a step up (it
/// favours the move) or down from the running sum, the last step ending
/// at the gain. Terms of zero are left out of the drawing, not the label.
#[component]
fn Waterfall(terms: Vec<(String, f64)>, gain: f64) -> impl IntoView {
    let steps = waterfall_steps(&terms);
    let lo = steps.iter().map(|s| s.1.min(s.2)).fold(0.0f64, f64::min);
    let hi = steps.iter().map(|s| s.1.max(s.2)).fold(0.0f64, f64::max);
    let span = (hi - lo).max(1e-9);
    // A column of 26 px per term with 6 px gaps; 28 px tall with 2 px
    // margins: small enough to sit on the move's line.
    let (w, h) = (26.0, 24.0);
    let width = (terms.len().max(1) as f64) * (w + 6.0) - 6.0;
    let y = move |v: f64| 2.0 + (hi - v) / span * h;
    let words = terms
        .iter()
        .map(|(id, p)| {
            let label = Term::from_id(id).map_or(id.clone(), |t| t.label().to_string());
            format!("{label} {}", signed(*p, 1))
        })
        .collect::<Vec<_>>()
        .join(", ");
    let bars = steps
        .into_iter()
        .enumerate()
        .filter(|(_, (_, a, b))| (a - b).abs() > 1e-9)
        .map(|(i, (id, a, b))| {
            let (top, bottom) = (y(a.max(b)), y(a.min(b)));
            let class = if b >= a { "wf-up" } else { "wf-down" };
            view! { <rect x=i as f64 * (w + 6.0) y=top width=w height=(bottom - top).max(0.8) class=class data-term=id/> }
        })
        .collect_view();
    view! {
        <svg class="waterfall" viewBox=format!("0 0 {width} 28") width=width height="28" role="img"
            aria-label=format!("terms: {words}; gain {}", signed(gain, 1))>
            <line x1="0" x2=width y1=y(0.0) y2=y(0.0) class="wf-zero"/>
            {bars}
        </svg>
    }
}

/// "2 recommendations are hidden by decisions — show them", when any is.
fn hidden_line(identities: Vec<String>) -> impl IntoView {
    let reviews = expect_context::<Reviews>();
    move || {
        let n = reviews.hidden_count(&identities);
        (n > 0).then(|| {
            let showing = reviews.show_hidden.get();
            view! {
                <p class="hidden-line" data-testid="hidden-line">
                    {format!(
                        "{n} recommendation{} {} dismissed or snoozed{}. ",
                        if n == 1 { "" } else { "s" },
                        if n == 1 { "is" } else { "are" },
                        if showing { " (shown below, marked)" } else { " and hidden" }
                    )}
                    <button type="button" class="small" data-testid="show-hidden" on:click=move |_| reviews.show_hidden.update(|v| *v = !*v)>
                        {if showing { "Hide them" } else { "Show them" }}
                    </button>
                </p>
            }
        })
    }
}

/// What the list of recommendations is narrowed to: a search over
/// service, clusters and owner, a cluster (left or joined), and a least
/// confidence. Moves left out stay in the advice (and in "take into a
/// what-if"); only the list hides them.
#[derive(Clone, Copy)]
struct MoveFilter {
    query: RwSignal<String>,
    cluster: RwSignal<String>,
    site: RwSignal<String>,
    owner: RwSignal<String>,
    confidence: RwSignal<String>,
}

/// What the filter reads of a move beyond the move itself: its service's
/// owner and the sites it leaves and joins (from the estate document).
#[derive(Clone, Debug, Default)]
struct MoveContext {
    owner: String,
    from_site: String,
    to_site: String,
}

impl MoveContext {
    fn of(m: &Move) -> MoveContext {
        let Some(l) = client::loaded_now() else {
            return MoveContext::default();
        };
        let e = &l.estate;
        let site = |cluster: &str| {
            e.cluster_index(cluster)
                .map(|c| e.sites[e.clusters[c].site].id.clone())
                .unwrap_or_default()
        };
        MoveContext {
            owner: e
                .service_index(&m.service)
                .map(|i| e.services[i].owner.clone())
                .unwrap_or_default(),
            from_site: site(&m.from),
            to_site: site(&m.to),
        }
    }
}

/// Confidence classes from strongest to weakest, as the filter offers them.
const CLASSES: [Class; 4] = [
    Class::Measured,
    Class::Reported,
    Class::Inferred,
    Class::Guessed,
];

impl MoveFilter {
    fn new() -> MoveFilter {
        MoveFilter {
            query: RwSignal::new(String::new()),
            cluster: RwSignal::new(String::new()),
            site: RwSignal::new(String::new()),
            owner: RwSignal::new(String::new()),
            confidence: RwSignal::new(String::new()),
        }
    }

    /// Does the move (with its owner and sites) pass, read at confidence
    /// `confidence` (a compound step's is the group's, the weakest of its
    /// members')?
    fn passes(&self, m: &Move, cx: &MoveContext, confidence: Class) -> bool {
        let owner = cx.owner.as_str();
        let q = self.query.get().trim().to_lowercase();
        let text_ok = q.is_empty()
            || [m.service.as_str(), m.from.as_str(), m.to.as_str(), owner]
                .iter()
                .any(|t| t.to_lowercase().contains(&q));
        let c = self.cluster.get();
        let cluster_ok = c.is_empty() || m.from == c || m.to == c;
        let least = self.confidence.get();
        // Classes order from strongest to weakest; "at least reported"
        // keeps measured and reported.
        let conf_ok = least.is_empty()
            || CLASSES
                .iter()
                .find(|k| k.as_str() == least)
                .is_none_or(|least| confidence <= *least);
        let site = self.site.get();
        let site_ok = site.is_empty() || cx.from_site == site || cx.to_site == site;
        let who = self.owner.get();
        let owner_ok = who.is_empty() || owner == who;
        text_ok && cluster_ok && conf_ok && site_ok && owner_ok
    }
}

/// A recommendation's identity, as decisions about it are stored
/// (`service|from|to`, a compound step's members joined).
fn identity(moves: &[Move], i: usize) -> String {
    berth_engine::review::identity(moves, i)
}

/// "1 point = 1 ms of round trip on a connection in constant use", one
/// click away from every sentence that counts points.
fn point_definition() -> impl IntoView {
    view! {
        <details class="point-def" data-testid="point-def">
            <summary>"What is a point?"</summary>
            <span>"1 point = 1 ms of round trip on a connection in constant use. Round-trip points are milliseconds of waiting times how busy each connection is; cross-site traffic is counted in points too (8 per MB/s by default), and so is a cluster filled past 80 %. A saving is positive, a cost negative (docs/advice.md §1)."</span>
        </details>
    }
}

/// A step's cross-site traffic and money, signed as gains are (a saving
/// positive): "+2.1 MB/s · +$110/month".
fn money_words(s: &Saving) -> String {
    let sign = |x: f64| if x < 0.0 { "\u{2212}" } else { "+" };
    format!(
        "{}{:.1} MB/s \u{b7} {}{}",
        sign(s.cross_site_mb_s),
        s.cross_site_mb_s.abs(),
        sign(s.usd_month),
        dollars_month(s.usd_month)
    )
}

/// The one sentence that answers the page's question: how many steps,
/// what they save in points (positive: a saving), in MB/s of cross-site
/// traffic and in dollars a month of transfer.
fn summary_sentence(advice: &Advice, money: &Money, steps: usize, moves: usize) -> String {
    let before = &advice.totals_before;
    let after = &advice.totals_after;
    let saved = before.cost - after.cost;
    let mb = before.cross_site_mb_s - after.cross_site_mb_s;
    let traffic = if mb >= 0.0 {
        format!("cut cross-site traffic by {:.1} MB/s", mb)
    } else {
        format!("add {:.1} MB/s of cross-site traffic", -mb)
    };
    let usd = money.saving().usd_month;
    let dollars = if usd >= 0.0 {
        format!("save {} in transfer", dollars_month(usd))
    } else {
        format!("add {} of transfer", dollars_month(usd))
    };
    format!(
        "{steps} recommended step{} ({moves} move{}) {} {} point{}, {traffic} and {dollars}.",
        if steps == 1 { "" } else { "s" },
        if moves == 1 { "" } else { "s" },
        if saved >= 0.0 { "save" } else { "cost" },
        fixed(Some(saved.abs()), 1),
        if (saved.abs() - 1.0).abs() < 0.05 {
            ""
        } else {
            "s"
        },
    )
}

/// The estate's cost before and after, and the saving by term, signed as
/// gains are (a saving positive).
fn totals_sentence(advice: &Advice) -> String {
    let b = &advice.totals_before;
    let a = &advice.totals_after;
    format!(
        "Estate cost {} → {} points: round trip {}, cross-site {}, headroom {}. Cross-site traffic {} → {} MB/s.",
        fixed(Some(b.cost), 1),
        fixed(Some(a.cost), 1),
        signed(b.round_trip - a.round_trip, 1),
        signed(b.cross_site - a.cross_site, 1),
        signed(b.headroom - a.headroom, 1),
        fixed(Some(b.cross_site_mb_s), 1),
        fixed(Some(a.cross_site_mb_s), 1),
    )
}

/// How far the advice is from the best possible, in plain words: the
/// proven bound (`bound.rs`), named as a bound — a floor no placement
/// goes below, not a placement Berth found. Rounded so the words stay
/// true: what could still be saved up, the share captured down.
pub fn distance_sentence(advice: &Advice) -> String {
    let b = &advice.bound;
    let up = |x: f64| (x * 10.0).ceil() / 10.0;
    let down = |x: f64| (x * 10.0).floor() / 10.0;
    match b.captured_at_least {
        Some(share) => {
            let rest = (b.improvement_at_most * (1.0 - share)).max(0.0);
            format!(
                "Distance from the best possible: no placement could save more than {:.1} points beyond these steps, so they capture at least {:.1} % of the saving that can exist — a proven bound (no placement costs under {:.1}), not a placement Berth found.",
                up(rest),
                down(share * 100.0),
                down(b.cost_at_least)
            )
        }
        None => format!(
            "Distance from the best possible: none. No placement can improve on this one (a proven bound: none costs less than {:.1} points).",
            down(b.cost_at_least)
        ),
    }
}

/// The server's proof of the optimum for the estate version on show, when
/// it has one (`Placement` provides it).
#[derive(Clone, Copy)]
pub struct ProvenGap(pub RwSignal<Option<berth_api::AdviceProof>>);

/// How far the advice is from the best possible by the server's proof
/// (docs/advice.md §6b): the share of the best possible saving the steps
/// leave, rounded up so the words stay true, with the proof's version,
/// time and solve time. The proof is of the advice the server's driver
/// made at `evaluated_at`, which the page names.
pub fn proven_sentence(p: &berth_api::AdviceProof) -> String {
    let up = |x: f64| (x * 10.0).ceil() / 10.0;
    let when = p.evaluated_at.replace('T', " ").replace('Z', " UTC");
    let whose = format!(
        "proven by the server's solver for version {}, advice of {when}, in {:.1} s",
        p.estate_version,
        p.solve_ms as f64 / 1000.0
    );
    if p.missed <= 0.0 {
        format!(
            "Distance from the best possible: none. These steps are the best possible within {} moves ({whose}).",
            p.max_moves
        )
    } else {
        format!(
            "Distance from the best possible: within {:.1} % of the best possible within {} moves ({whose}).",
            up(p.missed * 100.0),
            p.max_moves
        )
    }
}

/// The distance line, live: the server's proof once it is known, else
/// `bound` (the engine's bound, named as one).
fn distance_words(bound: String) -> impl Fn() -> String + Send + Sync + 'static {
    let gap = use_context::<ProvenGap>();
    move || match gap.and_then(|g| g.0.get()) {
        Some(p) => proven_sentence(&p),
        None => bound.clone(),
    }
}

#[component]
fn Moves(shown: Arc<Shown>, now: Signal<String>) -> impl IntoView {
    let (recommended, weak) = cards(&shown);
    let advice = &shown.advice;
    if recommended.is_empty() {
        // Say what stopped it: guesses, unknowns, or nothing to gain.
        let why_none = if !weak.is_empty() {
            format!(
                "No move is recommended: {} possible step{} rest{} on guesses (below). Measure the facts they name to decide.",
                weak.len(),
                if weak.len() == 1 { "" } else { "s" },
                if weak.len() == 1 { "s" } else { "" }
            )
        } else if !advice.unknown_requests.is_empty()
            || !advice.cant_tell.is_empty()
            || !advice.unknown_capacity.is_empty()
        {
            "No move is worth making with what is known: some services or clusters lack the facts to tell (below).".to_string()
        } else {
            "No move is worth making: every service is where it should be, or no move clears the bars.".to_string()
        };
        let bound = distance_words(distance_sentence(advice));
        return view! {
            <h2 id="moves-h">"Recommended steps"</h2>
            <p class="empty lead" data-testid="moves-empty">{why_none}</p>
            <p class="distance" data-testid="bound">{bound}</p>
        }
        .into_any();
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
    let mut clusters: Vec<String> = recommended
        .iter()
        .flat_map(|c| {
            c.members
                .iter()
                .flat_map(|(m, _, _)| [m.from.clone(), m.to.clone()])
        })
        .collect();
    clusters.sort();
    clusters.dedup();
    let mut sites: Vec<String> = recommended
        .iter()
        .flat_map(|c| {
            c.members
                .iter()
                .flat_map(|(_, _, cx)| [cx.from_site.clone(), cx.to_site.clone()])
        })
        .filter(|x| !x.is_empty())
        .collect();
    sites.sort();
    sites.dedup();
    let mut owners: Vec<String> = recommended
        .iter()
        .flat_map(|c| c.members.iter().map(|(_, _, cx)| cx.owner.clone()))
        .filter(|x| !x.is_empty())
        .collect();
    owners.sort();
    owners.dedup();
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
        move || {
            let showing_hidden = reviews.show_hidden.get();
            all.iter()
                .filter(|c| {
                    showing_hidden || reviews.state(&c.identity) != Some(ReviewState::Hidden)
                })
                .count()
        }
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
    let clear = move |_| {
        filter.query.set(String::new());
        filter.cluster.set(String::new());
        filter.site.set(String::new());
        filter.owner.set(String::new());
        filter.confidence.set(String::new());
    };
    let any_filter = move || {
        !(filter.query.get().is_empty()
            && filter.cluster.get().is_empty()
            && filter.site.get().is_empty()
            && filter.owner.get().is_empty()
            && filter.confidence.get().is_empty())
    };
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
        <div class="move-filter" role="search" aria-label="Narrow the recommendations">
            <label for="mf-q">"Search"</label>
            <input id="mf-q" type="search" placeholder="service, cluster or owner" bind:value=filter.query/>
            <label for="mf-cluster">"Cluster"</label>
            <select id="mf-cluster" on:change=move |ev| filter.cluster.set(event_target_value(&ev)) prop:value=move || filter.cluster.get()>
                <option value="">"any"</option>
                {clusters.into_iter().map(|c| view! { <option value=c.clone()>{c.clone()}</option> }).collect_view()}
            </select>
            <label for="mf-site">"Site"</label>
            <select id="mf-site" on:change=move |ev| filter.site.set(event_target_value(&ev)) prop:value=move || filter.site.get()>
                <option value="">"any"</option>
                {sites.into_iter().map(|c| view! { <option value=c.clone()>{c.clone()}</option> }).collect_view()}
            </select>
            <label for="mf-owner">"Owner"</label>
            <select id="mf-owner" on:change=move |ev| filter.owner.set(event_target_value(&ev)) prop:value=move || filter.owner.get()>
                <option value="">"any"</option>
                {owners.into_iter().map(|c| view! { <option value=c.clone()>{c.clone()}</option> }).collect_view()}
            </select>
            <label for="mf-conf">"Confidence at least"</label>
            <select id="mf-conf" on:change=move |ev| filter.confidence.set(event_target_value(&ev)) prop:value=move || filter.confidence.get()>
                <option value="">"any"</option>
                {CLASSES.into_iter().map(|c| view! { <option value=c.as_str()>{c.as_str()}</option> }).collect_view()}
            </select>
            <span role="status" data-testid="moves-showing">{move || {
                let (n, total) = (count.get(), total());
                if n == total { format!("All {total} steps shown.") } else { format!("Showing {n} of {total} steps.") }
            }}</span>
            {move || any_filter().then(|| view! { <button type="button" class="small" data-testid="clear-filters" on:click=clear>"Clear filters"</button> })}
        </div>
        <Actions now=now chosen=chosen count=count filtered=filtered no_workload=no_workload/>
        {move || (count.get() == 0).then(|| view! {
            <p class="empty" data-testid="filter-empty">
                "No step matches these filters. "
                <button type="button" class="small" on:click=clear>"Clear filters"</button>
            </p>
        })}
        <ol class="moves cards" data-testid="moves">{rows}</ol>
    }
    .into_any()
}

/// Steps the engine found worth making but cannot back: the weakest
/// deciding fact is a guess. Not numbered with the recommendations, not
/// taken into a what-if nor exported.
#[component]
fn WeakMoves(shown: Arc<Shown>) -> impl IntoView {
    let (_, weak) = cards(&shown);
    if weak.is_empty() {
        return ().into_any();
    }
    let identities: Vec<String> = weak.iter().map(|c| c.identity.clone()).collect();
    let would_add = format!(
        "If the evidence held, these would add {} points; they are not in the estate cost above.",
        fixed(Some(shown.advice.unbacked_gain), 1)
    );
    // The list's own scale: these are not ranked with the recommendations.
    let scale = weak
        .iter()
        .map(|c| c.gain)
        .fold(0.0f64, |a, g| a.max(g.abs()));
    let rows = weak
        .into_iter()
        .map(|c| card_view(c, None, scale))
        .collect_view();
    view! {
        <section aria-labelledby="weak-h">
            <h2 id="weak-h">"Not enough evidence to recommend"</h2>
            <p>"These would gain if the guesses they rest on are right; measure those facts (see each Why) and they become recommendations or drop out. They are not exported nor taken into a what-if."</p>
            <p data-testid="unbacked-gain">{would_add}</p>
            {hidden_line(identities)}
            <ul class="moves cards weak" data-testid="weak-moves">{rows}</ul>
        </section>
    }
    .into_any()
}

/// Services whose CPU or memory request is unknown: the engine never
/// moves them (no fit can be told).
#[component]
fn UnknownRequests(shown: Arc<Shown>) -> impl IntoView {
    let items = shown.advice.unknown_requests.clone();
    if items.is_empty() {
        return ().into_any();
    }
    let render = |u: berth_engine::advise::UnknownRequest| {
        {
            let missing = u
                .missing
                .iter()
                .map(|m| match m.as_str() {
                    "cpu" => "CPU".to_string(),
                    "memory_gib" => "memory".to_string(),
                    other => other.to_string(),
                })
                .collect::<Vec<_>>()
                .join(" or ");
            // The fix, in the words of the manifests it comes from (and
            // of the estate file, for an estate written by hand).
            let fields = u
                .missing
                .iter()
                .map(|m| match m.as_str() {
                    "cpu" => ("resources.requests.cpu", "cpu"),
                    "memory_gib" => ("resources.requests.memory", "memory_gib"),
                    _ => ("resources.requests", "the request"),
                })
                .collect::<Vec<_>>();
            let k8s = fields.iter().map(|f| f.0).collect::<Vec<_>>().join(" and ");
            let file = fields
                .iter()
                .map(|f| f.1.to_string())
                .collect::<Vec<_>>()
                .join(" and ");
            let service = u.service.clone();
            let fix = format!("Fix: add {k8s} to every container of {service}, or set {file} on it in the estate file.");
            view! { <li><strong>{service.clone()}</strong>" on "<code>{u.cluster.clone()}</code>": no "{missing}" request. "<span class="fix">{fix}</span></li> }
        }
    };
    view! {
        <section aria-labelledby="unknown-requests-h">
            <h2 id="unknown-requests-h">"Services never moved: their request is unknown"</h2>
            <p>"Without a CPU and memory request no destination can be told to fit. Set the requests in the manifests (or the estate) to let Berth consider them."</p>
            {super::capped_list(items, render, "unknown-requests", "services")}
        </section>
    }
    .into_any()
}

/// Facts (class, source, age), the term breakdown and the flip conditions
/// of one move.
#[component]
pub fn WhyPanel(why: MoveWhy) -> impl IntoView {
    let terms = why
        .terms
        .iter()
        .map(|t| {
            // The engine's words for the term; its result key when unknown.
            let id = t.term.to_string();
            let label = Term::from_id(&id).map_or(id.clone(), |t| t.label().to_string());
            view! { <tr data-term=id><td>{label}</td><td class="n">{fixed(Some(t.points), 2)}</td></tr> }
        })
        .collect_view();
    let facts = why
        .facts
        .iter()
        .map(|f| {
            // An RTT no stored fact gives is a policy value or an estimate
            // from distance, not a measurement of age 0: say which.
            let derived = match f.derivation {
                Some("same_cluster") => Some(("nominal", "policy value for the same cluster")),
                Some("same_site") => Some(("nominal", "policy value for the same site")),
                Some("unknown") => Some(("nominal", "policy value for an unknown path")),
                Some("great_circle") => {
                    Some(("estimated", "estimated from the distance between sites"))
                }
                _ => None,
            };
            let class = f.class.as_str();
            let (badge, badge_class, source, shown_age) = match derived {
                Some((label, words)) => (
                    label.to_string(),
                    "badge conf-nominal".to_string(),
                    words.to_string(),
                    "—".to_string(),
                ),
                None => (
                    class.to_string(),
                    format!("badge conf-{class}"),
                    f.source.clone(),
                    age(f.age_s),
                ),
            };
            view! {
                <tr data-derived=derived.is_some().to_string()>
                    <td>{f.fact.clone()}</td>
                    <td class="n">{fixed(f.value, 2)}</td>
                    <td><span class=badge_class>{badge}</span></td>
                    <td>{source}</td>
                    <td class="n">{shown_age}</td>
                </tr>
            }
        })
        .collect_view();
    let (ranked, quiet) = rank_flips(why.flips.iter().chain(&why.other_flips).collect());
    let flip_items = ranked
        .into_iter()
        .map(|(margin, f)| {
            let sentences = f.sentences.join(" ");
            let class = f.class.as_str();
            let now = format!("now {} {}", fixed(f.value, 2), f.unit);
            view! {
                <li data-margin=format!("{margin:.6}")>
                    <code>{f.fact.clone()}</code>" "
                    <span class="flip-now">{now}" "<span class=format!("badge conf-{class}")>{class}</span></span>
                    " "<span class="flip-margin">{margin_words(margin)}</span>": "{sentences}
                </li>
            }
        })
        .collect_view();
    let quiet_line = (!quiet.is_empty()).then(|| {
        let names = quiet.iter().map(|f| f.fact.as_str()).collect::<Vec<_>>().join(", ");
        view! {
            <p class="flips-none" data-testid="flips-none">
                {format!("No value of {} fact{} changes this move", quiet.len(), if quiet.len() == 1 { "" } else { "s" })}
                " (or it is a policy value, not a stored fact): "<span class="muted">{names}</span>"."
            </p>
        }
    });
    view! {
        <div class="why-body">
            {why.note.clone().map(|n| view! { <p>{n}</p> })}
            <crate::outcomes::WhyCalibration/>
            <h3>"Flip conditions, nearest first"</h3>
            <ul class="flips" data-testid="flips">{flip_items}</ul>
            {quiet_line}
            <h3>"Terms"</h3>
            <table><thead><tr><th scope="col">"term"</th><th scope="col">"points"</th></tr></thead><tbody>{terms}</tbody></table>
            <h3>"Facts"</h3>
            <table>
                <thead><tr><th scope="col">"fact"</th><th scope="col">"value"</th><th scope="col">"class"</th><th scope="col">"source"</th><th scope="col">"age"</th></tr></thead>
                <tbody>{facts}</tbody>
            </table>
        </div>
    }
}

/// The flip conditions that can change the move, with how far the
/// nearest threshold is from the current value (a share of it: 0.25 is a
/// quarter of the way), nearest first (ties by fact key); and the facts no
/// value of which changes it (or that are policy values), which need no
/// ranking — they are listed in one line.
pub fn rank_flips(flips: Vec<&Flip>) -> (Vec<(f64, &Flip)>, Vec<&Flip>) {
    let mut ranked = Vec::new();
    let mut quiet = Vec::new();
    for f in flips {
        let value = f.value;
        let nearest = [&f.above, &f.below]
            .into_iter()
            .filter_map(|t| t.as_ref().map(|t| t.value))
            .filter_map(|t| {
                let v = value?;
                // A share of the current value; from zero any threshold
                // is all the way (1).
                Some(if v == 0.0 {
                    1.0
                } else {
                    (t - v).abs() / v.abs()
                })
            })
            .fold(None, |m: Option<f64>, d| Some(m.map_or(d, |m| m.min(d))));
        match nearest {
            Some(d) => ranked.push((d, f)),
            None => quiet.push(f),
        }
    }
    ranked.sort_by(|a, b| a.0.total_cmp(&b.0).then_with(|| a.1.fact.cmp(&b.1.fact)));
    (ranked, quiet)
}

/// "12 % away" for a margin of 0.12.
fn margin_words(margin: f64) -> String {
    let pct = margin * 100.0;
    if pct < 1.0 {
        "under 1 % away".into()
    } else {
        format!("{pct:.0} % away")
    }
}

/// The words of a reason a service cannot move, said of one service, as
/// the heading of its group (codes are never shown as such).
pub fn reason_words(code: &str) -> String {
    match code {
        "local_volumes" => "Keeps its data on local volumes".into(),
        "pinned" => "Pinned to its cluster's nodes".into(),
        "jurisdiction" => "Every other cluster is in a jurisdiction it may not use".into(),
        "trust_zone" => "Every other cluster is in another trust zone".into(),
        "tier" => "Every other cluster is of a tier it may not use".into(),
        "cluster_draining" => "Every cluster it could go to is draining".into(),
        "cluster_down" => "Every cluster it could go to is down".into(),
        other => other.replace('_', " "),
    }
}

/// One service a rule keeps in place: `(service, cluster, the rule's words)`.
type Kept = (String, String, String);

/// Services that cannot move, grouped by reason (a service kept in place
/// by two rules is in both groups), each group with its count, its fix
/// where one exists, and its services; every service's own words on
/// hover.
#[component]
fn Immovable(shown: Arc<Shown>) -> impl IntoView {
    let items = shown.advice.immovable.clone();
    if items.is_empty() {
        return ().into_any();
    }
    // By reason code, in the order the codes first appear.
    let mut groups: Vec<(String, Vec<Kept>)> = Vec::new();
    for i in &items {
        for r in &i.reasons {
            let code = r.code.as_str().to_string();
            let entry = (i.service.clone(), i.cluster.clone(), r.message.clone());
            match groups.iter_mut().find(|(c, _)| *c == code) {
                Some((_, list)) => list.push(entry),
                None => groups.push((code, vec![entry])),
            }
        }
    }
    let n = items.len();
    let rows = groups
        .into_iter()
        .map(|(code, list)| {
            let count = list.len();
            let fix = immovable_fix(&code).unwrap_or(
                "This is the estate's own rule (where it may run is decided there): change the service's constraints in the estate if it should be free to move.",
            );
            let services = list
                .into_iter()
                .map(|(service, cluster, message)| {
                    view! { <li title=message><strong>{service}</strong>" on "<code>{cluster}</code></li> }
                })
                .collect_view();
            view! {
                <li class="reason-group" data-code=code.clone() data-count=count>
                    <p><strong>{format!("{} — {count} service{}", reason_words(&code), if count == 1 { "" } else { "s" })}</strong></p>
                    <p class="fix">{fix}</p>
                    <ul class="inline-list">{services}</ul>
                </li>
            }
        })
        .collect_view();
    view! {
        <section aria-labelledby="immovable-h">
            <h2 id="immovable-h">{format!("Services that cannot move ({n})")}</h2>
            <ul class="reason-groups" data-testid="immovable" data-total=n>{rows}</ul>
        </section>
    }
    .into_any()
}

/// What would free a service a rule keeps in place, for the rules that
/// come from how it is deployed (not from policy: jurisdiction, trust zone
/// and tier are the estate's own decisions, and no fix is offered).
pub fn immovable_fix(code: &str) -> Option<&'static str> {
    match code {
        "local_volumes" => Some(
            "Fix, if it should be free to move: keep its data on storage replicated between clusters instead of local volumes, then import it again.",
        ),
        "pinned" => Some(
            "Fix, if it need not stay: remove the nodeSelector or node affinity that ties it to this cluster's nodes, then import it again.",
        ),
        _ => None,
    }
}

/// One entry of "where the fit cannot be told": a cluster of unknown
/// capacity, or a service and a destination.
#[derive(Clone)]
enum Untold {
    Capacity(berth_engine::advise::UnknownCapacity),
    Fit(CantTellEntry),
}

#[component]
fn CantTell(shown: Arc<Shown>) -> impl IntoView {
    let advice = &shown.advice;
    if advice.cant_tell.is_empty() && advice.unknown_capacity.is_empty() {
        return ().into_any();
    }
    // Clusters of unknown capacity first (few, and each explains many
    // of the services after them), then each service and destination.
    let items: Vec<Untold> = advice
        .unknown_capacity
        .iter()
        .cloned()
        .map(Untold::Capacity)
        .chain(advice.cant_tell.iter().cloned().map(Untold::Fit))
        .collect();
    let render = |u: Untold| {
        match u {
        Untold::Capacity(c) => {
            let missing = c.missing.join(", ");
            view! { <li><code>{c.cluster}</code>": capacity unknown, missing "{missing}</li> }.into_any()
        }
        Untold::Fit(c) => view! {
            <li><strong>{c.service}</strong>" → "<code>{c.cluster}</code>
            {format!(" (would gain {} points if it fits): ", fixed(Some(c.gain_if_it_fits), 1))}{c.message}
            " Missing: "<code>{c.fact}</code></li>
        }.into_any(),
    }
    };
    view! {
        <section aria-labelledby="canttell-h">
            <h2 id="canttell-h">"Where the fit cannot be told"</h2>
            {super::capped_list(items, render, "cant-tell", "entries")}
        </section>
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
