//! Cost and constraints: judging a placement.
//!
//! Feasibility first ([`constraints`]: hard rules, three-valued fit), then
//! the ranking ([`cost`]: the cost function and each term's formula). Built
//! on them: where each service may go at all ([`candidates`]), the cache of
//! each move's flow gains ([`deltas`]) and a proven lower bound on any
//! reachable cost ([`bound`]).
//!
//! Start reading at [`cost`]; every term's formula lives there.

pub mod bound;
pub mod candidates;
pub mod constraints;
pub mod cost;
pub(crate) mod deltas;
pub mod money;
