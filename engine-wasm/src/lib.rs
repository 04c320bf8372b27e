//! WebAssembly entry points of the engine. Each takes and returns text so
//! the JavaScript side never re-encodes numbers: the bytes that come out
//! are the bytes the engine wrote, which is what the parity test compares.

use berth_engine::Policy;
use wasm_bindgen::prelude::*;

/// Advice JSON for an estate file's text; errors come back as a JSON list.
#[wasm_bindgen]
pub fn advise_json(estate_text: &str, policy_json: &str, now_unix: f64) -> String {
    berth_parity::advise_json(estate_text, policy_json, now_unix as i64)
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

/// Shared between the native and WebAssembly sides of the parity test so
/// both run literally the same code path.
pub mod berth_parity {
    use super::*;

    pub fn advise_json(estate_text: &str, policy_json: &str, now: i64) -> String {
        let policy = if policy_json.trim().is_empty() {
            Policy::default()
        } else {
            match Policy::from_json(policy_json) {
                Ok(p) => p,
                Err(e) => return serde_json::to_string(&e).unwrap_or_default(),
            }
        };
        match berth_engine::advise_json(estate_text, &policy, now) {
            Ok(json) => json,
            Err(errors) => serde_json::to_string(&errors).unwrap_or_default(),
        }
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

    /// The advice (compact JSON, default policy) whose digest
    /// `generated_digests` lists for `seed`.
    pub fn small_advice_json(seed: u64, now: i64) -> String {
        let estate = berth_engine::gen::estate(&berth_engine::gen::Shape::small(seed));
        let advice = berth_engine::advise(&estate, &Policy::default(), now);
        serde_json::to_string(&advice).expect("advice serialises")
    }

    pub fn generated_file(seed: u64, services: u32, clusters: u32) -> String {
        let shape = berth_engine::gen::Shape::sized(seed, services as usize, clusters as usize);
        serde_json::to_string(&berth_engine::gen::file(&shape)).expect("estate serialises")
    }
}
