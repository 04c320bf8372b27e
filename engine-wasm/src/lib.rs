//! WebAssembly entry points of the engine. Each takes and returns text so
//! the JavaScript side never re-encodes numbers: the bytes that come out
//! are the bytes the engine wrote, which is what the parity test compares.
//!
//! Every entry point returns JSON text: the result (an object, the bytes
//! of the engine's JSON front end `berth_engine::front`, which the CLI
//! prints and the server sends) or, when an input
//! is refused, a JSON **array** of errors. `advise_json` lists the engine's
//! errors as they are (estate errors `{path, line, message}` or policy
//! errors `{field, message}`); the later entry points (`advise_why_json`
//! included) add to each error `"input"`: which argument it is about
//! (`estate`, `policy`, `scenario`, `service` or `responses`), so a page can
//! show it next to that input.
//!
//! `now_unix` is seconds since 1970 (a whole number; a fraction is dropped).

use wasm_bindgen::prelude::*;

/// Advice JSON for an estate file's text; errors come back as a JSON list.
#[wasm_bindgen]
pub fn advise_json(estate_text: &str, policy_json: &str, now_unix: f64) -> String {
    berth_parity::advise_json(estate_text, policy_json, now_unix as i64)
}

/// Advice with every move explained (`berth advise --why`): the advice's
/// fields, then `why`, one explanation per move (facts, terms and exact
/// flip conditions, `docs/why.md`).
#[wasm_bindgen]
pub fn advise_why_json(estate_text: &str, policy_json: &str, now_unix: f64) -> String {
    berth_parity::advise_why_json(estate_text, policy_json, now_unix as i64)
}

/// Digest of the advice JSON of `count` generated estates from `seed`.
#[wasm_bindgen]
pub fn generated_digests(seed: f64, count: u32, now_unix: f64) -> String {
    berth_parity::generated_digests(seed as u64, count, now_unix as i64)
}

/// The advice JSON behind one line of `generated_digests` (to show where
/// a digest mismatch comes from).
#[wasm_bindgen]
pub fn small_advice_json(seed: f64, now_unix: f64) -> String {
    berth_parity::small_advice_json(seed as u64, now_unix as i64)
}

/// Text of the generated benchmark estate (`gen::Shape::sized`), so a
/// JavaScript benchmark can time `advise_json` on a large estate without
/// reading a multi-megabyte file.
#[wasm_bindgen]
pub fn generated_file(seed: f64, services: u32, clusters: u32) -> String {
    berth_parity::generated_file(seed as u64, services, clusters)
}

/// What-if projection (SPEC §8) of a scenario's text (docs/scenario-format.md)
/// on an estate file's text.
#[wasm_bindgen]
pub fn whatif_json(
    estate_text: &str,
    scenario_text: &str,
    policy_json: &str,
    now_unix: f64,
) -> String {
    berth_parity::whatif_json(estate_text, scenario_text, policy_json, now_unix as i64)
}

/// Every cluster ranked for one service by the placement scorer
/// (`berth place`).
#[wasm_bindgen]
pub fn place_json(estate_text: &str, service_id: &str, policy_json: &str, now_unix: f64) -> String {
    berth_parity::place_json(estate_text, service_id, policy_json, now_unix as i64)
}

/// Decider comparison (`berth compare`): the built-ins, then each external
/// reply of `responses_json`, an object `{"name": "<reply text>", ...}`
/// (names as for `--response NAME=FILE`, in the order given; `""` for
/// none). A reply that cannot be read is that decider's error entry, as in
/// the CLI. Run times are `null`: the engine has no clock.
#[wasm_bindgen]
pub fn compare_json(
    estate_text: &str,
    responses_json: &str,
    policy_json: &str,
    now_unix: f64,
) -> String {
    berth_parity::compare_json(estate_text, responses_json, policy_json, now_unix as i64)
}

