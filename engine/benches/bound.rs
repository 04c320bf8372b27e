//! `cargo bench -p berth-engine --bench bound [-- SERVICES CLUSTERS]…`:
//! the time of the proven lower bound (`bound::cost_at_least`) next to
//! `validate` and the whole of `advise` (which includes it), on the
//! generated estates of issue 18's sizes (`gen_estate`'s shape, seed 42).
//! Prints figures for `docs/performance.md`; asserts nothing.

mod common;

use common::{ms, time};

use berth_engine::advise::feasibility;
use berth_engine::cost::Ctx;
use berth_engine::gen::{self, Shape, NOW};
use berth_engine::{advise, bound, load, Format, Policy};

fn main() {
    let args: Vec<usize> = std::env::args()
        .skip(1)
        .filter_map(|a| a.parse().ok())
        .collect();
    let sizes: Vec<(usize, usize)> = if args.len() >= 2 {
        args.chunks_exact(2).map(|c| (c[0], c[1])).collect()
    } else {
        vec![(5_000, 50), (20_000, 200), (50_000, 400)]
    };
    let policy = Policy::default();
    println!(
        "{:>8} {:>8} {:>8} {:>12} {:>12} {:>10} {:>8}",
        "services", "clusters", "flows", "validate ms", "advise ms", "bound ms", "bound %"
    );
    for (services, clusters) in sizes {
        let text = serde_json::to_string(&gen::file(&Shape::sized(42, services, clusters)))
            .expect("serialises");
        let estate = load(&text, Format::Json).expect("valid");
        // Three runs each: the largest estate takes seconds per advise.
        let runs = 3;
        let (_, v) = time(runs, || {
            std::hint::black_box(load(&text, Format::Json).expect("valid"));
        });
        let (_, a) = time(runs, || {
            let e = load(&text, Format::Json).expect("valid");
            std::hint::black_box(advise(&e, &policy, NOW));
        });
        let ctx = Ctx::new(&estate, &policy, NOW);
        let cands = feasibility(&estate).candidates;
        let (_, b) = time(runs, || {
            std::hint::black_box(bound::cost_at_least(&ctx, &cands));
        });
        println!(
            "{:>8} {:>8} {:>8} {:>12.1} {:>12.1} {:>10.1} {:>7.1}%",
            services,
            clusters,
            estate.flows.len(),
            ms(v),
            ms(a),
            ms(b),
            100.0 * ms(b) / ms(a)
        );
    }
    println!("(medians of 3 runs; advise includes validate and the bound)");
}
