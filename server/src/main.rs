//! `berth`: the command line. The offline commands that run the engine on
//! files (SPEC §15: validate, advise, preview, compare, whatif, place), the
//! importers (`import kubernetes`, `import prometheus`), `serve`, the
//! server (`berth::serve`), and `agent`, which feeds a server
//! (`berth::agent`).
//!
//! This crate is the only one that touches the filesystem and the clock:
//! it reads files, resolves `now`, times deciders, and hands text to the
//! pure engine.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

use berth_engine::{decider, estate, front, whatif, Estate, EstateError, Format, Policy};
use clap::{Parser, Subcommand, ValueEnum};

#[derive(Parser)]
#[command(
    name = "berth",
    version,
    about = "Placement advice for multi-cluster estates"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Run the server: REST API, sessions, metrics. With no options it
    /// listens on 127.0.0.1:3000 and keeps its data in SQLite under
    /// ./berth-data, seeded with the sample estate at first start.
    Serve {
        /// Address to listen on.
        #[arg(long, env = "BERTH_LISTEN", default_value = "127.0.0.1:3000")]
        listen: std::net::SocketAddr,
        /// Database: postgres://… for PostgreSQL (several replicas may
        /// share one), or sqlite:PATH. Default: SQLite in --data-dir.
        #[arg(long, env = "BERTH_DATABASE_URL", hide_env_values = true)]
        database_url: Option<String>,
        /// Directory for the embedded SQLite database.
        #[arg(long, env = "BERTH_DATA_DIR", default_value = "berth-data")]
        data_dir: PathBuf,
        /// Do not seed the sample estate into an empty database.
        #[arg(long)]
        no_seed: bool,
        /// Mark the session cookie Secure (set when served over TLS).
        #[arg(long, env = "BERTH_SECURE_COOKIES")]
        secure_cookies: bool,
        /// Rate-limit by the last X-Forwarded-For hop (only behind a
        /// proxy that sets it).
        #[arg(long, env = "BERTH_TRUST_FORWARDED_FOR")]
        trust_forwarded_for: bool,
        /// Database connections in the pool.
        #[arg(long, default_value_t = 16)]
        max_connections: u32,
        /// File holding the key that seals decider secrets at rest (32
        /// bytes, base64). BERTH_SECRET_KEY gives the key itself instead.
        /// Default with SQLite: DATA_DIR/secret.key, created at first start.
        #[arg(long, env = "BERTH_SECRET_KEY_FILE")]
        secret_key_file: Option<PathBuf>,
        /// Loopback or private networks external deciders may be reached
        /// on (CIDR, repeatable or comma-separated), e.g. 10.0.0.0/8.
        /// Without it only public addresses are reachable.
        #[arg(long, env = "BERTH_DECIDER_ALLOW", value_delimiter = ',')]
        decider_allow: Vec<String>,
        /// Seconds between advice driver passes.
        #[arg(long, env = "BERTH_DRIVER_EVERY", default_value_t = 60)]
        driver_every_s: u64,
        /// Do not run the advice driver in this process.
        #[arg(long, env = "BERTH_NO_DRIVER")]
        no_driver: bool,
        /// The web application's built files (scripts/build-web.sh).
        #[arg(long, env = "BERTH_SITE_ROOT", default_value = "target/site")]
        site_root: PathBuf,
    },
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
    /// Compare deciders: run the built-ins (baseline, heaviest-talker) and
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
    Agent {
        #[command(flatten)]
        target: Target,
        /// Prometheus to query for the mesh metrics, e.g.
        /// http://prometheus.istio-system:9090.
        #[arg(long, value_name = "URL")]
        prometheus: Option<String>,
        /// Time between batches: 60s, 5m, 1h (1s to 24h).
        #[arg(long, default_value = "60s")]
        interval: String,
        /// The estate cluster whose free capacity is reported.
        #[arg(long)]
        cluster: Option<String>,
        /// A file holding {"cpu_free": x, "memory_free_gib": y}, re-read at
        /// every tick (undated contents are dated by the file's mtime).
        #[arg(
            long,
            value_name = "FILE",
            requires = "cluster",
            conflicts_with = "capacity_command"
        )]
        capacity_file: Option<PathBuf>,
        /// A shell command printing {"cpu_free": x, "memory_free_gib": y},
        /// run at every tick.
        #[arg(long, value_name = "CMD", requires = "cluster")]
        capacity_command: Option<String>,
        #[command(flatten)]
        mesh: MeshArgs,
    },
}

/// The Berth server, token and estate observations go to.
#[derive(clap::Args)]
struct Target {
    /// The Berth server, e.g. http://127.0.0.1:3000.
    #[arg(long, env = "BERTH_SERVER", value_name = "URL")]
    server: String,
    /// An API token: an agent token scoped to the estate, or an operator's.
    /// Prefer the environment variable: a flag shows in the process list.
    #[arg(long, env = "BERTH_TOKEN", hide_env_values = true)]
    token: String,
    /// The estate id.
    #[arg(long)]
    estate: String,
}

