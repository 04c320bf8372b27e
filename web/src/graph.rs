//! The service graph's layout, as Kiali draws it: services boxed by
//! cluster, clusters boxed by site. Pure (the engine's estate model in,
//! boxes, routed lines, labels and arrows out) so it is tested natively;
//! the Estate page draws it as SVG at one unit per CSS pixel, so the
//! sizes here are the sizes on screen at the fitted view (12 px text).
//!
//! Readable at any size because what is drawn is bounded, not the estate:
//! a cluster is drawn either expanded (a grid of its services) or
//! collapsed (one node saying how many), flows are summed between what is
//! drawn, and only the heaviest [`MAX_EDGES`] are kept. Lines are routed
//! through the gaps between boxes ([`route`]), never through a box they
//! do not touch; the heaviest [`MAX_LABELS`] carry their numbers where
//! the label covers no box, title or other label.

use std::collections::BTreeSet;

use berth_engine::estate::Estate;

pub mod route;

/// Text size everywhere on the graph, in units (= CSS px at the fitted view).
pub const FONT: f64 = 12.0;
/// A service cell: room for a 16-character name at 12 px; lines run in
/// the 10-unit gaps between columns and the 16-unit gaps between rows
/// (room there for a line's numbers).
pub const CELL_W: f64 = 132.0;
pub const CELL_H: f64 = 36.0;
pub const CELL_GAP: f64 = 10.0;
pub const ROW_GAP: f64 = 16.0;
/// A box's title line, the padding inside boxes, the gaps between them.
const TITLE_H: f64 = 22.0;
const PAD: f64 = 10.0;
const CLUSTER_GAP: f64 = 14.0;
const SITE_GAP: f64 = 24.0;
/// A collapsed cluster: one node, its name and its count.
const COLLAPSED_W: f64 = 150.0;
const COLLAPSED_H: f64 = 40.0;
/// Services per row inside an expanded cluster: three keeps two sites
/// side by side within [`ROW_W`].
const COLUMNS: usize = 3;
/// Sites are placed left to right and wrap at this width: the graph's
/// width on a desktop page, so its text is drawn at 12 px.
const ROW_W: f64 = 880.0;
/// Lines drawn at most: past a few hundred, lines are a grey mass that
/// says nothing; the side panel lists every flow of a service.
pub const MAX_EDGES: usize = 300;
/// Lines carrying their numbers at most (the heaviest that have room).
pub const MAX_LABELS: usize = 12;
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
    pub fn overlaps(&self, o: &Rect) -> bool {
        self.x < o.x + o.w && o.x < self.x + self.w && self.y < o.y + o.h && o.y < self.y + self.h
    }
}

/// The width of `text` at [`FONT`] in the page's sans-serif (DejaVu Sans
/// and system fonts are no wider), generously: labels are sized by it.
pub fn text_width(text: &str) -> f64 {
    text.chars()
        .map(|c| match c {
            'i' | 'l' | 'j' | '.' | ',' | ':' | ' ' | '\'' | '|' => 4.0,
            'm' | 'w' | 'M' | 'W' | '…' | '→' | '·' => 10.0,
            c if c.is_ascii_digit() || c.is_uppercase() => 8.0,
            _ => 7.2,
        })
        .sum()
}

/// A box's title: where its text is written (baseline at `rect.y + 13`).
#[derive(Clone, Debug, PartialEq)]
pub struct Title {
    pub text: String,
    pub rect: Rect,
}

#[derive(Clone, Debug, PartialEq)]
pub struct SiteBox {
    pub id: String,
    pub rect: Rect,
    pub title: Title,
}

#[derive(Clone, Debug, PartialEq)]
pub struct ClusterBox {
    pub id: String,
    pub site: String,
    pub rect: Rect,
    pub title: Title,
    pub services: usize,
    pub expanded: bool,
}

#[derive(Clone, Debug, PartialEq)]
pub struct ServiceNode {
    pub id: String,
    pub cluster: String,
    pub rect: Rect,
    /// The name as drawn (cut with "…" to fit the cell).
    pub label: String,
}

/// A drawn line: summed flow weight between two drawn things (a service,
/// or a collapsed cluster as `cluster:ID`), across sites or not.
#[derive(Clone, Debug, PartialEq)]
pub struct Edge {
    pub a: String,
    pub b: String,
    /// The route: axis-aligned segments from `a`'s box side to `b`'s.
    pub path: Vec<(f64, f64)>,
    pub weight: f64,
    /// Summed MB/s of the flows with a known rate.
    pub mb_s: f64,
    pub flows: usize,
    pub cross_site: bool,
    /// The flows summed into the line, `(from, to)` service ids in flow
    /// order: what its stale mark is read from.
    pub pairs: Vec<(String, String)>,
}

