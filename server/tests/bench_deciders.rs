//! `berth bench-deciders`, run as a user would: the built binary on a
//! small suite written to a temporary directory (a few generated estates
//! and the sample), with an external reply given per case.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use berth_engine::gen::{self, Pattern, Shape};
use serde_json::Value;

fn berth(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_berth"))
        .args(args)
        .output()
        .expect("berth runs")
}

fn temp_dir(name: &str) -> PathBuf {
    // One directory per call: tests of this file run in parallel in one
    // process, and each builds its own suite.
    static NEXT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let dir = std::env::temp_dir().join(format!("berth-bench-{}-{name}-{n}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Six small estates of both generators and the sample; replies of an
/// external decider `nobody` (no proposals) for all but one case, and one
/// that cannot be parsed.
fn suite() -> (PathBuf, PathBuf) {
    let dir = temp_dir("suite");
    let suite = dir.join("suite");
    let replies = dir.join("replies");
    std::fs::create_dir_all(&suite).unwrap();
    std::fs::create_dir_all(&replies).unwrap();
    let mut names = Vec::new();
    for seed in [3u64, 7, 11] {
        let name = format!("tiny-{seed}");
        std::fs::write(
            suite.join(format!("{name}.json")),
            gen::file(&Shape::tiny(seed)).to_string(),
        )
        .unwrap();
        names.push(name);
    }
    for (p, seed) in [
        (Pattern::Mesh, 1u64),
        (Pattern::Tight, 2),
        (Pattern::Chains, 3),
    ] {
        let name = format!("{}-{seed}", p.as_str());
        std::fs::write(
            suite.join(format!("{name}.json")),
            gen::patterned(p, seed, 10, 4).to_string(),
        )
        .unwrap();
        names.push(name);
    }
    let sample = Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples/estates/sample.json");
    std::fs::copy(&sample, suite.join("sample.json")).unwrap();
    for name in &names[1..] {
        std::fs::write(replies.join(format!("{name}.json")), r#"{"proposals": []}"#).unwrap();
    }
    std::fs::write(replies.join("sample.json"), "not json").unwrap();
    (suite, replies)
}

#[test]
fn leaderboard_shape_and_the_optimum_leads() {
    let (suite, replies) = suite();
    let reply_arg = format!("nobody={}", replies.display());
    let o = berth(&[
        "bench-deciders",
        "--suite",
        suite.to_str().unwrap(),
        "--now",
        "2026-11-30T04:05:00Z",
        "--response",
        &reply_arg,
        "--json",
    ]);
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{stderr}");
    let v: Value = serde_json::from_slice(&o.stdout).expect("JSON leaderboard");
    assert_eq!(v["cases"], 7);
    assert_eq!(v["per_case"].as_array().unwrap().len(), 7);
    assert!(v["bound"]
        .as_str()
        .unwrap()
        .starts_with("share of the bound"));
    let bound_counted = v["bound_counted"].as_u64().unwrap();
    assert!(
        bound_counted >= 4,
        "only {bound_counted} cases the bound leaves open"
    );
    let deciders = v["deciders"].as_array().unwrap();
    let names: Vec<&str> = deciders
        .iter()
        .map(|d| d["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        [
            "baseline",
            "heaviest-talker",
            "optimum",
            "optimum-capped",
            "local-search",
            "nobody"
        ]
    );
    let row = |name: &str| deciders.iter().find(|d| d["name"] == name).unwrap();
    let counted = v["counted"].as_u64().unwrap();
    assert!(counted >= 4, "only {counted} cases with something to gain");
    for d in deciders {
        for k in ["median", "p5", "mean"] {
            let x = d[k].as_f64().unwrap();
            assert!(
                x <= 1.0 + 1e-9,
                "{}: {k} {x} above the reference",
                d["name"]
            );
        }
    }
    // The bound is proven: no decider improves more than it allows, case
    // by case, so no share of it exceeds 1.
    let names_now: Vec<&str> = deciders
        .iter()
        .map(|d| d["name"].as_str().unwrap())
        .collect();
    for c in v["per_case"].as_array().unwrap() {
        let most = c["improvement_at_most"].as_f64().unwrap();
        let reference = c["reference"].as_f64().unwrap();
        assert!(
            reference <= most + 1e-6 * (1.0 + most.abs()),
            "{}: a decider gained {reference}, the bound allows {most}",
            c["name"]
        );
        for (g, name) in c["gains"].as_array().unwrap().iter().zip(&names_now) {
            if let Some(g) = g.as_f64() {
                assert!(
                    g <= most + 1e-6 * (1.0 + most.abs()),
                    "{}: {name}",
                    c["name"]
                );
            }
        }
    }
    for d in deciders {
        for k in ["bound_median", "bound_p5", "bound_mean"] {
            let b = d[k].as_f64().unwrap();
            assert!(b <= 1.0 + 1e-9, "{}: {k} {b}", d["name"]);
        }
    }
    // The reference deciders are certified: nothing they propose is refused.
    for name in ["optimum", "optimum-capped", "local-search"] {
        assert_eq!(
            row(name)["refused_by_code"],
            serde_json::json!({}),
            "{name}"
        );
        assert!(row(name)["run_time_ms_total"].as_f64().unwrap() >= 0.0);
    }
    // The optimum is never behind the baseline, case by case and overall.
    let share = |name: &str, k: &str| row(name)[k].as_f64().unwrap();
    for k in ["median", "p5", "mean"] {
        assert!(share("optimum", k) >= share("baseline", k) - 1e-9, "{k}");
    }
    let idx = |name: &str| names.iter().position(|n| *n == name).unwrap();
    for c in v["per_case"].as_array().unwrap() {
        let g = c["gains"].as_array().unwrap();
        let (opt, base) = (
            g[idx("optimum")].as_f64().unwrap(),
            g[idx("baseline")].as_f64().unwrap(),
        );
        assert!(
            opt >= base - 1e-9 * (1.0 + base.abs()),
            "{}: optimum {opt} < baseline {base}",
            c["name"]
        );
    }
    // The external decider: an error where its reply is missing or bad,
    // a share of 0 elsewhere.
    let nobody = row("nobody");
    assert_eq!(nobody["errors"]["unreadable"], 1, "{nobody}");
    assert_eq!(nobody["errors"]["not_json"], 1, "{nobody}");
    assert_eq!(nobody["median"].as_f64().unwrap(), 0.0);
    assert!(v["proven"].as_u64().unwrap() >= 4, "{}", v["proven"]);

    // The same leaderboard as text and as a Markdown table.
    let md = berth(&[
        "bench-deciders",
        "--suite",
        suite.to_str().unwrap(),
        "--now",
        "2026-11-30T04:05:00Z",
        "--markdown",
    ]);
    assert!(md.status.success());
    let md = String::from_utf8(md.stdout).unwrap();
    assert!(md.contains("| decider | median share |"), "{md}");
    assert_eq!(
        md.lines().filter(|l| l.starts_with("| ")).count(),
        1 + 5,
        "{md}"
    );
    let text = berth(&[
        "bench-deciders",
        "--suite",
        suite.to_str().unwrap(),
        "--now",
        "2026-11-30T04:05:00Z",
    ]);
    assert!(text.status.success());
    let text = String::from_utf8(text.stdout).unwrap();
    assert!(text.lines().any(|l| l.starts_with("optimum ")), "{text}");
    assert!(text.contains("7 cases"), "{text}");
}

#[test]
fn a_builtin_name_is_refused_for_a_reply() {
    let (suite, replies) = suite();
    let o = berth(&[
        "bench-deciders",
        "--suite",
        suite.to_str().unwrap(),
        "--response",
        &format!("optimum={}", replies.display()),
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("built-in"));
}
