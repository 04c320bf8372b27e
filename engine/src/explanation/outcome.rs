//! Outcomes (`docs/outcomes.md`): did an applied move do what the advice
//! said it would?
//!
//! Two pure steps. [`predict`] judges a step (one service, or the members
//! of a compound step, in step order) by the model on the estate as it was
//! just before the move: the step's terms and gain, its deciding facts, and
//! per flow of the moved services the round trip and site crossing before
//! and as predicted. [`observe`] then reads the estate after the move, with
//! facts observed since, and computes the effect in the same terms:
//!
//! - round-trip points **at the demand before the move** — each flow's
//!   weight as it was, times the round trip before less the round trip
//!   measured after: the model's error alone (did the round trips and
//!   crossings come out as predicted?), comparable with the prediction;
//! - round-trip points **at the demand after the move** — the same
//!   difference of round trips times the weights measured after: what the
//!   moved service's callers felt at today's traffic;
//! - cross-site MB/s before and after (and their points at both demands);
//! - headroom points at the clusters the step left and entered, before and
//!   after.
//!
//! Nothing is read from a clock: the move time, the evaluation time and the
//! settling window are arguments. Every loop runs in index (= id) order.
//! Before the settling window is over, or while a fact the figures need has
//! no observation newer than the move, the outcome is `waiting` and says
//! for what; an unknown figure is never read as zero.

use serde::{Deserialize, Serialize};

use crate::constraints::Load;
use crate::cost::{
    self, cross_site_points, round_trip_per_ms, Capacity, Ctx, FlowFact, State, Terms,
};
use crate::estate::{format_time, Estate};
use crate::fact::{Class, Fact, FactRef};
use crate::policy::Policy;
use crate::rtt::{Derivation, Rtt, RttSource};

mod observe;
mod report;
mod whatif;
pub use observe::{observe, Observation};
pub use report::{
    basis_words, calibration, calibration_line, calibration_parts, report, text, Applied,
    Calibration, CalibrationPart, Event, Kept, Report, CALIBRATION_MIN,
};
pub use whatif::whatif_prediction;

/// One moved service of a step: where it ran and where it went.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[cfg_attr(feature = "schema", schemars(rename = "OutcomeMember"))]
pub struct Member {
    pub service: String,
    pub from: String,
    pub to: String,
}

/// A step as the model judged it on the estate just before the move.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[cfg_attr(feature = "schema", schemars(rename = "OutcomePrediction"))]
pub struct Prediction {
    /// Points: the sum of `terms`.
    pub gain: f64,
    pub terms: Terms,
    /// The weakest deciding fact's class.
    pub confidence: Class,
    /// Every deciding fact, sorted by key (each once).
    pub facts: Vec<FactRef>,
    /// Every flow with a moved service at one end, in flow (= id) order.
    pub flows: Vec<FlowPrediction>,
}

/// One flow of a moved service, as predicted.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[cfg_attr(feature = "schema", schemars(rename = "OutcomeFlowPrediction"))]
pub struct FlowPrediction {
    pub from: String,
    pub to: String,
    /// The weight and MB/s the prediction used (an unknown one: the
    /// policy's assumption, which its class `guessed` then says).
    pub weight: f64,
    pub mb_s: f64,
    /// Round trip between the flow's ends before the move, ms.
    pub rtt_ms_before: f64,
    /// Round trip between the ends the step puts them on, ms.
    pub rtt_ms: f64,
    pub crosses_before: bool,
    pub crosses: bool,
}

/// What a step's members are refused for, before anything is computed.
fn resolve(e: &Estate, members: &[Member]) -> Result<Vec<(usize, usize)>, String> {
    if members.is_empty() {
        return Err("a step has at least one member".into());
    }
    let mut out = Vec::with_capacity(members.len());
    for (i, m) in members.iter().enumerate() {
        let s = e
            .service_index(&m.service)
            .ok_or_else(|| format!("member {i}: no service {:?} in the estate", m.service))?;
        let from = e
            .cluster_index(&m.from)
            .ok_or_else(|| format!("member {i}: no cluster {:?} in the estate", m.from))?;
        let to = e
            .cluster_index(&m.to)
            .ok_or_else(|| format!("member {i}: no cluster {:?} in the estate", m.to))?;
        if e.services[s].cluster != from {
            return Err(format!(
                "member {i}: {} runs in {}, not {}",
                m.service, e.clusters[e.services[s].cluster].id, m.from
            ));
        }
        if from == to {
            return Err(format!("member {i}: {} stays in {}", m.service, m.from));
        }
        if out.iter().any(|&(o, _)| o == s) {
            return Err(format!("member {i}: {} is named twice", m.service));
        }
        out.push((s, to));
    }
    Ok(out)
}

