//! The command line as clap reads it: every command, its flags and
//! their environment variables.

use std::path::PathBuf;

use clap::{Parser, Subcommand, ValueEnum};

#[derive(Parser)]
#[command(
    name = "berth",
    version,
    about = "Placement advice for multi-cluster estates"
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

// One value a process, parsed once: the size of its largest variant (the
// agent's options) costs nothing, and boxing fields would only make clap's
// derive harder to read.
#[allow(clippy::large_enum_variant)]
#[derive(Subcommand)]
pub enum Command {
    /// Run the server: REST API, sessions, metrics. With no options it
    /// listens on 127.0.0.1:3000 and keeps its data in SQLite under
    /// ./berth-data, seeded with the sample estate at first start.
    Serve(ServeArgs),
    /// Check an estate file; prints a one-line summary or every error.
    Validate { estate: PathBuf },
    /// Recommend moves, in order, with their reasons.
    Advise {
        estate: PathBuf,
        /// Policy file (JSON, any subset of fields).
        #[arg(long)]
        policy: Option<PathBuf>,
        /// Evaluation time (RFC 3339); default: now.
        #[arg(long)]
        now: Option<String>,
        #[arg(long, value_enum, default_value_t = OutputFormat::Json)]
        format: OutputFormat,
        /// Explain every move: facts, terms and exact flip conditions
        /// (a `why` array in JSON, sentences under each move in text).
        #[arg(long)]
        why: bool,
    },
    /// Print the decider request (schema 1) the estate would generate.
    Preview {
        estate: PathBuf,
        #[arg(long)]
        policy: Option<PathBuf>,
        #[arg(long)]
        now: Option<String>,
    },
    /// Compare deciders: run the built-ins (baseline, heaviest-talker, and
    /// the reference deciders optimum, optimum-capped, local-search) and
    /// score each response file as an external decider's reply.
    Compare {
        estate: PathBuf,
        /// An external decider's reply to score, as NAME=FILE (repeatable).
        /// A file that is not a valid reply becomes that decider's error
        /// entry; a file that cannot be read does too, and the command then
        /// exits 3 after printing the comparison.
        #[arg(long = "response", value_name = "NAME=FILE")]
        responses: Vec<String>,
        #[arg(long)]
        policy: Option<PathBuf>,
        #[arg(long)]
        now: Option<String>,
        #[arg(long, value_enum, default_value_t = OutputFormat::Json)]
        format: OutputFormat,
    },
    /// Benchmark the deciders over a suite of estates and print a
    /// leaderboard: per decider, its share of the reference improvement
    /// (median, p5, mean), refusals by code and run time
    /// (docs/quality.md). The default suite is generated (two generators,
    /// several sizes and shapes), the sample estate and the Kubernetes
    /// fixtures with synthetic flows.
    BenchDeciders {
        /// Use the estate files (.json, .yaml) in this directory instead
        /// of the default suite.
        #[arg(long, value_name = "DIR")]
        suite: Option<PathBuf>,
        /// An external decider's replies, as NAME=FILE (repeatable): FILE
        /// is one reply used for every case, or a directory holding
        /// CASE.json per case (a case's name is its file's stem). A
        /// missing or invalid reply is that decider's error on the case.
        #[arg(long = "response", value_name = "NAME=FILE")]
        responses: Vec<String>,
        /// Kubernetes manifests (*.yaml) for the default suite. Default:
        /// shared/fixtures/kubernetes in or above the current directory.
        #[arg(long, value_name = "DIR")]
        kubernetes: Option<PathBuf>,
        #[arg(long)]
        policy: Option<PathBuf>,
        /// Evaluation time (RFC 3339). Default: the generator's time for
        /// the default suite, now for --suite.
        #[arg(long)]
        now: Option<String>,
        /// Print the leaderboard and every case as JSON.
        #[arg(long, conflicts_with = "markdown")]
        json: bool,
        /// Print the leaderboard as a Markdown table.
        #[arg(long)]
        markdown: bool,
    },
    /// Project a what-if scenario (moves, evacuations): before and after,
    /// warnings, evacuations and capacity sensitivity.
    Whatif {
        estate: PathBuf,
        /// Scenario file (JSON, docs/scenario-format.md).
        scenario: PathBuf,
        #[arg(long)]
        policy: Option<PathBuf>,
        #[arg(long)]
        now: Option<String>,
        #[arg(long, value_enum, default_value_t = OutputFormat::Json)]
        format: OutputFormat,
    },
    /// Rank the clusters for one service with the placement scorer, each
    /// candidate with its terms.
    Place {
        estate: PathBuf,
        /// Service id.
        service: String,
        #[arg(long)]
        policy: Option<PathBuf>,
        #[arg(long)]
        now: Option<String>,
        #[arg(long, value_enum, default_value_t = OutputFormat::Json)]
        format: OutputFormat,
    },
    /// Change plans: a selection of moves written for the people and the
    /// tools that make them (docs/plans.md).
    Plan {
        #[command(subcommand)]
        action: PlanAction,
    },
    /// An estate's applied moves on a running server, each checked
    /// against what was measured after it, and how well the advice's
    /// predictions held (docs/outcomes.md).
    Outcomes {
        /// The estate id on the server.
        estate: String,
        /// The Berth server, e.g. http://127.0.0.1:3000.
        #[arg(long, env = "BERTH_SERVER")]
        server: Option<String>,
        /// An API token (viewer or above). Prefer the environment variable:
        /// a command-line argument is visible to other users of the machine.
        #[arg(long, env = "BERTH_TOKEN", hide_env_values = true)]
        token: Option<String>,
        /// Evaluation time (RFC 3339); default: now.
        #[arg(long)]
        now: Option<String>,
        #[arg(long, value_enum, default_value_t = OutputFormat::Text)]
        format: OutputFormat,
    },
    /// Import services into an estate file from another description of
    /// them. The merged estate goes to --output (default: stdout), the
    /// report to stderr.
    Import {
        #[command(subcommand)]
        from: ImportFrom,
    },
    /// Feed a Berth server: every interval, post the mesh metrics
    /// (Prometheus) and a cluster's free capacity (a file or a command) as
    /// one observations batch, retrying with backoff. Runs until SIGTERM
    /// or Ctrl-C (docs/observations.md).
    Agent(AgentArgs),
}

