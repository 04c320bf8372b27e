//! Applied moves and their outcomes (`docs/outcomes.md`): every move the
//! server noticed in an estate write, what Berth had said of it, and what
//! was measured after it, judged by the engine (`berth_engine::outcome`)
//! on every read, so a fact observed since the last read counts at once.

use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::response::Response;

use super::extract::{eval_now, raw_json, EvalQuery, Query};
use super::route::{route, Route};
use crate::auth::Caller;
use crate::error::ApiResult;
use crate::estates::visible_estate;
use crate::AppState;

/// Applied moves.
pub const ROUTES: &[Route] = &[route!(LIST_OUTCOMES => outcomes)];

/// `GET /api/estates/{id}/outcomes?now=`: the engine's report, its bytes
/// as `berth_engine::front::outcomes` wrote them.
async fn outcomes(
    State(state): State<AppState>,
    caller: Caller,
    Path(id): Path<String>,
    Query(q): Query<EvalQuery>,
) -> ApiResult<Response> {
    visible_estate(&state.db, &caller, &id).await?;
    let now = eval_now(&q.now)?;
    let bytes = crate::outcomes::report_bytes(&state.db, &state.cache, &id, now).await?;
    Ok(raw_json(StatusCode::OK, bytes))
}
