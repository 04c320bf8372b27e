//! The HTTP listener under `berth serve`: the accept loop and every limit
//! a connection meets before a handler sees it.
//!
//! * **Header read timeout**: a request's headers must be complete
//!   within `header_timeout` of their first byte, or the connection is
//!   closed (a slow or stalled client gives its slot back within seconds).
//!   The clock starts at the first byte, not at connect: browsers open
//!   sockets ahead of need (Chromium keeps an unused one up to 10 s, the
//!   header timeout's default) and a server that closed such a socket at
//!   the moment the browser picked it would answer nothing at all
//!   (`ERR_EMPTY_RESPONSE`, not retried for a socket never used).
//! * **Body read timeout**: a request body must arrive whole within
//!   `body_timeout` of its headers; reading it after that fails with
//!   [`BodyTimedOut`], which `http::extract::read_body` answers with 408
//!   and `Connection: close`.
//! * **Idle timeout**: a connection with no request under way — just
//!   connected, or after a response — may wait for its next request for
//!   `keep_alive_idle`, then it is closed. Idle connections are also the
//!   first to go at a connection cap (below).
//! * **Connection caps**, in total and per client address, the total kept
//!   below the process's descriptor limit. At a cap, a new connection
//!   takes the place of the connection of that address (or, at the total
//!   cap, of any address) that has been idle — no request in service —
//!   the longest, which is closed at once; when none is idle, the new
//!   connection is answered 503 and closed at once. Half-requests are
//!   idle, so a flood of them makes room for well-behaved clients instead
//!   of keeping them out.
//! * **Accept errors**: running out of descriptors (EMFILE, ENFILE) or
//!   kernel memory is logged once per episode and waited out briefly; the
//!   loop keeps serving.
//!
//! Graceful shutdown: at the signal, accepting stops, connections with no
//! request in service (idle ones, half-requests) close, and those with one
//! finish it, then close (for at most [`DRAIN_LIMIT`]).

use std::collections::HashMap;
use std::convert::Infallible;
use std::future::Future;
use std::net::{IpAddr, SocketAddr};
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use axum::body::{Body, Bytes};
use axum::extract::ConnectInfo;
use axum::Router;
use hyper::body::{Frame, Incoming, SizeHint};
use hyper_util::rt::{TokioIo, TokioTimer};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{watch, Notify};
use tower::ServiceExt;

use crate::http::extract::BodyTimedOut;

/// 10 s: a client that connects has its request ready, and a browser
/// sends a request's headers in one or two packets, so even a slow mobile
/// link needs well under a second; 10 s leaves room for a congested one
/// while a connection held open by a slow or stalled client (slowloris)
/// gives its slot back within seconds.
pub const DEFAULT_HEADER_TIMEOUT_S: u64 = 10;

/// 60 s: the largest body the API takes (an estate file, up to 64 MiB)
/// arrives in under a minute at 10 Mbit/s; a body that trickles is cut
/// off then instead of holding its connection and its handler for as
/// long as the sender likes. Raise it for uploads over slower links.
pub const DEFAULT_BODY_TIMEOUT_S: u64 = 60;

/// 60 s: long enough for a person clicking through the pages to reuse
/// one connection (no new handshake per page), short enough that clients
/// who went away do not keep descriptors for long. Browsers reopen a
/// connection the server closed without the user noticing.
pub const DEFAULT_KEEP_ALIVE_IDLE_S: u64 = 60;

/// Descriptors kept back from client connections: the database pool (16
/// by default), SQLite's database, WAL and shared-memory files, outbound
/// calls to deciders (16 at once at most), Prometheus-free internals
/// (the listener, the runtime's event and timer descriptors, standard
/// streams). 128 holds all of them with room to spare.
pub const DESCRIPTOR_RESERVE: u64 = 128;

/// When the descriptor limit cannot be read (or is unlimited): a total
/// cap that a default Linux limit (1,024 soft) nearly allows, and plenty
/// for the few people and agents one Berth server has.
pub const FALLBACK_MAX_CONNECTIONS: usize = 896;

/// The default per-address cap is this share of the total: a browser
/// opens at most 6 connections per host, so an eighth of even a small
/// total (128 → 16) serves a person, and a single address can take at
/// most an eighth of the server.
pub const PER_CLIENT_SHARE: usize = 8;

