//! `berth bench-deciders`: every decider over a suite of estates, as a
//! leaderboard (docs/quality.md, "The decider benchmark").
//!
//! Each case is one `decider::compare_timed` (the built-ins, the
//! reference deciders among them, and the given replies), timed with the
//! CLI's stopwatch. A case's **reference** is the largest projected gain
//! any decider reached on it; where `optimum` proved its result optimal
//! that is the optimum (the count of cases where another decider beat a
//! proven optimum is reported: it can only happen when a decider found an
//! order of moves the optimum's greedy ordering did not). A decider's
//! **share** on a case is its projected gain over the reference; cases
//! whose reference is below [`NOTHING_TO_GAIN`] are left out and counted.
//! Its **share of the bound** is its gain over the most any placement could
//! improve, from the engine's proven lower bound (`bound::cost_at_least`,
//! docs/advice.md §6a): a floor on the share of the true optimum, where
//! the reference share is a ceiling.

//! `berth bench-deciders`: every decider over a suite of estates, as a
//! leaderboard (docs/quality.md, "The decider benchmark").
//!
//! The CLI builds the suite (a directory of estate files, or the default
//! suite: the engine's generated estates, the sample, and the shared
//! Kubernetes fixtures with synthetic flows), reads the given replies and
//! times the built-ins with its stopwatch; the engine's
//! [`berth_engine::leaderboard`] runs, scores and writes the board, the
//! same code the Deciders page's leaderboard uses.

use std::path::{Path, PathBuf};

use berth_engine::decider;
use berth_engine::gen::{self, Rng};
use berth_engine::leaderboard::{self, Case, SuiteSize};
use berth_engine::{Estate, Format};
use serde_json::{json, Value};

use super::common::{line, read_text, Failure};
use super::engine::{parse_named, read_estate, read_policy, read_response, resolve_now};

/// Output formats of the leaderboard.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Output {
    Text,
    Json,
    Markdown,
}

/// Options of the command.
pub struct Bench {
    pub suite: Option<PathBuf>,
    pub kubernetes: Option<PathBuf>,
    pub responses: Vec<String>,
    pub policy: Option<PathBuf>,
    pub now: Option<String>,
    pub output: Output,
}

pub fn run(b: Bench) -> Result<String, Failure> {
    let named = b
        .responses
        .iter()
        .map(|r| parse_named(r))
        .collect::<Result<Vec<_>, _>>()?;
    for (i, (name, _)) in named.iter().enumerate() {
        if let Some(why) = berth_engine::front::reply_name_problem(name) {
            return Err(Failure::usage(format!("--response {name}=…: {why}")));
        }
        if named[..i].iter().any(|(n, _)| n == name) {
            return Err(Failure::usage(format!(
                "--response {name}=…: the name {name:?} is given twice"
            )));
        }
    }
    let policy = read_policy(b.policy.as_deref())?;
    let mut skipped = Vec::new();
    let cases = match &b.suite {
        Some(dir) => suite_dir(dir, resolve_now(b.now.as_deref())?)?,
        None => {
            let now = match &b.now {
                Some(_) => resolve_now(b.now.as_deref())?,
                // The generated estates' facts are aged against gen::NOW,
                // and the sample's are dated just before it.
                None => gen::NOW,
            };
            default_suite(b.kubernetes.as_deref(), now, &mut skipped)?
        }
    };
    if cases.is_empty() {
        return Err(Failure::usage("the suite holds no estate".into()));
    }
    let mut replies = |case: &Case| -> Vec<decider::External> {
        named
            .iter()
            .map(|(name, path)| {
                // A directory holds one reply per case, named after it.
                let file = if path.is_dir() {
                    path.join(format!("{}.json", case.name))
                } else {
                    path.clone()
                };
                decider::External {
                    name: name.clone(),
                    response: read_response(&file),
                    run_time_ms: None,
                }
            })
            .collect()
    };
    let board = leaderboard::run(
        &cases,
        &policy,
        &mut replies,
        &mut berth::clock::stopwatch,
        skipped,
    );
    Ok(match b.output {
        Output::Json => line(serde_json::to_string(&board).expect("serialises")),
        Output::Markdown => leaderboard::markdown(&board),
        Output::Text => leaderboard::text(&board),
    })
}

/// Every estate file (`.json`, `.yaml`, `.yml`) directly in `dir`, in
/// name order; the case is named after the file's stem.
fn suite_dir(dir: &Path, now: i64) -> Result<Vec<Case>, Failure> {
    let entries = std::fs::read_dir(dir)
        .map_err(|e| Failure::usage(format!("cannot read {}: {e}", dir.display())))?;
    let mut files: Vec<PathBuf> = entries
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| {
            matches!(
                p.extension().and_then(|e| e.to_str()),
                Some("json" | "yaml" | "yml")
            )
        })
        .collect();
    files.sort();
    files
        .iter()
        .map(|f| {
            Ok(Case {
                family: "suite".into(),
                name: f
                    .file_stem()
                    .map(|s| s.to_string_lossy().into_owned())
                    .unwrap_or_default(),
                estate: read_estate(f)?,
                now,
            })
        })
        .collect()
}

