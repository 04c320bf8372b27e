//! Health: the server's readiness, the advice driver's state, and the
//! notifications it sent or failed to send (docs/notifications.md).

use berth_api::{DriverHealth, NotificationDeliveryList, Ready};
use leptos::prelude::*;

use crate::client;
use crate::common::Gate;

#[component]
pub fn Health() -> impl IntoView {
    let ready = RwSignal::new(None::<Result<Ready, String>>);
    let driver = RwSignal::new(None::<Result<DriverHealth, client::Failure>>);
    let deliveries = RwSignal::new(None::<Result<NotificationDeliveryList, client::Failure>>);
    let auth = expect_context::<crate::common::Auth>();
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
