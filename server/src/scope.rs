//! Agent tokens bound to their clusters (issue 37 item 2).
//!
//! An agent token names the clusters its agent reports for
//! (`POST /api/tokens` with `"clusters"`). Every write it makes — an
//! observation batch (capacity, round trips, flows, traffic), a probe
//! registration, a cluster record, a service re-sync — must concern one of
//! them, or the whole request is refused with 403 naming the scope and
//! what fell outside it. Nothing is written.
//!
//! The check is made on what the write *does*, not on what the request
//! says: the estate document before and after the write is compared, and
//! every cluster, service, flow, path and link that changed must belong to
//! the scope. However a fact names its subject (a workload in a mesh
//! cluster, a mapped cluster name), what it changes is what is checked.
//!
//! Belonging:
//! - a cluster: its id is in the scope;
//! - a service: its cluster (before and after the write) is;
//! - a flow: either end's service is in a scoped cluster (a mesh proxy in
//!   the agent's cluster sees traffic that enters or leaves it);
//! - a path (cluster to cluster): either end is a scoped cluster;
//! - a link (site to site): either site holds a scoped cluster;
//! - anything else of the estate (its name, sites, top-level settings):
//!   never.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::Value;

use crate::auth::{Principal, Role};
use crate::error::ApiError;

/// Most clusters one agent token may name: an agent reads one cluster (a
/// mesh Prometheus a handful); 64 is far beyond that and keeps the stored
/// list and every 403 short.
pub const MAX_TOKEN_CLUSTERS: usize = 64;

/// The cluster list a new token is stored with: required (1–64 valid ids,
/// sorted, without repeats) for agent tokens, refused for other roles.
pub fn clusters_for_new_token(
    role: Role,
    clusters: Option<&[String]>,
) -> Result<Option<Vec<String>>, ApiError> {
    if role != Role::Agent {
        return match clusters {
            Some(_) => Err(ApiError::bad_request(
                "clusters is for agent tokens: viewers, operators and administrators are not bound to clusters",
            )),
            None => Ok(None),
        };
    }
    let Some(list) = clusters.filter(|l| !l.is_empty()) else {
        return Err(ApiError::bad_request(
            "an agent token must name the cluster(s) its agent reports for: give \"clusters\": [\"<cluster id>\"]; every write it makes must concern one of them",
        ));
    };
    if list.len() > MAX_TOKEN_CLUSTERS {
        return Err(ApiError::bad_request(format!(
            "clusters: {} given, at most {MAX_TOKEN_CLUSTERS}",
            list.len()
        )));
    }
    for (i, c) in list.iter().enumerate() {
        if let Some(problem) = berth_engine::chars::id_problem(c) {
            return Err(ApiError::bad_request(format!("clusters/{i}: {problem}")));
        }
    }
    let set: BTreeSet<String> = list.iter().cloned().collect();
    Ok(Some(set.into_iter().collect()))
}

/// The scope, for messages: `["c-fra-1", "c-fra-2"]`.
fn named(scope: &[String]) -> String {
    format!("{scope:?}")
}

fn refuse(p: &Principal, estate: &str, scope: &[String], outside: &[String]) -> ApiError {
    let shown: Vec<&str> = outside.iter().take(5).map(String::as_str).collect();
    let more = outside.len().saturating_sub(shown.len());
    let hint = if scope.is_empty() {
        " (a token from before cluster scopes that never reported for a cluster: an administrator can create a new one with \"clusters\")"
    } else {
        ""
    };
    ApiError::Forbidden(format!(
        "{} is scoped to cluster(s) {} of estate {estate:?}{hint}; outside that scope: {}{}; nothing was applied",
        p.subject,
        named(scope),
        shown.join(", "),
        if more > 0 {
            format!(" and {more} more")
        } else {
            String::new()
        }
    ))
}

/// Refuse `cluster` (what the request names as its own: a probe, a
/// cluster record, an import's cluster) unless `p` may write for it.
/// Callers without a cluster scope (every role but agent) pass.
pub fn require_cluster(
    p: &Principal,
    estate: &str,
    cluster: &str,
    what: &str,
) -> Result<(), ApiError> {
    match &p.clusters {
        Some(scope) if !scope.iter().any(|c| c == cluster) => {
            Err(refuse(p, estate, scope, &[format!("{what} {cluster:?}")]))
        }
        _ => Ok(()),
    }
}

fn text<'a>(v: &'a Value, key: &str) -> Option<&'a str> {
    v.get(key).and_then(Value::as_str)
}

/// The entries of list `name`, keyed by `key`.
fn index<'a>(
    doc: &'a Value,
    name: &str,
    key: impl Fn(&Value) -> Option<String>,
) -> BTreeMap<String, &'a Value> {
    doc.get(name)
        .and_then(Value::as_array)
        .map(|a| a.iter().filter_map(|v| Some((key(v)?, v))).collect())
        .unwrap_or_default()
}

