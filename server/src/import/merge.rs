//! Merging an import into an estate file: only the entries an earlier
//! import of the same cluster wrote are touched.

use super::*;

/// Why a merge could not be done.
#[derive(Clone, Debug, PartialEq)]
pub enum MergeError {
    /// The estate given does not load.
    InvalidEstate(Vec<EstateError>),
    /// The target cluster is not in the estate.
    UnknownCluster { cluster: String, known: Vec<String> },
    /// No free id could be found for a service (all candidates taken or
    /// invalid).
    NoFreeId { key: String, tried: Vec<String> },
    /// The merged estate does not load (a conflict the merge could not
    /// resolve, e.g. a provenance key too long for a `source`).
    Conflict(Vec<EstateError>),
}

impl fmt::Display for MergeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            MergeError::InvalidEstate(errors) => {
                write!(f, "the estate is not valid:")?;
                for e in errors {
                    write!(f, "\n  {e}")?;
                }
                Ok(())
            }
            MergeError::UnknownCluster { cluster, known } => write!(
                f,
                "cluster {cluster:?} is not in the estate; add it first (clusters: {})",
                known.join(", ")
            ),
            MergeError::NoFreeId { key, tried } => write!(
                f,
                "no free service id for {key}: tried {} (taken or invalid)",
                tried.join(", ")
            ),
            MergeError::Conflict(errors) => {
                write!(f, "the merged estate would not be valid:")?;
                for e in errors {
                    write!(f, "\n  {e}")?;
                }
                Ok(())
            }
        }
    }
}

/// Is this flow fact one an importer wrote (so a re-import may replace or
/// remove it)? Only while no one has put a value on it: a measured or
/// declared weight is evidence and stays.
pub(super) fn import_owned_fact(fact: Option<&Value>, importer: &str) -> bool {
    match fact {
        Some(Value::Object(m)) => {
            m.get("value").is_none_or(Value::is_null)
                && m.get("source")
                    .and_then(Value::as_str)
                    .is_some_and(|s| s.starts_with(&format!("{importer}:")))
        }
        _ => false,
    }
}

/// An unknown flow fact with its source, as an importer writes it.
pub(super) fn unknown_fact(source: &str) -> Value {
    json!({"value": null, "class": "guessed", "source": source})
}

pub(super) fn same_number(v: Option<&Value>, want: Option<f64>) -> bool {
    match (v, want) {
        (None | Some(Value::Null), None) => true,
        (Some(v), Some(w)) => v.as_f64() == Some(w),
        _ => false,
    }
}

pub(super) fn number(v: Option<f64>) -> Value {
    v.map_or(Value::Null, |x| json!(x))
}

/// Merge `imported` into `estate` (an estate file as a JSON value) for
/// `cluster`:
///
/// - services whose `source` says an earlier import of this cluster wrote
///   them are updated in place (owner, requests, data, `local_volumes`,
///   `pinned`; hand-made fields such as `name`, `jurisdictions`, `tiers`,
///   `trust_zone` are kept), new ones are added, and ones no longer in the
///   import are removed with every flow that touches them;
/// - flows an earlier import wrote (unknown weight and MB/s whose source
///   is the importer's) between this cluster's imported services are
///   replaced by the import's; other flows are kept;
/// - services of other clusters, and hand-written ones, are untouched.
///
/// Re-importing identical input changes nothing (the value returned is
/// equal to the one given). The result loads with
/// `berth_engine::estate::load`; the report's notes name services by the
/// ids they end up with.
pub fn merge(
    estate: &Value,
    cluster: &str,
    imported: &Imported,
) -> Result<(Value, Report), MergeError> {
    let model = berth_engine::load(&estate.to_string(), Format::Json)
        .map_err(|e| MergeError::InvalidEstate(without_lines(e)))?;
    let merged = merge_loaded(estate, &model, cluster, imported)?;
    Ok((merged.value, merged.report))
}

/// What [`merge_loaded`] gave: the new document and its report, and,
/// unless the merge changed nothing, the document as the engine's loader
/// checked it — the text it read and the estate it read — so a writer
/// need not serialise and load it again.
pub struct Merged {
    pub value: Value,
    pub report: Report,
    pub loaded: Option<(String, berth_engine::Estate)>,
}

