//! The Kubernetes API as a source of manifests: `berth import kubernetes
//! --context`, and `berth agent --kubernetes` every interval. Lists each
//! kind the importer reads (and Nodes, for free capacity) page by page
//! (`limit` + `continue`), read-only, and hands every kind on as one
//! `List` document, so the objects go through the same importer as
//! `kubectl get … -o json` output (`import::kubernetes::parse`): one code
//! path for files and the API. All the I/O is here; the importer and
//! `import::capacity` stay pure.
//!
//! A kind the credentials may not list (403) is noted by name and the
//! rest goes on; the input is then incomplete, so a merge removes nothing.
//! A `continue` token that expired (410 Gone) restarts that kind's list
//! from the beginning once; a second expiry fails, naming the kind.

use std::path::Path;
use std::time::Duration;

use kube::config::{KubeConfigOptions, Kubeconfig};
use serde_json::{json, Value};

use crate::prom_client::error_chain;

/// One kind, as the API serves it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Resource {
    pub kind: &'static str,
    /// `v1` for the core group, else `group/version`.
    pub api_version: &'static str,
    /// The path segment (and what `kubectl get` calls it).
    pub plural: &'static str,
}

impl Resource {
    /// The collection path across all namespaces (or of the cluster-wide
    /// kind).
    pub fn path(&self) -> String {
        if self.api_version == "v1" {
            format!("/api/v1/{}", self.plural)
        } else {
            format!("/apis/{}/{}", self.api_version, self.plural)
        }
    }
}

const fn res(kind: &'static str, api_version: &'static str, plural: &'static str) -> Resource {
    Resource {
        kind,
        api_version,
        plural,
    }
}

/// What is read, in this order: the workloads, what resolves their
/// addresses, data and local storage, and the nodes (free capacity; the
/// importer counts them and leaves them aside). Each at the API version
/// every supported Kubernetes serves.
pub const RESOURCES: [Resource; 12] = [
    res("Deployment", "apps/v1", "deployments"),
    res("StatefulSet", "apps/v1", "statefulsets"),
    res("DaemonSet", "apps/v1", "daemonsets"),
    res("ReplicaSet", "apps/v1", "replicasets"),
    res("ReplicationController", "v1", "replicationcontrollers"),
    res("Pod", "v1", "pods"),
    res("Service", "v1", "services"),
    res("ConfigMap", "v1", "configmaps"),
    res("PersistentVolumeClaim", "v1", "persistentvolumeclaims"),
    res("PersistentVolume", "v1", "persistentvolumes"),
    res("StorageClass", "storage.k8s.io/v1", "storageclasses"),
    res("Node", "v1", "nodes"),
];

/// Objects per page unless told otherwise: kubectl's own `--chunk-size`
/// default, which API servers are tuned for (a page of 500 pods is a few
/// MB).
pub const DEFAULT_PAGE_SIZE: u32 = 500;

/// How long one page may take to arrive once asked for. A page of 500
/// objects takes well under a second on a healthy API server; a minute
/// covers a loaded one, and an import or a tick never hangs for ever on a
/// dead connection.
const READ_TIMEOUT: Duration = Duration::from_secs(60);

/// The pages of one kind, read to the end.
#[derive(Clone, Debug)]
pub struct Listed {
    pub resource: Resource,
    /// `metadata.resourceVersion` of the last page: the list's version.
    pub resource_version: Option<String>,
    pub items: Vec<Value>,
    /// Requests made for it (pages, restarts included).
    pub requests: usize,
    /// The list was restarted after its `continue` token expired.
    pub restarted: bool,
}

/// Everything read in one pass.
#[derive(Clone, Debug)]
pub struct Snapshot {
    /// The context (or `in-cluster`): part of every input's name.
    pub context: String,
    pub lists: Vec<Listed>,
    /// Kinds the credentials may not list, with the API server's message.
    pub forbidden: Vec<(Resource, String)>,
    /// When the pass ended (Unix seconds): what the nodes and pods say
    /// was true then.
    pub read_at: i64,
}

impl Snapshot {
    /// One `List` document per kind, named `api:<context>/<plural>`, in
    /// the shape `kubectl get <plural> -A -o json` prints (items keep
    /// what the server sent; the importer takes their kind from the
    /// list's, as the API server leaves it out of list items).
    pub fn inputs(&self) -> Vec<(String, String)> {
        self.lists
            .iter()
            .map(|l| {
                let doc = json!({
                    "apiVersion": l.resource.api_version,
                    "kind": format!("{}List", l.resource.kind),
                    "metadata": {"resourceVersion": l.resource_version},
                    "items": l.items,
                });
                (
                    format!("api:{}/{}", self.context, l.resource.plural),
                    doc.to_string(),
                )
            })
            .collect()
    }

