//! The proven reference against the engine: the same optimum as the
//! engine's exhaustive search on every small generated estate, with and
//! without a move cap, and a proof of optimality on issue 18's medium
//! estates within the time limit.

mod common;

use berth_engine::cost::Ctx;
use berth_engine::gen::{self, Shape, NOW};
use berth_engine::optimum;
use berth_engine::{Estate, Policy};
use berth_solver::{relaxed_feasible, solve, Limits, Mip, AGREE};
use common::{exact, medium, trusted};

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= AGREE * (1.0 + a.abs().max(b.abs()))
}

/// Solve `estate` and check what every solve must hold: proven within the
/// limit, the model's objective at the solution is the engine's cost, the
/// solution meets the capacity condition by the engine's arithmetic, and
/// the bound is not above the cost.
fn proven(estate: &Estate, policy: &Policy, max_moves: usize, what: &str) -> berth_solver::Outcome {
    let ctx = Ctx::new(estate, policy, NOW);
    let out = solve(
        &ctx,
        Limits {
            max_moves,
            time_limit_s: 60.0,
        },
    )
    .unwrap_or_else(|e| panic!("{what}: {e}"));
    assert!(out.proven(), "{what}: {:?}", out.status);
    let mip = Mip::build(&ctx, max_moves).unwrap();
    let model = mip.evaluate(&ctx, &out.placement).unwrap();
    assert!(
        (model - out.cost).abs() <= AGREE,
        "{what}: model {model} engine {}",
        out.cost
    );
    assert!(
        close(out.objective, out.cost),
        "{what}: HiGHS objective {} engine {}",
        out.objective,
        out.cost
    );
    assert!(relaxed_feasible(&ctx, &out.placement), "{what}");
    let moved = out
        .placement
        .iter()
        .zip(&estate.services)
        .filter(|(&c, s)| c != s.cluster)
        .count();
    assert!(moved <= max_moves, "{what}: {moved} moves");
    assert!(out.bound <= out.cost + AGREE, "{what}");
    out
}

/// Every `Shape::tiny` estate (seeds 0–299, as the quality report measures
/// them, and seeds 0–99 as generated, with guesses, stale facts and
/// unknowns): HiGHS's proven optimum is the engine's exhaustive
/// branch-and-bound optimum (`engine/tests/common/exact.rs`, itself
/// checked against plain enumeration), and plain enumeration's where the
/// estate is small enough to enumerate. With a cap of 2 moves, it is the
/// relaxed optimum of the engine's capped branch-and-bound
/// (`optimum::solve`, the `optimum-capped` decider's search).
#[test]
fn agrees_with_the_engines_exhaustive_optimum_on_every_small_estate() {
    let policy = Policy::default();
    let mut estates: Vec<(String, Estate)> = (0..300)
        .map(|seed| {
            (
                format!("trusted tiny {seed}"),
                trusted::trusted(&Shape::tiny(seed)),
            )
        })
        .collect();
    estates.extend((0..100).map(|seed| (format!("tiny {seed}"), gen::estate(&Shape::tiny(seed)))));
    let (mut enumerated, mut improving, mut orderable) = (0, 0, 0);
    for (what, estate) in &estates {
        let out = proven(estate, &policy, usize::MAX, what);
        let ex = exact::solve(estate, &policy, NOW, u64::MAX);
        assert!(ex.complete, "{what}");
        assert!(
            close(out.cost, ex.cost),
            "{what}: HiGHS {} but the engine's exhaustive search {}",
            out.cost,
            ex.cost
        );
        if let Some(brute) = exact::exhaustive(estate, &policy, NOW, 60_000.0) {
            assert!(
                close(out.cost, brute),
                "{what}: HiGHS {} enumeration {brute}",
                out.cost
            );
            enumerated += 1;
        }
        if out.improvement() > 1e-6 {
            improving += 1;
        }
        if out.order.is_ok() {
            orderable += 1;
        }

        // Capped at 2 moves: the engine's own capped search, run to the end.
        let ctx = Ctx::new(estate, &policy, NOW);
        let doms = optimum::domains(&ctx);
        let home: Vec<usize> = estate.services.iter().map(|s| s.cluster).collect();
        let sol = optimum::solve(
            &ctx,
            &doms,
            &home,
            optimum::Limits {
                nodes: u64::MAX,
                max_moves: 2,
            },
        );
        assert!(sol.complete, "{what}");
        let relaxed = sol.unorderable.map_or(sol.cost, |u| u.min(sol.cost));
        let capped = proven(estate, &policy, 2, &format!("{what}, 2 moves"));
        assert!(
            close(capped.cost, relaxed),
            "{what}, 2 moves: HiGHS {} engine {relaxed}",
            capped.cost
        );
    }
    eprintln!(
        "{} estates agree ({enumerated} also enumerated; {improving} with something to gain; \
         {orderable} optima orderable)",
        estates.len()
    );
    assert!(enumerated >= 20, "only {enumerated} enumerated");
    assert!(improving >= 200, "only {improving} with something to gain");
}

