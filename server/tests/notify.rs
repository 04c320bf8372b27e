//! Notifications through the API and the driver, on SQLite and
//! PostgreSQL: channels are an administrator's, checked whole; after a
//! pass every recommendation that clears a channel's thresholds reaches
//! the receiver once per estate version — signed, and verified with the
//! official Standard Webhooks (and Stripe) Python packages — Slack and
//! Teams get their own message shapes, and a failing receiver is retried
//! on a doubling schedule (honouring `Retry-After`), given up on in the
//! end, and shown in the deliveries list the Health page reads.
//!
//! Receivers are real HTTP servers on 127.0.0.1, which the server may
//! reach through `decider_allow` (as `--decider-allow 127.0.0.1/32`).

mod support;

use std::collections::{BTreeMap, BTreeSet};
use std::io::Write;
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex};

use axum::body::Body;
use axum::http::{header, HeaderMap, Method, Request, StatusCode, Uri};
use axum::Router;
use serde_json::{json, Value};
use tower::ServiceExt;

use berth::external::driver::{self, DriverConfig};
use berth::external::notify;
use support::{Backend, TestDb};

const ADMIN: &str = "admin-token-for-tests-0123456789abcdef";
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
    async fn send(
        &self,
        token: &str,
        method: Method,
        path: &str,
        content_type: &str,
        body: Option<String>,
    ) -> (StatusCode, Vec<u8>) {
        let mut req = Request::builder()
            .method(method)
            .uri(path)
            .header(header::AUTHORIZATION, format!("Bearer {token}"));
        if body.is_some() {
            req = req.header(header::CONTENT_TYPE, content_type);
        }
        let body = body.map_or(Body::empty(), Body::from);
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
        (status, bytes.to_vec())
    }

    async fn call(
        &self,
        token: &str,
        method: Method,
        path: &str,
        body: Option<Value>,
    ) -> (StatusCode, Value) {
        let (status, bytes) = self
            .send(
                token,
                method,
                path,
                "application/json",
                body.map(|b| b.to_string()),
            )
            .await;
        let v = if bytes.is_empty() {
            Value::Null
        } else {
            serde_json::from_slice(&bytes)
                .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&bytes)))
        };
        (status, v)
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

    async fn channel(&self, body: Value) -> Value {
        let (s, v) = self
            .call(
                ADMIN,
                Method::POST,
                "/api/notification-channels",
                Some(body),
            )
            .await;
        assert_eq!(s, StatusCode::CREATED, "{v}");
        v
    }

    async fn pass(&self) {
        driver::pass(&self.state.external(), &DriverConfig::default())
            .await
            .unwrap()
            .expect("no other pass runs");
    }

    async fn deliveries(&self, query: &str) -> Vec<Value> {
        let (s, v) = self
            .call(
                ADMIN,
                Method::GET,
                &format!("/api/notification-deliveries{query}"),
                None,
            )
            .await;
        assert_eq!(s, StatusCode::OK, "{v}");
        v["deliveries"].as_array().unwrap().clone()
    }

    /// The moves of the estate's newest advice snapshot.
    async fn snapshot_moves(&self) -> Vec<Value> {
        let (_, v) = self
            .call(
                ADMIN,
                Method::GET,
                "/api/estates/sample/advice-snapshots",
                None,
            )
            .await;
        v["snapshots"][0]["result"]["moves"]
            .as_array()
            .unwrap()
            .clone()
    }

    /// A new estate version with the same content: the estate file put
    /// back as it is.
    async fn bump_version(&self) {
        let (s, file) = self
            .send(ADMIN, Method::GET, "/api/estates/sample/file", "", None)
            .await;
        assert_eq!(s, StatusCode::OK);
        let (s, v) = self
            .send(
                ADMIN,
                Method::PUT,
                "/api/estates/sample/file",
                "application/json",
                Some(String::from_utf8(file).unwrap()),
            )
            .await;
        assert_eq!(s, StatusCode::OK, "{}", String::from_utf8_lossy(&v));
    }
}

