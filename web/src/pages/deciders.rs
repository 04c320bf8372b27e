//! Deciders: the built-ins and any registered external deciders compared
//! side by side (scored by the server on equal footing), the refused
//! proposals with their reasons, the request Preview exactly as a decider
//! receives it, and uploaded response files scored like the rest.

use std::collections::BTreeMap;

use leptos::prelude::*;
use serde_json::Value;

use berth_engine::decider::{Accepted, Comparison, DeciderEntry, Refused};
use berth_engine::leaderboard::{self as board, Leaderboard};
use leptos_router::hooks::use_navigate;

use super::{fixed, pretty_json, signed};
use crate::client;
use crate::common::{Auth, ErrorLine, Gate, Scenario};
use crate::engine::Step;

#[component]
pub fn Deciders() -> impl IntoView {
    let auth = expect_context::<Auth>();
    let chosen = RwSignal::new(Vec::<String>::new());
    let error = RwSignal::new(None::<String>);
    let may_operate =
        Signal::derive(move || matches!(auth.session.get(), Some(Some(s)) if s.may_operate()));
    view! {
        <h1>"Deciders"</h1>
        <Gate>
            <ErrorLine message=error.into()/>
            <Registered chosen error/>
            <Compare chosen error may_operate/>
            <RequestPreview error/>
            <LeaderboardSection error may_operate/>
        </Gate>
    }
}

/// The registered external deciders, each to choose for a comparison;
/// administrators rotate, remove and register them.
#[component]
fn Registered(chosen: RwSignal<Vec<String>>, error: RwSignal<Option<String>>) -> impl IntoView {
    let auth = expect_context::<Auth>();
    let registered = RwSignal::new(None::<Result<Vec<berth_api::Decider>, String>>);
    let secret = RwSignal::new(None::<String>);
    let is_admin = move || matches!(auth.session.get(), Some(Some(s)) if s.is_admin());
    let load_registered = Callback::new(move |()| {
        leptos::task::spawn_local(async move {
            registered.set(Some(
                match client::get_typed::<berth_api::DeciderList>(
                    &berth_api::endpoint::list_deciders(),
                )
                .await
                {
                    Ok(l) => Ok(l.deciders),
                    Err(f) if f.status == 404 => {
                        Err("This server has no external deciders registered.".into())
                    }
                    Err(f) => Err(f.message),
                },
            ));
        });
    });
    // Only once signed in: signed out the list answers 401.
    Effect::new(move |_| {
        if matches!(auth.session.get(), Some(Some(_))) {
            load_registered.run(());
        }
    });
    view! {
        <section aria-labelledby="reg-h">
            <h2 id="reg-h">"Registered external deciders"</h2>
            {move || match registered.get() {
                None => view! { <p role="status">"Asking the server…"</p> }.into_any(),
                Some(Err(m)) => view! { <p data-testid="no-externals">{m}</p> }.into_any(),
                Some(Ok(list)) if list.is_empty() => view! { <p data-testid="no-externals">"None registered."</p> }.into_any(),
                Some(Ok(list)) => list.into_iter().map(|d| view! { <DeciderRow d chosen secret error on_change=load_registered/> }).collect_view().into_any(),
            }}
            {move || secret.get().map(|k| view! { <p class="notice" role="status">"The decider's secret, shown once — copy it now: "<code>{k}</code></p> })}
            <Show when=move || is_admin() && matches!(registered.get(), Some(Ok(_)))>
                <RegisterForm secret error on_change=load_registered/>
            </Show>
        </section>
    }
}