/// [`merge`] into an estate file already known valid: `model` is what
/// `estate` loads to (the server's stored document, from its cache), so
/// it is not loaded again.
pub fn merge_loaded(
    estate: &Value,
    model: &berth_engine::Estate,
    cluster: &str,
    imported: &Imported,
) -> Result<Merged, MergeError> {
    if model.cluster_index(cluster).is_none() {
        return Err(MergeError::UnknownCluster {
            cluster: cluster.to_string(),
            known: model.clusters.iter().map(|c| c.id.clone()).collect(),
        });
    }
    let declared_traffic = model.traffic == Some(TrafficDefault::Declared);
    let mut out = estate.clone();
    let top = out.as_object_mut().expect("a loaded estate is an object");
    let list = |key: &str| -> Vec<Value> {
        top.get(key)
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default()
    };
    let services = list("services");
    let flows = list("flows");

    let existing = Existing::read(&services, cluster, imported);
    let mut report = Report {
        importer: imported.importer.to_string(),
        cluster: cluster.to_string(),
        skipped: imported.skipped.clone(),
        ignored: imported.ignored.clone(),
        ..Report::default()
    };
    let mut notes = Vec::new();
    let merged = merge_services(
        &services,
        &existing,
        cluster,
        imported,
        declared_traffic,
        &mut report,
        &mut notes,
    )?;
    let removed_ids: BTreeSet<String> = existing
        .removed
        .iter()
        .map(|&i| id_of(&services[i]))
        .collect();
    report.removed = removed_ids.iter().cloned().collect();
    let kept_ids: BTreeSet<String> = existing.kept.iter().map(|&i| id_of(&services[i])).collect();
    report.kept = kept_ids.iter().cloned().collect();
    if !imported.complete {
        notes.push(Note {
            code: NoteCode::IncompleteInput,
            service: None,
            message: "part of the input could not be read: nothing was removed".to_string(),
        });
    }

    // Flows. Ours: both ends imported from this cluster (before or now)
    // and the weight still the importer's unknown.
    let ours_ids: BTreeSet<String> = existing
        .owned
        .values()
        .map(|&i| id_of(&services[i]))
        .chain(merged.final_id.values().cloned())
        .collect();
    let wanted: BTreeMap<(String, String), &str> = imported
        .flows
        .iter()
        .filter_map(|f| {
            Some((
                (
                    merged.final_id.get(f.from.as_str())?.clone(),
                    merged.final_id.get(f.to.as_str())?.clone(),
                ),
                f.source.as_str(),
            ))
        })
        .collect();
    let flows = FlowMerge {
        importer: imported.importer,
        complete: imported.complete,
        removed_ids: &removed_ids,
        kept_ids: &kept_ids,
        ours_ids: &ours_ids,
        wanted: &wanted,
    }
    .run(flows, &mut report);
    report.services = summaries(imported, &merged.final_id, &merged.entries);
    report.services.sort_by(|a, b| a.id.cmp(&b.id));
    report.flows_removed.sort();
    report.flows_updated.sort();
    report.added.sort();
    report.changed.sort_by(|a, b| a.id.cmp(&b.id));

    // Notes name services by their final ids.
    report.notes = imported
        .notes
        .iter()
        .map(|n| Note {
            service: n.service.as_ref().map(|s| {
                merged
                    .renamed
                    .get(s.as_str())
                    .cloned()
                    .unwrap_or_else(|| s.clone())
            }),
            ..n.clone()
        })
        .chain(notes)
        .collect();
    // By service (input-wide notes last), each service's in import order.
    report
        .notes
        .sort_by(|a, b| (a.service.is_none(), &a.service).cmp(&(b.service.is_none(), &b.service)));

    top.insert("services".into(), Value::Array(merged.entries));
    top.insert("flows".into(), Value::Array(flows));
    let text = out.to_string();
    let merged = berth_engine::load(&text, Format::Json)
        .map_err(|e| MergeError::Conflict(without_lines(e)))?;
    if let Some(note) = traffic_note(&merged, &report.services) {
        report.notes.push(note);
    }
    if report.is_noop() {
        return Ok(Merged {
            value: estate.clone(),
            report,
            loaded: None,
        });
    }
    Ok(Merged {
        value: out,
        report,
        loaded: Some((text, merged)),
    })
}

