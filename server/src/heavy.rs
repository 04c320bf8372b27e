//! The bookkeeping behind `http::extract`'s heavy-request permits and
//! shared estate documents, one per application ([`crate::state::AppState`]
//! holds it): two servers in one process (the tests run many) never take
//! each other's places nor send each other's documents.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, Weak};

/// Heavy requests in service: in all, and by caller key.
#[derive(Default)]
pub struct HeavyCounts {
    pub total: usize,
    pub by_subject: HashMap<String, usize>,
}

/// Estate documents being sent, by (estate, version), held weakly: a copy
/// lives as long as one reader is being sent it.
pub type SharedDocs = HashMap<(String, i64), Weak<String>>;

/// One application's heavy requests and shared documents.
#[derive(Clone, Default)]
pub struct HeavyBook {
    pub counts: Arc<Mutex<HeavyCounts>>,
    pub docs: Arc<Mutex<SharedDocs>>,
}
