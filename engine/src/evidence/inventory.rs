//! What Berth knows of an estate, counted: every kind of fact with how
//! many are measured, reported, inferred or guessed at the evaluation
//! time, how many have aged out of their class (stale) and how many have
//! no value (unknown); the site pairs with no round trip at all; and whose
//! traffic has been observed. The Health page reads it to say where the
//! picture is thin and which agent or import would fill it.
//!
//! Pure: the estate, its policy and `now` in, counts out, in model order.

use crate::estate::Estate;
use crate::fact::{Class, Fact};
use crate::policy::Policy;

/// One kind of fact, counted.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct KindCount {
    /// What the facts are about, in words ("free capacity", …).
    pub kind: &'static str,
    pub total: usize,
    /// By class at `now`, after staleness (a fact without a value is
    /// `guessed` and also counted in `unknown`).
    pub measured: usize,
    pub reported: usize,
    pub inferred: usize,
    pub guessed: usize,
    /// With a value, but older than its class's window: counted at the
    /// class it has aged to.
    pub stale: usize,
    /// No value at all.
    pub unknown: usize,
    /// The age of the oldest fact with a value and a time, seconds.
    pub oldest_age_s: Option<i64>,
}

/// Whose traffic is known.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct TrafficCount {
    pub services: usize,
    /// Flows declared complete by the file (no coverage fact decides).
    pub declared: usize,
    /// Observed by a mesh import or an agent pass (a coverage fact with a
    /// value); `stale` of them older than their class's window.
    pub observed: usize,
    pub stale: usize,
    /// Never observed: no flow of theirs is known to be complete.
    pub unknown: usize,
}

/// The estate's facts, counted.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct Inventory {
    pub kinds: Vec<KindCount>,
    /// Pairs of distinct sites, and those with no round-trip fact between
    /// them (their round trip is a great-circle estimate, or unknown).
    pub site_pairs: usize,
    pub site_pairs_without_rtt: usize,
    pub traffic: TrafficCount,
}

/// Counts one kind by the engine's own rule ([`Fact::class_at`]), as
/// advice reads the facts and the Estate page marks them stale: a fact
/// without a time of its own is not aged (a bare number in a file carries
/// the file's time already, from the loader).
fn count<'a>(
    kind: &'static str,
    facts: impl Iterator<Item = &'a Fact>,
    policy: &Policy,
    now: i64,
) -> KindCount {
    let mut k = KindCount {
        kind,
        ..KindCount::default()
    };
    for f in facts {
        k.total += 1;
        let class = f.class_at(now, policy);
        match class {
            Class::Measured => k.measured += 1,
            Class::Reported => k.reported += 1,
            Class::Inferred => k.inferred += 1,
            Class::Guessed => k.guessed += 1,
        }
        if f.value.is_none() {
            k.unknown += 1;
            continue;
        }
        if class != f.class {
            k.stale += 1;
        }
        if f.observed_at.is_some() {
            let age = f.age_s(now);
            k.oldest_age_s = Some(k.oldest_age_s.map_or(age, |o| o.max(age)));
        }
    }
    k
}