/// One recommendation of a snapshot, worked out from its JSON here (not
/// with the server's code): identity, gain and confidence, a compound
/// step once with the group's figures; a move with `evidence` (too weak
/// to recommend) is none.
#[derive(Clone, Debug)]
struct Rec {
    identity: String,
    gain: f64,
    confidence: String,
}

fn recommendations(moves: &[Value]) -> Vec<Rec> {
    let triple = |m: &Value| {
        format!(
            "{}|{}|{}",
            m["service"].as_str().unwrap(),
            m["from"].as_str().unwrap(),
            m["to"].as_str().unwrap()
        )
    };
    let mut out = Vec::new();
    for m in moves {
        // Too weak to recommend: shown apart, never sent.
        if m.get("evidence").is_some() {
            continue;
        }
        match m.get("group") {
            None => out.push(Rec {
                identity: triple(m),
                gain: m["gain"].as_f64().unwrap(),
                confidence: m["confidence"].as_str().unwrap().to_string(),
            }),
            Some(g) => {
                let steps: Vec<&Value> = g["steps"].as_array().unwrap().iter().collect();
                if steps[0] != &m["step"] {
                    continue;
                }
                let mut members: Vec<String> = moves
                    .iter()
                    .filter(|o| steps.contains(&&o["step"]))
                    .map(triple)
                    .collect();
                members.sort();
                out.push(Rec {
                    identity: members.join("+"),
                    gain: g["gain"].as_f64().unwrap(),
                    confidence: g["confidence"].as_str().unwrap().to_string(),
                });
            }
        }
    }
    out
}

/// What a receiver saw of one request.
#[derive(Clone, Debug)]
struct Seen {
    path: String,
    headers: HeaderMap,
    body: String,
}

#[derive(Clone)]
struct Answer {
    status: u16,
    retry_after: Option<&'static str>,
}

#[derive(Clone)]
struct Receiver {
    seen: Arc<Mutex<Vec<Seen>>>,
    answer: Arc<Mutex<Answer>>,
}

impl Receiver {
    /// A receiver on 127.0.0.1 answering `status`; its base URL.
    async fn start(status: u16) -> (Receiver, String) {
        let r = Receiver {
            seen: Arc::default(),
            answer: Arc::new(Mutex::new(Answer {
                status,
                retry_after: None,
            })),
        };
        let rc = r.clone();
        let app = Router::new().fallback(move |uri: Uri, headers: HeaderMap, body: String| {
            let r = rc.clone();
            async move {
                r.seen.lock().unwrap().push(Seen {
                    path: uri.path().to_string(),
                    headers,
                    body,
                });
                let a = r.answer.lock().unwrap().clone();
                let mut resp = axum::response::Response::builder().status(a.status);
                if let Some(ra) = a.retry_after {
                    resp = resp.header("retry-after", ra);
                }
                resp.body(Body::from("ok")).unwrap()
            }
        });
        let l = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = l.local_addr().unwrap();
        tokio::spawn(async move { axum::serve(l, app).await.unwrap() });
        (r, format!("http://{addr}"))
    }
    fn answer(&self, status: u16, retry_after: Option<&'static str>) {
        *self.answer.lock().unwrap() = Answer {
            status,
            retry_after,
        };
    }
    fn seen(&self) -> Vec<Seen> {
        self.seen.lock().unwrap().clone()
    }
    fn at(&self, path: &str) -> Vec<Seen> {
        self.seen().into_iter().filter(|s| s.path == path).collect()
    }
}

fn body_json(s: &Seen) -> Value {
    serde_json::from_str(&s.body).unwrap_or_else(|e| panic!("{e}: {}", s.body))
}

