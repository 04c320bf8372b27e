//! Decider runs and advice snapshots: what was evaluated, when, and
//! what it came to.

use serde::Serialize;

use super::row::JsonText;
use super::{rfc3339, StoreResult};
use crate::db::Db;

// ---- decider runs ------------------------------------------------------

/// One stored run of an external decider.
#[derive(Clone, Debug, Serialize, sqlx::FromRow)]
pub struct DeciderRun {
    pub id: i64,
    #[sqlx(rename = "estate_id")]
    pub estate: String,
    pub decider: String,
    pub estate_version: i64,
    pub content_digest: String,
    pub policy_digest: String,
    pub outcome: String,
    pub started_by: String,
    #[serde(serialize_with = "rfc3339")]
    pub started_at: i64,
    pub run_time_ms: i64,
    /// The decider's comparison entry, as the engine wrote it.
    #[sqlx(try_from = "JsonText")]
    pub entry: serde_json::Value,
}

pub struct NewRun<'a> {
    pub estate: &'a str,
    pub decider: &'a str,
    pub estate_version: i64,
    pub content_digest: &'a str,
    pub policy_digest: &'a str,
    pub outcome: &'a str,
    pub started_by: &'a str,
    pub started_at: i64,
    pub run_time_ms: i64,
    pub entry: &'a str,
}

/// Store a run; returns its id, so that the caller can read back exactly
/// this run (two runs may share `started_at`, the evaluation time).
pub async fn insert_run(db: &Db, r: NewRun<'_>) -> StoreResult<i64> {
    let _w = db.write_guard().await;
    let id: i64 = sqlx::query_scalar(
        "INSERT INTO decider_runs (estate_id, decider, estate_version, content_digest, policy_digest, outcome, \
         started_by, started_at, run_time_ms, entry) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10) RETURNING id",
    )
    .bind(r.estate)
    .bind(r.decider)
    .bind(r.estate_version)
    .bind(r.content_digest)
    .bind(r.policy_digest)
    .bind(r.outcome)
    .bind(r.started_by)
    .bind(r.started_at)
    .bind(r.run_time_ms)
    .bind(r.entry)
    .fetch_one(&db.pool)
    .await?;
    Ok(id)
}

const RUN_COLUMNS: &str =
    "id, estate_id, decider, estate_version, content_digest, policy_digest, outcome, \
     started_by, started_at, run_time_ms, entry";

/// One run, by the id [`insert_run`] returned.
pub async fn run_by_id(db: &Db, id: i64) -> StoreResult<Option<DeciderRun>> {
    Ok(sqlx::query_as(&format!(
        "SELECT {RUN_COLUMNS} FROM decider_runs WHERE id = $1"
    ))
    .bind(id)
    .fetch_optional(&db.pool)
    .await?)
}

/// Newest first, at most `limit`, optionally for one decider.
pub async fn list_runs(
    db: &Db,
    estate: &str,
    decider: Option<&str>,
    limit: i64,
) -> StoreResult<Vec<DeciderRun>> {
    Ok(sqlx::query_as(&format!(
        "SELECT {RUN_COLUMNS} FROM decider_runs \
         WHERE estate_id = $1 AND ($2 IS NULL OR decider = $2) ORDER BY started_at DESC, id DESC LIMIT $3"
    ))
    .bind(estate)
    .bind(decider)
    .bind(limit)
    .fetch_all(&db.pool)
    .await?)
}

/// The newest successful run of each (estate, decider), for the driver's
/// backlog. Only successes count: a deferred or failed run leaves the
/// subject due, so it stays in the backlog and its backoff holds.
pub async fn last_runs(db: &Db) -> StoreResult<Vec<(String, String, i64)>> {
    // Columns in the order of the tuple.
    Ok(sqlx::query_as(
        // The newest run by id, not by time: after the clock steps back,
        // the latest run's time is below older ones' (issue 37).
        "SELECT estate_id, decider, started_at FROM decider_runs WHERE id IN \
         (SELECT MAX(id) FROM decider_runs WHERE outcome = 'ok' GROUP BY estate_id, decider)",
    )
    .fetch_all(&db.pool)
    .await?)
}

// ---- advice snapshots --------------------------------------------------

