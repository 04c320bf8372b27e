//! Observing a step's outcome ([`observe`]): the facts read after the
//! move, each figure measured only from observations newer than it, set
//! against the prediction.

use super::*;

/// Whether a stored fact was observed after `t` (a fact without a time
/// was observed "whenever it was evaluated", which proves nothing).
fn newer(f: &Fact, t: i64) -> bool {
    f.value.is_some() && f.observed_at.is_some_and(|o| o > t)
}

/// Everything [`observe`] needs besides the two estates.
pub struct Observation<'a> {
    pub members: &'a [Member],
    pub prediction: &'a Prediction,
    /// The gain and terms the outcome is held to: the advice's, for an
    /// advised step (its snapshot's), else the model's (`prediction`).
    pub predicted_gain: f64,
    pub predicted_terms: Terms,
    pub moved_at: i64,
    pub now: i64,
    pub settle_s: i64,
}

/// The observed effect of a step: `before` is the estate just before the
/// move (read at `moved_at`), `after` the estate now (read at `now`).
pub fn observe(
    before: &Estate,
    after: &Estate,
    policy: &Policy,
    o: &Observation<'_>,
) -> Result<Outcome, String> {
    let moves = resolve(before, o.members)?;
    let cb = Ctx::new(before, policy, o.moved_at);
    let ca = Ctx::new(after, policy, o.now);
    let settles = o.moved_at.saturating_add(o.settle_s);
    let mut out = Outcome {
        status: Status::Waiting,
        members: o.members.to_vec(),
        moved_at: format_time(o.moved_at),
        settles_at: format_time(settles),
        predicted_gain: o.predicted_gain,
        predicted_terms: o.predicted_terms,
        waiting_for: Vec::new(),
        observed: None,
        flows: Vec::new(),
        notes: Vec::new(),
    };
    // Every member must run where the step put it.
    out.notes.extend(superseded(after, o.members));
    if !out.notes.is_empty() {
        out.status = Status::Superseded;
        return Ok(out);
    }
    if o.now < settles {
        out.waiting_for.push(format!(
            "the settling window: it ends at {} ({} s after the move)",
            format_time(settles),
            o.settle_s
        ));
    }
    let moved = |s: usize| moves.iter().any(|&(m, _)| m == s);
    let (ib, ia) = (State::initial(before), State::initial(after));
    let (mut fb, mut fa): (Vec<FactRef>, Vec<FactRef>) = (Vec::new(), Vec::new());
    let mut paths_missing: Vec<String> = Vec::new();
    let (mut rt_b, mut rt_a, mut xs_b, mut xs_a, mut mb_before, mut mb_after) =
        (0.0, 0.0, 0.0, 0.0, 0.0, 0.0);
    let mut complete = true;
    for (i, f) in before.flows.iter().enumerate() {
        if !moved(f.from) && !moved(f.to) {
            continue;
        }
        let (from, to) = (&before.services[f.from].id, &before.services[f.to].id);
        let predicted = o
            .prediction
            .flows
            .iter()
            .find(|p| &p.from == from && &p.to == to);
        let (b0, b1) = (ib.placement[f.from], ib.placement[f.to]);
        let rtt_before = cb.rtt.get(b0, b1).ms;
        let crosses_before = cb.site_of[b0] != cb.site_of[b1];
        let (w_b, m_b) = (cb.weight[i], cb.mb_s[i]);
        fb.push(cb.flow_fact(i, FlowFact::Weight));
        fb.push(cb.flow_fact(i, FlowFact::MbS));
        fb.push(cb.rtt.fact_ref(before, b0, b1, o.moved_at));
        if crosses_before {
            mb_before += m_b;
        }
        let mut row = FlowOutcome::before(from, to, (w_b, m_b), (rtt_before, crosses_before));
        if let Some(p) = predicted {
            (row.rtt_ms_predicted, row.crosses_predicted) = (p.rtt_ms, p.crosses);
        }
        // The flow in the estate after the move, by its ends' ids.
        let found = flow_by_ids(after, from, to);
        let Some((j, x, y)) = found else {
            complete = false;
            out.waiting_for.push(format!(
                "flow {from}→{to}: not in the estate since the move (no observation of it)"
            ));
            out.flows.push(row);
            continue;
        };
        let g = &after.flows[j];
        let ends = [(f.from, b0, ia.placement[x]), (f.to, b1, ia.placement[y])];
        out.notes
            .extend(also_moved(before, after, &moves, ends, (from, to)));
        let (a0, a1) = (ia.placement[x], ia.placement[y]);
        let rtt = ca.rtt.get(a0, a1);
        let crosses_after = ca.site_of[a0] != ca.site_of[a1];
        row.crosses_after = Some(crosses_after);
        let mut ok = true;
        for (fact, what) in [(&g.weight, "weight"), (&g.mb_s, "MB/s")] {
            if !newer(fact, o.moved_at) {
                ok = false;
                out.waiting_for.push(format!(
                    "flow {from}→{to} {what}: an observation since the move"
                ));
            }
        }
        let rtt_ok = rtt_observed(after, rtt, o.moved_at);
        if !rtt_ok {
            ok = false;
            let (lo, hi) = (a0.min(a1), a0.max(a1));
            let key = format!(
                "rtt {}↔{}: a measured round trip since the move",
                after.clusters[lo].id, after.clusters[hi].id
            );
            if !paths_missing.contains(&key) {
                paths_missing.push(key);
            }
        }
        if ok {
            let (w_a, m_a) = (ca.weight[j], ca.mb_s[j]);
            row.weight_after = Some(w_a);
            row.mb_s_after = Some(m_a);
            row.rtt_ms_after = Some(rtt.ms);
            fa.push(ca.flow_fact(j, FlowFact::Weight));
            fa.push(ca.flow_fact(j, FlowFact::MbS));
            fa.push(ca.rtt.fact_ref(after, a0, a1, o.now));
            let d = rtt_before - rtt.ms;
            rt_b += round_trip_per_ms(policy, w_b) * d;
            rt_a += round_trip_per_ms(policy, w_a) * d;
            let dx = (crosses_before as i32 - crosses_after as i32) as f64;
            xs_b += cross_site_points(policy, m_b) * dx;
            xs_a += cross_site_points(policy, m_a) * dx;
            if crosses_after {
                mb_after += m_a;
            }
        } else {
            complete = false;
        }
        out.flows.push(row);
    }
    out.waiting_for.extend(paths_missing);
    // Flows of a moved service the prediction did not know.
    let unpredicted = unpredicted_flows(after, o.members, &out.flows);
    out.notes.extend(unpredicted);
    let (h_b, h_a, headroom_complete) =
        headroom_observed(&cb, &ca, o, &mut fb, &mut fa, &mut out.waiting_for);
    complete &= headroom_complete;
    if !complete || !out.waiting_for.is_empty() {
        out.status = Status::Waiting;
        return Ok(out);
    }
    out.status = Status::Observed;
    let sums = AtDemand {
        rt_b,
        rt_a,
        xs_b,
        xs_a,
        mb_before,
        mb_after,
    };
    out.observed = Some(observed(o, sums, (h_b, h_a), fb, fa));
    Ok(out)
}

