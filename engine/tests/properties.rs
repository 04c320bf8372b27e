//! Properties of advice over generated estates (`gen::Shape::small`), with
//! random policy tweaks and evaluation times:
//!
//! - every move is legal when it is made: static constraints pass and the
//!   fit is certified (`Fits`, never *can't tell*), and no service moves
//!   twice;
//! - every move clears both bars, its gain is exactly the sum of its terms,
//!   and it is the best legal move at that point (ties on ids);
//! - the estate cost never rises, each step lowers it by gain − copy, and
//!   `totals_before`/`totals_after` equal the replayed totals;
//! - the order of every array in the file, and the direction of links and
//!   paths, change nothing: byte-identical advice and the same version;
//! - export → load gives the same estate.
//!
//! Case counts keep the whole file well under a minute in release.

use berth_engine::constraints::{static_refusals, Fit};
use berth_engine::cost::{self, Ctx, State};
use berth_engine::gen::{self, Rng, Shape, NOW};
use berth_engine::{advise, export, load, request, Estate, Format, Policy};
use proptest::prelude::*;
use serde_json::Value;

/// Policies around the default: weights and bars in sane ranges.
fn policies() -> impl Strategy<Value = Policy> {
    (
        (0.2f64..3.0, 0.0f64..20.0, 0.0f64..40.0, 0.5f64..0.95),
        (0.0f64..2.0, 0.0f64..0.5, 0.5f64..5.0, 1usize..60),
    )
        .prop_map(|((rt, xs, hw, ht), (copy, frac, pts, max_moves))| {
            let p = Policy {
                round_trip_weight: rt,
                cross_site_weight: xs,
                headroom_weight: hw,
                headroom_threshold: ht,
                copy_weight_per_gb: copy,
                min_gain_fraction: frac,
                min_gain_points: pts,
                max_moves,
                ..Policy::default()
            };
            p.validate().expect("generated policy is valid");
            p
        })
}

/// Evaluation times from the generator's `NOW` to ten days later, so that
/// staleness degrades a varying share of facts.
fn times() -> impl Strategy<Value = i64> {
    prop_oneof![Just(NOW), (0i64..10 * 86_400).prop_map(|d| NOW + d)]
}

/// The best legal move from `state`, by brute force over every service and
/// cluster: static constraints pass, gain ≥ bar and > 0, fit certified.
/// Strictly greater gain wins, so ties go to the lowest service id, then
/// the lowest cluster id (indices are id order).
fn brute_best(ctx: &Ctx, state: &State, moved: &[bool]) -> Option<(usize, usize, f64)> {
    let e = ctx.estate;
    let mut best: Option<(usize, usize, f64)> = None;
    for (s, &done) in moved.iter().enumerate() {
        if done {
            continue;
        }
        let bar = cost::bar(ctx, state.current_cost(ctx, s));
        for c in 0..e.clusters.len() {
            if c == state.placement[s] || !static_refusals(e, s, c).is_empty() {
                continue;
            }
            let gain = cost::move_terms(ctx, state, s, c).gain();
            if !(gain >= bar && gain > 0.0) {
                continue;
            }
            if best.is_some_and(|(_, _, g)| gain <= g) {
                continue;
            }
            if state.fit(ctx, s, c) == Fit::Fits {
                best = Some((s, c, gain));
            }
        }
    }
    best
}

/// Each member's best gaining certified single move from `state` (0 for
/// none), summed: what the members would gain moved one at a time, each
/// where it is best alone. Brute force, like [`brute_best`].
fn brute_alone(ctx: &Ctx, state: &State, members: &[usize]) -> f64 {
    let e = ctx.estate;
    members
        .iter()
        .map(|&s| {
            (0..e.clusters.len())
                .filter(|&c| c != state.placement[s] && static_refusals(e, s, c).is_empty())
                .filter(|&c| state.fit(ctx, s, c) == Fit::Fits)
                .map(|c| cost::move_terms(ctx, state, s, c).gain())
                .fold(0.0, f64::max)
        })
        .sum()
}

