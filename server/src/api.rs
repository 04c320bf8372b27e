//! The HTTP API: the route table and every handler.
//!
//! [`ROUTES`] is the single list of what the server answers: method, path
//! template, who may call it, and a one-line summary. The router is built
//! from it, `docs/api.openapi.yaml` is checked against it, and a test walks
//! it with every role. A handler exists only if its row does.

use std::sync::Arc;
use std::time::Instant;

use axum::body::{Body, Bytes};
use axum::extract::{MatchedPath, Path, Request, State};
use axum::http::{header, HeaderMap, HeaderValue, Method, StatusCode};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::MethodRouter;
use axum::{Json, Router};
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

use berth_engine::{decider, estate, export, front, whatif, Estate, Format, Policy};

use crate::auth::{self, Access, Caller, Role, Via};
use crate::error::{ApiError, ApiResult};
use crate::store;
use crate::AppState;

/// One row of the route table.
pub struct RouteSpec {
    pub method: Method,
    pub path: &'static str,
    pub access: Access,
    pub summary: &'static str,
}

const fn r(method: Method, path: &'static str, access: Access, summary: &'static str) -> RouteSpec {
    RouteSpec {
        method,
        path,
        access,
        summary,
    }
}

const PUBLIC: Access = Access::Public;
const VIEWER: Access = Access::Role(Role::Viewer);
const OPERATOR: Access = Access::Role(Role::Operator);
const ADMIN: Access = Access::Role(Role::Admin);

/// Every route, in the order of `docs/api.openapi.yaml`.
pub const ROUTES: &[RouteSpec] = &[
    r(Method::GET, "/healthz", PUBLIC, "process is up"),
    r(
        Method::GET,
        "/readyz",
        PUBLIC,
        "database reachable and migrated",
    ),
    r(Method::GET, "/metrics", PUBLIC, "Prometheus metrics"),
    r(
        Method::POST,
        "/api/session",
        PUBLIC,
        "sign in (user and password, or token) for a session cookie",
    ),
    r(
        Method::GET,
        "/api/session",
        VIEWER,
        "who am I, and my CSRF token",
    ),
    r(Method::DELETE, "/api/session", VIEWER, "sign out"),
    r(Method::GET, "/api/estates", VIEWER, "list estates"),
    r(
        Method::POST,
        "/api/estates",
        OPERATOR,
        "create an estate from an estate file",
    ),
    r(
        Method::GET,
        "/api/estates/{id}",
        VIEWER,
        "an estate's summary",
    ),
    r(
        Method::DELETE,
        "/api/estates/{id}",
        ADMIN,
        "delete an estate",
    ),
    r(
        Method::GET,
        "/api/estates/{id}/file",
        VIEWER,
        "export the estate file",
    ),
    r(
        Method::PUT,
        "/api/estates/{id}/file",
        OPERATOR,
        "import an estate file, replacing the estate",
    ),
    r(
        Method::POST,
        "/api/estates/{id}/facts",
        OPERATOR,
        "update individual facts",
    ),
    r(
        Method::POST,
        "/api/estates/{id}/observations",
        Access::Observe,
        "post a batch of measured facts (agents)",
    ),
    r(
        Method::POST,
        "/api/estates/{id}/import/kubernetes",
        OPERATOR,
        "import Kubernetes manifests into one cluster of the estate",
    ),
    r(
        Method::GET,
        "/api/estates/{id}/policy",
        VIEWER,
        "the estate's policy",
    ),
    r(
        Method::PUT,
        "/api/estates/{id}/policy",
        OPERATOR,
        "replace the policy",
    ),
    r(
        Method::GET,
        "/api/estates/{id}/snapshot",
        VIEWER,
        "everything needed to run the engine in a browser",
    ),
    r(
        Method::GET,
        "/api/estates/{id}/advice",
        VIEWER,
        "recommended moves",
    ),
    r(
        Method::GET,
        "/api/estates/{id}/preview",
        VIEWER,
        "the decider request this estate generates",
    ),
    r(
        Method::GET,
        "/api/estates/{id}/place/{service}",
        VIEWER,
        "rank clusters for one service",
    ),
    r(
        Method::POST,
        "/api/estates/{id}/whatif",
        OPERATOR,
        "project a what-if scenario",
    ),
    r(
        Method::POST,
        "/api/estates/{id}/compare",
        OPERATOR,
        "compare the built-in deciders and uploaded replies",
    ),
    r(
        Method::GET,
        "/api/estates/{id}/scenarios",
        VIEWER,
        "list saved scenarios",
    ),
    r(
        Method::GET,
        "/api/estates/{id}/scenarios/{name}",
        VIEWER,
        "a saved scenario",
    ),
    r(
        Method::PUT,
        "/api/estates/{id}/scenarios/{name}",
        OPERATOR,
        "save a scenario",
    ),
    r(
        Method::DELETE,
        "/api/estates/{id}/scenarios/{name}",
        OPERATOR,
        "delete a scenario",
    ),
    r(
        Method::GET,
        "/api/estates/{id}/deciders/{name}/runs",
        VIEWER,
        "history of an external decider's runs on the estate",
    ),
    r(
        Method::POST,
        "/api/estates/{id}/deciders/{name}/runs",
        OPERATOR,
        "run an external decider on the estate now",
    ),
    r(
        Method::GET,
        "/api/estates/{id}/advice-snapshots",
        VIEWER,
        "the advice driver's snapshots of the estate's advice",
    ),
    r(
        Method::GET,
        "/api/deciders",
        VIEWER,
        "list registered external deciders",
    ),
    r(
        Method::POST,
        "/api/deciders",
        ADMIN,
        "register an external decider",
    ),
    r(
        Method::GET,
        "/api/deciders/{name}",
        VIEWER,
        "a registered external decider",
    ),
    r(
        Method::PUT,
        "/api/deciders/{name}",
        ADMIN,
        "change a decider's URL, timeout, interval or enabled flag",
    ),
    r(
        Method::DELETE,
        "/api/deciders/{name}",
        ADMIN,
        "delete a decider",
    ),
    r(
        Method::POST,
        "/api/deciders/{name}/secret",
        ADMIN,
        "generate or rotate a decider's secret (shown once)",
    ),
    r(
        Method::DELETE,
        "/api/deciders/{name}/secret",
        ADMIN,
        "remove a decider's secret",
    ),
    r(
        Method::GET,
        "/api/driver",
        VIEWER,
        "the advice driver's health",
    ),
    r(Method::GET, "/api/tokens", ADMIN, "list API tokens"),
    r(Method::POST, "/api/tokens", ADMIN, "create an API token"),
    r(
        Method::DELETE,
        "/api/tokens/{token_id}",
        ADMIN,
        "revoke an API token",
    ),
    r(Method::GET, "/api/users", ADMIN, "list users"),
    r(Method::POST, "/api/users", ADMIN, "create a user"),
    r(Method::DELETE, "/api/users/{name}", ADMIN, "delete a user"),
];

/// Body limits. Estate files get room for a 5,000-service estate (~12 MB
/// as JSON) with margin; compare bodies carry replies of up to the decider
/// limit each; everything else is small.
pub const ESTATE_BODY_LIMIT: usize = 64 * 1024 * 1024;
pub const COMPARE_BODY_LIMIT: usize = 16 * 1024 * 1024;
pub const SMALL_BODY_LIMIT: usize = 1024 * 1024;

