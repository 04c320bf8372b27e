//! The plan as Kubernetes manifests for the multi-cluster controllers that
//! carry it out: Karmada `PropagationPolicy`s and Open Cluster Management
//! `ManifestWork`s, written as YAML by a small emitter of our own.

use super::*;

// ---- manifests ----------------------------------------------------------

/// Label every manifest carries.
pub const MANAGED_BY: (&str, &str) = ("app.kubernetes.io/managed-by", "berth");
/// Prefix of the annotations that say which plan wrote a manifest.
pub const ANNOTATION_PREFIX: &str = "berth.dev/";

/// A manifest as a tree, members in the order written. Manifests are
/// built as this rather than through a serialiser so that their bytes
/// depend on nothing but this file: member order is the order written
/// here, and every string is double-quoted, so no YAML reader (1.1 or
/// 1.2) takes a time, a digest of digits or a `+12.4` for anything but
/// text.
#[derive(Clone, Debug)]
pub(super) enum Node {
    Map(Vec<(String, Node)>),
    List(Vec<Node>),
    Str(String),
    Int(i64),
}

pub(super) fn map<K: Into<String>>(members: Vec<(K, Node)>) -> Node {
    Node::Map(members.into_iter().map(|(k, v)| (k.into(), v)).collect())
}

pub(super) fn text(s: impl Into<String>) -> Node {
    Node::Str(s.into())
}

pub(super) fn strings(m: &BTreeMap<String, String>) -> Node {
    Node::Map(
        m.iter()
            .map(|(k, v)| (k.clone(), text(v.clone())))
            .collect(),
    )
}

/// A double-quoted YAML scalar: JSON's string escapes are YAML's.
pub(super) fn quoted(s: &str) -> String {
    serde_json::to_string(s).expect("strings serialise")
}

/// A key written plain when it is a Kubernetes-style name (letters,
/// digits, `-`, `.`, `_`, `/`, starting with a letter), else quoted.
pub(super) fn key(k: &str) -> String {
    let plain = k.chars().next().is_some_and(|c| c.is_ascii_alphabetic())
        && k.chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '.' | '_' | '/'));
    if plain {
        k.to_string()
    } else {
        quoted(k)
    }
}

/// Block-style YAML of a map at `indent`.
pub(super) fn emit(out: &mut String, node: &Node, indent: usize) {
    let pad = " ".repeat(indent);
    match node {
        Node::Map(members) => {
            for (k, v) in members {
                match v {
                    Node::Map(m) if !m.is_empty() => {
                        let _ = writeln!(out, "{pad}{}:", key(k));
                        emit(out, v, indent + 2);
                    }
                    Node::List(l) if !l.is_empty() => {
                        let _ = writeln!(out, "{pad}{}:", key(k));
                        emit(out, v, indent);
                    }
                    _ => {
                        let _ = writeln!(out, "{pad}{}: {}", key(k), scalar(v));
                    }
                }
            }
        }
        Node::List(items) => {
            for item in items {
                match item {
                    Node::Map(m) if !m.is_empty() => {
                        // `- first: …` then the other members under it.
                        let mut first = String::new();
                        emit(&mut first, item, indent + 2);
                        let _ = write!(out, "{pad}- {}", &first[indent + 2..]);
                    }
                    Node::List(l) if !l.is_empty() => {
                        let _ = writeln!(out, "{pad}-");
                        emit(out, item, indent + 2);
                    }
                    _ => {
                        let _ = writeln!(out, "{pad}- {}", scalar(item));
                    }
                }
            }
        }
        _ => {
            let _ = writeln!(out, "{pad}{}", scalar(node));
        }
    }
}

pub(super) fn scalar(node: &Node) -> String {
    match node {
        Node::Str(s) => quoted(s),
        Node::Int(i) => i.to_string(),
        Node::Map(_) => "{}".into(),
        Node::List(_) => "[]".into(),
    }
}

/// The label every Open Cluster Management `ManagedCluster` carries with
/// its own name (set by the registration agent).
pub const OCM_NAME_LABEL: &str = "name";

/// One moved copy of a workload, as its manifest names it.
pub(super) struct Moved<'a> {
    service: &'a str,
    from: usize,
    to: usize,
    gain: f64,
    confidence: Class,
}

/// One workload of the plan and what its manifest needs: the clusters it
/// runs in after the plan and the copies the plan moves.
pub(super) struct Target<'a> {
    workload: &'a Workload,
    api_version: String,
    /// Cluster indices, ascending, each once.
    clusters: Vec<usize>,
    /// Its copies the plan moves, in service id order.
    moved: Vec<Moved<'a>>,
    /// Every copy after the plan: `frontend on c-3, c-2/frontend on c-2`.
    copies: String,
}

