//! Review memory's pure half: the stable identity of a recommendation,
//! what a decision about it rests on, and whether that decision still
//! holds at a later evaluation.
//!
//! An operator marks a recommendation *planned*, *dismissed* or
//! *snoozed*. The server stores the decision with its [`Basis`] — every
//! deciding fact's value and class at the time, and the exact thresholds
//! at which the engine's verdict on the move flips (`why.rs`). At every
//! later evaluation [`standing`] compares the recommendation's deciding
//! facts now with that basis: a dismissed or snoozed recommendation stays
//! hidden until the snooze date passes, its own condition is met, or a
//! fact it rested on changed class, stopped deciding, or crossed one of
//! its recorded thresholds — and then it comes back with the reasons, in
//! words. New observations that move a value without crossing anything
//! keep it hidden: the operator judged this situation, and it has not
//! changed in any way the engine counts. `docs/reviews.md` has the rules.

use serde::{Deserialize, Serialize};

use crate::advise::Move;
use crate::estate::format_time;
use crate::fact::{Class, FactRef};
use crate::why::MoveWhy;

/// The stable identity of a recommendation: the service and its from → to
/// clusters, written `service|from|to`; for a compound step, every
/// member's triple sorted and joined with `+`. `|` and `+` are never part
/// of an id ([`crate::chars::ID_PUNCTUATION`]), so an identity reads back
/// unambiguously, and it does not depend on the step number, the gain or
/// anything else that changes while the advice means the same move.
pub fn identity(moves: &[Move], index: usize) -> String {
    let m = &moves[index];
    match &m.group {
        None => identity_of([(m.service.as_str(), m.from.as_str(), m.to.as_str())]),
        Some(g) => identity_of(
            moves
                .iter()
                .filter(|o| g.steps.contains(&o.step))
                .map(|o| (o.service.as_str(), o.from.as_str(), o.to.as_str())),
        ),
    }
}

/// [`identity`] from the `(service, from, to)` of a recommendation's
/// members (one for a single move), for callers that hold moves read back
/// from stored advice rather than [`Move`] values (`history.rs`).
pub fn identity_of<'a>(members: impl IntoIterator<Item = (&'a str, &'a str, &'a str)>) -> String {
    let mut triples: Vec<String> = members
        .into_iter()
        .map(|(service, from, to)| format!("{service}|{from}|{to}"))
        .collect();
    triples.sort();
    triples.join("+")
}

/// The deciding facts of the recommendation at `index`, sorted by key: the
/// move's own, or for a compound step every member's (one entry per key).
pub fn current_facts(moves: &[Move], index: usize) -> Vec<FactRef> {
    let m = &moves[index];
    let mut facts: Vec<FactRef> = match &m.group {
        None => m.facts.clone(),
        Some(g) => moves
            .iter()
            .filter(|o| g.steps.contains(&o.step))
            .flat_map(|o| o.facts.iter().cloned())
            .collect(),
    };
    facts.sort_by(|a, b| a.fact.cmp(&b.fact));
    facts.dedup_by(|a, b| a.fact == b.fact);
    facts
}

/// What an operator decided.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum Kind {
    /// Someone will act on it (optionally with a link to the change):
    /// shown, marked planned.
    Planned,
    /// Judged not to apply (with a reason): hidden until its basis changes.
    Dismissed,
    /// Not now: hidden until a date, a condition, or its basis changes.
    Snoozed,
}

impl Kind {
    pub fn as_str(self) -> &'static str {
        match self {
            Kind::Planned => "planned",
            Kind::Dismissed => "dismissed",
            Kind::Snoozed => "snoozed",
        }
    }

    pub fn parse(s: &str) -> Option<Kind> {
        [Kind::Planned, Kind::Dismissed, Kind::Snoozed]
            .into_iter()
            .find(|k| k.as_str() == s)
    }
}

/// One deciding fact as it was when the decision was taken, with the
/// nearest values at which the engine's verdict on the move flipped.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct BasisFact {
    pub fact: String,
    pub value: Option<f64>,
    /// The class as stored (`FactRef::stored_class`), not after staleness:
    /// a measurement that merely ages is the same evidence, and bringing
    /// every dismissal back as its facts age between two reports would be
    /// the noise review memory exists to stop.
    pub class: Class,
    /// `ms`, `MB/s`, `cpu`, … as the Why names it; empty when unknown.
    pub unit: String,
    /// Below this value the verdict flipped (exact, from the Why).
    pub below: Option<f64>,
    /// Above this value the verdict flipped.
    pub above: Option<f64>,
}

