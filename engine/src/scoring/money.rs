//! Traffic as money: what a placement's traffic between clusters costs a
//! month at the policy's transfer prices (`docs/advice.md` §1a).
//!
//! A reading, not a term of the cost: the advice weighs traffic between
//! sites through `cross_site_weight` (points per MB/s) and never reads
//! these dollars. An operator who wants money to count more raises that
//! weight.
//!
//! Each flow's MB/s (a policy assumption where unknown, as in the cost) is
//! priced by the class of the link between its two clusters:
//! `MB/s × SECONDS_PER_MONTH / 1000 × US$ per GB`. Flows are summed in id
//! order, so the figure is the same bits natively and in the browser.

use serde::Serialize;

use crate::advise::Advice;
use crate::estate::Estate;
use crate::policy::Policy;

/// Seconds in a month of 730 hours (8,760 h a year / 12): the month the
/// AWS and Google Cloud price calculators bill a resource running all
/// month.
pub const SECONDS_PER_MONTH: f64 = 730.0 * 3600.0;

/// Megabytes in a gigabyte: cloud price lists bill decimal GB of
/// traffic, and MB/s is decimal too (`docs/estate-format.md` §Units).
const MB_PER_GB: f64 = 1000.0;

/// Where the two ends of a flow sit, as price lists bill it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum LinkClass {
    /// One cluster: free.
    SameCluster,
    /// Two clusters of one site.
    SameSite,
    /// Two sites of one jurisdiction.
    SameJurisdiction,
    /// Two sites of different jurisdictions.
    AcrossJurisdictions,
}

impl LinkClass {
    /// US$ per GB of traffic on a link of this class.
    pub fn usd_per_gb(self, policy: &Policy) -> f64 {
        let p = &policy.transfer_price;
        match self {
            LinkClass::SameCluster => 0.0,
            LinkClass::SameSite => p.same_site_usd_per_gb,
            LinkClass::SameJurisdiction => p.same_jurisdiction_usd_per_gb,
            LinkClass::AcrossJurisdictions => p.across_jurisdictions_usd_per_gb,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            LinkClass::SameCluster => "same cluster",
            LinkClass::SameSite => "same site",
            LinkClass::SameJurisdiction => "same jurisdiction",
            LinkClass::AcrossJurisdictions => "across jurisdictions",
        }
    }
}

/// The class of the link between clusters `a` and `b` (indices).
pub fn link_class(estate: &Estate, a: usize, b: usize) -> LinkClass {
    if a == b {
        return LinkClass::SameCluster;
    }
    let (sa, sb) = (estate.clusters[a].site, estate.clusters[b].site);
    if sa == sb {
        LinkClass::SameSite
    } else if estate.sites[sa].jurisdiction == estate.sites[sb].jurisdiction {
        LinkClass::SameJurisdiction
    } else {
        LinkClass::AcrossJurisdictions
    }
}

/// US$ a month for `mb_s` MB/s sustained all month at `usd_per_gb`.
pub fn usd_per_month(mb_s: f64, usd_per_gb: f64) -> f64 {
    mb_s * SECONDS_PER_MONTH / MB_PER_GB * usd_per_gb
}

/// A placement's traffic between clusters.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize)]
pub struct Transfer {
    /// MB/s between different sites (as `Totals::cross_site_mb_s`).
    pub cross_site_mb_s: f64,
    /// US$ a month for all traffic between different clusters.
    pub usd_month: f64,
}

/// The traffic of `placement` (a cluster index per service).
pub fn transfer(estate: &Estate, policy: &Policy, placement: &[usize]) -> Transfer {
    let mut t = Transfer::default();
    for f in &estate.flows {
        let (a, b) = (placement[f.from], placement[f.to]);
        let class = link_class(estate, a, b);
        if class == LinkClass::SameCluster {
            continue;
        }
        let mb_s = f.mb_s.value.unwrap_or(policy.unknown_flow.mb_s);
        if estate.clusters[a].site != estate.clusters[b].site {
            t.cross_site_mb_s += mb_s;
        }
        t.usd_month += usd_per_month(mb_s, class.usd_per_gb(policy));
    }
    t
}

/// What one move saves: positive when it cuts traffic or money.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize)]
pub struct Saving {
    pub cross_site_mb_s: f64,
    pub usd_month: f64,
}

/// An advice's traffic before and after its recommended moves, and what
/// each move saves (aligned with `advice.moves`).
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct Money {
    pub before: Transfer,
    pub after: Transfer,
    /// Per move, from the placement of the recommended moves before it; a
    /// move resting on guesses is counted here but not applied (as its
    /// gain is not part of `totals_after`).
    pub moves: Vec<Saving>,
}

impl Money {
    /// What the recommended moves save together.
    pub fn saving(&self) -> Saving {
        Saving {
            cross_site_mb_s: self.before.cross_site_mb_s - self.after.cross_site_mb_s,
            usd_month: self.before.usd_month - self.after.usd_month,
        }
    }

