//! Outcomes read back over an estate's history: the calibration of
//! observed against predicted gains, the report of every applied move, and
//! its plain-text rendering.

use super::*;

/// How an estate's applied moves held up: the ratios of observed (at the
/// demand before) to predicted gain.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[cfg_attr(feature = "schema", schemars(rename = "OutcomeCalibration"))]
pub struct Calibration {
    /// Outcomes with a ratio.
    pub count: usize,
    pub median: f64,
    /// The middle half of the ratios: the lower and upper quartiles
    /// (nearest rank).
    pub p25: f64,
    pub p75: f64,
}

/// The smallest number of outcomes a calibration is quoted from: with
/// fewer, one odd move is the whole story (issue 36 names three).
pub const CALIBRATION_MIN: usize = 3;

/// The calibration of a set of ratios; `None` with fewer than
/// [`CALIBRATION_MIN`]. Sorted with `total_cmp`, so the order they come in
/// does not matter.
pub fn calibration(ratios: &[f64]) -> Option<Calibration> {
    let mut r: Vec<f64> = ratios.iter().copied().filter(|x| x.is_finite()).collect();
    if r.len() < CALIBRATION_MIN {
        return None;
    }
    r.sort_by(|a, b| a.total_cmp(b));
    let n = r.len();
    let median = if n % 2 == 1 {
        r[n / 2]
    } else {
        (r[n / 2 - 1] + r[n / 2]) / 2.0
    };
    // Nearest rank: the smallest value with at least q of the set at or
    // below it.
    let rank = |q: f64| r[((q * n as f64).ceil() as usize).clamp(1, n) - 1];
    Some(Calibration {
        count: n,
        median,
        p25: rank(0.25),
        p75: rank(0.75),
    })
}

/// The calibration in one sentence, as the Why quotes it.
pub fn calibration_line(c: &Calibration) -> String {
    format!(
        "in this estate, {} applied moves delivered a median {:.0} % of their predicted gain (middle half {:.0}–{:.0} %)",
        c.count,
        c.median * 100.0,
        c.p25 * 100.0,
        c.p75 * 100.0
    )
}

/// One part of an estate's calibration: its advised and planned steps of
/// one kind, or whose prediction rested on one class of deciding facts
/// (`docs/outcomes.md`, "Calibration").
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[cfg_attr(feature = "schema", schemars(rename = "OutcomeCalibrationPart"))]
pub struct CalibrationPart {
    /// `kind` or `class`.
    pub by: String,
    /// For `kind`: `single` or `compound`. For `class`: `measured`,
    /// `reported`, `inferred` or `guessed`, the class of the weakest
    /// deciding fact the *prediction* rested on when it was made (the
    /// advice's, or the what-if's) — not the class of the facts observed
    /// since, which each step's `observed.confidence` gives.
    pub value: String,
    /// The part's steps observed with a ratio.
    pub count: usize,
    /// The median and middle half of their ratios; `null` with fewer than
    /// three.
    pub calibration: Option<Calibration>,
    /// The part in words: "single moves: 5 judged, median 90 % (middle
    /// half 80–100 %)", "advised on reported facts: 3 judged, …", or with
    /// fewer than three each ratio ("compound steps: 1 judged (97 %), too
    /// few for a median").
    pub line: String,
}

/// The part of `ratios` (each finite; none: no part) under `label`.
fn calibration_part(by: &str, value: &str, label: &str, ratios: &[f64]) -> Option<CalibrationPart> {
    let mut r: Vec<f64> = ratios.iter().copied().filter(|x| x.is_finite()).collect();
    if r.is_empty() {
        return None;
    }
    r.sort_by(|a, b| a.total_cmp(b));
    let c = calibration(&r);
    let line = match &c {
        Some(c) => format!(
            "{label}: {} judged, median {:.0} % (middle half {:.0}–{:.0} %)",
            c.count,
            c.median * 100.0,
            c.p25 * 100.0,
            c.p75 * 100.0
        ),
        None => format!(
            "{label}: {} judged ({}), too few for a median",
            r.len(),
            r.iter()
                .map(|x| format!("{:.0} %", x * 100.0))
                .collect::<Vec<_>>()
                .join(", ")
        ),
    };
    Some(CalibrationPart {
        by: by.into(),
        value: value.into(),
        count: r.len(),
        calibration: c,
        line,
    })
}

