//! Changing an estate piece by piece: fact updates, agents' observation
//! batches, and Kubernetes manifests merged into one cluster. Each is
//! applied under the estate lock and written by `estates::write_locked`.

use axum::body::Body;
use axum::extract::{Path, State};
use axum::Json;
use berth_api::{
    ClusterRecord, ImportAnswer, KubernetesImportRequest, ObservationAnswer, ObservationBatch,
    ProbePeer, ProbeRecord,
};
use serde_json::{json, Value};

use super::extract::{heavy_permit, json_body, read_body, FACTS_BODY_LIMIT, KUBERNETES_BODY_LIMIT};
use super::route::{route, Route};
use crate::auth::Caller;
use crate::clock::now_s;
use crate::digest::sha256_hex_bytes;
use crate::error::{counted, ApiError, ApiResult};
use crate::estates::{visible_estate, write_locked};
use crate::state::AppState;
use crate::store;

/// How many of an import's notes the audit entry keeps (the import's
/// answer has them all): enough to read what it said, not a copy of a
/// report of thousands.
const AUDIT_NOTES: usize = 20;

/// Fact updates, observations and imports.
pub const ROUTES: &[Route] = &[
    route!(UPDATE_FACTS => update_facts),
    route!(POST_OBSERVATIONS => observe),
    route!(IMPORT_KUBERNETES => import_kubernetes),
];

async fn update_facts(
    State(state): State<AppState>,
    caller: Caller,
    Path(id): Path<String>,
    body: Body,
) -> ApiResult<Json<Value>> {
    visible_estate(&state.db, &caller, &id).await?;
    let bytes = read_body(body, FACTS_BODY_LIMIT).await?;
    let batch: crate::facts::FactBatch = json_body(&bytes, "fact updates")?;
    let received_at = now_s();
    // The estate is held from this read to the write, so a batch is
    // applied to the document as it is, whoever else (request or replica)
    // is updating facts at the same time: none is lost, none refused.
    let lock = store::lock_estate(&state.db, &id)
        .await?
        .ok_or_else(|| ApiError::NotFound(format!("no estate {id:?}")))?;
    let doc: Value = serde_json::from_str(&lock.row.document)
        .map_err(|e| ApiError::Internal(format!("stored document of {id}: {e}")))?;
    let new_doc = crate::facts::apply(&doc, &batch, received_at).map_err(|errors| {
        ApiError::invalid(
            format!(
                "{} refused; nothing was applied",
                counted(errors.len(), "fact update")
            ),
            errors,
        )
    })?;
    // The audit trail keeps who changed which facts (the Health page's
    // recent writes); in the same transaction as the write.
    let actor = caller.principal()?.subject.clone();
    let detail = json!({"count": batch.updates.len()}).to_string();
    let audit = store::NewAudit {
        estate: &id,
        actor: &actor,
        at: received_at,
        action: "facts.updated",
        subject: "estate",
        reason: "",
        detail: &detail,
    };
    let meta = write_locked(&state.cache, lock, &new_doc, None, Some(&audit)).await?;
    Ok(Json(json!({
        "estate": id,
        "version": meta.version,
        "content_digest": meta.content_digest,
        "applied": batch.updates.len(),
    })))
}

/// How long a probe address is handed out after its agent last reported:
/// ten minutes is ten ticks at the default interval, so an agent that
/// stopped is no longer probed (and no failed probes are logged for it)
/// soon after, while a slow tick or a server restart does not drop it.
const PEER_FRESH_S: i64 = 600;

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
fn observer(p: &crate::auth::Principal) -> String {
    match p.via {
        crate::auth::Via::Bearer { .. } => format!("{} ({})", p.subject, p.label),
        crate::auth::Via::Session { .. } if p.subject.starts_with("token:") => p.subject.clone(),
        crate::auth::Via::Session { .. } => format!("user:{}", p.subject),
    }
}

/// Longest batch id: room for "<estate>/<cluster>/<RFC 3339 time>" and
/// more, short enough to index.
const MAX_BATCH_ID_CHARS: usize = 128;

