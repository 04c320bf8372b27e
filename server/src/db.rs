//! Connecting to the database: SQLite (embedded, the default) or
//! PostgreSQL (for several replicas), through sqlx's `Any` driver so every
//! query is written once. Queries use `$1`-style placeholders, which both
//! backends accept.

use std::path::Path;
use std::str::FromStr;
use std::sync::Arc;
use std::time::{Duration, Instant};

use sqlx::any::{AnyConnectOptions, AnyPoolOptions};
use sqlx::pool::PoolConnection;
use sqlx::{Any, AnyConnection, AnyPool, Connection, Database, Executor, TransactionManager};

/// sqlx's transaction calls for the `Any` driver, used by [`Tx`].
type Tm = <Any as Database>::TransactionManager;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Backend {
    Sqlite,
    Postgres,
}

impl Backend {
    pub fn as_str(self) -> &'static str {
        match self {
            Backend::Sqlite => "sqlite",
            Backend::Postgres => "postgres",
        }
    }
}

/// The pool, which backend it speaks, and (SQLite only) the lock that
/// serialises writers.
///
/// SQLite allows one writer at a time; two deferred transactions that both
/// read and then write can deadlock (SQLITE_BUSY on the lock upgrade, which
/// no busy timeout cures). Only one process may use a SQLite file (several
/// replicas need PostgreSQL), so an in-process mutex around every write
/// transaction removes the problem at its root.
#[derive(Clone)]
pub struct Db {
    pub pool: AnyPool,
    pub backend: Backend,
    write_lock: Arc<tokio::sync::Mutex<()>>,
    /// The last write probe of `/readyz`.
    ready_probe: Arc<tokio::sync::Mutex<Option<Probe>>>,
}

/// When a `/readyz` write probe ran, and its answer.
type Probe = (Instant, Result<(), String>);

/// Held for the length of a write transaction (a no-op guard on
/// PostgreSQL, whose row locks and MVCC do the job).
pub struct WriteGuard<'a> {
    _guard: Option<tokio::sync::MutexGuard<'a, ()>>,
}

static SQLITE_MIGRATIONS: sqlx::migrate::Migrator = sqlx::migrate!("../migrations/sqlite");
static POSTGRES_MIGRATIONS: sqlx::migrate::Migrator = sqlx::migrate!("../migrations/postgres");

#[derive(Debug, thiserror::Error)]
pub enum DbError {
    #[error("database URL {0:?}: expected sqlite:PATH or postgres://…")]
    BadUrl(String),
    #[error("cannot create the data directory {path}: {source}")]
    DataDir {
        path: String,
        source: std::io::Error,
    },
    #[error("cannot connect to the database: {0}")]
    Connect(sqlx::Error),
    #[error("database migration failed: {0}")]
    Migrate(sqlx::migrate::MigrateError),
}

/// The SQLite URL for a data directory, creating the directory.
pub fn sqlite_url_in(data_dir: &Path) -> Result<String, DbError> {
    std::fs::create_dir_all(data_dir).map_err(|source| DbError::DataDir {
        path: data_dir.display().to_string(),
        source,
    })?;
    let file = data_dir.join("berth.sqlite3");
    Ok(format!("sqlite://{}?mode=rwc", file.display()))
}

impl Db {
    /// Connect and bring the schema up to date.
    pub async fn connect(url: &str, max_connections: u32) -> Result<Db, DbError> {
        sqlx::any::install_default_drivers();
        let backend = if url.starts_with("sqlite:") {
            Backend::Sqlite
        } else if url.starts_with("postgres://") || url.starts_with("postgresql://") {
            Backend::Postgres
        } else {
            return Err(DbError::BadUrl(redact(url)));
        };
        let options = AnyConnectOptions::from_str(url).map_err(|_| DbError::BadUrl(redact(url)))?;
        let pool = AnyPoolOptions::new()
            .max_connections(max_connections)
            // A request waits at most this long for a connection before it
            // is answered 503: long enough to ride out a burst, short
            // enough that a dead database shows quickly.
            .acquire_timeout(Duration::from_secs(5))
            // The last guard of "durable or failed": a connection that
            // sqlx still counts inside a transaction never serves another
            // request; it is closed and the pool opens a new one. (Every
            // write transaction is a [`Tx`], which ends its own cleanly or
            // closes its connection; this catches anything else.)
            .after_release(|conn, _meta| Box::pin(async move { Ok(!conn.is_in_transaction()) }))
            .after_connect(move |conn, _meta| {
                Box::pin(async move {
                    if backend == Backend::Sqlite {
                        // WAL: readers never wait for the writer. NORMAL
                        // sync in WAL mode is still atomic and survives a
                        // process crash (the SIGKILL test); only a power
                        // cut may lose the last commits, never corrupt.
                        // busy_timeout covers the (rare) checkpoint lock.
                        conn.execute(
                            "PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL; \
                             PRAGMA foreign_keys = ON; PRAGMA busy_timeout = 5000;",
                        )
                        .await?;
                    }
                    Ok(())
                })
            })
            .connect_with(options)
            .await
            .map_err(DbError::Connect)?;
        let migrator = match backend {
            Backend::Sqlite => &SQLITE_MIGRATIONS,
            Backend::Postgres => &POSTGRES_MIGRATIONS,
        };
        // On PostgreSQL the migrator takes an advisory lock, so replicas
        // starting together apply each migration exactly once.
        migrator.run(&pool).await.map_err(DbError::Migrate)?;
        Ok(Db {
            pool,
            backend,
            write_lock: Arc::new(tokio::sync::Mutex::new(())),
            ready_probe: Arc::new(tokio::sync::Mutex::new(None)),
        })
    }

