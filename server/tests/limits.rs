//! Bounded memory per request and per client, and the server-side low
//! findings of issue 37 (items 4 and 5), on SQLite and PostgreSQL where
//! storage is involved:
//! - every body limit refused before the body is read (a real server over
//!   TCP: the declared length is all it sees);
//! - large requests bounded per token (Kubernetes imports, estate files
//!   being sent, whose readers may stall);
//! - unknown tokens answered 401 every time; pages unframeable and
//!   unsniffable; probe addresses checked after unmapping IPv6; decider
//!   URLs masked for viewers; the driver after the clock steps back.

mod support;

use std::net::SocketAddr;
use std::time::Duration;

use axum::body::Body;
use axum::http::{header, Method, Request, StatusCode};
use axum::Router;
use serde_json::{json, Value};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tower::ServiceExt;

use berth::http::extract;
use support::{Backend, TestDb};

const ADMIN: &str = "admin-token-for-tests-0123456789abcdef";
const MIB: usize = 1024 * 1024;

struct App {
    app: Router,
    state: berth::AppState,
    _db: TestDb,
}

impl App {
    async fn new(b: Backend) -> App {
        let db = TestDb::new(b).await;
        let mut opts = berth::serve::ServeOptions::new(
            "127.0.0.1:0".parse().unwrap(),
            Some(db.url.clone()),
            std::env::temp_dir(),
        );
        opts.admin_token = Some(ADMIN.into());
        opts.max_connections = 4;
        opts.decider_allow = vec!["127.0.0.1/32".into()];
        opts.sample_at = Some(berth::serve::sample_designed_at());
        let (state, _) = berth::serve::prepare(&opts).await.expect("prepare");
        App {
            app: berth::http::app(state.clone()),
            state,
            _db: db,
        }
    }

    async fn call(
        &self,
        token: &str,
        method: Method,
        path: &str,
        body: Option<Value>,
    ) -> (StatusCode, Value, axum::http::HeaderMap, Body) {
        let mut req = Request::builder().method(method).uri(path);
        if !token.is_empty() {
            req = req.header(header::AUTHORIZATION, format!("Bearer {token}"));
        }
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
        let (parts, body) = resp.into_parts();
        (parts.status, Value::Null, parts.headers, body)
    }

    async fn json(
        &self,
        token: &str,
        method: Method,
        path: &str,
        body: Option<Value>,
    ) -> (StatusCode, Value) {
        let (s, _, _, body) = self.call(token, method, path, body).await;
        let bytes = axum::body::to_bytes(body, usize::MAX).await.unwrap();
        (s, serde_json::from_slice(&bytes).unwrap_or(Value::Null))
    }

    async fn token(&self, body: Value) -> (String, String) {
        let (s, v) = self
            .json(ADMIN, Method::POST, "/api/tokens", Some(body))
            .await;
        assert_eq!(s, StatusCode::CREATED, "{v}");
        (
            v["token"].as_str().unwrap().to_string(),
            v["id"].as_str().unwrap().to_string(),
        )
    }

