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

use berth_engine::fact::{Class, Fact};
use berth_engine::{Estate, Policy};
use leptos::prelude::*;

use super::{age, fixed};
use crate::client;
use crate::common::{Auth, ErrorLine, Gate};
use crate::graph;
use std::collections::BTreeMap;
use std::sync::Arc;

mod graph_view;
mod map_view;
use graph_view::Graph;
use map_view::Map;

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
