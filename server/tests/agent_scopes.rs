//! Agent tokens bound to their clusters (issue 37 item 2), on SQLite and
//! PostgreSQL: every route an agent token may call — observations (capacity,
//! round trips, flows, traffic), probe registration, cluster records, and
//! the Kubernetes re-sync — refuses a write outside the token's clusters
//! with 403 naming the scope, and writes nothing; inside, it works as
//! before. Also: tokens are created with their clusters, and migration 12
//! scopes existing agent tokens by what they have reported.

mod support;

use axum::body::Body;
use axum::http::{header, Method, Request, StatusCode};
use axum::Router;
use serde_json::{json, Value};
use tower::ServiceExt;

use support::{Backend, TestDb};

const ADMIN: &str = "admin-token-for-tests-0123456789abcdef";
const AT: &str = "2026-11-30T04:06:00Z";

struct App {
    app: Router,
    _db: TestDb,
}

struct Reply {
    status: StatusCode,
    body: Value,
}

impl App {
    async fn new(b: Backend) -> App {
        let db = TestDb::new(b).await;
        let opts = berth::serve::ServeOptions {
            listen: "127.0.0.1:0".parse().unwrap(),
            database_url: Some(db.url.clone()),
            data_dir: std::env::temp_dir(),
            admin_token: Some(ADMIN.into()),
            seed: true,
            sample_at: Some(berth::serve::sample_designed_at()),
            max_connections: 4,
            secret_key: None,
            secret_key_file: None,
            decider_allow: Vec::new(),
            driver_every_s: None,
            history_retention_days: berth::external::driver::DEFAULT_HISTORY_RETENTION_DAYS,
            net: Default::default(),
            config: berth::Config::default(),
        };
        let (state, _) = berth::serve::prepare(&opts).await.expect("server prepares");
        App {
            app: berth::http::app(state),
            _db: db,
        }
    }

    async fn send(&self, token: &str, method: Method, path: &str, body: Option<&Value>) -> Reply {
        let mut req = Request::builder()
            .method(method)
            .uri(path)
            .header(header::AUTHORIZATION, format!("Bearer {token}"));
        let body = match body {
            Some(b) => {
                req = req.header(header::CONTENT_TYPE, "application/json");
                Body::from(b.to_string())
            }
            None => Body::empty(),
        };
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
        Reply {
            status,
            body: serde_json::from_slice(&bytes).unwrap_or(Value::Null),
        }
    }

    async fn post(&self, token: &str, path: &str, body: Value) -> Reply {
        self.send(token, Method::POST, path, Some(&body)).await
    }

    async fn token(&self, body: Value) -> Reply {
        self.post(ADMIN, "/api/tokens", body).await
    }

    async fn agent(&self, clusters: &[&str], extra: Value) -> String {
        let mut body =
            json!({"name": "agent", "role": "agent", "estate": "sample", "clusters": clusters});
        for (k, v) in extra.as_object().unwrap() {
            body[k] = v.clone();
        }
        let r = self.token(body).await;
        assert_eq!(r.status, StatusCode::CREATED, "{}", r.body);
        r.body["token"].as_str().unwrap().to_string()
    }