/// A change plan (`berth plan export`): `format` one of `json`,
/// `markdown`, `karmada`, `ocm`; `services` comma-separated ids (their
/// recommended moves) or `""`; `scenario_text` a scenario's text or `""`
/// (neither: every recommended move). Errors are a JSON array (`[…]`).
#[wasm_bindgen]
pub fn plan_json(
    estate_text: &str,
    policy_json: &str,
    now_unix: f64,
    format: &str,
    services: &str,
    scenario_text: &str,
) -> String {
    berth_parity::plan_json(
        estate_text,
        policy_json,
        now_unix as i64,
        format,
        services,
        scenario_text,
    )
}

/// The decider request (schema 1) the estate generates (`berth preview`).
#[wasm_bindgen]
pub fn preview_json(estate_text: &str, policy_json: &str, now_unix: f64) -> String {
    berth_parity::preview_json(estate_text, policy_json, now_unix as i64)
}

/// Digests of the preview, placements and what-if projection of `count`
/// generated small estates from `seed`, one line per estate
/// (`berth_parity::generated_results_digests`).
#[wasm_bindgen]
pub fn generated_results_digests(
    seed: f64,
    count: u32,
    policy_json: &str,
    now_unix: f64,
) -> String {
    berth_parity::generated_results_digests(seed as u64, count, policy_json, now_unix as i64)
}

/// Digests of the explained advice (`advise_why_json`) of `count` generated
/// small estates from `seed`, one line per estate
/// (`berth_parity::generated_why_digests`).
#[wasm_bindgen]
pub fn generated_why_digests(seed: f64, count: u32, policy_json: &str, now_unix: f64) -> String {
    berth_parity::generated_why_digests(seed as u64, count, policy_json, now_unix as i64)
}

/// Digests of the decider comparison of the built-ins alone (the
/// reference deciders among them) on `count` generated estates from
/// `seed`: `compare` on the small shape and `compare-patterned` on the
/// second generator (`berth_parity::generated_compare_digests`).
#[wasm_bindgen]
pub fn generated_compare_digests(
    seed: f64,
    count: u32,
    policy_json: &str,
    now_unix: f64,
) -> String {
    berth_parity::generated_compare_digests(seed as u64, count, policy_json, now_unix as i64)
}

/// One result behind a line of `generated_results_digests` or
/// `generated_why_digests` (to show where a digest mismatch comes from);
/// `what` is `preview`, `place`, `whatif`, `scenario`, `why`, `compare` or
/// `compare-patterned`.
#[wasm_bindgen]
pub fn generated_result(seed: f64, what: &str, policy_json: &str, now_unix: f64) -> String {
    berth_parity::generated_result(seed as u64, what, policy_json, now_unix as i64)
}

/// Shared between the native and WebAssembly sides of the parity test so
/// both run literally the same code path.
pub mod berth_parity {
    use berth_engine::{estate, front, gen, whatif, Estate, Format, Policy};

    // Every entry point is the engine's JSON front end (`berth_engine::front`),
    // so the bytes are the CLI's and the server's.

    pub fn advise_json(estate_text: &str, policy_json: &str, now: i64) -> String {
        front::advice_text(estate_text, policy_json, now)
    }

    pub fn generated_digests(seed: u64, count: u32, now: i64) -> String {
        let mut lines = String::new();
        for i in 0..count as u64 {
            let json = small_advice_json(seed + i, now);
            lines.push_str(&berth_engine::gen::digest(json.as_bytes()));
            lines.push('\n');
        }
        lines
    }

