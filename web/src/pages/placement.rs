//! Placement: the recommended moves in order, each with its gain, its
//! confidence and a Why panel (facts, terms, flip conditions); services
//! that cannot move; clusters whose fit cannot be told. Computed in the
//! browser by the engine, then checked against the server by digest.

use std::sync::Arc;

use berth_api::ResultEnvelope;
use berth_engine::advise::{CantTell as CantTellEntry, Immovable as ImmovableEntry, Move};
use berth_engine::cost::Term;
use berth_engine::fact::Class;
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
    let scenario = expect_context::<Scenario>();
    let advice = RwSignal::new(None::<Arc<Shown>>);
    let meta = RwSignal::new(None::<SnapshotMeta>);
    let error = RwSignal::new(None::<String>);
    let parity = RwSignal::new(Parity::Pending);
    let computed_ms = RwSignal::new(None::<f64>);
    let why_ms = RwSignal::new(None::<f64>);
    let now_text = RwSignal::new(String::new());
    let reviews = Reviews::new();
    provide_context(reviews);

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
            computed_ms.set(Some(client::perf_ms() - t0));
            advice.set(Some(Arc::new(Shown {
                advice: computed.clone(),
                why: Vec::new(),
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
            })));
            let url = format!(
                "/api/estates/{id}/advice?why=true&now={}",
                engine::format_time(now)
            );
            match client::get_typed::<ResultEnvelope>(&url).await {
                Ok(env) => parity.set(check_parity(&env, &l.meta, &digest)),
                Err(f) => parity.set(Parity::Failed(format!(
                    "Could not ask the server for its advice to compare: {}",
                    f.message
                ))),
            }
        });
    });

    // The router is asked for a navigator when the button is pressed,
    // under this component's owner (kept in the arena, so the handler
    // below is `Copy`). Not a navigator stored up front: that needs a
    // thread-bound arena slot (`new_local`), and the server renders on a
    // multi-threaded runtime, where dropping it from another worker thread
    // panicked ("Dropped SendWrapper<T> variable from a thread different
    // to the one it has been created with") and the page answered nothing.
    let owner = StoredValue::new(Owner::current());
    let take = move |_| {
        if let Some(shown) = advice.get_untracked() {
            // The recommendations only: a move the evidence cannot back is
            // shown apart and left out (it can be added by hand).
            // Nor one a decision hides, unless the page is showing those.
            let moves = &shown.advice.moves;
            let showing = reviews.show_hidden.get_untracked();
            let steps: Vec<Step> = moves
                .iter()
                .enumerate()
                .filter(|(i, m)| {
                    m.evidence.is_none()
                        && (showing || !reviews.hidden_untracked(&identity(moves, *i)))
                })
                .map(|(_, m)| Step::Move {
                    service: m.service.clone(),
                    to: m.to.clone(),
                })
                .collect();
            scenario.steps.set(steps);
            scenario.name.set("recommendations".into());
            let to = crate::common::keep_query(
                "/whatif",
                auth.estate.get_untracked().as_deref(),
                client::query_param("now").as_deref(),
            );
            if let Some(owner) = owner.get_value() {
                let navigate = owner.with(use_navigate);
                navigate(&to, Default::default());
            }
        }
    };

    view! {
        <h1>"Placement"</h1>
        <Gate>
            <ErrorLine message=error.into()/>
            <ErrorLine message=reviews.error.into()/>
            <Provenance meta=meta.into() now=now_text.into() computed_ms=computed_ms.into() why_ms=why_ms.into() parity=parity.into()/>
            {move || match advice.get() {
                None => view! { <p class="loading" role="status">"Computing the advice in your browser…"</p> }.into_any(),
                Some(a) => view! {
                    <Moves shown=a.clone()/>
                    <p>
                        <button type="button" on:click=take disabled=!a.advice.moves.iter().any(|m| m.evidence.is_none())>
                            "Take these moves into a what-if scenario"
                        </button>
                    </p>
                    <PlanExport now=now_text.into()/>
                    <WeakMoves shown=a.clone()/>
                    <Immovable shown=a.clone()/>
                    <UnknownRequests shown=a.clone()/>
                    <CantTell shown=a/>
                }.into_any(),
            }}
            <crate::history::History/>
        </Gate>
    }
}

