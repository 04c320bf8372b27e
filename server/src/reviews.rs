//! Review memory below the HTTP layer: a stored decision as the engine
//! reads it, and which recommendations of an advice are hidden now. The
//! pages (through `http::reviews`) and the notifications of the driver
//! both ask here, so they hide exactly the same recommendations.

use std::collections::BTreeSet;

use berth_engine::review::{self, Kind};
use berth_engine::Advice;

use crate::db::Db;
use crate::store::{self, ReviewRow, StoreResult};

/// A stored decision as the engine reads it; `None` when the row cannot be
/// read back (then it hides nothing: hiding advice on a broken row would
/// be the worse failure).
pub fn decision_of(r: &ReviewRow) -> Option<review::Decision> {
    Some(review::Decision {
        kind: Kind::parse(&r.decision)?,
        until: r.until,
        condition: match &r.condition {
            Some(c) => Some(serde_json::from_value(c.clone()).ok()?),
            None => None,
        },
        basis: serde_json::from_value(r.basis.clone()).ok()?,
    })
}

/// The identities of `advice` that are hidden at `now`: dismissed or
/// snoozed, and still holding (`berth_engine::review::standing`).
pub async fn hidden_identities(
    db: &Db,
    estate: &str,
    advice: &Advice,
    now: i64,
) -> StoreResult<BTreeSet<String>> {
    let rows = store::reviews(db, estate).await?;
    let mut out = BTreeSet::new();
    for i in 0..advice.moves.len() {
        let identity = review::identity(&advice.moves, i);
        let decision = rows
            .iter()
            .find(|r| r.identity == identity)
            .and_then(decision_of);
        if let Some(d) = decision {
            let s = review::standing(&d, &review::current_facts(&advice.moves, i), now);
            if s.state == review::State::Hidden {
                out.insert(identity);
            }
        }
    }
    Ok(out)
}
