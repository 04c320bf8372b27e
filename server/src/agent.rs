//! `berth agent`: every interval, read the mesh metrics (Prometheus) and a
//! cluster's free capacity (a file, a command, or the Kubernetes API), and
//! post them to Berth as one observations batch; retry with backoff; log
//! what was sent and what came of it; stop cleanly when asked. With the
//! Kubernetes API (`--kubernetes`) the cluster's services are re-synced
//! into the estate first, through the server's Kubernetes import.
//!
//! A batch's id is derived from (estate, cluster, tick time), so every
//! retry of one tick is the same batch and the server applies it once.

use std::collections::BTreeSet;
use std::path::PathBuf;
use std::time::Duration;

use berth_api::FactUpdate;
use serde_json::Value;
use tokio::sync::watch;
use tokio::time::Instant;

use berth_engine::estate::{format_time, parse_time};

use crate::import::capacity::free_capacity;
use crate::import::prometheus::{self, Mapping, Reading};
use crate::kube_source::KubeSource;
use crate::prom_client::PromClient;
use crate::submit::{self, BerthClient, RetryPolicy, SubmitError};

/// Where a cluster's free capacity comes from.
#[derive(Clone, Debug)]
pub enum CapacitySource {
    /// A file holding `{"cpu_free": …, "memory_free_gib": …}`, rewritten
    /// by something else; read at every tick.
    File(PathBuf),
    /// A shell command printing that JSON, run at every tick.
    Command(String),
}

#[derive(Clone, Debug)]
pub struct AgentOptions {
    pub client: BerthClient,
    pub prometheus: Option<PromClient>,
    pub reading: Reading,
    pub mapping: Mapping,
    pub interval: Duration,
    /// The cluster the capacity is for; also part of the batch id.
    pub cluster: Option<String>,
    pub capacity: Option<CapacitySource>,
    /// Round trips to the other clusters' agents (`--probe-listen`).
    pub probe: Option<ProbeSetup>,
    /// Round trips a tool already measures, read from `prometheus`
    /// (`--rtt-from`).
    pub rtt_from: Option<crate::import::rtt::RttSource>,
    /// The cluster's Kubernetes API (`--kubernetes`): services re-synced
    /// and free capacity measured every tick.
    pub kubernetes: Option<KubeSource>,
}

/// This agent's probe endpoint: a TCP listener that accepts and closes
/// (a connect is the round trip measured; nothing is read or written, so
/// a peer learns nothing and can ask for nothing), and the address the
/// others are told to reach it at.
#[derive(Debug)]
pub struct ProbeSetup {
    listener: std::net::TcpListener,
    pub advertised: String,
}

impl Clone for ProbeSetup {
    fn clone(&self) -> ProbeSetup {
        ProbeSetup {
            listener: self
                .listener
                .try_clone()
                .expect("a listening socket can be shared"),
            advertised: self.advertised.clone(),
        }
    }
}

impl ProbeSetup {
    /// Bind `listen` (IP:PORT; port 0 takes a free one) now, so a bad or
    /// taken address is a usage error at start, not a log line later.
    pub fn bind(listen: &str, advertised: Option<&str>) -> Result<ProbeSetup, String> {
        let addr: std::net::SocketAddr = listen.parse().map_err(|_| {
            format!("--probe-listen {listen:?}: expected IP:PORT, e.g. 0.0.0.0:7946")
        })?;
        let listener = std::net::TcpListener::bind(addr)
            .map_err(|e| format!("--probe-listen {listen}: cannot listen there: {e}"))?;
        listener
            .set_nonblocking(true)
            .map_err(|e| format!("--probe-listen {listen}: {e}"))?;
        let bound = listener
            .local_addr()
            .map_err(|e| format!("--probe-listen {listen}: {e}"))?;
        let advertised = match advertised {
            Some(a) => {
                let parsed: std::net::SocketAddr = a.parse().map_err(|_| {
                    format!("--probe-address {a:?}: expected IP:PORT its peers can connect to")
                })?;
                if parsed.ip().is_unspecified() || parsed.port() == 0 {
                    return Err(format!(
                        "--probe-address {a}: give the address peers connect to, not 0.0.0.0 or port 0"
                    ));
                }
                a.to_string()
            }
            None if bound.ip().is_unspecified() => {
                return Err(format!(
                    "--probe-listen {listen}: listening on every address, so say which one peers reach with --probe-address IP:{}",
                    bound.port()
                ))
            }
            None => bound.to_string(),
        };
        Ok(ProbeSetup {
            listener,
            advertised,
        })
    }
}

