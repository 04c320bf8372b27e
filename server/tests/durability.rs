//! Durable or failed, never in between (issue 37): a write that answers
//! 2xx is in the database after a restart, one that fails is not, and a
//! write that failed in the database leaves no connection behind that
//! answers later writes without committing them.
//!
//! Each test drives a real `berth serve` over HTTP, makes the database
//! refuse writes for a while, lets it take them again, and keeps a ledger
//! of what every write answered. It then kills the server (SIGKILL: only
//! what was committed may survive) and checks the ledger against what a
//! new server reads from the same database.
//!
//! - SQLite: the data directory is a 3 MiB tmpfs the test mounts (this
//!   needs root, as in CI; the test fails, rather than skips, without it).
//!   A 1 MiB ballast file is written first; estates are uploaded until the
//!   disk is full; the ballast is removed to give the space back.
//! - PostgreSQL (`BERTH_TEST_PG_URL`, default `postgres://127.0.0.1:5432/test`):
//!   a deferred constraint trigger the test installs makes every commit
//!   that touched `estates` (or `settings`, which `/readyz` writes) fail
//!   while a switch is on, which is how a commit fails there for real
//!   (a deferred constraint, a serialisation failure, a full disk).

mod support;

use std::io::{Read, Write};
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use reqwest::Method;
use serde_json::Value;

use support::{Backend, TestDb};

const TOKEN: &str = "durability-test-admin-token-0123456789abcdef";
const NOW: &str = "2026-11-30T04:05:00Z";
const SAMPLE: &str = include_str!("../../examples/estates/sample.json");
/// A small pool makes every connection serve many requests, so a
/// connection left in a bad state is met again at once.
const POOL: &str = "2";

// ---- the server process ----------------------------------------------

struct Server {
    label: String,
    child: Child,
    base: String,
    stderr: Arc<Mutex<Vec<u8>>>,
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("a free port")
        .port()
}

impl Server {
    async fn start(label: &str, data_dir: &Path, database_url: Option<&str>) -> Server {
        let port = free_port();
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_berth"));
        cmd.arg("serve")
            .args(["--listen", &format!("127.0.0.1:{port}")])
            .arg("--data-dir")
            .arg(data_dir)
            .args(["--sample-at", NOW, "--max-connections", POOL, "--no-driver"]);
        if let Some(url) = database_url {
            cmd.args(["--database-url", url]);
        }
        for (var, _) in std::env::vars_os() {
            if var.to_string_lossy().starts_with("BERTH_") {
                cmd.env_remove(var);
            }
        }
        cmd.env("BERTH_ADMIN_TOKEN", TOKEN)
            .env("RUST_LOG", "info,sqlx=warn")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped());
        let mut child = cmd.spawn().expect("spawn berth serve");
        let stderr = Arc::new(Mutex::new(Vec::new()));
        let mut pipe = child.stderr.take().unwrap();
        let into = stderr.clone();
        std::thread::spawn(move || {
            let mut buf = [0u8; 8192];
            while let Ok(n) = pipe.read(&mut buf) {
                if n == 0 {
                    break;
                }
                into.lock().unwrap().extend_from_slice(&buf[..n]);
            }
        });
        let mut server = Server {
            label: label.to_string(),
            child,
            base: format!("http://127.0.0.1:{port}"),
            stderr,
        };
        server.wait_ready().await;
        server
    }

    async fn wait_ready(&mut self) {
        let http = client(Duration::from_secs(10));
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            if let Some(status) = self.child.try_wait().expect("try_wait") {
                panic!(
                    "server {} exited before it was ready ({status})",
                    self.label
                );
            }
            if let Ok(r) = http.get(format!("{}/readyz", self.base)).send().await {
                if r.status() == 200 {
                    return;
                }
            }
            assert!(
                Instant::now() < deadline,
                "server {} not ready within a minute",
                self.label
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }

    /// SIGKILL: no chance to flush anything; only commits survive.
    /// Returns what the server wrote to stderr.
    fn kill(mut self) -> String {
        self.child.kill().expect("SIGKILL the server");
        self.child.wait().expect("reap the server");
        std::thread::sleep(Duration::from_millis(100));
        let text = String::from_utf8_lossy(&self.stderr.lock().unwrap()).into_owned();
        text
    }

    fn api(&self) -> Api {
        Api {
            http: client(Duration::from_secs(30)),
            base: self.base.clone(),
        }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        if std::thread::panicking() {
            eprintln!(
                "---- stderr of server {} ----\n{}---- end ----",
                self.label,
                String::from_utf8_lossy(&self.stderr.lock().unwrap())
            );
        }
    }
}

