//! Prometheus answers read: the workloads and edges each sample names,
//! its value, and a saved file of answers.

use super::*;

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
    pub(super) fn at(query: &str, path: String, message: impl Into<String>) -> QueryError {
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
    let here = Place { query, base };
    let (result, warnings) = envelope(&here, v)?;
    let mut samples = Vec::with_capacity(result.len());
    let mut seen: BTreeMap<Edge, usize> = BTreeMap::new();
    for (i, s) in result.iter().enumerate() {
        let p = format!("/data/result/{i}");
        let Some(s) = s.as_object() else {
            return Err(here.err(
                &p,
                format!(
                    "expected a sample {{\"metric\", \"value\"}}, found {}",
                    describe(s)
                ),
            ));
        };
        let edge = sample_edge(&here, &p, s, reading)?;
        let (at, value) = sample_value(&here, &p, s)?;
        if let Some(first) = seen.insert(edge.clone(), i) {
            return Err(here.err(
                &format!("{p}/metric"),
                format!(
                    "a second sample for {edge} (the first is {base}/data/result/{first}): group the query by exactly {}", reading.labels.group_by()
                ),
            ));
        }
        samples.push(Sample { edge, value, at });
    }
    Ok(QueryResult { samples, warnings })
}

/// Which query's answer is read, and where it sits in the file read
/// (`base`, a JSON pointer; empty for an answer on its own).
struct Place<'a> {
    query: &'a str,
    base: &'a str,
}

impl Place<'_> {
    fn err(&self, path: &str, message: String) -> QueryError {
        QueryError::at(self.query, format!("{}{path}", self.base), message)
    }
}

/// The answer's envelope checked: a success, with a vector result; its
/// samples and warnings.
fn envelope<'v>(here: &Place, v: &'v Value) -> Result<(&'v Vec<Value>, Vec<String>), QueryError> {
    let err = |p: &str, m: String| here.err(p, m);
    let Some(obj) = v.as_object() else {
        return Err(err(
            "",
            format!(
                "expected a Prometheus query response (an object with \"status\"), found {}",
                describe(v)
            ),
        ));
    };
    status(here, obj)?;
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
    match data.get("result") {
        Some(Value::Array(a)) => Ok((a, warnings)),
        Some(other) => Err(err(
            "/data/result",
            format!("expected an array, found {}", describe(other)),
        )),
        None => Err(err("/data/result", "missing".into())),
    }
}

/// The answer's `status`: an error answer becomes the error, with
/// Prometheus' `errorType`.
fn status(here: &Place, obj: &serde_json::Map<String, Value>) -> Result<(), QueryError> {
    match obj.get("status").and_then(Value::as_str) {
        Some("success") => Ok(()),
        Some("error") => {
            let error_type = obj
                .get("errorType")
                .and_then(Value::as_str)
                .unwrap_or("(none)");
            let error = obj
                .get("error")
                .and_then(Value::as_str)
                .unwrap_or("(no message)");
            Err(QueryError {
                query: here.query.to_string(),
                path: here.base.to_string(),
                message: format!("Prometheus answered errorType {error_type:?}: {error}"),
                error_type: Some(error_type.to_string()),
            })
        }
        Some(other) => Err(here.err(
            "/status",
            format!("expected \"success\" or \"error\", found {other:?}"),
        )),
        None => Err(here.err(
            "/status",
            match obj.get("status") {
                None => "missing: not a Prometheus query response".to_string(),
                Some(s) => format!("expected a string, found {}", describe(s)),
            },
        )),
    }
}

/// The edge a sample (at `p`) is for, from its labels.
fn sample_edge(
    here: &Place,
    p: &str,
    s: &serde_json::Map<String, Value>,
    reading: &Reading,
) -> Result<Edge, QueryError> {
    let metric = match s.get("metric") {
        Some(Value::Object(m)) => m,
        Some(other) => {
            return Err(here.err(
                &format!("{p}/metric"),
                format!("expected an object of labels, found {}", describe(other)),
            ))
        }
        None => return Err(here.err(&format!("{p}/metric"), "missing".into())),
    };
    let labels = &reading.labels;
    let label = |name: &str, required: bool| -> Result<String, QueryError> {
        match metric.get(name) {
            Some(Value::String(v)) => Ok(v.clone()),
            Some(other) => Err(here.err(
                &format!("{p}/metric/{name}"),
                format!("expected a string, found {}", describe(other)),
            )),
            None if required => Err(here.err(
                &format!("{p}/metric/{name}"),
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
    Ok(Edge {
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
    })
}

/// A sample's (at `p`) time, in whole seconds since 1970, and value.
fn sample_value(
    here: &Place,
    p: &str,
    s: &serde_json::Map<String, Value>,
) -> Result<(i64, f64), QueryError> {
    let err = |rest: &str, m: String| here.err(&format!("{p}{rest}"), m);
    let pair = match s.get("value") {
        Some(Value::Array(a)) if a.len() == 2 => a,
        Some(Value::Array(a)) => {
            return Err(err(
                "/value",
                format!(
                    "expected [timestamp, \"value\"], found an array of {} items",
                    a.len()
                ),
            ))
        }
        Some(other) => {
            return Err(err(
                "/value",
                format!("expected [timestamp, \"value\"], found {}", describe(other)),
            ))
        }
        None if s.contains_key("values") => {
            return Err(err(
                "/value",
                "missing (the sample has \"values\": a range result, not an instant vector)".into(),
            ))
        }
        None => return Err(err("/value", "missing".into())),
    };
    let at = match pair[0].as_f64() {
        Some(t) if t.is_finite() && t >= 0.0 => t.floor() as i64,
        _ => {
            return Err(err(
                "/value/0",
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
                "/value/1",
                format!("expected a number in a string, found {text:?}"),
            )
        })?,
        other => {
            return Err(err(
                "/value/1",
                format!(
                    "expected a number in a string (Prometheus writes \"12.5\"), found {}",
                    describe(other)
                ),
            ))
        }
    };
    Ok((at, value))
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
    pub(super) fn named(&self) -> impl Iterator<Item = (&'static str, &QueryResult)> {
        [
            ("rate", Some(&self.rate)),
            ("duration", Some(&self.duration)),
            ("bytes", self.bytes.as_ref()),
            ("coverage", self.coverage.as_ref()),
        ]
        .into_iter()
        .filter_map(|(n, r)| Some((n, r?)))
    }

    pub(super) fn named_mut(&mut self) -> impl Iterator<Item = &mut QueryResult> {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn special_values_are_prometheus_spellings_only() {
        assert!(parse_sample_value("NaN").unwrap().is_nan());
        assert_eq!(parse_sample_value("+Inf"), Some(f64::INFINITY));
        assert_eq!(parse_sample_value("1e3"), Some(1000.0));
        assert_eq!(parse_sample_value("nan"), None);
        assert_eq!(parse_sample_value("12 req"), None);
    }
}
