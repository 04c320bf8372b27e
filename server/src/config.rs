//! The settings a running server reads on every request, and their
//! defaults. A leaf: the command line fills it, `serve` hands it to the
//! state, and `auth` reads the cookie and origin settings from it.

use crate::{cache, site};

/// 64 MiB: the largest result a server builds and sends. Results of
/// estates within the size Berth is built for (5,000 services: a preview
/// of ~8 MB) fit eight times over; a 200,000-service estate's preview
/// (~310 MB, held twice while it is wrapped and sent) is refused instead
/// of taking a gigabyte of memory per request. Raise it with
/// `--max-result-mib` for estates that large.
pub const DEFAULT_MAX_RESULT_BYTES: usize = 64 * 1024 * 1024;

/// 60 a minute: a person working in the web app starts a handful of
/// computations a minute (the browser runs the engine itself on the
/// snapshot; cached answers are not counted), and a script comparing a
/// few dozen evaluation times fits in the burst, while one caller cannot
/// keep the engine's threads busy with a new `now` every call.
pub const DEFAULT_ENGINE_RUNS_PER_MINUTE: u32 = 60;

/// Settings a running server reads on every request.
#[derive(Clone, Debug)]
pub struct Config {
    /// Mark the session cookie `Secure`: set when Berth is reached over
    /// TLS (usually through a terminating proxy), so the cookie never
    /// travels in clear.
    pub secure_cookies: bool,
    /// Take the client address for rate limits from the last hop of
    /// `X-Forwarded-For`; only behind a proxy that sets it.
    pub trust_forwarded_for: bool,
    /// The address people reach Berth at (`--public-url`), as an origin
    /// (`https://berth.example.com`): browsers' `Origin` may name it as
    /// well as the request's `Host`, and when it is https the session
    /// cookie is `Secure`.
    pub public_url: Option<String>,
    /// Browser session lifetime, seconds.
    pub session_ttl_s: i64,
    /// Bytes the result cache may hold (`--result-cache-mib`).
    pub result_cache_bytes: usize,
    /// The largest engine result served (`--max-result-mib`); larger ones
    /// are refused with 507 (`result_too_large`).
    pub max_result_bytes: usize,
    /// Engine computations (cache misses of advice, preview, place,
    /// what-if, compare) one caller may start per minute, as a burst
    /// and as a sustained rate (`--engine-runs-per-minute`).
    pub engine_runs_per_minute: u32,
    /// Where the web bundle, styles and static files come from (embedded,
    /// a directory `scripts/build-web.sh` wrote, or nowhere); the pages
    /// themselves are rendered by the server and need nothing from here.
    pub site: site::Site,
}

impl Default for Config {
    fn default() -> Config {
        Config {
            secure_cookies: false,
            trust_forwarded_for: false,
            // 12 hours: a working day, so people sign in once a day and a
            // forgotten session does not outlive the night.
            session_ttl_s: 12 * 3600,
            public_url: None,
            result_cache_bytes: cache::DEFAULT_RESULT_CACHE_BYTES,
            max_result_bytes: DEFAULT_MAX_RESULT_BYTES,
            engine_runs_per_minute: DEFAULT_ENGINE_RUNS_PER_MINUTE,
            site: site::Site::Dir(std::path::PathBuf::from(site::DEFAULT_DIR)),
        }
    }
}