/// How long in-flight requests may take to finish after SIGTERM: what
/// Kubernetes waits before it kills (terminationGracePeriodSeconds, 30 s
/// by default), so a request that cannot finish in time is cut here, not
/// by SIGKILL in the middle of the database pool's shutdown.
pub const DRAIN_LIMIT: Duration = Duration::from_secs(30);

/// After accept fails for want of descriptors or memory: wait this long
/// before trying again. The table frees as connections close (idle ones
/// within the timeouts above); retrying at once would spin a core on a
/// call that keeps failing, and 100 ms is well under a client's connect
/// timeout, so the queued connection is still there when we come back.
const ACCEPT_BACKOFF: Duration = Duration::from_millis(100);

/// Evicted connections still closing at which accepting pauses: a quarter
/// of [`DESCRIPTOR_RESERVE`], so their descriptors never eat into what the
/// database pool and outbound calls need.
const MAX_CLOSING: usize = DESCRIPTOR_RESERVE as usize / 4;

/// `Slot::head_since_ms` when no byte of a next request has arrived.
const NO_HEAD: u64 = u64::MAX;

/// Refusals are logged at most this often (with a count), so a flood does
/// not become a flood of log lines.
const REFUSAL_LOG_EVERY: Duration = Duration::from_secs(10);

/// The network limits as configured (flags); caps left `None` are derived
/// from the descriptor limit at start ([`NetLimits::resolve`]).
#[derive(Clone, Debug)]
pub struct NetLimits {
    pub header_timeout: Duration,
    pub body_timeout: Duration,
    pub keep_alive_idle: Duration,
    pub max_connections: Option<usize>,
    pub max_connections_per_client: Option<usize>,
}

impl Default for NetLimits {
    fn default() -> NetLimits {
        NetLimits {
            header_timeout: Duration::from_secs(DEFAULT_HEADER_TIMEOUT_S),
            body_timeout: Duration::from_secs(DEFAULT_BODY_TIMEOUT_S),
            keep_alive_idle: Duration::from_secs(DEFAULT_KEEP_ALIVE_IDLE_S),
            max_connections: None,
            max_connections_per_client: None,
        }
    }
}

/// The limits a running listener applies.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Resolved {
    pub header_timeout: Duration,
    pub body_timeout: Duration,
    pub keep_alive_idle: Duration,
    pub max_connections: usize,
    pub max_connections_per_client: usize,
}

/// The soft `RLIMIT_NOFILE` of this process; `None` when unlimited or
/// unreadable.
pub fn descriptor_limit() -> Option<u64> {
    #[cfg(unix)]
    {
        let mut rl = libc::rlimit {
            rlim_cur: 0,
            rlim_max: 0,
        };
        // SAFETY: getrlimit writes one `rlimit` through a pointer to a
        // live, properly aligned local, and reads nothing else.
        let rc = unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut rl) };
        if rc != 0 || rl.rlim_cur == libc::RLIM_INFINITY {
            return None;
        }
        // rlim_t is u64 on 64-bit Linux and macOS, narrower elsewhere.
        #[allow(clippy::unnecessary_cast)]
        let n = rl.rlim_cur as u64;
        Some(n)
    }
    #[cfg(not(unix))]
    {
        None
    }
}

/// The most client connections a descriptor limit allows: the limit less
/// [`DESCRIPTOR_RESERVE`], or half of it when it is too small for that.
pub fn safe_total(descriptors: Option<u64>) -> usize {
    match descriptors {
        Some(n) if n > 2 * DESCRIPTOR_RESERVE => (n - DESCRIPTOR_RESERVE) as usize,
        Some(n) => (n / 2).max(1) as usize,
        None => FALLBACK_MAX_CONNECTIONS,
    }
}

