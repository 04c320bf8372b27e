//! [`layout`]: boxes by shelf packing, lines summed, routed and labelled.

use std::collections::{BTreeMap, BTreeSet};

use berth_engine::estate::Estate;

use super::route::{self, Router};
use super::*;

/// A line summed between two drawn nodes: the edge, its two ends' node
/// indices, and the boxes (by index) its ends sit in, which it may touch.
type SummedEdge = (Edge, usize, usize, Vec<u32>);

fn title(text: String, x: f64, y: f64) -> Title {
    let w = text_width(&text) * 1.08 + 6.0;
    Title {
        text,
        rect: Rect {
            x: x + 3.0,
            y: y + 2.0,
            w,
            h: 16.0,
        },
    }
}

/// A service's name cut with "…" to fit its cell.
fn fit(id: &str, room: f64) -> String {
    if text_width(id) <= room {
        return id.to_string();
    }
    let mut out = String::new();
    for c in id.chars() {
        out.push(c);
        if text_width(&out) + 10.0 > room {
            out.pop();
            break;
        }
    }
    out.push('…');
    out
}

/// Boxes, and where each service (open) and cluster is drawn by model
/// index.
struct Placed {
    service_box: Vec<Option<usize>>,
    cluster_box: Vec<usize>,
}

fn place(estate: &Estate, expanded: &BTreeSet<String>, out: &mut Layout) -> Placed {
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
    let mut placed = Placed {
        service_box: vec![None; estate.services.len()],
        cluster_box: vec![0; estate.clusters.len()],
    };
    // Shelf packing: sites left to right, a new shelf past ROW_W.
    let (mut x, mut y, mut shelf_h) = (0.0f64, 0.0f64, 0.0f64);
    for (site_index, site) in estate.sites.iter().enumerate() {
        // Size each cluster box first.
        let sized: Vec<(usize, usize, bool, String, f64, f64)> = clusters_of[site_index]
            .iter()
            .map(|&c| {
                let n = services_of[c].len();
                let id = &estate.clusters[c].id;
                let open = expanded.contains(id) && n > 0;
                let label = if open {
                    format!("{id} ▾")
                } else {
                    format!("{id} ▸ {n} service{}", if n == 1 { "" } else { "s" })
                };
                let tw = text_width(&label) * 1.08 + 16.0;
                let (w, h) = if open {
                    let cols = n.clamp(1, COLUMNS);
                    let rows = n.div_ceil(cols);
                    (
                        (cols as f64 * CELL_W - CELL_GAP + 2.0 * PAD).max(tw),
                        TITLE_H + rows as f64 * CELL_H - ROW_GAP + PAD,
                    )
                } else {
                    (COLLAPSED_W.max(tw), COLLAPSED_H)
                };
                (c, n, open, label, w, h)
            })
            .collect();
        let site_label = format!("site {}", site.id);
        let inner_w = sized.iter().map(|s| s.4).fold(
            COLLAPSED_W.max(text_width(&site_label) * 1.08 + 6.0),
            f64::max,
        );
        let site_w = inner_w + 2.0 * PAD;
        let site_h =
            TITLE_H + sized.iter().map(|s| s.5 + CLUSTER_GAP).sum::<f64>() - CLUSTER_GAP + PAD;
        if x > 0.0 && x + site_w > ROW_W {
            x = 0.0;
            y += shelf_h + SITE_GAP;
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
            title: title(site_label, x, y),
        });
        let mut cy = y + TITLE_H;
        for (c, n, open, label, w, h) in sized {
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
                        w: CELL_W - CELL_GAP,
                        h: CELL_H - ROW_GAP,
                    };
                    placed.service_box[s] = Some(out.services.len());
                    let id = &estate.services[s].id;
                    out.services.push(ServiceNode {
                        id: id.clone(),
                        cluster: cluster.id.clone(),
                        label: fit(id, node.w - 8.0),
                        rect: node,
                    });
                }
            }
            placed.cluster_box[c] = out.clusters.len();
            out.clusters.push(ClusterBox {
                id: cluster.id.clone(),
                site: site.id.clone(),
                title: title(label, rect.x, rect.y),
                rect,
                services: n,
                expanded: open,
            });
            cy += h + CLUSTER_GAP;
        }
        x += site_w + SITE_GAP;
        shelf_h = shelf_h.max(site_h);
        out.width = out.width.max(x - SITE_GAP);
    }
    out.height = y + shelf_h;
    placed
}

