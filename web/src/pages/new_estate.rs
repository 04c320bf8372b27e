//! New estate: a name and id, sites (each from a city picker, every field
//! still editable), the round trip between each pair of sites (pre-filled
//! from a published table where both sites lie in its regions) and
//! clusters, checked in the browser by the engine the server loads estates
//! with — each error shown next to the field it is about — then created
//! with `POST /api/estates?id=…`.

mod document;
mod entries;

use std::collections::BTreeMap;

use leptos::prelude::*;
use serde_json::Value;

pub use document::*;
use entries::{ClusterEntry, ClusterRow, Errors, Placed, RoundTripEntry, SiteEntry, SiteRow};

use crate::client;
use crate::common::Auth;

/// The form's state, shared by its parts.
#[derive(Clone, Copy)]
struct Form {
    auth: Auth,
    name: RwSignal<String>,
    /// The id as typed; `None` while it follows the name (its slug).
    id_typed: RwSignal<Option<String>>,
    next_key: StoredValue<usize>,
    sites: RwSignal<Vec<SiteRow>>,
    clusters: RwSignal<Vec<ClusterRow>>,
    placed: Placed,
    /// What was typed for each pair of sites (by their rows' keys); a pair
    /// absent here shows the published figure, if any.
    typed_rtt: RwSignal<BTreeMap<(usize, usize), String>>,
    checked: RwSignal<Option<String>>,
    error: RwSignal<Option<String>>,
    busy: RwSignal<bool>,
    /// The id of the estate once created: the form gives way to its next
    /// steps.
    created: RwSignal<Option<String>>,
}

impl Form {
    fn new(auth: Auth) -> Form {
        Form {
            auth,
            name: RwSignal::new(String::new()),
            id_typed: RwSignal::new(None),
            next_key: StoredValue::new(2),
            sites: RwSignal::new(vec![SiteRow::new(0)]),
            clusters: RwSignal::new(vec![ClusterRow::new(1)]),
            placed: Placed(RwSignal::new(Vec::new())),
            typed_rtt: RwSignal::new(BTreeMap::new()),
            checked: RwSignal::new(None),
            error: RwSignal::new(None),
            busy: RwSignal::new(false),
            created: RwSignal::new(None),
        }
    }

    /// The estate's id: as typed, else the name's slug.
    fn estate_id(self) -> String {
        self.id_typed
            .get()
            .unwrap_or_else(|| slug(&self.name.get()))
    }

    fn estate_id_untracked(self) -> String {
        self.id_typed
            .get_untracked()
            .unwrap_or_else(|| slug(&self.name.get_untracked()))
    }

    fn user(self) -> String {
        match self.auth.session.get_untracked() {
            Some(Some(s)) => s.subject,
            _ => "unknown".to_string(),
        }
    }

    fn fresh_key(self) -> usize {
        let k = self.next_key.get_value();
        self.next_key.set_value(k + 1);
        k
    }

    fn site_index(self, key: usize) -> usize {
        self.sites
            .get()
            .iter()
            .position(|r| r.key == key)
            .unwrap_or(0)
    }

    fn cluster_index(self, key: usize) -> usize {
        self.clusters
            .get()
            .iter()
            .position(|r| r.key == key)
            .unwrap_or(0)
    }

    /// The pairs of sites, by their rows' keys, in the form's order.
    fn pairs(self) -> Vec<(usize, usize)> {
        let rows = self.sites.get();
        let mut out = Vec::new();
        for (i, a) in rows.iter().enumerate() {
            for b in &rows[i + 1..] {
                out.push((a.key, b.key));
            }
        }
        out
    }

    fn add_site(self) {
        let k = self.fresh_key();
        self.sites.update(|v| v.push(SiteRow::new(k)));
    }

    fn add_cluster(self) {
        let k = self.fresh_key();
        let row = ClusterRow::new(k);
        // A new cluster starts at the last site entered.
        if let Some(s) = self.sites.get_untracked().last() {
            row.site.set(s.id.get_untracked());
        }
        self.clusters.update(|v| v.push(row));
    }