/// Everything a decision rests on, sorted by fact key.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Basis {
    pub facts: Vec<BasisFact>,
}

/// The basis of a move's decision from its Why: every deciding fact with
/// the thresholds the engine computed for it. A compound step's basis is
/// the group's facts with the group's thresholds (flow weights and MB/s;
/// the group analysis does not vary its other facts, which then carry no
/// threshold and count only through their class).
pub fn basis(why: &MoveWhy) -> Basis {
    let mut facts: Vec<BasisFact> = match &why.group {
        None => why
            .facts
            .iter()
            .zip(&why.flips)
            .map(|(f, flip)| BasisFact {
                fact: f.fact.clone(),
                value: f.value,
                class: f.stored_class,
                unit: flip.unit.to_string(),
                below: flip.below.as_ref().map(|t| t.value),
                above: flip.above.as_ref().map(|t| t.value),
            })
            .collect(),
        Some(g) => g
            .facts
            .iter()
            .map(|f| {
                let flip = g.flips.iter().find(|x| x.fact == f.fact);
                BasisFact {
                    fact: f.fact.clone(),
                    value: f.value,
                    class: f.stored_class,
                    unit: flip.map(|x| x.unit.to_string()).unwrap_or_default(),
                    below: flip.and_then(|x| x.below),
                    above: flip.and_then(|x| x.above),
                }
            })
            .collect(),
    };
    facts.sort_by(|a, b| a.fact.cmp(&b.fact));
    facts.dedup_by(|a, b| a.fact == b.fact);
    Basis { facts }
}

/// Which way a condition looks.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum Side {
    Below,
    Above,
}

/// "Ask again when `fact` is below (above) `value`", optionally only once
/// it is measured.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Condition {
    pub fact: String,
    pub side: Side,
    pub value: f64,
    /// Met only by a measured value, not by an estimate that crosses.
    #[serde(default)]
    pub measured: bool,
}

/// The condition a snooze asks for, checked against the basis: the fact
/// must be one of the move's deciding facts; without a value, the side's
/// exact flip threshold is used (the engine's own "the verdict changes
/// here"), and it is an error when the Why computed none on that side.
pub fn condition(
    basis: &Basis,
    fact: &str,
    side: Side,
    value: Option<f64>,
    measured: bool,
) -> Result<Condition, String> {
    let Some(b) = basis.facts.iter().find(|b| b.fact == fact) else {
        let known: Vec<&str> = basis.facts.iter().map(|b| b.fact.as_str()).collect();
        return Err(format!(
            "{fact:?} is not a deciding fact of this recommendation; its deciding facts are: {}",
            known.join(", ")
        ));
    };
    let value = match value {
        Some(v) if v.is_finite() => v,
        Some(v) => return Err(format!("condition value {v} is not a finite number")),
        None => match side {
            Side::Below => b.below,
            Side::Above => b.above,
        }
        .ok_or_else(|| {
            format!(
                "the Why computed no flip threshold {} the current value of {fact:?}; give a value",
                match side {
                    Side::Below => "below",
                    Side::Above => "above",
                }
            )
        })?,
    };
    Ok(Condition {
        fact: fact.to_string(),
        side,
        value,
        measured,
    })
}

/// A stored decision as the engine needs it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Decision {
    pub kind: Kind,
    /// Snoozed until this time (unix seconds).
    pub until: Option<i64>,
    pub condition: Option<Condition>,
    pub basis: Basis,
}

/// Where a decided recommendation stands at an evaluation.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum State {
    /// Planned: shown, marked as such.
    Planned,
    /// Dismissed or snoozed, and nothing it rested on has changed.
    Hidden,
    /// Dismissed or snoozed, but back: see the reasons.
    Back,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Standing {
    pub state: State,
    /// Why it is back, one sentence each, in order: the snooze date, the
    /// condition, then the basis facts by key. Empty unless `Back`.
    pub reasons: Vec<String>,
}

