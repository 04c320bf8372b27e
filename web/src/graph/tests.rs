use std::time::Instant;

use berth_engine::estate::{load, Format};

use super::route::crosses;
use super::*;

const SAMPLE: &str = include_str!("../../../examples/estates/sample.json");

fn sample() -> Estate {
    load(SAMPLE, Format::Json).unwrap()
}

fn inside(a: &Rect, outer: &Rect) -> bool {
    a.x >= outer.x
        && a.y >= outer.y
        && a.x + a.w <= outer.x + outer.w + 1e-9
        && a.y + a.h <= outer.y + outer.h + 1e-9
}

/// Online Boutique (12 services) in one Frankfurt cluster and Sock Shop
/// (14) in Dublin, with their real call graphs, weights falling along
/// the calls; a third, empty cluster.
pub(super) fn boutique_and_sock_shop() -> Estate {
    let fact = |v: f64| serde_json::json!({"value": v, "class": "measured", "source": "test", "observed_at": "2026-11-30T04:00:00Z"});
    let boutique = [
        "loadgenerator",
        "frontend",
        "adservice",
        "cartservice",
        "productcatalogservice",
        "currencyservice",
        "recommendationservice",
        "shippingservice",
        "checkoutservice",
        "emailservice",
        "paymentservice",
        "redis-cart",
    ];
    let sock = [
        "edge-router",
        "front-end",
        "catalogue",
        "catalogue-db",
        "carts",
        "carts-db",
        "orders",
        "orders-db",
        "payment",
        "shipping",
        "queue-master",
        "rabbitmq",
        "user",
        "user-db",
    ];
    let calls = [
        ("loadgenerator", "frontend", 40.0),
        ("frontend", "adservice", 6.0),
        ("frontend", "cartservice", 12.0),
        ("frontend", "productcatalogservice", 30.0),
        ("frontend", "currencyservice", 25.0),
        ("frontend", "recommendationservice", 9.0),
        ("frontend", "shippingservice", 4.0),
        ("frontend", "checkoutservice", 3.0),
        ("checkoutservice", "cartservice", 3.0),
        ("checkoutservice", "productcatalogservice", 3.0),
        ("checkoutservice", "currencyservice", 3.0),
        ("checkoutservice", "shippingservice", 3.0),
        ("checkoutservice", "emailservice", 2.0),
        ("checkoutservice", "paymentservice", 2.0),
        ("recommendationservice", "productcatalogservice", 9.0),
        ("cartservice", "redis-cart", 14.0),
        ("edge-router", "front-end", 20.0),
        ("front-end", "catalogue", 14.0),
        ("front-end", "carts", 8.0),
        ("front-end", "orders", 3.0),
        ("front-end", "user", 5.0),
        ("catalogue", "catalogue-db", 14.0),
        ("carts", "carts-db", 8.0),
        ("orders", "orders-db", 3.0),
        ("orders", "payment", 3.0),
        ("orders", "shipping", 3.0),
        ("orders", "user", 3.0),
        ("orders", "carts", 3.0),
        ("shipping", "rabbitmq", 3.0),
        ("queue-master", "rabbitmq", 3.0),
        ("user", "user-db", 5.0),
        // The shop's frontend calls the other's catalogue across sites.
        ("frontend", "catalogue", 2.0),
    ];
    let services: Vec<_> = boutique
        .iter()
        .map(|s| (s, "c-fra-1"))
        .chain(sock.iter().map(|s| (s, "c-dub-1")))
        .map(|(s, c)| serde_json::json!({"id": s, "owner": "shop", "cluster": c, "cpu": 0.5, "memory_gib": 1}))
        .collect();
    let flows: Vec<_> = calls
        .iter()
        .map(|(a, b, w)| serde_json::json!({"from": a, "to": b, "weight": fact(*w), "mb_s": fact(w / 4.0)}))
        .collect();
    let cluster = |id: &str, site: &str| {
        serde_json::json!({"id": id, "site": site, "tier": "prod", "trust_zone": "general", "health": "healthy", "cpu_total": 64, "memory_total_gib": 256,
            "cpu_free": fact(20.0), "memory_free_gib": fact(100.0)})
    };
    let doc = serde_json::json!({
        "schema": 1, "name": "shops", "observed_at": "2026-11-30T04:00:00Z",
        "sites": [
            {"id": "dub", "name": "Dublin", "lat": 53.35, "lon": -6.26, "jurisdiction": "eu"},
            {"id": "fra", "name": "Frankfurt", "lat": 50.11, "lon": 8.68, "jurisdiction": "eu"},
        ],
        "clusters": [cluster("c-dub-1", "dub"), cluster("c-fra-1", "fra"), cluster("c-fra-2", "fra")],
        "links": [{"a": "dub", "b": "fra", "rtt_ms": fact(24.0)}],
        "services": services,
        "flows": flows,
    });
    load(&doc.to_string(), Format::Json).unwrap()
}

