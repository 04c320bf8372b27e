//! The shell (HTML document), the router and the navigation bar. What the
//! pages share with it (the signed-in state, the scenario, the gate and
//! the error line) is in [`crate::common`].

use leptos::prelude::*;
use leptos_router::components::{Route, Router, Routes, A};
use leptos_router::path;

use crate::client;
use crate::common::{keep_query, Auth, Scenario, Session};
use crate::pages;

/// The HTML document every page is rendered into. `missing_bundle` is the
/// server's own account of why no web bundle can be sent: shown above the
/// application, which without the bundle stays a static page.
///
/// With a bundle, the body holds the application and nothing else: the
/// browser hydrates the body from its first child on, so even the empty
/// placeholder an absent notice would leave there (a comment) would stop
/// hydration at the first element.
pub fn shell(options: LeptosOptions, missing_bundle: Option<String>) -> impl IntoView {
    let head = view! {
        <head>
            <meta charset="utf-8"/>
            <meta name="viewport" content="width=device-width, initial-scale=1"/>
            <title>"Berth"</title>
            <link rel="stylesheet" href="/style/berth.css"/>
            <link rel="icon" href="/favicon.svg" type="image/svg+xml"/>
            <HydrationScripts options/>
        </head>
    };
    match missing_bundle {
        None => view! {
            <!DOCTYPE html>
            <html lang="en">
                {head}
                <body>
                    <App/>
                </body>
            </html>
        }
        .into_any(),
        Some(m) => view! {
            <!DOCTYPE html>
            <html lang="en">
                {head}
                <body>
                    <p class="notice bundle-missing" role="alert" data-testid="bundle-missing">
                        "This page cannot become interactive: " {m}
                    </p>
                    <App/>
                </body>
            </html>
        }
        .into_any(),
    }
}

#[component]
pub fn App() -> impl IntoView {
    let auth = Auth {
        session: RwSignal::new(None),
        estate: RwSignal::new(None),
        problem: RwSignal::new(None),
        estates: RwSignal::new(Vec::new()),
        stale: RwSignal::new(None),
    };
    provide_context(auth);
    provide_context(Scenario {
        steps: RwSignal::new(Vec::new()),
        name: RwSignal::new("what-if".to_string()),
    });
    // Once, in the browser: who am I, and which estate. Not on the
    // sign-in page, which needs neither (and would only log a 401).
    Effect::new(move |_| {
        // Nor when the browser has no session at all (no marker cookie).
        if client::path() == "/login" || !client::may_be_signed_in() {
            auth.session.set(Some(None));
            return;
        }
        leptos::task::spawn_local(async move {
            match client::get_typed::<berth_api::Caller>(&berth_api::endpoint::get_session()).await
            {
                Ok(caller) => {
                    client::set_csrf(caller.csrf_token);
                    auth.session.set(Some(Some(Session {
                        subject: caller.subject,
                        role: caller.role,
                    })));
                    pick_estate(auth).await;
                }
                Err(f) => {
                    if f.status == 401 {
                        client::forget_signed_in();
                    }
                    auth.session.set(Some(None))
                }
            }
        });
    });
    view! {
        <Router>
            <Nav/>
            <StaleBanner/>
            // tabindex -1: "Skip to content" moves the focus here (a
            // fragment link focuses its target only if it can take focus).
            <main id="main" tabindex="-1">
                <Routes fallback=|| view! { <h1>"Not found"</h1><p>"There is no such page. "<a href="/">"Go to Placement"</a></p> }>
                    <Route path=path!("/") view=pages::placement::Placement/>
                    <Route path=path!("/whatif") view=pages::whatif::WhatIf/>
                    <Route path=path!("/deciders") view=pages::deciders::Deciders/>
                    <Route path=path!("/estate") view=pages::estate::EstatePage/>
                    <Route path=path!("/policy") view=pages::policy::PolicyPage/>
                    <Route path=path!("/place") view=pages::place::PlacePage/>
                    <Route path=path!("/health") view=pages::health::Health/>
                    <Route path=path!("/estates/new") view=pages::new_estate::NewEstate/>
                    <Route path=path!("/import") view=pages::import::ImportPage/>
                    <Route path=path!("/admin") view=pages::admin::AdminPage/>
                    <Route path=path!("/login") view=pages::login::Login/>
                </Routes>
            </main>
        </Router>
    }
}

