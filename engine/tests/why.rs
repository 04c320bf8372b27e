//! Why (SPEC §7): every move's facts, terms and flip conditions.
//!
//! The flip conditions are checked by re-running the engine: for each
//! threshold, the fact is set in the estate just past it and just short of
//! it, the earlier moves are replayed, and the decision for the service at
//! that step is taken again — it must change just past and not just short.
//! Facts with no threshold in a direction, and facts named nowhere, are
//! probed with far-off values: the decision must not change.
//!
//! Golden outputs use expect-test: run with `UPDATE_EXPECT=1` to refresh
//! them, then review the diff.

use berth_engine::constraints::{self, Fit};
use berth_engine::cost::{self, Ctx, State};
use berth_engine::estate::parse_time;
use berth_engine::gen::{self, Shape};
use berth_engine::rtt::Derivation;
use berth_engine::why::{Effect, FactId, FlipStatus};
use berth_engine::{advise, explain, load, text, Estate, Format, Policy};
use expect_test::{expect, Expect};

const SAMPLE_NOW: &str = "2026-11-30T04:05:00Z";

/// The decision for service `s` after `earlier` moves, with what it was
/// made from.
struct Decision {
    /// The destination `advise` would pick for it at that step (best gain
    /// among certified fits clearing both bars with a positive gain; ties
    /// to the lower cluster id), or `None` to stay.
    pick: Option<usize>,
    /// Per cluster: the gain of moving there, for statically allowed
    /// candidates.
    gain: Vec<Option<f64>>,
    fits: Vec<bool>,
    bar: f64,
    current_cost: f64,
}

/// Built from the engine's public pieces only, not from `why.rs`.
fn decide(
    estate: &Estate,
    policy: &Policy,
    now: i64,
    earlier: &[(usize, usize)],
    s: usize,
) -> Decision {
    let ctx = Ctx::new(estate, policy, now);
    let mut state = State::initial(estate);
    for &(sv, to) in earlier {
        state.apply(&ctx, sv, to);
    }
    let current_cost = state.current_cost(&ctx, s);
    let bar = cost::bar(&ctx, current_cost);
    let n = estate.clusters.len();
    let mut d = Decision {
        pick: None,
        gain: vec![None; n],
        fits: vec![false; n],
        bar,
        current_cost,
    };
    let mut best: Option<(usize, f64)> = None;
    for c in 0..n {
        if c == state.placement[s] || !constraints::statically_allowed(estate, s, c) {
            continue;
        }
        let g = cost::move_terms(&ctx, &state, s, c).gain();
        d.gain[c] = Some(g);
        d.fits[c] = state.fit(&ctx, s, c) == Fit::Fits;
        if !(g >= bar && g > 0.0 && d.fits[c]) || best.is_some_and(|(_, bg)| g <= bg) {
            continue;
        }
        best = Some((c, g));
    }
    d.pick = best.map(|b| b.0);
    d
}

fn decision(
    estate: &Estate,
    policy: &Policy,
    now: i64,
    earlier: &[(usize, usize)],
    s: usize,
) -> Option<usize> {
    decide(estate, policy, now, earlier, s).pick
}

/// Equal up to floating-point rounding of the numbers involved.
fn rounding_equal(a: f64, b: f64, d: &Decision) -> bool {
    (a - b).abs() <= 1e-12 * (1.0 + a.abs() + b.abs() + d.current_cost.abs())
}

/// Is the decision `b`, up to a tie that only floating-point rounding
/// breaks? Two destinations on one site with the same size, both past the
/// headroom threshold, have exactly equal gains in exact arithmetic (the
/// tie goes to the lower id), but the engine computes each at its own load
/// and may tip the tie by an ulp either way; likewise a gain exactly at
/// the bar. The exact analysis rightly ignores that; this counts it
/// instead of failing.
fn still(b: usize, d: &Decision, rounding_ties: &mut usize) -> bool {
    if d.pick == Some(b) {
        return true;
    }
    let (Some(gb), true) = (d.gain[b], d.fits[b]) else {
        return false;
    };
    let tie = match d.pick {
        Some(c) => d.gain[c].is_some_and(|gc| rounding_equal(gb, gc, d)),
        None => rounding_equal(gb, d.bar.max(0.0), d),
    };
    if tie {
        *rounding_ties += 1;
    }
    tie
}

/// Has the decision left `b`, up to `b` clearing the bar by rounding only?
fn left(b: usize, d: &Decision, rounding_ties: &mut usize) -> bool {
    if d.pick != Some(b) {
        return true;
    }
    let tie = d.gain[b].is_some_and(|gb| rounding_equal(gb, d.bar.max(0.0), d));
    if tie {
        *rounding_ties += 1;
    }
    tie
}

