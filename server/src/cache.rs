//! Two small in-process caches: parsed estates by (estate, version,
//! content digest), at most 16; and finished result bodies by everything
//! that determines them (operation, estate, version, content digest,
//! policy digest, evaluation time, request body digest), bounded in bytes.
//!
//! Both keys include the estate version and content digest, which every
//! request reads from the database first, so a replica never serves a
//! result for an estate another replica has changed: a change elsewhere
//! simply misses here. The version alone would not do: an estate deleted
//! and created again under the same id starts again at version 1.

use std::collections::{BTreeMap, HashMap};
use std::hash::Hash;
use std::sync::{Arc, Mutex};

use axum::body::Bytes;
use berth_engine::Estate;

/// 256 MiB for finished results: every page of a few dozen estates at a
/// few evaluation times (results are tens of kB to a few MB), and a
/// bounded, stated share of a server's memory however many distinct
/// requests are made (`--result-cache-mib`).
pub const DEFAULT_RESULT_CACHE_BYTES: usize = 256 * 1024 * 1024;

/// A result larger than this share of the budget is not cached: one
/// entry could otherwise evict everything else, and a result that size
/// (an estate of tens of thousands of services evaluated at a new time)
/// is rarely asked for twice.
pub const MAX_ENTRY_SHARE: usize = 8;

/// Least-recently-used map bounded by a budget of weight (entries, or
/// bytes). `order` holds every key by the tick of its last use, so the
/// oldest is found in O(log n) however many entries there are.
struct Lru<K, V> {
    map: HashMap<K, (u64, V, usize)>,
    order: BTreeMap<u64, K>,
    tick: u64,
    used: usize,
    budget: usize,
    weigh: fn(&K, &V) -> usize,
}

impl<K: Hash + Eq + Clone, V: Clone> Lru<K, V> {
    /// At most `capacity` entries.
    fn counted(capacity: usize) -> Lru<K, V> {
        Lru::weighed(capacity, |_, _| 1)
    }

    /// At most `budget` of total weight.
    fn weighed(budget: usize, weigh: fn(&K, &V) -> usize) -> Lru<K, V> {
        Lru {
            map: HashMap::new(),
            order: BTreeMap::new(),
            tick: 0,
            used: 0,
            budget,
            weigh,
        }
    }

    fn get(&mut self, k: &K) -> Option<V> {
        self.tick += 1;
        let tick = self.tick;
        let (t, v, _) = self.map.get_mut(k)?;
        let key = self.order.remove(t).expect("every entry is in the order");
        *t = tick;
        self.order.insert(tick, key);
        Some(v.clone())
    }

    fn remove(&mut self, k: &K) {
        if let Some((t, _, w)) = self.map.remove(k) {
            self.order.remove(&t);
            self.used -= w;
        }
    }

    /// Insert, evicting the least recently used until it fits; an entry
    /// heavier than `max_weight` is not kept (and replaces nothing).
    fn insert(&mut self, k: K, v: V, max_weight: usize) -> bool {
        let w = (self.weigh)(&k, &v);
        if w > max_weight || w > self.budget {
            return false;
        }
        self.remove(&k);
        while self.used + w > self.budget {
            let Some((_, oldest)) = self.order.pop_first() else {
                break;
            };
            if let Some((_, _, ow)) = self.map.remove(&oldest) {
                self.used -= ow;
            }
        }
        self.tick += 1;
        self.order.insert(self.tick, k.clone());
        self.map.insert(k, (self.tick, v, w));
        self.used += w;
        true
    }
}

type EstateCache = Lru<(String, i64, String), Arc<Estate>>;

/// A cached result weighs its body and its key (the key holds digests and
/// a request body digest: a few hundred bytes), plus the bookkeeping of
/// one entry, so many tiny results still count.
// `&String`: the weighing function of a cache keyed by `String`.
#[allow(clippy::ptr_arg)]
fn result_weight(key: &String, body: &Bytes) -> usize {
    body.len() + key.len() + 64
}

