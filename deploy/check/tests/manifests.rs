//! The deployment files under `deploy/`, checked as Kubernetes and Docker
//! would read them, and held to what Berth needs.
//!
//! - Every manifest document is deserialised into its typed `k8s-openapi`
//!   object. `k8s-openapi` ignores fields it does not know, so the typed
//!   object is serialised back and every key of the original must still be
//!   there: a misspelt field (`readinessProbes`) fails.
//! - Every `kustomization.yaml` lists exactly the manifests beside it (the
//!   `*.example.yaml` Secrets excepted, which must never be listed).
//! - The server, agent and PostgreSQL overlay are checked field by field;
//!   the Dockerfile against the workspace's Cargo.toml and Cargo.lock.
//! - `each_check_catches_its_breakage` breaks a copy of the real files one
//!   field at a time and requires the matching check to name it, so no
//!   check can silently pass everything.
//! - With `kubectl` on the path, each kustomization is rendered
//!   (`kubectl kustomize`) and the result is checked too
//!   (BERTH_REQUIRE_KUBECTL=1 makes a missing kubectl a failure).
//!
//! Every message names the file (or the rendered directory), the object
//! and the field.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Display;
use std::path::{Path, PathBuf};
use std::process::Command;

use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::core::v1::{
    ConfigMap, Container, Namespace, PersistentVolumeClaim, PodSpec, Probe, Secret, Service,
    ServiceAccount, Volume,
};
use k8s_openapi::api::rbac::v1::{ClusterRole, ClusterRoleBinding};
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
use k8s_openapi::Resource;
use serde::de::DeserializeOwned;
use serde::Serialize;
use serde_json::{json, Value};

// ---------------------------------------------------------------------------
// What the deployment must agree on.

const NAMESPACE: &str = "berth";
const SERVER: &str = "berth";
const SERVER_PORT_NAME: &str = "http";
const SERVER_PORT: i32 = 3000;
const AGENT: &str = "berth-agent";
const AGENT_ROLE: &str = "berth-agent-read";
/// What reading a cluster's workloads and capacity needs, by API group;
/// the agent's ClusterRole may grant no more.
/// (`server/src/kube_source.rs` lists these.)
const AGENT_READS: &[(&str, &[&str])] = &[
    (
        "",
        &[
            "nodes",
            "pods",
            "services",
            "namespaces",
            "replicationcontrollers",
            "configmaps",
            "persistentvolumeclaims",
            "persistentvolumes",
        ],
    ),
    (
        "apps",
        &["deployments", "statefulsets", "daemonsets", "replicasets"],
    ),
    ("storage.k8s.io", &["storageclasses"]),
];
const READ_VERBS: &[&str] = &["get", "list", "watch"];
/// Environment variables that carry secrets: never a literal value.
const SECRET_ENV: &[&str] = &[
    "BERTH_ADMIN_TOKEN",
    "BERTH_SECRET_KEY",
    "BERTH_DATABASE_URL",
    "BERTH_TOKEN",
];

// ---------------------------------------------------------------------------
// Reading the files.

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .canonicalize()
        .expect("the workspace root")
}

/// A path relative to the workspace root, for messages.
fn rel(p: &Path) -> String {
    p.strip_prefix(workspace())
        .unwrap_or(p)
        .to_string_lossy()
        .into_owned()
}

/// One YAML document of a manifest file, as JSON.
#[derive(Clone, Debug)]
struct Doc {
    /// Where it came from: a path relative to the workspace root, or the
    /// `kubectl kustomize` command that rendered it.
    file: String,
    /// 1-based position in its file.
    index: usize,
    raw: Value,
}

impl Doc {
    fn kind(&self) -> &str {
        self.raw["kind"].as_str().unwrap_or("")
    }
    fn name(&self) -> &str {
        self.raw["metadata"]["name"].as_str().unwrap_or("")
    }
    /// A JSON 6902 patch (a list of operations), not an object.
    fn is_json_patch(&self) -> bool {
        self.raw.is_array()
    }
    fn is_example(&self) -> bool {
        self.file.ends_with(".example.yaml")
    }
    fn dir(&self) -> &str {
        self.file.rsplit_once('/').map_or("", |(d, _)| d)
    }
    fn place(&self) -> String {
        if self.is_json_patch() {
            format!("{} (JSON patch)", self.file)
        } else {
            format!("{}: {} {}", self.file, self.kind(), self.name())
        }
    }
}

/// YAML text (possibly several documents) into JSON documents; empty
/// documents are skipped.
fn split_yaml(file: &str, text: &str) -> Result<Vec<Doc>, String> {
    let mut docs = Vec::new();
    for (i, de) in serde_yaml::Deserializer::from_str(text).enumerate() {
        let index = i + 1;
        let yaml = <serde_yaml::Value as serde::Deserialize>::deserialize(de)
            .map_err(|e| format!("{file}: document {index}: not valid YAML: {e}"))?;
        if yaml.is_null() {
            continue;
        }
        let raw = serde_json::to_value(&yaml)
            .map_err(|e| format!("{file}: document {index}: not representable as JSON: {e}"))?;
        docs.push(Doc {
            file: file.to_string(),
            index,
            raw,
        });
    }
    Ok(docs)
}

/// Every `.yaml` file under `dir`, recursively, sorted.
fn yaml_files(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d).unwrap_or_else(|e| panic!("{}: {e}", rel(&d))) {
            let p = entry.unwrap().path();
            if p.is_dir() {
                stack.push(p);
            } else if p.extension().is_some_and(|x| x == "yaml" || x == "yml") {
                out.push(p);
            }
        }
    }
    out.sort();
    out
}

fn is_kustomization(p: &Path) -> bool {
    p.file_name().is_some_and(|n| n == "kustomization.yaml")
}

/// Every manifest document under deploy/kubernetes (not the
/// kustomizations).
fn manifests() -> Vec<Doc> {
    let mut docs = Vec::new();
    let mut errors = Vec::new();
    for p in yaml_files(&workspace().join("deploy/kubernetes")) {
        if is_kustomization(&p) {
            continue;
        }
        let text = std::fs::read_to_string(&p).unwrap();
        match split_yaml(&rel(&p), &text) {
            Ok(d) if d.is_empty() => errors.push(format!("{}: no YAML document", rel(&p))),
            Ok(d) => docs.extend(d),
            Err(e) => errors.push(e),
        }
    }
    assert_none(errors);
    docs
}

fn in_dir(docs: &[Doc], dir: &str) -> Vec<Doc> {
    let dir = format!("deploy/kubernetes/{dir}");
    docs.iter().filter(|d| d.dir() == dir).cloned().collect()
}

fn assert_none(errors: Vec<String>) {
    assert!(
        errors.is_empty(),
        "{} problem(s):\n  {}",
        errors.len(),
        errors.join("\n  ")
    );
}

/// Collected failures, each `place: field: message`.
#[derive(Default)]
struct Report(Vec<String>);

impl Report {
    fn at(&mut self, doc: &Doc, field: &str, msg: impl Display) {
        self.0.push(format!("{}: {field}: {msg}", doc.place()));
    }
    fn file(&mut self, file: &str, field: &str, msg: impl Display) {
        self.0.push(format!("{file}: {field}: {msg}"));
    }
}

/// `Some(x)` as `x`, `None` as "nothing", for messages.
fn show<T: std::fmt::Debug>(v: Option<T>) -> String {
    v.map_or_else(|| "nothing".to_string(), |x| format!("{x:?}"))
}

// ---------------------------------------------------------------------------
// Typed objects, strictly.

const KINDS: &[&str] = &[
    "Namespace",
    "PersistentVolumeClaim",
    "Deployment",
    "Service",
    "ServiceAccount",
    "ClusterRole",
    "ClusterRoleBinding",
    "ConfigMap",
    "Secret",
];
const CLUSTER_SCOPED: &[&str] = &["Namespace", "ClusterRole", "ClusterRoleBinding"];

/// A key appended to a field path: `a.b`, `a["app.kubernetes.io/name"]`.
fn join(at: &str, key: &str) -> String {
    if key.contains(['.', '/', '[', ' ']) {
        format!("{at}[{key:?}]")
    } else if at.is_empty() {
        key.to_string()
    } else {
        format!("{at}.{key}")
    }
}

/// Deserialise a value into `T`; the error names the field.
fn parse_as<T: DeserializeOwned>(v: &Value, what: &str) -> Result<T, String> {
    serde_path_to_error::deserialize(v).map_err(|e| {
        let at = e.path().to_string();
        let at = if at == "." { "(top)".to_string() } else { at };
        format!("{at}: does not parse as {what}: {}", e.inner())
    })
}

/// The document as `T`, its apiVersion checked first.
fn typed<T: Resource + DeserializeOwned>(doc: &Doc) -> Result<T, String> {
    let api = doc.raw["apiVersion"].as_str().unwrap_or("");
    if api != T::API_VERSION {
        return Err(format!(
            "apiVersion: expected {:?} for kind {}, found {api:?}",
            T::API_VERSION,
            T::KIND
        ));
    }
    parse_as(&doc.raw, T::KIND)
}

/// Every key path of `orig` that `back` (the typed object serialised
/// again) lacks: fields the type does not have. In a strategic-merge
/// patch, `$patch`-style directives and nulls (delete this field) are
/// meant and pass.
fn unknown_keys(orig: &Value, back: &Value, at: &str, patch: bool, out: &mut Vec<String>) {
    match (orig, back) {
        (Value::Object(o), Value::Object(b)) => {
            for (k, v) in o {
                let here = join(at, k);
                match b.get(k) {
                    Some(bv) => unknown_keys(v, bv, &here, patch, out),
                    None if patch && (k.starts_with('$') || v.is_null()) => {}
                    None => out.push(here),
                }
            }
        }
        (Value::Array(o), Value::Array(b)) => {
            for (i, v) in o.iter().enumerate() {
                let here = format!("{at}[{i}]");
                match b.get(i) {
                    Some(bv) => unknown_keys(v, bv, &here, patch, out),
                    None => out.push(here),
                }
            }
        }
        _ => {}
    }
}

/// `v` as `T`, reporting a parse error or any field `T` does not have.
fn strict_value<T: DeserializeOwned + Serialize>(
    doc: &Doc,
    at: &str,
    v: &Value,
    what: &str,
    patch: bool,
    r: &mut Report,
) -> Option<T> {
    match parse_as::<T>(v, what) {
        Err(e) => {
            r.at(doc, at, e);
            None
        }
        Ok(t) => {
            let back = serde_json::to_value(&t).expect("a typed object serialises");
            let mut unknown = Vec::new();
            unknown_keys(v, &back, at, patch, &mut unknown);
            for k in unknown {
                r.at(
                    doc,
                    &k,
                    format!("not a field of {what} (misspelt or misplaced?)"),
                );
            }
            Some(t)
        }
    }
}

fn strict<T: Resource + DeserializeOwned + Serialize>(
    doc: &Doc,
    patch: bool,
    r: &mut Report,
) -> bool {
    let api = doc.raw["apiVersion"].as_str().unwrap_or("");
    if api != T::API_VERSION {
        r.at(
            doc,
            "apiVersion",
            format!(
                "expected {:?} for kind {}, found {api:?}",
                T::API_VERSION,
                T::KIND
            ),
        );
        return false;
    }
    strict_value::<T>(doc, "", &doc.raw, T::KIND, patch, r).is_some()
}

/// What a JSON 6902 operation's path puts in place, when it is a whole
/// volume or container of a pod template.
fn json_patch_target(path: &str) -> Option<&'static str> {
    let seg: Vec<&str> = path.split('/').collect();
    let index = |s: &str| s == "-" || (!s.is_empty() && s.bytes().all(|b| b.is_ascii_digit()));
    match seg.as_slice() {
        ["", "spec", "template", "spec", "volumes", i] if index(i) => Some("Volume"),
        ["", "spec", "template", "spec", "containers", i] if index(i) => Some("Container"),
        _ => None,
    }
}

