//! Admin (administrators only): user accounts — list, create, delete —,
//! API tokens — list, create (the token itself shown once, with a copy
//! button), revoke after a confirmation; revoked tokens stay listed as
//! revoked — and notification channels — list, create (a signed
//! webhook's secret shown once), delete (docs/notifications.md).

use berth_api::{
    ChannelKind, CreatedToken, CreatedUser, NewNotificationChannel, NewToken, NewUser,
    NotificationChannel, NotificationChannelList, NotificationChannelWithSecret, Role, TokenInfo,
    TokenList, User, UserList,
};
use leptos::prelude::*;

use crate::client;
use crate::common::{problem_at, refusals_at_fields, Auth, FieldProblem};

/// The shortest password the server accepts (the engine's rule, which
/// both use), said next to the field so nobody learns it from a refusal.
use berth_engine::accounts::MIN_PASSWORD_CHARS;

/// A token's state as the list shows it.
pub fn token_state(t: &TokenInfo) -> String {
    match &t.revoked_at {
        Some(at) => format!("revoked {at}"),
        None => "live".to_string(),
    }
}

/// The cluster ids typed in the token form: separated by commas or
/// spaces, empty pieces dropped, each once, in the order typed.
pub fn cluster_list(typed: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for piece in typed.split(|c: char| c == ',' || c.is_whitespace()) {
        if !piece.is_empty() && !out.iter().any(|c| c == piece) {
            out.push(piece.to_string());
        }
    }
    out
}

/// Why a new token's fields would be refused, before asking the server
/// (its rules in `create_token`).
pub fn token_problem(
    name: &str,
    role: Role,
    estate: &str,
    clusters: &[String],
) -> Option<&'static str> {
    if name.trim().is_empty() {
        return Some("Give the token a name (who or what uses it).");
    }
    if role == Role::Agent && estate.is_empty() {
        return Some("An agent token must be scoped to one estate: choose it.");
    }
    if role == Role::Agent && clusters.is_empty() {
        return Some(
            "An agent token must name the cluster(s) its agent reports for: every write outside them is refused.",
        );
    }
    if role != Role::Agent && !clusters.is_empty() {
        return Some("Only agent tokens name clusters: clear the clusters field.");
    }
    if role == Role::Admin && !estate.is_empty() {
        return Some(
            "An admin token cannot be scoped to one estate: administration is estate-wide.",
        );
    }
    None
}

#[component]
pub fn AdminPage() -> impl IntoView {
    let auth = expect_context::<Auth>();
    view! {
        <h1>"Admin"</h1>
        {move || match auth.session.get() {
            None => view! { <p class="loading" role="status">"Loading…"</p> }.into_any(),
            Some(None) => view! {
                <p class="notice" role="status">"You are not signed in. "<a href="/login">"Sign in"</a>" as an administrator."</p>
            }.into_any(),
            Some(Some(s)) if !s.is_admin() => view! {
                <p class="notice" role="status" data-testid="admins-only">
                    {format!("This page is for administrators only: you are signed in as {} ({}). Ask an administrator to create users or tokens.", s.subject, s.role)}
                </p>
            }.into_any(),
            Some(Some(_)) => view! { <Users/><Tokens/><Channels/> }.into_any(),
        }}
    }
}

/// One user's row: name, role, created, and Delete (after a confirmation;
/// not for oneself).
fn user_row(
    u: User,
    me: Signal<String>,
    confirming: RwSignal<Option<String>>,
    on_delete: Callback<String>,
) -> impl IntoView {
    let who = u.name.clone();
    let (w1, w2, w3) = (who.clone(), who.clone(), who.clone());
    view! {
        <tr data-user=who.clone()>
            <th scope="row">{who.clone()}</th>
            <td>{u.role.to_string()}</td>
            <td title=u.created_at.clone()>{crate::common::utc_words(&u.created_at)}</td>
            <td>
                {move || if me.get() == w1 {
                    view! { <span class="hint">"you"</span> }.into_any()
                } else if confirming.get().as_deref() == Some(w1.as_str()) {
                    let (a, b) = (w2.clone(), w2.clone());
                    view! {
                        <span class="confirm">{format!("Delete {a}? Their sessions end. ")}
                            <button type="button" class="danger" on:click=move |_| on_delete.run(b.clone())>"Yes, delete"</button>" "
                            <button type="button" class="small" on:click=move |_| confirming.set(None)>"Cancel"</button>
                        </span>
                    }.into_any()
                } else {
                    let w = w3.clone();
                    view! { <button type="button" class="small" on:click=move |_| confirming.set(Some(w.clone()))>{format!("Delete {w3}")}</button> }.into_any()
                }}
            </td>
        </tr>
    }
}

