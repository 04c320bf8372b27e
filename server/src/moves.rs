//! Applied moves (`docs/outcomes.md`): noticing that an estate write
//! changed where services run, and recording what Berth had said of each
//! such move.
//!
//! Every estate write ends in one of the store's two document writes
//! (`EstateLock::replace_recording`, `replace_document`); both ask
//! [`moved_services`] which services the new document puts on another
//! cluster than the old one, and record them with the write, in its
//! transaction, with the old document (what the outcome is measured
//! against). In the same transaction each move is matched to the advice
//! ([`advised_in`], [`planned_in`]): a recommendation of that move in an
//! advice snapshot of the policy's `outcome_lookback_s` ([`lookback_s`]), else a `planned`
//! review, else nothing — and the advice's prediction is kept as it was,
//! since snapshots are pruned.
//!
//! A leaf: pure functions of documents, stored advice text and saved
//! what-ifs (run by the engine), below the store that calls them.

use berth_engine::fact::Class;
use serde_json::{json, Value};

/// How far back, seconds, a move is matched to the advice that
/// recommended it: the estate's policy's `outcome_lookback_s` (14 days
/// unless set; the why is the field's, `engine/src/model/policy.rs`). A
/// stored policy that no longer reads (it was validated when written)
/// gives the default rather than refusing the write that moved services.
pub fn lookback_s(policy: &str) -> i64 {
    berth_engine::Policy::from_json(policy)
        .unwrap_or_default()
        .outcome_lookback_s
}

/// How a move was noticed: a write under the estate lock that moves a
/// service is a Kubernetes import (an operator's, or an agent's re-sync
/// through the same route; fact updates and observation batches change
/// facts, never where a service runs) ...
pub const BY_KUBERNETES_IMPORT: &str = "kubernetes_import";
/// ... and a whole document replaced is an estate upload.
pub const BY_ESTATE_UPLOAD: &str = "estate_upload";

/// A service whose cluster an estate write changed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MovedService {
    pub service: String,
    pub from: String,
    pub to: String,
}

/// `(id, cluster)` of every service of an estate document, sorted.
fn placements(document: &str) -> Vec<(String, String)> {
    let Ok(doc) = serde_json::from_str::<Value>(document) else {
        return Vec::new();
    };
    let mut out: Vec<(String, String)> = doc["services"]
        .as_array()
        .map(|a| {
            a.iter()
                .filter_map(|s| Some((s["id"].as_str()?.into(), s["cluster"].as_str()?.into())))
                .collect()
        })
        .unwrap_or_default();
    out.sort();
    out
}

/// The services `after` runs on another cluster than `before` did, by
/// service id (a service added, removed, or re-created under another id
/// is not a move: `docs/outcomes.md`, "What counts as applied"). In id
/// order.
pub fn moved_services(before: &str, after: &str) -> Vec<MovedService> {
    let before = placements(before);
    let mut out = Vec::new();
    for (id, to) in placements(after) {
        let Ok(i) = before.binary_search_by(|(b, _)| b.as_str().cmp(&id)) else {
            continue;
        };
        if before[i].1 != to {
            out.push(MovedService {
                service: id,
                from: before[i].1.clone(),
                to,
            });
        }
    }
    out
}

/// A recommendation of a move read back from stored advice: its identity
/// and the step's prediction (members' gains and terms summed).
#[derive(Clone, Debug, PartialEq)]
pub struct Advised {
    pub identity: String,
    /// JSON: `{gain, terms, confidence, facts}` of the whole step.
    pub prediction: Value,
}

