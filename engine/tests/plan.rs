//! Change plans (`engine/src/formats/plan.rs`, `docs/plans.md`): the plan of the
//! sample estate (Markdown kept as `tests/data/plan-sample.md`, updated
//! with `UPDATE_EXPECT=1`), selections, the errors that name what a
//! manifest lacks, and the Karmada and Open Cluster Management manifests
//! checked against the projects' published CRD schemas
//! (`tests/data/crds/`, validated by `validate.py` with Python's
//! `jsonschema`; a broken manifest must fail it).

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

use berth_engine::estate::parse_time;
use berth_engine::plan::{self, Format, Plan, Selection};
use berth_engine::whatif::Scenario;
use berth_engine::{advise, explain, front, load, Estate, Format as FileFormat, Policy};
use serde::Deserialize;
use serde_json::Value;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn now() -> i64 {
    parse_time("2026-11-30T04:05:00Z").unwrap()
}

fn sample_text() -> String {
    std::fs::read_to_string(root().join("examples/estates/sample.json")).unwrap()
}

fn sample() -> Estate {
    load(&sample_text(), FileFormat::Json).unwrap()
}

/// The sample with every service named as a Deployment in its owner's
/// namespace, and c-fra-2 and c-par-1 known to the controllers by other
/// names.
fn sample_with_workloads() -> Estate {
    let mut v: Value = serde_json::from_str(&sample_text()).unwrap();
    for s in v["services"].as_array_mut().unwrap() {
        let ns = s["owner"].as_str().unwrap().to_string();
        let name = s["id"].as_str().unwrap().to_string();
        s["workload"] = serde_json::json!({"kind": "Deployment", "namespace": ns, "name": name});
    }
    for c in v["clusters"].as_array_mut().unwrap() {
        match c["id"].as_str().unwrap() {
            "c-fra-2" => {
                c["karmada_cluster"] = "member-fra-2".into();
                c["ocm_cluster"] = "ocm-fra-2".into();
            }
            "c-par-1" => c["karmada_cluster"] = "member-par-1".into(),
            _ => {}
        }
    }
    load(&v.to_string(), FileFormat::Json).unwrap()
}

fn make(e: &Estate, selection: &Selection) -> Plan {
    plan::plan(e, &Policy::default(), now(), selection).unwrap_or_else(|e| panic!("{e:?}"))
}

#[test]
fn the_plan_of_the_advice_is_the_advice_with_its_explanations() {
    let e = sample();
    let p = make(&e, &Selection::Advice);
    let a = advise(&e, &Policy::default(), now());
    let why = explain(&e, &Policy::default(), now(), &a);
    assert!(!a.moves.is_empty());
    // The plan holds the recommended moves only (the sample's one move
    // resting on guesses is not in it), and its totals are the advice's.
    let (recommended, why): (Vec<_>, Vec<_>) = a
        .moves
        .iter()
        .zip(&why)
        .filter(|(m, _)| m.evidence.is_none())
        .unzip();
    assert!(recommended.len() < a.moves.len());
    assert_eq!(p.moves.len(), recommended.len());
    assert_eq!(p.estate_version, a.estate_version);
    assert_eq!(p.policy_digest, a.policy_digest);
    assert_eq!(p.totals_before, a.totals_before);
    assert_eq!(p.totals_after, a.totals_after);
    for ((m, am), w) in p.moves.iter().zip(recommended).zip(why) {
        assert_eq!(
            (&m.service, &m.from, &m.to),
            (&am.service, &am.from, &am.to)
        );
        assert_eq!(m.gain.to_bits(), am.gain.to_bits());
        assert_eq!(m.facts, am.facts);
        assert_eq!(m.flips, w.flips);
        assert_eq!(m.other_flips, w.other_flips);
        assert_eq!(m.advice_step, Some(am.step));
        assert_eq!(m.confidence, am.confidence);
    }
    assert!(p.note.is_none());
    // The JSON is the plan in struct order.
    let json = front::plan(
        &e,
        &Policy::default(),
        now(),
        &Selection::Advice,
        Format::Json,
    )
    .unwrap();
    assert!(
        json.starts_with("{\"schema\":1,\"estate\":"),
        "{}",
        &json[..60]
    );
    let v: Value = serde_json::from_str(&json).unwrap();
    assert_eq!(v["moves"].as_array().unwrap().len(), p.moves.len());
    assert_eq!(v["selection"]["kind"], "advice");
}