#[derive(Clone, Debug, Serialize, sqlx::FromRow)]
pub struct AdviceSnapshot {
    pub id: i64,
    #[sqlx(rename = "estate_id")]
    pub estate: String,
    pub estate_version: i64,
    pub content_digest: String,
    pub policy_digest: String,
    #[serde(serialize_with = "rfc3339")]
    pub evaluated_at: i64,
    pub moves: i64,
    #[sqlx(try_from = "JsonText")]
    pub result: serde_json::Value,
}

pub struct NewSnapshot<'a> {
    pub estate: &'a str,
    pub estate_version: i64,
    pub content_digest: &'a str,
    pub policy_digest: &'a str,
    pub evaluated_at: i64,
    pub moves: i64,
    pub result: &'a str,
}

pub async fn insert_snapshot(db: &Db, s: NewSnapshot<'_>) -> StoreResult<()> {
    let _w = db.write_guard().await;
    sqlx::query(
        "INSERT INTO advice_snapshots (estate_id, estate_version, content_digest, policy_digest, evaluated_at, moves, result) \
         VALUES ($1, $2, $3, $4, $5, $6, $7)",
    )
    .bind(s.estate)
    .bind(s.estate_version)
    .bind(s.content_digest)
    .bind(s.policy_digest)
    .bind(s.evaluated_at)
    .bind(s.moves)
    .bind(s.result)
    .execute(&db.pool)
    .await?;
    Ok(())
}

/// Newest first; with `with_result` false the (large) result is left out.
pub async fn list_snapshots(
    db: &Db,
    estate: &str,
    limit: i64,
    with_result: bool,
) -> StoreResult<Vec<AdviceSnapshot>> {
    let result_col = if with_result {
        "result"
    } else {
        "'null' AS result"
    };
    Ok(sqlx::query_as(&format!(
        "SELECT id, estate_id, estate_version, content_digest, policy_digest, evaluated_at, moves, {result_col} \
         FROM advice_snapshots WHERE estate_id = $1 ORDER BY evaluated_at DESC, id DESC LIMIT $2"
    ))
    .bind(estate)
    .bind(limit)
    .fetch_all(&db.pool)
    .await?)
}

/// The `limit` newest snapshots of an estate with their advice text, for
/// the history series (`berth_engine::history`), newest first.
pub async fn history_snapshots(
    db: &Db,
    estate: &str,
    limit: i64,
) -> StoreResult<Vec<berth_engine::history::Snapshot>> {
    // Columns in the order of the tuple.
    let rows: Vec<(i64, i64, String, i64, String)> = sqlx::query_as(
        "SELECT id, estate_version, policy_digest, evaluated_at, result \
         FROM advice_snapshots WHERE estate_id = $1 ORDER BY evaluated_at DESC, id DESC LIMIT $2",
    )
    .bind(estate)
    .bind(limit)
    .fetch_all(&db.pool)
    .await?;
    Ok(rows
        .into_iter()
        .map(
            |(id, estate_version, policy_digest, evaluated_at, result)| {
                berth_engine::history::Snapshot {
                    id,
                    estate_version,
                    policy_digest,
                    evaluated_at,
                    result,
                }
            },
        )
        .collect())
}

/// Delete every snapshot evaluated before `before` (Unix seconds) except
/// each estate's newest (the highest id, as [`last_snapshots`] reads it:
/// the driver compares against it to know whether an estate is stale, and
/// the history keeps at least its latest point). One statement, so a
/// concurrent reader sees the history before or after, never half pruned.
/// Returns how many were deleted.
pub async fn prune_snapshots(db: &Db, before: i64) -> StoreResult<u64> {
    let _w = db.write_guard().await;
    let done = sqlx::query(
        "DELETE FROM advice_snapshots WHERE evaluated_at < $1 \
         AND id NOT IN (SELECT MAX(t.id) FROM advice_snapshots t GROUP BY t.estate_id)",
    )
    .bind(before)
    .execute(&db.pool)
    .await?;
    Ok(done.rows_affected())
}

/// The (version, policy digest) of each estate's newest snapshot.
pub async fn last_snapshots(db: &Db) -> StoreResult<Vec<(String, i64, String)>> {
    // Columns in the order of the tuple.
    Ok(sqlx::query_as(
        "SELECT s.estate_id, s.estate_version, s.policy_digest FROM advice_snapshots s \
         WHERE s.id = (SELECT MAX(t.id) FROM advice_snapshots t WHERE t.estate_id = s.estate_id)",
    )
    .fetch_all(&db.pool)
    .await?)
}