/// Which queries to run and how workloads become services.
#[derive(clap::Args)]
struct MeshArgs {
    /// PromQL giving requests/s per workload edge (default: Istio's
    /// istio_requests_total; see docs/observations.md).
    #[arg(long, value_name = "PROMQL")]
    query_rate: Option<String>,
    /// PromQL giving the mean request duration in ms per workload edge
    /// (default: from istio_request_duration_milliseconds).
    #[arg(long, value_name = "PROMQL")]
    query_duration: Option<String>,
    /// PromQL giving bytes/s per workload edge (default: Istio's request
    /// and response byte counters); an empty string skips MB/s.
    #[arg(long, value_name = "PROMQL")]
    query_bytes: Option<String>,
    /// Map a workload (NAME or NAMESPACE/NAME) to an estate service id;
    /// repeatable. Unmapped workloads stand for the service of their name.
    #[arg(long = "map", value_name = "WORKLOAD=SERVICE")]
    map: Vec<String>,
    /// A JSON or YAML object of workload → service id.
    #[arg(long, value_name = "FILE")]
    map_file: Option<PathBuf>,
}

#[derive(Subcommand)]
enum ImportFrom {
    /// Kubernetes manifests or `kubectl get … -o yaml|json` output
    /// (docs/kubernetes-import.md), into an estate file (--into) or into
    /// an estate on a server (--server, --estate).
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
        /// With --server: report what would change, write nothing.
        #[arg(long, requires = "server")]
        dry_run: bool,
        /// Manifest files; `-` reads standard input.
        #[arg(required = true)]
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

/// Where a server-side import goes.
#[derive(clap::Args)]
struct Remote {
    /// The Berth server, e.g. http://127.0.0.1:3000.
    #[arg(long, env = "BERTH_SERVER")]
    server: Option<String>,
    /// The estate id on the server.
    #[arg(long, requires = "server")]
    estate: Option<String>,
    /// An API token (operator or admin). Prefer the environment variable:
    /// a command-line argument is visible to other users of the machine.
    #[arg(long, env = "BERTH_TOKEN", hide_env_values = true)]
    token: Option<String>,
}

#[derive(Clone, Copy, ValueEnum)]
enum OutputFormat {
    Json,
    Text,
}

/// A failure to report: what went wrong, in words, then exit code 2 (1 is
/// kept for "the input is invalid").
struct Failure {
    code: u8,
    lines: Vec<String>,
}

impl Failure {
    fn usage(msg: String) -> Failure {
        Failure {
            code: 2,
            lines: vec![msg],
        }
    }
}

/// Set when a result was printed but some input could not be read (a
/// `--response` file that does not exist): the output stands, yet a script
/// must not mistake it for a clean run, so the exit code is 3.
static INCOMPLETE: AtomicBool = AtomicBool::new(false);

fn main() -> ExitCode {
    let cli = Cli::parse();
    if let Command::Serve { .. } = cli.command {
        return serve(cli.command);
    }
    if let Command::Agent { .. } = cli.command {
        return agent(cli.command);
    }
    match run(cli.command) {
        Ok(out) => {
            print!("{out}");
            if INCOMPLETE.load(Ordering::Relaxed) {
                ExitCode::from(3)
            } else {
                ExitCode::SUCCESS
            }
        }
        Err(f) => {
            for line in f.lines {
                eprintln!("{line}");
            }
            ExitCode::from(f.code)
        }
    }
}

fn serve(command: Command) -> ExitCode {
    let Command::Serve {
        listen,
        database_url,
        data_dir,
        no_seed,
        secure_cookies,
        trust_forwarded_for,
        max_connections,
        secret_key_file,
        decider_allow,
        driver_every_s,
        no_driver,
        site_root,
    } = command
    else {
        unreachable!("serve() is called with Command::Serve")
    };
    berth::serve::init_logging();
    let admin_token = std::env::var("BERTH_ADMIN_TOKEN")
        .ok()
        .filter(|t| !t.is_empty());
    if admin_token.as_ref().is_some_and(|t| t.len() < 32) {
        eprintln!(
            "BERTH_ADMIN_TOKEN: at least 32 characters, please (e.g. `openssl rand -hex 32`)"
        );
        return ExitCode::from(2);
    }
    let opts = berth::serve::ServeOptions {
        listen,
        database_url,
        data_dir,
        admin_token,
        seed: !no_seed,
        max_connections,
        // Read here, passed on, and never printed.
        secret_key: std::env::var("BERTH_SECRET_KEY")
            .ok()
            .filter(|k| !k.is_empty()),
        secret_key_file,
        decider_allow,
        driver_every_s: if no_driver {
            None
        } else {
            Some(driver_every_s.max(1))
        },
        config: berth::Config {
            secure_cookies,
            trust_forwarded_for,
            site_root,
            ..berth::Config::default()
        },
    };
    let runtime = match tokio::runtime::Runtime::new() {
        Ok(r) => r,
        Err(e) => {
            eprintln!("cannot start the async runtime: {e}");
            return ExitCode::from(2);
        }
    };
    match runtime.block_on(berth::serve::run(opts)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("berth serve: {e}");
            ExitCode::from(2)
        }
    }
}

