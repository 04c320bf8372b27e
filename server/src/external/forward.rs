//! The one outbound call to an external decider: a POST of a prepared
//! JSON body to the decider's stored URL, and its reply or a typed error.
//!
//! This is the only code in Berth that reaches out of the box on behalf
//! of a user, so it is built to be unexploitable rather than convenient
//! (SPEC §9 "Forwarding is safe"):
//!
//! * **Only checked addresses are connected to.** The host is resolved
//!   once per call through the injected [`Resolve`]r (IP literals are not
//!   resolved at all), *every* answer is checked with [`check_addr`], and
//!   the TCP connection is opened by this module to one of those checked
//!   socket addresses. If any answer is refused the whole call is refused
//!   — not just that answer skipped — because a name that resolves into a
//!   blocked range is either misconfigured or an attack, and "try the
//!   good one first" still leaks the blocked one on the next failover.
//! * **No HTTP client logic that could undo that.** The HTTP/1.1 exchange
//!   runs over that socket with `hyper`'s connection-level client
//!   (`hyper::client::conn::http1`), which has no resolver, no proxy
//!   support, no redirect following and no decompression to switch off.
//!   We chose this over `reqwest` (already a dependency) because with
//!   reqwest each of those is a setting that must stay right and a path
//!   (IP-literal URLs skip custom resolvers) that must be proved closed;
//!   here they do not exist. TLS is `tokio-rustls` with the Mozilla
//!   (webpki) roots, SNI and certificate name = the URL's host.
//! * **Limits**: the request body is checked before anything is sent; the
//!   reply body is counted while read — a declared `content-length` over
//!   the limit stops before reading, a streamed one as soon as the running
//!   total passes it. The timeout is total: waiting for a slot, resolving,
//!   connecting, TLS, sending and reading the last byte all count, so a
//!   reply that trickles ends at the timeout.
//! * **A cap on concurrent calls** (a semaphore): a call beyond the cap
//!   waits for a slot, but only within its own timeout; if none frees up
//!   in time it fails with [`ForwardError::Busy`] without having contacted
//!   anything. Waiting rather than failing fast keeps short bursts (a
//!   driver pass plus a few users) working, while a hanging decider can
//!   hold at most `max_concurrent` sockets and never delays anything but
//!   other decider calls.

use std::fmt;
use std::future::Future;
use std::io;
use std::net::{IpAddr, SocketAddr};
use std::pin::Pin;
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use http_body_util::{BodyExt, Full};
use hyper::body::Bytes;
use hyper::header::{self, HeaderMap, HeaderName, HeaderValue};
use hyper::{Method, Request};
use hyper_util::rt::TokioIo;
use tokio::net::TcpStream;
use tokio::sync::Semaphore;
use tokio::time::{timeout_at, Instant};
use url::{Host, Url};

pub use super::address::{check_addr, AllowList, Cidr};

/// A boxed, sendable future (what [`Resolve`] returns).
pub type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// Turns a host name into addresses. The server uses [`SystemResolver`];
/// tests inject their own to play DNS answers that point at blocked
/// addresses or change between calls.
pub trait Resolve: Send + Sync {
    fn resolve(&self, host: &str, port: u16) -> BoxFuture<'_, io::Result<Vec<IpAddr>>>;
}

/// The operating system's resolver (`getaddrinfo` on a blocking thread).
#[derive(Clone, Copy, Debug, Default)]
pub struct SystemResolver;

impl Resolve for SystemResolver {
    fn resolve(&self, host: &str, port: u16) -> BoxFuture<'_, io::Result<Vec<IpAddr>>> {
        let host = host.to_owned();
        Box::pin(async move {
            let addrs = tokio::net::lookup_host((host.as_str(), port)).await?;
            Ok(addrs.map(|a| a.ip()).collect())
        })
    }
}

