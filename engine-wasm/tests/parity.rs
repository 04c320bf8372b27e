//! Native/WebAssembly parity: the engine compiled to wasm32 and run in
//! Node must write exactly the bytes the native engine writes.
//!
//! The test builds `berth-engine-wasm` for `wasm32-unknown-unknown` (its
//! own target directory, `target/wasm-parity`, so it does not wait on the
//! lock of the `cargo test` that runs it), generates the Node bindings with
//! `wasm-bindgen --target nodejs`, runs `tests/parity.cjs` for each case
//! and compares its stdout with `berth_parity` called natively.
//!
//! Covered: advice (`advise_json`), explained advice (`advise_why_json`),
//! what-if projections (`whatif_json`), placements (`place_json`), decider
//! comparisons (`compare_json`, the reference deciders included, on both
//! generators) and the decider request (`preview_json`), on
//! the sample estate and on generated ones, and their errors.
//!
//! Needs the `wasm32-unknown-unknown` target, the `wasm-bindgen` CLI of the
//! version in Cargo.lock and Node.js: `make tools` installs all three
//! (scripts/install-tools.sh).

use std::path::{Path, PathBuf};
use std::process::Command;

use berth_engine_wasm::berth_parity;

/// 2026-11-30T04:05:00Z, the time the sample estate is advised at.
const NOW: i64 = 1_796_011_500;
const NON_DEFAULT_POLICY: &str = r#"{"cross_site_weight": 3, "min_gain_points": 1}"#;

#[path = "common/wasm_pkg.rs"]
mod wasm_pkg;
use wasm_pkg::{out_dir, run, workspace_root, INSTALL_HINT};

/// The module and its Node bindings, built once per test binary.
fn wasm_pkg() -> &'static Path {
    wasm_pkg::pkg("pkg")
}

/// One result of the WebAssembly engine, via tests/parity.cjs.
fn run_wasm(args: &[&str]) -> String {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/parity.cjs");
    let out = run(
        Command::new("node").arg(script).arg(wasm_pkg()).args(args),
        "node tests/parity.cjs",
        &format!("Install Node.js (18 or later): {INSTALL_HINT}."),
    )
    .unwrap_or_else(|e| panic!("{e}"));
    String::from_utf8(out.stdout).expect("node writes UTF-8")
}

/// Byte-for-byte comparison; on a mismatch, names the first differing
/// line and byte and shows both sides there, and keeps both outputs.
fn assert_same(case: &str, native: &str, wasm: &str) {
    if native == wasm {
        return;
    }
    let (n, w) = (native.as_bytes(), wasm.as_bytes());
    let at = n
        .iter()
        .zip(w)
        .position(|(a, b)| a != b)
        .unwrap_or(n.len().min(w.len()));
    let line_start = n[..at]
        .iter()
        .rposition(|&b| b == b'\n')
        .map_or(0, |p| p + 1);
    let line_no = n[..at].iter().filter(|&&b| b == b'\n').count() + 1;
    let column = at - line_start + 1;
    let keep = out_dir().join("mismatch");
    let _ = std::fs::create_dir_all(&keep);
    let _ = std::fs::write(keep.join(format!("{case}.native")), native);
    let _ = std::fs::write(keep.join(format!("{case}.wasm")), wasm);
    panic!(
        "{case}: WebAssembly output differs from native at byte {at}, line {line_no}, \
         column {column} (native {} bytes, wasm {} bytes)\n  native: {}\n  wasm:   {}\n\
         both outputs kept in {}",
        n.len(),
        w.len(),
        snippet(n, at),
        snippet(w, at),
        keep.display(),
    );
}

/// The text around byte `at` (which both sides have, up to their ends):
/// from the start of its line (at most 120 bytes back) to the end of the
/// line (at most 200 bytes on).
fn snippet(s: &[u8], at: usize) -> String {
    let from = s[..at]
        .iter()
        .rposition(|&b| b == b'\n')
        .map_or(0, |p| p + 1)
        .max(at.saturating_sub(120));
    let to = s[at..]
        .iter()
        .position(|&b| b == b'\n')
        .map_or(s.len(), |p| at + p)
        .min(at + 200);
    format!("{:?}", String::from_utf8_lossy(&s[from..to]))
}

fn sample_path() -> PathBuf {
    workspace_root().join("examples/estates/sample.json")
}

