//! Service-mesh metrics → flow observations. Pure: Prometheus query
//! responses (JSON values, as `/api/v1/query` answers them) in; flows
//! between estate services, with their weight and MB/s, and notes out. No
//! I/O and no clock: the HTTP client is `crate::prom_client`, the
//! submission `crate::submit`. `docs/observations.md` has the rules; the
//! meshes' metric and label names are in [`super::mesh`].
//!
//! Up to four instant queries, each grouped by the mesh's workload labels
//! (and its cluster labels, where it has them; [`read_clusters`]):
//!
//! - **rate**: requests per second on the edge;
//! - **duration**: the mean request duration in milliseconds;
//! - **bytes** (optional): bytes per second, both ways;
//! - **coverage** (optional): samples in the rate window of each edge's
//!   best-covered series, to tell a scrape gap (figures then *reported*).
//!
//! A flow's weight is the mean number of requests in flight on it
//! (`docs/advice.md` §1), which Little's law gives from what the mesh
//! counts: requests/s × mean duration in s. Its MB/s is bytes/s ÷ 10⁶
//! (`docs/estate-format.md`: MB = 10⁶ bytes).

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;

use berth_api::FactUpdate;
use serde::Serialize;
use serde_json::Value;

use berth_engine::json_shape::describe;

use super::mesh::{Labels, Mesh, Queries};
use super::Directory;

mod derive;
mod mapping;
mod response;
#[cfg(test)]
mod tests;

pub use self::derive::*;
pub use self::mapping::*;
pub use self::response::*;

/// What is read and how: the mesh, the labels its answers are grouped by,
/// and the queries run (the mesh's defaults unless overridden).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Reading {
    pub mesh: Mesh,
    pub labels: Labels,
    pub queries: Queries,
    /// The cluster labels were named (`--cluster-labels`), not the
    /// preset's default: a single cluster value is then kept and each end
    /// resolved in it ([`read_clusters`]).
    pub clusters_named: bool,
}

impl Reading {
    /// The mesh's own labels (its cluster labels included, where it has
    /// them) and default queries.
    pub fn new(mesh: Mesh) -> Reading {
        Reading::with_labels(mesh, mesh.default_labels())
    }

    /// The mesh's default queries over other labels.
    pub fn with_labels(mesh: Mesh, labels: Labels) -> Reading {
        Reading {
            queries: mesh.queries(&labels),
            mesh,
            labels,
            clusters_named: false,
        }
    }

    /// The queries this reading would run by default.
    pub fn defaults(&self) -> Queries {
        self.mesh.queries(&self.labels)
    }

    /// Warnings about the queries themselves (a custom query that counts
    /// both sides of every call).
    pub fn query_notes(&self) -> Vec<Note> {
        self.mesh
            .query_warnings(&self.queries, &self.defaults())
            .into_iter()
            .map(|message| Note {
                code: NoteCode::BothSides,
                message,
            })
            .collect()
    }
}

impl Default for Reading {
    fn default() -> Reading {
        Reading::new(Mesh::Istio)
    }
}

/// When the queries found nothing at all — no request rate and no bytes
/// for any edge — the Prometheus asked is almost certainly not the one
/// with the mesh's metrics, or the metrics are named otherwise: "0 flows"
/// would hide that. What to say instead: which metric (or query) was
/// looked for and what to check. `None` when something was found.
pub fn nothing_found(results: &Results, reading: &Reading) -> Option<String> {
    let bytes_empty = results.bytes.as_ref().is_none_or(|b| b.samples.is_empty());
    if !results.rate.samples.is_empty() || !bytes_empty {
        return None;
    }
    let mesh = reading.mesh;
    let looked_for = if reading.queries.rate == reading.defaults().rate {
        mesh.metric_names().to_string()
    } else {
        format!("the rate query {:?}", reading.queries.rate)
    };
    Some(format!(
        "no mesh metrics ({mesh}): {looked_for} gave no samples over the last {w}. Check {check}, that the mesh carried traffic in the last {w}, and, for a custom --query-rate, that it gives one sample per edge grouped by {by}",
        w = super::mesh::WINDOW,
        check = mesh.what_to_check(),
        by = reading.labels.group_by(),
    ))
}

/// Significant digits kept in a derived weight or MB/s. A measured fact is
/// trusted to ±5 % (`docs/advice.md` §2), so six digits lose nothing real
/// while keeping floating-point dust (14.200000000000001) out of estate
/// files and reports.
pub const SIGNIFICANT_DIGITS: usize = 6;

/// Bytes in a megabyte: the estate format's MB is 10⁶ bytes.
const BYTES_PER_MB: f64 = 1e6;

/// Milliseconds in a second: durations come in ms, Little's law wants s.
const MS_PER_S: f64 = 1000.0;