    /// Every pair of sites with ids, in the form's order: the link of each
    /// pair that has a value, and which pair each link is.
    fn round_trips(self) -> (Vec<(usize, usize)>, Vec<RoundTripFields>) {
        let rows = self.sites.get_untracked();
        let typed = self.typed_rtt.get_untracked();
        let mut pair_of_link = Vec::new();
        let mut trips = Vec::new();
        for (i, ra) in rows.iter().enumerate() {
            for rb in &rows[i + 1..] {
                let (fa, fb) = (ra.fields(), rb.fields());
                if fa.id.trim().is_empty() || fb.id.trim().is_empty() {
                    continue;
                }
                let t = typed.get(&(ra.key, rb.key)).map(String::as_str);
                if let Some(r) = round_trip(&fa.id, &fb.id, t, &suggestion(&fa, &fb), &self.user())
                {
                    pair_of_link.push((ra.key, rb.key));
                    trips.push(r);
                }
            }
        }
        (pair_of_link, trips)
    }

    /// The document and the id problems as they stand, all shown at once;
    /// the document when there are none.
    fn check(self) -> Option<Value> {
        let s: Vec<SiteFields> = self
            .sites
            .get_untracked()
            .iter()
            .map(SiteRow::fields)
            .collect();
        let c: Vec<ClusterFields> = self
            .clusters
            .get_untracked()
            .iter()
            .map(ClusterRow::fields)
            .collect();
        let (pair_of_link, trips) = self.round_trips();
        let doc = estate_document(&self.name.get_untracked(), &s, &c, &trips);
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
        let id = self.estate_id_untracked();
        if let Some(m) = id_problem(&id) {
            let p = Problem {
                path: "/id".into(),
                line: None,
                message: format!("estate id {id:?}: {m}"),
            };
            found.insert(0, ("/id".into(), p));
        }
        self.checked.set(
            found
                .is_empty()
                .then(|| "The engine accepts this estate.".to_string()),
        );
        let ok = found.is_empty();
        self.placed.0.set(found);
        ok.then_some(doc)
    }

    /// Check, then `POST /api/estates?id=…`; the server's errors land at
    /// their inputs as the engine's do.
    fn create(self) {
        self.error.set(None);
        let Some(doc) = self.check() else { return };
        let id = self.estate_id_untracked();
        self.busy.set(true);
        leptos::task::spawn_local(async move {
            let path = berth_api::endpoint::create_estate().query("id", &id);
            match client::request("POST", &path, Some(doc.to_string())).await {
                // The next steps, read from the estate just created.
                Ok(_) => {
                    let name = self.name.get_untracked().trim().to_string();
                    self.auth.estates.update(|v| {
                        if !v.iter().any(|(e, _)| *e == id) {
                            v.push((id.clone(), name));
                        }
                    });
                    self.auth.estate.set(Some(id.clone()));
                    self.busy.set(false);
                    self.created.set(Some(id));
                }
                Err(f) => {
                    let (n_sites, n_clusters) = (
                        self.sites.get_untracked().len(),
                        self.clusters.get_untracked().len(),
                    );
                    self.placed.0.set(
                        f.errors
                            .iter()
                            .map(Problem::from_input)
                            .map(|p| (anchor(&p, n_sites, n_clusters), p))
                            .collect(),
                    );
                    self.checked.set(None);
                    self.error.set(Some(f.message));
                    self.busy.set(false);
                }
            }
        });
    }
}

/// The errors placed nowhere more precise, at the top of the form.
fn top_errors(form: Form) -> impl IntoView {
    let top = Signal::derive(form.placed.at(String::new()));
    move || {
        let list = top.get();
        (!list.is_empty()).then(|| view! {
            <ul class="error" role="alert" data-testid="form-errors">
                {list.into_iter().map(|p| view! { <li>{format!("{}: {}", p.path, p.message)}</li> }).collect_view()}
            </ul>
        })
    }
}

