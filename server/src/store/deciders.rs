//! Registered external deciders.

use super::registry;
use super::row::Flag;
use super::{StoreError, StoreResult};
use crate::db::Db;

/// A registered decider as stored. The sealed secrets stay in here; the
/// API shows what `http::deciders::public` builds from it instead.
#[derive(Clone, sqlx::FromRow)]
pub struct DeciderRow {
    pub name: String,
    pub url: String,
    pub timeout_ms: i64,
    #[sqlx(try_from = "Flag")]
    pub enabled: bool,
    pub interval_s: Option<i64>,
    #[sqlx(rename = "secret_ciphertext")]
    pub secret_sealed: Option<String>,
    pub secret_fingerprint: Option<String>,
    #[sqlx(rename = "previous_ciphertext")]
    pub previous_sealed: Option<String>,
    pub previous_fingerprint: Option<String>,
    pub previous_expires_at: Option<i64>,
    pub created_at: i64,
    pub updated_at: i64,
}

/// `Debug` without the sealed secrets (sealed is not secret without the
/// key, but nothing about a secret belongs in a log line).
impl std::fmt::Debug for DeciderRow {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DeciderRow")
            .field("name", &self.name)
            .field("url", &self.url)
            .field("timeout_ms", &self.timeout_ms)
            .field("enabled", &self.enabled)
            .field("interval_s", &self.interval_s)
            .field("secret_fingerprint", &self.secret_fingerprint)
            .finish_non_exhaustive()
    }
}

impl DeciderRow {
    /// The previous secret, if its overlap has not ended at `now`.
    pub fn live_previous(&self, now: i64) -> Option<&str> {
        match (&self.previous_sealed, self.previous_expires_at) {
            (Some(s), Some(until)) if now < until => Some(s),
            _ => None,
        }
    }
}

const DECIDER_COLUMNS: &str =
    "name, url, timeout_ms, enabled, interval_s, secret_ciphertext, secret_fingerprint, \
     previous_ciphertext, previous_fingerprint, previous_expires_at, created_at, updated_at";

pub async fn list_deciders(db: &Db) -> StoreResult<Vec<DeciderRow>> {
    registry::list(db, "deciders", DECIDER_COLUMNS).await
}

pub async fn decider(db: &Db, name: &str) -> StoreResult<Option<DeciderRow>> {
    registry::get(db, "deciders", DECIDER_COLUMNS, name).await
}

/// Insert a new decider; `Conflict` if the name is taken.
pub async fn insert_decider(db: &Db, d: &DeciderRow) -> StoreResult<()> {
    let _w = db.write_guard().await;
    let done = sqlx::query(
        "INSERT INTO deciders (name, url, timeout_ms, enabled, interval_s, secret_ciphertext, secret_fingerprint, \
         previous_ciphertext, previous_fingerprint, previous_expires_at, created_at, updated_at) \
         VALUES ($1, $2, $3, $4, $5, $6, $7, NULL, NULL, NULL, $8, $8) ON CONFLICT DO NOTHING",
    )
    .bind(&d.name)
    .bind(&d.url)
    .bind(d.timeout_ms)
    .bind(i64::from(d.enabled))
    .bind(d.interval_s)
    .bind(&d.secret_sealed)
    .bind(&d.secret_fingerprint)
    .bind(d.created_at)
    .execute(&db.pool)
    .await?;
    if done.rows_affected() == 0 {
        return Err(StoreError::Conflict(format!(
            "a decider named {:?} is already registered; edit it with PUT /api/deciders/{}",
            d.name, d.name
        )));
    }
    Ok(())
}

/// Change a decider's settings (not its secret).
pub async fn update_decider(
    db: &Db,
    name: &str,
    url: &str,
    timeout_ms: i64,
    enabled: bool,
    interval_s: Option<i64>,
    now: i64,
) -> StoreResult<bool> {
    let _w = db.write_guard().await;
    let done = sqlx::query(
        "UPDATE deciders SET url = $1, timeout_ms = $2, enabled = $3, interval_s = $4, updated_at = $5 WHERE name = $6",
    )
    .bind(url)
    .bind(timeout_ms)
    .bind(i64::from(enabled))
    .bind(interval_s)
    .bind(now)
    .bind(name)
    .execute(&db.pool)
    .await?;
    Ok(done.rows_affected() > 0)
}

/// Install a new secret. The current one (if any) becomes the previous
/// one until `previous_expires_at`; with no overlap it is dropped at once.
/// `new` is `None` to remove the secret altogether (calls go unsigned).
pub async fn set_decider_secret(
    db: &Db,
    name: &str,
    new: Option<(&str, &str)>,
    previous_expires_at: Option<i64>,
    now: i64,
) -> StoreResult<bool> {
    let _w = db.write_guard().await;
    let keep_previous = previous_expires_at.is_some_and(|t| t > now);
    let (sealed, fingerprint) = match new {
        Some((s, f)) => (Some(s), Some(f)),
        None => (None, None),
    };
    let sql = if keep_previous {
        "UPDATE deciders SET previous_ciphertext = secret_ciphertext, previous_fingerprint = secret_fingerprint, \
         previous_expires_at = $1, secret_ciphertext = $2, secret_fingerprint = $3, updated_at = $4 WHERE name = $5"
    } else {
        "UPDATE deciders SET previous_ciphertext = NULL, previous_fingerprint = NULL, \
         previous_expires_at = $1, secret_ciphertext = $2, secret_fingerprint = $3, updated_at = $4 WHERE name = $5"
    };
    let done = sqlx::query(sql)
        .bind(if keep_previous {
            previous_expires_at
        } else {
            None
        })
        .bind(sealed)
        .bind(fingerprint)
        .bind(now)
        .bind(name)
        .execute(&db.pool)
        .await?;
    Ok(done.rows_affected() > 0)
}

pub async fn delete_decider(db: &Db, name: &str) -> StoreResult<bool> {
    registry::delete(db, "deciders", name).await
}
