//! From the mesh's names to the estate's: workload → service mapping,
//! and the cluster labels read against the estate's clusters.

use super::*;

/// Workload → service id. By default a workload's name is the service id
/// (in a cluster, the estate's service of that name there: [`Resolved`]);
/// entries here override that, by `cluster:namespace/name`,
/// `cluster:name`, `namespace/name` or `name`, the most specific entry
/// winning. Cluster names as the mesh labels them may be renamed to the
/// estate's cluster ids (`--map-cluster`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Mapping {
    entries: BTreeMap<String, String>,
    clusters: BTreeMap<String, String>,
}

/// A name part of a workload key: not empty, no spaces, none of the
/// separators.
pub(super) fn bad_key_part(p: &str) -> bool {
    p.is_empty() || p.chars().any(|c| c.is_whitespace() || c == '/' || c == ':')
}

impl Mapping {
    /// Add `workload` (`[CLUSTER:][NAMESPACE/]NAME`) → `service`. Refuses
    /// empty names and a workload mapped twice to different services.
    pub fn add(&mut self, workload: &str, service: &str) -> Result<(), String> {
        // Workload names and namespaces are DNS labels (no ':'), so a
        // cluster is what comes before the last ':'.
        let (cluster, rest) = match workload.rsplit_once(':') {
            Some((c, r)) => (Some(c), r),
            None => (None, workload),
        };
        let parts: Vec<&str> = rest.split('/').collect();
        let bad = parts.len() > 2
            || parts.iter().any(|p| bad_key_part(p))
            || cluster.is_some_and(|c| c.is_empty() || c.chars().any(char::is_whitespace));
        if bad {
            return Err(format!(
                "workload {workload:?}: expected NAME, NAMESPACE/NAME, CLUSTER:NAME or CLUSTER:NAMESPACE/NAME, without spaces"
            ));
        }
        if service.is_empty() || service.chars().any(char::is_whitespace) {
            return Err(format!(
                "service {service:?} (for workload {workload:?}): expected a service id, without spaces"
            ));
        }
        match self.entries.get(workload) {
            Some(s) if s != service => Err(format!(
                "workload {workload:?} is mapped twice: to {s:?} and to {service:?}"
            )),
            _ => {
                self.entries
                    .insert(workload.to_string(), service.to_string());
                Ok(())
            }
        }
    }

    /// Parse `WORKLOAD=SERVICE` (the `--map` flag).
    pub fn add_arg(&mut self, arg: &str) -> Result<(), String> {
        let Some((w, s)) = arg.split_once('=') else {
            return Err(format!(
                "--map {arg:?}: expected WORKLOAD=SERVICE, e.g. --map catalog-v2=catalog"
            ));
        };
        self.add(w.trim(), s.trim())
            .map_err(|e| format!("--map {arg:?}: {e}"))
    }

    /// Parse `MESH_CLUSTER=ESTATE_CLUSTER` (the `--map-cluster` flag).
    pub fn add_cluster_arg(&mut self, arg: &str) -> Result<(), String> {
        let bad = |p: &str| p.is_empty() || p.chars().any(char::is_whitespace);
        match arg.split_once('=') {
            Some((m, e)) if !bad(m.trim()) && !bad(e.trim()) => {
                match self.clusters.insert(m.trim().into(), e.trim().into()) {
                    Some(prev) if prev != e.trim() => Err(format!(
                        "--map-cluster {arg:?}: {:?} is mapped twice: to {prev:?} and to {:?}",
                        m.trim(),
                        e.trim()
                    )),
                    _ => Ok(()),
                }
            }
            _ => Err(format!(
                "--map-cluster {arg:?}: expected MESH_CLUSTER=ESTATE_CLUSTER, e.g. --map-cluster cluster-1=c-fra-1"
            )),
        }
    }

    /// Add a mapping file's entries: an object of workload → service id
    /// (JSON, or YAML with the same shape).
    pub fn add_file(&mut self, v: &Value) -> Result<(), String> {
        let Some(obj) = v.as_object() else {
            return Err(format!(
                "expected an object of workload → service id, found {}",
                describe(v)
            ));
        };
        for (w, s) in obj {
            let Some(s) = s.as_str() else {
                return Err(format!(
                    "/{w}: expected a service id (a string), found {}",
                    describe(s)
                ));
            };
            self.add(w, s).map_err(|e| format!("/{w}: {e}"))?;
        }
        Ok(())
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// The estate cluster a mesh's cluster label stands for.
    pub fn cluster_for(&self, mesh_cluster: &str) -> String {
        self.clusters
            .get(mesh_cluster)
            .cloned()
            .unwrap_or_else(|| mesh_cluster.to_string())
    }

    /// The service an entry maps the workload to, the most specific first.
    pub fn entry_for(&self, w: &Workload) -> Option<&str> {
        let mut keys = vec![];
        if !w.cluster.is_empty() {
            let c = self.cluster_for(&w.cluster);
            for cluster in [w.cluster.as_str(), c.as_str()] {
                if !w.namespace.is_empty() {
                    keys.push(format!("{cluster}:{}/{}", w.namespace, w.name));
                }
                keys.push(format!("{cluster}:{}", w.name));
            }
        }
        if !w.namespace.is_empty() {
            keys.push(format!("{}/{}", w.namespace, w.name));
        }
        keys.push(w.name.clone());
        keys.iter()
            .find_map(|k| self.entries.get(k))
            .map(String::as_str)
    }

    /// The service id a workload stands for, ignoring its cluster.
    pub fn service_for(&self, w: &Workload) -> String {
        self.entry_for(w)
            .map_or_else(|| w.name.clone(), String::from)
    }
}

/// How one end of an edge was resolved to a service.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Resolved {
    /// An estate service id.
    Service(String),
    /// A workload name in a cluster, for the server to resolve against
    /// its estate (sent as `from`/`to` with `from_cluster`/`to_cluster`):
    /// an agent may not read the estate.
    InCluster { name: String, cluster: String },
    /// Nothing in the estate: the reason.
    Missing(String),
}

