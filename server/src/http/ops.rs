//! Operations: liveness, readiness and Prometheus metrics, open to
//! anyone (no secrets in them); and an estate's health (`health.rs`),
//! for its viewers.

use axum::extract::State;
use axum::http::{header, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::Json;
use serde_json::{json, Value};

use super::route::{route, Route};
use crate::state::AppState;

/// Health and metrics.
pub const ROUTES: &[Route] = &[
    route!(GET_HEALTH => healthz),
    route!(GET_READINESS => readyz),
    route!(GET_METRICS => metrics),
    route!(GET_ESTATE_HEALTH => super::health::estate_health),
];

async fn healthz() -> Json<Value> {
    Json(json!({"status": "ok"}))
}

async fn readyz(State(state): State<AppState>) -> Response {
    match state.db.ready().await {
        Ok(()) => Json(berth_api::Ready {
            status: "ready".into(),
            database: state.db.backend.as_str().into(),
        })
        .into_response(),
        Err(why) => {
            tracing::warn!(%why, "not ready");
            (
                StatusCode::SERVICE_UNAVAILABLE,
                Json(json!({"error": "unavailable", "message": "not ready: the database is unreachable, not migrated, or does not take writes (the server log says which)", "details": null})),
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
