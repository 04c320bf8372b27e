//! Notification channels, their cursors and deliveries.

use serde::Serialize;

use super::registry;
use super::row::Flag;
use super::{rfc3339, rfc3339_opt, StoreError, StoreResult};
use crate::db::Db;

/// A notification channel as stored. The sealed secret stays in here; the
/// API shows what `http::notify::public` builds from it instead.
#[derive(Clone, sqlx::FromRow)]
pub struct ChannelRow {
    pub name: String,
    /// `webhook`, `slack` or `teams`.
    pub kind: String,
    pub url: String,
    pub min_gain: f64,
    /// A confidence class name (`measured` … `guessed`).
    pub min_confidence: String,
    #[sqlx(try_from = "Flag")]
    pub enabled: bool,
    #[sqlx(rename = "secret_ciphertext")]
    pub secret_sealed: Option<String>,
    pub secret_fingerprint: Option<String>,
    pub created_at: i64,
    pub updated_at: i64,
}

/// `Debug` without the URL (a Slack or Teams URL is its credential) or
/// the sealed secret.
impl std::fmt::Debug for ChannelRow {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ChannelRow")
            .field("name", &self.name)
            .field("kind", &self.kind)
            .field("min_gain", &self.min_gain)
            .field("min_confidence", &self.min_confidence)
            .field("enabled", &self.enabled)
            .finish_non_exhaustive()
    }
}

const CHANNEL_COLUMNS: &str = "name, kind, url, min_gain, min_confidence, enabled, \
     secret_ciphertext, secret_fingerprint, created_at, updated_at";

pub async fn list_channels(db: &Db) -> StoreResult<Vec<ChannelRow>> {
    registry::list(db, "notification_channels", CHANNEL_COLUMNS).await
}

pub async fn channel(db: &Db, name: &str) -> StoreResult<Option<ChannelRow>> {
    registry::get(db, "notification_channels", CHANNEL_COLUMNS, name).await
}

/// Insert a new channel; `Conflict` if the name is taken.
pub async fn insert_channel(db: &Db, c: &ChannelRow) -> StoreResult<()> {
    let _w = db.write_guard().await;
    let done = sqlx::query(
        "INSERT INTO notification_channels (name, kind, url, min_gain, min_confidence, enabled, \
         secret_ciphertext, secret_fingerprint, created_at, updated_at) \
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $9) ON CONFLICT DO NOTHING",
    )
    .bind(&c.name)
    .bind(&c.kind)
    .bind(&c.url)
    .bind(c.min_gain)
    .bind(&c.min_confidence)
    .bind(i64::from(c.enabled))
    .bind(&c.secret_sealed)
    .bind(&c.secret_fingerprint)
    .bind(c.created_at)
    .execute(&db.pool)
    .await?;
    if done.rows_affected() == 0 {
        return Err(StoreError::Conflict(format!(
            "a notification channel named {:?} exists already; change it with PUT /api/notification-channels/{}",
            c.name, c.name
        )));
    }
    Ok(())
}

/// Change a channel's settings (not its kind or secret). Its cursors go,
/// so the next pass looks at every estate's newest advice again under the
/// new thresholds; what was sent stays sent (the deliveries deduplicate).
pub async fn update_channel(
    db: &Db,
    name: &str,
    url: &str,
    min_gain: f64,
    min_confidence: &str,
    enabled: bool,
    now: i64,
) -> StoreResult<bool> {
    let _w = db.write_guard().await;
    let mut tx = db.begin().await?;
    let done = sqlx::query(
        "UPDATE notification_channels SET url = $1, min_gain = $2, min_confidence = $3, enabled = $4, \
         updated_at = $5 WHERE name = $6",
    )
    .bind(url)
    .bind(min_gain)
    .bind(min_confidence)
    .bind(i64::from(enabled))
    .bind(now)
    .bind(name)
    .execute(&mut *tx)
    .await?;
    sqlx::query("DELETE FROM notification_cursors WHERE channel = $1")
        .bind(name)
        .execute(&mut *tx)
        .await?;
    tx.commit().await?;
    Ok(done.rows_affected() > 0)
}

