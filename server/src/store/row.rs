//! Column types for what the database stores in another form than the
//! row carries: read by the `FromRow` derives with
//! `#[sqlx(try_from = "…")]`, so no row is mapped column by column.

use crate::role::Role;

/// An estate without its document (cheap to read on every request). It
/// leaves the API as `berth_api::EstateMeta` (times as RFC 3339).
#[derive(Clone, Debug, sqlx::FromRow)]
pub struct EstateMeta {
    pub id: String,
    pub name: String,
    pub version: i64,
    pub content_digest: String,
    pub policy_digest: String,
    pub created_at: i64,
    pub updated_at: i64,
}

/// The columns of [`EstateMeta`].
pub(super) const META_COLUMNS: &str =
    "id, name, version, content_digest, policy_digest, created_at, updated_at";

/// A 0/1 INTEGER column (neither backend's boolean: SQLite has none) as
/// a `bool`.
#[derive(sqlx::Type)]
#[sqlx(transparent)]
pub(super) struct Flag(i64);

impl From<Flag> for bool {
    fn from(f: Flag) -> bool {
        f.0 != 0
    }
}

/// JSON text, read leniently: unreadable text is `null`.
#[derive(sqlx::Type)]
#[sqlx(transparent)]
pub(super) struct JsonText(String);

impl From<JsonText> for serde_json::Value {
    fn from(t: JsonText) -> serde_json::Value {
        serde_json::from_str(&t.0).unwrap_or(serde_json::Value::Null)
    }
}

/// Nullable JSON text: NULL is `None`, unreadable text `Some(null)`.
#[derive(sqlx::Type)]
#[sqlx(transparent)]
pub(super) struct OptJsonText(Option<String>);

impl From<OptJsonText> for Option<serde_json::Value> {
    fn from(t: OptJsonText) -> Option<serde_json::Value> {
        t.0.map(|t| serde_json::Value::from(JsonText(t)))
    }
}

/// A role's name; an unknown one reads as the least, `viewer`.
#[derive(sqlx::Type)]
#[sqlx(transparent)]
pub(super) struct RoleName(String);

impl From<RoleName> for Role {
    fn from(r: RoleName) -> Role {
        Role::parse(&r.0).unwrap_or(Role::Viewer)
    }
}

/// A token's stored cluster list (a JSON array of ids, or NULL for a
/// token that is not an agent's): unreadable text scopes it to nothing
/// rather than to everything.
#[derive(sqlx::Type)]
#[sqlx(transparent)]
pub(super) struct ClusterList(Option<String>);

impl From<ClusterList> for Option<Vec<String>> {
    fn from(c: ClusterList) -> Option<Vec<String>> {
        c.0.map(|t| {
            let mut c = serde_json::from_str::<Vec<String>>(&t).unwrap_or_default();
            c.sort();
            c.dedup();
            c
        })
    }
}
