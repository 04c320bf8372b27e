//! Search: finding moves.
//!
//! The sequential advice ([`advise`]) with its compound steps ([`group`]);
//! the placement arithmetic it shares with the reference solvers
//! ([`anneal`], [`optimum`]); the single-service scorer ([`place`]); and the
//! deciders — what they are told ([`request`]), what they answer
//! ([`proposal`]), how their proposals are scored ([`decider`]) and ranked
//! over a suite of estates ([`leaderboard`]).
//!
//! Start reading at [`advise::advise`].

pub mod advise;
pub mod anneal;
pub mod decider;
pub mod group;
pub mod leaderboard;
pub mod optimum;
pub mod place;
pub mod proposal;
pub mod request;
