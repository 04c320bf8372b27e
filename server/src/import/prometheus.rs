//! Service-mesh metrics → flow observations. Pure: Prometheus query
//! responses (JSON values, as `/api/v1/query` answers them) in; flows
//! between estate services, with their weight and MB/s, and notes out. No
//! I/O and no clock: the HTTP client is `crate::prom_client`, the
//! submission `crate::submit`. `docs/observations.md` has the rules; the
//! meshes' metric and label names are in [`super::mesh`].
//!
//! Up to four instant queries, each grouped by the mesh's workload labels
//! (and its cluster labels, where it has them; [`read_clusters`]):
//!
//! - **rate**: requests per second on the edge;
//! - **duration**: the mean request duration in milliseconds;
//! - **bytes** (optional): bytes per second, both ways;
//! - **coverage** (optional): samples in the rate window of each edge's
//!   best-covered series, to tell a scrape gap (figures then *reported*).
//!
//! A flow's weight is the mean number of requests in flight on it
//! (`docs/advice.md` §1), which Little's law gives from what the mesh
//! counts: requests/s × mean duration in s. Its MB/s is bytes/s ÷ 10⁶
//! (`docs/estate-format.md`: MB = 10⁶ bytes).

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;

use berth_api::FactUpdate;
use serde::Serialize;
use serde_json::Value;

use berth_engine::json_shape::describe;

use super::mesh::{Labels, Mesh, Queries};
use super::Directory;

/// What is read and how: the mesh, the labels its answers are grouped by,
/// and the queries run (the mesh's defaults unless overridden).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Reading {
    pub mesh: Mesh,
    pub labels: Labels,
    pub queries: Queries,
    /// The cluster labels were named (`--cluster-labels`), not the
    /// preset's default: a single cluster value is then kept and each end
    /// resolved in it ([`read_clusters`]).
    pub clusters_named: bool,
}

impl Reading {
    /// The mesh's own labels (its cluster labels included, where it has
    /// them) and default queries.
    pub fn new(mesh: Mesh) -> Reading {
        Reading::with_labels(mesh, mesh.default_labels())
    }

    /// The mesh's default queries over other labels.
    pub fn with_labels(mesh: Mesh, labels: Labels) -> Reading {
        Reading {
            queries: mesh.queries(&labels),
            mesh,
            labels,
            clusters_named: false,
        }
    }

    /// The queries this reading would run by default.
    pub fn defaults(&self) -> Queries {
        self.mesh.queries(&self.labels)
    }

    /// Warnings about the queries themselves (a custom query that counts
    /// both sides of every call).
    pub fn query_notes(&self) -> Vec<Note> {
        self.mesh
            .query_warnings(&self.queries, &self.defaults())
            .into_iter()
            .map(|message| Note {
                code: NoteCode::BothSides,
                message,
            })
            .collect()
    }
}

impl Default for Reading {
    fn default() -> Reading {
        Reading::new(Mesh::Istio)
    }
}

/// When the queries found nothing at all — no request rate and no bytes
/// for any edge — the Prometheus asked is almost certainly not the one
/// with the mesh's metrics, or the metrics are named otherwise: "0 flows"
/// would hide that. What to say instead: which metric (or query) was
/// looked for and what to check. `None` when something was found.
pub fn nothing_found(results: &Results, reading: &Reading) -> Option<String> {
    let bytes_empty = results.bytes.as_ref().is_none_or(|b| b.samples.is_empty());
    if !results.rate.samples.is_empty() || !bytes_empty {
        return None;
    }
    let mesh = reading.mesh;
    let looked_for = if reading.queries.rate == reading.defaults().rate {
        mesh.metric_names().to_string()
    } else {
        format!("the rate query {:?}", reading.queries.rate)
    };
    Some(format!(
        "no mesh metrics ({mesh}): {looked_for} gave no samples over the last {w}. Check {check}, that the mesh carried traffic in the last {w}, and, for a custom --query-rate, that it gives one sample per edge grouped by {by}",
        w = super::mesh::WINDOW,
        check = mesh.what_to_check(),
        by = reading.labels.group_by(),
    ))
}

/// Significant digits kept in a derived weight or MB/s. A measured fact is
/// trusted to ±5 % (`docs/advice.md` §2), so six digits lose nothing real
/// while keeping floating-point dust (14.200000000000001) out of estate
/// files and reports.
pub const SIGNIFICANT_DIGITS: usize = 6;

/// Bytes in a megabyte: the estate format's MB is 10⁶ bytes.
const BYTES_PER_MB: f64 = 1e6;

/// Milliseconds in a second: durations come in ms, Little's law wants s.
const MS_PER_S: f64 = 1000.0;

/// A workload as the mesh names it: its cluster (empty unless cluster
/// labels are read), namespace (empty where the mesh has none) and name.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
pub struct Workload {
    pub cluster: String,
    pub namespace: String,
    pub name: String,
}

impl fmt::Display for Workload {
    /// `[CLUSTER:][NAMESPACE/]NAME`, the form `--map` takes.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if !self.cluster.is_empty() {
            write!(f, "{}:", self.cluster)?;
        }
        if !self.namespace.is_empty() {
            write!(f, "{}/", self.namespace)?;
        }
        write!(f, "{}", self.name)
    }
}

/// A caller and a callee workload.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
pub struct Edge {
    pub source: Workload,
    pub destination: Workload,
}

impl fmt::Display for Edge {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} → {}", self.source, self.destination)
    }
}

/// One sample of an instant vector.
#[derive(Clone, Debug, PartialEq)]
pub struct Sample {
    pub edge: Edge,
    /// As Prometheus gave it: may be NaN or infinite (`0/0` in a ratio).
    pub value: f64,
    /// Evaluation time, whole seconds (fractions dropped: facts are dated
    /// to the second).
    pub at: i64,
}

/// A query's samples and any warnings Prometheus attached.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct QueryResult {
    pub samples: Vec<Sample>,
    pub warnings: Vec<String>,
}

/// A query response that cannot be used: which query, where in its JSON
/// (a JSON pointer; in file mode it starts at the query's key), and why.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct QueryError {
    /// `rate`, `duration` or `bytes`; empty for the results file as a
    /// whole.
    pub query: String,
    pub path: String,
    pub message: String,
    /// Prometheus's `errorType` when it answered `status: "error"`.
    pub error_type: Option<String>,
}

impl QueryError {
    fn at(query: &str, path: String, message: impl Into<String>) -> QueryError {
        QueryError {
            query: query.to_string(),
            path,
            message: message.into(),
            error_type: None,
        }
    }

    /// Prometheus could not answer now (overloaded, timed out, shutting
    /// down) rather than refusing the query: worth trying again later.
    pub fn is_transient(&self) -> bool {
        matches!(
            self.error_type.as_deref(),
            Some("timeout" | "canceled" | "unavailable" | "internal")
        )
    }
}