/// The model's judgement of a step on `before` at time `at` (the move's):
/// each member moved in step order from the placement the earlier members
/// left, exactly as the recommender scores a compound step's members.
pub fn predict(
    before: &Estate,
    policy: &Policy,
    at: i64,
    members: &[Member],
) -> Result<Prediction, String> {
    let moves = resolve(before, members)?;
    let ctx = Ctx::new(before, policy, at);
    let initial = State::initial(before);
    let mut state = initial.clone();
    let mut terms = Terms::from_fn(|_| 0.0);
    let mut facts: Vec<FactRef> = Vec::new();
    for &(s, to) in &moves {
        let t = cost::move_terms(&ctx, &state, s, to);
        terms = Terms::from_fn(|k| terms[k] + t[k]);
        facts.extend(cost::deciding_facts(&ctx, &state, s, to));
        state.apply(&ctx, s, to);
    }
    facts.sort_by(|a, b| a.fact.cmp(&b.fact));
    facts.dedup_by(|a, b| a.fact == b.fact);
    let moved = |s: usize| moves.iter().any(|&(m, _)| m == s);
    let mut flows = Vec::new();
    for (i, f) in before.flows.iter().enumerate() {
        if !moved(f.from) && !moved(f.to) {
            continue;
        }
        let (b0, b1) = (initial.placement[f.from], initial.placement[f.to]);
        let (p0, p1) = (state.placement[f.from], state.placement[f.to]);
        flows.push(FlowPrediction {
            from: before.services[f.from].id.clone(),
            to: before.services[f.to].id.clone(),
            weight: ctx.weight[i],
            mb_s: ctx.mb_s[i],
            rtt_ms_before: ctx.rtt.get(b0, b1).ms,
            rtt_ms: ctx.rtt.get(p0, p1).ms,
            crosses_before: ctx.site_of[b0] != ctx.site_of[b1],
            crosses: ctx.site_of[p0] != ctx.site_of[p1],
        });
    }
    Ok(Prediction {
        gain: terms.gain(),
        terms,
        confidence: cost::confidence(&facts),
        facts,
        flows,
    })
}

/// Where an outcome stands.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[cfg_attr(feature = "schema", schemars(rename = "OutcomeStatus"))]
#[serde(rename_all = "snake_case")]
pub enum Status {
    /// Settled, and every figure rests on facts observed since the move.
    Observed,
    /// Not yet: `waiting_for` says for what.
    Waiting,
    /// A member no longer runs where the step put it (moved again, back,
    /// or gone): the step is not judged, `notes` says where it is.
    Superseded,
}

/// A step's observed effect, against its prediction.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Outcome {
    pub status: Status,
    pub members: Vec<Member>,
    /// RFC 3339: when the move was noticed.
    pub moved_at: String,
    /// RFC 3339: when the settling window ends.
    pub settles_at: String,
    /// The prediction the outcome is held to.
    pub predicted_gain: f64,
    pub predicted_terms: Terms,
    /// What is missing, in words, in a fixed order (the window, then
    /// flows in id order, then paths, then clusters); empty unless
    /// `waiting`.
    pub waiting_for: Vec<String>,
    /// The observed figures; `null` unless `observed`.
    pub observed: Option<Observed>,
    /// Per flow of the prediction, in its order.
    pub flows: Vec<FlowOutcome>,
    /// What the figures do not separate (another move on a flow's other
    /// end, a flow new since the move), and why a step is superseded.
    pub notes: Vec<String>,
}

