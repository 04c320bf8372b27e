//! Real `berth serve` processes, as an operator runs them: two replicas on
//! one PostgreSQL, SIGKILL and SIGTERM in the middle of a large import, and
//! the very first start from an empty data directory.
//!
//! Each server is a child process on a free port, driven over HTTP. The
//! [`Server`] guard kills it when the test ends, however it ends, and
//! prints its stderr if the test failed, so a failure shows the server's
//! side too. PostgreSQL tests need the server at `BERTH_TEST_PG_URL`
//! (default `postgres://127.0.0.1:5432/test`) and fail, rather than skip,
//! when it is not there: CI starts it, and a silent skip would hide a
//! broken setup.

mod support;

use std::io::Read;
use std::net::TcpListener;
use std::path::Path;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

use berth_engine::gen::{self, Shape};
use berth_engine::{estate, export, Format};
use reqwest::Method;
use serde_json::{json, Value};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

use support::{Backend, TestDb};

/// The admin token the servers are started with (≥ 32 characters).
const TOKEN: &str = "processes-test-admin-token-0123456789abcdef";
/// Evaluation time for advice: fixed, so two servers compute the same thing.
const NOW: &str = "2026-11-30T04:05:00Z";
/// How long a server may take to become ready. Generous: the machine is
/// shared with builds, and a start is a migration plus a bind.
const READY_DEADLINE: Duration = Duration::from_secs(30);

// ---- the server process ----------------------------------------------

/// How to start one `berth serve`.
struct Start<'a> {
    label: &'a str,
    /// `None`: SQLite in `data_dir`.
    database_url: Option<&'a str>,
    data_dir: &'a Path,
    /// `None`: no BERTH_ADMIN_TOKEN at all (first-start bootstrap).
    admin_token: Option<&'a str>,
    seed: bool,
    /// More `berth serve` arguments.
    extra: &'a [&'a str],
}

/// A running `berth serve`. Dropping it kills the process (SIGKILL) and,
/// when the test is failing, prints what the server wrote to stderr.
struct Server {
    label: String,
    child: Child,
    base: String,
    stdout: Arc<Mutex<Vec<u8>>>,
    stderr: Arc<Mutex<Vec<u8>>>,
    readers: Vec<std::thread::JoinHandle<()>>,
}

fn free_port() -> u16 {
    // The port is released before the server binds it; another process
    // could take it in between, which is unlikely enough on a test machine.
    TcpListener::bind("127.0.0.1:0")
        .expect("bind 127.0.0.1:0")
        .local_addr()
        .expect("local address")
        .port()
}

/// Copy a child's pipe into a shared buffer on a thread of its own, so the
/// child never blocks on a full pipe and the test can read what it wrote.
fn drain(
    mut pipe: impl Read + Send + 'static,
    into: Arc<Mutex<Vec<u8>>>,
) -> std::thread::JoinHandle<()> {
    std::thread::spawn(move || {
        let mut buf = [0u8; 8192];
        loop {
            match pipe.read(&mut buf) {
                Ok(0) | Err(_) => break,
                Ok(n) => into.lock().unwrap().extend_from_slice(&buf[..n]),
            }
        }
    })
}

fn text(buf: &Mutex<Vec<u8>>) -> String {
    String::from_utf8_lossy(&buf.lock().unwrap()).into_owned()
}

impl Server {
    /// Spawn the server and wait until `/readyz` answers 200.
    async fn start(s: Start<'_>) -> Server {
        let port = free_port();
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_berth"));
        cmd.arg("serve")
            .args(["--listen", &format!("127.0.0.1:{port}")])
            .arg("--data-dir")
            .arg(s.data_dir);
        if let Some(url) = s.database_url {
            cmd.args(["--database-url", url]);
        }
        if s.seed {
            // The sample as written for NOW, which the tests evaluate at.
            cmd.args(["--sample-at", NOW]);
        } else {
            cmd.arg("--no-seed");
        }
        cmd.args(s.extra);
        // Nothing from the caller's environment may steer the server.
        for (var, _) in std::env::vars_os() {
            if var.to_string_lossy().starts_with("BERTH_") {
                cmd.env_remove(var);
            }
        }
        if let Some(t) = s.admin_token {
            cmd.env("BERTH_ADMIN_TOKEN", t);
        }
        cmd.env("RUST_LOG", "info,sqlx=warn")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let mut child = cmd.spawn().expect("spawn berth serve");
        let stdout = Arc::new(Mutex::new(Vec::new()));
        let stderr = Arc::new(Mutex::new(Vec::new()));
        let readers = vec![
            drain(child.stdout.take().unwrap(), stdout.clone()),
            drain(child.stderr.take().unwrap(), stderr.clone()),
        ];
        let mut server = Server {
            label: s.label.to_string(),
            child,
            base: format!("http://127.0.0.1:{port}"),
            stdout,
            stderr,
            readers,
        };
        server.wait_ready().await;
        server
    }