    pub async fn write_guard(&self) -> WriteGuard<'_> {
        WriteGuard {
            _guard: match self.backend {
                Backend::Sqlite => Some(self.write_lock.lock().await),
                Backend::Postgres => None,
            },
        }
    }

    /// Begin a write transaction (see [`Tx`]).
    pub async fn begin(&self) -> Result<Tx, sqlx::Error> {
        let mut conn = self.pool.acquire().await?;
        match Tm::begin(&mut conn, None).await {
            Ok(()) => Ok(Tx { conn: Some(conn) }),
            Err(e) => {
                discard(conn, "BEGIN failed").await;
                Err(e)
            }
        }
    }

    /// Readiness: the database answers, every migration this binary knows
    /// is applied, and it takes a write — a row of `settings` is rewritten
    /// and committed, so a full disk, a read-only file, a write lock held
    /// by a connection nobody uses or failing commits make the server
    /// unready. A write that does not commit within [`READY_WRITE_WITHIN`]
    /// counts as refused.
    pub async fn ready(&self) -> Result<(), String> {
        let applied: i64 =
            sqlx::query_scalar("SELECT COUNT(*) FROM _sqlx_migrations WHERE success = $1")
                .bind(true)
                .fetch_one(&self.pool)
                .await
                .map_err(|e| format!("database unreachable: {e}"))?;
        let known = match self.backend {
            Backend::Sqlite => SQLITE_MIGRATIONS.iter().count(),
            Backend::Postgres => POSTGRES_MIGRATIONS.iter().count(),
        } as i64;
        if applied < known {
            return Err(format!("{applied} of {known} migrations applied"));
        }
        self.can_write().await
    }

    /// Whether the database takes a write: the answer of the last probe
    /// if it is under [`READY_PROBE_EVERY`] old, else a new probe. Callers
    /// at the same moment share one probe, so a flood of `/readyz`
    /// requests writes at most once a second.
    async fn can_write(&self) -> Result<(), String> {
        let mut last = self.ready_probe.lock().await;
        if let Some((at, answer)) = &*last {
            if at.elapsed() < READY_PROBE_EVERY {
                return answer.clone();
            }
        }
        let answer = self.write_probe().await;
        *last = Some((Instant::now(), answer.clone()));
        answer
    }

    /// One small committed write, as every write is made: under the write
    /// guard, in a [`Tx`]. A guard held by another writer for longer than
    /// [`READY_WRITE_WITHIN`] is a write in progress (a large import),
    /// not a refusal: the probe is skipped. Once it holds the guard, the
    /// write must commit within that time.
    async fn write_probe(&self) -> Result<(), String> {
        let Ok(_w) = tokio::time::timeout(READY_WRITE_WITHIN, self.write_guard()).await else {
            return Ok(());
        };
        let write = async {
            let mut tx = self.begin().await?;
            sqlx::query(
                "INSERT INTO settings (key, value) VALUES ($1, $2) \
                 ON CONFLICT (key) DO UPDATE SET value = excluded.value",
            )
            .bind(READY_PROBE_KEY)
            .bind(chrono::Utc::now().to_rfc3339())
            .execute(&mut *tx)
            .await?;
            tx.commit().await
        };
        match tokio::time::timeout(READY_WRITE_WITHIN, write).await {
            Ok(Ok(())) => Ok(()),
            Ok(Err(e)) => Err(format!("the database refuses writes: {e}")),
            Err(_) => Err(format!(
                "the database took no write within {} s",
                READY_WRITE_WITHIN.as_secs()
            )),
        }
    }
}

/// The `settings` row `/readyz` rewrites to prove the database takes writes.
const READY_PROBE_KEY: &str = "readyz_last_write";
/// How long `/readyz` waits for the write guard, and then for its write.
pub const READY_WRITE_WITHIN: Duration = Duration::from_secs(3);
/// How long a write probe's answer stands for later `/readyz` requests.
pub const READY_PROBE_EVERY: Duration = Duration::from_secs(1);

