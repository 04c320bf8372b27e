//! The HTTP API: one module per resource group, each routing the
//! endpoints `berth-api` declares ([`berth_api::endpoint`]: method, path,
//! access, summary, contract) to their handlers
//! (`route!(GET_ESTATE => get_estate)`), and the router built from those
//! rows.
//!
//! [`routes`] is the single list of what the server answers: each
//! declared endpoint once, with its handler. The router is built from it,
//! `docs/api.openapi.json` is written from it ([`openapi_text`]), and a
//! test walks it with every role. A handler is reachable only through its
//! row, a row cannot lack one, and every declared endpoint has a row (the
//! clients build their paths from the same declarations).
//!
//! Below this module: [`crate::estates`] (the estate service: visibility,
//! the parsed estate, canonical writes, result envelopes), [`crate::auth`],
//! [`crate::store`]. Nothing below imports `http`.

use std::sync::LazyLock;
use std::time::Instant;

use axum::extract::{MatchedPath, Request, State};
use axum::http::StatusCode;
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::Router;
use serde_json::Value;

use crate::auth;
use crate::error::ApiError;
use crate::state::AppState;

mod deciders;
mod estates;
pub mod extract;
mod facts;
mod health;
mod notify;
mod openapi;
mod ops;
mod outcomes;
mod policy;
mod results;
mod reviews;
pub mod route;
mod scenarios;
mod session;

pub use extract::{COMPARE_BODY_LIMIT, ESTATE_BODY_LIMIT, SMALL_BODY_LIMIT};
pub use route::Route;

/// Every route, in the order of `docs/api.openapi.json`: the groups of
/// the modules, in this order.
pub fn routes() -> &'static [Route] {
    static ALL: LazyLock<Vec<Route>> = LazyLock::new(|| {
        [
            ops::ROUTES,
            session::SESSION_ROUTES,
            estates::ROUTES,
            facts::ROUTES,
            policy::ROUTES,
            results::ROUTES,
            reviews::ROUTES,
            outcomes::ROUTES,
            scenarios::ROUTES,
            deciders::ROUTES,
            notify::ROUTES,
            session::ACCOUNT_ROUTES,
        ]
        .concat()
    });
    &ALL
}

/// The published API contract (`docs/api.openapi.json`) as written from
/// the route table, the endpoint declarations, the API types and the
/// shared words; or every reason it cannot be.
pub fn openapi_text() -> Result<String, Vec<String>> {
    openapi::text(routes())
}

/// The application: every route of [`routes`] behind its access check,
/// metrics, authentication, and a JSON 404 for the rest.
pub fn app(state: AppState) -> Router {
    let mut router: Router<AppState> = Router::new();
    for spec in routes() {
        let handler = (spec.handler)()
            .route_layer(middleware::from_fn_with_state(spec.access, auth::require));
        // Same path, several methods: axum merges method routers.
        router = router.route(spec.path, handler);
    }
    router
        .route_layer(middleware::from_fn_with_state(state.clone(), track))
        // Web pages and static files; JSON `not_found` under /api/.
        .fallback_service(crate::web::pages(&state.config.site))
        .method_not_allowed_fallback(method_not_allowed)
        .layer(middleware::from_fn_with_state(
            state.gate(),
            auth::authenticate,
        ))
        // One INFO line per request (method, path, status, latency). Headers
        // are never recorded: they carry tokens and cookies; nor query
        // values: a link may carry one (`?token=`), so only their names are.
        .layer(
            tower_http::trace::TraceLayer::new_for_http()
                .make_span_with(|req: &Request| {
                    tracing::info_span!(
                        "request",
                        method = %req.method(),
                        uri = %crate::web::redacted_uri(req.uri()),
                        version = ?req.version(),
                    )
                })
                .on_response(
                    tower_http::trace::DefaultOnResponse::new().level(tracing::Level::INFO),
                ),
        )
        .with_state(state)
}

async fn method_not_allowed(req: Request) -> Response {
    let mut r = ApiError::BadRequest {
        message: format!(
            "{} is not allowed on {}; docs/api.openapi.json lists the methods of every route",
            req.method(),
            req.uri().path()
        ),
        details: Value::Null,
    }
    .into_response();
    *r.status_mut() = StatusCode::METHOD_NOT_ALLOWED;
    r
}

/// Count and time every routed request by its route template.
async fn track(State(state): State<AppState>, req: Request, next: Next) -> Response {
    let route = req
        .extensions()
        .get::<MatchedPath>()
        .map(|p| p.as_str().to_string())
        .unwrap_or_else(|| "unmatched".into());
    let method = req.method().to_string();
    let start = Instant::now();
    let resp = next.run(req).await;
    state.metrics.request(
        &route,
        &method,
        resp.status().as_u16(),
        start.elapsed().as_secs_f64(),
    );
    resp
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_route_builds_and_no_route_is_listed_twice() {
        let mut seen = std::collections::BTreeSet::new();
        for spec in routes() {
            let _ = (spec.handler)();
            assert!(
                seen.insert((spec.method.to_string(), spec.path)),
                "{} {} twice",
                spec.method,
                spec.path
            );
        }
        assert_eq!(routes().len(), 60);
    }

    #[test]
    fn every_declared_endpoint_is_routed_once() {
        let routed: Vec<&str> = routes().iter().map(|r| r.operation_id).collect();
        let declared: Vec<&str> = berth_api::endpoint::all().map(|e| e.operation_id).collect();
        let mut a = routed.clone();
        let mut b = declared.clone();
        a.sort_unstable();
        b.sort_unstable();
        assert_eq!(a, b, "routed {routed:?}\ndeclared {declared:?}");
    }
}
