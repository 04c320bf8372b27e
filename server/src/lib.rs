//! The `berth` crate: everything that touches the outside world — files,
//! the clock, the database, HTTP. The pure engine (`berth-engine`) is fed
//! from here and never reaches out on its own.
//!
//! Server codemap, top down (a module imports only modules below it):
//! [`serve`] starts it (configuration, database, seeding, graceful
//! shutdown); [`listen`] accepts connections under their caps and
//! timeouts; [`http`] is the API — `http::routes()` the route table, one
//! module per resource group with its routes declared next to its
//! handlers, `http::app` the router built from them; [`web`] mounts the
//! pages as the router's fallback; [`external`] calls external deciders
//! and runs the advice driver; [`estates`] is the estate service under
//! both (visibility, the parsed estate from cache or database,
//! canonicalising, writes under the estate lock, result envelopes);
//! [`auth`] decides who may do what; [`error`] turns errors (the
//! store's too) into responses; [`store`] holds every SQL statement;
//! [`db`] connects and migrates; [`facts`] applies fact updates to an
//! estate document; [`cache`] keeps parsed estates and finished results;
//! [`metrics`] renders `/metrics`; [`clock`], [`digest`], [`random`] and
//! [`role`] are leaves everything may use.
//!
//! Clients of a Berth server: [`prom_client`] queries Prometheus,
//! [`submit`] posts observation batches (retries, backoff), [`agent`] is
//! the long-running `berth agent` loop.

pub mod agent;
pub mod auth;
pub mod cache;
pub mod clock;
pub mod db;
pub mod digest;
pub mod error;
pub mod estates;
pub mod external;
pub mod facts;
pub mod http;
pub mod import;
pub mod kube_source;
pub mod listen;
pub mod metrics;
pub mod prom_client;
pub mod random;
pub mod reviews;
pub mod role;
pub mod serve;
pub mod site;
pub mod store;
pub mod submit;
pub mod web;

use std::sync::Arc;

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

/// Everything a handler can reach. Cheap to clone: all shared inside.
#[derive(Clone)]
pub struct AppState {
    pub db: db::Db,
    pub metrics: metrics::Metrics,
    pub limiter: auth::RateLimiter,
    /// Per token, for observation batches.
    pub observe_limiter: auth::RateLimiter,
    /// Per caller (token or user), for engine computations.
    pub engine_limiter: auth::RateLimiter,
    pub cache: cache::Cache,
    pub config: Arc<Config>,
    /// Calls to external deciders: the forwarder and the at-rest key.
    pub outbound: Arc<external::Outbound>,
    /// The advice driver's settings when this server runs it.
    pub driver: Option<Arc<external::driver::DriverConfig>>,
    /// One driver pass at a time in this process (SQLite; PostgreSQL uses
    /// an advisory lock across replicas).
    pub pass_lock: Arc<tokio::sync::Mutex<()>>,
    /// One decider leaderboard computation at a time on this server (the
    /// default suite keeps a core busy for seconds).
    pub leaderboard_lock: Arc<std::sync::Mutex<()>>,
}

impl AppState {
    pub fn new(db: db::Db, config: Config) -> AppState {
        AppState {
            db,
            metrics: metrics::Metrics::default(),
            limiter: auth::RateLimiter::for_credentials(),
            observe_limiter: auth::RateLimiter::for_observations(),
            engine_limiter: auth::RateLimiter::per_minute(config.engine_runs_per_minute),
            cache: cache::Cache::new(config.result_cache_bytes),
            config: Arc::new(config),
            outbound: Arc::new(external::Outbound {
                forwarder: external::forward::Forwarder::new(
                    external::forward::ForwardPolicy::default(),
                    Arc::new(external::forward::SystemResolver),
                ),
                vault: None,
            }),
            driver: None,
            pass_lock: Arc::new(tokio::sync::Mutex::new(())),
            leaderboard_lock: Arc::new(std::sync::Mutex::new(())),
        }
    }

    /// Replace the outbound machinery (forwarding policy, at-rest key).
    pub fn with_outbound(mut self, outbound: external::Outbound) -> AppState {
        self.outbound = Arc::new(outbound);
        self
    }

    /// Record that this server runs the advice driver with `cfg`.
    pub fn with_driver(mut self, cfg: external::driver::DriverConfig) -> AppState {
        self.driver = Some(Arc::new(cfg));
        self
    }
}
