//! Evidence and RTT: the round-trip time between two placements, best
//! evidence first (SPEC §3) — [`rtt`] walks the ladder, [`rtt_reference`]
//! holds the calibration data of its last, great-circle rung; [`inventory`]
//! counts what is known of an estate (facts by kind and class, stale and
//! unknown ones, traffic coverage) for the Health page.

pub mod inventory;
pub mod published_rtt;
pub mod rtt;
pub mod rtt_reference;
