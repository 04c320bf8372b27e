//! Service-mesh metrics → flow observations. Pure: Prometheus query
//! responses (JSON values, as `/api/v1/query` answers them) in; flows
//! between estate services, with their weight and MB/s, and notes out. No
//! I/O and no clock: the HTTP client is `crate::prom_client`, the
//! submission `crate::submit`. `docs/observations.md` has the rules.
//!
//! Three instant queries, each grouped by the four workload labels
//! (`source_workload`, `source_workload_namespace`, `destination_workload`,
//! `destination_workload_namespace`):
//!
//! - **rate**: requests per second on the edge;
//! - **duration**: the mean request duration in milliseconds;
//! - **bytes** (optional): bytes per second, request and response.
//!
//! A flow's weight is the mean number of requests in flight on it
//! (`docs/advice.md` §1), which Little's law gives from what the mesh
//! counts: requests/s × mean duration in s. Its MB/s is bytes/s ÷ 10⁶
//! (`docs/estate-format.md`: MB = 10⁶ bytes).

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;

use serde::Serialize;
use serde_json::{json, Value};

use berth_engine::json_shape::describe;

/// The labels every query must group by. Istio's standard metrics carry
/// them; a custom query must keep them (`sum by (…)`).
pub const SOURCE_WORKLOAD: &str = "source_workload";
pub const SOURCE_NAMESPACE: &str = "source_workload_namespace";
pub const DESTINATION_WORKLOAD: &str = "destination_workload";
pub const DESTINATION_NAMESPACE: &str = "destination_workload_namespace";

/// Istio's value of `source_workload` / `destination_workload` when the
/// peer is outside the mesh (no sidecar identified it): no estate service
/// can be named, so such edges are skipped with a note.
pub const OUTSIDE_MESH: &str = "unknown";

// The default queries: Istio's standard metrics, as the client-side proxy
// reports them (`reporter="source"`). Both sidecars of a call report it,
// the caller's with `reporter="source"` and the callee's with
// `reporter="destination"`, so summing over `reporter` would count every
// request twice; taking one counts it once. The source's view is the one a
// flow's weight is about — the caller waits the whole duration, network
// included. `[5m]`: at Istio's usual 15–60 s scrape interval a 5-minute
// window holds 5 or more scrapes, so a single missed scrape or a burst does
// not swing the figure; shorter windows jitter, longer ones lag behind a
// move. All of them are checked against a real Prometheus in
// `server/tests/prometheus_real.rs`.

/// Requests per second per workload edge.
pub const DEFAULT_RATE_QUERY: &str = "sum by (source_workload, source_workload_namespace, destination_workload, destination_workload_namespace) (rate(istio_requests_total{reporter=\"source\"}[5m]))";

/// Mean request duration in milliseconds per workload edge: the rate of the
/// histogram's sum over the rate of its count (both per second, so the
/// ratio is milliseconds per request).
pub const DEFAULT_DURATION_QUERY: &str = "sum by (source_workload, source_workload_namespace, destination_workload, destination_workload_namespace) (rate(istio_request_duration_milliseconds_sum{reporter=\"source\"}[5m])) / sum by (source_workload, source_workload_namespace, destination_workload, destination_workload_namespace) (rate(istio_request_duration_milliseconds_count{reporter=\"source\"}[5m]))";

/// Bytes per second per workload edge, requests and responses together.
///
/// Not one selector over both names (`rate({__name__=~"a|b"}[5m])`):
/// `rate()` drops the metric name, so a request series and the response
/// series of the same call end up with one label set, and Prometheus
/// refuses the whole query ("vector cannot contain metrics with the same
/// labelset"). Not `sum(rate(a)) + sum(rate(b))` either: `+` matches the
/// two sides and drops an edge that has only one of them (a collector that
/// answers with no body, a stream that only sends). Instead each side is
/// tagged with a label of its own (`label_replace`, which adds
/// `istio_bytes="request"` or `"response"`), so the two sides never
/// collide, `or` keeps every series of both, and `sum by` then adds
/// whatever is there per edge.
pub const DEFAULT_BYTES_QUERY: &str = "sum by (source_workload, source_workload_namespace, destination_workload, destination_workload_namespace) (label_replace(rate(istio_request_bytes_sum{reporter=\"source\"}[5m]), \"istio_bytes\", \"request\", \"\", \"\") or label_replace(rate(istio_response_bytes_sum{reporter=\"source\"}[5m]), \"istio_bytes\", \"response\", \"\", \"\"))";