fn check_sample(case: &str, policy: &str) {
    let text = std::fs::read_to_string(sample_path()).expect("read the sample estate");
    let native = berth_parity::advise_json(&text, policy, NOW);
    assert!(
        native.contains("\"moves\""),
        "{case}: expected advice, got {native}"
    );
    let wasm = run_wasm(&[
        "advise",
        sample_path().to_str().expect("UTF-8 path"),
        policy,
        &NOW.to_string(),
    ]);
    assert_same(case, &native, &wasm);
}

#[test]
fn sample_estate_default_policy() {
    check_sample("sample-default", "");
}

#[test]
fn sample_estate_non_default_policy() {
    check_sample("sample-policy", NON_DEFAULT_POLICY);
}

#[test]
fn generated_small_estates_digests() {
    let native = berth_parity::generated_digests(1, 200, NOW);
    assert_eq!(native.lines().count(), 200);
    let wasm = run_wasm(&["digests", "1", "200", &NOW.to_string()]);
    if native != wasm {
        // Line i is seed 1 + i: compare the first differing estate's
        // advice itself, which names the field that differs.
        let bad: Vec<u64> = native
            .lines()
            .zip(wasm.lines())
            .enumerate()
            .filter(|(_, (a, b))| a != b)
            .map(|(i, _)| 1 + i as u64)
            .collect();
        eprintln!("digests differ for generated seeds {bad:?}");
        if let Some(&seed) = bad.first() {
            let native = berth_parity::small_advice_json(seed, NOW);
            let wasm = run_wasm(&["advise-small", &seed.to_string(), &NOW.to_string()]);
            assert_same(&format!("small-seed-{seed}"), &native, &wasm);
        }
    }
    assert_same("digests", &native, &wasm);
}

/// A mid-sized generated estate (hundreds of services, the great-circle
/// and unknown rungs, every fact class), advised under both policies.
#[test]
fn generated_medium_estate() {
    let text = berth_parity::generated_file(7, 600, 15);
    for (case, policy) in [
        ("medium-default", ""),
        ("medium-policy", NON_DEFAULT_POLICY),
    ] {
        let native = berth_parity::advise_json(&text, policy, NOW);
        let wasm = run_wasm(&[
            "advise-generated",
            "7",
            "600",
            "15",
            policy,
            &NOW.to_string(),
        ]);
        assert_same(case, &native, &wasm);
    }
}

/// Errors are output too: their messages and line numbers must agree.
#[test]
fn errors_agree() {
    let dir = out_dir().join("cases");
    std::fs::create_dir_all(&dir).expect("create case dir");
    let bad = dir.join("bad-estate.json");
    let text = "{\n  \"schema\": 1,\n  \"sites\": [{\"id\": \"fra\", \"lat\": 95}],\n  \"clusters\": 3\n}\n";
    std::fs::write(&bad, text).expect("write case");
    let path = bad.to_str().expect("UTF-8 path");
    for (case, policy) in [
        ("bad-estate", ""),
        (
            "bad-policy",
            r#"{"cross_site_wieght": 3, "min_gain_points": -1}"#,
        ),
    ] {
        let native = berth_parity::advise_json(text, policy, NOW);
        assert!(
            native.starts_with('['),
            "{case}: expected errors, got {native}"
        );
        let wasm = run_wasm(&["advise", path, policy, &NOW.to_string()]);
        assert_same(case, &native, &wasm);
    }
}

// ---------------------------------------------------------------------------
// SPEC §7–§10: what-if, place, compare, preview.

const POLICIES: [(&str, &str); 2] = [("default", ""), ("policy", NON_DEFAULT_POLICY)];

fn path_str(p: &Path) -> &str {
    p.to_str().expect("UTF-8 path")
}

/// The `.json` files of an examples directory, sorted by name.
fn example_files(dir: &str) -> Vec<PathBuf> {
    let dir = workspace_root().join("examples").join(dir);
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("read {}: {e}", dir.display()))
        .map(|e| e.expect("directory entry").path())
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .collect();
    files.sort();
    assert!(!files.is_empty(), "no examples in {}", dir.display());
    files
}

fn stem(p: &Path) -> &str {
    p.file_stem().and_then(|s| s.to_str()).expect("UTF-8 name")
}

fn sample_text() -> String {
    std::fs::read_to_string(sample_path()).expect("read the sample estate")
}

