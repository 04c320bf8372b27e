//! Estates: their meta, document and policy.

use super::applied::record_moves;
use super::audit::{insert_audit, NewAudit};
pub use super::row::EstateMeta;
use super::row::META_COLUMNS;
use super::{StoreError, StoreResult};
use crate::clock::now_s;
use crate::db::Db;
use crate::moves;

pub async fn list_estates(db: &Db) -> StoreResult<Vec<EstateMeta>> {
    Ok(
        sqlx::query_as(&format!("SELECT {META_COLUMNS} FROM estates ORDER BY id"))
            .fetch_all(&db.pool)
            .await?,
    )
}

pub async fn estate_meta(db: &Db, id: &str) -> StoreResult<Option<EstateMeta>> {
    Ok(
        sqlx::query_as(&format!("SELECT {META_COLUMNS} FROM estates WHERE id = $1"))
            .bind(id)
            .fetch_optional(&db.pool)
            .await?,
    )
}

/// The estate's document and policy as stored, with its meta.
#[derive(sqlx::FromRow)]
pub struct EstateRow {
    #[sqlx(flatten)]
    pub meta: EstateMeta,
    pub document: String,
    pub policy: String,
}

pub async fn estate_row(db: &Db, id: &str) -> StoreResult<Option<EstateRow>> {
    Ok(sqlx::query_as(&format!(
        "SELECT {META_COLUMNS}, document, policy FROM estates WHERE id = $1"
    ))
    .bind(id)
    .fetch_optional(&db.pool)
    .await?)
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
    let before: Option<(String, String)> =
        sqlx::query_as("SELECT document, policy FROM estates WHERE id = $1 AND version = $2")
            .bind(id)
            .bind(expected_version)
            .fetch_optional(&mut *tx)
            .await?;
    let Some((before, policy)) = before else {
        return Ok(Err(Stale));
    };
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
    let meta: EstateMeta =
        sqlx::query_as(&format!("SELECT {META_COLUMNS} FROM estates WHERE id = $1"))
            .bind(id)
            .fetch_one(&mut *tx)
            .await?;
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
