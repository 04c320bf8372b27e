//! Every SQL statement of the server, with its row types. Handlers never
//! write SQL; the engine never sees a row.
//!
//! Writes that touch several rows, or that read before they write, run in
//! one transaction under [`Db::write_guard`]. A change computed from the
//! estate's current document (a fact batch) holds the estate row from its
//! read to its write ([`lock_estate`]), so replicas changing one estate at
//! once are serialised and neither change is lost. An import, which does
//! not depend on what was there, replaces the document with a version
//! check (`WHERE version = $old`) that keeps the bump exact.
//!
//! Every transaction is a [`Tx`] from [`Db::begin`], never sqlx's own: it
//! ends committed or rolled back, and a connection whose commit or
//! rollback failed is closed rather than reused, so a write that failed
//! (a full disk) leaves no transaction open behind it (issue 37).

use serde::Serialize;
use sqlx::{FromRow, Row};

use crate::clock::now_s;
use crate::db::{Backend, Db, Tx, WriteGuard};
use crate::digest::sha256_hex;
use crate::moves;
use crate::random::new_token;
use crate::role::Role;

/// What can go wrong in the store. The HTTP edge turns it into an
/// `ApiError` (`impl From<StoreError> for ApiError` in `error.rs`): a
/// database failure becomes 503 or 500 (or 409 for a constraint the
/// caller hit), a conflict 409 with its message.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// The database failed, or refused a statement.
    #[error(transparent)]
    Database(#[from] sqlx::Error),
    /// The change conflicts with a row that exists (a name taken); the
    /// message says which and what to do instead.
    #[error("{0}")]
    Conflict(String),
}

pub type StoreResult<T> = Result<T, StoreError>;

/// An estate without its document (cheap to read on every request). It
/// leaves the API as `berth_api::EstateMeta` (times as RFC 3339).
#[derive(Clone, Debug, sqlx::FromRow)]
pub struct EstateMeta {
    pub id: String,
    pub name: String,
    pub version: i64,
    pub content_digest: String,
    pub policy_digest: String,
    pub created_at: i64,
    pub updated_at: i64,
}

/// Times leave the API as RFC 3339, like every time in Berth's formats.
fn rfc3339<S: serde::Serializer>(t: &i64, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(&berth_engine::estate::format_time(*t))
}

fn rfc3339_opt<S: serde::Serializer>(t: &Option<i64>, s: S) -> Result<S::Ok, S::Error> {
    match t {
        Some(t) => rfc3339(t, s),
        None => s.serialize_none(),
    }
}

const META_COLUMNS: &str =
    "id, name, version, content_digest, policy_digest, created_at, updated_at";

fn meta_of(row: &sqlx::any::AnyRow) -> Result<EstateMeta, sqlx::Error> {
    EstateMeta::from_row(row)
}

pub async fn list_estates(db: &Db) -> StoreResult<Vec<EstateMeta>> {
    let rows = sqlx::query(&format!("SELECT {META_COLUMNS} FROM estates ORDER BY id"))
        .fetch_all(&db.pool)
        .await?;
    Ok(rows.iter().map(meta_of).collect::<Result<_, _>>()?)
}

pub async fn estate_meta(db: &Db, id: &str) -> StoreResult<Option<EstateMeta>> {
    let row = sqlx::query(&format!("SELECT {META_COLUMNS} FROM estates WHERE id = $1"))
        .bind(id)
        .fetch_optional(&db.pool)
        .await?;
    Ok(row.as_ref().map(meta_of).transpose()?)
}

/// The estate's document and policy as stored, with its meta.
pub struct EstateRow {
    pub meta: EstateMeta,
    pub document: String,
    pub policy: String,
}

pub async fn estate_row(db: &Db, id: &str) -> StoreResult<Option<EstateRow>> {
    let row = sqlx::query(&format!(
        "SELECT {META_COLUMNS}, document, policy FROM estates WHERE id = $1"
    ))
    .bind(id)
    .fetch_optional(&db.pool)
    .await?;
    let Some(row) = row else { return Ok(None) };
    Ok(Some(EstateRow {
        meta: meta_of(&row)?,
        document: row.try_get("document")?,
        policy: row.try_get("policy")?,
    }))
}

/// What a new estate is stored with.
pub struct NewEstate<'a> {
    pub id: &'a str,
    pub name: &'a str,
    pub document: &'a str,
    pub content_digest: &'a str,
    pub policy: &'a str,
    pub policy_digest: &'a str,
}

pub async fn create_estate(db: &Db, e: NewEstate<'_>, now: i64) -> StoreResult<EstateMeta> {
    let _w = db.write_guard().await;
    let exists = estate_meta(db, e.id).await?;
    if exists.is_some() {
        return Err(StoreError::Conflict(format!(
            "an estate with id {:?} already exists; import into it with PUT /api/estates/{}/file, or choose another id",
            e.id, e.id
        )));
    }
    sqlx::query(
        "INSERT INTO estates (id, name, version, document, content_digest, policy, policy_digest, created_at, updated_at) \
         VALUES ($1, $2, 1, $3, $4, $5, $6, $7, $7)",
    )
    .bind(e.id)
    .bind(e.name)
    .bind(e.document)
    .bind(e.content_digest)
    .bind(e.policy)
    .bind(e.policy_digest)
    .bind(now)
    .execute(&db.pool)
    .await?;
    Ok(estate_meta(db, e.id).await?.expect("just inserted"))
}

/// The estate changed under us (another request or replica wrote first).
#[derive(Debug)]
pub struct Stale;

/// An estate document to store: the estate's name, the canonical
/// document and its content digest.
pub struct NewDocument<'a> {
    pub name: &'a str,
    pub document: &'a str,
    pub content_digest: &'a str,
}