/// The recommendation (evidence backs it) of `m` in one stored advice,
/// if it makes one.
pub fn advised_in(result: &str, m: &MovedService) -> Option<Advised> {
    let advice: Value = serde_json::from_str(result).ok()?;
    let moves = advice["moves"].as_array()?;
    let recommended = |x: &Value| x.get("evidence").is_none_or(Value::is_null);
    let hit = moves.iter().find(|x| {
        x["service"] == m.service.as_str()
            && x["from"] == m.from.as_str()
            && x["to"] == m.to.as_str()
            && recommended(x)
    })?;
    let members: Vec<&Value> = match hit["group"]["steps"].as_array() {
        Some(steps) => moves
            .iter()
            .filter(|x| steps.iter().any(|s| *s == x["step"]))
            .collect(),
        None => vec![hit],
    };
    fn triple(x: &Value) -> (&str, &str, &str) {
        (
            x["service"].as_str().unwrap_or(""),
            x["from"].as_str().unwrap_or(""),
            x["to"].as_str().unwrap_or(""),
        )
    }
    let identity = berth_engine::review::identity_of(members.iter().map(|x| triple(x)));
    // The step's terms, summed member by member in step order, as the
    // advice sums a compound step's gain.
    let keys = ["round_trip", "cross_site", "headroom", "copy"];
    let mut terms = serde_json::Map::new();
    for k in keys {
        let sum = members
            .iter()
            .fold(0.0, |acc, x| acc + x["terms"][k].as_f64().unwrap_or(0.0));
        terms.insert(k.into(), json!(sum));
    }
    let gain = members
        .iter()
        .fold(0.0, |acc, x| acc + x["gain"].as_f64().unwrap_or(0.0));
    let confidence = members
        .iter()
        .filter_map(|x| serde_json::from_value::<Class>(x["confidence"].clone()).ok())
        .max()
        .unwrap_or(Class::Guessed);
    let mut facts: Vec<Value> = members
        .iter()
        .flat_map(|x| x["facts"].as_array().cloned().unwrap_or_default())
        .collect();
    facts.sort_by(|a, b| a["fact"].as_str().cmp(&b["fact"].as_str()));
    facts.dedup_by(|a, b| a["fact"] == b["fact"]);
    Some(Advised {
        identity,
        prediction: json!({
            "gain": gain,
            "terms": terms,
            "confidence": confidence,
            "facts": facts,
        }),
    })
}

/// The planned review whose recommendation holds `m` (a compound step's
/// identity names every member), among `(identity, kind)` rows.
pub fn planned_in<'a>(reviews: &'a [(String, String)], m: &MovedService) -> Option<&'a str> {
    let own = own_identity(m);
    reviews
        .iter()
        .find(|(identity, kind)| kind == "planned" && identity.split('+').any(|t| t == own))
        .map(|(identity, _)| identity.as_str())
}

/// The basis of a move that a saved what-if contained (and neither the
/// advice nor a planned review accounted for).
pub const BASIS_WHATIF: &str = "whatif";

/// A saved what-if that contained a move, and what it predicted for it.
#[derive(Clone, Debug, PartialEq)]
pub struct WhatIfMatch {
    pub name: String,
    /// When the what-if was saved (its last edit).
    pub saved_at: i64,
    /// JSON of [`berth_engine::outcome::Kept`]: the what-if's predicted
    /// gain, terms, confidence and deciding facts for the move.
    pub prediction: String,
}

/// The saved what-ifs a write's moves are matched against, run on the
/// estate before the write when first asked (a write whose moves the
/// advice accounts for loads nothing).
pub struct WhatIfs<'a> {
    before: &'a str,
    policy: &'a str,
    at: i64,
    /// `(name, body, saved_at)`, the newest first.
    saved: &'a [(String, String, i64)],
    loaded: Option<Option<(berth_engine::Estate, berth_engine::Policy)>>,
}