/// A line's numbers, placed on it.
#[derive(Clone, Debug, PartialEq)]
pub struct EdgeLabel {
    /// Index into [`Layout::edges`].
    pub edge: usize,
    pub text: String,
    pub rect: Rect,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Layout {
    pub sites: Vec<SiteBox>,
    pub clusters: Vec<ClusterBox>,
    pub services: Vec<ServiceNode>,
    pub edges: Vec<Edge>,
    pub labels: Vec<EdgeLabel>,
    /// Flows summed into drawn lines, and those left out past
    /// [`MAX_EDGES`] (or inside one collapsed cluster).
    pub flows_drawn: usize,
    pub flows_hidden: usize,
    pub width: f64,
    pub height: f64,
}

mod build;
pub use build::layout;

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

/// A number as a line's label says it: whole past 10, one decimal below.
pub fn short_number(x: f64) -> String {
    if x >= 10.0 {
        format!("{x:.0}")
    } else {
        format!("{x:.1}")
    }
}

/// What a line's label says: its weight (requests in flight) and MB/s.
pub fn edge_text(e: &Edge) -> String {
    format!(
        "{} req · {} MB/s",
        short_number(e.weight),
        short_number(e.mb_s)
    )
}

/// The drawn things a line joins (services, or `cluster:ID`), with
/// `selected`'s own node first: what stays lit when it is selected.
pub fn neighbours(l: &Layout, selected: &str) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    for e in &l.edges {
        if e.a == selected {
            out.insert(e.b.clone());
        } else if e.b == selected {
            out.insert(e.a.clone());
        }
    }
    out
}

/// A recommended move, drawn: from the service's cell (or its collapsed
/// cluster) to the side of its destination cluster's box.
#[derive(Clone, Debug, PartialEq)]
pub struct Arrow {
    pub service: String,
    pub from_cluster: String,
    pub to_cluster: String,
    pub from: (f64, f64),
    pub to: (f64, f64),
}

/// Where the ray from `r`'s centre towards `p` leaves `r`.
fn side_towards(r: &Rect, p: (f64, f64)) -> (f64, f64) {
    let (cx, cy) = r.centre();
    let (dx, dy) = (p.0 - cx, p.1 - cy);
    let tx = if dx.abs() > 1e-9 {
        r.w / 2.0 / dx.abs()
    } else {
        f64::INFINITY
    };
    let ty = if dy.abs() > 1e-9 {
        r.h / 2.0 / dy.abs()
    } else {
        f64::INFINITY
    };
    let t = tx.min(ty).min(1.0);
    (cx + dx * t, cy + dy * t)
}

/// The arrows of `moves` (service, from cluster, to cluster) whose
/// clusters are drawn.
pub fn arrows<'a>(
    l: &Layout,
    moves: impl IntoIterator<Item = (&'a str, &'a str, &'a str)>,
) -> Vec<Arrow> {
    moves
        .into_iter()
        .filter_map(|(service, from, to)| {
            let dest = &l.clusters.iter().find(|c| c.id == to)?.rect;
            let src = match l.services.iter().find(|s| s.id == service) {
                Some(s) => &s.rect,
                None => &l.clusters.iter().find(|c| c.id == from)?.rect,
            };
            Some(Arrow {
                service: service.to_string(),
                from_cluster: from.to_string(),
                to_cluster: to.to_string(),
                from: side_towards(src, dest.centre()),
                to: side_towards(dest, src.centre()),
            })
        })
        .collect()
}

/// The layout's point nearest `id`'s box centre (a service, or its
/// collapsed cluster): where the view centres when `id` is chosen.
pub fn centre_of(l: &Layout, estate: &Estate, id: &str) -> Option<(f64, f64)> {
    if let Some(s) = l.services.iter().find(|s| s.id == id) {
        return Some(s.rect.centre());
    }
    let i = estate.service_index(id)?;
    let c = &estate.clusters[estate.services[i].cluster].id;
    l.clusters
        .iter()
        .find(|b| &b.id == c)
        .map(|b| b.rect.centre())
}

#[cfg(test)]
mod tests;
