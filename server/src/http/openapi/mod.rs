//! The published API contract, `docs/api.openapi.json`, written from the
//! places that each say one thing once:
//!
//! - the endpoints, as `berth-api` declares them
//!   ([`berth_api::endpoint`]) and the route table serves them: every
//!   operation's id, method, path, who may call it (`x-berth-access`, and
//!   the security schemes that follow from it), its summary, its
//!   description (the declaration's doc comment), parameters, request
//!   body and answers, in the table's order;
//! - the API types of `berth-api`: the schemas of what the server writes
//!   (derived with schemars, their doc comments as descriptions), named
//!   by the declarations that carry them;
//! - the engine's policy table (`berth_engine::policy::FIELDS`): every
//!   `Policy` field's type, range, default and meaning;
//! - the shared words ([`components`]): the introduction, the tags, the
//!   security schemes, and the parameters, bodies, answers and schemas
//!   several operations name or no Rust type writes.
//!
//! A declaration naming a shared part that does not exist, a path or
//! query parameter the declaration and its contract disagree on, or a
//! schema both derived and written are refused, each named.
//! `server/tests/openapi.rs` checks that the committed file is what this
//! writes (`UPDATE_EXPECT=1` rewrites it) and that it publishes the same
//! operations, parameters, bodies and answers as the fixture
//! `server/tests/fixtures/openapi-operations.json`.
//!
//! The file is JSON, with every number written without an exponent, so
//! YAML 1.1 readers (PyYAML) read the same numbers as JSON and YAML 1.2
//! ones.

mod components;

use berth_api::endpoint::words::{Answer, Body, Param, Schema, Words};
use berth_api::endpoint::Endpoint;
use schemars::generate::SchemaSettings;
use serde_yaml::{Mapping, Value};

use super::route::Route;
use crate::auth::Access;

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

/// A JSON value as the document's (ordered) value.
fn value(v: &serde_json::Value) -> Value {
    serde_yaml::to_value(v).unwrap_or(Value::Null)
}

