//! Applied moves (docs/outcomes.md): what each write moved, and what
//! Berth had said of it.

use super::row::EstateMeta;
use super::StoreResult;
use crate::db::{Db, Tx};
use crate::moves;

/// Record the moves a write makes (services `after` puts on another
/// cluster than `before`), in the write's transaction, each attributed to
/// what Berth had said of it when it happened (`moves.rs`): the newest
/// advice snapshot within the lookback that recommended it, else a
/// planned review of it, else the newest what-if saved within the
/// lookback that contained it, else nothing. Nothing is written when nothing
/// moved.
pub(super) async fn record_moves(
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
    // (id, evaluated_at, result), in the order of the columns.
    let snapshots: Vec<(i64, i64, String)> = sqlx::query_as(
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
    let scenarios: Vec<(String, String, i64)> = sqlx::query_as(
        "SELECT name, body, updated_at FROM scenarios \
         WHERE estate_id = $1 AND updated_at >= $2 AND updated_at <= $3 \
         ORDER BY updated_at DESC, name",
    )
    .bind(&meta.id)
    .bind(now.saturating_sub(moves::lookback_s(policy)))
    .bind(now)
    .fetch_all(&mut **tx)
    .await?;
    let mut whatifs = moves::WhatIfs::new(before, policy, now, &scenarios);
    let reviews: Vec<(String, String)> =
        sqlx::query_as("SELECT identity, kind FROM reviews WHERE estate_id = $1 ORDER BY identity")
            .bind(&meta.id)
            .fetch_all(&mut **tx)
            .await?;
    for m in &moved {
        let mut advised = None;
        for (id, evaluated_at, result) in &snapshots {
            if let Some(a) = moves::advised_in(result, m) {
                advised = Some((*id, *evaluated_at, a));
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
#[derive(Clone, Debug, sqlx::FromRow)]
pub struct MoveEvent {
    pub id: i64,
    pub move_id: i64,
    pub service: String,
    #[sqlx(rename = "from_cluster")]
    pub from: String,
    #[sqlx(rename = "to_cluster")]
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
    Ok(sqlx::query_as(
        "SELECT e.id, e.move_id, e.service, e.from_cluster, e.to_cluster, m.moved_at, m.estate_version, \
         m.noticed_by, e.basis, e.identity, e.snapshot_id, e.advised_at, e.prediction, e.scenario \
         FROM move_events e JOIN estate_moves m ON m.id = e.move_id \
         WHERE e.estate_id = $1 ORDER BY e.id",
    )
    .bind(estate)
    .fetch_all(&db.pool)
    .await?)
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
