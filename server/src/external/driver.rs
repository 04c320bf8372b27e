//! The advice driver (SPEC §11): keeps advice and external deciders' runs
//! fresh without a person asking.
//!
//! A *subject* is one unit of work: `estate:ID` (the estate's version or
//! policy changed since its newest advice snapshot) or `decider:NAME@ID`
//! (an enabled decider with an interval whose newest run on that estate is
//! older than the interval). The *backlog* is every stale subject, each
//! with the time it became pending.
//!
//! A pass takes the backlog oldest first, grouped by estate (so one
//! estate's document is loaded once per pass), evaluates at most
//! [`DriverConfig::batch`] subjects, each once, and looks at most
//! `batch + overfetch` entries: subjects held back by a backoff are
//! skipped without starving the healthy ones behind them, yet a backlog of
//! nothing but held-back subjects is not walked to its end every pass.
//!
//! A decider that answers 429/503 is *deferred*; any other failure
//! (error status, timeout, refused address, malformed reply) is *failed*.
//! They are counted apart and both backed off per subject, the delay
//! doubling from [`DriverConfig::base_backoff_s`] up to
//! [`DriverConfig::max_backoff_s`] (or longer when the decider's
//! `Retry-After` asks). Backoff rows live in the database, so whichever
//! replica runs the next pass honours them; rows whose subject left the
//! backlog are pruned at every pass.
//!
//! Exactly one replica runs a pass at a time: on PostgreSQL the pass holds
//! a transaction-scoped advisory lock (released by commit, rollback, or
//! the connection dying — never left behind); on SQLite, which a single
//! process owns, an in-process mutex.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use berth_engine::decider;

use super::{notify, Handles, Outcome};
use crate::db::{Backend, Db};
use crate::error::ApiError;
use crate::retry;
use crate::store::{self, Backoff, Pass};

/// Advisory lock key for "a driver pass is running": an arbitrary constant
/// ("berth" in ASCII) that no other part of Berth uses.
const PASS_LOCK_KEY: i64 = 0x0062_6572_7468;

#[derive(Clone, Debug)]
pub struct DriverConfig {
    /// Time between passes.
    pub every: Duration,
    /// Subjects evaluated per pass at most. 16: a pass of 16 estate
    /// evaluations of ~150 ms each on a large estate stays within a few
    /// seconds, so a pass never overlaps the next tick.
    pub batch: usize,
    /// Entries looked at past the batch bound, to skip held-back subjects.
    /// 64: four batches' worth, enough that a run of wedged deciders at the
    /// head of the backlog does not stall the rest.
    pub overfetch: usize,
    /// First backoff delay. 30 s: long enough not to hammer a decider that
    /// is restarting, short enough that a blip clears within a minute.
    pub base_backoff_s: i64,
    /// Backoff ceiling. An hour: a broken decider is retried hourly, so a
    /// fix shows up without anyone clearing state by hand.
    pub max_backoff_s: i64,
    /// This process's name in `driver_passes`.
    pub replica: String,
    /// Advice snapshots older than this are deleted at every pass, except
    /// each estate's newest (`store::prune_snapshots`). Seconds.
    pub history_retention_s: i64,
    /// Seconds the solver may take to prove each snapshot's optimum in the
    /// background (`crate::proofs`); `None`: no proofs. `berth serve`
    /// sets `proofs::DEFAULT_BUDGET_S`; the default is `None` so that
    /// embedders and tests opt in (a proof holds a core for seconds).
    pub proof_budget_s: Option<f64>,
}

/// Days of advice snapshots kept by default (`--history-retention-days`).
/// A week: one whole weekly traffic cycle, and a release or two to see a
/// change's effect across. Under an agent posting every minute the
/// estate's version changes every tick, so the driver makes a snapshot a
/// minute — about 10,000 a week, some 300 MB for an estate of the
/// sample's size (30 KB of advice each; `docs/history.md`). A deployment
/// wanting longer history says so.
pub const DEFAULT_HISTORY_RETENTION_DAYS: u32 = 7;

