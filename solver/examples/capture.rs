//! How much of the proven optimum within the 40-move cap `berth advise`
//! captures on generated medium estates (`docs/quality.md`, "Against a
//! proven optimum").
//!
//! `cargo run --release -p berth-solver --example capture -- [--estates N] [--limit S] [--sizes 40x8,80x10,150x12,400x12] [--rows]`
//!
//! The estates are issue 18's (`engine/tests/common/medium.rs`: the
//! generator's `Shape` with 4–6 sites and 2 extra calls per service, every
//! fact trusted). The reference is the optimum of `berth_solver`'s model
//! within `max_moves`, proven by HiGHS within the time limit (`--limit`,
//! default 60 s). An estate counts when that optimum gains something and,
//! taken as one step, clears the default bars (below them no step of the
//! advice may take it), as in the other tables of that page. The share is
//! the advice's improvement (cost before − cost after − copy) over the
//! optimum's. `optimum-capped` (the engine's own reference decider, scored
//! like every decider) is measured against the same proven optimum. Times
//! are wall clock on one run: advise (median of 3), HiGHS's solve (model
//! building apart).

#[path = "../../engine/tests/common/medium.rs"]
#[allow(dead_code)]
mod medium;
#[path = "../../engine/tests/common/trusted.rs"]
mod trusted;

use std::time::Instant;

use berth_engine::cost::{self, Ctx, State};
use berth_engine::gen::NOW;
use berth_engine::Policy;
use berth_solver::{solve, Limits};

/// CPU time of this process so far, ns: the sum over its threads of the
/// time the kernel ran them (`/proc/self/task/*/schedstat`, first
/// field), so that times measured while other work shares the machine
/// count only this process's work. `None` off Linux.
fn cpu_ns() -> Option<u64> {
    let mut total = 0u64;
    for task in std::fs::read_dir("/proc/self/task").ok()? {
        let path = task.ok()?.path().join("schedstat");
        let text = std::fs::read_to_string(path).ok()?;
        total += text.split_whitespace().next()?.parse::<u64>().ok()?;
    }
    Some(total)
}

/// Milliseconds of CPU between two [`cpu_ns`] readings (NaN without them).
fn cpu_ms(from: Option<u64>, to: Option<u64>) -> f64 {
    match (from, to) {
        (Some(a), Some(b)) => b.saturating_sub(a) as f64 / 1e6,
        _ => f64::NAN,
    }
}

/// Median (upper middle), for times.
fn median(v: &mut [f64]) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

/// Median (mean of the middle two for an even count), 5th percentile
/// (nearest rank: the ⌈0.05·n⌉-th smallest) and mean: the definitions of
/// every share table in `docs/quality.md`.
fn stats(values: &[f64]) -> (f64, f64, f64) {
    let mut v = values.to_vec();
    v.sort_by(f64::total_cmp);
    let n = v.len();
    if n == 0 {
        return (f64::NAN, f64::NAN, f64::NAN);
    }
    let median = if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    };
    let p5 = v[(0.05 * n as f64).ceil().max(1.0) as usize - 1];
    (median, p5, v.iter().sum::<f64>() / n as f64)
}

