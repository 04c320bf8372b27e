//! Roles: who a principal is to the server. A leaf, so the store can
//! read and write roles without depending on [`crate::auth`], which
//! re-exports [`Role`]. The type itself is the API's (`berth-api`): the
//! web app and the CLI read the same one.

pub use berth_api::Role;