/// One registered decider: its checkbox and, for administrators, Rotate
/// secret and Remove.
#[component]
fn DeciderRow(
    d: berth_api::Decider,
    chosen: RwSignal<Vec<String>>,
    secret: RwSignal<Option<String>>,
    error: RwSignal<Option<String>>,
    on_change: Callback<()>,
) -> impl IntoView {
    let auth = expect_context::<Auth>();
    let is_admin = move || matches!(auth.session.get(), Some(Some(s)) if s.is_admin());
    let name = d.name.clone();
    let n2 = name.clone();
    let n3 = name.clone();
    let n4 = name.clone();
    view! {
        <div class="decider-row">
            <input type="checkbox" id=format!("ext-{name}")
                on:change=move |ev| {
                    let on = event_target_checked(&ev);
                    let n = n2.clone();
                    chosen.update(|c| { c.retain(|x| *x != n); if on { c.push(n); } });
                }/>
            <label for=format!("ext-{n3}")>{format!("{} — {} (timeout {} ms{}, key {})", name, d.url, d.timeout_ms,
                if d.enabled { "" } else { ", disabled" }, d.secret_fingerprint.as_deref().unwrap_or_default())}</label>
            <Show when=is_admin>
                {
                    let n = n4.clone();
                    let n5 = n4.clone();
                    view! {
                        <button type="button" class="small" on:click=move |_| {
                            let n = n.clone();
                            leptos::task::spawn_local(async move {
                                let rotation = berth_api::SecretRotation { overlap_s: Some(3600) };
                                match client::send_typed::<_, berth_api::DeciderWithSecret>("POST", &berth_api::endpoint::rotate_decider_secret(&n), &rotation).await {
                                    Ok(a) => secret.set(a.secret),
                                    Err(f) => error.set(Some(f.message)),
                                }
                            });
                        }>"Rotate secret"</button>
                        <button type="button" class="small" on:click=move |_| {
                            let n = n5.clone();
                            leptos::task::spawn_local(async move {
                                match client::request("DELETE", &berth_api::endpoint::delete_decider(&n), None).await {
                                    Ok(_) => on_change.run(()),
                                    Err(f) => error.set(Some(f.message)),
                                }
                            });
                        }>"Remove"</button>
                    }
                }
            </Show>
        </div>
    }
}

/// Administrators register a decider: name, URL, timeout, interval, and
/// whether calls are signed (the secret is shown once).
#[component]
fn RegisterForm(
    secret: RwSignal<Option<String>>,
    error: RwSignal<Option<String>>,
    on_change: Callback<()>,
) -> impl IntoView {
    let reg_name = RwSignal::new(String::new());
    let reg_url = RwSignal::new(String::new());
    // 5,000 ms: room for a decider doing real work, well inside the
    // 25,000 ms limit. Milliseconds, as the API and the README say.
    let reg_timeout = RwSignal::new("5000".to_string());
    // Blank: run on request only, never by the advice driver.
    let reg_interval = RwSignal::new(String::new());
    let reg_secret = RwSignal::new(true);
    let register = move |_| {
        // What cannot be read as a number is sent as text, so the server's
        // 422 names the field and the rule, like every other refusal.
        let timeout = reg_timeout.get_untracked();
        let timeout_ms = match timeout.trim().parse::<i64>() {
            Ok(ms) => serde_json::json!(ms),
            Err(_) => serde_json::json!(timeout),
        };
        let interval = reg_interval.get_untracked();
        let interval_s = match interval.trim() {
            "" => serde_json::Value::Null,
            t => t
                .parse::<i64>()
                .map_or(serde_json::json!(t), |n| serde_json::json!(n)),
        };
        let body = serde_json::json!({
            "name": reg_name.get_untracked(), "url": reg_url.get_untracked(),
            "timeout_ms": timeout_ms, "enabled": true,
            "interval_s": interval_s, "generate_secret": reg_secret.get_untracked(),
        });
        leptos::task::spawn_local(async move {
            match client::send_typed::<_, berth_api::DeciderWithSecret>(
                "POST",
                &berth_api::endpoint::register_decider(),
                &body,
            )
            .await
            {
                Ok(a) => {
                    secret.set(a.secret);
                    on_change.run(());
                }
                Err(f) => error.set(Some(f.message)),
            }
        });
    };

    view! {
                    <fieldset>
        <legend>"Register a decider"</legend>
        <label for="reg-name">"Name"</label><input id="reg-name" bind:value=reg_name/>
        <label for="reg-url">"URL"</label><input id="reg-url" type="url" bind:value=reg_url/>
        <label for="reg-timeout">"Timeout (ms, 1000–25000)"</label>
        <input id="reg-timeout" inputmode="decimal" bind:value=reg_timeout/>
        <label for="reg-interval">"Run by the advice driver every (seconds, 60–604800; blank: only on request)"</label>
        <input id="reg-interval" inputmode="numeric" bind:value=reg_interval/>
        <label><input id="reg-secret" type="checkbox" bind:checked=reg_secret/>" Sign calls with a shared secret (shown once)"</label>
        <button type="button" on:click=register>"Register"</button>
    </fieldset>
    }
}