#[derive(Default, Debug)]
struct Stats {
    moves: usize,
    rounding_ties: usize,
    thresholds: usize,
    /// Thresholds of estimated RTTs (checked by adding the measurement).
    estimated: usize,
    probes: usize,
    effects: [usize; 4],
    /// Members of compound steps (checked by `check_group`).
    group_members: usize,
}

/// Whether the group's members, applied in order after `earlier`, clear
/// the group's bar.
fn group_clears(
    e: &Estate,
    p: &Policy,
    now: i64,
    earlier: &[(usize, usize)],
    members: &[(usize, usize)],
) -> bool {
    let ctx = Ctx::new(e, p, now);
    let mut st = State::initial(e);
    for &(s, c) in earlier {
        st.apply(&ctx, s, c);
    }
    let Some(t) = berth_engine::group::replay(&ctx, &mut st, members) else {
        return false;
    };
    let g: f64 = t.iter().map(|t| t.gain()).sum();
    let ids: Vec<usize> = members.iter().map(|m| m.0).collect();
    let bar = cost::step_bar(
        &ctx,
        berth_engine::group::current_cost(&ctx, &st, &ids),
        ids.len(),
    );
    g > 0.0 && g >= bar
}

/// A compound step's Why: the group clears at the current values, and
/// each flow-fact threshold is where it stops, checked by re-running with
/// the fact just short of and just past it.
fn check_group(
    estate: &Estate,
    policy: &Policy,
    now: i64,
    earlier: &[(usize, usize)],
    g: &berth_engine::group::Group,
    w: &berth_engine::MoveWhy,
    at: &str,
) {
    let gw = w
        .group
        .as_ref()
        .unwrap_or_else(|| panic!("{at}: no group Why"));
    assert_eq!(gw.gain, g.gain, "{at}");
    assert_eq!(gw.bar, g.bar, "{at}");
    let sum: f64 = gw.terms.iter().map(|t| t.points).sum();
    assert!(
        (sum - g.gain).abs() <= 1e-9 * (1.0 + g.gain.abs()),
        "{at}: terms sum"
    );
    let members: Vec<(usize, usize)> = g
        .alone
        .iter()
        .map(|a| {
            (
                estate.service_index(&a.service).unwrap(),
                estate.cluster_index(&a.to).unwrap(),
            )
        })
        .collect();
    assert!(
        group_clears(estate, policy, now, earlier, &members),
        "{at}: clears now"
    );
    assert_eq!(
        gw.flips.len() + gw.not_analysed.len(),
        gw.facts.len(),
        "{at}: every deciding fact is flipped or named as not varied"
    );
    for f in &gw.flips {
        let flow = estate
            .flows
            .iter()
            .position(|fl| {
                f.fact
                    == format!(
                        "flow {}→{} {}",
                        estate.services[fl.from].id,
                        estate.services[fl.to].id,
                        if f.unit == "MB/s" { "mb_s" } else { "weight" }
                    )
            })
            .unwrap_or_else(|| panic!("{at}: {} is not a flow fact", f.fact));
        let id = if f.unit == "MB/s" {
            FactId::MbS(flow)
        } else {
            FactId::Weight(flow)
        };
        let with = |v: f64| {
            let mut e = estate.clone();
            id.set(&mut e, v);
            group_clears(&e, policy, now, earlier, &members)
        };
        for (t, up) in [(f.below, false), (f.above, true)] {
            let Some(x) = t else { continue };
            let delta = 1e-6 * x.abs().max(1e-3);
            let (past, short) = if up {
                (x + delta, x - delta)
            } else {
                ((x - delta).max(0.0), x + delta)
            };
            assert!(!with(past), "{at}: {} past {x} still clears", f.fact);
            if (short - f.value) * (x - f.value) > 0.0 {
                assert!(
                    with(short),
                    "{at}: {} short of {x} no longer clears",
                    f.fact
                );
            }
        }
    }
}

