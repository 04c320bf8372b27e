//! Timing helpers shared by the bench binaries.

use std::time::{Duration, Instant};

/// Minimum and median wall time of `runs` calls of `f`.
pub fn time<F: FnMut()>(runs: usize, mut f: F) -> (Duration, Duration) {
    let mut times: Vec<Duration> = (0..runs)
        .map(|_| {
            let t = Instant::now();
            f();
            t.elapsed()
        })
        .collect();
    times.sort();
    (times[0], times[runs / 2])
}

/// A duration in milliseconds, for printing.
pub fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}
