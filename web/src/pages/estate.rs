//! Estate: sites on a world map (an outline shipped with Berth, no tile
//! server) with links coloured by RTT and styled by evidence class;
//! clusters with CPU/memory load bars and health; the service graph with
//! flow weights; every fact in a table filterable by class and age, stale
//! ones marked.
//!
//! Everything is read from the engine's model of the stored document (the
//! snapshot every page loads), so the page shows what the engine reads:
//! a fact written without `observed_at` has the file's time and ages
//! with it, an unknown fact is listed as unknown.

use berth_engine::estate::Site;
use berth_engine::fact::{Class, Fact};
use berth_engine::{Estate, Policy};
use leptos::prelude::*;

use super::{age, fixed};
use crate::client;
use crate::common::{Auth, ErrorLine, Gate};
use crate::graph;
use crate::map;
use std::collections::BTreeMap;
use std::sync::Arc;

/// A move the advice recommends (its evidence backs it), as the map and
/// the graph draw it.
#[derive(Clone, Debug, PartialEq)]
pub struct RecommendedMove {
    pub service: String,
    pub from: String,
    pub to: String,
}

/// The recommended moves, from the engine in the browser at the page's
/// time: computed once per page and shared by the map and the graph.
fn recommended_moves() -> Vec<RecommendedMove> {
    client::loaded_now()
        .map(|l| {
            berth_engine::advise(&l.estate, &l.policy, client::eval_now())
                .moves
                .into_iter()
                .filter(|m| m.evidence.is_none())
                .map(|m| RecommendedMove {
                    service: m.service,
                    from: m.from,
                    to: m.to,
                })
                .collect()
        })
        .unwrap_or_default()
}

/// One stored fact of the estate.
#[derive(Clone, Debug, PartialEq)]
pub struct FactRow {
    pub fact: String,
    /// `None`: unknown.
    pub value: Option<f64>,
    /// The class as stored (an unknown value is `guessed`, as the file
    /// format writes it); [`FactRow::stale`] says whether it has aged.
    pub class: Class,
    pub source: String,
    /// `None`: no time recorded (neither the fact nor the file says).
    pub age_s: Option<i64>,
    pub stale: bool,
}

/// Every fact of the estate, named by its owner and field, in model
/// order (clusters' free capacity, links' and paths' RTTs, flows' weight
/// and MB/s), with its age at `now` and whether it has outlived its
/// class's staleness window: the engine's own rule
/// ([`Fact::class_at`]), so the table marks stale exactly what advice
/// counts as degraded.
pub fn facts(estate: &Estate, policy: &Policy, now: i64) -> Vec<FactRow> {
    let mut out = Vec::new();
    let mut push = |fact: String, f: &Fact| {
        out.push(FactRow {
            fact,
            value: f.value,
            class: if f.value.is_none() {
                Class::Guessed
            } else {
                f.class
            },
            source: f.source.clone(),
            age_s: f.observed_at.map(|_| f.age_s(now)),
            stale: f.value.is_some() && f.class_at(now, policy) != f.class,
        })
    };
    for c in &estate.clusters {
        push(format!("{} cpu_free", c.id), &c.cpu_free);
        push(format!("{} memory_free_gib", c.id), &c.memory_free_gib);
    }
    for l in &estate.links {
        let (a, b) = (&estate.sites[l.a].id, &estate.sites[l.b].id);
        push(format!("link {a}↔{b} rtt_ms"), &l.rtt_ms);
    }
    for p in &estate.paths {
        let (a, b) = (&estate.clusters[p.a].id, &estate.clusters[p.b].id);
        push(format!("path {a}↔{b} rtt_ms"), &p.rtt_ms);
    }
    for f in &estate.flows {
        let (a, b) = (&estate.services[f.from].id, &estate.services[f.to].id);
        push(format!("flow {a}→{b} weight"), &f.weight);
        push(format!("flow {a}→{b} mb_s"), &f.mb_s);
    }
    out
}

/// How many stale facts a graph line's hover lists before "and N more".
const STALE_LISTED: usize = 6;

/// The stale weight and MB/s facts of the estate's flows by `(from, to)`
/// service ids, each in words with its value, class and age: "flow a→b
/// weight 4.00 (measured, 38 h old; stale)".
pub fn stale_flow_facts(rows: &[FactRow]) -> BTreeMap<(String, String), Vec<String>> {
    let mut out: BTreeMap<(String, String), Vec<String>> = BTreeMap::new();
    for r in rows.iter().filter(|r| r.stale) {
        let Some((ends, _)) = r.fact.strip_prefix("flow ").and_then(|x| x.split_once(' ')) else {
            continue;
        };
        let Some((a, b)) = ends.split_once('\u{2192}') else {
            continue;
        };
        out.entry((a.to_string(), b.to_string()))
            .or_default()
            .push(format!(
                "{} {} ({}, {} old; stale)",
                r.fact,
                fixed(r.value, 2),
                r.class.as_str(),
                r.age_s.map(age).unwrap_or_else(|| "?".into())
            ));
    }
    out
}

/// How a drawn fact reads on hover, and whether it is stale: its class
/// as stored, its age at `now`, and — once it has outlived its class's
/// window (the engine's [`Fact::class_at`], as the Facts table marks it)
/// — the class it counts as now. Unknown is said as such, never stale.
pub fn fact_note(f: &Fact, policy: &Policy, now: i64) -> (bool, String) {
    if f.value.is_none() {
        return (false, "unknown".into());
    }
    let now_class = f.class_at(now, policy);
    let stale = now_class != f.class;
    let mut words = f.class.as_str().to_string();
    if f.observed_at.is_some() {
        words.push_str(&format!(", {} old", age(f.age_s(now))));
    }
    if stale {
        words.push_str(&format!("; stale: counts as {} now", now_class.as_str()));
    }
    (stale, words)
}

/// Facts one page of the table shows. An estate of 1,000 services has
/// some 11,000 facts: all of them at once is a page 350,000 px tall and
/// 80,000 elements, which no one reads and every browser renders slowly;
/// a hundred is a screenful or two, and the filters find the rest.
pub const FACTS_PAGE: usize = 100;

/// The facts a class filter (`""`: any), an age filter (`""`, `"stale"`,
/// or seconds) and a search (in the fact's name and source, any case)
/// leave, in table order.
pub fn filtered<'a>(rows: &'a [FactRow], class: &str, age: &str, search: &str) -> Vec<&'a FactRow> {
    let needle = search.trim().to_lowercase();
    rows.iter()
        .filter(|r| {
            (class.is_empty() || r.class.as_str() == class)
                && match age {
                    "" => true,
                    "stale" => r.stale,
                    secs => r.age_s.unwrap_or(0) > secs.parse::<i64>().unwrap_or(0),
                }
                && (needle.is_empty()
                    || r.fact.to_lowercase().contains(&needle)
                    || r.source.to_lowercase().contains(&needle))
        })
        .collect()
}

