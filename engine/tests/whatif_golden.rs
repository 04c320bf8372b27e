//! Golden tests of what-if projections (SPEC §8): every warning code,
//! evacuation with services that cannot leave, and capacity sensitivity
//! checked by re-running with the figure just past and just short of the
//! reported tolerance. Update with
//! `UPDATE_EXPECT=1 cargo test --test whatif_golden` and review the diff.

mod common;

use std::collections::BTreeSet;

use berth_engine::policy::Policy;
use berth_engine::whatif::{self, project, Projection, Scenario, WarningCode};
use berth_engine::{gen, text, Estate};
use common::*;
use expect_test::expect;
use serde_json::json;

fn scenario(name: &str, steps: serde_json::Value) -> Scenario {
    let text = json!({"schema": 1, "name": name, "steps": steps}).to_string();
    Scenario::from_json(&text).unwrap_or_else(|e| panic!("{e:?}"))
}

fn run(e: &Estate, s: &Scenario) -> Projection {
    project(e, &Policy::default(), NOW, s).unwrap_or_else(|e| panic!("{e:?}"))
}

/// An estate where every hard constraint, capacity verdict and scenario
/// mistake can be provoked.
fn troubled_estate() -> Estate {
    let mut nw = cluster("c-nw", "fra", 32.0, 16.0);
    nw["cpu_free"] = json!(null);
    let mut lon = cluster("c-lon-1", "lon", 32.0, 10.0);
    lon["cpu_free"]["class"] = json!("reported");
    lon["memory_free_gib"]["class"] = json!("reported");
    estate(
        vec![
            cluster("c-fra-1", "fra", 128.0, 20.0),
            cluster("c-fra-2", "fra", 64.0, 6.0),
            with(
                cluster("c-fra-pci", "fra", 32.0, 16.0),
                "trust_zone",
                json!("pci"),
            ),
            with(
                cluster("c-par-1", "par", 64.0, 30.0),
                "health",
                json!("draining"),
            ),
            with(
                cluster("c-par-down", "par", 32.0, 16.0),
                "health",
                json!("down"),
            ),
            lon,
            cluster("c-iad-1", "iad", 64.0, 30.0),
            with(
                cluster("c-stg", "fra", 32.0, 16.0),
                "tier",
                json!("staging"),
            ),
            nw,
        ],
        vec![
            // On the draining Paris cluster.
            service("web", "shop", "c-par-1", 4.0),
            service("api", "shop", "c-par-1", 2.0),
            service("worker", "shop", "c-par-1", 1.0),
            with(
                service("par-db", "shop", "c-par-1", 2.0),
                "constraints",
                json!({"local_volumes": true}),
            ),
            with(
                service("par-job", "ops", "c-par-1", 0.5),
                "constraints",
                json!({"pinned": true}),
            ),
            with(
                service("edge-proxy", "shop", "c-par-1", 1.0),
                "constraints",
                json!({"tiers": ["edge"]}),
            ),
            // Elsewhere.
            with(
                service("pay", "payments", "c-fra-1", 2.0),
                "constraints",
                json!({"pinned": true}),
            ),
            with(
                service("vault", "payments", "c-fra-1", 1.0),
                "constraints",
                json!({"local_volumes": true}),
            ),
            with(
                service("ledger", "finance", "c-fra-1", 20.0),
                "constraints",
                json!({"jurisdictions": ["eu"]}),
            ),
            service("reports", "finance", "c-fra-1", 1.0),
            service("big", "ops", "c-fra-1", 30.0),
            service("lon-app", "shop", "c-fra-1", 9.5),
            service("nw-app", "ops", "c-fra-1", 1.0),
            with(
                service("secure", "payments", "c-fra-pci", 2.0),
                "constraints",
                json!({"trust_zone": "pci"}),
            ),
            with(
                service("stg-app", "shop", "c-stg", 1.0),
                "constraints",
                json!({"tiers": ["staging"]}),
            ),
            service("batch", "ops", "c-stg", 1.0),
            service("cron", "ops", "c-stg", 1.0),
            // One Deployment imported from two clusters.
            imported("ui", "c-fra-2", 0.5),
            imported("c-fra-1/ui", "c-fra-1", 0.5),
        ],
        vec![
            flow("web", "api", 2.0, 1.0),
            flow("api", "par-db", 1.0, 0.5),
            flow("worker", "api", 0.5, 0.1),
        ],
    )
}

/// Every step of this scenario breaks something.
fn troubled_scenario() -> Scenario {
    scenario(
        "every warning",
        json!([
            {"evacuate": "c-par-1"},
            {"move": {"service": "pay", "to": "c-fra-2"}},
            {"move": {"service": "vault", "to": "c-fra-2"}},
            {"move": {"service": "ledger", "to": "c-iad-1"}},
            {"move": {"service": "secure", "to": "c-fra-1"}},
            {"move": {"service": "stg-app", "to": "c-fra-1"}},
            {"move": {"service": "batch", "to": "c-par-down"}},
            {"move": {"service": "cron", "to": "c-par-1"}},
            {"move": {"service": "web", "to": "c-fra-1"}},
            {"move": {"service": "reports", "to": "c-fra-1"}},
            {"move": {"service": "big", "to": "c-fra-2"}},
            {"move": {"service": "lon-app", "to": "c-lon-1"}},
            {"move": {"service": "nw-app", "to": "c-nw"}},
            {"move": {"service": "ui", "to": "c-fra-1"}},
        ]),
    )
}

/// A service as `berth import kubernetes` writes it: `ui-team`'s
/// Deployment `default/ui` of `cluster` (its `source` names the workload).
fn imported(id: &str, cluster: &str, cpu: f64) -> serde_json::Value {
    let mut s = service(id, "ui-team", cluster, cpu);
    s["source"] = json!(format!("kubernetes:{cluster}/default/Deployment/ui"));
    s
}

