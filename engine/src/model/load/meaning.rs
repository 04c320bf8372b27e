//! Stage 2: meaning — ids, references, ranges and the rules between
//! records — turning raw shapes into a validated [`Estate`].

use super::*;

// ---------------------------------------------------------------------------
// Stage 2: meaning.

/// Largest number accepted anywhere: beyond it a value is a typo, and
/// keeping sums far from overflow keeps every total finite.
pub(super) const MAX_NUMBER: f64 = 1e12;

pub(super) struct Validator {
    errors: Vec<EstateError>,
    file_time: Option<i64>,
}

impl Validator {
    fn err(&mut self, path: String, message: String) {
        self.errors.push(EstateError {
            path,
            line: None,
            message,
        });
    }

    /// A non-empty text field of at most 256 bytes, with no hidden
    /// characters ([`crate::chars::name_problem`]).
    fn text(&mut self, s: &str, path: impl FnOnce() -> String) -> bool {
        if s.trim().is_empty() || s.len() > 256 {
            self.err(
                path(),
                "expected a non-empty string of at most 256 bytes".into(),
            );
            return false;
        }
        if let Some(problem) = crate::chars::name_problem(s) {
            self.err(path(), problem);
            return false;
        }
        true
    }

    /// An id by the rules of [`crate::chars::id_problem`].
    fn id(&mut self, s: &str, path: impl FnOnce() -> String) -> bool {
        match crate::chars::id_problem(s) {
            Some(problem) => {
                self.err(path(), problem);
                false
            }
            None => true,
        }
    }

    /// `v ≥ min` (or `> min` when `strict`), finite, at most MAX_NUMBER.
    fn number(&mut self, v: f64, min: f64, strict: bool, path: impl FnOnce() -> String) -> bool {
        let ok = v.is_finite() && (if strict { v > min } else { v >= min }) && v <= MAX_NUMBER;
        if !ok {
            let rel = if strict { ">" } else { "≥" };
            self.err(
                path(),
                format!("expected a number {rel} {min} (at most {MAX_NUMBER:e}), found {v}"),
            );
        }
        ok
    }

    /// A fact that may be unknown: absent is `absent`, a value must pass
    /// `check`, `null` is unknown without a reason ([`NOT_STATED`]), and a
    /// reason is text like any other. `None` when refused.
    fn told<T, P: Fn() -> String>(
        &mut self,
        raw: RawTold<T>,
        absent: T,
        path: P,
        check: impl FnOnce(&mut Self, T, &P) -> bool,
    ) -> Option<Told<T>>
    where
        T: Copy,
    {
        match raw {
            RawTold::Absent => Some(Told::Known(absent)),
            RawTold::Value(x) => check(self, x, &path).then_some(Told::Known(x)),
            RawTold::Null => Some(Told::Unknown(NOT_STATED.into())),
            RawTold::Unknown(why) => self
                .text(&why, || format!("{}/unknown", path()))
                .then_some(Told::Unknown(why)),
        }
    }

    fn time(&mut self, s: &str, path: impl FnOnce() -> String) -> Option<i64> {
        let t = parse_time(s);
        if t.is_none() {
            self.err(
                path(),
                format!("expected an RFC 3339 time such as 2026-11-30T04:00:00Z, found {s:?}"),
            );
        }
        t
    }

