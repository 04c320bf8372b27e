//! One plan's run (`docs/advice.md` §6): the sequential search of
//! [`super`] with the compound steps its [`Search`] allows — at each step
//! the best single move, the rival group if any, then the chosen step's
//! moves recorded and the caches refreshed — until `max_moves` or no step
//! clears its bar.

use super::*;

/// One plan's advice, whether it searched for a group at any step, and
/// the estate's budgets.
pub(super) struct PlanRun {
    pub(super) advice: Advice,
    pub(super) searched: bool,
    pub(super) budgets: Budgets,
}

/// Scratch lists of one step, kept between steps to reuse their memory:
/// the services whose cache was touched, the clusters whose load changed
/// and the moves made (service, from, to).
pub(super) struct StepScratch {
    pub(super) touched: Vec<bool>,
    pub(super) loaded: Vec<usize>,
    pub(super) moved_now: Vec<(usize, usize, usize)>,
}

/// The step a plan takes next: its moves, its group kind when it is a
/// compound step, and the best single move it was taken over (when a
/// group won against one).
struct Step {
    members: Vec<(usize, usize)>,
    kind: Option<GroupKind>,
    over_single: Option<(usize, usize, f64)>,
}

/// A plan in progress: the placement so far, the moves made and every
/// cache the step search reads.
struct Planner<'a> {
    ctx: Ctx<'a>,
    cache: Cache,
    search: Search,
    feas: Feasibility,
    state: State,
    deltas: Deltas,
    prospects: Prospects,
    moved: Vec<bool>,
    moves: Vec<Move>,
    blocked: Vec<(f64, usize, usize)>,
    by_site: Vec<(f64, f64)>,
    hopeful: Vec<Hope>,
    scratch: StepScratch,
    unbacked_gain: f64,
    // Whether a group search ran (for `advise_with`), and the weighing
    // budget left: each step's weighing spends its search's work, and
    // once a step's weighing costs more than what is left the plan stops
    // weighing (`docs/advice.md` §6, "The weighing budget").
    searched: bool,
    weigh_left: u64,
}

pub(super) fn plan_run(
    estate: &Estate,
    policy: &Policy,
    now: i64,
    cache: Cache,
    search: Search,
) -> PlanRun {
    let ctx = Ctx::new(estate, policy, now);
    let feas = feasibility_with(estate, cache);
    let state = State::initial(estate);
    let totals_before = state.totals(&ctx);
    let n = estate.services.len();
    let mut deltas = match cache {
        Cache::Shared => Deltas::new(&ctx),
        Cache::PerCandidate => Deltas::exhaustive(&ctx),
    };
    for s in 0..n {
        deltas.refresh(&ctx, &state, feas.candidates.of(s), s);
    }
    let prospects = Prospects::new(&ctx, &state, &deltas);
    let budgets = Budgets::of(&ctx, &feas.candidates);
    let target: Option<Vec<usize>> = search.target.then(|| {
        let doms = anneal::domains_from(&ctx, &feas.candidates);
        anneal::local_search(&ctx, &doms, budgets.target, anneal::SEED, policy.max_moves).placement
    });
    let mut run = Planner {
        cache,
        search,
        state,
        deltas,
        prospects,
        moved: vec![false; n],
        moves: Vec::new(),
        blocked: Vec::new(),
        by_site: vec![(0.0, 0.0); estate.sites.len()],
        hopeful: Vec::new(),
        scratch: StepScratch {
            touched: vec![false; n],
            loaded: Vec::new(),
            moved_now: Vec::new(),
        },
        unbacked_gain: 0.0,
        searched: false,
        weigh_left: if search.weighed { budgets.weigh } else { 0 },
        ctx,
        feas,
    };
    while run.moves.len() < policy.max_moves {
        let single = run.best_single();
        let Some(step) = run.choose(single, target.as_deref()) else {
            break;
        };
        run.take(single, step);
    }
    let searched = run.searched;
    PlanRun {
        advice: run.finish(totals_before),
        searched,
        budgets,
    }
}

