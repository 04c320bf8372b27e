//! Native half of `engine-wasm/bench/wasm-vs-native.sh`: times
//! `berth_parity::advise_json` (load + advise + pretty JSON, the same call
//! the WebAssembly export makes) on a generated estate.
//!
//! `cargo run --release -p berth-engine-wasm --example native_advise_time -- [SEED SERVICES CLUSTERS RUNS]`
//! (defaults 42 5000 50 5). Prints one line of `key=value` pairs: the
//! median and minimum of RUNS timed calls after one warm-up, the sizes, and
//! the SHA-256 of the advice (the WebAssembly side prints the same fields).

use std::time::Instant;

use berth_engine_wasm::berth_parity;

/// 2026-11-30T04:05:00Z, the generator's evaluation time.
const NOW: i64 = 1_796_011_500;

fn main() {
    let args: Vec<u64> = std::env::args()
        .skip(1)
        .map(|a| a.parse().expect("numeric arguments"))
        .collect();
    let arg = |i: usize, default: u64| args.get(i).copied().unwrap_or(default);
    let (seed, services, clusters, runs) = (arg(0, 42), arg(1, 5000), arg(2, 50), arg(3, 5));

    let text = berth_parity::generated_file(seed, services as u32, clusters as u32);
    let warm = berth_parity::advise_json(&text, "", NOW);
    let mut ms: Vec<f64> = (0..runs.max(1))
        .map(|_| {
            let t = Instant::now();
            let out = berth_parity::advise_json(std::hint::black_box(&text), "", NOW);
            let elapsed = t.elapsed().as_secs_f64() * 1000.0;
            assert_eq!(out, warm, "advice is deterministic");
            elapsed
        })
        .collect();
    ms.sort_by(f64::total_cmp);
    println!(
        "side=native median_ms={:.1} min_ms={:.1} runs={} estate_bytes={} advice_bytes={} advice_sha256={}",
        ms[ms.len() / 2],
        ms[0],
        ms.len(),
        text.len(),
        warm.len(),
        berth_engine::gen::digest(warm.as_bytes()),
    );
}