/// Advise, explain, and check every flip condition by re-running.
fn check(estate: &Estate, policy: &Policy, now: i64, label: &str) -> Stats {
    let advice = advise(estate, policy, now);
    let why = explain(estate, policy, now, &advice);
    assert_eq!(why.len(), advice.moves.len(), "{label}");
    let moves: Vec<(usize, usize)> = advice
        .moves
        .iter()
        .map(|m| {
            (
                estate.service_index(&m.service).unwrap(),
                estate.cluster_index(&m.to).unwrap(),
            )
        })
        .collect();
    let mut stats = Stats::default();
    for (k, w) in why.iter().enumerate() {
        let m = &advice.moves[k];
        let at = format!("{label} step {} {} {}→{}", m.step, m.service, m.from, m.to);
        assert!(w.note.is_none(), "{at}: {:?}", w.note);
        stats.moves += 1;
        let (s, b) = moves[k];
        // The placement this move is judged from: the recommended moves
        // before it, and the earlier members of its own step (a step
        // resting on guesses is listed but not made).
        let first = m.group.as_ref().map_or(k, |g| k - (m.step - g.steps[0]));
        let made = |j: usize| advice.moves[j].evidence.is_none();
        let before_step: Vec<(usize, usize)> =
            (0..first).filter(|&j| made(j)).map(|j| moves[j]).collect();
        let mut earlier = before_step.clone();
        earlier.extend_from_slice(&moves[first..k]);
        let earlier = earlier.as_slice();
        if let Some(g) = &m.group {
            check_group(estate, policy, now, &before_step, g, w, &at);
            stats.group_members += 1;
            continue;
        }
        assert_eq!(decision(estate, policy, now, earlier, s), Some(b), "{at}");

        // The terms are the computation: in order they sum to the gain.
        assert_eq!(w.gain, m.gain, "{at}");
        let sum = w.terms.iter().fold(0.0, |a, t| a + t.points);
        assert_eq!(sum, w.gain, "{at}");
        assert_eq!(
            w.terms.iter().map(|t| t.points).collect::<Vec<_>>(),
            [
                m.terms.round_trip,
                m.terms.cross_site,
                m.terms.headroom,
                m.terms.copy
            ],
            "{at}"
        );
        let here: f64 = w
            .flows
            .iter()
            .fold(0.0, |a, f| a + f.round_trip_from + f.cross_site_from);
        let there: f64 = w
            .flows
            .iter()
            .fold(0.0, |a, f| a + f.round_trip_to + f.cross_site_to);
        let close = |a: f64, b: f64| (a - b).abs() <= 1e-9 * (1.0 + a.abs().max(b.abs()));
        assert!(
            close(here - there, m.terms.round_trip + m.terms.cross_site),
            "{at}"
        );
        assert!(
            close(
                w.headroom.from_saves - w.headroom.to_costs,
                m.terms.headroom
            ),
            "{at}"
        );
        assert_eq!(w.current_cost, m.current_cost, "{at}");
        assert_eq!(w.bar, m.bar, "{at}");
        assert_eq!(w.facts, m.facts, "{at}");
        assert_eq!(w.flips.len(), w.facts.len(), "{at}");
        for (flip, fact) in w.flips.iter().zip(&w.facts) {
            assert_eq!(flip.fact, fact.fact, "{at}");
        }

        let decide_with = |id: FactId, v: f64| {
            let mut e = estate.clone();
            id.set(&mut e, v);
            decide(&e, policy, now, earlier, s)
        };
        let ties = &mut stats.rounding_ties;
        let mut listed = std::collections::BTreeSet::new();
        for flip in w.flips.iter().chain(&w.other_flips) {
            let Some(id) = flip.id else {
                assert_ne!(flip.status, FlipStatus::Exact, "{at}: {}", flip.fact);
                continue;
            };
            listed.insert(id);
            let x0 = flip.value.unwrap();
            let top = id.upper_bound(estate).max(x0);
            for (threshold, up) in [(&flip.above, true), (&flip.below, false)] {
                let what = format!(
                    "{at}: {} = {x0} ({})",
                    flip.fact,
                    if up { "up" } else { "down" }
                );
                match threshold {
                    Some(t) => {
                        stats.thresholds += 1;
                        if id.is_estimated() {
                            stats.estimated += 1;
                        }
                        stats.effects[match t.effect {
                            Effect::BelowBar { .. } => 0,
                            Effect::NoGain => 1,
                            Effect::OtherDestination { .. } => 2,
                            Effect::NoRoom { .. } => 3,
                        }] += 1;
                        let x = t.value;
                        if up {
                            assert!(x >= x0 && x < top, "{what}: threshold {x}");
                        } else {
                            assert!(x <= x0 && x >= 0.0, "{what}: threshold {x}");
                        }
                        let delta = 1e-6 * x.abs().max(1e-3);
                        let past = if up { x + delta } else { (x - delta).max(0.0) };
                        let short = if up {
                            if x - delta > x0 {
                                x - delta
                            } else {
                                0.5 * (x0 + x)
                            }
                        } else if x + delta < x0 {
                            x + delta
                        } else {
                            0.5 * (x0 + x)
                        };
                        let past_d = decide_with(id, past);
                        let d_past = past_d.pick;
                        if let Effect::OtherDestination { cluster } = &t.effect {
                            let named = estate.cluster_index(cluster).unwrap();
                            assert!(
                                still(named, &past_d, ties),
                                "{what}: just past {x} ({past}): {} (got {d_past:?})",
                                t.sentence
                            );
                        } else {
                            assert!(
                                left(b, &past_d, ties),
                                "{what}: just past {x} ({past}) should flip: {}",
                                t.sentence
                            );
                        }
                        assert!(
                            still(b, &decide_with(id, short), ties),
                            "{what}: just short of {x} ({short}) should not flip: {}",
                            t.sentence
                        );
                    }
                    None => {
                        let probes: Vec<f64> = if up {
                            vec![x0 * 1.5 + 0.1, x0 * 4.0 + 1.0, x0 * 30.0 + 50.0]
                        } else {
                            vec![x0 * 0.5, x0 * 0.1, 0.0]
                        };
                        for v in probes.into_iter().map(|v| v.min(top)) {
                            stats.probes += 1;
                            assert!(
                                still(b, &decide_with(id, v), ties),
                                "{what}: no threshold claimed, but {v} flips it"
                            );
                        }
                    }
                }
            }
        }
        // Facts named nowhere cannot change the decision on their own.
        let mut unlisted: Vec<FactId> = Vec::new();
        for (i, f) in estate.flows.iter().enumerate() {
            if f.from == s || f.to == s || i % 7 == 0 {
                unlisted.push(FactId::Weight(i));
                unlisted.push(FactId::MbS(i));
            }
        }
        unlisted.extend((0..estate.links.len()).map(FactId::Link));
        unlisted.extend((0..estate.paths.len()).map(FactId::Path));
        for c in 0..estate.clusters.len() {
            unlisted.push(FactId::Cpu(c));
            unlisted.push(FactId::Memory(c));
        }
        // Estimated RTTs: site pairs no link gives, and same-site nominals.
        let ctx = Ctx::new(estate, policy, now);
        for a in 0..estate.sites.len() {
            if estate.clusters.iter().filter(|c| c.site == a).count() > 1 {
                unlisted.push(FactId::SameSite(a));
            }
            for b in a + 1..estate.sites.len() {
                if ctx.rtt.site(a, b).derivation != Derivation::SiteLink {
                    unlisted.push(FactId::SiteRtt(a, b));
                }
            }
        }
        for id in unlisted {
            if listed.contains(&id) {
                continue;
            }
            let Some(x0) = id.value(&ctx) else {
                continue;
            };
            let top = id.upper_bound(estate).max(x0);
            for v in [0.0, x0 * 0.5, x0 * 3.0 + 1.0, x0 * 30.0 + 50.0] {
                let v = v.min(top);
                stats.probes += 1;
                assert!(
                    still(b, &decide_with(id, v), &mut stats.rounding_ties),
                    "{at}: {id:?} = {x0} is named nowhere, but {v} flips it"
                );
            }
        }
    }
    stats
}