impl Planner<'_> {
    /// The best certified single move from the placement so far.
    fn best_single(&mut self) -> Option<(usize, usize, f64)> {
        match self.cache {
            Cache::Shared => best_move(
                &self.ctx,
                &self.state,
                &self.feas.candidates,
                &mut self.deltas,
                &mut self.prospects,
                &self.moved,
                &mut self.blocked,
                &mut self.by_site,
                &mut self.hopeful,
            ),
            Cache::PerCandidate => best_move_in_order(
                &self.ctx,
                &self.state,
                &self.feas.candidates,
                &self.deltas,
                &self.moved,
                &mut self.blocked,
                &mut self.by_site,
            ),
        }
    }

    /// The best group from the placement so far (`group::best`), with
    /// every cache it reads refreshed first.
    fn best_group(&mut self) -> Option<group::Found> {
        self.searched = true;
        self.prospects.refresh_all(
            &self.ctx,
            &self.state,
            &self.feas.candidates,
            &mut self.deltas,
            &self.moved,
        );
        let inputs = group::Inputs {
            candidates: &self.feas.candidates,
            deltas: &self.deltas,
            moved: &self.moved,
            blocked: &self.blocked,
            room: self.ctx.policy.max_moves - self.moves.len(),
            gather: self.search.gather,
        };
        group::best(&self.ctx, &mut self.state, &inputs)
    }

    /// The next step, given the best single move: the targeted plan's
    /// planned group first; on a weighed plan within its budget, a group
    /// that beats the single move; the single move; else, when no single
    /// move clears its bar, a group. `None` ends the plan.
    fn choose(
        &mut self,
        single: Option<(usize, usize, f64)>,
        target: Option<&[usize]>,
    ) -> Option<Step> {
        // On estates small enough, a group is also weighed against the best
        // single move at every step: a whole application may gain more
        // moved together than its members would each moved alone, and once
        // singles have scattered it inside its site it can no longer move
        // (each service moves once).
        // The targeted plan starts with the moves to the placement its
        // local search found, as one group, whatever the single moves:
        // that plan is weighed whole against the others (`advise_with`).
        let planned = match target {
            Some(target) if self.moves.is_empty() => planned_group(
                &self.ctx,
                &mut self.state,
                target,
                self.ctx.policy.max_moves,
            ),
            _ => None,
        };
        let rival = match single {
            _ if planned.is_some() => planned,
            Some((_, _, gain))
                if self.search.weighed
                    && self.weigh_left > 0
                    && spend(
                        &mut self.weigh_left,
                        group::search_work(&self.ctx, &self.moved, &self.feas.candidates),
                    ) =>
            {
                // Only blocked moves that gain more than the best single
                // move: those every scan order collects (no bound skips a
                // move above the final floor), so the shared and the
                // per-candidate caches see the same list; the others a
                // scan may or may not have met before it found the best.
                // (`best_group` refreshes the prospects first; the blocked
                // list is cut before it reads it.)
                self.blocked.retain(|&(g, _, _)| g > gain);
                self.best_group().filter(|found| {
                    found.gain > gain
                        && group::beats_alone(&self.ctx, &self.state, &self.feas.candidates, found)
                })
            }
            _ => None,
        };
        match (single, rival) {
            // When a group wins over a single move: that move's gain.
            (_, Some(found)) => Some(Step {
                members: found.members,
                kind: Some(found.kind),
                over_single: single,
            }),
            (Some((s, to, _)), None) => Some(Step {
                members: vec![(s, to)],
                kind: None,
                over_single: None,
            }),
            // No single move clears its bar: one step may move a small
            // group together (`group`), then singles resume. The group
            // search reads every cache.
            (None, None) => self.best_group().map(|found| Step {
                members: found.members,
                kind: Some(found.kind),
                over_single: None,
            }),
        }
    }

    /// A compound step's description, with why it was taken over the best
    /// single move when it was.
    fn describe(&mut self, step: &Step) -> Option<Group> {
        let estate = self.ctx.estate;
        step.kind.map(|kind| {
            let first = self.moves.len() + 1;
            let mut g = describe_group(&self.ctx, &mut self.state, kind, &step.members, first);
            if let Some((s, to, gain)) = step.over_single {
                let alone =
                    group::alone_best(&self.ctx, &self.state, &self.feas.candidates, &step.members);
                g.summary.push_str(&format!(
                    " Taken over the best single move ({} to {}, +{}): moved one at a time, each where it is best alone, the group's services would gain {}.",
                    estate.services[s].id,
                    estate.clusters[to].id,
                    constraints::round2(gain),
                    constraints::round2(alone)
                ));
            }
            g
        })
    }

    /// Record `step`'s moves and refresh the caches it changed. `single`
    /// is the best single move this step was chosen against.
    fn take(&mut self, single: Option<(usize, usize, f64)>, step: Step) {
        let estate = self.ctx.estate;
        let group = self.describe(&step);
        let members = &step.members;
        let group_evidence = group
            .as_ref()
            .and_then(|_| evidence_words(&group_facts(&self.ctx, &self.state, members)));
        // A step the evidence cannot back is listed apart ("Not enough
        // evidence to recommend") and is *not made*: the placement the
        // later steps start from, `totals_after` and the bound are those
        // of the recommended steps alone, so the headline is exactly what
        // taking the recommended moves gives (`docs/advice.md`, "Totals
        // are of what is recommended"). Its members are replayed on a copy.
        let backed = match (&group, members.as_slice()) {
            (Some(_), _) => group_evidence.is_none(),
            (None, &[(s, to)]) => {
                evidence_words(&cost::deciding_facts(&self.ctx, &self.state, s, to)).is_none()
            }
            (None, _) => unreachable!("a step without a group moves one service"),
        };
        let ctx = &self.ctx;
        let mut aside = (!backed).then(|| self.state.clone());
        for &(s, to) in members {
            let st: &mut State = aside.as_mut().unwrap_or(&mut self.state);
            let current_cost = st.current_cost(ctx, s);
            let terms = cost::move_terms(ctx, st, s, to);
            // A single move's terms replayed give the gain it was chosen
            // by (when a group won, `single` is the move it beat, not
            // one of its members).
            if let (None, Some((_, _, gain))) = (step.kind, single) {
                debug_assert_eq!(terms.gain(), gain);
            }
            let facts = cost::deciding_facts(ctx, st, s, to);
            let from = st.placement[s];
            let (bar, confidence, evidence) = match &group {
                Some(g) => (g.bar, g.confidence, group_evidence.clone()),
                None => (
                    cost::bar(ctx, current_cost),
                    cost::confidence(&facts),
                    evidence_words(&facts),
                ),
            };
            self.moves.push(Move {
                step: self.moves.len() + 1,
                service: estate.services[s].id.clone(),
                from: estate.clusters[from].id.clone(),
                to: estate.clusters[to].id.clone(),
                gain: terms.gain(),
                current_cost,
                bar,
                confidence,
                evidence,
                terms,
                facts,
                group: group.clone(),
            });
            st.apply(ctx, s, to);
            self.moved[s] = true;
            if backed {
                self.scratch.loaded.extend([from, to]);
                self.scratch.moved_now.push((s, from, to));
            } else {
                self.unbacked_gain += terms.gain();
            }
        }
        refresh_after_step(
            ctx,
            &self.state,
            self.cache,
            &self.feas.candidates,
            (&mut self.deltas, &mut self.prospects),
            &self.moved,
            &mut self.scratch,
        );
    }

    /// The plan's advice: totals after the recommended steps, the bound,
    /// what cannot be told and what is unknown.
    fn finish(mut self, totals_before: Totals) -> Advice {
        let (ctx, estate, policy) = (&self.ctx, self.ctx.estate, self.ctx.policy);
        let totals_after = self.state.totals(ctx);
        let copy = recommended_copy(&self.moves);
        let bound = Bound::new(
            bound::cost_at_least_within(
                ctx,
                &self.feas.candidates,
                policy.max_moves,
                Some(totals_after.cost + copy),
            ),
            totals_before.cost,
            totals_after.cost + copy,
        );
        let cant_tell = cant_tell(
            ctx,
            &self.state,
            &self.feas.candidates,
            &mut self.deltas,
            &mut self.prospects,
            &self.moved,
        );
        Advice {
            estate: estate.name.clone(),
            estate_version: crate::export::version(estate),
            policy_digest: policy.digest(),
            now: format_time(ctx.now),
            totals_before,
            totals_after,
            bound,
            moves: self.moves,
            unbacked_gain: self.unbacked_gain,
            immovable: self.feas.immovable,
            cant_tell,
            unknown_capacity: unknown_capacity(estate),
            unknown_requests: unknown_requests(estate),
        }
    }
}