/// The calibration split by kind of step (single, compound) and by the
/// class of the deciding facts its prediction rested on, from `(kind,
/// class, ratio)` of every advised or planned step observed with a ratio.
/// In that order (kinds, then classes from measured to guessed); a part
/// with no step is left out.
pub fn calibration_parts(judged: &[(&str, Class, f64)]) -> Vec<CalibrationPart> {
    let mut parts = Vec::new();
    for (kind, label) in [("single", "single moves"), ("compound", "compound steps")] {
        let r: Vec<f64> = judged
            .iter()
            .filter(|(k, _, _)| *k == kind)
            .map(|(_, _, r)| *r)
            .collect();
        parts.extend(calibration_part("kind", kind, label, &r));
    }
    for class in Class::ALL {
        let r: Vec<f64> = judged
            .iter()
            .filter(|(_, c, _)| *c == class)
            .map(|(_, _, r)| *r)
            .collect();
        // "advised on": the class the prediction rested on when it was
        // made, not the class of what was observed since (each step's own
        // "rests on" says that).
        let label = format!("advised on {} facts", class.as_str());
        parts.extend(calibration_part("class", class.as_str(), &label, &r));
    }
    parts
}

/// A recorded move of one service, as the server hands it over.
#[derive(Clone, Debug)]
pub struct Event {
    pub id: i64,
    /// The estate write that made it: its `before` document is the
    /// estate the outcome is measured against.
    pub write: i64,
    pub member: Member,
    pub moved_at: i64,
    pub noticed_by: String,
    /// `advised`, `planned`, `whatif` or `unadvised`.
    pub basis: String,
    /// The recommendation's identity (`review::identity`), or the move's
    /// own for a what-if's or an unadvised one.
    pub identity: String,
    pub snapshot: Option<i64>,
    /// When the advice was made, or the what-if saved.
    pub advised_at: Option<i64>,
    /// The name of the saved what-if, for basis `whatif`.
    pub scenario: Option<String>,
    /// The advised step's prediction as the snapshot made it, or the
    /// what-if's ([`Kept`], JSON text).
    pub prediction: Option<String>,
}

/// A step's prediction as kept when its move was noticed: an advised
/// step's from its snapshot, a what-if's as the what-if predicted it
/// ([`super::whatif_prediction`]). Stored as JSON with the move event.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Kept {
    /// Points: the sum of `terms`.
    pub gain: f64,
    pub terms: Terms,
    /// The weakest deciding fact's class.
    pub confidence: Class,
    /// The deciding facts, by key.
    pub facts: Vec<FactRef>,
}

/// Every applied move of an estate, judged, and the estate's calibration
/// (`GET /api/estates/{id}/outcomes`, `berth outcomes`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[cfg_attr(feature = "schema", schemars(rename = "AppliedMoves"))]
pub struct Report {
    /// RFC 3339: the evaluation time.
    pub now: String,
    /// The settling window, seconds.
    pub settle_s: i64,
    /// Oldest first.
    pub applied: Vec<Applied>,
    /// Over the advised, planned and what-if steps observed (every step
    /// held to a prediction made before it), with a ratio; `null` with
    /// fewer than three.
    pub calibration: Option<Calibration>,
    /// The calibration in words, as the Why quotes it; `null` without one.
    pub calibration_line: Option<String>,
    /// The same steps split by kind (single, compound) and by the class
    /// of the deciding facts their predictions rested on; every part
    /// with at least one step, each with its median from three.
    pub calibration_parts: Vec<CalibrationPart>,
}

/// One applied step: what Berth said, and what came of it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[cfg_attr(feature = "schema", schemars(rename = "AppliedMove"))]
pub struct Applied {
    pub identity: String,
    /// `advised` (a recommendation of an advice snapshot), `planned` (a
    /// planned review), `whatif` (a move of a saved what-if, held to what
    /// the what-if predicted for it) or `unadvised` (judged by the model
    /// at the move).
    pub basis: String,
    /// `single` or `compound`.
    pub kind: String,
    /// How the (last) move was noticed.
    pub noticed_by: String,
    /// The move events, ascending.
    pub events: Vec<i64>,
    pub snapshot: Option<i64>,
    /// RFC 3339: when the advice was made, or the what-if saved.
    pub advised_at: Option<String>,
    /// The saved what-if's name, for basis `whatif`; omitted otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scenario: Option<String>,
    /// The class the prediction rested on: the snapshot's for an advised
    /// step, the what-if's for a what-if's, else the model's at the move.
    pub predicted_confidence: Class,
    pub predicted_facts: Vec<FactRef>,
    /// `null` when the step could not be judged (`error` says why).
    pub outcome: Option<Outcome>,
    pub error: Option<String>,
}