impl fmt::Display for QueryError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // An error about a results file as a whole has no query.
        if !self.query.is_empty() {
            write!(f, "{} query: ", self.query)?;
        }
        if !self.path.is_empty() {
            write!(f, "{}: ", self.path)?;
        }
        write!(f, "{}", self.message)
    }
}

/// Prometheus's sample values are strings; these are the spellings of the
/// special values it uses (Go's `strconv.FormatFloat`).
pub(crate) fn parse_sample_value(s: &str) -> Option<f64> {
    match s {
        "NaN" => Some(f64::NAN),
        "+Inf" | "Inf" => Some(f64::INFINITY),
        "-Inf" => Some(f64::NEG_INFINITY),
        // Rust would also take "inf" or "nan" in any case; Prometheus never
        // writes those, so a string like that is something else.
        _ if s
            .chars()
            .any(|c| c.is_ascii_alphabetic() && c != 'e' && c != 'E') =>
        {
            None
        }
        _ => s.parse().ok(),
    }
}

/// Parse one `/api/v1/query` response. `query` names it in errors; `base`
/// is the pointer of the response within its file ("" when it is the
/// whole body). An instant vector grouped by `reading`'s labels is
/// expected; two samples for one edge are refused (the query grouped by
/// more than the workloads, so their meaning is ambiguous).
pub fn parse_response(
    query: &str,
    base: &str,
    v: &Value,
    reading: &Reading,
) -> Result<QueryResult, QueryError> {
    let at = |p: &str| format!("{base}{p}");
    let err = |p: &str, m: String| QueryError::at(query, at(p), m);
    let Some(obj) = v.as_object() else {
        return Err(err(
            "",
            format!(
                "expected a Prometheus query response (an object with \"status\"), found {}",
                describe(v)
            ),
        ));
    };
    match obj.get("status").and_then(Value::as_str) {
        Some("success") => {}
        Some("error") => {
            let error_type = obj
                .get("errorType")
                .and_then(Value::as_str)
                .unwrap_or("(none)");
            let error = obj
                .get("error")
                .and_then(Value::as_str)
                .unwrap_or("(no message)");
            return Err(QueryError {
                query: query.to_string(),
                path: at(""),
                message: format!("Prometheus answered errorType {error_type:?}: {error}"),
                error_type: Some(error_type.to_string()),
            });
        }
        Some(other) => {
            return Err(err(
                "/status",
                format!("expected \"success\" or \"error\", found {other:?}"),
            ))
        }
        None => {
            return Err(err(
                "/status",
                match obj.get("status") {
                    None => "missing: not a Prometheus query response".to_string(),
                    Some(s) => format!("expected a string, found {}", describe(s)),
                },
            ))
        }
    }
    let warnings = match obj.get("warnings") {
        None | Some(Value::Null) => vec![],
        Some(Value::Array(a)) => a
            .iter()
            .map(|w| w.as_str().map_or_else(|| w.to_string(), String::from))
            .collect(),
        Some(other) => {
            return Err(err(
                "/warnings",
                format!("expected an array of strings, found {}", describe(other)),
            ))
        }
    };
    let data = match obj.get("data") {
        Some(d @ Value::Object(_)) => d,
        Some(other) => {
            return Err(err(
                "/data",
                format!("expected an object, found {}", describe(other)),
            ))
        }
        None => return Err(err("/data", "missing".into())),
    };
    match data.get("resultType") {
        Some(Value::String(t)) if t == "vector" => {}
        Some(Value::String(t)) => {
            return Err(err(
                "/data/resultType",
                format!(
                    "expected \"vector\" (an instant query, /api/v1/query), found {t:?}; {}",
                    if t == "matrix" {
                        "a range query or a range selector gives a matrix: wrap it in rate() or sum()"
                    } else {
                        "the query must give one sample per workload edge"
                    }
                ),
            ))
        }
        Some(other) => {
            return Err(err(
                "/data/resultType",
                format!("expected \"vector\", found {}", describe(other)),
            ))
        }
        None => return Err(err("/data/resultType", "missing".into())),
    }
    let result = match data.get("result") {
        Some(Value::Array(a)) => a,
        Some(other) => {
            return Err(err(
                "/data/result",
                format!("expected an array, found {}", describe(other)),
            ))
        }
        None => return Err(err("/data/result", "missing".into())),
    };
    let mut samples = Vec::with_capacity(result.len());
    let mut seen: BTreeMap<Edge, usize> = BTreeMap::new();
    for (i, s) in result.iter().enumerate() {
        let p = |rest: &str| format!("/data/result/{i}{rest}");
        let Some(s) = s.as_object() else {
            return Err(err(
                &p(""),
                format!(
                    "expected a sample {{\"metric\", \"value\"}}, found {}",
                    describe(s)
                ),
            ));
        };
        let metric = match s.get("metric") {
            Some(Value::Object(m)) => m,
            Some(other) => {
                return Err(err(
                    &p("/metric"),
                    format!("expected an object of labels, found {}", describe(other)),
                ))
            }
            None => return Err(err(&p("/metric"), "missing".into())),
        };
        let labels = &reading.labels;
        let label = |name: &str, required: bool| -> Result<String, QueryError> {
            match metric.get(name) {
                Some(Value::String(v)) => Ok(v.clone()),
                Some(other) => Err(err(
                    &p(&format!("/metric/{name}")),
                    format!("expected a string, found {}", describe(other)),
                )),
                None if required => Err(err(
                    &p(&format!("/metric/{name}")),
                    format!("missing: the query must group by {}", labels.group_by()),
                )),
                // A namespace may be left out of a custom query's grouping
                // (one namespace, or names unique across namespaces); a
                // cluster label may be absent (a series from a cluster
                // that does not set it); where the mesh leaves a peer it
                // did not identify unlabelled, the workload too (Prometheus
                // drops empty labels): such an edge is outside the mesh.
                None => Ok(String::new()),
            }
        };
        let optional = |name: Option<&String>| match name {
            Some(n) => label(n, false),
            None => Ok(String::new()),
        };
        let workload_required = !reading.mesh.absent_is_outside();
        let edge = Edge {
            source: Workload {
                cluster: optional(labels.source_cluster.as_ref())?,
                namespace: optional(labels.source_namespace.as_ref())?,
                name: label(&labels.source_workload, workload_required)?,
            },
            destination: Workload {
                cluster: optional(labels.destination_cluster.as_ref())?,
                namespace: optional(labels.destination_namespace.as_ref())?,
                name: label(&labels.destination_workload, workload_required)?,
            },
        };
        let pair =
            match s.get("value") {
                Some(Value::Array(a)) if a.len() == 2 => a,
                Some(Value::Array(a)) => {
                    return Err(err(
                        &p("/value"),
                        format!(
                            "expected [timestamp, \"value\"], found an array of {} items",
                            a.len()
                        ),
                    ))
                }
                Some(other) => {
                    return Err(err(
                        &p("/value"),
                        format!("expected [timestamp, \"value\"], found {}", describe(other)),
                    ))
                }
                None if s.contains_key("values") => return Err(err(
                    &p("/value"),
                    "missing (the sample has \"values\": a range result, not an instant vector)"
                        .into(),
                )),
                None => return Err(err(&p("/value"), "missing".into())),
            };
        let at = match pair[0].as_f64() {
            Some(t) if t.is_finite() && t >= 0.0 => t.floor() as i64,
            _ => {
                return Err(err(
                    &p("/value/0"),
                    format!(
                        "expected a timestamp (seconds since 1970), found {}",
                        describe(&pair[0])
                    ),
                ))
            }
        };
        let value = match &pair[1] {
            Value::String(text) => parse_sample_value(text).ok_or_else(|| {
                err(
                    &p("/value/1"),
                    format!("expected a number in a string, found {text:?}"),
                )
            })?,
            other => {
                return Err(err(
                    &p("/value/1"),
                    format!(
                        "expected a number in a string (Prometheus writes \"12.5\"), found {}",
                        describe(other)
                    ),
                ))
            }
        };
        if let Some(first) = seen.insert(edge.clone(), i) {
            return Err(err(
                &p("/metric"),
                format!(
                    "a second sample for {edge} (the first is {base}/data/result/{first}): group the query by exactly {}", reading.labels.group_by()
                ),
            ));
        }
        samples.push(Sample { edge, value, at });
    }
    Ok(QueryResult { samples, warnings })
}