/// The observed effect of a step, in the prediction's terms (points
/// saved: positive is better).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[cfg_attr(feature = "schema", schemars(rename = "OutcomeObserved"))]
pub struct Observed {
    /// `round_trip_weight × Σ weight_before × (rtt_before − rtt_after)`.
    pub round_trip_at_demand_before: f64,
    /// `round_trip_weight × Σ weight_after × (rtt_before − rtt_after)`.
    pub round_trip_at_demand_after: f64,
    /// `cross_site_weight × Σ mb_s_before × (crosses_before − crosses_after)`.
    pub cross_site_at_demand_before: f64,
    /// `cross_site_weight × Σ mb_s_after × (crosses_before − crosses_after)`.
    pub cross_site_at_demand_after: f64,
    /// MB/s of the step's flows between different sites before the move
    /// (demand before) and after it (demand after).
    pub cross_site_mb_s_before: f64,
    pub cross_site_mb_s_after: f64,
    /// Headroom points of the clusters the step left and entered, before
    /// and after; `headroom` is their difference (before − after).
    pub headroom_before: f64,
    pub headroom_after: f64,
    pub headroom: f64,
    /// The copy term as predicted: a copy is not measured afterwards.
    pub copy: f64,
    /// The four terms summed, at each demand.
    pub gain_at_demand_before: f64,
    pub gain_at_demand_after: f64,
    /// `gain_at_demand_before ÷ predicted_gain`; `null` when the
    /// prediction was exactly zero.
    pub ratio: Option<f64>,
    /// The weakest of `facts_before` and `facts_after`.
    pub confidence: Class,
    /// The facts the before side rests on (as at the move), by key.
    pub facts_before: Vec<FactRef>,
    /// The facts observed since the move, by key.
    pub facts_after: Vec<FactRef>,
}

/// One flow of the prediction: before, predicted, observed.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[cfg_attr(feature = "schema", schemars(rename = "OutcomeFlow"))]
pub struct FlowOutcome {
    pub from: String,
    pub to: String,
    pub weight_before: f64,
    /// `null` until observed since the move.
    pub weight_after: Option<f64>,
    pub mb_s_before: f64,
    pub mb_s_after: Option<f64>,
    pub rtt_ms_before: f64,
    pub rtt_ms_predicted: f64,
    pub rtt_ms_after: Option<f64>,
    pub crosses_before: bool,
    pub crosses_predicted: bool,
    pub crosses_after: Option<bool>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::estate::{load, Format};

    /// When the move happens, and the facts before it were observed.
    const T0: i64 = 1_796_000_000;

    fn estate(a_cluster: &str, facts_at: i64, after: bool) -> Estate {
        estate_with(a_cluster, "c3", facts_at, after)
    }

    fn estate_with(a_cluster: &str, d_cluster: &str, facts_at: i64, after: bool) -> Estate {
        let at = format_time(facts_at);
        let fact = |v: f64| serde_json::json!({"value": v, "class": "measured", "source": "test", "observed_at": at});
        // Before: a→b weight 4, 2 MB/s; a→d weight 1, 5 MB/s. After: the
        // demand has grown (weight 5, 3 MB/s; 1.5, 6 MB/s).
        let (w1, m1, w2, m2) = if after {
            (5.0, 3.0, 1.5, 6.0)
        } else {
            (4.0, 2.0, 1.0, 5.0)
        };
        let (rtt12, rtt23) = if after { (21.0, 1.4) } else { (20.0, 1.0) };
        let (cpu1, cpu2) = if after { (40.0, 4.0) } else { (38.0, 6.0) };
        let doc = serde_json::json!({
            "schema": 1,
            "name": "outcome test",
            "traffic": "declared",
            "sites": [
                {"id": "s1", "name": "S1", "lat": 50.0, "lon": 8.0, "jurisdiction": "eu"},
                {"id": "s2", "name": "S2", "lat": 48.0, "lon": 2.0, "jurisdiction": "eu"}
            ],
            "clusters": [
                {"id": "c1", "site": "s1", "tier": "prod", "trust_zone": "general", "health": "healthy",
                 "cpu_total": 64, "memory_total_gib": 256, "cpu_free": fact(cpu1), "memory_free_gib": fact(200.0)},
                {"id": "c2", "site": "s2", "tier": "prod", "trust_zone": "general", "health": "healthy",
                 "cpu_total": 32, "memory_total_gib": 128, "cpu_free": fact(cpu2), "memory_free_gib": fact(100.0)},
                {"id": "c3", "site": "s2", "tier": "prod", "trust_zone": "general", "health": "healthy",
                 "cpu_total": 32, "memory_total_gib": 128, "cpu_free": fact(16.0), "memory_free_gib": fact(100.0)}
            ],
            "paths": [
                {"a": "c1", "b": "c2", "rtt_ms": fact(rtt12)},
                {"a": "c1", "b": "c3", "rtt_ms": fact(19.0)},
                {"a": "c2", "b": "c3", "rtt_ms": fact(rtt23)}
            ],
            "services": [
                {"id": "a", "owner": "t1", "cluster": a_cluster, "cpu": 2, "memory_gib": 4},
                {"id": "b", "owner": "t2", "cluster": "c2", "cpu": 1, "memory_gib": 2},
                {"id": "d", "owner": "t3", "cluster": d_cluster, "cpu": 1, "memory_gib": 2}
            ],
            "flows": [
                {"from": "a", "to": "b", "weight": fact(w1), "mb_s": fact(m1)},
                {"from": "a", "to": "d", "weight": fact(w2), "mb_s": fact(m2)}
            ]
        });
        load(&doc.to_string(), Format::Json).expect("test estate loads")
    }