/// Replace an estate's document if it is still at `expected_version`;
/// bumps the version, and writes `audit` in the same transaction. One
/// UPDATE: atomic on both backends.
pub async fn replace_document(
    db: &Db,
    id: &str,
    expected_version: i64,
    new: NewDocument<'_>,
    now: i64,
    audit: Option<&NewAudit<'_>>,
) -> StoreResult<Result<EstateMeta, Stale>> {
    let NewDocument {
        name,
        document,
        content_digest,
    } = new;
    let _w = db.write_guard().await;
    let mut tx = db.begin().await?;
    // The document it replaces, for the moves it makes (read in the
    // transaction that writes, so it is the one replaced).
    let before = sqlx::query("SELECT document, policy FROM estates WHERE id = $1 AND version = $2")
        .bind(id)
        .bind(expected_version)
        .fetch_optional(&mut *tx)
        .await?;
    let Some(before) = before else {
        return Ok(Err(Stale));
    };
    let (before, policy): (String, String) =
        (before.try_get("document")?, before.try_get("policy")?);
    let done = sqlx::query(
        "UPDATE estates SET name = $1, document = $2, content_digest = $3, version = version + 1, updated_at = $4 \
         WHERE id = $5 AND version = $6",
    )
    .bind(name)
    .bind(document)
    .bind(content_digest)
    .bind(now)
    .bind(id)
    .bind(expected_version)
    .execute(&mut *tx)
    .await?;
    if done.rows_affected() == 0 {
        return Ok(Err(Stale));
    }
    let row = sqlx::query(&format!("SELECT {META_COLUMNS} FROM estates WHERE id = $1"))
        .bind(id)
        .fetch_one(&mut *tx)
        .await?;
    let meta = meta_of(&row)?;
    record_moves(
        &mut tx,
        &meta,
        (&before, &policy),
        document,
        now,
        moves::BY_ESTATE_UPLOAD,
    )
    .await?;
    if let Some(a) = audit {
        insert_audit(&mut tx, a).await?;
    }
    tx.commit().await?;
    Ok(Ok(meta))
}

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
    let row = sqlx::query(&format!(
        "SELECT {META_COLUMNS}, document, policy FROM estates WHERE id = $1{hold}"
    ))
    .bind(id)
    .fetch_optional(&mut *tx)
    .await?;
    let Some(row) = row else { return Ok(None) };
    let row = EstateRow {
        meta: meta_of(&row)?,
        document: row.try_get("document")?,
        policy: row.try_get("policy")?,
    };
    Ok(Some(EstateLock { tx, _w: w, row }))
}

/// An observation batch already applied to an estate.
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
        let row = sqlx::query(
            "SELECT body_digest, version, applied FROM observation_batches \
             WHERE estate_id = $1 AND batch_id = $2 AND submitter IN ($3, '') \
             ORDER BY submitter DESC LIMIT 1",
        )
        .bind(&self.row.meta.id)
        .bind(batch_id)
        .bind(submitter)
        .fetch_optional(&mut *self.tx)
        .await?;
        let Some(r) = row else { return Ok(None) };
        Ok(Some(BatchRecord {
            body_digest: r.try_get("body_digest")?,
            version: r.try_get("version")?,
            applied: r.try_get("applied")?,
        }))
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
        let rows = sqlx::query(
            "SELECT cluster, address, updated_at FROM agent_probes \
             WHERE estate_id = $1 AND updated_at >= $2 ORDER BY cluster",
        )
        .bind(&self.row.meta.id)
        .bind(since)
        .fetch_all(&mut *self.tx)
        .await?;
        rows.iter()
            .map(|r| {
                Ok(Probe {
                    cluster: r.try_get("cluster")?,
                    address: r.try_get("address")?,
                    updated_at: r.try_get("updated_at")?,
                })
            })
            .collect()
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
        let row = sqlx::query(&format!("SELECT {META_COLUMNS} FROM estates WHERE id = $1"))
            .bind(&self.row.meta.id)
            .fetch_one(&mut *self.tx)
            .await?;
        let meta = meta_of(&row)?;
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

/// Replace the policy, and record the change in the audit trail in the
/// same transaction (both or neither). A policy change does not bump the
/// estate version: results name the policy digest beside the version, and
/// the cache keys on both.
pub async fn replace_policy(
    db: &Db,
    id: &str,
    policy: &str,
    policy_digest: &str,
    now: i64,
    audit: &NewAudit<'_>,
) -> StoreResult<Option<EstateMeta>> {
    let _w = db.write_guard().await;
    let mut tx = db.begin().await?;
    let done = sqlx::query(
        "UPDATE estates SET policy = $1, policy_digest = $2, updated_at = $3 WHERE id = $4",
    )
    .bind(policy)
    .bind(policy_digest)
    .bind(now)
    .bind(id)
    .execute(&mut *tx)
    .await?;
    if done.rows_affected() == 0 {
        return Ok(None);
    }
    insert_audit(&mut tx, audit).await?;
    tx.commit().await?;
    estate_meta(db, id).await
}

pub async fn policy_of(db: &Db, id: &str) -> StoreResult<Option<String>> {
    Ok(
        sqlx::query_scalar("SELECT policy FROM estates WHERE id = $1")
            .bind(id)
            .fetch_optional(&db.pool)
            .await?,
    )
}

/// Delete an estate and everything hanging off it, in one transaction.
pub async fn delete_estate(db: &Db, id: &str) -> StoreResult<bool> {
    let _w = db.write_guard().await;
    let mut tx = db.begin().await?;
    sqlx::query("DELETE FROM scenarios WHERE estate_id = $1")
        .bind(id)
        .execute(&mut *tx)
        .await?;
    sqlx::query("DELETE FROM reviews WHERE estate_id = $1")
        .bind(id)
        .execute(&mut *tx)
        .await?;
    for table in ["move_events", "estate_moves"] {
        sqlx::query(&format!("DELETE FROM {table} WHERE estate_id = $1"))
            .bind(id)
            .execute(&mut *tx)
            .await?;
    }
    sqlx::query("UPDATE tokens SET revoked_at = $1 WHERE estate_id = $2 AND revoked_at IS NULL")
        .bind(now_s())
        .bind(id)
        .execute(&mut *tx)
        .await?;
    let done = sqlx::query("DELETE FROM estates WHERE id = $1")
        .bind(id)
        .execute(&mut *tx)
        .await?;
    tx.commit().await?;
    Ok(done.rows_affected() > 0)
}

// ---- scenarios -------------------------------------------------------

#[derive(Clone, Debug)]
pub struct ScenarioMeta {
    pub name: String,
    pub updated_at: i64,
    pub updated_by: String,
}

pub async fn list_scenarios(db: &Db, estate: &str) -> StoreResult<Vec<ScenarioMeta>> {
    let rows = sqlx::query(
        "SELECT name, updated_at, updated_by FROM scenarios WHERE estate_id = $1 ORDER BY name",
    )
    .bind(estate)
    .fetch_all(&db.pool)
    .await?;
    rows.iter()
        .map(|r| {
            Ok(ScenarioMeta {
                name: r.try_get("name")?,
                updated_at: r.try_get("updated_at")?,
                updated_by: r.try_get("updated_by")?,
            })
        })
        .collect::<Result<_, sqlx::Error>>()
        .map_err(StoreError::from)
}