/// The query results, parsed. `bytes` is `None` when no bytes query was
/// run (or the saved file has none); `coverage` likewise.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Results {
    pub rate: QueryResult,
    pub duration: QueryResult,
    pub bytes: Option<QueryResult>,
    pub coverage: Option<QueryResult>,
}

impl Results {
    /// Each query's result, by name.
    fn named(&self) -> impl Iterator<Item = (&'static str, &QueryResult)> {
        [
            ("rate", Some(&self.rate)),
            ("duration", Some(&self.duration)),
            ("bytes", self.bytes.as_ref()),
            ("coverage", self.coverage.as_ref()),
        ]
        .into_iter()
        .filter_map(|(n, r)| Some((n, r?)))
    }

    fn named_mut(&mut self) -> impl Iterator<Item = &mut QueryResult> {
        [
            Some(&mut self.rate),
            Some(&mut self.duration),
            self.bytes.as_mut(),
            self.coverage.as_mut(),
        ]
        .into_iter()
        .flatten()
    }
}

/// The keys of a saved results file.
pub const FILE_KEYS: [&str; 4] = ["rate", "duration", "bytes", "coverage"];

/// Parse a saved results file: `{"rate": <response>, "duration":
/// <response>, "bytes": <response>, "coverage": <response>}`, `bytes` and
/// `coverage` optional. Paths in errors start at the query's key
/// (`/rate/data/result/2/value/1`).
pub fn parse_file(v: &Value, reading: &Reading) -> Result<Results, QueryError> {
    let Some(obj) = v.as_object() else {
        return Err(QueryError::at(
            "",
            String::new(),
            format!(
                "expected an object {{\"rate\": …, \"duration\": …, \"bytes\": …}} of query responses, found {}",
                describe(v)
            ),
        ));
    };
    if obj.contains_key("status") {
        return Err(QueryError::at(
            "",
            String::new(),
            "this is one query response, not a results file: expected {\"rate\": <response>, \"duration\": <response>, \"bytes\": <response>}",
        ));
    }
    if let Some(k) = obj.keys().find(|k| !FILE_KEYS.contains(&k.as_str())) {
        return Err(QueryError::at(
            "",
            format!("/{k}"),
            "unknown key: expected \"rate\", \"duration\" and optionally \"bytes\" and \"coverage\"",
        ));
    }
    let required = |k: &str| -> Result<QueryResult, QueryError> {
        match obj.get(k) {
            Some(r) => parse_response(k, &format!("/{k}"), r, reading),
            None => Err(QueryError::at(
                k,
                format!("/{k}"),
                "missing: the file needs the rate and duration query responses",
            )),
        }
    };
    let optional = |k: &str| -> Result<Option<QueryResult>, QueryError> {
        match obj.get(k) {
            None | Some(Value::Null) => Ok(None),
            Some(r) => parse_response(k, &format!("/{k}"), r, reading).map(Some),
        }
    };
    Ok(Results {
        rate: required("rate")?,
        duration: required("duration")?,
        bytes: optional("bytes")?,
        coverage: optional("coverage")?,
    })
}

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
fn bad_key_part(p: &str) -> bool {
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
fn outside_mesh(mesh: Mesh, w: &Workload) -> bool {
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
    fn guess(&self, value: &str) -> Option<&str> {
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

/// Stable note codes (reports and logs rely on them; add, never rename).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum NoteCode {
    /// Source or destination is outside the mesh (`unknown`).
    OutsideMesh,
    /// The workload maps to no service of the estate.
    NotInEstate,
    /// Both ends map to the same service.
    SelfEdge,
    /// Requests but no duration: the weight cannot be derived.
    NoDuration,
    /// The bytes query ran but had nothing for this edge.
    NoBytes,
    /// The bytes query returned no samples at all.
    NoByteMetrics,
    /// A value that is not a finite number ≥ 0 (NaN, infinite, negative).
    BadValue,
    /// A warning Prometheus attached to a response.
    PrometheusWarning,
    /// Bytes but no requests (a TCP connection: a database, a cache): the
    /// weight cannot be derived.
    NoRequests,
    /// Fewer samples in the window than the best-covered edges have: a
    /// scrape gap; the figures go as *reported*.
    ScrapeGap,
    /// A custom query of a two-sided mesh that does not pick a side.
    BothSides,
}

impl NoteCode {
    pub fn as_str(self) -> &'static str {
        match self {
            NoteCode::OutsideMesh => "outside_mesh",
            NoteCode::NotInEstate => "not_in_estate",
            NoteCode::SelfEdge => "self_edge",
            NoteCode::NoDuration => "no_duration",
            NoteCode::NoBytes => "no_bytes",
            NoteCode::NoByteMetrics => "no_byte_metrics",
            NoteCode::BadValue => "bad_value",
            NoteCode::PrometheusWarning => "prometheus_warning",
            NoteCode::NoRequests => "no_requests",
            NoteCode::ScrapeGap => "scrape_gap",
            NoteCode::BothSides => "both_sides",
        }
    }
}

/// Something left out, and why.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Note {
    pub code: NoteCode,
    pub message: String,
}

impl fmt::Display for Note {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.code.as_str(), self.message)
    }
}

