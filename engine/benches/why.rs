//! `cargo bench -p berth-engine --bench why`: time of `why::explain` (facts,
//! terms and exact flip conditions for every recommended move) on the big
//! generated estate, after `advise` (which is not included in the time).
//!
//! A bench binary rather than a timed test: it prints figures (minimum and
//! median of several runs) and asserts nothing. Target: ≤ 100 ms for the
//! 40 moves of the 5,000-service × 50-cluster estate.

mod common;

use common::{ms, time};

use berth_engine::gen::{self, Shape, NOW};
use berth_engine::{advise, explain, Policy};

fn main() {
    let policy = Policy::default();
    println!(
        "{:>8} {:>8} {:>8} {:>6} {:>14} {:>14} {:>11} {:>11}",
        "services",
        "clusters",
        "flows",
        "moves",
        "advise ms",
        "explain ms",
        "thresholds",
        "other facts"
    );
    for &(services, clusters) in &[(1_000, 20), (5_000, 50), (10_000, 100)] {
        let estate = gen::estate(&Shape::sized(42, services, clusters));
        let runs = if services >= 5_000 { 9 } else { 15 };
        let (a_min, a_med) = time(runs, || {
            std::hint::black_box(advise(&estate, &policy, NOW));
        });
        let advice = advise(&estate, &policy, NOW);
        let (e_min, e_med) = time(runs, || {
            std::hint::black_box(explain(&estate, &policy, NOW, &advice));
        });
        let why = explain(&estate, &policy, NOW, &advice);
        let thresholds: usize = why
            .iter()
            .flat_map(|w| w.flips.iter().chain(&w.other_flips))
            .map(|f| f.above.is_some() as usize + f.below.is_some() as usize)
            .sum();
        let others: usize = why.iter().map(|w| w.other_flips.len()).sum();
        println!(
            "{:>8} {:>8} {:>8} {:>6} {:>7.1}/{:<6.1} {:>7.1}/{:<6.1} {:>11} {:>11}",
            services,
            clusters,
            estate.flows.len(),
            advice.moves.len(),
            ms(a_min),
            ms(a_med),
            ms(e_min),
            ms(e_med),
            thresholds,
            others
        );
    }
    println!("(times are min/median; advise on the loaded estate, explain given that advice)");
}