/// Agents' observations (SPEC §12): a batch of measured facts, applied
/// whole or not at all, exactly once per batch id and submitter (the
/// caller's subject: one token's ids never collide with another's).
async fn observe(
    State(state): State<AppState>,
    caller: Caller,
    Path(id): Path<String>,
    body: Body,
) -> ApiResult<Json<ObservationAnswer>> {
    let p = caller.principal()?.clone();
    // Per token (or user): one misbehaving agent cannot crowd out others.
    state.observe_limiter.check_key(&p.subject)?;
    visible_estate(&state.db, &caller, &id).await?;
    let bytes = read_body(body, FACTS_BODY_LIMIT).await?;
    let batch: ObservationBatch = json_body(&bytes, "observations")?;
    if batch.batch_id.is_empty()
        || batch.batch_id.chars().count() > MAX_BATCH_ID_CHARS
        || batch.batch_id.chars().any(char::is_control)
    {
        return Err(ApiError::invalid_at(
            "invalid batch_id; nothing was applied",
            "/batch_id",
            format!("1 to {MAX_BATCH_ID_CHARS} characters, no control characters"),
        ));
    }
    // An agent token writes for its own clusters only (crate::scope).
    if let Some(probe) = &batch.probe {
        crate::scope::require_cluster(&p, &id, &probe.cluster, "a probe for cluster")?;
    }
    if let Some(record) = &batch.cluster {
        crate::scope::require_cluster(&p, &id, &record.id, "a record for cluster")?;
    }
    let digest = sha256_hex_bytes(&bytes);
    let mut lock = store::lock_estate(&state.db, &id)
        .await?
        .ok_or_else(|| ApiError::NotFound(format!("no estate {id:?}")))?;
    let mut doc: Value = serde_json::from_str(&lock.row.document)
        .map_err(|e| ApiError::Internal(format!("stored document of {id}: {e}")))?;
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
        return Ok(Json(ObservationAnswer {
            applied: u64::try_from(seen.applied).unwrap_or_default(),
            batch_id: batch.batch_id,
            cluster_created: None,
            duplicate: true,
            estate: id,
            peers,
            version: seen.version,
        }));
    }
    // Nothing to apply, only a probe to register (an agent's first tick,
    // before it knows any peer): no new version.
    if batch.observations.is_empty() && batch.probe.is_some() && batch.cluster.is_none() {
        let version = lock.row.meta.version;
        lock.commit().await?;
        return Ok(Json(ObservationAnswer {
            applied: 0,
            batch_id: batch.batch_id,
            cluster_created: None,
            duplicate: false,
            estate: id,
            peers,
            version,
        }));
    }
    let mut cluster_created = None;
    if let Some(record) = &batch.cluster {
        let created = with_new_cluster(&doc, record, received_at).map_err(|errors| {
            ApiError::invalid(
                format!(
                    "cluster {:?} cannot be created as described; nothing was applied",
                    record.id
                ),
                errors,
            )
        })?;
        if let Some(new_doc) = created {
            let allowed = p.may_create_clusters || p.role >= crate::auth::Role::Operator;
            if !allowed {
                return Err(ApiError::Forbidden(format!(
                    "estate {id:?} has no cluster {:?}, and this token may not create clusters: an administrator can create a token with \"may_create_clusters\": true, or add the cluster to the estate",
                    record.id
                )));
            }
            doc = new_doc;
            cluster_created = Some(record.id.clone());
        }
    }
    let mode = crate::facts::Mode {
        list: "observations",
        default_class: Some(berth_engine::fact::Class::Measured),
        require_observed_at: true,
        source: crate::facts::Source::Sender(observer(&p)),
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
        crate::scope::require_inside(&p, &id, before, &new_doc)?;
    }
    let applied = batch.observations.len() as i64;
    let record = store::NewBatch {
        submitter: &p.subject,
        batch_id: &batch.batch_id,
        body_digest: &digest,
        applied,
    };
    let meta = write_locked(&state.cache, lock, &new_doc, Some(record), None).await?;
    if let Some(c) = &cluster_created {
        tracing::info!(estate = %id, cluster = %c, by = %p.subject, "cluster created by its agent");
    }
    tracing::info!(estate = %id, batch_id = %batch.batch_id, by = %p.subject, applied, version = meta.version, "observations applied");
    Ok(Json(ObservationAnswer {
        applied: u64::try_from(applied).unwrap_or_default(),
        batch_id: batch.batch_id,
        cluster_created: Some(cluster_created),
        duplicate: false,
        estate: id,
        peers,
        version: meta.version,
    }))
}

