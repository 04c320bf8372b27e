//! Unknown data (docs/advice.md §4 "Unknown data", docs/estate-format.md
//! "Unknown data"): a service whose data size or local-volume status nobody
//! could tell. Neither is read as a default: every move of the service rests
//! on the unknown and is listed apart ("Not enough evidence"), never made;
//! an unknown size is never a 0 GB copy.

use std::fmt::Write;

use berth_engine::estate::Told;
use berth_engine::{advise, explain, export, load, request, text, Advice, Format, Policy};
use expect_test::{expect, Expect};
use serde_json::{json, Value};

/// Evaluation time: five minutes after the file's `observed_at`.
const NOW: &str = "2026-11-30T04:05:00Z";

fn now() -> i64 {
    berth_engine::estate::parse_time(NOW).unwrap()
}

/// `big` (10 cores) fills c-hot past the headroom threshold; moving it to
/// c-cool (2 ms away, same site) gains 7.5 headroom points and is
/// recommended when everything about it is known (traffic observed by a
/// mesh, no flows). `big`'s data fields are replaced by `data`.
fn estate_text(data: Value) -> String {
    let mut big = json!({
        "id": "big", "owner": "shop", "cluster": "c-hot", "cpu": 10, "memory_gib": 1,
        "traffic": {"value": 300, "class": "measured"}
    });
    for (k, v) in data.as_object().unwrap() {
        if k == "local_volumes" {
            big["constraints"] = json!({ "local_volumes": v });
        } else {
            big[k] = v.clone();
        }
    }
    json!({
        "schema": 1,
        "name": "unknown data",
        "observed_at": "2026-11-30T04:00:00Z",
        "sites": [{"id": "fra", "jurisdiction": "eu"}],
        "clusters": [
            {"id": "c-hot", "site": "fra", "tier": "prod", "trust_zone": "general", "health": "healthy",
             "cpu_total": 100, "memory_total_gib": 200, "cpu_free": 10, "memory_free_gib": 200},
            {"id": "c-cool", "site": "fra", "tier": "prod", "trust_zone": "general", "health": "healthy",
             "cpu_total": 100, "memory_total_gib": 200, "cpu_free": 50, "memory_free_gib": 200}
        ],
        "paths": [{"a": "c-hot", "b": "c-cool", "rtt_ms": {"value": 2, "class": "measured"}}],
        "services": [big]
    })
    .to_string()
}

fn advice_of(data: Value) -> (berth_engine::Estate, Advice) {
    let e = load(&estate_text(data), Format::Json).unwrap();
    let a = advise(&e, &Policy::default(), now());
    (e, a)
}

/// Each move with its deciding facts and evidence words, then the
/// totals after (what the recommended moves give).
fn show(a: &Advice) -> String {
    let mut out = String::new();
    for m in &a.moves {
        let _ = writeln!(out, "{}. {}", m.step, text::move_line(m));
        for f in &m.facts {
            let _ = writeln!(
                out,
                "   {} = {} {} from {:?}",
                f.fact,
                f.value.map_or("unknown".into(), |v| format!("{v}")),
                f.class.as_str(),
                f.source,
            );
        }
        if let Some(e) = &m.evidence {
            let _ = writeln!(out, "   {e}");
        }
    }
    let _ = writeln!(
        out,
        "after {:.1}, unbacked {:.1}, recommended {}",
        a.totals_after.cost,
        a.unbacked_gain,
        a.moves.iter().filter(|m| m.is_recommended()).count()
    );
    out
}

fn check(actual: String, expect: Expect) {
    expect.assert_eq(&actual);
}

const WHY: &str = "PersistentVolumeClaims could not be listed (403 Forbidden)";