/// Replay the advice on a `State`, checking every move as it is made.
/// The same legality, checked from the raw estate without the engine's
/// own constraint and fit code, so a bug there cannot hide behind itself.
fn independently_legal(
    e: &Estate,
    p: &Policy,
    now: i64,
    state: &State,
    s: usize,
    to: usize,
    why: &str,
) {
    let svc = &e.services[s];
    let k = &svc.constraints;
    let dest = &e.clusters[to];
    assert!(
        !svc.local_volumes() && !k.pinned,
        "{why}: immobile service moved"
    );
    assert!(
        matches!(
            dest.health,
            berth_engine::estate::Health::Healthy | berth_engine::estate::Health::Watch
        ),
        "{why}: unhealthy destination"
    );
    if let Some(j) = &k.jurisdictions {
        assert!(
            j.contains(&e.sites[dest.site].jurisdiction),
            "{why}: jurisdiction"
        );
    }
    if let Some(t) = &k.tiers {
        assert!(t.contains(&dest.tier), "{why}: tier");
    }
    // Trust zones are never crossed implicitly: the declared zone, or the
    // zone of the cluster the service started on.
    let zone = k
        .trust_zone
        .clone()
        .unwrap_or_else(|| e.clusters[svc.cluster].trust_zone.clone());
    assert_eq!(zone, dest.trust_zone, "{why}: trust zone");
    // Capacity at the pessimistic end, net of everything moved so far.
    let (mut cpu_in, mut mem_in) = (0.0, 0.0);
    for (i, other) in e.services.iter().enumerate() {
        let (was, is) = (other.cluster, state.placement[i]);
        // Every moved service was certified, so its requests are known.
        let known = |r: Option<f64>| r.expect("a moved service has known requests");
        if was != to && is == to {
            cpu_in += known(other.cpu);
            mem_in += known(other.memory_gib);
        } else if was == to && is != to {
            cpu_in -= known(other.cpu);
            mem_in -= known(other.memory_gib);
        }
    }
    for (fact, need, moved_in) in [
        (
            &dest.cpu_free,
            svc.cpu.expect("a certified fit has known requests"),
            cpu_in,
        ),
        (
            &dest.memory_free_gib,
            svc.memory_gib.expect("a certified fit has known requests"),
            mem_in,
        ),
    ] {
        let free = fact
            .value
            .expect("a certified fit has a known free capacity");
        let margin = p.margin(fact.class_at(now, p));
        // Sums in a different order than the engine's: allow rounding.
        assert!(
            need <= free * (1.0 - margin) - moved_in + 1e-9 * (1.0 + free.abs()),
            "{why}: needs {need}, pessimistic free {}",
            free * (1.0 - margin) - moved_in
        );
    }
}

