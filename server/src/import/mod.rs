//! Importers: descriptions of running services kept elsewhere (Kubernetes
//! manifests today) turned into estate entries, and merged into an estate
//! file. Pure functions of text and values — no I/O, no clock — so the
//! CLI, the server and tests share them.
//!
//! An importer produces an [`Imported`]: services keyed by a stable
//! provenance key, flows between those keys, and notes. [`merge`] then
//! writes them into an estate file (the JSON form of
//! `berth_engine::export::to_file`) for one target cluster, touching only
//! the entries an earlier import of that cluster wrote — told by their
//! `source` — and reports what changed. `docs/kubernetes-import.md` has
//! the rules.

pub mod capacity;
pub mod kubernetes;
pub mod mesh;
pub mod prometheus;
pub mod quantity;
pub mod rtt;
pub mod tree;

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::{self, Write};

use berth_engine::estate::TrafficDefault;
use berth_engine::{EstateError, Format};
use serde::Serialize;
use serde_json::{json, Map, Value};

/// One input text and the name it is reported under (usually its file
/// name).
#[derive(Clone, Copy, Debug)]
pub struct Input<'a> {
    pub name: &'a str,
    pub text: &'a str,
}

// The data an import reports (its errors, notes and the merge's report)
// is the API's: the server sends it and clients read it as these types.
pub use berth_api::{
    ChangedService as Changed, FlowRef, ImportError, ImportNote as Note,
    ImportNoteCode as NoteCode, ImportReport as Report, ImportServiceSummary as ServiceSummary,
};

/// One service as an importer saw it.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ImportedService {
    /// Unique within the import and stable across imports of the same
    /// source, e.g. `shop/Deployment/cart`; with the cluster it forms the
    /// entry's `source`.
    pub key: String,
    /// The id it gets unless that id is taken in the estate (see
    /// [`merge`]).
    pub id: String,
    /// From a label or the namespace; `None` = unknown.
    pub owner: Option<String>,
    /// Cores; `None` = unknown.
    pub cpu: Option<f64>,
    /// GiB; `None` = unknown.
    pub memory_gib: Option<f64>,
    /// GB of persistent data that is known (see the notes for data whose
    /// size is not).
    pub data_gb: f64,
    pub local_volumes: bool,
    pub pinned: bool,
    /// Facts the input could not tell because a kind they come from was
    /// not read (a Kubernetes API that refused to list it): estate field
    /// (`data_gb`, `constraints.local_volumes`) → why, e.g.
    /// "PersistentVolumeClaim not read (403: …)". Their values above are
    /// not facts: [`merge`] keeps what an earlier import wrote, and
    /// writes them unknown, with the reason, on a new entry.
    pub unread: BTreeMap<String, String>,
}

impl ImportedService {
    /// Neither pinned nor bound to local volumes.
    pub fn can_move(&self) -> bool {
        !self.pinned && !self.local_volumes
    }
}

/// A call edge between two imported services, by key.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize)]
pub struct ImportedFlow {
    pub from: String,
    pub to: String,
    /// The fact source written on the flow, e.g. `kubernetes:env/CART_ADDR`.
    pub source: String,
}

/// What an importer produced: services in key order, flows in (from, to)
/// order, notes, and what it skipped or left aside.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct Imported {
    /// Importer name: the `source` prefix of the entries it writes.
    pub importer: &'static str,
    pub services: Vec<ImportedService>,
    pub flows: Vec<ImportedFlow>,
    pub notes: Vec<Note>,
    /// Objects left out because they could not be understood (only with
    /// `skip_invalid`; otherwise these are errors).
    pub skipped: Vec<ImportError>,
    /// Keys of skipped services: they still exist, so a merge leaves
    /// their entries as they are rather than removing them.
    pub kept: Vec<String>,
    /// False when part of the input could not be read at all (a syntax
    /// error ends a file; an object without a kind or name): what is
    /// missing is unknown, so a merge removes nothing.
    pub complete: bool,
    /// Objects recognised and not imported, by kind.
    pub ignored: BTreeMap<String, usize>,
}