    fn fact(&mut self, raw: RawFact, path: impl Fn() -> String) -> Fact {
        match raw {
            RawFact::Unknown => Fact::unknown("file"),
            RawFact::Bare(v) => {
                self.number(v, 0.0, false, &path);
                Fact {
                    value: Some(v),
                    class: Class::Reported,
                    source: "file".into(),
                    observed_at: self.file_time,
                }
            }
            RawFact::Full {
                value,
                class,
                source,
                observed_at,
            } => {
                let (Some(value), Some(class)) = (value, class) else {
                    self.err(path(), "fact object needs \"value\" and \"class\"".into());
                    return Fact::unknown("file");
                };
                if let Some(v) = value {
                    self.number(v, 0.0, false, || format!("{}/value", path()));
                }
                let class = match Class::parse(&class) {
                    Some(c) => c,
                    None => {
                        self.err(
                            format!("{}/class", path()),
                            format!(
                                "expected one of \"measured\", \"reported\", \"inferred\", \"guessed\", found {class:?}"
                            ),
                        );
                        Class::Guessed
                    }
                };
                let source = match source {
                    Some(s) => {
                        self.text(&s, || format!("{}/source", path()));
                        s
                    }
                    None => "file".into(),
                };
                let observed_at = match observed_at {
                    Some(t) => self.time(&t, || format!("{}/observed_at", path())),
                    None => self.file_time,
                };
                Fact {
                    value,
                    // An unknown value is a guess whatever class it claims.
                    class: if value.is_some() {
                        class
                    } else {
                        Class::Guessed
                    },
                    source,
                    observed_at,
                }
            }
        }
    }

    /// A list constraint: non-empty, no blanks, sorted and de-duplicated.
    fn allow_list(
        &mut self,
        list: Option<Vec<String>>,
        what: &str,
        path: impl Fn() -> String,
    ) -> Option<Vec<String>> {
        let list = list?;
        if list.is_empty() {
            self.err(path(), format!("expected at least one {what}"));
            return None;
        }
        let mut set = BTreeSet::new();
        for (i, s) in list.into_iter().enumerate() {
            if self.text(&s, || format!("{}/{i}", path())) {
                set.insert(s);
            }
        }
        Some(set.into_iter().collect())
    }
}

/// Raw shapes → the model, with every meaning error.
pub(super) fn validate(raw: RawEstate, broken: &Broken) -> Result<Estate, Vec<EstateError>> {
    let mut v = Validator {
        errors: Vec::new(),
        file_time: None,
    };
    let traffic_default = header(&mut v, &raw);
    // Ids declared anywhere, valid or not: a reference to an item that was
    // itself refused is dropped quietly, since that item's own error says
    // what to fix (one typo must not echo through every reference).
    let declared = |ids: Vec<&String>, more: &BTreeSet<String>| -> BTreeSet<String> {
        ids.into_iter()
            .cloned()
            .chain(more.iter().cloned())
            .collect()
    };
    let declared_sites = declared(raw.sites.iter().map(|x| &x.id).collect(), &broken.sites);
    let declared_clusters = declared(
        raw.clusters.iter().map(|x| &x.id).collect(),
        &broken.clusters,
    );
    let declared_services = declared(
        raw.services.iter().map(|x| &x.id).collect(),
        &broken.services,
    );

    let sites = sites(&mut v, raw.sites);
    let site_idx: BTreeMap<&str, usize> = sites
        .iter()
        .enumerate()
        .map(|(i, s)| (s.id.as_str(), i))
        .collect();

    let clusters = clusters(&mut v, raw.clusters, &site_idx, &declared_sites);
    let cluster_idx: BTreeMap<&str, usize> = clusters
        .iter()
        .enumerate()
        .map(|(i, c)| (c.id.as_str(), i))
        .collect();

    // Links and paths.
    let links_raw: Vec<(String, String, RawFact, Option<f64>)> = raw
        .links
        .unwrap_or_default()
        .into_iter()
        .map(|l| (l.a, l.b, l.rtt_ms, l.bandwidth_mb_s))
        .collect();
    let links = rtt_facts(
        &mut v,
        links_raw,
        ("links", "site", "link"),
        &site_idx,
        &declared_sites,
    );
    let paths_raw: Vec<(String, String, RawFact, Option<f64>)> = raw
        .paths
        .unwrap_or_default()
        .into_iter()
        .map(|p| (p.a, p.b, p.rtt_ms, None))
        .collect();
    let paths = rtt_facts(
        &mut v,
        paths_raw,
        ("paths", "cluster", "path"),
        &cluster_idx,
        &declared_clusters,
    );

    let services = services(&mut v, raw.services, &cluster_idx, &declared_clusters);
    let service_idx: BTreeMap<&str, usize> = services
        .iter()
        .enumerate()
        .map(|(i, s)| (s.id.as_str(), i))
        .collect();

    let flows = flows(
        &mut v,
        raw.flows.unwrap_or_default(),
        &service_idx,
        &declared_services,
    );

    if v.errors.is_empty() && sites.is_empty() {
        v.err("/sites".into(), "expected at least one site".into());
    }
    if v.errors.is_empty() && clusters.is_empty() {
        v.err("/clusters".into(), "expected at least one cluster".into());
    }
    if !v.errors.is_empty() {
        return Err(v.errors);
    }
    Ok(Estate {
        name: raw.name,
        observed_at: v.file_time,
        traffic: traffic_default,
        sites,
        clusters,
        links,
        paths,
        services,
        flows,
    })
}

