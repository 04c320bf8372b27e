//! Mutation fuzzing of every parser that takes outside input.
//!
//! Each target starts from real inputs (the sample estate, the example
//! scenario, replies and Prometheus answers, the shared Kubernetes
//! manifests, a signed header) and feeds the parser thousands of mutants:
//! bit flips, structural bytes, deleted and duplicated ranges, truncations,
//! and tokens that break parsers (huge numbers, deep nesting, lone
//! surrogates, YAML aliases, bidirectional overrides, far-future times).
//! Mutants are fed back as seeds when the parser accepts them, so the
//! search walks into the accepted space instead of only its border.
//!
//! Properties, for every input: the parser returns (no panic, checked with
//! `catch_unwind`); a refusal carries a message, and a bounded one; the
//! process's peak memory stays bounded.
//!
//! Budget: `BERTH_FUZZ_SECS` seconds per target (default 2, so the whole
//! file stays well under a minute in `make test`); `BERTH_FUZZ_SEED` picks
//! the run (default fixed, so a CI failure reproduces). A long run:
//! `BERTH_FUZZ_SECS=600 BERTH_FUZZ_SEED=$RANDOM cargo test --release -p
//! berth --test fuzz -- --nocapture` (docs/security.md).

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::PathBuf;
use std::time::{Duration, Instant};

use berth::external::signing::{self, Secret};
use berth::import::mesh::Mesh;
use berth::import::{kubernetes, prometheus, Input};
use berth_engine::{decider, whatif::Scenario, Format, Policy};

/// Longest refusal text accepted: a refusal lists errors, each short; one
/// that grows with the input (echoing it) is a way to blow up responses.
const MAX_REFUSAL_BYTES: usize = 256 * 1024;

/// Peak resident memory allowed for the whole run, in kB (VmHWM). The
/// largest seed is ~60 kB and mutants at most double it; a parser that
/// allocated out of proportion to its input would cross this at once.
const MAX_PEAK_KB: u64 = 1_500_000;

/// Mutants never grow past this many bytes (twice the largest seed plus
/// room for dictionary tokens), so a run cannot drift into huge inputs.
const MAX_INPUT_BYTES: usize = 256 * 1024;

/// xorshift64*: deterministic, seeded, no dependency.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

/// Tokens that have broken parsers before: numbers past f64 and i64,
/// nesting, escapes, surrogates, YAML's aliases and tags, hidden
/// characters, times from the far future.
const DICTIONARY: &[&str] = &[
    "null",
    "true",
    "false",
    "[]",
    "{}",
    "\"\"",
    "-0",
    "0",
    "-1",
    "1e309",
    "-1e309",
    "1e-400",
    "18446744073709551616",
    "-9223372036854775809",
    "NaN",
    "Infinity",
    "\"\\u0000\"",
    "\"\\ud800\"",
    "\"\\u202e\"",
    "\u{202e}",
    "\u{200b}",
    "[[[[[[[[[[[[",
    "{\"a\":{\"a\":{\"a\":",
    "]]]]",
    "}}}}",
    "---\n",
    "&a ",
    "*a",
    "!!binary ",
    "!!python/object ",
    "? ",
    "- ",
    ": ",
    "\"9999-12-31T23:59:59Z\"",
    "\"1970-01-01T00:00:00Z\"",
    "\\",
    "\"",
    ",",
    ":",
    "\n",
    "\t",
    "\r\n",
    "\u{feff}",
    "\u{ffff}",
    "é",
    "t=",
    ",v1=",
    "v1,",
    "whsec_",
];

