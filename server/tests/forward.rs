//! Adversarial tests of the outbound call to external deciders
//! (`berth::external::forward`, SPEC §9 "Forwarding is safe").
//!
//! Every server here is a local listener on 127.0.0.1 (raw
//! `TcpListener`s writing hand-made HTTP for the misbehaving ones), and
//! each test that claims "nothing was contacted" counts the connections
//! its recording listeners accepted. Addresses outside 127.0.0.0/8 appear
//! only in URLs and resolver answers that must be refused before any
//! connect; none is ever dialled.

use std::future::Future;
use std::io;
use std::net::{IpAddr, SocketAddr};
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime};

use berth::external::forward::{
    AllowList, BoxFuture, ForwardError, ForwardPolicy, Forwarder, Outcome, Reply, Resolve,
};
use hyper::body::Bytes;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

/// How much later than its timeout a call may end. Generous because the
/// test machine is shared and busy; still far below any "ran on past the
/// timeout" failure (a trickle would go on for 10 s, a hang forever).
const MARGIN: Duration = Duration::from_millis(600);

// ---------------------------------------------------------------- servers

/// What a local server saw.
#[derive(Default)]
struct Log {
    accepted: AtomicUsize,
    open: AtomicUsize,
    max_open: AtomicUsize,
    written: AtomicU64,
    requests: Mutex<Vec<(String, Vec<u8>)>>,
}

impl Log {
    fn accepted(&self) -> usize {
        self.accepted.load(Ordering::SeqCst)
    }
}

/// A listener on 127.0.0.1 that hands each connection to `handler`.
async fn server<F, Fut>(handler: F) -> (SocketAddr, Arc<Log>)
where
    F: Fn(TcpStream, Arc<Log>) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = ()> + Send + 'static,
{
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    serve_on(listener, handler)
}

fn serve_on<F, Fut>(listener: TcpListener, handler: F) -> (SocketAddr, Arc<Log>)
where
    F: Fn(TcpStream, Arc<Log>) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = ()> + Send + 'static,
{
    let addr = listener.local_addr().unwrap();
    let log = Arc::new(Log::default());
    let shared = log.clone();
    tokio::spawn(async move {
        while let Ok((stream, _)) = listener.accept().await {
            shared.accepted.fetch_add(1, Ordering::SeqCst);
            tokio::spawn(handler(stream, shared.clone()));
        }
    });
    (addr, log)
}

/// A listener that only counts connections (and closes them).
async fn recorder() -> (SocketAddr, Arc<Log>) {
    server(|_, _| async {}).await
}

/// Reads one request (head and `content-length` body) and records it.
async fn read_request(stream: &mut TcpStream, log: &Log) -> Option<()> {
    let mut buf = Vec::new();
    let mut chunk = [0u8; 8192];
    loop {
        if let Some(end) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            let head = String::from_utf8_lossy(&buf[..end]).to_string();
            let len = head
                .lines()
                .find_map(|l| {
                    let (k, v) = l.split_once(':')?;
                    k.eq_ignore_ascii_case("content-length")
                        .then(|| v.trim().parse::<usize>().ok())?
                })
                .unwrap_or(0);
            while buf.len() < end + 4 + len {
                let n = stream.read(&mut chunk).await.ok()?;
                if n == 0 {
                    return None;
                }
                buf.extend_from_slice(&chunk[..n]);
            }
            let body = buf[end + 4..end + 4 + len].to_vec();
            log.requests.lock().unwrap().push((head, body));
            return Some(());
        }
        let n = stream.read(&mut chunk).await.ok()?;
        if n == 0 {
            return None;
        }
        buf.extend_from_slice(&chunk[..n]);
    }
}

/// A server answering every request with `head` (status line and
/// headers, without the blank line) and `body`.
async fn fixed(head: String, body: Vec<u8>) -> (SocketAddr, Arc<Log>) {
    let head = Arc::new(head);
    let body = Arc::new(body);
    server(move |mut s, log| {
        let (head, body) = (head.clone(), body.clone());
        async move {
            if read_request(&mut s, &log).await.is_some() {
                let _ = s.write_all(format!("{head}\r\n\r\n").as_bytes()).await;
                let _ = s.write_all(&body).await;
                let _ = s.shutdown().await;
            }
        }
    })
    .await
}

async fn ok_server() -> (SocketAddr, Arc<Log>) {
    fixed(
        "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 15".into(),
        br#"{"proposals":1}"#.to_vec(),
    )
    .await
}

/// Holds a connection open, reading and discarding, until the peer closes.
/// Tracks how many are open at once.
async fn hang(mut s: TcpStream, log: Arc<Log>) {
    let now = log.open.fetch_add(1, Ordering::SeqCst) + 1;
    log.max_open.fetch_max(now, Ordering::SeqCst);
    let mut sink = [0u8; 4096];
    while matches!(s.read(&mut sink).await, Ok(n) if n > 0) {}
    log.open.fetch_sub(1, Ordering::SeqCst);
}

// --------------------------------------------------------------- resolver

/// A scripted DNS: the n-th call gets the n-th answer (the last one
/// repeats); every call is recorded.
struct Script {
    answers: Vec<Result<Vec<IpAddr>, String>>,
    calls: Mutex<Vec<(String, u16)>>,
}

impl Script {
    fn new(answers: Vec<Result<Vec<&str>, &str>>) -> Arc<Script> {
        Arc::new(Script {
            answers: answers
                .into_iter()
                .map(|a| {
                    a.map(|ips| ips.iter().map(|s| s.parse().unwrap()).collect())
                        .map_err(str::to_string)
                })
                .collect(),
            calls: Mutex::new(Vec::new()),
        })
    }

    /// A resolver that must never be asked (IP-literal URLs).
    fn none() -> Arc<Script> {
        Script::new(vec![Err("this test expects no DNS lookups")])
    }

    fn calls(&self) -> usize {
        self.calls.lock().unwrap().len()
    }
}

impl Resolve for Script {
    fn resolve(&self, host: &str, port: u16) -> BoxFuture<'_, io::Result<Vec<IpAddr>>> {
        let n = {
            let mut calls = self.calls.lock().unwrap();
            calls.push((host.to_string(), port));
            calls.len() - 1
        };
        let answer = self.answers[n.min(self.answers.len() - 1)].clone();
        Box::pin(async move { answer.map_err(io::Error::other) })
    }
}