/// Writes a test input under target/wasm-parity/cases; returns its path.
fn case_file(name: &str, text: &str) -> PathBuf {
    let dir = out_dir().join("cases");
    std::fs::create_dir_all(&dir).expect("create case dir");
    let path = dir.join(name);
    std::fs::write(&path, text).expect("write case");
    path
}

#[test]
fn sample_whatif_every_scenario() {
    let text = sample_text();
    for file in example_files("scenarios") {
        let scenario = std::fs::read_to_string(&file).expect("read scenario");
        for (pname, policy) in POLICIES {
            let case = format!("whatif-{}-{pname}", stem(&file));
            let native = berth_parity::whatif_json(&text, &scenario, policy, NOW);
            assert!(
                native.contains("\"sensitivity\""),
                "{case}: expected a projection, got {native}"
            );
            let wasm = run_wasm(&[
                "whatif",
                path_str(&sample_path()),
                path_str(&file),
                policy,
                &NOW.to_string(),
            ]);
            assert_same(&case, &native, &wasm);
        }
    }
}

#[test]
fn sample_place_every_service() {
    let text = sample_text();
    let estate = berth_engine::load(&text, berth_engine::Format::Json).expect("sample loads");
    let ids: Vec<&str> = estate.services.iter().map(|s| s.id.as_str()).collect();
    let sample = sample_path();
    for (pname, policy) in POLICIES {
        let case = format!("place-{pname}");
        let native: Vec<String> = ids
            .iter()
            .map(|id| berth_parity::place_json(&text, id, policy, NOW))
            .collect();
        assert!(
            native.iter().all(|p| p.contains("\"candidates\"")),
            "{case}: expected placements, got {native:?}"
        );
        let native = native.join("\n");
        let now = NOW.to_string();
        let mut args = vec!["place", path_str(&sample), policy, &now];
        args.extend(&ids);
        let wasm = run_wasm(&args);
        assert_same(&case, &native, &wasm);
    }
}

/// Change plans of the sample in every format, of a selection of
/// services and of every example scenario, and the errors a manifest
/// gives when the estate does not name the workloads.
#[test]
fn sample_plan_every_format_and_selection() {
    let text = sample_text();
    let sample = sample_path();
    let now = NOW.to_string();
    let mut cases: Vec<(String, &str, String, String)> = Vec::new();
    for format in ["json", "markdown", "karmada", "ocm"] {
        cases.push((
            format!("plan-{format}"),
            format,
            String::new(),
            String::new(),
        ));
    }
    cases.push((
        "plan-services".into(),
        "markdown",
        "cart,session-store".into(),
        String::new(),
    ));
    for file in example_files("scenarios") {
        cases.push((
            format!("plan-{}", stem(&file)),
            "json",
            String::new(),
            path_str(&file).to_string(),
        ));
    }
    for (case, format, services, scenario_file) in &cases {
        let scenario = if scenario_file.is_empty() {
            String::new()
        } else {
            std::fs::read_to_string(scenario_file).expect("read scenario")
        };
        for (pname, policy) in POLICIES {
            let native = berth_parity::plan_json(&text, policy, NOW, format, services, &scenario);
            assert!(!native.is_empty(), "{case}-{pname}");
            let wasm = run_wasm(&[
                "plan",
                path_str(&sample),
                policy,
                &now,
                format,
                services,
                scenario_file,
            ]);
            assert_same(&format!("{case}-{pname}"), &native, &wasm);
        }
    }
}

#[test]
fn sample_compare_every_response() {
    let text = sample_text();
    let mut replies = serde_json::Map::new();
    for file in example_files("responses") {
        let reply = std::fs::read_to_string(&file).expect("read response");
        replies.insert(stem(&file).to_string(), reply.into());
    }
    let names: Vec<String> = replies.keys().cloned().collect();
    // Replies the engine refuses, as a whole and item by item.
    replies.insert(
        "cut-short".into(),
        r#"{"proposals": [{"serviceId": "cart""#.into(),
    );
    replies.insert(
        "bare-list".into(),
        r#"[{"serviceId": "cart", "to": "c-fra-2"}, 5, {"serviceId": "", "to": "x"}]"#.into(),
    );
    let responses = serde_json::to_string_pretty(&replies).expect("serialise replies");
    let responses_file = case_file("responses.json", &responses);
    for (pname, policy) in POLICIES {
        let case = format!("compare-{pname}");
        let native = berth_parity::compare_json(&text, &responses, policy, NOW);
        for name in names.iter().chain([&"cut-short".to_string()]) {
            assert!(
                native.contains(&format!("\"name\":\"{name}\"")),
                "{case}: expected decider {name}, got {native}"
            );
        }
        let wasm = run_wasm(&[
            "compare",
            path_str(&sample_path()),
            path_str(&responses_file),
            policy,
            &NOW.to_string(),
        ]);
        assert_same(&case, &native, &wasm);
    }
    // No external replies: the built-ins alone.
    let native = berth_parity::compare_json(&text, "", "", NOW);
    let wasm = run_wasm(&[
        "compare",
        path_str(&sample_path()),
        "",
        "",
        &NOW.to_string(),
    ]);
    assert_same("compare-builtins", &native, &wasm);
}

