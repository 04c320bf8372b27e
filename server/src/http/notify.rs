//! Notification channels (administrators configure them) and their
//! deliveries (everyone sees them on Health). docs/notifications.md.

use axum::body::Body;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::Json;
use berth_api::ChannelKind;
use berth_engine::estate::format_time;
use serde::Deserialize;

use super::extract::{json_body, read_body, Query, SMALL_BODY_LIMIT};
use super::route::{route, Route};
use crate::auth::Caller;
use crate::clock::now_s;
use crate::error::{ApiError, ApiResult};
use crate::external::{self, notify, signing};
use crate::state::AppState;
use crate::store::{self, ChannelRow};

/// Channels and deliveries.
pub const ROUTES: &[Route] = &[
    route!(LIST_NOTIFICATION_CHANNELS => list),
    route!(CREATE_NOTIFICATION_CHANNEL => create),
    route!(GET_NOTIFICATION_CHANNEL => get),
    route!(UPDATE_NOTIFICATION_CHANNEL => update),
    route!(DELETE_NOTIFICATION_CHANNEL => delete),
    route!(ROTATE_NOTIFICATION_CHANNEL_SECRET => rotate),
    route!(LIST_NOTIFICATION_DELIVERIES => deliveries),
];

fn invalid(errors: Vec<(&str, String)>) -> ApiError {
    super::extract::invalid_fields("notification channel", errors)
}

fn not_found(name: &str) -> ApiError {
    ApiError::NotFound(format!("no notification channel {name:?}"))
}

/// The body of both create (with `name` and `kind`) and update: read as
/// the settings, whose `name` and `kind` may be absent, so a missing one
/// is reported with the other field errors.
type ChannelBody = berth_api::NotificationChannelSettings;

