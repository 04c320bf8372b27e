//! The engine as the browser runs it: the estate snapshot loaded once, then
//! advice, explanations and what-if projections computed from it with the
//! same `berth-engine` code the server runs, so the results can be compared
//! byte for byte (the parity check).
//!
//! Pure: text in, text out, no I/O. Compiled into both builds (the server
//! side never calls it, but page code that does must compile there too).

use berth_api::EstateSnapshot;
use berth_engine::{advise, estate, front, Advice, Estate, Format, MoveWhy, Policy};
use serde_json::Value;
use sha2::{Digest, Sha256};

/// What `GET /api/estates/{id}/snapshot` says about the estate, besides
/// the document and policy themselves.
#[derive(Clone, Debug, PartialEq)]
pub struct SnapshotMeta {
    pub estate: String,
    pub version: i64,
    pub content_digest: String,
    pub policy_digest: String,
}

/// A loaded snapshot: the engine's model of the estate and its policy.
pub struct Loaded {
    pub meta: SnapshotMeta,
    /// The stored document loaded by the engine: what every page computes
    /// from and what the Estate page shows (every collection in id order).
    pub estate: Estate,
    pub policy: Policy,
    /// The estate's version digest, computed once: what-if projections of
    /// every edit reuse it instead of re-serialising the estate.
    pub version_digest: String,
}

/// Load the snapshot answer (its text) with the engine. Errors are
/// sentences naming what failed.
pub fn load_snapshot(text: &str) -> Result<Loaded, String> {
    let snapshot: EstateSnapshot = serde_json::from_str(text).map_err(|e| {
        format!("the snapshot is not what this page reads ({e}); is the server older than this page? Reload it")
    })?;
    let meta = SnapshotMeta {
        estate: snapshot.estate,
        version: snapshot.version,
        content_digest: snapshot.content_digest,
        policy_digest: snapshot.policy_digest,
    };
    // The document's exact stored bytes: the loader reads the same text
    // the server's loader read.
    let estate = estate::load(snapshot.document.get(), Format::Json).map_err(|errors| {
        let first = errors
            .first()
            .map(|e| format!("{}: {}", e.path, e.message))
            .unwrap_or_default();
        format!(
            "the engine in the browser could not load the estate ({} errors, first {first})",
            errors.len()
        )
    })?;
    let policy = Policy::from_json(snapshot.policy.get()).map_err(|errors| {
        format!(
            "the engine in the browser refused the policy: {}",
            errors
                .iter()
                .map(|e| e.to_string())
                .collect::<Vec<_>>()
                .join("; ")
        )
    })?;
    let version_digest = berth_engine::export::version(&estate);
    Ok(Loaded {
        meta,
        estate,
        policy,
        version_digest,
    })
}

/// The advice alone (no Why), for showing the moves as soon as possible.
pub fn advice(l: &Loaded, now: i64) -> Advice {
    advise(&l.estate, &l.policy, now)
}

/// Every move of `advice` explained (aligned with its moves).
pub fn explain(l: &Loaded, now: i64, advice: &Advice) -> Vec<MoveWhy> {
    berth_engine::explain(&l.estate, &l.policy, now, advice)
}

/// The bytes of advice with every move explained: the engine's JSON front
/// end, which the server's `GET …/advice?why=true` sends as its `result`,
/// so the two can be compared by digest.
pub fn advice_why_bytes(advice: &Advice, why: &[MoveWhy]) -> String {
    front::advice_why_of(advice, why)
}

/// Hex SHA-256 of the bytes, as the server's `result_digest`.
pub fn sha256_hex(bytes: &[u8]) -> String {
    Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// One step of a scenario being edited on the What-if page.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Step {
    Move { service: String, to: String },
    Evacuate(String),
}