/// Replace a channel's secret (no overlap: see docs/notifications.md).
pub async fn set_channel_secret(
    db: &Db,
    name: &str,
    sealed: &str,
    fingerprint: &str,
    now: i64,
) -> StoreResult<bool> {
    let _w = db.write_guard().await;
    let done = sqlx::query(
        "UPDATE notification_channels SET secret_ciphertext = $1, secret_fingerprint = $2, updated_at = $3 \
         WHERE name = $4",
    )
    .bind(sealed)
    .bind(fingerprint)
    .bind(now)
    .bind(name)
    .execute(&db.pool)
    .await?;
    Ok(done.rows_affected() > 0)
}

/// Delete a channel with its deliveries and cursors.
pub async fn delete_channel(db: &Db, name: &str) -> StoreResult<bool> {
    registry::delete(db, "notification_channels", name).await
}

/// Every (channel, estate) → (estate version, policy digest) last looked at.
pub async fn notify_cursors(db: &Db) -> StoreResult<Vec<(String, String, i64, String)>> {
    // Columns in the order of the tuple.
    Ok(sqlx::query_as(
        "SELECT channel, estate_id, estate_version, policy_digest FROM notification_cursors",
    )
    .fetch_all(&db.pool)
    .await?)
}

/// The (version, policy digest, evaluation time) of each estate's newest
/// advice snapshot.
pub async fn snapshot_heads(db: &Db) -> StoreResult<Vec<(String, i64, String, i64)>> {
    // Columns in the order of the tuple.
    Ok(sqlx::query_as(
        "SELECT s.estate_id, s.estate_version, s.policy_digest, s.evaluated_at FROM advice_snapshots s \
         WHERE s.id = (SELECT MAX(t.id) FROM advice_snapshots t WHERE t.estate_id = s.estate_id)",
    )
    .fetch_all(&db.pool)
    .await?)
}

/// One recommendation to queue for one channel.
pub struct NewDelivery<'a> {
    pub identity: &'a str,
    pub message_id: &'a str,
    pub body: &'a str,
}

/// The insert of one pending delivery, unless the same (channel, estate,
/// identity, version) is queued already: one statement for advice
/// notifications and outcome notifications.
fn insert_delivery<'q>(
    channel: &'q str,
    estate: &'q str,
    estate_version: i64,
    d: &NewDelivery<'q>,
    now: i64,
) -> sqlx::query::Query<'q, sqlx::Any, sqlx::any::AnyArguments<'q>> {
    sqlx::query(
        "INSERT INTO notification_deliveries (channel, estate_id, identity, estate_version, message_id, body, \
         status, attempts, created_at, next_attempt_at, last_attempt_at, last_status, last_error, delivered_at) \
         VALUES ($1, $2, $3, $4, $5, $6, 'pending', 0, $7, $7, NULL, NULL, '', NULL) ON CONFLICT DO NOTHING",
    )
    .bind(channel)
    .bind(estate)
    .bind(d.identity)
    .bind(estate_version)
    .bind(d.message_id)
    .bind(d.body)
    .bind(now)
}

