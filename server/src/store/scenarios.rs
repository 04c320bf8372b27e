//! Saved what-ifs (scenarios) of an estate.

use super::StoreResult;
use crate::db::Db;

#[derive(Clone, Debug, sqlx::FromRow)]
pub struct ScenarioMeta {
    pub name: String,
    pub updated_at: i64,
    pub updated_by: String,
}

pub async fn list_scenarios(db: &Db, estate: &str) -> StoreResult<Vec<ScenarioMeta>> {
    Ok(sqlx::query_as(
        "SELECT name, updated_at, updated_by FROM scenarios WHERE estate_id = $1 ORDER BY name",
    )
    .bind(estate)
    .fetch_all(&db.pool)
    .await?)
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