fn run(command: Command) -> Result<String, Failure> {
    match command {
        Command::Serve { .. } | Command::Agent { .. } => unreachable!("handled in main"),
        Command::Validate { estate } => {
            let e = read_estate(&estate)?;
            // Likely mistakes go to stderr: the file is valid, so exit 0.
            for l in berth_engine::estate::lint(&e) {
                eprintln!("{}: warning: {}: {}", estate.display(), l.at, l.message);
            }
            Ok(format!(
                "{}: valid estate {:?} (version {}): {} sites, {} clusters, {} links, {} paths, {} services, {} flows\n",
                estate.display(),
                e.name,
                berth_engine::export::version(&e),
                e.sites.len(),
                e.clusters.len(),
                e.links.len(),
                e.paths.len(),
                e.services.len(),
                e.flows.len()
            ))
        }
        Command::Advise {
            estate,
            policy,
            now,
            format,
            why,
        } => {
            let (e, policy, now) = inputs(&estate, policy.as_deref(), now.as_deref())?;
            // Flip conditions only on request: plain advice stays as fast
            // as it was.
            Ok(match (format, why) {
                (OutputFormat::Json, false) => line(front::advice(&e, &policy, now)),
                (OutputFormat::Json, true) => line(front::advice_why(&e, &policy, now)),
                (OutputFormat::Text, false) => {
                    berth_engine::text::advice(&berth_engine::advise(&e, &policy, now))
                }
                (OutputFormat::Text, true) => {
                    let advice = berth_engine::advise(&e, &policy, now);
                    let why = berth_engine::explain(&e, &policy, now, &advice);
                    berth_engine::text::advice_with_why(&advice, &why)
                }
            })
        }
        Command::Preview {
            estate,
            policy,
            now,
        } => {
            let (e, policy, now) = inputs(&estate, policy.as_deref(), now.as_deref())?;
            Ok(line(front::preview(&e, &policy, now)))
        }
        Command::Compare {
            estate,
            responses,
            policy,
            now,
            format,
        } => {
            // Check every NAME=FILE before any work.
            let named = responses
                .iter()
                .map(|r| parse_named(r))
                .collect::<Result<Vec<_>, _>>()?;
            for (i, (name, _)) in named.iter().enumerate() {
                if BUILTIN_NAMES.contains(&name.as_str()) {
                    return Err(Failure::usage(format!(
                        "--response {name}=…: {name:?} is the name of a built-in decider; choose another"
                    )));
                }
                if named[..i].iter().any(|(n, _)| n == name) {
                    return Err(Failure::usage(format!(
                        "--response {name}=…: the name {name:?} is given twice"
                    )));
                }
            }
            let (e, policy, now) = inputs(&estate, policy.as_deref(), now.as_deref())?;
            let externals: Vec<decider::External> = named
                .into_iter()
                .map(|(name, path)| {
                    let response = read_response(&path);
                    if response.as_ref().is_err_and(|e| e.code == "unreadable") {
                        INCOMPLETE.store(true, Ordering::Relaxed);
                    }
                    if let Err(err) = &response {
                        eprintln!(
                            "warning: decider {name} ({}): {} [{}]",
                            path.display(),
                            err.message,
                            err.code
                        );
                    }
                    decider::External {
                        name,
                        response,
                        run_time_ms: None,
                    }
                })
                .collect();
            let mut stopwatch = |run: &mut dyn FnMut()| {
                let start = Instant::now();
                run();
                Some(start.elapsed().as_secs_f64() * 1000.0)
            };
            Ok(match format {
                OutputFormat::Json => {
                    line(front::compare(&e, &policy, now, &externals, &mut stopwatch))
                }
                OutputFormat::Text => berth_engine::text::comparison(&decider::compare_timed(
                    &e,
                    &policy,
                    now,
                    &externals,
                    &mut stopwatch,
                )),
            })
        }
        Command::Whatif {
            estate,
            scenario,
            policy,
            now,
            format,
        } => {
            let (e, policy, now) = inputs(&estate, policy.as_deref(), now.as_deref())?;
            let text = read_text(&scenario)?;
            let invalid = |mut errors: Vec<whatif::ScenarioError>| {
                whatif::locate_errors(&mut errors, &text);
                invalid_input(&scenario, "scenario", &errors)
            };
            Ok(match format {
                OutputFormat::Json => {
                    line(front::whatif(&e, &policy, now, &text).map_err(invalid)?)
                }
                OutputFormat::Text => {
                    let sc = whatif::Scenario::from_json_checked(&text, &e).map_err(invalid)?;
                    let projection = whatif::project(&e, &policy, now, &sc).map_err(invalid)?;
                    berth_engine::text::projection(&projection)
                }
            })
        }
        Command::Import {
            from:
                ImportFrom::Kubernetes {
                    cluster,
                    into,
                    output,
                    remote,
                    skip_invalid,
                    dry_run,
                    files,
                },
        } => match into {
            Some(into) => {
                import_kubernetes(&cluster, &into, output.as_deref(), skip_invalid, &files)
            }
            None => import_kubernetes_remote(&remote, &cluster, skip_invalid, dry_run, &files),
        },
        Command::Import {
            from:
                ImportFrom::Prometheus {
                    server,
                    token,
                    estate,
                    url,
                    file,
                    mesh,
                    dry_run,
                },
        } => import_prometheus(ImportPrometheus {
            server,
            token,
            estate,
            url,
            file,
            mesh,
            dry_run,
        }),
        Command::Import {
            from:
                ImportFrom::Estate {
                    remote,
                    create,
                    file,
                },
        } => import_estate_remote(&remote, create, &file),
        Command::Place {
            estate,
            service,
            policy,
            now,
            format,
        } => {
            let (e, policy, now) = inputs(&estate, policy.as_deref(), now.as_deref())?;
            let unknown = |msg: String| Failure {
                code: 1,
                lines: vec![format!("{}: {msg}", estate.display())],
            };
            Ok(match format {
                OutputFormat::Json => {
                    line(front::place(&e, &policy, now, &service).map_err(unknown)?)
                }
                OutputFormat::Text => berth_engine::text::placement(
                    &berth_engine::place::place(&e, &policy, now, &service).map_err(unknown)?,
                ),
            })
        }
    }
}

