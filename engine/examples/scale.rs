//! Scaling aid for `scripts/bench-scale.sh`: one phase on one estate file,
//! in its own process so its peak memory can be read by the caller.
//!
//! `scale gen SERVICES CLUSTERS FILE [SEED]` writes the seeded benchmark
//! estate (`Shape::sized(SEED, …)`, seed 42 by default); `scale validate FILE` loads and checks it (what
//! `berth validate` does); `scale advise FILE` loads it, advises at the
//! generator's time and writes the compact JSON result to a sink (what
//! `berth advise` does, minus the terminal); `scale advise-every FILE` the
//! same with the per-candidate reference cache. Prints the phase's time in
//! milliseconds on stdout.
use berth_engine::advise::{advise_with, Cache};
use berth_engine::gen::{self, Shape, NOW};
use berth_engine::{load, Format, Policy};

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let arg = |i: usize| args.get(i).map(String::as_str).unwrap_or_else(|| usage());
    match arg(0) {
        "gen" => {
            let n = |i: usize| arg(i).parse::<usize>().unwrap_or_else(|_| usage());
            let seed = args
                .get(4)
                .map_or(42, |s| s.parse::<u64>().unwrap_or_else(|_| usage()));
            let text = serde_json::to_string(&gen::file(&Shape::sized(seed, n(1), n(2))))
                .expect("serialises");
            std::fs::write(arg(3), text).expect("write the estate file");
        }
        phase @ ("validate" | "advise" | "advise-every") => {
            let text = std::fs::read_to_string(arg(1)).expect("read the estate file");
            let t = std::time::Instant::now();
            let estate = load(&text, Format::Json).unwrap_or_else(|e| panic!("{e:?}"));
            if phase != "validate" {
                let cache = if phase == "advise" {
                    Cache::Shared
                } else {
                    Cache::PerCandidate
                };
                let mut policy = Policy::default();
                if let Ok(m) = std::env::var("SCALE_MOVES") {
                    policy.max_moves = m.parse().expect("SCALE_MOVES is a number");
                }
                let advice = advise_with(&estate, &policy, NOW, cache);
                serde_json::to_writer(std::io::sink(), &advice).expect("serialises");
            }
            println!("{:.1}", t.elapsed().as_secs_f64() * 1e3);
        }
        _ => usage(),
    }
}

fn usage() -> ! {
    eprintln!(
        "usage: scale gen SERVICES CLUSTERS FILE [SEED] | scale validate|advise|advise-every FILE"
    );
    std::process::exit(2)
}
