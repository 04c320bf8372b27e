//! Review memory (`docs/reviews.md`): the decisions operators record about
//! recommendations, where each stands in the advice at an evaluation time,
//! and the estate's audit trail.
//!
//! Answers refuse unknown members only in their published schema: a
//! client built against these types keeps reading a newer server that
//! adds one.
//!
//! Members are declared, and so sent, in alphabetical order: these
//! answers were first written through `serde_json::Value`, whose objects
//! sort their members, and their bytes are kept (a test below holds the
//! types here to it). A new member goes in at its alphabetical place.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

#[cfg(feature = "schema")]
use crate::{Nullable, Timestamp};
#[cfg(feature = "schema")]
use schemars::JsonSchema;

/// What was decided about a recommendation.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum ReviewDecision {
    /// Someone will move it: shown, marked planned.
    Planned,
    /// Judged not to apply: hidden until what it rested on changes.
    Dismissed,
    /// Not now: hidden until a date, a condition, or a change of what it
    /// rested on.
    Snoozed,
}

impl ReviewDecision {
    pub fn as_str(self) -> &'static str {
        match self {
            ReviewDecision::Planned => "planned",
            ReviewDecision::Dismissed => "dismissed",
            ReviewDecision::Snoozed => "snoozed",
        }
    }
}

/// Which side of a threshold a snooze condition waits for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum Side {
    Below,
    Above,
}

impl Side {
    pub fn as_str(self) -> &'static str {
        match self {
            Side::Below => "below",
            Side::Above => "above",
        }
    }
}

/// A snooze's condition as stored: ask again when the fact is below (or
/// above) the value.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema), schemars(deny_unknown_fields))]
pub struct ReviewCondition {
    /// One of the move's deciding facts, by key.
    pub fact: String,
    /// Met only by a measured value, not by an estimate that crosses.
    pub measured: bool,
    pub side: Side,
    pub value: f64,
}

/// One deciding fact of a decision's basis: its value and class when the
/// decision was taken, and the exact thresholds at which the verdict
/// flipped then.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema), schemars(deny_unknown_fields))]
pub struct ReviewBasisFact {
    /// Above this value the verdict flipped.
    pub above: Option<f64>,
    /// Below this value the verdict flipped.
    pub below: Option<f64>,
    /// The confidence class as stored (before staleness).
    #[cfg_attr(
        feature = "schema",
        schemars(extend("enum" = ["measured", "reported", "inferred", "guessed"]))
    )]
    pub class: String,
    pub fact: String,
    /// `ms`, `MB/s`, `cpu` and so on, as the Why names it; empty when
    /// unknown.
    pub unit: String,
    pub value: Option<f64>,
}

/// What a decision rested on: every deciding fact of the move at the time.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema), schemars(deny_unknown_fields))]
pub struct ReviewBasis {
    pub facts: Vec<ReviewBasisFact>,
}

/// Where a decision stands in the advice at the evaluation time.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum ReviewState {
    /// Planned: shown, marked as such.
    Planned,
    /// Dismissed or snoozed, and nothing it rested on has changed: pages
    /// leave it out.
    Hidden,
    /// Dismissed or snoozed, but shown again: see the reasons.
    Back,
    /// Not among the recommendations at this evaluation.
    Absent,
}

impl ReviewState {
    pub fn as_str(self) -> &'static str {
        match self {
            ReviewState::Planned => "planned",
            ReviewState::Hidden => "hidden",
            ReviewState::Back => "back",
            ReviewState::Absent => "absent",
        }
    }
}

/// A decision's standing, with the reasons it is back or absent.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema), schemars(deny_unknown_fields))]
pub struct ReviewStanding {
    /// One sentence each, in order: the snooze date, the condition, then
    /// the basis facts by key. Empty when it is planned or hidden.
    pub reasons: Vec<String>,
    pub state: ReviewState,
}

