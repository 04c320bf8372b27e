//! Two small in-process caches: parsed estates by (estate, version,
//! content digest), and finished result bodies by everything that
//! determines them (operation, estate, version, content digest, policy
//! digest, evaluation time, request body digest).
//!
//! Both keys include the estate version and content digest, which every
//! request reads from the database first, so a replica never serves a
//! result for an estate another replica has changed: a change elsewhere
//! simply misses here. The version alone would not do: an estate deleted
//! and created again under the same id starts again at version 1.

use std::collections::HashMap;
use std::hash::Hash;
use std::sync::{Arc, Mutex};

use axum::body::Bytes;
use berth_engine::Estate;

/// Least-recently-used map. Eviction scans for the oldest entry, which at
/// these sizes (tens to hundreds of entries) costs less than keeping a
/// linked list in step.
struct Lru<K, V> {
    map: HashMap<K, (u64, V)>,
    tick: u64,
    capacity: usize,
}

impl<K: Hash + Eq + Clone, V: Clone> Lru<K, V> {
    fn new(capacity: usize) -> Lru<K, V> {
        Lru {
            map: HashMap::new(),
            tick: 0,
            capacity,
        }
    }

    fn get(&mut self, k: &K) -> Option<V> {
        self.tick += 1;
        let tick = self.tick;
        self.map.get_mut(k).map(|(t, v)| {
            *t = tick;
            v.clone()
        })
    }

    fn insert(&mut self, k: K, v: V) {
        self.tick += 1;
        if self.map.len() >= self.capacity && !self.map.contains_key(&k) {
            if let Some(oldest) = self
                .map
                .iter()
                .min_by_key(|(_, (t, _))| *t)
                .map(|(k, _)| k.clone())
            {
                self.map.remove(&oldest);
            }
        }
        self.map.insert(k, (self.tick, v));
    }
}

type EstateCache = Lru<(String, i64, String), Arc<Estate>>;

#[derive(Clone)]
pub struct Cache {
    /// A 5,000-service estate parses to ~10 MB; 16 of them is a bounded
    /// ~160 MB for the busiest estates of a large installation.
    estates: Arc<Mutex<EstateCache>>,
    /// Result bodies are tens of kB to a few MB; 512 covers every page of
    /// a few dozen estates at a few evaluation times.
    /// `Bytes`: a hit hands out the body by reference count, with no copy
    /// of what may be hundreds of kB.
    results: Arc<Mutex<Lru<String, Bytes>>>,
}

impl Default for Cache {
    fn default() -> Cache {
        Cache {
            estates: Arc::new(Mutex::new(Lru::new(16))),
            results: Arc::new(Mutex::new(Lru::new(512))),
        }
    }
}

impl Cache {
    pub fn estate(&self, id: &str, version: i64, content_digest: &str) -> Option<Arc<Estate>> {
        self.estates.lock().expect("cache lock").get(&(
            id.to_string(),
            version,
            content_digest.to_string(),
        ))
    }

    pub fn put_estate(&self, id: &str, version: i64, content_digest: &str, e: Arc<Estate>) {
        self.estates
            .lock()
            .expect("cache lock")
            .insert((id.to_string(), version, content_digest.to_string()), e);
    }

    pub fn result(&self, key: &str) -> Option<Bytes> {
        self.results
            .lock()
            .expect("cache lock")
            .get(&key.to_string())
    }

    pub fn put_result(&self, key: String, body: Bytes) {
        self.results.lock().expect("cache lock").insert(key, body);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lru_evicts_the_least_recently_used() {
        let mut l = Lru::new(2);
        l.insert("a", 1);
        l.insert("b", 2);
        assert_eq!(l.get(&"a"), Some(1));
        l.insert("c", 3);
        assert_eq!(l.get(&"b"), None, "b was least recently used");
        assert_eq!(l.get(&"a"), Some(1));
        assert_eq!(l.get(&"c"), Some(3));
    }
}
