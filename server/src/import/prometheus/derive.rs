//! Flows derived from the answers (Little's law), the observations
//! they become, and the report for people.

use super::*;

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

pub(super) fn usable(v: f64) -> bool {
    v.is_finite() && v >= 0.0
}

/// Per workload edge: the weight and bytes/s, before mapping.
pub(super) struct EdgeFigures {
    pub(super) weight: Option<Observed>,
    pub(super) bytes_per_s: Option<Observed>,
}

/// The weight and bytes/s of one workload edge, noting what is missing.
pub(super) fn edge_figures(
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
    let answers = Answers::new(results);
    let mut notes = answer_notes(results, reading, &answers);
    let (pairs, not_in_estate) = pair_edges(&answers, reading, mapping, known, &mut notes);
    let covered = covered(results, reading, mapping, known);
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
        .filter_map(|(ends, acc)| acc.flow(ends, &mut notes))
        .collect();
    Derived {
        flows,
        notes,
        covered,
    }
}

/// The answers by workload edge, and the samples the best-covered edge
/// has in the window.
struct Answers {
    rate: BTreeMap<Edge, Sample>,
    duration: BTreeMap<Edge, Sample>,
    bytes: Option<BTreeMap<Edge, Sample>>,
    coverage: Option<BTreeMap<Edge, Sample>>,
    /// What every edge scraped without a gap has too (they share the
    /// scrape interval); `None` without the coverage query.
    full: Option<f64>,
}

impl Answers {
    fn new(results: &Results) -> Answers {
        let index = |r: &QueryResult| -> BTreeMap<Edge, Sample> {
            r.samples
                .iter()
                .map(|s| (s.edge.clone(), s.clone()))
                .collect()
        };
        let coverage = results.coverage.as_ref().map(index);
        let full = coverage.as_ref().map(|c| {
            c.values()
                .map(|s| s.value)
                .filter(|v| v.is_finite())
                .fold(0.0_f64, f64::max)
        });
        Answers {
            rate: index(&results.rate),
            duration: index(&results.duration),
            bytes: results.bytes.as_ref().map(index),
            coverage,
            full,
        }
    }
}

/// Notes on the answers as a whole: the queries' own, Prometheus'
/// warnings, and a bytes query that found nothing.
fn answer_notes(results: &Results, reading: &Reading, answers: &Answers) -> Vec<Note> {
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
    if let Some(b) = &answers.bytes {
        if b.is_empty() && !answers.rate.is_empty() {
            notes.push(Note {
                code: NoteCode::NoByteMetrics,
                message: format!(
                    "the bytes query returned no samples (are the mesh's byte counters enabled? {}): MB/s not observed",
                    reading.mesh.metric_names()
                ),
            });
        }
    }
    notes
}

/// Is this workload outside the mesh (unnamed, or a name the mesh gives
/// what it did not identify)?
fn outside(reading: &Reading, w: &Workload) -> bool {
    w.name.is_empty() || reading.mesh.outside().contains(&w.name.as_str())
}

/// One end as sent: a service id, or a name and its cluster.
type End = (String, Option<String>);

/// Workloads that map to nothing in the estate, with the number of edges
/// skipped because of them: one note per workload, not per edge.
type NotInEstate<'a> = BTreeMap<(&'a Workload, String), usize>;

/// The figures of one service pair, summed over its workload edges.
struct Acc<'a> {
    edges: Vec<&'a Edge>,
    weight: Option<Observed>,
    weight_missing: bool,
    bytes: Option<Observed>,
    bytes_missing: bool,
    class: Class,
}