/// `service "a"` or `services "a", "b"`: who a manifest problem is about.
pub(super) fn who(services: &[&str]) -> String {
    let quoted: Vec<String> = services.iter().map(|s| format!("{s:?}")).collect();
    if quoted.len() == 1 {
        format!("service {}", quoted[0])
    } else {
        format!("services {}", quoted.join(", "))
    }
}

/// Each workload the plan changes once ([`Plan::workloads`]), in that
/// order: the clusters every copy of it runs in after the plan, and the
/// copies that move (each at its last destination; a scenario may move a
/// service twice, and one that ends where it started moves nothing). Every
/// name a manifest needs is checked, every problem reported with the
/// service or cluster and the field; so is a moved service that names no
/// workload, and two workloads whose manifests would share one name.
pub(super) fn targets<'a>(
    estate: &Estate,
    p: &'a Plan,
    controller: &str,
    cluster_name: impl Fn(&crate::estate::Cluster) -> (&str, &'static str),
) -> Result<Vec<Target<'a>>, Vec<PlanError>> {
    let mut last: BTreeMap<&str, &PlanMove> = BTreeMap::new();
    for m in &p.moves {
        last.insert(&m.service, m);
    }
    let cluster = |id: &str| estate.cluster_index(id).expect("planned cluster");
    let mut errors = Vec::new();
    // Every cluster a manifest places a workload on (the destinations, and
    // where the copies that stay run) is named in it, by the controller's
    // name for it; the clusters left are only named in annotations, where
    // any text will do.
    let home = |service: &str| {
        let s = estate.service_index(service).expect("planned service");
        estate.services[s].cluster
    };
    let placed: std::collections::BTreeSet<usize> = last
        .iter()
        .map(|(service, m)| (home(service), cluster(&m.to)))
        .filter(|(from, to)| from != to)
        .map(|(_, to)| to)
        .chain(
            p.workloads
                .iter()
                .flat_map(|w| w.clusters.iter().map(|c| cluster(c))),
        )
        .collect();
    for c in placed {
        let cluster = &estate.clusters[c];
        let (name, field) = cluster_name(cluster);
        if let Some(problem) = crate::k8s::label_problem(name) {
            errors.push(error(
                "estate",
                String::new(),
                format!(
                    "cluster {:?}: {problem}; a {controller} manifest names clusters by it: set `{field}` on the cluster to its name in {controller}",
                    cluster.id
                ),
            ));
        }
    }
    // A moved service the estate names no workload for has no manifest.
    for (service, m) in &last {
        let copy = p
            .workloads
            .iter()
            .flat_map(|w| &w.copies)
            .find(|c| c.service == *service);
        if home(service) != cluster(&m.to) && copy.is_none() {
            errors.push(error(
                "estate",
                String::new(),
                format!(
                    "service {service:?}: a {controller} manifest selects the Kubernetes object the service is, and the estate does not say which: set `workload` ({{\"kind\", \"namespace\", \"name\"}}) on the service, or import it with `berth import kubernetes`"
                ),
            ));
        }
    }
    let mut out = Vec::new();
    let mut names: BTreeMap<(String, String), usize> = BTreeMap::new();
    for (i, pw) in p.workloads.iter().enumerate() {
        let workload = &pw.workload;
        let moved: Vec<Moved> = pw
            .copies
            .iter()
            .filter(|c| c.from != c.to)
            .map(|c| {
                let m = last[c.service.as_str()];
                Moved {
                    service: &c.service,
                    from: cluster(&c.from),
                    to: cluster(&c.to),
                    gain: m.gain,
                    confidence: m.confidence,
                }
            })
            .collect();
        let services: Vec<&str> = moved.iter().map(|m| m.service).collect();
        let clusters: Vec<usize> = pw.clusters.iter().map(|c| cluster(c)).collect();
        let Some(api_version) = workload.api_version().map(str::to_string) else {
            errors.push(error(
                "estate",
                String::new(),
                format!(
                    "{}: workload kind {:?} has no default API version: set `workload.api_version`",
                    who(&services),
                    workload.kind
                ),
            ));
            continue;
        };
        let object = object_name(workload);
        let problems = workload_problems(workload, &object, &services);
        let mut ok = problems.is_empty();
        errors.extend(problems);
        // One name, one object: two workloads whose manifests would share
        // a name (kinds alike but for case, or one kind in two API groups)
        // would replace each other when applied.
        if ok {
            if let Some(&j) = names.get(&(workload.namespace.clone(), object.clone())) {
                ok = false;
                let first = &p.workloads[j];
                errors.push(error(
                    "estate",
                    String::new(),
                    format!(
                        "{}: workload {} ({}) and workload {} ({}) would both be written as {controller} manifests named {}/{object}, and the later would replace the earlier: set `workload` on the services so that each names its own object",
                        who(&services),
                        crate::copies::words(workload),
                        api_version,
                        crate::copies::words(&first.workload),
                        first.workload.api_version().unwrap_or("no API version"),
                        workload.namespace
                    ),
                ));
            } else {
                names.insert((workload.namespace.clone(), object), i);
            }
        }
        if ok {
            let copies: Vec<String> = pw
                .copies
                .iter()
                .map(|c| format!("{} on {}", c.service, c.to))
                .collect();
            out.push(Target {
                workload,
                api_version,
                clusters,
                moved,
                copies: copies.join(", "),
            });
        }
    }
    if errors.is_empty() {
        Ok(out)
    } else {
        Err(errors)
    }
}

