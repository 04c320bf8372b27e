//! The web application's mount: the pages of `berth-web` (rendered here,
//! hydrated in the browser), the built bundle and static files (embedded
//! or from a directory: [`crate::site`]), and the API's JSON `not_found`
//! for anything under `/api/` that no route matched.
//! [`crate::http::app`] puts this behind every route as its fallback.

use axum::extract::Request;
use axum::response::IntoResponse;
use axum::Router;
use tower::ServiceExt;
use tower_http::services::ServeDir;

use crate::site::Site;

/// Pages first; what no page matches is a file of the site (`/pkg/…`,
/// `/style/…`, `/world.svg`), sent Brotli- or gzip-compressed to browsers
/// that take it when the build left a `.br` or `.gz` beside it.
pub fn pages(site: &Site) -> Router {
    let dir = match site {
        Site::Dir(d) => Some(ServeDir::new(d).precompressed_br().precompressed_gzip()),
        Site::Embedded | Site::Missing => None,
    };
    let root = match site {
        Site::Dir(d) => d.to_string_lossy().into_owned(),
        Site::Embedded | Site::Missing => String::new(),
    };
    berth_web::ssr::pages(&root, site.problem())
        .fallback(move |req: Request| {
            let dir = dir.clone();
            async move {
                let p = req.uri().path();
                if p == "/api" || p.starts_with("/api/") {
                    return crate::error::not_found(req).await.into_response();
                }
                match dir {
                    Some(files) => match files.oneshot(req).await {
                        Ok(mut r) => {
                            // ServeDir picks the copy by Accept-Encoding but
                            // does not say so: a cache between server and
                            // browser must not hand one browser's copy to
                            // another that cannot read it.
                            r.headers_mut().insert(
                                axum::http::header::VARY,
                                axum::http::HeaderValue::from_static("accept-encoding"),
                            );
                            r.map(axum::body::Body::new).into_response()
                        }
                        Err(never) => match never {},
                    },
                    None => match crate::site::embedded(req.method(), p, req.headers()) {
                        Some(r) => r,
                        // As a directory would answer for a file it lacks.
                        None => axum::http::StatusCode::NOT_FOUND.into_response(),
                    },
                }
            }
        })
        .layer(axum::middleware::map_response(page_headers))
}

/// Every page and file of the site may not be framed by another site
/// (clickjacking: a page of Berth under a transparent frame, its buttons
/// under the attacker's) — `X-Frame-Options` for older browsers, CSP
/// `frame-ancestors` for current ones — and is read as the type it is
/// sent with, never sniffed (a file that looks like script is not run as
/// one).
async fn page_headers(mut r: axum::response::Response) -> axum::response::Response {
    use axum::http::{header, HeaderValue};
    let h = r.headers_mut();
    h.insert(header::X_FRAME_OPTIONS, HeaderValue::from_static("DENY"));
    h.insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static("frame-ancestors 'none'"),
    );
    h.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    r
}

/// A URI as the request log shows it: the path, and of the query only the
/// parameter names (`/login?next=…&token=…`): a value may be a secret
/// (`?token=` in a shared link) and the log is read by more people than
/// the token's owner.
pub fn redacted_uri(uri: &axum::http::Uri) -> String {
    let path = crate::external::terminal_safe(uri.path());
    match uri.query() {
        None => path,
        Some(q) => {
            let names: Vec<String> = q
                .split('&')
                .filter(|p| !p.is_empty())
                .map(|p| {
                    let name = p.split('=').next().unwrap_or_default();
                    format!("{}=…", crate::external::terminal_safe(name))
                })
                .collect();
            format!("{path}?{}", names.join("&"))
        }
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn query_values_never_reach_the_log() {
        let uri: axum::http::Uri =
            "/api/estates/sample/advice?now=2026-11-30T04:05:00Z&token=berth_secret"
                .parse()
                .unwrap();
        let shown = super::redacted_uri(&uri);
        assert_eq!(shown, "/api/estates/sample/advice?now=…&token=…");
        assert!(!shown.contains("berth_secret"));
        let plain: axum::http::Uri = "/healthz".parse().unwrap();
        assert_eq!(super::redacted_uri(&plain), "/healthz");
    }
}