/// A value and when it was observed (seconds since 1970).
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct Observed {
    pub value: f64,
    pub observed_at: i64,
}

/// How sure the figures of a flow are: *measured* over the whole window,
/// or *reported* when the window has a scrape gap (the rate is then
/// extrapolated over missing samples).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Class {
    Measured,
    Reported,
}

impl Class {
    pub fn as_str(self) -> &'static str {
        match self {
            Class::Measured => "measured",
            Class::Reported => "reported",
        }
    }
}

/// A flow between two estate services, as derived. `weight` or `mb_s` is
/// `None` when it could not be derived: it is then not sent, so what the
/// estate knew stays (a missing metric is not evidence of anything).
/// `from_cluster`/`to_cluster` are set when an end is a workload in a
/// cluster for the server to resolve ([`Resolved::InCluster`]).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Flow {
    pub from: String,
    pub to: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub from_cluster: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub to_cluster: Option<String>,
    pub weight: Option<Observed>,
    pub mb_s: Option<Observed>,
    pub class: Class,
    /// The workload edges summed into it.
    pub edges: Vec<Edge>,
}

/// What [`derive`] found: flows sorted by (from, to), notes, and the
/// services the mesh covers.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct Derived {
    pub flows: Vec<Flow>,
    pub notes: Vec<Note>,
    /// Every estate service that appears in the mesh's series at all (at
    /// either end of any edge of any query, with or without figures), by
    /// (id, cluster): its traffic is observed, so a flow the mesh does
    /// not show is a measured zero (`docs/advice.md` §2, Traffic
    /// coverage).
    pub covered: Vec<Covered>,
}

/// A service whose traffic the mesh observed: an estate service id, or
/// (`cluster` set) a workload name in that cluster for the server to
/// resolve; observed over [`COVERED_WINDOW_S`] ending at `observed_at`.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize)]
pub struct Covered {
    pub service: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cluster: Option<String>,
    pub observed_at: i64,
}

/// The window of every preset's queries ([`super::mesh::WINDOW`]) in
/// seconds: what a covered service's traffic was observed over.
pub const COVERED_WINDOW_S: f64 = 300.0;

/// An edge with fewer samples than this share of the best-covered edge's
/// has a gap. 10 % slack covers the window's alignment (a 5-minute window
/// holds 20 or 21 samples at 15 s) and one missed scrape at 15 s (5 %);
/// at a 60 s interval one missed scrape — two minutes of a five-minute
/// window without a sample — counts as a gap, as it should.
pub const COVERAGE_FRACTION: f64 = 0.9;

/// Round to [`SIGNIFICANT_DIGITS`] significant digits (correctly rounded
/// through the decimal form, so 14.200000000000001 becomes 14.2).
pub fn round_significant(v: f64) -> f64 {
    if v == 0.0 || !v.is_finite() {
        return v;
    }
    format!("{:.*e}", SIGNIFICANT_DIGITS - 1, v)
        .parse()
        .expect("a formatted float parses")
}

fn usable(v: f64) -> bool {
    v.is_finite() && v >= 0.0
}

/// Per workload edge: the weight and bytes/s, before mapping.
struct EdgeFigures {
    weight: Option<Observed>,
    bytes_per_s: Option<Observed>,
}

/// The weight and bytes/s of one workload edge, noting what is missing.
fn edge_figures(
    edge: &Edge,
    rate: &BTreeMap<Edge, Sample>,
    duration: &BTreeMap<Edge, Sample>,
    bytes: Option<&BTreeMap<Edge, Sample>>,
    notes: &mut Vec<Note>,
) -> EdgeFigures {
    let weight = match (rate.get(edge), duration.get(edge)) {
        // Only bytes: a TCP connection (a database, a cache) carries no
        // requests to count, and an open connection is not one in use.
        (None, _) => {
            notes.push(Note {
                code: NoteCode::NoRequests,
                message: format!("{edge}: bytes but no requests (TCP): MB/s observed, weight not"),
            });
            None
        }
        (Some(r), _) if !usable(r.value) => {
            notes.push(Note {
                code: NoteCode::BadValue,
                message: format!(
                    "{edge}: request rate {} is not a number ≥ 0: weight not observed",
                    r.value
                ),
            });
            None
        }
        // No requests in the window: nothing in flight, whatever the
        // duration query says (it is 0/0 = NaN there).
        (Some(r), _) if r.value == 0.0 => Some(Observed {
            value: 0.0,
            observed_at: r.at,
        }),
        (Some(_), None) => {
            notes.push(Note {
                code: NoteCode::NoDuration,
                message: format!("{edge}: requests but no duration sample: weight not observed"),
            });
            None
        }
        (Some(_), Some(d)) if !usable(d.value) => {
            notes.push(Note {
                code: NoteCode::BadValue,
                message: format!(
                    "{edge}: mean duration {} ms is not a number ≥ 0: weight not observed",
                    d.value
                ),
            });
            None
        }
        // Little's law: requests/s × mean seconds per request = mean
        // requests in flight.
        (Some(r), Some(d)) => Some(Observed {
            value: r.value * d.value / MS_PER_S,
            observed_at: r.at.max(d.at),
        }),
    };
    let bytes_per_s = match bytes.map(|b| b.get(edge)) {
        None => None,
        Some(None) => {
            // An empty bytes result was already noted once.
            if !bytes.is_some_and(BTreeMap::is_empty) {
                notes.push(Note {
                    code: NoteCode::NoBytes,
                    message: format!("{edge}: no bytes sample: MB/s not observed"),
                });
            }
            None
        }
        Some(Some(b)) if !usable(b.value) => {
            notes.push(Note {
                code: NoteCode::BadValue,
                message: format!(
                    "{edge}: {} bytes/s is not a number ≥ 0: MB/s not observed",
                    b.value
                ),
            });
            None
        }
        Some(Some(b)) => Some(Observed {
            value: b.value,
            observed_at: b.at,
        }),
    };
    EdgeFigures {
        weight,
        bytes_per_s,
    }
}

