//! Berth's engine: pure placement advice.
//!
//! Invariants (see ARCHITECTURE.md): no I/O, no async, no clock (`now` is
//! an argument), no hash-ordered iteration into results, transcendental
//! math through `libm`. The same input gives byte-identical output natively
//! and in WebAssembly.
//!
//! Start reading at [`advise::advise`]: feasibility ([`constraints`]) and
//! ranking ([`cost`]) meet in `advise::best_move`.

pub mod advise;
pub mod anneal;
pub mod bound;
pub mod candidates;
pub mod chars;
mod class;
pub mod constraints;
pub mod copies;
pub mod cost;
pub mod decider;
mod deltas;
pub mod estate;
pub mod export;
pub mod fact;
pub mod front;
pub mod gen;
pub mod group;
pub mod history;
pub mod json_shape;
pub mod k8s;
pub mod leaderboard;
mod load;
mod locate;
pub mod numfmt;
pub mod optimum;
pub mod outcome;
pub mod place;
pub mod plan;
pub mod policy;
pub mod proposal;
pub mod request;
pub mod review;
pub mod rtt;
pub mod rtt_reference;
#[cfg(feature = "schema")]
pub mod schema;
pub mod strict;
pub mod text;
pub mod whatif;
pub mod why;

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