#[test]
fn flip_conditions_hold_on_generated_estates() {
    let policy = Policy::default();
    let mut total = Stats::default();
    let seeds: u64 = std::env::var("BERTH_WHY_SEEDS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(160);
    for seed in 0..seeds {
        let estate = gen::estate(&Shape::small(seed));
        let st = check(&estate, &policy, gen::NOW, &format!("seed {seed}"));
        total.moves += st.moves;
        total.thresholds += st.thresholds;
        total.estimated += st.estimated;
        total.probes += st.probes;
        total.rounding_ties += st.rounding_ties;
        for i in 0..4 {
            total.effects[i] += st.effects[i];
        }
    }
    eprintln!("generated: {total:?}");
    // Not vacuous: many moves and thresholds of every common kind.
    assert!(total.moves >= 300, "{total:?}");
    assert!(total.thresholds >= 1000, "{total:?}");
    assert!(total.effects[0] > 50 && total.effects[2] > 50, "{total:?}");
    assert!(total.effects[3] > 0, "{total:?}");
    assert!(total.estimated > 0, "{total:?}");
}

#[test]
fn flip_conditions_hold_on_generated_estates_with_other_policies() {
    // Bars in points only, no headroom threshold slack, cheap copying.
    let policies = [
        r#"{"min_gain_fraction": 0, "min_gain_points": 5}"#,
        r#"{"min_gain_fraction": 0.4, "headroom_threshold": 0.3, "headroom_weight": 60}"#,
        r#"{"min_gain_points": 0, "min_gain_fraction": 0, "copy_weight_per_gb": 0}"#,
    ];
    let mut total = Stats::default();
    for (i, p) in policies.iter().enumerate() {
        let policy = Policy::from_json(p).unwrap();
        let seeds: u64 = std::env::var("BERTH_WHY_SEEDS")
            .ok()
            .and_then(|s| s.parse().ok())
            .unwrap_or(160)
            / 4;
        for seed in 0..seeds {
            let estate = gen::estate(&Shape::small(1000 + seed));
            let st = check(
                &estate,
                &policy,
                gen::NOW,
                &format!("policy {i} seed {seed}"),
            );
            total.moves += st.moves;
            total.thresholds += st.thresholds;
            total.estimated += st.estimated;
            total.probes += st.probes;
            total.rounding_ties += st.rounding_ties;
            for k in 0..4 {
                total.effects[k] += st.effects[k];
            }
        }
    }
    eprintln!("other policies: {total:?}");
    assert!(total.thresholds >= 500 && total.effects[1] > 0, "{total:?}");
}

fn sample() -> Estate {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../examples/estates/sample.json"
    );
    let text = std::fs::read_to_string(path).unwrap();
    load(&text, Format::Json).unwrap()
}