/// The file's own fields: schema, name, the published size limits,
/// `observed_at` (kept in `v` for bare numbers) and the traffic default.
fn header(v: &mut Validator, raw: &RawEstate) -> Option<TrafficDefault> {
    if raw.schema != 1.0 {
        v.err(
            "/schema".into(),
            format!(
                "unsupported schema {}; this version reads schema 1",
                raw.schema
            ),
        );
    }
    v.text(&raw.name, || "/name".into());
    // The published size limits (docs/estate-format.md) are the decider
    // contract's: an estate larger than a decider may be sent could be
    // advised on but never compared, so it is refused here, where every
    // estate enters (files, imports, the API), before anything is built.
    for (what, count, max) in [
        (
            "clusters",
            raw.clusters.len(),
            crate::decider::MAX_REQUEST_CLUSTERS,
        ),
        (
            "services",
            raw.services.len(),
            crate::decider::MAX_REQUEST_SERVICES,
        ),
        (
            "flows",
            raw.flows.as_ref().map_or(0, Vec::len),
            crate::decider::MAX_REQUEST_FLOWS,
        ),
    ] {
        if count > max {
            v.err(
                format!("/{what}"),
                format!("{count} {what}: an estate may hold at most {max} (the decider contract's limit)"),
            );
        }
    }
    if let Some(t) = &raw.observed_at {
        v.file_time = v.time(t, || "/observed_at".into());
    }
    match raw.traffic.as_deref() {
        None => None,
        Some("declared") => Some(TrafficDefault::Declared),
        Some("unknown") => Some(TrafficDefault::Unknown),
        Some(other) => {
            v.err(
                "/traffic".into(),
                format!("expected one of \"declared\", \"unknown\", found {other:?}"),
            );
            None
        }
    }
}

/// The sites, valid and unique, in id order.
fn sites(v: &mut Validator, raw_sites: Vec<RawSite>) -> Vec<Site> {
    let mut first_site: BTreeMap<String, usize> = BTreeMap::new();
    let mut sites = Vec::with_capacity(raw_sites.len());
    for (i, s) in raw_sites.into_iter().enumerate() {
        let p = || format!("/sites/{i}");
        let mut ok = v.id(&s.id, || format!("/sites/{i}/id"));
        ok &= v.text(&s.jurisdiction, || format!("/sites/{i}/jurisdiction"));
        if let Some(n) = &s.name {
            ok &= v.text(n, || format!("/sites/{i}/name"));
        }
        let coords = match (s.lat, s.lon) {
            (Some(lat), Some(lon)) => {
                if !(-90.0..=90.0).contains(&lat) {
                    v.err(
                        format!("/sites/{i}/lat"),
                        format!("expected −90…90, found {lat}"),
                    );
                }
                if !(-180.0..=180.0).contains(&lon) {
                    v.err(
                        format!("/sites/{i}/lon"),
                        format!("expected −180…180, found {lon}"),
                    );
                }
                Some((lat, lon))
            }
            (None, None) => None,
            (Some(_), None) => {
                v.err(p(), "\"lat\" given without \"lon\"".into());
                None
            }
            (None, Some(_)) => {
                v.err(p(), "\"lon\" given without \"lat\"".into());
                None
            }
        };
        // Duplicates are checked whatever else is wrong with either entry.
        if let Some(first) = first_site.get(&s.id) {
            v.err(
                format!("/sites/{i}/id"),
                format!("duplicate site id {:?} (first at /sites/{first})", s.id),
            );
            continue;
        }
        first_site.insert(s.id.clone(), i);
        if !ok {
            continue;
        }
        sites.push(Site {
            name: s.name.unwrap_or_else(|| s.id.clone()),
            id: s.id,
            coords,
            jurisdiction: s.jurisdiction,
        });
    }
    sites.sort_by(|a, b| a.id.cmp(&b.id));
    sites
}