impl<'a> WhatIfs<'a> {
    pub fn new(
        before: &'a str,
        policy: &'a str,
        at: i64,
        saved: &'a [(String, String, i64)],
    ) -> WhatIfs<'a> {
        WhatIfs {
            before,
            policy,
            at,
            saved,
            loaded: None,
        }
    }

    /// The newest saved what-if one of whose moves, run on the estate
    /// before the write at the write's time, is `m` (same service, from
    /// and to), with what it predicted for that move
    /// ([`berth_engine::outcome::whatif_prediction`]). A what-if that no
    /// longer reads or runs is passed over.
    pub fn containing(&mut self, m: &MovedService) -> Option<WhatIfMatch> {
        if self.saved.is_empty() {
            return None;
        }
        let (before, policy) = self
            .loaded
            .get_or_insert_with(|| {
                let e = berth_engine::estate::load(self.before, berth_engine::Format::Json).ok()?;
                Some((
                    e,
                    berth_engine::Policy::from_json(self.policy).unwrap_or_default(),
                ))
            })
            .as_ref()?;
        let member = berth_engine::outcome::Member {
            service: m.service.clone(),
            from: m.from.clone(),
            to: m.to.clone(),
        };
        self.saved.iter().find_map(|(name, body, saved_at)| {
            let sc = berth_engine::whatif::Scenario::from_json(body).ok()?;
            let k =
                berth_engine::outcome::whatif_prediction(before, policy, self.at, &sc, &member)?;
            Some(WhatIfMatch {
                name: name.clone(),
                saved_at: *saved_at,
                prediction: serde_json::to_string(&k).ok()?,
            })
        })
    }
}

/// The identity of the move alone (`service|from|to`).
pub fn own_identity(m: &MovedService) -> String {
    berth_engine::review::identity_of([(m.service.as_str(), m.from.as_str(), m.to.as_str())])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_move_is_a_service_on_another_cluster_by_id() {
        let before = r#"{"services":[{"id":"a","cluster":"c1"},{"id":"b","cluster":"c2"},{"id":"gone","cluster":"c1"}]}"#;
        let after = r#"{"services":[{"id":"b","cluster":"c3"},{"id":"a","cluster":"c1"},{"id":"new","cluster":"c2"}]}"#;
        assert_eq!(
            moved_services(before, after),
            vec![MovedService {
                service: "b".into(),
                from: "c2".into(),
                to: "c3".into()
            }]
        );
    }

    #[test]
    fn a_recommendation_is_found_with_its_whole_step() {
        let advice = json!({"moves": [
            {"step": 1, "service": "a", "from": "c1", "to": "c2", "gain": 10.0, "confidence": "measured",
             "terms": {"round_trip": 8.0, "cross_site": 3.0, "headroom": -1.0, "copy": 0.0},
             "facts": [{"fact": "x"}], "group": {"steps": [1, 2]}},
            {"step": 2, "service": "b", "from": "c1", "to": "c3", "gain": 5.0, "confidence": "reported",
             "terms": {"round_trip": 4.0, "cross_site": 1.0, "headroom": 0.0, "copy": 0.0},
             "facts": [{"fact": "x"}, {"fact": "y"}], "group": {"steps": [1, 2]}},
            {"step": 3, "service": "d", "from": "c1", "to": "c3", "gain": 1.0, "confidence": "guessed",
             "terms": {"round_trip": 1.0, "cross_site": 0.0, "headroom": 0.0, "copy": 0.0},
             "facts": [], "evidence": "too weak"}
        ]})
        .to_string();
        let m = |s: &str, f: &str, t: &str| MovedService {
            service: s.into(),
            from: f.into(),
            to: t.into(),
        };
        let a = advised_in(&advice, &m("b", "c1", "c3")).unwrap();
        assert_eq!(a.identity, "a|c1|c2+b|c1|c3");
        assert_eq!(a.prediction["gain"], 15.0);
        assert_eq!(a.prediction["terms"]["round_trip"], 12.0);
        assert_eq!(a.prediction["confidence"], "reported");
        assert_eq!(a.prediction["facts"].as_array().unwrap().len(), 2);
        // Shown apart for weak evidence: not a recommendation.
        assert_eq!(advised_in(&advice, &m("d", "c1", "c3")), None);
        assert_eq!(advised_in(&advice, &m("a", "c1", "c3")), None);
        let reviews = vec![("a|c1|c2+b|c1|c3".to_string(), "planned".to_string())];
        assert_eq!(
            planned_in(&reviews, &m("a", "c1", "c2")),
            Some("a|c1|c2+b|c1|c3")
        );
        assert_eq!(planned_in(&reviews, &m("a", "c1", "c3")), None);
    }
}