pub async fn scenario(db: &Db, estate: &str, name: &str) -> StoreResult<Option<String>> {
    Ok(
        sqlx::query_scalar("SELECT body FROM scenarios WHERE estate_id = $1 AND name = $2")
            .bind(estate)
            .bind(name)
            .fetch_optional(&db.pool)
            .await?,
    )
}

pub async fn put_scenario(
    db: &Db,
    estate: &str,
    name: &str,
    body: &str,
    by: &str,
    now: i64,
) -> StoreResult<()> {
    let _w = db.write_guard().await;
    sqlx::query(
        "INSERT INTO scenarios (estate_id, name, body, updated_at, updated_by) VALUES ($1, $2, $3, $4, $5) \
         ON CONFLICT (estate_id, name) DO UPDATE SET body = excluded.body, updated_at = excluded.updated_at, updated_by = excluded.updated_by",
    )
    .bind(estate)
    .bind(name)
    .bind(body)
    .bind(now)
    .bind(by)
    .execute(&db.pool)
    .await?;
    Ok(())
}

pub async fn delete_scenario(db: &Db, estate: &str, name: &str) -> StoreResult<bool> {
    let _w = db.write_guard().await;
    let done = sqlx::query("DELETE FROM scenarios WHERE estate_id = $1 AND name = $2")
        .bind(estate)
        .bind(name)
        .execute(&db.pool)
        .await?;
    Ok(done.rows_affected() > 0)
}

// ---- reviews and the audit trail -------------------------------------

/// An operator's decision about one recommendation (`docs/reviews.md`).
#[derive(Clone, Debug)]
pub struct ReviewRow {
    pub identity: String,
    /// `planned`, `dismissed` or `snoozed`.
    pub decision: String,
    pub link: String,
    pub reason: String,
    pub until: Option<i64>,
    /// `berth_engine::review::Condition` as JSON, or null.
    pub condition: Option<serde_json::Value>,
    /// `berth_engine::review::Basis` as JSON.
    pub basis: serde_json::Value,
    pub estate_version: i64,
    pub evaluated_at: i64,
    pub decided_by: String,
    pub decided_at: i64,
}

/// One entry of the audit trail: who did what, when, and why.
#[derive(Clone, Debug)]
pub struct AuditEntry {
    pub id: i64,
    pub estate: String,
    pub actor: String,
    pub at: i64,
    pub action: String,
    pub subject: String,
    pub reason: String,
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

async fn insert_audit(tx: &mut Tx, a: &NewAudit<'_>) -> StoreResult<()> {
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
    let rows = sqlx::query(
        "SELECT identity, kind, link, reason, until_at, ask_when, basis, estate_version, \
         evaluated_at, decided_by, decided_at FROM reviews WHERE estate_id = $1 ORDER BY identity",
    )
    .bind(estate)
    .fetch_all(&db.pool)
    .await?;
    let json = |t: String| serde_json::from_str(&t).unwrap_or(serde_json::Value::Null);
    rows.iter()
        .map(|r| {
            Ok(ReviewRow {
                identity: r.try_get("identity")?,
                decision: r.try_get("kind")?,
                link: r.try_get("link")?,
                reason: r.try_get("reason")?,
                until: r.try_get("until_at")?,
                condition: r.try_get::<Option<String>, _>("ask_when")?.map(json),
                basis: json(r.try_get("basis")?),
                estate_version: r.try_get("estate_version")?,
                evaluated_at: r.try_get("evaluated_at")?,
                decided_by: r.try_get("decided_by")?,
                decided_at: r.try_get("decided_at")?,
            })
        })
        .collect()
}

/// The estate's audit trail, newest first.
pub async fn audit(db: &Db, estate: &str, limit: i64) -> StoreResult<Vec<AuditEntry>> {
    let rows = sqlx::query(
        "SELECT id, estate_id, actor, at, action, subject, reason, detail FROM audit \
         WHERE estate_id = $1 ORDER BY id DESC LIMIT $2",
    )
    .bind(estate)
    .bind(limit)
    .fetch_all(&db.pool)
    .await?;
    Ok(rows
        .iter()
        .map(audit_entry_of)
        .collect::<Result<Vec<_>, _>>()?)
}

fn audit_entry_of(r: &sqlx::any::AnyRow) -> Result<AuditEntry, sqlx::Error> {
    let detail: String = r.try_get("detail")?;
    Ok(AuditEntry {
        id: r.try_get("id")?,
        estate: r.try_get("estate_id")?,
        actor: r.try_get("actor")?,
        at: r.try_get("at")?,
        action: r.try_get("action")?,
        subject: r.try_get("subject")?,
        reason: r.try_get("reason")?,
        detail: serde_json::from_str(&detail).unwrap_or(serde_json::Value::Null),
    })
}

// ---- tokens ----------------------------------------------------------

#[derive(Clone, Debug, Serialize)]
pub struct TokenRow {
    pub id: String,
    pub name: String,
    pub role: Role,
    /// Named `estate` in the API, as in the body that creates a token.
    #[serde(rename = "estate")]
    pub estate_id: Option<String>,
    #[serde(serialize_with = "rfc3339")]
    pub created_at: i64,
    pub created_by: String,
    #[serde(serialize_with = "rfc3339_opt")]
    pub revoked_at: Option<i64>,
    /// An agent token that may create its own cluster on first report.
    pub may_create_clusters: bool,
    /// An agent token that may import its cluster's services (the
    /// agent's `--kubernetes` re-sync).
    pub may_sync_services: bool,
    /// An agent token's clusters: every write it makes must concern one
    /// of them (issue 37). `None` for other roles.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub clusters: Option<Vec<String>>,
}

/// A token's stored cluster list (a JSON array of ids): unreadable text
/// scopes it to nothing rather than to everything.
fn clusters_of(text: Option<String>) -> Option<Vec<String>> {
    text.map(|t| {
        let mut c = serde_json::from_str::<Vec<String>>(&t).unwrap_or_default();
        c.sort();
        c.dedup();
        c
    })
}

fn token_of(r: &sqlx::any::AnyRow) -> Result<TokenRow, sqlx::Error> {
    let role: String = r.try_get("role")?;
    Ok(TokenRow {
        id: r.try_get("id")?,
        name: r.try_get("name")?,
        role: Role::parse(&role).unwrap_or(Role::Viewer),
        estate_id: r.try_get("estate_id")?,
        created_at: r.try_get("created_at")?,
        created_by: r.try_get("created_by")?,
        revoked_at: r.try_get("revoked_at")?,
        may_create_clusters: r.try_get::<i64, _>("may_create_clusters")? != 0,
        may_sync_services: r.try_get::<i64, _>("may_sync_services")? != 0,
        clusters: clusters_of(r.try_get("clusters")?),
    })
}

const TOKEN_COLUMNS: &str =
    "id, name, role, estate_id, created_at, created_by, revoked_at, may_create_clusters, may_sync_services, clusters";

/// A live (not revoked) token by the hash of its secret.
pub async fn token_by_hash(db: &Db, hash: &str) -> StoreResult<Option<TokenRow>> {
    let row = sqlx::query(&format!(
        "SELECT {TOKEN_COLUMNS} FROM tokens WHERE hash = $1 AND revoked_at IS NULL"
    ))
    .bind(hash)
    .fetch_optional(&db.pool)
    .await?;
    Ok(row.as_ref().map(token_of).transpose()?)
}

pub async fn list_tokens(db: &Db) -> StoreResult<Vec<TokenRow>> {
    let rows = sqlx::query(&format!(
        "SELECT {TOKEN_COLUMNS} FROM tokens ORDER BY created_at, id"
    ))
    .fetch_all(&db.pool)
    .await?;
    Ok(rows.iter().map(token_of).collect::<Result<_, _>>()?)
}

pub struct NewToken<'a> {
    pub id: &'a str,
    pub hash: &'a str,
    pub name: &'a str,
    pub role: Role,
    pub estate_id: Option<&'a str>,
    pub created_by: &'a str,
    pub may_create_clusters: bool,
    pub may_sync_services: bool,
    /// An agent token's clusters (stored as a JSON array).
    pub clusters: Option<&'a [String]>,
}

