//! The decider leaderboard: every decider's share of the best improvement
//! over a suite of estates (docs/quality.md, "The decider benchmark").
//!
//! Pure, like the rest of the engine: the caller builds the suite (the CLI
//! reads files and Kubernetes fixtures, the server takes the estate being
//! looked at) and times the built-ins with its own stopwatch; this module
//! runs the comparisons, scores them and writes the board as JSON, text or
//! Markdown, so `berth bench-deciders` and the Deciders page show the same
//! figures from the same code.
//!
//! A case's **reference** is the largest projected gain any decider reached
//! on it; where `optimum` proved its result optimal that is the optimum
//! (the count of cases where another decider beat a proven optimum is
//! reported: it can only happen when a decider found an order of moves the
//! optimum's greedy ordering did not). A decider's **share** on a case is
//! its projected gain over the reference; cases whose reference is below
//! [`NOTHING_TO_GAIN`] are left out and counted. Its **share of the bound**
//! is its gain over the most any placement could improve, from the
//! engine's proven lower bound (`bound::cost_at_least`, docs/advice.md
//! §6a): a floor on the share of the true optimum, where the reference
//! share is a ceiling.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::decider::{self, Comparison, DeciderKind, External};
use crate::gen::{self, Pattern, Shape};
use crate::{Estate, Policy};

/// Below this reference gain (points) a case has nothing to gain and is
/// left out of the shares, as in `engine/tests/common/exact.rs`.
pub const NOTHING_TO_GAIN: f64 = 1e-6;

/// A share at or above this counts as reaching the reference (rounding
/// of sums of a few thousand terms stays far below 0.1 %).
const AT_REFERENCE: f64 = 0.999;

/// One estate of a suite, and the time it is evaluated at.
pub struct Case {
    pub family: String,
    pub name: String,
    pub estate: Estate,
    pub now: i64,
}

/// How much of the generated suite to run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SuiteSize {
    /// Every case of the default suite's generated part (88 cases; about
    /// 12 s on two busy cores): what `berth bench-deciders` runs.
    Default,
    /// One or two cases per family (13 generated cases, about 2 s): what
    /// the Deciders page runs unless asked for more.
    Quick,
}

impl SuiteSize {
    pub fn parse(s: &str) -> Option<SuiteSize> {
        match s {
            "default" => Some(SuiteSize::Default),
            "quick" => Some(SuiteSize::Quick),
            _ => None,
        }
    }
}

/// The generated part of the default suite, evaluated at [`gen::NOW`]
/// (their facts are aged against it). Sizes are chosen so `optimum` proves
/// most of the small cases (the reference is then exact) while the 40–60
/// service ones show the deciders where it cannot.
///
/// - the project's generator: 30 `tiny` (6–12 services), 10 `small`
///   (8–30), 4 of 60 services on 8 clusters;
/// - the second generator: every pattern at 12 services × 4 clusters (8
///   seeds) and 40 × 6 (3 seeds).
///
/// [`SuiteSize::Quick`] takes the first seed or two of each family.
pub fn generated_suite(size: SuiteSize) -> Vec<Case> {
    let n = |full: u64, quick: u64| match size {
        SuiteSize::Default => full,
        SuiteSize::Quick => quick,
    };
    let mut cases = Vec::new();
    let mut add = |family: &str, name: String, estate: Estate| {
        cases.push(Case {
            family: family.to_string(),
            name,
            estate,
            now: gen::NOW,
        })
    };
    for seed in 0..n(30, 2) {
        add(
            "gen tiny",
            format!("tiny-{seed}"),
            gen::estate(&Shape::tiny(seed)),
        );
    }
    for seed in 0..n(10, 2) {
        add(
            "gen small",
            format!("small-{seed}"),
            gen::estate(&Shape::small(seed)),
        );
    }
    for seed in 0..n(4, 1) {
        add(
            "gen 60",
            format!("gen60-{seed}"),
            gen::estate(&Shape::sized(seed, 60, 8)),
        );
    }
    for p in Pattern::ALL {
        for seed in 0..n(8, 1) {
            add(
                &format!("{} 12", p.as_str()),
                format!("{}-12-{seed}", p.as_str()),
                gen::patterned_estate(p, seed, 12, 4),
            );
        }
        for seed in 0..n(3, 1) {
            add(
                &format!("{} 40", p.as_str()),
                format!("{}-40-{seed}", p.as_str()),
                gen::patterned_estate(p, seed, 40, 6),
            );
        }
    }
    cases
}

