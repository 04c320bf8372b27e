//! Evidence and RTT: the round-trip time between two placements, best
//! evidence first (SPEC §3) — [`rtt`] walks the ladder, [`rtt_reference`]
//! holds the calibration data of its last, great-circle rung.

pub mod published_rtt;
pub mod rtt;
pub mod rtt_reference;
