//! What every page shares with the app and with each other: the signed-in
//! state and the scenario (both provided as context by `app::App`), the
//! gate above pages that need data, and the error line. A leaf of the
//! crate: it imports no page and not the app.

use leptos::prelude::*;

/// Who is signed in, as `GET /api/session` says.
#[derive(Clone, Debug, PartialEq)]
pub struct Session {
    pub subject: String,
    pub role: berth_api::Role,
}

impl Session {
    /// Operators and administrators may change things; viewers only look.
    pub fn may_operate(&self) -> bool {
        self.role.may_operate()
    }

    pub fn is_admin(&self) -> bool {
        self.role.is_admin()
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
    /// The estates the caller may see, as (id, name), for the switcher.
    pub estates: RwSignal<Vec<(String, String)>>,
    /// When even the estate's newest fact is past the reported window,
    /// the sentence saying so (the banner above every page).
    pub stale: RwSignal<Option<String>>,
}

/// A page's address with the state that must survive navigation: the
/// estate shown and the evaluation time (`?estate=`, `?now=`), so a link
/// or a reload shows the same thing (as a time picker kept in the URL).
pub fn keep_query(path: &str, estate: Option<&str>, now: Option<&str>) -> String {
    let mut q = Vec::new();
    if let Some(e) = estate {
        q.push(format!("estate={}", encode(e)));
    }
    if let Some(n) = now {
        q.push(format!("now={}", encode(n)));
    }
    if q.is_empty() {
        path.to_string()
    } else {
        format!("{path}?{}", q.join("&"))
    }
}

/// [`keep_query`] with one service named (`&service=ID`): the links to
/// "Where could it go?" and to the service on the Estate graph.
pub fn service_link(path: &str, estate: Option<&str>, now: Option<&str>, service: &str) -> String {
    let base = keep_query(path, estate, now);
    let sep = if base.contains('?') { '&' } else { '?' };
    format!("{base}{sep}service={}", encode(service))
}

/// Percent-encoding for a query value: estate ids are letters, digits and
/// '-', times have ':' and '+', which a query must escape.
pub fn encode(v: &str) -> String {
    let mut out = String::new();
    for b in v.bytes() {
        match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => {
                out.push(b as char)
            }
            _ => out.push_str(&format!("%{b:02X}")),
        }
    }
    out
}