/// `berth agent --create-cluster`: the cluster record the server creates
/// at the first report when the estate has no cluster --cluster (the
/// token must be allowed to: `may_create_clusters`).
#[derive(clap::Args)]
pub struct NewCluster {
    /// Create --cluster in the estate at the first report if it is not
    /// there, from the flags below (a token with may_create_clusters).
    #[arg(long, requires_all = ["cluster", "site", "tier", "cpu_total", "memory_total_gib"])]
    pub create_cluster: bool,
    /// The new cluster's site (an id the estate has).
    #[arg(long, requires = "create_cluster")]
    pub site: Option<String>,
    /// Its tier, e.g. prod, staging, edge.
    #[arg(long, requires = "create_cluster")]
    pub tier: Option<String>,
    /// Its trust zone (default general).
    #[arg(long, requires = "create_cluster")]
    pub trust_zone: Option<String>,
    /// A name for people.
    #[arg(long, requires = "create_cluster")]
    pub cluster_name: Option<String>,
    /// Total allocatable cores.
    #[arg(long, requires = "create_cluster")]
    pub cpu_total: Option<f64>,
    /// Total allocatable memory, GiB.
    #[arg(long, requires = "create_cluster")]
    pub memory_total_gib: Option<f64>,
}

impl NewCluster {
    /// The record sent with every batch, when --create-cluster is given.
    pub fn record(&self, cluster: Option<&str>) -> Option<berth_api::ClusterRecord> {
        if !self.create_cluster {
            return None;
        }
        let mut r = berth_api::ClusterRecord::new(
            cluster?,
            self.site.as_deref()?,
            self.tier.as_deref()?,
            self.cpu_total?,
            self.memory_total_gib?,
        );
        if let Some(z) = &self.trust_zone {
            r.trust_zone = z.clone();
        }
        r.name = self.cluster_name.clone();
        Some(r)
    }
}