/// When the queries found nothing at all — no request rate and no bytes
/// for any edge — the Prometheus asked is almost certainly not the one
/// with the mesh's metrics, or the metrics are named otherwise: "0 flows"
/// would hide that. What to say instead: which metric (or query) was
/// looked for and what to check. `None` when something was found.
pub fn nothing_found(results: &Results, rate_query: &str) -> Option<String> {
    let bytes_empty = results.bytes.as_ref().is_none_or(|b| b.samples.is_empty());
    if !results.rate.samples.is_empty() || !bytes_empty {
        return None;
    }
    let looked_for = if rate_query == DEFAULT_RATE_QUERY {
        "Istio's istio_requests_total{reporter=\"source\"} (and istio_request_bytes_sum, istio_response_bytes_sum)".to_string()
    } else {
        format!("the rate query {rate_query:?}")
    };
    Some(format!(
        "no mesh metrics: {looked_for} gave no samples over the last 5 minutes. Check that this is the Prometheus that scrapes the mesh (its targets include the Envoy sidecars' :15090/stats/prometheus), that Istio's standard metrics are enabled (Telemetry API or meshConfig), that the mesh carried traffic in the last 5 minutes, and, for a custom --query-rate, that it gives one sample per edge grouped by {SOURCE_WORKLOAD}, {SOURCE_NAMESPACE}, {DESTINATION_WORKLOAD}, {DESTINATION_NAMESPACE}"
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

/// A workload as the mesh names it.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
pub struct Workload {
    pub namespace: String,
    pub name: String,
}

impl fmt::Display for Workload {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.namespace.is_empty() {
            write!(f, "{}", self.name)
        } else {
            write!(f, "{}/{}", self.namespace, self.name)
        }
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
fn parse_sample_value(s: &str) -> Option<f64> {
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
/// whole body). An instant vector grouped by the four workload labels is
/// expected; two samples for one edge are refused (the query grouped by
/// more than the workloads, so their meaning is ambiguous).
pub fn parse_response(query: &str, base: &str, v: &Value) -> Result<QueryResult, QueryError> {
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
        let label = |name: &str, required: bool| -> Result<String, QueryError> {
            match metric.get(name) {
                Some(Value::String(v)) => Ok(v.clone()),
                Some(other) => Err(err(
                    &p(&format!("/metric/{name}")),
                    format!("expected a string, found {}", describe(other)),
                )),
                None if required => Err(err(
                    &p(&format!("/metric/{name}")),
                    format!(
                        "missing: the query must group by {SOURCE_WORKLOAD}, {SOURCE_NAMESPACE}, {DESTINATION_WORKLOAD} and {DESTINATION_NAMESPACE}"
                    ),
                )),
                // A namespace may be left out of a custom query's grouping
                // (one namespace, or names unique across namespaces).
                None => Ok(String::new()),
            }
        };
        let edge = Edge {
            source: Workload {
                namespace: label(SOURCE_NAMESPACE, false)?,
                name: label(SOURCE_WORKLOAD, true)?,
            },
            destination: Workload {
                namespace: label(DESTINATION_NAMESPACE, false)?,
                name: label(DESTINATION_WORKLOAD, true)?,
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
                    "a second sample for {edge} (the first is {base}/data/result/{first}): group the query by exactly the four workload labels"
                ),
            ));
        }
        samples.push(Sample { edge, value, at });
    }
    Ok(QueryResult { samples, warnings })
}

/// The three query results, parsed. `bytes` is `None` when no bytes query
/// was run (or the saved file has none).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Results {
    pub rate: QueryResult,
    pub duration: QueryResult,
    pub bytes: Option<QueryResult>,
}

/// The keys of a saved results file.
pub const FILE_KEYS: [&str; 3] = ["rate", "duration", "bytes"];

/// Parse a saved results file: `{"rate": <response>, "duration":
/// <response>, "bytes": <response>}`, `bytes` optional. Paths in errors
/// start at the query's key (`/rate/data/result/2/value/1`).
pub fn parse_file(v: &Value) -> Result<Results, QueryError> {
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
            "unknown key: expected \"rate\", \"duration\" and optionally \"bytes\"",
        ));
    }
    let required = |k: &str| -> Result<QueryResult, QueryError> {
        match obj.get(k) {
            Some(r) => parse_response(k, &format!("/{k}"), r),
            None => Err(QueryError::at(
                k,
                format!("/{k}"),
                "missing: the file needs the rate and duration query responses",
            )),
        }
    };
    Ok(Results {
        rate: required("rate")?,
        duration: required("duration")?,
        bytes: match obj.get("bytes") {
            None | Some(Value::Null) => None,
            Some(r) => Some(parse_response("bytes", "/bytes", r)?),
        },
    })
}

