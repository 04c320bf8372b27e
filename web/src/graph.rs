//! The service graph's layout, as Kiali draws it: services boxed by
//! cluster, clusters boxed by site. Pure (document in, boxes and lines
//! out) so it is tested natively; the Estate page draws it as SVG.
//!
//! Readable at any size because what is drawn is bounded, not the estate:
//! a cluster is drawn either expanded (a grid of its services) or
//! collapsed (one node saying how many), flows are summed between what is
//! drawn, and only the heaviest [`MAX_EDGES`] are kept.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::Value;

/// A service cell: room for a 16-character name at 10 px.
pub const CELL_W: f64 = 112.0;
pub const CELL_H: f64 = 16.0;
/// A cluster's title line, and the padding inside its box.
const TITLE_H: f64 = 18.0;
const PAD: f64 = 6.0;
/// A collapsed cluster: one node, its name and its count.
const COLLAPSED_W: f64 = 132.0;
const COLLAPSED_H: f64 = 34.0;
/// Services per row inside an expanded cluster: four keeps a 16-service
/// cluster square-ish and a site column narrow enough to sit beside others.
const COLUMNS: usize = 4;
/// Sites are placed left to right and wrap at this width (the SVG scales
/// to the page; zoom brings any part up close).
const ROW_W: f64 = 1400.0;
/// Lines drawn at most: past a few hundred, lines are a grey mass that
/// says nothing; the side panel lists every flow of a service.
pub const MAX_EDGES: usize = 300;
/// Expanded by default: clusters of at most this many services, in an
/// estate of at most [`EXPAND_ESTATE`] services (larger ones start all
/// collapsed, and a click opens one cluster at a time).
pub const EXPAND_CLUSTER: usize = 16;
pub const EXPAND_ESTATE: usize = 150;

#[derive(Clone, Debug, PartialEq)]
pub struct Rect {
    pub x: f64,
    pub y: f64,
    pub w: f64,
    pub h: f64,
}

impl Rect {
    pub fn centre(&self) -> (f64, f64) {
        (self.x + self.w / 2.0, self.y + self.h / 2.0)
    }
}

#[derive(Clone, Debug, PartialEq)]
pub struct SiteBox {
    pub id: String,
    pub rect: Rect,
}

#[derive(Clone, Debug, PartialEq)]
pub struct ClusterBox {
    pub id: String,
    pub site: String,
    pub rect: Rect,
    pub services: usize,
    pub expanded: bool,
}

#[derive(Clone, Debug, PartialEq)]
pub struct ServiceNode {
    pub id: String,
    pub cluster: String,
    pub rect: Rect,
}

