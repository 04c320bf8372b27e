//! Documents and objects: the input's texts read as YAML or JSON
//! documents, and the Kubernetes objects in them.

use super::*;

/// One Kubernetes object found in the input.
#[derive(Clone, Debug)]
pub(super) struct Obj {
    pub(super) file: String,
    pub(super) document: usize,
    /// Pointer of the object within its document (`/items/3` in a List).
    pub(super) at: String,
    pub(super) kind: String,
    /// As written; `None` when the manifest names none.
    pub(super) namespace: Option<String>,
    pub(super) name: String,
    pub(super) value: Value,
}

impl Obj {
    pub(super) fn ns(&self) -> &str {
        self.namespace.as_deref().unwrap_or(DEFAULT_NAMESPACE)
    }

    /// `Deployment shop/cart`, or `Deployment cart` without a namespace.
    pub(super) fn label(&self) -> String {
        match &self.namespace {
            Some(ns) => format!("{} {ns}/{}", self.kind, self.name),
            None => format!("{} {}", self.kind, self.name),
        }
    }

    pub(super) fn err(&self, path: &str, message: String) -> ImportError {
        ImportError {
            file: self.file.clone(),
            document: Some(self.document),
            line: None,
            object: Some(self.label()),
            path: format!("{}{path}", self.at),
            message,
        }
    }

    /// `namespace/Kind/name`: the provenance key.
    pub(super) fn key(&self) -> String {
        format!("{}/{}/{}", self.ns(), self.kind, self.name)
    }
}

/// The documents of one input, as JSON values (YAML converted), each with
/// its 1-based index; a syntax error ends the file.
pub(super) fn documents(input: &Input, errors: &mut Vec<ImportError>) -> Vec<(usize, Value)> {
    let file_err = |document: Option<usize>, line: Option<usize>, message: String| ImportError {
        file: input.name.to_string(),
        document,
        line,
        object: None,
        path: String::new(),
        message,
    };
    let first = input.text.trim_start_matches('\u{feff}').trim_start();
    if first.starts_with('{') || first.starts_with('[') {
        return match serde_json::from_str::<Value>(first) {
            Ok(v) => vec![(1, v)],
            Err(e) => {
                errors.push(file_err(
                    Some(1),
                    Some(e.line()),
                    format!("not valid JSON: {e}"),
                ));
                Vec::new()
            }
        };
    }
    let mut out = Vec::new();
    for (i, doc) in serde_yaml::Deserializer::from_str(input.text).enumerate() {
        match serde_yaml::Value::deserialize(doc) {
            Ok(v) => out.push((i + 1, yaml_to_json(v))),
            Err(e) => {
                errors.push(file_err(
                    Some(i + 1),
                    e.location().map(|l| l.line()),
                    format!("not valid YAML: {e}"),
                ));
                break;
            }
        }
    }
    out
}

/// A YAML value as JSON: tags dropped, non-string keys written as text,
/// numbers kept exactly as far as JSON can (a quantity such as `0.1` stays
/// `0.1`), non-finite floats as text (no Kubernetes field takes one).
pub(super) fn yaml_to_json(v: serde_yaml::Value) -> Value {
    use serde_yaml::Value as Y;
    match v {
        Y::Null => Value::Null,
        Y::Bool(b) => Value::Bool(b),
        Y::Number(n) => {
            if let Some(i) = n.as_i64() {
                Value::from(i)
            } else if let Some(u) = n.as_u64() {
                Value::from(u)
            } else {
                let f = n.as_f64().unwrap_or(f64::NAN);
                serde_json::Number::from_f64(f)
                    .map_or_else(|| Value::String(n.to_string().into()), Value::Number)
            }
        }
        Y::String(s) => Value::String(s.into_boxed_str()),
        Y::Sequence(items) => Value::Array(items.into_iter().map(yaml_to_json).collect()),
        Y::Mapping(m) => {
            let mut out = Vec::with_capacity(m.len());
            for (k, v) in m {
                let key = match yaml_to_json(k) {
                    Value::String(s) => s,
                    other => other.to_string().into_boxed_str(),
                };
                out.push((key, yaml_to_json(v)));
            }
            Value::Object(Map::from_entries(out))
        }
        Y::Tagged(t) => yaml_to_json(t.value),
    }
}

