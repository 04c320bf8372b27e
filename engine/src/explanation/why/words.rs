//! A flip as a result row and in words: the row of each fact, estimates
//! and derivations, the sentences and the number formats.

use super::*;

/// `link_label`: the row is keyed by a cluster pair whose RTT comes from a
/// site link (or from an estimate that applies to several pairs); the
/// sentences name the link and every deciding pair it sets (`link_label`),
/// since changing the link changes all of them.
pub(super) fn flip_row(
    sc: &Scene,
    f: FactRef,
    id: Option<FactId>,
    found: (Found, Found),
    link_label: Option<String>,
) -> Flip {
    let estate = sc.ctx.estate;
    let stored_as = match id {
        Some(FactId::Link(i)) if link_label.is_some() => {
            let l = &estate.links[i];
            Some(format!(
                "site link {}↔{}",
                estate.sites[l.a].id, estate.sites[l.b].id
            ))
        }
        _ => None,
    };
    let unit = id.map_or("", |i| i.unit());
    let value = f.value;
    let estimate = id.and_then(|id| estimate_of(sc.ctx, id));
    let what = match (&link_label, &stored_as, &estimate) {
        (Some(label), Some(link), _) => format!("{label} ({link})"),
        (Some(label), _, Some(e)) => format!("{label} ({}: {})", e.applies_to, e.words),
        // Keyed by the sites themselves (`other_flips`).
        (None, _, Some(e)) => format!("{} ({})", f.fact, e.words),
        _ => f.fact.clone(),
    };
    let measured = estimate.is_some();
    let mk = |t: Found, up: bool| {
        t.map(|(x, cond)| {
            let effect = effect_of(sc, cond);
            let sentence = sentence(&what, measured, up, x, value, unit, &effect, sc);
            Threshold {
                value: x,
                effect,
                sentence,
            }
        })
    };
    let above = mk(found.0, true);
    let below = mk(found.1, false);
    let mut sentences: Vec<String> = above
        .iter()
        .chain(below.iter())
        .map(|t| t.sentence.clone())
        .collect();
    if sentences.is_empty() {
        sentences.push(format!("No value of {} changes it.", f.fact));
    }
    Flip {
        fact: f.fact,
        stored_as,
        derivation: estimate.as_ref().map(|e| e.derivation.as_str()),
        estimated: estimate.is_some(),
        applies_to: estimate.map(|e| e.applies_to),
        value,
        class: f.class,
        unit,
        status: FlipStatus::Exact,
        above,
        below,
        sentences,
        id,
    }
}

/// An estimated RTT analysed as a variable, for words.
pub(super) struct Estimate {
    derivation: Derivation,
    /// `sites fra↔nw` or `site fra`.
    applies_to: String,
    /// `unknown, 80 ms assumed`, `great-circle estimate 15.38 ms`,
    /// `same-site nominal 1 ms`.
    words: String,
}

pub(super) fn estimate_of(ctx: &Ctx, id: FactId) -> Option<Estimate> {
    let e = ctx.estate;
    let (a, b) = match id {
        FactId::SiteRtt(a, b) => (a, b),
        FactId::SameSite(a) => (a, a),
        _ => return None,
    };
    let rtt = ctx.rtt.site(a, b);
    let applies_to = if a == b {
        format!("site {}", e.sites[a].id)
    } else {
        format!("sites {}↔{}", e.sites[a].id, e.sites[b].id)
    };
    let words = match rtt.derivation {
        Derivation::Unknown => format!("unknown, {} ms assumed", num(rtt.ms)),
        Derivation::GreatCircle => format!("great-circle estimate {} ms", num(rtt.ms)),
        _ => format!("same-site nominal {} ms", num(rtt.ms)),
    };
    Some(Estimate {
        derivation: rtt.derivation,
        applies_to,
        words,
    })
}

