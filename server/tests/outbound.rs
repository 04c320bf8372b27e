//! One door out (issue 37 item 3): the Prometheus client the CLI import
//! and the agent use follows no redirects, refuses addresses no configured
//! server lives at, bounds the answer, and never prints another server's
//! control or bidirectional characters raw. Against a real local HTTP
//! server playing Prometheus.

use std::net::SocketAddr;

use axum::http::{header, StatusCode};
use axum::response::IntoResponse;
use axum::routing::get;
use axum::Router;

use berth::import::prometheus::Reading;
use berth::prom_client::PromClient;

/// Serve `app` on a free loopback port; its base URL.
async fn serve(app: Router) -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr: SocketAddr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    format!("http://{addr}")
}

#[tokio::test]
async fn a_redirect_to_a_metadata_address_is_refused_not_followed() {
    let base = serve(Router::new().route(
        "/api/v1/query",
        get(|| async {
            (
                StatusCode::FOUND,
                [(
                    header::LOCATION,
                    "http://169.254.169.254/latest/meta-data/iam",
                )],
            )
                .into_response()
        }),
    ))
    .await;
    let client = PromClient::new(&base).unwrap();
    let started = std::time::Instant::now();
    let err = client
        .fetch(&Reading::default(), 1_764_475_500)
        .await
        .expect_err("a redirect is not an answer")
        .to_string();
    assert!(
        err.contains("302") && err.contains("redirect") && err.contains("169.254.169.254"),
        "{err}"
    );
    assert!(err.contains("follows no redirects"), "{err}");
    // Refused at once: nothing was tried at the metadata address (which,
    // followed, would have taken until the connect timeout here).
    assert!(started.elapsed() < std::time::Duration::from_secs(5));
}

#[tokio::test]
async fn a_prometheus_at_a_link_local_or_unspecified_address_is_refused_before_connecting() {
    for url in [
        "http://169.254.169.254:9090",
        "http://0.0.0.0:9090",
        "http://[::ffff:169.254.169.254]:9090",
    ] {
        let err = PromClient::new(url).expect_err(url);
        assert!(err.contains("Berth does not connect there"), "{url}: {err}");
    }
    // Where a Prometheus lives: loopback, private networks, names.
    for url in [
        "http://127.0.0.1:9090",
        "http://10.0.0.5:9090",
        "http://prometheus.monitoring:9090",
    ] {
        PromClient::new(url).unwrap_or_else(|e| panic!("{url}: {e}"));
    }
}

#[tokio::test]
async fn prometheus_error_text_reaches_the_terminal_escaped() {
    let base = serve(Router::new().route(
        "/api/v1/query",
        get(|| async {
            (
                StatusCode::BAD_REQUEST,
                [(header::CONTENT_TYPE, "application/json")],
                "{\"status\":\"error\",\"errorType\":\"bad_data\",\"error\":\"parse error \\u001b[2J\\u001b[31mRED \\u202egnp.exe\"}",
            )
                .into_response()
        }),
    ))
    .await;
    let client = PromClient::new(&base).unwrap();
    let err = client
        .fetch(&Reading::default(), 1_764_475_500)
        .await
        .expect_err("an error answer")
        .to_string();
    assert!(!err.contains('\u{1b}'), "raw ESC: {err:?}");
    assert!(!err.contains('\u{202e}'), "raw U+202E: {err:?}");
    assert!(
        err.contains("\\u{1b}[2J") && err.contains("\\u{202e}gnp.exe"),
        "{err}"
    );

    // Not JSON at all, with the same characters: quoted escaped too.
    let base = serve(Router::new().route(
        "/api/v1/query",
        get(|| async {
            (
                StatusCode::BAD_GATEWAY,
                "proxy \u{1b}]0;owned\u{7} \u{202e}error",
            )
                .into_response()
        }),
    ))
    .await;
    let err = PromClient::new(&base)
        .unwrap()
        .fetch(&Reading::default(), 1_764_475_500)
        .await
        .expect_err("not an answer")
        .to_string();
    assert!(
        !err.contains('\u{1b}') && !err.contains('\u{202e}') && !err.contains('\u{7}'),
        "{err:?}"
    );
}

#[tokio::test]
async fn an_answer_over_the_limit_is_refused() {
    let limit = berth::prom_client::MAX_RESPONSE_BYTES;
    let base = serve(Router::new().route(
        "/api/v1/query",
        get(move || async move {
            let mut body = b"{\"status\":\"success\",\"data\":{\"resultType\":\"vector\",\"result\":[]},\"pad\":\"".to_vec();
            body.resize(limit + 10, b'x');
            body.extend_from_slice(b"\"}");
            ([(header::CONTENT_TYPE, "application/json")], body).into_response()
        }),
    ))
    .await;
    let err = PromClient::new(&base)
        .unwrap()
        .fetch(&Reading::default(), 1_764_475_500)
        .await
        .expect_err("too large")
        .to_string();
    assert!(err.contains("larger than 16 MiB"), "{err}");
}
