//! Placement's filter of the list of recommendations: search, cluster,
//! site, owner and least confidence.

use super::*;

/// What the list of recommendations is narrowed to: a search over
/// service, clusters and owner, a cluster (left or joined), and a least
/// confidence. Moves left out stay in the advice (and in "take into a
/// what-if"); only the list hides them.
#[derive(Clone, Copy)]
pub(super) struct MoveFilter {
    pub(super) query: RwSignal<String>,
    pub(super) cluster: RwSignal<String>,
    pub(super) site: RwSignal<String>,
    pub(super) owner: RwSignal<String>,
    pub(super) confidence: RwSignal<String>,
}

/// What the filter reads of a move beyond the move itself: its service's
/// owner and the sites it leaves and joins (from the estate document).
#[derive(Clone, Debug, Default)]
pub(super) struct MoveContext {
    pub(super) owner: String,
    pub(super) from_site: String,
    pub(super) to_site: String,
}

impl MoveContext {
    pub(super) fn of(m: &Move) -> MoveContext {
        let Some(l) = client::loaded_now() else {
            return MoveContext::default();
        };
        let e = &l.estate;
        let site = |cluster: &str| {
            e.cluster_index(cluster)
                .map(|c| e.sites[e.clusters[c].site].id.clone())
                .unwrap_or_default()
        };
        MoveContext {
            owner: e
                .service_index(&m.service)
                .map(|i| e.services[i].owner.clone())
                .unwrap_or_default(),
            from_site: site(&m.from),
            to_site: site(&m.to),
        }
    }
}

/// Confidence classes from strongest to weakest, as the filter offers them.
pub(super) const CLASSES: [Class; 4] = [
    Class::Measured,
    Class::Reported,
    Class::Inferred,
    Class::Guessed,
];

impl MoveFilter {
    pub(super) fn new() -> MoveFilter {
        MoveFilter {
            query: RwSignal::new(String::new()),
            cluster: RwSignal::new(String::new()),
            site: RwSignal::new(String::new()),
            owner: RwSignal::new(String::new()),
            confidence: RwSignal::new(String::new()),
        }
    }

    /// Does the move (with its owner and sites) pass, read at confidence
    /// `confidence` (a compound step's is the group's, the weakest of its
    /// members')?
    pub(super) fn passes(&self, m: &Move, cx: &MoveContext, confidence: Class) -> bool {
        let owner = cx.owner.as_str();
        let q = self.query.get().trim().to_lowercase();
        let text_ok = q.is_empty()
            || [m.service.as_str(), m.from.as_str(), m.to.as_str(), owner]
                .iter()
                .any(|t| t.to_lowercase().contains(&q));
        let c = self.cluster.get();
        let cluster_ok = c.is_empty() || m.from == c || m.to == c;
        let least = self.confidence.get();
        // Classes order from strongest to weakest; "at least reported"
        // keeps measured and reported.
        let conf_ok = least.is_empty()
            || CLASSES
                .iter()
                .find(|k| k.as_str() == least)
                .is_none_or(|least| confidence <= *least);
        let site = self.site.get();
        let site_ok = site.is_empty() || cx.from_site == site || cx.to_site == site;
        let who = self.owner.get();
        let owner_ok = who.is_empty() || owner == who;
        text_ok && cluster_ok && conf_ok && site_ok && owner_ok
    }
}

impl MoveFilter {
    /// Every choice back to "any".
    pub(super) fn clear(self) {
        self.query.set(String::new());
        self.cluster.set(String::new());
        self.site.set(String::new());
        self.owner.set(String::new());
        self.confidence.set(String::new());
    }

    /// Whether anything narrows the list.
    pub(super) fn any(self) -> bool {
        !(self.query.get().is_empty()
            && self.cluster.get().is_empty()
            && self.site.get().is_empty()
            && self.owner.get().is_empty()
            && self.confidence.get().is_empty())
    }
}

/// The clusters, sites and owners the steps name, sorted: the filter's
/// choices.
pub(super) fn options(recommended: &[Card]) -> (Vec<String>, Vec<String>, Vec<String>) {
    let mut clusters: Vec<String> = recommended
        .iter()
        .flat_map(|c| {
            c.members
                .iter()
                .flat_map(|(m, _, _)| [m.from.clone(), m.to.clone()])
        })
        .collect();
    clusters.sort();
    clusters.dedup();
    let mut sites: Vec<String> = recommended
        .iter()
        .flat_map(|c| {
            c.members
                .iter()
                .flat_map(|(_, _, cx)| [cx.from_site.clone(), cx.to_site.clone()])
        })
        .filter(|x| !x.is_empty())
        .collect();
    sites.sort();
    sites.dedup();
    let mut owners: Vec<String> = recommended
        .iter()
        .flat_map(|c| c.members.iter().map(|(_, _, cx)| cx.owner.clone()))
        .filter(|x| !x.is_empty())
        .collect();
    owners.sort();
    owners.dedup();
    (clusters, sites, owners)
}

/// The filter's controls and how many steps it shows.
#[component]
pub(super) fn FilterBar(
    filter: MoveFilter,
    clusters: Vec<String>,
    sites: Vec<String>,
    owners: Vec<String>,
    count: Signal<usize>,
    total: Signal<usize>,
) -> impl IntoView {
    view! {
        <div class="move-filter" role="search" aria-label="Narrow the recommendations">
            <label for="mf-q">"Search"</label>
            <input id="mf-q" type="search" placeholder="service, cluster or owner" bind:value=filter.query/>
            <label for="mf-cluster">"Cluster"</label>
            <select id="mf-cluster" on:change=move |ev| filter.cluster.set(event_target_value(&ev)) prop:value=move || filter.cluster.get()>
                <option value="">"any"</option>
                {clusters.into_iter().map(|c| view! { <option value=c.clone()>{c.clone()}</option> }).collect_view()}
            </select>
            <label for="mf-site">"Site"</label>
            <select id="mf-site" on:change=move |ev| filter.site.set(event_target_value(&ev)) prop:value=move || filter.site.get()>
                <option value="">"any"</option>
                {sites.into_iter().map(|c| view! { <option value=c.clone()>{c.clone()}</option> }).collect_view()}
            </select>
            <label for="mf-owner">"Owner"</label>
            <select id="mf-owner" on:change=move |ev| filter.owner.set(event_target_value(&ev)) prop:value=move || filter.owner.get()>
                <option value="">"any"</option>
                {owners.into_iter().map(|c| view! { <option value=c.clone()>{c.clone()}</option> }).collect_view()}
            </select>
            <label for="mf-conf">"Confidence at least"</label>
            <select id="mf-conf" on:change=move |ev| filter.confidence.set(event_target_value(&ev)) prop:value=move || filter.confidence.get()>
                <option value="">"any"</option>
                {CLASSES.into_iter().map(|c| view! { <option value=c.as_str()>{c.as_str()}</option> }).collect_view()}
            </select>
            <span role="status" data-testid="moves-showing">{move || {
                let (n, total) = (count.get(), total.get());
                if n == total { format!("All {total} steps shown.") } else { format!("Showing {n} of {total} steps.") }
            }}</span>
            {move || filter.any().then(|| view! { <button type="button" class="small" data-testid="clear-filters" on:click=move |_| filter.clear()>"Clear filters"</button> })}
        </div>
    }
}
