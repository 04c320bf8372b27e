//! The published API contract, `docs/api.openapi.json`, written from the
//! places that each say one thing once:
//!
//! - the route table ([`Route`]): every operation's id, method, path, who
//!   may call it (`x-berth-access`, and the security schemes that follow
//!   from it) and its summary, in the table's order;
//! - the API types of `berth-api`: the schemas of what the server writes
//!   (derived with schemars, their doc comments as descriptions);
//! - the engine's policy table (`berth_engine::policy::FIELDS`): every
//!   `Policy` field's type, range, default and meaning;
//! - the words: each module's `*.openapi.yaml` beside its `.rs` (an
//!   operation's description, parameters, bodies and answers, keyed by its
//!   operation id) and `openapi.yaml` (the introduction, the shared
//!   parameters, answers and the schemas no Rust type writes).
//!
//! An operation with no words, words with no operation, words in another
//! module's file, a member the route table owns written in the words, or
//! a schema both derived and written are refused, each named.
//! `server/tests/openapi.rs` checks that the committed file is what this
//! writes (`UPDATE_EXPECT=1` rewrites it).
//!
//! The file is JSON, with every number written without an exponent, so
//! YAML 1.1 readers (PyYAML) read the same numbers as JSON and YAML 1.2
//! ones.

use schemars::generate::SchemaSettings;
use serde_yaml::{Mapping, Value};

use super::route::Route;
use crate::auth::Access;

/// The introduction and the shared components.
const BASE: &str = include_str!("openapi.yaml");

/// Each resource module's words, by module name (the last segment of the
/// module path [`Route::module`] records).
const WORDS: &[(&str, &str)] = &[
    ("ops", include_str!("ops.openapi.yaml")),
    ("session", include_str!("session.openapi.yaml")),
    ("estates", include_str!("estates.openapi.yaml")),
    ("facts", include_str!("facts.openapi.yaml")),
    ("policy", include_str!("policy.openapi.yaml")),
    ("results", include_str!("results.openapi.yaml")),
    ("reviews", include_str!("reviews.openapi.yaml")),
    ("outcomes", include_str!("outcomes.openapi.yaml")),
    ("scenarios", include_str!("scenarios.openapi.yaml")),
    ("deciders", include_str!("deciders.openapi.yaml")),
    ("notify", include_str!("notify.openapi.yaml")),
];

/// Members of an operation that the route table writes; the words may
/// not write them again.
const TABLE_MEMBERS: [&str; 4] = ["operationId", "summary", "x-berth-access", "security"];

/// The schemas derived from the API types, by published name.
fn derived_schemas() -> serde_json::Map<String, serde_json::Value> {
    let mut generator = SchemaSettings::draft2020_12()
        .with(|s| {
            s.definitions_path = "/components/schemas".into();
            s.meta_schema = None;
        })
        // What the server writes: a member with a default is still always
        // sent, so it is required.
        .for_serialize()
        .into_generator();
    berth_api::register_schemas(&mut generator);
    berth_engine::schema::register(&mut generator);
    generator.take_definitions(true)
}

fn yaml(text: &str, what: &str, problems: &mut Vec<String>) -> Mapping {
    match serde_yaml::from_str::<Value>(text) {
        Ok(Value::Mapping(m)) => m,
        Ok(_) => {
            problems.push(format!("{what}: not a mapping"));
            Mapping::new()
        }
        Err(e) => {
            problems.push(format!("{what}: not YAML: {e}"));
            Mapping::new()
        }
    }
}

/// Who may call it, as OpenAPI security requirements: nothing for a
/// public route; otherwise a bearer token or the session cookie, and with
/// the cookie the CSRF header on anything but a read.
fn security(route: &Route) -> Value {
    let req = |pairs: &[&str]| {
        let mut m = Mapping::new();
        for p in pairs {
            m.insert((*p).into(), Value::Sequence(Vec::new()));
        }
        Value::Mapping(m)
    };
    match route.access {
        Access::Public => Value::Sequence(Vec::new()),
        _ if route.method == axum::http::Method::GET => {
            Value::Sequence(vec![req(&["bearerAuth"]), req(&["cookieAuth"])])
        }
        _ => Value::Sequence(vec![
            req(&["bearerAuth"]),
            req(&["cookieAuth", "csrfHeader"]),
        ]),
    }
}

/// The whole document, or every reason it cannot be written.
pub fn document(routes: &[Route]) -> Result<Value, Vec<String>> {
    document_from(routes, BASE, WORDS)
}

