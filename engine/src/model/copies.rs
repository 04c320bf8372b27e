//! Copies of one Kubernetes workload: the services of an estate that are
//! the same Kubernetes object (API version, kind, namespace, name) running
//! in different clusters — typically one application imported into two
//! clusters (`frontend` from `c-1`, `c-2/frontend` from `c-2`, both
//! `Deployment default/frontend`).
//!
//! A multi-cluster controller keeps one template of such a workload and
//! places it on a set of clusters, one copy per cluster: so a change plan
//! writes one export object per workload listing every cluster it runs in
//! (`plan.rs`, `docs/plans.md`), and a what-if that puts a second copy on
//! a cluster where one already runs counts them once (`whatif.rs`,
//! `docs/scenario-format.md`).
//!
//! Which object a service is: `Service::workload_ref` (its `workload`,
//! else the one its Kubernetes-import `source` names). Two services are
//! copies when those agree on kind, namespace and name and on the API
//! version once defaulted (`Workload::api_version`: `apps/v1` for the
//! built-in workload kinds), so a hand-written `workload` with
//! `api_version: apps/v1` and an imported `source` name the same object.

use std::collections::BTreeMap;

use crate::estate::{Estate, Workload};

/// The identity of a Kubernetes object across clusters, ordered by
/// namespace, kind, name, then API version.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Key {
    pub namespace: String,
    pub kind: String,
    pub name: String,
    /// As defaulted by [`Workload::api_version`]; `None` for a kind that
    /// has no default, written without one.
    pub api_version: Option<String>,
}

impl Key {
    pub fn of(w: &Workload) -> Key {
        Key {
            namespace: w.namespace.clone(),
            kind: w.kind.clone(),
            name: w.name.clone(),
            api_version: w.api_version().map(str::to_string),
        }
    }
}

/// One workload and the services that are its copies.
#[derive(Clone, Debug, PartialEq)]
pub struct Group {
    /// As the first of its services names it.
    pub workload: Workload,
    /// Service indices, ascending (= id order).
    pub services: Vec<usize>,
}

/// Every workload the estate's services name, and which one each service
/// is.
#[derive(Clone, Debug, PartialEq)]
pub struct Copies {
    /// Ordered by their first service's index.
    pub groups: Vec<Group>,
    /// Per service: the index of its group in `groups`; `None` when the
    /// estate does not say which object the service is.
    pub of: Vec<Option<usize>>,
}

impl Copies {
    /// The other copies of service `s` (index order), empty when it has
    /// none or is no named workload.
    pub fn others(&self, s: usize) -> impl Iterator<Item = usize> + '_ {
        self.of[s]
            .into_iter()
            .flat_map(move |g| self.groups[g].services.iter().copied())
            .filter(move |&o| o != s)
    }
}

/// Group the estate's services by the Kubernetes object they are. One pass
/// in service index order; the map is keyed by [`Key`] and read only for
/// look-ups, so the result depends on nothing but the estate.
pub fn copies(estate: &Estate) -> Copies {
    let mut index: BTreeMap<Key, usize> = BTreeMap::new();
    let mut groups: Vec<Group> = Vec::new();
    let mut of = Vec::with_capacity(estate.services.len());
    for (s, service) in estate.services.iter().enumerate() {
        let Some(w) = service.workload_ref() else {
            of.push(None);
            continue;
        };
        let g = *index.entry(Key::of(&w)).or_insert_with(|| {
            groups.push(Group {
                workload: w,
                services: Vec::new(),
            });
            groups.len() - 1
        });
        groups[g].services.push(s);
        of.push(Some(g));
    }
    Copies { groups, of }
}

/// `Deployment default/frontend`: how messages name a workload.
pub fn words(w: &Workload) -> String {
    format!("{} {}/{}", w.kind, w.namespace, w.name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_source_and_a_written_workload_name_one_object() {
        let from_source =
            Workload::from_source("kubernetes:c-2/default/Deployment/frontend").unwrap();
        let written = Workload {
            api_version: Some("apps/v1".into()),
            kind: "Deployment".into(),
            namespace: "default".into(),
            name: "frontend".into(),
        };
        assert_eq!(Key::of(&from_source), Key::of(&written));
        let other_group = Workload {
            api_version: Some("example.com/v1".into()),
            ..written.clone()
        };
        assert_ne!(Key::of(&other_group), Key::of(&written));
        let other_kind =
            Workload::from_source("kubernetes:c-2/default/StatefulSet/frontend").unwrap();
        assert_ne!(Key::of(&other_kind), Key::of(&written));
        assert_eq!(words(&written), "Deployment default/frontend");
    }
}
