//! The audit trail: who did what, when, and why.

use super::row::JsonText;
use super::StoreResult;
use crate::db::{Db, Tx};

/// One entry of the audit trail: who did what, when, and why.
#[derive(Clone, Debug, sqlx::FromRow)]
pub struct AuditEntry {
    pub id: i64,
    #[sqlx(rename = "estate_id")]
    pub estate: String,
    pub actor: String,
    pub at: i64,
    pub action: String,
    pub subject: String,
    pub reason: String,
    #[sqlx(try_from = "JsonText")]
    pub detail: serde_json::Value,
}

pub struct NewAudit<'a> {
    pub estate: &'a str,
    pub actor: &'a str,
    pub at: i64,
    pub action: &'a str,
    pub subject: &'a str,
    pub reason: &'a str,
    /// JSON text.
    pub detail: &'a str,
}

/// Write `a` in the transaction of the change it records.
pub(super) async fn insert_audit(tx: &mut Tx, a: &NewAudit<'_>) -> StoreResult<()> {
    sqlx::query(
        "INSERT INTO audit (estate_id, actor, at, action, subject, reason, detail) \
         VALUES ($1, $2, $3, $4, $5, $6, $7)",
    )
    .bind(a.estate)
    .bind(a.actor)
    .bind(a.at)
    .bind(a.action)
    .bind(a.subject)
    .bind(a.reason)
    .bind(a.detail)
    .execute(&mut **tx)
    .await?;
    Ok(())
}

/// The `limit` newest entries of `estate`'s trail that match `filter`
/// (an SQL condition on the audit row, `TRUE` for all), newest first:
/// the one query of the trail.
async fn entries(db: &Db, estate: &str, filter: &str, limit: i64) -> StoreResult<Vec<AuditEntry>> {
    Ok(sqlx::query_as(&format!(
        "SELECT id, estate_id, actor, at, action, subject, reason, detail FROM audit \
         WHERE estate_id = $1 AND ({filter}) ORDER BY id DESC LIMIT $2"
    ))
    .bind(estate)
    .bind(limit)
    .fetch_all(&db.pool)
    .await?)
}

/// The estate's audit trail, newest first.
pub async fn audit(db: &Db, estate: &str, limit: i64) -> StoreResult<Vec<AuditEntry>> {
    entries(db, estate, "1 = 1", limit).await
}

/// The estate's writes in the audit trail (`estate.*` and `facts.*`
/// actions: uploads, imports, re-syncs, fact updates), newest first.
pub async fn estate_writes(db: &Db, estate: &str, limit: i64) -> StoreResult<Vec<AuditEntry>> {
    entries(
        db,
        estate,
        "action LIKE 'estate.%' OR action LIKE 'facts.%'",
        limit,
    )
    .await
}