fn check_json_patch(doc: &Doc, r: &mut Report) {
    let ops = doc.raw.as_array().expect("a JSON patch is a list");
    if ops.is_empty() {
        r.at(doc, "(top)", "no operation");
    }
    for (i, op) in ops.iter().enumerate() {
        let at = format!("[{i}]");
        let Some(o) = op.as_object() else {
            r.at(doc, &at, "expected an operation {op, path, …}");
            continue;
        };
        for k in o.keys() {
            if !["op", "path", "value", "from"].contains(&k.as_str()) {
                r.at(doc, &join(&at, k), "not a field of a JSON 6902 operation");
            }
        }
        let name = o.get("op").and_then(Value::as_str).unwrap_or("");
        if !["add", "remove", "replace", "move", "copy", "test"].contains(&name) {
            r.at(
                doc,
                &format!("{at}.op"),
                format!(
                    "expected add, remove, replace, move, copy or test, found {}",
                    show(o.get("op"))
                ),
            );
        }
        let path = o.get("path").and_then(Value::as_str).unwrap_or("");
        if !path.starts_with('/') {
            r.at(doc, &format!("{at}.path"), "expected a JSON pointer, /…");
        }
        let needs_value = matches!(name, "add" | "replace" | "test");
        if needs_value != o.contains_key("value") {
            r.at(
                doc,
                &format!("{at}.value"),
                if needs_value {
                    "missing"
                } else {
                    "not used by this operation"
                },
            );
        }
        if let (Some(v), true) = (o.get("value"), matches!(name, "add" | "replace")) {
            let at = format!("{at}.value");
            match json_patch_target(path) {
                Some("Volume") => {
                    strict_value::<Volume>(doc, &at, v, "Volume", false, r);
                }
                Some("Container") => {
                    strict_value::<Container>(doc, &at, v, "Container", false, r);
                }
                _ => {}
            }
        }
    }
}

/// Every document as its typed object: known kind, matching apiVersion,
/// no unknown field, a name, the namespace `berth` for namespaced
/// objects, and no Secret outside the `*.example.yaml` placeholders.
fn check_types(docs: &[Doc], patches: &BTreeSet<String>) -> Vec<String> {
    let mut r = Report::default();
    for doc in docs {
        if doc.is_json_patch() {
            check_json_patch(doc, &mut r);
            continue;
        }
        if !doc.raw.is_object() {
            r.0.push(format!(
                "{} (document {}): expected a Kubernetes object (a mapping) or a JSON 6902 patch (a list)",
                doc.file, doc.index
            ));
            continue;
        }
        let patch = patches.contains(&doc.file);
        let kind = doc.kind();
        match kind {
            "Namespace" => strict::<Namespace>(doc, patch, &mut r),
            "PersistentVolumeClaim" => strict::<PersistentVolumeClaim>(doc, patch, &mut r),
            "Deployment" => strict::<Deployment>(doc, patch, &mut r),
            "Service" => strict::<Service>(doc, patch, &mut r),
            "ServiceAccount" => strict::<ServiceAccount>(doc, patch, &mut r),
            "ClusterRole" => strict::<ClusterRole>(doc, patch, &mut r),
            "ClusterRoleBinding" => strict::<ClusterRoleBinding>(doc, patch, &mut r),
            "ConfigMap" => strict::<ConfigMap>(doc, patch, &mut r),
            "Secret" => strict::<Secret>(doc, patch, &mut r),
            _ => {
                r.0.push(format!(
                    "{} (document {}): kind: unknown kind {kind:?} (apiVersion {}); this test reads {}",
                    doc.file,
                    doc.index,
                    show(doc.raw["apiVersion"].as_str()),
                    KINDS.join(", ")
                ));
                continue;
            }
        };
        if doc.name().is_empty() {
            r.at(doc, "metadata.name", "missing");
        }
        let ns = doc.raw["metadata"]["namespace"].as_str();
        if CLUSTER_SCOPED.contains(&kind) {
            if ns.is_some() {
                r.at(
                    doc,
                    "metadata.namespace",
                    "a cluster-scoped object has none",
                );
            }
        } else if ns != Some(NAMESPACE) {
            r.at(
                doc,
                "metadata.namespace",
                format!("expected {NAMESPACE:?}, found {}", show(ns)),
            );
        }
        if kind == "Secret" && !doc.is_example() {
            r.at(
                doc,
                "kind",
                "a Secret outside *.example.yaml: real secrets are created with kubectl, never committed or rendered",
            );
        }
    }
    r.0
}

// ---------------------------------------------------------------------------
// Finding objects and their parts.

fn find<'a>(docs: &'a [Doc], kind: &str, name: &str) -> Option<&'a Doc> {
    docs.iter()
        .find(|d| !d.is_json_patch() && d.kind() == kind && d.name() == name)
}

/// The object `kind/name` of a set, typed; reported when missing.
fn need<'a, T: Resource + DeserializeOwned>(
    docs: &'a [Doc],
    name: &str,
    label: &str,
    r: &mut Report,
) -> Option<(&'a Doc, T)> {
    let Some(doc) = find(docs, T::KIND, name) else {
        r.file(label, T::KIND, format!("no {} {name:?}", T::KIND));
        return None;
    };
    match typed::<T>(doc) {
        Ok(t) => Some((doc, t)),
        Err(e) => {
            r.at(doc, "(object)", format!("cannot be checked: {e}"));
            None
        }
    }
}

fn containers_field(c: &Container) -> String {
    format!("spec.template.spec.containers[{}]", c.name)
}

/// The pod spec and the container named `name` of a Deployment.
fn pod_container<'a>(
    r: &mut Report,
    doc: &Doc,
    d: &'a Deployment,
    name: &str,
) -> Option<(&'a PodSpec, &'a Container)> {
    let Some(pod) = d.spec.template.spec.as_ref() else {
        r.at(doc, "spec.template.spec", "missing");
        return None;
    };
    let Some(c) = pod.containers.iter().find(|c| c.name == name) else {
        r.at(
            doc,
            "spec.template.spec.containers",
            format!("no container named {name:?}"),
        );
        return None;
    };
    Some((pod, c))
}

fn env<'a>(c: &'a Container, name: &str) -> Option<&'a k8s_openapi::api::core::v1::EnvVar> {
    c.env
        .as_deref()
        .unwrap_or(&[])
        .iter()
        .find(|e| e.name == name)
}

fn literal_env<'a>(r: &mut Report, doc: &Doc, c: &'a Container, name: &str) -> Option<&'a str> {
    let v = env(c, name).and_then(|e| e.value.as_deref());
    if v.is_none() {
        r.at(
            doc,
            &format!("{}.env[{name}]", containers_field(c)),
            "missing (a literal value expected)",
        );
    }
    v
}

/// The keys an example Secret documents.
fn example_secret_keys(examples: &[Doc], name: &str) -> Option<(String, BTreeSet<String>)> {
    let doc = find(examples, "Secret", name)?;
    let s: Secret = typed(doc).ok()?;
    let mut keys: BTreeSet<String> = s.string_data.unwrap_or_default().into_keys().collect();
    keys.extend(s.data.unwrap_or_default().into_keys());
    Some((doc.file.clone(), keys))
}

/// `var` must come from a Secret's key (never a literal), and that
/// Secret's example file must document the key.
fn secret_ref(r: &mut Report, doc: &Doc, c: &Container, var: &str, examples: &[Doc]) {
    let f = format!("{}.env[{var}]", containers_field(c));
    let Some(e) = env(c, var) else {
        r.at(doc, &f, "missing: expected valueFrom.secretKeyRef");
        return;
    };
    if e.value.is_some() {
        r.at(
            doc,
            &format!("{f}.value"),
            "a secret as a literal value: take it from a Secret (valueFrom.secretKeyRef)",
        );
    }
    let Some(s) = e
        .value_from
        .as_ref()
        .and_then(|v| v.secret_key_ref.as_ref())
    else {
        r.at(
            doc,
            &format!("{f}.valueFrom.secretKeyRef"),
            "missing: a secret comes from a Secret",
        );
        return;
    };
    match example_secret_keys(examples, &s.name) {
        None => r.at(
            doc,
            &format!("{f}.valueFrom.secretKeyRef.name"),
            format!(
                "no *.example.yaml documents a Secret {:?} (how to create it)",
                s.name
            ),
        ),
        Some((file, keys)) if !keys.contains(&s.key) => r.at(
            doc,
            &format!("{f}.valueFrom.secretKeyRef.key"),
            format!(
                "{:?} is not a key of Secret {:?} as {file} documents it ({keys:?})",
                s.key, s.name
            ),
        ),
        Some(_) => {}
    }
}

/// Secret-looking environment variables of every Deployment (patches
/// included) never hold a literal value.
fn check_secret_env(docs: &[Doc]) -> Vec<String> {
    let mut r = Report::default();
    for doc in docs.iter().filter(|d| d.kind() == "Deployment") {
        let Ok(d) = typed::<Deployment>(doc) else {
            continue;
        };
        let Some(pod) = d.spec.template.spec.as_ref() else {
            continue;
        };
        let all = pod
            .containers
            .iter()
            .chain(pod.init_containers.as_deref().unwrap_or(&[]));
        for c in all {
            for e in c.env.as_deref().unwrap_or(&[]) {
                let n = e.name.to_ascii_uppercase();
                let secretish = SECRET_ENV.contains(&e.name.as_str())
                    || ["TOKEN", "SECRET", "PASSWORD"]
                        .iter()
                        .any(|w| n.contains(w));
                if secretish && e.value.is_some() {
                    r.at(
                        doc,
                        &format!("{}.env[{}].value", containers_field(c), e.name),
                        "a secret as a literal value: take it from a Secret (valueFrom.secretKeyRef)",
                    );
                }
            }
        }
    }
    r.0
}

/// The container port a probe or Service names, when declared.
fn container_port(c: &Container, p: &IntOrString) -> Option<i32> {
    let ports = c.ports.as_deref().unwrap_or(&[]);
    match p {
        IntOrString::String(n) => ports
            .iter()
            .find(|x| x.name.as_deref() == Some(n))
            .map(|x| x.container_port),
        IntOrString::Int(n) => ports
            .iter()
            .find(|x| x.container_port == *n)
            .map(|x| x.container_port),
    }
}

/// `port` names a port the container declares, by name, that is `want`.
fn check_named_port(r: &mut Report, doc: &Doc, c: &Container, field: &str, port: &IntOrString) {
    match port {
        IntOrString::Int(n) => r.at(
            doc,
            field,
            format!("{n}: name the container port ({SERVER_PORT_NAME:?}) instead of its number"),
        ),
        IntOrString::String(n) => match container_port(c, port) {
            None => r.at(
                doc,
                field,
                format!(
                    "{n:?} is not a port container {:?} declares ({})",
                    c.name,
                    declared_ports(c)
                ),
            ),
            Some(p) if n == SERVER_PORT_NAME && p != SERVER_PORT => r.at(
                doc,
                field,
                format!("{n:?} is port {p}, expected {SERVER_PORT}"),
            ),
            Some(_) => {}
        },
    }
}

fn declared_ports(c: &Container) -> String {
    let ports: Vec<String> = c
        .ports
        .as_deref()
        .unwrap_or(&[])
        .iter()
        .map(|p| {
            format!(
                "{}={}",
                p.name.as_deref().unwrap_or("(unnamed)"),
                p.container_port
            )
        })
        .collect();
    if ports.is_empty() {
        "it declares none".into()
    } else {
        ports.join(", ")
    }
}

fn check_probe(
    r: &mut Report,
    doc: &Doc,
    c: &Container,
    which: &str,
    probe: Option<&Probe>,
    path: &str,
) {
    let f = format!("{}.{which}", containers_field(c));
    let Some(h) = probe.and_then(|p| p.http_get.as_ref()) else {
        r.at(
            doc,
            &format!("{f}.httpGet"),
            format!("missing: expected an HTTP GET of {path}"),
        );
        return;
    };
    if h.path.as_deref() != Some(path) {
        r.at(
            doc,
            &format!("{f}.httpGet.path"),
            format!("expected {path:?}, found {}", show(h.path.as_deref())),
        );
    }
    check_named_port(r, doc, c, &format!("{f}.httpGet.port"), &h.port);
}

