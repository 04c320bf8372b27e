//! History: the advice driver's snapshots read back as a series over time,
//! and what changed between the two newest (`docs/history.md`).
//!
//! The server stores each snapshot's advice as the engine wrote it; this
//! module reads back only the parts it needs (totals and moves), so
//! snapshots written by an older engine, with members since added or
//! renamed elsewhere, still read. A snapshot that does not read at all is
//! named in `unreadable` and left out, never guessed at.
//!
//! Everything is ordered: points by (time, snapshot id), recommendations
//! by identity, facts by key, so the same snapshots give the same bytes
//! whatever order they are handed in.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::estate::format_time;
use crate::fact::Class;

/// One stored snapshot, as the server holds it.
#[derive(Clone, Debug)]
pub struct Snapshot {
    /// The snapshot's row id (increasing in insertion order).
    pub id: i64,
    /// When the driver evaluated it, Unix seconds.
    pub evaluated_at: i64,
    pub estate_version: i64,
    pub policy_digest: String,
    /// The advice JSON the engine wrote.
    pub result: String,
}

/// The series and the latest change (`GET /api/estates/{id}/history`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[cfg_attr(feature = "schema", schemars(rename = "AdviceHistory"))]
pub struct History {
    /// Oldest first.
    pub points: Vec<Point>,
    /// Ids of snapshots whose advice could not be read back, ascending.
    pub unreadable: Vec<i64>,
    /// Between the two newest readable snapshots; `None` with fewer than two.
    pub changes: Option<Changes>,
}

/// One snapshot on the chart.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[cfg_attr(feature = "schema", schemars(rename = "HistoryPoint"))]
pub struct Point {
    /// The snapshot's id.
    pub snapshot: i64,
    /// RFC 3339.
    pub at: String,
    pub estate_version: i64,
    pub policy_digest: String,
    /// The estate's cost in points as it stood, before any recommended
    /// move: the advice's `totals_before.cost`.
    pub cost: f64,
    /// MB/s flowing between different sites as it stood: the advice's
    /// `totals_before.cross_site_mb_s`.
    pub cross_site_mb_s: f64,
    /// Recommendations the advice made: distinct identities among the
    /// moves the evidence backs (a compound step counts once; a move
    /// shown apart for weak evidence does not count).
    pub open: usize,
}

/// What changed from snapshot `from` to snapshot `to`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[cfg_attr(feature = "schema", schemars(rename = "HistoryChanges"))]
pub struct Changes {
    /// The older snapshot's id.
    pub from: i64,
    pub from_at: String,
    /// The newer snapshot's id.
    pub to: i64,
    pub to_at: String,
    /// Recommendations in `to` that `from` did not make.
    pub appeared: Vec<Recommendation>,
    /// Recommendations `from` made that `to` does not.
    pub disappeared: Vec<Recommendation>,
    /// Recommendations both made whose deciding facts changed (only facts
    /// both snapshots hold are compared).
    pub changed: Vec<Recommendation>,
}

