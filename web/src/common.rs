//! What every page shares with the app and with each other: the signed-in
//! state and the scenario (both provided as context by `app::App`), the
//! gate above pages that need data, and the error line. A leaf of the
//! crate: it imports no page and not the app.

use leptos::prelude::*;

/// Who is signed in, as `GET /api/session` says.
#[derive(Clone, Debug, PartialEq)]
pub struct Session {
    pub subject: String,
    pub role: String,
}

impl Session {
    /// Operators and administrators may change things; viewers only look.
    pub fn may_operate(&self) -> bool {
        self.role == "operator" || self.role == "admin"
    }
}

/// The signed-in state every page reads.
#[derive(Clone, Copy)]
pub struct Auth {
    /// `None` while asking; `Some(None)` signed out; `Some(Some(s))` in.
    pub session: RwSignal<Option<Option<Session>>>,
    /// The estate the pages show (the first one visible, or `?estate=`).
    pub estate: RwSignal<Option<String>>,
    /// Why the estate could not be found, in words.
    pub problem: RwSignal<Option<String>>,
}

/// Shared between Placement and What-if: the scenario being edited, so
/// "Take into what-if" carries the recommendations over.
#[derive(Clone, Copy)]
pub struct Scenario {
    pub steps: RwSignal<Vec<crate::engine::Step>>,
    pub name: RwSignal<String>,
}

/// Above every page that needs data: asks to sign in when signed out and
/// says why there is no estate when there is none.
#[component]
pub fn Gate(children: ChildrenFn) -> impl IntoView {
    let auth = expect_context::<Auth>();
    move || {
        match (auth.session.get(), auth.problem.get()) {
        (Some(None), _) => view! {
            <p class="notice" role="status">"You are not signed in. "<a href="/login">"Sign in"</a>" to see the estate."</p>
        }
        .into_any(),
        (_, Some(p)) => view! { <p class="error" role="alert">{p}</p> }.into_any(),
        _ => children().into_any(),
    }
    }
}

/// An error in words, visible, with the ARIA role that screen readers
/// announce.
#[component]
pub fn ErrorLine(message: Signal<Option<String>>) -> impl IntoView {
    move || {
        message
            .get()
            .map(|m| view! { <p class="error" role="alert">{m}</p> })
    }
}
