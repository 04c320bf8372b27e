//! `cargo bench -p berth-engine --bench advise`: per estate size, the time
//! of `validate` (parse + check the file text) and of `advise` (validate,
//! then up to 40 sequential moves) on the same generated file.
//!
//! A bench binary rather than a timed test: it prints figures (minimum and
//! median of several runs) for `docs/performance.md`, and asserts nothing.

mod common;

use common::{ms, time};

use berth_engine::gen::{self, Shape, NOW};
use berth_engine::{advise, load, Format, Policy};

fn main() {
    let policy = Policy::default();
    let sizes: &[(usize, usize)] = &[
        (100, 5),
        (500, 10),
        (1_000, 20),
        (2_000, 30),
        (5_000, 50),
        (10_000, 100),
    ];
    println!(
        "{:>8} {:>8} {:>8} {:>10} {:>14} {:>14} {:>7} {:>6}",
        "services", "clusters", "flows", "file KiB", "validate ms", "advise ms", "ratio", "moves"
    );
    for &(services, clusters) in sizes {
        let text = serde_json::to_string(&gen::file(&Shape::sized(42, services, clusters)))
            .expect("serialises");
        let estate = load(&text, Format::Json).expect("valid");
        let runs = if services >= 5_000 { 7 } else { 11 };
        let (v_min, v_med) = time(runs, || {
            std::hint::black_box(load(&text, Format::Json).expect("valid"));
        });
        let mut moves = 0;
        let (a_min, a_med) = time(runs, || {
            let e = load(&text, Format::Json).expect("valid");
            let a = advise(&e, &policy, NOW);
            moves = a.moves.len();
            std::hint::black_box(a);
        });
        println!(
            "{:>8} {:>8} {:>8} {:>10} {:>7.1}/{:<6.1} {:>7.1}/{:<6.1} {:>7.2} {:>6}",
            services,
            clusters,
            estate.flows.len(),
            text.len() / 1024,
            ms(v_min),
            ms(v_med),
            ms(a_min),
            ms(a_med),
            ms(a_med) / ms(v_med),
            moves
        );
    }
    println!("(times are min/median; advise includes validate, as `berth advise` does)");
}
