//! Querying Prometheus's HTTP API (`GET /api/v1/query`) for the mesh
//! importer and the agent. Only transport lives here; what a response
//! means is `import::prometheus`, which is pure.

use std::time::Duration;

use serde_json::Value;

use crate::import::prometheus::{self, QueryError, QueryResult, Reading, Results};

/// How long one query may take, connection included. Prometheus's own
/// default query timeout is 2 minutes, but these are small aggregations
/// that answer in well under a second on a healthy server; 30 s leaves
/// room for a loaded one without stalling an agent tick for minutes.
pub const QUERY_TIMEOUT: Duration = Duration::from_secs(30);

/// The largest response body read. A mesh of 10,000 workload edges
/// answers in about 3 MB; 16 MiB is five times that, and also what one
/// observations batch may carry (`http::extract::FACTS_BODY_LIMIT`), so
/// anything bigger could not be sent anyway. (It was 64 MiB: a
/// 300,000-series answer then took 1.6 GiB to parse.)
pub const MAX_RESPONSE_BYTES: usize = 16 * 1024 * 1024;

/// How long connecting may take: a Prometheus that does not accept within
/// 10 s is down, and the agent's tick should say so rather than wait the
/// whole query timeout.
pub const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

/// Resolves a Prometheus host and refuses the whole lookup when any
/// answer is an address no configured server lives at
/// ([`crate::external::address::check_configured_target`]): reqwest's
/// own resolver would connect to whatever DNS says.
struct CheckedResolver;

impl reqwest::dns::Resolve for CheckedResolver {
    fn resolve(&self, name: reqwest::dns::Name) -> reqwest::dns::Resolving {
        Box::pin(async move {
            let host = name.as_str().to_string();
            let addrs: Vec<std::net::SocketAddr> =
                tokio::net::lookup_host((host.as_str(), 0)).await?.collect();
            for a in &addrs {
                if let Err(why) = crate::external::address::check_configured_target(a.ip()) {
                    return Err(format!(
                        "{} resolves to {} ({why}): Berth does not connect there",
                        crate::external::terminal_safe(&host),
                        a.ip()
                    )
                    .into());
                }
            }
            Ok(Box::new(addrs.into_iter()) as reqwest::dns::Addrs)
        })
    }
}

/// Why a query gave nothing usable.
#[derive(Debug)]
pub enum FetchError {
    /// Prometheus could not be reached, or answered with something that is
    /// not a query response (a proxy's error page, a timeout).
    Unreachable { query: String, message: String },
    /// A response that cannot be used, Prometheus's own errors included.
    Query(QueryError),
}

impl FetchError {
    /// Worth trying again later (the next tick of an agent).
    pub fn is_transient(&self) -> bool {
        match self {
            FetchError::Unreachable { .. } => true,
            FetchError::Query(q) => q.is_transient(),
        }
    }
}

impl std::fmt::Display for FetchError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            // Whatever the server said is quoted terminal-safe: an answer
            // with ESC or U+202E must not act on the reader's terminal.
            FetchError::Unreachable { query, message } => write!(
                f,
                "{} query: {}",
                crate::external::terminal_safe(query),
                crate::external::terminal_safe(message)
            ),
            FetchError::Query(q) => write!(f, "{}", crate::external::terminal_safe(&q.to_string())),
        }
    }
}

/// A Prometheus server to query.
#[derive(Clone, Debug)]
pub struct PromClient {
    http: reqwest::Client,
    /// Base URL without a trailing slash, e.g. `http://prometheus:9090`.
    base: String,
}

/// Check a server URL: `http://` or `https://` (TLS through rustls, with
/// the Mozilla root certificates built in), trailing slash dropped.
pub fn check_url(what: &str, url: &str) -> Result<String, String> {
    let trimmed = url.trim_end_matches('/');
    let rest = trimmed
        .strip_prefix("http://")
        .or_else(|| trimmed.strip_prefix("https://"));
    match rest {
        Some("") => Err(format!("{what} {url:?}: no host")),
        Some(_) => Ok(trimmed.to_string()),
        None => Err(format!(
            "{what} {url:?}: expected an http:// or https:// URL, e.g. http://127.0.0.1:9090"
        )),
    }
}

