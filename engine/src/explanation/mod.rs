//! Explanation: what a result means and what became of it.
//!
//! Why each move is recommended ([`why`]); what a user's own moves and
//! evacuations would change ([`whatif`]); whether an applied move did what
//! the advice said ([`outcome`]); review memory — whether a decision about
//! a recommendation still holds ([`review`]); and the advice's snapshots
//! read back as a series ([`history`]).

pub mod history;
pub mod outcome;
pub mod review;
pub mod whatif;
pub mod why;
