//! `cargo bench -p berth-engine --bench whatif`: time of projecting a
//! what-if scenario on a generated estate of 5 000 services and 50
//! clusters (`gen::Shape::sized(42, 5000, 50)`, the estate is loaded once
//! outside the timing, as the browser holds it between edits):
//!
//! - 50 explicit moves (the target: ≤ 10 ms natively),
//! - 50 moves plus the evacuation of the cluster with most services,
//!
//! both with the estate version known (`project_with_version`, as a caller
//! holding the estate between edits does), then the 50 moves through
//! `project`, which also digests the estate, and the fixed O(estate) parts
//! on their own.
//!
//! A bench binary rather than a timed test: it prints figures (minimum
//! and median of several runs) and asserts nothing.

mod common;

use common::{ms, time};

use berth_engine::cost::{Ctx, State};
use berth_engine::gen::{self, Shape, NOW};
use berth_engine::whatif::{project, project_with_version, Scenario, Step};
use berth_engine::Policy;

fn main() {
    let policy = Policy::default();
    let estate = gen::estate(&Shape::sized(42, 5000, 50));
    let (n, k) = (estate.services.len(), estate.clusters.len());
    // 50 moves of distinct services spread over the estate, each to a
    // cluster other than its own (constraints deliberately ignored: a
    // what-if applies them anyway, and warns).
    let mut steps = Vec::new();
    let mut i = 0;
    while steps.len() < 50 {
        let s = (i * 97 + 13) % n;
        let to = (i * 7 + 3) % k;
        i += 1;
        if estate.services[s].cluster == to {
            continue;
        }
        steps.push(Step::Move {
            service: estate.services[s].id.clone(),
            to: estate.clusters[to].id.clone(),
        });
    }
    let moves = Scenario {
        schema: 1,
        name: "50 moves".into(),
        description: None,
        steps: steps.clone(),
    };
    let mut on = vec![0usize; k];
    for s in &estate.services {
        on[s.cluster] += 1;
    }
    let busiest = (0..k)
        .max_by_key(|&c| (on[c], std::cmp::Reverse(c)))
        .unwrap();
    let mut with_evac = moves.clone();
    with_evac.name = "50 moves + evacuation".into();
    with_evac
        .steps
        .push(Step::Evacuate(estate.clusters[busiest].id.clone()));

    println!(
        "estate: {} services, {} clusters, {} flows",
        n,
        k,
        estate.flows.len()
    );
    println!(
        "{:<34} {:>10} {:>10} {:>9} {:>8}",
        "scenario", "min ms", "median ms", "warnings", "moves"
    );
    let version = berth_engine::export::version(&estate);
    for sc in [&moves, &with_evac] {
        let mut warnings = 0;
        let mut moved = 0;
        let (min, med) = time(21, || {
            let p =
                project_with_version(&estate, &version, &policy, NOW, sc).expect("valid scenario");
            warnings = p.warnings.len();
            moved = p.moves.len();
            std::hint::black_box(p);
        });
        println!(
            "{:<34} {:>10.2} {:>10.2} {:>9} {:>8}",
            sc.name,
            ms(min),
            ms(med),
            warnings,
            moved
        );
    }
    let (min, med) = time(11, || {
        std::hint::black_box(project(&estate, &policy, NOW, &moves).expect("valid"));
    });
    println!(
        "{:<34} {:>10.2} {:>10.2}",
        "50 moves, version digest included",
        ms(min),
        ms(med)
    );
    let (min, med) = time(21, || {
        std::hint::black_box(Ctx::new(&estate, &policy, NOW));
    });
    println!(
        "{:<34} {:>10.2} {:>10.2}",
        "(of which: Ctx::new)",
        ms(min),
        ms(med)
    );
    let ctx = Ctx::new(&estate, &policy, NOW);
    let state = State::initial(&estate);
    let (min, med) = time(21, || {
        std::hint::black_box(state.totals(&ctx));
    });
    println!(
        "{:<34} {:>10.2} {:>10.2}",
        "(of which: one State::totals)",
        ms(min),
        ms(med)
    );
    let (min, med) = time(11, || {
        std::hint::black_box(berth_engine::export::version(&estate));
    });
    println!(
        "{:<34} {:>10.2} {:>10.2}",
        "(estate version digest alone)",
        ms(min),
        ms(med)
    );
    println!(
        "(evacuated {}: {} services on it)",
        estate.clusters[busiest].id, on[busiest]
    );
}