/// The Berth server, token and estate observations go to.
#[derive(clap::Args)]
pub struct Target {
    /// The Berth server, e.g. http://127.0.0.1:3000.
    #[arg(long, env = "BERTH_SERVER", value_name = "URL")]
    pub server: String,
    /// An API token: an agent token scoped to the estate, or an operator's.
    /// Prefer the environment variable: a flag shows in the process list.
    #[arg(long, env = "BERTH_TOKEN", hide_env_values = true)]
    pub token: String,
    /// The estate id.
    #[arg(long)]
    pub estate: String,
}

/// Which queries to run and how workloads become services.
#[derive(clap::Args)]
pub struct MeshArgs {
    /// Whose metrics: istio, linkerd, otel-servicegraph or hubble (the
    /// labels and default queries of each: docs/observations.md).
    #[arg(long, default_value = "istio", value_name = "MESH")]
    pub mesh: String,
    /// Read each end's cluster from these two labels (SOURCE,DESTINATION),
    /// so a workload replicated in two clusters gets a flow per replica.
    /// Default: the mesh's own (Istio's source_cluster,
    /// destination_cluster), used where the series name several clusters;
    /// `none` reads without clusters, merging replicas.
    #[arg(long, value_name = "SOURCE,DESTINATION|default|none")]
    pub cluster_labels: Option<String>,
    /// PromQL giving requests/s per workload edge (default: the mesh's;
    /// Istio's istio_requests_total; see docs/observations.md).
    #[arg(long, value_name = "PROMQL")]
    pub query_rate: Option<String>,
    /// PromQL giving the mean request duration in ms per workload edge
    /// (default: from the mesh's duration histogram).
    #[arg(long, value_name = "PROMQL")]
    pub query_duration: Option<String>,
    /// PromQL giving bytes/s per workload edge (default: the mesh's byte
    /// counters, HTTP and TCP, where it has them); an empty string skips MB/s.
    #[arg(long, value_name = "PROMQL")]
    pub query_bytes: Option<String>,
    /// PromQL giving the samples in the window per workload edge, to find
    /// scrape gaps (figures then go as reported); an empty string skips
    /// the check.
    #[arg(long, value_name = "PROMQL")]
    pub query_coverage: Option<String>,
    /// Map a workload ([CLUSTER:][NAMESPACE/]NAME) to an estate service
    /// id; repeatable. Unmapped workloads stand for the service of their
    /// name (in their cluster, with --cluster-labels).
    #[arg(long = "map", value_name = "WORKLOAD=SERVICE")]
    pub map: Vec<String>,
    /// A JSON or YAML object of workload → service id.
    #[arg(long, value_name = "FILE")]
    pub map_file: Option<PathBuf>,
    /// Map a cluster as the mesh labels it to an estate cluster id
    /// (where the estate's cluster declares no mesh_cluster); repeatable.
    #[arg(long = "map-cluster", value_name = "MESH_CLUSTER=CLUSTER")]
    pub map_cluster: Vec<String>,
}

#[derive(Subcommand)]
pub enum PlanAction {
    /// Write a plan: every recommended move, the recommended moves of
    /// --services, or a --scenario's moves, as Markdown (for a pull
    /// request or a ticket), JSON, or manifests for Karmada
    /// (PropagationPolicy, OverridePolicy) or Open Cluster Management
    /// (Placement).
    Export {
        estate: PathBuf,
        #[arg(long, value_enum, default_value_t = PlanFormat::Markdown)]
        format: PlanFormat,
        /// Service ids (comma-separated): their recommended moves only.
        #[arg(
            long,
            value_delimiter = ',',
            value_name = "IDS",
            conflicts_with = "scenario"
        )]
        services: Vec<String>,
        /// A what-if scenario file (docs/scenario-format.md): its moves.
        #[arg(long, value_name = "FILE")]
        scenario: Option<PathBuf>,
        #[arg(long)]
        policy: Option<PathBuf>,
        /// Evaluation time (RFC 3339); default: now.
        #[arg(long)]
        now: Option<String>,
    },
}