/// Derive flows from the query results. Workloads become services
/// through `mapping` ([`resolve`]); when `known` (the estate's services)
/// is given, edges to or from anything else are skipped and reported.
/// Several workload edges mapping to one pair of services are summed:
/// in-flight requests and bytes/s both add up.
pub fn derive(
    results: &Results,
    reading: &Reading,
    mapping: &Mapping,
    known: Option<&Directory>,
) -> Derived {
    let mut notes = reading.query_notes();
    for (name, r) in [
        ("rate", Some(&results.rate)),
        ("duration", Some(&results.duration)),
        ("bytes", results.bytes.as_ref()),
        ("coverage", results.coverage.as_ref()),
    ] {
        for w in r.map(|r| r.warnings.as_slice()).unwrap_or_default() {
            notes.push(Note {
                code: NoteCode::PrometheusWarning,
                message: format!("{name} query: {w}"),
            });
        }
    }
    let index = |r: &QueryResult| -> BTreeMap<Edge, Sample> {
        r.samples
            .iter()
            .map(|s| (s.edge.clone(), s.clone()))
            .collect()
    };
    let rate = index(&results.rate);
    let duration = index(&results.duration);
    let bytes = results.bytes.as_ref().map(index);
    let coverage = results.coverage.as_ref().map(index);
    if let Some(b) = &bytes {
        if b.is_empty() && !rate.is_empty() {
            notes.push(Note {
                code: NoteCode::NoByteMetrics,
                message: format!(
                    "the bytes query returned no samples (are the mesh's byte counters enabled? {}): MB/s not observed",
                    reading.mesh.metric_names()
                ),
            });
        }
    }
    // The samples the best-covered edge has in the window: what every
    // edge scraped without a gap has too (they share the scrape interval).
    let full = coverage.as_ref().map(|c| {
        c.values()
            .map(|s| s.value)
            .filter(|v| v.is_finite())
            .fold(0.0_f64, f64::max)
    });
    // Every edge any query saw, except edges with only a duration: a
    // duration alone derives nothing.
    let edges: BTreeSet<&Edge> = rate
        .keys()
        .chain(bytes.iter().flat_map(|b| b.keys()))
        .collect();

    // Map to services and sum per service pair. A pair's figure is sent
    // only if every workload edge in it had one: a partial sum would be
    // an understatement presented as a measurement.
    struct Acc<'a> {
        edges: Vec<&'a Edge>,
        weight: Option<Observed>,
        weight_missing: bool,
        bytes: Option<Observed>,
        bytes_missing: bool,
        class: Class,
    }
    let add = |acc: &mut Option<Observed>, missing: &mut bool, v: Option<Observed>| match v {
        None => *missing = true,
        Some(v) => {
            let prev = acc.get_or_insert(Observed {
                value: 0.0,
                observed_at: v.observed_at,
            });
            prev.value += v.value;
            prev.observed_at = prev.observed_at.max(v.observed_at);
        }
    };
    /// One end as sent: a service id, or a name and its cluster.
    type End = (String, Option<String>);
    let mut pairs: BTreeMap<(End, End), Acc> = BTreeMap::new();
    // Workloads that map to nothing in the estate, with the edges skipped
    // because of them: one note per workload, not per edge.
    let mut not_in_estate: BTreeMap<(&Workload, String), usize> = BTreeMap::new();
    let outside =
        |w: &Workload| w.name.is_empty() || reading.mesh.outside().contains(&w.name.as_str());
    // Edges are judged first (outside the mesh, not in the estate, self),
    // so notes about missing figures only concern edges that count.
    for edge in edges {
        if outside(&edge.source) || outside(&edge.destination) {
            let (side, w) = if outside(&edge.source) {
                ("from", &edge.source.name)
            } else {
                ("to", &edge.destination.name)
            };
            let what = if w.is_empty() {
                "a peer the mesh did not identify".to_string()
            } else {
                format!("the mesh's {w:?} workload")
            };
            notes.push(Note {
                code: NoteCode::OutsideMesh,
                message: format!(
                    "{edge}: traffic {side} outside the mesh ({what}): no service to name, skipped"
                ),
            });
            continue;
        }
        let mut ends: Vec<End> = vec![];
        for w in [&edge.source, &edge.destination] {
            match resolve(w, mapping, known) {
                Resolved::Service(id) => ends.push((id, None)),
                Resolved::InCluster { name, cluster } => ends.push((name, Some(cluster))),
                Resolved::Missing(why) => {
                    *not_in_estate.entry((w, why)).or_default() += 1;
                }
            }
        }
        let Ok([from, to]) = <[End; 2]>::try_from(ends) else {
            continue;
        };
        if from == to {
            notes.push(Note {
                code: NoteCode::SelfEdge,
                message: format!(
                    "{edge}: both ends are service {:?}: a flow needs two services, skipped",
                    from.0
                ),
            });
            continue;
        }
        let acc = pairs.entry((from, to)).or_insert_with(|| Acc {
            edges: vec![],
            weight: None,
            weight_missing: false,
            bytes: None,
            bytes_missing: false,
            class: Class::Measured,
        });
        let f = edge_figures(edge, &rate, &duration, bytes.as_ref(), &mut notes);
        if let (Some(c), Some(full)) = (&coverage, full) {
            let have = c.get(edge).map_or(0.0, |s| s.value);
            if have < COVERAGE_FRACTION * full {
                notes.push(Note {
                    code: NoteCode::ScrapeGap,
                    message: format!(
                        "{edge}: {have} samples in the {} window where the best-covered edges have {full}: a scrape gap; its figures go as reported, not measured",
                        super::mesh::WINDOW
                    ),
                });
                acc.class = Class::Reported;
            }
        }
        acc.edges.push(edge);
        add(&mut acc.weight, &mut acc.weight_missing, f.weight);
        add(&mut acc.bytes, &mut acc.bytes_missing, f.bytes_per_s);
    }
    // Coverage: every workload inside the mesh that any query's series
    // name, resolved to the estate; dated by its newest sample.
    let mut covered: BTreeMap<(String, Option<String>), i64> = BTreeMap::new();
    let all = [
        Some(&results.rate),
        Some(&results.duration),
        results.bytes.as_ref(),
        results.coverage.as_ref(),
    ];
    for sample in all.into_iter().flatten().flat_map(|r| r.samples.iter()) {
        for w in [&sample.edge.source, &sample.edge.destination] {
            if outside(w) {
                continue;
            }
            let key = match resolve(w, mapping, known) {
                Resolved::Service(id) => (id, None),
                Resolved::InCluster { name, cluster } => (name, Some(cluster)),
                Resolved::Missing(_) => continue,
            };
            let at = covered.entry(key).or_insert(sample.at);
            *at = (*at).max(sample.at);
        }
    }
    let covered = covered
        .into_iter()
        .map(|((service, cluster), observed_at)| Covered {
            service,
            cluster,
            observed_at,
        })
        .collect();
    for ((w, why), n) in not_in_estate {
        notes.push(Note {
            code: NoteCode::NotInEstate,
            message: format!(
                "workload {w} ({why}) is not a service of the estate: {n} edge{} skipped; map it with --map {}=SERVICE",
                if n == 1 { "" } else { "s" },
                if w.cluster.is_empty() { w.name.clone() } else { w.to_string() },
            ),
        });
    }
    let flows = pairs
        .into_iter()
        .map(|(((from, from_cluster), (to, to_cluster)), acc)| {
            let partial = |missing: bool, v: Option<Observed>, what: &str, notes: &mut Vec<Note>| {
                if missing && v.is_some() && acc.edges.len() > 1 {
                    notes.push(Note {
                        code: if what == "weight" { NoteCode::NoDuration } else { NoteCode::NoBytes },
                        message: format!("{from} → {to}: {what} known for only some of its {} workload edges: not observed", acc.edges.len()),
                    });
                }
                if missing {
                    None
                } else {
                    v
                }
            };
            let weight = partial(acc.weight_missing, acc.weight, "weight", &mut notes);
            let bytes = partial(acc.bytes_missing, acc.bytes, "MB/s", &mut notes);
            Flow {
                weight: weight.map(|o| Observed { value: round_significant(o.value), ..o }),
                mb_s: bytes.map(|o| Observed { value: round_significant(o.value / BYTES_PER_MB), ..o }),
                class: acc.class,
                edges: acc.edges.into_iter().cloned().collect(),
                from,
                to,
                from_cluster,
                to_cluster,
            }
        })
        // A pair with neither figure has nothing to send.
        .filter(|f| f.weight.is_some() || f.mb_s.is_some())
        .collect();
    Derived {
        flows,
        notes,
        covered,
    }
}