fn forwarder(allow: &[&str], resolver: Arc<Script>) -> Forwarder {
    Forwarder::new(
        ForwardPolicy {
            allow: AllowList::parse(allow).unwrap(),
            ..ForwardPolicy::default()
        },
        resolver,
    )
}

const T: Duration = Duration::from_secs(5);

fn body() -> Bytes {
    Bytes::from_static(br#"{"schema":1}"#)
}

async fn post(f: &Forwarder, url: &str) -> Result<Reply, ForwardError> {
    f.post(url, &[], body(), T).await
}

fn blocked(r: Result<Reply, ForwardError>) -> (String, IpAddr, &'static str) {
    match r {
        Err(ForwardError::Blocked { host, addr, reason }) => (host, addr, reason),
        other => panic!("expected Blocked, got {other:?}"),
    }
}

// ------------------------------------------------------------------ tests

/// The `url` crate rewrites numeric IPv4 spellings to dotted quads; each
/// is recognised as 127.0.0.1 and refused without the allow-list, and
/// reaches the (same) listener with it. No DNS lookup either way.
#[tokio::test]
async fn every_ipv4_spelling_is_the_address_it_means() {
    let (addr, log) = ok_server().await;
    let port = addr.port();
    let spellings = [
        "2130706433",      // decimal
        "0177.0.0.1",      // octal
        "0x7f.1",          // hex, short
        "0x7f000001",      // hex
        "127.1",           // short
        "127.0.0.1.",      // trailing dot
        "%31%32%37.0.0.1", // percent-encoded
        "１２７.０.０.１", // full-width digits (IDNA maps them)
        "0x7F.0.0.01",     // mixed
    ];
    let closed = Script::none();
    let refusing = forwarder(&[], closed.clone());
    for s in spellings {
        let (host, ip, reason) = blocked(post(&refusing, &format!("http://{s}:{port}/")).await);
        assert_eq!(
            (host.as_str(), ip, reason),
            ("127.0.0.1", "127.0.0.1".parse().unwrap(), "loopback"),
            "{s}"
        );
    }
    assert_eq!(log.accepted(), 0, "refused spellings contacted nothing");

    let allowing = forwarder(&["127.0.0.1/32"], closed.clone());
    for s in spellings {
        let reply = post(&allowing, &format!("http://{s}:{port}/decide"))
            .await
            .unwrap();
        assert_eq!(reply.status, 200, "{s}");
        assert_eq!(reply.remote, addr, "{s}");
    }
    assert_eq!(log.accepted(), spellings.len());
    assert_eq!(closed.calls(), 0, "IP literals never go to the resolver");
    let requests = log.requests.lock().unwrap();
    assert!(requests
        .iter()
        .all(|(head, _)| head.starts_with("POST /decide HTTP/1.1")));
}

/// Literal addresses that are never reachable, or reachable only through
/// an IPv6 form of a blocked IPv4 address, are refused before any connect
/// — even with 127.0.0.1 allowed, and with the port of a live recording
/// listener, which therefore proves nothing was contacted.
#[tokio::test]
async fn blocked_literals_are_refused_before_any_connect() {
    let (addr, log) = recorder().await;
    let port = addr.port();
    let closed = Script::none();
    let f = forwarder(&["127.0.0.1/32"], closed.clone());
    let cases = [
        ("[::ffff:127.0.0.1]", "::ffff:127.0.0.1", "IPv4-mapped"),
        ("[::ffff:7f00:1]", "::ffff:127.0.0.1", "IPv4-mapped"),
        (
            "[::ffff:169.254.169.254]",
            "::ffff:169.254.169.254",
            "IPv4-mapped",
        ),
        ("[::127.0.0.1]", "::127.0.0.1", "IPv4-compatible"),
        (
            "[::ffff:0:127.0.0.1]",
            "::ffff:0:127.0.0.1",
            "IPv4-translated",
        ),
        ("[64:ff9b::127.0.0.1]", "64:ff9b::7f00:1", "NAT64"),
        ("[64:ff9b::a9fe:a9fe]", "64:ff9b::a9fe:a9fe", "NAT64"),
        ("[64:ff9b:1::a00:1]", "64:ff9b:1::a00:1", "local-use NAT64"),
        ("[2002:7f00:1::1]", "2002:7f00:1::1", "6to4"),
        ("[2002:a9fe:a9fe::1]", "2002:a9fe:a9fe::1", "6to4"),
        // Teredo, client part = 127.0.0.1 with every bit inverted.
        (
            "[2001:0:4136:e378:8000:63bf:80ff:fffe]",
            "2001:0:4136:e378:8000:63bf:80ff:fffe",
            "Teredo",
        ),
        ("[fd00:ec2::254]", "fd00:ec2::254", "cloud metadata"),
        ("169.254.169.254", "169.254.169.254", "cloud metadata"),
        ("100.100.100.200", "100.100.100.200", "cloud metadata"),
        ("168.63.129.16", "168.63.129.16", "cloud metadata"),
        ("169.254.0.1", "169.254.0.1", "link-local"),
        ("[fe80::1]", "fe80::1", "link-local"),
        ("0.0.0.0", "0.0.0.0", "unspecified"),
        ("0", "0.0.0.0", "unspecified"),
        ("[::]", "::", "unspecified"),
        ("224.0.0.1", "224.0.0.1", "multicast"),
        ("[ff02::1]", "ff02::1", "multicast"),
        ("255.255.255.255", "255.255.255.255", "broadcast"),
        ("0xffffffff", "255.255.255.255", "broadcast"),
        ("240.0.0.1", "240.0.0.1", "reserved"),
        // Allowed is 127.0.0.1/32 only: the rest of 127/8, private
        // ranges and ::1 stay closed.
        ("127.0.0.2", "127.0.0.2", "loopback"),
        ("[::1]", "::1", "loopback"),
        ("10.0.0.1", "10.0.0.1", "private"),
        ("172.16.0.1", "172.16.0.1", "private"),
        ("192.168.0.1", "192.168.0.1", "private"),
        ("100.64.0.1", "100.64.0.1", "private (CGNAT)"),
        ("[fc00::1]", "fc00::1", "private"),
    ];
    for (host, ip, reason) in cases {
        let url = format!("http://{host}:{port}/");
        let (_, got_ip, got_reason) = blocked(post(&f, &url).await);
        assert_eq!(got_ip, ip.parse::<IpAddr>().unwrap(), "{url}");
        assert!(got_reason.starts_with(reason), "{url}: {got_reason}");
        let https = format!("https://{host}:{port}/");
        blocked(post(&f, &https).await);
    }
    assert_eq!(log.accepted(), 0);
    assert_eq!(closed.calls(), 0);
    // The message names host, address and reason.
    let err = post(&f, "http://169.254.169.254/latest/meta-data/")
        .await
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "refused to contact `169.254.169.254` at 169.254.169.254 (cloud metadata): deciders may \
         only be at public addresses, or at loopback or private ones an administrator allowed"
    );
    // An address an allow-list could open says how.
    assert!(berth::external::address::allow_hint("169.254.169.254".parse().unwrap()).is_none());
    assert_eq!(
        berth::external::address::allow_hint("10.1.2.3".parse().unwrap()).as_deref(),
        Some("an administrator can allow it by starting the server with --decider-allow 10.1.2.3/32 (or a wider CIDR)")
    );
    assert!(berth::external::address::allow_hint("::ffff:127.0.0.1".parse().unwrap()).is_none());
}

