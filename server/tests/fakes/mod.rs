//! Shared by the mesh importer and agent tests: a fake Prometheus serving
//! recorded query responses, a fake Berth observations endpoint that keeps
//! to the API's contract, and child processes that die with the test.

#![allow(dead_code)]

use std::collections::{BTreeMap, BTreeSet, HashMap, VecDeque};
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};

use axum::extract::{Path, Query, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use berth::import::mesh::Queries;
use serde_json::{json, Value};

/// The token the fake Berth accepts.
pub const TOKEN: &str = "berth_fake-agent-token-0123456789abcdef";

pub fn fixture(name: &str) -> Value {
    let path = format!(
        "{}/tests/fixtures/prometheus/{name}.json",
        env!("CARGO_MANIFEST_DIR")
    );
    serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap()
}

pub fn sample_services() -> BTreeSet<String> {
    let doc: Value = serde_json::from_str(berth::serve::SAMPLE_ESTATE).unwrap();
    doc["services"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["id"].as_str().unwrap().to_string())
        .collect()
}

/// Serve `app` on a free loopback port for the rest of the test.
pub async fn serve(app: Router) -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr: SocketAddr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    format!("http://{addr}")
}

/// A port nothing listens on (bound, then released).
pub fn closed_port_url() -> String {
    let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = l.local_addr().unwrap();
    drop(l);
    format!("http://{addr}")
}

// ---- Prometheus ---------------------------------------------------------

/// A query and the `time` it was asked for.
pub type PromRequest = (String, Option<String>);

#[derive(Clone, Default)]
pub struct PromLog {
    /// Every request, in order.
    pub requests: Arc<Mutex<Vec<PromRequest>>>,
}

#[derive(Clone)]
struct PromState {
    responses: Arc<HashMap<String, (u16, Value)>>,
    log: PromLog,
}

/// The recorded Istio responses under the default queries.
pub fn istio_responses() -> HashMap<String, (u16, Value)> {
    let q = Queries::default();
    HashMap::from([
        (q.rate, (200, fixture("rate"))),
        (q.duration, (200, fixture("duration"))),
        (q.bytes.unwrap(), (200, fixture("bytes"))),
        (q.coverage.unwrap(), (200, fixture("coverage"))),
    ])
}

/// A Prometheus that knows only the given queries, each with an HTTP
/// status and a body. Like the real one, it evaluates at the `time`
/// asked for: sample timestamps become that time. Any other query is
/// `bad_data`, as Prometheus answers an unparsable one.
pub async fn fake_prometheus(responses: HashMap<String, (u16, Value)>) -> (String, PromLog) {
    let log = PromLog::default();
    let state = PromState {
        responses: Arc::new(responses),
        log: log.clone(),
    };
    let app = Router::new()
        .route("/api/v1/query", get(prom_query))
        .with_state(state);
    (serve(app).await, log)
}

async fn prom_query(
    State(s): State<PromState>,
    Query(q): Query<HashMap<String, String>>,
) -> Response {
    let query = q.get("query").cloned().unwrap_or_default();
    let time = q.get("time").cloned();
    s.log
        .requests
        .lock()
        .unwrap()
        .push((query.clone(), time.clone()));
    let Some((status, body)) = s.responses.get(&query) else {
        return (
            StatusCode::BAD_REQUEST,
            Json(json!({"status": "error", "errorType": "bad_data",
                        "error": format!("1:1: parse error: unexpected query {query:?}")})),
        )
            .into_response();
    };
    let mut body = body.clone();
    if let (Some(t), Some(result)) = (
        time.and_then(|t| t.parse::<f64>().ok()),
        body.pointer_mut("/data/result")
            .and_then(Value::as_array_mut),
    ) {
        for s in result {
            if let Some(v) = s.pointer_mut("/value/0") {
                *v = json!(t);
            }
        }
    }
    (StatusCode::from_u16(*status).unwrap(), Json(body)).into_response()
}

// ---- Berth --------------------------------------------------------------