    /// The app on a real socket, as `berth serve` has it.
    async fn serve(&self) -> SocketAddr {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let app = self.app.clone();
        tokio::spawn(async move {
            axum::serve(
                listener,
                app.into_make_service_with_connect_info::<SocketAddr>(),
            )
            .await
            .unwrap()
        });
        addr
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

/// Send only the headers of a request declaring `length` bytes of body,
/// and read the first line of the answer (within 5 s: a server that waits
/// for the body never answers).
async fn declared(addr: SocketAddr, method: &str, path: &str, length: usize) -> String {
    let mut s = tokio::net::TcpStream::connect(addr).await.unwrap();
    let head = format!(
        "{method} {path} HTTP/1.1\r\nHost: t\r\nAuthorization: Bearer {ADMIN}\r\nContent-Type: application/json\r\nContent-Length: {length}\r\n\r\n"
    );
    s.write_all(head.as_bytes()).await.unwrap();
    let mut buf = vec![0u8; 4096];
    match tokio::time::timeout(Duration::from_secs(5), s.read(&mut buf)).await {
        Ok(Ok(n)) => String::from_utf8_lossy(&buf[..n])
            .lines()
            .next()
            .unwrap_or("")
            .to_string(),
        _ => "(no answer within 5 s: the server waited for the body)".to_string(),
    }
}

both!(every_body_limit_is_enforced_before_reading);
async fn every_body_limit_is_enforced_before_reading(b: Backend) {
    let t = App::new(b).await;
    let addr = t.serve().await;
    let routes = [
        (
            "POST",
            "/api/estates/sample/observations",
            extract::FACTS_BODY_LIMIT,
            16 * MIB,
        ),
        (
            "POST",
            "/api/estates/sample/facts",
            extract::FACTS_BODY_LIMIT,
            16 * MIB,
        ),
        (
            "POST",
            "/api/estates/sample/import/kubernetes",
            extract::KUBERNETES_BODY_LIMIT,
            16 * MIB,
        ),
        (
            "PUT",
            "/api/estates/sample/file",
            extract::ESTATE_BODY_LIMIT,
            64 * MIB,
        ),
        ("POST", "/api/estates", extract::ESTATE_BODY_LIMIT, 64 * MIB),
        (
            "POST",
            "/api/estates/sample/compare",
            extract::COMPARE_BODY_LIMIT,
            16 * MIB,
        ),
        (
            "PUT",
            "/api/estates/sample/policy",
            extract::SMALL_BODY_LIMIT,
            MIB,
        ),
        ("POST", "/api/tokens", extract::SMALL_BODY_LIMIT, MIB),
    ];
    for (method, path, limit, documented) in routes {
        assert_eq!(
            limit, documented,
            "{path}: docs/security.md states {documented}"
        );
        let line = declared(addr, method, path, limit + 1).await;
        assert!(
            line.contains(" 413 "),
            "{method} {path} declaring {} bytes: {line}",
            limit + 1
        );
    }
    // Without a declared length (chunked), the limit holds while reading.
    let big =
        json!({"batch_id": "x", "observations": [], "pad": "x".repeat(extract::FACTS_BODY_LIMIT)});
    let (s, v) = t
        .json(
            ADMIN,
            Method::POST,
            "/api/estates/sample/observations",
            Some(big),
        )
        .await;
    assert_eq!(s, StatusCode::PAYLOAD_TOO_LARGE, "{v}");
    assert!(v["message"]
        .as_str()
        .unwrap()
        .contains(&extract::FACTS_BODY_LIMIT.to_string()));
}

both!(large_requests_are_bounded_per_token);
async fn large_requests_are_bounded_per_token(b: Backend) {
    let t = App::new(b).await;
    let (viewer, viewer_id) = t.token(json!({"name": "v", "role": "viewer"})).await;
    let (other, _) = t.token(json!({"name": "w", "role": "viewer"})).await;
    // Two estate files being sent whose readers never read: each holds
    // its place until its body is dropped.
    let (s1, _, _, stalled1) = t
        .call(&viewer, Method::GET, "/api/estates/sample/file", None)
        .await;
    let (s2, _, _, stalled2) = t
        .call(&viewer, Method::GET, "/api/estates/sample/file", None)
        .await;
    assert_eq!((s1, s2), (StatusCode::OK, StatusCode::OK));
    let (s3, v3) = t
        .json(&viewer, Method::GET, "/api/estates/sample/file", None)
        .await;
    assert_eq!(s3, StatusCode::TOO_MANY_REQUESTS, "{v3}");
    assert!(
        v3["message"]
            .as_str()
            .unwrap()
            .contains(&format!("token:{viewer_id}")),
        "{v3}"
    );
    // Another token is not held up by them.
    let (s, _) = t
        .json(&other, Method::GET, "/api/estates/sample/file", None)
        .await;
    assert_eq!(s, StatusCode::OK);
    // The same document is shared: both readers got the same bytes.
    let a = axum::body::to_bytes(stalled1, usize::MAX).await.unwrap();
    drop(stalled2);
    assert!(a.starts_with(b"{"));
    let (s, _) = t
        .json(&viewer, Method::GET, "/api/estates/sample/file", None)
        .await;
    assert_eq!(
        s,
        StatusCode::OK,
        "places given back when the bodies were sent or dropped"
    );

    // A Kubernetes import waits for nothing: a second one of the same
    // token is 429 at once.
    let p1 = extract::heavy_permit(&t.state.heavy, "token:someone", "a").unwrap();
    assert!(extract::heavy_permit(&t.state.heavy, "token:someone", "b").is_err());
    // Its files are counted apart.
    let _f = extract::heavy_permit_per_caller(&t.state.heavy, "token:someone", "f").unwrap();
    drop(p1);
    let _p3 = extract::heavy_permit(&t.state.heavy, "token:someone", "d").unwrap();
    // Places are the application's own: another server in this process
    // (as every test here is) does not see this one's.
    let elsewhere = berth::heavy::HeavyBook::default();
    let _e = extract::heavy_permit(&elsewhere, "token:someone", "e").unwrap();
    let (agent, agent_id) = t
        .token(json!({"name": "a", "role": "agent", "estate": "sample", "clusters": ["c-fra-3"], "may_sync_services": true}))
        .await;
    let _h1 = extract::heavy_permit(&t.state.heavy, &format!("token:{agent_id}"), "held").unwrap();
    let body = json!({"cluster": "c-fra-3", "files": [{"name": "x.yaml", "text": "kind: Namespace\napiVersion: v1\nmetadata: {name: x}\n"}], "dry_run": true});
    let (s, _, headers, _) = t
        .call(
            &agent,
            Method::POST,
            "/api/estates/sample/import/kubernetes",
            Some(body),
        )
        .await;
    assert_eq!(s, StatusCode::TOO_MANY_REQUESTS);
    assert_eq!(headers[header::RETRY_AFTER], "1");
}

both!(unknown_tokens_are_401_every_time);
async fn unknown_tokens_are_401_every_time(b: Backend) {
    let t = App::new(b).await;
    let (revoked, id) = t.token(json!({"name": "r", "role": "viewer"})).await;
    let (s, _) = t
        .json(ADMIN, Method::DELETE, &format!("/api/tokens/{id}"), None)
        .await;
    assert_eq!(s, StatusCode::NO_CONTENT);
    for i in 0..30 {
        let token = if i % 2 == 0 {
            "berth_not_a_token".to_string()
        } else {
            revoked.clone()
        };
        let (s, v) = t.json(&token, Method::GET, "/api/estates", None).await;
        assert_eq!(s, StatusCode::UNAUTHORIZED, "attempt {i}: {v}");
        assert_eq!(v["error"], "unauthenticated");
    }
    // Sign-in (the throttled path) still has its whole budget.
    let (s, _) = t
        .json(
            "",
            Method::POST,
            "/api/session",
            Some(json!({"token": "berth_wrong"})),
        )
        .await;
    assert_eq!(s, StatusCode::FORBIDDEN);
}

#[tokio::test]
async fn pages_cannot_be_framed_or_sniffed() {
    let t = App::new(Backend::Sqlite).await;
    for path in ["/", "/login", "/no-such-page", "/style/berth.css"] {
        let (_, _, h, _) = t.call("", Method::GET, path, None).await;
        assert_eq!(
            h.get(header::X_FRAME_OPTIONS).map(|v| v.to_str().unwrap()),
            Some("DENY"),
            "{path}"
        );
        assert_eq!(
            h.get(header::CONTENT_SECURITY_POLICY)
                .map(|v| v.to_str().unwrap()),
            Some("frame-ancestors 'none'"),
            "{path}"
        );
        assert_eq!(
            h.get(header::X_CONTENT_TYPE_OPTIONS)
                .map(|v| v.to_str().unwrap()),
            Some("nosniff"),
            "{path}"
        );
    }
}

both!(mapped_probe_addresses_are_refused);
async fn mapped_probe_addresses_are_refused(b: Backend) {
    let t = App::new(b).await;
    for (i, address) in [
        "[::ffff:0.0.0.0]:7000",
        "0.0.0.1:80",
        "[::ffff:169.254.169.254]:80",
    ]
    .iter()
    .enumerate()
    {
        let body = json!({"batch_id": format!("p{i}"), "observations": [], "probe": {"cluster": "c-fra-1", "address": address}});
        let (s, v) = t
            .json(
                ADMIN,
                Method::POST,
                "/api/estates/sample/observations",
                Some(body),
            )
            .await;
        assert_eq!(s, StatusCode::UNPROCESSABLE_ENTITY, "{address}: {v}");
        assert_eq!(v["details"]["errors"][0]["path"], "/probe/address", "{v}");
    }
    let body = json!({"batch_id": "ok", "observations": [], "probe": {"cluster": "c-fra-1", "address": "10.1.2.3:7946"}});
    let (s, v) = t
        .json(
            ADMIN,
            Method::POST,
            "/api/estates/sample/observations",
            Some(body),
        )
        .await;
    assert_eq!(s, StatusCode::OK, "{v}");
}

both!(decider_urls_are_masked_for_viewers);
async fn decider_urls_are_masked_for_viewers(b: Backend) {
    let t = App::new(b).await;
    let url = "http://127.0.0.1:9/decide?api_key=s3cret-value";
    let (s, v) = t
        .json(
            ADMIN,
            Method::POST,
            "/api/deciders",
            Some(json!({"name": "ranker", "url": url, "timeout_ms": 2000})),
        )
        .await;
    assert_eq!(s, StatusCode::CREATED, "{v}");
    let (viewer, _) = t.token(json!({"name": "v", "role": "viewer"})).await;
    let (_, list) = t.json(&viewer, Method::GET, "/api/deciders", None).await;
    assert_eq!(
        list["deciders"][0]["url"], "http://127.0.0.1:9/decide?api_key=…",
        "{list}"
    );
    let (_, one) = t
        .json(&viewer, Method::GET, "/api/deciders/ranker", None)
        .await;
    assert!(!one.to_string().contains("s3cret"), "{one}");
    let (_, admin) = t.json(ADMIN, Method::GET, "/api/deciders", None).await;
    assert_eq!(
        admin["deciders"][0]["url"], url,
        "the administrator sees it whole"
    );
}

/// A decider that answers every call with no proposals.
async fn quiet_decider() -> String {
    let app = Router::new().route(
        "/decide",
        axum::routing::post(|| async {
            (
                [(header::CONTENT_TYPE, "application/json")],
                r#"{"decider": "quiet", "proposals": []}"#,
            )
        }),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    format!("http://{addr}/decide")
}

async fn runs(t: &App) -> i64 {
    let (n,): (i64,) = sqlx::query_as("SELECT COUNT(*) FROM decider_runs WHERE outcome = 'ok'")
        .fetch_one(&t.state.db.pool)
        .await
        .unwrap();
    n
}

both!(the_driver_survives_the_clock_stepping_back);
async fn the_driver_survives_the_clock_stepping_back(b: Backend) {
    use berth::external::driver::{self, DriverConfig};
    let t = App::new(b).await;
    let url = quiet_decider().await;
    let (s, v) = t
        .json(
            ADMIN,
            Method::POST,
            "/api/deciders",
            Some(json!({"name": "quiet", "url": url, "timeout_ms": 5000, "interval_s": 60})),
        )
        .await;
    assert_eq!(s, StatusCode::CREATED, "{v}");
    let cfg = DriverConfig::default();
    driver::pass(&t.state.external(), &cfg)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(runs(&t).await, 1, "the decider ran");
    // The clock moves back a day: everything the driver wrote is now a
    // day in the future.
    for stmt in [
        "UPDATE decider_runs SET started_at = started_at + 86400",
        "UPDATE driver_passes SET started_ms = started_ms + 86400000, finished_ms = finished_ms + 86400000",
    ] {
        sqlx::query(stmt).execute(&t.state.db.pool).await.unwrap();
    }
    driver::pass(&t.state.external(), &cfg)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(
        runs(&t).await,
        2,
        "the decider runs again at once, not a day later"
    );
    // Then on its interval again: not at every pass.
    driver::pass(&t.state.external(), &cfg)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(runs(&t).await, 2, "due again only after its interval");
    // The health surface shows the pass just made, not the one "ahead".
    let (_, h) = t.json(ADMIN, Method::GET, "/api/driver", None).await;
    let last = berth_engine::estate::parse_time(h["last_pass_at"].as_str().unwrap()).unwrap();
    assert!((last - berth::clock::now_s()).abs() < 120, "{h}");
}