/// An entry's id ("" when it has none).
fn id_of(v: &Value) -> String {
    v.get("id")
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_string()
}

/// The estate's service entries an earlier import of this cluster wrote,
/// and what becomes of those the import no longer has.
struct Existing {
    /// Import key → index of the entry.
    owned: BTreeMap<String, usize>,
    /// Not in the import: removed…
    removed: BTreeSet<usize>,
    /// …unless skipped (it exists, unread) or the input is incomplete (it
    /// may exist).
    kept: BTreeSet<usize>,
}

impl Existing {
    fn read(services: &[Value], cluster: &str, imported: &Imported) -> Existing {
        let mut owned: BTreeMap<String, usize> = BTreeMap::new();
        for (i, s) in services.iter().enumerate() {
            if let Some(key) = s
                .get("source")
                .and_then(Value::as_str)
                .and_then(|src| owned_key(src, imported.importer, cluster, KEY_PARTS))
            {
                owned.insert(key.to_string(), i);
            }
        }
        let incoming: BTreeSet<&str> = imported.services.iter().map(|s| s.key.as_str()).collect();
        let skipped: BTreeSet<&str> = imported.kept.iter().map(String::as_str).collect();
        let mut removed: BTreeSet<usize> = BTreeSet::new();
        let mut kept: BTreeSet<usize> = BTreeSet::new();
        for (k, &i) in owned.iter().filter(|(k, _)| !incoming.contains(k.as_str())) {
            if imported.complete && !skipped.contains(k.as_str()) {
                removed.insert(i);
            } else {
                kept.insert(i);
            }
        }
        Existing {
            owned,
            removed,
            kept,
        }
    }
}

/// The service entries after the merge, and the ids the imported
/// services ended up with.
struct MergedServices<'i> {
    /// Every entry but the removed ones, the added ones last.
    entries: Vec<Value>,
    /// Import key → final id.
    final_id: BTreeMap<&'i str, String>,
    /// Proposed id → final id (for the notes).
    renamed: BTreeMap<&'i str, String>,
}

/// Update the entries an earlier import wrote, add the new ones, drop the
/// removed ones; the report's added, changed and unchanged, and the notes
/// on ids and facts not read.
fn merge_services<'i>(
    services: &[Value],
    existing: &Existing,
    cluster: &str,
    imported: &'i Imported,
    declared_traffic: bool,
    report: &mut Report,
    notes: &mut Vec<Note>,
) -> Result<MergedServices<'i>, MergeError> {
    // Ids in use once the removals are done.
    let mut taken: BTreeSet<String> = services
        .iter()
        .enumerate()
        .filter(|(i, _)| !existing.removed.contains(i))
        .map(|(_, s)| id_of(s))
        .collect();
    let mut new_services = services.to_vec();
    let mut appended: Vec<Value> = Vec::new();
    let mut final_id: BTreeMap<&str, String> = BTreeMap::new();
    let mut renamed: BTreeMap<&str, String> = BTreeMap::new();
    // Reason a kind was not read → (field, id) of the facts left alone.
    let mut unread_kept: BTreeMap<String, Vec<(String, String)>> = BTreeMap::new();
    for s in &imported.services {
        let id = if let Some(&i) = existing.owned.get(&s.key) {
            let entry = new_services[i]
                .as_object_mut()
                .expect("services are objects");
            let id = entry
                .get("id")
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_string();
            let fields = update_entry(entry, s, cluster);
            left_alone(entry, &id, s, &mut unread_kept, notes);
            if fields.is_empty() {
                report.unchanged += 1;
            } else {
                report.changed.push(Changed {
                    id: id.clone(),
                    fields,
                });
            }
            id
        } else {
            let id = free_id(s, cluster, &taken)?;
            if id != s.id {
                notes.push(Note {
                    code: NoteCode::QualifiedId,
                    service: Some(id.clone()),
                    message: format!(
                        "imported as {id}: the id {:?} is taken by a service this import did not write",
                        s.id
                    ),
                });
            }
            taken.insert(id.clone());
            if !s.unread.is_empty() {
                let (fields, why) = unread_words(s);
                notes.push(Note {
                    code: NoteCode::IncompleteInput,
                    service: Some(id.clone()),
                    message: format!(
                        "added with {fields} unknown ({why}): its moves are listed under \"Not enough evidence\" until an import that can read them states them"
                    ),
                });
            }
            appended.push(new_entry(
                s,
                &id,
                cluster,
                imported.importer,
                declared_traffic,
            ));
            report.added.push(id.clone());
            id
        };
        final_id.insert(&s.key, id.clone());
        renamed.insert(&s.id, id);
    }
    unread_kept_notes(&unread_kept, notes);
    let mut entries: Vec<Value> = new_services
        .into_iter()
        .enumerate()
        .filter(|(i, _)| !existing.removed.contains(i))
        .map(|(_, v)| v)
        .collect();
    entries.extend(appended);
    Ok(MergedServices {
        entries,
        final_id,
        renamed,
    })
}