pub(super) fn not_a_fact(f: &FactRef, d: Derivation, policy: &Policy) -> Flip {
    let what = match d {
        Derivation::SameCluster => format!(
            "the policy's same-cluster nominal ({} ms)",
            num(policy.rtt.same_cluster_ms)
        ),
        Derivation::SameSite => format!(
            "the policy's same-site nominal ({} ms)",
            num(policy.rtt.same_site_ms)
        ),
        Derivation::GreatCircle => "a great-circle estimate from the two sites' coordinates".into(),
        Derivation::Unknown => format!(
            "the policy's default for an unknown RTT ({} ms)",
            num(policy.rtt.unknown_ms)
        ),
        Derivation::MeasuredPath | Derivation::SiteLink => "a stored fact".into(),
    };
    let hint = if d == Derivation::Unknown {
        " (a measured path or a site link would replace it)"
    } else {
        ""
    };
    Flip {
        fact: f.fact.clone(),
        stored_as: None,
        derivation: Some(d.as_str()),
        estimated: true,
        applies_to: None,
        value: f.value,
        class: f.class,
        unit: "ms",
        status: FlipStatus::NotAFact,
        above: None,
        below: None,
        sentences: vec![format!(
            "{} is {what}, not a stored fact: no flip computed{hint}.",
            f.fact
        )],
        id: None,
    }
}

/// The flip sentence of a deciding fact whose value is unknown. Data a
/// reader could not see says why, and what the move's numbers leave out.
pub(super) fn unknown_sentence(f: &FactRef) -> String {
    let data = crate::cost::unknown_data_words(std::slice::from_ref(f));
    if data.is_empty() {
        return format!(
            "{} is unknown, so there is no value to move from: not analysed.",
            f.fact
        );
    }
    let data = data.trim_end_matches("; ");
    let copy = if f.fact.starts_with(crate::cost::UNKNOWN_DATA) {
        " The copy term counts no data for it: the copy cost is unknown, not 0."
    } else {
        " A move is allowed only because nothing says it is bound; it may not be."
    };
    let mut first = data.to_string();
    if let Some(c) = first.get_mut(0..1) {
        c.make_ascii_uppercase();
    }
    format!("{first}: the move rests on a guess, not analysed.{copy}")
}

pub(super) fn unit_of_key(key: &str) -> &'static str {
    if key.ends_with("cpu_free") {
        "cores"
    } else if key.ends_with("memory_free_gib") {
        "GiB"
    } else if key.ends_with("mb_s") {
        "MB/s"
    } else if key.starts_with("rtt ") {
        "ms"
    } else if key.starts_with("traffic ") {
        // The window a service's traffic was observed over.
        "s"
    } else if key.starts_with(crate::cost::UNKNOWN_DATA) {
        "GB"
    } else {
        ""
    }
}

/// A stored fact as a result row (for `other_flips`).
pub(super) fn stored_fact_ref(ctx: &Ctx, id: FactId) -> FactRef {
    let e = ctx.estate;
    match id {
        FactId::Weight(f) => ctx.flow_fact(f, FlowFact::Weight),
        FactId::MbS(f) => ctx.flow_fact(f, FlowFact::MbS),
        FactId::Cpu(c) => ctx.capacity_fact(c, Capacity::Cpu),
        FactId::Memory(c) => ctx.capacity_fact(c, Capacity::Memory),
        FactId::Path(i) => {
            let p = &e.paths[i];
            let mut r = crate::cost::fact_ref(
                format!("rtt {}↔{}", e.clusters[p.a].id, e.clusters[p.b].id),
                &p.rtt_ms,
                f64::NAN,
                ctx.now,
                ctx.policy,
            );
            r.derivation = Some(Derivation::MeasuredPath.as_str());
            r
        }
        FactId::Link(i) => {
            let l = &e.links[i];
            let mut r = crate::cost::fact_ref(
                format!("rtt {}↔{} (site link)", e.sites[l.a].id, e.sites[l.b].id),
                &l.rtt_ms,
                f64::NAN,
                ctx.now,
                ctx.policy,
            );
            r.derivation = Some(Derivation::SiteLink.as_str());
            r
        }
        FactId::SiteRtt(a, b) | FactId::SameSite(a @ b) => {
            let rtt = ctx.rtt.site(a, b);
            let fact = if a == b {
                format!("rtt within site {}", e.sites[a].id)
            } else {
                format!("rtt between sites {}↔{}", e.sites[a].id, e.sites[b].id)
            };
            FactRef {
                fact,
                value: Some(rtt.ms),
                class: rtt.class,
                stored_class: rtt.class,
                source: match rtt.derivation {
                    Derivation::GreatCircle => "great-circle estimate",
                    Derivation::Unknown => "policy default (nothing known)",
                    _ => "policy nominal",
                }
                .into(),
                age_s: 0,
                derivation: Some(rtt.derivation.as_str()),
            }
        }
    }
}

