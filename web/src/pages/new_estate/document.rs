//! The estate a New estate form describes, as data: the fields as typed,
//! the round trip suggested for each pair of sites, the document sent,
//! and where each of the engine's (or the server's) errors is shown.

use serde_json::{json, Map, Value};

use berth_engine::published_rtt::{self, Published};
use berth_engine::rtt::{great_circle_km, great_circle_rtt_ms};
use berth_engine::Policy;

#[cfg(test)]
use crate::cities;
use crate::pages::ms_text;

/// One error of the estate being written: the JSON pointer the engine (or
/// the server) names, its line where known, and what is wrong.
#[derive(Clone, Debug, PartialEq)]
pub struct Problem {
    pub path: String,
    pub line: Option<usize>,
    pub message: String,
}

impl Problem {
    /// From an error object as the engine's front end and the server's
    /// 422 bodies write it (`path`, `line`, `message`).
    pub fn of(v: &Value) -> Problem {
        Problem {
            path: v["path"].as_str().unwrap_or("/").to_string(),
            line: v["line"].as_u64().map(|l| l as usize),
            message: v["message"].as_str().unwrap_or_default().to_string(),
        }
    }

    /// From an error of a server's 422, as the API types it.
    pub fn from_input(e: &berth_api::InputError) -> Problem {
        Problem {
            path: if e.path.is_empty() {
                "/".to_string()
            } else {
                e.path.clone()
            },
            line: e.line.map(|l| l as usize),
            message: e.message.clone(),
        }
    }
}

/// What a site's inputs hold, as typed.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct SiteFields {
    pub id: String,
    pub name: String,
    pub lat: String,
    pub lon: String,
    pub jurisdiction: String,
}

/// What a cluster's inputs hold, as typed.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ClusterFields {
    pub id: String,
    pub name: String,
    pub site: String,
    pub tier: String,
    pub trust_zone: String,
    pub health: String,
    pub cpu_total: String,
    pub memory_total_gib: String,
    pub cpu_free: String,
    pub memory_free_gib: String,
}

/// A round trip between two sites as the form sends it: the link's
/// `rtt_ms` fact, class `reported`, with who or what reported it.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct RoundTripFields {
    pub a: String,
    pub b: String,
    pub ms: String,
    pub source: String,
}

/// What the page knows of a pair of sites before anyone types.
#[derive(Clone, Debug, PartialEq)]
pub enum Suggestion {
    /// Both sites lie in regions of the published table.
    Published(Published),
    /// Both have coordinates: the great-circle estimate (docs/advice.md
    /// §3 rung 5), ms.
    Estimate(f64),
    /// A site without coordinates: nothing to go on.
    Nothing,
}

/// A site's coordinates, when both inputs read as numbers.
fn coords(s: &SiteFields) -> Option<(f64, f64)> {
    let lat: f64 = s.lat.trim().parse().ok()?;
    let lon: f64 = s.lon.trim().parse().ok()?;
    ((-90.0..=90.0).contains(&lat) && (-180.0..=180.0).contains(&lon)).then_some((lat, lon))
}

/// The published figure for the pair, else the estimate, else nothing.
pub fn suggestion(a: &SiteFields, b: &SiteFields) -> Suggestion {
    match (coords(a), coords(b)) {
        (Some(pa), Some(pb)) => match published_rtt::published_rtt(pa, pb) {
            Some(p) => Suggestion::Published(p),
            None => Suggestion::Estimate(great_circle_rtt_ms(great_circle_km(pa, pb))),
        },
        _ => Suggestion::Nothing,
    }
}

/// The round trip the form sends for a pair: what was typed (reported by
/// `user`), else the published figure (reported, its source named);
/// nothing for a pair left empty or cleared, which stays unknown.
pub fn round_trip(
    a: &str,
    b: &str,
    typed: Option<&str>,
    suggested: &Suggestion,
    user: &str,
) -> Option<RoundTripFields> {
    let (ms, source) = match (typed, suggested) {
        (Some(t), _) if t.trim().is_empty() => return None,
        (Some(t), _) => (t.trim().to_string(), format!("user:{user}")),
        (None, Suggestion::Published(p)) => (ms_text(p.ms), p.source()),
        (None, _) => return None,
    };
    Some(RoundTripFields {
        a: a.trim().to_string(),
        b: b.trim().to_string(),
        ms,
        source,
    })
}