/// The forms of `plan export` (`berth_engine::plan::Format`).
#[derive(Clone, Copy, ValueEnum)]
pub enum PlanFormat {
    Markdown,
    Json,
    Karmada,
    Ocm,
}

impl PlanFormat {
    pub fn engine(self) -> berth_engine::plan::Format {
        use berth_engine::plan::Format;
        match self {
            PlanFormat::Markdown => Format::Markdown,
            PlanFormat::Json => Format::Json,
            PlanFormat::Karmada => Format::Karmada,
            PlanFormat::Ocm => Format::Ocm,
        }
    }
}

#[derive(Subcommand)]
pub enum ImportFrom {
    /// Kubernetes manifests or `kubectl get … -o yaml|json` output, or
    /// the objects themselves read from the Kubernetes API (--context,
    /// --kubeconfig, --api) (docs/kubernetes-import.md), into an estate
    /// file (--into) or into an estate on a server (--server, --estate).
    Kubernetes {
        /// The estate cluster the manifests describe.
        #[arg(long)]
        cluster: String,
        /// The estate file to merge into (JSON or YAML).
        #[arg(long, conflicts_with_all = ["server", "estate"], required_unless_present = "server")]
        into: Option<PathBuf>,
        /// Where to write the merged estate (JSON); default: stdout.
        #[arg(long, requires = "into")]
        output: Option<PathBuf>,
        #[command(flatten)]
        remote: Remote,
        /// Leave out objects that cannot be understood (reported as
        /// skipped) instead of refusing the whole import.
        #[arg(long)]
        skip_invalid: bool,
        /// Put manifests that name no namespace in this one, as `kubectl
        /// apply -n NS` does (files only: objects read from the API name
        /// theirs).
        #[arg(
            long,
            value_name = "NS",
            value_parser = berth::import::kubernetes::namespace_name,
            conflicts_with_all = ["api", "context", "kubeconfig", "server"]
        )]
        namespace: Option<String>,
        /// With --server: report what would change, write nothing.
        #[arg(long, requires = "server")]
        dry_run: bool,
        /// Read from the Kubernetes API instead of files, through the
        /// kubeconfig's current context (KUBECONFIG, else ~/.kube/config),
        /// or the pod's service account when run in a pod without one.
        /// --context or --kubeconfig imply it.
        #[arg(long)]
        api: bool,
        #[command(flatten)]
        kube: KubeApi,
        /// Manifest files; `-` reads standard input.
        #[arg(
            required_unless_present_any = ["api", "context", "kubeconfig"],
            conflicts_with_all = ["api", "context", "kubeconfig"]
        )]
        files: Vec<PathBuf>,
    },
    /// Service-mesh metrics from Prometheus (Istio by default): derive each
    /// flow's weight (Little's law) and MB/s and send them to a Berth
    /// server as measured observations (docs/observations.md).
    Prometheus {
        /// The Berth server, e.g. http://127.0.0.1:3000 (optional with
        /// --dry-run).
        #[arg(
            long,
            env = "BERTH_SERVER",
            value_name = "URL",
            required_unless_present = "dry_run"
        )]
        server: Option<String>,
        /// An API token: an agent token scoped to the estate, or an
        /// operator's. Prefer the environment variable.
        #[arg(
            long,
            env = "BERTH_TOKEN",
            hide_env_values = true,
            required_unless_present = "dry_run"
        )]
        token: Option<String>,
        /// The estate id.
        #[arg(long)]
        estate: String,
        /// Prometheus to query, e.g. http://127.0.0.1:9090.
        #[arg(
            long,
            value_name = "PROM_URL",
            required_unless_present = "file",
            conflicts_with = "file"
        )]
        url: Option<String>,
        /// Saved query results instead: {"rate": …, "duration": …, "bytes": …}.
        #[arg(long, value_name = "RESULTS_JSON")]
        file: Option<PathBuf>,
        #[command(flatten)]
        mesh: MeshArgs,
        /// Print what would be sent, and the batch, without sending it.
        #[arg(long)]
        dry_run: bool,
    },
    /// An estate file (JSON or YAML) into an estate on a server,
    /// replacing it (or creating it with --create).
    Estate {
        #[command(flatten)]
        remote: Remote,
        /// Create the estate instead of replacing an existing one.
        #[arg(long)]
        create: bool,
        file: PathBuf,
    },
}

