//! A cluster's free capacity from its Nodes and Pods as the Kubernetes API
//! lists them (`berth agent --kubernetes`): Σ allocatable of the nodes
//! that can take a pod (Ready, not cordoned) − Σ requests of the pods
//! that still hold their requests on those nodes (not Succeeded, not
//! Failed). That is what the scheduler compares a new pod with, so it is
//! the room a moved service would find.
//!
//! Pure: values in, numbers out. A node that can take pods but does not
//! say what it has (no `status.allocatable`) makes the result unknown for
//! that resource, never zero: a guess of zero would tell the advice the
//! cluster is full.

use std::collections::BTreeSet;

use serde_json::Value;

use super::quantity;

/// Free capacity, in the estate's units.
#[derive(Clone, Debug, PartialEq)]
pub struct FreeCapacity {
    /// Cores; `None` = unknown (see `notes`).
    pub cpu_free: Option<f64>,
    /// GiB; `None` = unknown.
    pub memory_free_gib: Option<f64>,
    /// Nodes counted (Ready and schedulable) and all nodes listed.
    pub nodes_counted: usize,
    pub nodes_listed: usize,
    /// Pods whose requests were subtracted.
    pub pods_counted: usize,
    /// Why a resource is unknown, or what was left out, for the log.
    pub notes: Vec<String>,
}

/// The two resources: the field in `allocatable` and `requests`, and
/// whether the base unit is the millicore (CPU) or the byte (memory).
const RESOURCES: [(&str, bool); 2] = [("cpu", true), ("memory", false)];

/// Millicores per core.
const MILLI: f64 = 1000.0;
/// Bytes per GiB (the estate's memory unit).
const GIB: f64 = (1u64 << 30) as f64;

fn name_of(v: &Value) -> &str {
    v.pointer("/metadata/name")
        .and_then(Value::as_str)
        .unwrap_or("?")
}

/// A node takes new pods when its `Ready` condition is `True` and it is
/// not cordoned (`spec.unschedulable`).
fn schedulable(node: &Value) -> bool {
    let ready = node
        .pointer("/status/conditions")
        .and_then(Value::as_array)
        .is_some_and(|cs| {
            cs.iter().any(|c| {
                c.get("type").and_then(Value::as_str) == Some("Ready")
                    && c.get("status").and_then(Value::as_str) == Some("True")
            })
        });
    let cordoned = node
        .pointer("/spec/unschedulable")
        .and_then(Value::as_bool)
        .unwrap_or(false);
    ready && !cordoned
}

/// A quantity (string or bare number) in base units, millicores when
/// `milli`: `Err` with the reason when it cannot be read.
fn amount(v: &Value, milli: bool) -> Result<i128, String> {
    let text = match v {
        Value::String(s) => s.clone(),
        Value::Number(n) => n.to_string(),
        other => return Err(format!("expected a quantity, found {other}")),
    };
    let q = quantity::parse(&text)?;
    let scaled = if milli { q.milli() } else { q.units() };
    scaled.ok_or_else(|| format!("quantity {text:?} out of range"))
}

/// One container's request for a resource, as the scheduler counts it:
/// `requests`, else `limits` (the API server defaults a missing request to
/// the limit; objects read from it already carry it), else nothing.
fn container_request(c: &Value, res: &str, milli: bool) -> Result<i128, String> {
    for field in ["requests", "limits"] {
        if let Some(v) = c.pointer(&format!("/resources/{field}/{res}")) {
            return amount(v, milli);
        }
    }
    Ok(0)
}

