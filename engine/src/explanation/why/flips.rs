//! One move's Why: the scene before its step, the gain's terms, and each
//! deciding fact's flip values for flow weights, MB/s and RTTs (linear in
//! the fact); free capacity is in [`super::capacity`].

use super::*;

pub(super) fn explain_move(
    ctx: &Ctx,
    state: &State,
    cands: &[usize],
    s: usize,
    to: usize,
    m: &Move,
    scratch: &mut Scratch,
) -> MoveWhy {
    let estate = ctx.estate;
    let policy = ctx.policy;
    let from = state.placement[s];
    let svc = &estate.services[s];
    let Some(b) = cands.iter().position(|&c| c == to) else {
        return unexplained(m, "the destination is not allowed for this service");
    };
    // Advice never moves a service whose request is unknown (its fits are
    // all can't tell), so such a move does not match the estate.
    let (Some(cpu), Some(memory_gib)) = (svc.cpu, svc.memory_gib) else {
        return unexplained(
            m,
            "the service's request is unknown, so advice cannot have moved it",
        );
    };

    // The engine's numbers at the current values, by the same expressions
    // as `advise` (so comparisons here agree with it bit for bit).
    let (rt0, xs0) = state.flow_cost_at(ctx, s, from);
    let here = rt0 + xs0;
    let l = state.load[from];
    let without = Load {
        cpu_in: l.cpu_in - cpu,
        memory_in: l.memory_in - memory_gib,
    };
    let h_from = ctx.headroom(from, l);
    let h_from_after = ctx.headroom(from, without);
    let leave = h_from - h_from_after;
    let cc = here + leave;
    // Through the cost module, the one place the copy term is written:
    // `0.0 - w×gb` is +0.0 for a service without data, where `-w×gb`
    // would print "-0.0" in the breakdown.
    let copy = crate::cost::copy_term(ctx, s);
    let n = cands.len();
    let mut sc = Scene {
        ctx,
        state,
        s,
        from,
        cands,
        b,
        here,
        h_from,
        h_from_after,
        cc,
        copy,
        rt: Vec::with_capacity(n),
        xs: Vec::with_capacity(n),
        arrive: Vec::with_capacity(n),
        g: Vec::with_capacity(n),
        fit: Vec::with_capacity(n),
    };
    for &c in cands {
        let (rt1, xs1) = state.flow_cost_at(ctx, s, c);
        sc.rt.push(rt0 - rt1);
        sc.xs.push(xs0 - xs1);
        let lc = state.load[c];
        let after = Load {
            cpu_in: lc.cpu_in + cpu,
            memory_in: lc.memory_in + memory_gib,
        };
        sc.arrive.push(ctx.headroom(c, after) - ctx.headroom(c, lc));
        sc.fit.push(fits_with(ctx, c, lc, cpu, memory_gib, None));
    }
    let depart = h_from_after - h_from;
    for k in 0..n {
        let g = sc.gain_of(k, depart, sc.arrive[k]);
        sc.g.push(g);
    }
    let gain = sc.g[b];
    let bar = crate::cost::bar(ctx, cc);
    let bar_kind = if policy.min_gain_fraction * cc >= policy.min_gain_points {
        BarKind::Fraction
    } else {
        BarKind::Points
    };
    let terms = sc
        .terms_of(b, depart, sc.arrive[b])
        .iter()
        .map(|(t, points)| TermPoints {
            term: t.id(),
            points,
        })
        .collect();
    let flows = flow_points(ctx, state, s, to);
    let runner_up = runner_up(&sc, bar);

    let mut why = MoveWhy {
        step: m.step,
        service: svc.id.clone(),
        from: estate.clusters[from].id.clone(),
        to: estate.clusters[to].id.clone(),
        gain,
        current_cost: cc,
        bar,
        bar_kind,
        terms,
        flows,
        headroom: HeadroomPoints {
            from_saves: leave,
            to_costs: sc.arrive[b],
        },
        runner_up,
        facts: m.facts.clone(),
        flips: Vec::new(),
        other_flips: Vec::new(),
        note: None,
        group: None,
    };

    // The model must agree with the engine at the current values: the
    // destination fits, clears both bars and beats every fitting rival.
    let decided = sc.fit[b]
        && gain >= bar
        && gain > 0.0
        && (0..n).all(|k| k == b || !sc.fit[k] || sc.g[k] < gain || (sc.g[k] == gain && k > b));
    if !decided && m.group.is_some() {
        // A member of a compound step: the group decides (see `group_why`).
        return why;
    }
    if !decided {
        why.note = Some(
            "not explained: at the current values this move is not the service's best \
             destination (the advice does not come from this estate and policy)"
                .into(),
        );
        return why;
    }

    // RTT facts: how much each moves the current cost (`common`) and each
    // candidate's gain, per ms.
    let rtt_slopes = rtt_slopes(&sc, scratch);

    // Deciding facts: trace each key back to a stored fact.
    let mut done: BTreeMap<FactId, (Found, Found)> = BTreeMap::new();
    why.flips = deciding_flips(&sc, &m.facts, &rtt_slopes, &mut done);

    why.other_flips = other_flips(&sc, &rtt_slopes, &mut done);
    why.other_flips.sort_by(|a, b| a.fact.cmp(&b.fact));
    why
}

