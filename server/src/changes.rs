//! The estate service's changes: fact updates, agents' observation
//! batches and Kubernetes imports. Each takes the estate lock, parses the
//! stored document once, applies the change (`facts.rs`, `import/`),
//! checks the callers' scope, and writes the result once, canonical, by
//! `estates::write_locked` — whoever calls: the HTTP handlers (which the
//! CLI's remote mode and the agent reach through `submit::BerthClient`).
//! The CLI's local mode runs the same parser and merge on a file.
//!
//! The document on its way from the database back to it: stored text →
//! JSON value (parsed once) → changed value → text → estate (the loader's
//! one check) → canonical text (written); the canonical text is loaded
//! again only when it differs from the text checked (a number printed
//! otherwise). An import's merge starts from the cached estate of the
//! version it locked, so the stored document is not loaded to merge into.

use std::sync::Arc;

use berth_api::{
    ClusterRecord, ImportAnswer, KubernetesImportRequest, ObservationAnswer, ObservationBatch,
    ProbePeer, ProbeRecord,
};
use berth_engine::{Estate, Format};
use serde_json::{json, Value};

use crate::auth::Principal;
use crate::cache::Cache;
use crate::clock::now_s;
use crate::db::Db;
use crate::error::{counted, ApiError, ApiResult};
use crate::estates::{write_locked, Checked};
use crate::import::{self, kubernetes};
use crate::store;

/// How many of an import's notes the audit entry keeps (the import's
/// answer has them all): enough to read what it said, not a copy of a
/// report of thousands.
const AUDIT_NOTES: usize = 20;

/// An estate held for a change, and its stored document parsed.
struct Locked<'a> {
    lock: store::EstateLock<'a>,
    doc: Value,
}