/// Where calls may go and how much they may carry.
#[derive(Clone, Debug)]
pub struct ForwardPolicy {
    /// Loopback and private blocks deciders may live in; empty = none.
    pub allow: AllowList,
    /// Largest request body sent, bytes.
    pub max_request_bytes: usize,
    /// Largest reply body read, bytes.
    pub max_response_bytes: usize,
    /// Outbound calls in flight at once (at least 1).
    pub max_concurrent: usize,
}

impl Default for ForwardPolicy {
    fn default() -> ForwardPolicy {
        ForwardPolicy {
            allow: AllowList::none(),
            // The engine's own limit for a decider request
            // (`decider::parse_request`, 64 MiB): a body a conforming
            // decider built on it would refuse is not worth sending.
            max_request_bytes: berth_engine::decider::MAX_REQUEST_BYTES,
            // The engine refuses replies over 4 MiB before parsing
            // (`decider::MAX_BODY_BYTES`); reading more would only be
            // thrown away.
            max_response_bytes: berth_engine::decider::MAX_BODY_BYTES,
            // 16: room for a driver pass and a handful of people running
            // deciders at once (a call normally takes well under the 25 s
            // maximum timeout), while a hanging decider holds at most 16
            // sockets and 16 request bodies — small next to the server's
            // other resources.
            max_concurrent: 16,
        }
    }
}

/// A decider's complete answer (any status but 3xx).
#[derive(Clone, Debug)]
pub struct Reply {
    pub status: u16,
    /// Exactly the bytes received: never decoded or decompressed.
    pub body: Bytes,
    /// From a `Retry-After` header (seconds or HTTP date), if any.
    pub retry_after: Option<Duration>,
    /// The `Content-Type` header exactly as sent (bytes that are not
    /// UTF-8 replaced), if any: the caller decides what it accepts, and
    /// quotes it only through a bounded excerpt.
    pub content_type: Option<String>,
    /// The checked address the call went to.
    pub remote: SocketAddr,
}

impl Reply {
    /// How the caller should count this reply; see [`outcome`].
    pub fn outcome(&self) -> Outcome {
        outcome(self.status, self.retry_after)
    }
}

/// What a status means for the caller (the advice driver counts
/// deferrals and failures apart).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// 2xx: the body is the decider's answer.
    Accepted,
    /// 429 or 503: the decider asked to be called later.
    Deferred { retry_after: Option<Duration> },
    /// 3xx: redirects are never followed (the forwarder returns
    /// [`ForwardError::Redirect`] for these; listed for completeness).
    Redirect { status: u16 },
    /// Anything else: the call failed.
    Failed { status: u16 },
}

/// Classifies a status: 2xx accepted, 429/503 deferred, 3xx redirect,
/// everything else (1xx that reached us, 4xx, 5xx) failed.
pub fn outcome(status: u16, retry_after: Option<Duration>) -> Outcome {
    match status {
        200..=299 => Outcome::Accepted,
        429 | 503 => Outcome::Deferred { retry_after },
        300..=399 => Outcome::Redirect { status },
        _ => Outcome::Failed { status },
    }
}

impl fmt::Display for Outcome {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Outcome::Accepted => write!(f, "the decider answered"),
            Outcome::Deferred {
                retry_after: Some(d),
            } => write!(
                f,
                "the decider is busy and asked to be called again in {} s",
                d.as_secs()
            ),
            Outcome::Deferred { retry_after: None } => {
                write!(f, "the decider is busy and asked to be called again later")
            }
            Outcome::Redirect { status } => write!(
                f,
                "the decider answered with a redirect ({status}); redirects are never followed"
            ),
            Outcome::Failed { status } => write!(f, "the decider answered with status {status}"),
        }
    }
}

