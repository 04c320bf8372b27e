//! Estates as a whole: list, create, read, delete, and the estate file
//! exported and imported.

use std::sync::Arc;

use axum::body::Body;
use axum::extract::{Path, State};
use axum::http::{header, HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::Json;
use serde::Deserialize;
use serde_json::{json, Value};

use berth_engine::{estate, Estate, Format, Policy};

use super::extract::{
    check_id, heavy_permit, heavy_permit_per_caller, read_body, shared_document, to_json, utf8,
    Query, SharedBody, ESTATE_BODY_LIMIT,
};
use super::route::{route, Route};
use crate::auth::Caller;
use crate::clock::now_s;
use crate::error::{ApiError, ApiResult};
use crate::estates::{canonicalise, loaded_estate, visible_estate};
use crate::state::AppState;
use crate::store;

/// Estates and their files.
pub const ROUTES: &[Route] = &[
    route!(LIST_ESTATES => list_estates),
    route!(CREATE_ESTATE => create_estate),
    route!(GET_ESTATE => get_estate),
    route!(DELETE_ESTATE => delete_estate),
    route!(EXPORT_ESTATE_FILE => export_file),
    route!(IMPORT_ESTATE_FILE => import_file),
];

async fn list_estates(State(state): State<AppState>, caller: Caller) -> ApiResult<Json<Value>> {
    let p = caller.principal()?;
    let all = store::list_estates(&state.db).await?;
    let visible: Vec<_> = all
        .into_iter()
        .filter(|e| p.may_see_estate(&e.id))
        .collect();
    Ok(Json(json!(berth_api::EstateList {
        estates: visible.iter().map(api_meta).collect(),
    })))
}

/// The API's form of an estate's metadata (times as RFC 3339).
fn api_meta(m: &store::EstateMeta) -> berth_api::EstateMeta {
    berth_api::EstateMeta {
        id: m.id.clone(),
        name: m.name.clone(),
        version: m.version,
        content_digest: m.content_digest.clone(),
        policy_digest: m.policy_digest.clone(),
        created_at: estate::format_time(m.created_at),
        updated_at: estate::format_time(m.updated_at),
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct CreateQuery {
    id: Option<String>,
}

/// An id from a name: lowercase letters and digits, runs of anything else
/// as one '-'.
fn slug(name: &str) -> String {
    let mut s = String::new();
    for c in name.chars() {
        if c.is_ascii_alphanumeric() {
            s.push(c.to_ascii_lowercase());
        } else if !s.ends_with('-') && !s.is_empty() {
            s.push('-');
        }
    }
    let s = s.trim_end_matches('-');
    let s: String = s.chars().take(64).collect();
    if s.is_empty() {
        "estate".into()
    } else {
        s.trim_end_matches('-').to_string()
    }
}

async fn create_estate(
    State(state): State<AppState>,
    caller: Caller,
    Query(q): Query<CreateQuery>,
    headers: HeaderMap,
    body: Body,
) -> ApiResult<Response> {
    let p = caller.principal()?;
    if p.estate.is_some() {
        return Err(ApiError::Forbidden(
            "a token scoped to one estate cannot create estates".into(),
        ));
    }
    let _permit = heavy_permit(&state.heavy, &p.subject, "this estate upload")?;
    let bytes = read_body(body, ESTATE_BODY_LIMIT).await?;
    let text = utf8(&bytes)?.to_string();
    let format = format_of(&headers, &text);
    if let Some(id) = &q.id {
        check_id("estate id", id)?;
    }
    let c = canonicalise(text, format).await?;
    let id = q.id.unwrap_or_else(|| slug(&c.estate.name));
    let policy = Policy::default();
    let meta = store::create_estate(
        &state.db,
        store::NewEstate {
            id: &id,
            name: &c.estate.name,
            document: &c.document,
            content_digest: &c.content_digest,
            policy: &to_json(&policy),
            policy_digest: &policy.digest(),
        },
        now_s(),
    )
    .await?;
    tracing::info!(estate = %id, by = %p.subject, services = c.estate.services.len(), "estate created");
    Ok((StatusCode::CREATED, Json(summary(&meta, &c.estate))).into_response())
}

fn summary(meta: &store::EstateMeta, e: &Estate) -> berth_api::EstateSummary {
    berth_api::EstateSummary {
        meta: api_meta(meta),
        // How recently anything was observed: the pages warn when even
        // this is past the reported window (`stale_since` on GET).
        newest_observation: e.newest_observation().map(estate::format_time),
        stale_since: None,
        counts: berth_api::Counts {
            sites: e.sites.len() as u64,
            clusters: e.clusters.len() as u64,
            links: e.links.len() as u64,
            paths: e.paths.len() as u64,
            services: e.services.len() as u64,
            flows: e.flows.len() as u64,
        },
    }
}

async fn get_estate(
    State(state): State<AppState>,
    caller: Caller,
    Path(id): Path<String>,
) -> ApiResult<Json<Value>> {
    visible_estate(&state.db, &caller, &id).await?;
    let (meta, e, policy) = loaded_estate(&state.db, &state.cache, &id).await?;
    let mut s = summary(&meta, &e);
    // From this time on even the newest fact has outlived the measured and
    // reported windows: every fact of the estate is inferred or guessed,
    // so its agents have most likely stopped reporting.
    s.stale_since = Some(e.newest_observation().map(|t| {
        estate::format_time(t + policy.staleness.measured_s + policy.staleness.reported_s)
    }));
    Ok(Json(json!(s)))
}

async fn delete_estate(
    State(state): State<AppState>,
    caller: Caller,
    Path(id): Path<String>,
) -> ApiResult<StatusCode> {
    visible_estate(&state.db, &caller, &id).await?;
    if store::delete_estate(&state.db, &id).await? {
        tracing::info!(estate = %id, by = %caller.principal()?.subject, "estate deleted");
        Ok(StatusCode::NO_CONTENT)
    } else {
        Err(ApiError::NotFound(format!("no estate {id:?}")))
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ExportQuery {
    format: Option<String>,
}

async fn export_file(
    State(state): State<AppState>,
    caller: Caller,
    Path(id): Path<String>,
    Query(q): Query<ExportQuery>,
) -> ApiResult<Response> {
    let meta = visible_estate(&state.db, &caller, &id).await?;
    // A whole estate file is a large answer: a few at once per caller,
    // each sent from one copy shared by every reader of that version, in
    // pieces, so a reader that stops reading holds kilobytes
    // (docs/security.md, limits).
    let permit = heavy_permit_per_caller(
        &state.heavy,
        &caller.principal()?.subject,
        "this estate file",
    )?;
    let (shared, keep) = shared_document(&state.heavy, &id, meta.version);
    let (text, version, digest) = match shared {
        Some(text) if q.format.as_deref() != Some("yaml") => {
            (text, meta.version, meta.content_digest.clone())
        }
        _ => {
            let row = store::estate_row(&state.db, &id)
                .await?
                .ok_or_else(|| ApiError::NotFound(format!("no estate {id:?}")))?;
            let version = row.meta.version;
            let digest = row.meta.content_digest.clone();
            let text = if version == meta.version {
                keep(row.document)
            } else {
                std::sync::Arc::new(row.document)
            };
            (text, version, digest)
        }
    };
    let etag = format!("\"{version}-{digest}\"");
    let (ct, body) = match q.format.as_deref() {
        // The stored document exactly: re-printing it through a parsed
        // value could move a number by one unit in the last place.
        None | Some("json") => ("application/json", text),
        Some("yaml") => {
            let doc: Value = serde_json::from_str(&text)
                .map_err(|e| ApiError::Internal(format!("stored document of {id}: {e}")))?;
            drop(text);
            (
                "application/yaml",
                std::sync::Arc::new(
                    serde_yaml::to_string(&doc).map_err(|e| ApiError::Internal(e.to_string()))?,
                ),
            )
        }
        Some(other) => {
            return Err(ApiError::bad_request(format!(
                "format={other:?}: expected json or yaml"
            )))
        }
    };
    Ok((
        [(header::CONTENT_TYPE, ct.to_string()), (header::ETAG, etag)],
        Body::new(SharedBody::new(body, Some(permit))),
    )
        .into_response())
}

async fn import_file(
    State(state): State<AppState>,
    caller: Caller,
    Path(id): Path<String>,
    headers: HeaderMap,
    body: Body,
) -> ApiResult<Json<berth_api::EstateSummary>> {
    let meta = visible_estate(&state.db, &caller, &id).await?;
    let _permit = heavy_permit(
        &state.heavy,
        &caller.principal()?.subject,
        "this estate upload",
    )?;
    let bytes = read_body(body, ESTATE_BODY_LIMIT).await?;
    let text = utf8(&bytes)?.to_string();
    let format = format_of(&headers, &text);
    let c = canonicalise(text, format).await?;
    // An import replaces whatever is there, so a concurrent change is
    // overwritten by design; the version check only keeps the bump exact.
    let mut expected = meta.version;
    // Who replaced the estate, in the audit trail (the Health page's
    // recent writes), in the same transaction as the write.
    let actor = caller.principal()?.subject.clone();
    let detail = serde_json::json!({
        "services": c.estate.services.len(),
        "clusters": c.estate.clusters.len(),
        "sites": c.estate.sites.len(),
        "flows": c.estate.flows.len(),
    })
    .to_string();
    for _ in 0..5 {
        let audit = store::NewAudit {
            estate: &id,
            actor: &actor,
            at: now_s(),
            action: "estate.uploaded",
            subject: "estate",
            reason: "",
            detail: &detail,
        };
        match store::replace_document(
            &state.db,
            &id,
            expected,
            store::NewDocument {
                name: &c.estate.name,
                document: &c.document,
                content_digest: &c.content_digest,
            },
            now_s(),
            Some(&audit),
        )
        .await?
        {
            Ok(meta) => {
                tracing::info!(estate = %id, version = meta.version, services = c.estate.services.len(), "estate imported");
                state.cache.put_estate(
                    &id,
                    meta.version,
                    &meta.content_digest,
                    Arc::new(c.estate.clone()),
                );
                return Ok(Json(summary(&meta, &c.estate)));
            }
            Err(store::Stale) => {
                expected = store::estate_meta(&state.db, &id)
                    .await?
                    .ok_or_else(|| {
                        ApiError::NotFound(format!("estate {id:?} was deleted meanwhile"))
                    })?
                    .version;
            }
        }
    }
    Err(ApiError::Conflict(format!(
        "estate {id:?} kept changing during the import; try again"
    )))
}

/// The estate file format of a body: the Content-Type if it says, else a
/// look at the text.
fn format_of(headers: &HeaderMap, text: &str) -> Format {
    let ct = headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("");
    if ct.contains("yaml") {
        Format::Yaml
    } else if ct.contains("json") {
        Format::Json
    } else {
        Format::sniff(text)
    }
}
#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slugs_are_valid_ids() {
        assert_eq!(
            slug("Acme Retail (sample estate)"),
            "acme-retail-sample-estate"
        );
        assert_eq!(slug("---"), "estate");
        for name in [
            "Acme Retail (sample estate)",
            "x",
            "Ünïcode only",
            &"a".repeat(100),
        ] {
            check_id("id", &slug(name)).unwrap();
        }
    }
}
