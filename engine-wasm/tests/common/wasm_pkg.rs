//! Shared by the WebAssembly parity tests (`engine-wasm/tests/parity.rs`
//! and `server/tests/parity_bytes.rs`): builds `berth-engine-wasm` for
//! `wasm32-unknown-unknown` into its own target directory
//! (`target/wasm-parity`, so it does not wait on the lock of the
//! `cargo test` that runs it) and writes its Node bindings with
//! `wasm-bindgen --target nodejs`.

#![allow(dead_code)]

use std::io::ErrorKind;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::OnceLock;

pub const INSTALL_HINT: &str = "`make tools` installs the missing tools (scripts/install-tools.sh)";

pub fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("engine-wasm sits in the workspace")
        .to_path_buf()
}

pub fn out_dir() -> PathBuf {
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| workspace_root().join("target"));
    let target = if target.is_relative() {
        workspace_root().join(target)
    } else {
        target
    };
    target.join("wasm-parity")
}

/// The wasm-bindgen version pinned in Cargo.lock: the CLI must match it.
fn locked_wasm_bindgen_version() -> String {
    let lock =
        std::fs::read_to_string(workspace_root().join("Cargo.lock")).expect("read Cargo.lock");
    let mut lines = lock.lines();
    while let Some(line) = lines.next() {
        if line.trim() == "name = \"wasm-bindgen\"" {
            if let Some(v) = lines
                .next()
                .and_then(|l| l.trim().strip_prefix("version = "))
            {
                return v.trim_matches('"').to_string();
            }
        }
    }
    panic!("no wasm-bindgen package in Cargo.lock")
}

pub fn run(cmd: &mut Command, what: &str, missing_hint: &str) -> Result<Output, String> {
    match cmd.output() {
        Ok(out) if out.status.success() => Ok(out),
        Ok(out) => Err(format!(
            "{what} failed ({}): {cmd:?}\n--- stderr ---\n{}\n--- stdout ---\n{}",
            out.status,
            String::from_utf8_lossy(&out.stderr),
            String::from_utf8_lossy(&out.stdout),
        )),
        Err(e) if e.kind() == ErrorKind::NotFound => Err(format!(
            "{what}: `{}` not found on PATH. {missing_hint}",
            cmd.get_program().to_string_lossy()
        )),
        Err(e) => Err(format!("{what}: could not run {cmd:?}: {e}")),
    }
}

/// Builds the module and its Node bindings once per test binary into
/// `target/wasm-parity/NAME` (one name per test binary, so two binaries
/// running at once never write the same files); returns the directory
/// holding `berth_engine_wasm.js`.
pub fn pkg(name: &'static str) -> &'static Path {
    static PKG: OnceLock<Result<PathBuf, String>> = OnceLock::new();
    match PKG.get_or_init(|| build_wasm_pkg(name)) {
        Ok(p) => p,
        Err(e) => panic!("{e}"),
    }
}

fn build_wasm_pkg(name: &str) -> Result<PathBuf, String> {
    let root = workspace_root();
    let out = out_dir();
    let want = locked_wasm_bindgen_version();

    // Check the tools first: a missing CLI should not cost a wasm build.
    let hint_wb = format!(
        "Install the wasm-bindgen CLI {want}: {INSTALL_HINT}, or \
         `cargo install wasm-bindgen-cli --version {want}`."
    );
    let v = run(
        Command::new("wasm-bindgen").arg("--version"),
        "wasm-bindgen --version",
        &hint_wb,
    )?;
    let have = String::from_utf8_lossy(&v.stdout);
    let have = have.split_whitespace().nth(1).unwrap_or("").to_string();
    if have != want {
        return Err(format!(
            "wasm-bindgen CLI is {have:?} but Cargo.lock pins the crate at {want}; \
             they must match. {hint_wb}"
        ));
    }
    run(
        Command::new("node").arg("--version"),
        "node --version",
        &format!("Install Node.js (18 or later): {INSTALL_HINT}, or `apt-get install nodejs`."),
    )?;

    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    run(
        Command::new(&cargo)
            .current_dir(&root)
            .args([
                "build",
                "-p",
                "berth-engine-wasm",
                "--target",
                "wasm32-unknown-unknown",
                "--release",
                "--target-dir",
            ])
            .arg(&out),
        "building the WebAssembly module",
        "Install Rust with rustup (https://rustup.rs).",
    )
    .map_err(|e| {
        if e.contains("target may not be installed") || e.contains("can't find crate for `core`") {
            format!(
                "{e}\nThe wasm32-unknown-unknown target is missing: \
                 `rustup target add wasm32-unknown-unknown`, or {INSTALL_HINT}."
            )
        } else {
            e
        }
    })?;

    let wasm = out.join("wasm32-unknown-unknown/release/berth_engine_wasm.wasm");
    let pkg = out.join(name);
    run(
        Command::new("wasm-bindgen")
            .args(["--target", "nodejs", "--out-dir"])
            .arg(&pkg)
            .arg(&wasm),
        "wasm-bindgen",
        &hint_wb,
    )?;
    Ok(pkg)
}
