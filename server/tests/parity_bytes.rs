//! Same input, same bytes, whoever runs the engine: for every operation,
//! the `result` the server sends, what `berth … --format json` prints and
//! what the WebAssembly build returns are byte for byte the same, on the
//! sample estate (default and non-default policy) and on 50 generated ones.
//!
//! Operations: advice, advice with Why, the decider request (preview), a
//! placement, a what-if projection, a decider comparison and the change
//! plan (JSON, and Markdown: the server's attachment and the CLI's stdout
//! are the engine's bytes alone). Estate errors
//! travel in three different envelopes (a 422 body, `file:line:` lines on
//! stderr, a JSON array), so for them the test compares what each says:
//! the same (path, line, message) for every error.
//!
//! The input of all three is the estate as the server stores it (its
//! canonical document, `GET …/file`): that is what the server evaluates.
//!
//! Two things are not bytes of the engine and are set aside, each named
//! where it is: the CLI's final newline, and the run times the server and
//! the CLI measure for the built-in deciders of a comparison (the engine
//! has no clock; WebAssembly reports `null`).

mod support;

#[path = "../../engine-wasm/tests/common/wasm_pkg.rs"]
mod wasm_pkg;

use std::path::{Path, PathBuf};
use std::process::Command;

use axum::body::Body;
use axum::http::{header, Method, Request, StatusCode};
use serde_json::{json, Value};
use tower::ServiceExt;

use support::{Backend, TestDb};

const ADMIN: &str = "admin-token-for-tests-0123456789abcdef";
const NOW: &str = "2026-11-30T04:05:00Z";
const NON_DEFAULT_POLICY: &str = r#"{"cross_site_weight": 3, "min_gain_points": 1}"#;
/// Generated estates beside the sample (the issue asks for at least 50).
const GENERATED: u64 = 50;

struct Server {
    app: axum::Router,
    _db: TestDb,
}

impl Server {
    async fn new() -> Server {
        let db = TestDb::new(Backend::Sqlite).await;
        let opts = berth::serve::ServeOptions {
            listen: "127.0.0.1:0".parse().unwrap(),
            database_url: Some(db.url.clone()),
            data_dir: std::env::temp_dir(),
            admin_token: Some(ADMIN.into()),
            seed: false,
            sample_at: Some(berth::serve::sample_designed_at()),
            max_connections: 4,
            secret_key: None,
            secret_key_file: None,
            decider_allow: Vec::new(),
            driver_every_s: None,
            history_retention_days: berth::external::driver::DEFAULT_HISTORY_RETENTION_DAYS,
            net: Default::default(),
            // Hundreds of computations in a few seconds, all by the one
            // administrator token: far past the per-caller engine limit a
            // server has by default (60 a minute), which is not under test.
            config: berth::Config {
                engine_runs_per_minute: 1_000_000,
                ..berth::Config::default()
            },
        };
        let (state, _) = berth::serve::prepare(&opts).await.expect("server prepares");
        Server {
            app: berth::http::app(state),
            _db: db,
        }
    }

    async fn call(
        &self,
        method: Method,
        path: &str,
        body: impl Into<Body>,
    ) -> (StatusCode, Vec<u8>) {
        let req = Request::builder()
            .method(method)
            .uri(path)
            .header(header::AUTHORIZATION, format!("Bearer {ADMIN}"))
            .header(header::CONTENT_TYPE, "application/json")
            .body(body.into())
            .unwrap();
        let resp = self.app.clone().oneshot(req).await.unwrap();
        let status = resp.status();
        let bytes = axum::body::to_bytes(resp.into_body(), usize::MAX)
            .await
            .unwrap();
        (status, bytes.to_vec())
    }

