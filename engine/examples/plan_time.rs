//! Run time and improvement of each kind of plan `advise` weighs, on
//! generated estates of growing size:
//! `cargo run --release -p berth-engine --example plan_time`.
//! The figures behind the plan budgets of `docs/advice.md` §6.

use std::time::Instant;

use berth_engine::advise::{self, Cache, Search};
use berth_engine::gen::{self, Shape, NOW};
use berth_engine::Policy;

fn main() {
    let policy = Policy::default();
    let sizes: Vec<(usize, usize)> = std::env::args()
        .skip(1)
        .map(|a| {
            let (s, c) = a.split_once('x').expect("SERVICESxCLUSTERS");
            (s.parse().expect("services"), c.parse().expect("clusters"))
        })
        .collect();
    let sizes = if sizes.is_empty() {
        vec![(100, 8), (150, 10), (400, 12), (1000, 20), (5000, 50)]
    } else {
        sizes
    };
    for (services, clusters) in sizes {
        let estate = gen::estate(&Shape::sized(1, services, clusters));
        print!("{services} × {clusters} ({} flows):", estate.flows.len());
        for (name, search) in [
            ("pairs", Search::PAIRS),
            ("gather", Search::GATHER),
            ("weighed", Search::WEIGHED),
            ("targeted", Search::TARGETED),
        ] {
            let t = Instant::now();
            let a = advise::plan(&estate, &policy, NOW, Cache::Shared, search);
            let ms = t.elapsed().as_secs_f64() * 1e3;
            print!(
                "  {name} {ms:.1} ms +{:.1} ({} moves)",
                advise::improvement(&a),
                a.moves.len()
            );
        }
        let t = Instant::now();
        let a = advise::advise(&estate, &policy, NOW);
        println!(
            "  | advise {:.1} ms +{:.1}",
            t.elapsed().as_secs_f64() * 1e3,
            advise::improvement(&a)
        );
    }
}
