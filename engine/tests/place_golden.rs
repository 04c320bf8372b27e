//! Golden tests of the single-service placement scorer (SPEC §10): for
//! each situation, the ranked candidates with every term of their score.
//! Update with `UPDATE_EXPECT=1 cargo test --test place_golden` and review
//! the diff: a change here is a change in where services are placed.

mod common;

use berth_engine::cost::{Ctx, State};
use berth_engine::place::{self, rank};
use berth_engine::policy::Policy;
use berth_engine::{gen, text, Estate};
use common::*;
use expect_test::{expect, Expect};
use serde_json::json;

fn check(estate: &Estate, policy: &Policy, service: &str, expected: Expect) {
    let ctx = Ctx::new(estate, policy, NOW);
    let state = State::initial(estate);
    let s = estate.service_index(service).expect("service");
    expected.assert_eq(&text::candidates(&rank(&ctx, &state, s)));
}

/// Nothing has room: every candidate meets the over-target wall, and the
/// ramp still ranks them, least overloaded first. The service's own
/// cluster is down (re-placement after a cluster died).
#[test]
fn full_fleet_ramp_ranks_overloaded_clusters() {
    let e = estate(
        vec![
            cluster("c-a", "fra", 100.0, 14.0),
            cluster("c-b", "fra", 100.0, 9.0),
            cluster("c-c", "fra", 100.0, 3.0),
            with(
                cluster("c-dead", "fra", 100.0, 50.0),
                "health",
                json!("down"),
            ),
        ],
        vec![service("orphan", "team", "c-dead", 4.0)],
        vec![],
    );
    check(
        &e,
        &Policy::default(),
        "orphan",
        expect![[r#"
            rank  cluster    score = headroom over_target incumbency  network blast_radius  youth     cpu    mem  fit
               1  c-a      -1019.0 =     +1.0     -1020.0          0        0            0      0   90.0%  90.0%  fits
               2  c-b      -1029.5 =     +0.5     -1030.0          0        0            0      0   95.0%  95.0%  fits
               3  c-c      -1042.0 =        0     -1042.0          0        0            0      0  101.0% 101.0%  does_not_fit
                            note no_room_cpu: needs 4 cores but c-c has at most 3.15 cores free (measured CPU ±5%)
               -  c-dead  ineligible: cluster_down
                            c-dead is down
        "#]],
    );
}

/// Two equal clusters: the incumbent keeps the service.
#[test]
fn incumbent_stays_on_a_tie() {
    let e = estate(
        vec![
            cluster("c-a", "fra", 100.0, 50.0),
            // 4 cores more free: after placing, exactly as full as c-a.
            cluster("c-b", "fra", 100.0, 54.0),
        ],
        vec![service("svc", "team", "c-a", 4.0)],
        vec![],
    );
    check(
        &e,
        &Policy::default(),
        "svc",
        expect![[r#"
        rank  cluster    score = headroom over_target incumbency  network blast_radius  youth     cpu    mem  fit
           1  c-a        +10.0 =     +5.0           0       +5.0        0            0      0   50.0%  50.0%  incumbent
           2  c-b         +5.0 =     +5.0           0          0        0            0      0   50.0%  50.0%  fits
    "#]],
    );
}

/// A somewhat roomier cluster next door is not worth a move.
#[test]
fn incumbent_stays_on_a_small_difference() {
    let e = estate(
        vec![
            cluster("c-a", "fra", 100.0, 50.0),
            cluster("c-b", "fra", 100.0, 70.0),
        ],
        vec![service("svc", "team", "c-a", 4.0)],
        vec![],
    );
    check(
        &e,
        &Policy::default(),
        "svc",
        expect![[r#"
        rank  cluster    score = headroom over_target incumbency  network blast_radius  youth     cpu    mem  fit
           1  c-a        +10.0 =     +5.0           0       +5.0        0            0      0   50.0%  50.0%  incumbent
           2  c-b         +6.6 =     +6.6           0          0        0            0      0   34.0%  34.0%  fits
    "#]],
    );
}

/// ... but a large difference (its busy database is in Paris) is.
#[test]
fn incumbent_moves_for_a_large_difference() {
    let e = estate(
        vec![
            cluster("c-a", "fra", 100.0, 50.0),
            cluster("c-b", "fra", 100.0, 70.0),
            cluster("c-p", "par", 100.0, 50.0),
        ],
        vec![
            service("svc", "team", "c-a", 4.0),
            service("db", "data", "c-p", 4.0),
        ],
        vec![flow("svc", "db", 2.0, 1.0)],
    );
    check(
        &e,
        &Policy::default(),
        "svc",
        expect![[r#"
        rank  cluster    score = headroom over_target incumbency  network blast_radius  youth     cpu    mem  fit
           1  c-p         +4.0 =     +4.6           0          0     -0.6            0      0   54.0%  54.0%  fits
           2  c-a        -16.0 =     +5.0           0       +5.0    -26.0            0      0   50.0%  50.0%  incumbent
           3  c-b        -19.4 =     +6.6           0          0    -26.0            0      0   34.0%  34.0%  fits
    "#]],
    );
}

/// A cluster enrolled an hour ago gets a youth bonus that tips a close
/// call its way.
#[test]
fn new_cluster_youth_tips_a_close_call() {
    let e = estate(
        vec![
            cluster("c-old", "fra", 100.0, 60.0),
            with(
                cluster("c-new", "fra", 100.0, 54.0),
                "enrolled_at",
                json!("2026-11-30T03:05:00Z"),
            ),
            with(
                cluster("c-gone", "fra", 100.0, 50.0),
                "health",
                json!("down"),
            ),
        ],
        vec![service("svc", "team", "c-gone", 4.0)],
        vec![],
    );
    check(
        &e,
        &Policy::default(),
        "svc",
        expect![[r#"
        rank  cluster    score = headroom over_target incumbency  network blast_radius  youth     cpu    mem  fit
           1  c-new       +7.9 =     +5.0           0          0        0            0   +2.9   50.0%  50.0%  fits
           2  c-old       +5.6 =     +5.6           0          0        0            0      0   44.0%  44.0%  fits
           -  c-gone  ineligible: cluster_down
                        c-gone is down
    "#]],
    );
}

/// ... but never outweighs the over-target cost: a young cluster just
/// over target loses to an old one just at target.
#[test]
fn new_cluster_youth_never_beats_over_target() {
    let e = estate(
        vec![
            cluster("c-old", "fra", 100.0, 24.0),
            with(
                cluster("c-new", "fra", 100.0, 23.0),
                "enrolled_at",
                json!("2026-11-30T04:04:00Z"),
            ),
            with(
                cluster("c-gone", "fra", 100.0, 50.0),
                "health",
                json!("down"),
            ),
        ],
        vec![service("svc", "team", "c-gone", 4.0)],
        vec![],
    );
    check(
        &e,
        &Policy::default(),
        "svc",
        expect![[r#"
        rank  cluster    score = headroom over_target incumbency  network blast_radius  youth     cpu    mem  fit
           1  c-old       +2.0 =     +2.0           0          0        0            0      0   80.0%  80.0%  fits
           2  c-new     -997.1 =     +1.9     -1002.0          0        0            0   +3.0   81.0%  81.0%  fits
           -  c-gone  ineligible: cluster_down
                        c-gone is down
    "#]],
    );
}

/// The policy cannot make youth (or any bonus) outweigh the wall.
#[test]
fn policy_refuses_bonuses_that_climb_the_wall() {
    let p = Policy::from_json(r#"{"placement": {"youth_bonus": 990}}"#).unwrap_err();
    assert_eq!(p[0].field, "placement.over_target_cost", "{p:?}");
}

/// One owner's services piled on one cluster: blast radius spreads the
/// next one, even onto a slightly fuller cluster.
#[test]
fn concentrated_owner_blast_radius_spreads() {
    let e = estate(
        vec![
            cluster("c-a", "fra", 100.0, 60.0),
            cluster("c-b", "fra", 100.0, 50.0),
            cluster("c-c", "fra", 100.0, 50.0),
            with(
                cluster("c-dead", "fra", 100.0, 50.0),
                "health",
                json!("down"),
            ),
        ],
        vec![
            service("shop-1", "shop", "c-a", 2.0),
            service("shop-2", "shop", "c-a", 2.0),
            service("shop-3", "shop", "c-a", 2.0),
            service("shop-5", "shop", "c-c", 2.0),
            service("other", "search", "c-b", 2.0),
            service("shop-4", "shop", "c-dead", 4.0),
        ],
        vec![],
    );
    check(
        &e,
        &Policy::default(),
        "shop-4",
        expect![[r#"
        rank  cluster    score = headroom over_target incumbency  network blast_radius  youth     cpu    mem  fit
           1  c-b         +4.6 =     +4.6           0          0        0            0      0   54.0%  54.0%  fits
           2  c-c         +2.6 =     +4.6           0          0        0         -2.0      0   54.0%  54.0%  fits
           3  c-a         -0.4 =     +5.6           0          0        0         -6.0      0   44.0%  44.0%  fits
           -  c-dead  ineligible: cluster_down
                        c-dead is down
    "#]],
    );
}

/// Unknown free capacity is named, not hidden, and hard constraints
/// refuse with their codes; capacity never refuses.
#[test]
fn refusals_and_cant_tell_notes() {
    let mut unknown = cluster("c-nw", "fra", 100.0, 50.0);
    unknown["cpu_free"] = json!(null);
    let e = estate(
        vec![
            cluster("c-a", "fra", 100.0, 2.0),
            unknown,
            with(
                cluster("c-iad", "iad", 100.0, 50.0),
                "tier",
                json!("staging"),
            ),
            with(
                cluster("c-pci", "fra", 100.0, 50.0),
                "trust_zone",
                json!("pci"),
            ),
            with(
                cluster("c-par", "par", 100.0, 50.0),
                "health",
                json!("draining"),
            ),
        ],
        vec![with(
            service("svc", "team", "c-par", 4.0),
            "constraints",
            json!({"jurisdictions": ["eu"], "trust_zone": "general", "tiers": ["prod"]}),
        )],
        vec![],
    );
    check(
        &e,
        &Policy::default(),
        "svc",
        expect![[r#"
            rank  cluster    score = headroom over_target incumbency  network blast_radius  youth     cpu    mem  fit
               1  c-nw        +2.3 =     +2.3           0          0        0            0      0       ?  54.0%  cant_tell
                            note cant_tell: free CPU of c-nw is unknown: no headroom bonus and no over-target cost are counted for it
               2  c-a      -1044.0 =        0     -1044.0          0        0            0      0  102.0% 102.0%  does_not_fit
                            note no_room_cpu: needs 4 cores but c-a has at most 2.1 cores free (measured CPU ±5%)
               -  c-iad   ineligible: jurisdiction, tier
                            the data of svc may stay only in eu; c-iad is in us (iad)
                            svc may run only on prod clusters; c-iad is staging
               -  c-par   ineligible: cluster_draining
                            c-par is draining and takes no new services
               -  c-pci   ineligible: trust_zone
                            svc must run in trust zone general; c-pci is in pci
        "#]],
    );
}

/// A service whose CPU request is unknown (`cpu: null`): away from its
/// cluster its CPU utilisation can't be computed (`?`), so it earns no CPU
/// headroom bonus and no over-target cost there, and the fit is can't tell
/// with the request named. On its own cluster nothing is added, so both
/// utilisations are known. Memory (8 GiB) is counted as usual.
#[test]
fn unknown_request_notes() {
    let e = estate(
        vec![
            cluster("c-a", "fra", 100.0, 50.0),
            cluster("c-b", "fra", 100.0, 20.0),
        ],
        vec![json!({"id": "db", "owner": "team", "cluster": "c-a", "cpu": null, "memory_gib": 8})],
        vec![],
    );
    check(
        &e,
        &Policy::default(),
        "db",
        expect![[r#"
            rank  cluster    score = headroom over_target incumbency  network blast_radius  youth     cpu    mem  fit
               1  c-a        +10.0 =     +5.0           0       +5.0        0            0      0   50.0%  50.0%  incumbent
               2  c-b      -1001.1 =     +0.9     -1002.0          0        0            0      0       ?  82.0%  cant_tell
                            note cant_tell: the CPU request of db is unknown: no headroom bonus and no over-target cost are counted for it
        "#]],
    );
}

/// The JSON a client gets for `berth place`.
#[test]
fn placement_json() {
    let e = estate(
        vec![
            cluster("c-a", "fra", 100.0, 50.0),
            with(cluster("c-b", "fra", 100.0, 50.0), "health", json!("down")),
        ],
        vec![service("svc", "team", "c-b", 4.0)],
        vec![],
    );
    let p = place::place(&e, &Policy::default(), NOW, "svc").unwrap();
    expect![[r#"
        {
          "estate": "test",
          "estate_version": "d641bd55384e644b",
          "policy_digest": "795cfe0c62069052",
          "now": "2026-11-30T04:05:00Z",
          "service": "svc",
          "owner": "team",
          "cpu": 4.0,
          "memory_gib": 16.0,
          "current": "c-b",
          "best": "c-a",
          "verdict": "move",
          "judged_after": [],
          "bar": 2.0,
          "candidates": [
            {
              "cluster": "c-a",
              "rank": 1,
              "eligible": true,
              "incumbent": false,
              "score": 4.6,
              "terms": {
                "headroom": 4.6,
                "over_target": 0.0,
                "incumbency": 0.0,
                "network": 0.0,
                "blast_radius": 0.0,
                "youth": 0.0
              },
              "cpu_utilisation": 0.54,
              "memory_utilisation": 0.54,
              "fit": "fits",
              "advice_gain": 0.0,
              "clears_bar": false,
              "refusals": [],
              "notes": []
            },
            {
              "cluster": "c-b",
              "rank": null,
              "eligible": false,
              "incumbent": true,
              "score": 10.0,
              "terms": {
                "headroom": 5.0,
                "over_target": 0.0,
                "incumbency": 5.0,
                "network": 0.0,
                "blast_radius": 0.0,
                "youth": 0.0
              },
              "cpu_utilisation": 0.5,
              "memory_utilisation": 0.5,
              "fit": "incumbent",
              "advice_gain": null,
              "clears_bar": false,
              "refusals": [
                {
                  "code": "cluster_down",
                  "message": "c-b is down"
                }
              ],
              "notes": []
            }
          ]
        }"#]]
    .assert_eq(&serde_json::to_string_pretty(&p).unwrap());
    let err = place::place(&e, &Policy::default(), NOW, "nope").unwrap_err();
    assert!(err.contains("unknown service \"nope\""), "{err}");
}

/// On generated estates: the score is the sum of its terms, eligible
/// candidates come first in score order (ties on id) and are numbered,
/// the ineligible follow with their refusals, and no bonus ever climbs
/// the over-target wall.
#[test]
fn ranking_invariants_on_generated_estates() {
    let policy = Policy::default();
    for seed in 0..20 {
        let e = gen::estate(&gen::Shape::small(seed));
        let ctx = Ctx::new(&e, &policy, gen::NOW);
        let state = State::initial(&e);
        for s in 0..e.services.len() {
            let cands = rank(&ctx, &state, s);
            assert_eq!(cands.len(), e.clusters.len());
            let eligible = cands.iter().take_while(|c| c.eligible).count();
            assert!(cands[eligible..].iter().all(|c| !c.eligible));
            for (k, c) in cands.iter().enumerate() {
                assert_eq!(c.score, c.terms.score());
                assert_eq!(c.eligible, c.refusals.is_empty());
                assert_eq!(c.rank, c.eligible.then_some(k + 1));
                let t = &c.terms;
                if t.over_target != 0.0 {
                    assert!(t.headroom + t.incumbency + t.youth < -t.over_target);
                }
                if k + 1 < eligible {
                    let next = &cands[k + 1];
                    let no_room = |c: &berth_engine::place::Candidate| {
                        c.fit == berth_engine::place::FitVerdict::DoesNotFit
                    };
                    // Clusters where it might fit come first, then by score.
                    assert!(
                        (!no_room(c) && no_room(next))
                            || (no_room(c) == no_room(next)
                                && (c.score > next.score
                                    || (c.score == next.score && c.index < next.index)))
                    );
                }
            }
            // A pinned service may always stay unless its cluster refuses.
            if e.services[s].constraints.pinned {
                assert!(cands
                    .iter()
                    .filter(|c| c.eligible)
                    .all(|c| c.index == e.services[s].cluster));
            }
        }
    }
}

/// "Where else could it go?" agrees with the advice (issue 32): for every
/// service the advice moves as a recommended single step, its destination
/// is first on `berth place`, judged from the same placement; for a member
/// of a compound step, or a move resting on guesses, the answer says so in
/// words. On the sample and on 50 generated estates.
#[test]
fn the_advice_destination_ranks_first_or_the_answer_says_why() {
    let sample = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../examples/estates/sample.json"
    ))
    .unwrap();
    let sample = berth_engine::load(&sample, berth_engine::Format::Json).unwrap();
    let mut estates = vec![(sample, berth_engine::estate::parse_time(NOW_STR).unwrap())];
    estates.extend((0..50).map(|seed| (gen::estate(&gen::Shape::small(seed)), gen::NOW)));
    let policy = Policy::default();
    let (mut first, mut explained) = (0, 0);
    for (e, now) in &estates {
        let advice = berth_engine::advise(e, &policy, *now);
        for m in &advice.moves {
            let p = place::place(e, &policy, *now, &m.service).unwrap();
            let words = p.advice.clone().unwrap_or_default();
            assert!(
                words.starts_with(&format!(
                    "The advice moves {} to {} at step {}",
                    m.service, m.to, m.step
                )),
                "{}: {words}",
                m.service
            );
            let top = p.candidates.first().map(|c| c.cluster.clone());
            if m.group.is_none() {
                assert_eq!(
                    top.as_deref(),
                    Some(m.to.as_str()),
                    "{} {}: {words}",
                    e.name,
                    m.service
                );
                let c = &p.candidates[0];
                assert_eq!(
                    c.advice_gain,
                    Some(m.gain),
                    "{}: the advice's own gain",
                    m.service
                );
                assert!(c.clears_bar, "{}", m.service);
                assert_eq!(p.bar, m.bar, "{}: the advice's bar", m.service);
                first += 1;
            } else if top.as_deref() != Some(m.to.as_str()) {
                assert!(words.contains("so it is not first here"), "{words}");
                explained += 1;
            } else {
                first += 1;
            }
            if m.evidence.is_some() {
                assert!(words.contains("but not as a recommendation"), "{words}");
            }
        }
    }
    eprintln!("{first} advice destinations ranked first, {explained} group members explained");
    assert!(
        first >= 30 && explained >= 1,
        "{first} first, {explained} explained"
    );
}

/// The sample's `cart`: the advice moves it to c-fra-2 at step 2; the
/// answer ranks c-fra-2 first by the advice's gain, with the scorer's
/// terms beside it.
#[test]
fn sample_cart_where_else() {
    let sample = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../examples/estates/sample.json"
    ))
    .unwrap();
    let e = berth_engine::load(&sample, berth_engine::Format::Json).unwrap();
    let now = berth_engine::estate::parse_time(NOW_STR).unwrap();
    let p = place::place(&e, &Policy::default(), now, "cart").unwrap();
    let text = text::placement(&p);
    let body: String = text.lines().skip(1).collect::<Vec<_>>().join("\n");
    expect![[r#"
        Placing cart (owner checkout; 6 CPU, 12 GiB), now on c-par-1: best placed on c-fra-2

        Ranked as the advice judges it, from the placement after the advice's step 1: first the moves it could recommend (gain at least the bar of 27.84 points and a certified fit), by gain; then staying; then the rest. `gain` is the advice's (round trip, cross-site, headroom, copy); `score` and its terms are the single-service scorer's, shown beside it and used only to break ties.
        The advice moves cart to c-fra-2 at step 2.

        rank  cluster        gain clears |    score = headroom over_target incumbency  network blast_radius  youth     cpu    mem  fit
           1  c-fra-2      +165.5    yes |    -16.1 =     +4.0           0          0    -20.1            0      0   64.1%  56.2%  fits
           2  c-fra-3      +159.2    yes |    -14.2 =     +9.3           0          0    -26.4            0   +2.9    7.8%   6.5%  fits
           3  c-par-1           0     no |   -177.0 =     +3.6           0       +5.0   -185.6            0      0   67.7%  60.9%  incumbent
           4  c-lon-1       -68.8     no |  -1252.2 =     +2.5     -1001.3          0   -253.4            0      0   81.2%  69.5%  fits
           5  c-dub-1      -236.2     no |  -1424.4 =     +1.6     -1008.4          0   -417.6            0      0   86.2%  82.2%  fits
           6  c-nw-1      -1134.4     no |  -1318.6 =     +1.4           0          0  -1320.0            0      0       ?  71.9%  cant_tell
                           note cant_tell: free CPU of c-nw-1 is unknown: no headroom bonus and no over-target cost are counted for it
           7  c-iad-1     -1283.8     no |  -1466.2 =     +3.2           0          0  -1469.4            0      0   70.0%  65.3%  fits
           8  c-pdx-1     -2274.1     no |  -3463.7 =     +1.6     -1009.1          0  -2456.2            0      0   89.1%  78.9%  fits
           9  c-sin-1     -2371.3     no |  -2553.3 =     +3.7           0          0  -2556.9            0      0   68.8%  57.8%  fits
          10  c-fra-1      +166.7     no |  -1053.3 =     +0.3     -1034.3          0    -15.3         -4.0      0  100.3%  94.0%  does_not_fit
                           note no_room_cpu: needs 6 cores but c-fra-1 has at most 5.78 cores free (measured CPU ±5%)
           -  c-fra-pci  ineligible: trust_zone
                           cart must run in trust zone general; c-fra-pci is in pci
           -  c-fra-stg  ineligible: tier
                           cart may run only on prod clusters; c-fra-stg is staging
           -  c-iad-stg  ineligible: tier
                           cart may run only on prod clusters; c-iad-stg is staging
           -  c-par-2    ineligible: cluster_draining
                           c-par-2 is draining and takes no new services
           -  c-sin-edge ineligible: tier
                           cart may run only on prod clusters; c-sin-edge is edge"#]].assert_eq(&body);
}

/// Services whose owner nobody knows are not one owner: no blast-radius
/// term between them, and a note says the term is not computed.
#[test]
fn unknown_owner_is_nobodys() {
    let e = estate(
        vec![
            cluster("c-a", "fra", 16.0, 4.0),
            cluster("c-b", "fra", 16.0, 4.0),
        ],
        vec![
            service("a", "unknown", "c-a", 1.0),
            service("b", "unknown", "c-b", 1.0),
            service("c", "unknown", "c-b", 1.0),
        ],
        vec![],
    );
    let policy = Policy::default();
    let ctx = Ctx::new(&e, &policy, NOW);
    let cands = rank(&ctx, &State::initial(&e), 0);
    for c in &cands {
        assert_eq!(c.terms.blast_radius, 0.0, "{}", c.cluster);
        assert!(
            c.notes
                .iter()
                .any(|n| n.message.contains("owner of a is unknown")),
            "{:?}",
            c.notes
        );
    }
}
