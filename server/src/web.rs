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
    berth_web::ssr::pages(&root, site.problem()).fallback(move |req: Request| {
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
}
