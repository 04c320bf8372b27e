//! The importer end to end: answers parsed, clusters read, flows derived.

use super::*;
use serde_json::json;

fn vector(samples: Value) -> Value {
    json!({"status": "success", "data": {"resultType": "vector", "result": samples}})
}

fn sample(src: &str, dst: &str, v: &str) -> Value {
    json!({"metric": {"source_workload": src, "source_workload_namespace": "shop",
                      "destination_workload": dst, "destination_workload_namespace": "shop"},
           "value": [1796011500.25, v]})
}

#[test]
fn little_s_law_and_megabytes() {
    let r = Results {
        rate: parse_response(
            "rate",
            "",
            &vector(json!([sample("a", "b", "200")])),
            &Reading::default(),
        )
        .unwrap(),
        duration: parse_response(
            "duration",
            "",
            &vector(json!([sample("a", "b", "71")])),
            &Reading::default(),
        )
        .unwrap(),
        bytes: Some(
            parse_response(
                "bytes",
                "",
                &vector(json!([sample("a", "b", "38000000")])),
                &Reading::default(),
            )
            .unwrap(),
        ),
        coverage: None,
    };
    let d = derive(&r, &Reading::default(), &Mapping::default(), None);
    assert_eq!(d.notes, vec![]);
    assert_eq!(d.flows.len(), 1);
    // 200 req/s × 0.071 s = 14.2 in flight; 38e6 B/s = 38 MB/s.
    assert_eq!(
        d.flows[0].weight,
        Some(Observed {
            value: 14.2,
            observed_at: 1796011500
        })
    );
    assert_eq!(
        d.flows[0].mb_s,
        Some(Observed {
            value: 38.0,
            observed_at: 1796011500
        })
    );
}

#[test]
fn outside_mesh_unknown_services_and_partial_sums_are_not_sent() {
    let rate = vector(json!([
        sample("unknown", "a", "5"),
        sample("a", "b-v1", "10"),
        sample("a", "b-v2", "10"),
        sample("a", "zz", "1"),
    ]));
    // b-v2 has no duration: b's weight would be half the truth.
    let duration = vector(json!([sample("a", "b-v1", "100"), sample("a", "zz", "1")]));
    let r = Results {
        rate: parse_response("rate", "", &rate, &Reading::default()).unwrap(),
        duration: parse_response("duration", "", &duration, &Reading::default()).unwrap(),
        bytes: None,
        coverage: None,
    };
    let mut m = Mapping::default();
    m.add_arg("b-v1=b").unwrap();
    m.add_arg("b-v2=b").unwrap();
    let known = Directory::from_estate(&json!({"services": [
        {"id": "a", "cluster": "c1"}, {"id": "b", "cluster": "c1"}]}));
    let d = derive(&r, &Reading::default(), &m, Some(&known));
    assert_eq!(d.flows, vec![], "nothing complete to send");
    let codes: Vec<NoteCode> = d.notes.iter().map(|n| n.code).collect();
    assert_eq!(
        codes,
        [
            NoteCode::NoDuration,
            NoteCode::OutsideMesh,
            NoteCode::NotInEstate,
            NoteCode::NoDuration
        ],
        "{:#?}",
        d.notes
    );
    assert!(d.notes[1].message.contains("traffic from outside the mesh"));
    assert!(d.notes[2]
        .message
        .starts_with("workload shop/zz (as service \"zz\")"));
    assert!(d.notes[3]
        .message
        .contains("a → b: weight known for only some of its 2 workload edges"));
    // Without the estate's services, zz is not judged here (the
    // server refuses it) and is sent.
    let d = derive(&r, &Reading::default(), &m, None);
    assert_eq!(d.flows.len(), 1);
    assert_eq!(
        (d.flows[0].from.as_str(), d.flows[0].to.as_str()),
        ("a", "zz")
    );
    assert_eq!(d.flows[0].weight.unwrap().value, 0.001);
}