impl Default for DriverConfig {
    fn default() -> DriverConfig {
        DriverConfig {
            // A minute: advice is about placement, which changes on the
            // scale of deploys, not seconds.
            every: Duration::from_secs(60),
            batch: 16,
            overfetch: 64,
            base_backoff_s: 30,
            max_backoff_s: 3600,
            replica: replica_name(),
            history_retention_s: i64::from(DEFAULT_HISTORY_RETENTION_DAYS) * 86_400,
            proof_budget_s: None,
        }
    }
}

/// `pid-<pid>-<random>`: unique among replicas sharing a database.
pub fn replica_name() -> String {
    let mut r = [0u8; 4];
    getrandom::fill(&mut r).expect("the operating system's random source");
    format!("pid-{}-{}", std::process::id(), hex::encode(r))
}

#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Subject {
    Estate(String),
    Decider { name: String, estate: String },
}

impl Subject {
    pub fn key(&self) -> String {
        match self {
            Subject::Estate(id) => format!("estate:{id}"),
            Subject::Decider { name, estate } => format!("decider:{name}@{estate}"),
        }
    }
    fn estate(&self) -> &str {
        match self {
            Subject::Estate(id) => id,
            Subject::Decider { estate, .. } => estate,
        }
    }
}

/// One stale subject and since when it has been pending (Unix seconds).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Pending {
    pub subject: Subject,
    pub since: i64,
}

/// Every stale subject, in pass order: estates by their oldest pending
/// subject, then within an estate oldest first; ties by key, so the order
/// is the same on every replica.
pub async fn backlog(db: &Db, now: i64) -> Result<Vec<Pending>, ApiError> {
    let estates = store::list_estates(db).await?;
    let snapshots: BTreeMap<String, (i64, String)> = store::last_snapshots(db)
        .await?
        .into_iter()
        .map(|(id, v, p)| (id, (v, p)))
        .collect();
    let runs: BTreeMap<(String, String), i64> = store::last_runs(db)
        .await?
        .into_iter()
        .map(|(e, d, t)| ((e, d), t))
        .collect();
    let deciders: Vec<_> = store::list_deciders(db)
        .await?
        .into_iter()
        .filter(|d| d.enabled && d.interval_s.is_some())
        .collect();
    let mut out = Vec::new();
    for e in &estates {
        let fresh = snapshots
            .get(&e.id)
            .is_some_and(|(v, p)| *v == e.version && *p == e.policy_digest);
        if !fresh {
            out.push(Pending {
                subject: Subject::Estate(e.id.clone()),
                since: e.updated_at,
            });
        }
        for d in &deciders {
            let interval = d.interval_s.expect("filtered");
            let due = match runs.get(&(e.id.clone(), d.name.clone())) {
                // A newest run dated after now was made before the clock
                // stepped back: how long ago is unknown, so it is due now
                // (its run, dated now, is then the newest again). Waiting
                // for the clock to catch up stopped every decider for as
                // long as the step (issue 37).
                Some(last) if *last > now => now,
                Some(last) => last + interval,
                // Never run here: pending since both existed.
                None => d.created_at.max(e.created_at),
            };
            if due <= now {
                out.push(Pending {
                    subject: Subject::Decider {
                        name: d.name.clone(),
                        estate: e.id.clone(),
                    },
                    since: due,
                });
            }
        }
    }
    let mut oldest: BTreeMap<String, i64> = BTreeMap::new();
    for p in &out {
        let o = oldest
            .entry(p.subject.estate().to_string())
            .or_insert(p.since);
        *o = (*o).min(p.since);
    }
    out.sort_by(|a, b| {
        let ka = (
            oldest[a.subject.estate()],
            a.subject.estate(),
            a.since,
            a.subject.key(),
        );
        let kb = (
            oldest[b.subject.estate()],
            b.subject.estate(),
            b.since,
            b.subject.key(),
        );
        ka.cmp(&kb)
    });
    Ok(out)
}

