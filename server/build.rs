// Two things the compiler reads that cargo does not know about:
//
// 1. `sqlx::migrate!` embeds the migration files: without the
//    rerun-if-changed below, a new or edited migration is not picked up
//    until something else in the crate changes.
// 2. With the `bundle` feature, the web application's built files (the
//    site root `scripts/build-web.sh` writes, `../target/site` unless
//    `BERTH_EMBED_SITE` names another) are embedded in the binary, so
//    `berth serve` serves its whole UI from any directory. This script
//    lists them into `$OUT_DIR/site_files.rs` (src/site.rs includes it),
//    each with its `.br` and `.gz` twins and an ETag of its bytes. Without the
//    feature nothing is read, and the list is empty.
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

fn main() {
    println!("cargo:rerun-if-changed=../migrations");
    println!("cargo:rerun-if-env-changed=BERTH_EMBED_SITE");
    let out = PathBuf::from(std::env::var("OUT_DIR").expect("cargo sets OUT_DIR"));
    let code = if std::env::var_os("CARGO_FEATURE_BUNDLE").is_some() {
        embed_site()
    } else {
        "pub(crate) static FILES: &[SiteFile] = &[];\n".to_string()
    };
    std::fs::write(out.join("site_files.rs"), code).expect("writes OUT_DIR/site_files.rs");
}

fn embed_site() -> String {
    let manifest = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").expect("cargo sets it"));
    let root = match std::env::var_os("BERTH_EMBED_SITE") {
        Some(p) => PathBuf::from(p),
        None => manifest.join("../target/site"),
    };
    let root = root.canonicalize().unwrap_or(root);
    // The module is what makes the pages interactive: without it the
    // embedded UI would be exactly the broken one this feature exists to
    // prevent, so stop the build and say what to run.
    if !root.join("pkg/berth_bg.wasm").is_file() || !root.join("pkg/berth.js").is_file() {
        panic!(
            "the `bundle` feature embeds the web bundle, but {} has no pkg/berth_bg.wasm and pkg/berth.js: \
             run `bash scripts/build-web.sh` first (or set BERTH_EMBED_SITE to a built site root)",
            root.display()
        );
    }
    let mut files = Vec::new();
    walk(&root, &mut files);
    files.sort();
    let mut code = String::from("pub(crate) static FILES: &[SiteFile] = &[\n");
    for file in &files {
        if file.extension().is_some_and(|e| e == "gz" || e == "br") {
            continue;
        }
        println!("cargo:rerun-if-changed={}", file.display());
        let rel = file.strip_prefix(&root).expect("under the root");
        let url = format!(
            "/{}",
            rel.components()
                .map(|c| c.as_os_str().to_string_lossy().into_owned())
                .collect::<Vec<_>>()
                .join("/")
        );
        let bytes = std::fs::read(file).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
        let twin = |ext: &str| {
            let copy = PathBuf::from(format!("{}.{ext}", file.display()));
            if copy.is_file() {
                println!("cargo:rerun-if-changed={}", copy.display());
                format!("Some(include_bytes!({:?}))", copy.display().to_string())
            } else {
                "None".to_string()
            }
        };
        let (brotli, gzip) = (twin("br"), twin("gz"));
        writeln!(
            code,
            "    SiteFile {{ path: {url:?}, etag: \"\\\"{:016x}\\\"\", bytes: include_bytes!({:?}), brotli: {brotli}, gzip: {gzip} }},",
            fnv1a(&bytes),
            file.display().to_string(),
        )
        .expect("writes to a String");
    }
    code.push_str("];\n");
    code
}

fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
    println!("cargo:rerun-if-changed={}", dir.display());
    let entries = std::fs::read_dir(dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
    for entry in entries {
        let path = entry.expect("a directory entry").path();
        if path.is_dir() {
            walk(&path, out);
        } else {
            out.push(path);
        }
    }
}

/// FNV-1a, 64 bits: an ETag only has to change when the bytes do, and
/// this needs no build dependency.
fn fnv1a(bytes: &[u8]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in bytes {
        h ^= u64::from(*b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    h
}
