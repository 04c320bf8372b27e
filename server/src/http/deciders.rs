//! External deciders, their runs on an estate, the advice driver's
//! snapshots and its health.

use axum::body::Body;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::Json;
use serde::Deserialize;
use serde_json::{json, Value};

use berth_engine::estate::format_time;

use super::extract::{
    engine_allowed, eval_now, json_body, read_body, EvalQuery, Query, SMALL_BODY_LIMIT,
};
use super::route::{route, Route};
use crate::auth::Caller;
use crate::clock::now_s;
use crate::error::{ApiError, ApiResult};
use crate::estates::{loaded_estate, visible_estate};
use crate::external::{self, driver, signing};
use crate::state::AppState;
use crate::store::{self, DeciderRow};

/// Deciders, runs, snapshots and the driver.
pub const ROUTES: &[Route] = &[
    route!(LIST_DECIDER_RUNS => runs),
    route!(RUN_DECIDER => run_one),
    route!(LIST_ADVICE_SNAPSHOTS => snapshots),
    route!(GET_ADVICE_HISTORY => history),
    route!(LIST_DECIDERS => list),
    route!(REGISTER_DECIDER => create),
    route!(GET_DECIDER => get),
    route!(UPDATE_DECIDER => update),
    route!(DELETE_DECIDER => delete),
    route!(ROTATE_DECIDER_SECRET => rotate),
    route!(REMOVE_DECIDER_SECRET => remove_secret),
    route!(GET_DRIVER_HEALTH => driver_health),
];

fn invalid(errors: Vec<(&str, String)>) -> ApiError {
    super::extract::invalid_fields("decider", errors)
}

fn not_found(name: &str) -> ApiError {
    ApiError::NotFound(format!("no decider {name:?} is registered"))
}

/// What registering and changing a decider read: `name` only when
/// registering (the path names it otherwise), `generate_secret` `true`
/// only when registering (a secret shown once in the answer); both are
/// checked by the handlers, with their own messages.
type DeciderBody = berth_api::DeciderSettings;

