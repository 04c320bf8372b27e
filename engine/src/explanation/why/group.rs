//! Why of a compound step: the group's own gain against its bar, and the
//! facts whose value would stop the group as a whole.

use super::*;

/// The group's Why from the placement before its first member moves, or
/// `None` when the group does not match the estate.
pub(super) fn group_why(ctx: &Ctx, state: &State, g: &crate::group::Group) -> Option<GroupWhy> {
    let estate = ctx.estate;
    let mut members = Vec::new();
    for a in &g.alone {
        members.push((
            estate.service_index(&a.service)?,
            estate.cluster_index(&a.to)?,
        ));
    }
    let ids: Vec<usize> = members.iter().map(|&(s, _)| s).collect();
    let mut scratch = state.clone();
    let terms = crate::group::replay(ctx, &mut scratch, &members)?;
    let mut sum = Terms::from_fn(|_| 0.0);
    for t in &terms {
        sum = Terms::from_fn(|k| sum.get(k) + t.get(k));
    }
    let facts = crate::advise::group_facts(ctx, state, &members);

    // Gain and cost of the group for a context (one flow fact changed).
    let eval = |c: &Ctx| -> Option<(f64, f64)> {
        let mut st = state.clone();
        let t = crate::group::replay(c, &mut st, &members)?;
        Some((
            t.iter().map(Terms::gain).sum(),
            crate::group::current_cost(c, state, &ids),
        ))
    };
    let mut flows: Vec<usize> = ids
        .iter()
        .flat_map(|&s| ctx.adjacency[s].iter().map(|&(f, _)| f))
        .collect();
    flows.sort_unstable();
    flows.dedup();
    // The group at the current values: the same for every fact varied.
    let base = eval(ctx);
    let mut flips = Vec::new();
    let mut analysed: Vec<&str> = Vec::new();
    for f in &facts {
        let hit = flows.iter().find_map(|&fl| {
            [FlowFact::Weight, FlowFact::MbS]
                .into_iter()
                .find(|&w| ctx.flow_fact(fl, w).fact == f.fact)
                .map(|w| (fl, w))
        });
        let Some((fl, which)) = hit else {
            continue;
        };
        analysed.push(f.fact.as_str());
        let x0 = match which {
            FlowFact::Weight => ctx.weight[fl],
            FlowFact::MbS => ctx.mb_s[fl],
        };
        let mut c1 = ctx.clone();
        // One unit up: gain and cost are linear in the fact, so two
        // evaluations give them exactly (up to rounding).
        match which {
            FlowFact::Weight => c1.weight[fl] = x0 + 1.0,
            FlowFact::MbS => c1.mb_s[fl] = x0 + 1.0,
        }
        let (Some((g0, k0)), Some((g1, k1))) = (base, eval(&c1)) else {
            continue;
        };
        let (dg, dk) = (g1 - g0, k1 - k0);
        let (below, above) = thresholds(ctx.policy, members.len(), x0, (g0, k0), (dg, dk));
        let unit = unit_of_key(&f.fact);
        let sentence = group_sentence(&f.fact, x0, below, above, unit);
        flips.push(GroupFlip {
            fact: f.fact.clone(),
            class: f.class,
            unit,
            value: x0,
            below,
            above,
            sentence,
        });
    }
    // Nearest first: by relative distance to the nearer threshold.
    let distance = |fl: &GroupFlip| {
        let d = |t: Option<f64>| {
            t.map_or(f64::INFINITY, |t| {
                (t - fl.value).abs() / (1.0 + fl.value.abs())
            })
        };
        d(fl.below).min(d(fl.above))
    };
    flips.sort_by(|a, b| {
        distance(a)
            .total_cmp(&distance(b))
            .then_with(|| a.fact.cmp(&b.fact))
    });
    let not_analysed = facts
        .iter()
        .filter(|f| !analysed.contains(&f.fact.as_str()))
        .map(|f| f.fact.clone())
        .collect();
    Some(GroupWhy {
        summary: g.summary.clone(),
        gain: g.gain,
        current_cost: g.current_cost,
        bar: g.bar,
        terms: sum
            .iter()
            .map(|(t, points)| TermPoints {
                term: t.id(),
                points,
            })
            .collect(),
        alone: g.alone.clone(),
        facts,
        flips,
        not_analysed,
    })
}

/// Where a group's clearing its bar flips as one flow fact `x` varies
/// from `x0`, below and above: the gain `G` and the cost `C` are linear in
/// the fact, given at `x0` (`g0`, `k0`) with their slopes (`dg`, `dk`).
fn thresholds(
    p: &Policy,
    members: usize,
    x0: f64,
    (g0, k0): (f64, f64),
    (dg, dk): (f64, f64),
) -> (Option<f64>, Option<f64>) {
    // The group clears when G(x) ≥ max(points, fraction·C(x)) and
    // G(x) > 0: each side linear in x, so the roots are closed form.
    let g_at = |x: f64| g0 + dg * (x - x0);
    let k_at = |x: f64| k0 + dk * (x - x0);
    // The absolute bar once per moved service (`cost::step_bar`).
    let points = p.min_gain_points * members as f64;
    let clears = |x: f64| {
        let g = g_at(x);
        g > 0.0 && g >= points.max(p.min_gain_fraction * k_at(x))
    };
    let mut roots = Vec::new();
    let slope_fraction = dg - p.min_gain_fraction * dk;
    if slope_fraction.abs() > 1e-12 {
        roots.push(x0 - (g0 - p.min_gain_fraction * k0) / slope_fraction);
    }
    if dg.abs() > 1e-12 {
        roots.push(x0 - (g0 - points) / dg);
        roots.push(x0 - g0 / dg);
    }
    let tol = 1e-9 * (1.0 + x0.abs());
    // A root is a flip when the decision differs just beyond it.
    let mut below: Option<f64> = None;
    let mut above: Option<f64> = None;
    for r in roots.into_iter().filter(|r| r.is_finite()) {
        let step = 1e-6 * (1.0 + r.abs());
        if r < x0 - tol && r >= 0.0 && !clears(r - step) {
            below = Some(below.map_or(r, |b: f64| b.max(r)));
        }
        if r > x0 + tol && !clears(r + step) {
            above = Some(above.map_or(r, |a: f64| a.min(r)));
        }
    }
    (below, above)
}

/// The flip of a group's fact in words.
fn group_sentence(
    fact: &str,
    x0: f64,
    below: Option<f64>,
    above: Option<f64>,
    unit: &str,
) -> String {
    let r = crate::constraints::round2;
    match (below, above) {
        (None, None) => format!(
            "No value of {} alone stops the group clearing its bar (now {}).",
            fact,
            r(x0)
        ),
        (b, a) => {
            let mut parts = Vec::new();
            if let Some(b) = b {
                parts.push(format!("falls below {}", r(b)));
            }
            if let Some(a) = a {
                parts.push(format!("rises above {}", r(a)));
            }
            format!(
                "The group stops clearing its bar if {} {} (now {}{}).",
                fact,
                parts.join(" or "),
                r(x0),
                if unit.is_empty() {
                    String::new()
                } else {
                    format!(" {unit}")
                }
            )
        }
    }
}