/// The id a new service gets: its own, else qualified by the cluster,
/// else by the cluster, namespace and kind; the first valid one not
/// taken.
fn free_id(
    s: &ImportedService,
    cluster: &str,
    taken: &BTreeSet<String>,
) -> Result<String, MergeError> {
    let (ns, kind, name) = split_key(&s.key);
    let candidates = [
        s.id.clone(),
        format!("{cluster}/{}", s.id),
        format!("{cluster}/{ns}/{}/{name}", kind.to_ascii_lowercase()),
    ];
    candidates
        .iter()
        .find(|c| valid_id(c) && !taken.contains(c.as_str()))
        .cloned()
        .ok_or_else(|| MergeError::NoFreeId {
            key: s.key.clone(),
            tried: candidates.to_vec(),
        })
}

/// The entry of a service the import adds.
fn new_entry(
    s: &ImportedService,
    id: &str,
    cluster: &str,
    importer: &str,
    declared_traffic: bool,
) -> Value {
    let mut entry = Map::new();
    entry.insert("id".into(), json!(id));
    entry.insert(
        "owner".into(),
        json!(s.owner.as_deref().unwrap_or(UNKNOWN_OWNER)),
    );
    entry.insert("cluster".into(), json!(cluster));
    entry.insert("cpu".into(), number(s.cpu));
    entry.insert("memory_gib".into(), number(s.memory_gib));
    // What could not be read is written unknown, with why — never
    // the default a reader that saw nothing would give
    // (docs/estate-format.md "Unknown data").
    entry.insert(
        "data_gb".into(),
        told(s.unread.get(DATA_GB), json!(s.data_gb)),
    );
    let mut c = Map::new();
    if let Some(why) = s.unread.get(LOCAL_VOLUMES) {
        c.insert("local_volumes".into(), told(Some(why), json!(false)));
    } else if s.local_volumes {
        c.insert("local_volumes".into(), json!(true));
    }
    if s.pinned {
        c.insert("pinned".into(), json!(true));
    }
    if !c.is_empty() {
        entry.insert("constraints".into(), Value::Object(c));
    }
    entry.insert("source".into(), json!(source_of(importer, cluster, &s.key)));
    // Nothing observed its traffic: said explicitly where the estate's
    // own default would read the entry otherwise (a top-level
    // `"traffic": "declared"`, e.g. the sample's); elsewhere its
    // `source` already says so (docs/advice.md §2, Traffic coverage).
    if declared_traffic {
        entry.insert("traffic".into(), Value::Null);
    }
    Value::Object(entry)
}

/// One note per reason a kind was not read, naming the facts of existing
/// entries left as an earlier import wrote them.
fn unread_kept_notes(unread_kept: &BTreeMap<String, Vec<(String, String)>>, notes: &mut Vec<Note>) {
    for (why, facts) in unread_kept {
        let mut by_field: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
        for (field, id) in facts {
            by_field
                .entry(field.as_str())
                .or_default()
                .push(id.as_str());
        }
        let said: Vec<String> = by_field
            .iter()
            .map(|(field, ids)| format!("{field} of {}", ids.join(", ")))
            .collect();
        notes.push(Note {
            code: NoteCode::IncompleteInput,
            service: None,
            message: format!(
                "{why}: left as the earlier import wrote them: {}",
                said.join("; ")
            ),
        });
    }
}

