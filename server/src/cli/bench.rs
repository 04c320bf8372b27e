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

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use berth_engine::decider::{self, Comparison, DeciderKind};
use berth_engine::gen::{self, Pattern, Rng, Shape};
use berth_engine::{Estate, Format};
use serde::Serialize;
use serde_json::{json, Value};

use super::common::{line, read_text, Failure};
use super::engine::{parse_named, read_estate, read_policy, read_response, resolve_now};

/// Below this reference gain (points) a case has nothing to gain and is
/// left out of the shares, as in `engine/tests/common/exact.rs`.
pub const NOTHING_TO_GAIN: f64 = 1e-6;

/// A share at or above this counts as reaching the reference (rounding
/// of sums of a few thousand terms stays far below 0.1 %).
const AT_REFERENCE: f64 = 0.999;

/// Output formats of the leaderboard.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Output {
    Text,
    Json,
    Markdown,
}

/// One estate of the suite.
struct Case {
    family: String,
    name: String,
    estate: Estate,
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

/// The leaderboard and what it rests on.
#[derive(Serialize)]
pub struct Leaderboard {
    /// How the reference, shares and statistics are defined.
    pub method: &'static str,
    pub cases: usize,
    /// Cases with something to gain (the shares are over these).
    pub counted: usize,
    pub nothing_to_gain: usize,
    /// Cases where `optimum` proved its result optimal.
    pub proven: usize,
    /// Proven cases where another decider's gain exceeded the optimum's.
    pub proven_beaten: usize,
    /// How the share of the bound is defined.
    pub bound: &'static str,
    /// Cases where the bound leaves something to gain (the bound shares
    /// are over these).
    pub bound_counted: usize,
    /// Cases per family, in suite order.
    pub families: Vec<Family>,
    /// What was not included, and why (e.g. fixtures not found).
    pub skipped: Vec<String>,
    pub deciders: Vec<Row>,
    pub per_case: Vec<CaseRow>,
}

#[derive(Serialize)]
pub struct Family {
    pub family: String,
    pub cases: usize,
}

/// One decider's line of the leaderboard. Shares are fractions (1 = the
/// reference); `null` when no case counted.
#[derive(Serialize)]
pub struct Row {
    pub name: String,
    pub kind: DeciderKind,
    pub median: Option<f64>,
    pub p5: Option<f64>,
    pub mean: Option<f64>,
    /// Shares of the bound's `improvement_at_most` (≤ the share of the
    /// true optimum): median, p5, mean.
    pub bound_median: Option<f64>,
    pub bound_p5: Option<f64>,
    pub bound_mean: Option<f64>,
    /// Counted cases where the share is at least 99.9 %.
    pub at_reference: usize,
    /// Cases with no usable reply (error entries), by code.
    pub errors: BTreeMap<String, usize>,
    pub accepted: usize,
    /// Refused proposals over the suite, by refusal code.
    pub refused_by_code: BTreeMap<String, usize>,
    /// Median and total of the measured run times, ms (`null`: none
    /// measured, e.g. replies read from files).
    pub run_time_ms_median: Option<f64>,
    pub run_time_ms_total: Option<f64>,
}

/// One case: its reference and every decider's projected gain (in the
/// order of `deciders`; `null` for an error entry).
#[derive(Serialize)]
pub struct CaseRow {
    pub family: String,
    pub name: String,
    pub services: usize,
    pub clusters: usize,
    pub reference: f64,
    /// The most any placement could improve, by the proven lower bound.
    pub improvement_at_most: f64,
    pub proven: bool,
    pub gains: Vec<Option<f64>>,
}

const METHOD: &str = "reference = the largest projected gain any decider reached on the case \
(the optimum where `optimum` proved it); share = gain / reference over the cases whose reference \
exceeds 1e-6 points; median (mean of the middle two), p5 (nearest rank), mean";

const BOUND: &str = "share of the bound = gain / (cost before − proven lower bound on any \
placement's cost), over the cases where that exceeds 1e-6 points: a floor on the share of the true \
optimum";

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
    let (cases, now) = match &b.suite {
        Some(dir) => (suite_dir(dir)?, resolve_now(b.now.as_deref())?),
        None => {
            let now = match &b.now {
                Some(_) => resolve_now(b.now.as_deref())?,
                // The generated estates' facts are aged against gen::NOW,
                // and the sample's are dated just before it.
                None => gen::NOW,
            };
            (default_suite(b.kubernetes.as_deref(), &mut skipped)?, now)
        }
    };
    if cases.is_empty() {
        return Err(Failure::usage("the suite holds no estate".into()));
    }
    let mut comparisons = Vec::with_capacity(cases.len());
    for case in &cases {
        let externals: Vec<decider::External> = named
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
            .collect();
        let c = decider::compare_timed(
            &case.estate,
            &policy,
            now,
            &externals,
            &mut berth::clock::stopwatch,
        );
        comparisons.push(c);
    }
    let bounds: Vec<f64> = cases
        .iter()
        .map(|case| improvement_at_most(&case.estate, &policy, now))
        .collect();
    let board = leaderboard(&cases, &comparisons, &bounds, skipped);
    Ok(match b.output {
        Output::Json => line(serde_json::to_string(&board).expect("serialises")),
        Output::Markdown => markdown(&board),
        Output::Text => text(&board),
    })
}

