//! Profiling aid: load and advise a generated estate, printing phase times.
//! `cargo run --release -p berth-engine --example profile_advise -- 5000 50 5`
//! (services, clusters, repetitions). Figures for the record come from
//! `cargo bench -p berth-engine --bench advise`; this is for digging.
use berth_engine::gen::{self, Shape, NOW};
use berth_engine::{advise, load, Format, Policy};

fn main() {
    let args: Vec<usize> = std::env::args()
        .skip(1)
        .map(|a| a.parse().expect("number"))
        .collect();
    let (services, clusters, reps) = (args[0], args[1], args[2]);
    let text = serde_json::to_string(&gen::file(&Shape::sized(42, services, clusters))).unwrap();
    let policy = Policy::default();
    for _ in 0..reps {
        let t = std::time::Instant::now();
        let e = load(&text, Format::Json).unwrap();
        let loaded = t.elapsed();
        let a = advise(&e, &policy, NOW);
        eprintln!(
            "load {:?} advise {:?} moves {}",
            loaded,
            t.elapsed() - loaded,
            a.moves.len()
        );
    }
}