/// Non-root, no privilege escalation, read-only root, no capabilities,
/// the runtime's seccomp profile.
fn check_hardened(r: &mut Report, doc: &Doc, pod: &PodSpec, c: &Container) {
    let pf = "spec.template.spec.securityContext";
    let cf = format!("{}.securityContext", containers_field(c));
    let psc = pod.security_context.as_ref();
    let csc = c.security_context.as_ref();
    let non_root = csc
        .and_then(|s| s.run_as_non_root)
        .or(psc.and_then(|s| s.run_as_non_root));
    if non_root != Some(true) {
        r.at(
            doc,
            &format!("{pf}.runAsNonRoot"),
            format!("expected true, found {}", show(non_root)),
        );
    }
    let user = csc
        .and_then(|s| s.run_as_user)
        .or(psc.and_then(|s| s.run_as_user));
    if user.is_none_or(|u| u == 0) {
        r.at(
            doc,
            &format!("{pf}.runAsUser"),
            format!("expected a non-zero user id, found {}", show(user)),
        );
    }
    let seccomp = csc
        .and_then(|s| s.seccomp_profile.as_ref())
        .or(psc.and_then(|s| s.seccomp_profile.as_ref()))
        .map(|s| s.type_.as_str());
    if !matches!(seccomp, Some("RuntimeDefault" | "Localhost")) {
        r.at(
            doc,
            &format!("{pf}.seccompProfile.type"),
            format!("expected RuntimeDefault, found {}", show(seccomp)),
        );
    }
    let ape = csc.and_then(|s| s.allow_privilege_escalation);
    if ape != Some(false) {
        r.at(
            doc,
            &format!("{cf}.allowPrivilegeEscalation"),
            format!("expected false, found {}", show(ape)),
        );
    }
    let ro = csc.and_then(|s| s.read_only_root_filesystem);
    if ro != Some(true) {
        r.at(
            doc,
            &format!("{cf}.readOnlyRootFilesystem"),
            format!("expected true, found {}", show(ro)),
        );
    }
    if csc.and_then(|s| s.privileged) == Some(true) {
        r.at(doc, &format!("{cf}.privileged"), "must not be true");
    }
    let caps = csc.and_then(|s| s.capabilities.as_ref());
    let drop = caps.and_then(|c| c.drop.as_deref()).unwrap_or(&[]);
    if !drop.iter().any(|d| d == "ALL") {
        r.at(
            doc,
            &format!("{cf}.capabilities.drop"),
            format!("expected it to contain \"ALL\", found {drop:?}"),
        );
    }
    let add = caps.and_then(|c| c.add.as_deref()).unwrap_or(&[]);
    if !add.is_empty() {
        r.at(
            doc,
            &format!("{cf}.capabilities.add"),
            format!("expected none, found {add:?}"),
        );
    }
}

/// The Deployment's selector picks its own pods.
fn check_selector(r: &mut Report, doc: &Doc, d: &Deployment) {
    let labels = pod_labels(d);
    let want = d.spec.selector.match_labels.clone().unwrap_or_default();
    if want.is_empty() {
        r.at(doc, "spec.selector.matchLabels", "empty");
    }
    for (k, v) in want {
        if labels.get(&k) != Some(&v) {
            r.at(
                doc,
                &format!("spec.selector.matchLabels[{k:?}]"),
                format!("{v:?} is not a label of the pod template ({labels:?})"),
            );
        }
    }
}

fn pod_labels(d: &Deployment) -> BTreeMap<String, String> {
    d.spec
        .template
        .metadata
        .as_ref()
        .and_then(|m| m.labels.clone())
        .unwrap_or_default()
}

/// `--flag value` or `--flag=value` in an argument list.
fn flag<'a>(args: &'a [String], name: &str) -> Option<&'a str> {
    let eq = format!("{name}=");
    args.iter().enumerate().find_map(|(i, a)| {
        if a == name {
            args.get(i + 1).map(String::as_str)
        } else {
            a.strip_prefix(&eq)
        }
    })
}

// ---------------------------------------------------------------------------
// The server.

#[derive(Clone, Copy, PartialEq, Debug)]
enum Storage {
    /// The base: SQLite on a ReadWriteOnce volume, one writer.
    Sqlite,
    /// The postgres overlay as rendered: the database elsewhere.
    Postgres,
}

/// The server's Deployment and Service in `docs` (one directory's files,
/// or one rendered kustomization, labelled `label`).
fn check_server(docs: &[Doc], examples: &[Doc], label: &str, storage: Storage) -> Vec<String> {
    let mut r = Report::default();
    let Some((doc, d)) = need::<Deployment>(docs, SERVER, label, &mut r) else {
        return r.0;
    };
    let Some((pod, c)) = pod_container(&mut r, doc, &d, SERVER) else {
        return r.0;
    };
    let cf = containers_field(c);
    check_selector(&mut r, doc, &d);

    let http = c
        .ports
        .as_deref()
        .unwrap_or(&[])
        .iter()
        .find(|p| p.name.as_deref() == Some(SERVER_PORT_NAME));
    if http.is_none_or(|p| p.container_port != SERVER_PORT) {
        r.at(
            doc,
            &format!("{cf}.ports"),
            format!(
                "expected a port named {SERVER_PORT_NAME:?} on {SERVER_PORT}, found {}",
                declared_ports(c)
            ),
        );
    }
    if c.args.as_deref() != Some(&["serve".to_string()][..]) {
        r.at(
            doc,
            &format!("{cf}.args"),
            format!("expected [\"serve\"], found {}", show(c.args.as_ref())),
        );
    }
    check_probe(
        &mut r,
        doc,
        c,
        "readinessProbe",
        c.readiness_probe.as_ref(),
        "/readyz",
    );
    check_probe(
        &mut r,
        doc,
        c,
        "livenessProbe",
        c.liveness_probe.as_ref(),
        "/healthz",
    );
    if let Some(h) = c.startup_probe.as_ref().and_then(|p| p.http_get.as_ref()) {
        check_named_port(
            &mut r,
            doc,
            c,
            &format!("{cf}.startupProbe.httpGet.port"),
            &h.port,
        );
    }
    check_hardened(&mut r, doc, pod, c);

    if let Some(listen) = literal_env(&mut r, doc, c, "BERTH_LISTEN") {
        let want = format!("0.0.0.0:{SERVER_PORT}");
        if listen != want {
            r.at(
                doc,
                &format!("{cf}.env[BERTH_LISTEN]"),
                format!("expected {want:?} (every interface, the declared port), found {listen:?}"),
            );
        }
    }
    secret_ref(&mut r, doc, c, "BERTH_ADMIN_TOKEN", examples);
    secret_ref(&mut r, doc, c, "BERTH_SECRET_KEY", examples);

    // The data directory: what is mounted there, and from what volume.
    let data_volume = literal_env(&mut r, doc, c, "BERTH_DATA_DIR").and_then(|dir| {
        let mount = c
            .volume_mounts
            .as_deref()
            .unwrap_or(&[])
            .iter()
            .find(|m| m.mount_path == dir);
        let Some(mount) = mount else {
            r.at(
                doc,
                &format!("{cf}.volumeMounts"),
                format!("nothing is mounted at {dir} (BERTH_DATA_DIR), and the root filesystem is read-only"),
            );
            return None;
        };
        let vol = pod
            .volumes
            .as_deref()
            .unwrap_or(&[])
            .iter()
            .find(|v| v.name == mount.name);
        if vol.is_none() {
            r.at(
                doc,
                "spec.template.spec.volumes",
                format!("no volume {:?} (mounted at {dir})", mount.name),
            );
        }
        vol
    });

    let strategy = d.spec.strategy.as_ref().and_then(|s| s.type_.as_deref());
    let replicas = d.spec.replicas.unwrap_or(1);
    match storage {
        Storage::Sqlite => {
            if strategy != Some("Recreate") {
                r.at(
                    doc,
                    "spec.strategy.type",
                    format!(
                        "expected Recreate (SQLite on a ReadWriteOnce volume must never have two writers), found {}",
                        show(strategy)
                    ),
                );
            }
            if replicas != 1 {
                r.at(
                    doc,
                    "spec.replicas",
                    format!("expected 1 (one process owns the SQLite file), found {replicas}"),
                );
            }
            if env(c, "BERTH_DATABASE_URL").is_some() {
                r.at(
                    doc,
                    &format!("{cf}.env[BERTH_DATABASE_URL]"),
                    "set in the SQLite base",
                );
            }
            if let Some(v) = data_volume {
                let vf = format!("spec.template.spec.volumes[{}]", v.name);
                match &v.persistent_volume_claim {
                    None => r.at(
                        doc,
                        &format!("{vf}.persistentVolumeClaim"),
                        "missing: the SQLite data directory must be on a persistent volume",
                    ),
                    Some(pvc) => check_claim(&mut r, doc, docs, &vf, &pvc.claim_name),
                }
            }
        }
        Storage::Postgres => {
            secret_ref(&mut r, doc, c, "BERTH_DATABASE_URL", examples);
            if strategy == Some("Recreate") || replicas < 2 {
                r.at(
                    doc,
                    "spec.strategy.type",
                    format!(
                        "expected RollingUpdate with 2 or more replicas on PostgreSQL, found {} with {replicas}",
                        show(strategy)
                    ),
                );
            }
            if let Some(v) = data_volume.filter(|v| v.persistent_volume_claim.is_some()) {
                r.at(
                    doc,
                    &format!(
                        "spec.template.spec.volumes[{}].persistentVolumeClaim",
                        v.name
                    ),
                    "with PostgreSQL the data directory keeps nothing durable: no claim",
                );
            }
            for pvc in docs.iter().filter(|d| d.kind() == "PersistentVolumeClaim") {
                r.at(
                    pvc,
                    "kind",
                    "the PostgreSQL overlay has no persistent volume",
                );
            }
        }
    }

    if let Some((sdoc, svc)) = need::<Service>(docs, SERVER, label, &mut r) {
        check_service(&mut r, sdoc, &svc, &d, c);
    }
    r.0
}

/// The claim exists, is ReadWriteOnce and asks for storage.
fn check_claim(r: &mut Report, doc: &Doc, docs: &[Doc], vf: &str, name: &str) {
    let Some(pdoc) = find(docs, "PersistentVolumeClaim", name) else {
        r.at(
            doc,
            &format!("{vf}.persistentVolumeClaim.claimName"),
            format!("no PersistentVolumeClaim {name:?} among the manifests"),
        );
        return;
    };
    let Ok(pvc) = typed::<PersistentVolumeClaim>(pdoc) else {
        return;
    };
    let spec = pvc.spec.unwrap_or_default();
    let modes = spec.access_modes.unwrap_or_default();
    if !modes.iter().any(|m| m == "ReadWriteOnce") {
        r.at(
            pdoc,
            "spec.accessModes",
            format!("expected ReadWriteOnce, found {modes:?}"),
        );
    }
    let storage = spec
        .resources
        .and_then(|x| x.requests)
        .and_then(|q| q.get("storage").cloned());
    if storage.is_none() {
        r.at(pdoc, "spec.resources.requests.storage", "missing");
    }
}

/// The Service selects the Deployment's pods and targets a port they
/// declare, by name.
fn check_service(r: &mut Report, doc: &Doc, svc: &Service, d: &Deployment, c: &Container) {
    let spec = svc.spec.clone().unwrap_or_default();
    let labels = pod_labels(d);
    let selector = spec.selector.unwrap_or_default();
    if selector.is_empty() {
        r.at(
            doc,
            "spec.selector",
            "empty: the Service would select nothing",
        );
    }
    for (k, v) in &selector {
        if labels.get(k) != Some(v) {
            r.at(
                doc,
                &format!("spec.selector[{k:?}]"),
                format!(
                    "{v:?} does not match the pod labels of Deployment {} ({labels:?})",
                    SERVER
                ),
            );
        }
    }
    let ports = spec.ports.unwrap_or_default();
    if !ports.iter().any(|p| p.port == 80) {
        r.at(doc, "spec.ports", "expected a port 80");
    }
    for p in &ports {
        let f = format!(
            "spec.ports[{}].targetPort",
            p.name.as_deref().unwrap_or("(unnamed)")
        );
        match &p.target_port {
            None => r.at(doc, &f, "missing: name the container port"),
            Some(t) => check_named_port(r, doc, c, &f, t),
        }
    }
}

// ---------------------------------------------------------------------------
// The agent.