fn document_from(
    routes: &[Route],
    base: &str,
    modules_words: &[(&str, &str)],
) -> Result<Value, Vec<String>> {
    let mut problems = Vec::new();
    let mut doc = yaml(base, "server/src/http/openapi.yaml", &mut problems);

    // The words of every operation, with the module whose file holds them.
    let mut words: Vec<(&str, String, Mapping)> = Vec::new();
    for (module, text) in modules_words {
        let file = format!("server/src/http/{module}.openapi.yaml");
        for (key, value) in yaml(text, &file, &mut problems) {
            let Some(id) = key.as_str() else {
                problems.push(format!(
                    "{file}: a key that is not an operation id: {key:?}"
                ));
                continue;
            };
            let Value::Mapping(op) = value else {
                problems.push(format!("{file}: {id}: not a mapping"));
                continue;
            };
            for member in TABLE_MEMBERS {
                if op.contains_key(member) {
                    problems.push(format!(
                        "{file}: {id}: `{member}` comes from the route table (route! in {module}.rs); remove it here"
                    ));
                }
            }
            if words.iter().any(|(_, other, _)| other == id) {
                problems.push(format!("{file}: {id}: words for it are written twice"));
            }
            words.push((module, id.to_string(), op));
        }
    }

    let mut paths = Mapping::new();
    for route in routes {
        let id = route.operation_id;
        let module = route.module.rsplit("::").next().unwrap_or(route.module);
        let Some(at) = words.iter().position(|(_, other, _)| other == id) else {
            problems.push(format!(
                "{} {} ({id}) has no words: add `{id}:` to server/src/http/{module}.openapi.yaml",
                route.method, route.path
            ));
            continue;
        };
        let (found_in, _, theirs) = words.remove(at);
        if found_in != module {
            problems.push(format!(
                "{id} is declared in {module}.rs but its words are in {found_in}.openapi.yaml"
            ));
        }
        let mut op = Mapping::new();
        op.insert("operationId".into(), id.into());
        op.insert("summary".into(), route.summary.into());
        if let Some(tags) = theirs.get("tags") {
            op.insert("tags".into(), tags.clone());
        }
        op.insert("x-berth-access".into(), route.access.as_str().into());
        op.insert("security".into(), security(route));
        for (k, v) in theirs {
            if k.as_str() != Some("tags") {
                op.insert(k, v);
            }
        }
        let item = paths
            .entry(route.path.into())
            .or_insert_with(|| Value::Mapping(Mapping::new()));
        if let Value::Mapping(item) = item {
            item.insert(
                route.method.as_str().to_lowercase().into(),
                Value::Mapping(op),
            );
        }
    }
    for (module, id, _) in &words {
        problems.push(format!(
            "server/src/http/{module}.openapi.yaml: {id}: no route has this operation id"
        ));
    }

    // The schemas: those written in openapi.yaml, then the derived ones.
    let derived = derived_schemas();
    let components = doc
        .entry("components".into())
        .or_insert_with(|| Value::Mapping(Mapping::new()));
    if let Value::Mapping(components) = components {
        let schemas = components
            .entry("schemas".into())
            .or_insert_with(|| Value::Mapping(Mapping::new()));
        if let Value::Mapping(schemas) = schemas {
            for (name, schema) in derived {
                // Two types with one published name: schemars numbers the
                // second (`Move2`), which no reader could tell from the
                // first; name one with `schemars(rename = …)`.
                if name.ends_with(|c: char| c.is_ascii_digit()) {
                    problems.push(format!(
                        "schema {name}: two Rust types publish the name {:?}; rename one (schemars(rename = …))",
                        name.trim_end_matches(|c: char| c.is_ascii_digit())
                    ));
                    continue;
                }
                if schemas.contains_key(name.as_str()) {
                    problems.push(format!(
                        "server/src/http/openapi.yaml: schema {name} is derived from its Rust type (berth-api or the engine); remove it here"
                    ));
                    continue;
                }
                match serde_yaml::to_value(schema) {
                    Ok(v) => {
                        schemas.insert(name.into(), v);
                    }
                    Err(e) => problems.push(format!("schema {name}: {e}")),
                }
            }
        }
    }

    if let Some(Value::Mapping(schemas)) =
        doc.get_mut("components").and_then(|c| c.get_mut("schemas"))
    {
        match schemas.get_mut("Policy") {
            Some(policy) => policy_fields(policy, &mut problems),
            None => problems.push("server/src/http/openapi.yaml: no Policy schema".into()),
        }
    }

    // `paths` after `tags`, where a reader looks for it.
    let mut out = Mapping::new();
    for (k, v) in doc {
        let is_components = k.as_str() == Some("components");
        if is_components {
            out.insert("paths".into(), Value::Mapping(std::mem::take(&mut paths)));
        }
        out.insert(k, v);
    }
    if !paths.is_empty() {
        out.insert("paths".into(), Value::Mapping(paths));
    }
    if problems.is_empty() {
        Ok(Value::Mapping(out))
    } else {
        Err(problems)
    }
}

