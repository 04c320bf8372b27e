//! Health: the server's readiness; the shown estate's agents, recent
//! writes, facts by kind and traffic coverage (`GET …/health`); the advice
//! driver's state; and the notifications it sent or failed to send
//! (docs/notifications.md).

use berth_api::{DriverHealth, EstateHealth, NotificationDeliveryList, Ready};
use leptos::prelude::*;

use crate::client;
use crate::common::Gate;

#[component]
pub fn Health() -> impl IntoView {
    let ready = RwSignal::new(None::<Result<Ready, String>>);
    let driver = RwSignal::new(None::<Result<DriverHealth, client::Failure>>);
    let deliveries = RwSignal::new(None::<Result<NotificationDeliveryList, client::Failure>>);
    let auth = expect_context::<crate::common::Auth>();
    let estate_health = RwSignal::new(None::<Result<EstateHealth, client::Failure>>);
    Effect::new(move |_| {
        let signed_in = matches!(auth.session.get(), Some(Some(_)));
        let Some(id) = auth.estate.get().filter(|_| signed_in) else {
            return;
        };
        leptos::task::spawn_local(async move {
            let mut url = berth_api::endpoint::get_estate_health(&id);
            if let Some(now) = client::query_param("now") {
                url = url.query("now", &now);
            }
            estate_health.set(Some(client::get_typed::<EstateHealth>(&url).await));
        });
    });
    Effect::new(move |_| {
        // The API parts only once signed in (signed out they answer 401,
        // which the browser logs); readiness is public.
        let signed_in = matches!(auth.session.get(), Some(Some(_)));
        if auth.session.get().is_none() {
            return;
        }
        leptos::task::spawn_local(async move {
            ready.set(Some(
                client::get_typed::<Ready>(&berth_api::endpoint::get_readiness())
                    .await
                    .map_err(|f| f.message),
            ));
            if signed_in {
                driver.set(Some(
                    client::get_typed::<DriverHealth>(&berth_api::endpoint::get_driver_health())
                        .await,
                ));
                deliveries.set(Some(
                    client::get_typed::<NotificationDeliveryList>(
                        &berth_api::endpoint::list_notification_deliveries(),
                    )
                    .await,
                ));
            }
        });
    });
    view! {
        <h1>"Health"</h1>
        <Gate>
            <section aria-labelledby="ready-h">
                <h2 id="ready-h">"Server"</h2>
                {move || match ready.get() {
                    None => view! { <p role="status">"Asking the server…"</p> }.into_any(),
                    Some(Ok(r)) => view! { <p data-testid="ready">"Ready; database: "{r.database}"."</p> }.into_any(),
                    Some(Err(m)) => view! { <p class="error" role="alert" data-testid="ready">"Not ready: "{m}</p> }.into_any(),
                }}
            </section>
            {move || estate_health.get().map(|h| match h {
                Err(f) => view! { <section><p class="error" role="alert" data-testid="estate-health">{f.message}</p></section> }.into_any(),
                Ok(h) => estate_view(h).into_any(),
            })}
            <section aria-labelledby="driver-h">
                <h2 id="driver-h">"Advice driver"</h2>
                {move || match driver.get() {
                    None => view! { <p role="status">"Asking the server…"</p> }.into_any(),
                    Some(Err(f)) if f.status == 404 => view! { <p data-testid="driver">"Not available: this server has no advice driver."</p> }.into_any(),
                    Some(Err(f)) => view! { <p class="error" role="alert" data-testid="driver">{f.message}</p> }.into_any(),
                    Some(Ok(h)) => {
                        let last = match &h.last_pass_at {
                            None => "The advice driver has not run yet.".to_string(),
                            Some(at) => format!("Last pass at {at}."),
                        };
                        let pass = match &h.last_pass {
                            None => String::new(),
                            Some(p) => format!(" Evaluated {}, deferred {}, failed {}.", p.evaluated, p.deferred, p.failed),
                        };
                        let oldest = match h.oldest_pending_age_s {
                            Some(a) => format!(", the oldest waiting {}", super::age(a)),
                            None => String::new(),
                        };
                        let backoffs = h.backoffs.iter().map(|b| view! {
                            <li>{format!("{}: {} attempts, next try after {}", b.subject, b.attempts, b.until)}</li>
                        }).collect_view();
                        view! {
                            <p data-testid="driver">{last}{pass}</p>
                            <p>{format!("Backlog: {}{oldest}.", h.backlog)}</p>
                            <ul>{backoffs}</ul>
                        }.into_any()
                    }
                }}
            </section>
            <section aria-labelledby="notify-h">
                <h2 id="notify-h">"Notifications"</h2>
                {move || match deliveries.get() {
                    None => view! { <p role="status">"Asking the server…"</p> }.into_any(),
                    Some(Err(f)) => view! { <p class="error" role="alert" data-testid="deliveries">{f.message}</p> }.into_any(),
                    Some(Ok(v)) => {
                        let list = v.deliveries;
                        if list.is_empty() {
                            return view! { <p data-testid="deliveries">"No notifications yet: none were sent, or no channel is configured (Admin)."</p> }.into_any();
                        }
                        let count = list.len();
                        let failed = list.iter().filter(|d| d.status == "failed").count();
                        let pending = list.iter().filter(|d| d.status == "pending").count();
                        let rows = list.into_iter().map(|d| {
                            let next = d.next_attempt_at.unwrap_or_else(|| "—".to_string());
                            let reply = d.last_status.map_or("—".to_string(), |c| c.to_string());
                            let words = status_words(&d.status, d.attempts);
                            view! {
                                <tr data-status={d.status}>
                                    <td>{d.channel}</td>
                                    <td>{d.estate}" v"{d.estate_version.to_string()}</td>
                                    <td><code>{d.identity}</code></td>
                                    <td>{words}</td>
                                    <td>{d.attempts.to_string()}</td>
                                    <td>{next}</td>
                                    <td>{reply}</td>
                                    <td>{d.last_error}</td>
                                </tr>
                            }
                        }).collect_view();
                        view! {
                            <p data-testid="deliveries">{format!("Newest {count} deliveries: {pending} not delivered yet, {failed} given up.")}</p>
                            <table class="deliveries">
                                <thead><tr>
                                    <th scope="col">"Channel"</th><th scope="col">"Estate"</th><th scope="col">"Recommendation"</th>
                                    <th scope="col">"Status"</th><th scope="col">"Attempts"</th><th scope="col">"Next attempt"</th>
                                    <th scope="col">"Last reply"</th><th scope="col">"Last error"</th>
                                </tr></thead>
                                <tbody>{rows}</tbody>
                            </table>
                        }.into_any()
                    }
                }}
            </section>
        </Gate>
    }
}