    async fn wait_ready(&mut self) {
        let http = reqwest::Client::builder()
            .timeout(Duration::from_secs(2))
            .build()
            .unwrap();
        let deadline = Instant::now() + READY_DEADLINE;
        loop {
            // A server that exited early is reported as such, not as a
            // timeout. (Either way Drop prints its stderr.)
            if let Some(status) = self.child.try_wait().expect("try_wait") {
                panic!(
                    "server {} exited before it was ready ({status}); its stderr follows",
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
                "server {} not ready after {READY_DEADLINE:?}; its stderr follows",
                self.label
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }

    fn stderr(&self) -> String {
        text(&self.stderr)
    }

    fn pid(&self) -> u32 {
        self.child.id()
    }

    fn api(&self) -> Api {
        self.api_with(TOKEN)
    }

    fn api_with(&self, token: &str) -> Api {
        Api {
            http: reqwest::Client::builder()
                .timeout(Duration::from_secs(60))
                .build()
                .unwrap(),
            base: self.base.clone(),
            token: token.to_string(),
            label: self.label.clone(),
        }
    }

    /// SIGKILL: no chance to clean up, as in a crash or an OOM kill.
    fn kill(mut self) {
        self.child.kill().expect("SIGKILL the server");
        self.child.wait().expect("reap the server");
    }

    /// SIGTERM, as an orchestrator stops a pod.
    fn terminate(&self) {
        let status = Command::new("kill")
            .args(["-TERM", &self.pid().to_string()])
            .status()
            .expect("run kill(1)");
        assert!(status.success(), "kill -TERM {} failed", self.pid());
    }

    /// Wait for the process to exit on its own; then every byte it wrote
    /// has been collected.
    fn wait_exit(mut self, within: Duration) -> Exited {
        let deadline = Instant::now() + within;
        let status = loop {
            if let Some(status) = self.child.try_wait().expect("try_wait") {
                break status;
            }
            assert!(
                Instant::now() < deadline,
                "server {} still running {within:?} after it was asked to stop",
                self.label
            );
            std::thread::sleep(Duration::from_millis(20));
        };
        for r in self.readers.drain(..) {
            r.join().unwrap();
        }
        Exited {
            status,
            stdout: text(&self.stdout),
            stderr: self.stderr(),
        }
    }
}

/// A server that stopped, with all it wrote.
struct Exited {
    status: ExitStatus,
    stdout: String,
    stderr: String,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        if std::thread::panicking() {
            eprintln!(
                "---- stderr of server {} ----\n{}---- end of stderr of {} ----",
                self.label,
                self.stderr(),
                self.label
            );
        }
    }
}

// ---- the HTTP side ---------------------------------------------------

/// A client for one server with one bearer token.
#[derive(Clone)]
struct Api {
    http: reqwest::Client,
    base: String,
    token: String,
    label: String,
}

impl Api {
    /// Status and body text of one request.
    async fn call(&self, method: Method, path: &str, body: Option<String>) -> (u16, String) {
        let mut req = self
            .http
            .request(method.clone(), format!("{}{path}", self.base))
            .bearer_auth(&self.token);
        if let Some(b) = body {
            req = req.header("content-type", "application/json").body(b);
        }
        let resp = req
            .send()
            .await
            .unwrap_or_else(|e| panic!("{method} {path} on server {}: {e}", self.label));
        let status = resp.status().as_u16();
        (status, resp.text().await.expect("response body"))
    }

    /// The body of a request that must succeed (any 2xx).
    async fn ok(&self, method: Method, path: &str, body: Option<String>) -> String {
        let (status, text) = self.call(method.clone(), path, body).await;
        assert!(
            (200..300).contains(&status),
            "{method} {path} on server {}: {status} {text}",
            self.label
        );
        text
    }

    async fn json(&self, method: Method, path: &str, body: Option<String>) -> Value {
        let text = self.ok(method.clone(), path, body).await;
        serde_json::from_str(&text).unwrap_or_else(|e| panic!("{method} {path}: not JSON ({e})"))
    }

    async fn get(&self, path: &str) -> Value {
        self.json(Method::GET, path, None).await
    }

    /// `(version, content_digest)` of an estate.
    async fn estate_version(&self, id: &str) -> (i64, String) {
        let v = self.get(&format!("/api/estates/{id}")).await;
        (
            v["version"].as_i64().expect("version"),
            v["content_digest"].as_str().expect("content_digest").into(),
        )
    }

    /// The advice body, byte for byte.
    async fn advice(&self, id: &str) -> String {
        self.ok(
            Method::GET,
            &format!("/api/estates/{id}/advice?now={NOW}"),
            None,
        )
        .await
    }

    async fn create(&self, id: &str, file: &str) -> Value {
        let (status, text) = self
            .call(
                Method::POST,
                &format!("/api/estates?id={id}"),
                Some(file.into()),
            )
            .await;
        assert_eq!(status, 201, "create {id} on server {}: {text}", self.label);
        serde_json::from_str(&text).unwrap()
    }
}

/// A `PUT /api/estates/{id}/file` written by hand over TCP, so the test
/// decides when each byte leaves and can signal the server in between.
struct RawImport {
    stream: tokio::net::TcpStream,
}

impl RawImport {
    /// Connect and send the request head; the body follows with `send`.
    async fn begin(server: &Server, id: &str, body_len: usize) -> RawImport {
        let addr = server.base.trim_start_matches("http://");
        let mut stream = tokio::net::TcpStream::connect(addr)
            .await
            .expect("connect for the import");
        let head = format!(
            "PUT /api/estates/{id}/file HTTP/1.1\r\nHost: {addr}\r\nAuthorization: Bearer {TOKEN}\r\n\
             Content-Type: application/json\r\nContent-Length: {body_len}\r\nConnection: close\r\n\r\n"
        );
        stream.write_all(head.as_bytes()).await.expect("send head");
        RawImport { stream }
    }

    async fn send(&mut self, bytes: &[u8]) {
        self.stream.write_all(bytes).await.expect("send body");
        self.stream.flush().await.expect("flush body");
    }

    /// Status and body of the response (the server closes the connection
    /// after it: `Connection: close`).
    async fn response(mut self) -> (u16, String) {
        let mut raw = Vec::new();
        self.stream
            .read_to_end(&mut raw)
            .await
            .expect("read the response");
        let text = String::from_utf8_lossy(&raw).into_owned();
        let status = text
            .split(' ')
            .nth(1)
            .and_then(|s| s.parse().ok())
            .unwrap_or_else(|| panic!("not an HTTP response: {text:.200}"));
        let body = text
            .split_once("\r\n\r\n")
            .map(|(_, b)| b.to_string())
            .unwrap_or_default();
        (status, body)
    }
}

// ---- estates ---------------------------------------------------------

/// An estate file and the content digest the server must report for it.
struct Fixture {
    text: String,
    digest: String,
}

fn fixture(shape: &Shape, pretty: bool) -> Fixture {
    let file = gen::file(shape);
    let text = if pretty {
        serde_json::to_string_pretty(&file).unwrap()
    } else {
        serde_json::to_string(&file).unwrap()
    };
    // The digest the server stores: of what its canonical document loads
    // to (estates::canonicalise), which may differ from the upload in the last
    // bit of a number.
    let first = estate::load(&text, Format::Json).expect("generated estates load");
    let canonical = serde_json::to_string(&export::to_file(&first)).unwrap();
    let digest = export::version(&estate::load(&canonical, Format::Json).expect("canonical loads"));
    Fixture { text, digest }
}

/// The 5,000-service benchmark estate, pretty-printed as a person's file
/// would be (over 10 MB); generated once per test binary.
fn large() -> &'static Fixture {
    static LARGE: OnceLock<Fixture> = OnceLock::new();
    LARGE.get_or_init(|| {
        let f = fixture(&Shape::sized(42, 5000, 50), true);
        assert!(
            f.text.len() > 10_000_000,
            "the large estate is {} bytes",
            f.text.len()
        );
        f
    })
}

fn small() -> Fixture {
    fixture(&Shape::small(7), false)
}

/// The content digest of the estate file a server exports: the document
/// itself, not only the digest column stored beside it.
async fn exported_digest(api: &Api, id: &str) -> String {
    let text = api
        .ok(Method::GET, &format!("/api/estates/{id}/file"), None)
        .await;
    let e = estate::load(&text, Format::Json)
        .unwrap_or_else(|errs| panic!("the exported estate {id} does not load: {errs:?}"));
    export::version(&e)
}

// ---- 1. two replicas on one PostgreSQL -------------------------------

/// Everything written through one replica is what the other reads: an
/// import, a policy change, a delete and re-create under the same id, and
/// fact updates sent to both at once, none lost.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_servers_on_one_postgres_share_every_write() {
    let db = TestDb::new(Backend::Postgres).await;
    let dir = tempfile::tempdir().unwrap();
    let start = |label| Start {
        label,
        database_url: Some(&db.url),
        data_dir: dir.path(),
        admin_token: Some(TOKEN),
        seed: false,
        extra: &[],
    };
    // Started together, so both run the migrations at the same moment.
    let (sa, sb) = tokio::join!(Server::start(start("A")), Server::start(start("B")));
    let (a, b) = (sa.api(), sb.api());