/// The estate's flows brought in line with the import's.
struct FlowMerge<'a> {
    importer: &'a str,
    complete: bool,
    removed_ids: &'a BTreeSet<String>,
    kept_ids: &'a BTreeSet<String>,
    /// Services imported from this cluster, before or now.
    ours_ids: &'a BTreeSet<String>,
    /// (from, to) → source, of the import's flows.
    wanted: &'a BTreeMap<(String, String), &'a str>,
}

impl FlowMerge<'_> {
    /// Flows touching a removed service go; flows an earlier import wrote
    /// between this cluster's services are replaced by the import's;
    /// others stay; the import's new ones are added.
    fn run(&self, flows: Vec<Value>, report: &mut Report) -> Vec<Value> {
        let end = |f: &Value, k: &str| f.get(k).and_then(Value::as_str).unwrap_or("").to_string();
        let flow_ref = |(from, to): &(String, String)| FlowRef {
            from: from.clone(),
            to: to.clone(),
        };
        let mut present: BTreeSet<(String, String)> = BTreeSet::new();
        let mut new_flows = Vec::with_capacity(flows.len());
        for mut f in flows {
            let pair = (end(&f, "from"), end(&f, "to"));
            if self.removed_ids.contains(&pair.0) || self.removed_ids.contains(&pair.1) {
                report.flows_removed.push(flow_ref(&pair));
                continue;
            }
            if self.ours(&f, &pair) {
                match self.wanted.get(&pair) {
                    None => {
                        report.flows_removed.push(flow_ref(&pair));
                        continue;
                    }
                    Some(&src) => {
                        let current = f
                            .get("weight")
                            .and_then(|w| w.get("source"))
                            .and_then(Value::as_str);
                        if current != Some(src) {
                            f["weight"] = unknown_fact(src);
                            f["mb_s"] = unknown_fact(src);
                            report.flows_updated.push(flow_ref(&pair));
                        }
                    }
                }
            }
            present.insert(pair);
            new_flows.push(f);
        }
        for (pair, src) in self.wanted {
            if present.contains(pair) {
                continue;
            }
            new_flows.push(json!({
                "from": pair.0,
                "to": pair.1,
                "weight": unknown_fact(src),
                "mb_s": unknown_fact(src),
            }));
            report.flows_added.push(flow_ref(pair));
        }
        new_flows
    }

    /// Is this flow one the import may replace or remove? Both ends
    /// imported from this cluster, neither kept (a kept service's edges
    /// were not read), and both facts still the importer's unknown.
    fn ours(&self, f: &Value, (from, to): &(String, String)) -> bool {
        self.complete
            && !self.kept_ids.contains(from)
            && !self.kept_ids.contains(to)
            && self.ours_ids.contains(from)
            && self.ours_ids.contains(to)
            && import_owned_fact(f.get("weight"), self.importer)
            && import_owned_fact(f.get("mb_s"), self.importer)
    }
}

/// The report's line for each imported service, by its final id; the
/// facts not read are what the estate holds now (kept from an earlier
/// import, or unknown).
fn summaries(
    imported: &Imported,
    final_id: &BTreeMap<&str, String>,
    entries: &[Value],
) -> Vec<ServiceSummary> {
    let entries: BTreeMap<&str, &Value> = entries
        .iter()
        .filter_map(|v| Some((v.get("id")?.as_str()?, v)))
        .collect();
    imported
        .services
        .iter()
        .map(|s| {
            let id = final_id[s.key.as_str()].clone();
            let entry = entries.get(id.as_str());
            let mut summary = ServiceSummary {
                id,
                cpu: s.cpu,
                memory_gib: s.memory_gib,
                data_gb: s.data_gb,
                pinned: s.pinned,
                local_volumes: s.local_volumes,
                unknown: Vec::new(),
            };
            let Some(e) = entry else {
                return summary;
            };
            if s.unread.contains_key(DATA_GB) {
                match e.get("data_gb") {
                    Some(Value::Object(_)) | Some(Value::Null) => {
                        summary.data_gb = 0.0;
                        summary.unknown.push(DATA_GB.to_string());
                    }
                    v => summary.data_gb = v.and_then(Value::as_f64).unwrap_or(0.0),
                }
            }
            if s.unread.contains_key(LOCAL_VOLUMES) {
                match e.pointer("/constraints/local_volumes") {
                    Some(Value::Object(_)) | Some(Value::Null) => {
                        summary.local_volumes = false;
                        summary.unknown.push(LOCAL_VOLUMES.to_string());
                    }
                    v => summary.local_volumes = v.and_then(Value::as_bool).unwrap_or(false),
                }
            }
            summary
        })
        .collect()
}

