//! The Kubernetes importer on the two real manifests of
//! `shared/fixtures/kubernetes/` (SPEC §12: they must import correctly),
//! every number checked by hand against the YAML, and the merge into an
//! estate: ids, provenance, idempotent re-import, changes, removals,
//! errors, and advice on the result.

use std::collections::BTreeSet;
use std::path::PathBuf;
use std::process::Command;

use berth::import::kubernetes::{parse, Options};
use berth::import::{merge, Imported, Input, MergeError, NoteCode, Report, ReportText};
use berth_engine::{advise, load, Format, Policy};
use expect_test::expect;
use serde_json::{json, Value};

/// `shared/fixtures/kubernetes/<name>`, found by walking up from this
/// crate: the fixtures live beside the project, which may be checked out
/// at any depth (a worktree is deeper than the main checkout).
fn fixture(name: &str) -> (String, String) {
    let start = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    for dir in start.ancestors() {
        let path = dir.join("shared/fixtures/kubernetes").join(name);
        if path.is_file() {
            let text = std::fs::read_to_string(&path).unwrap();
            return (name.to_string(), text);
        }
    }
    panic!(
        "shared/fixtures/kubernetes/{name} not found above {}",
        start.display()
    );
}

fn import(names: &[&str]) -> Imported {
    let files: Vec<(String, String)> = names.iter().map(|n| fixture(n)).collect();
    let inputs: Vec<Input> = files
        .iter()
        .map(|(name, text)| Input { name, text })
        .collect();
    parse(&inputs, Options::default()).unwrap_or_else(|e| panic!("{e:#?}"))
}

fn import_text(text: &str) -> Imported {
    parse(
        &[Input {
            name: "test.yaml",
            text,
        }],
        Options::default(),
    )
    .unwrap_or_else(|e| {
        panic!(
            "{}",
            e.iter()
                .map(|e| e.to_string())
                .collect::<Vec<_>>()
                .join("\n")
        )
    })
}

/// Two sites, three clusters with room: where the fixtures are imported.
fn estate() -> Value {
    json!({
        "schema": 1,
        "name": "import test",
        "observed_at": "2026-11-30T04:00:00Z",
        "sites": [
            {"id": "fra", "name": "Frankfurt", "lat": 50.11, "lon": 8.68, "jurisdiction": "eu"},
            {"id": "par", "name": "Paris", "lat": 48.86, "lon": 2.35, "jurisdiction": "eu"}
        ],
        "clusters": [
            {"id": "c-fra", "site": "fra", "tier": "prod", "trust_zone": "general", "health": "healthy",
             "cpu_total": 64, "memory_total_gib": 256, "cpu_free": 40, "memory_free_gib": 160},
            {"id": "c-par", "site": "par", "tier": "prod", "trust_zone": "general", "health": "healthy",
             "cpu_total": 64, "memory_total_gib": 256, "cpu_free": 40, "memory_free_gib": 160},
            {"id": "c-shop", "site": "par", "tier": "prod", "trust_zone": "general", "health": "healthy",
             "cpu_total": 32, "memory_total_gib": 128, "cpu_free": 20, "memory_free_gib": 80}
        ],
        "services": [
            {"id": "billing", "owner": "finance", "cluster": "c-fra", "cpu": 2, "memory_gib": 4}
        ],
        "flows": []
    })
}

fn merged(e: &Value, cluster: &str, imported: &Imported) -> (Value, Report) {
    merge(e, cluster, imported).unwrap_or_else(|err| panic!("{err}"))
}

fn requests(i: &Imported) -> Vec<(String, Option<f64>, Option<f64>)> {
    i.services
        .iter()
        .map(|s| (s.id.clone(), s.cpu, s.memory_gib))
        .collect()
}

fn edges(i: &Imported) -> BTreeSet<(String, String)> {
    let id = |key: &str| i.services.iter().find(|s| s.key == key).unwrap().id.clone();
    i.flows.iter().map(|f| (id(&f.from), id(&f.to))).collect()
}

const MI: f64 = 1.0 / 1024.0;

/// Online Boutique: every Deployment declares its requests (the frontend:
/// `cpu: 100m`, `memory: 64Mi` = 0.1 cores, 64/1024 GiB), one replica
/// each. The load generator's init container declares none and is left
/// out (noted). redis-cart's `emptyDir` is not persistent data. Nothing is
/// pinned. 1.57 cores and 1368 MiB in all.
#[test]
fn online_boutique_requests() {
    let i = import(&["online-boutique.yaml"]);
    assert_eq!(
        requests(&i),
        vec![
            ("adservice".into(), Some(0.2), Some(180.0 * MI)),
            ("cartservice".into(), Some(0.2), Some(64.0 * MI)),
            ("checkoutservice".into(), Some(0.1), Some(64.0 * MI)),
            ("currencyservice".into(), Some(0.1), Some(64.0 * MI)),
            ("emailservice".into(), Some(0.1), Some(64.0 * MI)),
            ("frontend".into(), Some(0.1), Some(64.0 * MI)),
            ("loadgenerator".into(), Some(0.3), Some(256.0 * MI)),
            ("paymentservice".into(), Some(0.1), Some(64.0 * MI)),
            ("productcatalogservice".into(), Some(0.1), Some(64.0 * MI)),
            ("recommendationservice".into(), Some(0.1), Some(220.0 * MI)),
            ("redis-cart".into(), Some(0.07), Some(200.0 * MI)),
            ("shippingservice".into(), Some(0.1), Some(64.0 * MI)),
        ]
    );
    let cpu: f64 = i.services.iter().map(|s| s.cpu.unwrap()).sum();
    let mem: f64 = i.services.iter().map(|s| s.memory_gib.unwrap()).sum();
    assert!((cpu - 1.57).abs() < 1e-9, "{cpu}");
    assert_eq!(mem, 1368.0 * MI);
    for s in &i.services {
        assert!(s.can_move(), "{}", s.id);
        assert_eq!(s.data_gb, 0.0, "{}", s.id);
        assert_eq!(s.owner, None, "{}: no label, no namespace", s.id);
        assert_eq!(s.key, format!("default/Deployment/{}", s.id));
    }
    assert_eq!(i.ignored.get("Service"), Some(&12));
    assert_eq!(i.ignored.get("ServiceAccount"), Some(&11));
}

/// The `*_ADDR` variables give 16 call edges: the frontend's seven (the
/// shopping assistant is not in the file: noted, no flow), checkout's six,
/// recommendation → product catalog, cart → redis, and the load
/// generator → frontend (its init container names the frontend too; init
/// containers are start-up checks, and the edge is not doubled).
#[test]
fn online_boutique_edges() {
    let i = import(&["online-boutique.yaml"]);
    let want: BTreeSet<(String, String)> = [
        ("frontend", "productcatalogservice"),
        ("frontend", "currencyservice"),
        ("frontend", "cartservice"),
        ("frontend", "recommendationservice"),
        ("frontend", "shippingservice"),
        ("frontend", "checkoutservice"),
        ("frontend", "adservice"),
        ("cartservice", "redis-cart"),
        ("loadgenerator", "frontend"),
        ("recommendationservice", "productcatalogservice"),
        ("checkoutservice", "productcatalogservice"),
        ("checkoutservice", "shippingservice"),
        ("checkoutservice", "paymentservice"),
        ("checkoutservice", "emailservice"),
        ("checkoutservice", "currencyservice"),
        ("checkoutservice", "cartservice"),
    ]
    .iter()
    .map(|(a, b)| (a.to_string(), b.to_string()))
    .collect();
    assert_eq!(edges(&i), want);
    let cart_redis = i
        .flows
        .iter()
        .find(|f| f.from.ends_with("/cartservice"))
        .unwrap();
    assert_eq!(cart_redis.source, "kubernetes:env/REDIS_ADDR");
    let unresolved: Vec<&str> = i
        .notes
        .iter()
        .filter(|n| n.code == NoteCode::UnresolvedAddress)
        .map(|n| n.message.as_str())
        .collect();
    assert_eq!(
        unresolved,
        ["SHOPPING_ASSISTANT_SERVICE_ADDR=shoppingassistantservice:80: shoppingassistantservice (namespace default) is neither a Service nor a workload in the input; no flow"]
    );
}