    /// The advice (default policy) whose digest `generated_digests` lists
    /// for `seed`: a `small` generated estate, and every fourth seed an
    /// estate of one of `gen::patterned`'s shapes (12 services on 4
    /// clusters), whose applications only gain moved together. Since
    /// moves resting on guesses are no longer made and every moved service
    /// pays the bar, the `small` estates alone no longer take gathered,
    /// weighed or planned groups; the patterns do, so the byte parity
    /// still covers every kind of compound step.
    pub fn small_advice_json(seed: u64, now: i64) -> String {
        use berth_engine::gen;
        let estate = if seed.is_multiple_of(4) {
            let pattern = gen::Pattern::ALL[(seed / 4) as usize % gen::Pattern::ALL.len()];
            let (services, clusters) = if seed.is_multiple_of(8) {
                (24, 6)
            } else {
                (12, 4)
            };
            gen::patterned_estate(pattern, seed, services, clusters)
        } else {
            gen::estate(&gen::Shape::small(seed))
        };
        front::advice(&estate, &Policy::default(), now)
    }

    pub fn generated_file(seed: u64, services: u32, clusters: u32) -> String {
        let shape = berth_engine::gen::Shape::sized(seed, services as usize, clusters as usize);
        serde_json::to_string(&berth_engine::gen::file(&shape)).expect("estate serialises")
    }

    pub fn advise_why_json(estate_text: &str, policy_json: &str, now: i64) -> String {
        front::advice_why_text(estate_text, policy_json, now)
    }

    pub fn whatif_json(
        estate_text: &str,
        scenario_text: &str,
        policy_json: &str,
        now: i64,
    ) -> String {
        front::whatif_text(estate_text, scenario_text, policy_json, now)
    }

    pub fn place_json(estate_text: &str, service_id: &str, policy_json: &str, now: i64) -> String {
        front::place_text(estate_text, service_id, policy_json, now)
    }

    pub fn preview_json(estate_text: &str, policy_json: &str, now: i64) -> String {
        front::preview_text(estate_text, policy_json, now)
    }

    pub fn plan_json(
        estate_text: &str,
        policy_json: &str,
        now: i64,
        format: &str,
        services: &str,
        scenario_text: &str,
    ) -> String {
        front::plan_text(
            estate_text,
            policy_json,
            now,
            format,
            services,
            scenario_text,
        )
    }

    pub fn compare_json(
        estate_text: &str,
        responses_json: &str,
        policy_json: &str,
        now: i64,
    ) -> String {
        front::compare_text(estate_text, responses_json, policy_json, now)
    }

    fn pretty<T: serde::Serialize>(v: &T) -> String {
        serde_json::to_string_pretty(v).expect("scenarios serialise")
    }

    // -----------------------------------------------------------------------
    // Generated estates, for the parity test.

    /// The estate file text of `gen::Shape::small(seed)`.
    pub fn small_file(seed: u64) -> String {
        serde_json::to_string(&gen::file(&gen::Shape::small(seed))).expect("estate serialises")
    }

    /// A scenario for a generated estate: a move, the evacuation of the
    /// cluster with the most services (the first by id on a tie), two more
    /// moves. The three moved services are distinct; services and
    /// destinations are drawn from `seed` (a destination may be the
    /// service's own cluster or the evacuated one: a what-if takes moves
    /// as written, and warns).
    pub fn generated_scenario(estate: &Estate, seed: u64) -> String {
        let mut on = vec![0usize; estate.clusters.len()];
        for s in &estate.services {
            on[s.cluster] += 1;
        }
        let busiest = (0..on.len())
            .max_by_key(|&c| (on[c], std::cmp::Reverse(c)))
            .expect("generated estates have clusters");
        let mut r = gen::Rng::new(seed ^ 0x5CE7_A210);
        let mut moved: Vec<usize> = Vec::new();
        while moved.len() < 3 {
            let s = r.below(estate.services.len());
            if !moved.contains(&s) {
                moved.push(s);
            }
        }
        let mut step = |s: usize| {
            let to = &estate.clusters[r.below(estate.clusters.len())].id;
            serde_json::json!({"move": {"service": estate.services[s].id, "to": to}})
        };
        let steps = vec![
            step(moved[0]),
            serde_json::json!({"evacuate": estate.clusters[busiest].id}),
            step(moved[1]),
            step(moved[2]),
        ];
        pretty(&serde_json::json!({
            "schema": whatif::SCHEMA,
            "name": format!("generated {seed}"),
            "steps": steps,
        }))
    }

