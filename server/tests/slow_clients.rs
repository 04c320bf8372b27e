//! Slow clients against a real `berth serve` whose descriptor limit is
//! lowered to [`SERVER_FDS`] (`ulimit -n` in the shell that execs it):
//!
//! * a half-request (headers never finished) is closed by the server
//!   after the header timeout; a connection that sends nothing is idle and
//!   closed after the idle timeout, and one first used after the header
//!   timeout (a browser's early socket) is answered;
//! * a request body that trickles is cut off after the body timeout (408,
//!   connection closed);
//! * a flood of idle half-requests from many loopback addresses, far more
//!   than the server has descriptors, leaves `/healthz` and a signed-in
//!   advice request answering within a second, while the flood goes on;
//!   the server never runs out of descriptors, and SIGTERM still stops it
//!   promptly.
//!
//! Settings go in through environment variables, which a server without
//! them (today's main) ignores: so the same test runs against it and
//! shows what it lacked.

use std::io::Read;
use std::net::{IpAddr, Ipv4Addr, SocketAddr, TcpListener};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpSocket, TcpStream};

const TOKEN: &str = "slow-clients-test-admin-token-0123456789abcdef";
const NOW: &str = "2026-11-30T04:05:00Z";
/// The server's descriptor limit: what a flood must exceed.
const SERVER_FDS: u64 = 256;
/// Half-requests opened at once: more than twice the server's descriptors.
const FLOOD: usize = 600;
/// Spread over this many loopback addresses (127.0.0.1 among them, the
/// address the well-behaved client uses too).
const FLOOD_ADDRESSES: u8 = 20;
/// What a well-behaved request must answer within.
const WITHIN: Duration = Duration::from_secs(1);
/// "Too many open files" (Linux, macOS).
const EMFILE: i32 = 24;

struct Server {
    child: Child,
    addr: SocketAddr,
    stderr: Arc<Mutex<Vec<u8>>>,
    _dir: tempfile::TempDir,
}

impl Server {
    /// `berth serve` on a free loopback port under `ulimit -n SERVER_FDS`,
    /// with `env` added; waits until `/readyz` answers.
    async fn start(env: &[(&str, &str)]) -> Server {
        let port = TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let dir = tempfile::tempdir().unwrap();
        let mut cmd = Command::new("sh");
        cmd.arg("-c")
            .arg(format!("ulimit -n {SERVER_FDS} && exec \"$0\" \"$@\""))
            .arg(env!("CARGO_BIN_EXE_berth"))
            .args(["serve", "--listen", &format!("127.0.0.1:{port}")])
            .arg("--data-dir")
            .arg(dir.path())
            .args(["--sample-at", NOW, "--no-driver"]);
        for (var, _) in std::env::vars_os() {
            if var.to_string_lossy().starts_with("BERTH_") {
                cmd.env_remove(var);
            }
        }
        cmd.env("BERTH_ADMIN_TOKEN", TOKEN)
            .env("RUST_LOG", "info,sqlx=warn,tower_http=warn")
            .envs(env.iter().copied())
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped());
        let mut child = cmd.spawn().expect("spawn berth serve");
        let stderr = Arc::new(Mutex::new(Vec::new()));
        let mut pipe = child.stderr.take().unwrap();
        let into = stderr.clone();
        std::thread::spawn(move || {
            let mut buf = [0u8; 8192];
            while let Ok(n) = pipe.read(&mut buf) {
                if n == 0 {
                    break;
                }
                into.lock().unwrap().extend_from_slice(&buf[..n]);
            }
        });
        let server = Server {
            child,
            addr: SocketAddr::from(([127, 0, 0, 1], port)),
            stderr,
            _dir: dir,
        };
        let http = client(Duration::from_secs(2));
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            if let Ok(r) = http.get(server.url("/readyz")).send().await {
                if r.status() == 200 {
                    break;
                }
            }
            assert!(Instant::now() < deadline, "server not ready in 30 s");
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        server
    }

    fn url(&self, path: &str) -> String {
        format!("http://{}{path}", self.addr)
    }

    fn stderr(&self) -> String {
        String::from_utf8_lossy(&self.stderr.lock().unwrap()).into_owned()
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        if std::thread::panicking() {
            eprintln!("---- server stderr ----\n{}---- end ----", self.stderr());
        }
    }
}

/// A client that opens a new connection for every request, so each one
/// has to get past the server's accept and caps.
fn client(timeout: Duration) -> reqwest::Client {
    reqwest::Client::builder()
        .pool_max_idle_per_host(0)
        .timeout(timeout)
        .build()
        .unwrap()
}

/// A connection from `127.0.0.{from}` that has sent `bytes`.
async fn connect_from(from: u8, to: SocketAddr, bytes: &[u8]) -> std::io::Result<TcpStream> {
    let socket = TcpSocket::new_v4()?;
    socket.bind(SocketAddr::new(
        IpAddr::V4(Ipv4Addr::new(127, 0, 0, from)),
        0,
    ))?;
    let mut s = socket.connect(to).await?;
    s.write_all(bytes).await?;
    Ok(s)
}