fn reading_with_clusters() -> Reading {
    Reading::with_labels(
        Mesh::Istio,
        Mesh::Istio
            .labels()
            .with_clusters("source_cluster", "destination_cluster"),
    )
}

fn in_cluster(src: (&str, &str), dst: (&str, &str), v: &str) -> Value {
    json!({"metric": {"source_workload": src.1, "source_workload_namespace": "shop", "source_cluster": src.0,
                      "destination_workload": dst.1, "destination_workload_namespace": "shop", "destination_cluster": dst.0},
           "value": [1796011500.25, v]})
}

#[test]
fn a_replica_in_another_cluster_gets_its_own_flow() {
    let reading = reading_with_clusters();
    let parse = |q: &str, v: Value| parse_response(q, "", &vector(v), &reading).unwrap();
    let r = Results {
        rate: parse(
            "rate",
            json!([
                in_cluster(("c-a", "front"), ("c-a", "cart"), "10"),
                in_cluster(("c-b", "front"), ("c-b", "cart"), "30"),
            ]),
        ),
        duration: parse(
            "duration",
            json!([
                in_cluster(("c-a", "front"), ("c-a", "cart"), "100"),
                in_cluster(("c-b", "front"), ("c-b", "cart"), "100"),
            ]),
        ),
        bytes: None,
        coverage: None,
    };
    // The estate: the first import named them plainly, the second
    // (cluster c-b) qualified the ids it found taken.
    let known = Directory::from_estate(&json!({"services": [
        {"id": "front", "cluster": "c-a", "source": "kubernetes:c-a/shop/deployment/front"},
        {"id": "cart", "cluster": "c-a", "source": "kubernetes:c-a/shop/deployment/cart"},
        {"id": "c-b/front", "cluster": "c-b", "source": "kubernetes:c-b/shop/deployment/front"},
        {"id": "c-b/cart", "cluster": "c-b", "source": "kubernetes:c-b/shop/deployment/cart"},
    ]}));
    let d = derive(&r, &reading, &Mapping::default(), Some(&known));
    let got: Vec<(&str, &str, f64)> = d
        .flows
        .iter()
        .map(|f| (f.from.as_str(), f.to.as_str(), f.weight.unwrap().value))
        .collect();
    assert_eq!(
        got,
        [("c-b/front", "c-b/cart", 3.0), ("front", "cart", 1.0)],
        "{:?}",
        d.notes
    );
    // Without the estate (an agent), the ends go with their cluster
    // for the server to resolve.
    let d = derive(&r, &reading, &Mapping::default(), None);
    let obs = observations(&d.flows);
    assert_eq!(obs[0].from.as_deref(), Some("front"));
    assert_eq!(obs[0].from_cluster.as_deref(), Some("c-a"));
    assert_eq!(obs[1].to_cluster.as_deref(), Some("c-b"));
    // A mapping entry names one replica.
    let mut m = Mapping::default();
    m.add_arg("c-b:shop/cart=cart-eu").unwrap();
    let w = Workload {
        cluster: "c-b".into(),
        namespace: "shop".into(),
        name: "cart".into(),
    };
    assert_eq!(resolve(&w, &m, None), Resolved::Service("cart-eu".into()));
    assert!(m.add_arg("c-b:a/b/c=x").is_err());
}

fn two_cluster_results(reading: &Reading, clusters: [(&str, &str); 2]) -> Results {
    let parse = |q: &str, v: Value| parse_response(q, "", &vector(v), reading).unwrap();
    let [a, b] = clusters;
    let samples = |v: &str| {
        json!([
            in_cluster(a, (a.0, "cart"), v),
            in_cluster(b, (b.0, "cart"), v),
            // Outside the mesh: Istio's "unknown" cluster is no cluster.
            in_cluster(a, ("unknown", "unknown"), v),
        ])
    };
    Results {
        rate: parse("rate", samples("10")),
        duration: parse("duration", samples("100")),
        bytes: None,
        coverage: None,
    }
}