fn handler_for(method: &Method, path: &str) -> MethodRouter<AppState> {
    use axum::routing::{delete, get, post, put};
    match (method.as_str(), path) {
        ("GET", "/healthz") => get(healthz),
        ("GET", "/readyz") => get(readyz),
        ("GET", "/metrics") => get(metrics),
        ("POST", "/api/session") => post(login),
        ("GET", "/api/session") => get(whoami),
        ("DELETE", "/api/session") => delete(logout),
        ("GET", "/api/estates") => get(list_estates),
        ("POST", "/api/estates") => post(create_estate),
        ("GET", "/api/estates/{id}") => get(get_estate),
        ("DELETE", "/api/estates/{id}") => delete(delete_estate),
        ("GET", "/api/estates/{id}/file") => get(export_file),
        ("PUT", "/api/estates/{id}/file") => put(import_file),
        ("POST", "/api/estates/{id}/facts") => post(update_facts),
        ("POST", "/api/estates/{id}/observations") => post(observe),
        ("POST", "/api/estates/{id}/import/kubernetes") => post(import_kubernetes),
        ("GET", "/api/estates/{id}/policy") => get(get_policy),
        ("PUT", "/api/estates/{id}/policy") => put(put_policy),
        ("GET", "/api/estates/{id}/snapshot") => get(snapshot),
        ("GET", "/api/estates/{id}/advice") => get(advice),
        ("GET", "/api/estates/{id}/preview") => get(preview),
        ("GET", "/api/estates/{id}/place/{service}") => get(place),
        ("POST", "/api/estates/{id}/whatif") => post(what_if),
        ("POST", "/api/estates/{id}/compare") => post(compare),
        ("GET", "/api/estates/{id}/scenarios") => get(list_scenarios),
        ("GET", "/api/estates/{id}/scenarios/{name}") => get(get_scenario),
        ("PUT", "/api/estates/{id}/scenarios/{name}") => put(put_scenario),
        ("DELETE", "/api/estates/{id}/scenarios/{name}") => delete(delete_scenario),
        ("GET", "/api/estates/{id}/deciders/{name}/runs") => get(crate::api_deciders::runs),
        ("POST", "/api/estates/{id}/deciders/{name}/runs") => post(crate::api_deciders::run_one),
        ("GET", "/api/estates/{id}/advice-snapshots") => get(crate::api_deciders::snapshots),
        ("GET", "/api/deciders") => get(crate::api_deciders::list),
        ("POST", "/api/deciders") => post(crate::api_deciders::create),
        ("GET", "/api/deciders/{name}") => get(crate::api_deciders::get),
        ("PUT", "/api/deciders/{name}") => put(crate::api_deciders::update),
        ("DELETE", "/api/deciders/{name}") => delete(crate::api_deciders::delete),
        ("POST", "/api/deciders/{name}/secret") => post(crate::api_deciders::rotate),
        ("DELETE", "/api/deciders/{name}/secret") => delete(crate::api_deciders::remove_secret),
        ("GET", "/api/driver") => get(crate::api_deciders::driver_health),
        ("GET", "/api/tokens") => get(list_tokens),
        ("POST", "/api/tokens") => post(create_token),
        ("DELETE", "/api/tokens/{token_id}") => delete(revoke_token),
        ("GET", "/api/users") => get(list_users),
        ("POST", "/api/users") => post(create_user),
        ("DELETE", "/api/users/{name}") => delete(delete_user),
        (m, p) => panic!("route table row {m} {p} has no handler"),
    }
}

/// The application: every route of [`ROUTES`] behind its access check,
/// metrics, authentication, and a JSON 404 for the rest.
pub fn app(state: AppState) -> Router {
    let mut router: Router<AppState> = Router::new();
    for spec in ROUTES {
        let handler = handler_for(&spec.method, spec.path)
            .route_layer(middleware::from_fn_with_state(spec.access, auth::require));
        // Same path, several methods: axum merges method routers.
        router = router.route(spec.path, handler);
    }
    router
        .route_layer(middleware::from_fn_with_state(state.clone(), track))
        // Web pages and static files; JSON `not_found` under /api/.
        .fallback_service(crate::web::pages(&state.config.site_root))
        .method_not_allowed_fallback(method_not_allowed)
        .layer(middleware::from_fn_with_state(
            state.clone(),
            auth::authenticate,
        ))
        // One INFO line per request (method, URI, status, latency). Headers
        // are never recorded: they carry tokens and cookies.
        .layer(
            tower_http::trace::TraceLayer::new_for_http()
                .make_span_with(
                    tower_http::trace::DefaultMakeSpan::new().level(tracing::Level::INFO),
                )
                .on_response(
                    tower_http::trace::DefaultOnResponse::new().level(tracing::Level::INFO),
                ),
        )
        .with_state(state)
}

pub(crate) async fn not_found(req: Request) -> ApiError {
    ApiError::NotFound(format!(
        "no route {} {}; the API is described in docs/api.openapi.yaml",
        req.method(),
        req.uri().path()
    ))
}

async fn method_not_allowed(req: Request) -> Response {
    let mut r = ApiError::BadRequest {
        message: format!(
            "{} is not allowed on {}; docs/api.openapi.yaml lists the methods of every route",
            req.method(),
            req.uri().path()
        ),
        details: Value::Null,
    }
    .into_response();
    *r.status_mut() = StatusCode::METHOD_NOT_ALLOWED;
    r
}

/// Count and time every routed request by its route template.
async fn track(State(state): State<AppState>, req: Request, next: Next) -> Response {
    let route = req
        .extensions()
        .get::<MatchedPath>()
        .map(|p| p.as_str().to_string())
        .unwrap_or_else(|| "unmatched".into());
    let method = req.method().to_string();
    let start = Instant::now();
    let resp = next.run(req).await;
    state.metrics.request(
        &route,
        &method,
        resp.status().as_u16(),
        start.elapsed().as_secs_f64(),
    );
    resp
}

// ---- helpers ---------------------------------------------------------

/// Query parameters, refused as JSON errors like everything else (axum's
/// own `Query` answers in plain text).
pub(crate) struct Query<T>(pub T);

impl<T: serde::de::DeserializeOwned, S: Send + Sync> axum::extract::FromRequestParts<S>
    for Query<T>
{
    type Rejection = ApiError;
    async fn from_request_parts(
        parts: &mut axum::http::request::Parts,
        _: &S,
    ) -> Result<Query<T>, ApiError> {
        axum::extract::Query::<T>::try_from_uri(&parts.uri)
            .map(|q| Query(q.0))
            .map_err(|e| ApiError::bad_request(format!("query string: {}", e.body_text())))
    }
}

/// Read a body up to `limit` bytes; over it is a 413 naming the limit.
pub(crate) async fn read_body(body: Body, limit: usize) -> ApiResult<Bytes> {
    axum::body::to_bytes(body, limit).await.map_err(|e| {
        let too_large = std::error::Error::source(&e)
            .is_some_and(|s| s.is::<http_body_util::LengthLimitError>());
        if too_large {
            ApiError::TooLarge { limit }
        } else {
            ApiError::bad_request(format!("could not read the request body: {e}"))
        }
    })
}

fn utf8(bytes: &Bytes) -> ApiResult<&str> {
    std::str::from_utf8(bytes).map_err(|e| {
        ApiError::bad_request(format!(
            "the body is not UTF-8 text (invalid byte at offset {})",
            e.valid_up_to()
        ))
    })
}

/// Parse a JSON body into `T`, saying where it went wrong.
pub(crate) fn json_body<T: serde::de::DeserializeOwned>(bytes: &Bytes, what: &str) -> ApiResult<T> {
    serde_json::from_slice(bytes).map_err(|e| ApiError::BadRequest {
        // serde_json's message already ends "at line L column C".
        message: format!("{what}: {e}"),
        details: json!({"line": e.line(), "column": e.column()}),
    })
}

/// A JSON response from an already-serialised body.
fn raw_json(status: StatusCode, body: impl Into<Body>) -> Response {
    (
        status,
        [(
            header::CONTENT_TYPE,
            HeaderValue::from_static("application/json"),
        )],
        body.into(),
    )
        .into_response()
}

fn check_id(what: &str, id: &str) -> ApiResult<()> {
    let ok = !id.is_empty()
        && id.len() <= 64
        && id
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-' || b == b'_')
        && id.as_bytes()[0].is_ascii_alphanumeric();
    if ok {
        Ok(())
    } else {
        Err(ApiError::bad_request(format!(
            "{what} {id:?}: expected 1–64 characters of a–z, 0–9, '-' and '_', starting with a letter or digit"
        )))
    }
}

