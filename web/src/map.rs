//! The world map's geometry, pure so it is tested natively: the part of
//! the world in view (a [`Viewport`] that zooms and pans inside the
//! 360 × 180 equirectangular plane), where each site's label goes so that
//! no two labels overlap and none covers a site's dot ([`place_labels`]),
//! and the view that fits every site ([`fit`]).
//!
//! Sizes on the map are in map units (1 unit = 1° of longitude). A label's
//! font is `LABEL_FONT / zoom` units tall, so it keeps its size on screen
//! while the map zooms; which is also why labels that collide at the
//! whole-world view separate when one zooms in.

/// The map's plane: longitude −180…180 → 0…360, latitude 90…−90 → 0…180.
pub const WORLD_W: f64 = 360.0;
pub const WORLD_H: f64 = 180.0;
/// Past 24× a metro area fills the view; nothing on the map is finer
/// (site coordinates are city-level).
pub const MAX_ZOOM: f64 = 24.0;
/// A label's font size at 1× in map units: 5 units is about 12 px on a
/// 900 px wide map, the page's small text.
pub const LABEL_FONT: f64 = 5.0;
/// A site's dot radius at 1×, in map units (about 5 px on screen).
pub const DOT_R: f64 = 2.2;
/// Width of one character as a share of the font size: the page's sans
/// serif averages about 0.55–0.6 em for lowercase ids; 0.62 errs wide, so
/// labels judged apart do not touch.
const CHAR_EM: f64 = 0.62;

/// What part of the plane is in view: its top-left corner and its width
/// (the height is half the width, as the plane's).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Viewport {
    pub x: f64,
    pub y: f64,
    pub w: f64,
}

impl Viewport {
    pub const WORLD: Viewport = Viewport {
        x: 0.0,
        y: 0.0,
        w: WORLD_W,
    };

    pub fn h(&self) -> f64 {
        self.w / 2.0
    }

    pub fn zoom(&self) -> f64 {
        WORLD_W / self.w
    }

    /// The SVG `viewBox` of this view.
    pub fn view_box(&self) -> String {
        format!("{:.3} {:.3} {:.3} {:.3}", self.x, self.y, self.w, self.h())
    }

    /// Centred on `(cx, cy)` at `zoom`, kept inside the plane.
    pub fn centred(cx: f64, cy: f64, zoom: f64) -> Viewport {
        let w = WORLD_W / zoom.clamp(1.0, MAX_ZOOM);
        let h = w / 2.0;
        Viewport {
            x: (cx - w / 2.0).clamp(0.0, WORLD_W - w),
            y: (cy - h / 2.0).clamp(0.0, WORLD_H - h),
            w,
        }
    }

    pub fn centre(&self) -> (f64, f64) {
        (self.x + self.w / 2.0, self.y + self.h() / 2.0)
    }

    /// Zoomed by `factor` (2 = twice as close) about the centre.
    pub fn zoomed(&self, factor: f64) -> Viewport {
        let (cx, cy) = self.centre();
        Viewport::centred(cx, cy, self.zoom() * factor)
    }

    /// Moved by `(dx, dy)` quarters of the view.
    pub fn panned(&self, dx: f64, dy: f64) -> Viewport {
        let (cx, cy) = self.centre();
        Viewport::centred(
            cx + dx * self.w / 4.0,
            cy + dy * self.h() / 4.0,
            self.zoom(),
        )
    }
}

