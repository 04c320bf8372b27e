//! Review memory's pure half: the stable identity of a recommendation,
//! and whether a recorded decision about it still holds.
//!
//! An operator's decision (planned, dismissed, snoozed) is stored by the
//! server against a recommendation's identity; every later evaluation
//! asks this module whether the recommendation stays hidden or comes back,
//! and why (`docs/reviews.md`).

use crate::advise::Move;

/// The stable identity of a recommendation: the service and its from → to
/// clusters, written `service|from|to`; for a compound step, every
/// member's triple sorted by service id and joined with `+`. `|` and `+`
/// are never part of an id ([`crate::chars::ID_PUNCTUATION`]), so an
/// identity reads back unambiguously, and it does not depend on the step
/// number, the gain or anything else that changes while the advice means
/// the same move.
pub fn identity(moves: &[Move], index: usize) -> String {
    let m = &moves[index];
    match &m.group {
        None => identity_of([(m.service.as_str(), m.from.as_str(), m.to.as_str())]),
        Some(g) => identity_of(
            moves
                .iter()
                .filter(|o| g.steps.contains(&o.step))
                .map(|o| (o.service.as_str(), o.from.as_str(), o.to.as_str())),
        ),
    }
}

/// [`identity`] from the `(service, from, to)` of a recommendation's
/// members (one for a single move), for callers that hold moves read back
/// from stored advice rather than [`Move`] values (`history.rs`).
pub fn identity_of<'a>(members: impl IntoIterator<Item = (&'a str, &'a str, &'a str)>) -> String {
    let mut triples: Vec<String> = members
        .into_iter()
        .map(|(service, from, to)| format!("{service}|{from}|{to}"))
        .collect();
    triples.sort();
    triples.join("+")
}