#[derive(Clone)]
pub struct Cache {
    /// A 5,000-service estate parses to ~10 MB; 16 of them is a bounded
    /// ~160 MB for the busiest estates of a large installation.
    estates: Arc<Mutex<EstateCache>>,
    /// Result bodies, bounded in bytes (`DEFAULT_RESULT_CACHE_BYTES`).
    /// `Bytes`: a hit hands out the body by reference count, with no copy
    /// of what may be hundreds of kB.
    results: Arc<Mutex<Lru<String, Bytes>>>,
    /// Results heavier than this are served but not kept.
    max_entry: usize,
}

impl Default for Cache {
    fn default() -> Cache {
        Cache::new(DEFAULT_RESULT_CACHE_BYTES)
    }
}

impl Cache {
    /// Caches with `result_budget` bytes for results.
    pub fn new(result_budget: usize) -> Cache {
        Cache {
            estates: Arc::new(Mutex::new(Lru::counted(16))),
            results: Arc::new(Mutex::new(Lru::weighed(result_budget, result_weight))),
            max_entry: result_budget / MAX_ENTRY_SHARE,
        }
    }

    pub fn estate(&self, id: &str, version: i64, content_digest: &str) -> Option<Arc<Estate>> {
        self.estates.lock().expect("cache lock").get(&(
            id.to_string(),
            version,
            content_digest.to_string(),
        ))
    }

    pub fn put_estate(&self, id: &str, version: i64, content_digest: &str, e: Arc<Estate>) {
        self.estates.lock().expect("cache lock").insert(
            (id.to_string(), version, content_digest.to_string()),
            e,
            usize::MAX,
        );
    }

    pub fn result(&self, key: &str) -> Option<Bytes> {
        self.results
            .lock()
            .expect("cache lock")
            .get(&key.to_string())
    }

    /// Keep a result; says whether it was kept (too large ones are not).
    pub fn put_result(&self, key: String, body: Bytes) -> bool {
        self.results
            .lock()
            .expect("cache lock")
            .insert(key, body, self.max_entry)
    }

    /// Bytes held by cached results.
    pub fn result_bytes(&self) -> usize {
        self.results.lock().expect("cache lock").used
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lru_evicts_the_least_recently_used() {
        let mut l = Lru::counted(2);
        l.insert("a", 1, usize::MAX);
        l.insert("b", 2, usize::MAX);
        assert_eq!(l.get(&"a"), Some(1));
        l.insert("c", 3, usize::MAX);
        assert_eq!(l.get(&"b"), None, "b was least recently used");
        assert_eq!(l.get(&"a"), Some(1));
        assert_eq!(l.get(&"c"), Some(3));
    }

    #[test]
    fn results_are_bounded_in_bytes_and_large_ones_are_not_kept() {
        // 64 kB of results; one may weigh at most 8 kB.
        let budget = 64 * 1024;
        let c = Cache::new(budget);
        let body = |n: usize| Bytes::from(vec![b'x'; n]);
        // 100 results of 4 kB: 400 kB offered, never more than the budget
        // held, and the newest are the ones kept.
        for i in 0..100 {
            assert!(c.put_result(format!("k{i}"), body(4096)));
            assert!(
                c.result_bytes() <= budget,
                "{} > {budget}",
                c.result_bytes()
            );
        }
        assert!(c.result_bytes() > budget - 2 * 4096, "the budget is used");
        assert!(c.result("k0").is_none(), "the oldest went first");
        assert!(c.result("k99").is_some());
        // Reading one keeps it: it survives the next insertions.
        assert!(c.result("k90").is_some());
        for i in 100..110 {
            c.put_result(format!("k{i}"), body(4096));
        }
        assert!(c.result("k90").is_some());
        assert!(c.result("k91").is_none());
        // Above an eighth of the budget: served by the caller, not kept,
        // and nothing is evicted for it.
        let before = c.result_bytes();
        assert!(!c.put_result("big".into(), body(budget / 8 + 1)));
        assert!(c.result("big").is_none());
        assert_eq!(c.result_bytes(), before);
        // Replacing a key does not count it twice.
        c.put_result("k109".into(), body(10));
        let once = c.result_bytes();
        assert_eq!(once, before - 4096 + 10);
        c.put_result("k109".into(), body(10));
        assert_eq!(c.result_bytes(), once);
        assert_eq!(c.result("k109").unwrap().len(), 10);
    }
}