/// One recommendation in a change, as the snapshot that holds it made it
/// (`to` for appeared and changed ones, `from` for disappeared ones).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[cfg_attr(feature = "schema", schemars(rename = "HistoryRecommendation"))]
pub struct Recommendation {
    /// [`crate::review::identity`].
    pub identity: String,
    /// Its members in step order (one for a single move).
    pub moves: Vec<MoveLine>,
    /// Points: the sum of the members' gains.
    pub gain: f64,
    /// The weakest deciding fact's class (the group's for a compound step).
    pub confidence: Class,
    /// Its deciding facts whose value or class differs between the two
    /// snapshots, by key. A side is `null` when that snapshot's advice
    /// does not hold the fact (no move of it rested on the fact), so its
    /// value there is not known from the snapshots.
    pub facts: Vec<FactChange>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[cfg_attr(feature = "schema", schemars(rename = "HistoryMoveLine"))]
pub struct MoveLine {
    pub service: String,
    pub from: String,
    pub to: String,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[cfg_attr(feature = "schema", schemars(rename = "HistoryFactChange"))]
pub struct FactChange {
    pub fact: String,
    /// In the older snapshot; `null` when its advice does not hold the fact.
    pub before: Option<FactValue>,
    /// In the newer snapshot; `null` when its advice does not hold the fact.
    pub after: Option<FactValue>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[cfg_attr(feature = "schema", schemars(rename = "HistoryFactValue"))]
pub struct FactValue {
    /// The fact's value; `null` when unknown.
    pub value: Option<f64>,
    pub class: Class,
}

// ---- what is read back of a stored advice ------------------------------

#[derive(Deserialize)]
struct StoredAdvice {
    totals_before: StoredTotals,
    moves: Vec<StoredMove>,
}

#[derive(Deserialize)]
struct StoredTotals {
    cost: f64,
    cross_site_mb_s: f64,
}

#[derive(Deserialize)]
struct StoredMove {
    step: usize,
    service: String,
    from: String,
    to: String,
    gain: f64,
    confidence: Class,
    #[serde(default)]
    evidence: Option<String>,
    facts: Vec<StoredFact>,
    #[serde(default)]
    group: Option<StoredGroup>,
}

#[derive(Deserialize)]
struct StoredFact {
    fact: String,
    value: Option<f64>,
    class: Class,
}

#[derive(Deserialize)]
struct StoredGroup {
    steps: Vec<usize>,
}

/// A snapshot read back: its point and its recommendations by identity.
struct Read {
    point: Point,
    recs: BTreeMap<String, Rec>,
    /// Every fact any move (recommended or not) rested on, by key.
    facts: BTreeMap<String, FactValue>,
}

struct Rec {
    moves: Vec<MoveLine>,
    gain: f64,
    confidence: Class,
    /// The members' deciding fact keys, sorted, each once.
    facts: Vec<String>,
}

fn read(s: &Snapshot) -> Option<Read> {
    let advice: StoredAdvice = crate::strict::from_str(&s.result).ok()?;
    let mut facts = BTreeMap::new();
    for m in &advice.moves {
        for f in &m.facts {
            facts.insert(
                f.fact.clone(),
                FactValue {
                    value: f.value,
                    class: f.class,
                },
            );
        }
    }
    let mut recs: BTreeMap<String, Rec> = BTreeMap::new();
    for m in advice.moves.iter().filter(|m| m.evidence.is_none()) {
        let members: Vec<&StoredMove> = match &m.group {
            None => vec![m],
            Some(g) => advice
                .moves
                .iter()
                .filter(|o| g.steps.contains(&o.step))
                .collect(),
        };
        let identity = crate::review::identity_of(
            members
                .iter()
                .map(|o| (o.service.as_str(), o.from.as_str(), o.to.as_str())),
        );
        if recs.contains_key(&identity) {
            continue; // a compound step's later member: already counted
        }
        let mut keys: Vec<String> = members
            .iter()
            .flat_map(|o| o.facts.iter().map(|f| f.fact.clone()))
            .collect();
        keys.sort();
        keys.dedup();
        recs.insert(
            identity,
            Rec {
                moves: members
                    .iter()
                    .map(|o| MoveLine {
                        service: o.service.clone(),
                        from: o.from.clone(),
                        to: o.to.clone(),
                    })
                    .collect(),
                gain: members.iter().map(|o| o.gain).sum(),
                confidence: m.confidence,
                facts: keys,
            },
        );
    }
    Some(Read {
        point: Point {
            snapshot: s.id,
            at: format_time(s.evaluated_at),
            estate_version: s.estate_version,
            policy_digest: s.policy_digest.clone(),
            cost: advice.totals_before.cost,
            cross_site_mb_s: advice.totals_before.cross_site_mb_s,
            open: recs.len(),
        },
        recs,
        facts,
    })
}

/// The series of `snapshots` (any order) and the change between the two
/// newest readable ones.
pub fn history(snapshots: &[Snapshot]) -> History {
    let mut order: Vec<&Snapshot> = snapshots.iter().collect();
    order.sort_by_key(|s| (s.evaluated_at, s.id));
    let mut unreadable = Vec::new();
    let mut reads = Vec::new();
    for s in order {
        match read(s) {
            Some(r) => reads.push(r),
            None => unreadable.push(s.id),
        }
    }
    unreadable.sort_unstable();
    let changes = match reads.as_slice() {
        [.., old, new] => Some(diff(old, new)),
        _ => None,
    };
    History {
        points: reads.into_iter().map(|r| r.point).collect(),
        unreadable,
        changes,
    }
}

fn diff(old: &Read, new: &Read) -> Changes {
    // `before`/`after`: the two snapshots in time order. With `both`, only
    // facts both hold are compared (a recommendation both snapshots made);
    // otherwise a fact the other snapshot does not hold is shown with that
    // side unknown.
    let entry = |id: &str, r: &Rec, before: &Read, after: &Read, both: bool| {
        let facts = r
            .facts
            .iter()
            .filter_map(|key| {
                let b = before.facts.get(key);
                let a = after.facts.get(key);
                let shown = match (b, a) {
                    (Some(b), Some(a)) => b.class != a.class || !same_value(b.value, a.value),
                    _ => !both,
                };
                shown.then(|| FactChange {
                    fact: key.clone(),
                    before: b.cloned(),
                    after: a.cloned(),
                })
            })
            .collect();
        Recommendation {
            identity: id.to_string(),
            moves: r.moves.clone(),
            gain: r.gain,
            confidence: r.confidence,
            facts,
        }
    };
    let mut appeared = Vec::new();
    let mut changed = Vec::new();
    for (id, r) in &new.recs {
        if old.recs.contains_key(id) {
            let e = entry(id, r, old, new, true);
            if !e.facts.is_empty() {
                changed.push(e);
            }
        } else {
            appeared.push(entry(id, r, old, new, false));
        }
    }
    let disappeared = old
        .recs
        .iter()
        .filter(|(id, _)| !new.recs.contains_key(*id))
        .map(|(id, r)| entry(id, r, old, new, false))
        .collect();
    Changes {
        from: old.point.snapshot,
        from_at: old.point.at.clone(),
        to: new.point.snapshot,
        to_at: new.point.at.clone(),
        appeared,
        disappeared,
        changed,
    }
}

/// Values compared exactly: both were written by the engine from the
/// same kind of input, so an equal fact reads back bit for bit equal.
fn same_value(a: Option<f64>, b: Option<f64>) -> bool {
    match (a, b) {
        (Some(a), Some(b)) => a.to_bits() == b.to_bits(),
        (None, None) => true,
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{advise, load, Format, Policy};

    const SAMPLE: &str = include_str!("../../../examples/estates/sample.json");
    /// The sample's designed evaluation time (its observations are fresh).
    const NOW: i64 = 1_796_011_500; // 2026-11-30T04:05:00Z

    fn snapshot(id: i64, at: i64, estate_text: &str, policy: &Policy) -> Snapshot {
        let estate = load(estate_text, Format::Json).expect("the estate loads");
        Snapshot {
            id,
            evaluated_at: at,
            estate_version: id,
            policy_digest: policy.digest(),
            result: crate::front::advice(&estate, policy, at),
        }
    }

    /// The sample with one flow's weight (`from`→`to`) set to `weight`.
    fn with_weight(from: &str, to: &str, weight: f64) -> String {
        let mut v: serde_json::Value = serde_json::from_str(SAMPLE).unwrap();
        let flow = v["flows"]
            .as_array_mut()
            .unwrap()
            .iter_mut()
            .find(|f| f["from"] == from && f["to"] == to)
            .unwrap_or_else(|| panic!("the sample has no flow {from}→{to}"));
        flow["weight"]["value"] = weight.into();
        v.to_string()
    }

    #[test]
    fn the_series_reads_the_totals_and_counts_recommendations() {
        let policy = Policy::default();
        let s = snapshot(1, NOW, SAMPLE, &policy);
        let estate = load(SAMPLE, Format::Json).unwrap();
        let advice = advise(&estate, &policy, NOW);
        let h = history(std::slice::from_ref(&s));
        assert_eq!(h.points.len(), 1);
        let p = &h.points[0];
        assert_eq!(p.cost.to_bits(), advice.totals_before.cost.to_bits());
        assert_eq!(
            p.cross_site_mb_s.to_bits(),
            advice.totals_before.cross_site_mb_s.to_bits()
        );
        let mut ids: Vec<String> = (0..advice.moves.len())
            .filter(|&i| advice.moves[i].is_recommended())
            .map(|i| crate::review::identity(&advice.moves, i))
            .collect();
        ids.sort();
        ids.dedup();
        assert!(!ids.is_empty(), "the sample recommends moves");
        assert_eq!(p.open, ids.len());
        assert_eq!(p.at, "2026-11-30T04:05:00Z");
        assert_eq!(h.changes, None, "one snapshot: nothing to compare");
    }

    #[test]
    fn a_weight_change_shows_old_and_new_value_on_the_recommendations_it_moves() {
        let policy = Policy::default();
        let estate = load(SAMPLE, Format::Json).unwrap();
        let advice = advise(&estate, &policy, NOW);
        // The first recommendation resting on a flow weight: that flow's
        // weight drops to nothing, so the move loses its reason.
        let (i, key) = advice
            .moves
            .iter()
            .enumerate()
            .filter(|(_, m)| m.is_recommended())
            .find_map(|(i, m)| {
                m.facts
                    .iter()
                    .find(|f| f.fact.starts_with("flow ") && f.fact.ends_with(" weight"))
                    .map(|f| (i, f.fact.clone()))
            })
            .expect("a recommendation rests on a flow weight");
        let pair = key
            .strip_prefix("flow ")
            .and_then(|k| k.strip_suffix(" weight"))
            .unwrap();
        let (from, to) = pair.split_once('→').unwrap();
        let old_weight = advice.moves[i]
            .facts
            .iter()
            .find(|f| f.fact == key)
            .unwrap()
            .value
            .unwrap();
        let id = crate::review::identity(&advice.moves, i);

        let before = snapshot(1, NOW, SAMPLE, &policy);
        let after = snapshot(2, NOW + 60, &with_weight(from, to, 0.0), &policy);
        let h = history(&[after.clone(), before.clone()]);
        assert_eq!(
            h.points.iter().map(|p| p.snapshot).collect::<Vec<_>>(),
            [1, 2]
        );
        let c = h.changes.as_ref().expect("two snapshots");
        assert_eq!((c.from, c.to), (1, 2));
        let rec = c
            .disappeared
            .iter()
            .chain(&c.changed)
            .find(|r| r.identity == id)
            .unwrap_or_else(|| panic!("{id} neither disappeared nor changed: {c:?}"));
        let f = rec
            .facts
            .iter()
            .find(|f| f.fact == key)
            .unwrap_or_else(|| panic!("{key} not among the changed facts of {id}: {rec:?}"));
        let b = f.before.as_ref().expect("the older advice holds it");
        assert_eq!(b.value, Some(old_weight));
        if let Some(a) = &f.after {
            assert_eq!(a.value, Some(0.0));
        }
        // On the sample: analytics-rollup's move still pays without the
        // event broker's calls, so it stays, its weight 2.5 → 0.
        assert_eq!(id, "analytics-rollup|c-iad-1|c-dub-1");
        assert_eq!(key, "flow analytics-rollup→event-broker weight");
        assert!(c.appeared.is_empty() && c.disappeared.is_empty(), "{c:?}");
        assert_eq!(c.changed.len(), 1, "{c:?}");
        assert_eq!(
            c.changed[0].facts,
            [FactChange {
                fact: key.clone(),
                before: Some(FactValue {
                    value: Some(2.5),
                    class: Class::Measured
                }),
                after: Some(FactValue {
                    value: Some(0.0),
                    class: Class::Measured
                }),
            }]
        );
        // Facts are listed by key, recommendations by identity.
        for list in [&c.appeared, &c.disappeared, &c.changed] {
            assert!(list.windows(2).all(|w| w[0].identity < w[1].identity));
            for r in list.iter() {
                assert!(r.facts.windows(2).all(|w| w[0].fact < w[1].fact));
            }
        }
        // The same snapshots in any order give the same bytes.
        assert_eq!(
            crate::front::history(&[before.clone(), after.clone()]),
            crate::front::history(&[after, before])
        );
    }

    #[test]
    fn a_higher_bar_makes_recommendations_disappear_with_what_they_rested_on() {
        let low = Policy::default();
        let high = Policy {
            min_gain_points: 1_000_000.0,
            ..Policy::default()
        };
        let before = snapshot(1, NOW, SAMPLE, &low);
        let after = snapshot(2, NOW + 60, SAMPLE, &high);
        let h = history(&[before, after]);
        assert!(h.points[0].open > 0);
        assert_eq!(h.points[1].open, 0, "nothing clears a bar of a million");
        assert_eq!(h.points[0].policy_digest, low.digest());
        assert_ne!(h.points[0].policy_digest, h.points[1].policy_digest);
        // The estate did not change: cost and traffic as it stood are equal.
        assert_eq!(h.points[0].cost, h.points[1].cost);
        let c = h.changes.unwrap();
        assert!(c.appeared.is_empty() && c.changed.is_empty());
        assert_eq!(c.disappeared.len(), h.points[0].open);
        for r in &c.disappeared {
            assert!(!r.facts.is_empty(), "{r:?}");
            // Known before; the newer advice (no moves at all) holds none.
            assert!(
                r.facts
                    .iter()
                    .all(|f| f.before.is_some() && f.after.is_none()),
                "{r:?}"
            );
        }
    }

    #[test]
    fn the_same_advice_twice_changes_nothing() {
        let policy = Policy::default();
        let a = snapshot(1, NOW, SAMPLE, &policy);
        let mut b = a.clone();
        b.id = 2;
        b.evaluated_at = NOW + 60;
        let c = history(&[a, b]).changes.unwrap();
        assert!(c.appeared.is_empty() && c.disappeared.is_empty() && c.changed.is_empty());
    }

    #[test]
    fn an_unreadable_snapshot_is_named_and_left_out() {
        let policy = Policy::default();
        let good = snapshot(3, NOW, SAMPLE, &policy);
        let bad = Snapshot {
            id: 7,
            evaluated_at: NOW + 60,
            estate_version: 2,
            policy_digest: "x".into(),
            // An array where the advice object belongs.
            result: "[1, 2]".into(),
        };
        let h = history(&[bad, good]);
        assert_eq!(h.unreadable, [7]);
        assert_eq!(h.points.len(), 1);
        assert_eq!(h.changes, None);
    }

    #[test]
    fn a_compound_step_is_one_recommendation() {
        let text = r#"{"totals_before":{"cost":10.0,"cross_site_mb_s":2.0},"moves":[
          {"step":1,"service":"b","from":"x","to":"y","gain":1.0,"confidence":"measured","facts":[{"fact":"f1","value":1.0,"class":"measured"}],"group":{"steps":[1,2]}},
          {"step":2,"service":"a","from":"x","to":"y","gain":2.0,"confidence":"measured","facts":[{"fact":"f2","value":2.0,"class":"reported"}],"group":{"steps":[1,2]}},
          {"step":3,"service":"c","from":"x","to":"y","gain":0.5,"confidence":"guessed","evidence":"too weak","facts":[]}
        ]}"#;
        let older = r#"{"totals_before":{"cost":12.0,"cross_site_mb_s":3.0},"moves":[]}"#;
        let snap = |id, result: &str| Snapshot {
            id,
            evaluated_at: NOW + id,
            estate_version: id,
            policy_digest: "p".into(),
            result: result.into(),
        };
        let h = history(&[snap(1, older), snap(2, text)]);
        assert_eq!(h.points[1].open, 1, "{h:?}");
        let c = h.changes.unwrap();
        assert_eq!(c.appeared.len(), 1);
        let r = &c.appeared[0];
        assert_eq!(r.identity, "a|x|y+b|x|y");
        assert_eq!(r.gain, 3.0);
        let keys: Vec<&str> = r.facts.iter().map(|f| f.fact.as_str()).collect();
        assert_eq!(keys, ["f1", "f2"], "unknown before, so shown");
        assert!(r.facts.iter().all(|f| f.before.is_none()));
    }
}
