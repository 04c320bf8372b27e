//! An estate's health (`GET /api/estates/{id}/health`): whether its
//! picture is complete and fresh — its agents and what each sends, the
//! probe addresses, the recent writes with their notes (from the audit
//! trail), its facts by kind counted by the engine
//! (`berth_engine::evidence::inventory`), and whose traffic is known.

use axum::extract::{Path, State};
use axum::Json;
use berth_api::{
    AgentHealth, EstateChange, EstateHealth, FactKindHealth, ProbeHealth, TrafficHealth,
};
use berth_engine::estate::format_time;
use berth_engine::evidence::inventory;
use serde_json::Value;

use super::extract::{eval_now, EvalQuery, Query};
use crate::auth::{Caller, Role};
use crate::error::{counted, ApiResult};
use crate::estates::{loaded_estate, visible_estate};
use crate::store;
use crate::AppState;

/// The recent writes listed: a page of them, not the trail.
const CHANGES_LISTED: usize = 20;

/// How many of the newest writes re-syncs are counted from: a year of an
/// agent re-syncing daily, read in one statement.
const WRITES_SCANNED: i64 = 1_000;

/// `GET /api/estates/{id}/health?now=` (routed with the operations, `ops.rs`).
pub(super) async fn estate_health(
    State(state): State<AppState>,
    caller: Caller,
    Path(id): Path<String>,
    Query(q): Query<EvalQuery>,
) -> ApiResult<Json<EstateHealth>> {
    visible_estate(&state.db, &caller, &id).await?;
    let now = eval_now(&q.now)?;
    let (meta, estate, policy) = loaded_estate(&state.db, &state.cache, &id).await?;
    let inv = inventory::inventory(&estate, &policy, now);
    let batches = store::batches_by_submitter(&state.db, &id).await?;
    let probes = store::probes_of(&state.db, &id).await?;
    // One read of the trail's writes: re-syncs are counted from all of
    // them (by actor), the newest `CHANGES_LISTED` are listed.
    let imports = store::estate_writes(&state.db, &id, WRITES_SCANNED).await?;
    let writes = &imports[..imports.len().min(CHANGES_LISTED)];
    let mut agents: Vec<AgentHealth> = store::list_tokens(&state.db)
        .await?
        .into_iter()
        .filter(|t| t.role == Role::Agent && t.estate_id.as_deref() == Some(id.as_str()))
        .map(|t| {
            let subject = format!("token:{}", t.id);
            let sent = batches.iter().find(|b| b.submitter == subject);
            let probe_at = probes
                .iter()
                .filter(|p| p.submitter == subject)
                .map(|p| p.updated_at)
                .max();
            let resyncs: Vec<i64> = imports
                .iter()
                .filter(|e| e.actor == subject && e.action == "estate.imported")
                .map(|e| e.at)
                .collect();
            let mut sends = Vec::new();
            if sent.is_some() {
                sends.push("observations".to_string());
            }
            if probe_at.is_some() {
                sends.push("probe address".to_string());
            }
            if !resyncs.is_empty() {
                sends.push("service re-syncs".to_string());
            }
            let last = [
                sent.map(|b| b.last_at),
                probe_at,
                resyncs.iter().copied().max(),
            ]
            .into_iter()
            .flatten()
            .max();
            AgentHealth {
                batches: sent.map_or(0, |b| b.batches),
                clusters: t.clusters.clone(),
                created_at: format_time(t.created_at),
                last_seen_at: last.map(format_time),
                last_seen_age_s: last.map(|l| (now - l).max(0)),
                name: t.name.clone(),
                observations: sent.map_or(0, |b| b.observations),
                resyncs: resyncs.len() as i64,
                revoked_at: t.revoked_at.map(format_time),
                sends,
                token: t.id.clone(),
            }
        })
        .collect();
    // Newest first, by creation then id (the list is in that order).
    agents.reverse();
    let changes = writes
        .iter()
        .map(|e| EstateChange {
            action: e.action.clone(),
            actor: e.actor.clone(),
            at: format_time(e.at),
            notes: e.detail["notes"]
                .as_array()
                .map(|ns| {
                    ns.iter()
                        .filter_map(Value::as_str)
                        .map(str::to_string)
                        .collect()
                })
                .unwrap_or_default(),
            summary: change_words(&e.action, &e.subject, &e.detail),
            version: e.detail["version"].as_i64(),
        })
        .collect();
    Ok(Json(EstateHealth {
        agents,
        changes,
        estate: id,
        evaluated_at: format_time(now),
        facts: inv
            .kinds
            .iter()
            .map(|k| FactKindHealth {
                guessed: k.guessed as u64,
                inferred: k.inferred as u64,
                kind: k.kind.to_string(),
                measured: k.measured as u64,
                oldest_age_s: k.oldest_age_s,
                reported: k.reported as u64,
                stale: k.stale as u64,
                total: k.total as u64,
                unknown: k.unknown as u64,
            })
            .collect(),
        probes: probes
            .iter()
            .map(|p| ProbeHealth {
                address: p.address.clone(),
                cluster: p.cluster.clone(),
                submitter: p.submitter.clone(),
                updated_at: format_time(p.updated_at),
            })
            .collect(),
        site_pairs: inv.site_pairs as u64,
        site_pairs_without_rtt: inv.site_pairs_without_rtt as u64,
        traffic: TrafficHealth {
            declared: inv.traffic.declared as u64,
            observed: inv.traffic.observed as u64,
            services: inv.traffic.services as u64,
            stale: inv.traffic.stale as u64,
            unknown: inv.traffic.unknown as u64,
        },
        version: meta.version,
    }))
}

/// A write in words, from its audit entry.
fn change_words(action: &str, subject: &str, d: &Value) -> String {
    let n = |k: &str, noun: &str| counted(d[k].as_u64().unwrap_or(0) as usize, noun);
    match action {
        "estate.uploaded" => format!(
            "estate file uploaded: {} on {} at {}, {}",
            n("services", "service"),
            n("clusters", "cluster"),
            n("sites", "site"),
            n("flows", "flow")
        ),
        "estate.imported" => format!(
            "Kubernetes services imported into {subject}: {} added, {} changed, {} removed, {} added; {}",
            d["added"].as_u64().unwrap_or(0),
            d["changed"].as_u64().unwrap_or(0),
            d["removed"].as_u64().unwrap_or(0),
            n("flows_added", "call edge"),
            n("notes_total", "note")
        ),
        "facts.updated" => format!("{} updated", n("count", "fact")),
        other => other.to_string(),
    }
}