/// URLs that are not an absolute http(s) URL with a host, without user
/// info and fragment, are refused with a clear message that does not
/// repeat credentials or the query — even when they point at an allowed
/// live listener.
#[tokio::test]
async fn unusable_urls_are_refused_with_clear_messages() {
    let (addr, log) = ok_server().await;
    let port = addr.port();
    let closed = Script::none();
    let f = forwarder(&["127.0.0.1/32"], closed.clone());
    let cases = [
        (
            format!("http://a@127.0.0.1:{port}/"),
            "user name or password",
        ),
        (
            format!("http://a:hunter2@127.0.0.1:{port}/"),
            "user name or password",
        ),
        (
            format!("http://:hunter2@127.0.0.1:{port}/"),
            "user name or password",
        ),
        (format!("ftp://127.0.0.1:{port}/"), "scheme is `ftp`"),
        ("file:///etc/passwd".to_string(), "scheme is `file`"),
        ("gopher://127.0.0.1/".to_string(), "scheme is `gopher`"),
        ("javascript:alert(1)".to_string(), "scheme is `javascript`"),
        ("data:application/json,{}".to_string(), "scheme is `data`"),
        ("http://".to_string(), "not an absolute URL (empty host)"),
        (
            "http://:80/".to_string(),
            "not an absolute URL (empty host)",
        ),
        (
            "https://?token=hunter2".to_string(),
            "not an absolute URL (empty host)",
        ),
        (
            "/decide".to_string(),
            "not an absolute URL (relative URL without a base)",
        ),
        ("127.0.0.1:8080".to_string(), "relative URL without a base"),
        ("localhost:8080".to_string(), "scheme is `localhost`"),
        (
            format!("http://[fe80::1%25eth0]:{port}/"),
            "not an absolute URL (invalid IPv6 address)",
        ),
        (format!("http://127.0.0.1:{port}/#frag"), "fragment"),
        ("http://127.0.0.1:0/".to_string(), "port 0"),
        (
            "http://127.0.0.1:65536/".to_string(),
            "not an absolute URL (invalid port number)",
        ),
        (
            format!("http://127.0.0.1:{port}/?q={}", "x".repeat(3000)),
            "at most 2048",
        ),
        ("http://exa mple.com/".to_string(), "not an absolute URL"),
    ];
    for (url, expect) in &cases {
        let err = post(&f, url).await.unwrap_err();
        assert!(matches!(err, ForwardError::BadUrl(_)), "{url}: {err:?}");
        let text = err.to_string();
        assert!(
            text.starts_with("the decider URL cannot be used: "),
            "{text}"
        );
        assert!(text.contains(expect), "{url}: {text}");
        assert!(!text.contains("hunter2"), "{text}");
    }
    assert_eq!(log.accepted(), 0);
    assert_eq!(closed.calls(), 0);
    // The same validator is what registration uses.
    assert!(berth::external::forward::validate_url("https://decider.example/v1?x=1").is_ok());
}

/// A DNS name whose answer is, or includes, a blocked address is refused
/// as a whole (no "skip the bad answer"), after exactly one lookup, and
/// nothing is contacted — not even the allowed answer.
#[tokio::test]
async fn names_resolving_to_blocked_addresses_are_refused() {
    let (addr, log) = ok_server().await;
    let port = addr.port();
    let url = format!("http://decider.example:{port}/run");
    let cases: [(Vec<&str>, &str, &str); 6] = [
        (vec!["169.254.169.254"], "169.254.169.254", "cloud metadata"),
        (vec!["fd00:ec2::254"], "fd00:ec2::254", "cloud metadata"),
        (vec!["10.1.2.3"], "10.1.2.3", "private"),
        (vec!["::ffff:127.0.0.1"], "::ffff:127.0.0.1", "IPv4-mapped"),
        // The allowed address first, then a blocked one: all refused.
        (
            vec!["127.0.0.1", "169.254.169.254"],
            "169.254.169.254",
            "cloud metadata",
        ),
        (vec!["127.0.0.1", "0.0.0.0"], "0.0.0.0", "unspecified"),
    ];
    for (answer, ip, reason) in cases {
        let dns = Script::new(vec![Ok(answer.clone())]);
        let f = forwarder(&["127.0.0.1/32"], dns.clone());
        let (host, got_ip, got_reason) = blocked(post(&f, &url).await);
        assert_eq!(host, "decider.example");
        assert_eq!(got_ip, ip.parse::<IpAddr>().unwrap(), "{answer:?}");
        assert!(got_reason.starts_with(reason), "{answer:?}: {got_reason}");
        assert_eq!(
            *dns.calls.lock().unwrap(),
            vec![("decider.example".to_string(), port)]
        );
    }
    // Without the allow-list, a name for 127.0.0.1 is refused too.
    let dns = Script::new(vec![Ok(vec!["127.0.0.1"])]);
    let (_, _, reason) = blocked(post(&forwarder(&[], dns.clone()), &url).await);
    assert_eq!(reason, "loopback");
    assert_eq!(log.accepted(), 0, "no answer was contacted");

    // Resolver failures and empty answers are Resolve errors.
    let failing = Script::new(vec![Err("no such host")]);
    let err = post(&forwarder(&[], failing), &url).await.unwrap_err();
    assert_eq!(
        err.to_string(),
        "could not resolve the decider's host: `decider.example`: no such host"
    );
    let empty = Script::new(vec![Ok(vec![])]);
    let err = post(&forwarder(&[], empty), &url).await.unwrap_err();
    assert!(
        matches!(err, ForwardError::Resolve(ref m) if m.contains("no addresses")),
        "{err:?}"
    );
    assert_eq!(log.accepted(), 0);
}