/// The members a compound identity names (`service|from|to` joined by
/// `+`), in identity order.
pub(super) fn members_of(identity: &str) -> Vec<Member> {
    identity
        .split('+')
        .filter_map(|t| {
            let mut p = t.split('|');
            Some(Member {
                service: p.next()?.to_string(),
                from: p.next()?.to_string(),
                to: p.next()?.to_string(),
            })
        })
        .collect()
}

/// Judge every applied step of `events` (in id order) against `after`,
/// the estate now. `befores` holds each write's estate before it, by
/// write id (`None`: its document did not load, said as the step's
/// error). A compound step's members are gathered by identity; the step
/// is judged from its last member's move, against the estate before its
/// first.
pub fn report(
    events: &[Event],
    befores: &[(i64, Option<Estate>)],
    after: &Estate,
    policy: &Policy,
    now: i64,
    settle_s: i64,
) -> Report {
    let steps = gather_steps(events);
    let before_of = |write: i64| {
        befores
            .binary_search_by(|(w, _)| w.cmp(&write))
            .ok()
            .and_then(|i| befores[i].1.as_ref())
    };
    let mut applied = Vec::new();
    for step in steps {
        let first = step[0];
        let last = *step.last().expect("a step has an event");
        let members = if first.identity.contains('+') {
            members_of(&first.identity)
        } else {
            vec![first.member.clone()]
        };
        let kept: Option<Kept> = first
            .prediction
            .as_deref()
            .and_then(|p| crate::strict::from_str(p).ok());
        let mut a = Applied {
            identity: first.identity.clone(),
            basis: first.basis.clone(),
            kind: if members.len() > 1 {
                "compound"
            } else {
                "single"
            }
            .into(),
            noticed_by: last.noticed_by.clone(),
            events: step.iter().map(|e| e.id).collect(),
            snapshot: first.snapshot,
            advised_at: first.advised_at.map(format_time),
            scenario: first.scenario.clone(),
            predicted_confidence: kept.as_ref().map_or(Class::Guessed, |k| k.confidence),
            predicted_facts: kept.as_ref().map(|k| k.facts.clone()).unwrap_or_default(),
            outcome: None,
            error: None,
        };
        let Some(before) = before_of(first.write) else {
            a.error = Some(format!(
                "the estate before write {} does not load: the step cannot be judged",
                first.write
            ));
            applied.push(a);
            continue;
        };
        let prediction = match predict(before, policy, first.moved_at, &members) {
            Ok(p) => p,
            Err(e) => {
                a.error = Some(e);
                applied.push(a);
                continue;
            }
        };
        if kept.is_none() {
            a.predicted_confidence = prediction.confidence;
            a.predicted_facts = prediction.facts.clone();
        }
        let (gain, terms) = match &kept {
            Some(k) => (k.gain, k.terms),
            None => (prediction.gain, prediction.terms),
        };
        let missing: Vec<&Member> = members
            .iter()
            .filter(|m| !step.iter().any(|e| e.member == **m))
            .collect();
        let moved_at = step
            .iter()
            .map(|e| e.moved_at)
            .max()
            .unwrap_or(first.moved_at);
        if !missing.is_empty() {
            // A compound step is applied when all its members have moved.
            a.outcome = Some(waiting_for_members(
                &members,
                &missing,
                (moved_at, settle_s),
                gain,
                terms,
            ));
            applied.push(a);
            continue;
        }
        let o = Observation {
            members: &members,
            prediction: &prediction,
            predicted_gain: gain,
            predicted_terms: terms,
            moved_at,
            now,
            settle_s,
        };
        match observe(before, after, policy, &o) {
            Ok(out) => a.outcome = Some(out),
            Err(e) => a.error = Some(e),
        }
        applied.push(a);
    }
    let judged: Vec<(&str, Class, f64)> = applied
        .iter()
        .filter(|a| a.basis != "unadvised")
        .filter_map(|a| {
            let r = a.outcome.as_ref()?.observed.as_ref()?.ratio?;
            Some((a.kind.as_str(), a.predicted_confidence, r))
        })
        .collect();
    let ratios: Vec<f64> = judged.iter().map(|(_, _, r)| *r).collect();
    let calibration = calibration(&ratios);
    let calibration_parts = calibration_parts(&judged);
    Report {
        now: format_time(now),
        settle_s,
        calibration_line: calibration.as_ref().map(calibration_line),
        calibration,
        calibration_parts,
        applied,
    }
}