/// Lay the estate out with `expanded` clusters open.
pub fn layout(estate: &Estate, expanded: &BTreeSet<String>) -> Layout {
    let mut out = Layout {
        sites: Vec::new(),
        clusters: Vec::new(),
        services: Vec::new(),
        edges: Vec::new(),
        labels: Vec::new(),
        flows_drawn: 0,
        flows_hidden: 0,
        width: 0.0,
        height: 0.0,
    };
    let placed = place(estate, expanded, &mut out);

    // The router's boxes: sites, clusters, open services, then titles
    // (which no line touches).
    let (ns, nc, nv) = (out.sites.len(), out.clusters.len(), out.services.len());
    let mut boxes: Vec<Rect> = Vec::with_capacity(ns + 2 * nc + nv);
    boxes.extend(out.sites.iter().map(|b| b.rect.clone()));
    boxes.extend(out.clusters.iter().map(|b| b.rect.clone()));
    boxes.extend(out.services.iter().map(|b| b.rect.clone()));
    boxes.extend(out.sites.iter().map(|b| b.title.rect.clone()));
    boxes.extend(
        out.clusters
            .iter()
            .filter(|c| c.expanded)
            .map(|b| b.title.rect.clone()),
    );

    // Where each service is drawn: its own node, or its collapsed cluster
    // (name, box id, and the ids of the boxes a line to it may enter).
    let node_of = |service: usize| -> (String, usize, [u32; 3]) {
        let s = &estate.services[service];
        let c = placed.cluster_box[s.cluster];
        let site = estate.clusters[s.cluster].site as u32;
        match placed.service_box[service] {
            Some(v) => (
                s.id.clone(),
                ns + nc + v,
                [site, (ns + c) as u32, (ns + nc + v) as u32],
            ),
            None => (
                format!("cluster:{}", estate.clusters[s.cluster].id),
                ns + c,
                [site, (ns + c) as u32, (ns + c) as u32],
            ),
        }
    };
    let site_of = |service: usize| estate.clusters[estate.services[service].cluster].site;
    // Summed per pair, with the two ends' boxes.
    let mut summed: BTreeMap<(String, String), SummedEdge> = BTreeMap::new();
    let mut hidden = 0usize;
    for f in &estate.flows {
        let ((a, ba, ta), (b, bb, tb)) = (node_of(f.from), node_of(f.to));
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
        let e = summed.entry(key).or_insert_with(|| {
            let touched: Vec<u32> = ta.iter().chain(tb.iter()).copied().collect();
            let edge = Edge {
                a,
                b,
                path: Vec::new(),
                weight: 0.0,
                mb_s: 0.0,
                flows: 0,
                cross_site: cross,
                pairs: Vec::new(),
            };
            (edge, ba, bb, touched)
        });
        e.0.weight += w;
        e.0.mb_s += f.mb_s.value.unwrap_or(0.0);
        e.0.flows += 1;
        e.0.pairs.push((
            estate.services[f.from].id.clone(),
            estate.services[f.to].id.clone(),
        ));
        e.0.cross_site |= cross;
    }
    let mut edges: Vec<SummedEdge> = summed.into_values().collect();
    // Heaviest first; ties by the pair's names, so the cut is stable.
    edges.sort_by(|x, y| {
        y.0.weight
            .total_cmp(&x.0.weight)
            .then_with(|| (&x.0.a, &x.0.b).cmp(&(&y.0.a, &y.0.b)))
    });
    for e in edges.iter().skip(MAX_EDGES) {
        hidden += e.0.flows;
    }
    edges.truncate(MAX_EDGES);
    let router = Router::new(&boxes);
    out.edges = edges
        .into_iter()
        .map(|(mut e, ba, bb, touched)| {
            let (from, to) = (&boxes[ba], &boxes[bb]);
            let path = router
                .route(from.centre(), to.centre(), &touched)
                .unwrap_or_else(|| vec![from.centre(), to.centre()]);
            e.path = route::trim(path, from, to);
            e
        })
        .collect();
    out.flows_drawn = out.edges.iter().map(|e| e.flows).sum();
    out.flows_hidden = hidden;
    out.labels = place_labels(&out, &boxes[ns + nc..]);
    out
}