/// The leaderboard and what it rests on.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Leaderboard {
    /// How the reference, shares and statistics are defined.
    pub method: String,
    pub cases: usize,
    /// Cases with something to gain (the shares are over these).
    pub counted: usize,
    pub nothing_to_gain: usize,
    /// Cases where `optimum` proved its result optimal.
    pub proven: usize,
    /// Proven cases where another decider's gain exceeded the optimum's.
    pub proven_beaten: usize,
    /// How the share of the bound is defined.
    pub bound: String,
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

#[derive(Clone, Debug, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[cfg_attr(feature = "schema", schemars(rename = "LeaderboardFamily"))]
pub struct Family {
    pub family: String,
    pub cases: usize,
}

/// One decider's line of the leaderboard. Shares are fractions (1 = the
/// reference); `null` when no case counted.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[cfg_attr(feature = "schema", schemars(rename = "LeaderboardRow"))]
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
#[derive(Clone, Debug, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[cfg_attr(feature = "schema", schemars(rename = "LeaderboardCase"))]
pub struct CaseRow {
    pub family: String,
    pub name: String,
    pub services: usize,
    pub clusters: usize,
    pub reference: f64,
    /// The most any placement could improve, by the proven lower bound.
    pub improvement_at_most: f64,
    pub proven: bool,
    /// Every decider's projected gain, in the order of `deciders`;
    /// `null` for an error entry.
    pub gains: Vec<Option<f64>>,
}

const METHOD: &str = "reference = the largest projected gain any decider reached on the case \
(the optimum where `optimum` proved it); share = gain / reference over the cases whose reference \
exceeds 1e-6 points; median (mean of the middle two), p5 (nearest rank), mean";

const BOUND: &str = "share of the bound = gain / (cost before − proven lower bound on any \
placement's cost), over the cases where that exceeds 1e-6 points: a floor on the share of the true \
optimum";

/// Run every decider on every case (the built-ins timed by `stopwatch`,
/// plus the replies `externals` gives for the case) and score the suite.
/// `skipped` lists what the caller left out, and why.
pub fn run(
    cases: &[Case],
    policy: &Policy,
    externals: &mut dyn FnMut(&Case) -> Vec<External>,
    stopwatch: &mut dyn FnMut(&mut dyn FnMut()) -> Option<f64>,
    skipped: Vec<String>,
) -> Leaderboard {
    let mut comparisons = Vec::with_capacity(cases.len());
    let mut bounds = Vec::with_capacity(cases.len());
    for case in cases {
        let ext = externals(case);
        comparisons.push(decider::compare_timed(
            &case.estate,
            policy,
            case.now,
            &ext,
            stopwatch,
        ));
        bounds.push(improvement_at_most(&case.estate, policy, case.now));
    }
    score(cases, &comparisons, &bounds, skipped)
}

/// The most any placement of `estate` could improve on its cost, by the
/// engine's proven lower bound: what every advice result carries as
/// `bound.improvement_at_most`.
pub fn improvement_at_most(estate: &Estate, policy: &Policy, now: i64) -> f64 {
    let ctx = crate::cost::Ctx::new(estate, policy, now);
    let feas = crate::advise::feasibility(estate);
    let before = crate::cost::State::initial(estate).totals(&ctx).cost;
    let at_least = crate::bound::cost_at_least(&ctx, &feas.candidates);
    crate::bound::Bound::new(at_least, before, before).improvement_at_most
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

/// Score comparisons already run, one per case (same deciders, same
/// order, in each), with each case's [`improvement_at_most`].
pub fn score(
    cases: &[Case],
    comparisons: &[Comparison],
    bounds: &[f64],
    skipped: Vec<String>,
) -> Leaderboard {
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
    let deciders = comparisons
        .first()
        .map(|first| first.deciders.as_slice())
        .unwrap_or_default()
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
        method: METHOD.into(),
        cases: cases.len(),
        counted: counted.len(),
        nothing_to_gain: per_case.len() - counted.len(),
        proven,
        proven_beaten,
        bound: BOUND.into(),
        bound_counted: bound_counted.len(),
        families,
        skipped,
        deciders,
        per_case,
    }
}

