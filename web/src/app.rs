//! The shell (HTML document), the router and the navigation bar. What the
//! pages share with it (the signed-in state, the scenario, the gate and
//! the error line) is in [`crate::common`].

use leptos::prelude::*;
use leptos_router::components::{Route, Router, Routes, A};
use leptos_router::path;

use crate::client;
use crate::common::{Auth, Scenario, Session};
use crate::pages;

/// The HTML document every page is rendered into.
pub fn shell(options: LeptosOptions) -> impl IntoView {
    view! {
        <!DOCTYPE html>
        <html lang="en">
            <head>
                <meta charset="utf-8"/>
                <meta name="viewport" content="width=device-width, initial-scale=1"/>
                <title>"Berth"</title>
                <link rel="stylesheet" href="/style/berth.css"/>
                <link rel="icon" href="/favicon.svg" type="image/svg+xml"/>
                <HydrationScripts options/>
            </head>
            <body>
                <App/>
            </body>
        </html>
    }
}

#[component]
pub fn App() -> impl IntoView {
    let auth = Auth {
        session: RwSignal::new(None),
        estate: RwSignal::new(None),
        problem: RwSignal::new(None),
    };
    provide_context(auth);
    provide_context(Scenario {
        steps: RwSignal::new(Vec::new()),
        name: RwSignal::new("what-if".to_string()),
    });
    // Once, in the browser: who am I, and which estate. Not on the
    // sign-in page, which needs neither (and would only log a 401).
    Effect::new(move |_| {
        if client::path() == "/login" {
            auth.session.set(Some(None));
            return;
        }
        leptos::task::spawn_local(async move {
            match client::get("/api/session").await {
                Ok(v) => {
                    client::set_csrf(v["csrf_token"].as_str().map(str::to_string));
                    auth.session.set(Some(Some(Session {
                        subject: v["subject"].as_str().unwrap_or_default().to_string(),
                        role: v["role"].as_str().unwrap_or_default().to_string(),
                    })));
                    pick_estate(auth).await;
                }
                Err(_) => auth.session.set(Some(None)),
            }
        });
    });
    view! {
        <Router>
            <Nav/>
            <main id="main">
                <Routes fallback=|| view! { <h1>"Not found"</h1><p>"There is no such page. "<a href="/">"Go to Placement"</a></p> }>
                    <Route path=path!("/") view=pages::placement::Placement/>
                    <Route path=path!("/whatif") view=pages::whatif::WhatIf/>
                    <Route path=path!("/deciders") view=pages::deciders::Deciders/>
                    <Route path=path!("/estate") view=pages::estate::EstatePage/>
                    <Route path=path!("/policy") view=pages::policy::PolicyPage/>
                    <Route path=path!("/health") view=pages::health::Health/>
                    <Route path=path!("/login") view=pages::login::Login/>
                </Routes>
            </main>
        </Router>
    }
}

async fn pick_estate(auth: Auth) {
    if let Some(id) = client::query_param("estate") {
        auth.estate.set(Some(id));
        return;
    }
    match client::get("/api/estates").await {
        Ok(v) => {
            let first = v["estates"]
                .as_array()
                .and_then(|a| a.first())
                .and_then(|e| e["id"].as_str())
                .map(str::to_string);
            match first {
                Some(id) => auth.estate.set(Some(id)),
                None => auth.problem.set(Some(
                    "There is no estate yet. Import one with `berth import` or `POST /api/estates`, then reload.".into(),
                )),
            }
        }
        Err(f) => auth.problem.set(Some(f.message)),
    }
}

#[component]
fn Nav() -> impl IntoView {
    let auth = expect_context::<Auth>();
    let sign_out = move |_| {
        leptos::task::spawn_local(async move {
            let _ = client::request("DELETE", "/api/session", None).await;
            client::go("/login");
        });
    };
    view! {
        <header class="top">
            <a class="skip" href="#main">"Skip to content"</a>
            <span class="brand">"Berth"</span>
            <nav aria-label="Pages">
                <A href="/">"Placement"</A>
                <A href="/whatif">"What-if"</A>
                <A href="/deciders">"Deciders"</A>
                <A href="/estate">"Estate"</A>
                <A href="/policy">"Policy"</A>
                <A href="/health">"Health"</A>
            </nav>
            <span class="who" data-testid="who">
                {move || match auth.session.get() {
                    Some(Some(s)) => view! {
                        <span>{format!("{} ({})", s.subject, s.role)}</span>
                        " "
                        <button type="button" on:click=sign_out>"Sign out"</button>
                    }.into_any(),
                    Some(None) => view! { <a href="/login">"Sign in"</a> }.into_any(),
                    None => view! { <span>"…"</span> }.into_any(),
                }}
            </span>
        </header>
    }
}
