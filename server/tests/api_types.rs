//! The published schemas are the API types' schemas.
//!
//! For each type of `berth-api` the server writes, the JSON Schema derived
//! from the Rust type (schemars) is compared with the schema
//! `docs/api.openapi.yaml` publishes for it: the same members, the same
//! required ones, the same JSON types (with `null` where a member may be
//! null), the same enumerations, recursively through references and
//! nested objects. A member renamed, added or made optional on one side
//! and not the other fails here, naming the member.

use std::collections::BTreeSet;
use std::path::Path;

use serde_json::Value;

fn spec() -> Value {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../docs/api.openapi.yaml");
    let text = std::fs::read_to_string(&path).unwrap();
    let yaml: serde_yaml::Value = serde_yaml::from_str(&text).unwrap();
    serde_json::to_value(yaml).unwrap()
}

/// A schema with references followed (`#/components/schemas/…` in the
/// spec, `#/$defs/…` in a derived schema) and `allOf` merged.
fn resolve(root: &Value, schema: &Value) -> Value {
    let mut s = schema.clone();
    // Follow references; a reference with siblings (a description) keeps
    // only what it points to, which is all that is compared.
    for _ in 0..16 {
        let Some(r) = s.get("$ref").and_then(Value::as_str) else {
            break;
        };
        let target = if let Some(rest) = r.strip_prefix('#') {
            root.pointer(rest)
                .unwrap_or_else(|| panic!("unresolved {r}"))
        } else {
            // A reference out of the file (the estate schema): opaque.
            return Value::Object(Default::default());
        };
        s = target.clone();
    }
    if let Some(parts) = s.get("allOf").and_then(Value::as_array).cloned() {
        let mut props = serde_json::Map::new();
        let mut required = Vec::new();
        for p in &parts {
            let p = resolve(root, p);
            if let Some(m) = p.get("properties").and_then(Value::as_object) {
                props.extend(m.clone());
            }
            if let Some(r) = p.get("required").and_then(Value::as_array) {
                required.extend(r.clone());
            }
        }
        s = serde_json::json!({"type": "object", "properties": props, "required": required});
    }
    s
}

fn types(s: &Value) -> BTreeSet<String> {
    match s.get("type") {
        Some(Value::String(t)) => [t.clone()].into(),
        Some(Value::Array(ts)) => ts
            .iter()
            .filter_map(|t| t.as_str().map(String::from))
            .collect(),
        _ => BTreeSet::new(),
    }
}

fn names(v: Option<&Value>) -> BTreeSet<String> {
    match v {
        Some(Value::Array(a)) => a.iter().map(|x| x.to_string()).collect(),
        Some(Value::Object(m)) => m.keys().cloned().collect(),
        _ => BTreeSet::new(),
    }
}

fn compare(
    spec_root: &Value,
    published: &Value,
    derived_root: &Value,
    derived: &Value,
    at: &str,
    out: &mut Vec<String>,
) {
    let p = resolve(spec_root, published);
    let d = resolve(derived_root, derived);
    let (pt, dt) = (types(&p), types(&d));
    // An open schema on either side (`{}`, "any JSON") has nothing to compare.
    if pt.is_empty() || dt.is_empty() {
        return;
    }
    if pt != dt {
        out.push(format!(
            "{at}: published type {pt:?}, the Rust type gives {dt:?}"
        ));
    }
    let (pe, de) = (names(p.get("enum")), names(d.get("enum")));
    if pe != de {
        out.push(format!(
            "{at}: published values {pe:?}, the Rust type's {de:?}"
        ));
    }
    if pt.contains("object") && (p.get("properties").is_some() || d.get("properties").is_some()) {
        let (pp, dp) = (names(p.get("properties")), names(d.get("properties")));
        for m in pp.difference(&dp) {
            out.push(format!(
                "{at}: member {m:?} is published but not in the Rust type"
            ));
        }
        for m in dp.difference(&pp) {
            out.push(format!(
                "{at}: member {m:?} is in the Rust type but not published"
            ));
        }
        let (pr, dr) = (names(p.get("required")), names(d.get("required")));
        if pr != dr {
            out.push(format!(
                "{at}: published required {pr:?}, the Rust type's {dr:?}"
            ));
        }
        for m in pp.intersection(&dp) {
            compare(
                spec_root,
                &p["properties"][m],
                derived_root,
                &d["properties"][m],
                &format!("{at}.{m}"),
                out,
            );
        }
    }
    if pt.contains("array") {
        if let (Some(pi), Some(di)) = (p.get("items"), d.get("items")) {
            compare(spec_root, pi, derived_root, di, &format!("{at}[]"), out);
        }
    }
}

fn check<T: schemars::JsonSchema>(spec: &Value, pointer: &str, out: &mut Vec<String>) {
    let derived = serde_json::to_value(schemars::schema_for!(T)).unwrap();
    let published = spec
        .pointer(pointer)
        .unwrap_or_else(|| panic!("the spec has nothing at {pointer}"));
    compare(spec, published, &derived, &derived, &T::schema_name(), out);
}

#[test]
fn the_published_schemas_are_the_api_types() {
    let spec = spec();
    let mut out = Vec::new();
    let c = |name: &str| format!("/components/schemas/{name}");
    check::<berth_api::ErrorBody>(&spec, &c("Error"), &mut out);
    check::<berth_api::InputError>(&spec, &c("InputError"), &mut out);
    check::<berth_api::Role>(&spec, &c("Role"), &mut out);
    check::<berth_api::Session>(&spec, &c("Session"), &mut out);
    check::<berth_api::Caller>(&spec, &c("Caller"), &mut out);
    check::<berth_api::EstateMeta>(&spec, &c("EstateMeta"), &mut out);
    check::<berth_api::EstateSummary>(&spec, &c("EstateSummary"), &mut out);
    check::<berth_api::ResultEnvelope>(&spec, &c("ResultEnvelope"), &mut out);
    check::<berth_api::EstateList>(
        &spec,
        "/paths/~1api~1estates/get/responses/200/content/application~1json/schema",
        &mut out,
    );
    assert!(
        out.is_empty(),
        "the spec and the API types differ:\n{}",
        out.join("\n")
    );
}

/// The comparison can fail: a published schema with a member renamed and
/// one made optional is caught, by name.
#[test]
fn a_drifted_schema_is_caught() {
    let mut spec = spec();
    let session = spec.pointer_mut("/components/schemas/Session").unwrap();
    let props = session["properties"].as_object_mut().unwrap();
    let subject = props.remove("subject").unwrap();
    props.insert("who".into(), subject);
    session["required"] = serde_json::json!(["who", "role", "csrf_token", "expires_at"]);
    let mut out = Vec::new();
    check::<berth_api::Session>(&spec, "/components/schemas/Session", &mut out);
    let text = out.join("\n");
    assert!(
        text.contains("member \"who\" is published but not in the Rust type"),
        "{text}"
    );
    assert!(
        text.contains("member \"subject\" is in the Rust type but not published"),
        "{text}"
    );
    assert!(text.contains("published required"), "{text}");
}