fn client(timeout: Duration) -> reqwest::Client {
    reqwest::Client::builder().timeout(timeout).build().unwrap()
}

#[derive(Clone)]
struct Api {
    http: reqwest::Client,
    base: String,
}

impl Api {
    /// Status and body of one request; a request that gets no answer at
    /// all (timeout, connection closed) is status 0, a failed write.
    async fn call(&self, method: Method, path: &str, body: Option<String>) -> (u16, String) {
        let mut req = self
            .http
            .request(method, format!("{}{path}", self.base))
            .bearer_auth(TOKEN);
        if let Some(b) = body {
            req = req.header("content-type", "application/json").body(b);
        }
        match req.send().await {
            Ok(resp) => {
                let status = resp.status().as_u16();
                (status, resp.text().await.unwrap_or_default())
            }
            Err(e) => (0, e.to_string()),
        }
    }

    async fn get(&self, path: &str) -> Value {
        let (status, text) = self.call(Method::GET, path, None).await;
        assert_eq!(status, 200, "GET {path}: {text}");
        serde_json::from_str(&text).expect("JSON")
    }

    async fn readyz(&self) -> (u16, String) {
        self.call(Method::GET, "/readyz", None).await
    }

    /// The sample estate's policy, and its `max_moves`.
    async fn policy(&self) -> (Value, i64) {
        let p = self.get("/api/estates/sample/policy").await["policy"].clone();
        let m = p["max_moves"].as_i64().expect("max_moves");
        (p, m)
    }
}

// ---- the ledger ------------------------------------------------------

fn ok(status: u16) -> bool {
    (200..300).contains(&status)
}

/// What every write answered, to hold against what the database has.
#[derive(Default)]
struct Ledger {
    /// Estate created: id and status.
    estates: Vec<(String, u16)>,
    /// Policy replaced: the `max_moves` it set and the status.
    policies: Vec<(i64, u16)>,
    /// Every write and its answer, in words, for the report.
    log: Vec<String>,
    /// What went wrong, collected so one run shows all of it.
    problems: Vec<String>,
}

impl Ledger {
    fn expect(&mut self, holds: bool, what: impl FnOnce() -> String) {
        if !holds {
            let what = what();
            eprintln!("PROBLEM: {what}");
            self.problems.push(what);
        }
    }

    /// Panic, with the whole ledger (and the killed server's warnings and
    /// errors), if anything went wrong.
    fn verdict(&self, killed_server_log: &str) {
        eprintln!("ledger:\n  {}", self.log.join("\n  "));
        if !self.problems.is_empty() {
            eprintln!("---- warnings and errors of the server that was killed ----");
            for line in killed_server_log.lines() {
                if (line.contains("WARN") || line.contains("ERROR"))
                    && !line.contains("web application")
                {
                    eprintln!("{line}");
                }
            }
        }
        assert!(
            self.problems.is_empty(),
            "{} problem(s):\n  {}",
            self.problems.len(),
            self.problems.join("\n  ")
        );
    }