    /// The sum of the savings of moves `members` (indices into
    /// `advice.moves`), in order: a step's saving.
    pub fn of_moves(&self, members: &[usize]) -> Saving {
        members
            .iter()
            .filter_map(|&i| self.moves.get(i))
            .fold(Saving::default(), |s, m| Saving {
                cross_site_mb_s: s.cross_site_mb_s + m.cross_site_mb_s,
                usd_month: s.usd_month + m.usd_month,
            })
    }
}

/// The money reading of `advice` for the estate and policy it was
/// computed from. A move naming a service or cluster the estate does not
/// have (never, for advice of this estate) saves nothing.
pub fn of_advice(estate: &Estate, policy: &Policy, advice: &Advice) -> Money {
    let mut placement: Vec<usize> = estate.services.iter().map(|s| s.cluster).collect();
    let before = transfer(estate, policy, &placement);
    let mut current = before;
    let mut moves = Vec::with_capacity(advice.moves.len());
    for m in &advice.moves {
        let (Some(s), Some(to)) = (
            estate.service_index(&m.service),
            estate.cluster_index(&m.to),
        ) else {
            moves.push(Saving::default());
            continue;
        };
        let from = placement[s];
        placement[s] = to;
        let after = transfer(estate, policy, &placement);
        moves.push(Saving {
            cross_site_mb_s: current.cross_site_mb_s - after.cross_site_mb_s,
            usd_month: current.usd_month - after.usd_month,
        });
        if m.is_recommended() {
            current = after;
        } else {
            placement[s] = from;
        }
    }
    Money {
        before,
        after: current,
        moves,
    }
}

/// Traffic before and after moving each `(service id, cluster id)` in
/// order (a what-if's moves). Ids the estate does not have are skipped.
pub fn of_placement_change(
    estate: &Estate,
    policy: &Policy,
    moves: &[(&str, &str)],
) -> (Transfer, Transfer) {
    let mut placement: Vec<usize> = estate.services.iter().map(|s| s.cluster).collect();
    let before = transfer(estate, policy, &placement);
    for (service, to) in moves {
        if let (Some(s), Some(c)) = (estate.service_index(service), estate.cluster_index(to)) {
            placement[s] = c;
        }
    }
    (before, transfer(estate, policy, &placement))
}

