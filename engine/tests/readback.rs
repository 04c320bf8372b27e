//! A client reads engine results back into the engine's own types: the
//! advice with every Why (what `GET …/advice?why=true`, `berth advise
//! --why` and the browser write) parses into `Advice` and `Vec<MoveWhy>`,
//! and those write the same result again. Numbers are compared to the
//! last bits serde_json's fast float parser may lose (it is not
//! correctly rounded), everything else exactly.

use berth_engine::estate::parse_time;
use berth_engine::{front, gen, Advice, Format, MoveWhy, Policy};
use serde::Deserialize;
use serde_json::Value;

const NOW: &str = "2026-11-30T04:05:00Z";
const SAMPLE: &str = include_str!("../../examples/estates/sample.json");

/// The `why` member of an explained advice (the advice's own members sit
/// beside it and are read by `Advice`).
#[derive(Deserialize)]
struct Whys {
    why: Vec<MoveWhy>,
}

/// Same JSON (members compared by name: the order is the types' own on
/// both sides), numbers within a few units in the last place.
fn same(a: &Value, b: &Value, at: &str) -> Result<(), String> {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => {
            let (x, y) = (x.as_f64().unwrap(), y.as_f64().unwrap());
            if x == y || (x - y).abs() <= 4.0 * f64::EPSILON * x.abs().max(y.abs()) {
                Ok(())
            } else {
                Err(format!("{at}: {x} became {y}"))
            }
        }
        (Value::Array(x), Value::Array(y)) if x.len() == y.len() => x
            .iter()
            .zip(y)
            .enumerate()
            .try_for_each(|(i, (x, y))| same(x, y, &format!("{at}/{i}"))),
        (Value::Object(x), Value::Object(y)) => {
            let (kx, ky): (Vec<_>, Vec<_>) = (x.keys().collect(), y.keys().collect());
            if kx != ky {
                return Err(format!("{at}: members {kx:?} became {ky:?}"));
            }
            x.iter()
                .try_for_each(|(k, v)| same(v, &y[k], &format!("{at}/{k}")))
        }
        _ if a == b => Ok(()),
        _ => Err(format!("{at}: {a} became {b}")),
    }
}

/// The moves read back, and whether the bytes came back identical.
fn read_back(text: &str) -> Result<(usize, bool), String> {
    let estate = berth_engine::load(text, Format::Json).map_err(|e| format!("{e:?}"))?;
    let now = parse_time(NOW).unwrap();
    let bytes = front::advice_why(&estate, &Policy::default(), now);
    let advice: Advice = serde_json::from_str(&bytes).map_err(|e| format!("advice: {e}"))?;
    let whys: Whys = serde_json::from_str(&bytes).map_err(|e| format!("why: {e}"))?;
    let again = front::advice_why_of(&advice, &whys.why);
    same(
        &serde_json::from_str(&bytes).unwrap(),
        &serde_json::from_str(&again).unwrap(),
        "",
    )?;
    Ok((advice.moves.len(), again == bytes))
}

#[test]
fn explained_advice_reads_back_into_the_engine_types() {
    let (mut moves, identical) = read_back(SAMPLE).expect("the sample");
    assert!(moves > 0, "the sample has moves to explain");
    let mut same_bytes = usize::from(identical);
    for seed in 1..=50 {
        let file = serde_json::to_string(&gen::file(&gen::Shape::small(seed))).unwrap();
        let (n, identical) =
            read_back(&file).unwrap_or_else(|e| panic!("generated estate {seed}: {e}"));
        moves += n;
        same_bytes += usize::from(identical);
    }
    println!("{moves} moves read back; {same_bytes} of 51 results byte for byte");
    assert!(moves > 100, "{moves} moves read back");
}

#[test]
fn a_word_outside_the_closed_sets_is_refused_by_name() {
    let estate = berth_engine::load(SAMPLE, Format::Json).unwrap();
    let bytes = front::advice_why(&estate, &Policy::default(), parse_time(NOW).unwrap());
    let bad = bytes.replacen("\"term\":\"round_trip\"", "\"term\":\"latency\"", 1);
    assert_ne!(bad, bytes, "the sample's Why names the round-trip term");
    let e = serde_json::from_str::<Whys>(&bad)
        .err()
        .unwrap()
        .to_string();
    assert!(e.contains("unknown term \"latency\""), "{e}");
    assert!(e.contains("\"round_trip\""), "names what it expected: {e}");
    let bad = bytes.replacen("\"unit\":\"ms\"", "\"unit\":\"fortnights\"", 1);
    let e = serde_json::from_str::<Whys>(&bad)
        .err()
        .unwrap()
        .to_string();
    assert!(e.contains("unknown unit \"fortnights\""), "{e}");
}
