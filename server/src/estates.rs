//! The estate service, below the HTTP handlers and the advice driver:
//! whether a caller may see an estate, the parsed estate at its current
//! version (from the cache or the database), canonicalising an estate
//! file, writing a changed document under the estate lock, and the
//! envelope and cache key of an engine result.
//!
//! Everything here answers in [`ApiError`], but nothing here knows a
//! route: `http/` calls it, and so does `external::driver`.

use std::sync::Arc;

use berth_engine::{estate, export, whatif, Estate, Format, Policy};
use serde_json::Value;

use crate::auth::Caller;
use crate::cache::Cache;
use crate::clock::now_s;
use crate::db::Db;
use crate::digest::sha256_hex;
use crate::error::{counted, ApiError, ApiResult};
use crate::store;

/// An estate's meta, if the caller may see it. (A token scoped to another
/// estate never gets here: `auth::require` refuses it with 403 first; the
/// check below is the second line of defence.)
pub async fn visible_estate(db: &Db, caller: &Caller, id: &str) -> ApiResult<store::EstateMeta> {
    let p = caller.principal()?;
    let missing = || ApiError::NotFound(format!("no estate {id:?}"));
    if !p.may_see_estate(id) {
        return Err(missing());
    }
    store::estate_meta(db, id).await?.ok_or_else(missing)
}

/// The parsed estate at a version, from the cache or the database.
pub async fn loaded_estate(
    db: &Db,
    cache: &Cache,
    id: &str,
) -> ApiResult<(store::EstateMeta, Arc<Estate>, Policy)> {
    let row = store::estate_row(db, id)
        .await?
        .ok_or_else(|| ApiError::NotFound(format!("no estate {id:?}")))?;
    let policy = Policy::from_json(&row.policy)
        .map_err(|e| ApiError::Internal(format!("stored policy of {id} invalid: {e:?}")))?;
    if let Some(e) = cache.estate(id, row.meta.version, &row.meta.content_digest) {
        return Ok((row.meta, e, policy));
    }
    let doc = row.document;
    let parsed = tokio::task::spawn_blocking(move || estate::load(&doc, Format::Json))
        .await
        .map_err(|e| ApiError::Internal(format!("estate parse task: {e}")))?
        .map_err(|e| ApiError::Internal(format!("stored estate {id} does not load: {e:?}")))?;
    let parsed = Arc::new(parsed);
    cache.put_estate(
        id,
        row.meta.version,
        &row.meta.content_digest,
        parsed.clone(),
    );
    Ok((row.meta, parsed, policy))
}

/// A parsed and canonicalised estate file.
pub struct Canonical {
    pub estate: Estate,
    pub document: String,
    pub content_digest: String,
}

pub async fn canonicalise(text: String, format: Format) -> ApiResult<Canonical> {
    tokio::task::spawn_blocking(move || {
        let first = estate::load(&text, format).map_err(|errs| invalid_estate(&errs))?;
        canonical(&text, first)
    })
    .await
    .map_err(|e| ApiError::Internal(format!("estate parse task: {e}")))?
}

/// The canonical form of an estate loaded from `text`: the document
/// written (once), the estate and its digest.
fn canonical(text: &str, first: Estate) -> ApiResult<Canonical> {
    let document = serde_json::to_string(&export::to_file(&first)).expect("export serialises");
    // The estate is what the stored document loads to, not what the
    // upload did: serde_json's float parsing may land one unit in the
    // last place away from a number's shortest printed form, so the two
    // can differ in the last bit. Every later load (another replica, a
    // browser with the snapshot) reads the document, so the digest and
    // the cached estate must come from it too. When the document is the
    // text `first` was loaded from, it is `first`: not loaded again.
    let e = if document == text {
        first
    } else {
        estate::load(&document, Format::Json).map_err(|errs| {
            ApiError::Internal(format!("canonical document does not load: {errs:?}"))
        })?
    };
    let content_digest = export::version(&e);
    Ok(Canonical {
        estate: e,
        document,
        content_digest,
    })
}

/// A changed estate document as the engine's loader checked it: the text
/// it read and the estate it read. What [`write_locked`] stores.
pub struct Checked {
    pub text: String,
    pub estate: Estate,
}

impl Checked {
    /// Serialise and load a changed document (once, off the async
    /// threads); its errors as the API reports an invalid estate.
    pub async fn load(doc: Value) -> ApiResult<Checked> {
        tokio::task::spawn_blocking(move || {
            let text = serde_json::to_string(&doc).expect("serialises");
            let estate = estate::load(&text, Format::Json).map_err(|errs| invalid_estate(&errs))?;
            Ok(Checked { text, estate })
        })
        .await
        .map_err(|e| ApiError::Internal(format!("estate parse task: {e}")))?
    }
}

/// Store a changed estate document under the lock the change was computed
/// under: canonicalise it, write it as the next version (with an
/// observation batch or an audit entry, if any, in the same transaction),
/// and cache the parsed estate. Facts, observations and Kubernetes imports
/// all end here (`changes.rs`).
pub async fn write_locked(
    cache: &Cache,
    lock: store::EstateLock<'_>,
    doc: Checked,
    batch: Option<store::NewBatch<'_>>,
    audit: Option<&store::NewAudit<'_>>,
) -> ApiResult<store::EstateMeta> {
    let c = tokio::task::spawn_blocking(move || canonical(&doc.text, doc.estate))
        .await
        .map_err(|e| ApiError::Internal(format!("estate parse task: {e}")))??;
    let meta = lock
        .replace_recording(
            &c.estate.name,
            &c.document,
            &c.content_digest,
            now_s(),
            batch,
            audit,
        )
        .await?;
    cache.put_estate(
        &meta.id,
        meta.version,
        &meta.content_digest,
        Arc::new(c.estate),
    );
    Ok(meta)
}

/// Estate validation errors as the API reports them: every error with its
/// JSON pointer, line and message.
pub fn invalid_estate(errors: &[berth_engine::EstateError]) -> ApiError {
    ApiError::invalid(
        format!(
            "invalid estate file: {}; nothing was written",
            counted(errors.len(), "error")
        ),
        error_items(errors),
    )
}

pub fn invalid_scenario(errors: &[whatif::ScenarioError]) -> ApiError {
    ApiError::invalid(
        format!("invalid scenario: {}", counted(errors.len(), "error")),
        error_items(errors),
    )
}

/// Estate (and scenario: the same type) errors as 422 items
/// `{path, line, message}`.
pub fn error_items(errors: &[berth_engine::EstateError]) -> Vec<berth_engine::front::ErrorItem> {
    berth_engine::front::error_items(errors)
}

/// The envelope every engine result travels in: what it was computed from.
pub fn envelope(meta: &store::EstateMeta, policy_digest: &str, now: i64, result: &str) -> String {
    // The digest of the exact result bytes: a browser running the same
    // engine compares its own result's digest with it (parity check).
    let result_digest = sha256_hex(result);
    berth_api::ResultEnvelope::write(
        &meta.id,
        meta.version,
        &meta.content_digest,
        policy_digest,
        &estate::format_time(now),
        &result_digest,
        result,
    )
}

/// Everything a cached result depends on. The content digest beside the
/// version: an estate deleted and created again restarts at version 1.
pub fn result_key(op: &str, meta: &store::EstateMeta, now: i64, extra: &str) -> String {
    format!(
        "{op}|{}|{}|{}|{}|{now}|{extra}",
        meta.id, meta.version, meta.content_digest, meta.policy_digest
    )
}
