//! Review memory (`docs/reviews.md`): operators mark a recommendation
//! planned, dismissed or snoozed; every evaluation says where each
//! decision stands (hidden, back and why, planned, or no longer
//! recommended); and the audit trail of decisions and policy changes.
//!
//! The decision's basis (facts, classes, exact flip thresholds) comes
//! from the engine's own Why of the move at the evaluation time the
//! operator saw; whether it still holds is `berth_engine::review::standing`.
//! The advice bytes themselves never change: the pages ask this route
//! which of them to hide.

use std::collections::BTreeMap;

use axum::body::Body;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::Json;
use serde::Deserialize;
use serde_json::{json, Value};

use berth_api as api;
use berth_engine::review::{self, Kind, Side};
use berth_engine::{estate, Advice};

use super::extract::{eval_now, json_body, read_body, EvalQuery, Query, SMALL_BODY_LIMIT};
use super::route::{route, Route};
use crate::auth::Caller;
use crate::clock::now_s;
use crate::error::{ApiError, ApiResult};
use crate::estates::{loaded_estate, visible_estate};
use crate::reviews::decision_of;
use crate::state::AppState;
use crate::store::{self, NewAudit, ReviewRow};

/// Reviews and the audit trail.
pub const ROUTES: &[Route] = &[
    route!(LIST_REVIEWS => list),
    route!(REVIEW_RECOMMENDATION => decide),
    route!(CLEAR_REVIEW => clear),
    route!(ESTATE_AUDIT => audit),
];

// Longest reason or link kept (the engine's rule, shared with the page).
use berth_engine::review::MAX_TEXT_CHARS;

/// Audit entries returned when the caller gives no limit, and the most it
/// may ask for: a page of history, not the whole trail at once.
const AUDIT_DEFAULT: i64 = 100;
const AUDIT_MAX: i64 = 1_000;

/// The advice at `now`, with the index of every recommendation by identity.
async fn advice_at(
    state: &AppState,
    id: &str,
    now: i64,
    with_why: bool,
) -> ApiResult<(
    store::EstateMeta,
    Advice,
    BTreeMap<String, usize>,
    Vec<berth_engine::MoveWhy>,
)> {
    let (meta, e, p) = loaded_estate(&state.db, &state.cache, id).await?;
    let (advice, whys) = tokio::task::spawn_blocking(move || {
        let a = berth_engine::advise(&e, &p, now);
        let w = if with_why {
            berth_engine::explain(&e, &p, now, &a)
        } else {
            Vec::new()
        };
        (a, w)
    })
    .await
    .map_err(|e| ApiError::Internal(format!("advice task: {e}")))?;
    let index = (0..advice.moves.len())
        .map(|i| (review::identity(&advice.moves, i), i))
        // A compound step's members share one identity: the first member.
        .fold(BTreeMap::new(), |mut m, (k, i)| {
            m.entry(k).or_insert(i);
            m
        });
    Ok((meta, advice, index, whys))
}

/// Where each decision stands against `advice` at `now`.
fn standings(
    rows: Vec<ReviewRow>,
    advice: &Advice,
    index: &BTreeMap<String, usize>,
    now: i64,
) -> Vec<api::Review> {
    rows.into_iter()
        .map(|r| {
            let standing = match (index.get(&r.identity), decision_of(&r)) {
                (Some(&i), Some(d)) => {
                    let s = review::standing(&d, &review::current_facts(&advice.moves, i), now);
                    api::ReviewStanding {
                        state: match s.state {
                            review::State::Planned => api::ReviewState::Planned,
                            review::State::Hidden => api::ReviewState::Hidden,
                            review::State::Back => api::ReviewState::Back,
                        },
                        reasons: s.reasons,
                    }
                }
                (None, _) => api::ReviewStanding {
                    state: api::ReviewState::Absent,
                    reasons: vec!["Not among the recommendations at this evaluation.".into()],
                },
                (Some(_), None) => api::ReviewStanding {
                    state: api::ReviewState::Back,
                    reasons: vec![
                        "The stored decision could not be read; it no longer hides anything."
                            .into(),
                    ],
                },
            };
            review_of(r, standing)
        })
        .collect()
}

