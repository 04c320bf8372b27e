//! New estate: a name and id, sites (each from a city picker, every field
//! still editable), the round trip between each pair of sites (pre-filled
//! from a published table where both sites lie in its regions) and
//! clusters, checked in the browser by the engine the server loads estates
//! with — each error shown next to the field it is about — then created
//! with `POST /api/estates?id=…`.

use leptos::prelude::*;
use serde_json::{json, Map, Value};

use berth_engine::published_rtt::{self, Published};
use berth_engine::rtt::{great_circle_km, great_circle_rtt_ms};
use berth_engine::Policy;

use crate::cities::{self, CITIES};
use crate::client;
use crate::common::Auth;

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

/// Milliseconds as an input shows them: whole when whole, else one
/// decimal (the table's means are whole or halves).
pub fn ms_text(ms: f64) -> String {
    if ms.fract() == 0.0 {
        format!("{ms:.0}")
    } else {
        format!("{ms:.1}")
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
fn empty_list_echo(p: &Problem, n_sites: usize, n_clusters: usize) -> bool {
    let n = match p.path.as_str() {
        "/sites" => n_sites,
        "/clusters" => n_clusters,
        _ => return false,
    };
    n > 0 && p.message.starts_with("expected at least one")
}

#[derive(Clone, Copy)]
struct SiteRow {
    key: usize,
    id: RwSignal<String>,
    name: RwSignal<String>,
    lat: RwSignal<String>,
    lon: RwSignal<String>,
    jurisdiction: RwSignal<String>,
}

impl SiteRow {
    fn new(key: usize) -> SiteRow {
        SiteRow {
            key,
            id: RwSignal::new(String::new()),
            name: RwSignal::new(String::new()),
            lat: RwSignal::new(String::new()),
            lon: RwSignal::new(String::new()),
            jurisdiction: RwSignal::new(String::new()),
        }
    }
    /// The fields as typed, read as a reactive dependency.
    fn fields_tracked(&self) -> SiteFields {
        SiteFields {
            id: self.id.get(),
            name: self.name.get(),
            lat: self.lat.get(),
            lon: self.lon.get(),
            jurisdiction: self.jurisdiction.get(),
        }
    }
    fn fields(&self) -> SiteFields {
        SiteFields {
            id: self.id.get_untracked(),
            name: self.name.get_untracked(),
            lat: self.lat.get_untracked(),
            lon: self.lon.get_untracked(),
            jurisdiction: self.jurisdiction.get_untracked(),
        }
    }
}

#[derive(Clone, Copy)]
struct ClusterRow {
    key: usize,
    id: RwSignal<String>,
    name: RwSignal<String>,
    site: RwSignal<String>,
    tier: RwSignal<String>,
    trust_zone: RwSignal<String>,
    health: RwSignal<String>,
    cpu_total: RwSignal<String>,
    memory_total_gib: RwSignal<String>,
    cpu_free: RwSignal<String>,
    memory_free_gib: RwSignal<String>,
}

impl ClusterRow {
    fn new(key: usize) -> ClusterRow {
        let text = |s: &str| RwSignal::new(s.to_string());
        ClusterRow {
            key,
            id: text(""),
            name: text(""),
            site: text(""),
            // The common case, as in the sample: a production cluster in
            // the general trust zone, healthy.
            tier: text("prod"),
            trust_zone: text("general"),
            health: text("healthy"),
            cpu_total: text(""),
            memory_total_gib: text(""),
            cpu_free: text(""),
            memory_free_gib: text(""),
        }
    }
    fn fields(&self) -> ClusterFields {
        ClusterFields {
            id: self.id.get_untracked(),
            name: self.name.get_untracked(),
            site: self.site.get_untracked(),
            tier: self.tier.get_untracked(),
            trust_zone: self.trust_zone.get_untracked(),
            health: self.health.get_untracked(),
            cpu_total: self.cpu_total.get_untracked(),
            memory_total_gib: self.memory_total_gib.get_untracked(),
            cpu_free: self.cpu_free.get_untracked(),
            memory_free_gib: self.memory_free_gib.get_untracked(),
        }
    }
}

/// The form's errors, each with the place it is shown at.
#[derive(Clone, Copy)]
struct Placed(RwSignal<Vec<(String, Problem)>>);

impl Placed {
    fn at(self, place: String) -> impl Fn() -> Vec<Problem> {
        move || {
            self.0
                .get()
                .into_iter()
                .filter(|(a, _)| *a == place)
                .map(|(_, p)| p)
                .collect()
        }
    }
}

/// The errors shown at one place, under its input.
#[component]
fn Errors(problems: Signal<Vec<Problem>>) -> impl IntoView {
    move || {
        problems
            .get()
            .into_iter()
            .map(|p| view! { <span class="error field-error" data-path=p.path.clone()>{p.message}</span> })
            .collect_view()
    }
}

#[component]
pub fn NewEstate() -> impl IntoView {
    let auth = expect_context::<Auth>();
    let name = RwSignal::new(String::new());
    // The id follows the name (its slug) until someone edits it.
    let id_typed = RwSignal::new(None::<String>);
    let estate_id = move || id_typed.get().unwrap_or_else(|| slug(&name.get()));
    let next_key = StoredValue::new(2usize);
    let sites = RwSignal::new(vec![SiteRow::new(0)]);
    let clusters = RwSignal::new(vec![ClusterRow::new(1)]);
    let placed = Placed(RwSignal::new(Vec::new()));
    // What was typed for each pair of sites (by their rows' keys); a pair
    // absent here shows the published figure, if any.
    let typed_rtt = RwSignal::new(std::collections::BTreeMap::<(usize, usize), String>::new());
    let user = move || match auth.session.get_untracked() {
        Some(Some(s)) => s.subject,
        _ => "unknown".to_string(),
    };
    let checked = RwSignal::new(None::<String>);
    let error = RwSignal::new(None::<String>);
    // The id of the estate once created: the form gives way to its next
    // steps.
    let created = RwSignal::new(None::<String>);
    let busy = RwSignal::new(false);
    let may_operate = move || matches!(auth.session.get(), Some(Some(s)) if s.may_operate());

    let fresh_key = move || {
        let k = next_key.get_value();
        next_key.set_value(k + 1);
        k
    };
    // The document and the id problems as they stand, all shown at once.
    let check = move || -> Option<Value> {
        let s: Vec<SiteFields> = sites.get_untracked().iter().map(SiteRow::fields).collect();
        let c: Vec<ClusterFields> = clusters
            .get_untracked()
            .iter()
            .map(ClusterRow::fields)
            .collect();
        // Every pair of sites with ids, in the form's order; the link of
        // each pair that has a value, and which pair each link is.
        let rows = sites.get_untracked();
        let typed = typed_rtt.get_untracked();
        let mut pair_of_link = Vec::new();
        let mut trips = Vec::new();
        for (i, ra) in rows.iter().enumerate() {
            for rb in &rows[i + 1..] {
                let (fa, fb) = (ra.fields(), rb.fields());
                if fa.id.trim().is_empty() || fb.id.trim().is_empty() {
                    continue;
                }
                let t = typed.get(&(ra.key, rb.key)).map(String::as_str);
                if let Some(r) = round_trip(&fa.id, &fb.id, t, &suggestion(&fa, &fb), &user()) {
                    pair_of_link.push((ra.key, rb.key));
                    trips.push(r);
                }
            }
        }
        let doc = estate_document(&name.get_untracked(), &s, &c, &trips);
        let mut found: Vec<(String, Problem)> = engine_problems(&doc)
            .into_iter()
            .filter(|p| !empty_list_echo(p, s.len(), c.len()))
            .map(|p| {
                let mut place = anchor(&p, s.len(), c.len());
                // A link's error is shown at its pair's input.
                if let Some(i) = place
                    .strip_prefix("/links/")
                    .and_then(|i| i.parse::<usize>().ok())
                {
                    place = match pair_of_link.get(i) {
                        Some((ka, kb)) => format!("/pair/{ka}-{kb}"),
                        None => String::new(),
                    };
                }
                (place, p)
            })
            .collect();
        let id = id_typed
            .get_untracked()
            .unwrap_or_else(|| slug(&name.get_untracked()));
        if let Some(m) = id_problem(&id) {
            let p = Problem {
                path: "/id".into(),
                line: None,
                message: format!("estate id {id:?}: {m}"),
            };
            found.insert(0, ("/id".into(), p));
        }
        checked.set(
            found
                .is_empty()
                .then(|| "The engine accepts this estate.".to_string()),
        );
        let ok = found.is_empty();
        placed.0.set(found);
        ok.then_some(doc)
    };
    let on_check = move |_| {
        error.set(None);
        check();
    };
    let on_create = move |ev: leptos::ev::SubmitEvent| {
        ev.prevent_default();
        error.set(None);
        let Some(doc) = check() else { return };
        let id = id_typed
            .get_untracked()
            .unwrap_or_else(|| slug(&name.get_untracked()));
        busy.set(true);
        leptos::task::spawn_local(async move {
            let path = berth_api::endpoint::create_estate().query("id", &id);
            match client::request("POST", &path, Some(doc.to_string())).await {
                // The next steps, read from the estate just created.
                Ok(_) => {
                    auth.estates.update(|v| {
                        if !v.iter().any(|(e, _)| *e == id) {
                            v.push((id.clone(), name.get_untracked().trim().to_string()));
                        }
                    });
                    auth.estate.set(Some(id.clone()));
                    busy.set(false);
                    created.set(Some(id));
                }
                Err(f) => {
                    let (n_sites, n_clusters) =
                        (sites.get_untracked().len(), clusters.get_untracked().len());
                    placed.0.set(
                        f.errors
                            .iter()
                            .map(Problem::from_input)
                            .map(|p| (anchor(&p, n_sites, n_clusters), p))
                            .collect(),
                    );
                    checked.set(None);
                    error.set(Some(f.message));
                    busy.set(false);
                }
            }
        });
    };
    let add_site = move |_| {
        let k = fresh_key();
        sites.update(|v| v.push(SiteRow::new(k)));
    };
    let add_cluster = move |_| {
        let k = fresh_key();
        let row = ClusterRow::new(k);
        // A new cluster starts at the last site entered.
        if let Some(s) = sites.get_untracked().last() {
            row.site.set(s.id.get_untracked());
        }
        clusters.update(|v| v.push(row));
    };

    let site_index =
        move |key: usize| move || sites.get().iter().position(|r| r.key == key).unwrap_or(0);
    let cluster_index = move |key: usize| {
        move || {
            clusters
                .get()
                .iter()
                .position(|r| r.key == key)
                .unwrap_or(0)
        }
    };
    let top = Signal::derive(placed.at(String::new()));

    let site_view = move |row: SiteRow| {
        let k = row.key;
        let index = site_index(k);
        let field = move |f: &'static str| {
            let index = site_index(k);
            Signal::derive(move || {
                let place = format!("/sites/{}/{f}", index());
                placed.at(place)()
            })
        };
        let pick = move |ev: leptos::ev::Event| {
            if let Some(c) = cities::by_name(&event_target_value(&ev)) {
                row.id.set(c.site_id.to_string());
                row.name.set(c.name.to_string());
                row.lat.set(format!("{:.2}", c.lat));
                row.lon.set(format!("{:.2}", c.lon));
                row.jurisdiction.set(c.jurisdiction.to_string());
            }
        };
        let id_for = move |f: &str| format!("site-{k}-{f}");
        let row_errors = Signal::derive(move || placed.at(format!("/sites/{}", site_index(k)()))());
        let label = move || format!("Site {}", index() + 1);
        view! {
            <fieldset class="entry" data-testid="site">
                <legend>{label}</legend>
                <div class="entry-grid">
                    <div class="field wide">
                        <label for=id_for("city")>"City"</label>
                        <select id=id_for("city") on:change=pick>
                            <option value="">"— pick a city to fill the fields —"</option>
                            {CITIES.iter().map(|c| view! { <option value=c.name>{format!("{} ({})", c.name, c.jurisdiction)}</option> }).collect_view()}
                        </select>
                    </div>
                    <div class="field">
                        <label for=id_for("id")>"Site id"</label>
                        <input id=id_for("id") bind:value=row.id/>
                        <Errors problems=field("id")/>
                    </div>
                    <div class="field">
                        <label for=id_for("name")>"Site name"</label>
                        <input id=id_for("name") bind:value=row.name/>
                        <Errors problems=field("name")/>
                    </div>
                    <div class="field">
                        <label for=id_for("lat")>"Latitude"</label>
                        <input id=id_for("lat") inputmode="decimal" bind:value=row.lat/>
                        <Errors problems=field("lat")/>
                    </div>
                    <div class="field">
                        <label for=id_for("lon")>"Longitude"</label>
                        <input id=id_for("lon") inputmode="decimal" bind:value=row.lon/>
                        <Errors problems=field("lon")/>
                    </div>
                    <div class="field">
                        <label for=id_for("jur")>"Jurisdiction"</label>
                        <input id=id_for("jur") bind:value=row.jurisdiction/>
                        <Errors problems=field("jurisdiction")/>
                    </div>
                </div>
                <Errors problems=row_errors/>
                <button type="button" class="small" on:click=move |_| sites.update(|v| v.retain(|r| r.key != k))>
                    {move || format!("Remove site {}", index() + 1)}
                </button>
            </fieldset>
        }
    };

    // The pairs of sites, by their rows' keys, in the form's order.
    let pairs = move || {
        let rows = sites.get();
        let mut out = Vec::new();
        for (i, a) in rows.iter().enumerate() {
            for b in &rows[i + 1..] {
                out.push((a.key, b.key));
            }
        }
        out
    };
    let pair_view = move |(ka, kb): (usize, usize)| {
        let rows = sites.get_untracked();
        let (Some(ra), Some(rb)) = (
            rows.iter().find(|r| r.key == ka).copied(),
            rows.iter().find(|r| r.key == kb).copied(),
        ) else {
            return ().into_any();
        };
        let name_of = move |r: SiteRow| {
            let id = r.id.get();
            if id.trim().is_empty() {
                format!("site {}", site_index(r.key)() + 1)
            } else {
                id
            }
        };
        let suggested = Memo::new(move |_| suggestion(&ra.fields_tracked(), &rb.fields_tracked()));
        let typed = move || typed_rtt.with(|m| m.get(&(ka, kb)).cloned());
        let value = move || {
            typed().unwrap_or_else(|| match suggested.get() {
                Suggestion::Published(p) => ms_text(p.ms),
                _ => String::new(),
            })
        };
        let placeholder = move || match suggested.get() {
            Suggestion::Estimate(ms) => {
                format!("≈ {} (estimate)", ms_text((ms * 10.0).round() / 10.0))
            }
            _ => "unknown".to_string(),
        };
        let note = move || {
            match (typed(), suggested.get()) {
            (Some(t), s) if !t.trim().is_empty() => {
                let mut line = format!("Typed by you: stored as reported, source user:{}.", user());
                if let Suggestion::Published(p) = s {
                    line.push_str(&format!(" The published figure is {} ms ({}).", ms_text(p.ms), p.words()));
                }
                view! { <span data-kind="typed">{line}</span> }.into_any()
            }
            (None, Suggestion::Published(p)) => view! {
                <span data-kind="published">
                    "Pre-filled from "{p.words()}" ("
                    <a href=published_rtt::SOURCE_URL target="_blank" rel="noopener">"source"</a>
                    "): stored as reported, with that source. Change it if you know better; clear it to leave it unknown."
                </span>
            }.into_any(),
            (_, s) => view! { <span data-kind="empty">{empty_cost(&s)}</span> }.into_any(),
        }
        };
        let id = format!("pair-{ka}-{kb}");
        view! {
            <div class="field wide round-trip" data-testid="round-trip">
                <label for=id.clone()>{move || format!("Round trip {} ↔ {} (ms)", name_of(ra), name_of(rb))}</label>
                <input id=id inputmode="decimal" prop:value=value placeholder=placeholder
                    on:input=move |ev| {
                        let v = event_target_value(&ev);
                        typed_rtt.update(|m| { m.insert((ka, kb), v); });
                    }/>
                <span class="hint" data-testid="rtt-source">{note}</span>
                <Errors problems=Signal::derive(placed.at(format!("/pair/{ka}-{kb}")))/>
            </div>
        }
        .into_any()
    };

    let cluster_view = move |row: ClusterRow| {
        let k = row.key;
        let index = cluster_index(k);
        let field = move |f: &'static str| {
            let index = cluster_index(k);
            Signal::derive(move || placed.at(format!("/clusters/{}/{f}", index()))())
        };
        let id_for = move |f: &str| format!("cluster-{k}-{f}");
        let row_errors =
            Signal::derive(move || placed.at(format!("/clusters/{}", cluster_index(k)()))());
        let label = move || format!("Cluster {}", index() + 1);
        let site_options = move || {
            let chosen = row.site.get();
            let mut ids: Vec<String> = sites
                .get()
                .iter()
                .map(|s| s.id.get())
                .filter(|s| !s.trim().is_empty())
                .collect();
            // A site typed here that is no longer in the list stays
            // selectable, so the engine can name it as unknown.
            if !chosen.is_empty() && !ids.contains(&chosen) {
                ids.push(chosen.clone());
            }
            view! {
                <option value="" selected=chosen.is_empty()>"— choose a site —"</option>
                {ids.into_iter().map(|id| {
                    let selected = id == chosen;
                    view! { <option value=id.clone() selected=selected>{id.clone()}</option> }
                }).collect_view()}
            }
        };
        view! {
            <fieldset class="entry" data-testid="cluster">
                <legend>{label}</legend>
                <div class="entry-grid">
                    <div class="field">
                        <label for=id_for("id")>"Cluster id"</label>
                        <input id=id_for("id") bind:value=row.id/>
                        <Errors problems=field("id")/>
                    </div>
                    <div class="field">
                        <label for=id_for("name")>"Cluster name"</label>
                        <input id=id_for("name") bind:value=row.name/>
                        <Errors problems=field("name")/>
                    </div>
                    <div class="field">
                        <label for=id_for("site")>"Site"</label>
                        <select id=id_for("site") on:change=move |ev| row.site.set(event_target_value(&ev)) prop:value=move || row.site.get()>
                            {site_options}
                        </select>
                        <Errors problems=field("site")/>
                    </div>
                    <div class="field">
                        <label for=id_for("tier")>"Tier"</label>
                        <input id=id_for("tier") list="tiers" bind:value=row.tier/>
                        <Errors problems=field("tier")/>
                    </div>
                    <div class="field">
                        <label for=id_for("zone")>"Trust zone"</label>
                        <input id=id_for("zone") list="zones" bind:value=row.trust_zone/>
                        <Errors problems=field("trust_zone")/>
                    </div>
                    <div class="field">
                        <label for=id_for("health")>"Health"</label>
                        <select id=id_for("health") on:change=move |ev| row.health.set(event_target_value(&ev)) prop:value=move || row.health.get()>
                            <option value="healthy">"healthy"</option>
                            <option value="watch">"watch"</option>
                            <option value="draining">"draining"</option>
                            <option value="down">"down"</option>
                        </select>
                        <Errors problems=field("health")/>
                    </div>
                    <div class="field">
                        <label for=id_for("cpu")>"CPU total (cores)"</label>
                        <input id=id_for("cpu") inputmode="decimal" bind:value=row.cpu_total/>
                        <Errors problems=field("cpu_total")/>
                    </div>
                    <div class="field">
                        <label for=id_for("mem")>"Memory total (GiB)"</label>
                        <input id=id_for("mem") inputmode="decimal" bind:value=row.memory_total_gib/>
                        <Errors problems=field("memory_total_gib")/>
                    </div>
                    <div class="field">
                        <label for=id_for("cpu-free")>"CPU free (cores, blank = unknown)"</label>
                        <input id=id_for("cpu-free") inputmode="decimal" bind:value=row.cpu_free/>
                        <Errors problems=field("cpu_free")/>
                    </div>
                    <div class="field">
                        <label for=id_for("mem-free")>"Memory free (GiB, blank = unknown)"</label>
                        <input id=id_for("mem-free") inputmode="decimal" bind:value=row.memory_free_gib/>
                        <Errors problems=field("memory_free_gib")/>
                    </div>
                </div>
                <Errors problems=row_errors/>
                <button type="button" class="small" on:click=move |_| clusters.update(|v| v.retain(|r| r.key != k))>
                    {move || format!("Remove cluster {}", index() + 1)}
                </button>
            </fieldset>
        }
    };

    let form = move || {
        view! {
                <p class="hint">"Describe where your clusters run. Services come later, from Kubernetes manifests on the Import page (or an estate file). Every field is checked by the same engine the server uses before anything is sent."</p>
                <datalist id="tiers"><option value="prod"/><option value="staging"/><option value="dev"/><option value="edge"/></datalist>
                <datalist id="zones"><option value="general"/><option value="pci"/><option value="restricted"/></datalist>
                <form class="new-estate" on:submit=on_create novalidate>
                    {move || {
                        let list = top.get();
                        (!list.is_empty()).then(|| view! {
                            <ul class="error" role="alert" data-testid="form-errors">
                                {list.into_iter().map(|p| view! { <li>{format!("{}: {}", p.path, p.message)}</li> }).collect_view()}
                            </ul>
                        })
                    }}
                    <div class="entry-grid">
                        <div class="field">
                            <label for="estate-name">"Estate name"</label>
                            <input id="estate-name" bind:value=name/>
                            <Errors problems=Signal::derive(placed.at("/name".into()))/>
                        </div>
                        <div class="field">
                            <label for="estate-id">"Estate id"</label>
                            <input id="estate-id" prop:value=estate_id on:input=move |ev| id_typed.set(Some(event_target_value(&ev)))/>
                            <span class="hint">"Used in addresses; from the name unless you change it."</span>
                            <Errors problems=Signal::derive(placed.at("/id".into()))/>
                        </div>
                    </div>
                    <h2>"Sites"</h2>
                    <Errors problems=Signal::derive(placed.at("/sites".into()))/>
                    <For each=move || sites.get() key=|r| r.key children=site_view/>
                    <button type="button" on:click=add_site>"Add a site"</button>
                    {move || (sites.with(Vec::len) > 1).then(|| view! {
                        <h2>"Round trips between sites"</h2>
                        <p class="hint">"How long a request takes to go from one site to the other and back. Where both sites lie in cloud regions of a published table, its median is filled in; a figure you know better wins; a pair left empty stays unknown, and each pair says what that costs."</p>
                    })}
                    <div class="round-trips" data-testid="round-trips">
                        <For each=pairs key=|k| *k children=pair_view/>
                    </div>
                    <h2>"Clusters"</h2>
                    <Errors problems=Signal::derive(placed.at("/clusters".into()))/>
                    <For each=move || clusters.get() key=|r| r.key children=cluster_view/>
                    <button type="button" on:click=add_cluster>"Add a cluster"</button>
                    <div class="actions">
                        <button type="button" on:click=on_check>"Check"</button>
                        " "
                        <button type="submit" disabled=move || busy.get()>{move || if busy.get() { "Creating…" } else { "Create the estate" }}</button>
                        {move || checked.get().map(|m| view! { <span class="ok-line" role="status" data-testid="check-ok">"✓ "{m}</span> })}
                    </div>
                    {move || error.get().map(|m| view! { <p class="error" role="alert" data-testid="create-error">{m}</p> })}
                </form>
        }
    };
    view! {
        <h1>"New estate"</h1>
        {move || match auth.session.get() {
            None => view! { <p class="loading" role="status">"Loading…"</p> }.into_any(),
            Some(None) => view! {
                <p class="notice" role="status">"You are not signed in. "<a href="/login">"Sign in"</a>" to create an estate."</p>
            }.into_any(),
            Some(Some(_)) if !may_operate() => view! {
                <p class="notice" role="status" data-testid="operators-only">"Creating an estate is for operators and administrators; your role may only look. Ask an administrator for an operator account."</p>
            }.into_any(),
            Some(Some(_)) => match created.get() {
                Some(id) => {
                    let now = client::query_param("now");
                    let at = |path: &str| crate::common::keep_query(path, Some(&id), now.as_deref());
                    view! {
                        <section class="created" data-testid="created">
                            <p class="ok-line" role="status">{format!("✓ Estate “{}” created (id {id}).", name.get_untracked().trim())}</p>
                            <p class="links">
                                <a href=at("/import")>"Import services"</a>" · "
                                <a href=at("/estate")>"Open the estate"</a>" · "
                                <a href=at("/")>"Placement"</a>
                            </p>
                            <super::next_steps::NextSteps estate=id.clone() always=true/>
                        </section>
                    }.into_any()
                }
                None => form().into_any(),
            },
        }}
    }
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