fn mapping(pairs: Vec<(&'static str, serde_json::Value)>) -> Mapping {
    pairs
        .into_iter()
        .map(|(k, v)| (k.into(), value(&v)))
        .collect()
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

/// The shared parts an operation may name, to check its names against.
struct Shared {
    parameters: Mapping,
    bodies: Mapping,
    answers: Mapping,
}

fn reference(kind: &str, name: &str) -> Value {
    let mut m = Mapping::new();
    m.insert("$ref".into(), format!("#/components/{kind}/{name}").into());
    Value::Mapping(m)
}

/// Schemas named by declarations, to check against the published ones.
type Named = Vec<(String, String)>;

fn schema(s: &Schema, at: &str, named: &mut Named) -> Value {
    match s {
        Schema::Ref(name) => {
            named.push((at.to_string(), name.to_string()));
            reference("schemas", name)
        }
        Schema::Envelope(result) => {
            named.push((at.to_string(), "ResultEnvelope".into()));
            named.push((at.to_string(), (*result).into()));
            value(&serde_json::json!({
                "allOf": [
                    {"$ref": "#/components/schemas/ResultEnvelope"},
                    {"properties": {"result": {"$ref": format!("#/components/schemas/{result}")}}}
                ]
            }))
        }
        Schema::Inline(v) => value(v),
    }
}

/// One JSON media type: its schema, then its examples.
fn json_content(
    s: &Schema,
    extra: &Option<serde_json::Value>,
    at: &str,
    named: &mut Named,
) -> Value {
    let mut media = Mapping::new();
    media.insert("schema".into(), schema(s, at, named));
    if let Some(Value::Mapping(extra)) = extra.as_ref().map(value) {
        media.extend(extra);
    }
    let mut content = Mapping::new();
    content.insert("application/json".into(), Value::Mapping(media));
    Value::Mapping(content)
}

/// The operation object of one route, or every reason it cannot be.
fn operation(
    route: &Route,
    shared: &Shared,
    named: &mut Named,
    problems: &mut Vec<String>,
) -> Mapping {
    let e: &Endpoint = route.endpoint;
    let id = e.operation_id;
    let words: Words = (e.words)();
    let mut op = Mapping::new();
    op.insert("operationId".into(), id.into());
    op.insert("summary".into(), route.summary.into());
    op.insert("tags".into(), Value::Sequence(vec![words.tag.into()]));
    op.insert("x-berth-access".into(), route.access.as_str().into());
    op.insert("security".into(), security(route));
    if !e.description.is_empty() {
        let lines: Vec<&str> = e
            .description
            .iter()
            .map(|l| l.strip_prefix(' ').unwrap_or(l))
            .collect();
        op.insert("description".into(), lines.join("\n").into());
    }

    // Parameters: each shared one must exist; together they must be the
    // declared path parameters, in order, and the declared query ones.
    let (mut path, mut query) = (Vec::new(), Vec::new());
    let mut params = Vec::new();
    for p in &words.params {
        let (object, v) = match p {
            Param::Shared(name) => match shared.parameters.get(*name) {
                Some(object) => (object.clone(), reference("parameters", name)),
                None => {
                    problems.push(format!(
                        "{id}: no shared parameter {name} (server/src/http/openapi/components.rs)"
                    ));
                    continue;
                }
            },
            Param::Inline(v) => (value(v), value(v)),
        };
        let name = object
            .get("name")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string();
        match object.get("in").and_then(Value::as_str) {
            Some("path") => path.push(name),
            Some("query") => query.push(name),
            other => problems.push(format!("{id}: parameter {name} is in {other:?}")),
        }
        params.push(v);
    }
    if path != e.path_params {
        problems.push(format!(
            "{id}: the path {} has the parameters {:?}, its contract {path:?}",
            e.path, e.path_params
        ));
    }
    let mut declared: Vec<&str> = e.query.to_vec();
    let mut described: Vec<&str> = query.iter().map(String::as_str).collect();
    declared.sort_unstable();
    described.sort_unstable();
    if declared != described {
        problems.push(format!(
            "{id}: declared with the query parameters {declared:?}, its contract describes {described:?}"
        ));
    }
    if !params.is_empty() {
        op.insert("parameters".into(), Value::Sequence(params));
    }

    if let Some(body) = &words.body {
        let at = format!("{id} request body");
        let v = match body {
            Body::Shared(name) => {
                if !shared.bodies.contains_key(*name) {
                    problems.push(format!("{id}: no shared request body {name}"));
                }
                reference("requestBodies", name)
            }
            Body::Json {
                required,
                description,
                schema,
                extra,
            } => {
                let mut m = Mapping::new();
                m.insert("required".into(), Value::Bool(*required));
                if let Some(d) = description {
                    m.insert("description".into(), (*d).into());
                }
                m.insert("content".into(), json_content(schema, extra, &at, named));
                Value::Mapping(m)
            }
        };
        op.insert("requestBody".into(), v);
    }

    let mut answers = Mapping::new();
    for (status, answer) in &words.answers {
        let at = format!("{id} answer {status}");
        let v = match answer {
            Answer::Shared(name) => {
                if !shared.answers.contains_key(*name) {
                    problems.push(format!("{at}: no shared answer {name}"));
                }
                reference("responses", name)
            }
            Answer::Empty(description) => {
                let mut m = Mapping::new();
                m.insert("description".into(), (*description).into());
                Value::Mapping(m)
            }
            Answer::Json {
                description,
                schema,
                extra,
            } => {
                let mut m = Mapping::new();
                m.insert("description".into(), (*description).into());
                m.insert("content".into(), json_content(schema, extra, &at, named));
                Value::Mapping(m)
            }
            Answer::Raw(v) => value(v),
        };
        if answers.insert(status.to_string().into(), v).is_some() {
            problems.push(format!("{at}: answered twice"));
        }
    }
    if answers.is_empty() {
        problems.push(format!("{id}: no answers"));
    }
    op.insert("responses".into(), Value::Mapping(answers));
    if let Some(q) = words.example_query {
        op.insert("x-berth-example-query".into(), q.into());
    }
    op
}

/// The whole document, or every reason it cannot be written.
pub fn document(routes: &[Route]) -> Result<Value, Vec<String>> {
    let mut problems = Vec::new();
    let mut doc = mapping(components::head());
    if let Some(Value::Mapping(info)) = doc.get_mut("info") {
        info.insert("description".into(), components::INTRO.into());
    }
    let shared = Shared {
        parameters: mapping(components::parameters()),
        bodies: mapping(components::request_bodies()),
        answers: mapping(components::responses()),
    };
    let mut named = Named::new();

    let mut paths = Mapping::new();
    for route in routes {
        let op = operation(route, &shared, &mut named, &mut problems);
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

    // The schemas: the written ones, then the derived ones.
    let mut schemas = mapping(components::schemas());
    for (name, schema) in derived_schemas() {
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
                "server/src/http/openapi/components.rs: schema {name} is derived from its Rust type (berth-api or the engine); remove it there"
            ));
            continue;
        }
        schemas.insert(name.into(), value(&schema));
    }
    for (at, name) in &named {
        if !schemas.contains_key(name.as_str()) {
            problems.push(format!("{at}: no schema {name} is published"));
        }
    }
    match schemas.get_mut("Policy") {
        Some(policy) => policy_fields(policy, &mut problems),
        None => problems.push("server/src/http/openapi/components.rs: no Policy schema".into()),
    }
    let mut components = Mapping::new();
    components.insert(
        "securitySchemes".into(),
        Value::Mapping(mapping(components::security_schemes())),
    );
    components.insert("parameters".into(), Value::Mapping(shared.parameters));
    components.insert("requestBodies".into(), Value::Mapping(shared.bodies));
    components.insert("responses".into(), Value::Mapping(shared.answers));
    components.insert("schemas".into(), Value::Mapping(schemas));

    // `paths` after `tags`, where a reader looks for it.
    doc.insert("paths".into(), Value::Mapping(paths));
    doc.insert("components".into(), Value::Mapping(components));
    if problems.is_empty() {
        Ok(Value::Mapping(doc))
    } else {
        Err(problems)
    }
}