/// "Showing 101–200 of 232 facts" for page `page` (0-based) of `total`.
pub fn page_words(page: usize, total: usize) -> String {
    if total == 0 {
        return "No fact matches.".into();
    }
    let first = page * FACTS_PAGE + 1;
    let last = ((page + 1) * FACTS_PAGE).min(total);
    format!(
        "Showing {first}–{last} of {total} fact{}.",
        if total == 1 { "" } else { "s" }
    )
}

#[component]
pub fn EstatePage() -> impl IntoView {
    let auth = expect_context::<Auth>();
    let loaded = RwSignal::new(None::<(Arc<Estate>, Arc<Policy>)>);
    let error = RwSignal::new(None::<String>);
    let class_filter = RwSignal::new(String::new());
    let age_filter = RwSignal::new(String::new());
    let search = RwSignal::new(String::new());
    let page = RwSignal::new(0usize);
    Effect::new(move |_| {
        let Some(id) = auth.estate.get() else { return };
        leptos::task::spawn_local(async move {
            match client::loaded(&id).await {
                Ok(l) => loaded.set(Some((
                    Arc::new(l.estate.clone()),
                    Arc::new(l.policy.clone()),
                ))),
                Err(f) => error.set(Some(f.message)),
            }
        });
    });
    view! {
        <h1>"Estate"</h1>
        <Gate>
            <ErrorLine message=error.into()/>
            {move || match loaded.get() {
                None => view! { <p class="loading" role="status">"Loading the estate…"</p> }.into_any(),
                Some((estate, policy)) => {
                    let now = client::eval_now();
                    let rows = facts(&estate, &policy, now);
                    let moves = Arc::new(recommended_moves());
                    let service_facts = Arc::new(rows.clone());
                    view! {
                        <Map estate=estate.clone() moves=moves.clone() policy=policy.clone() now=now/>
                        <Clusters estate=estate.clone() policy=policy.clone() now=now/>
                        <Graph estate=estate moves=moves facts=service_facts/>
                        <section aria-labelledby="facts-h">
                            <h2 id="facts-h">"Facts"</h2>
                            <label for="f-class">"Class "</label>
                            <select id="f-class" on:change=move |ev| { class_filter.set(event_target_value(&ev)); page.set(0); }>
                                <option value="">"all"</option>
                                <option value="measured">"measured"</option>
                                <option value="reported">"reported"</option>
                                <option value="inferred">"inferred"</option>
                                <option value="guessed">"guessed"</option>
                            </select>
                            " "
                            <label for="f-age">"Age "</label>
                            <select id="f-age" on:change=move |ev| { age_filter.set(event_target_value(&ev)); page.set(0); }>
                                <option value="">"any"</option>
                                <option value="stale">"stale only"</option>
                                <option value="3600">"older than 1 h"</option>
                                <option value="86400">"older than 1 day"</option>
                            </select>
                            " "
                            <label for="f-search">"Search "</label>
                            <input id="f-search" type="search" placeholder="a service, cluster or source"
                                on:input=move |ev| { search.set(event_target_value(&ev)); page.set(0); }/>
                            {
                                let rows = Arc::new(rows);
                                let shown = {
                                    let rows = rows.clone();
                                    move || {
                                        let (c, a, q) = (class_filter.get(), age_filter.get(), search.get());
                                        let all = filtered(&rows, &c, &a, &q);
                                        let total = all.len();
                                        let pages = total.div_ceil(FACTS_PAGE).max(1);
                                        let p = page.get().min(pages - 1);
                                        let items = all
                                            .into_iter()
                                            .skip(p * FACTS_PAGE)
                                            .take(FACTS_PAGE)
                                            .cloned()
                                            .collect::<Vec<FactRow>>();
                                        (items, total, p, pages)
                                    }
                                };
                                let shown = Memo::new(move |_| shown());
                                view! {
                                    <p class="facts-count" data-testid="facts-count" role="status">{move || { let (_, t, p, _) = shown.get(); page_words(p, t) }}</p>
                                    <table class="facts" data-testid="facts">
                                        <thead><tr><th scope="col">"fact"</th><th scope="col">"value"</th><th scope="col">"class"</th><th scope="col">"source"</th><th scope="col">"age"</th></tr></thead>
                                        <tbody>
                                            {move || shown.get().0.into_iter().map(|r| view! {
                                                <tr class:stale=r.stale>
                                                    <td>{r.fact.clone()}</td>
                                                    <td class="n">{fixed(r.value, 2)}</td>
                                                    <td><span class=format!("badge conf-{}", r.class.as_str())>{r.class.as_str()}</span></td>
                                                    <td>{r.source.clone()}</td>
                                                    <td class="n">{r.age_s.map(age).unwrap_or_else(|| "—".into())}{if r.stale { " (stale)" } else { "" }}</td>
                                                </tr>
                                            }).collect_view()}
                                        </tbody>
                                    </table>
                                    <p class="pager">
                                        <button type="button" disabled=move || shown.get().2 == 0
                                            on:click=move |_| page.update(|p| *p = p.saturating_sub(1))>"Previous facts"</button>
                                        " "
                                        <button type="button" disabled=move || { let (_, _, p, n) = shown.get(); p + 1 >= n }
                                            on:click=move |_| page.update(|p| *p += 1)>"Next facts"</button>
                                    </p>
                                }
                            }
                        </section>
                    }.into_any()
                }
            }}
            <super::review::AuditTrail/>
        </Gate>
    }
}

/// Equirectangular: longitude −180…180 → 0…360, latitude 90…−90 → 0…180.
fn xy(site: &Site) -> Option<(f64, f64)> {
    site.coords.map(|(lat, lon)| (lon + 180.0, 90.0 - lat))
}

/// RTT colour bands: under 10 ms is a metro or a region, under 40 ms a
/// continent, beyond that an ocean crossing (the bands of docs/rtt-calibration.md's
/// examples, rounded for the eye).
fn rtt_colour(ms: Option<f64>) -> &'static str {
    match ms {
        Some(x) if x < 10.0 => "rtt-near",
        Some(x) if x < 40.0 => "rtt-mid",
        Some(_) => "rtt-far",
        None => "rtt-unknown",
    }
}

