//! Deciders: the built-ins and any registered external deciders compared
//! side by side (scored by the server on equal footing), the refused
//! proposals with their reasons, the request Preview exactly as a decider
//! receives it, and uploaded response files scored like the rest.

use std::collections::BTreeMap;

use leptos::prelude::*;
use serde_json::Value;

use super::{arr, num, s, signed};
use crate::client;
use crate::common::{Auth, ErrorLine, Gate};

#[component]
pub fn Deciders() -> impl IntoView {
    let auth = expect_context::<Auth>();
    let comparison = RwSignal::new(None::<Value>);
    let registered = RwSignal::new(None::<Result<Vec<Value>, String>>);
    let chosen = RwSignal::new(Vec::<String>::new());
    let uploads = RwSignal::new(BTreeMap::<String, Value>::new());
    let preview = RwSignal::new(None::<String>);
    let error = RwSignal::new(None::<String>);
    let busy = RwSignal::new(false);
    let secret = RwSignal::new(None::<String>);
    let may_operate = move || matches!(auth.session.get(), Some(Some(s)) if s.may_operate());
    let is_admin = move || matches!(auth.session.get(), Some(Some(s)) if s.is_admin());

    let load_registered = move || {
        leptos::task::spawn_local(async move {
            registered.set(Some(match client::get("/api/deciders").await {
                Ok(v) => Ok(arr(&v["deciders"])),
                Err(f) if f.status == 404 => {
                    Err("This server has no external deciders registered.".into())
                }
                Err(f) => Err(f.message),
            }));
        });
    };
    Effect::new(move |_| load_registered());

    let run = move || {
        let Some(id) = auth.estate.get_untracked() else {
            return;
        };
        let mut body = serde_json::json!({});
        let ups = uploads.get_untracked();
        if !ups.is_empty() {
            body["responses"] = serde_json::to_value(ups).expect("serialises");
        }
        let ext = chosen.get_untracked();
        if !ext.is_empty() {
            body["external"] = serde_json::to_value(ext).expect("serialises");
        }
        busy.set(true);
        error.set(None);
        leptos::task::spawn_local(async move {
            let now = crate::engine::format_time(client::eval_now());
            match client::request(
                "POST",
                &format!("/api/estates/{id}/compare?now={now}"),
                Some(body.to_string()),
            )
            .await
            {
                Ok(v) => comparison.set(Some(v["result"].clone())),
                Err(f) => error.set(Some(f.message)),
            }
            busy.set(false);
        });
    };
    let show_preview = move |_| {
        let Some(id) = auth.estate.get_untracked() else {
            return;
        };
        leptos::task::spawn_local(async move {
            let now = crate::engine::format_time(client::eval_now());
            match client::request_text("GET", &format!("/api/estates/{id}/preview?now={now}"), None)
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
                        Err(e) => error.set(Some(format!("{name}: not JSON ({e}); a response file is the JSON a decider answers (docs/deciders.md)"))),
                    },
                    Err(f) => error.set(Some(f.message)),
                }
            });
        }
    };

    // Admin: register, rotate, remove.
    let reg_name = RwSignal::new(String::new());
    let reg_url = RwSignal::new(String::new());
    // 5 s: room for a decider doing real work, well inside the 25 s limit.
    let reg_timeout = RwSignal::new("5".to_string());
    // Blank: run on request only, never by the advice driver.
    let reg_interval = RwSignal::new(String::new());
    let reg_secret = RwSignal::new(true);
    let register = move |_| {
        // What cannot be read as a number is sent as text, so the server's
        // 422 names the field and the rule, like every other refusal.
        let timeout = reg_timeout.get_untracked();
        let timeout_ms = match timeout.trim().parse::<f64>() {
            Ok(s) => serde_json::json!((s * 1000.0).round() as i64),
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
            match client::request("POST", "/api/deciders", Some(body.to_string())).await {
                Ok(v) => {
                    secret.set(v["secret"].as_str().map(str::to_string));
                    load_registered();
                }
                Err(f) => error.set(Some(f.message)),
            }
        });
    };

    view! {
        <h1>"Deciders"</h1>
        <Gate>
            <ErrorLine message=error.into()/>
            <section aria-labelledby="reg-h">
                <h2 id="reg-h">"Registered external deciders"</h2>
                {move || match registered.get() {
                    None => view! { <p role="status">"Asking the server…"</p> }.into_any(),
                    Some(Err(m)) => view! { <p data-testid="no-externals">{m}</p> }.into_any(),
                    Some(Ok(list)) if list.is_empty() => view! { <p data-testid="no-externals">"None registered."</p> }.into_any(),
                    Some(Ok(list)) => list.into_iter().map(|d| {
                        let name = s(&d["name"]);
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
                                <label for=format!("ext-{n3}")>{format!("{} — {} (timeout {} ms{}, key {})", name, s(&d["url"]), d["timeout_ms"],
                                    if d["enabled"].as_bool() == Some(false) { ", disabled" } else { "" }, s(&d["secret_fingerprint"]))}</label>
                                <Show when=is_admin>
                                    {
                                        let n = n4.clone();
                                        let n5 = n4.clone();
                                        view! {
                                            <button type="button" class="small" on:click=move |_| {
                                                let n = n.clone();
                                                leptos::task::spawn_local(async move {
                                                    match client::request("POST", &format!("/api/deciders/{n}/secret"), Some(r#"{"overlap_s":3600}"#.into())).await {
                                                        Ok(v) => secret.set(v["secret"].as_str().map(str::to_string)),
                                                        Err(f) => error.set(Some(f.message)),
                                                    }
                                                });
                                            }>"Rotate secret"</button>
                                            <button type="button" class="small" on:click=move |_| {
                                                let n = n5.clone();
                                                leptos::task::spawn_local(async move {
                                                    match client::request("DELETE", &format!("/api/deciders/{n}"), None).await {
                                                        Ok(_) => load_registered(),
                                                        Err(f) => error.set(Some(f.message)),
                                                    }
                                                });
                                            }>"Remove"</button>
                                        }
                                    }
                                </Show>
                            </div>
                        }
                    }).collect_view().into_any(),
                }}
                {move || secret.get().map(|k| view! { <p class="notice" role="status">"The decider's secret, shown once — copy it now: "<code>{k}</code></p> })}
                <Show when=move || is_admin() && matches!(registered.get(), Some(Ok(_)))>
                    <fieldset>
                        <legend>"Register a decider"</legend>
                        <label for="reg-name">"Name"</label><input id="reg-name" bind:value=reg_name/>
                        <label for="reg-url">"URL"</label><input id="reg-url" type="url" bind:value=reg_url/>
                        <label for="reg-timeout">"Timeout (seconds, 1–25)"</label>
                        <input id="reg-timeout" inputmode="decimal" bind:value=reg_timeout/>
                        <label for="reg-interval">"Run by the advice driver every (seconds, 60–604800; blank: only on request)"</label>
                        <input id="reg-interval" inputmode="numeric" bind:value=reg_interval/>
                        <label><input id="reg-secret" type="checkbox" bind:checked=reg_secret/>" Sign calls with a shared secret (shown once)"</label>
                        <button type="button" on:click=register>"Register"</button>
                    </fieldset>
                </Show>
            </section>
            <section aria-labelledby="cmp-h">
                <h2 id="cmp-h">"Compare"</h2>
                <Show when=may_operate fallback=|| view! { <p class="hint">"Running deciders needs an operator or administrator."</p> }>
                    <button type="button" on:click=move |_| run() disabled=move || busy.get()>
                        {move || if busy.get() { "Running the deciders…" } else { "Run the deciders" }}
                    </button>
                    " "
                    <label for="upload">"Score a response file: "</label>
                    <input id="upload" type="file" accept=".json,application/json" on:change=on_file/>
                </Show>
                {move || comparison.get().map(|c| view! { <ComparisonView c=c/> })}
            </section>
            <section aria-labelledby="pre-h">
                <h2 id="pre-h">"Request preview"</h2>
                <p>"The request a decider receives for this estate, exactly as it would be sent."</p>
                <button type="button" on:click=show_preview>"Show the request"</button>
                {move || preview.get().map(|p| view! { <pre class="preview" data-testid="preview" tabindex="0">{p}</pre> })}
            </section>
        </Gate>
    }
}

