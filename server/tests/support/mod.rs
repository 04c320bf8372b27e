//! Shared by the server's integration tests: a fresh database per test, on
//! SQLite (a temporary file) or PostgreSQL (a new database on the server at
//! `BERTH_TEST_PG_URL`, default `postgres://127.0.0.1:5432/test`, dropped
//! when the test ends).

#![allow(dead_code)]

use sqlx::Connection;

pub const PG_ADMIN_URL_DEFAULT: &str = "postgres://127.0.0.1:5432/test";

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Backend {
    Sqlite,
    Postgres,
}

/// A database that exists for one test.
pub struct TestDb {
    pub url: String,
    _dir: Option<tempfile::TempDir>,
    pg: Option<(String, String)>,
}

pub fn pg_admin_url() -> String {
    std::env::var("BERTH_TEST_PG_URL").unwrap_or_else(|_| PG_ADMIN_URL_DEFAULT.to_string())
}

fn base_of(url: &str) -> &str {
    // postgres://host:port/db → postgres://host:port
    let after_scheme = url.find("://").map(|i| i + 3).unwrap_or(0);
    match url[after_scheme..].find('/') {
        Some(i) => &url[..after_scheme + i],
        None => url,
    }
}

impl TestDb {
    pub async fn new(backend: Backend) -> TestDb {
        match backend {
            Backend::Sqlite => {
                let dir = tempfile::tempdir().expect("temp dir");
                let url = format!(
                    "sqlite://{}?mode=rwc",
                    dir.path().join("berth.sqlite3").display()
                );
                TestDb {
                    url,
                    _dir: Some(dir),
                    pg: None,
                }
            }
            Backend::Postgres => {
                let admin = pg_admin_url();
                let mut bytes = [0u8; 6];
                getrandom::fill(&mut bytes).unwrap();
                let name = format!("berth_t_{}", hex::encode(bytes));
                let mut conn = sqlx::PgConnection::connect(&admin)
                    .await
                    .unwrap_or_else(|e| {
                        panic!("PostgreSQL at {admin} (set BERTH_TEST_PG_URL; `make test` starts it): {e}")
                    });
                sqlx::query(&format!("CREATE DATABASE {name}"))
                    .execute(&mut conn)
                    .await
                    .expect("create test database");
                conn.close().await.ok();
                TestDb {
                    url: format!("{}/{name}", base_of(&admin)),
                    _dir: None,
                    pg: Some((admin, name)),
                }
            }
        }
    }
}

impl Drop for TestDb {
    fn drop(&mut self) {
        if let Some((admin, name)) = self.pg.take() {
            // Drop may run inside a runtime: do the async work on a thread
            // of its own with its own runtime.
            let _ = std::thread::spawn(move || {
                let rt = tokio::runtime::Builder::new_current_thread()
                    .enable_all()
                    .build()
                    .unwrap();
                rt.block_on(async {
                    if let Ok(mut conn) = sqlx::PgConnection::connect(&admin).await {
                        let _ =
                            sqlx::query(&format!("DROP DATABASE IF EXISTS {name} WITH (FORCE)"))
                                .execute(&mut conn)
                                .await;
                    }
                });
            })
            .join();
        }
    }
}