/// DNS rebinding: the resolver answers the allowed address first and the
/// metadata address from then on. The first call connects to its one
/// answer after one lookup (a second lookup by an HTTP client would have
/// got the metadata address); the second call is refused after its own
/// single lookup.
#[tokio::test]
async fn changing_dns_answers_cannot_bypass_the_check() {
    let (addr, log) = ok_server().await;
    let url = format!("http://rebind.example:{}/", addr.port());
    let dns = Script::new(vec![Ok(vec!["127.0.0.1"]), Ok(vec!["169.254.169.254"])]);
    let f = forwarder(&["127.0.0.1/32"], dns.clone());

    let reply = post(&f, &url).await.unwrap();
    assert_eq!(reply.status, 200);
    assert_eq!(reply.remote, addr);
    assert_eq!(dns.calls(), 1, "exactly one lookup for the first call");
    assert_eq!(log.accepted(), 1);

    let (_, ip, reason) = blocked(post(&f, &url).await);
    assert_eq!(
        (ip, reason),
        ("169.254.169.254".parse().unwrap(), "cloud metadata")
    );
    assert_eq!(dns.calls(), 2, "exactly one lookup for the second call");
    assert_eq!(log.accepted(), 1, "the second call contacted nothing");

    // With several allowed answers the first one that accepts is used, in
    // the resolver's order: a dead port on 127.0.0.2 is not tried because
    // the first answer already accepts.
    let dns = Script::new(vec![Ok(vec!["127.0.0.1", "127.0.0.2"])]);
    let f = forwarder(&["127.0.0.0/8"], dns.clone());
    assert_eq!(post(&f, &url).await.unwrap().remote, addr);
    assert_eq!(dns.calls(), 1);
}

/// No 3xx is followed: each is a `Redirect` error and the Location target
/// (another live listener) receives nothing.
#[tokio::test]
async fn redirects_are_never_followed() {
    let (target, target_log) = ok_server().await;
    for status in [301u16, 302, 303, 307, 308] {
        let head = format!(
            "HTTP/1.1 {status} Moved\r\nlocation: http://127.0.0.1:{}/elsewhere\r\ncontent-length: 0",
            target.port()
        );
        let (addr, log) = fixed(head, Vec::new()).await;
        let f = forwarder(&["127.0.0.1/32"], Script::none());
        let err = post(&f, &format!("http://127.0.0.1:{}/", addr.port()))
            .await
            .unwrap_err();
        assert_eq!(err, ForwardError::Redirect { status });
        assert!(err.to_string().contains("redirects are never followed"));
        assert_eq!(log.accepted(), 1);
        assert_eq!(
            berth::external::forward::outcome(status, None),
            Outcome::Redirect { status }
        );
    }
    assert_eq!(
        target_log.accepted(),
        0,
        "the Location target was never contacted"
    );
}

fn assert_on_time(started: Instant, timeout: Duration) -> Duration {
    let took = started.elapsed();
    assert!(took >= timeout, "ended early: {took:?}");
    assert!(
        took < timeout + MARGIN,
        "ended late: {took:?} for a {timeout:?} timeout"
    );
    took
}

/// A decider that accepts and reads the request but never answers: the
/// call ends at its timeout, and the socket is closed then (the server
/// sees the close).
#[tokio::test]
async fn a_decider_that_never_answers_times_out_on_time() {
    let (addr, log) = server(hang).await;
    let f = forwarder(&["127.0.0.1/32"], Script::none());
    let timeout = Duration::from_millis(800);
    let started = Instant::now();
    let err = f
        .post(
            &format!("http://127.0.0.1:{}/", addr.port()),
            &[],
            body(),
            timeout,
        )
        .await
        .unwrap_err();
    assert_eq!(err, ForwardError::Timeout);
    let took = assert_on_time(started, timeout);
    println!("never answers: timeout {timeout:?}, ended after {took:?}");
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert_eq!(log.accepted(), 1);
    assert_eq!(
        log.open.load(Ordering::SeqCst),
        0,
        "the connection was closed at the timeout"
    );
}

/// Headers at once, then the body one byte every 100 ms: the timeout is
/// total, so the call ends at it although bytes keep arriving.
#[tokio::test]
async fn a_trickling_body_times_out_on_time() {
    let (addr, log) = server(|mut s, log| async move {
        if read_request(&mut s, &log).await.is_none() {
            return;
        }
        let head =
            "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 100\r\n\r\n";
        if s.write_all(head.as_bytes()).await.is_err() {
            return;
        }
        for _ in 0..100 {
            tokio::time::sleep(Duration::from_millis(100)).await;
            if s.write_all(b" ").await.is_err() {
                return;
            }
            log.written.fetch_add(1, Ordering::SeqCst);
        }
    })
    .await;
    let f = forwarder(&["127.0.0.1/32"], Script::none());
    let timeout = Duration::from_secs(1);
    let started = Instant::now();
    let err = f
        .post(
            &format!("http://127.0.0.1:{}/", addr.port()),
            &[],
            body(),
            timeout,
        )
        .await
        .unwrap_err();
    assert_eq!(err, ForwardError::Timeout);
    let took = assert_on_time(started, timeout);
    let trickled = log.written.load(Ordering::SeqCst);
    println!("trickle: {trickled} body bytes arrived, ended after {took:?}");
    assert!(
        (5..=11).contains(&trickled),
        "{trickled} bytes trickled in before the timeout"
    );
}

/// A listener that never accepts: backlog 0 with one queued connection,
/// so the kernel drops further SYNs and `connect` itself hangs.
#[tokio::test]
async fn a_listener_that_never_accepts_times_out_on_time() {
    let socket = tokio::net::TcpSocket::new_v4().unwrap();
    socket.bind("127.0.0.1:0".parse().unwrap()).unwrap();
    let listener = socket.listen(0).unwrap();
    let addr = listener.local_addr().unwrap();
    // Fill the accept queue; nobody ever calls accept.
    let mut fillers = Vec::new();
    for _ in 0..3 {
        if let Ok(Ok(s)) =
            tokio::time::timeout(Duration::from_millis(200), TcpStream::connect(addr)).await
        {
            fillers.push(s);
        }
    }
    assert!(!fillers.is_empty());
    let f = forwarder(&["127.0.0.1/32"], Script::none());
    let timeout = Duration::from_millis(800);
    let started = Instant::now();
    let err = f
        .post(
            &format!("http://127.0.0.1:{}/", addr.port()),
            &[],
            body(),
            timeout,
        )
        .await
        .unwrap_err();
    assert_eq!(err, ForwardError::Timeout);
    let took = assert_on_time(started, timeout);
    println!("never accepts: ended after {took:?}");
    drop(listener);
}

