//! The loader refuses bad estate files with every error named: its JSON
//! pointer, its line (for JSON) and what was expected. Nothing loads when
//! anything is wrong.
//!
//! Each case edits one line of a small valid file (`BASE`, one object per
//! line so a line number says which object) and asserts the complete list
//! of errors, so a cascade of follow-on errors would show up too.

use berth_engine::{load, Estate, Format};

/// Line numbers in the cases below refer to this text.
const BASE: &str = r#"{
  "schema": 1,
  "name": "errors",
  "observed_at": "2026-11-30T04:00:00Z",
  "sites": [
    {"id": "fra", "name": "Frankfurt", "lat": 50.11, "lon": 8.68, "jurisdiction": "eu"},
    {"id": "par", "name": "Paris", "lat": 48.86, "lon": 2.35, "jurisdiction": "eu"}
  ],
  "clusters": [
    {"id": "c-fra", "site": "fra", "tier": "prod", "trust_zone": "general", "health": "healthy", "cpu_total": 64, "memory_total_gib": 256, "cpu_free": {"value": 20, "class": "measured", "source": "agent", "observed_at": "2026-11-30T04:03:00Z"}, "memory_free_gib": 90},
    {"id": "c-par", "site": "par", "tier": "prod", "trust_zone": "general", "health": "watch", "cpu_total": 64, "memory_total_gib": 256, "cpu_free": 30, "memory_free_gib": 100}
  ],
  "links": [
    {"a": "fra", "b": "par", "rtt_ms": 9.2, "bandwidth_mb_s": 1000}
  ],
  "paths": [
    {"a": "c-fra", "b": "c-par", "rtt_ms": {"value": 9.4, "class": "measured"}}
  ],
  "services": [
    {"id": "web", "owner": "shop", "cluster": "c-fra", "cpu": 2, "memory_gib": 4},
    {"id": "api", "owner": "shop", "cluster": "c-par", "cpu": 1, "memory_gib": 2, "data_gb": 5, "constraints": {"tiers": ["prod"]}}
  ],
  "flows": [
    {"from": "web", "to": "api", "weight": 3.5, "mb_s": 1.2}
  ]
}"#;

fn edit(from: &str, to: &str) -> String {
    assert_eq!(BASE.matches(from).count(), 1, "ambiguous edit {from:?}");
    BASE.replacen(from, to, 1)
}

fn errors(text: &str) -> Vec<(String, Option<usize>, String)> {
    match load(text, Format::Json) {
        Ok(_) => panic!("loaded an invalid estate:\n{text}"),
        Err(es) => es
            .into_iter()
            .map(|e| (e.path, e.line, e.message))
            .collect(),
    }
}

type Case = (
    &'static str,
    &'static str,
    &'static str,
    &'static [(&'static str, usize, &'static str)],
);