/// The server, estate and token of a remote import, each required.
fn remote_parts(r: &Remote) -> Result<(String, String, String), Failure> {
    let server = r
        .server
        .clone()
        .ok_or_else(|| Failure::usage("--server URL is required (or BERTH_SERVER)".into()))?;
    let estate = r
        .estate
        .clone()
        .ok_or_else(|| Failure::usage("--estate ID is required with --server".into()))?;
    let token = r.token.clone().ok_or_else(|| {
        Failure::usage(
            "a token is required: set BERTH_TOKEN (or --token) to an operator token".into(),
        )
    })?;
    Ok((server.trim_end_matches('/').to_string(), estate, token))
}

/// Send one request to a Berth server; a refusal becomes a failure that
/// prints the server's message and every detail it gave.
fn server_request(
    method: reqwest::Method,
    url: &str,
    token: &str,
    content_type: &str,
    body: Vec<u8>,
) -> Result<serde_json::Value, Failure> {
    let client = reqwest::blocking::Client::builder()
        // Estate imports are large; the server itself bounds its work.
        .timeout(std::time::Duration::from_secs(300))
        .build()
        .map_err(|e| Failure::usage(format!("HTTP client: {e}")))?;
    let resp = client
        .request(method, url)
        .bearer_auth(token)
        .header("content-type", content_type)
        .body(body)
        .send()
        .map_err(|e| Failure::usage(format!("cannot reach {url}: {e}")))?;
    let status = resp.status();
    let text = resp
        .text()
        .map_err(|e| Failure::usage(format!("{url}: reading the answer: {e}")))?;
    let v: serde_json::Value = serde_json::from_str(&text).unwrap_or(serde_json::Value::Null);
    if status.is_success() {
        return Ok(v);
    }
    let mut lines = vec![format!(
        "{url}: {status}: {}",
        v["message"].as_str().unwrap_or(text.trim())
    )];
    if let Some(errors) = v["details"]["errors"].as_array() {
        for e in errors {
            let mut at = String::new();
            for k in ["file", "document", "object"] {
                if let Some(x) = e.get(k).filter(|x| !x.is_null()) {
                    at.push_str(&format!(
                        "{}: ",
                        x.as_str().map_or(x.to_string(), String::from)
                    ));
                }
            }
            if let Some(l) = e["line"].as_u64() {
                at.push_str(&format!("line {l}: "));
            }
            lines.push(format!(
                "  {at}{}: {}",
                e["path"].as_str().unwrap_or("/"),
                e["message"].as_str().unwrap_or("")
            ));
        }
    }
    // 4xx: the input (or the request) is wrong; 5xx: the server is.
    Err(Failure {
        code: if status.is_client_error() { 1 } else { 2 },
        lines,
    })
}

fn read_inputs(files: &[PathBuf]) -> Result<Vec<(String, String)>, Failure> {
    let mut texts = Vec::with_capacity(files.len());
    for f in files {
        let text = if f.as_os_str() == "-" {
            let mut s = String::new();
            std::io::stdin()
                .read_to_string(&mut s)
                .map_err(|e| Failure::usage(format!("cannot read standard input: {e}")))?;
            s
        } else {
            read_text(f)?
        };
        texts.push((f.display().to_string(), text));
    }
    Ok(texts)
}