/// A decision about one recommendation, with its standing at the
/// evaluation time.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema), schemars(deny_unknown_fields))]
pub struct Review {
    pub basis: ReviewBasis,
    /// A snooze's condition; `null` when none.
    pub condition: Option<ReviewCondition>,
    #[cfg_attr(feature = "schema", schemars(with = "Timestamp"))]
    pub decided_at: String,
    pub decided_by: String,
    pub decision: ReviewDecision,
    /// The estate version the decision was taken on.
    pub estate_version: i64,
    /// The evaluation time of the advice the decision was taken on.
    #[cfg_attr(feature = "schema", schemars(with = "Timestamp"))]
    pub evaluated_at: String,
    /// `service|from|to`; a compound step's members sorted and joined
    /// with `+`.
    pub identity: String,
    /// Where the change is tracked; empty when none was given.
    pub link: String,
    pub reason: String,
    pub standing: ReviewStanding,
    /// Snoozed until this time; `null` when not.
    #[cfg_attr(feature = "schema", schemars(with = "Nullable<Timestamp>"))]
    pub until: Option<String>,
}

/// `GET /api/estates/{id}/reviews`: every decision, by identity, with its
/// standing at `now`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema), schemars(deny_unknown_fields))]
pub struct ReviewList {
    pub estate: String,
    /// The evaluation time.
    #[cfg_attr(feature = "schema", schemars(with = "Timestamp"))]
    pub now: String,
    pub reviews: Vec<Review>,
    /// The estate version the advice was computed from.
    pub version: i64,
}

/// The answer to recording a decision: the decision as stored, with its
/// standing.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema), schemars(deny_unknown_fields))]
pub struct ReviewAnswer {
    pub review: Review,
}

/// One entry of the audit trail: who did what, when, and why.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema), schemars(deny_unknown_fields))]
pub struct AuditEntry {
    #[cfg_attr(
        feature = "schema",
        schemars(extend("enum" = ["review.planned", "review.dismissed", "review.snoozed", "review.cleared", "policy.changed", "estate.uploaded", "estate.imported", "facts.updated"]))
    )]
    /// A review decision, a policy change, or a write of the estate by a
    /// person or an import: an estate file uploaded, Kubernetes services
    /// imported (or re-synced by an agent), facts updated (docs/reviews.md).
    pub action: String,
    pub actor: String,
    #[cfg_attr(feature = "schema", schemars(with = "Timestamp"))]
    pub at: String,
    /// The action's particulars (for `policy.changed`, `changed`: each
    /// field with its old and new value; for an import, the cluster, the
    /// counts and the first 20 notes).
    pub detail: Map<String, Value>,
    pub estate: String,
    pub id: i64,
    pub reason: String,
    /// What it is about: a recommendation's identity, the policy, the
    /// estate, or the cluster imported into.
    pub subject: String,
}

impl AuditEntry {
    /// The policy fields a `policy.changed` entry changed, as
    /// `(field, from, to)`, the values as JSON text.
    pub fn policy_changes(&self) -> Vec<(String, String, String)> {
        let Some(Value::Array(changed)) = self.detail.get("changed") else {
            return Vec::new();
        };
        changed
            .iter()
            .map(|c| {
                let text = |k: &str| c.get(k).map(Value::to_string).unwrap_or_default();
                let field = c
                    .get("field")
                    .and_then(Value::as_str)
                    .unwrap_or_default()
                    .to_string();
                (field, text("from"), text("to"))
            })
            .collect()
    }
}

/// `GET /api/estates/{id}/audit`: newest first.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema), schemars(deny_unknown_fields))]
pub struct AuditList {
    pub entries: Vec<AuditEntry>,
    pub estate: String,
}

/// `POST /api/estates/{id}/reviews`: a decision about a recommendation.
/// `decision` and `side` are read as text so a wrong one is refused with
/// the field named (`422`), like every other rule of the form.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct NewReview {
    /// The recommendation, `service|from|to` (its move's identity).
    pub identity: String,
    #[cfg_attr(
        feature = "schema",
        schemars(extend("enum" = ["planned", "dismissed", "snoozed"]))
    )]
    pub decision: String,
    /// Required for `dismissed`; at most 2000 characters.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub reason: String,
    /// `planned` only: an http(s) URL where the change is tracked.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub link: String,
    /// `snoozed` only: asked again from then on.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "schema", schemars(with = "Option<Timestamp>"))]
    pub until: Option<String>,
    /// `snoozed` only: asked again once a deciding fact crosses a value.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub condition: Option<NewReviewCondition>,
}

/// A snooze's condition as asked for.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct NewReviewCondition {
    /// One of the move's deciding facts, by key.
    pub fact: String,
    #[cfg_attr(feature = "schema", schemars(extend("enum" = ["below", "above"])))]
    pub side: String,
    /// Default: the Why's exact flip threshold on that side.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub value: Option<f64>,
    /// Met only by a measured value, not by an estimate that crosses.
    #[serde(default, skip_serializing_if = "is_false")]
    pub measured: bool,
}

