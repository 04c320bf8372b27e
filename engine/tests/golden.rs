//! Golden tests: small hand-built estates, one per cost factor and per hard
//! constraint, with the ranked moves printed through `text::move_line` and
//! whatever else the case is about (refusal codes, can't-tell entries,
//! evidence wording, RTT derivations).
//!
//! Every snapshot was checked by hand against SPEC §1–§6 and
//! `docs/estate-format.md`; the arithmetic is in the comment above each
//! `expect!`. Update with `UPDATE_EXPECT=1 cargo test -p berth-engine
//! --release --test golden`, then re-check the numbers before committing.
//!
//! Estates are written in a tiny line format that expands to an estate
//! file (JSON) and goes through the real loader:
//!
//! ```text
//! at 2026-11-30T04:00:00Z              top-level observed_at
//! traffic declared|unknown             top-level traffic coverage
//! site ID JURISDICTION [LAT LON] [k=v…]
//! cluster ID SITE [k=v…]               defaults: prod, general, healthy,
//!                                      cpu 100 (50 free), memory 400 (200 free)
//! link A B RTT [k=v…]                  site link
//! path A B RTT                         measured cluster-to-cluster path
//! service ID CLUSTER [k=v…]            defaults: owner team, cpu 1, memory 1;
//!                                      local_volumes, pinned, jurisdictions,
//!                                      trust_zone, tiers go to constraints
//! flow FROM TO [WEIGHT [MB_S]]
//! ```
//!
//! A value is `null`, `V@class` or `V@class@time` (a fact object), or any
//! JSON scalar/array written without spaces; anything else is a string.
//! Bare numbers are `reported` facts observed at the file's `observed_at`
//! (absent: at evaluation time, so they never go stale).

use std::fmt::Write;

use berth_engine::advise::Advice;
use berth_engine::constraints;
use berth_engine::cost::{self, Ctx, State};
use berth_engine::estate::parse_time;
use berth_engine::gen::NOW;
use berth_engine::rtt::RttTable;
use berth_engine::{advise, load, request, text, Estate, Format, Policy};
use expect_test::{expect, Expect};
use serde_json::{json, Map, Value};

// ---------------------------------------------------------------------------
// The line format.

fn value(token: &str) -> Value {
    if token == "null" {
        return Value::Null;
    }
    let parts: Vec<&str> = token.split('@').collect();
    if parts.len() >= 2 {
        let v: f64 = parts[0].parse().expect("fact value");
        let mut m = Map::new();
        m.insert("value".into(), json!(v));
        m.insert("class".into(), json!(parts[1]));
        if let Some(t) = parts.get(2) {
            m.insert("observed_at".into(), json!(t));
        }
        return Value::Object(m);
    }
    serde_json::from_str(token).unwrap_or_else(|_| json!(token))
}

fn apply(obj: &mut Map<String, Value>, kv: &[&str], constraint_keys: &[&str]) {
    for t in kv {
        let (k, v) = t
            .split_once('=')
            .unwrap_or_else(|| panic!("expected k=v, got {t:?}"));
        if constraint_keys.contains(&k) {
            let c = obj
                .entry("constraints")
                .or_insert_with(|| json!({}))
                .as_object_mut()
                .unwrap();
            c.insert(k.into(), value(v));
        } else {
            obj.insert(k.into(), value(v));
        }
    }
}

/// Expand the line format into an estate file (JSON text).
fn file(src: &str) -> String {
    let mut top = Map::new();
    top.insert("schema".into(), json!(1));
    top.insert("name".into(), json!("golden"));
    let mut arrays: [(&str, Vec<Value>); 6] = [
        ("sites", vec![]),
        ("clusters", vec![]),
        ("links", vec![]),
        ("paths", vec![]),
        ("services", vec![]),
        ("flows", vec![]),
    ];
    for line in src.lines().map(str::trim).filter(|l| !l.is_empty()) {
        let t: Vec<&str> = line.split_whitespace().collect();
        let (kind, args) = (t[0], &t[1..]);
        let pos: Vec<&str> = args.iter().copied().filter(|a| !a.contains('=')).collect();
        let kv: Vec<&str> = args.iter().copied().filter(|a| a.contains('=')).collect();
        let mut o = Map::new();
        let slot = match kind {
            "at" => {
                top.insert("observed_at".into(), json!(pos[0]));
                continue;
            }
            "traffic" => {
                top.insert("traffic".into(), json!(pos[0]));
                continue;
            }
            "site" => {
                o.insert("id".into(), json!(pos[0]));
                o.insert("name".into(), json!(pos[0]));
                o.insert("jurisdiction".into(), json!(pos[1]));
                if pos.len() == 4 {
                    o.insert("lat".into(), value(pos[2]));
                    o.insert("lon".into(), value(pos[3]));
                }
                0
            }
            "cluster" => {
                for (k, v) in [
                    ("id", json!(pos[0])),
                    ("site", json!(pos[1])),
                    ("tier", json!("prod")),
                    ("trust_zone", json!("general")),
                    ("health", json!("healthy")),
                    ("cpu_total", json!(100)),
                    ("memory_total_gib", json!(400)),
                    ("cpu_free", json!(50)),
                    ("memory_free_gib", json!(200)),
                ] {
                    o.insert(k.into(), v);
                }
                1
            }
            "link" | "path" => {
                o.insert("a".into(), json!(pos[0]));
                o.insert("b".into(), json!(pos[1]));
                o.insert("rtt_ms".into(), value(pos[2]));
                if kind == "link" {
                    2
                } else {
                    3
                }
            }
            "service" => {
                for (k, v) in [
                    ("id", json!(pos[0])),
                    ("owner", json!("team")),
                    ("cluster", json!(pos[1])),
                    ("cpu", json!(1)),
                    ("memory_gib", json!(1)),
                ] {
                    o.insert(k.into(), v);
                }
                4
            }
            "flow" => {
                o.insert("from".into(), json!(pos[0]));
                o.insert("to".into(), json!(pos[1]));
                if let Some(w) = pos.get(2) {
                    o.insert("weight".into(), value(w));
                }
                if let Some(m) = pos.get(3) {
                    o.insert("mb_s".into(), value(m));
                }
                5
            }
            other => panic!("unknown line kind {other:?}"),
        };
        let constraint_keys: &[&str] = if kind == "service" {
            &[
                "local_volumes",
                "pinned",
                "jurisdictions",
                "trust_zone",
                "tiers",
            ]
        } else {
            &[]
        };
        apply(&mut o, &kv, constraint_keys);
        arrays[slot].1.push(Value::Object(o));
    }
    for (k, v) in arrays {
        top.insert(k.into(), Value::Array(v));
    }
    serde_json::to_string_pretty(&Value::Object(top)).unwrap()
}

fn estate(src: &str) -> Estate {
    let text = file(src);
    load(&text, Format::Json).unwrap_or_else(|e| panic!("{e:#?}\n{text}"))
}

fn policy(json: &str) -> Policy {
    Policy::from_json(json).unwrap()
}

fn at(t: &str) -> i64 {
    parse_time(t).unwrap()
}

// ---------------------------------------------------------------------------
// Printing.

fn totals(label: &str, t: &cost::Totals) -> String {
    format!(
        "{label}: cost {:.2} = rtt {:.2} + xsite {:.2} + headroom {:.2}; {:.2} MB/s cross-site\n",
        t.cost, t.round_trip, t.cross_site, t.headroom, t.cross_site_mb_s
    )
}

/// Moves (with evidence wording), immovable services with codes, can't-tell
/// entries and unknown capacity: everything in the advice but digests.
fn show(a: &Advice) -> String {
    let mut out = String::new();
    out += &totals("before", &a.totals_before);
    out += &totals("after", &a.totals_after);
    if a.moves.is_empty() {
        out += "no moves\n";
    }
    for m in &a.moves {
        let _ = writeln!(out, "{}. {}", m.step, text::move_line(m));
        if let Some(e) = &m.evidence {
            let _ = writeln!(out, "   {e}");
        }
    }
    for i in &a.immovable {
        let _ = writeln!(out, "immovable {} on {}:", i.service, i.cluster);
        for r in &i.reasons {
            let _ = writeln!(
                out,
                "  {} [{}] {}",
                r.code.as_str(),
                r.clusters.join(" "),
                r.message
            );
        }
    }
    for c in &a.cant_tell {
        let _ = writeln!(
            out,
            "cant_tell {} {}→{} gain if it fits {} ({}): {}",
            c.service,
            c.from,
            c.cluster,
            text::signed(c.gain_if_it_fits),
            c.fact,
            c.message
        );
    }
    for u in &a.unknown_capacity {
        let _ = writeln!(
            out,
            "unknown capacity {}: {}",
            u.cluster,
            u.missing.join(", ")
        );
    }
    for u in &a.unknown_requests {
        let _ = writeln!(
            out,
            "unknown request {} on {}: {}",
            u.service,
            u.cluster,
            u.missing.join(", ")
        );
    }
    out
}

/// The deciding facts of every move, one per line.
fn facts(a: &Advice) -> String {
    let mut out = String::new();
    for m in &a.moves {
        let _ = writeln!(out, "{}. {} (bar {:.2})", m.step, text::move_line(m), m.bar);
        for f in &m.facts {
            let _ = writeln!(
                out,
                "   {} = {} {} (stored {}) from {:?}, age {}s{}",
                f.fact,
                f.value.map_or("unknown".into(), |v| format!("{v}")),
                f.class.as_str(),
                f.stored_class.as_str(),
                f.source,
                f.age_s,
                f.derivation.map_or(String::new(), |d| format!(", {d}"))
            );
        }
        if let Some(e) = &m.evidence {
            let _ = writeln!(out, "   {e}");
        }
    }
    out
}

