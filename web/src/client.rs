//! The browser side: requests to the same-origin REST API (session cookie
//! plus the CSRF header), the clock, and the estate snapshot loaded once
//! per page load and kept for every page.
//!
//! The functions exist in both builds so page code compiles on the server;
//! there they are never reached (effects and event handlers run only in
//! the browser), and say so if they were.

use std::cell::RefCell;
use std::rc::Rc;

use serde_json::Value;

use crate::engine::{self, Loaded};

/// A failed request, in words a person can act on.
#[derive(Clone, Debug, PartialEq)]
pub struct Failure {
    /// HTTP status; 0 when the server could not be reached.
    pub status: u16,
    pub message: String,
    /// A 422's `details.errors`: one per error of the input, with its
    /// `path` and `message` (and `line`, `file`, `document`, `object`
    /// where the route knows them), so a page can show each one at its
    /// place. Empty for every other failure.
    pub errors: Vec<berth_api::InputError>,
    /// The message without the list of `errors` appended: for a page
    /// that shows each error at its place and needs only the headline.
    pub summary: String,
}

impl Failure {
    pub fn new(status: u16, message: impl Into<String>) -> Failure {
        let message: String = message.into();
        Failure {
            status,
            summary: message.clone(),
            message,
            errors: Vec::new(),
        }
    }
}

impl std::fmt::Display for Failure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

/// What to do about a failed request, added to the server's own words.
#[cfg_attr(not(feature = "hydrate"), allow(dead_code))]
fn advice_for(status: u16, server_message: &str) -> String {
    let what = match status {
        0 => return "The server could not be reached. Check that `berth serve` is running, then reload the page.".to_string(),
        401 => "You are not signed in (or your session ended): sign in again.",
        403 => "Your role may not do this; ask an operator or administrator.",
        404 => "It is not there (any more); reload the page.",
        408 => "The request took too long to arrive; try again.",
        409 => "Someone changed it at the same time; reload and try again.",
        413 => "That is too large for the server.",
        422 => "Correct the input and try again.",
        429 => "Too many attempts; wait a few seconds and try again.",
        503 => "The server's database is unavailable; try again in a minute.",
        507 => "The answer is larger than the server sends; ask for less (one service, a shorter scenario).",
        _ => "Try again; if it persists, the server's log says why.",
    };
    if server_message.is_empty() {
        format!("Request failed ({status}). {what}")
    } else {
        format!("{server_message}. {what}")
    }
}

thread_local! {
    static CSRF: RefCell<Option<String>> = const { RefCell::new(None) };
    static LOADED: RefCell<Option<Rc<Loaded>>> = const { RefCell::new(None) };
}

/// The browser window's inner width in CSS pixels; `None` on the server.
pub fn viewport_width() -> Option<f64> {
    #[cfg(feature = "hydrate")]
    {
        web_sys::window()?.inner_width().ok()?.as_f64()
    }
    #[cfg(not(feature = "hydrate"))]
    {
        None
    }
}

/// Drops the "signed in" marker: the session it stood for has ended
/// (expired, or signed out elsewhere), so the next page does not ask again
/// and log a 401 for it.
pub fn forget_signed_in() {
    #[cfg(feature = "hydrate")]
    {
        use wasm_bindgen::JsValue;
        if let Some(doc) = web_sys::window().and_then(|w| w.document()) {
            let _ = js_sys::Reflect::set(
                &doc,
                &JsValue::from_str("cookie"),
                &JsValue::from_str("berth_signed_in=; Path=/; Max-Age=0; SameSite=Lax"),
            );
        }
    }
}

/// Whether the browser holds the server's "signed in" marker cookie (set
/// beside the session cookie at sign-in, cleared at sign-out). Without it
/// there is no session to ask about, and asking would only log a 401.
pub fn may_be_signed_in() -> bool {
    #[cfg(feature = "hydrate")]
    {
        use wasm_bindgen::JsValue;
        let Some(doc) = web_sys::window().and_then(|w| w.document()) else {
            return true;
        };
        let cookies = js_sys::Reflect::get(&doc, &JsValue::from_str("cookie"))
            .ok()
            .and_then(|c| c.as_string())
            .unwrap_or_default();
        cookies.split(';').any(|c| c.trim() == "berth_signed_in=1")
    }
    #[cfg(not(feature = "hydrate"))]
    {
        true
    }
}

