//! Saved what-if scenarios of an estate.

use axum::body::Body;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::response::Response;
use axum::Json;

use berth_engine::estate::format_time;
use berth_engine::whatif;

use super::extract::{check_id, raw_json, read_body, utf8, SMALL_BODY_LIMIT};
use super::route::{route, Route};
use crate::auth::Caller;
use crate::clock::now_s;
use crate::error::{ApiError, ApiResult};
use crate::estates::{invalid_scenario, loaded_estate, visible_estate};
use crate::state::AppState;
use crate::store;

/// Saved scenarios.
pub const ROUTES: &[Route] = &[
    route!(LIST_SCENARIOS => list_scenarios),
    route!(GET_SCENARIO => get_scenario),
    route!(PUT_SCENARIO => put_scenario),
    route!(DELETE_SCENARIO => delete_scenario),
];

async fn list_scenarios(
    State(state): State<AppState>,
    caller: Caller,
    Path(id): Path<String>,
) -> ApiResult<Json<berth_api::ScenarioList>> {
    visible_estate(&state.db, &caller, &id).await?;
    let scenarios = store::list_scenarios(&state.db, &id)
        .await?
        .into_iter()
        .map(|s| berth_api::ScenarioMeta {
            name: s.name,
            updated_at: format_time(s.updated_at),
            updated_by: s.updated_by,
        })
        .collect();
    Ok(Json(berth_api::ScenarioList { scenarios }))
}

async fn get_scenario(
    State(state): State<AppState>,
    caller: Caller,
    Path((id, name)): Path<(String, String)>,
) -> ApiResult<Response> {
    visible_estate(&state.db, &caller, &id).await?;
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
    visible_estate(&state.db, &caller, &id).await?;
    check_id("scenario name", &name)?;
    let bytes = read_body(body, SMALL_BODY_LIMIT).await?;
    let text = utf8(&bytes)?;
    // Checked against the estate as it is now: a saved scenario names
    // services and clusters that exist. (It may go stale later; running it
    // then reports exactly what vanished.)
    let (_, e, _) = loaded_estate(&state.db, &state.cache, &id).await?;
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
        now_s(),
    )
    .await?;
    Ok(StatusCode::NO_CONTENT)
}

async fn delete_scenario(
    State(state): State<AppState>,
    caller: Caller,
    Path((id, name)): Path<(String, String)>,
) -> ApiResult<StatusCode> {
    visible_estate(&state.db, &caller, &id).await?;
    if store::delete_scenario(&state.db, &id, &name).await? {
        Ok(StatusCode::NO_CONTENT)
    } else {
        Err(ApiError::NotFound(format!(
            "no scenario {name:?} in estate {id:?}"
        )))
    }
}