impl NetLimits {
    /// Fill in the caps. A total above what the descriptor limit allows
    /// is lowered to it (said in the log): past it, accept would fail and
    /// nobody could connect, which is what the cap is there to prevent.
    /// `proxied`: every connection comes through one proxy
    /// (`--trust-forwarded-for`), so the per-address default is the total.
    pub fn resolve(&self, descriptors: Option<u64>, proxied: bool) -> Resolved {
        let safe = safe_total(descriptors);
        let total = match self.max_connections {
            Some(n) if n > safe => {
                tracing::warn!(
                    asked = n,
                    allowed = safe,
                    descriptor_limit = descriptors,
                    "--max-http-connections is above what the descriptor limit allows; using {safe}"
                );
                safe
            }
            Some(n) => n.max(1),
            None => safe,
        };
        let per_client = match self.max_connections_per_client {
            Some(n) => n.clamp(1, total),
            None if proxied => total,
            None => (total / PER_CLIENT_SHARE).max(1),
        };
        Resolved {
            header_timeout: self.header_timeout,
            body_timeout: self.body_timeout,
            keep_alive_idle: self.keep_alive_idle,
            max_connections: total,
            max_connections_per_client: per_client,
        }
    }
}

// ---- the connection table ----------------------------------------------

/// One open connection as the table sees it.
struct Slot {
    id: u64,
    ip: IpAddr,
    /// Requests in service (headers read, response not yet fully written).
    busy: AtomicUsize,
    /// Milliseconds since the table's epoch when it last became idle (at
    /// connect, then at the end of each response).
    idle_since_ms: AtomicU64,
    /// When the first byte of the next request's headers arrived, while
    /// idle ([`NO_HEAD`]: none yet); milliseconds since the table's epoch.
    head_since_ms: AtomicU64,
    /// Set when a newer connection took its place: close now.
    evict: Notify,
    /// Told when the last request in service ends, and when the first
    /// byte of a next request arrives: the idle deadline changes.
    became_idle: Notify,
}

struct Table {
    next: u64,
    open: HashMap<u64, Arc<Slot>>,
    per_ip: HashMap<IpAddr, usize>,
}

/// The open connections, with the caps they are held to.
struct Registry {
    epoch: Instant,
    total: usize,
    per_client: usize,
    table: Mutex<Table>,
    refused: AtomicU64,
    evicted: AtomicU64,
    /// Evicted connections whose task has not closed the socket yet: they
    /// still hold a descriptor each.
    closing: AtomicUsize,
    /// Told when one of those closes.
    closed: Notify,
    last_refusal_log: Mutex<Option<Instant>>,
}

/// Why a connection was not admitted.
#[derive(Debug, PartialEq, Eq)]
enum Refusal {
    /// Its address is at its cap, with every connection busy.
    Client,
    /// The server is at its total cap, with every connection busy.
    Full,
}

/// A connection's place in the table; leaving it frees the place.
struct Ticket {
    registry: Arc<Registry>,
    slot: Arc<Slot>,
}

impl Drop for Ticket {
    fn drop(&mut self) {
        let mut t = self.registry.table.lock().expect("connection table");
        // An evicted slot has left the table already; its socket closes
        // now.
        if t.open.remove(&self.slot.id).is_some() {
            t.leave(self.slot.ip);
        } else {
            self.registry.closing.fetch_sub(1, Ordering::AcqRel);
            self.registry.closed.notify_waiters();
        }
    }
}

impl Table {
    fn leave(&mut self, ip: IpAddr) {
        if let Some(n) = self.per_ip.get_mut(&ip) {
            *n -= 1;
            if *n == 0 {
                self.per_ip.remove(&ip);
            }
        }
    }

    /// The connection idle the longest among those `which` accepts.
    fn oldest_idle(&self, which: impl Fn(&Slot) -> bool) -> Option<Arc<Slot>> {
        self.open
            .values()
            .filter(|s| s.busy.load(Ordering::Acquire) == 0 && which(s))
            .min_by_key(|s| (s.idle_since_ms.load(Ordering::Acquire), s.id))
            .cloned()
    }

    fn evict(&mut self, victim: &Slot, closing: &AtomicUsize) {
        self.open.remove(&victim.id);
        self.leave(victim.ip);
        closing.fetch_add(1, Ordering::AcqRel);
        victim.evict.notify_one();
    }
}

impl Registry {
    fn new(total: usize, per_client: usize) -> Arc<Registry> {
        Arc::new(Registry {
            epoch: Instant::now(),
            total,
            per_client,
            table: Mutex::new(Table {
                next: 0,
                open: HashMap::new(),
                per_ip: HashMap::new(),
            }),
            refused: AtomicU64::new(0),
            evicted: AtomicU64::new(0),
            closing: AtomicUsize::new(0),
            closed: Notify::new(),
            last_refusal_log: Mutex::new(None),
        })
    }