/// Which Kubernetes API to read and how (`import kubernetes`, `agent
/// --kubernetes`).
#[derive(clap::Args, Clone)]
pub struct KubeApi {
    /// The kubeconfig context to read the Kubernetes API through
    /// (default: the file's current context).
    #[arg(long, value_name = "NAME")]
    pub context: Option<String>,
    /// The kubeconfig file (default: KUBECONFIG, else ~/.kube/config).
    #[arg(long, value_name = "PATH")]
    pub kubeconfig: Option<PathBuf>,
    /// Objects per Kubernetes API request (`limit`); each kind is read
    /// page by page with `continue` tokens.
    #[arg(long, value_name = "N",
          default_value_t = berth::kube_source::DEFAULT_PAGE_SIZE,
          value_parser = clap::value_parser!(u32).range(1..))]
    pub page_size: u32,
}

impl KubeApi {
    /// A context or a kubeconfig was named.
    pub fn named(&self) -> bool {
        self.context.is_some() || self.kubeconfig.is_some()
    }
}

/// Where a server-side import goes.
#[derive(clap::Args)]
pub struct Remote {
    /// The Berth server, e.g. http://127.0.0.1:3000.
    #[arg(long, env = "BERTH_SERVER")]
    pub server: Option<String>,
    /// The estate id on the server.
    #[arg(long, requires = "server")]
    pub estate: Option<String>,
    /// An API token (operator or admin). Prefer the environment variable:
    /// a command-line argument is visible to other users of the machine.
    #[arg(long, env = "BERTH_TOKEN", hide_env_values = true)]
    pub token: Option<String>,
}

#[derive(Clone, Copy, ValueEnum)]
pub enum OutputFormat {
    Json,
    Text,
}

