//! Operators' decisions about recommendations (`docs/reviews.md`).

use super::audit::{insert_audit, NewAudit};
use super::row::{JsonText, OptJsonText};
use super::StoreResult;
use crate::db::Db;

/// An operator's decision about one recommendation (`docs/reviews.md`).
#[derive(Clone, Debug, sqlx::FromRow)]
pub struct ReviewRow {
    pub identity: String,
    /// `planned`, `dismissed` or `snoozed`.
    #[sqlx(rename = "kind")]
    pub decision: String,
    pub link: String,
    pub reason: String,
    #[sqlx(rename = "until_at")]
    pub until: Option<i64>,
    /// `berth_engine::review::Condition` as JSON, or null.
    #[sqlx(rename = "ask_when", try_from = "OptJsonText")]
    pub condition: Option<serde_json::Value>,
    /// `berth_engine::review::Basis` as JSON.
    #[sqlx(try_from = "JsonText")]
    pub basis: serde_json::Value,
    pub estate_version: i64,
    pub evaluated_at: i64,
    pub decided_by: String,
    pub decided_at: i64,
}

/// Record a decision (replacing the identity's last one) and its audit
/// entry, in one transaction.
pub async fn put_review(
    db: &Db,
    estate: &str,
    r: &ReviewRow,
    audit: &NewAudit<'_>,
) -> StoreResult<()> {
    let _w = db.write_guard().await;
    let mut tx = db.begin().await?;
    sqlx::query("DELETE FROM reviews WHERE estate_id = $1 AND identity = $2")
        .bind(estate)
        .bind(&r.identity)
        .execute(&mut *tx)
        .await?;
    sqlx::query(
        "INSERT INTO reviews (estate_id, identity, kind, link, reason, until_at, ask_when, basis, \
         estate_version, evaluated_at, decided_by, decided_at) \
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)",
    )
    .bind(estate)
    .bind(&r.identity)
    .bind(&r.decision)
    .bind(&r.link)
    .bind(&r.reason)
    .bind(r.until)
    .bind(r.condition.as_ref().map(|c| c.to_string()))
    .bind(r.basis.to_string())
    .bind(r.estate_version)
    .bind(r.evaluated_at)
    .bind(&r.decided_by)
    .bind(r.decided_at)
    .execute(&mut *tx)
    .await?;
    insert_audit(&mut tx, audit).await?;
    tx.commit().await?;
    Ok(())
}

/// Forget the decision about `identity` (it shows like any other again),
/// with its audit entry; `false` when there was none (nothing written).
pub async fn clear_review(
    db: &Db,
    estate: &str,
    identity: &str,
    audit: &NewAudit<'_>,
) -> StoreResult<bool> {
    let _w = db.write_guard().await;
    let mut tx = db.begin().await?;
    let done = sqlx::query("DELETE FROM reviews WHERE estate_id = $1 AND identity = $2")
        .bind(estate)
        .bind(identity)
        .execute(&mut *tx)
        .await?;
    if done.rows_affected() == 0 {
        return Ok(false);
    }
    insert_audit(&mut tx, audit).await?;
    tx.commit().await?;
    Ok(true)
}

/// Every decision of an estate, by identity.
pub async fn reviews(db: &Db, estate: &str) -> StoreResult<Vec<ReviewRow>> {
    Ok(sqlx::query_as(
        "SELECT identity, kind, link, reason, until_at, ask_when, basis, estate_version, \
         evaluated_at, decided_by, decided_at FROM reviews WHERE estate_id = $1 ORDER BY identity",
    )
    .bind(estate)
    .fetch_all(&db.pool)
    .await?)
}