#[component]
fn Map(
    estate: Arc<Estate>,
    moves: Arc<Vec<RecommendedMove>>,
    policy: Arc<Policy>,
    now: i64,
) -> impl IntoView {
    let sites = &estate.sites;
    let at = |id: &str| estate.site_index(id).and_then(|i| xy(&sites[i]));
    let placed: Vec<(String, f64, f64)> = sites
        .iter()
        .filter_map(|x| xy(x).map(|(px, py)| (x.id.clone(), px, py)))
        .collect();
    let home = map::fit(&placed.iter().map(|p| (p.1, p.2)).collect::<Vec<_>>());
    let view = RwSignal::new(home);
    // How much larger than at full width (900 px) a map unit must be drawn
    // for names and dots to keep their size on a narrower screen: the map
    // is as wide as the window less the page's margins, up to 900 px.
    let shrink = RwSignal::new(1.0f64);
    let measure = move || {
        if let Some(w) = client::viewport_width() {
            shrink.set((900.0 / (w - 24.0).clamp(200.0, 900.0)).clamp(1.0, 3.0));
        }
    };
    Effect::new(move |_| measure());
    let resize = window_event_listener(leptos::ev::resize, move |_| measure());
    on_cleanup(move || resize.remove());
    // The zoom the marks are drawn for: the view's, less the shrink.
    let marks = move || view.get().zoom() / shrink.get();
    let links = estate
        .links
        .iter()
        .filter_map(|l| {
            let (sa, sb) = (&sites[l.a], &sites[l.b]);
            let (a, b) = (xy(sa)?, xy(sb)?);
            let ms = l.rtt_ms.value;
            // An unknown RTT is drawn as a guess, as the file writes it.
            let class = if ms.is_none() { Class::Guessed } else { l.rtt_ms.class }.as_str();
            // A stale RTT is drawn faded, its class and age on hover.
            let (stale, note) = fact_note(&l.rtt_ms, &policy, now);
            let title = format!("{}↔{}: {} ms ({note})", sa.id, sb.id, fixed(ms, 1));
            Some(view! {
                <line x1=a.0 y1=a.1 x2=b.0 y2=b.1 class=format!("link {} ev-{class}{}", rtt_colour(ms), if stale { " stale" } else { "" })
                    data-link=format!("{}-{}", sa.id, sb.id) data-stale=stale.to_string()><title>{title}</title></line>
            })
        })
        .collect_view();
    let unplaced: Vec<String> = sites
        .iter()
        .filter(|x| xy(x).is_none())
        .map(|x| x.id.clone())
        .collect();
    // The recommended moves between sites, one arrow per pair of sites
    // (moves within a site have no length on a world map; they are
    // counted under it and drawn on the service graph).
    let site_of = |cluster: &str| {
        estate
            .cluster_index(cluster)
            .map(|c| sites[estate.clusters[c].site].id.clone())
            .unwrap_or_default()
    };
    let mut pairs: std::collections::BTreeMap<(String, String), Vec<String>> = Default::default();
    let mut within = 0usize;
    for m in moves.iter() {
        let (a, b) = (site_of(&m.from), site_of(&m.to));
        if a == b {
            within += 1;
        } else {
            pairs.entry((a, b)).or_default().push(m.service.clone());
        }
    }
    let between: usize = pairs.values().map(Vec::len).sum();
    let drawn: usize = pairs
        .iter()
        .filter(|((a, b), _)| at(a).is_some() && at(b).is_some())
        .map(|(_, v)| v.len())
        .sum();
    let arrows = pairs
        .into_iter()
        .filter_map(|((a, b), services)| {
            let (pa, pb) = (at(&a)?, at(&b)?);
            let title = format!("recommended: {} from {a} to {b}", services.join(", "));
            Some(view! {
                <line x1=pa.0 y1=pa.1 x2=pb.0 y2=pb.1 class="map-move" marker-end="url(#map-arrow)"
                    data-from=a.clone() data-to=b.clone() data-count=services.len()><title>{title}</title></line>
            })
        })
        .collect_view();
    let names: std::collections::BTreeMap<String, String> = sites
        .iter()
        .map(|x| (x.id.clone(), x.name.clone()))
        .collect();
    // Dots and labels follow the zoom: a dot keeps its size on screen,
    // and labels are placed again so none overlaps another or a dot; one
    // with no room is left out until one zooms in (its dot keeps the
    // name as a tooltip, and the count is said under the map).
    let labels = Memo::new({
        let placed = placed.clone();
        move |_| map::place_labels(&placed, marks())
    });
    let dots = move || {
        let z = marks();
        let r = map::DOT_R / z;
        labels
            .get()
            .into_iter()
            .zip(placed.iter().cloned())
            .map(|(l, (id, cx, cy))| {
                let name = names.get(&id).cloned().unwrap_or_default();
                let tip = format!("{id} — {name}");
                let aria = format!("Site {id} ({name}): zoom in here");
                view! {
                    <g class="site" data-site=id.clone() data-label=if l.shown { "shown" } else { "hidden" }>
                        <circle cx=cx cy=cy r=r role="button" tabindex="0" aria-label=aria
                            on:click=move |_| view.update(|v| *v = map::Viewport::centred(cx, cy, (v.zoom() * 2.0).max(4.0)))>
                            <title>{tip}</title>
                        </circle>
                        {l.shown.then(|| view! { <text x=l.x y=l.y text-anchor=l.anchor>{id.clone()}</text> })}
                    </g>
                }
            })
            .collect_view()
    };
    let hidden = move || labels.with(|ls| ls.iter().filter(|l| !l.shown).count());
    view! {
        <section aria-labelledby="map-h">
            <h2 id="map-h">"Sites and links"</h2>
            <div class="graph-tools" role="group" aria-label="Map view">
                <button type="button" class="small" aria-label="Zoom in on the map" on:click=move |_| view.update(|v| *v = v.zoomed(2.0))>"Zoom in"</button>
                <button type="button" class="small" aria-label="Zoom out of the map" on:click=move |_| view.update(|v| *v = v.zoomed(0.5))>"Zoom out"</button>
                <button type="button" class="small" aria-label="Pan the map left" on:click=move |_| view.update(|v| *v = v.panned(-1.0, 0.0))>"←"</button>
                <button type="button" class="small" aria-label="Pan the map right" on:click=move |_| view.update(|v| *v = v.panned(1.0, 0.0))>"→"</button>
                <button type="button" class="small" aria-label="Pan the map up" on:click=move |_| view.update(|v| *v = v.panned(0.0, -1.0))>"↑"</button>
                <button type="button" class="small" aria-label="Pan the map down" on:click=move |_| view.update(|v| *v = v.panned(0.0, 1.0))>"↓"</button>
                <button type="button" class="small" on:click=move |_| view.set(home)>"Every site"</button>
                <button type="button" class="small" on:click=move |_| view.set(map::Viewport::WORLD)>"Whole world"</button>
            </div>
            <svg class="map" viewBox=move || view.get().view_box() role="img" data-testid="map"
                data-zoom=move || format!("{:.2}", view.get().zoom())
                style=move || format!("--z:{:.4}", marks())
                aria-label="World map of the estate's sites and the links between them">
                <defs>
                    <marker id="map-arrow" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="5" markerHeight="5" orient="auto-start-reverse">
                        <path d="M 0 0 L 10 5 L 0 10 z" class="g-arrowhead"/>
                    </marker>
                </defs>
                <image href="/world.svg" x="0" y="0" width="360" height="180"/>
                {links}
                {arrows}
                {dots}
            </svg>
            <p class="hint" data-testid="map-moves">{format!(
                "Dashed arrows: {drawn} recommended move{} between sites{}; {within} more within a site (on the service graph).",
                if drawn == 1 { "" } else { "s" },
                if between > drawn { format!(", {} more to or from a site not on the map", between - drawn) } else { String::new() }
            )}</p>
            {move || (hidden() > 0).then(|| view! {
                <p class="hint" data-testid="map-hidden">{format!(
                    "{} site name{} left out where sites crowd together: zoom in, or hover a dot.",
                    hidden(), if hidden() == 1 { "" } else { "s" })}</p>
            })}
            <p class="legend">"Links: "<span class="key rtt-near">"< 10 ms"</span>" "<span class="key rtt-mid">"10–40 ms"</span>" "<span class="key rtt-far">"> 40 ms"</span>"; solid = measured, dashed = reported, dotted = inferred or guessed; faded = stale (older than its class's window: hover for class and age). Click a site to zoom in on it."</p>
            {(!unplaced.is_empty()).then(|| view! { <p class="hint">"Not on the map (no coordinates recorded): "{unplaced.join(", ")}</p> })}
        </section>
    }
}

