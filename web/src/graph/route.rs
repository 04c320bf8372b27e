//! Orthogonal edge routing through the gaps between boxes.
//!
//! The candidate lines are, for every box, its centre and a line just
//! outside each of its sides (in the gap beside it). An edge walks the
//! grid those lines make, from its source's centre to its target's,
//! never stepping on a grid point strictly inside a box it does not
//! touch. Because every box's centre is a grid line, a step between two
//! neighbouring grid points that are both outside a box cannot cross it
//! (one of them would lie inside), so a route never passes through a box
//! it does not touch. A* on (point, heading) with a penalty per bend
//! keeps routes short and with few corners; routes share the gaps, which
//! bundles parallel flows into one channel.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use super::Rect;

/// How far outside a box its side lines run: the middle of a 10-unit gap.
pub const MARGIN: f64 = 5.0;
/// The cost of a corner, in units of length.
const BEND: u64 = 48;

/// Coordinates on a half-unit grid, so equal lines from different boxes
/// merge.
fn snap(v: f64) -> f64 {
    (v * 2.0).round() / 2.0
}

pub struct Router {
    xs: Vec<f64>,
    ys: Vec<f64>,
    /// For each grid point (`iy * xs.len() + ix`), the boxes it lies
    /// strictly inside.
    inside: Vec<Vec<u32>>,
}

fn axis(mut v: Vec<f64>) -> Vec<f64> {
    v.sort_by(f64::total_cmp);
    v.dedup();
    v
}

/// Indices of `v` strictly between `lo` and `hi`.
fn strictly(v: &[f64], lo: f64, hi: f64) -> std::ops::Range<usize> {
    let a = v.partition_point(|&x| x <= lo);
    let b = v.partition_point(|&x| x < hi);
    a..b.max(a)
}

impl Router {
    /// A grid over `boxes` (their index is their id in [`Router::route`]).
    pub fn new(boxes: &[Rect]) -> Router {
        let mut xs = Vec::with_capacity(boxes.len() * 3);
        let mut ys = Vec::with_capacity(boxes.len() * 3);
        for b in boxes {
            let (cx, cy) = b.centre();
            xs.extend([b.x - MARGIN, b.x + b.w + MARGIN, cx].map(snap));
            ys.extend([b.y - MARGIN, b.y + b.h + MARGIN, cy].map(snap));
        }
        let (xs, ys) = (axis(xs), axis(ys));
        let mut inside = vec![Vec::new(); xs.len() * ys.len()];
        for (id, b) in boxes.iter().enumerate() {
            for iy in strictly(&ys, b.y, b.y + b.h) {
                for ix in strictly(&xs, b.x, b.x + b.w) {
                    inside[iy * xs.len() + ix].push(id as u32);
                }
            }
        }
        Router { xs, ys, inside }
    }

    fn index(v: &[f64], at: f64) -> usize {
        let at = snap(at);
        let i = v.partition_point(|&x| x < at);
        if i < v.len() && (i == 0 || (v[i] - at).abs() <= (at - v[i - 1]).abs()) {
            i
        } else {
            i - 1
        }
    }