/// What the fake Berth saw and answered.
#[derive(Clone, Default)]
pub struct BerthLog {
    /// Every observations body posted, in order, with the status answered
    /// and when it came.
    pub posts: Arc<Mutex<Vec<(Value, u16, std::time::Instant)>>>,
    /// Accepted batches by id (the body's observations).
    pub applied: Arc<Mutex<BTreeMap<String, Value>>>,
}

/// A status to answer and the Retry-After (seconds) to send with it.
pub type Scripted = (u16, Option<u64>);

#[derive(Clone)]
struct BerthState {
    /// `false`: GET …/file is 403, as for an agent token (it may only
    /// post observations).
    readable: bool,
    services: Arc<BTreeSet<String>>,
    /// Answers to give instead of the real handling, one per post, in
    /// order: a status and a Retry-After. Nothing is applied for them.
    script: Arc<Mutex<VecDeque<Scripted>>>,
    version: Arc<Mutex<i64>>,
    log: BerthLog,
}

/// A Berth that answers `POST /api/estates/sample/observations` as the API
/// contract says (200, duplicate, 409, 422 for unknown services), and
/// `GET /api/estates/sample/file` with the sample estate when `readable`.
pub async fn fake_berth(readable: bool, script: Vec<Scripted>) -> (String, BerthLog) {
    let log = BerthLog::default();
    let state = BerthState {
        readable,
        services: Arc::new(sample_services()),
        script: Arc::new(Mutex::new(script.into())),
        version: Arc::new(Mutex::new(1)),
        log: log.clone(),
    };
    let app = Router::new()
        .route("/api/estates/{id}/observations", post(berth_observations))
        .route("/api/estates/{id}/file", get(berth_file))
        .with_state(state);
    (serve(app).await, log)
}

fn authorised(h: &HeaderMap) -> bool {
    h.get("authorization").and_then(|v| v.to_str().ok()) == Some(&format!("Bearer {TOKEN}"))
}

fn problem(status: StatusCode, error: &str, message: &str, details: Value) -> Response {
    (
        status,
        Json(json!({"error": error, "message": message, "details": details})),
    )
        .into_response()
}

async fn berth_file(State(s): State<BerthState>, Path(id): Path<String>, h: HeaderMap) -> Response {
    if !authorised(&h) {
        return problem(
            StatusCode::UNAUTHORIZED,
            "unauthenticated",
            "wrong token",
            Value::Null,
        );
    }
    if id != "sample" {
        return problem(
            StatusCode::NOT_FOUND,
            "not_found",
            "no such estate",
            Value::Null,
        );
    }
    if !s.readable {
        return problem(
            StatusCode::FORBIDDEN,
            "forbidden",
            "an agent token may only post observations",
            Value::Null,
        );
    }
    (StatusCode::OK, berth::serve::SAMPLE_ESTATE).into_response()
}

async fn berth_observations(
    State(s): State<BerthState>,
    Path(id): Path<String>,
    h: HeaderMap,
    Json(body): Json<Value>,
) -> Response {
    let answer = observations_answer(&s, &id, &h, &body);
    let status = answer.status().as_u16();
    s.log
        .posts
        .lock()
        .unwrap()
        .push((body, status, std::time::Instant::now()));
    answer
}