/// A share as a percentage with one decimal, `–` for none.
pub fn pct(x: Option<f64>) -> String {
    x.map_or("–".into(), |v| format!("{:.1} %", 100.0 * v))
}

/// Milliseconds with one decimal, `–` for none.
pub fn ms(x: Option<f64>) -> String {
    x.map_or("–".into(), |v| format!("{v:.1}"))
}

/// Counts by code, `code n, code n`, `–` for none.
pub fn codes(m: &BTreeMap<String, usize>) -> String {
    if m.is_empty() {
        return "–".into();
    }
    m.iter()
        .map(|(k, v)| format!("{k} {v}"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// The lines above the table: cases, method, bound, what was skipped.
pub fn summary(b: &Leaderboard) -> Vec<String> {
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

/// The board as aligned text (`berth bench-deciders`).
pub fn text(b: &Leaderboard) -> String {
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

/// The board as a Markdown table (`berth bench-deciders --markdown`).
pub fn markdown(b: &Leaderboard) -> String {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stats_take_the_middle_pair_and_the_nearest_rank() {
        assert_eq!(stats(&[]), None);
        assert_eq!(stats(&[3.0, 1.0, 2.0]), Some((2.0, 1.0, 2.0)));
        let (m, p5, mean) = stats(&[4.0, 1.0, 3.0, 2.0]).unwrap();
        assert_eq!((m, p5, mean), (2.5, 1.0, 2.5));
    }

    #[test]
    fn the_quick_suite_has_every_family_of_the_default_one() {
        let fam = |s: SuiteSize| {
            let mut f: Vec<String> = generated_suite(s).into_iter().map(|c| c.family).collect();
            f.dedup();
            f
        };
        assert_eq!(fam(SuiteSize::Quick), fam(SuiteSize::Default));
        assert_eq!(generated_suite(SuiteSize::Quick).len(), 13);
        assert_eq!(generated_suite(SuiteSize::Default).len(), 88);
    }

    #[test]
    fn every_decider_is_scored_and_none_passes_the_reference() {
        let cases = generated_suite(SuiteSize::Quick);
        let b = run(
            &cases,
            &Policy::default(),
            &mut |_| Vec::new(),
            &mut crate::front::no_clock,
            Vec::new(),
        );
        let names: Vec<&str> = b.deciders.iter().map(|d| d.name.as_str()).collect();
        assert_eq!(names, crate::front::BUILTIN_NAMES);
        assert_eq!(b.cases, 13);
        assert!(b.counted >= 1, "some case has something to gain");
        // What is proven holds: no decider gains more than the lower
        // bound allows, and where `optimum` proved its result, it is the
        // reference.
        let optimum = names.iter().position(|n| *n == "optimum").unwrap();
        let mut proven = 0;
        for r in &b.per_case {
            for g in r.gains.iter().flatten() {
                assert!(
                    *g <= r.improvement_at_most + 1e-6 * (1.0 + g.abs()),
                    "{}: gain {g} above the bound's {}",
                    r.name,
                    r.improvement_at_most
                );
            }
            if r.proven {
                proven += 1;
                assert_eq!(r.gains[optimum], Some(r.reference), "{}", r.name);
            }
        }
        assert!(proven >= 1, "the small cases are proven");
        assert_eq!(b.deciders[optimum].median, Some(1.0));
        assert!(text(&b).contains("optimum"));
        assert!(markdown(&b).contains("| baseline |"));
    }
}