/// Remember the session's CSRF token for state-changing requests.
pub fn set_csrf(token: Option<String>) {
    CSRF.with(|c| *c.borrow_mut() = token);
}

/// Send a request; the answer's text on 2xx, a [`Failure`] otherwise.
pub async fn request_text(
    method: &str,
    path: &str,
    body: Option<String>,
) -> Result<String, Failure> {
    request_typed(method, path, body, "application/json").await
}

/// [`request_text`] with a body of another type (an estate file in YAML
/// goes up as `application/yaml`, which the server reads as YAML).
pub async fn request_typed(
    method: &str,
    path: &str,
    body: Option<String>,
    content_type: &str,
) -> Result<String, Failure> {
    #[cfg(feature = "hydrate")]
    {
        use wasm_bindgen::JsCast;
        use wasm_bindgen_futures::JsFuture;
        let unreachable = |_| Failure::new(0, advice_for(0, ""));
        let init = web_sys::RequestInit::new();
        init.set_method(method);
        init.set_credentials(web_sys::RequestCredentials::SameOrigin);
        let headers = web_sys::Headers::new().map_err(unreachable)?;
        if let Some(b) = &body {
            headers
                .set("content-type", content_type)
                .map_err(unreachable)?;
            init.set_body(&wasm_bindgen::JsValue::from_str(b));
        }
        if method != "GET" {
            if let Some(t) = CSRF.with(|c| c.borrow().clone()) {
                headers.set("x-csrf-token", &t).map_err(unreachable)?;
            }
        }
        init.set_headers(&headers);
        let req = web_sys::Request::new_with_str_and_init(path, &init).map_err(unreachable)?;
        let window = web_sys::window().ok_or_else(|| Failure::new(0, "no window"))?;
        let resp = JsFuture::from(window.fetch_with_request(&req))
            .await
            .map_err(unreachable)?;
        let resp: web_sys::Response = resp.dyn_into().map_err(unreachable)?;
        let status = resp.status();
        let text = JsFuture::from(resp.text().map_err(unreachable)?)
            .await
            .map_err(unreachable)?
            .as_string()
            .unwrap_or_default();
        if (200..300).contains(&status) {
            Ok(text)
        } else {
            // Berth's error body, read as the API's type; anything else
            // (a proxy's page) leaves only the status to go on.
            let body = berth_api::ErrorBody::parse(&text);
            let errors = body
                .as_ref()
                .map(berth_api::ErrorBody::input_errors)
                .unwrap_or_default();
            let headline = body
                .as_ref()
                .map(|b| b.message.trim_end_matches('.').to_string())
                .unwrap_or_default();
            let mut msg = headline.clone();
            // 422: every error of the input, each at its place.
            for e in &errors {
                msg.push_str(&format!("; {}: {}", e.path, e.message));
            }
            Err(Failure {
                errors,
                summary: advice_for(status, &headline),
                ..Failure::new(status, advice_for(status, &msg))
            })
        }
    }
    #[cfg(not(feature = "hydrate"))]
    {
        let _ = (method, path, body, content_type);
        Err(Failure::new(
            0,
            "requests are made by the browser, not while the server renders",
        ))
    }
}

/// [`request_text`], parsed as JSON (an empty answer is `null`).
pub async fn request(method: &str, path: &str, body: Option<String>) -> Result<Value, Failure> {
    let text = request_text(method, path, body).await?;
    if text.trim().is_empty() {
        return Ok(Value::Null);
    }
    serde_json::from_str(&text).map_err(|e| {
        Failure::new(
            200,
            format!("The server's answer is not JSON ({e}); reload the page."),
        )
    })
}

pub async fn get(path: &str) -> Result<Value, Failure> {
    request("GET", path, None).await
}

/// An answer's text read as one of the API's types (`berth_api`); a
/// failure naming `path` and what did not parse otherwise.
pub fn typed_answer<T: serde::de::DeserializeOwned>(path: &str, text: &str) -> Result<T, Failure> {
    serde_json::from_str(text).map_err(|e| {
        Failure::new(
            200,
            format!("The server's answer to {path} is not what this page reads ({e}); reload the page, and if it persists the page and the server are of different versions."),
        )
    })
}

