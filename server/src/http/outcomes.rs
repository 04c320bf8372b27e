//! Applied moves and their outcomes (`docs/outcomes.md`): every move the
//! server noticed in an estate write, what Berth had said of it, and what
//! was measured after it, judged by the engine (`berth_engine::outcome`)
//! on every read, so a fact observed since the last read counts at once.

use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::response::Response;

use berth_engine::outcome::{Event, Member};
use berth_engine::{estate, Estate, Format};

use super::extract::{eval_now, raw_json, EvalQuery, Query};
use super::route::{route, Route, VIEWER};
use crate::auth::Caller;
use crate::error::{ApiError, ApiResult};
use crate::estates::{loaded_estate, visible_estate};
use crate::moves::OUTCOME_SETTLE_S;
use crate::store;
use crate::AppState;

/// Applied moves.
pub const ROUTES: &[Route] = &[
    route!(listOutcomes: GET "/api/estates/{id}/outcomes", VIEWER, "applied moves, each judged against what was measured after it, and the estate's calibration" => outcomes),
];

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
    let (_, after, policy) = loaded_estate(&state.db, &state.cache, &id).await?;
    let rows = store::move_events(&state.db, &id).await?;
    let mut documents: Vec<(i64, String)> = Vec::new();
    for r in &rows {
        if documents
            .binary_search_by(|(w, _)| w.cmp(&r.move_id))
            .is_err()
        {
            if let Some(d) = store::move_before_document(&state.db, r.move_id).await? {
                let at = documents.partition_point(|(w, _)| *w < r.move_id);
                documents.insert(at, (r.move_id, d));
            }
        }
    }
    let events: Vec<Event> = rows
        .into_iter()
        .map(|r| Event {
            id: r.id,
            write: r.move_id,
            member: Member {
                service: r.service,
                from: r.from,
                to: r.to,
            },
            moved_at: r.moved_at,
            noticed_by: r.noticed_by,
            basis: r.basis,
            identity: r.identity,
            snapshot: r.snapshot_id,
            advised_at: r.advised_at,
            prediction: r.prediction,
        })
        .collect();
    let bytes = tokio::task::spawn_blocking(move || {
        let befores: Vec<(i64, Option<Estate>)> = documents
            .into_iter()
            .map(|(w, d)| (w, estate::load(&d, Format::Json).ok()))
            .collect();
        berth_engine::front::outcomes(&events, &befores, &after, &policy, now, OUTCOME_SETTLE_S)
    })
    .await
    .map_err(|e| ApiError::Internal(format!("outcomes task: {e}")))?;
    Ok(raw_json(StatusCode::OK, bytes))
}
