//! Placement's lists below the steps: moves resting on guesses, services
//! of unknown requests, services that cannot move, fits that cannot be told.

use super::*;

/// Steps the engine found worth making but cannot back: the weakest
/// deciding fact is a guess. Not numbered with the recommendations, not
/// taken into a what-if nor exported.
#[component]
pub(super) fn WeakMoves(shown: Arc<Shown>) -> impl IntoView {
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
pub(super) fn UnknownRequests(shown: Arc<Shown>) -> impl IntoView {
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
            {crate::pages::capped_list(items, render, "unknown-requests", "services")}
        </section>
    }
    .into_any()
}

/// One service a rule keeps in place: `(service, cluster, the rule's words)`.
pub(super) type Kept = (String, String, String);

/// Services that cannot move, grouped by reason (a service kept in place
/// by two rules is in both groups), each group with its count, its fix
/// where one exists, and its services; every service's own words on
/// hover.
#[component]
pub(super) fn Immovable(shown: Arc<Shown>) -> impl IntoView {
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
pub(super) enum Untold {
    Capacity(berth_engine::advise::UnknownCapacity),
    Fit(CantTellEntry),
}

#[component]
pub(super) fn CantTell(shown: Arc<Shown>) -> impl IntoView {
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
            {crate::pages::capped_list(items, render, "cant-tell", "entries")}
        </section>
    }
    .into_any()
}
