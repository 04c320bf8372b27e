fn main() {
    let text = std::fs::read_to_string("examples/estates/sample.json").unwrap();
    let estate = berth_engine::load(&text, berth_engine::Format::Json).unwrap();
    let p = berth_engine::Policy::default();
    let now = berth_engine::estate::parse_time("2026-11-30T04:05:00Z").unwrap();
    let a = berth_engine::advise(&estate, &p, now);
    println!(
        "{} moves, improvement {}",
        a.moves.len(),
        berth_engine::advise::improvement(&a)
    );
}
