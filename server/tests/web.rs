//! The web application's mount: pages rendered by the server, the bundle
//! served from the site root, the API's JSON 404 kept under /api/, and the
//! `result_digest` the browser's parity check compares with.

mod support;

use axum::body::Body;
use axum::http::Request;
use tower::ServiceExt;

const ADMIN_TOKEN: &str = "web-test-admin-token-0123456789abcdef";
const NOW: &str = "2026-11-30T04:05:00Z";

struct App {
    router: axum::Router,
    _db: support::TestDb,
    _dirs: (tempfile::TempDir, tempfile::TempDir),
}

async fn app() -> App {
    let db = support::TestDb::new(support::Backend::Sqlite).await;
    let data_dir = tempfile::tempdir().unwrap();
    let site = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(site.path().join("pkg")).unwrap();
    std::fs::write(site.path().join("pkg/berth.js"), "// glue").unwrap();
    // A file with the Brotli and gzip copies scripts/build-web.sh writes;
    // each copy's bytes say which one was sent.
    std::fs::create_dir_all(site.path().join("style")).unwrap();
    for (name, body) in [
        ("berth.css", "plain"),
        ("berth.css.br", "brotli copy"),
        ("berth.css.gz", "gzip copy"),
    ] {
        std::fs::write(site.path().join("style").join(name), body).unwrap();
    }
    let opts = berth::serve::ServeOptions {
        listen: "127.0.0.1:0".parse().unwrap(),
        database_url: Some(db.url.clone()),
        data_dir: data_dir.path().to_path_buf(),
        admin_token: Some(ADMIN_TOKEN.into()),
        seed: true,
        sample_at: Some(berth::serve::sample_designed_at()),
        max_connections: 4,
        secret_key: None,
        secret_key_file: None,
        decider_allow: Vec::new(),
        driver_every_s: None,
        history_retention_days: berth::external::driver::DEFAULT_HISTORY_RETENTION_DAYS,
        net: Default::default(),
        config: berth::Config {
            site: berth::site::Site::Dir(site.path().to_path_buf()),
            ..berth::Config::default()
        },
    };
    let (state, _) = berth::serve::prepare(&opts).await.unwrap();
    App {
        router: berth::http::app(state),
        _db: db,
        _dirs: (data_dir, site),
    }
}

async fn get(app: &App, uri: &str, token: bool) -> (u16, String, String) {
    let mut req = Request::builder().uri(uri);
    if token {
        req = req.header("authorization", format!("Bearer {ADMIN_TOKEN}"));
    }
    let resp = app
        .router
        .clone()
        .oneshot(req.body(Body::empty()).unwrap())
        .await
        .unwrap();
    let status = resp.status().as_u16();
    let ctype = resp
        .headers()
        .get("content-type")
        .map(|v| v.to_str().unwrap().to_string())
        .unwrap_or_default();
    let bytes = axum::body::to_bytes(resp.into_body(), 64 << 20)
        .await
        .unwrap();
    (status, ctype, String::from_utf8(bytes.to_vec()).unwrap())
}

#[tokio::test]
async fn pages_are_rendered_files_served_and_the_api_404_stays_json() {
    let app = app().await;
    for (path, heading) in [
        ("/", "Placement"),
        ("/whatif", "What-if"),
        ("/deciders", "Deciders"),
        ("/estate", "Estate"),
        ("/policy", "Policy"),
        ("/health", "Health"),
        ("/login", "Sign in"),
    ] {
        let (status, ctype, body) = get(&app, path, false).await;
        assert_eq!(status, 200, "{path}: {body}");
        assert!(ctype.starts_with("text/html"), "{path}: {ctype}");
        assert!(
            body.contains(&format!("<h1>{heading}</h1>")),
            "{path}: {body}"
        );
        // The hydration script loads the bundle build-web.sh writes.
        assert!(
            body.contains("/pkg/berth.js") && body.contains("berth_bg"),
            "{path}"
        );
    }
    let (status, _, body) = get(&app, "/pkg/berth.js", false).await;
    assert_eq!((status, body.as_str()), (200, "// glue"));
    let (status, ctype, body) = get(&app, "/api/nowhere", true).await;
    assert_eq!(status, 404);
    assert!(ctype.starts_with("application/json"), "{ctype}");
    let v: serde_json::Value = serde_json::from_str(&body).unwrap();
    assert_eq!(v["error"], "not_found");
    assert!(v["message"]
        .as_str()
        .unwrap()
        .starts_with("no route GET /api/nowhere"));
    let (status, _, _) = get(&app, "/no-such-page", false).await;
    assert_eq!(status, 404);
}