    async fn create_estate(&mut self, api: &Api, id: &str) -> u16 {
        let started = Instant::now();
        let (status, text) = api
            .call(
                Method::POST,
                &format!("/api/estates?id={id}"),
                Some(SAMPLE.to_string()),
            )
            .await;
        self.log.push(format!(
            "create {id}: {status} in {:.1} s{}",
            started.elapsed().as_secs_f64(),
            if ok(status) {
                String::new()
            } else {
                format!(" ({})", &text[..text.len().min(120)])
            }
        ));
        self.estates.push((id.to_string(), status));
        status
    }

    async fn put_policy(&mut self, api: &Api, base: &Value, max_moves: i64) -> u16 {
        let mut p = base.clone();
        p["max_moves"] = max_moves.into();
        let started = Instant::now();
        let (status, text) = api
            .call(
                Method::PUT,
                "/api/estates/sample/policy?reason=durability",
                Some(p.to_string()),
            )
            .await;
        if ok(status) {
            let answered: Value = serde_json::from_str(&text).expect("JSON");
            assert_eq!(answered["policy"]["max_moves"], max_moves, "{text}");
        }
        self.log.push(format!(
            "policy max_moves={max_moves}: {status} in {:.1} s{}",
            started.elapsed().as_secs_f64(),
            if ok(status) {
                String::new()
            } else {
                format!(" ({})", &text[..text.len().min(120)])
            }
        ));
        self.policies.push((max_moves, status));
        status
    }

    /// Every 2xx write is there, every failed one is not: estates by id,
    /// the policy by its value and by the audit trail, which holds one
    /// `policy.changed` per policy write that answered 2xx, in order.
    async fn check(&mut self, api: &Api, when: &str, original_max_moves: i64) {
        for (id, status) in self.estates.clone() {
            let (now, _) = api
                .call(Method::GET, &format!("/api/estates/{id}"), None)
                .await;
            let want = if ok(status) { 200 } else { 404 };
            self.expect(now == want, || {
                format!(
                    "{when}: estate {id} answered {status} to its creation, and GET answers {now}"
                )
            });
        }
        let accepted: Vec<i64> = self
            .policies
            .iter()
            .filter(|(_, s)| ok(*s))
            .map(|(m, _)| *m)
            .collect();
        let (_, max_moves) = api.policy().await;
        let want = accepted.last().copied().unwrap_or(original_max_moves);
        self.expect(max_moves == want, || {
            format!("{when}: the policy reads max_moves={max_moves}, the last accepted was {want} (accepted: {accepted:?})")
        });
        let audit = api.get("/api/estates/sample/audit?limit=500").await;
        let mut trail: Vec<i64> = audit["entries"]
            .as_array()
            .expect("entries")
            .iter()
            .filter(|e| e["action"] == "policy.changed")
            .map(|e| {
                e["detail"]["changed"]
                    .as_array()
                    .and_then(|c| c.iter().find(|f| f["field"] == "/max_moves"))
                    .and_then(|f| f["to"].as_i64())
                    // A change that set no max_moves: not one of ours.
                    .unwrap_or(-1)
            })
            .collect();
        // The audit lists the newest first.
        trail.reverse();
        self.expect(trail == accepted, || {
            format!("{when}: the audit has policy changes {trail:?}, the writes that answered 2xx were {accepted:?}")
        });
    }
}