/// Connects per peer and tick: the median of five is steady against one
/// slow handshake (a retransmitted SYN, a busy node) and costs five
/// handshakes a minute per peer at the default interval.
pub const PROBE_SAMPLES: usize = 5;

/// Successful connects needed for a figure: a majority of the samples, so
/// the median is of real round trips, not of the few that got through.
pub const PROBE_QUORUM: usize = 3;

/// How long one connect may take. A round trip between clusters is
/// milliseconds to a few hundred; one that has not completed in 2 s is
/// lost (the kernel's first SYN retransmit comes at 1 s), and five of
/// them stay well inside a tick.
pub const PROBE_TIMEOUT: Duration = Duration::from_secs(2);

/// The round trip to `addr` in milliseconds: the median of
/// [`PROBE_SAMPLES`] TCP connects (a connect completes after one round
/// trip: SYN out, SYN-ACK back), to the microsecond.
pub async fn probe_rtt_ms(addr: std::net::SocketAddr) -> Result<f64, String> {
    let mut samples = Vec::with_capacity(PROBE_SAMPLES);
    let mut last_error = String::new();
    for _ in 0..PROBE_SAMPLES {
        let started = std::time::Instant::now();
        match tokio::time::timeout(PROBE_TIMEOUT, tokio::net::TcpStream::connect(addr)).await {
            Ok(Ok(s)) => {
                samples.push(started.elapsed().as_secs_f64() * 1000.0);
                drop(s);
            }
            Ok(Err(e)) => last_error = e.to_string(),
            Err(_) => last_error = format!("no answer within {} s", PROBE_TIMEOUT.as_secs()),
        }
    }
    if samples.len() < PROBE_QUORUM {
        return Err(format!(
            "{} of {PROBE_SAMPLES} connects to {addr} succeeded ({last_error})",
            samples.len()
        ));
    }
    samples.sort_by(f64::total_cmp);
    let median = samples[samples.len() / 2];
    Ok((median * 1000.0).round() / 1000.0)
}

/// Round trips from `cluster` to every peer, as `rtt_ms` path
/// observations dated `tick`; a peer that does not answer is logged and
/// left out (its path keeps what the estate knew). Peers are probed at
/// once, each with its own connects.
async fn measure_peers(cluster: &str, peers: &[submit::Peer], tick: i64) -> Vec<FactUpdate> {
    let mut set = tokio::task::JoinSet::new();
    for (i, p) in peers.iter().enumerate() {
        let address = p.address.clone();
        set.spawn(async move {
            let r = match address.parse::<std::net::SocketAddr>() {
                Ok(a) => probe_rtt_ms(a).await,
                Err(_) => Err(format!("{address:?} is not IP:PORT")),
            };
            (i, r)
        });
    }
    let mut results: Vec<(usize, Result<f64, String>)> = Vec::with_capacity(peers.len());
    while let Some(r) = set.join_next().await {
        if let Ok(r) = r {
            results.push(r);
        }
    }
    // In the peers' order, whatever order the probes finished in.
    results.sort_by_key(|(i, _)| *i);
    let mut out = Vec::new();
    for (i, r) in results {
        let peer = &peers[i];
        match r {
            Ok(ms) => {
                tracing::info!(peer = %peer.cluster, rtt_ms = ms, "round trip measured");
                out.push(FactUpdate {
                    fact: "rtt_ms".into(),
                    a: Some(cluster.to_string()),
                    b: Some(peer.cluster.clone()),
                    value: Some(Some(ms)),
                    class: Some("measured".into()),
                    observed_at: Some(format_time(tick)),
                    ..FactUpdate::default()
                });
            }
            Err(e) => tracing::warn!(peer = %peer.cluster, "round trip not measured: {e}"),
        }
    }
    out
}