/// The clusters, valid and unique, on known sites, in id order; each
/// `mesh_cluster` alias standing for one cluster.
fn clusters(
    v: &mut Validator,
    raw_clusters: Vec<RawCluster>,
    site_idx: &BTreeMap<&str, usize>,
    declared_sites: &BTreeSet<String>,
) -> Vec<Cluster> {
    let mut first_cluster: BTreeMap<String, usize> = BTreeMap::new();
    // Each `mesh_cluster` alias, with the index of the cluster declaring it.
    let mut mesh_aliases: Vec<(usize, String)> = Vec::new();
    let mut clusters = Vec::with_capacity(raw_clusters.len());
    for (i, c) in raw_clusters.into_iter().enumerate() {
        let at = |f: &str| format!("/clusters/{i}/{f}");
        let mut ok = v.id(&c.id, || at("id"));
        if let Some(n) = &c.name {
            ok &= v.text(n, || at("name"));
        }
        ok &= v.text(&c.tier, || at("tier"));
        ok &= v.text(&c.trust_zone, || at("trust_zone"));
        let site = site_idx.get(c.site.as_str()).copied();
        if site.is_none() && !declared_sites.contains(&c.site) {
            v.err(at("site"), format!("unknown site {:?}", c.site));
        }
        let health = match c.health.as_str() {
            "healthy" => Some(Health::Healthy),
            "watch" => Some(Health::Watch),
            "draining" => Some(Health::Draining),
            "down" => Some(Health::Down),
            other => {
                v.err(
                    at("health"),
                    format!(
                        "expected one of \"healthy\", \"watch\", \"draining\", \"down\", found {other:?}"
                    ),
                );
                None
            }
        };
        let enrolled_at = match &c.enrolled_at {
            Some(t) => {
                let parsed = v.time(t, || at("enrolled_at"));
                ok &= parsed.is_some();
                parsed
            }
            None => None,
        };
        let cpu_total_ok = v.number(c.cpu_total, 0.0, true, || at("cpu_total"));
        let memory_total_ok = v.number(c.memory_total_gib, 0.0, true, || at("memory_total_gib"));
        ok &= cpu_total_ok && memory_total_ok;
        for (name, field) in [
            (&c.karmada_cluster, "karmada_cluster"),
            (&c.ocm_cluster, "ocm_cluster"),
        ] {
            if let Some(problem) = name.as_deref().and_then(crate::k8s::label_problem) {
                v.err(at(field), problem);
                ok = false;
            }
        }
        if let Some(m) = &c.mesh_cluster {
            // A mesh names clusters freely; an id's characters keep the
            // alias usable in `--map-cluster` and `--map CLUSTER:NAME`.
            ok &= v.id(m, || at("mesh_cluster"));
            mesh_aliases.push((i, m.clone()));
        }
        let cpu_free = v.fact(c.cpu_free, || at("cpu_free"));
        let memory_free_gib = v.fact(c.memory_free_gib, || at("memory_free_gib"));
        for (fact, total, total_ok, field, what) in [
            (
                &cpu_free,
                c.cpu_total,
                cpu_total_ok,
                "cpu_free",
                "cpu_total",
            ),
            (
                &memory_free_gib,
                c.memory_total_gib,
                memory_total_ok,
                "memory_free_gib",
                "memory_total_gib",
            ),
        ] {
            // Only against a valid total: a bad total has its own error.
            if let (Some(free), true) = (fact.value, total_ok) {
                // A little slack for rounding in agents' reports.
                if free > total * 1.0001 {
                    v.err(at(field), format!("free {free} exceeds {what} {total}"));
                }
            }
        }
        if let Some(first) = first_cluster.get(&c.id) {
            v.err(
                at("id"),
                format!(
                    "duplicate cluster id {:?} (first at /clusters/{first})",
                    c.id
                ),
            );
            continue;
        }
        first_cluster.insert(c.id.clone(), i);
        let (Some(site), Some(health), true) = (site, health, ok) else {
            continue;
        };
        clusters.push(Cluster {
            id: c.id,
            name: c.name,
            site,
            tier: c.tier,
            trust_zone: c.trust_zone,
            health,
            enrolled_at,
            cpu_total: c.cpu_total,
            memory_total_gib: c.memory_total_gib,
            cpu_free,
            memory_free_gib,
            karmada_cluster: c.karmada_cluster,
            ocm_cluster: c.ocm_cluster,
            mesh_cluster: c.mesh_cluster,
        });
    }
    // A mesh cluster name must stand for one estate cluster: an alias
    // neither repeats another's nor is another cluster's id.
    let mut first_alias: BTreeMap<&str, usize> = BTreeMap::new();
    for (i, m) in &mesh_aliases {
        let at = format!("/clusters/{i}/mesh_cluster");
        if let Some(first) = first_alias.get(m.as_str()) {
            v.err(
                at,
                format!("mesh_cluster {m:?} is also that of /clusters/{first}: a mesh cluster stands for one estate cluster"),
            );
        } else if first_cluster.get(m).is_some_and(|j| j != i) {
            v.err(
                at,
                format!("mesh_cluster {m:?} is the id of /clusters/{}: a mesh cluster stands for one estate cluster", first_cluster[m]),
            );
        } else {
            first_alias.insert(m, *i);
        }
    }
    clusters.sort_by(|a, b| a.id.cmp(&b.id));
    clusters
}

