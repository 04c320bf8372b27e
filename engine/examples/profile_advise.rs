//! Profiling aid: advise on a generated estate, repeatedly.
//! `cargo run --release -p berth-engine --example profile_advise -- 5000 50 5`
use berth_engine::gen::{self, Shape, NOW};
use berth_engine::{advise, load, Format, Policy};

fn main() {
    let args: Vec<usize> = std::env::args()
        .skip(1)
        .map(|a| a.parse().expect("number"))
        .collect();
    let (services, clusters, reps) = (args[0], args[1], args[2]);
    let text = serde_json::to_string(&gen::file(&Shape::sized(42, services, clusters))).unwrap();
    let policy = Policy::default();
    for _ in 0..reps {
        let t = std::time::Instant::now();
        let v: serde_json::Value = serde_json::from_str(&text).unwrap();
        let tv = t.elapsed();
        drop(v);
        eprintln!("value parse {:?} (+drop {:?})", tv, t.elapsed() - tv);
        let e = load(&text, Format::Json).unwrap();
        let t = std::time::Instant::now();
        let _ = berth_engine::export::version(&e);
        eprintln!("version {:?}", t.elapsed());
        let t = std::time::Instant::now();
        let ctx = berth_engine::cost::Ctx::new(&e, &policy, NOW);
        eprintln!("ctx {:?}", t.elapsed());
        let t = std::time::Instant::now();
        let f = berth_engine::advise::feasibility(&e);
        eprintln!(
            "feasibility {:?} ({} immovable)",
            t.elapsed(),
            f.immovable.len()
        );
        let t = std::time::Instant::now();
        let st = berth_engine::cost::State::initial(&e);
        let mut x = 0.0;
        for s in 0..e.services.len() {
            for &c in &f.candidates[s] {
                x += st.flow_cost_at(&ctx, s, c).0;
            }
        }
        eprintln!("all deltas {:?} {x}", t.elapsed());
        let t = std::time::Instant::now();
        let e = load(&text, Format::Json).unwrap();
        let t1 = t.elapsed();
        let a = advise(&e, &policy, NOW);
        eprintln!(
            "load {:?} advise {:?} moves {}",
            t1,
            t.elapsed() - t1,
            a.moves.len()
        );
    }
}