/// What leaving the pair empty costs, in the policy's words (docs/advice.md
/// §2 margins, §3 rungs 5 and 6).
pub fn empty_cost(suggested: &Suggestion) -> String {
    let p = Policy::default();
    match suggested {
        Suggestion::Estimate(ms) => format!(
            "Left empty, the engine estimates {} ms from the distance: inferred (±{:.0} %), so a move resting on it is at best inferred.",
            ms_text((ms * 10.0).round() / 10.0),
            p.margins.inferred * 100.0
        ),
        _ => format!(
            "Left empty, it is unknown: the engine assumes {} ms as a guess (±{:.0} %), and a move resting on it is shown apart as a guess, never recommended.",
            ms_text(p.rtt.unknown_ms),
            p.margins.guessed * 100.0
        ),
    }
}

/// The site fields that have an input of their own.
const SITE_INPUTS: &[&str] = &["id", "name", "lat", "lon", "jurisdiction"];
/// The cluster fields that have an input of their own.
const CLUSTER_INPUTS: &[&str] = &[
    "id",
    "name",
    "site",
    "tier",
    "trust_zone",
    "health",
    "cpu_total",
    "memory_total_gib",
    "cpu_free",
    "memory_free_gib",
];

/// An id from a name, as the server makes one when none is given:
/// lowercase letters and digits, every run of anything else one '-', at
/// most 64 characters (the server's limit for an estate id).
pub fn slug(name: &str) -> String {
    // The server's longest estate id.
    const MAX_ID_CHARS: usize = 64;
    let mut s = String::new();
    for c in name.chars() {
        if c.is_ascii_alphanumeric() {
            s.push(c.to_ascii_lowercase());
        } else if !s.is_empty() && !s.ends_with('-') {
            s.push('-');
        }
    }
    let s: String = s.trim_end_matches('-').chars().take(MAX_ID_CHARS).collect();
    s.trim_end_matches('-').to_string()
}

/// Why the server would refuse this estate id, if it would (the rule of
/// its `check_id`: 1–64 of a–z, 0–9, '-', '_', starting with a letter or
/// digit).
pub fn id_problem(id: &str) -> Option<String> {
    let ok = !id.is_empty()
        && id.len() <= 64
        && id
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-' || b == b'_')
        && id.as_bytes()[0].is_ascii_alphanumeric();
    (!ok).then(|| {
        "expected 1–64 characters of a–z, 0–9, '-' and '_', starting with a letter or digit"
            .to_string()
    })
}

/// A numeric input's value for the file: a number when it reads as one,
/// absent when blank, and otherwise the text itself, so the engine names
/// the field ("expected a number, found the string …") at its place.
fn number_or_text(text: &str) -> Option<Value> {
    let t = text.trim();
    if t.is_empty() {
        return None;
    }
    match t.parse::<f64>() {
        Ok(x) if x.is_finite() => Some(json!(x)),
        _ => Some(Value::String(t.to_string())),
    }
}

/// The estate file the form describes (docs/estate-format.md): blank
/// optional fields left out, so the engine says what is missing.
pub fn estate_document(
    name: &str,
    sites: &[SiteFields],
    clusters: &[ClusterFields],
    round_trips: &[RoundTripFields],
) -> Value {
    let text = |m: &mut Map<String, Value>, k: &str, v: &str| {
        if !v.trim().is_empty() {
            m.insert(k.into(), Value::String(v.trim().to_string()));
        }
    };
    let number = |m: &mut Map<String, Value>, k: &str, v: &str| {
        if let Some(x) = number_or_text(v) {
            m.insert(k.into(), x);
        }
    };
    let sites: Vec<Value> = sites
        .iter()
        .map(|s| {
            let mut m = Map::new();
            text(&mut m, "id", &s.id);
            text(&mut m, "name", &s.name);
            number(&mut m, "lat", &s.lat);
            number(&mut m, "lon", &s.lon);
            text(&mut m, "jurisdiction", &s.jurisdiction);
            Value::Object(m)
        })
        .collect();
    let clusters: Vec<Value> = clusters
        .iter()
        .map(|c| {
            let mut m = Map::new();
            text(&mut m, "id", &c.id);
            text(&mut m, "name", &c.name);
            text(&mut m, "site", &c.site);
            text(&mut m, "tier", &c.tier);
            text(&mut m, "trust_zone", &c.trust_zone);
            text(&mut m, "health", &c.health);
            number(&mut m, "cpu_total", &c.cpu_total);
            number(&mut m, "memory_total_gib", &c.memory_total_gib);
            number(&mut m, "cpu_free", &c.cpu_free);
            number(&mut m, "memory_free_gib", &c.memory_free_gib);
            Value::Object(m)
        })
        .collect();
    let links: Vec<Value> = round_trips
        .iter()
        .map(|r| {
            let mut fact = Map::new();
            if let Some(x) = number_or_text(&r.ms) {
                fact.insert("value".into(), x);
            }
            fact.insert("class".into(), json!("reported"));
            fact.insert("source".into(), json!(r.source));
            json!({"a": r.a, "b": r.b, "rtt_ms": Value::Object(fact)})
        })
        .collect();
    let mut doc = json!({
        "schema": 1,
        "name": name.trim(),
        "sites": sites,
        "clusters": clusters,
        "services": [],
    });
    if !links.is_empty() {
        doc["links"] = Value::Array(links);
    }
    doc
}