/// The services, valid and unique, on known clusters, in id order.
fn services(
    v: &mut Validator,
    raw_services: Vec<RawService>,
    cluster_idx: &BTreeMap<&str, usize>,
    declared_clusters: &BTreeSet<String>,
) -> Vec<Service> {
    let mut first_service: BTreeMap<String, usize> = BTreeMap::new();
    let mut services = Vec::with_capacity(raw_services.len());
    for (i, s) in raw_services.into_iter().enumerate() {
        let at = |f: &str| format!("/services/{i}/{f}");
        let mut ok = v.id(&s.id, || at("id"));
        if let Some(n) = &s.name {
            ok &= v.text(n, || at("name"));
        }
        ok &= v.text(&s.owner, || at("owner"));
        let cluster = cluster_idx.get(s.cluster.as_str()).copied();
        if cluster.is_none() && !declared_clusters.contains(&s.cluster) {
            v.err(at("cluster"), format!("unknown cluster {:?}", s.cluster));
        }
        // `null` is an unknown request: allowed, and never read as zero.
        if let Some(cpu) = s.cpu {
            ok &= v.number(cpu, 0.0, false, || at("cpu"));
        }
        if let Some(memory_gib) = s.memory_gib {
            ok &= v.number(memory_gib, 0.0, false, || at("memory_gib"));
        }
        if let Some(source) = &s.source {
            ok &= v.text(source, || at("source"));
        }
        if let Some(w) = &s.workload {
            let wat = |f: &str| format!("/services/{i}/workload/{f}");
            let checks = [
                ("kind", crate::k8s::kind_problem(&w.kind)),
                ("namespace", crate::k8s::label_problem(&w.namespace)),
                ("name", crate::k8s::subdomain_problem(&w.name)),
                (
                    "api_version",
                    w.api_version
                        .as_deref()
                        .and_then(crate::k8s::api_version_problem),
                ),
            ];
            for (field, problem) in checks {
                if let Some(problem) = problem {
                    v.err(wat(field), problem);
                    ok = false;
                }
            }
        }
        let traffic = match s.traffic {
            RawTraffic::Absent => None,
            RawTraffic::Declared => Some(Traffic::Declared),
            RawTraffic::Fact(raw) => {
                let f = v.fact(raw, || at("traffic"));
                // A window of nothing observed nothing: `null` says that.
                if f.value == Some(0.0) {
                    v.err(
                        at("traffic"),
                        "an observation window must be more than 0 seconds; write null for traffic never observed".into(),
                    );
                    ok = false;
                }
                Some(Traffic::Observed(f))
            }
        };
        let data_gb = v.told(
            s.data_gb,
            0.0,
            || at("data_gb"),
            |v, x, path| v.number(x, 0.0, false, path),
        );
        ok &= data_gb.is_some();
        let rc = s.constraints.unwrap_or_default();
        let cat = |f: &str| format!("/services/{i}/constraints/{f}");
        let local_volumes = v.told(
            rc.local_volumes,
            false,
            || cat("local_volumes"),
            |_, _, _| true,
        );
        ok &= local_volumes.is_some();
        let trust_zone = rc.trust_zone.filter(|z| v.text(z, || cat("trust_zone")));
        let constraints = Constraints {
            local_volumes: local_volumes.unwrap_or(Told::Known(false)),
            pinned: rc.pinned.unwrap_or(false),
            jurisdictions: v.allow_list(rc.jurisdictions, "jurisdiction", || cat("jurisdictions")),
            trust_zone,
            tiers: v.allow_list(rc.tiers, "tier", || cat("tiers")),
        };
        if let Some(first) = first_service.get(&s.id) {
            v.err(
                at("id"),
                format!(
                    "duplicate service id {:?} (first at /services/{first})",
                    s.id
                ),
            );
            continue;
        }
        first_service.insert(s.id.clone(), i);
        let (Some(cluster), true) = (cluster, ok) else {
            continue;
        };
        services.push(Service {
            id: s.id,
            name: s.name,
            owner: s.owner,
            cluster,
            cpu: s.cpu,
            memory_gib: s.memory_gib,
            data_gb: data_gb.unwrap_or(Told::Known(0.0)),
            constraints,
            source: s.source,
            workload: s.workload.map(|w| Workload {
                api_version: w.api_version,
                kind: w.kind,
                namespace: w.namespace,
                name: w.name,
            }),
            traffic,
        });
    }
    services.sort_by(|a, b| a.id.cmp(&b.id));
    services
}

