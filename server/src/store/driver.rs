//! The advice driver's backoffs and passes.

use serde::Serialize;

use super::StoreResult;
use crate::db::Db;

#[derive(Clone, Debug, PartialEq, Eq, sqlx::FromRow)]
pub struct Backoff {
    pub subject: String,
    /// `deferred` or `failed`.
    pub kind: String,
    pub attempts: i64,
    pub until_at: i64,
    pub last_error: String,
}

pub async fn backoffs(db: &Db) -> StoreResult<Vec<Backoff>> {
    Ok(sqlx::query_as(
        "SELECT subject, kind, attempts, until_at, last_error FROM driver_backoff ORDER BY subject",
    )
    .fetch_all(&db.pool)
    .await?)
}

pub async fn put_backoff(db: &Db, b: &Backoff) -> StoreResult<()> {
    let _w = db.write_guard().await;
    sqlx::query(
        "INSERT INTO driver_backoff (subject, kind, attempts, until_at, last_error) VALUES ($1, $2, $3, $4, $5) \
         ON CONFLICT (subject) DO UPDATE SET kind = excluded.kind, attempts = excluded.attempts, \
         until_at = excluded.until_at, last_error = excluded.last_error",
    )
    .bind(&b.subject)
    .bind(&b.kind)
    .bind(b.attempts)
    .bind(b.until_at)
    .bind(&b.last_error)
    .execute(&db.pool)
    .await?;
    Ok(())
}

pub async fn clear_backoff(db: &Db, subject: &str) -> StoreResult<()> {
    let _w = db.write_guard().await;
    sqlx::query("DELETE FROM driver_backoff WHERE subject = $1")
        .bind(subject)
        .execute(&db.pool)
        .await?;
    Ok(())
}

#[derive(Clone, Debug, Serialize, PartialEq, Eq, sqlx::FromRow)]
pub struct Pass {
    pub replica: String,
    pub started_ms: i64,
    pub finished_ms: i64,
    pub backlog: i64,
    pub evaluated: i64,
    pub deferred: i64,
    pub failed: i64,
    pub held_back: i64,
}

pub async fn insert_pass(db: &Db, p: &Pass) -> StoreResult<()> {
    let _w = db.write_guard().await;
    sqlx::query(
        "INSERT INTO driver_passes (replica, started_ms, finished_ms, backlog, evaluated, deferred, failed, held_back) \
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8)",
    )
    .bind(&p.replica)
    .bind(p.started_ms)
    .bind(p.finished_ms)
    .bind(p.backlog)
    .bind(p.evaluated)
    .bind(p.deferred)
    .bind(p.failed)
    .bind(p.held_back)
    .execute(&db.pool)
    .await?;
    Ok(())
}

/// Newest first.
pub async fn passes(db: &Db, limit: i64) -> StoreResult<Vec<Pass>> {
    Ok(sqlx::query_as(
        "SELECT replica, started_ms, finished_ms, backlog, evaluated, deferred, failed, held_back \
         FROM driver_passes ORDER BY id DESC LIMIT $1",
    )
    .bind(limit)
    .fetch_all(&db.pool)
    .await?)
}