fn check_settings(state: &AppState, b: &ChannelBody, errors: &mut Vec<(&'static str, String)>) {
    if let Err(e) = external::check_url(&b.url, &state.outbound.forwarder.policy().allow) {
        errors.push(("/url", e));
    }
    if let Err(e) = notify::check_min_gain(b.min_gain) {
        errors.push(("/min_gain", e));
    }
    if let Err(e) = notify::check_min_confidence(&b.min_confidence) {
        errors.push(("/min_confidence", e));
    }
}

/// A fresh secret sealed for channel `name`: (shown once, sealed, fingerprint).
fn new_secret(state: &AppState, name: &str) -> ApiResult<(String, String, String)> {
    let vault = state.outbound.vault.as_ref().ok_or_else(|| {
        ApiError::Conflict(
            "this server has no secret key, so it cannot keep a signed channel's secret: start it with BERTH_SECRET_KEY or --secret-key-file".into(),
        )
    })?;
    let secret = signing::generate();
    let sealed = vault.seal(&notify::vault_name(name), secret.expose());
    Ok((secret.expose().to_string(), sealed, secret.fingerprint()))
}

/// A channel as the API shows it (never its secret).
fn public(c: &ChannelRow) -> berth_api::NotificationChannel {
    // The whole URL for a signed webhook; for Slack and Teams, whose URL
    // is the credential, only its scheme and host followed by `/…`.
    let url = if c.kind == ChannelKind::Webhook.as_str() {
        c.url.clone()
    } else {
        match url::Url::parse(&c.url) {
            Ok(u) => format!("{}://{}/…", u.scheme(), u.host_str().unwrap_or("")),
            Err(_) => "…".to_string(),
        }
    };
    berth_api::NotificationChannel {
        name: c.name.clone(),
        kind: c.kind.clone(),
        url,
        min_gain: c.min_gain,
        min_confidence: c.min_confidence.clone(),
        enabled: c.enabled,
        secret_fingerprint: c.secret_fingerprint.clone(),
        created_at: format_time(c.created_at),
        updated_at: format_time(c.updated_at),
    }
}

async fn list(
    State(state): State<AppState>,
) -> ApiResult<Json<berth_api::NotificationChannelList>> {
    let channels = store::list_channels(&state.db)
        .await?
        .iter()
        .map(public)
        .collect();
    Ok(Json(berth_api::NotificationChannelList { channels }))
}

async fn get(
    State(state): State<AppState>,
    Path(name): Path<String>,
) -> ApiResult<Json<berth_api::NotificationChannelAnswer>> {
    let c = store::channel(&state.db, &name)
        .await?
        .ok_or_else(|| not_found(&name))?;
    Ok(Json(berth_api::NotificationChannelAnswer {
        channel: public(&c),
    }))
}

async fn create(State(state): State<AppState>, body: Body) -> ApiResult<Response> {
    let bytes = read_body(body, SMALL_BODY_LIMIT).await?;
    let b: ChannelBody = json_body(&bytes, "notification channel")?;
    let mut errors = Vec::new();
    let name = b.name.clone().unwrap_or_default();
    match &b.name {
        None => errors.push(("/name", "a channel needs a name".to_string())),
        Some(n) => {
            if let Err(e) = notify::check_name(n) {
                errors.push(("/name", e));
            }
        }
    }
    let kind = b.kind.clone().unwrap_or_default();
    match &b.kind {
        None => errors.push((
            "/kind",
            format!("a channel needs a kind: one of {}", ChannelKind::names()),
        )),
        Some(k) => {
            if let Err(e) = notify::check_kind(k) {
                errors.push(("/kind", e));
            }
        }
    }
    check_settings(&state, &b, &mut errors);
    if !errors.is_empty() {
        return Err(invalid(errors));
    }
    // A signed channel always has a secret: an unsigned webhook would be
    // one anybody could forge.
    let secret = if kind == ChannelKind::Webhook.as_str() {
        Some(new_secret(&state, &name)?)
    } else {
        None
    };
    let now = now_s();
    let row = ChannelRow {
        name: name.clone(),
        kind,
        url: b.url,
        min_gain: b.min_gain,
        min_confidence: b.min_confidence,
        enabled: b.enabled,
        secret_sealed: secret.as_ref().map(|s| s.1.clone()),
        secret_fingerprint: secret.as_ref().map(|s| s.2.clone()),
        created_at: now,
        updated_at: now,
    };
    store::insert_channel(&state.db, &row).await?;
    tracing::info!(channel = %name, kind = %row.kind, "notification channel created");
    Ok((
        StatusCode::CREATED,
        Json(berth_api::NotificationChannelWithSecret {
            channel: public(&row),
            // Shown this once; afterwards only its fingerprint.
            secret: secret.map(|s| s.0),
        }),
    )
        .into_response())
}

async fn update(
    State(state): State<AppState>,
    Path(name): Path<String>,
    body: Body,
) -> ApiResult<Json<berth_api::NotificationChannelAnswer>> {
    let bytes = read_body(body, SMALL_BODY_LIMIT).await?;
    let b: ChannelBody = json_body(&bytes, "notification channel")?;
    let current = store::channel(&state.db, &name)
        .await?
        .ok_or_else(|| not_found(&name))?;
    let mut errors = Vec::new();
    if b.name.as_ref().is_some_and(|n| *n != name) {
        errors.push((
            "/name",
            "a channel cannot be renamed; create a new one and delete this".to_string(),
        ));
    }
    if b.kind.as_ref().is_some_and(|k| *k != current.kind) {
        errors.push((
            "/kind",
            format!(
                "a channel's kind cannot change (this one is {}); create a new channel instead",
                current.kind
            ),
        ));
    }
    check_settings(&state, &b, &mut errors);
    if !errors.is_empty() {
        return Err(invalid(errors));
    }
    if !store::update_channel(
        &state.db,
        &name,
        &b.url,
        b.min_gain,
        &b.min_confidence,
        b.enabled,
        now_s(),
    )
    .await?
    {
        return Err(not_found(&name));
    }
    get(State(state), Path(name)).await
}

async fn delete(State(state): State<AppState>, Path(name): Path<String>) -> ApiResult<StatusCode> {
    if store::delete_channel(&state.db, &name).await? {
        tracing::info!(channel = %name, "notification channel deleted");
        Ok(StatusCode::NO_CONTENT)
    } else {
        Err(not_found(&name))
    }
}

/// A new secret for a signed channel, in force at once (the old one stops
/// signing: docs/notifications.md says how to switch without losing
/// events).
async fn rotate(
    State(state): State<AppState>,
    Path(name): Path<String>,
) -> ApiResult<Json<berth_api::NotificationChannelWithSecret>> {
    let c = store::channel(&state.db, &name)
        .await?
        .ok_or_else(|| not_found(&name))?;
    if c.kind != ChannelKind::Webhook.as_str() {
        return Err(invalid(vec![(
            "/kind",
            format!(
                "channel {name:?} is a {} channel, which is not signed: its URL is its credential; \
                 to change it, PUT a new URL",
                c.kind
            ),
        )]));
    }
    let (secret, sealed, fingerprint) = new_secret(&state, &name)?;
    if !store::set_channel_secret(&state.db, &name, &sealed, &fingerprint, now_s()).await? {
        return Err(not_found(&name));
    }
    tracing::info!(channel = %name, "notification channel secret replaced");
    let c = store::channel(&state.db, &name)
        .await?
        .ok_or_else(|| not_found(&name))?;
    Ok(Json(berth_api::NotificationChannelWithSecret {
        channel: public(&c),
        secret: Some(secret),
    }))
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct DeliveriesQuery {
    #[serde(default)]
    limit: Option<i64>,
    #[serde(default)]
    channel: Option<String>,
    #[serde(default)]
    status: Option<String>,
}

/// The delivery statuses.
const STATUSES: [&str; 3] = ["pending", "delivered", "failed"];

/// `GET /api/notification-deliveries`: newest first (50 by default, as
/// many as Health shows; at most 200, like the other history lists),
/// only of estates the caller may see.
async fn deliveries(
    State(state): State<AppState>,
    caller: Caller,
    Query(q): Query<DeliveriesQuery>,
) -> ApiResult<Json<berth_api::NotificationDeliveryList>> {
    let limit = match q.limit {
        None => 50,
        Some(l) if (1..=200).contains(&l) => l,
        Some(l) => return Err(ApiError::bad_request(format!("limit {l}: from 1 to 200"))),
    };
    if let Some(s) = &q.status {
        if !STATUSES.contains(&s.as_str()) {
            return Err(ApiError::bad_request(format!(
                "status {:?}: one of {}",
                external::excerpt(s),
                STATUSES.join(", ")
            )));
        }
    }
    let p = caller.principal()?;
    let deliveries =
        store::list_deliveries(&state.db, q.channel.as_deref(), q.status.as_deref(), limit)
            .await?
            .into_iter()
            .filter(|d| p.may_see_estate(&d.estate))
            .map(delivery)
            .collect();
    Ok(Json(berth_api::NotificationDeliveryList { deliveries }))
}

/// A delivery row as the API shows it.
fn delivery(d: store::Delivery) -> berth_api::NotificationDelivery {
    berth_api::NotificationDelivery {
        id: d.id,
        channel: d.channel,
        estate: d.estate,
        identity: d.identity,
        estate_version: d.estate_version,
        message_id: d.message_id,
        status: d.status,
        attempts: d.attempts,
        created_at: format_time(d.created_at),
        next_attempt_at: d.next_attempt_at.map(format_time),
        last_attempt_at: d.last_attempt_at.map(format_time),
        last_status: d.last_status,
        last_error: d.last_error,
        delivered_at: d.delivered_at.map(format_time),
    }
}
