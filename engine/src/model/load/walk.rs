//! Stage 1 (slow path): a JSON value walker that reports every shape error
//! with its path, where serde would stop at the first.

use super::*;

// ---------------------------------------------------------------------------
// Stage 1 (slow path): a Value walker that reports every shape error.

/// Ids of items dropped for shape errors: references to them are not
/// reported again as unknown.
#[derive(Default)]
pub(super) struct Broken {
    pub(super) sites: BTreeSet<String>,
    pub(super) clusters: BTreeSet<String>,
    pub(super) services: BTreeSet<String>,
}

#[derive(Default)]
pub(super) struct Walker {
    pub(super) errors: Vec<EstateError>,
    pub(super) broken: Broken,
}

impl Walker {
    fn err(&mut self, path: String, message: String) {
        self.errors.push(EstateError {
            path,
            line: None,
            message,
        });
    }

    fn object<'a>(
        &mut self,
        v: &'a Value,
        path: &str,
        allowed: &[&str],
    ) -> Option<&'a Map<String, Value>> {
        let Some(map) = v.as_object() else {
            self.err(
                path.into(),
                format!("expected an object, found {}", describe(v)),
            );
            return None;
        };
        for key in map.keys() {
            if !allowed.contains(&key.as_str()) {
                self.err(
                    format!("{path}/{}", escape(key)),
                    format!("unknown field; expected one of {}", allowed.join(", ")),
                );
            }
        }
        Some(map)
    }

    /// A required field of any JSON type checked by `get`.
    fn req<T>(
        &mut self,
        m: &Map<String, Value>,
        path: &str,
        key: &str,
        get: impl Fn(&mut Self, &Value, String) -> Option<T>,
    ) -> Option<T> {
        match m.get(key) {
            Some(v) => get(self, v, format!("{path}/{key}")),
            None => {
                self.err(path.into(), format!("missing required field \"{key}\""));
                None
            }
        }
    }

    /// An optional field: absent or null is `Some(None)`; a wrong type `None`.
    fn opt<T>(
        &mut self,
        m: &Map<String, Value>,
        path: &str,
        key: &str,
        get: impl Fn(&mut Self, &Value, String) -> Option<T>,
    ) -> Option<Option<T>> {
        match m.get(key) {
            None | Some(Value::Null) => Some(None),
            Some(v) => get(self, v, format!("{path}/{key}")).map(Some),
        }
    }

    /// A fact that may be unknown ([`RawTold`]): its value read by `get`,
    /// `null`, or an object holding exactly `unknown`, a string.
    fn told<T>(
        &mut self,
        m: &Map<String, Value>,
        path: &str,
        key: &str,
        get: impl Fn(&mut Self, &Value, String) -> Option<T>,
    ) -> Option<RawTold<T>> {
        let at = format!("{path}/{key}");
        match m.get(key) {
            None => Some(RawTold::Absent),
            Some(Value::Null) => Some(RawTold::Null),
            Some(v @ Value::Object(_)) => {
                let o = self.object(v, &at, &["unknown"])?;
                match o.get("unknown") {
                    Some(why) => self
                        .string(why, format!("{at}/unknown"))
                        .map(RawTold::Unknown),
                    None => {
                        self.err(
                            at,
                            "expected {\"unknown\": \"<why>\"}: the reason it could not be told"
                                .into(),
                        );
                        None
                    }
                }
            }
            Some(v) => get(self, v, at).map(RawTold::Value),
        }
    }

    fn string(&mut self, v: &Value, path: String) -> Option<String> {
        match v {
            Value::String(s) => Some(s.clone()),
            _ => {
                self.err(path, format!("expected a string, found {}", describe(v)));
                None
            }
        }
    }

    fn number(&mut self, v: &Value, path: String) -> Option<f64> {
        match v.as_f64() {
            Some(x) => Some(x),
            None => {
                self.err(path, format!("expected a number, found {}", describe(v)));
                None
            }
        }
    }

    /// A number or `null` (unknown): `Some(None)` for null.
    fn nullable_number(&mut self, v: &Value, path: String) -> Option<Option<f64>> {
        match v {
            Value::Null => Some(None),
            _ => match v.as_f64() {
                Some(x) => Some(Some(x)),
                None => {
                    self.err(
                        path,
                        format!("expected a number or null, found {}", describe(v)),
                    );
                    None
                }
            },
        }
    }

    fn boolean(&mut self, v: &Value, path: String) -> Option<bool> {
        match v {
            Value::Bool(b) => Some(*b),
            _ => {
                self.err(
                    path,
                    format!("expected true or false, found {}", describe(v)),
                );
                None
            }
        }
    }

    fn strings(&mut self, v: &Value, path: String) -> Option<Vec<String>> {
        let Value::Array(items) = v else {
            self.err(
                path,
                format!("expected an array of strings, found {}", describe(v)),
            );
            return None;
        };
        let mut out = Vec::new();
        let mut ok = true;
        for (i, item) in items.iter().enumerate() {
            match self.string(item, format!("{path}/{i}")) {
                Some(s) => out.push(s),
                None => ok = false,
            }
        }
        ok.then_some(out)
    }

    fn fact(&mut self, v: &Value, path: String) -> Option<RawFact> {
        match v {
            Value::Null => Some(RawFact::Unknown),
            Value::Number(n) => Some(RawFact::Bare(n.as_f64().unwrap_or(f64::NAN))),
            Value::Object(_) => {
                let m = self.object(v, &path, FACT_FIELDS)?;
                let value = match m.get("value") {
                    None => None,
                    Some(Value::Null) => Some(None),
                    Some(x) => Some(Some(self.number(x, format!("{path}/value"))?)),
                };
                let class = self.opt(m, &path, "class", Self::string)?;
                let source = self.opt(m, &path, "source", Self::string)?;
                let observed_at = self.opt(m, &path, "observed_at", Self::string)?;
                Some(RawFact::Full {
                    value,
                    class,
                    source,
                    observed_at,
                })
            }
            _ => {
                self.err(
                    path,
                    format!(
                        "expected a number, a fact object {{value, class, source, observed_at}} or null, found {}",
                        describe(v)
                    ),
                );
                None
            }
        }
    }

    /// Every element of an optional or required array, each read by `item`.
    fn list<T>(
        &mut self,
        m: &Map<String, Value>,
        key: &str,
        required: bool,
        item: impl Fn(&mut Self, &Value, String) -> Option<T>,
    ) -> Option<Option<Vec<T>>> {
        let path = format!("/{key}");
        match m.get(key) {
            None | Some(Value::Null) if !required => Some(None),
            None => {
                self.err(String::new(), format!("missing required field \"{key}\""));
                None
            }
            Some(Value::Array(items)) => {
                // Readable items are kept even when others are not, so the
                // meaning stage can still report on them.
                let mut out = Vec::with_capacity(items.len());
                for (i, v) in items.iter().enumerate() {
                    match item(self, v, format!("{path}/{i}")) {
                        Some(x) => out.push(x),
                        None => {
                            if let Some(id) = v.get("id").and_then(Value::as_str) {
                                let set = match key {
                                    "sites" => &mut self.broken.sites,
                                    "clusters" => &mut self.broken.clusters,
                                    _ => &mut self.broken.services,
                                };
                                set.insert(id.to_string());
                            }
                        }
                    }
                }
                Some(Some(out))
            }
            Some(v) => {
                self.err(path, format!("expected an array, found {}", describe(v)));
                None
            }
        }
    }

    /// One cluster of `/clusters`, every field read.
    fn cluster(w: &mut Self, v: &Value, p: String) -> Option<RawCluster> {
        let o = w.object(v, &p, CLUSTER_FIELDS)?;
        let id = w.req(o, &p, "id", Self::string);
        let name = w.opt(o, &p, "name", Self::string);
        let site = w.req(o, &p, "site", Self::string);
        let tier = w.req(o, &p, "tier", Self::string);
        let trust_zone = w.req(o, &p, "trust_zone", Self::string);
        let health = w.req(o, &p, "health", Self::string);
        let enrolled_at = w.opt(o, &p, "enrolled_at", Self::string);
        let cpu_total = w.req(o, &p, "cpu_total", Self::number);
        let memory_total_gib = w.req(o, &p, "memory_total_gib", Self::number);
        let cpu_free = w.opt(o, &p, "cpu_free", Self::fact);
        let memory_free_gib = w.opt(o, &p, "memory_free_gib", Self::fact);
        let karmada_cluster = w.opt(o, &p, "karmada_cluster", Self::string);
        let ocm_cluster = w.opt(o, &p, "ocm_cluster", Self::string);
        let mesh_cluster = w.opt(o, &p, "mesh_cluster", Self::string);
        Some(RawCluster {
            id: id?,
            name: name?,
            site: site?,
            tier: tier?,
            trust_zone: trust_zone?,
            health: health?,
            enrolled_at: enrolled_at?,
            cpu_total: cpu_total?,
            memory_total_gib: memory_total_gib?,
            cpu_free: cpu_free?.unwrap_or_default(),
            memory_free_gib: memory_free_gib?.unwrap_or_default(),
            karmada_cluster: karmada_cluster?,
            ocm_cluster: ocm_cluster?,
            mesh_cluster: mesh_cluster?,
        })
    }

    /// One service of `/services`, every field read: requests, data,
    /// traffic coverage, workload and constraints.
    fn service(w: &mut Self, v: &Value, p: String) -> Option<RawService> {
        let o = w.object(v, &p, SERVICE_FIELDS)?;
        let id = w.req(o, &p, "id", Self::string);
        let name = w.opt(o, &p, "name", Self::string);
        let owner = w.req(o, &p, "owner", Self::string);
        let cluster = w.req(o, &p, "cluster", Self::string);
        let cpu = w.req(o, &p, "cpu", Self::nullable_number);
        let memory_gib = w.req(o, &p, "memory_gib", Self::nullable_number);
        let data_gb = w.told(o, &p, "data_gb", Self::number);
        let source = w.opt(o, &p, "source", Self::string);
        let traffic = match o.get("traffic") {
            None => Some(RawTraffic::Absent),
            Some(Value::String(s)) if s == "declared" => Some(RawTraffic::Declared),
            Some(v @ Value::String(_)) => {
                w.err(
                    format!("{p}/traffic"),
                    format!(
                        "expected \"declared\", a number, a fact object {{value, class, source, observed_at}} or null, found {}",
                        describe(v)
                    ),
                );
                None
            }
            Some(v) => w.fact(v, format!("{p}/traffic")).map(RawTraffic::Fact),
        };
        let workload = w.opt(o, &p, "workload", |w, v, wp| {
            let o = w.object(v, &wp, WORKLOAD_FIELDS)?;
            let api_version = w.opt(o, &wp, "api_version", Self::string);
            let kind = w.req(o, &wp, "kind", Self::string);
            let namespace = w.req(o, &wp, "namespace", Self::string);
            let name = w.req(o, &wp, "name", Self::string);
            Some(RawWorkload {
                api_version: api_version?,
                kind: kind?,
                namespace: namespace?,
                name: name?,
            })
        });
        let constraints = w.opt(o, &p, "constraints", |w, v, cp| {
            let c = w.object(v, &cp, CONSTRAINT_FIELDS)?;
            let local_volumes = w.told(c, &cp, "local_volumes", Self::boolean);
            let pinned = w.opt(c, &cp, "pinned", Self::boolean);
            let jurisdictions = w.opt(c, &cp, "jurisdictions", Self::strings);
            let trust_zone = w.opt(c, &cp, "trust_zone", Self::string);
            let tiers = w.opt(c, &cp, "tiers", Self::strings);
            Some(RawConstraints {
                local_volumes: local_volumes?,
                pinned: pinned?,
                jurisdictions: jurisdictions?,
                trust_zone: trust_zone?,
                tiers: tiers?,
            })
        });
        Some(RawService {
            id: id?,
            name: name?,
            owner: owner?,
            cluster: cluster?,
            cpu: cpu?,
            memory_gib: memory_gib?,
            data_gb: data_gb?,
            constraints: constraints?,
            source: source?,
            workload: workload?,
            traffic: traffic?,
        })
    }

    pub(super) fn estate(&mut self, v: &Value) -> Option<RawEstate> {
        let m = self.object(v, "", TOP_FIELDS)?;
        let schema = self.req(m, "", "schema", Self::number);
        let name = self.req(m, "", "name", Self::string);
        let observed_at = self.opt(m, "", "observed_at", Self::string);
        let traffic = self.opt(m, "", "traffic", Self::string);
        let sites = self.list(m, "sites", true, |w, v, p| {
            let o = w.object(v, &p, SITE_FIELDS)?;
            let id = w.req(o, &p, "id", Self::string);
            let name = w.opt(o, &p, "name", Self::string);
            let lat = w.opt(o, &p, "lat", Self::number);
            let lon = w.opt(o, &p, "lon", Self::number);
            let jurisdiction = w.req(o, &p, "jurisdiction", Self::string);
            Some(RawSite {
                id: id?,
                name: name?,
                lat: lat?,
                lon: lon?,
                jurisdiction: jurisdiction?,
            })
        });
        let clusters = self.list(m, "clusters", true, Self::cluster);
        let links = self.list(m, "links", false, |w, v, p| {
            let o = w.object(v, &p, LINK_FIELDS)?;
            let a = w.req(o, &p, "a", Self::string);
            let b = w.req(o, &p, "b", Self::string);
            let rtt_ms = w.opt(o, &p, "rtt_ms", Self::fact);
            let bandwidth_mb_s = w.opt(o, &p, "bandwidth_mb_s", Self::number);
            Some(RawLink {
                a: a?,
                b: b?,
                rtt_ms: rtt_ms?.unwrap_or_default(),
                bandwidth_mb_s: bandwidth_mb_s?,
            })
        });
        let paths = self.list(m, "paths", false, |w, v, p| {
            let o = w.object(v, &p, PATH_FIELDS)?;
            let a = w.req(o, &p, "a", Self::string);
            let b = w.req(o, &p, "b", Self::string);
            let rtt_ms = w.opt(o, &p, "rtt_ms", Self::fact);
            Some(RawPath {
                a: a?,
                b: b?,
                rtt_ms: rtt_ms?.unwrap_or_default(),
            })
        });
        let services = self.list(m, "services", true, Self::service);
        let flows = self.list(m, "flows", false, |w, v, p| {
            let o = w.object(v, &p, FLOW_FIELDS)?;
            let from = w.req(o, &p, "from", Self::string);
            let to = w.req(o, &p, "to", Self::string);
            let weight = w.opt(o, &p, "weight", Self::fact);
            let mb_s = w.opt(o, &p, "mb_s", Self::fact);
            Some(RawFlow {
                from: from?,
                to: to?,
                weight: weight?.unwrap_or_default(),
                mb_s: mb_s?.unwrap_or_default(),
            })
        });
        // Whatever could not be read is already an error; stand-ins let
        // the meaning stage check the rest without echoing those errors.
        Some(RawEstate {
            schema: schema.unwrap_or(1.0),
            name: name.unwrap_or_else(|| "unnamed".into()),
            observed_at: observed_at.flatten(),
            traffic: traffic.flatten(),
            sites: sites.flatten().unwrap_or_default(),
            clusters: clusters.flatten().unwrap_or_default(),
            links: links.flatten(),
            paths: paths.flatten(),
            services: services.flatten().unwrap_or_default(),
            flows: flows.flatten(),
        })
    }
}