    fn now_ms(&self) -> u64 {
        self.epoch.elapsed().as_millis() as u64
    }

    fn admit(self: &Arc<Self>, ip: IpAddr) -> Result<Ticket, Refusal> {
        let now = self.now_ms();
        let mut t = self.table.lock().expect("connection table");
        if t.per_ip.get(&ip).copied().unwrap_or(0) >= self.per_client {
            let victim = t.oldest_idle(|s| s.ip == ip).ok_or(Refusal::Client)?;
            t.evict(&victim, &self.closing);
            self.evicted.fetch_add(1, Ordering::Relaxed);
        }
        if t.open.len() >= self.total {
            let victim = t.oldest_idle(|_| true).ok_or(Refusal::Full)?;
            t.evict(&victim, &self.closing);
            self.evicted.fetch_add(1, Ordering::Relaxed);
        }
        t.next += 1;
        let slot = Arc::new(Slot {
            id: t.next,
            ip,
            busy: AtomicUsize::new(0),
            idle_since_ms: AtomicU64::new(now),
            head_since_ms: AtomicU64::new(NO_HEAD),
            evict: Notify::new(),
            became_idle: Notify::new(),
        });
        t.open.insert(slot.id, slot.clone());
        *t.per_ip.entry(ip).or_insert(0) += 1;
        Ok(Ticket {
            registry: self.clone(),
            slot,
        })
    }

    fn note_refusal(&self, peer: SocketAddr, why: &Refusal) {
        let n = self.refused.fetch_add(1, Ordering::Relaxed) + 1;
        let mut last = self.last_refusal_log.lock().expect("refusal log");
        if last.is_none_or(|at| at.elapsed() >= REFUSAL_LOG_EVERY) {
            *last = Some(Instant::now());
            tracing::warn!(
                %peer,
                refused_total = n,
                evicted_total = self.evicted.load(Ordering::Relaxed),
                max_connections = self.total,
                max_connections_per_client = self.per_client,
                "connection refused: {}",
                match why {
                    Refusal::Client => "this address is at its connection cap, all of them busy",
                    Refusal::Full => "the server is at its connection cap, all of them busy",
                }
            );
        }
    }
}

/// Marks its slot busy while a request is in service: made when hyper
/// hands over a request (headers read), dropped with the response body
/// (after its last byte is written, or when the connection goes).
struct Busy {
    slot: Arc<Slot>,
    registry: Arc<Registry>,
}

impl Busy {
    fn begin(slot: &Arc<Slot>, registry: &Arc<Registry>) -> Busy {
        slot.busy.fetch_add(1, Ordering::AcqRel);
        slot.head_since_ms.store(NO_HEAD, Ordering::Release);
        Busy {
            slot: slot.clone(),
            registry: registry.clone(),
        }
    }
}

impl Drop for Busy {
    fn drop(&mut self) {
        self.slot
            .idle_since_ms
            .store(self.registry.now_ms(), Ordering::Release);
        if self.slot.busy.fetch_sub(1, Ordering::AcqRel) == 1 {
            self.slot.became_idle.notify_one();
        }
    }
}

// ---- the socket ------------------------------------------------------------

/// The client's socket, noting when the first byte of a request's headers
/// arrives on an idle connection: from then on the header timeout runs
/// instead of the keep-alive one.
struct Watched {
    inner: TcpStream,
    slot: Arc<Slot>,
    registry: Arc<Registry>,
}

impl tokio::io::AsyncRead for Watched {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut tokio::io::ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        let before = buf.filled().len();
        let r = Pin::new(&mut self.inner).poll_read(cx, buf);
        if matches!(r, Poll::Ready(Ok(())))
            && buf.filled().len() > before
            && self.slot.busy.load(Ordering::Acquire) == 0
            && self.slot.head_since_ms.load(Ordering::Acquire) == NO_HEAD
        {
            self.slot
                .head_since_ms
                .store(self.registry.now_ms(), Ordering::Release);
            self.slot.became_idle.notify_one();
        }
        r
    }
}