/// The observations saying whose traffic the mesh covered: `traffic`, the
/// window in seconds, class `measured`, dated by the newest sample naming
/// the service, with `cluster` for a workload the server is to resolve.
pub fn coverage_observations(covered: &[Covered]) -> Vec<FactUpdate> {
    covered
        .iter()
        .map(|c| FactUpdate {
            fact: "traffic".into(),
            service: Some(c.service.clone()),
            cluster: c.cluster.clone(),
            value: Some(Some(COVERED_WINDOW_S)),
            class: Some(Class::Measured.as_str().into()),
            observed_at: Some(berth_engine::estate::format_time(c.observed_at)),
            ..FactUpdate::default()
        })
        .collect()
}

/// The observations to send for these flows: `flow_weight` and
/// `flow_mb_s`, class `measured` (`reported` over a scrape gap), dated by
/// the samples, with `from_cluster`/`to_cluster` for ends the server is to
/// resolve. No `source`: the server records the sender's token as the
/// source of what it observed.
pub fn observations(flows: &[Flow]) -> Vec<FactUpdate> {
    let mut out = Vec::with_capacity(flows.len() * 2);
    for f in flows {
        for (fact, o) in [("flow_weight", f.weight), ("flow_mb_s", f.mb_s)] {
            let Some(o) = o else { continue };
            out.push(FactUpdate {
                fact: fact.into(),
                from: Some(f.from.clone()),
                to: Some(f.to.clone()),
                from_cluster: f.from_cluster.clone(),
                to_cluster: f.to_cluster.clone(),
                value: Some(Some(o.value)),
                class: Some(f.class.as_str().into()),
                observed_at: Some(berth_engine::estate::format_time(o.observed_at)),
                ..FactUpdate::default()
            });
        }
    }
    out
}

