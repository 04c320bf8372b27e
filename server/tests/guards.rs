//! The guards in front of expensive and state-changing requests, through
//! the real router on a fresh SQLite database:
//!
//! * engine computations are rate-limited per caller (429 with
//!   `Retry-After`; cached answers are free, other callers unaffected),
//!   and a result above the server's size limit is refused with 507;
//! * a state-changing request made with the session cookie is refused
//!   when the browser says it comes from another site (`Origin`,
//!   `Sec-Fetch-Site`), even with the right CSRF token; the same request
//!   from Berth's own origin passes;
//! * the session cookie is `Secure` when a trusted proxy says the request
//!   came over https, or the public URL is https — and not otherwise.

mod support;

use axum::body::Body;
use axum::http::{header, Method, Request, StatusCode};
use serde_json::{json, Value};
use tower::ServiceExt;

use support::{Backend, TestDb};

const ADMIN: &str = "guards-test-admin-token-0123456789abcdef";
/// The host the requests are addressed to.
const HOST: &str = "berth.test:3000";

struct App {
    router: axum::Router,
    _db: TestDb,
}

struct Reply {
    status: StatusCode,
    headers: axum::http::HeaderMap,
    body: Value,
}

impl App {
    async fn new(config: berth::Config) -> App {
        let db = TestDb::new(Backend::Sqlite).await;
        let mut opts = berth::serve::ServeOptions::new(
            "127.0.0.1:0".parse().unwrap(),
            Some(db.url.clone()),
            std::env::temp_dir(),
        );
        opts.admin_token = Some(ADMIN.into());
        opts.sample_at = Some(berth::serve::sample_designed_at());
        opts.max_connections = 4;
        opts.config = config;
        let (state, _) = berth::serve::prepare(&opts).await.expect("prepare");
        App {
            router: berth::http::app(state),
            _db: db,
        }
    }

    async fn call(
        &self,
        method: Method,
        path: &str,
        headers: &[(&str, &str)],
        body: Option<Value>,
    ) -> Reply {
        let mut req = Request::builder()
            .method(method)
            .uri(path)
            .header(header::HOST, HOST);
        for (k, v) in headers {
            req = req.header(*k, *v);
        }
        let body = match body {
            Some(v) => {
                req = req.header(header::CONTENT_TYPE, "application/json");
                Body::from(v.to_string())
            }
            None => Body::empty(),
        };
        let resp = self
            .router
            .clone()
            .oneshot(req.body(body).unwrap())
            .await
            .unwrap();
        let status = resp.status();
        let headers = resp.headers().clone();
        let bytes = axum::body::to_bytes(resp.into_body(), usize::MAX)
            .await
            .unwrap();
        Reply {
            status,
            headers,
            body: serde_json::from_slice(&bytes).unwrap_or(Value::Null),
        }
    }

    /// Sign in with the admin token: (session cookie, CSRF token, the
    /// whole Set-Cookie line).
    async fn sign_in(&self, headers: &[(&str, &str)]) -> (String, String, String) {
        let r = self
            .call(
                Method::POST,
                "/api/session",
                headers,
                Some(json!({"token": ADMIN})),
            )
            .await;
        assert_eq!(r.status, StatusCode::OK, "{}", r.body);
        let set = r.headers[header::SET_COOKIE].to_str().unwrap().to_string();
        let cookie = set
            .split(';')
            .next()
            .unwrap()
            .trim()
            .strip_prefix("berth_session=")
            .unwrap()
            .to_string();
        (
            cookie,
            r.body["csrf_token"].as_str().unwrap().to_string(),
            set,
        )
    }
}

fn bearer() -> String {
    format!("Bearer {ADMIN}")
}

fn advice_at(minute: u32) -> String {
    format!(
        "/api/estates/sample/advice?now=2026-11-30T{:02}:{:02}:00Z",
        4 + minute / 60,
        minute % 60
    )
}