/// A drawn line: summed flow weight between two drawn things (a service,
/// or a collapsed cluster as `cluster:ID`), across sites or not.
#[derive(Clone, Debug, PartialEq)]
pub struct Edge {
    pub a: String,
    pub b: String,
    pub from: (f64, f64),
    pub to: (f64, f64),
    pub weight: f64,
    pub flows: usize,
    pub cross_site: bool,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Layout {
    pub sites: Vec<SiteBox>,
    pub clusters: Vec<ClusterBox>,
    pub services: Vec<ServiceNode>,
    pub edges: Vec<Edge>,
    /// Flows summed into drawn lines, and those left out past
    /// [`MAX_EDGES`] (or inside one collapsed cluster).
    pub flows_drawn: usize,
    pub flows_hidden: usize,
    pub width: f64,
    pub height: f64,
}

fn str_of(v: &Value) -> String {
    v.as_str().unwrap_or_default().to_string()
}

/// Which clusters start expanded.
pub fn default_expanded(doc: &Value) -> BTreeSet<String> {
    let services = doc["services"].as_array().cloned().unwrap_or_default();
    if services.len() > EXPAND_ESTATE {
        return BTreeSet::new();
    }
    let mut count: BTreeMap<String, usize> = BTreeMap::new();
    for s in &services {
        *count.entry(str_of(&s["cluster"])).or_default() += 1;
    }
    count
        .into_iter()
        .filter(|(_, n)| *n <= EXPAND_CLUSTER)
        .map(|(c, _)| c)
        .collect()
}

/// Lay the estate out with `expanded` clusters open.
pub fn layout(doc: &Value, expanded: &BTreeSet<String>) -> Layout {
    let arr = |k: &str| doc[k].as_array().cloned().unwrap_or_default();
    let sites: Vec<String> = {
        let mut v: Vec<String> = arr("sites").iter().map(|s| str_of(&s["id"])).collect();
        v.sort();
        v
    };
    // Clusters by site, services by cluster, each in id order.
    let mut clusters_of: BTreeMap<String, Vec<String>> = BTreeMap::new();
    let mut site_of_cluster: BTreeMap<String, String> = BTreeMap::new();
    for c in arr("clusters") {
        let (id, site) = (str_of(&c["id"]), str_of(&c["site"]));
        clusters_of
            .entry(site.clone())
            .or_default()
            .push(id.clone());
        site_of_cluster.insert(id, site);
    }
    for v in clusters_of.values_mut() {
        v.sort();
    }
    let mut services_of: BTreeMap<String, Vec<String>> = BTreeMap::new();
    let mut cluster_of_service: BTreeMap<String, String> = BTreeMap::new();
    for s in arr("services") {
        let (id, c) = (str_of(&s["id"]), str_of(&s["cluster"]));
        services_of.entry(c.clone()).or_default().push(id.clone());
        cluster_of_service.insert(id, c);
    }
    for v in services_of.values_mut() {
        v.sort();
    }

    let mut out = Layout {
        sites: Vec::new(),
        clusters: Vec::new(),
        services: Vec::new(),
        edges: Vec::new(),
        flows_drawn: 0,
        flows_hidden: 0,
        width: 0.0,
        height: 0.0,
    };
    // Shelf packing: sites left to right, a new shelf past ROW_W.
    let (mut x, mut y, mut shelf_h) = (0.0f64, 0.0f64, 0.0f64);
    const GAP: f64 = 14.0;
    for site in &sites {
        let clusters = clusters_of.get(site).cloned().unwrap_or_default();
        // Size each cluster box first.
        let sized: Vec<(String, usize, bool, f64, f64)> = clusters
            .iter()
            .map(|c| {
                let n = services_of.get(c).map_or(0, Vec::len);
                let open = expanded.contains(c) && n > 0;
                let (w, h) = if open {
                    let cols = n.clamp(1, COLUMNS);
                    let rows = n.div_ceil(cols);
                    (
                        cols as f64 * CELL_W + 2.0 * PAD,
                        TITLE_H + rows as f64 * CELL_H + PAD,
                    )
                } else {
                    (COLLAPSED_W, COLLAPSED_H)
                };
                (c.clone(), n, open, w, h)
            })
            .collect();
        let inner_w = sized.iter().map(|s| s.3).fold(COLLAPSED_W, f64::max);
        let site_w = inner_w + 2.0 * PAD;
        let site_h = TITLE_H + sized.iter().map(|s| s.4 + PAD).sum::<f64>() + PAD;
        if x > 0.0 && x + site_w > ROW_W {
            x = 0.0;
            y += shelf_h + GAP;
            shelf_h = 0.0;
        }
        out.sites.push(SiteBox {
            id: site.clone(),
            rect: Rect {
                x,
                y,
                w: site_w,
                h: site_h,
            },
        });
        let mut cy = y + TITLE_H;
        for (c, n, open, w, h) in sized {
            let rect = Rect {
                x: x + PAD,
                y: cy,
                w,
                h,
            };
            if open {
                let cols = n.clamp(1, COLUMNS);
                for (i, s) in services_of.get(&c).into_iter().flatten().enumerate() {
                    out.services.push(ServiceNode {
                        id: s.clone(),
                        cluster: c.clone(),
                        rect: Rect {
                            x: rect.x + PAD + (i % cols) as f64 * CELL_W,
                            y: rect.y + TITLE_H + (i / cols) as f64 * CELL_H,
                            w: CELL_W - 4.0,
                            h: CELL_H - 2.0,
                        },
                    });
                }
            }
            out.clusters.push(ClusterBox {
                id: c.clone(),
                site: site.clone(),
                rect,
                services: n,
                expanded: open,
            });
            cy += h + PAD;
        }
        x += site_w + GAP;
        shelf_h = shelf_h.max(site_h);
        out.width = out.width.max(x);
    }
    out.height = y + shelf_h;

    // Where each service is drawn: its own node, or its collapsed cluster.
    let node_of = |service: &str| -> Option<(String, (f64, f64))> {
        let c = cluster_of_service.get(service)?;
        if expanded.contains(c) {
            let n = out.services.iter().find(|n| n.id == service)?;
            let (cx, cy) = n.rect.centre();
            Some((service.to_string(), (cx, cy)))
        } else {
            let b = out.clusters.iter().find(|b| &b.id == c)?;
            Some((format!("cluster:{c}"), b.rect.centre()))
        }
    };
    let mut summed: BTreeMap<(String, String), Edge> = BTreeMap::new();
    let mut hidden = 0usize;
    for f in arr("flows") {
        let (from, to) = (str_of(&f["from"]), str_of(&f["to"]));
        let (Some((a, pa)), Some((b, pb))) = (node_of(&from), node_of(&to)) else {
            hidden += 1;
            continue;
        };
        if a == b {
            // Inside one collapsed cluster: nothing to draw.
            hidden += 1;
            continue;
        }
        let site = |s: &str| {
            cluster_of_service
                .get(s)
                .and_then(|c| site_of_cluster.get(c))
                .cloned()
        };
        let cross = site(&from) != site(&to);
        let w = f["weight"]["value"].as_f64().unwrap_or(0.0);
        // One line per pair, whichever way the flows go.
        let key = if a <= b {
            (a.clone(), b.clone())
        } else {
            (b.clone(), a.clone())
        };
        let e = summed.entry(key).or_insert(Edge {
            a,
            b,
            from: pa,
            to: pb,
            weight: 0.0,
            flows: 0,
            cross_site: cross,
        });
        e.weight += w;
        e.flows += 1;
        e.cross_site |= cross;
    }
    let mut edges: Vec<Edge> = summed.into_values().collect();
    // Heaviest first; ties by the pair's names, so the cut is stable.
    edges.sort_by(|x, y| {
        y.weight
            .total_cmp(&x.weight)
            .then_with(|| (&x.a, &x.b).cmp(&(&y.a, &y.b)))
    });
    for e in edges.iter().skip(MAX_EDGES) {
        hidden += e.flows;
    }
    edges.truncate(MAX_EDGES);
    out.flows_drawn = edges.iter().map(|e| e.flows).sum();
    out.flows_hidden = hidden;
    out.edges = edges;
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const SAMPLE: &str = include_str!("../../examples/estates/sample.json");

    fn overlaps(a: &Rect, b: &Rect) -> bool {
        a.x < b.x + b.w && b.x < a.x + a.w && a.y < b.y + b.h && b.y < a.y + a.h
    }

    fn inside(a: &Rect, outer: &Rect) -> bool {
        a.x >= outer.x
            && a.y >= outer.y
            && a.x + a.w <= outer.x + outer.w + 1e-9
            && a.y + a.h <= outer.y + outer.h + 1e-9
    }

    #[test]
    fn the_sample_is_boxed_by_site_and_cluster_without_overlaps() {
        let doc: Value = serde_json::from_str(SAMPLE).unwrap();
        let open = default_expanded(&doc);
        let l = layout(&doc, &open);
        let n_services = doc["services"].as_array().unwrap().len();
        // 74 services, every cluster small: all expanded, all drawn.
        assert_eq!(l.services.len(), n_services);
        assert_eq!(l.clusters.len(), doc["clusters"].as_array().unwrap().len());
        for (i, a) in l.sites.iter().enumerate() {
            for b in &l.sites[i + 1..] {
                assert!(!overlaps(&a.rect, &b.rect), "{} and {}", a.id, b.id);
            }
        }
        for (i, a) in l.services.iter().enumerate() {
            let c = l.clusters.iter().find(|c| c.id == a.cluster).unwrap();
            assert!(inside(&a.rect, &c.rect), "{} outside {}", a.id, c.id);
            for b in &l.services[i + 1..] {
                assert!(!overlaps(&a.rect, &b.rect), "{} and {}", a.id, b.id);
            }
        }
        for c in &l.clusters {
            let s = l.sites.iter().find(|s| s.id == c.site).unwrap();
            assert!(inside(&c.rect, &s.rect), "{} outside {}", c.id, s.id);
        }
        let flows = doc["flows"].as_array().unwrap().len();
        assert_eq!(l.flows_drawn + l.flows_hidden, flows);
        assert!(l.edges.iter().any(|e| e.cross_site));
        assert!(l.edges.iter().any(|e| !e.cross_site));
    }

    #[test]
    fn a_large_estate_starts_collapsed_and_stays_bounded() {
        let e = berth_engine::gen::estate(&berth_engine::gen::Shape::sized(3, 1000, 20));
        let doc: Value = berth_engine::export::to_file(&e);
        let open = default_expanded(&doc);
        assert!(open.is_empty(), "1,000 services start collapsed");
        let l = layout(&doc, &open);
        assert_eq!(l.services.len(), 0);
        assert_eq!(l.clusters.len(), 20);
        assert!(l.edges.len() <= MAX_EDGES);
        let flows = doc["flows"].as_array().unwrap().len();
        assert_eq!(l.flows_drawn + l.flows_hidden, flows);
        // Opening one cluster draws its services, and only those.
        let first = l.clusters[0].id.clone();
        let one: BTreeSet<String> = [first.clone()].into();
        let l1 = layout(&doc, &one);
        assert_eq!(l1.services.len(), l.clusters[0].services);
        assert!(l1.services.iter().all(|s| s.cluster == first));
    }
}