impl PromClient {
    /// A client for the Prometheus at `url`: no redirects followed (a 3xx
    /// is an error naming where it pointed), no proxy from the
    /// environment, every address checked before connecting
    /// ([`CheckedResolver`]; an IP literal here), answers of at most
    /// [`MAX_RESPONSE_BYTES`] within [`QUERY_TIMEOUT`].
    pub fn new(url: &str) -> Result<PromClient, String> {
        let base = check_url("Prometheus URL", url)?;
        if let Ok(parsed) = url::Url::parse(&base) {
            let literal = match parsed.host() {
                Some(url::Host::Ipv4(ip)) => Some(std::net::IpAddr::V4(ip)),
                Some(url::Host::Ipv6(ip)) => Some(std::net::IpAddr::V6(ip)),
                _ => None,
            };
            if let Some(ip) = literal {
                crate::external::address::check_configured_target(ip).map_err(|why| {
                    format!(
                        "Prometheus URL {:?}: {ip} is {why}: Berth does not connect there",
                        crate::external::terminal_safe(url)
                    )
                })?;
            }
        }
        let http = reqwest::Client::builder()
            .timeout(QUERY_TIMEOUT)
            .connect_timeout(CONNECT_TIMEOUT)
            .redirect(reqwest::redirect::Policy::none())
            .no_proxy()
            .dns_resolver(std::sync::Arc::new(CheckedResolver))
            .build()
            .map_err(|e| format!("cannot build an HTTP client: {e}"))?;
        Ok(PromClient { http, base })
    }

    /// Run one instant query evaluated at `time` (seconds since 1970), so
    /// that all queries of one import describe the same moment.
    pub async fn query(
        &self,
        name: &str,
        query: &str,
        time: i64,
        reading: &Reading,
    ) -> Result<QueryResult, FetchError> {
        let v = self.query_raw(name, query, time).await?;
        prometheus::parse_response(name, "", &v, reading).map_err(FetchError::Query)
    }

    /// One instant query's answer as Prometheus gave it (any JSON it
    /// sent, errors included), for readers of other shapes than flows.
    pub async fn query_raw(&self, name: &str, query: &str, time: i64) -> Result<Value, FetchError> {
        let unreachable = |message: String| FetchError::Unreachable {
            query: name.to_string(),
            message,
        };
        let url = format!("{}/api/v1/query", self.base);
        let mut resp = self
            .http
            .get(&url)
            .query(&[("query", query), ("time", &time.to_string())])
            .send()
            .await
            // Without the URL: it is long (the query) and said already.
            .map_err(|e| {
                unreachable(format!(
                    "cannot reach {}: {}",
                    self.base,
                    error_chain(&e.without_url())
                ))
            })?;
        let status = resp.status();
        if status.is_redirection() {
            let to = resp
                .headers()
                .get(reqwest::header::LOCATION)
                .map(|v| String::from_utf8_lossy(v.as_bytes()).into_owned())
                .unwrap_or_else(|| "nowhere (no Location)".into());
            return Err(unreachable(format!(
                "{} answered HTTP {status}, a redirect to {}: Berth follows no redirects (they could lead anywhere, a cloud metadata address included); give the final Prometheus URL",
                self.base,
                crate::external::excerpt(&to)
            )));
        }
        if resp
            .content_length()
            .is_some_and(|n| n > MAX_RESPONSE_BYTES as u64)
        {
            return Err(unreachable(format!(
                "the answer is larger than {} MiB: narrow the query",
                MAX_RESPONSE_BYTES / (1024 * 1024)
            )));
        }
        let mut body = Vec::new();
        while let Some(chunk) = resp
            .chunk()
            .await
            .map_err(|e| unreachable(format!("reading the answer: {}", error_chain(&e))))?
        {
            if body.len() + chunk.len() > MAX_RESPONSE_BYTES {
                return Err(unreachable(format!(
                    "the answer is larger than {} MiB: narrow the query",
                    MAX_RESPONSE_BYTES / (1024 * 1024)
                )));
            }
            body.extend_from_slice(&chunk);
        }
        // Prometheus answers its own errors (bad query: 400, timeout: 503,
        // …) with a JSON body saying what; anything else is not from it.
        serde_json::from_slice(&body).map_err(|_| {
            let head = &body[..body.len().min(200)];
            unreachable(format!(
                "HTTP {status} from {url} is not a Prometheus query response: {:?}",
                crate::external::excerpt_bytes(head)
            ))
        })
    }

    /// Run the reading's queries at `time`.
    pub async fn fetch(&self, reading: &Reading, time: i64) -> Result<Results, FetchError> {
        let q = &reading.queries;
        let optional = |name: &'static str, query: &Option<String>| {
            let query = query.clone();
            async move {
                match query {
                    Some(query) => self.query(name, &query, time, reading).await.map(Some),
                    None => Ok(None),
                }
            }
        };
        Ok(Results {
            rate: self.query("rate", &q.rate, time, reading).await?,
            duration: self.query("duration", &q.duration, time, reading).await?,
            bytes: optional("bytes", &q.bytes).await?,
            coverage: optional("coverage", &q.coverage).await?,
        })
    }
}

/// An error and its causes, on one line: reqwest's top-level message
/// ("error sending request") hides the useful part (connection refused).
pub fn error_chain(e: &dyn std::error::Error) -> String {
    let mut s = e.to_string();
    let mut cur = e.source();
    while let Some(c) = cur {
        let t = c.to_string();
        if !s.contains(&t) {
            s.push_str(": ");
            s.push_str(&t);
        }
        cur = c.source();
    }
    s
}
