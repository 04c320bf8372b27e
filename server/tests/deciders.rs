//! External deciders through the API, on SQLite and PostgreSQL: who may
//! register them, what is refused, that secrets are write-only and sealed
//! at rest, that a comparison calls the stored URL with exactly the
//! Preview's bytes, signed (twice during a rotation), and how replies that
//! are partly bad, busy or broken end up; and the advice driver's passes,
//! backoff, pruning and health surface; and the advice history its
//! snapshots make (series, what changed, retention).
//!
//! The deciders here are real HTTP servers on 127.0.0.1, which the server
//! is allowed to reach through `decider_allow` (as an administrator would
//! set `--decider-allow`).

mod support;

use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::body::Body;
use axum::http::{header, HeaderMap, Method, Request, StatusCode};
use axum::Router;
use serde_json::{json, Value};
use tower::ServiceExt;

use berth::external::driver::{self, DriverConfig};
use berth::external::signing;
use support::{Backend, TestDb};

const ADMIN: &str = "admin-token-for-tests-0123456789abcdef";
const NOW: &str = "2026-11-30T04:05:00Z";
/// The at-rest key of these tests (32 bytes of base64).
const SECRET_KEY: &str = "AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8=";

struct TestApp {
    app: Router,
    state: berth::AppState,
    _db: TestDb,
}

async fn app(b: Backend, key: bool) -> TestApp {
    let db = TestDb::new(b).await;
    let mut opts = berth::serve::ServeOptions::new(
        "127.0.0.1:0".parse().unwrap(),
        Some(db.url.clone()),
        std::env::temp_dir(),
    );
    opts.admin_token = Some(ADMIN.into());
    opts.max_connections = 4;
    opts.secret_key = key.then(|| SECRET_KEY.to_string());
    opts.decider_allow = vec!["127.0.0.1/32".into()];
    opts.sample_at = Some(berth::serve::sample_designed_at());
    let (state, _) = berth::serve::prepare(&opts).await.expect("prepare");
    TestApp {
        app: berth::http::app(state.clone()),
        state,
        _db: db,
    }
}

impl TestApp {
    async fn call(
        &self,
        token: &str,
        method: Method,
        path: &str,
        body: Option<Value>,
    ) -> (StatusCode, Value) {
        let mut req = Request::builder()
            .method(method)
            .uri(path)
            .header(header::AUTHORIZATION, format!("Bearer {token}"));
        if body.is_some() {
            req = req.header(header::CONTENT_TYPE, "application/json");
        }
        let body = body.map_or(Body::empty(), |b| Body::from(b.to_string()));
        let resp = self
            .app
            .clone()
            .oneshot(req.body(body).unwrap())
            .await
            .unwrap();
        let status = resp.status();
        let bytes = axum::body::to_bytes(resp.into_body(), usize::MAX)
            .await
            .unwrap();
        let v = if bytes.is_empty() {
            Value::Null
        } else {
            serde_json::from_slice(&bytes)
                .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&bytes)))
        };
        (status, v)
    }

    /// A GET's body as text, exactly as served.
    async fn raw(&self, path: &str) -> String {
        let req = Request::builder()
            .uri(path)
            .header(header::AUTHORIZATION, format!("Bearer {ADMIN}"))
            .body(Body::empty())
            .unwrap();
        let resp = self.app.clone().oneshot(req).await.unwrap();
        assert_eq!(resp.status(), StatusCode::OK);
        let bytes = axum::body::to_bytes(resp.into_body(), usize::MAX)
            .await
            .unwrap();
        String::from_utf8(bytes.to_vec()).unwrap()
    }

    async fn token(&self, role: &str) -> String {
        let (s, v) = self
            .call(
                ADMIN,
                Method::POST,
                "/api/tokens",
                Some(json!({"name": role, "role": role})),
            )
            .await;
        assert_eq!(s, StatusCode::CREATED, "{v}");
        v["token"].as_str().unwrap().to_string()
    }
}

/// What a fake decider saw of one call.
#[derive(Clone, Debug)]
struct Seen {
    headers: HeaderMap,
    body: Vec<u8>,
}

/// How the fake decider answers.
#[derive(Clone)]
struct Script {
    status: u16,
    body: String,
    retry_after: Option<&'static str>,
    /// The reply's `Content-Type`; `None` sends none.
    content_type: Option<&'static str>,
}

#[derive(Clone)]
struct Fake {
    seen: Arc<Mutex<Vec<Seen>>>,
    script: Arc<Mutex<Script>>,
}

impl Fake {
    async fn start(script: Script) -> (Fake, String) {
        let fake = Fake {
            seen: Arc::default(),
            script: Arc::new(Mutex::new(script)),
        };
        let f = fake.clone();
        let app = Router::new().fallback(move |headers: HeaderMap, body: axum::body::Bytes| {
            let f = f.clone();
            async move {
                f.seen.lock().unwrap().push(Seen {
                    headers,
                    body: body.to_vec(),
                });
                let s = f.script.lock().unwrap().clone();
                let mut r = axum::response::Response::builder().status(s.status);
                if let Some(ct) = s.content_type {
                    r = r.header("content-type", ct);
                }
                if let Some(ra) = s.retry_after {
                    r = r.header("retry-after", ra);
                }
                r.body(Body::from(s.body)).unwrap()
            }
        });
        let l = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = l.local_addr().unwrap();
        tokio::spawn(async move { axum::serve(l, app).await.unwrap() });
        (fake, format!("http://{addr}/decide"))
    }
    fn set(&self, s: Script) {
        *self.script.lock().unwrap() = s;
    }
    fn calls(&self) -> Vec<Seen> {
        self.seen.lock().unwrap().clone()
    }
}

fn ok(body: Value) -> Script {
    Script {
        status: 200,
        body: body.to_string(),
        retry_after: None,
        content_type: Some("application/json"),
    }
}

macro_rules! both {
    ($name:ident) => {
        mod $name {
            #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn sqlite() {
                super::$name(super::Backend::Sqlite).await
            }
            #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn postgres() {
                super::$name(super::Backend::Postgres).await
            }
        }
    };
}

