//! Roles: who a principal is to the server. A leaf, so the store can
//! read and write roles without depending on [`crate::auth`], which
//! re-exports [`Role`].

use serde::{Deserialize, Serialize};

/// Roles, weakest first: from viewer on, each includes the rights of
/// those before it. `Agent` is apart: a measuring agent's token may post
/// observations to its one estate and do nothing else, not even read
/// (an agent runs inside a cluster; its token should be worth little to
/// whoever steals it).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Role {
    Agent,
    Viewer,
    Operator,
    Admin,
}

impl Role {
    pub fn as_str(self) -> &'static str {
        match self {
            Role::Agent => "agent",
            Role::Viewer => "viewer",
            Role::Operator => "operator",
            Role::Admin => "admin",
        }
    }
    pub fn parse(s: &str) -> Option<Role> {
        match s {
            "agent" => Some(Role::Agent),
            "viewer" => Some(Role::Viewer),
            "operator" => Some(Role::Operator),
            "admin" => Some(Role::Admin),
            _ => None,
        }
    }
}
