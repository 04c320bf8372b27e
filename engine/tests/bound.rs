//! The lower bound of `bound.rs` against the exact optimum of
//! `tests/common/exact.rs` on every small generated estate: it never
//! exceeds the optimum (nor the advice's own cost), and how tight it is
//! (`docs/quality.md`, "The lower bound").

mod common;

use berth_engine::advise::feasibility;
use berth_engine::bound;
use berth_engine::cost::Ctx;
use berth_engine::gen::{self, Shape, NOW};
use berth_engine::optimum;
use berth_engine::{Estate, Policy};
use common::exact::{self, advice_improvement, stats};

/// Node budget per estate: every `tiny` and `small` estate of the seeds
/// below is solved within it (the largest needs 34 million nodes,
/// `docs/quality.md`); an estate that ran out would still check the bound
/// against the incumbent, which is above the optimum.
const BUDGET: u64 = 50_000_000;

struct Figures {
    /// (before − bound) / (before − optimum): how much the bound
    /// overstates the possible improvement (≥ 1).
    overstated: Vec<f64>,
    /// bound / optimum (≤ 1).
    cost_ratio: Vec<f64>,
    /// The advice's share of `improvement_at_most` next to its true share.
    floor_vs_true: Vec<(f64, f64)>,
    nothing: usize,
}

fn check(name: &str, estates: impl Iterator<Item = (u64, Estate)>) -> Figures {
    let policy = Policy::default();
    let mut fig = Figures {
        overstated: Vec::new(),
        cost_ratio: Vec::new(),
        floor_vs_true: Vec::new(),
        nothing: 0,
    };
    for (seed, estate) in estates {
        let ctx = Ctx::new(&estate, &policy, NOW);
        let lb = bound::cost_at_least(&ctx, &feasibility(&estate).candidates);
        let opt = exact::solve(&estate, &policy, NOW, BUDGET);
        let tol = 1e-9 * (1.0 + opt.cost.abs());
        assert!(
            lb <= opt.cost + tol,
            "{name} seed {seed}: bound {lb} above the optimum {}",
            opt.cost
        );
        // Price steps aimed at the optimum itself: still below it.
        let aimed = bound::cost_at_least_within(
            &ctx,
            &feasibility(&estate).candidates,
            usize::MAX,
            Some(opt.cost),
        );
        assert!(
            aimed <= opt.cost + tol,
            "{name} seed {seed}: bound aimed at the optimum {aimed} above it {}",
            opt.cost
        );
        let advice = berth_engine::advise(&estate, &policy, NOW);
        let b = advice.bound;
        // The advice's bound is the same relaxation within the move cap,
        // its price steps aimed at the advice's own cost: a bound too.
        assert!(
            b.cost_at_least <= opt.cost + tol,
            "{name} seed {seed}: the advice's bound {} above the optimum {}",
            b.cost_at_least,
            opt.cost
        );
        let advice_cost = opt.cost_before - advice_improvement(&advice);
        assert!(
            b.cost_at_least <= advice_cost + tol,
            "{name} seed {seed}: bound {} above the advice's cost {advice_cost}",
            b.cost_at_least
        );
        assert!(b.improvement_at_most >= 0.0);
        if !opt.complete {
            continue;
        }
        if opt.improvement() > exact::NOTHING_TO_GAIN {
            fig.overstated
                .push(b.improvement_at_most / opt.improvement());
            if opt.cost > 0.0 {
                fig.cost_ratio.push(b.cost_at_least / opt.cost);
            }
            let floor = b.captured_at_least.expect("something to gain");
            let truth = advice_improvement(&advice) / opt.improvement();
            assert!(
                floor <= truth + 1e-9,
                "{name} seed {seed}: {floor} > {truth}"
            );
            fig.floor_vs_true.push((floor, truth));
        } else {
            fig.nothing += 1;
        }
    }
    let (m1, p1, _) = stats(&fig.overstated);
    let mut sorted = fig.overstated.clone();
    sorted.sort_by(f64::total_cmp);
    let p95 = sorted[((0.95 * sorted.len() as f64).ceil() as usize).max(1) - 1];
    let (m2, p2, _) = stats(&fig.cost_ratio);
    let floors: Vec<f64> = fig.floor_vs_true.iter().map(|f| f.0).collect();
    let truths: Vec<f64> = fig.floor_vs_true.iter().map(|f| f.1).collect();
    let (mf, pf, _) = stats(&floors);
    let (mt, pt, _) = stats(&truths);
    eprintln!(
        "{name}: {} counted, {} nothing to gain\n  \
         (before − bound)/(before − optimum): median {m1:.3}, p5 {p1:.3}, p95 {p95:.3}\n  \
         bound/optimum: median {m2:.3}, p5 {p2:.3}\n  \
         captured_at_least: median {mf:.3}, p5 {pf:.3} (true share: median {mt:.3}, p5 {pt:.3})",
        fig.overstated.len(),
        fig.nothing,
    );
    fig
}

