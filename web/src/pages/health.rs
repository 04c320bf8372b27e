//! Health: the server's readiness and the advice driver's state.

use leptos::prelude::*;
use serde_json::Value;

use super::{arr, s};
use crate::client;
use crate::common::Gate;

#[component]
pub fn Health() -> impl IntoView {
    let ready = RwSignal::new(None::<Result<Value, String>>);
    let driver = RwSignal::new(None::<Result<Value, client::Failure>>);
    Effect::new(move |_| {
        leptos::task::spawn_local(async move {
            ready.set(Some(client::get("/readyz").await.map_err(|f| f.message)));
            driver.set(Some(client::get("/api/driver").await));
        });
    });
    view! {
        <h1>"Health"</h1>
        <Gate>
            <section aria-labelledby="ready-h">
                <h2 id="ready-h">"Server"</h2>
                {move || match ready.get() {
                    None => view! { <p role="status">"Asking the server…"</p> }.into_any(),
                    Some(Ok(v)) => view! { <p data-testid="ready">"Ready; database: "{s(&v["database"])}"."</p> }.into_any(),
                    Some(Err(m)) => view! { <p class="error" role="alert" data-testid="ready">"Not ready: "{m}</p> }.into_any(),
                }}
            </section>
            <section aria-labelledby="driver-h">
                <h2 id="driver-h">"Advice driver"</h2>
                {move || match driver.get() {
                    None => view! { <p role="status">"Asking the server…"</p> }.into_any(),
                    Some(Err(f)) if f.status == 404 => view! { <p data-testid="driver">"Not available: this server has no advice driver."</p> }.into_any(),
                    Some(Err(f)) => view! { <p class="error" role="alert" data-testid="driver">{f.message}</p> }.into_any(),
                    Some(Ok(v)) => {
                        let last = if v["last_pass_at"].is_null() {
                            "The advice driver has not run yet.".to_string()
                        } else {
                            format!("Last pass at {}.", s(&v["last_pass_at"]))
                        };
                        let pass = if v["last_pass"].is_null() { String::new() } else {
                            format!(" Evaluated {}, deferred {}, failed {}.", v["last_pass"]["evaluated"], v["last_pass"]["deferred"], v["last_pass"]["failed"])
                        };
                        let oldest = match v["oldest_pending_age_s"].as_i64() {
                            Some(a) => format!(", the oldest waiting {}", super::age(a)),
                            None => String::new(),
                        };
                        let backoffs = arr(&v["backoffs"]).into_iter().map(|b| view! {
                            <li>{format!("{}: {} attempts, next try after {}", s(&b["subject"]), b["attempts"], s(&b["until"]))}</li>
                        }).collect_view();
                        view! {
                            <p data-testid="driver">{last}{pass}</p>
                            <p>{format!("Backlog: {}{oldest}.", v["backlog"])}</p>
                            <ul>{backoffs}</ul>
                        }.into_any()
                    }
                }}
            </section>
        </Gate>
    }
}
