//! Who may call: API tokens, users and their sessions, and the
//! settings set once.

use serde::Serialize;

use super::row::{ClusterList, Flag, RoleName};
use super::{rfc3339, rfc3339_opt, StoreError, StoreResult};
use crate::db::Db;
use crate::digest::sha256_hex;
use crate::random::new_token;
use crate::role::Role;

// ---- tokens ----------------------------------------------------------

#[derive(Clone, Debug, Serialize, sqlx::FromRow)]
pub struct TokenRow {
    pub id: String,
    pub name: String,
    #[sqlx(try_from = "RoleName")]
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
    #[sqlx(try_from = "Flag")]
    pub may_create_clusters: bool,
    /// An agent token that may import its cluster's services (the
    /// agent's `--kubernetes` re-sync).
    #[sqlx(try_from = "Flag")]
    pub may_sync_services: bool,
    /// An agent token's clusters: every write it makes must concern one
    /// of them (issue 37). `None` for other roles.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[sqlx(try_from = "ClusterList")]
    pub clusters: Option<Vec<String>>,
}

const TOKEN_COLUMNS: &str =
    "id, name, role, estate_id, created_at, created_by, revoked_at, may_create_clusters, may_sync_services, clusters";

/// A live (not revoked) token by the hash of its secret.
pub async fn token_by_hash(db: &Db, hash: &str) -> StoreResult<Option<TokenRow>> {
    Ok(sqlx::query_as(&format!(
        "SELECT {TOKEN_COLUMNS} FROM tokens WHERE hash = $1 AND revoked_at IS NULL"
    ))
    .bind(hash)
    .fetch_optional(&db.pool)
    .await?)
}

pub async fn list_tokens(db: &Db) -> StoreResult<Vec<TokenRow>> {
    Ok(sqlx::query_as(&format!(
        "SELECT {TOKEN_COLUMNS} FROM tokens ORDER BY created_at, id"
    ))
    .fetch_all(&db.pool)
    .await?)
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

#[derive(Clone, Debug, Serialize, sqlx::FromRow)]
pub struct UserRow {
    pub name: String,
    #[sqlx(try_from = "RoleName")]
    pub role: Role,
    #[serde(serialize_with = "rfc3339")]
    pub created_at: i64,
}

pub async fn list_users(db: &Db) -> StoreResult<Vec<UserRow>> {
    Ok(
        sqlx::query_as("SELECT name, role, created_at FROM users ORDER BY name")
            .fetch_all(&db.pool)
            .await?,
    )
}

/// (role, password hash) of a user.
pub async fn user_credentials(db: &Db, name: &str) -> StoreResult<Option<(Role, String)>> {
    let row: Option<(RoleName, String)> =
        sqlx::query_as("SELECT role, password_hash FROM users WHERE name = $1")
            .bind(name)
            .fetch_optional(&db.pool)
            .await?;
    Ok(row.map(|(role, hash)| (Role::from(role), hash)))
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

#[derive(sqlx::FromRow)]
pub struct SessionRow {
    pub subject: String,
    #[sqlx(try_from = "RoleName")]
    pub role: Role,
    pub estate_id: Option<String>,
    pub csrf: String,
}

pub async fn session_by_hash(db: &Db, id_hash: &str, now: i64) -> StoreResult<Option<SessionRow>> {
    // A session opened with a token lives only as long as the token.
    Ok(sqlx::query_as(
        "SELECT subject, role, estate_id, csrf FROM sessions s WHERE id_hash = $1 AND expires_at > $2 \
         AND (s.token_id IS NULL OR EXISTS \
              (SELECT 1 FROM tokens t WHERE t.id = s.token_id AND t.revoked_at IS NULL))",
    )
    .bind(id_hash)
    .bind(now)
    .fetch_optional(&db.pool)
    .await?)
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