pub async fn insert_token(db: &Db, t: NewToken<'_>, now: i64) -> StoreResult<()> {
    let _w = db.write_guard().await;
    sqlx::query(
        "INSERT INTO tokens (id, hash, name, role, estate_id, created_at, created_by, may_create_clusters, may_sync_services, clusters) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)",
    )
    .bind(t.id)
    .bind(t.hash)
    .bind(t.name)
    .bind(t.role.as_str())
    .bind(t.estate_id)
    .bind(now)
    .bind(t.created_by)
    .bind(i64::from(t.may_create_clusters))
    .bind(i64::from(t.may_sync_services))
    .bind(t.clusters.map(|c| serde_json::to_string(c).expect("strings serialise")))
    .execute(&db.pool)
    .await?;
    Ok(())
}

pub async fn revoke_token(db: &Db, id: &str, now: i64) -> StoreResult<bool> {
    let _w = db.write_guard().await;
    let done =
        sqlx::query("UPDATE tokens SET revoked_at = $1 WHERE id = $2 AND revoked_at IS NULL")
            .bind(now)
            .bind(id)
            .execute(&db.pool)
            .await?;
    Ok(done.rows_affected() > 0)
}

/// Make sure the bootstrap administrator exists.
///
/// With `env_token` (BERTH_ADMIN_TOKEN), that token is an admin token:
/// inserted if its hash is new. Without it, a token is generated only if
/// no bootstrap token was ever made; the caller prints it once. The row id
/// `bootstrap` is the primary key, so among replicas starting together
/// exactly one insert wins and only that process prints a token.
pub async fn ensure_bootstrap(
    db: &Db,
    env_token: Option<&str>,
    now: i64,
) -> StoreResult<Option<String>> {
    let _w = db.write_guard().await;
    if let Some(token) = env_token {
        let hash = sha256_hex(token);
        if token_by_hash(db, &hash).await?.is_some() {
            return Ok(None);
        }
        let id = format!("env-{}", &hash[..12]);
        sqlx::query(
            "INSERT INTO tokens (id, hash, name, role, estate_id, created_at, created_by) \
             VALUES ($1, $2, 'bootstrap (BERTH_ADMIN_TOKEN)', 'admin', NULL, $3, 'environment') \
             ON CONFLICT DO NOTHING",
        )
        .bind(&id)
        .bind(&hash)
        .bind(now)
        .execute(&db.pool)
        .await?;
        return Ok(None);
    }
    let token = new_token();
    let done = sqlx::query(
        "INSERT INTO tokens (id, hash, name, role, estate_id, created_at, created_by) \
         VALUES ('bootstrap', $1, 'bootstrap (generated at first start)', 'admin', NULL, $2, 'first start') \
         ON CONFLICT DO NOTHING",
    )
    .bind(sha256_hex(&token))
    .bind(now)
    .execute(&db.pool)
    .await?;
    Ok((done.rows_affected() == 1).then_some(token))
}

// ---- users and sessions ---------------------------------------------

#[derive(Clone, Debug, Serialize)]
pub struct UserRow {
    pub name: String,
    pub role: Role,
    #[serde(serialize_with = "rfc3339")]
    pub created_at: i64,
}

pub async fn list_users(db: &Db) -> StoreResult<Vec<UserRow>> {
    let rows = sqlx::query("SELECT name, role, created_at FROM users ORDER BY name")
        .fetch_all(&db.pool)
        .await?;
    rows.iter()
        .map(|r| {
            let role: String = r.try_get("role")?;
            Ok(UserRow {
                name: r.try_get("name")?,
                role: Role::parse(&role).unwrap_or(Role::Viewer),
                created_at: r.try_get("created_at")?,
            })
        })
        .collect::<Result<_, sqlx::Error>>()
        .map_err(StoreError::from)
}

/// (role, password hash) of a user.
pub async fn user_credentials(db: &Db, name: &str) -> StoreResult<Option<(Role, String)>> {
    let row = sqlx::query("SELECT role, password_hash FROM users WHERE name = $1")
        .bind(name)
        .fetch_optional(&db.pool)
        .await?;
    let Some(r) = row else { return Ok(None) };
    let role: String = r.try_get("role")?;
    Ok(Some((
        Role::parse(&role).unwrap_or(Role::Viewer),
        r.try_get("password_hash")?,
    )))
}