/// The health surface (`GET /api/driver`).
pub use berth_api::{DriverBackoff, DriverHealth as Health, DriverPass as LastPass};

pub async fn health(db: &Db, cfg: Option<&DriverConfig>, now: i64) -> Result<Health, ApiError> {
    let backlog = backlog(db, now).await?;
    let last = store::passes(db, 1).await?.into_iter().next();
    Ok(Health {
        enabled: cfg.is_some(),
        every_s: cfg.map_or(0, |c| c.every.as_secs()),
        last_pass_at: last
            .as_ref()
            .map(|p| berth_engine::estate::format_time(p.finished_ms.div_euclid(1000))),
        last_pass: last.map(|p| LastPass {
            duration_ms: p.finished_ms - p.started_ms,
            replica: p.replica,
            backlog: p.backlog,
            evaluated: p.evaluated,
            deferred: p.deferred,
            failed: p.failed,
            held_back: p.held_back,
        }),
        oldest_pending_age_s: backlog.iter().map(|p| (now - p.since).max(0)).max(),
        backlog: backlog.len() as u64,
        backoffs: store::backoffs(db)
            .await?
            .into_iter()
            .map(|b| DriverBackoff {
                subject: b.subject,
                kind: b.kind,
                attempts: b.attempts,
                until: berth_engine::estate::format_time(b.until_at),
                last_error: b.last_error,
            })
            .collect(),
    })
}

/// The doubling delay after `attempts` consecutive misses (1-based),
/// capped, and never shorter than what the decider asked for.
pub fn backoff_delay(cfg: &DriverConfig, attempts: i64, retry_after: Option<Duration>) -> i64 {
    let ceiling = Duration::from_secs(cfg.max_backoff_s.max(0) as u64);
    retry::Backoff {
        base: Duration::from_secs(cfg.base_backoff_s.max(0) as u64),
        ceiling,
        jitter: false,
        asked_at_most: Some(ceiling),
    }
    .delay_s(attempts, retry_after)
}

/// Run passes every `cfg.every` until `stop` fires.
pub async fn run(
    state: Handles,
    cfg: Arc<DriverConfig>,
    mut stop: tokio::sync::watch::Receiver<bool>,
) {
    let mut tick = tokio::time::interval(cfg.every);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tokio::select! {
            _ = tick.tick() => {}
            _ = stop.changed() => return,
        }
        match pass(&state, &cfg).await {
            Ok(Some(p)) => tracing::info!(
                backlog = p.backlog,
                evaluated = p.evaluated,
                deferred = p.deferred,
                failed = p.failed,
                held_back = p.held_back,
                ms = p.finished_ms - p.started_ms,
                "driver pass"
            ),
            Ok(None) => tracing::debug!("driver pass skipped: another replica is running one"),
            Err(e) => tracing::warn!(error = %e, "driver pass failed"),
        }
    }
}

/// One pass, if no other replica is running one; `None` if one is.
pub async fn pass(state: &Handles, cfg: &DriverConfig) -> Result<Option<Pass>, ApiError> {
    match state.db.backend {
        Backend::Postgres => {
            let mut tx = state.db.pool.begin().await?;
            let (got,): (bool,) = sqlx::query_as("SELECT pg_try_advisory_xact_lock($1)")
                .bind(PASS_LOCK_KEY)
                .fetch_one(&mut *tx)
                .await?;
            if !got {
                return Ok(None);
            }
            let p = pass_locked(state, cfg).await;
            // Commit or not, ending the transaction releases the lock.
            tx.rollback().await?;
            p.map(Some)
        }
        Backend::Sqlite => {
            let Ok(_g) = state.pass_lock.try_lock() else {
                return Ok(None);
            };
            pass_locked(state, cfg).await.map(Some)
        }
    }
}