#[test]
fn one_cluster_value_reads_as_none_and_several_must_each_match_the_estate() {
    let reading = Reading::default();
    let known = Directory::from_estate(&json!({
        "clusters": [{"id": "c-east-1", "mesh_cluster": "east-1"}, {"id": "c-west-1"}],
        "services": [
            {"id": "front", "cluster": "c-east-1"}, {"id": "cart", "cluster": "c-east-1"},
            {"id": "c-west-1/front", "cluster": "c-west-1"}, {"id": "c-west-1/cart", "cluster": "c-west-1"}]}));
    // One value (a single-cluster Istio): the clusters are dropped and
    // the names resolve as without cluster labels.
    let mut one = two_cluster_results(
        &reading,
        [("Kubernetes", "front"), ("Kubernetes", "checkout")],
    );
    let mut m = Mapping::default();
    read_clusters(&mut one, &reading, &mut m, Some(&known)).unwrap();
    assert!(one
        .rate
        .samples
        .iter()
        .all(|s| s.edge.source.cluster.is_empty() && s.edge.destination.cluster.is_empty()));
    let d = derive(&one, &reading, &m, Some(&known));
    assert!(
        d.flows
            .iter()
            .any(|f| (f.from.as_str(), f.to.as_str()) == ("front", "cart")),
        "{:?}",
        d.flows
    );
    // Named explicitly, one value is kept, and must be a cluster.
    let named = Reading {
        clusters_named: true,
        ..Reading::default()
    };
    let mut one = two_cluster_results(
        &named,
        [("Kubernetes", "front"), ("Kubernetes", "checkout")],
    );
    let e = read_clusters(&mut one, &named, &mut Mapping::default(), Some(&known)).unwrap_err();
    assert_eq!(e.unmatched[0].0, "Kubernetes");

    // Two values: east-1 is c-east-1's mesh_cluster, west-1 nothing.
    let results = two_cluster_results(&reading, [("east-1", "front"), ("west-1", "front")]);
    let e = read_clusters(
        &mut results.clone(),
        &reading,
        &mut Mapping::default(),
        Some(&known),
    )
    .unwrap_err();
    assert_eq!(
        e.unmatched.iter().map(|u| u.0.as_str()).collect::<Vec<_>>(),
        ["west-1"]
    );
    let text = e.to_string();
    assert!(text.contains("  --map-cluster west-1=c-west-1\n"), "{text}");
    assert!(!text.contains("unknown"), "{text}");
    // Mapped: each replica its own flow, in its cluster.
    let mut m = Mapping::default();
    m.add_cluster_arg("west-1=c-west-1").unwrap();
    let mut r = results.clone();
    read_clusters(&mut r, &reading, &mut m, Some(&known)).unwrap();
    let d = derive(&r, &reading, &m, Some(&known));
    let got: Vec<(&str, &str)> = d
        .flows
        .iter()
        .map(|f| (f.from.as_str(), f.to.as_str()))
        .collect();
    assert_eq!(
        got,
        [("c-west-1/front", "c-west-1/cart"), ("front", "cart")],
        "{:?}",
        d.notes
    );
    // Mapped to a cluster the estate lacks: refused, said so.
    let mut m = Mapping::default();
    m.add_cluster_arg("west-1=c-west-9").unwrap();
    let e = read_clusters(&mut results.clone(), &reading, &mut m, Some(&known)).unwrap_err();
    assert!(
        e.to_string()
            .contains("--map-cluster west-1=c-west-9: the estate has no cluster \"c-west-9\""),
        "{e}"
    );
    // Without the estate (an agent token), the server resolves them.
    assert!(read_clusters(
        &mut results.clone(),
        &reading,
        &mut Mapping::default(),
        None
    )
    .is_ok());
    // Read without clusters (--cluster-labels none): nothing to check.
    let off = Reading::with_labels(Mesh::Istio, Mesh::Istio.labels());
    let mut r = two_cluster_results(&off, [("east-1", "front"), ("west-1", "checkout")]);
    assert!(read_clusters(&mut r, &off, &mut Mapping::default(), Some(&known)).is_ok());
    // A query grouped without the cluster labels, where the others
    // name several clusters: refused rather than mismatched.
    let mut r = results.clone();
    r.duration = parse_response(
        "duration",
        "",
        &vector(json!([sample("front", "cart", "100")])),
        &reading,
    )
    .unwrap();
    let mut m = Mapping::default();
    m.add_cluster_arg("west-1=c-west-1").unwrap();
    let e = read_clusters(&mut r, &reading, &mut m, Some(&known)).unwrap_err();
    assert_eq!(e.unlabelled, ["duration"]);
    assert!(e.to_string().contains("--cluster-labels none"), "{e}");
}