/// Every box a line must not cross unless it ends in it: sites,
/// clusters, services and titles, with the names of what it may enter.
fn check_routes(l: &Layout, name: &str) {
    let cluster_of = |node: &str| -> String {
        match node.strip_prefix("cluster:") {
            Some(c) => c.to_string(),
            None => l
                .services
                .iter()
                .find(|s| s.id == node)
                .unwrap()
                .cluster
                .clone(),
        }
    };
    let site_of = |c: &str| l.clusters.iter().find(|b| b.id == c).unwrap().site.clone();
    let mut segments = 0;
    for e in &l.edges {
        assert!(e.path.len() >= 2, "{name}: {} — {} has a route", e.a, e.b);
        let (ca, cb) = (cluster_of(&e.a), cluster_of(&e.b));
        let (sa, sb) = (site_of(&ca), site_of(&cb));
        let mut forbidden: Vec<(String, &Rect)> = Vec::new();
        for s in &l.sites {
            forbidden.push((format!("site title {}", s.id), &s.title.rect));
            if s.id != sa && s.id != sb {
                forbidden.push((format!("site {}", s.id), &s.rect));
            }
        }
        for c in &l.clusters {
            if c.expanded {
                forbidden.push((format!("cluster title {}", c.id), &c.title.rect));
            }
            let ends = !c.expanded && (c.id == ca || c.id == cb);
            let holds = (c.id == ca || c.id == cb) && c.expanded;
            if !ends && !holds {
                forbidden.push((format!("cluster {}", c.id), &c.rect));
            }
        }
        for s in &l.services {
            if s.id != e.a && s.id != e.b {
                forbidden.push((format!("service {}", s.id), &s.rect));
            }
        }
        for w in e.path.windows(2) {
            assert!(
                w[0].0 == w[1].0 || w[0].1 == w[1].1,
                "{name}: orthogonal segments"
            );
            segments += 1;
            for (what, r) in &forbidden {
                assert!(
                    !crosses(r, w[0], w[1]),
                    "{name}: {} — {} crosses {what}: {:?}",
                    e.a,
                    e.b,
                    e.path
                );
            }
        }
    }
    eprintln!(
        "{name}: {} lines, {segments} segments, none through a box it does not touch",
        l.edges.len()
    );
}

/// No label (a line's numbers, a title, a service's name) overlaps
/// another, a service or a collapsed cluster; names fit their cells.
fn check_labels(l: &Layout, name: &str) {
    let mut texts: Vec<(String, Rect)> = Vec::new();
    texts.extend(
        l.sites
            .iter()
            .map(|s| (format!("title {}", s.id), s.title.rect.clone())),
    );
    texts.extend(
        l.clusters
            .iter()
            .filter(|c| c.expanded)
            .map(|c| (format!("title {}", c.id), c.title.rect.clone())),
    );
    texts.extend(
        l.services
            .iter()
            .map(|s| (format!("service {}", s.id), s.rect.clone())),
    );
    texts.extend(
        l.clusters
            .iter()
            .filter(|c| !c.expanded)
            .map(|c| (format!("closed {}", c.id), c.rect.clone())),
    );
    texts.extend(
        l.labels
            .iter()
            .map(|x| (format!("label {}", x.text), x.rect.clone())),
    );
    for (i, (a, ra)) in texts.iter().enumerate() {
        for (b, rb) in &texts[i + 1..] {
            assert!(!ra.overlaps(rb), "{name}: {a} overlaps {b}");
        }
    }
    for s in &l.services {
        assert!(
            text_width(&s.label) + 8.0 <= s.rect.w,
            "{name}: {} fits",
            s.label
        );
        assert!(s.rect.h >= FONT + 4.0);
    }
    for c in &l.clusters {
        assert!(
            c.title.rect.x + c.title.rect.w <= c.rect.x + c.rect.w,
            "{name}: title of {} fits",
            c.id
        );
    }
    for x in &l.labels {
        assert!(
            x.rect.x >= 0.0
                && x.rect.x + x.rect.w <= l.width
                && x.rect.y >= 0.0
                && x.rect.y + x.rect.h <= l.height
        );
        assert_eq!(x.text, edge_text(&l.edges[x.edge]));
    }
    // The heaviest labelled first; at most MAX_LABELS.
    assert!(l.labels.len() <= MAX_LABELS);
    eprintln!(
        "{name}: {} of {} lines labelled, no label overlaps another or a box",
        l.labels.len(),
        l.edges.len()
    );
}