/// Every field of the policy table into the `Policy` schema, inside the
/// nested objects its dotted path names (whose words `components::schemas` holds).
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
                    "server/src/http/openapi/components.rs: Policy {} is written there and in the policy table; remove it there",
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

    use berth_api::endpoint::{self as api, Endpoint, Method};
    use serde_json::json;

    const THING: Endpoint = Endpoint {
        operation_id: "makeThing",
        method: Method::POST,
        path: "/api/estates/{id}/things",
        path_params: &["id"],
        query: &["now"],
        access: api::Access::Role(berth_api::Role::Operator),
        summary: "make a thing",
        description: &[" Makes", " a thing."],
        words: || Words {
            tag: "estates",
            params: vec![Param::Shared("EstateId"), Param::Shared("Now")],
            body: Some(Body::Json {
                required: true,
                description: None,
                schema: api::words::of::<berth_api::NewUser>(),
                extra: Some(json!({"example": {"name": "a"}})),
            }),
            answers: vec![
                (201, Answer::Empty("Made.")),
                (403, Answer::Shared("Forbidden")),
            ],
            example_query: None,
        },
    };

    const WRONG: Endpoint = Endpoint {
        query: &["why"],
        words: || Words {
            tag: "estates",
            params: vec![Param::Shared("Nope")],
            answers: vec![
                (200, Answer::Shared("Missing")),
                (
                    400,
                    Answer::Json {
                        description: "x",
                        schema: api::words::named("NoSuchSchema"),
                        extra: None,
                    },
                ),
            ],
            ..Default::default()
        },
        ..THING
    };

    fn row(endpoint: &'static Endpoint) -> Route {
        Route::new(endpoint, || axum::routing::post(|| async { "" }))
    }

    #[test]
    fn an_operation_is_its_declaration() {
        let doc = document(&[row(&THING)]).unwrap();
        let op = &doc["paths"]["/api/estates/{id}/things"]["post"];
        assert_eq!(op["operationId"], "makeThing");
        assert_eq!(op["summary"], "make a thing");
        assert_eq!(op["description"], "Makes\na thing.");
        assert_eq!(op["x-berth-access"], "operator");
        assert_eq!(op["tags"][0], "estates");
        assert_eq!(op["security"][1]["csrfHeader"], Value::Sequence(vec![]));
        assert_eq!(
            op["parameters"][0]["$ref"],
            "#/components/parameters/EstateId"
        );
        let media = &op["requestBody"]["content"]["application/json"];
        assert_eq!(media["schema"]["$ref"], "#/components/schemas/NewUser");
        assert_eq!(media["example"]["name"], "a");
        assert_eq!(op["responses"]["201"]["description"], "Made.");
        assert_eq!(
            op["responses"]["403"]["$ref"],
            "#/components/responses/Forbidden"
        );
        let schemas = &doc["components"]["schemas"];
        assert_eq!(schemas["Error"]["type"], "object");
        assert_eq!(
            schemas["Policy"]["properties"]["margins"]["properties"]["measured"]["maximum"],
            1.0
        );
    }

    #[test]
    fn a_name_that_resolves_to_nothing_is_refused_by_name() {
        let p = document(&[row(&WRONG)]).unwrap_err().join("\n");
        assert!(p.contains("makeThing: no shared parameter Nope"), "{p}");
        assert!(
            p.contains("makeThing answer 200: no shared answer Missing"),
            "{p}"
        );
        assert!(
            p.contains("makeThing answer 400: no schema NoSuchSchema is published"),
            "{p}"
        );
        assert!(
            p.contains("makeThing: the path /api/estates/{id}/things has the parameters [\"id\"], its contract []"),
            "{p}"
        );
        assert!(
            p.contains("makeThing: declared with the query parameters [\"why\"], its contract describes []"),
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
