//! The share every advice result states (`bound.captured_at_least`,
//! `docs/advice.md` §6a) against the true share, from the optimum within
//! the move cap proven by HiGHS: on the sample estate and on issue 18's
//! medium estates. The bound must never exceed the proven optimum (it is
//! a proof), and on the medium estates the median stated share must be
//! at least 90 % (issue 33, item 3).
//!
//! `cargo test --release -p berth-solver --test bound_share -- --nocapture`
//! prints one line per estate: the stated share and the proven gap side by
//! side, and the times.

mod common;

use std::time::Instant;

use berth_engine::advise::feasibility;
use berth_engine::cost::Ctx;
use berth_engine::estate::parse_time;
use berth_engine::gen::NOW;
use berth_engine::{bound, load, Estate, Format, Policy};
use berth_solver::{solve, Limits};
use common::medium;

/// Estates of each medium size measured: the sizes' medians are over
/// these seeds. Five keep the test near 10 s on this machine's 2 cores.
const SEEDS: u64 = 5;

struct Line {
    stated: f64,
    truth: f64,
}

/// Advise, prove the optimum within the cap, compare; print one line.
fn measure(name: &str, estate: &Estate, now: i64) -> Line {
    let policy = Policy::default();
    let t = Instant::now();
    let advice = berth_engine::advise(estate, &policy, now);
    let advise_ms = t.elapsed().as_secs_f64() * 1e3;
    let ctx = Ctx::new(estate, &policy, now);
    let cands = feasibility(estate).candidates;
    let t = Instant::now();
    let per_term_and_pairs = bound::cost_at_least(&ctx, &cands);
    let bound_ms = t.elapsed().as_secs_f64() * 1e3;
    let out = solve(
        &ctx,
        Limits {
            max_moves: policy.max_moves,
            time_limit_s: 120.0,
        },
    )
    .unwrap_or_else(|e| panic!("{name}: {e}"));
    assert!(out.proven(), "{name}: {:?}", out.status);
    let before = advice.totals_before.cost;
    assert!(
        (before - out.cost_before).abs() <= 1e-6 * (1.0 + before.abs()),
        "{name}"
    );
    let b = advice.bound;
    let tol = 1e-9 * (1.0 + out.cost.abs());
    assert!(
        b.cost_at_least <= out.cost + tol,
        "{name}: the advice's bound {} above the proven optimum {}",
        b.cost_at_least,
        out.cost
    );
    // Without the cap the optimum can only be lower; the uncapped bound
    // is below it too, so below the capped one.
    assert!(per_term_and_pairs <= out.cost + tol, "{name}");
    let advised = berth_engine::advise::improvement(&advice);
    let best = out.improvement();
    let truth = (advised / best).clamp(0.0, 1.0);
    let stated = b.captured_at_least.expect("something to gain");
    assert!(
        stated <= truth + 1e-9,
        "{name}: stated {stated} > true {truth}"
    );
    println!(
        "{name}: before {before:.2}, advice {:.2}, proven optimum within {} moves {:.2}, bound {:.2} \
         | page: 'at least {:.1} %' (bound) vs 'within {:.1} % of the best possible (proven)' \
         [true share {:.1} %] | advise {advise_ms:.1} ms, bound alone {bound_ms:.1} ms, HiGHS {:.0} ms",
        before - advised,
        policy.max_moves,
        out.cost,
        b.cost_at_least,
        (stated * 1000.0).floor() / 10.0,
        (1.0 - truth) * 100.0,
        truth * 100.0,
        out.solve_s * 1e3,
    );
    Line { stated, truth }
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    let n = v.len();
    if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    }
}

/// The sample estate at the time the engine's own tests read it (5 minutes
/// after it was observed) and a week later, as a server shows it when its
/// facts have aged.
#[test]
fn the_sample_states_a_share_close_to_the_truth() {
    let text = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../examples/estates/sample.json"
    ))
    .unwrap();
    let sample = load(&text, Format::Json).unwrap();
    for at in ["2026-11-30T04:05:00Z", "2026-12-07T14:00:00Z"] {
        let line = measure(&format!("sample at {at}"), &sample, parse_time(at).unwrap());
        // The per-term bound stated 61.4 % at the first time; the advice
        // truly captures 89.4 % there, and the LP relaxation allows 88.7 %.
        assert!(
            line.stated >= 0.8 && line.stated >= line.truth - 0.06,
            "sample at {at}: stated {:.3}, true {:.3}",
            line.stated,
            line.truth
        );
    }
}

#[test]
fn medium_estates_state_at_least_90_percent_at_the_median() {
    for (services, clusters) in medium::SIZES {
        let (mut stated, mut truth) = (Vec::new(), Vec::new());
        for seed in 0..SEEDS {
            let estate = medium::estate(seed, services, clusters);
            let line = measure(&format!("{services}x{clusters} seed {seed}"), &estate, NOW);
            stated.push(line.stated);
            truth.push(line.truth);
        }
        let (ms, mt) = (median(stated), median(truth));
        println!(
            "{services} services × {clusters} clusters: median stated share {:.1} %, true {:.1} %",
            ms * 100.0,
            mt * 100.0
        );
        assert!(
            ms >= 0.9,
            "{services}x{clusters}: median stated share {ms:.3}"
        );
    }
}