/// Links that download the change plan of the recommended moves from the
/// server (`GET …/plan`, docs/plans.md), evaluated at the page's time:
/// Markdown for a pull request or a ticket, JSON, and the manifests of
/// Karmada and Open Cluster Management.
#[component]
fn PlanExport(now: Signal<String>) -> impl IntoView {
    let auth = expect_context::<Auth>();
    let href = move |format: &'static str| {
        let id = auth.estate.get().unwrap_or_default();
        format!(
            "/api/estates/{}/plan?format={format}&now={}",
            crate::common::encode(&id),
            crate::common::encode(&now.get())
        )
    };
    let link = move |format: &'static str, label: &'static str| {
        let file = move || {
            berth_engine::plan::Format::parse(format)
                .map(|f| f.file_name(&auth.estate.get().unwrap_or_default()))
                .unwrap_or_default()
        };
        view! {
            <a href=move || href(format) download=file data-testid=format!("plan-{format}")>{label}</a>
        }
    };
    view! {
        <p class="plan-export" data-testid="plan-export">
            "Export the plan of these moves: "
            {link("markdown", "Markdown")}" · "
            {link("json", "JSON")}" · "
            {link("karmada", "Karmada")}" · "
            {link("ocm", "Open Cluster Management")}
            <span class="hint">" (manifests need each moved service's workload in the estate: "<code>"workload"</code>" or a Kubernetes import)"</span>
        </p>
    }
}

/// Which estate version and policy the result was computed from, and the
/// parity check.
#[component]
pub fn Provenance(
    meta: Signal<Option<SnapshotMeta>>,
    now: Signal<String>,
    computed_ms: Signal<Option<f64>>,
    why_ms: Signal<Option<f64>>,
    parity: Signal<Parity>,
) -> impl IntoView {
    view! {
        <div class="provenance" data-testid="provenance" data-parity=move || parity.get().attr()>
            {move || meta.get().map(|m| view! {
                <span>"Estate "<code>{m.estate.clone()}</code>" version "<strong data-testid="version">{m.version}</strong>
                ", policy "<code data-testid="policy-digest">{m.policy_digest.clone()}</code>
                ", evaluated at "<code>{now.get()}</code>
                {computed_ms.get().map(|t| format!(", computed in your browser in {t:.0} ms"))}
                {why_ms.get().map(|t| format!(" (every Why: {t:.0} ms more)"))}"."</span>
            })}
            " "
            {move || match parity.get() {
                Parity::Pending => view! { <span class="parity pending" role="status">"Checking against the server…"</span> }.into_any(),
                Parity::Match => view! { <span class="parity ok" role="status">"✓ matches server"</span> }.into_any(),
                Parity::Mismatch(m) => view! { <span class="parity bad error" role="alert">"✗ differs from the server: "{m}</span> }.into_any(),
                Parity::Failed(m) => view! { <span class="parity bad error" role="alert">"Parity not checked: "{m}</span> }.into_any(),
            }}
        </div>
    }
}

/// A compound step's summary, on its first member: the members move as
/// one step ("Moving cart alone costs 12.4 points; …").
fn group_line(m: &Move) -> Option<impl IntoView> {
    let g = m.group.as_ref()?;
    let names = g.services.clone();
    if g.steps.first() != Some(&m.step) {
        // Named by service: the page numbers its list without the moves
        // resting on guesses, so the engine's step numbers would mislead.
        let first = names.first().cloned().unwrap_or_default();
        return Some(view! { <p class="group-step">{format!("Moves together with {first}, as one step.")}</p> }.into_any());
    }
    Some(
        view! {
            <p class="group-step" data-testid="group-step" data-services=names.join(" ")>
                <strong>{format!("Compound step ({} services): ", names.len())}</strong>
                {g.summary.clone()}
            </p>
        }
        .into_any(),
    )
}