#[test]
fn sample_preview() {
    let text = sample_text();
    for (pname, policy) in POLICIES {
        let case = format!("preview-{pname}");
        let native = berth_parity::preview_json(&text, policy, NOW);
        assert!(
            native.contains("\"flows\""),
            "{case}: expected a request, got {native}"
        );
        let wasm = run_wasm(&[
            "preview",
            path_str(&sample_path()),
            policy,
            &NOW.to_string(),
        ]);
        assert_same(&case, &native, &wasm);
    }
}

/// Generated small estates: the preview, three placements and a generated
/// scenario (a move, the evacuation of the fullest cluster, two more
/// moves) of each, compared by digest; on a mismatch, the first differing
/// result itself is compared, which names the field.
#[test]
fn generated_small_estates_results() {
    const SEEDS: u32 = 60;
    for (first, (pname, policy)) in [(1u64, POLICIES[0]), (1001, POLICIES[1])] {
        let native = berth_parity::generated_results_digests(first, SEEDS, policy, NOW);
        assert_eq!(native.lines().count(), SEEDS as usize);
        let wasm = run_wasm(&[
            "gen-digests",
            &first.to_string(),
            &SEEDS.to_string(),
            policy,
            &NOW.to_string(),
        ]);
        assert_same_digest_lines(
            &format!("generated-results-{pname}"),
            policy,
            &native,
            &wasm,
        );
    }
}

/// Compares lines `seed=N what=<sha256> ...` (`generated_results_digests`,
/// `generated_why_digests`); on a mismatch, compares the first differing
/// result itself, which names the field.
fn assert_same_digest_lines(case: &str, policy: &str, native: &str, wasm: &str) {
    if native != wasm {
        let mut bad = Vec::new();
        for (n, w) in native.lines().zip(wasm.lines()) {
            for (nf, wf) in n.split(' ').zip(w.split(' ')).skip(1) {
                if nf != wf {
                    let seed = n.split(' ').next().unwrap_or_default().to_string();
                    bad.push((seed, nf.split('=').next().unwrap_or_default().to_string()));
                }
            }
        }
        eprintln!("{case}: results differ for generated {bad:?}");
        if let Some((seed, what)) = bad.first() {
            let seed = seed.trim_start_matches("seed=");
            let native =
                berth_parity::generated_result(seed.parse().expect("seed"), what, policy, NOW);
            let wasm = run_wasm(&["gen-result", seed, what, policy, &NOW.to_string()]);
            assert_same(&format!("{case}-seed-{seed}-{what}"), &native, &wasm);
        }
    }
    assert_same(case, native, wasm);
}

// ---------------------------------------------------------------------------
// SPEC §7: advice with every move explained (`berth advise --why`).

#[test]
fn sample_advise_why() {
    let text = sample_text();
    for (pname, policy) in POLICIES {
        let case = format!("why-{pname}");
        let native = berth_parity::advise_why_json(&text, policy, NOW);
        let why: serde_json::Value = serde_json::from_str(&native)
            .unwrap_or_else(|e| panic!("{case}: not JSON ({e}): {native}"));
        let moves = why["moves"].as_array().map_or(0, Vec::len);
        assert!(
            moves > 0 && why["why"].as_array().map(Vec::len) == Some(moves),
            "{case}: expected advice with one explanation per move, got {native}"
        );
        assert!(
            !native.contains("\"note\""),
            "{case}: a move went unexplained: {native}"
        );
        let wasm = run_wasm(&[
            "advise-why",
            path_str(&sample_path()),
            policy,
            &NOW.to_string(),
        ]);
        assert_same(&case, &native, &wasm);
    }
}

