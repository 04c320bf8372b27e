//! `berth`: the command line. For now the offline commands that run the
//! engine on files (SPEC §15: validate, advise, preview, whatif, place);
//! `serve` arrives with the server.
//!
//! This crate is the only one that touches the filesystem and the clock:
//! it reads files, resolves `now`, and hands text to the pure engine.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use berth_engine::{estate, whatif, Estate, EstateError, Format, Policy};
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
    },
    /// Print the decider request (schema 1) the estate would generate.
    Preview {
        estate: PathBuf,
        #[arg(long)]
        policy: Option<PathBuf>,
        #[arg(long)]
        now: Option<String>,
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

fn main() -> ExitCode {
    let cli = Cli::parse();
    match run(cli.command) {
        Ok(out) => {
            print!("{out}");
            ExitCode::SUCCESS
        }
        Err(f) => {
            for line in f.lines {
                eprintln!("{line}");
            }
            ExitCode::from(f.code)
        }
    }
}

fn run(command: Command) -> Result<String, Failure> {
    match command {
        Command::Validate { estate } => {
            let e = read_estate(&estate)?;
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
        } => {
            let e = read_estate(&estate)?;
            let policy = read_policy(policy.as_deref())?;
            let now = resolve_now(now.as_deref())?;
            let advice = berth_engine::advise(&e, &policy, now);
            Ok(match format {
                OutputFormat::Json => json(&advice),
                OutputFormat::Text => berth_engine::text::advice(&advice),
            })
        }
        Command::Preview {
            estate,
            policy,
            now,
        } => {
            let e = read_estate(&estate)?;
            let policy = read_policy(policy.as_deref())?;
            let now = resolve_now(now.as_deref())?;
            Ok(json(&berth_engine::request::build(&e, &policy, now)))
        }
        Command::Whatif {
            estate,
            scenario,
            policy,
            now,
            format,
        } => {
            let e = read_estate(&estate)?;
            let policy = read_policy(policy.as_deref())?;
            let now = resolve_now(now.as_deref())?;
            let text = read_text(&scenario)?;
            let invalid = |mut errors: Vec<whatif::ScenarioError>| {
                whatif::locate_errors(&mut errors, &text);
                let mut lines = vec![format!(
                    "{}: invalid scenario, {} error{}:",
                    scenario.display(),
                    errors.len(),
                    if errors.len() == 1 { "" } else { "s" }
                )];
                lines.extend(errors.iter().map(|e| format!("  {e}")));
                Failure { code: 1, lines }
            };
            let sc = whatif::Scenario::from_json(&text).map_err(invalid)?;
            let projection = whatif::project(&e, &policy, now, &sc).map_err(invalid)?;
            Ok(match format {
                OutputFormat::Json => json(&projection),
                OutputFormat::Text => berth_engine::text::projection(&projection),
            })
        }
        Command::Place {
            estate,
            service,
            policy,
            now,
            format,
        } => {
            let e = read_estate(&estate)?;
            let policy = read_policy(policy.as_deref())?;
            let now = resolve_now(now.as_deref())?;
            let placement =
                berth_engine::place::place(&e, &policy, now, &service).map_err(|msg| Failure {
                    code: 1,
                    lines: vec![format!("{}: {msg}", estate.display())],
                })?;
            Ok(match format {
                OutputFormat::Json => json(&placement),
                OutputFormat::Text => berth_engine::text::placement(&placement),
            })
        }
    }
}

fn json<T: serde::Serialize>(v: &T) -> String {
    let mut s = serde_json::to_string_pretty(v).expect("results serialise");
    s.push('\n');
    s
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
    estate::load(&text, format).map_err(|errors: Vec<EstateError>| {
        let mut lines = vec![format!(
            "{}: invalid estate, {} error{}:",
            path.display(),
            errors.len(),
            if errors.len() == 1 { "" } else { "s" }
        )];
        lines.extend(errors.iter().map(|e| format!("  {e}")));
        Failure { code: 1, lines }
    })
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
