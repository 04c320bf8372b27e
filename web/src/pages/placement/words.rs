//! Placement's sentences: what the steps save, the totals, the distance
//! from the best possible (the engine's bound or the server's proof).

use super::*;

/// "1 point = 1 ms of round trip on a connection in constant use", one
/// click away from every sentence that counts points.
pub(super) fn point_definition() -> impl IntoView {
    view! {
        <details class="point-def" data-testid="point-def">
            <summary>"What is a point?"</summary>
            <span>"1 point = 1 ms of round trip on a connection in constant use. Round-trip points are milliseconds of waiting times how busy each connection is; cross-site traffic is counted in points too (8 per MB/s by default), and so is a cluster filled past 80 %. A saving is positive, a cost negative (docs/advice.md §1)."</span>
        </details>
    }
}

/// A step's cross-site traffic and money, signed as gains are (a saving
/// positive): "+2.1 MB/s · +$110/month".
pub(super) fn money_words(s: &Saving) -> String {
    let sign = |x: f64| if x < 0.0 { "\u{2212}" } else { "+" };
    format!(
        "{}{:.1} MB/s \u{b7} {}{}",
        sign(s.cross_site_mb_s),
        s.cross_site_mb_s.abs(),
        sign(s.usd_month),
        dollars_month(s.usd_month)
    )
}

/// The one sentence that answers the page's question: how many steps,
/// what they save in points (positive: a saving), in MB/s of cross-site
/// traffic and in dollars a month of transfer.
pub(super) fn summary_sentence(
    advice: &Advice,
    money: &Money,
    steps: usize,
    moves: usize,
) -> String {
    let before = &advice.totals_before;
    let after = &advice.totals_after;
    let saved = before.cost - after.cost;
    let mb = before.cross_site_mb_s - after.cross_site_mb_s;
    let traffic = if mb >= 0.0 {
        format!("cut cross-site traffic by {:.1} MB/s", mb)
    } else {
        format!("add {:.1} MB/s of cross-site traffic", -mb)
    };
    let usd = money.saving().usd_month;
    let dollars = if usd >= 0.0 {
        format!("save {} in transfer", dollars_month(usd))
    } else {
        format!("add {} of transfer", dollars_month(usd))
    };
    format!(
        "{steps} recommended step{} ({moves} move{}) {} {} point{}, {traffic} and {dollars}.",
        if steps == 1 { "" } else { "s" },
        if moves == 1 { "" } else { "s" },
        if saved >= 0.0 { "save" } else { "cost" },
        fixed(Some(saved.abs()), 1),
        if (saved.abs() - 1.0).abs() < 0.05 {
            ""
        } else {
            "s"
        },
    )
}

/// The estate's cost before and after, and the saving by term, signed as
/// gains are (a saving positive).
pub(super) fn totals_sentence(advice: &Advice) -> String {
    let b = &advice.totals_before;
    let a = &advice.totals_after;
    format!(
        "Estate cost {} → {} points: round trip {}, cross-site {}, headroom {}. Cross-site traffic {} → {} MB/s.",
        fixed(Some(b.cost), 1),
        fixed(Some(a.cost), 1),
        signed(b.round_trip - a.round_trip, 1),
        signed(b.cross_site - a.cross_site, 1),
        signed(b.headroom - a.headroom, 1),
        fixed(Some(b.cross_site_mb_s), 1),
        fixed(Some(a.cross_site_mb_s), 1),
    )
}

/// How far the advice is from the best possible, in plain words: the
/// proven bound (`bound.rs`), named as a bound — a floor no placement
/// goes below, not a placement Berth found. Rounded so the words stay
/// true: what could still be saved up, the share captured down.
pub fn distance_sentence(advice: &Advice) -> String {
    let b = &advice.bound;
    let up = |x: f64| (x * 10.0).ceil() / 10.0;
    let down = |x: f64| (x * 10.0).floor() / 10.0;
    match b.captured_at_least {
        Some(share) => {
            let rest = (b.improvement_at_most * (1.0 - share)).max(0.0);
            format!(
                "Distance from the best possible: no placement could save more than {:.1} points beyond these steps, so they capture at least {:.1} % of the saving that can exist — a proven bound (no placement costs under {:.1}), not a placement Berth found.",
                up(rest),
                down(share * 100.0),
                down(b.cost_at_least)
            )
        }
        None => format!(
            "Distance from the best possible: none. No placement can improve on this one (a proven bound: none costs less than {:.1} points).",
            down(b.cost_at_least)
        ),
    }
}

/// The server's proof of the optimum for the estate version on show, when
/// it has one (`Placement` provides it).
#[derive(Clone, Copy)]
pub struct ProvenGap(pub RwSignal<Option<berth_api::AdviceProof>>);

/// How far the advice is from the best possible by the server's proof
/// (docs/advice.md §6b): the share of the best possible saving the steps
/// leave, rounded up so the words stay true, with the proof's version,
/// time and solve time. The proof is of the advice the server's driver
/// made at `evaluated_at`, which the page names.
pub fn proven_sentence(p: &berth_api::AdviceProof) -> String {
    let up = |x: f64| (x * 10.0).ceil() / 10.0;
    let when = p.evaluated_at.replace('T', " ").replace('Z', " UTC");
    let whose = format!(
        "proven by the server's solver for version {}, advice of {when}, in {:.1} s",
        p.estate_version,
        p.solve_ms as f64 / 1000.0
    );
    if p.missed <= 0.0 {
        format!(
            "Distance from the best possible: none. These steps are the best possible within {} moves ({whose}).",
            p.max_moves
        )
    } else {
        format!(
            "Distance from the best possible: within {:.1} % of the best possible within {} moves ({whose}).",
            up(p.missed * 100.0),
            p.max_moves
        )
    }
}

/// The distance line, live: the server's proof once it is known, else
/// `bound` (the engine's bound, named as one).
pub(super) fn distance_words(bound: String) -> impl Fn() -> String + Send + Sync + 'static {
    let gap = use_context::<ProvenGap>();
    move || match gap.and_then(|g| g.0.get()) {
        Some(p) => proven_sentence(&p),
        None => bound.clone(),
    }
}