/// Generated small estates, explained under both policies and compared by
/// digest; on a mismatch, the first differing explained advice itself.
#[test]
fn generated_small_estates_why() {
    const SEEDS: u32 = 40;
    let mut explained = 0;
    for (first, (pname, policy)) in [(1u64, POLICIES[0]), (1001, POLICIES[1])] {
        let native = berth_parity::generated_why_digests(first, SEEDS, policy, NOW);
        assert_eq!(native.lines().count(), SEEDS as usize);
        // The digests must cover explanations, not only empty advice.
        for seed in first..first + SEEDS as u64 {
            let out = berth_parity::generated_result(seed, "why", policy, NOW);
            let v: serde_json::Value = serde_json::from_str(&out).expect("explained advice");
            explained += v["why"].as_array().expect("a why array").len();
            assert!(
                !out.contains("\"note\""),
                "why-{pname}-seed-{seed}: a move went unexplained: {out}"
            );
        }
        let wasm = run_wasm(&[
            "why-digests",
            &first.to_string(),
            &SEEDS.to_string(),
            policy,
            &NOW.to_string(),
        ]);
        assert_same_digest_lines(&format!("generated-why-{pname}"), policy, &native, &wasm);
    }
    assert!(explained > 0, "no generated estate had a move to explain");
}

/// The reference deciders (`optimum`, `optimum-capped`, `local-search`)
/// with the other built-ins, on generated estates of both generators under
/// both policies, compared by digest: the branch-and-bound and the seeded
/// annealing give the same bytes in WebAssembly.
#[test]
fn generated_compare_reference_deciders() {
    const SEEDS: u32 = 8;
    for (first, (pname, policy)) in [(1u64, POLICIES[0]), (1001, POLICIES[1])] {
        let native = berth_parity::generated_compare_digests(first, SEEDS, policy, NOW);
        assert_eq!(native.lines().count(), SEEDS as usize);
        let mut moved = 0;
        for seed in first..first + SEEDS as u64 {
            for what in ["compare", "compare-patterned"] {
                let out = berth_parity::generated_result(seed, what, policy, NOW);
                let v: serde_json::Value = serde_json::from_str(&out).expect("a comparison");
                let deciders = v["deciders"].as_array().expect("deciders");
                for name in ["optimum", "optimum-capped", "local-search"] {
                    let d = deciders
                        .iter()
                        .find(|d| d["name"] == name)
                        .unwrap_or_else(|| panic!("{what} seed {seed}: no {name}"));
                    moved += d["accepted_count"].as_u64().unwrap_or(0);
                }
            }
        }
        // The digests must cover reference deciders that moved something.
        assert!(moved > 0, "no reference decider moved anything ({pname})");
        let wasm = run_wasm(&[
            "compare-digests",
            &first.to_string(),
            &SEEDS.to_string(),
            policy,
            &NOW.to_string(),
        ]);
        assert_same_digest_lines(
            &format!("generated-compare-{pname}"),
            policy,
            &native,
            &wasm,
        );
    }
}

