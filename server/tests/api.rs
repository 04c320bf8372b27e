//! The API test suite, run twice: on SQLite and on PostgreSQL (a fresh
//! database per test either way). Requests go through the real router —
//! the same `berth::http::app` that `berth serve` runs — with `oneshot`.

mod support;

use axum::body::Body;
use axum::http::{header, HeaderMap, Method, Request, StatusCode};
use axum::Router;
use serde_json::{json, Value};
use tower::ServiceExt;

use berth::auth::Access;
use berth::http::routes;
use support::{Backend, TestDb};

const ADMIN: &str = "admin-token-for-tests-0123456789abcdef";
const NOW: &str = "2026-11-30T04:05:00Z";
const SAMPLE_SCENARIO: &str = include_str!("../../examples/scenarios/retire-c-par-2.json");
const SAMPLE_RESPONSE: &str = include_str!("../../examples/responses/sample-ops-team.json");

struct TestApp {
    app: Router,
    state: berth::AppState,
    _db: TestDb,
}

struct Reply {
    status: StatusCode,
    headers: HeaderMap,
    body: Vec<u8>,
}

impl Reply {
    fn json(&self) -> Value {
        serde_json::from_slice(&self.body).unwrap_or_else(|e| {
            panic!(
                "not JSON ({e}): {}",
                String::from_utf8_lossy(&self.body[..self.body.len().min(500)])
            )
        })
    }
    fn text(&self) -> String {
        String::from_utf8_lossy(&self.body).into_owned()
    }
    #[track_caller]
    fn expect(self, status: StatusCode) -> Reply {
        assert_eq!(self.status, status, "body: {}", self.text());
        self
    }
}

/// Who sends a request.
#[derive(Clone)]
enum As {
    Nobody,
    Bearer(String),
    /// Session cookie, and the CSRF token to send (if any).
    Cookie(String, Option<String>),
    /// A raw Authorization header value.
    Authorization(String),
}

impl TestApp {
    async fn new(backend: Backend) -> TestApp {
        let db = TestDb::new(backend).await;
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
        let (state, printed) = berth::serve::prepare(&opts).await.expect("server prepares");
        assert!(
            printed.is_none(),
            "an environment token means none is generated"
        );
        TestApp {
            app: berth::http::app(state.clone()),
            state,
            _db: db,
        }
    }

    async fn call(
        &self,
        who: &As,
        method: Method,
        path: &str,
        ct: Option<&str>,
        body: impl Into<Body>,
    ) -> Reply {
        let mut req = Request::builder().method(method).uri(path);
        match who {
            As::Nobody => {}
            As::Bearer(t) => req = req.header(header::AUTHORIZATION, format!("Bearer {t}")),
            As::Authorization(v) => req = req.header(header::AUTHORIZATION, v),
            As::Cookie(c, csrf) => {
                req = req.header(header::COOKIE, format!("berth_session={c}"));
                if let Some(t) = csrf {
                    req = req.header("x-csrf-token", t);
                }
            }
        }
        if let Some(ct) = ct {
            req = req.header(header::CONTENT_TYPE, ct);
        }
        let resp = self
            .app
            .clone()
            .oneshot(req.body(body.into()).unwrap())
            .await
            .unwrap();
        let status = resp.status();
        let headers = resp.headers().clone();
        let body = axum::body::to_bytes(resp.into_body(), usize::MAX)
            .await
            .unwrap()
            .to_vec();
        Reply {
            status,
            headers,
            body,
        }
    }

    async fn get(&self, who: &As, path: &str) -> Reply {
        self.call(who, Method::GET, path, None, Body::empty()).await
    }

    async fn send(&self, who: &As, method: Method, path: &str, body: &Value) -> Reply {
        self.call(
            who,
            method,
            path,
            Some("application/json"),
            body.to_string(),
        )
        .await
    }

    fn admin() -> As {
        As::Bearer(ADMIN.into())
    }

    async fn token(&self, role: &str, estate: Option<&str>) -> String {
        let mut body = json!({"name": format!("{role} for tests"), "role": role, "estate": estate});
        if role == "agent" {
            // Agent tokens name their clusters (issue 37): here every
            // cluster of the estate, so these tests write where they like.
            let file = self
                .get(
                    &Self::admin(),
                    &format!("/api/estates/{}/file", estate.unwrap_or("sample")),
                )
                .await
                .json();
            body["clusters"] = json!(file["clusters"]
                .as_array()
                .unwrap()
                .iter()
                .map(|c| c["id"].clone())
                .collect::<Vec<_>>());
        }
        let r = self
            .send(&Self::admin(), Method::POST, "/api/tokens", &body)
            .await
            .expect(StatusCode::CREATED);
        r.json()["token"].as_str().unwrap().to_string()
    }

    async fn meta(&self, id: &str) -> Value {
        self.get(&Self::admin(), &format!("/api/estates/{id}"))
            .await
            .expect(StatusCode::OK)
            .json()
    }
}

/// Run one async test body on both backends, as `NAME::sqlite` and
/// `NAME::postgres`.
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

/// A path with its parameters filled in.
fn concrete(path: &str, estate: &str) -> String {
    path.replace("{id}", estate)
        .replace("{service}", "shop-gateway")
        .replace("{name}", "nobody-by-this-name")
        .replace("{token_id}", "nosuchtoken")
}

both!(every_route_enforces_its_declared_access);
async fn every_route_enforces_its_declared_access(b: Backend) {
    let t = TestApp::new(b).await;
    let viewer = As::Bearer(t.token("viewer", None).await);
    let operator = As::Bearer(t.token("operator", None).await);
    let callers = [
        ("nobody", As::Nobody, None),
        ("viewer", viewer, Some(berth::auth::Role::Viewer)),
        ("operator", operator, Some(berth::auth::Role::Operator)),
        ("admin", TestApp::admin(), Some(berth::auth::Role::Admin)),
    ];
    for (who, caller, role) in &callers {
        for spec in routes() {
            // Destructive routes aim at something that does not exist, so
            // the walk itself changes nothing; the access check comes first
            // either way.
            let estate = if spec.method == Method::DELETE && spec.path == "/api/estates/{id}" {
                "no-such-estate"
            } else {
                "sample"
            };
            let path = concrete(spec.path, estate);
            let r = t
                .call(
                    caller,
                    spec.method.clone(),
                    &path,
                    Some("application/json"),
                    "{}",
                )
                .await;
            let allowed = match role {
                None => spec.access == Access::Public,
                Some(have) => spec.access.granted_to(*have),
            };
            let what = format!("{who} {} {path} → {} {}", spec.method, r.status, r.text());
            if allowed {
                assert!(
                    r.status != StatusCode::UNAUTHORIZED && r.status != StatusCode::FORBIDDEN
                        || spec.path == "/api/session" && spec.method == Method::POST,
                    "should be allowed: {what}"
                );
            } else if role.is_none() {
                assert_eq!(r.status, StatusCode::UNAUTHORIZED, "{what}");
                assert_eq!(r.json()["error"], "unauthenticated", "{what}");
            } else {
                assert_eq!(r.status, StatusCode::FORBIDDEN, "{what}");
                assert_eq!(r.json()["error"], "forbidden", "{what}");
            }
        }
    }
    // The sample survived the walk.
    assert_eq!(t.meta("sample").await["version"], 1);
}

both!(a_token_scoped_to_one_estate_sees_only_that_estate);
async fn a_token_scoped_to_one_estate_sees_only_that_estate(b: Backend) {
    let t = TestApp::new(b).await;
    t.call(
        &TestApp::admin(),
        Method::POST,
        "/api/estates?id=other",
        Some("application/json"),
        berth::serve::SAMPLE_ESTATE,
    )
    .await
    .expect(StatusCode::CREATED);
    let scoped = As::Bearer(t.token("operator", Some("other")).await);
    let list = t
        .get(&scoped, "/api/estates")
        .await
        .expect(StatusCode::OK)
        .json();
    let ids: Vec<&str> = list["estates"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["id"].as_str().unwrap())
        .collect();
    assert_eq!(ids, ["other"]);
    t.get(&scoped, &format!("/api/estates/other/advice?now={NOW}"))
        .await
        .expect(StatusCode::OK);
    let r = t
        .get(&scoped, &format!("/api/estates/sample/advice?now={NOW}"))
        .await
        .expect(StatusCode::FORBIDDEN);
    assert!(r.text().contains("scoped to estate"), "{}", r.text());
    // Estate-wide actions are refused too.
    t.call(
        &scoped,
        Method::POST,
        "/api/estates?id=x",
        Some("application/json"),
        berth::serve::SAMPLE_ESTATE,
    )
    .await
    .expect(StatusCode::FORBIDDEN);
    // And an admin token cannot be scoped.
    let r = t
        .send(
            &TestApp::admin(),
            Method::POST,
            "/api/tokens",
            &json!({"name": "x", "role": "admin", "estate": "other"}),
        )
        .await
        .expect(StatusCode::BAD_REQUEST);
    assert!(r.text().contains("cannot be scoped"));
}

both!(import_errors_are_422_with_every_path_and_line_and_write_nothing);
async fn import_errors_are_422_with_every_path_and_line_and_write_nothing(b: Backend) {
    let t = TestApp::new(b).await;
    let before = t.meta("sample").await;
    let bad = berth::serve::SAMPLE_ESTATE
        .replacen("\"class\": \"measured\"", "\"class\": \"mesured\"", 1)
        .replacen("\"cpu_total\": 128", "\"cpu_total\": \"128\"", 1);
    let r = t
        .call(
            &TestApp::admin(),
            Method::PUT,
            "/api/estates/sample/file",
            Some("application/json"),
            bad,
        )
        .await
        .expect(StatusCode::UNPROCESSABLE_ENTITY);
    let v = r.json();
    assert_eq!(v["error"], "invalid");
    assert!(v["message"]
        .as_str()
        .unwrap()
        .contains("nothing was written"));
    let errors = v["details"]["errors"].as_array().unwrap();
    assert_eq!(errors.len(), 2, "{v:#}");
    assert_eq!(errors[0]["path"], "/clusters/0/cpu_free/class");
    assert!(errors[0]["line"].as_u64().unwrap() > 1);
    assert_eq!(errors[1]["path"], "/clusters/1/cpu_total");
    assert!(errors[1]["message"]
        .as_str()
        .unwrap()
        .contains("expected a number"));
    // Nothing written.
    let after = t.meta("sample").await;
    assert_eq!(after["version"], before["version"]);
    assert_eq!(after["content_digest"], before["content_digest"]);
}