fn now_ms() -> i64 {
    chrono::Utc::now().timestamp_millis()
}

async fn pass_locked(state: &Handles, cfg: &DriverConfig) -> Result<Pass, ApiError> {
    let started_ms = now_ms();
    let now = started_ms.div_euclid(1000);
    let backlog = backlog(&state.db, now).await?;
    let held: BTreeMap<String, Backoff> = store::backoffs(&state.db)
        .await?
        .into_iter()
        .map(|b| (b.subject.clone(), b))
        .collect();
    // Prune backoff of subjects that are no longer pending.
    let pending: std::collections::BTreeSet<String> =
        backlog.iter().map(|p| p.subject.key()).collect();
    for key in held.keys().filter(|k| !pending.contains(*k)) {
        store::clear_backoff(&state.db, key).await?;
    }
    let mut pass = Pass {
        replica: cfg.replica.clone(),
        started_ms,
        finished_ms: started_ms,
        backlog: backlog.len() as i64,
        evaluated: 0,
        deferred: 0,
        failed: 0,
        held_back: 0,
    };
    let mut chosen: Vec<&Pending> = Vec::new();
    for p in backlog.iter().take(cfg.batch + cfg.overfetch) {
        if chosen.len() == cfg.batch {
            break;
        }
        match held.get(&p.subject.key()) {
            // A hold longer than the longest backoff was set before the
            // clock stepped back: it no longer says when to retry.
            Some(b) if b.until_at > now && b.until_at <= now + cfg.max_backoff_s => {
                pass.held_back += 1
            }
            _ => chosen.push(p),
        }
    }
    // The advice snapshots of this pass, for the notifications after it.
    let mut fresh: BTreeMap<String, notify::Fresh> = BTreeMap::new();
    // Grouped by estate already (backlog order): load each estate once.
    let mut i = 0;
    while i < chosen.len() {
        let estate_id = chosen[i].subject.estate().to_string();
        let group: Vec<&Pending> = chosen[i..]
            .iter()
            .take_while(|p| p.subject.estate() == estate_id)
            .copied()
            .collect();
        i += group.len();
        let loaded = crate::estates::loaded_estate(&state.db, &state.cache, &estate_id).await;
        let (meta, estate, policy) = match loaded {
            Ok(l) => l,
            // Deleted since the backlog was read: nothing to do.
            Err(ApiError::NotFound(_)) => continue,
            Err(e) => {
                for p in &group {
                    pass.failed += 1;
                    miss(state, cfg, p, "failed", &e.to_string(), None, now, &held).await?;
                }
                continue;
            }
        };
        // Deciders due on this estate are called together, so one that
        // hangs until its timeout does not hold up the others of the pass.
        let mut due: Vec<(&Pending, store::DeciderRow)> = Vec::new();
        for p in group {
            match &p.subject {
                Subject::Estate(_) => {
                    let f = snapshot(state, cfg, &meta, &estate, &policy, now).await?;
                    store::clear_backoff(&state.db, &p.subject.key()).await?;
                    pass.evaluated += 1;
                    fresh.insert(meta.id.clone(), f);
                }
                Subject::Decider { name, .. } => {
                    // Deleted since the backlog was read: nothing to do.
                    if let Some(d) = store::decider(&state.db, name).await? {
                        due.push((p, d));
                    }
                }
            }
        }
        if due.is_empty() {
            continue;
        }
        let at = Evaluation {
            meta: &meta,
            estate: &estate,
            policy: &policy,
            now,
        };
        call_due(state, cfg, &at, &due, &held, &mut pass).await?;
    }
    // After this pass's snapshots are in, so an estate's newest — always
    // kept — is the one just written.
    let pruned = store::prune_snapshots(&state.db, now - cfg.history_retention_s).await?;
    if pruned > 0 {
        tracing::info!(
            pruned,
            retention_s = cfg.history_retention_s,
            "advice snapshots pruned"
        );
    }
    // Notifications: what this pass (or an earlier one) found that a
    // channel has not been sent, and retries that are due. A failure here
    // is logged, not the pass's: the snapshots and runs above are kept.
    match notify::after_pass(state, now, &fresh).await {
        Ok(n) if n != notify::Summary::default() => tracing::info!(
            queued = n.queued,
            delivered = n.delivered,
            retrying = n.retrying,
            failed = n.failed,
            "notifications"
        ),
        Ok(_) => {}
        Err(e) => tracing::warn!(error = %e, "notifications after the pass failed"),
    }
    pass.finished_ms = now_ms();
    store::insert_pass(&state.db, &pass).await?;
    Ok(pass)
}