/// The closest view that shows every point with a margin: the whole world
/// for none, a city-level view around a single one.
pub fn fit(points: &[(f64, f64)]) -> Viewport {
    if points.is_empty() {
        return Viewport::WORLD;
    }
    let (mut x0, mut y0, mut x1, mut y1) = (f64::MAX, f64::MAX, f64::MIN, f64::MIN);
    for &(x, y) in points {
        x0 = x0.min(x);
        y0 = y0.min(y);
        x1 = x1.max(x);
        y1 = y1.max(y);
    }
    // A fifth of the span on each side, and at least 8° (labels sit to
    // the right of their dot and need the room).
    let mx = ((x1 - x0) * 0.2).max(8.0);
    let my = ((y1 - y0) * 0.2).max(8.0);
    let w = (x1 - x0 + 2.0 * mx).max(2.0 * (y1 - y0 + 2.0 * my));
    Viewport::centred((x0 + x1) / 2.0, (y0 + y1) / 2.0, WORLD_W / w)
}

/// Where one site's label is drawn.
#[derive(Clone, Debug, PartialEq)]
pub struct Label {
    pub id: String,
    /// The text's anchor point, in map units.
    pub x: f64,
    pub y: f64,
    /// SVG `text-anchor`: `start` (label right of the dot) or `end`.
    pub anchor: &'static str,
    /// False when every place near the dot is taken at this zoom: the
    /// label is left out (the dot keeps its tooltip) until one zooms in.
    pub shown: bool,
}

#[derive(Clone, Copy)]
struct Rect {
    x0: f64,
    y0: f64,
    x1: f64,
    y1: f64,
}

impl Rect {
    fn overlaps(&self, o: &Rect) -> bool {
        self.x0 < o.x1 && o.x0 < self.x1 && self.y0 < o.y1 && o.y0 < self.y1
    }
}

