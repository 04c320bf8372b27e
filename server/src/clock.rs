//! The wall clock: whole seconds since the Unix epoch, the one place the
//! server reads it (the CLI resolves its own `--now`), and the stopwatch
//! both time the built-in deciders of a comparison with.

pub fn now_s() -> i64 {
    chrono::Utc::now().timestamp()
}

/// Run `run` and return the milliseconds it took: the stopwatch
/// `berth_engine::front::compare` takes (the engine has no clock).
pub fn stopwatch(run: &mut dyn FnMut()) -> Option<f64> {
    let start = std::time::Instant::now();
    run();
    Some(start.elapsed().as_secs_f64() * 1000.0)
}
