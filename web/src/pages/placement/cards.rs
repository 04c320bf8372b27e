//! Placement's steps as cards: a move or a compound step's members, its
//! gain as a bar and its terms as a waterfall, the review and the links.

use super::*;

/// One step of the advice as a card: a move, or every member of a
/// compound step (`berth_engine::text::steps`, the numbering the text
/// output, the plan exports and the notifications use).
#[derive(Clone)]
pub(super) struct Card {
    /// 1, 2, … among the recommendations; `None` for a step resting on
    /// guesses (listed apart, never numbered).
    pub(super) number: Option<usize>,
    pub(super) title: String,
    /// The members, in the order they are applied, each with its Why
    /// (once computed) and what the filter reads of it.
    pub(super) members: Vec<(Move, Option<MoveWhy>, MoveContext)>,
    pub(super) gain: f64,
    /// Cross-site MB/s and US$ a month the step saves (its moves' sum).
    pub(super) saving: Saving,
    pub(super) confidence: Class,
    /// The review identity (a compound step's members joined).
    pub(super) identity: String,
}

impl Card {
    pub(super) fn first(&self) -> &Move {
        &self.members[0].0
    }

    /// A step passes the filter when any of its moves does, read at the
    /// step's confidence.
    pub(super) fn passes(&self, f: &MoveFilter) -> bool {
        self.members
            .iter()
            .any(|(m, _, cx)| f.passes(m, cx, self.confidence))
    }

    /// Every cluster the step leaves or joins, space-separated.
    pub(super) fn clusters(&self) -> String {
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
pub(super) fn cards(shown: &Shown) -> (Vec<Card>, Vec<Card>) {
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
pub(super) fn card_terms(card: &Card) -> Vec<(String, f64)> {
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
pub(super) fn card_view(card: Card, filter: Option<MoveFilter>, scale: f64) -> impl IntoView {
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
pub(super) fn GainBar(gain: f64, scale: f64) -> impl IntoView {
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
pub(super) fn Waterfall(terms: Vec<(String, f64)>, gain: f64) -> impl IntoView {
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
pub(super) fn hidden_line(identities: Vec<String>) -> impl IntoView {
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