/// The engine's errors for the document (none when it loads).
pub fn engine_problems(doc: &Value) -> Vec<Problem> {
    match berth_engine::front::read_estate(&doc.to_string()) {
        Ok(_) => Vec::new(),
        Err(errors) => errors.iter().map(Problem::of).collect(),
    }
}

/// Where on the form an error is shown: the pointer of the input it is
/// about (`/clusters/0/cpu_total`, also for a fact's inner fields such as
/// `/clusters/0/cpu_free/class` and for a missing required field, which
/// the engine reports on the entry), else its site or cluster
/// (`/sites/1`), else its list (`/sites`), `/name` for the estate's
/// name, and "" for the list at the top.
pub fn anchor(p: &Problem, n_sites: usize, n_clusters: usize) -> String {
    let parts: Vec<&str> = p.path.trim_start_matches('/').split('/').collect();
    let missing = p
        .message
        .strip_prefix("missing required field \"")
        .and_then(|m| m.split('"').next());
    match parts.as_slice() {
        ["name", ..] => "/name".into(),
        ["links", i, ..] => format!("/links/{i}"),
        [list @ ("sites" | "clusters")] => format!("/{list}"),
        [list @ ("sites" | "clusters"), i, rest @ ..] => {
            let (n, inputs) = if *list == "sites" {
                (n_sites, SITE_INPUTS)
            } else {
                (n_clusters, CLUSTER_INPUTS)
            };
            match i.parse::<usize>() {
                Ok(i) if i < n => {
                    let field = rest.first().copied().or(missing);
                    match field {
                        Some(f) if inputs.contains(&f) => format!("/{list}/{i}/{f}"),
                        _ => format!("/{list}/{i}"),
                    }
                }
                _ => format!("/{list}"),
            }
        }
        _ => String::new(),
    }
}

