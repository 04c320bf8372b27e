//! Imports into a running Berth server (`--server`): the estate file or
//! the manifests are sent, and the server parses and merges them.

use std::path::{Path, PathBuf};

use berth::import::ReportText;
use berth_api::endpoint;
use berth_engine::Format;

use super::args::{KubeApi, OutputFormat, Remote};
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

/// Send one request to a Berth server and read its answer as `T` (one of
/// the API's types); a refusal becomes a failure that prints the server's
/// message and every detail it gave, and an answer that is not a `T` one
/// that names the URL and what did not parse.
fn server_request<T: serde::de::DeserializeOwned>(
    method: reqwest::Method,
    url: &str,
    token: &str,
    content_type: &str,
    body: Vec<u8>,
) -> Result<T, Failure> {
    let client = reqwest::blocking::Client::builder()
        // Estate imports are large; the server itself bounds its work.
        .timeout(std::time::Duration::from_secs(300))
        // The token goes with every request: never to wherever a
        // redirect points (issue 37).
        .redirect(reqwest::redirect::Policy::none())
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
    if status.is_success() {
        // The server did what was asked: say so, and that what came of
        // it (the version, the report) cannot be told.
        return serde_json::from_str(&text).map_err(|e| {
            Failure::usage(format!(
                "{url}: {status}, but the answer is not what this berth reads ({e}), so what changed is unknown; is the server of another version? It answered: {}",
                text.chars().take(200).collect::<String>()
            ))
        });
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
    let (texts, complete) = kubernetes_inputs(files, api, &estate)?;
    let body = berth_api::KubernetesImportRequest {
        cluster: cluster.to_string(),
        files: berth_api::ManifestFile::all(&texts),
        skip_invalid,
        dry_run,
        // Kinds the credentials may not list: the server must not remove
        // what it cannot see.
        incomplete: !complete,
    };
    // The request holds its own copy: the texts read are not needed again.
    drop(texts);
    let url = format!("{server}{}", endpoint::import_kubernetes(&estate));
    let a: berth_api::ImportAnswer = server_request(
        reqwest::Method::POST,
        &url,
        &token,
        "application/json",
        serde_json::to_vec(&body).expect("serialises"),
    )?;
    let r = &a.report;
    // The same report, one fact per line, as the local import prints (to
    // stderr: stdout keeps its one summary line for scripts).
    eprint!("{}", r.text());
    Ok(format!(
        "{estate}, cluster {cluster}: {} added, {} changed, {} removed, {} unchanged; flows {} added, {} removed; {} notes, {} skipped; {}\n",
        r.added.len(),
        r.changed.len(),
        r.removed.len(),
        r.unchanged,
        r.flows_added.len(),
        r.flows_removed.len(),
        r.notes.len(),
        r.skipped.len(),
        if a.written {
            format!("version {}", a.version)
        } else if dry_run {
            "dry run, nothing written".to_string()
        } else {
            format!("nothing changed (version {})", a.version)
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
            format!("{server}{}", endpoint::create_estate().query("id", &estate)),
        )
    } else {
        (
            reqwest::Method::PUT,
            format!("{server}{}", endpoint::import_estate_file(&estate)),
        )
    };
    let answer = server_request(method, &url, &token, ct, text.into_bytes());
    let v: berth_api::EstateSummary = answer.map_err(|mut f| {
        f.lines[0] = format!("{}: {}", file.display(), f.lines[0]);
        f
    })?;
    Ok(format!(
        "{}: estate {} is now version {} ({} services, content {})\n",
        file.display(),
        v.meta.id,
        v.meta.version,
        v.counts.services,
        v.meta.content_digest
    ))
}

/// `berth outcomes ESTATE`: the server's applied moves of an estate, as
/// JSON (the server's bytes) or text.
pub fn outcomes(
    server: Option<String>,
    token: Option<String>,
    estate: &str,
    now: Option<&str>,
    format: OutputFormat,
) -> Result<String, Failure> {
    let server = server
        .ok_or_else(|| Failure::usage("--server URL is required (or BERTH_SERVER)".into()))?;
    let token = token.ok_or_else(|| {
        Failure::usage("a token is required: set BERTH_TOKEN (or --token) to a viewer token".into())
    })?;
    let url = format!(
        "{}{}",
        server.trim_end_matches('/'),
        endpoint::list_outcomes(estate).query_opt("now", now)
    );
    let raw: Box<serde_json::value::RawValue> = server_request(
        reqwest::Method::GET,
        &url,
        &token,
        "application/json",
        Vec::new(),
    )?;
    Ok(match format {
        // The server's bytes as they came (the engine's, like every JSON
        // result of the CLI).
        OutputFormat::Json => format!("{}\n", raw.get()),
        OutputFormat::Text => {
            let report: berth_engine::outcome::Report = serde_json::from_str(raw.get())
                .map_err(|e| Failure::usage(format!("{url}: not an outcomes report: {e}")))?;
            berth_engine::outcome::text(&report)
        }
    })
}