/// Gather events into steps: an event joins the oldest open step of its
/// identity that lacks its service, else opens one.
fn gather_steps(events: &[Event]) -> Vec<Vec<&Event>> {
    let mut steps: Vec<Vec<&Event>> = Vec::new();
    for e in events {
        let open = steps.iter_mut().find(|s| {
            s[0].identity == e.identity && !s.iter().any(|x| x.member.service == e.member.service)
        });
        match open {
            Some(s) => s.push(e),
            None => steps.push(vec![e]),
        }
    }
    steps
}

/// A compound step some of whose members have not moved yet: it is
/// applied when all have, and waits for the `missing` ones till then.
fn waiting_for_members(
    members: &[Member],
    missing: &[&Member],
    (moved_at, settle_s): (i64, i64),
    gain: f64,
    terms: Terms,
) -> Outcome {
    Outcome {
        status: Status::Waiting,
        members: members.to_vec(),
        moved_at: format_time(moved_at),
        settles_at: format_time(moved_at.saturating_add(settle_s)),
        predicted_gain: gain,
        predicted_terms: terms,
        waiting_for: missing
            .iter()
            .map(|m| {
                format!(
                    "{} to move {} → {} (the rest of the step)",
                    m.service, m.from, m.to
                )
            })
            .collect(),
        observed: None,
        flows: Vec::new(),
        notes: Vec::new(),
    }
}

/// What an applied step was held to, in words: `advised`, `planned`,
/// `unadvised`, or `what-if "name"` for a saved what-if's move.
pub fn basis_words(a: &Applied) -> String {
    match (a.basis.as_str(), &a.scenario) {
        ("whatif", Some(name)) => format!("what-if {name:?}"),
        ("whatif", None) => "what-if".into(),
        (b, _) => b.into(),
    }
}

/// The report for people (`berth outcomes --format text`).
pub fn text(r: &Report) -> String {
    use crate::numfmt::signed;
    let mut out = format!(
        "Applied moves at {} (settling window {} s): {}\n",
        r.now,
        r.settle_s,
        r.applied.len()
    );
    for a in &r.applied {
        let status = match a.outcome.as_ref().map(|o| o.status) {
            Some(Status::Observed) => "observed",
            Some(Status::Waiting) => "waiting",
            Some(Status::Superseded) => "superseded",
            None => "not judged",
        };
        out.push_str(&format!(
            "- {} ({}, {}, noticed by {}): {status}\n",
            a.identity,
            basis_words(a),
            a.kind,
            a.noticed_by
        ));
        if let Some(e) = &a.error {
            out.push_str(&format!("    {e}\n"));
        }
        let Some(o) = &a.outcome else { continue };
        out.push_str(&format!(
            "    moved {}; predicted {} points ({})\n",
            o.moved_at,
            signed(o.predicted_gain),
            a.predicted_confidence.as_str()
        ));
        if let Some(ob) = &o.observed {
            out.push_str(&format!(
                "    observed {} points at the demand before{}, {} at the demand after\n",
                signed(ob.gain_at_demand_before),
                ob.ratio
                    .map(|x| format!(" ({:.0} % of the prediction)", x * 100.0))
                    .unwrap_or_default(),
                signed(ob.gain_at_demand_after)
            ));
            out.push_str(&format!(
                "    cross-site {:.1} → {:.1} MB/s; headroom {:.1} → {:.1} points; rests on {} facts\n",
                ob.cross_site_mb_s_before,
                ob.cross_site_mb_s_after,
                ob.headroom_before,
                ob.headroom_after,
                ob.confidence.as_str()
            ));
        }
        for w in &o.waiting_for {
            out.push_str(&format!("    waiting for {w}\n"));
        }
        for n in &o.notes {
            out.push_str(&format!("    note: {n}\n"));
        }
    }
    match &r.calibration_line {
        Some(line) => out.push_str(&format!("Calibration: {line}.\n")),
        None => out.push_str(&format!(
            "Calibration: fewer than {CALIBRATION_MIN} advised moves judged yet.\n"
        )),
    }
    for p in &r.calibration_parts {
        out.push_str(&format!("  {}.\n", p.line));
    }
    out
}