/// Answer probes until the process ends: accept, close.
async fn answer_probes(listener: std::net::TcpListener) {
    let listener = match tokio::net::TcpListener::from_std(listener) {
        Ok(l) => l,
        Err(e) => {
            tracing::error!("probe endpoint not started: {e}");
            return;
        }
    };
    loop {
        match listener.accept().await {
            Ok((s, _)) => drop(s),
            // Out of descriptors or the like: wait a little, go on.
            Err(_) => tokio::time::sleep(Duration::from_millis(100)).await,
        }
    }
}

/// How long a capacity command may run. It is expected to print a few
/// numbers (a `kubectl` query, a script); one that has not answered in
/// 30 s is stuck, and waiting longer would stall every later tick.
pub const COMMAND_TIMEOUT: Duration = Duration::from_secs(30);

/// How long the agent remembers services the server said the estate does
/// not have, leaving their flows out without asking again. An hour: a
/// service added to the estate is picked up within the hour, and a mesh
/// with workloads Berth does not track costs one refused request an hour
/// instead of one a tick.
pub const FORGET_UNKNOWN_AFTER: Duration = Duration::from_secs(3600);

/// The shortest time a batch is retried before it is given up for the
/// next tick's fresher one: a minute of backoff is at least five attempts
/// (1 + 2 + 4 + 8 + 16 s, jittered), and a measured fact stays fresh for
/// 15 minutes (`docs/advice.md` §2) so nothing is lost by waiting that
/// long. With a longer interval, the batch is retried for the interval.
pub const MIN_RETRY_WINDOW: Duration = Duration::from_secs(60);

/// Free capacity as read.
#[derive(Clone, Debug, PartialEq)]
pub struct Capacity {
    /// `Some(None)`: reported as unknown (null); `None`: not reported.
    pub cpu_free: Option<Option<f64>>,
    pub memory_free_gib: Option<Option<f64>>,
    pub observed_at: i64,
}

/// Parse a capacity document. `default_at` dates it when it carries no
/// `observed_at` of its own.
pub fn parse_capacity(text: &str, default_at: i64) -> Result<Capacity, String> {
    let v: Value = serde_json::from_str(text.trim()).map_err(|e| format!("not JSON: {e}"))?;
    let Some(obj) = v.as_object() else {
        return Err("expected an object {\"cpu_free\": …, \"memory_free_gib\": …}".into());
    };
    for k in obj.keys() {
        if !matches!(k.as_str(), "cpu_free" | "memory_free_gib" | "observed_at") {
            return Err(format!(
                "/{k}: unknown field; expected cpu_free, memory_free_gib and optionally observed_at"
            ));
        }
    }
    let number = |k: &str| -> Result<Option<Option<f64>>, String> {
        match obj.get(k) {
            None => Ok(None),
            Some(Value::Null) => Ok(Some(None)),
            Some(Value::Number(n)) => match n.as_f64() {
                Some(x) if x.is_finite() && x >= 0.0 => Ok(Some(Some(x))),
                _ => Err(format!("/{k}: expected a number ≥ 0, found {n}")),
            },
            Some(other) => Err(format!(
                "/{k}: expected a number ≥ 0 or null, found {other}"
            )),
        }
    };
    let cpu_free = number("cpu_free")?;
    let memory_free_gib = number("memory_free_gib")?;
    if cpu_free.is_none() && memory_free_gib.is_none() {
        return Err("neither cpu_free nor memory_free_gib is given".into());
    }
    let observed_at = match obj.get("observed_at") {
        None => default_at,
        Some(Value::String(s)) => parse_time(s).ok_or_else(|| {
            format!(
                "/observed_at: expected an RFC 3339 time like 2026-11-30T04:05:00Z, found {s:?}"
            )
        })?,
        Some(other) => return Err(format!("/observed_at: expected a string, found {other}")),
    };
    Ok(Capacity {
        cpu_free,
        memory_free_gib,
        observed_at,
    })
}

