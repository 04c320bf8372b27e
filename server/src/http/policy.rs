//! An estate's policy: read and replace.

use axum::body::Body;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::response::Response;
use axum::Json;
use serde_json::{json, Value};

use berth_engine::Policy;

use super::extract::{json_body, raw_json, read_body, to_json, utf8, SMALL_BODY_LIMIT};
use super::route::{route, Route, OPERATOR, VIEWER};
use crate::auth::Caller;
use crate::clock::now_s;
use crate::error::{ApiError, ApiResult};
use crate::estates::visible_estate;
use crate::store;
use crate::AppState;

/// The policy.
pub const ROUTES: &[Route] = &[
    route!(GET "/api/estates/{id}/policy", VIEWER, "the estate's policy" => get_policy),
    route!(PUT "/api/estates/{id}/policy", OPERATOR, "replace the policy" => put_policy),
];

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
    let meta = store::replace_policy(&state.db, &id, &to_json(&policy), &digest, now_s())
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