    fn a_to_c2() -> Vec<Member> {
        vec![Member {
            service: "a".into(),
            from: "c1".into(),
            to: "c2".into(),
        }]
    }

    fn close(got: f64, want: f64) {
        let scale = want.abs().max(1e-12);
        assert!(
            ((got - want) / scale).abs() <= 1e-9,
            "got {got}, want {want}"
        );
    }

    /// Headroom points of one cluster at free `cpu`/`mem`, written out
    /// from docs/advice.md §5 (not through `Ctx::headroom`).
    fn headroom(p: &Policy, total: (f64, f64), free: (f64, f64)) -> f64 {
        let mut h = 0.0;
        for (t, f) in [(total.0, free.0), (total.1, free.1)] {
            let u = (t - f) / t;
            if u > p.headroom_threshold {
                h += p.headroom_weight * (u - p.headroom_threshold) / (1.0 - p.headroom_threshold);
            }
        }
        h
    }

    #[test]
    fn a_settled_move_is_measured_in_the_prediction_s_terms() {
        let p = Policy::default();
        let before = estate("c1", T0 - 60, false);
        let after = estate("c2", T0 + 120, true);
        let pred = predict(&before, &p, T0, &a_to_c2()).unwrap();
        // Independently: a→b goes from 20 ms to the same cluster; a→d
        // from 19 ms to c2↔c3's 1 ms; both stop crossing sites.
        let same = p.rtt.same_cluster_ms;
        let rt = p.round_trip_weight * (4.0 * (20.0 - same) + 1.0 * (19.0 - 1.0));
        let xs = p.cross_site_weight * (2.0 + 5.0);
        let h_before =
            headroom(&p, (64.0, 256.0), (38.0, 200.0)) + headroom(&p, (32.0, 128.0), (6.0, 100.0));
        let h_pred =
            headroom(&p, (64.0, 256.0), (40.0, 204.0)) + headroom(&p, (32.0, 128.0), (4.0, 96.0));
        close(pred.terms.round_trip, rt);
        close(pred.terms.cross_site, xs);
        close(pred.terms.headroom, h_before - h_pred);
        assert_eq!(pred.terms.copy, 0.0);
        assert_eq!(pred.flows.len(), 2);
        assert_eq!(pred.flows[1].rtt_ms, 1.0);
        assert!(pred.flows[0].crosses_before && !pred.flows[0].crosses);

        let now = T0 + 3 * 3600;
        let out = observe(
            &before,
            &after,
            &p,
            &Observation {
                members: &a_to_c2(),
                prediction: &pred,
                predicted_gain: pred.gain,
                predicted_terms: pred.terms,
                moved_at: T0,
                now,
                settle_s: 3600,
            },
        )
        .unwrap();
        assert_eq!(out.status, Status::Observed, "{:?}", out.waiting_for);
        let ob = out.observed.as_ref().unwrap();
        // After: a→d runs over c2↔c3, measured 1.4 ms; demand grew.
        let rt_b = p.round_trip_weight * (4.0 * (20.0 - same) + 1.0 * (19.0 - 1.4));
        let rt_a = p.round_trip_weight * (5.0 * (20.0 - same) + 1.5 * (19.0 - 1.4));
        close(ob.round_trip_at_demand_before, rt_b);
        close(ob.round_trip_at_demand_after, rt_a);
        close(ob.cross_site_at_demand_before, p.cross_site_weight * 7.0);
        close(ob.cross_site_at_demand_after, p.cross_site_weight * 9.0);
        assert_eq!(ob.cross_site_mb_s_before, 7.0);
        assert_eq!(ob.cross_site_mb_s_after, 0.0);
        let h_after =
            headroom(&p, (64.0, 256.0), (40.0, 200.0)) + headroom(&p, (32.0, 128.0), (4.0, 100.0));
        close(ob.headroom_before, h_before);
        close(ob.headroom_after, h_after);
        let gain_b = rt_b + p.cross_site_weight * 7.0 + (h_before - h_after);
        close(ob.gain_at_demand_before, gain_b);
        close(ob.ratio.unwrap(), gain_b / (rt + xs + h_before - h_pred));
        // Measured facts three hours old have aged to reported (the
        // default window keeps them measured for 15 minutes).
        assert_eq!(ob.confidence, Class::Reported);
        assert!(out.notes.is_empty(), "{:?}", out.notes);
    }