/// The estate a group of the backlog is evaluated on, at the pass's time.
struct Evaluation<'a> {
    meta: &'a store::EstateMeta,
    estate: &'a Arc<berth_engine::Estate>,
    policy: &'a berth_engine::Policy,
    now: i64,
}

/// An estate's advice at `now`, stored as a snapshot; what the
/// notifications after the pass read of it.
async fn snapshot(
    state: &Handles,
    cfg: &DriverConfig,
    meta: &store::EstateMeta,
    estate: &Arc<berth_engine::Estate>,
    policy: &berth_engine::Policy,
    now: i64,
) -> Result<notify::Fresh, ApiError> {
    let (e, pol) = (estate.clone(), policy.clone());
    let advice = tokio::task::spawn_blocking(move || {
        let a = berth_engine::advise(&e, &pol, now);
        let json = serde_json::to_string(&a).expect("serialises");
        (a.moves.len(), json, Arc::new(a))
    })
    .await
    .map_err(|e| ApiError::Internal(format!("advice task: {e}")))?;
    store::insert_snapshot(
        &state.db,
        store::NewSnapshot {
            estate: &meta.id,
            estate_version: meta.version,
            content_digest: &meta.content_digest,
            policy_digest: &meta.policy_digest,
            evaluated_at: now,
            moves: advice.0 as i64,
            result: &advice.1,
        },
    )
    .await?;
    // The proof of this snapshot's optimum, in the background: the pass
    // does not wait for it.
    if let Some(budget_s) = cfg.proof_budget_s {
        crate::proofs::spawn(
            state.db.clone(),
            crate::proofs::Job {
                estate_id: meta.id.clone(),
                estate_version: meta.version,
                policy_digest: meta.policy_digest.clone(),
                estate: estate.clone(),
                policy: policy.clone(),
                evaluated_at: now,
                advice: advice.2.clone(),
                budget_s,
            },
        );
    }
    Ok(notify::Fresh {
        version: meta.version,
        policy_digest: meta.policy_digest.clone(),
        advice: advice.2,
    })
}

/// Call the deciders due on one estate together (so one that hangs until
/// its timeout does not hold up the others), and record each run and its
/// outcome, in backlog order, whatever order the answers came in.
async fn call_due(
    state: &Handles,
    cfg: &DriverConfig,
    at: &Evaluation<'_>,
    due: &[(&Pending, store::DeciderRow)],
    held: &BTreeMap<String, Backoff>,
    pass: &mut Pass,
) -> Result<(), ApiError> {
    let body = super::request_body(at.estate, at.policy, at.now).await?;
    let rows: Vec<store::DeciderRow> = due.iter().map(|(_, d)| d.clone()).collect();
    let done = super::call_all(&state.outbound, &rows, body, at.now).await;
    // Recorded in backlog order, whatever order the answers came in.
    for ((p, d), call) in due.iter().zip(done) {
        let entry = entry_json(at.estate, at.policy, at.now, &call.external).await?;
        store::insert_run(
            &state.db,
            store::NewRun {
                estate: &at.meta.id,
                decider: &d.name,
                estate_version: at.meta.version,
                content_digest: &at.meta.content_digest,
                policy_digest: &at.meta.policy_digest,
                outcome: call.outcome.as_str(),
                started_by: "driver",
                started_at: at.now,
                run_time_ms: call.run_time_ms.round() as i64,
                entry: &entry,
            },
        )
        .await?;
        let message = match &call.external.response {
            Err(e) => e.message.clone(),
            Ok(_) => String::new(),
        };
        match call.outcome {
            Outcome::Ok => {
                store::clear_backoff(&state.db, &p.subject.key()).await?;
                pass.evaluated += 1;
            }
            Outcome::Deferred { retry_after } => {
                pass.deferred += 1;
                miss(
                    state,
                    cfg,
                    p,
                    "deferred",
                    &message,
                    retry_after,
                    at.now,
                    held,
                )
                .await?;
            }
            Outcome::Failed => {
                pass.failed += 1;
                miss(state, cfg, p, "failed", &message, None, at.now, held).await?;
            }
        }
    }
    Ok(())
}