/// A GET whose answer is one of the API's types (`berth_api`).
pub async fn get_typed<T: serde::de::DeserializeOwned>(path: &str) -> Result<T, Failure> {
    let text = request_text("GET", path, None).await?;
    typed_answer(path, &text)
}

/// A request with one of the API's request types as its JSON body, whose
/// answer is one of its answer types (`berth_api`).
pub async fn send_typed<B: serde::Serialize, T: serde::de::DeserializeOwned>(
    method: &str,
    path: &str,
    body: &B,
) -> Result<T, Failure> {
    let body = serde_json::to_string(body)
        .map_err(|e| Failure::new(0, format!("This page could not write its request ({e}).")))?;
    let text = request_text(method, path, Some(body)).await?;
    typed_answer(path, &text)
}

/// The estate snapshot, loaded into the engine once and kept until
/// [`forget_snapshot`] (after a change through this page, e.g. the policy).
pub async fn loaded(estate: &str) -> Result<Rc<Loaded>, Failure> {
    if let Some(l) = LOADED.with(|l| l.borrow().clone()) {
        if l.meta.estate == estate {
            return Ok(l);
        }
    }
    let text = request_text("GET", &berth_api::endpoint::get_snapshot(estate), None).await?;
    let l = Rc::new(engine::load_snapshot(&text).map_err(|m| Failure::new(200, m))?);
    LOADED.with(|slot| *slot.borrow_mut() = Some(l.clone()));
    Ok(l)
}

/// The loaded snapshot if there is one (no request).
pub fn loaded_now() -> Option<Rc<Loaded>> {
    LOADED.with(|l| l.borrow().clone())
}

pub fn forget_snapshot() {
    LOADED.with(|l| *l.borrow_mut() = None);
}

/// Evaluation time: `?now=` of the page's address when given (RFC 3339;
/// tests and links to a past state use it), else the clock, rounded down
/// to the minute like the server's default, so both compute for the same
/// instant.
pub fn eval_now() -> i64 {
    if let Some(t) = query_param("now").and_then(|s| engine::parse_time(&s)) {
        return t;
    }
    wall_clock_s() / 60 * 60
}

pub fn wall_clock_s() -> i64 {
    #[cfg(feature = "hydrate")]
    {
        (js_sys::Date::now() / 1000.0) as i64
    }
    #[cfg(not(feature = "hydrate"))]
    {
        0
    }
}

/// Let the browser render what the page has set so far before more work
/// (a zero-delay timer: resumes after the browser's next turn).
pub async fn yield_to_browser() {
    #[cfg(feature = "hydrate")]
    {
        let p = js_sys::Promise::new(&mut |resolve, _| match web_sys::window() {
            Some(w) => {
                let _ = w.set_timeout_with_callback_and_timeout_and_arguments_0(&resolve, 0);
            }
            None => {
                let _ = resolve.call0(&wasm_bindgen::JsValue::NULL);
            }
        });
        let _ = wasm_bindgen_futures::JsFuture::from(p).await;
    }
}

/// Milliseconds from a monotonic clock (for the timings the page shows).
pub fn perf_ms() -> f64 {
    #[cfg(feature = "hydrate")]
    {
        web_sys::window()
            .and_then(|w| w.performance())
            .map(|p| p.now())
            .unwrap_or_default()
    }
    #[cfg(not(feature = "hydrate"))]
    {
        0.0
    }
}

/// The path of the page's address ("" while rendering on the server).
pub fn path() -> String {
    #[cfg(feature = "hydrate")]
    {
        web_sys::window()
            .and_then(|w| w.location().pathname().ok())
            .unwrap_or_default()
    }
    #[cfg(not(feature = "hydrate"))]
    {
        String::new()
    }
}

/// A query parameter of the page's address.
pub fn query_param(name: &str) -> Option<String> {
    #[cfg(feature = "hydrate")]
    {
        let search = web_sys::window()?.location().search().ok()?;
        let params = web_sys::UrlSearchParams::new_with_str(&search).ok()?;
        params.get(name)
    }
    #[cfg(not(feature = "hydrate"))]
    {
        let _ = name;
        None
    }
}

