//! Places where clouds and datacentres commonly are, for the New estate
//! page's city picker: picking one fills a site's id, name, coordinates
//! and jurisdiction (all still editable). Coordinates are the city's, to
//! two decimals (about a kilometre: far finer than the great-circle RTT
//! estimate needs); a cloud region's campus may be tens of kilometres out
//! of town, which moves an estimated RTT by well under a millisecond.
//!
//! Jurisdictions are written as the estate format's examples write them
//! (docs/estate-format.md, `examples/estates/sample.json`): `eu` for every
//! member of the European Union (one data-residency area), otherwise the
//! country's ISO 3166-1 alpha-2 code in lowercase (`uk`, not `gb`, as the
//! sample has it).

/// One city of the picker.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct City {
    /// What the picker shows and the site's name is filled with.
    pub name: &'static str,
    /// The site id suggested: the airport (IATA) or metro code people in
    /// operations already use for the place, lowercase.
    pub site_id: &'static str,
    pub lat: f64,
    pub lon: f64,
    pub jurisdiction: &'static str,
}

const fn city(
    name: &'static str,
    site_id: &'static str,
    lat: f64,
    lon: f64,
    jurisdiction: &'static str,
) -> City {
    City {
        name,
        site_id,
        lat,
        lon,
        jurisdiction,
    }
}

/// The picker's table, by region, west to east within each.
pub const CITIES: &[City] = &[
    // Europe
    city("Dublin", "dub", 53.35, -6.26, "eu"),
    city("London", "lon", 51.51, -0.13, "uk"),
    city("Madrid", "mad", 40.42, -3.70, "eu"),
    city("Paris", "par", 48.86, 2.35, "eu"),
    city("Amsterdam", "ams", 52.37, 4.90, "eu"),
    city("Brussels", "bru", 50.85, 4.35, "eu"),
    city("Frankfurt", "fra", 50.11, 8.68, "eu"),
    city("Zurich", "zrh", 47.38, 8.54, "ch"),
    city("Milan", "mil", 45.46, 9.19, "eu"),
    city("Oslo", "osl", 59.91, 10.75, "no"),
    city("Vienna", "vie", 48.21, 16.37, "eu"),
    city("Stockholm", "sto", 59.33, 18.07, "eu"),
    city("Warsaw", "waw", 52.23, 21.01, "eu"),
    city("Helsinki", "hel", 60.17, 24.94, "eu"),
    // North America
    city("Oregon (Boardman)", "bdn", 45.84, -119.70, "us"),
    city("Portland, Oregon", "pdx", 45.52, -122.68, "us"),
    city("N. California (San Jose)", "sjc", 37.34, -121.89, "us"),
    city("Querétaro", "qro", 20.59, -100.39, "mx"),
    city("Dallas", "dfw", 32.78, -96.80, "us"),
    city("Chicago", "chi", 41.88, -87.63, "us"),
    city("Ohio (Columbus)", "cmh", 39.96, -83.00, "us"),
    city("Atlanta", "atl", 33.75, -84.39, "us"),
    city("Toronto", "yyz", 43.65, -79.38, "ca"),
    city("Ashburn, N. Virginia", "iad", 39.04, -77.49, "us"),
    city("Montréal", "yul", 45.50, -73.57, "ca"),
    // South America
    city("Santiago", "scl", -33.45, -70.67, "cl"),
    city("São Paulo", "gru", -23.55, -46.63, "br"),
    // Africa and the Middle East
    city("Cape Town", "cpt", -33.92, 18.42, "za"),
    city("Johannesburg", "jnb", -26.20, 28.05, "za"),
    city("Tel Aviv", "tlv", 32.09, 34.78, "il"),
    city("Bahrain", "bah", 26.07, 50.56, "bh"),
    city("Dubai", "dxb", 25.20, 55.27, "ae"),
    // Asia and Oceania
    city("Mumbai", "bom", 19.08, 72.88, "in"),
    city("Hyderabad", "hyd", 17.39, 78.49, "in"),
    city("Singapore", "sin", 1.35, 103.82, "sg"),
    city("Jakarta", "jkt", -6.21, 106.85, "id"),
    city("Hong Kong", "hkg", 22.32, 114.17, "hk"),
    city("Taipei", "tpe", 25.03, 121.57, "tw"),
    city("Seoul", "sel", 37.57, 126.98, "kr"),
    city("Osaka", "osa", 34.69, 135.50, "jp"),
    city("Tokyo", "tyo", 35.68, 139.69, "jp"),
    city("Melbourne", "mel", -37.81, 144.96, "au"),
    city("Sydney", "syd", -33.87, 151.21, "au"),
];

/// The city of that name, as the picker's options carry it.
pub fn by_name(name: &str) -> Option<&'static City> {
    CITIES.iter().find(|c| c.name == name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_city_makes_a_valid_site() {
        let mut seen = std::collections::BTreeSet::new();
        for c in CITIES {
            assert!(seen.insert(c.site_id), "{} suggested twice", c.site_id);
            let site = serde_json::json!({
                "id": c.site_id, "name": c.name, "lat": c.lat, "lon": c.lon,
                "jurisdiction": c.jurisdiction,
            });
            let estate = serde_json::json!({
                "schema": 1, "name": "t", "sites": [site],
                "clusters": [{"id": "k", "site": c.site_id, "tier": "prod", "trust_zone": "general",
                    "health": "healthy", "cpu_total": 1, "memory_total_gib": 1}],
                "services": [],
            });
            berth_engine::front::read_estate(&estate.to_string())
                .unwrap_or_else(|e| panic!("{}: {e:?}", c.name));
            assert!(c.jurisdiction.bytes().all(|b| b.is_ascii_lowercase()));
        }
        assert!(CITIES.len() >= 40);
        assert_eq!(by_name("Frankfurt").unwrap().jurisdiction, "eu");
        assert_eq!(by_name("London").unwrap().jurisdiction, "uk");
    }
}