/// Every field of the policy table into the `Policy` schema, inside the
/// nested objects its dotted path names (whose words openapi.yaml holds).
fn policy_fields(schema: &mut Value, problems: &mut Vec<String>) {
    use berth_engine::policy::{Kind, FIELDS};
    for field in FIELDS {
        let mut at = &mut *schema;
        let parts: Vec<&str> = field.path.split('.').collect();
        for (i, part) in parts.iter().enumerate() {
            let Value::Mapping(object) = at else {
                problems.push(format!(
                    "Policy: {} is inside something not an object",
                    field.path
                ));
                return;
            };
            object
                .entry("type".into())
                .or_insert_with(|| "object".into());
            object
                .entry("additionalProperties".into())
                .or_insert(Value::Bool(false));
            let props = object
                .entry("properties".into())
                .or_insert_with(|| Value::Mapping(Mapping::new()));
            let Value::Mapping(props) = props else {
                problems.push(format!(
                    "Policy: the properties above {} are not a mapping",
                    field.path
                ));
                return;
            };
            let last = i + 1 == parts.len();
            if last && props.contains_key(*part) {
                problems.push(format!(
                    "server/src/http/openapi.yaml: Policy {} is written there and in the policy table; remove it there",
                    field.path
                ));
                return;
            }
            at = props
                .entry((*part).into())
                .or_insert_with(|| Value::Mapping(Mapping::new()));
        }
        let mut leaf = Mapping::new();
        let (ty, as_value): (&str, fn(f64) -> Value) = match field.kind {
            Kind::Number => ("number", |v| v.into()),
            Kind::Integer => ("integer", |v| (v as i64).into()),
        };
        leaf.insert("type".into(), ty.into());
        leaf.insert("minimum".into(), as_value(field.min));
        leaf.insert("maximum".into(), as_value(field.max));
        leaf.insert("default".into(), as_value(field.default));
        leaf.insert(
            "description".into(),
            format!("{} ({})", field.meaning, field.unit).into(),
        );
        *at = Value::Mapping(leaf);
    }
}

/// The document as the published JSON text: two-space indent, members in
/// document order, numbers without exponents, a final newline.
pub fn text(routes: &[Route]) -> Result<String, Vec<String>> {
    let doc = document(routes)?;
    let mut out = String::new();
    write_json(&doc, 0, &mut out).map_err(|e| vec![e])?;
    out.push('\n');
    Ok(out)
}

fn write_json(v: &Value, depth: usize, out: &mut String) -> Result<(), String> {
    let pad = |out: &mut String, d: usize| {
        out.push('\n');
        for _ in 0..d {
            out.push_str("  ");
        }
    };
    match v {
        Value::Null => out.push_str("null"),
        Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Value::Number(n) => out.push_str(&number(n)?),
        Value::String(s) => out.push_str(&serde_json::Value::from(s.as_str()).to_string()),
        Value::Sequence(items) => {
            if items.is_empty() {
                out.push_str("[]");
                return Ok(());
            }
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                pad(out, depth + 1);
                write_json(item, depth + 1, out)?;
            }
            pad(out, depth);
            out.push(']');
        }
        Value::Mapping(m) => {
            if m.is_empty() {
                out.push_str("{}");
                return Ok(());
            }
            out.push('{');
            for (i, (k, item)) in m.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                pad(out, depth + 1);
                let key = match k {
                    Value::String(s) => s.clone(),
                    Value::Number(n) => number(n)?,
                    Value::Bool(b) => b.to_string(),
                    other => return Err(format!("a key that is not text: {other:?}")),
                };
                out.push_str(&serde_json::Value::from(key).to_string());
                out.push_str(": ");
                write_json(item, depth + 1, out)?;
            }
            pad(out, depth);
            out.push('}');
        }
        Value::Tagged(t) => return Err(format!("a YAML tag has no JSON form: {}", t.tag)),
    }
    Ok(())
}