impl Imported {
    pub fn service(&self, id: &str) -> Option<&ImportedService> {
        self.services.iter().find(|s| s.id == id)
    }
}

/// A merge's [`Report`] for people.
pub trait ReportText {
    /// The report for people, one fact per line.
    fn text(&self) -> String;
}

impl ReportText for Report {
    fn text(&self) -> String {
        let mut out = String::new();
        let _ = writeln!(
            out,
            "{} import into cluster {}: {} — {} added, {} changed, {} removed, {} unchanged; flows: {} added, {} updated, {} removed",
            self.importer,
            self.cluster,
            counted(self.services.len() as f64, "service", "services"),
            self.added.len(),
            self.changed.len(),
            self.removed.len(),
            self.unchanged,
            self.flows_added.len(),
            self.flows_updated.len(),
            self.flows_removed.len()
        );
        let list = |out: &mut String, title: &str, items: Vec<String>| {
            if !items.is_empty() {
                let _ = writeln!(out, "{title}:");
                for i in items {
                    let _ = writeln!(out, "  {i}");
                }
            }
        };
        if !self.services.is_empty() {
            let known = |f: fn(&ServiceSummary) -> Option<f64>| -> f64 {
                self.services.iter().filter_map(f).sum()
            };
            let unknown = self
                .services
                .iter()
                .filter(|s| s.cpu.is_none() || s.memory_gib.is_none())
                .count();
            let _ = writeln!(
                out,
                "Known requests: {}, {} GiB; {unknown} service{} with an unknown request",
                counted(known(|s| s.cpu), "core", "cores"),
                num(Some(known(|s| s.memory_gib))),
                if unknown == 1 { "" } else { "s" }
            );
            let width = self.services.iter().map(|s| s.id.len()).max().unwrap_or(0);
            let _ = writeln!(
                out,
                "  {:<width$}  {:>8}  {:>10}  {:>8}",
                "service", "cores", "GiB", "data GB"
            );
            for s in &self.services {
                let mut flags = Vec::new();
                if s.pinned {
                    flags.push("pinned");
                }
                if s.local_volumes {
                    flags.push("local volumes");
                }
                let unknown = |f: &str| s.unknown.iter().any(|u| u == f);
                if unknown(LOCAL_VOLUMES) {
                    flags.push("local volumes unknown");
                }
                let data = if unknown(DATA_GB) {
                    None
                } else {
                    Some(s.data_gb)
                };
                let line = format!(
                    "  {:<width$}  {:>8}  {:>10}  {:>8}  {}",
                    s.id,
                    num(s.cpu),
                    num(s.memory_gib),
                    num(data),
                    flags.join(", ")
                );
                let _ = writeln!(out, "{}", line.trim_end());
            }
        }
        list(&mut out, "Added", self.added.clone());
        list(
            &mut out,
            "Changed",
            self.changed
                .iter()
                .map(|c| format!("{} ({})", c.id, c.fields.join(", ")))
                .collect(),
        );
        list(&mut out, "Removed", self.removed.clone());
        list(
            &mut out,
            "Kept as they were (skipped, or the input is incomplete)",
            self.kept.clone(),
        );
        let flows = |v: &[FlowRef]| -> Vec<String> {
            v.iter().map(|f| format!("{} → {}", f.from, f.to)).collect()
        };
        list(&mut out, "Flows added", flows(&self.flows_added));
        list(&mut out, "Flows updated", flows(&self.flows_updated));
        list(&mut out, "Flows removed", flows(&self.flows_removed));
        list(
            &mut out,
            "Notes",
            self.notes
                .iter()
                .map(|n| match &n.service {
                    Some(s) => format!("[{}] {s}: {}", n.code.as_str(), n.message),
                    None => format!("[{}] {}", n.code.as_str(), n.message),
                })
                .collect(),
        );
        list(
            &mut out,
            "Skipped (could not be understood)",
            self.skipped.iter().map(|e| e.to_string()).collect(),
        );
        if !self.ignored.is_empty() {
            let kinds: Vec<String> = self
                .ignored
                .iter()
                .map(|(k, n)| format!("{k} {n}"))
                .collect();
            let _ = writeln!(out, "Not imported, by kind: {}", kinds.join(", "));
        }
        out
    }
}