fn observations_answer(s: &BerthState, id: &str, h: &HeaderMap, body: &Value) -> Response {
    if !authorised(h) {
        return problem(
            StatusCode::UNAUTHORIZED,
            "unauthenticated",
            "wrong token",
            Value::Null,
        );
    }
    if id != "sample" {
        return problem(
            StatusCode::NOT_FOUND,
            "not_found",
            "no such estate",
            Value::Null,
        );
    }
    if let Some((status, retry_after)) = s.script.lock().unwrap().pop_front() {
        let mut r = problem(
            StatusCode::from_u16(status).unwrap(),
            if status == 429 {
                "rate_limited"
            } else {
                "unavailable"
            },
            "scripted failure",
            Value::Null,
        );
        if let Some(ra) = retry_after {
            r.headers_mut()
                .insert("retry-after", ra.to_string().parse().unwrap());
        }
        return r;
    }
    let batch_id = body["batch_id"].as_str().unwrap_or_default().to_string();
    let obs = body["observations"].clone();
    let mut applied = s.log.applied.lock().unwrap();
    let mut version = s.version.lock().unwrap();
    if let Some(prev) = applied.get(&batch_id) {
        if *prev == obs {
            return Json(
                json!({"estate": id, "batch_id": batch_id, "version": *version,
                               "applied": 0, "duplicate": true}),
            )
            .into_response();
        }
        return problem(
            StatusCode::CONFLICT,
            "conflict",
            "batch id used with another body",
            Value::Null,
        );
    }
    let mut errors = vec![];
    for (i, o) in obs.as_array().unwrap().iter().enumerate() {
        // A covered service the estate lacks, as the server refuses it.
        if o["fact"] == "traffic" && o.get("cluster").is_none() {
            let sid = o["service"].as_str().unwrap();
            if !s.services.contains(sid) {
                errors.push(
                    json!({"path": format!("/observations/{i}/service"), "line": null,
                                   "message": format!("no service {sid:?} in this estate")}),
                );
            }
        }
        if o["fact"].as_str().unwrap().starts_with("flow_") {
            for field in ["from", "to"] {
                let sid = o[field].as_str().unwrap();
                if !s.services.contains(sid) {
                    errors.push(
                        json!({"path": format!("/observations/{i}/{field}"), "line": null,
                                       "message": format!("no service {sid:?} in this estate")}),
                    );
                }
            }
        }
    }
    if !errors.is_empty() {
        return problem(
            StatusCode::UNPROCESSABLE_ENTITY,
            "invalid",
            &format!("{} observations refused; nothing was applied", errors.len()),
            json!({"errors": errors}),
        );
    }
    *version += 1;
    let n = obs.as_array().unwrap().len();
    applied.insert(batch_id.clone(), obs);
    Json(
        json!({"estate": id, "batch_id": batch_id, "version": *version,
                "applied": n, "duplicate": false}),
    )
    .into_response()
}

// ---- processes ----------------------------------------------------------

/// The `berth` binary, killed if the test ends (or panics) first.
pub fn berth() -> tokio::process::Command {
    let mut c = tokio::process::Command::new(env!("CARGO_BIN_EXE_berth"));
    c.kill_on_drop(true)
        .env_remove("BERTH_TOKEN")
        .env_remove("BERTH_SERVER")
        .env("RUST_LOG", "info");
    c
}

/// Run to completion: (exit code, stdout, stderr).
pub async fn run(mut c: tokio::process::Command) -> (i32, String, String) {
    let out = tokio::time::timeout(std::time::Duration::from_secs(60), c.output())
        .await
        .expect("berth finishes within a minute")
        .expect("berth runs");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8(out.stdout).unwrap(),
        String::from_utf8(out.stderr).unwrap(),
    )
}

/// Send SIGTERM to a child we started.
pub fn terminate(child: &tokio::process::Child) {
    let pid = child.id().expect("still running");
    let status = std::process::Command::new("kill")
        .args(["-TERM", &pid.to_string()])
        .status()
        .unwrap();
    assert!(status.success());
}

// ---- a real server --------------------------------------------------------

/// The bootstrap administrator token of [`RealBerth`] (32+ characters).
pub const ADMIN_TOKEN: &str = "test-admin-token-0123456789abcdef0123";

/// A real `berth serve` on a free loopback port with a fresh SQLite
/// database seeded with the sample estate; killed when dropped.
pub struct RealBerth {
    pub url: String,
    /// Everything it logged so far.
    pub log: Arc<Mutex<String>>,
    http: reqwest::Client,
    child: tokio::process::Child,
    dir: tempfile::TempDir,
}

impl RealBerth {
    pub async fn start() -> RealBerth {
        RealBerth::start_in(tempfile::tempdir().unwrap(), "127.0.0.1:0").await
    }

    /// Stop this server (SIGKILL: nothing is flushed on the way out) and,
    /// `down` later, start another on the same address and data
    /// directory, as a crash and a restart by the orchestrator would.
    pub async fn restart(mut self, down: std::time::Duration) -> RealBerth {
        let _ = self.child.kill().await;
        tokio::time::sleep(down).await;
        let listen = self.url.trim_start_matches("http://").to_string();
        let dir = std::mem::replace(&mut self.dir, tempfile::tempdir().unwrap());
        drop(self);
        // The port is free again once the process is gone.
        RealBerth::start_in(dir, &listen).await
    }