/// Workload → service id. By default a workload's name is the service id;
/// entries here override that, by `namespace/name` (that workload only)
/// or by `name` (in any namespace). The namespaced entry wins.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Mapping {
    entries: BTreeMap<String, String>,
}

impl Mapping {
    /// Add `workload` (`name` or `namespace/name`) → `service`. Refuses
    /// empty names and a workload mapped twice to different services.
    pub fn add(&mut self, workload: &str, service: &str) -> Result<(), String> {
        let bad_part = workload
            .split('/')
            .any(|p| p.is_empty() || p.chars().any(char::is_whitespace));
        if workload.is_empty() || workload.matches('/').count() > 1 || bad_part {
            return Err(format!(
                "workload {workload:?}: expected NAME or NAMESPACE/NAME, without spaces"
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

    /// The service id a workload stands for.
    pub fn service_for(&self, w: &Workload) -> String {
        self.entries
            .get(&w.to_string())
            .or_else(|| self.entries.get(&w.name))
            .cloned()
            .unwrap_or_else(|| w.name.clone())
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

/// A flow between two estate services, as derived. `weight` or `mb_s` is
/// `None` when it could not be derived: it is then not sent, so what the
/// estate knew stays (a missing metric is not evidence of anything).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Flow {
    pub from: String,
    pub to: String,
    pub weight: Option<Observed>,
    pub mb_s: Option<Observed>,
    /// The workload edges summed into it.
    pub edges: Vec<Edge>,
}

/// What [`derive`] found: flows sorted by (from, to), and notes.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct Derived {
    pub flows: Vec<Flow>,
    pub notes: Vec<Note>,
}

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
        (None, _) => None,
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

/// Derive flows from the query results. Workloads become services through
/// `mapping`; when `known` (the estate's service ids) is given, edges to
/// or from anything else are skipped and reported. Several workload edges
/// mapping to one pair of services are summed: in-flight requests and
/// bytes/s both add up.
pub fn derive(results: &Results, mapping: &Mapping, known: Option<&BTreeSet<String>>) -> Derived {
    let mut notes = Vec::new();
    for (name, r) in [
        ("rate", Some(&results.rate)),
        ("duration", Some(&results.duration)),
        ("bytes", results.bytes.as_ref()),
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
    if let Some(b) = &bytes {
        if b.is_empty() && !rate.is_empty() {
            notes.push(Note {
                code: NoteCode::NoByteMetrics,
                message: "the bytes query returned no samples (are Istio's request/response size metrics enabled?): MB/s not observed".into(),
            });
        }
    }
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
    let mut pairs: BTreeMap<(String, String), Acc> = BTreeMap::new();
    // Workloads that map to nothing in the estate, with the edges skipped
    // because of them: one note per workload, not per edge.
    let mut not_in_estate: BTreeMap<(&Workload, String), usize> = BTreeMap::new();
    // Edges are judged first (outside the mesh, not in the estate, self),
    // so notes about missing figures only concern edges that count.
    for edge in edges {
        if edge.source.name == OUTSIDE_MESH || edge.destination.name == OUTSIDE_MESH {
            let side = if edge.source.name == OUTSIDE_MESH {
                "from"
            } else {
                "to"
            };
            notes.push(Note {
                code: NoteCode::OutsideMesh,
                message: format!("{edge}: traffic {side} outside the mesh (Istio's \"{OUTSIDE_MESH}\" workload): no service to name, skipped"),
            });
            continue;
        }
        let from = mapping.service_for(&edge.source);
        let to = mapping.service_for(&edge.destination);
        if let Some(known) = known {
            let mut missing = false;
            for (w, s) in [(&edge.source, &from), (&edge.destination, &to)] {
                if !known.contains(s) {
                    *not_in_estate.entry((w, s.clone())).or_default() += 1;
                    missing = true;
                }
            }
            if missing {
                continue;
            }
        }
        if from == to {
            notes.push(Note {
                code: NoteCode::SelfEdge,
                message: format!(
                    "{edge}: both ends are service {from:?}: a flow needs two services, skipped"
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
        });
        let f = edge_figures(edge, &rate, &duration, bytes.as_ref(), &mut notes);
        acc.edges.push(edge);
        add(&mut acc.weight, &mut acc.weight_missing, f.weight);
        add(&mut acc.bytes, &mut acc.bytes_missing, f.bytes_per_s);
    }
    for ((w, s), n) in not_in_estate {
        notes.push(Note {
            code: NoteCode::NotInEstate,
            message: format!(
                "workload {w} (as service {s:?}) is not a service of the estate: {n} edge{} skipped; map it with --map {}=SERVICE",
                if n == 1 { "" } else { "s" },
                w.name
            ),
        });
    }
    let flows = pairs
        .into_iter()
        .map(|((from, to), acc)| {
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
                edges: acc.edges.into_iter().cloned().collect(),
                from,
                to,
            }
        })
        // A pair with neither figure has nothing to send.
        .filter(|f| f.weight.is_some() || f.mb_s.is_some())
        .collect();
    Derived { flows, notes }
}

/// The observations to send for these flows: `flow_weight` and
/// `flow_mb_s`, class `measured`, dated by the samples. No `source`: the
/// server records the sender's token as the source of what it observed.
pub fn observations(flows: &[Flow]) -> Vec<Value> {
    let mut out = Vec::with_capacity(flows.len() * 2);
    for f in flows {
        for (fact, o) in [("flow_weight", f.weight), ("flow_mb_s", f.mb_s)] {
            let Some(o) = o else { continue };
            let v = json!({
                "fact": fact,
                "from": f.from,
                "to": f.to,
                "value": o.value,
                "class": "measured",
                "observed_at": berth_engine::estate::format_time(o.observed_at),
            });
            out.push(v);
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
        .map(|f| f.from.chars().count() + f.to.chars().count() + 3)
        .max()
        .unwrap_or(0);
    for f in &derived.flows {
        let edge = format!("{} → {}", f.from, f.to);
        let show = |o: Option<Observed>| o.map_or_else(|| "–".to_string(), |o| o.value.to_string());
        let _ = writeln!(
            s,
            "  {edge:<width$}  weight {:<10} MB/s {}",
            show(f.weight),
            show(f.mb_s),
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
            rate: parse_response("rate", "", &vector(json!([sample("a", "b", "200")]))).unwrap(),
            duration: parse_response("duration", "", &vector(json!([sample("a", "b", "71")])))
                .unwrap(),
            bytes: Some(
                parse_response("bytes", "", &vector(json!([sample("a", "b", "38000000")])))
                    .unwrap(),
            ),
        };
        let d = derive(&r, &Mapping::default(), None);
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
            rate: parse_response("rate", "", &rate).unwrap(),
            duration: parse_response("duration", "", &duration).unwrap(),
            bytes: None,
        };
        let mut m = Mapping::default();
        m.add_arg("b-v1=b").unwrap();
        m.add_arg("b-v2=b").unwrap();
        let known: BTreeSet<String> = ["a", "b"].map(String::from).into();
        let d = derive(&r, &m, Some(&known));
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
        let d = derive(&r, &m, None);
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