/// `berth import kubernetes --server`: the manifests go to the server,
/// which parses and merges them under the estate lock.
fn import_kubernetes_remote(
    remote: &Remote,
    cluster: &str,
    skip_invalid: bool,
    dry_run: bool,
    files: &[PathBuf],
) -> Result<String, Failure> {
    let (server, estate, token) = remote_parts(remote)?;
    let texts = read_inputs(files)?;
    let body = serde_json::json!({
        "cluster": cluster,
        "skip_invalid": skip_invalid,
        "dry_run": dry_run,
        "files": texts.iter().map(|(name, text)| serde_json::json!({"name": name, "text": text})).collect::<Vec<_>>(),
    });
    let url = format!("{server}/api/estates/{estate}/import/kubernetes");
    let v = server_request(
        reqwest::Method::POST,
        &url,
        &token,
        "application/json",
        body.to_string().into_bytes(),
    )?;
    let r = &v["report"];
    let count = |k: &str| r[k].as_array().map_or(0, Vec::len);
    Ok(format!(
        "{estate}, cluster {cluster}: {} added, {} changed, {} removed, {} unchanged; flows {} added, {} removed; {} notes, {} skipped; {}\n",
        count("added"),
        count("changed"),
        count("removed"),
        r["unchanged"].as_u64().unwrap_or(0),
        count("flows_added"),
        count("flows_removed"),
        count("notes"),
        count("skipped"),
        if v["written"] == true {
            format!("version {}", v["version"])
        } else if dry_run {
            "dry run, nothing written".to_string()
        } else {
            format!("nothing changed (version {})", v["version"])
        }
    ))
}

/// `berth import estate --server`: replace (or create) an estate.
fn import_estate_remote(remote: &Remote, create: bool, file: &Path) -> Result<String, Failure> {
    let (server, estate, token) = remote_parts(remote)?;
    let text = read_text(file)?;
    let ct = match file.extension().and_then(|e| e.to_str()) {
        Some("yaml" | "yml") => "application/yaml",
        _ if Format::sniff(&text) == Format::Yaml => "application/yaml",
        _ => "application/json",
    };
    let (method, url) = if create {
        (
            reqwest::Method::POST,
            format!("{server}/api/estates?id={estate}"),
        )
    } else {
        (
            reqwest::Method::PUT,
            format!("{server}/api/estates/{estate}/file"),
        )
    };
    let v = server_request(method, &url, &token, ct, text.into_bytes()).map_err(|mut f| {
        f.lines[0] = format!("{}: {}", file.display(), f.lines[0]);
        f
    })?;
    Ok(format!(
        "{}: estate {} is now version {} ({} services, content {})\n",
        file.display(),
        v["id"].as_str().unwrap_or(&estate),
        v["version"],
        v["counts"]["services"],
        v["content_digest"].as_str().unwrap_or("?")
    ))
}

/// `berth import kubernetes`: read, parse, merge (all in the library),
/// report on stderr, write the estate.
fn import_kubernetes(
    cluster: &str,
    into: &Path,
    output: Option<&Path>,
    skip_invalid: bool,
    files: &[PathBuf],
) -> Result<String, Failure> {
    use berth::import::{self, kubernetes};
    let estate_text = read_text(into)?;
    let estate: serde_json::Value = match into.extension().and_then(|e| e.to_str()) {
        Some("yaml" | "yml") => serde_yaml::from_str(&estate_text).map_err(|e| e.to_string()),
        _ if Format::sniff(&estate_text) == Format::Yaml => {
            serde_yaml::from_str(&estate_text).map_err(|e| e.to_string())
        }
        _ => serde_json::from_str(&estate_text).map_err(|e| e.to_string()),
    }
    .map_err(|e| Failure {
        code: 1,
        lines: vec![format!(
            "{}: not a readable estate file: {e}",
            into.display()
        )],
    })?;
    let texts = read_inputs(files)?;
    let inputs: Vec<import::Input> = texts
        .iter()
        .map(|(name, text)| import::Input { name, text })
        .collect();
    let imported =
        kubernetes::parse(&inputs, kubernetes::Options { skip_invalid }).map_err(|errors| {
            let mut lines = vec![format!(
                "nothing imported: {} error{} (--skip-invalid leaves such objects out):",
                errors.len(),
                if errors.len() == 1 { "" } else { "s" }
            )];
            lines.extend(errors.iter().map(|e| e.to_string()));
            Failure { code: 1, lines }
        })?;
    let (merged, report) = import::merge(&estate, cluster, &imported).map_err(|e| Failure {
        code: 1,
        lines: vec![format!("{}: {e}", into.display())],
    })?;
    eprint!("{}", report.text());
    let text = pretty(&merged);
    match output {
        Some(path) => {
            std::fs::write(path, &text)
                .map_err(|e| Failure::usage(format!("cannot write {}: {e}", path.display())))?;
            Ok(String::new())
        }
        None => Ok(text),
    }
}

/// The queries and the mapping, from the flags (a bad flag is a usage
/// error, 2; a mapping file that cannot be understood is invalid input, 1).
fn mesh_setup(
    mesh: MeshArgs,
) -> Result<
    (
        berth::prom_client::Queries,
        berth::import::prometheus::Mapping,
    ),
    Failure,