/// Sock Shop: 14 Deployments in namespace sock-shop (the owner). The six
/// data stores and the queue declare no requests: unknown, flagged, never
/// zero. `payment` asks for 99m. Every pod has the node selector
/// `beta.kubernetes.io/os: linux`, which does not pin. The one edge: user
/// reaches its database through `mongo=user-db:27017` (an address-shaped
/// value; the Java services find their peers through configuration the
/// manifests do not show). 0.799 cores and 1700 MiB known.
#[test]
fn sock_shop_requests_unknowns_and_edges() {
    let i = import(&["sock-shop.yaml"]);
    assert_eq!(
        requests(&i),
        vec![
            ("carts".into(), Some(0.1), Some(200.0 * MI)),
            ("carts-db".into(), None, None),
            ("catalogue".into(), Some(0.1), Some(100.0 * MI)),
            ("catalogue-db".into(), None, None),
            ("front-end".into(), Some(0.1), Some(300.0 * MI)),
            ("orders".into(), Some(0.1), Some(300.0 * MI)),
            ("orders-db".into(), None, None),
            ("payment".into(), Some(0.099), Some(100.0 * MI)),
            ("queue-master".into(), Some(0.1), Some(300.0 * MI)),
            ("rabbitmq".into(), None, None),
            ("session-db".into(), None, None),
            ("shipping".into(), Some(0.1), Some(300.0 * MI)),
            ("user".into(), Some(0.1), Some(100.0 * MI)),
            ("user-db".into(), None, None),
        ]
    );
    let known_cpu: f64 = i.services.iter().filter_map(|s| s.cpu).sum();
    let known_mem: f64 = i.services.iter().filter_map(|s| s.memory_gib).sum();
    assert!((known_cpu - 0.799).abs() < 1e-9, "{known_cpu}");
    assert_eq!(known_mem, 1700.0 * MI);
    for s in &i.services {
        assert!(s.can_move(), "{}: an OS selector does not pin", s.id);
        assert_eq!(s.owner.as_deref(), Some("sock-shop"));
    }
    let unknown: Vec<&str> = i
        .notes
        .iter()
        .filter(|n| n.code == NoteCode::UnknownRequest)
        .map(|n| n.service.as_deref().unwrap())
        .collect();
    assert_eq!(
        unknown,
        [
            "carts-db",
            "catalogue-db",
            "orders-db",
            "rabbitmq",
            "session-db",
            "user-db"
        ]
    );
    assert_eq!(
        edges(&i),
        BTreeSet::from([("user".to_string(), "user-db".to_string())])
    );
    assert_eq!(i.ignored.get("Namespace"), Some(&1));
}