/// The keys whose entries differ between `old` and `new` (added, removed
/// or changed).
fn changed<'a>(
    old: &BTreeMap<String, &'a Value>,
    new: &BTreeMap<String, &'a Value>,
) -> Vec<(String, Option<&'a Value>, Option<&'a Value>)> {
    let keys: BTreeSet<&String> = old.keys().chain(new.keys()).collect();
    keys.into_iter()
        .filter_map(|k| {
            let (a, b) = (old.get(k).copied(), new.get(k).copied());
            (a != b).then(|| (k.clone(), a, b))
        })
        .collect()
}

/// What a write from `p` changed in the estate that lies outside its
/// clusters, as readable items; empty when everything is inside (or `p`
/// has no cluster scope).
pub fn outside(p: &Principal, old: &Value, new: &Value) -> Vec<String> {
    let Some(scope) = &p.clusters else {
        return Vec::new();
    };
    let inside = |c: Option<&str>| c.is_some_and(|c| scope.iter().any(|s| s == c));
    let mut out = Vec::new();

    let by_id = |v: &Value| text(v, "id").map(str::to_string);
    let pair = |a: &'static str, b: &'static str| {
        move |v: &Value| Some(format!("{} → {}", text(v, a)?, text(v, b)?))
    };
    let (old_clusters, new_clusters) =
        (index(old, "clusters", by_id), index(new, "clusters", by_id));
    for (id, _, _) in changed(&old_clusters, &new_clusters) {
        if !inside(Some(&id)) {
            out.push(format!("cluster {id:?}"));
        }
    }
    let (old_services, new_services) =
        (index(old, "services", by_id), index(new, "services", by_id));
    for (id, a, b) in changed(&old_services, &new_services) {
        let ok = [a, b]
            .into_iter()
            .flatten()
            .all(|s| inside(text(s, "cluster")));
        if !ok {
            let c = b.or(a).and_then(|s| text(s, "cluster")).unwrap_or("none");
            out.push(format!("service {id:?} (cluster {c:?})"));
        }
    }
    let cluster_of = |service: &str| {
        new_services
            .get(service)
            .or_else(|| old_services.get(service))
            .and_then(|s| text(s, "cluster"))
    };
    let (old_flows, new_flows) = (
        index(old, "flows", pair("from", "to")),
        index(new, "flows", pair("from", "to")),
    );
    for (key, a, b) in changed(&old_flows, &new_flows) {
        let f = b.or(a).expect("a changed entry is on one side");
        let ok = inside(text(f, "from").and_then(cluster_of))
            || inside(text(f, "to").and_then(cluster_of));
        if !ok {
            out.push(format!("flow {key}"));
        }
    }
    let (old_paths, new_paths) = (
        index(old, "paths", pair("a", "b")),
        index(new, "paths", pair("a", "b")),
    );
    for (key, a, b) in changed(&old_paths, &new_paths) {
        let pth = b.or(a).expect("a changed entry is on one side");
        if !(inside(text(pth, "a")) || inside(text(pth, "b"))) {
            out.push(format!("path {key}"));
        }
    }
    let scoped_sites: BTreeSet<&str> = new_clusters
        .values()
        .chain(old_clusters.values())
        .filter(|c| inside(text(c, "id")))
        .filter_map(|c| text(c, "site"))
        .collect();
    let (old_links, new_links) = (
        index(old, "links", pair("a", "b")),
        index(new, "links", pair("a", "b")),
    );
    for (key, a, b) in changed(&old_links, &new_links) {
        let l = b.or(a).expect("a changed entry is on one side");
        let at = |k| text(l, k).is_some_and(|s| scoped_sites.contains(s));
        if !(at("a") || at("b")) {
            out.push(format!("link {key}"));
        }
    }
    // Everything else of the estate belongs to no cluster.
    let lists = ["clusters", "services", "flows", "paths", "links"];
    let empty = serde_json::Map::new();
    let (om, nm) = (
        old.as_object().unwrap_or(&empty),
        new.as_object().unwrap_or(&empty),
    );
    let keys: BTreeSet<&String> = om.keys().chain(nm.keys()).collect();
    for k in keys {
        if !lists.contains(&k.as_str()) && om.get(k) != nm.get(k) {
            out.push(format!("the estate's {k:?}"));
        }
    }
    out
}

