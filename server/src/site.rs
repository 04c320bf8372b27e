//! Where the web application's built files (`/pkg/berth.js`,
//! `/pkg/berth_bg.wasm`, `/style/berth.css`, `/favicon.svg`,
//! `/world.svg`) come from: embedded in the binary (the `bundle`
//! feature; `build.rs` lists them), a directory on disk (`--site-root`,
//! the development override), or nowhere — which `berth serve` says at
//! start and the pages say on screen, instead of quietly serving pages
//! that never become interactive.

use std::path::{Path, PathBuf};

use axum::body::Body;
use axum::http::{header, HeaderMap, HeaderValue, Method, StatusCode};
use axum::response::{IntoResponse, Response};

/// One embedded file: its URL path, an ETag of its bytes, the bytes, and
/// the Brotli and gzip copies `scripts/build-web.sh` made beside it, if
/// any.
pub(crate) struct SiteFile {
    pub path: &'static str,
    pub etag: &'static str,
    pub bytes: &'static [u8],
    pub brotli: Option<&'static [u8]>,
    pub gzip: Option<&'static [u8]>,
}

include!(concat!(env!("OUT_DIR"), "/site_files.rs"));

/// The directory `scripts/build-web.sh` writes by default, relative to
/// the repository root (where `make run` starts the server).
pub const DEFAULT_DIR: &str = "target/site";

/// What to run to get a binary that serves its own UI.
pub const HOW_TO_BUILD: &str = "run `make run`, or `bash scripts/build-web.sh && cargo build --release -p berth --features bundle`, or pass --site-root DIR (a directory scripts/build-web.sh wrote)";

#[derive(Clone, Debug, PartialEq)]
pub enum Site {
    /// Built into this binary.
    Embedded,
    /// Served from this directory.
    Dir(PathBuf),
    /// No bundle anywhere: pages are rendered, but cannot hydrate.
    Missing,
}

impl Site {
    /// True when this binary was built with the web bundle in it.
    pub fn embedded_available() -> bool {
        !FILES.is_empty()
    }

    /// The site for `berth serve`: the directory given (the development
    /// override), else the embedded bundle, else `target/site` when it
    /// holds a built bundle (a development build run from the repository
    /// root), else nothing.
    pub fn resolve(site_root: Option<&Path>) -> Site {
        match site_root {
            Some(dir) => Site::Dir(dir.to_path_buf()),
            None if Site::embedded_available() => Site::Embedded,
            None if has_bundle(Path::new(DEFAULT_DIR)) => Site::Dir(PathBuf::from(DEFAULT_DIR)),
            None => Site::Missing,
        }
    }

    /// What is wrong with this site, for the start-up log and the pages;
    /// `None` when the bundle is there.
    pub fn problem(&self) -> Option<String> {
        match self {
            Site::Embedded => None,
            Site::Dir(dir) if has_bundle(dir) => None,
            Site::Dir(dir) => Some(format!(
                "the site root {} has no pkg/berth_bg.wasm: pages will not become interactive. Build it with `bash scripts/build-web.sh {}`",
                dir.display(),
                dir.display()
            )),
            Site::Missing => Some(format!(
                "this berth was built without the web application and no --site-root was given: pages will not become interactive. To fix it, {HOW_TO_BUILD}"
            )),
        }
    }

    /// For the start-up log.
    pub fn describe(&self) -> String {
        match self {
            Site::Embedded => format!("embedded in the binary ({} files)", FILES.len()),
            Site::Dir(dir) => format!("from {}", dir.display()),
            Site::Missing => "none".to_string(),
        }
    }
}

fn has_bundle(dir: &Path) -> bool {
    dir.join("pkg/berth_bg.wasm").is_file()
}

/// The embedded file at `path`, answered as a static file server would:
/// GET and HEAD, the Brotli or gzip copy to clients that accept it, `304`
/// for a matching `If-None-Match`. `None` when nothing is embedded there.
pub fn embedded(method: &Method, path: &str, headers: &HeaderMap) -> Option<Response> {
    if method != Method::GET && method != Method::HEAD {
        return None;
    }
    let file = FILES.iter().find(|f| f.path == path)?;
    Some(answer(file, method, headers))
}

/// One embedded file's response (see [`embedded`]).
fn answer(file: &SiteFile, method: &Method, headers: &HeaderMap) -> Response {
    let path = file.path;
    let mut r = Response::builder()
        .header(header::CONTENT_TYPE, content_type(path))
        .header(header::ETAG, file.etag)
        // File names carry no hash, so browsers must revalidate; the ETag
        // makes that a 304 without a body.
        .header(header::CACHE_CONTROL, "no-cache")
        .header(header::VARY, "accept-encoding");
    let matches = headers
        .get(header::IF_NONE_MATCH)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| {
            v.split(',')
                .any(|t| t.trim() == file.etag || t.trim() == "*")
        });
    if matches {
        return r
            .status(StatusCode::NOT_MODIFIED)
            .body(Body::empty())
            .expect("a valid response");
    }
    let bytes = match coding_for(headers, file.brotli.is_some(), file.gzip.is_some()) {
        Some(Coding::Brotli) => {
            r = r.header(header::CONTENT_ENCODING, "br");
            file.brotli.expect("chosen only when there")
        }
        Some(Coding::Gzip) => {
            r = r.header(header::CONTENT_ENCODING, "gzip");
            file.gzip.expect("chosen only when there")
        }
        None => file.bytes,
    };
    r = r.header(header::CONTENT_LENGTH, HeaderValue::from(bytes.len()));
    let body = if method == Method::HEAD {
        Body::empty()
    } else {
        Body::from(bytes)
    };
    r.body(body).expect("a valid response").into_response()
}

