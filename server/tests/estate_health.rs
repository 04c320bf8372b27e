//! An estate's health through the API (issue 35 item 6), on SQLite and
//! PostgreSQL: an estate of three sites with one round trip between
//! them, a service whose traffic nothing observed, a capacity no one
//! knows; then an estate upload, an agent's observation batch with its
//! probe address, a fact update and a Kubernetes import with notes — and
//! `GET …/health` says who sent what and when, lists the writes with the
//! import's notes, and counts the facts by kind, stale and unknown ones
//! included, each count checked against the estate as written here.

mod support;

use axum::body::Body;
use axum::http::{header, Method, Request, StatusCode};
use axum::Router;
use serde_json::{json, Value};
use tower::ServiceExt;

use berth_engine::estate::format_time;
use support::{Backend, TestDb};

const ADMIN: &str = "admin-token-for-tests-0123456789abcdef";

struct TestApp {
    app: Router,
    _db: TestDb,
}

impl TestApp {
    async fn new(backend: Backend) -> TestApp {
        let db = TestDb::new(backend).await;
        let opts = berth::serve::ServeOptions {
            listen: "127.0.0.1:0".parse().unwrap(),
            database_url: Some(db.url.clone()),
            data_dir: std::env::temp_dir(),
            admin_token: Some(ADMIN.into()),
            seed: false,
            sample_at: None,
            max_connections: 4,
            secret_key: None,
            secret_key_file: None,
            decider_allow: vec![],
            driver_every_s: None,
            history_retention_days: berth::external::driver::DEFAULT_HISTORY_RETENTION_DAYS,
            net: Default::default(),
            config: berth::Config::default(),
        };
        let (state, _) = berth::serve::prepare(&opts).await.expect("server prepares");
        TestApp {
            app: berth::http::app(state),
            _db: db,
        }
    }

    async fn call(
        &self,
        token: &str,
        method: Method,
        path: &str,
        body: Option<String>,
    ) -> (StatusCode, String) {
        let mut req = Request::builder()
            .method(method)
            .uri(path)
            .header(header::AUTHORIZATION, format!("Bearer {token}"));
        if body.is_some() {
            req = req.header(header::CONTENT_TYPE, "application/json");
        }
        let resp = self
            .app
            .clone()
            .oneshot(
                req.body(body.map(Body::from).unwrap_or_else(Body::empty))
                    .unwrap(),
            )
            .await
            .unwrap();
        let status = resp.status();
        let bytes = axum::body::to_bytes(resp.into_body(), usize::MAX)
            .await
            .unwrap();
        (status, String::from_utf8(bytes.to_vec()).unwrap())
    }

    async fn send(&self, token: &str, method: Method, path: &str, body: &Value) -> Value {
        let (status, text) = self.call(token, method, path, Some(body.to_string())).await;
        assert!(status.is_success(), "{path}: {status}: {text}");
        serde_json::from_str(&text).unwrap()
    }

