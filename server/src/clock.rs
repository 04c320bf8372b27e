//! The wall clock, in whole seconds since the Unix epoch: the one place
//! the server reads it (the CLI resolves its own `--now`).

pub fn now_s() -> i64 {
    chrono::Utc::now().timestamp()
}