/// The bytes of `result` in a result envelope (its last field).
pub fn result_bytes(envelope: &str) -> Option<&str> {
    let key = ",\"result\":";
    let at = envelope.find(key)? + key.len();
    envelope[at..].trim_end().strip_suffix('}')
}

#[component]
fn ComparisonView(c: Value) -> impl IntoView {
    let ds = arr(&c["deciders"]);
    let head = ds
        .iter()
        .map(|d| view! { <th scope="col">{s(&d["name"])}</th> })
        .collect_view();
    let row = |label: &'static str, f: &dyn Fn(&Value) -> String| {
        let cells = ds.iter().map(|d| view! { <td>{f(d)}</td> }).collect_view();
        view! { <tr><th scope="row">{label}</th>{cells}</tr> }
    };
    let rows = view! {
        {row("proposals", &|d| d["proposals"].to_string())}
        {row("accepted", &|d| d["accepted_count"].to_string())}
        {row("refused", &|d| d["refused_count"].to_string())}
        {row("gain (points)", &|d| d["projected_gain"].as_f64().map(|g| signed(g, 1)).unwrap_or_else(|| "—".into()))}
        {row("cross-site change (MB/s)", &|d| d["cross_site_mb_s_change"].as_f64().map(|g| signed(g, 2)).unwrap_or_else(|| "—".into()))}
        {row("confidence", &|d| d["weakest_confidence"].as_str().unwrap_or("—").to_string())}
        {row("time (ms)", &|d| num(&d["run_time_ms"], 1))}
        {row("error", &|d| if d["error"].is_null() { String::new() } else { s(&d["error"]["message"]) })}
    };
    let refused = ds
        .iter()
        .flat_map(|d| {
            let name = s(&d["name"]);
            arr(&d["refused"]).into_iter().map(move |r| {
                let what = format!(
                    "{}: {} → {}",
                    name,
                    r["serviceId"].as_str().unwrap_or("?"),
                    r["to"].as_str().unwrap_or("?")
                );
                view! { <li><strong>{what}</strong>" — "<span class="badge warn">{s(&r["code"])}</span>" "{s(&r["message"])}</li> }
            })
        })
        .collect_view();
    view! {
        <table class="compare" data-testid="comparison">
            <thead><tr><th scope="col">"decider"</th>{head}</tr></thead>
            <tbody>{rows}</tbody>
        </table>
        <h3>"Proposals that were refused"</h3>
        <ul data-testid="refused">{refused}</ul>
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_result_bytes_are_cut_out_of_the_envelope_unchanged() {
        let env = r#"{"estate":"s","now":"x","result_digest":"d","result":{"b":1,"a":[2]}}"#;
        assert_eq!(super::result_bytes(env), Some(r#"{"b":1,"a":[2]}"#));
        assert_eq!(super::result_bytes("{}"), None);
    }
}