#[test]
fn the_sample_is_boxed_by_site_and_cluster_without_overlaps() {
    let doc = sample();
    let open = default_expanded(&doc);
    let l = layout(&doc, &open);
    // 74 services, every cluster small: all expanded, all drawn.
    assert_eq!(l.services.len(), doc.services.len());
    assert_eq!(l.clusters.len(), doc.clusters.len());
    for (i, a) in l.sites.iter().enumerate() {
        for b in &l.sites[i + 1..] {
            assert!(!a.rect.overlaps(&b.rect), "{} and {}", a.id, b.id);
        }
    }
    for (i, a) in l.services.iter().enumerate() {
        let c = l.clusters.iter().find(|c| c.id == a.cluster).unwrap();
        assert!(inside(&a.rect, &c.rect), "{} outside {}", a.id, c.id);
        for b in &l.services[i + 1..] {
            assert!(!a.rect.overlaps(&b.rect), "{} and {}", a.id, b.id);
        }
    }
    for c in &l.clusters {
        let s = l.sites.iter().find(|s| s.id == c.site).unwrap();
        assert!(inside(&c.rect, &s.rect), "{} outside {}", c.id, s.id);
    }
    assert_eq!(l.flows_drawn + l.flows_hidden, doc.flows.len());
    assert!(l.edges.iter().any(|e| e.cross_site));
    assert!(l.edges.iter().any(|e| !e.cross_site));
    // Drawn one unit to a pixel: fits a desktop page, text at 12 px.
    assert!(l.width <= ROW_W && FONT >= 12.0, "{} wide", l.width);
    eprintln!("sample: {:.0} × {:.0}", l.width, l.height);
}

#[test]
fn lines_go_round_the_boxes_they_do_not_touch() {
    let doc = sample();
    let l = layout(&doc, &default_expanded(&doc));
    check_routes(&l, "sample");
    // Closed clusters: lines end at the cluster's node.
    let closed: BTreeSet<String> = ["c-fra-2".to_string(), "c-iad-1".to_string()].into();
    let some: BTreeSet<String> = default_expanded(&doc)
        .difference(&closed)
        .cloned()
        .collect();
    check_routes(&layout(&doc, &some), "sample, two closed");
    check_routes(&layout(&doc, &BTreeSet::new()), "sample, all closed");
    let shops = boutique_and_sock_shop();
    check_routes(
        &layout(&shops, &default_expanded(&shops)),
        "boutique and sock shop",
    );
}

#[test]
fn labels_overlap_nothing_and_the_heaviest_lines_carry_numbers() {
    let doc = sample();
    let l = layout(&doc, &default_expanded(&doc));
    check_labels(&l, "sample");
    assert!(l.labels.len() >= 6, "{} labels", l.labels.len());
    // The heaviest line that has one: "14 req · 38 MB/s".
    let first = &l.labels[0];
    assert!(
        first.text.ends_with(" MB/s") && first.text.contains(" req · "),
        "{}",
        first.text
    );
    let shops = boutique_and_sock_shop();
    let ls = layout(&shops, &default_expanded(&shops));
    check_labels(&ls, "boutique and sock shop");
    assert!(ls.labels.len() >= 6, "{} labels", ls.labels.len());
    check_labels(&layout(&doc, &BTreeSet::new()), "sample, all closed");
}