/// Refusals of the new entry points: every input's errors at once, each
/// tagged with its input, with the same messages and lines.
#[test]
fn entry_point_errors_agree() {
    let sample = sample_path();
    let bad_estate_text =
        "{\n  \"schema\": 1,\n  \"sites\": [{\"id\": \"fra\", \"lat\": 95}],\n  \"clusters\": 3\n}\n";
    let bad_estate = case_file("bad-estate-2.json", bad_estate_text);
    let bad_policy = r#"{"cross_site_wieght": 3}"#;
    let not_json = case_file(
        "scenario-not-json.json",
        "{\n  \"schema\": 1,\n  \"steps\": [\n",
    );
    let bad_shape = case_file(
        "scenario-bad-shape.json",
        "{\n  \"schema\": 2,\n  \"steps\": [\n    {},\n    {\"move\": {\"service\": 3}}\n  ],\n  \"colour\": \"red\"\n}\n",
    );
    let unknown_ids = case_file(
        "scenario-unknown-ids.json",
        "{\n  \"schema\": 1,\n  \"name\": \"typos\",\n  \"steps\": [\n    {\"evacuate\": \"c-par-9\"},\n    {\"move\": {\"service\": \"wbe\", \"to\": \"c-fra-2\"}}\n  ]\n}\n",
    );
    let responses_not_object = case_file("responses-list.json", "[\"baseline\"]");
    let responses_not_json =
        case_file("responses-not-json.json", "{\n  \"mine\": \"{}\",\n  \"x\"");
    let responses_bad_names = case_file(
        "responses-bad-names.json",
        "{\n  \"baseline\": \"[]\",\n  \"mine\": \"[]\",\n  \"mine\": \"[]\",\n  \"my reply\": \"[]\",\n  \"a/b~c\": {\"proposals\": []},\n  \"\": \"[]\"\n}\n",
    );
    let now = NOW.to_string();
    let read = |p: &Path| std::fs::read_to_string(p).expect("read case");
    let cases: Vec<(&str, String, Vec<&str>)> = vec![
        (
            "whatif-all-inputs-bad",
            berth_parity::whatif_json(bad_estate_text, &read(&bad_shape), bad_policy, NOW),
            vec![
                "whatif",
                path_str(&bad_estate),
                path_str(&bad_shape),
                bad_policy,
                &now,
            ],
        ),
        (
            "whatif-not-json",
            berth_parity::whatif_json(&sample_text(), &read(&not_json), "", NOW),
            vec!["whatif", path_str(&sample), path_str(&not_json), "", &now],
        ),
        (
            "whatif-unknown-ids",
            berth_parity::whatif_json(&sample_text(), &read(&unknown_ids), "", NOW),
            vec![
                "whatif",
                path_str(&sample),
                path_str(&unknown_ids),
                "",
                &now,
            ],
        ),
        (
            "advise-why-bad-estate-policy",
            berth_parity::advise_why_json(bad_estate_text, bad_policy, NOW),
            vec!["advise-why", path_str(&bad_estate), bad_policy, &now],
        ),
        (
            "place-unknown-service",
            berth_parity::place_json(&sample_text(), "Cart", "", NOW),
            vec!["place", path_str(&sample), "", &now, "Cart"],
        ),
        (
            "place-bad-estate-policy",
            berth_parity::place_json(bad_estate_text, "cart", bad_policy, NOW),
            vec!["place", path_str(&bad_estate), bad_policy, &now, "cart"],
        ),
        (
            "preview-bad-estate",
            berth_parity::preview_json(bad_estate_text, "", NOW),
            vec!["preview", path_str(&bad_estate), "", &now],
        ),
        (
            "compare-responses-not-object",
            berth_parity::compare_json(&sample_text(), &read(&responses_not_object), "", NOW),
            vec![
                "compare",
                path_str(&sample),
                path_str(&responses_not_object),
                "",
                &now,
            ],
        ),
        (
            "compare-responses-not-json",
            berth_parity::compare_json(bad_estate_text, &read(&responses_not_json), "", NOW),
            vec![
                "compare",
                path_str(&bad_estate),
                path_str(&responses_not_json),
                "",
                &now,
            ],
        ),
        (
            "compare-responses-bad-names",
            berth_parity::compare_json(&sample_text(), &read(&responses_bad_names), "", NOW),
            vec![
                "compare",
                path_str(&sample),
                path_str(&responses_bad_names),
                "",
                &now,
            ],
        ),
    ];
    for (case, native, args) in cases {
        assert!(
            native.starts_with('[') && native.contains("\"input\""),
            "{case}: expected tagged errors, got {native}"
        );
        let wasm = run_wasm(&args);
        assert_same(case, &native, &wasm);
    }
}

/// The 200 generated estates of `generated_small_estates_digests` take
/// every kind of compound step, including gathered groups and groups
/// weighed against a single move (issue 18), so the byte parity above
/// covers them.
#[test]
fn parity_estates_take_every_kind_of_compound_step() {
    let mut counts = [0usize; 5];
    for seed in 1..=200 {
        let json = berth_parity::small_advice_json(seed, NOW);
        for (i, needle) in [
            "\"kind\":\"together\"",
            "\"kind\":\"gathered\"",
            "\"kind\":\"make_room\"",
            "Taken over the best single move",
            "\"kind\":\"planned\"",
        ]
        .iter()
        .enumerate()
        {
            if json.contains(needle) {
                counts[i] += 1;
            }
        }
    }
    eprintln!("estates with together, gathered, make_room, weighed, planned groups: {counts:?}");
    // Planned groups: since issue 32 (each moved service pays the bar,
    // guessed steps are not made) none of these 200 estates takes one
    // (measured [31, 23, 13, 29, 0]); their parity is not covered here
    // until the corpus holds an estate that does (left in the stop's note).
    assert!(counts[..4].iter().all(|&n| n > 0), "{counts:?}");
}