/// Every estate file (`.json`, `.yaml`, `.yml`) directly in `dir`, in
/// name order; the case is named after the file's stem.
fn suite_dir(dir: &Path) -> Result<Vec<Case>, Failure> {
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
            })
        })
        .collect()
}

/// The default suite: generated estates of two generators and several
/// sizes, the sample estate, and the Kubernetes fixtures with synthetic
/// flows. Sizes are chosen so `optimum` proves most of the small cases
/// (the reference is then exact) while the 40–60 service ones show the
/// deciders where it cannot.
fn default_suite(
    kubernetes: Option<&Path>,
    skipped: &mut Vec<String>,
) -> Result<Vec<Case>, Failure> {
    let mut cases = Vec::new();
    let mut add = |family: &str, name: String, estate: Estate| {
        cases.push(Case {
            family: family.to_string(),
            name,
            estate,
        })
    };
    // The project's generator: 30 tiny (6–12 services), 10 small (8–30),
    // 4 of 60 services on 8 clusters.
    for seed in 0..30 {
        add(
            "gen tiny",
            format!("tiny-{seed}"),
            gen::estate(&Shape::tiny(seed)),
        );
    }
    for seed in 0..10 {
        add(
            "gen small",
            format!("small-{seed}"),
            gen::estate(&Shape::small(seed)),
        );
    }
    for seed in 0..4 {
        add(
            "gen 60",
            format!("gen60-{seed}"),
            gen::estate(&Shape::sized(seed, 60, 8)),
        );
    }
    // The second generator: every pattern at 12 services × 4 clusters (8
    // seeds) and 40 × 6 (3 seeds).
    for p in Pattern::ALL {
        for seed in 0..8 {
            add(
                &format!("{} 12", p.as_str()),
                format!("{}-12-{seed}", p.as_str()),
                gen::patterned_estate(p, seed, 12, 4),
            );
        }
        for seed in 0..3 {
            add(
                &format!("{} 40", p.as_str()),
                format!("{}-40-{seed}", p.as_str()),
                gen::patterned_estate(p, seed, 40, 6),
            );
        }
    }
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
    let imported = kubernetes::parse(&inputs, kubernetes::Options { skip_invalid: true })
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

/// The most any placement of `estate` could improve on its cost, by the
/// engine's proven lower bound: what every advice result carries as
/// `bound.improvement_at_most`.
fn improvement_at_most(estate: &Estate, policy: &berth_engine::Policy, now: i64) -> f64 {
    let ctx = berth_engine::cost::Ctx::new(estate, policy, now);
    let feas = berth_engine::advise::feasibility(estate);
    let before = berth_engine::cost::State::initial(estate).totals(&ctx).cost;
    let at_least = berth_engine::bound::cost_at_least(&ctx, &feas.candidates);
    berth_engine::bound::Bound::new(at_least, before, before).improvement_at_most
}

/// Median (mean of the middle two), 5th percentile by nearest rank, mean.
fn stats(values: &[f64]) -> Option<(f64, f64, f64)> {
    let mut v = values.to_vec();
    v.sort_by(f64::total_cmp);
    let n = v.len();
    if n == 0 {
        return None;
    }
    let median = if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    };
    let p5 = v[((0.05 * n as f64).ceil() as usize).max(1) - 1];
    Some((median, p5, v.iter().sum::<f64>() / n as f64))
}

