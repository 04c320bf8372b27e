//! The New estate form's entries: the rows of sites and clusters as
//! signals, the round trip of each pair of sites, and the errors shown at
//! each input.

use leptos::prelude::*;

use berth_engine::published_rtt;

use super::document::{empty_cost, suggestion, ClusterFields, Problem, SiteFields, Suggestion};
use super::Form;
use crate::cities::{self, CITIES};
use crate::pages::ms_text;

#[derive(Clone, Copy)]
pub(super) struct SiteRow {
    pub(super) key: usize,
    pub(super) id: RwSignal<String>,
    pub(super) name: RwSignal<String>,
    pub(super) lat: RwSignal<String>,
    pub(super) lon: RwSignal<String>,
    pub(super) jurisdiction: RwSignal<String>,
}

impl SiteRow {
    pub(super) fn new(key: usize) -> SiteRow {
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
    pub(super) fn fields_tracked(&self) -> SiteFields {
        SiteFields {
            id: self.id.get(),
            name: self.name.get(),
            lat: self.lat.get(),
            lon: self.lon.get(),
            jurisdiction: self.jurisdiction.get(),
        }
    }
    pub(super) fn fields(&self) -> SiteFields {
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
pub(super) struct ClusterRow {
    pub(super) key: usize,
    pub(super) id: RwSignal<String>,
    pub(super) name: RwSignal<String>,
    pub(super) site: RwSignal<String>,
    pub(super) tier: RwSignal<String>,
    pub(super) trust_zone: RwSignal<String>,
    pub(super) health: RwSignal<String>,
    pub(super) cpu_total: RwSignal<String>,
    pub(super) memory_total_gib: RwSignal<String>,
    pub(super) cpu_free: RwSignal<String>,
    pub(super) memory_free_gib: RwSignal<String>,
}

impl ClusterRow {
    pub(super) fn new(key: usize) -> ClusterRow {
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
    pub(super) fn fields(&self) -> ClusterFields {
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
pub(super) struct Placed(pub(super) RwSignal<Vec<(String, Problem)>>);

impl Placed {
    pub(super) fn at(self, place: String) -> impl Fn() -> Vec<Problem> {
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
pub(super) fn Errors(problems: Signal<Vec<Problem>>) -> impl IntoView {
    move || {
        problems
            .get()
            .into_iter()
            .map(|p| view! { <span class="error field-error" data-path=p.path.clone()>{p.message}</span> })
            .collect_view()
    }
}

/// One site: the city picker that fills it, and its fields.
#[component]
pub(super) fn SiteEntry(form: Form, row: SiteRow) -> impl IntoView {
    let k = row.key;
    let placed = form.placed;
    let index = move || form.site_index(k);
    let field = move |f: &'static str| {
        Signal::derive(move || placed.at(format!("/sites/{}/{f}", form.site_index(k)))())
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
    let row_errors = Signal::derive(move || placed.at(format!("/sites/{}", form.site_index(k)))());
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
            <button type="button" class="small" on:click=move |_| form.sites.update(|v| v.retain(|r| r.key != k))>
                {move || format!("Remove site {}", index() + 1)}
            </button>
        </fieldset>
    }
}

/// What a pair's round trip rests on: typed, published, or left empty
/// (and what that costs).
fn rtt_note(form: Form, typed: Option<String>, suggested: Suggestion) -> AnyView {
    match (typed, suggested) {
        (Some(t), s) if !t.trim().is_empty() => {
            let mut line = format!(
                "Typed by you: stored as reported, source user:{}.",
                form.user()
            );
            if let Suggestion::Published(p) = s {
                line.push_str(&format!(
                    " The published figure is {} ms ({}).",
                    ms_text(p.ms),
                    p.words()
                ));
            }
            view! { <span data-kind="typed">{line}</span> }.into_any()
        }
        (None, Suggestion::Published(p)) => view! {
            <span data-kind="published">
                "Pre-filled from "{p.words()}" ("
                <a href=published_rtt::SOURCE_URL target="_blank" rel="noopener">"source"</a>
                "): stored as reported, with that source. Change it if you know better; clear it to leave it unknown."
            </span>
        }
        .into_any(),
        (_, s) => view! { <span data-kind="empty">{empty_cost(&s)}</span> }.into_any(),
    }
}

/// The round trip between two sites (by their rows' keys): the published
/// figure pre-filled, else the estimate as the placeholder.
#[component]
pub(super) fn RoundTripEntry(form: Form, ka: usize, kb: usize) -> impl IntoView {
    let rows = form.sites.get_untracked();
    let (Some(ra), Some(rb)) = (
        rows.iter().find(|r| r.key == ka).copied(),
        rows.iter().find(|r| r.key == kb).copied(),
    ) else {
        return ().into_any();
    };
    let name_of = move |r: SiteRow| {
        let id = r.id.get();
        if id.trim().is_empty() {
            format!("site {}", form.site_index(r.key) + 1)
        } else {
            id
        }
    };
    let suggested = Memo::new(move |_| suggestion(&ra.fields_tracked(), &rb.fields_tracked()));
    let typed = move || form.typed_rtt.with(|m| m.get(&(ka, kb)).cloned());
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
    let note = move || rtt_note(form, typed(), suggested.get());
    let id = format!("pair-{ka}-{kb}");
    view! {
        <div class="field wide round-trip" data-testid="round-trip">
            <label for=id.clone()>{move || format!("Round trip {} ↔ {} (ms)", name_of(ra), name_of(rb))}</label>
            <input id=id inputmode="decimal" prop:value=value placeholder=placeholder
                on:input=move |ev| {
                    let v = event_target_value(&ev);
                    form.typed_rtt.update(|m| { m.insert((ka, kb), v); });
                }/>
            <span class="hint" data-testid="rtt-source">{note}</span>
            <Errors problems=Signal::derive(form.placed.at(format!("/pair/{ka}-{kb}")))/>
        </div>
    }
    .into_any()
}

/// A cluster's choice of site: the sites entered, and the one chosen
/// even when it is no longer among them (so the engine can name it as
/// unknown).
fn site_options(form: Form, row: ClusterRow) -> impl IntoView {
    let chosen = row.site.get();
    let mut ids: Vec<String> = form
        .sites
        .get()
        .iter()
        .map(|s| s.id.get())
        .filter(|s| !s.trim().is_empty())
        .collect();
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
}

/// One cluster: id, name, site, tier, trust zone, health, capacities.
#[component]
pub(super) fn ClusterEntry(form: Form, row: ClusterRow) -> impl IntoView {
    let k = row.key;
    let placed = form.placed;
    let index = move || form.cluster_index(k);
    let field = move |f: &'static str| {
        Signal::derive(move || placed.at(format!("/clusters/{}/{f}", form.cluster_index(k)))())
    };
    let id_for = move |f: &str| format!("cluster-{k}-{f}");
    let row_errors =
        Signal::derive(move || placed.at(format!("/clusters/{}", form.cluster_index(k)))());
    let label = move || format!("Cluster {}", index() + 1);
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
                        {move || site_options(form, row)}
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
            <button type="button" class="small" on:click=move |_| form.clusters.update(|v| v.retain(|r| r.key != k))>
                {move || format!("Remove cluster {}", index() + 1)}
            </button>
        </fieldset>
    }
}