> {
    let mut queries = berth::prom_client::Queries::default();
    if let Some(q) = mesh.query_rate {
        queries.rate = q;
    }
    if let Some(q) = mesh.query_duration {
        queries.duration = q;
    }
    if let Some(q) = mesh.query_bytes {
        queries.bytes = (!q.trim().is_empty()).then_some(q);
    }
    let mut mapping = berth::import::prometheus::Mapping::default();
    if let Some(path) = &mesh.map_file {
        let text = read_text(path)?;
        let v: serde_json::Value = serde_yaml::from_str(&text).map_err(|e| Failure {
            code: 1,
            lines: vec![format!("{}: not JSON or YAML: {e}", path.display())],
        })?;
        mapping.add_file(&v).map_err(|e| Failure {
            code: 1,
            lines: vec![format!("{}: {e}", path.display())],
        })?;
    }
    for m in &mesh.map {
        mapping.add_arg(m).map_err(Failure::usage)?;
    }
    Ok((queries, mapping))
}

fn runtime() -> Result<tokio::runtime::Runtime, Failure> {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| Failure::usage(format!("cannot start the async runtime: {e}")))
}

struct ImportPrometheus {
    server: Option<String>,
    token: Option<String>,
    estate: String,
    url: Option<String>,
    file: Option<PathBuf>,
    mesh: MeshArgs,
    dry_run: bool,
}

/// How long `import prometheus` keeps retrying a server that answers 429
/// or 5xx: long enough to ride out a rate limit (one batch per 2 s) or a
/// restart; a person is waiting, so not longer.
const IMPORT_RETRY_WINDOW: std::time::Duration = std::time::Duration::from_secs(30);

/// `berth import prometheus`: read the query results (Prometheus or a
/// file), derive the flows, print them, and send them as one batch.
fn import_prometheus(args: ImportPrometheus) -> Result<String, Failure> {
    use berth::import::prometheus;
    use berth::submit::{self, BerthClient, Secret, SubmitError};
    let (queries, mapping) = mesh_setup(args.mesh)?;
    let client = match (&args.server, &args.token) {
        (Some(server), Some(token)) => Some(
            BerthClient::new(server, Secret::new(token.clone()), &args.estate)
                .map_err(Failure::usage)?,
        ),
        _ => None,
    };
    let prom = match &args.url {
        Some(url) => Some(berth::prom_client::PromClient::new(url).map_err(Failure::usage)?),
        None => None,
    };
    let rt = runtime()?;
    let (results, origin) = match (&prom, &args.file) {
        (Some(prom), _) => {
            let time = chrono::Utc::now().timestamp();
            let results = rt
                .block_on(prom.fetch(&queries, time))
                .map_err(|e| Failure {
                    code: if e.is_transient() { 2 } else { 1 },
                    lines: vec![format!("Prometheus: {e}")],
                })?;
            let origin = format!(
                "Prometheus {}, evaluated at {}",
                args.url.as_deref().unwrap_or_default(),
                berth_engine::estate::format_time(time)
            );
            (results, origin)
        }
        (None, Some(file)) => {
            let text = read_text(file)?;
            let v: serde_json::Value = serde_json::from_str(&text).map_err(|e| Failure {
                code: 1,
                lines: vec![format!("{}:{}: not JSON: {e}", file.display(), e.line())],
            })?;
            let results = prometheus::parse_file(&v).map_err(|e| Failure {
                code: 1,
                lines: vec![format!("{}: {e}", file.display())],
            })?;
            (results, format!("saved results {}", file.display()))
        }
        (None, None) => unreachable!("clap requires --url or --file"),
    };
    // Nothing found at all means the wrong Prometheus or other metric
    // names, not "0 flows": say what was looked for and fail (the agent
    // warns instead and carries on).
    if let Some(problem) = prometheus::nothing_found(&results, &queries.rate) {
        return Err(Failure {
            code: 1,
            lines: vec![format!("{origin}: {problem}")],
        });
    }
    // An operator's token may read the estate: workloads that are not
    // among its services are then reported before anything is sent. An
    // agent token may not; the server's refusal tells the same, later.
    let known = match &client {
        Some(c) => rt.block_on(c.estate_services()).map_err(|e| Failure {
            code: 2,
            lines: vec![format!(
                "{}: reading the estate {:?}: {e}",
                args.server.as_deref().unwrap_or_default(),
                args.estate
            )],
        })?,
        None => None,
    };
    let derived = prometheus::derive(&results, &mapping, known.as_ref());
    // A named source, not the server's default (the token's name): the
    // figures come from the mesh, whoever runs the import.
    let observations = prometheus::observations(&derived.flows, Some("import:prometheus"));
    print!(
        "{origin}: {} flow{} for estate {:?}{}\n{}",
        derived.flows.len(),
        if derived.flows.len() == 1 { "" } else { "s" },
        args.estate,
        match (&client, &known) {
            (None, _) => " (services not checked: no --server to ask)",
            (Some(_), None) => {
                " (services not checked: the token may not read the estate; the server checks them)"
            }
            (Some(_), Some(_)) => "",
        },
        prometheus::report(&derived)
    );
    let body = serde_json::to_string(&observations).expect("serialises");
    let batch_id = submit::batch_id("prometheus", &[&args.estate, &body]);
    if args.dry_run {
        return Ok(format!(
            "dry run: {} observation{} not sent; the batch would be:\n{}",
            observations.len(),
            if observations.len() == 1 { "" } else { "s" },
            pretty(&serde_json::json!({"batch_id": batch_id, "observations": observations}))
        ));
    }
    let client = client.expect("--server and --token are required without --dry-run");
    if observations.is_empty() {
        return Ok("nothing to send\n".into());
    }
    let policy = submit::RetryPolicy {
        base: submit::BACKOFF_BASE,
        ceiling: submit::BACKOFF_CEILING,
        give_up_after: IMPORT_RETRY_WINDOW,
        retry_unreachable: false,
    };
    let (_stop_tx, mut stop) = tokio::sync::watch::channel(false);
    let delivered = rt.block_on(submit::deliver(
        &client,
        &batch_id,
        observations,
        policy,
        &mut stop,
        |e, delay| eprintln!("{e}; retrying in {:.1} s", delay.as_secs_f64()),
    ));
    let pruned_lines = |pruned: &[submit::Pruned]| -> Vec<String> {
        let mut lines = vec![];
        if !pruned.is_empty() {
            lines.push(format!(
                "refused by the server and left out ({}):",
                pruned.len()
            ));
            lines.extend(
                pruned
                    .iter()
                    .map(|p| format!("  {} {} → {}: {}", p.fact, p.from, p.to, p.message)),
            );
        }
        lines
    };
    match delivered {
        Ok(d) => {
            let mut out = pruned_lines(&d.pruned).join("\n");
            if !out.is_empty() {
                out.push('\n');
            }
            out.push_str(&match d.answer {
                None => "nothing left to send\n".to_string(),
                Some(a) if a.duplicate => format!(
                    "batch {} was already applied (duplicate): nothing changed; estate {:?} is at version {}\n",
                    a.batch_id, a.estate, a.version
                ),
                Some(a) => format!(
                    "sent batch {} ({} observation{}): estate {:?} now at version {}, {} applied\n",
                    a.batch_id,
                    d.sent,
                    if d.sent == 1 { "" } else { "s" },
                    a.estate,
                    a.version,
                    a.applied
                ),
            });
            Ok(out)
        }
        Err((e, pruned)) => {
            let mut lines = pruned_lines(&pruned);
            lines.push(format!(
                "{}: {e}",
                args.server.as_deref().unwrap_or_default()
            ));
            Err(Failure {
                code: match e {
                    SubmitError::Invalid { .. } | SubmitError::Conflict(_) => 1,
                    _ => 2,
                },
                lines,
            })
        }
    }
}