#[tokio::test]
async fn engine_computations_are_rate_limited_per_caller() {
    // The default budget: 60 computations at once.
    let app = App::new(berth::Config::default()).await;
    let auth = bearer();
    let as_admin = [("authorization", auth.as_str())];
    // New `now` each time, so each is a computation, until refused. The
    // bucket earns one back per second, so a slow machine gets a few more.
    let start = std::time::Instant::now();
    let mut computed = 0;
    let refused = loop {
        let r = app
            .call(Method::GET, &advice_at(computed), &as_admin, None)
            .await;
        if r.status != StatusCode::OK {
            break r;
        }
        computed += 1;
        assert!(computed <= 200, "200 computations and never refused");
        // Cached answers cost nothing: asking again for the first one
        // never brings the refusal closer.
        let again = app.call(Method::GET, &advice_at(0), &as_admin, None).await;
        assert_eq!(
            again.status,
            StatusCode::OK,
            "a cached answer: {}",
            again.body
        );
    };
    let allowed = 60 + start.elapsed().as_secs() as u32 + 1;
    assert!(
        (60..=allowed).contains(&computed),
        "refused after {computed} computations (60 to {allowed} expected)"
    );
    let r = refused;
    assert_eq!(r.status, StatusCode::TOO_MANY_REQUESTS, "{}", r.body);
    assert_eq!(r.body["error"], "rate_limited");
    let retry: u64 = r.headers[header::RETRY_AFTER]
        .to_str()
        .unwrap()
        .parse()
        .unwrap();
    assert!(retry >= 1, "Retry-After {retry}");
    let message = r.body["message"].as_str().unwrap();
    assert!(message.contains("60 a minute"), "{message}");
    // Another caller (a viewer token) has a budget of its own.
    let minute = computed + 1;
    let r = app
        .call(
            Method::POST,
            "/api/tokens",
            &as_admin,
            Some(json!({"name": "reader", "role": "viewer"})),
        )
        .await;
    assert_eq!(r.status, StatusCode::CREATED, "{}", r.body);
    let viewer = format!("Bearer {}", r.body["token"].as_str().unwrap());
    let r = app
        .call(
            Method::GET,
            &advice_at(minute),
            &[("authorization", viewer.as_str())],
            None,
        )
        .await;
    assert_eq!(r.status, StatusCode::OK, "another caller: {}", r.body);
}

#[tokio::test]
async fn a_result_over_the_size_limit_is_refused_with_507() {
    let app = App::new(berth::Config {
        max_result_bytes: 1000,
        ..berth::Config::default()
    })
    .await;
    let auth = bearer();
    let r = app
        .call(
            Method::GET,
            "/api/estates/sample/preview?now=2026-11-30T04:05:00Z",
            &[("authorization", auth.as_str())],
            None,
        )
        .await;
    assert_eq!(r.status, StatusCode::INSUFFICIENT_STORAGE, "{}", r.body);
    assert_eq!(r.body["error"], "result_too_large");
    let message = r.body["message"].as_str().unwrap();
    assert!(
        message.contains("the preview result is ") && message.contains("limit of 1000 bytes"),
        "{message}"
    );
    // The size named is the result's own.
    let size: usize = message
        .strip_prefix("the preview result is ")
        .and_then(|m| m.split(' ').next())
        .and_then(|n| n.parse().ok())
        .unwrap();
    assert!(size > 1000, "{message}");
}