/// A member of a compound step: at the group's first step either no
/// single move clears its bar, or (on an estate small enough to weigh
/// groups at every step) the group gains more than the best single move
/// and more than its members alone by at least its bar; the group's members are consecutive and named in
/// order, their gains sum to the group's gain, which clears both bars
/// against the group's cost; confidence is the weakest deciding fact of
/// any member, and each "alone" figure is that member's move from the
/// placement before the step.
fn check_group_member(
    ctx: &Ctx,
    state: &State,
    moved: &[bool],
    a: &berth_engine::Advice,
    k: usize,
    g: &berth_engine::group::Group,
    why: &str,
) {
    let p = ctx.policy;
    let m = &a.moves[k];
    let pos = g
        .steps
        .iter()
        .position(|&st| st == m.step)
        .expect("member of its group");
    assert_eq!(g.services[pos], m.service, "{why}: group order");
    let largest = match g.kind {
        berth_engine::group::GroupKind::Gathered => berth_engine::group::GROW_MEMBERS,
        berth_engine::group::GroupKind::Planned => p.max_moves,
        _ => berth_engine::group::MAX_MEMBERS,
    };
    assert!((2..=largest).contains(&g.steps.len()), "{why}");
    assert!(
        g.steps.windows(2).all(|w| w[1] == w[0] + 1),
        "{why}: consecutive"
    );
    assert_eq!(m.bar, g.bar, "{why}: a member carries the group's bar");
    assert_eq!(m.confidence, g.confidence, "{why}: group confidence");
    if pos != 0 {
        assert_eq!(a.moves[k - 1].group.as_ref(), Some(g), "{why}: same group");
        return;
    }
    let members: Vec<usize> = g
        .services
        .iter()
        .map(|id| ctx.estate.service_index(id).unwrap())
        .collect();
    // A planned group is the targeted plan's first step, and that plan is
    // the advice only when it improves the estate by the margin more than
    // every other plan.
    if g.kind == berth_engine::group::GroupKind::Planned {
        use berth_engine::advise::{improvement, plan, Cache, Search, TARGET_MARGIN};
        assert_eq!(m.step, 1, "{why}: a planned group comes first");
        let (e, now) = (ctx.estate, ctx.now);
        let won = improvement(a);
        for search in [Search::PAIRS, Search::GATHER, Search::WEIGHED] {
            let other = improvement(&plan(e, p, now, Cache::Shared, search));
            assert!(
                won > other * (1.0 + TARGET_MARGIN),
                "{why}: the targeted plan ({won}) beats {search:?} ({other}) by less than the margin"
            );
        }
    } else if let Some((_, _, single)) = brute_best(ctx, state, moved) {
        // At the group's first step nothing single clears its bar, or the
        // group was weighed against the best single move (within the
        // weighing budget, which the generated estates here never exhaust)
        // and won.
        assert!(
            g.gain > single,
            "{why}: the group gains less than a single move"
        );
        let alone = brute_alone(ctx, state, &members);
        let tol = 1e-9 * (1.0 + g.gain.abs());
        assert!(
            g.gain - alone >= g.bar - tol,
            "{why}: the group gains {} but its members alone {alone} (bar {})",
            g.gain,
            g.bar
        );
    }
    let cost = berth_engine::group::current_cost(ctx, state, &members);
    assert_eq!(g.current_cost, cost, "{why}: group cost");
    assert_eq!(
        g.bar,
        cost::step_bar(ctx, cost, members.len()),
        "{why}: group bar"
    );
    let sum: f64 = a.moves[k..k + members.len()].iter().map(|m| m.gain).sum();
    assert_eq!(g.gain, sum, "{why}: group gain is the sum of its members'");
    // Every moved service pays the absolute bar; the step clears the
    // relative bar against its whole cost.
    assert!(
        g.gain > 0.0
            && g.gain >= p.min_gain_points * members.len() as f64
            && g.gain >= p.min_gain_fraction * cost,
        "{why}: {} services gain {} (points bar {} each, fraction bar {})",
        members.len(),
        g.gain,
        p.min_gain_points,
        p.min_gain_fraction * cost
    );
    let mut facts = Vec::new();
    let mut st = state.clone();
    for (i, &s) in members.iter().enumerate() {
        let to = ctx.estate.cluster_index(&g.alone[i].to).unwrap();
        assert_eq!(a.moves[k + i].to, g.alone[i].to, "{why}: alone destination");
        let alone = cost::move_terms(ctx, state, s, to).gain();
        assert_eq!(g.alone[i].gain, alone, "{why}: alone gain");
        facts.extend(cost::deciding_facts(ctx, &st, s, to));
        st.apply(ctx, s, to);
    }
    assert_eq!(
        g.confidence,
        cost::confidence(&facts),
        "{why}: weakest of the group"
    );
}