#[allow(clippy::too_many_arguments)]
async fn miss(
    state: &Handles,
    cfg: &DriverConfig,
    p: &Pending,
    kind: &str,
    message: &str,
    retry_after: Option<Duration>,
    now: i64,
    held: &BTreeMap<String, Backoff>,
) -> Result<(), ApiError> {
    let key = p.subject.key();
    let attempts = held.get(&key).map_or(0, |b| b.attempts) + 1;
    store::put_backoff(
        &state.db,
        &Backoff {
            subject: key,
            kind: kind.to_string(),
            attempts,
            until_at: now + backoff_delay(cfg, attempts, retry_after),
            last_error: message.chars().take(500).collect(),
        },
    )
    .await?;
    Ok(())
}

/// The decider's comparison entry (scored by the engine, like every other
/// decider's), as stored in `decider_runs`.
pub async fn entry_json(
    estate: &Arc<berth_engine::Estate>,
    policy: &berth_engine::Policy,
    now: i64,
    external: &decider::External,
) -> Result<String, ApiError> {
    let (e, p, x) = (estate.clone(), policy.clone(), external.clone());
    let started = Instant::now();
    let json = tokio::task::spawn_blocking(move || {
        let entry = decider::DeciderEntry {
            name: x.name.clone(),
            kind: decider::DeciderKind::External,
            run_time_ms: x.run_time_ms,
            error: x.response.as_ref().err().cloned(),
            note: None,
            result: x
                .response
                .as_ref()
                .ok()
                .map(|raw| decider::score(&e, &p, now, raw)),
        };
        serde_json::to_string(&entry).expect("serialises")
    })
    .await
    .map_err(|e| ApiError::Internal(format!("scoring task: {e}")))?;
    tracing::debug!(
        ms = started.elapsed().as_millis() as u64,
        "scored a decider run"
    );
    Ok(json)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backoff_doubles_to_the_ceiling_and_honours_retry_after() {
        let cfg = DriverConfig {
            base_backoff_s: 30,
            max_backoff_s: 3600,
            ..DriverConfig::default()
        };
        let delays: Vec<i64> = (1..=9).map(|a| backoff_delay(&cfg, a, None)).collect();
        assert_eq!(delays, [30, 60, 120, 240, 480, 960, 1920, 3600, 3600]);
        assert_eq!(backoff_delay(&cfg, 1000, None), 3600);
        assert_eq!(backoff_delay(&cfg, 1, Some(Duration::from_secs(300))), 300);
        // A decider cannot push itself beyond the ceiling.
        assert_eq!(
            backoff_delay(&cfg, 1, Some(Duration::from_secs(86400))),
            3600
        );
    }

    #[test]
    fn subject_keys_name_what_they_are() {
        assert_eq!(Subject::Estate("shop".into()).key(), "estate:shop");
        let d = Subject::Decider {
            name: "ranker".into(),
            estate: "shop".into(),
        };
        assert_eq!(d.key(), "decider:ranker@shop");
    }
}