const HALF_REQUEST: &[u8] = b"GET /healthz HTTP/1.1\r\nHost: x\r\n";

/// How long until the server closes `s` (reads to EOF), at most `limit`.
async fn closed_after(s: &mut TcpStream, limit: Duration) -> Option<Duration> {
    let start = Instant::now();
    let mut sink = Vec::new();
    match tokio::time::timeout(limit, s.read_to_end(&mut sink)).await {
        Ok(_) => Some(start.elapsed()),
        Err(_) => None,
    }
}

/// Whether the server has closed (or answered and closed) `s` by now.
fn is_closed(s: &TcpStream) -> bool {
    let mut buf = [0u8; 512];
    match s.try_read(&mut buf) {
        Ok(_) => true,
        Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => false,
        Err(_) => true,
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn half_requests_and_trickling_bodies_are_cut_off() {
    let server = Server::start(&[
        ("BERTH_HEADER_TIMEOUT", "2"),
        ("BERTH_BODY_TIMEOUT", "2"),
        ("BERTH_KEEP_ALIVE_TIMEOUT", "3"),
    ])
    .await;

    // Headers begun, never finished.
    let opened = Instant::now();
    let mut half = connect_from(1, server.addr, HALF_REQUEST).await.unwrap();
    // Connected, nothing sent: idle, like a kept-alive connection.
    let mut silent = connect_from(1, server.addr, b"").await.unwrap();
    // Opened ahead of need, as browsers do, and used after the header
    // timeout but within the idle one: it must be answered (a server
    // that counted the header timeout from connect closed it, and the
    // browser showed ERR_EMPTY_RESPONSE).
    let mut early = connect_from(1, server.addr, b"").await.unwrap();
    let t_half = closed_after(&mut half, Duration::from_secs(8)).await;
    tokio::time::sleep_until((opened + Duration::from_millis(2500)).into()).await;
    early
        .write_all(b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
        .await
        .unwrap();
    let mut answer = [0u8; 1024];
    let n = tokio::time::timeout(Duration::from_secs(2), early.read(&mut answer))
        .await
        .ok()
        .and_then(Result::ok)
        .unwrap_or(0);
    let answer = String::from_utf8_lossy(&answer[..n]).into_owned();
    let t_silent = closed_after(&mut silent, Duration::from_secs(8))
        .await
        .map(|_| opened.elapsed());
    eprintln!(
        "half-request closed after {t_half:?}, silent connection after {t_silent:?}, \
         a connection first used 2.5 s after connect answered {answer:?}"
    );
    let t_half = t_half.expect("a half-request is still open 8 s after a 2 s header timeout");
    assert!(
        t_half >= Duration::from_millis(1500),
        "closed before the header timeout: {t_half:?}"
    );
    assert!(
        answer.starts_with("HTTP/1.1 200"),
        "a connection first used after the header timeout, within the idle one, was not answered: {answer:?}"
    );
    let t_silent =
        t_silent.expect("a connection that sent nothing is still open long after the idle timeout");
    assert!(
        t_silent >= Duration::from_millis(2500),
        "a connection that sent nothing was closed before the idle timeout: {t_silent:?}"
    );

    // A body that trickles: 1 byte of 1,000 every 200 ms.
    let head = format!(
        "POST /api/estates/sample/whatif?now={NOW} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {TOKEN}\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n"
    );
    let mut slow = connect_from(1, server.addr, head.as_bytes()).await.unwrap();
    let start = Instant::now();
    let mut reply = Vec::new();
    let mut buf = [0u8; 4096];
    let mut eof = false;
    while start.elapsed() < Duration::from_secs(8) {
        let _ = slow.write_all(b" ").await;
        match tokio::time::timeout(Duration::from_millis(200), slow.read(&mut buf)).await {
            Ok(Ok(0)) | Ok(Err(_)) => {
                eof = true;
                break;
            }
            Ok(Ok(n)) => reply.extend_from_slice(&buf[..n]),
            Err(_) => {}
        }
    }
    let took = start.elapsed();
    let reply = String::from_utf8_lossy(&reply).into_owned();
    eprintln!("trickling body: after {took:?}: {reply:?}");
    assert!(
        reply.starts_with("HTTP/1.1 408"),
        "a body trickling for {took:?} was not cut off with 408: {reply:?}"
    );
    assert!(reply.contains("within 2 s"), "{reply}");
    assert!(eof, "the connection stays open after the 408");

    // Keep-alive: a served connection idles 3 s at most.
    let mut kept = connect_from(1, server.addr, b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
        .await
        .unwrap();
    let mut first = [0u8; 1024];
    let n = kept.read(&mut first).await.unwrap();
    assert!(String::from_utf8_lossy(&first[..n]).starts_with("HTTP/1.1 200"));
    let t_kept = closed_after(&mut kept, Duration::from_secs(8)).await;
    eprintln!("idle keep-alive connection closed after {t_kept:?}");
    let t_kept = t_kept.expect("an idle keep-alive connection outlives its timeout");
    assert!(t_kept >= Duration::from_millis(2500), "{t_kept:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_flood_of_half_requests_leaves_the_server_answering() {
    // Default timeouts: the half-requests stay for the whole test unless
    // the caps make the server close them.
    let server = Server::start(&[]).await;
    let advice = format!("/api/estates/sample/advice?now={NOW}");
    let http = client(WITHIN);
    // Warm: the estate parsed and the advice computed once, so the figures
    // below are about connections, not the first computation.
    let r = http
        .get(server.url(&advice))
        .bearer_auth(TOKEN)
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);

    let started = Instant::now();
    let mut flood = Vec::with_capacity(FLOOD);
    // All at once, each connect bounded: a server that stops accepting
    // leaves connects hanging in a full backlog.
    let mut opening = tokio::task::JoinSet::new();
    for i in 0..FLOOD {
        let from = 1 + (i % FLOOD_ADDRESSES as usize) as u8;
        let addr = server.addr;
        opening.spawn(async move {
            tokio::time::timeout(
                Duration::from_secs(3),
                connect_from(from, addr, HALF_REQUEST),
            )
            .await
        });
    }
    while let Some(r) = opening.join_next().await {
        match r.unwrap() {
            Ok(Ok(s)) => flood.push(s),
            Ok(Err(e)) if e.raw_os_error() == Some(EMFILE) => {
                panic!("this test process needs more than {FLOOD} descriptors (ulimit -n): {e}")
            }
            // The server may have closed it before the write landed, or
            // not accepted it at all.
            Ok(Err(_)) | Err(_) => {}
        }
    }
    eprintln!(
        "opened {} half-requests from {FLOOD_ADDRESSES} addresses in {:?} (server descriptor limit {SERVER_FDS})",
        flood.len(),
        started.elapsed()
    );
    assert!(flood.len() > SERVER_FDS as usize * 2);

    // More half-requests keep coming while the well-behaved client works.
    let addr = server.addr;
    let more = tokio::spawn(async move {
        let mut held = Vec::new();
        for i in 0..200u32 {
            let connect = connect_from(30 + (i % 10) as u8, addr, HALF_REQUEST);
            if let Ok(Ok(s)) = tokio::time::timeout(Duration::from_millis(500), connect).await {
                held.push(s);
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        held
    });

    let mut worst_health = Duration::ZERO;
    let mut worst_advice = Duration::ZERO;
    for round in 0..5 {
        let t = Instant::now();
        let r = http.get(server.url("/healthz")).send().await;
        let took = t.elapsed();
        let status = r.as_ref().map(|r| r.status().as_u16());
        assert!(
            matches!(status, Ok(200)),
            "round {round}: /healthz during the flood: {r:?} after {took:?}"
        );
        worst_health = worst_health.max(took);
        let t = Instant::now();
        let r = http
            .get(server.url(&advice))
            .bearer_auth(TOKEN)
            .send()
            .await;
        let took = t.elapsed();
        let status = r.as_ref().map(|r| r.status().as_u16());
        assert!(
            matches!(status, Ok(200)),
            "round {round}: signed-in advice during the flood: {r:?} after {took:?}"
        );
        worst_advice = worst_advice.max(took);
    }
    let held = more.await.unwrap();
    let closed = flood.iter().filter(|s| is_closed(s)).count();
    eprintln!(
        "during the flood: /healthz answered in {worst_health:?} at worst, advice in {worst_advice:?}; \
         the server had closed {closed} of the {} first half-requests to stay under its caps, \
         and {} more came in meanwhile",
        flood.len(),
        held.len()
    );
    assert!(worst_health < WITHIN && worst_advice < WITHIN);
    assert!(
        closed >= flood.len() - SERVER_FDS as usize,
        "the server holds more connections ({}) than it has descriptors",
        flood.len() - closed
    );
    let log = server.stderr();
    assert!(
        !log.contains("Too many open files"),
        "the server ran out of descriptors:\n{log}"
    );

    // SIGTERM with the flood still connected: out at once, exit 0.
    let pid = server.child.id().to_string();
    let t = Instant::now();
    assert!(Command::new("kill")
        .args(["-TERM", &pid])
        .status()
        .unwrap()
        .success());
    let mut server = server;
    let status = loop {
        if let Some(s) = server.child.try_wait().unwrap() {
            break s;
        }
        assert!(
            t.elapsed() < Duration::from_secs(10),
            "still running 10 s after SIGTERM"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    };
    eprintln!("stopped {:?} after SIGTERM: {status}", t.elapsed());
    assert!(status.success(), "{status}");
    drop((flood, held));
}