fn check_agent(docs: &[Doc], examples: &[Doc], label: &str) -> Vec<String> {
    let mut r = Report::default();
    let sa = need::<ServiceAccount>(docs, AGENT, label, &mut r);
    if let Some((doc, role)) = need::<ClusterRole>(docs, AGENT_ROLE, label, &mut r) {
        check_read_only_role(&mut r, doc, &role);
    }
    if let (Some((doc, b)), Some((_, sa))) = (
        need::<ClusterRoleBinding>(docs, AGENT_ROLE, label, &mut r),
        &sa,
    ) {
        let rr = &b.role_ref;
        if rr.kind != "ClusterRole"
            || rr.name != AGENT_ROLE
            || rr.api_group.as_deref() != Some("rbac.authorization.k8s.io")
        {
            r.at(
                doc,
                "roleRef",
                format!(
                    "expected ClusterRole {AGENT_ROLE:?} (rbac.authorization.k8s.io), found {} {:?} ({})",
                    rr.kind,
                    rr.name,
                    show(rr.api_group.as_deref())
                ),
            );
        }
        let want_ns = sa.metadata.namespace.as_deref();
        let bound = b.subjects.as_deref().unwrap_or(&[]).iter().any(|s| {
            s.kind == "ServiceAccount" && s.name == AGENT && s.namespace.as_deref() == want_ns
        });
        if !bound {
            r.at(
                doc,
                "subjects",
                format!(
                    "expected ServiceAccount {AGENT:?} in namespace {}, found {:?}",
                    show(want_ns),
                    b.subjects
                        .as_deref()
                        .unwrap_or(&[])
                        .iter()
                        .map(|s| format!("{} {}/{}", s.kind, show(s.namespace.as_deref()), s.name))
                        .collect::<Vec<_>>()
                ),
            );
        }
    }

    let Some((doc, d)) = need::<Deployment>(docs, AGENT, label, &mut r) else {
        return r.0;
    };
    let Some((pod, c)) = pod_container(&mut r, doc, &d, AGENT) else {
        return r.0;
    };
    let cf = containers_field(c);
    check_selector(&mut r, doc, &d);
    check_hardened(&mut r, doc, pod, c);
    if pod.service_account_name.as_deref() != Some(AGENT) {
        r.at(
            doc,
            "spec.template.spec.serviceAccountName",
            format!(
                "expected {AGENT:?} (the account the ClusterRole is bound to), found {}",
                show(pod.service_account_name.as_deref())
            ),
        );
    }
    if pod.automount_service_account_token != Some(true) {
        r.at(
            doc,
            "spec.template.spec.automountServiceAccountToken",
            format!(
                "expected true (the agent reads the API), found {}",
                show(pod.automount_service_account_token)
            ),
        );
    }
    let replicas = d.spec.replicas.unwrap_or(1);
    if replicas != 1 {
        r.at(
            doc,
            "spec.replicas",
            format!("expected 1 (one agent per cluster), found {replicas}"),
        );
    }
    secret_ref(&mut r, doc, c, "BERTH_TOKEN", examples);

    let args = c.args.clone().unwrap_or_default();
    if args.first().map(String::as_str) != Some("agent") {
        r.at(
            doc,
            &format!("{cf}.args"),
            format!("expected the agent command first, found {args:?}"),
        );
    }
    for f in ["--server", "--estate", "--cluster"] {
        if flag(&args, f).is_none_or(str::is_empty) {
            r.at(doc, &format!("{cf}.args"), format!("{f} is missing"));
        }
    }
    if flag(&args, "--token").is_some() {
        r.at(
            doc,
            &format!("{cf}.args"),
            "--token on the command line shows in the process list: use BERTH_TOKEN",
        );
    }
    if let Some(file) = flag(&args, "--capacity-file") {
        check_capacity_file(&mut r, doc, docs, pod, c, file);
    }
    r.0
}

/// get/list/watch only, on what reading workloads and capacity needs.
fn check_read_only_role(r: &mut Report, doc: &Doc, role: &ClusterRole) {
    let rules = role.rules.as_deref().unwrap_or(&[]);
    if rules.is_empty() {
        r.at(doc, "rules", "empty: the agent could read nothing");
    }
    if role.aggregation_rule.is_some() {
        r.at(
            doc,
            "aggregationRule",
            "an aggregated role can grow beyond read-only",
        );
    }
    for (i, rule) in rules.iter().enumerate() {
        let f = format!("rules[{i}]");
        if rule.verbs.is_empty() {
            r.at(doc, &format!("{f}.verbs"), "empty");
        }
        for v in &rule.verbs {
            if !READ_VERBS.contains(&v.as_str()) {
                r.at(
                    doc,
                    &format!("{f}.verbs"),
                    format!(
                        "{v:?} is not read-only (allowed: {})",
                        READ_VERBS.join(", ")
                    ),
                );
            }
        }
        if rule.non_resource_urls.is_some() {
            r.at(doc, &format!("{f}.nonResourceURLs"), "not needed");
        }
        let groups = rule.api_groups.as_deref().unwrap_or(&[]);
        let resources = rule.resources.as_deref().unwrap_or(&[]);
        if groups.is_empty() || resources.is_empty() {
            r.at(doc, &f, "expected apiGroups and resources");
        }
        for g in groups {
            let Some((_, allowed)) = AGENT_READS.iter().find(|(name, _)| name == g) else {
                r.at(
                    doc,
                    &format!("{f}.apiGroups"),
                    format!(
                        "{g:?}{}: not a group the agent reads",
                        if g == "*" { " (a wildcard)" } else { "" }
                    ),
                );
                continue;
            };
            for res in resources {
                if !allowed.contains(&res.as_str()) {
                    r.at(
                        doc,
                        &format!("{f}.resources"),
                        format!(
                            "{res:?}{} in group {g:?}: not something the agent reads (allowed: {})",
                            if res == "*" { " (a wildcard)" } else { "" },
                            allowed.join(", ")
                        ),
                    );
                }
            }
        }
    }
}

/// `--capacity-file` is in a mounted ConfigMap that exists and holds a
/// capacity document the agent accepts.
fn check_capacity_file(
    r: &mut Report,
    doc: &Doc,
    docs: &[Doc],
    pod: &PodSpec,
    c: &Container,
    file: &str,
) {
    let f = format!("{}.args[--capacity-file]", containers_field(c));
    let Some((dir, key)) = file.rsplit_once('/') else {
        r.at(doc, &f, format!("{file:?}: expected an absolute path"));
        return;
    };
    let mount = c
        .volume_mounts
        .as_deref()
        .unwrap_or(&[])
        .iter()
        .find(|m| m.mount_path.trim_end_matches('/') == dir);
    let Some(mount) = mount else {
        r.at(doc, &f, format!("{file}: nothing is mounted at {dir}"));
        return;
    };
    let cm_name = pod
        .volumes
        .as_deref()
        .unwrap_or(&[])
        .iter()
        .find(|v| v.name == mount.name)
        .and_then(|v| v.config_map.as_ref())
        .map(|cm| cm.name.clone());
    let vf = format!("spec.template.spec.volumes[{}].configMap", mount.name);
    let Some(cm_name) = cm_name else {
        r.at(
            doc,
            &vf,
            format!("the volume mounted at {dir} is not a ConfigMap"),
        );
        return;
    };
    let Some(cdoc) = find(docs, "ConfigMap", &cm_name) else {
        r.at(
            doc,
            &format!("{vf}.name"),
            format!("no ConfigMap {cm_name:?} among the manifests"),
        );
        return;
    };
    let Ok(cm) = typed::<ConfigMap>(cdoc) else {
        return;
    };
    let data = cm.data.unwrap_or_default();
    let Some(text) = data.get(key) else {
        r.at(
            cdoc,
            "data",
            format!("no key {key:?} (the agent reads {file})"),
        );
        return;
    };
    if let Err(e) = capacity_document(text) {
        r.at(cdoc, &format!("data[{key:?}]"), e);
    }
}

/// What `berth agent` accepts as a capacity document (server/src/agent.rs,
/// `parse_capacity`): an object of cpu_free and/or memory_free_gib, each a
/// number ≥ 0 or null, and optionally observed_at.
fn capacity_document(text: &str) -> Result<(), String> {
    let v: Value = serde_json::from_str(text.trim()).map_err(|e| format!("not JSON: {e}"))?;
    let o = v.as_object().ok_or("expected a JSON object")?;
    for (k, x) in o {
        match k.as_str() {
            "cpu_free" | "memory_free_gib" => {
                if !(x.is_null() || x.as_f64().is_some_and(|n| n >= 0.0)) {
                    return Err(format!("/{k}: expected a number ≥ 0 or null, found {x}"));
                }
            }
            "observed_at" => {
                if !x.is_string() {
                    return Err(format!("/{k}: expected an RFC 3339 time, found {x}"));
                }
            }
            _ => {
                return Err(format!(
                    "/{k}: unknown field; the agent reads cpu_free, memory_free_gib and observed_at"
                ));
            }
        }
    }
    if !o.contains_key("cpu_free") && !o.contains_key("memory_free_gib") {
        return Err("neither cpu_free nor memory_free_gib is given".into());
    }
    Ok(())
}

// ---------------------------------------------------------------------------
// The PostgreSQL overlay's files.

/// RFC 6902 on a JSON value: test, replace, add and remove (what an
/// overlay of ours may use).
fn apply_json_patch(target: &mut Value, ops: &Value) -> Result<(), String> {
    for (i, op) in ops.as_array().into_iter().flatten().enumerate() {
        let path = op["path"].as_str().unwrap_or("");
        let name = op["op"].as_str().unwrap_or("");
        let value = op.get("value").cloned().unwrap_or(Value::Null);
        let fail = |what: &str| format!("[{i}] {name} {path}: {what}");
        match name {
            "test" => {
                if target.pointer(path) != Some(&value) {
                    return Err(fail(&format!(
                        "expected {value}, found {}",
                        show(target.pointer(path))
                    )));
                }
            }
            "replace" => {
                *target
                    .pointer_mut(path)
                    .ok_or_else(|| fail("no such path"))? = value;
            }
            "add" | "remove" => {
                let (parent, last) = path.rsplit_once('/').ok_or_else(|| fail("bad path"))?;
                let last = last.replace("~1", "/").replace("~0", "~");
                match target.pointer_mut(parent) {
                    Some(Value::Array(a)) => {
                        let at = if last == "-" {
                            a.len()
                        } else {
                            last.parse().map_err(|_| fail("not an index"))?
                        };
                        if name == "add" && at <= a.len() {
                            a.insert(at, value);
                        } else if name == "remove" && at < a.len() {
                            a.remove(at);
                        } else {
                            return Err(fail("index out of range"));
                        }
                    }
                    Some(Value::Object(o)) => {
                        if name == "add" {
                            o.insert(last, value);
                        } else if o.remove(&last).is_none() {
                            return Err(fail("no such member"));
                        }
                    }
                    _ => return Err(fail("no such parent")),
                }
            }
            other => {
                return Err(fail(&format!(
                    "operation {other:?} not handled by this test"
                )))
            }
        }
    }
    Ok(())
}