/// The scenario file (docs/scenario-format.md) for these steps.
pub fn scenario_json(name: &str, steps: &[Step]) -> String {
    let steps: Vec<Value> = steps
        .iter()
        .map(|s| match s {
            Step::Move { service, to } => {
                serde_json::json!({"move": {"service": service, "to": to}})
            }
            Step::Evacuate(c) => serde_json::json!({ "evacuate": c }),
        })
        .collect();
    serde_json::json!({"schema": 1, "name": name, "steps": steps}).to_string()
}

/// The steps as the What-if page keeps them in its address (`?steps=`),
/// so a reload or a shared link shows the same scenario: moves as
/// `service>cluster`, evacuations as `!cluster`, joined by `,`. Ids never
/// hold `>`, `!` or `,` (`chars::ID_PUNCTUATION`), so the form reads back
/// without ambiguity.
pub fn steps_to_query(steps: &[Step]) -> String {
    steps
        .iter()
        .map(|s| match s {
            Step::Move { service, to } => format!("{service}>{to}"),
            Step::Evacuate(c) => format!("!{c}"),
        })
        .collect::<Vec<_>>()
        .join(",")
}

/// [`steps_to_query`] read back; an error names the part it cannot read.
pub fn steps_from_query(q: &str) -> Result<Vec<Step>, String> {
    if q.trim().is_empty() {
        return Ok(Vec::new());
    }
    q.split(',')
        .enumerate()
        .map(|(i, part)| {
            let bad = |why: String| format!("step {} of the address ({part:?}): {why}", i + 1);
            if let Some(c) = part.strip_prefix('!') {
                if let Some(p) = berth_engine::chars::id_problem(c) {
                    return Err(bad(p));
                }
                return Ok(Step::Evacuate(c.to_string()));
            }
            let (service, to) = part
                .split_once('>')
                .ok_or_else(|| bad("expected service>cluster or !cluster".into()))?;
            for id in [service, to] {
                if let Some(p) = berth_engine::chars::id_problem(id) {
                    return Err(bad(p));
                }
            }
            Ok(Step::Move {
                service: service.to_string(),
                to: to.to_string(),
            })
        })
        .collect()
}

/// Steps of a scenario file (as saved through the API).
pub fn steps_of(scenario: &Value) -> Result<Vec<Step>, String> {
    let steps = scenario
        .get("steps")
        .and_then(Value::as_array)
        .ok_or("the saved scenario has no steps list")?;
    steps
        .iter()
        .enumerate()
        .map(|(i, s)| {
            if let Some(c) = s.get("evacuate").and_then(Value::as_str) {
                return Ok(Step::Evacuate(c.to_string()));
            }
            let m = s.get("move");
            let get = |k: &str| m.and_then(|m| m.get(k)).and_then(Value::as_str);
            match (get("service"), get("to")) {
                (Some(service), Some(to)) => Ok(Step::Move {
                    service: service.to_string(),
                    to: to.to_string(),
                }),
                _ => Err(format!(
                    "step {} of the saved scenario is neither a move nor an evacuation",
                    i + 1
                )),
            }
        })
        .collect()
}

/// Project the scenario in the browser: the same function as the server's
/// `POST …/whatif`, on the loaded estate, as the typed projection the
/// engine's JSON front end writes (`front::whatif_with_version` is this
/// value as bytes). Errors name each bad step.
pub fn project_json(
    l: &Loaded,
    name: &str,
    steps: &[Step],
    now: i64,
) -> Result<berth_engine::whatif::Projection, String> {
    let text = scenario_json(name, steps);
    front::whatif_projection(&l.estate, &l.version_digest, &l.policy, now, &text).map_err(
        |errors| {
            errors
                .iter()
                .map(|e| format!("{}: {}", e.path, e.message))
                .collect::<Vec<_>>()
                .join("; ")
        },
    )
}

/// The clusters a service may legally be moved to (static constraints:
/// tier, trust zone, jurisdiction, pinning…), without its own cluster.
pub fn legal_destinations(l: &Loaded, service: &str) -> Vec<String> {
    let Some(i) = l.estate.service_index(service) else {
        return Vec::new();
    };
    let f = advise::feasibility(&l.estate);
    let here = l.estate.services[i].cluster;
    f.candidates
        .of(i)
        .iter()
        .filter(|&c| c != here)
        .map(|c| l.estate.clusters[c].id.clone())
        .collect()
}

