//! The engine on files, offline (SPEC §15): validate, advise, preview,
//! compare, whatif, place and plan export. Each reads an estate (and a policy, a
//! scenario, replies), resolves `now`, and prints what the engine returns.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::atomic::Ordering;

use berth_engine::{decider, estate, front, plan, whatif, Estate, EstateError, Format, Policy};

use super::args::{Command, OutputFormat, PlanAction, PlanFormat};
use super::common::{line, read_text, Failure, INCOMPLETE};

/// One engine command on files; its output, or the failure to report.
pub fn run(command: Command) -> Result<String, Failure> {
    match command {
        Command::Serve { .. } | Command::Agent { .. } => unreachable!("handled in main"),
        Command::Import { .. } | Command::BenchDeciders { .. } | Command::Outcomes { .. } => {
            unreachable!("handled in cli::run")
        }
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
                (OutputFormat::Text, why) => {
                    // The traffic read as money beside its MB/s
                    // (docs/advice.md §1a).
                    let advice = berth_engine::advise(&e, &policy, now);
                    let money = berth_engine::money::of_advice(&e, &policy, &advice);
                    let why = if why {
                        berth_engine::explain(&e, &policy, now, &advice)
                    } else {
                        Vec::new()
                    };
                    berth_engine::text::advice_report(&advice, &why, Some(&money))
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
        } => compare(
            &estate,
            &responses,
            policy.as_deref(),
            now.as_deref(),
            format,
        ),
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
        Command::Plan {
            action:
                PlanAction::Export {
                    estate,
                    format,
                    services,
                    scenario,
                    policy,
                    now,
                },
        } => plan_export(
            &estate,
            format,
            &services,
            scenario.as_deref(),
            policy.as_deref(),
            now.as_deref(),
        ),
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

/// `berth compare`: the built-in deciders and the replies given as
/// `--response NAME=FILE`, side by side.
fn compare(
    estate: &Path,
    responses: &[String],
    policy: Option<&Path>,
    now: Option<&str>,
    format: OutputFormat,
) -> Result<String, Failure> {
    // Check every NAME=FILE before any work.
    let named = responses
        .iter()
        .map(|r| parse_named(r))
        .collect::<Result<Vec<_>, _>>()?;
    for (i, (name, _)) in named.iter().enumerate() {
        if front::BUILTIN_NAMES.contains(&name.as_str()) {
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
    let (e, policy, now) = inputs(estate, policy, now)?;
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
    let mut stopwatch = berth::clock::stopwatch;
    Ok(match format {
        OutputFormat::Json => line(front::compare(&e, &policy, now, &externals, &mut stopwatch)),
        OutputFormat::Text => berth_engine::text::comparison(&decider::compare_timed(
            &e,
            &policy,
            now,
            &externals,
            &mut stopwatch,
        )),
    })
}

/// `berth plan export`: the selected moves as Markdown, JSON or
/// manifests.
fn plan_export(
    estate: &Path,
    format: PlanFormat,
    services: &[String],
    scenario: Option<&Path>,
    policy: Option<&Path>,
    now: Option<&str>,
) -> Result<String, Failure> {
    let (e, policy, now) = inputs(estate, policy, now)?;
    let selection = match (scenario, services.is_empty()) {
        (Some(path), _) => {
            let text = read_text(path)?;
            let sc = whatif::Scenario::from_json_checked(&text, &e)
                .map_err(|errors| invalid_input(path, "scenario", &errors))?;
            plan::Selection::Scenario(sc)
        }
        (None, true) => plan::Selection::Advice,
        (None, false) => {
            plan::Selection::Services(services.iter().map(|s| s.trim().to_string()).collect())
        }
    };
    let bytes = front::plan(&e, &policy, now, &selection, format.engine()).map_err(|errors| {
        let mut lines = vec![format!(
            "{}: cannot write the plan, {} error{}:",
            estate.display(),
            errors.len(),
            if errors.len() == 1 { "" } else { "s" }
        )];
        lines.extend(errors.iter().map(|err| match err.input {
            "services" => format!("  --services: {}", err.message),
            "scenario" => format!(
                "  {}: {}",
                scenario.unwrap_or(Path::new("scenario")).display(),
                err.message
            ),
            _ => format!("  {}", err.message),
        }));
        Failure { code: 1, lines }
    })?;
    Ok(match format.engine() {
        plan::Format::Json => line(bytes),
        _ => bytes,
    })
}

/// `NAME=FILE`: a name of 1–64 characters without spaces or `=`, a path.
pub(super) fn parse_named(arg: &str) -> Result<(String, PathBuf), Failure> {
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
pub(super) fn read_response(
    path: &Path,
) -> Result<Vec<decider::RawProposal>, decider::DeciderError> {
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

pub(super) fn read_estate(path: &Path) -> Result<Estate, Failure> {
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

pub(super) fn read_policy(path: Option<&Path>) -> Result<Policy, Failure> {
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

pub(super) fn resolve_now(now: Option<&str>) -> Result<i64, Failure> {
    match now {
        None => Ok(chrono::Utc::now().timestamp()),
        Some(s) => estate::parse_time(s).ok_or_else(|| {
            Failure::usage(format!(
                "--now {s:?}: expected an RFC 3339 time like 2026-11-30T04:05:00Z"
            ))
        }),
    }
}
