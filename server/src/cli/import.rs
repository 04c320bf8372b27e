//! `berth import` on this machine: Kubernetes manifests merged into an
//! estate file, and Prometheus query results turned into flows and sent
//! to a server as one observation batch. The mesh flags (`mesh_setup`)
//! are shared with `berth agent`.

use std::path::{Path, PathBuf};

use berth_engine::Format;

use super::args::{KubeApi, MeshArgs};
use super::common::{pretty, read_inputs, read_text, runtime, Failure};

/// The manifests to import: the files as read, or one `List` document
/// per kind read from the Kubernetes API (its notes — kinds the
/// credentials may not list, restarted lists — printed on stderr), and
/// whether every kind could be read. `estate` names the estate the
/// import is for in the requests' `User-Agent`.
pub fn kubernetes_inputs(
    files: &[PathBuf],
    api: Option<&KubeApi>,
    estate: &str,
) -> Result<(Vec<(String, String)>, bool), Failure> {
    let Some(api) = api else {
        return Ok((read_inputs(files)?, true));
    };
    let rt = runtime()?;
    let snapshot = rt.block_on(async {
        let source = berth::kube_source::KubeSource::connect(
            api.kubeconfig.as_deref(),
            api.context.as_deref(),
            api.page_size,
            berth::kube_source::user_agent("import", estate),
        )
        .await
        .map_err(Failure::usage)?;
        let snapshot = source.read().await.map_err(|e| Failure {
            // The API could not be read: not the input's fault (2), as
            // for a server that cannot be reached.
            code: 2,
            lines: vec![e],
        })?;
        eprintln!(
            "read {} objects of {} kinds from context {} ({}) in {} requests",
            snapshot.lists.iter().map(|l| l.items.len()).sum::<usize>(),
            snapshot.lists.len(),
            source.context,
            source.server,
            snapshot.requests()
        );
        Ok::<_, Failure>(snapshot)
    })?;
    for n in snapshot.notes() {
        eprintln!("note: {n}");
    }
    Ok((snapshot.inputs(), snapshot.complete()))
}

/// `berth import kubernetes`: read (files or the API), parse, merge (all
/// in the library), report on stderr, write the estate.
pub fn import_kubernetes(
    cluster: &str,
    into: &Path,
    output: Option<&Path>,
    options: berth::import::kubernetes::Options,
    files: &[PathBuf],
    api: Option<&KubeApi>,
) -> Result<String, Failure> {
    use berth::import::{self, kubernetes, ReportText};
    let estate_text = read_text(into)?;
    let yaml = matches!(
        into.extension().and_then(|e| e.to_str()),
        Some("yaml" | "yml")
    ) || Format::sniff(&estate_text) == Format::Yaml;
    // YAML as the engine reads an estate: `.nan` and `.inf` refused with
    // their paths, not turned into null (which would read as unknown).
    let estate: serde_json::Value = if yaml {
        berth_engine::estate::yaml_value(&estate_text).map_err(|errors| {
            errors
                .iter()
                .map(|e| match e.line {
                    Some(l) => format!("line {l}: {}", e.message),
                    None if e.path.is_empty() => e.message.clone(),
                    None => format!("{}: {}", e.path, e.message),
                })
                .collect::<Vec<_>>()
                .join("; ")
        })
    } else {
        serde_json::from_str(&estate_text).map_err(|e| e.to_string())
    }
    .map_err(|e| Failure {
        code: 1,
        lines: vec![format!(
            "{}: not a readable estate file: {e}",
            into.display()
        )],
    })?;
    let (texts, complete) = kubernetes_inputs(files, api, &into.display().to_string())?;
    let inputs: Vec<import::Input> = texts
        .iter()
        .map(|(name, text)| import::Input { name, text })
        .collect();
    let imported = kubernetes::parse(&inputs, options).map_err(|errors| {
        let mut lines = vec![format!(
            "nothing imported: {} error{} (--skip-invalid leaves such objects out):",
            errors.len(),
            if errors.len() == 1 { "" } else { "s" }
        )];
        lines.extend(errors.iter().map(|e| e.to_string()));
        Failure { code: 1, lines }
    })?;
    // A kind that could not be read leaves the input incomplete: what it
    // holds is unknown, so nothing may be removed for its absence.
    let mut imported = imported;
    imported.complete &= complete;
    let (merged, report) = import::merge(&estate, cluster, &imported).map_err(|e| Failure {
        code: 1,
        lines: vec![format!("{}: {e}", into.display())],
    })?;
    eprint!("{}", report.text());
    let text = pretty(&merged);
    match output {
        Some(path) => {
            std::fs::write(path, &text)
                .map_err(|e| Failure::usage(format!("cannot write {}: {e}", path.display())))?;
            Ok(String::new())
        }
        None => Ok(text),
    }
}