fn replay(e: &Estate, p: &Policy, now: i64) {
    let a = advise(e, p, now);
    let ctx = Ctx::new(e, p, now);
    let mut state = State::initial(e);
    let mut moved = vec![false; e.services.len()];
    let mut totals = state.totals(&ctx);
    let mut step_start = totals;
    assert_eq!(a.totals_before, totals, "totals_before");
    assert!(a.moves.len() <= p.max_moves);
    // A step the evidence cannot back is listed but not made: it is
    // checked on a copy of the placement, which is dropped after the step.
    let mut aside: Option<State> = None;
    let mut unbacked_gain = 0.0;
    for (k, m) in a.moves.iter().enumerate() {
        let why = format!("move {} {}: {}→{}", m.step, m.service, m.from, m.to);
        assert_eq!(m.step, k + 1);
        let first_of_step = m.group.as_ref().is_none_or(|g| g.steps[0] == m.step);
        let last_of_step = m
            .group
            .as_ref()
            .is_none_or(|g| g.steps.last() == Some(&m.step));
        if first_of_step && m.evidence.is_some() {
            aside = Some(state.clone());
        }
        if m.evidence.is_some() {
            unbacked_gain += m.gain;
        }
        let backed = aside.is_none();
        let state: &mut State = aside.as_mut().unwrap_or(&mut state);
        let s = e.service_index(&m.service).expect("known service");
        let to = e.cluster_index(&m.to).expect("known cluster");
        assert_eq!(e.clusters[state.placement[s]].id, m.from, "{why}: from");
        assert!(!moved[s], "{why}: a service moves at most once");
        assert_ne!(state.placement[s], to, "{why}: a move goes somewhere");

        // (a) no hard constraint is violated; (d) the fit is certified.
        let refusals = static_refusals(e, s, to);
        assert!(refusals.is_empty(), "{why}: refused {refusals:?}");
        assert_eq!(state.fit(&ctx, s, to), Fit::Fits, "{why}: fit");
        independently_legal(e, p, now, state, s, to, &why);

        // (b) both bars, and gain == sum of terms, exactly.
        let terms = cost::move_terms(&ctx, state, s, to);
        assert_eq!(m.terms, terms, "{why}: terms");
        let sum = terms.round_trip + terms.cross_site + terms.headroom + terms.copy;
        assert_eq!(m.gain, sum, "{why}: gain is the sum of the terms");
        let current = state.current_cost(&ctx, s);
        assert_eq!(m.current_cost, current, "{why}: current cost");
        assert!(
            m.terms.copy <= 0.0
                && m.terms.copy == -p.copy_weight_per_gb * e.services[s].data_gb_in_copy()
        );
        let facts = cost::deciding_facts(&ctx, state, s, to);
        assert_eq!(m.facts, facts, "{why}: facts");
        match &m.group {
            None => {
                assert_eq!(m.bar, cost::bar(&ctx, current), "{why}: bar");
                assert!(m.gain > 0.0, "{why}: gain {}", m.gain);
                assert!(m.gain >= p.min_gain_points, "{why}: points bar");
                assert!(
                    m.gain >= p.min_gain_fraction * current,
                    "{why}: fraction bar"
                );
                // Confidence is the weakest deciding fact, never an average.
                assert_eq!(m.confidence, cost::confidence(&facts), "{why}: confidence");
                assert_eq!(
                    m.evidence.is_some(),
                    facts
                        .iter()
                        .any(|f| f.class == berth_engine::fact::Class::Guessed),
                    "{why}: evidence words exactly when a deciding fact is a guess"
                );
                // Sequential: it is the best legal move from here (ties on ids).
                let best = brute_best(&ctx, state, &moved);
                assert_eq!(best, Some((s, to, m.gain)), "{why}: not the best move");
            }
            Some(g) => check_group_member(&ctx, state, &moved, &a, k, g, &why),
        }

        // (c) the estate cost never rises; it falls by gain − copy.
        state.apply(&ctx, s, to);
        moved[s] = true;
        if !backed {
            if last_of_step {
                aside = None;
            }
            continue;
        }
        let after = state.totals(&ctx);
        // A compound step's member may raise the cost; the step may not.
        if m.group
            .as_ref()
            .is_none_or(|g| g.steps.last() == Some(&m.step))
        {
            assert!(after.cost <= step_start.cost, "{why}: cost rose");
        }
        let fell = totals.cost - after.cost;
        let expected = m.gain - m.terms.copy;
        assert!(
            (fell - expected).abs() <= 1e-9 * (1.0 + totals.cost.abs()),
            "{why}: cost fell {fell}, terms say {expected}"
        );
        totals = after;
        if m.group
            .as_ref()
            .is_none_or(|g| g.steps.last() == Some(&m.step))
        {
            step_start = totals;
        }
    }
    assert_eq!(a.totals_after, totals, "totals_after");
    assert_eq!(a.unbacked_gain, unbacked_gain, "unbacked_gain");
    // The sequence stops only when nothing legal clears the bars.
    if a.moves.len() < p.max_moves {
        assert_eq!(brute_best(&ctx, &state, &moved), None, "stopped early");
    }
    // (d) what is listed as can't tell is indeed can't tell (after the
    // moves), and worth it: its gain clears the service's bar.
    for c in &a.cant_tell {
        let s = e.service_index(&c.service).unwrap();
        let to = e.cluster_index(&c.cluster).unwrap();
        assert_eq!(e.clusters[state.placement[s]].id, c.from);
        assert!(static_refusals(e, s, to).is_empty());
        match state.fit(&ctx, s, to) {
            Fit::CantTell { fact, .. } => assert_eq!(fact, c.fact),
            other => panic!("{c:?} listed as can't tell but fit is {other:?}"),
        }
        let gain = cost::move_terms(&ctx, &state, s, to).gain();
        assert_eq!(gain, c.gain_if_it_fits);
        assert!(gain > 0.0 && gain >= cost::bar(&ctx, state.current_cost(&ctx, s)));
    }
    // Immovable services have no legal destination at all.
    for i in &a.immovable {
        let s = e.service_index(&i.service).unwrap();
        for c in 0..e.clusters.len() {
            if c != e.services[s].cluster {
                assert!(!static_refusals(e, s, c).is_empty(), "{i:?}");
            }
        }
    }
}