#[test]
fn the_bound_never_exceeds_the_optimum_on_tiny_estates() {
    let fig = check(
        "Shape::tiny 0..300",
        (0..300).map(|seed| (seed, gen::estate(&Shape::tiny(seed)))),
    );
    assert!(fig.overstated.len() >= 150);
}

#[test]
fn the_bound_never_exceeds_the_optimum_on_small_estates() {
    let fig = check(
        "Shape::small 0..100",
        (0..100).map(|seed| (seed, gen::estate(&Shape::small(seed)))),
    );
    assert!(fig.overstated.len() >= 80);
}

/// Against plain enumeration too, independent of the solver's domains.
#[test]
fn the_bound_never_exceeds_exhaustive_enumeration() {
    let policy = Policy::default();
    let mut checked = 0;
    for seed in 0..200 {
        let estate = gen::estate(&Shape::tiny(seed));
        let Some(brute) = exact::exhaustive(&estate, &policy, NOW, 60_000.0) else {
            continue;
        };
        let ctx = Ctx::new(&estate, &policy, NOW);
        let lb = bound::cost_at_least(&ctx, &feasibility(&estate).candidates);
        assert!(lb <= brute + 1e-9 * (1.0 + brute.abs()), "seed {seed}");
        checked += 1;
    }
    assert!(checked >= 20);
}

/// Within a move cap: on every `tiny` estate, with at most 1 and 2 moved
/// services, the capped bound is below the relaxed optimum of the engine's
/// capped branch-and-bound (`optimum::solve` run to the end), and above
/// the uncapped bound where the cap binds on the relaxation.
#[test]
fn the_capped_bound_never_exceeds_the_capped_optimum() {
    let policy = Policy::default();
    let (mut checked, mut raised) = (0, 0);
    for seed in 0..200 {
        let estate = gen::estate(&Shape::tiny(seed));
        let ctx = Ctx::new(&estate, &policy, NOW);
        let cands = feasibility(&estate).candidates;
        let doms = optimum::domains(&ctx);
        let home: Vec<usize> = estate.services.iter().map(|s| s.cluster).collect();
        let uncapped = bound::cost_at_least(&ctx, &cands);
        for cap in [1, 2] {
            let sol = optimum::solve(
                &ctx,
                &doms,
                &home,
                optimum::Limits {
                    nodes: u64::MAX,
                    max_moves: cap,
                },
            );
            assert!(sol.complete, "seed {seed}");
            // The relaxed optimum: the cheapest placement within the cap,
            // orderable or not.
            let opt = sol.unorderable.map_or(sol.cost, |u| u.min(sol.cost));
            let lb = bound::cost_at_least_within(&ctx, &cands, cap, Some(sol.cost));
            assert!(
                lb <= opt + 1e-9 * (1.0 + opt.abs()),
                "seed {seed}, {cap} moves: bound {lb} above the optimum {opt}"
            );
            checked += 1;
            if lb > uncapped + 1e-6 {
                raised += 1;
            }
        }
    }
    eprintln!("capped: {checked} checked, the cap raised the bound on {raised}");
    assert!(checked >= 300);
    assert!(raised > 0, "the cap never entered the bound");
}