#[component]
fn Clusters(estate: Arc<Estate>, policy: Arc<Policy>, now: i64) -> impl IntoView {
    let rows = estate
        .clusters
        .iter()
        .map(|c| {
            let bar = |t: f64, free: &Fact, label: &'static str| {
                match free.value {
                    Some(f) if t > 0.0 => {
                        let used = ((t - f) / t).clamp(0.0, 1.0);
                        let pct = format!("{:.0}", used * 100.0);
                        // Over 80 % is where the headroom penalty starts.
                        let hot = used > 0.8;
                        // A stale capacity is hatched and says so: an old
                        // 84 % is not today's 84 %.
                        let (stale, note) = fact_note(free, &policy, now);
                        let words = if stale {
                            format!("{label} {pct}% (stale: {} old)", age(free.age_s(now)))
                        } else {
                            format!("{label} {pct}% ({} class)", free.class.as_str())
                        };
                        view! {
                            <div class="loadbar" class:stale=stale role="meter" aria-valuemin="0" aria-valuemax="100" aria-valuenow=pct.clone()
                                aria-label=format!("{label} used") title=format!("{label} free: {note}") data-stale=stale.to_string()>
                                <span class:hot=hot style=format!("width:{}%", used * 100.0)></span>
                                <em>{words}</em>
                            </div>
                        }.into_any()
                    }
                    _ => view! { <div class="loadbar unknown"><em>{format!("{label}: unknown")}</em></div> }.into_any(),
                }
            };
            view! {
                <tr>
                    <th scope="row">{c.id.clone()}</th>
                    <td>{estate.sites[c.site].id.clone()}</td>
                    <td><span class=format!("health h-{}", c.health.as_str())>{c.health.as_str()}</span></td>
                    <td>{bar(c.cpu_total, &c.cpu_free, "CPU")}</td>
                    <td>{bar(c.memory_total_gib, &c.memory_free_gib, "memory")}</td>
                </tr>
            }
        })
        .collect_view();
    view! {
        <section aria-labelledby="cl-h">
            <h2 id="cl-h">"Clusters"</h2>
            <table class="clusters" data-testid="clusters">
                <thead><tr><th scope="col">"cluster"</th><th scope="col">"site"</th><th scope="col">"health"</th><th scope="col">"CPU"</th><th scope="col">"memory"</th></tr></thead>
                <tbody>{rows}</tbody>
            </table>
        </section>
    }
}

/// The graph's state, shared by its parts.
#[derive(Clone, Copy)]
struct GraphState {
    expanded: RwSignal<std::collections::BTreeSet<String>>,
    selected: RwSignal<Option<String>>,
    zoom: RwSignal<f64>,
    pan: RwSignal<(f64, f64)>,
    lay: Memo<graph::Layout>,
    /// With a service selected: it and what its lines join (the rest is
    /// dimmed).
    lit: Memo<Option<std::collections::BTreeSet<String>>>,
}

impl GraphState {
    /// "dim" when something is selected and `node` is not lit by it.
    fn dim(self, node: &str) -> bool {
        self.lit
            .with(|l| l.as_ref().is_some_and(|l| !l.contains(node)))
    }
}

/// Scroll the page (and the graph's frame) so `id`'s box is in the
/// middle of the window: "Show X on the graph" lands on X.
#[cfg(feature = "hydrate")]
fn scroll_to_service(id: &str) {
    use wasm_bindgen::{JsCast, JsValue};
    let Some(doc) = web_sys::window().and_then(|w| w.document()) else {
        return;
    };
    let sel = format!("[data-testid=graph] g.g-svc[data-service=\"{id}\"] rect");
    let Ok(Some(el)) = doc.query_selector(&sel) else {
        return;
    };
    let opts = js_sys::Object::new();
    for (k, v) in [("block", "center"), ("inline", "nearest")] {
        let _ = js_sys::Reflect::set(&opts, &JsValue::from_str(k), &JsValue::from_str(v));
    }
    let el: &JsValue = el.as_ref();
    if let Ok(f) = js_sys::Reflect::get(el, &JsValue::from_str("scrollIntoView")) {
        if let Some(f) = f.dyn_ref::<js_sys::Function>() {
            let _ = f.call1(el, &opts);
        }
    }
}