both!(estates_create_export_reimport_round_trip);
async fn estates_create_export_reimport_round_trip(b: Backend) {
    let t = TestApp::new(b).await;
    let admin = TestApp::admin();
    // Create from YAML; the id defaults to a slug of the name.
    let sample: Value = serde_json::from_str(berth::serve::SAMPLE_ESTATE).unwrap();
    let yaml = serde_yaml::to_string(&sample).unwrap();
    let created = t
        .call(
            &admin,
            Method::POST,
            "/api/estates",
            Some("application/yaml"),
            yaml,
        )
        .await
        .expect(StatusCode::CREATED)
        .json();
    assert_eq!(created["id"], "acme-retail-sample-estate");
    assert_eq!(created["version"], 1);
    assert_eq!(
        created["counts"]["services"],
        sample["services"].as_array().unwrap().len()
    );
    let sample_meta = t.meta("sample").await;
    assert_eq!(
        created["content_digest"], sample_meta["content_digest"],
        "same content, same digest"
    );
    // Creating it again conflicts.
    t.call(
        &admin,
        Method::POST,
        "/api/estates?id=sample",
        Some("application/json"),
        berth::serve::SAMPLE_ESTATE,
    )
    .await
    .expect(StatusCode::CONFLICT);
    // Export as JSON and as YAML; both load to the same estate.
    let json_file = t
        .get(&admin, "/api/estates/sample/file")
        .await
        .expect(StatusCode::OK);
    assert!(json_file.headers[header::ETAG]
        .to_str()
        .unwrap()
        .contains(sample_meta["content_digest"].as_str().unwrap()));
    let yaml_file = t
        .get(&admin, "/api/estates/sample/file?format=yaml")
        .await
        .expect(StatusCode::OK);
    for text in [json_file.text(), yaml_file.text()] {
        let e = berth_engine::load(&text, berth_engine::Format::sniff(&text)).unwrap();
        assert_eq!(
            berth_engine::export::version(&e),
            sample_meta["content_digest"].as_str().unwrap()
        );
    }
    // Re-import the YAML export: the version bumps, the content stays.
    let re = t
        .call(
            &admin,
            Method::PUT,
            "/api/estates/sample/file",
            Some("application/yaml"),
            yaml_file.text(),
        )
        .await
        .expect(StatusCode::OK)
        .json();
    assert_eq!(re["version"], 2);
    assert_eq!(re["content_digest"], sample_meta["content_digest"]);
    // Delete: gone, and its scenarios with it.
    t.call(
        &admin,
        Method::PUT,
        "/api/estates/acme-retail-sample-estate/scenarios/retire",
        Some("application/json"),
        SAMPLE_SCENARIO,
    )
    .await
    .expect(StatusCode::NO_CONTENT);
    t.call(
        &admin,
        Method::DELETE,
        "/api/estates/acme-retail-sample-estate",
        None,
        Body::empty(),
    )
    .await
    .expect(StatusCode::NO_CONTENT);
    t.get(&admin, "/api/estates/acme-retail-sample-estate")
        .await
        .expect(StatusCode::NOT_FOUND);
    t.get(
        &admin,
        "/api/estates/acme-retail-sample-estate/scenarios/retire",
    )
    .await
    .expect(StatusCode::NOT_FOUND);
}

async fn advice(t: &TestApp, who: &As) -> Value {
    t.get(who, &format!("/api/estates/sample/advice?now={NOW}"))
        .await
        .expect(StatusCode::OK)
        .json()
}

both!(fact_updates_bump_the_version_and_change_the_advice);
async fn fact_updates_bump_the_version_and_change_the_advice(b: Backend) {
    let t = TestApp::new(b).await;
    let admin = TestApp::admin();
    let a1 = advice(&t, &admin).await;
    assert_eq!(a1["version"], 1);
    // c-fra-2 reports it is full: advice must stop sending work there.
    let r = t
        .send(&admin, Method::POST, "/api/estates/sample/facts", &json!({"updates": [
            {"fact": "cpu_free", "cluster": "c-fra-2", "value": 0, "class": "measured", "source": "agent:c-fra-2", "observed_at": "2026-11-30T04:04:30Z"},
            {"fact": "memory_free_gib", "cluster": "c-fra-2", "value": 0, "class": "measured", "source": "agent:c-fra-2", "observed_at": "2026-11-30T04:04:30Z"},
            {"fact": "rtt_ms", "a": "fra", "b": "par", "value": 9.0, "class": "measured", "source": "probe:x"},
            {"fact": "flow_mb_s", "from": "shop-gateway", "to": "shop-frontend", "value": 40, "class": "measured", "source": "mesh"}
        ]}))
        .await
        .expect(StatusCode::OK)
        .json();
    assert_eq!(r["version"], 2);
    assert_eq!(r["applied"], 4);
    let a2 = advice(&t, &admin).await;
    assert_eq!(a2["version"], 2);
    assert_ne!(a2["content_digest"], a1["content_digest"]);
    let dest = |a: &Value| -> Vec<String> {
        a["result"]["moves"]
            .as_array()
            .unwrap()
            .iter()
            .map(|m| m["to"].as_str().unwrap().to_string())
            .collect()
    };
    assert!(
        dest(&a1).iter().any(|d| d == "c-fra-2"),
        "the sample sends work to c-fra-2: {:?}",
        dest(&a1)
    );
    assert!(
        !dest(&a2).iter().any(|d| d == "c-fra-2"),
        "a full cluster receives nothing: {:?}",
        dest(&a2)
    );
    // The stored fact carries its class, source and time.
    let file = t
        .get(&admin, "/api/estates/sample/file")
        .await
        .expect(StatusCode::OK)
        .json();
    let c = file["clusters"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["id"] == "c-fra-2")
        .unwrap();
    assert_eq!(
        c["cpu_free"],
        json!({"value": 0.0, "class": "measured", "source": "agent:c-fra-2", "observed_at": "2026-11-30T04:04:30Z"})
    );
    // A bad batch: every error by index, nothing applied.
    let r = t
        .send(&admin, Method::POST, "/api/estates/sample/facts", &json!({"updates": [
            {"fact": "cpu_free", "cluster": "c-fra-1", "value": 1, "class": "measured"},
            {"fact": "cpu_free", "cluster": "c-nowhere", "value": 1, "class": "measured"},
            {"fact": "flow_weight", "from": "shop-gateway", "to": "ghost", "value": 1, "class": "measured"}
        ]}))
        .await
        .expect(StatusCode::UNPROCESSABLE_ENTITY)
        .json();
    let paths: Vec<&str> = r["details"]["errors"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["path"].as_str().unwrap())
        .collect();
    assert_eq!(paths, ["/updates/1/cluster", "/updates/2/to"]);
    assert_eq!(t.meta("sample").await["version"], 2, "nothing applied");
}

both!(policy_is_validated_and_every_result_names_its_digest);
async fn policy_is_validated_and_every_result_names_its_digest(b: Backend) {
    let t = TestApp::new(b).await;
    let admin = TestApp::admin();
    let p0 = t
        .get(&admin, "/api/estates/sample/policy")
        .await
        .expect(StatusCode::OK)
        .json();
    assert_eq!(p0["policy"]["cross_site_weight"], 8.0);
    let a0 = t
        .get(&admin, &format!("/api/estates/sample/advice?now={NOW}"))
        .await
        .json();
    assert_eq!(a0["policy_digest"], p0["policy_digest"]);
    assert_eq!(
        a0["result"]["policy_digest"], p0["policy_digest"],
        "the engine and the server agree"
    );
    // Unknown keys and out-of-range values are refused with reasons.
    let r = t
        .send(
            &admin,
            Method::PUT,
            "/api/estates/sample/policy",
            &json!({"cross_site_wieght": 1}),
        )
        .await
        .expect(StatusCode::UNPROCESSABLE_ENTITY);
    assert!(r.text().contains("cross_site_wieght"), "{}", r.text());
    let r = t
        .send(
            &admin,
            Method::PUT,
            "/api/estates/sample/policy",
            &json!({"headroom_threshold": 1.5, "min_gain_points": -1}),
        )
        .await
        .expect(StatusCode::UNPROCESSABLE_ENTITY);
    let errs = r.json()["details"]["errors"].as_array().unwrap().len();
    assert_eq!(errs, 2, "{}", r.text());
    let unchanged = t.get(&admin, "/api/estates/sample/policy").await.json();
    assert_eq!(unchanged["policy_digest"], p0["policy_digest"]);
    // A real change: new digest, and the advice follows it.
    let p1 = t
        .send(
            &admin,
            Method::PUT,
            "/api/estates/sample/policy",
            &json!({"cross_site_weight": 0, "round_trip_weight": 0}),
        )
        .await
        .expect(StatusCode::OK)
        .json();
    assert_ne!(p1["policy_digest"], p0["policy_digest"]);
    let a1 = t
        .get(&admin, &format!("/api/estates/sample/advice?now={NOW}"))
        .await
        .json();
    assert_eq!(a1["policy_digest"], p1["policy_digest"]);
    assert_ne!(
        a1["result"]["moves"], a0["result"]["moves"],
        "with no network weight there is nothing to gain"
    );
}

both!(engine_results_are_served_and_cached_by_version_and_digest);
async fn engine_results_are_served_and_cached_by_version_and_digest(b: Backend) {
    let t = TestApp::new(b).await;
    let admin = TestApp::admin();
    let url = format!("/api/estates/sample/advice?now={NOW}");
    let a = t.get(&admin, &url).await.expect(StatusCode::OK);
    let b2 = t.get(&admin, &url).await.expect(StatusCode::OK);
    assert_eq!(a.body, b2.body, "identical inputs, identical bytes");
    let m = t.state.metrics.render(0, 0, 0);
    assert!(
        m.contains("berth_result_cache_total{op=\"advice\",outcome=\"hit\"} 1"),
        "{m}"
    );
    assert!(
        m.contains("berth_result_cache_total{op=\"advice\",outcome=\"miss\"} 1"),
        "{m}"
    );
    // The served advice is the engine's, byte for byte.
    let e = berth_engine::load(berth::serve::SAMPLE_ESTATE, berth_engine::Format::Json).unwrap();
    let now = berth_engine::estate::parse_time(NOW).unwrap();
    // (Compared as bytes: serde_json's default float parsing may be one
    // unit in the last place off, so a parsed comparison could lie.)
    let direct = serde_json::to_string(&berth_engine::advise(
        &e,
        &berth_engine::Policy::default(),
        now,
    ))
    .unwrap();
    assert!(
        a.text().ends_with(&format!(",\"result\":{direct}}}")),
        "served advice is not the engine's"
    );
    // Why.
    let w = t
        .get(&admin, &format!("{url}&why=true"))
        .await
        .expect(StatusCode::OK)
        .json();
    assert_eq!(
        w["result"]["why"].as_array().unwrap().len(),
        w["result"]["moves"].as_array().unwrap().len()
    );
    // Preview, place, snapshot.
    let p = t
        .get(&admin, &format!("/api/estates/sample/preview?now={NOW}"))
        .await
        .expect(StatusCode::OK)
        .json();
    assert_eq!(p["result"]["schema"], 1);
    let pl = t
        .get(
            &admin,
            &format!("/api/estates/sample/place/shop-gateway?now={NOW}"),
        )
        .await
        .expect(StatusCode::OK)
        .json();
    assert!(!pl["result"]["candidates"].as_array().unwrap().is_empty());
    let r = t
        .get(
            &admin,
            &format!("/api/estates/sample/place/ghost?now={NOW}"),
        )
        .await
        .expect(StatusCode::NOT_FOUND);
    assert!(r.text().contains("ghost"));
    let s = t
        .get(&admin, "/api/estates/sample/snapshot")
        .await
        .expect(StatusCode::OK)
        .json();
    let doc = serde_json::to_string(&s["document"]).unwrap();
    let e2 = berth_engine::load(&doc, berth_engine::Format::Json).unwrap();
    assert_eq!(
        berth_engine::export::version(&e2),
        s["content_digest"].as_str().unwrap()
    );
    let policy: berth_engine::Policy = serde_json::from_value(s["policy"].clone()).unwrap();
    assert_eq!(policy.digest(), s["policy_digest"].as_str().unwrap());
    // A bad `now` is a 400 naming it.
    let r = t
        .get(&admin, "/api/estates/sample/advice?now=yesterday")
        .await
        .expect(StatusCode::BAD_REQUEST);
    assert!(r.text().contains("now=\\\"yesterday\\\""), "{}", r.text());
}

