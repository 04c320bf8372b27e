//! Variables: a container's environment as Kubernetes sets it, with
//! `$(VAR)` references expanded.

use super::*;

/// One variable of a running container, as Kubernetes sets it.
pub(super) struct EnvVar {
    pub(super) name: String,
    /// The value, `$(VAR)` references expanded; a reference that could not
    /// be resolved is left as written, as Kubernetes leaves an undefined one.
    pub(super) value: String,
    /// Why each reference left in `value` could not be resolved.
    pub(super) unresolved: Vec<String>,
}

/// What a variable name stands for while a container's variables are read.
#[derive(Clone)]
pub(super) enum Def {
    /// A value the input holds, with the unresolved references it carries.
    Known(String, Vec<String>),
    /// A value set when the pod runs or kept where the importer does not
    /// read: why (e.g. "comes from Secret db, which the importer does not
    /// read").
    Unknown(String),
}

/// `$(NAME)` references expanded as Kubernetes expands a variable's value
/// (`third_party/forked/golang/expansion` in Kubernetes): a name `lookup`
/// knows is replaced by its value; `$$` is `$`; a reference to an unknown
/// or undefined name, an unclosed `$(`, and a `$` before anything else
/// stay as written. Returns the text and why each reference stayed
/// (`undefined(name)` for a name `lookup` does not have).
pub(super) fn expand(
    input: &str,
    lookup: &dyn Fn(&str) -> Option<Def>,
    undefined: &dyn Fn(&str) -> String,
) -> (String, Vec<String>) {
    let b = input.as_bytes();
    let mut out = String::with_capacity(input.len());
    let mut why: Vec<String> = Vec::new();
    let mut checkpoint = 0;
    let mut i = 0;
    while i < b.len() {
        if b[i] != b'$' || i + 1 == b.len() {
            i += 1;
            continue;
        }
        out.push_str(&input[checkpoint..i]);
        match b[i + 1] {
            b'$' => {
                out.push('$');
                i += 2;
            }
            b'(' => match input[i + 2..].find(')') {
                Some(len) => {
                    let end = i + 3 + len;
                    let name = &input[i + 2..end - 1];
                    let reason = match lookup(name) {
                        Some(Def::Known(text, carried)) => {
                            out.push_str(&text);
                            why.extend(carried);
                            None
                        }
                        Some(Def::Unknown(reason)) => Some(format!("$({name}) {reason}")),
                        None => Some(undefined(name)),
                    };
                    if let Some(reason) = reason {
                        out.push_str(&input[i..end]);
                        why.push(reason);
                    }
                    i = end;
                }
                None => {
                    out.push_str("$(");
                    i += 2;
                }
            },
            // Not a reference: the `$` stays, what follows is copied.
            _ => {
                out.push('$');
                i += 1;
            }
        }
        checkpoint = i;
    }
    out.push_str(&input[checkpoint..]);
    let mut seen = std::collections::BTreeSet::new();
    why.retain(|w| seen.insert(w.clone()));
    (out, why)
}

/// The variables Kubernetes gives every container of a pod in `ns` for
/// the Services there (unless the pod sets `enableServiceLinks: false`):
/// `<NAME>_SERVICE_HOST` (the Service's address, here its name) and
/// `<NAME>_SERVICE_PORT` (its first port), `NAME` the Service's name in
/// upper case with `-` as `_`; headless Services have none. And the
/// API server's, which every pod gets.
pub(super) fn service_link(index: &Index, ns: &str, links: bool, name: &str) -> Option<Def> {
    if name.starts_with("KUBERNETES_SERVICE_") || name.starts_with("KUBERNETES_PORT") {
        return Some(Def::Unknown(
            "is the Kubernetes API server's address, which is no service of the estate".into(),
        ));
    }
    if !links {
        return None;
    }
    index
        .service_links
        .get(&(ns.to_string(), name.to_string()))
        .map(|v| Def::Known(v.clone(), Vec::new()))
}