fn mutate(rng: &mut Rng, seed: &[u8]) -> Vec<u8> {
    let mut b = seed.to_vec();
    for _ in 0..1 + rng.below(4) {
        let len = b.len();
        match rng.below(8) {
            0 if len > 0 => {
                let i = rng.below(len);
                b[i] ^= 1 << rng.below(8);
            }
            1 if len > 0 => {
                const STRUCTURE: &[u8] = b"{}[]\",:0-e.\\\n \x00\xff\xc3";
                let i = rng.below(len);
                b[i] = STRUCTURE[rng.below(STRUCTURE.len())];
            }
            2 if len > 0 => {
                let i = rng.below(len);
                let n = (1 + rng.below(32)).min(len - i);
                b.drain(i..i + n);
            }
            3 if len > 0 => {
                let i = rng.below(len);
                let n = (1 + rng.below(64)).min(len - i);
                let chunk = b[i..i + n].to_vec();
                let at = rng.below(len + 1);
                b.splice(at..at, chunk);
            }
            4 => {
                let token = DICTIONARY[rng.below(DICTIONARY.len())].as_bytes();
                let at = rng.below(len + 1);
                b.splice(at..at, token.iter().copied());
            }
            5 if len > 0 => {
                let token = DICTIONARY[rng.below(DICTIONARY.len())].as_bytes();
                let i = rng.below(len);
                let n = (1 + rng.below(8)).min(len - i);
                b.splice(i..i + n, token.iter().copied());
            }
            6 if len > 0 => b.truncate(rng.below(len)),
            _ => {
                // Replace a digit run with an extreme number.
                if let Some(i) = (0..len)
                    .map(|k| (k + rng.below(len)) % len)
                    .find(|&k| b[k].is_ascii_digit())
                {
                    let mut j = i;
                    while j < len && b[j].is_ascii_digit() {
                        j += 1;
                    }
                    let extreme = [
                        "1e308",
                        "99999999999999999999",
                        "-5",
                        "0.0000001",
                        "4294967296",
                    ];
                    b.splice(i..j, extreme[rng.below(extreme.len())].bytes());
                }
            }
        }
    }
    b.truncate(MAX_INPUT_BYTES);
    b
}

/// What a parser made of one input.
enum Outcome {
    Accepted,
    Refused(String),
}

struct Figures {
    name: &'static str,
    execs: u64,
    accepted: u64,
    refused: u64,
    corpus: usize,
}

fn fuzz(
    name: &'static str,
    seeds: Vec<Vec<u8>>,
    rng: &mut Rng,
    budget: Duration,
    target: &dyn Fn(&[u8]) -> Outcome,
) -> Figures {
    assert!(!seeds.is_empty(), "{name}: no seeds");
    let mut corpus = seeds;
    // The seeds themselves must be accepted: otherwise the target is not
    // exercising the parser's accepting paths at all.
    for s in &corpus {
        if let Outcome::Refused(why) = target(s) {
            panic!("{name}: a seed is refused: {why}");
        }
    }
    let mut f = Figures {
        name,
        execs: 0,
        accepted: 0,
        refused: 0,
        corpus: corpus.len(),
    };
    let started = Instant::now();
    while started.elapsed() < budget {
        let seed = &corpus[rng.below(corpus.len())];
        let input = mutate(rng, seed);
        let outcome = catch_unwind(AssertUnwindSafe(|| target(&input))).unwrap_or_else(|_| {
            panic!(
                "{name}: the parser panicked on this input ({} bytes):\n{}",
                input.len(),
                String::from_utf8_lossy(&input)
            )
        });
        f.execs += 1;
        match outcome {
            Outcome::Accepted => {
                f.accepted += 1;
                // Keep a bounded corpus of accepted mutants to walk on.
                if corpus.len() < 64 && rng.below(8) == 0 {
                    corpus.push(input);
                }
            }
            Outcome::Refused(why) => {
                f.refused += 1;
                assert!(
                    !why.trim().is_empty(),
                    "{name}: a refusal without a message for:\n{}",
                    String::from_utf8_lossy(&input)
                );
                assert!(
                    why.len() <= MAX_REFUSAL_BYTES,
                    "{name}: a {}-byte refusal for a {}-byte input",
                    why.len(),
                    input.len()
                );
            }
        }
    }
    f.corpus = corpus.len();
    f
}