#[test]
fn the_markdown_plan_of_the_sample_estate() {
    let e = sample();
    let md = front::plan(
        &e,
        &Policy::default(),
        now(),
        &Selection::Advice,
        Format::Markdown,
    )
    .unwrap();
    // What a reviewer needs, on every move.
    let p = make(&e, &Selection::Advice);
    assert!(md.starts_with("# Change plan: Acme Retail (sample estate)\n"));
    assert!(md.contains(&format!("- Estate version: `{}`", p.estate_version)));
    assert!(md.contains(&format!("- Policy digest: `{}`", p.policy_digest)));
    for (i, m) in p.moves.iter().enumerate() {
        // A single step has its own numbered heading (the page's step
        // number); a compound step's member sits under the step's heading.
        let head = format!("`{}`: `{}` → `{}`", m.service, m.from, m.to);
        let own = p.step_numbers[i].map(|n| format!("### {n}. {head}"));
        assert!(
            own.is_some_and(|h| md.contains(&h)) || md.contains(&format!("#### {head}")),
            "no section for {head}"
        );
        for f in &m.flips {
            for s in &f.sentences {
                assert!(md.contains(s.as_str()), "{s}");
            }
        }
    }
    expect_test::expect_file!["data/plan-sample.md"].assert_eq(&md);
}

#[test]
fn a_selection_of_services_keeps_the_advice_numbers_and_its_own_totals() {
    let e = sample();
    let full = make(&e, &Selection::Advice);
    // The last single move (the sample's last steps are compound).
    let advice = berth_engine::advise(&e, &Policy::default(), now());
    let single = advice
        .moves
        .iter()
        .rev()
        .find(|m| m.group.is_none())
        .unwrap();
    let last = full
        .moves
        .iter()
        .find(|m| m.service == single.service)
        .unwrap()
        .clone();
    let p = make(&e, &Selection::Services(vec![last.service.clone()]));
    assert_eq!(p.moves.len(), 1);
    assert_eq!(p.moves[0].step, 1);
    assert_eq!(p.moves[0].advice_step, last.advice_step);
    assert_eq!(p.moves[0].gain.to_bits(), last.gain.to_bits());
    assert_eq!(p.moves[0].flips, last.flips);
    assert!(p.note.is_some());
    // Only that move made: not the advice's totals after.
    assert_ne!(p.totals_after, full.totals_after);
    assert!(p.totals_after.cost < p.totals_before.cost);
    assert_eq!(
        p.change.cost.to_bits(),
        (p.totals_after.cost - p.totals_before.cost).to_bits()
    );

    // Naming one member of a compound step plans its whole group.
    let member = advice.moves.iter().find(|m| m.group.is_some()).unwrap();
    let g = make(&e, &Selection::Services(vec![member.service.clone()]));
    let planned: Vec<&str> = g.moves.iter().map(|m| m.service.as_str()).collect();
    let group: Vec<&str> = member
        .group
        .as_ref()
        .unwrap()
        .services
        .iter()
        .map(String::as_str)
        .collect();
    assert_eq!(planned, group);
    assert!(g.totals_after.cost < g.totals_before.cost);

    let err = plan::plan(
        &e,
        &Policy::default(),
        now(),
        &Selection::Services(vec![
            "nope".into(),
            "support-db".into(),
            last.service.clone(),
            last.service,
        ]),
    )
    .unwrap_err();
    let messages: Vec<&str> = err.iter().map(|e| e.message.as_str()).collect();
    assert_eq!(err.len(), 3, "{messages:?}");
    assert!(messages[0].contains("no service \"nope\""));
    assert!(messages[1].contains("service \"support-db\" has no recommended move"));
    assert!(messages[2].contains("is named twice"));
    assert_eq!(err[1].path, "/1");
    assert!(err.iter().all(|e| e.input == "services"));
}

