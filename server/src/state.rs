//! The application state: every handle a request handler can reach,
//! built once by `serve` (and by tests) and cloned into each request.
//! It sits just below the HTTP layer that uses it and above the services
//! it holds: the estate service, review memory, the driver and
//! notifications never see it; each takes the handles it needs
//! (`&Db`, `&Cache`, `auth::Gate`, `external::Handles`).

use std::sync::Arc;

use crate::config::Config;
use crate::{auth, cache, db, external, metrics};

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
    /// Heavy requests in service and estate documents being sent
    /// (`http::extract::heavy_permit`, `shared_document`).
    pub heavy: crate::heavy::HeavyBook,
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
            heavy: Default::default(),
        }
    }

    /// Replace the outbound machinery (forwarding policy, at-rest key).
    pub fn with_outbound(mut self, outbound: external::Outbound) -> AppState {
        self.outbound = Arc::new(outbound);
        self
    }

    /// What the authentication layer works with.
    pub fn gate(&self) -> auth::Gate {
        auth::Gate {
            db: self.db.clone(),
            limiter: self.limiter.clone(),
            config: self.config.clone(),
        }
    }

    /// What a driver pass and its notifications work with.
    pub fn external(&self) -> external::Handles {
        external::Handles {
            db: self.db.clone(),
            cache: self.cache.clone(),
            outbound: self.outbound.clone(),
            pass_lock: self.pass_lock.clone(),
        }
    }

    /// Record that this server runs the advice driver with `cfg`.
    pub fn with_driver(mut self, cfg: external::driver::DriverConfig) -> AppState {
        self.driver = Some(Arc::new(cfg));
        self
    }
}