/// Labels for the sites at `(id, x, y)`, placed greedily in the given
/// order (callers pass a stable order: the estate's site order) at the
/// first of eight spots around the dot — right, left, above right, below
/// right, above left, below left, above, below — whose box touches no
/// label placed before and no site's dot. A label with no free spot is
/// not shown. Deterministic: the same sites and zoom give the same labels.
pub fn place_labels(sites: &[(String, f64, f64)], zoom: f64) -> Vec<Label> {
    let font = LABEL_FONT / zoom;
    let r = DOT_R / zoom;
    let gap = r * 1.2;
    let dots: Vec<Rect> = sites
        .iter()
        .map(|(_, x, y)| Rect {
            x0: x - r,
            y0: y - r,
            x1: x + r,
            y1: y + r,
        })
        .collect();
    let mut taken: Vec<Rect> = Vec::new();
    sites
        .iter()
        .map(|(id, x, y)| {
            let w = id.chars().count() as f64 * font * CHAR_EM;
            // (left edge, baseline, anchor) of each spot; the box spans
            // from the baseline up one font height (descenders are small
            // for ids).
            let spots = [
                (x + gap, y + font * 0.35, "start"),
                (x - gap - w, y + font * 0.35, "end"),
                (x + gap * 0.5, y - gap, "start"),
                (x + gap * 0.5, y + gap + font * 0.8, "start"),
                (x - gap * 0.5 - w, y - gap, "end"),
                (x - gap * 0.5 - w, y + gap + font * 0.8, "end"),
                (x - w / 2.0, y - gap - font * 0.1, "middle"),
                (x - w / 2.0, y + gap + font * 0.9, "middle"),
            ];
            for (left, base, anchor) in spots {
                let b = Rect {
                    x0: left,
                    y0: base - font * 0.8,
                    x1: left + w,
                    y1: base + font * 0.15,
                };
                if taken.iter().chain(dots.iter()).any(|o| o.overlaps(&b)) {
                    continue;
                }
                taken.push(b);
                let ax = match anchor {
                    "start" => left,
                    "end" => left + w,
                    _ => left + w / 2.0,
                };
                return Label {
                    id: id.clone(),
                    x: ax,
                    y: base,
                    anchor,
                    shown: true,
                };
            }
            Label {
                id: id.clone(),
                x: *x,
                y: *y,
                anchor: "start",
                shown: false,
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn europe() -> Vec<(String, f64, f64)> {
        // The sample's European sites (lon + 180, 90 − lat), which overlap
        // at the whole-world view.
        [
            ("fra", 8.6821, 50.1109),
            ("par", 2.3522, 48.8566),
            ("lon", -0.1278, 51.5074),
            ("dub", -6.2603, 53.3498),
        ]
        .iter()
        .map(|(id, lon, lat)| (id.to_string(), lon + 180.0, 90.0 - lat))
        .collect()
    }

    fn boxes(ls: &[Label], zoom: f64) -> Vec<Rect> {
        let font = LABEL_FONT / zoom;
        ls.iter()
            .filter(|l| l.shown)
            .map(|l| {
                let w = l.id.chars().count() as f64 * font * CHAR_EM;
                let left = match l.anchor {
                    "start" => l.x,
                    "end" => l.x - w,
                    _ => l.x - w / 2.0,
                };
                Rect {
                    x0: left,
                    y0: l.y - font * 0.8,
                    x1: left + w,
                    y1: l.y + font * 0.15,
                }
            })
            .collect()
    }

    #[test]
    fn shown_labels_never_overlap_each_other_or_a_dot() {
        for zoom in [1.0, 2.0, 4.0, 8.0] {
            let sites = europe();
            let ls = place_labels(&sites, zoom);
            let bs = boxes(&ls, zoom);
            for (i, a) in bs.iter().enumerate() {
                for b in &bs[i + 1..] {
                    assert!(!a.overlaps(b), "zoom {zoom}: {ls:?}");
                }
                let r = DOT_R / zoom;
                for (_, x, y) in &sites {
                    let dot = Rect {
                        x0: x - r,
                        y0: y - r,
                        x1: x + r,
                        y1: y + r,
                    };
                    assert!(!a.overlaps(&dot), "zoom {zoom}: a label covers a dot");
                }
            }
        }
    }

    #[test]
    fn crowded_labels_give_way_and_come_back_when_zoomed_in() {
        let sites = europe();
        let at1 = place_labels(&sites, 1.0);
        let at8 = place_labels(&sites, 8.0);
        assert!(at8.iter().all(|l| l.shown), "{at8:?}");
        assert!(
            at1.iter().filter(|l| l.shown).count() >= 2,
            "at the whole world, some still fit: {at1:?}"
        );
        // The first site always keeps its preferred spot, right of the dot.
        assert_eq!(at1[0].anchor, "start");
        assert_eq!(place_labels(&sites, 1.0), at1, "deterministic");
    }

    #[test]
    fn the_fit_shows_every_site_and_zooms_to_a_region() {
        let pts: Vec<(f64, f64)> = europe().iter().map(|s| (s.1, s.2)).collect();
        let v = fit(&pts);
        for (x, y) in &pts {
            assert!(*x > v.x && *x < v.x + v.w && *y > v.y && *y < v.y + v.h());
        }
        assert!(v.zoom() > 4.0, "Europe is close up: {v:?}");
        assert_eq!(fit(&[]), Viewport::WORLD);
        // Sites on three continents: most of the world.
        let wide = fit(&[(60.0, 50.0), (283.9, 40.0), (60.3, 38.0), (283.8, 88.6)]);
        assert!(wide.zoom() < 1.5, "{wide:?}");
    }

    #[test]
    fn zoom_and_pan_stay_inside_the_world() {
        let v = Viewport::WORLD.zoomed(4.0);
        assert_eq!(v.zoom(), 4.0);
        assert_eq!(v.centre(), (180.0, 90.0));
        let far = (0..20).fold(v, |v, _| v.panned(1.0, 1.0));
        assert!(far.x + far.w <= WORLD_W + 1e-9 && far.y + far.h() <= WORLD_H + 1e-9);
        assert_eq!(Viewport::WORLD.zoomed(0.5), Viewport::WORLD);
        assert!(Viewport::WORLD.zoomed(1000.0).zoom() <= MAX_ZOOM);
    }
}