#[test]
fn a_scenario_plan_has_the_scenarios_moves_totals_and_warnings() {
    let e = sample();
    let text =
        std::fs::read_to_string(root().join("examples/scenarios/retire-c-par-2.json")).unwrap();
    let sc = Scenario::from_json_checked(&text, &e).unwrap();
    let p = make(&e, &Selection::Scenario(sc.clone()));
    let projection = berth_engine::whatif::project(&e, &Policy::default(), now(), &sc).unwrap();
    assert_eq!(p.selection.kind, "scenario");
    assert_eq!(p.moves.len(), projection.moves.len());
    assert_eq!(p.totals_after, projection.after);
    assert_eq!(p.warnings, projection.warnings);
    assert!(!p.warnings.is_empty());
    for m in &p.moves {
        // Not the recommended sequence: no flips, and a note saying why.
        assert!(m.flips.is_empty());
        assert!(m.note.is_some());
        assert!(!m.facts.is_empty() || m.gain == m.terms.headroom + m.terms.copy);
    }
    let md = plan::markdown(&p);
    assert!(md.contains("## Warnings"));
    assert!(md.contains(&format!("what-if scenario \"{}\"", sc.name)));

    // A scenario that is the first recommended move carries its flips.
    let a = advise(&e, &Policy::default(), now());
    let first = &a.moves[0];
    let one = Scenario::from_json(
        &serde_json::json!({"schema": 1, "name": "first", "steps": [{"move": {"service": first.service, "to": first.to}}]})
            .to_string(),
    )
    .unwrap();
    let p = make(&e, &Selection::Scenario(one));
    assert_eq!(p.moves[0].advice_step, Some(1));
    assert_eq!(p.moves[0].gain.to_bits(), first.gain.to_bits());
    assert!(!p.moves[0].flips.is_empty());
}

#[test]
fn manifests_say_which_service_or_cluster_lacks_a_name() {
    let e = sample();
    for format in [Format::Karmada, Format::Ocm] {
        let err =
            front::plan(&e, &Policy::default(), now(), &Selection::Advice, format).unwrap_err();
        let mut p = make(&e, &Selection::Advice);
        assert_eq!(err.len(), p.moves.len(), "{err:?}");
        // One error per moved service, in service id order.
        p.moves.sort_by(|a, b| a.service.cmp(&b.service));
        for (e, m) in err.iter().zip(&p.moves) {
            assert_eq!(e.input, "estate");
            assert!(
                e.message.starts_with(&format!("service {:?}: ", m.service)),
                "{}",
                e.message
            );
            assert!(e.message.contains("set `workload`"), "{}", e.message);
        }
    }
    // A cluster id that is no Kubernetes name needs its controller name.
    let text = sample_text().replace("\"c-fra-2\"", "\"C_FRA_2\"");
    let e = load(&text, FileFormat::Json).unwrap();
    let moves_to = make(&e, &Selection::Advice)
        .moves
        .iter()
        .any(|m| m.to == "C_FRA_2");
    assert!(moves_to, "the sample moves services to c-fra-2");
    let err = front::plan(
        &e,
        &Policy::default(),
        now(),
        &Selection::Advice,
        Format::Karmada,
    )
    .unwrap_err();
    assert!(
        err.iter()
            .any(|e| e.message.starts_with("cluster \"C_FRA_2\": ")
                && e.message.contains("set `karmada_cluster`")),
        "{err:?}"
    );
}

#[test]
fn the_estate_file_carries_controller_names_strictly() {
    let mut v: Value = serde_json::from_str(&sample_text()).unwrap();
    v["clusters"][0]["karmada_cluster"] = "Not A Label".into();
    v["services"][0]["workload"] =
        serde_json::json!({"kind": "deployment", "namespace": "shop", "name": "x"});
    v["services"][1]["workload"] = serde_json::json!({"kind": "Deployment", "name": "x"});
    v["services"][2]["workload"] =
        serde_json::json!({"kind": "Deployment", "namespace": "shop", "name": "x", "replicas": 2});
    let errs = load(&v.to_string(), FileFormat::Json).unwrap_err();
    let at: Vec<(&str, &str)> = errs
        .iter()
        .map(|e| (e.path.as_str(), e.message.as_str()))
        .collect();
    // Shape errors first (the missing namespace, the unknown field) ...
    assert!(
        at.iter()
            .any(|(p, m)| *p == "/services/1/workload" && m.contains("\"namespace\"")),
        "{at:?}"
    );
    assert!(
        at.iter()
            .any(|(p, _)| *p == "/services/2/workload/replicas"),
        "{at:?}"
    );
    // ... and, once the shape is right, the names.
    v["services"][1]["workload"]["namespace"] = "shop".into();
    v["services"][2]["workload"]
        .as_object_mut()
        .unwrap()
        .remove("replicas");
    let errs = load(&v.to_string(), FileFormat::Json).unwrap_err();
    let at: Vec<(&str, &str)> = errs
        .iter()
        .map(|e| (e.path.as_str(), e.message.as_str()))
        .collect();
    assert_eq!(at.len(), 2, "{at:?}");
    assert!(at
        .iter()
        .any(|(p, m)| *p == "/clusters/0/karmada_cluster" && m.contains("DNS-1123 label")));
    assert!(at
        .iter()
        .any(|(p, m)| *p == "/services/0/workload/kind" && m.contains("Kubernetes kind")));

    // Written back, read again: the same estate.
    let e = sample_with_workloads();
    let again = load(
        &berth_engine::export::to_file(&e).to_string(),
        FileFormat::Json,
    )
    .unwrap();
    assert_eq!(again, e);
    assert_eq!(
        berth_engine::export::version(&e),
        berth_engine::export::version(&sample()),
        "controller names are not part of the version"
    );
}

