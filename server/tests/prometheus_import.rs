//! `berth import prometheus`, run as a user would: the built binary against
//! a fake Prometheus serving recorded Istio query responses
//! (`tests/fixtures/prometheus/`) and a fake Berth keeping to the
//! observations API's contract.

mod fakes;

use fakes::{berth, fake_berth, fake_prometheus, fixture, istio_responses, run, TOKEN};
use serde_json::{json, Value};

/// The flows the fixtures derive (with catalog-v1 and catalog-v2 mapped to
/// catalog), as (from, to, weight, MB/s). Each weight is requests/s ×
/// mean duration / 1000, each MB/s bytes/s / 10⁶, to six significant
/// digits:
///
/// - shop-bff → catalog: 60 × 80.5 + 40 × 75.25 (two workloads) = 7.84;
///   (7,000,000 + 6,500,000) B/s = 13.5 MB/s
/// - shop-bff → checkout: 20.5 × 146.3 = 2.99915; 815,233.2 B/s
/// - shop-bff → promotions: no requests in the window: 0 (duration NaN)
/// - shop-frontend → clickstream-collector: no duration: MB/s only
/// - shop-frontend → shop-bff: 150.2 × 60.1 = 9.02702; 12.07 MB/s
/// - shop-gateway → shop-frontend: 212.4 × 66.4 = 14.10336 → 14.1034;
///   38,204,101.3 B/s → 38.2041 MB/s
const EXPECTED: [(&str, &str, Option<f64>, f64); 6] = [
    ("shop-bff", "catalog", Some(7.84), 13.5),
    ("shop-bff", "checkout", Some(2.99915), 0.815233),
    ("shop-bff", "promotions", Some(0.0), 0.0),
    ("shop-frontend", "clickstream-collector", None, 4.95),
    ("shop-frontend", "shop-bff", Some(9.02702), 12.07),
    ("shop-gateway", "shop-frontend", Some(14.1034), 38.2041),
];

/// The observations EXPECTED makes, dated `at`.
fn expected_observations(at: &str) -> Vec<Value> {
    let mut out = vec![];
    for (from, to, weight, mb_s) in EXPECTED {
        let o = |fact: &str, v: f64| {
            json!({"fact": fact, "from": from, "to": to, "value": v, "class": "measured",
                   "observed_at": at})
        };
        if let Some(w) = weight {
            out.push(o("flow_weight", w));
        }
        out.push(o("flow_mb_s", mb_s));
    }
    out
}

/// The flow observations of a batch (`flow_weight`, `flow_mb_s`).
fn flows(v: &Value) -> Value {
    Value::Array(
        v.as_array()
            .unwrap()
            .iter()
            .filter(|o| o["fact"].as_str().unwrap().starts_with("flow_"))
            .cloned()
            .collect(),
    )
}

/// The services a batch says the mesh covered (`traffic`, 300 s,
/// measured), in the order sent.
fn covered(v: &Value) -> Vec<String> {
    v.as_array()
        .unwrap()
        .iter()
        .filter(|o| o["fact"] == "traffic")
        .map(|o| {
            assert_eq!(
                (o["value"].as_f64(), o["class"].as_str()),
                (Some(300.0), Some("measured")),
                "{o}"
            );
            o["service"].as_str().unwrap().to_string()
        })
        .collect()
}

/// Every service of the sample the fixtures' series name (catalog through
/// its two mapped versions; istio-ingressgateway is no service of it).
const COVERED: [&str; 8] = [
    "catalog",
    "checkout",
    "clickstream-collector",
    "promotions",
    "search",
    "shop-bff",
    "shop-frontend",
    "shop-gateway",
];

fn example() -> String {
    concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../examples/prometheus/istio-results.json"
    )
    .to_string()
}