/// Refuse the write `old` → `new` when any of it lies outside `p`'s
/// clusters (see the module's rules).
pub fn require_inside(
    p: &Principal,
    estate: &str,
    old: &Value,
    new: &Value,
) -> Result<(), ApiError> {
    let outside = outside(p, old, new);
    match &p.clusters {
        Some(scope) if !outside.is_empty() => Err(refuse(p, estate, scope, &outside)),
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::auth::Via;
    use serde_json::json;

    fn agent(clusters: &[&str]) -> Principal {
        Principal {
            subject: "token:abc".into(),
            label: "a".into(),
            role: Role::Agent,
            estate: Some("e".into()),
            may_create_clusters: false,
            may_sync_services: false,
            clusters: Some(clusters.iter().map(|c| c.to_string()).collect()),
            via: Via::Bearer {
                token_id: "abc".into(),
            },
        }
    }

    fn estate() -> Value {
        json!({"name": "e", "sites": [{"id": "fra"}, {"id": "par"}],
            "clusters": [{"id": "c1", "site": "fra", "cpu_free": 1}, {"id": "c2", "site": "par", "cpu_free": 1}],
            "services": [{"id": "s1", "cluster": "c1"}, {"id": "s2", "cluster": "c2"}, {"id": "s3", "cluster": "c2"}],
            "flows": [{"from": "s2", "to": "s3", "weight": 1}],
            "paths": [], "links": []})
    }

    #[test]
    fn every_change_must_belong_to_a_scoped_cluster() {
        let p = agent(&["c1"]);
        let old = estate();
        let with = |f: &dyn Fn(&mut Value)| {
            let mut v = old.clone();
            f(&mut v);
            outside(&p, &old, &v)
        };
        assert!(with(&|v| v["clusters"][0]["cpu_free"] = json!(2)).is_empty());
        assert_eq!(
            with(&|v| v["clusters"][1]["cpu_free"] = json!(2)),
            ["cluster \"c2\""]
        );
        assert!(with(&|v| v["services"][0]["traffic"] = json!(9)).is_empty());
        assert_eq!(
            with(&|v| v["services"][1]["traffic"] = json!(9)),
            ["service \"s2\" (cluster \"c2\")"]
        );
        // Moving one's own service into another cluster is outside too.
        assert_eq!(
            with(&|v| v["services"][0]["cluster"] = json!("c2")),
            ["service \"s1\" (cluster \"c2\")"]
        );
        // A flow touching the scope is inside; one between others is not.
        assert!(with(&|v| v["flows"]
            .as_array_mut()
            .unwrap()
            .push(json!({"from": "s1", "to": "s2"})))
        .is_empty());
        assert_eq!(
            with(&|v| v["flows"][0]["weight"] = json!(3)),
            ["flow s2 → s3"]
        );
        assert!(with(&|v| v["paths"] = json!([{"a": "c2", "b": "c1", "rtt_ms": 3}])).is_empty());
        assert_eq!(
            with(&|v| v["paths"] = json!([{"a": "c2", "b": "c3", "rtt_ms": 3}])),
            ["path c2 → c3"]
        );
        assert!(with(&|v| v["links"] = json!([{"a": "fra", "b": "par"}])).is_empty());
        assert_eq!(
            with(&|v| v["links"] = json!([{"a": "par", "b": "lon"}])),
            ["link par → lon"]
        );
        assert_eq!(with(&|v| v["name"] = json!("x")), ["the estate's \"name\""]);
        // A new cluster of its own is inside; someone else's is not.
        assert!(
            with(&|v| v["clusters"].as_array_mut().unwrap()[0]["health"] = json!("ok")).is_empty()
        );
        assert_eq!(
            with(&|v| v["clusters"]
                .as_array_mut()
                .unwrap()
                .push(json!({"id": "c9"}))),
            ["cluster \"c9\""]
        );
        // Nothing changed, nothing outside; no scope, nothing checked.
        assert!(outside(&p, &old, &old).is_empty());
        let mut op = agent(&[]);
        op.clusters = None;
        op.role = Role::Operator;
        let mut v = old.clone();
        v["name"] = json!("x");
        assert!(outside(&op, &old, &v).is_empty());
        // An empty scope (a legacy token with no evidence) allows nothing.
        let err = require_inside(&agent(&[]), "e", &old, &v).unwrap_err();
        assert!(
            matches!(&err, ApiError::Forbidden(m) if m.contains("before cluster scopes")),
            "{err:?}"
        );
    }

    #[test]
    fn new_tokens_name_their_clusters() {
        assert!(clusters_for_new_token(Role::Agent, None).is_err());
        assert!(clusters_for_new_token(Role::Agent, Some(&[])).is_err());
        assert!(clusters_for_new_token(Role::Viewer, Some(&["c1".into()])).is_err());
        assert_eq!(clusters_for_new_token(Role::Viewer, None).unwrap(), None);
        assert_eq!(
            clusters_for_new_token(Role::Agent, Some(&["c2".into(), "c1".into(), "c2".into()]))
                .unwrap(),
            Some(vec!["c1".to_string(), "c2".to_string()])
        );
        assert!(clusters_for_new_token(Role::Agent, Some(&["c\u{202e}1".into()])).is_err());
        let many: Vec<String> = (0..65).map(|i| format!("c{i}")).collect();
        assert!(clusters_for_new_token(Role::Agent, Some(&many)).is_err());
    }
}
