//! Who is calling: roles, sessions, the caller.

use serde::{Deserialize, Serialize};

#[cfg(feature = "schema")]
use crate::{Nullable, Timestamp};
#[cfg(feature = "schema")]
use schemars::JsonSchema;

/// `viewer` < `operator` < `admin`, each with the rights of those before
/// it; `agent` is apart (a measuring agent's token, granted no signed-in
/// route of this API but posting observations to its one estate).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum Role {
    Agent,
    Viewer,
    Operator,
    Admin,
}

impl Role {
    pub const ALL: [Role; 4] = [Role::Agent, Role::Viewer, Role::Operator, Role::Admin];

    pub fn as_str(self) -> &'static str {
        match self {
            Role::Agent => "agent",
            Role::Viewer => "viewer",
            Role::Operator => "operator",
            Role::Admin => "admin",
        }
    }

    pub fn parse(s: &str) -> Option<Role> {
        Role::ALL.into_iter().find(|r| r.as_str() == s)
    }

    /// Operators and administrators change estates; viewers only look.
    pub fn may_operate(self) -> bool {
        self >= Role::Operator
    }

    pub fn is_admin(self) -> bool {
        self == Role::Admin
    }
}

impl std::fmt::Display for Role {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// `POST /api/session`'s answer: the session just started.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
pub struct Session {
    /// The user name, or `token:<id>` for a session started with a token.
    pub subject: String,
    pub role: Role,
    /// The estate a token-started session is scoped to; `null` when not
    /// scoped.
    #[cfg_attr(feature = "schema", schemars(with = "Nullable<String>"))]
    pub estate: Option<String>,
    /// Send as `X-CSRF-Token` on every state-changing request made with
    /// the cookie.
    pub csrf_token: String,
    #[cfg_attr(feature = "schema", schemars(with = "Timestamp"))]
    pub expires_at: String,
}

/// `GET /api/session`'s answer: who is calling.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
pub struct Caller {
    /// The user name, or `token:<id>` for a token (or a session started
    /// with one).
    pub subject: String,
    pub role: Role,
    /// The one estate the caller is scoped to; `null` when not scoped.
    #[cfg_attr(feature = "schema", schemars(with = "Nullable<String>"))]
    pub estate: Option<String>,
    /// The session's CSRF token; `null` for a bearer token.
    #[cfg_attr(feature = "schema", schemars(with = "Nullable<String>"))]
    pub csrf_token: Option<String>,
}

/// Register this module's published schemas (`server/src/http/openapi.rs`).
#[cfg(feature = "schema")]
pub(crate) fn schemas(generator: &mut schemars::SchemaGenerator) {
    let _ = generator.subschema_for::<Role>();
    let _ = generator.subschema_for::<Session>();
    let _ = generator.subschema_for::<Caller>();
}