/// The capacity observations for `cluster`.
pub fn capacity_observations(cluster: &str, c: &Capacity) -> Vec<FactUpdate> {
    [
        ("cpu_free", c.cpu_free),
        ("memory_free_gib", c.memory_free_gib),
    ]
    .into_iter()
    .filter_map(|(fact, v)| {
        v.map(|v| FactUpdate {
            fact: fact.into(),
            cluster: Some(cluster.to_string()),
            value: Some(v),
            class: Some("measured".into()),
            observed_at: Some(format_time(c.observed_at)),
            ..FactUpdate::default()
        })
    })
    .collect()
}

async fn read_capacity(source: &CapacitySource, tick: i64) -> Result<Capacity, String> {
    match source {
        CapacitySource::File(path) => {
            let text = tokio::fs::read_to_string(path)
                .await
                .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
            // Undated contents are as old as the file: a writer that died
            // must not make old numbers look fresh.
            let modified = tokio::fs::metadata(path)
                .await
                .and_then(|m| m.modified())
                .ok()
                .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
                .map_or(tick, |d| d.as_secs() as i64);
            parse_capacity(&text, modified).map_err(|e| format!("{}: {e}", path.display()))
        }
        CapacitySource::Command(cmd) => {
            let child = tokio::process::Command::new("sh")
                .arg("-c")
                .arg(cmd)
                .stdin(std::process::Stdio::null())
                .stdout(std::process::Stdio::piped())
                .stderr(std::process::Stdio::piped())
                .kill_on_drop(true)
                .spawn()
                .map_err(|e| format!("cannot run the capacity command: {e}"))?;
            let out = tokio::time::timeout(COMMAND_TIMEOUT, child.wait_with_output())
                .await
                .map_err(|_| {
                    format!(
                        "the capacity command did not finish within {} s; killed",
                        COMMAND_TIMEOUT.as_secs()
                    )
                })?
                .map_err(|e| format!("the capacity command: {e}"))?;
            if !out.status.success() {
                let stderr: String = String::from_utf8_lossy(&out.stderr)
                    .chars()
                    .take(300)
                    .collect();
                return Err(format!(
                    "the capacity command failed ({}): {}",
                    out.status,
                    stderr.trim()
                ));
            }
            parse_capacity(&String::from_utf8_lossy(&out.stdout), tick)
                .map_err(|e| format!("the capacity command's output: {e}"))
        }
    }
}

/// What the agent carries from tick to tick.
struct Carried {
    /// Services the server said the estate lacks: their flows are left
    /// out until forgotten (`FORGET_UNKNOWN_AFTER`).
    unknown_services: BTreeSet<String>,
    forget_at: Instant,
    /// Set when the token may not read the estate (an agent token): the
    /// server then resolves the mesh's clusters itself.
    estate_unreadable: bool,
    /// The other clusters' probe addresses, as the last answer named them.
    peers: Vec<submit::Peer>,
    /// Cleared when the server says the token may not import: services
    /// are then left alone for the rest of the run (capacity still goes).
    sync_services: bool,
}