/// Why a call produced no [`Reply`]. Messages name hosts and addresses but
/// never header values (signatures), URL paths or queries (which may carry
/// tokens), or user info.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ForwardError {
    /// The stored URL is not one the forwarder will call.
    BadUrl(String),
    /// An address the host is or resolves to is not reachable.
    Blocked {
        host: String,
        addr: IpAddr,
        reason: &'static str,
    },
    Resolve(String),
    Connect(String),
    Tls(String),
    /// The total timeout passed before the reply was complete.
    Timeout,
    /// The decider answered 3xx.
    Redirect {
        status: u16,
    },
    RequestTooLarge {
        size: usize,
        limit: usize,
    },
    ResponseTooLarge {
        limit: usize,
    },
    /// Every slot for outbound calls stayed taken for the whole timeout;
    /// nothing was contacted.
    Busy {
        limit: usize,
    },
    /// The HTTP exchange failed (malformed reply, connection closed, a
    /// header the caller passed is unusable).
    Http(String),
}

impl ForwardError {
    /// Whether the caller should count this as "try later" rather than a
    /// failure of the decider. Only [`ForwardError::Busy`]: the decider
    /// was never contacted, so it cannot be blamed. (429/503 replies are
    /// deferrals too, see [`outcome`].)
    pub fn is_deferral(&self) -> bool {
        matches!(self, ForwardError::Busy { .. })
    }
}

impl fmt::Display for ForwardError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ForwardError::BadUrl(why) => write!(f, "the decider URL cannot be used: {why}"),
            ForwardError::Blocked { host, addr, reason } => {
                write!(
                    f,
                    "refused to contact `{host}` at {addr} ({reason}): deciders may only be at \
                     public addresses, or at loopback or private ones an administrator allowed"
                )?;
                match super::address::allow_hint(*addr) {
                    Some(hint) => write!(f, "; {hint}"),
                    None => Ok(()),
                }
            }
            ForwardError::Resolve(why) => write!(f, "could not resolve the decider's host: {why}"),
            ForwardError::Connect(why) => write!(f, "could not connect to the decider: {why}"),
            ForwardError::Tls(why) => write!(f, "the TLS handshake with the decider failed: {why}"),
            ForwardError::Timeout => write!(
                f,
                "the decider did not answer completely within the timeout"
            ),
            ForwardError::Redirect { status } => write!(
                f,
                "the decider answered with a redirect ({status}); redirects are never followed, \
                 so register the final URL instead"
            ),
            ForwardError::RequestTooLarge { size, limit } => write!(
                f,
                "the request is {size} bytes, more than the limit of {limit} bytes; nothing was sent"
            ),
            ForwardError::ResponseTooLarge { limit } => write!(
                f,
                "the decider's reply is larger than the limit of {limit} bytes; reading stopped there"
            ),
            ForwardError::Busy { limit } => write!(
                f,
                "not sent: all {limit} slots for calls to deciders stayed busy for the whole timeout"
            ),
            ForwardError::Http(why) => write!(f, "the HTTP exchange with the decider failed: {why}"),
        }
    }
}

impl std::error::Error for ForwardError {}

/// The longest URL accepted. 2048 bytes is the length every HTTP stack
/// handles; a decider URL is a base address, and a longer one is more
/// likely pasted data than an endpoint.
const MAX_URL_BYTES: usize = 2048;

