//! Generated estates as the quality measurements search them.

use berth_engine::{load, Estate, Format};
use serde_json::{json, Value};

/// The generator's evaluation time.
const NOW_STR: &str = "2026-11-30T04:05:00Z";

/// A generated estate with every guessed fact read as reported and every
/// fact observed at the evaluation time: what the
/// quality measurements search. A move resting on a guess is set apart by
/// rule (`docs/advice.md` §6, "Totals are of what is recommended"), which
/// no search can change and no optimum solver models; measured on these,
/// the shares are of the search alone (`docs/quality.md`).
pub fn trusted(shape: &berth_engine::gen::Shape) -> Estate {
    load(
        &serde_json::to_string(&trusted_file(shape)).unwrap(),
        Format::Json,
    )
    .expect("generated estates load")
}

/// The file [`trusted`] loads.
pub fn trusted_file(shape: &berth_engine::gen::Shape) -> Value {
    fn upgrade(v: &mut Value) {
        match v {
            Value::Object(m) => {
                if m.get("class").and_then(Value::as_str) == Some("guessed") {
                    m.insert("class".into(), json!("reported"));
                }
                // Fresh, so that no fact degrades to a guess with age.
                if m.contains_key("observed_at") {
                    m.insert("observed_at".into(), json!(NOW_STR));
                }
                // A flow fact left unknown is the value the policy assumes
                // for it (a guess), reported instead.
                let assumed = berth_engine::Policy::default().unknown_flow;
                for (key, value) in [("weight", assumed.weight), ("mb_s", assumed.mb_s)] {
                    if m.get(key).is_some_and(Value::is_null) && m.contains_key("from") {
                        m.insert(
                            key.into(),
                            json!({"value": value, "class": "reported", "source": "file", "observed_at": NOW_STR}),
                        );
                    }
                }
                m.values_mut().for_each(upgrade);
            }
            Value::Array(a) => a.iter_mut().for_each(upgrade),
            _ => {}
        }
    }
    let mut file = berth_engine::gen::file(shape);
    upgrade(&mut file);
    // A site without coordinates and without a link has "nothing known"
    // round trips (guessed): give it a reported link at the value the
    // policy assumes, so the cost is the same and the class is not a guess.
    let unknown_ms = berth_engine::Policy::default().rtt.unknown_ms;
    let sites: Vec<(String, bool)> = file["sites"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            (
                s["id"].as_str().unwrap().to_string(),
                s.get("lat").is_some(),
            )
        })
        .collect();
    let linked: Vec<(String, String)> = file["links"]
        .as_array()
        .map(|l| {
            l.iter()
                .map(|l| {
                    (
                        l["a"].as_str().unwrap().into(),
                        l["b"].as_str().unwrap().into(),
                    )
                })
                .collect()
        })
        .unwrap_or_default();
    let mut added = Vec::new();
    for (i, (a, a_has)) in sites.iter().enumerate() {
        for (b, b_has) in &sites[i + 1..] {
            let known = linked
                .iter()
                .any(|(x, y)| (x == a && y == b) || (x == b && y == a));
            if !(a_has & b_has) && !known {
                added.push(json!({"a": a, "b": b, "rtt_ms": {"value": unknown_ms, "class": "reported", "source": "file", "observed_at": NOW_STR}}));
            }
        }
    }
    if !added.is_empty() {
        let links = file
            .as_object_mut()
            .unwrap()
            .entry("links")
            .or_insert_with(|| json!([]));
        links.as_array_mut().unwrap().extend(added);
    }
    file
}