/// "expected at least one cluster" while the form has clusters: the
/// engine says it when every entry was refused for its own errors, which
/// are shown at the entries; on the form it would read as a contradiction.
pub(super) fn empty_list_echo(p: &Problem, n_sites: usize, n_clusters: usize) -> bool {
    let n = match p.path.as_str() {
        "/sites" => n_sites,
        "/clusters" => n_clusters,
        _ => return false,
    };
    n > 0 && p.message.starts_with("expected at least one")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn site(id: &str) -> SiteFields {
        let c = cities::by_name("Frankfurt").unwrap();
        SiteFields {
            id: id.into(),
            name: c.name.into(),
            lat: c.lat.to_string(),
            lon: c.lon.to_string(),
            jurisdiction: c.jurisdiction.into(),
        }
    }

    fn cluster(id: &str, site: &str, cpu: &str) -> ClusterFields {
        ClusterFields {
            id: id.into(),
            site: site.into(),
            tier: "prod".into(),
            trust_zone: "general".into(),
            health: "healthy".into(),
            cpu_total: cpu.into(),
            memory_total_gib: "128".into(),
            ..Default::default()
        }
    }

    #[test]
    fn ids_come_from_names_as_the_server_makes_them() {
        assert_eq!(slug("Lab"), "lab");
        assert_eq!(slug("  Acme Retail (EU)  "), "acme-retail-eu");
        assert_eq!(id_problem(&slug("Lab")), None);
        assert!(id_problem("").is_some());
        assert!(id_problem("-lab").is_some());
        assert!(id_problem("Lab").is_some());
    }

    #[test]
    fn a_complete_form_is_an_estate_the_engine_loads() {
        let doc = estate_document("Lab", &[site("fra")], &[cluster("c1", "fra", "32")], &[]);
        assert_eq!(engine_problems(&doc), vec![]);
        assert_eq!(doc["clusters"][0]["cpu_total"], json!(32.0));
        assert!(
            doc["clusters"][0].get("cpu_free").is_none(),
            "blank is unknown"
        );
    }

    #[test]
    fn each_error_lands_on_its_input() {
        // The engine reports an entry refused for its own error once, so
        // each mistake is on an entry of its own.
        let doc = estate_document(
            "Lab",
            &[site("fra")],
            &[
                cluster("c1", "frk", "32"),
                cluster("c2", "fra", "lots"),
                ClusterFields::default(),
            ],
            &[],
        );
        let problems: Vec<Problem> = engine_problems(&doc)
            .into_iter()
            .filter(|p| !empty_list_echo(p, 1, 3))
            .collect();
        let places: Vec<String> = problems.iter().map(|p| anchor(p, 1, 3)).collect();
        for want in [
            "/clusters/0/site",
            "/clusters/1/cpu_total",
            "/clusters/2/id",
        ] {
            assert!(places.contains(&want.to_string()), "{want}: {problems:?}");
        }
        // A missing required field is reported on the entry, shown at
        // the field's input; nothing is left for the list at the top.
        assert!(!places.contains(&String::new()), "{problems:?}");
        let p = |path: &str| Problem {
            path: path.into(),
            line: None,
            message: "x".into(),
        };
        assert_eq!(
            anchor(&p("/clusters/0/cpu_free/class"), 1, 1),
            "/clusters/0/cpu_free"
        );
        assert_eq!(anchor(&p("/sites/0"), 1, 1), "/sites/0");
        assert_eq!(anchor(&p("/sites"), 0, 1), "/sites");
        assert_eq!(anchor(&p("/sites/7/lat"), 1, 1), "/sites");
        assert_eq!(anchor(&p("/name"), 1, 1), "/name");
        assert_eq!(anchor(&p("/"), 1, 1), "");
    }

    fn city(name: &str) -> SiteFields {
        let c = cities::by_name(name).unwrap();
        SiteFields {
            id: c.site_id.into(),
            name: c.name.into(),
            lat: format!("{:.2}", c.lat),
            lon: format!("{:.2}", c.lon),
            jurisdiction: c.jurisdiction.into(),
        }
    }

    #[test]
    fn a_published_pair_is_prefilled_as_reported_with_its_source() {
        let (fra, dub) = (city("Frankfurt"), city("Dublin"));
        let s = suggestion(&fra, &dub);
        let Suggestion::Published(p) = &s else {
            panic!("{s:?}")
        };
        assert_eq!(p.ms, 26.5);
        let r = round_trip("fra", "dub", None, &s, "otto").unwrap();
        assert_eq!(
            (r.ms.as_str(), r.source.as_str()),
            ("26.5", p.source().as_str())
        );
        // Typed wins, reported by the user; cleared is unknown.
        let t = round_trip("fra", "dub", Some("31"), &s, "otto").unwrap();
        assert_eq!((t.ms.as_str(), t.source.as_str()), ("31", "user:otto"));
        assert_eq!(round_trip("fra", "dub", Some("  "), &s, "otto"), None);

        let doc = estate_document(
            "Lab",
            &[fra, dub],
            &[cluster("c1", "fra", "32"), cluster("c2", "dub", "16")],
            &[r],
        );
        assert_eq!(engine_problems(&doc), vec![]);
        let estate = berth_engine::front::read_estate(&doc.to_string()).unwrap();
        assert_eq!(estate.links.len(), 1);
        let f = &estate.links[0].rtt_ms;
        assert_eq!(f.value, Some(26.5));
        assert_eq!(f.class, berth_engine::fact::Class::Reported);
        assert!(
            f.source.contains("Germany West Central ↔ North Europe"),
            "{}",
            f.source
        );
    }

    #[test]
    fn without_a_published_figure_the_estimate_is_only_shown_and_empty_costs_confidence() {
        // Stockholm is no region of the table: the estimate, never sent.
        let (sto, fra) = (city("Stockholm"), city("Frankfurt"));
        let s = suggestion(&sto, &fra);
        let Suggestion::Estimate(ms) = s else {
            panic!("{s:?}")
        };
        assert!((15.0..30.0).contains(&ms), "{ms}");
        assert_eq!(round_trip("sto", "fra", None, &s, "otto"), None);
        assert!(
            empty_cost(&s).contains("inferred (±35 %)"),
            "{}",
            empty_cost(&s)
        );
        // Without coordinates: unknown, the 80 ms guess.
        let bare = SiteFields {
            id: "x".into(),
            ..Default::default()
        };
        let n = suggestion(&bare, &fra);
        assert_eq!(n, Suggestion::Nothing);
        assert!(
            empty_cost(&n).contains("80 ms as a guess (±100 %)"),
            "{}",
            empty_cost(&n)
        );
        // A bad figure is the engine's to name, at the link.
        let bad = round_trip("sto", "fra", Some("fast"), &s, "otto").unwrap();
        let doc = estate_document("Lab", &[sto, fra], &[cluster("c1", "fra", "32")], &[bad]);
        let problems = engine_problems(&doc);
        assert!(
            problems.iter().any(|p| anchor(p, 2, 1) == "/links/0"),
            "{problems:?}"
        );
    }
}