    /// Lines for people: what could not be read, and lists restarted.
    pub fn notes(&self) -> Vec<String> {
        let mut out: Vec<String> = self
            .forbidden
            .iter()
            .map(|(r, m)| {
                format!(
                    "{} ({}) not read: the credentials of context {} may not list them (403: {m}); the rest was imported, and nothing is removed from the estate",
                    r.kind, r.plural, self.context
                )
            })
            .collect();
        for l in self.lists.iter().filter(|l| l.restarted) {
            out.push(format!(
                "{}: the list's continue token expired (410 Gone) while paging; listed again from the start",
                l.resource.plural
            ));
        }
        out
    }

    /// Every kind was read.
    pub fn complete(&self) -> bool {
        self.forbidden.is_empty()
    }

    /// The items of one kind, `None` when it was not read.
    pub fn items(&self, kind: &str) -> Option<&[Value]> {
        self.lists
            .iter()
            .find(|l| l.resource.kind == kind)
            .map(|l| l.items.as_slice())
    }

    /// Requests made in all.
    pub fn requests(&self) -> usize {
        self.lists.iter().map(|l| l.requests).sum::<usize>() + self.forbidden.len()
    }
}

/// A connection to one cluster's API server.
#[derive(Clone)]
pub struct KubeSource {
    client: kube::Client,
    /// The context's name, or `in-cluster`.
    pub context: String,
    /// The API server's URL, for messages.
    pub server: String,
    page_size: u32,
}

impl std::fmt::Debug for KubeSource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // The client holds the credentials: never shown.
        f.debug_struct("KubeSource")
            .field("context", &self.context)
            .field("server", &self.server)
            .field("page_size", &self.page_size)
            .finish_non_exhaustive()
    }
}

/// The environment variable Kubernetes sets in every pod: its presence
/// says the process runs in one.
const IN_CLUSTER_ENV: &str = "KUBERNETES_SERVICE_HOST";

impl KubeSource {
    /// Connect through `kubeconfig` (a file), else the usual resolution
    /// (`KUBECONFIG`, then `~/.kube/config`), using `context` or the
    /// file's current context; with neither flag and no kubeconfig, the
    /// pod's service account when running in a pod. Nothing is sent yet.
    pub async fn connect(
        kubeconfig: Option<&Path>,
        context: Option<&str>,
        page_size: u32,
    ) -> Result<KubeSource, String> {
        let (mut config, label) = match kubeconfig {
            Some(path) => {
                let kc = Kubeconfig::read_from(path).map_err(|e| {
                    format!(
                        "{}: not a readable kubeconfig: {}",
                        path.display(),
                        error_chain(&e)
                    )
                })?;
                from_kubeconfig(kc, &path.display().to_string(), context).await?
            }
            None => {
                let where_ = match std::env::var_os("KUBECONFIG").filter(|v| !v.is_empty()) {
                    Some(v) => format!("KUBECONFIG={}", v.to_string_lossy()),
                    None => "~/.kube/config".to_string(),
                };
                match Kubeconfig::read() {
                    Ok(kc) => from_kubeconfig(kc, &where_, context).await?,
                    Err(e) if context.is_none() && std::env::var_os(IN_CLUSTER_ENV).is_some() => {
                        tracing::debug!("no kubeconfig ({}): in-cluster config", error_chain(&e));
                        let c = kube::Config::incluster().map_err(|e| {
                            format!(
                                "in-cluster Kubernetes config (no kubeconfig at {where_}): {}",
                                error_chain(&e)
                            )
                        })?;
                        (c, "in-cluster".to_string())
                    }
                    Err(e) => {
                        return Err(format!(
                            "no kubeconfig to read at {where_}: {}; give --kubeconfig PATH{}",
                            error_chain(&e),
                            if context.is_none() {
                                ", or run inside a pod"
                            } else {
                                ""
                            }
                        ))
                    }
                }
            }
        };
        config.read_timeout = Some(READ_TIMEOUT);
        let server = config.cluster_url.to_string();
        let client = kube::Client::try_from(config).map_err(|e| {
            format!(
                "{server}: cannot set up the Kubernetes client: {}",
                error_chain(&e)
            )
        })?;
        Ok(KubeSource {
            client,
            context: label,
            server,
            page_size: page_size.max(1),
        })
    }