/// A declared 10 GB `content-length` stops the call before the body is
/// read: at once, not at the timeout.
#[tokio::test]
async fn a_declared_oversize_reply_is_refused_before_reading() {
    let (addr, _) = server(|mut s, log| async move {
        if read_request(&mut s, &log).await.is_none() {
            return;
        }
        let head = "HTTP/1.1 200 OK\r\ncontent-length: 10737418240\r\n\r\n";
        if s.write_all(head.as_bytes()).await.is_err() {
            return;
        }
        // Then stream for as long as the client reads.
        let chunk = vec![b'x'; 16 * 1024];
        while s.write_all(&chunk).await.is_ok() {
            log.written.fetch_add(chunk.len() as u64, Ordering::SeqCst);
        }
    })
    .await;
    let limit = 64 * 1024;
    let f = Forwarder::new(
        ForwardPolicy {
            allow: AllowList::parse(["127.0.0.1/32"]).unwrap(),
            max_response_bytes: limit,
            ..ForwardPolicy::default()
        },
        Script::none(),
    );
    let started = Instant::now();
    let err = post(&f, &format!("http://127.0.0.1:{}/", addr.port()))
        .await
        .unwrap_err();
    assert_eq!(err, ForwardError::ResponseTooLarge { limit });
    assert!(
        started.elapsed() < Duration::from_secs(1),
        "{:?}",
        started.elapsed()
    );
    assert_eq!(
        err.to_string(),
        "the decider's reply is larger than the limit of 65536 bytes; reading stopped there"
    );
}

