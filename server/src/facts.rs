//! Individual fact updates (SPEC §2, §12): free capacity, RTT, flow
//! weight and MB/s, each with its class, source and observation time,
//! applied to an estate document.
//!
//! A batch is checked whole before anything is applied — every error names
//! its index in the batch — and then applied to the estate file form, which
//! the engine's loader checks once more before it is stored. So a batch is
//! all or nothing.

use serde_json::{json, Map, Value};

use berth_engine::estate::{format_time, parse_time};
use berth_engine::fact::Class;

/// One update, and a batch of them as sent to `POST
/// /api/estates/{id}/facts`: the API's types, shared with the clients.
pub use berth_api::{FactBatch, FactUpdate};

/// The most updates in one batch: a large estate's whole set of flows
/// (32k in the 5,000-service benchmark estate) fits, yet one request
/// cannot make the server chew for minutes.
pub const MAX_UPDATES: usize = 50_000;

/// One refused update.
#[derive(Clone, Debug, serde::Serialize, PartialEq)]
pub struct UpdateError {
    /// JSON pointer into the batch, e.g. `/updates/3/cluster`.
    pub path: String,
    /// Always `null`: kept so every 422 item has one shape,
    /// `{path, line, message}`.
    pub line: Option<usize>,
    pub message: String,
}

fn err(i: usize, field: &str, message: String) -> UpdateError {
    UpdateError {
        path: format!("/updates/{i}/{field}"),
        line: None,
        message,
    }
}

fn find_by_id<'a>(arr: &'a [Value], id: &str) -> Option<&'a Value> {
    arr.iter()
        .find(|v| v.get("id").and_then(Value::as_str) == Some(id))
}

fn ids(doc: &Value, key: &str) -> Vec<String> {
    doc.get(key)
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(|v| v.get("id").and_then(Value::as_str).map(String::from))
                .collect()
        })
        .unwrap_or_default()
}

/// How a list of updates is read: fact batches (operators, by hand or
/// script) and observation batches (agents) differ only in defaults.
pub struct Mode {
    /// The list's name in the body, for error paths: `updates` or
    /// `observations`.
    pub list: &'static str,
    /// The class when an item gives none; `None`: the class is required.
    pub default_class: Option<Class>,
    /// Agents must say when they measured: an observation without a time
    /// could not age, and staleness is half of confidence.
    pub require_observed_at: bool,
    /// The source recorded for each item.
    pub source: Source,
    /// When the batch arrived, by the server's clock: the time of items
    /// that may omit it, and what times may not be far ahead of.
    pub received_at: i64,
}

/// Where a fact's recorded `source` comes from.
pub enum Source {
    /// The item's own `source`, or this when it gives none (an operator
    /// may say where a figure came from: a probe, a spreadsheet).
    Default(String),
    /// Always this, whatever the item says: who sent the batch. An agent
    /// token may only speak for itself, so it cannot pass its figures off
    /// as someone else's (`user:admin`).
    Sender(String),
}

/// How far ahead of the server's clock an observation time may be, in
/// seconds. A fact's age is `now - observed_at`, so a time in the future
/// would count as fresh (measured) until that time came: from 9999, for
/// ever. Five minutes covers the skew of any clock that is synchronised
/// at all (NTP keeps them within milliseconds; a host that lost sync for
/// days drifts seconds) and the time a batch spends in retries, while a
/// fact dated five minutes ahead is, at worst, fresh five minutes too
/// long, well inside the shortest staleness window (hours).
pub const MAX_AHEAD_S: i64 = 300;

impl Mode {
    pub fn facts(received_at: i64) -> Mode {
        Mode {
            list: "updates",
            default_class: None,
            require_observed_at: false,
            source: Source::Default("api".into()),
            received_at,
        }
    }
}

/// Check the batch against the document; then apply it. `received_at` is
/// the default observation time. Returns every error, or the new
/// document.
pub fn apply(doc: &Value, batch: &FactBatch, received_at: i64) -> Result<Value, Vec<UpdateError>> {
    apply_with(doc, &batch.updates, &Mode::facts(received_at))
}