// The options of `berth serve` (the variant's doc comment is its help).
#[derive(clap::Args)]
pub struct ServeArgs {
    /// Address to listen on.
    #[arg(long, env = "BERTH_LISTEN", default_value = "127.0.0.1:3000")]
    pub listen: std::net::SocketAddr,
    /// Database: postgres://… for PostgreSQL (several replicas may
    /// share one), or sqlite:PATH. Default: SQLite in --data-dir.
    #[arg(long, env = "BERTH_DATABASE_URL", hide_env_values = true)]
    pub database_url: Option<String>,
    /// Directory for the embedded SQLite database.
    #[arg(long, env = "BERTH_DATA_DIR", default_value = "berth-data")]
    pub data_dir: PathBuf,
    /// Do not seed the sample estate into an empty database.
    #[arg(long)]
    pub no_seed: bool,
    /// Mark the session cookie Secure (set when served over TLS).
    #[arg(long, env = "BERTH_SECURE_COOKIES")]
    pub secure_cookies: bool,
    /// Rate-limit by the last X-Forwarded-For hop (only behind a
    /// proxy that sets it).
    #[arg(long, env = "BERTH_TRUST_FORWARDED_FOR")]
    pub trust_forwarded_for: bool,
    /// Database connections in the pool.
    #[arg(long, default_value_t = 16)]
    pub max_connections: u32,
    /// File holding the key that seals decider secrets at rest (32
    /// bytes, base64). BERTH_SECRET_KEY gives the key itself instead.
    /// Default with SQLite: DATA_DIR/secret.key, created at first start.
    #[arg(long, env = "BERTH_SECRET_KEY_FILE")]
    pub secret_key_file: Option<PathBuf>,
    /// Loopback or private networks external deciders may be reached
    /// on (CIDR, repeatable or comma-separated), e.g. 10.0.0.0/8.
    /// Without it only public addresses are reachable.
    #[arg(long, env = "BERTH_DECIDER_ALLOW", value_delimiter = ',')]
    pub decider_allow: Vec<String>,
    /// Seconds between advice driver passes.
    #[arg(long, env = "BERTH_DRIVER_EVERY", default_value_t = 60)]
    pub driver_every_s: u64,
    /// Do not run the advice driver in this process.
    #[arg(long, env = "BERTH_NO_DRIVER")]
    pub no_driver: bool,
    /// Days of advice snapshots (the history on the Placement page)
    /// to keep; the driver deletes older ones at every pass, always
    /// keeping each estate's newest.
    #[arg(long, env = "BERTH_HISTORY_RETENTION_DAYS", value_name = "DAYS",
          default_value_t = berth::external::driver::DEFAULT_HISTORY_RETENTION_DAYS,
          value_parser = clap::value_parser!(u32).range(1..=3650))]
    pub history_retention_days: u32,
    /// Serve the web application's files from this directory (what
    /// scripts/build-web.sh writes) instead of the copy built into the
    /// binary: for development. Default: the built-in copy, else
    /// ./target/site when it holds a bundle.
    #[arg(long, env = "BERTH_SITE_ROOT")]
    pub site_root: Option<PathBuf>,
    /// Seed the sample estate as if the server first started at this
    /// time (RFC 3339): its observation ages are counted from here.
    /// Default: now, so the sample looks as designed on any day.
    #[arg(long, env = "BERTH_SAMPLE_AT", value_name = "TIME")]
    pub sample_at: Option<String>,
    /// The URL people reach Berth at, e.g. https://berth.example.com:
    /// browsers' Origin may name it (behind a proxy that rewrites
    /// Host), and when it is https the session cookie is Secure.
    #[arg(long, env = "BERTH_PUBLIC_URL", value_name = "URL")]
    pub public_url: Option<String>,
    /// Seconds a client has to send a request's headers (from connect
    /// for the first request); then the connection is closed.
    #[arg(long, env = "BERTH_HEADER_TIMEOUT", value_name = "SECONDS",
          default_value_t = berth::listen::DEFAULT_HEADER_TIMEOUT_S,
          value_parser = clap::value_parser!(u64).range(1..=3600))]
    pub header_timeout_s: u64,
    /// Seconds a request body has to arrive whole after its headers;
    /// then the request is answered 408 and the connection closed.
    #[arg(long, env = "BERTH_BODY_TIMEOUT", value_name = "SECONDS",
          default_value_t = berth::listen::DEFAULT_BODY_TIMEOUT_S,
          value_parser = clap::value_parser!(u64).range(1..=86400))]
    pub body_timeout_s: u64,
    /// Seconds an idle connection is kept open after a response.
    #[arg(long, env = "BERTH_KEEP_ALIVE_TIMEOUT", value_name = "SECONDS",
          default_value_t = berth::listen::DEFAULT_KEEP_ALIVE_IDLE_S,
          value_parser = clap::value_parser!(u64).range(1..=3600))]
    pub keep_alive_timeout_s: u64,
    /// Client connections open at once, in total. Default: the
    /// descriptor limit (ulimit -n) less 128; never more than that.
    #[arg(long, env = "BERTH_MAX_HTTP_CONNECTIONS", value_name = "N",
          value_parser = clap::value_parser!(u64).range(1..))]
    pub max_http_connections: Option<u64>,
    /// Client connections open at once from one address. Default: an
    /// eighth of the total (the total with --trust-forwarded-for).
    #[arg(long, env = "BERTH_MAX_CONNECTIONS_PER_CLIENT", value_name = "N",
          value_parser = clap::value_parser!(u64).range(1..))]
    pub max_connections_per_client: Option<u64>,
    /// MiB of memory for cached engine results.
    #[arg(long, env = "BERTH_RESULT_CACHE_MIB", value_name = "MIB",
          default_value_t = (berth::cache::DEFAULT_RESULT_CACHE_BYTES >> 20) as u64,
          value_parser = clap::value_parser!(u64).range(0..=1 << 20))]
    pub result_cache_mib: u64,
    /// The largest engine result served, MiB; larger ones are refused
    /// with 507.
    #[arg(long, env = "BERTH_MAX_RESULT_MIB", value_name = "MIB",
          default_value_t = (berth::DEFAULT_MAX_RESULT_BYTES >> 20) as u64,
          value_parser = clap::value_parser!(u64).range(1..=1 << 20))]
    pub max_result_mib: u64,
    /// Engine computations (advice, preview, place, what-if, compare,
    /// decider runs; cached answers are free) one token or user may
    /// start per minute; past it, 429 with Retry-After.
    #[arg(long, env = "BERTH_ENGINE_RUNS_PER_MINUTE", value_name = "N",
          default_value_t = berth::DEFAULT_ENGINE_RUNS_PER_MINUTE,
          value_parser = clap::value_parser!(u32).range(1..))]
    pub engine_runs_per_minute: u32,
}

