//! `berth import … --server`: the command line against a real `berth
//! serve` on loopback.

use std::io::Read;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

const TOKEN: &str = "cli-remote-admin-token-0123456789abcdef";

/// A server process, killed when the test ends however it ends.
struct Server {
    child: Child,
    url: String,
    _dir: tempfile::TempDir,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

fn start() -> Server {
    let dir = tempfile::tempdir().unwrap();
    let port = free_port();
    let child = Command::new(env!("CARGO_BIN_EXE_berth"))
        .args([
            "serve",
            "--listen",
            &format!("127.0.0.1:{port}"),
            "--data-dir",
        ])
        .arg(dir.path())
        .env("BERTH_ADMIN_TOKEN", TOKEN)
        .env_remove("BERTH_DATABASE_URL")
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut s = Server {
        child,
        url: format!("http://127.0.0.1:{port}"),
        _dir: dir,
    };
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        if let Ok(r) = reqwest::blocking::get(format!("{}/readyz", s.url)) {
            if r.status().is_success() {
                return s;
            }
        }
        if let Ok(Some(status)) = s.child.try_wait() {
            let mut err = String::new();
            s.child.stderr.take().unwrap().read_to_string(&mut err).ok();
            panic!("berth serve exited {status}: {err}");
        }
        assert!(Instant::now() < deadline, "berth serve not ready in 30 s");
        std::thread::sleep(Duration::from_millis(100));
    }
}

fn fixture(name: &str) -> std::path::PathBuf {
    let start = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    start
        .ancestors()
        .map(|d| d.join("shared/fixtures/kubernetes").join(name))
        .find(|p| p.is_file())
        .unwrap_or_else(|| panic!("shared/fixtures/kubernetes/{name} not found"))
}

fn berth(server: &Server, args: &[&str], token: &str) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_berth"))
        .args(args)
        .env("BERTH_SERVER", &server.url)
        .env("BERTH_TOKEN", token)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn import_kubernetes_and_estates_into_a_running_server() {
    let s = start();
    let ob = fixture("online-boutique.yaml");
    let ob = ob.to_str().unwrap();
    let args = [
        "import",
        "kubernetes",
        "--estate",
        "sample",
        "--cluster",
        "c-fra-3",
        ob,
    ];
    let (code, out, err) = berth(&s, &args, TOKEN);
    assert_eq!(code, 0, "{err}");
    assert!(
        out.contains("12 added") && out.contains("version 2"),
        "{out}"
    );
    // The notes themselves, not only their number: the same report the
    // local import prints, on stderr.
    let notes: usize = out
        .split([';', ','])
        .find_map(|p| p.trim().strip_suffix(" notes"))
        .and_then(|n| n.parse().ok())
        .expect("the summary counts the notes");
    assert!(notes > 0, "{out}");
    assert!(
        err.contains("kubernetes import into cluster c-fra-3") && err.contains("\nNotes:\n"),
        "{err}"
    );
    let listed = err
        .split("\nNotes:\n")
        .nth(1)
        .unwrap()
        .lines()
        .take_while(|l| l.starts_with("  "))
        .count();
    assert_eq!(listed, notes, "{err}");
    let (code, out, _) = berth(&s, &args, TOKEN);
    assert_eq!(code, 0);
    assert!(out.contains("nothing changed (version 2)"), "{out}");
    // A wrong cluster: exit 1 and the server's words.
    let (code, _, err) = berth(
        &s,
        &[
            "import",
            "kubernetes",
            "--estate",
            "sample",
            "--cluster",
            "c-mars",
            ob,
        ],
        TOKEN,
    );
    assert_eq!(code, 1);
    assert!(err.contains("c-mars") && err.contains("c-fra-1"), "{err}");
    // A wrong token: exit 1, said plainly.
    let (code, _, err) = berth(&s, &args, "berth_wrong");
    assert_eq!(code, 1);
    assert!(err.contains("unknown or revoked"), "{err}");
    // An estate file, created then replaced; an invalid one names its errors.
    let sample = "../examples/estates/sample.json";
    let (code, out, err) = berth(
        &s,
        &["import", "estate", "--estate", "copy", "--create", sample],
        TOKEN,
    );
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("estate copy is now version 1"), "{out}");
    let (code, out, _) = berth(&s, &["import", "estate", "--estate", "copy", sample], TOKEN);
    assert_eq!(code, 0);
    assert!(out.contains("version 2"), "{out}");
    let dir = tempfile::tempdir().unwrap();
    let bad = dir.path().join("bad.json");
    std::fs::write(
        &bad,
        std::fs::read_to_string(std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(sample))
            .unwrap()
            .replacen("\"tier\": \"prod\"", "\"tier\": 7", 1),
    )
    .unwrap();
    let (code, _, err) = berth(
        &s,
        &[
            "import",
            "estate",
            "--estate",
            "copy",
            bad.to_str().unwrap(),
        ],
        TOKEN,
    );
    assert_eq!(code, 1);
    assert!(
        err.contains("/clusters/0/tier") && err.contains("line"),
        "{err}"
    );
}