/// One candidate move from the initial placement, whatever its verdict:
/// terms, gain, the service's current cost, both bars, fit and refusals.
fn candidate(e: &Estate, p: &Policy, now: i64, service: &str, to: &str) -> String {
    let ctx = Ctx::new(e, p, now);
    let state = State::initial(e);
    let s = e.service_index(service).unwrap();
    let c = e.cluster_index(to).unwrap();
    let t = cost::move_terms(&ctx, &state, s, c);
    let current = state.current_cost(&ctx, s);
    let mut out = format!(
        "{service} {}→{to}: gain {} = rtt {} + xsite {} + headroom {} + copy {}; \
         current cost {:.2}, bar {:.2} (15 % → {:.2}, points → {:.2})\n",
        e.clusters[state.placement[s]].id,
        text::signed(t.gain()),
        text::signed(t.round_trip),
        text::signed(t.cross_site),
        text::signed(t.headroom),
        text::signed(t.copy),
        current,
        cost::bar(&ctx, current),
        p.min_gain_fraction * current,
        p.min_gain_points,
    );
    let _ = writeln!(out, "  fit: {:?}", state.fit(&ctx, s, c));
    for r in constraints::static_refusals(e, s, c) {
        let _ = writeln!(out, "  refused: {} — {}", r.code.as_str(), r.message);
    }
    out
}

fn check(actual: String, expect: Expect) {
    expect.assert_eq(&actual);
}

// ---------------------------------------------------------------------------
// Cost factors.