    /// The shortest route with few bends from `from` to `to` (both box
    /// centres, so grid points) through no box outside `touched`; `None`
    /// if there is none.
    pub fn route(
        &self,
        from: (f64, f64),
        to: (f64, f64),
        touched: &[u32],
    ) -> Option<Vec<(f64, f64)>> {
        let nx = self.xs.len();
        let n = nx * self.ys.len();
        let start = Self::index(&self.ys, from.1) * nx + Self::index(&self.xs, from.0);
        let goal = Self::index(&self.ys, to.1) * nx + Self::index(&self.xs, to.0);
        let open = |p: usize| self.inside[p].iter().all(|b| touched.contains(b));
        // Lengths in half units, as integers.
        let at = |p: usize| (self.xs[p % nx], self.ys[p / nx]);
        let dist = |a: (f64, f64), b: (f64, f64)| {
            ((a.0 - b.0).abs() * 2.0 + (a.1 - b.1).abs() * 2.0) as u64
        };
        let goal_at = at(goal);
        // State: point * 5 + heading (0..4 east, west, south, north; 4 none).
        let mut best = vec![u64::MAX; n * 5];
        let mut came = vec![u32::MAX; n * 5];
        let mut heap = BinaryHeap::new();
        best[start * 5 + 4] = 0;
        heap.push(Reverse((
            dist(at(start), goal_at),
            0u64,
            (start * 5 + 4) as u32,
        )));
        let mut end = None;
        while let Some(Reverse((_, g, s))) = heap.pop() {
            let s = s as usize;
            if g > best[s] {
                continue;
            }
            let (p, h) = (s / 5, s % 5);
            if p == goal {
                end = Some(s);
                break;
            }
            let (ix, iy) = (p % nx, p / nx);
            let steps = [
                (ix + 1 < nx).then(|| p + 1),
                (ix > 0).then(|| p - 1),
                (iy + 1 < self.ys.len()).then(|| p + nx),
                (iy > 0).then(|| p - nx),
            ];
            for (dir, q) in steps.into_iter().enumerate() {
                let Some(q) = q else { continue };
                if !open(q) {
                    continue;
                }
                let turn = if h != 4 && h != dir { BEND } else { 0 };
                let g2 = g + dist(at(p), at(q)) + turn;
                let t = q * 5 + dir;
                if g2 < best[t] {
                    best[t] = g2;
                    came[t] = s as u32;
                    heap.push(Reverse((g2 + dist(at(q), goal_at), g2, t as u32)));
                }
            }
        }
        let mut s = end?;
        let mut points = vec![at(s / 5)];
        while came[s] != u32::MAX {
            s = came[s] as usize;
            points.push(at(s / 5));
        }
        points.reverse();
        Some(simplify(points))
    }
}

/// Drop the points in the middle of straight runs.
pub fn simplify(points: Vec<(f64, f64)>) -> Vec<(f64, f64)> {
    let mut out: Vec<(f64, f64)> = Vec::with_capacity(points.len());
    for p in points {
        if out.last() == Some(&p) {
            continue;
        }
        if out.len() >= 2 {
            let (a, b) = (out[out.len() - 2], out[out.len() - 1]);
            if (a.0 == b.0 && b.0 == p.0) || (a.1 == b.1 && b.1 == p.1) {
                out.pop();
            }
        }
        out.push(p);
    }
    out
}

fn within(r: &Rect, p: (f64, f64)) -> bool {
    p.0 > r.x && p.0 < r.x + r.w && p.1 > r.y && p.1 < r.y + r.h
}

/// Where the axis-aligned segment from `a` (inside `r`) to `b` (outside)
/// leaves `r`.
fn exit(r: &Rect, a: (f64, f64), b: (f64, f64)) -> (f64, f64) {
    if a.1 == b.1 {
        let x = if b.0 > a.0 { r.x + r.w } else { r.x };
        (x, a.1)
    } else {
        let y = if b.1 > a.1 { r.y + r.h } else { r.y };
        (a.0, y)
    }
}

/// Cut the route where it leaves its source's box and where it enters
/// its target's, so a line starts and ends at the boxes' sides.
pub fn trim(mut points: Vec<(f64, f64)>, from: &Rect, to: &Rect) -> Vec<(f64, f64)> {
    while points.len() >= 2 && within(from, points[1]) {
        points.remove(0);
    }
    if points.len() >= 2 && within(from, points[0]) {
        points[0] = exit(from, points[0], points[1]);
    }
    while points.len() >= 2 && within(to, points[points.len() - 2]) {
        points.pop();
    }
    let n = points.len();
    if n >= 2 && within(to, points[n - 1]) {
        points[n - 1] = exit(to, points[n - 1], points[n - 2]);
    }
    points
}

/// Whether the axis-aligned segment `a`–`b` passes through the inside of
/// `r` (running along its side or ending on it does not).
pub fn crosses(r: &Rect, a: (f64, f64), b: (f64, f64)) -> bool {
    const E: f64 = 1e-6;
    let (x0, x1) = (a.0.min(b.0), a.0.max(b.0));
    let (y0, y1) = (a.1.min(b.1), a.1.max(b.1));
    x1 > r.x + E && x0 < r.x + r.w - E && y1 > r.y + E && y0 < r.y + r.h - E
}