/// Each flow of the moving service: its facts, and its round-trip and
/// cross-site points from where it is and at the destination.
fn flow_points(ctx: &Ctx, state: &State, s: usize, to: usize) -> Vec<FlowPoints> {
    let estate = ctx.estate;
    let from = state.placement[s];
    ctx.adjacency[s]
        .iter()
        .map(|&(f, p)| {
            let q = state.placement[p];
            let (r0, x0) = ctx.flow_cost(f, from, q);
            let (r1, x1) = ctx.flow_cost(f, to, q);
            let fl = &estate.flows[f];
            FlowPoints {
                flow: format!(
                    "{}→{}",
                    estate.services[fl.from].id, estate.services[fl.to].id
                ),
                peer: estate.services[p].id.clone(),
                peer_cluster: estate.clusters[q].id.clone(),
                weight: ctx.weight[f],
                mb_s: ctx.mb_s[f],
                rtt_from_ms: ctx.rtt.get(from, q).ms,
                rtt_to_ms: ctx.rtt.get(to, q).ms,
                round_trip_from: r0,
                round_trip_to: r1,
                cross_site_from: x0,
                cross_site_to: x1,
            }
        })
        .collect()
}

/// The best fitting destination other than the chosen one, if any.
fn runner_up(sc: &Scene, bar: f64) -> Option<Alternative> {
    (0..sc.cands.len())
        .filter(|&k| k != sc.b && sc.fit[k])
        .fold(None::<usize>, |best, k| match best {
            Some(j) if sc.g[j] >= sc.g[k] => Some(j),
            _ => Some(k),
        })
        .map(|k| Alternative {
            cluster: sc.ctx.estate.clusters[sc.cands[k]].id.clone(),
            gain: sc.g[k],
            clears_bar: sc.g[k] >= bar && sc.g[k] > 0.0,
        })
}

/// The flip row of each deciding fact (`facts`, the move's), each stored
/// fact analysed once (kept in `done`); rows keyed by cluster pairs whose
/// RTT comes from one site link share its thresholds and name every pair.
fn deciding_flips(
    sc: &Scene,
    facts: &[FactRef],
    rtt_slopes: &[RttSlope],
    done: &mut BTreeMap<FactId, (Found, Found)>,
) -> Vec<Flip> {
    let mut flips = Vec::new();
    let keys = deciding_keys(sc);
    // Rows keyed by cluster pairs whose RTT comes from one site link share
    // its thresholds: their sentences name every such pair.
    let mut shared: BTreeMap<FactId, Vec<&str>> = BTreeMap::new();
    for f in facts {
        if let Some(Ok(id @ (FactId::Link(_) | FactId::SiteRtt(..) | FactId::SameSite(_)))) =
            keys.get(f.fact.as_str())
        {
            shared.entry(*id).or_default().push(f.fact.as_str());
        }
    }
    for f in facts {
        let flip = match keys.get(f.fact.as_str()) {
            Some(Ok(id)) => {
                let found = *done
                    .entry(*id)
                    .or_insert_with(|| analyse(sc, *id, rtt_slopes));
                let label = shared.get(id).map(|k| k.join(", "));
                flip_row(sc, f.clone(), Some(*id), found, label)
            }
            Some(Err(d)) => not_a_fact(f, *d, sc.ctx.policy),
            None if f.value.is_none() => Flip {
                fact: f.fact.clone(),
                stored_as: None,
                derivation: None,
                estimated: false,
                applies_to: None,
                value: None,
                class: f.class,
                unit: unit_of_key(&f.fact),
                status: FlipStatus::Unknown,
                above: None,
                below: None,
                sentences: vec![unknown_sentence(f)],
                id: None,
            },
            None => Flip {
                fact: f.fact.clone(),
                stored_as: None,
                derivation: None,
                estimated: false,
                applies_to: None,
                value: f.value,
                class: f.class,
                unit: unit_of_key(&f.fact),
                status: FlipStatus::NotAnalysed,
                above: None,
                below: None,
                sentences: vec![format!("{}: not analysed.", f.fact)],
                id: None,
            },
        };
        flips.push(flip);
    }
    flips
}