/// Run until `stop` turns true. Errors of one tick are logged and the next
/// tick tries again; only a stop ends the loop.
pub async fn run(opts: AgentOptions, mut stop: watch::Receiver<bool>) {
    let cluster_part = opts.cluster.clone().unwrap_or_else(|| "-".into());
    let policy = RetryPolicy {
        backoff: submit::BACKOFF,
        give_up_after: opts.interval.max(MIN_RETRY_WINDOW),
        retry_unreachable: true,
    };
    if let Some(p) = &opts.probe {
        let listener = p
            .listener
            .try_clone()
            .expect("a listening socket can be shared");
        tracing::info!(address = %p.advertised, "answering round-trip probes");
        tokio::spawn(answer_probes(listener));
    }
    let mut carried = Carried {
        unknown_services: BTreeSet::new(),
        forget_at: Instant::now() + FORGET_UNKNOWN_AFTER,
        estate_unreadable: false,
        peers: Vec::new(),
        sync_services: true,
    };
    let mut next = Instant::now();
    tracing::info!(
        estate = %opts.client.estate,
        cluster = %cluster_part,
        interval_s = opts.interval.as_secs_f64(),
        prometheus = opts.prometheus.is_some(),
        capacity = opts.capacity.is_some(),
        kubernetes = ?opts.kubernetes.as_ref().map(|k| k.context.as_str()),
        "agent started"
    );
    loop {
        if *stop.borrow() {
            break;
        }
        if Instant::now() >= carried.forget_at {
            carried.unknown_services.clear();
            carried.forget_at = Instant::now() + FORGET_UNKNOWN_AFTER;
        }
        let tick = chrono::Utc::now().timestamp();
        let tick_text = format_time(tick);
        let observations = read_tick(&opts, &mut carried, tick, &tick_text).await;
        // With a probe, a batch goes even when empty: it registers this
        // agent's probe address and brings back the peers'.
        if observations.is_empty() && opts.probe.is_none() {
            tracing::info!(tick = %tick_text, "nothing to send this tick");
        } else {
            let id = submit::batch_id("agent", &[&opts.client.estate, &cluster_part, &tick_text]);
            let flows = observations
                .iter()
                .filter(|o| o.fact.starts_with("flow_"))
                .count();
            tracing::info!(
                tick = %tick_text,
                batch_id = %id,
                observations = observations.len(),
                flow_observations = flows,
                capacity_observations = observations.len() - flows,
                "sending"
            );
            let result = submit::deliver(&opts.client, &id, observations, policy, &mut stop, |e, delay| {
                tracing::warn!(batch_id = %id, retry_in_s = delay.as_secs_f64(), "not delivered, retrying: {e}");
            })
            .await;
            match result {
                Ok(d) => delivered(&opts, &mut carried, &id, d),
                Err((SubmitError::Stopped, _)) => {
                    tracing::info!(batch_id = %id, "stopping before the batch landed");
                    break;
                }
                Err((e, _)) => tracing::error!(batch_id = %id, "batch not delivered: {e}"),
            }
        }

        // The next tick on the schedule; ticks missed while retrying are
        // skipped, not made up: the next batch is read fresh.
        next += opts.interval;
        let now = Instant::now();
        if next < now {
            let behind = now - next;
            let missed = (behind.as_secs_f64() / opts.interval.as_secs_f64()).ceil() as u32;
            next += opts.interval * missed;
        }
        if submit::sleep_or_stop(next.saturating_duration_since(Instant::now()), &mut stop).await {
            break;
        }
    }
    tracing::info!("agent stopped");
}

/// One tick's observations: the mesh's flows, the cluster's capacity, its
/// services (re-synced), and round trips to its peers.
async fn read_tick(
    opts: &AgentOptions,
    carried: &mut Carried,
    tick: i64,
    tick_text: &str,
) -> Vec<FactUpdate> {
    let mut observations = Vec::new();
    if let Some(prom) = &opts.prometheus {
        observations.extend(mesh_tick(opts, prom, carried, tick, tick_text).await);
    }
    if let (Some(source), Some(cluster)) = (&opts.capacity, &opts.cluster) {
        match read_capacity(source, tick).await {
            Ok(c) => {
                tracing::info!(
                    tick = %tick_text,
                    cluster = %cluster,
                    cpu_free = ?c.cpu_free.flatten(),
                    memory_free_gib = ?c.memory_free_gib.flatten(),
                    observed_at = %format_time(c.observed_at),
                    "capacity read"
                );
                observations.extend(capacity_observations(cluster, &c));
            }
            Err(e) => tracing::warn!(tick = %tick_text, "capacity not read this tick: {e}"),
        }
    }
    if let (Some(kube), Some(cluster)) = (&opts.kubernetes, &opts.cluster) {
        observations.extend(
            kubernetes_tick(
                kube,
                cluster,
                &opts.client,
                &mut carried.sync_services,
                tick_text,
            )
            .await,
        );
    }
    if let (Some(_), Some(cluster)) = (&opts.probe, &opts.cluster) {
        observations.extend(measure_peers(cluster, &carried.peers, tick).await);
    }
    if let (Some(source), Some(prom), Some(cluster)) =
        (opts.rtt_from, &opts.prometheus, &opts.cluster)
    {
        observations.extend(rtt_tick(opts, prom, source, cluster, tick, tick_text).await);
    }
    observations
}

