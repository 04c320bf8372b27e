//! External deciders: everything about calling an HTTP decider an
//! administrator registered. [`forward`] is the one outbound call (address
//! policy in [`address`]).

pub mod address;
pub mod forward;