fn check_settings(state: &AppState, b: &DeciderBody, errors: &mut Vec<(&'static str, String)>) {
    if let Err(e) = external::check_url(&b.url, &state.outbound.forwarder.policy().allow) {
        errors.push(("/url", e));
    }
    if let Err(e) = external::check_timeout(b.timeout_ms) {
        errors.push(("/timeout_ms", e));
    }
    if let Err(e) = external::check_interval(b.interval_s) {
        errors.push(("/interval_s", e));
    }
}

/// A fresh secret, sealed for `name`: (secret shown once, sealed, fingerprint).
fn new_secret(state: &AppState, name: &str) -> ApiResult<(String, String, String)> {
    let vault = state.outbound.vault.as_ref().ok_or_else(|| {
        ApiError::Conflict(
            "this server has no secret key, so it cannot keep decider secrets: start it with BERTH_SECRET_KEY or --secret-key-file".into(),
        )
    })?;
    let secret = signing::generate();
    let sealed = vault.seal(name, secret.expose());
    Ok((secret.expose().to_string(), sealed, secret.fingerprint()))
}

/// A decider as the API shows it at `now` (never its secrets; the
/// previous secret's fingerprint only while its overlap lasts).
fn public(d: &DeciderRow, now: i64) -> berth_api::Decider {
    let live = d.live_previous(now).is_some();
    berth_api::Decider {
        name: d.name.clone(),
        url: d.url.clone(),
        timeout_ms: d.timeout_ms,
        enabled: d.enabled,
        interval_s: d.interval_s,
        secret_fingerprint: d.secret_fingerprint.clone(),
        previous_secret_fingerprint: d.previous_fingerprint.clone().filter(|_| live),
        previous_secret_expires_at: d.previous_expires_at.filter(|_| live).map(format_time),
        created_at: format_time(d.created_at),
        updated_at: format_time(d.updated_at),
    }
}

/// [`public`] for `caller`: below administrator, the URL's credentials
/// masked (`external::url_for_viewers`), as channel URLs are.
fn public_for(caller: &Caller, d: &DeciderRow, now: i64) -> berth_api::Decider {
    let mut out = public(d, now);
    let admin = caller
        .0
        .as_ref()
        .is_some_and(|p| p.role >= crate::auth::Role::Admin);
    if !admin {
        out.url = external::url_for_viewers(&out.url);
    }
    out
}

async fn list(
    State(state): State<AppState>,
    caller: Caller,
) -> ApiResult<Json<berth_api::DeciderList>> {
    let now = now_s();
    let deciders = store::list_deciders(&state.db)
        .await?
        .iter()
        .map(|d| public_for(&caller, d, now))
        .collect();
    Ok(Json(berth_api::DeciderList { deciders }))
}

async fn get(
    State(state): State<AppState>,
    caller: Caller,
    Path(name): Path<String>,
) -> ApiResult<Json<berth_api::DeciderAnswer>> {
    let d = store::decider(&state.db, &name)
        .await?
        .ok_or_else(|| not_found(&name))?;
    Ok(Json(berth_api::DeciderAnswer {
        decider: public_for(&caller, &d, now_s()),
    }))
}

async fn create(State(state): State<AppState>, body: Body) -> ApiResult<Response> {
    let bytes = read_body(body, SMALL_BODY_LIMIT).await?;
    let b: DeciderBody = json_body(&bytes, "decider")?;
    let mut errors = Vec::new();
    let name = b.name.clone().unwrap_or_default();
    if b.name.is_none() {
        errors.push(("/name", "a decider needs a name".to_string()));
    } else if let Err(e) = external::check_name(&name) {
        errors.push(("/name", e));
    }
    check_settings(&state, &b, &mut errors);
    if !errors.is_empty() {
        return Err(invalid(errors));
    }
    let now = now_s();
    let secret = if b.generate_secret {
        Some(new_secret(&state, &name)?)
    } else {
        None
    };
    let row = DeciderRow {
        name: name.clone(),
        url: b.url,
        timeout_ms: b.timeout_ms,
        enabled: b.enabled,
        interval_s: b.interval_s,
        secret_sealed: secret.as_ref().map(|s| s.1.clone()),
        secret_fingerprint: secret.as_ref().map(|s| s.2.clone()),
        previous_sealed: None,
        previous_fingerprint: None,
        previous_expires_at: None,
        created_at: now,
        updated_at: now,
    };
    store::insert_decider(&state.db, &row).await?;
    tracing::info!(decider = %name, signed = secret.is_some(), "decider registered");
    Ok((
        StatusCode::CREATED,
        Json(berth_api::DeciderWithSecret {
            decider: public(&row, now),
            // Shown this once; afterwards only its fingerprint.
            secret: secret.map(|s| s.0),
        }),
    )
        .into_response())
}

async fn update(
    State(state): State<AppState>,
    caller: Caller,
    Path(name): Path<String>,
    body: Body,
) -> ApiResult<Json<berth_api::DeciderAnswer>> {
    let bytes = read_body(body, SMALL_BODY_LIMIT).await?;
    let b: DeciderBody = json_body(&bytes, "decider")?;
    let mut errors = Vec::new();
    if b.name.as_ref().is_some_and(|n| *n != name) {
        errors.push((
            "/name",
            "a decider cannot be renamed; register a new one and delete this".to_string(),
        ));
    }
    if b.generate_secret {
        errors.push((
            "/generate_secret",
            format!("secrets are set with POST /api/deciders/{name}/secret"),
        ));
    }
    check_settings(&state, &b, &mut errors);
    if !errors.is_empty() {
        return Err(invalid(errors));
    }
    let now = now_s();
    if !store::update_decider(
        &state.db,
        &name,
        &b.url,
        b.timeout_ms,
        b.enabled,
        b.interval_s,
        now,
    )
    .await?
    {
        return Err(not_found(&name));
    }
    get(State(state), caller, Path(name)).await
}

async fn delete(State(state): State<AppState>, Path(name): Path<String>) -> ApiResult<StatusCode> {
    if store::delete_decider(&state.db, &name).await? {
        Ok(StatusCode::NO_CONTENT)
    } else {
        Err(not_found(&name))
    }
}

/// How long the previous secret keeps being sent beside the new one.
type RotateBody = berth_api::SecretRotation;

/// Generate a new secret; the current one stays valid for the overlap.
async fn rotate(
    State(state): State<AppState>,
    Path(name): Path<String>,
    body: Body,
) -> ApiResult<Json<berth_api::DeciderWithSecret>> {
    let bytes = read_body(body, SMALL_BODY_LIMIT).await?;
    let b: RotateBody = if bytes.iter().all(u8::is_ascii_whitespace) {
        RotateBody::default()
    } else {
        json_body(&bytes, "secret rotation")?
    };
    let overlap = b.overlap_s.unwrap_or(external::DEFAULT_OVERLAP_S);
    external::check_overlap(overlap).map_err(|e| invalid(vec![("/overlap_s", e)]))?;
    let d = store::decider(&state.db, &name)
        .await?
        .ok_or_else(|| not_found(&name))?;
    let (secret, sealed, fingerprint) = new_secret(&state, &name)?;
    let now = now_s();
    // No current secret: nothing to overlap with.
    let until = (d.secret_sealed.is_some() && overlap > 0).then_some(now + overlap);
    if !store::set_decider_secret(&state.db, &name, Some((&sealed, &fingerprint)), until, now)
        .await?
    {
        return Err(not_found(&name));
    }
    tracing::info!(decider = %name, overlap_s = overlap, "decider secret rotated");
    let d = store::decider(&state.db, &name)
        .await?
        .ok_or_else(|| not_found(&name))?;
    Ok(Json(berth_api::DeciderWithSecret {
        decider: public(&d, now),
        secret: Some(secret),
    }))
}

/// Remove the secret (and any previous one): calls go out unsigned.
async fn remove_secret(
    State(state): State<AppState>,
    Path(name): Path<String>,
) -> ApiResult<StatusCode> {
    if store::set_decider_secret(&state.db, &name, None, None, now_s()).await? {
        tracing::info!(decider = %name, "decider secret removed");
        Ok(StatusCode::NO_CONTENT)
    } else {
        Err(not_found(&name))
    }
}

/// Run the deciders named in `names` on estate `id` (already checked
/// visible), store each run, and return their engine entries and stored
/// run ids in order.
pub(crate) async fn run_named(
    state: &AppState,
    caller: &Caller,
    id: &str,
    names: &[String],
    now: i64,
) -> ApiResult<(
    Vec<berth_engine::decider::External>,
    Vec<i64>,
    store::EstateMeta,
)> {
    let mut rows = Vec::new();
    for n in names {
        let d = store::decider(&state.db, n).await?.ok_or_else(|| {
            ApiError::bad_request(format!("external/{n}: no decider {n:?} is registered"))
        })?;
        rows.push(d);
    }
    let (meta, estate, policy) = loaded_estate(&state.db, &state.cache, id).await?;
    let body = external::request_body(&estate, &policy, now).await?;
    // Signed with the wall clock whatever the evaluation time: a decider
    // checks the timestamp against its own clock.
    let calls = external::call_all(&state.outbound, &rows, body, now_s()).await;
    let by = caller
        .principal()
        .map(|p| p.subject.clone())
        .unwrap_or_else(|_| "unknown".into());
    let mut out = Vec::new();
    let mut ids = Vec::new();
    for (d, call) in rows.iter().zip(calls) {
        let entry = driver::entry_json(&estate, &policy, now, &call.external).await?;
        let run_id = store::insert_run(
            &state.db,
            store::NewRun {
                estate: id,
                decider: &d.name,
                estate_version: meta.version,
                content_digest: &meta.content_digest,
                policy_digest: &meta.policy_digest,
                outcome: call.outcome.as_str(),
                started_by: &by,
                // When it ran, by the wall clock — not the evaluation time
                // (`?now=` may be in the past): the driver counts a
                // decider's interval from here.
                started_at: now_s(),
                run_time_ms: call.run_time_ms.round() as i64,
                entry: &entry,
            },
        )
        .await?;
        ids.push(run_id);
        out.push(call.external);
    }
    Ok((out, ids, meta))
}

/// The body of a run: none, or an empty object. A run takes nothing from
/// the request but the evaluation time (`?now=`): the decider is called
/// at its stored URL with the request Berth builds. So any field — `url`
/// most of all — is refused by name rather than ignored, and so is a body
/// that is not an object (docs/deciders.md).
fn check_run_body(bytes: &[u8]) -> ApiResult<()> {
    if bytes.iter().all(u8::is_ascii_whitespace) {
        return Ok(());
    }
    let body: Value = serde_json::from_slice(bytes).map_err(|e| ApiError::BadRequest {
        message: format!("run: {e}"),
        details: json!({"line": e.line(), "column": e.column()}),
    })?;
    match body {
        Value::Object(fields) => match fields.keys().next() {
            None => Ok(()),
            Some(field) => Err(ApiError::bad_request(format!(
                "run: unknown field `{}`: a run takes no body fields; the decider is called at its registered URL, and `now` is a query parameter",
                crate::external::excerpt(field)
            ))),
        },
        other => Err(ApiError::bad_request(format!(
            "run: expected no body or an empty JSON object, found {}",
            berth_engine::json_shape::describe(&other)
        ))),
    }
}

/// `POST /api/estates/{id}/deciders/{name}/runs`: one decider, now; the
/// answer is its comparison entry, also stored as a run.
async fn run_one(
    State(state): State<AppState>,
    caller: Caller,
    Path((id, name)): Path<(String, String)>,
    Query(q): Query<EvalQuery>,
    body: Body,
) -> ApiResult<Json<Value>> {
    check_run_body(&read_body(body, SMALL_BODY_LIMIT).await?)?;
    visible_estate(&state.db, &caller, &id).await?;
    if store::decider(&state.db, &name).await?.is_none() {
        return Err(not_found(&name));
    }
    let now = eval_now(&q.now)?;
    // A run builds the decider request (an engine computation) and calls
    // the decider: it spends the caller's engine budget.
    engine_allowed(&state, &caller)?;
    let (_, ids, meta) = run_named(&state, &caller, &id, std::slice::from_ref(&name), now).await?;
    // By id: the newest by `started_at` is another run when `now` is
    // earlier than a stored run's.
    let run = store::run_by_id(&state.db, ids[0])
        .await?
        .ok_or_else(|| ApiError::Internal("the run just stored is missing".into()))?;
    Ok(Json(json!({
        "estate": id,
        "version": meta.version,
        "content_digest": meta.content_digest,
        "policy_digest": meta.policy_digest,
        "run": run,
    })))
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct HistoryQuery {
    #[serde(default)]
    limit: Option<i64>,
}

/// History pages show the newest 20 by default; 200 at most keeps one
/// answer small even with large entries.
fn limit_of(l: Option<i64>) -> ApiResult<i64> {
    match l {
        None => Ok(20),
        Some(l) if (1..=200).contains(&l) => Ok(l),
        Some(l) => Err(ApiError::bad_request(format!("limit {l}: from 1 to 200"))),
    }
}

/// `GET /api/estates/{id}/deciders/{name}/runs`: newest first.
async fn runs(
    State(state): State<AppState>,
    caller: Caller,
    Path((id, name)): Path<(String, String)>,
    Query(q): Query<HistoryQuery>,
) -> ApiResult<Json<Value>> {
    visible_estate(&state.db, &caller, &id).await?;
    let limit = limit_of(q.limit)?;
    let runs = store::list_runs(&state.db, &id, Some(&name), limit).await?;
    Ok(Json(json!({ "runs": runs })))
}

async fn snapshots(
    State(state): State<AppState>,
    caller: Caller,
    Path(id): Path<String>,
    Query(q): Query<HistoryQuery>,
) -> ApiResult<Json<Value>> {
    visible_estate(&state.db, &caller, &id).await?;
    let limit = limit_of(q.limit)?;
    // Only the newest carries its (large) result; older ones are history.
    let mut list = store::list_snapshots(&state.db, &id, limit, false).await?;
    if let Some(first) = list.first_mut() {
        if let Some(full) = store::list_snapshots(&state.db, &id, 1, true).await?.pop() {
            *first = full;
        }
    }
    Ok(Json(json!({ "snapshots": list })))
}

/// The series shows the newest 100 snapshots by default: at the driver's
/// one-a-minute pace under a live agent, well over an hour, and at the
/// pace of hand edits, weeks. 500 at most: each snapshot's whole advice is
/// read back, and 500 of the sample's take a few tens of milliseconds.
fn history_limit_of(l: Option<i64>) -> ApiResult<i64> {
    match l {
        None => Ok(100),
        Some(l) if (2..=500).contains(&l) => Ok(l),
        Some(l) => Err(ApiError::bad_request(format!(
            "limit {l}: from 2 to 500 (a history needs two snapshots to say what changed)"
        ))),
    }
}

/// `GET /api/estates/{id}/history`: the engine's history of the newest
/// snapshots (`docs/history.md`), its bytes as `berth_engine::front` wrote
/// them.
async fn history(
    State(state): State<AppState>,
    caller: Caller,
    Path(id): Path<String>,
    Query(q): Query<HistoryQuery>,
) -> ApiResult<Response> {
    visible_estate(&state.db, &caller, &id).await?;
    let limit = history_limit_of(q.limit)?;
    let snapshots = store::history_snapshots(&state.db, &id, limit).await?;
    let bytes = tokio::task::spawn_blocking(move || berth_engine::front::history(&snapshots))
        .await
        .map_err(|e| ApiError::Internal(format!("history task: {e}")))?;
    Ok(super::extract::raw_json(StatusCode::OK, bytes))
}

async fn driver_health(State(state): State<AppState>) -> ApiResult<Json<driver::Health>> {
    Ok(Json(
        driver::health(&state.db, state.driver.as_deref(), now_s()).await?,
    ))
}
