//! Proven gaps (issue 33, `docs/advice.md` §6b): after the driver stores
//! an advice snapshot, the optimum within the move cap is proven in the
//! background by `berth-solver` (HiGHS) on the same estate, policy and
//! evaluation time, within a time budget, and stored beside the snapshot
//! (`advice_proofs`). The advice answer carries the newest proof of the
//! estate's current version and policy (`berth_api::AdviceProof`), so the
//! page can say "within 2.8 % of the best possible within 40 moves
//! (proven)" instead of the engine's bound. A solve that stops before a
//! proof stores nothing: the bound stands.

use std::sync::Arc;

use crate::db::Db;
use crate::store::StoreResult;

/// Wall-clock seconds HiGHS may take per snapshot by default. The sample
/// estate (56 movable services) needs 8–16 s on a loaded 2-core machine,
/// issue 18's medium estates 0.1–2.3 s; 60 s proves all of them with room
/// on a machine busy with other work. The CPU stays bounded: proofs run
/// one at a time, once per estate version and policy, and a snapshot
/// whose estate has moved on by its turn is skipped.
pub const DEFAULT_BUDGET_S: f64 = 60.0;

/// One at a time in a process: a proof takes a core for up to its budget,
/// and the server's requests need the others. Shared by every server in
/// the process on purpose (they share the cores too).
static PROVING: tokio::sync::Semaphore = tokio::sync::Semaphore::const_new(1);

/// A stored proof.
#[derive(Clone, Debug, PartialEq, sqlx::FromRow)]
pub struct Proof {
    pub snapshot_id: i64,
    pub estate_version: i64,
    pub policy_digest: String,
    pub evaluated_at: i64,
    pub computed_at: i64,
    pub max_moves: i64,
    pub cost_before: f64,
    pub advice_cost: f64,
    pub optimum_cost: f64,
    pub solve_ms: i64,
}

impl Proof {
    /// As the API carries it.
    pub fn to_api(&self) -> berth_api::AdviceProof {
        let best = self.cost_before - self.optimum_cost;
        let advised = self.cost_before - self.advice_cost;
        // Nothing to gain: the advice is the best possible.
        let missed = if best > berth_engine::bound::NOTHING_TO_GAIN {
            (1.0 - advised / best).clamp(0.0, 1.0)
        } else {
            0.0
        };
        berth_api::AdviceProof {
            estate_version: self.estate_version,
            evaluated_at: berth_engine::estate::format_time(self.evaluated_at),
            computed_at: berth_engine::estate::format_time(self.computed_at),
            max_moves: self.max_moves,
            cost_before: self.cost_before,
            advice_cost: self.advice_cost,
            optimum_cost: self.optimum_cost,
            missed,
            solve_ms: self.solve_ms,
        }
    }
}

/// Store a proof of snapshot `snapshot_id`.
pub async fn insert(db: &Db, p: &Proof, estate: &str) -> StoreResult<()> {
    let _w = db.write_guard().await;
    sqlx::query(
        "INSERT INTO advice_proofs (snapshot_id, estate_id, estate_version, policy_digest, evaluated_at, \
         computed_at, max_moves, cost_before, advice_cost, optimum_cost, solve_ms) \
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)",
    )
    .bind(p.snapshot_id)
    .bind(estate)
    .bind(p.estate_version)
    .bind(&p.policy_digest)
    .bind(p.evaluated_at)
    .bind(p.computed_at)
    .bind(p.max_moves)
    .bind(p.cost_before)
    .bind(p.advice_cost)
    .bind(p.optimum_cost)
    .bind(p.solve_ms)
    .execute(&db.pool)
    .await?;
    Ok(())
}

/// The newest proof of `estate` at `version` under `policy_digest`.
pub async fn newest(
    db: &Db,
    estate: &str,
    version: i64,
    policy_digest: &str,
) -> StoreResult<Option<Proof>> {
    Ok(sqlx::query_as(
        "SELECT snapshot_id, estate_version, policy_digest, evaluated_at, computed_at, max_moves, \
         cost_before, advice_cost, optimum_cost, solve_ms FROM advice_proofs \
         WHERE estate_id = $1 AND estate_version = $2 AND policy_digest = $3 \
         ORDER BY evaluated_at DESC, snapshot_id DESC LIMIT 1",
    )
    .bind(estate)
    .bind(version)
    .bind(policy_digest)
    .fetch_optional(&db.pool)
    .await?)
}

