//! Random secrets, ids and API tokens, from the operating system's
//! random source. A leaf: it imports nothing of the crate.

/// 32 random bytes as hex: 256 bits, beyond guessing.
pub fn random_secret() -> String {
    let mut bytes = [0u8; 32];
    getrandom::fill(&mut bytes).expect("the operating system's random source works");
    hex::encode(bytes)
}

/// A short random id (12 hex digits) for naming rows such as tokens.
pub fn random_id() -> String {
    let mut bytes = [0u8; 6];
    getrandom::fill(&mut bytes).expect("the operating system's random source works");
    hex::encode(bytes)
}

/// Tokens as handed out: a recognisable prefix (so secret scanners and
/// people can tell what leaked) and 256 random bits.
pub fn new_token() -> String {
    format!("berth_{}", random_secret())
}

/// A fresh `webhook-id`: `msg_` + 32 hex digits (128 random bits), so ids
/// never repeat and a decider can use them to drop duplicates.
pub fn new_webhook_id() -> String {
    let mut bytes = [0u8; 16];
    getrandom::fill(&mut bytes).expect("the operating system's random source works");
    format!("msg_{}", hex::encode(bytes))
}
