//! Deciders: validation, scoring and comparison (SPEC §9), and the limits
//! on untrusted replies. Golden outputs use expect-test: run with
//! `UPDATE_EXPECT=1` to refresh them, then review the diff.

use berth_engine::decider::{
    self, compare, parse_request, parse_response, score, BodyError, Decider, DeciderError,
    External, HeaviestTalker, Proposal, RawProposal, MAX_BODY_BYTES, MAX_PROPOSALS,
};
use berth_engine::estate::parse_time;
use berth_engine::{advise, load, request, text, Estate, Format, Policy};
use expect_test::expect;

const NOW: &str = "2026-11-30T04:05:00Z";

fn now() -> i64 {
    parse_time(NOW).unwrap()
}

/// A small estate built so that the heaviest-talker foil runs into every
/// kind of refusal: pinned, local volumes, trust zone, jurisdiction,
/// draining, no room, can't tell; and makes a swap that hurts.
fn estate() -> Estate {
    let text = r#"{
      "schema": 1,
      "name": "decider test estate",
      "observed_at": "2026-11-30T04:04:00Z",
      "sites": [
        {"id": "fra", "lat": 50.11, "lon": 8.68, "jurisdiction": "eu"},
        {"id": "par", "lat": 48.86, "lon": 2.35, "jurisdiction": "eu"},
        {"id": "lon", "lat": 51.51, "lon": -0.13, "jurisdiction": "uk"}
      ],
      "links": [
        {"a": "fra", "b": "par", "rtt_ms": {"value": 9, "class": "measured"}},
        {"a": "fra", "b": "lon", "rtt_ms": {"value": 14, "class": "measured"}},
        {"a": "lon", "b": "par", "rtt_ms": {"value": 8, "class": "measured"}}
      ],
      "clusters": [
        {"id": "c-fra-1", "site": "fra", "tier": "prod", "trust_zone": "general", "health": "healthy",
         "cpu_total": 64, "memory_total_gib": 256,
         "cpu_free": {"value": 40, "class": "measured"}, "memory_free_gib": {"value": 160, "class": "measured"}},
        {"id": "c-fra-pci", "site": "fra", "tier": "prod", "trust_zone": "pci", "health": "healthy",
         "cpu_total": 16, "memory_total_gib": 64,
         "cpu_free": {"value": 10, "class": "measured"}, "memory_free_gib": {"value": 40, "class": "measured"}},
        {"id": "c-fra-stg", "site": "fra", "tier": "staging", "trust_zone": "general", "health": "healthy",
         "cpu_total": 16, "memory_total_gib": 64,
         "cpu_free": {"value": 10, "class": "measured"}, "memory_free_gib": {"value": 40, "class": "measured"}},
        {"id": "c-lon-1", "site": "lon", "tier": "prod", "trust_zone": "general", "health": "healthy",
         "cpu_total": 32, "memory_total_gib": 128,
         "cpu_free": {"value": 20, "class": "measured"}, "memory_free_gib": {"value": 80, "class": "measured"}},
        {"id": "c-par-1", "site": "par", "tier": "prod", "trust_zone": "general", "health": "healthy",
         "cpu_total": 32, "memory_total_gib": 128,
         "cpu_free": {"value": 3, "class": "measured"}, "memory_free_gib": {"value": 100, "class": "measured"}},
        {"id": "c-par-2", "site": "par", "tier": "prod", "trust_zone": "general", "health": "draining",
         "cpu_total": 32, "memory_total_gib": 128,
         "cpu_free": {"value": 30, "class": "measured"}, "memory_free_gib": {"value": 120, "class": "measured"}},
        {"id": "c-par-3", "site": "par", "tier": "prod", "trust_zone": "general", "health": "healthy",
         "cpu_total": 32, "memory_total_gib": 128,
         "cpu_free": {"value": 8, "class": "guessed", "source": "user:ops"},
         "memory_free_gib": {"value": 100, "class": "measured"}}
      ],
      "services": [
        {"id": "api", "owner": "shop", "cluster": "c-fra-1", "cpu": 4, "memory_gib": 8, "constraints": {"tiers": ["prod"]}},
        {"id": "batch", "owner": "data", "cluster": "c-fra-1", "cpu": 16, "memory_gib": 32},
        {"id": "cart", "owner": "shop", "cluster": "c-par-1", "cpu": 2, "memory_gib": 4},
        {"id": "feed", "owner": "data", "cluster": "c-par-1", "cpu": 1, "memory_gib": 2, "data_gb": 4},
        {"id": "index", "owner": "search", "cluster": "c-par-3", "cpu": 3, "memory_gib": 4},
        {"id": "ledger", "owner": "finance", "cluster": "c-lon-1", "cpu": 1, "memory_gib": 2},
        {"id": "mailer", "owner": "comms", "cluster": "c-fra-1", "cpu": 1, "memory_gib": 2},
        {"id": "notify", "owner": "comms", "cluster": "c-par-2", "cpu": 1, "memory_gib": 2},
        {"id": "orders", "owner": "shop", "cluster": "c-fra-1", "cpu": 2, "memory_gib": 4, "constraints": {"jurisdictions": ["eu"]}},
        {"id": "payments", "owner": "pay", "cluster": "c-fra-pci", "cpu": 2, "memory_gib": 4, "constraints": {"pinned": true, "trust_zone": "pci"}},
        {"id": "report", "owner": "finance", "cluster": "c-fra-1", "cpu": 1, "memory_gib": 2},
        {"id": "search", "owner": "search", "cluster": "c-fra-1", "cpu": 4, "memory_gib": 8, "constraints": {"tiers": ["prod"]}},
        {"id": "uk-tax", "owner": "finance", "cluster": "c-lon-1", "cpu": 1, "memory_gib": 2, "data_gb": 10,
         "constraints": {"local_volumes": true, "jurisdictions": ["uk"]}},
        {"id": "web", "owner": "shop", "cluster": "c-fra-1", "cpu": 2, "memory_gib": 4, "constraints": {"trust_zone": "general"}}
      ],
      "flows": [
        {"from": "api", "to": "cart", "weight": {"value": 6, "class": "measured"}, "mb_s": {"value": 0.5, "class": "measured"}},
        {"from": "batch", "to": "feed", "weight": {"value": 5, "class": "measured"}, "mb_s": {"value": 2, "class": "measured"}},
        {"from": "web", "to": "payments", "weight": {"value": 4, "class": "measured"}, "mb_s": {"value": 0.2, "class": "measured"}},
        {"from": "web", "to": "api", "weight": {"value": 1, "class": "measured"}, "mb_s": {"value": 0.1, "class": "measured"}},
        {"from": "orders", "to": "uk-tax", "weight": {"value": 3, "class": "measured"}, "mb_s": {"value": 0.1, "class": "measured"}},
        {"from": "mailer", "to": "notify", "weight": {"value": 2, "class": "measured"}, "mb_s": {"value": 0.1, "class": "measured"}},
        {"from": "search", "to": "index", "weight": {"value": 3, "class": "measured"}, "mb_s": {"value": 0.3, "class": "measured"}},
        {"from": "report", "to": "ledger", "weight": {"value": 3, "class": "measured"}, "mb_s": {"value": 0.2, "class": "measured"}},
        {"from": "report", "to": "api", "weight": {"value": 2, "class": "measured"}, "mb_s": {"value": 0.1, "class": "measured"}},
        {"from": "orders", "to": "report", "weight": {"value": 2, "class": "measured"}, "mb_s": {"value": 0.1, "class": "measured"}}
      ]
    }"#;
    load(text, Format::Json).expect("test estate is valid")
}