#[test]
fn a_scrape_gap_makes_the_figures_reported() {
    let parse = |q: &str, v: Value| parse_response(q, "", &vector(v), &Reading::default()).unwrap();
    let r = Results {
        rate: parse(
            "rate",
            json!([sample("a", "b", "10"), sample("a", "c", "10")]),
        ),
        duration: parse(
            "duration",
            json!([sample("a", "b", "100"), sample("a", "c", "100")]),
        ),
        bytes: None,
        coverage: Some(parse(
            "coverage",
            json!([sample("a", "b", "21"), sample("a", "c", "14")]),
        )),
    };
    let d = derive(&r, &Reading::default(), &Mapping::default(), None);
    let classes: Vec<Class> = d.flows.iter().map(|f| f.class).collect();
    assert_eq!(classes, [Class::Measured, Class::Reported]);
    assert_eq!(d.notes.len(), 1, "{:?}", d.notes);
    assert_eq!(d.notes[0].code, NoteCode::ScrapeGap);
    assert_eq!(observations(&d.flows)[1].class.as_deref(), Some("reported"));
}

#[test]
fn bytes_without_requests_is_a_tcp_flow() {
    let parse = |q: &str, v: Value| parse_response(q, "", &vector(v), &Reading::default()).unwrap();
    let r = Results {
        rate: parse("rate", json!([])),
        duration: parse("duration", json!([])),
        bytes: Some(parse("bytes", json!([sample("cart", "redis", "2000000")]))),
        coverage: None,
    };
    let d = derive(&r, &Reading::default(), &Mapping::default(), None);
    assert_eq!(d.flows.len(), 1);
    assert_eq!(d.flows[0].weight, None);
    assert_eq!(d.flows[0].mb_s.unwrap().value, 2.0);
    assert_eq!(d.notes[0].code, NoteCode::NoRequests);
}

#[test]
fn an_unidentified_peer_is_outside_the_mesh_where_the_mesh_leaves_it_unlabelled() {
    let reading = Reading::new(Mesh::Linkerd);
    let v = vector(json!([
        {"metric": {"deployment": "web", "namespace": "shop", "dst_deployment": "api", "dst_namespace": "shop"}, "value": [1.0, "5"]},
        {"metric": {"deployment": "web", "namespace": "shop"}, "value": [1.0, "2"]},
    ]));
    let rate = parse_response("rate", "", &v, &reading).unwrap();
    assert_eq!(rate.samples[1].edge.destination.name, "");
    let r = Results {
        rate,
        duration: parse_response("duration", "", &vector(json!([])), &reading).unwrap(),
        bytes: None,
        coverage: None,
    };
    let d = derive(&r, &reading, &Mapping::default(), None);
    assert!(
        d.notes
            .iter()
            .any(|n| n.code == NoteCode::OutsideMesh && n.message.contains("did not identify")),
        "{:?}",
        d.notes
    );
    // Istio always names both ends: a missing label is a bad query.
    assert!(parse_response("rate", "", &v, &Reading::default()).is_err());
}
