//! The published schemas of the engine's results (feature `schema`): the
//! server's `docs/api.openapi.json` derives them from the very types the
//! engine serialises (`server/src/http/openapi.rs`), so a member added,
//! renamed or made optional here is in the contract without a second
//! edit. Descriptions are the types' doc comments.
//!
//! Pure like the rest of the engine; never compiled into the browser.

use schemars::{JsonSchema, SchemaGenerator};

use crate::advise::Advice;
use crate::why::MoveWhy;

/// The advice (`docs/advice.md` §6): the estate's cost before and after,
/// the recommended moves in order with their terms and facts, and what
/// could not be moved or told. With `why=true` (`berth advise --why`),
/// every move explained too.
#[derive(JsonSchema)]
#[schemars(rename = "Advice")]
#[allow(dead_code)] // only its schema is used
struct AdviceAnswer {
    #[serde(flatten)]
    advice: Advice,
    /// Only with `why=true`: one explanation per move, aligned with
    /// `moves` (`docs/why.md` §1).
    #[serde(skip_serializing_if = "Option::is_none")]
    why: Option<Vec<MoveWhy>>,
}

/// Every result schema the API publishes, into `generator`'s definitions
/// (with the names the API's words refer to).
pub fn register(generator: &mut SchemaGenerator) {
    let _ = generator.subschema_for::<AdviceAnswer>();
    let _ = generator.subschema_for::<crate::plan::Plan>();
    let _ = generator.subschema_for::<crate::request::DeciderRequest>();
    let _ = generator.subschema_for::<crate::place::Placement>();
    let _ = generator.subschema_for::<crate::whatif::Projection>();
    let _ = generator.subschema_for::<crate::decider::Comparison>();
    let _ = generator.subschema_for::<crate::decider::DeciderEntry>();
    let _ = generator.subschema_for::<crate::leaderboard::Leaderboard>();
    let _ = generator.subschema_for::<crate::history::History>();
    let _ = generator.subschema_for::<crate::outcome::Report>();
}