/// The reading (mesh, labels, queries) and the mapping, from the flags (a
/// bad flag is a usage error, 2; a mapping file that cannot be understood
/// is invalid input, 1).
pub fn mesh_setup(
    mesh: MeshArgs,
) -> Result<
    (
        berth::import::prometheus::Reading,
        berth::import::prometheus::Mapping,
    ),
    Failure,
> {
    use berth::import::mesh::Mesh;
    let kind = Mesh::parse(&mesh.mesh).map_err(Failure::usage)?;
    // The preset's cluster labels unless --cluster-labels says otherwise
    // (`none`: read without clusters; a pair: those labels).
    let mut labels = kind.default_labels();
    let named = mesh.cluster_labels.as_deref().map(str::trim);
    if named == Some("none") {
        labels = kind.labels();
    } else if let Some(arg) = &mesh.cluster_labels {
        let (source, destination) = match (arg.trim(), kind.cluster_labels()) {
            ("default", Some(own)) => own,
            ("default", None) => {
                return Err(Failure::usage(format!(
                    "--cluster-labels default: {kind} metrics carry no cluster labels of their own; name the two labels (SOURCE,DESTINATION) your setup adds"
                )))
            }
            (pair, _) => pair
                .split_once(',')
                .map(|(a, b)| (a.trim(), b.trim()))
                .filter(|(a, b)| {
                    let ok = |l: &str| {
                        !l.is_empty()
                            && l.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
                            && !l.starts_with(|c: char| c.is_ascii_digit())
                    };
                    ok(a) && ok(b)
                })
                .ok_or_else(|| {
                    Failure::usage(format!(
                        "--cluster-labels {arg:?}: expected two Prometheus label names, SOURCE,DESTINATION (e.g. source_cluster,destination_cluster), default or none"
                    ))
                })?,
        };
        labels = kind.labels().with_clusters(source, destination);
    }
    let mut reading = berth::import::prometheus::Reading::with_labels(kind, labels);
    reading.clusters_named = named.is_some_and(|n| n != "none");
    let queries = &mut reading.queries;
    if let Some(q) = mesh.query_rate {
        queries.rate = q;
    }
    if let Some(q) = mesh.query_duration {
        queries.duration = q;
    }
    if let Some(q) = mesh.query_bytes {
        queries.bytes = (!q.trim().is_empty()).then_some(q);
    }
    if let Some(q) = mesh.query_coverage {
        queries.coverage = (!q.trim().is_empty()).then_some(q);
    }
    let mut mapping = berth::import::prometheus::Mapping::default();
    if let Some(path) = &mesh.map_file {
        let text = read_text(path)?;
        let v: serde_json::Value = serde_yaml::from_str(&text).map_err(|e| Failure {
            code: 1,
            lines: vec![format!("{}: not JSON or YAML: {e}", path.display())],
        })?;
        mapping.add_file(&v).map_err(|e| Failure {
            code: 1,
            lines: vec![format!("{}: {e}", path.display())],
        })?;
    }
    for m in &mesh.map {
        mapping.add_arg(m).map_err(Failure::usage)?;
    }
    for m in &mesh.map_cluster {
        mapping.add_cluster_arg(m).map_err(Failure::usage)?;
    }
    Ok((reading, mapping))
}

pub struct ImportPrometheus {
    pub server: Option<String>,
    pub token: Option<String>,
    pub estate: String,
    pub url: Option<String>,
    pub file: Option<PathBuf>,
    pub mesh: MeshArgs,
    pub dry_run: bool,
}