/// Round trip: weight × RTT, per flow. web on c-a calls api (w 2) and db
/// (w 1) on c-b, 5 ms apart (measured path, one site, so no cross-site
/// term). web c-a→c-b: (2 + 1) × (5 − 0.3) = 14.1. api or db moving to
/// c-a would gain only 9.4 or 4.7, and after web moves nothing gains.
#[test]
fn factor_round_trip() {
    let src = "
        site fra eu
        cluster c-a fra
        cluster c-b fra
        path c-a c-b 5
        service web c-a
        service api c-b
        service db c-b
        flow web api 2 0
        flow web db 1 0
    ";
    let e = estate(src);
    // Totals: before 2×5 + 1×5 = 15; after 3 × 0.3 = 0.9.
    check(
        show(&advise(&e, &Policy::default(), NOW)),
        expect![[r#"
            before: cost 15.00 = rtt 15.00 + xsite 0.00 + headroom 0.00; 0.00 MB/s cross-site
            after: cost 0.90 = rtt 0.90 + xsite 0.00 + headroom 0.00; 0.00 MB/s cross-site
            1. web c-a→c-b +14.1 [rtt +14.1] reported
        "#]],
    );
    // The round-trip weight scales the term: ×2 → 28.2.
    check(
        show(&advise(&e, &policy(r#"{"round_trip_weight": 2}"#), NOW)),
        expect![[r#"
            before: cost 30.00 = rtt 30.00 + xsite 0.00 + headroom 0.00; 0.00 MB/s cross-site
            after: cost 1.80 = rtt 1.80 + xsite 0.00 + headroom 0.00; 0.00 MB/s cross-site
            1. web c-a→c-b +28.2 [rtt +28.2] reported
        "#]],
    );
}

/// Cross-site: cross_site_weight × MB/s of flows whose ends are on
/// different sites. Flows have weight 0 so only traffic counts. web (3
/// MB/s) and worker (2 MB/s) in fra call db in par: db par→fra saves
/// 8 × (3 + 2) = 40; web or worker moving to par saves only 24 or 16.
#[test]
fn factor_cross_site() {
    let src = "
        site fra eu
        site par eu
        link fra par 10
        cluster c-fra fra
        cluster c-par par
        service web c-fra
        service worker c-fra
        service db c-par
        flow web db 0 3
        flow worker db 0 2
    ";
    let e = estate(src);
    check(
        show(&advise(&e, &Policy::default(), NOW)),
        expect![[r#"
            before: cost 40.00 = rtt 0.00 + xsite 40.00 + headroom 0.00; 5.00 MB/s cross-site
            after: cost 0.00 = rtt 0.00 + xsite 0.00 + headroom 0.00; 0.00 MB/s cross-site
            1. db c-par→c-fra +40.0 [xsite +40.0] reported
        "#]],
    );
    // With a cross-site weight of 0 no move gains anything.
    check(
        show(&advise(&e, &policy(r#"{"cross_site_weight": 0}"#), NOW)),
        expect![[r#"
            before: cost 0.00 = rtt 0.00 + xsite 0.00 + headroom 0.00; 5.00 MB/s cross-site
            after: cost 0.00 = rtt 0.00 + xsite 0.00 + headroom 0.00; 5.00 MB/s cross-site
            no moves
        "#]],
    );
}

/// Headroom: headroom_weight × (u − 0.8) / 0.2 per resource, exactly zero
/// at or below 0.8. c-hot has 10 of 100 cores free (u 0.9: 15 × 0.1 / 0.2
/// = 7.5 points); big (10 cores) leaving brings it to u 0.8: 0 points, and
/// c-cool stays at u 0.6. small (1 core) would save only 0.75 < 2 points.
#[test]
fn factor_headroom() {
    let src = "
        site fra eu
        cluster c-hot fra cpu_free=10
        cluster c-cool fra
        service big c-hot cpu=10
        service small c-hot cpu=1
    ";
    let e = estate(src);
    check(
        show(&advise(&e, &Policy::default(), NOW)),
        expect![[r#"
            before: cost 7.50 = rtt 0.00 + xsite 0.00 + headroom 7.50; 0.00 MB/s cross-site
            after: cost 0.00 = rtt 0.00 + xsite 0.00 + headroom 0.00; 0.00 MB/s cross-site
            1. big c-hot→c-cool +7.5 [headroom +7.5] reported
        "#]],
    );
}

/// The headroom curve itself, on a 100-core cluster with 400 GiB memory
/// (200 free, u 0.5): cores used → points. Exactly 0.0 up to and including
/// u 0.8, then linear: 0.81 → 0.75, 0.9 → 7.5, 1.0 → 15, 1.1 → 22.5.
#[test]
fn factor_headroom_curve_is_zero_below_threshold() {
    let e = estate(
        "
        site fra eu
        cluster c fra cpu_free=0
    ",
    );
    let p = Policy::default();
    let ctx = Ctx::new(&e, &p, NOW);
    let mut out = String::new();
    // cpu_free 0 = 100 cores used; a negative load frees cores.
    for used in [0.0, 50.0, 79.0, 79.99, 80.0, 81.0, 90.0, 100.0, 110.0] {
        let h = ctx.headroom(
            0,
            constraints::Load {
                cpu_in: used - 100.0,
                memory_in: 0.0,
            },
        );
        let _ = writeln!(
            out,
            "u {:.4} → {h:.4}{}",
            used / 100.0,
            if h == 0.0 { " (exactly 0)" } else { "" }
        );
    }
    check(
        out,
        expect![[r#"
        u 0.0000 → 0.0000 (exactly 0)
        u 0.5000 → 0.0000 (exactly 0)
        u 0.7900 → 0.0000 (exactly 0)
        u 0.7999 → 0.0000 (exactly 0)
        u 0.8000 → 0.0000 (exactly 0)
        u 0.8100 → 0.7500
        u 0.9000 → 7.5000
        u 1.0000 → 15.0000
        u 1.1000 → 22.5000
    "#]],
    );
}

/// Copy: 0.5 points per GB of the moved service's data, counted once.
/// app in fra calls db in par (w 3, 10 ms link): db par→fra saves
/// 3 × (10 − 0.3) = 29.1 in round trip. app also calls api in fra (w 5),
/// so app moving to par would lose more than it gains. db's current cost
/// is 3 × 10 = 30, so its bar is max(0.15 × 30, 2) = 4.5.
///   no data:  +29.1.
///   40 GB:    copy −20 → +9.1, still ≥ 4.5. But moving app and api to
///             par together (a compound step, weighed against the best
///             single move on a small estate) saves the same 29.1 points
///             of round trip with no copy, so the advice takes the pair:
///             +77.6 − 48.5 = +29.1 against db's +9.1. (Until issue 18's
///             weighed groups, the advice moved db here.)
///   100 GB:   copy −50 → −20.9: db cannot move; the same pair does.
#[test]
fn factor_copy_cost_blocks_big_data() {
    let src = |data: &str| {
        format!(
            "
        site fra eu
        site par eu
        link fra par 10
        cluster c-fra fra
        cluster c-par par
        service app c-fra
        service api c-fra
        service db c-par data_gb={data}
        flow app db 3 0
        flow app api 5 0
    "
        )
    };
    let p = Policy::default();
    let mut out = String::new();
    for data in ["0", "40", "100"] {
        let e = estate(&src(data));
        let _ = writeln!(out, "data_gb {data}:");
        out += &show(&advise(&e, &p, NOW));
        out += &candidate(&e, &p, NOW, "db", "c-fra");
    }
    check(
        out,
        expect![[r#"
            data_gb 0:
            before: cost 31.50 = rtt 31.50 + xsite 0.00 + headroom 0.00; 0.00 MB/s cross-site
            after: cost 2.40 = rtt 2.40 + xsite 0.00 + headroom 0.00; 0.00 MB/s cross-site
            1. db c-par→c-fra +29.1 [rtt +29.1] reported
            db c-par→c-fra: gain +29.1 = rtt +29.1 + xsite +0.0 + headroom +0.0 + copy +0.0; current cost 30.00, bar 4.50 (15 % → 4.50, points → 2.00)
              fit: Fits
            data_gb 40:
            before: cost 31.50 = rtt 31.50 + xsite 0.00 + headroom 0.00; 0.00 MB/s cross-site
            after: cost 2.40 = rtt 2.40 + xsite 0.00 + headroom 0.00; 0.00 MB/s cross-site
            1. api c-fra→c-par -48.5 [rtt -48.5] reported
            2. app c-fra→c-par +77.6 [rtt +77.6] reported
            db c-par→c-fra: gain +9.1 = rtt +29.1 + xsite +0.0 + headroom +0.0 + copy -20.0; current cost 30.00, bar 4.50 (15 % → 4.50, points → 2.00)
              fit: Fits
            data_gb 100:
            before: cost 31.50 = rtt 31.50 + xsite 0.00 + headroom 0.00; 0.00 MB/s cross-site
            after: cost 2.40 = rtt 2.40 + xsite 0.00 + headroom 0.00; 0.00 MB/s cross-site
            1. api c-fra→c-par -48.5 [rtt -48.5] reported
            2. app c-fra→c-par +77.6 [rtt +77.6] reported
            db c-par→c-fra: gain -20.9 = rtt +29.1 + xsite +0.0 + headroom +0.0 + copy -50.0; current cost 30.00, bar 4.50 (15 % → 4.50, points → 2.00)
              fit: Fits
        "#]],
    );
}

/// The "Moves that clear the bars" part of the advice as text, through
/// its blank line: what a user reads of the steps and their groups.
fn moves_text(a: &berth_engine::Advice) -> String {
    text::advice(a)
        .lines()
        .skip_while(|l| !l.starts_with("Moves that clear"))
        .take_while(|l| !l.is_empty())
        .map(|l| format!("{l}\n"))
        .collect()
}

/// The 40 GB case of [`factor_copy_cost_blocks_big_data`] as a user reads
/// it: the pair is weighed against db's single move and wins, and its
/// summary says what each member alone would do, what the single move and
/// the members one at a time would gain.
#[test]
fn weighed_group_says_what_it_beat() {
    let e = estate(
        "
        site fra eu
        site par eu
        link fra par 10
        cluster c-fra fra
        cluster c-par par
        service app c-fra
        service api c-fra
        service db c-par data_gb=40
        flow app db 3 0
        flow app api 5 0
    ",
    );
    let a = advise(&e, &Policy::default(), NOW);
    check(
        moves_text(&a),
        expect![[r#"
            Moves that clear the bars, in order, numbered by step (a compound step is one step;
            confidence = the weakest deciding fact; a step resting on guesses says so,
            is marked "-" and is not a recommendation):
              1. Move api and app to c-par together: +29.1 reported (moved together)
                 Moving api alone costs 48.5 points; moving app alone costs 19.4 points; moved together, api and app gain 29.1 points; the step must gain at least 4.72 points (15 % of its cost, 31.5). Taken over the best single move (db to c-fra, +9.1): moved one at a time, each where it is best alone, the group's services would gain 0.
                 api c-fra→c-par -48.5 [rtt -48.5] reported
                 app c-fra→c-par +77.6 [rtt +77.6] reported
        "#]],
    );
}

/// A planned group that clears a full cluster: x in fra calls p, pinned
/// on c-par, heavily (w 4 over a 10 ms link: moving x next to p saves
/// 4 × (10 − 0.3) = 38.8 of round trip, less the headroom it causes
/// there). x needs 4 cores; c-par reports 4.3 free of 20 (±15 %: certainly
/// 3.655), so x's move clears its bar but can't be certified. Four
/// services on c-par with no flows (0.1 cores each) can go to c-fra or
/// c-ams, where they gain nothing (c-par is under the headroom knee of 80 %), so no
/// single move clears a bar, and one leaver (a make-room pair) certifies
/// 3.755 cores, not 4. The targeted plan's local search finds the four
/// leaving and x arriving (3.655 + 0.4 ≥ 4): one planned group of five,
/// its summary saying what it was taken over (nothing: every other plan
/// stops at once).
#[test]
fn planned_group_clears_a_full_cluster() {
    let e = estate(
        "
        site fra eu
        site par eu
        site ams eu
        link fra par 10
        link fra ams 10
        link par ams 10
        cluster c-fra fra cpu_total=64 cpu_free=60 memory_total_gib=64 memory_free_gib=60
        cluster c-par par cpu_total=20 cpu_free=4.3 memory_total_gib=64 memory_free_gib=60
        cluster c-ams ams cpu_total=64 cpu_free=60 memory_total_gib=64 memory_free_gib=60
        service x c-fra cpu=4 memory_gib=1
        service p c-par pinned=true
        service l1 c-par cpu=0.1 memory_gib=0.1
        service l2 c-par cpu=0.1 memory_gib=0.1
        service l3 c-par cpu=0.1 memory_gib=0.1
        service l4 c-par cpu=0.1 memory_gib=0.1
        flow x p 4 0
    ",
    );
    let a = advise(&e, &Policy::default(), NOW);
    check(
        moves_text(&a),
        expect![[r#"
            Moves that clear the bars, in order, numbered by step (a compound step is one step;
            confidence = the weakest deciding fact; a step resting on guesses says so,
            is marked "-" and is not a recommendation):
              1. Move l1 to c-fra, l2 to c-ams, l3 to c-ams, l4 to c-ams and x to c-par together: +26.4 reported (moved together to a searched placement)
                 Moving l1 alone gains nothing; moving l2 alone gains nothing; moving l3 alone gains nothing; moving l4 alone gains nothing; moving x alone does not certainly fit on c-par; moved together, l1, l2, l3, l4 and x gain 26.42 points; 5 services must gain at least 10 points (2 each). Taken over the best plan of single moves and smaller groups (0 moves, +0): this step and the moves after it improve the estate by +26.42.
                 l1 c-par→c-fra +0.0 [] reported
                 l2 c-par→c-ams +0.0 [] reported
                 l3 c-par→c-ams +0.0 [] reported
                 l4 c-par→c-ams +0.0 [] reported
                 x c-fra→c-par +26.4 [rtt +38.8, headroom -12.4] reported
        "#]],
    );
}

// The two bars. x on c-1 calls p on c-3 (pinned; x may not go to c-3,
// another trust zone). Moving x to c-2 shortens the path: the gain is
// 4 × (RTT c-1↔c-3 − RTT c-2↔c-3).
fn bars_estate(rtt_1_3: f64, rtt_2_3: f64) -> Estate {
    estate(&format!(
        "
        site fra eu
        cluster c-1 fra
        cluster c-2 fra
        cluster c-3 fra trust_zone=pci
        path c-1 c-3 {rtt_1_3}
        path c-2 c-3 {rtt_2_3}
        service x c-1 trust_zone=general
        service p c-3 pinned=true
        flow x p 4 0
    "
    ))
}

/// The 15 % bar alone: current cost 4 × 20 = 80, gain 4 × 2.5 = 10 ≥ 2
/// points but < 15 % × 80 = 12, so no move. Lowering the fraction to 10 %
/// (bar 8) lets exactly this move through.
#[test]
fn bar_fraction_blocks_on_its_own() {
    let e = bars_estate(20.0, 17.5);
    let mut out = String::new();
    out += &candidate(&e, &Policy::default(), NOW, "x", "c-2");
    out += &show(&advise(&e, &Policy::default(), NOW));
    out += "min_gain_fraction 0.10:\n";
    out += &show(&advise(&e, &policy(r#"{"min_gain_fraction": 0.10}"#), NOW));
    check(
        out,
        expect![[r#"
        x c-1→c-2: gain +10.0 = rtt +10.0 + xsite +0.0 + headroom +0.0 + copy +0.0; current cost 80.00, bar 12.00 (15 % → 12.00, points → 2.00)
          fit: Fits
        before: cost 80.00 = rtt 80.00 + xsite 0.00 + headroom 0.00; 0.00 MB/s cross-site
        after: cost 80.00 = rtt 80.00 + xsite 0.00 + headroom 0.00; 0.00 MB/s cross-site
        no moves
        immovable p on c-3:
          pinned [] p is pinned to nodes of c-3
        min_gain_fraction 0.10:
        before: cost 80.00 = rtt 80.00 + xsite 0.00 + headroom 0.00; 0.00 MB/s cross-site
        after: cost 70.00 = rtt 70.00 + xsite 0.00 + headroom 0.00; 0.00 MB/s cross-site
        1. x c-1→c-2 +10.0 [rtt +10.0] reported
        immovable p on c-3:
          pinned [] p is pinned to nodes of c-3
    "#]],
    );
}

/// The 2-point bar alone: current cost 4 × 1.25 = 5, gain 4 × 0.375 = 1.5
/// ≥ 15 % × 5 = 0.75 but < 2 points, so no move. With min_gain_points 1
/// the same move goes through.
#[test]
fn bar_points_blocks_on_its_own() {
    let e = bars_estate(1.25, 0.875);
    let mut out = String::new();
    out += &candidate(&e, &Policy::default(), NOW, "x", "c-2");
    out += &show(&advise(&e, &Policy::default(), NOW));
    out += "min_gain_points 1:\n";
    out += &show(&advise(&e, &policy(r#"{"min_gain_points": 1}"#), NOW));
    check(
        out,
        expect![[r#"
        x c-1→c-2: gain +1.5 = rtt +1.5 + xsite +0.0 + headroom +0.0 + copy +0.0; current cost 5.00, bar 2.00 (15 % → 0.75, points → 2.00)
          fit: Fits
        before: cost 5.00 = rtt 5.00 + xsite 0.00 + headroom 0.00; 0.00 MB/s cross-site
        after: cost 5.00 = rtt 5.00 + xsite 0.00 + headroom 0.00; 0.00 MB/s cross-site
        no moves
        immovable p on c-3:
          pinned [] p is pinned to nodes of c-3
        min_gain_points 1:
        before: cost 5.00 = rtt 5.00 + xsite 0.00 + headroom 0.00; 0.00 MB/s cross-site
        after: cost 3.50 = rtt 3.50 + xsite 0.00 + headroom 0.00; 0.00 MB/s cross-site
        1. x c-1→c-2 +1.5 [rtt +1.5] reported
        immovable p on c-3:
          pinned [] p is pinned to nodes of c-3
    "#]],
    );
}

/// Sequential: a (w 5) and b (w 4) in par both call p (pinned) on c-fra-1;
/// c-fra-1 has 51 of 100 cores free (reported, ±15 %), a and b need 30
/// each. Alone, each fits (30 ≤ 51 × 0.85 = 43.35), as the request shows.
/// a goes first: 5 × (10 − 0.3) = 48.5 (u 0.79 after, no headroom). Then b
/// no longer fits c-fra-1 (at most 51 × 1.15 − 30 = 28.65 free) and goes
/// to c-fra-2 in the same site: 4 × (10 − 1) = 36.
#[test]
fn sequential_first_move_fills_a_cluster() {
    let e = estate(
        "
        site fra eu
        site par eu
        link fra par 10
        cluster c-fra-1 fra cpu_free=51
        cluster c-fra-2 fra cpu_total=200 cpu_free=150
        cluster c-par par
        service a c-par cpu=30
        service b c-par cpu=30
        service p c-fra-1 pinned=true
        flow a p 5 0
        flow b p 4 0
    ",
    );
    let p = Policy::default();
    let mut out = String::new();
    for s in request::build(&e, &p, NOW).services {
        let _ = writeln!(out, "request {}: candidates {:?}", s.id, s.candidates);
    }
    out += &show(&advise(&e, &p, NOW));
    check(
        out,
        expect![[r#"
        request a: candidates ["c-fra-1", "c-fra-2"]
        request b: candidates ["c-fra-1", "c-fra-2"]
        request p: candidates []
        before: cost 90.00 = rtt 90.00 + xsite 0.00 + headroom 0.00; 0.00 MB/s cross-site
        after: cost 5.50 = rtt 5.50 + xsite 0.00 + headroom 0.00; 0.00 MB/s cross-site
        1. a c-par→c-fra-1 +48.5 [rtt +48.5] reported
        2. b c-par→c-fra-2 +36.0 [rtt +36.0] reported
        immovable p on c-fra-1:
          pinned [] p is pinned to nodes of c-fra-1
    "#]],
    );
}

/// Sequential, not simultaneous: a on c-1 and b on c-2 only talk to each
/// other (w 3, 5 ms path). Judged at once, each would move to the other's
/// cluster and they would still be apart. Judged in sequence, a (the lower
/// id, equal gain 3 × 4.7 = 14.1) moves to c-2, and then b has no reason
/// to move.
#[test]
fn sequential_never_into_each_others_place() {
    let e = estate(
        "
        site fra eu
        cluster c-1 fra
        cluster c-2 fra
        path c-1 c-2 5
        service b c-2
        service a c-1
        flow a b 3 0
    ",
    );
    check(
        show(&advise(&e, &Policy::default(), NOW)),
        expect![[r#"
        before: cost 15.00 = rtt 15.00 + xsite 0.00 + headroom 0.00; 0.00 MB/s cross-site
        after: cost 0.90 = rtt 0.90 + xsite 0.00 + headroom 0.00; 0.00 MB/s cross-site
        1. a c-1→c-2 +14.1 [rtt +14.1] reported
    "#]],
    );
}

// ---------------------------------------------------------------------------
// Hard constraints. In each, x on c-fra would gain a lot on c-lon next to
// its peer p (pinned): 4 × (15 − 0.3) = 58.8 round trip + 8 × 0.5 = 4
// cross-site = 62.8. The constraint must refuse it regardless.

fn constrained(service_extra: &str, lon_extra: &str) -> Estate {
    estate(&format!(
        "
        site fra eu
        site lon uk
        link fra lon 15
        cluster c-fra fra
        cluster c-lon lon {lon_extra}
        service x c-fra {service_extra}
        service p c-lon pinned=true
        flow x p 4 0.5
    "
    ))
}

fn constraint_case(service_extra: &str, lon_extra: &str) -> String {
    let e = constrained(service_extra, lon_extra);
    let p = Policy::default();
    let mut out = candidate(&e, &p, NOW, "x", "c-lon");
    out += &show(&advise(&e, &p, NOW));
    out
}

/// Baseline without a constraint: the move happens, +62.8.
#[test]
fn constraint_none_baseline() {
    check(
        constraint_case("", ""),
        expect![[r#"
        x c-fra→c-lon: gain +62.8 = rtt +58.8 + xsite +4.0 + headroom +0.0 + copy +0.0; current cost 64.00, bar 9.60 (15 % → 9.60, points → 2.00)
          fit: Fits
        before: cost 64.00 = rtt 60.00 + xsite 4.00 + headroom 0.00; 0.50 MB/s cross-site
        after: cost 1.20 = rtt 1.20 + xsite 0.00 + headroom 0.00; 0.00 MB/s cross-site
        1. x c-fra→c-lon +62.8 [rtt +58.8, xsite +4.0] reported
        immovable p on c-lon:
          pinned [] p is pinned to nodes of c-lon
    "#]],
    );
}

#[test]
fn constraint_local_volumes() {
    check(
        constraint_case("local_volumes=true", ""),
        expect![[r#"
        x c-fra→c-lon: gain +62.8 = rtt +58.8 + xsite +4.0 + headroom +0.0 + copy +0.0; current cost 64.00, bar 9.60 (15 % → 9.60, points → 2.00)
          fit: Fits
          refused: local_volumes — x keeps its data on local volumes in c-fra
        before: cost 64.00 = rtt 60.00 + xsite 4.00 + headroom 0.00; 0.50 MB/s cross-site
        after: cost 64.00 = rtt 60.00 + xsite 4.00 + headroom 0.00; 0.50 MB/s cross-site
        no moves
        immovable p on c-lon:
          pinned [] p is pinned to nodes of c-lon
        immovable x on c-fra:
          local_volumes [] x keeps its data on local volumes in c-fra
    "#]],
    );
}

#[test]
fn constraint_pinned() {
    check(
        constraint_case("pinned=true", ""),
        expect![[r#"
        x c-fra→c-lon: gain +62.8 = rtt +58.8 + xsite +4.0 + headroom +0.0 + copy +0.0; current cost 64.00, bar 9.60 (15 % → 9.60, points → 2.00)
          fit: Fits
          refused: pinned — x is pinned to nodes of c-fra
        before: cost 64.00 = rtt 60.00 + xsite 4.00 + headroom 0.00; 0.50 MB/s cross-site
        after: cost 64.00 = rtt 60.00 + xsite 4.00 + headroom 0.00; 0.50 MB/s cross-site
        no moves
        immovable p on c-lon:
          pinned [] p is pinned to nodes of c-lon
        immovable x on c-fra:
          pinned [] x is pinned to nodes of c-fra
    "#]],
    );
}

/// c-lon's site is in `uk`; x may only use `eu`.
#[test]
fn constraint_jurisdiction() {
    check(
        constraint_case(r#"jurisdictions=["eu"]"#, ""),
        expect![[r#"
            x c-fra→c-lon: gain +62.8 = rtt +58.8 + xsite +4.0 + headroom +0.0 + copy +0.0; current cost 64.00, bar 9.60 (15 % → 9.60, points → 2.00)
              fit: Fits
              refused: jurisdiction — the data of x may stay only in eu; c-lon is in uk (lon)
            before: cost 64.00 = rtt 60.00 + xsite 4.00 + headroom 0.00; 0.50 MB/s cross-site
            after: cost 64.00 = rtt 60.00 + xsite 4.00 + headroom 0.00; 0.50 MB/s cross-site
            no moves
            immovable p on c-lon:
              pinned [] p is pinned to nodes of c-lon
            immovable x on c-fra:
              jurisdiction [c-lon] the data of x may stay only in eu; c-lon is in uk (lon)
        "#]],
    );
}

#[test]
fn constraint_trust_zone() {
    check(
        constraint_case("trust_zone=general", "trust_zone=pci"),
        expect![[r#"
            x c-fra→c-lon: gain +62.8 = rtt +58.8 + xsite +4.0 + headroom +0.0 + copy +0.0; current cost 64.00, bar 9.60 (15 % → 9.60, points → 2.00)
              fit: Fits
              refused: trust_zone — x must run in trust zone general; c-lon is in pci
            before: cost 64.00 = rtt 60.00 + xsite 4.00 + headroom 0.00; 0.50 MB/s cross-site
            after: cost 64.00 = rtt 60.00 + xsite 4.00 + headroom 0.00; 0.50 MB/s cross-site
            no moves
            immovable p on c-lon:
              pinned [] p is pinned to nodes of c-lon
            immovable x on c-fra:
              trust_zone [c-lon] x must run in trust zone general; c-lon is in pci
        "#]],
    );
}

#[test]
fn constraint_tier() {
    check(
        constraint_case(r#"tiers=["prod"]"#, "tier=staging"),
        expect![[r#"
            x c-fra→c-lon: gain +62.8 = rtt +58.8 + xsite +4.0 + headroom +0.0 + copy +0.0; current cost 64.00, bar 9.60 (15 % → 9.60, points → 2.00)
              fit: Fits
              refused: tier — x may run only on prod clusters; c-lon is staging
            before: cost 64.00 = rtt 60.00 + xsite 4.00 + headroom 0.00; 0.50 MB/s cross-site
            after: cost 64.00 = rtt 60.00 + xsite 4.00 + headroom 0.00; 0.50 MB/s cross-site
            no moves
            immovable p on c-lon:
              pinned [] p is pinned to nodes of c-lon
            immovable x on c-fra:
              tier [c-lon] x may run only on prod clusters; c-lon is staging
        "#]],
    );
}

#[test]
fn constraint_draining_cluster() {
    check(
        constraint_case("", "health=draining"),
        expect![[r#"
        x c-fra→c-lon: gain +62.8 = rtt +58.8 + xsite +4.0 + headroom +0.0 + copy +0.0; current cost 64.00, bar 9.60 (15 % → 9.60, points → 2.00)
          fit: Fits
          refused: cluster_draining — c-lon is draining and takes no new services
        before: cost 64.00 = rtt 60.00 + xsite 4.00 + headroom 0.00; 0.50 MB/s cross-site
        after: cost 64.00 = rtt 60.00 + xsite 4.00 + headroom 0.00; 0.50 MB/s cross-site
        no moves
        immovable p on c-lon:
          pinned [] p is pinned to nodes of c-lon
        immovable x on c-fra:
          cluster_draining [c-lon] c-lon is draining and takes no new services
    "#]],
    );
}

#[test]
fn constraint_down_cluster() {
    check(
        constraint_case("", "health=down"),
        expect![[r#"
        x c-fra→c-lon: gain +62.8 = rtt +58.8 + xsite +4.0 + headroom +0.0 + copy +0.0; current cost 64.00, bar 9.60 (15 % → 9.60, points → 2.00)
          fit: Fits
          refused: cluster_down — c-lon is down
        before: cost 64.00 = rtt 60.00 + xsite 4.00 + headroom 0.00; 0.50 MB/s cross-site
        after: cost 64.00 = rtt 60.00 + xsite 4.00 + headroom 0.00; 0.50 MB/s cross-site
        no moves
        immovable p on c-lon:
          pinned [] p is pinned to nodes of c-lon
        immovable x on c-fra:
          cluster_down [c-lon] c-lon is down
    "#]],
    );
}

/// A `watch` cluster is not refused.
#[test]
fn constraint_watch_cluster_takes_services() {
    check(
        constraint_case("", "health=watch"),
        expect![[r#"
        x c-fra→c-lon: gain +62.8 = rtt +58.8 + xsite +4.0 + headroom +0.0 + copy +0.0; current cost 64.00, bar 9.60 (15 % → 9.60, points → 2.00)
          fit: Fits
        before: cost 64.00 = rtt 60.00 + xsite 4.00 + headroom 0.00; 0.50 MB/s cross-site
        after: cost 1.20 = rtt 1.20 + xsite 0.00 + headroom 0.00; 0.00 MB/s cross-site
        1. x c-fra→c-lon +62.8 [rtt +58.8, xsite +4.0] reported
        immovable p on c-lon:
          pinned [] p is pinned to nodes of c-lon
    "#]],
    );
}

/// No room for CPU: x needs 4 cores, c-lon has 2 free (reported ±15 %: at
/// most 2.3). Capacity is not a static constraint, so x is not
/// "immovable"; it simply has no candidate (the request shows none).
#[test]
fn constraint_no_room_cpu() {
    let mut out = constraint_case("cpu=4", "cpu_total=8 cpu_free=2");
    let e = constrained("cpu=4", "cpu_total=8 cpu_free=2");
    let r = request::build(&e, &Policy::default(), NOW);
    let x = r.services.iter().find(|s| s.id == "x").unwrap();
    let _ = writeln!(
        out,
        "request x: candidates {:?} cant_tell {:?}",
        x.candidates, x.cant_tell
    );
    check(
        out,
        expect![[r#"
        x c-fra→c-lon: gain +29.1 = rtt +58.8 + xsite +4.0 + headroom -33.8 + copy +0.0; current cost 64.00, bar 9.60 (15 % → 9.60, points → 2.00)
          fit: DoesNotFit { refusal: Refusal { code: NoRoomCpu, message: "needs 4 cores but c-lon has at most 2.3 cores free (reported CPU ±15%)" } }
        before: cost 64.00 = rtt 60.00 + xsite 4.00 + headroom 0.00; 0.50 MB/s cross-site
        after: cost 64.00 = rtt 60.00 + xsite 4.00 + headroom 0.00; 0.50 MB/s cross-site
        no moves
        immovable p on c-lon:
          pinned [] p is pinned to nodes of c-lon
        request x: candidates [] cant_tell []
    "#]],
    );
}

/// No room for memory: x needs 16 GiB, c-lon has 10 free (at most 11.5).
#[test]
fn constraint_no_room_memory() {
    check(
        constraint_case("memory_gib=16", "memory_total_gib=64 memory_free_gib=10"),
        expect![[r#"
            x c-fra→c-lon: gain +44.1 = rtt +58.8 + xsite +4.0 + headroom -18.8 + copy +0.0; current cost 64.00, bar 9.60 (15 % → 9.60, points → 2.00)
              fit: DoesNotFit { refusal: Refusal { code: NoRoomMemory, message: "needs 16 GiB but c-lon has at most 11.5 GiB free (reported memory ±15%)" } }
            before: cost 67.28 = rtt 60.00 + xsite 4.00 + headroom 3.28; 0.50 MB/s cross-site
            after: cost 67.28 = rtt 60.00 + xsite 4.00 + headroom 3.28; 0.50 MB/s cross-site
            no moves
            immovable p on c-lon:
              pinned [] p is pinned to nodes of c-lon
        "#]],
    );
}

/// Can't tell, unknown: c-lon's free CPU is unknown. The move is not made,
/// and it is not silently dropped either: it is listed under can't tell
/// with the fact named, and c-lon is listed as unknown capacity.
#[test]
fn constraint_cant_tell_unknown_capacity() {
    let mut out = constraint_case("", "cpu_free=null");
    let e = constrained("", "cpu_free=null");
    let r = request::build(&e, &Policy::default(), NOW);
    let x = r.services.iter().find(|s| s.id == "x").unwrap();
    let _ = writeln!(
        out,
        "request x: candidates {:?} cant_tell {:?}",
        x.candidates, x.cant_tell
    );
    check(
        out,
        expect![[r#"
        x c-fra→c-lon: gain +62.8 = rtt +58.8 + xsite +4.0 + headroom +0.0 + copy +0.0; current cost 64.00, bar 9.60 (15 % → 9.60, points → 2.00)
          fit: CantTell { fact: "c-lon cpu_free", message: "free CPU of c-lon is unknown" }
        before: cost 64.00 = rtt 60.00 + xsite 4.00 + headroom 0.00; 0.50 MB/s cross-site
        after: cost 64.00 = rtt 60.00 + xsite 4.00 + headroom 0.00; 0.50 MB/s cross-site
        no moves
        immovable p on c-lon:
          pinned [] p is pinned to nodes of c-lon
        cant_tell x c-fra→c-lon gain if it fits +62.8 (c-lon cpu_free): free CPU of c-lon is unknown
        unknown capacity c-lon: c-lon cpu_free
        request x: candidates [] cant_tell ["c-lon"]
    "#]],
    );
}

/// Can't tell, unknown request: x declares no CPU request (`cpu: null`,
/// as an importer writes for a container without one). Its fit is can't
/// tell on every cluster, with the request named as the fact; the move is
/// listed under can't tell, never made, and x under unknown requests. The
/// gain it would have counts no headroom for the unknown CPU (0 points, as
/// for an unknown free capacity). The decider request says the same:
/// `cpu: null`, no candidates, c-lon can't tell.
#[test]
fn constraint_cant_tell_unknown_request() {
    let mut out = constraint_case("cpu=null", "");
    let e = constrained("cpu=null", "");
    let r = request::build(&e, &Policy::default(), NOW);
    let x = r.services.iter().find(|s| s.id == "x").unwrap();
    let _ = writeln!(
        out,
        "request x: cpu {:?} memory_gib {:?} candidates {:?} cant_tell {:?}",
        x.cpu, x.memory_gib, x.candidates, x.cant_tell
    );
    check(
        out,
        expect![[r#"
            x c-fra→c-lon: gain +62.8 = rtt +58.8 + xsite +4.0 + headroom +0.0 + copy +0.0; current cost 64.00, bar 9.60 (15 % → 9.60, points → 2.00)
              fit: CantTell { fact: "x cpu", message: "the CPU request of x is unknown" }
            before: cost 64.00 = rtt 60.00 + xsite 4.00 + headroom 0.00; 0.50 MB/s cross-site
            after: cost 64.00 = rtt 60.00 + xsite 4.00 + headroom 0.00; 0.50 MB/s cross-site
            no moves
            immovable p on c-lon:
              pinned [] p is pinned to nodes of c-lon
            cant_tell x c-fra→c-lon gain if it fits +62.8 (x cpu): the CPU request of x is unknown
            unknown request x on c-fra: cpu
            request x: cpu None memory_gib Some(1.0) candidates [] cant_tell ["c-lon"]
        "#]],
    );
}

/// An unknown request does not hide a certain refusal: x's memory request
/// is unknown but it needs 60 cores and c-lon has at most 57.5 free, so it
/// does not fit whatever its memory. With both requests unknown and c-lon's
/// free CPU unknown too, the request is the fact named (it is the same on
/// every destination).
#[test]
fn constraint_unknown_request_with_other_verdicts() {
    let mut out = String::new();
    for (svc, lon) in [
        ("cpu=60 memory_gib=null", ""),
        ("cpu=null memory_gib=null", "cpu_free=null"),
    ] {
        let _ = writeln!(out, "{svc} / {lon}:");
        let e = constrained(svc, lon);
        let p = Policy::default();
        out += &candidate(&e, &p, NOW, "x", "c-lon");
    }
    check(
        out,
        expect![[r#"
        cpu=60 memory_gib=null / :
        x c-fra→c-lon: gain +40.3 = rtt +58.8 + xsite +4.0 + headroom -22.5 + copy +0.0; current cost 64.00, bar 9.60 (15 % → 9.60, points → 2.00)
          fit: DoesNotFit { refusal: Refusal { code: NoRoomCpu, message: "needs 60 cores but c-lon has at most 57.5 cores free (reported CPU ±15%)" } }
        cpu=null memory_gib=null / cpu_free=null:
        x c-fra→c-lon: gain +62.8 = rtt +58.8 + xsite +4.0 + headroom +0.0 + copy +0.0; current cost 64.00, bar 9.60 (15 % → 9.60, points → 2.00)
          fit: CantTell { fact: "x cpu", message: "the CPU request of x is unknown" }
    "#]],
    );
}

/// Can't tell, within the margin: x needs 4.4 cores; c-lon reports 4.5
/// free (±15 %: 3.825 to 5.175). 4.4 is above the pessimistic end, below
/// the optimistic one. With a measured fact (±5 %: 4.275 to 4.725) it is
/// still can't tell; with 5 measured free (at least 4.75) it fits.
#[test]
fn constraint_cant_tell_within_margin() {
    let mut out = String::new();
    for free in ["4.5", "4.5@measured", "5@measured"] {
        let _ = writeln!(out, "cpu_free {free}:");
        out += &constraint_case("cpu=4.4", &format!("cpu_total=8 cpu_free={free}"));
    }
    check(
        out,
        expect![[r#"
        cpu_free 4.5:
        x c-fra→c-lon: gain +48.7 = rtt +58.8 + xsite +4.0 + headroom -14.1 + copy +0.0; current cost 64.00, bar 9.60 (15 % → 9.60, points → 2.00)
          fit: CantTell { fact: "c-lon cpu_free", message: "needs 4.4 cores; c-lon has between 3.83 and 5.18 cores free (reported fact, ±15%)" }
        before: cost 64.00 = rtt 60.00 + xsite 4.00 + headroom 0.00; 0.50 MB/s cross-site
        after: cost 64.00 = rtt 60.00 + xsite 4.00 + headroom 0.00; 0.50 MB/s cross-site
        no moves
        immovable p on c-lon:
          pinned [] p is pinned to nodes of c-lon
        cant_tell x c-fra→c-lon gain if it fits +48.7 (c-lon cpu_free): needs 4.4 cores; c-lon has between 3.83 and 5.18 cores free (reported fact, ±15%)
        cpu_free 4.5@measured:
        x c-fra→c-lon: gain +48.7 = rtt +58.8 + xsite +4.0 + headroom -14.1 + copy +0.0; current cost 64.00, bar 9.60 (15 % → 9.60, points → 2.00)
          fit: CantTell { fact: "c-lon cpu_free", message: "needs 4.4 cores; c-lon has between 4.27 and 4.73 cores free (measured fact, ±5%)" }
        before: cost 64.00 = rtt 60.00 + xsite 4.00 + headroom 0.00; 0.50 MB/s cross-site
        after: cost 64.00 = rtt 60.00 + xsite 4.00 + headroom 0.00; 0.50 MB/s cross-site
        no moves
        immovable p on c-lon:
          pinned [] p is pinned to nodes of c-lon
        cant_tell x c-fra→c-lon gain if it fits +48.7 (c-lon cpu_free): needs 4.4 cores; c-lon has between 4.27 and 4.73 cores free (measured fact, ±5%)
        cpu_free 5@measured:
        x c-fra→c-lon: gain +53.4 = rtt +58.8 + xsite +4.0 + headroom -9.4 + copy +0.0; current cost 64.00, bar 9.60 (15 % → 9.60, points → 2.00)
          fit: Fits
        before: cost 64.00 = rtt 60.00 + xsite 4.00 + headroom 0.00; 0.50 MB/s cross-site
        after: cost 10.58 = rtt 1.20 + xsite 0.00 + headroom 9.38; 0.00 MB/s cross-site
        1. x c-fra→c-lon +53.4 [rtt +58.8, xsite +4.0, headroom -9.4] reported
        immovable p on c-lon:
          pinned [] p is pinned to nodes of c-lon
    "#]],
    );
}

/// A static refusal never depends on the gain: all the reasons a service
/// can't go anywhere are listed, grouped by code, each with its clusters.
#[test]
fn constraint_reasons_grouped_by_code() {
    let e = estate(
        "
        site fra eu
        site lon uk
        cluster c-home fra
        cluster c-lon-1 lon
        cluster c-lon-2 lon tier=staging
        cluster c-fra-pci fra trust_zone=pci
        cluster c-fra-down fra health=down
        service x c-home jurisdictions=[\"eu\"] trust_zone=general tiers=[\"prod\"]
    ",
    );
    check(
        show(&advise(&e, &Policy::default(), NOW)),
        expect![[r#"
            before: cost 0.00 = rtt 0.00 + xsite 0.00 + headroom 0.00; 0.00 MB/s cross-site
            after: cost 0.00 = rtt 0.00 + xsite 0.00 + headroom 0.00; 0.00 MB/s cross-site
            no moves
            immovable x on c-home:
              jurisdiction [c-lon-1 c-lon-2] the data of x may stay only in eu; c-lon-1 is in uk (lon)
              trust_zone [c-fra-pci] x must run in trust zone general; c-fra-pci is in pci
              tier [c-lon-2] x may run only on prod clusters; c-lon-2 is staging
              cluster_down [c-fra-down] c-fra-down is down
        "#]],
    );
}

// ---------------------------------------------------------------------------
// Facts, confidence and the evidence ladder.

/// Staleness: the fra–lon link is measured at 04:00. Every other fact is
/// measured at 04:20 (from the future at 04:05, so fresh). The move's
/// confidence is its weakest deciding fact: measured at 04:05, reported at
/// 04:20 (the link is 20 min old, past the 15-min window), inferred a day
/// later (past 15 min + 24 h). Gain and verdict do not change, and the
/// stored class stays measured.
#[test]
fn staleness_degrades_confidence() {
    let t = "2026-11-30T04:20:00Z";
    let e = estate(&format!(
        "
        site fra eu
        site lon uk
        link fra lon 15@measured@2026-11-30T04:00:00Z
        cluster c-fra fra cpu_free=50@measured@{t} memory_free_gib=200@measured@{t}
        cluster c-lon lon cpu_free=50@measured@{t} memory_free_gib=200@measured@{t}
        service x c-fra
        service p c-lon pinned=true
        flow x p 4@measured@{t} 0.5@measured@{t}
    "
    ));
    let p = Policy::default();
    let mut out = String::new();
    for now in [
        "2026-11-30T04:05:00Z",
        "2026-11-30T04:20:00Z",
        "2026-12-01T04:20:00Z",
    ] {
        let _ = writeln!(out, "at {now}:");
        out += &facts(&advise(&e, &p, at(now)));
    }
    check(
        out,
        expect![[r#"
        at 2026-11-30T04:05:00Z:
        1. x c-fra→c-lon +62.8 [rtt +58.8, xsite +4.0] measured (bar 9.60)
           c-lon cpu_free = 50 measured (stored measured) from "file", age 0s
           c-lon memory_free_gib = 200 measured (stored measured) from "file", age 0s
           flow x→p mb_s = 0.5 measured (stored measured) from "file", age 0s
           flow x→p weight = 4 measured (stored measured) from "file", age 0s
           rtt c-fra↔c-lon = 15 measured (stored measured) from "file", age 300s, site_link
           rtt c-lon↔c-lon = 0.3 measured (stored measured) from "policy nominal", age 0s, same_cluster
        at 2026-11-30T04:20:00Z:
        1. x c-fra→c-lon +62.8 [rtt +58.8, xsite +4.0] reported (bar 9.60)
           c-lon cpu_free = 50 measured (stored measured) from "file", age 0s
           c-lon memory_free_gib = 200 measured (stored measured) from "file", age 0s
           flow x→p mb_s = 0.5 measured (stored measured) from "file", age 0s
           flow x→p weight = 4 measured (stored measured) from "file", age 0s
           rtt c-fra↔c-lon = 15 reported (stored measured) from "file", age 1200s, site_link
           rtt c-lon↔c-lon = 0.3 measured (stored measured) from "policy nominal", age 0s, same_cluster
        at 2026-12-01T04:20:00Z:
        1. x c-fra→c-lon +62.8 [rtt +58.8, xsite +4.0] inferred (bar 9.60)
           c-lon cpu_free = 50 reported (stored measured) from "file", age 86400s
           c-lon memory_free_gib = 200 reported (stored measured) from "file", age 86400s
           flow x→p mb_s = 0.5 reported (stored measured) from "file", age 86400s
           flow x→p weight = 4 reported (stored measured) from "file", age 86400s
           rtt c-fra↔c-lon = 15 inferred (stored measured) from "file", age 87600s, site_link
           rtt c-lon↔c-lon = 0.3 measured (stored measured) from "policy nominal", age 0s, same_cluster
    "#]],
    );
}

/// Guesses: x on c-nw (a site with no coordinates and no link, so RTT is
/// unknown: 80 ms, guessed) calls p on c-fra. Deciding facts: the flow's
/// weight and MB/s, the RTT c-fra↔c-nw (guessed), c-fra↔c-fra (same
/// cluster) and c-fra's free CPU and memory: 6 inputs.
///   all declared:         1 of 6 is a guess (the unknown RTT).
///   flow facts guessed:   3 of 6 are guesses.
/// Gain: 1 × (80 − 0.3) + 8 × 0.25 = 81.7.
#[test]
fn evidence_wording_counts_guesses() {
    let src = |w: &str, m: &str| {
        format!(
            "
        site fra eu 50.11 8.68
        site nw eu
        cluster c-fra fra
        cluster c-nw nw
        service x c-nw
        service p c-fra pinned=true
        flow x p {w} {m}
    "
        )
    };
    let p = Policy::default();
    let mut out = String::new();
    for (w, m) in [("1", "0.25"), ("1@guessed", "0.25@guessed")] {
        let a = advise(&estate(&src(w, m)), &p, NOW);
        out += &show(&a);
        out += &facts(&a);
    }
    check(
        out,
        expect![[r#"
            before: cost 82.00 = rtt 80.00 + xsite 2.00 + headroom 0.00; 0.25 MB/s cross-site
            after: cost 82.00 = rtt 80.00 + xsite 2.00 + headroom 0.00; 0.25 MB/s cross-site
            1. x c-nw→c-fra +81.7 [rtt +79.7, xsite +2.0] guessed
               Not enough evidence to recommend — 1 of 6 inputs is a guess.
            immovable p on c-fra:
              pinned [] p is pinned to nodes of c-fra
            1. x c-nw→c-fra +81.7 [rtt +79.7, xsite +2.0] guessed (bar 12.30)
               c-fra cpu_free = 50 reported (stored reported) from "file", age 0s
               c-fra memory_free_gib = 200 reported (stored reported) from "file", age 0s
               flow x→p mb_s = 0.25 reported (stored reported) from "file", age 0s
               flow x→p weight = 1 reported (stored reported) from "file", age 0s
               rtt c-fra↔c-fra = 0.3 measured (stored measured) from "policy nominal", age 0s, same_cluster
               rtt c-fra↔c-nw = 80 guessed (stored guessed) from "policy default (nothing known)", age 0s, unknown
               Not enough evidence to recommend — 1 of 6 inputs is a guess.
            before: cost 82.00 = rtt 80.00 + xsite 2.00 + headroom 0.00; 0.25 MB/s cross-site
            after: cost 82.00 = rtt 80.00 + xsite 2.00 + headroom 0.00; 0.25 MB/s cross-site
            1. x c-nw→c-fra +81.7 [rtt +79.7, xsite +2.0] guessed
               Not enough evidence to recommend — 3 of 6 inputs are guesses.
            immovable p on c-fra:
              pinned [] p is pinned to nodes of c-fra
            1. x c-nw→c-fra +81.7 [rtt +79.7, xsite +2.0] guessed (bar 12.30)
               c-fra cpu_free = 50 reported (stored reported) from "file", age 0s
               c-fra memory_free_gib = 200 reported (stored reported) from "file", age 0s
               flow x→p mb_s = 0.25 guessed (stored guessed) from "file", age 0s
               flow x→p weight = 1 guessed (stored guessed) from "file", age 0s
               rtt c-fra↔c-fra = 0.3 measured (stored measured) from "policy nominal", age 0s, same_cluster
               rtt c-fra↔c-nw = 80 guessed (stored guessed) from "policy default (nothing known)", age 0s, unknown
               Not enough evidence to recommend — 3 of 6 inputs are guesses.
        "#]],
    );
}

/// Every rung of the ladder, from `RttTable` (cluster pairs) and from the
/// decider request (site pairs, with derivation and class).
///   fra (50.11, 8.68), par (48.86, 2.35), ams (52.37, 4.90), nw: no coords.
///   c-fra-1↔c-fra-1 same cluster 0.3 measured
///   c-fra-1↔c-par-1 measured path 9.4 (beats the 20 ms link)
///   c-fra-2↔c-par-1 site link 20 (reported)
///   c-fra-1↔c-fra-2 same site 1.0 (reported)
///   c-fra-1↔c-ams-1 great circle: 4.3 + 0.0161 × 363.77 km = 10.16 (inferred)
///   c-par-1↔c-ams-1 the par–ams link has no value, so great circle too:
///                   4.3 + 0.0161 × 429.70 km = 11.22
/// (distances by haversine with R = 6371 km, computed independently)
///   c-fra-1↔c-nw-1  unknown: 80 (guessed)
#[test]
fn rtt_ladder_every_rung() {
    let e = estate(
        "
        site fra eu 50.11 8.68
        site par eu 48.86 2.35
        site ams eu 52.37 4.90
        site nw eu
        link fra par 20
        link par ams null
        path c-fra-1 c-par-1 9.4@measured
        cluster c-fra-1 fra
        cluster c-fra-2 fra
        cluster c-par-1 par
        cluster c-ams-1 ams
        cluster c-nw-1 nw
    ",
    );
    let p = Policy::default();
    let table = RttTable::build(&e, &p, NOW);
    let mut out = String::new();
    for (a, b) in [
        ("c-fra-1", "c-fra-1"),
        ("c-fra-1", "c-par-1"),
        ("c-fra-2", "c-par-1"),
        ("c-fra-1", "c-fra-2"),
        ("c-fra-1", "c-ams-1"),
        ("c-par-1", "c-ams-1"),
        ("c-fra-1", "c-nw-1"),
    ] {
        let (i, j) = (e.cluster_index(a).unwrap(), e.cluster_index(b).unwrap());
        let r = table.get(i, j);
        assert_eq!(r, table.get(j, i), "symmetric");
        let f = table.fact_ref(&e, i, j, NOW);
        let _ = writeln!(
            out,
            "{a}↔{b}: {:.2} ms {} {} ({})",
            r.ms,
            r.derivation.as_str(),
            r.class.as_str(),
            f.source
        );
    }
    out += "request links:\n";
    for l in request::build(&e, &p, NOW).links {
        let _ = writeln!(
            out,
            "  {}–{}: {:.2} ms {} {}",
            l.a,
            l.b,
            l.rtt_ms,
            l.derivation,
            l.class.as_str()
        );
    }
    check(
        out,
        expect![[r#"
        c-fra-1↔c-fra-1: 0.30 ms same_cluster measured (policy nominal)
        c-fra-1↔c-par-1: 9.40 ms measured_path measured (file)
        c-fra-2↔c-par-1: 20.00 ms site_link reported (file)
        c-fra-1↔c-fra-2: 1.00 ms same_site reported (policy nominal)
        c-fra-1↔c-ams-1: 10.16 ms great_circle inferred (great-circle estimate)
        c-par-1↔c-ams-1: 11.22 ms great_circle inferred (great-circle estimate)
        c-fra-1↔c-nw-1: 80.00 ms unknown guessed (policy default (nothing known))
        request links:
          ams–fra: 10.16 ms great_circle inferred
          ams–nw: 80.00 ms unknown guessed
          ams–par: 11.22 ms great_circle inferred
          fra–nw: 80.00 ms unknown guessed
          fra–par: 20.00 ms site_link reported
          nw–par: 80.00 ms unknown guessed
    "#]],
    );
}

/// Ties break on ids, not file order. x-2 and x-1 (listed in that order)
/// are identical, and so are c-near-b and c-near-a (listed in that order):
/// both services move, x-1 first, both to c-near-a. far and near are Paris
/// and Frankfurt, 477.7 km apart: great circle 4.3 + 0.0161 × 477.7 =
/// 11.99 ms, so each gains 2 × (11.99 − 1.0 same site) = 21.98. Before:
/// 2 flows × 2 × 11.99 = 47.97; after: 2 × 2 × 1.0 = 4.
#[test]
fn tie_break_on_ids() {
    let e = estate(
        "
        site far eu 48.86 2.35
        site near eu 50.11 8.68
        cluster c-far far
        cluster c-near-b near
        cluster c-near-a near
        cluster c-p near trust_zone=pci
        service x-2 c-far trust_zone=general
        service x-1 c-far trust_zone=general
        service p c-p pinned=true
        flow x-2 p 2 0
        flow x-1 p 2 0
    ",
    );
    check(
        show(&advise(&e, &Policy::default(), NOW)),
        expect![[r#"
        before: cost 47.97 = rtt 47.97 + xsite 0.00 + headroom 0.00; 0.00 MB/s cross-site
        after: cost 4.00 = rtt 4.00 + xsite 0.00 + headroom 0.00; 0.00 MB/s cross-site
        1. x-1 c-far→c-near-a +22.0 [rtt +22.0] inferred
        2. x-2 c-far→c-near-a +22.0 [rtt +22.0] inferred
        immovable p on c-p:
          pinned [] p is pinned to nodes of c-p
    "#]],
    );
}

/// The sample estate's whole advice, as `berth advise --format text` prints
/// it, at the time it is meant to be evaluated. The eight moves, their
/// terms and both totals were reproduced by an independent re-implementation
/// of SPEC §1–§6 (a short script, not in the repo). Spot checks:
///   analytics-rollup iad→dub: rtt 2.5 × 67.2 + 0.4 × 0.3 − (2.5 × 0.3 +
///     0.4 × 67.2) = 140.49; xsite 8 × (35 − 1.5) = 268; c-dub-1 goes to
///     u 0.825 CPU / 0.803 memory: headroom −2.11.
///   nw-erp-bridge: 12 deciding facts, 8 guesses (6 guessed or unknown flow
///     facts, 2 unknown RTTs to the site without coordinates).
///   session-store leaves c-fra-1 (u 0.97 CPU, 0.92 memory): headroom +3.91
///     for 0.48 more round trip (0.6 ms path instead of same cluster).
#[test]
fn sample_estate_advice_text() {
    let text = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../examples/estates/sample.json"
    ))
    .unwrap();
    let e = load(&text, Format::Json).unwrap();
    let a = advise(&e, &Policy::default(), at("2026-11-30T04:05:00Z"));
    check(
        text::advice(&a),
        expect![[r#"
            Estate Acme Retail (sample estate) (version 45a6a1d18de3381b), policy 795cfe0c62069052, evaluated at 2026-11-30T04:05:00Z
            Before: cost 1687.4 (round trip 1045.1, cross-site 616.9, headroom 25.5); cross-site traffic 77.1 MB/s
            After:  cost 1050.8 (round trip 737.2, cross-site 307.5, headroom 6.1); cross-site traffic 38.4 MB/s
            The best possible is at least 936.7 points; the recommended moves capture at least 84.8 % of the improvement that can exist.
            Not counted above: 1 move resting on guesses (below) would add 53.2 points if the evidence held.

            Moves that clear the bars, in order, numbered by step (a compound step is one step;
            confidence = the weakest deciding fact; a step resting on guesses says so,
            is marked "-" and is not a recommendation):
              1. analytics-rollup c-iad-1→c-dub-1 +406.4 [rtt +140.5, xsite +268.0, headroom -2.1] reported
              2. cart c-par-1→c-fra-2 +165.5 [rtt +136.7, xsite +28.8] inferred
               - nw-erp-bridge c-nw-1→c-fra-2 +53.2 [rtt +51.6, xsite +1.6] guessed
                 Not enough evidence to recommend — 8 of 12 inputs are guesses.
              3. notifications c-par-2→c-fra-2 +21.6 [rtt +20.0, xsite +1.6] measured
              4. invoice-pdf c-par-2→c-fra-2 +13.2 [rtt +6.0, xsite +7.2] measured
              5. feature-flags c-lon-1→c-fra-2 +6.6 [rtt +6.0, xsite +0.6] inferred
              6. email-sender c-par-2→c-fra-2 +6.0 [rtt +3.6, xsite +2.4] measured
              7. session-store c-fra-1→c-fra-2 +3.4 [rtt -0.5, headroom +3.9] measured
              8. Move carrier-gateway and shipping-quotes to c-fra-3 together: +9.2 reported (moved together)
                 Moving carrier-gateway alone costs 14.15 points; moving shipping-quotes alone costs 4.98 points; moved together, carrier-gateway and shipping-quotes gain 9.17 points; 2 services must gain at least 4 points (2 each).
                 carrier-gateway c-par-1→c-fra-3 -14.2 [rtt -13.4, xsite -0.8] reported
                 shipping-quotes c-par-1→c-fra-3 +23.3 [rtt +21.7, xsite +1.6] reported
              9. Move shop-frontend and shop-gateway to c-fra-3 together: +4.7 reported (moved together)
                 Moving shop-frontend alone costs 4.02 points; moving shop-gateway alone costs 9.66 points; moved together, shop-frontend and shop-gateway gain 4.71 points; the step must gain at least 4.29 points (15 % of its cost, 28.61).
                 shop-frontend c-fra-1→c-fra-3 -4.0 [rtt -18.1, headroom +14.1] reported
                 shop-gateway c-fra-1→c-fra-3 +8.7 [rtt +5.3, headroom +3.5] reported

            Cannot move:
              card-vault on c-fra-pci: card-vault keeps its data on local volumes in c-fra-pci
              cart-redis on c-fra-1: cart-redis keeps its data on local volumes in c-fra-1
              catalog-db on c-fra-1: catalog-db keeps its data on local volumes in c-fra-1
              edge-cache-sin on c-sin-edge: trust_zone (1 cluster, e.g. edge-cache-sin runs in trust zone general and declares no other (trust zones are never crossed implicitly); c-fra-pci is in pci); tier (14 clusters, e.g. edge-cache-sin may run only on edge clusters; c-dub-1 is prod); cluster_draining (1 cluster, e.g. c-par-2 is draining and takes no new services)
              event-broker on c-dub-1: event-broker keeps its data on local volumes in c-dub-1
              events-db on c-dub-1: events-db keeps its data on local volumes in c-dub-1
              fraud-scoring on c-fra-pci: jurisdiction (6 clusters, e.g. the data of fraud-scoring may stay only in eu; c-iad-1 is in us (Ashburn, Virginia (cloud us-east-1))); trust_zone (14 clusters, e.g. fraud-scoring must run in trust zone pci; c-dub-1 is in general); cluster_draining (1 cluster, e.g. c-par-2 is draining and takes no new services)
              media-store on c-pdx-1: media-store keeps its data on local volumes in c-pdx-1
              nw-sftp-drop on c-nw-1: nw-sftp-drop keeps its data on local volumes in c-nw-1
              orders-db on c-fra-1: orders-db keeps its data on local volumes in c-fra-1
              payments on c-fra-pci: payments is pinned to nodes of c-fra-pci
              reviews-db on c-par-1: reviews-db keeps its data on local volumes in c-par-1
              stg-postgres on c-fra-stg: stg-postgres keeps its data on local volumes in c-fra-stg
              support-db on c-lon-1: support-db keeps its data on local volumes in c-lon-1
              uk-customs-docs on c-lon-1: jurisdiction (14 clusters, e.g. the data of uk-customs-docs may stay only in uk; c-dub-1 is in eu (Dublin (cloud eu-west-1))); trust_zone (1 cluster, e.g. uk-customs-docs runs in trust zone general and declares no other (trust zones are never crossed implicitly); c-fra-pci is in pci); cluster_draining (1 cluster, e.g. c-par-2 is draining and takes no new services)
              user-db on c-fra-2: user-db keeps its data on local volumes in c-fra-2
              vat-reporting-uk on c-lon-1: jurisdiction (14 clusters, e.g. the data of vat-reporting-uk may stay only in uk; c-dub-1 is in eu (Dublin (cloud eu-west-1))); trust_zone (1 cluster, e.g. vat-reporting-uk runs in trust zone general and declares no other (trust zones are never crossed implicitly); c-fra-pci is in pci); cluster_draining (1 cluster, e.g. c-par-2 is draining and takes no new services)
              warehouse on c-iad-1: warehouse keeps its data on local volumes in c-iad-1

            Clusters with unknown free capacity (never a destination):
              c-nw-1: missing c-nw-1 cpu_free
        "#]],
    );
}

// ---------------------------------------------------------------------------
// Traffic coverage (docs/advice.md §2, Traffic coverage).

/// `big` (10 cores) fills c-hot past the headroom threshold; moving it to
/// c-cool (2 ms away, same site) gains the 7.5 headroom points of
/// `factor_headroom`. What its traffic is known to be decides the rest.
fn coverage_case(top: &str, big: &str, flow: &str) -> String {
    let src = format!(
        "
        at 2026-11-30T04:00:00Z
        {top}
        site fra eu
        cluster c-hot fra cpu_free=10
        cluster c-cool fra
        path c-hot c-cool 2@measured
        service big c-hot cpu=10 {big}
        service db c-hot local_volumes=true traffic=300@measured
        {flow}
    "
    );
    let e = estate(&src);
    let out = facts(&advise(&e, &Policy::default(), at("2026-11-30T04:05:00Z")));
    if out.is_empty() {
        "no moves\n".into()
    } else {
        out
    }
}

/// Never observed (what an import from manifests gives): the move rests on
/// the unknown, so it is guessed and worded as such, naming the service.
#[test]
fn coverage_never_observed_is_not_enough_evidence() {
    check(
        coverage_case("", "traffic=null", ""),
        expect![[r#"
        1. big c-hot→c-cool +7.5 [headroom +7.5] guessed (bar 2.00)
           c-cool cpu_free = 50 reported (stored reported) from "file", age 300s
           c-cool memory_free_gib = 200 reported (stored reported) from "file", age 300s
           c-hot cpu_free = 10 reported (stored reported) from "file", age 300s
           c-hot memory_free_gib = 200 reported (stored reported) from "file", age 300s
           traffic big = unknown guessed (stored guessed) from "never observed", age 0s
           Not enough evidence to recommend — the traffic of big has never been observed; 1 of 5 inputs is a guess.
    "#]],
    );
    // The same from a Kubernetes import's provenance, in a file that says
    // nothing of coverage: manifests show no traffic.
    check(
        coverage_case("", "source=kubernetes:c-hot/shop/Deployment/big", ""),
        expect![[r#"
            1. big c-hot→c-cool +7.5 [headroom +7.5] guessed (bar 2.00)
               c-cool cpu_free = 50 reported (stored reported) from "file", age 300s
               c-cool memory_free_gib = 200 reported (stored reported) from "file", age 300s
               c-hot cpu_free = 10 reported (stored reported) from "file", age 300s
               c-hot memory_free_gib = 200 reported (stored reported) from "file", age 300s
               traffic big = unknown guessed (stored guessed) from "never observed", age 0s
               Not enough evidence to recommend — the traffic of big has never been observed; 1 of 5 inputs is a guess.
        "#]],
    );
    // And from the file's default.
    check(
        coverage_case("traffic unknown", "", ""),
        expect![[r#"
        1. big c-hot→c-cool +7.5 [headroom +7.5] guessed (bar 2.00)
           c-cool cpu_free = 50 reported (stored reported) from "file", age 300s
           c-cool memory_free_gib = 200 reported (stored reported) from "file", age 300s
           c-hot cpu_free = 10 reported (stored reported) from "file", age 300s
           c-hot memory_free_gib = 200 reported (stored reported) from "file", age 300s
           traffic big = unknown guessed (stored guessed) from "never observed", age 0s
           Not enough evidence to recommend — the traffic of big has never been observed; 1 of 5 inputs is a guess.
    "#]],
    );
}

/// Observed by a mesh over 300 s five minutes ago, with no flow: a
/// measured zero, and the move is recommended on it.
#[test]
fn coverage_observed_without_flows_is_a_measured_zero() {
    check(
        coverage_case("", "traffic=300@measured", ""),
        expect![[r#"
            1. big c-hot→c-cool +7.5 [headroom +7.5] reported (bar 2.00)
               c-cool cpu_free = 50 reported (stored reported) from "file", age 300s
               c-cool memory_free_gib = 200 reported (stored reported) from "file", age 300s
               c-hot cpu_free = 10 reported (stored reported) from "file", age 300s
               c-hot memory_free_gib = 200 reported (stored reported) from "file", age 300s
               traffic big = 300 measured (stored measured) from "file", age 300s
        "#]],
    );
}

/// Observed with a heavy flow to its database, which cannot move: the
/// move is judged on that flow (5 × 2 ms of round trip outweighs the
/// 7.5 headroom points) and not made at all.
#[test]
fn coverage_observed_flows_decide() {
    check(
        coverage_case("", "traffic=300@measured", "flow big db 5@measured"),
        expect![[r#"
            no moves
        "#]],
    );
}

/// An observation ages like any fact: eight days on, the coverage is a
/// guess and so is the move (counted, not worded as never observed).
#[test]
fn coverage_ages_like_any_fact() {
    check(
        coverage_case("", "traffic=300@measured@2026-11-22T00:00:00Z", ""),
        expect![[r#"
            1. big c-hot→c-cool +7.5 [headroom +7.5] guessed (bar 2.00)
               c-cool cpu_free = 50 reported (stored reported) from "file", age 300s
               c-cool memory_free_gib = 200 reported (stored reported) from "file", age 300s
               c-hot cpu_free = 10 reported (stored reported) from "file", age 300s
               c-hot memory_free_gib = 200 reported (stored reported) from "file", age 300s
               traffic big = 300 guessed (stored measured) from "file", age 705900s
               Not enough evidence to recommend — 1 of 5 inputs is a guess.
        "#]],
    );
}

/// Declared coverage (hand-written estates, the sample): no coverage fact,
/// the advice of a file that says nothing, even for a Kubernetes entry.
#[test]
fn coverage_declared_keeps_the_advice() {
    let declared = coverage_case(
        "traffic declared",
        "source=kubernetes:c-hot/shop/Deployment/big",
        "",
    );
    assert_eq!(declared, coverage_case("", "", ""));
    assert_eq!(declared, coverage_case("", "traffic=\"declared\"", ""));
    check(
        declared,
        expect![[r#"
        1. big c-hot→c-cool +7.5 [headroom +7.5] reported (bar 2.00)
           c-cool cpu_free = 50 reported (stored reported) from "file", age 300s
           c-cool memory_free_gib = 200 reported (stored reported) from "file", age 300s
           c-hot cpu_free = 10 reported (stored reported) from "file", age 300s
           c-hot memory_free_gib = 200 reported (stored reported) from "file", age 300s
    "#]],
    );
}