/// Resolve one end: a mapping entry wins; else, for a workload with a
/// cluster, the estate service of that workload in that cluster (or, with
/// no estate to ask, the name and cluster for the server to resolve);
/// else the workload's name.
pub fn resolve(w: &Workload, mapping: &Mapping, known: Option<&Directory>) -> Resolved {
    let checked = |id: String| match known {
        Some(d) if !d.contains(&id) => Resolved::Missing(format!("as service {id:?}")),
        _ => Resolved::Service(id),
    };
    if let Some(id) = mapping.entry_for(w) {
        return checked(id.to_string());
    }
    if w.cluster.is_empty() {
        return checked(w.name.clone());
    }
    let cluster = mapping.cluster_for(&w.cluster);
    match known {
        None => Resolved::InCluster {
            name: w.name.clone(),
            cluster,
        },
        Some(d) => match d.in_cluster(&cluster, &w.namespace, &w.name) {
            Ok(id) => Resolved::Service(id),
            Err(why) => Resolved::Missing(why),
        },
    }
}

/// Whether a workload stands for "outside the mesh" (no estate service
/// can be named): an unidentified peer or the mesh's name for one.
pub(super) fn outside_mesh(mesh: Mesh, w: &Workload) -> bool {
    w.name.is_empty() || mesh.outside().contains(&w.name.as_str())
}

/// The cluster values the series name, over the ends inside the mesh of
/// every query (an end outside the mesh has no cluster worth naming:
/// Istio labels it `unknown`), and the queries some of whose samples name
/// none.
pub fn cluster_values(
    results: &Results,
    reading: &Reading,
) -> (BTreeSet<String>, Vec<&'static str>) {
    let mut values = BTreeSet::new();
    let mut unlabelled = vec![];
    for (name, r) in results.named() {
        let mut none = false;
        for s in &r.samples {
            for w in [&s.edge.source, &s.edge.destination] {
                if outside_mesh(reading.mesh, w) {
                    continue;
                }
                if w.cluster.is_empty() {
                    none = true;
                } else if !values.contains(&w.cluster) {
                    values.insert(w.cluster.clone());
                }
            }
        }
        if none {
            unlabelled.push(name);
        }
    }
    (values, unlabelled)
}

/// Why the series' clusters cannot be read: cluster values that match no
/// cluster of the estate, or queries whose samples name no cluster where
/// others name several. Nothing may be sent then: the replicas of a
/// workload would be merged, or attributed to the wrong cluster.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ClusterError {
    /// The cluster labels read (`SOURCE, DESTINATION`).
    pub labels: String,
    /// Every value the series name, in order.
    pub values: Vec<String>,
    /// (mesh cluster value, why it matches nothing), in order.
    pub unmatched: Vec<(String, String)>,
    /// The queries some of whose samples name no cluster.
    pub unlabelled: Vec<&'static str>,
    /// The estate's cluster ids (empty when the estate was not read).
    pub estate: Vec<String>,
}

impl ClusterError {
    /// The estate cluster a mesh value most likely stands for, for the
    /// suggested fix: the one cluster whose id contains it (`east-1` in
    /// `c-east-1`), if exactly one does and it is not named already.
    pub(super) fn guess(&self, value: &str) -> Option<&str> {
        let v = value.to_ascii_lowercase();
        let found: Vec<&str> = self
            .estate
            .iter()
            .map(String::as_str)
            .filter(|id| id.to_ascii_lowercase().contains(&v))
            .collect();
        match found.as_slice() {
            [one] if !self.values.iter().any(|v| v == one) => Some(one),
            _ => None,
        }
    }