    async fn version(&self) -> i64 {
        self.send(ADMIN, Method::GET, "/api/estates/sample", None)
            .await
            .body["version"]
            .as_i64()
            .unwrap()
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

fn batch(id: &str, observations: Value) -> Value {
    json!({"batch_id": id, "observations": observations})
}

/// A 403 that names the token's scope and what fell outside it.
#[track_caller]
fn refused(r: &Reply, outside: &str) {
    assert_eq!(r.status, StatusCode::FORBIDDEN, "{}", r.body);
    let m = r.body["message"].as_str().unwrap_or_default();
    assert!(
        m.contains("scoped to cluster(s) [\"c-fra-1\"]") && m.contains(outside),
        "{m}"
    );
}

both!(tokens_are_created_with_their_clusters);
async fn tokens_are_created_with_their_clusters(b: Backend) {
    let t = App::new(b).await;
    let r = t
        .token(json!({"name": "a", "role": "agent", "estate": "sample"}))
        .await;
    assert_eq!(r.status, StatusCode::BAD_REQUEST, "{}", r.body);
    assert!(r.body["message"].as_str().unwrap().contains("\"clusters\""));
    let r = t
        .token(json!({"name": "a", "role": "agent", "estate": "sample", "clusters": []}))
        .await;
    assert_eq!(r.status, StatusCode::BAD_REQUEST, "{}", r.body);
    let r = t
        .token(json!({"name": "v", "role": "viewer", "clusters": ["c-fra-1"]}))
        .await;
    assert_eq!(r.status, StatusCode::BAD_REQUEST, "{}", r.body);
    let r = t
        .token(json!({"name": "a", "role": "agent", "estate": "sample", "clusters": ["c-fra-2", "c-fra-1", "c-fra-2"]}))
        .await;
    assert_eq!(r.status, StatusCode::CREATED, "{}", r.body);
    assert_eq!(r.body["clusters"], json!(["c-fra-1", "c-fra-2"]));
    let list = t.send(ADMIN, Method::GET, "/api/tokens", None).await.body;
    let agent = list["tokens"]
        .as_array()
        .unwrap()
        .iter()
        .find(|x| x["role"] == "agent")
        .unwrap();
    assert_eq!(agent["clusters"], json!(["c-fra-1", "c-fra-2"]));
}

both!(every_agent_write_stays_inside_its_clusters);
async fn every_agent_write_stays_inside_its_clusters(b: Backend) {
    let t = App::new(b).await;
    let agent = t
        .agent(&["c-fra-1"], json!({"may_create_clusters": true}))
        .await;
    let url = "/api/estates/sample/observations";
    let v0 = t.version().await;

    // Capacity of its own cluster: applied.
    let r = t
        .post(
            &agent,
            url,
            batch(
                "own",
                json!([{"fact": "cpu_free", "cluster": "c-fra-1", "value": 7, "observed_at": AT}]),
            ),
        )
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    let v1 = t.version().await;
    assert_eq!(v1, v0 + 1);

    // Each kind of write outside it: 403 naming the scope, nothing written,
    // even with an in-scope observation in the same batch.
    let own = json!({"fact": "cpu_free", "cluster": "c-fra-1", "value": 6, "observed_at": AT});
    let cases = [
        (
            json!({"fact": "memory_free_gib", "cluster": "c-par-1", "value": 7, "observed_at": AT}),
            "cluster \"c-par-1\"",
        ),
        (
            json!({"fact": "rtt_ms", "a": "c-dub-1", "b": "c-iad-1", "value": 3, "observed_at": AT}),
            "path c-dub-1 → c-iad-1",
        ),
        (
            json!({"fact": "rtt_ms", "a": "lon", "b": "par", "value": 3, "observed_at": AT}),
            "link",
        ),
        (
            json!({"fact": "traffic", "service": "search", "value": 300, "observed_at": AT}),
            "service \"search\" (cluster \"c-fra-2\")",
        ),
    ];
    for (i, (obs, outside)) in cases.iter().enumerate() {
        let r = t
            .post(&agent, url, batch(&format!("out-{i}"), json!([own, obs])))
            .await;
        refused(&r, outside);
        assert_eq!(t.version().await, v1, "nothing written for {obs}");
    }
    // A flow between two services of other clusters.
    let file = t
        .send(ADMIN, Method::GET, "/api/estates/sample/file", None)
        .await
        .body;
    let cluster_of = |s: &str| {
        file["services"]
            .as_array()
            .unwrap()
            .iter()
            .find(|x| x["id"] == s)
            .map(|x| x["cluster"].as_str().unwrap().to_string())
    };
    let foreign = file["flows"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| {
            cluster_of(f["from"].as_str().unwrap()).as_deref() != Some("c-fra-1")
                && cluster_of(f["to"].as_str().unwrap()).as_deref() != Some("c-fra-1")
        })
        .expect("the sample has flows between other clusters")
        .clone();
    let r = t
        .post(&agent, url, batch("flow-out", json!([{"fact": "flow_weight", "from": foreign["from"], "to": foreign["to"], "value": 99, "observed_at": AT}])))
        .await;
    refused(&r, "flow ");
    // A flow leaving its cluster, a path from it, traffic of its service: inside.
    let r = t
        .post(&agent, url, batch("inside", json!([
            {"fact": "rtt_ms", "a": "c-fra-1", "b": "c-par-1", "value": 9, "observed_at": AT},
            {"fact": "flow_weight", "from": "shop-gateway", "to": "shop-frontend", "value": 15, "observed_at": AT},
            {"fact": "traffic", "service": "shop-gateway", "value": 300, "observed_at": AT},
        ])))
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    let v2 = t.version().await;
    assert_eq!(v2, v1 + 1);

    // A probe for another cluster; one for its own.
    let r = t
        .post(&agent, url, json!({"batch_id": "probe-out", "observations": [], "probe": {"cluster": "c-par-1", "address": "10.0.0.9:7000"}}))
        .await;
    refused(&r, "a probe for cluster \"c-par-1\"");
    let r = t
        .post(&agent, url, json!({"batch_id": "probe-in", "observations": [], "probe": {"cluster": "c-fra-1", "address": "10.0.0.9:7000"}}))
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);

    // Creating a cluster it was not given, even with may_create_clusters.
    let record = json!({"id": "c-fra-9", "name": "Frankfurt 9", "site": "fra", "tier": "prod", "trust_zone": "general", "cpu_total": 10, "memory_total_gib": 10});
    let r = t
        .post(
            &agent,
            url,
            json!({"batch_id": "create", "observations": [], "cluster": record}),
        )
        .await;
    refused(&r, "a record for cluster \"c-fra-9\"");
    assert_eq!(t.version().await, v2);

    // An operator is not bound to clusters.
    let op = t
        .token(json!({"name": "op", "role": "operator"}))
        .await
        .body["token"]
        .as_str()
        .unwrap()
        .to_string();
    let r = t
        .post(
            &op,
            url,
            batch(
                "op",
                json!([{"fact": "cpu_free", "cluster": "c-par-1", "value": 1, "observed_at": AT}]),
            ),
        )
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
}

both!(a_service_resync_is_bound_to_the_tokens_clusters);
async fn a_service_resync_is_bound_to_the_tokens_clusters(b: Backend) {
    let t = App::new(b).await;
    let agent = t
        .agent(&["c-fra-3"], json!({"may_sync_services": true}))
        .await;
    let url = "/api/estates/sample/import/kubernetes";
    let manifest = "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: scopetest, namespace: scopetest}\nspec:\n  replicas: 2\n  selector: {matchLabels: {app: scopetest}}\n  template:\n    metadata: {labels: {app: scopetest}}\n    spec:\n      containers:\n      - name: scopetest\n        image: scopetest:1\n        resources: {requests: {cpu: 250m, memory: 256Mi}}\n";
    let body = |cluster: &str| json!({"cluster": cluster, "files": [{"name": "cart.yaml", "text": manifest}]});
    let v0 = t.version().await;
    // Another agent's cluster: refused, nothing removed or added.
    for other in ["c-dub-1", "c-fra-1"] {
        let r = t.post(&agent, url, body(other)).await;
        assert_eq!(r.status, StatusCode::FORBIDDEN, "{}", r.body);
        let m = r.body["message"].as_str().unwrap();
        assert!(
            m.contains("scoped to cluster(s) [\"c-fra-3\"]")
                && m.contains(&format!("the services of cluster \"{other}\"")),
            "{m}"
        );
    }
    assert_eq!(t.version().await, v0);
    // Its own: applied.
    let r = t.post(&agent, url, body("c-fra-3")).await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    assert_eq!(r.body["written"], true);
    assert_eq!(t.version().await, v0 + 1);
}

both!(existing_agent_tokens_are_scoped_by_what_they_reported);
async fn existing_agent_tokens_are_scoped_by_what_they_reported(b: Backend) {
    let db = TestDb::new(b).await;
    sqlx::any::install_default_drivers();
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../migrations")
        .join(match b {
            Backend::Sqlite => "sqlite",
            Backend::Postgres => "postgres",
        });
    let mut before = sqlx::migrate::Migrator::new(dir.as_path()).await.unwrap();
    assert!(before.migrations.iter().any(|m| m.version == 12));
    before.migrations = before
        .migrations
        .iter()
        .filter(|m| m.version < 12)
        .cloned()
        .collect::<Vec<_>>()
        .into();
    let doc = json!({"clusters": [
        {"id": "c-a", "cpu_free": {"value": 1, "source": "token:aaaaaaaaaaaa (agent a)"}},
        {"id": "c-b", "memory_free_gib": {"value": 1, "source": "token:aaaaaaaaaaaa (agent a)"}},
        {"id": "c-c", "cpu_free": {"value": 1, "source": "token:aaaaaaaaaaaab (someone else)"}},
        {"id": "c-d"}
    ]});
    {
        let pool = sqlx::AnyPool::connect(&db.url).await.unwrap();
        before.run(&pool).await.unwrap();
        sqlx::query(
            "INSERT INTO estates (id, name, version, document, content_digest, policy, policy_digest, created_at, updated_at) \
             VALUES ('old', 'old', 3, $1, 'c', '{}', 'p', 0, 0)",
        )
        .bind(doc.to_string())
        .execute(&pool)
        .await
        .unwrap();
        for (id, role, estate) in [
            ("aaaaaaaaaaaa", "agent", Some("old")),
            ("bbbbbbbbbbbb", "agent", Some("old")),
            ("cccccccccccc", "agent", Some("old")),
            ("dddddddddddd", "viewer", None),
        ] {
            sqlx::query(
                "INSERT INTO tokens (id, hash, name, role, estate_id, created_at, created_by) VALUES ($1, $2, $1, $3, $4, 0, 'test')",
            )
            .bind(id)
            .bind(format!("hash-{id}"))
            .bind(role)
            .bind(estate)
            .execute(&pool)
            .await
            .unwrap();
        }
        for (cluster, submitter) in [("c-d", "token:bbbbbbbbbbbb"), ("c-a", "token:aaaaaaaaaaaa")] {
            sqlx::query(
                "INSERT INTO agent_probes (estate_id, cluster, address, submitter, updated_at) VALUES ('old', $1, '10.0.0.1:7000', $2, 0)",
            )
            .bind(cluster)
            .bind(submitter)
            .execute(&pool)
            .await
            .unwrap();
        }
        pool.close().await;
    }
    let upgraded = berth::db::Db::connect(&db.url, 2).await.unwrap();
    upgraded.ready().await.unwrap();
    let rows = berth::store::list_tokens(&upgraded).await.unwrap();
    let scope = |id: &str| rows.iter().find(|t| t.id == id).unwrap().clusters.clone();
    // Probes and capacity reported, each cluster once, in order.
    assert_eq!(
        scope("aaaaaaaaaaaa"),
        Some(vec!["c-a".into(), "c-b".into()])
    );
    assert_eq!(scope("bbbbbbbbbbbb"), Some(vec!["c-d".into()]));
    // No evidence: bound to nothing, never to everything.
    assert_eq!(scope("cccccccccccc"), Some(vec![]));
    assert_eq!(scope("dddddddddddd"), None);
}