    /// The exact bytes of an envelope's `result`, checked against the
    /// envelope's own `result_digest`.
    async fn result(&self, method: Method, path: &str, body: impl Into<Body>) -> String {
        let (status, bytes) = self.call(method, path, body).await;
        let text = String::from_utf8(bytes).expect("UTF-8");
        assert_eq!(status, StatusCode::OK, "{path}: {text}");
        let result = result_of(&text);
        let digest = text
            .split_once("\"result_digest\":\"")
            .and_then(|(_, rest)| rest.split_once('"'))
            .map(|(d, _)| d)
            .expect("envelope has result_digest");
        assert_eq!(
            digest,
            berth_sha256(result.as_bytes()),
            "{path}: result_digest is not the digest of the result bytes"
        );
        result.to_string()
    }
}

/// The `result` member of an envelope: it is the last member, after
/// `result_digest` (the result itself may hold members named `result`).
fn result_of(envelope: &str) -> &str {
    let after = envelope.find("\"result_digest\":").expect("an envelope");
    let start = after
        + envelope[after..]
            .find(",\"result\":")
            .expect("envelope has result")
        + ",\"result\":".len();
    assert!(envelope.ends_with('}'));
    &envelope[start..envelope.len() - 1]
}

fn berth_sha256(bytes: &[u8]) -> String {
    use sha2::{Digest, Sha256};
    hex::encode(Sha256::digest(bytes))
}

fn cli(args: &[&str]) -> String {
    let stdout = cli_raw(args);
    // The one byte that is the terminal's, not the engine's.
    stdout
        .strip_suffix('\n')
        .unwrap_or_else(|| panic!("berth {args:?}: stdout does not end in a newline"))
        .to_string()
}

/// stdout exactly (a Markdown plan or manifests are printed as the engine
/// wrote them, their own last newline included).
fn cli_raw(args: &[&str]) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_berth"))
        .args(args)
        .output()
        .expect("berth runs");
    assert!(
        out.status.success(),
        "berth {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).expect("UTF-8")
}

/// Built-in deciders' run times are measured by whoever runs them; the
/// engine's bytes have `null` there.
fn without_run_times(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut rest = s;
    const KEY: &str = "\"run_time_ms\":";
    while let Some(i) = rest.find(KEY) {
        out.push_str(&rest[..i + KEY.len()]);
        rest = &rest[i + KEY.len()..];
        let end = rest.find([',', '}']).expect("a value ends at , or }");
        out.push_str("null");
        rest = &rest[end..];
    }
    out.push_str(rest);
    out
}

/// One estate's inputs and what each side produced for each operation.
struct Case {
    id: String,
    /// The canonical document, as the server stores it.
    file: PathBuf,
    text: String,
    policy: Option<(PathBuf, String)>,
    service: String,
    scenario: (PathBuf, String),
    responses: Vec<(String, PathBuf, String)>,
}

const OPS: [&str; 8] = [
    "advice", "why", "preview", "place", "whatif", "compare", "plan", "plan-md",
];

