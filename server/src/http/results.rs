//! Engine results on a stored estate: the snapshot a browser runs the
//! engine on, advice, change plans, the decider request preview,
//! placement, what-if, and comparisons (uploaded replies, or registered deciders called
//! live). Results travel in the envelope of `estates::envelope` and go
//! through the result cache. A computation (a cache miss) takes one from
//! the caller's engine budget (429 past it), and a result above the
//! server's size limit is refused (507).

use std::time::Instant;

use axum::body::{Body, Bytes};
use axum::extract::{Path, State};
use axum::http::{header, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use serde::Deserialize;

use berth_api::EstateSnapshot;
use berth_engine::{decider, estate, front, plan, Estate, Policy};

use super::extract::{
    engine_allowed, eval_now, json_body, raw_json, read_body, result_fits, utf8, EvalQuery, Query,
    COMPARE_BODY_LIMIT, SMALL_BODY_LIMIT,
};
use super::route::{route, Route};
use crate::auth::Caller;
use crate::clock::now_s;
use crate::digest::body_digest;
use crate::error::{counted, ApiError, ApiResult};
use crate::estates::{envelope, invalid_scenario, loaded_estate, result_key, visible_estate};
use crate::state::AppState;
use crate::store;

/// Engine results.
pub const ROUTES: &[Route] = &[
    route!(GET_SNAPSHOT => snapshot),
    route!(GET_ADVICE => advice),
    route!(GET_PLAN => plan),
    route!(GET_DECIDER_REQUEST => preview),
    route!(PLACE_SERVICE => place),
    route!(PROJECT_SCENARIO => what_if),
    route!(COMPARE_DECIDERS => compare),
    route!(DECIDER_LEADERBOARD => leaderboard),
];

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct AdviceQuery {
    now: Option<String>,
    /// Add the Why (facts, terms, flip conditions) to every move.
    #[serde(default)]
    why: bool,
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
    let body = engine_bytes(state, caller, id, op, now, extra, true, run).await?;
    Ok(raw_json(StatusCode::OK, body))
}

/// [`engine_result`]'s body: the result in its envelope, or (for a result
/// that is not JSON, `envelope: false`) its bytes alone, cached either way.
#[allow(clippy::too_many_arguments)]
async fn engine_bytes<F>(
    state: &AppState,
    caller: &Caller,
    id: &str,
    op: &'static str,
    now: i64,
    extra: &str,
    envelope_it: bool,
    run: F,
) -> ApiResult<Bytes>
where
    F: FnOnce(&Estate, &Policy, i64) -> ApiResult<String> + Send + 'static,
{
    let meta = visible_estate(&state.db, caller, id).await?;
    let key = result_key(op, &meta, now, extra);
    if let Some(body) = state.cache.result(&key) {
        state.metrics.cache(op, true);
        return Ok(body);
    }
    state.metrics.cache(op, false);
    engine_allowed(state, caller)?;
    let (meta, estate, policy) = loaded_estate(&state.db, &state.cache, id).await?;
    let start = Instant::now();
    let policy_digest = meta.policy_digest.clone();
    let result = tokio::task::spawn_blocking(move || run(&estate, &policy, now))
        .await
        .map_err(|e| ApiError::Internal(format!("engine task: {e}")))??;
    state.metrics.engine_run(op, start.elapsed().as_secs_f64());
    result_fits(state, op, &result)?;
    let body = if envelope_it {
        envelope(&meta, &policy_digest, now, &result)
    } else {
        result
    };
    let key = result_key(op, &meta, now, extra);
    let body = Bytes::from(body);
    state.cache.put_result(key, body.clone());
    Ok(body)
}

async fn snapshot(
    State(state): State<AppState>,
    caller: Caller,
    Path(id): Path<String>,
) -> ApiResult<Response> {
    visible_estate(&state.db, &caller, &id).await?;
    let row = store::estate_row(&state.db, &id)
        .await?
        .ok_or_else(|| ApiError::NotFound(format!("no estate {id:?}")))?;
    // The document and policy exactly as stored: the browser loads them
    // with the same engine and must reach the same digests.
    Ok(raw_json(
        StatusCode::OK,
        EstateSnapshot::write(
            &id,
            row.meta.version,
            &row.meta.content_digest,
            &row.meta.policy_digest,
            &estate::format_time(now_s()),
            &row.policy,
            &row.document,
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
    let body = engine_bytes(
        &state,
        &caller,
        &id,
        "advice",
        now,
        if why { "why" } else { "" },
        true,
        move |e, p, now| {
            Ok(if why {
                front::advice_why(e, p, now)
            } else {
                front::advice(e, p, now)
            })
        },
    )
    .await?;
    let body = with_proof(&state, &id, body).await?;
    if !why {
        return Ok(raw_json(StatusCode::OK, body));
    }
    // The Why quotes how this estate's past advice held (issue 36,
    // docs/outcomes.md): judged now, never cached with the result — a
    // measurement or the settling window can change it while the estate's
    // version and the evaluation time stay.
    let quoted = crate::outcomes::calibration(&state.db, &state.cache, &id, now).await?;
    let Some((line, parts)) = quoted else {
        return Ok(raw_json(StatusCode::OK, body));
    };
    let text = std::str::from_utf8(&body)
        .map_err(|e| ApiError::Internal(format!("advice envelope: {e}")))?;
    Ok(raw_json(
        StatusCode::OK,
        berth_api::ResultEnvelope::with_calibration(text, Some(&line), &parts),
    ))
}

/// The advice envelope with the newest proof of the estate's current
/// version and policy added (`crate::proofs`, docs/advice.md §6b); as it
/// was when there is none. Read at every request, never cached with the
/// result: a proof arrives in the background after the snapshot.
async fn with_proof(state: &AppState, id: &str, body: Bytes) -> ApiResult<Bytes> {
    let Some(meta) = store::estate_meta(&state.db, id).await? else {
        return Ok(body);
    };
    let proof = crate::proofs::newest(&state.db, id, meta.version, &meta.policy_digest).await?;
    let Some(proof) = proof else {
        return Ok(body);
    };
    let text = std::str::from_utf8(&body)
        .map_err(|e| ApiError::Internal(format!("advice envelope: {e}")))?;
    Ok(Bytes::from(berth_api::ResultEnvelope::with_proof(
        text,
        &proof.to_api(),
    )))
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct PlanQuery {
    now: Option<String>,
    /// `json` (default), `markdown`, `karmada` or `ocm`.
    format: Option<String>,
    /// Service ids, comma-separated: their recommended moves only.
    services: Option<String>,
    /// A saved scenario's name: its moves.
    scenario: Option<String>,
}

/// Plan errors as a 422, each message starting with the input it is
/// about (`services: …`, `scenario: …`, `estate: …`).
fn invalid_plan(errors: &[plan::PlanError]) -> ApiError {
    ApiError::invalid(
        format!("cannot write the plan: {}", counted(errors.len(), "error")),
        errors
            .iter()
            .map(|e| front::ErrorItem {
                path: if e.path.is_empty() {
                    "/".into()
                } else {
                    e.path.clone()
                },
                line: e.line,
                message: format!("{}: {}", e.input, e.message),
            })
            .collect::<Vec<_>>(),
    )
}

async fn plan(
    State(state): State<AppState>,
    caller: Caller,
    Path(id): Path<String>,
    Query(q): Query<PlanQuery>,
) -> ApiResult<Response> {
    let now = eval_now(&q.now)?;
    let format_name = q.format.as_deref().unwrap_or("json");
    let format = plan::Format::parse(format_name).ok_or_else(|| {
        ApiError::bad_request(format!(
            "format: unknown plan format {format_name:?}; expected json, markdown, karmada or ocm"
        ))
    })?;
    let services = front::plan_services(q.services.as_deref().unwrap_or(""));
    if !services.is_empty() && q.scenario.is_some() {
        return Err(ApiError::bad_request(
            "give services or a scenario, not both",
        ));
    }
    // A saved scenario is read now, and its digest keys the cache: it can
    // change while the estate does not.
    let scenario = match &q.scenario {
        Some(name) => {
            visible_estate(&state.db, &caller, &id).await?;
            Some(
                store::scenario(&state.db, &id, name)
                    .await?
                    .ok_or_else(|| {
                        ApiError::NotFound(format!("no scenario {name:?} in estate {id:?}"))
                    })?,
            )
        }
        None => None,
    };
    let extra = format!(
        "{}|{}|{}",
        format.as_str(),
        services.join(","),
        scenario
            .as_deref()
            .map(|t| body_digest(t.as_bytes()))
            .unwrap_or_default()
    );
    let run = move |e: &Estate, p: &Policy, now: i64| {
        let selection = match (&scenario, services.is_empty()) {
            (Some(text), _) => plan::Selection::Scenario(
                berth_engine::whatif::Scenario::from_json_checked(text, e)
                    .map_err(|errors| invalid_scenario(&errors))?,
            ),
            (None, true) => plan::Selection::Advice,
            (None, false) => plan::Selection::Services(services),
        };
        front::plan(e, p, now, &selection, format).map_err(|errors| invalid_plan(&errors))
    };
    if format == plan::Format::Json {
        return engine_result(&state, &caller, &id, "plan", now, &extra, run).await;
    }
    let body = engine_bytes(&state, &caller, &id, "plan", now, &extra, false, run).await?;
    let file = format.file_name(&id);
    Ok((
        StatusCode::OK,
        [
            (
                header::CONTENT_TYPE,
                HeaderValue::from_static(format.media_type()),
            ),
            (
                header::CONTENT_DISPOSITION,
                HeaderValue::from_str(&format!("attachment; filename=\"{file}\""))
                    .map_err(|e| ApiError::Internal(format!("file name: {e}")))?,
            ),
        ],
        body,
    )
        .into_response())
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

async fn compare(
    State(state): State<AppState>,
    caller: Caller,
    Path(id): Path<String>,
    Query(q): Query<EvalQuery>,
    body: Body,
) -> ApiResult<Response> {
    let now = eval_now(&q.now)?;
    let bytes = read_body(body, COMPARE_BODY_LIMIT).await?;
    let b: berth_api::CompareRequest = if bytes.iter().all(u8::is_ascii_whitespace) {
        berth_api::CompareRequest::default()
    } else {
        json_body(&bytes, "compare request")?
    };
    for name in b.responses.keys() {
        if front::BUILTIN_NAMES.contains(&name.as_str()) {
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
        move |e, p, now| {
            Ok(front::compare(
                e,
                p,
                now,
                &externals,
                &mut crate::clock::stopwatch,
            ))
        },
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
    visible_estate(&state.db, caller, id).await?;
    engine_allowed(state, caller)?;
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
        super::deciders::run_named(state, caller, id, &names, now).await?;
    externals.extend(uploaded);
    let (meta2, estate, policy) = loaded_estate(&state.db, &state.cache, id).await?;
    if meta2.version != meta.version || meta2.policy_digest != meta.policy_digest {
        return Err(ApiError::Conflict(format!(
            "estate {id:?} changed while the deciders ran; compare again"
        )));
    }
    let start = Instant::now();
    let result = tokio::task::spawn_blocking(move || {
        front::compare(
            &estate,
            &policy,
            now,
            &externals,
            &mut crate::clock::stopwatch,
        )
    })
    .await
    .map_err(|e| ApiError::Internal(format!("engine task: {e}")))?;
    state
        .metrics
        .engine_run("compare", start.elapsed().as_secs_f64());
    result_fits(state, "compare", &result)?;
    Ok(raw_json(
        StatusCode::OK,
        envelope(&meta2, &meta2.policy_digest, now, &result),
    ))
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct LeaderboardQuery {
    now: Option<String>,
    /// `quick` (the default) or `default`.
    suite: Option<String>,
}

/// The decider leaderboard (`berth bench-deciders`, from the same engine
/// code): the generated suite, then this estate at `now`, all under this
/// estate's policy. Cached like every result: the suite is fixed, so the
/// estate, its policy, `now` and the suite's size decide the figures
/// (run times aside).
async fn leaderboard(
    State(state): State<AppState>,
    caller: Caller,
    Path(id): Path<String>,
    Query(q): Query<LeaderboardQuery>,
) -> ApiResult<Response> {
    use berth_engine::leaderboard::{self as board, Case, SuiteSize};
    let now = eval_now(&q.now)?;
    let name = q.suite.unwrap_or_else(|| "quick".into());
    let size = SuiteSize::parse(&name).ok_or_else(|| {
        ApiError::bad_request(format!(
            "suite: {name:?} is not a suite; give quick (13 generated estates, seconds) or default (88, ten seconds or so)"
        ))
    })?;
    let lock = state.leaderboard_lock.clone();
    engine_result(
        &state,
        &caller,
        &id,
        "leaderboard",
        now,
        &name,
        move |e, p, now| {
            // One leaderboard at a time on this server: the default suite
            // keeps a core busy for seconds, and a second one waiting
            // behind it would only double that. (Cached answers do not
            // come here.)
            let _one = match lock.try_lock() {
                Ok(guard) => guard,
                // A run that panicked leaves nothing half-done behind.
                Err(std::sync::TryLockError::Poisoned(p)) => p.into_inner(),
                Err(std::sync::TryLockError::WouldBlock) => {
                    return Err(ApiError::Conflict(
                        "a decider leaderboard is being computed on this server right now; ask again when it is done (the quick suite takes seconds, the default one tens of seconds)".into(),
                    ))
                }
            };
            let mut cases = board::generated_suite(size);
            cases.push(Case {
                family: "this estate".into(),
                name: e.name.clone(),
                estate: e.clone(),
                now,
            });
            let b = board::run(
                &cases,
                p,
                &mut |_| Vec::new(),
                &mut crate::clock::stopwatch,
                Vec::new(),
            );
            Ok(serde_json::to_string(&b).expect("a leaderboard serialises"))
        },
    )
    .await
}