/// A pod's effective request for a resource, by the scheduler's rule:
/// `max(Σ app containers + Σ sidecars, max over init containers i of
/// (request_i + Σ sidecars started before i)) + overhead`. Sidecars are
/// init containers with `restartPolicy: Always`.
fn pod_request(pod: &Value, res: &str, milli: bool) -> Result<i128, String> {
    let list = |p: &str| {
        pod.pointer(p)
            .and_then(Value::as_array)
            .map(Vec::as_slice)
            .unwrap_or(&[])
    };
    let mut apps: i128 = 0;
    for c in list("/spec/containers") {
        apps = apps.saturating_add(container_request(c, res, milli)?);
    }
    let mut sidecars: i128 = 0;
    let mut init_peak: i128 = 0;
    for c in list("/spec/initContainers") {
        let r = container_request(c, res, milli)?;
        if c.get("restartPolicy").and_then(Value::as_str) == Some("Always") {
            sidecars = sidecars.saturating_add(r);
        } else {
            init_peak = init_peak.max(sidecars.saturating_add(r));
        }
    }
    let mut total = apps.saturating_add(sidecars).max(init_peak);
    if let Some(o) = pod.pointer(&format!("/spec/overhead/{res}")) {
        total = total.saturating_add(amount(o, milli)?);
    }
    Ok(total)
}