/// A number as JSON text that every YAML reader reads as the same number:
/// integers as they are, other numbers in plain decimal (Rust's `Display`
/// for `f64` never writes an exponent, and is the shortest that reads back).
fn number(n: &serde_yaml::Number) -> Result<String, String> {
    if let Some(i) = n.as_i64() {
        return Ok(i.to_string());
    }
    if let Some(u) = n.as_u64() {
        return Ok(u.to_string());
    }
    match n.as_f64() {
        Some(f) if f.is_finite() => Ok(format!("{f}")),
        _ => Err(format!("{n} has no JSON form")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::http::route::{OPERATOR, PUBLIC};

    fn row(operation_id: &'static str, module: &'static str, access: Access) -> Route {
        Route {
            operation_id,
            module,
            method: axum::http::Method::POST,
            path: "/api/things",
            access,
            summary: "make a thing",
            handler: || axum::routing::post(|| async { "" }),
        }
    }

    const BASE: &str = "openapi: 3.1.0\ncomponents:\n  schemas:\n    Policy:\n      type: object\n";

    #[test]
    fn an_operation_is_its_row_and_its_words() {
        let words = [("things", "makeThing:\n  tags: [things]\n  responses: {}\n")];
        let doc = document_from(
            &[row("makeThing", "berth::http::things", OPERATOR)],
            BASE,
            &words,
        )
        .unwrap();
        let op = &doc["paths"]["/api/things"]["post"];
        assert_eq!(op["operationId"], "makeThing");
        assert_eq!(op["summary"], "make a thing");
        assert_eq!(op["x-berth-access"], "operator");
        assert_eq!(op["tags"][0], "things");
        assert_eq!(op["security"][1]["csrfHeader"], Value::Sequence(vec![]));
        let public = document_from(
            &[row("makeThing", "berth::http::things", PUBLIC)],
            BASE,
            &words,
        )
        .unwrap();
        assert_eq!(
            public["paths"]["/api/things"]["post"]["security"],
            Value::Sequence(vec![])
        );
        // Derived and table-made schemas are there.
        let schemas = &doc["components"]["schemas"];
        assert_eq!(schemas["Error"]["type"], "object");
        assert_eq!(
            schemas["Policy"]["properties"]["margins"]["properties"]["measured"]["maximum"],
            1.0
        );
    }

    #[test]
    fn each_thing_is_written_once_or_refused_by_name() {
        let problems = |rows: &[Route], base: &str, words: &[(&str, &str)]| {
            document_from(rows, base, words).unwrap_err().join("\n")
        };
        let rows = [row("makeThing", "berth::http::things", OPERATOR)];
        let p = problems(&rows, BASE, &[("things", "makeThing:\n  summary: again\n")]);
        assert!(
            p.contains("makeThing: `summary` comes from the route table"),
            "{p}"
        );
        let p = problems(&rows, BASE, &[("things", "other:\n  tags: []\n")]);
        assert!(p.contains("POST /api/things (makeThing) has no words: add `makeThing:` to server/src/http/things.openapi.yaml"), "{p}");
        assert!(p.contains("other: no route has this operation id"), "{p}");
        let p = problems(&rows, BASE, &[("elsewhere", "makeThing: {}\n")]);
        assert!(
            p.contains(
                "makeThing is declared in things.rs but its words are in elsewhere.openapi.yaml"
            ),
            "{p}"
        );
        let twice = format!("{BASE}    Session: {{type: object}}\n");
        let p = problems(&rows, &twice, &[("things", "makeThing: {}\n")]);
        assert!(
            p.contains("schema Session is derived from its Rust type"),
            "{p}"
        );
        let leaf = "openapi: 3.1.0\ncomponents:\n  schemas:\n    Policy:\n      properties:\n        max_moves: {type: integer}\n";
        let p = problems(&rows, leaf, &[("things", "makeThing: {}\n")]);
        assert!(
            p.contains("Policy max_moves is written there and in the policy table"),
            "{p}"
        );
    }

    #[test]
    fn numbers_are_written_without_exponents() {
        let n = |s: &str| serde_yaml::from_str::<serde_yaml::Number>(s).unwrap();
        assert_eq!(number(&n("1.0e6")).unwrap(), "1000000");
        assert_eq!(number(&n("1e-6")).unwrap(), "0.000001");
        assert_eq!(number(&n("0.25")).unwrap(), "0.25");
        assert_eq!(number(&n("-3")).unwrap(), "-3");
        assert!(number(&n(".nan")).is_err());
    }
}