/// The numbers of the heaviest lines, each on its own line where it
/// covers no service, collapsed cluster, title or other label.
fn place_labels(l: &Layout, cells_and_titles: &[Rect]) -> Vec<EdgeLabel> {
    let mut blocked: Vec<Rect> = cells_and_titles.to_vec();
    blocked.extend(
        l.clusters
            .iter()
            .filter(|c| !c.expanded)
            .map(|c| c.rect.clone()),
    );
    let mut out: Vec<EdgeLabel> = Vec::new();
    for (i, e) in l.edges.iter().enumerate() {
        // The heaviest that have room, looking no further than needed.
        if out.len() >= MAX_LABELS || i >= 4 * MAX_LABELS || e.weight <= 0.0 {
            break;
        }
        let text = edge_text(e);
        let (w, h) = (text_width(&text) + 8.0, 16.0);
        // Segments longest first; on each, the middle, then off-centre.
        let mut segments: Vec<((f64, f64), (f64, f64))> =
            e.path.windows(2).map(|p| (p[0], p[1])).collect();
        segments.sort_by(|x, y| {
            let len =
                |s: &((f64, f64), (f64, f64))| (s.0 .0 - s.1 .0).abs() + (s.0 .1 - s.1 .1).abs();
            len(y).total_cmp(&len(x))
        });
        // On each segment, points from its middle outwards, the label
        // centred on the line or shifted across it (still covering it).
        let spot = segments.iter().find_map(|&(a, b)| {
            let len = (a.0 - b.0).abs() + (a.1 - b.1).abs();
            let near: Vec<&Rect> = blocked
                .iter()
                .filter(|r| {
                    r.x < a.0.max(b.0) + w
                        && r.x + r.w > a.0.min(b.0) - w
                        && r.y < a.1.max(b.1) + h
                        && r.y + r.h > a.1.min(b.1) - h
                })
                .collect();
            let steps = (len / 8.0).floor() as i64;
            (0..=steps).flat_map(|k| [k, -k]).find_map(|k| {
                let t = 0.5 + k as f64 * 4.0 / len.max(1.0);
                if !(0.0..=1.0).contains(&t) {
                    return None;
                }
                let (px, py) = (a.0 + (b.0 - a.0) * t, a.1 + (b.1 - a.1) * t);
                [0.0, -4.0, 4.0, -7.0, 7.0].iter().find_map(|d| {
                    let (dx, dy) = if a.1 == b.1 { (0.0, *d) } else { (*d, 0.0) };
                    let r = Rect {
                        x: px + dx - w / 2.0,
                        y: py + dy - h / 2.0,
                        w,
                        h,
                    };
                    let fits = r.x >= 0.0
                        && r.y >= 0.0
                        && r.x + r.w <= l.width
                        && r.y + r.h <= l.height
                        && !near.iter().any(|b| b.overlaps(&r))
                        && !out.iter().any(|o| o.rect.overlaps(&r));
                    fits.then_some(r)
                })
            })
        });
        if let Some(rect) = spot {
            out.push(EdgeLabel {
                edge: i,
                text,
                rect,
            });
        }
    }
    out
}