#[test]
fn every_warning_code() {
    let p = run(&troubled_estate(), &troubled_scenario());
    let seen: BTreeSet<WarningCode> = p.warnings.iter().map(|w| w.code).collect();
    let all: BTreeSet<WarningCode> = WarningCode::ALL.into_iter().collect();
    assert_eq!(seen, all, "codes not provoked: {:?}", all.difference(&seen));
    expect![[r#"
        What-if "every warning" on test (version e333f497d2810c2f), policy 795cfe0c62069052, evaluated at 2026-11-30T04:05:00Z

                               before      after     change
        cost (points)            23.5      141.5     +117.9
          round trip              1.0       11.2      +10.1
          cross-site              0.0        4.0       +4.0
          headroom               22.5      126.3     +103.8
        cross-site MB/s           0.0        0.5       +0.5

        Moves, in order:
          step 1   evacuate web c-par-1→c-nw
          step 1   evacuate api c-par-1→c-stg
          step 1   evacuate worker c-par-1→c-stg
          step 2   move     pay c-fra-1→c-fra-2
          step 3   move     vault c-fra-1→c-fra-2
          step 4   move     ledger c-fra-1→c-iad-1
          step 5   move     secure c-fra-pci→c-fra-1
          step 6   move     stg-app c-stg→c-fra-1
          step 7   move     batch c-stg→c-par-down
          step 8   move     cron c-stg→c-par-1
          step 9   move     web c-nw→c-fra-1
          step 11  move     big c-fra-1→c-fra-2
          step 12  move     lon-app c-fra-1→c-lon-1
          step 13  move     nw-app c-fra-1→c-nw
          step 14  move     ui c-fra-2→c-fra-1

        Evacuating c-par-1 (step 1): 3 placed, 3 cannot leave
          web → c-nw score -24.1 [headroom +1.9, network -26.0]
          api → c-stg score -17.9 [headroom +4.4, network -20.3, blast_radius -2.0]
          worker → c-stg score -0.1 [headroom +4.1, network -0.2, blast_radius -4.0]
          par-db stays: par-db keeps its data on local volumes in c-par-1
          edge-proxy stays: trust_zone on c-fra-pci (e.g. edge-proxy runs in trust zone general and declares no other (trust zones are never crossed implicitly); c-fra-pci is in pci)
          edge-proxy stays: tier on c-fra-1, c-fra-2, c-fra-pci, c-iad-1, c-lon-1, c-nw, c-par-down, c-stg (e.g. edge-proxy may run only on edge clusters; c-fra-1 is prod)
          edge-proxy stays: cluster_down on c-par-down (e.g. c-par-down is down)
          par-job stays: par-job is pinned to nodes of c-par-1

        Clusters whose load changes:
          c-fra-1      CPU   -56.5 cores   84.4% → 40.2%   memory   -226.0 GiB   84.4% → 40.2%
          c-fra-2      CPU   +32.5 cores   90.6% → 141.4%  memory   +130.0 GiB   90.6% → 141.4%
          c-fra-pci    CPU    -2.0 cores   50.0% → 43.8%   memory     -8.0 GiB   50.0% → 43.8%
          c-iad-1      CPU   +20.0 cores   53.1% → 84.4%   memory    +80.0 GiB   53.1% → 84.4%
          c-lon-1      CPU    +9.5 cores   68.8% → 98.4%   memory    +38.0 GiB   68.8% → 98.4%
          c-nw         CPU    +1.0 cores       ? → ?       memory     +4.0 GiB   50.0% → 53.1%
          c-par-1      CPU    -6.0 cores   53.1% → 43.8%   memory    -24.0 GiB   53.1% → 43.8%   (evacuated; what remains is load not modelled as services)
          c-par-down   CPU    +1.0 cores   50.0% → 53.1%   memory     +4.0 GiB   50.0% → 53.1%

        Warnings:
          [cannot_leave] step 1: par-db cannot leave c-par-1: par-db keeps its data on local volumes in c-par-1
          [cannot_leave] step 1: edge-proxy cannot leave c-par-1: trust_zone on c-fra-pci; tier on c-fra-1, c-fra-2, c-fra-pci, c-iad-1, c-lon-1, c-nw, c-par-down, c-stg; cluster_down on c-par-down
          [cannot_leave] step 1: par-job cannot leave c-par-1: par-job is pinned to nodes of c-par-1
          [pinned] step 2 moves pay to c-fra-2, but pay is pinned to nodes of c-fra-1
          [local_volumes] step 3 moves vault to c-fra-2, but vault keeps its data on local volumes in c-fra-1
          [jurisdiction] step 4 moves ledger to c-iad-1, but the data of ledger may stay only in eu; c-iad-1 is in us (iad)
          [trust_zone] step 5 moves secure to c-fra-1, but secure must run in trust zone pci; c-fra-1 is in general
          [tier] step 6 moves stg-app to c-fra-1, but stg-app may run only on staging clusters; c-fra-1 is prod
          [cluster_down] step 7 moves batch to c-par-down, but c-par-down is down
          [into_evacuated] step 8 moves cron onto c-par-1, which step 1 evacuates
          [cluster_draining] step 8 moves cron to c-par-1, but c-par-1 is draining and takes no new services
          [moved_again] step 9 moves web again: step 1 already moved it to c-nw
          [no_op] step 10: reports is already on c-fra-1; nothing moves
          [duplicate_workload] step 14 moves ui onto c-fra-1, where c-fra-1/ui, a copy of the same Kubernetes workload (Deployment default/ui), already runs: the two are one object there, counted once (c-fra-1/ui's requests); ui's requests are not added to c-fra-1
          [over_capacity] c-fra-2 would take 32.5 cores more CPU (big, pay, vault) but has 6 cores free (measured ±5%): at most 6.3 cores — that capacity does not exist
          [over_capacity] c-fra-2 would take 130 GiB more memory (big, pay, vault) but has 24 GiB free (measured ±5%): at most 25.2 GiB — that capacity does not exist
          [over_target] c-iad-1 CPU would be at 84.38% after the scenario (53.13% before; target 80%)
          [over_target] c-iad-1 memory would be at 84.38% after the scenario (53.13% before; target 80%)
          [cant_tell] c-lon-1 would take 9.5 cores more CPU (lon-app) and has 10 cores free (reported ±15%): between 8.5 and 11.5 cores, so whether it fits can't be told
          [cant_tell] c-lon-1 would take 38 GiB more memory (lon-app) and has 40 GiB free (reported ±15%): between 34 and 46 GiB, so whether it fits can't be told
          [cant_tell] c-nw would take 1 cores more CPU (nw-app) but its free CPU is unknown

        Capacity sensitivity (how far each free-capacity figure may be wrong before its verdict flips):
          c-fra-2 cpu_free = 6 cores, scenario adds 32.5: does not fit unless the figure is more than 441.7% too low (certain: beyond the ±5% margin of a measured figure)
          c-fra-2 memory_free_gib = 24 GiB, scenario adds 130: does not fit unless the figure is more than 441.7% too low (certain: beyond the ±5% margin of a measured figure)
          c-iad-1 cpu_free = 30 cores, scenario adds 20: fits unless the figure is more than 33.3% too high (certain: beyond the ±5% margin of a measured figure)
          c-iad-1 memory_free_gib = 120 GiB, scenario adds 80: fits unless the figure is more than 33.3% too high (certain: beyond the ±5% margin of a measured figure)
          c-lon-1 cpu_free = 10 cores, scenario adds 9.5: fits unless the figure is more than 5.0% too high (can't tell: within the ±15% margin of a reported figure)
          c-lon-1 memory_free_gib = 40 GiB, scenario adds 38: fits unless the figure is more than 5.0% too high (can't tell: within the ±15% margin of a reported figure)
          c-nw memory_free_gib = 64 GiB, scenario adds 4: fits unless the figure is more than 93.8% too high (certain: beyond the ±5% margin of a measured figure)
          c-par-down cpu_free = 16 cores, scenario adds 1: fits unless the figure is more than 93.8% too high (certain: beyond the ±5% margin of a measured figure)
          c-par-down memory_free_gib = 64 GiB, scenario adds 4: fits unless the figure is more than 93.8% too high (certain: beyond the ±5% margin of a measured figure)
    "#]]
    .assert_eq(&text::projection(&p));
}

/// The example scenario shipped in `examples/scenarios/`.
#[test]
fn sample_retire_c_par_2() {
    let text = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../examples/scenarios/retire-c-par-2.json"
    ))
    .unwrap();
    let s = Scenario::from_json(&text).unwrap();
    let p = run(&sample(), &s);
    expect![[r#"
        What-if "Retire c-par-2, and run fraud scoring next to the shop" on Acme Retail (sample estate) (version 45a6a1d18de3381b), policy 795cfe0c62069052, evaluated at 2026-11-30T04:05:00Z

                               before      after     change
        cost (points)          1687.4     1646.8      -40.6
          round trip           1045.1     1015.7      -29.4
          cross-site            616.9      605.7      -11.2
          headroom               25.5       25.5       +0.0
        cross-site MB/s          77.1       75.7       -1.4

        Moves, in order:
          step 1   evacuate invoice-pdf c-par-2→c-fra-3
          step 1   evacuate notifications c-par-2→c-fra-3
          step 1   evacuate email-sender c-par-2→c-fra-3
          step 1   evacuate fr-batch-cron c-par-2→c-fra-3
          step 2   move     fraud-scoring c-fra-pci→c-fra-2
          step 3   move     payments c-fra-pci→c-fra-2

        Evacuating c-par-2 (step 1): 4 placed, 0 cannot leave
          invoice-pdf → c-fra-3 score +11.5 [headroom +9.3, network -0.7, youth +2.9]
          notifications → c-fra-3 score +3.1 [headroom +9.0, network -8.8, youth +2.9]
          email-sender → c-fra-3 score +9.6 [headroom +8.8, network -0.1, blast_radius -2.0, youth +2.9]
          fr-batch-cron → c-fra-3 score +9.7 [headroom +8.8, blast_radius -2.0, youth +2.9]

        Clusters whose load changes:
          c-fra-2      CPU   +10.0 cores   59.4% → 67.2%   memory    +24.0 GiB   53.9% → 58.6%
          c-fra-3      CPU   +12.5 cores    1.6% → 14.6%   memory    +25.0 GiB    3.4% → 9.9%
          c-fra-pci    CPU   -10.0 cores   56.2% → 35.4%   memory    -24.0 GiB   45.8% → 33.3%
          c-par-2      CPU   -12.5 cores   35.9% → 16.4%   memory    -25.0 GiB   33.6% → 23.8%   (evacuated; what remains is load not modelled as services)

        Warnings:
          [trust_zone] step 2 moves fraud-scoring to c-fra-2, but fraud-scoring must run in trust zone pci; c-fra-2 is in general
          [pinned] step 3 moves payments to c-fra-2, but payments is pinned to nodes of c-fra-pci
          [trust_zone] step 3 moves payments to c-fra-2, but payments must run in trust zone pci; c-fra-2 is in general

        Capacity sensitivity (how far each free-capacity figure may be wrong before its verdict flips):
          c-fra-2 cpu_free = 52 cores, scenario adds 10: fits unless the figure is more than 80.8% too high (certain: beyond the ±5% margin of a measured figure)
          c-fra-2 memory_free_gib = 236 GiB, scenario adds 24: fits unless the figure is more than 89.8% too high (certain: beyond the ±5% margin of a measured figure)
          c-fra-3 cpu_free = 94.5 cores, scenario adds 12.5: fits unless the figure is more than 86.8% too high (certain: beyond the ±5% margin of a measured figure)
          c-fra-3 memory_free_gib = 371 GiB, scenario adds 25: fits unless the figure is more than 93.3% too high (certain: beyond the ±5% margin of a measured figure)
    "#]]
    .assert_eq(&text::projection(&p));
}

/// A service whose CPU request is unknown moved by hand: the move is
/// applied as written (a what-if is not advice), the known memory request
/// moves, the unknown CPU moves no known load, and the CPU verdict on the
/// receiving cluster is can't tell, with the service named and no CPU
/// sensitivity row (there is no figure it could rest on). Memory keeps its
/// verdict. Evacuating c-a places known requests first: `big` (2 cores)
/// before `db` (unknown).
#[test]
fn unknown_request_moves_are_cant_tell() {
    let e = estate(
        vec![
            cluster("c-a", "fra", 100.0, 50.0),
            cluster("c-b", "fra", 100.0, 50.0),
            cluster("c-c", "fra", 100.0, 50.0),
        ],
        vec![
            json!({"id": "db", "owner": "team", "cluster": "c-a", "cpu": null, "memory_gib": 8}),
            service("big", "team", "c-a", 2.0),
        ],
        vec![],
    );
    let s = scenario(
        "unknown request",
        json!([{"move": {"service": "db", "to": "c-b"}}]),
    );
    let mut out = text::projection(&run(&e, &s));
    let s2 = scenario("evacuate", json!([{"evacuate": "c-a"}]));
    out += &text::projection(&run(&e, &s2));
    expect![[r#"
        What-if "unknown request" on test (version 0ff8e8c03c37648d), policy 795cfe0c62069052, evaluated at 2026-11-30T04:05:00Z

                               before      after     change
        cost (points)             0.0        0.0       +0.0
          round trip              0.0        0.0       +0.0
          cross-site              0.0        0.0       +0.0
          headroom                0.0        0.0       +0.0
        cross-site MB/s           0.0        0.0       +0.0

        Moves, in order:
          step 1   move     db c-a→c-b

        Clusters whose load changes:
          c-a          CPU    +0.0 cores   50.0% → 50.0%   memory     -8.0 GiB   50.0% → 48.0%
                       CPU change leaves out the unknown request of db
          c-b          CPU    +0.0 cores   50.0% → 50.0%   memory     +8.0 GiB   50.0% → 52.0%
                       CPU change leaves out the unknown request of db

        Warnings:
          [cant_tell] c-b would take db whose CPU request is unknown, so whether it fits can't be told

        Capacity sensitivity (how far each free-capacity figure may be wrong before its verdict flips):
          c-b memory_free_gib = 200 GiB, scenario adds 8: fits unless the figure is more than 96.0% too high (certain: beyond the ±5% margin of a measured figure)
        What-if "evacuate" on test (version 0ff8e8c03c37648d), policy 795cfe0c62069052, evaluated at 2026-11-30T04:05:00Z

                               before      after     change
        cost (points)             0.0        0.0       +0.0
          round trip              0.0        0.0       +0.0
          cross-site              0.0        0.0       +0.0
          headroom                0.0        0.0       +0.0
        cross-site MB/s           0.0        0.0       +0.0

        Moves, in order:
          step 1   evacuate big c-a→c-b
          step 1   evacuate db c-a→c-c

        Evacuating c-a (step 1): 2 placed, 0 cannot leave
          big → c-b score +4.8 [headroom +4.8]
          db → c-c score +2.4 [headroom +2.4]

        Clusters whose load changes:
          c-a          CPU    -2.0 cores   50.0% → 48.0%   memory    -16.0 GiB   50.0% → 46.0%   (evacuated; what remains is load not modelled as services)
                       CPU change leaves out the unknown request of db
          c-b          CPU    +2.0 cores   50.0% → 52.0%   memory     +8.0 GiB   50.0% → 52.0%
          c-c          CPU    +0.0 cores   50.0% → 50.0%   memory     +8.0 GiB   50.0% → 52.0%
                       CPU change leaves out the unknown request of db

        Warnings:
          [cant_tell] c-c would take db whose CPU request is unknown, so whether it fits can't be told

        Capacity sensitivity (how far each free-capacity figure may be wrong before its verdict flips):
          c-b cpu_free = 50 cores, scenario adds 2: fits unless the figure is more than 96.0% too high (certain: beyond the ±5% margin of a measured figure)
          c-b memory_free_gib = 200 GiB, scenario adds 8: fits unless the figure is more than 96.0% too high (certain: beyond the ±5% margin of a measured figure)
          c-c memory_free_gib = 200 GiB, scenario adds 8: fits unless the figure is more than 96.0% too high (certain: beyond the ±5% margin of a measured figure)
    "#]].assert_eq(&out);
}

/// Evacuating the sample's busiest cluster: the databases on local
/// volumes cannot leave; everything else is placed one by one, each
/// placement seeing the ones before it.
#[test]
fn sample_evacuate_c_fra_1_leaves_local_volumes_behind() {
    let s = scenario("evacuate c-fra-1", json!([{"evacuate": "c-fra-1"}]));
    let p = run(&sample(), &s);
    let e = &p.evacuations[0];
    let stuck: Vec<&str> = e.stuck.iter().map(|s| s.service.as_str()).collect();
    assert_eq!(stuck, ["orders-db", "catalog-db", "cart-redis"]);
    expect![[r#"
        What-if "evacuate c-fra-1" on Acme Retail (sample estate) (version 45a6a1d18de3381b), policy 795cfe0c62069052, evaluated at 2026-11-30T04:05:00Z

                               before      after     change
        cost (points)          1687.4     1700.5      +13.0
          round trip           1045.1     1080.3      +35.2
          cross-site            616.9      616.9       +0.0
          headroom               25.5        3.3      -22.2
        cross-site MB/s          77.1       77.1       +0.0

        Moves, in order:
          step 1   evacuate shop-frontend c-fra-1→c-fra-2
          step 1   evacuate catalog c-fra-1→c-fra-3
          step 1   evacuate shop-bff c-fra-1→c-fra-3
          step 1   evacuate checkout c-fra-1→c-fra-3
          step 1   evacuate orders c-fra-1→c-fra-3
          step 1   evacuate shop-gateway c-fra-1→c-fra-3
          step 1   evacuate inventory c-fra-1→c-fra-3
          step 1   evacuate pricing c-fra-1→c-fra-3
          step 1   evacuate session-store c-fra-1→c-fra-3
          step 1   evacuate clickstream-collector c-fra-1→c-fra-3
          step 1   evacuate cdc-connector c-fra-1→c-fra-3

        Evacuating c-fra-1 (step 1): 11 placed, 3 cannot leave
          shop-frontend → c-fra-2 score -13.4 [headroom +2.9, network -16.3]
          catalog → c-fra-3 score -107.1 [headroom +8.7, network -118.8, youth +2.9]
          shop-bff → c-fra-3 score -109.3 [headroom +7.8, network -120.0, youth +2.9]
          checkout → c-fra-3 score -44.3 [headroom +7.1, network -54.4, youth +2.9]
          orders → c-fra-3 score -118.1 [headroom +6.5, network -127.5, youth +2.9]
          shop-gateway → c-fra-3 score -9.1 [headroom +5.9, network -16.0, blast_radius -2.0, youth +2.9]
          inventory → c-fra-3 score -26.3 [headroom +5.4, network -34.6, youth +2.9]
          pricing → c-fra-3 score -8.0 [headroom +5.0, network -13.9, blast_radius -2.0, youth +2.9]
          session-store → c-fra-3 score +2.6 [headroom +4.4, network -4.8, youth +2.9]
          clickstream-collector → c-fra-3 score -23.8 [headroom +4.1, network -30.9, youth +2.9]
          cdc-connector → c-fra-3 score -40.0 [headroom +4.0, network -44.9, blast_radius -2.0, youth +2.9]
          orders-db stays: orders-db keeps its data on local volumes in c-fra-1
          catalog-db stays: catalog-db keeps its data on local volumes in c-fra-1
          cart-redis stays: cart-redis keeps its data on local volumes in c-fra-1

        Clusters whose load changes:
          c-fra-1      CPU   -94.0 cores   97.1% → 48.2%   memory   -212.0 GiB   92.4% → 64.8%   (evacuated; what remains is load not modelled as services)
          c-fra-2      CPU   +24.0 cores   59.4% → 78.1%   memory    +48.0 GiB   53.9% → 63.3%
          c-fra-3      CPU   +70.0 cores    1.6% → 74.5%   memory   +164.0 GiB    3.4% → 46.1%

        Warnings:
          [cannot_leave] step 1: orders-db cannot leave c-fra-1: orders-db keeps its data on local volumes in c-fra-1
          [cannot_leave] step 1: catalog-db cannot leave c-fra-1: catalog-db keeps its data on local volumes in c-fra-1
          [cannot_leave] step 1: cart-redis cannot leave c-fra-1: cart-redis keeps its data on local volumes in c-fra-1

        Capacity sensitivity (how far each free-capacity figure may be wrong before its verdict flips):
          c-fra-2 cpu_free = 52 cores, scenario adds 24: fits unless the figure is more than 53.8% too high (certain: beyond the ±5% margin of a measured figure)
          c-fra-2 memory_free_gib = 236 GiB, scenario adds 48: fits unless the figure is more than 79.7% too high (certain: beyond the ±5% margin of a measured figure)
          c-fra-3 cpu_free = 94.5 cores, scenario adds 70: fits unless the figure is more than 25.9% too high (certain: beyond the ±5% margin of a measured figure)
          c-fra-3 memory_free_gib = 371 GiB, scenario adds 164: fits unless the figure is more than 55.8% too high (certain: beyond the ±5% margin of a measured figure)
    "#]]
    .assert_eq(&text::projection(&p));
}

/// For every sensitivity row of a scenario of explicit moves, moving the
/// figure just past the tolerance (in its direction) flips the verdict;
/// just short of it does not.
#[test]
fn sensitivity_tolerance_is_exact() {
    let base = troubled_estate();
    let s = scenario(
        "moves only",
        json!([
            {"move": {"service": "ledger", "to": "c-iad-1"}},
            {"move": {"service": "big", "to": "c-fra-2"}},
            {"move": {"service": "lon-app", "to": "c-lon-1"}},
            {"move": {"service": "reports", "to": "c-fra-pci"}},
            {"move": {"service": "batch", "to": "c-fra-pci"}},
        ]),
    );
    let p = run(&base, &s);
    assert_eq!(p.sensitivity.len(), 8, "{:#?}", p.sensitivity);
    for row in &p.sensitivity {
        let t = row.tolerance_pct.expect("non-zero figure") / 100.0;
        for (factor, flips) in [(1.0 + 1e-6, true), (1.0 - 1e-6, false)] {
            let mut e = base.clone();
            let c = e.cluster_index(&row.cluster).unwrap();
            let fact = if row.resource == "cpu" {
                &mut e.clusters[c].cpu_free
            } else {
                &mut e.clusters[c].memory_free_gib
            };
            let sign = if row.direction == "lower" { -1.0 } else { 1.0 };
            fact.value = Some(row.value * (1.0 + sign * t * factor));
            let again = run(&e, &s);
            let r = again
                .sensitivity
                .iter()
                .find(|r| r.fact == row.fact)
                .expect("same row");
            assert_eq!(
                r.verdict != row.verdict,
                flips,
                "{} at {:?}: {} → {}",
                row.fact,
                fact_value(&e, row),
                row.verdict,
                r.verdict
            );
        }
        // Certified exactly when the tolerance covers the class margin.
        assert_eq!(
            row.fit == berth_engine::place::FitVerdict::CantTell,
            row.verdict == "fits" && row.tolerance_pct.unwrap() < row.margin_pct
                || row.verdict == "does_not_fit" && row.tolerance_pct.unwrap() <= row.margin_pct,
            "{row:?}"
        );
    }
    expect![[r#"
        [
          {
            "fact": "c-fra-2 cpu_free",
            "cluster": "c-fra-2",
            "resource": "cpu",
            "value": 6.0,
            "class": "measured",
            "margin_pct": 5.0,
            "need": 30.0,
            "services": [
              "big"
            ],
            "verdict": "does_not_fit",
            "fit": "does_not_fit",
            "tolerance_pct": 400.0,
            "direction": "higher"
          },
          {
            "fact": "c-fra-2 memory_free_gib",
            "cluster": "c-fra-2",
            "resource": "memory",
            "value": 24.0,
            "class": "measured",
            "margin_pct": 5.0,
            "need": 120.0,
            "services": [
              "big"
            ],
            "verdict": "does_not_fit",
            "fit": "does_not_fit",
            "tolerance_pct": 400.0,
            "direction": "higher"
          },
          {
            "fact": "c-fra-pci cpu_free",
            "cluster": "c-fra-pci",
            "resource": "cpu",
            "value": 16.0,
            "class": "measured",
            "margin_pct": 5.0,
            "need": 2.0,
            "services": [
              "batch",
              "reports"
            ],
            "verdict": "fits",
            "fit": "fits",
            "tolerance_pct": 87.5,
            "direction": "lower"
          },
          {
            "fact": "c-fra-pci memory_free_gib",
            "cluster": "c-fra-pci",
            "resource": "memory",
            "value": 64.0,
            "class": "measured",
            "margin_pct": 5.0,
            "need": 8.0,
            "services": [
              "batch",
              "reports"
            ],
            "verdict": "fits",
            "fit": "fits",
            "tolerance_pct": 87.5,
            "direction": "lower"
          },
          {
            "fact": "c-iad-1 cpu_free",
            "cluster": "c-iad-1",
            "resource": "cpu",
            "value": 30.0,
            "class": "measured",
            "margin_pct": 5.0,
            "need": 20.0,
            "services": [
              "ledger"
            ],
            "verdict": "fits",
            "fit": "fits",
            "tolerance_pct": 33.33333333333333,
            "direction": "lower"
          },
          {
            "fact": "c-iad-1 memory_free_gib",
            "cluster": "c-iad-1",
            "resource": "memory",
            "value": 120.0,
            "class": "measured",
            "margin_pct": 5.0,
            "need": 80.0,
            "services": [
              "ledger"
            ],
            "verdict": "fits",
            "fit": "fits",
            "tolerance_pct": 33.33333333333333,
            "direction": "lower"
          },
          {
            "fact": "c-lon-1 cpu_free",
            "cluster": "c-lon-1",
            "resource": "cpu",
            "value": 10.0,
            "class": "reported",
            "margin_pct": 15.0,
            "need": 9.5,
            "services": [
              "lon-app"
            ],
            "verdict": "fits",
            "fit": "cant_tell",
            "tolerance_pct": 5.0,
            "direction": "lower"
          },
          {
            "fact": "c-lon-1 memory_free_gib",
            "cluster": "c-lon-1",
            "resource": "memory",
            "value": 40.0,
            "class": "reported",
            "margin_pct": 15.0,
            "need": 38.0,
            "services": [
              "lon-app"
            ],
            "verdict": "fits",
            "fit": "cant_tell",
            "tolerance_pct": 5.0,
            "direction": "lower"
          }
        ]"#]]
    .assert_eq(&serde_json::to_string_pretty(&p.sensitivity).unwrap());
}

fn fact_value(e: &Estate, row: &whatif::Sensitivity) -> Option<f64> {
    let c = &e.clusters[e.cluster_index(&row.cluster).unwrap()];
    if row.resource == "cpu" {
        c.cpu_free.value
    } else {
        c.memory_free_gib.value
    }
}

/// The JSON shape of a projection, on a tiny estate.
#[test]
fn projection_json() {
    let e = estate(
        vec![
            cluster("c-a", "fra", 16.0, 8.0),
            cluster("c-b", "par", 16.0, 4.0),
        ],
        vec![
            service("x", "team", "c-a", 2.0),
            service("y", "team", "c-b", 1.0),
        ],
        vec![flow("x", "y", 1.0, 2.0)],
    );
    let s = scenario(
        "x to Paris",
        json!([{"move": {"service": "x", "to": "c-b"}}]),
    );
    expect![[r#"
        {
          "scenario": "x to Paris",
          "estate": "test",
          "estate_version": "fc0f2dba821cf776",
          "policy_digest": "795cfe0c62069052",
          "now": "2026-11-30T04:05:00Z",
          "before": {
            "cost": 25.0,
            "round_trip": 9.0,
            "cross_site": 16.0,
            "headroom": 0.0,
            "cross_site_mb_s": 2.0
          },
          "after": {
            "cost": 11.549999999999997,
            "round_trip": 0.3,
            "cross_site": 0.0,
            "headroom": 11.249999999999996,
            "cross_site_mb_s": 0.0
          },
          "change": {
            "cost": -13.450000000000003,
            "round_trip": -8.7,
            "cross_site": -16.0,
            "headroom": 11.249999999999996,
            "cross_site_mb_s": -2.0
          },
          "moves": [
            {
              "step": 1,
              "service": "x",
              "from": "c-a",
              "to": "c-b",
              "by": "move"
            }
          ],
          "clusters": [
            {
              "id": "c-a",
              "health": "healthy",
              "evacuated": false,
              "capacity_known": true,
              "cpu": {
                "total": 16.0,
                "change": -2.0,
                "load_before": 8.0,
                "load_after": 6.0,
                "utilisation_before": 0.5,
                "utilisation_after": 0.375
              },
              "memory": {
                "total": 64.0,
                "change": -8.0,
                "load_before": 32.0,
                "load_after": 24.0,
                "utilisation_before": 0.5,
                "utilisation_after": 0.375
              }
            },
            {
              "id": "c-b",
              "health": "healthy",
              "evacuated": false,
              "capacity_known": true,
              "cpu": {
                "total": 16.0,
                "change": 2.0,
                "load_before": 12.0,
                "load_after": 14.0,
                "utilisation_before": 0.75,
                "utilisation_after": 0.875
              },
              "memory": {
                "total": 64.0,
                "change": 8.0,
                "load_before": 48.0,
                "load_after": 56.0,
                "utilisation_before": 0.75,
                "utilisation_after": 0.875
              }
            }
          ],
          "warnings": [
            {
              "code": "over_target",
              "cluster": "c-b",
              "message": "c-b CPU would be at 87.5% after the scenario (75% before; target 80%)"
            },
            {
              "code": "over_target",
              "cluster": "c-b",
              "message": "c-b memory would be at 87.5% after the scenario (75% before; target 80%)"
            }
          ],
          "evacuations": [],
          "sensitivity": [
            {
              "fact": "c-b cpu_free",
              "cluster": "c-b",
              "resource": "cpu",
              "value": 4.0,
              "class": "measured",
              "margin_pct": 5.0,
              "need": 2.0,
              "services": [
                "x"
              ],
              "verdict": "fits",
              "fit": "fits",
              "tolerance_pct": 50.0,
              "direction": "lower"
            },
            {
              "fact": "c-b memory_free_gib",
              "cluster": "c-b",
              "resource": "memory",
              "value": 16.0,
              "class": "measured",
              "margin_pct": 5.0,
              "need": 8.0,
              "services": [
                "x"
              ],
              "verdict": "fits",
              "fit": "fits",
              "tolerance_pct": 50.0,
              "direction": "lower"
            }
          ]
        }"#]]
    .assert_eq(&serde_json::to_string_pretty(&run(&e, &s)).unwrap());
}

/// Ids the estate does not have are refused with their path and line.
#[test]
fn unknown_ids_name_path_and_line() {
    let text = r#"{
  "schema": 1,
  "name": "typos",
  "steps": [
    {"evacuate": "c-par-9"},
    {"move": {"service": "wbe", "to": "c-fra-1"}}
  ]
}"#;
    let s = Scenario::from_json(text).unwrap();
    let mut errors = project(&troubled_estate(), &Policy::default(), NOW, &s).unwrap_err();
    whatif::locate_errors(&mut errors, text);
    let got: Vec<String> = errors.iter().map(|e| e.to_string()).collect();
    assert_eq!(
        got,
        [
            "/steps/0/evacuate (line 5): unknown cluster \"c-par-9\": the estate has no cluster with that id",
            "/steps/1/move/service (line 6): unknown service \"wbe\": the estate has no service with that id",
        ]
    );
}

/// An empty scenario changes nothing and warns about nothing.
#[test]
fn empty_scenario_changes_nothing() {
    let p = run(&sample(), &scenario("nothing", json!([])));
    assert_eq!(p.before, p.after);
    assert_eq!(p.change.cost, 0.0);
    assert!(p.moves.is_empty() && p.warnings.is_empty() && p.sensitivity.is_empty());
}

/// On generated estates, with a scenario of moves and an evacuation: the
/// clusters' load changes add up to what moved, the change is after −
/// before, and the same input gives the same bytes.
#[test]
fn projection_invariants_on_generated_estates() {
    let policy = Policy::default();
    for seed in 0..10 {
        let e = gen::estate(&gen::Shape::small(seed));
        let n = e.services.len();
        let mut steps = Vec::new();
        for k in 0..5 {
            let s = &e.services[(k * 7 + seed as usize) % n];
            let to = &e.clusters[(k * 3 + 1) % e.clusters.len()];
            if steps
                .iter()
                .any(|st: &serde_json::Value| st["move"]["service"] == json!(s.id))
            {
                continue;
            }
            steps.push(json!({"move": {"service": s.id, "to": to.id}}));
        }
        steps.push(json!({"evacuate": e.clusters[0].id}));
        let sc = scenario("generated", json!(steps));
        let p = project(&e, &policy, gen::NOW, &sc).unwrap();
        let again = project(&e, &policy, gen::NOW, &sc).unwrap();
        assert_eq!(
            serde_json::to_string(&p).unwrap(),
            serde_json::to_string(&again).unwrap()
        );
        assert_eq!(p.change.cost, p.after.cost - p.before.cost);
        let mut cpu = vec![0.0; e.clusters.len()];
        let mut at: Vec<usize> = e.services.iter().map(|s| s.cluster).collect();
        for m in &p.moves {
            let s = e.service_index(&m.service).unwrap();
            let (from, to) = (
                e.cluster_index(&m.from).unwrap(),
                e.cluster_index(&m.to).unwrap(),
            );
            assert_eq!(at[s], from);
            at[s] = to;
            cpu[from] -= e.services[s].cpu_in_load();
            cpu[to] += e.services[s].cpu_in_load();
        }
        for (c, cl) in p.clusters.iter().enumerate() {
            assert!((cl.cpu.change - cpu[c]).abs() < 1e-9, "{}", cl.id);
        }
        // Nothing is left on the evacuated cluster but what is stuck.
        let stuck: BTreeSet<&str> = p.evacuations[0]
            .stuck
            .iter()
            .map(|s| s.service.as_str())
            .collect();
        for (s, &c) in at.iter().enumerate() {
            if c == 0 {
                assert!(stuck.contains(e.services[s].id.as_str()));
            }
        }
    }
}

/// The same Deployment imported from c-1 and c-2 (`frontend`,
/// `c-2/frontend`), with little room left on c-2; c-3 is empty. Its text,
/// as the CLI and the server read it.
fn one_app_in_two_clusters() -> String {
    let (sites, links) = sites();
    let imported = |id: &str, cluster: &str| {
        let mut s = service(id, "shop", cluster, 2.0);
        s["source"] = json!(format!("kubernetes:{cluster}/default/Deployment/frontend"));
        s
    };
    json!({
        "schema": 1,
        "name": "one app in two clusters",
        "observed_at": NOW_STR,
        "sites": sites,
        "links": links,
        "clusters": [
            cluster("c-1", "fra", 64.0, 32.0),
            cluster("c-2", "par", 64.0, 1.0),
            cluster("c-3", "lon", 64.0, 32.0),
        ],
        "services": [
            imported("frontend", "c-1"),
            imported("c-2/frontend", "c-2"),
            service("cart", "shop", "c-1", 1.0),
        ],
        "flows": [flow("frontend", "cart", 2.0, 1.0), flow("c-2/frontend", "cart", 1.0, 0.5)],
    })
    .to_string()
}

/// `front::whatif_text`, as `berth whatif` and `POST …/whatif` run it.
fn whatif_of(estate: &str, steps: serde_json::Value) -> Projection {
    let sc = json!({"schema": 1, "name": "copies", "steps": steps}).to_string();
    let out = berth_engine::front::whatif_text(estate, &sc, "", NOW);
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert!(v.is_object(), "{out}");
    // The bytes are the projection's.
    let e = berth_engine::load(estate, berth_engine::Format::Json).unwrap();
    let p = project(
        &e,
        &Policy::default(),
        NOW,
        &Scenario::from_json(&sc).unwrap(),
    )
    .unwrap();
    assert_eq!(out, berth_engine::json_shape::to_bytes(&p));
    p
}

fn cpu_change(p: &Projection, cluster: &str) -> f64 {
    p.clusters
        .iter()
        .find(|c| c.id == cluster)
        .unwrap()
        .cpu
        .change
}

/// A copy of a workload moved onto a cluster where another copy of it
/// runs is one object there: warned, and its requests are not added.
#[test]
fn a_second_copy_of_a_workload_is_warned_and_counted_once() {
    let estate = one_app_in_two_clusters();
    let p = whatif_of(
        &estate,
        json!([{"move": {"service": "frontend", "to": "c-2"}}]),
    );
    let codes: Vec<WarningCode> = p.warnings.iter().map(|w| w.code).collect();
    assert_eq!(codes, [WarningCode::DuplicateWorkload]);
    let w = &p.warnings[0];
    assert_eq!(
        (w.step, w.service.as_deref(), w.cluster.as_deref()),
        (Some(1), Some("frontend"), Some("c-2"))
    );
    // c-1 is freed of frontend's 2 cores; c-2, with 1 core free, takes
    // nothing more (counted twice, it would be over capacity).
    assert_eq!(cpu_change(&p, "c-1"), -2.0);
    assert_eq!(cpu_change(&p, "c-2"), 0.0);
    assert!(p.sensitivity.is_empty());
    // The flows stay: frontend's callers are served on c-2.
    assert_eq!(p.moves.len(), 1);
    assert!(p.after.cross_site_mb_s > p.before.cross_site_mb_s);
    expect![[r#"
        What-if "copies" on one app in two clusters (version 649f401218c57898), policy 795cfe0c62069052, evaluated at 2026-11-30T04:05:00Z

                               before      after     change
        cost (points)            41.3       66.7      +25.4
          round trip              9.6       27.0      +17.4
          cross-site              4.0       12.0       +8.0
          headroom               27.7       27.7       +0.0
        cross-site MB/s           0.5        1.5       +1.0

        Moves, in order:
          step 1   move     frontend c-1→c-2

        Clusters whose load changes:
          c-1          CPU    -2.0 cores   50.0% → 46.9%   memory     -8.0 GiB   50.0% → 46.9%

        Warnings:
          [duplicate_workload] step 1 moves frontend onto c-2, where c-2/frontend, a copy of the same Kubernetes workload (Deployment default/frontend), already runs: the two are one object there, counted once (c-2/frontend's requests); frontend's requests are not added to c-2
    "#]].assert_eq(&text::projection(&p));

    // Both copies onto a third cluster: the first to arrive is counted.
    let p = whatif_of(
        &estate,
        json!([
            {"move": {"service": "frontend", "to": "c-3"}},
            {"move": {"service": "c-2/frontend", "to": "c-3"}},
        ]),
    );
    assert_eq!(cpu_change(&p, "c-3"), 2.0);
    assert_eq!(cpu_change(&p, "c-2"), -2.0);
    let dup: Vec<&whatif::Warning> = p
        .warnings
        .iter()
        .filter(|w| w.code == WarningCode::DuplicateWorkload)
        .collect();
    assert_eq!(dup.len(), 1);
    assert_eq!(dup[0].service.as_deref(), Some("c-2/frontend"));
    assert!(dup[0].message.contains("frontend, a copy of the same Kubernetes workload (Deployment default/frontend), arrives at step 1"), "{}", dup[0].message);
    assert_eq!(p.sensitivity.len(), 2);
    assert_eq!(p.sensitivity[0].need, 2.0);
    assert_eq!(p.sensitivity[0].services, ["frontend"]);

    // A copy that leaves again before the end is not a second copy.
    let p = whatif_of(
        &estate,
        json!([
            {"move": {"service": "frontend", "to": "c-2"}},
            {"move": {"service": "c-2/frontend", "to": "c-3"}},
        ]),
    );
    assert!(p
        .warnings
        .iter()
        .all(|w| w.code != WarningCode::DuplicateWorkload));
    assert_eq!(cpu_change(&p, "c-2"), 0.0);
    assert_eq!(cpu_change(&p, "c-3"), 2.0);

    // Services that are not copies of one workload are counted as before.
    let plain = estate.replace(
        "kubernetes:c-2/default/Deployment/frontend",
        "kubernetes:c-2/default/Deployment/web",
    );
    let p = whatif_of(
        &plain,
        json!([{"move": {"service": "frontend", "to": "c-2"}}]),
    );
    assert_eq!(cpu_change(&p, "c-2"), 2.0);
    assert!(p
        .warnings
        .iter()
        .any(|w| w.code == WarningCode::OverCapacity));
}