/// Run `tests/data/crds/validate.py` over `yaml`; `(passed, output)`.
fn validate(yaml: &str, name: &str) -> (bool, String) {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("plan-manifests");
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join(name);
    std::fs::write(&file, yaml).unwrap();
    let out = Command::new("python3")
        .arg(root().join("engine/tests/data/crds/validate.py"))
        .arg(&file)
        .output()
        .unwrap_or_else(|e| {
            panic!("cannot run python3 (needed with jsonschema; `make tools`): {e}")
        });
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        !text.contains("ModuleNotFoundError"),
        "python3 lacks a module the validator needs (`make tools`): {text}"
    );
    (out.status.success(), text)
}

#[test]
fn karmada_and_ocm_manifests_validate_against_the_published_crds() {
    let e = sample_with_workloads();
    let p = make(&e, &Selection::Advice);
    let karmada = plan::karmada(&e, &p).unwrap();
    let ocm = plan::ocm(&e, &p).unwrap();
    let (ok, out) = validate(&karmada, "karmada.yaml");
    assert!(ok, "{out}");
    assert_eq!(out.trim(), format!("ok {}", 2 * p.moves.len()));
    let (ok, out) = validate(&ocm, "ocm.yaml");
    assert!(ok, "{out}");
    assert_eq!(out.trim(), format!("ok {}", p.moves.len()));

    // The mapping is used; unmapped clusters go by their id.
    let to_fra2 = p
        .moves
        .iter()
        .find(|m| m.to == "c-fra-2")
        .expect("a move to c-fra-2");
    let docs: Vec<Value> = serde_yaml::Deserializer::from_str(&karmada)
        .map(|d| Value::deserialize(d).unwrap())
        .collect();
    let pp = docs
        .iter()
        .find(|d| {
            d["kind"] == "PropagationPolicy"
                && d["metadata"]["annotations"]["berth.dev/service"] == to_fra2.service.as_str()
        })
        .unwrap();
    assert_eq!(
        pp["spec"]["placement"]["clusterAffinity"]["clusterNames"][0],
        "member-fra-2"
    );
    assert_eq!(
        pp["spec"]["resourceSelectors"][0]["name"],
        to_fra2.service.as_str()
    );
    assert_eq!(pp["spec"]["resourceSelectors"][0]["apiVersion"], "apps/v1");
    let placements: Vec<Value> = serde_yaml::Deserializer::from_str(&ocm)
        .map(|d| Value::deserialize(d).unwrap())
        .collect();
    let pl = placements
        .iter()
        .find(|d| d["metadata"]["annotations"]["berth.dev/service"] == to_fra2.service.as_str())
        .unwrap();
    let names = &pl["spec"]["predicates"][0]["requiredClusterSelector"]["labelSelector"]
        ["matchExpressions"][0];
    assert_eq!(names["key"], "name");
    assert_eq!(names["values"], serde_json::json!(["ocm-fra-2"]));
    assert_eq!(pl["spec"]["numberOfClusters"], 1);
    if let Some(other) = p
        .moves
        .iter()
        .find(|m| m.to != "c-fra-2" && m.to != "c-par-1")
    {
        assert!(karmada.contains(&format!("- \"{}\"\n", other.to)));
    }
    // Same inputs, same bytes.
    assert_eq!(plan::karmada(&e, &p).unwrap(), karmada);
}

