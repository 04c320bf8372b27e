//! `Estate::shift_times` (how the server seeds the sample for any day):
//! an estate with every time moved by d, evaluated at now + d, gets the
//! same advice, Why and placement as the original at now — every age,
//! class, flip condition and score the same — except the estate version,
//! which digests the times themselves.

use berth_engine::{estate, front, gen, Format, Policy};
use serde_json::Value;

/// The result with the version digests taken out (they hash the times).
fn without_versions(mut v: Value) -> Value {
    fn strip(v: &mut Value) {
        match v {
            Value::Object(m) => {
                m.retain(|k, _| !k.contains("version") && k != "now" && k != "evaluated_at");
                m.values_mut().for_each(strip);
            }
            Value::Array(a) => a.iter_mut().for_each(strip),
            _ => {}
        }
    }
    strip(&mut v);
    v
}

fn check(e: &berth_engine::Estate, now: i64, by: i64) {
    let policy = Policy::default();
    let mut moved = e.clone();
    moved.shift_times(by);
    assert_ne!(
        berth_engine::export::version(&moved),
        berth_engine::export::version(e),
        "the times did move"
    );
    let a: Value = serde_json::from_str(&front::advice_why(e, &policy, now)).unwrap();
    let b: Value = serde_json::from_str(&front::advice_why(&moved, &policy, now + by)).unwrap();
    assert_eq!(
        without_versions(a),
        without_versions(b),
        "advice with Why, shifted by {by} s"
    );
    if let Some(s) = e.services.first() {
        let a: Value =
            serde_json::from_str(&front::place(e, &policy, now, &s.id).unwrap()).unwrap();
        let b: Value =
            serde_json::from_str(&front::place(&moved, &policy, now + by, &s.id).unwrap()).unwrap();
        assert_eq!(
            without_versions(a),
            without_versions(b),
            "place {}, shifted by {by} s",
            s.id
        );
    }
    assert_eq!(
        moved.newest_observation(),
        e.newest_observation().map(|t| t + by)
    );
}

#[test]
fn the_sample_shifted_by_a_day_or_years_advises_the_same() {
    let text = include_str!("../../examples/estates/sample.json");
    let e = estate::load(text, Format::Json).unwrap();
    let now = estate::parse_time("2026-11-30T04:05:00Z").unwrap();
    for by in [
        86_400 + 9 * 3600 + 2 * 60,
        4 * 365 * 86_400 + 77,
        -3 * 86_400,
    ] {
        check(&e, now, by);
    }
}

#[test]
fn generated_estates_shifted_advise_the_same() {
    for seed in 0..12 {
        let e = gen::estate(&gen::Shape::small(seed));
        check(&e, gen::NOW, 123_457 * (seed as i64 + 1));
    }
}
