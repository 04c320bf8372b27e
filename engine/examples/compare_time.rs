//! Run time of every built-in decider on generated estates of growing
//! size: `cargo run --release -p berth-engine --example compare_time`.
//! Prints, per estate, each decider's milliseconds, accepted moves and
//! projected gain (the check behind the budgets of `optimum.rs`).

use std::time::Instant;

use berth_engine::decider;
use berth_engine::gen::{self, Shape, NOW};
use berth_engine::Policy;

fn main() {
    let policy = Policy::default();
    for (services, clusters) in [(30, 5), (150, 10), (400, 12), (1000, 20), (1000, 40)] {
        let estate = gen::estate(&Shape::sized(1, services, clusters));
        let t = Instant::now();
        let c = decider::compare_timed(&estate, &policy, NOW, &[], &mut |run| {
            let t = Instant::now();
            run();
            Some(t.elapsed().as_secs_f64() * 1e3)
        });
        println!(
            "{services} services × {clusters} clusters, {} flows: compare {:.0} ms",
            estate.flows.len(),
            t.elapsed().as_secs_f64() * 1e3
        );
        for d in &c.deciders {
            let r = d.result.as_ref().unwrap();
            println!(
                "  {:<16} {:>8.1} ms  {:>4} accepted  gain {:>10.2}  {}",
                d.name,
                d.run_time_ms.unwrap_or(f64::NAN),
                r.accepted_count,
                r.projected_gain,
                d.note.as_deref().unwrap_or("")
            );
        }
    }
}
