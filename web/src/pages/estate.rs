//! Estate: sites on a world map (an outline shipped with Berth, no tile
//! server) with links coloured by RTT and styled by evidence class;
//! clusters with CPU/memory load bars and health; the service graph with
//! flow weights; every fact in a table filterable by class and age, stale
//! ones marked.

use leptos::prelude::*;
use serde_json::Value;

use super::{age, arr, num, s};
use crate::client;
use crate::common::{Auth, ErrorLine, Gate};
use crate::engine;

/// One stored fact of the estate document.
#[derive(Clone, Debug, PartialEq)]
pub struct FactRow {
    pub fact: String,
    pub value: Value,
    pub class: String,
    pub source: String,
    pub age_s: Option<i64>,
    pub stale: bool,
}

/// Every fact (an object with `class`) of the document, named by its
/// owner and field, with its age at `now` and whether it has outlived
/// its class's staleness window (`policy.staleness`).
pub fn facts(doc: &Value, staleness: &Value, now: i64) -> Vec<FactRow> {
    let mut out = Vec::new();
    for (coll, name_of) in [
        (
            "clusters",
            &(|x: &Value| s(&x["id"])) as &dyn Fn(&Value) -> String,
        ),
        ("links", &|x: &Value| {
            format!("link {}↔{}", s(&x["a"]), s(&x["b"]))
        }),
        ("paths", &|x: &Value| {
            format!("path {}↔{}", s(&x["a"]), s(&x["b"]))
        }),
        ("services", &|x: &Value| s(&x["id"])),
        ("flows", &|x: &Value| {
            format!("flow {}→{}", s(&x["from"]), s(&x["to"]))
        }),
    ] {
        for item in arr(&doc[coll]) {
            let Some(obj) = item.as_object() else {
                continue;
            };
            for (field, v) in obj {
                if v.get("class").is_none() {
                    continue;
                }
                let class = s(&v["class"]);
                let age_s = v["observed_at"]
                    .as_str()
                    .and_then(engine::parse_time)
                    .map(|t| now - t);
                let window = staleness[format!("{class}_s")].as_i64();
                let stale = matches!((age_s, window), (Some(a), Some(w)) if a > w);
                out.push(FactRow {
                    fact: format!("{} {field}", name_of(&item)),
                    value: v["value"].clone(),
                    class,
                    source: s(&v["source"]),
                    age_s,
                    stale,
                });
            }
        }
    }
    out
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
            (class.is_empty() || r.class == class)
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
    let doc = RwSignal::new(None::<(Value, Value)>);
    let error = RwSignal::new(None::<String>);
    let class_filter = RwSignal::new(String::new());
    let age_filter = RwSignal::new(String::new());
    let search = RwSignal::new(String::new());
    let page = RwSignal::new(0usize);
    Effect::new(move |_| {
        let Some(id) = auth.estate.get() else { return };
        leptos::task::spawn_local(async move {
            match client::loaded(&id).await {
                Ok(l) => doc.set(Some((
                    l.document.clone(),
                    serde_json::to_value(&l.policy).expect("serialises"),
                ))),
                Err(f) => error.set(Some(f.message)),
            }
        });
    });
    view! {
        <h1>"Estate"</h1>
        <Gate>
            <ErrorLine message=error.into()/>
            {move || match doc.get() {
                None => view! { <p class="loading" role="status">"Loading the estate…"</p> }.into_any(),
                Some((d, policy)) => {
                    let now = client::eval_now();
                    let rows = facts(&d, &policy["staleness"], now);
                    view! {
                        <Map doc=d.clone()/>
                        <Clusters doc=d.clone()/>
                        <Graph doc=d.clone()/>
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
                                let rows = std::sync::Arc::new(rows);
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
                                                    <td class="n">{num(&r.value, 2)}</td>
                                                    <td><span class=format!("badge conf-{}", r.class)>{r.class.clone()}</span></td>
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
fn xy(site: &Value) -> Option<(f64, f64)> {
    Some((site["lon"].as_f64()? + 180.0, 90.0 - site["lat"].as_f64()?))
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
fn Map(doc: Value) -> impl IntoView {
    let sites = arr(&doc["sites"]);
    let at = |id: &str| sites.iter().find(|x| x["id"] == id).and_then(xy);
    let links = arr(&doc["links"])
        .into_iter()
        .filter_map(|l| {
            let (a, b) = (at(l["a"].as_str()?)?, at(l["b"].as_str()?)?);
            let ms = l["rtt_ms"]["value"].as_f64();
            let class = s(&l["rtt_ms"]["class"]);
            let title = format!("{}↔{}: {} ms ({class})", s(&l["a"]), s(&l["b"]), num(&l["rtt_ms"]["value"], 1));
            Some(view! {
                <line x1=a.0 y1=a.1 x2=b.0 y2=b.1 class=format!("link {} ev-{class}", rtt_colour(ms))><title>{title}</title></line>
            })
        })
        .collect_view();
    let unplaced: Vec<String> = sites
        .iter()
        .filter(|x| xy(x).is_none())
        .map(|x| s(&x["id"]))
        .collect();
    let dots = sites
        .iter()
        .filter_map(|x| {
            let (cx, cy) = xy(x)?;
            let label = format!("{} — {}", s(&x["id"]), s(&x["name"]));
            Some(view! {
                <g class="site"><circle cx=cx cy=cy r="2.2"><title>{label}</title></circle>
                <text x=cx + 3.0 y=cy - 2.0>{s(&x["id"])}</text></g>
            })
        })
        .collect_view();
    view! {
        <section aria-labelledby="map-h">
            <h2 id="map-h">"Sites and links"</h2>
            <svg class="map" viewBox="0 0 360 180" role="img" aria-label="World map of the estate's sites and the links between them" data-testid="map">
                <image href="/world.svg" x="0" y="0" width="360" height="180"/>
                {links}
                {dots}
            </svg>
            <p class="legend">"Links: "<span class="key rtt-near">"< 10 ms"</span>" "<span class="key rtt-mid">"10–40 ms"</span>" "<span class="key rtt-far">"> 40 ms"</span>"; solid = measured, dashed = reported, dotted = inferred or guessed."</p>
            {(!unplaced.is_empty()).then(|| view! { <p class="hint">"Not on the map (no coordinates recorded): "{unplaced.join(", ")}</p> })}
        </section>
    }
}

#[component]
fn Clusters(doc: Value) -> impl IntoView {
    let rows = arr(&doc["clusters"])
        .into_iter()
        .map(|c| {
            let bar = |total: &Value, free: &Value, label: &'static str| {
                let (t, f) = (total.as_f64(), free["value"].as_f64());
                match (t, f) {
                    (Some(t), Some(f)) if t > 0.0 => {
                        let used = ((t - f) / t).clamp(0.0, 1.0);
                        let pct = format!("{:.0}", used * 100.0);
                        // Over 80 % is where the headroom penalty starts.
                        let hot = used > 0.8;
                        view! {
                            <div class="loadbar" role="meter" aria-valuemin="0" aria-valuemax="100" aria-valuenow=pct.clone() aria-label=format!("{label} used")>
                                <span class:hot=hot style=format!("width:{}%", used * 100.0)></span>
                                <em>{format!("{label} {pct}% ({} class)", s(&free["class"]))}</em>
                            </div>
                        }.into_any()
                    }
                    _ => view! { <div class="loadbar unknown"><em>{format!("{label}: unknown")}</em></div> }.into_any(),
                }
            };
            view! {
                <tr>
                    <th scope="row">{s(&c["id"])}</th>
                    <td>{s(&c["site"])}</td>
                    <td><span class=format!("health h-{}", s(&c["health"]))>{s(&c["health"])}</span></td>
                    <td>{bar(&c["cpu_total"], &c["cpu_free"], "CPU")}</td>
                    <td>{bar(&c["memory_total_gib"], &c["memory_free_gib"], "memory")}</td>
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

/// The heaviest flows drawn on a circle of services grouped by cluster;
/// line width grows with the flow's weight.
#[component]
fn Graph(doc: Value) -> impl IntoView {
    // 150 heaviest flows: beyond that lines become a grey disc on a page
    // this size; the table below the map has every fact.
    const MAX_FLOWS: usize = 150;
    let mut flows = arr(&doc["flows"]);
    flows.sort_by(|a, b| {
        let w = |x: &Value| x["weight"]["value"].as_f64().unwrap_or(0.0);
        w(b).total_cmp(&w(a))
    });
    flows.truncate(MAX_FLOWS);
    let mut names: Vec<(String, String)> = Vec::new();
    for f in &flows {
        for k in ["from", "to"] {
            let id = s(&f[k]);
            if !names.iter().any(|n| n.0 == id) {
                let cluster = arr(&doc["services"])
                    .iter()
                    .find(|x| x["id"] == id.as_str())
                    .map(|x| s(&x["cluster"]))
                    .unwrap_or_default();
                names.push((id, cluster));
            }
        }
    }
    names.sort_by(|a, b| (&a.1, &a.0).cmp(&(&b.1, &b.0)));
    let n = names.len().max(1) as f64;
    let pos = |id: &str| {
        let i = names.iter().position(|x| x.0 == id).unwrap_or(0) as f64;
        let a = i / n * std::f64::consts::TAU;
        (200.0 + 150.0 * a.cos(), 200.0 + 150.0 * a.sin())
    };
    let maxw = flows
        .iter()
        .filter_map(|f| f["weight"]["value"].as_f64())
        .fold(1e-9, f64::max);
    let lines = flows
        .iter()
        .map(|f| {
            let (a, b) = (pos(&s(&f["from"])), pos(&s(&f["to"])));
            let w = f["weight"]["value"].as_f64();
            let title = format!("{} → {}: weight {}", s(&f["from"]), s(&f["to"]), num(&f["weight"]["value"], 1));
            view! {
                <line x1=a.0 y1=a.1 x2=b.0 y2=b.1 class="flow" stroke-width=0.5 + 4.0 * w.unwrap_or(0.0) / maxw><title>{title}</title></line>
            }
        })
        .collect_view();
    let labels = names
        .iter()
        .map(|(id, cluster)| {
            let (x, y) = pos(id);
            view! { <g class="svc"><circle cx=x cy=y r="3"><title>{format!("{id} on {cluster}")}</title></circle>
                <text x=x + 4.0 y=y>{id.clone()}</text></g> }
        })
        .collect_view();
    view! {
        <section aria-labelledby="g-h">
            <h2 id="g-h">"Service graph"</h2>
            <svg class="graph" viewBox="-60 0 520 400" role="img" aria-label="Services and the flows between them; thicker lines carry more" data-testid="graph">
                {lines}{labels}
            </svg>
        </section>
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn facts_are_named_aged_and_marked_stale_by_their_class_window() {
        let doc = serde_json::json!({
            "clusters": [{"id": "c1", "cpu_free": {"value": 4, "class": "measured", "source": "agent", "observed_at": "2026-11-30T04:00:00Z"}}],
            "flows": [{"from": "a", "to": "b", "weight": {"value": 1, "class": "reported", "source": "me", "observed_at": "2026-11-30T04:00:00Z"}}],
        });
        let st = serde_json::json!({"measured_s": 900, "reported_s": 86400, "inferred_s": 604800});
        let now = engine::parse_time("2026-11-30T05:00:00Z").unwrap();
        let rows = facts(&doc, &st, now);
        assert_eq!(rows.len(), 2);
        assert_eq!(rows[0].fact, "c1 cpu_free");
        assert!(rows[0].stale, "an hour-old measurement is stale");
        assert_eq!(rows[1].fact, "flow a→b weight");
        assert!(!rows[1].stale);
        assert_eq!(rows[1].age_s, Some(3600));
    }

    #[test]
    fn the_facts_table_filters_searches_and_pages() {
        let row = |fact: &str, class: &str, stale: bool| FactRow {
            fact: fact.into(),
            value: serde_json::json!(1),
            class: class.into(),
            source: "agent:c-fra-1".into(),
            age_s: Some(if stale { 90_000 } else { 60 }),
            stale,
        };
        let mut rows: Vec<FactRow> = (0..250)
            .map(|i| row(&format!("svc-{i} cpu"), "measured", false))
            .collect();
        rows.push(row("flow cart→redis weight", "guessed", true));
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