pub async fn insert_user(
    db: &Db,
    name: &str,
    role: Role,
    password_hash: &str,
    now: i64,
) -> StoreResult<()> {
    let _w = db.write_guard().await;
    let exists: Option<String> = sqlx::query_scalar("SELECT name FROM users WHERE name = $1")
        .bind(name)
        .fetch_optional(&db.pool)
        .await?;
    if exists.is_some() {
        return Err(StoreError::Conflict(format!(
            "a user named {name:?} already exists"
        )));
    }
    sqlx::query(
        "INSERT INTO users (name, role, password_hash, created_at) VALUES ($1, $2, $3, $4)",
    )
    .bind(name)
    .bind(role.as_str())
    .bind(password_hash)
    .bind(now)
    .execute(&db.pool)
    .await?;
    Ok(())
}

/// Delete a user and end every session they have, together.
pub async fn delete_user(db: &Db, name: &str) -> StoreResult<bool> {
    let _w = db.write_guard().await;
    let mut tx = db.begin().await?;
    sqlx::query("DELETE FROM sessions WHERE subject = $1")
        .bind(name)
        .execute(&mut *tx)
        .await?;
    let done = sqlx::query("DELETE FROM users WHERE name = $1")
        .bind(name)
        .execute(&mut *tx)
        .await?;
    tx.commit().await?;
    Ok(done.rows_affected() > 0)
}

pub struct SessionRow {
    pub subject: String,
    pub role: Role,
    pub estate_id: Option<String>,
    pub csrf: String,
}

pub async fn session_by_hash(db: &Db, id_hash: &str, now: i64) -> StoreResult<Option<SessionRow>> {
    // A session opened with a token lives only as long as the token.
    let row = sqlx::query(
        "SELECT subject, role, estate_id, csrf FROM sessions s WHERE id_hash = $1 AND expires_at > $2 \
         AND (s.token_id IS NULL OR EXISTS \
              (SELECT 1 FROM tokens t WHERE t.id = s.token_id AND t.revoked_at IS NULL))",
    )
    .bind(id_hash)
    .bind(now)
    .fetch_optional(&db.pool)
    .await?;
    let Some(r) = row else { return Ok(None) };
    let role: String = r.try_get("role")?;
    Ok(Some(SessionRow {
        subject: r.try_get("subject")?,
        role: Role::parse(&role).unwrap_or(Role::Viewer),
        estate_id: r.try_get("estate_id")?,
        csrf: r.try_get("csrf")?,
    }))
}

/// Start a session, ending the one the browser held before (if any) in
/// the same transaction: the session id always changes at sign-in, so a
/// fixated id is worthless. Expired sessions are swept here too.
#[allow(clippy::too_many_arguments)]
pub async fn start_session(
    db: &Db,
    id_hash: &str,
    previous_hash: Option<&str>,
    subject: &str,
    role: Role,
    estate_id: Option<&str>,
    token_id: Option<&str>,
    csrf: &str,
    now: i64,
    ttl_s: i64,
) -> StoreResult<()> {
    let _w = db.write_guard().await;
    let mut tx = db.begin().await?;
    if let Some(prev) = previous_hash {
        sqlx::query("DELETE FROM sessions WHERE id_hash = $1")
            .bind(prev)
            .execute(&mut *tx)
            .await?;
    }
    sqlx::query("DELETE FROM sessions WHERE expires_at <= $1")
        .bind(now)
        .execute(&mut *tx)
        .await?;
    sqlx::query(
        "INSERT INTO sessions (id_hash, subject, role, estate_id, token_id, csrf, created_at, expires_at) \
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8)",
    )
    .bind(id_hash)
    .bind(subject)
    .bind(role.as_str())
    .bind(estate_id)
    .bind(token_id)
    .bind(csrf)
    .bind(now)
    .bind(now + ttl_s)
    .execute(&mut *tx)
    .await?;
    tx.commit().await?;
    Ok(())
}

pub async fn end_session(db: &Db, id_hash: &str) -> StoreResult<()> {
    let _w = db.write_guard().await;
    sqlx::query("DELETE FROM sessions WHERE id_hash = $1")
        .bind(id_hash)
        .execute(&db.pool)
        .await?;
    Ok(())
}

// ---- settings --------------------------------------------------------

/// Set a setting if it was never set; true when this call set it.
pub async fn set_once(db: &Db, key: &str, value: &str) -> StoreResult<bool> {
    let _w = db.write_guard().await;
    let done =
        sqlx::query("INSERT INTO settings (key, value) VALUES ($1, $2) ON CONFLICT DO NOTHING")
            .bind(key)
            .bind(value)
            .execute(&db.pool)
            .await?;
    Ok(done.rows_affected() == 1)
}

// ---- external deciders -------------------------------------------------