/// Both fixtures into two clusters of one estate: the merged file loads,
/// every imported entry says where it came from, unknown requests are
/// `null`, and the whole report reads as below.
#[test]
fn merge_report_golden() {
    let (e1, r1) = merged(&estate(), "c-par", &import(&["online-boutique.yaml"]));
    let (e2, r2) = merged(&e1, "c-shop", &import(&["sock-shop.yaml"]));
    load(&e2.to_string(), Format::Json).unwrap();
    let carts_db = e2["services"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["id"] == "carts-db")
        .unwrap();
    assert_eq!(
        carts_db,
        &json!({
            "id": "carts-db", "owner": "sock-shop", "cluster": "c-shop",
            "cpu": null, "memory_gib": null, "data_gb": 0.0,
            "source": "kubernetes:c-shop/sock-shop/Deployment/carts-db"
        })
    );
    expect![[r#"
        kubernetes import into cluster c-par: 12 services — 12 added, 0 changed, 0 removed, 0 unchanged; flows: 16 added, 0 updated, 0 removed
        Known requests: 1.57 cores, 1.3359 GiB; 0 services with an unknown request
          service                   cores         GiB   data GB
          adservice                   0.2      0.1758         0
          cartservice                 0.2      0.0625         0
          checkoutservice             0.1      0.0625         0
          currencyservice             0.1      0.0625         0
          emailservice                0.1      0.0625         0
          frontend                    0.1      0.0625         0
          loadgenerator               0.3        0.25         0
          paymentservice              0.1      0.0625         0
          productcatalogservice       0.1      0.0625         0
          recommendationservice       0.1      0.2148         0
          redis-cart                 0.07      0.1953         0
          shippingservice             0.1      0.0625         0
        Added:
          adservice
          cartservice
          checkoutservice
          currencyservice
          emailservice
          frontend
          loadgenerator
          paymentservice
          productcatalogservice
          recommendationservice
          redis-cart
          shippingservice
        Flows added:
          cartservice → redis-cart
          checkoutservice → cartservice
          checkoutservice → currencyservice
          checkoutservice → emailservice
          checkoutservice → paymentservice
          checkoutservice → productcatalogservice
          checkoutservice → shippingservice
          frontend → adservice
          frontend → cartservice
          frontend → checkoutservice
          frontend → currencyservice
          frontend → productcatalogservice
          frontend → recommendationservice
          frontend → shippingservice
          loadgenerator → frontend
          recommendationservice → productcatalogservice
        Notes:
          [unresolved_address] frontend: SHOPPING_ASSISTANT_SERVICE_ADDR=shoppingassistantservice:80: shoppingassistantservice (namespace default) is neither a Service nor a workload in the input; no flow
          [init_container_without_request] loadgenerator: init container frontend-check declares no CPU or memory request; it runs to completion before the app starts, so it is left out
          [traffic_unknown] traffic never observed for 12 of 12 imported services; every one has a call edge from the input. A move of any of them is listed under "Not enough evidence" until a mesh import (berth import prometheus) or an agent pass observes it
        Not imported, by kind: Service 12, ServiceAccount 11
        kubernetes import into cluster c-shop: 14 services — 14 added, 0 changed, 0 removed, 0 unchanged; flows: 1 added, 0 updated, 0 removed
        Known requests: 0.799 cores, 1.6602 GiB; 6 services with an unknown request
          service          cores         GiB   data GB
          carts              0.1      0.1953         0
          carts-db             ?           ?         0
          catalogue          0.1      0.0977         0
          catalogue-db         ?           ?         0
          front-end          0.1       0.293         0
          orders             0.1       0.293         0
          orders-db            ?           ?         0
          payment          0.099      0.0977         0
          queue-master       0.1       0.293         0
          rabbitmq             ?           ?         0
          session-db           ?           ?         0
          shipping           0.1       0.293         0
          user               0.1      0.0977         0
          user-db              ?           ?         0
        Added:
          carts
          carts-db
          catalogue
          catalogue-db
          front-end
          orders
          orders-db
          payment
          queue-master
          rabbitmq
          session-db
          shipping
          user
          user-db
        Flows added:
          user → user-db
        Notes:
          [unknown_request] carts-db: CPU and memory requests unknown: container carts-db declares none
          [unknown_request] catalogue-db: CPU and memory requests unknown: container catalogue-db declares none
          [unknown_request] orders-db: CPU and memory requests unknown: container orders-db declares none
          [unknown_request] rabbitmq: CPU and memory requests unknown: containers rabbitmq, rabbitmq-exporter declare none
          [unknown_request] session-db: CPU and memory requests unknown: container session-db declares none
          [unresolved_address] shipping: ZIPKIN=zipkin.jaeger.svc.cluster.local: zipkin (namespace jaeger) is neither a Service nor a workload in the input; no flow
          [unknown_request] user-db: CPU and memory requests unknown: container user-db declares none
          [traffic_unknown] traffic never observed for 14 of 14 imported services; 12 got no call edge from the input (carts, carts-db, catalogue, catalogue-db, front-end, orders, orders-db, payment, queue-master, rabbitmq and 2 more), which is not the same as calling nobody. A move of any of them is listed under "Not enough evidence" until a mesh import (berth import prometheus) or an agent pass observes it. Only 1 call edge for 14 services: these manifests name few of the calls the application makes (its services may find each other by names set inside their images), so the advice cannot see how they talk. The flows will come from the service mesh's metrics (berth import prometheus --url PROMETHEUS_URL) or from an agent beside each cluster (berth agent --prometheus PROMETHEUS_URL), which see every call.
        Not imported, by kind: Namespace 1, Service 14
    "#]]
    .assert_eq(&format!("{}{}", r1.text(), r2.text()));
}

/// Importing the same input again changes nothing: the estate value is
/// equal, every service unchanged, no flow added or removed.
#[test]
fn reimport_is_a_no_op() {
    let ob = import(&["online-boutique.yaml"]);
    let (e1, _) = merged(&estate(), "c-par", &ob);
    let (e2, r) = merged(&e1, "c-par", &ob);
    assert!(r.is_noop(), "{}", r.text());
    assert_eq!(r.unchanged, 12);
    assert_eq!(e1, e2);
    // Whatever the order of the input files.
    let both = import(&["online-boutique.yaml", "sock-shop.yaml"]);
    let reversed = import(&["sock-shop.yaml", "online-boutique.yaml"]);
    assert_eq!(both.services, reversed.services);
    assert_eq!(both.flows, reversed.flows);
}

/// A changed manifest: the frontend scaled to 3 replicas (0.3 cores,
/// 192 MiB), the ad service deleted (its entry and its one flow go), a
/// person's edits of an imported entry that the import cannot know
/// (`name`, `jurisdictions`) survive, and the other clusters' services —
/// and a hand-written service in the same cluster — are untouched.
#[test]
fn reimport_updates_adds_and_removes_only_its_own() {
    let (_, ob) = fixture("online-boutique.yaml");
    let (e1, _) = merged(&estate(), "c-par", &import_text(&ob));
    let mut e1 = e1;
    let services = e1["services"].as_array_mut().unwrap();
    services.push(
        json!({"id": "hand-made", "owner": "ops", "cluster": "c-par", "cpu": 1, "memory_gib": 1}),
    );
    let front = services.iter_mut().find(|s| s["id"] == "frontend").unwrap();
    front["name"] = json!("Storefront");
    front["constraints"] = json!({"jurisdictions": ["eu"]});

    // Scale the frontend, drop the ad service (its Deployment, Service
    // and ServiceAccount documents).
    let scaled = ob.replacen(
        "  name: frontend\n  labels:\n    app: frontend\nspec:\n",
        "  name: frontend\n  labels:\n    app: frontend\nspec:\n  replicas: 3\n",
        1,
    );
    assert_ne!(scaled, ob);
    let docs: Vec<&str> = scaled.split("\n---\n").collect();
    let without_ad: Vec<&str> = docs
        .into_iter()
        .filter(|d| !d.contains("name: adservice"))
        .collect();
    let changed = without_ad.join("\n---\n");
    let (e2, r) = merged(&e1, "c-par", &import_text(&changed));

    assert_eq!(r.removed, ["adservice"]);
    assert_eq!(r.changed.len(), 1);
    assert_eq!(r.changed[0].id, "frontend");
    assert_eq!(r.changed[0].fields, ["cpu", "memory_gib"]);
    assert_eq!(r.flows_removed.len(), 1);
    assert_eq!(
        (
            r.flows_removed[0].from.as_str(),
            r.flows_removed[0].to.as_str()
        ),
        ("frontend", "adservice")
    );
    let e = load(&e2.to_string(), Format::Json).unwrap();
    let f = &e.services[e.service_index("frontend").unwrap()];
    // 3 × 100 millicores, summed exactly: 0.3, not 0.1 + 0.1 + 0.1.
    assert_eq!((f.cpu, f.memory_gib), (Some(0.3), Some(192.0 * MI)));
    assert_eq!(f.name.as_deref(), Some("Storefront"));
    assert_eq!(
        f.constraints.jurisdictions.as_deref(),
        Some(&["eu".to_string()][..])
    );
    assert!(e.service_index("hand-made").is_some());
    assert!(e.service_index("billing").is_some());
    assert!(e.service_index("adservice").is_none());
}

/// Ids: a name already used by a service the import did not write is
/// qualified with the cluster (noted), and stays that way on re-import;
/// the same manifests imported into a second cluster get qualified ids
/// too (ids are unique across the estate), while re-importing the first
/// cluster leaves the second alone.
#[test]
fn ids_are_qualified_when_taken_and_stable() {
    let mut e = estate();
    e["services"] =
        json!([{"id": "frontend", "owner": "web", "cluster": "c-fra", "cpu": 1, "memory_gib": 1}]);
    let ob = import(&["online-boutique.yaml"]);
    let (e1, r1) = merged(&e, "c-par", &ob);
    assert!(r1.added.contains(&"c-par/frontend".to_string()));
    assert!(
        r1.notes
            .iter()
            .any(|n| n.code == NoteCode::QualifiedId
                && n.service.as_deref() == Some("c-par/frontend"))
    );
    assert!(r1
        .flows_added
        .iter()
        .any(|f| f.from == "loadgenerator" && f.to == "c-par/frontend"));
    let (e2, r2) = merged(&e1, "c-fra", &ob);
    assert_eq!(r2.added.len(), 12);
    assert!(
        r2.added.iter().all(|id| id.starts_with("c-fra/")),
        "{:?}",
        r2.added
    );
    let (e3, r3) = merged(&e2, "c-par", &ob);
    assert!(r3.is_noop(), "{}", r3.text());
    assert_eq!(e3, e2);
    load(&e3.to_string(), Format::Json).unwrap();
}

/// The merged estate gives advice. Sock Shop's stores have unknown
/// requests: never moved, listed under unknown requests; everything in it
/// is a candidate for advice.
#[test]
fn merged_estate_yields_advice() {
    let (e1, _) = merged(&estate(), "c-par", &import(&["online-boutique.yaml"]));
    let (e2, _) = merged(&e1, "c-shop", &import(&["sock-shop.yaml"]));
    let model = load(&e2.to_string(), Format::Json).unwrap();
    let now = berth_engine::estate::parse_time("2026-11-30T04:05:00Z").unwrap();
    let advice = advise(&model, &Policy::default(), now);
    let unknown: Vec<&str> = advice
        .unknown_requests
        .iter()
        .map(|u| u.service.as_str())
        .collect();
    assert_eq!(
        unknown,
        [
            "carts-db",
            "catalogue-db",
            "orders-db",
            "rabbitmq",
            "session-db",
            "user-db"
        ]
    );
    assert!(advice.immovable.is_empty(), "{:?}", advice.immovable);
    for m in &advice.moves {
        assert!(!unknown.contains(&m.service.as_str()), "{m:?}");
    }
    assert_eq!(advice.estate_version, berth_engine::export::version(&model));
    // Every import-written flow rests on guesses, so any move says so.
    for m in &advice.moves {
        assert!(m.evidence.is_some(), "{m:?}");
    }
}

/// The cluster must exist; the estate must be valid.
#[test]
fn merge_errors() {
    let ob = import(&["online-boutique.yaml"]);
    match merge(&estate(), "c-nowhere", &ob) {
        Err(e @ MergeError::UnknownCluster { .. }) => assert_eq!(
            e.to_string(),
            "cluster \"c-nowhere\" is not in the estate; add it first (clusters: c-fra, c-par, c-shop)"
        ),
        other => panic!("{other:?}"),
    }
    let mut bad = estate();
    bad["services"][0]["cpu"] = json!("2");
    match merge(&bad, "c-par", &ob) {
        Err(e @ MergeError::InvalidEstate(_)) => assert_eq!(
            e.to_string(),
            "the estate is not valid:\n  /services/0/cpu: expected a number or null, found the string \"2\""
        ),
        other => panic!("{other:?}"),
    }
}

/// Bad input: every error names file, document, object and field; all are
/// reported at once; with `skip_invalid` the rest is imported, the bad
/// objects are reported as skipped, and an entry an earlier import wrote
/// for a skipped object is kept, not removed.
#[test]
fn errors_name_file_document_object_and_field() {
    let text = "\
apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: shop}
spec:
  replicas: 2
  template:
    spec:
      containers:
      - name: app
        resources: {requests: {cpu: 250m, memory: 1Gi}}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: api, namespace: shop}
spec:
  replicas: two
  template:
    spec:
      containers:
      - name: app
        resources: {requests: {cpu: 1.5x, memory: 1Gi}}
---
apiVersion: v1
kind: ConfigMap
---
kind: StatefulSet
metadata: {namespace: shop}
";
    let input = [Input {
        name: "shop.yaml",
        text,
    }];
    let errors = parse(&input, Options::default()).unwrap_err();
    let lines: Vec<String> = errors.iter().map(|e| e.to_string()).collect();
    assert_eq!(
        lines,
        [
            "shop.yaml: document 2: Deployment shop/api: /spec/replicas: expected a whole number ≥ 0, found the string \"two\"",
            "shop.yaml: document 2: Deployment shop/api: /spec/template/spec/containers/0/resources/requests/cpu: invalid quantity \"1.5x\": unknown suffix \"x\" (expected e.g. 100m, 0.5, 64Mi, 1Gi, 2G, 1e3)",
            "shop.yaml: document 3: ConfigMap: /metadata/name: missing the object's name",
            "shop.yaml: document 4: StatefulSet: /metadata/name: missing the object's name",
        ]
    );

    let skipping = parse(
        &input,
        Options {
            skip_invalid: true,
            ..Options::default()
        },
    )
    .unwrap();
    assert_eq!(skipping.services.len(), 1);
    assert_eq!(skipping.services[0].cpu, Some(0.5));
    assert_eq!(skipping.services[0].memory_gib, Some(2.0));
    assert_eq!(skipping.skipped.len(), 4);
    assert_eq!(skipping.kept, ["shop/Deployment/api"]);
    assert!(
        !skipping.complete,
        "an object without a name leaves the input incomplete"
    );

    // An earlier import had api; skipping it now keeps its entry, and the
    // incomplete input removes nothing.
    let good = text
        .replace("replicas: two", "replicas: 1")
        .replace("1.5x", "1.5");
    let good = good
        .split("\n---\n")
        .take(2)
        .collect::<Vec<_>>()
        .join("\n---\n");
    let (e1, _) = merged(&estate(), "c-par", &import_text(&good));
    let (e2, r) = merged(&e1, "c-par", &skipping);
    assert_eq!(r.kept, ["api"]);
    assert!(r.removed.is_empty());
    assert_eq!(r.unchanged, 1);
    assert_eq!(e1, e2);
}

/// YAML and JSON syntax errors carry their line.
#[test]
fn syntax_errors_have_lines() {
    let yaml = "kind: ConfigMap\nmetadata: {name: a}\n---\nkind: [\n";
    let e = parse(
        &[Input {
            name: "a.yaml",
            text: yaml,
        }],
        Options::default(),
    )
    .unwrap_err();
    assert_eq!(e.len(), 1);
    assert_eq!(e[0].document, Some(2));
    assert!(e[0].line.is_some(), "{:?}", e[0]);
    let json = "{\"kind\": \"List\",\n \"items\": [}\n";
    let e = parse(
        &[Input {
            name: "a.json",
            text: json,
        }],
        Options::default(),
    )
    .unwrap_err();
    assert_eq!(e[0].line, Some(2));
    assert!(
        e[0].to_string()
            .starts_with("a.json:2: document 1: not valid JSON"),
        "{}",
        e[0]
    );
}

/// `kubectl get deploy,sts,ds,rs,pod,svc,pvc -o json`: a List whose items
/// include the ReplicaSets and Pods the Deployment owns (not imported
/// again), a StatefulSet with claim templates, a DaemonSet, a bare Pod
/// pinned by nodeName, a PVC on a local storage class, and a Service
/// whose selector maps a DNS name to a workload.
#[test]
fn kubectl_list_with_every_kind() {
    let list = json!({
        "apiVersion": "v1",
        "kind": "List",
        "items": [
            {"apiVersion": "apps/v1", "kind": "Deployment",
             "metadata": {"name": "api", "namespace": "shop", "labels": {"team": "checkout"}},
             "spec": {"replicas": 2, "template": {
                "metadata": {"labels": {"app": "api"}},
                "spec": {"containers": [{"name": "app",
                    "env": [{"name": "DATABASE_URL", "value": "postgres://u:p@pg.shop.svc.cluster.local:5432/db"},
                            {"name": "CACHE", "value": "cache:6379"},
                            {"name": "SELF_URL", "value": "http://api-svc"}],
                    "resources": {"requests": {"cpu": "500m", "memory": "512Mi"}}}]}}}},
            {"apiVersion": "apps/v1", "kind": "ReplicaSet",
             "metadata": {"name": "api-5d8f", "namespace": "shop",
                          "ownerReferences": [{"kind": "Deployment", "name": "api"}]},
             "spec": {"template": {"spec": {"containers": [{"name": "app"}]}}}},
            {"apiVersion": "v1", "kind": "Pod",
             "metadata": {"name": "api-5d8f-x", "namespace": "shop",
                          "ownerReferences": [{"kind": "ReplicaSet", "name": "api-5d8f"}]},
             "spec": {"containers": [{"name": "app"}]}},
            {"apiVersion": "v1", "kind": "Service",
             "metadata": {"name": "api-svc", "namespace": "shop"},
             "spec": {"selector": {"app": "api"}}},
            {"apiVersion": "v1", "kind": "Service",
             "metadata": {"name": "pg", "namespace": "shop"},
             "spec": {"selector": {"app": "postgres"}}},
            {"apiVersion": "apps/v1", "kind": "StatefulSet",
             "metadata": {"name": "postgres", "namespace": "shop"},
             "spec": {"replicas": 3,
                "template": {"metadata": {"labels": {"app": "postgres"}},
                    "spec": {"containers": [{"name": "pg",
                        "resources": {"requests": {"cpu": 2, "memory": "4Gi"}}}]}},
                "volumeClaimTemplates": [{"metadata": {"name": "data"},
                    "spec": {"storageClassName": "ssd",
                             "resources": {"requests": {"storage": "100Gi"}}}}]}},
            {"apiVersion": "apps/v1", "kind": "Deployment",
             "metadata": {"name": "cache", "namespace": "shop"},
             "spec": {"template": {"spec": {
                "volumes": [{"name": "dump", "persistentVolumeClaim": {"claimName": "cache-dump"}}],
                "containers": [{"name": "redis",
                    "resources": {"limits": {"cpu": "1", "memory": "1Gi"}}}]}}}},
            {"apiVersion": "v1", "kind": "PersistentVolumeClaim",
             "metadata": {"name": "cache-dump", "namespace": "shop"},
             "spec": {"storageClassName": "local-path", "resources": {"requests": {"storage": "5G"}}}},
            {"apiVersion": "apps/v1", "kind": "DaemonSet",
             "metadata": {"name": "node-exporter", "namespace": "monitoring"},
             "spec": {"template": {"spec": {"containers": [{"name": "exporter",
                 "resources": {"requests": {"cpu": "100m", "memory": "30Mi"}}}]}}}},
            {"apiVersion": "v1", "kind": "Pod",
             "metadata": {"name": "debug", "namespace": "shop"},
             "spec": {"nodeName": "node-7", "containers": [{"name": "sh",
                 "resources": {"requests": {"cpu": "10m", "memory": "16Mi"}}}]}},
            {"apiVersion": "batch/v1", "kind": "CronJob",
             "metadata": {"name": "nightly", "namespace": "shop"}, "spec": {}}
        ]
    })
    .to_string();
    let i = parse(
        &[Input {
            name: "all.json",
            text: &list,
        }],
        Options::default(),
    )
    .unwrap();
    let by = |id: &str| i.service(id).unwrap_or_else(|| panic!("{id}"));
    let ids: Vec<&str> = i.services.iter().map(|s| s.id.as_str()).collect();
    assert_eq!(ids, ["node-exporter", "api", "cache", "debug", "postgres"]);

    let api = by("api");
    assert_eq!((api.cpu, api.memory_gib), (Some(1.0), Some(1.0)));
    assert_eq!(api.owner.as_deref(), Some("checkout"));
    assert!(api.can_move());

    // 3 replicas × (2 cores, 4 GiB), 3 × 100 GiB of claims: 322.1225472 GB.
    let pg = by("postgres");
    assert_eq!((pg.cpu, pg.memory_gib), (Some(6.0), Some(12.0)));
    assert_eq!(pg.data_gb, 3.0 * 100.0 * 1073741824.0 / 1e9);
    assert!(pg.can_move(), "ssd is not node-local");

    // Requests from limits; a claim of 5 GB on local-path storage.
    let cache = by("cache");
    assert_eq!((cache.cpu, cache.memory_gib), (Some(1.0), Some(1.0)));
    assert_eq!(cache.data_gb, 5.0);
    assert!(cache.local_volumes && !cache.can_move());

    let ds = by("node-exporter");
    assert_eq!((ds.cpu, ds.memory_gib), (None, None), "node count unknown");
    assert!(ds.pinned);
    assert!(i.notes.iter().any(|n| n.code == NoteCode::DaemonSet
        && n.message.contains("asking 0.1 cores and 0.029 GiB per pod")));
    assert!(i.notes.iter().any(|n| n.code == NoteCode::Pinned
        && n.service.as_deref() == Some("node-exporter")
        && n.message == "DaemonSet runs on every node"));

    let debug = by("debug");
    assert!(debug.pinned);
    assert!(i
        .notes
        .iter()
        .any(|n| n.code == NoteCode::Pinned && n.message == "nodeName is node-7"));

    // api → postgres through the pg Service (scheme, user, namespace and
    // cluster domain stripped); api → cache by workload name; SELF_URL
    // resolves to api itself: no self edge.
    assert_eq!(
        edges(&i),
        BTreeSet::from([
            ("api".to_string(), "cache".to_string()),
            ("api".to_string(), "postgres".to_string()),
        ])
    );
    assert_eq!(
        i.ignored.get("ReplicaSet (owned by a controller)"),
        Some(&1)
    );
    assert_eq!(i.ignored.get("Pod (owned by a controller)"), Some(&1));
    assert!(i
        .notes
        .iter()
        .any(|n| n.code == NoteCode::IgnoredKind && n.message.contains("CronJob shop/nightly")));
}

/// Node pinning: a hostname selector or a required hostname / metadata.name
/// affinity pins; an OS or arch selector, a zone selector, or an affinity
/// with one term that does not pin, does not.
#[test]
fn pinning_rules() {
    let pod = |name: &str, extra: &str| {
        format!(
            "apiVersion: v1\nkind: Pod\nmetadata: {{name: {name}}}\nspec:\n{extra}  containers: [{{name: c, resources: {{requests: {{cpu: 1, memory: 1Gi}}}}}}]\n"
        )
    };
    let docs = [
        pod("by-hostname", "  nodeSelector: {kubernetes.io/hostname: node-1}\n"),
        pod("by-os", "  nodeSelector: {kubernetes.io/os: linux, kubernetes.io/arch: arm64, beta.kubernetes.io/os: linux}\n"),
        pod("by-zone", "  nodeSelector: {topology.kubernetes.io/zone: eu-1a}\n"),
        pod(
            "by-affinity",
            "  affinity:\n    nodeAffinity:\n      requiredDuringSchedulingIgnoredDuringExecution:\n        nodeSelectorTerms:\n        - matchExpressions: [{key: kubernetes.io/hostname, operator: In, values: [node-1, node-2]}]\n        - matchFields: [{key: metadata.name, operator: In, values: [node-3]}]\n",
        ),
        pod(
            "one-term-free",
            "  affinity:\n    nodeAffinity:\n      requiredDuringSchedulingIgnoredDuringExecution:\n        nodeSelectorTerms:\n        - matchExpressions: [{key: kubernetes.io/hostname, operator: In, values: [node-1]}]\n        - matchExpressions: [{key: kubernetes.io/os, operator: In, values: [linux]}]\n",
        ),
        pod(
            "not-in",
            "  affinity:\n    nodeAffinity:\n      requiredDuringSchedulingIgnoredDuringExecution:\n        nodeSelectorTerms:\n        - matchExpressions: [{key: kubernetes.io/hostname, operator: NotIn, values: [node-1]}]\n",
        ),
    ];
    let i = import_text(&docs.join("---\n"));
    let pinned: Vec<(&str, bool)> = i
        .services
        .iter()
        .map(|s| (s.id.as_str(), s.pinned))
        .collect();
    assert_eq!(
        pinned,
        [
            ("by-affinity", true),
            ("by-hostname", true),
            ("by-os", false),
            ("by-zone", false),
            ("not-in", false),
            ("one-term-free", false),
        ]
    );
    let reasons: Vec<(&str, &str)> = i
        .notes
        .iter()
        .filter(|n| matches!(n.code, NoteCode::Pinned | NoteCode::NodeSelector))
        .map(|n| (n.service.as_deref().unwrap(), n.message.as_str()))
        .collect();
    assert_eq!(
        reasons,
        [
            ("by-affinity", "required node affinity kubernetes.io/hostname in [node-1, node-2] or metadata.name in [node-3]"),
            ("by-hostname", "nodeSelector kubernetes.io/hostname=node-1"),
            ("by-zone", "nodeSelector topology.kubernetes.io/zone=eu-1a: not pinned, but a destination needs nodes with that label"),
        ]
    );
}

/// Local storage: a hostPath volume, a claim bound to a `local`
/// PersistentVolume; an emptyDir is neither data nor local.
#[test]
fn local_volume_rules() {
    let text = "\
kind: Deployment
metadata: {name: logs}
spec:
  template:
    spec:
      volumes: [{name: var-log, hostPath: {path: /var/log}}, {name: tmp, emptyDir: {}}]
      containers: [{name: c, resources: {requests: {cpu: 1, memory: 1Gi}}}]
---
kind: Deployment
metadata: {name: db}
spec:
  template:
    spec:
      volumes: [{name: data, persistentVolumeClaim: {claimName: db-data}}]
      containers: [{name: c, resources: {requests: {cpu: 1, memory: 1Gi}}}]
---
kind: PersistentVolumeClaim
metadata: {name: db-data}
spec: {volumeName: pv-node-3, resources: {requests: {storage: 20Gi}}}
---
kind: PersistentVolume
metadata: {name: pv-node-3}
spec: {local: {path: /mnt/disks/ssd1}, capacity: {storage: 20Gi}}
---
kind: Deployment
metadata: {name: scratch}
spec:
  template:
    spec:
      volumes: [{name: tmp, emptyDir: {}}]
      containers: [{name: c, resources: {requests: {cpu: 1, memory: 1Gi}}}]
";
    let i = import_text(text);
    let local: Vec<(&str, bool, f64)> = i
        .services
        .iter()
        .map(|s| (s.id.as_str(), s.local_volumes, s.data_gb))
        .collect();
    assert_eq!(
        local,
        [
            ("db", true, 20.0 * 1073741824.0 / 1e9),
            ("logs", true, 0.0),
            ("scratch", false, 0.0)
        ]
    );
}

/// Claims bound as Kubernetes binds them: by `claimRef` on the volume, by
/// the claims a StatefulSet made from its template, by the storage class's
/// provisioner, by the default class when a claim names none, and, for a
/// claim not bound yet, by the free volumes of its class. A claim on a
/// network volume stays movable.
#[test]
fn claims_bind_the_way_kubernetes_binds_them() {
    let deployment = |name: &str, claim: &str| {
        format!(
            "kind: Deployment\nmetadata: {{name: {name}}}\nspec:\n  template:\n    spec:\n      volumes: [{{name: d, persistentVolumeClaim: {{claimName: {claim}}}}}]\n      containers: [{{name: c, resources: {{requests: {{cpu: 1, memory: 1Gi}}}}}}]\n---\n"
        )
    };
    let mut text = String::new();
    // Bound through the volume's claimRef (the claim has no volumeName).
    text += &deployment("by-ref", "ref-data");
    text += "kind: PersistentVolumeClaim\nmetadata: {name: ref-data}\nspec: {storageClassName: '', resources: {requests: {storage: 1Gi}}}\n---\n";
    text += "kind: PersistentVolume\nmetadata: {name: pv-ssd-2}\nspec: {local: {path: /mnt/ssd}, claimRef: {name: ref-data, namespace: default}}\n---\n";
    // A class whose provisioner makes node-local volumes.
    text += &deployment("by-provisioner", "fast-data");
    text += "kind: PersistentVolumeClaim\nmetadata: {name: fast-data}\nspec: {storageClassName: fast, resources: {requests: {storage: 1Gi}}}\n---\n";
    text += "kind: StorageClass\nmetadata: {name: fast}\nprovisioner: rancher.io/local-path\n---\n";
    // No class named: the default one (k3s's local-path).
    text += &deployment("by-default-class", "plain-data");
    text += "kind: PersistentVolumeClaim\nmetadata: {name: plain-data}\nspec: {resources: {requests: {storage: 1Gi}}}\n---\n";
    text += "kind: StorageClass\nmetadata: {name: local-path, annotations: {storageclass.kubernetes.io/is-default-class: 'true'}}\nprovisioner: rancher.io/local-path\n---\n";
    // Not bound yet; every free volume of its class is a local one.
    text += &deployment("unbound", "wait-data");
    text += "kind: PersistentVolumeClaim\nmetadata: {name: wait-data}\nspec: {storageClassName: disks, resources: {requests: {storage: 1Gi}}}\n---\n";
    text += "kind: StorageClass\nmetadata: {name: disks}\nprovisioner: kubernetes.io/no-provisioner\n---\n";
    text += "kind: PersistentVolume\nmetadata: {name: pv-disk-1}\nspec: {storageClassName: disks, local: {path: /mnt/d1}}\n---\n";
    text += "kind: PersistentVolume\nmetadata: {name: pv-disk-2}\nspec: {storageClassName: disks, hostPath: {path: /mnt/d2}}\n---\n";
    // A StatefulSet whose claim from its template is bound to a local
    // volume: `data-db-0`.
    text += "kind: StatefulSet\nmetadata: {name: db}\nspec:\n  replicas: 1\n  volumeClaimTemplates: [{metadata: {name: data}, spec: {storageClassName: disks, resources: {requests: {storage: 1Gi}}}}]\n  template:\n    spec:\n      containers: [{name: c, resources: {requests: {cpu: 1, memory: 1Gi}}}]\n---\n";
    text += "kind: PersistentVolumeClaim\nmetadata: {name: data-db-0}\nspec: {storageClassName: disks, volumeName: pv-disk-0, resources: {requests: {storage: 1Gi}}}\n---\n";
    text += "kind: PersistentVolume\nmetadata: {name: pv-disk-0}\nspec: {storageClassName: disks, local: {path: /mnt/d0}, claimRef: {name: data-db-0, namespace: default}}\n---\n";
    // A network volume, bound by claimRef: movable.
    text += &deployment("on-nfs", "nfs-data");
    text += "kind: PersistentVolumeClaim\nmetadata: {name: nfs-data}\nspec: {storageClassName: nfs, resources: {requests: {storage: 1Gi}}}\n---\n";
    text += "kind: PersistentVolume\nmetadata: {name: pv-nfs}\nspec: {storageClassName: nfs, nfs: {server: nas, path: /x}, claimRef: {name: nfs-data, namespace: default}}\n";
    let i = import_text(&text);
    let local: Vec<(&str, bool)> = i
        .services
        .iter()
        .map(|s| (s.id.as_str(), s.local_volumes))
        .collect();
    assert_eq!(
        local,
        [
            ("by-default-class", true),
            ("by-provisioner", true),
            ("by-ref", true),
            ("on-nfs", false),
            ("unbound", true),
            ("db", true),
        ]
    );
    let why: Vec<String> = i
        .notes
        .iter()
        .filter(|n| n.code == NoteCode::LocalVolumes)
        .map(|n| format!("{}: {}", n.service.as_deref().unwrap_or("-"), n.message))
        .collect();
    assert_eq!(
        why,
        [
            "by-default-class: claim plain-data: storage class \"local-path\" is node-local",
            "by-provisioner: claim fast-data: storage class \"fast\" provisions node-local volumes (rancher.io/local-path)",
            "by-ref: claim ref-data: bound to PersistentVolume pv-ssd-2, a local volume",
            "unbound: claim wait-data: not bound yet, and every free PersistentVolume of storage class \"disks\" is a local or hostPath volume",
            "db: volume claim template data: bound to PersistentVolume pv-disk-0, a local volume",
        ]
    );
}

/// `berth import kubernetes` end to end: the report on stderr, the merged
/// estate on stdout (or --output), exit 1 with every error otherwise.
#[test]
fn cli_import_kubernetes() {
    let dir = std::env::temp_dir().join(format!("berth-k8s-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let estate_path = dir.join("estate.json");
    std::fs::write(&estate_path, estate().to_string()).unwrap();
    let (_, ob) = fixture("online-boutique.yaml");
    let manifest = dir.join("ob.yaml");
    std::fs::write(&manifest, &ob).unwrap();
    let berth = |args: &[&str]| {
        Command::new(env!("CARGO_BIN_EXE_berth"))
            .args(args)
            .output()
            .unwrap()
    };
    let (e, m) = (estate_path.to_str().unwrap(), manifest.to_str().unwrap());
    let o = berth(&["import", "kubernetes", "--cluster", "c-par", "--into", e, m]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let err = String::from_utf8(o.stderr).unwrap();
    assert!(
        err.starts_with("kubernetes import into cluster c-par: 12 services — 12 added"),
        "{err}"
    );
    let out: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(out["services"].as_array().unwrap().len(), 13);
    load(&out.to_string(), Format::Json).unwrap();

    let merged_path = dir.join("merged.json");
    let mp = merged_path.to_str().unwrap();
    let o = berth(&[
        "import",
        "kubernetes",
        "--cluster",
        "c-par",
        "--into",
        e,
        "--output",
        mp,
        m,
    ]);
    assert!(o.status.success());
    assert!(o.stdout.is_empty());
    let again = berth(&[
        "import",
        "kubernetes",
        "--cluster",
        "c-par",
        "--into",
        mp,
        m,
    ]);
    assert!(String::from_utf8_lossy(&again.stderr)
        .contains("0 added, 0 changed, 0 removed, 12 unchanged"));

    let bad = dir.join("bad.yaml");
    std::fs::write(&bad, ob.replace("cpu: 100m", "cpu: 100 m")).unwrap();
    let o = berth(&[
        "import",
        "kubernetes",
        "--cluster",
        "c-par",
        "--into",
        e,
        bad.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(1));
    assert!(o.stdout.is_empty());
    let err = String::from_utf8(o.stderr).unwrap();
    // One error per `cpu: 100m` in the file.
    let n = ob.matches("cpu: 100m").count();
    assert!(
        err.starts_with(&format!("nothing imported: {n} errors")),
        "{err}"
    );
    assert!(err.contains("bad.yaml: document 1: Deployment frontend: /spec/template/spec/containers/0/resources/requests/cpu: invalid quantity \"100 m\": it contains whitespace"), "{err}");
    let o = berth(&[
        "import",
        "kubernetes",
        "--cluster",
        "c-nope",
        "--into",
        e,
        m,
    ]);
    assert_eq!(o.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&o.stderr).contains("cluster \"c-nope\" is not in the estate"));
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A total beyond what an estate accepts (10¹² cores) is refused at its
/// object, not by the loader after the merge.
#[test]
fn absurd_totals_are_refused_at_the_object() {
    let text = "kind: Deployment\nmetadata: {name: big}\nspec:\n  replicas: 1000000000000\n  template:\n    spec:\n      containers: [{name: c, resources: {requests: {cpu: 2, memory: 1Ki}}}]\n";
    let e = parse(
        &[Input {
            name: "big.yaml",
            text,
        }],
        Options::default(),
    )
    .unwrap_err();
    let lines: Vec<String> = e.iter().map(|e| e.to_string()).collect();
    assert_eq!(
        lines,
        ["big.yaml: document 1: Deployment big: the service's cpu would be 2000000000000, more than an estate accepts (1e12): a typo in a quantity or in replicas?"]
    );
}

// ---- Variables, addresses, namespaces and duplicates (issue 31) ----------

/// `server/tests/fixtures/kubernetes/variables.yaml`: one small manifest
/// per variable and address rule, no namespace named.
const VARIABLES: &str = include_str!("fixtures/kubernetes/variables.yaml");

fn parse_texts(files: &[(&str, &str)], options: Options) -> Result<Imported, Vec<String>> {
    let inputs: Vec<Input> = files
        .iter()
        .map(|&(name, text)| Input { name, text })
        .collect();
    parse(&inputs, options).map_err(|e| e.iter().map(|e| e.to_string()).collect())
}

fn skipping() -> Options {
    Options {
        skip_invalid: true,
        ..Options::default()
    }
}

/// `(service, message)` of the notes with this code.
fn notes_of(i: &Imported, code: NoteCode) -> Vec<(String, String)> {
    i.notes
        .iter()
        .filter(|n| n.code == code)
        .map(|n| (n.service.clone().unwrap_or_default(), n.message.clone()))
        .collect()
}

fn pairs(list: &[(&str, &str)]) -> BTreeSet<(String, String)> {
    list.iter()
        .map(|(a, b)| (a.to_string(), b.to_string()))
        .collect()
}

/// Bank of Anthos: addresses come from ConfigMaps through `envFrom` (the
/// frontend's five `*_API_ADDR` in `service-api-config`, which
/// ledgerwriter reads too, so it gets the four that are not itself; the ledger
/// services' `SPRING_DATASOURCE_URL`, a JDBC URL, in `ledger-db-config`;
/// the accounts services' `ACCOUNTS_DB_URI`, a PostgreSQL URL with a
/// user and password, in `accounts-db-config`), the databases are
/// StatefulSets behind Services selecting five labels each, and the
/// load generator calls the frontend by `FRONTEND_ADDR=frontend:80`. The
/// databases read their own ConfigMaps too, which name themselves: no
/// flow to itself. The frontend's optional `oauth-config` keys are in no
/// ConfigMap of the input: they set nothing, as in Kubernetes.
#[test]
fn bank_of_anthos_edges_from_config_maps_and_jdbc() {
    let i = import(&["bank-of-anthos.yaml"]);
    let ids: BTreeSet<&str> = i.services.iter().map(|s| s.id.as_str()).collect();
    assert_eq!(
        ids,
        BTreeSet::from([
            "accounts-db",
            "balancereader",
            "contacts",
            "frontend",
            "ledger-db",
            "ledgerwriter",
            "loadgenerator",
            "transactionhistory",
            "userservice"
        ])
    );
    let kinds: Vec<&str> = i
        .services
        .iter()
        .filter(|s| s.key.contains("/StatefulSet/"))
        .map(|s| s.id.as_str())
        .collect();
    assert_eq!(kinds, ["accounts-db", "ledger-db"]);
    // One replica each; 100m everywhere but userservice's 260m; memory
    // 128 + 256 + 64 + 64 + 512 + 256 + 512 + 256 + 128 MiB. Only
    // emptyDir volumes: no data, nothing pinned.
    let cpu: f64 = i.services.iter().map(|s| s.cpu.unwrap()).sum();
    let mem: f64 = i.services.iter().map(|s| s.memory_gib.unwrap()).sum();
    assert!((cpu - 1.06).abs() < 1e-9, "{cpu}");
    assert_eq!(mem, 2176.0 * MI);
    assert!(i.services.iter().all(|s| s.can_move() && s.data_gb == 0.0));
    assert_eq!(
        edges(&i),
        pairs(&[
            ("frontend", "balancereader"),
            ("frontend", "contacts"),
            ("frontend", "ledgerwriter"),
            ("frontend", "transactionhistory"),
            ("frontend", "userservice"),
            ("ledgerwriter", "balancereader"),
            ("ledgerwriter", "contacts"),
            ("ledgerwriter", "transactionhistory"),
            ("ledgerwriter", "userservice"),
            ("ledgerwriter", "ledger-db"),
            ("balancereader", "ledger-db"),
            ("transactionhistory", "ledger-db"),
            ("contacts", "accounts-db"),
            ("userservice", "accounts-db"),
            ("loadgenerator", "frontend"),
        ])
    );
    let source = |from: &str, to: &str| {
        let key = |id: &str| i.service(id).unwrap().key.clone();
        let (from, to) = (key(from), key(to));
        i.flows
            .iter()
            .find(|f| f.from == from && f.to == to)
            .unwrap()
            .source
            .clone()
    };
    assert_eq!(
        source("balancereader", "ledger-db"),
        "kubernetes:env/SPRING_DATASOURCE_URL"
    );
    assert_eq!(
        source("userservice", "accounts-db"),
        "kubernetes:env/ACCOUNTS_DB_URI"
    );
    assert_eq!(
        source("frontend", "ledgerwriter"),
        "kubernetes:env/TRANSACTIONS_API_ADDR"
    );
    assert_eq!(
        notes_of(&i, NoteCode::UnresolvedAddress),
        Vec::<(String, String)>::new()
    );
}

/// `$(VAR)` expansion, Service links, `$$` and unresolved references, and
/// connection strings, on `variables.yaml` (every rule one workload).
#[test]
fn variables_expand_as_kubernetes_expands_them() {
    let i = import_text(VARIABLES);
    assert_eq!(
        edges(&i),
        pairs(&[
            // http://$(OTEL_COLLECTOR_NAME):4318, defined just before.
            ("frontend", "otel-collector"),
            // http://$(COLLECTOR_NAME):4317, from the ConfigMap (envFrom).
            ("checkout", "otel-collector"),
            // http://$(CART_SERVICE_HOST):$(CART_SERVICE_PORT): the links
            // Kubernetes gives every pod for Service cart.
            ("checkout", "cart"),
            // Host=orders-db;Port=5432;…
            ("reports", "orders-db"),
            // Server=tcp:mssql,1433;…
            ("reports", "mssql"),
            // jdbc:postgresql://ledger-db:5432/ledger
            ("reports", "ledger-db"),
            // mongodb://…@mongo-a:27017,mongo-b:27017/…
            ("reports", "mongo-a"),
            ("reports", "mongo-b"),
            // host=pg port=5432 dbname=reports (libpq)
            ("reports", "pg"),
        ])
    );
    let source = |from: &str, to: &str| {
        let key = |id: &str| i.service(id).unwrap().key.clone();
        let (from, to) = (key(from), key(to));
        i.flows
            .iter()
            .find(|f| f.from == from && f.to == to)
            .unwrap()
            .source
            .clone()
    };
    assert_eq!(
        source("frontend", "otel-collector"),
        "kubernetes:env/OTEL_EXPORTER_OTLP_ENDPOINT"
    );
    assert_eq!(source("checkout", "cart"), "kubernetes:env/CART_URL");
    assert_eq!(
        source("reports", "orders-db"),
        "kubernetes:env/ConnectionStrings__Orders"
    );
    assert_eq!(source("reports", "pg"), "kubernetes:env/PGSERVICE");
    // The two references Kubernetes leaves as written, each said once;
    // `$$(EMAIL_NAME)` is an escape, not a reference: no note, no flow.
    assert_eq!(
        notes_of(&i, NoteCode::UnresolvedAddress),
        [
            (
                "checkout".to_string(),
                "CART_ADDR=$(CART_NAME):7070: $(CART_NAME) is not defined before it in container checkout, and Kubernetes leaves an undefined reference as written: it names no service".to_string()
            ),
            (
                "checkout".to_string(),
                "DB_URL=postgres://$(DB_HOST):5432/orders: $(DB_HOST) comes from Secret checkout-db, which the importer does not read".to_string()
            ),
        ]
    );
}

/// Each variable rule alone, on a minimal manifest: what Kubernetes sets
/// decides the edge.
#[test]
fn each_variable_rule_alone() {
    let one = |env: &str| {
        let text = format!(
            "kind: Service\nmetadata: {{name: db}}\nspec: {{selector: {{app: db}}, ports: [{{port: 5432}}]}}\n---\n\
             kind: Deployment\nmetadata: {{name: db}}\nspec:\n  template:\n    metadata: {{labels: {{app: db}}}}\n    spec:\n      containers: [{{name: db, resources: {{requests: {{cpu: 1, memory: 1Gi}}}}}}]\n---\n\
             kind: ConfigMap\nmetadata: {{name: cm}}\ndata: {{DB_NAME: db, DB_REF: $(DB_NAME)}}\n---\n\
             kind: Deployment\nmetadata: {{name: app}}\nspec:\n  template:\n    spec:\n      {env}\n"
        );
        let i = import_text(&text);
        let unresolved: Vec<String> = notes_of(&i, NoteCode::UnresolvedAddress)
            .into_iter()
            .map(|(_, m)| m)
            .collect();
        (edges(&i).len(), unresolved)
    };
    let c = |env: &str| {
        format!(
            "containers: [{{name: app, resources: {{requests: {{cpu: 1, memory: 1Gi}}}}, {env}}}]"
        )
    };
    // A literal reference, defined before: one edge.
    assert_eq!(
        one(&c(
            "env: [{name: N, value: db}, {name: DB_URL, value: 'postgres://$(N):5432'}]"
        )),
        (1, vec![])
    );
    // Defined after: left as written, noted, no edge.
    let (n, notes) = one(&c(
        "env: [{name: DB_URL, value: 'postgres://$(N):5432'}, {name: N, value: db}]",
    ));
    assert_eq!(n, 0);
    assert_eq!(notes, ["DB_URL=postgres://$(N):5432: $(N) is not defined before it in container app, and Kubernetes leaves an undefined reference as written: it names no service"]);
    // From a ConfigMap key (valueFrom) and from envFrom with a prefix.
    assert_eq!(
        one(&c("env: [{name: N, valueFrom: {configMapKeyRef: {name: cm, key: DB_NAME}}}, {name: DB_URL, value: 'postgres://$(N):5432'}]")),
        (1, vec![])
    );
    assert_eq!(
        one(&c("envFrom: [{prefix: X_, configMapRef: {name: cm}}], env: [{name: DB_URL, value: 'postgres://$(X_DB_NAME):5432'}]")),
        (1, vec![])
    );
    // A ConfigMap value is not expanded (Kubernetes expands only `value`):
    // DB_REF is the text `$(DB_NAME)`, and a reference to it gets that text.
    let (n, notes) = one(&c(
        "envFrom: [{configMapRef: {name: cm}}], env: [{name: DB_HOST, value: '$(DB_REF)'}]",
    ));
    assert_eq!(n, 0);
    assert!(notes.is_empty(), "{notes:?}");
    // `$$` escapes; `$$$(N)` is `$` and then N's value.
    assert_eq!(
        one(&c(
            "env: [{name: N, value: db}, {name: DB_URL, value: 'postgres://$$(N):5432'}]"
        )),
        (0, vec![])
    );
    assert_eq!(
        one(&c(
            "env: [{name: N, value: db}, {name: DB_URL, value: 'postgres://u:p$$$(N)@$(N):5432'}]"
        )),
        (1, vec![])
    );
    // A later definition replaces an earlier one; the reference sees the
    // value it had when the referring variable was defined.
    assert_eq!(
        one(&c("env: [{name: N, value: nothing}, {name: N, value: db}, {name: DB_URL, value: 'postgres://$(N):5432'}]")),
        (1, vec![])
    );
    // Service links: DB_SERVICE_HOST and DB_SERVICE_PORT, unless the pod
    // turns them off.
    assert_eq!(
        one(&c(
            "env: [{name: DB_URL, value: 'postgres://$(DB_SERVICE_HOST):$(DB_SERVICE_PORT)'}]"
        )),
        (1, vec![])
    );
    let (n, notes) = one(&format!(
        "enableServiceLinks: false\n      {}",
        c("env: [{name: DB_URL, value: 'postgres://$(DB_SERVICE_HOST):5432'}]")
    ));
    assert_eq!(n, 0);
    assert_eq!(notes.len(), 1, "{notes:?}");
    // From the pod's namespace (fieldRef) and from an envFrom Secret.
    assert_eq!(
        one(&c("env: [{name: NS, valueFrom: {fieldRef: {fieldPath: metadata.namespace}}}, {name: DB_URL, value: 'postgres://db.$(NS):5432'}]")),
        (1, vec![])
    );
    let (n, notes) = one(&c(
        "envFrom: [{secretRef: {name: creds}}], env: [{name: DB_URL, value: 'postgres://$(PGHOST):5432'}]",
    ));
    assert_eq!(n, 0);
    assert_eq!(notes, ["DB_URL=postgres://$(PGHOST):5432: $(PGHOST) is not defined before it in container app (or only in Secret creds, which the importer cannot read), and Kubernetes leaves an undefined reference as written: it names no service"]);
    let (n, notes) = one(&c(
        "env: [{name: IP, valueFrom: {fieldRef: {fieldPath: status.hostIP}}}, {name: AGENT_ADDR, value: '$(IP):4317'}]",
    ));
    assert_eq!(n, 0);
    assert_eq!(
        notes,
        ["AGENT_ADDR=$(IP):4317: $(IP) is set from the pod's status.hostIP when it runs"]
    );
}

/// `--namespace` (option `namespace`) puts objects that name no namespace
/// in it, as `kubectl apply -n` does: addresses resolve there, the
/// namespace is the owner and in the provenance key. Objects that name
/// one keep it.
#[test]
fn namespace_option_gives_manifests_their_namespace() {
    let text = "\
kind: Deployment
metadata: {name: grafana, namespace: otel-demo}
spec:
  template:
    metadata: {labels: {app: grafana}}
    spec: {containers: [{name: g, resources: {requests: {cpu: 1, memory: 1Gi}}}]}
---
kind: Deployment
metadata: {name: frontend}
spec:
  template:
    spec:
      containers:
      - name: f
        resources: {requests: {cpu: 1, memory: 1Gi}}
        env: [{name: GRAFANA_URL, value: 'http://grafana:3000'}]
";
    let without = import_text(text);
    assert!(edges(&without).is_empty());
    assert_eq!(
        notes_of(&without, NoteCode::UnresolvedAddress),
        [(
            "frontend".to_string(),
            "GRAFANA_URL=http://grafana:3000: grafana (namespace default) is neither a Service nor a workload in the input; no flow".to_string()
        )]
    );
    let with = parse_texts(
        &[("demo.yaml", text)],
        Options {
            namespace: Some("otel-demo".into()),
            ..Options::default()
        },
    )
    .unwrap();
    assert_eq!(edges(&with), pairs(&[("frontend", "grafana")]));
    assert!(notes_of(&with, NoteCode::UnresolvedAddress).is_empty());
    let frontend = with.service("frontend").unwrap();
    assert_eq!(frontend.key, "otel-demo/Deployment/frontend");
    assert_eq!(frontend.owner.as_deref(), Some("otel-demo"));
    // Without it, a manifest naming none is in `default`, as the
    // provenance key says (docs/estate-format.md).
    assert_eq!(
        without.service("frontend").unwrap().key,
        "default/Deployment/frontend"
    );
    let (e, _) = merged(&estate(), "c-par", &with);
    assert!(
        e["services"]
            .as_array()
            .unwrap()
            .iter()
            .any(|s| s["source"] == "kubernetes:c-par/otel-demo/Deployment/frontend"),
        "{e}"
    );
}

/// The same object twice (in one file or two): without --skip-invalid an
/// error at the earlier one, naming the later; with it, the later wins,
/// as `kubectl apply` of the same files would leave it, and the report
/// says which was dropped.
#[test]
fn duplicates_the_later_one_wins() {
    let dep = |replicas: u32| {
        format!("kind: Deployment\nmetadata: {{name: api, namespace: shop}}\nspec:\n  replicas: {replicas}\n  template:\n    spec: {{containers: [{{name: a, resources: {{requests: {{cpu: 100m, memory: 1Gi}}}}}}]}}\n")
    };
    let a = format!("{}---\n{}", dep(1), dep(2));
    let b = dep(3);
    let files = [("a.yaml", a.as_str()), ("b.yaml", b.as_str())];
    let errors = parse_texts(&files, Options::default()).unwrap_err();
    assert_eq!(
        errors,
        [
            "a.yaml: document 1: Deployment shop/api: duplicate Deployment shop/api: dropped, the later one in b.yaml document 1 replaces it, as kubectl apply would",
            "a.yaml: document 2: Deployment shop/api: duplicate Deployment shop/api: dropped, the later one in b.yaml document 1 replaces it, as kubectl apply would",
        ]
    );
    let i = parse_texts(&files, skipping()).unwrap();
    assert_eq!(i.services.len(), 1);
    assert_eq!(i.services[0].cpu, Some(0.3), "b.yaml's 3 replicas");
    assert_eq!(i.skipped.len(), 2);
    assert!(i.complete, "a duplicate leaves nothing unknown");
    let (_, report) = merged(&estate(), "c-par", &i);
    let text = report.text();
    assert!(
        text.contains("Skipped (could not be understood):\n  a.yaml: document 1: Deployment shop/api: duplicate Deployment shop/api: dropped, the later one in b.yaml document 1 replaces it, as kubectl apply would\n"),
        "{text}"
    );
    // Within one file, the later document wins.
    let i = parse_texts(&[("a.yaml", a.as_str())], skipping()).unwrap();
    assert_eq!(i.services[0].cpu, Some(0.2));
}

/// A note never says "no flow" where the estate keeps one: after a YAML
/// error (the rest of the file unread) and after a skipped workload, the
/// flow an earlier import wrote is kept, and the note says so.
#[test]
fn notes_agree_with_what_the_estate_keeps() {
    let app = "kind: Deployment\nmetadata: {name: app}\nspec:\n  template:\n    spec:\n      containers: [{name: a, resources: {requests: {cpu: 1, memory: 1Gi}}, env: [{name: DB_ADDR, value: 'db:5432'}]}]\n";
    let db = |replicas: &str| {
        format!("kind: Deployment\nmetadata: {{name: db}}\nspec:\n  replicas: {replicas}\n  template:\n    metadata: {{labels: {{app: db}}}}\n    spec:\n      containers: [{{name: d, resources: {{requests: {{cpu: 1, memory: 1Gi}}}}}}]\n")
    };
    let svc = "kind: Service\nmetadata: {name: db}\nspec: {selector: {app: db}}\n";
    let whole = format!("{app}---\n{svc}---\n{}", db("1"));
    let (e1, r1) = merged(&estate(), "c-par", &import_text(&whole));
    assert_eq!(r1.flows_added.len(), 1);
    let has_flow = |e: &Value| {
        e["flows"]
            .as_array()
            .unwrap()
            .iter()
            .any(|f| f["from"] == "app" && f["to"] == "db")
    };

    // A YAML error before db's Deployment: the rest of the file is unread.
    let broken = format!("{app}---\n{svc}---\nkind: [\n---\n{}", db("1"));
    let i = parse_texts(&[("shop.yaml", &broken)], skipping()).unwrap();
    assert!(!i.complete);
    let (e2, r2) = merged(&e1, "c-par", &i);
    assert!(has_flow(&e2), "an incomplete input removes no flow");
    assert!(r2.flows_removed.is_empty());
    assert_eq!(
        notes_of(&i, NoteCode::UnresolvedAddress),
        [(
            "app".to_string(),
            "DB_ADDR=db:5432: Service default/db selects no workload in what could be read; part of the input could not be read, so the flows an earlier import wrote are kept".to_string()
        )]
    );

    // db's Deployment cannot be read: skipped, its entry and flows kept.
    let bad = format!("{app}---\n{svc}---\n{}", db("two"));
    let i = parse_texts(&[("shop.yaml", &bad)], skipping()).unwrap();
    assert!(i.complete);
    let (e3, r3) = merged(&e1, "c-par", &i);
    assert!(has_flow(&e3), "a skipped workload keeps its flows");
    assert_eq!(r3.kept, ["db"]);
    assert_eq!(
        notes_of(&i, NoteCode::UnresolvedAddress),
        [(
            "app".to_string(),
            "DB_ADDR=db:5432: Deployment db could not be read (see Skipped): its flows are kept as an earlier import wrote them".to_string()
        )]
    );

    // The Service cannot be read and db imports: the name still finds the
    // workload of that name, so the flow is derived, no note.
    let bad_svc = format!(
        "{app}---\nkind: Service\nmetadata: {{name: db}}\nspec: {{selector: [db]}}\n---\n{}",
        db("1")
    );
    let i = parse_texts(&[("shop.yaml", &bad_svc)], skipping()).unwrap();
    assert_eq!(edges(&i), pairs(&[("app", "db")]));
    assert!(notes_of(&i, NoteCode::UnresolvedAddress).is_empty());

    // Complete input, nothing named db: the flow goes, and the note says so.
    let (e4, r4) = merged(&e1, "c-par", &import_text(app));
    assert!(!has_flow(&e4));
    assert_eq!(r4.flows_removed.len(), 1);
}

/// "1 core", not "1 cores", in the report and in a DaemonSet's note.
#[test]
fn one_core_is_singular() {
    let text = "kind: Deployment\nmetadata: {name: one}\nspec:\n  template:\n    spec: {containers: [{name: c, resources: {requests: {cpu: 1, memory: 1Gi}}}]}\n---\nkind: DaemonSet\nmetadata: {name: agent}\nspec:\n  template:\n    spec: {containers: [{name: c, resources: {requests: {cpu: 1, memory: 1Gi}}}]}\n";
    let i = import_text(text);
    let daemon = notes_of(&i, NoteCode::DaemonSet);
    assert_eq!(daemon.len(), 1);
    assert!(
        daemon[0]
            .1
            .starts_with("one pod per node asking 1 core and 1 GiB per pod"),
        "{daemon:?}"
    );
    let (_, r) = merged(&estate(), "c-par", &i);
    let text = r.text();
    assert!(
        text.starts_with("kubernetes import into cluster c-par: 2 services — 2 added"),
        "{text}"
    );
    assert!(
        text.contains("Known requests: 1 core, 1 GiB; 1 service with an unknown request"),
        "{text}"
    );
    let only = "kind: Deployment\nmetadata: {name: one}\nspec:\n  template:\n    spec: {containers: [{name: c, resources: {requests: {cpu: 1, memory: 1Gi}}}]}\n";
    let (_, r) = merged(&estate(), "c-par", &import_text(only));
    assert!(
        r.text()
            .starts_with("kubernetes import into cluster c-par: 1 service — 1 added"),
        "{}",
        r.text()
    );
}

/// `--namespace` on the command line: checked, and refused with the API
/// (objects read from it name theirs).
#[test]
fn cli_namespace_flag() {
    let dir = tempfile::tempdir().unwrap();
    let estate_path = dir.path().join("estate.json");
    std::fs::write(&estate_path, estate().to_string()).unwrap();
    let manifest = dir.path().join("variables.yaml");
    std::fs::write(&manifest, VARIABLES).unwrap();
    let berth = |extra: &[&str]| {
        Command::new(env!("CARGO_BIN_EXE_berth"))
            .args(["import", "kubernetes", "--cluster", "c-par", "--into"])
            .arg(&estate_path)
            .args(extra)
            .output()
            .unwrap()
    };
    let m = manifest.to_str().unwrap();
    let o = berth(&["--namespace", "otel-demo", m]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let out: Value = serde_json::from_slice(&o.stdout).unwrap();
    let frontend = out["services"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["id"] == "frontend")
        .unwrap();
    assert_eq!(
        frontend["source"],
        "kubernetes:c-par/otel-demo/Deployment/frontend"
    );
    assert_eq!(frontend["owner"], "otel-demo");
    assert_eq!(out["flows"].as_array().unwrap().len(), 9);

    let o = berth(&["--namespace", "Otel_Demo", m]);
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("\"Otel_Demo\" is not a namespace name: 1 to 63 lower-case letters, digits and '-', starting and ending with a letter or digit"),
        "{err}"
    );
    let o = berth(&["--namespace", "otel-demo", "--api"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("--namespace"),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
}
