//! `gen_estate SERVICES CLUSTERS [SEED] [--pretty]`: write a generated
//! estate file (JSON) to stdout, from the same seeded generator as the
//! engine's benchmarks (`berth_engine::gen`, `Shape::sized`; seed 42 by
//! default, so `gen_estate 5000 50` is the 5,000-service benchmark estate).
//!
//! For `scripts/bench-server.sh`, which needs estate files to send to a
//! running server and has no other way to make them.

use std::io::Write;
use std::process::ExitCode;

use berth_engine::gen::{self, Shape};

fn main() -> ExitCode {
    let mut pretty = false;
    let mut numbers = Vec::new();
    for arg in std::env::args().skip(1) {
        if arg == "--pretty" {
            pretty = true;
        } else if let Ok(n) = arg.parse::<u64>() {
            numbers.push(n);
        } else {
            return usage(&format!("not a number: {arg:?}"));
        }
    }
    let (services, clusters, seed) = match numbers[..] {
        [s, c] => (s, c, 42),
        [s, c, seed] => (s, c, seed),
        _ => return usage("expected SERVICES CLUSTERS [SEED]"),
    };
    if services == 0 || clusters == 0 {
        return usage("SERVICES and CLUSTERS must be at least 1");
    }
    let file = gen::file(&Shape::sized(seed, services as usize, clusters as usize));
    let text = if pretty {
        serde_json::to_string_pretty(&file)
    } else {
        serde_json::to_string(&file)
    }
    .expect("a generated estate serialises");
    let mut out = std::io::stdout().lock();
    if writeln!(out, "{text}").and_then(|()| out.flush()).is_err() {
        return ExitCode::from(1);
    }
    ExitCode::SUCCESS
}

fn usage(why: &str) -> ExitCode {
    eprintln!("gen_estate: {why}\nusage: gen_estate SERVICES CLUSTERS [SEED] [--pretty]");
    ExitCode::from(2)
}