/// A number and its unit, singular for exactly one: "1 core", "0.5
/// cores", "12 services".
fn counted(v: f64, one: &str, many: &str) -> String {
    let n = num(Some(v));
    let unit = if n == "1" { one } else { many };
    format!("{n} {unit}")
}

/// A number for the report: at most four decimals (64 MiB is 0.0625 GiB),
/// no trailing zeros;
/// `?` for unknown.
fn num(v: Option<f64>) -> String {
    let Some(v) = v else {
        return "?".to_string();
    };
    let s = format!("{v:.4}");
    let s = s.trim_end_matches('0').trim_end_matches('.');
    if s == "-0" {
        "0".to_string()
    } else {
        s.to_string()
    }
}

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

/// The `source` an importer writes on a service it imported into
/// `cluster`: `<importer>:<cluster>/<key>`.
pub fn source_of(importer: &str, cluster: &str, key: &str) -> String {
    format!("{importer}:{cluster}/{key}")
}

/// The key of a service entry that `importer` wrote for `cluster`, read
/// back from its `source`; `None` for anything else. Keys have a fixed
/// number of `/`-separated parts that never contain `/` themselves
/// (Kubernetes namespaces, kinds and names cannot), so the cluster is
/// everything before them, whatever it contains.
fn owned_key<'a>(
    source: &'a str,
    importer: &str,
    cluster: &str,
    key_parts: usize,
) -> Option<&'a str> {
    let rest = source.strip_prefix(importer)?.strip_prefix(':')?;
    let mut cut = rest.len();
    for _ in 0..key_parts {
        cut = rest[..cut].rfind('/')?;
    }
    (&rest[..cut] == cluster).then(|| &rest[cut + 1..])
}

/// Parts of a key (`namespace/Kind/name`).
const KEY_PARTS: usize = 3;

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

