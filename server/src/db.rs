//! Connecting to the database: SQLite (embedded, the default) or
//! PostgreSQL (for several replicas), through sqlx's `Any` driver so every
//! query is written once. Queries use `$1`-style placeholders, which both
//! backends accept.

use std::path::Path;
use std::str::FromStr;
use std::sync::Arc;
use std::time::Duration;

use sqlx::any::{AnyConnectOptions, AnyPoolOptions};
use sqlx::{AnyPool, Executor};

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
}

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

    /// Readiness: the database answers and every migration this binary
    /// knows is applied.
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
        Ok(())
    }
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
