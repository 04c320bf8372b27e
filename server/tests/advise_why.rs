//! `berth advise --why` end to end: a `why` array aligned with the moves in
//! JSON, flip sentences under each move in text, and nothing of it without
//! the flag.

use std::path::PathBuf;
use std::process::Command;

fn berth(args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_berth"))
        .current_dir(PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(".."))
        .args(args)
        .output()
        .expect("berth runs");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8(out.stdout).unwrap(),
        String::from_utf8(out.stderr).unwrap(),
    )
}

const ARGS: [&str; 4] = [
    "advise",
    "examples/estates/sample.json",
    "--now",
    "2026-11-30T04:05:00Z",
];

#[test]
fn advise_why_adds_aligned_explanations() {
    let (code, plain, stderr) = berth(&ARGS);
    assert_eq!(code, 0, "{stderr}");
    let plain: serde_json::Value = serde_json::from_str(&plain).unwrap();
    assert!(plain.get("why").is_none());

    let (code, out, stderr) = berth(&[&ARGS[..], &["--why"]].concat());
    assert_eq!(code, 0, "{stderr}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    // The advice itself is unchanged; `why` comes after it.
    let mut without = v.clone();
    without.as_object_mut().unwrap().remove("why");
    assert_eq!(without, plain);
    let moves = v["moves"].as_array().unwrap();
    let why = v["why"].as_array().unwrap();
    assert!(!moves.is_empty());
    assert_eq!(moves.len(), why.len());
    for (m, w) in moves.iter().zip(why) {
        assert_eq!(m["service"], w["service"]);
        assert_eq!(m["gain"], w["gain"]);
        assert_eq!(m["facts"], w["facts"]);
        let flips = w["flips"].as_array().unwrap();
        if m.get("group").is_some() {
            // A compound step's member: the group's Why carries its flips
            // (the member's own flips only where its move alone is also its
            // best at its turn).
            let g = &w["group"];
            assert_eq!(g["summary"], m["group"]["summary"]);
            assert!(!g["flips"].as_array().unwrap().is_empty());
            continue;
        }
        assert_eq!(flips.len(), m["facts"].as_array().unwrap().len());
        for f in flips {
            assert!(!f["sentences"].as_array().unwrap().is_empty());
        }
    }
    let threshold = why
        .iter()
        .flat_map(|w| w["flips"].as_array().unwrap())
        .find_map(|f| f["above"].as_object().or(f["below"].as_object()))
        .expect("some flip condition");
    assert!(threshold["value"].as_f64().is_some());
    assert!(threshold["sentence"].as_str().unwrap().starts_with("If "));

    // Estimated RTTs (move 3 rests on the unknown default between fra and
    // nw-dc1) are variables too: marked, with what a measurement sets.
    let estimated = why
        .iter()
        .flat_map(|w| w["flips"].as_array().unwrap())
        .find(|f| f["estimated"] == true && f["derivation"] == "unknown")
        .expect("a flip of an unknown RTT");
    assert_eq!(estimated["applies_to"], "sites fra↔nw-dc1");
    assert_eq!(estimated["status"], "exact");
    assert!(estimated["below"]["value"].as_f64().is_some());
    let nominal = why
        .iter()
        .flat_map(|w| w["flips"].as_array().unwrap())
        .find(|f| f["derivation"] == "same_cluster")
        .expect("a same-cluster row");
    assert_eq!(nominal["status"], "not_a_fact");
    assert!(nominal.get("applies_to").is_none());

    let (code, text, stderr) = berth(&[&ARGS[..], &["--why", "--format", "text"]].concat());
    assert_eq!(code, 0, "{stderr}");
    assert!(text.contains("     If "), "{text}");
    assert!(text.contains("No value of "), "{text}");
    assert!(
        text.contains(
            "If rtt c-fra-1↔c-nw-1, rtt c-fra-2↔c-nw-1 (sites fra↔nw-dc1: unknown, 80 ms assumed) \
             were measured below "
        ),
        "{text}"
    );
    let (_, plain_text, _) = berth(&[&ARGS[..], &["--format", "text"]].concat());
    assert!(!plain_text.contains("     If "));
}
