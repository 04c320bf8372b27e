//! How much of the optimal improvement the sequential advice captures,
//! over generated estates small enough to solve exactly (`docs/quality.md`
//! explains the method).
//!
//! `cargo run --release -p berth-engine --example quality -- [options]`
//!
//! - `--estates N`   estates to generate (default 300), seeds from `--seed`
//! - `--seed S`      first seed (default 0)
//! - `--shape tiny|small|mesh|chains|hub-spoke|tight`  `gen::Shape::tiny`
//!   (default), `Shape::small`, or `gen::patterned` at 12 services × 4 clusters
//! - `--budget B`    search nodes per estate (default 200 000 000); an
//!   estate whose search runs out is left out and counted
//! - `--rows`        also print one line per estate
//! - `--explain S`   show seed S's optimal moves next to the baseline's
//!
//! It also measures a *prototype* that is not in the engine: the
//! baseline's greedy with a two-move lookahead ([`lookahead`]), to size
//! what such a change to `advise.rs` would be worth.

#[path = "../tests/common/exact.rs"]
mod exact;
#[path = "../tests/common/trusted.rs"]
mod trusted;

use std::time::Instant;

use berth_engine::constraints::Fit;
use berth_engine::gen::{self, Shape, NOW};
use exact::{measure, stats, Row};

type Get = fn(&Measured) -> f64;