/// Run the built-ins (and the chosen externals) side by side, or score an
/// uploaded response file.
#[component]
fn Compare(
    chosen: RwSignal<Vec<String>>,
    error: RwSignal<Option<String>>,
    may_operate: Signal<bool>,
) -> impl IntoView {
    let auth = expect_context::<Auth>();
    let comparison = RwSignal::new(None::<Comparison>);
    let uploads = RwSignal::new(BTreeMap::<String, Value>::new());
    let busy = RwSignal::new(false);
    let run = move || {
        let Some(id) = auth.estate.get_untracked() else {
            return;
        };
        let body = berth_api::CompareRequest {
            responses: uploads.get_untracked(),
            external: chosen.get_untracked(),
        };
        let body = serde_json::to_string(&body).expect("a comparison request serialises");
        busy.set(true);
        error.set(None);
        leptos::task::spawn_local(async move {
            let now = crate::engine::format_time(client::eval_now());
            match client::request_text(
                "POST",
                &berth_api::endpoint::compare_deciders(&id).query("now", &now),
                Some(body),
            )
            .await
            {
                Ok(text) => match engine_result::<Comparison>(&text, "comparison") {
                    Ok(c) => comparison.set(Some(c)),
                    Err(m) => error.set(Some(m)),
                },
                Err(f) => error.set(Some(f.message)),
            }
            busy.set(false);
        });
    };
    #[allow(unused_variables)]
    let on_file = move |ev: leptos::ev::Event| {
        #[cfg(feature = "hydrate")]
        {
            use wasm_bindgen::JsCast;
            let Some(input) = ev
                .target()
                .and_then(|t| t.dyn_into::<web_sys::HtmlInputElement>().ok())
            else {
                return;
            };
            let Some(file) = input.files().and_then(|f| f.get(0)) else {
                return;
            };
            let name = file.name();
            let name = name.strip_suffix(".json").unwrap_or(&name).to_string();
            leptos::task::spawn_local(async move {
                match client::file_text(file).await {
                    Ok(text) => match serde_json::from_str::<Value>(&text) {
                        Ok(v) => {
                            uploads.update(|u| { u.insert(name, v); });
                            run();
                        }
                        Err(e) => error.set(Some(format!(
                            "{name}.json is not JSON ({e}). A response file holds what a decider answers: {{\"proposals\": [{{\"serviceId\": \"…\", \"to\": \"…\", \"reason\": \"…\"}}]}} (docs/deciders.md); fix the file and pick it again."
                        ))),
                    },
                    Err(f) => error.set(Some(f.message)),
                }
            });
        }
    };

    view! {
        <section aria-labelledby="cmp-h">
            <h2 id="cmp-h">"Compare"</h2>
            <Show when=move || may_operate.get() fallback=|| view! { <p class="hint">"Running deciders needs an operator or administrator."</p> }>
                <button type="button" on:click=move |_| run() disabled=move || busy.get() || auth.estate.get().is_none()>
                    {move || if busy.get() { "Running the deciders…" } else { "Run the deciders" }}
                </button>
                " "
                <label for="upload">"Score a response file: "</label>
                <input id="upload" type="file" accept=".json,application/json" on:change=on_file/>
            </Show>
            {move || comparison.get().map(|c| view! { <ComparisonView c=c/> })}
        </section>
    }
}

