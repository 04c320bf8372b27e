//! Changing an estate piece by piece: fact updates, agents' observation
//! batches, and Kubernetes manifests merged into one cluster. The
//! handlers check who may ask and read the body; the estate service
//! (`changes.rs`) applies each under the estate lock and writes it once.

use axum::body::Body;
use axum::extract::{Path, State};
use axum::Json;
use berth_api::{ImportAnswer, KubernetesImportRequest, ObservationAnswer, ObservationBatch};
use serde_json::{json, Value};

use super::extract::{heavy_permit, json_body, read_body, FACTS_BODY_LIMIT, KUBERNETES_BODY_LIMIT};
use super::route::{route, Route};
use crate::auth::Caller;
use crate::changes;
use crate::digest::sha256_hex_bytes;
use crate::error::{ApiError, ApiResult};
use crate::estates::visible_estate;
use crate::state::AppState;

/// Fact updates, observations and imports.
pub const ROUTES: &[Route] = &[
    route!(UPDATE_FACTS => update_facts),
    route!(POST_OBSERVATIONS => observe),
    route!(IMPORT_KUBERNETES => import_kubernetes),
];

async fn update_facts(
    State(state): State<AppState>,
    caller: Caller,
    Path(id): Path<String>,
    body: Body,
) -> ApiResult<Json<Value>> {
    visible_estate(&state.db, &caller, &id).await?;
    let bytes = read_body(body, FACTS_BODY_LIMIT).await?;
    let batch: crate::facts::FactBatch = json_body(&bytes, "fact updates")?;
    let p = caller.principal()?;
    let meta = changes::update_facts(&state.db, &state.cache, p, &id, &batch).await?;
    Ok(Json(json!({
        "estate": id,
        "version": meta.version,
        "content_digest": meta.content_digest,
        "applied": batch.updates.len(),
    })))
}

/// Longest batch id: room for "<estate>/<cluster>/<RFC 3339 time>" and
/// more, short enough to index.
const MAX_BATCH_ID_CHARS: usize = 128;

/// Agents' observations (SPEC §12), applied by `changes::observe`.
async fn observe(
    State(state): State<AppState>,
    caller: Caller,
    Path(id): Path<String>,
    body: Body,
) -> ApiResult<Json<ObservationAnswer>> {
    let p = caller.principal()?.clone();
    // Per token (or user): one misbehaving agent cannot crowd out others.
    state.observe_limiter.check_key(&p.subject)?;
    visible_estate(&state.db, &caller, &id).await?;
    let bytes = read_body(body, FACTS_BODY_LIMIT).await?;
    let batch: ObservationBatch = json_body(&bytes, "observations")?;
    if batch.batch_id.is_empty()
        || batch.batch_id.chars().count() > MAX_BATCH_ID_CHARS
        || batch.batch_id.chars().any(char::is_control)
    {
        return Err(ApiError::invalid_at(
            "invalid batch_id; nothing was applied",
            "/batch_id",
            format!("1 to {MAX_BATCH_ID_CHARS} characters, no control characters"),
        ));
    }
    // An agent token writes for its own clusters only (crate::scope).
    if let Some(probe) = &batch.probe {
        crate::scope::require_cluster(&p, &id, &probe.cluster, "a probe for cluster")?;
    }
    if let Some(record) = &batch.cluster {
        crate::scope::require_cluster(&p, &id, &record.id, "a record for cluster")?;
    }
    let digest = sha256_hex_bytes(&bytes);
    let answer = changes::observe(&state.db, &state.cache, &p, &id, batch, &digest).await?;
    Ok(Json(answer))
}

/// Kubernetes manifests into an estate (docs/kubernetes-import.md),
/// merged by `changes::import_kubernetes`.
async fn import_kubernetes(
    State(state): State<AppState>,
    caller: Caller,
    Path(id): Path<String>,
    body: Body,
) -> ApiResult<Json<ImportAnswer>> {
    // Operators import; an agent token only when an administrator allowed
    // it to re-sync its cluster's services (`may_sync_services`): an agent
    // otherwise only reports measured facts, so a token stolen from a
    // cluster cannot rewrite the estate's services.
    let p = caller.principal()?;
    if p.role < crate::auth::Role::Operator && !p.may_sync_services {
        return Err(ApiError::Forbidden(
            "this agent token may not import services: an administrator can create one with \"may_sync_services\": true (for `berth agent --kubernetes`), or import with an operator's token".into(),
        ));
    }
    visible_estate(&state.db, &caller, &id).await?;
    // One of a caller's few large requests (docs/security.md, limits).
    let _permit = heavy_permit(&state.heavy, &p.subject, "this Kubernetes import")?;
    let bytes = read_body(body, KUBERNETES_BODY_LIMIT).await?;
    let b: KubernetesImportRequest = json_body(&bytes, "kubernetes import")?;
    // The parsed request holds the text; the raw body is not needed again.
    drop(bytes);
    let answer = changes::import_kubernetes(&state.db, &state.cache, p, &id, b).await?;
    Ok(Json(answer))
}