    async fn health(&self, now: i64) -> Value {
        let (status, text) = self
            .call(
                ADMIN,
                Method::GET,
                &format!("/api/estates/est/health?now={}", format_time(now)),
                None,
            )
            .await;
        assert_eq!(status, StatusCode::OK, "{text}");
        serde_json::from_str(&text).unwrap()
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

/// Three sites, one round trip between two of them; c1's CPU measured at
/// `old` (stale by `now`), c2's memory unknown; `a` declared, `k` written
/// by a Kubernetes import and never observed.
fn estate(old: i64, fresh: i64) -> Value {
    let fact = |v: f64, at: i64| json!({"value": v, "class": "measured", "source": "probe", "observed_at": format_time(at)});
    json!({
        "schema": 1,
        "name": "health",
        "sites": [
            {"id": "s1", "name": "S1", "lat": 50.11, "lon": 8.68, "jurisdiction": "eu"},
            {"id": "s2", "name": "S2", "lat": 48.86, "lon": 2.35, "jurisdiction": "eu"},
            {"id": "s3", "name": "S3", "lat": 53.35, "lon": -6.26, "jurisdiction": "eu"}
        ],
        "clusters": [
            {"id": "c1", "site": "s1", "tier": "prod", "trust_zone": "general", "health": "healthy",
             "cpu_total": 64, "memory_total_gib": 256, "cpu_free": fact(40.0, old), "memory_free_gib": fact(200.0, fresh)},
            {"id": "c2", "site": "s2", "tier": "prod", "trust_zone": "general", "health": "healthy",
             "cpu_total": 64, "memory_total_gib": 256, "cpu_free": fact(30.0, fresh),
             "memory_free_gib": {"value": null, "class": "guessed", "source": "nobody"}}
        ],
        "links": [{"a": "s1", "b": "s2", "rtt_ms": fact(9.0, fresh)}],
        "services": [
            {"id": "a", "owner": "team-a", "cluster": "c1", "cpu": 2, "memory_gib": 4, "traffic": "declared"},
            {"id": "k", "owner": "team-k", "cluster": "c2", "cpu": 1, "memory_gib": 2,
             "source": "kubernetes:c2/default/Deployment/k"}
        ],
        "flows": [{"from": "a", "to": "k", "weight": fact(4.0, fresh), "mb_s": fact(2.0, fresh)}]
    })
}

async fn health_says_who_sent_what_and_counts_the_facts(b: Backend) {
    let t = TestApp::new(b).await;
    let now = berth::clock::now_s();
    let (old, fresh) = (now - 2 * 86_400, now - 60);
    t.send(
        ADMIN,
        Method::POST,
        "/api/estates?id=est",
        &estate(old, fresh),
    )
    .await;

    let h = t.health(now).await;
    assert_eq!(h["agents"], json!([]), "{h}");
    assert_eq!(
        h["changes"],
        json!([]),
        "creating is not a write to an estate"
    );
    assert_eq!(
        (
            h["site_pairs"].as_u64(),
            h["site_pairs_without_rtt"].as_u64()
        ),
        (Some(3), Some(2))
    );
    let kind = |h: &Value, k: &str| {
        h["facts"]
            .as_array()
            .unwrap()
            .iter()
            .find(|f| f["kind"] == k)
            .cloned()
            .unwrap()
    };
    let cpu = kind(&h, "free CPU");
    assert_eq!(
        (
            cpu["total"].as_u64(),
            cpu["stale"].as_u64(),
            cpu["unknown"].as_u64()
        ),
        (Some(2), Some(1), Some(0)),
        "{cpu}"
    );
    assert_eq!(cpu["oldest_age_s"].as_i64(), Some(now - old));
    let mem = kind(&h, "free memory");
    assert_eq!(
        (
            mem["total"].as_u64(),
            mem["unknown"].as_u64(),
            mem["guessed"].as_u64()
        ),
        (Some(2), Some(1), Some(1)),
        "{mem}"
    );
    assert_eq!(
        h["traffic"],
        json!({"declared": 1, "observed": 0, "services": 2, "stale": 0, "unknown": 1})
    );

    // An upload, by the administrator.
    t.send(
        ADMIN,
        Method::PUT,
        "/api/estates/est/file",
        &estate(old, fresh),
    )
    .await;
    // An agent: one batch of two observations, with its probe address.
    let agent = t
        .send(
            ADMIN,
            Method::POST,
            "/api/tokens",
            &json!({"name": "fra-agent", "role": "agent", "estate": "est", "clusters": ["c1"]}),
        )
        .await["token"]
        .as_str()
        .unwrap()
        .to_string();
    let at = format_time(now - 30);
    let r = t
        .send(
            &agent,
            Method::POST,
            "/api/estates/est/observations",
            &json!({
            "batch_id": "b-1",
            "probe": {"cluster": "c1", "address": "10.0.0.7:7946"},
            "observations": [
                {"fact": "cpu_free", "cluster": "c1", "value": 38.0, "observed_at": at},
                {"fact": "memory_free_gib", "cluster": "c1", "value": 190.0, "observed_at": at}
            ]}),
        )
        .await;
    assert_eq!(r["applied"], 2, "{r}");
    // A fact update and a Kubernetes import with a note (no request).
    t.send(ADMIN, Method::POST, "/api/estates/est/facts", &json!({"updates": [
        {"fact": "memory_free_gib", "cluster": "c2", "value": 100, "class": "reported", "source": "ops"}
    ]}))
    .await;
    let deployment = json!({
        "apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": "k", "namespace": "default"},
        "spec": {"replicas": 1, "selector": {"matchLabels": {"app": "k"}},
            "template": {"metadata": {"labels": {"app": "k"}}, "spec": {"containers": [{"name": "k", "image": "k:1"}]}}}
    });
    let imported = t
        .send(
            ADMIN,
            Method::POST,
            "/api/estates/est/import/kubernetes",
            &json!({
                "cluster": "c2", "files": [{"name": "k.yaml", "text": deployment.to_string()}]
            }),
        )
        .await;
    assert_eq!(imported["written"], true, "{imported}");
    let import_notes: Vec<String> = imported["report"]["notes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| n["message"].as_str().unwrap().to_string())
        .collect();
    assert!(!import_notes.is_empty(), "{imported}");

    let h = t.health(now).await;
    let agents = h["agents"].as_array().unwrap();
    assert_eq!(agents.len(), 1, "{h}");
    let a = &agents[0];
    assert_eq!(a["name"], "fra-agent");
    assert_eq!(a["clusters"], json!(["c1"]));
    assert_eq!(
        (
            a["batches"].as_i64(),
            a["observations"].as_i64(),
            a["resyncs"].as_i64()
        ),
        (Some(1), Some(2), Some(0))
    );
    assert_eq!(a["sends"], json!(["observations", "probe address"]));
    let seen = a["last_seen_age_s"].as_i64().unwrap();
    assert!((0..120).contains(&seen), "{a}");
    assert_eq!(h["probes"][0]["address"], "10.0.0.7:7946");
    assert_eq!(h["probes"][0]["cluster"], "c1");
    // Newest first: the import (its notes kept), the fact update, the upload.
    let actions: Vec<&str> = h["changes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["action"].as_str().unwrap())
        .collect();
    assert_eq!(
        actions,
        ["estate.imported", "facts.updated", "estate.uploaded"],
        "{h}"
    );
    let imp = &h["changes"][0];
    assert_eq!(imp["notes"], json!(import_notes));
    assert!(
        imp["summary"]
            .as_str()
            .unwrap()
            .starts_with("Kubernetes services imported into c2: "),
        "{imp}"
    );
    assert_eq!(h["changes"][1]["summary"], "1 fact updated");
    assert_eq!(
        h["changes"][2]["summary"],
        "estate file uploaded: 2 services on 2 clusters at 3 sites, 1 flow"
    );
    // c1's CPU is fresh now; c2's memory is known (reported).
    let cpu = kind(&h, "free CPU");
    assert_eq!(
        (cpu["stale"].as_u64(), cpu["measured"].as_u64()),
        (Some(0), Some(2)),
        "{cpu}"
    );
    let mem = kind(&h, "free memory");
    assert_eq!(
        (mem["unknown"].as_u64(), mem["reported"].as_u64()),
        (Some(0), Some(1)),
        "{mem}"
    );
    // A viewer of another estate does not see this one's health.
    let (status, _) = t
        .call("not-a-token", Method::GET, "/api/estates/est/health", None)
        .await;
    assert_eq!(status, StatusCode::UNAUTHORIZED);
}
both!(health_says_who_sent_what_and_counts_the_facts);
