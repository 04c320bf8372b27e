//! The `berth` command line, run as a user would: the built binary on the
//! sample estate and on broken inputs written to a temporary directory.

use std::collections::BTreeSet;
use std::path::PathBuf;
use std::process::{Command, Output};

use berth_engine::{advise_json, load, text, Format, Policy};
use serde_json::Value;

const NOW: &str = "2026-11-30T04:05:00Z";

fn sample() -> String {
    concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../examples/estates/sample.json"
    )
    .to_string()
}

fn berth(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_berth"))
        .args(args)
        .output()
        .expect("berth runs")
}

fn stdout(o: &Output) -> String {
    String::from_utf8(o.stdout.clone()).unwrap()
}

fn stderr(o: &Output) -> String {
    String::from_utf8(o.stderr.clone()).unwrap()
}

/// A fresh directory under the system temp dir, per test.
fn temp_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("berth-cli-{}-{name}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn write(dir: &std::path::Path, name: &str, text: &str) -> String {
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    path.to_str().unwrap().to_string()
}

#[test]
fn validate_prints_one_line_and_succeeds() {
    let o = berth(&["validate", &sample()]);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    assert_eq!(out.lines().count(), 1, "{out}");
    assert!(out.ends_with('\n'));
    assert!(
        out.contains(r#"valid estate "Acme Retail (sample estate)""#),
        "{out}"
    );
    assert!(
        out.contains("8 sites, 15 clusters, 17 links, 6 paths, 74 services, 103 flows"),
        "{out}"
    );
    assert!(stderr(&o).is_empty());
}

#[test]
fn advise_json_has_totals_moves_immovable_and_cant_tell() {
    let o = berth(&["advise", &sample(), "--now", NOW]);
    assert!(o.status.success(), "{}", stderr(&o));
    let v: Value = serde_json::from_str(&stdout(&o)).expect("advice is JSON");
    for key in ["totals_before", "totals_after"] {
        for field in [
            "cost",
            "round_trip",
            "cross_site",
            "headroom",
            "cross_site_mb_s",
        ] {
            assert!(v[key][field].is_f64(), "{key}.{field}: {}", v[key]);
        }
    }
    assert!(v["totals_after"]["cost"].as_f64() < v["totals_before"]["cost"].as_f64());
    assert_eq!(v["now"], NOW);
    assert!(v["estate_version"].is_string() && v["policy_digest"].is_string());
    let moves = v["moves"].as_array().unwrap();
    assert!(!moves.is_empty());
    for m in moves {
        for key in ["service", "from", "to", "confidence"] {
            assert!(m[key].is_string(), "{key} in {m}");
        }
        assert!(m["gain"].is_f64(), "{m}");
        let t = &m["terms"];
        let sum: f64 = ["round_trip", "cross_site", "headroom", "copy"]
            .iter()
            .map(|k| t[k].as_f64().unwrap())
            .sum();
        assert!((sum - m["gain"].as_f64().unwrap()).abs() < 1e-9, "{m}");
        let facts = m["facts"].as_array().unwrap();
        assert!(!facts.is_empty());
        for f in facts {
            for key in ["fact", "class", "stored_class", "source"] {
                assert!(f[key].is_string(), "{key} in {f}");
            }
            assert!(f["age_s"].is_i64(), "{f}");
        }
    }
    assert_eq!(moves[0]["service"], "analytics-rollup");
    assert_eq!(moves[0]["from"], "c-iad-1");
    assert_eq!(moves[0]["to"], "c-dub-1");
    // The weak-evidence move says so in words.
    let nw = moves
        .iter()
        .find(|m| m["service"] == "nw-erp-bridge")
        .unwrap();
    assert_eq!(nw["confidence"], "guessed");
    assert_eq!(
        nw["evidence"],
        "Not enough evidence to recommend — 8 of 12 inputs are guesses."
    );
    let immovable = v["immovable"].as_array().unwrap();
    assert!(immovable
        .iter()
        .any(|i| i["service"] == "payments" && i["reasons"][0]["code"] == "pinned"));
    assert!(v["cant_tell"].is_array());
    assert_eq!(v["unknown_capacity"][0]["cluster"], "c-nw-1");

    // Exactly what the engine produces for the same text, policy and time.
    let text = std::fs::read_to_string(sample()).unwrap();
    let now = berth_engine::estate::parse_time(NOW).unwrap();
    let engine = advise_json(&text, &Policy::default(), now).unwrap();
    assert_eq!(stdout(&o), engine + "\n");
}

#[test]
fn advise_text_format_is_for_people() {
    let o = berth(&["advise", &sample(), "--now", NOW, "--format", "text"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    assert!(out.contains("Moves that clear the bars, in order"), "{out}");
    assert!(
        out.contains("  1. analytics-rollup c-iad-1→c-dub-1 +406.4"),
        "{out}"
    );
    assert!(out.contains("cart c-par-1→c-fra-2 +165.5 [rtt +136.7, xsite +28.8] inferred"));
    assert!(out.contains("Cannot move:"));
    let e = load(&std::fs::read_to_string(sample()).unwrap(), Format::Json).unwrap();
    let now = berth_engine::estate::parse_time(NOW).unwrap();
    let advice = berth_engine::advise(&e, &Policy::default(), now);
    let money = berth_engine::money::of_advice(&e, &Policy::default(), &advice);
    assert_eq!(out, text::advice_report(&advice, &[], Some(&money)));
    // The traffic as money where its MB/s is shown: before, after, the
    // saving and each step (docs/advice.md §1a).
    let before = berth_engine::money::dollars_month(money.before.usd_month);
    assert!(out.contains(&format!("MB/s (transfer {before})")), "{out}");
    assert!(
        out.contains("Money: the steps cut cross-site traffic by"),
        "{out}"
    );
    assert!(out.contains("a reading, not part of the cost"), "{out}");
    assert!(out.contains(", saves $"), "{out}");
    assert!(money.saving().usd_month > 0.0);
}

#[test]
fn preview_is_the_schema_1_decider_request() {
    let o = berth(&["preview", &sample(), "--now", NOW]);
    assert!(o.status.success(), "{}", stderr(&o));
    let v: Value = serde_json::from_str(&stdout(&o)).expect("request is JSON");
    assert_eq!(v["schema"], 1);
    assert_eq!(v["now"], NOW);
    let clusters = v["clusters"].as_array().unwrap();
    assert_eq!(clusters.len(), 15);
    for c in clusters {
        for key in ["id", "site", "tier", "trust_zone", "health"] {
            assert!(c[key].is_string(), "{key} in {c}");
        }
        assert!(c["cpu_free"]["class"].is_string(), "{c}");
    }
    let c_nw = clusters.iter().find(|c| c["id"] == "c-nw-1").unwrap();
    assert!(c_nw["cpu_free"]["value"].is_null(), "unknown stays unknown");

    // Services: legal candidates only (constraints and certified fit).
    let services = v["services"].as_array().unwrap();
    assert_eq!(services.len(), 74);
    let svc = |id: &str| services.iter().find(|s| s["id"] == id).unwrap();
    let names = |s: &Value, key: &str| -> BTreeSet<String> {
        s[key]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| c.as_str().unwrap().to_string())
            .collect()
    };
    let cart = svc("cart");
    assert_eq!(cart["mobility"], "movable");
    let cands = names(cart, "candidates");
    assert!(cands.contains("c-fra-2"), "{cands:?}");
    assert!(!cands.contains("c-par-2"), "draining: {cands:?}");
    assert!(!cands.contains("c-fra-stg"), "tier: {cands:?}");
    assert!(!cands.contains("c-fra-pci"), "trust zone: {cands:?}");
    // 6 cores needed, c-fra-1 has 5.5 measured (at most 5.775): no room.
    assert!(!cands.contains("c-fra-1"), "no room: {cands:?}");
    assert!(!cands.contains("c-par-1"), "its own cluster: {cands:?}");
    assert!(!cands.contains("c-nw-1"), "unknown capacity: {cands:?}");
    assert!(names(cart, "cant_tell").contains("c-nw-1"));
    let payments = svc("payments");
    assert_eq!(payments["mobility"], "pinned");
    assert!(names(payments, "candidates").is_empty());
    assert_eq!(svc("card-vault")["mobility"], "local_volumes");
    let checkout = names(svc("checkout"), "candidates");
    assert!(
        !checkout.contains("c-lon-1") && !checkout.contains("c-iad-1"),
        "jurisdiction eu only: {checkout:?}"
    );

    // Links: one for every pair of distinct sites hosting clusters, each
    // with its derivation.
    let file: Value = serde_json::from_str(&std::fs::read_to_string(sample()).unwrap()).unwrap();
    let hosting: BTreeSet<&str> = file["clusters"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["site"].as_str().unwrap())
        .collect();
    let mut want = BTreeSet::new();
    for a in &hosting {
        for b in &hosting {
            if a < b {
                want.insert((a.to_string(), b.to_string()));
            }
        }
    }
    let links = v["links"].as_array().unwrap();
    let got: BTreeSet<(String, String)> = links
        .iter()
        .map(|l| {
            let (a, b) = (l["a"].as_str().unwrap(), l["b"].as_str().unwrap());
            (a.min(b).to_string(), a.max(b).to_string())
        })
        .collect();
    assert_eq!(links.len(), want.len(), "one entry per pair");
    assert_eq!(got, want);
    let derivation = |a: &str, b: &str| {
        links
            .iter()
            .find(|l| (l["a"] == a && l["b"] == b) || (l["a"] == b && l["b"] == a))
            .map(|l| {
                assert!(l["rtt_ms"].is_f64() && l["class"].is_string(), "{l}");
                l["derivation"].as_str().unwrap().to_string()
            })
            .unwrap()
    };
    assert_eq!(derivation("fra", "par"), "site_link");
    assert_eq!(derivation("par", "dub"), "great_circle");
    assert_eq!(derivation("fra", "nw-dc1"), "unknown");
    for l in links {
        let d = l["derivation"].as_str().unwrap();
        assert!(["site_link", "great_circle", "unknown"].contains(&d), "{l}");
    }
    // Measured paths are given separately.
    assert_eq!(v["paths"].as_array().unwrap().len(), 6);
    assert_eq!(v["flows"].as_array().unwrap().len(), 103);
}

const BROKEN: &str = r#"{
  "schema": 1,
  "name": "broken",
  "sites": [
    {"id": "fra", "name": "Frankfurt", "lat": 50.11, "jurisdiction": "eu"}
  ],
  "clusters": [
    {"id": "c-fra", "site": "fra", "tier": "prod", "trust_zone": "general", "health": "degraded", "cpu_total": 64, "memory_total_gib": 256},
    {"id": "c-fra-2", "site": "fra", "tier": "prod", "trust_zone": "general", "health": "healthy", "cpu_total": 64, "memory_total_gib": 256, "cpu_free": {"value": 3, "class": "mesured"}}
  ],
  "services": [
    {"id": "web", "owner": "shop", "cluster": "c-fra-2", "cpu": -1, "memory_gib": 4},
    {"id": "api", "owner": "shop", "cluster": "c-fra-2", "cpu": 1, "memory_gb": 2}
  ]
}
"#;

#[test]
fn broken_estate_fails_with_every_error_and_its_line() {
    let dir = temp_dir("broken");
    let path = write(&dir, "broken.json", BROKEN);
    let want = load(BROKEN, Format::Json).unwrap_err();
    assert!(want.len() >= 5, "{want:?}");
    for cmd in ["validate", "advise", "preview"] {
        let o = berth(&[cmd, &path, "--now", NOW][..if cmd == "validate" { 2 } else { 4 }]);
        assert_eq!(o.status.code(), Some(1), "{cmd}");
        assert!(stdout(&o).is_empty(), "{cmd}: nothing on stdout");
        let err = stderr(&o);
        let lines: Vec<&str> = err.lines().collect();
        assert_eq!(
            lines[0],
            format!("{path}: invalid estate, {} errors:", want.len())
        );
        assert_eq!(lines.len(), 1 + want.len(), "{err}");
        for (line, e) in lines[1..].iter().zip(&want) {
            let l = e.line.expect("JSON errors have a line");
            assert_eq!(*line, format!("{path}:{l}: {}: {}", e.path, e.message));
        }
        for needle in [
            r#":5: /sites/0: "lat" given without "lon""#,
            r#":8: /clusters/0/health: expected one of "healthy", "watch", "draining", "down", found "degraded""#,
            r#":9: /clusters/1/cpu_free/class: expected one of "measured", "reported", "inferred", "guessed", found "mesured""#,
            ":12: /services/0/cpu: expected a number ≥ 0 (at most 1e12), found -1",
            ":13: /services/1/memory_gb: unknown field; expected one of id, name, owner, cluster, cpu, memory_gib, data_gb, constraints, source, workload",
            r#":13: /services/1: missing required field "memory_gib""#,
        ] {
            assert!(err.contains(needle), "{cmd}: {needle} not in\n{err}");
        }
    }
    std::fs::remove_dir_all(dir).ok();
}

#[test]
fn yaml_estate_file_is_read_by_extension() {
    let dir = temp_dir("yaml");
    let yaml = "\
schema: 1
name: tiny
sites: [{id: fra, name: Frankfurt, jurisdiction: eu}]
clusters:
  - {id: c-1, site: fra, tier: prod, trust_zone: general, health: healthy,
     cpu_total: 8, memory_total_gib: 32, cpu_free: 4, memory_free_gib: 16}
services: [{id: web, owner: shop, cluster: c-1, cpu: 1, memory_gib: 1}]
";
    for name in ["tiny.yaml", "tiny.yml", "tiny-no-extension"] {
        let path = write(&dir, name, yaml);
        let o = berth(&["validate", &path]);
        assert!(o.status.success(), "{name}: {}", stderr(&o));
        assert!(stdout(&o).contains(r#"valid estate "tiny""#));
    }
    std::fs::remove_dir_all(dir).ok();
}

#[test]
fn bad_policy_names_the_field() {
    let dir = temp_dir("policy");
    let typo = write(&dir, "typo.json", r#"{"cross_site_wieght": 4}"#);
    let o = berth(&["advise", &sample(), "--now", NOW, "--policy", &typo]);
    assert_eq!(o.status.code(), Some(1));
    let err = stderr(&o);
    assert!(
        err.starts_with(&format!("{typo}: invalid policy:")),
        "{err}"
    );
    assert!(err.contains("cross_site_wieght"), "{err}");

    let range = write(
        &dir,
        "range.json",
        r#"{"headroom_threshold": 1.5, "min_gain_points": -1}"#,
    );
    let o = berth(&["preview", &sample(), "--now", NOW, "--policy", &range]);
    assert_eq!(o.status.code(), Some(1));
    let err = stderr(&o);
    assert!(
        err.contains("policy headroom_threshold: expected a number in [0, 0.99], got 1.5"),
        "{err}"
    );
    assert!(err.contains("policy min_gain_points:"), "{err}");

    // A good partial policy changes the result and its digest.
    let good = write(&dir, "good.json", r#"{"cross_site_weight": 0}"#);
    let o = berth(&["advise", &sample(), "--now", NOW, "--policy", &good]);
    assert!(o.status.success(), "{}", stderr(&o));
    let v: Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!(
        v["policy_digest"],
        Policy::from_json(r#"{"cross_site_weight": 0}"#)
            .unwrap()
            .digest()
    );
    assert_eq!(v["totals_before"]["cross_site"], 0.0);
    std::fs::remove_dir_all(dir).ok();
}

#[test]
fn bad_now_is_explained() {
    for bad in ["yesterday", "2026-11-30 04:05", "2026-11-30T04:05:00"] {
        let o = berth(&["advise", &sample(), "--now", bad]);
        assert_eq!(o.status.code(), Some(2), "{bad}");
        assert_eq!(
            stderr(&o).trim_end(),
            format!("--now {bad:?}: expected an RFC 3339 time like 2026-11-30T04:05:00Z")
        );
        assert!(stdout(&o).is_empty());
    }
    // An offset is fine and means the same instant.
    let a = berth(&["advise", &sample(), "--now", "2026-11-30T05:05:00+01:00"]);
    let b = berth(&["advise", &sample(), "--now", NOW]);
    assert!(a.status.success());
    assert_eq!(stdout(&a), stdout(&b));
}

#[test]
fn missing_file_is_explained() {
    let o = berth(&["validate", "/nonexistent/estate.json"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).starts_with("cannot read /nonexistent/estate.json: "),
        "{}",
        stderr(&o)
    );
}

/// A scenario's shape errors and its unknown ids come in one pass, each
/// as `file:line: path: message`.
#[test]
fn scenario_errors_come_in_one_pass() {
    let dir = temp_dir("scenario");
    let path = write(
        &dir,
        "bad.json",
        "{\"schema\": 1,\n \"steps\": [\n   {\"move\": {\"service\": \"cart\", \"to\": \"c-fra-9\"}},\n   {\"evacuate\": \"c-nope\"}\n ]}\n",
    );
    let o = berth(&["whatif", &sample(), &path, "--now", NOW]);
    std::fs::remove_dir_all(dir).ok();
    assert_eq!(o.status.code(), Some(1));
    let err = stderr(&o);
    let lines: Vec<&str> = err.lines().collect();
    assert_eq!(
        lines,
        [
            format!("{path}: invalid scenario, 3 errors:"),
            format!("{path}:1: /name: missing; expected a string"),
            format!("{path}:3: /steps/0/move/to: unknown cluster \"c-fra-9\": the estate has no cluster with that id"),
            format!("{path}:4: /steps/1/evacuate: unknown cluster \"c-nope\": the estate has no cluster with that id"),
        ]
    );
}

/// `berth import kubernetes --into` a YAML estate reads it as the engine
/// reads an estate: a `.nan` capacity is refused with its path (it became
/// `null` before, an *unknown* capacity, silently), and nothing is written.
#[test]
fn import_into_a_yaml_estate_refuses_non_finite_numbers() {
    let dir = temp_dir("import-nan");
    let estate = "name: e\nsites:\n  - {id: s1, name: S1}\nclusters:\n  - {id: c1, site: s1, cpu_total: .nan, memory_total_gib: 64}\nservices: []\nflows: []\n";
    let into = write(&dir, "estate.yaml", estate);
    let manifest = write(
        &dir,
        "app.yaml",
        "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web}\nspec:\n  template:\n    spec:\n      containers: [{name: web, image: web}]\n",
    );
    let out = berth(&[
        "import",
        "kubernetes",
        "--cluster",
        "c1",
        "--into",
        &into,
        &manifest,
    ]);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(
        err.contains("/clusters/0/cpu_total") && err.contains(".nan"),
        "{err}"
    );
    assert_eq!(
        std::fs::read_to_string(&into).unwrap(),
        estate,
        "the estate is untouched"
    );
}
