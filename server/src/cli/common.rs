//! What every command shares: the failure it reports (message lines and
//! exit code), the "incomplete" flag, reading input files, printing JSON.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;

/// A failure to report: what went wrong, in words, then exit code 2 (1 is
/// kept for "the input is invalid").
pub struct Failure {
    pub code: u8,
    pub lines: Vec<String>,
}

impl Failure {
    pub fn usage(msg: String) -> Failure {
        Failure {
            code: 2,
            lines: vec![msg],
        }
    }
}

/// Set when a result was printed but some input could not be read (a
/// `--response` file that does not exist): the output stands, yet a script
/// must not mistake it for a clean run, so the exit code is 3.
pub static INCOMPLETE: AtomicBool = AtomicBool::new(false);

pub fn read_text(path: &Path) -> Result<String, Failure> {
    std::fs::read_to_string(path)
        .map_err(|e| Failure::usage(format!("cannot read {}: {e}", path.display())))
}

pub fn read_inputs(files: &[PathBuf]) -> Result<Vec<(String, String)>, Failure> {
    let mut texts = Vec::with_capacity(files.len());
    for f in files {
        let text = if f.as_os_str() == "-" {
            let mut s = String::new();
            std::io::stdin()
                .read_to_string(&mut s)
                .map_err(|e| Failure::usage(format!("cannot read standard input: {e}")))?;
            s
        } else {
            read_text(f)?
        };
        texts.push((f.display().to_string(), text));
    }
    Ok(texts)
}

/// A document the CLI writes for people to read or edit (an estate file,
/// a dry run's batch): indented, with a final newline. Engine results go
/// through [`line`] instead.
pub fn pretty<T: serde::Serialize>(v: &T) -> String {
    let mut s = serde_json::to_string_pretty(v).expect("documents serialise");
    s.push('\n');
    s
}

/// A result of the engine's JSON front end (`berth_engine::front`) as the
/// CLI prints it: exactly its bytes, and a final newline.
pub fn line(mut bytes: String) -> String {
    bytes.push('\n');
    bytes
}

pub fn runtime() -> Result<tokio::runtime::Runtime, Failure> {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| Failure::usage(format!("cannot start the async runtime: {e}")))
}
