//! The proven reference on `berth bench-deciders`' leaderboard, through
//! the reply files it already reads: for every estate file of a suite
//! directory, the moves of the proven optimum within the move cap
//! (`berth_solver::ProvenOptimum`), written as `OUT/CASE.json`, a reply
//! `{"proposals": [...]}` named after the estate file.
//!
//! ```sh
//! cargo run --release -p berth-solver --example replies -- \
//!     --suite DIR --out REPLIES --now 2026-11-30T04:05:00Z [--policy FILE] [--limit S] [--uncapped]
//! berth bench-deciders --suite DIR --now 2026-11-30T04:05:00Z \
//!     --response proven-optimum-capped=REPLIES --markdown
//! ```
//!
//! The leaderboard then scores the proven optimum like every decider; a
//! case's reference (the largest gain any decider reached) is the proven
//! optimum wherever HiGHS proved it. What was proved is printed here, one
//! line per case (the leaderboard shows proposals, not notes). Use the
//! same `--now` and `--policy` for both commands.

use std::path::PathBuf;

use berth_engine::proposal::Decider;
use berth_engine::{Format, Policy};
use berth_solver::{ProvenOptimum, TIME_LIMIT_S};

fn main() {
    let (mut suite, mut out, mut now, mut policy_file) = (None, None, None, None);
    let mut limit = TIME_LIMIT_S;
    let mut capped = true;
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        let mut value = || args.next().unwrap_or_else(|| panic!("{a} needs a value"));
        match a.as_str() {
            "--suite" => suite = Some(PathBuf::from(value())),
            "--out" => out = Some(PathBuf::from(value())),
            "--now" => now = Some(value()),
            "--policy" => policy_file = Some(PathBuf::from(value())),
            "--limit" => limit = value().parse().expect("--limit: seconds"),
            "--uncapped" => capped = false,
            _ => panic!("unknown option {a}"),
        }
    }
    let suite = suite.expect("--suite DIR");
    let out = out.expect("--out DIR");
    let now_text = now.expect("--now: the time bench-deciders is given");
    let now = berth_engine::estate::parse_time(&now_text)
        .unwrap_or_else(|| panic!("--now {now_text:?}: expected an RFC 3339 time"));
    let policy = match &policy_file {
        Some(p) => Policy::from_json(&std::fs::read_to_string(p).expect("the policy file"))
            .unwrap_or_else(|e| panic!("{}: {e:?}", p.display())),
        None => Policy::default(),
    };
    std::fs::create_dir_all(&out).expect("the output directory");
    // The suite as bench-deciders reads it: every .json/.yaml/.yml file
    // directly in the directory, in name order, the case named by stem.
    let mut files: Vec<PathBuf> = std::fs::read_dir(&suite)
        .expect("the suite directory")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| {
            matches!(
                p.extension().and_then(|e| e.to_str()),
                Some("json" | "yaml" | "yml")
            )
        })
        .collect();
    files.sort();
    for file in files {
        let text = std::fs::read_to_string(&file).expect("an estate file");
        let format = match file.extension().and_then(|e| e.to_str()) {
            Some("json") => Format::Json,
            _ => Format::Yaml,
        };
        let estate = berth_engine::load(&text, format)
            .unwrap_or_else(|e| panic!("{}: {e:?}", file.display()));
        let request = berth_engine::request::build(&estate, &policy, now);
        let decision = ProvenOptimum {
            estate: &estate,
            policy: &policy,
            now,
            capped,
            time_limit_s: limit,
        }
        .decide_noted(&request);
        let case = file.file_stem().and_then(|s| s.to_str()).expect("a name");
        let reply = serde_json::json!({ "proposals": decision.proposals });
        std::fs::write(out.join(format!("{case}.json")), reply.to_string()).expect("written");
        println!("{case}: {}", decision.note.unwrap_or_default());
    }
}
