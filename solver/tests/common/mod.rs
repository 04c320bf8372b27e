//! The engine's test helpers, shared as `engine/examples/medium.rs` shares
//! them: the generated estates the quality measurements search
//! (`trusted`), issue 18's medium estates (`medium`) and the engine's
//! exhaustive optimum (`exact`: branch-and-bound checked against plain
//! enumeration).
#![allow(dead_code)]

#[path = "../../../engine/tests/common/exact.rs"]
pub mod exact;
#[path = "../../../engine/tests/common/medium.rs"]
pub mod medium;
#[path = "../../../engine/tests/common/trusted.rs"]
pub mod trusted;