#[test]
fn selecting_a_service_keeps_its_neighbours_lit_and_dims_the_rest() {
    let shops = boutique_and_sock_shop();
    let l = layout(&shops, &default_expanded(&shops));
    let lit = neighbours(&l, "checkoutservice");
    let want: BTreeSet<String> = [
        "frontend",
        "cartservice",
        "productcatalogservice",
        "currencyservice",
        "shippingservice",
        "emailservice",
        "paymentservice",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    assert_eq!(lit, want);
    // Dimmed: every other service, and every line not at checkout.
    let dimmed = l
        .services
        .iter()
        .filter(|s| s.id != "checkoutservice" && !lit.contains(&s.id))
        .count();
    assert_eq!(dimmed, 26 - 1 - 7);
    assert_eq!(
        l.edges
            .iter()
            .filter(|e| e.a == "checkoutservice" || e.b == "checkoutservice")
            .count(),
        7
    );
}

#[test]
fn moves_are_arrows_from_the_service_to_its_destination_cluster() {
    let shops = boutique_and_sock_shop();
    let l = layout(&shops, &default_expanded(&shops));
    let a = arrows(
        &l,
        [("frontend", "c-fra-1", "c-dub-1"), ("nope", "c-x", "c-y")],
    );
    assert_eq!(a.len(), 1);
    let cell = &l.services.iter().find(|s| s.id == "frontend").unwrap().rect;
    let dest = &l.clusters.iter().find(|c| c.id == "c-dub-1").unwrap().rect;
    let on_side = |r: &Rect, p: (f64, f64)| {
        let e = 1e-6;
        p.0 >= r.x - e
            && p.0 <= r.x + r.w + e
            && p.1 >= r.y - e
            && p.1 <= r.y + r.h + e
            && ((p.0 - r.x).abs() < e
                || (p.0 - r.x - r.w).abs() < e
                || (p.1 - r.y).abs() < e
                || (p.1 - r.y - r.h).abs() < e)
    };
    assert!(on_side(cell, a[0].from), "{:?} on {cell:?}", a[0].from);
    assert!(on_side(dest, a[0].to), "{:?} on {dest:?}", a[0].to);
    // A service in a closed cluster: from its cluster's node.
    let closed = layout(&shops, &BTreeSet::new());
    let a = arrows(&closed, [("frontend", "c-fra-1", "c-dub-1")]);
    let node = &closed
        .clusters
        .iter()
        .find(|c| c.id == "c-fra-1")
        .unwrap()
        .rect;
    assert!(on_side(node, a[0].from));
    assert_eq!(centre_of(&closed, &shops, "frontend"), Some(node.centre()));
}

#[test]
fn a_large_estate_starts_collapsed_stays_bounded_and_is_laid_out_fast() {
    let doc = berth_engine::gen::estate(&berth_engine::gen::Shape::sized(3, 1000, 20));
    let open = default_expanded(&doc);
    assert!(open.is_empty(), "1,000 services start collapsed");
    let t = Instant::now();
    let l = layout(&doc, &open);
    let collapsed_ms = t.elapsed().as_secs_f64() * 1e3;
    assert_eq!(l.services.len(), 0);
    assert_eq!(l.clusters.len(), 20);
    assert!(l.edges.len() <= MAX_EDGES);
    assert_eq!(l.flows_drawn + l.flows_hidden, doc.flows.len());
    check_routes(&l, "1,000 services, closed");
    check_labels(&l, "1,000 services, closed");
    // Opening one cluster draws its services, and only those.
    let first = l.clusters[0].id.clone();
    let one: BTreeSet<String> = [first.clone()].into();
    let t = Instant::now();
    let l1 = layout(&doc, &one);
    let one_ms = t.elapsed().as_secs_f64() * 1e3;
    assert_eq!(l1.services.len(), l.clusters[0].services);
    assert!(l1.services.iter().all(|s| s.cluster == first));
    check_routes(&l1, "1,000 services, one open");
    check_labels(&l1, "1,000 services, one open");
    // Every cluster open: 1,000 cells, 300 routed lines.
    let all: BTreeSet<String> = doc.clusters.iter().map(|c| c.id.clone()).collect();
    let t = Instant::now();
    let la = layout(&doc, &all);
    let all_ms = t.elapsed().as_secs_f64() * 1e3;
    assert_eq!(la.services.len(), 1000);
    check_routes(&la, "1,000 services, all open");
    check_labels(&la, "1,000 services, all open");
    eprintln!(
        "layout of 1,000 services: {collapsed_ms:.1} ms closed ({} lines), {one_ms:.1} ms with one cluster open, {all_ms:.1} ms all open ({} lines, {:.0} × {:.0})",
        l.edges.len(),
        la.edges.len(),
        la.width,
        la.height
    );
    assert!(all_ms < 5_000.0, "{all_ms} ms");
}