pub(super) fn effect_of(sc: &Scene, cond: Cond) -> Effect {
    let e = sc.ctx.estate;
    match cond {
        Cond::NoRoom => Effect::NoRoom {
            cluster: e.clusters[sc.cands[sc.b]].id.clone(),
        },
        Cond::BarFraction => Effect::BelowBar {
            bar: BarKind::Fraction,
        },
        Cond::BarPoints => Effect::BelowBar {
            bar: BarKind::Points,
        },
        Cond::NoGain => Effect::NoGain,
        Cond::Better(k) => Effect::OtherDestination {
            cluster: e.clusters[sc.cands[k]].id.clone(),
        },
    }
}

#[allow(clippy::too_many_arguments)]
pub(super) fn sentence(
    what: &str,
    measured: bool,
    up: bool,
    x: f64,
    now: Option<f64>,
    unit: &str,
    effect: &Effect,
    sc: &Scene,
) -> String {
    let p = sc.ctx.policy;
    let unit = if unit.is_empty() {
        String::new()
    } else {
        format!(" {unit}")
    };
    // An estimate: the threshold is what a measurement would have to show.
    let were = if measured { "were measured" } else { "were" };
    let cond = if Some(x) == now {
        // A tie the destination wins on its id, or a bar met exactly: any
        // change that way flips it.
        format!(
            "{were} any {} than its current {}{unit}",
            if up { "higher" } else { "lower" },
            num_exact(x)
        )
    } else if up {
        format!("{were} above {}{unit}", bound_text(x, true))
    } else if x == 0.0 {
        format!("{were} {}0{unit}", if measured { "at " } else { "" })
    } else {
        format!("{were} below {}{unit}", bound_text(x, false))
    };
    let then = match effect {
        Effect::BelowBar {
            bar: BarKind::Fraction,
        } => format!(
            "this move would no longer clear the bar ({} % of current cost)",
            num(p.min_gain_fraction * 100.0)
        ),
        Effect::BelowBar {
            bar: BarKind::Points,
        } => format!(
            "this move would no longer clear the bar ({} points)",
            num(p.min_gain_points)
        ),
        Effect::NoGain => "this move would no longer gain anything".into(),
        Effect::OtherDestination { cluster } => {
            format!("{cluster} would be the better destination")
        }
        Effect::NoRoom { cluster } => {
            format!("{cluster} would no longer certainly have room for it")
        }
    };
    format!("If {what} {cond}, {then}.")
}

/// A threshold for words, rounded outwards (up for "above", down for
/// "below") so the sentence stays true, with the fewest decimals that keep
/// it within 0.1 % of the exact value.
pub(super) fn bound_text(x: f64, up: bool) -> String {
    for d in 0..=12i32 {
        let scale = libm::pow(10.0, d as f64);
        let v = x * scale;
        let r = if (v - libm::round(v)).abs() <= 1e-9 * v.abs().max(1.0) {
            libm::round(v)
        } else if up {
            libm::ceil(v)
        } else {
            libm::floor(v)
        } / scale;
        if (r - x).abs() <= 1e-3 * x.abs() || d == 12 {
            return format!("{r:.*}", d as usize);
        }
    }
    unreachable!()
}

/// A fact's value for words, as stored (shortest round-trip form).
pub(super) fn num_exact(x: f64) -> String {
    format!("{x}")
}

/// A policy number for words: up to 2 decimals, no trailing zeros.
pub(super) fn num(x: f64) -> String {
    let s = format!("{:.2}", libm::round(x * 100.0) / 100.0);
    s.trim_end_matches('0').trim_end_matches('.').to_string()
}