/// Without kustomize: the strategic-merge patch gives Deployment berth what
/// PostgreSQL needs; the JSON patches, applied to the base, leave the data
/// directory without its claim; the base's claim is deleted.
fn check_postgres_files(
    overlay: &[Doc],
    base: &[Doc],
    examples: &[Doc],
    kustomization: &Value,
) -> Vec<String> {
    let label = "deploy/kubernetes/postgres";
    let mut r = Report::default();
    if let Some((doc, d)) = need::<Deployment>(overlay, SERVER, label, &mut r) {
        if let Some((_, c)) = pod_container(&mut r, doc, &d, SERVER) {
            secret_ref(&mut r, doc, c, "BERTH_DATABASE_URL", examples);
        }
        let replicas = d.spec.replicas;
        if replicas.is_none_or(|n| n < 2) {
            r.at(
                doc,
                "spec.replicas",
                format!(
                    "expected 2 or more (replicas share PostgreSQL), found {}",
                    show(replicas)
                ),
            );
        }
        let strategy = d.spec.strategy.as_ref().and_then(|s| s.type_.as_deref());
        if strategy != Some("RollingUpdate") {
            r.at(
                doc,
                "spec.strategy.type",
                format!("expected RollingUpdate, found {}", show(strategy)),
            );
        }
    }

    let Some((bdoc, based)) = need::<Deployment>(base, SERVER, "deploy/kubernetes/server", &mut r)
    else {
        return r.0;
    };
    let mut patched = bdoc.raw.clone();
    let entries = kustomization["patches"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    for (i, e) in entries.iter().enumerate() {
        let Some(path) = e["path"].as_str() else {
            continue;
        };
        let file = format!("{label}/{path}");
        let Some(pdoc) = overlay.iter().find(|d| d.file == file && d.is_json_patch()) else {
            continue;
        };
        let t = &e["target"];
        if t["kind"] != "Deployment" || t["name"] != SERVER {
            r.file(
                &format!("{label}/kustomization.yaml"),
                &format!("patches[{i}].target"),
                format!("{file} is applied to {t}; this overlay's JSON patches are for Deployment {SERVER}"),
            );
            continue;
        }
        if let Err(e) = apply_json_patch(&mut patched, &pdoc.raw) {
            r.at(
                pdoc,
                "(operations)",
                format!("does not apply to the base Deployment: {e}"),
            );
        }
    }
    let data_dir = based
        .spec
        .template
        .spec
        .as_ref()
        .and_then(|p| p.containers.iter().find(|c| c.name == SERVER))
        .and_then(|c| env(c, "BERTH_DATA_DIR"))
        .and_then(|e| e.value.clone())
        .unwrap_or_default();
    let claim_of = |raw: &Value| -> Option<(String, String)> {
        let d: Deployment = parse_as(raw, "Deployment").ok()?;
        let pod = d.spec.template.spec?;
        let c = pod.containers.iter().find(|c| c.name == SERVER)?;
        let mount = c
            .volume_mounts
            .as_deref()?
            .iter()
            .find(|m| m.mount_path == data_dir)?;
        let v = pod.volumes?.into_iter().find(|v| v.name == mount.name)?;
        Some((v.name, v.persistent_volume_claim?.claim_name))
    };
    if let Some((vol, claim)) = claim_of(&patched) {
        r.file(
            label,
            &format!("spec.template.spec.volumes[{vol}]"),
            format!(
                "after the overlay's JSON patches the data directory is still on PersistentVolumeClaim {claim:?}"
            ),
        );
    }
    if let Some((_, claim)) = claim_of(&bdoc.raw) {
        let deleted = overlay.iter().any(|d| {
            d.kind() == "PersistentVolumeClaim" && d.name() == claim && d.raw["$patch"] == "delete"
        });
        if !deleted {
            r.file(
                label,
                "patches",
                format!("no `$patch: delete` of the base's PersistentVolumeClaim {claim:?}"),
            );
        }
    }
    r.0
}

// ---------------------------------------------------------------------------
// Kustomizations.

const KUSTOMIZATION_KEYS: &[&str] = &[
    "apiVersion",
    "kind",
    "resources",
    "patches",
    "components",
    "namespace",
    "namePrefix",
    "nameSuffix",
    "labels",
    "commonAnnotations",
    "images",
    "replicas",
    "configMapGenerator",
    "secretGenerator",
    "generatorOptions",
];
const PATCH_KEYS: &[&str] = &["path", "patch", "target", "options"];
const TARGET_KEYS: &[&str] = &[
    "group",
    "version",
    "kind",
    "name",
    "namespace",
    "labelSelector",
    "annotationSelector",
];

/// The patch files a kustomization names, relative to the workspace.
fn patch_files(dir: &str, k: &Value) -> Vec<String> {
    k["patches"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|p| p["path"].as_str())
        .map(|p| format!("{dir}/{p}"))
        .collect()
}

/// `k` (the kustomization.yaml of `dir`) lists each manifest beside it
/// exactly once, every entry exists, and no example is applied.
/// `manifests`: the other .yaml files of the directory; `exists`: whether
/// a path relative to the directory is a file.
fn check_kustomization(
    dir: &str,
    k: &Value,
    manifests: &BTreeSet<String>,
    exists: &dyn Fn(&str) -> bool,
) -> Vec<String> {
    let file = format!("{dir}/kustomization.yaml");
    let mut r = Report::default();
    if k["apiVersion"] != "kustomize.config.k8s.io/v1beta1" || k["kind"] != "Kustomization" {
        r.file(
            &file,
            "apiVersion/kind",
            format!(
                "expected kustomize.config.k8s.io/v1beta1 Kustomization, found {} {}",
                k["apiVersion"], k["kind"]
            ),
        );
    }
    for key in k.as_object().into_iter().flatten().map(|(k, _)| k) {
        if !KUSTOMIZATION_KEYS.contains(&key.as_str()) {
            r.file(&file, key, "not a kustomization field (misspelt?)");
        }
    }
    let mut listed: BTreeMap<String, String> = BTreeMap::new();
    let mut list = |r: &mut Report, field: String, entry: &str| {
        if let Some(first) = listed.insert(entry.to_string(), field.clone()) {
            r.file(
                &file,
                &field,
                format!("{entry:?} is already listed at {first}"),
            );
        }
        if entry.ends_with(".example.yaml") {
            r.file(
                &file,
                &field,
                format!("{entry:?} is an example: it must never be applied"),
            );
        }
    };
    for (i, e) in k["resources"].as_array().into_iter().flatten().enumerate() {
        let field = format!("resources[{i}]");
        let Some(e) = e.as_str() else {
            r.file(&file, &field, "expected a path");
            continue;
        };
        if e.contains("://") {
            r.file(
                &file,
                &field,
                format!("{e:?}: only files of this repository"),
            );
        } else if e.ends_with(".yaml") || e.ends_with(".yml") {
            if !exists(e) {
                r.file(&file, &field, format!("{e:?} does not exist"));
            }
        } else if !exists(&format!("{e}/kustomization.yaml")) {
            r.file(
                &file,
                &field,
                format!("{e:?} is not a directory with a kustomization.yaml"),
            );
        }
        list(&mut r, field, e);
    }
    for (i, p) in k["patches"].as_array().into_iter().flatten().enumerate() {
        let field = format!("patches[{i}]");
        for key in p.as_object().into_iter().flatten().map(|(k, _)| k) {
            if !PATCH_KEYS.contains(&key.as_str()) {
                r.file(&file, &format!("{field}.{key}"), "not a patch field");
            }
        }
        for key in p["target"]
            .as_object()
            .into_iter()
            .flatten()
            .map(|(k, _)| k)
        {
            if !TARGET_KEYS.contains(&key.as_str()) {
                r.file(
                    &file,
                    &format!("{field}.target.{key}"),
                    "not a target field",
                );
            }
        }
        match (p["path"].as_str(), p.get("patch")) {
            (Some(path), None) => {
                if !exists(path) {
                    r.file(
                        &file,
                        &format!("{field}.path"),
                        format!("{path:?} does not exist"),
                    );
                }
                list(&mut r, format!("{field}.path"), path);
            }
            (None, Some(_)) => {}
            _ => r.file(&file, &field, "expected exactly one of path and patch"),
        }
    }
    for m in manifests {
        if !m.ends_with(".example.yaml") && !listed.contains_key(m) {
            r.file(
                &format!("{dir}/{m}"),
                "(file)",
                "not listed in kustomization.yaml resources or patches (list it, or name it *.example.yaml if it must never be applied)",
            );
        }
    }
    r.0
}

/// Every directory under deploy/kubernetes with its kustomization (parsed)
/// and the names of its other .yaml files.
fn kustomize_dirs() -> BTreeMap<String, (Option<Value>, BTreeSet<String>)> {
    let mut out: BTreeMap<String, (Option<Value>, BTreeSet<String>)> = BTreeMap::new();
    for p in yaml_files(&workspace().join("deploy/kubernetes")) {
        let dir = rel(p.parent().unwrap());
        let entry = out.entry(dir).or_default();
        let name = p.file_name().unwrap().to_string_lossy().into_owned();
        if is_kustomization(&p) {
            let text = std::fs::read_to_string(&p).unwrap();
            let v: Value = serde_yaml::from_str(&text)
                .unwrap_or_else(|e| panic!("{}: not valid YAML: {e}", rel(&p)));
            entry.0 = Some(v);
        } else {
            entry.1.insert(name);
        }
    }
    out
}

fn all_patch_files() -> BTreeSet<String> {
    kustomize_dirs()
        .iter()
        .filter_map(|(dir, (k, _))| k.as_ref().map(|k| patch_files(dir, k)))
        .flatten()
        .collect()
}

// ---------------------------------------------------------------------------
// The Dockerfile.

struct Instruction {
    line: usize,
    op: String,
    args: String,
}

/// Instructions with continuation lines joined and comments dropped.
fn instructions(text: &str) -> Vec<Instruction> {
    let mut out = Vec::new();
    let mut current: Option<(usize, String)> = None;
    for (i, raw) in text.lines().enumerate() {
        let line = raw.trim();
        if line.starts_with('#') || (line.is_empty() && current.is_none()) {
            continue;
        }
        let (body, more) = match line.strip_suffix('\\') {
            Some(b) => (b.trim_end(), true),
            None => (line, false),
        };
        let (start, mut acc) = current.take().unwrap_or((i + 1, String::new()));
        if !acc.is_empty() {
            acc.push(' ');
        }
        acc.push_str(body);
        if more {
            current = Some((start, acc));
        } else if !acc.trim().is_empty() {
            let (op, args) = acc.split_once(char::is_whitespace).unwrap_or((&acc, ""));
            out.push(Instruction {
                line: start,
                op: op.to_ascii_uppercase(),
                args: args.trim().to_string(),
            });
        }
    }
    out
}

/// The exact version the workspace pins a dependency at
/// (`name = "=x.y.z"` or `{ version = "=x.y.z" }` under
/// [workspace.dependencies]).
fn workspace_pin(cargo_toml: &str, name: &str) -> Result<String, String> {
    let mut in_deps = false;
    for line in cargo_toml.lines() {
        let line = line.trim();
        if line.starts_with('[') {
            in_deps = line == "[workspace.dependencies]";
            continue;
        }
        let Some((key, value)) = line.split_once('=') else {
            continue;
        };
        if !in_deps || key.trim() != name {
            continue;
        }
        let value = value.trim();
        let value = match value.strip_prefix('{') {
            Some(table) => table
                .split(',')
                .find_map(|kv| kv.split_once('=').filter(|(k, _)| k.trim() == "version"))
                .map(|(_, v)| v.trim())
                .unwrap_or(""),
            None => value,
        };
        let version = value.trim_matches('"');
        return version.strip_prefix('=').map(str::to_string).ok_or(format!(
            "Cargo.toml: [workspace.dependencies] {name}: {value}: expected an exact pin \"=x.y.z\" (the CLI must match it)"
        ));
    }
    Err(format!(
        "Cargo.toml: [workspace.dependencies] has no {name}"
    ))
}

/// The version of `name` in Cargo.lock (the first entry of that name).
fn lock_version(cargo_lock: &str, name: &str) -> Option<String> {
    let want = format!("name = \"{name}\"");
    let mut lines = cargo_lock.lines();
    while let Some(l) = lines.next() {
        if l.trim() == want {
            let v = lines.next()?.trim().strip_prefix("version = ")?;
            return Some(v.trim_matches('"').to_string());
        }
    }
    None
}

/// The final stage's `USER uid[:gid]`, when numeric.
fn dockerfile_user(text: &str) -> Option<(u32, Option<u32>)> {
    let ins = instructions(text);
    let last_from = ins.iter().rposition(|i| i.op == "FROM")?;
    let user = ins[last_from..].iter().rev().find(|i| i.op == "USER")?;
    let (u, g) = match user.args.split_once(':') {
        Some((u, g)) => (u, Some(g)),
        None => (user.args.as_str(), None),
    };
    Some((u.parse().ok()?, g.map(str::parse).transpose().ok()?))
}

fn check_dockerfile(file: &str, text: &str, cargo_toml: &str, cargo_lock: &str) -> Vec<String> {
    let mut r = Report::default();
    let ins = instructions(text);
    let at = |i: &Instruction| format!("{file}:{}", i.line);
    let froms: Vec<usize> = ins
        .iter()
        .enumerate()
        .filter(|(_, i)| i.op == "FROM")
        .map(|(n, _)| n)
        .collect();
    if froms.len() < 2 {
        r.file(
            file,
            "FROM",
            format!(
                "expected a multi-stage build (a builder and a runtime stage), found {} FROM",
                froms.len()
            ),
        );
        return r.0;
    }
    let last = *froms.last().unwrap();
    let stage_names: Vec<String> = froms
        .iter()
        .filter_map(|&n| {
            let words: Vec<&str> = ins[n].args.split_whitespace().collect();
            match words.as_slice() {
                [_, as_, name] if as_.eq_ignore_ascii_case("as") => Some(name.to_string()),
                _ => None,
            }
        })
        .collect();
    let final_stage = &ins[last..];

    match final_stage.iter().rev().find(|i| i.op == "USER") {
        None => r.file(
            file,
            "USER",
            "the final stage has none: the server would run as root",
        ),
        Some(u) => {
            let ok = |s: &str| s.parse::<u32>().is_ok_and(|n| n != 0);
            let parts: Vec<&str> = u.args.split(':').collect();
            if parts.len() > 2 || !parts.iter().all(|p| ok(p)) {
                r.file(
                    &at(u),
                    "USER",
                    format!(
                        "{:?}: expected a numeric non-zero uid[:gid] (Kubernetes' runAsNonRoot can only verify a number)",
                        u.args
                    ),
                );
            }
        }
    }
    let copies_binary = final_stage.iter().any(|i| {
        i.op == "COPY"
            && stage_names
                .iter()
                .any(|n| i.args.starts_with(&format!("--from={n} ")))
            && i.args.contains("/usr/local/bin/berth")
    });
    if !copies_binary {
        r.file(
            file,
            "COPY",
            "the final stage does not copy the binary from a builder stage to /usr/local/bin/berth",
        );
    }
    if !final_stage
        .iter()
        .any(|i| i.op == "ENTRYPOINT" && i.args.contains("\"berth\""))
    {
        r.file(
            file,
            "ENTRYPOINT",
            "expected [\"berth\"] in the final stage",
        );
    }

    let runs: Vec<&Instruction> = ins.iter().filter(|i| i.op == "RUN").collect();
    let words = |i: &Instruction| -> Vec<String> {
        i.args.split_whitespace().map(str::to_string).collect()
    };
    let build = runs.iter().position(|i| i.args.contains("cargo build"));
    match build {
        None => r.file(file, "RUN", "no cargo build"),
        Some(b) => {
            let i = runs[b];
            let w = words(i);
            let features: Vec<&str> = w
                .iter()
                .enumerate()
                .filter_map(|(n, x)| {
                    if x == "--features" || x == "-F" {
                        w.get(n + 1).map(String::as_str)
                    } else {
                        x.strip_prefix("--features=")
                    }
                })
                .flat_map(|f| f.split([',', ' ']))
                .collect();
            if !features.contains(&"bundle") {
                r.file(
                    &at(i),
                    "RUN cargo build",
                    "without --features bundle: the binary would not carry its web UI",
                );
            }
            for needed in ["--release", "--locked"] {
                if !w.iter().any(|x| x == needed) {
                    r.file(&at(i), "RUN cargo build", format!("without {needed}"));
                }
            }
            if !i.args.contains("-p berth") {
                r.file(
                    &at(i),
                    "RUN cargo build",
                    "does not build the berth package (-p berth)",
                );
            }
            let web = runs
                .iter()
                .position(|i| i.args.contains("scripts/build-web.sh"));
            if web.is_none_or(|w| w > b) {
                r.file(
                    &at(i),
                    "RUN bash scripts/build-web.sh",
                    "must run before cargo build: the bundle feature embeds target/site",
                );
            }
        }
    }
    if !runs
        .iter()
        .any(|i| i.args.contains("rustup target add") && i.args.contains("wasm32-unknown-unknown"))
    {
        r.file(
            file,
            "RUN rustup target add",
            "the wasm32-unknown-unknown target is never added",
        );
    }

    match workspace_pin(cargo_toml, "wasm-bindgen") {
        Err(e) => r.0.push(e),
        Ok(pin) => {
            if lock_version(cargo_lock, "wasm-bindgen").as_deref() != Some(pin.as_str()) {
                r.file(
                    "Cargo.lock",
                    "wasm-bindgen",
                    format!(
                        "{} but Cargo.toml pins ={pin}",
                        show(lock_version(cargo_lock, "wasm-bindgen"))
                    ),
                );
            }
            let install = runs
                .iter()
                .find(|i| i.args.contains("cargo install") && i.args.contains("wasm-bindgen-cli"));
            match install {
                None => r.file(file, "RUN cargo install wasm-bindgen-cli", "missing"),
                Some(i) => {
                    let w = words(i);
                    let version = w.iter().enumerate().find_map(|(n, x)| {
                        if x == "--version" {
                            w.get(n + 1).map(String::as_str)
                        } else {
                            x.strip_prefix("--version=")
                                .or_else(|| x.strip_prefix("wasm-bindgen-cli@"))
                        }
                    });
                    let version = version.map(|v| v.trim_start_matches('='));
                    if version != Some(pin.as_str()) {
                        r.file(
                            &at(i),
                            "RUN cargo install wasm-bindgen-cli --version",
                            format!(
                                "{} but the workspace pins wasm-bindgen ={pin} (Cargo.toml): the CLI must be that exact version",
                                show(version)
                            ),
                        );
                    }
                }
            }
        }
    }

    let exposed: Vec<&str> = final_stage
        .iter()
        .filter(|i| i.op == "EXPOSE")
        .flat_map(|i| i.args.split_whitespace())
        .collect();
    let want = SERVER_PORT.to_string();
    if !exposed.iter().any(|p| p.trim_end_matches("/tcp") == want) {
        r.file(
            file,
            "EXPOSE",
            format!("expected {want}, found {exposed:?}"),
        );
    }
    let listen = format!("BERTH_LISTEN=0.0.0.0:{SERVER_PORT}");
    if !final_stage
        .iter()
        .any(|i| i.op == "ENV" && i.args.split_whitespace().any(|w| w == listen))
    {
        r.file(file, "ENV", format!("expected {listen} in the final stage"));
    }
    r.0
}

// ---------------------------------------------------------------------------
// The tests.

fn examples(docs: &[Doc]) -> Vec<Doc> {
    docs.iter().filter(|d| d.is_example()).cloned().collect()
}

fn read(rel_path: &str) -> String {
    std::fs::read_to_string(workspace().join(rel_path))
        .unwrap_or_else(|e| panic!("{rel_path}: {e}"))
}

/// Every check on the files (not the rendered output), as the tests below
/// run them one by one.
fn check_files(docs: &[Doc], patches: &BTreeSet<String>, postgres_k: &Value) -> Vec<String> {
    let ex = examples(docs);
    let server = in_dir(docs, "server");
    let mut errors = check_types(docs, patches);
    errors.extend(check_secret_env(docs));
    errors.extend(check_server(
        &server,
        &ex,
        "deploy/kubernetes/server",
        Storage::Sqlite,
    ));
    errors.extend(check_agent(
        &in_dir(docs, "agent"),
        &ex,
        "deploy/kubernetes/agent",
    ));
    errors.extend(check_postgres_files(
        &in_dir(docs, "postgres"),
        &server,
        &ex,
        postgres_k,
    ));
    errors
}

fn postgres_kustomization() -> Value {
    kustomize_dirs()["deploy/kubernetes/postgres"]
        .0
        .clone()
        .expect("deploy/kubernetes/postgres/kustomization.yaml")
}

#[test]
fn every_manifest_is_its_typed_kubernetes_object() {
    let docs = manifests();
    let mut errors = check_types(&docs, &all_patch_files());
    errors.extend(check_secret_env(&docs));
    assert_none(errors);
    // The kinds the deployment is made of are all there.
    let kinds: BTreeSet<&str> = docs.iter().map(Doc::kind).collect();
    for k in KINDS {
        assert!(kinds.contains(k), "no {k} under deploy/kubernetes");
    }
}

#[test]
fn every_kustomization_lists_exactly_its_manifests() {
    let mut errors = Vec::new();
    for (dir, (k, files)) in kustomize_dirs() {
        let Some(k) = k else {
            errors.push(format!("{dir}: manifests but no kustomization.yaml"));
            continue;
        };
        let base = workspace().join(&dir);
        let exists = |p: &str| base.join(p).is_file();
        errors.extend(check_kustomization(&dir, &k, &files, &exists));
    }
    assert_none(errors);
}

#[test]
fn server_runs_sqlite_with_one_writer_hardened_and_probed() {
    let docs = manifests();
    assert_none(check_server(
        &in_dir(&docs, "server"),
        &examples(&docs),
        "deploy/kubernetes/server",
        Storage::Sqlite,
    ));
}

#[test]
fn agent_reads_only_and_takes_its_token_from_a_secret() {
    let docs = manifests();
    assert_none(check_agent(
        &in_dir(&docs, "agent"),
        &examples(&docs),
        "deploy/kubernetes/agent",
    ));
}

#[test]
fn postgres_overlay_files_set_the_database_and_drop_the_volume() {
    let docs = manifests();
    assert_none(check_postgres_files(
        &in_dir(&docs, "postgres"),
        &in_dir(&docs, "server"),
        &examples(&docs),
        &postgres_kustomization(),
    ));
}

#[test]
fn dockerfile_builds_the_bundle_and_runs_unprivileged() {
    assert_none(check_dockerfile(
        "deploy/Dockerfile",
        &read("deploy/Dockerfile"),
        &read("Cargo.toml"),
        &read("Cargo.lock"),
    ));
}

/// The pods run as the image's USER (uid, and gid as group and fsGroup).
fn check_image_user(dockerfile: &str, docs: &[Doc]) -> Vec<String> {
    let Some((uid, gid)) = dockerfile_user(dockerfile) else {
        return vec!["deploy/Dockerfile: USER: no numeric uid in the final stage".into()];
    };
    let mut r = Report::default();
    for (dir, name) in [("server", SERVER), ("agent", AGENT)] {
        let set = in_dir(docs, dir);
        let Some((doc, d)) = need::<Deployment>(&set, name, dir, &mut r) else {
            continue;
        };
        let sc = d
            .spec
            .template
            .spec
            .and_then(|p| p.security_context)
            .unwrap_or_default();
        let f = "spec.template.spec.securityContext";
        if sc.run_as_user != Some(uid.into()) {
            r.at(
                doc,
                &format!("{f}.runAsUser"),
                format!(
                    "{} but deploy/Dockerfile's USER is {uid}",
                    show(sc.run_as_user)
                ),
            );
        }
        if let Some(gid) = gid {
            for (field, v) in [("runAsGroup", sc.run_as_group), ("fsGroup", sc.fs_group)] {
                if v != Some(gid.into()) {
                    r.at(
                        doc,
                        &format!("{f}.{field}"),
                        format!("{} but deploy/Dockerfile's USER group is {gid}", show(v)),
                    );
                }
            }
        }
    }
    r.0
}

#[test]
fn image_user_is_the_pods_user() {
    assert_none(check_image_user(&read("deploy/Dockerfile"), &manifests()));
}

/// `kubectl kustomize DIR`, parsed; None when there is no kubectl.
fn render(dir: &str) -> Option<Vec<Doc>> {
    let out = match Command::new("kubectl")
        .arg("kustomize")
        .arg(workspace().join(dir))
        .output()
    {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return None,
        Err(e) => panic!("kubectl: {e}"),
        Ok(o) => o,
    };
    assert!(
        out.status.success(),
        "kubectl kustomize {dir} failed:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let label = format!("kubectl kustomize {dir}");
    Some(split_yaml(&label, &String::from_utf8(out.stdout).unwrap()).unwrap())
}

#[test]
fn rendered_kustomizations_pass_the_same_checks() {
    let docs = manifests();
    let ex = examples(&docs);
    let Some(server) = render("deploy/kubernetes/server") else {
        assert!(
            std::env::var_os("BERTH_REQUIRE_KUBECTL").is_none(),
            "BERTH_REQUIRE_KUBECTL is set but there is no kubectl"
        );
        eprintln!("skipped: no kubectl on the path to render the kustomizations");
        return;
    };
    let none = BTreeSet::new();
    let mut errors = check_types(&server, &none);
    errors.extend(check_secret_env(&server));
    errors.extend(check_server(
        &server,
        &ex,
        "kubectl kustomize deploy/kubernetes/server",
        Storage::Sqlite,
    ));
    let postgres = render("deploy/kubernetes/postgres").unwrap();
    errors.extend(check_types(&postgres, &none));
    errors.extend(check_secret_env(&postgres));
    errors.extend(check_server(
        &postgres,
        &ex,
        "kubectl kustomize deploy/kubernetes/postgres",
        Storage::Postgres,
    ));
    let agent = render("deploy/kubernetes/agent").unwrap();
    errors.extend(check_types(&agent, &none));
    errors.extend(check_secret_env(&agent));
    errors.extend(check_agent(
        &agent,
        &ex,
        "kubectl kustomize deploy/kubernetes/agent",
    ));
    assert_none(errors);
}

// ---------------------------------------------------------------------------
// Every check can fail: break a copy of the real files one field at a
// time and require a message naming the file and the field.

fn at_mut<'a>(v: &'a mut Value, ptr: &str) -> &'a mut Value {
    v.pointer_mut(ptr)
        .unwrap_or_else(|| panic!("the breakage's pointer {ptr} is not in the file any more"))
}