fn main() {
    let mut estates = 300u64;
    let mut first = 0u64;
    let mut shape = "tiny".to_string();
    let mut budget = 200_000_000u64;
    let mut rows = false;
    let mut explain: Option<u64> = None;
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        let mut value = || args.next().expect("a value after the option");
        match a.as_str() {
            "--estates" => estates = value().parse().expect("a number"),
            "--seed" => first = value().parse().expect("a number"),
            "--shape" => shape = value(),
            "--budget" => budget = value().parse().expect("a number"),
            "--rows" => rows = true,
            "--explain" => explain = Some(value().parse().expect("a number")),
            _ => panic!("unknown option {a}"),
        }
    }
    // `gen::Shape` estates, or the second generator's patterns at 12
    // services on 4 clusters (the size the exhaustive search proves fast).
    let pattern = gen::Pattern::ALL
        .into_iter()
        .find(|p| p.as_str() == shape.as_str());
    if pattern.is_none() && shape != "tiny" && shape != "small" {
        panic!("unknown shape {shape}: tiny, small, mesh, chains, hub-spoke or tight");
    }
    let make = |seed: u64| match (pattern, shape.as_str()) {
        (Some(p), _) => gen::patterned_estate(p, seed, 12, 4),
        (None, "small") => trusted::trusted(&Shape::small(seed)),
        _ => trusted::trusted(&Shape::tiny(seed)),
    };
    if let Some(seed) = explain {
        explain_one(&make(seed), budget);
        return;
    }
    let started = Instant::now();
    let mut all: Vec<Measured> = Vec::new();
    for seed in first..first + estates {
        let estate = make(seed);
        let t = Instant::now();
        let row = measure(seed, &estate, NOW, budget);
        let m = Measured {
            lookahead: lookahead(&estate, &berth_engine::Policy::default()),
            lookahead_zero: lookahead(&estate, &exact::zero_bars()),
            row,
        };
        let r = &m.row;
        let seq = match r.optimal_sequential {
            Some(true) => "seq",
            Some(false) => "NOT-seq",
            None => "seq?",
        };
        // The prototype's moves are sequential and certified too.
        let tol = 1e-9 * (1.0 + r.cost_before.abs());
        assert!(!r.complete || m.lookahead.max(m.lookahead_zero) <= r.optimal + tol);
        if rows {
            println!(
                "seed {:>4}  svc {:>2}  cl {}  movable {:>2}  space {:>10.3e}  nodes {:>10}{}  \
                 before {:>9.2}  opt {:>8.2} ({} moves, {} gain alone, {} of them blocked)  \
                 base {:>8.2} ({} moves)  base0 {:>8.2} ({} moves)  ht {:>9.2}  \
                 look {:>8.2}  look0 {:>8.2}  {seq}  {:.2?}",
                r.seed,
                r.services,
                r.clusters,
                r.movable,
                r.space,
                r.nodes,
                if r.complete { "" } else { "+" },
                r.cost_before,
                r.optimal,
                r.optimal_moves,
                r.optimal_moves_gaining_alone,
                r.optimal_moves_blocked_alone,
                r.baseline,
                r.baseline_moves,
                r.baseline_zero,
                r.baseline_zero_moves,
                r.heaviest,
                m.lookahead,
                m.lookahead_zero,
                t.elapsed()
            );
        }
        all.push(m);
    }
    let solved: Vec<&Measured> = all.iter().filter(|m| m.row.complete).collect();
    let counted: Vec<&Measured> = solved
        .iter()
        .copied()
        .filter(|m| m.row.share(0.0).is_some())
        .collect();
    let movable: Vec<f64> = solved.iter().map(|m| m.row.movable as f64).collect();
    let (mov_med, _, mov_mean) = stats(&movable);
    let max_nodes = solved.iter().map(|m| m.row.nodes).max().unwrap_or(0);
    println!(
        "Shape::{shape}, seeds {first}..{}: {} estates, {} solved exactly, {} with nothing to gain \
         (optimal improvement ≤ {} points, left out), {} counted.",
        first + estates,
        all.len(),
        solved.len(),
        solved.len() - counted.len(),
        exact::NOTHING_TO_GAIN,
        counted.len()
    );
    println!(
        "Movable services per estate: median {mov_med}, mean {mov_mean:.1}, max {}; \
         most search nodes {max_nodes}; {:.1?} in all.",
        movable.iter().copied().fold(0.0, f64::max),
        started.elapsed()
    );
    println!();
    println!(
        "| decider | policy | median share | p5 share | mean share | Σ gain / Σ optimal \
         | at optimum (≥ 99.9 %) |"
    );
    println!("|---|---|---:|---:|---:|---:|---:|");
    let opt_sum: f64 = counted.iter().map(|m| m.row.optimal).sum();
    const DEFAULT: &str = "default bars (15 %, 2 pts)";
    const ZERO: &str = "zero bars";
    let lines: [(&str, &str, Get); 6] = [
        ("baseline", DEFAULT, |m| m.row.baseline),
        ("baseline", ZERO, |m| m.row.baseline_zero),
        ("heaviest talker", DEFAULT, |m| m.row.heaviest),
        ("heaviest talker", ZERO, |m| m.row.heaviest),
        ("prototype: baseline + 2-move lookahead", DEFAULT, |m| {
            m.lookahead
        }),
        ("prototype: baseline + 2-move lookahead", ZERO, |m| {
            m.lookahead_zero
        }),
    ];
    for (name, policy, get) in lines {
        let shares: Vec<f64> = counted.iter().filter_map(|m| m.row.share(get(m))).collect();
        let (median, p5, mean) = stats(&shares);
        let sum: f64 = counted.iter().map(|m| get(m)).sum();
        let at = shares.iter().filter(|&&s| s >= 0.999).count();
        println!(
            "| {name} | {policy} | {:.1} % | {:.1} % | {:.1} % | {:.1} % | {at} of {} |",
            median * 100.0,
            p5 * 100.0,
            mean * 100.0,
            sum / opt_sum * 100.0,
            shares.len()
        );
    }
    // The default bars forbid any step that gains less than its bar, so
    // where even the whole optimum, taken as one step, would not clear
    // them the baseline's share is 0 by rule, not by a miss. The same
    // statistics over the estates where the optimum clears the bars.
    let worth: Vec<&&Measured> = counted
        .iter()
        .filter(|m| m.row.optimal_clears_bars)
        .collect();
    let shares: Vec<(f64, u64)> = worth
        .iter()
        .filter_map(|m| m.row.share(m.row.baseline).map(|s| (s, m.row.seed)))
        .collect();
    let only: Vec<f64> = shares.iter().map(|&(s, _)| s).collect();
    let (median, p5, mean) = stats(&only);
    println!();
    println!(
        "Baseline, default bars, over the {} counted estates whose optimum, as one step, clears \
         the default bars: median {:.1} %, p5 {:.1} %, mean {:.1} %, {} at the optimum.",
        only.len(),
        median * 100.0,
        p5 * 100.0,
        mean * 100.0,
        only.iter().filter(|&&s| s >= 0.999).count()
    );
    let mut low = shares.clone();
    low.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
    let low: Vec<String> = low
        .iter()
        .take_while(|&&(s, _)| s < 0.9)
        .map(|(s, seed)| format!("{seed} ({:.0} %)", s * 100.0))
        .collect();
    println!("Under 90 % there: {} — {}", low.len(), low.join(", "));
    // And of those, the ones whose optimum some order of certified steps
    // reaches: an optimum that no order reaches (a swap between clusters
    // that each certify nothing) is out of reach of any sequential advice.
    let reachable: Vec<f64> = worth
        .iter()
        .filter(|m| m.row.optimal_sequential != Some(false))
        .filter_map(|m| m.row.share(m.row.baseline))
        .collect();
    let (median, p5, mean) = stats(&reachable);
    println!(
        "… and of those, the {} whose optimum an order of certified moves reaches: median {:.1} %, \
         p5 {:.1} %, mean {:.1} %.",
        reachable.len(),
        median * 100.0,
        p5 * 100.0,
        mean * 100.0
    );
    let seq = |v: Option<bool>| {
        solved
            .iter()
            .filter(|m| m.row.optimal_sequential == v)
            .count()
    };
    println!();
    println!(
        "The optimum's moves can be made one at a time, each certified, in some order: {} \
         estates; cannot: {}; too many moves to check: {}.",
        seq(Some(true)),
        seq(Some(false)),
        seq(None)
    );
    // Where the baseline (zero bars) captures less than half: what the
    // optimum does there that no single certified, gaining move starts.
    let low: Vec<&Row> = counted
        .iter()
        .map(|m| &m.row)
        .filter(|r| r.share(r.baseline_zero).is_some_and(|s| s < 0.5))
        .collect();
    let small = low.iter().filter(|r| r.optimal < 2.0).count();
    let room: Vec<&&Row> = low
        .iter()
        .filter(|r| r.optimal >= 2.0 && r.optimal_moves_blocked_alone > 0)
        .collect();
    let unreachable = room
        .iter()
        .filter(|r| r.optimal_sequential == Some(false))
        .count();
    println!();
    println!(
        "Baseline (zero bars) below 50 % of the optimum: {} of {} estates. Of those, {small} have \
         an optimum under 2 points. Of the rest, {} need room made first (a move of the optimum \
         gains alone but is not certified alone: its destination fits only once something \
         leaves; in {unreachable} of them no order of single certified moves reaches the \
         optimum), and {} are coordinated moves (nothing is blocked, but the optimum needs \
         moves that lose points alone and pay only together). Estates with an optimum under 2 \
         points: {} of {}.",
        low.len(),
        counted.len(),
        room.len(),
        low.len() - small - room.len(),
        counted.iter().filter(|m| m.row.optimal < 2.0).count(),
        counted.len()
    );
}