/// Count the estate's facts at `now` under `policy`.
pub fn inventory(estate: &Estate, policy: &Policy, now: i64) -> Inventory {
    let kinds = vec![
        count(
            "free CPU",
            estate.clusters.iter().map(|c| &c.cpu_free),
            policy,
            now,
        ),
        count(
            "free memory",
            estate.clusters.iter().map(|c| &c.memory_free_gib),
            policy,
            now,
        ),
        count(
            "round trip between sites",
            estate.links.iter().map(|l| &l.rtt_ms),
            policy,
            now,
        ),
        count(
            "round trip between clusters",
            estate.paths.iter().map(|p| &p.rtt_ms),
            policy,
            now,
        ),
        count(
            "flow requests",
            estate.flows.iter().map(|f| &f.weight),
            policy,
            now,
        ),
        count(
            "flow MB/s",
            estate.flows.iter().map(|f| &f.mb_s),
            policy,
            now,
        ),
    ];
    let n = estate.sites.len();
    let site_pairs = n * n.saturating_sub(1) / 2;
    let mut linked: Vec<(usize, usize)> = estate
        .links
        .iter()
        .filter(|l| l.a != l.b && l.rtt_ms.value.is_some())
        .map(|l| (l.a.min(l.b), l.a.max(l.b)))
        .collect();
    linked.sort_unstable();
    linked.dedup();
    let mut traffic = TrafficCount {
        services: estate.services.len(),
        ..TrafficCount::default()
    };
    for s in 0..estate.services.len() {
        match estate.traffic_of(s) {
            None => traffic.declared += 1,
            Some(f) if f.value.is_none() => traffic.unknown += 1,
            Some(f) => {
                traffic.observed += 1;
                if f.class_at(now, policy) != f.class {
                    traffic.stale += 1;
                }
            }
        }
    }
    Inventory {
        kinds,
        site_pairs,
        site_pairs_without_rtt: site_pairs - linked.len().min(site_pairs),
        traffic,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::estate::{load, Format};

    const ESTATE: &str = r#"{
      "schema": 1, "name": "t", "observed_at": "2026-11-30T00:00:00Z",
      "sites": [{"id": "fra", "lat": 50.1, "lon": 8.7, "jurisdiction": "eu"}, {"id": "par", "lat": 48.9, "lon": 2.4, "jurisdiction": "eu"},
                {"id": "dub", "lat": 53.3, "lon": -6.3, "jurisdiction": "eu"}],
      "clusters": [
        {"id": "c1", "site": "fra", "tier": "prod", "trust_zone": "general", "health": "healthy", "cpu_total": 10, "memory_total_gib": 10,
         "cpu_free": {"value": 4, "class": "measured", "source": "agent", "observed_at": "2026-11-29T00:00:00Z"},
         "memory_free_gib": {"value": 4, "class": "reported", "source": "ops"}},
        {"id": "c2", "site": "par", "tier": "prod", "trust_zone": "general", "health": "healthy", "cpu_total": 10, "memory_total_gib": 10,
         "cpu_free": {"value": 4, "class": "measured", "source": "agent", "observed_at": "2026-11-30T00:00:00Z"},
         "memory_free_gib": {"value": null, "class": "guessed", "source": "nobody"}}
      ],
      "links": [{"a": "fra", "b": "par", "rtt_ms": {"value": 9, "class": "measured", "source": "agent"}}],
      "services": [
        {"id": "a", "cluster": "c1", "owner": "t", "cpu": 1, "memory_gib": 1, "traffic": "declared"},
        {"id": "b", "cluster": "c2", "owner": "t", "cpu": 1, "memory_gib": 1,
         "traffic": {"value": 600, "class": "measured", "source": "mesh", "observed_at": "2026-11-30T00:00:00Z"}},
        {"id": "c", "cluster": "c2", "owner": "t", "cpu": 1, "memory_gib": 1,
         "traffic": {"value": null, "class": "guessed", "source": "never observed"}}
      ],
      "flows": []
    }"#;

    #[test]
    fn counts_by_kind_with_stale_and_unknown() {
        let e = match load(ESTATE, Format::Json) {
            Ok(e) => e,
            Err(errs) => panic!("{errs:?}"),
        };
        let p = Policy::default();
        let now = crate::estate::parse_time("2026-11-30T00:10:00Z").unwrap();
        let inv = inventory(&e, &p, now);
        let cpu = &inv.kinds[0];
        assert_eq!((cpu.kind, cpu.total), ("free CPU", 2));
        // c1's CPU was measured a day ago: past the measured window, stale.
        assert_eq!(
            cpu.stale, 1,
            "{cpu:?}; measured window {}",
            p.staleness.measured_s
        );
        assert_eq!(cpu.measured, 1);
        assert_eq!(cpu.oldest_age_s, Some(24 * 3600 + 600));
        let mem = &inv.kinds[1];
        assert_eq!(
            (mem.total, mem.unknown, mem.reported, mem.guessed),
            (2, 1, 1, 1)
        );
        assert_eq!((inv.site_pairs, inv.site_pairs_without_rtt), (3, 2));
        assert_eq!(
            inv.traffic,
            TrafficCount {
                services: 3,
                declared: 1,
                observed: 1,
                stale: 0,
                unknown: 1
            }
        );
    }
}