/// Queue `deliveries` for `channel` on `estate` at `estate_version`, each
/// unless that (identity, version) was queued for the channel before, and
/// move the channel's cursor for the estate — all in one transaction, so
/// a crash between them cannot lose or repeat a recommendation. Returns
/// how many were new.
pub async fn enqueue_deliveries(
    db: &Db,
    channel: &str,
    estate: &str,
    estate_version: i64,
    policy_digest: &str,
    deliveries: &[NewDelivery<'_>],
    now: i64,
) -> StoreResult<usize> {
    let _w = db.write_guard().await;
    let mut tx = db.begin().await?;
    let mut queued = 0;
    for d in deliveries {
        let done = insert_delivery(channel, estate, estate_version, d, now)
            .execute(&mut *tx)
            .await?;
        queued += done.rows_affected() as usize;
    }
    sqlx::query(
        "INSERT INTO notification_cursors (channel, estate_id, estate_version, policy_digest) VALUES ($1, $2, $3, $4) \
         ON CONFLICT (channel, estate_id) DO UPDATE SET estate_version = excluded.estate_version, \
         policy_digest = excluded.policy_digest",
    )
    .bind(channel)
    .bind(estate)
    .bind(estate_version)
    .bind(policy_digest)
    .execute(&mut *tx)
    .await?;
    tx.commit().await?;
    Ok(queued)
}

/// Queue one outcome notification (`crate::outcomes`) for `channel`,
/// unless the same (channel, estate, identity, version) was queued
/// before; 1 if queued. The channel's cursor is left alone: it says
/// which advice the channel has looked at.
pub async fn enqueue_outcome_delivery(
    db: &Db,
    channel: &str,
    estate: &str,
    estate_version: i64,
    d: NewDelivery<'_>,
    now: i64,
) -> StoreResult<usize> {
    let _w = db.write_guard().await;
    let done = insert_delivery(channel, estate, estate_version, &d, now)
        .execute(&db.pool)
        .await?;
    Ok(done.rows_affected() as usize)
}

/// A delivery as stored (its body only in [`DueDelivery`]).
#[derive(Clone, Debug, Serialize, PartialEq, sqlx::FromRow)]
pub struct Delivery {
    pub id: i64,
    pub channel: String,
    #[sqlx(rename = "estate_id")]
    pub estate: String,
    pub identity: String,
    pub estate_version: i64,
    pub message_id: String,
    /// `pending`, `delivered` or `failed`.
    pub status: String,
    pub attempts: i64,
    #[serde(serialize_with = "rfc3339")]
    pub created_at: i64,
    #[serde(serialize_with = "rfc3339_opt")]
    pub next_attempt_at: Option<i64>,
    #[serde(serialize_with = "rfc3339_opt")]
    pub last_attempt_at: Option<i64>,
    pub last_status: Option<i64>,
    pub last_error: String,
    #[serde(serialize_with = "rfc3339_opt")]
    pub delivered_at: Option<i64>,
}

const DELIVERY_COLUMNS: &str =
    "id, channel, estate_id, identity, estate_version, message_id, status, attempts, \
     created_at, next_attempt_at, last_attempt_at, last_status, last_error, delivered_at";

/// Newest first, at most `limit`, optionally of one channel or status.
pub async fn list_deliveries(
    db: &Db,
    channel: Option<&str>,
    status: Option<&str>,
    limit: i64,
) -> StoreResult<Vec<Delivery>> {
    Ok(sqlx::query_as(&format!(
        "SELECT {DELIVERY_COLUMNS} FROM notification_deliveries \
         WHERE ($1 IS NULL OR channel = $1) AND ($2 IS NULL OR status = $2) \
         ORDER BY created_at DESC, id DESC LIMIT $3"
    ))
    .bind(channel)
    .bind(status)
    .bind(limit)
    .fetch_all(&db.pool)
    .await?)
}

/// A pending delivery whose time has come, with what it sends.
#[derive(Clone, Debug, sqlx::FromRow)]
pub struct DueDelivery {
    #[sqlx(flatten)]
    pub delivery: Delivery,
    pub body: String,
}

/// Pending deliveries due at `now`, the longest waiting first, at most
/// `limit`.
pub async fn due_deliveries(db: &Db, now: i64, limit: i64) -> StoreResult<Vec<DueDelivery>> {
    Ok(sqlx::query_as(&format!(
        "SELECT {DELIVERY_COLUMNS}, body FROM notification_deliveries \
         WHERE status = 'pending' AND next_attempt_at <= $1 ORDER BY next_attempt_at, id LIMIT $2"
    ))
    .bind(now)
    .bind(limit)
    .fetch_all(&db.pool)
    .await?)
}

/// What one attempt came to.
pub struct Attempt<'a> {
    /// `pending` (to be retried at `next_attempt_at`), `delivered` or
    /// `failed`.
    pub status: &'a str,
    pub at: i64,
    pub next_attempt_at: Option<i64>,
    pub http_status: Option<i64>,
    pub error: &'a str,
}

pub async fn record_attempt(db: &Db, id: i64, a: &Attempt<'_>) -> StoreResult<()> {
    let _w = db.write_guard().await;
    sqlx::query(
        "UPDATE notification_deliveries SET status = $1, attempts = attempts + 1, last_attempt_at = $2, \
         next_attempt_at = $3, last_status = $4, last_error = $5, \
         delivered_at = CASE WHEN $1 = 'delivered' THEN $2 ELSE delivered_at END WHERE id = $6",
    )
    .bind(a.status)
    .bind(a.at)
    .bind(a.next_attempt_at)
    .bind(a.http_status)
    .bind(a.error)
    .bind(id)
    .execute(&db.pool)
    .await?;
    Ok(())
}