/// The request a decider receives, laid out for reading, with its exact
/// bytes to copy or download.
#[component]
fn RequestPreview(error: RwSignal<Option<String>>) -> impl IntoView {
    let auth = expect_context::<Auth>();
    let preview = RwSignal::new(None::<String>);
    let copied = RwSignal::new(None::<&'static str>);
    let show_preview = move |_| {
        let Some(id) = auth.estate.get_untracked() else {
            return;
        };
        leptos::task::spawn_local(async move {
            let now = crate::engine::format_time(client::eval_now());
            match client::request_text(
                "GET",
                &berth_api::endpoint::get_decider_request(&id).query("now", &now),
                None,
            )
            .await
            {
                // The result's own bytes, as the server wrote them, not a
                // re-serialisation: what a decider receives, byte for byte.
                Ok(text) => match result_bytes(&text) {
                    Some(r) => preview.set(Some(r.to_string())),
                    None => error.set(Some(
                        "The server's preview answer has no result; reload the page.".into(),
                    )),
                },
                Err(f) => error.set(Some(f.message)),
            }
        });
    };
    view! {
        <section aria-labelledby="pre-h">
            <h2 id="pre-h">"Request preview"</h2>
            <p>"The request a decider receives for this estate, exactly as it would be sent."</p>
            // Off until the estate is known: a click before would do nothing.
            <button type="button" on:click=show_preview disabled=move || auth.estate.get().is_none()>"Show the request"</button>
            {move || preview.get().map(|p| {
                let size = p.len();
                // A data: link doubles the bytes and browsers refuse
                // addresses past about 2 MB: past 1 MB, no link, and
                // the page says where to get the bytes instead.
                let href = (size <= 1_000_000).then(|| format!("data:application/json;charset=utf-8,{}", crate::common::encode(&p)));
                let bytes = p.clone();
                view! {
                    <p class="hint">{format!("{} bytes as sent; laid out below for reading (the download and the copy are the exact bytes).", size)}</p>
                    <p>
                        <button type="button" class="small" on:click=move |_| {
                            let b = bytes.clone();
                            leptos::task::spawn_local(async move {
                                copied.set(Some(if client::copy_text(&b).await { "Copied." } else { "The browser refused the clipboard: use the download." }));
                            });
                        }>"Copy the request"</button>
                        " "
                        {match href {
                            Some(href) => view! { <a class="button small" data-testid="preview-download" download="berth-decider-request.json" href=href>"Download the request"</a> }.into_any(),
                            None => view! { <span class="hint">"Too large to download from here: use Copy, or "<code>"GET /api/estates/ID/preview"</code>" (its "<code>"result"</code>")."</span> }.into_any(),
                        }}
                        " "
                        <span role="status">{move || copied.get()}</span>
                    </p>
                    <pre class="preview" data-testid="preview" data-bytes=p.len() tabindex="0">{pretty_json(&p)}</pre>
                }
            })}
        </section>
    }
}

/// The leaderboard of the built-in deciders (quick or default suite).
#[component]
fn LeaderboardSection(error: RwSignal<Option<String>>, may_operate: Signal<bool>) -> impl IntoView {
    let auth = expect_context::<Auth>();
    let board_result = RwSignal::new(None::<Leaderboard>);
    let board_busy = RwSignal::new(false);
    let board_suite = RwSignal::new("quick".to_string());
    let run_board = move |_| {
        let Some(id) = auth.estate.get_untracked() else {
            return;
        };
        let suite = board_suite.get_untracked();
        board_busy.set(true);
        error.set(None);
        leptos::task::spawn_local(async move {
            let now = crate::engine::format_time(client::eval_now());
            match client::request_text(
                "POST",
                &berth_api::endpoint::decider_leaderboard(&id)
                    .query("now", &now)
                    .query("suite", &suite),
                None,
            )
            .await
            {
                Ok(text) => match engine_result::<Leaderboard>(&text, "leaderboard") {
                    Ok(b) => board_result.set(Some(b)),
                    Err(m) => error.set(Some(m)),
                },
                Err(f) => error.set(Some(f.message)),
            }
            board_busy.set(false);
        });
    };
    view! {
        <section aria-labelledby="board-h">
            <h2 id="board-h">"Leaderboard"</h2>
            <p>"Every built-in decider over the generated benchmark estates and this one, under this estate's policy: its share of the best improvement any decider reached on each estate (the proven optimum where "<code>"optimum"</code>" proved it) and of the proven lower bound. The same figures as "<code>"berth bench-deciders"</code>" without "<code>"--now"</code>"."</p>
            <Show when=move || may_operate.get() fallback=|| view! { <p class="hint">"Running the leaderboard needs an operator or administrator."</p> }>
                <label for="board-suite">"Suite "</label>
                <select id="board-suite" on:change=move |ev| board_suite.set(event_target_value(&ev)) prop:value=move || board_suite.get()>
                    <option value="quick">"quick: 13 generated estates + this one (seconds)"</option>
                    <option value="default">"default: 88 generated estates + this one (ten seconds or so)"</option>
                </select>
                " "
                <button type="button" on:click=run_board disabled=move || board_busy.get() || auth.estate.get().is_none()>
                    {move || if board_busy.get() { "Running the leaderboard…" } else { "Run the leaderboard" }}
                </button>
            </Show>
            {move || board_result.get().map(|b| view! { <LeaderboardView b=b/> })}
        </section>
    }
}

/// The bytes of `result` in a result envelope (its last field).
pub fn result_bytes(envelope: &str) -> Option<&str> {
    let key = ",\"result\":";
    let at = envelope.find(key)? + key.len();
    envelope[at..].trim_end().strip_suffix('}')
}

/// The engine's result in a result envelope (`berth_api::ResultEnvelope`),
/// read as the engine's own type from the result's exact bytes; `what`
/// names the answer in the sentence an error becomes.
pub fn engine_result<T: serde::de::DeserializeOwned>(
    envelope: &str,
    what: &str,
) -> Result<T, String> {
    let env: berth_api::ResultEnvelope = serde_json::from_str(envelope)
        .map_err(|_| format!("The server's {what} answer has no result; reload the page."))?;
    serde_json::from_str(env.result.get()).map_err(|e| {
        format!(
            "The server's {what} could not be read ({e}); is the server older than this page? Reload it."
        )
    })
}

/// A count of a decider's result as the comparison shows it ("—" for a
/// decider without one, like the other rows; it used to read "null").
fn count(d: &DeciderEntry, f: impl Fn(&berth_engine::decider::DeciderResult) -> usize) -> String {
    d.result
        .as_ref()
        .map_or_else(|| "—".to_string(), |r| f(r).to_string())
}

/// A signed figure of a decider's result, or "—" without one.
fn figure(
    d: &DeciderEntry,
    digits: usize,
    f: impl Fn(&berth_engine::decider::DeciderResult) -> f64,
) -> String {
    d.result
        .as_ref()
        .map_or_else(|| "—".to_string(), |r| signed(f(r), digits))
}

/// One accepted proposal's headline: `step. service: from → to`.
fn accepted_line(a: &Accepted) -> String {
    format!("{}. {}: {} → {}", a.step, a.service, a.from, a.to)
}

/// A refused proposal's `service → cluster`, as proposed.
fn refused_what(r: &Refused) -> String {
    format!(
        "{} → {}",
        r.service_id.as_deref().unwrap_or("(no service)"),
        r.to.as_deref().unwrap_or("(no cluster)")
    )
}

#[component]
fn ComparisonView(c: Comparison) -> impl IntoView {
    let ds = c.deciders;
    let head = ds
        .iter()
        .map(|d| view! { <th scope="col">{d.name.clone()}</th> })
        .collect_view();
    let row = |label: &'static str, f: &dyn Fn(&DeciderEntry) -> String| {
        // A signed figure is a saving (issue 34): drawn good when
        // positive, bad when negative.
        let cells = ds
            .iter()
            .map(|d| {
                let t = f(d);
                let class =
                    if t.starts_with('+') && t.trim_start_matches(['+', '0', '.']).is_empty() {
                        ""
                    } else if t.starts_with('+') {
                        "delta good"
                    } else if t.starts_with('−') {
                        "delta bad"
                    } else {
                        ""
                    };
                view! { <td class=class>{t}</td> }
            })
            .collect_view();
        view! { <tr><th scope="row">{label}</th>{cells}</tr> }
    };
    let rows = view! {
        {row("proposals", &|d| count(d, |r| r.proposals))}
        {row("accepted", &|d| count(d, |r| r.accepted_count))}
        {row("refused", &|d| count(d, |r| r.refused_count))}
        {row("gain (points)", &|d| figure(d, 1, |r| r.projected_gain))}
        {row("cross-site traffic cut (MB/s)", &|d| figure(d, 2, |r| -r.cross_site_mb_s_change))}
        {row("confidence", &|d| d.result.as_ref().and_then(|r| r.weakest_confidence).map_or("—", |c| c.as_str()).to_string())}
        {row("time (ms)", &|d| fixed(d.run_time_ms, 1))}
        {row("error", &|d| d.error.as_ref().map(|e| e.message.clone()).unwrap_or_default())}
    };
    let per_decider = ds
        .iter()
        .map(|d| view! { <DeciderDetail d=d.clone()/> })
        .collect_view();
    view! {
        <table class="compare" data-testid="comparison">
            <thead><tr><th scope="col">"decider"</th>{head}</tr></thead>
            <tbody>{rows}</tbody>
        </table>
        <h3>"Each decider's proposals"</h3>
        {per_decider}
    }
}