/// The mesh's flows and coverage this tick, without the services the
/// server said the estate lacks.
async fn mesh_tick(
    opts: &AgentOptions,
    prom: &PromClient,
    carried: &mut Carried,
    tick: i64,
    tick_text: &str,
) -> Vec<FactUpdate> {
    let mut results = match prom.fetch(&opts.reading, tick).await {
        Ok(results) => results,
        Err(e) => {
            tracing::warn!(tick = %tick_text, "mesh metrics not read this tick: {e}");
            return Vec::new();
        }
    };
    if let Some(problem) = prometheus::nothing_found(&results, &opts.reading) {
        tracing::warn!(tick = %tick_text, "mesh: {problem}");
    }
    let mut mapping = opts.mapping.clone();
    let clusters = read_mesh_clusters(
        opts,
        &mut results,
        &mut mapping,
        &mut carried.estate_unreadable,
    )
    .await;
    let derived = match clusters {
        Ok(()) => prometheus::derive(&results, &opts.reading, &mapping, None),
        Err(e) => {
            for line in e.lines() {
                tracing::error!(tick = %tick_text, "mesh: {line}");
            }
            tracing::error!(tick = %tick_text, "mesh: no flows sent this tick");
            prometheus::Derived::default()
        }
    };
    for n in &derived.notes {
        tracing::info!(tick = %tick_text, code = n.code.as_str(), "mesh: {}", n.message);
    }
    let unknown = &carried.unknown_services;
    let before = derived.flows.len();
    let flows: Vec<_> = derived
        .flows
        .into_iter()
        .filter(|f| !unknown.contains(&f.from) && !unknown.contains(&f.to))
        .collect();
    if flows.len() < before {
        tracing::info!(
            tick = %tick_text,
            left_out = before - flows.len(),
            "mesh: flows with services the estate lacks left out (as the server said earlier)"
        );
    }
    for f in &flows {
        tracing::debug!(
            from = %f.from, to = %f.to,
            weight = ?f.weight.map(|o| o.value),
            mb_s = ?f.mb_s.map(|o| o.value),
            "mesh flow"
        );
    }
    let mut observations = prometheus::observations(&flows);
    let covered: Vec<_> = derived
        .covered
        .into_iter()
        .filter(|c| !unknown.contains(&c.service))
        .collect();
    observations.extend(prometheus::coverage_observations(&covered));
    observations
}

/// Round trips between clusters, from the mesh's metrics.
async fn rtt_tick(
    opts: &AgentOptions,
    prom: &PromClient,
    source: crate::import::rtt::RttSource,
    cluster: &str,
    tick: i64,
    tick_text: &str,
) -> Vec<FactUpdate> {
    use crate::import::rtt;
    let read = prom
        .query_raw("rtt", &source.query(), tick)
        .await
        .map_err(|e| e.to_string())
        .and_then(|answer| rtt::derive(source, &answer, cluster, &opts.mapping));
    match read {
        Ok((rtts, notes)) => {
            for n in notes {
                tracing::info!(tick = %tick_text, source = source.name(), "round trips: {n}");
            }
            if rtts.is_empty() {
                tracing::warn!(tick = %tick_text, source = source.name(), query = %source.query(), "round trips: the query gave no pair of clusters");
            }
            rtt::observations(&rtts)
        }
        Err(e) => {
            tracing::warn!(tick = %tick_text, source = source.name(), "round trips not read this tick: {e}");
            Vec::new()
        }
    }
}