/// Set (or, with `None`, remove) query parameters of the page's address
/// in place: no navigation and no new history entry, so the address
/// always says what the page shows (a reload or a shared link keeps it).
pub fn replace_query(params: &[(&str, Option<&str>)]) {
    #[cfg(feature = "hydrate")]
    if let (Some(url), Some(w)) = (address_with(params), web_sys::window()) {
        if let Ok(h) = w.history() {
            let _ = h.replace_state_with_url(&wasm_bindgen::JsValue::NULL, "", Some(&url));
        }
    }
    #[cfg(not(feature = "hydrate"))]
    let _ = params;
}

/// The page's address (path and query) with some query parameters set
/// or, with `None`, removed; the others kept as they are. `None` while
/// rendering on the server.
pub fn address_with(params: &[(&str, Option<&str>)]) -> Option<String> {
    #[cfg(feature = "hydrate")]
    {
        let loc = web_sys::window()?.location();
        let search = loc.search().unwrap_or_default();
        let q = web_sys::UrlSearchParams::new_with_str(&search).ok()?;
        for (k, v) in params {
            match v {
                Some(v) => q.set(k, v),
                None => q.delete(k),
            }
        }
        let query: String = q.to_string().into();
        Some(format!(
            "{}{}{}",
            loc.pathname().unwrap_or_default(),
            if query.is_empty() { "" } else { "?" },
            query
        ))
    }
    #[cfg(not(feature = "hydrate"))]
    {
        let _ = params;
        None
    }
}

/// Ask the person to confirm (the browser's own dialog); true when there
/// is no browser to ask.
pub fn confirm(question: &str) -> bool {
    #[cfg(feature = "hydrate")]
    {
        web_sys::window()
            .and_then(|w| w.confirm_with_message(question).ok())
            .unwrap_or(true)
    }
    #[cfg(not(feature = "hydrate"))]
    {
        let _ = question;
        true
    }
}

