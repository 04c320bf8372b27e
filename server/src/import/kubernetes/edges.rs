//! Call edges between workloads, from the addresses their variables
//! hold, and the ids the services get.

use super::*;

/// Workloads in `ns` whose pod labels include every pair of `selector`.
pub(super) fn selected<'w>(
    workloads: &'w [Workload<'w>],
    ns: &str,
    selector: &BTreeMap<String, String>,
) -> Vec<&'w Workload<'w>> {
    if selector.is_empty() {
        return Vec::new();
    }
    workloads
        .iter()
        .filter(|w| {
            w.obj.ns() == ns && selector.iter().all(|(k, v)| w.pod_labels.get(k) == Some(v))
        })
        .collect()
}

/// What the import could not read, so that a note about an address never
/// says "no flow" where the merge keeps one.
#[derive(Default)]
pub(super) struct Unread<'a> {
    /// False when part of the input could not be read at all: the merge
    /// then removes no flow.
    pub(super) complete: bool,
    /// Workloads skipped, with their pod labels as written: the merge
    /// keeps their entries and every flow touching them.
    pub(super) workloads: Vec<(&'a Obj, BTreeMap<String, String>)>,
    /// Services skipped, by (namespace, name).
    pub(super) services: std::collections::BTreeSet<(String, String)>,
}

impl Unread<'_> {
    /// The pod labels of a skipped workload, read leniently.
    pub(super) fn labels_of(o: &Obj) -> BTreeMap<String, String> {
        let at = if o.kind == "Pod" {
            "/metadata/labels"
        } else {
            "/spec/template/metadata/labels"
        };
        o.value
            .pointer(at)
            .and_then(Value::as_object)
            .into_iter()
            .flatten()
            .filter_map(|(k, v)| Some((k.to_string(), v.as_str()?.to_string())))
            .collect()
    }

    /// Why an address names nothing imported, with what becomes of flows.
    pub(super) fn why_nothing(&self, index: &Index, host: &str, host_ns: &str) -> String {
        let key = (host_ns.to_string(), host.to_string());
        let skipped = match index.services.get(&key) {
            Some(selector) => self.workloads.iter().find(|(o, labels)| {
                o.ns() == host_ns
                    && !selector.is_empty()
                    && selector.iter().all(|(k, v)| labels.get(k) == Some(v))
            }),
            None => self
                .workloads
                .iter()
                .find(|(o, _)| o.ns() == host_ns && o.name == host),
        };
        if let Some((o, _)) = skipped {
            return format!(
                "{} could not be read (see Skipped): its flows are kept as an earlier import wrote them",
                o.label()
            );
        }
        if self.services.contains(&key) {
            return format!("Service {host_ns}/{host} could not be read (see Skipped); no flow");
        }
        let what = if index.services.contains_key(&key) {
            format!("Service {host_ns}/{host} selects no workload")
        } else {
            format!("{host} (namespace {host_ns}) is neither a Service nor a workload")
        };
        if self.complete {
            format!("{what} in the input; no flow")
        } else {
            format!(
                "{what} in what could be read; part of the input could not be read, so the flows an earlier import wrote are kept"
            )
        }
    }
}

/// Flows from every workload's address variables, and notes for
/// addresses that name nothing in the input and references that could
/// not be resolved.
pub(super) fn edges(
    workloads: &[Workload<'_>],
    index: &Index,
    unread: &Unread,
) -> (Vec<ImportedFlow>, Vec<(usize, NoteCode, String)>) {
    let mut flows: BTreeMap<(String, String), String> = BTreeMap::new();
    let mut notes = Vec::new();
    for (wi, w) in workloads.iter().enumerate() {
        let ns = w.obj.ns();
        for var in env_vars(w, index) {
            if !looks_like_address(&var.name, &var.value) {
                continue;
            }
            if !var.unresolved.is_empty() {
                notes.push((
                    wi,
                    NoteCode::UnresolvedAddress,
                    format!("{}={}: {}", var.name, var.value, var.unresolved.join("; ")),
                ));
            }
            for (host, host_ns) in hosts(&var.value, ns) {
                let targets: Vec<&Workload<'_>> =
                    match index.services.get(&(host_ns.clone(), host.clone())) {
                        Some(selector) => selected(workloads, &host_ns, selector),
                        None => workloads
                            .iter()
                            .filter(|t| t.obj.ns() == host_ns && t.obj.name == host)
                            .collect(),
                    };
                if targets.is_empty() {
                    notes.push((
                        wi,
                        NoteCode::UnresolvedAddress,
                        format!(
                            "{}={}: {}",
                            var.name,
                            var.value,
                            unread.why_nothing(index, &host, &host_ns)
                        ),
                    ));
                    continue;
                }
                for t in targets {
                    if t.service.key == w.service.key {
                        continue;
                    }
                    flows
                        .entry((w.service.key.clone(), t.service.key.clone()))
                        .or_insert_with(|| format!("{IMPORTER}:env/{}", var.name));
                }
            }
        }
    }
    let flows = flows
        .into_iter()
        .map(|((from, to), source)| ImportedFlow { from, to, source })
        .collect();
    (flows, notes)
}

// ---------------------------------------------------------------------------
// Ids.

/// Ids for the workloads, in order: the name when no other workload in
/// the input has it; else `namespace/name`; else `namespace/kind/name`
/// (kind in lower case).
pub(super) fn ids(workloads: &[Workload<'_>]) -> Vec<String> {
    let mut by_name: BTreeMap<&str, Vec<usize>> = BTreeMap::new();
    for (i, w) in workloads.iter().enumerate() {
        by_name.entry(&w.obj.name).or_default().push(i);
    }
    let mut out = vec![String::new(); workloads.len()];
    for group in by_name.values() {
        for &i in group {
            let o = &workloads[i].obj;
            out[i] = if group.len() == 1 {
                o.name.clone()
            } else if group
                .iter()
                .filter(|&&j| workloads[j].obj.ns() == o.ns())
                .count()
                == 1
            {
                format!("{}/{}", o.ns(), o.name)
            } else {
                format!("{}/{}/{}", o.ns(), o.kind.to_ascii_lowercase(), o.name)
            };
        }
    }
    out
}