/// Whether `decision` still holds for a recommendation whose deciding
/// facts are now `current` (sorted by key, [`current_facts`]), at `now`.
pub fn standing(decision: &Decision, current: &[FactRef], now: i64) -> Standing {
    if decision.kind == Kind::Planned {
        return Standing {
            state: State::Planned,
            reasons: Vec::new(),
        };
    }
    let find = |key: &str| current.iter().find(|f| f.fact == key);
    let mut reasons = Vec::new();
    if let Some(until) = decision.until {
        if now >= until {
            reasons.push(format!(
                "Snoozed until {}, which has passed.",
                format_time(until)
            ));
        }
    }
    if let Some(c) = &decision.condition {
        let unit = decision
            .basis
            .facts
            .iter()
            .find(|b| b.fact == c.fact)
            .map(|b| b.unit.as_str())
            .unwrap_or("");
        if let Some(f) = find(&c.fact) {
            let crossed = match (f.value, c.side) {
                (Some(v), Side::Below) => v < c.value,
                (Some(v), Side::Above) => v > c.value,
                (None, _) => false,
            };
            if crossed && (!c.measured || f.class == Class::Measured) {
                reasons.push(format!(
                    "Asked to be told when {} is {}{} {}: it is now {} ({}).",
                    c.fact,
                    if c.measured { "measured " } else { "" },
                    match c.side {
                        Side::Below => "below",
                        Side::Above => "above",
                    },
                    with_unit(c.value, unit),
                    with_unit(f.value.unwrap_or(0.0), unit),
                    f.class.as_str()
                ));
            }
        }
    }
    for b in &decision.basis.facts {
        let Some(f) = find(&b.fact) else {
            reasons.push(format!(
                "{} no longer decides this recommendation (it was {} when decided).",
                b.fact,
                value_words(b.value, &b.unit)
            ));
            continue;
        };
        if f.stored_class != b.class {
            reasons.push(format!(
                "{} was {} when decided and is now {} ({}).",
                b.fact,
                b.class.as_str(),
                f.stored_class.as_str(),
                value_words(f.value, &b.unit)
            ));
            continue;
        }
        match (b.value, f.value) {
            (None, Some(_)) | (Some(_), None) => reasons.push(format!(
                "{} was {} when decided and is now {}.",
                b.fact,
                value_words(b.value, &b.unit),
                value_words(f.value, &b.unit)
            )),
            (Some(old), Some(new)) => {
                let past = match (b.below, b.above) {
                    (Some(t), _) if new < t => Some(t),
                    (_, Some(t)) if new > t => Some(t),
                    _ => None,
                };
                if let Some(t) = past {
                    reasons.push(format!(
                        "{} was {} when decided and is now {}: past {}, where the verdict on this move flips.",
                        b.fact,
                        with_unit(old, &b.unit),
                        with_unit(new, &b.unit),
                        with_unit(t, &b.unit)
                    ));
                }
            }
            (None, None) => {}
        }
    }
    Standing {
        state: if reasons.is_empty() {
            State::Hidden
        } else {
            State::Back
        },
        reasons,
    }
}

fn value_words(v: Option<f64>, unit: &str) -> String {
    match v {
        Some(v) => with_unit(v, unit),
        None => "unknown".to_string(),
    }
}

/// A value for words: up to 2 decimals, no trailing zeros, then the unit.
fn with_unit(v: f64, unit: &str) -> String {
    let s = format!("{:.2}", libm::round(v * 100.0) / 100.0);
    let s = s.trim_end_matches('0').trim_end_matches('.');
    if unit.is_empty() {
        s.to_string()
    } else {
        format!("{s} {unit}")
    }
}

/// Longest reason or link kept, in characters: a sentence or a ticket
/// URL, not a document (the audit keeps every one of them).
pub const MAX_TEXT_CHARS: usize = 2_000;

/// A decision as typed, before the server looks at the advice: the
/// checks that need nothing but the form, shared by the server (which
/// refuses) and the browser (which says so at the field while it is
/// typed, in the same words).
#[derive(Clone, Debug, Default)]
pub struct DecisionInput<'a> {
    pub decision: &'a str,
    pub reason: &'a str,
    pub link: &'a str,
    /// Whether an until time was given (its syntax and whether it lies
    /// after the evaluation time are the caller's: it holds the clock).
    pub has_until: bool,
    pub has_condition: bool,
}

