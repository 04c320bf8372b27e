//! Published round-trip times between cloud regions, for pre-filling the
//! RTT between two new sites (the New estate page) with a figure someone
//! measured instead of a guess.
//!
//! The data is Azure's monthly P50 matrix (`engine/data/azure-rtt-p50-*.csv`,
//! header: source, date, licence), compiled in: no I/O. A site matches a
//! region when its coordinates lie within [`MATCH_RADIUS_KM`] of the
//! region's metro centre; two matched sites get the mean of the two
//! published directions. A figure taken from here is stored as a link
//! fact of class `reported` whose source names the table, the date and
//! both regions ([`Published::source`]); it is evidence rung 3 of
//! docs/advice.md §3, and the great-circle estimate (rung 5) stays for
//! every pair the table does not cover.

use std::sync::OnceLock;

use crate::rtt::great_circle_km;

/// The matrix as published (rows: source region, columns: destination).
const AZURE_P50_CSV: &str = include_str!("../../data/azure-rtt-p50-2026-07-30.csv");

/// Where the figures come from, for people.
pub const SOURCE_URL: &str =
    "https://learn.microsoft.com/en-us/azure/networking/azure-network-latency";
/// The last day of the 30-day window the medians cover.
pub const DATASET_DATE: &str = "2026-07-30";

/// How far a site may be from a region's metro centre and still take its
/// figures: a metro area's extent. A cloud region's campuses lie within
/// tens of kilometres of the city it is named for; at 50 km the
/// difference in round trip is under a millisecond (0.0161 ms/km, §3),
/// while the nearest two regions in the table (Australia Central and
/// Central 2, both Canberra) are left out rather than told apart.
pub const MATCH_RADIUS_KM: f64 = 50.0;

/// A region of the table with the metro it serves.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Region {
    /// The region's name as the table writes it.
    pub name: &'static str,
    /// The city it is in or beside, for people.
    pub place: &'static str,
    pub lat: f64,
    pub lon: f64,
}

const fn region(name: &'static str, place: &'static str, lat: f64, lon: f64) -> Region {
    Region {
        name,
        place,
        lat,
        lon,
    }
}

/// The regions a site can match: those whose metro is known to about a
/// kilometre (the New estate page's city picker uses the same centres).
/// Regions that share a metro with another (East US 2 and East US in
/// Boydton; Australia Central 2 and Central in Canberra) keep only the
/// first, and regions whose city Microsoft does not name (Israel Central)
/// are left out: a site cannot be matched to them by place.
pub const REGIONS: &[Region] = &[
    region("North Europe", "Dublin", 53.35, -6.26),
    region("UK South", "London", 51.51, -0.13),
    region("UK West", "Cardiff", 51.48, -3.18),
    region("Spain Central", "Madrid", 40.42, -3.70),
    region("France Central", "Paris", 48.86, 2.35),
    region("France South", "Marseille", 43.30, 5.37),
    region("West Europe", "Amsterdam", 52.37, 4.90),
    region("Belgium Central", "Brussels", 50.85, 4.35),
    region("Germany West Central", "Frankfurt", 50.11, 8.68),
    region("Germany North", "Berlin", 52.52, 13.40),
    region("Switzerland North", "Zurich", 47.38, 8.54),
    region("Switzerland West", "Geneva", 46.20, 6.15),
    region("Italy North", "Milan", 45.46, 9.19),
    region("Norway East", "Oslo", 59.91, 10.75),
    region("Norway West", "Stavanger", 58.97, 5.73),
    region("Denmark East", "Copenhagen", 55.68, 12.57),
    region("Sweden Central", "Gävle", 60.67, 17.14),
    region("Austria East", "Vienna", 48.21, 16.37),
    region("Poland Central", "Warsaw", 52.23, 21.01),
    region("West US", "San Jose", 37.34, -121.89),
    region("West US 2", "Quincy, Washington", 47.23, -119.85),
    region("West US 3", "Phoenix", 33.45, -112.07),
    region("West Central US", "Cheyenne", 41.14, -104.82),
    region("Central US", "Des Moines", 41.59, -93.62),
    region("North Central US", "Chicago", 41.88, -87.63),
    region("South Central US", "San Antonio", 29.42, -98.49),
    region("East US", "Boydton, Virginia", 36.67, -78.39),
    region("Mexico Central", "Querétaro", 20.59, -100.39),
    region("Canada Central", "Toronto", 43.65, -79.38),
    region("Canada East", "Quebec City", 46.81, -71.21),
    region("Brazil South", "São Paulo", -23.55, -46.63),
    region("South Africa West", "Cape Town", -33.92, 18.42),
    region("South Africa North", "Johannesburg", -26.20, 28.05),
    region("Qatar Central", "Doha", 25.29, 51.53),
    region("UAE Central", "Abu Dhabi", 24.45, 54.38),
    region("UAE North", "Dubai", 25.20, 55.27),
    region("Jio India West", "Jamnagar", 22.47, 70.06),
    region("Central India", "Pune", 18.52, 73.86),
    region("South India", "Chennai", 13.08, 80.27),
    region("Southeast Asia", "Singapore", 1.35, 103.82),
    region("Malaysia West", "Kuala Lumpur", 3.139, 101.687),
    region("Indonesia Central", "Jakarta", -6.21, 106.85),
    region("East Asia", "Hong Kong", 22.32, 114.17),
    region("Korea Central", "Seoul", 37.57, 126.98),
    region("Korea South", "Busan", 35.18, 129.08),
    region("Japan West", "Osaka", 34.69, 135.50),
    region("Japan East", "Tokyo", 35.68, 139.69),
    region("Australia Southeast", "Melbourne", -37.81, 144.96),
    region("Australia Central", "Canberra", -35.28, 149.13),
    region("Australia East", "Sydney", -33.87, 151.21),
    region("New Zealand North", "Auckland", -36.85, 174.76),
];