/// (what, replace this, with this, expected errors: path, line, message).
const CASES: &[Case] = &[
    (
        "unknown site",
        r#""site": "par""#,
        r#""site": "prs""#,
        &[("/clusters/1/site", 11, r#"unknown site "prs""#)],
    ),
    (
        "unknown cluster",
        r#""cluster": "c-par""#,
        r#""cluster": "c-prs""#,
        &[("/services/1/cluster", 21, r#"unknown cluster "c-prs""#)],
    ),
    (
        "unknown service",
        r#""to": "api""#,
        r#""to": "apj""#,
        &[("/flows/0/to", 24, r#"unknown service "apj""#)],
    ),
    (
        "unknown site in a link",
        r#"{"a": "fra", "b": "par", "rtt_ms": 9.2"#,
        r#"{"a": "fra", "b": "ams", "rtt_ms": 9.2"#,
        &[("/links/0/b", 14, r#"unknown site "ams""#)],
    ),
    (
        "duplicate site id",
        r#"{"id": "par", "name": "Paris""#,
        r#"{"id": "fra", "name": "Paris""#,
        &[
            ("/sites/1/id", 7, r#"duplicate site id "fra" (first at /sites/0)"#),
            ("/clusters/1/site", 11, r#"unknown site "par""#),
            ("/links/0/b", 14, r#"unknown site "par""#),
        ]
    ),
    (
        "duplicate cluster id",
        r#"{"id": "c-par", "site": "par""#,
        r#"{"id": "c-fra", "site": "par""#,
        &[
            ("/clusters/1/id", 11, r#"duplicate cluster id "c-fra" (first at /clusters/0)"#),
            ("/paths/0/b", 17, r#"unknown cluster "c-par""#),
            ("/services/1/cluster", 21, r#"unknown cluster "c-par""#),
        ]
    ),
    (
        "duplicate service id",
        r#"{"id": "api", "owner""#,
        r#"{"id": "web", "owner""#,
        &[
            ("/services/1/id", 21, r#"duplicate service id "web" (first at /services/0)"#),
            ("/flows/0/to", 24, r#"unknown service "api""#),
        ]
    ),
    (
        "negative CPU request",
        r#""cpu": 2,"#,
        r#""cpu": -2,"#,
        &[
            ("/services/0/cpu", 20, "expected a number ≥ 0 (at most 1e12), found -2"),
        ]
    ),
    (
        "negative data size",
        r#""data_gb": 5"#,
        r#""data_gb": -20"#,
        &[
            ("/services/1/data_gb", 21, "expected a number ≥ 0 (at most 1e12), found -20"),
        ]
    ),
    (
        "zero cluster size",
        r#""health": "watch", "cpu_total": 64"#,
        r#""health": "watch", "cpu_total": 0"#,
        &[
            ("/clusters/1/cpu_total", 11, "expected a number > 0 (at most 1e12), found 0"),
        ]
    ),
    (
        "negative fact",
        r#""mb_s": 1.2"#,
        r#""mb_s": -1.5"#,
        &[
            ("/flows/0/mb_s", 24, "expected a number ≥ 0 (at most 1e12), found -1.5"),
        ]
    ),
    (
        "free capacity above the total",
        r#""cpu_free": 30"#,
        r#""cpu_free": 65"#,
        &[
            ("/clusters/1/cpu_free", 11, "free 65 exceeds cpu_total 64"),
        ]
    ),
    (
        "a flow to itself",
        r#""to": "api""#,
        r#""to": "web""#,
        &[
            ("/flows/0", 24, r#"flow from "web" to itself"#),
        ]
    ),
    (
        "duplicate flow",
        r#"{"from": "web", "to": "api", "weight": 3.5, "mb_s": 1.2}"#,
        "{\"from\": \"web\", \"to\": \"api\", \"weight\": 3.5, \"mb_s\": 1.2},\n    \
         {\"from\": \"web\", \"to\": \"api\", \"weight\": 1}",
        &[
            ("/flows/1", 25, r#"duplicate flow "web" → "api" (first at /flows/0); merge them into one"#),
        ]
    ),
    (
        "a link joining a site to itself",
        r#"{"a": "fra", "b": "par", "rtt_ms": 9.2"#,
        r#"{"a": "fra", "b": "fra", "rtt_ms": 9.2"#,
        &[
            ("/links/0", 14, r#"a link must join two different sites; both ends are "fra""#),
        ]
    ),
    (
        "duplicate path (direction does not matter)",
        r#"{"a": "c-fra", "b": "c-par", "rtt_ms": {"value": 9.4, "class": "measured"}}"#,
        "{\"a\": \"c-fra\", \"b\": \"c-par\", \"rtt_ms\": 9.4},\n    \
         {\"a\": \"c-par\", \"b\": \"c-fra\", \"rtt_ms\": 9.5}",
        &[
            ("/paths/1", 18, r#"duplicate path between "c-par" and "c-fra" (first at /paths/0)"#),
        ]
    ),
    (
        "bad class",
        r#""class": "measured", "source": "agent""#,
        r#""class": "mesured", "source": "agent""#,
        &[
            ("/clusters/0/cpu_free/class", 10, r#"expected one of "measured", "reported", "inferred", "guessed", found "mesured""#),
        ]
    ),
    (
        "bad health",
        r#""health": "watch""#,
        r#""health": "degraded""#,
        &[
            ("/clusters/1/health", 11, r#"expected one of "healthy", "watch", "draining", "down", found "degraded""#),
        ]
    ),
    (
        "lat without lon",
        r#""lat": 48.86, "lon": 2.35, "#,
        r#""lat": 48.86, "#,
        &[
            ("/sites/1", 7, r#""lat" given without "lon""#),
        ]
    ),
    (
        "latitude out of range",
        r#""lat": 48.86"#,
        r#""lat": 98.86"#,
        &[
            ("/sites/1/lat", 7, "expected −90…90, found 98.86"),
        ]
    ),
    (
        "wrong schema",
        r#""schema": 1"#,
        r#""schema": 2"#,
        &[
            ("/schema", 2, "unsupported schema 2; this version reads schema 1"),
        ]
    ),
    (
        "unknown field (typo)",
        r#""cpu_free": 30"#,
        r#""cpu_fre": 30"#,
        &[
            ("/clusters/1/cpu_fre", 11, "unknown field; expected one of id, name, site, tier, trust_zone, health, enrolled_at, cpu_total, memory_total_gib, cpu_free, memory_free_gib, karmada_cluster, ocm_cluster, mesh_cluster"),
        ]
    ),
    (
        "a mesh_cluster naming another cluster",
        r#""cpu_free": 30"#,
        r#""cpu_free": 30, "mesh_cluster": "c-fra""#,
        &[
            ("/clusters/1/mesh_cluster", 11, "mesh_cluster \"c-fra\" is the id of /clusters/0: a mesh cluster stands for one estate cluster"),
        ]
    ),
    (
        "a mesh_cluster that is no id",
        r#""cpu_free": 30"#,
        r#""cpu_free": 30, "mesh_cluster": "east 1""#,
        &[
            ("/clusters/1/mesh_cluster", 11, "invalid id \"east 1\": character 5 is U+0020; ids are 1–128 characters of A–Z, a–z, 0–9 and - _ . : / @, starting with a letter or digit"),
        ]
    ),
    (
        "unknown constraint (typo)",
        r#""constraints": {"tiers": ["prod"]}"#,
        r#""constraints": {"tier": ["prod"]}"#,
        &[
            ("/services/1/constraints/tier", 21, "unknown field; expected one of local_volumes, pinned, jurisdictions, trust_zone, tiers"),
        ]
    ),
    (
        "bad time",
        r#""observed_at": "2026-11-30T04:00:00Z""#,
        r#""observed_at": "2026-11-30 04:00""#,
        &[
            ("/observed_at", 4, r#"expected an RFC 3339 time such as 2026-11-30T04:00:00Z, found "2026-11-30 04:00""#),
        ]
    ),
    (
        "time without a zone",
        r#""observed_at": "2026-11-30T04:03:00Z""#,
        r#""observed_at": "2026-11-30T04:03:00""#,
        &[
            ("/clusters/0/cpu_free/observed_at", 10, r#"expected an RFC 3339 time such as 2026-11-30T04:00:00Z, found "2026-11-30T04:03:00""#),
        ]
    ),
    (
        "wrong type",
        r#""cpu": 2,"#,
        r#""cpu": "2","#,
        &[
            ("/services/0/cpu", 20, r#"expected a number or null, found the string "2""#),
        ]
    ),
    (
        "missing required field",
        r#""owner": "shop", "cluster": "c-fra""#,
        r#""cluster": "c-fra""#,
        &[
            ("/services/0", 20, r#"missing required field "owner""#),
        ]
    ),
    (
        "id with a space",
        r#"{"id": "web""#,
        r#"{"id": "my web""#,
        &[
            ("/services/0/id", 20, r#"invalid id "my web": character 3 is U+0020; ids are 1–128 characters of A–Z, a–z, 0–9 and - _ . : / @, starting with a letter or digit"#),
            ("/flows/0/from", 24, r#"unknown service "web""#),
        ]
    ),
    (
        "id with a right-to-left override",
        r#"{"id": "web""#,
        "{\"id\": \"we\u{202E}b\"",
        &[
            ("/services/0/id", 20, r#"invalid id "we\u{202e}b": character 3 is U+202E; ids are 1–128 characters of A–Z, a–z, 0–9 and - _ . : / @, starting with a letter or digit"#),
            ("/flows/0/from", 24, r#"unknown service "web""#),
        ]
    ),
    (
        "id with a zero-width space, escaped in the JSON",
        r#"{"id": "c-par""#,
        r#"{"id": "c-\u200bpar""#,
        &[
            ("/clusters/1/id", 11, r#"invalid id "c-\u{200b}par": character 3 is U+200B; ids are 1–128 characters of A–Z, a–z, 0–9 and - _ . : / @, starting with a letter or digit"#),
            ("/paths/0/b", 17, r#"unknown cluster "c-par""#),
            ("/services/1/cluster", 21, r#"unknown cluster "c-par""#),
        ]
    ),
    (
        "id that reads as a path",
        r#"{"id": "api""#,
        r#"{"id": "..""#,
        &[
            ("/services/1/id", 21, r#"invalid id "..": character 1 is '.' (U+002E); ids are 1–128 characters of A–Z, a–z, 0–9 and - _ . : / @, starting with a letter or digit"#),
            ("/flows/0/to", 24, r#"unknown service "api""#),
        ]
    ),
    (
        "name with an isolate",
        r#""name": "Paris""#,
        "\"name\": \"Pa\u{2066}ris\"",
        &[
            ("/sites/1/name", 7, "character 3 is U+2066: names may not hold control, bidirectional or invisible formatting characters"),
        ]
    ),
    (
        "an array where a cluster object belongs",
        r#"{"id": "c-par", "site": "par", "tier": "prod", "trust_zone": "general", "health": "watch", "cpu_total": 64, "memory_total_gib": 256, "cpu_free": 30, "memory_free_gib": 100}"#,
        r#"["c-par", "par", "prod", "general", "watch", 64, 256, 30, 100]"#,
        &[
            ("/clusters/1", 11, "expected an object, found an array"),
            ("/paths/0/b", 17, r#"unknown cluster "c-par""#),
            ("/services/1/cluster", 21, r#"unknown cluster "c-par""#),
        ]
    ),
];

#[test]
fn base_file_is_valid() {
    let e = load(BASE, Format::Json).expect("BASE is valid");
    assert_eq!(
        (
            e.sites.len(),
            e.clusters.len(),
            e.services.len(),
            e.flows.len()
        ),
        (2, 2, 2, 1)
    );
}

fn line((p, l, m): &(String, Option<usize>, String)) -> String {
    format!("{p} (line {l:?}): {m}")
}

/// Follow-on errors: a reference to an id the file does define, but whose
/// object was dropped for its own error (see
/// `follow_on_errors_do_not_call_defined_ids_unknown`).
fn is_follow_on(text: &str, (_, _, m): &(String, Option<usize>, String)) -> bool {
    ["unknown site ", "unknown cluster ", "unknown service "]
        .iter()
        .any(|p| {
            m.strip_prefix(p)
                .is_some_and(|id| text.contains(&format!("\"id\": {id}")))
        })
}

/// For each case: the errors it is about come first, exactly (path, line,
/// message); anything after them is only a follow-on reference error.
#[test]
fn each_bad_input_is_named_with_path_line_and_message() {
    let mut failures = Vec::new();
    for (what, from, to, expected) in CASES {
        let text = edit(from, to);
        let got = errors(&text);
        let want: Vec<(String, Option<usize>, String)> = expected
            .iter()
            .map(|(p, l, m)| (p.to_string(), Some(*l), m.to_string()))
            .collect();
        let n = want.len().min(got.len());
        if got[..n] != want[..] || !got[n..].iter().all(|e| is_follow_on(&text, e)) {
            failures.push(format!(
                "{what}:\n  want {}\n  got  {}",
                want.iter().map(line).collect::<Vec<_>>().join("\n       "),
                got.iter().map(line).collect::<Vec<_>>().join("\n       ")
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// An object dropped for its own error should not make every reference
/// to it a second, misleading error: `"unknown cluster \"c-par\""` when
/// c-par is right there in the file (its `site` was the problem). The
/// format doc promises each error names what was expected; these name
/// something false. Today a bad `site` on one cluster yields 4 errors.
#[test]
fn follow_on_errors_do_not_call_defined_ids_unknown() {
    for (what, from, to, expected) in CASES {
        let text = edit(from, to);
        let got = errors(&text);
        let follow: Vec<String> = got
            .iter()
            .skip(expected.len())
            .filter(|e| is_follow_on(&text, e))
            .map(line)
            .collect();
        assert!(follow.is_empty(), "{what}: {follow:#?}");
    }
}

/// Not JSON at all: the parser's error, with its line.
#[test]
fn syntax_error_has_a_line() {
    let text = edit(r#""cpu": 2,"#, r#""cpu": 2,,"#);
    let e = load(&text, Format::Json).unwrap_err();
    assert_eq!(e.len(), 1, "{e:?}");
    assert_eq!(e[0].path, "");
    assert_eq!(e[0].line, Some(20));
    assert!(
        e[0].message.starts_with("not valid JSON: "),
        "{}",
        e[0].message
    );
    // Display puts it together for people.
    assert!(e[0].to_string().starts_with("/ (line 20): not valid JSON"));
}

/// Several independent mistakes: every one is reported, in one pass, with
/// its path and line, and nothing is loaded. (Follow-on reference errors
/// are left out here; see `follow_on_errors_do_not_call_defined_ids_unknown`.)
#[test]
fn every_error_is_reported_at_once() {
    let text = BASE
        .replacen(r#""schema": 1"#, r#""schema": 3"#, 1)
        .replacen(
            r#""class": "measured", "source""#,
            r#""class": "exact", "source""#,
            1,
        )
        .replacen(r#""health": "watch""#, r#""health": "sick""#, 1)
        .replacen(r#""memory_gib": 4"#, r#""memory_gib": -4"#, 1)
        .replacen(r#""data_gb": 5"#, r#""data_gb": 5, "owner2": "x""#, 1)
        .replacen(
            r#""weight": 3.5"#,
            r#""weight": {"value": 3.5, "class": "guess"}"#,
            1,
        );
    let got: Vec<(String, Option<usize>)> = errors(&text)
        .into_iter()
        .filter(|e| !is_follow_on(&text, e))
        .map(|(p, l, _)| (p, l))
        .collect();
    let want: Vec<(String, Option<usize>)> = [
        ("/schema", 2),
        ("/clusters/0/cpu_free/class", 10),
        ("/clusters/1/health", 11),
        ("/services/0/memory_gib", 20),
        ("/services/1/owner2", 21),
        ("/flows/0/weight/class", 24),
    ]
    .iter()
    .map(|(p, l)| (p.to_string(), Some(*l)))
    .collect();
    assert_eq!(got, want);
}

const YAML: &str = r#"
schema: 1
name: errors
observed_at: "2026-11-30T04:00:00Z"
sites:
  - {id: fra, name: Frankfurt, lat: 50.11, lon: 8.68, jurisdiction: eu}
  - id: par
    name: Paris
    lat: 48.86
    lon: 2.35
    jurisdiction: eu
clusters:
  - id: c-fra
    site: fra
    tier: prod
    trust_zone: general
    health: healthy
    cpu_total: 64
    memory_total_gib: 256
    cpu_free:
      value: 20
      class: measured
      source: agent
      observed_at: "2026-11-30T04:03:00Z"
    memory_free_gib: 90
  - {id: c-par, site: par, tier: prod, trust_zone: general, health: watch,
     cpu_total: 64, memory_total_gib: 256, cpu_free: 30, memory_free_gib: 100}
links:
  - {a: fra, b: par, rtt_ms: 9.2, bandwidth_mb_s: 1000}
paths:
  - a: c-fra
    b: c-par
    rtt_ms: {value: 9.4, class: measured}
services:
  - {id: web, owner: shop, cluster: c-fra, cpu: 2, memory_gib: 4}
  - id: api
    owner: shop
    cluster: c-par
    cpu: 1
    memory_gib: 2
    data_gb: 5
    constraints:
      tiers: [prod]
flows:
  - {from: web, to: api, weight: 3.5, mb_s: 1.2}
"#;

/// The same estate written in YAML loads to the very same `Estate`.
#[test]
fn yaml_loads_the_same_estate_as_json() {
    let from_json: Estate = load(BASE, Format::Json).unwrap();
    let from_yaml: Estate = load(YAML, Format::Yaml).unwrap();
    assert_eq!(from_yaml, from_json);
    assert_eq!(Format::sniff(YAML), Format::Yaml);
    assert_eq!(Format::sniff(BASE), Format::Json);
    assert_eq!(
        berth_engine::export::version(&from_yaml),
        berth_engine::export::version(&from_json)
    );
}

/// YAML errors carry the same paths (lines are only known for JSON).
#[test]
fn yaml_errors_have_the_same_paths() {
    let text = YAML.replacen("health: watch", "health: degraded", 1);
    let e = load(&text, Format::Yaml).unwrap_err();
    assert_eq!(e[0].path, "/clusters/1/health");
    assert_eq!(
        e[0].message,
        r#"expected one of "healthy", "watch", "draining", "down", found "degraded""#
    );
    let bad = load("sites: [unclosed", Format::Yaml).unwrap_err();
    assert_eq!(bad.len(), 1);
    assert!(bad[0].message.starts_with("not valid YAML: "), "{bad:?}");
    assert!(bad[0].line.is_some(), "{bad:?}");
}

/// YAML's `.nan`, `.inf` and `-.inf` are refused with the path of the
/// field: JSON has no word for them, so read as they were they became
/// `null`, an *unknown* capacity or RTT, without a word (issue 37).
#[test]
fn yaml_non_finite_numbers_are_refused_with_their_path() {
    let text = YAML
        .replacen("cpu_total: 64", "cpu_total: .nan", 1)
        .replacen("rtt_ms: 9.2", "rtt_ms: .inf", 1)
        .replacen(
            "{value: 9.4, class: measured}",
            "{value: -.Inf, class: measured}",
            1,
        )
        .replacen("mb_s: 1.2", "mb_s: .NaN", 1);
    let e = load(&text, Format::Yaml).unwrap_err();
    let got: Vec<(&str, &str)> = e
        .iter()
        .map(|e| (e.path.as_str(), e.message.as_str()))
        .collect();
    assert_eq!(
        got,
        [
            (
                "/clusters/0/cpu_total",
                "expected a finite number, found .nan"
            ),
            ("/links/0/rtt_ms", "expected a finite number, found .inf"),
            (
                "/paths/0/rtt_ms/value",
                "expected a finite number, found -.inf"
            ),
            ("/flows/0/mb_s", "expected a finite number, found .nan"),
        ]
    );
    // A finite value in the same places still loads.
    assert!(load(YAML, Format::Yaml).is_ok());
}

// ---------------------------------------------------------------------------
// Rules that docs/estate-format.md and docs/estate.schema.json state, which
// the loader once missed.

/// `constraints.tiers` must be non-empty (format doc: "constraint lists are
/// non-empty"; schema: `minItems: 1`). Accepted, an empty list would make
/// the service refuse every cluster ("may run only on  clusters").
#[test]
fn empty_constraint_lists_are_refused() {
    for (from, to, path) in [
        (
            r#""tiers": ["prod"]"#,
            r#""tiers": []"#,
            "/services/1/constraints/tiers",
        ),
        (
            r#""tiers": ["prod"]"#,
            r#""jurisdictions": []"#,
            "/services/1/constraints/jurisdictions",
        ),
    ] {
        let got = load(&edit(from, to), Format::Json);
        let e = got.expect_err("an empty constraint list must be refused");
        assert_eq!(e[0].path, path);
        assert_eq!(e[0].line, Some(21));
    }
}

/// A fact object needs `class` (format doc: "fact object has value and
/// class"; schema: `required: [value, class]`), rather than silently
/// becoming `reported`.
#[test]
fn fact_object_without_class_is_refused() {
    let text = edit(
        r#"{"value": 9.4, "class": "measured"}"#,
        r#"{"value": 9.4}"#,
    );
    let e = load(&text, Format::Json).expect_err("class is required");
    assert_eq!(e[0].path, "/paths/0/rtt_ms");
    assert_eq!(e[0].line, Some(17));
}

/// A site's `name` is optional (the format doc and schema say so): the id
/// stands in for it.
#[test]
fn site_without_name_shows_its_id() {
    let text = edit(r#""name": "Paris", "#, "");
    let e = load(&text, Format::Json).expect("name is optional");
    assert_eq!(e.sites[e.site_index("par").unwrap()].name, "par");
}

// ---------------------------------------------------------------------------
// docs/estate.schema.json and the loader agree.

fn schema() -> serde_json::Value {
    let text = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../docs/estate.schema.json"
    ))
    .unwrap();
    serde_json::from_str(&text).unwrap()
}

/// (JSON pointer of an object in BASE, where its definition sits in the schema)
const OBJECTS: &[(&str, &str)] = &[
    ("", ""),
    ("/sites/0", "/$defs/site"),
    ("/clusters/0", "/$defs/cluster"),
    ("/clusters/0/cpu_free", "/$defs/fact/oneOf/2"),
    ("/links/0", "/$defs/link"),
    ("/paths/0", "/$defs/path"),
    ("/services/1", "/$defs/service"),
    ("/services/1/constraints", "/$defs/constraints"),
    ("/flows/0", "/$defs/flow"),
];

fn names(v: &serde_json::Value) -> Vec<String> {
    let mut out: Vec<String> = v
        .as_array()
        .map(|a| a.iter().map(|s| s.as_str().unwrap().to_string()).collect())
        .or_else(|| v.as_object().map(|o| o.keys().cloned().collect()))
        .unwrap_or_default();
    out.sort();
    out
}

/// Every object accepts exactly the fields the schema lists: an unknown
/// field's error names the allowed ones, and they are the schema's.
#[test]
fn loader_fields_are_the_schema_properties() {
    let schema = schema();
    let base: serde_json::Value = serde_json::from_str(BASE).unwrap();
    for (at, def) in OBJECTS {
        let def = schema.pointer(def).unwrap();
        assert_eq!(def["additionalProperties"], false, "{at}");
        let mut v = base.clone();
        v.pointer_mut(at)
            .unwrap()
            .as_object_mut()
            .unwrap()
            .insert("zz_unknown".into(), 1.into());
        let e = load(&serde_json::to_string(&v).unwrap(), Format::Json).unwrap_err();
        let msg = &e
            .iter()
            .find(|e| e.path == format!("{at}/zz_unknown"))
            .unwrap_or_else(|| panic!("{at}: {e:?}"))
            .message;
        let allowed = msg.split("expected one of ").nth(1).unwrap();
        let mut allowed: Vec<String> = allowed.split(", ").map(String::from).collect();
        allowed.sort();
        assert_eq!(allowed, names(&def["properties"]), "{at}");
    }
}

/// Every field the schema requires is required by the loader: removing it
/// is an error at that object.
#[test]
fn loader_requires_what_the_schema_requires() {
    let schema = schema();
    let base: serde_json::Value = serde_json::from_str(BASE).unwrap();
    for (at, def) in OBJECTS {
        for field in names(&schema.pointer(def).unwrap()["required"]) {
            let mut v = base.clone();
            v.pointer_mut(at)
                .unwrap()
                .as_object_mut()
                .unwrap()
                .remove(&field);
            let got = load(&serde_json::to_string(&v).unwrap(), Format::Json);
            let e = got.expect_err(&format!("{at}: {field} is required"));
            assert!(
                e.iter()
                    .any(|e| e.path == format!("{at}/{field}") || e.path == *at),
                "{at}/{field}: {e:?}"
            );
        }
    }
}

/// Errors in different entries do not hide each other: a range error in one
/// service does not hide that another service reuses its id, and rules on
/// flows (to itself, unknown end) are checked on the ids as written.
#[test]
fn mixed_errors_are_all_reported_in_one_pass() {
    let text = r#"{"schema": 1, "name": "bad",
 "sites": [{"id": "fra", "jurisdiction": "eu"}],
 "clusters": [{"id": "c1", "site": "fra", "tier": "prod", "trust_zone": "g", "health": "healthy", "cpu_total": 8, "memory_total_gib": 32, "cpu_free": 4, "memory_free_gib": 16}],
 "services": [
   {"id": "x", "owner": "t", "cluster": "c1", "cpu": 1, "memory_gib": 1, "data_gb": -3},
   {"id": "x", "owner": "t", "cluster": "c1", "cpu": 1, "memory_gib": 1}
 ],
 "flows": [
   {"from": "x", "to": "x", "weight": 1},
   {"from": "x", "to": "nope", "weight": 1}
 ]}"#;
    let got: Vec<String> = errors(text).iter().map(line).collect();
    assert_eq!(
        got,
        [
            "/services/0/data_gb (line Some(5)): expected a number ≥ 0 (at most 1e12), found -3",
            r#"/services/1/id (line Some(6)): duplicate service id "x" (first at /services/0)"#,
            r#"/flows/0 (line Some(9)): flow from "x" to itself"#,
            r#"/flows/1/to (line Some(10)): unknown service "nope""#,
        ]
    );
}

/// A valid estate can still hold likely mistakes: `berth validate` warns
/// about constraint values that match nothing and services whose current
/// cluster breaks their own constraints.
#[test]
fn lint_names_constraint_values_that_match_nothing() {
    assert!(berth_engine::estate::lint(&load(BASE, Format::Json).unwrap()).is_empty());
    let e = load(
        &edit(
            r#""tiers": ["prod"]"#,
            r#""tiers": ["PROD"], "trust_zone": "pci""#,
        ),
        Format::Json,
    )
    .unwrap();
    let got: Vec<String> = berth_engine::estate::lint(&e)
        .into_iter()
        .map(|l| format!("{}: {}", l.at, l.message))
        .collect();
    assert_eq!(
        got,
        [
            r#"services/api/constraints/tiers: "PROD" matches no cluster tier in the estate (known: prod)"#,
            r#"services/api/constraints/trust_zone: "pci" matches no cluster trust zone in the estate (known: general)"#,
            "services/api: runs on c-par although its own constraints (tiers, trust_zone) rule that cluster out",
        ]
    );
}

/// A request may be `null` (unknown) but not absent: `null` says "nobody
/// knows", an absent field is a typo. Both loader paths (JSON fast path,
/// YAML walker) agree, the unknown request and a service's `source`
/// survive export and reload, and neither an unknown request elsewhere nor
/// a `source` changes the version of the services that have neither.
#[test]
fn unknown_requests_are_null_not_absent() {
    let unknown = edit(
        r#""cpu": 2, "memory_gib": 4}"#,
        r#""cpu": null, "memory_gib": null, "source": "kubernetes:c-fra//Deployment/web"}"#,
    );
    let e = load(&unknown, Format::Json).unwrap();
    let web = &e.services[e.service_index("web").unwrap()];
    assert_eq!((web.cpu, web.memory_gib), (None, None));
    assert_eq!(
        web.source.as_deref(),
        Some("kubernetes:c-fra//Deployment/web")
    );
    let yaml = serde_yaml::to_string(&serde_json::from_str::<serde_json::Value>(&unknown).unwrap())
        .unwrap();
    assert_eq!(load(&yaml, Format::Yaml).unwrap(), e);
    let back = berth_engine::export::to_file(&e);
    assert_eq!(back["services"][1]["cpu"], serde_json::Value::Null);
    let reloaded = load(&back.to_string(), Format::Json).unwrap();
    assert_eq!(reloaded, e);

    // The version sees the unknown request, not the provenance.
    let base = load(BASE, Format::Json).unwrap();
    let v = berth_engine::export::version;
    assert_ne!(v(&e), v(&base));
    let sourced = edit(
        r#""cpu": 2, "memory_gib": 4}"#,
        r#""cpu": 2, "memory_gib": 4, "source": "cmdb:web"}"#,
    );
    assert_eq!(v(&load(&sourced, Format::Json).unwrap()), v(&base));
    // A Kubernetes import's provenance, in a file that says nothing of
    // coverage, reads as traffic unknown: that the version sees (the
    // coverage, not the text of the source).
    let imported = |extra: &str| {
        edit(
            r#""cpu": 2, "memory_gib": 4}"#,
            &format!(
                r#""cpu": 2, "memory_gib": 4, "source": "kubernetes:c-fra//Deployment/web"{extra}}}"#
            ),
        )
    };
    let never = v(&load(&imported(""), Format::Json).unwrap());
    assert_ne!(never, v(&base));
    assert_eq!(
        v(&load(&imported(r#", "traffic": null"#), Format::Json).unwrap()),
        never
    );
    assert_eq!(
        v(&load(&imported(r#", "traffic": "declared""#), Format::Json).unwrap()),
        v(&base)
    );

    assert_eq!(
        errors(&edit(
            r#""cpu": 2, "memory_gib": 4}"#,
            r#""memory_gib": 4}"#
        )),
        vec![(
            "/services/0".to_string(),
            Some(20),
            "missing required field \"cpu\"".to_string()
        )]
    );
    assert_eq!(
        errors(&edit(
            r#""cpu": 2, "memory_gib": 4}"#,
            r#""cpu": -1, "memory_gib": null}"#
        )),
        vec![(
            "/services/0/cpu".to_string(),
            Some(20),
            "expected a number ≥ 0 (at most 1e12), found -1".to_string()
        )]
    );
}

/// The decider contract's size limits are the estate's: one cluster past
/// them and the file is refused, naming the list and the limit, so an
/// estate that loads can always be sent to a decider.
#[test]
fn estates_past_the_published_size_limits_are_refused() {
    let limit = berth_engine::decider::MAX_REQUEST_CLUSTERS;
    let extra: String = (0..limit - 2)
        .map(|i| {
            format!(
                ",\n    {{\"id\": \"x-{i}\", \"site\": \"par\", \"tier\": \"prod\", \"trust_zone\": \"general\", \"health\": \"healthy\", \"cpu_total\": 1, \"memory_total_gib\": 1, \"cpu_free\": 1, \"memory_free_gib\": 1}}"
            )
        })
        .collect();
    let anchor = r#""cpu_free": 30, "memory_free_gib": 100}"#;
    let at_limit = BASE.replacen(anchor, &format!("{anchor}{extra}"), 1);
    assert_eq!(
        load(&at_limit, Format::Json)
            .expect("at the limit")
            .clusters
            .len(),
        limit
    );
    let one_more = r#",
    {"id": "x-last", "site": "par", "tier": "prod", "trust_zone": "general", "health": "healthy", "cpu_total": 1, "memory_total_gib": 1, "cpu_free": 1, "memory_free_gib": 1}"#;
    let past = BASE.replacen(anchor, &format!("{anchor}{extra}{one_more}"), 1);
    let got = errors(&past);
    assert_eq!(
        got,
        vec![(
            "/clusters".to_string(),
            Some(9),
            format!(
                "{} clusters: an estate may hold at most {limit} (the decider contract's limit)",
                limit + 1
            )
        )]
    );
}

/// Traffic coverage (`docs/estate-format.md`, Traffic coverage): the
/// forms a service's `traffic` and the top-level default take, each
/// error at its path and line, and what each form reads as.
#[test]
fn traffic_coverage_forms_and_errors() {
    let web = r#""cpu": 2, "memory_gib": 4}"#;
    let with = |t: &str| {
        edit(
            web,
            &format!(r#""cpu": 2, "memory_gib": 4, "traffic": {t}}}"#),
        )
    };
    let coverage = |text: &str| {
        let e = load(text, Format::Json).unwrap_or_else(|e| panic!("{e:?}"));
        let s = e.service_index("web").unwrap();
        e.traffic_of(s).map(|f| (f.value, f.class.as_str()))
    };
    assert_eq!(
        coverage(BASE),
        None,
        "absent everywhere, hand-written: declared"
    );
    assert_eq!(coverage(&with(r#""declared""#)), None);
    assert_eq!(coverage(&with("null")), Some((None, "guessed")));
    assert_eq!(coverage(&with("300")), Some((Some(300.0), "reported")));
    assert_eq!(
        coverage(&with(
            r#"{"value": 300, "class": "measured", "source": "mesh"}"#
        )),
        Some((Some(300.0), "measured"))
    );
    let top = |t: &str| {
        edit(
            r#""observed_at": "2026-11-30T04:00:00Z","#,
            &format!(r#""observed_at": "2026-11-30T04:00:00Z", "traffic": {t},"#),
        )
    };
    assert_eq!(coverage(&top(r#""unknown""#)), Some((None, "guessed")));
    assert_eq!(coverage(&top(r#""declared""#)), None);
    // A Kubernetes import's entry in a file that says nothing: unknown.
    let imported = edit(
        web,
        r#""cpu": 2, "memory_gib": 4, "source": "kubernetes:c-fra/shop/Deployment/web"}"#,
    );
    assert_eq!(coverage(&imported), Some((None, "guessed")));

    assert_eq!(
        errors(&with(r#""observed""#)),
        [(
            "/services/0/traffic".to_string(),
            Some(20),
            "expected \"declared\", a number, a fact object {value, class, source, observed_at} or null, found the string \"observed\"".to_string()
        )]
    );
    assert_eq!(
        errors(&with("0")),
        [(
            "/services/0/traffic".to_string(),
            Some(20),
            "an observation window must be more than 0 seconds; write null for traffic never observed".to_string()
        )]
    );
    assert_eq!(
        errors(&top(r#""complete""#)),
        [(
            "/traffic".to_string(),
            Some(4),
            "expected one of \"declared\", \"unknown\", found \"complete\"".to_string()
        )]
    );
}