/// Is this flow fact one an importer wrote (so a re-import may replace or
/// remove it)? Only while no one has put a value on it: a measured or
/// declared weight is evidence and stays.
fn import_owned_fact(fact: Option<&Value>, importer: &str) -> bool {
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
fn unknown_fact(source: &str) -> Value {
    json!({"value": null, "class": "guessed", "source": source})
}

fn same_number(v: Option<&Value>, want: Option<f64>) -> bool {
    match (v, want) {
        (None | Some(Value::Null), None) => true,
        (Some(v), Some(w)) => v.as_f64() == Some(w),
        _ => false,
    }
}

fn number(v: Option<f64>) -> Value {
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
    if model.cluster_index(cluster).is_none() {
        return Err(MergeError::UnknownCluster {
            cluster: cluster.to_string(),
            known: model.clusters.iter().map(|c| c.id.clone()).collect(),
        });
    }
    let importer = imported.importer;
    let mut out = estate.clone();
    let top = out.as_object_mut().expect("a loaded estate is an object");
    let services: Vec<Value> = top
        .get("services")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    let flows: Vec<Value> = top
        .get("flows")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    let id_of = |v: &Value| {
        v.get("id")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string()
    };

    // Entries an earlier import of this cluster wrote, by key.
    let mut owned: BTreeMap<String, usize> = BTreeMap::new();
    for (i, s) in services.iter().enumerate() {
        if let Some(key) = s
            .get("source")
            .and_then(Value::as_str)
            .and_then(|src| owned_key(src, importer, cluster, KEY_PARTS))
        {
            owned.insert(key.to_string(), i);
        }
    }
    let incoming: BTreeSet<&str> = imported.services.iter().map(|s| s.key.as_str()).collect();
    let skipped: BTreeSet<&str> = imported.kept.iter().map(String::as_str).collect();
    // Not in the import: removed — unless skipped (it exists, unread) or
    // the input is incomplete (it may exist).
    let mut removed_idx: BTreeSet<usize> = BTreeSet::new();
    let mut kept_idx: BTreeSet<usize> = BTreeSet::new();
    for (k, &i) in owned.iter().filter(|(k, _)| !incoming.contains(k.as_str())) {
        if imported.complete && !skipped.contains(k.as_str()) {
            removed_idx.insert(i);
        } else {
            kept_idx.insert(i);
        }
    }
    // Ids in use once the removals are done.
    let mut taken: BTreeSet<String> = services
        .iter()
        .enumerate()
        .filter(|(i, _)| !removed_idx.contains(i))
        .map(|(_, s)| id_of(s))
        .collect();

    let mut report = Report {
        importer: importer.to_string(),
        cluster: cluster.to_string(),
        skipped: imported.skipped.clone(),
        ignored: imported.ignored.clone(),
        ..Report::default()
    };
    let mut new_services = services.clone();
    let mut appended: Vec<Value> = Vec::new();
    // Import key → final id; proposed id → final id (for the notes).
    let mut final_id: BTreeMap<&str, String> = BTreeMap::new();
    let mut renamed: BTreeMap<&str, String> = BTreeMap::new();
    let mut notes = Vec::new();
    // Reason a kind was not read → (field, id) of the facts left alone.
    let mut unread_kept: BTreeMap<String, Vec<(String, String)>> = BTreeMap::new();
    for s in &imported.services {
        if let Some(&i) = owned.get(&s.key) {
            let entry = new_services[i]
                .as_object_mut()
                .expect("services are objects");
            let id = entry
                .get("id")
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_string();
            let fields = update_entry(entry, s, cluster);
            left_alone(entry, &id, s, &mut unread_kept, &mut notes);
            if fields.is_empty() {
                report.unchanged += 1;
            } else {
                report.changed.push(Changed {
                    id: id.clone(),
                    fields,
                });
            }
            final_id.insert(&s.key, id.clone());
            renamed.insert(&s.id, id);
            continue;
        }
        let (ns, kind, name) = split_key(&s.key);
        let candidates = [
            s.id.clone(),
            format!("{cluster}/{}", s.id),
            format!("{cluster}/{ns}/{}/{name}", kind.to_ascii_lowercase()),
        ];
        let Some(id) = candidates
            .iter()
            .find(|c| valid_id(c) && !taken.contains(c.as_str()))
            .cloned()
        else {
            return Err(MergeError::NoFreeId {
                key: s.key.clone(),
                tried: candidates.to_vec(),
            });
        };
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
        if model.traffic == Some(TrafficDefault::Declared) {
            entry.insert("traffic".into(), Value::Null);
        }
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
        appended.push(Value::Object(entry));
        report.added.push(id.clone());
        final_id.insert(&s.key, id.clone());
        renamed.insert(&s.id, id);
    }
    let removed_ids: BTreeSet<String> = removed_idx.iter().map(|&i| id_of(&services[i])).collect();
    report.removed = removed_ids.iter().cloned().collect();
    let kept_ids: BTreeSet<String> = kept_idx.iter().map(|&i| id_of(&services[i])).collect();
    report.kept = kept_ids.iter().cloned().collect();
    for (why, facts) in &unread_kept {
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
    if !imported.complete {
        notes.push(Note {
            code: NoteCode::IncompleteInput,
            service: None,
            message: "part of the input could not be read: nothing was removed".to_string(),
        });
    }
    let mut kept: Vec<Value> = new_services
        .into_iter()
        .enumerate()
        .filter(|(i, _)| !removed_idx.contains(i))
        .map(|(_, v)| v)
        .collect();
    kept.extend(appended);

    // Flows. Ours: both ends imported from this cluster (before or now)
    // and the weight still the importer's unknown.
    let ours_ids: BTreeSet<String> = owned
        .values()
        .map(|&i| id_of(&services[i]))
        .chain(final_id.values().cloned())
        .collect();
    let wanted: BTreeMap<(String, String), &str> = imported
        .flows
        .iter()
        .filter_map(|f| {
            Some((
                (
                    final_id.get(f.from.as_str())?.clone(),
                    final_id.get(f.to.as_str())?.clone(),
                ),
                f.source.as_str(),
            ))
        })
        .collect();
    let end = |f: &Value, k: &str| f.get(k).and_then(Value::as_str).unwrap_or("").to_string();
    let mut present: BTreeSet<(String, String)> = BTreeSet::new();
    let mut new_flows = Vec::with_capacity(flows.len());
    for f in flows {
        let pair = (end(&f, "from"), end(&f, "to"));
        if removed_ids.contains(&pair.0) || removed_ids.contains(&pair.1) {
            report.flows_removed.push(FlowRef {
                from: pair.0,
                to: pair.1,
            });
            continue;
        }
        // A flow of a kept service is kept too: its edges (and the edges
        // to it) were not read.
        let ours = imported.complete
            && !kept_ids.contains(&pair.0)
            && !kept_ids.contains(&pair.1)
            && ours_ids.contains(&pair.0)
            && ours_ids.contains(&pair.1)
            && import_owned_fact(f.get("weight"), importer)
            && import_owned_fact(f.get("mb_s"), importer);
        if ours {
            match wanted.get(&pair) {
                None => {
                    report.flows_removed.push(FlowRef {
                        from: pair.0,
                        to: pair.1,
                    });
                    continue;
                }
                Some(&src) => {
                    let current = f
                        .get("weight")
                        .and_then(|w| w.get("source"))
                        .and_then(Value::as_str);
                    if current != Some(src) {
                        let mut f = f;
                        f["weight"] = unknown_fact(src);
                        f["mb_s"] = unknown_fact(src);
                        report.flows_updated.push(FlowRef {
                            from: pair.0.clone(),
                            to: pair.1.clone(),
                        });
                        present.insert(pair);
                        new_flows.push(f);
                        continue;
                    }
                }
            }
        }
        present.insert(pair);
        new_flows.push(f);
    }
    for ((from, to), src) in &wanted {
        if present.contains(&(from.clone(), to.clone())) {
            continue;
        }
        new_flows.push(json!({
            "from": from,
            "to": to,
            "weight": unknown_fact(src),
            "mb_s": unknown_fact(src),
        }));
        report.flows_added.push(FlowRef {
            from: from.clone(),
            to: to.clone(),
        });
    }
    // What the estate holds now, for the facts left alone.
    let kept_values: BTreeMap<&str, &Value> = kept
        .iter()
        .filter_map(|v| Some((v.get("id")?.as_str()?, v)))
        .collect();
    report.services = imported
        .services
        .iter()
        .map(|s| {
            let id = final_id[s.key.as_str()].clone();
            let entry = kept_values.get(id.as_str());
            let mut summary = ServiceSummary {
                id,
                cpu: s.cpu,
                memory_gib: s.memory_gib,
                data_gb: s.data_gb,
                pinned: s.pinned,
                local_volumes: s.local_volumes,
                unknown: Vec::new(),
            };
            // The facts not read are what the estate holds now: kept from
            // an earlier import, or unknown.
            if let Some(e) = entry {
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
            }
            summary
        })
        .collect();
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
                renamed
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

    top.insert("services".into(), Value::Array(kept));
    top.insert("flows".into(), Value::Array(new_flows));
    let merged = berth_engine::load(&out.to_string(), Format::Json)
        .map_err(|e| MergeError::Conflict(without_lines(e)))?;
    if let Some(note) = traffic_note(&merged, &report.services) {
        report.notes.push(note);
    }
    if report.is_noop() {
        return Ok((estate.clone(), report));
    }
    Ok((out, report))
}

/// The imported services whose traffic nothing has observed, said once
/// for the whole import: how many got no call edge from the input (their
/// advice would otherwise rest on a hidden zero) and what would observe
/// them. `None` when every imported service's traffic is observed or
/// declared.
fn traffic_note(merged: &berth_engine::Estate, imported: &[ServiceSummary]) -> Option<Note> {
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
const FEW_EDGES_PER_SERVICE: f64 = 0.5;
/// Fewer services than this say too little for a ratio to mean much.
const FEW_EDGES_MIN_SERVICES: usize = 4;

/// When the input gave few call edges for many services: how few, that
/// manifests do not show every call, and where the flows will come from.
fn few_edges(merged: &berth_engine::Estate, imported: &[ServiceSummary]) -> Option<String> {
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
fn without_lines(errors: Vec<EstateError>) -> Vec<EstateError> {
    errors
        .into_iter()
        .map(|e| EstateError { line: None, ..e })
        .collect()
}

/// What an unknown owner is written as (the estate requires an owner).
pub const UNKNOWN_OWNER: &str = "unknown";

fn split_key(key: &str) -> (&str, &str, &str) {
    let mut parts = key.splitn(3, '/');
    let ns = parts.next().unwrap_or("");
    let kind = parts.next().unwrap_or("");
    let name = parts.next().unwrap_or("");
    (ns, kind, name)
}

/// The estate's id rule: 1–128 characters, no whitespace or control
/// characters (`docs/estate-format.md`).
fn valid_id(s: &str) -> bool {
    !s.is_empty()
        && s.chars().count() <= 128
        && !s.chars().any(|c| c.is_whitespace() || c.is_control())
}

/// The estate fields of an import that may be unread
/// ([`ImportedService::unread`]).
pub const DATA_GB: &str = "data_gb";
pub const LOCAL_VOLUMES: &str = "constraints.local_volumes";

/// A fact that may be unknown as the estate file writes it: `{"unknown":
/// why}` when `why` is given, else the value read.
fn told(why: Option<&String>, value: Value) -> Value {
    match why {
        Some(why) => json!({ "unknown": why }),
        None => value,
    }
}

/// `data_gb and constraints.local_volumes` and why, for a note.
fn unread_words(s: &ImportedService) -> (String, String) {
    let fields: Vec<&str> = s.unread.keys().map(String::as_str).collect();
    let mut why: Vec<&str> = s.unread.values().map(String::as_str).collect();
    why.dedup();
    (fields.join(" and "), why.join("; "))
}

/// Note, on an existing entry, each fact the import could not read and
/// so left as it was (its value, and the entry's source, untouched).
fn left_alone(
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
fn update_entry(entry: &mut Map<String, Value>, s: &ImportedService, cluster: &str) -> Vec<String> {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn owned_keys_are_read_from_the_right() {
        fn k<'a>(s: &'a str, c: &str) -> Option<&'a str> {
            owned_key(s, "kubernetes", c, KEY_PARTS)
        }
        assert_eq!(
            k("kubernetes:c-1/shop/Deployment/cart", "c-1"),
            Some("shop/Deployment/cart")
        );
        // A cluster id with slashes in it.
        assert_eq!(
            k("kubernetes:eu/c-1/shop/Deployment/cart", "eu/c-1"),
            Some("shop/Deployment/cart")
        );
        assert_eq!(k("kubernetes:eu/c-1/shop/Deployment/cart", "c-1"), None);
        assert_eq!(k("kubernetes:c-1/shop/Deployment/cart", "c-2"), None);
        assert_eq!(k("file", "c-1"), None);
        assert_eq!(k("kubernetes:c-1/cart", "c-1"), None);
        assert_eq!(k("mesh:c-1/shop/Deployment/cart", "c-1"), None);
    }
}