/// The staleness banner of the estate shown. Not on New estate: that page
/// shows no estate, and the banner would describe the one chosen before.
#[component]
fn StaleBanner() -> impl IntoView {
    let auth = expect_context::<Auth>();
    let location = leptos_router::hooks::use_location();
    move || {
        let about_no_estate = location
            .pathname
            .with(|p| p.trim_end_matches('/') == "/estates/new");
        auth.stale.get().filter(|_| !about_no_estate).map(
            |m| view! { <p class="notice stale" role="status" data-testid="stale-banner">{m}</p> },
        )
    }
}

/// Which estate the pages show: `?estate=` when given, else the first one
/// the caller may see. Also fills the switcher's list, and the staleness
/// banner for the chosen estate.
async fn pick_estate(auth: Auth) {
    let listed =
        client::get_typed::<berth_api::EstateList>(&berth_api::endpoint::list_estates()).await;
    let estates: Vec<(String, String)> = match &listed {
        Ok(list) => list
            .estates
            .iter()
            .map(|e| {
                let name = if e.name.is_empty() { &e.id } else { &e.name };
                (e.id.clone(), name.clone())
            })
            .collect(),
        Err(_) => Vec::new(),
    };
    auth.estates.set(estates.clone());
    let chosen = match client::query_param("estate") {
        Some(id) => Some(id),
        None => match listed {
            Ok(_) => match estates.first() {
                Some((id, _)) => Some(id.clone()),
                None => {
                    auth.problem.set(Some(
                        "There is no estate yet. Create one on the New estate page, or with `berth import` or `POST /api/estates`, then reload.".into(),
                    ));
                    None
                }
            },
            Err(f) => {
                auth.problem.set(Some(f.message));
                None
            }
        },
    };
    let Some(id) = chosen else { return };
    auth.estate.set(Some(id.clone()));
    if let Ok(e) =
        client::get_typed::<berth_api::EstateSummary>(&berth_api::endpoint::get_estate(&id)).await
    {
        let since = e
            .stale_since
            .flatten()
            .as_deref()
            .and_then(crate::engine::parse_time);
        auth.stale.set(crate::common::stale_sentence(
            e.newest_observation.as_deref(),
            since,
            client::eval_now(),
        ));
    }
}

