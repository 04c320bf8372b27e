//! Where each service may go at all: the statically allowed destinations
//! of every service, kept once per constraint profile. Built by
//! [`crate::advise::feasibility`]; read by the recommender, the flow gains
//! ([`crate::deltas`]), the bound and the group search. A leaf: it imports
//! nothing of the engine, so everything above may share it.

/// Every service's statically allowed destinations, kept once per
/// *constraint profile* rather than once per service.
///
/// The static rules (`crate::constraints::STATIC_RULES`) read a service only
/// through its immobility, its allowed jurisdictions, the trust zone it
/// must stay in and its allowed tiers ([`crate::constraints::static_profile`]);
/// everything else they read is the cluster's. Services with one profile
/// may therefore go to exactly the same clusters, less each one's own. An
/// estate has a handful of profiles, so this is a few cluster lists and
/// one pair of numbers per service, where a list per service costs
/// services × clusters words (160 MB at 50,000 × 400) and as many rule
/// checks.
pub struct Candidates {
    /// The allowed clusters of each profile, in index order.
    lists: Vec<Vec<usize>>,
    /// Per service: its profile's list (`NONE`: it cannot move), and the
    /// position of its own cluster in that list (`NONE`: not in it).
    of: Vec<(u32, u32)>,
}

const NONE: u32 = u32::MAX;

/// One service's candidates: its profile's list around its own cluster.
#[derive(Clone, Copy, Debug)]
pub struct Cands<'a> {
    head: &'a [usize],
    tail: &'a [usize],
}

impl<'a> Cands<'a> {
    pub fn iter(&self) -> impl Iterator<Item = usize> + 'a {
        (*self).into_iter()
    }
    pub fn len(&self) -> usize {
        self.head.len() + self.tail.len()
    }
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
    pub fn contains(&self, c: usize) -> bool {
        self.head.binary_search(&c).is_ok() || self.tail.binary_search(&c).is_ok()
    }
}

impl<'a> IntoIterator for Cands<'a> {
    type Item = usize;
    type IntoIter = std::iter::Copied<
        std::iter::Chain<std::slice::Iter<'a, usize>, std::slice::Iter<'a, usize>>,
    >;
    fn into_iter(self) -> Self::IntoIter {
        self.head.iter().chain(self.tail).copied()
    }
}

impl Candidates {
    /// The candidates of service `s`, in cluster index order.
    pub fn of(&self, s: usize) -> Cands<'_> {
        let (list, own) = self.of[s];
        if list == NONE {
            return Cands {
                head: &[],
                tail: &[],
            };
        }
        let l = &self.lists[list as usize];
        if own == NONE {
            return Cands { head: l, tail: &[] };
        }
        let own = own as usize;
        Cands {
            head: &l[..own],
            tail: &l[own + 1..],
        }
    }

    /// How many services.
    pub fn len(&self) -> usize {
        self.of.len()
    }

    pub fn is_empty(&self) -> bool {
        self.of.is_empty()
    }

    /// One list per service, for callers that keep them anyway.
    pub fn to_lists(&self) -> Vec<Vec<usize>> {
        (0..self.len())
            .map(|s| self.of(s).iter().collect())
            .collect()
    }

    /// Room for `services` services, no lists yet.
    pub fn with_capacity(services: usize) -> Candidates {
        Candidates {
            lists: Vec::new(),
            of: Vec::with_capacity(services),
        }
    }

    /// Keep a list of clusters (in index order); its number for [`push`].
    ///
    /// [`push`]: Candidates::push
    pub fn add_list(&mut self, clusters: Vec<usize>) -> usize {
        debug_assert!(clusters.windows(2).all(|w| w[0] < w[1]));
        self.lists.push(clusters);
        self.lists.len() - 1
    }

    /// The next service: on list `list` (`None`: it cannot move), living on
    /// cluster `own`.
    pub fn push(&mut self, list: Option<usize>, own: usize) {
        let Some(list) = list else {
            self.of.push((NONE, NONE));
            return;
        };
        let pos = self.lists[list]
            .binary_search(&own)
            .map_or(NONE, |p| p as u32);
        self.of.push((list as u32, pos));
    }
}
