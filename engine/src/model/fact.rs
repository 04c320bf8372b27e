//! Facts: values a recommendation can rest on, each with a confidence class,
//! a source and an observation time (SPEC §2).
//!
//! A stored fact never changes because it got old. Its *effective* class is
//! computed at evaluation time from its age (`now` is an input; the engine
//! has no clock), which is what every verdict uses.

use serde::{Deserialize, Serialize};

use crate::json_shape::Word;

pub use crate::class::Class;
use crate::policy::Policy;

/// A stored fact. `value == None` means *unknown*: never a hidden zero.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Fact {
    pub value: Option<f64>,
    pub class: Class,
    pub source: String,
    /// Unix seconds. `None`: observed "now" (a file without `observed_at`).
    pub observed_at: Option<i64>,
}

impl Fact {
    pub fn unknown(source: &str) -> Fact {
        Fact {
            value: None,
            class: Class::Guessed,
            source: source.to_string(),
            observed_at: None,
        }
    }

    /// Age in seconds at `now`; a fact from the future (clock skew between
    /// agents) counts as fresh rather than negative.
    pub fn age_s(&self, now: i64) -> i64 {
        match self.observed_at {
            Some(t) => (now - t).max(0),
            None => 0,
        }
    }

    /// The class this fact has at `now`, after staleness degradation.
    ///
    /// Windows are cumulative from the observation: a measured fact becomes
    /// reported after `measured_s`, inferred after `measured_s + reported_s`,
    /// guessed after `measured_s + reported_s + inferred_s`. A fact that
    /// starts as `reported` uses only the windows from `reported` on.
    pub fn class_at(&self, now: i64, policy: &Policy) -> Class {
        if self.value.is_none() {
            return Class::Guessed;
        }
        let mut age = self.age_s(now);
        let mut class = self.class;
        loop {
            let window = match class {
                Class::Measured => policy.staleness.measured_s,
                Class::Reported => policy.staleness.reported_s,
                Class::Inferred => policy.staleness.inferred_s,
                Class::Guessed => return Class::Guessed,
            };
            if age < window {
                return class;
            }
            age -= window;
            class = class.degraded();
        }
    }
}

/// A fact as it appears in results: what it is about, its value, its
/// effective class, where it came from and how old it is.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct FactRef {
    /// Stable human key, e.g. `rtt c-fra-1↔c-par-1` or `flow cart→catalog weight`.
    pub fact: String,
    pub value: Option<f64>,
    /// Effective class at evaluation time (after staleness).
    pub class: Class,
    /// Class as stored, before staleness.
    pub stored_class: Class,
    pub source: String,
    pub age_s: i64,
    /// For an RTT: which rung of the evidence ladder produced it.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "derivation_word"
    )]
    pub derivation: Option<Word>,
}

/// The rungs of the RTT evidence ladder as results name them: the words
/// of `rtt::Derivation::as_str` (a test there holds the two together;
/// this module sits below `rtt` and cannot name the enum).
pub const DERIVATION_WORDS: [&str; 6] = [
    "same_cluster",
    "measured_path",
    "site_link",
    "same_site",
    "great_circle",
    "unknown",
];

/// An RTT's `derivation` read back from a result.
pub fn derivation_word<'de, D: serde::Deserializer<'de>>(
    d: D,
) -> Result<Option<&'static str>, D::Error> {
    crate::json_shape::known_word_opt(d, &DERIVATION_WORDS, "RTT derivation")
}

/// The weakest (worst) class in a set; `None` for an empty set.
pub fn weakest<I: IntoIterator<Item = Class>>(classes: I) -> Option<Class> {
    classes.into_iter().max()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fact(class: Class, observed_at: i64) -> Fact {
        Fact {
            value: Some(1.0),
            class,
            source: "test".into(),
            observed_at: Some(observed_at),
        }
    }

    #[test]
    fn staleness_is_cumulative_and_computed_at_evaluation() {
        let p = Policy::default();
        let m = fact(Class::Measured, 0);
        assert_eq!(m.class_at(0, &p), Class::Measured);
        assert_eq!(m.class_at(899, &p), Class::Measured);
        assert_eq!(m.class_at(900, &p), Class::Reported);
        assert_eq!(m.class_at(900 + 86_399, &p), Class::Reported);
        assert_eq!(m.class_at(900 + 86_400, &p), Class::Inferred);
        assert_eq!(m.class_at(900 + 86_400 + 604_800, &p), Class::Guessed);
        // The stored fact is untouched.
        assert_eq!(m.class, Class::Measured);
        let r = fact(Class::Reported, 0);
        assert_eq!(r.class_at(86_399, &p), Class::Reported);
        assert_eq!(r.class_at(86_400, &p), Class::Inferred);
    }

    #[test]
    fn unknown_is_guessed_and_future_is_fresh() {
        let p = Policy::default();
        assert_eq!(Fact::unknown("x").class_at(0, &p), Class::Guessed);
        let f = fact(Class::Measured, 1_000);
        assert_eq!(f.age_s(0), 0);
        assert_eq!(f.class_at(0, &p), Class::Measured);
    }
}