    #[test]
    fn before_the_window_or_the_facts_it_waits_and_says_for_what() {
        let p = Policy::default();
        let before = estate("c1", T0 - 60, false);
        let pred = predict(&before, &p, T0, &a_to_c2()).unwrap();
        let members = a_to_c2();
        let obs = |now: i64| Observation {
            members: &members,
            prediction: &pred,
            predicted_gain: pred.gain,
            predicted_terms: pred.terms,
            moved_at: T0,
            now,
            settle_s: 3600,
        };
        // Facts since the move, but the window is not over.
        let fresh = estate("c2", T0 + 120, true);
        let out = observe(&before, &fresh, &p, &obs(T0 + 600)).unwrap();
        assert_eq!(out.status, Status::Waiting);
        assert_eq!(out.observed, None);
        assert_eq!(out.waiting_for.len(), 1, "{:?}", out.waiting_for);
        assert!(out.waiting_for[0].starts_with("the settling window"));
        // Settled, but every fact is older than the move.
        let stale = estate("c2", T0 - 10, true);
        let out = observe(&before, &stale, &p, &obs(T0 + 7200)).unwrap();
        assert_eq!(out.status, Status::Waiting);
        assert_eq!(
            out.waiting_for,
            vec![
                "flow a→b weight: an observation since the move",
                "flow a→b MB/s: an observation since the move",
                "flow a→d weight: an observation since the move",
                "flow a→d MB/s: an observation since the move",
                "rtt c2↔c3: a measured round trip since the move",
                "c1 cpu_free: an observation since the move",
                "c1 memory_free_gib: an observation since the move",
                "c2 cpu_free: an observation since the move",
                "c2 memory_free_gib: an observation since the move",
            ]
        );
        // Moved back: superseded.
        let back = estate("c1", T0 + 120, true);
        let out = observe(&before, &back, &p, &obs(T0 + 7200)).unwrap();
        assert_eq!(out.status, Status::Superseded);
        assert_eq!(out.notes, vec!["a runs in c1 now, not c2"]);
    }

    #[test]
    fn a_compound_step_waits_for_every_member_then_is_judged_whole() {
        let p = Policy::default();
        let identity = "a|c1|c2+d|c3|c2";
        let event = |id: i64, service: &str, from: &str, at: i64| {
            Event {
            id,
            write: id,
            member: Member {
                service: service.into(),
                from: from.into(),
                to: "c2".into(),
            },
            moved_at: at,
            noticed_by: "kubernetes_import".into(),
            basis: "advised".into(),
            identity: identity.into(),
            snapshot: Some(7),
            advised_at: Some(T0 - 600),
            scenario: None,
            prediction: Some(
                r#"{"gain": 50.0, "terms": {"round_trip": 40.0, "cross_site": 12.0, "headroom": -2.0, "copy": 0.0}, "confidence": "measured", "facts": []}"#.into(),
            ),
        }
        };
        let e1 = event(1, "a", "c1", T0);
        let e2 = event(2, "d", "c3", T0 + 100);
        let befores = vec![
            (1, Some(estate("c1", T0 - 60, false))),
            (2, Some(estate("c2", T0 - 60, false))),
        ];
        // One member moved: the step waits for the other.
        let half = estate("c2", T0 + 50, true);
        let r = report(
            std::slice::from_ref(&e1),
            &befores,
            &half,
            &p,
            T0 + 7200,
            3600,
        );
        let a = &r.applied[0];
        assert_eq!((a.kind.as_str(), a.basis.as_str()), ("compound", "advised"));
        let o = a.outcome.as_ref().unwrap();
        assert_eq!(o.status, Status::Waiting);
        assert_eq!(
            o.waiting_for,
            vec!["d to move c3 → c2 (the rest of the step)"]
        );
        assert_eq!(o.predicted_gain, 50.0);
        // Both moved, and measured since: judged against the estate before
        // the first move, from the last.
        let after = estate_with("c2", "c2", T0 + 200, true);
        let now = T0 + 100 + 7200;
        let r = report(&[e1, e2], &befores, &after, &p, now, 3600);
        assert_eq!(r.applied.len(), 1);
        let a = &r.applied[0];
        assert_eq!(a.events, vec![1, 2]);
        let o = a.outcome.as_ref().unwrap();
        assert_eq!(o.status, Status::Observed, "{:?}", o.waiting_for);
        assert_eq!(o.moved_at, format_time(T0 + 100));
        let ob = o.observed.as_ref().unwrap();
        let same = p.rtt.same_cluster_ms;
        let rt_b = p.round_trip_weight * (4.0 * (20.0 - same) + 1.0 * (19.0 - same));
        close(ob.round_trip_at_demand_before, rt_b);
        close(ob.cross_site_at_demand_before, p.cross_site_weight * 7.0);
        let h_before = headroom(&p, (64.0, 256.0), (38.0, 200.0))
            + headroom(&p, (32.0, 128.0), (6.0, 100.0))
            + headroom(&p, (32.0, 128.0), (16.0, 100.0));
        let h_after = headroom(&p, (64.0, 256.0), (40.0, 200.0))
            + headroom(&p, (32.0, 128.0), (4.0, 100.0))
            + headroom(&p, (32.0, 128.0), (16.0, 100.0));
        close(ob.headroom, h_before - h_after);
        let gain = rt_b + p.cross_site_weight * 7.0 + (h_before - h_after);
        close(ob.gain_at_demand_before, gain);
        close(ob.ratio.unwrap(), gain / 50.0);
        assert_eq!(r.calibration, None);
    }

