//! Quality of the sequential advice against the exact optimum
//! (`docs/quality.md`): a smaller run of `examples/quality.rs`, plus checks
//! of the solver itself.

mod common;

use berth_engine::gen::{self, Shape, NOW};
use berth_engine::Policy;
use common::exact::{self, measure, stats};
use common::medium;

/// Branch-and-bound finds what plain enumeration of every service on every
/// cluster (filtered only by the exact feasibility check) finds.
#[test]
fn solver_agrees_with_exhaustive_enumeration() {
    let policy = Policy::default();
    let mut checked = 0;
    for seed in 0..200 {
        let estate = common::trusted::trusted(&Shape::tiny(seed));
        let Some(brute) = exact::exhaustive(&estate, &policy, NOW, 60_000.0) else {
            continue;
        };
        let opt = exact::solve(&estate, &policy, NOW, u64::MAX);
        assert!(opt.complete);
        assert!(
            (opt.cost - brute).abs() <= 1e-9 * (1.0 + brute.abs()),
            "seed {seed}: branch-and-bound {} but enumeration {brute}",
            opt.cost
        );
        checked += 1;
    }
    eprintln!("{checked} estates enumerated");
    assert!(
        checked >= 20,
        "only {checked} estates small enough to enumerate"
    );
}

/// Over 100 tiny estates: the optimum is never worse than the baseline or
/// the foil (asserted inside `measure`), every search completes, and the
/// baseline captures a median of at least 90 % of the optimal improvement,
/// with zero bars and with the default ones.
#[test]
fn baseline_captures_most_of_the_optimum() {
    let rows: Vec<_> = (0..100)
        .map(|seed| {
            measure(
                seed,
                &common::trusted::trusted(&Shape::tiny(seed)),
                NOW,
                50_000_000,
            )
        })
        .collect();
    assert!(rows.iter().all(|r| r.complete));
    let shares = |get: fn(&exact::Row) -> f64| -> Vec<f64> {
        rows.iter().filter_map(|r| r.share(get(r))).collect()
    };
    let zero = shares(|r| r.baseline_zero);
    assert!(
        zero.len() >= 60,
        "only {} estates with something to gain",
        zero.len()
    );
    let (median, _, _) = stats(&zero);
    assert!(median >= 0.90, "median share with zero bars {median}");
    // The bars only ever hold the baseline back; the foil is far behind.
    let (median_default, _, _) = stats(&shares(|r| r.baseline));
    let (median_ht, _, _) = stats(&shares(|r| r.heaviest));
    assert!(median_default <= median + 1e-12);
    // What users get, with the default bars, must meet the target too.
    assert!(
        median_default >= 0.90,
        "median share with the default bars {median_default}"
    );
    assert!(
        median_ht < median_default,
        "{median_ht} vs {median_default}"
    );
}

/// The solver's own cost of a placement is the engine's: an optimum that
/// moves nothing costs exactly the estate as it is.
#[test]
fn placement_cost_of_the_current_placement_is_cost_before() {
    let policy = Policy::default();
    for seed in 0..20 {
        let estate = common::trusted::trusted(&Shape::tiny(seed));
        let ctx = berth_engine::cost::Ctx::new(&estate, &policy, NOW);
        let here: Vec<usize> = estate.services.iter().map(|s| s.cluster).collect();
        let before = berth_engine::cost::State::initial(&estate)
            .totals(&ctx)
            .cost;
        assert_eq!(exact::placement_cost(&ctx, &here), before);
        assert!(exact::feasible(&ctx, &here));
    }
}

/// Issue 18's targets for the baseline with the default bars, on 300
/// estates of each generator shape (`Shape::tiny` and every pattern of
/// `gen::patterned` at 12 services × 4 clusters): median ≥ 99 %, mean
/// ≥ 97 %, p5 ≥ 80 % of the exact optimum's improvement. Counted: the
/// estates whose optimum, taken as one step, clears the default bars (no
/// step may gain less than its bar, so below that the share is 0 by rule)
/// and whose optimum some order of certified moves reaches (`docs/quality.md`
/// explains both; on the patterns every estate qualifies).
#[test]
fn compound_steps_meet_the_targets_on_every_generator_shape() {
    type Make = Box<dyn Fn(u64) -> berth_engine::Estate>;
    let mut shapes: Vec<(&str, Make)> = vec![(
        "tiny",
        Box::new(|seed| common::trusted::trusted(&Shape::tiny(seed))),
    )];
    for p in gen::Pattern::ALL {
        shapes.push((
            p.as_str(),
            Box::new(move |seed| gen::patterned_estate(p, seed, 12, 4)),
        ));
    }
    for (name, make) in shapes {
        let rows: Vec<exact::Row> = (0..300)
            .map(|seed| measure(seed, &make(seed), NOW, 50_000_000))
            .collect();
        assert!(
            rows.iter().all(|r| r.complete),
            "{name}: every search completes"
        );
        let counted: Vec<f64> = rows
            .iter()
            .filter(|r| r.optimal_clears_bars && r.optimal_sequential != Some(false))
            .filter_map(|r| r.share(r.baseline))
            .collect();
        assert!(counted.len() >= 140, "{name}: {} counted", counted.len());
        let (median, p5, mean) = stats(&counted);
        println!(
            "{name}: {} counted, median {:.1} %, p5 {:.1} %, mean {:.1} %",
            counted.len(),
            median * 100.0,
            p5 * 100.0,
            mean * 100.0
        );
        assert!(median >= 0.99, "{name}: median {median}");
        assert!(mean >= 0.97, "{name}: mean {mean}");
        assert!(p5 >= 0.80, "{name}: p5 {p5}");
    }
}

/// Issue 18's medium targets, as `examples/medium.rs` measures them: on
/// generated estates of 40, 80 and 150 services (8–12 clusters, 4–6 sites,
/// 50 seeds each), the baseline captures a mean of at least 95 % and a p5
/// of at least 85 % of the improvement the `optimum-capped` decider finds
/// within the 40-move cap, scored like every decider. Estates where the
/// reference's moves, taken as one step, would not clear the default bars
/// are left out, as in `docs/quality.md`. About 20 s in release.
#[test]
fn medium_estates_meet_the_targets_against_the_capped_optimum() {
    let policy = Policy::default();
    for (services, clusters) in medium::SIZES {
        let mut shares = Vec::new();
        for seed in 0..50u64 {
            let estate = medium::estate(seed, services, clusters);
            let advice = berth_engine::advise(&estate, &policy, NOW);
            let base = berth_engine::advise::improvement(&advice);
            let reference = medium::capped_reference(&estate, &policy);
            let tol = 1e-9 * (1.0 + advice.totals_before.cost.abs());
            assert!(
                base <= reference.gain + tol,
                "{services}, seed {seed}: the advice beats the reference"
            );
            if reference.counts() {
                shares.push(base / reference.gain);
            }
        }
        assert!(shares.len() >= 45, "{services}: {} counted", shares.len());
        let (median, p5, mean) = stats(&shares);
        println!(
            "{services} services: {} counted, median {:.1} %, p5 {:.1} %, mean {:.1} %",
            shares.len(),
            median * 100.0,
            p5 * 100.0,
            mean * 100.0
        );
        assert!(mean >= 0.95, "{services}: mean {mean}");
        assert!(p5 >= 0.85, "{services}: p5 {p5}");
    }
}
