//! Which clusters each service may go to at all (static constraints only),
//! and, for a service with none, why — grouped by reason.

use super::*;

/// Per-service feasibility: the clusters it may go to (static constraints
/// only) and, if none, why.
pub struct Feasibility {
    pub candidates: Candidates,
    pub immovable: Vec<Immovable>,
}

pub fn feasibility(estate: &Estate) -> Feasibility {
    feasibility_with(estate, Cache::Shared)
}

/// [`feasibility`], with the candidate lists shared per constraint profile
/// or (`Cache::PerCandidate`, the reference) checked for every service and
/// cluster on their own.
pub fn feasibility_with(estate: &Estate, cache: Cache) -> Feasibility {
    let nc = estate.clusters.len();
    let mut candidates = Candidates::with_capacity(estate.services.len());
    let mut profiles = std::collections::BTreeMap::new();
    let mut immovable = Vec::new();
    for (si, s) in estate.services.iter().enumerate() {
        let here = &estate.clusters[s.cluster].id;
        if let Some(r) = constraints::immobility(estate, si) {
            candidates.push(None, s.cluster);
            immovable.push(Immovable {
                service: s.id.clone(),
                cluster: here.clone(),
                reasons: vec![Reason {
                    code: r.code(),
                    message: r.message(estate),
                    clusters: Vec::new(),
                }],
            });
            continue;
        }
        let allowed = |c: usize| constraints::statically_allowed(estate, si, c);
        let list = match cache {
            Cache::Shared => *profiles
                .entry(constraints::static_profile(estate, si))
                .or_insert_with(|| candidates.add_list((0..nc).filter(|&c| allowed(c)).collect())),
            Cache::PerCandidate => {
                candidates.add_list((0..nc).filter(|&c| c != s.cluster && allowed(c)).collect())
            }
        };
        candidates.push(Some(list), s.cluster);
        if candidates.of(si).is_empty() && nc > 1 {
            // Only now spell out why, cluster by cluster.
            let mut refused: Vec<(RefusalCode, usize)> = Vec::new();
            for c in (0..nc).filter(|&c| c != s.cluster) {
                refused.extend(constraints::static_refusal_codes(estate, si, c).map(|r| (r, c)));
            }
            immovable.push(Immovable {
                service: s.id.clone(),
                cluster: here.clone(),
                reasons: group_reasons(estate, refused),
            });
        }
    }
    Feasibility {
        candidates,
        immovable,
    }
}

/// Group refusals by code, listing the clusters each ruled out; ordered by
/// code, clusters in id order, the words of the first cluster only.
pub(super) fn group_reasons(
    estate: &Estate,
    mut refused: Vec<(RefusalCode, usize)>,
) -> Vec<Reason> {
    let id = |c: usize| &estate.clusters[c].id;
    refused.sort_by(|a, b| (a.0.code(), id(a.1)).cmp(&(b.0.code(), id(b.1))));
    let mut out: Vec<Reason> = Vec::new();
    for (r, c) in refused {
        match out.last_mut() {
            Some(last) if last.code == r.code() => last.clusters.push(id(c).clone()),
            _ => out.push(Reason {
                code: r.code(),
                message: r.message(estate),
                clusters: vec![id(c).clone()],
            }),
        }
    }
    out
}