    #[test]
    fn bad_members_are_named() {
        let p = Policy::default();
        let before = estate("c1", T0, false);
        let m = |s: &str, f: &str, t: &str| {
            vec![Member {
                service: s.into(),
                from: f.into(),
                to: t.into(),
            }]
        };
        assert_eq!(
            predict(&before, &p, T0, &m("x", "c1", "c2")).unwrap_err(),
            "member 0: no service \"x\" in the estate"
        );
        assert_eq!(
            predict(&before, &p, T0, &m("a", "c2", "c3")).unwrap_err(),
            "member 0: a runs in c1, not c2"
        );
        assert_eq!(
            predict(&before, &p, T0, &m("a", "c1", "c1")).unwrap_err(),
            "member 0: a stays in c1"
        );
    }

    #[test]
    fn the_calibration_is_split_by_kind_and_by_class() {
        let judged = [
            ("single", Class::Measured, 0.9),
            ("single", Class::Measured, 1.1),
            ("compound", Class::Reported, 0.5),
            ("single", Class::Reported, 0.8),
        ];
        let parts = calibration_parts(&judged);
        let lines: Vec<&str> = parts.iter().map(|p| p.line.as_str()).collect();
        assert_eq!(
            lines,
            [
                "single moves: 3 judged, median 90 % (middle half 80–110 %)",
                "compound steps: 1 judged (50 %), too few for a median",
                "advised on measured facts: 2 judged (90 %, 110 %), too few for a median",
                "advised on reported facts: 2 judged (50 %, 80 %), too few for a median",
            ]
        );
        assert_eq!(
            (
                parts[0].by.as_str(),
                parts[0].value.as_str(),
                parts[0].count
            ),
            ("kind", "single", 3)
        );
        let c = parts[0].calibration.as_ref().unwrap();
        assert_eq!((c.median, c.p25, c.p75), (0.9, 0.8, 1.1));
        assert_eq!(parts[1].calibration, None);
        assert_eq!(
            (parts[3].by.as_str(), parts[3].value.as_str()),
            ("class", "reported")
        );
        // The order they come in does not matter.
        let mut rev = judged;
        rev.reverse();
        assert_eq!(calibration_parts(&rev), parts);
        assert!(calibration_parts(&[]).is_empty());
    }

    #[test]
    fn calibration_is_the_median_and_quartiles_of_three_or_more() {
        assert_eq!(calibration(&[1.0, 0.5]), None);
        let c = calibration(&[0.9, 0.5, 1.2, 0.8]).unwrap();
        assert_eq!(c.count, 4);
        close(c.median, (0.8 + 0.9) / 2.0);
        assert_eq!((c.p25, c.p75), (0.5, 0.9));
        assert_eq!(
            calibration_line(&calibration(&[0.88, 0.7, 1.0]).unwrap()),
            "in this estate, 3 applied moves delivered a median 88 % of their predicted gain (middle half 70–100 %)"
        );
    }
}
