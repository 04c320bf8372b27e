//! Sign in with a user name and password (or an API token).

use leptos::prelude::*;

use crate::client;

#[component]
pub fn Login() -> impl IntoView {
    let username = RwSignal::new(String::new());
    let password = RwSignal::new(String::new());
    let token = RwSignal::new(String::new());
    let error = RwSignal::new(None::<String>);
    let busy = RwSignal::new(false);
    // The form works only once the page is hydrated; until then all of it
    // is disabled. An early click or Enter would otherwise submit the form
    // natively (putting the password in the address), and text typed into
    // the server-rendered inputs before hydration never reaches the
    // signals, so the sign-in would go out with an empty name and password
    // and fail as "wrong user name" (seen in CI on a loaded machine).
    let hydrated = RwSignal::new(false);
    Effect::new(move |_| hydrated.set(true));
    let submit = move |ev: leptos::ev::SubmitEvent| {
        ev.prevent_default();
        let body = if token.get_untracked().trim().is_empty() {
            serde_json::json!({"username": username.get_untracked(), "password": password.get_untracked()})
        } else {
            serde_json::json!({"token": token.get_untracked().trim()})
        };
        busy.set(true);
        error.set(None);
        leptos::task::spawn_local(async move {
            match client::request(
                "POST",
                &berth_api::endpoint::sign_in(),
                Some(body.to_string()),
            )
            .await
            {
                Ok(_) => client::go("/"),
                Err(f) => {
                    error.set(Some(sign_in_failure(&f)));
                    busy.set(false);
                }
            }
        });
    };
    view! {
        <h1>"Sign in"</h1>
        <form method="post" on:submit=submit>
            <fieldset class="login" disabled=move || !hydrated.get()>
                <label for="username">"User name"</label>
                <input id="username" name="username" autocomplete="username" bind:value=username/>
                <label for="password">"Password"</label>
                <input id="password" name="password" type="password" autocomplete="current-password" bind:value=password/>
                <p class="hint">"Or sign in with an API token instead:"</p>
                <label for="token">"API token"</label>
                <input id="token" name="token" type="password" autocomplete="off" bind:value=token/>
                <button type="submit" disabled=move || busy.get()>{move || if busy.get() { "Signing in…" } else { "Sign in" }}</button>
                {move || error.get().map(|m| view! { <p class="error" role="alert">{m}</p> })}
            </fieldset>
        </form>
    }
}

/// A refused sign-in in the words of this form. The server answers 403 to
/// a name, password or token it does not recognise (and to an agent's
/// token, which it names); the generic "your role may not do this" would
/// send a user looking for a role when what they typed was wrong.
pub fn sign_in_failure(f: &client::Failure) -> String {
    match f.status {
        403 if f.summary.contains("agent token") => {
            "That is an agent's token: agents use it to send facts, it does not open the pages. Sign in with a user name and password or a viewer, operator or admin token.".to_string()
        }
        403 => "Not recognised: no user has that name and password, and no live token is that one. Check what you typed (a token is shown once when it is created; a revoked token stops working).".to_string(),
        _ => f.message.clone(),
    }
}