/// What a browser is sent for a file with pre-compressed copies, by what
/// its `Accept-Encoding` says: Brotli when it takes it (Chromium and
/// Firefox do), gzip when it takes only that or weighs it higher, the file
/// itself otherwise; always with `Vary: Accept-Encoding`
/// so a cache between them does not hand one browser's copy to another.
#[tokio::test]
async fn the_site_sends_the_compressed_copy_the_browser_takes() {
    let app = app().await;
    for (accept, coding, body) in [
        (Some("gzip, deflate, br, zstd"), Some("br"), "brotli copy"),
        (Some("br;q=0.5, gzip"), Some("gzip"), "gzip copy"),
        (Some("gzip, deflate"), Some("gzip"), "gzip copy"),
        (Some("identity"), None, "plain"),
        (None, None, "plain"),
    ] {
        let mut req = Request::builder().uri("/style/berth.css");
        if let Some(a) = accept {
            req = req.header("accept-encoding", a);
        }
        let resp = app
            .router
            .clone()
            .oneshot(req.body(Body::empty()).unwrap())
            .await
            .unwrap();
        assert_eq!(resp.status(), 200, "{accept:?}");
        let h = resp.headers().clone();
        assert_eq!(
            h.get("content-encoding").map(|v| v.to_str().unwrap()),
            coding,
            "{accept:?}"
        );
        assert!(
            h["content-type"].to_str().unwrap().starts_with("text/css"),
            "{accept:?}: {h:?}"
        );
        assert_eq!(
            h.get("vary")
                .map(|v| v.to_str().unwrap().to_ascii_lowercase()),
            Some("accept-encoding".to_string()),
            "{accept:?}"
        );
        let bytes = axum::body::to_bytes(resp.into_body(), 1 << 20)
            .await
            .unwrap();
        assert_eq!(String::from_utf8_lossy(&bytes), body, "{accept:?}");
    }
}

/// The bytes of `result` in an envelope: it is the last field, written as
/// the engine produced it.
fn result_bytes(envelope: &str) -> &str {
    let at = envelope.find(",\"result\":").expect("a result field") + ",\"result\":".len();
    envelope[at..]
        .strip_suffix('}')
        .expect("the envelope ends after result")
}

#[tokio::test]
async fn result_digest_is_the_sha256_of_the_result_and_the_browser_code_reaches_it() {
    let app = app().await;
    let (status, _, envelope) = get(
        &app,
        &format!("/api/estates/sample/advice?why=true&now={NOW}"),
        true,
    )
    .await;
    assert_eq!(status, 200, "{envelope}");
    let v: serde_json::Value = serde_json::from_str(&envelope).unwrap();
    let digest = v["result_digest"].as_str().unwrap();
    assert_eq!(digest, berth::auth::sha256_hex(result_bytes(&envelope)));
    // What the browser does, natively: load the snapshot, compute the
    // explained advice for the same minute, digest it.
    let (status, _, snapshot) = get(&app, "/api/estates/sample/snapshot", true).await;
    assert_eq!(status, 200);
    let loaded = berth_web::engine::load_snapshot(&snapshot).unwrap();
    let now = berth_web::engine::parse_time(NOW).unwrap();
    let advice = berth_web::engine::advice(&loaded, now);
    let why = berth_web::engine::explain(&loaded, now, &advice);
    let mine = berth_web::engine::advice_why_bytes(&advice, &why);
    let mine_digest = berth_web::engine::sha256_hex(mine.as_bytes());
    assert_eq!(mine_digest, digest);
    // The Placement page's check, on the envelope read as the page reads it.
    let typed: berth_api::ResultEnvelope = serde_json::from_str(&envelope).unwrap();
    assert_eq!(
        berth_web::pages::placement::check_parity(&typed, &loaded.meta, &mine_digest),
        berth_web::pages::placement::Parity::Match
    );
    assert_ne!(
        berth_web::pages::placement::check_parity(&typed, &loaded.meta, &"0".repeat(64)),
        berth_web::pages::placement::Parity::Match,
        "a different result is told apart"
    );
    // Without why the digest differs: it is over the bytes of each result.
    let (_, _, plain) = get(&app, &format!("/api/estates/sample/advice?now={NOW}"), true).await;
    let p: serde_json::Value = serde_json::from_str(&plain).unwrap();
    assert_ne!(p["result_digest"], v["result_digest"]);
    assert_eq!(
        p["result_digest"].as_str().unwrap(),
        berth::auth::sha256_hex(result_bytes(&plain))
    );
}