fn is_false(b: &bool) -> bool {
    !*b
}

/// `POST /api/estates/{id}/reviews/clear`: forget the decision about a
/// recommendation.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct ClearReview {
    pub identity: String,
    /// Why, for the audit trail.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub reason: String,
}

#[cfg(feature = "schema")]
pub(crate) fn schemas(generator: &mut schemars::SchemaGenerator) {
    let _ = generator.subschema_for::<ReviewList>();
    let _ = generator.subschema_for::<ReviewAnswer>();
    let _ = generator.subschema_for::<AuditList>();
    let _ = generator.subschema_for::<NewReview>();
    let _ = generator.subschema_for::<ClearReview>();
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_new_review_writes_only_what_was_chosen_and_refuses_unknown_members() {
        let r = NewReview {
            identity: "cart|c-par-1|c-fra-2".into(),
            decision: "snoozed".into(),
            reason: String::new(),
            link: String::new(),
            until: None,
            condition: Some(NewReviewCondition {
                fact: "rtt c-par-1↔c-fra-2".into(),
                side: "below".into(),
                value: None,
                measured: true,
            }),
        };
        let text = serde_json::to_string(&r).unwrap();
        assert_eq!(
            text,
            r#"{"identity":"cart|c-par-1|c-fra-2","decision":"snoozed","condition":{"fact":"rtt c-par-1↔c-fra-2","side":"below","measured":true}}"#
        );
        assert_eq!(serde_json::from_str::<NewReview>(&text).unwrap(), r);
        let e = serde_json::from_str::<ClearReview>(r#"{"identity":"a","why":"b"}"#).unwrap_err();
        assert!(e.to_string().contains("unknown field `why`"), "{e}");
    }

    /// The bytes as written, and as a sorted map writes them.
    fn both<T: Serialize>(t: &T) -> (String, String) {
        let typed = serde_json::to_string(t).unwrap();
        let sorted = serde_json::to_string(&serde_json::to_value(t).unwrap()).unwrap();
        (typed, sorted)
    }

    #[test]
    fn answers_write_their_members_in_alphabetical_order_and_read_back() {
        let text = r#"{"estate":"sample","now":"2026-11-30T04:05:00Z","reviews":[{"basis":{"facts":[{"above":null,"below":16.84,"class":"measured","fact":"c-dub-1 cpu_free","unit":"cpu","value":44.0}]},"condition":{"fact":"c-dub-1 cpu_free","measured":true,"side":"below","value":16.84},"decided_at":"2026-11-30T04:06:00Z","decided_by":"admin","decision":"snoozed","estate_version":3,"evaluated_at":"2026-11-30T04:05:00Z","identity":"cart|c-par-1|c-fra-2","link":"","reason":"wait","standing":{"reasons":[],"state":"hidden"},"until":null}],"version":3}"#;
        let list: ReviewList = serde_json::from_str(text).unwrap();
        assert_eq!(list.reviews[0].standing.state, ReviewState::Hidden);
        assert_eq!(
            list.reviews[0].condition.as_ref().unwrap().side,
            Side::Below
        );
        let (typed, sorted) = both(&list);
        assert_eq!(typed, sorted);
        assert_eq!(typed, text, "read and written back unchanged");
        let newer = text.replacen("{\"estate\"", "{\"added_later\":1,\"estate\"", 1);
        assert_ne!(newer, text);
        assert_eq!(
            serde_json::from_str::<ReviewList>(&newer).unwrap(),
            list,
            "a member a newer server adds is read past"
        );
        let audit: AuditList = serde_json::from_str(
            r#"{"entries":[{"action":"policy.changed","actor":"admin","at":"2026-11-30T04:05:00Z","detail":{"changed":[{"field":"/cross_site_weight","from":4.0,"to":10.0}]},"estate":"sample","id":1,"reason":"","subject":"policy"}],"estate":"sample"}"#,
        )
        .unwrap();
        let (typed, sorted) = both(&audit);
        assert_eq!(typed, sorted);
        assert_eq!(
            audit.entries[0].policy_changes(),
            [(
                "/cross_site_weight".to_string(),
                "4.0".to_string(),
                "10.0".to_string()
            )]
        );
    }
}