/// One decider's accepted proposals (with a way to take them into a
/// what-if) and its refused ones with their reasons.
#[component]
fn DeciderDetail(d: DeciderEntry) -> impl IntoView {
    let auth = expect_context::<Auth>();
    let scenario = expect_context::<Scenario>();
    let navigate = use_navigate();
    let DeciderEntry {
        name,
        error,
        note,
        result,
        ..
    } = d;
    let (accepted, refused) = result.map_or_else(Default::default, |r| (r.accepted, r.refused));
    let steps: Vec<Step> = accepted
        .iter()
        .map(|a| Step::Move {
            service: a.service.clone(),
            to: a.to.clone(),
        })
        .collect();
    let n = steps.len();
    let scenario_name = format!("decider-{name}");
    let take = move |_| {
        scenario.steps.set(steps.clone());
        scenario.name.set(scenario_name.clone());
        let to = crate::common::keep_query(
            "/whatif",
            auth.estate.get_untracked().as_deref(),
            client::query_param("now").as_deref(),
        );
        navigate(&to, Default::default());
    };
    let accepted_items = accepted
        .iter()
        .map(|a| {
            let weak = a.evidence.clone();
            let reason = a.reason.clone();
            view! {
                <li>
                    <strong>{accepted_line(a)}</strong>
                    {format!(" — gain {} points, confidence {}", signed(a.gain, 1), a.confidence.as_str())}
                    {(!a.clears_bars).then(|| view! { " " <span class="badge warn">"below the bars"</span> })}
                    {(!reason.is_empty()).then(|| view! { <br/><span class="hint">{format!("“{reason}”")}</span> })}
                    {weak.map(|e| view! { <br/><span class="evidence">{e}</span> })}
                </li>
            }
        })
        .collect_view();
    let refused_items = refused
        .iter()
        .map(|r| {
            let what = refused_what(r);
            view! { <li><strong>{what}</strong>" — "<span class="badge warn">{r.code.as_str()}</span>" "{r.message.clone()}</li> }
        })
        .collect_view();
    let has_error = error.is_some();
    let headline = if has_error {
        "no usable reply".to_string()
    } else {
        format!("{n} accepted, {} refused", refused.len())
    };
    view! {
        <details class="decider-detail" data-testid=format!("decider-{name}")>
            <summary aria-label=format!("{name}'s proposals: {headline}")><strong>{name.clone()}</strong>{format!(" — {headline}")}</summary>
            {note.map(|n| view! { <p class="hint">{n}</p> })}
            {if has_error {
                view! { <p class="error">{format!("No usable reply: {}", error.map(|e| e.message).unwrap_or_default())}</p> }.into_any()
            } else if n == 0 {
                view! { <p class="empty">"No proposal was accepted."</p> }.into_any()
            } else {
                view! {
                    <ol class="accepted" data-testid=format!("accepted-{name}")>{accepted_items}</ol>
                    <button type="button" class="small" on:click=take>{format!("Take {name}'s {n} move{} into a what-if", if n == 1 { "" } else { "s" })}</button>
                }.into_any()
            }}
            {(!refused.is_empty()).then(|| view! {
                <p>{format!("Refused ({}):", refused.len())}</p>
                <ul class="refused" data-testid=format!("refused-{name}")>{refused_items}</ul>
            })}
        </details>
    }
}