impl FlowOutcome {
    /// A flow's row with what was known before the move; the prediction is
    /// the before unless one is given, the after unknown until observed.
    fn before(
        from: &str,
        to: &str,
        (w_b, m_b): (f64, f64),
        (rtt_before, crosses_before): (f64, bool),
    ) -> FlowOutcome {
        FlowOutcome {
            from: from.to_string(),
            to: to.to_string(),
            weight_before: w_b,
            weight_after: None,
            mb_s_before: m_b,
            mb_s_after: None,
            rtt_ms_before: rtt_before,
            rtt_ms_predicted: rtt_before,
            rtt_ms_after: None,
            crosses_before,
            crosses_predicted: crosses_before,
            crosses_after: None,
        }
    }
}

/// Notes for the ends of a flow that moved since the step without being
/// its members (`ends`: service, cluster before, cluster after): their
/// effect on the flow is included, not separated.
fn also_moved(
    before: &Estate,
    after: &Estate,
    moves: &[(usize, usize)],
    ends: [(usize, usize, usize); 2],
    (from, to): (&str, &str),
) -> Vec<String> {
    let moved = |s: usize| moves.iter().any(|&(m, _)| m == s);
    let mut notes = Vec::new();
    for (peer, pb, pa) in ends {
        if !moved(peer) && before.clusters[pb].id != after.clusters[pa].id {
            notes.push(format!(
                "{} also moved ({} → {}) since the step: its effect on flow {from}→{to} is included, not separated",
                before.services[peer].id, before.clusters[pb].id, after.clusters[pa].id
            ));
        }
    }
    notes
}

/// Whether a round trip was observed since the move: a measured path
/// newer than it, or the same cluster (the policy's nominal round trip, as
/// in the prediction; nothing to measure).
fn rtt_observed(after: &Estate, rtt: &Rtt, moved_at: i64) -> bool {
    match (rtt.derivation, rtt.source) {
        // Same cluster: the policy's nominal round trip, as in the
        // prediction; there is nothing to measure.
        (Derivation::SameCluster, _) => true,
        (Derivation::MeasuredPath, RttSource::Path(p)) => newer(&after.paths[p].rtt_ms, moved_at),
        _ => false,
    }
}

/// The flow `from`→`to` of an estate by its ends' ids: its index and its
/// ends' indices.
fn flow_by_ids(e: &Estate, from: &str, to: &str) -> Option<(usize, usize, usize)> {
    let (x, y) = (e.service_index(from)?, e.service_index(to)?);
    e.flows
        .iter()
        .position(|g| g.from == x && g.to == y)
        .map(|j| (j, x, y))
}

/// Round-trip and cross-site points a step saved at the demand before and
/// after it, and the cross-site MB/s before and after.
struct AtDemand {
    rt_b: f64,
    rt_a: f64,
    xs_b: f64,
    xs_a: f64,
    mb_before: f64,
    mb_after: f64,
}

