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
//! rest goes on; the input is then incomplete, so a merge removes nothing,
//! and the API's `Status` answer goes to the importer with the lists, so
//! it knows which facts it could not read (and keeps what an earlier
//! import wrote for them). When no workload kind at all can be listed the
//! read fails, naming the kinds and who the API server says the
//! credentials are. A `continue` token that expired (410 Gone) restarts
//! that kind's list from the beginning once; a second expiry fails,
//! naming the kind. Every request says who sends it (`User-Agent`).

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

/// The most one answer of the API server may hold, checked from its
/// `Content-Length` and again while it is read: a page of 500 pods is a
/// few MB (their managed fields included), so 64 MiB is room for 500
/// objects of 128 KiB each, while an answer that would never end (a
/// broken proxy, a hostile server) cannot take the agent's memory. The
/// message then suggests a smaller `--page-size`.
pub const ANSWER_LIMIT: usize = 64 * 1024 * 1024;

/// How long a connection (TCP and TLS) may take: an API server answers in
/// milliseconds; 30 s is kubectl's own default.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(30);

/// The kinds that become services: when none of them can be listed
/// nothing was read, and the read fails instead of importing nothing.
const WORKLOAD_KINDS: [&str; 6] = [
    "Deployment",
    "StatefulSet",
    "DaemonSet",
    "ReplicaSet",
    "ReplicationController",
    "Pod",
];

