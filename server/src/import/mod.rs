//! Importers: descriptions of running services kept elsewhere (Kubernetes
//! manifests today) turned into estate entries, and merged into an estate
//! file. Pure functions of text and values — no I/O, no clock — so the
//! CLI, the server and tests share them.
//!
//! An importer produces an [`Imported`]: services keyed by a stable
//! provenance key, flows between those keys, and notes. [`merge`] then
//! writes them into an estate file (the JSON form of
//! `berth_engine::export::to_file`) for one target cluster, touching only
//! the entries an earlier import of that cluster wrote — told by their
//! `source` — and reports what changed. `docs/kubernetes-import.md` has
//! the rules.

pub mod capacity;
pub mod kubernetes;
pub mod mesh;
pub mod prometheus;
pub mod quantity;
pub mod rtt;
pub mod tree;

mod directory;
mod merge;
mod report;

pub use self::directory::Directory;
pub use self::merge::{merge, merge_loaded, MergeError, Merged};
pub use self::report::ReportText;

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;

use berth_engine::estate::TrafficDefault;
use berth_engine::{EstateError, Format};
use serde::Serialize;
use serde_json::{json, Map, Value};

/// One input text and the name it is reported under (usually its file
/// name).
#[derive(Clone, Copy, Debug)]
pub struct Input<'a> {
    pub name: &'a str,
    pub text: &'a str,
}

// The data an import reports (its errors, notes and the merge's report)
// is the API's: the server sends it and clients read it as these types.
pub use berth_api::{
    ChangedService as Changed, FlowRef, ImportError, ImportNote as Note,
    ImportNoteCode as NoteCode, ImportReport as Report, ImportServiceSummary as ServiceSummary,
};

/// One service as an importer saw it.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ImportedService {
    /// Unique within the import and stable across imports of the same
    /// source, e.g. `shop/Deployment/cart`; with the cluster it forms the
    /// entry's `source`.
    pub key: String,
    /// The id it gets unless that id is taken in the estate (see
    /// [`merge`]).
    pub id: String,
    /// From a label or the namespace; `None` = unknown.
    pub owner: Option<String>,
    /// Cores; `None` = unknown.
    pub cpu: Option<f64>,
    /// GiB; `None` = unknown.
    pub memory_gib: Option<f64>,
    /// GB of persistent data that is known (see the notes for data whose
    /// size is not).
    pub data_gb: f64,
    pub local_volumes: bool,
    pub pinned: bool,
    /// Facts the input could not tell because a kind they come from was
    /// not read (a Kubernetes API that refused to list it): estate field
    /// (`data_gb`, `constraints.local_volumes`) → why, e.g.
    /// "PersistentVolumeClaim not read (403: …)". Their values above are
    /// not facts: [`merge`] keeps what an earlier import wrote, and
    /// writes them unknown, with the reason, on a new entry.
    pub unread: BTreeMap<String, String>,
}

impl ImportedService {
    /// Neither pinned nor bound to local volumes.
    pub fn can_move(&self) -> bool {
        !self.pinned && !self.local_volumes
    }
}

/// A call edge between two imported services, by key.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize)]
pub struct ImportedFlow {
    pub from: String,
    pub to: String,
    /// The fact source written on the flow, e.g. `kubernetes:env/CART_ADDR`.
    pub source: String,
}

/// What an importer produced: services in key order, flows in (from, to)
/// order, notes, and what it skipped or left aside.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct Imported {
    /// Importer name: the `source` prefix of the entries it writes.
    pub importer: &'static str,
    pub services: Vec<ImportedService>,
    pub flows: Vec<ImportedFlow>,
    pub notes: Vec<Note>,
    /// Objects left out because they could not be understood (only with
    /// `skip_invalid`; otherwise these are errors).
    pub skipped: Vec<ImportError>,
    /// Keys of skipped services: they still exist, so a merge leaves
    /// their entries as they are rather than removing them.
    pub kept: Vec<String>,
    /// False when part of the input could not be read at all (a syntax
    /// error ends a file; an object without a kind or name): what is
    /// missing is unknown, so a merge removes nothing.
    pub complete: bool,
    /// Objects recognised and not imported, by kind.
    pub ignored: BTreeMap<String, usize>,
}

impl Imported {
    pub fn service(&self, id: &str) -> Option<&ImportedService> {
        self.services.iter().find(|s| s.id == id)
    }
}

/// The `source` an importer writes on a service it imported into
/// `cluster`: `<importer>:<cluster>/<key>`.
pub fn source_of(importer: &str, cluster: &str, key: &str) -> String {
    format!("{importer}:{cluster}/{key}")
}

/// The key of a service entry that `importer` wrote for `cluster`, read
/// back from its `source`; `None` for anything else. Keys have a fixed
/// number of `/`-separated parts that never contain `/` themselves
/// (Kubernetes namespaces, kinds and names cannot), so the cluster is
/// everything before them, whatever it contains.
fn owned_key<'a>(
    source: &'a str,
    importer: &str,
    cluster: &str,
    key_parts: usize,
) -> Option<&'a str> {
    let rest = source.strip_prefix(importer)?.strip_prefix(':')?;
    let mut cut = rest.len();
    for _ in 0..key_parts {
        cut = rest[..cut].rfind('/')?;
    }
    (&rest[..cut] == cluster).then(|| &rest[cut + 1..])
}

/// Parts of a key (`namespace/Kind/name`).
const KEY_PARTS: usize = 3;

/// What an unknown owner is written as (the estate requires an owner).
pub const UNKNOWN_OWNER: &str = "unknown";

fn split_key(key: &str) -> (&str, &str, &str) {
    let mut parts = key.splitn(3, '/');
    let ns = parts.next().unwrap_or("");
    let kind = parts.next().unwrap_or("");
    let name = parts.next().unwrap_or("");
    (ns, kind, name)
}

/// The estate's id rule: 1–128 characters, no whitespace or control
/// characters (`docs/estate-format.md`).
fn valid_id(s: &str) -> bool {
    !s.is_empty()
        && s.chars().count() <= 128
        && !s.chars().any(|c| c.is_whitespace() || c.is_control())
}

/// The estate fields of an import that may be unread
/// ([`ImportedService::unread`]).
pub const DATA_GB: &str = "data_gb";
pub const LOCAL_VOLUMES: &str = "constraints.local_volumes";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn owned_keys_are_read_from_the_right() {
        fn k<'a>(s: &'a str, c: &str) -> Option<&'a str> {
            owned_key(s, "kubernetes", c, KEY_PARTS)
        }
        assert_eq!(
            k("kubernetes:c-1/shop/Deployment/cart", "c-1"),
            Some("shop/Deployment/cart")
        );
        // A cluster id with slashes in it.
        assert_eq!(
            k("kubernetes:eu/c-1/shop/Deployment/cart", "eu/c-1"),
            Some("shop/Deployment/cart")
        );
        assert_eq!(k("kubernetes:eu/c-1/shop/Deployment/cart", "c-1"), None);
        assert_eq!(k("kubernetes:c-1/shop/Deployment/cart", "c-2"), None);
        assert_eq!(k("file", "c-1"), None);
        assert_eq!(k("kubernetes:c-1/cart", "c-1"), None);
        assert_eq!(k("mesh:c-1/shop/Deployment/cart", "c-1"), None);
    }
}