#[component]
fn Users() -> impl IntoView {
    let auth = expect_context::<Auth>();
    let me = move || match auth.session.get() {
        Some(Some(s)) => s.subject,
        _ => String::new(),
    };
    let users = RwSignal::new(Vec::<User>::new());
    let error = RwSignal::new(None::<String>);
    let done = RwSignal::new(None::<String>);
    let name = RwSignal::new(String::new());
    let role = RwSignal::new(Role::Viewer);
    let password = RwSignal::new(String::new());
    let confirming = RwSignal::new(None::<String>);
    let load = move || {
        leptos::task::spawn_local(async move {
            match client::get_typed::<UserList>(&berth_api::endpoint::list_users()).await {
                Ok(v) => users.set(v.users),
                Err(f) => error.set(Some(f.message)),
            }
        });
    };
    Effect::new(move |_| load());
    // Checked as typed by the engine's rules (the server's own): a field's
    // problem shows once the field is left or the form is sent; a server
    // refusal lands at its field in the same words.
    let name_left = RwSignal::new(false);
    let password_left = RwSignal::new(false);
    let refused = RwSignal::new(Vec::<(String, String)>::new());
    let typed =
        move || berth_engine::accounts::new_user_problems(name.get().trim(), &password.get());
    let name_problem =
        Signal::derive(move || problem_at("/name", &typed(), name_left.get(), &refused.get()));
    let password_problem = Signal::derive(move || {
        problem_at("/password", &typed(), password_left.get(), &refused.get())
    });
    let create = move |ev: leptos::ev::SubmitEvent| {
        ev.prevent_default();
        error.set(None);
        done.set(None);
        refused.set(Vec::new());
        name_left.set(true);
        password_left.set(true);
        if !typed().is_empty() {
            return;
        }
        let body = NewUser {
            name: name.get_untracked().trim().to_string(),
            role: role.get_untracked().as_str().to_string(),
            password: password.get_untracked(),
        };
        leptos::task::spawn_local(async move {
            match client::send_typed::<_, CreatedUser>(
                "POST",
                &berth_api::endpoint::create_user(),
                &body,
            )
            .await
            {
                Ok(v) => {
                    done.set(Some(format!("User {} ({}) created.", v.name, v.role)));
                    name.set(String::new());
                    password.set(String::new());
                    name_left.set(false);
                    password_left.set(false);
                    load();
                }
                Err(f) => {
                    let at = refusals_at_fields(&f);
                    if at.is_empty() {
                        error.set(Some(f.message));
                    } else {
                        refused.set(at);
                    }
                }
            }
        });
    };
    let delete = Callback::new(move |who: String| {
        error.set(None);
        done.set(None);
        leptos::task::spawn_local(async move {
            match client::request("DELETE", &berth_api::endpoint::delete_user(&who), None).await {
                Ok(_) => {
                    done.set(Some(format!("User {who} deleted.")));
                    confirming.set(None);
                    load();
                }
                Err(f) => error.set(Some(f.message)),
            }
        });
    });
    view! {
        <section aria-labelledby="users-h">
            <h2 id="users-h">"Users"</h2>
            <table class="accounts" data-testid="users">
                <thead><tr><th scope="col">"name"</th><th scope="col">"role"</th><th scope="col">"created"</th><th scope="col"><span class="visually-hidden">"actions"</span></th></tr></thead>
                <tbody>
                    {move || users.get().into_iter().map(|u| user_row(u, Signal::derive(me), confirming, delete)).collect_view()}
                </tbody>
            </table>
            <form class="inline-form" on:submit=create>
                <h3>"Create a user"</h3>
                <div class="entry-grid">
                    <div class="field">
                        <label for="user-name">"User name"</label>
                        <input id="user-name" autocomplete="off" bind:value=name aria-describedby="user-name-problem"
                            aria-invalid=move || if name_problem.get().is_some() { "true" } else { "false" }
                            on:blur=move |_| name_left.set(!name.get_untracked().is_empty() || password_left.get_untracked())/>
                        <span class="hint">"a–z, 0–9, '-' and '_'"</span>
                        <FieldProblem id="user-name-problem" problem=name_problem/>
                    </div>
                    <div class="field">
                        <label for="user-role">"Role"</label>
                        <select id="user-role" on:change=move |ev| role.set(Role::parse(&event_target_value(&ev)).unwrap_or(Role::Viewer)) prop:value=move || role.get().as_str()>
                            <option value="viewer">"viewer — looks"</option>
                            <option value="operator">"operator — changes estates"</option>
                            <option value="admin">"admin — also users and tokens"</option>
                        </select>
                    </div>
                    <div class="field">
                        <label for="user-password">"Password"</label>
                        <input id="user-password" type="password" autocomplete="new-password" bind:value=password aria-describedby="user-password-problem"
                            aria-invalid=move || if password_problem.get().is_some() { "true" } else { "false" }
                            on:blur=move |_| password_left.set(!password.get_untracked().is_empty())/>
                        <span class="hint">{format!("at least {MIN_PASSWORD_CHARS} characters")}</span>
                        <FieldProblem id="user-password-problem" problem=password_problem/>
                    </div>
                </div>
                <button type="submit">"Create user"</button>
            </form>
            {move || error.get().map(|m| view! { <p class="error" role="alert" data-testid="users-error">{m}</p> })}
            {move || done.get().map(|m| view! { <p class="ok-line" role="status">{m}</p> })}
        </section>
    }
}

