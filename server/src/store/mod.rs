//! Every SQL statement of the server, with its row types. Handlers never
//! write SQL; the engine never sees a row.
//!
//! Writes that touch several rows, or that read before they write, run in
//! one transaction under [`Db::write_guard`](crate::db::Db::write_guard). A change computed from the
//! estate's current document (a fact batch) holds the estate row from its
//! read to its write ([`lock_estate`]), so replicas changing one estate at
//! once are serialised and neither change is lost. An import, which does
//! not depend on what was there, replaces the document with a version
//! check (`WHERE version = $old`) that keeps the bump exact.
//!
//! Every transaction is a [`Tx`](crate::db::Tx) from [`Db::begin`](crate::db::Db::begin), never sqlx's own: it
//! ends committed or rolled back, and a connection whose commit or
//! rollback failed is closed rather than reused, so a write that failed
//! (a full disk) leaves no transaction open behind it (issue 37).
//!
//! One module per resource; every row is read by `sqlx::FromRow` derive
//! (columns the database stores in another form than the row carries —
//! 0/1 flags, JSON text, role names — go through the types of [`row`]).

mod access;
mod applied;
mod audit;
mod deciders;
mod driver;
mod estates;
mod health;
mod lock;
mod notify;
mod registry;
mod reviews;
mod row;
mod scenarios;
mod snapshots;

pub use access::*;
pub use applied::*;
pub use audit::*;
pub use deciders::*;
pub use driver::*;
pub use estates::*;
pub use health::*;
pub use lock::*;
pub use notify::*;
pub use reviews::*;
pub use scenarios::*;
pub use snapshots::*;

/// What can go wrong in the store. The HTTP edge turns it into an
/// `ApiError` (`impl From<StoreError> for ApiError` in `error.rs`): a
/// database failure becomes 503 or 500 (or 409 for a constraint the
/// caller hit), a conflict 409 with its message.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// The database failed, or refused a statement.
    #[error(transparent)]
    Database(#[from] sqlx::Error),
    /// The change conflicts with a row that exists (a name taken); the
    /// message says which and what to do instead.
    #[error("{0}")]
    Conflict(String),
}

pub type StoreResult<T> = Result<T, StoreError>;

/// Times leave the API as RFC 3339, like every time in Berth's formats.
fn rfc3339<S: serde::Serializer>(t: &i64, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(&berth_engine::estate::format_time(*t))
}

fn rfc3339_opt<S: serde::Serializer>(t: &Option<i64>, s: S) -> Result<S::Ok, S::Error> {
    match t {
        Some(t) => rfc3339(t, s),
        None => s.serialize_none(),
    }
}