/// What a delivered batch tells the next ticks: services the estate
/// lacks, the probe peers; logged.
fn delivered(opts: &AgentOptions, carried: &mut Carried, id: &str, d: submit::Delivery) {
    for p in &d.pruned {
        carried.unknown_services.extend(p.refused.iter().cloned());
        // A mesh cluster the estate does not know (the
        // server's answer names the fix): never merged.
        if p.message.contains("--map-cluster") {
            tracing::error!(batch_id = %id, from = %p.from, to = %p.to, fact = %p.fact, "left out: {}", p.message);
        } else {
            tracing::info!(batch_id = %id, from = %p.from, to = %p.to, fact = %p.fact, "left out: {}", p.message);
        }
    }
    if let Some(a) = &d.answer {
        if opts.probe.is_some() && a.peers != carried.peers {
            tracing::info!(
                peers = ?a.peers.iter().map(|p| format!("{}={}", p.cluster, p.address)).collect::<Vec<_>>(),
                "probe peers"
            );
            carried.peers = a.peers.clone();
        }
    }
    if let Some(c) = d.answer.as_ref().and_then(|a| a.created_cluster()) {
        tracing::info!(batch_id = %id, cluster = %c, "created the cluster in the estate");
    }
    match d.answer {
        Some(a) => tracing::info!(
            batch_id = %a.batch_id,
            version = a.version,
            applied = a.applied,
            duplicate = a.duplicate,
            attempts = d.attempts,
            "delivered"
        ),
        None => {
            tracing::info!(batch_id = %id, "nothing left to send once unknown services were left out")
        }
    }
}

/// The mesh's clusters this tick (`prometheus::read_clusters`): where the
/// series name several, the estate's clusters are read (if the token may)
/// so that a cluster matching none stops the tick's flows with the fix,
/// as the import does; with a token that may not, the server resolves
/// them and refuses one that matches none.
async fn read_mesh_clusters(
    opts: &AgentOptions,
    results: &mut prometheus::Results,
    mapping: &mut Mapping,
    estate_unreadable: &mut bool,
) -> Result<(), prometheus::ClusterError> {
    let (values, _) = prometheus::cluster_values(results, &opts.reading);
    let several = values.len() > 1 || (opts.reading.clusters_named && !values.is_empty());
    let mut known = None;
    if several && !*estate_unreadable {
        match opts.client.estate_services().await {
            Ok(Some(d)) => known = Some(d),
            Ok(None) => *estate_unreadable = true,
            Err(e) => tracing::warn!(
                "mesh: the estate's clusters not read ({e}): the server resolves them"
            ),
        }
    }
    prometheus::read_clusters(results, &opts.reading, mapping, known.as_ref())
}

/// One tick's reading of the Kubernetes API: re-sync the cluster's
/// services (logged: added, changed, removed), then measure its free
/// capacity, observed when the API was read. Returns the capacity
/// observations; trouble is logged and the next tick tries again.
async fn kubernetes_tick(
    kube: &KubeSource,
    cluster: &str,
    client: &BerthClient,
    sync_services: &mut bool,
    tick_text: &str,
) -> Vec<FactUpdate> {
    let snapshot = match kube.read().await {
        Ok(s) => s,
        Err(e) => {
            // Nothing is re-synced or measured: the estate keeps what it
            // had (a read that could list no workload kind is one).
            tracing::error!(tick = %tick_text, "Kubernetes API not read this tick, nothing re-synced or measured: {e}");
            return Vec::new();
        }
    };
    for n in snapshot.notes() {
        tracing::warn!(tick = %tick_text, "kubernetes: {n}");
    }
    if *sync_services {
        match client
            .import_kubernetes(cluster, &snapshot.inputs(), !snapshot.complete())
            .await
        {
            Ok(answer) => {
                let r = &answer.report;
                tracing::info!(
                    tick = %tick_text,
                    cluster = %cluster,
                    services = r.services.len(),
                    added = r.added.len(),
                    changed = r.changed.len(),
                    removed = r.removed.len(),
                    unchanged = r.unchanged,
                    skipped = r.skipped.len(),
                    written = answer.written,
                    version = answer.version,
                    "services re-synced from the Kubernetes API"
                );
            }
            Err(SubmitError::Refused {
                status: 403,
                message,
            }) => {
                tracing::error!(
                    cluster = %cluster,
                    "services not re-synced: the server refused the import (403: {message}); it takes an operator token. Capacity is still reported; services are not tried again this run"
                );
                *sync_services = false;
            }
            Err(e) => {
                tracing::warn!(tick = %tick_text, "services not re-synced this tick: {e}")
            }
        }
    }
    let (Some(nodes), Some(pods)) = (snapshot.items("Node"), snapshot.items("Pod")) else {
        tracing::warn!(tick = %tick_text, "free capacity not measured: nodes or pods could not be listed");
        return Vec::new();
    };
    let f = free_capacity(nodes, pods);
    for n in &f.notes {
        tracing::warn!(tick = %tick_text, "capacity: {n}");
    }
    tracing::info!(
        tick = %tick_text,
        cluster = %cluster,
        cpu_free = ?f.cpu_free,
        memory_free_gib = ?f.memory_free_gib,
        nodes = f.nodes_counted,
        nodes_listed = f.nodes_listed,
        pods = f.pods_counted,
        observed_at = %format_time(snapshot.read_at),
        "capacity measured from the Kubernetes API"
    );
    // Unknown is not sent (never as zero): the estate keeps what it had,
    // and it goes stale as it should.
    let c = Capacity {
        cpu_free: f.cpu_free.map(Some),
        memory_free_gib: f.memory_free_gib.map(Some),
        observed_at: snapshot.read_at,
    };
    capacity_observations(cluster, &c)
}