/// A chunked reply without end: the call stops as soon as the running
/// total passes the limit. The server counts what it managed to write
/// before its writes failed: the limit plus what the two kernels' socket
/// buffers absorbed, far from the endless stream.
#[tokio::test]
async fn an_endless_stream_is_cut_near_the_limit() {
    let (addr, log) = server(|mut s, log| async move {
        if read_request(&mut s, &log).await.is_none() {
            return;
        }
        let head = "HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n";
        if s.write_all(head.as_bytes()).await.is_err() {
            return;
        }
        let data = vec![b'x'; 4096];
        let mut chunk = format!("{:x}\r\n", data.len()).into_bytes();
        chunk.extend_from_slice(&data);
        chunk.extend_from_slice(b"\r\n");
        while s.write_all(&chunk).await.is_ok() {
            log.written.fetch_add(chunk.len() as u64, Ordering::SeqCst);
        }
        // Writes failed: the client closed. Mark the end.
        log.open.store(1, Ordering::SeqCst);
    })
    .await;
    let limit = 256 * 1024;
    let f = Forwarder::new(
        ForwardPolicy {
            allow: AllowList::parse(["127.0.0.1/32"]).unwrap(),
            max_response_bytes: limit,
            ..ForwardPolicy::default()
        },
        Script::none(),
    );
    let started = Instant::now();
    let err = post(&f, &format!("http://127.0.0.1:{}/", addr.port()))
        .await
        .unwrap_err();
    let took = started.elapsed();
    assert_eq!(err, ForwardError::ResponseTooLarge { limit });
    assert!(took < Duration::from_secs(2), "{took:?}");
    // Wait for the server to notice the close.
    for _ in 0..100 {
        if log.open.load(Ordering::SeqCst) == 1 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert_eq!(
        log.open.load(Ordering::SeqCst),
        1,
        "the server's writes failed: the socket was closed"
    );
    let written = log.written.load(Ordering::SeqCst);
    println!("endless stream: limit {limit} B, server wrote {written} B before its writes failed, call took {took:?}");
    assert!(written >= limit as u64);
    // Beyond what the forwarder read, only the two kernels' socket
    // buffers can have absorbed data: at most the receive buffer's and
    // the send buffer's maximum sizes (autotuning stays below them). An
    // uncut stream would have gone on for the whole 5 s timeout, at
    // gigabytes per second on loopback.
    let buffers = sysctl_max("tcp_rmem") + sysctl_max("tcp_wmem");
    println!("  (bound: limit + {buffers} B of socket buffer maxima)");
    assert!(written <= limit as u64 + buffers, "{written}");
}

/// The largest size (third field) of `net.ipv4.<name>`, in bytes.
fn sysctl_max(name: &str) -> u64 {
    let text = std::fs::read_to_string(format!("/proc/sys/net/ipv4/{name}")).unwrap();
    text.split_whitespace().nth(2).unwrap().parse().unwrap()
}

/// The request limit is checked before anything: resolve, connect, send.
#[tokio::test]
async fn an_oversize_request_is_refused_before_sending() {
    let (addr, log) = ok_server().await;
    let dns = Script::new(vec![Ok(vec!["127.0.0.1"])]);
    let f = Forwarder::new(
        ForwardPolicy {
            allow: AllowList::parse(["127.0.0.1/32"]).unwrap(),
            max_request_bytes: 1024,
            ..ForwardPolicy::default()
        },
        dns.clone(),
    );
    let url = format!("http://decider.example:{}/", addr.port());
    let err = f
        .post(&url, &[], Bytes::from(vec![b' '; 1025]), T)
        .await
        .unwrap_err();
    assert_eq!(
        err,
        ForwardError::RequestTooLarge {
            size: 1025,
            limit: 1024
        }
    );
    assert_eq!((log.accepted(), dns.calls()), (0, 0));
    let reply = f
        .post(&url, &[], Bytes::from(vec![b' '; 1024]), T)
        .await
        .unwrap();
    assert_eq!(reply.status, 200);
    assert_eq!(log.requests.lock().unwrap()[0].1.len(), 1024);
    // Timeouts at the extremes: none left is a Timeout (not Busy, as no
    // call was waiting); one too large to add to the clock does not panic.
    let err = f.post(&url, &[], body(), Duration::ZERO).await.unwrap_err();
    assert_eq!(err, ForwardError::Timeout);
    assert_eq!(log.accepted(), 1, "a zero timeout contacted nothing");
    let reply = f.post(&url, &[], body(), Duration::MAX).await.unwrap();
    assert_eq!(reply.status, 200);
    assert_eq!(log.accepted(), 2);
}

/// 50 concurrent calls to a hanging decider with a cap of 4: exactly 4
/// connections while they hang, every call ends by its timeout (`Timeout`
/// for those holding a slot, `Busy` for those that waited in vain), and
/// an unrelated route served by the same runtime stays fast throughout.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hanging_decider_cannot_starve_the_server() {
    const CAP: usize = 4;
    let (addr, log) = server(hang).await;
    let f = Arc::new(Forwarder::new(
        ForwardPolicy {
            allow: AllowList::parse(["127.0.0.1/32"]).unwrap(),
            max_concurrent: CAP,
            ..ForwardPolicy::default()
        },
        Script::none(),
    ));

    // Another route of the same server: a trivial axum handler.
    let app = axum::Router::new().route("/ping", axum::routing::get(|| async { "pong" }));
    let ping_listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let ping_url = format!("http://{}/ping", ping_listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(ping_listener, app).await });
    let client = reqwest::Client::builder().no_proxy().build().unwrap();

    let timeout = Duration::from_millis(1500);
    let url = format!("http://127.0.0.1:{}/", addr.port());
    let started = Instant::now();
    let calls: Vec<_> = (0..50)
        .map(|_| {
            let (f, url) = (f.clone(), url.clone());
            tokio::spawn(async move {
                let r = f.post(&url, &[], body(), timeout).await;
                (r, Instant::now())
            })
        })
        .collect();

    // Ping while the 50 calls hang.
    let pinger = tokio::spawn(async move {
        let mut worst = Duration::ZERO;
        let mut n = 0;
        while started.elapsed() < Duration::from_millis(1300) {
            let t = Instant::now();
            let text = client
                .get(&ping_url)
                .send()
                .await
                .unwrap()
                .text()
                .await
                .unwrap();
            assert_eq!(text, "pong");
            worst = worst.max(t.elapsed());
            n += 1;
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        (worst, n)
    });
    tokio::time::sleep(Duration::from_millis(500)).await;
    let in_flight = f.in_flight();
    // Just before the first deadline: how many connections were ever
    // opened, and the most open at once. (After the deadlines a waiter
    // may take a freed slot and connect while the server has not yet
    // seen the previous socket close, so later counts are not exact.)
    tokio::time::sleep_until((started + Duration::from_millis(1300)).into()).await;
    let accepted_before_deadline = log.accepted();
    let max_open = log.max_open.load(Ordering::SeqCst);

    let (mut timeouts, mut busy, mut last_end) = (0, 0, Duration::ZERO);
    for call in calls {
        let (r, ended) = call.await.unwrap();
        last_end = last_end.max(ended - started);
        match r {
            Err(ForwardError::Timeout) => timeouts += 1,
            Err(ForwardError::Busy { limit }) => {
                assert_eq!(limit, CAP);
                busy += 1
            }
            other => panic!("unexpected {other:?}"),
        }
    }
    let (worst_ping, pings) = pinger.await.unwrap();
    println!(
        "50 hanging calls, cap {CAP}: before the deadline {accepted_before_deadline} connections \
         accepted, at most {max_open} open at once ({} accepted in all); \
         {timeouts} Timeout + {busy} Busy, last ended after {last_end:?}; \
         {pings} pings meanwhile, slowest {worst_ping:?}",
        log.accepted()
    );
    assert_eq!(in_flight, CAP);
    assert_eq!(
        accepted_before_deadline, CAP,
        "only the slot holders connected"
    );
    assert_eq!(max_open, CAP, "{max_open} connections open at once");
    // The slot holders time out; the calls that waited behind them have
    // (almost) the same deadline, so they fail as Busy without connecting.
    // Two stragglers are tolerated for a loaded machine.
    assert!(
        (CAP..=CAP + 2).contains(&timeouts) && timeouts + busy == 50,
        "{timeouts} + {busy}"
    );
    assert!(last_end < timeout + MARGIN, "{last_end:?}");
    assert!(pings >= 5, "{pings}");
    assert!(worst_ping < Duration::from_millis(300), "{worst_ping:?}");
    assert!(ForwardError::Busy { limit: CAP }.is_deferral());
    assert!(!ForwardError::Timeout.is_deferral());
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert_eq!(f.in_flight(), 0);
    assert_eq!(
        log.open.load(Ordering::SeqCst),
        0,
        "every connection closed"
    );
    assert_eq!(
        log.accepted(),
        timeouts,
        "only the calls that timed out ever connected"
    );
}

/// Proxy variables in the environment are ignored: the target is
/// contacted directly (by name through the system resolver or a scripted
/// one, and by IP literal), the proxy listener never. The system resolver
/// is exercised here too, and only here: `localhost` comes from the hosts
/// file, and keeping every `getaddrinfo` call in the test that sets the
/// environment means none runs while another thread changes it.
#[tokio::test]
async fn proxies_from_the_environment_are_never_used() {
    use berth::external::forward::SystemResolver;
    let (proxy, proxy_log) = recorder().await;
    let (addr, log) = ok_server().await;
    let port = addr.port();
    let proxy_url = format!("http://{proxy}");
    let vars = [
        "HTTP_PROXY",
        "HTTPS_PROXY",
        "ALL_PROXY",
        "http_proxy",
        "https_proxy",
        "all_proxy",
    ];
    for v in vars {
        std::env::set_var(v, &proxy_url);
    }
    let system = |allow: &[&str]| {
        Forwarder::new(
            ForwardPolicy {
                allow: AllowList::parse(allow).unwrap(),
                ..ForwardPolicy::default()
            },
            Arc::new(SystemResolver),
        )
    };
    let refused = post(&system(&[]), &format!("http://localhost:{port}/")).await;
    // `localhost` may resolve to ::1 first; the listener is on 127.0.0.1.
    let by_system = post(
        &system(&["127.0.0.1/32", "::1"]),
        &format!("http://localhost:{port}/"),
    )
    .await;
    let dns = Script::new(vec![Ok(vec!["127.0.0.1"])]);
    let f = forwarder(&["127.0.0.1/32"], dns);
    let by_name = post(&f, &format!("http://decider.example:{port}/")).await;
    let by_ip = post(&f, &format!("http://127.0.0.1:{port}/")).await;
    for v in vars {
        std::env::remove_var(v);
    }
    let (host, _, reason) = blocked(refused);
    assert_eq!((host.as_str(), reason), ("localhost", "loopback"));
    assert_eq!(by_system.unwrap().remote, addr);
    assert_eq!(by_name.unwrap().status, 200);
    assert_eq!(by_ip.unwrap().status, 200);
    assert_eq!(log.accepted(), 3);
    assert_eq!(proxy_log.accepted(), 0, "the proxy was never contacted");
}