fn scenario_for(doc: &Value) -> String {
    let services = doc["services"].as_array().unwrap();
    let clusters = doc["clusters"].as_array().unwrap();
    let first = services[0]["id"].as_str().unwrap();
    let last_cluster = clusters.last().unwrap()["id"].as_str().unwrap();
    let first_cluster = clusters[0]["id"].as_str().unwrap();
    serde_json::to_string_pretty(&json!({
        "schema": 1,
        "name": "parity",
        "steps": [
            {"move": {"service": first, "to": last_cluster}},
            {"evacuate": first_cluster},
        ],
    }))
    .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn server_cli_and_webassembly_write_the_same_bytes() {
    let server = Server::new().await;
    let dir = tempfile::tempdir().unwrap();
    let root = wasm_pkg::workspace_root();

    // The estates: the sample twice (default and a non-default policy),
    // then generated ones.
    let sample = std::fs::read_to_string(root.join("examples/estates/sample.json")).unwrap();
    let mut inputs: Vec<(String, String, Option<&str>)> = vec![
        ("sample".into(), sample.clone(), None),
        ("sample-p".into(), sample, Some(NON_DEFAULT_POLICY)),
    ];
    for seed in 1..=GENERATED {
        let file = berth_engine::gen::file(&berth_engine::gen::Shape::small(seed));
        inputs.push((
            format!("gen-{seed}"),
            serde_json::to_string(&file).unwrap(),
            None,
        ));
    }
    let reply =
        std::fs::read_to_string(root.join("examples/responses/sample-ops-team.json")).unwrap();

    let mut cases = Vec::new();
    for (id, text, policy) in inputs {
        let (status, body) = server
            .call(Method::POST, &format!("/api/estates?id={id}"), text)
            .await;
        assert_eq!(
            status,
            StatusCode::CREATED,
            "{}",
            String::from_utf8_lossy(&body)
        );
        let policy = match policy {
            Some(p) => {
                let (status, body) = server
                    .call(
                        Method::PUT,
                        &format!("/api/estates/{id}/policy"),
                        p.to_string(),
                    )
                    .await;
                assert_eq!(status, StatusCode::OK, "{}", String::from_utf8_lossy(&body));
                let path = dir.path().join(format!("{id}.policy.json"));
                std::fs::write(&path, p).unwrap();
                Some((path, p.to_string()))
            }
            None => None,
        };
        let (status, doc) = server
            .call(
                Method::GET,
                &format!("/api/estates/{id}/file"),
                Body::empty(),
            )
            .await;
        assert_eq!(status, StatusCode::OK);
        let doc_text = String::from_utf8(doc).unwrap();
        let file = dir.path().join(format!("{id}.json"));
        std::fs::write(&file, &doc_text).unwrap();
        let doc: Value = serde_json::from_str(&doc_text).unwrap();
        let scenario_text = scenario_for(&doc);
        let scenario = dir.path().join(format!("{id}.scenario.json"));
        std::fs::write(&scenario, &scenario_text).unwrap();
        let mut responses = Vec::new();
        if id.starts_with("sample") {
            let path = dir.path().join("ops-team.json");
            std::fs::write(&path, &reply).unwrap();
            responses.push(("ops-team".to_string(), path, reply.clone()));
        }
        // The middle service by id: generated estates and the sample
        // alike have one that can go somewhere and one that cannot.
        let services = doc["services"].as_array().unwrap();
        let service = services[services.len() / 2]["id"]
            .as_str()
            .unwrap()
            .to_string();
        cases.push(Case {
            id,
            file,
            text: doc_text,
            policy,
            service,
            scenario: (scenario, scenario_text),
            responses,
        });
    }

    // The server.
    let mut from_server: Vec<Vec<String>> = Vec::new();
    for c in &cases {
        let base = format!("/api/estates/{}", c.id);
        let compare_body = json!({
            "responses": c.responses.iter()
                .map(|(n, _, t)| (n.clone(), serde_json::from_str::<Value>(t).unwrap()))
                .collect::<serde_json::Map<_, _>>(),
        })
        .to_string();
        let q = format!("now={NOW}");
        from_server.push(vec![
            server
                .result(Method::GET, &format!("{base}/advice?{q}"), Body::empty())
                .await,
            server
                .result(
                    Method::GET,
                    &format!("{base}/advice?{q}&why=true"),
                    Body::empty(),
                )
                .await,
            server
                .result(Method::GET, &format!("{base}/preview?{q}"), Body::empty())
                .await,
            server
                .result(
                    Method::GET,
                    &format!("{base}/place/{}?{q}", c.service),
                    Body::empty(),
                )
                .await,
            server
                .result(
                    Method::POST,
                    &format!("{base}/whatif?{q}"),
                    c.scenario.1.clone(),
                )
                .await,
            server
                .result(Method::POST, &format!("{base}/compare?{q}"), compare_body)
                .await,
            server
                .result(Method::GET, &format!("{base}/plan?{q}"), Body::empty())
                .await,
            {
                let path = format!("{base}/plan?{q}&format=markdown");
                let (status, bytes) = server.call(Method::GET, &path, Body::empty()).await;
                assert_eq!(status, StatusCode::OK, "{path}");
                String::from_utf8(bytes).expect("UTF-8")
            },
        ]);
    }

    // The CLI, on the same document.
    let mut from_cli: Vec<Vec<String>> = Vec::new();
    for c in &cases {
        let file = c.file.to_str().unwrap();
        let mut common: Vec<String> = vec!["--now".into(), NOW.into()];
        if let Some((p, _)) = &c.policy {
            common.extend(["--policy".into(), p.display().to_string()]);
        }
        let with = |head: &[&str], json: bool| {
            let mut a: Vec<String> = head.iter().map(|s| s.to_string()).collect();
            a.extend(common.iter().cloned());
            if json {
                a.extend(["--format".into(), "json".into()]);
            }
            a
        };
        let run = |a: Vec<String>| cli(&a.iter().map(String::as_str).collect::<Vec<_>>());
        let mut compare = with(&["compare", file], true);
        for (n, p, _) in &c.responses {
            compare.extend(["--response".into(), format!("{n}={}", p.display())]);
        }
        from_cli.push(vec![
            run(with(&["advise", file], true)),
            run(with(&["advise", file, "--why"], true)),
            run(with(&["preview", file], false)),
            run(with(&["place", file, &c.service], true)),
            run(with(
                &["whatif", file, c.scenario.0.to_str().unwrap()],
                true,
            )),
            run(compare),
            run(with(&["plan", "export", file], true)),
            {
                let mut a = with(&["plan", "export", file], false);
                a.extend(["--format".into(), "markdown".into()]);
                cli_raw(&a.iter().map(String::as_str).collect::<Vec<_>>())
            },
        ]);
    }

    // WebAssembly, in one Node process.
    let now = berth_engine::estate::parse_time(NOW).unwrap();
    let mut batch = Vec::new();
    for c in &cases {
        let policy = c.policy.as_ref().map_or("", |(_, p)| p.as_str());
        let responses = json!(c
            .responses
            .iter()
            .map(|(n, _, t)| (n.clone(), Value::String(t.clone())))
            .collect::<serde_json::Map<_, _>>());
        let responses = if c.responses.is_empty() {
            String::new()
        } else {
            responses.to_string()
        };
        batch.extend([
            json!(["advise_json", c.text, policy, now]),
            json!(["advise_why_json", c.text, policy, now]),
            json!(["preview_json", c.text, policy, now]),
            json!(["place_json", c.text, c.service, policy, now]),
            json!(["whatif_json", c.text, c.scenario.1, policy, now]),
            json!(["compare_json", c.text, responses, policy, now]),
            json!(["plan_json", c.text, policy, now, "json", "", ""]),
            json!(["plan_json", c.text, policy, now, "markdown", "", ""]),
        ]);
    }
    let from_wasm = run_wasm_batch(dir.path(), &batch);
    assert_eq!(from_wasm.len(), cases.len() * OPS.len());

    let mut compared = 0;
    for (i, c) in cases.iter().enumerate() {
        for (j, op) in OPS.iter().enumerate() {
            let (s, l, w) = (
                &from_server[i][j],
                &from_cli[i][j],
                &from_wasm[i * OPS.len() + j],
            );
            let (s, l) = if *op == "compare" {
                (without_run_times(s), without_run_times(l))
            } else {
                (s.clone(), l.clone())
            };
            assert!(
                w.starts_with(if *op == "plan-md" { '#' } else { '{' }),
                "{} {op}: WebAssembly refused: {w}",
                c.id
            );
            assert_same(&format!("{} {op}: server vs CLI", c.id), &s, &l);
            assert_same(&format!("{} {op}: server vs WebAssembly", c.id), &s, w);
            compared += 1;
        }
    }
    assert_eq!(compared, (GENERATED as usize + 2) * OPS.len());
    eprintln!("{compared} results byte-identical across server, CLI and WebAssembly");
}

/// Estate errors: the same (path, line, message) from all three.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn estate_errors_say_the_same_everywhere() {
    let server = Server::new().await;
    let dir = tempfile::tempdir().unwrap();
    let bad = r#"{
  "schema": 1,
  "name": "broken",
  "sites": [{"id": "a", "lat": 91, "lon": 0}],
  "clusters": [{"id": "c1", "site": "nowhere"}],
  "services": [],
  "flows": []
}"#;
    let (status, body) = server
        .call(Method::POST, "/api/estates?id=broken", bad)
        .await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY);
    let body: Value = serde_json::from_slice(&body).unwrap();
    let triple = |v: &Value| {
        (
            v["path"].as_str().unwrap().to_string(),
            v["line"].as_u64(),
            v["message"].as_str().unwrap().to_string(),
        )
    };
    let from_server: Vec<_> = body["details"]["errors"]
        .as_array()
        .unwrap()
        .iter()
        .map(triple)
        .collect();
    assert!(from_server.len() >= 2, "{body}");

    let file = dir.path().join("broken.json");
    std::fs::write(&file, bad).unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_berth"))
        .args(["validate", file.to_str().unwrap()])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8(out.stderr).unwrap();
    let shown = file.display().to_string();
    let from_cli: Vec<_> = stderr
        .lines()
        .skip(1)
        .map(|l| {
            let rest = l.strip_prefix(&format!("{shown}:")).expect("file: prefix");
            let (line, rest) = match rest.split_once(": ") {
                Some((n, r)) if n.parse::<u64>().is_ok() => (n.parse().ok(), r),
                _ => (None, rest.trim_start()),
            };
            let (path, message) = rest.split_once(": ").expect("path: message");
            (path.to_string(), line, message.to_string())
        })
        .collect();
    assert_eq!(from_cli, from_server, "{stderr}");

    let wasm = run_wasm_batch(dir.path(), &[json!(["advise_json", bad, "", 0])]);
    let errors: Value = serde_json::from_str(&wasm[0]).unwrap();
    let from_wasm: Vec<_> = errors
        .as_array()
        .unwrap()
        .iter()
        .map(|e| {
            let mut e = e.clone();
            if e["path"] == "" {
                e["path"] = json!("/");
            }
            triple(&e)
        })
        .collect();
    assert_eq!(from_wasm, from_server);
}