/// `$1,234/month`: whole dollars with thousands separators, the sign
/// left to the words around it (`abs` is taken). Under $1 reads `<$1`
/// unless exactly 0, so a real but small cost never reads as none.
pub fn dollars_month(usd: f64) -> String {
    let v = usd.abs();
    if v > 0.0 && v < 0.5 {
        return "<$1/month".into();
    }
    let whole = format!("{:.0}", v);
    let mut grouped = String::new();
    for (i, ch) in whole.chars().enumerate() {
        if i > 0 && (whole.len() - i) % 3 == 0 {
            grouped.push(',');
        }
        grouped.push(ch);
    }
    format!("${grouped}/month")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::estate::{load, Format};

    fn estate() -> Estate {
        let text = r#"{"schema": 1, "name": "m",
          "sites": [
            {"id": "fra", "jurisdiction": "eu"},
            {"id": "par", "jurisdiction": "eu"},
            {"id": "iad", "jurisdiction": "us"}],
          "clusters": [
            {"id": "f1", "site": "fra", "tier": "prod", "trust_zone": "g", "health": "healthy", "cpu_total": 10, "memory_total_gib": 10, "cpu_free": 9, "memory_free_gib": 9},
            {"id": "f2", "site": "fra", "tier": "prod", "trust_zone": "g", "health": "healthy", "cpu_total": 10, "memory_total_gib": 10, "cpu_free": 9, "memory_free_gib": 9},
            {"id": "p1", "site": "par", "tier": "prod", "trust_zone": "g", "health": "healthy", "cpu_total": 10, "memory_total_gib": 10, "cpu_free": 9, "memory_free_gib": 9},
            {"id": "i1", "site": "iad", "tier": "prod", "trust_zone": "g", "health": "healthy", "cpu_total": 10, "memory_total_gib": 10, "cpu_free": 9, "memory_free_gib": 9}],
          "services": [
            {"id": "a", "cluster": "f1", "owner": "t", "cpu": 1, "memory_gib": 1},
            {"id": "b", "cluster": "f2", "owner": "t", "cpu": 1, "memory_gib": 1},
            {"id": "c", "cluster": "p1", "owner": "t", "cpu": 1, "memory_gib": 1},
            {"id": "d", "cluster": "i1", "owner": "t", "cpu": 1, "memory_gib": 1},
            {"id": "e", "cluster": "f1", "owner": "t", "cpu": 1, "memory_gib": 1}],
          "flows": [
            {"from": "a", "to": "b", "weight": 1, "mb_s": 1},
            {"from": "a", "to": "c", "weight": 1, "mb_s": 2},
            {"from": "a", "to": "d", "weight": 1, "mb_s": 3},
            {"from": "a", "to": "e", "weight": 1, "mb_s": 100},
            {"from": "b", "to": "d", "weight": 1}]}"#;
        load(text, Format::Json).expect("estate loads")
    }

    #[test]
    fn each_link_class_is_priced_by_its_own_field() {
        let e = estate();
        let c = |id: &str| e.cluster_index(id).unwrap();
        assert_eq!(link_class(&e, c("f1"), c("f1")), LinkClass::SameCluster);
        assert_eq!(link_class(&e, c("f1"), c("f2")), LinkClass::SameSite);
        assert_eq!(
            link_class(&e, c("f1"), c("p1")),
            LinkClass::SameJurisdiction
        );
        assert_eq!(
            link_class(&e, c("p1"), c("i1")),
            LinkClass::AcrossJurisdictions
        );
        let mut p = Policy::default();
        p.transfer_price.same_site_usd_per_gb = 1.0;
        p.transfer_price.same_jurisdiction_usd_per_gb = 10.0;
        p.transfer_price.across_jurisdictions_usd_per_gb = 100.0;
        let placement: Vec<usize> = e.services.iter().map(|s| s.cluster).collect();
        let t = transfer(&e, &p, &placement);
        // a→b 1 MB/s same site, a→c 2 same jurisdiction, a→d 3 across,
        // a→e 100 in one cluster (free, not cross-site), b→d unknown:
        // the policy's assumed MB/s, across.
        let assumed = p.unknown_flow.mb_s;
        let gb = SECONDS_PER_MONTH / 1000.0;
        assert_eq!(t.cross_site_mb_s, 2.0 + 3.0 + assumed);
        let want = 1.0 * gb * 1.0 + 2.0 * gb * 10.0 + 3.0 * gb * 100.0 + assumed * gb * 100.0;
        assert!(
            (t.usd_month - want).abs() < 1e-6 * want,
            "{} vs {want}",
            t.usd_month
        );
    }

    #[test]
    fn the_month_is_730_hours_and_a_gb_is_1000_mb() {
        // 1 MB/s all month = 2,628 GB; at $0.02/GB that is $52.56.
        assert_eq!(SECONDS_PER_MONTH, 2_628_000.0);
        assert!((usd_per_month(1.0, 0.02) - 52.56).abs() < 1e-9);
        assert_eq!(dollars_month(52.56), "$53/month");
        assert_eq!(dollars_month(-1234.4), "$1,234/month");
        assert_eq!(dollars_month(0.2), "<$1/month");
        assert_eq!(dollars_month(0.0), "$0/month");
        assert_eq!(dollars_month(1_234_567.0), "$1,234,567/month");
    }

    const SAMPLE: &str = include_str!("../../../examples/estates/sample.json");
    /// The sample's evaluation time, 2026-11-30T04:05:00Z.
    const NOW: i64 = crate::gen::NOW;

    fn sample() -> Estate {
        load(SAMPLE, Format::Json).expect("sample loads")
    }

    #[test]
    fn advice_savings_add_up_to_before_minus_after() {
        let e = sample();
        let p = Policy::default();
        let a = crate::advise(&e, &p, NOW);
        let m = of_advice(&e, &p, &a);
        assert!(!a.moves.is_empty());
        // Same cross-site MB/s as the cost's totals, before and after.
        assert!((m.before.cross_site_mb_s - a.totals_before.cross_site_mb_s).abs() < 1e-9);
        assert!((m.after.cross_site_mb_s - a.totals_after.cross_site_mb_s).abs() < 1e-9);
        let recommended: Vec<usize> = (0..a.moves.len())
            .filter(|&i| a.moves[i].is_recommended())
            .collect();
        let sum = m.of_moves(&recommended);
        assert!((sum.usd_month - m.saving().usd_month).abs() < 1e-6);
        assert!(m.saving().usd_month > 0.0, "{:?}", m.saving());
        // Deterministic: the same bits twice.
        assert_eq!(
            serde_json::to_string(&m).unwrap(),
            serde_json::to_string(&of_advice(&e, &p, &a)).unwrap()
        );
    }

    #[test]
    fn prices_of_zero_read_zero_and_the_advice_does_not_read_them() {
        let e = sample();
        let mut p = Policy::default();
        let a = crate::advise(&e, &p, NOW);
        p.transfer_price.same_site_usd_per_gb = 0.0;
        p.transfer_price.same_jurisdiction_usd_per_gb = 0.0;
        p.transfer_price.across_jurisdictions_usd_per_gb = 0.0;
        assert_eq!(of_advice(&e, &p, &a).before.usd_month, 0.0);
        // A display only: the moves do not change with the prices.
        p.transfer_price.across_jurisdictions_usd_per_gb = 500.0;
        assert_eq!(crate::advise(&e, &p, NOW).moves, a.moves);
        // …nor any result that names the policy's digest: left out of it.
        assert_eq!(p.digest(), Policy::default().digest());
        p.cross_site_weight = 9.0;
        assert_ne!(p.digest(), Policy::default().digest());
    }
}
