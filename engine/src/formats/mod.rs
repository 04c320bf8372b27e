//! Formats: engine results as bytes for people and programs.
//!
//! The JSON front end, the one place results become bytes ([`front`]); the
//! estate back in its file format and its version digest ([`export`]); the
//! plain-text rendering ([`text`]) and the change plans with their Markdown
//! and manifests ([`plan`]); the number formatting they share ([`numfmt`]);
//! and, with feature `schema`, the published schemas of the results
//! ([`schema`]).

pub mod export;
pub mod front;
pub mod numfmt;
pub mod plan;
#[cfg(feature = "schema")]
pub mod schema;
pub mod text;