/// `berth agent`: check the options, then run until SIGTERM or Ctrl-C.
fn agent(command: Command) -> ExitCode {
    let Command::Agent {
        target,
        prometheus,
        interval,
        cluster,
        capacity_file,
        capacity_command,
        mesh,
    } = command
    else {
        unreachable!("agent() is called with Command::Agent")
    };
    let setup = || -> Result<berth::agent::AgentOptions, Failure> {
        use berth::agent::CapacitySource;
        let interval = berth::agent::parse_interval(&interval).map_err(Failure::usage)?;
        let capacity = match (capacity_file, capacity_command) {
            (Some(f), _) => Some(CapacitySource::File(f)),
            (None, Some(c)) => Some(CapacitySource::Command(c)),
            (None, None) => None,
        };
        if prometheus.is_none() && capacity.is_none() {
            return Err(Failure::usage(
                "nothing to report: give --prometheus URL, or --cluster C with --capacity-file F or --capacity-command CMD".into(),
            ));
        }
        let (queries, mapping) = mesh_setup(mesh)?;
        Ok(berth::agent::AgentOptions {
            client: berth::submit::BerthClient::new(
                &target.server,
                berth::submit::Secret::new(target.token),
                &target.estate,
            )
            .map_err(Failure::usage)?,
            prometheus: match &prometheus {
                Some(url) => {
                    Some(berth::prom_client::PromClient::new(url).map_err(Failure::usage)?)
                }
                None => None,
            },
            queries,
            mapping,
            interval,
            cluster,
            capacity,
        })
    };
    let run = || -> Result<(), Failure> {
        let opts = setup()?;
        berth::serve::init_logging();
        let rt = runtime()?;
        rt.block_on(async {
            let (tx, rx) = tokio::sync::watch::channel(false);
            tokio::spawn(async move {
                berth::serve::stop_requested().await;
                tracing::info!("stop requested");
                let _ = tx.send(true);
            });
            berth::agent::run(opts, rx).await;
        });
        Ok(())
    };
    match run() {
        Ok(()) => ExitCode::SUCCESS,
        Err(f) => {
            for line in f.lines {
                eprintln!("{line}");
            }
            ExitCode::from(f.code)
        }
    }
}

