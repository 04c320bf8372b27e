//! Round-trip time between two placements: the evidence ladder (SPEC §3).
//!
//! Best evidence first: same cluster, a measured path between the two
//! clusters, a link between their sites, same site, a great-circle
//! estimate from the sites' coordinates, and finally *unknown* (a
//! pessimistic default carried as a guess). Every RTT keeps the rung that
//! produced it and the confidence class that follows.

use serde::Serialize;

use crate::estate::Estate;
use crate::fact::{Class, Fact, FactRef};
use crate::policy::Policy;
use crate::rtt_reference::{GREAT_CIRCLE_BASE_MS, GREAT_CIRCLE_MS_PER_KM};

/// Mean Earth radius (IUGG), km.
const EARTH_RADIUS_KM: f64 = 6371.0;

/// Which rung of the ladder an RTT came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum Derivation {
    SameCluster,
    MeasuredPath,
    SiteLink,
    SameSite,
    GreatCircle,
    Unknown,
}

impl Derivation {
    pub fn as_str(self) -> &'static str {
        match self {
            Derivation::SameCluster => "same_cluster",
            Derivation::MeasuredPath => "measured_path",
            Derivation::SiteLink => "site_link",
            Derivation::SameSite => "same_site",
            Derivation::GreatCircle => "great_circle",
            Derivation::Unknown => "unknown",
        }
    }
}

/// Where an RTT's value came from, so it can be named as a deciding fact.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum RttSource {
    /// A nominal policy value or an estimate: no stored fact behind it.
    Nominal,
    /// `Estate::paths[i]`.
    Path(usize),
    /// `Estate::links[i]`.
    Link(usize),
}

#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Rtt {
    pub ms: f64,
    pub derivation: Derivation,
    /// Effective class at evaluation time.
    pub class: Class,
    pub source: RttSource,
}

/// The RTT between every ordered pair of clusters, resolved once per
/// evaluation. Symmetric; `n × n` entries, row-major.
#[derive(Clone, Debug)]
pub struct RttTable {
    n: usize,
    cells: Vec<Rtt>,
    /// The site-level rungs only (link, same site, great circle, unknown),
    /// `sites × sites`: what two sites are to each other regardless of any
    /// measured path between particular clusters.
    ns: usize,
    site_cells: Vec<Rtt>,
    /// `cells[i].ms` and `site_cells[i].ms` alone, densely: what the
    /// recommender's inner loops read (a quarter of the memory traffic).
    ms: Vec<f64>,
    site_ms: Vec<f64>,
}

impl RttTable {
    pub fn build(estate: &Estate, policy: &Policy, now: i64) -> RttTable {
        let n = estate.clusters.len();
        let ns = estate.sites.len();
        // Resolve site pairs first (links, same site, great circle, unknown).
        let mut site_cells = vec![None::<Rtt>; ns * ns];
        for (i, link) in estate.links.iter().enumerate() {
            if let Some(ms) = link.rtt_ms.value {
                let rtt = Rtt {
                    ms,
                    derivation: Derivation::SiteLink,
                    class: link.rtt_ms.class_at(now, policy),
                    source: RttSource::Link(i),
                };
                site_cells[link.a * ns + link.b] = Some(rtt);
                site_cells[link.b * ns + link.a] = Some(rtt);
            }
        }
        for a in 0..ns {
            for b in 0..ns {
                if site_cells[a * ns + b].is_some() {
                    continue;
                }
                site_cells[a * ns + b] = Some(if a == b {
                    Rtt {
                        ms: policy.rtt.same_site_ms,
                        derivation: Derivation::SameSite,
                        class: Class::Reported,
                        source: RttSource::Nominal,
                    }
                } else {
                    match (estate.sites[a].coords, estate.sites[b].coords) {
                        (Some(pa), Some(pb)) => Rtt {
                            ms: great_circle_rtt_ms(great_circle_km(pa, pb)),
                            derivation: Derivation::GreatCircle,
                            class: Class::Inferred,
                            source: RttSource::Nominal,
                        },
                        _ => Rtt {
                            ms: policy.rtt.unknown_ms,
                            derivation: Derivation::Unknown,
                            class: Class::Guessed,
                            source: RttSource::Nominal,
                        },
                    }
                });
            }
        }
        let mut cells = Vec::with_capacity(n * n);
        for a in 0..n {
            for b in 0..n {
                cells.push(if a == b {
                    // Measured, not reported: the nominal value is a fraction
                    // of a millisecond, so even a large relative error in it
                    // is negligible next to any inter-cluster RTT.
                    Rtt {
                        ms: policy.rtt.same_cluster_ms,
                        derivation: Derivation::SameCluster,
                        class: Class::Measured,
                        source: RttSource::Nominal,
                    }
                } else {
                    let (sa, sb) = (estate.clusters[a].site, estate.clusters[b].site);
                    site_cells[sa * ns + sb].expect("every site pair resolved")
                });
            }
        }
        // Measured paths are better evidence than anything site-level.
        for (i, path) in estate.paths.iter().enumerate() {
            if let Some(ms) = path.rtt_ms.value {
                let rtt = Rtt {
                    ms,
                    derivation: Derivation::MeasuredPath,
                    class: path.rtt_ms.class_at(now, policy),
                    source: RttSource::Path(i),
                };
                cells[path.a * n + path.b] = rtt;
                cells[path.b * n + path.a] = rtt;
            }
        }
        let site_cells: Vec<Rtt> = site_cells
            .into_iter()
            .map(|c| c.expect("every site pair resolved"))
            .collect();
        let ms = cells.iter().map(|c| c.ms).collect();
        let site_ms = site_cells.iter().map(|c| c.ms).collect();
        RttTable {
            n,
            cells,
            ns,
            site_cells,
            ms,
            site_ms,
        }
    }