/// The fixtures' shop-bff calls two versions of catalog, as Istio names
/// their Deployments; both are the estate's service `catalog`.
const MAPS: [&str; 4] = ["--map", "catalog-v1=catalog", "--map", "catalog-v2=catalog"];

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn istio_metrics_become_measured_flow_observations() {
    let (prom, prom_log) = fake_prometheus(istio_responses()).await;
    let (server, berth_log) = fake_berth(true, vec![]).await;
    let mut c = berth();
    c.args([
        "import",
        "prometheus",
        "--server",
        &server,
        "--estate",
        "sample",
        "--url",
        &prom,
    ])
    .args(MAPS)
    .env("BERTH_TOKEN", TOKEN);
    let (code, out, err) = run(c).await;
    assert_eq!(code, 0, "{out}\n{err}");

    // The four default queries, evaluated at one and the same time.
    let requests = prom_log.requests.lock().unwrap().clone();
    let queries: Vec<&str> = requests.iter().map(|(q, _)| q.as_str()).collect();
    let d = berth::import::mesh::Queries::default();
    assert_eq!(
        queries,
        [
            d.rate.as_str(),
            d.duration.as_str(),
            d.bytes.as_deref().unwrap(),
            d.coverage.as_deref().unwrap()
        ]
    );
    let time = requests[0].1.clone().expect("an evaluation time is given");
    assert!(requests
        .iter()
        .all(|(_, t)| t.as_deref() == Some(time.as_str())));
    let at = berth_engine::estate::format_time(time.parse().unwrap());

    // One batch, exactly the derived flows, dated by the samples.
    let posts = berth_log.posts.lock().unwrap().clone();
    assert_eq!(posts.len(), 1, "{posts:?}");
    let (body, status, _) = &posts[0];
    assert_eq!(*status, 200);
    assert!(body["batch_id"]
        .as_str()
        .unwrap()
        .starts_with("prometheus-"));
    assert_eq!(
        flows(&body["observations"]),
        json!(expected_observations(&at))
    );
    assert_eq!(covered(&body["observations"]), COVERED);

    // What was sent, per edge, and why the rest was not.
    for line in [
        "shop-gateway → shop-frontend weight 14.1034 MB/s 38.2041",
        "shop-frontend → clickstream-collector weight – MB/s 4.95",
        "shop-bff → promotions weight 0 MB/s 0",
        "no_duration: shop/shop-frontend → shop/clickstream-collector: requests but no duration sample: weight not observed",
        "outside_mesh: checkout/checkout → unknown/unknown: traffic to outside the mesh",
        "self_edge: search/search → search/search: both ends are service \"search\"",
        "not_in_estate: workload istio-system/istio-ingressgateway (as service \"istio-ingressgateway\") is not a service of the estate: 1 edge skipped",
        "estate \"sample\" now at version 2, 19 applied",
    ] {
        assert!(squash(&out).contains(line), "missing {line:?} in:\n{out}");
    }
    assert!(!out.contains(TOKEN) && !err.contains(TOKEN));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn saved_results_and_dry_run() {
    // The example file is the fixtures, in the file-mode shape.
    let saved: Value = serde_json::from_str(&std::fs::read_to_string(example()).unwrap()).unwrap();
    assert_eq!(
        saved,
        json!({"rate": fixture("rate"), "duration": fixture("duration"), "bytes": fixture("bytes"), "coverage": fixture("coverage")})
    );

    // --dry-run needs no server, sends nothing, and shows the batch. With
    // no server to ask, workloads are not checked against the estate's
    // services: istio-ingressgateway's edge is in the batch (a server
    // would refuse it, see below).
    let mut c = berth();
    c.args([
        "import",
        "prometheus",
        "--estate",
        "sample",
        "--file",
        &example(),
        "--dry-run",
    ])
    .args(MAPS);
    let (code, out, err) = run(c).await;
    assert_eq!(code, 0, "{out}\n{err}");
    assert!(out.contains("dry run: 22 observations not sent"), "{out}");
    assert!(
        out.contains("services not checked: no --server to ask"),
        "{out}"
    );
    let batch: Value = serde_json::from_str(&out[out.find("\n{").unwrap()..]).unwrap();
    let at = "2026-11-30T04:05:00Z";
    let ingress = |fact: &str, v: f64| {
        json!({"fact": fact, "from": "istio-ingressgateway", "to": "shop-gateway", "value": v,
               "class": "measured", "observed_at": at})
    };
    // 215.3 req/s × 72.5 ms = 15.60925 → 15.6092 (six digits, the binary
    // value is just below the half); 39,104,220 B/s.
    let mut expected = vec![
        ingress("flow_weight", 15.6092),
        ingress("flow_mb_s", 39.1042),
    ];
    expected.extend(expected_observations(at));
    assert_eq!(flows(&batch["observations"]), json!(expected));
    // Unchecked, istio-ingressgateway is covered too (a server refuses it).
    let mut unchecked: Vec<&str> = COVERED.to_vec();
    unchecked.insert(3, "istio-ingressgateway");
    assert_eq!(covered(&batch["observations"]), unchecked);

    // Sent for real with a token that may read the estate, the edge is
    // left out; the same file is the same batch: a retry is a duplicate
    // and changes nothing.
    let (server, berth_log) = fake_berth(true, vec![]).await;
    for expect in [
        "now at version 2, 19 applied",
        "was already applied (duplicate)",
    ] {
        let mut c = berth();
        c.args([
            "import",
            "prometheus",
            "--server",
            &server,
            "--token",
            TOKEN,
        ])
        .args(["--estate", "sample", "--file", &example()])
        .args(MAPS);
        let (code, out, err) = run(c).await;
        assert_eq!(code, 0, "{out}\n{err}");
        assert!(out.contains(expect), "{out}");
    }
    let posts = berth_log.posts.lock().unwrap().clone();
    assert_eq!(posts.len(), 2);
    assert_eq!(posts[0].0, posts[1].0);
    assert_eq!(
        flows(&posts[0].0["observations"]),
        json!(expected_observations(at))
    );
    assert_eq!(covered(&posts[0].0["observations"]), COVERED);
    assert_eq!(berth_log.applied.lock().unwrap().len(), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unmapped_workloads_are_skipped_and_reported_never_guessed() {
    // An operator's token reads the estate: catalog-v1 and catalog-v2 are
    // not services of it, so their edges are reported, not sent.
    let (server, berth_log) = fake_berth(true, vec![]).await;
    let mut c = berth();
    c.args([
        "import",
        "prometheus",
        "--server",
        &server,
        "--token",
        TOKEN,
    ])
    .args(["--estate", "sample", "--file", &example()]);
    let (code, out, err) = run(c).await;
    assert_eq!(code, 0, "{out}\n{err}");
    for w in ["catalog-v1", "catalog-v2"] {
        assert!(
            out.contains(&format!("not_in_estate: workload shop/{w} (as service \"{w}\") is not a service of the estate: 1 edge skipped; map it with --map {w}=SERVICE")),
            "{out}"
        );
    }
    let posts = berth_log.posts.lock().unwrap().clone();
    assert_eq!(posts.len(), 1);
    let sent = posts[0].0["observations"].as_array().unwrap().clone();
    assert_eq!(
        flows(&Value::Array(sent.clone())).as_array().unwrap().len(),
        9,
        "11 less shop-bff → catalog's two"
    );
    // Unmapped, catalog's versions cover no service of the estate.
    let mut unmapped: Vec<&str> = COVERED.to_vec();
    unmapped.remove(0);
    assert_eq!(covered(&Value::Array(sent.clone())), unmapped);
    assert!(sent.iter().all(|o| o["to"] != "catalog"));

    // An agent token may not read the estate: the server refuses the
    // unknown services, and the rest is sent once more without them.
    let (server, berth_log) = fake_berth(false, vec![]).await;
    let mut c = berth();
    c.args([
        "import",
        "prometheus",
        "--server",
        &server,
        "--token",
        TOKEN,
    ])
    .args(["--estate", "sample", "--file", &example()]);
    let (code, out, err) = run(c).await;
    assert_eq!(code, 0, "{out}\n{err}");
    assert!(
        out.contains("services not checked: the token may not read the estate"),
        "{out}"
    );
    for line in [
        "refused by the server and left out (9):",
        "flow_weight istio-ingressgateway → shop-gateway: no service \"istio-ingressgateway\" in this estate",
        "flow_mb_s shop-bff → catalog-v2: no service \"catalog-v2\" in this estate",
        "-pruned (16 observations): estate \"sample\" now at version 2, 16 applied",
    ] {
        assert!(out.contains(line), "missing {line:?} in:\n{out}");
    }
    let posts = berth_log.posts.lock().unwrap().clone();
    assert_eq!(posts.iter().map(|p| p.1).collect::<Vec<_>>(), [422, 200]);
    let first = posts[0].0["batch_id"].as_str().unwrap();
    assert_eq!(posts[1].0["batch_id"], format!("{first}-pruned"));
    // An unmapped workload named like no service is never matched to one.
    let pruned_targets: Vec<&str> = posts[1].0["observations"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|o| o["to"].as_str().or(o["service"].as_str()))
        .collect();
    assert!(!pruned_targets.contains(&"catalog"));
}

/// A saved results file with one thing wrong; the error must name the
/// query and the JSON path.
fn broken(edit: impl FnOnce(&mut Value)) -> Value {
    let mut v = json!({"rate": fixture("rate"), "duration": fixture("duration"), "bytes": fixture("bytes")});
    edit(&mut v);
    v
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_results_name_the_query_and_the_path() {
    let dir = tempfile::tempdir().unwrap();
    let cases: Vec<(Value, &str)> = vec![
        (
            broken(|v| v["rate"]["data"]["result"][2]["value"][1] = json!(20.5)),
            "rate query: /rate/data/result/2/value/1: expected a number in a string (Prometheus writes \"12.5\"), found the number 20.5",
        ),
        (
            broken(|v| v["duration"]["data"]["resultType"] = json!("matrix")),
            "duration query: /duration/data/resultType: expected \"vector\" (an instant query, /api/v1/query), found \"matrix\"",
        ),
        (
            broken(|v| {
                v["bytes"]["data"]["result"][4]["metric"]
                    .as_object_mut()
                    .unwrap()
                    .remove("destination_workload");
            }),
            "bytes query: /bytes/data/result/4/metric/destination_workload: missing: the query must group by",
        ),
        (
            broken(|v| {
                let first = v["rate"]["data"]["result"][0].clone();
                v["rate"]["data"]["result"].as_array_mut().unwrap().push(first);
            }),
            "rate query: /rate/data/result/10/metric: a second sample for Kubernetes:shop/shop-bff → Kubernetes:shop/catalog-v1 (the first is /rate/data/result/0)",
        ),
        (
            broken(|v| v["rate"]["data"]["result"][1]["value"][1] = json!("fast")),
            "rate query: /rate/data/result/1/value/1: expected a number in a string, found \"fast\"",
        ),
        (
            broken(|v| {
                v.as_object_mut().unwrap().remove("duration");
            }),
            "duration query: /duration: missing",
        ),
        (
            json!({"status": "error", "errorType": "bad_data", "error": "x"}),
            "bad6.json: this is one query response, not a results file",
        ),
        (
            json!({"rate": fixture("rate"), "duration": fixture("duration"), "latency": {}}),
            "bad7.json: /latency: unknown key: expected \"rate\", \"duration\" and optionally \"bytes\"",
        ),
    ];
    for (i, (v, expect)) in cases.into_iter().enumerate() {
        let path = dir.path().join(format!("bad{i}.json"));
        std::fs::write(&path, serde_json::to_string_pretty(&v).unwrap()).unwrap();
        let mut c = berth();
        c.args([
            "import",
            "prometheus",
            "--estate",
            "sample",
            "--dry-run",
            "--file",
        ])
        .arg(&path);
        let (code, out, err) = run(c).await;
        assert_eq!(code, 1, "case {i}: {out}\n{err}");
        assert!(
            err.contains(expect),
            "case {i}: expected {expect:?} in:\n{err}"
        );
        assert!(
            out.is_empty(),
            "case {i}: nothing is derived from a bad file: {out}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn prometheus_errors_and_custom_queries() {
    let mut responses = istio_responses();
    // A custom rate query, and a bytes query Prometheus itself refuses.
    responses.insert("my_rate".into(), (200, fixture("rate")));
    responses.insert(
        "my_bytes".into(),
        (
            422,
            json!({"status": "error", "errorType": "execution", "error": "many-to-many matching not allowed"}),
        ),
    );
    responses.insert(
        "slow".into(),
        (
            503,
            json!({"status": "error", "errorType": "timeout", "error": "query timed out in expression evaluation"}),
        ),
    );
    let (prom, log) = fake_prometheus(responses).await;
    let import = |extra: &[&str]| {
        let mut c = berth();
        c.args([
            "import",
            "prometheus",
            "--estate",
            "sample",
            "--dry-run",
            "--url",
            &prom,
        ])
        .args(MAPS)
        .args(extra);
        c
    };

    let (code, _, err) = run(import(&["--query-bytes", "my_bytes"])).await;
    assert_eq!(code, 1, "{err}");
    assert!(
        err.contains("Prometheus: bytes query: Prometheus answered errorType \"execution\": many-to-many matching not allowed"),
        "{err}"
    );
    let (code, _, err) = run(import(&["--query-duration", "sum(("])).await;
    assert_eq!(code, 1, "{err}");
    assert!(
        err.contains("duration query: Prometheus answered errorType \"bad_data\""),
        "{err}"
    );
    // Prometheus being overloaded is not the input's fault.
    let (code, _, err) = run(import(&["--query-rate", "slow"])).await;
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("errorType \"timeout\""), "{err}");

    // A custom rate query, and MB/s switched off.
    log.requests.lock().unwrap().clear();
    let (code, out, err) = run(import(&["--query-rate", "my_rate", "--query-bytes", ""])).await;
    assert_eq!(code, 0, "{err}");
    let queries: Vec<String> = log
        .requests
        .lock()
        .unwrap()
        .iter()
        .map(|r| r.0.clone())
        .collect();
    let d = berth::import::mesh::Queries::default();
    assert_eq!(
        queries,
        ["my_rate".to_string(), d.duration, d.coverage.unwrap()]
    );
    assert!(
        out.contains("dry run: 15 observations not sent"),
        "weights only: {out}"
    );
    assert!(
        squash(&out).contains("shop-gateway → shop-frontend weight 14.1034 MB/s –"),
        "{out}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn usage_and_connection_errors_exit_2() {
    let (prom, _) = fake_prometheus(istio_responses()).await;
    let closed = fakes::closed_port_url();
    let cases: Vec<(Vec<String>, &str)> = vec![
        (
            vec!["--url".into(), closed.clone(), "--dry-run".into()],
            "Prometheus: rate query: cannot reach",
        ),
        (
            vec![
                "--url".into(),
                prom.clone(),
                "--server".into(),
                closed.clone(),
                "--token".into(),
                TOKEN.into(),
            ],
            "reading the estate \"sample\": cannot reach",
        ),
        (
            vec!["--url".into(), "prometheus:9090".into(), "--dry-run".into()],
            "expected an http:// or https:// URL",
        ),
        (
            vec![
                "--url".into(),
                prom.clone(),
                "--dry-run".into(),
                "--map".into(),
                "catalog".into(),
            ],
            "expected WORKLOAD=SERVICE",
        ),
        // TLS is built in: https to a plain-HTTP server fails in the
        // handshake, not for want of TLS support.
        (
            vec![
                "--url".into(),
                prom.replace("http://", "https://"),
                "--dry-run".into(),
            ],
            "Prometheus: rate query: cannot reach https://",
        ),
        (vec!["--url".into(), prom.clone()], "--server"),
        (
            vec![
                "--file".into(),
                "/nonexistent/results.json".into(),
                "--dry-run".into(),
            ],
            "cannot read /nonexistent/results.json",
        ),
    ];
    for (args, expect) in cases {
        let mut c = berth();
        c.args(["import", "prometheus", "--estate", "sample"])
            .args(&args);
        let (code, out, err) = run(c).await;
        assert_eq!(code, 2, "{args:?}: {out}\n{err}");
        assert!(
            err.contains(expect),
            "{args:?}: expected {expect:?} in:\n{err}"
        );
    }

    // A wrong token is refused (401), never retried, never echoed.
    let (server, _) = fake_berth(true, vec![]).await;
    let mut c = berth();
    c.args([
        "import",
        "prometheus",
        "--estate",
        "sample",
        "--url",
        &prom,
        "--server",
        &server,
    ])
    .env("BERTH_TOKEN", "berth_not-the-right-one");
    let (code, out, err) = run(c).await;
    assert_eq!(code, 2, "{out}\n{err}");
    assert!(err.contains("refused (401): wrong token"), "{err}");
    assert!(!err.contains("berth_not-the-right-one") && !out.contains("berth_not-the-right-one"));
}

/// Runs of spaces as one: report columns are padded to the longest edge.
fn squash(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        if !(c == ' ' && out.ends_with(' ')) {
            out.push(c);
        }
    }
    out
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rate_limits_are_waited_out_and_conflicts_are_refused() {
    // 429 with Retry-After: 1 → the import waits and sends again.
    let (server, log) = fake_berth(true, vec![(429, Some(1))]).await;
    let mut c = berth();
    c.args([
        "import",
        "prometheus",
        "--server",
        &server,
        "--token",
        TOKEN,
    ])
    .args(["--estate", "sample", "--file", &example()])
    .args(MAPS);
    let started = std::time::Instant::now();
    let (code, out, err) = run(c).await;
    assert_eq!(code, 0, "{out}\n{err}");
    assert!(
        started.elapsed() >= std::time::Duration::from_secs(1),
        "Retry-After honoured"
    );
    assert!(
        err.contains("server unavailable (429): scripted failure; retrying in"),
        "{err}"
    );
    let posts = log.posts.lock().unwrap().clone();
    assert_eq!(posts.iter().map(|p| p.1).collect::<Vec<_>>(), [429, 200]);
    assert_eq!(posts[0].0, posts[1].0, "the same batch, same id");

    // The same batch id with another body is a conflict: exit 1. The
    // server (agent token: it cannot be read, so the batch is the dry
    // run's) is made to hold another body under the batch's id.
    let (server, log) = fake_berth(false, vec![]).await;
    let mut c = berth();
    c.args([
        "import",
        "prometheus",
        "--estate",
        "sample",
        "--file",
        &example(),
        "--dry-run",
    ]);
    let (_, out, _) = run(c).await;
    let batch: Value = serde_json::from_str(&out[out.find("\n{").unwrap()..]).unwrap();
    log.applied
        .lock()
        .unwrap()
        .insert(batch["batch_id"].as_str().unwrap().to_string(), json!([]));
    let mut c = berth();
    c.args([
        "import",
        "prometheus",
        "--server",
        &server,
        "--token",
        TOKEN,
    ])
    .args(["--estate", "sample", "--file", &example()]);
    let (code, out, err) = run(c).await;
    assert_eq!(code, 1, "{out}\n{err}");
    assert!(
        err.contains("conflict (409): batch id used with another body"),
        "{err}"
    );
}

/// End to end: a real `berth serve`, an agent token made through the API,
/// the import against the fake Prometheus, and the estate file read back.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn end_to_end_the_estate_holds_the_observed_flows() {
    let server = fakes::RealBerth::start().await;
    let token = server.agent_token("agent-c-fra-1").await;
    let (prom, prom_log) = fake_prometheus(istio_responses()).await;
    let before = server.estate_file().await;

    let mut c = berth();
    c.args([
        "import",
        "prometheus",
        "--server",
        &server.url,
        "--estate",
        "sample",
    ])
    .args(["--url", &prom])
    .args(MAPS)
    .env("BERTH_TOKEN", &token);
    let (code, out, err) = run(c).await;
    assert_eq!(code, 0, "{out}\n{err}\n{}", server.log.lock().unwrap());
    // The agent token may not read the estate: the server refused
    // istio-ingressgateway, and the rest landed as one batch.
    for line in [
        "refused by the server and left out (3):",
        "flow_weight istio-ingressgateway → shop-gateway: no service \"istio-ingressgateway\" in this estate",
        "-pruned (19 observations): estate \"sample\" now at version 2, 19 applied",
    ] {
        assert!(out.contains(line), "missing {line:?} in:\n{out}");
    }

    let time: i64 = prom_log.requests.lock().unwrap()[0]
        .1
        .as_ref()
        .unwrap()
        .parse()
        .unwrap();
    let at = berth_engine::estate::format_time(time);
    let after = server.estate_file().await;
    // The source recorded is the token that sent the batch.
    let source = fakes::flow(&after, "shop-bff", "catalog")["mb_s"]["source"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(
        source.starts_with("token:") && source.ends_with(" (agent-c-fra-1)"),
        "{source}"
    );
    for (from, to, weight, mb_s) in EXPECTED {
        let f = fakes::flow(&after, from, to);
        let fact =
            |v: f64| json!({"value": v, "class": "measured", "source": source, "observed_at": at});
        assert_eq!(f["mb_s"], fact(mb_s), "{from} → {to}");
        match weight {
            Some(w) => assert_eq!(f["weight"], fact(w), "{from} → {to}"),
            // Not observed: what the estate knew stays.
            None => assert_eq!(
                f["weight"],
                fakes::flow(&before, from, to)["weight"],
                "{from} → {to}"
            ),
        }
    }
    assert!(!server.log.lock().unwrap().contains(&token));
}