/// One move with its gain, confidence badge, review and Why panel. A
/// move a decision hides (dismissed or snoozed, still holding) is left
/// out of the list until "show" is pressed.
fn move_item(
    m: &Move,
    why: Option<MoveWhy>,
    identity: String,
    filter: Option<(MoveFilter, MoveContext)>,
    scale: f64,
) -> impl IntoView {
    let reviews = expect_context::<Reviews>();
    let class = m.confidence.as_str();
    let service = m.service.clone();
    let to = m.to.clone();
    // Each Why names its move: a screen reader's list of controls is
    // otherwise a column of identical "Why"s.
    let why_label = format!("Why move {service} to {to}");
    // A compound step is reviewed once, on its first member.
    let first_of_step = m
        .group
        .as_ref()
        .is_none_or(|g| g.steps.first() == Some(&m.step));
    let review_label = format!("{service} to {to}");
    let id_state = identity.clone();
    let state = Signal::derive(move || reviews.state(&id_state));
    let why_for_review = why.clone();
    let why_open = RwSignal::new(false);
    let auth = expect_context::<Auth>();
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
    // Only the recommendations' list has a filter (passed in, not a
    // context: a context would reach the sibling lists too).
    let m_for_filter = m.clone();
    let shown = move || {
        let by_review = state.get() != Some(ReviewState::Hidden) || reviews.show_hidden.get();
        by_review
            && filter
                .as_ref()
                .is_none_or(|(f, cx)| f.passes(&m_for_filter, cx))
    };
    let gain = m.gain;
    let terms: Vec<(String, f64)> = why
        .iter()
        .flat_map(|w| &w.terms)
        .map(|t| (t.term.to_string(), t.points))
        .collect();
    view! {
        <li class="move" data-service=service.clone() data-identity=identity.clone() data-review=move || state.get().map_or("", ReviewState::as_str)
            style:display=move || if shown() { "list-item" } else { "none" }>
            <div class="move-head">
                <strong>{service.clone()}</strong>
                " from "<code>{m.from.clone()}</code>" to "<code>{to.clone()}</code>
                <span class="gain">{format!("{} points", signed(m.gain, 1))}</span>
                <span class=format!("badge conf-{class}") title="the weakest fact deciding this move">{class}</span>
            </div>
            <div class="move-figures">
                <GainBar gain=gain scale=scale/>
                <Waterfall terms=terms gain=gain/>
            </div>
            {m.evidence.clone().map(|e| view! { <p class="evidence">{e}</p> })}
            {group_line(m)}
            {first_of_step.then(|| view! { <ReviewLine identity=identity.clone() why=why_for_review label=review_label/> })}
            // The panel is built when first opened: forty closed panels of
            // facts, terms and flip conditions were most of a large
            // estate's page (26,000 of 27,000 elements at 1,000 services).
            <details class="why" on:toggle=move |_| why_open.set(true)>
                <summary aria-label=why_label>"Why"</summary>
                {move || why_open.get().then(|| why.clone().map(|why| view! { <WhyPanel why=why/> }))}
            </details>
            <a class="place-link" href=place_href>{format!("Where else could {service} go?")}</a>
            " · "
            <a class="place-link" href=graph_href>{format!("Show {service} on the graph")}</a>
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
        <span class="gain-bar" role="img" aria-label=format!("gain {} points, {:.0} % of the largest in the list", signed(gain, 1), share * 100.0)
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

/// A move, its Why panel (once computed) and its review identity.
type MoveAndWhy = (Move, Option<MoveWhy>, String);

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

    /// Does the move (with its owner and sites) pass?
    fn passes(&self, m: &Move, cx: &MoveContext) -> bool {
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
                .is_none_or(|least| m.confidence <= *least);
        let site = self.site.get();
        let site_ok = site.is_empty() || cx.from_site == site || cx.to_site == site;
        let who = self.owner.get();
        let owner_ok = who.is_empty() || owner == who;
        text_ok && cluster_ok && conf_ok && site_ok && owner_ok
    }
}

/// The moves and their Why panels, split into the recommendations (the
/// evidence backs them) and the rest; each with its Why.
fn split_moves(shown: &Shown) -> (Vec<MoveAndWhy>, Vec<MoveAndWhy>) {
    let moves = &shown.advice.moves;
    moves
        .iter()
        .enumerate()
        .map(|(i, m)| (m.clone(), shown.why(i), identity(moves, i)))
        .partition(|(m, _, _)| m.evidence.is_none())
}

/// A recommendation's identity, as decisions about it are stored
/// (`service|from|to`, a compound step's members joined).
fn identity(moves: &[Move], i: usize) -> String {
    berth_engine::review::identity(moves, i)
}

#[component]
fn Moves(shown: Arc<Shown>) -> impl IntoView {
    let (recommended, weak) = split_moves(&shown);
    let advice = &shown.advice;
    if recommended.is_empty() {
        // Say what stopped it: guesses, unknowns, or nothing to gain.
        let why_none = if !weak.is_empty() {
            format!(
                "No move is recommended: {} possible move{} rest{} on guesses (below). Measure the facts they name to decide.",
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
        let bound = bound_sentence(advice);
        let bound = view! { <p data-testid="bound">{bound}</p> };
        return view! { <p class="empty" data-testid="moves-empty">{why_none}</p> {bound} }
            .into_any();
    }
    let before = advice.totals_before.cost;
    let after = advice.totals_after.cost;
    let identities: Vec<String> = recommended.iter().map(|(_, _, i)| i.clone()).collect();
    let filter = MoveFilter::new();
    let mut clusters: Vec<String> = recommended
        .iter()
        .flat_map(|(m, _, _)| [m.from.clone(), m.to.clone()])
        .collect();
    clusters.sort();
    clusters.dedup();
    let for_count: Vec<(Move, MoveContext, String)> = recommended
        .iter()
        .map(|(m, _, identity)| (m.clone(), MoveContext::of(m), identity.clone()))
        .collect();
    // Each row filters on the same context, computed once here.
    let contexts: Vec<MoveContext> = for_count.iter().map(|(_, cx, _)| cx.clone()).collect();
    let mut sites: Vec<String> = for_count
        .iter()
        .flat_map(|(_, cx, _)| [cx.from_site.clone(), cx.to_site.clone()])
        .filter(|x| !x.is_empty())
        .collect();
    sites.sort();
    sites.dedup();
    let mut owners: Vec<String> = for_count
        .iter()
        .map(|(_, cx, _)| cx.owner.clone())
        .filter(|x| !x.is_empty())
        .collect();
    owners.sort();
    owners.dedup();
    // Gain bars share one scale: the largest gain in the list.
    let scale = recommended
        .iter()
        .map(|(m, _, _)| m.gain)
        .fold(0.0f64, |a, g| a.max(g.abs()));
    let reviews = expect_context::<Reviews>();
    // What the list shows: passing the filter and not hidden by a decision
    // (unless the page is showing those); the total leaves the hidden out
    // the same way.
    let visible_by_review = move |identity: &str| {
        reviews.state(identity) != Some(ReviewState::Hidden) || reviews.show_hidden.get()
    };
    let showing = move || {
        for_count
            .iter()
            .filter(|(m, o, id)| visible_by_review(id) && filter.passes(m, o))
            .count()
    };
    let ids_for_total = identities.clone();
    let total = move || {
        ids_for_total
            .iter()
            .filter(|id| visible_by_review(id))
            .count()
    };
    let rows = recommended
        .into_iter()
        .zip(contexts)
        .map(|((m, why, identity), cx)| move_item(&m, why, identity, Some((filter, cx)), scale))
        .collect_view();
    view! {
        <section aria-labelledby="moves-h">
            <h2 id="moves-h">"Recommended moves, in order"</h2>
            <p data-testid="headline">{format!("Estate cost {} → {} points with the recommended moves applied (the moves set apart for weak evidence are not counted).", fixed(Some(before), 1), fixed(Some(after), 1))}</p>
            <p data-testid="bound">{bound_sentence(advice)}</p>
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
                    let (n, total) = (showing(), total());
                    if n == total { format!("All {total} shown.") } else { format!("Showing {n} of {total}.") }
                }}</span>
            </div>
            <ol class="moves" data-testid="moves">{rows}</ol>
        </section>
    }
    .into_any()
}

/// The advice's proven bound in the words of `berth advise --format text`.
fn bound_sentence(advice: &Advice) -> String {
    berth_engine::text::bound_line(&advice.bound)
}

/// Moves the engine found worth making but cannot back: the weakest
/// deciding fact is a guess. Not numbered with the recommendations, not
/// taken into a what-if.
#[component]
fn WeakMoves(shown: Arc<Shown>) -> impl IntoView {
    let (_, weak) = split_moves(&shown);
    if weak.is_empty() {
        return ().into_any();
    }
    let identities: Vec<String> = weak.iter().map(|(_, _, i)| i.clone()).collect();
    let would_add = format!(
        "If the evidence held, these would add {} points; they are not in the estate cost above.",
        fixed(Some(shown.advice.unbacked_gain), 1)
    );
    // The list's own scale: these are not ranked with the recommendations.
    let scale = weak
        .iter()
        .map(|(m, _, _)| m.gain)
        .fold(0.0f64, |a, g| a.max(g.abs()));
    let rows = weak
        .into_iter()
        .map(|(m, why, identity)| move_item(&m, why, identity, None, scale))
        .collect_view();
    view! {
        <section aria-labelledby="weak-h">
            <h2 id="weak-h">"Not enough evidence to recommend"</h2>
            <p>"These would gain if the guesses they rest on are right; measure those facts (see each Why) and they become recommendations or drop out."</p>
            <p data-testid="unbacked-gain">{would_add}</p>
            {hidden_line(identities)}
            <ul class="moves weak" data-testid="weak-moves">{rows}</ul>
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
                .map(|f| format!("`{}`", f.1))
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

#[component]
fn Immovable(shown: Arc<Shown>) -> impl IntoView {
    let items = shown.advice.immovable.clone();
    if items.is_empty() {
        return ().into_any();
    }
    let render = |i: ImmovableEntry| {
        let words = i
            .reasons
            .iter()
            .map(|r| r.message.as_str())
            .collect::<Vec<_>>()
            .join("; ");
        let fixes = i
            .reasons
            .iter()
            .filter_map(|r| immovable_fix(r.code.as_str()))
            .collect::<Vec<_>>()
            .join(" ");
        view! {
            <li><strong>{i.service.clone()}</strong>" on "<code>{i.cluster.clone()}</code>": "{words}
                {(!fixes.is_empty()).then(|| view! { ". "<span class="fix">{fixes}</span> })}</li>
        }
    };
    view! {
        <section aria-labelledby="immovable-h">
            <h2 id="immovable-h">"Services that cannot move"</h2>
            {super::capped_list(items, render, "immovable", "services")}
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
    fn the_bound_reads_as_one_sentence() {
        let text = include_str!("../../../examples/estates/sample.json");
        let e = berth_engine::load(text, berth_engine::Format::Json).expect("the sample loads");
        let now = berth_engine::estate::parse_time("2026-11-30T04:05:00Z").unwrap();
        let mut advice = berth_engine::advise(&e, &berth_engine::Policy::default(), now);
        advice.bound = Bound {
            cost_at_least: 812.46,
            improvement_at_most: 40.0,
            captured_at_least: Some(0.7519),
        };
        assert_eq!(
            bound_sentence(&advice),
            "The best possible is at least 812.4 points; the recommended moves capture at least 75.1 % of the improvement that can exist."
        );
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