struct Measured {
    row: Row,
    /// Improvements of the [`lookahead`] prototype, default and zero bars.
    lookahead: f64,
    lookahead_zero: f64,
}

/// **Prototype, not the engine.** The baseline's sequential greedy (each
/// service moves at most once, every move certified against the placement
/// so far, at most `max_moves`), except that when no single move clears
/// its bar it considers two consecutive moves — `a` to `x`, then `b` to
/// `y`, the second scored and certified after the first — of two services
/// that either talk to each other or where `a` leaves the cluster `b` goes
/// to (making room). A pair is taken when its combined gain is positive
/// and clears the sum of the two bars; the best single move always goes
/// first. Returns the improvement (estate cost before − after − copy).
fn lookahead(estate: &berth_engine::Estate, policy: &berth_engine::Policy) -> f64 {
    use berth_engine::cost::{self, Ctx, State};
    let ctx = Ctx::new(estate, policy, NOW);
    let cands = berth_engine::advise::feasibility(estate)
        .candidates
        .to_lists();
    let n = estate.services.len();
    let mut state = State::initial(estate);
    let before = state.totals(&ctx).cost;
    let mut moved = vec![false; n];
    let (mut copy, mut count) = (0.0, 0);
    let fits = |st: &State, s: usize, c: usize| st.fit(&ctx, s, c) == Fit::Fits;
    let scored = |st: &State, s: usize, c: usize| {
        let gain = cost::move_terms(&ctx, st, s, c).gain();
        (gain, cost::bar(&ctx, st.current_cost(&ctx, s)))
    };
    while count < policy.max_moves {
        let mut best: Option<(f64, Vec<(usize, usize)>)> = None;
        for s in (0..n).filter(|&s| !moved[s]) {
            for &c in &cands[s] {
                let (gain, bar) = scored(&state, s, c);
                if gain >= bar
                    && gain > 0.0
                    && best.as_ref().is_none_or(|b| gain > b.0)
                    && fits(&state, s, c)
                {
                    best = Some((gain, vec![(s, c)]));
                }
            }
        }
        if best.is_none() && count + 2 <= policy.max_moves {
            for a in (0..n).filter(|&s| !moved[s]) {
                for &x in &cands[a] {
                    if !fits(&state, a, x) {
                        continue;
                    }
                    let (g1, bar1) = scored(&state, a, x);
                    let mut after = state.clone();
                    after.apply(&ctx, a, x);
                    for b in (0..n).filter(|&b| b != a && !moved[b]) {
                        let talks = ctx.adjacency[a].iter().any(|&(_, p)| p == b);
                        for &y in &cands[b] {
                            if !(talks || y == state.placement[a]) || y == after.placement[b] {
                                continue;
                            }
                            let (g2, bar2) = scored(&after, b, y);
                            let total = g1 + g2;
                            if total > 0.0
                                && total >= bar1 + bar2
                                && best.as_ref().is_none_or(|b| total > b.0)
                                && fits(&after, b, y)
                            {
                                best = Some((total, vec![(a, x), (b, y)]));
                            }
                        }
                    }
                }
            }
        }
        let Some((_, steps)) = best else {
            break;
        };
        for (s, c) in steps {
            copy += policy.copy_weight_per_gb * estate.services[s].data_gb_in_copy();
            state.apply(&ctx, s, c);
            moved[s] = true;
            count += 1;
        }
    }
    before - (state.totals(&ctx).cost + copy)
}

