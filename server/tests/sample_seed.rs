//! The seeded sample is fresh on any day: at first start its observation
//! times are moved so that, at that start, every fact has the class it was
//! designed to have at `SAMPLE_DESIGNED_AT` (most measured, a few
//! deliberately stale). Checked on two first starts years apart, through
//! the stored estate and through the estate summary the pages read.

mod support;

use axum::body::Body;
use axum::http::Request;
use berth_engine::estate::{self, Estate};
use berth_engine::fact::{Class, Fact};
use berth_engine::{Format, Policy};
use tower::ServiceExt;

const ADMIN: &str = "sample-seed-admin-token-0123456789abcdef";

fn facts(e: &Estate) -> Vec<(String, &Fact)> {
    let mut out = Vec::new();
    for c in &e.clusters {
        out.push((format!("{} cpu_free", c.id), &c.cpu_free));
        out.push((format!("{} memory_free_gib", c.id), &c.memory_free_gib));
    }
    for (kind, list) in [("link", &e.links), ("path", &e.paths)] {
        for (i, r) in list.iter().enumerate() {
            out.push((format!("{kind} {i}"), &r.rtt_ms));
        }
    }
    for f in &e.flows {
        let name = format!("{}→{}", e.services[f.from].id, e.services[f.to].id);
        out.push((format!("{name} weight"), &f.weight));
        out.push((format!("{name} mb_s"), &f.mb_s));
    }
    out
}

/// Every fact's class at `now`, by name, and the count per class.
fn classes_at(e: &Estate, now: i64) -> (Vec<(String, Class)>, [usize; 4]) {
    let policy = Policy::default();
    let mut counts = [0; 4];
    let each: Vec<(String, Class)> = facts(e)
        .into_iter()
        .map(|(name, f)| {
            let c = f.class_at(now, &policy);
            counts[c as usize] += 1;
            (name, c)
        })
        .collect();
    (each, counts)
}

async fn first_start_at(sample_at: Option<i64>) -> (Estate, serde_json::Value, support::TestDb) {
    let db = support::TestDb::new(support::Backend::Sqlite).await;
    let mut opts = berth::serve::ServeOptions::new(
        "127.0.0.1:0".parse().unwrap(),
        Some(db.url.clone()),
        std::env::temp_dir(),
    );
    opts.admin_token = Some(ADMIN.into());
    opts.sample_at = sample_at;
    let (state, _) = berth::serve::prepare(&opts).await.expect("prepare");
    let row = berth::store::estate_row(&state.db, "sample")
        .await
        .unwrap()
        .expect("the sample is seeded");
    let e = estate::load(&row.document, Format::Json).expect("the stored sample loads");
    let resp = berth::http::app(state)
        .oneshot(
            Request::builder()
                .uri("/api/estates/sample")
                .header("authorization", format!("Bearer {ADMIN}"))
                .body(Body::empty())
                .unwrap(),
        )
        .await
        .unwrap();
    assert_eq!(resp.status(), 200);
    let bytes = axum::body::to_bytes(resp.into_body(), usize::MAX)
        .await
        .unwrap();
    (e, serde_json::from_slice(&bytes).unwrap(), db)
}

#[tokio::test]
async fn the_sample_has_its_designed_class_mix_at_any_first_start() {
    let designed_at = berth::serve::sample_designed_at();
    let shipped = estate::load(berth::serve::SAMPLE_ESTATE, Format::Json).unwrap();
    let (designed, designed_counts) = classes_at(&shipped, designed_at);
    // The design is a mix, not all fresh: otherwise this test would prove
    // nothing about ages. [measured, reported, inferred, guessed]
    assert!(designed_counts[0] > 0, "{designed_counts:?}");
    assert!(
        designed_counts[1] + designed_counts[2] > 0,
        "the sample has deliberately stale facts: {designed_counts:?}"
    );

    // Two first starts on other days: the next day (when an unshifted
    // sample turns most facts inferred), and years later.
    for start in ["2026-12-01T13:07:00Z", "2031-02-17T09:41:26Z"] {
        let t = estate::parse_time(start).unwrap();
        let (seeded, summary, _db) = first_start_at(Some(t)).await;
        let (each, counts) = classes_at(&seeded, t);
        assert_eq!(
            counts, designed_counts,
            "class mix at a first start on {start}"
        );
        assert_eq!(
            each, designed,
            "every fact's class at a first start on {start}"
        );
        // The summary the pages read: the newest fact is as recent as in
        // the design, and the banner is not due.
        let newest = estate::parse_time(summary["newest_observation"].as_str().unwrap()).unwrap();
        assert_eq!(
            t - newest,
            designed_at - shipped.newest_observation().unwrap(),
            "{summary}"
        );
        let stale_since = estate::parse_time(summary["stale_since"].as_str().unwrap()).unwrap();
        assert!(stale_since > t, "a fresh sample shows no banner: {summary}");
        // Without the shift, that day's estate would be degraded: the test
        // can tell the difference.
        let (_, unshifted) = classes_at(&shipped, t);
        assert_ne!(
            unshifted, designed_counts,
            "at {start} the shipped file is stale"
        );
    }
}

#[tokio::test]
async fn seeding_at_the_designed_time_keeps_the_file_as_it_is() {
    let designed_at = berth::serve::sample_designed_at();
    let (seeded, _, _db) = first_start_at(Some(designed_at)).await;
    let shipped = estate::load(berth::serve::SAMPLE_ESTATE, Format::Json).unwrap();
    assert_eq!(
        berth_engine::export::version(&seeded),
        berth_engine::export::version(&shipped)
    );
}

#[tokio::test]
async fn by_default_the_sample_is_dated_for_the_first_start() {
    let before = berth::clock::now_s();
    let (seeded, _, _db) = first_start_at(None).await;
    let after = berth::clock::now_s();
    let shipped = estate::load(berth::serve::SAMPLE_ESTATE, Format::Json).unwrap();
    let lead = berth::serve::sample_designed_at() - shipped.newest_observation().unwrap();
    let newest = seeded.newest_observation().unwrap();
    assert!(
        (before - lead..=after - lead).contains(&newest),
        "newest {newest} for a start in {before}..={after}"
    );
}

#[test]
fn the_makefile_evaluates_the_sample_at_its_designed_time() {
    let makefile = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../Makefile"))
        .expect("reads the Makefile");
    let line = makefile
        .lines()
        .find(|l| l.starts_with("SAMPLE_NOW ?="))
        .expect("the Makefile sets SAMPLE_NOW");
    assert_eq!(
        line.trim_start_matches("SAMPLE_NOW ?=").trim(),
        berth::serve::SAMPLE_DESIGNED_AT
    );
}