/// Issue 18's medium estates (40, 80 and 150 services on 8, 10 and 12
/// clusters, `tests/common/medium.rs`), seeds 0–9 of each, within the
/// 40-move cap: HiGHS proves optimality on every one within its time
/// limit, and the optimum is never worse than the advice or the engine's
/// `optimum-capped` decider (both reach only placements of the model).
#[test]
fn proves_optimality_on_medium_estates_within_the_limit() {
    let policy = Policy::default();
    for (services, clusters) in medium::SIZES {
        let mut times = Vec::new();
        for seed in 0..10u64 {
            let what = format!("{services} services, seed {seed}");
            let estate = medium::estate(seed, services, clusters);
            let out = proven(&estate, &policy, policy.max_moves, &what);
            times.push(out.solve_s);
            let advice = berth_engine::advise(&estate, &policy, NOW);
            let advised = berth_engine::advise::improvement(&advice);
            assert!(
                advised <= out.improvement() + 1e-6 * (1.0 + out.cost_before.abs()),
                "{what}: the advice {advised} beats the proven optimum {}",
                out.improvement()
            );
            let reference = medium::capped_reference(&estate, &policy);
            assert!(
                reference.gain <= out.improvement() + 1e-6 * (1.0 + out.cost_before.abs()),
                "{what}: optimum-capped {} beats the proven optimum {}",
                reference.gain,
                out.improvement()
            );
        }
        times.sort_by(f64::total_cmp);
        eprintln!(
            "{services} services: 10 of 10 proven, solve median {:.0} ms, max {:.0} ms",
            times[times.len() / 2] * 1e3,
            times[times.len() - 1] * 1e3
        );
    }
}

/// The reference as a decider: scored like every decider, every proposal
/// is accepted and the projected gain is the proven optimum's
/// improvement; the note says it was proven. And a time limit too short
/// for a proof says so, with a bound no higher than the optimum.
#[test]
fn the_decider_is_scored_like_every_decider_and_says_what_it_proved() {
    use berth_engine::decider::{score, RawProposal};
    use berth_engine::proposal::Decider;
    use berth_solver::ProvenOptimum;
    let policy = Policy::default();
    for seed in 0..5u64 {
        let estate = medium::estate(seed, 80, 10);
        let request = berth_engine::request::build(&estate, &policy, NOW);
        let decider = ProvenOptimum {
            estate: &estate,
            policy: &policy,
            now: NOW,
            capped: true,
            time_limit_s: berth_solver::TIME_LIMIT_S,
        };
        let decision = decider.decide_noted(&request);
        let note = decision.note.clone().unwrap();
        assert!(note.starts_with("proven optimal within 40 moves"), "{note}");
        let n = decision.proposals.len();
        assert!(n > 0 && n <= policy.max_moves);
        let raw: Vec<RawProposal> = decision
            .proposals
            .into_iter()
            .map(RawProposal::Valid)
            .collect();
        let scored = score(&estate, &policy, NOW, &raw);
        assert_eq!(
            scored.accepted_count, n,
            "seed {seed}: {:?}",
            scored.refused
        );
        let out = proven(&estate, &policy, policy.max_moves, &format!("seed {seed}"));
        assert!(
            close(scored.projected_gain, out.improvement()),
            "seed {seed}: scored {} proven {}",
            scored.projected_gain,
            out.improvement()
        );
    }
    // A limit no search finishes in: stopped early, and what it states is
    // a true bound (not above the proven optimum's cost).
    let estate = medium::estate(0, 150, 12);
    let ctx = Ctx::new(&estate, &policy, NOW);
    let early = solve(
        &ctx,
        Limits {
            max_moves: policy.max_moves,
            time_limit_s: 1e-3,
        },
    )
    .unwrap();
    assert!(!early.proven(), "{:?}", early.status);
    let full = proven(&estate, &policy, policy.max_moves, "150 services, seed 0");
    assert!(early.bound <= full.cost + AGREE);
    assert!(early.cost >= full.cost - AGREE);
    // The decider says so, and proposes what it found.
    let request = berth_engine::request::build(&estate, &policy, NOW);
    let decision = ProvenOptimum {
        estate: &estate,
        policy: &policy,
        now: NOW,
        capped: true,
        time_limit_s: 1e-3,
    }
    .decide_noted(&request);
    let note = decision.note.unwrap();
    assert!(note.starts_with("stopped early (time limit"), "{note}");
    assert!(note.contains("not proven"), "{note}");
}