/// The flows between known services, one per ordered pair, in index order.
fn flows(
    v: &mut Validator,
    raw_flows: Vec<RawFlow>,
    service_idx: &BTreeMap<&str, usize>,
    declared_services: &BTreeSet<String>,
) -> Vec<Flow> {
    let mut first_flow: BTreeMap<(usize, usize), usize> = BTreeMap::new();
    let mut first_flow_by_id: BTreeMap<(String, String), usize> = BTreeMap::new();
    let mut flows = Vec::with_capacity(raw_flows.len());
    for (i, f) in raw_flows.into_iter().enumerate() {
        let at = |x: &str| format!("/flows/{i}/{x}");
        let from = service_idx.get(f.from.as_str()).copied();
        if from.is_none() && !declared_services.contains(&f.from) {
            v.err(at("from"), format!("unknown service {:?}", f.from));
        }
        let to = service_idx.get(f.to.as_str()).copied();
        if to.is_none() && !declared_services.contains(&f.to) {
            v.err(at("to"), format!("unknown service {:?}", f.to));
        }
        let weight = v.fact(f.weight, || at("weight"));
        let mb_s = v.fact(f.mb_s, || at("mb_s"));
        // Shape rules on the ids as written, so they are reported even
        // when an end was itself refused.
        if f.from == f.to {
            v.err(
                format!("/flows/{i}"),
                format!("flow from {:?} to itself", f.from),
            );
            continue;
        }
        // Keyed by indices when both ends resolve (the common case, no
        // allocation); by the ids as written only when one does not.
        let first = match (from, to) {
            (Some(a), Some(b)) => first_seen(&mut first_flow, (a, b), i),
            _ => first_seen(&mut first_flow_by_id, (f.from.clone(), f.to.clone()), i),
        };
        if let Some(first) = first {
            v.err(
                format!("/flows/{i}"),
                format!(
                    "duplicate flow {:?} → {:?} (first at /flows/{first}); merge them into one",
                    f.from, f.to
                ),
            );
            continue;
        }
        let (Some(from), Some(to)) = (from, to) else {
            continue;
        };
        flows.push(Flow {
            from,
            to,
            weight,
            mb_s,
        });
    }
    flows.sort_by_key(|f| (f.from, f.to));
    flows
}

