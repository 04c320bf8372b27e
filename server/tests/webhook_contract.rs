//! The external-decider contract, `docs/decider-webhook.openapi.yaml`,
//! against the code that implements it.
//!
//! - the spec is valid OpenAPI (openapi-spec-validator);
//! - its limits are the engine's;
//! - every test vector is reproduced exactly by `signing::sign` and
//!   accepted by the reference verifier;
//! - its schemas accept the real schema-1 requests Berth builds (and name
//!   every field of them), reject broken ones, and judge replies exactly as
//!   `decider::parse_response` does;
//! - the official `stripe` and `standardwebhooks` Python packages verify
//!   what `signing::sign` produces, including during a rotation;
//! - the example decider (`berth-example-decider`) verifies signatures and
//!   answers with proposals Berth can parse, through a real process.
//!
//! [`validate`] and [`validate_many`] are meant for reuse: they check any
//! JSON value against a schema of the spec by name.

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{SystemTime, UNIX_EPOCH};

use serde_json::{json, Value};

use berth::external::signing::{self, Secret, VerifyError};
use berth_engine::decider::{self, RawProposal};
use berth_engine::{estate, gen, request, Format, Policy};

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn spec_path() -> PathBuf {
    repo().join("docs/decider-webhook.openapi.yaml")
}

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/webhook")
        .join(name)
}

/// The spec as JSON.
fn spec() -> Value {
    let text = std::fs::read_to_string(spec_path()).expect("reading the webhook spec");
    let yaml: serde_yaml::Value = serde_yaml::from_str(&text).expect("the webhook spec is YAML");
    serde_json::to_value(yaml).expect("the webhook spec converts to JSON")
}

/// Run a Python script of the fixtures with `input` on stdin; its stdout
/// as JSON. Fails (never skips) when Python or a package is missing.
fn python(script: &str, input: &Value) -> Value {
    let mut child = Command::new("python3")
        .arg(fixture(script))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| {
            panic!("cannot run python3 (`make tools` installs what it needs): {e}")
        });
    let bytes = serde_json::to_vec(input).unwrap();
    child.stdin.take().unwrap().write_all(&bytes).unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "{script} failed ({}):\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "{script} printed no JSON ({e}): {}",
            String::from_utf8_lossy(&out.stdout)
        )
    })
}

/// Validate each `(instance, schema name)` against
/// `#/components/schemas/<name>` of the webhook spec (JSON Schema 2020-12,
/// Python `jsonschema`). With `closed`, an object field the schema does not
/// list is an error too, which proves the spec documents every field.
/// One `Err(errors)` or `Ok(())` per item, in order.
pub fn validate_many(items: &[(&Value, &str)], closed: bool) -> Vec<Result<(), String>> {
    let input = json!({
        "spec": spec_path(),
        "closed": closed,
        "items": items.iter().map(|(v, s)| json!({"schema": s, "instance": v})).collect::<Vec<_>>(),
    });
    let out = python("validate.py", &input);
    let out = out.as_array().expect("validate.py prints a list");
    assert_eq!(out.len(), items.len());
    out.iter()
        .map(|r| match r {
            Value::Null => Ok(()),
            other => Err(other.as_str().unwrap_or("?").to_string()),
        })
        .collect()
}

/// [`validate_many`] for one value, schemas open (as a decider reads them).
pub fn validate(instance: &Value, schema: &str) -> Result<(), String> {
    validate_many(&[(instance, schema)], false).remove(0)
}

const SAMPLE_NOW: &str = "2026-11-30T04:05:00Z";

/// The request `berth preview examples/estates/sample.json --now
/// 2026-11-30T04:05:00Z` prints: the engine's request builder, default
/// policy.
fn sample_request() -> request::DeciderRequest {
    let text = std::fs::read_to_string(repo().join("examples/estates/sample.json")).unwrap();
    let e = estate::load(&text, Format::Json).expect("the sample estate loads");
    let now = estate::parse_time(SAMPLE_NOW).unwrap();
    request::build(&e, &Policy::default(), now)
}

fn unix_now() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_secs() as i64
}

// ---------------------------------------------------------------------------
// The spec itself.

