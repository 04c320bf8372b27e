//! One route as its module declares it: its operation id, method, path
//! template, who may call it, a one-line summary, and the handler. The [`route!`] macro
//! builds a row from one method name, so the method the table shows and
//! the method the handler answers cannot differ, and a row cannot lack
//! its handler.

use axum::http::Method;
use axum::routing::MethodRouter;

use crate::auth::{Access, Role};
use crate::state::AppState;

/// One row of the route table.
#[derive(Clone)]
pub struct Route {
    /// The OpenAPI `operationId`, and the key of the operation's words in
    /// its module's `*.openapi.yaml`.
    pub operation_id: &'static str,
    /// The declaring module (`berth::http::reviews`): where its words are.
    pub module: &'static str,
    pub method: Method,
    pub path: &'static str,
    pub access: Access,
    pub summary: &'static str,
    /// The handler, for this method only.
    pub handler: fn() -> MethodRouter<AppState>,
}

pub const PUBLIC: Access = Access::Public;
pub const VIEWER: Access = Access::Role(Role::Viewer);
pub const OPERATOR: Access = Access::Role(Role::Operator);
pub const ADMIN: Access = Access::Role(Role::Admin);

/// `route!(operationId: GET "/path", ACCESS, "summary" => handler)`: one
/// [`Route`].
macro_rules! route {
    ($op:ident : $method:ident $path:literal, $access:expr, $summary:literal => $handler:path) => {
        $crate::http::route::Route {
            operation_id: stringify!($op),
            module: module_path!(),
            method: ::axum::http::Method::$method,
            path: $path,
            access: $access,
            summary: $summary,
            handler: || ::axum::routing::on(::axum::routing::MethodFilter::$method, $handler),
        }
    };
}
pub(crate) use route;