thread_local! {
    /// Whether a page holds work that leaving would lose (the What-if
    /// page's unsaved scenario); read by the `beforeunload` guard.
    static UNSAVED: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
    static GUARD: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Say whether the page holds unsaved work. The first call installs a
/// `beforeunload` guard, which asks before the tab is closed, reloaded
/// or sent elsewhere while the flag is set (the browser words the
/// question itself).
pub fn set_unsaved(unsaved: bool) {
    UNSAVED.with(|u| u.set(unsaved));
    #[cfg(feature = "hydrate")]
    if !GUARD.with(|g| g.replace(true)) {
        use wasm_bindgen::{closure::Closure, JsCast};
        let Some(w) = web_sys::window() else { return };
        let guard = Closure::<dyn FnMut(web_sys::Event)>::new(|ev: web_sys::Event| {
            if UNSAVED.with(|u| u.get()) {
                ev.prevent_default();
                // Older engines ask only when returnValue is set.
                let _ = js_sys::Reflect::set(
                    &ev,
                    &wasm_bindgen::JsValue::from_str("returnValue"),
                    &wasm_bindgen::JsValue::from_str("unsaved"),
                );
            }
        });
        let _ = w.add_event_listener_with_callback("beforeunload", guard.as_ref().unchecked_ref());
        // The listener lives as long as the page.
        guard.forget();
    }
    #[cfg(not(feature = "hydrate"))]
    GUARD.with(|g| g.set(true));
}

/// Go to another page with a full load (after sign-in and sign-out, so
/// every page starts from the new session).
/// Download `path` as the file `name` (an anchor with `download`,
/// clicked): an attachment or not, the page stays where it is (a JSON
/// answer opened by [`go`] would replace the page).
pub fn download(path: &str, name: &str) {
    #[cfg(feature = "hydrate")]
    {
        use wasm_bindgen::JsCast;
        let Some(doc) = web_sys::window().and_then(|w| w.document()) else {
            return;
        };
        if let Ok(a) = doc.create_element("a") {
            let _ = a.set_attribute("href", path);
            let _ = a.set_attribute("download", name);
            if let Ok(a) = a.dyn_into::<web_sys::HtmlElement>() {
                a.click();
            }
        }
    }
    #[cfg(not(feature = "hydrate"))]
    let _ = (path, name);
}

pub fn go(path: &str) {
    #[cfg(feature = "hydrate")]
    if let Some(w) = web_sys::window() {
        let _ = w.location().set_href(path);
    }
    #[cfg(not(feature = "hydrate"))]
    let _ = path;
}

/// Read a file the person picked, as text.
#[cfg(feature = "hydrate")]
pub async fn file_text(file: web_sys::File) -> Result<String, Failure> {
    let v = wasm_bindgen_futures::JsFuture::from(file.text())
        .await
        .map_err(|_| Failure::new(0, "The file could not be read; pick it again."))?;
    Ok(v.as_string().unwrap_or_default())
}

/// Move the keyboard focus to the element with this id (the skip link's
/// target): the router answers a fragment link itself, so the browser's
/// own focus move does not happen.
pub fn focus_by_id(id: &str) {
    #[cfg(feature = "hydrate")]
    {
        use wasm_bindgen::JsCast;
        if let Some(el) = web_sys::window()
            .and_then(|w| w.document())
            .and_then(|d| d.get_element_by_id(id))
            .and_then(|e| e.dyn_into::<web_sys::HtmlElement>().ok())
        {
            let _ = el.focus();
        }
    }
    #[cfg(not(feature = "hydrate"))]
    {
        let _ = id;
    }
}

/// The files picked in an `<input type=file>` (its change event), read
/// as text, as (file name, text) in the order picked; `done` gets them
/// once all are read, or the failure if one could not be.
pub fn read_picked(
    ev: &leptos::ev::Event,
    done: impl FnOnce(Result<Vec<(String, String)>, Failure>) + 'static,
) {
    #[cfg(feature = "hydrate")]
    {
        use wasm_bindgen::JsCast;
        let Some(input) = ev
            .target()
            .and_then(|t| t.dyn_into::<web_sys::HtmlInputElement>().ok())
        else {
            return;
        };
        let files: Vec<web_sys::File> = match input.files() {
            Some(list) => (0..list.length()).filter_map(|i| list.get(i)).collect(),
            None => Vec::new(),
        };
        leptos::task::spawn_local(async move {
            let mut out = Vec::new();
            for f in files {
                let name = f.name();
                match file_text(f).await {
                    Ok(text) => out.push((name, text)),
                    Err(e) => return done(Err(e)),
                }
            }
            done(Ok(out));
        });
    }
    #[cfg(not(feature = "hydrate"))]
    {
        let _ = (ev, done);
    }
}

/// Put text on the clipboard; false when the browser refuses (no
/// permission, or not a secure context), so the page can say to copy it
/// by hand.
pub async fn copy_text(text: &str) -> bool {
    #[cfg(feature = "hydrate")]
    {
        use wasm_bindgen::{JsCast, JsValue};
        let get = |o: &JsValue, k: &str| js_sys::Reflect::get(o, &JsValue::from_str(k)).ok();
        let Some(clipboard) = get(&js_sys::global().into(), "navigator")
            .and_then(|n| get(&n, "clipboard"))
            .filter(|c| !c.is_undefined())
        else {
            return false;
        };
        let Some(write) =
            get(&clipboard, "writeText").and_then(|f| f.dyn_into::<js_sys::Function>().ok())
        else {
            return false;
        };
        let Ok(p) = write.call1(&clipboard, &JsValue::from_str(text)) else {
            return false;
        };
        match p.dyn_into::<js_sys::Promise>() {
            Ok(p) => wasm_bindgen_futures::JsFuture::from(p).await.is_ok(),
            Err(_) => false,
        }
    }
    #[cfg(not(feature = "hydrate"))]
    {
        let _ = text;
        false
    }
}

#[cfg(test)]
mod tests {
    use super::advice_for;

    #[test]
    fn failures_say_what_to_do() {
        assert!(
            advice_for(403, "role operator needed").starts_with("role operator needed. Your role")
        );
        assert!(advice_for(0, "").contains("could not be reached"));
        assert!(advice_for(500, "").starts_with("Request failed (500)"));
    }
}