impl tokio::io::AsyncWrite for Watched {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<std::io::Result<usize>> {
        Pin::new(&mut self.inner).poll_write(cx, buf)
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.inner).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.inner).poll_shutdown(cx)
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[std::io::IoSlice<'_>],
    ) -> Poll<std::io::Result<usize>> {
        Pin::new(&mut self.inner).poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        self.inner.is_write_vectored()
    }
}

// ---- bodies --------------------------------------------------------------

/// A request body that must arrive whole by a deadline.
struct DeadlineBody {
    inner: Incoming,
    deadline: Pin<Box<tokio::time::Sleep>>,
    limit: Duration,
}

impl hyper::body::Body for DeadlineBody {
    type Data = Bytes;
    type Error = axum::BoxError;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Self::Error>>> {
        let this = &mut *self;
        if let Poll::Ready(frame) = Pin::new(&mut this.inner).poll_frame(cx) {
            return Poll::Ready(frame.map(|r| r.map_err(Into::into)));
        }
        match this.deadline.as_mut().poll(cx) {
            Poll::Ready(()) => Poll::Ready(Some(Err(Box::new(BodyTimedOut {
                limit_s: this.limit.as_secs(),
            })))),
            Poll::Pending => Poll::Pending,
        }
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.inner.size_hint()
    }
}

/// A response body that keeps its connection busy until it is dropped.
struct Tracked {
    inner: Body,
    _busy: Busy,
}

impl hyper::body::Body for Tracked {
    type Data = Bytes;
    type Error = axum::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Self::Error>>> {
        Pin::new(&mut self.inner).poll_frame(cx)
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.inner.size_hint()
    }
}

// ---- the loop --------------------------------------------------------------

/// Serve `app` on `listener` with `limits` until `shutdown` resolves, then
/// drain. Handlers see the peer as `ConnectInfo<SocketAddr>`.
pub async fn serve(
    listener: TcpListener,
    app: Router,
    limits: Resolved,
    shutdown: impl Future<Output = ()>,
) {
    let registry = Registry::new(limits.max_connections, limits.max_connections_per_client);
    let limits = Arc::new(limits);
    let (stop, stopped) = watch::channel(false);
    tokio::pin!(shutdown);
    // Set while accept fails for want of resources: one log line per
    // episode, not one per attempt.
    let mut starved: Option<(Instant, u64)> = None;
    loop {
        // A flood evicts one idle connection per accept, and the evicted
        // ones close on their own tasks, later: under load the accept loop
        // could run far ahead of them, each still holding a descriptor.
        // Accepting pauses while MAX_CLOSING are pending, so open plus
        // closing stays within the cap plus part of the reserve.
        while registry.closing.load(Ordering::Acquire) >= MAX_CLOSING {
            let closed = registry.closed.notified();
            if registry.closing.load(Ordering::Acquire) < MAX_CLOSING {
                break;
            }
            let _ = tokio::time::timeout(ACCEPT_BACKOFF, closed).await;
        }
        let accepted = tokio::select! {
            r = listener.accept() => r,
            () = &mut shutdown => break,
        };
        let (stream, peer) = match accepted {
            Ok(a) => a,
            Err(e) if is_resource_error(&e) => {
                match &mut starved {
                    None => {
                        tracing::warn!(
                            error = %e,
                            open_connections = registry.table.lock().expect("connection table").open.len(),
                            "accept failed for want of resources; backing off and retrying (logged once until it recovers)"
                        );
                        starved = Some((Instant::now(), 1));
                    }
                    Some((_, n)) => *n += 1,
                }
                tokio::time::sleep(ACCEPT_BACKOFF).await;
                continue;
            }
            Err(e) => {
                // A connection that failed between the kernel's accept and
                // ours (reset, aborted): only that one is lost.
                tracing::debug!(error = %e, "accept error");
                continue;
            }
        };
        if let Some((since, n)) = starved.take() {
            tracing::info!(
                failed_attempts = n,
                after_ms = since.elapsed().as_millis() as u64,
                "accepting connections again"
            );
        }
        match registry.admit(peer.ip()) {
            Ok(ticket) => {
                tokio::spawn(connection(
                    stream,
                    peer,
                    ticket,
                    app.clone(),
                    limits.clone(),
                    stopped.clone(),
                ));
            }
            Err(why) => {
                registry.note_refusal(peer, &why);
                refuse(stream);
            }
        }
    }
    drop(listener);
    let _ = stop.send(true);
    drop(stopped);
    // Every connection task holds a receiver; `closed` resolves when the
    // last one has ended.
    if tokio::time::timeout(DRAIN_LIMIT, stop.closed())
        .await
        .is_err()
    {
        tracing::warn!(
            limit_s = DRAIN_LIMIT.as_secs(),
            "requests still in service after the drain limit are cut off"
        );
    }
}

