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

/// The entry of `doc`'s `key` array whose id is `id`, to change it.
fn entry_by_id_mut<'a>(doc: &'a mut Value, key: &str, id: &str) -> Option<&'a mut Value> {
    doc.get_mut(key)?
        .as_array_mut()?
        .iter_mut()
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
    batch_size(updates)?;
    let empty = Vec::new();
    let view = View {
        sites: ids(doc, "sites"),
        clusters: ids(doc, "clusters"),
        services: ids(doc, "services"),
        directory: crate::import::Directory::from_estate(doc),
        cluster_docs: doc
            .get("clusters")
            .and_then(Value::as_array)
            .unwrap_or(&empty),
    };
    let mut errors = Vec::new();
    let mut out = doc.clone();
    for (i, u) in updates.iter().enumerate() {
        let before = errors.len();
        let Some(r) = read(i, u, mode, &mut errors) else {
            continue;
        };
        let item = Item {
            r,
            before,
            errors: &mut errors,
        };
        match u.fact.as_str() {
            "cpu_free" | "memory_free_gib" | "rtt_ms" | "flow_weight" | "flow_mb_s"
                if u.service.is_some() =>
            {
                item.errors
                    .push(err(i, "service", format!("not used by fact {:?}", u.fact)));
            }
            "traffic" => traffic(item, &view, &mut out),
            "cpu_free" | "memory_free_gib" => capacity(item, &view, &mut out),
            "rtt_ms" => rtt(item, &view, &mut out),
            "flow_weight" | "flow_mb_s" => flow(item, &view, &mut out),
            other => item.errors.push(err(
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

/// A batch of at least one update and at most [`MAX_UPDATES`].
fn batch_size(updates: &[FactUpdate]) -> Result<(), Vec<UpdateError>> {
    let message = if updates.is_empty() {
        "no updates: send at least one".to_string()
    } else if updates.len() > MAX_UPDATES {
        format!(
            "{} updates in one batch; the limit is {MAX_UPDATES}: split it",
            updates.len()
        )
    } else {
        return Ok(());
    };
    Err(vec![UpdateError {
        path: "/updates".into(),
        line: None,
        message,
    }])
}

/// What of the estate updates are checked against.
struct View<'d> {
    sites: Vec<String>,
    clusters: Vec<String>,
    services: Vec<String>,
    directory: crate::import::Directory,
    cluster_docs: &'d [Value],
}

/// One update as read, before it is placed: what every fact has.
struct Read<'u> {
    i: usize,
    u: &'u FactUpdate,
    /// `None`: the fact is marked unknown.
    value: Option<f64>,
    class: Class,
    observed_at: i64,
    source: String,
}

/// An update being placed, and the batch's errors (`before`: how many
/// there were when this update's reading began).
struct Item<'a, 'u> {
    r: Read<'u>,
    before: usize,
    errors: &'a mut Vec<UpdateError>,
}

impl Item<'_, '_> {
    fn err(&mut self, field: &str, message: String) {
        self.errors.push(err(self.r.i, field, message));
    }

    /// Did this update get an error?
    fn refused(&self) -> bool {
        self.errors.len() > self.before
    }

    /// A field the fact needs.
    fn need(&mut self, field: &str, v: &Option<String>) -> Option<String> {
        match v {
            Some(s) => Some(s.clone()),
            None => {
                let message = format!("required for fact {:?}", self.r.u.fact);
                self.err(field, message);
                None
            }
        }
    }

    /// Fields the fact does not use: each given is an error.
    fn unused(&mut self, fields: &[(&str, &Option<String>)]) {
        for (name, v) in fields {
            if v.is_some() {
                let message = format!("not used by fact {:?}", self.r.u.fact);
                self.err(name, message);
            }
        }
    }

    /// The fact as the estate file writes it.
    fn fact(&self) -> Value {
        let r = &self.r;
        let mut m = Map::new();
        m.insert("value".into(), r.value.map_or(Value::Null, |v| json!(v)));
        // An unknown value is a guess whatever the sender says.
        let class = if r.value.is_none() {
            Class::Guessed
        } else {
            r.class
        };
        m.insert("class".into(), json!(class.as_str()));
        m.insert("source".into(), json!(r.source));
        m.insert("observed_at".into(), json!(format_time(r.observed_at)));
        Value::Object(m)
    }

    /// The service `id` names, in a cluster the mesh names (an estate
    /// cluster's id or its `mesh_cluster` alias) when `cluster` is given:
    /// errors on `field` and `cluster_field`.
    fn resolve(
        &mut self,
        view: &View,
        field: &str,
        cluster_field: &str,
        id: &mut String,
        cluster: Option<&str>,
    ) {
        match cluster.map(|c| (c, view.directory.cluster_for_mesh(c))) {
            Some((c, None)) => {
                self.err(cluster_field, format!("no cluster {c:?} in this estate (by id or mesh_cluster): map it with --map-cluster {c}=CLUSTER, or declare mesh_cluster: {c:?} on its estate cluster"));
            }
            Some((_, Some(c))) => match view.directory.in_cluster(c, "", id) {
                Ok(found) => *id = found,
                Err(why) => self.err(field, format!("workload {id:?}: {why}")),
            },
            None if !view.services.contains(&*id) => {
                self.err(field, format!("no service {id:?} in this estate"));
            }
            None => {}
        }
    }
}

/// What every update has: a value (or null), a class, an observation time
/// not far ahead of the server's clock; `None` when one cannot be read
/// (its error given). A value out of range is an error, and the rest of
/// the update is still checked.
fn read<'u>(
    i: usize,
    u: &'u FactUpdate,
    mode: &Mode,
    errors: &mut Vec<UpdateError>,
) -> Option<Read<'u>> {
    let received_at = mode.received_at;
    let Some(value) = u.value else {
        errors.push(err(
            i,
            "value",
            "required: a number, or null to mark the fact unknown".into(),
        ));
        return None;
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
            return None;
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
        return None;
    };
    let observed_at = match &u.observed_at {
        None if mode.require_observed_at => {
            errors.push(err(
                i,
                "observed_at",
                "required: when this was measured (RFC 3339), so the fact can age".into(),
            ));
            return None;
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
                return None;
            }
            Some(t) => t,
            None => {
                errors.push(err(
                    i,
                    "observed_at",
                    format!("expected an RFC 3339 time like 2026-11-30T04:05:00Z, found {s:?}"),
                ));
                return None;
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
    let source = match &mode.source {
        Source::Default(default) => u.source.clone().unwrap_or_else(|| default.clone()),
        Source::Sender(sender) => sender.clone(),
    };
    Some(Read {
        i,
        u,
        value,
        class,
        observed_at,
        source,
    })
}

/// `traffic`: the window a service's traffic was observed over.
fn traffic(mut item: Item, view: &View, out: &mut Value) {
    let u = item.r.u;
    item.unused(&[
        ("a", &u.a),
        ("b", &u.b),
        ("from", &u.from),
        ("to", &u.to),
        ("from_cluster", &u.from_cluster),
        ("to_cluster", &u.to_cluster),
    ]);
    let Some(mut id) = item.need("service", &u.service) else {
        return;
    };
    // A window of nothing observed nothing.
    if item.r.value == Some(0.0) {
        item.err(
            "value",
            "an observation window must be more than 0 seconds; null for traffic never observed"
                .into(),
        );
    }
    item.resolve(view, "service", "cluster", &mut id, u.cluster.as_deref());
    if item.refused() {
        return;
    }
    let fact = item.fact();
    if let Some(sv) = entry_by_id_mut(out, "services", &id) {
        sv["traffic"] = fact;
    }
}

/// `cpu_free`, `memory_free_gib`: a cluster's free capacity.
fn capacity(mut item: Item, view: &View, out: &mut Value) {
    let u = item.r.u;
    item.unused(&[
        ("a", &u.a),
        ("b", &u.b),
        ("from", &u.from),
        ("to", &u.to),
        ("from_cluster", &u.from_cluster),
        ("to_cluster", &u.to_cluster),
    ]);
    let Some(c) = item.need("cluster", &u.cluster) else {
        return;
    };
    let Some(cluster) = find_by_id(view.cluster_docs, &c) else {
        item.err("cluster", format!("no cluster {c:?} in this estate"));
        return;
    };
    let total_key = if u.fact == "cpu_free" {
        "cpu_total"
    } else {
        "memory_total_gib"
    };
    if let (Some(v), Some(total)) = (item.r.value, cluster.get(total_key).and_then(Value::as_f64)) {
        if v > total {
            item.err(
                "value",
                format!("free {v} exceeds {total_key} {total} of cluster {c:?}"),
            );
        }
    }
    if item.refused() {
        return;
    }
    let fact = item.fact();
    if let Some(cl) = entry_by_id_mut(out, "clusters", &c) {
        cl[u.fact.as_str()] = fact;
    }
}

/// `rtt_ms`: between two sites (a link) or two clusters (a path).
fn rtt(mut item: Item, view: &View, out: &mut Value) {
    let u = item.r.u;
    item.unused(&[
        ("cluster", &u.cluster),
        ("from", &u.from),
        ("to", &u.to),
        ("from_cluster", &u.from_cluster),
        ("to_cluster", &u.to_cluster),
    ]);
    let (Some(a), Some(b)) = (item.need("a", &u.a), item.need("b", &u.b)) else {
        return;
    };
    let key = if view.sites.contains(&a) && view.sites.contains(&b) {
        "links"
    } else if view.clusters.contains(&a) && view.clusters.contains(&b) {
        "paths"
    } else {
        item.err(
            "b",
            format!("{a:?} and {b:?} must both be sites (a link) or both be clusters (a path) of this estate"),
        );
        return;
    };
    if a == b {
        item.err(
            "b",
            format!("an RTT needs two different ends; both are {a:?}"),
        );
        return;
    }
    if item.refused() {
        return;
    }
    let fact = item.fact();
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

/// `flow_weight`, `flow_mb_s`: a flow between two services.
fn flow(mut item: Item, view: &View, out: &mut Value) {
    let u = item.r.u;
    item.unused(&[("cluster", &u.cluster), ("a", &u.a), ("b", &u.b)]);
    let (Some(mut from), Some(mut to)) = (item.need("from", &u.from), item.need("to", &u.to))
    else {
        return;
    };
    item.resolve(
        view,
        "from",
        "from_cluster",
        &mut from,
        u.from_cluster.as_deref(),
    );
    item.resolve(view, "to", "to_cluster", &mut to, u.to_cluster.as_deref());
    if from == to {
        item.err(
            "to",
            format!("a flow needs two different services; both are {from:?}"),
        );
    }
    if item.refused() {
        return;
    }
    let field = if u.fact == "flow_weight" {
        "weight"
    } else {
        "mb_s"
    };
    let fact = item.fact();
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