/// An estate's meta, if the caller may see it. (A token scoped to another
/// estate never gets here: `auth::require` refuses it with 403 first; the
/// check below is the second line of defence.)
pub(crate) async fn visible_estate(
    state: &AppState,
    caller: &Caller,
    id: &str,
) -> ApiResult<store::EstateMeta> {
    let p = caller.principal()?;
    let missing = || ApiError::NotFound(format!("no estate {id:?}"));
    if !p.may_see_estate(id) {
        return Err(missing());
    }
    store::estate_meta(&state.db, id).await?.ok_or_else(missing)
}

/// Estate validation errors as the API reports them: every error with its
/// JSON pointer, line and message.
fn invalid_estate(errors: &[berth_engine::EstateError]) -> ApiError {
    ApiError::Invalid {
        message: format!(
            "invalid estate file: {} error{}; nothing was written",
            errors.len(),
            if errors.len() == 1 { "" } else { "s" }
        ),
        details: json!({ "errors": error_items(errors) }),
    }
}

/// Estate (and scenario: the same type) errors as 422 items
/// `{path, line, message}`.
fn error_items(errors: &[berth_engine::EstateError]) -> Vec<front::ErrorItem> {
    front::error_items(errors)
}

/// The built-in deciders' run times, for a comparison: the server owns
/// the clock.
fn stopwatch(run: &mut dyn FnMut()) -> Option<f64> {
    let start = Instant::now();
    run();
    Some(start.elapsed().as_secs_f64() * 1000.0)
}

/// The estate file format of a body: the Content-Type if it says, else a
/// look at the text.
fn format_of(headers: &HeaderMap, text: &str) -> Format {
    let ct = headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("");
    if ct.contains("yaml") {
        Format::Yaml
    } else if ct.contains("json") {
        Format::Json
    } else {
        Format::sniff(text)
    }
}

/// A parsed and canonicalised estate file.
struct Canonical {
    estate: Estate,
    document: String,
    content_digest: String,
}

async fn canonicalise(text: String, format: Format) -> ApiResult<Canonical> {
    tokio::task::spawn_blocking(move || {
        let first = estate::load(&text, format).map_err(|errs| invalid_estate(&errs))?;
        let document = serde_json::to_string(&export::to_file(&first)).expect("export serialises");
        // The estate is what the stored document loads to, not what the
        // upload did: serde_json's float parsing may land one unit in the
        // last place away from a number's shortest printed form, so the two
        // can differ in the last bit. Every later load (another replica, a
        // browser with the snapshot) reads the document, so the digest and
        // the cached estate must come from it too.
        let e = estate::load(&document, Format::Json).map_err(|errs| {
            ApiError::Internal(format!("canonical document does not load: {errs:?}"))
        })?;
        let content_digest = export::version(&e);
        Ok(Canonical {
            estate: e,
            document,
            content_digest,
        })
    })
    .await
    .map_err(|e| ApiError::Internal(format!("estate parse task: {e}")))?
}

/// Store a changed estate document under the lock the change was computed
/// under: canonicalise it, write it as the next version (with an
/// observation batch, if any, in the same transaction), and cache the
/// parsed estate. Facts, observations and Kubernetes imports all end here.
async fn write_locked(
    state: &AppState,
    lock: store::EstateLock<'_>,
    doc: &Value,
    batch: Option<store::NewBatch<'_>>,
) -> ApiResult<store::EstateMeta> {
    let c = canonicalise(
        serde_json::to_string(doc).expect("serialises"),
        Format::Json,
    )
    .await?;
    let meta = lock
        .replace_recording(
            &c.estate.name,
            &c.document,
            &c.content_digest,
            auth::now_s(),
            batch,
        )
        .await?;
    state.cache.put_estate(
        &meta.id,
        meta.version,
        &meta.content_digest,
        Arc::new(c.estate),
    );
    Ok(meta)
}