fn is_resource_error(e: &std::io::Error) -> bool {
    #[cfg(unix)]
    {
        matches!(
            e.raw_os_error(),
            Some(libc::EMFILE | libc::ENFILE | libc::ENOBUFS | libc::ENOMEM)
        )
    }
    #[cfg(not(unix))]
    {
        let _ = e;
        false
    }
}

/// Answer a connection over a cap with 503 (if its socket takes the bytes
/// now: nothing waits on a client here) and close it.
fn refuse(stream: TcpStream) {
    const BODY: &str = "{\"error\":\"unavailable\",\"message\":\"too many connections: the server is at its connection cap and every connection is busy; retry shortly\",\"details\":null}";
    let reply = format!(
        "HTTP/1.1 503 Service Unavailable\r\ncontent-type: application/json\r\nretry-after: 1\r\nconnection: close\r\ncontent-length: {}\r\n\r\n{BODY}",
        BODY.len()
    );
    let _ = stream.try_write(reply.as_bytes());
}

/// One connection, from admission to close.
async fn connection(
    stream: TcpStream,
    peer: SocketAddr,
    ticket: Ticket,
    app: Router,
    limits: Arc<Resolved>,
    mut stop: watch::Receiver<bool>,
) {
    let _ = stream.set_nodelay(true);
    let slot = ticket.slot.clone();
    let registry = ticket.registry.clone();
    let body_timeout = limits.body_timeout;
    let service = hyper::service::service_fn(move |req: hyper::Request<Incoming>| {
        let busy = Busy::begin(&slot, &registry);
        let app = app.clone();
        let deadline = Box::pin(tokio::time::sleep(body_timeout));
        async move {
            let (mut parts, body) = req.into_parts();
            parts.extensions.insert(ConnectInfo(peer));
            let body = Body::new(DeadlineBody {
                inner: body,
                deadline,
                limit: body_timeout,
            });
            let resp = app
                .oneshot(hyper::Request::from_parts(parts, body))
                .await
                .unwrap_or_else(|never: Infallible| match never {});
            Ok::<_, Infallible>(resp.map(|inner| Tracked { inner, _busy: busy }))
        }
    });
    let mut builder = hyper::server::conn::http1::Builder::new();
    // Header timeouts are kept by the loop below: hyper's own timer also
    // runs while a connection idles between requests, which would cut
    // keep-alive short to the header timeout.
    builder
        .timer(TokioTimer::new())
        .header_read_timeout(None)
        .keep_alive(true);
    let io = Watched {
        inner: stream,
        slot: ticket.slot.clone(),
        registry: ticket.registry.clone(),
    };
    let conn = builder.serve_connection(TokioIo::new(io), service);
    tokio::pin!(conn);
    let slot = ticket.slot.clone();
    let mut draining = false;
    loop {
        // Shutting down: a connection with no request in service closes
        // now (a half-request has nothing to finish); one in service
        // finishes its response without keep-alive, then closes.
        if !draining && *stop.borrow() {
            if slot.busy.load(Ordering::Acquire) == 0 {
                break;
            }
            draining = true;
            conn.as_mut().graceful_shutdown();
        }
        // Idle: no request in service. With no byte of a next request
        // yet (just connected, or after a response) the idle timeout runs
        // from when it became idle; once a byte arrives, the header
        // timeout from that byte.
        let idle_deadline = (slot.busy.load(Ordering::Acquire) == 0).then(|| {
            let head = slot.head_since_ms.load(Ordering::Acquire);
            let (since, limit) = if head != NO_HEAD {
                (head, limits.header_timeout)
            } else {
                (
                    slot.idle_since_ms.load(Ordering::Acquire),
                    limits.keep_alive_idle,
                )
            };
            let since = Duration::from_millis(since);
            tokio::time::Instant::from_std(ticket.registry.epoch + since + limit)
        });
        let idle_timer = async {
            match idle_deadline {
                Some(at) => tokio::time::sleep_until(at).await,
                None => std::future::pending().await,
            }
        };
        tokio::select! {
            r = conn.as_mut() => {
                if let Err(e) = r {
                    tracing::debug!(%peer, error = %e, "connection ended with an error");
                }
                break;
            }
            () = slot.evict.notified() => {
                tracing::debug!(%peer, "idle connection closed to make room for a new one");
                break;
            }
            () = idle_timer => {
                // Still idle, with no new request bytes since the deadline
                // was set: close; otherwise the next turn re-arms.
                let head_now = slot.head_since_ms.load(Ordering::Acquire);
                let re_armed = head_now != NO_HEAD
                    && Duration::from_millis(head_now) + limits.header_timeout
                        > ticket.registry.epoch.elapsed();
                if slot.busy.load(Ordering::Acquire) == 0 && !re_armed {
                    tracing::debug!(%peer, "idle connection timed out");
                    break;
                }
            }
            () = slot.became_idle.notified() => {
                if draining {
                    break;
                }
            }
            // Seen at the top of the next turn.
            _ = stop.changed(), if !draining => {}
        }
    }
    drop(ticket);
}