/// Endless response headers are cut by the HTTP parser's own bound on the
/// head (hyper's read buffer, about 400 KiB) long before the timeout.
#[tokio::test]
async fn endless_headers_are_an_error_not_a_hang() {
    let (addr, _) = server(|mut s, log| async move {
        if read_request(&mut s, &log).await.is_none() {
            return;
        }
        if s.write_all(b"HTTP/1.1 200 OK\r\n").await.is_err() {
            return;
        }
        let line = format!("x-filler: {}\r\n", "a".repeat(1000));
        while s.write_all(line.as_bytes()).await.is_ok() {
            log.written.fetch_add(line.len() as u64, Ordering::SeqCst);
        }
    })
    .await;
    let f = forwarder(&["127.0.0.1/32"], Script::none());
    let started = Instant::now();
    let err = post(&f, &format!("http://{addr}/")).await.unwrap_err();
    let took = started.elapsed();
    println!("endless headers: {err} after {took:?}");
    assert!(matches!(err, ForwardError::Http(_)), "{err:?}");
    assert!(took < Duration::from_secs(2), "{took:?}");
}

/// What goes on the wire, and that replies come back byte for byte: no
/// decompression of a gzip-labelled body, `accept-encoding: identity`,
/// caller headers passed on.
#[tokio::test]
async fn the_request_is_exact_and_the_reply_is_never_decoded() {
    // The gzip magic and junk: decoding would fail or change it.
    let gz = vec![0x1f, 0x8b, 0x08, 0x00, 0xde, 0xad, 0xbe, 0xef, 0x00, 0x01];
    let head = format!(
        "HTTP/1.1 200 OK\r\ncontent-encoding: gzip\r\ncontent-length: {}",
        gz.len()
    );
    let (addr, log) = fixed(head, gz.clone()).await;
    let dns = Script::new(vec![Ok(vec!["127.0.0.1"])]);
    let f = forwarder(&["127.0.0.1/32"], dns);
    let url = format!("http://decider.example:{}/v1/decide?estate=a", addr.port());
    let sig = ("berth-signature", "t=1700000000,v1=abcdef".to_string());
    let reply = f.post(&url, &[sig], body(), T).await.unwrap();
    assert_eq!(reply.body.as_ref(), gz.as_slice());
    assert_eq!(reply.outcome(), Outcome::Accepted);

    let requests = log.requests.lock().unwrap();
    let (head, sent) = &requests[0];
    assert_eq!(sent.as_slice(), br#"{"schema":1}"#);
    let lines: Vec<String> = head.lines().map(str::to_ascii_lowercase).collect();
    assert_eq!(lines[0], "post /v1/decide?estate=a http/1.1");
    let has = |l: &str| lines.iter().any(|x| x == l);
    assert!(
        has(&format!("host: decider.example:{}", addr.port())),
        "{lines:?}"
    );
    assert!(has("content-type: application/json"), "{lines:?}");
    assert!(has("accept-encoding: identity"), "{lines:?}");
    assert!(has("berth-signature: t=1700000000,v1=abcdef"), "{lines:?}");
    assert!(has("content-length: 12"), "{lines:?}");
    assert_eq!(
        lines
            .iter()
            .filter(|l| l.starts_with("accept-encoding"))
            .count(),
        1
    );
}

/// Statuses classify: 2xx accepted, 429/503 deferred (Retry-After in
/// seconds or as an HTTP date), 500 and 404 failed. A malformed body is
/// returned as is: judging it is the caller's business.
#[tokio::test]
async fn statuses_classify_with_retry_after() {
    let f = forwarder(&["127.0.0.1/32"], Script::none());
    let in_two_minutes = httpdate::fmt_http_date(SystemTime::now() + Duration::from_secs(120));
    let cases = [
        ("429 Too Many Requests", Some("30".to_string())),
        ("429 Too Many Requests", Some(in_two_minutes)),
        ("503 Service Unavailable", Some("5".to_string())),
        ("503 Service Unavailable", None),
        ("500 Internal Server Error", None),
        ("404 Not Found", None),
        ("200 OK", None),
    ];
    let mut outcomes = Vec::new();
    for (status, retry) in cases {
        let mut head = format!("HTTP/1.1 {status}\r\ncontent-length: 8");
        if let Some(r) = retry {
            head.push_str(&format!("\r\nretry-after: {r}"));
        }
        let (addr, _) = fixed(head, b"not json".to_vec()).await;
        let reply = post(&f, &format!("http://127.0.0.1:{}/", addr.port()))
            .await
            .unwrap();
        assert_eq!(reply.body.as_ref(), b"not json");
        outcomes.push(reply.outcome());
    }
    assert_eq!(
        outcomes[0],
        Outcome::Deferred {
            retry_after: Some(Duration::from_secs(30))
        }
    );
    match outcomes[1] {
        // An HTTP date has one-second resolution; allow for the clock moving.
        Outcome::Deferred {
            retry_after: Some(d),
        } => {
            assert!(
                d <= Duration::from_secs(120) && d >= Duration::from_secs(115),
                "{d:?}"
            )
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(
        outcomes[2],
        Outcome::Deferred {
            retry_after: Some(Duration::from_secs(5))
        }
    );
    assert_eq!(outcomes[3], Outcome::Deferred { retry_after: None });
    assert_eq!(outcomes[4], Outcome::Failed { status: 500 });
    assert_eq!(outcomes[5], Outcome::Failed { status: 404 });
    assert_eq!(outcomes[6], Outcome::Accepted);
}

/// A server that closes without a valid reply, or answers garbage, is an
/// `Http` error, not a hang or a panic.
#[tokio::test]
async fn broken_replies_are_http_errors() {
    let f = forwarder(&["127.0.0.1/32"], Script::none());
    let (closing, _) = server(|mut s, log| async move {
        let _ = read_request(&mut s, &log).await;
    })
    .await;
    let err = post(&f, &format!("http://{closing}/")).await.unwrap_err();
    assert!(matches!(err, ForwardError::Http(_)), "{err:?}");
    let (garbage, _) = fixed("SSH-2.0-OpenSSH_9.6".into(), Vec::new()).await;
    let err = post(&f, &format!("http://{garbage}/")).await.unwrap_err();
    assert!(matches!(err, ForwardError::Http(_)), "{err:?}");
    // A short body (content-length promises more, then close).
    let (short, _) = fixed(
        "HTTP/1.1 200 OK\r\ncontent-length: 100".into(),
        b"{}".to_vec(),
    )
    .await;
    let err = post(&f, &format!("http://{short}/")).await.unwrap_err();
    assert!(matches!(err, ForwardError::Http(_)), "{err:?}");
    // A closed port is a Connect error naming the address.
    let port = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap().port()
    };
    let err = post(&f, &format!("http://127.0.0.1:{port}/"))
        .await
        .unwrap_err();
    assert!(
        matches!(err, ForwardError::Connect(ref m) if m.contains(&format!("127.0.0.1:{port}"))),
        "{err:?}"
    );
}

/// https to a server that is not a trusted TLS endpoint fails in the TLS
/// handshake (certificate verification uses the webpki roots only); the
/// plain-HTTP listener saw the ClientHello and nothing else.
#[tokio::test]
async fn https_requires_a_tls_server() {
    let (addr, log) = server(|mut s, _| async move {
        let mut buf = [0u8; 1024];
        let _ = s.read(&mut buf).await;
        let _ = s
            .write_all(b"HTTP/1.1 400 Bad Request\r\ncontent-length: 0\r\n\r\n")
            .await;
    })
    .await;
    let f = forwarder(&["127.0.0.1/32"], Script::none());
    let err = post(&f, &format!("https://127.0.0.1:{}/", addr.port()))
        .await
        .unwrap_err();
    assert!(matches!(err, ForwardError::Tls(_)), "{err:?}");
    assert_eq!(log.accepted(), 1);
}

/// A self-signed certificate and its key (P-256, valid until 2126, for
/// 127.0.0.1 and localhost), made with `openssl req -x509` for this test
/// only: a throwaway fixture, not a secret.
const SELF_SIGNED: &str = "\
-----BEGIN CERTIFICATE-----
MIIBmDCCAT6gAwIBAgIUIayUBv/PeCa1QxyxvMln/vSm6tIwCgYIKoZIzj0EAwIw
FDESMBAGA1UEAwwJbG9jYWxob3N0MCAXDTI2MTEzMDEwMzEyNFoYDzIxMjYxMTA2
MTAzMTI0WjAUMRIwEAYDVQQDDAlsb2NhbGhvc3QwWTATBgcqhkjOPQIBBggqhkjO
PQMBBwNCAATXNY9gR1xrB4vnjBoLBK7zZ5oWerN2DF3Cf1bNO5H45gcudAGLBoT3
bQaSVmUQNlTyh9frpzXNUp8EbEs6QJiko2wwajAdBgNVHQ4EFgQUyGHyaR65rZJd
cCivHVNcs8L4iRcwHwYDVR0jBBgwFoAUyGHyaR65rZJdcCivHVNcs8L4iRcwGgYD
VR0RBBMwEYcEfwAAAYIJbG9jYWxob3N0MAwGA1UdEwEB/wQCMAAwCgYIKoZIzj0E
AwIDSAAwRQIhAJfvRb3CGZtRkdDBT3/+oRJSRoHTQ/pIv0mVOcWIFXhjAiBifW20
pnK1WGjZ19Z/w7np2JvQAyqw9pX8JtWn0HC1nw==
-----END CERTIFICATE-----
-----BEGIN PRIVATE KEY-----
MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQgRZwZY1dYs9/fO2j8
CSqItSlmGMqXZQ6B+jSduY5MLNyhRANCAATXNY9gR1xrB4vnjBoLBK7zZ5oWerN2
DF3Cf1bNO5H45gcudAGLBoT3bQaSVmUQNlTyh9frpzXNUp8EbEs6QJik
-----END PRIVATE KEY-----
";

/// https to a server with a valid-looking but self-signed certificate is
/// refused in the TLS handshake: certificates are checked against the
/// Mozilla (webpki) roots only. The server never receives a request.
#[tokio::test]
async fn a_self_signed_certificate_is_rejected() {
    use rustls::pki_types::pem::PemObject;
    use rustls::pki_types::{CertificateDer, PrivateKeyDer};
    let cert = CertificateDer::from_pem_slice(SELF_SIGNED.as_bytes()).unwrap();
    let key = PrivateKeyDer::from_pem_slice(SELF_SIGNED.as_bytes()).unwrap();
    let config = rustls::ServerConfig::builder_with_provider(Arc::new(
        rustls::crypto::ring::default_provider(),
    ))
    .with_safe_default_protocol_versions()
    .unwrap()
    .with_no_client_auth()
    .with_single_cert(vec![cert], key)
    .unwrap();
    let acceptor = tokio_rustls::TlsAcceptor::from(Arc::new(config));
    let (addr, log) = server(move |s, log| {
        let acceptor = acceptor.clone();
        async move {
            if let Ok(mut tls) = acceptor.accept(s).await {
                // Counted only if the handshake completed.
                log.written.fetch_add(1, Ordering::SeqCst);
                let mut buf = [0u8; 1024];
                let _ = tls.read(&mut buf).await;
            }
        }
    })
    .await;
    let f = forwarder(&["127.0.0.1/32"], Script::none());
    let err = post(&f, &format!("https://127.0.0.1:{}/", addr.port()))
        .await
        .unwrap_err();
    match &err {
        ForwardError::Tls(m) => assert!(m.contains("UnknownIssuer"), "{m}"),
        other => panic!("expected a TLS error, got {other:?}"),
    }
    // By name too (SNI and certificate name = the URL host).
    let dns = Script::new(vec![Ok(vec!["127.0.0.1"])]);
    let f = forwarder(&["127.0.0.1/32"], dns);
    let err = post(&f, &format!("https://localhost:{}/", addr.port()))
        .await
        .unwrap_err();
    assert!(
        matches!(err, ForwardError::Tls(ref m) if m.contains("UnknownIssuer")),
        "{err:?}"
    );
    assert_eq!(log.accepted(), 2);
    assert_eq!(
        log.written.load(Ordering::SeqCst),
        0,
        "no handshake completed"
    );
}
