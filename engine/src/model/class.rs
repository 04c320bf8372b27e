//! The confidence class of a fact (SPEC §2), on its own so that both the
//! facts ([`crate::fact`], which re-exports it) and the policy (a margin
//! per class) can name it without naming each other.

use serde::{Deserialize, Serialize};

/// How good the evidence behind a fact is, best first.
///
/// The order of the variants is the order of trust: `Measured < Guessed`
/// compares "better than". `weakest` picks the maximum.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum Class {
    Measured,
    Reported,
    Inferred,
    Guessed,
}

impl Class {
    pub const ALL: [Class; 4] = [
        Class::Measured,
        Class::Reported,
        Class::Inferred,
        Class::Guessed,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Class::Measured => "measured",
            Class::Reported => "reported",
            Class::Inferred => "inferred",
            Class::Guessed => "guessed",
        }
    }

    pub fn parse(s: &str) -> Option<Class> {
        Class::ALL.into_iter().find(|c| c.as_str() == s)
    }

    /// One class worse; `Guessed` stays `Guessed`.
    pub fn degraded(self) -> Class {
        match self {
            Class::Measured => Class::Reported,
            Class::Reported => Class::Inferred,
            Class::Inferred | Class::Guessed => Class::Guessed,
        }
    }
}