/// How long `import prometheus` keeps retrying a server that answers 429
/// or 5xx: long enough to ride out a rate limit (one batch per 2 s) or a
/// restart; a person is waiting, so not longer.
const IMPORT_RETRY_WINDOW: std::time::Duration = std::time::Duration::from_secs(30);

/// `berth import prometheus`: read the query results (Prometheus or a
/// file), derive the flows, print them, and send them as one batch.
pub fn import_prometheus(args: ImportPrometheus) -> Result<String, Failure> {
    use berth::import::prometheus;
    use berth::submit::{self, BerthClient, Secret};
    let ImportPrometheus {
        server,
        token,
        estate,
        url,
        file,
        mesh,
        dry_run,
    } = args;
    let (reading, mut mapping) = mesh_setup(mesh)?;
    let client = match (&server, &token) {
        (Some(server), Some(token)) => Some(
            BerthClient::new(server, Secret::new(token.clone()), &estate)
                .map_err(Failure::usage)?,
        ),
        _ => None,
    };
    let rt = runtime()?;
    let (mut results, origin) = prometheus_results(url.as_deref(), file.as_deref(), &reading, &rt)?;
    // Nothing found at all means the wrong Prometheus or other metric
    // names, not "0 flows": say what was looked for and fail (the agent
    // warns instead and carries on).
    if let Some(problem) = prometheus::nothing_found(&results, &reading) {
        return Err(Failure {
            code: 1,
            lines: vec![format!("{origin}: {problem}")],
        });
    }
    // An operator's token may read the estate: workloads that are not
    // among its services are then reported before anything is sent. An
    // agent token may not; the server's refusal tells the same, later.
    let known = match &client {
        Some(c) => rt.block_on(c.estate_services()).map_err(|e| Failure {
            code: 2,
            lines: vec![format!(
                "{}: reading the estate {:?}: {e}",
                server.as_deref().unwrap_or_default(),
                estate
            )],
        })?,
        None => None,
    };
    // Several clusters in the series: each must be an estate cluster,
    // or nothing is sent (replicas are never merged silently).
    prometheus::read_clusters(&mut results, &reading, &mut mapping, known.as_ref()).map_err(
        |e| Failure {
            code: 1,
            lines: std::iter::once(format!("{origin}: clusters:"))
                .chain(e.lines())
                .collect(),
        },
    )?;
    let derived = prometheus::derive(&results, &reading, &mapping, known.as_ref());
    // No `source`: the server records who sent the batch (the token), not
    // what a batch says (docs/observations.md).
    let mut observations = prometheus::observations(&derived.flows);
    // Whose traffic the mesh saw at all: their missing flows are measured
    // zeros from now on (docs/advice.md §2, Traffic coverage).
    observations.extend(prometheus::coverage_observations(&derived.covered));
    print!(
        "{origin}: {} flow{} and the traffic of {} service{} for estate {:?}{}\n{}",
        derived.flows.len(),
        if derived.flows.len() == 1 { "" } else { "s" },
        derived.covered.len(),
        if derived.covered.len() == 1 { "" } else { "s" },
        estate,
        match (&client, &known) {
            (None, _) => " (services not checked: no --server to ask)",
            (Some(_), None) => {
                " (services not checked: the token may not read the estate; the server checks them)"
            }
            (Some(_), Some(_)) => "",
        },
        prometheus::report(&derived)
    );
    let body = serde_json::to_string(&observations).expect("serialises");
    let batch_id = submit::batch_id("prometheus", &[&estate, &body]);
    if dry_run {
        return Ok(format!(
            "dry run: {} observation{} not sent; the batch would be:\n{}",
            observations.len(),
            if observations.len() == 1 { "" } else { "s" },
            pretty(&berth_api::ObservationBatch {
                batch_id,
                observations,
                cluster: None,
                probe: None,
            })
        ));
    }
    let client = client.expect("--server and --token are required without --dry-run");
    if observations.is_empty() {
        return Ok("nothing to send\n".into());
    }
    let server = server.as_deref().unwrap_or_default();
    send_observations(&rt, &client, server, &batch_id, observations)
}

