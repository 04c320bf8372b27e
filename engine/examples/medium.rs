//! How much of the best improvement reachable within the move cap the
//! sequential advice captures on medium estates (issue 18: 40, 80 and 150
//! services on 8–12 clusters over 4–6 sites), with the default policy.
//!
//! `cargo run --release -p berth-engine --example medium -- [--estates N] [--rows]`
//!
//! The reference is the `optimum-capped` decider (at most `max_moves` moved
//! services, like the baseline), scored by `decider::score` like every
//! decider; its note says whether it proved optimality. Estates where
//! nothing can be gained, or where the reference's moves taken as one
//! step would not clear the default bars, are left out and counted. The baseline's
//! improvement is its advice's cost before minus cost after and copy cost
//! (`docs/quality.md`, "Definitions"). Advise is timed alone, median of 5.

use std::time::Instant;

#[path = "../tests/common/medium.rs"]
mod medium;
#[path = "../tests/common/trusted.rs"]
mod trusted;

use berth_engine::gen::NOW;
use berth_engine::Policy;

fn main() {
    let mut estates = 50u64;
    let mut rows = false;
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        match a.as_str() {
            "--estates" => estates = args.next().and_then(|v| v.parse().ok()).expect("a number"),
            "--rows" => rows = true,
            _ => panic!("unknown option {a}"),
        }
    }
    let policy = Policy::default();
    println!(
        "| services | clusters | estates | under the bars | counted | proven | median share | p5 share | mean share \
         | at reference | advise median ms | advise max ms |"
    );
    println!("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|");
    for (services, clusters) in medium::SIZES {
        let mut shares = Vec::new();
        let mut times = Vec::new();
        let mut proven = 0;
        let mut below = 0;
        for seed in 0..estates {
            let estate = medium::estate(seed, services, clusters);
            let mut runs = Vec::new();
            let mut advice = None;
            for _ in 0..5 {
                let t = Instant::now();
                advice = Some(berth_engine::advise(&estate, &policy, NOW));
                runs.push(t.elapsed().as_secs_f64() * 1e3);
            }
            runs.sort_by(f64::total_cmp);
            times.push(runs[2]);
            let advice = advice.expect("advised");
            let base = berth_engine::advise::improvement(&advice);
            let reference = medium::capped_reference(&estate, &policy);
            let note = &reference.note;
            if note.starts_with("proven") {
                proven += 1;
            }
            let tol = 1e-9 * (1.0 + advice.totals_before.cost.abs());
            assert!(
                base <= reference.gain + tol,
                "seed {seed}: advice beats the reference"
            );
            if rows {
                println!(
                    "seed {seed:>3} {services}×{clusters}: advice {base:>9.2} ({} moves), reference {:>9.2}, {:.2} ms; {note}",
                    advice.moves.len(),
                    reference.gain,
                    runs[2]
                );
            }
            if reference.counts() {
                shares.push(base / reference.gain);
            } else {
                below += 1;
            }
        }
        let mut sorted = shares.clone();
        sorted.sort_by(f64::total_cmp);
        let n = sorted.len();
        let median = if n % 2 == 1 {
            sorted[n / 2]
        } else {
            (sorted[n / 2 - 1] + sorted[n / 2]) / 2.0
        };
        let p5 = sorted[(0.05 * n as f64).ceil().max(1.0) as usize - 1];
        let mean = sorted.iter().sum::<f64>() / n as f64;
        let at = sorted.iter().filter(|&&s| s >= 0.999).count();
        times.sort_by(f64::total_cmp);
        println!(
            "| {services} | {clusters} | {estates} | {below} | {n} | {proven} | {:.1} % | {:.1} % | {:.1} % | {at} | {:.2} | {:.2} |",
            median * 100.0,
            p5 * 100.0,
            mean * 100.0,
            times[times.len() / 2],
            times[times.len() - 1]
        );
    }
}