/// [`apply`] for any list of updates, read as `mode` says.
pub fn apply_with(
    doc: &Value,
    updates: &[FactUpdate],
    mode: &Mode,
) -> Result<Value, Vec<UpdateError>> {
    apply_inner(doc, updates, mode).map_err(|mut errors| {
        if mode.list != "updates" {
            for e in &mut errors {
                e.path = format!("/{}{}", mode.list, &e.path["/updates".len()..]);
            }
        }
        errors
    })
}

fn apply_inner(
    doc: &Value,
    updates: &[FactUpdate],
    mode: &Mode,
) -> Result<Value, Vec<UpdateError>> {
    let received_at = mode.received_at;
    let mut errors = Vec::new();
    if updates.is_empty() {
        return Err(vec![UpdateError {
            path: "/updates".into(),
            line: None,
            message: "no updates: send at least one".into(),
        }]);
    }
    if updates.len() > MAX_UPDATES {
        return Err(vec![UpdateError {
            path: "/updates".into(),
            line: None,
            message: format!(
                "{} updates in one batch; the limit is {MAX_UPDATES}: split it",
                updates.len()
            ),
        }]);
    }
    let sites = ids(doc, "sites");
    let clusters = ids(doc, "clusters");
    let services = ids(doc, "services");
    let directory = crate::import::Directory::from_estate(doc);
    let empty = Vec::new();
    let cluster_docs = doc
        .get("clusters")
        .and_then(Value::as_array)
        .unwrap_or(&empty);
    let mut out = doc.clone();
    for (i, u) in updates.iter().enumerate() {
        let before = errors.len();
        let Some(value) = u.value else {
            errors.push(err(
                i,
                "value",
                "required: a number, or null to mark the fact unknown".into(),
            ));
            continue;
        };
        let class = match (&u.class, mode.default_class) {
            (Some(c), _) => Class::parse(c),
            (None, Some(default)) => Some(default),
            (None, None) => {
                errors.push(err(
                    i,
                    "class",
                    "required: measured, reported, inferred or guessed".into(),
                ));
                continue;
            }
        };
        let Some(class) = class else {
            errors.push(err(
                i,
                "class",
                format!(
                    "expected one of \"measured\", \"reported\", \"inferred\", \"guessed\", found {:?}",
                    u.class.as_deref().unwrap_or("")
                ),
            ));
            continue;
        };
        let observed_at = match &u.observed_at {
            None if mode.require_observed_at => {
                errors.push(err(
                    i,
                    "observed_at",
                    "required: when this was measured (RFC 3339), so the fact can age".into(),
                ));
                continue;
            }
            None => received_at,
            Some(s) => match parse_time(s) {
                Some(t) if t > received_at + MAX_AHEAD_S => {
                    errors.push(err(
                        i,
                        "observed_at",
                        format!(
                            "{s:?} is more than {} minutes ahead of the server's clock ({}); a fact dated in the future would not age until then: check the sender's clock",
                            MAX_AHEAD_S / 60,
                            format_time(received_at)
                        ),
                    ));
                    continue;
                }
                Some(t) => t,
                None => {
                    errors.push(err(
                        i,
                        "observed_at",
                        format!("expected an RFC 3339 time like 2026-11-30T04:05:00Z, found {s:?}"),
                    ));
                    continue;
                }
            },
        };
        if let Some(v) = value {
            // Sizes and rates are never negative; above 1e12 is a typo
            // (the estate format's own bound).
            if !v.is_finite() || !(0.0..=1e12).contains(&v) {
                errors.push(err(
                    i,
                    "value",
                    format!("expected a number ≥ 0 (at most 1e12), found {v}"),
                ));
            }
        }
        let need =
            |field: &str, v: &Option<String>, errors: &mut Vec<UpdateError>| -> Option<String> {
                match v {
                    Some(s) => Some(s.clone()),
                    None => {
                        errors.push(err(i, field, format!("required for fact {:?}", u.fact)));
                        None
                    }
                }
            };
        let unused = |fields: &[(&str, &Option<String>)], errors: &mut Vec<UpdateError>| {
            for (name, v) in fields {
                if v.is_some() {
                    errors.push(err(i, name, format!("not used by fact {:?}", u.fact)));
                }
            }
        };
        let source = match &mode.source {
            Source::Default(default) => u.source.clone().unwrap_or_else(|| default.clone()),
            Source::Sender(sender) => sender.clone(),
        };
        let fact_value = || -> Value {
            let mut m = Map::new();
            m.insert("value".into(), value.map_or(Value::Null, |v| json!(v)));
            // An unknown value is a guess whatever the sender says.
            let class = if value.is_none() {
                Class::Guessed
            } else {
                class
            };
            m.insert("class".into(), json!(class.as_str()));
            m.insert("source".into(), json!(source));
            m.insert("observed_at".into(), json!(format_time(observed_at)));
            Value::Object(m)
        };
        match u.fact.as_str() {
            "cpu_free" | "memory_free_gib" if u.service.is_some() => {
                errors.push(err(i, "service", format!("not used by fact {:?}", u.fact)));
            }
            "rtt_ms" | "flow_weight" | "flow_mb_s" if u.service.is_some() => {
                errors.push(err(i, "service", format!("not used by fact {:?}", u.fact)));
            }
            "traffic" => {
                unused(&[("a", &u.a), ("b", &u.b), ("from", &u.from), ("to", &u.to), ("from_cluster", &u.from_cluster), ("to_cluster", &u.to_cluster)], &mut errors);
                let Some(mut id) = need("service", &u.service, &mut errors) else { continue };
                // A window of nothing observed nothing.
                if value == Some(0.0) {
                    errors.push(err(i, "value", "an observation window must be more than 0 seconds; null for traffic never observed".into()));
                }
                match u.cluster.as_deref().map(|c| (c, directory.cluster_for_mesh(c))) {
                    Some((c, None)) => {
                        errors.push(err(i, "cluster", format!("no cluster {c:?} in this estate (by id or mesh_cluster): map it with --map-cluster {c}=CLUSTER, or declare mesh_cluster: {c:?} on its estate cluster")));
                    }
                    Some((_, Some(c))) => match directory.in_cluster(c, "", &id) {
                        Ok(found) => id = found,
                        Err(why) => errors.push(err(i, "service", format!("workload {id:?}: {why}"))),
                    },
                    None if !services.contains(&id) => {
                        errors.push(err(i, "service", format!("no service {id:?} in this estate")));
                    }
                    None => {}
                }
                if errors.len() > before {
                    continue;
                }
                let fact = fact_value();
                if let Some(arr) = out.get_mut("services").and_then(Value::as_array_mut) {
                    if let Some(sv) = arr
                        .iter_mut()
                        .find(|v| v.get("id").and_then(Value::as_str) == Some(id.as_str()))
                    {
                        sv["traffic"] = fact;
                    }
                }
            }
            "cpu_free" | "memory_free_gib" => {
                unused(&[("a", &u.a), ("b", &u.b), ("from", &u.from), ("to", &u.to), ("from_cluster", &u.from_cluster), ("to_cluster", &u.to_cluster)], &mut errors);
                let Some(c) = need("cluster", &u.cluster, &mut errors) else { continue };
                let Some(cluster) = find_by_id(cluster_docs, &c) else {
                    errors.push(err(i, "cluster", format!("no cluster {c:?} in this estate")));
                    continue;
                };
                let total_key = if u.fact == "cpu_free" { "cpu_total" } else { "memory_total_gib" };
                if let (Some(v), Some(total)) = (value, cluster.get(total_key).and_then(Value::as_f64)) {
                    if v > total {
                        errors.push(err(
                            i,
                            "value",
                            format!("free {v} exceeds {total_key} {total} of cluster {c:?}"),
                        ));
                    }
                }
                if errors.len() > before {
                    continue;
                }
                let fact = fact_value();
                if let Some(arr) = out.get_mut("clusters").and_then(Value::as_array_mut) {
                    if let Some(cl) = arr
                        .iter_mut()
                        .find(|v| v.get("id").and_then(Value::as_str) == Some(c.as_str()))
                    {
                        cl[u.fact.as_str()] = fact;
                    }
                }
            }
            "rtt_ms" => {
                unused(&[("cluster", &u.cluster), ("from", &u.from), ("to", &u.to), ("from_cluster", &u.from_cluster), ("to_cluster", &u.to_cluster)], &mut errors);
                let (Some(a), Some(b)) = (need("a", &u.a, &mut errors), need("b", &u.b, &mut errors)) else {
                    continue;
                };
                let key = if sites.contains(&a) && sites.contains(&b) {
                    "links"
                } else if clusters.contains(&a) && clusters.contains(&b) {
                    "paths"
                } else {
                    errors.push(err(
                        i,
                        "b",
                        format!("{a:?} and {b:?} must both be sites (a link) or both be clusters (a path) of this estate"),
                    ));
                    continue;
                };
                if a == b {
                    errors.push(err(i, "b", format!("an RTT needs two different ends; both are {a:?}")));
                    continue;
                }
                if errors.len() > before {
                    continue;
                }
                let fact = fact_value();
                let arr = out
                    .as_object_mut()
                    .expect("an estate document is an object")
                    .entry(key)
                    .or_insert_with(|| Value::Array(vec![]));
                let arr = arr.as_array_mut().expect("links/paths are arrays");
                let same = |v: &Value| {
                    let (x, y) = (
                        v.get("a").and_then(Value::as_str),
                        v.get("b").and_then(Value::as_str),
                    );
                    (x == Some(&a) && y == Some(&b)) || (x == Some(&b) && y == Some(&a))
                };
                match arr.iter_mut().find(|v| same(v)) {
                    Some(existing) => existing["rtt_ms"] = fact,
                    None => arr.push(json!({"a": a, "b": b, "rtt_ms": fact})),
                }
            }
            "flow_weight" | "flow_mb_s" => {
                unused(&[("cluster", &u.cluster), ("a", &u.a), ("b", &u.b)], &mut errors);
                let (Some(mut from), Some(mut to)) = (need("from", &u.from, &mut errors), need("to", &u.to, &mut errors)) else {
                    continue;
                };
                for (field, id, cluster) in [("from", &mut from, &u.from_cluster), ("to", &mut to, &u.to_cluster)] {
                    // A cluster as the mesh names it: an estate cluster's
                    // id or its `mesh_cluster` alias.
                    match cluster.as_deref().map(|c| (c, directory.cluster_for_mesh(c))) {
                        Some((c, None)) => {
                            errors.push(err(i, &format!("{field}_cluster"), format!("no cluster {c:?} in this estate (by id or mesh_cluster): map it with --map-cluster {c}=CLUSTER, or declare mesh_cluster: {c:?} on its estate cluster")));
                        }
                        Some((_, Some(c))) => match directory.in_cluster(c, "", id) {
                            Ok(found) => *id = found,
                            Err(why) => errors.push(err(i, field, format!("workload {id:?}: {why}"))),
                        },
                        None if !services.contains(&*id) => {
                            errors.push(err(i, field, format!("no service {id:?} in this estate")));
                        }
                        None => {}
                    }
                }
                if from == to {
                    errors.push(err(i, "to", format!("a flow needs two different services; both are {from:?}")));
                }
                if errors.len() > before {
                    continue;
                }
                let field = if u.fact == "flow_weight" { "weight" } else { "mb_s" };
                let fact = fact_value();
                let arr = out
                    .as_object_mut()
                    .expect("an estate document is an object")
                    .entry("flows")
                    .or_insert_with(|| Value::Array(vec![]));
                let arr = arr.as_array_mut().expect("flows is an array");
                let same = |v: &Value| {
                    v.get("from").and_then(Value::as_str) == Some(&from)
                        && v.get("to").and_then(Value::as_str) == Some(&to)
                };
                match arr.iter_mut().find(|v| same(v)) {
                    Some(existing) => existing[field] = fact,
                    // A flow seen for the first time (a mesh reports a new
                    // edge): the other half stays unknown until observed.
                    None => {
                        let mut flow = json!({"from": from, "to": to, "weight": null, "mb_s": null});
                        flow[field] = fact;
                        arr.push(flow);
                    }
                }
            }
            other => errors.push(err(
                i,
                "fact",
                format!(
                    "expected one of \"cpu_free\", \"memory_free_gib\", \"rtt_ms\", \"flow_weight\", \"flow_mb_s\", \"traffic\", found {other:?}"
                ),
            )),
        }
    }
    if errors.is_empty() {
        Ok(out)
    } else {
        Err(errors)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn doc() -> Value {
        json!({
            "schema": 1, "name": "t",
            "sites": [{"id": "fra", "jurisdiction": "eu"}, {"id": "par", "jurisdiction": "eu"}],
            "clusters": [
                {"id": "c1", "site": "fra", "tier": "prod", "trust_zone": "general", "health": "healthy", "cpu_total": 10, "memory_total_gib": 40},
                {"id": "c2", "site": "par", "tier": "prod", "trust_zone": "general", "health": "healthy", "cpu_total": 10, "memory_total_gib": 40}
            ],
            "services": [
                {"id": "a", "owner": "x", "cluster": "c1", "cpu": 1, "memory_gib": 1},
                {"id": "b", "owner": "x", "cluster": "c2", "cpu": 1, "memory_gib": 1}
            ],
            "flows": []
        })
    }

    fn batch(v: Value) -> FactBatch {
        serde_json::from_value(v).unwrap()
    }

    #[test]
    fn updates_apply_and_the_result_loads() {
        let b = batch(json!({"updates": [
            {"fact": "cpu_free", "cluster": "c1", "value": 4, "class": "measured", "source": "agent:c1", "observed_at": "2026-11-30T04:00:00Z"},
            {"fact": "rtt_ms", "a": "par", "b": "fra", "value": 9.5, "class": "measured"},
            {"fact": "flow_weight", "from": "a", "to": "b", "value": 3, "class": "reported"}
        ]}));
        // Received at 04:05, after the capacity was measured (04:00): a
        // time ahead of the receipt beyond the skew would be refused.
        let out = apply(&doc(), &b, 1_796_011_500).unwrap();
        let text = serde_json::to_string(&out).unwrap();
        let e = berth_engine::load(&text, berth_engine::Format::Json).unwrap();
        assert_eq!(e.clusters[0].cpu_free.value, Some(4.0));
        assert_eq!(e.links.len(), 1);
        assert_eq!(e.links[0].rtt_ms.value, Some(9.5));
        assert_eq!(e.flows[0].weight.value, Some(3.0));
        assert_eq!(e.flows[0].mb_s.value, None);
    }

    #[test]
    fn times_beyond_the_skew_ahead_of_the_clock_are_refused() {
        let now = 1_796_000_000;
        let b = batch(json!({"updates": [
            {"fact": "cpu_free", "cluster": "c1", "value": 4, "class": "measured", "observed_at": format_time(now + MAX_AHEAD_S)},
            {"fact": "cpu_free", "cluster": "c2", "value": 4, "class": "measured", "observed_at": format_time(now + MAX_AHEAD_S + 1)}
        ]}));
        let errs = apply(&doc(), &b, now).unwrap_err();
        assert_eq!(errs.len(), 1, "{errs:?}");
        assert_eq!(errs[0].path, "/updates/1/observed_at");
        assert!(
            errs[0].message.contains("(2026-11-30T00:53:20Z)"),
            "{}",
            errs[0].message
        );
    }

    #[test]
    fn a_sender_source_replaces_what_the_item_says() {
        let b = batch(json!({"updates": [
            {"fact": "cpu_free", "cluster": "c1", "value": 4, "class": "measured", "source": "user:admin"}
        ]}));
        let mut mode = Mode::facts(0);
        let out = apply_with(&doc(), &b.updates, &mode).unwrap();
        assert_eq!(out["clusters"][0]["cpu_free"]["source"], "user:admin");
        mode.source = Source::Sender("token:abc (c1 agent)".into());
        let out = apply_with(&doc(), &b.updates, &mode).unwrap();
        assert_eq!(
            out["clusters"][0]["cpu_free"]["source"],
            "token:abc (c1 agent)"
        );
    }

    #[test]
    fn every_bad_update_is_named_by_index_and_nothing_applies() {
        let b = batch(json!({"updates": [
            {"fact": "cpu_free", "cluster": "nope", "value": 1, "class": "measured"},
            {"fact": "cpu_free", "cluster": "c1", "value": 11, "class": "measured"},
            {"fact": "rtt_ms", "a": "fra", "b": "c2", "value": 1, "class": "measured"},
            {"fact": "flow_mb_s", "from": "a", "to": "zz", "value": -1, "class": "mesured"},
            {"fact": "flow_mb_s", "from": "a", "to": "b", "value": -1, "class": "measured"},
            {"fact": "bandwidth", "value": 1, "class": "measured"}
        ]}));
        let errs = apply(&doc(), &b, 0).unwrap_err();
        let paths: Vec<&str> = errs.iter().map(|e| e.path.as_str()).collect();
        assert_eq!(
            paths,
            [
                "/updates/0/cluster",
                "/updates/1/value",
                "/updates/2/b",
                "/updates/3/class",
                "/updates/4/value",
                "/updates/5/fact"
            ]
        );
        assert!(
            errs[1].message.contains("exceeds cpu_total 10"),
            "{}",
            errs[1].message
        );
    }

    #[test]
    fn an_agent_names_a_workload_in_a_cluster_and_the_estate_says_which_service() {
        let mut d = doc();
        // A second replica of `a`, imported into c2 under a qualified id.
        d["services"].as_array_mut().unwrap().extend([
            json!({"id": "c2/a", "owner": "x", "cluster": "c2", "cpu": 1, "memory_gib": 1,
                   "source": "kubernetes:c2/shop/deployment/a"}),
        ]);
        let b = batch(json!({"updates": [
            {"fact": "flow_weight", "from": "a", "from_cluster": "c2", "to": "b", "to_cluster": "c2",
             "value": 3, "class": "measured"},
        ]}));
        let out = apply(&d, &b, 1_796_011_500).unwrap();
        let flows = out["flows"].as_array().unwrap();
        assert_eq!(flows.len(), 1);
        assert_eq!(
            (flows[0]["from"].as_str(), flows[0]["to"].as_str()),
            (Some("c2/a"), Some("b"))
        );
        // A workload that is no service of that cluster, and a cluster the
        // estate lacks, are refused at their fields.
        let b = batch(json!({"updates": [
            {"fact": "flow_weight", "from": "zz", "from_cluster": "c1", "to": "b", "to_cluster": "c9",
             "value": 3, "class": "measured"},
            {"fact": "cpu_free", "cluster": "c1", "from_cluster": "c1", "value": 1, "class": "measured"},
        ]}));
        let errors = apply(&d, &b, 1_796_011_500).unwrap_err();
        let paths: Vec<&str> = errors.iter().map(|e| e.path.as_str()).collect();
        assert_eq!(
            paths,
            [
                "/updates/0/from",
                "/updates/0/to_cluster",
                "/updates/1/from_cluster"
            ],
            "{errors:?}"
        );
        assert!(
            errors[0]
                .message
                .contains("no service of cluster \"c1\" is workload \"zz\""),
            "{errors:?}"
        );
    }
}