fn shuffle<T>(r: &mut Rng, v: &mut [T]) {
    for i in (1..v.len()).rev() {
        v.swap(i, r.below(i + 1));
    }
}

/// Give constraint lists more than one entry (and a duplicate), so that
/// shuffling them means something. Applied to both sides of a comparison.
fn widen_constraint_lists(file: &mut Value) {
    for s in file["services"].as_array_mut().unwrap() {
        if let Some(c) = s.get_mut("constraints").and_then(Value::as_object_mut) {
            for key in ["jurisdictions", "tiers"] {
                if let Some(list) = c.get_mut(key).and_then(Value::as_array_mut) {
                    let first = list[0].clone();
                    list.push(Value::from("zz-other"));
                    list.push(first);
                }
            }
        }
    }
}

/// Every array in random order, and links/paths with random direction.
fn shuffled(file: &Value, seed: u64) -> Value {
    let mut r = Rng::new(seed);
    let mut f = file.clone();
    for key in ["sites", "clusters", "links", "paths", "services", "flows"] {
        let items = f[key].as_array_mut().unwrap();
        shuffle(&mut r, items);
        if key == "links" || key == "paths" {
            for item in items.iter_mut() {
                if r.chance(0.5) {
                    let o = item.as_object_mut().unwrap();
                    let a = o.remove("a").unwrap();
                    let b = o.insert("b".into(), a).unwrap();
                    o.insert("a".into(), b);
                }
            }
        }
        if key == "services" {
            for s in items.iter_mut() {
                if let Some(c) = s.get_mut("constraints").and_then(Value::as_object_mut) {
                    for list in ["jurisdictions", "tiers"] {
                        if let Some(l) = c.get_mut(list).and_then(Value::as_array_mut) {
                            shuffle(&mut r, l);
                        }
                    }
                }
            }
        }
    }
    f
}

fn load_json(v: &Value) -> Estate {
    load(&serde_json::to_string(v).unwrap(), Format::Json).expect("valid estate")
}