/// Known data (absent fields): the move is recommended on measured facts.
#[test]
fn known_data_is_recommended() {
    let (_, a) = advice_of(json!({}));
    check(
        show(&a),
        expect![[r#"
            1. big c-hot→c-cool +7.5 [headroom +7.5] reported
               c-cool cpu_free = 50 reported from "file"
               c-cool memory_free_gib = 200 reported from "file"
               c-hot cpu_free = 10 reported from "file"
               c-hot memory_free_gib = 200 reported from "file"
               traffic big = 300 measured from "file"
            after 0.0, unbacked 0.0, recommended 1
        "#]],
    );
}

/// An unknown data size: the same move, its copy term counting no data,
/// rests on the unknown size, says so with the reason, and is not made.
#[test]
fn unknown_data_size_is_not_enough_evidence() {
    let (_, a) = advice_of(json!({ "data_gb": { "unknown": WHY } }));
    check(
        show(&a),
        expect![[r#"
            1. big c-hot→c-cool +7.5 [headroom +7.5] guessed
               c-cool cpu_free = 50 reported from "file"
               c-cool memory_free_gib = 200 reported from "file"
               c-hot cpu_free = 10 reported from "file"
               c-hot memory_free_gib = 200 reported from "file"
               data size big = unknown guessed from "PersistentVolumeClaims could not be listed (403 Forbidden)"
               traffic big = 300 measured from "file"
               Not enough evidence to recommend — the data size of big is unknown (PersistentVolumeClaims could not be listed (403 Forbidden)); 1 of 6 inputs is a guess.
            after 7.5, unbacked 7.5, recommended 0
        "#]],
    );
}

/// An unknown local-volume status is neither a refusal nor a pass: the
/// move is listed apart, naming it.
#[test]
fn unknown_local_volumes_is_not_enough_evidence() {
    let (e, a) = advice_of(json!({ "local_volumes": { "unknown": WHY } }));
    assert!(a.immovable.is_empty(), "not refused: {:?}", a.immovable);
    check(
        show(&a),
        expect![[r#"
            1. big c-hot→c-cool +7.5 [headroom +7.5] guessed
               c-cool cpu_free = 50 reported from "file"
               c-cool memory_free_gib = 200 reported from "file"
               c-hot cpu_free = 10 reported from "file"
               c-hot memory_free_gib = 200 reported from "file"
               local volumes big = unknown guessed from "PersistentVolumeClaims could not be listed (403 Forbidden)"
               traffic big = 300 measured from "file"
               Not enough evidence to recommend — whether big keeps its data on local volumes is unknown (PersistentVolumeClaims could not be listed (403 Forbidden)); 1 of 6 inputs is a guess.
            after 7.5, unbacked 7.5, recommended 0
        "#]],
    );
    // The decider request: whether it may leave can't be told.
    let r = request::build(&e, &Policy::default(), now());
    let big = &r.services[0];
    assert_eq!(big.mobility, "movable");
    assert!(big.candidates.is_empty());
    assert_eq!(big.cant_tell, vec!["c-cool".to_string()]);
    assert_eq!(big.unknown, vec!["local_volumes".to_string()]);
}

/// Both unknown, as a bare `null` each (reason "not stated"); the Why of
/// the move says the copy cost is unknown, not 0.
#[test]
fn both_unknown_and_the_why_says_so() {
    let (e, a) = advice_of(json!({ "data_gb": null, "local_volumes": null }));
    let m = &a.moves[0];
    assert_eq!(
        m.evidence.as_deref(),
        Some("Not enough evidence to recommend — the data size of big is unknown (not stated); whether big keeps its data on local volumes is unknown (not stated); 2 of 7 inputs are guesses.")
    );
    let why = explain(&e, &Policy::default(), now(), &a);
    let mut out = String::new();
    for f in &why[0].flips {
        if f.fact.starts_with("data size") || f.fact.starts_with("local volumes") {
            let _ = writeln!(out, "{} [{}]: {}", f.fact, f.unit, f.sentences.join(" "));
        }
    }
    check(
        out,
        expect![[r#"
            data size big [GB]: The data size of big is unknown (not stated): the move rests on a guess, not analysed. The copy term counts no data for it: the copy cost is unknown, not 0.
            local volumes big []: Whether big keeps its data on local volumes is unknown (not stated): the move rests on a guess, not analysed. A move is allowed only because nothing says it is bound; it may not be.
        "#]],
    );
    // The Why reads back (its units are known words).
    let text = serde_json::to_string(&why).unwrap();
    let back: Vec<berth_engine::MoveWhy> = serde_json::from_str(&text).unwrap();
    assert_eq!(back.len(), why.len());
}

/// A known size of 40 GB costs its copy (20 points at 0.5 per GB), which
/// the 7.5-point gain does not pay: no move. An unknown size is not that
/// case either way — it is never 0 GB copied silently, and never 40.
#[test]
fn a_known_size_is_paid_for() {
    let (_, a) = advice_of(json!({ "data_gb": 40 }));
    check(
        show(&a),
        expect![[r#"
            after 7.5, unbacked 0.0, recommended 0
        "#]],
    );
}

/// The file form: read, written back as read, and the version says which
/// facts are unknown (not why); an estate without unknowns keeps its
/// version.
#[test]
fn file_form_round_trips_and_versions() {
    let known = load(&estate_text(json!({})), Format::Json).unwrap();
    let zero = load(&estate_text(json!({ "data_gb": 0 })), Format::Json).unwrap();
    let unknown = load(
        &estate_text(json!({ "data_gb": { "unknown": WHY } })),
        Format::Json,
    )
    .unwrap();
    let other_why = load(
        &estate_text(json!({ "data_gb": { "unknown": "another reason" } })),
        Format::Json,
    )
    .unwrap();
    let local = load(
        &estate_text(json!({ "local_volumes": { "unknown": WHY } })),
        Format::Json,
    )
    .unwrap();
    assert_eq!(unknown.services[0].data_gb, Told::Unknown(WHY.into()));
    assert_eq!(
        local.services[0].constraints.local_volumes,
        Told::Unknown(WHY.into())
    );
    assert_eq!(export::version(&known), export::version(&zero));
    assert_ne!(export::version(&known), export::version(&unknown));
    assert_ne!(export::version(&unknown), export::version(&local));
    assert_eq!(export::version(&unknown), export::version(&other_why));
    for e in [&unknown, &local] {
        let file = export::to_file(e);
        let back = load(&file.to_string(), Format::Json).unwrap();
        assert_eq!(&back, e);
    }
    let file = export::to_file(&unknown);
    assert_eq!(file["services"][0]["data_gb"], json!({ "unknown": WHY }));
    let file = export::to_file(&local);
    assert_eq!(
        file["services"][0]["constraints"],
        json!({ "local_volumes": { "unknown": WHY } })
    );
    // YAML reads the same form.
    let yaml = "schema: 1\nname: y\nsites: [{id: fra, jurisdiction: eu}]\nclusters: [{id: c, site: fra, tier: prod, trust_zone: general, health: healthy, cpu_total: 1, memory_total_gib: 1}]\nservices:\n- {id: s, owner: o, cluster: c, cpu: 1, memory_gib: 1, data_gb: {unknown: claims not read}, constraints: {local_volumes: null}}\n";
    let y = load(yaml, Format::Yaml).unwrap();
    assert_eq!(
        y.services[0].data_gb,
        Told::Unknown("claims not read".into())
    );
    assert_eq!(
        y.services[0].constraints.local_volumes,
        Told::Unknown("not stated".into())
    );
}

/// A malformed unknown is refused with its path, in JSON and YAML alike.
#[test]
fn malformed_unknowns_are_refused_with_their_path() {
    let cases: [(Value, &str); 5] = [
        (
            json!({ "data_gb": { "unknown": 3 } }),
            "/services/0/data_gb/unknown: expected a string, found the number 3",
        ),
        (
            json!({ "data_gb": { "why": "x" } }),
            "/services/0/data_gb/why: unknown field; expected one of unknown",
        ),
        (
            json!({ "data_gb": {} }),
            "/services/0/data_gb: expected {\"unknown\": \"<why>\"}: the reason it could not be told",
        ),
        (
            json!({ "local_volumes": "yes" }),
            "/services/0/constraints/local_volumes: expected true or false, found the string \"yes\"",
        ),
        (
            json!({ "data_gb": { "unknown": "" } }),
            "/services/0/data_gb/unknown: expected a non-empty string of at most 256 bytes",
        ),
    ];
    for (data, want) in cases {
        let errors = load(&estate_text(data.clone()), Format::Json).unwrap_err();
        let said: Vec<String> = errors
            .iter()
            .map(|e| format!("{}: {}", e.path, e.message))
            .collect();
        assert!(said.iter().any(|s| s == want), "{data}: {said:?}");
    }
}