/// Checks a decider URL: absolute http or https, a host, no user info, no
/// fragment, a usable port (default per scheme). Used at registration
/// and again before every call. Messages never repeat the URL (it may
/// carry a token in its query).
pub fn validate_url(url: &str) -> Result<Url, ForwardError> {
    let bad = |why: &str| ForwardError::BadUrl(why.to_string());
    if url.len() > MAX_URL_BYTES {
        return Err(bad(&format!(
            "it is {} bytes long; at most {MAX_URL_BYTES} are accepted",
            url.len()
        )));
    }
    let parsed =
        Url::parse(url.trim()).map_err(|e| bad(&format!("it is not an absolute URL ({e})")))?;
    match parsed.scheme() {
        "http" | "https" => {}
        other => {
            return Err(bad(&format!(
                "its scheme is `{other}`; only http and https are allowed"
            )))
        }
    }
    if !parsed.username().is_empty() || parsed.password().is_some() {
        return Err(bad(
            "it contains a user name or password before the host; \
             give the decider a shared secret instead of credentials in its URL",
        ));
    }
    match parsed.host() {
        None => return Err(bad("it has no host")),
        Some(Host::Domain("")) => return Err(bad("its host is empty")),
        Some(_) => {}
    }
    if parsed.fragment().is_some() {
        return Err(bad(
            "it has a fragment (`#…`), which is never sent to a server; remove it",
        ));
    }
    if parsed.port_or_known_default() == Some(0) {
        return Err(bad("port 0 cannot be connected to"));
    }
    Ok(parsed)
}

/// A call that had to wait for a slot and got it with less time than this
/// left does not start (it fails with `Busy`). 20 ms is below any real decider's
/// answer time but a connection begun then would only be torn down at
/// once: when a hanging decider's calls time out together, the calls
/// that waited behind them (with nearly the same deadline) would
/// otherwise all connect for a few microseconds.
const MIN_TIME_LEFT: Duration = Duration::from_millis(20);

/// Headers the forwarder sets itself; a caller may not replace them.
const OWN_HEADERS: [HeaderName; 7] = [
    header::HOST,
    header::CONTENT_LENGTH,
    header::CONTENT_TYPE,
    header::TRANSFER_ENCODING,
    header::CONNECTION,
    header::ACCEPT_ENCODING,
    header::USER_AGENT,
];

/// Sends decider calls under one [`ForwardPolicy`]. Cheap to share
/// (`Arc`); the concurrency cap is per `Forwarder`, so the server keeps one.
pub struct Forwarder {
    policy: ForwardPolicy,
    resolver: Arc<dyn Resolve>,
    tls: tokio_rustls::TlsConnector,
    slots: Arc<Semaphore>,
    limit: usize,
}

impl fmt::Debug for Forwarder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Forwarder")
            .field("policy", &self.policy)
            .field("in_flight", &self.in_flight())
            .finish_non_exhaustive()
    }
}

impl Forwarder {
    pub fn new(policy: ForwardPolicy, resolver: Arc<dyn Resolve>) -> Forwarder {
        let mut roots = rustls::RootCertStore::empty();
        roots.extend(webpki_roots::TLS_SERVER_ROOTS.iter().cloned());
        // The ring provider explicitly (not the process default), so this
        // works whichever other rustls providers the build pulls in.
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let mut config = rustls::ClientConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .expect("the ring provider supports rustls's default TLS versions")
            .with_root_certificates(roots)
            .with_no_client_auth();
        // Only HTTP/1.1 is spoken over the connection.
        config.alpn_protocols = vec![b"http/1.1".to_vec()];
        let limit = policy.max_concurrent.max(1);
        Forwarder {
            policy,
            resolver,
            tls: tokio_rustls::TlsConnector::from(Arc::new(config)),
            slots: Arc::new(Semaphore::new(limit)),
            limit,
        }
    }

    pub fn policy(&self) -> &ForwardPolicy {
        &self.policy
    }

    /// Calls holding a slot right now (for health and metrics).
    pub fn in_flight(&self) -> usize {
        self.limit - self.slots.available_permits()
    }