/// Estates the random runs once failed on (the runs keep no failure
/// file, so each is pinned here). 14317003053650441878: a weighed
/// two-service group whose extra over its members alone (3.17 points)
/// cleared one service's bar (2) but not the group's own (4).
#[test]
fn advice_replays_legally_on_past_failures() {
    let seeds: &[u64] = &[14_317_003_053_650_441_878];
    for &seed in seeds {
        let e = gen::estate(&Shape::small(seed));
        replay(&e, &Policy::default(), NOW);
    }
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: 256,
        failure_persistence: None,
        ..ProptestConfig::default()
    })]

    /// (a)–(d) with the default policy at the generator's time.
    #[test]
    fn advice_replays_legally_default_policy(seed in any::<u64>()) {
        let e = gen::estate(&Shape::small(seed));
        replay(&e, &Policy::default(), NOW);
    }

    /// (a)–(d) with policy tweaks and later evaluation times.
    #[test]
    fn advice_replays_legally_any_policy(
        seed in any::<u64>(),
        p in policies(),
        now in times(),
    ) {
        let e = gen::estate(&Shape::small(seed));
        replay(&e, &p, now);
    }

    /// (e) array order and link/path direction change nothing.
    #[test]
    fn file_order_changes_nothing(seed in any::<u64>(), order in any::<u64>(), p in policies()) {
        let mut file = gen::file(&Shape::small(seed));
        widen_constraint_lists(&mut file);
        let (e1, e2) = (load_json(&file), load_json(&shuffled(&file, order)));
        prop_assert_eq!(&e1, &e2);
        prop_assert_eq!(export::version(&e1), export::version(&e2));
        let a1 = serde_json::to_string(&advise(&e1, &p, NOW)).unwrap();
        let a2 = serde_json::to_string(&advise(&e2, &p, NOW)).unwrap();
        prop_assert!(a1 == a2, "advice differs");
        let r1 = serde_json::to_string(&request::build(&e1, &p, NOW)).unwrap();
        let r2 = serde_json::to_string(&request::build(&e2, &p, NOW)).unwrap();
        prop_assert!(r1 == r2, "decider request differs");
    }

    /// (f) export → load gives an equal estate (through JSON and YAML),
    /// and the export is a fixed point.
    #[test]
    fn export_then_load_round_trips(seed in any::<u64>()) {
        let e = gen::estate(&Shape::small(seed));
        let file = export::to_file(&e);
        let back = load(&serde_json::to_string_pretty(&file).unwrap(), Format::Json).unwrap();
        prop_assert_eq!(&back, &e);
        prop_assert_eq!(export::to_file(&back), file.clone());
        prop_assert_eq!(export::version(&back), export::version(&e));
        let yaml = serde_yaml::to_string(&file).unwrap();
        prop_assert_eq!(&load(&yaml, Format::Yaml).unwrap(), &e);
    }
}

/// Estates with many clusters per site, where the shared flow-gain cache
/// (`deltas.rs`) shares most: 20–160 services on 8–40 clusters over 2–5
/// sites, a third of clusters with a measured path.
fn crowded_sites(seed: u64) -> Shape {
    let mut r = Rng::new(seed ^ 0x5348_4152_4544);
    Shape {
        seed,
        services: 20 + r.below(141),
        clusters: 8 + r.below(33),
        sites: 2 + r.below(4),
        extra_calls: 1.0 + 6.0 * r.unit(),
    }
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: 96,
        ..ProptestConfig::default()
    })]

    /// (g) Pruning loses nothing: advice with the flow gains shared between
    /// a site's plain candidates is byte-identical to advice with every
    /// candidate computed on its own, compound steps included, on both
    /// generators and under policy tweaks and later times.
    #[test]
    fn shared_flow_gains_give_identical_advice(
        seed in any::<u64>(),
        p in policies(),
        now in times(),
        pattern in 0usize..5,
    ) {
        let e = match pattern {
            0 => gen::estate(&crowded_sites(seed)),
            k => gen::patterned_estate(gen::Pattern::ALL[k - 1], seed, 12 + (seed % 60) as usize, 6 + (seed % 19) as usize),
        };
        let shared = serde_json::to_string(&advise::advise_with(&e, &p, now, advise::Cache::Shared)).unwrap();
        let every = serde_json::to_string(&advise::advise_with(&e, &p, now, advise::Cache::PerCandidate)).unwrap();
        prop_assert!(shared == every, "advice differs:\n{}\n{}", shared, every);
    }
}