    // Create through A, read through B.
    let first = fixture(&Shape::sized(1, 300, 10), false);
    let created = a.create("shared", &first.text).await;
    assert_eq!(created["content_digest"], first.digest.as_str());
    assert_eq!(b.estate_version("shared").await, (1, first.digest.clone()));
    let advice1 = a.advice("shared").await;
    assert_eq!(
        b.advice("shared").await,
        advice1,
        "the same estate, policy and now give other advice through B"
    );

    // Import through B; A has version 1 cached and must not serve it.
    let second = fixture(&Shape::sized(2, 300, 10), false);
    assert_ne!(first.digest, second.digest);
    let imported = b
        .json(
            Method::PUT,
            "/api/estates/shared/file",
            Some(second.text.clone()),
        )
        .await;
    assert_eq!(imported["version"], 2);
    assert_eq!(a.estate_version("shared").await, (2, second.digest.clone()));
    assert_eq!(exported_digest(&a, "shared").await, second.digest);
    let advice2 = a.advice("shared").await;
    let parsed: Value = serde_json::from_str(&advice2).unwrap();
    assert_eq!(parsed["version"], 2);
    assert_eq!(parsed["content_digest"], second.digest.as_str());
    assert_eq!(b.advice("shared").await, advice2);

    // A policy change through A is the policy B uses; B's cached advice
    // was made under the old digest.
    let old_policy = b.get("/api/estates/shared/policy").await["policy_digest"].clone();
    let put = a
        .json(
            Method::PUT,
            "/api/estates/shared/policy",
            Some(json!({"min_gain_points": 7.5}).to_string()),
        )
        .await;
    let new_policy = put["policy_digest"].clone();
    assert_ne!(new_policy, old_policy);
    let seen = b.get("/api/estates/shared/policy").await;
    assert_eq!(seen["policy_digest"], new_policy);
    assert_eq!(seen["policy"]["min_gain_points"], 7.5);
    assert_eq!(
        b.get("/api/estates/shared").await["policy_digest"],
        new_policy
    );
    let advice3 = b.advice("shared").await;
    let parsed: Value = serde_json::from_str(&advice3).unwrap();
    assert_eq!(parsed["policy_digest"], new_policy);
    assert_eq!(a.advice("shared").await, advice3);