pub fn service_ids(l: &Loaded) -> Vec<String> {
    l.estate.services.iter().map(|s| s.id.clone()).collect()
}

pub fn cluster_ids(l: &Loaded) -> Vec<String> {
    l.estate.clusters.iter().map(|c| c.id.clone()).collect()
}

/// Seconds since 1970 of an RFC 3339 time (the engine's own parser).
pub fn parse_time(s: &str) -> Option<i64> {
    estate::parse_time(s)
}

pub fn format_time(t: i64) -> String {
    estate::format_time(t)
}

#[cfg(test)]
mod tests {
    use super::*;

    const SAMPLE: &str = include_str!("../../examples/estates/sample.json");

    #[test]
    fn steps_survive_the_address() {
        let steps = vec![
            Step::Move {
                service: "boutique/cart".into(),
                to: "c-fra-3".into(),
            },
            Step::Evacuate("c-lon-1".into()),
        ];
        let q = steps_to_query(&steps);
        assert_eq!(q, "boutique/cart>c-fra-3,!c-lon-1");
        assert_eq!(steps_from_query(&q).unwrap(), steps);
        assert_eq!(steps_from_query("").unwrap(), vec![]);
        let e = steps_from_query("a>b,cart").unwrap_err();
        assert!(e.starts_with("step 2 of the address (\"cart\")"), "{e}");
        let e = steps_from_query("a>b c").unwrap_err();
        assert!(e.contains("invalid id"), "{e}");
    }

    fn snapshot() -> String {
        let policy = Policy::default();
        let policy_text = serde_json::to_string(&policy).unwrap();
        EstateSnapshot::write(
            "sample",
            1,
            "x",
            &policy.digest(),
            "2026-11-30T04:05:00Z",
            &policy_text,
            SAMPLE,
        )
    }

    #[test]
    fn browser_advice_is_the_servers_serialisation() {
        let l = load_snapshot(&snapshot()).unwrap();
        let now = parse_time("2026-11-30T04:05:00Z").unwrap();
        let a = advice(&l, now);
        let text = advice_why_bytes(&a, &explain(&l, now, &a));
        // The server's envelope result is the front end's bytes for the
        // same estate: the stored document loaded again.
        let e = estate::load(SAMPLE, Format::Json).unwrap();
        let p = Policy::default();
        assert_eq!(text, front::advice_why(&e, &p, now));
        // In struct order (the advice's members, then `why`), not sorted
        // the way a map in between would sort them (the old server form).
        let a = advise(&e, &p, now);
        let mut sorted = serde_json::to_value(&a).unwrap();
        sorted["why"] = serde_json::to_value(berth_engine::explain(&e, &p, now, &a)).unwrap();
        assert_ne!(text, serde_json::to_string(&sorted).unwrap());
        assert_eq!(sha256_hex(text.as_bytes()).len(), 64);
    }

    #[test]
    fn scenario_steps_round_trip_and_bad_steps_are_named() {
        let steps = vec![
            Step::Evacuate("c-par-2".into()),
            Step::Move {
                service: "checkout".into(),
                to: "c-fra-2".into(),
            },
        ];
        let v: Value = serde_json::from_str(&scenario_json("t", &steps)).unwrap();
        assert_eq!(steps_of(&v).unwrap(), steps);
        let l = load_snapshot(&snapshot()).unwrap();
        let err = project_json(&l, "t", &[Step::Evacuate("nowhere".into())], 0).unwrap_err();
        assert!(err.contains("/steps/0/evacuate"), "{err}");
    }

    #[test]
    fn a_snapshot_without_a_document_is_refused_in_words() {
        let err =
            load_snapshot(r#"{"estate":"a","version":1,"content_digest":"","policy_digest":""}"#)
                .err()
                .unwrap();
        assert!(err.contains("`server_now`"), "{err}");
    }
}
