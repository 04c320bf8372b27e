//! The service graph's layout, as Kiali draws it: services boxed by
//! cluster, clusters boxed by site. Pure (the engine's estate model in,
//! boxes and lines out) so it is tested natively; the Estate page draws it as SVG.
//!
//! Readable at any size because what is drawn is bounded, not the estate:
//! a cluster is drawn either expanded (a grid of its services) or
//! collapsed (one node saying how many), flows are summed between what is
//! drawn, and only the heaviest [`MAX_EDGES`] are kept.

use std::collections::{BTreeMap, BTreeSet};

use berth_engine::estate::Estate;

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
    /// The flows summed into the line, `(from, to)` service ids in flow
    /// order: what its stale mark is read from.
    pub pairs: Vec<(String, String)>,
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

/// Which clusters start expanded.
pub fn default_expanded(estate: &Estate) -> BTreeSet<String> {
    if estate.services.len() > EXPAND_ESTATE {
        return BTreeSet::new();
    }
    let mut count = vec![0usize; estate.clusters.len()];
    for s in &estate.services {
        count[s.cluster] += 1;
    }
    estate
        .clusters
        .iter()
        .zip(count)
        .filter(|(_, n)| *n <= EXPAND_CLUSTER)
        .map(|(c, _)| c.id.clone())
        .collect()
}

/// Lay the estate out with `expanded` clusters open.
pub fn layout(estate: &Estate, expanded: &BTreeSet<String>) -> Layout {
    // The model keeps sites, clusters and services sorted by id, so
    // grouping in model order gives clusters by site and services by
    // cluster, each in id order.
    let mut clusters_of: Vec<Vec<usize>> = vec![Vec::new(); estate.sites.len()];
    for (i, c) in estate.clusters.iter().enumerate() {
        clusters_of[c.site].push(i);
    }
    let mut services_of: Vec<Vec<usize>> = vec![Vec::new(); estate.clusters.len()];
    for (i, s) in estate.services.iter().enumerate() {
        services_of[s.cluster].push(i);
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
    // Where each cluster's box and each open service's node are drawn,
    // by model index (for the lines below).
    let mut cluster_centre: Vec<(f64, f64)> = vec![(0.0, 0.0); estate.clusters.len()];
    let mut service_centre: Vec<Option<(f64, f64)>> = vec![None; estate.services.len()];
    // Shelf packing: sites left to right, a new shelf past ROW_W.
    let (mut x, mut y, mut shelf_h) = (0.0f64, 0.0f64, 0.0f64);
    const GAP: f64 = 14.0;
    for (site_index, site) in estate.sites.iter().enumerate() {
        // Size each cluster box first.
        let sized: Vec<(usize, usize, bool, f64, f64)> = clusters_of[site_index]
            .iter()
            .map(|&c| {
                let n = services_of[c].len();
                let open = expanded.contains(&estate.clusters[c].id) && n > 0;
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
                (c, n, open, w, h)
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
            id: site.id.clone(),
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
            let cluster = &estate.clusters[c];
            if open {
                let cols = n.clamp(1, COLUMNS);
                for (i, &s) in services_of[c].iter().enumerate() {
                    let node = Rect {
                        x: rect.x + PAD + (i % cols) as f64 * CELL_W,
                        y: rect.y + TITLE_H + (i / cols) as f64 * CELL_H,
                        w: CELL_W - 4.0,
                        h: CELL_H - 2.0,
                    };
                    service_centre[s] = Some(node.centre());
                    out.services.push(ServiceNode {
                        id: estate.services[s].id.clone(),
                        cluster: cluster.id.clone(),
                        rect: node,
                    });
                }
            }
            cluster_centre[c] = rect.centre();
            out.clusters.push(ClusterBox {
                id: cluster.id.clone(),
                site: site.id.clone(),
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
    let node_of = |service: usize| -> (String, (f64, f64)) {
        let s = &estate.services[service];
        match service_centre[service] {
            Some(at) => (s.id.clone(), at),
            None => (
                format!("cluster:{}", estate.clusters[s.cluster].id),
                cluster_centre[s.cluster],
            ),
        }
    };
    let site_of = |service: usize| estate.clusters[estate.services[service].cluster].site;
    let mut summed: BTreeMap<(String, String), Edge> = BTreeMap::new();
    let mut hidden = 0usize;
    for f in &estate.flows {
        let ((a, pa), (b, pb)) = (node_of(f.from), node_of(f.to));
        if a == b {
            // Inside one collapsed cluster: nothing to draw.
            hidden += 1;
            continue;
        }
        let cross = site_of(f.from) != site_of(f.to);
        // An unknown weight draws no thickness (the side panel says it).
        let w = f.weight.value.unwrap_or(0.0);
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
            pairs: Vec::new(),
        });
        e.weight += w;
        e.flows += 1;
        e.pairs.push((
            estate.services[f.from].id.clone(),
            estate.services[f.to].id.clone(),
        ));
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
        let doc = berth_engine::estate::load(SAMPLE, berth_engine::estate::Format::Json).unwrap();
        let open = default_expanded(&doc);
        let l = layout(&doc, &open);
        let n_services = doc.services.len();
        // 74 services, every cluster small: all expanded, all drawn.
        assert_eq!(l.services.len(), n_services);
        assert_eq!(l.clusters.len(), doc.clusters.len());
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
        assert_eq!(l.flows_drawn + l.flows_hidden, doc.flows.len());
        assert!(l.edges.iter().any(|e| e.cross_site));
        assert!(l.edges.iter().any(|e| !e.cross_site));
    }

    #[test]
    fn a_large_estate_starts_collapsed_and_stays_bounded() {
        let doc = berth_engine::gen::estate(&berth_engine::gen::Shape::sized(3, 1000, 20));
        let open = default_expanded(&doc);
        assert!(open.is_empty(), "1,000 services start collapsed");
        let l = layout(&doc, &open);
        assert_eq!(l.services.len(), 0);
        assert_eq!(l.clusters.len(), 20);
        assert!(l.edges.len() <= MAX_EDGES);
        assert_eq!(l.flows_drawn + l.flows_hidden, doc.flows.len());
        // Opening one cluster draws its services, and only those.
        let first = l.clusters[0].id.clone();
        let one: BTreeSet<String> = [first.clone()].into();
        let l1 = layout(&doc, &one);
        assert_eq!(l1.services.len(), l.clusters[0].services);
        assert!(l1.services.iter().all(|s| s.cluster == first));
    }
}
