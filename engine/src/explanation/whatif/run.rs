//! The evolving placement of a projection: each step applied in turn —
//! moves checked against the constraints, evacuated services re-placed —
//! with what it recorded on the way.

use super::*;

/// The evolving placement of a projection and what it recorded.
pub(super) struct Run<'c, 'a> {
    pub(super) ctx: &'c Ctx<'a>,
    pub(super) state: State,
    /// Services on each cluster, built at the first evacuation.
    pub(super) members: Option<Vec<BTreeSet<usize>>>,
    /// Services of each owner, built at the first evacuation.
    pub(super) owners: Option<BTreeMap<&'a str, Vec<usize>>>,
    /// Step (1-based) that evacuated each cluster.
    pub(super) evacuated_at: Vec<Option<usize>>,
    /// Last step that moved each service, and where to.
    pub(super) moved: BTreeMap<usize, usize>,
    pub(super) moves: Vec<ProjectedMove>,
    pub(super) warnings: Vec<Warning>,
    pub(super) evacuations: Vec<Evacuation>,
}

impl Run<'_, '_> {
    pub(super) fn apply(&mut self, step: usize, service: usize, to: usize, by: By) {
        let estate = self.ctx.estate;
        let from = self.state.placement[service];
        if let Some(m) = &mut self.members {
            m[from].remove(&service);
            m[to].insert(service);
        }
        self.state.apply(self.ctx, service, to);
        self.moved.insert(service, step);
        self.moves.push(ProjectedMove {
            step,
            service: estate.services[service].id.clone(),
            from: estate.clusters[from].id.clone(),
            to: estate.clusters[to].id.clone(),
            by,
        });
    }

    pub(super) fn warn(
        &mut self,
        code: WarningCode,
        step: Option<usize>,
        service: Option<usize>,
        cluster: Option<usize>,
        message: String,
    ) {
        let e = self.ctx.estate;
        self.warnings.push(Warning {
            code,
            step,
            service: service.map(|s| e.services[s].id.clone()),
            cluster: cluster.map(|c| e.clusters[c].id.clone()),
            message,
        });
    }

    pub(super) fn do_move(&mut self, step: usize, s: usize, to: usize) {
        let e = self.ctx.estate;
        let (sid, cid) = (&e.services[s].id, &e.clusters[to].id);
        let from = self.state.placement[s];
        if from == to {
            self.warn(
                WarningCode::NoOp,
                Some(step),
                Some(s),
                Some(to),
                format!("step {step}: {sid} is already on {cid}; nothing moves"),
            );
            return;
        }
        if let Some(&earlier) = self.moved.get(&s) {
            self.warn(
                WarningCode::MovedAgain,
                Some(step),
                Some(s),
                Some(to),
                format!(
                    "step {step} moves {sid} again: step {earlier} already moved it to {}",
                    e.clusters[from].id
                ),
            );
        }
        if let Some(at) = self.evacuated_at[to] {
            self.warn(
                WarningCode::IntoEvacuated,
                Some(step),
                Some(s),
                Some(to),
                format!("step {step} moves {sid} onto {cid}, which step {at} evacuates"),
            );
        }
        let home = to == e.services[s].cluster;
        for r in constraints::static_refusal_codes(e, s, to) {
            // Going back home is not leaving.
            if home && r.is_immobility() {
                continue;
            }
            if let Some(code) = WarningCode::of_refusal(r.code()) {
                self.warn(
                    code,
                    Some(step),
                    Some(s),
                    Some(to),
                    format!("step {step} moves {sid} to {cid}, but {}", r.message(e)),
                );
            }
        }
        self.apply(step, s, to, By::Move);
    }

    pub(super) fn evacuate(&mut self, step: usize, c: usize) {
        let ctx = self.ctx;
        let e = ctx.estate;
        self.evacuated_at[c] = Some(step);
        let members = self.members.get_or_insert_with(|| {
            let mut m = vec![BTreeSet::new(); e.clusters.len()];
            for (s, &at) in self.state.placement.iter().enumerate() {
                m[at].insert(s);
            }
            m
        });
        let mut order: Vec<usize> = members[c].iter().copied().collect();
        // Largest known request first; an unknown request sorts after
        // every known one (its size can't be weighed against theirs).
        let size = |r: Option<f64>| r.unwrap_or(f64::NEG_INFINITY);
        order.sort_by(|&a, &b| {
            let (sa, sb) = (&e.services[a], &e.services[b]);
            size(sb.cpu)
                .total_cmp(&size(sa.cpu))
                .then(size(sb.memory_gib).total_cmp(&size(sa.memory_gib)))
                .then(a.cmp(&b))
        });
        let owners = self.owners.take().unwrap_or_else(|| {
            let mut o: BTreeMap<&str, Vec<usize>> = BTreeMap::new();
            for (i, s) in e.services.iter().enumerate() {
                o.entry(s.owner.as_str()).or_default().push(i);
            }
            o
        });
        let avoid: Vec<bool> = self.evacuated_at.iter().map(|a| a.is_some()).collect();
        let mut placed = Vec::new();
        let mut stuck = Vec::new();
        for s in order {
            let reasons = match constraints::immobility(e, s) {
                Some(r) => vec![Reason {
                    code: r.code(),
                    message: r.message(e),
                    clusters: Vec::new(),
                }],
                None => {
                    let same_owner = &owners[e.services[s].owner.as_str()];
                    let ranked = place::rank_with(ctx, &self.state, s, same_owner, &avoid);
                    if ranked[0].eligible {
                        let best = &ranked[0];
                        placed.push(Placed {
                            service: e.services[s].id.clone(),
                            to: best.cluster.clone(),
                            score: best.score,
                            terms: best.terms,
                            fit: best.fit,
                        });
                        self.apply(step, s, best.index, By::Evacuate);
                        continue;
                    }
                    let refused: Vec<(Refusal, String)> = ranked
                        .into_iter()
                        .filter(|cand| cand.index != c)
                        .flat_map(|cand| {
                            let id = cand.cluster;
                            cand.refusals.into_iter().map(move |r| (r, id.clone()))
                        })
                        .collect();
                    group_reasons(refused)
                }
            };
            let words: Vec<String> = reasons
                .iter()
                .map(|r| {
                    if r.clusters.is_empty() {
                        r.message.clone()
                    } else {
                        format!("{} on {}", r.code.as_str(), r.clusters.join(", "))
                    }
                })
                .collect();
            self.warn(
                WarningCode::CannotLeave,
                Some(step),
                Some(s),
                Some(c),
                format!(
                    "step {step}: {} cannot leave {}: {}",
                    e.services[s].id,
                    e.clusters[c].id,
                    words.join("; ")
                ),
            );
            stuck.push(Stuck {
                service: e.services[s].id.clone(),
                reasons,
            });
        }
        self.owners = Some(owners);
        self.evacuations.push(Evacuation {
            step,
            cluster: e.clusters[c].id.clone(),
            placed,
            stuck,
        });
    }
}

/// Group refusals by code, listing the clusters each ruled out; ordered by
/// code, clusters in id order, the message of the first cluster kept.
pub(super) fn group_reasons(mut refused: Vec<(Refusal, String)>) -> Vec<Reason> {
    refused.sort_by(|a, b| (a.0.code, &a.1).cmp(&(b.0.code, &b.1)));
    let mut out: Vec<Reason> = Vec::new();
    for (r, cluster) in refused {
        match out.last_mut() {
            Some(last) if last.code == r.code => last.clusters.push(cluster),
            _ => out.push(Reason {
                code: r.code,
                message: r.message,
                clusters: vec![cluster],
            }),
        }
    }
    out
}