/// One token's row: name, role, estate, clusters, created, by, state, and
/// Revoke (after a confirmation) while it is live.
fn token_row(
    t: TokenInfo,
    confirming: RwSignal<Option<String>>,
    on_revoke: Callback<String>,
) -> impl IntoView {
    let id = t.id.clone();
    let label = t.name.clone();
    let revoked = t.revoked_at.is_some();
    let (i1, i2, i3) = (id.clone(), id.clone(), id.clone());
    let l2 = label.clone();
    view! {
        <tr data-token=id.clone() class:revoked=revoked>
            <th scope="row">{label.clone()}</th>
            <td>{t.role.to_string()}</td>
            <td>{t.estate.clone().unwrap_or_else(|| "all".into())}</td>
            <td data-testid="token-clusters">{match &t.clusters {
                Some(c) if !c.is_empty() => c.join(", "),
                Some(_) => "none: it can write nothing until replaced".to_string(),
                None => "\u{2014}".to_string(),
            }}</td>
            <td title=t.created_at.clone()>{crate::common::utc_words(&t.created_at)}</td>
            <td>{t.created_by.clone()}</td>
            <td data-testid="token-state">{token_state(&t)}</td>
            <td>
                {(!revoked).then(|| view! {
                    {move || if confirming.get().as_deref() == Some(i1.as_str()) {
                        let i = i2.clone();
                        view! {
                            <span class="confirm">{format!("Revoke \u{201c}{l2}\u{201d}? Whatever uses it stops working. ")}
                                <button type="button" class="danger" on:click=move |_| on_revoke.run(i.clone())>"Yes, revoke"</button>" "
                                <button type="button" class="small" on:click=move |_| confirming.set(None)>"Cancel"</button>
                            </span>
                        }.into_any()
                    } else {
                        let i = i3.clone();
                        view! { <button type="button" class="small" on:click=move |_| confirming.set(Some(i.clone()))>{format!("Revoke {}", l2)}</button> }.into_any()
                    }}
                })}
            </td>
        </tr>
    }
}