#[test]
fn flip_conditions_hold_on_the_sample_estate() {
    let st = check(
        &sample(),
        &Policy::default(),
        parse_time(SAMPLE_NOW).unwrap(),
        "sample",
    );
    eprintln!("sample: {st:?}");
    assert!(st.moves > 0 && st.thresholds > 0, "{st:?}");
    // Move 3 rests on guessed RTTs: their thresholds are checked too.
    assert!(st.estimated > 0, "{st:?}");
}

fn now() -> i64 {
    parse_time(SAMPLE_NOW).unwrap()
}

/// Each move with its terms, facts (class, source, age) and flip
/// sentences, as `berth advise --why --format text` prints them.
fn render(estate: &Estate, policy: &Policy) -> String {
    let advice = advise(estate, policy, now());
    let why = explain(estate, policy, now(), &advice);
    let mut out = String::new();
    for (m, w) in advice.moves.iter().zip(&why) {
        out.push_str(&format!("{}. {}\n", m.step, text::move_line(m)));
        for f in &w.facts {
            out.push_str(&format!(
                "   fact {} = {} {} ({}, {} s old)\n",
                f.fact,
                f.value.map_or("unknown".into(), |v| format!("{v}")),
                f.class.as_str(),
                f.source,
                f.age_s
            ));
        }
        for line in w.lines() {
            out.push_str(&format!("   {line}\n"));
        }
    }
    if advice.moves.is_empty() {
        out.push_str("no moves\n");
    }
    out
}

fn golden(estate_json: &str, expect: Expect) {
    let estate = load(estate_json, Format::Json).unwrap();
    let policy = Policy::default();
    // The sentences are checked by re-running, as everywhere else.
    let st = check(&estate, &policy, now(), "golden");
    assert!(st.thresholds > 0);
    expect.assert_eq(&render(&estate, &policy));
}

/// Three sites a few ms apart; a cart that talks mostly to a catalog in
/// another site, with rivals on the catalog's site and a third site.
const SHOP: &str = r#"{
  "schema": 1,
  "name": "why shop",
  "observed_at": "2026-11-30T04:04:00Z",
  "sites": [
    {"id": "ams", "lat": 52.37, "lon": 4.90, "jurisdiction": "eu"},
    {"id": "fra", "lat": 50.11, "lon": 8.68, "jurisdiction": "eu"},
    {"id": "par", "lat": 48.86, "lon": 2.35, "jurisdiction": "eu"}
  ],
  "links": [
    {"a": "fra", "b": "par", "rtt_ms": {"value": 9, "class": "measured", "source": "agent:mesh"}},
    {"a": "ams", "b": "fra", "rtt_ms": {"value": 7, "class": "reported", "source": "file:wan.csv"}},
    {"a": "ams", "b": "par", "rtt_ms": {"value": 8, "class": "measured", "source": "agent:mesh"}}
  ],
  "clusters": [
    {"id": "c-ams-1", "site": "ams", "tier": "prod", "trust_zone": "general", "health": "healthy",
     "cpu_total": 64, "memory_total_gib": 256,
     "cpu_free": {"value": 40, "class": "measured", "source": "agent:c-ams-1"},
     "memory_free_gib": {"value": 160, "class": "measured", "source": "agent:c-ams-1"}},
    {"id": "c-fra-1", "site": "fra", "tier": "prod", "trust_zone": "general", "health": "healthy",
     "cpu_total": 64, "memory_total_gib": 256,
     "cpu_free": {"value": 30, "class": "measured", "source": "agent:c-fra-1"},
     "memory_free_gib": {"value": 150, "class": "measured", "source": "agent:c-fra-1"}},
    {"id": "c-fra-2", "site": "fra", "tier": "prod", "trust_zone": "general", "health": "healthy",
     "cpu_total": 32, "memory_total_gib": 128,
     "cpu_free": {"value": 4, "class": "reported", "source": "user:ops"},
     "memory_free_gib": {"value": 100, "class": "measured", "source": "agent:c-fra-2"}},
    {"id": "c-par-1", "site": "par", "tier": "prod", "trust_zone": "general", "health": "healthy",
     "cpu_total": 64, "memory_total_gib": 256,
     "cpu_free": {"value": 30, "class": "measured", "source": "agent:c-par-1"},
     "memory_free_gib": {"value": 150, "class": "measured", "source": "agent:c-par-1"}}
  ],
  "services": [
    {"id": "cart", "owner": "shop", "cluster": "c-par-1", "cpu": 2, "memory_gib": 4},
    {"id": "catalog", "owner": "shop", "cluster": "c-fra-1", "cpu": 2, "memory_gib": 4, "constraints": {"pinned": true}},
    {"id": "session", "owner": "shop", "cluster": "c-par-1", "cpu": 1, "memory_gib": 2, "constraints": {"pinned": true}},
    {"id": "search", "owner": "search", "cluster": "c-ams-1", "cpu": 3, "memory_gib": 6},
    {"id": "index", "owner": "search", "cluster": "c-fra-2", "cpu": 2, "memory_gib": 8, "data_gb": 40, "constraints": {"local_volumes": true}}
  ],
  "flows": [
    {"from": "cart", "to": "catalog", "weight": {"value": 3, "class": "measured", "source": "agent:mesh"},
     "mb_s": {"value": 0.5, "class": "measured", "source": "agent:mesh"}},
    {"from": "cart", "to": "session", "weight": {"value": 0.8, "class": "reported", "source": "file:flows.csv",
      "observed_at": "2026-11-29T10:00:00Z"}, "mb_s": {"value": 0.2, "class": "reported", "source": "file:flows.csv"}},
    {"from": "search", "to": "index", "weight": {"value": 1.5, "class": "measured", "source": "agent:mesh"},
     "mb_s": {"value": 2, "class": "measured", "source": "agent:mesh"}},
    {"from": "search", "to": "catalog", "weight": {"value": 0.5, "class": "measured", "source": "agent:mesh"},
     "mb_s": {"value": 0.1, "class": "measured", "source": "agent:mesh"}}
  ]
}"#;