/// Flip rows of every other fact that enters the decision, those with a
/// threshold only (facts already analysed are in `done`).
fn other_flips(
    sc: &Scene,
    rtt_slopes: &[RttSlope],
    done: &mut BTreeMap<FactId, (Found, Found)>,
) -> Vec<Flip> {
    let ctx = sc.ctx;
    let mut out = Vec::new();
    // Every other fact that enters this service's decision: its flows'
    // weights and MB/s, the RTT facts of its flows from the source and from
    // each candidate, and the free capacity of the source and of each
    // candidate. Only those with a threshold are listed.
    let mut universe: Vec<FactId> = Vec::new();
    for &(f, _) in &ctx.adjacency[sc.s] {
        universe.push(FactId::Weight(f));
        universe.push(FactId::MbS(f));
    }
    universe.extend(rtt_slopes.iter().map(|r| r.id));
    for c in std::iter::once(sc.from).chain(sc.cands.iter().copied()) {
        universe.push(FactId::Cpu(c));
        universe.push(FactId::Memory(c));
    }
    for id in universe {
        if done.contains_key(&id) || (is_capacity(id) && id.value(ctx).is_none()) {
            continue;
        }
        let found = analyse(sc, id, rtt_slopes);
        done.insert(id, found);
        if found.0.is_none() && found.1.is_none() {
            continue;
        }
        let fact = stored_fact_ref(ctx, id);
        // Keyed by the stored fact itself: no note needed.
        out.push(flip_row(sc, fact, Some(id), found, None));
    }
    out
}

pub(super) fn is_capacity(id: FactId) -> bool {
    matches!(id, FactId::Cpu(_) | FactId::Memory(_))
}

/// Key of every fact `cost::deciding_facts` can name for this move →
/// the stored fact, or the rung of a nominal RTT.
pub(super) fn deciding_keys(sc: &Scene) -> BTreeMap<String, Result<FactId, Derivation>> {
    let ctx = sc.ctx;
    let to = sc.cands[sc.b];
    let mut keys = BTreeMap::new();
    for &(f, p) in &ctx.adjacency[sc.s] {
        let q = sc.state.placement[p];
        keys.insert(
            ctx.flow_fact(f, FlowFact::Weight).fact,
            Ok(FactId::Weight(f)),
        );
        keys.insert(ctx.flow_fact(f, FlowFact::MbS).fact, Ok(FactId::MbS(f)));
        for c in [sc.from, to] {
            let key = ctx.rtt.fact_ref(ctx.estate, c, q, ctx.now).fact;
            keys.insert(key, FactId::of_rtt(ctx, c, q));
        }
    }
    for c in [sc.from, to] {
        for (which, id) in [
            (Capacity::Cpu, FactId::Cpu(c)),
            (Capacity::Memory, FactId::Memory(c)),
        ] {
            if id.value(ctx).is_some() {
                keys.insert(ctx.capacity_fact(c, which).fact, Ok(id));
            }
        }
    }
    keys
}

/// How one RTT fact moves the current cost and each candidate's gain.
pub(super) struct RttSlope {
    id: FactId,
    /// d(current cost)/dx; also added to every candidate's gain slope.
    common: f64,
    /// Per candidate: minus d(cost at the candidate)/dx.
    per: Vec<f64>,
}