/// The matrix read once: region names in column order, and
/// `ms[row * n + column]` (`None` on the diagonal).
struct Matrix {
    names: Vec<&'static str>,
    ms: Vec<Option<f64>>,
}

fn matrix() -> &'static Matrix {
    static M: OnceLock<Matrix> = OnceLock::new();
    M.get_or_init(|| parse(AZURE_P50_CSV).expect("the shipped table parses (tested)"))
}

/// The CSV as shipped: `#` comment lines, a header `Source,<regions…>`,
/// then one row per region in the header's order.
fn parse(text: &'static str) -> Result<Matrix, String> {
    let mut lines = text
        .lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty());
    let header = lines.next().ok_or("no header")?;
    let names: Vec<&'static str> = header.split(',').skip(1).collect();
    let n = names.len();
    let mut ms = Vec::with_capacity(n * n);
    for (row, line) in lines.enumerate() {
        let mut cells = line.split(',');
        let from = cells.next().ok_or("empty row")?;
        if names.get(row) != Some(&from) {
            return Err(format!(
                "row {row} is {from:?}, the header says {:?}",
                names.get(row)
            ));
        }
        let values: Vec<&str> = cells.collect();
        if values.len() != n {
            return Err(format!("row {from:?} has {} values, not {n}", values.len()));
        }
        for (col, v) in values.iter().enumerate() {
            let v = v.trim();
            if v.is_empty() {
                if col != row {
                    return Err(format!("{from:?} to {:?} is empty", names[col]));
                }
                ms.push(None);
            } else {
                let x: f64 = v
                    .parse()
                    .map_err(|_| format!("{from:?}: {v:?} is not a number"))?;
                if !(x.is_finite() && x > 0.0) {
                    return Err(format!("{from:?}: {v:?} is not a round trip"));
                }
                ms.push(Some(x));
            }
        }
    }
    if ms.len() != n * n {
        return Err(format!("{} rows for {n} regions", ms.len() / n.max(1)));
    }
    Ok(Matrix { names, ms })
}

/// The published one-way-direction median from `from` to `to`, by the
/// table's region names.
pub fn directed_ms(from: &str, to: &str) -> Option<f64> {
    let m = matrix();
    let i = m.names.iter().position(|n| *n == from)?;
    let j = m.names.iter().position(|n| *n == to)?;
    m.ms[i * m.names.len() + j]
}

/// The region whose metro centre is nearest to `coords`, within
/// [`MATCH_RADIUS_KM`] (the first of equals, in [`REGIONS`] order).
pub fn region_near(coords: (f64, f64)) -> Option<&'static Region> {
    let mut best: Option<(f64, &'static Region)> = None;
    for r in REGIONS {
        let d = great_circle_km(coords, (r.lat, r.lon));
        if d <= MATCH_RADIUS_KM && best.is_none_or(|(bd, _)| d < bd) {
            best = Some((d, r));
        }
    }
    best.map(|(_, r)| r)
}