/// The optimum's moves, each with the gain it would have alone from the
/// current placement and its bar, then the baseline's moves.
fn explain_one(estate: &berth_engine::Estate, budget: u64) {
    use berth_engine::cost::{self, Ctx, State};
    let policy = berth_engine::Policy::default();
    let ctx = Ctx::new(estate, &policy, NOW);
    let opt = exact::solve(estate, &policy, NOW, budget);
    let state = State::initial(estate);
    println!(
        "{}: cost before {:.2}, optimum {:.2} (improvement {:.2})",
        estate.name,
        opt.cost_before,
        opt.cost,
        opt.improvement()
    );
    for (s, &c) in opt.placement.iter().enumerate() {
        let svc = &estate.services[s];
        if c != svc.cluster {
            let t = cost::move_terms(&ctx, &state, s, c);
            println!(
                "  optimum moves {} {} -> {}: alone gain {:.2} (bar {:.2}, fit {:?})",
                svc.id,
                estate.clusters[svc.cluster].id,
                estate.clusters[c].id,
                t.gain(),
                cost::bar(&ctx, state.current_cost(&ctx, s)),
                state.fit(&ctx, s, c)
            );
        }
    }
    for (name, p) in [
        ("default", policy.clone()),
        ("zero bars", exact::zero_bars()),
    ] {
        let a = berth_engine::advise(estate, &p, NOW);
        println!("  baseline ({name}): {:.2}", exact::advice_improvement(&a));
        for m in &a.moves {
            println!(
                "    {}. {} {} -> {}: gain {:.2} (bar {:.2})",
                m.step, m.service, m.from, m.to, m.gain, m.bar
            );
        }
    }
}
