//! What the registries of named things (deciders, notification
//! channels) share: listing, reading and deleting a row by its name.

use sqlx::any::AnyRow;

use super::StoreResult;
use crate::db::Db;

/// Every row of `table` (its `columns`), by name.
pub(super) async fn list<T>(db: &Db, table: &str, columns: &str) -> StoreResult<Vec<T>>
where
    T: for<'r> sqlx::FromRow<'r, AnyRow> + Send + Unpin,
{
    Ok(
        sqlx::query_as(&format!("SELECT {columns} FROM {table} ORDER BY name"))
            .fetch_all(&db.pool)
            .await?,
    )
}

/// The row of `table` named `name`.
pub(super) async fn get<T>(
    db: &Db,
    table: &str,
    columns: &str,
    name: &str,
) -> StoreResult<Option<T>>
where
    T: for<'r> sqlx::FromRow<'r, AnyRow> + Send + Unpin,
{
    Ok(
        sqlx::query_as(&format!("SELECT {columns} FROM {table} WHERE name = $1"))
            .bind(name)
            .fetch_optional(&db.pool)
            .await?,
    )
}

/// Delete the row of `table` named `name`; `false` when there was none.
pub(super) async fn delete(db: &Db, table: &str, name: &str) -> StoreResult<bool> {
    let _w = db.write_guard().await;
    let done = sqlx::query(&format!("DELETE FROM {table} WHERE name = $1"))
        .bind(name)
        .execute(&db.pool)
        .await?;
    Ok(done.rows_affected() > 0)
}
