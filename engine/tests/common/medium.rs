//! Issue 18's medium estates and their reference, shared by
//! `tests/quality.rs` (the targets, asserted) and `examples/medium.rs`
//! (the figures of `docs/quality.md`).

use berth_engine::cost::{self, Ctx, State};
use berth_engine::decider::{score, Decider, RawProposal};
use berth_engine::gen::{Shape, NOW};
use berth_engine::optimum::decider::Optimum;
use berth_engine::{Estate, Policy};

/// The sizes measured: services × clusters.
pub const SIZES: [(usize, usize); 3] = [(40, 8), (80, 10), (150, 12)];

/// The generated estate of `services` on `clusters` for `seed`, over 4–6
/// sites.
pub fn estate(seed: u64, services: usize, clusters: usize) -> Estate {
    super::trusted::trusted(&Shape {
        seed,
        services,
        clusters,
        sites: 4 + (seed % 3) as usize,
        extra_calls: 2.0,
    })
}

/// What the `optimum-capped` decider finds on an estate.
pub struct Reference {
    /// Its proposals' projected gain, scored like every decider's.
    pub gain: f64,
    /// The bar its moves, taken as one step, must clear against their
    /// current cost: below it no step of the advice may take them (the
    /// bars, SPEC §5), and the estate is left out of the shares.
    pub bar: f64,
    /// Its note: what it proved.
    pub note: String,
}

impl Reference {
    /// Whether the estate counts: something to gain, and the reference
    /// clears the bars as one step.
    pub fn counts(&self) -> bool {
        self.gain > 1e-6 && self.gain >= self.bar
    }
}

pub fn capped_reference(estate: &Estate, policy: &Policy) -> Reference {
    let request = berth_engine::request::build(estate, policy, NOW);
    let capped = Optimum {
        estate,
        policy,
        now: NOW,
        capped: true,
    };
    let decision = capped.decide_noted(&request);
    let ctx = Ctx::new(estate, policy, NOW);
    let moved: Vec<usize> = decision
        .proposals
        .iter()
        .filter_map(|p| estate.service_index(&p.service_id))
        .collect();
    let group_cost = berth_engine::group::current_cost(&ctx, &State::initial(estate), &moved);
    let raw: Vec<RawProposal> = decision
        .proposals
        .into_iter()
        .map(RawProposal::Valid)
        .collect();
    Reference {
        gain: score(estate, policy, NOW, &raw).projected_gain,
        // As one step, every moved service paying the absolute bar.
        bar: cost::step_bar(&ctx, group_cost, moved.len()),
        note: decision.note.unwrap_or_default(),
    }
}