/// What keeps a workload from having a manifest, where the loader did not
/// check it already (a source-derived workload): a kind, namespace or name
/// Kubernetes refuses, or else a manifest name (`object`) too long.
fn workload_problems(workload: &Workload, object: &str, services: &[&str]) -> Vec<PlanError> {
    let mut errors = Vec::new();
    let problems = [
        ("kind", crate::k8s::kind_problem(&workload.kind)),
        ("namespace", crate::k8s::label_problem(&workload.namespace)),
        ("name", crate::k8s::subdomain_problem(&workload.name)),
    ];
    for (field, problem) in problems {
        if let Some(problem) = problem {
            errors.push(error(
                "estate",
                String::new(),
                format!("{}: workload {field}: {problem}", who(services)),
            ));
        }
    }
    if errors.is_empty() && crate::k8s::subdomain_problem(object).is_some() {
        errors.push(error(
            "estate",
            String::new(),
            format!(
                "{}: the manifest name {object:?} would be longer than 253 characters: shorten the workload name",
                who(services)
            ),
        ));
    }
    errors
}

/// `berth-<kind>-<name>`, kind in lower case: unique per workload in its
/// namespace.
pub(super) fn object_name(w: &Workload) -> String {
    format!("berth-{}-{}", w.kind.to_ascii_lowercase(), w.name)
}

pub(super) fn metadata(
    p: &Plan,
    estate: &Estate,
    t: &Target,
    cluster_name: &dyn Fn(usize) -> String,
    extra: &[(&str, String)],
) -> Node {
    let a = |k: &str| format!("{ANNOTATION_PREFIX}{k}");
    // One entry per moved copy, in the same order in each annotation.
    let each = |f: &dyn Fn(&Moved) -> String, sep: &str| -> String {
        t.moved.iter().map(f).collect::<Vec<_>>().join(sep)
    };
    let mut annotations = BTreeMap::from([
        (a("estate"), p.estate.clone()),
        (a("estate-version"), p.estate_version.clone()),
        (a("policy-digest"), p.policy_digest.clone()),
        (a("evaluated-at"), p.now.clone()),
        (a("service"), each(&|m| m.service.to_string(), ", ")),
        (
            a("move"),
            each(
                &|m| {
                    format!(
                        "{} -> {} ({} -> {})",
                        estate.clusters[m.from].id,
                        estate.clusters[m.to].id,
                        cluster_name(m.from),
                        cluster_name(m.to)
                    )
                },
                "; ",
            ),
        ),
        (a("gain"), each(&|m| signed(m.gain), "; ")),
        (
            a("confidence"),
            each(&|m| m.confidence.as_str().to_string(), "; "),
        ),
        (a("copies"), t.copies.clone()),
    ]);
    for (k, v) in extra {
        annotations.insert(a(k), v.clone());
    }
    map(vec![
        ("name", text(object_name(t.workload))),
        ("namespace", text(t.workload.namespace.clone())),
        ("labels", map(vec![(MANAGED_BY.0, text(MANAGED_BY.1))])),
        ("annotations", strings(&annotations)),
    ])
}

pub(super) fn selector(t: &Target) -> Node {
    map(vec![
        ("apiVersion", text(t.api_version.clone())),
        ("kind", text(t.workload.kind.clone())),
        ("namespace", text(t.workload.namespace.clone())),
        ("name", text(t.workload.name.clone())),
    ])
}

pub(super) fn document(api_version: &str, kind: &str, metadata: Node, spec: Node) -> Node {
    map(vec![
        ("apiVersion", text(api_version)),
        ("kind", text(kind)),
        ("metadata", metadata),
        ("spec", spec),
    ])
}

pub(super) fn yaml_docs(docs: &[Node], p: &Plan, controller: &str) -> String {
    let mut out = format!(
        "# {controller} manifests written by Berth for estate {}, version {}, policy {}, at {}.\n# Apply them where {controller} runs; Berth moves nothing itself.\n",
        quoted(&p.estate), p.estate_version, p.policy_digest, p.now
    );
    for d in docs {
        out.push_str("---\n");
        emit(&mut out, d, 0);
    }
    out
}