/// A registered decider as stored. The sealed secrets stay in here; the
/// API shows what `http::deciders::public` builds from it instead.
#[derive(Clone)]
pub struct DeciderRow {
    pub name: String,
    pub url: String,
    pub timeout_ms: i64,
    pub enabled: bool,
    pub interval_s: Option<i64>,
    pub secret_sealed: Option<String>,
    pub secret_fingerprint: Option<String>,
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

fn decider_of(r: &sqlx::any::AnyRow) -> Result<DeciderRow, sqlx::Error> {
    let enabled: i64 = r.try_get("enabled")?;
    Ok(DeciderRow {
        name: r.try_get("name")?,
        url: r.try_get("url")?,
        timeout_ms: r.try_get("timeout_ms")?,
        enabled: enabled != 0,
        interval_s: r.try_get("interval_s")?,
        secret_sealed: r.try_get("secret_ciphertext")?,
        secret_fingerprint: r.try_get("secret_fingerprint")?,
        previous_sealed: r.try_get("previous_ciphertext")?,
        previous_fingerprint: r.try_get("previous_fingerprint")?,
        previous_expires_at: r.try_get("previous_expires_at")?,
        created_at: r.try_get("created_at")?,
        updated_at: r.try_get("updated_at")?,
    })
}

pub async fn list_deciders(db: &Db) -> StoreResult<Vec<DeciderRow>> {
    let rows = sqlx::query(&format!(
        "SELECT {DECIDER_COLUMNS} FROM deciders ORDER BY name"
    ))
    .fetch_all(&db.pool)
    .await?;
    Ok(rows.iter().map(decider_of).collect::<Result<_, _>>()?)
}

pub async fn decider(db: &Db, name: &str) -> StoreResult<Option<DeciderRow>> {
    let row = sqlx::query(&format!(
        "SELECT {DECIDER_COLUMNS} FROM deciders WHERE name = $1"
    ))
    .bind(name)
    .fetch_optional(&db.pool)
    .await?;
    Ok(row.as_ref().map(decider_of).transpose()?)
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
    let _w = db.write_guard().await;
    let done = sqlx::query("DELETE FROM deciders WHERE name = $1")
        .bind(name)
        .execute(&db.pool)
        .await?;
    Ok(done.rows_affected() > 0)
}

// ---- decider runs and advice snapshots ---------------------------------

/// One stored run of an external decider.
#[derive(Clone, Debug, Serialize)]
pub struct DeciderRun {
    pub id: i64,
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

fn run_of(r: &sqlx::any::AnyRow) -> Result<DeciderRun, sqlx::Error> {
    let entry: String = r.try_get("entry")?;
    Ok(DeciderRun {
        id: r.try_get("id")?,
        estate: r.try_get("estate_id")?,
        decider: r.try_get("decider")?,
        estate_version: r.try_get("estate_version")?,
        content_digest: r.try_get("content_digest")?,
        policy_digest: r.try_get("policy_digest")?,
        outcome: r.try_get("outcome")?,
        started_by: r.try_get("started_by")?,
        started_at: r.try_get("started_at")?,
        run_time_ms: r.try_get("run_time_ms")?,
        entry: serde_json::from_str(&entry).unwrap_or(serde_json::Value::Null),
    })
}

/// One run, by the id [`insert_run`] returned.
pub async fn run_by_id(db: &Db, id: i64) -> StoreResult<Option<DeciderRun>> {
    let row = sqlx::query(&format!(
        "SELECT {RUN_COLUMNS} FROM decider_runs WHERE id = $1"
    ))
    .bind(id)
    .fetch_optional(&db.pool)
    .await?;
    Ok(row.as_ref().map(run_of).transpose()?)
}

/// Newest first, at most `limit`, optionally for one decider.
pub async fn list_runs(
    db: &Db,
    estate: &str,
    decider: Option<&str>,
    limit: i64,
) -> StoreResult<Vec<DeciderRun>> {
    let rows = sqlx::query(&format!(
        "SELECT {RUN_COLUMNS} FROM decider_runs \
         WHERE estate_id = $1 AND ($2 IS NULL OR decider = $2) ORDER BY started_at DESC, id DESC LIMIT $3"
    ))
    .bind(estate)
    .bind(decider)
    .bind(limit)
    .fetch_all(&db.pool)
    .await?;
    Ok(rows.iter().map(run_of).collect::<Result<_, _>>()?)
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

#[derive(Clone, Debug, Serialize)]
pub struct AdviceSnapshot {
    pub id: i64,
    pub estate: String,
    pub estate_version: i64,
    pub content_digest: String,
    pub policy_digest: String,
    #[serde(serialize_with = "rfc3339")]
    pub evaluated_at: i64,
    pub moves: i64,
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
    let rows = sqlx::query(&format!(
        "SELECT id, estate_id, estate_version, content_digest, policy_digest, evaluated_at, moves, {result_col} \
         FROM advice_snapshots WHERE estate_id = $1 ORDER BY evaluated_at DESC, id DESC LIMIT $2"
    ))
    .bind(estate)
    .bind(limit)
    .fetch_all(&db.pool)
    .await?;
    let mut out = Vec::with_capacity(rows.len());
    for r in &rows {
        let result: String = r.try_get("result")?;
        out.push(AdviceSnapshot {
            id: r.try_get("id")?,
            estate: r.try_get("estate_id")?,
            estate_version: r.try_get("estate_version")?,
            content_digest: r.try_get("content_digest")?,
            policy_digest: r.try_get("policy_digest")?,
            evaluated_at: r.try_get("evaluated_at")?,
            moves: r.try_get("moves")?,
            result: serde_json::from_str(&result).unwrap_or(serde_json::Value::Null),
        });
    }
    Ok(out)
}

/// The `limit` newest snapshots of an estate with their advice text, for
/// the history series (`berth_engine::history`), newest first.
pub async fn history_snapshots(
    db: &Db,
    estate: &str,
    limit: i64,
) -> StoreResult<Vec<berth_engine::history::Snapshot>> {
    let rows = sqlx::query(
        "SELECT id, estate_version, policy_digest, evaluated_at, result \
         FROM advice_snapshots WHERE estate_id = $1 ORDER BY evaluated_at DESC, id DESC LIMIT $2",
    )
    .bind(estate)
    .bind(limit)
    .fetch_all(&db.pool)
    .await?;
    let mut out = Vec::with_capacity(rows.len());
    for r in &rows {
        out.push(berth_engine::history::Snapshot {
            id: r.try_get("id")?,
            estate_version: r.try_get("estate_version")?,
            policy_digest: r.try_get("policy_digest")?,
            evaluated_at: r.try_get("evaluated_at")?,
            result: r.try_get("result")?,
        });
    }
    Ok(out)
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

// ---- the advice driver ---------------------------------------------------

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

// ---- notification channels and deliveries ----------------------------------

/// A notification channel as stored. The sealed secret stays in here; the
/// API shows what `http::notify::public` builds from it instead.
#[derive(Clone)]
pub struct ChannelRow {
    pub name: String,
    /// `webhook`, `slack` or `teams`.
    pub kind: String,
    pub url: String,
    pub min_gain: f64,
    /// A confidence class name (`measured` … `guessed`).
    pub min_confidence: String,
    pub enabled: bool,
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

fn channel_of(r: &sqlx::any::AnyRow) -> Result<ChannelRow, sqlx::Error> {
    let enabled: i64 = r.try_get("enabled")?;
    Ok(ChannelRow {
        name: r.try_get("name")?,
        kind: r.try_get("kind")?,
        url: r.try_get("url")?,
        min_gain: r.try_get("min_gain")?,
        min_confidence: r.try_get("min_confidence")?,
        enabled: enabled != 0,
        secret_sealed: r.try_get("secret_ciphertext")?,
        secret_fingerprint: r.try_get("secret_fingerprint")?,
        created_at: r.try_get("created_at")?,
        updated_at: r.try_get("updated_at")?,
    })
}

pub async fn list_channels(db: &Db) -> StoreResult<Vec<ChannelRow>> {
    let rows = sqlx::query(&format!(
        "SELECT {CHANNEL_COLUMNS} FROM notification_channels ORDER BY name"
    ))
    .fetch_all(&db.pool)
    .await?;
    Ok(rows.iter().map(channel_of).collect::<Result<_, _>>()?)
}

pub async fn channel(db: &Db, name: &str) -> StoreResult<Option<ChannelRow>> {
    let row = sqlx::query(&format!(
        "SELECT {CHANNEL_COLUMNS} FROM notification_channels WHERE name = $1"
    ))
    .bind(name)
    .fetch_optional(&db.pool)
    .await?;
    Ok(row.as_ref().map(channel_of).transpose()?)
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
    let _w = db.write_guard().await;
    let done = sqlx::query("DELETE FROM notification_channels WHERE name = $1")
        .bind(name)
        .execute(&db.pool)
        .await?;
    Ok(done.rows_affected() > 0)
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
        let done = sqlx::query(
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
    let done = sqlx::query(
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
    .execute(&db.pool)
    .await?;
    Ok(done.rows_affected() as usize)
}

/// A delivery as stored (its body only in [`DueDelivery`]).
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct Delivery {
    pub id: i64,
    pub channel: String,
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

fn delivery_of(r: &sqlx::any::AnyRow) -> Result<Delivery, sqlx::Error> {
    Ok(Delivery {
        id: r.try_get("id")?,
        channel: r.try_get("channel")?,
        estate: r.try_get("estate_id")?,
        identity: r.try_get("identity")?,
        estate_version: r.try_get("estate_version")?,
        message_id: r.try_get("message_id")?,
        status: r.try_get("status")?,
        attempts: r.try_get("attempts")?,
        created_at: r.try_get("created_at")?,
        next_attempt_at: r.try_get("next_attempt_at")?,
        last_attempt_at: r.try_get("last_attempt_at")?,
        last_status: r.try_get("last_status")?,
        last_error: r.try_get("last_error")?,
        delivered_at: r.try_get("delivered_at")?,
    })
}

/// Newest first, at most `limit`, optionally of one channel or status.
pub async fn list_deliveries(
    db: &Db,
    channel: Option<&str>,
    status: Option<&str>,
    limit: i64,
) -> StoreResult<Vec<Delivery>> {
    let rows = sqlx::query(&format!(
        "SELECT {DELIVERY_COLUMNS} FROM notification_deliveries \
         WHERE ($1 IS NULL OR channel = $1) AND ($2 IS NULL OR status = $2) \
         ORDER BY created_at DESC, id DESC LIMIT $3"
    ))
    .bind(channel)
    .bind(status)
    .bind(limit)
    .fetch_all(&db.pool)
    .await?;
    Ok(rows.iter().map(delivery_of).collect::<Result<_, _>>()?)
}

/// A pending delivery whose time has come, with what it sends.
#[derive(Clone, Debug)]
pub struct DueDelivery {
    pub delivery: Delivery,
    pub body: String,
}

/// Pending deliveries due at `now`, the longest waiting first, at most
/// `limit`.
pub async fn due_deliveries(db: &Db, now: i64, limit: i64) -> StoreResult<Vec<DueDelivery>> {
    let rows = sqlx::query(&format!(
        "SELECT {DELIVERY_COLUMNS}, body FROM notification_deliveries \
         WHERE status = 'pending' AND next_attempt_at <= $1 ORDER BY next_attempt_at, id LIMIT $2"
    ))
    .bind(now)
    .bind(limit)
    .fetch_all(&db.pool)
    .await?;
    let mut out = Vec::with_capacity(rows.len());
    for r in &rows {
        out.push(DueDelivery {
            delivery: delivery_of(r)?,
            body: r.try_get("body")?,
        });
    }
    Ok(out)
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

// ---- applied moves (docs/outcomes.md) ---------------------------------

/// Record the moves a write makes (services `after` puts on another
/// cluster than `before`), in the write's transaction, each attributed to
/// what Berth had said of it when it happened (`moves.rs`): the newest
/// advice snapshot within the lookback that recommended it, else a
/// planned review of it, else the newest what-if saved within the
/// lookback that contained it, else nothing. Nothing is written when nothing
/// moved.
async fn record_moves(
    tx: &mut Tx,
    meta: &EstateMeta,
    (before, policy): (&str, &str),
    after: &str,
    now: i64,
    noticed_by: &str,
) -> StoreResult<()> {
    let moved = moves::moved_services(before, after);
    if moved.is_empty() {
        return Ok(());
    }
    let move_id: i64 = sqlx::query_scalar(
        "INSERT INTO estate_moves (estate_id, estate_version, moved_at, noticed_by, before_document) \
         VALUES ($1, $2, $3, $4, $5) RETURNING id",
    )
    .bind(&meta.id)
    .bind(meta.version)
    .bind(now)
    .bind(noticed_by)
    .bind(before)
    .fetch_one(&mut **tx)
    .await?;
    let snapshots = sqlx::query(
        "SELECT id, evaluated_at, result FROM advice_snapshots \
         WHERE estate_id = $1 AND evaluated_at >= $2 AND evaluated_at <= $3 \
         ORDER BY evaluated_at DESC, id DESC",
    )
    .bind(&meta.id)
    .bind(now.saturating_sub(moves::lookback_s(policy)))
    .bind(now)
    .fetch_all(&mut **tx)
    .await?;
    // Saved what-ifs within the lookback (by when they were saved), the
    // newest first; each is run on the estate before the write only for a
    // move neither the advice nor a planned review accounts for.
    let scenarios: Vec<(String, String, i64)> = sqlx::query(
        "SELECT name, body, updated_at FROM scenarios \
         WHERE estate_id = $1 AND updated_at >= $2 AND updated_at <= $3 \
         ORDER BY updated_at DESC, name",
    )
    .bind(&meta.id)
    .bind(now.saturating_sub(moves::lookback_s(policy)))
    .bind(now)
    .fetch_all(&mut **tx)
    .await?
    .iter()
    .map(|r| {
        Ok((
            r.try_get("name")?,
            r.try_get("body")?,
            r.try_get("updated_at")?,
        ))
    })
    .collect::<Result<_, sqlx::Error>>()?;
    let mut whatifs = moves::WhatIfs::new(before, policy, now, &scenarios);
    let reviews: Vec<(String, String)> =
        sqlx::query("SELECT identity, kind FROM reviews WHERE estate_id = $1 ORDER BY identity")
            .bind(&meta.id)
            .fetch_all(&mut **tx)
            .await?
            .iter()
            .map(|r| Ok((r.try_get("identity")?, r.try_get("kind")?)))
            .collect::<Result<_, sqlx::Error>>()?;
    for m in &moved {
        let mut advised = None;
        for r in &snapshots {
            let result: String = r.try_get("result")?;
            if let Some(a) = moves::advised_in(&result, m) {
                advised = Some((
                    r.try_get::<i64, _>("id")?,
                    r.try_get::<i64, _>("evaluated_at")?,
                    a,
                ));
                break;
            }
        }
        let mut scenario = None;
        let (basis, identity, snapshot, advised_at, prediction) = match advised {
            Some((id, at, a)) => (
                "advised",
                a.identity,
                Some(id),
                Some(at),
                Some(a.prediction.to_string()),
            ),
            None => match moves::planned_in(&reviews, m) {
                Some(identity) => ("planned", identity.to_string(), None, None, None),
                None => match whatifs.containing(m) {
                    Some(w) => {
                        scenario = Some(w.name);
                        (
                            moves::BASIS_WHATIF,
                            moves::own_identity(m),
                            None,
                            Some(w.saved_at),
                            Some(w.prediction),
                        )
                    }
                    None => ("unadvised", moves::own_identity(m), None, None, None),
                },
            },
        };
        sqlx::query(
            "INSERT INTO move_events (move_id, estate_id, service, from_cluster, to_cluster, \
             basis, identity, snapshot_id, advised_at, prediction, scenario) \
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)",
        )
        .bind(move_id)
        .bind(&meta.id)
        .bind(&m.service)
        .bind(&m.from)
        .bind(&m.to)
        .bind(basis)
        .bind(&identity)
        .bind(snapshot)
        .bind(advised_at)
        .bind(prediction)
        .bind(scenario)
        .execute(&mut **tx)
        .await?;
    }
    Ok(())
}

/// One recorded move of one service, with its write and what Berth had
/// said of it.
#[derive(Clone, Debug)]
pub struct MoveEvent {
    pub id: i64,
    pub move_id: i64,
    pub service: String,
    pub from: String,
    pub to: String,
    pub moved_at: i64,
    pub estate_version: i64,
    pub noticed_by: String,
    /// `advised`, `planned`, `whatif` or `unadvised`.
    pub basis: String,
    pub identity: String,
    pub snapshot_id: Option<i64>,
    /// When the advice was made, or the what-if saved.
    pub advised_at: Option<i64>,
    /// The saved what-if's name, for basis `whatif`.
    pub scenario: Option<String>,
    /// JSON text of the advised step's (or the what-if's) prediction.
    pub prediction: Option<String>,
}

/// An estate's move events, oldest first.
pub async fn move_events(db: &Db, estate: &str) -> StoreResult<Vec<MoveEvent>> {
    let rows = sqlx::query(
        "SELECT e.id, e.move_id, e.service, e.from_cluster, e.to_cluster, m.moved_at, m.estate_version, \
         m.noticed_by, e.basis, e.identity, e.snapshot_id, e.advised_at, e.prediction, e.scenario \
         FROM move_events e JOIN estate_moves m ON m.id = e.move_id \
         WHERE e.estate_id = $1 ORDER BY e.id",
    )
    .bind(estate)
    .fetch_all(&db.pool)
    .await?;
    rows.iter()
        .map(|r| {
            Ok(MoveEvent {
                id: r.try_get("id")?,
                move_id: r.try_get("move_id")?,
                service: r.try_get("service")?,
                from: r.try_get("from_cluster")?,
                to: r.try_get("to_cluster")?,
                moved_at: r.try_get("moved_at")?,
                estate_version: r.try_get("estate_version")?,
                noticed_by: r.try_get("noticed_by")?,
                basis: r.try_get("basis")?,
                identity: r.try_get("identity")?,
                snapshot_id: r.try_get("snapshot_id")?,
                advised_at: r.try_get("advised_at")?,
                scenario: r.try_get("scenario")?,
                prediction: r.try_get("prediction")?,
            })
        })
        .collect()
}

/// The estate document just before the write `move_id` made.
pub async fn move_before_document(db: &Db, move_id: i64) -> StoreResult<Option<String>> {
    Ok(
        sqlx::query_scalar("SELECT before_document FROM estate_moves WHERE id = $1")
            .bind(move_id)
            .fetch_optional(&db.pool)
            .await?,
    )
}

// ---- estate health --------------------------------------------------

/// What one submitter's observation batches amount to in an estate.
#[derive(Clone, Debug, PartialEq, Eq)]
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
    let rows = sqlx::query(
        "SELECT submitter, COUNT(*) AS batches, CAST(SUM(applied) AS BIGINT) AS observations, MAX(received_at) AS last_at \
         FROM observation_batches WHERE estate_id = $1 GROUP BY submitter ORDER BY submitter",
    )
    .bind(estate)
    .fetch_all(&db.pool)
    .await?;
    rows.iter()
        .map(|r| {
            Ok(SubmitterBatches {
                submitter: r.try_get("submitter")?,
                batches: r.try_get("batches")?,
                observations: r.try_get::<Option<i64>, _>("observations")?.unwrap_or(0),
                last_at: r.try_get("last_at")?,
            })
        })
        .collect()
}

/// A probe address with who registered it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ProbeRow {
    pub cluster: String,
    pub address: String,
    pub submitter: String,
    pub updated_at: i64,
}

/// Every probe address registered for `estate`, by cluster.
pub async fn probes_of(db: &Db, estate: &str) -> StoreResult<Vec<ProbeRow>> {
    let rows = sqlx::query(
        "SELECT cluster, address, submitter, updated_at FROM agent_probes \
         WHERE estate_id = $1 ORDER BY cluster",
    )
    .bind(estate)
    .fetch_all(&db.pool)
    .await?;
    rows.iter()
        .map(|r| {
            Ok(ProbeRow {
                cluster: r.try_get("cluster")?,
                address: r.try_get("address")?,
                submitter: r.try_get("submitter")?,
                updated_at: r.try_get("updated_at")?,
            })
        })
        .collect()
}

/// The estate's writes in the audit trail (`estate.*` and `facts.*`
/// actions: uploads, imports, re-syncs, fact updates), newest first.
pub async fn estate_writes(db: &Db, estate: &str, limit: i64) -> StoreResult<Vec<AuditEntry>> {
    let rows = sqlx::query(
        "SELECT id, estate_id, actor, at, action, subject, reason, detail FROM audit \
         WHERE estate_id = $1 AND (action LIKE 'estate.%' OR action LIKE 'facts.%') \
         ORDER BY id DESC LIMIT $2",
    )
    .bind(estate)
    .bind(limit)
    .fetch_all(&db.pool)
    .await?;
    Ok(rows
        .iter()
        .map(audit_entry_of)
        .collect::<Result<Vec<_>, _>>()?)
}