/// The imported services whose traffic nothing has observed, said once
/// for the whole import: how many got no call edge from the input (their
/// advice would otherwise rest on a hidden zero) and what would observe
/// them. `None` when every imported service's traffic is observed or
/// declared.
pub(super) fn traffic_note(
    merged: &berth_engine::Estate,
    imported: &[ServiceSummary],
) -> Option<Note> {
    let mut has_flow = vec![false; merged.services.len()];
    for f in &merged.flows {
        has_flow[f.from] = true;
        has_flow[f.to] = true;
    }
    let mut unknown = 0;
    let mut no_edge: Vec<&str> = Vec::new();
    for s in imported {
        let Some(i) = merged.service_index(&s.id) else {
            continue;
        };
        if merged.traffic_of(i).is_some_and(|f| f.value.is_none()) {
            unknown += 1;
            if !has_flow[i] {
                no_edge.push(&s.id);
            }
        }
    }
    if unknown == 0 {
        return None;
    }
    let total = imported.len();
    let edges = match no_edge.len() {
        0 => "every one has a call edge from the input".to_string(),
        n => {
            const SHOWN: usize = 10;
            let mut names = no_edge[..n.min(SHOWN)].join(", ");
            if n > SHOWN {
                names.push_str(&format!(" and {} more", n - SHOWN));
            }
            format!(
                "{n} got no call edge from the input ({names}), which is not the same as calling nobody"
            )
        }
    };
    let few = few_edges(merged, imported)
        .map(|w| format!(". {w}"))
        .unwrap_or_default();
    Some(Note {
        code: NoteCode::TrafficUnknown,
        service: None,
        message: format!(
            "traffic never observed for {unknown} of {total} imported services; {edges}. A move of any of them is listed under \"Not enough evidence\" until a mesh import (berth import prometheus) or an agent pass observes it{few}"
        ),
    })
}

/// Below this many call edges per imported service the input is said to
/// show few of the application's calls: half an edge per service. The
/// real fixtures read 1.3 (Online Boutique, 16 for 12), 1.7 (Bank of
/// Anthos, 15 for 9) and 0.07 (Sock Shop, 1 for 14, whose services find
/// each other by names built into their images, not by variables).
pub(super) const FEW_EDGES_PER_SERVICE: f64 = 0.5;
/// Fewer services than this say too little for a ratio to mean much.
pub(super) const FEW_EDGES_MIN_SERVICES: usize = 4;

/// When the input gave few call edges for many services: how few, that
/// manifests do not show every call, and where the flows will come from.
pub(super) fn few_edges(
    merged: &berth_engine::Estate,
    imported: &[ServiceSummary],
) -> Option<String> {
    let mut ours = vec![false; merged.services.len()];
    for s in imported {
        if let Some(i) = merged.service_index(&s.id) {
            ours[i] = true;
        }
    }
    let n = ours.iter().filter(|&&o| o).count();
    let edges = merged
        .flows
        .iter()
        .filter(|f| ours[f.from] || ours[f.to])
        .count();
    if n < FEW_EDGES_MIN_SERVICES || edges as f64 >= FEW_EDGES_PER_SERVICE * n as f64 {
        return None;
    }
    let edge_word = if edges == 1 { "edge" } else { "edges" };
    Some(format!(
        "Only {edges} call {edge_word} for {n} services: these manifests name few of the calls the application makes (its services may find each other by names set inside their images), so the advice cannot see how they talk. The flows will come from the service mesh's metrics (berth import prometheus --url PROMETHEUS_URL) or from an agent beside each cluster (berth agent --prometheus PROMETHEUS_URL), which see every call."
    ))
}

/// Loader errors on a value serialised for the occasion: its line numbers
/// point into that one-line text, not into any file, so they are dropped
/// (the JSON pointer says where).
pub(super) fn without_lines(errors: Vec<EstateError>) -> Vec<EstateError> {
    errors
        .into_iter()
        .map(|e| EstateError { line: None, ..e })
        .collect()
}

