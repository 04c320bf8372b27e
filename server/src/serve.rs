//! `berth serve`: configuration, database, first-start seeding and the
//! bootstrap administrator, then the HTTP server (`listen`) until SIGTERM
//! or Ctrl-C.

use std::net::SocketAddr;
use std::path::PathBuf;

use berth_engine::{estate, export, Format, Policy};

use crate::config::Config;
use crate::db::{self, Db};
use crate::external::driver::{self, DriverConfig};
use crate::external::forward::{AllowList, ForwardPolicy, Forwarder, SystemResolver};
use crate::external::vault::Vault;
use crate::external::Outbound;
use crate::listen::{self, NetLimits};
use crate::state::AppState;
use crate::{auth, http, store};

/// The sample estate shipped with Berth, seeded at first start so the
/// first page shows real advice.
pub const SAMPLE_ESTATE: &str = include_str!("../../examples/estates/sample.json");

/// The instant the sample was written for (the Makefile's `SAMPLE_NOW`):
/// at this time its facts have the designed mix of classes — most fresh,
/// some deliberately stale (docs/server.md). Seeding shifts every
/// observation by (first start − this), so the mix is the same on any day.
pub const SAMPLE_DESIGNED_AT: &str = "2026-11-30T04:05:00Z";

/// [`SAMPLE_DESIGNED_AT`] in Unix seconds: as `sample_at`, it seeds the
/// sample exactly as the file is (what tests pinned to that time use).
pub fn sample_designed_at() -> i64 {
    estate::parse_time(SAMPLE_DESIGNED_AT).expect("a valid RFC 3339 time")
}

#[derive(Clone, Debug)]
pub struct ServeOptions {
    pub listen: SocketAddr,
    /// `sqlite:…` or `postgres://…`; `None`: SQLite in `data_dir`.
    pub database_url: Option<String>,
    pub data_dir: PathBuf,
    pub admin_token: Option<String>,
    pub seed: bool,
    /// The time the sample's observation ages count from (Unix seconds);
    /// `None`: the first start's clock.
    pub sample_at: Option<i64>,
    pub max_connections: u32,
    /// The at-rest key for decider secrets, as base64 text.
    pub secret_key: Option<String>,
    pub secret_key_file: Option<PathBuf>,
    /// CIDRs of loopback/private networks deciders may be reached on.
    pub decider_allow: Vec<String>,
    /// Seconds between advice driver passes; `None`: no driver here.
    pub driver_every_s: Option<u64>,
    /// Days of advice snapshots the driver keeps.
    pub history_retention_days: u32,
    /// Timeouts and connection caps of the listener.
    pub net: NetLimits,
    pub config: Config,
}

impl ServeOptions {
    /// Defaults for tests and embedding: like `berth serve` with no flags,
    /// but on the given database and address, without the driver.
    pub fn new(
        listen: SocketAddr,
        database_url: Option<String>,
        data_dir: PathBuf,
    ) -> ServeOptions {
        ServeOptions {
            listen,
            database_url,
            data_dir,
            admin_token: None,
            seed: true,
            sample_at: None,
            max_connections: 16,
            secret_key: None,
            secret_key_file: None,
            decider_allow: Vec::new(),
            driver_every_s: None,
            history_retention_days: driver::DEFAULT_HISTORY_RETENTION_DAYS,
            net: NetLimits::default(),
            config: Config::default(),
        }
    }
}

/// The at-rest key: given, from a file, or (SQLite default) a file in the
/// data directory created at first start. PostgreSQL with neither: none,
/// so decider secrets are refused with a message saying what to set.
fn vault(opts: &ServeOptions) -> Result<Option<Vault>, String> {
    if let Some(k) = &opts.secret_key {
        return Vault::from_key_text(k, "BERTH_SECRET_KEY")
            .map(Some)
            .map_err(|e| e.to_string());
    }
    if let Some(path) = &opts.secret_key_file {
        return Vault::from_file(path, false)
            .map(Some)
            .map_err(|e| e.to_string());
    }
    if opts.database_url.is_none() {
        return Vault::from_file(&opts.data_dir.join("secret.key"), true)
            .map(Some)
            .map_err(|e| e.to_string());
    }
    Ok(None)
}

/// Open the database, seed it on first start, and make sure an
/// administrator can get in. Returns the state and, when one was just
/// generated, the bootstrap token (for printing once).
pub async fn prepare(opts: &ServeOptions) -> Result<(AppState, Option<String>), String> {
    let url = match &opts.database_url {
        Some(u) => u.clone(),
        None => db::sqlite_url_in(&opts.data_dir).map_err(|e| e.to_string())?,
    };
    let db = Db::connect(&url, opts.max_connections)
        .await
        .map_err(|e| e.to_string())?;
    tracing::info!(database = %db::redact(&url), backend = db.backend.as_str(), "database ready");
    let now = auth::now_s();
    if opts.seed {
        seed(&db, now, opts.sample_at.unwrap_or(now))
            .await
            .map_err(|e| format!("seeding the sample estate: {e}"))?;
    }
    let token = store::ensure_bootstrap(&db, opts.admin_token.as_deref(), now)
        .await
        .map_err(|e| format!("creating the bootstrap administrator: {e}"))?;
    let vault = vault(opts)?;
    match &vault {
        Some(v) => tracing::info!(source = %v.source, "decider secrets sealed with the secret key"),
        None => tracing::warn!(
            "no secret key (BERTH_SECRET_KEY or --secret-key-file): deciders cannot have secrets"
        ),
    }
    let allow =
        AllowList::parse(&opts.decider_allow).map_err(|e| format!("--decider-allow: {e}"))?;
    let forwarder = Forwarder::new(
        ForwardPolicy {
            allow,
            ..ForwardPolicy::default()
        },
        std::sync::Arc::new(SystemResolver),
    );
    let mut state =
        AppState::new(db, opts.config.clone()).with_outbound(Outbound { forwarder, vault });
    if let Some(every) = opts.driver_every_s {
        state = state.with_driver(DriverConfig {
            every: std::time::Duration::from_secs(every),
            history_retention_s: i64::from(opts.history_retention_days) * 86_400,
            proof_budget_s: Some(crate::proofs::DEFAULT_BUDGET_S),
            ..DriverConfig::default()
        });
    }
    Ok((state, token))
}

