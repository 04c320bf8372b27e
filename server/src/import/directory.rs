//! The estate's services as the mesh importers need them.

use super::*;

/// The estate's services as the mesh importers need them: which exist,
/// in which cluster, and which Kubernetes workload an import made each
/// from (their `source`, `kubernetes:CLUSTER/NAMESPACE/KIND/NAME`). Built
/// from an estate file; used by `berth import prometheus` (with a token
/// that may read the estate) and by the server, which resolves what an
/// agent names by workload and cluster.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Directory {
    /// id → (cluster, source).
    services: BTreeMap<String, (String, Option<String>)>,
    /// The estate's clusters: id → its `mesh_cluster` alias, if any.
    clusters: BTreeMap<String, Option<String>>,
}

impl Directory {
    /// From an estate file's JSON (entries that are not objects with an
    /// id are left out: the file was loaded and checked already).
    pub fn from_estate(doc: &Value) -> Directory {
        let services = doc
            .get("services")
            .and_then(Value::as_array)
            .map(|a| {
                a.iter()
                    .filter_map(|s| {
                        let id = s.get("id")?.as_str()?.to_string();
                        let cluster = s.get("cluster").and_then(Value::as_str).unwrap_or("");
                        let source = s.get("source").and_then(Value::as_str).map(String::from);
                        Some((id, (cluster.to_string(), source)))
                    })
                    .collect()
            })
            .unwrap_or_default();
        let clusters = doc
            .get("clusters")
            .and_then(Value::as_array)
            .map(|a| {
                a.iter()
                    .filter_map(|c| {
                        let id = c.get("id")?.as_str()?.to_string();
                        let alias = c.get("mesh_cluster").and_then(Value::as_str);
                        Some((id, alias.map(String::from)))
                    })
                    .collect()
            })
            .unwrap_or_default();
        Directory { services, clusters }
    }

    /// The estate's cluster ids, in order.
    pub fn cluster_ids(&self) -> impl Iterator<Item = &str> {
        self.clusters.keys().map(String::as_str)
    }

    /// The estate cluster a mesh names `mesh_cluster`: the cluster of
    /// that id, else the one declaring it as its `mesh_cluster` (the
    /// estate format keeps both unambiguous).
    pub fn cluster_for_mesh(&self, mesh_cluster: &str) -> Option<&str> {
        if let Some((id, _)) = self.clusters.get_key_value(mesh_cluster) {
            return Some(id);
        }
        self.clusters
            .iter()
            .find(|(_, alias)| alias.as_deref() == Some(mesh_cluster))
            .map(|(id, _)| id.as_str())
    }

    pub fn contains(&self, id: &str) -> bool {
        self.services.contains_key(id)
    }

    pub fn ids(&self) -> impl Iterator<Item = &str> {
        self.services.keys().map(String::as_str)
    }

    /// The service a workload `name` (in `namespace`, when not empty) of
    /// `cluster` is: the one a Kubernetes import of that cluster made from
    /// it; else the service of that id placed in that cluster; else the
    /// id an import gives a second replica (`CLUSTER/NAME`). An error says
    /// why none (or which several) matched.
    pub fn in_cluster(&self, cluster: &str, namespace: &str, name: &str) -> Result<String, String> {
        let imported: Vec<&str> = self
            .services
            .iter()
            .filter(|(_, (c, source))| {
                c == cluster
                    && source
                        .as_deref()
                        .and_then(|s| owned_key(s, kubernetes::IMPORTER, cluster, KEY_PARTS))
                        .is_some_and(|key| {
                            let (ns, _kind, n) = split_key(key);
                            n == name && (namespace.is_empty() || ns == namespace)
                        })
            })
            .map(|(id, _)| id.as_str())
            .collect();
        match imported.as_slice() {
            [one] => return Ok(one.to_string()),
            [] => {}
            several => {
                return Err(format!(
                    "in cluster {cluster:?} it is each of {}: map it with --map",
                    several.join(", ")
                ))
            }
        }
        for id in [name.to_string(), format!("{cluster}/{name}")] {
            if self.services.get(&id).is_some_and(|(c, _)| c == cluster) {
                return Ok(id);
            }
        }
        Err(format!(
            "no service of cluster {cluster:?} is workload {name:?}"
        ))
    }
}