/// The sample estate round-trips too (it has every fact form: bare numbers,
/// objects with and without source/time, null and absent values).
#[test]
fn sample_estate_round_trips_through_export() {
    let text = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../examples/estates/sample.json"
    ))
    .unwrap();
    let e = load(&text, Format::Json).unwrap();
    let back = load(
        &serde_json::to_string(&export::to_file(&e)).unwrap(),
        Format::Json,
    )
    .unwrap();
    assert_eq!(back, e);
    let mut file: Value = serde_json::from_str(&text).unwrap();
    widen_constraint_lists(&mut file);
    let base = load_json(&file);
    for order in 0..20 {
        let other = load_json(&shuffled(&file, order));
        assert_eq!(other, base);
        assert_eq!(
            serde_json::to_string(&advise(&other, &Policy::default(), NOW)).unwrap(),
            serde_json::to_string(&advise(&base, &Policy::default(), NOW)).unwrap()
        );
    }
    // And the replay properties hold on it.
    replay(&e, &Policy::default(), NOW);
}

/// The generated estates exercise what the properties are about: moves,
/// can't-tell entries, immovable services, guesses, several sites.
#[test]
fn generated_estates_exercise_every_path() {
    let (mut moves, mut cant_tell, mut immovable, mut guessed, mut headroom, mut copy) =
        (0, 0, 0, 0, 0, 0);
    for seed in 0..64 {
        let e = gen::estate(&Shape::small(seed));
        let a = advise(&e, &Policy::default(), NOW);
        moves += a.moves.len();
        cant_tell += a.cant_tell.len();
        immovable += a.immovable.len();
        guessed += a.moves.iter().filter(|m| m.evidence.is_some()).count();
        headroom += a.moves.iter().filter(|m| m.terms.headroom != 0.0).count();
        copy += a.moves.iter().filter(|m| m.terms.copy != 0.0).count();
    }
    eprintln!(
        "64 estates: {moves} moves ({guessed} on guesses, {headroom} with headroom, \
         {copy} with copy), {cant_tell} can't tell, {immovable} immovable"
    );
    assert!(moves > 100 && cant_tell > 0 && immovable > 0 && guessed > 0 && headroom > 0);
}

/// The headline is what taking the recommended moves gives: the what-if
/// engine, given exactly the moves without `evidence` in their order,
/// projects `totals_after` to the last bit, and the bound's share is of
/// that improvement. On the sample and on 50 generated estates.
#[test]
fn recommended_totals_replay_in_whatif() {
    use berth_engine::whatif::{self, Scenario, Step};
    let sample = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../examples/estates/sample.json"
    ))
    .unwrap();
    let sample = load(&sample, Format::Json).unwrap();
    let sample_now = berth_engine::estate::parse_time("2026-11-30T04:05:00Z").unwrap();
    let mut estates = vec![(sample, sample_now)];
    estates.extend((0..50).map(|seed| (gen::estate(&Shape::small(seed)), NOW)));
    let (mut with_unbacked, mut with_moves) = (0, 0);
    for (e, now) in &estates {
        let p = Policy::default();
        let a = advise(e, &p, *now);
        let steps: Vec<Step> = a
            .moves
            .iter()
            .filter(|m| m.evidence.is_none())
            .map(|m| Step::Move {
                service: m.service.clone(),
                to: m.to.clone(),
            })
            .collect();
        with_moves += usize::from(!steps.is_empty());
        with_unbacked += usize::from(a.moves.iter().any(|m| m.evidence.is_some()));
        let scenario = Scenario {
            schema: 1,
            name: "recommended".into(),
            description: None,
            steps,
        };
        let projected = whatif::project(e, &p, *now, &scenario).expect("ids of the estate");
        assert_eq!(projected.before, a.totals_before, "{}: before", e.name);
        assert_eq!(projected.after, a.totals_after, "{}: after", e.name);
        let copy: f64 = a
            .moves
            .iter()
            .filter(|m| m.evidence.is_none())
            .map(|m| -m.terms.copy)
            .sum();
        assert_eq!(
            berth_engine::advise::improvement(&a),
            a.totals_before.cost - (projected.after.cost + copy),
            "{}: improvement",
            e.name
        );
    }
    // The check means something: moves were recommended, and some
    // estates had moves set apart that the headline must not count.
    assert!(with_moves >= 12, "{with_moves} estates with moves");
    assert!(
        with_unbacked >= 1,
        "{with_unbacked} estates with unbacked moves"
    );
    eprintln!(
        "{with_moves} of 51 estates with recommended moves, {with_unbacked} with moves set apart"
    );
}
