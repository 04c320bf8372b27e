//! Imports into a running Berth server (`--server`): the estate file or
//! the manifests are sent, and the server parses and merges them.

use std::path::{Path, PathBuf};

use berth_engine::Format;

use super::args::{KubeApi, Remote};
use super::common::{read_text, Failure};
use super::import::kubernetes_inputs;

/// The server, estate and token of a remote import, each required.
pub fn remote_parts(r: &Remote) -> Result<(String, String, String), Failure> {
    let server = r
        .server
        .clone()
        .ok_or_else(|| Failure::usage("--server URL is required (or BERTH_SERVER)".into()))?;
    let estate = r
        .estate
        .clone()
        .ok_or_else(|| Failure::usage("--estate ID is required with --server".into()))?;
    let token = r.token.clone().ok_or_else(|| {
        Failure::usage(
            "a token is required: set BERTH_TOKEN (or --token) to an operator token".into(),
        )
    })?;
    Ok((server.trim_end_matches('/').to_string(), estate, token))
}

/// Send one request to a Berth server; a refusal becomes a failure that
/// prints the server's message and every detail it gave.
fn server_request(
    method: reqwest::Method,
    url: &str,
    token: &str,
    content_type: &str,
    body: Vec<u8>,
) -> Result<serde_json::Value, Failure> {
    let client = reqwest::blocking::Client::builder()
        // Estate imports are large; the server itself bounds its work.
        .timeout(std::time::Duration::from_secs(300))
        .build()
        .map_err(|e| Failure::usage(format!("HTTP client: {e}")))?;
    let resp = client
        .request(method, url)
        .bearer_auth(token)
        .header("content-type", content_type)
        .body(body)
        .send()
        .map_err(|e| Failure::usage(format!("cannot reach {url}: {e}")))?;
    let status = resp.status();
    let text = resp
        .text()
        .map_err(|e| Failure::usage(format!("{url}: reading the answer: {e}")))?;
    let v: serde_json::Value = serde_json::from_str(&text).unwrap_or(serde_json::Value::Null);
    if status.is_success() {
        return Ok(v);
    }
    let body = berth_api::ErrorBody::parse(&text);
    let mut lines = vec![format!(
        "{url}: {status}: {}",
        body.as_ref().map_or(text.trim(), |b| b.message.as_str())
    )];
    for e in body.iter().flat_map(berth_api::ErrorBody::input_errors) {
        lines.push(format!("  {}", e.line_for_people()));
    }
    // 4xx: the input (or the request) is wrong; 5xx: the server is.
    Err(Failure {
        code: if status.is_client_error() { 1 } else { 2 },
        lines,
    })
}

/// `berth import kubernetes --server`: the manifests go to the server,
/// which parses and merges them under the estate lock.
pub fn import_kubernetes_remote(
    remote: &Remote,
    cluster: &str,
    skip_invalid: bool,
    dry_run: bool,
    files: &[PathBuf],
    api: Option<&KubeApi>,
) -> Result<String, Failure> {
    let (server, estate, token) = remote_parts(remote)?;
    let (texts, complete) = kubernetes_inputs(files, api)?;
    let mut body = serde_json::json!({
        "cluster": cluster,
        "skip_invalid": skip_invalid,
        "dry_run": dry_run,
        "files": texts.iter().map(|(name, text)| serde_json::json!({"name": name, "text": text})).collect::<Vec<_>>(),
    });
    if !complete {
        // Kinds the credentials may not list: the server must not remove
        // what it cannot see.
        body["incomplete"] = serde_json::json!(true);
    }
    let url = format!("{server}/api/estates/{estate}/import/kubernetes");
    let v = server_request(
        reqwest::Method::POST,
        &url,
        &token,
        "application/json",
        body.to_string().into_bytes(),
    )?;
    let r = &v["report"];
    // The same report, one fact per line, as the local import prints (to
    // stderr: stdout keeps its one summary line for scripts).
    match serde_json::from_value::<berth::import::Report>(r.clone()) {
        Ok(report) => eprint!("{}", report.text()),
        Err(e) => eprintln!("(the server's import report could not be read: {e})"),
    }
    let count = |k: &str| r[k].as_array().map_or(0, Vec::len);
    Ok(format!(
        "{estate}, cluster {cluster}: {} added, {} changed, {} removed, {} unchanged; flows {} added, {} removed; {} notes, {} skipped; {}\n",
        count("added"),
        count("changed"),
        count("removed"),
        r["unchanged"].as_u64().unwrap_or(0),
        count("flows_added"),
        count("flows_removed"),
        count("notes"),
        count("skipped"),
        if v["written"] == true {
            format!("version {}", v["version"])
        } else if dry_run {
            "dry run, nothing written".to_string()
        } else {
            format!("nothing changed (version {})", v["version"])
        }
    ))
}

/// `berth import estate --server`: replace (or create) an estate.
pub fn import_estate_remote(remote: &Remote, create: bool, file: &Path) -> Result<String, Failure> {
    let (server, estate, token) = remote_parts(remote)?;
    let text = read_text(file)?;
    let ct = match file.extension().and_then(|e| e.to_str()) {
        Some("yaml" | "yml") => "application/yaml",
        _ if Format::sniff(&text) == Format::Yaml => "application/yaml",
        _ => "application/json",
    };
    let (method, url) = if create {
        (
            reqwest::Method::POST,
            format!("{server}/api/estates?id={estate}"),
        )
    } else {
        (
            reqwest::Method::PUT,
            format!("{server}/api/estates/{estate}/file"),
        )
    };
    let v = server_request(method, &url, &token, ct, text.into_bytes()).map_err(|mut f| {
        f.lines[0] = format!("{}: {}", file.display(), f.lines[0]);
        f
    })?;
    Ok(format!(
        "{}: estate {} is now version {} ({} services, content {})\n",
        file.display(),
        v["id"].as_str().unwrap_or(&estate),
        v["version"],
        v["counts"]["services"],
        v["content_digest"].as_str().unwrap_or("?")
    ))
}