/// The report, for people: one line per flow, then the notes.
pub fn report(derived: &Derived) -> String {
    use std::fmt::Write;
    let mut s = String::new();
    let width = derived
        .flows
        .iter()
        .map(|f| {
            let c = |c: &Option<String>| c.as_ref().map_or(0, |c| c.chars().count() + 1);
            f.from.chars().count()
                + f.to.chars().count()
                + 3
                + c(&f.from_cluster)
                + c(&f.to_cluster)
        })
        .max()
        .unwrap_or(0);
    for f in &derived.flows {
        let end = |id: &str, c: &Option<String>| match c {
            Some(c) => format!("{c}:{id}"),
            None => id.to_string(),
        };
        let edge = format!(
            "{} → {}",
            end(&f.from, &f.from_cluster),
            end(&f.to, &f.to_cluster)
        );
        let show = |o: Option<Observed>| o.map_or_else(|| "–".to_string(), |o| o.value.to_string());
        let _ = writeln!(
            s,
            "  {edge:<width$}  weight {:<10} MB/s {}{}",
            show(f.weight),
            show(f.mb_s),
            if f.class == Class::Measured {
                ""
            } else {
                "  (reported: scrape gap)"
            },
        );
    }
    if !derived.notes.is_empty() {
        let _ = writeln!(s, "skipped or incomplete ({}):", derived.notes.len());
        for n in &derived.notes {
            let _ = writeln!(s, "  {n}");
        }
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn vector(samples: Value) -> Value {
        json!({"status": "success", "data": {"resultType": "vector", "result": samples}})
    }

    fn sample(src: &str, dst: &str, v: &str) -> Value {
        json!({"metric": {"source_workload": src, "source_workload_namespace": "shop",
                          "destination_workload": dst, "destination_workload_namespace": "shop"},
               "value": [1796011500.25, v]})
    }

    #[test]
    fn little_s_law_and_megabytes() {
        let r = Results {
            rate: parse_response(
                "rate",
                "",
                &vector(json!([sample("a", "b", "200")])),
                &Reading::default(),
            )
            .unwrap(),
            duration: parse_response(
                "duration",
                "",
                &vector(json!([sample("a", "b", "71")])),
                &Reading::default(),
            )
            .unwrap(),
            bytes: Some(
                parse_response(
                    "bytes",
                    "",
                    &vector(json!([sample("a", "b", "38000000")])),
                    &Reading::default(),
                )
                .unwrap(),
            ),
            coverage: None,
        };
        let d = derive(&r, &Reading::default(), &Mapping::default(), None);
        assert_eq!(d.notes, vec![]);
        assert_eq!(d.flows.len(), 1);
        // 200 req/s × 0.071 s = 14.2 in flight; 38e6 B/s = 38 MB/s.
        assert_eq!(
            d.flows[0].weight,
            Some(Observed {
                value: 14.2,
                observed_at: 1796011500
            })
        );
        assert_eq!(
            d.flows[0].mb_s,
            Some(Observed {
                value: 38.0,
                observed_at: 1796011500
            })
        );
    }

    #[test]
    fn outside_mesh_unknown_services_and_partial_sums_are_not_sent() {
        let rate = vector(json!([
            sample("unknown", "a", "5"),
            sample("a", "b-v1", "10"),
            sample("a", "b-v2", "10"),
            sample("a", "zz", "1"),
        ]));
        // b-v2 has no duration: b's weight would be half the truth.
        let duration = vector(json!([sample("a", "b-v1", "100"), sample("a", "zz", "1")]));
        let r = Results {
            rate: parse_response("rate", "", &rate, &Reading::default()).unwrap(),
            duration: parse_response("duration", "", &duration, &Reading::default()).unwrap(),
            bytes: None,
            coverage: None,
        };
        let mut m = Mapping::default();
        m.add_arg("b-v1=b").unwrap();
        m.add_arg("b-v2=b").unwrap();
        let known = Directory::from_estate(&json!({"services": [
            {"id": "a", "cluster": "c1"}, {"id": "b", "cluster": "c1"}]}));
        let d = derive(&r, &Reading::default(), &m, Some(&known));
        assert_eq!(d.flows, vec![], "nothing complete to send");
        let codes: Vec<NoteCode> = d.notes.iter().map(|n| n.code).collect();
        assert_eq!(
            codes,
            [
                NoteCode::NoDuration,
                NoteCode::OutsideMesh,
                NoteCode::NotInEstate,
                NoteCode::NoDuration
            ],
            "{:#?}",
            d.notes
        );
        assert!(d.notes[1].message.contains("traffic from outside the mesh"));
        assert!(d.notes[2]
            .message
            .starts_with("workload shop/zz (as service \"zz\")"));
        assert!(d.notes[3]
            .message
            .contains("a → b: weight known for only some of its 2 workload edges"));
        // Without the estate's services, zz is not judged here (the
        // server refuses it) and is sent.
        let d = derive(&r, &Reading::default(), &m, None);
        assert_eq!(d.flows.len(), 1);
        assert_eq!(
            (d.flows[0].from.as_str(), d.flows[0].to.as_str()),
            ("a", "zz")
        );
        assert_eq!(d.flows[0].weight.unwrap().value, 0.001);
    }

    #[test]
    fn rounding_keeps_six_significant_digits() {
        assert_eq!(round_significant(200.0 * 71.0 / 1000.0), 14.2);
        assert_eq!(round_significant(0.000123456789), 0.000123457);
        assert_eq!(round_significant(1234567.0), 1234570.0);
        assert_eq!(round_significant(0.0), 0.0);
    }

    #[test]
    fn special_values_are_prometheus_spellings_only() {
        assert!(parse_sample_value("NaN").unwrap().is_nan());
        assert_eq!(parse_sample_value("+Inf"), Some(f64::INFINITY));
        assert_eq!(parse_sample_value("1e3"), Some(1000.0));
        assert_eq!(parse_sample_value("nan"), None);
        assert_eq!(parse_sample_value("12 req"), None);
    }

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

    fn reading_with_clusters() -> Reading {
        Reading::with_labels(
            Mesh::Istio,
            Mesh::Istio
                .labels()
                .with_clusters("source_cluster", "destination_cluster"),
        )
    }

    fn in_cluster(src: (&str, &str), dst: (&str, &str), v: &str) -> Value {
        json!({"metric": {"source_workload": src.1, "source_workload_namespace": "shop", "source_cluster": src.0,
                          "destination_workload": dst.1, "destination_workload_namespace": "shop", "destination_cluster": dst.0},
               "value": [1796011500.25, v]})
    }

    #[test]
    fn a_replica_in_another_cluster_gets_its_own_flow() {
        let reading = reading_with_clusters();
        let parse = |q: &str, v: Value| parse_response(q, "", &vector(v), &reading).unwrap();
        let r = Results {
            rate: parse(
                "rate",
                json!([
                    in_cluster(("c-a", "front"), ("c-a", "cart"), "10"),
                    in_cluster(("c-b", "front"), ("c-b", "cart"), "30"),
                ]),
            ),
            duration: parse(
                "duration",
                json!([
                    in_cluster(("c-a", "front"), ("c-a", "cart"), "100"),
                    in_cluster(("c-b", "front"), ("c-b", "cart"), "100"),
                ]),
            ),
            bytes: None,
            coverage: None,
        };
        // The estate: the first import named them plainly, the second
        // (cluster c-b) qualified the ids it found taken.
        let known = Directory::from_estate(&json!({"services": [
            {"id": "front", "cluster": "c-a", "source": "kubernetes:c-a/shop/deployment/front"},
            {"id": "cart", "cluster": "c-a", "source": "kubernetes:c-a/shop/deployment/cart"},
            {"id": "c-b/front", "cluster": "c-b", "source": "kubernetes:c-b/shop/deployment/front"},
            {"id": "c-b/cart", "cluster": "c-b", "source": "kubernetes:c-b/shop/deployment/cart"},
        ]}));
        let d = derive(&r, &reading, &Mapping::default(), Some(&known));
        let got: Vec<(&str, &str, f64)> = d
            .flows
            .iter()
            .map(|f| (f.from.as_str(), f.to.as_str(), f.weight.unwrap().value))
            .collect();
        assert_eq!(
            got,
            [("c-b/front", "c-b/cart", 3.0), ("front", "cart", 1.0)],
            "{:?}",
            d.notes
        );
        // Without the estate (an agent), the ends go with their cluster
        // for the server to resolve.
        let d = derive(&r, &reading, &Mapping::default(), None);
        let obs = observations(&d.flows);
        assert_eq!(obs[0].from.as_deref(), Some("front"));
        assert_eq!(obs[0].from_cluster.as_deref(), Some("c-a"));
        assert_eq!(obs[1].to_cluster.as_deref(), Some("c-b"));
        // A mapping entry names one replica.
        let mut m = Mapping::default();
        m.add_arg("c-b:shop/cart=cart-eu").unwrap();
        let w = Workload {
            cluster: "c-b".into(),
            namespace: "shop".into(),
            name: "cart".into(),
        };
        assert_eq!(resolve(&w, &m, None), Resolved::Service("cart-eu".into()));
        assert!(m.add_arg("c-b:a/b/c=x").is_err());
    }

    fn two_cluster_results(reading: &Reading, clusters: [(&str, &str); 2]) -> Results {
        let parse = |q: &str, v: Value| parse_response(q, "", &vector(v), reading).unwrap();
        let [a, b] = clusters;
        let samples = |v: &str| {
            json!([
                in_cluster(a, (a.0, "cart"), v),
                in_cluster(b, (b.0, "cart"), v),
                // Outside the mesh: Istio's "unknown" cluster is no cluster.
                in_cluster(a, ("unknown", "unknown"), v),
            ])
        };
        Results {
            rate: parse("rate", samples("10")),
            duration: parse("duration", samples("100")),
            bytes: None,
            coverage: None,
        }
    }

    #[test]
    fn one_cluster_value_reads_as_none_and_several_must_each_match_the_estate() {
        let reading = Reading::default();
        let known = Directory::from_estate(&json!({
            "clusters": [{"id": "c-east-1", "mesh_cluster": "east-1"}, {"id": "c-west-1"}],
            "services": [
                {"id": "front", "cluster": "c-east-1"}, {"id": "cart", "cluster": "c-east-1"},
                {"id": "c-west-1/front", "cluster": "c-west-1"}, {"id": "c-west-1/cart", "cluster": "c-west-1"}]}));
        // One value (a single-cluster Istio): the clusters are dropped and
        // the names resolve as without cluster labels.
        let mut one = two_cluster_results(
            &reading,
            [("Kubernetes", "front"), ("Kubernetes", "checkout")],
        );
        let mut m = Mapping::default();
        read_clusters(&mut one, &reading, &mut m, Some(&known)).unwrap();
        assert!(one
            .rate
            .samples
            .iter()
            .all(|s| s.edge.source.cluster.is_empty() && s.edge.destination.cluster.is_empty()));
        let d = derive(&one, &reading, &m, Some(&known));
        assert!(
            d.flows
                .iter()
                .any(|f| (f.from.as_str(), f.to.as_str()) == ("front", "cart")),
            "{:?}",
            d.flows
        );
        // Named explicitly, one value is kept, and must be a cluster.
        let named = Reading {
            clusters_named: true,
            ..Reading::default()
        };
        let mut one = two_cluster_results(
            &named,
            [("Kubernetes", "front"), ("Kubernetes", "checkout")],
        );
        let e = read_clusters(&mut one, &named, &mut Mapping::default(), Some(&known)).unwrap_err();
        assert_eq!(e.unmatched[0].0, "Kubernetes");

        // Two values: east-1 is c-east-1's mesh_cluster, west-1 nothing.
        let results = two_cluster_results(&reading, [("east-1", "front"), ("west-1", "front")]);
        let e = read_clusters(
            &mut results.clone(),
            &reading,
            &mut Mapping::default(),
            Some(&known),
        )
        .unwrap_err();
        assert_eq!(
            e.unmatched.iter().map(|u| u.0.as_str()).collect::<Vec<_>>(),
            ["west-1"]
        );
        let text = e.to_string();
        assert!(text.contains("  --map-cluster west-1=c-west-1\n"), "{text}");
        assert!(!text.contains("unknown"), "{text}");
        // Mapped: each replica its own flow, in its cluster.
        let mut m = Mapping::default();
        m.add_cluster_arg("west-1=c-west-1").unwrap();
        let mut r = results.clone();
        read_clusters(&mut r, &reading, &mut m, Some(&known)).unwrap();
        let d = derive(&r, &reading, &m, Some(&known));
        let got: Vec<(&str, &str)> = d
            .flows
            .iter()
            .map(|f| (f.from.as_str(), f.to.as_str()))
            .collect();
        assert_eq!(
            got,
            [("c-west-1/front", "c-west-1/cart"), ("front", "cart")],
            "{:?}",
            d.notes
        );
        // Mapped to a cluster the estate lacks: refused, said so.
        let mut m = Mapping::default();
        m.add_cluster_arg("west-1=c-west-9").unwrap();
        let e = read_clusters(&mut results.clone(), &reading, &mut m, Some(&known)).unwrap_err();
        assert!(
            e.to_string()
                .contains("--map-cluster west-1=c-west-9: the estate has no cluster \"c-west-9\""),
            "{e}"
        );
        // Without the estate (an agent token), the server resolves them.
        assert!(read_clusters(
            &mut results.clone(),
            &reading,
            &mut Mapping::default(),
            None
        )
        .is_ok());
        // Read without clusters (--cluster-labels none): nothing to check.
        let off = Reading::with_labels(Mesh::Istio, Mesh::Istio.labels());
        let mut r = two_cluster_results(&off, [("east-1", "front"), ("west-1", "checkout")]);
        assert!(read_clusters(&mut r, &off, &mut Mapping::default(), Some(&known)).is_ok());
        // A query grouped without the cluster labels, where the others
        // name several clusters: refused rather than mismatched.
        let mut r = results.clone();
        r.duration = parse_response(
            "duration",
            "",
            &vector(json!([sample("front", "cart", "100")])),
            &reading,
        )
        .unwrap();
        let mut m = Mapping::default();
        m.add_cluster_arg("west-1=c-west-1").unwrap();
        let e = read_clusters(&mut r, &reading, &mut m, Some(&known)).unwrap_err();
        assert_eq!(e.unlabelled, ["duration"]);
        assert!(e.to_string().contains("--cluster-labels none"), "{e}");
    }

    #[test]
    fn a_scrape_gap_makes_the_figures_reported() {
        let parse =
            |q: &str, v: Value| parse_response(q, "", &vector(v), &Reading::default()).unwrap();
        let r = Results {
            rate: parse(
                "rate",
                json!([sample("a", "b", "10"), sample("a", "c", "10")]),
            ),
            duration: parse(
                "duration",
                json!([sample("a", "b", "100"), sample("a", "c", "100")]),
            ),
            bytes: None,
            coverage: Some(parse(
                "coverage",
                json!([sample("a", "b", "21"), sample("a", "c", "14")]),
            )),
        };
        let d = derive(&r, &Reading::default(), &Mapping::default(), None);
        let classes: Vec<Class> = d.flows.iter().map(|f| f.class).collect();
        assert_eq!(classes, [Class::Measured, Class::Reported]);
        assert_eq!(d.notes.len(), 1, "{:?}", d.notes);
        assert_eq!(d.notes[0].code, NoteCode::ScrapeGap);
        assert_eq!(observations(&d.flows)[1].class.as_deref(), Some("reported"));
    }

    #[test]
    fn bytes_without_requests_is_a_tcp_flow() {
        let parse =
            |q: &str, v: Value| parse_response(q, "", &vector(v), &Reading::default()).unwrap();
        let r = Results {
            rate: parse("rate", json!([])),
            duration: parse("duration", json!([])),
            bytes: Some(parse("bytes", json!([sample("cart", "redis", "2000000")]))),
            coverage: None,
        };
        let d = derive(&r, &Reading::default(), &Mapping::default(), None);
        assert_eq!(d.flows.len(), 1);
        assert_eq!(d.flows[0].weight, None);
        assert_eq!(d.flows[0].mb_s.unwrap().value, 2.0);
        assert_eq!(d.notes[0].code, NoteCode::NoRequests);
    }

    #[test]
    fn an_unidentified_peer_is_outside_the_mesh_where_the_mesh_leaves_it_unlabelled() {
        let reading = Reading::new(Mesh::Linkerd);
        let v = vector(json!([
            {"metric": {"deployment": "web", "namespace": "shop", "dst_deployment": "api", "dst_namespace": "shop"}, "value": [1.0, "5"]},
            {"metric": {"deployment": "web", "namespace": "shop"}, "value": [1.0, "2"]},
        ]));
        let rate = parse_response("rate", "", &v, &reading).unwrap();
        assert_eq!(rate.samples[1].edge.destination.name, "");
        let r = Results {
            rate,
            duration: parse_response("duration", "", &vector(json!([])), &reading).unwrap(),
            bytes: None,
            coverage: None,
        };
        let d = derive(&r, &reading, &Mapping::default(), None);
        assert!(
            d.notes
                .iter()
                .any(|n| n.code == NoteCode::OutsideMesh && n.message.contains("did not identify")),
            "{:?}",
            d.notes
        );
        // Istio always names both ends: a missing label is a bad query.
        assert!(parse_response("rate", "", &v, &Reading::default()).is_err());
    }
}