    /// The services `generated_result(.., "place", ..)` places: the first,
    /// middle and last by id.
    fn placed(estate: &Estate) -> Vec<&str> {
        let n = estate.services.len();
        let mut picks = vec![0, n / 2, n - 1];
        picks.dedup();
        picks
            .iter()
            .map(|&i| estate.services[i].id.as_str())
            .collect()
    }

    /// What the parity test compares for the generated estate of `seed`:
    /// `preview`, `place` (the placements of `placed`, joined by a
    /// newline), `scenario` (the text of `generated_scenario`), `whatif`
    /// (its projection) or `why` (the explained advice). All through the
    /// text entry points above.
    pub fn generated_result(seed: u64, what: &str, policy_json: &str, now: i64) -> String {
        let text = small_file(seed);
        let estate = estate::load(&text, Format::Json).expect("generated estates are valid");
        match what {
            "preview" => preview_json(&text, policy_json, now),
            "place" => placed(&estate)
                .iter()
                .map(|id| place_json(&text, id, policy_json, now))
                .collect::<Vec<_>>()
                .join("\n"),
            "scenario" => generated_scenario(&estate, seed),
            "whatif" => whatif_json(&text, &generated_scenario(&estate, seed), policy_json, now),
            "why" => advise_why_json(&text, policy_json, now),
            "compare" => compare_json(&text, "", policy_json, now),
            "compare-patterned" => {
                let pattern = gen::Pattern::ALL[(seed % 4) as usize];
                let file = gen::patterned(pattern, seed, 12, 4);
                let text = serde_json::to_string(&file).expect("estate serialises");
                compare_json(&text, "", policy_json, now)
            }
            _ => {
                format!("unknown result {what:?}; expected preview, place, scenario, whatif or why")
            }
        }
    }

    /// What `generated_result` can show, in the order of a digest line.
    pub const GENERATED_RESULTS: [&str; 4] = ["preview", "place", "scenario", "whatif"];

    /// One line per generated estate `seed..seed + count`:
    /// `seed=N preview=<sha256> place=… scenario=… whatif=…`.
    pub fn generated_results_digests(seed: u64, count: u32, policy_json: &str, now: i64) -> String {
        digest_lines(seed, count, &GENERATED_RESULTS, policy_json, now)
    }

    /// One line per generated estate `seed..seed + count`:
    /// `seed=N why=<sha256>`, the digest of `generated_result(N, "why", ..)`.
    /// Apart from `generated_results_digests`, so those lines stay as they
    /// are and the parity test picks how many estates to explain.
    pub fn generated_why_digests(seed: u64, count: u32, policy_json: &str, now: i64) -> String {
        digest_lines(seed, count, &["why"], policy_json, now)
    }

    /// One line per generated estate `seed..seed + count`:
    /// `seed=N compare=<sha256> compare-patterned=<sha256>`: the built-in
    /// deciders, `optimum` and `local-search` among them.
    pub fn generated_compare_digests(seed: u64, count: u32, policy_json: &str, now: i64) -> String {
        digest_lines(
            seed,
            count,
            &["compare", "compare-patterned"],
            policy_json,
            now,
        )
    }

    fn digest_lines(seed: u64, count: u32, whats: &[&str], policy_json: &str, now: i64) -> String {
        let mut lines = String::new();
        for s in seed..seed + count as u64 {
            lines.push_str(&format!("seed={s}"));
            for &what in whats {
                let out = generated_result(s, what, policy_json, now);
                lines.push_str(&format!(" {what}={}", gen::digest(out.as_bytes())));
            }
            lines.push('\n');
        }
        lines
    }
}