/// A token just created, shown once with Copy and the warning.
fn once_notice(
    n: String,
    secret: String,
    shown_once: RwSignal<Option<(String, String)>>,
    copied: RwSignal<Option<bool>>,
) -> impl IntoView {
    let copy = move |_| {
        let Some((_, secret)) = shown_once.get_untracked() else {
            return;
        };
        leptos::task::spawn_local(async move {
            copied.set(Some(client::copy_text(&secret).await));
        });
    };
    view! {
        <div class="notice once" role="status" data-testid="token-once">
            <p><strong>{format!("The token \u{201c}{n}\u{201d}, shown only now:")}</strong></p>
            <p><code class="secret" data-testid="token-secret">{secret}</code>" "
                <button type="button" class="small" on:click=copy>"Copy"</button>
                {move || copied.get().map(|ok| view! { <span class="hint">{if ok { " Copied." } else { " The browser would not copy it: select it and copy by hand." }}</span> })}
            </p>
            <p class="warning">"Copy it now: it will not be shown again. Berth keeps only its hash, so a lost token cannot be recovered — revoke it and create another."</p>
            <button type="button" class="small" on:click=move |_| shown_once.set(None)>"I have stored it"</button>
        </div>
    }
}

#[component]
fn Tokens() -> impl IntoView {
    let auth = expect_context::<Auth>();
    let tokens = RwSignal::new(Vec::<TokenInfo>::new());
    let error = RwSignal::new(None::<String>);
    let name = RwSignal::new(String::new());
    let role = RwSignal::new(Role::Viewer);
    let estate = RwSignal::new(String::new());
    // An agent token's clusters, as typed (comma- or space-separated).
    let clusters = RwSignal::new(String::new());
    // The token just created: (name, secret). Shown once; gone on reload.
    let shown_once = RwSignal::new(None::<(String, String)>);
    let copied = RwSignal::new(None::<bool>);
    let confirming = RwSignal::new(None::<String>);
    let load = move || {
        leptos::task::spawn_local(async move {
            match client::get_typed::<TokenList>(&berth_api::endpoint::list_tokens()).await {
                Ok(v) => tokens.set(v.tokens),
                Err(f) => error.set(Some(f.message)),
            }
        });
    };
    Effect::new(move |_| load());
    let create = move |ev: leptos::ev::SubmitEvent| {
        ev.prevent_default();
        error.set(None);
        copied.set(None);
        let (n, r, e) = (
            name.get_untracked(),
            role.get_untracked(),
            estate.get_untracked(),
        );
        let named = cluster_list(&clusters.get_untracked());
        if let Some(m) = token_problem(&n, r, &e, &named) {
            error.set(Some(m.to_string()));
            return;
        }
        let body = NewToken {
            name: n.trim().to_string(),
            role: r.as_str().to_string(),
            estate: (!e.is_empty()).then_some(e),
            may_create_clusters: false,
            may_sync_services: false,
            // Agent tokens name the clusters their agent reports for:
            // the server refuses their writes anywhere else.
            clusters: (r == Role::Agent).then_some(named),
        };
        leptos::task::spawn_local(async move {
            match client::send_typed::<_, CreatedToken>(
                "POST",
                &berth_api::endpoint::create_token(),
                &body,
            )
            .await
            {
                Ok(v) => {
                    shown_once.set(Some((v.name, v.token)));
                    name.set(String::new());
                    clusters.set(String::new());
                    load();
                }
                Err(f) => error.set(Some(f.message)),
            }
        });
    };
    let revoke = Callback::new(move |id: String| {
        error.set(None);
        leptos::task::spawn_local(async move {
            match client::request("DELETE", &berth_api::endpoint::revoke_token(&id), None).await {
                Ok(_) => {
                    confirming.set(None);
                    load();
                }
                Err(f) => error.set(Some(f.message)),
            }
        });
    });
    view! {
        <section aria-labelledby="tokens-h">
            <h2 id="tokens-h">"API tokens"</h2>
            <p class="hint">"For agents and scripts, sent as "<code>"Authorization: Bearer <token>"</code>". A token scoped to an estate sees only that estate; agent tokens must be."</p>
            {move || shown_once.get().map(|(n, secret)| once_notice(n, secret, shown_once, copied))}
            <table class="accounts" data-testid="tokens">
                <thead><tr><th scope="col">"name"</th><th scope="col">"role"</th><th scope="col">"estate"</th><th scope="col">"clusters"</th><th scope="col">"created"</th><th scope="col">"by"</th><th scope="col">"state"</th><th scope="col"><span class="visually-hidden">"actions"</span></th></tr></thead>
                <tbody>
                    {move || tokens.get().into_iter().map(|t| token_row(t, confirming, revoke)).collect_view()}
                </tbody>
            </table>
            <form class="inline-form" on:submit=create>
                <h3>"Create a token"</h3>
                <div class="entry-grid">
                    <div class="field">
                        <label for="token-name">"Token name"</label>
                        <input id="token-name" autocomplete="off" bind:value=name/>
                    </div>
                    <div class="field">
                        <label for="token-role">"Token role"</label>
                        <select id="token-role" on:change=move |ev| role.set(Role::parse(&event_target_value(&ev)).unwrap_or(Role::Viewer)) prop:value=move || role.get().as_str()>
                            <option value="viewer">"viewer"</option>
                            <option value="operator">"operator"</option>
                            <option value="agent">"agent (reports facts for one estate)"</option>
                            <option value="admin">"admin"</option>
                        </select>
                    </div>
                    <div class="field">
                        <label for="token-estate">"Scope to estate"</label>
                        <select id="token-estate" on:change=move |ev| estate.set(event_target_value(&ev)) prop:value=move || estate.get()>
                            <option value="">"all estates"</option>
                            {move || auth.estates.get().into_iter().map(|(id, n)| {
                                let label = if n == id { id.clone() } else { format!("{n} ({id})") };
                                view! { <option value=id>{label}</option> }
                            }).collect_view()}
                        </select>
                    </div>
                    {move || (role.get() == Role::Agent).then(|| view! {
                        <div class="field">
                            <label for="token-clusters">"Clusters it reports for"</label>
                            <input id="token-clusters" autocomplete="off" placeholder="fra-1, ams-2" bind:value=clusters/>
                        </div>
                    })}
                </div>
                <button type="submit">"Create token"</button>
            </form>
            {move || error.get().map(|m| view! { <p class="error" role="alert" data-testid="tokens-error">{m}</p> })}
        </section>
    }
}