/// Set what `ptr` points at, adding it to its parent object if missing.
fn set(v: &mut Value, ptr: &str, x: Value) {
    if let Some(slot) = v.pointer_mut(ptr) {
        *slot = x;
        return;
    }
    let (parent, key) = ptr.rsplit_once('/').unwrap();
    let key = key.replace("~1", "/").replace("~0", "~");
    at_mut(v, parent)
        .as_object_mut()
        .unwrap_or_else(|| panic!("{parent} is not an object"))
        .insert(key, x);
}

fn rename(v: &mut Value, ptr: &str, from: &str, to: &str) {
    let o = at_mut(v, ptr).as_object_mut().unwrap();
    let x = o
        .remove(from)
        .unwrap_or_else(|| panic!("no {from} at {ptr}"));
    o.insert(to.to_string(), x);
}

fn remove(v: &mut Value, ptr: &str, key: &str) {
    at_mut(v, ptr)
        .as_object_mut()
        .unwrap()
        .remove(key)
        .unwrap_or_else(|| panic!("no {key} at {ptr}"));
}

fn push(v: &mut Value, ptr: &str, x: Value) {
    at_mut(v, ptr).as_array_mut().unwrap().push(x);
}

const C0: &str = "/spec/template/spec/containers/0";
const POD: &str = "/spec/template/spec";