/// A hand-written external reply (bare-list form) covering the refusals
/// the foil never makes: unknown ids, repeats, already there, tier,
/// malformed items. Order matters: `index` fits on `c-par-1` only because
/// `cart` left it first (alone it is *can't tell*, see below), and `notify`
/// fits on `c-par-3` (guessed free CPU) only because `index` left it. The
/// malformed `mailer` item does not claim `mailer`: the later, well-formed
/// one counts (its unknown field `confidence` is ignored).
const HAND: &str = r#"[
  {"serviceId": "cart", "to": "c-fra-1", "reason": "next to api"},
  {"serviceId": "cart", "to": "c-fra-1", "reason": "again, to be sure"},
  {"serviceId": "cart", "to": "c-lon-1"},
  {"serviceId": "ghost", "to": "c-fra-1", "reason": "a service we plan"},
  {"serviceId": "feed", "to": "c-mars-1"},
  {"serviceId": "feed", "to": "c-fra-1", "reason": "second try after a typo"},
  {"serviceId": "api", "to": "c-fra-1"},
  {"serviceId": "search", "to": "c-fra-stg"},
  {"serviceId": "index", "to": "c-par-1", "reason": "c-par-1 has room now that cart left"},
  {"serviceId": "notify", "to": "c-par-3"},
  {"serviceId": 7, "to": "c-fra-1"},
  "just move everything",
  {"service_id": "web", "to": "c-fra-1"},
  {"serviceId": "mailer", "to": "c-fra-1", "reason": {"text": "nested"}},
  {"serviceId": "mailer", "to": "c-par-1", "reason": "nearer notify", "confidence": "high"}
]"#;

fn hand() -> External {
    External {
        name: "hand".into(),
        response: parse_response(HAND.as_bytes()).map_err(DeciderError::from),
        run_time_ms: None,
    }
}