/// The estate's part of the page: agents, probe addresses, recent writes,
/// facts by kind, round trips and traffic, each saying what is missing
/// and what fills it.
fn estate_view(h: EstateHealth) -> impl IntoView {
    let agents = if h.agents.is_empty() {
        view! { <p data-testid="agents">"No agent token for this estate: measured round trips, capacities and flows come from agents. An administrator creates one on Admin (role agent), then on each cluster: "<code>"BERTH_TOKEN=… berth agent --server URL --estate "{h.estate.clone()}" --cluster CLUSTER --kubernetes"</code>" (docs/agent.md)."</p> }.into_any()
    } else {
        let rows = h.agents.iter().map(|a| {
            let seen = match (&a.last_seen_at, a.last_seen_age_s) {
                (Some(at), Some(age)) => format!("{} ago ({at})", super::age(age)),
                _ => "never".to_string(),
            };
            let sends = if a.sends.is_empty() { "nothing yet".to_string() } else { a.sends.join(", ") };
            let clusters = a.clusters.as_ref().map_or("any".to_string(), |c| c.join(", "));
            let state = match &a.revoked_at { Some(at) => format!("revoked {at}"), None => "live".to_string() };
            view! {
                <tr data-agent=a.name.clone()>
                    <th scope="row">{a.name.clone()}</th>
                    <td>{clusters}</td>
                    <td data-testid="agent-seen">{seen}</td>
                    <td>{sends}</td>
                    <td>{format!("{} batches, {} observations, {} re-syncs", a.batches, a.observations, a.resyncs)}</td>
                    <td>{state}</td>
                </tr>
            }
        }).collect_view();
        view! {
            <table class="agents" data-testid="agents">
                <thead><tr><th scope="col">"Agent token"</th><th scope="col">"Clusters"</th><th scope="col">"Last heard from"</th><th scope="col">"Sends"</th><th scope="col">"In all"</th><th scope="col">"State"</th></tr></thead>
                <tbody>{rows}</tbody>
            </table>
        }.into_any()
    };
    let probes = (!h.probes.is_empty()).then(|| {
        let items = h
            .probes
            .iter()
            .map(|p| {
                view! {
                    <li>{format!("{}: {} (since {})", p.cluster, p.address, p.updated_at)}</li>
                }
            })
            .collect_view();
        view! { <p>"Round trips are probed from:"</p><ul data-testid="probes">{items}</ul> }
    });
    let changes = if h.changes.is_empty() {
        view! { <p data-testid="changes">"No uploads, imports or fact updates recorded yet."</p> }
            .into_any()
    } else {
        let items = h.changes.iter().map(|c| {
            let notes = (!c.notes.is_empty()).then(|| {
                let ns = c.notes.iter().map(|n| view! { <li>{n.clone()}</li> }).collect_view();
                view! { <details><summary>{format!("{} notes", c.notes.len())}</summary><ul>{ns}</ul></details> }
            });
            view! { <li data-action=c.action.clone()><strong>{c.at.clone()}</strong>" — "{c.summary.clone()}" (by "{c.actor.clone()}")"{notes}</li> }
        }).collect_view();
        view! { <ul class="changes" data-testid="changes">{items}</ul> }.into_any()
    };
    let facts = h
        .facts
        .iter()
        .map(|k| {
            let oldest = k.oldest_age_s.map_or("—".to_string(), super::age);
            view! {
                <tr data-kind=k.kind.clone()>
                    <th scope="row">{k.kind.clone()}</th>
                    <td>{k.total.to_string()}</td>
                    <td>{k.measured.to_string()}</td>
                    <td>{k.reported.to_string()}</td>
                    <td>{k.inferred.to_string()}</td>
                    <td>{k.guessed.to_string()}</td>
                    <td data-testid="stale">{k.stale.to_string()}</td>
                    <td data-testid="unknown">{k.unknown.to_string()}</td>
                    <td>{oldest}</td>
                </tr>
            }
        })
        .collect_view();
    let t = &h.traffic;
    let traffic = if t.services == 0 {
        "No services yet: import them on Import (Kubernetes manifests) or with `berth import kubernetes`.".to_string()
    } else {
        let mut line = format!(
            "Traffic observed for {} of {} services",
            t.observed, t.services
        );
        if t.stale > 0 {
            line.push_str(&format!(" ({} of them stale)", t.stale));
        }
        if t.declared > 0 {
            line.push_str(&format!(
                "; declared complete by the file for {}",
                t.declared
            ));
        }
        if t.unknown > 0 {
            line.push_str(&format!("; unknown for {}: their flows are not counted as none — a mesh import (Import → Prometheus) or `berth agent --prometheus` observes them", t.unknown));
        }
        line.push('.');
        line
    };
    let rtts = if h.site_pairs == 0 {
        "One site: no round trip between sites is needed.".to_string()
    } else if h.site_pairs_without_rtt == 0 {
        format!(
            "Every one of the {} pairs of sites has a round-trip fact.",
            h.site_pairs
        )
    } else {
        format!(
            "{} of {} pairs of sites have no round-trip fact: their round trip is a great-circle estimate. Agents measure them (each cluster's agent probes the others), or give them on the estate's file.",
            h.site_pairs_without_rtt, h.site_pairs
        )
    };
    view! {
        <section aria-labelledby="estate-h" data-testid="estate-health">
            <h2 id="estate-h">{format!("Estate {} (version {}), at {}", h.estate, h.version, crate::common::utc_words(&h.evaluated_at))}</h2>
            <h3>"Agents"</h3>
            {agents}
            {probes}
            <h3>"Facts by kind"</h3>
            <p data-testid="rtt-pairs">{rtts}</p>
            <p data-testid="traffic">{traffic}</p>
            <table class="fact-kinds" data-testid="fact-kinds">
                <thead><tr><th scope="col">"Kind"</th><th scope="col">"All"</th><th scope="col">"Measured"</th><th scope="col">"Reported"</th><th scope="col">"Inferred"</th><th scope="col">"Guessed"</th><th scope="col">"Stale"</th><th scope="col">"Unknown"</th><th scope="col">"Oldest"</th></tr></thead>
                <tbody>{facts}</tbody>
            </table>
            <p class="hint">"Classes as advice reads them now: a fact past its class's window (Policy → staleness) counts at the class it aged to and is stale; unknown has no value and never counts as zero."</p>
            <h3>"Recent writes"</h3>
            {changes}
        </section>
    }
}

/// A delivery's status as people read it.
fn status_words(status: &str, attempts: i64) -> &'static str {
    match status {
        "delivered" => "delivered",
        "pending" if attempts == 0 => "queued",
        "pending" => "waiting for a retry",
        "failed" => "failed (given up)",
        _ => "unknown",
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn statuses_read_as_words() {
        assert_eq!(super::status_words("pending", 0), "queued");
        assert_eq!(super::status_words("pending", 2), "waiting for a retry");
        assert_eq!(super::status_words("failed", 10), "failed (given up)");
        assert_eq!(super::status_words("delivered", 1), "delivered");
    }
}