/// The service graph, boxed like Kiali's: services in their cluster, clusters
/// in their site (`crate::graph` lays it out, routes the lines through the
/// gaps and places the heaviest lines' numbers). Drawn one unit to a CSS
/// pixel at 1× (12 px text); lines wider for more weight, red across sites;
/// recommended moves are dashed arrows from the service to its destination
/// cluster. A click on a service lights it, its lines and neighbours and
/// dims the rest, and shows its flows beside the graph; `?service=ID`
/// does the same and scrolls the service to the middle of the window.
#[component]
fn Graph(
    estate: Arc<Estate>,
    moves: Arc<Vec<RecommendedMove>>,
    facts: Arc<Vec<FactRow>>,
) -> impl IntoView {
    let expanded = RwSignal::new(graph::default_expanded(&estate));
    let selected = RwSignal::new(None::<String>);
    let estate_for_layout = estate.clone();
    let lay = Memo::new(move |_| graph::layout(&estate_for_layout, &expanded.get()));
    let lit = Memo::new(move |_| {
        let id = selected.get()?;
        let mut lit = lay.with(|l| graph::neighbours(l, &id));
        lit.insert(id);
        Some(lit)
    });
    let state = GraphState {
        expanded,
        selected,
        zoom: RwSignal::new(1.0),
        pan: RwSignal::new((0.0, 0.0)),
        lay,
        lit,
    };
    // `?service=ID` (a move's "Show on the graph"): that service selected,
    // its cluster opened, its move's arrow marked, the page scrolled to it.
    let query = leptos_router::hooks::use_query_map();
    let estate_for_query = estate.clone();
    Effect::new(move |_| {
        let Some(id) = query.with(|q| q.get("service")) else {
            return;
        };
        let e = &estate_for_query;
        let Some(i) = e.service_index(&id) else {
            return;
        };
        let c = e.clusters[e.services[i].cluster].id.clone();
        expanded.update(|e| {
            e.insert(c);
        });
        selected.set(Some(id.clone()));
        #[cfg(feature = "hydrate")]
        set_timeout(
            move || scroll_to_service(&id),
            std::time::Duration::from_millis(120),
        );
    });
    let all_clusters: Vec<String> = estate.clusters.iter().map(|c| c.id.clone()).collect();
    let moves_for_summary = moves.clone();
    let summary = move || {
        let l = lay.get();
        let n = moves_for_summary.len();
        format!(
            "{} sites, {} clusters ({} open), {} services drawn; {} flows in {} lines, {} inside closed clusters or past the {} heaviest lines; the numbers of {} of the heaviest lines on them; {n} recommended move{} as dashed arrows.",
            l.sites.len(),
            l.clusters.len(),
            l.clusters.iter().filter(|c| c.expanded).count(),
            l.services.len(),
            l.flows_drawn,
            l.edges.len(),
            l.flows_hidden,
            graph::MAX_EDGES,
            l.labels.len(),
            if n == 1 { "" } else { "s" }
        )
    };
    view! {
        <section aria-labelledby="g-h" class="g-section">
            <h2 id="g-h">"Service graph"</h2>
            <p class="hint" data-testid="graph-summary">{summary}</p>
            <GraphTools state=state clusters=all_clusters/>
            <div class="graph-wrap">
                <div class="g-scroll">
                    <GraphSvg state=state moves=moves.clone() facts=facts.clone()/>
                </div>
                <GraphPanel state=state estate=estate moves=moves facts=facts/>
            </div>
            <GraphLegend/>
        </section>
    }
}

/// Zoom, pan, whole estate, open or close every cluster.
#[component]
fn GraphTools(state: GraphState, clusters: Vec<String>) -> impl IntoView {
    let GraphState {
        zoom,
        pan,
        lay,
        expanded,
        ..
    } = state;
    let step = move |dx: f64, dy: f64| {
        let l = lay.get_untracked();
        let z = zoom.get_untracked();
        pan.update(|(x, y)| {
            *x = (*x + dx * l.width / z / 4.0).clamp(0.0, l.width);
            *y = (*y + dy * l.height / z / 4.0).clamp(0.0, l.height);
        });
    };
    let zoom_by = move |f: f64| {
        let l = lay.get_untracked();
        let z0 = zoom.get_untracked();
        // 1× draws a unit to a pixel (12 px text); past 8× a name fills the view.
        let z1 = (z0 * f).clamp(1.0, 8.0);
        // Keep the centre where it is.
        pan.update(|(x, y)| {
            let (cx, cy) = (*x + l.width / z0 / 2.0, *y + l.height / z0 / 2.0);
            *x = (cx - l.width / z1 / 2.0).max(0.0);
            *y = (cy - l.height / z1 / 2.0).max(0.0);
        });
        zoom.set(z1);
    };
    view! {
        <div class="graph-tools" role="group" aria-label="Graph view">
            <button type="button" class="small" aria-label="Zoom in on the graph" on:click=move |_| zoom_by(1.5)>"Zoom in"</button>
            <button type="button" class="small" aria-label="Zoom out of the graph" on:click=move |_| zoom_by(1.0 / 1.5)>"Zoom out"</button>
            <button type="button" class="small" aria-label="Pan the graph left" on:click=move |_| step(-1.0, 0.0)>"←"</button>
            <button type="button" class="small" aria-label="Pan the graph right" on:click=move |_| step(1.0, 0.0)>"→"</button>
            <button type="button" class="small" aria-label="Pan the graph up" on:click=move |_| step(0.0, -1.0)>"↑"</button>
            <button type="button" class="small" aria-label="Pan the graph down" on:click=move |_| step(0.0, 1.0)>"↓"</button>
            <button type="button" class="small" on:click=move |_| { zoom.set(1.0); pan.set((0.0, 0.0)); }>"Whole estate"</button>
            <button type="button" class="small" on:click=move |_| expanded.set(clusters.iter().cloned().collect())>"Open every cluster"</button>
            <button type="button" class="small" on:click=move |_| expanded.set(Default::default())>"Close every cluster"</button>
            <button type="button" class="small" disabled=move || state.selected.get().is_none()
                on:click=move |_| state.selected.set(None)>"Clear the selection"</button>
        </div>
    }
}

/// The drawing: one unit to a CSS pixel at 1×, scrolled in its frame.
#[component]
fn GraphSvg(
    state: GraphState,
    moves: Arc<Vec<RecommendedMove>>,
    facts: Arc<Vec<FactRow>>,
) -> impl IntoView {
    let GraphState { zoom, pan, lay, .. } = state;
    let view_box = move || {
        let (l, z, (px, py)) = (lay.get(), zoom.get(), pan.get());
        // 10 units of margin on every side.
        let (w, h) = (
            (l.width.max(1.0) + 20.0).ceil() / z,
            (l.height.max(1.0) + 20.0).ceil() / z,
        );
        format!("{:.1} {:.1} {w:.1} {h:.1}", px - 10.0, py - 10.0)
    };
    let size = move || {
        lay.with(|l| {
            format!(
                "width:{:.0}px;height:{:.0}px",
                (l.width.max(1.0) + 20.0).ceil(),
                (l.height.max(1.0) + 20.0).ceil()
            )
        })
    };
    view! {
        <svg class="graph" class:has-selection=move || state.selected.get().is_some() viewBox=view_box style=size
            data-zoom=move || format!("{:.2}", zoom.get()) role="img"
            aria-label="Services boxed by cluster and site, the flows between them, and the recommended moves" data-testid="graph">
            <defs>
                <marker id="g-arrow" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" markerHeight="7" orient="auto-start-reverse">
                    <path d="M 0 0 L 10 5 L 0 10 z" class="g-arrowhead"/>
                </marker>
            </defs>
            <GraphBoxes state=state/>
            <GraphEdges state=state facts=facts/>
            <GraphServices state=state/>
            <GraphArrows state=state moves=moves/>
        </svg>
    }
}