/// The default suite: the engine's generated estates
/// ([`leaderboard::generated_suite`]), the sample estate, and the
/// Kubernetes fixtures with synthetic flows, every case evaluated at `now`.
fn default_suite(
    kubernetes: Option<&Path>,
    now: i64,
    skipped: &mut Vec<String>,
) -> Result<Vec<Case>, Failure> {
    let mut cases = leaderboard::generated_suite(SuiteSize::Default);
    for c in &mut cases {
        c.now = now;
    }
    let mut add = |family: &str, name: String, estate: Estate| {
        cases.push(Case {
            family: family.to_string(),
            name,
            estate,
            now,
        })
    };
    let sample = berth_engine::load(berth::serve::SAMPLE_ESTATE, Format::Json)
        .expect("the built-in sample estate is valid");
    add("sample", "sample".into(), sample);
    match kubernetes.map(Path::to_path_buf).or_else(find_fixtures) {
        None => skipped.push(
            "kubernetes fixtures: shared/fixtures/kubernetes not found above the current directory (give --kubernetes DIR)".into(),
        ),
        Some(dir) => {
            let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
                .map_err(|e| Failure::usage(format!("cannot read {}: {e}", dir.display())))?
                .filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|p| matches!(p.extension().and_then(|e| e.to_str()), Some("yaml" | "yml")))
                .collect();
            files.sort();
            for f in files {
                let name = f
                    .file_stem()
                    .map(|s| s.to_string_lossy().into_owned())
                    .unwrap_or_default();
                match kubernetes_case(&f, &name) {
                    Ok(e) => add("kubernetes", format!("k8s-{name}"), e),
                    Err(why) => skipped.push(format!("{}: {why}", f.display())),
                }
            }
        }
    }
    Ok(cases)
}

/// `shared/fixtures/kubernetes` in the current directory or one above it.
fn find_fixtures() -> Option<PathBuf> {
    let here = std::env::current_dir().ok()?;
    here.ancestors()
        .map(|d| d.join("shared/fixtures/kubernetes"))
        .find(|d| d.is_dir())
}

/// A fixture's services imported (as `berth import kubernetes` does) into
/// the sample estate's sites and clusters, emptied of its own services;
/// then, from a seed of the file name: every movable service on a random
/// cluster, and every call edge the import found, plus random edges up to
/// one per service, given a measured weight and MB/s (manifests carry no
/// traffic, so the flows are synthetic; their heavy tail is the
/// generator's).
fn kubernetes_case(file: &Path, name: &str) -> Result<Estate, String> {
    use berth::import::{self, kubernetes};
    let text = read_text(file).map_err(|f| f.lines.join("; "))?;
    let inputs = [import::Input {
        name: &file.display().to_string(),
        text: &text,
    }];
    let imported = kubernetes::parse(
        &inputs,
        kubernetes::Options {
            skip_invalid: true,
            ..kubernetes::Options::default()
        },
    )
    .map_err(|errors| format!("{} import errors", errors.len()))?;
    let mut base: Value =
        serde_json::from_str(berth::serve::SAMPLE_ESTATE).expect("the sample is JSON");
    base["services"] = json!([]);
    base["flows"] = json!([]);
    base["name"] = json!(format!("k8s-{name}"));
    let first = base["clusters"][0]["id"]
        .as_str()
        .expect("the sample has clusters")
        .to_string();
    let (mut merged, _report) =
        import::merge(&base, &first, &imported).map_err(|e| e.to_string())?;
    let clusters: Vec<String> = merged["clusters"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|c| c["id"].as_str().map(str::to_string))
        .collect();
    let seed = name.bytes().fold(0xcbf2_9ce4_8422_2325u64, |h, b| {
        (h ^ b as u64).wrapping_mul(0x0100_0000_01b3)
    });
    let mut r = Rng::new(seed);
    let at = berth_engine::estate::format_time(gen::NOW - 60);
    let fact = |v: f64| json!({"value": (v * 1000.0).round() / 1000.0, "class": "measured", "source": "bench:synthetic", "observed_at": at});
    let services = merged["services"]
        .as_array_mut()
        .ok_or("no services imported")?;
    let ids: Vec<String> = services
        .iter()
        .filter_map(|s| s["id"].as_str().map(str::to_string))
        .collect();
    for s in services.iter_mut() {
        let fixed = s["constraints"]["pinned"] == json!(true)
            || s["constraints"]["local_volumes"] == json!(true);
        if !fixed {
            s["cluster"] = json!(clusters[r.below(clusters.len())]);
        }
    }
    let mut edges: std::collections::BTreeSet<(String, String)> = merged["flows"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|f| {
            Some((
                f["from"].as_str()?.to_string(),
                f["to"].as_str()?.to_string(),
            ))
        })
        .collect();
    let mut tries = 0;
    while edges.len() < ids.len() && ids.len() > 1 && tries < 100 * ids.len() {
        tries += 1;
        let (a, b) = (r.below(ids.len()), r.below(ids.len()));
        if a != b {
            edges.insert((ids[a].clone(), ids[b].clone()));
        }
    }
    let flows: Vec<Value> = edges
        .into_iter()
        .map(|(a, b)| {
            json!({"from": a, "to": b, "weight": fact(r.pareto(0.5, 1.5).min(40.0)),
                   "mb_s": fact(r.pareto(0.1, 1.3).min(50.0))})
        })
        .collect();
    merged["flows"] = json!(flows);
    berth_engine::load(&merged.to_string(), Format::Json).map_err(|e| {
        e.first()
            .map(|e| format!("{}: {}", e.path, e.message))
            .unwrap_or_default()
    })
}