/// The objects of one document: the document itself, or the items of a
/// `List` (or `DeploymentList`, …, whose items may omit their kind).
pub(super) fn objects(
    file: &str,
    document: usize,
    v: Value,
    out: &mut Vec<Obj>,
    errors: &mut Vec<ImportError>,
) {
    let err = |at: String, message: String| ImportError {
        file: file.to_string(),
        document: Some(document),
        line: None,
        object: None,
        path: at,
        message,
    };
    let Value::Object(m) = v else {
        if !v.is_null() {
            errors.push(err(
                String::new(),
                format!("expected a Kubernetes object, found {}", describe(&v)),
            ));
        }
        return;
    };
    let kind = m.get("kind").and_then(Value::as_str).map(str::to_string);
    let list_item_kind = kind
        .as_deref()
        .and_then(|k| k.strip_suffix("List"))
        .filter(|_| matches!(m.get("items"), Some(Value::Array(_))))
        .map(str::to_string);
    if let Some(item_kind) = list_item_kind {
        // Taken, not cloned: a List from the API is most of an agent's
        // re-sync, and a copy of it doubled the import's memory.
        let items = m
            .into_entries()
            .into_iter()
            .find_map(|(k, v)| match v {
                Value::Array(items) if &*k == "items" => Some(items),
                _ => None,
            })
            .expect("checked above");
        for (i, item) in items.into_vec().into_iter().enumerate() {
            let at = format!("/items/{i}");
            let Value::Object(item) = item else {
                errors.push(err(
                    at,
                    format!("expected a Kubernetes object, found {}", describe(&item)),
                ));
                continue;
            };
            let item = if !item.contains_key("kind") && !item_kind.is_empty() {
                let mut entries = item.into_entries();
                entries.push(("kind".into(), Value::String(item_kind.as_str().into())));
                Map::from_entries(entries)
            } else {
                item
            };
            object(file, document, at, Value::Object(item), out, errors);
        }
        return;
    }
    object(file, document, String::new(), Value::Object(m), out, errors);
}

pub(super) fn object(
    file: &str,
    document: usize,
    at: String,
    v: Value,
    out: &mut Vec<Obj>,
    errors: &mut Vec<ImportError>,
) {
    let err = |path: &str, object: Option<String>, message: String| ImportError {
        file: file.to_string(),
        document: Some(document),
        line: None,
        object,
        path: format!("{at}{path}"),
        message,
    };
    let kind = match v.get("kind") {
        Some(Value::String(k)) if !k.is_empty() => k.to_string(),
        Some(other) => {
            errors.push(err(
                "/kind",
                None,
                format!("expected the kind as a string, found {}", describe(other)),
            ));
            return;
        }
        None => {
            errors.push(err(
                "",
                None,
                "not a Kubernetes object: no \"kind\"".to_string(),
            ));
            return;
        }
    };
    let meta = v.get("metadata");
    let name = meta.and_then(|m| m.get("name"));
    let name = match name {
        Some(Value::String(n)) if !n.is_empty() => n.to_string(),
        Some(Value::String(_)) | None | Some(Value::Null) => {
            // A kind that is not read needs no name to be left aside.
            if !reads(&kind) {
                out.push(Obj {
                    file: file.to_string(),
                    document,
                    at,
                    kind,
                    namespace: None,
                    name: String::new(),
                    value: v,
                });
                return;
            }
            errors.push(err(
                "/metadata/name",
                Some(kind),
                "missing the object's name".to_string(),
            ));
            return;
        }
        Some(other) => {
            errors.push(err(
                "/metadata/name",
                Some(kind),
                format!("expected a string, found {}", describe(other)),
            ));
            return;
        }
    };
    let namespace = match meta.and_then(|m| m.get("namespace")) {
        None | Some(Value::Null) => None,
        Some(Value::String(ns)) if !ns.is_empty() => Some(ns.to_string()),
        Some(other) => {
            errors.push(err(
                "/metadata/namespace",
                Some(format!("{kind} {name}")),
                format!("expected a non-empty string, found {}", describe(other)),
            ));
            return;
        }
    };
    out.push(Obj {
        file: file.to_string(),
        document,
        at,
        kind,
        namespace,
        name,
        value: v,
    });
}

/// Kinds whose content the importer reads.
pub(super) fn reads(kind: &str) -> bool {
    is_workload(kind)
        || matches!(
            kind,
            "Pod"
                | "ReplicaSet"
                | "Service"
                | "PersistentVolumeClaim"
                | "PersistentVolume"
                | "StorageClass"
                | "ConfigMap"
        )
}

pub(super) fn is_workload(kind: &str) -> bool {
    matches!(
        kind,
        "Deployment" | "StatefulSet" | "DaemonSet" | "ReplicationController"
    )
}