/// Parse an interval: `60s`, `5m`, `1h`, `500ms`, or plain seconds.
pub fn parse_interval(s: &str) -> Result<Duration, String> {
    let t = s.trim();
    let (num, unit) = match t.find(|c: char| !(c.is_ascii_digit() || c == '.')) {
        Some(i) => t.split_at(i),
        None => (t, "s"),
    };
    let n: f64 = num
        .parse()
        .map_err(|_| format!("--interval {s:?}: expected e.g. 60s, 5m, 1h"))?;
    let secs = match unit {
        "ms" => n / 1000.0,
        "s" => n,
        "m" => n * 60.0,
        "h" => n * 3600.0,
        _ => {
            return Err(format!(
                "--interval {s:?}: unknown unit {unit:?}; use ms, s, m or h"
            ))
        }
    };
    // At least a second: the server allows one batch per 2 s per token
    // after a burst, so faster ticks only meet 429s; at most a day:
    // measured facts go stale in 15 minutes, a longer interval is a typo.
    if !(1.0..=86_400.0).contains(&secs) {
        return Err(format!("--interval {s:?}: between 1s and 24h, please"));
    }
    Ok(Duration::from_secs_f64(secs))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn capacity_documents() {
        let c = parse_capacity(r#"{"cpu_free": 5.5, "memory_free_gib": null}"#, 100).unwrap();
        assert_eq!(c.cpu_free, Some(Some(5.5)));
        assert_eq!(c.memory_free_gib, Some(None));
        assert_eq!(c.observed_at, 100);
        let c = parse_capacity(
            r#"{"cpu_free": 1, "observed_at": "2026-11-30T04:05:00Z"}"#,
            100,
        )
        .unwrap();
        assert_eq!(c.observed_at, 1796011500);
        assert_eq!(c.memory_free_gib, None);
        let obs = capacity_observations("c1", &c);
        assert_eq!(obs.len(), 1);
        assert_eq!(obs[0].observed_at.as_deref(), Some("2026-11-30T04:05:00Z"));
        assert!(parse_capacity(r#"{"cpu": 1}"#, 0)
            .unwrap_err()
            .contains("/cpu: unknown field"));
        assert!(parse_capacity(r#"{"cpu_free": -1}"#, 0)
            .unwrap_err()
            .contains("≥ 0"));
        assert!(parse_capacity(r#"{"observed_at": "2026-11-30T04:05:00Z"}"#, 0).is_err());
        assert!(parse_capacity("cpu=1", 0)
            .unwrap_err()
            .starts_with("not JSON"));
    }

    #[test]
    fn intervals() {
        assert_eq!(parse_interval("60s"), Ok(Duration::from_secs(60)));
        assert_eq!(parse_interval("5m"), Ok(Duration::from_secs(300)));
        assert_eq!(parse_interval("1h"), Ok(Duration::from_secs(3600)));
        assert_eq!(parse_interval("90"), Ok(Duration::from_secs(90)));
        assert_eq!(parse_interval("1500ms"), Ok(Duration::from_millis(1500)));
        assert!(parse_interval("500ms").is_err());
        assert!(parse_interval("2d").is_err());
        assert!(parse_interval("soon").is_err());
    }
}