#[test]
fn golden_shop() {
    golden(
        SHOP,
        expect![[r#"
        1. search c-ams-1→c-fra-1 +29.2 [rtt +12.4, xsite +16.8] reported
           fact c-fra-1 cpu_free = 30 measured (agent:c-fra-1, 60 s old)
           fact c-fra-1 memory_free_gib = 150 measured (agent:c-fra-1, 60 s old)
           fact flow search→catalog mb_s = 0.1 measured (agent:mesh, 60 s old)
           fact flow search→catalog weight = 0.5 measured (agent:mesh, 60 s old)
           fact flow search→index mb_s = 2 measured (agent:mesh, 60 s old)
           fact flow search→index weight = 1.5 measured (agent:mesh, 60 s old)
           fact rtt c-ams-1↔c-fra-1 = 7 reported (file:wan.csv, 60 s old)
           fact rtt c-ams-1↔c-fra-2 = 7 reported (file:wan.csv, 60 s old)
           fact rtt c-fra-1↔c-fra-1 = 0.3 measured (policy nominal, 0 s old)
           fact rtt c-fra-1↔c-fra-2 = 1 reported (policy nominal, 0 s old)
           Gain +29.2 against the bar 4.62 (current cost 30.8); next best c-fra-2 +22.8.
           If c-fra-1 cpu_free were below 3.157 cores, c-fra-1 would no longer certainly have room for it.
           If c-fra-1 memory_free_gib were below 6.31 GiB, c-fra-1 would no longer certainly have room for it.
           If flow search→index weight were above 10.55, c-fra-2 would be the better destination.
           rtt c-fra-1↔c-fra-1 is the policy's same-cluster nominal (0.3 ms), not a stored fact: no flip computed.
           If rtt c-fra-1↔c-fra-2 (site fra: same-site nominal 1 ms) were measured above 7.332 ms, c-fra-2 would be the better destination.
           No value of flow search→catalog mb_s, flow search→catalog weight, flow search→index mb_s, rtt c-ams-1↔c-fra-1, rtt c-ams-1↔c-fra-2 changes it.
           Other facts that could change it:
             If c-fra-2 cpu_free were above 9.11 cores, c-fra-2 would be the better destination.
        2. cart c-par-1→c-fra-1 +21.5 [rtt +19.1, xsite +2.4] reported
           fact c-fra-1 cpu_free = 30 measured (agent:c-fra-1, 60 s old)
           fact c-fra-1 memory_free_gib = 150 measured (agent:c-fra-1, 60 s old)
           fact flow cart→catalog mb_s = 0.5 measured (agent:mesh, 60 s old)
           fact flow cart→catalog weight = 3 measured (agent:mesh, 60 s old)
           fact flow cart→session mb_s = 0.2 reported (file:flows.csv, 60 s old)
           fact flow cart→session weight = 0.8 reported (file:flows.csv, 65100 s old)
           fact rtt c-fra-1↔c-fra-1 = 0.3 measured (policy nominal, 0 s old)
           fact rtt c-fra-1↔c-par-1 = 9 measured (agent:mesh, 60 s old)
           fact rtt c-par-1↔c-par-1 = 0.3 measured (policy nominal, 0 s old)
           Gain +21.5 against the bar 4.69 (current cost 31.24); next best c-fra-2 +14.8.
           If c-fra-1 cpu_free were below 5.26 cores, c-fra-1 would no longer certainly have room for it.
           If c-fra-1 memory_free_gib were below 10.52 GiB, c-fra-1 would no longer certainly have room for it.
           If flow cart→catalog weight were below 0.754, this move would no longer clear the bar (2 points).
           If flow cart→session mb_s were above 2.307 MB/s, this move would no longer clear the bar (15 % of current cost).
           If flow cart→session weight were above 2.73, this move would no longer clear the bar (15 % of current cost).
           rtt c-fra-1↔c-fra-1 is the policy's same-cluster nominal (0.3 ms), not a stored fact: no flip computed.
           If rtt c-fra-1↔c-par-1 (site link fra↔par) were above 38.13 ms, c-ams-1 would be the better destination.
           If rtt c-fra-1↔c-par-1 (site link fra↔par) were below 0.1181 ms, this move would no longer clear the bar (2 points).
           rtt c-par-1↔c-par-1 is the policy's same-cluster nominal (0.3 ms), not a stored fact: no flip computed.
           No value of flow cart→catalog mb_s changes it.
    "#]],
    );
}

/// Capacity at work: a service leaving a hot cluster (its headroom
/// saving is part of the gain), destinations close to full (fit at the
/// pessimistic end of the margin), a flow whose weight is unknown (the
/// policy's assumption is what is varied) and a guessed capacity.
const CAPACITY: &str = r#"{
  "schema": 1,
  "name": "why capacity",
  "observed_at": "2026-11-30T04:04:00Z",
  "sites": [
    {"id": "dub", "lat": 53.35, "lon": -6.26, "jurisdiction": "eu"},
    {"id": "lon", "lat": 51.51, "lon": -0.13, "jurisdiction": "uk"}
  ],
  "links": [
    {"a": "dub", "b": "lon", "rtt_ms": {"value": 12, "class": "measured", "source": "agent:mesh"}}
  ],
  "paths": [
    {"a": "c-dub-1", "b": "c-lon-2", "rtt_ms": {"value": 15, "class": "measured", "source": "agent:probe"}}
  ],
  "clusters": [
    {"id": "c-dub-1", "site": "dub", "tier": "prod", "trust_zone": "general", "health": "healthy",
     "cpu_total": 32, "memory_total_gib": 128,
     "cpu_free": {"value": 2, "class": "measured", "source": "agent:c-dub-1"},
     "memory_free_gib": {"value": 60, "class": "measured", "source": "agent:c-dub-1"}},
    {"id": "c-lon-1", "site": "lon", "tier": "prod", "trust_zone": "general", "health": "healthy",
     "cpu_total": 32, "memory_total_gib": 128,
     "cpu_free": {"value": 9, "class": "measured", "source": "agent:c-lon-1"},
     "memory_free_gib": {"value": 64, "class": "measured", "source": "agent:c-lon-1"}},
    {"id": "c-lon-2", "site": "lon", "tier": "prod", "trust_zone": "general", "health": "watch",
     "cpu_total": 64, "memory_total_gib": 256,
     "cpu_free": {"value": 30, "class": "guessed", "source": "user:ops"},
     "memory_free_gib": {"value": 200, "class": "measured", "source": "agent:c-lon-2"}}
  ],
  "services": [
    {"id": "api", "owner": "core", "cluster": "c-dub-1", "cpu": 4, "memory_gib": 8},
    {"id": "db", "owner": "core", "cluster": "c-lon-1", "cpu": 4, "memory_gib": 16, "data_gb": 200, "constraints": {"local_volumes": true}},
    {"id": "worker", "owner": "core", "cluster": "c-dub-1", "cpu": 2, "memory_gib": 4},
    {"id": "queue", "owner": "core", "cluster": "c-lon-1", "cpu": 1, "memory_gib": 2, "constraints": {"pinned": true}}
  ],
  "flows": [
    {"from": "api", "to": "db", "weight": {"value": 2, "class": "measured", "source": "agent:mesh"},
     "mb_s": {"value": 1, "class": "measured", "source": "agent:mesh"}},
    {"from": "worker", "to": "queue", "weight": null, "mb_s": {"value": 0.3, "class": "inferred", "source": "import:prometheus"}}
  ]
}"#;

#[test]
fn golden_capacity() {
    golden(
        CAPACITY,
        expect![[r#"
        1. api c-dub-1→c-lon-1 +37.5 [rtt +23.4, xsite +8.0, headroom +6.1] measured
           fact c-dub-1 cpu_free = 2 measured (agent:c-dub-1, 60 s old)
           fact c-dub-1 memory_free_gib = 60 measured (agent:c-dub-1, 60 s old)
           fact c-lon-1 cpu_free = 9 measured (agent:c-lon-1, 60 s old)
           fact c-lon-1 memory_free_gib = 64 measured (agent:c-lon-1, 60 s old)
           fact flow api→db mb_s = 1 measured (agent:mesh, 60 s old)
           fact flow api→db weight = 2 measured (agent:mesh, 60 s old)
           fact rtt c-dub-1↔c-lon-1 = 12 measured (agent:mesh, 60 s old)
           fact rtt c-lon-1↔c-lon-1 = 0.3 measured (policy nominal, 0 s old)
           Gain +37.5 against the bar 6.21 (current cost 41.38); no other destination certainly fits.
           If c-lon-1 cpu_free were below 4.21 cores, c-lon-1 would no longer certainly have room for it.
           If c-lon-1 memory_free_gib were below 8.42 GiB, c-lon-1 would no longer certainly have room for it.
           rtt c-lon-1↔c-lon-1 is the policy's same-cluster nominal (0.3 ms), not a stored fact: no flip computed.
           No value of c-dub-1 cpu_free, c-dub-1 memory_free_gib, flow api→db mb_s, flow api→db weight, rtt c-dub-1↔c-lon-1 changes it.
        2. worker c-dub-1→c-lon-1 +10.3 [rtt +11.7, xsite +2.4, headroom -3.8] guessed
           fact c-dub-1 cpu_free = 2 measured (agent:c-dub-1, 60 s old)
           fact c-dub-1 memory_free_gib = 60 measured (agent:c-dub-1, 60 s old)
           fact c-lon-1 cpu_free = 9 measured (agent:c-lon-1, 60 s old)
           fact c-lon-1 memory_free_gib = 64 measured (agent:c-lon-1, 60 s old)
           fact flow worker→queue mb_s = 0.3 inferred (import:prometheus, 60 s old)
           fact flow worker→queue weight = 1 guessed (unknown (policy assumption), 0 s old)
           fact rtt c-dub-1↔c-lon-1 = 12 measured (agent:mesh, 60 s old)
           fact rtt c-lon-1↔c-lon-1 = 0.3 measured (policy nominal, 0 s old)
           Gain +10.3 against the bar 2.3 (current cost 15.34); no other destination certainly fits.
           If c-lon-1 cpu_free were below 6.31 cores, c-lon-1 would no longer certainly have room for it.
           If c-lon-1 memory_free_gib were below 12.63 GiB, c-lon-1 would no longer certainly have room for it.
           If flow worker→queue weight were below 0.2863, this move would no longer clear the bar (2 points).
           If rtt c-dub-1↔c-lon-1 (site link dub↔lon) were below 3.65 ms, this move would no longer clear the bar (2 points).
           rtt c-lon-1↔c-lon-1 is the policy's same-cluster nominal (0.3 ms), not a stored fact: no flip computed.
           No value of c-dub-1 cpu_free, c-dub-1 memory_free_gib, flow worker→queue mb_s changes it.
    "#]],
    );
}

/// A service without data costs nothing to copy: its copy term is +0,
/// never -0 (which the JSON would carry as `-0.0` and a page would show as
/// a loss). The term comes from `cost::copy_term`, the one definition.
#[test]
fn a_move_without_data_has_a_copy_term_of_plus_zero() {
    let text = include_str!("../../examples/estates/sample.json");
    let e = berth_engine::estate::load(text, berth_engine::Format::Json).unwrap();
    let now = berth_engine::estate::parse_time("2026-11-30T04:05:00Z").unwrap();
    let policy = berth_engine::Policy::default();
    let advice = berth_engine::advise(&e, &policy, now);
    let why = berth_engine::explain(&e, &policy, now, &advice);
    let mut seen = 0;
    for w in &why {
        let data = e.services[e.service_index(&w.service).unwrap()].data_gb_in_copy();
        for t in w.terms.iter().filter(|t| t.term == "copy") {
            if data == 0.0 {
                seen += 1;
                assert!(
                    t.points == 0.0 && t.points.is_sign_positive(),
                    "{}: {}",
                    w.service,
                    t.points
                );
            }
        }
    }
    assert!(seen > 0, "the sample moves a service without data");
    let json = berth_engine::front::advice_why(&e, &policy, now);
    assert!(!json.contains("-0.0"), "no negative zero in the Why bytes");
}