/// `berth/VERSION (ROLE; estate ESTATE)`: the `User-Agent` of every
/// request, so an operator can attribute Berth's reads in the API
/// server's audit log and in API Priority and Fairness. `role` is
/// `import` or `agent`; characters a header may not carry become `?`.
pub fn user_agent(role: &str, estate: &str) -> String {
    let estate: String = estate
        .chars()
        .map(|c| {
            if c.is_ascii_graphic() || c == ' ' {
                c
            } else {
                '?'
            }
        })
        .collect();
    format!(
        "berth/{} ({role}; estate {estate})",
        env!("CARGO_PKG_VERSION")
    )
}

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
    /// list's, as the API server leaves it out of list items); for each
    /// kind that could not be listed, the API server's `Status` answer
    /// (403 Forbidden, `details.kind` the plural), so the importer knows
    /// which facts it could not read.
    pub fn inputs(&self) -> Vec<(String, String)> {
        let lists = self.lists.iter().map(|l| {
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
        });
        let refused = self.forbidden.iter().map(|(r, message)| {
            let group = r.api_version.rsplit_once('/').map_or("", |(g, _)| g);
            let doc = json!({
                "kind": "Status",
                "apiVersion": "v1",
                "metadata": {},
                "status": "Failure",
                "message": message,
                "reason": "Forbidden",
                "details": {"group": group, "kind": r.plural},
                "code": 403,
            });
            (
                format!("api:{}/{}", self.context, r.plural),
                doc.to_string(),
            )
        });
        lists.chain(refused).collect()
    }

    /// Lines for people: what could not be read, and lists restarted.
    pub fn notes(&self) -> Vec<String> {
        let mut out: Vec<String> = self
            .forbidden
            .iter()
            .map(|(r, m)| {
                format!(
                    "{} ({}) not read: the credentials of context {} may not list them (403: {m}); the rest was imported, nothing is removed from the estate, and {}",
                    r.kind,
                    r.plural,
                    self.context,
                    left_alone(r.kind)
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

/// What an unread kind leaves alone, for the notes.
fn left_alone(kind: &str) -> &'static str {
    match kind {
        "PersistentVolumeClaim" | "PersistentVolume" | "StorageClass" => {
            "the data size and local volumes of services that use claims keep their earlier values (a new such service gets them unknown, with this reason)"
        }
        "ConfigMap" => "flows from addresses in ConfigMap values keep what an earlier import wrote",
        "Service" => "flows to Services keep what an earlier import wrote",
        "Node" => "free capacity is not measured (the estate keeps its last figure)",
        "Pod" => {
            "bare Pods keep what an earlier import wrote, and free capacity is not measured (the estate keeps its last figure)"
        }
        _ => "services of that kind keep what an earlier import wrote",
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
    /// Where the settings came from (a kubeconfig, or the pod's service
    /// account), for messages.
    pub origin: String,
    page_size: u32,
    /// Sent on every request.
    user_agent: String,
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
        user_agent: String,
    ) -> Result<KubeSource, String> {
        let mut origin = match kubeconfig {
            Some(path) => path.display().to_string(),
            None => match std::env::var_os("KUBECONFIG").filter(|v| !v.is_empty()) {
                Some(v) => format!("KUBECONFIG={}", v.to_string_lossy()),
                None => "~/.kube/config".to_string(),
            },
        };
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
                        origin = "the pod's service account (/var/run/secrets/kubernetes.io/serviceaccount/)".to_string();
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
        config.connect_timeout = Some(CONNECT_TIMEOUT);
        let server = config.cluster_url.to_string();
        // The same address policy as for Prometheus: an API server is on
        // loopback or a private network, never at a link-local (cloud
        // metadata) or unspecified address. An IP literal is checked here;
        // kube resolves names itself.
        let literal = config.cluster_url.host().and_then(|h| {
            h.trim_matches(|c| c == '[' || c == ']')
                .parse::<std::net::IpAddr>()
                .ok()
        });
        if let Some(ip) = literal {
            crate::external::address::check_configured_target(ip).map_err(|why| {
                format!("{server}: {ip} is {why}: Berth does not connect there; check the server URL of the context")
            })?;
        }
        let client = kube::Client::try_from(config).map_err(|e| {
            format!(
                "{server}: cannot set up the Kubernetes client: {}",
                error_chain(&e)
            )
        })?;
        http::HeaderValue::from_str(&user_agent)
            .map_err(|e| format!("User-Agent {user_agent:?}: {e}"))?;
        Ok(KubeSource {
            client,
            context: label,
            server,
            origin,
            page_size: page_size.max(1),
            user_agent,
        })
    }

    /// One request's JSON answer, as `kube::Client::request` reads it
    /// (an error status becomes `kube::Error::Api` with the server's
    /// `Status`), but never more than [`ANSWER_LIMIT`] bytes of it: a
    /// declared length over it is refused before reading, and the read
    /// stops as soon as the bytes pass it.
    async fn request_json(&self, request: http::Request<Vec<u8>>) -> Result<Value, kube::Error> {
        use http_body_util::BodyExt;
        let limit = ANSWER_LIMIT;
        let too_large = |what: String| {
            kube::Error::Service(
                format!(
                    "the answer {what}, over the {} MiB Berth reads of one answer: try a smaller --page-size",
                    limit / (1024 * 1024)
                )
                .into(),
            )
        };
        let res = self
            .client
            .send(request.map(kube::client::Body::from))
            .await?;
        let status = res.status();
        let declared = res
            .headers()
            .get(http::header::CONTENT_LENGTH)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.parse::<u64>().ok());
        if let Some(n) = declared.filter(|&n| n > limit as u64) {
            return Err(too_large(format!("declares {n} bytes")));
        }
        let mut body = res.into_body();
        let mut bytes: Vec<u8> = Vec::new();
        while let Some(frame) = body.frame().await {
            let frame = frame?;
            if let Some(data) = frame.data_ref() {
                if bytes.len() + data.len() > limit {
                    return Err(too_large(format!("passed {limit} bytes")));
                }
                bytes.extend_from_slice(data);
            }
        }
        if status.is_client_error() || status.is_server_error() {
            let text = String::from_utf8_lossy(&bytes);
            let s = match serde_json::from_str::<kube::core::Status>(&text) {
                Ok(s) => s,
                // As kube words an answer that is not a `Status`.
                Err(_) => kube::core::Status::failure(text.trim(), "Failed to parse error data")
                    .with_code(status.as_u16()),
            };
            return Err(kube::Error::Api(s.boxed()));
        }
        serde_json::from_slice(&bytes).map_err(kube::Error::SerdeError)
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
        if !lists
            .iter()
            .any(|l| WORKLOAD_KINDS.contains(&l.resource.kind))
        {
            return Err(self.nothing_readable(&lists, &forbidden).await);
        }
        Ok(Snapshot {
            context: self.context.clone(),
            lists,
            forbidden,
            read_at: chrono::Utc::now().timestamp(),
        })
    }

    /// Why a read that could list no workload kind fails: the kinds, what
    /// was readable, and who the API server says the credentials are.
    async fn nothing_readable(&self, lists: &[Listed], forbidden: &[(Resource, String)]) -> String {
        let kinds: Vec<&str> = forbidden
            .iter()
            .filter(|(r, _)| WORKLOAD_KINDS.contains(&r.kind))
            .map(|(r, _)| r.plural)
            .collect();
        let others: Vec<&str> = forbidden
            .iter()
            .filter(|(r, _)| !WORKLOAD_KINDS.contains(&r.kind))
            .map(|(r, _)| r.plural)
            .collect();
        let readable: Vec<&str> = lists.iter().map(|l| l.resource.plural).collect();
        let mut out = format!(
            "{}: nothing to import: the credentials of context {} (from {}) may list none of the kinds services are made of ({}: each 403 Forbidden)",
            self.where_(),
            self.context,
            self.origin,
            kinds.join(", ")
        );
        if !others.is_empty() {
            out.push_str(&format!("; also forbidden: {}", others.join(", ")));
        }
        if !readable.is_empty() {
            out.push_str(&format!("; readable: {}", readable.join(", ")));
        }
        out.push_str(&format!(
            ". {}. Nothing was written. Bind them to a role that may get and list those kinds (docs/kubernetes-import.md, Permissions)",
            self.identity().await
        ));
        out
    }

    /// Who the API server says these credentials are, in words: a
    /// `SelfSubjectReview` (`authentication.k8s.io` v1 from Kubernetes
    /// 1.28, v1beta1 in 1.27); an older server, or one that refuses,
    /// is said so.
    async fn identity(&self) -> String {
        let mut why = String::new();
        for version in ["v1", "v1beta1"] {
            let uri = format!("/apis/authentication.k8s.io/{version}/selfsubjectreviews");
            let body = json!({"apiVersion": format!("authentication.k8s.io/{version}"), "kind": "SelfSubjectReview"});
            let request = http::Request::post(uri.as_str())
                .header("accept", "application/json")
                .header("content-type", "application/json")
                .header("user-agent", self.user_agent.as_str())
                .body(body.to_string().into_bytes());
            let Ok(request) = request else {
                continue;
            };
            match self.request_json(request).await {
                Ok(answer) => {
                    let user = answer.pointer("/status/userInfo");
                    let name = user
                        .and_then(|u| u.get("username"))
                        .and_then(Value::as_str)
                        .unwrap_or("");
                    if name.is_empty() {
                        return "The API server does not name the user (its SelfSubjectReview answer has no username)".to_string();
                    }
                    let groups: Vec<&str> = user
                        .and_then(|u| u.get("groups"))
                        .and_then(Value::as_array)
                        .map(|g| g.iter().filter_map(Value::as_str).collect())
                        .unwrap_or_default();
                    return if groups.is_empty() {
                        format!("The API server says they are user {name:?}")
                    } else {
                        format!(
                            "The API server says they are user {name:?} (groups {})",
                            groups.join(", ")
                        )
                    };
                }
                Err(kube::Error::Api(s)) if s.code == 404 => {
                    why = format!("{} {}", s.code, s.reason);
                }
                Err(kube::Error::Api(s)) => {
                    return format!(
                        "Who they are is not known: the API server refused to say (SelfSubjectReview: {} {})",
                        s.code, s.reason
                    );
                }
                Err(e) => {
                    return format!(
                        "Who they are is not known: SelfSubjectReview failed: {}",
                        error_chain(&e)
                    )
                }
            }
        }
        format!("Who they are is not known: this API server serves no SelfSubjectReview (Kubernetes before 1.27; {why})")
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
                .header("user-agent", self.user_agent.as_str())
                .body(Vec::new())
                .map_err(|e| format!("{}{uri}: {e}", self.server))?;
            listed.requests += 1;
            let page: Value = match self.request_json(request).await {
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
                            "{}: listing {} ({}): the continue token expired (410 Gone) twice, also after listing again from the start; the API server compacts faster than {} object{} a page can be read: try a larger --page-size",
                            self.where_(),
                            r.plural,
                            r.kind,
                            self.page_size,
                            if self.page_size == 1 { "" } else { "s" }
                        ));
                    }
                    tracing::info!(kind = r.kind, "continue token expired (410); listing again");
                    listed.restarted = true;
                    listed.items.clear();
                    token = None;
                    continue;
                }
                Err(e) => return Err(self.failure(r, &e)),
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

    /// A request for `r` that failed, in words that say what to check;
    /// whatever the API server said is quoted terminal-safe (control and
    /// bidirectional characters escaped), as every answer from outside.
    fn failure(&self, r: Resource, e: &kube::Error) -> String {
        crate::external::terminal_safe(&self.failure_text(r, e))
    }

    fn failure_text(&self, r: Resource, e: &kube::Error) -> String {
        let at = format!("{}: listing {} ({})", self.where_(), r.plural, r.path());
        let (ctx, origin) = (&self.context, &self.origin);
        match e {
            kube::Error::Api(s) if s.code == 401 => format!(
                "{at}: 401 Unauthorized: the API server does not accept the credentials of context {ctx} (from {origin}): check its user's token or client certificate (wrong, expired, revoked, or for another cluster)"
            ),
            // kube's reason when the body is not a `Status`: not an API
            // server's answer.
            kube::Error::Api(s) if s.reason == "Failed to parse error data" => {
                let body: String = s.message.chars().take(160).collect();
                if s.message.contains("HTTP request to an HTTPS server") {
                    format!(
                        "{at}: {}: the server speaks HTTPS but the server URL of context {ctx} (from {origin}) says http://: write https:// ({body:?})",
                        s.code
                    )
                } else {
                    format!(
                        "{at}: {}: the answer is not a Kubernetes API error ({body:?}): is {} the cluster's API server, with the right scheme and port (the server URL of context {ctx} in {origin})?",
                        s.code, self.server
                    )
                }
            }
            kube::Error::Api(s) => format!("{at}: {} {}: {}", s.code, s.reason, s.message),
            other => {
                let chain = error_chain(other);
                let lower = chain.to_ascii_lowercase();
                if chain.contains("UnknownIssuer")
                    || lower.contains("invalid peer certificate")
                    || lower.contains("certificate verify failed")
                {
                    format!(
                        "{at}: the API server's TLS certificate is not signed by a CA that context {ctx} trusts ({chain}): check certificate-authority or certificate-authority-data of its cluster in {origin}"
                    )
                } else if lower.contains("timed out") || lower.contains("elapsed") {
                    // hyper's client names the step: `client error
                    // (Connect)` while connecting, `(SendRequest)` once
                    // connected — whose "connection error: timed out" is
                    // the read timeout, not a failure to connect.
                    if lower.contains("client error (connect)") {
                        format!(
                            "{at}: no connection within {} s (connecting to {}): is the server URL of context {ctx} in {origin} reachable from here? ({chain})",
                            CONNECT_TIMEOUT.as_secs(),
                            self.server
                        )
                    } else {
                        format!(
                            "{at}: connected, but no answer within {} s (waiting for a page of {} object{}): the API server is overloaded or the connection is stuck; try again, or a smaller --page-size ({chain})",
                            READ_TIMEOUT.as_secs(),
                            self.page_size,
                            if self.page_size == 1 { "" } else { "s" }
                        )
                    }
                } else {
                    format!("{at}: {chain}")
                }
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