/// Open connections per address, for tests of the table.
#[cfg(test)]
fn counts(r: &Registry) -> std::collections::BTreeMap<IpAddr, usize> {
    r.table
        .lock()
        .unwrap()
        .per_ip
        .iter()
        .map(|(k, v)| (*k, *v))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ip(s: &str) -> IpAddr {
        s.parse().unwrap()
    }

    #[test]
    fn defaults_stay_below_the_descriptor_limit() {
        let l = NetLimits::default();
        let r = l.resolve(Some(1024), false);
        assert_eq!(r.max_connections, 896);
        assert_eq!(r.max_connections_per_client, 112);
        let small = l.resolve(Some(200), false);
        assert_eq!(small.max_connections, 100);
        assert_eq!(small.max_connections_per_client, 12);
        // Asked for more than the limit allows: lowered to it.
        let asked = NetLimits {
            max_connections: Some(5000),
            ..NetLimits::default()
        };
        assert_eq!(asked.resolve(Some(1024), false).max_connections, 896);
        assert_eq!(asked.resolve(None, false).max_connections, 896);
        // Behind a proxy every connection has its address.
        assert_eq!(l.resolve(Some(1024), true).max_connections_per_client, 896);
    }

    #[tokio::test]
    async fn at_a_cap_the_longest_idle_connection_makes_room_or_the_new_one_is_refused() {
        let r = Registry::new(3, 2);
        let a1 = r.admit(ip("127.0.0.1")).unwrap();
        let a2 = r.admit(ip("127.0.0.1")).unwrap();
        // a1 is in service; a2 idles. A third from the same address takes
        // a2's place.
        let busy = Busy::begin(&a1.slot, &r);
        let a3 = r.admit(ip("127.0.0.1")).unwrap();
        assert!(!r.table.lock().unwrap().open.contains_key(&a2.slot.id));
        assert_eq!(counts(&r)[&ip("127.0.0.1")], 2);
        // a3 busy too: the address is full of work, a fourth is refused.
        let busy3 = Busy::begin(&a3.slot, &r);
        assert_eq!(r.admit(ip("127.0.0.1")).err(), Some(Refusal::Client));
        // Another address fits under the total...
        let b1 = r.admit(ip("127.0.0.2")).unwrap();
        // ...and at the total, the idle b1 makes room for a newcomer.
        let _c1 = r.admit(ip("127.0.0.3")).unwrap();
        assert!(!r.table.lock().unwrap().open.contains_key(&b1.slot.id));
        // Dropping an evicted ticket does not count its address twice.
        drop(a2);
        drop(b1);
        assert_eq!(counts(&r)[&ip("127.0.0.1")], 2);
        assert_eq!(r.table.lock().unwrap().open.len(), 3);
        drop((busy, busy3));
    }
}