/// `/readyz` reaches `want` within `within`.
async fn readyz_becomes(api: &Api, want: u16, within: Duration) -> (u16, String) {
    let deadline = Instant::now() + within;
    loop {
        let (status, text) = api.readyz().await;
        if status == want || Instant::now() > deadline {
            return (status, text);
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

// ---- SQLite on a full disk -------------------------------------------

/// A tmpfs of `size` mounted on a new temporary directory; unmounted when
/// dropped.
struct Tmpfs {
    dir: tempfile::TempDir,
}

impl Tmpfs {
    fn mount(size: &str) -> Tmpfs {
        let dir = tempfile::tempdir().expect("temp dir");
        let out = Command::new("mount")
            .args([
                "-t",
                "tmpfs",
                "-o",
                &format!("size={size},mode=0700"),
                "tmpfs",
            ])
            .arg(dir.path())
            .output()
            .expect("run mount(8)");
        assert!(
            out.status.success(),
            "this test mounts a {size} tmpfs for the data directory, which needs root \
             (CAP_SYS_ADMIN), as in CI: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        Tmpfs { dir }
    }

    fn path(&self) -> &Path {
        self.dir.path()
    }
}

impl Drop for Tmpfs {
    fn drop(&mut self) {
        let _ = Command::new("umount")
            .arg("-l")
            .arg(self.dir.path())
            .status();
    }
}

/// Write zeros to `path` until `bytes` are written or the disk is full.
fn ballast(path: &Path, bytes: Option<usize>) -> PathBuf {
    let mut f = std::fs::File::create(path).expect("create ballast");
    let chunk = vec![0u8; 4096];
    let mut written = 0;
    while bytes.is_none_or(|b| written < b) {
        match f.write(&chunk) {
            Ok(0) | Err(_) => break,
            Ok(n) => written += n,
        }
    }
    let _ = f.sync_all();
    path.to_path_buf()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_full_disk_fails_writes_and_leaves_none_half_done_sqlite() {
    let fs = Tmpfs::mount("3m");
    let data = fs.path().join("data");
    std::fs::create_dir(&data).unwrap();
    let spare = ballast(&fs.path().join("ballast-1mib"), Some(1 << 20));

    let server = Server::start("sqlite", &data, None).await;
    let api = server.api();
    let (base_policy, original) = api.policy().await;
    let mut ledger = Ledger::default();

    // Fill the disk with estates until the database refuses one.
    let mut refused = None;
    for i in 0..400 {
        let status = ledger.create_estate(&api, &format!("fill-{i}")).await;
        if !ok(status) {
            refused = Some(status);
            break;
        }
    }
    assert_eq!(
        refused,
        Some(500),
        "an upload to a full disk is refused with 500:\n  {}",
        ledger.log.join("\n  ")
    );

    // While it is full: policy writes (small; some may still fit).
    for m in 11..=12 {
        ledger.put_policy(&api, &base_policy, m).await;
    }
    // Take the last bytes too: now nothing can be written, and /readyz
    // must say so.
    let last = ballast(&fs.path().join("ballast-rest"), None);
    let (status, text) = readyz_becomes(&api, 503, Duration::from_secs(15)).await;
    ledger.expect(status == 503, || {
        format!("/readyz on a full disk answered {status} {text}")
    });
    ledger.create_estate(&api, "while-full").await;
    ledger.put_policy(&api, &base_policy, 13).await;

    // Give the space back. Every write must work again, without a
    // restart, and be seen at once.
    std::fs::remove_file(&spare).unwrap();
    std::fs::remove_file(&last).unwrap();
    let (status, text) = readyz_becomes(&api, 200, Duration::from_secs(15)).await;
    ledger.expect(status == 200, || {
        format!("/readyz once space is back answered {status} {text}")
    });
    after_recovery(&api, &mut ledger, &base_policy, "space came back").await;
    ledger.check(&api, "before the restart", original).await;

    // Only what was committed survives a crash.
    let log = server.kill();
    let server = Server::start("sqlite, restarted", &data, None).await;
    ledger
        .check(&server.api(), "after a SIGKILL and a restart", original)
        .await;
    ledger.verdict(&log);
}

/// Once the database takes writes again: first requests whose
/// transaction ends in a rollback (clearing a decision nobody made: 404),
/// enough to pass through every pooled connection; then four policy
/// writes, each read back at once, and three new estates, all of which
/// must succeed.
async fn after_recovery(api: &Api, ledger: &mut Ledger, base_policy: &Value, since: &str) {
    for _ in 0..4 {
        let (status, _) = api
            .call(
                Method::POST,
                "/api/estates/sample/reviews/clear",
                Some(r#"{"identity": "never-decided"}"#.into()),
            )
            .await;
        ledger
            .log
            .push(format!("clear a decision never made: {status}"));
        ledger.expect(status == 404, || {
            format!("clearing a decision never made after {since} answered {status}")
        });
    }
    for m in 21..=24 {
        let status = ledger.put_policy(api, base_policy, m).await;
        let (_, now) = api.policy().await;
        ledger.expect(ok(status) && now == m, || {
            format!("policy write {m} after {since} answered {status}, and the policy reads max_moves={now}")
        });
    }
    for i in 0..3 {
        let id = format!("after-{i}");
        let status = ledger.create_estate(api, &id).await;
        ledger.expect(ok(status), || {
            format!("creating {id} after {since} answered {status}")
        });
    }
}

// ---- PostgreSQL with commits that fail -------------------------------

/// Install the switchable commit failure in the server's database.
async fn install_commit_fault(url: &str) -> sqlx::PgPool {
    let pool = sqlx::PgPool::connect(url).await.expect("connect");
    for sql in [
        "CREATE TABLE durability_fault (fail BOOLEAN NOT NULL)",
        "INSERT INTO durability_fault VALUES (false)",
        "CREATE FUNCTION durability_fail() RETURNS trigger LANGUAGE plpgsql AS $$ \
         BEGIN IF (SELECT fail FROM durability_fault) THEN \
         RAISE EXCEPTION 'injected: this commit fails'; END IF; RETURN NULL; END $$",
        "CREATE CONSTRAINT TRIGGER durability_estates AFTER INSERT OR UPDATE ON estates \
         DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION durability_fail()",
        "CREATE CONSTRAINT TRIGGER durability_settings AFTER INSERT OR UPDATE ON settings \
         DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION durability_fail()",
    ] {
        sqlx::query(sql).execute(&pool).await.expect(sql);
    }
    pool
}

async fn set_fault(pool: &sqlx::PgPool, fail: bool) {
    sqlx::query("UPDATE durability_fault SET fail = $1")
        .bind(fail)
        .execute(pool)
        .await
        .expect("switch the fault");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn failed_commits_leave_nothing_half_done_postgres() {
    let db = TestDb::new(Backend::Postgres).await;
    let data = tempfile::tempdir().unwrap();
    let server = Server::start("postgres", data.path(), Some(&db.url)).await;
    let fault = install_commit_fault(&db.url).await;
    let api = server.api();
    let (base_policy, original) = api.policy().await;
    let mut ledger = Ledger::default();

    set_fault(&fault, true).await;
    for m in 11..=14 {
        let status = ledger.put_policy(&api, &base_policy, m).await;
        ledger.expect(status == 500, || {
            format!("a policy write whose commit fails answered {status}")
        });
    }
    for i in 0..2 {
        let status = ledger.create_estate(&api, &format!("failing-{i}")).await;
        ledger.expect(status == 500, || {
            format!("an estate whose commit fails answered {status}")
        });
    }
    let (status, text) = readyz_becomes(&api, 503, Duration::from_secs(15)).await;
    ledger.expect(status == 503, || {
        format!("/readyz while commits fail answered {status} {text}")
    });

    set_fault(&fault, false).await;
    let (status, text) = readyz_becomes(&api, 200, Duration::from_secs(15)).await;
    ledger.expect(status == 200, || {
        format!("/readyz once commits work answered {status} {text}")
    });
    after_recovery(&api, &mut ledger, &base_policy, "commits worked again").await;
    ledger.check(&api, "before the restart", original).await;

    let log = server.kill();
    let server = Server::start("postgres, restarted", data.path(), Some(&db.url)).await;
    ledger
        .check(&server.api(), "after a SIGKILL and a restart", original)
        .await;
    fault.close().await;
    ledger.verdict(&log);
}