    /// Read every kind of [`RESOURCES`], page by page.
    pub async fn read(&self) -> Result<Snapshot, String> {
        let mut lists = Vec::new();
        let mut forbidden = Vec::new();
        for r in RESOURCES {
            match self.list(r).await? {
                Ok(l) => lists.push(l),
                Err(message) => forbidden.push((r, message)),
            }
        }
        Ok(Snapshot {
            context: self.context.clone(),
            lists,
            forbidden,
            read_at: chrono::Utc::now().timestamp(),
        })
    }

    /// One kind to the end: `Ok(Err(message))` when it is forbidden.
    async fn list(&self, r: Resource) -> Result<Result<Listed, String>, String> {
        let mut listed = Listed {
            resource: r,
            resource_version: None,
            items: Vec::new(),
            requests: 0,
            restarted: false,
        };
        let mut token: Option<String> = None;
        loop {
            let mut query = url::form_urlencoded::Serializer::new(String::new());
            query.append_pair("limit", &self.page_size.to_string());
            if let Some(t) = &token {
                query.append_pair("continue", t);
            }
            let uri = format!("{}?{}", r.path(), query.finish());
            let request = http::Request::get(uri.as_str())
                .header("accept", "application/json")
                .body(Vec::new())
                .map_err(|e| format!("{}{uri}: {e}", self.server))?;
            listed.requests += 1;
            let page: Value = match self.client.request::<Value>(request).await {
                Ok(page) => page,
                Err(kube::Error::Api(s)) if s.code == 403 => {
                    return Ok(Err(if s.message.is_empty() {
                        s.reason.clone()
                    } else {
                        s.message.clone()
                    }));
                }
                Err(kube::Error::Api(s)) if s.code == 410 && token.is_some() => {
                    if listed.restarted {
                        return Err(format!(
                            "{}: listing {} ({}): the continue token expired (410 Gone) twice, also after listing again from the start; the API server compacts faster than {} objects a page can be read: try a larger --page-size",
                            self.where_(),
                            r.plural,
                            r.kind,
                            self.page_size
                        ));
                    }
                    tracing::info!(kind = r.kind, "continue token expired (410); listing again");
                    listed.restarted = true;
                    listed.items.clear();
                    token = None;
                    continue;
                }
                Err(kube::Error::Api(s)) => {
                    return Err(format!(
                        "{}: listing {} ({}): {} {}: {}",
                        self.where_(),
                        r.plural,
                        r.path(),
                        s.code,
                        s.reason,
                        s.message
                    ))
                }
                Err(e) => {
                    return Err(format!(
                        "{}: listing {} ({}): {}",
                        self.where_(),
                        r.plural,
                        r.path(),
                        error_chain(&e)
                    ))
                }
            };
            let Some(Value::Array(items)) = page.get("items") else {
                return Err(format!(
                    "{}: listing {}: the answer is not a list (no items array)",
                    self.where_(),
                    r.plural
                ));
            };
            listed.items.extend(items.iter().cloned());
            let meta = page.get("metadata");
            listed.resource_version = meta
                .and_then(|m| m.get("resourceVersion"))
                .and_then(Value::as_str)
                .map(str::to_string);
            token = meta
                .and_then(|m| m.get("continue"))
                .and_then(Value::as_str)
                .filter(|t| !t.is_empty())
                .map(str::to_string);
            if token.is_none() {
                return Ok(Ok(listed));
            }
        }
    }

    /// `context NAME (URL)` for messages.
    fn where_(&self) -> String {
        format!("context {} ({})", self.context, self.server)
    }
}

/// A client configuration from a kubeconfig read at `where_`, for
/// `context` or its current context; an unknown context is named with
/// the ones the file has.
async fn from_kubeconfig(
    kc: Kubeconfig,
    where_: &str,
    context: Option<&str>,
) -> Result<(kube::Config, String), String> {
    let names: Vec<String> = kc.contexts.iter().map(|c| c.name.clone()).collect();
    let list = || {
        if names.is_empty() {
            "it has none".to_string()
        } else {
            format!("it has {}", names.join(", "))
        }
    };
    let name = match context.map(str::to_string).or(kc.current_context.clone()) {
        Some(n) if !n.is_empty() => n,
        _ => {
            return Err(format!(
                "{where_}: no current context; give --context NAME ({})",
                list()
            ))
        }
    };
    if !names.contains(&name) {
        return Err(format!("{where_}: no context {name:?} ({})", list()));
    }
    let options = KubeConfigOptions {
        context: Some(name.clone()),
        ..KubeConfigOptions::default()
    };
    let config = kube::Config::from_custom_kubeconfig(kc, &options)
        .await
        .map_err(|e| format!("{where_}: context {name:?}: {}", error_chain(&e)))?;
    Ok((config, name))
}