fn main() {
    let mut estates = 50u64;
    let mut limit = 60.0;
    let mut sizes: Vec<(usize, usize)> = medium::SIZES.to_vec();
    let mut rows = false;
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        match a.as_str() {
            "--estates" => estates = args.next().and_then(|v| v.parse().ok()).expect("a number"),
            "--limit" => limit = args.next().and_then(|v| v.parse().ok()).expect("seconds"),
            "--sizes" => {
                sizes = args
                    .next()
                    .expect("sizes")
                    .split(',')
                    .map(|s| {
                        let (a, b) = s.split_once('x').expect("SERVICESxCLUSTERS");
                        (a.parse().expect("services"), b.parse().expect("clusters"))
                    })
                    .collect()
            }
            "--rows" => rows = true,
            _ => panic!("unknown option {a}"),
        }
    }
    let policy = Policy::default();
    println!(
        "| services | clusters | estates | proven | counted | median | p5 | mean | at optimum (≥ 99.9 %) \
         | optimum-capped mean | solver median ms | solver max ms | advise median ms \
         | solver median CPU ms | advise median CPU ms |"
    );
    println!("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|");
    for (services, clusters) in sizes {
        let (mut shares, mut capped_shares) = (Vec::new(), Vec::new());
        let (mut solver_ms, mut advise_ms) = (Vec::new(), Vec::new());
        let (mut solver_cpu, mut advise_cpu) = (Vec::new(), Vec::new());
        let mut proven = 0;
        for seed in 0..estates {
            let estate = medium::estate(seed, services, clusters);
            let (mut runs, mut cpus) = (Vec::new(), Vec::new());
            let mut advice = None;
            for _ in 0..3 {
                let (t, c) = (Instant::now(), cpu_ns());
                advice = Some(berth_engine::advise(&estate, &policy, NOW));
                cpus.push(cpu_ms(c, cpu_ns()));
                runs.push(t.elapsed().as_secs_f64() * 1e3);
            }
            advise_ms.push(median(&mut runs));
            advise_cpu.push(median(&mut cpus));
            let advised = berth_engine::advise::improvement(&advice.expect("advised"));
            let ctx = Ctx::new(&estate, &policy, NOW);
            let c = cpu_ns();
            let out = solve(
                &ctx,
                Limits {
                    max_moves: policy.max_moves,
                    time_limit_s: limit,
                },
            )
            .unwrap_or_else(|e| panic!("{services} services, seed {seed}: {e}"));
            // CPU of the whole call (model building included).
            solver_cpu.push(cpu_ms(c, cpu_ns()));
            solver_ms.push(out.solve_s * 1e3);
            if out.proven() {
                proven += 1;
            }
            let optimal = out.improvement();
            let tol = 1e-6 * (1.0 + out.cost_before.abs());
            assert!(
                !out.proven() || advised <= optimal + tol,
                "seed {seed}: the advice beats the proven optimum"
            );
            let moved: Vec<usize> = (0..estate.services.len())
                .filter(|&s| out.placement[s] != estate.services[s].cluster)
                .collect();
            let bar = cost::step_bar(
                &ctx,
                berth_engine::group::current_cost(&ctx, &State::initial(&estate), &moved),
                moved.len(),
            );
            let counts = out.proven() && optimal > 1e-6 && optimal >= bar;
            let capped = medium::capped_reference(&estate, &policy);
            if rows {
                println!(
                    "seed {seed:>3} {services}×{clusters}: advice {advised:>9.2}, proven optimum {optimal:>9.2} \
                     ({} moves, {:?}, orderable {}), optimum-capped {:>9.2}; solve {:.0} ms",
                    moved.len(),
                    out.status,
                    out.order.is_ok(),
                    capped.gain,
                    out.solve_s * 1e3
                );
            }
            if counts {
                shares.push(advised / optimal);
                // Above `optimum::MAX_MOVABLE` movable services the
                // decider does not run (its note says so): no share.
                if !capped.note.starts_with("not run") {
                    capped_shares.push(capped.gain / optimal);
                }
            }
        }
        let (med, p5, mean) = stats(&shares);
        let capped_mean = if capped_shares.is_empty() {
            "not run".to_string()
        } else {
            format!(
                "{:.1} % (ran on {} of {})",
                stats(&capped_shares).2 * 100.0,
                capped_shares.len(),
                shares.len()
            )
        };
        let at = shares.iter().filter(|&&s| s >= 0.999).count();
        println!(
            "| {services} | {clusters} | {estates} | {proven} | {} | {:.1} % | {:.1} % | {:.1} % | {at} | {capped_mean} | {:.0} | {:.0} | {:.1} | {:.0} | {:.1} |",
            shares.len(),
            med * 100.0,
            p5 * 100.0,
            mean * 100.0,
            median(&mut solver_ms),
            solver_ms.iter().copied().fold(0.0, f64::max),
            median(&mut advise_ms),
            median(&mut solver_cpu),
            median(&mut advise_cpu),
        );
    }
}