/// The form: name and id, sites, round trips, clusters, Check and Create.
#[component]
fn EstateForm(form: Form) -> impl IntoView {
    let placed = form.placed;
    let on_create = move |ev: leptos::ev::SubmitEvent| {
        ev.prevent_default();
        form.create();
    };
    view! {
        <p class="hint">"Describe where your clusters run. Services come later, from Kubernetes manifests on the Import page (or an estate file). Every field is checked by the same engine the server uses before anything is sent."</p>
        <datalist id="tiers"><option value="prod"/><option value="staging"/><option value="dev"/><option value="edge"/></datalist>
        <datalist id="zones"><option value="general"/><option value="pci"/><option value="restricted"/></datalist>
        <form class="new-estate" on:submit=on_create novalidate>
            {top_errors(form)}
            <div class="entry-grid">
                <div class="field">
                    <label for="estate-name">"Estate name"</label>
                    <input id="estate-name" bind:value=form.name/>
                    <Errors problems=Signal::derive(placed.at("/name".into()))/>
                </div>
                <div class="field">
                    <label for="estate-id">"Estate id"</label>
                    <input id="estate-id" prop:value=move || form.estate_id() on:input=move |ev| form.id_typed.set(Some(event_target_value(&ev)))/>
                    <span class="hint">"Used in addresses; from the name unless you change it."</span>
                    <Errors problems=Signal::derive(placed.at("/id".into()))/>
                </div>
            </div>
            <h2>"Sites"</h2>
            <Errors problems=Signal::derive(placed.at("/sites".into()))/>
            <For each=move || form.sites.get() key=|r| r.key children=move |row| view! { <SiteEntry form row/> }/>
            <button type="button" on:click=move |_| form.add_site()>"Add a site"</button>
            {move || (form.sites.with(Vec::len) > 1).then(|| view! {
                <h2>"Round trips between sites"</h2>
                <p class="hint">"How long a request takes to go from one site to the other and back. Where both sites lie in cloud regions of a published table, its median is filled in; a figure you know better wins; a pair left empty stays unknown, and each pair says what that costs."</p>
            })}
            <div class="round-trips" data-testid="round-trips">
                <For each=move || form.pairs() key=|k| *k children=move |(ka, kb)| view! { <RoundTripEntry form ka kb/> }/>
            </div>
            <h2>"Clusters"</h2>
            <Errors problems=Signal::derive(placed.at("/clusters".into()))/>
            <For each=move || form.clusters.get() key=|r| r.key children=move |row| view! { <ClusterEntry form row/> }/>
            <button type="button" on:click=move |_| form.add_cluster()>"Add a cluster"</button>
            <div class="actions">
                <button type="button" on:click=move |_| { form.error.set(None); form.check(); }>"Check"</button>
                " "
                <button type="submit" disabled=move || form.busy.get()>{move || if form.busy.get() { "Creating…" } else { "Create the estate" }}</button>
                {move || form.checked.get().map(|m| view! { <span class="ok-line" role="status" data-testid="check-ok">"✓ "{m}</span> })}
            </div>
            {move || form.error.get().map(|m| view! { <p class="error" role="alert" data-testid="create-error">{m}</p> })}
        </form>
    }
}

/// After creation: the links, and the estate's next steps.
fn created_view(form: Form, id: String) -> impl IntoView {
    let now = client::query_param("now");
    let at = |path: &str| crate::common::keep_query(path, Some(&id), now.as_deref());
    view! {
        <section class="created" data-testid="created">
            <p class="ok-line" role="status">{format!("✓ Estate “{}” created (id {id}).", form.name.get_untracked().trim())}</p>
            <p class="links">
                <a href=at("/import")>"Import services"</a>" · "
                <a href=at("/estate")>"Open the estate"</a>" · "
                <a href=at("/")>"Placement"</a>
            </p>
            <super::next_steps::NextSteps estate=id.clone() always=true/>
        </section>
    }
}

#[component]
pub fn NewEstate() -> impl IntoView {
    let auth = expect_context::<Auth>();
    let form = Form::new(auth);
    let may_operate = move || matches!(auth.session.get(), Some(Some(s)) if s.may_operate());
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
            Some(Some(_)) => match form.created.get() {
                Some(id) => created_view(form, id).into_any(),
                None => view! { <EstateForm form/> }.into_any(),
            },
        }}
    }
}