#[test]
fn the_validator_refuses_broken_manifests() {
    let e = sample_with_workloads();
    let p = make(&e, &Selection::Advice);
    let karmada = plan::karmada(&e, &p).unwrap();
    let ocm = plan::ocm(&e, &p).unwrap();
    // One fault each, as a slip in the generator would make it.
    let broken = [
        (
            "karmada",
            karmada.replacen("clusterNames:", "clusterName:", 1),
            "clusterName",
        ),
        (
            "karmada",
            karmada.replacen("resourceSelectors:", "resourceSelector:", 1),
            "resourceSelectors",
        ),
        (
            "karmada",
            karmada.replacen("operator: \"add\"", "operator: \"append\"", 1),
            "append",
        ),
        (
            "karmada",
            karmada.replacen("kind: \"Deployment\"", "kind: 7", 1),
            "7",
        ),
        (
            "karmada",
            karmada.replacen("name: \"berth-deployment-", "name: \"Berth_", 1),
            "DNS-1123",
        ),
        // Two documents that are one object: applied, the later would
        // silently replace the earlier.
        (
            "karmada",
            format!("{karmada}---\n{}", karmada.split("---\n").nth(1).unwrap()),
            "the later replaces the earlier",
        ),
        (
            "ocm",
            ocm.replacen("numberOfClusters: 1", "numberOfClusters: one", 1),
            "one",
        ),
        (
            "ocm",
            ocm.replacen("requiredClusterSelector:", "requiredSelector:", 1),
            "requiredSelector",
        ),
        (
            "ocm",
            ocm.replacen(
                "cluster.open-cluster-management.io/v1beta1",
                "cluster.open-cluster-management.io/v9",
                1,
            ),
            "no schema",
        ),
    ];
    for (i, (kind, yaml, says)) in broken.iter().enumerate() {
        let original = if *kind == "karmada" { &karmada } else { &ocm };
        assert!(yaml != original, "fault {i} changed nothing");
        let (ok, out) = validate(yaml, &format!("broken-{i}.yaml"));
        assert!(!ok, "fault {i} passed");
        assert!(out.contains(says), "fault {i}: {out}");
    }
}

#[test]
fn plan_text_tags_every_input_error() {
    let text = sample_text();
    let out = front::plan_text(&text, "", now(), "yaml", "", "");
    let v: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v[0]["input"], "format");
    let out = front::plan_text(&text, "", now(), "json", "cart", "{}");
    let v: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v[0]["input"], "services");
    let out = front::plan_text(&text, "", now(), "markdown", "", "{\"schema\": 1}");
    let v: Value = serde_json::from_str(&out).unwrap();
    assert!(
        v.as_array()
            .unwrap()
            .iter()
            .all(|e| e["input"] == "scenario"),
        "{v}"
    );
    let out = front::plan_text(&text, "", now(), "karmada", "", "");
    let v: Value = serde_json::from_str(&out).unwrap();
    assert!(
        v.as_array().unwrap().iter().all(|e| e["input"] == "estate"),
        "{v}"
    );
    // Text and typed levels write the same bytes.
    let e = sample();
    let md = front::plan(
        &e,
        &Policy::default(),
        now(),
        &Selection::Advice,
        Format::Markdown,
    )
    .unwrap();
    assert_eq!(front::plan_text(&text, "", now(), "markdown", "", ""), md);
    let p = make(&e, &Selection::Advice);
    let first = &p.moves[0].service;
    let sub = front::plan_text(&text, "", now(), "json", &format!(" {first} ,"), "");
    let v: Value = serde_json::from_str(&sub).unwrap();
    assert_eq!(v["selection"]["services"][0], first.as_str());
}

#[test]
fn a_kubernetes_import_source_names_the_workload() {
    let mut v: Value = serde_json::from_str(&sample_text()).unwrap();
    for s in v["services"].as_array_mut().unwrap() {
        let (id, cluster) = (s["id"].as_str().unwrap(), s["cluster"].as_str().unwrap());
        s["source"] = format!("kubernetes:{cluster}//StatefulSet/{id}").into();
    }
    let e = load(&v.to_string(), FileFormat::Json).unwrap();
    let p = make(&e, &Selection::Advice);
    assert!(p.moves.iter().all(|m| m.workload.as_ref().is_some_and(|w| {
        w.kind == "StatefulSet" && w.namespace == "default" && w.name == m.service
    })));
    let ocm = plan::ocm(&e, &p).unwrap();
    assert!(ocm.contains("namespace: \"default\""));
    let (ok, out) = validate(&ocm, "ocm-from-source.yaml");
    assert!(ok, "{out}");
    // `workload` wins over the source.
    v["services"][0]["workload"] = serde_json::json!({"api_version": "argoproj.io/v1alpha1", "kind": "Rollout", "namespace": "shop", "name": "x"});
    let first = v["services"][0]["id"].as_str().unwrap().to_string();
    let e = load(&v.to_string(), FileFormat::Json).unwrap();
    let s = &e.services[e.service_index(&first).unwrap()];
    assert_eq!(s.workload_ref().unwrap().kind, "Rollout");
}