/// Where `key` was first seen, recording `i` if this is the first time.
pub(super) fn first_seen<K: Ord>(map: &mut BTreeMap<K, usize>, key: K, i: usize) -> Option<usize> {
    match map.entry(key) {
        std::collections::btree_map::Entry::Occupied(e) => Some(*e.get()),
        std::collections::btree_map::Entry::Vacant(e) => {
            e.insert(i);
            None
        }
    }
}

pub(super) fn rtt_facts(
    v: &mut Validator,
    raw: Vec<(String, String, RawFact, Option<f64>)>,
    (key, what, noun): (&str, &str, &str),
    index: &BTreeMap<&str, usize>,
    declared: &BTreeSet<String>,
) -> Vec<RttFact> {
    let mut out = Vec::with_capacity(raw.len());
    let mut first: BTreeMap<(String, String), usize> = BTreeMap::new();
    for (i, (a, b, rtt, bandwidth)) in raw.into_iter().enumerate() {
        let at = |x: &str| format!("/{key}/{i}/{x}");
        let ia = index.get(a.as_str()).copied();
        if ia.is_none() && !declared.contains(&a) {
            v.err(at("a"), format!("unknown {what} {a:?}"));
        }
        let ib = index.get(b.as_str()).copied();
        if ib.is_none() && !declared.contains(&b) {
            v.err(at("b"), format!("unknown {what} {b:?}"));
        }
        let rtt_ms = v.fact(rtt, || at("rtt_ms"));
        if let Some(bw) = bandwidth {
            v.number(bw, 0.0, false, || at("bandwidth_mb_s"));
        }
        if a == b {
            v.err(
                format!("/{key}/{i}"),
                format!("a {noun} must join two different {what}s; both ends are {a:?}"),
            );
            continue;
        }
        let names = if a < b {
            (a.clone(), b.clone())
        } else {
            (b.clone(), a.clone())
        };
        if let Some(f) = first.get(&names) {
            v.err(
                format!("/{key}/{i}"),
                format!("duplicate {noun} between {a:?} and {b:?} (first at /{key}/{f})"),
            );
            continue;
        }
        first.insert(names, i);
        let (Some(ia), Some(ib)) = (ia, ib) else {
            continue;
        };
        let pair = (ia.min(ib), ia.max(ib));
        out.push(RttFact {
            a: pair.0,
            b: pair.1,
            rtt_ms,
            bandwidth_mb_s: bandwidth,
        });
    }
    out.sort_by_key(|l| (l.a, l.b));
    out
}