/// The observed effect, once every figure is in: the gains at the demand
/// before and after, their ratio to the prediction, the weakest class of
/// the facts they rest on.
fn observed(
    o: &Observation<'_>,
    sums: AtDemand,
    (h_b, h_a): (f64, f64),
    mut fb: Vec<FactRef>,
    mut fa: Vec<FactRef>,
) -> Observed {
    let AtDemand {
        rt_b,
        rt_a,
        xs_b,
        xs_a,
        mb_before,
        mb_after,
    } = sums;
    for facts in [&mut fb, &mut fa] {
        facts.sort_by(|a, b| a.fact.cmp(&b.fact));
        facts.dedup_by(|a, b| a.fact == b.fact);
    }
    let copy = o.predicted_terms.copy;
    let headroom = h_b - h_a;
    let gain_b = rt_b + xs_b + headroom + copy;
    let gain_a = rt_a + xs_a + headroom + copy;
    let confidence = crate::fact::weakest(fb.iter().chain(fa.iter()).map(|f| f.class))
        .unwrap_or(Class::Measured);
    Observed {
        round_trip_at_demand_before: rt_b,
        round_trip_at_demand_after: rt_a,
        cross_site_at_demand_before: xs_b,
        cross_site_at_demand_after: xs_a,
        cross_site_mb_s_before: mb_before,
        cross_site_mb_s_after: mb_after,
        headroom_before: h_b,
        headroom_after: h_a,
        headroom,
        copy,
        gain_at_demand_before: gain_b,
        gain_at_demand_after: gain_a,
        ratio: (o.predicted_gain != 0.0 && o.predicted_gain.is_finite())
            .then(|| gain_b / o.predicted_gain),
        confidence,
        facts_before: fb,
        facts_after: fa,
    }
}

/// Why a step is superseded: a member no longer in the estate, or running
/// elsewhere than the step put it. Empty when every member is where it went.
fn superseded(after: &Estate, members: &[Member]) -> Vec<String> {
    let mut notes = Vec::new();
    for m in members {
        let now_at = after
            .service_index(&m.service)
            .map(|s| after.clusters[after.services[s].cluster].id.as_str());
        if now_at != Some(m.to.as_str()) {
            notes.push(match now_at {
                None => format!("{} is no longer in the estate", m.service),
                Some(c) => format!("{} runs in {c} now, not {}", m.service, m.to),
            });
        }
    }
    notes
}

/// Headroom at every cluster a member left or entered, in id order: before
/// the move, and now where both free capacities were observed since; their
/// facts added to `fb`/`fa`, what is still awaited to `waiting_for`.
/// Answers (before, after, whether every cluster was observed).
fn headroom_observed(
    cb: &Ctx,
    ca: &Ctx,
    o: &Observation<'_>,
    fb: &mut Vec<FactRef>,
    fa: &mut Vec<FactRef>,
    waiting_for: &mut Vec<String>,
) -> (f64, f64, bool) {
    let (before, after) = (cb.estate, ca.estate);
    let mut complete = true;
    let mut clusters: Vec<&str> = o
        .members
        .iter()
        .flat_map(|m| [m.from.as_str(), m.to.as_str()])
        .collect();
    clusters.sort();
    clusters.dedup();
    let (mut h_b, mut h_a) = (0.0, 0.0);
    for id in clusters {
        let b = before.cluster_index(id).expect("resolved above");
        h_b += cb.headroom(b, Load::default());
        fb.push(cb.capacity_fact(b, Capacity::Cpu));
        fb.push(cb.capacity_fact(b, Capacity::Memory));
        let Some(a) = after.cluster_index(id) else {
            complete = false;
            waiting_for.push(format!("cluster {id}: not in the estate since the move"));
            continue;
        };
        let c = &after.clusters[a];
        let mut ok = true;
        for (fact, what) in [
            (&c.cpu_free, "cpu_free"),
            (&c.memory_free_gib, "memory_free_gib"),
        ] {
            if !newer(fact, o.moved_at) {
                ok = false;
                waiting_for.push(format!("{id} {what}: an observation since the move"));
            }
        }
        if ok {
            h_a += ca.headroom(a, Load::default());
            fa.push(ca.capacity_fact(a, Capacity::Cpu));
            fa.push(ca.capacity_fact(a, Capacity::Memory));
        } else {
            complete = false;
        }
    }
    (h_b, h_a, complete)
}

/// Flows of a member the prediction did not know: new since the move, not
/// counted.
fn unpredicted_flows(after: &Estate, members: &[Member], rows: &[FlowOutcome]) -> Vec<String> {
    let mut notes = Vec::new();
    for g in &after.flows {
        let (x, y) = (&after.services[g.from].id, &after.services[g.to].id);
        let member = |id: &String| members.iter().any(|m| &m.service == id);
        if (member(x) || member(y)) && !rows.iter().any(|r| &r.from == x && &r.to == y) {
            notes.push(format!(
                "flow {x}→{y} is new since the move: not in the prediction, not counted"
            ));
        }
    }
    notes
}