/// Seed the sample estate once per database: the `seeded` setting records
/// it, so an administrator who deletes the sample does not see it return.
/// Its observations are moved so that at `sample_at` their ages are those
/// it was designed with at [`SAMPLE_DESIGNED_AT`].
pub async fn seed(db: &Db, now: i64, sample_at: i64) -> Result<(), crate::error::ApiError> {
    if !store::list_estates(db).await?.is_empty() {
        store::set_once(db, "seeded", "existing estates").await?;
        return Ok(());
    }
    if !store::set_once(db, "seeded", "sample").await? {
        return Ok(());
    }
    let mut e =
        estate::load(SAMPLE_ESTATE, Format::Json).expect("the shipped sample estate is valid");
    let designed = sample_designed_at();
    e.shift_times(sample_at - designed);
    let document = serde_json::to_string(&export::to_file(&e)).expect("serialises");
    // Digest what the stored document loads to (see estates::canonicalise).
    let e = estate::load(&document, Format::Json).expect("the canonical sample loads");
    let policy = Policy::default();
    store::create_estate(
        db,
        store::NewEstate {
            id: "sample",
            name: &e.name,
            document: &document,
            content_digest: &export::version(&e),
            policy: &serde_json::to_string(&policy).expect("serialises"),
            policy_digest: &policy.digest(),
        },
        now,
    )
    .await?;
    tracing::info!(
        observations_shifted_s = sample_at - designed,
        "seeded the sample estate as \"sample\", its facts dated for {}",
        estate::format_time(sample_at)
    );
    Ok(())
}

/// Run until SIGTERM or Ctrl-C; in-flight requests finish first (for at
/// most `listen::DRAIN_LIMIT`).
pub async fn run(opts: ServeOptions) -> Result<(), String> {
    let (state, token) = prepare(&opts).await?;
    if let Some(token) = token {
        // Printed, never logged: logs are shipped and kept; this is the
        // only time the token exists outside the operator's hands.
        println!(
            "\nA bootstrap administrator token was generated (it is shown only now; Berth keeps only its hash):\n\n    {token}\n\nSign in with it, or use it as `Authorization: Bearer <token>`. Set BERTH_ADMIN_TOKEN to choose your own.\n"
        );
    }
    let listener = tokio::net::TcpListener::bind(opts.listen)
        .await
        .map_err(|e| format!("cannot listen on {}: {e}", opts.listen))?;
    let local = listener.local_addr().map_err(|e| e.to_string())?;
    tracing::info!(address = %local, "listening on http://{local}");
    let pool = state.db.pool.clone();
    let (stop_driver, stopped) = tokio::sync::watch::channel(false);
    let driver = state.driver.clone().map(|cfg| {
        tracing::info!(every_s = cfg.every.as_secs(), replica = %cfg.replica, "advice driver on");
        tokio::spawn(driver::run(state.external(), cfg, stopped))
    });
    let descriptors = listen::descriptor_limit();
    let limits = opts
        .net
        .resolve(descriptors, state.config.trust_forwarded_for);
    tracing::info!(
        descriptor_limit = descriptors,
        max_connections = limits.max_connections,
        max_connections_per_client = limits.max_connections_per_client,
        header_timeout_s = limits.header_timeout.as_secs_f64(),
        body_timeout_s = limits.body_timeout.as_secs_f64(),
        keep_alive_s = limits.keep_alive_idle.as_secs_f64(),
        "connection limits"
    );
    // The listener hands every request its peer as ConnectInfo.
    listen::serve(listener, http::app(state), limits, shutdown_signal()).await;
    // A pass in progress is abandoned at its next await; on PostgreSQL
    // its transaction rolls back and the advisory lock goes with it.
    let _ = stop_driver.send(true);
    if let Some(d) = driver {
        let _ = tokio::time::timeout(std::time::Duration::from_secs(5), d).await;
    }
    pool.close().await;
    tracing::info!("stopped");
    Ok(())
}

async fn shutdown_signal() {
    stop_requested().await;
    tracing::info!("shutting down: finishing in-flight requests");
}

/// Resolves at the first SIGTERM or Ctrl-C (the server and the agent).
pub async fn stop_requested() {
    let ctrl_c = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    #[cfg(unix)]
    let term = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut s) => {
                s.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    #[cfg(not(unix))]
    let term = std::future::pending::<()>();
    tokio::select! {
        _ = ctrl_c => {},
        _ = term => {},
    }
}

/// Logs to stderr: human-readable by default (coloured at a terminal),
/// JSON lines with `BERTH_LOG_FORMAT=json`; the level from `RUST_LOG`
/// (default info).
pub fn init_logging() {
    use tracing_subscriber::EnvFilter;
    let filter = EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| EnvFilter::new("info,sqlx=warn,tower_http=info"));
    let json = std::env::var("BERTH_LOG_FORMAT").is_ok_and(|v| v == "json");
    // Colours only for a person at a terminal: stderr that goes to a file,
    // a pipe or a log collector gets plain text, not escape codes.
    let ansi = std::io::IsTerminal::is_terminal(&std::io::stderr());
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_ansi(ansi)
        .with_writer(std::io::stderr);
    if json {
        builder.json().init();
    } else {
        builder.init();
    }
}