/// What a channel's thresholds mean, in one line for the list.
pub fn channel_thresholds(c: &NotificationChannel) -> String {
    let class = &c.min_confidence;
    let classes = if class == "guessed" {
        "any confidence".to_string()
    } else {
        format!("confidence {class} or better")
    };
    let gain = c.min_gain;
    if gain > 0.0 {
        format!("gain at least {gain} points, {classes}")
    } else {
        format!("any gain, {classes}")
    }
}

/// One channel's row: name, kind, URL, what it sends, and Delete (after a
/// confirmation).
fn channel_row(
    c: NotificationChannel,
    confirming: RwSignal<Option<String>>,
    on_delete: Callback<String>,
) -> impl IntoView {
    let which = c.name.clone();
    let (w1, w2) = (which.clone(), which.clone());
    let state = if c.enabled { "" } else { " (disabled)" };
    view! {
        <tr data-channel=which.clone()>
            <th scope="row">{which.clone()}</th>
            <td>{c.kind.clone()}{state}</td>
            <td><code>{c.url.clone()}</code></td>
            <td>{channel_thresholds(&c)}</td>
            <td>
                {move || if confirming.get().as_deref() == Some(w1.as_str()) {
                    let (a, b) = (w1.clone(), w1.clone());
                    view! {
                        <span class="confirm">{format!("Delete {a}? Its deliveries go with it. ")}
                            <button type="button" class="danger" on:click=move |_| on_delete.run(b.clone())>"Yes, delete"</button>" "
                            <button type="button" class="small" on:click=move |_| confirming.set(None)>"Cancel"</button>
                        </span>
                    }.into_any()
                } else {
                    let w = w2.clone();
                    view! { <button type="button" class="small" on:click=move |_| confirming.set(Some(w.clone()))>{format!("Delete {w2}")}</button> }.into_any()
                }}
            </td>
        </tr>
    }
}