// The options of `berth agent` (the variant's doc comment is its help).
#[derive(clap::Args)]
pub struct AgentArgs {
    #[command(flatten)]
    pub target: Target,
    /// Prometheus to query for the mesh metrics, e.g.
    /// http://prometheus.istio-system:9090.
    #[arg(long, value_name = "URL")]
    pub prometheus: Option<String>,
    /// Time between batches: 60s, 5m, 1h (1s to 24h).
    #[arg(long, default_value = "60s")]
    pub interval: String,
    /// The estate cluster whose free capacity is reported.
    #[arg(long)]
    pub cluster: Option<String>,
    /// A file holding {"cpu_free": x, "memory_free_gib": y}, re-read at
    /// every tick (undated contents are dated by the file's mtime).
    #[arg(
        long,
        value_name = "FILE",
        requires = "cluster",
        conflicts_with = "capacity_command"
    )]
    pub capacity_file: Option<PathBuf>,
    /// A shell command printing {"cpu_free": x, "memory_free_gib": y},
    /// run at every tick.
    #[arg(long, value_name = "CMD", requires = "cluster")]
    pub capacity_command: Option<String>,
    /// Answer round-trip probes from the other clusters' agents here
    /// (IP:PORT, e.g. 0.0.0.0:7946), and measure the round trip to
    /// theirs each tick (median of 5 TCP connects), posted as measured
    /// rtt_ms path facts.
    #[arg(long, value_name = "IP:PORT", requires = "cluster")]
    pub probe_listen: Option<String>,
    /// The address the other agents reach this one's probe at (a pod
    /// or node IP and port; default: --probe-listen, unless that is
    /// 0.0.0.0 or ::).
    #[arg(long, value_name = "IP:PORT", requires = "probe_listen")]
    pub probe_address: Option<String>,
    /// Read the round trips to other clusters that a tool already
    /// measures, from --prometheus: blackbox (ICMP probes; targets
    /// mapped with --map-cluster), submariner, cilium or liqo.
    #[arg(long, value_name = "SOURCE", requires_all = ["cluster", "prometheus"])]
    pub rtt_from: Option<String>,
    /// Read the cluster's Kubernetes API every tick: re-sync its
    /// services into the estate (an operator token) and report its
    /// free capacity (allocatable of Ready nodes less the requests of
    /// their running pods) as measured. In a pod: its service
    /// account; else the kubeconfig (--context, --kubeconfig imply
    /// it).
    #[arg(
        long,
        requires = "cluster",
        conflicts_with_all = ["capacity_file", "capacity_command"]
    )]
    pub kubernetes: bool,
    #[command(flatten)]
    pub kube: KubeApi,
    #[command(flatten)]
    pub new_cluster: NewCluster,
    #[command(flatten)]
    pub mesh: MeshArgs,
}