/// Each request checked by the official `standardwebhooks` and `stripe`
/// packages (server/tests/fixtures/webhook/verify_with_libraries.py, the
/// script the decider contract test uses) with `secret`.
fn verify_with_libraries(seen: &[Seen], secret: &str) -> Vec<Value> {
    let cases: Vec<Value> = seen
        .iter()
        .enumerate()
        .map(|(i, s)| {
            let h = |n: &str| {
                s.headers
                    .get(n)
                    .unwrap_or_else(|| panic!("request {i} has no {n} header"))
                    .to_str()
                    .unwrap()
                    .to_string()
            };
            json!({
                "name": format!("delivery {i}"),
                "body": s.body,
                "secret": secret,
                "headers": {
                    "berth-signature": h("berth-signature"),
                    "webhook-id": h("webhook-id"),
                    "webhook-timestamp": h("webhook-timestamp"),
                    "webhook-signature": h("webhook-signature"),
                },
            })
        })
        .collect();
    let script = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/webhook/verify_with_libraries.py");
    let mut child = Command::new("python3")
        .arg(script)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| {
            panic!("cannot run python3 (`make tools` installs what it needs): {e}")
        });
    child
        .stdin
        .take()
        .unwrap()
        .write_all(&serde_json::to_vec(&cases).unwrap())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "verify_with_libraries.py failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice::<Vec<Value>>(&out.stdout).unwrap()
}