both!(registration_is_admin_only_checked_whole_and_secrets_are_write_only);
async fn registration_is_admin_only_checked_whole_and_secrets_are_write_only(b: Backend) {
    let t = app(b, true).await;
    let operator = t.token("operator").await;
    let viewer = t.token("viewer").await;
    let good = json!({"name": "ranker", "url": "http://127.0.0.1:9/decide", "timeout_ms": 2000, "generate_secret": true});
    for who in [&operator, &viewer] {
        let (s, _) = t
            .call(who, Method::POST, "/api/deciders", Some(good.clone()))
            .await;
        assert_eq!(s, StatusCode::FORBIDDEN);
    }
    // Every field error at once, each with its path; nothing written.
    let (s, v) = t
        .call(
            ADMIN,
            Method::POST,
            "/api/deciders",
            Some(json!({"name": "Baseline!", "url": "ftp://x/", "timeout_ms": 26000, "interval_s": 5})),
        )
        .await;
    assert_eq!(s, StatusCode::UNPROCESSABLE_ENTITY, "{v}");
    let paths: Vec<&str> = v["details"]["errors"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["path"].as_str().unwrap())
        .collect();
    assert_eq!(
        paths,
        ["/name", "/url", "/timeout_ms", "/interval_s"],
        "{v}"
    );
    for (field, value, needle) in [
        (
            "url",
            json!("http://user:pw@127.0.0.1/"),
            "user name or password",
        ),
        ("url", json!("file:///etc/passwd"), "http"),
        // Never reachable, whatever the allow-list: refused now, not at
        // every call.
        (
            "url",
            json!("http://169.254.169.254/latest/meta-data/"),
            "169.254.169.254 cannot be called",
        ),
        (
            "url",
            json!("http://[::ffff:169.254.169.254]/"),
            "cannot be called",
        ),
        // Loopback outside the allow-list (127.0.0.1/32 here): refused,
        // saying which flag would open it.
        (
            "url",
            json!("http://127.0.0.2:8000/"),
            "127.0.0.2 cannot be called",
        ),
        (
            "url",
            json!("http://127.0.0.2:8000/"),
            "starting the server with --decider-allow 127.0.0.2/32",
        ),
        ("timeout_ms", json!(999), "1000 to 25000"),
        ("name", json!("heaviest-talker"), "built-in"),
    ] {
        let mut body = good.clone();
        body[field] = value;
        let (s, v) = t
            .call(ADMIN, Method::POST, "/api/deciders", Some(body))
            .await;
        assert_eq!(s, StatusCode::UNPROCESSABLE_ENTITY, "{field}: {v}");
        let msg = v["details"]["errors"][0]["message"]
            .as_str()
            .unwrap()
            .to_lowercase();
        assert!(msg.contains(needle), "{field}: {msg}");
    }
    let (_, v) = t
        .call(viewer.as_str(), Method::GET, "/api/deciders", None)
        .await;
    assert_eq!(v["deciders"], json!([]));

    // Registered: the secret is in this answer only.
    let (s, v) = t
        .call(ADMIN, Method::POST, "/api/deciders", Some(good.clone()))
        .await;
    assert_eq!(s, StatusCode::CREATED, "{v}");
    let secret = v["secret"].as_str().unwrap().to_string();
    assert!(secret.starts_with("whsec_"), "{secret}");
    let fingerprint = v["decider"]["secret_fingerprint"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(!secret.contains(&fingerprint) && !fingerprint.is_empty());
    let (s, _) = t
        .call(ADMIN, Method::POST, "/api/deciders", Some(good.clone()))
        .await;
    assert_eq!(s, StatusCode::CONFLICT);
    for path in ["/api/deciders", "/api/deciders/ranker"] {
        let (s, v) = t.call(&viewer, Method::GET, path, None).await;
        assert_eq!(s, StatusCode::OK);
        let text = v.to_string();
        assert!(
            !text.contains(&secret[6..]) && text.contains(&fingerprint),
            "{text}"
        );
    }
    // Sealed at rest: no column of the row holds the secret or its key.
    let raw: Vec<(String,)> = sqlx::query_as(
        "SELECT COALESCE(secret_ciphertext, '') || ' ' || COALESCE(secret_fingerprint, '') || ' ' || url FROM deciders",
    )
    .fetch_all(&t.state.db.pool)
    .await
    .unwrap();
    assert_eq!(raw.len(), 1);
    assert!(
        raw[0].0.starts_with("v1:") && !raw[0].0.contains(&secret[6..]),
        "{}",
        raw[0].0
    );

    // Edits: settings only; the name is the path's.
    let (s, v) = t
        .call(
            ADMIN,
            Method::PUT,
            "/api/deciders/ranker",
            Some(json!({"url": "https://127.0.0.1:9/v2", "timeout_ms": 25000, "enabled": false, "interval_s": 3600})),
        )
        .await;
    assert_eq!(s, StatusCode::OK, "{v}");
    assert_eq!(v["decider"]["enabled"], false);
    assert_eq!(v["decider"]["secret_fingerprint"], fingerprint.as_str());
    let (s, _) = t
        .call(
            &operator,
            Method::PUT,
            "/api/deciders/ranker",
            Some(json!({"url": "http://127.0.0.1/", "timeout_ms": 1000})),
        )
        .await;
    assert_eq!(s, StatusCode::FORBIDDEN);

    // Rotation: a new secret once, the old one listed until its overlap ends.
    let (s, v) = t
        .call(
            ADMIN,
            Method::POST,
            "/api/deciders/ranker/secret",
            Some(json!({"overlap_s": 600})),
        )
        .await;
    assert_eq!(s, StatusCode::OK, "{v}");
    let second = v["secret"].as_str().unwrap();
    assert_ne!(second, secret);
    assert_eq!(
        v["decider"]["previous_secret_fingerprint"],
        fingerprint.as_str()
    );
    assert!(v["decider"]["previous_secret_expires_at"].is_string());
    let (s, v) = t
        .call(
            ADMIN,
            Method::POST,
            "/api/deciders/ranker/secret",
            Some(json!({"overlap_s": 8 * 86400})),
        )
        .await;
    assert_eq!(s, StatusCode::UNPROCESSABLE_ENTITY, "{v}");
    let (s, _) = t
        .call(ADMIN, Method::DELETE, "/api/deciders/ranker/secret", None)
        .await;
    assert_eq!(s, StatusCode::NO_CONTENT);
    let (_, v) = t
        .call(ADMIN, Method::GET, "/api/deciders/ranker", None)
        .await;
    assert_eq!(v["decider"]["secret_fingerprint"], Value::Null);
    assert_eq!(v["decider"]["previous_secret_fingerprint"], Value::Null);
    let (s, _) = t
        .call(ADMIN, Method::DELETE, "/api/deciders/ranker", None)
        .await;
    assert_eq!(s, StatusCode::NO_CONTENT);
    let (s, _) = t
        .call(ADMIN, Method::DELETE, "/api/deciders/ranker", None)
        .await;
    assert_eq!(s, StatusCode::NOT_FOUND);
}

both!(without_a_secret_key_secrets_are_refused_in_words);
async fn without_a_secret_key_secrets_are_refused_in_words(b: Backend) {
    let t = app(b, false).await;
    let (s, v) = t
        .call(
            ADMIN,
            Method::POST,
            "/api/deciders",
            Some(json!({"name": "ranker", "url": "http://127.0.0.1:9/", "timeout_ms": 2000, "generate_secret": true})),
        )
        .await;
    assert_eq!(s, StatusCode::CONFLICT, "{v}");
    assert!(
        v["message"].as_str().unwrap().contains("BERTH_SECRET_KEY"),
        "{v}"
    );
    // Nothing half-written: the name is still free.
    let (_, v) = t.call(ADMIN, Method::GET, "/api/deciders", None).await;
    assert_eq!(v["deciders"], json!([]));
}

/// HMAC-SHA256, for checking signatures independently of the signing code.
fn hmac_hex(key: &[u8], parts: &[&[u8]]) -> String {
    use hmac::{Hmac, Mac};
    let mut m = Hmac::<sha2::Sha256>::new_from_slice(key).unwrap();
    for p in parts {
        m.update(p);
    }
    hex::encode(m.finalize().into_bytes())
}

both!(comparison_calls_the_stored_url_with_the_preview_bytes_signed);
async fn comparison_calls_the_stored_url_with_the_preview_bytes_signed(b: Backend) {
    let t = app(b, true).await;
    let operator = t.token("operator").await;
    // Half good, half bad: the good proposal is scored, the others refused
    // one by one.
    let reply = json!({"schema": 1, "proposals": [
        {"serviceId": "cart", "to": "c-fra-2", "reason": "nearer checkout"},
        {"serviceId": "no-such-service", "to": "c-fra-1", "reason": "typo"},
        {"serviceId": "shop-gateway", "reason": "no destination"}
    ]});
    let (fake, url) = Fake::start(ok(reply)).await;
    let (_, v) = t
        .call(
            ADMIN,
            Method::POST,
            "/api/deciders",
            Some(
                json!({"name": "ranker", "url": url, "timeout_ms": 3000, "generate_secret": true}),
            ),
        )
        .await;
    let secret = v["secret"].as_str().unwrap().to_string();
    let (s, v) = t
        .call(
            &operator,
            Method::POST,
            &format!("/api/estates/sample/compare?now={NOW}"),
            Some(json!({"external": ["ranker"]})),
        )
        .await;
    assert_eq!(s, StatusCode::OK, "{v}");
    let entries = v["result"]["deciders"].as_array().unwrap();
    let names: Vec<&str> = entries
        .iter()
        .map(|e| e["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        [
            "baseline",
            "heaviest-talker",
            "optimum",
            "optimum-capped",
            "local-search",
            "ranker"
        ]
    );
    let ranker = &entries[5];
    assert_eq!(ranker["kind"], "external");
    assert!(ranker["run_time_ms"].as_f64().unwrap() >= 0.0, "{ranker}");
    assert_eq!(ranker["refused"].as_array().unwrap().len(), 2, "{ranker}");
    assert_eq!(ranker["accepted_count"], 1, "{ranker}");
    assert_eq!(ranker["proposals"], 3, "{ranker}");

    // Exactly the Preview's bytes, to the stored URL, signed both ways.
    let calls = fake.calls();
    assert_eq!(calls.len(), 1);
    let (_, preview) = t
        .call(
            ADMIN,
            Method::GET,
            &format!("/api/estates/sample/preview?now={NOW}"),
            None,
        )
        .await;
    let sent: Value = serde_json::from_slice(&calls[0].body).unwrap();
    assert_eq!(sent, preview["result"]);
    // Byte for byte: the envelope's `result` is the engine's own text.
    let raw = t
        .raw(&format!("/api/estates/sample/preview?now={NOW}"))
        .await;
    let start = raw.find("\"result\":").unwrap() + "\"result\":".len();
    assert_eq!(calls[0].body, &raw.as_bytes()[start..raw.len() - 1]);
    // Signed at the wall clock, not at the evaluation time asked for.
    let t_now = chrono_now();
    let h = &calls[0].headers;
    assert_eq!(h["content-type"], "application/json");
    let sig = h["berth-signature"].to_str().unwrap();
    let t_s = sig.strip_prefix("t=").unwrap().split(',').next().unwrap();
    let v1: Vec<&str> = sig
        .split(',')
        .filter_map(|p| p.strip_prefix("v1="))
        .collect();
    assert_eq!(
        v1,
        [hmac_hex(
            secret.as_bytes(),
            &[t_s.as_bytes(), b".", &calls[0].body]
        )]
    );
    assert_eq!(h["webhook-timestamp"].to_str().unwrap(), t_s);
    assert!(h["webhook-signature"].to_str().unwrap().starts_with("v1,"));
    assert!(h["webhook-id"].to_str().unwrap().starts_with("msg_"));
    // And the reference verifier, the one deciders port, accepts both.
    let key = signing::Secret::parse(&secret).unwrap();
    let at: i64 = t_s.parse().unwrap();
    assert!((at - t_now).abs() <= 5, "signed at {at}, now is {t_now}");
    signing::verify_berth(sig, &calls[0].body, &key, at, 300).unwrap();
    signing::verify_standard(
        h["webhook-id"].to_str().unwrap(),
        t_s,
        h["webhook-signature"].to_str().unwrap(),
        &calls[0].body,
        &key,
        at,
        300,
    )
    .unwrap();

    // During a rotation both secrets sign; the old one is still accepted.
    let (_, v) = t
        .call(
            ADMIN,
            Method::POST,
            "/api/deciders/ranker/secret",
            Some(json!({"overlap_s": 600})),
        )
        .await;
    let newer = v["secret"].as_str().unwrap().to_string();
    let (s, _) = t
        .call(
            &operator,
            Method::POST,
            &format!("/api/estates/sample/deciders/ranker/runs?now={NOW}"),
            None,
        )
        .await;
    assert_eq!(s, StatusCode::OK);
    let calls = fake.calls();
    let last = calls.last().unwrap();
    let sig = last.headers["berth-signature"].to_str().unwrap();
    let t_s = sig.strip_prefix("t=").unwrap().split(',').next().unwrap();
    let v1: Vec<&str> = sig
        .split(',')
        .filter_map(|p| p.strip_prefix("v1="))
        .collect();
    let expect = |k: &str| hmac_hex(k.as_bytes(), &[t_s.as_bytes(), b".", &last.body]);
    assert_eq!(v1, [expect(&newer), expect(&secret)]);
    assert_eq!(
        last.headers["webhook-signature"]
            .to_str()
            .unwrap()
            .split(' ')
            .count(),
        2
    );
    // A decider that has only the old secret still verifies the call.
    let old_key = signing::Secret::parse(&secret).unwrap();
    signing::verify_standard(
        last.headers["webhook-id"].to_str().unwrap(),
        t_s,
        last.headers["webhook-signature"].to_str().unwrap(),
        &last.body,
        &old_key,
        t_s.parse().unwrap(),
        300,
    )
    .unwrap();
    // With no overlap the old secret is dropped at once.
    t.call(
        ADMIN,
        Method::POST,
        "/api/deciders/ranker/secret",
        Some(json!({"overlap_s": 0})),
    )
    .await;
    t.call(
        &operator,
        Method::POST,
        "/api/estates/sample/deciders/ranker/runs",
        None,
    )
    .await;
    let calls = fake.calls();
    let sig = calls.last().unwrap().headers["berth-signature"]
        .to_str()
        .unwrap()
        .to_string();
    assert_eq!(sig.matches("v1=").count(), 1, "{sig}");

    // Busy, broken, and gone: each its own entry, nothing else disturbed.
    fake.set(Script {
        status: 503,
        body: "{}".into(),
        retry_after: Some("120"),
        content_type: Some("application/json"),
    });
    let (_, v) = t
        .call(
            &operator,
            Method::POST,
            "/api/estates/sample/compare",
            Some(json!({"external": ["ranker"]})),
        )
        .await;
    let e = &v["result"]["deciders"][5];
    assert_eq!(e["error"]["code"], "deferred", "{e}");
    assert!(
        e["error"]["message"].as_str().unwrap().contains("120 s"),
        "{e}"
    );
    assert!(v["result"]["deciders"][0]["error"].is_null());
    fake.set(ok(json!({"proposals": "not a list"})));
    let (_, v) = t
        .call(
            &operator,
            Method::POST,
            "/api/estates/sample/compare",
            Some(json!({"external": ["ranker"]})),
        )
        .await;
    assert_eq!(
        v["result"]["deciders"][5]["error"]["code"], "wrong_shape",
        "{v}"
    );
    fake.set(Script {
        status: 302,
        body: String::new(),
        retry_after: None,
        content_type: Some("application/json"),
    });
    let (_, v) = t
        .call(
            &operator,
            Method::POST,
            "/api/estates/sample/compare",
            Some(json!({"external": ["ranker"]})),
        )
        .await;
    assert_eq!(
        v["result"]["deciders"][5]["error"]["code"], "redirect",
        "{v}"
    );

    // Unknown, duplicated, doubled with an upload, or trying to steer the
    // call elsewhere: refused before any call.
    let before = fake.calls().len();
    for body in [
        json!({"external": ["ranker"], "url": "http://127.0.0.1:1/"}),
        json!({"external": ["nobody"]}),
        json!({"external": ["ranker", "ranker"]}),
        json!({"external": ["ranker"], "responses": {"ranker": {"proposals": []}}}),
    ] {
        let (s, v) = t
            .call(
                &operator,
                Method::POST,
                "/api/estates/sample/compare",
                Some(body.clone()),
            )
            .await;
        assert_eq!(s, StatusCode::BAD_REQUEST, "{body}: {v}");
        let m = v["message"].as_str().unwrap();
        assert!(
            m.starts_with("external/") || m.contains("unknown field `url`"),
            "{v}"
        );
    }
    assert_eq!(fake.calls().len(), before);
    // Viewers read the history; only operators run.
    let viewer = t.token("viewer").await;
    let (s, _) = t
        .call(
            &viewer,
            Method::POST,
            "/api/estates/sample/deciders/ranker/runs",
            None,
        )
        .await;
    assert_eq!(s, StatusCode::FORBIDDEN);
    let (s, v) = t
        .call(
            &viewer,
            Method::GET,
            "/api/estates/sample/deciders/ranker/runs?limit=10",
            None,
        )
        .await;
    assert_eq!(s, StatusCode::OK);
    let outcomes: Vec<&str> = v["runs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["outcome"].as_str().unwrap())
        .collect();
    assert_eq!(
        outcomes,
        ["failed", "failed", "deferred", "ok", "ok", "ok"],
        "{v}"
    );
    assert_eq!(v["runs"][5]["estate_version"], 1);
    assert_eq!(
        v["runs"][5]["entry"]["refused"].as_array().unwrap().len(),
        2
    );
}

fn test_driver() -> DriverConfig {
    DriverConfig {
        batch: 2,
        overfetch: 1,
        ..DriverConfig::default()
    }
}

both!(driver_passes_follow_the_backlog_back_off_and_report_health);
async fn driver_passes_follow_the_backlog_back_off_and_report_health(b: Backend) {
    let t = app(b, true).await;
    let viewer = t.token("viewer").await;
    let (_, h) = t.call(&viewer, Method::GET, "/api/driver", None).await;
    assert_eq!(h["last_pass_at"], Value::Null, "never ran: {h}");
    assert_eq!(
        h["backlog"], 1,
        "the seeded sample was never evaluated: {h}"
    );
    let cfg = test_driver();

    // First pass: the sample's advice snapshot.
    let p = driver::pass(&t.state.external(), &cfg)
        .await
        .unwrap()
        .expect("no other pass runs");
    assert_eq!((p.backlog, p.evaluated, p.deferred, p.failed), (1, 1, 0, 0));
    let (_, v) = t
        .call(
            &viewer,
            Method::GET,
            "/api/estates/sample/advice-snapshots",
            None,
        )
        .await;
    assert_eq!(v["snapshots"].as_array().unwrap().len(), 1);
    assert_eq!(v["snapshots"][0]["estate_version"], 1);
    assert!(v["snapshots"][0]["result"]["moves"].is_array());
    // Ran and found nothing: distinguishable from never ran.
    let p = driver::pass(&t.state.external(), &cfg)
        .await
        .unwrap()
        .unwrap();
    assert_eq!((p.backlog, p.evaluated), (0, 0));
    let (_, h) = t.call(&viewer, Method::GET, "/api/driver", None).await;
    assert!(h["last_pass_at"].is_string(), "{h}");
    assert_eq!(h["backlog"], 0);
    assert_eq!(h["oldest_pending_age_s"], Value::Null);

    // A policy change makes the estate stale again.
    let (s, v) = t
        .call(
            ADMIN,
            Method::PUT,
            "/api/estates/sample/policy",
            Some(json!({"min_gain_points": 7.5})),
        )
        .await;
    assert_eq!(s, StatusCode::OK, "{v}");
    let (_, h) = t.call(&viewer, Method::GET, "/api/driver", None).await;
    assert_eq!(h["backlog"], 1, "{h}");

    // Deciders with an interval join the backlog: one busy, one broken.
    let (busy, busy_url) = Fake::start(Script {
        status: 429,
        body: "{}".into(),
        retry_after: Some("45"),
        content_type: Some("application/json"),
    })
    .await;
    let (broken, broken_url) = Fake::start(Script {
        status: 500,
        body: "{}".into(),
        retry_after: None,
        content_type: Some("application/json"),
    })
    .await;
    for (name, url) in [("busy", &busy_url), ("broken", &broken_url)] {
        let (s, v) = t
            .call(
                ADMIN,
                Method::POST,
                "/api/deciders",
                Some(json!({"name": name, "url": url, "timeout_ms": 2000, "interval_s": 3600})),
            )
            .await;
        assert_eq!(s, StatusCode::CREATED, "{v}");
    }
    // All three pending since this second: ties go by subject key, so
    // the batch of 2 takes the two deciders.
    let p = driver::pass(&t.state.external(), &cfg)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(
        (p.backlog, p.evaluated, p.deferred, p.failed, p.held_back),
        (3, 0, 1, 1, 0),
        "{p:?}"
    );
    assert_eq!((busy.calls().len(), broken.calls().len()), (1, 1));
    let (_, h) = t.call(&viewer, Method::GET, "/api/driver", None).await;
    let backoffs = h["backoffs"].as_array().unwrap();
    let kinds: Vec<(&str, &str, i64)> = backoffs
        .iter()
        .map(|b| {
            (
                b["subject"].as_str().unwrap(),
                b["kind"].as_str().unwrap(),
                b["attempts"].as_i64().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        kinds,
        [
            ("decider:broken@sample", "failed", 1),
            ("decider:busy@sample", "deferred", 1)
        ],
        "{h}"
    );
    assert_eq!(
        (
            h["last_pass"]["deferred"].as_i64(),
            h["last_pass"]["failed"].as_i64()
        ),
        (Some(1), Some(1))
    );
    // Both held back; the over-fetch of 1 reaches the estate behind them.
    let p = driver::pass(&t.state.external(), &cfg)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(
        (p.backlog, p.evaluated, p.deferred, p.failed, p.held_back),
        (3, 1, 0, 0, 2),
        "{p:?}"
    );
    // Backed off: a third pass calls nobody.
    let p = driver::pass(&t.state.external(), &cfg)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(
        (p.evaluated, p.deferred, p.failed, p.held_back),
        (0, 0, 0, 2),
        "{p:?}"
    );
    assert_eq!((busy.calls().len(), broken.calls().len()), (1, 1));

    // Disabling a decider takes it out of the backlog; its backoff is pruned.
    t.call(
        ADMIN,
        Method::PUT,
        "/api/deciders/broken",
        Some(json!({"url": broken_url, "timeout_ms": 2000, "enabled": false, "interval_s": 3600})),
    )
    .await;
    driver::pass(&t.state.external(), &cfg)
        .await
        .unwrap()
        .unwrap();
    let (_, h) = t.call(&viewer, Method::GET, "/api/driver", None).await;
    let subjects: Vec<&str> = h["backoffs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| b["subject"].as_str().unwrap())
        .collect();
    assert_eq!(subjects, ["decider:busy@sample"], "{h}");
    assert_eq!(h["backlog"], 1);
    assert!(h["oldest_pending_age_s"].as_i64().unwrap() >= 0);

    // A success clears the backoff and the subject leaves the backlog.
    busy.set(ok(json!({"proposals": []})));
    sqlx::query("UPDATE driver_backoff SET until_at = 0")
        .execute(&t.state.db.pool)
        .await
        .unwrap();
    let p = driver::pass(&t.state.external(), &cfg)
        .await
        .unwrap()
        .unwrap();
    assert_eq!((p.evaluated, p.deferred, p.failed), (1, 0, 0), "{p:?}");
    let (_, h) = t.call(&viewer, Method::GET, "/api/driver", None).await;
    assert_eq!(
        (
            h["backlog"].as_i64(),
            h["backoffs"].as_array().unwrap().len()
        ),
        (Some(0), 0),
        "{h}"
    );
    // The driver's runs are history like anyone's.
    let (_, v) = t
        .call(
            &viewer,
            Method::GET,
            "/api/estates/sample/deciders/busy/runs",
            None,
        )
        .await;
    let by: Vec<(&str, &str)> = v["runs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            (
                r["outcome"].as_str().unwrap(),
                r["started_by"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(by, [("ok", "driver"), ("deferred", "driver")]);
    let _ = Duration::ZERO;
}

fn chrono_now() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs() as i64
}

both!(a_hanging_decider_cannot_starve_the_server);
/// Fifty people run a decider that accepts connections and never answers.
/// Every run ends by its 1 s timeout (or, with all outbound slots taken,
/// as a deferral without contacting anyone); the decider never holds more
/// sockets than the forwarder's cap; and the rest of the API answers
/// promptly all the while.
async fn a_hanging_decider_cannot_starve_the_server(b: Backend) {
    use std::sync::atomic::{AtomicUsize, Ordering::SeqCst};
    let t = Arc::new(app(b, false).await);
    // Open connections now, and the most ever open at once: a connection
    // counts until the forwarder gives up and closes it (EOF here).
    let open = Arc::new(AtomicUsize::new(0));
    let most = Arc::new(AtomicUsize::new(0));
    let l = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/decide", l.local_addr().unwrap());
    let (o, m) = (open.clone(), most.clone());
    tokio::spawn(async move {
        while let Ok((mut sock, _)) = l.accept().await {
            let n = o.fetch_add(1, SeqCst) + 1;
            m.fetch_max(n, SeqCst);
            let o = o.clone();
            tokio::spawn(async move {
                use tokio::io::AsyncReadExt;
                let mut buf = [0u8; 4096];
                // Read the request, never answer; stop at EOF.
                while matches!(sock.read(&mut buf).await, Ok(n) if n > 0) {}
                o.fetch_sub(1, SeqCst);
            });
        }
    });
    let (s, v) = t
        .call(
            ADMIN,
            Method::POST,
            "/api/deciders",
            Some(json!({"name": "hangs", "url": url, "timeout_ms": 1000})),
        )
        .await;
    assert_eq!(s, StatusCode::CREATED, "{v}");
    // Sample the forwarder's slots in use while the runs go on.
    let peak_in_flight = Arc::new(AtomicUsize::new(0));
    let sampler = {
        let (t, peak) = (t.clone(), peak_in_flight.clone());
        tokio::spawn(async move {
            loop {
                peak.fetch_max(t.state.outbound.forwarder.in_flight(), SeqCst);
                tokio::time::sleep(Duration::from_millis(2)).await;
            }
        })
    };
    let started = std::time::Instant::now();
    let runs: Vec<_> = (0..50)
        .map(|_| {
            let t = t.clone();
            tokio::spawn(async move {
                t.call(
                    ADMIN,
                    Method::POST,
                    "/api/estates/sample/deciders/hangs/runs",
                    None,
                )
                .await
            })
        })
        .collect();
    // Meanwhile: other routes, one after another.
    let mut slowest = Duration::ZERO;
    while started.elapsed() < Duration::from_millis(900) {
        let s = std::time::Instant::now();
        let (status, _) = t
            .call(ADMIN, Method::GET, "/api/estates/sample", None)
            .await;
        assert_eq!(status, StatusCode::OK);
        slowest = slowest.max(s.elapsed());
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let mut codes = std::collections::BTreeMap::<String, usize>::new();
    for r in runs {
        let (status, v) = r.await.unwrap();
        assert_eq!(status, StatusCode::OK, "{v}");
        let code = v["run"]["entry"]["error"]["code"]
            .as_str()
            .unwrap()
            .to_string();
        *codes.entry(code).or_default() += 1;
    }
    let all_done = started.elapsed();
    sampler.abort();
    let cap = berth::external::forward::ForwardPolicy::default().max_concurrent;
    // The forwarder's own count of calls holding a slot (each holds at most
    // one socket) reached the cap and never passed it. The listener's
    // count of open sockets is only printed: it sees a socket close a
    // moment after the forwarder drops it, so under load it lags behind;
    // tests/forward.rs counts sockets exactly at the forwarder.
    let peak = peak_in_flight.load(SeqCst);
    assert_eq!(
        peak, cap,
        "calls holding an outbound slot at once, sampled every 2 ms"
    );
    eprintln!(
        "50 runs of a hanging decider: {codes:?} in {all_done:?}; at most {} sockets open; slowest other request {slowest:?}",
        most.load(SeqCst)
    );
    assert_eq!(codes.values().sum::<usize>(), 50);
    assert!(
        codes.keys().all(|c| c == "timeout" || c == "busy"),
        "{codes:?}"
    );
    assert!(codes["timeout"] >= 1, "{codes:?}");
    // Generous bounds for a loaded 2-core machine: the point is seconds
    // of difference, not milliseconds.
    assert!(
        slowest < Duration::from_millis(500),
        "another route took {slowest:?} while the decider hung"
    );
    assert!(
        all_done < Duration::from_secs(5),
        "50 runs with a 1 s timeout took {all_done:?}"
    );
}

both!(wedged_deciders_do_not_hold_up_a_pass);
/// Two deciders that never answer (1 s timeout each) and one that does,
/// all due on one estate: the pass calls them together, so it lasts about
/// one timeout, not two, and the healthy one's run is recorded as usual.
async fn wedged_deciders_do_not_hold_up_a_pass(b: Backend) {
    let t = app(b, false).await;
    let l = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let hang_url = format!("http://{}/decide", l.local_addr().unwrap());
    tokio::spawn(async move {
        let mut held = Vec::new();
        while let Ok((sock, _)) = l.accept().await {
            held.push(sock); // never answered
        }
    });
    let (quick, quick_url) = Fake::start(ok(json!({"proposals": []}))).await;
    for (name, url) in [
        ("hang-a", &hang_url),
        ("hang-b", &hang_url),
        ("quick", &quick_url),
    ] {
        let (s, v) = t
            .call(
                ADMIN,
                Method::POST,
                "/api/deciders",
                Some(json!({"name": name, "url": url, "timeout_ms": 1000, "interval_s": 3600})),
            )
            .await;
        assert_eq!(s, StatusCode::CREATED, "{v}");
    }
    let started = std::time::Instant::now();
    let p = driver::pass(&t.state.external(), &DriverConfig::default())
        .await
        .unwrap()
        .unwrap();
    let took = started.elapsed();
    assert_eq!(
        (p.backlog, p.evaluated, p.deferred, p.failed),
        (4, 2, 0, 2),
        "{p:?}"
    );
    assert_eq!(quick.calls().len(), 1);
    assert!(
        took < Duration::from_millis(1800),
        "two 1 s timeouts in one pass took {took:?}: called one after the other"
    );
}

/// Register decider `name` at `url` (admin), 3 s timeout, on request only.
async fn register(t: &TestApp, name: &str, url: &str) {
    let (s, v) = t
        .call(
            ADMIN,
            Method::POST,
            "/api/deciders",
            Some(json!({"name": name, "url": url, "timeout_ms": 3000})),
        )
        .await;
    assert_eq!(s, StatusCode::CREATED, "{v}");
}

both!(replies_must_say_json_and_stored_errors_keep_only_an_excerpt);
/// Issue 15, item 3: a reply is read as a decider's answer only when it
/// says it is JSON, and whatever a decider sent is kept in a stored error
/// only as a short, escaped excerpt with its size, so a decider cannot
/// make its runs' history huge (or put terminal escapes in it).
async fn replies_must_say_json_and_stored_errors_keep_only_an_excerpt(b: Backend) {
    let t = app(b, false).await;
    let operator = t.token("operator").await;
    let good = json!({"proposals": [{"serviceId": "cart", "to": "c-fra-2"}]});
    let html = "<html><body>\u{1b}[2J\u{7}Welcome to the proxy</body></html>";
    let (fake, url) = Fake::start(Script {
        status: 200,
        body: html.into(),
        retry_after: None,
        content_type: Some("text/html; charset=utf-8"),
    })
    .await;
    register(&t, "pager", &url).await;
    let run = || async {
        let (s, v) = t
            .call(
                &operator,
                Method::POST,
                &format!("/api/estates/sample/deciders/pager/runs?now={NOW}"),
                None,
            )
            .await;
        assert_eq!(s, StatusCode::OK, "{v}");
        v["run"].clone()
    };

    // HTML is refused for what it says it is, with the media type named,
    // and the excerpt of the body has its control characters escaped.
    let r = run().await;
    assert_eq!(r["outcome"], "failed", "{r}");
    let e = &r["entry"]["error"];
    assert_eq!(e["code"], "media_type", "{r}");
    let m = e["message"].as_str().unwrap();
    assert!(m.contains("text/html; charset=utf-8"), "{m}");
    assert!(m.contains("Welcome to the proxy"), "{m}");
    assert!(!m.contains('\u{1b}') && !m.contains('\u{7}'), "{m:?}");
    assert!(m.contains("\\u{1b}"), "{m}");
    // A JSON body labelled as something else is refused all the same, and
    // so is a reply with no Content-Type.
    for ct in [Some("text/plain"), Some("application/jsonp"), None] {
        fake.set(Script {
            content_type: ct,
            ..ok(good.clone())
        });
        let r = run().await;
        assert_eq!(r["entry"]["error"]["code"], "media_type", "{ct:?}: {r}");
        let m = r["entry"]["error"]["message"].as_str().unwrap();
        assert!(m.contains(ct.unwrap_or("no Content-Type")), "{m}");
    }
    // JSON media types: any case, with parameters, or a +json suffix.
    for ct in [
        "application/json",
        "Application/JSON ; charset=UTF-8",
        "application/vnd.pager.v1+json",
        "application/problem+json;charset=utf-8",
    ] {
        fake.set(Script {
            content_type: Some(ct),
            ..ok(good.clone())
        });
        let r = run().await;
        assert_eq!(r["outcome"], "ok", "{ct}: {r}");
        assert_eq!(r["entry"]["accepted_count"], 1, "{ct}: {r}");
    }

    // One 3 MB JSON string, five times: each run keeps a bounded excerpt
    // of the message quoting it, with the full size noted.
    let huge = serde_json::to_string(&format!("\u{1b}]0;{}", "x".repeat(3 << 20))).unwrap();
    assert!(huge.len() > 3 << 20);
    fake.set(Script {
        body: huge,
        ..ok(good.clone())
    });
    for _ in 0..5 {
        let r = run().await;
        assert_eq!(r["outcome"], "failed", "{r}");
        let e = &r["entry"]["error"];
        assert_eq!(e["code"], "wrong_shape");
        let m = e["message"].as_str().unwrap();
        assert!(m.len() <= 1024, "{} bytes stored: {}…", m.len(), &m[..200]);
        assert!(m.contains("bytes)"), "{m}");
        assert!(!m.contains('\u{1b}'), "{m:?}");
    }
    // So a viewer's longest page of history stays small.
    let page = t
        .raw("/api/estates/sample/deciders/pager/runs?limit=200")
        .await;
    let v: Value = serde_json::from_str(&page).unwrap();
    assert_eq!(v["runs"].as_array().unwrap().len(), 13);
    assert!(
        page.len() < 64 * 1024,
        "the history is {} bytes",
        page.len()
    );
}

both!(a_run_refuses_any_body_field_by_name);
/// Issue 15, item 10: `POST …/runs` takes no body fields (the decider is
/// called at its stored URL, nothing in the request can steer it), so a
/// field is refused by name, and a body that is not an object is refused,
/// before anything is called.
async fn a_run_refuses_any_body_field_by_name(b: Backend) {
    let t = app(b, false).await;
    let operator = t.token("operator").await;
    let (fake, url) = Fake::start(ok(json!({"proposals": []}))).await;
    register(&t, "ranker", &url).await;
    let path = format!("/api/estates/sample/deciders/ranker/runs?now={NOW}");
    for (body, named) in [
        (json!({"url": "http://127.0.0.1:1/"}), "`url`"),
        (json!({"now": NOW}), "`now`"),
        (json!(["http://127.0.0.1:1/"]), "an array"),
        (json!("http://127.0.0.1:1/"), "the string"),
        (json!(null), "null"),
    ] {
        let (s, v) = t
            .call(&operator, Method::POST, &path, Some(body.clone()))
            .await;
        assert_eq!(s, StatusCode::BAD_REQUEST, "{body}: {v}");
        let m = v["message"].as_str().unwrap();
        assert!(m.contains(named), "{body}: {m}");
    }
    assert_eq!(fake.calls().len(), 0, "a refused run calls nothing");
    // No body, or an empty object: a run.
    for body in [None, Some(json!({}))] {
        let (s, v) = t.call(&operator, Method::POST, &path, body).await;
        assert_eq!(s, StatusCode::OK, "{v}");
        assert_eq!(v["run"]["outcome"], "ok", "{v}");
    }
    assert_eq!(fake.calls().len(), 2);
}

/// `GET /api/estates/sample/history`, which must answer 200.
async fn history_of(t: &TestApp, token: &str) -> Value {
    let (s, h) = t
        .call(token, Method::GET, "/api/estates/sample/history", None)
        .await;
    assert_eq!(s, StatusCode::OK, "{h}");
    h
}

both!(the_history_follows_the_snapshots_and_retention_prunes_all_but_the_newest);
/// Three driver passes over a changing sample (a policy change, then a
/// flow weight set to nothing under a recommended move): the history route
/// has one point per snapshot with the snapshots' own totals, and says
/// what changed between the two newest with the weight's old and new
/// value. Then snapshots past the retention are pruned by a pass, the
/// newest kept even when it is past it too.
async fn the_history_follows_the_snapshots_and_retention_prunes_all_but_the_newest(b: Backend) {
    let t = app(b, false).await;
    let viewer = t.token("viewer").await;
    let cfg = test_driver();
    let h = history_of(&t, &viewer).await;
    assert_eq!(h, json!({"points": [], "unreadable": [], "changes": null}));

    // 1: the sample as seeded.
    driver::pass(&t.state.external(), &cfg)
        .await
        .unwrap()
        .unwrap();
    let h = history_of(&t, &viewer).await;
    assert_eq!(h["points"].as_array().unwrap().len(), 1, "{h}");
    assert_eq!(
        h["changes"],
        Value::Null,
        "one snapshot: nothing to compare"
    );
    let (_, snaps) = t
        .call(
            &viewer,
            Method::GET,
            "/api/estates/sample/advice-snapshots",
            None,
        )
        .await;
    let first = snaps["snapshots"][0]["result"].clone();
    assert_eq!(h["points"][0]["cost"], first["totals_before"]["cost"]);
    assert_eq!(
        h["points"][0]["cross_site_mb_s"],
        first["totals_before"]["cross_site_mb_s"]
    );

    // 2: a policy change (a higher bar: fewer or equal recommendations).
    let (s, v) = t
        .call(
            ADMIN,
            Method::PUT,
            "/api/estates/sample/policy",
            Some(json!({"min_gain_points": 7.5})),
        )
        .await;
    assert_eq!(s, StatusCode::OK, "{v}");
    driver::pass(&t.state.external(), &cfg)
        .await
        .unwrap()
        .unwrap();
    let (_, snaps) = t
        .call(
            &viewer,
            Method::GET,
            "/api/estates/sample/advice-snapshots",
            None,
        )
        .await;
    let second = snaps["snapshots"][0]["result"].clone();
    // The first recommendation resting on a flow weight loses it.
    let (identity, key, old) = second["moves"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["evidence"].is_null() && m["group"].is_null())
        .find_map(|m| {
            let f = m["facts"].as_array().unwrap().iter().find(|f| {
                let k = f["fact"].as_str().unwrap();
                k.starts_with("flow ") && k.ends_with(" weight")
            })?;
            Some((
                format!(
                    "{}|{}|{}",
                    m["service"].as_str()?,
                    m["from"].as_str()?,
                    m["to"].as_str()?
                ),
                f["fact"].as_str()?.to_string(),
                f["value"].clone(),
            ))
        })
        .expect("a recommendation under the raised bar rests on a flow weight");
    let (from, to) = key
        .strip_prefix("flow ")
        .and_then(|k| k.strip_suffix(" weight"))
        .and_then(|k| k.split_once('→'))
        .unwrap();

    // 3: that flow's weight set to 0.
    let (s, v) = t
        .call(
            ADMIN,
            Method::POST,
            "/api/estates/sample/facts",
            Some(json!({"updates": [{"fact": "flow_weight", "from": from, "to": to, "value": 0, "class": "measured"}]})),
        )
        .await;
    assert_eq!(s, StatusCode::OK, "{v}");
    driver::pass(&t.state.external(), &cfg)
        .await
        .unwrap()
        .unwrap();
    let h = history_of(&t, &viewer).await;
    let points = h["points"].as_array().unwrap();
    assert_eq!(points.len(), 3, "{h}");
    let ids: Vec<i64> = points
        .iter()
        .map(|p| p["snapshot"].as_i64().unwrap())
        .collect();
    assert!(ids.windows(2).all(|w| w[0] < w[1]), "oldest first: {ids:?}");
    assert_ne!(points[0]["policy_digest"], points[1]["policy_digest"]);
    assert!(points[2]["estate_version"].as_i64() > points[1]["estate_version"].as_i64());
    // Recommendations counted by hand: a compound step (its members name
    // their group's services) once, a weak move not at all.
    let open = |a: &Value| {
        let mut keys: Vec<String> = a["moves"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|m| m["evidence"].is_null())
            .map(|m| match m["group"]["services"].as_array() {
                Some(g) => {
                    let mut g: Vec<&str> = g.iter().map(|x| x.as_str().unwrap()).collect();
                    g.sort();
                    g.join("+")
                }
                None => m["service"].as_str().unwrap().to_string(),
            })
            .collect();
        keys.sort();
        keys.dedup();
        keys.len()
    };
    assert_eq!(
        points[1]["open"].as_u64(),
        Some(open(&second) as u64),
        "{second}"
    );
    assert!(open(&second) > 0, "the sample still recommends moves");

    let c = &h["changes"];
    assert_eq!(
        (c["from"].as_i64(), c["to"].as_i64()),
        (Some(ids[1]), Some(ids[2]))
    );
    let rec = c["disappeared"]
        .as_array()
        .unwrap()
        .iter()
        .chain(c["changed"].as_array().unwrap())
        .find(|r| r["identity"] == identity.as_str())
        .unwrap_or_else(|| panic!("{identity} neither disappeared nor changed: {c}"));
    let fact = rec["facts"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["fact"] == key.as_str())
        .unwrap_or_else(|| panic!("{key} not among the facts that changed: {rec}"));
    assert_eq!(fact["before"]["value"], old, "{fact}");
    assert!(
        fact["after"].is_null() || fact["after"]["value"] == json!(0.0),
        "{fact}"
    );

    // The limit is checked.
    let (s, v) = t
        .call(
            &viewer,
            Method::GET,
            "/api/estates/sample/history?limit=1",
            None,
        )
        .await;
    assert_eq!(s, StatusCode::BAD_REQUEST, "{v}");
    assert!(
        v["message"].as_str().unwrap().contains("from 2 to 500"),
        "{v}"
    );

    // Retention: the two older snapshots 20 days back, the newest 15.
    let day = 86_400;
    let now = chrono_now();
    for (id, age) in [(ids[0], 20 * day), (ids[1], 20 * day), (ids[2], 15 * day)] {
        sqlx::query("UPDATE advice_snapshots SET evaluated_at = $1 WHERE id = $2")
            .bind(now - age)
            .bind(id)
            .execute(&t.state.db.pool)
            .await
            .unwrap();
    }
    // A 30-day retention keeps them all.
    let keep_month = DriverConfig {
        history_retention_s: 30 * day,
        ..test_driver()
    };
    driver::pass(&t.state.external(), &keep_month)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(
        history_of(&t, &viewer).await["points"]
            .as_array()
            .unwrap()
            .len(),
        3
    );
    // 14 days: all three are past it; the estate's newest stays.
    let keep_fortnight = DriverConfig {
        history_retention_s: 14 * day,
        ..test_driver()
    };
    let p = driver::pass(&t.state.external(), &keep_fortnight)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(p.evaluated, 0, "nothing was stale: {p:?}");
    let h = history_of(&t, &viewer).await;
    let left: Vec<i64> = h["points"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["snapshot"].as_i64().unwrap())
        .collect();
    assert_eq!(left, [ids[2]], "{h}");
    // And the driver still sees the estate as evaluated.
    let (_, d) = t.call(&viewer, Method::GET, "/api/driver", None).await;
    assert_eq!(d["backlog"], 0, "{d}");
}