#[component]
fn Channels() -> impl IntoView {
    let channels = RwSignal::new(Vec::<NotificationChannel>::new());
    let error = RwSignal::new(None::<String>);
    let done = RwSignal::new(None::<String>);
    let name = RwSignal::new(String::new());
    let kind = RwSignal::new(ChannelKind::Webhook.as_str().to_string());
    let url = RwSignal::new(String::new());
    let min_gain = RwSignal::new("0".to_string());
    let min_confidence = RwSignal::new("guessed".to_string());
    // The signed channel just created: (name, secret). Shown once.
    let shown_once = RwSignal::new(None::<(String, String)>);
    let confirming = RwSignal::new(None::<String>);
    let load = move || {
        leptos::task::spawn_local(async move {
            match client::get_typed::<NotificationChannelList>(
                &berth_api::endpoint::list_notification_channels(),
            )
            .await
            {
                Ok(v) => channels.set(v.channels),
                Err(f) => error.set(Some(f.message)),
            }
        });
    };
    Effect::new(move |_| load());
    let create = move |ev: leptos::ev::SubmitEvent| {
        ev.prevent_default();
        error.set(None);
        done.set(None);
        shown_once.set(None);
        let gain = match min_gain.get_untracked().trim().parse::<f64>() {
            Ok(g) => g,
            Err(_) => {
                error.set(Some(
                    "The minimum gain must be a number of points, such as 0 or 12.5.".into(),
                ));
                return;
            }
        };
        let body = NewNotificationChannel {
            name: name.get_untracked().trim().to_string(),
            kind: kind.get_untracked(),
            url: url.get_untracked().trim().to_string(),
            min_gain: gain,
            min_confidence: min_confidence.get_untracked(),
            enabled: true,
        };
        leptos::task::spawn_local(async move {
            match client::send_typed::<_, NotificationChannelWithSecret>(
                "POST",
                &berth_api::endpoint::create_notification_channel(),
                &body,
            )
            .await
            {
                Ok(v) => {
                    let n = v.channel.name;
                    match v.secret {
                        Some(secret) => shown_once.set(Some((n.clone(), secret))),
                        None => done.set(Some(format!("Channel {n} created."))),
                    }
                    name.set(String::new());
                    url.set(String::new());
                    load();
                }
                Err(f) => error.set(Some(f.message)),
            }
        });
    };
    let delete = Callback::new(move |which: String| {
        error.set(None);
        done.set(None);
        leptos::task::spawn_local(async move {
            match client::request(
                "DELETE",
                &berth_api::endpoint::delete_notification_channel(&which),
                None,
            )
            .await
            {
                Ok(_) => {
                    done.set(Some(format!("Channel {which} deleted.")));
                    confirming.set(None);
                    load();
                }
                Err(f) => error.set(Some(f.message)),
            }
        });
    });
    view! {
        <section aria-labelledby="channels-h">
            <h2 id="channels-h">"Notification channels"</h2>
            <p class="hint">"After each driver pass, recommendations that clear a channel's thresholds are sent to it once per estate version; deliveries show on Health."</p>
            <table class="accounts" data-testid="channels">
                <thead><tr><th scope="col">"name"</th><th scope="col">"kind"</th><th scope="col">"URL"</th><th scope="col">"sends"</th><th scope="col"><span class="visually-hidden">"actions"</span></th></tr></thead>
                <tbody>
                    {move || channels.get().into_iter().map(|c| channel_row(c, confirming, delete)).collect_view()}
                </tbody>
            </table>
            <form class="inline-form" on:submit=create>
                <h3>"Add a channel"</h3>
                <div class="entry-grid">
                    <div class="field">
                        <label for="channel-name">"Channel name"</label>
                        <input id="channel-name" autocomplete="off" bind:value=name/>
                        <span class="hint">"a–z, 0–9, '-', '_' and '.'"</span>
                    </div>
                    <div class="field">
                        <label for="channel-kind">"Channel kind"</label>
                        <select id="channel-kind" on:change=move |ev| kind.set(event_target_value(&ev)) prop:value=move || kind.get()>
                            {ChannelKind::ALL
                                .map(|k| view! { <option value=k.as_str()>{k.label()}</option> })
                                .to_vec()}
                        </select>
                    </div>
                    <div class="field">
                        <label for="channel-url">"Channel URL"</label>
                        <input id="channel-url" type="url" autocomplete="off" bind:value=url/>
                        <span class="hint">"loopback and private addresses only if the server allows them (--decider-allow)"</span>
                    </div>
                    <div class="field">
                        <label for="channel-gain">"Minimum gain (points)"</label>
                        <input id="channel-gain" inputmode="decimal" bind:value=min_gain/>
                    </div>
                    <div class="field">
                        <label for="channel-confidence">"Minimum confidence"</label>
                        <select id="channel-confidence" on:change=move |ev| min_confidence.set(event_target_value(&ev)) prop:value=move || min_confidence.get()>
                            <option value="guessed">"any (guessed or better)"</option>
                            <option value="inferred">"inferred or better"</option>
                            <option value="reported">"reported or better"</option>
                            <option value="measured">"measured only"</option>
                        </select>
                    </div>
                </div>
                <button type="submit">"Add channel"</button>
            </form>
            {move || shown_once.get().map(|(n, secret)| view! {
                <div class="secret-once" role="status" data-testid="channel-secret">
                    <p>{format!("Channel {n} created. Its signing secret, shown only this once — give it to the receiver to verify signatures:")}</p>
                    <code>{secret}</code>
                </div>
            })}
            {move || error.get().map(|m| view! { <p class="error" role="alert" data-testid="channels-error">{m}</p> })}
            {move || done.get().map(|m| view! { <p class="ok-line" role="status">{m}</p> })}
        </section>
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn token_rules_are_said_before_asking() {
        let none: &[String] = &[];
        let fra = cluster_list(" fra-1, ams-2 fra-1,,");
        assert_eq!(fra, vec!["fra-1".to_string(), "ams-2".to_string()]);
        assert!(token_problem("", Role::Viewer, "", none).is_some());
        assert!(token_problem("probe", Role::Agent, "", &fra)
            .unwrap()
            .contains("scoped"));
        assert!(token_problem("probe", Role::Agent, "sample", none)
            .unwrap()
            .contains("cluster"));
        assert!(token_problem("ci", Role::Viewer, "", &fra)
            .unwrap()
            .contains("Only agent tokens"));
        assert!(token_problem("ops", Role::Admin, "sample", none).is_some());
        assert_eq!(token_problem("ci", Role::Viewer, "", none), None);
        assert_eq!(
            token_problem("agent-fra", Role::Agent, "sample", &fra),
            None
        );
        let mut t = TokenInfo {
            id: "3f9a0c2b7d41".into(),
            name: "ci".into(),
            role: Role::Viewer,
            estate: None,
            created_at: "2026-12-01T09:00:00Z".into(),
            created_by: "admin".into(),
            revoked_at: None,
            may_create_clusters: false,
            may_sync_services: false,
            clusters: None,
        };
        assert_eq!(token_state(&t), "live");
        t.revoked_at = Some("2026-12-01T10:00:00Z".into());
        assert!(token_state(&t).starts_with("revoked"));
    }

    #[test]
    fn channel_thresholds_read_as_words() {
        let channel = |min_gain: f64, min_confidence: &str| NotificationChannel {
            name: "ops-hook".into(),
            kind: "webhook".into(),
            url: "https://receiver.example.com/berth".into(),
            min_gain,
            min_confidence: min_confidence.into(),
            enabled: true,
            secret_fingerprint: None,
            created_at: "2026-12-01T09:00:00Z".into(),
            updated_at: "2026-12-01T09:00:00Z".into(),
        };
        assert_eq!(
            channel_thresholds(&channel(0.0, "guessed")),
            "any gain, any confidence"
        );
        assert_eq!(
            channel_thresholds(&channel(12.5, "measured")),
            "gain at least 12.5 points, confidence measured or better"
        );
    }
}
