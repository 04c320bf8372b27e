//! Berth's engine: pure placement advice.
//!
//! Invariants (see ARCHITECTURE.md): no I/O, no async, no clock (`now` is
//! an argument), no hash-ordered iteration into results, transcendental
//! math through `libm`. The same input gives byte-identical output natively
//! and in WebAssembly.
//!
//! The modules are grouped in folders by stage, in the order data flows:
//! [`model`] (the estate and its loading), [`evidence`] (RTT), [`scoring`]
//! (constraints and cost), [`search`] (advice, solvers, deciders),
//! [`explanation`] (Why, what-if, outcomes, review, history) and
//! [`formats`] (JSON, text, plans). Every module is also re-exported at the
//! root, so `berth_engine::why` and `crate::cost` name what they always did.
//!
//! Start reading at [`advise::advise`]: feasibility ([`constraints`]) and
//! ranking ([`cost`]) meet in `advise::best_move`.

pub mod evidence;
pub mod explanation;
pub mod formats;
pub mod model;
pub mod scoring;
pub mod search;

// Every module keeps its flat path (`berth_engine::why`, `crate::cost`, …):
// the folders group the code by stage, the paths callers name stay put.
pub use evidence::{published_rtt, rtt, rtt_reference};
pub use explanation::{history, outcome, review, whatif, why};
#[cfg(feature = "schema")]
pub use formats::schema;
pub use formats::{export, front, numfmt, plan, text};
pub use model::{accounts, chars, copies, estate, fact, gen, json_shape, k8s, policy, strict};
use model::{class, load, locate};
use scoring::deltas;
pub use scoring::{bound, candidates, constraints, cost, money};
pub use search::{advise, anneal, decider, group, leaderboard, optimum, place, proposal, request};

pub use advise::{advise, Advice};
pub use estate::{load, Estate, EstateError, Format};
pub use policy::Policy;
pub use why::{explain, MoveWhy};

/// Load, advise and serialise: the whole offline pipeline as one pure
/// function of text, the bytes [`front::advice`] writes.
pub fn advise_json(
    estate_text: &str,
    policy: &Policy,
    now: i64,
) -> Result<String, Vec<EstateError>> {
    let estate = load(estate_text, Format::sniff(estate_text))?;
    Ok(front::advice(&estate, policy, now))
}
