//! A saved what-if as the basis of an applied move (`docs/outcomes.md`,
//! "What counts as applied"): when a move no advice recommended and no
//! planned review named was one of a saved what-if's moves, the outcome
//! is held to what that what-if predicted for it.

use super::*;
use crate::whatif::{project_with_version, Scenario};

/// What what-if `scenario`, run on `before` (the estate just before the
/// move) at `at` (the move's time), predicted for its move of
/// `m.service` from `m.from` to `m.to`: the terms of that move in the
/// placement the what-if's earlier moves made (every one, evacuations'
/// placements included, in the what-if's order), exactly as an advice's
/// step is scored after the steps before it; its deciding facts and their
/// weakest class. `None` when the what-if does not run on `before` (it
/// names what is gone) or makes no such move (the first one counts when it
/// moves the service more than once).
pub fn whatif_prediction(
    before: &Estate,
    policy: &Policy,
    at: i64,
    scenario: &Scenario,
    m: &Member,
) -> Option<Kept> {
    // The version only labels the projection, which is not returned.
    let p = project_with_version(before, "", policy, at, scenario).ok()?;
    let k = p
        .moves
        .iter()
        .position(|x| x.service == m.service && x.from == m.from && x.to == m.to)?;
    let ctx = Ctx::new(before, policy, at);
    let mut state = State::initial(before);
    for x in &p.moves[..k] {
        let s = before.service_index(&x.service)?;
        let to = before.cluster_index(&x.to)?;
        state.apply(&ctx, s, to);
    }
    let s = before.service_index(&m.service)?;
    let to = before.cluster_index(&m.to)?;
    let terms = cost::move_terms(&ctx, &state, s, to);
    let mut facts = cost::deciding_facts(&ctx, &state, s, to);
    facts.sort_by(|a, b| a.fact.cmp(&b.fact));
    facts.dedup_by(|a, b| a.fact == b.fact);
    Some(Kept {
        gain: terms.gain(),
        terms,
        confidence: cost::confidence(&facts),
        facts,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::estate::Format;

    fn estate() -> Estate {
        let text = r#"{"schema": 1, "name": "w", "traffic": "declared",
          "sites": [{"id": "s1", "name": "S1", "lat": 50.1, "lon": 8.7, "jurisdiction": "eu"},
                    {"id": "s2", "name": "S2", "lat": 48.9, "lon": 2.3, "jurisdiction": "eu"}],
          "clusters": [
            {"id": "c1", "site": "s1", "tier": "prod", "trust_zone": "general", "health": "healthy",
             "cpu_total": 64, "memory_total_gib": 256, "cpu_free": 40, "memory_free_gib": 200},
            {"id": "c2", "site": "s2", "tier": "prod", "trust_zone": "general", "health": "healthy",
             "cpu_total": 64, "memory_total_gib": 256, "cpu_free": 40, "memory_free_gib": 200},
            {"id": "c3", "site": "s2", "tier": "prod", "trust_zone": "general", "health": "healthy",
             "cpu_total": 64, "memory_total_gib": 256, "cpu_free": 40, "memory_free_gib": 200}],
          "paths": [{"a": "c1", "b": "c2", "rtt_ms": 20}, {"a": "c1", "b": "c3", "rtt_ms": 25},
                    {"a": "c2", "b": "c3", "rtt_ms": 3}],
          "services": [
            {"id": "a", "owner": "t", "cluster": "c1", "cpu": 2, "memory_gib": 4},
            {"id": "b", "owner": "t", "cluster": "c2", "cpu": 1, "memory_gib": 2},
            {"id": "d", "owner": "t", "cluster": "c3", "cpu": 1, "memory_gib": 2}],
          "flows": [{"from": "a", "to": "b", "weight": 4, "mb_s": 2},
                    {"from": "a", "to": "d", "weight": 1, "mb_s": 5}]}"#;
        crate::estate::load(text, Format::Json).unwrap()
    }

    fn member(s: &str, f: &str, t: &str) -> Member {
        Member {
            service: s.into(),
            from: f.into(),
            to: t.into(),
        }
    }

    #[test]
    fn the_move_is_scored_after_the_what_ifs_earlier_moves() {
        let e = estate();
        let p = Policy::default();
        let sc = Scenario::from_json(
            r#"{"schema": 1, "name": "x", "steps": [{"move": {"service": "d", "to": "c2"}},
                {"move": {"service": "a", "to": "c2"}}]}"#,
        )
        .unwrap();
        let k = whatif_prediction(&e, &p, 0, &sc, &member("a", "c1", "c2")).unwrap();
        // d already in c2: both of a's flows go from 20 ms to one cluster.
        let same = p.rtt.same_cluster_ms;
        let rt = p.round_trip_weight * (4.0 + 1.0) * (20.0 - same);
        let xs = p.cross_site_weight * (2.0 + 5.0);
        assert!((k.terms.round_trip - rt).abs() < 1e-9, "{:?}", k.terms);
        assert!((k.terms.cross_site - xs).abs() < 1e-9, "{:?}", k.terms);
        assert!((k.gain - k.terms.gain()).abs() < 1e-12);
        // The model alone, without the what-if's move of d, differs.
        let alone = predict(&e, &p, 0, &[member("a", "c1", "c2")]).unwrap();
        assert!((alone.gain - k.gain).abs() > 1.0);
        // Not a move of the what-if: no prediction.
        assert!(whatif_prediction(&e, &p, 0, &sc, &member("a", "c1", "c3")).is_none());
        assert!(whatif_prediction(&e, &p, 0, &sc, &member("b", "c2", "c1")).is_none());
    }
}