/// Every problem of a typed decision as (JSON pointer of the field,
/// words for the person who typed it). Empty when the form is fine.
pub fn decision_problems(d: &DecisionInput) -> Vec<(&'static str, String)> {
    let mut out: Vec<(&'static str, String)> = Vec::new();
    let kind = Kind::parse(d.decision);
    if kind.is_none() {
        out.push((
            "/decision",
            format!(
                "unknown decision {:?}; expected planned, dismissed or snoozed",
                d.decision
            ),
        ));
    }
    let reason = d.reason.trim();
    if kind == Some(Kind::Dismissed) && reason.is_empty() {
        out.push((
            "/reason",
            "a dismissal needs a reason: it is what the next person reads".into(),
        ));
    }
    let reason_chars = reason.chars().count();
    if reason_chars > MAX_TEXT_CHARS {
        out.push((
            "/reason",
            format!("{reason_chars} characters; at most {MAX_TEXT_CHARS} are kept"),
        ));
    } else if let Some(p) = crate::chars::name_problem(reason) {
        out.push(("/reason", p));
    }
    let link = d.link.trim();
    if !link.is_empty() && !link_looks_like_a_url(link) {
        out.push((
            "/link",
            format!("{link:?} is not an http(s) URL of at most {MAX_TEXT_CHARS} characters"),
        ));
    }
    if kind == Some(Kind::Snoozed) && !d.has_until && !d.has_condition {
        out.push((
            "/until",
            "a snooze needs an until time, a condition, or both".into(),
        ));
    }
    if kind.is_some() && kind != Some(Kind::Snoozed) && (d.has_until || d.has_condition) {
        out.push((
            "/decision",
            "until and condition belong to a snooze only".into(),
        ));
    }
    out
}

/// An http(s) address with a host, no spaces or control characters, not
/// longer than [`MAX_TEXT_CHARS`]. (The server parses it fully as well;
/// this is the part a form can say while it is typed.)
fn link_looks_like_a_url(link: &str) -> bool {
    let rest = link
        .strip_prefix("https://")
        .or_else(|| link.strip_prefix("http://"));
    let Some(rest) = rest else {
        return false;
    };
    let host = rest.split(['/', '?', '#']).next().unwrap_or("");
    link.chars().count() <= MAX_TEXT_CHARS
        && !host.is_empty()
        && !link.chars().any(|c| c.is_whitespace() || c.is_control())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fact(key: &str, value: Option<f64>, class: Class) -> FactRef {
        FactRef {
            fact: key.to_string(),
            value,
            class,
            stored_class: class,
            source: "test".to_string(),
            age_s: 0,
            derivation: None,
        }
    }

    fn rtt_basis() -> Basis {
        Basis {
            facts: vec![
                BasisFact {
                    fact: "flow a→b weight".into(),
                    value: Some(120.0),
                    class: Class::Measured,
                    unit: "req/s".into(),
                    below: Some(55.0),
                    above: None,
                },
                BasisFact {
                    fact: "rtt c1↔c2".into(),
                    value: Some(20.0),
                    class: Class::Inferred,
                    unit: "ms".into(),
                    below: Some(14.2),
                    above: Some(80.0),
                },
            ],
        }
    }

    fn dismissed() -> Decision {
        Decision {
            kind: Kind::Dismissed,
            until: None,
            condition: None,
            basis: rtt_basis(),
        }
    }

    #[test]
    fn a_value_that_moves_without_crossing_keeps_it_hidden() {
        let now = [
            fact("flow a→b weight", Some(90.0), Class::Measured),
            fact("rtt c1↔c2", Some(30.0), Class::Inferred),
        ];
        let s = standing(&dismissed(), &now, 0);
        assert_eq!(s.state, State::Hidden, "{:?}", s.reasons);
    }

    #[test]
    fn ageing_alone_keeps_it_hidden() {
        let mut weight = fact("flow a→b weight", Some(120.0), Class::Measured);
        weight.class = Class::Reported;
        let now = [weight, fact("rtt c1↔c2", Some(20.0), Class::Inferred)];
        assert_eq!(standing(&dismissed(), &now, 0).state, State::Hidden);
    }

    #[test]
    fn crossing_a_recorded_threshold_brings_it_back_saying_where() {
        let now = [
            fact("flow a→b weight", Some(40.0), Class::Measured),
            fact("rtt c1↔c2", Some(20.0), Class::Inferred),
        ];
        let s = standing(&dismissed(), &now, 0);
        assert_eq!(s.state, State::Back);
        assert_eq!(
            s.reasons,
            ["flow a→b weight was 120 req/s when decided and is now 40 req/s: past 55 req/s, where the verdict on this move flips."]
        );
    }

    #[test]
    fn a_class_change_or_a_lost_fact_brings_it_back() {
        let now = [fact("rtt c1↔c2", Some(21.5), Class::Measured)];
        let s = standing(&dismissed(), &now, 0);
        assert_eq!(s.state, State::Back);
        assert_eq!(
            s.reasons,
            [
                "flow a→b weight no longer decides this recommendation (it was 120 req/s when decided).",
                "rtt c1↔c2 was inferred when decided and is now measured (21.5 ms)."
            ]
        );
    }

    #[test]
    fn a_snooze_ends_at_its_date_and_at_its_condition() {
        let basis = rtt_basis();
        let c = condition(&basis, "rtt c1↔c2", Side::Below, None, false).unwrap();
        assert_eq!(c.value, 14.2, "defaults to the exact flip threshold");
        let d = Decision {
            kind: Kind::Snoozed,
            until: Some(1_000),
            condition: Some(Condition { value: 18.0, ..c }),
            basis,
        };
        let same = [
            fact("flow a→b weight", Some(120.0), Class::Measured),
            fact("rtt c1↔c2", Some(20.0), Class::Inferred),
        ];
        assert_eq!(standing(&d, &same, 999).state, State::Hidden);
        let s = standing(&d, &same, 1_000);
        assert_eq!(
            s.reasons,
            ["Snoozed until 1970-01-01T00:16:40Z, which has passed."]
        );
        let lower = [
            fact("flow a→b weight", Some(120.0), Class::Measured),
            fact("rtt c1↔c2", Some(17.5), Class::Inferred),
        ];
        let s = standing(&d, &lower, 0);
        assert_eq!(
            s.reasons,
            ["Asked to be told when rtt c1↔c2 is below 18 ms: it is now 17.5 ms (inferred)."]
        );
    }

    #[test]
    fn a_measured_condition_ignores_estimates() {
        let basis = rtt_basis();
        let d = Decision {
            kind: Kind::Snoozed,
            until: None,
            condition: Some(condition(&basis, "rtt c1↔c2", Side::Above, Some(25.0), true).unwrap()),
            basis,
        };
        let estimated = [
            fact("flow a→b weight", Some(120.0), Class::Measured),
            fact("rtt c1↔c2", Some(26.0), Class::Inferred),
        ];
        assert_eq!(standing(&d, &estimated, 0).state, State::Hidden);
    }

    #[test]
    fn conditions_name_what_is_wrong() {
        let basis = rtt_basis();
        let e = condition(&basis, "rtt x↔y", Side::Below, None, false).unwrap_err();
        assert!(
            e.contains("not a deciding fact") && e.contains("rtt c1↔c2"),
            "{e}"
        );
        let e = condition(&basis, "flow a→b weight", Side::Above, None, false).unwrap_err();
        assert!(e.contains("no flip threshold above"), "{e}");
    }

    #[test]
    fn planned_is_shown() {
        let d = Decision {
            kind: Kind::Planned,
            ..dismissed()
        };
        assert_eq!(standing(&d, &[], 0).state, State::Planned);
    }

    #[test]
    fn a_typed_decision_is_checked_in_the_servers_words() {
        let ok = DecisionInput {
            decision: "dismissed",
            reason: "owned by another team",
            ..Default::default()
        };
        assert!(decision_problems(&ok).is_empty());
        let no_reason = DecisionInput {
            decision: "dismissed",
            reason: "  ",
            ..Default::default()
        };
        assert_eq!(
            decision_problems(&no_reason),
            vec![(
                "/reason",
                "a dismissal needs a reason: it is what the next person reads".to_string()
            )]
        );
        let snooze = DecisionInput {
            decision: "snoozed",
            link: "ftp://x",
            ..Default::default()
        };
        let paths: Vec<&str> = decision_problems(&snooze).iter().map(|p| p.0).collect();
        assert_eq!(paths, ["/link", "/until"]);
        let planned_until = DecisionInput {
            decision: "planned",
            link: "https://tickets.example/OPS-1",
            has_until: true,
            ..Default::default()
        };
        assert_eq!(decision_problems(&planned_until)[0].0, "/decision");
        assert!(!link_looks_like_a_url("https:///path"));
        assert!(!link_looks_like_a_url("https://a b"));
        let hidden = DecisionInput {
            decision: "planned",
            reason: "ok\u{202e}",
            ..Default::default()
        };
        assert_eq!(decision_problems(&hidden)[0].0, "/reason");
    }
}