/// Sites and clusters; a cluster's name opens or closes it.
#[component]
fn GraphBoxes(state: GraphState) -> impl IntoView {
    let sites = move || {
        state.lay.with(|l| {
            l.sites
                .iter()
                .map(|b| {
                    let r = &b.rect;
                    view! {
                        <g class="g-site" data-site=b.id.clone()>
                            <rect x=r.x y=r.y width=r.w height=r.h rx="6"/>
                            <text x=b.title.rect.x + 3.0 y=r.y + 15.0 class="g-title">{b.title.text.clone()}</text>
                        </g>
                    }
                })
                .collect_view()
        })
    };
    let clusters = move || {
        state.lay.with(|l| {
            l.clusters
                .iter()
                .map(|c| {
                    let r = &c.rect;
                    let id = c.id.clone();
                    let toggle = move |_| {
                        let id = id.clone();
                        state.expanded.update(|e| {
                            if !e.remove(&id) {
                                e.insert(id);
                            }
                        });
                    };
                    let action = if c.expanded { "Close" } else { "Open" };
                    let node = format!("cluster:{}", c.id);
                    let closed = !c.expanded;
                    let class = move || {
                        let dim = closed && state.dim(&node);
                        match (closed, dim) {
                            (false, _) => "g-cluster open",
                            (true, false) => "g-cluster",
                            (true, true) => "g-cluster dim",
                        }
                    };
                    // A closed cluster's count sits in the middle of its node.
                    let ty = if c.expanded { r.y + 15.0 } else { r.y + r.h / 2.0 + 4.0 };
                    view! {
                        <g class=class data-cluster=c.id.clone() data-expanded=c.expanded.to_string()>
                            <rect x=r.x y=r.y width=r.w height=r.h rx="4"/>
                            <text x=c.title.rect.x + 3.0 y=ty class="g-title g-toggle" role="button" tabindex="0"
                                aria-label=format!("{action} cluster {}", c.id) on:click=toggle>{c.title.text.clone()}</text>
                        </g>
                    }
                })
                .collect_view()
        })
    };
    view! { <g class="g-boxes">{sites}{clusters}</g> }
}

/// The hover words of a line: its numbers, and each stale fact summed
/// into it with class and age.
fn edge_title(e: &graph::Edge, stale_facts: &[String]) -> String {
    format!(
        "{} — {}: weight {:.1}, {:.1} MB/s over {} flow{}{}{}",
        e.a,
        e.b,
        e.weight,
        e.mb_s,
        e.flows,
        if e.flows == 1 { "" } else { "s" },
        if e.cross_site { ", across sites" } else { "" },
        if stale_facts.is_empty() {
            String::new()
        } else {
            format!("; {}", stale_facts.join("; "))
        }
    )
}

/// The lines, routed round the boxes (a `<line>` per segment, each with
/// the line's hover words), and the heaviest lines' numbers.
#[component]
fn GraphEdges(state: GraphState, facts: Arc<Vec<FactRow>>) -> impl IntoView {
    // The flows' stale facts by (from, to), in words with class and age,
    // for the lines' stale marks.
    let stale_by_flow = stale_flow_facts(&facts);
    let edges = move || {
        let l = state.lay.get();
        let maxw = l.edges.iter().map(|e| e.weight).fold(1e-9, f64::max);
        let lines = l
            .edges
            .iter()
            .map(|e| {
                // A line is stale when the weight or MB/s of any flow
                // summed into it is: one flow (either way) between two
                // services, or every flow a collapsed cluster's line sums.
                let mut stale_facts: Vec<String> =
                    e.pairs.iter().filter_map(|p| stale_by_flow.get(p)).flatten().cloned().collect();
                if stale_facts.len() > STALE_LISTED {
                    let more = stale_facts.len() - STALE_LISTED;
                    stale_facts.truncate(STALE_LISTED);
                    stale_facts.push(format!("and {more} more stale flow fact{}", if more == 1 { "" } else { "s" }));
                }
                let stale = !stale_facts.is_empty();
                let title = edge_title(e, &stale_facts);
                let class = match (e.cross_site, stale) {
                    (true, true) => "g-edge cross stale",
                    (true, false) => "g-edge cross",
                    (false, true) => "g-edge stale",
                    (false, false) => "g-edge",
                };
                let (a, b) = (e.a.clone(), e.b.clone());
                let group = move || match state.selected.get() {
                    None => "g-route",
                    Some(s) if s == a || s == b => "g-route lit",
                    Some(_) => "g-route dim",
                };
                let width = 1.0 + 5.0 * e.weight / maxw;
                let segments = e
                    .path
                    .windows(2)
                    .map(|p| {
                        view! {
                            <line x1=p[0].0 y1=p[0].1 x2=p[1].0 y2=p[1].1 class=class data-stale=stale.to_string()
                                stroke-width=width><title>{title.clone()}</title></line>
                        }
                    })
                    .collect_view();
                view! { <g class=group data-a=e.a.clone() data-b=e.b.clone()>{segments}</g> }
            })
            .collect_view();
        let labels = l
            .labels
            .iter()
            .map(|x| {
                let e = &l.edges[x.edge];
                let (a, b) = (e.a.clone(), e.b.clone());
                let class = move || match state.selected.get() {
                    Some(s) if s != a && s != b => "g-num dim",
                    _ => "g-num",
                };
                let r = &x.rect;
                view! {
                    <g class=class data-a=e.a.clone() data-b=e.b.clone()>
                        <rect x=r.x y=r.y width=r.w height=r.h rx="8"/>
                        <text x=r.x + r.w / 2.0 y=r.y + 12.0 text-anchor="middle">{x.text.clone()}</text>
                        <title>{edge_title(e, &[])}</title>
                    </g>
                }
            })
            .collect_view();
        view! { <g class="g-edges">{lines}</g><g class="g-nums">{labels}</g> }
    };
    view! { {edges} }
}