impl<'a> Locked<'a> {
    async fn take(db: &'a Db, id: &str) -> ApiResult<Locked<'a>> {
        let lock = store::lock_estate(db, id)
            .await?
            .ok_or_else(|| ApiError::NotFound(format!("no estate {id:?}")))?;
        let doc: Value = serde_json::from_str(&lock.row.document)
            .map_err(|e| ApiError::Internal(format!("stored document of {id}: {e}")))?;
        Ok(Locked { lock, doc })
    }

    /// What the stored document loads to: the cached estate of this
    /// version, or the document loaded.
    fn estate(&self, cache: &Cache) -> ApiResult<Arc<Estate>> {
        let meta = &self.lock.row.meta;
        if let Some(e) = cache.estate(&meta.id, meta.version, &meta.content_digest) {
            return Ok(e);
        }
        berth_engine::load(&self.lock.row.document, Format::Json)
            .map(Arc::new)
            .map_err(|e| {
                ApiError::Internal(format!("stored estate {} does not load: {e:?}", meta.id))
            })
    }
}

/// A batch of fact updates (`POST /api/estates/{id}/facts`), applied
/// whole or not at all; the new version.
pub async fn update_facts(
    db: &Db,
    cache: &Cache,
    p: &Principal,
    id: &str,
    batch: &crate::facts::FactBatch,
) -> ApiResult<store::EstateMeta> {
    let received_at = now_s();
    // The estate is held from this read to the write, so a batch is
    // applied to the document as it is, whoever else (request or replica)
    // is updating facts at the same time: none is lost, none refused.
    let Locked { lock, doc } = Locked::take(db, id).await?;
    let new_doc = crate::facts::apply(&doc, batch, received_at).map_err(|errors| {
        ApiError::invalid(
            format!(
                "{} refused; nothing was applied",
                counted(errors.len(), "fact update")
            ),
            errors,
        )
    })?;
    let checked = Checked::load(new_doc).await?;
    // The audit trail keeps who changed which facts (the Health page's
    // recent writes); in the same transaction as the write.
    let detail = json!({"count": batch.updates.len()}).to_string();
    let audit = store::NewAudit {
        estate: id,
        actor: &p.subject,
        at: received_at,
        action: "facts.updated",
        subject: "estate",
        reason: "",
        detail: &detail,
    };
    write_locked(cache, lock, checked, None, Some(&audit)).await
}

/// Kubernetes manifests into an estate (docs/kubernetes-import.md): the
/// same parser and merge as `berth import kubernetes --into`, applied
/// under the estate lock so it lands on the estate as it is, as one new
/// version — or, when it changes nothing (or `dry_run`), as none.
pub async fn import_kubernetes(
    db: &Db,
    cache: &Cache,
    p: &Principal,
    id: &str,
    b: KubernetesImportRequest,
) -> ApiResult<ImportAnswer> {
    if b.files.is_empty() {
        return Err(ApiError::bad_request(
            "files: give at least one manifest file",
        ));
    }
    crate::scope::require_cluster(p, id, &b.cluster, "the services of cluster")?;
    let mut imported = parse_manifests(&b)?;
    imported.complete &= !b.incomplete;
    let locked = Locked::take(db, id).await?;
    let model = locked.estate(cache)?;
    let merged =
        import::merge_loaded(&locked.doc, &model, &b.cluster, &imported).map_err(|e| match e {
            import::MergeError::UnknownCluster { .. } => {
                ApiError::invalid_at(e.to_string(), "/cluster", e.to_string())
            }
            other => ApiError::invalid(other.to_string(), Vec::<Value>::new()),
        })?;
    crate::scope::require_inside(p, id, &locked.doc, &merged.value)?;
    let report = merged.report;
    let version = match merged.loaded.filter(|_| !b.dry_run) {
        // A dry run, or nothing changed: dropping the lock rolls back,
        // nothing was written.
        None => locked.lock.row.meta.version,
        Some((text, estate)) => {
            // Who imported what, with its notes, in the audit trail (the
            // Health page's recent writes), in the same transaction.
            let detail = json!({
                "cluster": b.cluster,
                "added": report.added.len(),
                "changed": report.changed.len(),
                "removed": report.removed.len(),
                "flows_added": report.flows_added.len(),
                "notes": report.notes.iter().take(AUDIT_NOTES).map(|n| n.message.as_str()).collect::<Vec<_>>(),
                "notes_total": report.notes.len(),
            })
            .to_string();
            let audit = store::NewAudit {
                estate: id,
                actor: &p.subject,
                at: now_s(),
                action: "estate.imported",
                subject: &b.cluster,
                reason: "",
                detail: &detail,
            };
            let checked = Checked { text, estate };
            let meta = write_locked(cache, locked.lock, checked, None, Some(&audit)).await?;
            tracing::info!(estate = %id, cluster = %b.cluster, version = meta.version, added = report.added.len(), changed = report.changed.len(), removed = report.removed.len(), "kubernetes import");
            meta.version
        }
    };
    let written = !b.dry_run && !report.is_noop();
    Ok(ImportAnswer {
        estate: id.to_string(),
        report,
        version,
        written,
    })
}

/// The request's manifests parsed; their errors as 422 items.
fn parse_manifests(b: &KubernetesImportRequest) -> ApiResult<import::Imported> {
    let inputs: Vec<import::Input> = b
        .files
        .iter()
        .map(|f| import::Input {
            name: &f.name,
            text: &f.text,
        })
        .collect();
    let options = kubernetes::Options {
        skip_invalid: b.skip_invalid,
        ..kubernetes::Options::default()
    };
    kubernetes::parse(&inputs, options).map_err(|errors| {
        ApiError::invalid(
            format!(
                "nothing imported: {} in the manifests (skip_invalid leaves such objects out)",
                counted(errors.len(), "error")
            ),
            errors
                .iter()
                .map(|e| {
                    json!({
                        "path": if e.path.is_empty() { "/" } else { &e.path },
                        "line": e.line,
                        "message": e.message,
                        "file": e.file,
                        "document": e.document,
                        "object": e.object,
                    })
                })
                .collect::<Vec<_>>(),
        )
    })
}

/// How long a probe address is handed out after its agent last reported:
/// ten minutes is ten ticks at the default interval, so an agent that
/// stopped is no longer probed (and no failed probes are logged for it)
/// soon after, while a slow tick or a server restart does not drop it.
const PEER_FRESH_S: i64 = 600;

/// Agents' observations (SPEC §12): a batch of measured facts, applied
/// whole or not at all, exactly once per batch id and submitter (the
/// caller's subject: one token's ids never collide with another's).
/// `digest` is the request body's, to tell a retry from a reused id. The
/// caller has checked the batch's id and that `p` may speak for its
/// probe's and cluster record's clusters.
pub async fn observe(
    db: &Db,
    cache: &Cache,
    p: &Principal,
    id: &str,
    batch: ObservationBatch,
    digest: &str,
) -> ApiResult<ObservationAnswer> {
    let Locked { mut lock, mut doc } = Locked::take(db, id).await?;
    let before = p.clusters.is_some().then(|| doc.clone());
    let received_at = now_s();
    let has_cluster = |doc: &Value, c: &str| {
        doc["clusters"]
            .as_array()
            .is_some_and(|a| a.iter().any(|x| x["id"] == c))
            || batch.cluster.as_ref().is_some_and(|r| r.id == c)
    };
    let peers = register_probe(
        &mut lock,
        batch.probe.as_ref(),
        |c| has_cluster(&doc, c),
        &p.subject,
        received_at,
    )
    .await?;
    let answer =
        |applied: u64, version: i64, duplicate: bool, peers: Vec<ProbePeer>| ObservationAnswer {
            applied,
            batch_id: batch.batch_id.clone(),
            cluster_created: None,
            duplicate,
            estate: id.to_string(),
            peers,
            version,
        };
    // A retry (the agent never saw our answer) is answered from the
    // record; the same id with other content is a bug to surface.
    if let Some(seen) = lock.batch(&p.subject, &batch.batch_id).await? {
        if seen.body_digest != digest {
            return Err(ApiError::Conflict(format!(
                "batch_id {:?} was already used for a different batch; give every batch its own id",
                batch.batch_id
            )));
        }
        if batch.probe.is_some() {
            lock.commit().await?;
        }
        let applied = u64::try_from(seen.applied).unwrap_or_default();
        return Ok(answer(applied, seen.version, true, peers));
    }
    // Nothing to apply, only a probe to register (an agent's first tick,
    // before it knows any peer): no new version.
    if batch.observations.is_empty() && batch.probe.is_some() && batch.cluster.is_none() {
        let version = lock.row.meta.version;
        lock.commit().await?;
        return Ok(answer(0, version, false, peers));
    }
    let mut cluster_created = None;
    if let Some(record) = &batch.cluster {
        if let Some(new_doc) = created_cluster(&doc, record, p, id, received_at)? {
            doc = new_doc;
            cluster_created = Some(record.id.clone());
        }
    }
    let mode = crate::facts::Mode {
        list: "observations",
        default_class: Some(berth_engine::fact::Class::Measured),
        require_observed_at: true,
        source: crate::facts::Source::Sender(observer(p)),
        received_at,
    };
    let new_doc = crate::facts::apply_with(&doc, &batch.observations, &mode).map_err(|errors| {
        ApiError::invalid(
            format!(
                "{} refused; nothing was applied",
                counted(errors.len(), "observation")
            ),
            errors,
        )
    })?;
    if let Some(before) = &before {
        crate::scope::require_inside(p, id, before, &new_doc)?;
    }
    let applied = batch.observations.len() as i64;
    let record = store::NewBatch {
        submitter: &p.subject,
        batch_id: &batch.batch_id,
        body_digest: digest,
        applied,
    };
    let checked = Checked::load(new_doc).await?;
    let meta = write_locked(cache, lock, checked, Some(record), None).await?;
    if let Some(c) = &cluster_created {
        tracing::info!(estate = %id, cluster = %c, by = %p.subject, "cluster created by its agent");
    }
    tracing::info!(estate = %id, batch_id = %batch.batch_id, by = %p.subject, applied, version = meta.version, "observations applied");
    Ok(ObservationAnswer {
        cluster_created: Some(cluster_created),
        ..answer(
            u64::try_from(applied).unwrap_or_default(),
            meta.version,
            false,
            peers,
        )
    })
}

/// The document with the batch's cluster record added, when the estate
/// lacks that cluster and `p` may create clusters; `None` when it has it.
fn created_cluster(
    doc: &Value,
    record: &ClusterRecord,
    p: &Principal,
    id: &str,
    received_at: i64,
) -> ApiResult<Option<Value>> {
    let created = with_new_cluster(doc, record, received_at).map_err(|errors| {
        ApiError::invalid(
            format!(
                "cluster {:?} cannot be created as described; nothing was applied",
                record.id
            ),
            errors,
        )
    })?;
    if created.is_some() {
        let allowed = p.may_create_clusters || p.role >= crate::auth::Role::Operator;
        if !allowed {
            return Err(ApiError::Forbidden(format!(
                "estate {id:?} has no cluster {:?}, and this token may not create clusters: an administrator can create a token with \"may_create_clusters\": true, or add the cluster to the estate",
                record.id
            )));
        }
    }
    Ok(created)
}

/// Register `probe` (its cluster must be one of the estate's, `known`)
/// and list the other clusters' probe addresses; nothing when the batch
/// has no probe.
async fn register_probe(
    lock: &mut store::EstateLock<'_>,
    probe: Option<&ProbeRecord>,
    known: impl Fn(&str) -> bool,
    submitter: &str,
    now: i64,
) -> ApiResult<Vec<ProbePeer>> {
    let Some(probe) = probe else {
        return Ok(vec![]);
    };
    let refuse = |path: &str, message: String| {
        ApiError::invalid_at("invalid probe; nothing was applied", path, message)
    };
    if !known(&probe.cluster) {
        return Err(refuse(
            "/probe/cluster",
            format!("no cluster {:?} in this estate", probe.cluster),
        ));
    }
    match probe.address.parse::<std::net::SocketAddr>() {
        Ok(a) => {
            if let Some(why) = crate::external::address::probe_addr_problem(a) {
                return Err(refuse(
                    "/probe/address",
                    format!(
                        "{:?} is {why}: give IP:PORT its peers can connect to (e.g. 10.1.2.3:7946 or [fd00::3]:7946)",
                        probe.address
                    ),
                ));
            }
        }
        Err(_) => {
            return Err(refuse(
                "/probe/address",
                format!(
                    "expected IP:PORT its peers can connect to (e.g. 10.1.2.3:7946 or [fd00::3]:7946), found {:?}",
                    probe.address
                ),
            ))
        }
    }
    lock.put_probe(&probe.cluster, &probe.address, submitter, now)
        .await?;
    let peers = lock.probes(now - PEER_FRESH_S).await?;
    Ok(peers
        .into_iter()
        .filter(|p| p.cluster != probe.cluster)
        .map(|p| ProbePeer {
            address: p.address,
            cluster: p.cluster,
            updated_at: p.updated_at,
        })
        .collect())
}

/// The document with `record` added as a new cluster (enrolled now), or
/// the 422 items naming what is wrong with it (as `/cluster/...`), or
/// `None` when the estate already has that cluster.
fn with_new_cluster(
    doc: &Value,
    record: &ClusterRecord,
    received_at: i64,
) -> Result<Option<Value>, Vec<Value>> {
    let clusters = doc["clusters"].as_array().cloned().unwrap_or_default();
    if clusters.iter().any(|c| c["id"] == record.id.as_str()) {
        return Ok(None);
    }
    let mut entry = serde_json::to_value(record).expect("serialises");
    entry["enrolled_at"] = json!(berth_engine::estate::format_time(received_at));
    let at = clusters.len();
    let mut new_doc = doc.clone();
    new_doc["clusters"]
        .as_array_mut()
        .expect("an estate document has clusters")
        .push(entry);
    // The engine's loader decides what a valid cluster is (site known,
    // id form, totals ≥ 0): its errors about the new entry are the
    // record's, renamed to where the agent put them.
    let text = serde_json::to_string(&new_doc).expect("serialises");
    if let Err(errors) = berth_engine::estate::load(&text, berth_engine::Format::Json) {
        let prefix = format!("/clusters/{at}");
        let mine: Vec<Value> = errors
            .iter()
            .filter_map(|e| {
                let rest = e.path.strip_prefix(&prefix)?;
                Some(json!({"path": format!("/cluster{rest}"), "line": null, "message": e.message}))
            })
            .collect();
        if !mine.is_empty() {
            return Err(mine);
        }
    }
    Ok(Some(new_doc))
}

/// The `source` recorded for facts `p` observed: who sent them, by their
/// credentials, never what the batch says. A token is its id — unique and
/// unforgeable — and, for people reading the estate, its name:
/// `token:3f2a9c1b7d4e (c-fra-1)`; a person signed in by name is
/// `user:<name>` (the estate format's convention); a session opened with a
/// token is that token.
fn observer(p: &Principal) -> String {
    match p.via {
        crate::auth::Via::Bearer { .. } => format!("{} ({})", p.subject, p.label),
        crate::auth::Via::Session { .. } if p.subject.starts_with("token:") => p.subject.clone(),
        crate::auth::Via::Session { .. } => format!("user:{}", p.subject),
    }
}