/// A stored decision as the API sends it. A condition or basis that no
/// longer reads (written by an older server) is sent as none; its
/// standing already says the decision could not be read.
fn review_of(r: ReviewRow, standing: api::ReviewStanding) -> api::Review {
    let decision = match Kind::parse(&r.decision) {
        Some(Kind::Planned) => api::ReviewDecision::Planned,
        Some(Kind::Snoozed) => api::ReviewDecision::Snoozed,
        // Only the three are ever stored; an unreadable one hides nothing.
        Some(Kind::Dismissed) | None => api::ReviewDecision::Dismissed,
    };
    api::Review {
        identity: r.identity,
        decision,
        link: r.link,
        reason: r.reason,
        until: r.until.map(estate::format_time),
        condition: r
            .condition
            .and_then(|c| serde_json::from_value::<api::ReviewCondition>(c).ok()),
        basis: serde_json::from_value(r.basis).unwrap_or_default(),
        estate_version: r.estate_version,
        evaluated_at: estate::format_time(r.evaluated_at),
        decided_by: r.decided_by,
        decided_at: estate::format_time(r.decided_at),
        standing,
    }
}

async fn list(
    State(state): State<AppState>,
    caller: Caller,
    Path(id): Path<String>,
    Query(q): Query<EvalQuery>,
) -> ApiResult<Json<api::ReviewList>> {
    let now = eval_now(&q.now)?;
    visible_estate(&state.db, &caller, &id).await?;
    let rows = store::reviews(&state.db, &id).await?;
    let (meta, advice, index, _) = advice_at(&state, &id, now, false).await?;
    Ok(Json(api::ReviewList {
        reviews: standings(rows, &advice, &index, now),
        estate: id,
        version: meta.version,
        now: estate::format_time(now),
    }))
}

fn invalid(errors: Vec<(&str, String)>) -> ApiError {
    super::extract::invalid_fields("decision", errors)
}

fn too_long(text: &str) -> bool {
    text.chars().count() > MAX_TEXT_CHARS
}

async fn decide(
    State(state): State<AppState>,
    caller: Caller,
    Path(id): Path<String>,
    Query(q): Query<EvalQuery>,
    body: Body,
) -> ApiResult<(StatusCode, Json<api::ReviewAnswer>)> {
    let now = eval_now(&q.now)?;
    visible_estate(&state.db, &caller, &id).await?;
    let bytes = read_body(body, SMALL_BODY_LIMIT).await?;
    let b: api::NewReview = json_body(&bytes, "decision")?;
    let reason = b.reason.trim().to_string();
    let link = b.link.trim().to_string();
    // What the form alone decides is the engine's rule, shared with the
    // page that checks it as it is typed; the rest needs the clock and the
    // advice.
    let mut errors: Vec<(&str, String)> = review::decision_problems(&review::DecisionInput {
        decision: &b.decision,
        reason: &reason,
        link: &link,
        has_until: b.until.is_some(),
        has_condition: b.condition.is_some(),
    });
    let kind = Kind::parse(&b.decision);
    if !link.is_empty() && !errors.iter().any(|e| e.0 == "/link") && url::Url::parse(&link).is_err()
    {
        errors.push((
            "/link",
            format!("{link:?} is not an http(s) URL of at most {MAX_TEXT_CHARS} characters"),
        ));
    }
    let until = match &b.until {
        None => None,
        Some(t) => match estate::parse_time(t) {
            Some(u) if u > now => Some(u),
            Some(_) => {
                errors.push((
                    "/until",
                    format!(
                        "{t} is not after the evaluation time {}",
                        estate::format_time(now)
                    ),
                ));
                None
            }
            None => {
                errors.push((
                    "/until",
                    format!("{t:?}: expected an RFC 3339 time like 2026-12-24T00:00:00Z"),
                ));
                None
            }
        },
    };
    let side = match b.condition.as_ref().map(|c| c.side.as_str()) {
        None => None,
        Some("below") => Some(Side::Below),
        Some("above") => Some(Side::Above),
        Some(other) => {
            errors.push((
                "/condition/side",
                format!("unknown side {other:?}; expected below or above"),
            ));
            None
        }
    };
    // The recommendation must be one the caller could see at `now`.
    let (meta, advice, index, whys) = advice_at(&state, &id, now, true).await?;
    let Some(&at) = index.get(&b.identity) else {
        let known: Vec<&str> = index.keys().map(String::as_str).take(20).collect();
        errors.push((
            "/identity",
            format!(
                "no recommendation {:?} in the advice at {}; its recommendations are: {}",
                b.identity,
                estate::format_time(now),
                if known.is_empty() {
                    "none".to_string()
                } else {
                    known.join(", ")
                }
            ),
        ));
        return Err(invalid(errors));
    };
    let basis = review::basis(&whys[at]);
    let condition = match (&b.condition, side) {
        (Some(c), Some(side)) => {
            match review::condition(&basis, &c.fact, side, c.value, c.measured) {
                Ok(c) => Some(c),
                Err(e) => {
                    errors.push(("/condition/fact", e));
                    None
                }
            }
        }
        _ => None,
    };
    if !errors.is_empty() {
        return Err(invalid(errors));
    }
    let kind = kind.expect("checked above");
    let actor = caller.principal()?.subject.clone();
    let row = ReviewRow {
        identity: b.identity.clone(),
        decision: kind.as_str().to_string(),
        link,
        reason: reason.clone(),
        until,
        condition: condition.as_ref().map(|c| json!(c)),
        basis: json!(basis),
        estate_version: meta.version,
        evaluated_at: now,
        decided_by: actor.clone(),
        decided_at: now_s(),
    };
    let detail = json!({
        "decision": row.decision,
        "link": row.link,
        "until": row.until.map(estate::format_time),
        "condition": row.condition,
        "estate_version": meta.version,
        "evaluated_at": estate::format_time(now),
    })
    .to_string();
    let action = format!("review.{}", kind.as_str());
    store::put_review(
        &state.db,
        &id,
        &row,
        &NewAudit {
            estate: &id,
            actor: &actor,
            at: row.decided_at,
            action: &action,
            subject: &row.identity,
            reason: &reason,
            detail: &detail,
        },
    )
    .await?;
    tracing::info!(estate = %id, identity = %row.identity, decision = kind.as_str(), by = %actor, "recommendation reviewed");
    let mut out = standings(vec![row], &advice, &index, now);
    Ok((
        StatusCode::CREATED,
        Json(api::ReviewAnswer {
            review: out.pop().expect("one row"),
        }),
    ))
}