/// The service cells; a click selects one.
#[component]
fn GraphServices(state: GraphState) -> impl IntoView {
    let cells = move || {
        state.lay.with(|l| {
            l.services
                .iter()
                .map(|n| {
                    let r = &n.rect;
                    let id = n.id.clone();
                    let id2 = id.clone();
                    let class = move || {
                        if state.selected.with(|s| s.as_deref() == Some(id2.as_str())) {
                            "g-svc selected"
                        } else if state.dim(&id2) {
                            "g-svc dim"
                        } else if state.selected.with(|s| s.is_some()) {
                            "g-svc lit"
                        } else {
                            "g-svc"
                        }
                    };
                    view! {
                        <g class=class data-service=id.clone()>
                            <rect x=r.x y=r.y width=r.w height=r.h rx="3" role="button" tabindex="0"
                                aria-label=format!("Service {id}: show its flows")
                                on:click={ let id = id.clone(); move |_| state.selected.set(Some(id.clone())) }/>
                            <text x=r.x + 4.0 y=r.y + 14.0>{n.label.clone()}<title>{format!("{id} on {}", n.cluster)}</title></text>
                        </g>
                    }
                })
                .collect_view()
        })
    };
    view! { <g class="g-cells">{cells}</g> }
}

/// The recommended moves, as dashed arrows from the service (or its
/// closed cluster) to its destination cluster.
#[component]
fn GraphArrows(state: GraphState, moves: Arc<Vec<RecommendedMove>>) -> impl IntoView {
    let arrows = move || {
        let l = state.lay.get();
        graph::arrows(&l, moves.iter().map(|m| (m.service.as_str(), m.from.as_str(), m.to.as_str())))
            .into_iter()
            .map(|a| {
                let svc = a.service.clone();
                let class = move || match state.selected.get() {
                    Some(s) if s == svc => "g-move chosen",
                    Some(_) => "g-move dim",
                    None => "g-move",
                };
                view! {
                    <line x1=a.from.0 y1=a.from.1 x2=a.to.0 y2=a.to.1 class=class marker-end="url(#g-arrow)" data-service=a.service.clone()>
                        <title>{format!("recommended: move {} from {} to {}", a.service, a.from_cluster, a.to_cluster)}</title>
                    </line>
                }
            })
            .collect_view()
    };
    view! { <g class="g-moves">{arrows}</g> }
}

/// What the boxes, widths, numbers, arrows, marks and dimming mean.
#[component]
fn GraphLegend() -> impl IntoView {
    let key = |class: &'static str, body: AnyView| view! { <svg class=format!("g-key {class}") width="34" height="16" viewBox="0 0 34 16" aria-hidden="true">{body}</svg> };
    view! {
        <ul class="legend g-legend" data-testid="graph-legend" aria-label="Graph legend">
            <li>{key("g-site", view! { <rect x="1" y="1" width="32" height="14" rx="3"/> }.into_any())}"Site, holding its clusters"</li>
            <li>{key("g-cluster", view! { <rect x="1" y="1" width="32" height="14" rx="3"/> }.into_any())}"Cluster (its name opens or closes it; closed, it says how many services)"</li>
            <li>{key("g-svc", view! { <rect x="1" y="2" width="32" height="12" rx="3"/> }.into_any())}"Service (a click lights its lines and neighbours)"</li>
            <li>{key("", view! { <line x1="1" y1="5" x2="33" y2="5" class="g-edge" stroke-width="1"/><line x1="1" y1="12" x2="33" y2="12" class="g-edge" stroke-width="5"/> }.into_any())}"Flows: wider carries more requests in flight (weight)"</li>
            <li>{key("", view! { <line x1="1" y1="8" x2="33" y2="8" class="g-edge cross" stroke-width="3"/> }.into_any())}"Across sites"</li>
            <li>{key("", view! { <line x1="1" y1="8" x2="33" y2="8" class="g-edge stale" stroke-width="3"/> }.into_any())}"Resting on a stale weight or MB/s"</li>
            <li><span class="g-num-key">"14 req · 3.5 MB/s"</span>{format!(" On up to {} of the heaviest lines: requests in flight and MB/s (hover any line for its own)", graph::MAX_LABELS)}</li>
            <li>{key("", view! { <line x1="1" y1="8" x2="31" y2="8" class="g-move" marker-end="url(#g-arrow)"/> }.into_any())}"Recommended move: from the service to its destination cluster"</li>
            <li><span class="g-dim-key">"faded"</span>" Not joined to the selected service"</li>
        </ul>
    }
}

