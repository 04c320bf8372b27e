//! An estate held for a change that depends on what it holds (a fact
//! batch): its row, the batches it has applied and its agents' probe
//! addresses, read and written under one lock.

use super::applied::record_moves;
use super::audit::{insert_audit, NewAudit};
use super::estates::EstateRow;
use super::health::{select_probes, ProbeRow};
use super::row::{EstateMeta, META_COLUMNS};
use super::StoreResult;
use crate::db::{Backend, Db, Tx, WriteGuard};
use crate::moves;

/// An estate row read for a change that depends on it. Until
/// [`EstateLock::replace_recording`] commits (or the lock is dropped, which rolls
/// back), no other writer — in this process or in another replica — can
/// change the estate, so the change is applied to the document as it
/// really is, and never has to be retried or refused.
pub struct EstateLock<'a> {
    tx: Tx,
    _w: WriteGuard<'a>,
    pub row: EstateRow,
}

/// Read an estate and hold it for a read-modify-write; `None` if there is
/// no such estate.
pub async fn lock_estate<'a>(db: &'a Db, id: &str) -> StoreResult<Option<EstateLock<'a>>> {
    let w = db.write_guard().await;
    let mut tx = db.begin().await?;
    // PostgreSQL: the row lock holds off other replicas until commit.
    // SQLite has no FOR UPDATE and needs none: the write guard already
    // excludes every other writer, and one process owns the file.
    let hold = match db.backend {
        Backend::Postgres => " FOR UPDATE",
        Backend::Sqlite => "",
    };
    let row: Option<EstateRow> = sqlx::query_as(&format!(
        "SELECT {META_COLUMNS}, document, policy FROM estates WHERE id = $1{hold}"
    ))
    .bind(id)
    .fetch_optional(&mut *tx)
    .await?;
    let Some(row) = row else { return Ok(None) };
    Ok(Some(EstateLock { tx, _w: w, row }))
}

/// An observation batch already applied to an estate.
#[derive(sqlx::FromRow)]
pub struct BatchRecord {
    pub body_digest: String,
    pub version: i64,
    pub applied: i64,
}

/// A batch to record with the change it makes, in the same transaction.
pub struct NewBatch<'a> {
    /// Who sent it (the principal's subject): batch ids are per submitter.
    pub submitter: &'a str,
    pub batch_id: &'a str,
    pub body_digest: &'a str,
    pub applied: i64,
}

/// Where a cluster's agent answers round-trip probes.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct Probe {
    pub cluster: String,
    pub address: String,
    pub updated_at: i64,
}

impl From<ProbeRow> for Probe {
    fn from(p: ProbeRow) -> Probe {
        Probe {
            cluster: p.cluster,
            address: p.address,
            updated_at: p.updated_at,
        }
    }
}

impl EstateLock<'_> {
    /// The batch `submitter` recorded under this id, if any (read under
    /// the lock, so a retry racing its original sees either nothing or the
    /// whole of it). A record from before ids were per submitter (migration
    /// 6 kept those with submitter `''`, who sent them being unknown)
    /// answers to every submitter, as it did then: a retry that straddles
    /// the upgrade is still applied once.
    pub async fn batch(
        &mut self,
        submitter: &str,
        batch_id: &str,
    ) -> StoreResult<Option<BatchRecord>> {
        Ok(sqlx::query_as(
            "SELECT body_digest, version, applied FROM observation_batches \
             WHERE estate_id = $1 AND batch_id = $2 AND submitter IN ($3, '') \
             ORDER BY submitter DESC LIMIT 1",
        )
        .bind(&self.row.meta.id)
        .bind(batch_id)
        .bind(submitter)
        .fetch_optional(&mut *self.tx)
        .await?)
    }

    /// Record (or move) the probe address of `cluster`'s agent.
    pub async fn put_probe(
        &mut self,
        cluster: &str,
        address: &str,
        submitter: &str,
        now: i64,
    ) -> StoreResult<()> {
        sqlx::query(
            "INSERT INTO agent_probes (estate_id, cluster, address, submitter, updated_at) \
             VALUES ($1, $2, $3, $4, $5) \
             ON CONFLICT (estate_id, cluster) DO UPDATE SET address = excluded.address, \
             submitter = excluded.submitter, updated_at = excluded.updated_at",
        )
        .bind(&self.row.meta.id)
        .bind(cluster)
        .bind(address)
        .bind(submitter)
        .bind(now)
        .execute(&mut *self.tx)
        .await?;
        Ok(())
    }

    /// The probe addresses registered since `since`, by cluster.
    pub async fn probes(&mut self, since: i64) -> StoreResult<Vec<Probe>> {
        let rows = select_probes(&mut *self.tx, &self.row.meta.id, since).await?;
        Ok(rows.into_iter().map(Probe::from).collect())
    }

    /// Commit what was done under the lock without a new version (a
    /// probe registered by a batch that changes no fact).
    pub async fn commit(self) -> StoreResult<()> {
        self.tx.commit().await?;
        Ok(())
    }

    /// Store the new document, bump the version, commit; with `batch`,
    /// record that observation batch in the same transaction, so the batch
    /// is applied and remembered, or neither.
    pub async fn replace_recording(
        mut self,
        name: &str,
        document: &str,
        content_digest: &str,
        now: i64,
        batch: Option<NewBatch<'_>>,
        audit: Option<&NewAudit<'_>>,
    ) -> StoreResult<EstateMeta> {
        sqlx::query(
            "UPDATE estates SET name = $1, document = $2, content_digest = $3, version = version + 1, updated_at = $4 \
             WHERE id = $5",
        )
        .bind(name)
        .bind(document)
        .bind(content_digest)
        .bind(now)
        .bind(&self.row.meta.id)
        .execute(&mut *self.tx)
        .await?;
        let meta: EstateMeta =
            sqlx::query_as(&format!("SELECT {META_COLUMNS} FROM estates WHERE id = $1"))
                .bind(&self.row.meta.id)
                .fetch_one(&mut *self.tx)
                .await?;
        if let Some(b) = batch {
            sqlx::query(
                "INSERT INTO observation_batches (estate_id, submitter, batch_id, body_digest, version, applied, received_at) \
                 VALUES ($1, $2, $3, $4, $5, $6, $7)",
            )
            .bind(&meta.id)
            .bind(b.submitter)
            .bind(b.batch_id)
            .bind(b.body_digest)
            .bind(meta.version)
            .bind(b.applied)
            .bind(now)
            .execute(&mut *self.tx)
            .await?;
        }
        record_moves(
            &mut self.tx,
            &meta,
            (&self.row.document, &self.row.policy),
            document,
            now,
            moves::BY_KUBERNETES_IMPORT,
        )
        .await?;
        if let Some(a) = audit {
            insert_audit(&mut self.tx, a).await?;
        }
        self.tx.commit().await?;
        Ok(meta)
    }
}