pub(super) fn rtt_slopes(sc: &Scene, scratch: &mut Scratch) -> Vec<RttSlope> {
    let ctx = sc.ctx;
    let rw = crate::cost::round_trip_per_ms(ctx.policy, 1.0); // per unit of weight
    let n = sc.cands.len();
    let mut out: Vec<RttSlope> = Vec::new();
    let mut slot_of = |id: FactId, out: &mut Vec<RttSlope>| -> usize {
        let ns = scratch.ns;
        let slot = match id {
            FactId::Link(i) => &mut scratch.link_slot[i],
            FactId::Path(i) => &mut scratch.path_slot[i],
            FactId::SiteRtt(a, b) => &mut scratch.site_slot[a * ns + b],
            FactId::SameSite(a) => &mut scratch.site_slot[a * ns + a],
            _ => unreachable!("only RTT facts"),
        };
        if *slot == usize::MAX {
            *slot = out.len();
            out.push(RttSlope {
                id,
                common: 0.0,
                per: vec![0.0; n],
            });
        }
        *slot
    };
    for &(f, p) in &ctx.adjacency[sc.s] {
        let q = sc.state.placement[p];
        let w = rw * ctx.weight[f];
        if let Ok(id) = FactId::of_rtt(ctx, sc.from, q) {
            let i = slot_of(id, &mut out);
            out[i].common += w;
        }
        for (k, &c) in sc.cands.iter().enumerate() {
            if let Ok(id) = FactId::of_rtt(ctx, c, q) {
                let i = slot_of(id, &mut out);
                out[i].per[k] -= w;
            }
        }
    }
    // Release the slots for the next move.
    for r in &out {
        match r.id {
            FactId::Link(i) => scratch.link_slot[i] = usize::MAX,
            FactId::Path(i) => scratch.path_slot[i] = usize::MAX,
            FactId::SiteRtt(a, b) => scratch.site_slot[a * scratch.ns + b] = usize::MAX,
            FactId::SameSite(a) => scratch.site_slot[a * scratch.ns + a] = usize::MAX,
            _ => {}
        }
    }
    out.sort_by_key(|r| r.id);
    out
}

/// Thresholds of one fact: (above, below).
pub(super) fn analyse(sc: &Scene, id: FactId, rtt: &[RttSlope]) -> (Found, Found) {
    let ctx = sc.ctx;
    let estate = ctx.estate;
    let n = sc.cands.len();
    // Per candidate: slope of its gain and the magnitude behind it.
    let (x0, cc_d, slopes): (f64, f64, Vec<(f64, f64)>) = match id {
        FactId::Cpu(c) | FactId::Memory(c) => return analyse_capacity(sc, id, c),
        FactId::Weight(f) | FactId::MbS(f) => {
            let fl = &estate.flows[f];
            let peer = if fl.from == sc.s { fl.to } else { fl.from };
            let q = sc.state.placement[peer];
            if let FactId::Weight(_) = id {
                let rw = crate::cost::round_trip_per_ms(ctx.policy, 1.0); // per unit of weight
                let ra = ctx.rtt.get(sc.from, q).ms;
                let per = sc
                    .cands
                    .iter()
                    .map(|&c| {
                        let rc = ctx.rtt.get(c, q).ms;
                        (rw * (ra - rc), rw * (ra + rc))
                    })
                    .collect();
                (ctx.weight[f], rw * ra, per)
            } else {
                let xw = crate::cost::cross_site_points(ctx.policy, 1.0); // per MB/s
                let crosses = |c: usize| (ctx.site_of[c] != ctx.site_of[q]) as u8 as f64;
                let ca = crosses(sc.from);
                let per = sc
                    .cands
                    .iter()
                    .map(|&c| (xw * (ca - crosses(c)), xw * (ca + crosses(c))))
                    .collect();
                (ctx.mb_s[f], xw * ca, per)
            }
        }
        FactId::Path(_) | FactId::Link(_) | FactId::SiteRtt(..) | FactId::SameSite(_) => {
            let Some(x0) = id.value(ctx) else {
                return (None, None);
            };
            match rtt.iter().find(|r| r.id == id) {
                // Weights are never negative: `common` and `-per` are the
                // magnitudes of their sums.
                Some(r) => (
                    x0,
                    r.common,
                    r.per.iter().map(|p| (r.common + p, r.common - p)).collect(),
                ),
                None => (x0, 0.0, vec![(0.0, 0.0); n]),
            }
        }
    };
    let piece = Piece {
        refx: x0,
        cc: Lin {
            v: sc.cc,
            d: cc_d,
            m: cc_d.abs(),
        },
        g: sc
            .g
            .iter()
            .zip(&slopes)
            .map(|(&v, &(d, m))| Lin { v, d, m })
            .collect(),
        fit: sc.fit.clone(),
        tie: 0.0,
    };
    let span = |lo, hi, up| Span {
        lo,
        hi,
        up,
        floor: !up,
    };
    let above = solve(sc, &piece, span(x0, f64::INFINITY, true));
    let below = if x0 > 0.0 {
        solve(sc, &piece, span(0.0, x0, false))
    } else {
        None
    };
    (above, below)
}