/// The parsed estate at a version, from the cache or the database.
pub(crate) async fn loaded_estate(
    state: &AppState,
    id: &str,
) -> ApiResult<(store::EstateMeta, Arc<Estate>, Policy)> {
    let row = store::estate_row(&state.db, id)
        .await?
        .ok_or_else(|| ApiError::NotFound(format!("no estate {id:?}")))?;
    let policy = Policy::from_json(&row.policy)
        .map_err(|e| ApiError::Internal(format!("stored policy of {id} invalid: {e:?}")))?;
    if let Some(e) = state
        .cache
        .estate(id, row.meta.version, &row.meta.content_digest)
    {
        return Ok((row.meta, e, policy));
    }
    let doc = row.document;
    let parsed = tokio::task::spawn_blocking(move || estate::load(&doc, Format::Json))
        .await
        .map_err(|e| ApiError::Internal(format!("estate parse task: {e}")))?
        .map_err(|e| ApiError::Internal(format!("stored estate {id} does not load: {e:?}")))?;
    let parsed = Arc::new(parsed);
    state.cache.put_estate(
        id,
        row.meta.version,
        &row.meta.content_digest,
        parsed.clone(),
    );
    Ok((row.meta, parsed, policy))
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct EvalQuery {
    /// RFC 3339 evaluation time; default: now, to the minute.
    pub(crate) now: Option<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct AdviceQuery {
    now: Option<String>,
    /// Add the Why (facts, terms, flip conditions) to every move.
    #[serde(default)]
    why: bool,
}

pub(crate) fn eval_now(now: &Option<String>) -> ApiResult<i64> {
    match now {
        Some(s) => estate::parse_time(s).ok_or_else(|| {
            ApiError::bad_request(format!(
                "now={s:?}: expected an RFC 3339 time like 2026-11-30T04:05:00Z"
            ))
        }),
        // To the minute: identical requests within a minute share one
        // cached result, and staleness windows are hours long, so nothing
        // a person could see changes within it.
        None => Ok(auth::now_s() / 60 * 60),
    }
}

/// Run an engine operation through the result cache.
///
/// The key holds everything the result depends on; the estate's version
/// and digests are read fresh from the database, so a change anywhere
/// misses the cache.
async fn engine_result<F>(
    state: &AppState,
    caller: &Caller,
    id: &str,
    op: &'static str,
    now: i64,
    extra: &str,
    run: F,
) -> ApiResult<Response>
where
    F: FnOnce(&Estate, &Policy, i64) -> ApiResult<String> + Send + 'static,
{
    let meta = visible_estate(state, caller, id).await?;
    let key = result_key(op, &meta, now, extra);
    if let Some(body) = state.cache.result(&key) {
        state.metrics.cache(op, true);
        return Ok(raw_json(StatusCode::OK, body));
    }
    state.metrics.cache(op, false);
    let (meta, estate, policy) = loaded_estate(state, id).await?;
    let start = Instant::now();
    let policy_digest = meta.policy_digest.clone();
    let result = tokio::task::spawn_blocking(move || run(&estate, &policy, now))
        .await
        .map_err(|e| ApiError::Internal(format!("engine task: {e}")))??;
    state.metrics.engine_run(op, start.elapsed().as_secs_f64());
    let body = envelope(&meta, &policy_digest, now, &result);
    let key = result_key(op, &meta, now, extra);
    let body = Bytes::from(body);
    state.cache.put_result(key, body.clone());
    Ok(raw_json(StatusCode::OK, body))
}

/// The envelope every engine result travels in: what it was computed from.
pub(crate) fn envelope(
    meta: &store::EstateMeta,
    policy_digest: &str,
    now: i64,
    result: &str,
) -> String {
    // The digest of the exact result bytes: a browser running the same
    // engine compares its own result's digest with it (parity check).
    let result_digest = auth::sha256_hex(result);
    format!(
        "{{\"estate\":{},\"version\":{},\"content_digest\":{},\"policy_digest\":{},\"now\":{},\"result_digest\":{},\"result\":{}}}",
        json!(meta.id),
        meta.version,
        json!(meta.content_digest),
        json!(policy_digest),
        json!(estate::format_time(now)),
        json!(result_digest),
        result
    )
}

/// Everything a cached result depends on. The content digest beside the
/// version: an estate deleted and created again restarts at version 1.
fn result_key(op: &str, meta: &store::EstateMeta, now: i64, extra: &str) -> String {
    format!(
        "{op}|{}|{}|{}|{}|{now}|{extra}",
        meta.id, meta.version, meta.content_digest, meta.policy_digest
    )
}

fn to_json<T: Serialize>(v: &T) -> String {
    serde_json::to_string(v).expect("results serialise")
}

fn body_digest(bytes: &[u8]) -> String {
    use sha2::{Digest, Sha256};
    hex::encode(&Sha256::digest(bytes)[..16])
}

// ---- operations ------------------------------------------------------

async fn healthz() -> Json<Value> {
    Json(json!({"status": "ok"}))
}

async fn readyz(State(state): State<AppState>) -> Response {
    match state.db.ready().await {
        Ok(()) => {
            Json(json!({"status": "ready", "database": state.db.backend.as_str()})).into_response()
        }
        Err(why) => {
            tracing::warn!(%why, "not ready");
            (
                StatusCode::SERVICE_UNAVAILABLE,
                Json(json!({"error": "unavailable", "message": "not ready: the database is unreachable or not migrated", "details": null})),
            )
                .into_response()
        }
    }
}

async fn metrics(State(state): State<AppState>) -> Response {
    let text = state.metrics.render(
        state.db.pool.size(),
        state.db.pool.num_idle(),
        state.db.pool.options().get_max_connections(),
    );
    (
        [(
            header::CONTENT_TYPE,
            "text/plain; version=0.0.4; charset=utf-8",
        )],
        text,
    )
        .into_response()
}

// ---- sessions --------------------------------------------------------

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct LoginBody {
    #[serde(default)]
    username: Option<String>,
    #[serde(default)]
    password: Option<String>,
    #[serde(default)]
    token: Option<String>,
}

async fn login(
    State(state): State<AppState>,
    peer: auth::Peer,
    headers: HeaderMap,
    body: Body,
) -> ApiResult<Response> {
    let addr = auth::client_addr(&headers, &peer, state.config.trust_forwarded_for);
    state.limiter.check(addr)?;
    // JSON only: a cross-site HTML form cannot send it without a CORS
    // preflight, which this server never grants (login CSRF).
    let is_json = headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.starts_with("application/json"));
    if !is_json {
        return Err(ApiError::bad_request(
            "sign in with a JSON body {\"username\", \"password\"} or {\"token\"} and Content-Type: application/json",
        ));
    }
    let bytes = read_body(body, SMALL_BODY_LIMIT).await?;
    let b: LoginBody = json_body(&bytes, "sign-in")?;
    let wrong = || ApiError::Forbidden("wrong user name, password or token".into());
    let (subject, role, estate, token_id) = match (b.username, b.password, b.token) {
        (Some(user), Some(password), None) => {
            let found = store::user_credentials(&state.db, &user).await?;
            let (role, hash) = match &found {
                Some((role, hash)) => (Some(*role), hash.clone()),
                None => (None, auth::dummy_hash().to_string()),
            };
            let ok = tokio::task::spawn_blocking(move || auth::verify_password(&password, &hash))
                .await
                .map_err(|e| ApiError::Internal(format!("password task: {e}")))?;
            match (ok, role) {
                (true, Some(role)) => (user, role, None, None),
                _ => return Err(wrong()),
            }
        }
        (None, None, Some(token)) => {
            let t = store::token_by_hash(&state.db, &auth::sha256_hex(&token))
                .await?
                .ok_or_else(wrong)?;
            if t.role == Role::Agent {
                return Err(ApiError::Forbidden(
                    "an agent token is used as a bearer token by its agent; it cannot open a browser session".into(),
                ));
            }
            (format!("token:{}", t.id), t.role, t.estate_id, Some(t.id))
        }
        _ => {
            return Err(ApiError::bad_request(
                "sign in with either {\"username\", \"password\"} or {\"token\"}",
            ))
        }
    };
    let session_id = auth::random_secret();
    let csrf = auth::random_secret();
    let previous = auth::session_cookie_of(&headers).map(|c| auth::sha256_hex(&c));
    let now = auth::now_s();
    store::start_session(
        &state.db,
        &auth::sha256_hex(&session_id),
        previous.as_deref(),
        &subject,
        role,
        estate.as_deref(),
        token_id.as_deref(),
        &csrf,
        now,
        state.config.session_ttl_s,
    )
    .await?;
    tracing::info!(%subject, role = role.as_str(), "signed in");
    let cookie = format!(
        "{}={session_id}; Path=/; HttpOnly; SameSite=Lax; Max-Age={}{}",
        auth::SESSION_COOKIE,
        state.config.session_ttl_s,
        if state.config.secure_cookies {
            "; Secure"
        } else {
            ""
        }
    );
    let mut resp = Json(json!({
        "subject": subject,
        "role": role,
        "estate": estate,
        "csrf_token": csrf,
        "expires_at": estate::format_time(now + state.config.session_ttl_s),
    }))
    .into_response();
    resp.headers_mut().insert(
        header::SET_COOKIE,
        HeaderValue::from_str(&cookie).expect("cookie is ASCII"),
    );
    Ok(resp)
}

async fn whoami(caller: Caller) -> ApiResult<Json<Value>> {
    let p = caller.principal()?;
    let csrf = match &p.via {
        Via::Session { csrf, .. } => Some(csrf.clone()),
        Via::Bearer { .. } => None,
    };
    Ok(Json(json!({
        "subject": p.subject,
        "role": p.role,
        "estate": p.estate,
        "csrf_token": csrf,
    })))
}

async fn logout(State(state): State<AppState>, caller: Caller) -> ApiResult<Response> {
    let p = caller.principal()?;
    if let Via::Session { id_hash, .. } = &p.via {
        store::end_session(&state.db, id_hash).await?;
    }
    let cookie = format!(
        "{}=; Path=/; HttpOnly; SameSite=Lax; Max-Age=0{}",
        auth::SESSION_COOKIE,
        if state.config.secure_cookies {
            "; Secure"
        } else {
            ""
        }
    );
    let mut resp = StatusCode::NO_CONTENT.into_response();
    resp.headers_mut().insert(
        header::SET_COOKIE,
        HeaderValue::from_str(&cookie).expect("cookie is ASCII"),
    );
    Ok(resp)
}

// ---- estates ---------------------------------------------------------

async fn list_estates(State(state): State<AppState>, caller: Caller) -> ApiResult<Json<Value>> {
    let p = caller.principal()?;
    let all = store::list_estates(&state.db).await?;
    let visible: Vec<_> = all
        .into_iter()
        .filter(|e| p.may_see_estate(&e.id))
        .collect();
    Ok(Json(json!({"estates": visible})))
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct CreateQuery {
    id: Option<String>,
}

/// An id from a name: lowercase letters and digits, runs of anything else
/// as one '-'.
fn slug(name: &str) -> String {
    let mut s = String::new();
    for c in name.chars() {
        if c.is_ascii_alphanumeric() {
            s.push(c.to_ascii_lowercase());
        } else if !s.ends_with('-') && !s.is_empty() {
            s.push('-');
        }
    }
    let s = s.trim_end_matches('-');
    let s: String = s.chars().take(64).collect();
    if s.is_empty() {
        "estate".into()
    } else {
        s.trim_end_matches('-').to_string()
    }
}

async fn create_estate(
    State(state): State<AppState>,
    caller: Caller,
    Query(q): Query<CreateQuery>,
    headers: HeaderMap,
    body: Body,
) -> ApiResult<Response> {
    let p = caller.principal()?;
    if p.estate.is_some() {
        return Err(ApiError::Forbidden(
            "a token scoped to one estate cannot create estates".into(),
        ));
    }
    let bytes = read_body(body, ESTATE_BODY_LIMIT).await?;
    let text = utf8(&bytes)?.to_string();
    let format = format_of(&headers, &text);
    if let Some(id) = &q.id {
        check_id("estate id", id)?;
    }
    let c = canonicalise(text, format).await?;
    let id = q.id.unwrap_or_else(|| slug(&c.estate.name));
    let policy = Policy::default();
    let meta = store::create_estate(
        &state.db,
        store::NewEstate {
            id: &id,
            name: &c.estate.name,
            document: &c.document,
            content_digest: &c.content_digest,
            policy: &to_json(&policy),
            policy_digest: &policy.digest(),
        },
        auth::now_s(),
    )
    .await?;
    tracing::info!(estate = %id, by = %p.subject, services = c.estate.services.len(), "estate created");
    Ok((StatusCode::CREATED, Json(summary(&meta, &c.estate))).into_response())
}

fn summary(meta: &store::EstateMeta, e: &Estate) -> Value {
    json!({
        "id": meta.id,
        "name": meta.name,
        "version": meta.version,
        "content_digest": meta.content_digest,
        "policy_digest": meta.policy_digest,
        "created_at": estate::format_time(meta.created_at),
        "updated_at": estate::format_time(meta.updated_at),
        "counts": {
            "sites": e.sites.len(),
            "clusters": e.clusters.len(),
            "links": e.links.len(),
            "paths": e.paths.len(),
            "services": e.services.len(),
            "flows": e.flows.len(),
        }
    })
}

async fn get_estate(
    State(state): State<AppState>,
    caller: Caller,
    Path(id): Path<String>,
) -> ApiResult<Json<Value>> {
    visible_estate(&state, &caller, &id).await?;
    let (meta, e, _) = loaded_estate(&state, &id).await?;
    Ok(Json(summary(&meta, &e)))
}

async fn delete_estate(
    State(state): State<AppState>,
    caller: Caller,
    Path(id): Path<String>,
) -> ApiResult<StatusCode> {
    visible_estate(&state, &caller, &id).await?;
    if store::delete_estate(&state.db, &id).await? {
        tracing::info!(estate = %id, by = %caller.principal()?.subject, "estate deleted");
        Ok(StatusCode::NO_CONTENT)
    } else {
        Err(ApiError::NotFound(format!("no estate {id:?}")))
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ExportQuery {
    format: Option<String>,
}

async fn export_file(
    State(state): State<AppState>,
    caller: Caller,
    Path(id): Path<String>,
    Query(q): Query<ExportQuery>,
) -> ApiResult<Response> {
    visible_estate(&state, &caller, &id).await?;
    let row = store::estate_row(&state.db, &id)
        .await?
        .ok_or_else(|| ApiError::NotFound(format!("no estate {id:?}")))?;
    let etag = format!("\"{}-{}\"", row.meta.version, row.meta.content_digest);
    let (ct, body) = match q.format.as_deref() {
        // The stored document exactly: re-printing it through a parsed
        // value could move a number by one unit in the last place.
        None | Some("json") => ("application/json", row.document),
        Some("yaml") => {
            let doc: Value = serde_json::from_str(&row.document)
                .map_err(|e| ApiError::Internal(format!("stored document of {id}: {e}")))?;
            (
                "application/yaml",
                serde_yaml::to_string(&doc).map_err(|e| ApiError::Internal(e.to_string()))?,
            )
        }
        Some(other) => {
            return Err(ApiError::bad_request(format!(
                "format={other:?}: expected json or yaml"
            )))
        }
    };
    Ok((
        [(header::CONTENT_TYPE, ct.to_string()), (header::ETAG, etag)],
        body,
    )
        .into_response())
}

async fn import_file(
    State(state): State<AppState>,
    caller: Caller,
    Path(id): Path<String>,
    headers: HeaderMap,
    body: Body,
) -> ApiResult<Json<Value>> {
    let meta = visible_estate(&state, &caller, &id).await?;
    let bytes = read_body(body, ESTATE_BODY_LIMIT).await?;
    let text = utf8(&bytes)?.to_string();
    let format = format_of(&headers, &text);
    let c = canonicalise(text, format).await?;
    // An import replaces whatever is there, so a concurrent change is
    // overwritten by design; the version check only keeps the bump exact.
    let mut expected = meta.version;
    for _ in 0..5 {
        match store::replace_document(
            &state.db,
            &id,
            expected,
            &c.estate.name,
            &c.document,
            &c.content_digest,
            auth::now_s(),
        )
        .await?
        {
            Ok(meta) => {
                tracing::info!(estate = %id, version = meta.version, services = c.estate.services.len(), "estate imported");
                state.cache.put_estate(
                    &id,
                    meta.version,
                    &meta.content_digest,
                    Arc::new(c.estate.clone()),
                );
                return Ok(Json(summary(&meta, &c.estate)));
            }
            Err(store::Stale) => {
                expected = store::estate_meta(&state.db, &id)
                    .await?
                    .ok_or_else(|| {
                        ApiError::NotFound(format!("estate {id:?} was deleted meanwhile"))
                    })?
                    .version;
            }
        }
    }
    Err(ApiError::Conflict(format!(
        "estate {id:?} kept changing during the import; try again"
    )))
}

async fn update_facts(
    State(state): State<AppState>,
    caller: Caller,
    Path(id): Path<String>,
    body: Body,
) -> ApiResult<Json<Value>> {
    visible_estate(&state, &caller, &id).await?;
    let bytes = read_body(body, ESTATE_BODY_LIMIT).await?;
    let batch: crate::facts::FactBatch = json_body(&bytes, "fact updates")?;
    let received_at = auth::now_s();
    // The estate is held from this read to the write, so a batch is
    // applied to the document as it is, whoever else (request or replica)
    // is updating facts at the same time: none is lost, none refused.
    let lock = store::lock_estate(&state.db, &id)
        .await?
        .ok_or_else(|| ApiError::NotFound(format!("no estate {id:?}")))?;
    let doc: Value = serde_json::from_str(&lock.row.document)
        .map_err(|e| ApiError::Internal(format!("stored document of {id}: {e}")))?;
    let new_doc =
        crate::facts::apply(&doc, &batch, received_at).map_err(|errors| ApiError::Invalid {
            message: format!(
                "{} fact update{} refused; nothing was applied",
                errors.len(),
                if errors.len() == 1 { "" } else { "s" }
            ),
            details: json!({ "errors": errors }),
        })?;
    let meta = write_locked(&state, lock, &new_doc, None).await?;
    Ok(Json(json!({
        "estate": id,
        "version": meta.version,
        "content_digest": meta.content_digest,
        "applied": batch.updates.len(),
    })))
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ObservationBatch {
    batch_id: String,
    observations: Vec<crate::facts::FactUpdate>,
}

/// Longest batch id: room for "<estate>/<cluster>/<RFC 3339 time>" and
/// more, short enough to index.
const MAX_BATCH_ID_CHARS: usize = 128;

/// Agents' observations (SPEC §12): a batch of measured facts, applied
/// whole or not at all, exactly once per batch id.
async fn observe(
    State(state): State<AppState>,
    caller: Caller,
    Path(id): Path<String>,
    body: Body,
) -> ApiResult<Json<Value>> {
    let p = caller.principal()?.clone();
    // Per token (or user): one misbehaving agent cannot crowd out others.
    state.observe_limiter.check_key(&p.subject)?;
    visible_estate(&state, &caller, &id).await?;
    let bytes = read_body(body, ESTATE_BODY_LIMIT).await?;
    let batch: ObservationBatch = json_body(&bytes, "observations")?;
    if batch.batch_id.is_empty()
        || batch.batch_id.chars().count() > MAX_BATCH_ID_CHARS
        || batch.batch_id.chars().any(char::is_control)
    {
        return Err(ApiError::Invalid {
            message: "invalid batch_id; nothing was applied".into(),
            details: json!({"errors": [{"path": "/batch_id", "line": null,
                "message": format!("1 to {MAX_BATCH_ID_CHARS} characters, no control characters")}]}),
        });
    }
    let digest = hex::encode(<sha2::Sha256 as sha2::Digest>::digest(&bytes));
    let mut lock = store::lock_estate(&state.db, &id)
        .await?
        .ok_or_else(|| ApiError::NotFound(format!("no estate {id:?}")))?;
    // A retry (the agent never saw our answer) is answered from the
    // record; the same id with other content is a bug to surface.
    if let Some(seen) = lock.batch(&batch.batch_id).await? {
        if seen.body_digest != digest {
            return Err(ApiError::Conflict(format!(
                "batch_id {:?} was already used for a different batch; give every batch its own id",
                batch.batch_id
            )));
        }
        return Ok(Json(json!({
            "estate": id,
            "batch_id": batch.batch_id,
            "version": seen.version,
            "applied": seen.applied,
            "duplicate": true,
        })));
    }
    let doc: Value = serde_json::from_str(&lock.row.document)
        .map_err(|e| ApiError::Internal(format!("stored document of {id}: {e}")))?;
    let mode = crate::facts::Mode {
        list: "observations",
        default_class: Some(berth_engine::fact::Class::Measured),
        require_observed_at: true,
        default_source: format!("agent:{}", p.label),
        received_at: auth::now_s(),
    };
    let new_doc = crate::facts::apply_with(&doc, &batch.observations, &mode).map_err(|errors| {
        ApiError::Invalid {
            message: format!(
                "{} observation{} refused; nothing was applied",
                errors.len(),
                if errors.len() == 1 { "" } else { "s" }
            ),
            details: json!({ "errors": errors }),
        }
    })?;
    let applied = batch.observations.len() as i64;
    let record = store::NewBatch {
        batch_id: &batch.batch_id,
        body_digest: &digest,
        applied,
    };
    let meta = write_locked(&state, lock, &new_doc, Some(record)).await?;
    tracing::info!(estate = %id, batch_id = %batch.batch_id, by = %p.subject, applied, version = meta.version, "observations applied");
    Ok(Json(json!({
        "estate": id,
        "batch_id": batch.batch_id,
        "version": meta.version,
        "applied": applied,
        "duplicate": false,
    })))
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct KubernetesImportBody {
    /// The estate cluster the manifests describe.
    cluster: String,
    /// Manifest files, each with the name errors are reported under.
    files: Vec<ManifestFile>,
    #[serde(default)]
    skip_invalid: bool,
    /// Report what would change, and change nothing.
    #[serde(default)]
    dry_run: bool,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ManifestFile {
    name: String,
    text: String,
}

/// Kubernetes manifests into an estate (docs/kubernetes-import.md): the
/// same parser and merge as `berth import kubernetes --into`, applied under
/// the estate lock so it lands on the estate as it is, as one new version
/// — or, when it changes nothing, as none.
async fn import_kubernetes(
    State(state): State<AppState>,
    caller: Caller,
    Path(id): Path<String>,
    body: Body,
) -> ApiResult<Json<Value>> {
    use crate::import::{self, kubernetes};
    visible_estate(&state, &caller, &id).await?;
    let bytes = read_body(body, ESTATE_BODY_LIMIT).await?;
    let b: KubernetesImportBody = json_body(&bytes, "kubernetes import")?;
    if b.files.is_empty() {
        return Err(ApiError::bad_request(
            "files: give at least one manifest file",
        ));
    }
    let inputs: Vec<import::Input> = b
        .files
        .iter()
        .map(|f| import::Input {
            name: &f.name,
            text: &f.text,
        })
        .collect();
    let imported = kubernetes::parse(
        &inputs,
        kubernetes::Options {
            skip_invalid: b.skip_invalid,
        },
    )
    .map_err(|errors| ApiError::Invalid {
        message: format!(
            "nothing imported: {} error{} in the manifests (skip_invalid leaves such objects out)",
            errors.len(),
            if errors.len() == 1 { "" } else { "s" }
        ),
        details: json!({"errors": errors.iter().map(|e| json!({
                "path": if e.path.is_empty() { "/" } else { &e.path },
                "line": e.line,
                "message": e.message,
                "file": e.file,
                "document": e.document,
                "object": e.object,
            })).collect::<Vec<_>>()}),
    })?;
    let lock = store::lock_estate(&state.db, &id)
        .await?
        .ok_or_else(|| ApiError::NotFound(format!("no estate {id:?}")))?;
    let doc: Value = serde_json::from_str(&lock.row.document)
        .map_err(|e| ApiError::Internal(format!("stored document of {id}: {e}")))?;
    let (merged, report) = import::merge(&doc, &b.cluster, &imported).map_err(|e| match e {
        import::MergeError::UnknownCluster { .. } => ApiError::Invalid {
            message: e.to_string(),
            details: json!({"errors": [{"path": "/cluster", "line": null, "message": e.to_string()}]}),
        },
        other => ApiError::Invalid {
            message: other.to_string(),
            details: json!({"errors": []}),
        },
    })?;
    let noop = report.is_noop();
    let version = if b.dry_run || noop {
        // Dropping the lock rolls back: nothing was written.
        lock.row.meta.version
    } else {
        let meta = write_locked(&state, lock, &merged, None).await?;
        tracing::info!(estate = %id, cluster = %b.cluster, version = meta.version, added = report.added.len(), changed = report.changed.len(), removed = report.removed.len(), "kubernetes import");
        meta.version
    };
    Ok(Json(json!({
        "estate": id,
        "version": version,
        "written": !b.dry_run && !noop,
        "report": report,
    })))
}

// ---- policy ----------------------------------------------------------

async fn get_policy(
    State(state): State<AppState>,
    caller: Caller,
    Path(id): Path<String>,
) -> ApiResult<Response> {
    let meta = visible_estate(&state, &caller, &id).await?;
    let policy = store::policy_of(&state.db, &id)
        .await?
        .ok_or_else(|| ApiError::NotFound(format!("no estate {id:?}")))?;
    Ok(raw_json(
        StatusCode::OK,
        format!(
            "{{\"estate\":{},\"policy_digest\":{},\"policy\":{policy}}}",
            json!(id),
            json!(meta.policy_digest)
        ),
    ))
}

/// A policy error as a 422 item `{path, line, message}`: a field's error
/// points at the field (`placement.rtt_weight` → `/placement/rtt_weight`);
/// a parse error (unknown field, wrong type) carries its line.
fn policy_error_item(e: &berth_engine::policy::PolicyError) -> Value {
    let at_line = e
        .field
        .strip_prefix("line ")
        .and_then(|rest| rest.split(' ').next())
        .and_then(|l| l.parse::<usize>().ok());
    match at_line {
        Some(line) => json!({"path": "/", "line": line, "message": e.message}),
        None => json!({
            "path": format!("/{}", e.field.replace('.', "/")),
            "line": null,
            "message": e.message,
        }),
    }
}

async fn put_policy(
    State(state): State<AppState>,
    caller: Caller,
    Path(id): Path<String>,
    body: Body,
) -> ApiResult<Json<Value>> {
    visible_estate(&state, &caller, &id).await?;
    let bytes = read_body(body, SMALL_BODY_LIMIT).await?;
    let text = utf8(&bytes)?;
    // Not JSON at all is a malformed request (400), like on every route;
    // JSON that is no valid policy is invalid content (422).
    let _: Value = json_body(&bytes, "policy")?;
    let policy = Policy::from_json(text).map_err(|errors| ApiError::Invalid {
        message: format!(
            "invalid policy: {} error{}; the policy was not changed",
            errors.len(),
            if errors.len() == 1 { "" } else { "s" }
        ),
        details: json!({ "errors": errors.iter().map(policy_error_item).collect::<Vec<_>>() }),
    })?;
    let digest = policy.digest();
    let meta = store::replace_policy(&state.db, &id, &to_json(&policy), &digest, auth::now_s())
        .await?
        .ok_or_else(|| ApiError::NotFound(format!("no estate {id:?}")))?;
    tracing::info!(estate = %id, policy_digest = %digest, by = %caller.principal()?.subject, "policy replaced");
    Ok(Json(json!({
        "estate": id,
        "version": meta.version,
        "policy_digest": digest,
        "policy": policy,
    })))
}

// ---- engine results --------------------------------------------------

async fn snapshot(
    State(state): State<AppState>,
    caller: Caller,
    Path(id): Path<String>,
) -> ApiResult<Response> {
    visible_estate(&state, &caller, &id).await?;
    let row = store::estate_row(&state.db, &id)
        .await?
        .ok_or_else(|| ApiError::NotFound(format!("no estate {id:?}")))?;
    // The document and policy exactly as stored: the browser loads them
    // with the same engine and must reach the same digests.
    Ok(raw_json(
        StatusCode::OK,
        format!(
            "{{\"estate\":{},\"version\":{},\"content_digest\":{},\"policy_digest\":{},\"server_now\":{},\"policy\":{},\"document\":{}}}",
            json!(id),
            row.meta.version,
            json!(row.meta.content_digest),
            json!(row.meta.policy_digest),
            json!(estate::format_time(auth::now_s())),
            row.policy,
            row.document
        ),
    ))
}

async fn advice(
    State(state): State<AppState>,
    caller: Caller,
    Path(id): Path<String>,
    Query(q): Query<AdviceQuery>,
) -> ApiResult<Response> {
    let now = eval_now(&q.now)?;
    let why = q.why;
    engine_result(
        &state,
        &caller,
        &id,
        "advice",
        now,
        if why { "why" } else { "" },
        move |e, p, now| {
            Ok(if why {
                front::advice_why(e, p, now)
            } else {
                front::advice(e, p, now)
            })
        },
    )
    .await
}

async fn preview(
    State(state): State<AppState>,
    caller: Caller,
    Path(id): Path<String>,
    Query(q): Query<EvalQuery>,
) -> ApiResult<Response> {
    let now = eval_now(&q.now)?;
    engine_result(&state, &caller, &id, "preview", now, "", |e, p, now| {
        Ok(front::preview(e, p, now))
    })
    .await
}

async fn place(
    State(state): State<AppState>,
    caller: Caller,
    Path((id, service)): Path<(String, String)>,
    Query(q): Query<EvalQuery>,
) -> ApiResult<Response> {
    let now = eval_now(&q.now)?;
    let svc = service.clone();
    engine_result(
        &state,
        &caller,
        &id,
        "place",
        now,
        &service,
        move |e, p, now| front::place(e, p, now, &svc).map_err(ApiError::NotFound),
    )
    .await
}

fn invalid_scenario(errors: &[whatif::ScenarioError]) -> ApiError {
    ApiError::Invalid {
        message: format!(
            "invalid scenario: {} error{}",
            errors.len(),
            if errors.len() == 1 { "" } else { "s" }
        ),
        details: json!({ "errors": error_items(errors) }),
    }
}

async fn what_if(
    State(state): State<AppState>,
    caller: Caller,
    Path(id): Path<String>,
    Query(q): Query<EvalQuery>,
    body: Body,
) -> ApiResult<Response> {
    let now = eval_now(&q.now)?;
    let bytes = read_body(body, SMALL_BODY_LIMIT).await?;
    let text = utf8(&bytes)?.to_string();
    let digest = body_digest(text.as_bytes());
    engine_result(
        &state,
        &caller,
        &id,
        "whatif",
        now,
        &digest,
        move |e, p, now| {
            front::whatif(e, p, now, &text).map_err(|errors| invalid_scenario(&errors))
        },
    )
    .await
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct CompareBody {
    /// External replies to score, by decider name.
    #[serde(default)]
    responses: std::collections::BTreeMap<String, Value>,
    /// Registered external deciders to call now, in this order.
    #[serde(default)]
    external: Vec<String>,
}

async fn compare(
    State(state): State<AppState>,
    caller: Caller,
    Path(id): Path<String>,
    Query(q): Query<EvalQuery>,
    body: Body,
) -> ApiResult<Response> {
    let now = eval_now(&q.now)?;
    let bytes = read_body(body, COMPARE_BODY_LIMIT).await?;
    let b: CompareBody = if bytes.iter().all(u8::is_ascii_whitespace) {
        CompareBody::default()
    } else {
        json_body(&bytes, "compare request")?
    };
    for name in b.responses.keys() {
        if ["baseline", "heaviest-talker"].contains(&name.as_str()) {
            return Err(ApiError::bad_request(format!(
                "responses/{name}: {name:?} is the name of a built-in decider; choose another"
            )));
        }
        if name.is_empty() || name.chars().count() > 64 {
            return Err(ApiError::bad_request(format!(
                "responses/{name}: a decider name must be 1 to 64 characters"
            )));
        }
    }
    let digest = body_digest(&bytes);
    // BTreeMap: replies are scored in name order, whatever the JSON order.
    let externals: Vec<decider::External> = b
        .responses
        .into_iter()
        .map(|(name, v)| {
            let bytes = serde_json::to_vec(&v).expect("serialises");
            decider::External {
                name,
                response: decider::parse_response(&bytes).map_err(decider::DeciderError::from),
                run_time_ms: None,
            }
        })
        .collect();
    if !b.external.is_empty() {
        return compare_live(&state, &caller, &id, now, b.external, externals).await;
    }
    engine_result(
        &state,
        &caller,
        &id,
        "compare",
        now,
        &digest,
        move |e, p, now| Ok(front::compare(e, p, now, &externals, &mut stopwatch)),
    )
    .await
}

/// A comparison that calls registered deciders: never cached (a live
/// decider may answer differently each time), and each call is stored as a
/// run. Uploaded replies are scored after the live ones.
async fn compare_live(
    state: &AppState,
    caller: &Caller,
    id: &str,
    now: i64,
    names: Vec<String>,
    uploaded: Vec<decider::External>,
) -> ApiResult<Response> {
    visible_estate(state, caller, id).await?;
    let mut seen = std::collections::BTreeSet::new();
    for n in &names {
        if !seen.insert(n) {
            return Err(ApiError::bad_request(format!("external/{n}: named twice")));
        }
        if uploaded.iter().any(|u| u.name == *n) {
            return Err(ApiError::bad_request(format!(
                "external/{n}: also given under responses; give one or the other"
            )));
        }
    }
    // 16: more live deciders in one comparison than fit on a page is a
    // script, and it should use the runs route one by one.
    if names.len() > 16 {
        return Err(ApiError::bad_request(
            "external: at most 16 registered deciders in one comparison",
        ));
    }
    let (mut externals, _, meta) =
        crate::api_deciders::run_named(state, caller, id, &names, now).await?;
    externals.extend(uploaded);
    let (meta2, estate, policy) = loaded_estate(state, id).await?;
    if meta2.version != meta.version || meta2.policy_digest != meta.policy_digest {
        return Err(ApiError::Conflict(format!(
            "estate {id:?} changed while the deciders ran; compare again"
        )));
    }
    let start = Instant::now();
    let result = tokio::task::spawn_blocking(move || {
        front::compare(&estate, &policy, now, &externals, &mut stopwatch)
    })
    .await
    .map_err(|e| ApiError::Internal(format!("engine task: {e}")))?;
    state
        .metrics
        .engine_run("compare", start.elapsed().as_secs_f64());
    Ok(raw_json(
        StatusCode::OK,
        envelope(&meta2, &meta2.policy_digest, now, &result),
    ))
}

// ---- scenarios -------------------------------------------------------

async fn list_scenarios(
    State(state): State<AppState>,
    caller: Caller,
    Path(id): Path<String>,
) -> ApiResult<Json<Value>> {
    visible_estate(&state, &caller, &id).await?;
    Ok(Json(
        json!({"scenarios": store::list_scenarios(&state.db, &id).await?}),
    ))
}

async fn get_scenario(
    State(state): State<AppState>,
    caller: Caller,
    Path((id, name)): Path<(String, String)>,
) -> ApiResult<Response> {
    visible_estate(&state, &caller, &id).await?;
    let body = store::scenario(&state.db, &id, &name)
        .await?
        .ok_or_else(|| ApiError::NotFound(format!("no scenario {name:?} in estate {id:?}")))?;
    Ok(raw_json(StatusCode::OK, body))
}

async fn put_scenario(
    State(state): State<AppState>,
    caller: Caller,
    Path((id, name)): Path<(String, String)>,
    body: Body,
) -> ApiResult<StatusCode> {
    visible_estate(&state, &caller, &id).await?;
    check_id("scenario name", &name)?;
    let bytes = read_body(body, SMALL_BODY_LIMIT).await?;
    let text = utf8(&bytes)?;
    // Checked against the estate as it is now: a saved scenario names
    // services and clusters that exist. (It may go stale later; running it
    // then reports exactly what vanished.)
    let (_, e, _) = loaded_estate(&state, &id).await?;
    let sc = whatif::Scenario::from_json_checked(text, &e).map_err(|mut errors| {
        whatif::locate_errors(&mut errors, text);
        invalid_scenario(&errors)
    })?;
    store::put_scenario(
        &state.db,
        &id,
        &name,
        &sc.to_json(),
        &caller.principal()?.subject,
        auth::now_s(),
    )
    .await?;
    Ok(StatusCode::NO_CONTENT)
}

async fn delete_scenario(
    State(state): State<AppState>,
    caller: Caller,
    Path((id, name)): Path<(String, String)>,
) -> ApiResult<StatusCode> {
    visible_estate(&state, &caller, &id).await?;
    if store::delete_scenario(&state.db, &id, &name).await? {
        Ok(StatusCode::NO_CONTENT)
    } else {
        Err(ApiError::NotFound(format!(
            "no scenario {name:?} in estate {id:?}"
        )))
    }
}

// ---- tokens and users ------------------------------------------------

async fn list_tokens(State(state): State<AppState>) -> ApiResult<Json<Value>> {
    Ok(Json(
        json!({"tokens": store::list_tokens(&state.db).await?}),
    ))
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct NewTokenBody {
    name: String,
    role: String,
    #[serde(default)]
    estate: Option<String>,
}

async fn create_token(
    State(state): State<AppState>,
    caller: Caller,
    peer: auth::Peer,
    headers: HeaderMap,
    body: Body,
) -> ApiResult<Response> {
    let addr = auth::client_addr(&headers, &peer, state.config.trust_forwarded_for);
    state.limiter.check(addr)?;
    let bytes = read_body(body, SMALL_BODY_LIMIT).await?;
    let b: NewTokenBody = json_body(&bytes, "new token")?;
    let role = Role::parse(&b.role).ok_or_else(|| {
        ApiError::bad_request(format!(
            "role {:?}: expected agent, viewer, operator or admin",
            b.role
        ))
    })?;
    if role == Role::Agent && b.estate.is_none() {
        return Err(ApiError::bad_request(
            "an agent token must be scoped to one estate: give \"estate\"",
        ));
    }
    if b.name.trim().is_empty() || b.name.chars().count() > 100 {
        return Err(ApiError::bad_request(
            "name: 1 to 100 characters, not blank",
        ));
    }
    if let Some(e) = &b.estate {
        if role == Role::Admin {
            return Err(ApiError::bad_request(
                "an admin token cannot be scoped to one estate: administration is estate-wide",
            ));
        }
        if store::estate_meta(&state.db, e).await?.is_none() {
            return Err(ApiError::bad_request(format!(
                "estate {e:?}: no such estate"
            )));
        }
    }
    let token = auth::new_token();
    let id = auth::random_id();
    let by = caller.principal()?.subject.clone();
    store::insert_token(
        &state.db,
        store::NewToken {
            id: &id,
            hash: &auth::sha256_hex(&token),
            name: &b.name,
            role,
            estate_id: b.estate.as_deref(),
            created_by: &by,
        },
        auth::now_s(),
    )
    .await?;
    tracing::info!(token_id = %id, role = role.as_str(), by = %by, "token created");
    Ok((
        StatusCode::CREATED,
        Json(json!({
            "id": id,
            "token": token,
            "name": b.name,
            "role": role,
            "estate": b.estate,
            "note": "the token is shown only now; Berth keeps only its hash",
        })),
    )
        .into_response())
}

async fn revoke_token(
    State(state): State<AppState>,
    caller: Caller,
    Path(token_id): Path<String>,
) -> ApiResult<StatusCode> {
    if store::revoke_token(&state.db, &token_id, auth::now_s()).await? {
        tracing::info!(%token_id, by = %caller.principal()?.subject, "token revoked");
        Ok(StatusCode::NO_CONTENT)
    } else {
        Err(ApiError::NotFound(format!(
            "no live token {token_id:?} (unknown or already revoked)"
        )))
    }
}

async fn list_users(State(state): State<AppState>) -> ApiResult<Json<Value>> {
    Ok(Json(json!({"users": store::list_users(&state.db).await?})))
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct NewUserBody {
    name: String,
    role: String,
    password: String,
}

/// Shortest password accepted: 12 characters is the length current
/// guidance (NIST SP 800-63B allows 8; 12 buys margin) puts beyond offline
/// guessing against Argon2id.
const MIN_PASSWORD_CHARS: usize = 12;

async fn create_user(
    State(state): State<AppState>,
    caller: Caller,
    body: Body,
) -> ApiResult<Response> {
    let bytes = read_body(body, SMALL_BODY_LIMIT).await?;
    let b: NewUserBody = json_body(&bytes, "new user")?;
    check_id("user name", &b.name)?;
    let role = Role::parse(&b.role)
        .filter(|r| *r != Role::Agent)
        .ok_or_else(|| {
            ApiError::bad_request(format!(
                "role {:?}: expected viewer, operator or admin (agents use agent tokens, not accounts)",
                b.role
            ))
        })?;
    if b.password.chars().count() < MIN_PASSWORD_CHARS {
        return Err(ApiError::bad_request(format!(
            "password: at least {MIN_PASSWORD_CHARS} characters"
        )));
    }
    let password = b.password;
    let hash = tokio::task::spawn_blocking(move || auth::hash_password(&password))
        .await
        .map_err(|e| ApiError::Internal(format!("password task: {e}")))?;
    store::insert_user(&state.db, &b.name, role, &hash, auth::now_s()).await?;
    tracing::info!(user = %b.name, role = role.as_str(), by = %caller.principal()?.subject, "user created");
    Ok((
        StatusCode::CREATED,
        Json(json!({"name": b.name, "role": role})),
    )
        .into_response())
}

async fn delete_user(
    State(state): State<AppState>,
    Path(name): Path<String>,
) -> ApiResult<StatusCode> {
    if store::delete_user(&state.db, &name).await? {
        Ok(StatusCode::NO_CONTENT)
    } else {
        Err(ApiError::NotFound(format!("no user {name:?}")))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_route_has_a_handler_and_no_route_is_listed_twice() {
        let mut seen = std::collections::BTreeSet::new();
        for spec in ROUTES {
            let _ = handler_for(&spec.method, spec.path);
            assert!(
                seen.insert((spec.method.to_string(), spec.path)),
                "{} {} twice",
                spec.method,
                spec.path
            );
        }
    }

    #[test]
    fn slugs_are_valid_ids() {
        assert_eq!(
            slug("Acme Retail (sample estate)"),
            "acme-retail-sample-estate"
        );
        assert_eq!(slug("---"), "estate");
        for name in [
            "Acme Retail (sample estate)",
            "x",
            "Ünïcode only",
            &"a".repeat(100),
        ] {
            check_id("id", &slug(name)).unwrap();
        }
    }
}