/// The leaderboard as the CLI prints it: one row per decider.
#[component]
fn LeaderboardView(b: Leaderboard) -> impl IntoView {
    let summary = board::summary(&b);
    let rows = b
        .deciders
        .iter()
        .map(|d| {
            let mut refused = board::codes(&d.refused_by_code);
            if !d.errors.is_empty() {
                refused.push_str(&format!("; errors: {}", board::codes(&d.errors)));
            }
            // A share bar: the median share of the reference, 0–100 %.
            let w = d.median.map_or(0.0, |m| (m.clamp(0.0, 1.0) * 100.0).round());
            view! {
                <tr data-decider=d.name.clone()>
                    <th scope="row">{d.name.clone()}</th>
                    <td class="n"><span class="loadbar" aria-hidden="true"><span style=format!("width:{w}%")></span></span>{board::pct(d.median)}</td>
                    <td class="n">{board::pct(d.p5)}</td>
                    <td class="n">{board::pct(d.mean)}</td>
                    <td class="n">{format!("{} of {}", d.at_reference, b.counted)}</td>
                    <td class="n">{board::pct(d.bound_median)}</td>
                    <td class="n">{board::ms(d.run_time_ms_median)}</td>
                    <td>{refused}</td>
                </tr>
            }
        })
        .collect_view();
    view! {
        <div class="table-wrap">
            <table class="compare" data-testid="leaderboard" data-cases=b.cases>
                <thead><tr>
                    <th scope="col">"decider"</th><th scope="col">"median share"</th><th scope="col">"p5 share"</th>
                    <th scope="col">"mean share"</th><th scope="col">"at reference"</th><th scope="col">"share of bound (median)"</th>
                    <th scope="col">"median time (ms)"</th><th scope="col">"refusals by code"</th>
                </tr></thead>
                <tbody>{rows}</tbody>
            </table>
        </div>
        <ul class="hint">{summary.into_iter().map(|l| view! { <li>{l}</li> }).collect_view()}</ul>
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use berth_engine::decider::{DeciderError, External};
    use berth_engine::{estate, front, Format, Policy};

    #[test]
    fn the_result_bytes_are_cut_out_of_the_envelope_unchanged() {
        let env = r#"{"estate":"s","now":"x","result_digest":"d","result":{"b":1,"a":[2]}}"#;
        assert_eq!(super::result_bytes(env), Some(r#"{"b":1,"a":[2]}"#));
        assert_eq!(super::result_bytes("{}"), None);
    }

    /// The server's answer to `POST …/compare` on the sample: the front
    /// end's bytes in a result envelope, with a file that did not read.
    fn compare_answer() -> (String, String) {
        let e = estate::load(
            include_str!("../../../examples/estates/sample.json"),
            Format::Json,
        )
        .unwrap();
        let p = Policy::default();
        let now = estate::parse_time("2026-11-30T04:05:00Z").unwrap();
        let broken = External {
            name: "broken".into(),
            response: Err(DeciderError {
                code: "unreadable".into(),
                message: "not JSON".into(),
            }),
            run_time_ms: None,
        };
        let bytes = front::compare(&e, &p, now, &[broken], &mut front::no_clock);
        let env = berth_api::ResultEnvelope::write(
            "sample",
            1,
            "c",
            &p.digest(),
            "2026-11-30T04:05:00Z",
            "d",
            &bytes,
        );
        (env, bytes)
    }

    #[test]
    fn a_comparison_reads_typed_from_its_envelope() {
        let (env, bytes) = compare_answer();
        let c: Comparison = engine_result(&env, "comparison").unwrap();
        // Read whole: every member the bytes hold, as reading them as JSON
        // gives it. (Not the same bytes written again: serde_json reads
        // some floats a unit in the last place off, so a page never
        // re-serialises a result; digests come from the envelope's bytes.)
        assert_eq!(
            serde_json::to_value(&c).unwrap(),
            serde_json::from_str::<serde_json::Value>(&bytes).unwrap()
        );
        let by = |n: &str| c.deciders.iter().find(|d| d.name == n).unwrap();
        let (base, talker, broken) = (by("baseline"), by("heaviest-talker"), by("broken"));
        let r = base.result.as_ref().unwrap();
        assert_eq!(
            count(base, |r| r.accepted_count),
            r.accepted.len().to_string()
        );
        assert_eq!(
            figure(base, 1, |r| r.projected_gain),
            signed(r.projected_gain, 1)
        );
        let a = &r.accepted[0];
        assert_eq!(
            accepted_line(a),
            format!("1. {}: {} → {}", a.service, a.from, a.to)
        );
        let x = &talker.result.as_ref().unwrap().refused[0];
        assert_eq!(
            refused_what(x),
            format!(
                "{} → {}",
                x.service_id.as_deref().unwrap(),
                x.to.as_deref().unwrap()
            )
        );
        // A decider without a result: its error, and the rows it has
        // always shown.
        assert!(broken.result.is_none());
        assert_eq!(broken.error.as_ref().unwrap().message, "not JSON");
        assert_eq!(count(broken, |r| r.proposals), "—");
        assert_eq!(figure(broken, 2, |r| r.cross_site_mb_s_change), "—");
    }

    #[test]
    fn envelope_problems_are_sentences() {
        let (env, _) = compare_answer();
        let e = engine_result::<Leaderboard>(&env, "leaderboard").unwrap_err();
        assert!(
            e.starts_with("The server's leaderboard could not be read ("),
            "{e}"
        );
        let e = engine_result::<Comparison>("{}", "comparison").unwrap_err();
        assert_eq!(
            e,
            "The server's comparison answer has no result; reload the page."
        );
    }
}