// ---- one workload, one export object -----------------------------------

/// One application imported from Kubernetes manifests into c-1 and c-2,
/// as `berth import kubernetes` writes it: `frontend` and `cart` from c-1,
/// `c-2/frontend` and `c-2/cart` from c-2 (ids qualified with the cluster
/// because the first import took the plain ones), each with its `source`.
/// c-3 and c-4 are empty. The estate's text, as the CLI and the server
/// read it.
fn two_clusters_one_app() -> String {
    let (sites, links) = common::sites();
    let imported = |id: &str, cluster: &str, name: &str, cpu: f64| {
        let mut s = common::service(id, "shop", cluster, cpu);
        s["source"] = format!("kubernetes:{cluster}/default/Deployment/{name}").into();
        s
    };
    let file = serde_json::json!({
        "schema": 1,
        "name": "one app in two clusters",
        "observed_at": common::NOW_STR,
        "sites": sites,
        "links": links,
        "clusters": [
            common::cluster("c-1", "fra", 64.0, 32.0),
            common::cluster("c-2", "par", 64.0, 32.0),
            common::cluster("c-3", "lon", 64.0, 32.0),
            common::cluster("c-4", "iad", 64.0, 32.0),
        ],
        "services": [
            imported("frontend", "c-1", "frontend", 2.0),
            imported("cart", "c-1", "cart", 1.0),
            imported("c-2/frontend", "c-2", "frontend", 2.0),
            imported("c-2/cart", "c-2", "cart", 1.0),
        ],
        "flows": [
            common::flow("frontend", "cart", 2.0, 1.0),
            common::flow("c-2/frontend", "c-2/cart", 2.0, 1.0),
        ],
    });
    file.to_string()
}

fn scenario_text(moves: &[(&str, &str)]) -> String {
    let steps: Vec<Value> = moves
        .iter()
        .map(|(s, to)| serde_json::json!({"move": {"service": s, "to": to}}))
        .collect();
    serde_json::json!({"schema": 1, "name": "move copies", "steps": steps}).to_string()
}

/// The plan of a scenario in `format`, as `berth plan export --scenario`
/// and `GET …/plan?scenario=` make it (`front::plan_text`).
fn export(estate: &str, moves: &[(&str, &str)], format: &str) -> String {
    let out = front::plan_text(estate, "", now(), format, "", &scenario_text(moves));
    assert!(!out.starts_with('['), "{out}");
    out
}

fn yaml_documents(yaml: &str) -> Vec<Value> {
    serde_yaml::Deserializer::from_str(yaml)
        .map(|d| Value::deserialize(d).unwrap())
        .collect()
}

/// `(kind, namespace/name)` of every document.
fn objects(docs: &[Value]) -> Vec<(String, String)> {
    docs.iter()
        .map(|d| {
            (
                d["kind"].as_str().unwrap().to_string(),
                format!(
                    "{}/{}",
                    d["metadata"]["namespace"].as_str().unwrap(),
                    d["metadata"]["name"].as_str().unwrap()
                ),
            )
        })
        .collect()
}

fn strs(v: &Value) -> Vec<&str> {
    v.as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_str().unwrap())
        .collect()
}