    // Fact updates through both replicas at once: each batch changes a
    // different flow, so every one must survive, each as its own version.
    let (v0, _) = a.estate_version("shared").await;
    let doc: Value = serde_json::from_str(&second.text).unwrap();
    let flows: Vec<(String, String)> = doc["flows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            (
                f["from"].as_str().unwrap().into(),
                f["to"].as_str().unwrap().into(),
            )
        })
        .collect();
    const PER_SERVER: usize = 6;
    let batches = 2 * PER_SERVER;
    let value = |i: usize| 1000.5 + i as f64;
    let mut running = tokio::task::JoinSet::new();
    for (i, (from, to)) in flows.iter().take(batches).cloned().enumerate() {
        let api = if i % 2 == 0 { a.clone() } else { b.clone() };
        let batch = json!({"updates": [{
            "fact": "flow_mb_s", "from": from, "to": to, "value": value(i),
            "class": "measured", "source": format!("test:{i}"),
            "observed_at": "2026-11-30T04:00:00Z",
        }]});
        running.spawn(async move {
            api.call(
                Method::POST,
                "/api/estates/shared/facts",
                Some(batch.to_string()),
            )
            .await
        });
    }
    let mut versions = Vec::new();
    while let Some(done) = running.join_next().await {
        let (status, text) = done.unwrap();
        assert_eq!(status, 200, "a concurrent fact update was refused: {text}");
        let v: Value = serde_json::from_str(&text).unwrap();
        versions.push(v["version"].as_i64().unwrap());
    }
    versions.sort_unstable();
    let expected: Vec<i64> = (v0 + 1..=v0 + batches as i64).collect();
    assert_eq!(
        versions, expected,
        "each batch must be exactly one new version"
    );
    let through_a = a.estate_version("shared").await;
    assert_eq!(through_a.0, v0 + batches as i64);
    assert_eq!(b.estate_version("shared").await, through_a);
    let exported: Value =
        serde_json::from_str(&b.ok(Method::GET, "/api/estates/shared/file", None).await).unwrap();
    for (i, (from, to)) in flows.iter().take(batches).enumerate() {
        let flow = exported["flows"]
            .as_array()
            .unwrap()
            .iter()
            .find(|f| f["from"] == from.as_str() && f["to"] == to.as_str())
            .unwrap_or_else(|| panic!("flow {from} → {to} is gone"));
        assert_eq!(
            flow["mb_s"]["value"],
            value(i),
            "update {i} ({from} → {to}) was lost"
        );
        assert_eq!(flow["mb_s"]["source"], format!("test:{i}"));
    }

    // Delete through A and create again under the same id: version 1
    // again, with other content. B read version 1 of the first estate at
    // the start and must not mistake it for this one.
    a.ok(Method::DELETE, "/api/estates/shared", None).await;
    let third = fixture(&Shape::sized(3, 250, 8), false);
    a.create("shared", &third.text).await;
    let summary = b.get("/api/estates/shared").await;
    assert_eq!(summary["version"], 1);
    assert_eq!(summary["content_digest"], third.digest.as_str());
    assert_eq!(
        summary["counts"]["services"], 250,
        "B describes an estate that was deleted"
    );
    let advice4 = b.advice("shared").await;
    let parsed: Value = serde_json::from_str(&advice4).unwrap();
    assert_eq!(
        parsed["content_digest"],
        third.digest.as_str(),
        "B serves advice of a deleted estate"
    );
    assert_eq!(a.advice("shared").await, advice4);
}