    /// POSTs `body` (JSON) to `url` with the extra `headers` (signatures),
    /// all within `timeout`. Any status but 3xx is a [`Reply`]; what it
    /// means is [`Reply::outcome`]'s business.
    pub async fn post(
        &self,
        url: &str,
        headers: &[(&'static str, String)],
        body: Bytes,
        timeout: Duration,
    ) -> Result<Reply, ForwardError> {
        // A timeout too large to add (a caller's bug) becomes a day: far
        // beyond any decider's, and no panic.
        let start = Instant::now();
        let deadline = start
            .checked_add(timeout)
            .unwrap_or(start + Duration::from_secs(24 * 3600));
        // Everything that needs no network first, so a bad call costs
        // nothing and contacts nothing.
        let url = validate_url(url)?;
        if body.len() > self.policy.max_request_bytes {
            return Err(ForwardError::RequestTooLarge {
                size: body.len(),
                limit: self.policy.max_request_bytes,
            });
        }
        let request = build_request(&url, headers, body)?;

        let _slot = match self.slots.clone().try_acquire_owned() {
            Ok(slot) => slot,
            Err(_) => match timeout_at(deadline, self.slots.clone().acquire_owned()).await {
                // A slot that frees up too late to do anything useful
                // with is not used.
                Ok(Ok(slot))
                    if deadline.saturating_duration_since(Instant::now()) >= MIN_TIME_LEFT =>
                {
                    slot
                }
                // Timed out waiting (or the semaphore was closed, which
                // this module never does): nothing was contacted.
                _ => return Err(ForwardError::Busy { limit: self.limit }),
            },
        };
        // The timer fires on its next tick (about 1 ms), so a deadline
        // already past is checked here: a zero timeout sends nothing.
        if Instant::now() >= deadline {
            return Err(ForwardError::Timeout);
        }
        match timeout_at(deadline, self.call(&url, request)).await {
            Ok(result) => result,
            // Dropping the call future closes its socket at once: nothing
            // runs on past the timeout.
            Err(_) => Err(ForwardError::Timeout),
        }
    }

    async fn call(&self, url: &Url, request: Request<Full<Bytes>>) -> Result<Reply, ForwardError> {
        let host = url.host().expect("validate_url requires a host");
        let port = url
            .port_or_known_default()
            .expect("http and https have default ports");
        let host_text = match host {
            Host::Domain(d) => d.to_string(),
            Host::Ipv4(a) => a.to_string(),
            Host::Ipv6(a) => a.to_string(),
        };
        let mut addrs: Vec<IpAddr> = match host {
            Host::Ipv4(a) => vec![IpAddr::V4(a)],
            Host::Ipv6(a) => vec![IpAddr::V6(a)],
            Host::Domain(name) => self
                .resolver
                .resolve(name, port)
                .await
                .map_err(|e| ForwardError::Resolve(format!("`{name}`: {e}")))?,
        };
        let mut seen = Vec::with_capacity(addrs.len());
        addrs.retain(|a| {
            let new = !seen.contains(a);
            seen.push(*a);
            new
        });
        if addrs.is_empty() {
            return Err(ForwardError::Resolve(format!(
                "`{host_text}` has no addresses"
            )));
        }
        for &addr in &addrs {
            check_addr(addr, &self.policy.allow).map_err(|reason| ForwardError::Blocked {
                host: host_text.clone(),
                addr,
                reason,
            })?;
        }

        let (tcp, remote) = connect_checked(&addrs, port).await?;
        let limit = self.policy.max_response_bytes;
        let (status, headers, body) = if url.scheme() == "https" {
            let name = match host {
                Host::Domain(d) => {
                    rustls::pki_types::ServerName::try_from(d.to_string()).map_err(|e| {
                        ForwardError::Tls(format!("`{d}` is not a valid TLS name ({e})"))
                    })?
                }
                Host::Ipv4(a) => rustls::pki_types::ServerName::IpAddress(IpAddr::V4(a).into()),
                Host::Ipv6(a) => rustls::pki_types::ServerName::IpAddress(IpAddr::V6(a).into()),
            };
            let tls = self
                .tls
                .connect(name, tcp)
                .await
                .map_err(|e| ForwardError::Tls(format!("with {remote}: {e}")))?;
            exchange(TokioIo::new(tls), request, limit).await?
        } else {
            exchange(TokioIo::new(tcp), request, limit).await?
        };
        let retry_after = headers
            .get(header::RETRY_AFTER)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| crate::retry::parse_retry_after(v, SystemTime::now()));
        let content_type = headers
            .get(header::CONTENT_TYPE)
            .map(|v| String::from_utf8_lossy(v.as_bytes()).into_owned());
        Ok(Reply {
            status,
            body,
            retry_after,
            content_type,
            remote,
        })
    }
}

/// Connects to the checked addresses in the resolver's order, the first
/// that accepts wins. Takes socket addresses only — nothing here can
/// resolve a name.
async fn connect_checked(
    addrs: &[IpAddr],
    port: u16,
) -> Result<(TcpStream, SocketAddr), ForwardError> {
    let mut failures = Vec::new();
    for &ip in addrs {
        let to = SocketAddr::new(ip, port);
        match TcpStream::connect(to).await {
            Ok(stream) => {
                // One request, written at once: no reason to delay it.
                let _ = stream.set_nodelay(true);
                return Ok((stream, to));
            }
            Err(e) => failures.push(format!("{to}: {e}")),
        }
    }
    Err(ForwardError::Connect(failures.join("; ")))
}

/// The request: origin-form target, our own `Host`, `Content-Type`,
/// `Accept-Encoding: identity` (the body is never decoded, so ask for it
/// plain), `Connection: close` (one request per connection), then the
/// caller's headers, marked sensitive.
fn build_request(
    url: &Url,
    extra: &[(&'static str, String)],
    body: Bytes,
) -> Result<Request<Full<Bytes>>, ForwardError> {
    let target = match url.query() {
        Some(q) => format!("{}?{q}", url.path()),
        None => url.path().to_string(),
    };
    // `host_str` keeps IPv6 brackets; `port` is set only when it is not
    // the scheme's default, which is exactly when Host must carry it.
    let host_header = match url.port() {
        Some(p) => format!("{}:{p}", url.host_str().unwrap_or_default()),
        None => url.host_str().unwrap_or_default().to_string(),
    };
    let mut builder = Request::builder()
        .method(Method::POST)
        .uri(target)
        .header(header::HOST, host_header)
        .header(header::CONTENT_TYPE, "application/json")
        .header(header::ACCEPT_ENCODING, "identity")
        .header(header::CONNECTION, "close")
        .header(
            header::USER_AGENT,
            concat!("berth/", env!("CARGO_PKG_VERSION")),
        );
    for (name, value) in extra {
        let name = HeaderName::from_bytes(name.as_bytes())
            .map_err(|_| ForwardError::Http(format!("`{name}` is not a valid header name")))?;
        if OWN_HEADERS.contains(&name) {
            return Err(ForwardError::Http(format!(
                "the header `{name}` is set by the forwarder itself"
            )));
        }
        let mut value = HeaderValue::from_str(value).map_err(|_| {
            ForwardError::Http(format!(
                "the value given for header `{name}` is not a valid header value"
            ))
        })?;
        value.set_sensitive(true);
        builder = builder.header(name, value);
    }
    builder
        .body(Full::new(body))
        .map_err(|e| ForwardError::Http(format!("the request could not be built ({e})")))
}

/// One HTTP/1.1 request and its complete reply over `io`, reading at most
/// `limit` body bytes. The connection is driven inside this future (not a
/// spawned task), so dropping it — at the timeout — closes the socket.
async fn exchange<IO>(
    io: IO,
    request: Request<Full<Bytes>>,
    limit: usize,
) -> Result<(u16, HeaderMap, Bytes), ForwardError>
where
    IO: hyper::rt::Read + hyper::rt::Write + Unpin + Send + 'static,
{
    let http = |what: &str, e: hyper::Error| ForwardError::Http(format!("{what}: {e}"));
    let (mut sender, conn) = hyper::client::conn::http1::Builder::new()
        .handshake::<_, Full<Bytes>>(io)
        .await
        .map_err(|e| http("the connection could not be set up", e))?;
    let work = async move {
        let response = sender
            .send_request(request)
            .await
            .map_err(|e| http("no complete reply", e))?;
        let status = response.status().as_u16();
        if (300..400).contains(&status) {
            return Err(ForwardError::Redirect { status });
        }
        let declared = response
            .headers()
            .get(header::CONTENT_LENGTH)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.trim().parse::<u64>().ok());
        if declared.is_some_and(|n| n > limit as u64) {
            return Err(ForwardError::ResponseTooLarge { limit });
        }
        let (parts, mut body) = response.into_parts();
        // Pre-size for a declared length (already known to be ≤ limit).
        let mut buf = Vec::with_capacity(declared.unwrap_or(0) as usize);
        while let Some(frame) = body.frame().await {
            let frame = frame.map_err(|e| http("the reply body broke off", e))?;
            if let Ok(data) = frame.into_data() {
                if buf.len() + data.len() > limit {
                    return Err(ForwardError::ResponseTooLarge { limit });
                }
                buf.extend_from_slice(&data);
            }
        }
        Ok((status, parts.headers, Bytes::from(buf)))
    };
    tokio::pin!(conn);
    tokio::pin!(work);
    tokio::select! {
        biased;
        result = &mut work => result,
        ended = &mut conn => {
            // The connection finished first: the reply is either already
            // complete in `work`'s hands or `work` fails too; prefer the
            // connection's error, which says what went wrong.
            match (work.await, ended) {
                (Err(_), Err(e)) => Err(http("the connection failed", e)),
                (result, _) => result,
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn statuses_classify() {
        let ra = Some(Duration::from_secs(7));
        assert_eq!(outcome(200, None), Outcome::Accepted);
        assert_eq!(outcome(204, None), Outcome::Accepted);
        assert_eq!(outcome(429, ra), Outcome::Deferred { retry_after: ra });
        assert_eq!(outcome(503, None), Outcome::Deferred { retry_after: None });
        assert_eq!(outcome(301, None), Outcome::Redirect { status: 301 });
        assert_eq!(outcome(500, ra), Outcome::Failed { status: 500 });
        assert_eq!(outcome(404, None), Outcome::Failed { status: 404 });
        assert_eq!(outcome(102, None), Outcome::Failed { status: 102 });
    }

    #[test]
    fn caller_headers_cannot_replace_ours_or_smuggle_bytes() {
        let url = validate_url("http://example.com/x").unwrap();
        let err = build_request(&url, &[("Host", "evil".into())], Bytes::new()).unwrap_err();
        assert_eq!(err.to_string(), "the HTTP exchange with the decider failed: the header `host` is set by the forwarder itself");
        let err = build_request(&url, &[("x-sig", "a\r\nb: c".into())], Bytes::new()).unwrap_err();
        assert!(!err.to_string().contains("a\r\nb"), "{err}");
        assert!(err.to_string().contains("`x-sig`"), "{err}");
        let err = build_request(&url, &[("bad name", "v".into())], Bytes::new()).unwrap_err();
        assert!(err.to_string().contains("not a valid header name"), "{err}");
        let ok = build_request(
            &validate_url("http://example.com:8080/a/b?c=d").unwrap(),
            &[("Berth-Signature", "t=1,v1=00".into())],
            Bytes::from_static(b"{}"),
        )
        .unwrap();
        assert_eq!(ok.uri(), "/a/b?c=d");
        assert_eq!(ok.headers()[header::HOST], "example.com:8080");
        assert_eq!(ok.headers()["berth-signature"], "t=1,v1=00");
        assert!(ok.headers()["berth-signature"].is_sensitive());
        let v6 = build_request(
            &validate_url("https://[2001:db8::1]/").unwrap(),
            &[],
            Bytes::new(),
        )
        .unwrap();
        assert_eq!(v6.headers()[header::HOST], "[2001:db8::1]");
    }
}