    /// The message, a line each: what matched nothing, and the fix.
    pub fn lines(&self) -> Vec<String> {
        let mut out = vec![];
        let quoted = |v: &[String]| {
            v.iter()
                .map(|c| format!("{c:?}"))
                .collect::<Vec<_>>()
                .join(", ")
        };
        if !self.unmatched.is_empty() {
            let names: Vec<String> = self.unmatched.iter().map(|(v, _)| v.clone()).collect();
            out.push(format!(
                "the mesh's series name {} cluster{} ({}) of which {} match{} no cluster of the estate: {}; nothing was sent (each workload's replicas would be merged or misplaced)",
                self.values.len(),
                if self.values.len() == 1 { "" } else { "s" },
                self.labels,
                names.len(),
                if names.len() == 1 { "es" } else { "" },
                quoted(&names),
            ));
            for (v, why) in &self.unmatched {
                out.push(format!("  {v:?}: {why}"));
            }
            if !self.estate.is_empty() {
                out.push(format!("the estate's clusters: {}", self.estate.join(", ")));
            }
            out.push("map each mesh cluster to the estate's cluster, one flag per cluster:".into());
            for (v, _) in &self.unmatched {
                out.push(format!(
                    "  --map-cluster {v}={}",
                    self.guess(v).unwrap_or("CLUSTER")
                ));
            }
            out.push(format!(
                "(or declare the mesh's name on the estate's cluster, e.g. \"mesh_cluster\": {:?}; or read without clusters, merging the replicas of every workload: --cluster-labels none)",
                self.unmatched[0].0
            ));
        }
        if !self.unlabelled.is_empty() {
            out.push(format!(
                "the {} quer{} gave samples that name no cluster ({}) where the series name {}: group every query by {}, or read without clusters: --cluster-labels none",
                self.unlabelled.join(" and "),
                if self.unlabelled.len() == 1 { "y" } else { "ies" },
                self.labels,
                quoted(&self.values),
                self.labels,
            ));
        }
        out
    }
}

impl fmt::Display for ClusterError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.lines().join("\n"))
    }
}

/// Read the series' clusters before [`derive`]. Where the series name one
/// cluster value (a single-cluster Istio labels everything `Kubernetes`)
/// or none, and the cluster labels were not named (`--cluster-labels`),
/// the clusters are dropped: the import is what it is without them.
/// Where they name several (or the labels were named), each value is
/// resolved to an estate cluster — `--map-cluster` first, else the
/// cluster of that id, else the one declaring it as `mesh_cluster`
/// (entered into `mapping`, so [`resolve`] finds each end in its
/// cluster) — and a value that matches none is an error naming every
/// such value and its fix. Without the estate (`known` is `None`: an
/// agent token), the server resolves the same way when the flows arrive.
pub fn read_clusters(
    results: &mut Results,
    reading: &Reading,
    mapping: &mut Mapping,
    known: Option<&Directory>,
) -> Result<(), ClusterError> {
    let labels = &reading.labels;
    let (Some(source), Some(destination)) = (&labels.source_cluster, &labels.destination_cluster)
    else {
        return Ok(());
    };
    let (values, unlabelled) = cluster_values(results, reading);
    if values.len() <= 1 && !reading.clusters_named {
        for r in results.named_mut() {
            for s in &mut r.samples {
                s.edge.source.cluster.clear();
                s.edge.destination.cluster.clear();
            }
        }
        return Ok(());
    }
    let mut error = ClusterError {
        labels: format!("{source}, {destination}"),
        values: values.iter().cloned().collect(),
        unmatched: vec![],
        unlabelled: if values.len() > 1 { unlabelled } else { vec![] },
        estate: known
            .map(|d| d.cluster_ids().map(String::from).collect())
            .unwrap_or_default(),
    };
    if let Some(d) = known {
        for v in &values {
            match mapping.clusters.get(v) {
                Some(target) if d.cluster_ids().any(|c| c == target) => {}
                Some(target) => error.unmatched.push((
                    v.clone(),
                    format!("--map-cluster {v}={target}: the estate has no cluster {target:?}"),
                )),
                None => match d.cluster_for_mesh(v) {
                    Some(id) if id == v => {}
                    Some(id) => {
                        mapping.clusters.insert(v.clone(), id.to_string());
                    }
                    None => error.unmatched.push((
                        v.clone(),
                        "no estate cluster has this id or mesh_cluster, and no --map-cluster names it".into(),
                    )),
                },
            }
        }
    }
    if error.unmatched.is_empty() && error.unlabelled.is_empty() {
        Ok(())
    } else {
        Err(error)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mapping_prefers_the_namespaced_entry() {
        let mut m = Mapping::default();
        m.add_arg("catalog-v2=catalog").unwrap();
        m.add_arg("legacy/catalog-v2=old-catalog").unwrap();
        let w = |ns: &str, n: &str| Workload {
            cluster: String::new(),
            namespace: ns.into(),
            name: n.into(),
        };
        assert_eq!(m.service_for(&w("shop", "catalog-v2")), "catalog");
        assert_eq!(m.service_for(&w("legacy", "catalog-v2")), "old-catalog");
        assert_eq!(m.service_for(&w("shop", "cart")), "cart");
        assert!(m
            .add_arg("catalog-v2=other")
            .unwrap_err()
            .contains("mapped twice"));
        assert!(m.add_arg("nope").unwrap_err().contains("WORKLOAD=SERVICE"));
        assert!(m.add_arg("a/b/c=x").is_err());
    }
}