/// Record the Service links of Service `o` ([`service_link`]): none for
/// a headless Service (`clusterIP: None`).
pub(super) fn add_service_links(o: &Obj, index: &mut Index) {
    if o.value.pointer("/spec/clusterIP").and_then(Value::as_str) == Some("None") {
        return;
    }
    let prefix = o.name.to_ascii_uppercase().replace('-', "_");
    let ns = o.ns().to_string();
    index.service_links.insert(
        (ns.clone(), format!("{prefix}_SERVICE_HOST")),
        o.name.clone(),
    );
    if let Some(port) = o
        .value
        .pointer("/spec/ports/0/port")
        .and_then(Value::as_u64)
    {
        index
            .service_links
            .insert((ns, format!("{prefix}_SERVICE_PORT")), port.to_string());
    }
}

/// A container's variables, in order of first definition; a variable
/// defined again gets the new value in place.
#[derive(Default)]
pub(super) struct Vars {
    pub(super) defs: Vec<(String, Def)>,
    pub(super) at: BTreeMap<String, usize>,
}

impl Vars {
    pub(super) fn define(&mut self, name: String, d: Def) {
        match self.at.get(&name) {
            Some(&i) => self.defs[i].1 = d,
            None => {
                self.at.insert(name.clone(), self.defs.len());
                self.defs.push((name, d));
            }
        }
    }

    pub(super) fn get(&self, name: &str) -> Option<Def> {
        self.at.get(name).map(|&i| self.defs[i].1.clone())
    }
}