#[component]
fn Nav() -> impl IntoView {
    let auth = expect_context::<Auth>();
    // Every link carries the estate shown and `?now=`, so moving between
    // pages keeps both (and a copied address shows the same thing).
    let link = move |path: &str| {
        keep_query(
            path,
            auth.estate.get().as_deref(),
            client::query_param("now").as_deref(),
        )
    };
    let may_operate = move || matches!(auth.session.get(), Some(Some(s)) if s.may_operate());
    let is_admin = move || matches!(auth.session.get(), Some(Some(s)) if s.is_admin());
    let sign_out = move |_| {
        // Signing out is the choice to leave: no "unsaved work" question
        // after the session has already ended.
        client::set_unsaved(false);
        leptos::task::spawn_local(async move {
            let _ = client::request("DELETE", &berth_api::endpoint::sign_out(), None).await;
            client::go("/login");
        });
    };
    view! {
        <header class="top">
            <a class="skip" href="#main" on:click=move |ev: leptos::ev::MouseEvent| {
                ev.prevent_default();
                client::focus_by_id("main");
            }>"Skip to content"</a>
            <span class="brand">"Berth"</span>
            <nav aria-label="Pages">
                <A href=move || link("/")>"Placement"</A>
                <A href=move || link("/whatif")>"What-if"</A>
                <A href=move || link("/deciders")>"Deciders"</A>
                <A href=move || link("/estate")>"Estate"</A>
                <A href=move || link("/policy")>"Policy"</A>
                <A href=move || link("/health")>"Health"</A>
                // Onboarding: shown to the roles that may use it (the
                // pages themselves say so to anyone else who opens them).
                // (An Option, not <Show>: a `()` fallback followed by
                // siblings does not hydrate.)
                {move || may_operate().then(|| view! {
                    <A href=move || link("/estates/new")>"New estate"</A>
                    <A href=move || link("/import")>"Import"</A>
                })}
                {move || is_admin().then(|| view! { <A href=move || link("/admin")>"Admin"</A> })}
            </nav>
            <EstateSwitcher/>
            <Clock/>
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

/// The one clock of every page: "now" (the wall clock, to the minute) or
/// a chosen time, kept in the address as `?now=` (like a time picker kept
/// in the URL), so every page, link and reload evaluates at the same
/// instant. Choosing reloads the page at the new time; the other query
/// parameters (estate, a what-if's steps) are kept.
#[component]
fn Clock() -> impl IntoView {
    // Read in the browser only: the server renders no time.
    let chosen = RwSignal::new(None::<String>);
    Effect::new(move |_| chosen.set(client::query_param("now")));
    let go = move |now: Option<String>| {
        if let Some(url) = client::address_with(&[("now", now.as_deref())]) {
            client::go(&url);
        }
    };
    let on_change = move |ev: leptos::ev::Event| {
        // datetime-local gives "2026-11-30T04:05" (read as UTC here).
        let v = event_target_value(&ev);
        if v.is_empty() {
            go(None);
        } else if crate::engine::parse_time(&format!("{v}:00Z")).is_some() {
            go(Some(format!("{v}:00Z")));
        }
    };
    // The input's value: the chosen time to the minute, without zone.
    let value = move || {
        chosen
            .get()
            .and_then(|t| crate::engine::parse_time(&t))
            .map(|t| crate::engine::format_time(t / 60 * 60))
            .map(|t| t.strip_suffix(":00Z").map_or(t.clone(), str::to_string))
            .unwrap_or_default()
    };
    // The picker is folded behind one button, so the header costs one Tab
    // stop for it (a datetime-local field is six: month, day, year, hour,
    // minute and its calendar; issue 35). Escape folds it again and gives
    // the focus back to the button.
    let open = RwSignal::new(false);
    let toggle = move |_| {
        let now_open = !open.get_untracked();
        open.set(now_open);
        if now_open {
            // After the picker is drawn (it is hidden until the next frame).
            request_animation_frame(|| client::focus_by_id("clock-at"));
        }
    };
    let on_key = move |ev: leptos::ev::KeyboardEvent| {
        if ev.key() == "Escape" {
            open.set(false);
            client::focus_by_id("clock-button");
        }
    };
    let shown = move || match chosen.get() {
        Some(t) => format!(
            "At {} UTC",
            crate::engine::parse_time(&t)
                .map(|t| crate::engine::format_time(t / 60 * 60))
                .map(|t| t.trim_end_matches(":00Z").replace('T', " "))
                .unwrap_or(t)
        ),
        None => "At: now".to_string(),
    };
    view! {
        <span class="clock" data-testid="clock" data-now=move || chosen.get().unwrap_or_else(|| "live".into()) on:keydown=on_key>
            <button type="button" id="clock-button" class="small clock-button" class:travelling=move || chosen.get().is_some()
                aria-expanded=move || if open.get() { "true" } else { "false" } aria-controls="clock-picker"
                title="The time every page is evaluated at (UTC); choose another to look back"
                on:click=toggle>{shown}</button>
            <span id="clock-picker" class="clock-picker" hidden=move || !open.get()>
                <label for="clock-at">"Evaluated at (UTC) "</label>
                <input id="clock-at" type="datetime-local" step="60" prop:value=value on:change=on_change/>
                {move || chosen.get().is_some().then(|| view! {
                    <button type="button" class="small" on:click=move |_| go(None)>"Back to now"</button>
                })}
            </span>
        </span>
    }
}

/// The estate switcher: every estate the caller may see; choosing one
/// reloads the page on it (the estate goes into the address, so it is kept
/// across navigation and reloads).
#[component]
fn EstateSwitcher() -> impl IntoView {
    let auth = expect_context::<Auth>();
    let choose = move |ev: leptos::ev::Event| {
        let id = event_target_value(&ev);
        client::go(&keep_query(
            &client::path(),
            Some(&id),
            client::query_param("now").as_deref(),
        ));
    };
    move || {
        let estates = auth.estates.get();
        (!estates.is_empty()).then(|| {
            let current = auth.estate.get().unwrap_or_default();
            view! {
                <label class="estate-switcher">
                    "Estate "
                    <select data-testid="estate-switcher" on:change=choose>
                        {estates
                            .into_iter()
                            .map(|(id, name)| {
                                let selected = id == current;
                                let label = if name == id { id.clone() } else { format!("{name} ({id})") };
                                view! { <option value=id selected=selected>{label}</option> }
                            })
                            .collect_view()}
                    </select>
                </label>
            }
        })
    }
}