/// A pre-compressed copy a response can carry.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Coding {
    Brotli,
    Gzip,
}

/// Which copy to send, from the client's `Accept-Encoding` and the copies
/// there are: the one the client weighs higher (RFC 9110 §12.5.3 q-values;
/// `*` stands for any coding not named; `q=0` refuses), Brotli on a tie
/// because it is the smaller; `None` for the plain bytes.
fn coding_for(headers: &HeaderMap, has_brotli: bool, has_gzip: bool) -> Option<Coding> {
    let mut named: Vec<(String, f32)> = Vec::new();
    for v in headers
        .get_all(header::ACCEPT_ENCODING)
        .iter()
        .filter_map(|v| v.to_str().ok())
    {
        for coding in v.split(',') {
            let mut parts = coding.split(';');
            let name = parts.next().unwrap_or_default().trim().to_ascii_lowercase();
            if name.is_empty() {
                continue;
            }
            // No q parameter means 1; one that does not parse is read as
            // a refusal rather than guessed at.
            let q = parts
                .find_map(|p| p.trim().strip_prefix("q="))
                .map_or(Some(1.0), |q| q.trim().parse::<f32>().ok())
                .unwrap_or(0.0);
            named.push((name, q));
        }
    }
    let weight = |name: &str| {
        let q = |n: &str| named.iter().find(|(c, _)| c == n).map(|(_, q)| *q);
        q(name).or_else(|| q("*")).unwrap_or(0.0)
    };
    let br = if has_brotli { weight("br") } else { 0.0 };
    let gz = if has_gzip { weight("gzip") } else { 0.0 };
    if br > 0.0 && br >= gz {
        Some(Coding::Brotli)
    } else if gz > 0.0 {
        Some(Coding::Gzip)
    } else {
        None
    }
}

/// The media types of what the bundle holds; anything else is bytes.
fn content_type(path: &str) -> &'static str {
    match path.rsplit_once('.').map(|(_, ext)| ext) {
        Some("js") => "text/javascript; charset=utf-8",
        Some("wasm") => "application/wasm",
        Some("css") => "text/css; charset=utf-8",
        Some("svg") => "image/svg+xml",
        Some("html") => "text/html; charset=utf-8",
        Some("json") => "application/json",
        Some("png") => "image/png",
        Some("ico") => "image/x-icon",
        Some("txt") => "text/plain; charset=utf-8",
        _ => "application/octet-stream",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn with(accept: &str) -> HeaderMap {
        let mut h = HeaderMap::new();
        h.insert(
            header::ACCEPT_ENCODING,
            HeaderValue::from_str(accept).unwrap(),
        );
        h
    }

    #[test]
    fn each_copy_is_sent_only_to_clients_that_take_it() {
        use Coding::{Brotli, Gzip};
        let pick = |accept: &str| coding_for(&with(accept), true, true);
        // What Chromium 156 sends (measured, to 127.0.0.1 too): Brotli.
        assert_eq!(pick("gzip, deflate, br, zstd"), Some(Brotli));
        assert_eq!(pick("br;q=1.0, gzip;q=0.8"), Some(Brotli));
        assert_eq!(pick("br;q=0.5, gzip;q=0.8"), Some(Gzip));
        // A client that takes gzip only.
        assert_eq!(pick("gzip, deflate"), Some(Gzip));
        assert_eq!(pick("*"), Some(Brotli));
        assert_eq!(pick("br;q=0, *"), Some(Gzip));
        assert_eq!(pick("gzip;q=0"), None);
        assert_eq!(pick("GZIP"), Some(Gzip));
        assert_eq!(pick("deflate, identity"), None);
        assert_eq!(pick("br;q=zero, gzip"), Some(Gzip));
        assert_eq!(coding_for(&HeaderMap::new(), true, true), None);
        // Only copies that exist.
        assert_eq!(coding_for(&with("br, gzip"), false, true), Some(Gzip));
        assert_eq!(coding_for(&with("br"), false, true), None);
        assert_eq!(coding_for(&with("br, gzip"), false, false), None);
    }

    #[test]
    fn an_embedded_file_carries_its_coding_and_varies_on_it() {
        static FILE: SiteFile = SiteFile {
            path: "/pkg/berth_bg.wasm",
            etag: "\"e\"",
            bytes: b"plain bytes",
            brotli: Some(b"br"),
            gzip: Some(b"gz"),
        };
        for (accept, coding, body) in [
            ("gzip, deflate, br", Some("br"), "br"),
            ("gzip, deflate", Some("gzip"), "gz"),
            ("identity", None, "plain bytes"),
        ] {
            let r = answer(&FILE, &Method::GET, &with(accept));
            assert_eq!(r.status(), StatusCode::OK);
            let h = r.headers();
            assert_eq!(
                h.get(header::CONTENT_ENCODING).map(|v| v.to_str().unwrap()),
                coding,
                "{accept}"
            );
            assert_eq!(h[header::VARY], "accept-encoding");
            assert_eq!(h[header::CONTENT_TYPE], "application/wasm");
            assert_eq!(h[header::CONTENT_LENGTH], body.len().to_string().as_str());
        }
    }

    #[test]
    fn an_explicit_site_root_wins_and_a_missing_bundle_is_named() {
        let dir = std::env::temp_dir().join("berth-site-test-none");
        let site = Site::resolve(Some(&dir));
        assert_eq!(site, Site::Dir(dir.clone()));
        let problem = site.problem().expect("no bundle there");
        assert!(problem.contains("pkg/berth_bg.wasm"), "{problem}");
        assert!(Site::Missing
            .problem()
            .unwrap()
            .contains("--features bundle"));
    }
}