/// The first container's environment variable `name`.
fn env_mut<'a>(v: &'a mut Value, name: &str) -> &'a mut Value {
    at_mut(v, &format!("{C0}/env"))
        .as_array_mut()
        .unwrap()
        .iter_mut()
        .find(|e| e["name"] == name)
        .unwrap_or_else(|| panic!("no env {name}"))
}

type Breakage = (&'static str, &'static [&'static str], fn(&mut Value));

/// (file under deploy/kubernetes/, what one message must contain, how to
/// break the file's first document)
#[rustfmt::skip]
const BREAKAGES: &[Breakage] = &[
    // Typed parsing.
    ("server/deployment.yaml", &["containers[0].readinessProbes", "not a field of Deployment"], |v| {
        rename(v, C0, "readinessProbe", "readinessProbes")
    }),
    ("server/deployment.yaml", &["spec.template.spec.securityContext.runAsNonroot", "not a field"], |v| {
        rename(v, &format!("{POD}/securityContext"), "runAsNonRoot", "runAsNonroot")
    }),
    ("server/service.yaml", &["kind: unknown kind \"Servce\""], |v| set(v, "/kind", json!("Servce"))),
    ("server/deployment.yaml", &["apiVersion: expected \"apps/v1\"", "apps/v1beta1"], |v| {
        set(v, "/apiVersion", json!("apps/v1beta1"))
    }),
    ("server/deployment.yaml", &["spec.replicas: does not parse as Deployment"], |v| {
        set(v, "/spec/replicas", json!("two"))
    }),
    ("server/pvc.yaml", &["metadata.namespace: expected \"berth\""], |v| {
        remove(v, "/metadata", "namespace")
    }),
    ("server/namespace.yaml", &["kind: a Secret outside *.example.yaml"], |v| {
        set(v, "/kind", json!("Secret"))
    }),
    ("postgres/data-volume-patch.yaml", &["[1].value.emptyDirr", "not a field of Volume"], |v| {
        rename(v, "/1/value", "emptyDir", "emptyDirr")
    }),
    ("postgres/data-volume-patch.yaml", &["[0].op: expected add, remove"], |v| {
        set(v, "/0/op", json!("tset"))
    }),
    // The server.
    ("server/deployment.yaml", &["readinessProbe.httpGet.path: expected \"/readyz\""], |v| {
        set(v, &format!("{C0}/readinessProbe/httpGet/path"), json!("/healthz"))
    }),
    ("server/deployment.yaml", &["livenessProbe.httpGet.path: expected \"/healthz\""], |v| {
        set(v, &format!("{C0}/livenessProbe/httpGet/path"), json!("/"))
    }),
    ("server/deployment.yaml", &["livenessProbe.httpGet.port: \"web\" is not a port"], |v| {
        set(v, &format!("{C0}/livenessProbe/httpGet/port"), json!("web"))
    }),
    ("server/deployment.yaml", &["readinessProbe.httpGet.port: 3000: name the container port"], |v| {
        set(v, &format!("{C0}/readinessProbe/httpGet/port"), json!(3000))
    }),
    ("server/deployment.yaml", &["containers[berth].ports: expected a port named \"http\" on 3000"], |v| {
        set(v, &format!("{C0}/ports/0/containerPort"), json!(8080))
    }),
    ("server/deployment.yaml", &["securityContext.runAsNonRoot: expected true"], |v| {
        set(v, &format!("{POD}/securityContext/runAsNonRoot"), json!(false))
    }),
    ("server/deployment.yaml", &["securityContext.runAsUser: expected a non-zero user id"], |v| {
        set(v, &format!("{POD}/securityContext/runAsUser"), json!(0))
    }),
    ("server/deployment.yaml", &["securityContext.runAsUser: expected a non-zero user id"], |v| {
        set(v, &format!("{C0}/securityContext/runAsUser"), json!(0))
    }),
    ("server/deployment.yaml", &["securityContext.seccompProfile.type: expected RuntimeDefault"], |v| {
        set(v, &format!("{POD}/securityContext/seccompProfile/type"), json!("Unconfined"))
    }),
    ("server/deployment.yaml", &["securityContext.allowPrivilegeEscalation: expected false"], |v| {
        set(v, &format!("{C0}/securityContext/allowPrivilegeEscalation"), json!(true))
    }),
    ("server/deployment.yaml", &["securityContext.readOnlyRootFilesystem: expected true"], |v| {
        remove(v, &format!("{C0}/securityContext"), "readOnlyRootFilesystem")
    }),
    ("server/deployment.yaml", &["securityContext.capabilities.drop: expected it to contain \"ALL\""], |v| {
        set(v, &format!("{C0}/securityContext/capabilities/drop"), json!(["NET_RAW"]))
    }),
    ("server/deployment.yaml", &["securityContext.capabilities.add: expected none"], |v| {
        set(v, &format!("{C0}/securityContext/capabilities/add"), json!(["NET_ADMIN"]))
    }),
    ("server/deployment.yaml", &["spec.strategy.type: expected Recreate"], |v| {
        set(v, "/spec/strategy", json!({"type": "RollingUpdate"}))
    }),
    ("server/deployment.yaml", &["spec.replicas: expected 1"], |v| set(v, "/spec/replicas", json!(2))),
    ("server/deployment.yaml", &["persistentVolumeClaim.claimName: no PersistentVolumeClaim \"berth-dta\""], |v| {
        set(v, &format!("{POD}/volumes/0/persistentVolumeClaim/claimName"), json!("berth-dta"))
    }),
    ("server/deployment.yaml", &["volumes[data].persistentVolumeClaim: missing"], |v| {
        set(v, &format!("{POD}/volumes/0"), json!({"name": "data", "emptyDir": {}}))
    }),
    ("server/deployment.yaml", &["volumeMounts: nothing is mounted at /var/lib/berth"], |v| {
        set(v, &format!("{C0}/volumeMounts/0/mountPath"), json!("/data"))
    }),
    ("server/pvc.yaml", &["spec.accessModes: expected ReadWriteOnce"], |v| {
        set(v, "/spec/accessModes", json!(["ReadWriteMany"]))
    }),
    ("server/deployment.yaml", &["env[BERTH_ADMIN_TOKEN].value: a secret as a literal value"], |v| {
        *env_mut(v, "BERTH_ADMIN_TOKEN") = json!({"name": "BERTH_ADMIN_TOKEN", "value": "0123456789abcdef0123456789abcdef"})
    }),
    ("server/deployment.yaml", &["env[BERTH_SECRET_KEY]: missing"], |v| {
        at_mut(v, &format!("{C0}/env")).as_array_mut().unwrap().retain(|e| e["name"] != "BERTH_SECRET_KEY")
    }),
    ("server/deployment.yaml", &["env[BERTH_ADMIN_TOKEN].valueFrom.secretKeyRef.key: \"admin_token\" is not a key"], |v| {
        set(env_mut(v, "BERTH_ADMIN_TOKEN"), "/valueFrom/secretKeyRef/key", json!("admin_token"))
    }),
    ("server/deployment.yaml", &["env[BERTH_ADMIN_TOKEN].valueFrom.secretKeyRef.name: no *.example.yaml"], |v| {
        set(env_mut(v, "BERTH_ADMIN_TOKEN"), "/valueFrom/secretKeyRef/name", json!("berth-secret"))
    }),
    ("server/deployment.yaml", &["env[BERTH_LISTEN]: expected \"0.0.0.0:3000\""], |v| {
        set(env_mut(v, "BERTH_LISTEN"), "/value", json!("127.0.0.1:3000"))
    }),
    ("server/deployment.yaml", &["args: expected [\"serve\"]"], |v| set(v, &format!("{C0}/args"), json!(["advise"]))),
    ("server/deployment.yaml", &["spec.selector.matchLabels[\"app.kubernetes.io/component\"]"], |v| {
        set(v, "/spec/selector/matchLabels/app.kubernetes.io~1component", json!("web"))
    }),
    ("server/service.yaml", &["spec.ports[http].targetPort: \"web\" is not a port"], |v| {
        set(v, "/spec/ports/0/targetPort", json!("web"))
    }),
    ("server/service.yaml", &["spec.selector[\"app.kubernetes.io/component\"]: \"api\" does not match"], |v| {
        set(v, "/spec/selector/app.kubernetes.io~1component", json!("api"))
    }),
    ("server/service.yaml", &["spec.selector: empty"], |v| remove(v, "/spec", "selector")),
    ("server/service.yaml", &["spec.ports: expected a port 80"], |v| set(v, "/spec/ports/0/port", json!(8080))),
    // The agent.
    ("agent/clusterrole.yaml", &["rules[0].verbs: \"create\" is not read-only"], |v| {
        push(v, "/rules/0/verbs", json!("create"))
    }),
    ("agent/clusterrole.yaml", &["rules[0].verbs: empty"], |v| set(v, "/rules/0/verbs", json!([]))),
    ("agent/clusterrole.yaml", &["rules[0].verbs: \"*\" is not read-only"], |v| {
        set(v, "/rules/0/verbs", json!(["*"]))
    }),
    ("agent/clusterrole.yaml", &["rules[1].resources: \"*\" (a wildcard)"], |v| {
        set(v, "/rules/1/resources", json!(["*"]))
    }),
    ("agent/clusterrole.yaml", &["rules[1].apiGroups: \"*\" (a wildcard)"], |v| {
        set(v, "/rules/1/apiGroups", json!(["*"]))
    }),
    ("agent/clusterrole.yaml", &["rules[0].resources: \"secrets\""], |v| {
        push(v, "/rules/0/resources", json!("secrets"))
    }),
    ("agent/clusterrole.yaml", &["rules: empty"], |v| set(v, "/rules", json!([]))),
    ("agent/clusterrolebinding.yaml", &["roleRef: expected ClusterRole \"berth-agent-read\""], |v| {
        set(v, "/roleRef/name", json!("cluster-admin"))
    }),
    ("agent/clusterrolebinding.yaml", &["subjects: expected ServiceAccount \"berth-agent\" in namespace \"berth\""], |v| {
        set(v, "/subjects/0/namespace", json!("default"))
    }),
    ("agent/deployment.yaml", &["spec.template.spec.serviceAccountName: expected \"berth-agent\""], |v| {
        set(v, &format!("{POD}/serviceAccountName"), json!("default"))
    }),
    ("agent/deployment.yaml", &["automountServiceAccountToken: expected true"], |v| {
        set(v, &format!("{POD}/automountServiceAccountToken"), json!(false))
    }),
    ("agent/deployment.yaml", &["env[BERTH_TOKEN].value: a secret as a literal value"], |v| {
        *env_mut(v, "BERTH_TOKEN") = json!({"name": "BERTH_TOKEN", "value": "berth_0000"})
    }),
    ("agent/deployment.yaml", &["env[BERTH_TOKEN].valueFrom.secretKeyRef: missing"], |v| {
        *env_mut(v, "BERTH_TOKEN") = json!({"name": "BERTH_TOKEN", "valueFrom": {"configMapKeyRef": {"name": "x", "key": "token"}}})
    }),
    ("agent/deployment.yaml", &["volumes[capacity].configMap.name: no ConfigMap \"berth-agent-capacit\""], |v| {
        set(v, &format!("{POD}/volumes/0/configMap/name"), json!("berth-agent-capacit"))
    }),
    ("agent/deployment.yaml", &["args[--capacity-file]: /etc/berth/capacity.json: nothing is mounted at /etc/berth"], |v| {
        let args = at_mut(v, &format!("{C0}/args")).as_array_mut().unwrap();
        let i = args.iter().position(|a| a == "--capacity-file").unwrap();
        args[i + 1] = json!("/etc/berth/capacity.json");
    }),
    ("agent/configmap.yaml", &["data[\"capacity.json\"]: /cpu: unknown field"], |v| {
        set(v, "/data/capacity.json", json!("{\"cpu\": 4}"))
    }),
    ("agent/configmap.yaml", &["data: no key \"capacity.json\""], |v| rename(v, "/data", "capacity.json", "capacity")),
    ("agent/deployment.yaml", &["args: --token on the command line"], |v| {
        push(v, &format!("{C0}/args"), json!("--token=berth_0000"))
    }),
    ("agent/deployment.yaml", &["args: --cluster is missing"], |v| {
        let args = at_mut(v, &format!("{C0}/args")).as_array_mut().unwrap();
        let i = args.iter().position(|a| a == "--cluster").unwrap();
        args.drain(i..i + 2);
    }),
    ("agent/deployment.yaml", &["containers[berth-agent].securityContext.readOnlyRootFilesystem"], |v| {
        set(v, &format!("{C0}/securityContext/readOnlyRootFilesystem"), json!(false))
    }),
    ("agent/deployment.yaml", &["spec.replicas: expected 1 (one agent per cluster)"], |v| {
        set(v, "/spec/replicas", json!(3))
    }),
    // The PostgreSQL overlay.
    ("postgres/deployment-patch.yaml", &["env[BERTH_DATABASE_URL].value: a secret as a literal value"], |v| {
        *env_mut(v, "BERTH_DATABASE_URL") = json!({"name": "BERTH_DATABASE_URL", "value": "postgres://berth:pw@db/berth"})
    }),
    ("postgres/deployment-patch.yaml", &["env[BERTH_DATABASE_URL].valueFrom.secretKeyRef.key: \"uri\" is not a key"], |v| {
        set(env_mut(v, "BERTH_DATABASE_URL"), "/valueFrom/secretKeyRef/key", json!("uri"))
    }),
    ("postgres/deployment-patch.yaml", &["spec.replicas: expected 2 or more"], |v| set(v, "/spec/replicas", json!(1))),
    ("postgres/deployment-patch.yaml", &["spec.strategy.type: expected RollingUpdate"], |v| {
        set(v, "/spec/strategy", json!({"type": "Recreate"}))
    }),
    ("postgres/data-volume-patch.yaml", &["does not apply to the base Deployment", "[0] test"], |v| {
        set(v, "/0/path", json!("/spec/template/spec/volumes/1/name"))
    }),
    ("postgres/data-volume-patch.yaml", &["still on PersistentVolumeClaim \"berth-data\""], |v| {
        set(v, "/1/value", json!({"name": "data", "persistentVolumeClaim": {"claimName": "berth-data"}}))
    }),
    ("postgres/drop-pvc-patch.yaml", &["no `$patch: delete` of the base's PersistentVolumeClaim \"berth-data\""], |v| {
        set(v, "/metadata/name", json!("berth-data-old"))
    }),
];

#[test]
fn each_check_catches_its_breakage() {
    let docs = manifests();
    let patches = all_patch_files();
    let pk = postgres_kustomization();
    assert_none(check_files(&docs, &patches, &pk));
    let mut missed = Vec::new();
    for (n, (file, expect, breakage)) in BREAKAGES.iter().enumerate() {
        let path = format!("deploy/kubernetes/{file}");
        let mut broken = docs.clone();
        let doc = broken
            .iter_mut()
            .find(|d| d.file == path)
            .unwrap_or_else(|| panic!("breakage {n}: no {path}"));
        breakage(&mut doc.raw);
        let errors = check_files(&broken, &patches, &pk);
        let named = |e: &String| {
            expect.iter().all(|x| e.contains(x))
                && (e.contains(&path) || e.starts_with("deploy/kubernetes/postgres"))
        };
        if !errors.iter().any(named) {
            missed.push(format!(
                "breakage {n} of {path}: no message with {expect:?}; got:\n      {}",
                errors.join("\n      ")
            ));
        }
    }
    assert_none(missed);
}

type TextBreakage = (
    &'static str,
    &'static str,
    &'static str,
    &'static [&'static str],
);

/// (which file: Dockerfile or Cargo.toml, text to replace, replacement,
/// what one message must contain)
#[rustfmt::skip]
const DOCKER_BREAKAGES: &[TextBreakage] = &[
    ("Dockerfile", "FROM rust:1-bookworm AS builder", "", &["deploy/Dockerfile: FROM: expected a multi-stage build"]),
    ("Dockerfile", "USER 10001:10001", "USER 0:0", &["USER: \"0:0\": expected a numeric non-zero uid"]),
    ("Dockerfile", "USER 10001:10001", "USER berth", &["USER: \"berth\": expected a numeric non-zero uid"]),
    ("Dockerfile", "USER 10001:10001", "", &["deploy/Dockerfile: USER: the final stage has none"]),
    ("Dockerfile", " --features bundle", "", &["RUN cargo build: without --features bundle"]),
    ("Dockerfile", "--version 0.2.130", "--version 0.2.129", &["--version: \"0.2.129\" but the workspace pins wasm-bindgen =0.2.130"]),
    ("Dockerfile", "RUN bash scripts/build-web.sh", "", &["RUN bash scripts/build-web.sh: must run before cargo build"]),
    ("Dockerfile", "EXPOSE 3000", "EXPOSE 8080", &["deploy/Dockerfile: EXPOSE: expected 3000"]),
    ("Dockerfile", "COPY --from=builder", "COPY --from=build", &["deploy/Dockerfile: COPY: the final stage does not copy the binary"]),
    ("Dockerfile", "rustup target add wasm32-unknown-unknown", "true", &["the wasm32-unknown-unknown target is never added"]),
    ("Cargo.toml", "wasm-bindgen = \"=0.2.130\"", "wasm-bindgen = \"0.2.130\"", &["Cargo.toml: [workspace.dependencies] wasm-bindgen", "expected an exact pin"]),
    ("Cargo.toml", "wasm-bindgen = \"=0.2.130\"", "wasm-bindgen = { version = \"=0.2.131\" }", &["Cargo.lock: wasm-bindgen: \"0.2.130\" but Cargo.toml pins =0.2.131"]),
];

#[test]
fn each_dockerfile_check_catches_its_breakage() {
    let (dockerfile, toml, lock) = (
        read("deploy/Dockerfile"),
        read("Cargo.toml"),
        read("Cargo.lock"),
    );
    assert_none(check_dockerfile(
        "deploy/Dockerfile",
        &dockerfile,
        &toml,
        &lock,
    ));
    let mut missed = Vec::new();
    for (n, (which, from, to, expect)) in DOCKER_BREAKAGES.iter().enumerate() {
        let (mut d, mut t) = (dockerfile.clone(), toml.clone());
        let target = if *which == "Dockerfile" {
            &mut d
        } else {
            &mut t
        };
        assert!(
            target.contains(from),
            "breakage {n}: {which} has no {from:?} any more"
        );
        *target = target.replacen(from, to, 1);
        let errors = check_dockerfile("deploy/Dockerfile", &d, &t, &lock);
        if !errors.iter().any(|e| expect.iter().all(|x| e.contains(x))) {
            missed.push(format!(
                "breakage {n} of {which} ({from:?} → {to:?}): no message with {expect:?}; got:\n      {}",
                errors.join("\n      ")
            ));
        }
    }
    // The pods' user follows the image's.
    let other = dockerfile.replacen("USER 10001:10001", "USER 10002:10001", 1);
    let errors = check_image_user(&other, &manifests());
    for dir in ["server", "agent"] {
        let want = format!("deploy/kubernetes/{dir}/deployment.yaml");
        if !errors.iter().any(|e| {
            e.contains(&want)
                && e.contains("runAsUser: 10001 but deploy/Dockerfile's USER is 10002")
        }) {
            missed.push(format!(
                "USER 10002: no runAsUser message for {want}; got {errors:?}"
            ));
        }
    }
    assert_none(missed);
}

type KustomizeBreakage = (
    &'static str,
    &'static [&'static str],
    fn(&mut Value, &mut BTreeSet<String>),
);