// ---- 2. crashes and shutdowns mid-import ----------------------------

/// Where a test's server keeps its data: SQLite in a fresh data directory
/// (the default configuration), or a fresh PostgreSQL database.
struct Place {
    dir: tempfile::TempDir,
    db: Option<TestDb>,
}

impl Place {
    async fn new(backend: Backend) -> Place {
        Place {
            dir: tempfile::tempdir().unwrap(),
            db: match backend {
                Backend::Sqlite => None,
                Backend::Postgres => Some(TestDb::new(Backend::Postgres).await),
            },
        }
    }

    fn start<'a>(&'a self, label: &'a str) -> Start<'a> {
        Start {
            label,
            database_url: self.db.as_ref().map(|d| d.url.as_str()),
            data_dir: self.dir.path(),
            admin_token: Some(TOKEN),
            seed: false,
            extra: &[],
        }
    }
}

/// Wait until PostgreSQL has ended every session of the killed server.
/// A COMMIT the server sent just before SIGKILL may still land after the
/// process is gone; reading before its session ends would see the old
/// estate first and the new one a moment later, which is not a state the
/// restarted server ever shows but a race in the test. With no server
/// running, every other session on the test database is the dead one's:
/// they are ended (an open transaction rolls back, a received COMMIT has
/// landed) and awaited.
async fn dead_sessions_gone(url: &str) {
    let pool = sqlx::PgPool::connect(url).await.unwrap();
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let (left,): (i64,) = sqlx::query_as(
            "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()",
        )
        .fetch_one(&pool)
        .await
        .unwrap();
        if left == 0 {
            break;
        }
        sqlx::query(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()",
        )
        .execute(&pool)
        .await
        .unwrap();
        assert!(
            Instant::now() < deadline,
            "the killed server's sessions did not end"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    pool.close().await;
}

/// After a restart: the estate is exactly the small one it was created as
/// (version 1) or exactly the large import (version 2) — its document, not
/// only its digest column — and it still gives advice. Returns which.
async fn old_or_new(api: &Api, id: &str, old: &Fixture) -> &'static str {
    let big = large();
    let (version, digest) = api.estate_version(id).await;
    let outcome = if version == 1 && digest == old.digest {
        "old"
    } else if version == 2 && digest == big.digest {
        "new"
    } else {
        panic!(
            "estate {id} is neither the old one (1, {}) nor the new one (2, {}): ({version}, {digest})",
            old.digest, big.digest
        );
    };
    assert_eq!(
        exported_digest(api, id).await,
        digest,
        "the stored document does not match its digest"
    );
    let advice: Value = serde_json::from_str(&api.advice(id).await).unwrap();
    assert_eq!(advice["content_digest"], digest.as_str());
    assert!(
        advice["result"]["moves"].is_array(),
        "no advice: {advice:.300}"
    );
    outcome
}

