//! An estate's policy: read and replace.

use axum::body::Body;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::response::Response;
use axum::Json;
use serde_json::{json, Value};

use berth_engine::Policy;

use super::extract::{json_body, raw_json, read_body, to_json, utf8, Query, SMALL_BODY_LIMIT};
use super::route::{route, Route};
use crate::auth::Caller;
use crate::clock::now_s;
use crate::error::{counted, input_error, ApiError, ApiResult};
use crate::estates::visible_estate;
use crate::state::AppState;
use crate::store;

/// The policy.
pub const ROUTES: &[Route] = &[
    route!(GET_POLICY => get_policy),
    route!(PUT_POLICY => put_policy),
];

async fn get_policy(
    State(state): State<AppState>,
    caller: Caller,
    Path(id): Path<String>,
) -> ApiResult<Response> {
    let meta = visible_estate(&state.db, &caller, &id).await?;
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
fn policy_error_item(e: &berth_engine::policy::PolicyError) -> berth_api::InputError {
    let at_line = e
        .field
        .strip_prefix("line ")
        .and_then(|rest| rest.split(' ').next())
        .and_then(|l| l.parse::<usize>().ok());
    match at_line {
        Some(line) => input_error("/", Some(line as u64), e.message.clone()),
        None => input_error(
            format!("/{}", e.field.replace('.', "/")),
            None,
            e.message.clone(),
        ),
    }
}

#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct PutQuery {
    /// Why the policy changes, for the audit trail.
    #[serde(default)]
    reason: Option<String>,
}

/// Longest reason kept in the audit trail, in characters: a sentence.
const MAX_REASON_CHARS: usize = 2_000;

/// Every leaf of `v` by JSON pointer, in key order (serde_json's maps are
/// ordered), so two policies compare field by field.
fn leaves(v: &Value, at: String, out: &mut Vec<(String, Value)>) {
    match v {
        Value::Object(m) => {
            for (k, x) in m {
                leaves(x, format!("{at}/{k}"), out);
            }
        }
        other => out.push((at, other.clone())),
    }
}

/// The fields that differ between two policies: `{field, from, to}` each,
/// `null` for a side that lacks the field.
fn changed_fields(old: &Value, new: &Value) -> Vec<Value> {
    let (mut a, mut b) = (Vec::new(), Vec::new());
    leaves(old, String::new(), &mut a);
    leaves(new, String::new(), &mut b);
    let a: std::collections::BTreeMap<_, _> = a.into_iter().collect();
    let b: std::collections::BTreeMap<_, _> = b.into_iter().collect();
    let keys: std::collections::BTreeSet<&String> = a.keys().chain(b.keys()).collect();
    keys.into_iter()
        .filter(|k| a.get(*k) != b.get(*k))
        .map(|k| json!({"field": k, "from": a.get(k), "to": b.get(k)}))
        .collect()
}

async fn put_policy(
    State(state): State<AppState>,
    caller: Caller,
    Path(id): Path<String>,
    Query(q): Query<PutQuery>,
    body: Body,
) -> ApiResult<Json<Value>> {
    let before = visible_estate(&state.db, &caller, &id).await?;
    let reason = q.reason.unwrap_or_default().trim().to_string();
    if reason.chars().count() > MAX_REASON_CHARS {
        return Err(ApiError::bad_request(format!(
            "reason: longer than {MAX_REASON_CHARS} characters"
        )));
    }
    if let Some(p) = berth_engine::chars::name_problem(&reason) {
        return Err(ApiError::bad_request(format!("reason: {p}")));
    }
    let bytes = read_body(body, SMALL_BODY_LIMIT).await?;
    let text = utf8(&bytes)?;
    // Not JSON at all is a malformed request (400), like on every route;
    // JSON that is no valid policy is invalid content (422).
    let _: Value = json_body(&bytes, "policy")?;
    let policy = Policy::from_json(text).map_err(|errors| {
        ApiError::invalid(
            format!(
                "invalid policy: {}; the policy was not changed",
                counted(errors.len(), "error")
            ),
            errors.iter().map(policy_error_item).collect::<Vec<_>>(),
        )
    })?;
    let digest = policy.digest();
    let old: Value = store::policy_of(&state.db, &id)
        .await?
        .and_then(|t| serde_json::from_str(&t).ok())
        .unwrap_or(Value::Null);
    let text = to_json(&policy);
    let new: Value = serde_json::from_str(&text).expect("a policy serialises to JSON");
    let actor = caller.principal()?.subject.clone();
    let detail = json!({
        "from_digest": before.policy_digest,
        "to_digest": digest,
        "changed": changed_fields(&old, &new),
    })
    .to_string();
    let now = now_s();
    let audit = store::NewAudit {
        estate: &id,
        actor: &actor,
        at: now,
        action: "policy.changed",
        subject: "policy",
        reason: &reason,
        detail: &detail,
    };
    let meta = store::replace_policy(&state.db, &id, &text, &digest, now, &audit)
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