/// The variables of the running containers (app containers and sidecars;
/// a plain init container's calls are start-up checks, not traffic), as
/// Kubernetes sets them: `envFrom` first (a later source overrides an
/// earlier one), then `env` in order, overriding; each literal `env`
/// value is expanded from the variables defined before it in its
/// container, then the Service links ([`expand`]). Values from ConfigMaps
/// in the input are known, as is `fieldRef: metadata.namespace`; values
/// from Secrets, other fields and ConfigMaps not in the input are unknown,
/// and a reference to one stays unresolved, with why.
pub(super) fn env_vars(w: &Workload<'_>, index: &Index) -> Vec<EnvVar> {
    let v = &w.obj.value;
    let ns = w.obj.ns();
    // Some(None): the ConfigMap is in the input but holds no data.
    let config = |name: &str| {
        index
            .config_maps
            .get(&(ns.to_string(), name.to_string()))
            .map(|c| c.value.get("data").and_then(Value::as_object))
    };
    let links = v
        .pointer(&format!("{}/enableServiceLinks", w.spec))
        .and_then(Value::as_bool)
        != Some(false);
    let mut containers: Vec<&Value> = Vec::new();
    if let Some(Value::Array(cs)) = v.pointer(&format!("{}/containers", w.spec)) {
        containers.extend(cs);
    }
    if let Some(Value::Array(cs)) = v.pointer(&format!("{}/initContainers", w.spec)) {
        containers.extend(
            cs.iter()
                .filter(|c| c.get("restartPolicy").and_then(Value::as_str) == Some("Always")),
        );
    }
    let text = |v: &Value, key: &str| v.get(key).and_then(Value::as_str).map(str::to_string);
    let mut out = Vec::new();
    for c in containers {
        let container = text(c, "name").unwrap_or_else(|| "?".into());
        let mut vars = Vars::default();
        // envFrom sources whose variables are unknown.
        let mut opaque: Vec<String> = Vec::new();
        if let Some(Value::Array(from)) = c.get("envFrom") {
            for f in from {
                let prefix = f.get("prefix").and_then(Value::as_str).unwrap_or("");
                if let Some(name) = f.get("configMapRef").and_then(|r| text(r, "name")) {
                    match config(&name) {
                        Some(data) => {
                            for (k, val) in data.into_iter().flatten() {
                                if let Some(s) = val.as_str() {
                                    vars.define(
                                        format!("{prefix}{k}"),
                                        Def::Known(s.to_string(), Vec::new()),
                                    );
                                }
                            }
                        }
                        None => opaque.push(format!("ConfigMap {name}")),
                    }
                }
                if let Some(name) = f.get("secretRef").and_then(|r| text(r, "name")) {
                    opaque.push(format!("Secret {name}"));
                }
            }
        }
        if let Some(Value::Array(env)) = c.get("env") {
            for e in env {
                let Some(name) = text(e, "name") else {
                    continue;
                };
                let literal = match e.get("value") {
                    Some(Value::String(s)) => Some(s.to_string()),
                    Some(Value::Number(n)) => Some(n.to_string()),
                    Some(Value::Bool(b)) => Some(b.to_string()),
                    _ => None,
                };
                let from = e.get("valueFrom");
                let d = match (literal, from) {
                    (Some(s), _) if !s.is_empty() => {
                        let lookup =
                            |r: &str| vars.get(r).or_else(|| service_link(index, ns, links, r));
                        let undefined = |r: &str| {
                            let unless = if opaque.is_empty() {
                                String::new()
                            } else {
                                format!(
                                    " (or only in {}, which the importer cannot read)",
                                    opaque.join(" or ")
                                )
                            };
                            format!(
                                "$({r}) is not defined before it in container {container}{unless}, and Kubernetes leaves an undefined reference as written: it names no service"
                            )
                        };
                        let (value, why) = expand(&s, &lookup, &undefined);
                        Def::Known(value, why)
                    }
                    (_, Some(from)) => {
                        if let Some(r) = from.get("configMapKeyRef") {
                            let (cm, key) = (
                                text(r, "name").unwrap_or_default(),
                                text(r, "key").unwrap_or_default(),
                            );
                            let optional = r.get("optional").and_then(Value::as_bool) == Some(true);
                            match config(&cm) {
                                Some(data) => match data.and_then(|d| d.get(&key)).and_then(Value::as_str) {
                                    Some(s) => Def::Known(s.to_string(), Vec::new()),
                                    // An optional key that is absent sets no variable.
                                    None if optional => continue,
                                    None => Def::Unknown(format!("comes from key {key} of ConfigMap {cm}, which has no such key")),
                                },
                                None => Def::Unknown(format!("comes from ConfigMap {cm}, which is not in the input")),
                            }
                        } else if let Some(r) = from.get("secretKeyRef") {
                            Def::Unknown(format!(
                                "comes from Secret {}, which the importer does not read",
                                text(r, "name").unwrap_or_default()
                            ))
                        } else if let Some(r) = from.get("fieldRef") {
                            match text(r, "fieldPath").as_deref() {
                                Some("metadata.namespace") => {
                                    Def::Known(ns.to_string(), Vec::new())
                                }
                                path => Def::Unknown(format!(
                                    "is set from the pod's {} when it runs",
                                    path.unwrap_or("?")
                                )),
                            }
                        } else if let Some(r) = from.get("resourceFieldRef") {
                            Def::Unknown(format!(
                                "is set from the container's {} when it runs",
                                text(r, "resource").unwrap_or_default()
                            ))
                        } else {
                            continue;
                        }
                    }
                    _ => Def::Known(String::new(), Vec::new()),
                };
                vars.define(name, d);
            }
        }
        for (name, d) in vars.defs {
            if let Def::Known(value, unresolved) = d {
                out.push(EnvVar {
                    name,
                    value,
                    unresolved,
                });
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `$(VAR)` expansion, byte for byte Kubernetes' rules.
    #[test]
    fn expansion() {
        let defs: BTreeMap<&str, Def> = [
            ("A", Def::Known("x".into(), Vec::new())),
            ("C", Def::Known("$(Z)".into(), vec!["Z is carried".into()])),
            ("S", Def::Unknown("comes from a Secret".into())),
        ]
        .into();
        let lookup = |n: &str| defs.get(n).cloned();
        let undefined = |n: &str| format!("{n} undefined");
        let e = |s: &str| {
            let (text, why) = expand(s, &lookup, &undefined);
            (text, why.join("|"))
        };
        let r = |t: &str, w: &str| (t.to_string(), w.to_string());
        assert_eq!(e("http://$(A):1"), r("http://x:1", ""));
        assert_eq!(e("$(A)$(A)"), r("xx", ""));
        assert_eq!(e("$$(A)"), r("$(A)", ""));
        assert_eq!(e("$$$(A)"), r("$x", ""));
        assert_eq!(e("$$$$"), r("$$", ""));
        assert_eq!(e("$(B)/$(A)/$(B)"), r("$(B)/x/$(B)", "B undefined"));
        assert_eq!(e("$(S)"), r("$(S)", "$(S) comes from a Secret"));
        assert_eq!(e("$(C)"), r("$(Z)", "Z is carried"));
        assert_eq!(e("$(A"), r("$(A", ""));
        assert_eq!(e("a$b$"), r("a$b$", ""));
        assert_eq!(e("$"), r("$", ""));
        assert_eq!(e("$()"), r("$()", " undefined"));
        assert_eq!(e("é$(A)ü$é"), r("éxü$é", ""));
    }
}