/// The id of the snapshot the driver just stored for (estate, version,
/// policy, evaluation time): the newest such row.
async fn snapshot_id(
    db: &Db,
    estate: &str,
    version: i64,
    policy_digest: &str,
    evaluated_at: i64,
) -> StoreResult<Option<i64>> {
    Ok(sqlx::query_scalar(
        "SELECT MAX(id) FROM advice_snapshots \
         WHERE estate_id = $1 AND estate_version = $2 AND policy_digest = $3 AND evaluated_at = $4",
    )
    .bind(estate)
    .bind(version)
    .bind(policy_digest)
    .bind(evaluated_at)
    .fetch_one(&db.pool)
    .await?)
}

/// Whether `job` still needs a proof by its turn: its version is the
/// estate's newest snapshot's, and no proof of that version and policy
/// is stored yet.
async fn worth_proving(db: &Db, job: &Job) -> StoreResult<bool> {
    let newest_version: Option<i64> =
        sqlx::query_scalar("SELECT MAX(estate_version) FROM advice_snapshots WHERE estate_id = $1")
            .bind(&job.estate_id)
            .fetch_one(&db.pool)
            .await?;
    if newest_version.is_some_and(|v| v > job.estate_version) {
        return Ok(false);
    }
    Ok(
        newest(db, &job.estate_id, job.estate_version, &job.policy_digest)
            .await?
            .is_none(),
    )
}

/// What a proof is computed from: the snapshot's inputs and its advice.
pub struct Job {
    pub estate_id: String,
    pub estate_version: i64,
    pub policy_digest: String,
    pub estate: Arc<berth_engine::Estate>,
    pub policy: berth_engine::Policy,
    pub evaluated_at: i64,
    pub advice: Arc<berth_engine::Advice>,
    pub budget_s: f64,
}

/// Prove the optimum of `job` in the background and store it when proven;
/// the caller does not wait. Failures are logged: the bound stands.
pub fn spawn(db: Db, job: Job) {
    tokio::spawn(async move {
        if let Err(e) = prove(&db, job).await {
            tracing::warn!(error = %e, "advice proof failed");
        }
    });
}

/// [`spawn`]'s work, awaited: `Ok(Some(_))` when a proof was stored,
/// `Ok(None)` when the solver stopped before one (or the snapshot is gone).
pub async fn prove(db: &Db, job: Job) -> Result<Option<Proof>, String> {
    let _turn = PROVING.acquire().await.map_err(|e| e.to_string())?;
    if !worth_proving(db, &job).await.map_err(|e| e.to_string())? {
        return Ok(None);
    }
    let Job {
        estate_id,
        estate_version,
        policy_digest,
        estate,
        policy,
        evaluated_at,
        advice,
        budget_s,
    } = job;
    let out = tokio::task::spawn_blocking(move || {
        let ctx = berth_engine::cost::Ctx::new(&estate, &policy, evaluated_at);
        let out = berth_solver::solve(
            &ctx,
            berth_solver::Limits {
                max_moves: policy.max_moves,
                time_limit_s: budget_s,
            },
        );
        (out, policy.max_moves)
    })
    .await
    .map_err(|e| format!("proof task: {e}"))?;
    let (out, max_moves) = out;
    let out = out.map_err(|e| e.to_string())?;
    if !out.proven() {
        tracing::info!(estate = %estate_id, version = estate_version, status = ?out.status, "advice proof stopped early; the bound stands");
        return Ok(None);
    }
    let Some(snapshot_id) =
        snapshot_id(db, &estate_id, estate_version, &policy_digest, evaluated_at)
            .await
            .map_err(|e| e.to_string())?
    else {
        return Ok(None);
    };
    let advice_cost = advice.totals_before.cost - berth_engine::advise::improvement(&advice);
    let proof = Proof {
        snapshot_id,
        estate_version,
        policy_digest,
        evaluated_at,
        computed_at: chrono::Utc::now().timestamp(),
        max_moves: max_moves.min(i64::MAX as usize) as i64,
        cost_before: out.cost_before,
        // The advice is within the cap, so never below the optimum but for
        // rounding: the optimum is the smaller.
        advice_cost: advice_cost.max(out.cost),
        optimum_cost: out.cost,
        solve_ms: ((out.build_s + out.solve_s) * 1e3).round() as i64,
    };
    insert(db, &proof, &estate_id)
        .await
        .map_err(|e| e.to_string())?;
    Ok(Some(proof))
}
