//! One route: an endpoint as `berth-api` declares it
//! ([`berth_api::endpoint`]: operation id, method, path template, who may
//! call it, summary and contract) and the handler that answers it. The
//! [`route!`] macro builds a row from the endpoint's constant and the
//! handler, so the method and path the router serves are the ones every
//! client builds its paths from and the contract publishes.

use axum::http::Method;
use axum::routing::{MethodFilter, MethodRouter};
use berth_api::endpoint::{self, Endpoint};

use crate::auth::Access;
use crate::state::AppState;

/// One row of the route table.
#[derive(Clone)]
pub struct Route {
    /// The declaration: method, path, access, summary and contract.
    pub endpoint: &'static Endpoint,
    /// The OpenAPI `operationId`.
    pub operation_id: &'static str,
    pub method: Method,
    pub path: &'static str,
    pub access: Access,
    pub summary: &'static str,
    /// The handler, for this method only.
    pub handler: fn() -> MethodRouter<AppState>,
}

impl Route {
    /// The row of `endpoint`, answered by `handler`.
    pub const fn new(
        endpoint: &'static Endpoint,
        handler: fn() -> MethodRouter<AppState>,
    ) -> Route {
        Route {
            endpoint,
            operation_id: endpoint.operation_id,
            method: method(endpoint.method),
            path: endpoint.path,
            access: match endpoint.access {
                endpoint::Access::Public => Access::Public,
                endpoint::Access::Role(r) => Access::Role(r),
                endpoint::Access::Observe => Access::Observe,
            },
            summary: endpoint.summary,
            handler,
        }
    }
}

const fn method(m: endpoint::Method) -> Method {
    match m {
        endpoint::Method::GET => Method::GET,
        endpoint::Method::POST => Method::POST,
        endpoint::Method::PUT => Method::PUT,
        endpoint::Method::DELETE => Method::DELETE,
    }
}

/// The router's filter for a declared method.
pub fn filter(m: endpoint::Method) -> MethodFilter {
    match m {
        endpoint::Method::GET => MethodFilter::GET,
        endpoint::Method::POST => MethodFilter::POST,
        endpoint::Method::PUT => MethodFilter::PUT,
        endpoint::Method::DELETE => MethodFilter::DELETE,
    }
}

/// `route!(GET_ESTATE => handler)`: the [`Route`] of the endpoint
/// `berth_api::endpoint::GET_ESTATE`, answered by `handler`.
macro_rules! route {
    ($endpoint:ident => $handler:path) => {
        $crate::http::route::Route::new(&::berth_api::endpoint::$endpoint, || {
            ::axum::routing::on(
                $crate::http::route::filter(::berth_api::endpoint::$endpoint.method),
                $handler,
            )
        })
    };
}
pub(crate) use route;
