//! What an estate's health page reads: who sends observation batches,
//! and where its agents answer probes.

use super::StoreResult;
use crate::db::Db;

/// What one submitter's observation batches amount to in an estate.
#[derive(Clone, Debug, PartialEq, Eq, sqlx::FromRow)]
pub struct SubmitterBatches {
    /// `token:ID`, a user's name, or `''` for batches from before
    /// submitters were recorded.
    pub submitter: String,
    pub batches: i64,
    pub observations: i64,
    pub last_at: i64,
}

/// Every submitter of observation batches to `estate`, by submitter.
/// (PostgreSQL sums a BIGINT as NUMERIC, which the Any driver does not
/// read as an integer: hence the cast.)
pub async fn batches_by_submitter(db: &Db, estate: &str) -> StoreResult<Vec<SubmitterBatches>> {
    Ok(sqlx::query_as(
        "SELECT submitter, COUNT(*) AS batches, COALESCE(CAST(SUM(applied) AS BIGINT), 0) AS observations, \
         MAX(received_at) AS last_at \
         FROM observation_batches WHERE estate_id = $1 GROUP BY submitter ORDER BY submitter",
    )
    .bind(estate)
    .fetch_all(&db.pool)
    .await?)
}

/// A probe address with who registered it.
#[derive(Clone, Debug, PartialEq, Eq, sqlx::FromRow)]
pub struct ProbeRow {
    pub cluster: String,
    pub address: String,
    pub submitter: String,
    pub updated_at: i64,
}

/// The probe addresses of `estate` registered since `since`, by cluster:
/// the one query both the health page and a fact batch's lock
/// ([`super::EstateLock::probes`]) read them with.
pub(super) async fn select_probes<'e, E>(
    ex: E,
    estate: &str,
    since: i64,
) -> StoreResult<Vec<ProbeRow>>
where
    E: sqlx::Executor<'e, Database = sqlx::Any>,
{
    Ok(sqlx::query_as(
        "SELECT cluster, address, submitter, updated_at FROM agent_probes \
         WHERE estate_id = $1 AND updated_at >= $2 ORDER BY cluster",
    )
    .bind(estate)
    .bind(since)
    .fetch_all(ex)
    .await?)
}

/// Every probe address registered for `estate`, by cluster.
pub async fn probes_of(db: &Db, estate: &str) -> StoreResult<Vec<ProbeRow>> {
    select_probes(&db.pool, estate, i64::MIN).await
}