fn refused<E: std::fmt::Debug>(errors: &[E]) -> Outcome {
    if errors.is_empty() {
        return Outcome::Refused(String::new());
    }
    Outcome::Refused(
        errors
            .iter()
            .map(|e| format!("{e:?}"))
            .collect::<Vec<_>>()
            .join("\n"),
    )
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

fn repo_file(rel: &str) -> Vec<u8> {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..");
    std::fs::read(root.join(rel)).unwrap_or_else(|e| panic!("{rel}: {e}"))
}

fn shared_fixture(rel: &str) -> Vec<u8> {
    let start = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    for dir in start.ancestors() {
        let path = dir.join("shared/fixtures").join(rel);
        if path.is_file() {
            return std::fs::read(path).unwrap();
        }
    }
    panic!("shared/fixtures/{rel} not found above {}", start.display());
}

fn peak_kb() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

#[test]
// One push per target, each after the inputs it needs are built.
#[allow(clippy::vec_init_then_push)]
fn every_outside_parser_survives_mutants() {
    let secs: f64 = std::env::var("BERTH_FUZZ_SECS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(2.0);
    let seed: u64 = std::env::var("BERTH_FUZZ_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(20261201);
    let budget = Duration::from_secs_f64(secs);
    let mut rng = Rng(seed | 1);
    // A mutant that panics is reported by `fuzz` with its input; keep the
    // default hook quiet so the report is not buried in backtraces.
    std::panic::set_hook(Box::new(|_| {}));

    let sample = berth::serve::SAMPLE_ESTATE.as_bytes().to_vec();
    let estate = berth_engine::load(berth::serve::SAMPLE_ESTATE, Format::Json).expect("sample");
    let sample_yaml =
        serde_yaml::to_string(&serde_json::from_slice::<serde_json::Value>(&sample).unwrap())
            .unwrap()
            .into_bytes();
    let now = berth_engine::estate::parse_time("2026-11-30T04:05:00Z").unwrap();
    let policy_json = serde_json::to_vec(&Policy::default()).unwrap();
    let request = serde_json::to_vec(&berth_engine::request::build(
        &estate,
        &Policy::default(),
        now,
    ))
    .unwrap();
    let secret =
        Secret::parse(&format!("whsec_{}", "QUJDREVGR0hJSktMTU5PUFFSU1RVVldYWVo=")).unwrap();
    let body = br#"{"proposals":[]}"#;
    let headers = signing::sign(&[&secret], "msg_fuzz", now, body);

    let mut all = Vec::new();
    all.push(fuzz(
        "estate (JSON)",
        vec![sample.clone()],
        &mut rng,
        budget,
        &|b| match berth_engine::load(&text(b), Format::Json) {
            Ok(_) => Outcome::Accepted,
            Err(e) => refused(&e),
        },
    ));
    all.push(fuzz(
        "estate (YAML)",
        vec![sample_yaml],
        &mut rng,
        budget,
        &|b| match berth_engine::load(&text(b), Format::Yaml) {
            Ok(_) => Outcome::Accepted,
            Err(e) => refused(&e),
        },
    ));
    all.push(fuzz(
        "scenario",
        vec![repo_file("examples/scenarios/retire-c-par-2.json")],
        &mut rng,
        budget,
        &|b| match Scenario::from_json_checked(&text(b), &estate) {
            Ok(_) => Outcome::Accepted,
            Err(e) => refused(&e),
        },
    ));
    all.push(fuzz(
        "policy",
        vec![
            policy_json,
            br#"{"cross_site_weight": 4, "staleness": {"measured_s": 600}}"#.to_vec(),
        ],
        &mut rng,
        budget,
        &|b| match Policy::from_json(&text(b)) {
            Ok(_) => Outcome::Accepted,
            Err(e) => refused(&e),
        },
    ));
    let doc: serde_json::Value = serde_json::from_slice(&sample).unwrap();
    let batch = br#"{"updates": [{"fact": "cpu_free", "cluster": "c-fra-1", "value": 12.5, "class": "measured", "observed_at": "2026-11-30T04:00:00Z", "source": "agent:fra"}, {"fact": "rtt_ms", "a": "c-fra-1", "b": "c-par-1", "value": 9.1, "class": "measured"}]}"#;
    all.push(fuzz(
        "observations",
        vec![batch.to_vec()],
        &mut rng,
        budget,
        &|b| match berth_engine::strict::from_slice::<berth::facts::FactBatch>(b) {
            Err(e) => Outcome::Refused(e.to_string()),
            Ok(batch) => match berth::facts::apply(&doc, &batch, now) {
                Ok(_) => Outcome::Accepted,
                Err(e) => refused(&e),
            },
        },
    ));
    all.push(fuzz(
        "decider reply",
        vec![
            repo_file("examples/responses/sample-ops-team.json"),
            br#"[{"serviceId": "cart", "to": "c-fra-2"}]"#.to_vec(),
        ],
        &mut rng,
        budget,
        &|b| match decider::parse_response(b) {
            Ok(_) => Outcome::Accepted,
            Err(e) => Outcome::Refused(format!("{e:?}")),
        },
    ));
    all.push(fuzz(
        "decider request",
        vec![request],
        &mut rng,
        budget,
        &|b| match decider::parse_request(b) {
            Ok(_) => Outcome::Accepted,
            Err(e) => Outcome::Refused(format!("{e:?}")),
        },
    ));
    all.push(fuzz(
        "kubernetes manifests",
        vec![
            shared_fixture("kubernetes/online-boutique.yaml"),
            shared_fixture("kubernetes/sock-shop.yaml"),
        ],
        &mut rng,
        budget,
        &|b| {
            let t = text(b);
            match kubernetes::parse(
                &[Input {
                    name: "fuzz.yaml",
                    text: &t,
                }],
                kubernetes::Options::default(),
            ) {
                Ok(_) => Outcome::Accepted,
                Err(e) => refused(&e),
            }
        },
    ));
    all.push(fuzz(
        "prometheus answers",
        vec![repo_file("examples/prometheus/istio-results.json")],
        &mut rng,
        budget,
        &|b| match serde_json::from_slice::<serde_json::Value>(b) {
            Err(e) => Outcome::Refused(e.to_string()),
            // Istio's reading refuses a sample without workload labels;
            // Linkerd's takes it as a peer outside the mesh: both paths
            // run (neither may panic); Istio's, whose labels the seeds
            // carry, gives the outcome.
            Ok(v) => {
                let mut outcome = Outcome::Refused(String::new());
                for mesh in [Mesh::Linkerd, Mesh::Istio] {
                    let reading = prometheus::Reading::new(mesh);
                    outcome = match prometheus::parse_file(&v, &reading) {
                        Ok(results) => {
                            let _ = prometheus::derive(
                                &results,
                                &reading,
                                &prometheus::Mapping::default(),
                                None,
                            );
                            Outcome::Accepted
                        }
                        Err(e) => Outcome::Refused(format!("{e:?}")),
                    };
                }
                outcome
            }
        },
    ));
    let header_seed = format!(
        "{}\n{}\n{}\n{}",
        headers.berth_signature,
        headers.webhook_id,
        headers.webhook_timestamp,
        headers.webhook_signature
    );
    all.push(fuzz(
        "signature headers",
        vec![header_seed.into_bytes()],
        &mut rng,
        budget,
        &|b| {
            let t = text(b);
            let parts: Vec<&str> = t.splitn(4, '\n').collect();
            let [berth_sig, id, ts, std_sig] = parts[..] else {
                return Outcome::Refused("not four header lines".into());
            };
            let a = signing::verify_berth(berth_sig, body, &secret, now, 300);
            let s = signing::verify_standard(id, ts, std_sig, body, &secret, now, 300);
            match (a, s) {
                (Ok(()), Ok(())) => Outcome::Accepted,
                // Either refusal must say why.
                (Err(e), _) | (_, Err(e)) => Outcome::Refused(e.to_string()),
            }
        },
    ));

    let _ = std::panic::take_hook();
    println!("fuzz run: seed {seed}, {secs} s per target");
    println!(
        "{:<22} {:>9} {:>9} {:>9} {:>7}",
        "target", "execs", "accepted", "refused", "corpus"
    );
    for f in &all {
        println!(
            "{:<22} {:>9} {:>9} {:>9} {:>7}",
            f.name, f.execs, f.accepted, f.refused, f.corpus
        );
        assert!(f.execs > 0, "{}: nothing ran", f.name);
    }
    if let Some(kb) = peak_kb() {
        println!("peak resident memory: {kb} kB");
        assert!(kb < MAX_PEAK_KB, "peak memory {kb} kB");
    }
}