/// The query results to derive flows from: asked of Prometheus now, or
/// read from a saved file; and where they came from, for messages.
fn prometheus_results(
    url: Option<&str>,
    file: Option<&Path>,
    reading: &berth::import::prometheus::Reading,
    rt: &tokio::runtime::Runtime,
) -> Result<(berth::import::prometheus::Results, String), Failure> {
    use berth::import::prometheus;
    match (url, file) {
        (Some(url), _) => {
            let prom = berth::prom_client::PromClient::new(url).map_err(Failure::usage)?;
            let time = chrono::Utc::now().timestamp();
            let results = rt
                .block_on(prom.fetch(reading, time))
                .map_err(|e| Failure {
                    code: if e.is_transient() { 2 } else { 1 },
                    lines: vec![format!("Prometheus: {e}")],
                })?;
            let origin = format!(
                "Prometheus {url}, evaluated at {}",
                berth_engine::estate::format_time(time)
            );
            Ok((results, origin))
        }
        (None, Some(file)) => {
            let text = read_text(file)?;
            let v: serde_json::Value = serde_json::from_str(&text).map_err(|e| Failure {
                code: 1,
                lines: vec![format!("{}:{}: not JSON: {e}", file.display(), e.line())],
            })?;
            let results = prometheus::parse_file(&v, reading).map_err(|e| Failure {
                code: 1,
                lines: vec![format!("{}: {e}", file.display())],
            })?;
            Ok((results, format!("saved results {}", file.display())))
        }
        (None, None) => unreachable!("clap requires --url or --file"),
    }
}

/// Send the observations as one batch, retrying a busy or restarting
/// server for a while; what came of it, for people.
fn send_observations(
    rt: &tokio::runtime::Runtime,
    client: &berth::submit::BerthClient,
    server: &str,
    batch_id: &str,
    observations: Vec<berth_api::FactUpdate>,
) -> Result<String, Failure> {
    use berth::submit::{self, SubmitError};
    let policy = submit::RetryPolicy {
        backoff: submit::BACKOFF,
        give_up_after: IMPORT_RETRY_WINDOW,
        retry_unreachable: false,
    };
    let (_stop_tx, mut stop) = tokio::sync::watch::channel(false);
    let delivered = rt.block_on(submit::deliver(
        client,
        batch_id,
        observations,
        policy,
        &mut stop,
        |e, delay| eprintln!("{e}; retrying in {:.1} s", delay.as_secs_f64()),
    ));
    match delivered {
        Ok(d) => {
            let mut out = pruned_lines(&d.pruned).join("\n");
            if !out.is_empty() {
                out.push('\n');
            }
            out.push_str(&match d.answer {
                None => "nothing left to send\n".to_string(),
                Some(a) if a.duplicate => format!(
                    "batch {} was already applied (duplicate): nothing changed; estate {:?} is at version {}\n",
                    a.batch_id, a.estate, a.version
                ),
                Some(a) => format!(
                    "sent batch {} ({} observation{}): estate {:?} now at version {}, {} applied\n",
                    a.batch_id,
                    d.sent,
                    if d.sent == 1 { "" } else { "s" },
                    a.estate,
                    a.version,
                    a.applied
                ),
            });
            Ok(out)
        }
        Err((e, pruned)) => {
            let mut lines = pruned_lines(&pruned);
            lines.push(format!("{server}: {e}"));
            Err(Failure {
                code: match e {
                    SubmitError::Invalid { .. } | SubmitError::Conflict(_) => 1,
                    _ => 2,
                },
                lines,
            })
        }
    }
}

/// The observations the server refused and the delivery left out.
fn pruned_lines(pruned: &[berth::submit::Pruned]) -> Vec<String> {
    let mut lines = vec![];
    if !pruned.is_empty() {
        lines.push(format!(
            "refused by the server and left out ({}):",
            pruned.len()
        ));
        lines.extend(
            pruned
                .iter()
                .map(|p| format!("  {} {} → {}: {}", p.fact, p.from, p.to, p.message)),
        );
    }
    lines
}