/// Beside the graph: the selected service's cluster, owner, requests,
/// every flow in and out, its recommended move and what is known of it.
#[component]
fn GraphPanel(
    state: GraphState,
    estate: Arc<Estate>,
    moves: Arc<Vec<RecommendedMove>>,
    facts: Arc<Vec<FactRow>>,
) -> impl IntoView {
    let auth = expect_context::<Auth>();
    let panel = move || {
        let id = state.selected.get()?;
        let e = &estate;
        let at = e.service_index(&id)?;
        let svc = &e.services[at];
        let cluster = e.clusters[svc.cluster].id.clone();
        let mut flows: Vec<(String, String, f64, String)> = e
            .flows
            .iter()
            .filter_map(|f| {
                let w = f.weight.value.unwrap_or(0.0);
                let mb = fixed(f.mb_s.value, 2);
                if f.from == at {
                    Some(("→".to_string(), e.services[f.to].id.clone(), w, mb))
                } else if f.to == at {
                    Some(("←".to_string(), e.services[f.from].id.clone(), w, mb))
                } else {
                    None
                }
            })
            .collect();
        flows.sort_by(|x, y| y.2.total_cmp(&x.2).then_with(|| x.1.cmp(&y.1)));
        let n = flows.len();
        let rows = flows
            .into_iter()
            .map(|(dir, peer, w, mb)| view! { <tr><td>{dir}</td><td>{peer}</td><td class="n">{format!("{w:.1}")}</td><td class="n">{mb}</td></tr> })
            .collect_view();
        let recommended = moves
            .iter()
            .find(|m| m.service == id)
            .map(|m| view! { <p class="g-rec">{format!("Recommended: move from {} to {}.", m.from, m.to)}</p> });
        // What is known of it: its own facts and its flows', by class and
        // age, stale ones marked (as the Facts table below says them).
        let own = format!("{id} ");
        let (from_it, to_it) = (format!("flow {id}→"), format!("→{id} "));
        let known: Vec<FactRow> = facts
            .iter()
            .filter(|r| {
                r.fact.starts_with(&own)
                    || (r.fact.starts_with("flow ")
                        && (r.fact.starts_with(&from_it) || r.fact.contains(&to_it)))
            })
            .cloned()
            .collect();
        let stale = known.iter().filter(|r| r.stale).count();
        let facts_head = format!(
            "{} fact{}{}",
            known.len(),
            if known.len() == 1 { "" } else { "s" },
            if stale > 0 {
                format!(", {stale} stale")
            } else {
                String::new()
            }
        );
        let fact_rows = known
            .into_iter()
            .map(|r| view! {
                <tr class:stale=r.stale>
                    <td>{r.fact.clone()}</td>
                    <td class="n">{fixed(r.value, 2)}</td>
                    <td><span class=format!("badge conf-{}", r.class.as_str())>{r.class.as_str()}</span></td>
                    <td class="n">{r.age_s.map(age).unwrap_or_else(|| "—".into())}{if r.stale { " (stale)" } else { "" }}</td>
                </tr>
            })
            .collect_view();
        let place = crate::common::service_link(
            "/place",
            auth.estate.get_untracked().as_deref(),
            client::query_param("now").as_deref(),
            &id,
        );
        Some(view! {
            <aside class="g-panel" data-testid="graph-panel" aria-label=format!("Service {id}")>
                <h3>{id.clone()}</h3>
                <p>{format!("On {cluster}; owner {}; requests {} cores, {} GiB.",
                    if svc.owner.is_empty() { "unknown" } else { svc.owner.as_str() },
                    fixed(svc.cpu, 2), fixed(svc.memory_gib, 2))}</p>
                {recommended}
                <p>{format!("{n} flow{}:", if n == 1 { "" } else { "s" })}</p>
                <table class="compare"><thead><tr><th scope="col"></th><th scope="col">"peer"</th><th scope="col">"weight"</th><th scope="col">"MB/s"</th></tr></thead>
                    <tbody>{rows}</tbody></table>
                <details class="g-facts" data-testid="graph-facts">
                    <summary>{facts_head}</summary>
                    <table class="compare"><thead><tr><th scope="col">"fact"</th><th scope="col">"value"</th><th scope="col">"class"</th><th scope="col">"age"</th></tr></thead>
                        <tbody>{fact_rows}</tbody></table>
                </details>
                <p><a href=place>{format!("Where else could {id} go?")}</a></p>
                <button type="button" class="small" on:click=move |_| state.selected.set(None)>"Close"</button>
            </aside>
        })
    };
    view! { {panel} }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine;

    #[test]
    fn facts_are_named_aged_and_marked_stale_by_their_class_window() {
        let text = r#"{"schema": 1, "name": "t", "observed_at": "2026-11-30T03:00:00Z",
            "sites": [{"id": "s1", "jurisdiction": "EU"}],
            "clusters": [{"id": "c1", "site": "s1", "tier": "prod", "trust_zone": "z", "health": "healthy",
                "cpu_total": 8, "memory_total_gib": 32,
                "cpu_free": {"value": 4, "class": "measured", "source": "agent", "observed_at": "2026-11-30T04:00:00Z"},
                "memory_free_gib": 10}],
            "services": [{"id": "a", "owner": "o", "cluster": "c1", "cpu": 1, "memory_gib": 1},
                         {"id": "b", "owner": "o", "cluster": "c1", "cpu": 1, "memory_gib": 1}],
            "flows": [{"from": "a", "to": "b",
                "weight": {"value": 1, "class": "reported", "source": "me", "observed_at": "2026-11-30T04:00:00Z"}}]}"#;
        let estate = berth_engine::load(text, berth_engine::Format::Json).unwrap();
        let now = engine::parse_time("2026-11-30T05:00:00Z").unwrap();
        let rows = facts(&estate, &Policy::default(), now);
        let names: Vec<&str> = rows.iter().map(|r| r.fact.as_str()).collect();
        assert_eq!(
            names,
            [
                "c1 cpu_free",
                "c1 memory_free_gib",
                "flow a→b weight",
                "flow a→b mb_s"
            ]
        );
        assert!(rows[0].stale, "an hour-old measurement is stale");
        assert_eq!(rows[0].class, Class::Measured, "shown as stored");
        // Drawn (capacity bar, map link, graph line): marked the same way,
        // class and age in the hover text.
        let c = &estate.clusters[0];
        assert_eq!(
            fact_note(&c.cpu_free, &Policy::default(), now),
            (
                true,
                "measured, 60 min old; stale: counts as reported now".to_string()
            )
        );
        assert_eq!(
            fact_note(&c.cpu_free, &Policy::default(), now - 3000),
            (false, "measured, 10 min old".to_string())
        );
        // A bare number is reported at the file's time: two hours old,
        // inside the reported window.
        assert_eq!(
            (rows[1].value, rows[1].class),
            (Some(10.0), Class::Reported)
        );
        assert_eq!((rows[1].age_s, rows[1].stale), (Some(7200), false));
        assert_eq!(rows[1].source, "file");
        assert_eq!((rows[2].age_s, rows[2].stale), (Some(3600), false));
        // The flow's MB/s is not written: unknown, listed as such.
        assert_eq!(
            (rows[3].value, rows[3].class, rows[3].stale),
            (None, Class::Guessed, false)
        );
    }

    #[test]
    fn the_facts_table_filters_searches_and_pages() {
        let row = |fact: &str, class: Class, stale: bool| FactRow {
            fact: fact.into(),
            value: Some(1.0),
            class,
            source: "agent:c-fra-1".into(),
            age_s: Some(if stale { 90_000 } else { 60 }),
            stale,
        };
        let mut rows: Vec<FactRow> = (0..250)
            .map(|i| row(&format!("svc-{i} cpu"), Class::Measured, false))
            .collect();
        rows.push(row("flow cart→redis weight", Class::Guessed, true));
        assert_eq!(filtered(&rows, "", "", "").len(), 251);
        assert_eq!(filtered(&rows, "guessed", "", "").len(), 1);
        assert_eq!(filtered(&rows, "", "stale", "").len(), 1);
        assert_eq!(filtered(&rows, "", "", "REDIS").len(), 1, "any case");
        assert_eq!(filtered(&rows, "", "", "c-fra-1").len(), 251, "sources too");
        assert_eq!(filtered(&rows, "", "", "svc-24").len(), 11);
        assert_eq!(page_words(0, 251), "Showing 1–100 of 251 facts.");
        assert_eq!(page_words(2, 251), "Showing 201–251 of 251 facts.");
        assert_eq!(page_words(0, 0), "No fact matches.");
    }
}