/// A published round trip between two sites' regions.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Published {
    /// The mean of the two published directions, ms.
    pub ms: f64,
    pub a: &'static Region,
    pub b: &'static Region,
}

impl Published {
    /// The fact's `source`: table, date and both regions, short enough
    /// for the estate's 256-byte limit.
    pub fn source(&self) -> String {
        format!(
            "published: Azure P50, 30 days to {DATASET_DATE}, {} ↔ {} (learn.microsoft.com/azure/networking/azure-network-latency)",
            self.a.name, self.b.name
        )
    }

    /// For people: "Azure's published median, Germany West Central
    /// (Frankfurt) ↔ North Europe (Dublin), 30 days to 2026-07-30".
    pub fn words(&self) -> String {
        format!(
            "Azure's published median, {} ({}) ↔ {} ({}), 30 days to {DATASET_DATE}",
            self.a.name, self.a.place, self.b.name, self.b.place
        )
    }
}

/// The published round trip between two sites, when both lie in regions
/// of the table and they are different regions.
pub fn published_rtt(a: (f64, f64), b: (f64, f64)) -> Option<Published> {
    let (ra, rb) = (region_near(a)?, region_near(b)?);
    if ra.name == rb.name {
        return None;
    }
    let there = directed_ms(ra.name, rb.name)?;
    let back = directed_ms(rb.name, ra.name)?;
    Some(Published {
        ms: (there + back) / 2.0,
        a: ra,
        b: rb,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rtt_reference::REFERENCE_PAIRS;

    #[test]
    fn the_shipped_table_is_whole() {
        let m = parse(AZURE_P50_CSV).unwrap();
        assert_eq!(m.names.len(), 54);
        for r in REGIONS {
            assert!(m.names.contains(&r.name), "{} is not in the table", r.name);
        }
        // No two matchable regions closer than twice the radius, so a site
        // is never within reach of two.
        for (i, a) in REGIONS.iter().enumerate() {
            for b in &REGIONS[i + 1..] {
                let d = great_circle_km((a.lat, a.lon), (b.lat, b.lon));
                assert!(
                    d > 2.0 * MATCH_RADIUS_KM,
                    "{} and {}: {d} km",
                    a.name,
                    b.name
                );
            }
        }
    }

    /// The calibration pairs taken from the same page (rtt_reference.rs,
    /// typed in separately) agree with this table to the half millisecond:
    /// a check of both transcriptions.
    #[test]
    fn the_calibration_pairs_from_azure_agree() {
        let name = |label: &str| -> String {
            let s = label.strip_prefix("Azure ").unwrap();
            s.split(" (").next().unwrap().to_string()
        };
        let mut checked = 0;
        for p in REFERENCE_PAIRS.iter().filter(|p| p.a.starts_with("Azure ")) {
            let (a, b) = (name(p.a), name(p.b));
            let mean = (directed_ms(&a, &b).unwrap() + directed_ms(&b, &a).unwrap()) / 2.0;
            assert_eq!(mean, p.published_rtt_ms, "{a} ↔ {b}");
            checked += 1;
        }
        assert!(checked >= 40, "{checked}");
    }

    #[test]
    fn sites_in_two_regions_get_the_mean_of_both_directions() {
        // Frankfurt and Dublin as the city picker places them.
        let p = published_rtt((50.11, 8.68), (53.35, -6.26)).unwrap();
        assert_eq!(
            (p.a.name, p.b.name),
            ("Germany West Central", "North Europe")
        );
        assert_eq!(p.ms, 26.5, "26 one way, 27 the other");
        assert_eq!(
            published_rtt((53.35, -6.26), (50.11, 8.68)).unwrap().ms,
            26.5
        );
        assert!(p.source().len() <= 256);
        assert!(p.source().contains("2026-07-30"));
        // A site 30 km out of town still matches; one 200 km out does not.
        assert_eq!(
            region_near((50.30, 8.95)).unwrap().name,
            "Germany West Central"
        );
        assert_eq!(region_near((51.5, 10.5)), None);
        // Stockholm is not Gävle: no figure, the estimate applies.
        assert_eq!(published_rtt((59.33, 18.07), (50.11, 8.68)), None);
        // Two sites in one region: the table says nothing of them.
        assert_eq!(published_rtt((50.11, 8.68), (50.12, 8.70)), None);
    }
}