#[test]
fn moving_two_copies_of_one_workload_writes_one_object_per_workload() {
    let estate = two_clusters_one_app();
    let moves = [("frontend", "c-3"), ("c-2/frontend", "c-4")];

    // Karmada: one PropagationPolicy and one OverridePolicy for frontend,
    // placing it on both destinations; cart does not move.
    let karmada = export(&estate, &moves, "karmada");
    let (ok, out) = validate(&karmada, "two-copies-karmada.yaml");
    assert!(ok, "{out}");
    assert_eq!(out.trim(), "ok 2");
    let docs = yaml_documents(&karmada);
    assert_eq!(
        objects(&docs),
        [
            (
                "PropagationPolicy".to_string(),
                "default/berth-deployment-frontend".to_string()
            ),
            (
                "OverridePolicy".to_string(),
                "default/berth-deployment-frontend".to_string()
            ),
        ]
    );
    let pp = &docs[0];
    assert_eq!(
        strs(&pp["spec"]["placement"]["clusterAffinity"]["clusterNames"]),
        ["c-3", "c-4"]
    );
    assert_eq!(pp["spec"]["resourceSelectors"][0]["name"], "frontend");
    let a = &pp["metadata"]["annotations"];
    assert_eq!(a["berth.dev/service"], "c-2/frontend, frontend");
    assert_eq!(
        a["berth.dev/move"],
        "c-2 -> c-4 (c-2 -> c-4); c-1 -> c-3 (c-1 -> c-3)"
    );
    assert_eq!(
        a["berth.dev/copies"],
        "c-2/frontend on c-4, frontend on c-3"
    );
    // Each destination is annotated with the cluster its copy left.
    let rules = docs[1]["spec"]["overrideRules"].as_array().unwrap();
    let by_rule: Vec<(Vec<&str>, &str)> = rules
        .iter()
        .map(|r| {
            (
                strs(&r["targetCluster"]["clusterNames"]),
                r["overriders"]["annotationsOverrider"][0]["value"]["berth.dev/moved-from"]
                    .as_str()
                    .unwrap(),
            )
        })
        .collect();
    assert_eq!(by_rule, [(vec!["c-3"], "c-1"), (vec!["c-4"], "c-2")]);

    // Open Cluster Management: one Placement choosing both clusters.
    let ocm = export(&estate, &moves, "ocm");
    let (ok, out) = validate(&ocm, "two-copies-ocm.yaml");
    assert!(ok, "{out}");
    assert_eq!(out.trim(), "ok 1");
    let docs = yaml_documents(&ocm);
    assert_eq!(
        objects(&docs),
        [(
            "Placement".to_string(),
            "default/berth-deployment-frontend".to_string()
        )]
    );
    assert_eq!(docs[0]["spec"]["numberOfClusters"], 2);
    let expr = &docs[0]["spec"]["predicates"][0]["requiredClusterSelector"]["labelSelector"]
        ["matchExpressions"][0];
    assert_eq!(
        (expr["key"].as_str(), expr["operator"].as_str()),
        (Some("name"), Some("In"))
    );
    assert_eq!(strs(&expr["values"]), ["c-3", "c-4"]);

    // The JSON and the Markdown plans say the same.
    let json: Value = serde_json::from_str(&export(&estate, &moves, "json")).unwrap();
    assert_eq!(json["moves"].as_array().unwrap().len(), 2);
    let workloads = json["workloads"].as_array().unwrap();
    assert_eq!(workloads.len(), 1, "{json}");
    assert_eq!(
        workloads[0]["workload"],
        serde_json::json!({"kind": "Deployment", "namespace": "default", "name": "frontend"})
    );
    assert_eq!(strs(&workloads[0]["clusters"]), ["c-3", "c-4"]);
    assert_eq!(
        workloads[0]["copies"],
        serde_json::json!([
            {"service": "c-2/frontend", "from": "c-2", "to": "c-4"},
            {"service": "frontend", "from": "c-1", "to": "c-3"},
        ])
    );
    let md = export(&estate, &moves, "markdown");
    assert!(
        md.contains(
            "| `Deployment default/frontend` (apps/v1) | `c-3`, `c-4` | `c-2/frontend` `c-2` → `c-4`; `frontend` `c-1` → `c-3` |"
        ),
        "{md}"
    );
}