/// A fact that may be unknown as the estate file writes it: `{"unknown":
/// why}` when `why` is given, else the value read.
pub(super) fn told(why: Option<&String>, value: Value) -> Value {
    match why {
        Some(why) => json!({ "unknown": why }),
        None => value,
    }
}

/// `data_gb and constraints.local_volumes` and why, for a note.
pub(super) fn unread_words(s: &ImportedService) -> (String, String) {
    let fields: Vec<&str> = s.unread.keys().map(String::as_str).collect();
    let mut why: Vec<&str> = s.unread.values().map(String::as_str).collect();
    why.dedup();
    (fields.join(" and "), why.join("; "))
}

/// Note, on an existing entry, each fact the import could not read and
/// so left as it was (its value, and the entry's source, untouched).
pub(super) fn left_alone(
    entry: &Map<String, Value>,
    id: &str,
    s: &ImportedService,
    kept: &mut BTreeMap<String, Vec<(String, String)>>,
    notes: &mut Vec<Note>,
) {
    if s.unread.is_empty() {
        return;
    }
    let mut said = Vec::new();
    for (field, why) in &s.unread {
        let value = match field.as_str() {
            DATA_GB => entry.get("data_gb").cloned().unwrap_or(json!(0)),
            LOCAL_VOLUMES => entry
                .get("constraints")
                .and_then(|c| c.get("local_volumes"))
                .cloned()
                .unwrap_or(json!(false)),
            _ => continue,
        };
        let value = match value {
            Value::Object(_) | Value::Null => "unknown".to_string(),
            v => v.to_string(),
        };
        said.push(format!("{field} {value}"));
        kept.entry(why.clone())
            .or_default()
            .push((field.clone(), id.to_string()));
    }
    let (_, why) = unread_words(s);
    notes.push(Note {
        code: NoteCode::IncompleteInput,
        service: Some(id.to_string()),
        message: format!(
            "kept {} as the earlier import wrote them ({}): {why}",
            said.join(", "),
            entry
                .get("source")
                .and_then(Value::as_str)
                .unwrap_or("no source")
        ),
    });
}

/// Bring an existing entry in line with the import; the estate fields
/// that changed, in a fixed order. Facts the import could not read are
/// left as they are.
pub(super) fn update_entry(
    entry: &mut Map<String, Value>,
    s: &ImportedService,
    cluster: &str,
) -> Vec<String> {
    let mut fields = Vec::new();
    if entry.get("cluster").and_then(Value::as_str) != Some(cluster) {
        entry.insert("cluster".into(), json!(cluster));
        fields.push("cluster".to_string());
    }
    // An owner the import cannot tell never overwrites one a person set.
    if let Some(owner) = &s.owner {
        if entry.get("owner").and_then(Value::as_str) != Some(owner) {
            entry.insert("owner".into(), json!(owner));
            fields.push("owner".to_string());
        }
    }
    for (key, want) in [("cpu", s.cpu), ("memory_gib", s.memory_gib)] {
        if !same_number(entry.get(key), want) {
            entry.insert(key.into(), number(want));
            fields.push(key.to_string());
        }
    }
    // An unknown (`{"unknown": …}` or `null`) an earlier import wrote is
    // replaced once the import can read the fact.
    let data = match entry.get("data_gb") {
        None => Some(0.0),
        Some(v) => v.as_f64(),
    };
    if data != Some(s.data_gb) && !s.unread.contains_key(DATA_GB) {
        entry.insert("data_gb".into(), json!(s.data_gb));
        fields.push("data_gb".to_string());
    }
    for (key, want) in [("local_volumes", s.local_volumes), ("pinned", s.pinned)] {
        if s.unread.contains_key(&format!("constraints.{key}")) {
            continue;
        }
        let has = match entry.get("constraints").and_then(|c| c.get(key)) {
            None => Some(false),
            Some(v) => v.as_bool(),
        };
        if has == Some(want) {
            continue;
        }
        fields.push(format!("constraints.{key}"));
        let c = entry
            .entry("constraints")
            .or_insert_with(|| json!({}))
            .as_object_mut();
        if let Some(c) = c {
            if want {
                c.insert(key.into(), json!(true));
            } else {
                c.remove(key);
            }
        }
        if entry
            .get("constraints")
            .and_then(Value::as_object)
            .is_some_and(Map::is_empty)
        {
            entry.remove("constraints");
        }
    }
    fields
}