/// Free capacity from the listed nodes and pods.
pub fn free_capacity(nodes: &[Value], pods: &[Value]) -> FreeCapacity {
    let mut notes = Vec::new();
    let mut counted: BTreeSet<&str> = BTreeSet::new();
    // Per resource: Σ allocatable, `None` once a node's is unknown.
    let mut allocatable: [Option<i128>; 2] = [Some(0), Some(0)];
    for node in nodes {
        let name = name_of(node);
        if !schedulable(node) {
            continue;
        }
        counted.insert(name);
        let alloc = node.pointer("/status/allocatable");
        if !alloc.is_some_and(Value::is_object) {
            notes.push(format!(
                "node {name} is Ready but reports no status.allocatable: free capacity unknown"
            ));
            allocatable = [None, None];
            continue;
        }
        for (k, (res, milli)) in RESOURCES.iter().enumerate() {
            let Some(total) = allocatable[k] else {
                continue;
            };
            allocatable[k] = match alloc.and_then(|a| a.get(*res)) {
                None => {
                    notes.push(format!(
                        "node {name} reports no allocatable {res}: free {res} unknown"
                    ));
                    None
                }
                Some(v) => match amount(v, *milli) {
                    Ok(a) => Some(total.saturating_add(a)),
                    Err(e) => {
                        notes.push(format!(
                            "node {name}: /status/allocatable/{res}: {e}: free {res} unknown"
                        ));
                        None
                    }
                },
            };
        }
    }
    let mut used: [Option<i128>; 2] = [Some(0), Some(0)];
    let mut pods_counted = 0;
    for pod in pods {
        let on = pod.pointer("/spec/nodeName").and_then(Value::as_str);
        let phase = pod.pointer("/status/phase").and_then(Value::as_str);
        // A pod not yet bound to a node holds nothing; a finished one
        // (Succeeded, Failed) has given its requests back.
        if !on.is_some_and(|n| counted.contains(n)) || matches!(phase, Some("Succeeded" | "Failed"))
        {
            continue;
        }
        pods_counted += 1;
        for (k, (res, milli)) in RESOURCES.iter().enumerate() {
            let Some(total) = used[k] else { continue };
            used[k] = match pod_request(pod, res, *milli) {
                Ok(r) => Some(total.saturating_add(r)),
                Err(e) => {
                    let ns = pod
                        .pointer("/metadata/namespace")
                        .and_then(Value::as_str)
                        .unwrap_or("default");
                    notes.push(format!(
                        "pod {ns}/{}: {res} request: {e}: free {res} unknown",
                        name_of(pod)
                    ));
                    None
                }
            };
        }
    }
    let free = |k: usize, div: f64| -> Option<f64> {
        // Never below zero: pods that the kubelet admitted beyond
        // allocatable (static pods) leave no room, not negative room.
        Some(allocatable[k]?.saturating_sub(used[k]?).max(0) as f64 / div)
    };
    FreeCapacity {
        cpu_free: free(0, MILLI),
        memory_free_gib: free(1, GIB),
        nodes_counted: counted.len(),
        nodes_listed: nodes.len(),
        pods_counted,
        notes,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn node(name: &str, ready: &str, unschedulable: bool, alloc: Option<Value>) -> Value {
        let mut n = json!({
            "metadata": {"name": name},
            "spec": {"unschedulable": unschedulable},
            "status": {"conditions": [{"type": "Ready", "status": ready}]}
        });
        if let Some(a) = alloc {
            n["status"]["allocatable"] = a;
        }
        n
    }

    fn pod(node: &str, phase: &str, cpu: &str, mem: &str) -> Value {
        json!({
            "metadata": {"name": "p", "namespace": "x"},
            "spec": {"nodeName": node, "containers": [
                {"name": "c", "resources": {"requests": {"cpu": cpu, "memory": mem}}}
            ]},
            "status": {"phase": phase}
        })
    }

    #[test]
    fn ready_schedulable_nodes_less_running_pods() {
        let nodes = [
            node(
                "a",
                "True",
                false,
                Some(json!({"cpu": "3900m", "memory": "15Gi"})),
            ),
            node(
                "b",
                "True",
                false,
                Some(json!({"cpu": 4, "memory": "16Gi"})),
            ),
            // Cordoned, not Ready: neither counts, nor do their pods.
            node("c", "True", true, Some(json!({"cpu": 8, "memory": "32Gi"}))),
            node(
                "d",
                "False",
                false,
                Some(json!({"cpu": 8, "memory": "32Gi"})),
            ),
        ];
        let pods = [
            pod("a", "Running", "500m", "1Gi"),
            pod("b", "Pending", "1", "512Mi"),
            pod("b", "Succeeded", "2", "2Gi"),
            pod("c", "Running", "2", "2Gi"),
            pod("", "Pending", "2", "2Gi"),
        ];
        let f = free_capacity(&nodes, &pods);
        assert_eq!(f.cpu_free, Some(6.4));
        assert_eq!(f.memory_free_gib, Some(29.5));
        assert_eq!((f.nodes_counted, f.nodes_listed, f.pods_counted), (2, 4, 2));
        assert!(f.notes.is_empty(), "{:?}", f.notes);
    }

    #[test]
    fn a_ready_node_without_allocatable_makes_it_unknown() {
        let nodes = [
            node(
                "a",
                "True",
                false,
                Some(json!({"cpu": 4, "memory": "16Gi"})),
            ),
            node("b", "True", false, None),
        ];
        let f = free_capacity(&nodes, &[]);
        assert_eq!((f.cpu_free, f.memory_free_gib), (None, None));
        assert_eq!(
            f.notes,
            ["node b is Ready but reports no status.allocatable: free capacity unknown"]
        );
        // Only memory missing: CPU is still known.
        let f = free_capacity(&[node("a", "True", false, Some(json!({"cpu": 4})))], &[]);
        assert_eq!((f.cpu_free, f.memory_free_gib), (Some(4.0), None));
    }

    #[test]
    fn sidecars_init_containers_and_overhead() {
        let p = json!({
            "metadata": {"name": "p"},
            "spec": {"nodeName": "a",
                "overhead": {"cpu": "100m"},
                "initContainers": [
                    {"name": "proxy", "restartPolicy": "Always", "resources": {"requests": {"cpu": "200m"}}},
                    {"name": "migrate", "resources": {"requests": {"cpu": "2"}}}
                ],
                "containers": [{"name": "app", "resources": {"limits": {"cpu": "1", "memory": "1Gi"}}}]},
            "status": {"phase": "Running"}
        });
        let f = free_capacity(
            &[node(
                "a",
                "True",
                false,
                Some(json!({"cpu": 4, "memory": "4Gi"})),
            )],
            std::slice::from_ref(&p),
        );
        // max(1 + 0.2, 0.2 + 2) + 0.1 = 2.3 cores; memory from the limit.
        assert_eq!(f.cpu_free, Some(1.7));
        assert_eq!(f.memory_free_gib, Some(3.0));
    }
}