fn leaderboard(
    cases: &[Case],
    comparisons: &[Comparison],
    bounds: &[f64],
    skipped: Vec<String>,
) -> Leaderboard {
    let first = &comparisons[0];
    let mut per_case = Vec::new();
    let (mut proven, mut proven_beaten) = (0, 0);
    for ((case, c), &improvement_at_most) in cases.iter().zip(comparisons).zip(bounds) {
        let gains: Vec<Option<f64>> = c
            .deciders
            .iter()
            .map(|d| d.result.as_ref().map(|r| r.projected_gain))
            .collect();
        let reference = gains.iter().flatten().copied().fold(0.0, f64::max);
        let opt = c.deciders.iter().find(|d| d.name == "optimum");
        let is_proven = opt
            .and_then(|d| d.note.as_deref())
            .is_some_and(|n| n.starts_with("proven optimal"));
        if is_proven {
            proven += 1;
            let og = opt
                .and_then(|d| d.result.as_ref())
                .map_or(0.0, |r| r.projected_gain);
            if reference > og + 1e-9 * (1.0 + og.abs()) {
                proven_beaten += 1;
            }
        }
        per_case.push(CaseRow {
            family: case.family.clone(),
            name: case.name.clone(),
            services: case.estate.services.len(),
            clusters: case.estate.clusters.len(),
            reference,
            improvement_at_most,
            proven: is_proven,
            gains,
        });
    }
    let counted: Vec<&CaseRow> = per_case
        .iter()
        .filter(|r| r.reference > NOTHING_TO_GAIN)
        .collect();
    let bound_counted: Vec<&CaseRow> = per_case
        .iter()
        .filter(|r| r.improvement_at_most > NOTHING_TO_GAIN)
        .collect();
    let deciders = first
        .deciders
        .iter()
        .enumerate()
        .map(|(i, d)| {
            let shares: Vec<f64> = counted
                .iter()
                .map(|r| r.gains[i].unwrap_or(0.0) / r.reference)
                .collect();
            let st = stats(&shares);
            let of_bound: Vec<f64> = bound_counted
                .iter()
                .map(|r| r.gains[i].unwrap_or(0.0) / r.improvement_at_most)
                .collect();
            let bt = stats(&of_bound);
            let mut errors = BTreeMap::new();
            let mut refused_by_code = BTreeMap::new();
            let mut accepted = 0;
            let mut times = Vec::new();
            for c in comparisons {
                let e = &c.deciders[i];
                if let Some(err) = &e.error {
                    *errors.entry(err.code.clone()).or_insert(0) += 1;
                }
                if let Some(r) = &e.result {
                    accepted += r.accepted_count;
                    for (code, n) in &r.refused_by_code {
                        *refused_by_code
                            .entry(code.as_str().to_string())
                            .or_insert(0) += n;
                    }
                }
                times.extend(e.run_time_ms);
            }
            let time_stats = stats(&times);
            Row {
                name: d.name.clone(),
                kind: d.kind,
                median: st.map(|s| s.0),
                p5: st.map(|s| s.1),
                mean: st.map(|s| s.2),
                bound_median: bt.map(|s| s.0),
                bound_p5: bt.map(|s| s.1),
                bound_mean: bt.map(|s| s.2),
                at_reference: shares.iter().filter(|&&s| s >= AT_REFERENCE).count(),
                errors,
                accepted,
                refused_by_code,
                run_time_ms_median: time_stats.map(|s| s.0),
                run_time_ms_total: (!times.is_empty()).then(|| times.iter().sum()),
            }
        })
        .collect();
    let mut families: Vec<Family> = Vec::new();
    for c in cases {
        match families.last_mut() {
            Some(f) if f.family == c.family => f.cases += 1,
            _ => families.push(Family {
                family: c.family.clone(),
                cases: 1,
            }),
        }
    }
    Leaderboard {
        method: METHOD,
        cases: cases.len(),
        counted: counted.len(),
        nothing_to_gain: per_case.len() - counted.len(),
        proven,
        proven_beaten,
        bound: BOUND,
        bound_counted: bound_counted.len(),
        families,
        skipped,
        deciders,
        per_case,
    }
}

