//! The decider interface: what a decider is given (the schema-1
//! [`DeciderRequest`]) and what it answers (proposals, and a note). Kept
//! apart from scoring ([`crate::decider`]) so the deciders that search —
//! [`crate::optimum`] — implement it without importing the scorer that
//! runs them.

use serde::{Deserialize, Serialize};

use crate::request::DeciderRequest;

/// One proposed move, as a decider sends it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Proposal {
    #[serde(rename = "serviceId")]
    pub service_id: String,
    /// Destination cluster id.
    pub to: String,
    /// Why, in the decider's words (may be empty).
    #[serde(default)]
    pub reason: String,
}

/// Anything that proposes moves. Pure: the same request gives the same
/// proposals, in the same order (the order is the order they are applied).
pub trait Decider {
    /// Stable name, shown in the comparison.
    fn name(&self) -> &str;
    fn decide(&self, request: &DeciderRequest) -> Vec<Proposal>;
    /// The proposals and, for a decider that has something to say about
    /// the run as a whole (what it proved, why it did not run), a note
    /// shown with its entry. Defaults to [`Decider::decide`] without one.
    fn decide_noted(&self, request: &DeciderRequest) -> Decision {
        Decision {
            proposals: self.decide(request),
            note: None,
        }
    }
}

/// What [`Decider::decide_noted`] returns.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Decision {
    pub proposals: Vec<Proposal>,
    pub note: Option<String>,
}