#[tokio::test]
async fn cookie_requests_from_another_site_are_refused_despite_the_csrf_token() {
    let app = App::new(berth::Config::default()).await;
    let (cookie, csrf, _) = app.sign_in(&[]).await;
    let c = format!("berth_session={cookie}");
    let token = |name: &str| json!({"name": name, "role": "viewer"});
    let with = |extra: &[(&'static str, &'static str)]| {
        let mut h = vec![("cookie", c.clone()), ("x-csrf-token", csrf.clone())];
        h.extend(extra.iter().map(|(k, v)| (*k, v.to_string())));
        h
    };
    let send = |h: Vec<(&'static str, String)>, name: &'static str| {
        let app = &app;
        async move {
            let h: Vec<(&str, &str)> = h.iter().map(|(k, v)| (*k, v.as_str())).collect();
            app.call(Method::POST, "/api/tokens", &h, Some(token(name)))
                .await
        }
    };
    for (extra, name) in [
        (&[("origin", "http://evil.example")][..], "evil-origin"),
        (&[("sec-fetch-site", "cross-site")][..], "cross-site"),
        (
            &[
                ("sec-fetch-site", "same-site"),
                ("origin", "http://sub.berth.test:3000"),
            ][..],
            "same-site",
        ),
        (&[("origin", "null")][..], "null-origin"),
        (&[("origin", "http://berth.test:3001")][..], "other-port"),
    ] {
        let r = send(with(extra), name).await;
        assert_eq!(r.status, StatusCode::FORBIDDEN, "{name}: {}", r.body);
        assert!(
            r.body["message"].as_str().unwrap().contains("another site")
                || r.body["message"]
                    .as_str()
                    .unwrap()
                    .contains("not this server's origin")
                || r.body["message"].as_str().unwrap().contains("same site"),
            "{name}: {}",
            r.body
        );
    }
    // From Berth's own pages: accepted.
    let r = send(
        with(&[
            ("origin", "http://berth.test:3000"),
            ("sec-fetch-site", "same-origin"),
        ]),
        "own-origin",
    )
    .await;
    assert_eq!(r.status, StatusCode::CREATED, "{}", r.body);
    // No browser headers at all (an old browser, a script with the
    // cookie): the CSRF token alone decides, as before.
    let r = send(with(&[]), "no-headers").await;
    assert_eq!(r.status, StatusCode::CREATED, "{}", r.body);
    // Reading is not refused: a cross-site GET cannot change anything.
    let r = app
        .call(
            Method::GET,
            "/api/session",
            &[("cookie", c.as_str()), ("origin", "http://evil.example")],
            None,
        )
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    // Bearer tokens are never ambient: no origin check.
    let auth = bearer();
    let r = app
        .call(
            Method::POST,
            "/api/tokens",
            &[
                ("authorization", auth.as_str()),
                ("origin", "http://evil.example"),
            ],
            Some(token("bearer")),
        )
        .await;
    assert_eq!(r.status, StatusCode::CREATED, "{}", r.body);
    // Signing in from another site is refused too (login CSRF).
    let r = app
        .call(
            Method::POST,
            "/api/session",
            &[("origin", "http://evil.example")],
            Some(json!({"token": ADMIN})),
        )
        .await;
    assert_eq!(r.status, StatusCode::FORBIDDEN, "{}", r.body);
}

#[tokio::test]
async fn the_session_cookie_is_secure_when_the_request_came_over_https() {
    let https = [("x-forwarded-proto", "https")];
    // Plain HTTP, and an untrusted claim of https: not Secure.
    let plain = App::new(berth::Config::default()).await;
    let (_, _, set) = plain.sign_in(&[]).await;
    assert!(!set.contains("Secure"), "{set}");
    let (_, _, set) = plain.sign_in(&https).await;
    assert!(
        !set.contains("Secure"),
        "untrusted X-Forwarded-Proto: {set}"
    );
    // Behind a trusted proxy that says https: Secure, on sign-in and on
    // sign-out.
    let proxied = App::new(berth::Config {
        trust_forwarded_for: true,
        ..berth::Config::default()
    })
    .await;
    let (cookie, csrf, set) = proxied.sign_in(&https).await;
    assert!(set.contains("; Secure"), "{set}");
    let c = format!("berth_session={cookie}");
    let r = proxied
        .call(
            Method::DELETE,
            "/api/session",
            &[
                ("cookie", c.as_str()),
                ("x-csrf-token", csrf.as_str()),
                ("x-forwarded-proto", "https"),
            ],
            None,
        )
        .await;
    assert_eq!(r.status, StatusCode::NO_CONTENT);
    let cleared = r.headers[header::SET_COOKIE].to_str().unwrap();
    assert!(cleared.contains("; Secure"), "{cleared}");
    let (_, _, set) = proxied.sign_in(&[("x-forwarded-proto", "http")]).await;
    assert!(!set.contains("Secure"), "{set}");
    // A public URL that is https: Secure, and its origin is ours.
    let public = App::new(berth::Config {
        public_url: Some(berth::auth::public_origin("https://berth.example.com").unwrap()),
        ..berth::Config::default()
    })
    .await;
    let (cookie, csrf, set) = public
        .sign_in(&[("origin", "https://berth.example.com")])
        .await;
    assert!(set.contains("; Secure"), "{set}");
    let c = format!("berth_session={cookie}");
    let r = public
        .call(
            Method::POST,
            "/api/tokens",
            &[
                ("cookie", c.as_str()),
                ("x-csrf-token", csrf.as_str()),
                ("origin", "https://berth.example.com"),
            ],
            Some(json!({"name": "via-public-url", "role": "viewer"})),
        )
        .await;
    assert_eq!(r.status, StatusCode::CREATED, "{}", r.body);
}