async fn clear(
    State(state): State<AppState>,
    caller: Caller,
    Path(id): Path<String>,
    body: Body,
) -> ApiResult<StatusCode> {
    visible_estate(&state.db, &caller, &id).await?;
    let bytes = read_body(body, SMALL_BODY_LIMIT).await?;
    let q: api::ClearReview = json_body(&bytes, "clear")?;
    let actor = caller.principal()?.subject.clone();
    let reason = q.reason;
    if too_long(&reason) {
        return Err(ApiError::bad_request(format!(
            "reason: longer than {MAX_TEXT_CHARS} characters"
        )));
    }
    let done = store::clear_review(
        &state.db,
        &id,
        &q.identity,
        &NewAudit {
            estate: &id,
            actor: &actor,
            at: now_s(),
            action: "review.cleared",
            subject: &q.identity,
            reason: reason.trim(),
            detail: "{}",
        },
    )
    .await?;
    if done {
        Ok(StatusCode::NO_CONTENT)
    } else {
        Err(ApiError::NotFound(format!(
            "no decision about {:?} in estate {id:?}",
            q.identity
        )))
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct AuditQuery {
    #[serde(default)]
    limit: Option<i64>,
}

async fn audit(
    State(state): State<AppState>,
    caller: Caller,
    Path(id): Path<String>,
    Query(q): Query<AuditQuery>,
) -> ApiResult<Json<api::AuditList>> {
    visible_estate(&state.db, &caller, &id).await?;
    let limit = q.limit.unwrap_or(AUDIT_DEFAULT);
    if !(1..=AUDIT_MAX).contains(&limit) {
        return Err(ApiError::bad_request(format!(
            "limit={limit}: expected 1–{AUDIT_MAX}"
        )));
    }
    let entries = store::audit(&state.db, &id, limit)
        .await?
        .into_iter()
        .map(|e| api::AuditEntry {
            id: e.id,
            estate: e.estate,
            actor: e.actor,
            at: estate::format_time(e.at),
            action: e.action,
            subject: e.subject,
            reason: e.reason,
            // Always an object as written (`NewAudit::detail`).
            detail: match e.detail {
                Value::Object(m) => m,
                _ => serde_json::Map::new(),
            },
        })
        .collect();
    Ok(Json(api::AuditList {
        estate: id,
        entries,
    }))
}
