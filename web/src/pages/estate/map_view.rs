//! The Estate page's world map: sites placed by their coordinates, links
//! coloured by RTT and styled by evidence class, recommended moves between
//! sites as arrows, names placed apart as the zoom changes.

use berth_engine::estate::Site;
use berth_engine::fact::Class;
use berth_engine::{Estate, Policy};
use leptos::prelude::*;
use std::collections::BTreeMap;
use std::sync::Arc;

use super::{fact_note, RecommendedMove};
use crate::pages::fixed;
use crate::{client, map};

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
pub(super) fn Map(
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
    let (pairs, within) = moves_between_sites(&estate, &moves);
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
            <MapTools view=view home=home/>
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
            <p class="legend">"Links: "<span class="key rtt-near">"< 10 ms"</span>" "<span class="key rtt-mid">"10–40 ms"</span>" "<span class="key rtt-far">"> 40 ms"</span><span>"; solid = measured, dashed = reported, dotted = inferred or guessed; faded = stale (older than its class's window: hover for class and age). Click a site to zoom in on it."</span></p>
            {(!unplaced.is_empty()).then(|| view! { <p class="hint">"Not on the map (no coordinates recorded): "{unplaced.join(", ")}</p> })}
        </section>
    }
}

/// The recommended moves between sites, by (from site, to site), and how
/// many stay within a site (those have no length on a world map; they are
/// counted under it and drawn on the service graph).
fn moves_between_sites(
    estate: &Estate,
    moves: &[RecommendedMove],
) -> (BTreeMap<(String, String), Vec<String>>, usize) {
    let site_of = |cluster: &str| {
        estate
            .cluster_index(cluster)
            .map(|c| estate.sites[estate.clusters[c].site].id.clone())
            .unwrap_or_default()
    };
    let mut pairs: BTreeMap<(String, String), Vec<String>> = BTreeMap::new();
    let mut within = 0usize;
    for m in moves {
        let (a, b) = (site_of(&m.from), site_of(&m.to));
        if a == b {
            within += 1;
        } else {
            pairs.entry((a, b)).or_default().push(m.service.clone());
        }
    }
    (pairs, within)
}

/// The map's zoom and pan buttons; "Every site" returns to `home`.
#[component]
fn MapTools(view: RwSignal<map::Viewport>, home: map::Viewport) -> impl IntoView {
    view! {
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
    }
}