/// A write transaction that ends committed or rolled back, never left
/// open on a pooled connection.
///
/// sqlx's own `Transaction` hands its connection back to the pool whatever
/// became of the `COMMIT`. When a commit fails the database may already
/// have rolled the transaction back (SQLite does on a full disk); sqlx's
/// rollback then fails and its count of open transactions stays at one,
/// so the next transaction on that connection is only a `SAVEPOINT`, and
/// a failure inside it leaves a real transaction open for good: later
/// writes on that connection answer 200 and are never committed, and
/// writes on every other connection wait for its lock (issue 37). A `Tx`
/// gives its connection back only when it ended cleanly: a commit or
/// rollback that fails closes the connection instead (closing ends any
/// transaction on it), and the pool opens a new one.
///
/// Dropped without [`Tx::commit`] (an error returned early, a request
/// cancelled), it is rolled back on a task of its own, and its connection
/// returns to the pool only if that rollback succeeded.
pub struct Tx {
    conn: Option<PoolConnection<Any>>,
}

impl Tx {
    /// Commit. On failure nothing of the transaction is kept (the
    /// connection is closed, which rolls back whatever the database still
    /// held open) and the error is returned.
    pub async fn commit(mut self) -> Result<(), sqlx::Error> {
        let mut conn = self
            .conn
            .take()
            .expect("a Tx holds its connection until it ends");
        match Tm::commit(&mut conn).await {
            Ok(()) if !conn.is_in_transaction() => Ok(()),
            Ok(()) => {
                discard(conn, "still in a transaction after COMMIT").await;
                Ok(())
            }
            Err(e) => {
                discard(conn, "COMMIT failed").await;
                Err(e)
            }
        }
    }

    /// Roll back now (rather than on drop).
    pub async fn rollback(mut self) -> Result<(), sqlx::Error> {
        let conn = self
            .conn
            .take()
            .expect("a Tx holds its connection until it ends");
        rollback_or_discard(conn).await
    }
}

impl std::ops::Deref for Tx {
    type Target = AnyConnection;
    fn deref(&self) -> &AnyConnection {
        self.conn
            .as_ref()
            .expect("a Tx holds its connection until it ends")
    }
}

impl std::ops::DerefMut for Tx {
    fn deref_mut(&mut self) -> &mut AnyConnection {
        self.conn
            .as_mut()
            .expect("a Tx holds its connection until it ends")
    }
}

impl Drop for Tx {
    fn drop(&mut self) {
        let Some(conn) = self.conn.take() else { return };
        match tokio::runtime::Handle::try_current() {
            Ok(rt) => {
                rt.spawn(async move {
                    let _ = rollback_or_discard(conn).await;
                });
            }
            // No runtime to roll back on (nor to return a connection to
            // the pool with): drop the connection, which ends the
            // transaction just as well.
            Err(_) => drop(conn.detach()),
        }
    }
}

async fn rollback_or_discard(mut conn: PoolConnection<Any>) -> Result<(), sqlx::Error> {
    match Tm::rollback(&mut conn).await {
        Ok(()) if !conn.is_in_transaction() => Ok(()),
        Ok(()) => {
            discard(conn, "still in a transaction after ROLLBACK").await;
            Ok(())
        }
        Err(e) => {
            discard(conn, "ROLLBACK failed").await;
            Err(e)
        }
    }
}

/// Close a connection instead of returning it to the pool (which opens a
/// new one when it needs one).
async fn discard(conn: PoolConnection<Any>, why: &str) {
    tracing::warn!(
        why,
        "closing a database connection whose transaction did not end cleanly"
    );
    let _ = tokio::time::timeout(Duration::from_secs(5), conn.close()).await;
}

/// A database URL fit for an error message or a log line: any password
/// replaced.
pub fn redact(url: &str) -> String {
    match (url.find("://"), url.rfind('@')) {
        (Some(scheme), Some(at)) if at > scheme => {
            let userinfo = &url[scheme + 3..at];
            let user = userinfo.split(':').next().unwrap_or("");
            format!("{}://{user}:***@{}", &url[..scheme], &url[at + 1..])
        }
        _ => url.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn redact_hides_passwords_only() {
        assert_eq!(
            redact("postgres://berth:s3cret@db:5432/berth"),
            "postgres://berth:***@db:5432/berth"
        );
        assert_eq!(
            redact("postgres://127.0.0.1:5432/test"),
            "postgres://127.0.0.1:5432/test"
        );
        assert_eq!(redact("sqlite://x.db"), "sqlite://x.db");
    }
}