/// Names the built-in deciders use; an external reply may not take one.
const BUILTIN_NAMES: [&str; 2] = ["baseline", "heaviest-talker"];

/// `NAME=FILE`: a name of 1–64 characters without spaces or `=`, a path.
fn parse_named(arg: &str) -> Result<(String, PathBuf), Failure> {
    let usage = |why: &str| {
        Failure::usage(format!(
            "--response {arg:?}: {why}; expected NAME=FILE, e.g. --response mine=reply.json"
        ))
    };
    let Some((name, file)) = arg.split_once('=') else {
        return Err(usage("no `=`"));
    };
    if name.is_empty() || name.chars().count() > 64 {
        return Err(usage("the name must be 1 to 64 characters"));
    }
    if name.chars().any(|c| c.is_whitespace() || c.is_control()) {
        return Err(usage("the name may not contain spaces"));
    }
    if file.is_empty() {
        return Err(usage("no file"));
    }
    Ok((name.to_string(), PathBuf::from(file)))
}

/// Read a reply file (never more than the body limit plus one byte, so a
/// huge file is refused without being loaded) and parse it. Any failure is
/// the decider's error entry, not the command's.
fn read_response(path: &Path) -> Result<Vec<decider::RawProposal>, decider::DeciderError> {
    let unreadable = |e: std::io::Error| decider::DeciderError {
        code: "unreadable".into(),
        message: format!("cannot read {}: {e}", path.display()),
    };
    let file = std::fs::File::open(path).map_err(unreadable)?;
    let mut bytes = Vec::new();
    file.take(decider::MAX_BODY_BYTES as u64 + 1)
        .read_to_end(&mut bytes)
        .map_err(unreadable)?;
    decider::parse_response(&bytes).map_err(|e| {
        let mut err = decider::DeciderError::from(e);
        err.message = format!("{}: {}", path.display(), err.message);
        err
    })
}

/// A document the CLI writes for people to read or edit (an estate file,
/// a dry run's batch): indented, with a final newline. Engine results go
/// through [`line`] instead.
fn pretty<T: serde::Serialize>(v: &T) -> String {
    let mut s = serde_json::to_string_pretty(v).expect("documents serialise");
    s.push('\n');
    s
}

/// A result of the engine's JSON front end as the CLI prints it: its bytes
/// and a final newline.
fn line(mut bytes: String) -> String {
    bytes.push('\n');
    bytes
}

/// What every engine command starts from: the estate, the policy and the
/// evaluation time, each refused with its own message.
fn inputs(
    estate: &Path,
    policy: Option<&Path>,
    now: Option<&str>,
) -> Result<(Estate, Policy, i64), Failure> {
    Ok((
        read_estate(estate)?,
        read_policy(policy)?,
        resolve_now(now)?,
    ))
}

fn read_text(path: &Path) -> Result<String, Failure> {
    std::fs::read_to_string(path)
        .map_err(|e| Failure::usage(format!("cannot read {}: {e}", path.display())))
}

fn read_estate(path: &Path) -> Result<Estate, Failure> {
    let text = read_text(path)?;
    let format = match path.extension().and_then(|e| e.to_str()) {
        Some("json") => Format::Json,
        Some("yaml" | "yml") => Format::Yaml,
        _ => Format::sniff(&text),
    };
    estate::load(&text, format).map_err(|errors| invalid_input(path, "estate", &errors))
}

/// Every error of an input file, one per line as `file:line: path:
/// message` — the form editors and CI logs link — under a count.
fn invalid_input(file: &Path, what: &str, errors: &[EstateError]) -> Failure {
    let mut lines = vec![format!(
        "{}: invalid {what}, {} error{}:",
        file.display(),
        errors.len(),
        if errors.len() == 1 { "" } else { "s" }
    )];
    lines.extend(errors.iter().map(|e| {
        let at = if e.path.is_empty() { "/" } else { &e.path };
        match e.line {
            Some(l) => format!("{}:{l}: {at}: {}", file.display(), e.message),
            None => format!("{}: {at}: {}", file.display(), e.message),
        }
    }));
    Failure { code: 1, lines }
}

fn read_policy(path: Option<&Path>) -> Result<Policy, Failure> {
    let Some(path) = path else {
        return Ok(Policy::default());
    };
    let text = read_text(path)?;
    Policy::from_json(&text).map_err(|errors| {
        let mut lines = vec![format!("{}: invalid policy:", path.display())];
        lines.extend(errors.iter().map(|e| format!("  {e}")));
        Failure { code: 1, lines }
    })
}

fn resolve_now(now: Option<&str>) -> Result<i64, Failure> {
    match now {
        None => Ok(chrono::Utc::now().timestamp()),
        Some(s) => estate::parse_time(s).ok_or_else(|| {
            Failure::usage(format!(
                "--now {s:?}: expected an RFC 3339 time like 2026-11-30T04:05:00Z"
            ))
        }),
    }
}