fn unix(rfc3339: &Value) -> i64 {
    chrono::DateTime::parse_from_rfc3339(rfc3339.as_str().unwrap())
        .unwrap_or_else(|e| panic!("{rfc3339}: {e}"))
        .timestamp()
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

both!(channels_are_an_administrators_checked_whole_and_slack_urls_stay_hidden);
async fn channels_are_an_administrators_checked_whole_and_slack_urls_stay_hidden(b: Backend) {
    let t = app(b, true).await;
    let viewer = t.token("viewer").await;
    let operator = t.token("operator").await;
    let good = json!({"name": "ops", "kind": "slack", "url": "https://hooks.slack.com/services/T0/B0/XYZ"});
    for who in [&viewer, &operator] {
        let (s, _) = t
            .call(
                who,
                Method::POST,
                "/api/notification-channels",
                Some(good.clone()),
            )
            .await;
        assert_eq!(s, StatusCode::FORBIDDEN);
        let (s, _) = t
            .call(who, Method::GET, "/api/notification-channels", None)
            .await;
        assert_eq!(s, StatusCode::FORBIDDEN);
    }
    // Every error at once, each at its field; nothing written.
    let (s, v) = t
        .call(
            ADMIN,
            Method::POST,
            "/api/notification-channels",
            Some(
                json!({"name": "Bad Name", "kind": "email", "url": "ftp://x.example",
                        "min_gain": -1.0, "min_confidence": "sure"}),
            ),
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
        ["/name", "/kind", "/url", "/min_gain", "/min_confidence"],
        "{v}"
    );
    assert!(v["message"]
        .as_str()
        .unwrap()
        .contains("5 errors; nothing was written"));
    // Loopback is refused unless allowed: this server allows 127.0.0.1 only.
    let (s, v) = t
        .call(
            ADMIN,
            Method::POST,
            "/api/notification-channels",
            Some(json!({"name": "lo", "kind": "webhook", "url": "http://127.0.0.2:9/x"})),
        )
        .await;
    assert_eq!(s, StatusCode::UNPROCESSABLE_ENTITY, "{v}");
    assert_eq!(v["details"]["errors"][0]["path"], "/url");
    let (_, v) = t
        .call(ADMIN, Method::GET, "/api/notification-channels", None)
        .await;
    assert_eq!(v["channels"], json!([]), "nothing was written");

    // Slack: no secret, and the URL (its credential) is never shown back.
    let v = t.channel(good.clone()).await;
    assert_eq!(v["secret"], Value::Null);
    assert_eq!(v["channel"]["url"], "https://hooks.slack.com/…");
    assert_eq!(v["channel"]["min_confidence"], "guessed");
    assert_eq!(v["channel"]["min_gain"], 0.0);
    let (s, v) = t
        .call(
            ADMIN,
            Method::POST,
            "/api/notification-channels",
            Some(good.clone()),
        )
        .await;
    assert_eq!(s, StatusCode::CONFLICT, "{v}");
    let (s, v) = t
        .call(
            ADMIN,
            Method::POST,
            "/api/notification-channels/ops/secret",
            None,
        )
        .await;
    assert_eq!(s, StatusCode::UNPROCESSABLE_ENTITY, "{v}");
    let (s, v) = t
        .call(
            ADMIN,
            Method::PUT,
            "/api/notification-channels/ops",
            Some(json!({"kind": "teams", "url": "https://example.com/x"})),
        )
        .await;
    assert_eq!(s, StatusCode::UNPROCESSABLE_ENTITY, "{v}");
    assert_eq!(v["details"]["errors"][0]["path"], "/kind");
    let (s, v) = t
        .call(
            ADMIN,
            Method::PUT,
            "/api/notification-channels/ops",
            Some(json!({"url": "https://hooks.slack.com/services/T1/B1/ABC",
                        "min_gain": 5.5, "min_confidence": "reported", "enabled": false})),
        )
        .await;
    assert_eq!(s, StatusCode::OK, "{v}");
    assert_eq!(
        (
            &v["channel"]["min_gain"],
            &v["channel"]["min_confidence"],
            &v["channel"]["enabled"]
        ),
        (&json!(5.5), &json!("reported"), &json!(false))
    );

    // A signed webhook gets a secret, shown once; a new one replaces it.
    let v = t
        .channel(
            json!({"name": "hook", "kind": "webhook", "url": "https://receiver.example/berth"}),
        )
        .await;
    let first = v["secret"].as_str().unwrap().to_string();
    assert!(first.starts_with("whsec_"), "{v}");
    assert_eq!(v["channel"]["url"], "https://receiver.example/berth");
    let fingerprint = v["channel"]["secret_fingerprint"].clone();
    assert!(fingerprint.is_string());
    let (_, v) = t
        .call(ADMIN, Method::GET, "/api/notification-channels/hook", None)
        .await;
    assert!(!v.to_string().contains(&first), "the secret is write-only");
    let (s, v) = t
        .call(
            ADMIN,
            Method::POST,
            "/api/notification-channels/hook/secret",
            None,
        )
        .await;
    assert_eq!(s, StatusCode::OK, "{v}");
    assert_ne!(v["secret"].as_str().unwrap(), first);
    assert_ne!(v["channel"]["secret_fingerprint"], fingerprint);
    let (s, _) = t
        .call(
            ADMIN,
            Method::DELETE,
            "/api/notification-channels/hook",
            None,
        )
        .await;
    assert_eq!(s, StatusCode::NO_CONTENT);
    let (s, _) = t
        .call(ADMIN, Method::GET, "/api/notification-channels/hook", None)
        .await;
    assert_eq!(s, StatusCode::NOT_FOUND);

    // Without an at-rest key a signed channel cannot be made.
    let t = app(b, false).await;
    let (s, v) = t
        .call(
            ADMIN,
            Method::POST,
            "/api/notification-channels",
            Some(
                json!({"name": "hook", "kind": "webhook", "url": "https://receiver.example/berth"}),
            ),
        )
        .await;
    assert_eq!(s, StatusCode::CONFLICT, "{v}");
    assert!(v["message"].as_str().unwrap().contains("BERTH_SECRET_KEY"));
}

both!(a_signed_notification_arrives_once_per_recommendation_and_estate_version);
async fn a_signed_notification_arrives_once_per_recommendation_and_estate_version(b: Backend) {
    let t = app(b, true).await;
    let (rx, base) = Receiver::start(200).await;
    let v = t
        .channel(json!({"name": "hook", "kind": "webhook", "url": format!("{base}/hook")}))
        .await;
    let secret = v["secret"].as_str().unwrap().to_string();

    t.pass().await;
    let recs = recommendations(&t.snapshot_moves().await);
    assert!(!recs.is_empty(), "the sample has recommendations");
    let want: BTreeSet<String> = recs.iter().map(|r| r.identity.clone()).collect();
    let seen = rx.seen();
    assert_eq!(seen.len(), recs.len(), "one request per recommendation");
    let got: BTreeSet<String> = seen
        .iter()
        .map(|s| {
            body_json(s)["data"]["identity"]
                .as_str()
                .unwrap()
                .to_string()
        })
        .collect();
    assert_eq!(got, want);
    // The sample's nw-erp-bridge move rests on guesses: never sent.
    assert!(got.iter().all(|i| !i.contains("nw-erp-bridge")), "{got:?}");
    for s in &seen {
        let ev = body_json(s);
        assert_eq!(ev["type"], notify::EVENT_TYPE);
        assert_eq!(ev["data"]["estate"], "sample");
        assert_eq!(ev["data"]["estate_version"], 1);
        assert_eq!(ev["data"]["link"], "/?estate=sample");
        let rec = recs
            .iter()
            .find(|r| r.identity == ev["data"]["identity"])
            .unwrap();
        assert_eq!(ev["data"]["gain"].as_f64().unwrap(), rec.gain);
        assert_eq!(ev["data"]["confidence"], rec.confidence.as_str());
        assert!(!ev["data"]["moves"].as_array().unwrap().is_empty());
        assert_eq!(
            s.headers.get("content-type").unwrap(),
            "application/json",
            "{:?}",
            s.headers
        );
    }
    // The official libraries accept every signature.
    for r in verify_with_libraries(&seen, &secret) {
        assert_eq!(r["standardwebhooks"], "ok", "{r}");
        assert_eq!(r["stripe"], "ok", "{r}");
    }
    // ... and refuse them under another secret (so the check can fail).
    let other = berth::external::signing::generate();
    for r in verify_with_libraries(&seen[..1], other.expose()) {
        assert_ne!(r["standardwebhooks"], "ok", "{r}");
    }
    let list = t.deliveries("").await;
    assert_eq!(list.len(), recs.len());
    for d in &list {
        assert_eq!(
            (&d["status"], &d["attempts"], &d["last_status"]),
            (&json!("delivered"), &json!(1), &json!(200)),
            "{d}"
        );
        assert_eq!(d["next_attempt_at"], Value::Null);
        let sent = seen
            .iter()
            .find(|s| body_json(s)["data"]["identity"] == d["identity"])
            .unwrap();
        assert_eq!(
            sent.headers.get("webhook-id").unwrap(),
            d["message_id"].as_str().unwrap()
        );
    }

    // Another pass, nothing new: nothing sent again.
    t.pass().await;
    assert_eq!(rx.seen().len(), recs.len());

    // A policy change makes a new snapshot at the same estate version: a
    // recommendation already sent at version 1 is not sent again.
    let (s, v) = t
        .call(
            ADMIN,
            Method::PUT,
            "/api/estates/sample/policy",
            Some(json!({"min_gain_points": 7.5})),
        )
        .await;
    assert_eq!(s, StatusCode::OK, "{v}");
    t.pass().await;
    let mut per: BTreeMap<(String, i64), usize> = BTreeMap::new();
    for s in rx.seen() {
        let ev = body_json(&s);
        *per.entry((
            ev["data"]["identity"].as_str().unwrap().to_string(),
            ev["data"]["estate_version"].as_i64().unwrap(),
        ))
        .or_default() += 1;
    }
    assert!(per.values().all(|n| *n == 1), "{per:?}");
    let before = rx.seen().len();

    // A new estate version: what is still recommended is sent again, once.
    t.bump_version().await;
    t.pass().await;
    t.pass().await;
    let recs2 = recommendations(&t.snapshot_moves().await);
    let again: Vec<Value> = rx.seen()[before..].iter().map(body_json).collect();
    assert_eq!(again.len(), recs2.len(), "{again:?}");
    assert!(again.iter().all(|ev| ev["data"]["estate_version"] == 2));
    let got: BTreeSet<String> = again
        .iter()
        .map(|ev| ev["data"]["identity"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(
        got,
        recs2
            .iter()
            .map(|r| r.identity.clone())
            .collect::<BTreeSet<_>>()
    );

    // A recommendation someone dismissed (docs/reviews.md) is not sent at
    // the next version while the decision holds; the others are.
    let (_, snaps) = t
        .call(
            ADMIN,
            Method::GET,
            "/api/estates/sample/advice-snapshots",
            None,
        )
        .await;
    let evaluated = snaps["snapshots"][0]["evaluated_at"]
        .as_str()
        .unwrap()
        .to_string();
    let dismissed = recs2[0].identity.clone();
    let (s, v) = t
        .call(
            ADMIN,
            Method::POST,
            &format!("/api/estates/sample/reviews?now={evaluated}"),
            Some(json!({"identity": dismissed, "decision": "dismissed", "reason": "not for this estate"})),
        )
        .await;
    assert_eq!(s, StatusCode::CREATED, "{v}");
    let before = rx.seen().len();
    t.bump_version().await;
    t.pass().await;
    t.pass().await;
    let recs3 = recommendations(&t.snapshot_moves().await);
    let sent3: BTreeSet<String> = rx.seen()[before..]
        .iter()
        .map(|s| {
            body_json(s)["data"]["identity"]
                .as_str()
                .unwrap()
                .to_string()
        })
        .collect();
    let want3: BTreeSet<String> = recs3
        .iter()
        .map(|r| r.identity.clone())
        .filter(|i| *i != dismissed)
        .collect();
    assert!(!want3.is_empty());
    assert_eq!(
        sent3, want3,
        "everything but the dismissed recommendation ({dismissed})"
    );
}

both!(thresholds_choose_what_is_sent_and_slack_and_teams_get_their_shapes);
async fn thresholds_choose_what_is_sent_and_slack_and_teams_get_their_shapes(b: Backend) {
    let t = app(b, true).await;
    // The advice first; the channels join later and catch up on it.
    t.pass().await;
    let recs = recommendations(&t.snapshot_moves().await);
    let top = recs.iter().map(|r| r.gain).fold(f64::MIN, f64::max);
    let best_class = ["measured", "reported", "inferred", "guessed"]
        .into_iter()
        .find(|c| recs.iter().any(|r| r.confidence == *c))
        .unwrap();
    let rank = |c: &str| {
        ["measured", "reported", "inferred", "guessed"]
            .iter()
            .position(|x| *x == c)
            .unwrap()
    };
    let (rx, base) = Receiver::start(200).await;
    t.channel(
        json!({"name": "slack", "kind": "slack", "url": format!("{base}/slack"), "min_gain": top}),
    )
    .await;
    t.channel(
        json!({"name": "teams", "kind": "teams", "url": format!("{base}/teams"),
                     "min_confidence": best_class}),
    )
    .await;
    t.channel(
        json!({"name": "never", "kind": "slack", "url": format!("{base}/never"),
                     "min_gain": 1_000_000.0}),
    )
    .await;
    t.channel(
        json!({"name": "off", "kind": "teams", "url": format!("{base}/off"), "enabled": false}),
    )
    .await;
    t.pass().await;

    let want_slack = recs.iter().filter(|r| r.gain >= top).count();
    let want_teams = recs
        .iter()
        .filter(|r| rank(&r.confidence) <= rank(best_class))
        .count();
    assert!(want_slack >= 1 && want_teams >= 1);
    let slack = rx.at("/slack");
    let teams = rx.at("/teams");
    assert_eq!(slack.len(), want_slack, "{recs:?}");
    assert_eq!(teams.len(), want_teams, "{recs:?}");
    assert!(rx.at("/never").is_empty());
    assert!(rx.at("/off").is_empty(), "a disabled channel sends nothing");

    for s in &slack {
        let v = body_json(s);
        let fields: Vec<&String> = v.as_object().unwrap().keys().collect();
        assert_eq!(fields, ["text"], "{v}");
        let text = v["text"].as_str().unwrap();
        assert!(text.starts_with("*Berth recommends*"), "{text}");
        assert!(
            text.contains("(version 1)") && text.contains("/?estate=sample"),
            "{text}"
        );
        assert!(s.headers.get("webhook-signature").is_none());
    }
    for s in &teams {
        let v = body_json(s);
        assert_eq!(v["type"], "message", "{v}");
        let a = &v["attachments"].as_array().unwrap()[0];
        assert_eq!(a["contentType"], "application/vnd.microsoft.card.adaptive");
        assert_eq!(a["content"]["type"], "AdaptiveCard");
        assert_eq!(a["content"]["version"], "1.4");
        let body = a["content"]["body"].as_array().unwrap();
        assert_eq!(body[0]["type"], "TextBlock");
        assert!(body.iter().any(|b| b["type"] == "FactSet"), "{v}");
        assert!(s.headers.get("webhook-signature").is_none());
    }

    // Lowering a threshold looks at the advice again; what was sent stays
    // sent, the rest follows.
    let (s, v) = t
        .call(
            ADMIN,
            Method::PUT,
            "/api/notification-channels/slack",
            Some(json!({"url": format!("{base}/slack"), "min_gain": 0.0})),
        )
        .await;
    assert_eq!(s, StatusCode::OK, "{v}");
    t.pass().await;
    assert_eq!(rx.at("/slack").len(), recs.len());
    let texts: BTreeSet<String> = rx
        .at("/slack")
        .iter()
        .map(|s| body_json(s)["text"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(texts.len(), recs.len(), "no recommendation twice");
}

both!(a_failing_receiver_is_retried_with_backoff_and_shown_in_deliveries);
async fn a_failing_receiver_is_retried_with_backoff_and_shown_in_deliveries(b: Backend) {
    let t = app(b, true).await;
    let viewer = t.token("viewer").await;
    let (rx, base) = Receiver::start(500).await;
    t.pass().await;
    let recs = recommendations(&t.snapshot_moves().await);
    let n = recs.len();
    t.channel(json!({"name": "flaky", "kind": "webhook", "url": format!("{base}/flaky")}))
        .await;
    t.pass().await;
    assert_eq!(rx.seen().len(), n);

    let (s, v) = t
        .call(&viewer, Method::GET, "/api/notification-deliveries", None)
        .await;
    assert_eq!(s, StatusCode::OK, "a viewer sees deliveries: {v}");
    let list = v["deliveries"].as_array().unwrap();
    assert_eq!(list.len(), n);
    let first_at = unix(&list[0]["last_attempt_at"]);
    for d in list {
        assert_eq!(
            (&d["status"], &d["attempts"], &d["last_status"]),
            (&json!("pending"), &json!(1), &json!(500)),
            "{d}"
        );
        assert!(
            d["last_error"].as_str().unwrap().contains("HTTP 500"),
            "{d}"
        );
        assert_eq!(
            unix(&d["next_attempt_at"]) - unix(&d["last_attempt_at"]),
            notify::BASE_RETRY_S,
            "{d}"
        );
    }
    // Backed off: a pass right away sends nothing.
    t.pass().await;
    assert_eq!(rx.seen().len(), n);

    // Due: retried, and the delay doubles.
    let at = first_at + notify::BASE_RETRY_S;
    let sum = notify::deliver_due(&t.state.external(), at).await.unwrap();
    assert_eq!((sum.delivered, sum.retrying, sum.failed), (0, n, 0));
    assert_eq!(rx.seen().len(), 2 * n);
    for d in t.deliveries("").await {
        assert_eq!(d["attempts"], 2, "{d}");
        assert_eq!(unix(&d["next_attempt_at"]) - at, 2 * notify::BASE_RETRY_S);
    }
    // Busy with a Retry-After longer than the schedule: honoured.
    rx.answer(429, Some("900"));
    let at = at + 2 * notify::BASE_RETRY_S;
    notify::deliver_due(&t.state.external(), at).await.unwrap();
    for d in t.deliveries("").await {
        assert_eq!(
            (&d["attempts"], &d["last_status"]),
            (&json!(3), &json!(429))
        );
        assert_eq!(unix(&d["next_attempt_at"]) - at, 900, "{d}");
    }
    // Not yet due: nothing sent.
    let sum = notify::deliver_due(&t.state.external(), at + 899)
        .await
        .unwrap();
    assert_eq!(sum, notify::Summary::default());
    assert_eq!(rx.seen().len(), 3 * n);
    // Back up: delivered, with the same message id on every attempt.
    rx.answer(204, None);
    let sum = notify::deliver_due(&t.state.external(), at + 900)
        .await
        .unwrap();
    assert_eq!(sum.delivered, n);
    let seen = rx.seen();
    for d in t.deliveries("?status=delivered").await {
        assert_eq!(
            (&d["attempts"], &d["last_status"]),
            (&json!(4), &json!(204))
        );
        let ids: BTreeSet<&str> = seen
            .iter()
            .filter(|s| body_json(s)["data"]["identity"] == d["identity"])
            .map(|s| s.headers.get("webhook-id").unwrap().to_str().unwrap())
            .collect();
        assert_eq!(ids.len(), 1, "{d}");
    }
    assert_eq!(rx.seen().len(), 4 * n);

    // A receiver that keeps failing is given up on after the last attempt;
    // the failure stays listed.
    let (dead, dead_base) = Receiver::start(502).await;
    t.channel(json!({"name": "dead", "kind": "webhook", "url": format!("{dead_base}/dead")}))
        .await;
    t.pass().await;
    let mut at = at + 900;
    for _ in 1..notify::MAX_ATTEMPTS {
        at += notify::MAX_RETRY_S;
        notify::deliver_due(&t.state.external(), at).await.unwrap();
    }
    assert_eq!(dead.seen().len(), n * notify::MAX_ATTEMPTS as usize);
    let failed = t.deliveries("?status=failed&channel=dead").await;
    assert_eq!(failed.len(), n);
    for d in &failed {
        assert_eq!(d["attempts"], notify::MAX_ATTEMPTS, "{d}");
        assert_eq!(d["next_attempt_at"], Value::Null);
        assert!(d["last_error"].as_str().unwrap().contains("HTTP 502"));
    }
    notify::deliver_due(&t.state.external(), at + 100_000)
        .await
        .unwrap();
    assert_eq!(
        dead.seen().len(),
        n * notify::MAX_ATTEMPTS as usize,
        "given up"
    );

    // A 4xx other than 408/429 cannot get better by retrying: failed at once.
    let (gone, gone_base) = Receiver::start(404).await;
    t.channel(json!({"name": "gone", "kind": "slack", "url": format!("{gone_base}/gone")}))
        .await;
    t.pass().await;
    assert_eq!(gone.seen().len(), n);
    let failed = t.deliveries("?status=failed&channel=gone").await;
    assert_eq!(failed.len(), n);
    assert!(failed.iter().all(|d| d["attempts"] == 1));

    // Bad queries are refused in words.
    let (s, v) = t
        .call(
            &viewer,
            Method::GET,
            "/api/notification-deliveries?status=lost",
            None,
        )
        .await;
    assert_eq!(s, StatusCode::BAD_REQUEST, "{v}");
}