fn pct(x: Option<f64>) -> String {
    x.map_or("–".into(), |v| format!("{:.1} %", 100.0 * v))
}

fn ms(x: Option<f64>) -> String {
    x.map_or("–".into(), |v| format!("{v:.1}"))
}

fn codes(m: &BTreeMap<String, usize>) -> String {
    if m.is_empty() {
        return "–".into();
    }
    m.iter()
        .map(|(k, v)| format!("{k} {v}"))
        .collect::<Vec<_>>()
        .join(", ")
}

fn summary(b: &Leaderboard) -> Vec<String> {
    let fams: Vec<String> = b
        .families
        .iter()
        .map(|f| format!("{} {}", f.family, f.cases))
        .collect();
    let mut lines = vec![
        format!(
            "{} cases ({}); {} with something to gain, {} left out; optimum proven on {}{}",
            b.cases,
            fams.join(", "),
            b.counted,
            b.nothing_to_gain,
            b.proven,
            if b.proven_beaten > 0 {
                format!(" (beaten on {})", b.proven_beaten)
            } else {
                String::new()
            }
        ),
        format!("method: {}", b.method),
        format!("{} ({} cases)", b.bound, b.bound_counted),
    ];
    lines.extend(b.skipped.iter().map(|s| format!("skipped: {s}")));
    lines
}

fn text(b: &Leaderboard) -> String {
    let mut out = String::new();
    for l in summary(b) {
        out.push_str(&l);
        out.push('\n');
    }
    out.push('\n');
    out.push_str(&format!(
        "{:<18} {:>8} {:>8} {:>8} {:>9} {:>10} {:>10} {:>9} {:>10}  {}\n",
        "decider",
        "median",
        "p5",
        "mean",
        "at ref",
        "bound med",
        "bound p5",
        "time ms",
        "total ms",
        "refused / errors"
    ));
    for d in &b.deciders {
        let mut refused = codes(&d.refused_by_code);
        if !d.errors.is_empty() {
            refused.push_str(&format!("; errors: {}", codes(&d.errors)));
        }
        out.push_str(&format!(
            "{:<18} {:>8} {:>8} {:>8} {:>9} {:>10} {:>10} {:>9} {:>10}  {}\n",
            d.name,
            pct(d.median),
            pct(d.p5),
            pct(d.mean),
            format!("{}/{}", d.at_reference, b.counted),
            pct(d.bound_median),
            pct(d.bound_p5),
            ms(d.run_time_ms_median),
            ms(d.run_time_ms_total),
            refused
        ));
    }
    out
}

fn markdown(b: &Leaderboard) -> String {
    let mut out = String::new();
    for l in summary(b) {
        out.push_str(&l);
        out.push_str("  \n");
    }
    out.push('\n');
    out.push_str("| decider | median share | p5 share | mean share | at reference | share of bound: median | p5 | mean | median time (ms) | total time (ms) | refusals by code | errors |\n");
    out.push_str("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|---|\n");
    for d in &b.deciders {
        out.push_str(&format!(
            "| {} | {} | {} | {} | {} of {} | {} | {} | {} | {} | {} | {} | {} |\n",
            d.name,
            pct(d.median),
            pct(d.p5),
            pct(d.mean),
            d.at_reference,
            b.counted,
            pct(d.bound_median),
            pct(d.bound_p5),
            pct(d.bound_mean),
            ms(d.run_time_ms_median),
            ms(d.run_time_ms_total),
            codes(&d.refused_by_code),
            codes(&d.errors)
        ));
    }
    out
}