/// The banner's sentence when `stale_since` (from `GET /api/estates/{id}`)
/// is at or before `now`; `None` while the estate is fresh enough.
pub fn stale_sentence(newest: Option<&str>, stale_since: Option<i64>, now: i64) -> Option<String> {
    let (newest, since) = (newest?, stale_since?);
    (now >= since).then(|| {
        format!(
            "The newest fact of this estate was observed at {newest}: every fact is now past the reported window (inferred or guessed). Are its agents still reporting? Advice rests on old evidence."
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_query_that_survives_navigation() {
        assert_eq!(keep_query("/whatif", None, None), "/whatif");
        assert_eq!(
            keep_query("/", Some("prod-eu"), Some("2026-11-30T04:05:00Z")),
            "/?estate=prod-eu&now=2026-11-30T04%3A05%3A00Z"
        );
    }

    #[test]
    fn the_banner_shows_from_stale_since_on() {
        assert_eq!(stale_sentence(Some("t"), Some(100), 99), None);
        assert!(stale_sentence(Some("t"), Some(100), 100)
            .unwrap()
            .contains("observed at t"));
        assert_eq!(stale_sentence(None, None, 100), None);
    }
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

/// A rule's words as a sentence at a field: first letter capital, a full
/// stop at the end ("at least 12 characters" → "At least 12 characters.").
pub fn plain_words(what: &str) -> String {
    let t = what.trim().trim_end_matches('.');
    let mut chars = t.chars();
    match chars.next() {
        Some(c) => format!("{}{}.", c.to_uppercase(), chars.as_str()),
        None => String::new(),
    }
}

/// The problems a refusal names at fields of the form: every input error
/// of its `details.errors` as (pointer, sentence). A form shows each at
/// its field and the headline only for what has no field.
pub fn refusals_at_fields(f: &crate::client::Failure) -> Vec<(String, String)> {
    f.errors
        .iter()
        .filter(|e| !e.path.is_empty())
        .map(|e| (e.path.clone(), plain_words(&e.message)))
        .collect()
}

/// The first problem at `path`: what the engine's rule says of the typed
/// value (shown once the field was left or the form was sent), else the
/// server's refusal at that field.
pub fn problem_at(
    path: &str,
    typed: &[(&'static str, String)],
    show_typed: bool,
    refused: &[(String, String)],
) -> Option<String> {
    typed
        .iter()
        .find(|(p, _)| show_typed && *p == path)
        .map(|(_, w)| plain_words(w))
        .or_else(|| {
            refused
                .iter()
                .find(|(p, _)| p == path)
                .map(|(_, w)| w.clone())
        })
}

/// A field's problem, under it, announced; `id` is what the input's
/// `aria-describedby` names.
#[component]
pub fn FieldProblem(id: &'static str, problem: Signal<Option<String>>) -> impl IntoView {
    view! {
        <span id=id class="error field-error" role="alert" data-testid=id>{move || problem.get()}</span>
    }
}

/// The most services a picker lists at once: a `<select>` of 5,000
/// options is 5,000 elements and a list no one scrolls; typing narrows it.
pub const PICKER_MAX: usize = 200;

/// The ids a picker lists for `query` (any case, anywhere in the id): the
/// first `max` matches in the given order, then `chosen` if it is not among
/// them (a select must hold its value); and how many match in all.
pub fn picker_options(
    all: &[String],
    query: &str,
    chosen: &str,
    max: usize,
) -> (Vec<String>, usize) {
    let q = query.trim().to_lowercase();
    let mut total = 0;
    let mut out = Vec::new();
    for id in all {
        if q.is_empty() || id.to_lowercase().contains(&q) {
            total += 1;
            if out.len() < max {
                out.push(id.clone());
            }
        }
    }
    if !chosen.is_empty() && !out.iter().any(|x| x == chosen) && all.iter().any(|x| x == chosen) {
        out.push(chosen.to_string());
    }
    (out, total)
}

/// A service picker that stays small on a large estate: a box to narrow
/// by name, and a `<select>` (labelled by the page, `id`) of at most
/// [`PICKER_MAX`] of the matching services.
#[component]
pub fn ServicePicker(
    id: &'static str,
    services: Signal<Vec<String>>,
    value: Signal<String>,
    on_pick: Callback<String>,
) -> impl IntoView {
    let query = RwSignal::new(String::new());
    let shown = Memo::new(move |_| {
        services.with(|all| picker_options(all, &query.get(), &value.get(), PICKER_MAX))
    });
    let many = move || services.with(Vec::len) > PICKER_MAX;
    view! {
        <Show when=many>
            <input type="search" class="picker-q" id=format!("{id}-q")
                aria-label="Type part of a name to narrow the list" placeholder="type to narrow"
                on:input=move |ev| query.set(event_target_value(&ev))/>
        </Show>
        <select id=id on:change=move |ev| on_pick.run(event_target_value(&ev)) prop:value=move || value.get()>
            <option value="">"— pick a service —"</option>
            {move || shown.get().0.into_iter().map(|x| view! { <option value=x.clone()>{x.clone()}</option> }).collect_view()}
        </select>
        {move || {
            let (listed, total) = shown.get();
            (total > listed.len()).then(|| view! {
                <span class="hint" role="status" data-testid=format!("{id}-more")>{format!("{} of {total} listed: type to narrow", listed.len())}</span>
            })
        }}
    }
}

#[cfg(test)]
mod picker_tests {
    use super::*;

    #[test]
    fn a_picker_lists_the_first_matches_and_keeps_the_choice() {
        let all: Vec<String> = (0..500).map(|i| format!("svc-{i:03}")).collect();
        let (l, n) = picker_options(&all, "", "", PICKER_MAX);
        assert_eq!((l.len(), n), (200, 500));
        let (l, n) = picker_options(&all, "SVC-49", "", PICKER_MAX);
        assert_eq!(n, 10, "svc-490…499, whatever the case");
        assert_eq!(l.first().map(String::as_str), Some("svc-490"));
        let (l, _) = picker_options(&all, "", "svc-450", PICKER_MAX);
        assert_eq!(l.len(), 201);
        assert_eq!(l.last().map(String::as_str), Some("svc-450"));
        let (l, _) = picker_options(&all, "", "not-a-service", PICKER_MAX);
        assert_eq!(l.len(), 200, "an unknown choice is not invented");
    }
}

/// An RFC 3339 UTC time as people read it, to the minute:
/// `2026-12-07T22:28:53Z` → `2026-12-07 22:28 UTC`. Anything else is shown
/// as it came (never hidden).
pub fn utc_words(rfc3339: &str) -> String {
    let b = rfc3339.as_bytes();
    let shaped = b.len() >= 17
        && rfc3339.ends_with('Z')
        && b.get(10) == Some(&b'T')
        && b.get(13) == Some(&b':')
        && rfc3339.is_char_boundary(16);
    if shaped {
        format!("{} {} UTC", &rfc3339[..10], &rfc3339[11..16])
    } else {
        rfc3339.to_string()
    }
}

#[cfg(test)]
mod utc_words_tests {
    #[test]
    fn to_the_minute_in_utc() {
        assert_eq!(
            super::utc_words("2026-12-07T22:28:53Z"),
            "2026-12-07 22:28 UTC"
        );
        assert_eq!(
            super::utc_words("2026-12-07T22:28:53.123Z"),
            "2026-12-07 22:28 UTC"
        );
        assert_eq!(super::utc_words("yesterday"), "yesterday");
    }
}