impl Acc<'_> {
    /// Add one edge's figure (`None`: that edge had none).
    fn add(acc: &mut Option<Observed>, missing: &mut bool, v: Option<Observed>) {
        match v {
            None => *missing = true,
            Some(v) => {
                let prev = acc.get_or_insert(Observed {
                    value: 0.0,
                    observed_at: v.observed_at,
                });
                prev.value += v.value;
                prev.observed_at = prev.observed_at.max(v.observed_at);
            }
        }
    }

    /// The flow sent for this pair; `None` when it has neither figure.
    fn flow(self, ends: (End, End), notes: &mut Vec<Note>) -> Option<Flow> {
        let ((from, from_cluster), (to, to_cluster)) = ends;
        let n = self.edges.len();
        let partial = |missing: bool, v: Option<Observed>, what: &str, notes: &mut Vec<Note>| {
            if missing && v.is_some() && n > 1 {
                notes.push(Note {
                    code: if what == "weight" { NoteCode::NoDuration } else { NoteCode::NoBytes },
                    message: format!("{from} → {to}: {what} known for only some of its {n} workload edges: not observed"),
                });
            }
            if missing {
                None
            } else {
                v
            }
        };
        let weight = partial(self.weight_missing, self.weight, "weight", notes);
        let bytes = partial(self.bytes_missing, self.bytes, "MB/s", notes);
        let flow = Flow {
            weight: weight.map(|o| Observed {
                value: round_significant(o.value),
                ..o
            }),
            mb_s: bytes.map(|o| Observed {
                value: round_significant(o.value / BYTES_PER_MB),
                ..o
            }),
            class: self.class,
            edges: self.edges.into_iter().cloned().collect(),
            from,
            to,
            from_cluster,
            to_cluster,
        };
        // A pair with neither figure has nothing to send.
        (flow.weight.is_some() || flow.mb_s.is_some()).then_some(flow)
    }
}

/// Map every edge any query saw to services and sum per service pair. A
/// pair's figure is sent only if every workload edge in it had one: a
/// partial sum would be an understatement presented as a measurement.
/// Edges are judged first (outside the mesh, not in the estate, self),
/// so notes about missing figures only concern edges that count.
fn pair_edges<'a>(
    answers: &'a Answers,
    reading: &Reading,
    mapping: &Mapping,
    known: Option<&Directory>,
    notes: &mut Vec<Note>,
) -> (BTreeMap<(End, End), Acc<'a>>, NotInEstate<'a>) {
    // Every edge any query saw, except edges with only a duration: a
    // duration alone derives nothing.
    let edges: BTreeSet<&Edge> = answers
        .rate
        .keys()
        .chain(answers.bytes.iter().flat_map(|b| b.keys()))
        .collect();
    let mut pairs: BTreeMap<(End, End), Acc> = BTreeMap::new();
    let mut not_in_estate: NotInEstate = BTreeMap::new();
    for edge in edges {
        if outside(reading, &edge.source) || outside(reading, &edge.destination) {
            let (side, w) = if outside(reading, &edge.source) {
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
        let f = edge_figures(
            edge,
            &answers.rate,
            &answers.duration,
            answers.bytes.as_ref(),
            notes,
        );
        if let (Some(c), Some(full)) = (&answers.coverage, answers.full) {
            let have = c.get(edge).map_or(0.0, |s| s.value);
            if have < COVERAGE_FRACTION * full {
                notes.push(Note {
                    code: NoteCode::ScrapeGap,
                    message: format!(
                        "{edge}: {have} samples in the {} window where the best-covered edges have {full}: a scrape gap; its figures go as reported, not measured",
                        super::super::mesh::WINDOW
                    ),
                });
                acc.class = Class::Reported;
            }
        }
        acc.edges.push(edge);
        Acc::add(&mut acc.weight, &mut acc.weight_missing, f.weight);
        Acc::add(&mut acc.bytes, &mut acc.bytes_missing, f.bytes_per_s);
    }
    (pairs, not_in_estate)
}

/// Coverage: every workload inside the mesh that any query's series
/// name, resolved to the estate; dated by its newest sample.
fn covered(
    results: &Results,
    reading: &Reading,
    mapping: &Mapping,
    known: Option<&Directory>,
) -> Vec<Covered> {
    let mut covered: BTreeMap<(String, Option<String>), i64> = BTreeMap::new();
    let all = [
        Some(&results.rate),
        Some(&results.duration),
        results.bytes.as_ref(),
        results.coverage.as_ref(),
    ];
    for sample in all.into_iter().flatten().flat_map(|r| r.samples.iter()) {
        for w in [&sample.edge.source, &sample.edge.destination] {
            if outside(reading, w) {
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
    covered
        .into_iter()
        .map(|((service, cluster), observed_at)| Covered {
            service,
            cluster,
            observed_at,
        })
        .collect()
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

    #[test]
    fn rounding_keeps_six_significant_digits() {
        assert_eq!(round_significant(200.0 * 71.0 / 1000.0), 14.2);
        assert_eq!(round_significant(0.000123456789), 0.000123457);
        assert_eq!(round_significant(1234567.0), 1234570.0);
        assert_eq!(round_significant(0.0), 0.0);
    }
}