fn run_wasm_batch(dir: &Path, batch: &[Value]) -> Vec<String> {
    let pkg = wasm_pkg::pkg("pkg-bytes");
    let cases = dir.join(format!("cases-{}.json", batch.len()));
    std::fs::write(&cases, serde_json::to_string(batch).unwrap()).unwrap();
    let script = wasm_pkg::workspace_root().join("engine-wasm/tests/parity.cjs");
    let out = wasm_pkg::run(
        Command::new("node")
            .arg(script)
            .arg(pkg)
            .arg("batch")
            .arg(&cases),
        "node parity.cjs batch",
        wasm_pkg::INSTALL_HINT,
    )
    .unwrap_or_else(|e| panic!("{e}"));
    serde_json::from_slice(&out.stdout).expect("a JSON array of strings")
}

#[track_caller]
fn assert_same(what: &str, a: &str, b: &str) {
    if a == b {
        return;
    }
    let at = a
        .bytes()
        .zip(b.bytes())
        .position(|(x, y)| x != y)
        .unwrap_or(a.len().min(b.len()));
    let around = |s: &str| {
        let from = at.saturating_sub(80);
        let to = (at + 80).min(s.len());
        s.get(from..to).unwrap_or("").to_string()
    };
    panic!(
        "{what}: bytes differ at {at} ({} vs {} bytes)\n  left:  {:?}\n  right: {:?}",
        a.len(),
        b.len(),
        around(a),
        around(b)
    );
}