    /// The site-level RTT between sites `a` and `b`.
    pub fn site(&self, a: usize, b: usize) -> &Rtt {
        &self.site_cells[a * self.ns + b]
    }

    /// The RTTs in ms from cluster `a` to every cluster, by index.
    #[inline]
    pub fn ms_from(&self, a: usize) -> &[f64] {
        &self.ms[a * self.n..(a + 1) * self.n]
    }

    /// The site-level RTTs in ms from site `a` to every site, by index.
    #[inline]
    pub fn site_ms_from(&self, a: usize) -> &[f64] {
        &self.site_ms[a * self.ns..(a + 1) * self.ns]
    }

    #[inline]
    pub fn get(&self, a: usize, b: usize) -> &Rtt {
        &self.cells[a * self.n + b]
    }

    /// The RTT between clusters `a` and `b` as a fact for explanations.
    pub fn fact_ref(&self, estate: &Estate, a: usize, b: usize, now: i64) -> FactRef {
        let rtt = self.get(a, b);
        let (x, y) = (a.min(b), a.max(b));
        let key = format!("rtt {}↔{}", estate.clusters[x].id, estate.clusters[y].id);
        let stored: Option<&Fact> = match rtt.source {
            RttSource::Nominal => None,
            RttSource::Path(i) => Some(&estate.paths[i].rtt_ms),
            RttSource::Link(i) => Some(&estate.links[i].rtt_ms),
        };
        let source_label = match rtt.derivation {
            Derivation::SameCluster | Derivation::SameSite => "policy nominal",
            Derivation::GreatCircle => "great-circle estimate",
            Derivation::Unknown => "policy default (nothing known)",
            _ => "",
        };
        FactRef {
            fact: key,
            value: Some(rtt.ms),
            class: rtt.class,
            stored_class: stored.map(|f| f.class).unwrap_or(rtt.class),
            source: stored
                .map(|f| f.source.clone())
                .unwrap_or_else(|| source_label.to_string()),
            age_s: stored.map(|f| f.age_s(now)).unwrap_or(0),
            derivation: Some(rtt.derivation.as_str()),
        }
    }
}

/// Great-circle distance in km (haversine), through `libm` so native and
/// WebAssembly builds agree to the last bit.
pub fn great_circle_km((lat1, lon1): (f64, f64), (lat2, lon2): (f64, f64)) -> f64 {
    let rad = core::f64::consts::PI / 180.0;
    let (p1, p2) = (lat1 * rad, lat2 * rad);
    let dp = (lat2 - lat1) * rad;
    let dl = (lon2 - lon1) * rad;
    let s1 = libm::sin(dp / 2.0);
    let s2 = libm::sin(dl / 2.0);
    let h = s1 * s1 + libm::cos(p1) * libm::cos(p2) * s2 * s2;
    2.0 * EARTH_RADIUS_KM * libm::asin(h.min(1.0).sqrt())
}

/// The calibrated estimate: `base + per_km × distance` (see
/// `docs/rtt-calibration.md` for the fit and its error table).
pub fn great_circle_rtt_ms(km: f64) -> f64 {
    GREAT_CIRCLE_BASE_MS + GREAT_CIRCLE_MS_PER_KM * km
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rtt_reference::REFERENCE_PAIRS;

    #[test]
    fn results_name_each_derivation_with_the_words_a_reader_knows() {
        let all = [
            Derivation::SameCluster,
            Derivation::MeasuredPath,
            Derivation::SiteLink,
            Derivation::SameSite,
            Derivation::GreatCircle,
            Derivation::Unknown,
        ];
        assert_eq!(all.map(Derivation::as_str), crate::fact::DERIVATION_WORDS);
    }

    #[test]
    fn haversine_matches_known_distance() {
        // Frankfurt–Paris is about 480 km as the crow flies.
        let d = great_circle_km((50.11, 8.68), (48.86, 2.35));
        assert!((d - 479.0).abs() < 5.0, "{d}");
    }

    /// The documented error of the estimator holds for the reference pairs
    /// it was fitted on: a regression guard for the constants.
    #[test]
    fn estimator_error_on_reference_pairs_is_bounded() {
        assert!(REFERENCE_PAIRS.len() >= 20);
        let mut abs_pct: Vec<f64> = REFERENCE_PAIRS
            .iter()
            .map(|p| {
                let est =
                    great_circle_rtt_ms(great_circle_km((p.a_lat, p.a_lon), (p.b_lat, p.b_lon)));
                (est - p.published_rtt_ms).abs() / p.published_rtt_ms
            })
            .collect();
        abs_pct.sort_by(f64::total_cmp);
        let median = abs_pct[abs_pct.len() / 2];
        assert!(median < 0.30, "median abs error {median}");
    }
}
