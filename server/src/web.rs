//! The web application's mount: the pages of `berth-web` (rendered here,
//! hydrated in the browser), the built bundle and static files from the
//! site root, and the API's JSON `not_found` for anything under `/api/`
//! that no route matched. [`crate::http::app`] puts this behind every
//! route as its fallback.

use std::path::Path;

use axum::extract::Request;
use axum::response::IntoResponse;
use axum::Router;
use tower::ServiceExt;
use tower_http::services::ServeDir;

/// Pages first; what no page matches is a file of the site root
/// (`/pkg/…`, `/style/…`, `/world.svg`), served pre-compressed when the
/// build left a `.gz` beside it.
pub fn pages(site_root: &Path) -> Router {
    let files = ServeDir::new(site_root).precompressed_gzip();
    berth_web::ssr::pages(&site_root.to_string_lossy()).fallback(move |req: Request| {
        let files = files.clone();
        async move {
            let p = req.uri().path();
            if p == "/api" || p.starts_with("/api/") {
                return crate::error::not_found(req).await.into_response();
            }
            match files.oneshot(req).await {
                Ok(r) => r.map(axum::body::Body::new).into_response(),
                Err(never) => match never {},
            }
        }
    })
}