    async fn start_in(dir: tempfile::TempDir, listen: &str) -> RealBerth {
        use tokio::io::{AsyncBufReadExt, BufReader};
        let mut child = berth()
            .args(["serve", "--listen", listen, "--data-dir"])
            .arg(dir.path())
            // The sample as written: the tests' observations are dated
            // just after its designed time.
            .args(["--sample-at", "2026-11-30T04:05:00Z"])
            .env("BERTH_ADMIN_TOKEN", ADMIN_TOKEN)
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        // The address is in the log ("listening on http://…"); the log is
        // read to the end in the background so the pipe never fills.
        let mut lines = BufReader::new(child.stderr.take().unwrap()).lines();
        let log = Arc::new(Mutex::new(String::new()));
        let url = tokio::time::timeout(std::time::Duration::from_secs(30), async {
            while let Some(line) = lines.next_line().await.unwrap() {
                log.lock().unwrap().push_str(&line);
                log.lock().unwrap().push('\n');
                if let Some(i) = line.find("listening on http://") {
                    let rest = &line[i + "listening on ".len()..];
                    return rest
                        .split(|c: char| c.is_whitespace() || c == '\x1b')
                        .next()
                        .unwrap()
                        .to_string();
                }
            }
            panic!("berth serve exited:\n{}", log.lock().unwrap());
        })
        .await
        .expect("berth serve listens within 30 s");
        let sink = log.clone();
        tokio::spawn(async move {
            while let Ok(Some(line)) = lines.next_line().await {
                sink.lock().unwrap().push_str(&line);
                sink.lock().unwrap().push('\n');
            }
        });
        RealBerth {
            url,
            log,
            http: reqwest::Client::new(),
            child,
            dir,
        }
    }

    /// An agent token scoped to the sample estate and every one of its
    /// clusters (agent tokens name their clusters, issue 37), created as
    /// an admin would.
    pub async fn agent_token(&self, name: &str) -> String {
        let clusters: Vec<Value> = self.estate_file().await["clusters"]
            .as_array()
            .expect("an estate has clusters")
            .iter()
            .map(|c| c["id"].clone())
            .collect();
        self.token(json!({"name": name, "role": "agent", "estate": "sample", "clusters": clusters}))
            .await
    }

    /// A token created by the administrator with this body.
    pub async fn token(&self, body: Value) -> String {
        let r = self
            .http
            .post(format!("{}/api/tokens", self.url))
            .bearer_auth(ADMIN_TOKEN)
            .json(&body)
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 201);
        r.json::<Value>().await.unwrap()["token"]
            .as_str()
            .unwrap()
            .to_string()
    }

    /// The sample estate's file, as exported.
    pub async fn estate_file(&self) -> Value {
        self.get("/api/estates/sample/file").await
    }

    /// `GET path` as the administrator: the JSON answer (200 expected).
    pub async fn get(&self, path: &str) -> Value {
        let r = self
            .http
            .get(format!("{}{path}", self.url))
            .bearer_auth(ADMIN_TOKEN)
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 200, "GET {path}");
        r.json().await.unwrap()
    }
}

/// The flow `from` → `to` of an estate file.
pub fn flow<'a>(estate: &'a Value, from: &str, to: &str) -> &'a Value {
    estate["flows"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["from"] == from && f["to"] == to)
        .unwrap_or_else(|| panic!("no flow {from} → {to}"))
}

/// SIGTERM an agent, then its exit status and stderr (the log), within
/// 10 s.
pub async fn stop_agent(mut child: tokio::process::Child) -> (i32, String) {
    use tokio::io::AsyncReadExt;
    terminate(&child);
    let status = tokio::time::timeout(std::time::Duration::from_secs(10), child.wait())
        .await
        .expect("the agent stops within 10 s of SIGTERM")
        .unwrap();
    let mut log = String::new();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut log)
        .await
        .unwrap();
    (status.code().unwrap_or(-1), log)
}