/// SIGKILL while a 5,000-service import is in flight, at several moments:
/// while the body arrives, then spread over the time the server needs to
/// parse and store it. After each restart the estate is the old or the
/// new one, never anything else.
async fn sigkill_during_import(backend: Backend) {
    let place = Place::new(backend).await;
    let big = large();
    let old = small();
    let mut server = Server::start(place.start("first")).await;

    // One complete import first, timed from the last byte sent to the
    // answer: the window in which a kill lands mid-work.
    server.api().create("baseline", &old.text).await;
    let mut put = RawImport::begin(&server, "baseline", big.text.len()).await;
    put.send(big.text.as_bytes()).await;
    let sent = Instant::now();
    let (status, body) = put.response().await;
    let work = sent.elapsed();
    assert_eq!(status, 200, "baseline import: {body}");
    let v: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(v["content_digest"], big.digest.as_str());

    // None: kill with half the body sent; Some(f): f × work after the last
    // byte. Denser in the second half, where parsing is over and the
    // document is being written.
    let moments = [
        None,
        Some(0.0),
        Some(0.3),
        Some(0.5),
        Some(0.65),
        Some(0.8),
        Some(1.0),
    ];
    let mut outcomes = Vec::new();
    for (attempt, moment) in moments.into_iter().enumerate() {
        let id = format!("crash-{attempt}");
        let created = server.api().create(&id, &old.text).await;
        assert_eq!(created["version"], 1);
        let bytes = big.text.as_bytes();
        let mut put = RawImport::begin(&server, &id, bytes.len()).await;
        match moment {
            None => {
                put.send(&bytes[..bytes.len() / 2]).await;
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
            Some(f) => {
                put.send(bytes).await;
                tokio::time::sleep(work.mul_f64(f)).await;
            }
        }
        server.kill();
        drop(put);
        if let Some(db) = &place.db {
            dead_sessions_gone(&db.url).await;
        }
        let label = format!("restarted after kill {attempt}");
        server = Server::start(place.start(&label)).await;
        let outcome = old_or_new(&server.api(), &id, &old).await;
        if moment.is_none() {
            assert_eq!(
                outcome, "old",
                "half a body was sent, yet the import was stored"
            );
        }
        outcomes.push(format!("{moment:?}: {outcome}"));
    }
    // Which moments caught the server before or after its commit depends
    // on the machine; printed for whoever reads a failure.
    eprintln!("SIGKILL ({backend:?}, work {work:?}): {outcomes:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigkill_during_a_large_import_leaves_the_old_or_the_new_estate_sqlite() {
    sigkill_during_import(Backend::Sqlite).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigkill_during_a_large_import_leaves_the_old_or_the_new_estate_postgres() {
    sigkill_during_import(Backend::Postgres).await;
}

/// SIGTERM with half of a large import's body sent: the server finishes
/// that request (200, the new estate), then exits 0; after a restart the
/// new estate is there.
async fn sigterm_during_import(backend: Backend) {
    let place = Place::new(backend).await;
    let big = large();
    let old = small();
    let server = Server::start(place.start("first")).await;
    server.api().create("graceful", &old.text).await;
    let bytes = big.text.as_bytes();
    let mut put = RawImport::begin(&server, "graceful", bytes.len()).await;
    put.send(&bytes[..bytes.len() / 2]).await;
    // Give the server the moment to take the connection and start reading
    // before the signal, then the moment to act on the signal before the
    // rest of the body.
    tokio::time::sleep(Duration::from_millis(200)).await;
    server.terminate();
    tokio::time::sleep(Duration::from_millis(200)).await;
    put.send(&bytes[bytes.len() / 2..]).await;
    let (status, body) = put.response().await;
    assert_eq!(
        status, 200,
        "the import in flight at SIGTERM did not complete: {body}"
    );
    let v: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(v["content_digest"], big.digest.as_str());
    let exited = server.wait_exit(Duration::from_secs(30));
    let log = exited.stderr;
    assert_eq!(
        exited.status.code(),
        Some(0),
        "exit status after SIGTERM: {}; stderr:\n{log}",
        exited.status
    );
    // The signal was acted on while the import was still in flight, not
    // after it: the shutdown message comes before the import's.
    let (Some(stop), Some(import)) = (log.find("shutting down"), log.find("estate imported"))
    else {
        panic!("expected a shutdown and an import in the log:\n{log}");
    };
    assert!(
        stop < import,
        "the server saw SIGTERM only after the import:\n{log}"
    );

    let server = Server::start(place.start("restarted")).await;
    let api = server.api();
    assert_eq!(
        api.estate_version("graceful").await,
        (2, big.digest.clone())
    );
    assert_eq!(old_or_new(&api, "graceful", &old).await, "new");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigterm_during_a_large_import_finishes_it_then_exits_0_sqlite() {
    sigterm_during_import(Backend::Sqlite).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigterm_during_a_large_import_finishes_it_then_exits_0_postgres() {
    sigterm_during_import(Backend::Postgres).await;
}

// ---- 3. first start from nothing -------------------------------------

/// The bootstrap token line of a first start's stdout.
fn bootstrap_token(stdout: &str) -> Option<String> {
    stdout
        .lines()
        .map(str::trim)
        .find(|l| l.starts_with("berth_"))
        .map(String::from)
}

/// `berth serve` on an empty data directory without BERTH_ADMIN_TOKEN
/// prints an admin token once, seeds the sample once; a second start on
/// the same directory prints nothing and leaves a deleted sample deleted.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn first_start_prints_a_bootstrap_token_once_and_seeds_the_sample_once() {
    let dir = tempfile::tempdir().unwrap();
    // Not yet there: the server creates it.
    let data = dir.path().join("berth-data");
    let start = |label| Start {
        label,
        database_url: None,
        data_dir: &data,
        admin_token: None,
        seed: true,
        extra: &[],
    };
    let first = Server::start(start("first start")).await;
    assert!(
        data.join("berth.sqlite3").exists(),
        "no database in the data dir"
    );
    // Printed before the server listens, so it is on its way by now.
    let deadline = Instant::now() + Duration::from_secs(10);
    let token = loop {
        if let Some(t) = bootstrap_token(&text(&first.stdout)) {
            break t;
        }
        assert!(Instant::now() < deadline, "no bootstrap token on stdout");
        tokio::time::sleep(Duration::from_millis(20)).await;
    };
    let secret = token.strip_prefix("berth_").unwrap();
    assert!(
        secret.len() == 64 && secret.bytes().all(|b| b.is_ascii_hexdigit()),
        "not a token: {token}"
    );

    // The token is an admin bearer; without it, or with another, no entry.
    let anonymous = reqwest::get(format!("{}/api/estates", first.base))
        .await
        .unwrap();
    assert_eq!(anonymous.status(), 401);
    let (status, _) = first
        .api_with(&format!("berth_{}", "0".repeat(64)))
        .call(Method::GET, "/api/estates", None)
        .await;
    assert_eq!(status, 401);
    let api = first.api_with(&token);
    assert_eq!(api.get("/api/session").await["role"], "admin");
    let ids = |list: &Value| -> Vec<String> {
        list["estates"]
            .as_array()
            .unwrap()
            .iter()
            .map(|e| e["id"].as_str().unwrap().to_string())
            .collect()
    };
    assert_eq!(ids(&api.get("/api/estates").await), ["sample"]);
    let advice: Value = serde_json::from_str(&api.advice("sample").await).unwrap();
    assert!(
        !advice["result"]["moves"].as_array().unwrap().is_empty(),
        "the sample should show real advice"
    );
    api.ok(Method::DELETE, "/api/estates/sample", None).await;

    first.terminate();
    let exited = first.wait_exit(Duration::from_secs(30));
    assert_eq!(
        exited.status.code(),
        Some(0),
        "first start: {}",
        exited.status
    );
    let stdout = exited.stdout;
    assert_eq!(
        stdout.matches("berth_").count(),
        1,
        "one token, once:\n{stdout}"
    );
    assert_eq!(stdout.matches(&token).count(), 1);
    assert!(
        !exited.stderr.contains(&token),
        "the bootstrap token must never reach the log"
    );

    let second = Server::start(start("second start")).await;
    let api = second.api_with(&token);
    assert_eq!(
        ids(&api.get("/api/estates").await),
        Vec::<String>::new(),
        "the deleted sample came back"
    );
    second.terminate();
    let exited = second.wait_exit(Duration::from_secs(30));
    assert_eq!(
        exited.status.code(),
        Some(0),
        "second start: {}",
        exited.status
    );
    assert!(
        exited.stdout.trim().is_empty(),
        "the second start printed:\n{}",
        exited.stdout
    );
}

/// A decider that takes its time and records how many calls it serves at
/// once, and how often it saw each estate version.
#[derive(Default)]
struct SlowDecider {
    in_flight: std::sync::atomic::AtomicUsize,
    max_in_flight: std::sync::atomic::AtomicUsize,
    seen: Mutex<std::collections::BTreeMap<String, usize>>,
}

async fn slow_decider(delay: Duration) -> (Arc<SlowDecider>, String) {
    use std::sync::atomic::Ordering::SeqCst;
    let d = Arc::new(SlowDecider::default());
    let state = d.clone();
    let app = axum::Router::new().fallback(move |body: axum::body::Bytes| {
        let d = state.clone();
        async move {
            let now = d.in_flight.fetch_add(1, SeqCst) + 1;
            d.max_in_flight.fetch_max(now, SeqCst);
            let req: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
            let version = req["estate_version"].as_str().unwrap_or("?").to_string();
            *d.seen.lock().unwrap().entry(version).or_default() += 1;
            tokio::time::sleep(delay).await;
            d.in_flight.fetch_sub(1, SeqCst);
            axum::Json(serde_json::json!({"proposals": []}))
        }
    });
    let l = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/decide", l.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(l, app).await.unwrap() });
    (d, url)
}

/// SPEC §11: with several replicas on one database, exactly one runs a
/// driver pass at a time. Two replicas tick every second; a pass that
/// calls a slow decider on three estates lasts ~2 s, so without the lock
/// the other replica would start its own pass inside it and call the
/// decider a second time for the same estate, at the same time.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn two_replicas_never_run_driver_passes_at_once() {
    use std::sync::atomic::Ordering::SeqCst;
    let db = TestDb::new(Backend::Postgres).await;
    let dir = tempfile::tempdir().unwrap();
    // An explicit key file, as a PostgreSQL installation would have.
    let key_file = dir.path().join("secret.key");
    std::fs::write(&key_file, "AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8=\n").unwrap();
    let key_file = key_file.display().to_string();
    let extra = [
        "--driver-every-s",
        "1",
        "--decider-allow",
        "127.0.0.1/32",
        "--secret-key-file",
        &key_file,
    ];
    let start = |label| Start {
        label,
        database_url: Some(&db.url),
        data_dir: dir.path(),
        admin_token: Some(TOKEN),
        seed: false,
        extra: &extra,
    };
    let (sa, sb) = tokio::join!(Server::start(start("A")), Server::start(start("B")));
    let (a, b) = (sa.api(), sb.api());
    let (decider, url) = slow_decider(Duration::from_millis(600)).await;
    for i in 0..3u64 {
        a.create(
            &format!("e{i}"),
            &fixture(&Shape::sized(10 + i, 30, 4), false).text,
        )
        .await;
    }
    let registered = b
        .json(
            Method::POST,
            "/api/deciders",
            Some(
                serde_json::json!({"name": "slow", "url": url, "timeout_ms": 5000, "interval_s": 3600, "generate_secret": true})
                    .to_string(),
            ),
        )
        .await;
    let secret = registered["secret"].as_str().unwrap().to_string();
    assert!(secret.starts_with("whsec_"));
    // Until every estate has been evaluated and run once, then a little
    // longer so both replicas keep ticking over an empty backlog.
    let deadline = std::time::Instant::now() + Duration::from_secs(40);
    loop {
        let h = a.json(Method::GET, "/api/driver", None).await;
        if h["backlog"] == 0 && decider.seen.lock().unwrap().len() == 3 {
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "the backlog never emptied: {h}"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    tokio::time::sleep(Duration::from_secs(3)).await;

    assert_eq!(
        decider.max_in_flight.load(SeqCst),
        1,
        "two passes called the decider at once"
    );
    let seen = decider.seen.lock().unwrap().clone();
    assert!(
        seen.values().all(|n| *n == 1),
        "an estate was run twice: {seen:?}"
    );

    let pool = sqlx::PgPool::connect(&db.url).await.unwrap();
    let passes: Vec<(String, i64, i64)> = sqlx::query_as(
        "SELECT replica, started_ms, finished_ms FROM driver_passes ORDER BY started_ms",
    )
    .fetch_all(&pool)
    .await
    .unwrap();
    let replicas: std::collections::BTreeSet<&str> = passes.iter().map(|p| p.0.as_str()).collect();
    assert_eq!(replicas.len(), 2, "both replicas run passes: {passes:?}");
    for w in passes.windows(2) {
        assert!(
            w[0].2 <= w[1].1,
            "a pass of {} began at {} inside a pass of {} ({}..{})",
            w[1].0,
            w[1].1,
            w[0].0,
            w[0].1,
            w[0].2
        );
    }
    let long = passes.iter().filter(|p| p.2 - p.1 >= 600).count();
    assert!(long >= 1, "no pass called the slow decider: {passes:?}");
    // Signed calls all along, and the secret never reached a log line.
    let key = &secret["whsec_".len()..];
    for s in [&sa, &sb] {
        for out in [text(&s.stdout), text(&s.stderr)] {
            assert!(
                !out.contains(key),
                "server {} logged the decider secret",
                s.label
            );
        }
    }
}