pub(super) fn names(v: Vec<String>) -> Node {
    Node::List(v.into_iter().map(text).collect())
}

/// Karmada manifests: per workload the plan changes, one
/// `PropagationPolicy` that places its template on every cluster a copy
/// of it runs in after the plan (cluster affinity by name: the copies that
/// stay and the destinations), and one `OverridePolicy` that annotates the
/// workload on each destination with the cluster(s) its copy came from and
/// the plan, so whoever looks at the member cluster sees why it is there.
/// Multi-document YAML.
pub fn karmada(estate: &Estate, p: &Plan) -> Result<String, Vec<PlanError>> {
    let name = |c: usize| estate.clusters[c].karmada_name().to_string();
    let targets = targets(estate, p, "Karmada", |c| {
        (c.karmada_name(), "karmada_cluster")
    })?;
    let mut docs = Vec::new();
    for t in &targets {
        docs.push(document(
            "policy.karmada.io/v1alpha1",
            "PropagationPolicy",
            metadata(p, estate, t, &name, &[]),
            map(vec![
                ("resourceSelectors", Node::List(vec![selector(t)])),
                (
                    "placement",
                    map(vec![(
                        "clusterAffinity",
                        map(vec![(
                            "clusterNames",
                            names(t.clusters.iter().map(|&c| name(c)).collect()),
                        )]),
                    )]),
                ),
            ]),
        ));
        // One rule per destination, in cluster id order; two copies that
        // land on one cluster are one object there, moved from both.
        let mut from: BTreeMap<usize, Vec<usize>> = BTreeMap::new();
        for m in &t.moved {
            let left = from.entry(m.to).or_default();
            if !left.contains(&m.from) {
                left.push(m.from);
            }
        }
        let rules: Vec<Node> = from
            .into_iter()
            .map(|(to, mut left)| {
                left.sort_unstable();
                let left: Vec<String> = left.into_iter().map(name).collect();
                let value = BTreeMap::from([
                    (format!("{ANNOTATION_PREFIX}moved-from"), left.join(", ")),
                    (
                        format!("{ANNOTATION_PREFIX}plan"),
                        format!("{}@{}", p.estate_version, p.policy_digest),
                    ),
                ]);
                map(vec![
                    (
                        "targetCluster",
                        map(vec![("clusterNames", names(vec![name(to)]))]),
                    ),
                    (
                        "overriders",
                        map(vec![(
                            "annotationsOverrider",
                            Node::List(vec![map(vec![
                                ("operator", text("add")),
                                ("value", strings(&value)),
                            ])]),
                        )]),
                    ),
                ])
            })
            .collect();
        docs.push(document(
            "policy.karmada.io/v1alpha1",
            "OverridePolicy",
            metadata(p, estate, t, &name, &[]),
            map(vec![
                ("resourceSelectors", Node::List(vec![selector(t)])),
                ("overrideRules", Node::List(rules)),
            ]),
        ));
    }
    Ok(yaml_docs(&docs, p, "Karmada"))
}

/// Open Cluster Management manifests: per workload the plan changes, one
/// `Placement` (in the workload's namespace, which must be bound to a
/// cluster set holding those clusters) that selects exactly the clusters
/// a copy of it runs in after the plan, by their `name` label, as many as
/// there are. Multi-document YAML.
pub fn ocm(estate: &Estate, p: &Plan) -> Result<String, Vec<PlanError>> {
    let name = |c: usize| estate.clusters[c].ocm_name().to_string();
    let targets = targets(estate, p, "Open Cluster Management", |c| {
        (c.ocm_name(), "ocm_cluster")
    })?;
    let docs: Vec<Node> = targets
        .iter()
        .map(|t| {
            let workload = format!(
                "{} {} {}/{}",
                t.api_version, t.workload.kind, t.workload.namespace, t.workload.name
            );
            let selector = map(vec![(
                "labelSelector",
                map(vec![(
                    "matchExpressions",
                    Node::List(vec![map(vec![
                        ("key", text(OCM_NAME_LABEL)),
                        ("operator", text("In")),
                        (
                            "values",
                            names(t.clusters.iter().map(|&c| name(c)).collect()),
                        ),
                    ])]),
                )]),
            )]);
            document(
                "cluster.open-cluster-management.io/v1beta1",
                "Placement",
                metadata(p, estate, t, &name, &[("workload", workload)]),
                map(vec![
                    ("numberOfClusters", Node::Int(t.clusters.len() as i64)),
                    (
                        "predicates",
                        Node::List(vec![map(vec![("requiredClusterSelector", selector)])]),
                    ),
                ]),
            )
        })
        .collect();
    Ok(yaml_docs(&docs, p, "Open Cluster Management"))
}