both!(what_if_compare_and_scenarios);
async fn what_if_compare_and_scenarios(b: Backend) {
    let t = TestApp::new(b).await;
    let admin = TestApp::admin();
    let w = t
        .call(
            &admin,
            Method::POST,
            &format!("/api/estates/sample/whatif?now={NOW}"),
            Some("application/json"),
            SAMPLE_SCENARIO,
        )
        .await
        .expect(StatusCode::OK)
        .json();
    let codes: Vec<&str> = w["result"]["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x["code"].as_str().unwrap())
        .collect();
    assert!(
        codes.contains(&"pinned"),
        "moving the pinned payments service warns: {codes:?}"
    );
    let bad =
        r#"{"schema": 1, "name": "x", "steps": [{"move": {"service": "ghost", "to": "c-fra-2"}}]}"#;
    let r = t
        .call(
            &admin,
            Method::POST,
            "/api/estates/sample/whatif",
            Some("application/json"),
            bad,
        )
        .await
        .expect(StatusCode::UNPROCESSABLE_ENTITY)
        .json();
    assert_eq!(r["details"]["errors"][0]["path"], "/steps/0/move/service");
    assert_eq!(r["details"]["errors"][0]["line"], 1);
    // Compare: the built-ins and an uploaded reply, with refusals.
    let reply: Value = serde_json::from_str(SAMPLE_RESPONSE).unwrap();
    let c = t
        .send(
            &admin,
            Method::POST,
            &format!("/api/estates/sample/compare?now={NOW}"),
            &json!({"responses": {"ops-team": reply}}),
        )
        .await
        .expect(StatusCode::OK)
        .json();
    let names: Vec<&str> = c["result"]["deciders"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        [
            "baseline",
            "heaviest-talker",
            "optimum",
            "optimum-capped",
            "local-search",
            "ops-team"
        ]
    );
    let ops = &c["result"]["deciders"][5];
    assert!(
        ops["refused_count"].as_u64().unwrap() > 0
            && !ops["refused"].as_array().unwrap().is_empty(),
        "{ops:#}"
    );
    let r = t
        .send(
            &admin,
            Method::POST,
            "/api/estates/sample/compare",
            &json!({"responses": {"baseline": reply}}),
        )
        .await
        .expect(StatusCode::BAD_REQUEST);
    assert!(r.text().contains("built-in"));
    // Scenarios: save (validated), list, load, delete.
    t.call(
        &admin,
        Method::PUT,
        "/api/estates/sample/scenarios/retire-par",
        Some("application/json"),
        SAMPLE_SCENARIO,
    )
    .await
    .expect(StatusCode::NO_CONTENT);
    t.call(
        &admin,
        Method::PUT,
        "/api/estates/sample/scenarios/broken",
        Some("application/json"),
        bad,
    )
    .await
    .expect(StatusCode::UNPROCESSABLE_ENTITY);
    let list = t
        .get(&admin, "/api/estates/sample/scenarios")
        .await
        .expect(StatusCode::OK)
        .json();
    assert_eq!(list["scenarios"].as_array().unwrap().len(), 1);
    assert_eq!(list["scenarios"][0]["name"], "retire-par");
    let saved = t
        .get(&admin, "/api/estates/sample/scenarios/retire-par")
        .await
        .expect(StatusCode::OK)
        .json();
    assert_eq!(saved["steps"].as_array().unwrap().len(), 3);
    t.call(
        &admin,
        Method::DELETE,
        "/api/estates/sample/scenarios/retire-par",
        None,
        Body::empty(),
    )
    .await
    .expect(StatusCode::NO_CONTENT);
    t.get(&admin, "/api/estates/sample/scenarios/retire-par")
        .await
        .expect(StatusCode::NOT_FOUND);
}

both!(the_decider_leaderboard);
/// The decider leaderboard through the API: the quick suite and this
/// estate, every built-in scored, the same engine code as the CLI; a bad
/// suite name is a 400 that names the good ones.
async fn the_decider_leaderboard(b: Backend) {
    let t = TestApp::new(b).await;
    let admin = TestApp::admin();
    let board = t
        .call(
            &admin,
            Method::POST,
            &format!("/api/estates/sample/leaderboard?now={NOW}&suite=quick"),
            None,
            Body::empty(),
        )
        .await
        .expect(StatusCode::OK)
        .json();
    let r = &board["result"];
    assert_eq!(r["cases"], 14, "13 generated and the sample");
    let last = r["per_case"].as_array().unwrap().last().unwrap().clone();
    assert_eq!(last["family"], "this estate");
    assert_eq!(last["services"], 74);
    let names: Vec<&str> = r["deciders"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, berth_engine::front::BUILTIN_NAMES);
    // The proven optimum is the reference wherever it was proven, so its
    // median share is 1 and nobody passes the reference.
    let optimum = &r["deciders"][2];
    assert_eq!(optimum["median"], 1.0);
    // No decider gains more than the proven bound allows.
    for case in r["per_case"].as_array().unwrap() {
        let most = case["improvement_at_most"].as_f64().unwrap();
        for g in case["gains"].as_array().unwrap() {
            let g = g.as_f64().unwrap();
            assert!(g <= most + 1e-6 * (1.0 + g.abs()), "{case}");
        }
    }
    let bad = t
        .call(
            &admin,
            Method::POST,
            &format!("/api/estates/sample/leaderboard?now={NOW}&suite=huge"),
            None,
            Body::empty(),
        )
        .await
        .expect(StatusCode::BAD_REQUEST)
        .json();
    assert!(
        bad["message"].as_str().unwrap().contains("give quick"),
        "{bad}"
    );
}

fn cookie_of(r: &Reply) -> String {
    let c = r.headers[header::SET_COOKIE].to_str().unwrap().to_string();
    assert!(
        c.contains("HttpOnly") && c.contains("SameSite=Lax") && c.contains("Path=/"),
        "{c}"
    );
    c.split(';')
        .next()
        .unwrap()
        .strip_prefix("berth_session=")
        .unwrap()
        .to_string()
}

both!(browser_sessions_with_csrf_rotation_and_logout);
async fn browser_sessions_with_csrf_rotation_and_logout(b: Backend) {
    let t = TestApp::new(b).await;
    let admin = TestApp::admin();
    // Refused at its field, in the words the Admin page says as it is
    // typed (the engine's rule, `berth_engine::accounts`).
    let r = t
        .send(
            &admin,
            Method::POST,
            "/api/users",
            &json!({"name": "Olga", "role": "operator", "password": "short"}),
        )
        .await
        .expect(StatusCode::BAD_REQUEST)
        .json();
    assert_eq!(
        r["details"]["errors"],
        json!([
            {"path": "/name", "line": null, "message": berth_engine::accounts::name_problem("Olga").unwrap()},
            {"path": "/password", "line": null, "message": "at least 12 characters; this one has 5"}
        ]),
        "{r}"
    );
    assert!(
        r["message"]
            .as_str()
            .unwrap()
            .starts_with("the new user is refused: name: character 1 'O' is a capital letter"),
        "{r}"
    );
    t.send(
        &admin,
        Method::POST,
        "/api/users",
        &json!({"name": "olga", "role": "operator", "password": "a long enough password"}),
    )
    .await
    .expect(StatusCode::CREATED);
    let login = |pw: &'static str| json!({"username": "olga", "password": pw});
    let r = t
        .send(
            &As::Nobody,
            Method::POST,
            "/api/session",
            &login("wrong password!!"),
        )
        .await
        .expect(StatusCode::FORBIDDEN);
    assert_eq!(r.json()["error"], "forbidden");
    let r = t
        .send(
            &As::Nobody,
            Method::POST,
            "/api/session",
            &json!({"username": "nobody", "password": "whatever it is"}),
        )
        .await
        .expect(StatusCode::FORBIDDEN);
    assert!(
        r.text().contains("wrong user name, password or token"),
        "same words for an unknown user"
    );
    // A form post is not accepted (login CSRF).
    t.call(
        &As::Nobody,
        Method::POST,
        "/api/session",
        Some("application/x-www-form-urlencoded"),
        "username=olga",
    )
    .await
    .expect(StatusCode::BAD_REQUEST);
    let r = t
        .send(
            &As::Nobody,
            Method::POST,
            "/api/session",
            &login("a long enough password"),
        )
        .await
        .expect(StatusCode::OK);
    let s1 = cookie_of(&r);
    let csrf = r.json()["csrf_token"].as_str().unwrap().to_string();
    assert_eq!(r.json()["role"], "operator");
    let me = t
        .get(&As::Cookie(s1.clone(), None), "/api/session")
        .await
        .expect(StatusCode::OK)
        .json();
    assert_eq!(me["subject"], "olga");
    assert_eq!(me["csrf_token"], csrf.as_str());
    // A page loaded with the session but not the page-readable marker (a
    // session from before the marker) gets the marker back; with it, or
    // without a session, or from the API, nothing is set.
    let markers = |r: &Reply| {
        r.headers
            .get_all(header::SET_COOKIE)
            .iter()
            .map(|v| v.to_str().unwrap().to_string())
            .filter(|c| c.starts_with("berth_signed_in="))
            .collect::<Vec<_>>()
    };
    let page = t.get(&As::Cookie(s1.clone(), None), "/placement").await;
    let set = markers(&page);
    assert_eq!(set.len(), 1, "{set:?}");
    assert!(
        set[0].starts_with("berth_signed_in=1;")
            && set[0].contains("Max-Age=")
            && !set[0].contains("HttpOnly"),
        "{set:?}"
    );
    let with_marker = As::Cookie(format!("{s1}; berth_signed_in=1"), None);
    assert!(markers(&t.get(&with_marker, "/placement").await).is_empty());
    assert!(markers(&t.get(&As::Nobody, "/placement").await).is_empty());
    assert!(markers(&t.get(&As::Cookie(s1.clone(), None), "/api/session").await).is_empty());
    // State change without / with a wrong / with the right CSRF token.
    let policy = json!({"cross_site_weight": 9});
    let r = t
        .send(
            &As::Cookie(s1.clone(), None),
            Method::PUT,
            "/api/estates/sample/policy",
            &policy,
        )
        .await
        .expect(StatusCode::FORBIDDEN);
    assert!(r.text().contains("x-csrf-token"));
    t.send(
        &As::Cookie(s1.clone(), Some("0".repeat(64))),
        Method::PUT,
        "/api/estates/sample/policy",
        &policy,
    )
    .await
    .expect(StatusCode::FORBIDDEN);
    t.send(
        &As::Cookie(s1.clone(), Some(csrf.clone())),
        Method::PUT,
        "/api/estates/sample/policy",
        &policy,
    )
    .await
    .expect(StatusCode::OK);
    // Admin routes stay closed to an operator's session.
    t.get(&As::Cookie(s1.clone(), None), "/api/tokens")
        .await
        .expect(StatusCode::FORBIDDEN);
    // Signing in again from the same browser: a new id, the old one dead.
    let r = t
        .call(
            &As::Cookie(s1.clone(), None),
            Method::POST,
            "/api/session",
            Some("application/json"),
            login("a long enough password").to_string(),
        )
        .await
        .expect(StatusCode::OK);
    let s2 = cookie_of(&r);
    assert_ne!(s1, s2);
    t.get(&As::Cookie(s1.clone(), None), "/api/session")
        .await
        .expect(StatusCode::UNAUTHORIZED);
    let csrf2 = r.json()["csrf_token"].as_str().unwrap().to_string();
    // Sign out: the cookie is cleared and the session gone.
    let r = t
        .call(
            &As::Cookie(s2.clone(), Some(csrf2)),
            Method::DELETE,
            "/api/session",
            None,
            Body::empty(),
        )
        .await
        .expect(StatusCode::NO_CONTENT);
    assert!(r.headers[header::SET_COOKIE]
        .to_str()
        .unwrap()
        .contains("Max-Age=0"));
    t.get(&As::Cookie(s2, None), "/api/session")
        .await
        .expect(StatusCode::UNAUTHORIZED);
    // A token signs in too, keeping its role.
    let viewer = t.token("viewer", None).await;
    let r = t
        .send(
            &As::Nobody,
            Method::POST,
            "/api/session",
            &json!({"token": viewer}),
        )
        .await
        .expect(StatusCode::OK);
    assert_eq!(r.json()["role"], "viewer");
    // Deleting a user ends their sessions.
    let r = t
        .send(
            &As::Nobody,
            Method::POST,
            "/api/session",
            &login("a long enough password"),
        )
        .await
        .expect(StatusCode::OK);
    let s3 = cookie_of(&r);
    t.call(
        &admin,
        Method::DELETE,
        "/api/users/olga",
        None,
        Body::empty(),
    )
    .await
    .expect(StatusCode::NO_CONTENT);
    t.get(&As::Cookie(s3, None), "/api/session")
        .await
        .expect(StatusCode::UNAUTHORIZED);
}

both!(sign_in_is_rate_limited_per_address);
async fn sign_in_is_rate_limited_per_address(b: Backend) {
    let t = TestApp::new(b).await;
    let body = json!({"token": "berth_not_a_real_token"});
    for i in 0..10 {
        let r = t
            .send(&As::Nobody, Method::POST, "/api/session", &body)
            .await;
        assert_eq!(r.status, StatusCode::FORBIDDEN, "attempt {i}: {}", r.text());
    }
    let r = t
        .send(&As::Nobody, Method::POST, "/api/session", &body)
        .await
        .expect(StatusCode::TOO_MANY_REQUESTS);
    assert_eq!(r.json()["error"], "rate_limited");
    let retry: u64 = r.headers[header::RETRY_AFTER]
        .to_str()
        .unwrap()
        .parse()
        .unwrap();
    assert!((1..=6).contains(&retry), "{retry}");
}

both!(tokens_are_shown_once_hashed_at_rest_and_revocable);
async fn tokens_are_shown_once_hashed_at_rest_and_revocable(b: Backend) {
    let t = TestApp::new(b).await;
    let admin = TestApp::admin();
    let r = t
        .send(
            &admin,
            Method::POST,
            "/api/tokens",
            &json!({"name": "ci", "role": "viewer"}),
        )
        .await
        .expect(StatusCode::CREATED)
        .json();
    let token = r["token"].as_str().unwrap().to_string();
    let id = r["id"].as_str().unwrap().to_string();
    assert!(token.starts_with("berth_") && token.len() == 6 + 64);
    let v = As::Bearer(token.clone());
    t.get(&v, "/api/estates").await.expect(StatusCode::OK);
    let list = t.get(&admin, "/api/tokens").await.expect(StatusCode::OK);
    assert!(
        !list.text().contains(&token[6..]),
        "the secret is never listed"
    );
    // Not in the database either.
    let stored: Vec<String> = sqlx::query_scalar("SELECT hash FROM tokens")
        .fetch_all(&t.state.db.pool)
        .await
        .unwrap();
    assert!(stored.iter().all(|h| !h.contains(&token[6..])));
    assert!(stored.contains(&berth::auth::sha256_hex(&token)));
    t.call(
        &admin,
        Method::DELETE,
        &format!("/api/tokens/{id}"),
        None,
        Body::empty(),
    )
    .await
    .expect(StatusCode::NO_CONTENT);
    let r = t
        .get(&v, "/api/estates")
        .await
        .expect(StatusCode::UNAUTHORIZED);
    assert_eq!(r.json()["error"], "unauthenticated");
    t.call(
        &admin,
        Method::DELETE,
        &format!("/api/tokens/{id}"),
        None,
        Body::empty(),
    )
    .await
    .expect(StatusCode::NOT_FOUND);
    // A malformed Authorization header is a 400, not a silent anonymity.
    let r = t
        .get(
            &As::Authorization("Basic b2xnYTpwdw==".into()),
            "/api/estates",
        )
        .await
        .expect(StatusCode::BAD_REQUEST);
    assert!(r.text().contains("Bearer"), "{}", r.text());
}

both!(bad_input_is_a_clear_4xx_and_writes_nothing);
async fn bad_input_is_a_clear_4xx_and_writes_nothing(b: Backend) {
    let t = TestApp::new(b).await;
    let admin = TestApp::admin();
    let before = t.meta("sample").await;
    let facts = "/api/estates/sample/facts";
    // Malformed JSON: line and column.
    let r = t
        .call(
            &admin,
            Method::POST,
            facts,
            Some("application/json"),
            "{\"updates\": [",
        )
        .await
        .expect(StatusCode::BAD_REQUEST);
    let v = r.json();
    assert_eq!(v["error"], "bad_request");
    assert!(v["details"]["line"].is_number(), "{v}");
    // Wrong types.
    let r = t.send(&admin, Method::POST, facts, &json!({"updates": [{"fact": "cpu_free", "cluster": 7, "value": "x", "class": "measured"}]})).await.expect(StatusCode::BAD_REQUEST);
    assert!(r.text().contains("invalid type"), "{}", r.text());
    // Unknown fields.
    t.send(
        &admin,
        Method::POST,
        facts,
        &json!({"updates": [], "extra": 1}),
    )
    .await
    .expect(StatusCode::BAD_REQUEST);
    // 10 MB of garbage into an import: refused as text that is no estate.
    let garbage: Vec<u8> = (0..10 * 1024 * 1024u32)
        .map(|i| (i.wrapping_mul(2654435761) >> 24) as u8)
        .collect();
    let r = t
        .call(
            &admin,
            Method::PUT,
            "/api/estates/sample/file",
            Some("application/json"),
            garbage,
        )
        .await;
    assert!(
        r.status == StatusCode::BAD_REQUEST || r.status == StatusCode::UNPROCESSABLE_ENTITY,
        "{} {}",
        r.status,
        r.text()
    );
    assert!(r.json()["message"].is_string());
    // 10 MB of printable garbage too.
    let printable: String = (0..10 * 1024 * 1024u32)
        .map(|i| (b'a' + (i % 26) as u8) as char)
        .collect();
    t.call(
        &admin,
        Method::PUT,
        "/api/estates/sample/file",
        Some("application/json"),
        printable,
    )
    .await
    .expect(StatusCode::UNPROCESSABLE_ENTITY);
    // Over the body limit: 413 naming the limit.
    let huge = vec![b' '; berth::http::SMALL_BODY_LIMIT + 1];
    let r = t
        .call(
            &admin,
            Method::PUT,
            "/api/estates/sample/policy",
            Some("application/json"),
            huge,
        )
        .await
        .expect(StatusCode::PAYLOAD_TOO_LARGE);
    assert!(r
        .text()
        .contains(&berth::http::SMALL_BODY_LIMIT.to_string()));
    // Deeply nested arrays, everywhere a body is parsed.
    let deep = format!("{}{}", "[".repeat(100_000), "]".repeat(100_000));
    for (method, path) in [
        (Method::PUT, "/api/estates/sample/file"),
        (Method::POST, facts),
        (Method::PUT, "/api/estates/sample/policy"),
        (Method::POST, "/api/estates/sample/whatif"),
        (Method::POST, "/api/estates/sample/compare"),
    ] {
        let r = t
            .call(
                &admin,
                method.clone(),
                path,
                Some("application/json"),
                deep.clone(),
            )
            .await;
        assert!(
            r.status.is_client_error(),
            "{method} {path}: {} {}",
            r.status,
            r.text()
        );
        assert!(r.json()["message"].is_string());
    }
    // An array never passes for an object: serde alone would fill the
    // fields by position, past every name check.
    for (method, path, body) in [
        (Method::PUT, "/api/estates/sample/policy", "[0.5, 77]"),
        (Method::POST, "/api/tokens", r#"["x", "admin"]"#),
        (Method::POST, facts, r#"[[]]"#),
        (
            Method::POST,
            facts,
            r#"{"updates": [["cpu_free", "c-fra-1", 3, "measured"]]}"#,
        ),
    ] {
        let r = t
            .call(&admin, method.clone(), path, Some("application/json"), body)
            .await;
        assert!(
            r.status.is_client_error() && r.text().contains("invalid type: sequence"),
            "{method} {path} {body}: {} {}",
            r.status,
            r.text()
        );
    }
    // Names that would read as something else.
    let r = t
        .send(
            &admin,
            Method::POST,
            "/api/tokens",
            &json!({"name": "ci\u{202E}gnp", "role": "viewer"}),
        )
        .await
        .expect(StatusCode::BAD_REQUEST);
    assert!(r.text().contains("character 3 is U+202E"), "{}", r.text());
    for name in [".", ".."] {
        let r = t
            .send(
                &admin,
                Method::POST,
                "/api/deciders",
                &json!({"name": name, "url": "http://127.0.0.1:9/decide", "timeout_ms": 3000}),
            )
            .await;
        assert!(
            r.status.is_client_error() && r.text().contains("must start with"),
            "{name}: {} {}",
            r.status,
            r.text()
        );
    }
    // Unknown ids.
    t.get(&admin, "/api/estates/ghost/advice")
        .await
        .expect(StatusCode::NOT_FOUND);
    t.call(
        &admin,
        Method::POST,
        "/api/estates?id=Bad%20Id",
        Some("application/json"),
        berth::serve::SAMPLE_ESTATE,
    )
    .await
    .expect(StatusCode::BAD_REQUEST);
    // Nothing was written by any of it.
    let after = t.meta("sample").await;
    assert_eq!(after["version"], before["version"]);
    assert_eq!(after["content_digest"], before["content_digest"]);
    assert_eq!(after["policy_digest"], before["policy_digest"]);
    // Unknown routes answer JSON too.
    let r = t
        .get(&admin, "/api/nowhere")
        .await
        .expect(StatusCode::NOT_FOUND);
    assert_eq!(r.json()["error"], "not_found");
}

both!(operations_endpoints);
async fn operations_endpoints(b: Backend) {
    let t = TestApp::new(b).await;
    let h = t
        .get(&As::Nobody, "/healthz")
        .await
        .expect(StatusCode::OK)
        .json();
    assert_eq!(h["status"], "ok");
    let r = t
        .get(&As::Nobody, "/readyz")
        .await
        .expect(StatusCode::OK)
        .json();
    assert_eq!(r["status"], "ready");
    t.get(
        &TestApp::admin(),
        &format!("/api/estates/sample/advice?now={NOW}"),
    )
    .await
    .expect(StatusCode::OK);
    let m = t.get(&As::Nobody, "/metrics").await.expect(StatusCode::OK);
    assert!(m.headers[header::CONTENT_TYPE]
        .to_str()
        .unwrap()
        .starts_with("text/plain; version=0.0.4"));
    let text = m.text();
    assert!(text.contains("berth_http_requests_total{route=\"/api/estates/{id}/advice\",method=\"GET\",status=\"200\"} 1"), "{text}");
    assert!(
        text.contains("berth_engine_run_seconds_count{op=\"advice\"} 1"),
        "{text}"
    );
    assert!(text.contains("berth_db_pool_max_connections 4"), "{text}");
    // Readiness fails, in words, when the database is gone.
    t.state.db.pool.close().await;
    let r = t
        .get(&As::Nobody, "/readyz")
        .await
        .expect(StatusCode::SERVICE_UNAVAILABLE);
    assert_eq!(r.json()["error"], "unavailable");
}

both!(loose_ends_are_tied);
/// Review findings, each pinned: a session opened with a token dies with
/// the token; agent tokens are scoped and bearer-only; every refusal is the
/// JSON envelope; a fact batch must say what it sets.
async fn loose_ends_are_tied(b: Backend) {
    let t = TestApp::new(b).await;
    let admin = TestApp::admin();
    // A session opened with a token ends when the token is revoked.
    let r = t
        .send(
            &admin,
            Method::POST,
            "/api/tokens",
            &json!({"name": "s", "role": "viewer"}),
        )
        .await
        .expect(StatusCode::CREATED)
        .json();
    let (token, id) = (
        r["token"].as_str().unwrap().to_string(),
        r["id"].as_str().unwrap().to_string(),
    );
    let r = t
        .send(
            &As::Nobody,
            Method::POST,
            "/api/session",
            &json!({"token": token}),
        )
        .await
        .expect(StatusCode::OK);
    let cookie = cookie_of(&r);
    t.get(&As::Cookie(cookie.clone(), None), "/api/estates")
        .await
        .expect(StatusCode::OK);
    t.call(
        &admin,
        Method::DELETE,
        &format!("/api/tokens/{id}"),
        None,
        Body::empty(),
    )
    .await
    .expect(StatusCode::NO_CONTENT);
    t.get(&As::Cookie(cookie, None), "/api/estates")
        .await
        .expect(StatusCode::UNAUTHORIZED);
    // Agent tokens: scoped, bearer only, no accounts.
    let r = t
        .send(
            &admin,
            Method::POST,
            "/api/tokens",
            &json!({"name": "a", "role": "agent"}),
        )
        .await
        .expect(StatusCode::BAD_REQUEST);
    assert!(r.text().contains("scoped"), "{}", r.text());
    let agent = t.token("agent", Some("sample")).await;
    let r = t
        .send(
            &As::Nobody,
            Method::POST,
            "/api/session",
            &json!({"token": agent}),
        )
        .await
        .expect(StatusCode::FORBIDDEN);
    assert!(r.text().contains("bearer"), "{}", r.text());
    t.get(&As::Bearer(agent.clone()), "/api/estates/sample")
        .await
        .expect(StatusCode::FORBIDDEN);
    t.send(
        &admin,
        Method::POST,
        "/api/users",
        &json!({"name": "bot", "role": "agent", "password": "a long enough password"}),
    )
    .await
    .expect(StatusCode::BAD_REQUEST);
    // A wrong token says so.
    let r = t
        .get(&As::Bearer("berth_nope".into()), "/api/estates")
        .await
        .expect(StatusCode::UNAUTHORIZED);
    assert!(r.text().contains("unknown or revoked"), "{}", r.text());
    // Query and method errors are JSON.
    let r = t
        .get(&admin, "/api/estates/sample/preview?why=true")
        .await
        .expect(StatusCode::BAD_REQUEST);
    assert_eq!(r.json()["error"], "bad_request");
    let r = t
        .call(
            &admin,
            Method::PATCH,
            "/api/estates/sample",
            None,
            Body::empty(),
        )
        .await
        .expect(StatusCode::METHOD_NOT_ALLOWED);
    assert!(r.json()["message"].as_str().unwrap().contains("PATCH"));
    // A fact batch must be non-empty and give every value, even if null.
    let r = t
        .send(
            &admin,
            Method::POST,
            "/api/estates/sample/facts",
            &json!({"updates": []}),
        )
        .await
        .expect(StatusCode::UNPROCESSABLE_ENTITY);
    assert_eq!(r.json()["details"]["errors"][0]["path"], "/updates");
    let r = t
        .send(
            &admin,
            Method::POST,
            "/api/estates/sample/facts",
            &json!({"updates": [{"fact": "cpu_free", "cluster": "c-fra-1", "class": "measured"}]}),
        )
        .await
        .expect(StatusCode::UNPROCESSABLE_ENTITY);
    assert_eq!(r.json()["details"]["errors"][0]["path"], "/updates/0/value");
    assert_eq!(t.meta("sample").await["version"], 1, "nothing applied");
    // Policy errors have the one item shape.
    let r = t
        .send(
            &admin,
            Method::PUT,
            "/api/estates/sample/policy",
            &json!({"placement": {"target_utilisation": 7}}),
        )
        .await
        .expect(StatusCode::UNPROCESSABLE_ENTITY);
    let item = &r.json()["details"]["errors"][0];
    assert_eq!(item["path"], "/placement/target_utilisation", "{item}");
    assert!(item["line"].is_null());
}

both!(observations_are_idempotent_atomic_scoped_and_rate_limited);
async fn observations_are_idempotent_atomic_scoped_and_rate_limited(b: Backend) {
    let t = TestApp::new(b).await;
    let agent = As::Bearer(t.token("agent", Some("sample")).await);
    let url = "/api/estates/sample/observations";
    let batch = json!({"batch_id": "c-fra-1/2026-11-30T04:06:00Z", "observations": [
        {"fact": "cpu_free", "cluster": "c-fra-1", "value": 7.5, "observed_at": "2026-11-30T04:06:00Z"},
        {"fact": "flow_weight", "from": "shop-gateway", "to": "shop-frontend", "value": 15.5, "observed_at": "2026-11-30T04:05:30Z"}
    ]});
    let r = t
        .send(&agent, Method::POST, url, &batch)
        .await
        .expect(StatusCode::OK)
        .json();
    assert_eq!(r["version"], 2);
    assert_eq!(r["applied"], 2);
    assert_eq!(r["duplicate"], false);
    // The facts keep their time, class and the agent as source.
    let file = t
        .get(&TestApp::admin(), "/api/estates/sample/file")
        .await
        .json();
    let c = file["clusters"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["id"] == "c-fra-1")
        .unwrap();
    let source = c["cpu_free"]["source"].as_str().unwrap();
    assert!(
        source.starts_with("token:") && source.ends_with(" (agent for tests)"),
        "{source}"
    );
    assert_eq!(
        c["cpu_free"],
        json!({"value": 7.5, "class": "measured", "source": source, "observed_at": "2026-11-30T04:06:00Z"})
    );
    // A retry is answered from the record and changes nothing.
    let r = t
        .send(&agent, Method::POST, url, &batch)
        .await
        .expect(StatusCode::OK)
        .json();
    assert_eq!(r["duplicate"], true);
    assert_eq!(r["version"], 2);
    assert_eq!(t.meta("sample").await["version"], 2);
    // The same id with another body is refused.
    let mut other = batch.clone();
    other["observations"][0]["value"] = json!(1);
    let r = t
        .send(&agent, Method::POST, url, &other)
        .await
        .expect(StatusCode::CONFLICT);
    assert!(r.text().contains("already used"));
    // Atomic: one bad observation, nothing applied; errors by index.
    let bad = json!({"batch_id": "b2", "observations": [
        {"fact": "cpu_free", "cluster": "c-fra-1", "value": 1, "observed_at": "2026-11-30T04:07:00Z"},
        {"fact": "flow_mb_s", "from": "shop-gateway", "to": "nowhere", "value": 1, "observed_at": "2026-11-30T04:07:00Z"},
        {"fact": "rtt_ms", "a": "c-fra-1", "b": "c-par-1", "value": 9}
    ]});
    let r = t
        .send(&agent, Method::POST, url, &bad)
        .await
        .expect(StatusCode::UNPROCESSABLE_ENTITY)
        .json();
    let paths: Vec<&str> = r["details"]["errors"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["path"].as_str().unwrap())
        .collect();
    assert_eq!(paths, ["/observations/1/to", "/observations/2/observed_at"]);
    assert_eq!(t.meta("sample").await["version"], 2, "nothing applied");
    // The batch id was not used up by the refused batch.
    let mut fixed = bad.clone();
    fixed["observations"] = json!([bad["observations"][0]]);
    t.send(&agent, Method::POST, url, &fixed)
        .await
        .expect(StatusCode::OK);
    // Scoped: another estate is out of reach; reading is not allowed.
    t.call(
        &TestApp::admin(),
        Method::POST,
        "/api/estates?id=other",
        Some("application/json"),
        berth::serve::SAMPLE_ESTATE,
    )
    .await
    .expect(StatusCode::CREATED);
    t.send(
        &agent,
        Method::POST,
        "/api/estates/other/observations",
        &batch,
    )
    .await
    .expect(StatusCode::FORBIDDEN);
    t.get(&agent, "/api/estates/sample/advice")
        .await
        .expect(StatusCode::FORBIDDEN);
    // A viewer may not post observations; an operator may.
    let viewer = As::Bearer(t.token("viewer", None).await);
    t.send(&viewer, Method::POST, url, &batch)
        .await
        .expect(StatusCode::FORBIDDEN);
    // Rate limit per token: the agent has spent 5 of its 30; another 26 fail.
    let mut limited = None;
    for i in 0..40 {
        let r = t.send(&agent, Method::POST, url, &json!({"batch_id": format!("burst-{i}"), "observations": [
            {"fact": "cpu_free", "cluster": "c-fra-1", "value": 2, "observed_at": "2026-11-30T04:08:00Z"}]})).await;
        if r.status == StatusCode::TOO_MANY_REQUESTS {
            limited = Some(i);
            assert!(r.headers.contains_key(header::RETRY_AFTER));
            break;
        }
        assert_eq!(r.status, StatusCode::OK, "{}", r.text());
    }
    let limited = limited.expect("the agent was rate-limited");
    assert!(
        (20..=30).contains(&limited),
        "limited after {limited} more batches"
    );
    // Another token has its own budget.
    let agent2 = As::Bearer(t.token("agent", Some("sample")).await);
    t.send(&agent2, Method::POST, url, &json!({"batch_id": "other-agent", "observations": [
        {"fact": "cpu_free", "cluster": "c-fra-1", "value": 2, "observed_at": "2026-11-30T04:08:00Z"}]})).await.expect(StatusCode::OK);
}

/// `../shared/fixtures/kubernetes/<name>` relative to the project root
/// (found by walking up: worktrees sit deeper than the main checkout).
fn k8s_fixture(name: &str) -> String {
    let start = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    for dir in start.ancestors() {
        let path = dir.join("shared/fixtures/kubernetes").join(name);
        if path.is_file() {
            return std::fs::read_to_string(path).unwrap();
        }
    }
    panic!(
        "shared/fixtures/kubernetes/{name} not found above {}",
        start.display()
    );
}

both!(kubernetes_manifests_import_through_the_api);
async fn kubernetes_manifests_import_through_the_api(b: Backend) {
    let t = TestApp::new(b).await;
    let admin = TestApp::admin();
    let url = "/api/estates/sample/import/kubernetes";
    let body = json!({"cluster": "c-fra-3", "files": [{"name": "online-boutique.yaml", "text": k8s_fixture("online-boutique.yaml")}]});
    // A dry run reports and writes nothing.
    let mut dry = body.clone();
    dry["dry_run"] = json!(true);
    let r = t
        .send(&admin, Method::POST, url, &dry)
        .await
        .expect(StatusCode::OK)
        .json();
    assert_eq!(r["written"], false);
    assert_eq!(r["report"]["added"].as_array().unwrap().len(), 12);
    assert_eq!(t.meta("sample").await["version"], 1);
    // The import: 12 services and 16 edges, one new version.
    let r = t
        .send(&admin, Method::POST, url, &body)
        .await
        .expect(StatusCode::OK)
        .json();
    assert_eq!(r["written"], true);
    assert_eq!(r["version"], 2);
    assert_eq!(r["report"]["flows_added"].as_array().unwrap().len(), 16);
    let file = t.get(&admin, "/api/estates/sample/file").await.json();
    let frontend = file["services"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["id"] == "frontend")
        .expect("frontend imported");
    assert_eq!(frontend["cluster"], "c-fra-3");
    assert_eq!(frontend["cpu"], 0.1);
    // The imported estate gives advice.
    t.get(&admin, &format!("/api/estates/sample/advice?now={NOW}"))
        .await
        .expect(StatusCode::OK);
    // Re-importing the same manifests changes nothing, not even the version.
    let r = t
        .send(&admin, Method::POST, url, &body)
        .await
        .expect(StatusCode::OK)
        .json();
    assert_eq!(r["written"], false);
    assert_eq!(t.meta("sample").await["version"], 2);
    // Bad input names the file, document and object; nothing written.
    let broken = k8s_fixture("online-boutique.yaml").replacen("cpu: 100m", "cpu: lots", 1);
    let r = t
        .send(
            &admin,
            Method::POST,
            url,
            &json!({"cluster": "c-fra-3", "files": [{"name": "ob.yaml", "text": broken}]}),
        )
        .await
        .expect(StatusCode::UNPROCESSABLE_ENTITY)
        .json();
    let e = &r["details"]["errors"][0];
    assert_eq!(e["file"], "ob.yaml");
    assert!(
        e["document"].as_u64().is_some() && e["object"].as_str().unwrap().starts_with("Deployment"),
        "{e}"
    );
    assert!(
        e["path"]
            .as_str()
            .unwrap()
            .ends_with("/resources/requests/cpu"),
        "{e}"
    );
    // An unknown cluster is refused with the clusters there are.
    let r = t
        .send(&admin, Method::POST, url, &json!({"cluster": "c-mars", "files": [{"name": "x.yaml", "text": k8s_fixture("sock-shop.yaml")}]}))
        .await
        .expect(StatusCode::UNPROCESSABLE_ENTITY);
    assert!(r.text().contains("c-fra-1"), "{}", r.text());
    assert_eq!(t.meta("sample").await["version"], 2);
    // Viewers may not import.
    let viewer = As::Bearer(t.token("viewer", None).await);
    t.send(&viewer, Method::POST, url, &body)
        .await
        .expect(StatusCode::FORBIDDEN);
}

/// A time the message names that is within a few seconds of `now`: the
/// server's clock, as a 422 about a future observation states it.
fn names_a_time_near(message: &str, now: i64) -> bool {
    message
        .split(|c: char| c.is_whitespace() || "()\"',;".contains(c))
        .filter_map(berth_engine::estate::parse_time)
        .any(|t| (t - now).abs() <= 5)
}

both!(observations_from_the_future_are_refused_and_the_source_is_the_token);
/// Issue 15, item 4: an observation dated beyond the allowed clock skew
/// ahead of the server is refused at its path, naming the server's time
/// (a fact from the future would count as fresh for as long as it stays
/// in the future); and the source recorded for an agent's facts is its
/// token, whatever the batch claims.
async fn observations_from_the_future_are_refused_and_the_source_is_the_token(b: Backend) {
    let t = TestApp::new(b).await;
    let created = t
        .send(
            &TestApp::admin(),
            Method::POST,
            "/api/tokens",
            &json!({"name": "c-fra-1 agent", "role": "agent", "estate": "sample", "clusters": ["c-fra-1"]}),
        )
        .await
        .expect(StatusCode::CREATED)
        .json();
    let agent = As::Bearer(created["token"].as_str().unwrap().into());
    let token_id = created["id"].as_str().unwrap();
    let url = "/api/estates/sample/observations";
    let at = berth_engine::estate::format_time;
    let now = berth::clock::now_s();
    for (i, future) in [
        "9999-12-31T23:59:59Z".to_string(),
        // Ten minutes ahead: beyond any clock skew worth tolerating.
        at(now + 600),
    ]
    .iter()
    .enumerate()
    {
        let r = t
            .send(
                &agent,
                Method::POST,
                url,
                &json!({"batch_id": format!("future-{i}"), "observations": [
                    {"fact": "cpu_free", "cluster": "c-fra-1", "value": 7.5, "observed_at": at(now - 60)},
                    {"fact": "memory_free_gib", "cluster": "c-fra-1", "value": 20, "observed_at": future}
                ]}),
            )
            .await
            .expect(StatusCode::UNPROCESSABLE_ENTITY)
            .json();
        let errors = r["details"]["errors"].as_array().unwrap();
        assert_eq!(errors.len(), 1, "{r}");
        assert_eq!(errors[0]["path"], "/observations/1/observed_at", "{r}");
        let m = errors[0]["message"].as_str().unwrap();
        assert!(m.contains(future.as_str()), "{m}");
        assert!(m.contains("ahead of the server's clock"), "{m}");
        assert!(names_a_time_near(m, berth::clock::now_s()), "{m}");
    }
    assert_eq!(t.meta("sample").await["version"], 1, "nothing applied");
    // An operator's fact update from the future is refused the same way.
    let r = t
        .send(
            &TestApp::admin(),
            Method::POST,
            "/api/estates/sample/facts",
            &json!({"updates": [{"fact": "cpu_free", "cluster": "c-fra-1", "value": 7,
                "class": "measured", "observed_at": "2062-11-30T04:05:00Z"}]}),
        )
        .await
        .expect(StatusCode::UNPROCESSABLE_ENTITY)
        .json();
    assert_eq!(
        r["details"]["errors"][0]["path"], "/updates/0/observed_at",
        "{r}"
    );
    // A clock a minute fast is within the skew: accepted as sent. And the
    // source claimed in the batch is not what is recorded: the token is.
    let ahead = at(now + 60);
    let r = t
        .send(
            &agent,
            Method::POST,
            url,
            &json!({"batch_id": "skewed", "observations": [
                {"fact": "cpu_free", "cluster": "c-fra-1", "value": 7.5, "observed_at": ahead, "source": "user:admin"},
                {"fact": "memory_free_gib", "cluster": "c-fra-1", "value": 20, "observed_at": ahead}
            ]}),
        )
        .await
        .expect(StatusCode::OK)
        .json();
    assert_eq!(r["applied"], 2, "{r}");
    let file = t
        .get(&TestApp::admin(), "/api/estates/sample/file")
        .await
        .json();
    let c = file["clusters"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["id"] == "c-fra-1")
        .unwrap();
    let source = format!("token:{token_id} (c-fra-1 agent)");
    assert_eq!(
        c["cpu_free"],
        json!({"value": 7.5, "class": "measured", "source": source, "observed_at": ahead})
    );
    assert_eq!(c["memory_free_gib"]["source"], source);
}

both!(batch_ids_are_scoped_to_the_token_that_sent_them);
/// Issue 15, item 9: a batch id is one submitter's idempotency key. Another
/// token reusing it (an id is often predictable) has its batch applied,
/// not refused; each token's retries are still answered once; a token
/// reusing its own id with another body is still told so.
async fn batch_ids_are_scoped_to_the_token_that_sent_them(b: Backend) {
    let t = TestApp::new(b).await;
    let one = As::Bearer(t.token("agent", Some("sample")).await);
    let two = As::Bearer(t.token("agent", Some("sample")).await);
    let operator = As::Bearer(t.token("operator", None).await);
    let url = "/api/estates/sample/observations";
    let batch = |cluster: &str, value: f64| {
        json!({"batch_id": "tick-1", "observations": [
            {"fact": "cpu_free", "cluster": cluster, "value": value, "observed_at": "2026-11-30T04:06:00Z"}]})
    };
    let app = &t;
    let post = |who: &As, body: Value| {
        let who = who.clone();
        async move { app.send(&who, Method::POST, url, &body).await }
    };
    let r = post(&one, batch("c-fra-1", 5.0))
        .await
        .expect(StatusCode::OK)
        .json();
    assert_eq!(
        (r["version"].as_i64(), r["duplicate"].as_bool()),
        (Some(2), Some(false))
    );
    // Same id, another body, another token: its own batch, applied.
    let r = post(&two, batch("c-fra-2", 6.0))
        .await
        .expect(StatusCode::OK)
        .json();
    assert_eq!(
        (r["version"].as_i64(), r["duplicate"].as_bool()),
        (Some(3), Some(false)),
        "{r}"
    );
    let r = post(&operator, batch("c-par-1", 4.0))
        .await
        .expect(StatusCode::OK)
        .json();
    assert_eq!(
        (r["version"].as_i64(), r["duplicate"].as_bool()),
        (Some(4), Some(false)),
        "{r}"
    );
    // Each one's retry is answered from its own record.
    for (who, body, version) in [
        (&one, batch("c-fra-1", 5.0), 2),
        (&two, batch("c-fra-2", 6.0), 3),
        (&operator, batch("c-par-1", 4.0), 4),
    ] {
        let r = post(who, body).await.expect(StatusCode::OK).json();
        assert_eq!(
            (r["version"].as_i64(), r["duplicate"].as_bool()),
            (Some(version), Some(true)),
            "{r}"
        );
    }
    assert_eq!(t.meta("sample").await["version"], 4);
    // Its own id with another body is still the agent's bug, told as 409.
    let r = post(&two, batch("c-fra-1", 6.0))
        .await
        .expect(StatusCode::CONFLICT);
    assert!(r.text().contains("already used"), "{}", r.text());

    // A batch recorded before ids were per token (migration 6 keeps such
    // rows with an empty submitter) still answers its retry, from any
    // token: the retry of a batch sent just before an upgrade is not
    // applied twice.
    let legacy = json!({"batch_id": "before-the-upgrade", "observations": [
        {"fact": "cpu_free", "cluster": "c-fra-1", "value": 1, "observed_at": "2026-11-30T04:06:00Z"}]});
    sqlx::query(
        "INSERT INTO observation_batches (estate_id, submitter, batch_id, body_digest, version, applied, received_at) \
         VALUES ('sample', '', 'before-the-upgrade', $1, 1, 1, 0)",
    )
    .bind(berth::digest::sha256_hex_bytes(legacy.to_string().as_bytes()))
    .execute(&t.state.db.pool)
    .await
    .unwrap();
    let r = post(&one, legacy).await.expect(StatusCode::OK).json();
    assert_eq!(
        (r["version"].as_i64(), r["duplicate"].as_bool()),
        (Some(1), Some(true)),
        "{r}"
    );
    assert_eq!(t.meta("sample").await["version"], 4);
}

both!(batch_records_survive_the_upgrade_to_per_token_ids);
/// Migration 6 on a database made by the migrations before it: the batch
/// records are kept (with no submitter: who sent them was never stored),
/// and from then on the key is (estate, submitter, batch id).
async fn batch_records_survive_the_upgrade_to_per_token_ids(b: Backend) {
    let db = TestDb::new(b).await;
    sqlx::any::install_default_drivers();
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../migrations")
        .join(match b {
            Backend::Sqlite => "sqlite",
            Backend::Postgres => "postgres",
        });
    let mut before = sqlx::migrate::Migrator::new(dir.as_path()).await.unwrap();
    assert!(
        before.migrations.iter().any(|m| m.version == 6),
        "migration 6 is there"
    );
    before.migrations = before
        .migrations
        .iter()
        .filter(|m| m.version < 6)
        .cloned()
        .collect::<Vec<_>>()
        .into();
    {
        let pool = sqlx::AnyPool::connect(&db.url).await.unwrap();
        before.run(&pool).await.unwrap();
        sqlx::query(
            "INSERT INTO estates (id, name, version, document, content_digest, policy, policy_digest, created_at, updated_at) \
             VALUES ('old', 'old', 3, '{}', 'c', '{}', 'p', 0, 0)",
        )
        .execute(&pool)
        .await
        .unwrap();
        for (id, digest, version) in [("tick-1", "d1", 2), ("tick-2", "d2", 3)] {
            sqlx::query(
                "INSERT INTO observation_batches (estate_id, batch_id, body_digest, version, applied, received_at) \
                 VALUES ('old', $1, $2, $3, 1, 100)",
            )
            .bind(id)
            .bind(digest)
            .bind(version)
            .execute(&pool)
            .await
            .unwrap();
        }
        pool.close().await;
    }
    // The server's own start: every migration this binary has.
    let upgraded = berth::db::Db::connect(&db.url, 2).await.unwrap();
    upgraded.ready().await.unwrap();
    let rows: Vec<(String, String, String, i64)> = sqlx::query_as(
        "SELECT submitter, batch_id, body_digest, version FROM observation_batches \
         WHERE estate_id = 'old' ORDER BY batch_id",
    )
    .fetch_all(&upgraded.pool)
    .await
    .unwrap();
    assert_eq!(
        rows,
        [
            ("".to_string(), "tick-1".to_string(), "d1".to_string(), 2),
            ("".to_string(), "tick-2".to_string(), "d2".to_string(), 3)
        ]
    );
    // The key now includes the submitter: the same id for two submitters
    // is two rows, twice for one submitter is refused.
    let insert = |submitter: &'static str| {
        sqlx::query(
            "INSERT INTO observation_batches (estate_id, submitter, batch_id, body_digest, version, applied, received_at) \
             VALUES ('old', $1, 'tick-1', 'd9', 4, 1, 200)",
        )
        .bind(submitter)
        .execute(&upgraded.pool)
    };
    insert("token:aaaaaaaaaaaa").await.unwrap();
    insert("token:bbbbbbbbbbbb").await.unwrap();
    assert!(insert("token:aaaaaaaaaaaa").await.is_err());
}

/// Change plans (docs/plans.md): the JSON plan in the envelope, Markdown
/// and manifests as attachments, the selections (services, a saved
/// scenario), and the errors that name what is missing.
async fn plans(backend: Backend) {
    let t = TestApp::new(backend).await;
    let admin = TestApp::admin();
    let viewer = As::Bearer(t.token("viewer", None).await);
    let base = "/api/estates/sample";
    let q = "now=2026-11-30T04:05:00Z";
    let advice = t
        .get(&viewer, &format!("{base}/advice?{q}"))
        .await
        .expect(StatusCode::OK)
        .json();
    let moves = advice["result"]["moves"].as_array().unwrap().clone();
    assert!(!moves.is_empty());
    // The plan holds the recommended moves only: the sample's one move
    // resting on guesses (`evidence` set) is not in it.
    let recommended: Vec<Value> = moves
        .iter()
        .filter(|m| m.get("evidence").is_none())
        .cloned()
        .collect();
    assert_eq!(recommended.len() + 1, moves.len());
    let moves = recommended;
    let plan = t
        .get(&viewer, &format!("{base}/plan?{q}"))
        .await
        .expect(StatusCode::OK)
        .json();
    assert_eq!(plan["result"]["selection"]["kind"], "advice");
    assert_eq!(
        plan["result"]["moves"].as_array().unwrap().len(),
        moves.len()
    );
    assert_eq!(
        plan["result"]["estate_version"],
        advice["result"]["estate_version"]
    );

    let md = t
        .get(&viewer, &format!("{base}/plan?{q}&format=markdown"))
        .await
        .expect(StatusCode::OK);
    assert_eq!(
        md.headers[header::CONTENT_TYPE].to_str().unwrap(),
        "text/markdown; charset=utf-8"
    );
    assert_eq!(
        md.headers[header::CONTENT_DISPOSITION].to_str().unwrap(),
        "attachment; filename=\"sample-plan.md\""
    );
    assert!(md
        .text()
        .starts_with("# Change plan: Acme Retail (sample estate)\n"));

    // The sample names no workloads: each moved service is named.
    let k = t
        .get(&viewer, &format!("{base}/plan?{q}&format=karmada"))
        .await
        .expect(StatusCode::UNPROCESSABLE_ENTITY)
        .json();
    let errors = k["details"]["errors"].as_array().unwrap();
    assert_eq!(errors.len(), moves.len(), "{k}");
    for e in errors {
        let m = e["message"].as_str().unwrap();
        assert!(m.starts_with("estate: service \""), "{m}");
        assert!(m.contains("set `workload`"), "{m}");
    }

    // Some services' moves; an unknown one and one without a move named.
    let first = moves[0]["service"].as_str().unwrap();
    let one = t
        .get(&viewer, &format!("{base}/plan?{q}&services={first}"))
        .await
        .expect(StatusCode::OK)
        .json();
    assert_eq!(one["result"]["moves"].as_array().unwrap().len(), 1);
    assert_eq!(one["result"]["selection"]["services"][0], first);
    let bad = t
        .get(
            &viewer,
            &format!("{base}/plan?{q}&services=nope,support-db"),
        )
        .await
        .expect(StatusCode::UNPROCESSABLE_ENTITY)
        .json();
    let messages: Vec<&str> = bad["details"]["errors"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["message"].as_str().unwrap())
        .collect();
    assert!(
        messages[0].starts_with("services: no service \"nope\""),
        "{messages:?}"
    );
    assert!(
        messages[1].contains("\"support-db\" has no recommended move"),
        "{messages:?}"
    );
    t.get(&viewer, &format!("{base}/plan?{q}&format=yaml"))
        .await
        .expect(StatusCode::BAD_REQUEST);
    t.get(
        &viewer,
        &format!("{base}/plan?{q}&services=cart&scenario=x"),
    )
    .await
    .expect(StatusCode::BAD_REQUEST);
    t.get(
        &viewer,
        &format!("{base}/plan?{q}&scenario=nobody-by-this-name"),
    )
    .await
    .expect(StatusCode::NOT_FOUND);

    // A saved scenario's moves, with its warnings.
    t.call(
        &admin,
        Method::PUT,
        &format!("{base}/scenarios/retire"),
        Some("application/json"),
        SAMPLE_SCENARIO,
    )
    .await
    .expect(StatusCode::NO_CONTENT);
    let sc = t
        .get(&viewer, &format!("{base}/plan?{q}&scenario=retire"))
        .await
        .expect(StatusCode::OK)
        .json();
    assert_eq!(sc["result"]["selection"]["kind"], "scenario");
    assert!(!sc["result"]["warnings"].as_array().unwrap().is_empty());

    // Workloads and a controller name in the estate: manifests.
    let mut file = t
        .get(&admin, &format!("{base}/file"))
        .await
        .expect(StatusCode::OK)
        .json();
    for s in file["services"].as_array_mut().unwrap() {
        let name = s["id"].as_str().unwrap().to_string();
        s["workload"] = json!({"kind": "Deployment", "namespace": "shop", "name": name});
    }
    for c in file["clusters"].as_array_mut().unwrap() {
        if c["id"] == "c-fra-2" {
            c["karmada_cluster"] = json!("member-fra-2");
        }
    }
    t.send(&admin, Method::PUT, &format!("{base}/file"), &file)
        .await
        .expect(StatusCode::OK);
    let k = t
        .get(&viewer, &format!("{base}/plan?{q}&format=karmada"))
        .await
        .expect(StatusCode::OK);
    assert_eq!(
        k.headers[header::CONTENT_TYPE].to_str().unwrap(),
        "application/yaml"
    );
    assert_eq!(
        k.headers[header::CONTENT_DISPOSITION].to_str().unwrap(),
        "attachment; filename=\"sample-karmada.yaml\""
    );
    let text = k.text();
    assert!(text.contains("kind: \"PropagationPolicy\""));
    assert!(text.contains("- \"member-fra-2\""), "{text}");
    let o = t
        .get(&viewer, &format!("{base}/plan?{q}&format=ocm"))
        .await
        .expect(StatusCode::OK)
        .text();
    assert!(o.contains("kind: \"Placement\""));

    // One Deployment running in two clusters (`cart` on c-par-1, `search`
    // on c-fra-2, both `shop/twin`): a scenario moving both copies gets one
    // policy placing the workload on both destinations, never two objects
    // of one name.
    for s in file["services"].as_array_mut().unwrap() {
        if s["id"] == "cart" || s["id"] == "search" {
            s["workload"] = json!({"kind": "Deployment", "namespace": "shop", "name": "twin"});
        }
    }
    t.send(&admin, Method::PUT, &format!("{base}/file"), &file)
        .await
        .expect(StatusCode::OK);
    let twins = json!({"schema": 1, "name": "twins", "steps": [
        {"move": {"service": "cart", "to": "c-lon-1"}},
        {"move": {"service": "search", "to": "c-dub-1"}},
    ]});
    t.call(
        &admin,
        Method::PUT,
        &format!("{base}/scenarios/twins"),
        Some("application/json"),
        twins.to_string(),
    )
    .await
    .expect(StatusCode::NO_CONTENT);
    let k = t
        .get(
            &viewer,
            &format!("{base}/plan?{q}&scenario=twins&format=karmada"),
        )
        .await
        .expect(StatusCode::OK)
        .text();
    assert_eq!(k.matches("kind: \"PropagationPolicy\"").count(), 1, "{k}");
    assert_eq!(k.matches("kind: \"OverridePolicy\"").count(), 1, "{k}");
    assert_eq!(
        k.matches("name: \"berth-deployment-twin\"").count(),
        2,
        "{k}"
    );
    assert!(
        k.contains("      clusterNames:\n      - \"c-dub-1\"\n      - \"c-lon-1\"\n"),
        "{k}"
    );
    let o = t
        .get(
            &viewer,
            &format!("{base}/plan?{q}&scenario=twins&format=ocm"),
        )
        .await
        .expect(StatusCode::OK)
        .text();
    assert_eq!(o.matches("kind: \"Placement\"").count(), 1, "{o}");
    assert!(o.contains("numberOfClusters: 2"), "{o}");
    let j = t
        .get(&viewer, &format!("{base}/plan?{q}&scenario=twins"))
        .await
        .expect(StatusCode::OK)
        .json();
    assert_eq!(
        j["result"]["workloads"],
        json!([{
            "workload": {"kind": "Deployment", "namespace": "shop", "name": "twin"},
            "clusters": ["c-dub-1", "c-lon-1"],
            "copies": [
                {"service": "cart", "from": "c-par-1", "to": "c-lon-1"},
                {"service": "search", "from": "c-fra-2", "to": "c-dub-1"},
            ],
        }])
    );
}
both!(plans);

/// The observation that sets the fact behind a basis key (`flow a→b
/// weight`, `rtt c1↔c2`) to `value`, measured at `at`.
fn observation_for(key: &str, value: f64, at: &str) -> Value {
    if let Some(rest) = key.strip_prefix("flow ") {
        let (pair, what) = rest.rsplit_once(' ').expect("flow key");
        let (from, to) = pair.split_once('→').expect("flow pair");
        let fact = if what == "weight" {
            "flow_weight"
        } else {
            "flow_mb_s"
        };
        json!({"fact": fact, "from": from, "to": to, "value": value, "observed_at": at})
    } else if let Some(pair) = key.strip_prefix("rtt ") {
        let (a, b) = pair.split_once('↔').expect("rtt pair");
        json!({"fact": "rtt_ms", "a": a, "b": b, "value": value, "observed_at": at})
    } else {
        panic!("no observation sets {key}")
    }
}

/// A value of the basis fact `f` that stays strictly inside its recorded
/// flip thresholds: a twentieth of the way to the nearer one.
fn inside(f: &Value) -> f64 {
    let v = f["value"].as_f64().expect("a known value");
    match (f["below"].as_f64(), f["above"].as_f64()) {
        (_, Some(a)) => v + (a - v) / 20.0,
        (Some(b), None) => v - (v - b) / 20.0,
        (None, None) => v * 1.05,
    }
}

/// Review memory through the API (issue 17): a dismissal stays hidden
/// through observations that cross nothing, a snooze ends at its date
/// (the evaluation time is the injected clock) and when its condition is
/// crossed by an observation — and says why —, every decision and the
/// policy change are in the audit trail, and bad decisions are refused
/// field by field with nothing written.
async fn reviews(b: Backend) {
    let t = TestApp::new(b).await;
    let admin = TestApp::admin();
    let agent = As::Bearer(t.token("agent", Some("sample")).await);
    let viewer = As::Bearer(t.token("viewer", None).await);
    let at = |now: &str| format!("/api/estates/sample/reviews?now={now}");
    let standing = |list: &Value, identity: &str| -> Value {
        arr(&list["reviews"])
            .into_iter()
            .find(|r| r["identity"] == identity)
            .map(|r| r["standing"].clone())
            .unwrap_or(Value::Null)
    };

    // Bad decisions: every error at once, nothing written.
    let r = t
        .send(
            &admin,
            Method::POST,
            &at(NOW),
            &json!({"identity": "nope|a|b", "decision": "dismissed"}),
        )
        .await
        .expect(StatusCode::UNPROCESSABLE_ENTITY)
        .json();
    let paths: Vec<&str> = r["details"]["errors"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["path"].as_str().unwrap())
        .collect();
    assert_eq!(paths, ["/reason", "/identity"], "{r}");
    assert!(r["message"]
        .as_str()
        .unwrap()
        .contains("nothing was written"));
    let msg = r["details"]["errors"][1]["message"].as_str().unwrap();
    assert!(
        msg.contains("cart|c-par-1|c-fra-2"),
        "names the recommendations there are: {msg}"
    );
    let r = t
        .send(
            &admin,
            Method::POST,
            &at(NOW),
            &json!({"identity": "cart|c-par-1|c-fra-2", "decision": "snoozed",
            "condition": {"fact": "rtt x↔y", "side": "below"}}),
        )
        .await
        .expect(StatusCode::UNPROCESSABLE_ENTITY)
        .json();
    assert_eq!(r["details"]["errors"][0]["path"], "/condition/fact", "{r}");
    let r = t
        .send(
            &admin,
            Method::POST,
            &at(NOW),
            &json!({"identity": "cart|c-par-1|c-fra-2", "decision": "snoozed"}),
        )
        .await
        .expect(StatusCode::UNPROCESSABLE_ENTITY)
        .json();
    assert_eq!(r["details"]["errors"][0]["path"], "/until", "{r}");
    t.send(
        &viewer,
        Method::POST,
        &at(NOW),
        &json!({"identity": "cart|c-par-1|c-fra-2", "decision": "planned"}),
    )
    .await
    .expect(StatusCode::FORBIDDEN);
    let none = t.get(&viewer, &at(NOW)).await.expect(StatusCode::OK).json();
    assert_eq!(none["reviews"], json!([]), "nothing was written");

    // Snooze until a date: hidden before it, back after it, at the
    // evaluation time the caller gives.
    let ff = "feature-flags|c-lon-1|c-fra-2";
    let r = t
        .send(
            &admin,
            Method::POST,
            &at(NOW),
            &json!({"identity": ff, "decision": "snoozed",
            "reason": "after the freeze", "until": "2026-11-30T05:05:00Z"}),
        )
        .await
        .expect(StatusCode::CREATED)
        .json();
    assert_eq!(r["review"]["standing"]["state"], "hidden", "{r}");
    let list = t
        .get(&viewer, &at("2026-11-30T04:35:00Z"))
        .await
        .expect(StatusCode::OK)
        .json();
    assert_eq!(standing(&list, ff)["state"], "hidden", "{list}");
    let list = t
        .get(&viewer, &at("2026-11-30T05:35:00Z"))
        .await
        .expect(StatusCode::OK)
        .json();
    let s = standing(&list, ff);
    assert_eq!(s["state"], "back", "{list}");
    assert!(
        arr(&s["reasons"]).contains(&json!(
            "Snoozed until 2026-11-30T05:05:00Z, which has passed."
        )),
        "{s}"
    );

    // Dismiss a recommendation resting on measured facts; observations
    // that move one of them inside its flip thresholds keep it hidden.
    let notif = "notifications|c-par-2|c-fra-2";
    let r = t
        .send(
            &admin,
            Method::POST,
            &at(NOW),
            &json!({"identity": notif, "decision": "dismissed",
            "reason": "notifications must stay beside the mail relay in Paris"}),
        )
        .await
        .expect(StatusCode::CREATED)
        .json();
    assert_eq!(r["review"]["standing"]["state"], "hidden", "{r}");
    let basis = arr(&r["review"]["basis"]["facts"]);
    let weight = basis
        .iter()
        .find(|f| f["fact"].as_str().unwrap().ends_with(" weight") && f["class"] == "measured")
        .unwrap_or_else(|| panic!("a measured flow weight decides {notif}: {basis:?}"))
        .clone();
    let batch = json!({"batch_id": "reviews-1", "observations": [
        observation_for(weight["fact"].as_str().unwrap(), inside(&weight), "2026-11-30T04:06:00Z")
    ]});
    t.send(
        &agent,
        Method::POST,
        "/api/estates/sample/observations",
        &batch,
    )
    .await
    .expect(StatusCode::OK);
    let list = t
        .get(&viewer, &at("2026-11-30T04:07:00Z"))
        .await
        .expect(StatusCode::OK)
        .json();
    assert_eq!(
        standing(&list, notif)["state"],
        "hidden",
        "an observation inside the thresholds crosses nothing: {list}"
    );

    // Snooze with a condition on an estimated RTT, met only once measured;
    // a measurement across it brings the recommendation back, saying why.
    let cart = "cart|c-par-1|c-fra-2";
    let r = t
        .send(
            &admin,
            Method::POST,
            &at("2026-11-30T04:07:00Z"),
            &json!({"identity": cart, "decision": "planned",
            "link": "https://tickets.example.com/NET-42"}),
        )
        .await
        .expect(StatusCode::CREATED)
        .json();
    assert_eq!(r["review"]["standing"]["state"], "planned", "{r}");
    let basis = arr(&r["review"]["basis"]["facts"]);
    let rtt = basis
        .iter()
        .find(|f| {
            f["fact"].as_str().unwrap().starts_with("rtt ")
                && f["class"] != "measured"
                && f["value"].is_number()
        })
        .unwrap_or_else(|| panic!("an estimated RTT decides {cart}: {basis:?}"))
        .clone();
    let key = rtt["fact"].as_str().unwrap();
    let v = rtt["value"].as_f64().unwrap();
    let target = inside(&rtt);
    let side = if target >= v { "above" } else { "below" };
    let threshold = (v + target) / 2.0;
    let r = t
        .send(
            &admin,
            Method::POST,
            &at("2026-11-30T04:07:00Z"),
            &json!({"identity": cart, "decision": "snoozed",
            "reason": "ask again when the link is measured",
            "condition": {"fact": key, "side": side, "value": threshold, "measured": true}}),
        )
        .await
        .expect(StatusCode::CREATED)
        .json();
    assert_eq!(r["review"]["standing"]["state"], "hidden", "{r}");
    assert_eq!(r["review"]["condition"]["value"].as_f64(), Some(threshold));
    let batch = json!({"batch_id": "reviews-2", "observations": [observation_for(key, target, "2026-11-30T04:08:00Z")]});
    t.send(
        &agent,
        Method::POST,
        "/api/estates/sample/observations",
        &batch,
    )
    .await
    .expect(StatusCode::OK);
    let list = t
        .get(&viewer, &at("2026-11-30T04:09:00Z"))
        .await
        .expect(StatusCode::OK)
        .json();
    let s = standing(&list, cart);
    assert_eq!(s["state"], "back", "{list}");
    let reasons = arr(&s["reasons"])
        .iter()
        .map(|r| r.as_str().unwrap().to_string())
        .collect::<Vec<_>>()
        .join(" ");
    assert!(
        reasons.contains(&format!("Asked to be told when {key} is measured {side}")),
        "{reasons}"
    );
    assert!(
        reasons.contains("now measured"),
        "the class change is named too: {reasons}"
    );
    assert_eq!(
        standing(&list, notif)["state"],
        "hidden",
        "the other dismissal still holds: {list}"
    );

    // Forget a decision; forgetting it again is a 404.
    t.send(
        &admin,
        Method::POST,
        "/api/estates/sample/reviews/clear",
        &json!({"identity": ff, "reason": "freeze over"}),
    )
    .await
    .expect(StatusCode::NO_CONTENT);
    t.send(
        &admin,
        Method::POST,
        "/api/estates/sample/reviews/clear",
        &json!({"identity": ff}),
    )
    .await
    .expect(StatusCode::NOT_FOUND);

    // A policy change with its reason, field by field.
    t.send(
        &admin,
        Method::PUT,
        "/api/estates/sample/policy?reason=cross-site%20traffic%20is%20billed",
        &json!({"cross_site_weight": 6}),
    )
    .await
    .expect(StatusCode::OK);

    // The audit trail: every decision and the policy change, newest first.
    let audit = t
        .get(&viewer, "/api/estates/sample/audit")
        .await
        .expect(StatusCode::OK)
        .json();
    let entries = arr(&audit["entries"]);
    let actions: Vec<&str> = entries
        .iter()
        .map(|e| e["action"].as_str().unwrap())
        .collect();
    assert_eq!(
        actions,
        [
            "policy.changed",
            "review.cleared",
            "review.snoozed",
            "review.planned",
            "review.dismissed",
            "review.snoozed"
        ],
        "{audit}"
    );
    assert_eq!(entries[0]["reason"], "cross-site traffic is billed");
    let changed = &entries[0]["detail"]["changed"];
    assert!(
        arr(changed)
            .iter()
            .any(|c| c["field"] == "/cross_site_weight" && c["to"] == json!(6.0)),
        "{changed}"
    );
    assert_eq!(entries[1]["subject"], ff);
    assert_eq!(entries[1]["reason"], "freeze over");
    assert_eq!(
        entries[4]["reason"],
        "notifications must stay beside the mail relay in Paris"
    );
    assert!(entries
        .iter()
        .all(|e| !e["actor"].as_str().unwrap().is_empty()));
    t.get(&viewer, "/api/estates/sample/audit?limit=0")
        .await
        .expect(StatusCode::BAD_REQUEST);
}
both!(reviews);

fn arr(v: &Value) -> Vec<Value> {
    v.as_array().cloned().unwrap_or_default()
}