/// (directory under deploy/kubernetes/, what one message must contain, how
/// to break its kustomization or its file list)
#[rustfmt::skip]
const KUSTOMIZE_BREAKAGES: &[KustomizeBreakage] = &[
    ("server", &["deploy/kubernetes/server/service.yaml: (file): not listed in kustomization.yaml"], |k, _| {
        at_mut(k, "/resources").as_array_mut().unwrap().retain(|r| r != "service.yaml")
    }),
    ("server", &["deploy/kubernetes/server/ingress.yaml: (file): not listed"], |_, files| {
        files.insert("ingress.yaml".into());
    }),
    ("server", &["server/kustomization.yaml: resources[4]: \"missing.yaml\" does not exist"], |k, _| {
        push(k, "/resources", json!("missing.yaml"))
    }),
    ("server", &["server/kustomization.yaml: resources[4]: \"secret.example.yaml\" is an example"], |k, _| {
        push(k, "/resources", json!("secret.example.yaml"))
    }),
    ("server", &["server/kustomization.yaml: resources[4]: \"pvc.yaml\" is already listed at resources[1]"], |k, _| {
        push(k, "/resources", json!("pvc.yaml"))
    }),
    ("server", &["server/kustomization.yaml: resource: not a kustomization field"], |k, _| {
        rename(k, "", "resources", "resource")
    }),
    ("server", &["server/kustomization.yaml: apiVersion/kind: expected kustomize.config.k8s.io/v1beta1"], |k, _| {
        set(k, "/kind", json!("Kustomisation"))
    }),
    ("postgres", &["postgres/kustomization.yaml: patches[0].path: \"nope.yaml\" does not exist"], |k, _| {
        set(k, "/patches/0/path", json!("nope.yaml"))
    }),
    ("postgres", &["postgres/kustomization.yaml: resources[0]: \"../severs\" is not a directory"], |k, _| {
        set(k, "/resources/0", json!("../severs"))
    }),
    ("postgres", &["postgres/kustomization.yaml: patches[1].target.nmae: not a target field"], |k, _| {
        rename(k, "/patches/1/target", "name", "nmae")
    }),
    ("postgres", &["postgres/kustomization.yaml: resources[1]: \"https://example.com/x.yaml\": only files"], |k, _| {
        push(k, "/resources", json!("https://example.com/x.yaml"))
    }),
];

#[test]
fn each_kustomization_check_catches_its_breakage() {
    let dirs = kustomize_dirs();
    let mut missed = Vec::new();
    for (n, (dir, expect, breakage)) in KUSTOMIZE_BREAKAGES.iter().enumerate() {
        let dir = format!("deploy/kubernetes/{dir}");
        let (k, files) = &dirs[&dir];
        let (mut k, mut files) = (k.clone().unwrap(), files.clone());
        breakage(&mut k, &mut files);
        let base = workspace().join(&dir);
        let exists = |p: &str| base.join(p).is_file();
        let errors = check_kustomization(&dir, &k, &files, &exists);
        if !errors.iter().any(|e| expect.iter().all(|x| e.contains(x))) {
            missed.push(format!(
                "breakage {n} of {dir}: no message with {expect:?}; got:\n      {}",
                errors.join("\n      ")
            ));
        }
    }
    assert_none(missed);
}