#[test]
fn comparison_refuses_each_illegal_proposal_and_scores_the_rest() {
    let e = estate();
    let p = Policy::default();
    let c = compare(&e, &p, now(), &[hand()]);
    expect![[r#"
        Estate decider test estate (version 3bb132851565070b), policy 795cfe0c62069052, evaluated at 2026-11-30T04:05:00Z
        Before: cost 267.1 (round trip 233.5, cross-site 25.6, headroom 8.0); cross-site traffic 3.2 MB/s

        == baseline (built in)
        5 proposals: 5 accepted (0 below the bar), 0 refused
        Projected gain +210.1 points (net of 2.0 points of data copying); cross-site traffic -3.1 MB/s; weakest confidence measured
        After: cost 54.9 (round trip 53.2, cross-site 0.8, headroom 0.9); cross-site traffic 0.1 MB/s
        Accepted, in the order applied:
          1. [0] cart c-par-1→c-fra-1 +60.9 [rtt +52.2, xsite +4.0, headroom +4.7] measured — worth it: gain +60.9 clears the bar of 9.4 points
          2. [1] feed c-par-1→c-fra-1 +59.8 [rtt +43.5, xsite +16.0, headroom +2.3, copy -2.0] measured — worth it: gain +59.8 clears the bar of 9.5 points
          3. [2] ledger c-lon-1→c-fra-1 +42.7 [rtt +41.1, xsite +1.6] measured — worth it: gain +42.7 clears the bar of 6.54 points
          4. [3] index c-par-3→c-fra-1 +28.5 [rtt +26.1, xsite +2.4] measured — worth it: gain +28.5 clears the bar of 4.41 points
          5. [4] notify c-par-2→c-fra-1 +18.2 [rtt +17.4, xsite +0.8] measured — worth it: gain +18.2 clears the bar of 2.82 points

        == heaviest-talker (built in)
        14 proposals: 6 accepted (1 below the bar), 8 refused
        Projected gain +111.0 points (net of 2.0 points of data copying); cross-site traffic -2.7 MB/s; weakest confidence measured
        After: cost 154.0 (round trip 149.1, cross-site 4.0, headroom 0.9); cross-site traffic 0.5 MB/s
        Accepted, in the order applied:
          1. [2] cart c-par-1→c-fra-1 +60.9 [rtt +52.2, xsite +4.0, headroom +4.7] measured — worth it: gain +60.9 clears the bar of 9.4 points
          2. [3] feed c-par-1→c-fra-1 +59.8 [rtt +43.5, xsite +16.0, headroom +2.3, copy -2.0] measured — worth it: gain +59.8 clears the bar of 9.5 points
          3. [4] index c-par-3→c-fra-1 +28.5 [rtt +26.1, xsite +2.4] measured — worth it: gain +28.5 clears the bar of 4.41 points
          4. [5] ledger c-lon-1→c-fra-1 +42.7 [rtt +41.1, xsite +1.6] measured — worth it: gain +42.7 clears the bar of 6.54 points
          5. [7] notify c-par-2→c-fra-1 +18.2 [rtt +17.4, xsite +0.8] measured — worth it: gain +18.2 clears the bar of 2.82 points
          6. [10] report c-fra-1→c-lon-1 -99.1 [rtt -95.9, xsite -3.2] measured — harmful: gain -99.1; the estate costs more after this move
        Proposals that were refused:
             [0] api → c-par-1: no_room_cpu — api does not fit on c-par-1: needs 4 cores but c-par-1 has at most 3.15 cores free (measured CPU ±5%)
             [1] batch → c-par-1: no_room_cpu — batch does not fit on c-par-1: needs 16 cores but c-par-1 has at most 3.15 cores free (measured CPU ±5%)
             [6] mailer → c-par-2: cluster_draining — c-par-2 is draining and takes no new services
             [8] orders → c-lon-1: jurisdiction — the data of orders may stay only in eu; c-lon-1 is in uk (lon)
             [9] payments → c-fra-1: pinned — payments is pinned to nodes of c-fra-pci; payments must run in trust zone pci; c-fra-1 is in general
             [11] search → c-par-3: cant_tell — can't tell whether search fits on c-par-3: needs 4 cores; c-par-3 has between 3 and 19 cores free (guessed fact, ±100%) (fact: c-par-3 cpu_free)
             [12] uk-tax → c-fra-1: local_volumes — uk-tax keeps its data on local volumes in c-lon-1; the data of uk-tax may stay only in uk; c-fra-1 is in eu (fra)
             [13] web → c-fra-pci: trust_zone — web must run in trust zone general; c-fra-pci is in pci

        == optimum (built in)
        Note: proven optimal after 4166 nodes: 267.07 → 56.94 points
        5 proposals: 5 accepted (0 below the bar), 0 refused
        Projected gain +210.1 points (net of 2.0 points of data copying); cross-site traffic -3.1 MB/s; weakest confidence measured
        After: cost 54.9 (round trip 53.2, cross-site 0.8, headroom 0.9); cross-site traffic 0.1 MB/s
        Accepted, in the order applied:
          1. [0] cart c-par-1→c-fra-1 +60.9 [rtt +52.2, xsite +4.0, headroom +4.7] measured — worth it: gain +60.9 clears the bar of 9.4 points
          2. [1] feed c-par-1→c-fra-1 +59.8 [rtt +43.5, xsite +16.0, headroom +2.3, copy -2.0] measured — worth it: gain +59.8 clears the bar of 9.5 points
          3. [2] index c-par-3→c-fra-1 +28.5 [rtt +26.1, xsite +2.4] measured — worth it: gain +28.5 clears the bar of 4.41 points
          4. [3] ledger c-lon-1→c-fra-1 +42.7 [rtt +41.1, xsite +1.6] measured — worth it: gain +42.7 clears the bar of 6.54 points
          5. [4] notify c-par-2→c-fra-1 +18.2 [rtt +17.4, xsite +0.8] measured — worth it: gain +18.2 clears the bar of 2.82 points

        == optimum-capped (built in)
        Note: proven optimal with at most 40 moves after 4166 nodes: 267.07 → 56.94 points
        5 proposals: 5 accepted (0 below the bar), 0 refused
        Projected gain +210.1 points (net of 2.0 points of data copying); cross-site traffic -3.1 MB/s; weakest confidence measured
        After: cost 54.9 (round trip 53.2, cross-site 0.8, headroom 0.9); cross-site traffic 0.1 MB/s
        Accepted, in the order applied:
          1. [0] cart c-par-1→c-fra-1 +60.9 [rtt +52.2, xsite +4.0, headroom +4.7] measured — worth it: gain +60.9 clears the bar of 9.4 points
          2. [1] feed c-par-1→c-fra-1 +59.8 [rtt +43.5, xsite +16.0, headroom +2.3, copy -2.0] measured — worth it: gain +59.8 clears the bar of 9.5 points
          3. [2] index c-par-3→c-fra-1 +28.5 [rtt +26.1, xsite +2.4] measured — worth it: gain +28.5 clears the bar of 4.41 points
          4. [3] ledger c-lon-1→c-fra-1 +42.7 [rtt +41.1, xsite +1.6] measured — worth it: gain +42.7 clears the bar of 6.54 points
          5. [4] notify c-par-2→c-fra-1 +18.2 [rtt +17.4, xsite +0.8] measured — worth it: gain +18.2 clears the bar of 2.82 points

        == local-search (built in)
        Note: simulated annealing, seed 0x6265727468524546, 111284 evaluations: 267.07 → 56.94 points
        5 proposals: 5 accepted (0 below the bar), 0 refused
        Projected gain +210.1 points (net of 2.0 points of data copying); cross-site traffic -3.1 MB/s; weakest confidence measured
        After: cost 54.9 (round trip 53.2, cross-site 0.8, headroom 0.9); cross-site traffic 0.1 MB/s
        Accepted, in the order applied:
          1. [0] cart c-par-1→c-fra-1 +60.9 [rtt +52.2, xsite +4.0, headroom +4.7] measured — worth it: gain +60.9 clears the bar of 9.4 points
          2. [1] feed c-par-1→c-fra-1 +59.8 [rtt +43.5, xsite +16.0, headroom +2.3, copy -2.0] measured — worth it: gain +59.8 clears the bar of 9.5 points
          3. [2] index c-par-3→c-fra-1 +28.5 [rtt +26.1, xsite +2.4] measured — worth it: gain +28.5 clears the bar of 4.41 points
          4. [3] ledger c-lon-1→c-fra-1 +42.7 [rtt +41.1, xsite +1.6] measured — worth it: gain +42.7 clears the bar of 6.54 points
          5. [4] notify c-par-2→c-fra-1 +18.2 [rtt +17.4, xsite +0.8] measured — worth it: gain +18.2 clears the bar of 2.82 points

        == hand (external)
        15 proposals: 4 accepted (2 below the bar), 11 refused
        Projected gain +68.3 points (net of 0.0 points of data copying); cross-site traffic -0.6 MB/s; weakest confidence guessed
        After: cost 198.8 (round trip 165.3, cross-site 20.8, headroom 12.7); cross-site traffic 2.6 MB/s
        Accepted, in the order applied:
          1. [0] cart c-par-1→c-fra-1 +60.9 [rtt +52.2, xsite +4.0, headroom +4.7] measured — worth it: gain +60.9 clears the bar of 9.4 points
          2. [8] index c-par-3→c-par-1 -7.0 [headroom -7.0] measured — harmful: gain -7.0; the estate costs more after this move
          3. [9] notify c-par-2→c-par-3 +0.0 [nothing changes] guessed — no gain: the estate costs the same after it
               Not enough evidence to recommend — 1 of 2 inputs is a guess.
          4. [14] mailer c-fra-1→c-par-1 +14.5 [rtt +16.0, xsite +0.8, headroom -2.3] reported — worth it: gain +14.5 clears the bar of 2.82 points
        Proposals that were refused:
             [1] cart → c-fra-1: proposed_twice — repeats the proposal at index 0 (cart to c-fra-1, accepted); a service is answered once
             [2] cart → c-lon-1: proposed_twice — cart was already proposed at index 0 (to c-fra-1, accepted); only a service's first proposal counts
             [3] ghost → c-fra-1: unknown_service — there is no service "ghost" in this estate
             [4] feed → c-mars-1: unknown_cluster — there is no cluster "c-mars-1" in this estate
             [5] feed → c-fra-1: proposed_twice — feed was already proposed at index 4 (to c-mars-1, refused); only a service's first proposal counts
             [6] api → c-fra-1: already_there — api already runs on c-fra-1
             [7] search → c-fra-stg: tier — search may run only on prod clusters; c-fra-stg is staging
             [10] ? → c-fra-1: malformed — `serviceId` must be a string, got the number 7
             [11] ? → ?: malformed — expected an object {"serviceId", "to", "reason"}, got the string "just move everything"
             [12] web → c-fra-1: malformed — missing `serviceId` (found `service_id`; the field is spelled `serviceId`)
             [13] mailer → c-fra-1: malformed — `reason` must be a string, got an object
    "#]]
    .assert_eq(&text::comparison(&c));
}

#[test]
fn order_matters_each_proposal_sees_the_ones_before_it() {
    let e = estate();
    let p = Policy::default();
    let alone = vec![RawProposal::Valid(Proposal {
        service_id: "index".into(),
        to: "c-par-1".into(),
        reason: String::new(),
    })];
    let r = score(&e, &p, now(), &alone);
    assert_eq!(r.accepted_count, 0);
    expect![[r#"
        [
          {
            "index": 0,
            "serviceId": "index",
            "to": "c-par-1",
            "reason": "",
            "code": "cant_tell",
            "message": "can't tell whether index fits on c-par-1: needs 3 cores; c-par-1 has between 2.85 and 3.15 cores free (measured fact, ±5%)",
            "fact": "c-par-1 cpu_free"
          }
        ]"#]]
    .assert_eq(&serde_json::to_string_pretty(&r.refused).unwrap());
}

#[test]
fn result_json_field_names_are_the_contract() {
    let e = estate();
    let p = Policy::default();
    let body = br#"{"proposals": [
        {"serviceId": "notify", "to": "c-fra-1", "reason": "off the draining cluster"},
        {"serviceId": "payments", "to": "c-fra-1"}
    ]}"#;
    let r = score(&e, &p, now(), &parse_response(body).unwrap());
    expect![[r#"
        {
          "proposals": 2,
          "accepted_count": 1,
          "refused_count": 1,
          "refused_by_code": {
            "pinned": 1
          },
          "below_bar_count": 0,
          "projected_gain": 18.200000000000017,
          "copy_cost": 0.0,
          "cross_site_mb_s_change": -0.10000000000000009,
          "weakest_confidence": "measured",
          "totals_after": {
            "cost": 248.86875,
            "round_trip": 216.1,
            "cross_site": 24.8,
            "headroom": 7.968749999999998,
            "cross_site_mb_s": 3.1
          },
          "accepted": [
            {
              "index": 0,
              "step": 1,
              "service": "notify",
              "from": "c-par-2",
              "to": "c-fra-1",
              "gain": 18.2,
              "current_cost": 18.8,
              "bar": 2.82,
              "clears_bars": true,
              "verdict": "worth it: gain +18.2 clears the bar of 2.82 points",
              "confidence": "measured",
              "terms": {
                "round_trip": 17.4,
                "cross_site": 0.8,
                "headroom": 0.0,
                "copy": 0.0
              },
              "reason": "off the draining cluster"
            }
          ],
          "refused": [
            {
              "index": 1,
              "serviceId": "payments",
              "to": "c-fra-1",
              "reason": "",
              "code": "pinned",
              "message": "payments is pinned to nodes of c-fra-pci; payments must run in trust zone pci; c-fra-1 is in general"
            }
          ]
        }"#]]
    .assert_eq(&serde_json::to_string_pretty(&r).unwrap());
}

#[test]
fn heaviest_talker_reads_only_the_request() {
    let e = estate();
    let p = Policy::default();
    let req = request::build(&e, &p, now());
    let proposals = HeaviestTalker.decide(&req);
    let lines: Vec<String> = proposals
        .iter()
        .map(|p| format!("{} → {}: {}", p.service_id, p.to, p.reason))
        .collect();
    expect![[r#"
        api → c-par-1: heaviest peer cart (weight 6 over both directions) runs on c-par-1
        batch → c-par-1: heaviest peer feed (weight 5 over both directions) runs on c-par-1
        cart → c-fra-1: heaviest peer api (weight 6 over both directions) runs on c-fra-1
        feed → c-fra-1: heaviest peer batch (weight 5 over both directions) runs on c-fra-1
        index → c-fra-1: heaviest peer search (weight 3 over both directions) runs on c-fra-1
        ledger → c-fra-1: heaviest peer report (weight 3 over both directions) runs on c-fra-1
        mailer → c-par-2: heaviest peer notify (weight 2 over both directions) runs on c-par-2
        notify → c-fra-1: heaviest peer mailer (weight 2 over both directions) runs on c-fra-1
        orders → c-lon-1: heaviest peer uk-tax (weight 3 over both directions) runs on c-lon-1
        payments → c-fra-1: heaviest peer web (weight 4 over both directions) runs on c-fra-1
        report → c-lon-1: heaviest peer ledger (weight 3 over both directions) runs on c-lon-1
        search → c-par-3: heaviest peer index (weight 3 over both directions) runs on c-par-3
        uk-tax → c-fra-1: heaviest peer orders (weight 3 over both directions) runs on c-fra-1
        web → c-fra-pci: heaviest peer payments (weight 4 over both directions) runs on c-fra-pci"#]]
    .assert_eq(&lines.join("\n"));
    // The request's order does not matter.
    let mut shuffled = req.clone();
    shuffled.services.reverse();
    shuffled.flows.reverse();
    assert_eq!(HeaviestTalker.decide(&shuffled), proposals);
}

fn assert_baseline_reproduces_advise(e: &Estate, now: i64) {
    let p = Policy::default();
    let advice = advise(e, &p, now);
    let req = request::build(e, &p, now);
    let proposals = decider::Baseline {
        estate: e,
        policy: &p,
        now,
    }
    .decide(&req);
    let raw: Vec<RawProposal> = proposals.into_iter().map(RawProposal::Valid).collect();
    let r = score(e, &p, now, &raw);
    assert!(!advice.moves.is_empty(), "the estate should have advice");
    assert!(r.refused.is_empty(), "refused: {:?}", r.refused);
    // Scoring judges each proposal alone: a compound step's members need
    // not clear a bar of their own (the group does).
    // The baseline proposes the recommended moves: those resting on
    // guesses are listed apart and not made.
    let recommended: Vec<&berth_engine::advise::Move> = advice
        .moves
        .iter()
        .filter(|m| m.evidence.is_none())
        .collect();
    let alone_below = r
        .accepted
        .iter()
        .zip(&recommended)
        .filter(|(a, m)| m.group.is_some() && !a.clears_bars)
        .count();
    assert_eq!(r.below_bar_count, alone_below);
    assert_eq!(r.accepted.len(), recommended.len());
    for (k, (a, m)) in r.accepted.iter().zip(&recommended).enumerate() {
        assert_eq!(
            (&a.service, &a.from, &a.to, a.step),
            (&m.service, &m.from, &m.to, k + 1)
        );
        assert_eq!(a.gain, m.gain, "{}", m.service);
        assert_eq!(a.terms, m.terms, "{}", m.service);
        assert_eq!(a.current_cost.to_bits(), m.current_cost.to_bits());
        if m.group.is_none() {
            assert_eq!(a.bar.to_bits(), m.bar.to_bits());
            assert_eq!(a.confidence, m.confidence);
            assert!(a.clears_bars);
        }
    }
    // The totals are reproduced exactly, to the last bit.
    for (x, y) in [
        (r.totals_after.cost, advice.totals_after.cost),
        (r.totals_after.round_trip, advice.totals_after.round_trip),
        (r.totals_after.cross_site, advice.totals_after.cross_site),
        (r.totals_after.headroom, advice.totals_after.headroom),
        (
            r.totals_after.cross_site_mb_s,
            advice.totals_after.cross_site_mb_s,
        ),
    ] {
        assert_eq!(x.to_bits(), y.to_bits());
    }
    let copy: f64 = recommended.iter().map(|m| -m.terms.copy).sum();
    let expected = advice.totals_before.cost - advice.totals_after.cost - copy;
    assert!((r.projected_gain - expected).abs() <= 1e-9 * expected.abs().max(1.0));
    assert_eq!(
        r.cross_site_mb_s_change,
        advice.totals_after.cross_site_mb_s - advice.totals_before.cross_site_mb_s
    );
    // And the sum of the per-move gains telescopes to the projected gain.
    let sum: f64 = r.accepted.iter().map(|a| a.gain).sum();
    assert!(
        (sum - r.projected_gain).abs() < 1e-6,
        "{sum} vs {}",
        r.projected_gain
    );
}

#[test]
fn baseline_through_score_reproduces_advise_exactly() {
    assert_baseline_reproduces_advise(&estate(), now());
    assert_baseline_reproduces_advise(&sample(), now());
}

fn sample() -> Estate {
    let text = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../examples/estates/sample.json"
    ))
    .unwrap();
    load(&text, Format::Json).unwrap()
}

#[test]
fn sample_estate_with_the_example_response() {
    let bytes = std::fs::read(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../examples/responses/sample-ops-team.json"
    ))
    .unwrap();
    let ext = External {
        name: "ops-team".into(),
        response: parse_response(&bytes).map_err(DeciderError::from),
        run_time_ms: None,
    };
    let e = sample();
    let p = Policy::default();
    let c = compare(&e, &p, now(), std::slice::from_ref(&ext));
    // Deterministic: the same input gives the same bytes.
    let json = serde_json::to_string_pretty(&c).unwrap();
    assert_eq!(
        json,
        serde_json::to_string_pretty(&compare(&e, &p, now(), &[ext])).unwrap()
    );
    let headline: Vec<String> = c
        .deciders
        .iter()
        .map(|d| {
            let r = d.result.as_ref().unwrap();
            format!(
                "{}: {} proposed, {} accepted ({} below the bar), {} refused, gain {}, cross-site {} MB/s, weakest {}",
                d.name,
                r.proposals,
                r.accepted_count,
                r.below_bar_count,
                r.refused_count,
                text::signed(r.projected_gain),
                text::signed(r.cross_site_mb_s_change),
                r.weakest_confidence.map_or("none", |c| c.as_str()),
            )
        })
        .collect();
    expect![[r#"
        baseline: 11 proposed, 11 accepted (2 below the bar), 0 refused, gain +636.6, cross-site -38.7 MB/s, weakest inferred
        heaviest-talker: 15 proposed, 3 accepted (0 below the bar), 12 refused, gain +464.2, cross-site -33.8 MB/s, weakest guessed
        optimum: 27 proposed, 27 accepted (14 below the bar), 0 refused, gain +709.3, cross-site -34.9 MB/s, weakest guessed
        optimum-capped: 27 proposed, 27 accepted (14 below the bar), 0 refused, gain +709.3, cross-site -34.9 MB/s, weakest guessed
        local-search: 27 proposed, 27 accepted (14 below the bar), 0 refused, gain +709.3, cross-site -34.9 MB/s, weakest guessed
        ops-team: 16 proposed, 5 accepted (2 below the bar), 11 refused, gain -197.2, cross-site -3.2 MB/s, weakest guessed"#]]
    .assert_eq(&headline.join("\n"));
    // The example reply exercises every refusal code a reply can earn on
    // the sample estate.
    let ops = c.deciders[2].result.as_ref().unwrap();
    let codes: Vec<&str> = ops.refused_by_code.keys().map(|c| c.as_str()).collect();
    expect![""].assert_eq(&codes.join(" "));
}

#[test]
fn external_error_entries_stand_in_for_the_result() {
    let e = estate();
    let p = Policy::default();
    let bad = External {
        name: "broken".into(),
        response: parse_response(b"{\"proposals\": [").map_err(DeciderError::from),
        run_time_ms: None,
    };
    let c = compare(&e, &p, now(), &[bad]);
    let entry =
        serde_json::to_string_pretty(&c.deciders.iter().find(|d| d.name == "broken").unwrap())
            .unwrap();
    expect![[r#"
        {
          "name": "broken",
          "kind": "external",
          "run_time_ms": null,
          "error": {
            "code": "not_json",
            "message": "not valid JSON: EOF while parsing a list at line 1 column 15"
          }
        }"#]]
    .assert_eq(&entry);
}

// ---------------------------------------------------------------------------
// Limits on untrusted replies.

fn err(body: &[u8]) -> String {
    let e = parse_response(body).expect_err("should be refused");
    format!("{}: {e}", e.code())
}

#[test]
fn both_reply_shapes_parse_the_same() {
    let list = br#"[{"serviceId": "cart", "to": "c-fra-1", "reason": "r"}]"#;
    let object =
        br#"{"version": 3, "proposals": [{"serviceId": "cart", "to": "c-fra-1", "reason": "r"}]}"#;
    let with_bom =
        b"\xEF\xBB\xBF[{\"serviceId\": \"cart\", \"to\": \"c-fra-1\", \"reason\": \"r\"}]";
    let a = parse_response(list).unwrap();
    assert_eq!(a, parse_response(object).unwrap());
    assert_eq!(a, parse_response(with_bom).unwrap());
    assert_eq!(
        a,
        vec![RawProposal::Valid(Proposal {
            service_id: "cart".into(),
            to: "c-fra-1".into(),
            reason: "r".into()
        })]
    );
    // `reason` may be left out; the canonical type round-trips.
    let no_reason = parse_response(br#"{"proposals": [{"serviceId": "cart", "to": "c-fra-1"}]}"#);
    let canonical = decider::DeciderResponse {
        proposals: vec![Proposal {
            service_id: "cart".into(),
            to: "c-fra-1".into(),
            reason: String::new(),
        }],
    };
    let text = serde_json::to_string(&canonical).unwrap();
    expect![[r#"{"proposals":[{"serviceId":"cart","to":"c-fra-1","reason":""}]}"#]]
        .assert_eq(&text);
    assert_eq!(no_reason.unwrap(), parse_response(text.as_bytes()).unwrap());
    assert_eq!(parse_response(b"[]").unwrap(), vec![]);
    assert_eq!(parse_response(br#"{"proposals": []}"#).unwrap(), vec![]);
}

#[test]
fn nesting_is_bounded_before_deserialising() {
    // Nine levels: refused with the place named.
    let nine = br#"{"proposals": [{"serviceId": "a", "to": "b", "x": [[[[[[1]]]]]]}]}"#;
    expect!["too_deep: JSON nested deeper than 8 levels (line 1, column 56)"].assert_eq(&err(nine));
    // Eight levels are fine (extra fields are ignored).
    let eight = br#"{"proposals": [{"serviceId": "a", "to": "b", "x": [[[[[1]]]]]}]}"#;
    assert_eq!(parse_response(eight).unwrap().len(), 1);
    // Brackets inside strings do not count.
    let quoted = br#"[{"serviceId": "[[[[[[[[[[\"{{{{{{{{{{", "to": "b"}]"#;
    assert_eq!(parse_response(quoted).unwrap().len(), 1);
    // A body of a million brackets (far past serde_json's own recursion
    // limit, and enough to overflow a recursive parser's stack) is refused
    // by the scan at once.
    let deep = vec![b'['; 1_000_000];
    expect!["too_deep: JSON nested deeper than 8 levels (line 1, column 9)"].assert_eq(&err(&deep));
    let deep_objects = "{\"a\":".repeat(100_000);
    expect!["too_deep: JSON nested deeper than 8 levels (line 1, column 41)"]
        .assert_eq(&err(deep_objects.as_bytes()));
}

#[test]
fn proposal_count_and_body_size_are_bounded() {
    let one = r#"{"serviceId":"s","to":"c"}"#;
    let list = |n: usize| format!("[{}]", vec![one; n].join(","));
    assert_eq!(
        parse_response(list(MAX_PROPOSALS).as_bytes())
            .unwrap()
            .len(),
        MAX_PROPOSALS
    );
    expect!["too_many: 10001 proposals; at most 10000 are accepted"]
        .assert_eq(&err(list(MAX_PROPOSALS + 1).as_bytes()));
    let big = format!("[{}]", " ".repeat(MAX_BODY_BYTES));
    expect!["too_large: the body is larger than the limit of 4194304 bytes"]
        .assert_eq(&err(big.as_bytes()));
}

#[test]
fn overlong_strings_refuse_only_their_item() {
    let long = "x".repeat(300);
    let body = format!(
        r#"[{{"serviceId": "{long}", "to": "c-fra-1"}},
            {{"serviceId": "cart", "to": "c-fra-1", "reason": "{long}"}},
            {{"serviceId": "cart", "to": "c-fra-1", "reason": "fine"}},
            {{"serviceId": "", "to": "  "}}]"#
    );
    let items = parse_response(body.as_bytes()).unwrap();
    assert_eq!(items.len(), 4);
    let messages: Vec<String> = items
        .iter()
        .map(|i| match i {
            RawProposal::Valid(p) => format!("valid {} → {}", p.service_id, p.to),
            RawProposal::Malformed {
                service_id,
                message,
                ..
            } => format!(
                "malformed ({} bytes of serviceId shown): {message}",
                service_id.as_deref().map_or(0, str::len)
            ),
        })
        .collect();
    expect![[r#"
        malformed (259 bytes of serviceId shown): `serviceId` is 300 bytes long; at most 256 are accepted
        malformed (4 bytes of serviceId shown): `reason` is 300 bytes long; at most 256 are accepted
        valid cart → c-fra-1
        malformed (0 bytes of serviceId shown): `serviceId` is empty; `to` is empty"#]].assert_eq(&messages.join("\n"));
    // Scored, the first two and the last are refused one by one and the
    // third is accepted.
    let r = score(&estate(), &Policy::default(), now(), &items);
    assert_eq!(r.accepted_count, 1);
    assert_eq!(
        r.refused.iter().map(|r| r.index).collect::<Vec<_>>(),
        [0, 1, 3]
    );
}

#[test]
fn bodies_that_are_not_a_reply_are_named_clearly() {
    let cases: [&[u8]; 9] = [
        b"",
        b"not json",
        b"{\"proposals\": [\n  {\"serviceId\": \"a\", \"to\": \"b\"},\n  oops\n]}",
        b"[] trailing",
        b"\xff\xfe[]",
        b"42",
        b"{\"moves\": []}",
        b"{\"proposals\": {\"serviceId\": \"a\"}}",
        b"{\"proposals\": [], \"proposals\": []}",
    ];
    let out: Vec<String> = cases.iter().map(|c| err(c)).collect();
    expect![[r#"
        not_json: not valid JSON: EOF while parsing a value at line 1 column 0
        not_json: not valid JSON: expected ident at line 1 column 2
        not_json: not valid JSON: expected value at line 3 column 3
        not_json: not valid JSON: trailing characters at line 1 column 4
        not_json: not valid JSON: the body is not UTF-8 (invalid byte at line 1, column 1)
        wrong_shape: not a decider reply: invalid type: integer `42`, expected a list of proposals or an object {"proposals": [...]} at line 1 column 2
        wrong_shape: not a decider reply: the reply object has no `proposals` list at line 1 column 13
        wrong_shape: not a decider reply: invalid type: map, expected `proposals` to be a list of proposals at line 1 column 14
        wrong_shape: not a decider reply: `proposals` appears twice at line 1 column 29"#]].assert_eq(&out.join("\n"));
}

#[test]
fn requests_round_trip_and_are_bounded() {
    let e = sample();
    let req = request::build(&e, &Policy::default(), now());
    let bytes = serde_json::to_vec(&req).unwrap();
    // Exactly what plain deserialisation gives (serde_json's default float
    // parsing may differ from the original in the last bit, so compare the
    // two parses rather than the parse with the original).
    let parsed = parse_request(&bytes).unwrap();
    assert_eq!(
        parsed,
        serde_json::from_slice::<request::DeciderRequest>(&bytes).unwrap()
    );
    assert_eq!(parsed.services.len(), req.services.len());
    assert_eq!(parsed.estate_version, req.estate_version);
    let mut v: serde_json::Value = serde_json::from_slice(&bytes).unwrap();
    v["schema"] = 2.into();
    let two = serde_json::to_vec(&v).unwrap();
    assert!(matches!(
        parse_request(&two),
        Err(BodyError::WrongShape { .. })
    ));
    v["schema"] = 1.into();
    v["services"][0]["id"] = "y".repeat(300).into();
    let long = serde_json::to_vec(&v).unwrap();
    expect!["a service field is 300 bytes long; at most 256 are accepted"]
        .assert_eq(&parse_request(&long).unwrap_err().to_string());
    assert!(matches!(
        parse_request(&vec![b'['; 10_000]),
        Err(BodyError::TooDeep { .. })
    ));
}