#[test]
fn openapi_spec_validator_accepts_the_spec() {
    let out = Command::new("python3")
        .args(["-m", "openapi_spec_validator"])
        .arg(spec_path())
        .output()
        .unwrap_or_else(|e| {
            panic!("cannot run python3 (openapi-spec-validator; `make tools`): {e}")
        });
    assert!(
        out.status.success(),
        "openapi-spec-validator rejects the webhook spec:\n{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn the_spec_states_the_engines_limits() {
    let spec = spec();
    let limits = &spec["info"]["x-berth-limits"];
    let n = |k: &str| {
        limits[k]
            .as_u64()
            .unwrap_or_else(|| panic!("x-berth-limits.{k}")) as usize
    };
    assert_eq!(n("reply-max-body-bytes"), decider::MAX_BODY_BYTES);
    assert_eq!(n("reply-max-depth"), decider::MAX_DEPTH);
    assert_eq!(n("reply-max-proposals"), decider::MAX_PROPOSALS);
    assert_eq!(n("reply-max-string-bytes"), decider::MAX_STRING_BYTES);
    assert_eq!(n("request-max-body-bytes"), decider::MAX_REQUEST_BYTES);
    assert_eq!(n("request-max-clusters"), decider::MAX_REQUEST_CLUSTERS);
    assert_eq!(n("request-max-services"), decider::MAX_REQUEST_SERVICES);
    assert_eq!(n("request-max-flows"), decider::MAX_REQUEST_FLOWS);
    let schemas = &spec["components"]["schemas"];
    let max_items = |path: &[&str]| {
        let mut v = schemas;
        for p in path {
            v = &v[*p];
        }
        v["maxItems"]
            .as_u64()
            .unwrap_or_else(|| panic!("{path:?} has no maxItems")) as usize
    };
    assert_eq!(max_items(&["ProposalList"]), decider::MAX_PROPOSALS);
    assert_eq!(
        max_items(&["DeciderRequest", "properties", "clusters"]),
        decider::MAX_REQUEST_CLUSTERS
    );
    assert_eq!(
        max_items(&["DeciderRequest", "properties", "services"]),
        decider::MAX_REQUEST_SERVICES
    );
    assert_eq!(
        max_items(&["DeciderRequest", "properties", "flows"]),
        decider::MAX_REQUEST_FLOWS
    );
    for p in ["serviceId", "to", "reason"] {
        assert_eq!(
            schemas["Proposal"]["properties"][p]["maxLength"].as_u64(),
            Some(decider::MAX_STRING_BYTES as u64),
            "Proposal.{p}"
        );
    }
    assert_eq!(
        schemas["BerthSignatureHeader"]["maxLength"].as_u64(),
        Some(signing::MAX_HEADER_BYTES as u64)
    );
    assert_eq!(
        schemas["WebhookSignatureHeader"]["maxLength"].as_u64(),
        Some(signing::MAX_HEADER_BYTES as u64)
    );
    assert_eq!(
        schemas["WebhookIdHeader"]["maxLength"].as_u64(),
        Some(signing::MAX_WEBHOOK_ID_BYTES as u64)
    );
    // The call is described where OpenAPI 3.1 puts calls Berth makes.
    let post = &spec["webhooks"]["decide"]["post"];
    for status in ["2XX", "3XX", "429", "503", "default"] {
        assert!(
            post["responses"][status].is_object(),
            "no response {status}"
        );
    }
    let params: Vec<&str> = post["parameters"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["name"].as_str().unwrap())
        .collect();
    for h in [
        signing::BERTH_SIGNATURE,
        signing::WEBHOOK_ID,
        signing::WEBHOOK_TIMESTAMP,
        signing::WEBHOOK_SIGNATURE,
        "user-agent",
    ] {
        assert!(params.contains(&h), "header {h} is not documented");
    }
}

// ---------------------------------------------------------------------------
// Test vectors.

struct Vector {
    name: String,
    secrets: Vec<Secret>,
    id: String,
    t: i64,
    body: String,
    headers: signing::SignatureHeaders,
}

fn vectors() -> Vec<Vector> {
    let spec = spec();
    let list = spec["x-test-vectors"]
        .as_array()
        .expect("x-test-vectors is a list");
    list.iter()
        .map(|v| {
            let s = |k: &str| {
                v[k].as_str()
                    .unwrap_or_else(|| panic!("vector field {k}"))
                    .to_string()
            };
            let h = |k: &str| {
                v["headers"][k]
                    .as_str()
                    .unwrap_or_else(|| panic!("vector header {k}"))
                    .to_string()
            };
            Vector {
                name: s("name"),
                secrets: v["secrets"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|s| Secret::parse(s.as_str().unwrap()).expect("a vector's secret parses"))
                    .collect(),
                id: s("webhook_id"),
                t: v["timestamp"].as_i64().expect("timestamp"),
                body: s("body"),
                headers: signing::SignatureHeaders {
                    berth_signature: h("berth-signature"),
                    webhook_id: h("webhook-id"),
                    webhook_timestamp: h("webhook-timestamp"),
                    webhook_signature: h("webhook-signature"),
                },
            }
        })
        .collect()
}

#[test]
fn every_test_vector_is_reproduced_by_the_signer_and_accepted_by_the_verifier() {
    let vectors = vectors();
    // The cases the contract promises are there.
    assert!(vectors.len() >= 3);
    assert!(vectors.iter().any(|v| v.secrets.len() == 1));
    assert!(
        vectors.iter().any(|v| v.secrets.len() == 2),
        "no rotation vector"
    );
    assert!(
        vectors.iter().any(|v| !v.body.is_ascii()),
        "no non-ASCII body"
    );
    let mut header_checks = Vec::new();
    for v in &vectors {
        let refs: Vec<&Secret> = v.secrets.iter().collect();
        let got = signing::sign(&refs, &v.id, v.t, v.body.as_bytes());
        assert_eq!(got, v.headers, "vector {}", v.name);
        let body = v.body.as_bytes();
        let h = &v.headers;
        for (i, secret) in v.secrets.iter().enumerate() {
            let what = format!("vector {} secret {i}", v.name);
            signing::verify_berth(&h.berth_signature, body, secret, v.t, 300).expect(&what);
            signing::verify_standard(
                &h.webhook_id,
                &h.webhook_timestamp,
                &h.webhook_signature,
                body,
                secret,
                v.t,
                300,
            )
            .expect(&what);
            // Five minutes and a second later, both are stale.
            let late = v.t + 301;
            assert!(matches!(
                signing::verify_berth(&h.berth_signature, body, secret, late, 300),
                Err(VerifyError::TooOld { .. })
            ));
            assert!(matches!(
                signing::verify_standard(
                    &h.webhook_id,
                    &h.webhook_timestamp,
                    &h.webhook_signature,
                    body,
                    secret,
                    late,
                    300
                ),
                Err(VerifyError::TooOld { .. })
            ));
            // One more byte of body, and neither matches.
            let tampered = [body, b" "].concat();
            assert_eq!(
                signing::verify_berth(&h.berth_signature, &tampered, secret, v.t, 300),
                Err(VerifyError::Mismatch)
            );
            assert_eq!(
                signing::verify_standard(
                    &h.webhook_id,
                    &h.webhook_timestamp,
                    &h.webhook_signature,
                    &tampered,
                    secret,
                    v.t,
                    300
                ),
                Err(VerifyError::Mismatch)
            );
        }
        header_checks.push((json!(h.berth_signature), "BerthSignatureHeader"));
        header_checks.push((json!(h.webhook_id), "WebhookIdHeader"));
        header_checks.push((json!(h.webhook_timestamp), "WebhookTimestampHeader"));
        header_checks.push((json!(h.webhook_signature), "WebhookSignatureHeader"));
    }
    // The header schemas accept what the vectors say is sent, and what a
    // real signature of Berth's looks like.
    let real = signing::sign(
        &[&signing::generate(), &signing::generate()],
        &signing::new_webhook_id(),
        unix_now(),
        b"{}",
    );
    for (name, value) in real.pairs() {
        let schema = match name {
            signing::BERTH_SIGNATURE => "BerthSignatureHeader",
            signing::WEBHOOK_ID => "WebhookIdHeader",
            signing::WEBHOOK_TIMESTAMP => "WebhookTimestampHeader",
            _ => "WebhookSignatureHeader",
        };
        header_checks.push((json!(value), schema));
    }
    header_checks.push((
        json!(format!("berth/{}", env!("CARGO_PKG_VERSION"))),
        "UserAgentHeader",
    ));
    let items: Vec<(&Value, &str)> = header_checks.iter().map(|(v, s)| (v, *s)).collect();
    for (r, (v, s)) in validate_many(&items, false).into_iter().zip(&items) {
        r.unwrap_or_else(|e| panic!("{s} rejects {v}: {e}"));
    }
    // And reject a header in the wrong scheme.
    assert!(validate(&json!("t=1796011500,v0=00"), "BerthSignatureHeader").is_err());
}

// ---------------------------------------------------------------------------
// The request and reply schemas.

#[test]
fn the_request_schema_accepts_and_names_every_field_of_real_requests() {
    let sample = serde_json::to_value(sample_request()).unwrap();
    // Synthetic estates add what the sample may lack (unknown values,
    // measured paths, many shapes).
    let mut requests = vec![("sample".to_string(), sample)];
    for seed in 1..=12 {
        let e = gen::estate(&gen::Shape::small(seed));
        requests.push((
            format!("gen small {seed}"),
            serde_json::to_value(request::build(&e, &Policy::default(), gen::NOW)).unwrap(),
        ));
    }
    let items: Vec<(&Value, &str)> = requests
        .iter()
        .map(|(_, v)| (v, "DeciderRequest"))
        .collect();
    for (r, (name, _)) in validate_many(&items, true).into_iter().zip(&requests) {
        r.unwrap_or_else(|e| panic!("DeciderRequest (closed) rejects the {name} request: {e}"));
    }
    // Nothing vacuous: the fields that matter are really checked.
    let sample = &requests[0].1;
    let mutate = |f: &dyn Fn(&mut Value)| {
        let mut v = sample.clone();
        f(&mut v);
        v
    };
    let broken: Vec<(&str, Value)> = vec![
        ("schema 2", mutate(&|v| v["schema"] = json!(2))),
        (
            "no flows",
            mutate(&|v| drop(v.as_object_mut().unwrap().remove("flows"))),
        ),
        (
            "a bad class",
            mutate(&|v| v["clusters"][0]["cpu_free"]["class"] = json!("certain")),
        ),
        (
            "a bad health",
            mutate(&|v| v["clusters"][0]["health"] = json!("sleeping")),
        ),
        (
            "a bad mobility",
            mutate(&|v| v["services"][0]["mobility"] = json!("floating")),
        ),
        (
            "cpu as a string",
            mutate(&|v| v["services"][0]["cpu"] = json!("2")),
        ),
        (
            "an empty candidate",
            mutate(&|v| v["services"][0]["candidates"] = json!([""])),
        ),
        (
            "a 257-character name",
            mutate(&|v| v["estate"] = json!("x".repeat(257))),
        ),
        ("a bad time", mutate(&|v| v["now"] = json!("30/11/2026"))),
        (
            "a bad derivation",
            mutate(&|v| v["links"][0]["derivation"] = json!("guess")),
        ),
    ];
    let items: Vec<(&Value, &str)> = broken.iter().map(|(_, v)| (v, "DeciderRequest")).collect();
    for (r, (what, _)) in validate_many(&items, false).into_iter().zip(&broken) {
        assert!(r.is_err(), "DeciderRequest accepts a request with {what}");
    }
    // An undocumented field is caught by the closed check (and allowed by
    // the open one: fields are additive).
    let extra = mutate(&|v| v["services"][0]["colour"] = json!("blue"));
    assert!(validate_many(&[(&extra, "DeciderRequest")], true)[0].is_err());
    validate(&extra, "DeciderRequest").unwrap();
}

#[test]
fn the_spec_examples_are_real_requests_and_replies() {
    let spec = spec();
    let req = &spec["components"]["examples"]["SmallRequest"]["value"];
    let resp = &spec["components"]["examples"]["SmallResponse"]["value"];
    let r = decider::parse_request(&serde_json::to_vec(req).unwrap())
        .expect("the example request parses");
    assert_eq!(r.schema, 1);
    let p = decider::parse_response(&serde_json::to_vec(resp).unwrap())
        .expect("the example reply parses");
    assert!(p.iter().all(|p| matches!(p, RawProposal::Valid(_))));
    let checks = validate_many(&[(req, "DeciderRequest"), (resp, "DeciderResponse")], true);
    assert_eq!(checks, vec![Ok(()), Ok(())]);
}

/// Whether the spec calls each item a `Proposal`, next to whether the
/// engine's parser reads it as a valid one.
fn judge_items(items: &[Value]) -> Vec<(bool, bool)> {
    let checks: Vec<(&Value, &str)> = items.iter().map(|v| (v, "Proposal")).collect();
    let by_schema = validate_many(&checks, false);
    let by_engine =
        decider::parse_response(&serde_json::to_vec(&json!({"proposals": items})).unwrap())
            .expect("a list of items is a reply");
    by_schema
        .iter()
        .zip(&by_engine)
        .map(|(s, e)| (s.is_ok(), matches!(e, RawProposal::Valid(_))))
        .collect()
}

#[test]
fn the_reply_schemas_judge_as_the_engine_does() {
    // The example replies are accepted as a whole, and item by item the
    // schema and the parser agree on which are well-formed.
    let dir = repo().join("examples/responses");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    files.sort();
    assert!(!files.is_empty());
    for path in &files {
        let bytes = std::fs::read(path).unwrap();
        let reply: Value = serde_json::from_slice(&bytes).unwrap();
        validate(&reply, "DeciderResponse").unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        decider::parse_response(&bytes).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let items = reply["proposals"].as_array().or(reply.as_array()).unwrap();
        for (i, (schema, engine)) in judge_items(items).into_iter().enumerate() {
            assert_eq!(
                schema,
                engine,
                "{} item {i}: schema says {schema}, parser says {engine}",
                path.display()
            );
        }
    }
    // The sample's misspelt item is the one both refuse.
    let sample: Value =
        serde_json::from_slice(&std::fs::read(dir.join("sample-ops-team.json")).unwrap()).unwrap();
    let judged = judge_items(sample["proposals"].as_array().unwrap());
    assert_eq!(judged.iter().filter(|(s, _)| !s).count(), 1);

    // Items at the edges.
    let long = "x".repeat(decider::MAX_STRING_BYTES + 1);
    let edge = vec![
        json!({"serviceId": "a", "to": "b"}),
        json!({"serviceId": "a", "to": "b", "reason": "", "extra": [1, 2]}),
        json!({"serviceId": "a", "to": "b", "reason": "x".repeat(256)}),
        json!({"serviceId": "", "to": "b"}),
        json!({"serviceId": "a"}),
        json!({"serviceId": 1, "to": "b"}),
        json!({"serviceId": "a", "to": "b", "reason": 5}),
        json!({"serviceId": long, "to": "b"}),
        json!({"serviceId": "a", "to": "b", "reason": long}),
        json!("cart"),
        json!(null),
        json!([]),
    ];
    let judged = judge_items(&edge);
    for (i, (schema, engine)) in judged.iter().enumerate() {
        assert_eq!(
            schema, engine,
            "item {}: schema {schema}, parser {engine}",
            edge[i]
        );
    }
    assert_eq!(judged.iter().filter(|(s, _)| *s).count(), 3);

    // Whole bodies: accepted or refused by both.
    let too_many = Value::Array(vec![json!({}); decider::MAX_PROPOSALS + 1]);
    let bodies = vec![
        (json!({"proposals": []}), true),
        (json!([]), true),
        (
            json!({"proposals": [], "decider": "mine", "version": 3}),
            true,
        ),
        (json!({"proposals": 5}), false),
        (json!({"moves": []}), false),
        (json!("proposals"), false),
        (json!(42), false),
        (json!({"proposals": too_many.clone()}), false),
        (too_many, false),
    ];
    let items: Vec<(&Value, &str)> = bodies.iter().map(|(v, _)| (v, "DeciderResponse")).collect();
    for (r, (body, ok)) in validate_many(&items, false).into_iter().zip(&bodies) {
        let engine_ok = decider::parse_response(&serde_json::to_vec(body).unwrap()).is_ok();
        let short = body.to_string().chars().take(60).collect::<String>();
        assert_eq!(r.is_ok(), *ok, "schema on {short}: {r:?}");
        assert_eq!(engine_ok, *ok, "parser on {short}");
    }
}

// ---------------------------------------------------------------------------
// The official libraries.

#[test]
fn official_stripe_and_standardwebhooks_libraries_verify_berths_signatures() {
    let body = serde_json::to_string(&sample_request()).unwrap();
    let utf8_body =
        json!({"schema": 1, "estate": "Zürich – 東京 🚢", "note": "ünïcödé"}).to_string();
    assert!(!utf8_body.is_ascii());
    let (current, previous, stranger) = (
        signing::generate(),
        signing::generate(),
        signing::generate(),
    );
    let now = unix_now();
    let headers = |secrets: &[&Secret], t: i64, body: &str| {
        let h = signing::sign(secrets, &signing::new_webhook_id(), t, body.as_bytes());
        json!({
            "berth-signature": h.berth_signature,
            "webhook-id": h.webhook_id,
            "webhook-timestamp": h.webhook_timestamp,
            "webhook-signature": h.webhook_signature,
        })
    };
    let one = headers(&[&current], now, &body);
    let rotating = headers(&[&current, &previous], now, &body);
    // Still JSON, one byte longer.
    let tampered = body.replacen(':', ": ", 1);
    assert_ne!(tampered, body);
    // (name, body sent, headers, secret the verifier knows, accepted?)
    let cases = [
        (
            "sample request",
            body.clone(),
            one.clone(),
            current.expose(),
            true,
        ),
        (
            "non-ASCII body",
            utf8_body.clone(),
            headers(&[&current], now, &utf8_body),
            current.expose(),
            true,
        ),
        (
            "rotation, verifier knows only the previous secret",
            body.clone(),
            rotating.clone(),
            previous.expose(),
            true,
        ),
        (
            "rotation, verifier knows the current secret",
            body.clone(),
            rotating.clone(),
            current.expose(),
            true,
        ),
        (
            "rotation, a third secret",
            body.clone(),
            rotating,
            stranger.expose(),
            false,
        ),
        (
            "tampered body",
            tampered,
            one.clone(),
            current.expose(),
            false,
        ),
        (
            "an hour old",
            body.clone(),
            headers(&[&current], now - 3600, &body),
            current.expose(),
            false,
        ),
        ("wrong secret", body.clone(), one, stranger.expose(), false),
    ];
    let input: Vec<Value> = cases
        .iter()
        .map(|(name, body, headers, secret, _)| json!({"name": name, "body": body, "headers": headers, "secret": secret}))
        .collect();
    let out = python("verify_with_libraries.py", &Value::Array(input));
    let out = out.as_array().unwrap();
    assert_eq!(out.len(), cases.len());
    for ((name, body, headers, secret, accepted), result) in cases.iter().zip(out) {
        for lib in ["stripe", "standardwebhooks"] {
            let verdict = result[lib].as_str().unwrap();
            assert_eq!(verdict == "ok", *accepted, "{lib}, {name}: {verdict}");
        }
        // Berth's own verifier agrees with both libraries.
        let s = Secret::parse(secret).unwrap();
        let b = body.as_bytes();
        let ours_berth = signing::verify_berth(
            headers["berth-signature"].as_str().unwrap(),
            b,
            &s,
            now,
            300,
        );
        let ours_std = signing::verify_standard(
            headers["webhook-id"].as_str().unwrap(),
            headers["webhook-timestamp"].as_str().unwrap(),
            headers["webhook-signature"].as_str().unwrap(),
            b,
            &s,
            now,
            300,
        );
        assert_eq!(
            ours_berth.is_ok(),
            *accepted,
            "reference verifier (Berth-Signature), {name}: {ours_berth:?}"
        );
        assert_eq!(
            ours_std.is_ok(),
            *accepted,
            "reference verifier (Standard Webhooks), {name}: {ours_std:?}"
        );
    }
}

// ---------------------------------------------------------------------------
// The example decider, as a real process.

/// A running `berth-example-decider`, killed when dropped.
struct Decider {
    child: Child,
    url: String,
}

impl Drop for Decider {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn start_decider(secret: Option<&Secret>) -> Decider {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_berth-example-decider"));
    cmd.args(["--listen", "127.0.0.1:0"])
        .stdout(Stdio::piped())
        .stderr(Stdio::null());
    cmd.env_remove("BERTH_DECIDER_SECRET");
    if let Some(s) = secret {
        // Through the environment, as the docs advise.
        cmd.env("BERTH_DECIDER_SECRET", s.expose());
    }
    let mut child = cmd.spawn().expect("starting berth-example-decider");
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let addr = line.trim().to_string();
    assert!(
        addr.starts_with("127.0.0.1:"),
        "first line is not the address: {line:?}"
    );
    Decider {
        child,
        url: format!("http://{addr}/decide"),
    }
}

fn post(d: &Decider, body: &[u8], headers: &[(&str, &str)]) -> (u16, Value, Vec<u8>) {
    let client = reqwest::blocking::Client::new();
    let mut req = client
        .post(&d.url)
        .header("content-type", "application/json")
        .header("user-agent", concat!("berth/", env!("CARGO_PKG_VERSION")))
        .body(body.to_vec());
    for (k, v) in headers {
        req = req.header(*k, *v);
    }
    let resp = req.send().expect("the decider answers");
    let status = resp.status().as_u16();
    let bytes = resp.bytes().unwrap().to_vec();
    (
        status,
        serde_json::from_slice(&bytes).unwrap_or(Value::Null),
        bytes,
    )
}

#[test]
fn the_example_decider_verifies_signatures_and_proposes_legal_moves() {
    let secret = signing::generate();
    let d = start_decider(Some(&secret));
    let request = sample_request();
    let body = serde_json::to_vec(&request).unwrap();
    let signed = |secrets: &[&Secret], t: i64, body: &[u8]| {
        signing::sign(secrets, &signing::new_webhook_id(), t, body)
    };

    let h = signed(&[&secret], unix_now(), &body);
    let (status, reply, bytes) = post(&d, &body, &h.pairs());
    assert_eq!(status, 200, "{reply}");
    validate(&reply, "DeciderResponse").unwrap();
    let proposals = decider::parse_response(&bytes).expect("Berth parses the reply");
    assert!(
        !proposals.is_empty(),
        "the sample estate has services worth moving: {reply}"
    );
    for p in &proposals {
        let RawProposal::Valid(p) = p else {
            panic!("a malformed proposal: {p:?}");
        };
        assert!(validate(&serde_json::to_value(p).unwrap(), "Proposal").is_ok());
        let s = request
            .services
            .iter()
            .find(|s| s.id == p.service_id)
            .expect("a known service");
        assert_eq!(s.mobility, "movable", "{p:?}");
        assert!(s.candidates.contains(&p.to), "{p:?} is not to a candidate");
        assert!(!p.reason.is_empty());
    }
    // Berth scores them: legal moves, so none refused for a constraint.
    let text = std::fs::read_to_string(repo().join("examples/estates/sample.json")).unwrap();
    let e = estate::load(&text, Format::Json).unwrap();
    let scored = decider::score(
        &e,
        &Policy::default(),
        estate::parse_time(SAMPLE_NOW).unwrap(),
        &proposals,
    );
    assert!(scored.accepted_count > 0, "{scored:?}");
    for r in &scored.refused {
        assert!(
            ["no_room_cpu", "no_room_memory", "cant_tell"].contains(&r.code.as_str()),
            "refused for something other than fit: {r:?}"
        );
    }

    // During a rotation the decider knows one of the two secrets.
    let newer = signing::generate();
    let h = signed(&[&newer, &secret], unix_now(), &body);
    assert_eq!(post(&d, &body, &h.pairs()).0, 200);

    // Refusals: 401 with a JSON error naming what is wrong.
    let now = unix_now();
    let good = signed(&[&secret], now, &body);
    let stale = signed(&[&secret], now - 3600, &body);
    let early = signed(&[&secret], now + 3600, &body);
    let stranger = signed(&[&newer], now, &body);
    let mut tampered = body.clone();
    tampered[10] ^= 1;
    let v0_only = good.berth_signature.replace("v1=", "v0=");
    // (what, body, headers, expected error code)
    type Case<'a> = (&'a str, Vec<u8>, Vec<(&'a str, &'a str)>, &'a str);
    let cases: Vec<Case> = vec![
        ("no signature", body.clone(), vec![], "signature_missing"),
        (
            "another secret",
            body.clone(),
            vec![(signing::BERTH_SIGNATURE, stranger.berth_signature.as_str())],
            "signature_mismatch",
        ),
        (
            "an hour old",
            body.clone(),
            vec![(signing::BERTH_SIGNATURE, stale.berth_signature.as_str())],
            "timestamp_too_old",
        ),
        (
            "an hour ahead",
            body.clone(),
            vec![(signing::BERTH_SIGNATURE, early.berth_signature.as_str())],
            "timestamp_too_new",
        ),
        (
            "a changed body",
            tampered,
            vec![(signing::BERTH_SIGNATURE, good.berth_signature.as_str())],
            "signature_mismatch",
        ),
        (
            "garbage",
            body.clone(),
            vec![(signing::BERTH_SIGNATURE, "t=1,,v1=zz")],
            "signature_malformed",
        ),
        (
            "v0 only",
            body.clone(),
            vec![(signing::BERTH_SIGNATURE, v0_only.as_str())],
            "no_v1_signature",
        ),
    ];
    for (what, body, headers, code) in cases {
        let (status, reply, _) = post(&d, &body, &headers);
        assert_eq!(status, 401, "{what}: {reply}");
        assert_eq!(reply["error"], code, "{what}: {reply}");
        assert!(
            reply["message"].as_str().is_some_and(|m| !m.is_empty()),
            "{what}: {reply}"
        );
    }
}

#[test]
fn the_example_decider_without_a_secret_reads_unsigned_requests_and_refuses_bad_ones() {
    let d = start_decider(None);
    let body = serde_json::to_vec(&sample_request()).unwrap();
    let (status, reply, _) = post(&d, &body, &[]);
    assert_eq!(status, 200, "{reply}");
    assert!(reply["proposals"].is_array());
    let (status, reply, _) = post(&d, b"{not json", &[]);
    assert_eq!(
        (status, reply["error"].as_str()),
        (400, Some("not_json")),
        "{reply}"
    );
    let (status, reply, _) = post(&d, br#"{"schema": 2}"#, &[]);
    assert_eq!(
        (status, reply["error"].as_str()),
        (400, Some("wrong_shape")),
        "{reply}"
    );
    let deep = format!("{}{}", "[".repeat(100), "]".repeat(100));
    let (status, reply, _) = post(&d, deep.as_bytes(), &[]);
    assert_eq!(
        (status, reply["error"].as_str()),
        (400, Some("too_deep")),
        "{reply}"
    );
    let status = reqwest::blocking::get(&d.url).unwrap().status().as_u16();
    assert_eq!(status, 405);
}

#[test]
fn the_example_decider_refuses_a_malformed_secret_at_start() {
    let out = Command::new(env!("CARGO_BIN_EXE_berth-example-decider"))
        .args(["--listen", "127.0.0.1:0", "--secret", "whsec_tooshort"])
        .env_remove("BERTH_DECIDER_SECRET")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("secret") && !stderr.contains("tooshort"),
        "{stderr}"
    );
    assert!(out.stdout.is_empty());
}

// ---------------------------------------------------------------------------
// What Berth really sends.

mod support;

/// One call a capturing decider received.
#[derive(Clone)]
struct Captured {
    headers: axum::http::HeaderMap,
    body: Vec<u8>,
}

/// A decider on 127.0.0.1 that keeps every call and proposes nothing.
async fn capturing_decider() -> (std::sync::Arc<std::sync::Mutex<Vec<Captured>>>, String) {
    let seen: std::sync::Arc<std::sync::Mutex<Vec<Captured>>> = Default::default();
    let keep = seen.clone();
    let app = axum::Router::new().fallback(
        move |headers: axum::http::HeaderMap, body: axum::body::Bytes| {
            let keep = keep.clone();
            async move {
                keep.lock().unwrap().push(Captured {
                    headers,
                    body: body.to_vec(),
                });
                axum::Json(json!({"proposals": []}))
            }
        },
    );
    let l = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/decide", l.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(l, app).await.unwrap() });
    (seen, url)
}

/// Through the API a person uses: register two deciders with secrets, one
/// that records what it gets and the example decider, and compare. The
/// request and headers Berth sent match the contract's schemas (closed:
/// nothing undocumented), verify with both official libraries, and the
/// example decider — which refuses anything badly signed — answers with
/// proposals the engine accepts.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn berth_sends_what_the_contract_describes_and_deciders_can_verify_it() {
    use tower::ServiceExt;
    const ADMIN: &str = "admin-token-for-tests-0123456789abcdef";
    let db = support::TestDb::new(support::Backend::Sqlite).await;
    let mut opts = berth::serve::ServeOptions::new(
        "127.0.0.1:0".parse().unwrap(),
        Some(db.url.clone()),
        std::env::temp_dir(),
    );
    opts.admin_token = Some(ADMIN.into());
    opts.secret_key = Some("AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8=".into());
    opts.decider_allow = vec!["127.0.0.1/32".into()];
    opts.sample_at = Some(berth::serve::sample_designed_at());
    let (state, _) = berth::serve::prepare(&opts).await.unwrap();
    let app = berth::http::app(state);
    let call = |method: &str, path: String, body: Value| {
        let app = app.clone();
        let method = axum::http::Method::from_bytes(method.as_bytes()).unwrap();
        async move {
            let req = axum::http::Request::builder()
                .method(method)
                .uri(path)
                .header("authorization", format!("Bearer {ADMIN}"))
                .header("content-type", "application/json")
                .body(axum::body::Body::from(body.to_string()))
                .unwrap();
            let resp = app.oneshot(req).await.unwrap();
            let status = resp.status().as_u16();
            let bytes = axum::body::to_bytes(resp.into_body(), usize::MAX)
                .await
                .unwrap();
            (
                status,
                serde_json::from_slice::<Value>(&bytes).unwrap_or(Value::Null),
            )
        }
    };
    let (seen, capture_url) = capturing_decider().await;
    let mut secrets = std::collections::BTreeMap::new();
    for (name, url) in [
        ("capture", capture_url.as_str()),
        ("example", "http://127.0.0.1:9/"),
    ] {
        let (status, v) = call(
            "POST",
            "/api/deciders".into(),
            json!({"name": name, "url": url, "timeout_ms": 10000, "generate_secret": true}),
        )
        .await;
        assert_eq!(status, 201, "{v}");
        secrets.insert(name, v["secret"].as_str().unwrap().to_string());
    }
    let example_secret = Secret::parse(&secrets["example"]).unwrap();
    let example = tokio::task::spawn_blocking(move || start_decider(Some(&example_secret)))
        .await
        .unwrap();
    let (status, v) = call(
        "PUT",
        "/api/deciders/example".into(),
        json!({"url": example.url, "timeout_ms": 10000}),
    )
    .await;
    assert_eq!(status, 200, "{v}");

    let (status, v) = call(
        "POST",
        "/api/estates/sample/compare".into(),
        json!({"external": ["capture", "example"]}),
    )
    .await;
    assert_eq!(status, 200, "{v}");
    let entries = v["result"]["deciders"].as_array().unwrap();
    let ex = entries.iter().find(|e| e["name"] == "example").unwrap();
    assert!(
        ex["error"].is_null(),
        "the example decider refused Berth's call: {ex}"
    );
    assert!(ex["accepted_count"].as_u64().unwrap() > 0, "{ex}");

    let got = seen.lock().unwrap().clone();
    assert_eq!(got.len(), 1);
    let c = &got[0];
    let body: Value = serde_json::from_slice(&c.body).unwrap();
    let header = |n: &str| json!(c.headers[n].to_str().unwrap());
    let checks = [
        (&body, "DeciderRequest"),
        (&header("user-agent"), "UserAgentHeader"),
        (&header("berth-signature"), "BerthSignatureHeader"),
        (&header("webhook-id"), "WebhookIdHeader"),
        (&header("webhook-timestamp"), "WebhookTimestampHeader"),
        (&header("webhook-signature"), "WebhookSignatureHeader"),
    ];
    let pairs: Vec<(&Value, &str)> = checks.iter().map(|(v, s)| (*v, *s)).collect();
    for ((_, schema), r) in checks.iter().zip(validate_many(&pairs, true)) {
        assert!(r.is_ok(), "{schema}: {r:?}");
    }
    assert_eq!(c.headers["content-type"], "application/json");
    let out = python(
        "verify_with_libraries.py",
        &json!([{
            "name": "a real call",
            "body": String::from_utf8(c.body.clone()).unwrap(),
            "headers": {
                "berth-signature": header("berth-signature"),
                "webhook-id": header("webhook-id"),
                "webhook-timestamp": header("webhook-timestamp"),
                "webhook-signature": header("webhook-signature"),
            },
            "secret": secrets["capture"],
        }]),
    );
    assert_eq!(out[0]["stripe"], "ok", "{out}");
    assert_eq!(out[0]["standardwebhooks"], "ok", "{out}");
}
