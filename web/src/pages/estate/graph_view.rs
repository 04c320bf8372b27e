//! The Estate page's service graph ([`crate::graph`] lays it out): boxes,
//! routed lines with numbers, moves as arrows, selection that lights a
//! service's lines and neighbours and fades the rest, the legend and the
//! side panel.

use super::*;

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
pub(super) fn Graph(
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
