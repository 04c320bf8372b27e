//! `berth compare` end to end: built-ins timed, reply files scored, a bad
//! reply file an error entry rather than a failure.

use std::path::PathBuf;
use std::process::Command;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn berth(args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_berth"))
        .current_dir(root())
        .args(args)
        .output()
        .expect("berth runs");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8(out.stdout).unwrap(),
        String::from_utf8(out.stderr).unwrap(),
    )
}

#[test]
fn compare_scores_reply_files_and_reports_bad_ones() {
    let dir = std::env::temp_dir().join(format!("berth-compare-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let deep = dir.join("deep.json");
    std::fs::write(&deep, "[".repeat(100)).unwrap();
    let deep_arg = format!("deep={}", deep.display());
    let (code, stdout, stderr) = berth(&[
        "compare",
        "examples/estates/sample.json",
        "--now",
        "2026-11-30T04:05:00Z",
        "--response",
        "ops-team=examples/responses/sample-ops-team.json",
        "--response",
        &deep_arg,
        "--response",
        "missing=does/not/exist.json",
    ]);
    std::fs::remove_dir_all(&dir).ok();
    // The comparison is printed, but an unreadable reply file makes the
    // run incomplete: exit 3, so a typo in a CI script does not pass.
    assert_eq!(code, 3, "{stderr}");
    let v: serde_json::Value = serde_json::from_str(&stdout).unwrap();
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
            "ops-team",
            "deep",
            "missing"
        ]
    );
    // Built-ins are timed by the CLI; replies read from files are not.
    for builtin in &deciders[..5] {
        assert!(builtin["run_time_ms"].as_f64().unwrap() >= 0.0);
    }
    assert!(deciders[5]["run_time_ms"].is_null());
    assert_eq!(deciders[5]["proposals"], 16);
    assert_eq!(deciders[5]["refused_count"], 11);
    assert_eq!(deciders[6]["error"]["code"], "too_deep");
    assert!(deciders[6].get("proposals").is_none());
    assert_eq!(deciders[7]["error"]["code"], "unreadable");
    assert!(stderr.contains("warning: decider deep"), "{stderr}");
    assert!(stderr.contains("warning: decider missing"), "{stderr}");
}

#[test]
fn compare_refuses_bad_names_before_any_work() {
    for (arg, needle) in [
        ("baseline=x.json", "built-in"),
        ("no-equals-sign", "NAME=FILE"),
        ("=x.json", "1 to 64"),
    ] {
        let (code, _, stderr) =
            berth(&["compare", "examples/estates/sample.json", "--response", arg]);
        assert_eq!(code, 2, "{arg}: {stderr}");
        assert!(stderr.contains(needle), "{arg}: {stderr}");
    }
    let (code, _, stderr) = berth(&[
        "compare",
        "examples/estates/sample.json",
        "--response",
        "a=x.json",
        "--response",
        "a=y.json",
    ]);
    assert_eq!(code, 2);
    assert!(stderr.contains("given twice"), "{stderr}");
}