#[test]
fn one_move_of_a_replicated_workload_keeps_the_copy_that_stays() {
    let estate = two_clusters_one_app();
    // frontend leaves c-1; its copy on c-2 stays, so the workload runs in
    // c-2 and c-3 after the plan — not in c-3 alone.
    let moves = [("frontend", "c-3")];
    let karmada = export(&estate, &moves, "karmada");
    let (ok, out) = validate(&karmada, "one-copy-karmada.yaml");
    assert!(ok, "{out}");
    let docs = yaml_documents(&karmada);
    assert_eq!(docs.len(), 2);
    assert_eq!(
        strs(&docs[0]["spec"]["placement"]["clusterAffinity"]["clusterNames"]),
        ["c-2", "c-3"]
    );
    assert_eq!(
        docs[0]["metadata"]["annotations"]["berth.dev/copies"],
        "c-2/frontend on c-2, frontend on c-3"
    );
    // Only the destination is annotated as moved to.
    let rules = docs[1]["spec"]["overrideRules"].as_array().unwrap();
    assert_eq!(rules.len(), 1);
    assert_eq!(strs(&rules[0]["targetCluster"]["clusterNames"]), ["c-3"]);
    let ocm = export(&estate, &moves, "ocm");
    let (ok, out) = validate(&ocm, "one-copy-ocm.yaml");
    assert!(ok, "{out}");
    let docs = yaml_documents(&ocm);
    assert_eq!(docs[0]["spec"]["numberOfClusters"], 2);
    let md = export(&estate, &moves, "markdown");
    assert!(md.contains("`c-2/frontend` stays on `c-2`"), "{md}");

    // A copy moved onto the cluster where its sibling runs: one cluster,
    // listed once, and the plan carries the what-if's warning.
    let moves = [("frontend", "c-2")];
    let ocm = export(&estate, &moves, "ocm");
    let docs = yaml_documents(&ocm);
    assert_eq!(docs.len(), 1);
    assert_eq!(docs[0]["spec"]["numberOfClusters"], 1);
    let json: Value = serde_json::from_str(&export(&estate, &moves, "json")).unwrap();
    assert_eq!(strs(&json["workloads"][0]["clusters"]), ["c-2"]);
    assert!(
        json["warnings"]
            .as_array()
            .unwrap()
            .iter()
            .any(|w| w["code"] == "duplicate_workload" && w["service"] == "frontend"),
        "{json}"
    );

    // Moving both copies and a single-copy workload: one object each.
    let mut v: Value = serde_json::from_str(&estate).unwrap();
    v["services"][1]["source"] = "kubernetes:c-1/shop/StatefulSet/cart".into();
    let estate = v.to_string();
    let moves = [
        ("cart", "c-3"),
        ("frontend", "c-3"),
        ("c-2/frontend", "c-3"),
    ];
    let karmada = export(&estate, &moves, "karmada");
    let (ok, out) = validate(&karmada, "three-karmada.yaml");
    assert!(ok, "{out}");
    // In the order of each workload's first moved service by id:
    // `c-2/frontend` before `cart`.
    let names: Vec<(String, String)> = objects(&yaml_documents(&karmada));
    assert_eq!(
        names,
        [
            (
                "PropagationPolicy".into(),
                "default/berth-deployment-frontend".into()
            ),
            (
                "OverridePolicy".into(),
                "default/berth-deployment-frontend".into()
            ),
            (
                "PropagationPolicy".into(),
                "shop/berth-statefulset-cart".into()
            ),
            (
                "OverridePolicy".into(),
                "shop/berth-statefulset-cart".into()
            ),
        ]
    );
    let docs = yaml_documents(&karmada);
    assert_eq!(
        strs(&docs[0]["spec"]["placement"]["clusterAffinity"]["clusterNames"]),
        ["c-3"]
    );
    // Two copies landing on one cluster: one rule, moved from both.
    let rules = docs[1]["spec"]["overrideRules"].as_array().unwrap();
    assert_eq!(rules.len(), 1);
    assert_eq!(
        rules[0]["overriders"]["annotationsOverrider"][0]["value"]["berth.dev/moved-from"],
        "c-1, c-2"
    );
}

#[test]
fn workloads_whose_manifests_would_share_a_name_are_refused() {
    // Two kinds of one name in two API groups: each its own object, one
    // manifest name.
    let mut v: Value = serde_json::from_str(&two_clusters_one_app()).unwrap();
    v["services"][0]["workload"] = serde_json::json!({"api_version": "example.com/v1", "kind": "Deployment", "namespace": "default", "name": "frontend"});
    let estate = v.to_string();
    let moves = [("frontend", "c-3"), ("c-2/frontend", "c-4")];
    let out = front::plan_text(&estate, "", now(), "karmada", "", &scenario_text(&moves));
    let errors: Value = serde_json::from_str(&out).unwrap();
    let errors = errors.as_array().unwrap();
    assert_eq!(errors.len(), 1, "{out}");
    let m = errors[0]["message"].as_str().unwrap();
    assert!(
        m.starts_with("service \"frontend\": workload Deployment default/frontend (example.com/v1) and workload Deployment default/frontend (apps/v1) would both be written as Karmada manifests named default/berth-deployment-frontend"),
        "{m}"
    );
}
