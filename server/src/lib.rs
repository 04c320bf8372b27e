//! The `berth` crate: everything that touches the outside world — files,
//! the clock, the database, HTTP. The pure engine (`berth-engine`) is fed
//! from here and never reaches out on its own.

pub mod import;