/// Kubernetes manifests into an estate (docs/kubernetes-import.md): the
/// same parser and merge as `berth import kubernetes --into`, applied under
/// the estate lock so it lands on the estate as it is, as one new version
/// — or, when it changes nothing, as none.
async fn import_kubernetes(
    State(state): State<AppState>,
    caller: Caller,
    Path(id): Path<String>,
    body: Body,
) -> ApiResult<Json<ImportAnswer>> {
    use crate::import::{self, kubernetes};
    // Operators import; an agent token only when an administrator allowed
    // it to re-sync its cluster's services (`may_sync_services`): an agent
    // otherwise only reports measured facts, so a token stolen from a
    // cluster cannot rewrite the estate's services.
    let p = caller.principal()?;
    if p.role < crate::auth::Role::Operator && !p.may_sync_services {
        return Err(ApiError::Forbidden(
            "this agent token may not import services: an administrator can create one with \"may_sync_services\": true (for `berth agent --kubernetes`), or import with an operator's token".into(),
        ));
    }
    visible_estate(&state.db, &caller, &id).await?;
    // One of a caller's few large requests (docs/security.md, limits).
    let _permit = heavy_permit(&state.heavy, &p.subject, "this Kubernetes import")?;
    let bytes = read_body(body, KUBERNETES_BODY_LIMIT).await?;
    let b: KubernetesImportRequest = json_body(&bytes, "kubernetes import")?;
    // The parsed request holds the text; the raw body is not needed again.
    drop(bytes);
    if b.files.is_empty() {
        return Err(ApiError::bad_request(
            "files: give at least one manifest file",
        ));
    }
    crate::scope::require_cluster(p, &id, &b.cluster, "the services of cluster")?;
    let inputs: Vec<import::Input> = b
        .files
        .iter()
        .map(|f| import::Input {
            name: &f.name,
            text: &f.text,
        })
        .collect();
    let imported = kubernetes::parse(
        &inputs,
        kubernetes::Options {
            skip_invalid: b.skip_invalid,
            ..kubernetes::Options::default()
        },
    )
    .map_err(|errors| {
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
    })?;
    let mut imported = imported;
    imported.complete &= !b.incomplete;
    let lock = store::lock_estate(&state.db, &id)
        .await?
        .ok_or_else(|| ApiError::NotFound(format!("no estate {id:?}")))?;
    let doc: Value = serde_json::from_str(&lock.row.document)
        .map_err(|e| ApiError::Internal(format!("stored document of {id}: {e}")))?;
    let (merged, report) = import::merge(&doc, &b.cluster, &imported).map_err(|e| match e {
        import::MergeError::UnknownCluster { .. } => {
            ApiError::invalid_at(e.to_string(), "/cluster", e.to_string())
        }
        other => ApiError::invalid(other.to_string(), Vec::<Value>::new()),
    })?;
    crate::scope::require_inside(p, &id, &doc, &merged)?;
    let noop = report.is_noop();
    let version = if b.dry_run || noop {
        // Dropping the lock rolls back: nothing was written.
        lock.row.meta.version
    } else {
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
            estate: &id,
            actor: &p.subject,
            at: now_s(),
            action: "estate.imported",
            subject: &b.cluster,
            reason: "",
            detail: &detail,
        };
        let meta = write_locked(&state.cache, lock, &merged, None, Some(&audit)).await?;
        tracing::info!(estate = %id, cluster = %b.cluster, version = meta.version, added = report.added.len(), changed = report.changed.len(), removed = report.removed.len(), "kubernetes import");
        meta.version
    };
    Ok(Json(ImportAnswer {
        estate: id,
        report,
        version,
        written: !b.dry_run && !noop,
    }))
}
