//! `docs/api.openapi.json`: written by the code (`berth::http::openapi_text`,
//! from the route table, the API types and each module's words), and
//! checked against the real router.
//!
//! The committed file must be what the code writes (`UPDATE_EXPECT=1`
//! rewrites it); it must read the same in YAML 1.1 as in JSON; it must
//! list exactly the routes of the table, in its order, with the same
//! access and summary; every path parameter declared, every
//! `$ref` resolvable, every operation named and answered. Then each
//! documented operation is sent to the router built on a fresh SQLite
//! database with its documented examples, and must reach a handler (not
//! the fallback), answer a documented status and content type, and, for a
//! JSON body, match the documented schema as far as `check_schema` reads
//! schemas.

mod support;

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use axum::body::Body;
use axum::http::Request;
use serde_yaml::{Mapping, Value};
use tower::ServiceExt;

use berth::http::routes;

/// The HTTP methods an OpenAPI path item may hold, lowercase.
const METHODS: [&str; 8] = [
    "get", "put", "post", "delete", "options", "head", "patch", "trace",
];

/// At least 32 characters, like `BERTH_ADMIN_TOKEN`.
const ADMIN_TOKEN: &str = "berth_openapi_test_admin_token_0123456789abcdef";

/// A secret key (32 bytes, base64, like `BERTH_SECRET_KEY`), so that the
/// routes generating decider secrets answer as on a configured server.
const SECRET_KEY: &str = "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=";

fn docs_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../docs")
}

fn spec_path() -> PathBuf {
    docs_dir().join("api.openapi.json")
}

fn spec() -> Value {
    let path = spec_path();
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("reading {}: {e}", path.display()));
    // JSON is YAML 1.2; the YAML reader keeps the members' order.
    serde_yaml::from_str(&text).unwrap_or_else(|e| panic!("{} is not JSON: {e}", path.display()))
}

/// The committed spec is what the route table, the API types and the
/// modules' words write today; `UPDATE_EXPECT=1` rewrites it.
#[test]
fn the_published_spec_is_what_the_code_writes() {
    let written = berth::http::openapi_text()
        .unwrap_or_else(|problems| panic!("the spec cannot be written:\n{}", problems.join("\n")));
    let path = spec_path();
    if std::env::var_os("UPDATE_EXPECT").is_some() {
        std::fs::write(&path, &written).unwrap();
        return;
    }
    let committed = std::fs::read_to_string(&path).unwrap_or_default();
    if committed != written {
        let first = committed
            .lines()
            .zip(written.lines())
            .position(|(a, b)| a != b)
            .unwrap_or(committed.lines().count().min(written.lines().count()));
        panic!(
            "docs/api.openapi.json is not what the code writes (first difference at line {}: \
             committed {:?}, written {:?}); run `UPDATE_EXPECT=1 cargo test -p berth --test openapi`",
            first + 1,
            committed.lines().nth(first),
            written.lines().nth(first),
        );
    }
}

/// YAML 1.1 readers (PyYAML, and the many tools built on it) read the
/// published file as the same document a JSON reader does: no number
/// turned into a string, no key or value read as another type.
#[test]
fn the_spec_reads_the_same_in_yaml_1_1_and_json() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let out = std::process::Command::new("python3")
        .args([
            "-c",
            "import json, sys, yaml\n\
             t = open('docs/api.openapi.json').read()\n\
             a, b = json.loads(t), yaml.safe_load(t)\n\
             def diff(x, y, at):\n\
             \x20   if type(x) != type(y) or (not isinstance(x, (dict, list)) and x != y):\n\
             \x20       sys.exit(f'{at}: JSON reads {x!r}, YAML 1.1 reads {y!r}')\n\
             \x20   if isinstance(x, dict):\n\
             \x20       [diff(x[k], y.get(k), f'{at}/{k}') for k in x]\n\
             \x20   if isinstance(x, list):\n\
             \x20       [diff(p, q, f'{at}/{i}') for i, (p, q) in enumerate(zip(x, y))]\n\
             diff(a, b, '')\n\
             print('same', len(t))\n",
        ])
        .current_dir(&root)
        .output()
        .unwrap_or_else(|e| panic!("cannot run python3 (PyYAML comes with `make tools`): {e}"));
    assert!(
        out.status.success(),
        "YAML 1.1 reads docs/api.openapi.json differently:\n{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

fn get<'a>(v: &'a Value, key: &str) -> Option<&'a Value> {
    v.as_mapping().and_then(|m| m.get(key))
}

fn get_str<'a>(v: &'a Value, key: &str) -> Option<&'a str> {
    get(v, key).and_then(Value::as_str)
}

fn mapping<'a>(v: &'a Value, what: &str) -> &'a Mapping {
    v.as_mapping()
        .unwrap_or_else(|| panic!("{what}: expected a mapping"))
}

/// One operation of the spec.
struct Op<'a> {
    /// Uppercase, as in the route table.
    method: String,
    path: String,
    path_item: &'a Value,
    op: &'a Value,
}

impl Op<'_> {
    fn name(&self) -> String {
        format!("{} {}", self.method, self.path)
    }
}

/// Every operation, in document order (paths, then methods within each).
fn operations(spec: &Value) -> Vec<Op<'_>> {
    let paths = mapping(get(spec, "paths").expect("`paths`"), "paths");
    let mut ops = Vec::new();
    for (path, item) in paths {
        let path = path.as_str().expect("path keys are strings");
        for (key, op) in mapping(item, path) {
            let key = key.as_str().expect("path item keys are strings");
            if METHODS.contains(&key) {
                ops.push(Op {
                    method: key.to_uppercase(),
                    path: path.to_string(),
                    path_item: item,
                    op,
                });
            }
        }
    }
    ops
}

/// Follow a JSON pointer (`/components/schemas/X`) inside a document.
fn pointer<'a>(doc: &'a Value, pointer: &str) -> Option<&'a Value> {
    let mut at = doc;
    for raw in pointer.split('/').skip(1) {
        let token = raw.replace("~1", "/").replace("~0", "~");
        at = match at {
            Value::Mapping(m) => m.get(token.as_str())?,
            Value::Sequence(s) => s.get(token.parse::<usize>().ok()?)?,
            _ => return None,
        };
    }
    Some(at)
}

/// An internal `$ref` followed to its target (repeatedly); anything else
/// as it is.
fn deref<'a>(spec: &'a Value, v: &'a Value) -> &'a Value {
    let mut v = v;
    for _ in 0..32 {
        match get_str(v, "$ref").and_then(|r| r.strip_prefix('#')) {
            Some(p) => v = pointer(spec, p).unwrap_or_else(|| panic!("unresolved $ref #{p}")),
            None => return v,
        }
    }
    panic!("$ref chain longer than 32")
}

/// Path and operation parameters together, `$ref`s followed.
fn parameters<'a>(spec: &'a Value, op: &Op<'a>) -> Vec<&'a Value> {
    [get(op.path_item, "parameters"), get(op.op, "parameters")]
        .into_iter()
        .flatten()
        .flat_map(|list| list.as_sequence().expect("parameters is a list"))
        .map(|p| deref(spec, p))
        .collect()
}

fn template_params(path: &str) -> Vec<String> {
    path.split('/')
        .filter_map(|seg| seg.strip_prefix('{').and_then(|s| s.strip_suffix('}')))
        .map(String::from)
        .collect()
}

#[test]
fn the_spec_is_openapi_3_1_with_a_title_and_version() {
    let spec = spec();
    let version = get_str(&spec, "openapi").expect("`openapi` is a string");
    assert!(version.starts_with("3.1"), "openapi: {version}");
    let info = get(&spec, "info").expect("`info`");
    for key in ["title", "version"] {
        let v = get_str(info, key).unwrap_or_else(|| panic!("info.{key} is missing"));
        assert!(!v.trim().is_empty(), "info.{key} is blank");
    }
}

#[test]
fn the_spec_lists_exactly_the_route_table_in_its_order() {
    let spec = spec();
    let documented: Vec<(String, String)> = operations(&spec)
        .iter()
        .map(|o| (o.method.clone(), o.path.clone()))
        .collect();
    let table: Vec<(String, String)> = routes()
        .iter()
        .map(|r| (r.method.to_string(), r.path.to_string()))
        .collect();
    let doc_set: BTreeSet<_> = documented.iter().cloned().collect();
    let table_set: BTreeSet<_> = table.iter().cloned().collect();
    let undocumented: Vec<_> = table_set.difference(&doc_set).collect();
    let unrouted: Vec<_> = doc_set.difference(&table_set).collect();
    assert!(
        undocumented.is_empty() && unrouted.is_empty(),
        "in routes() but not in docs/api.openapi.json: {undocumented:?}\n\
         in docs/api.openapi.json but not in routes(): {unrouted:?}"
    );
    assert_eq!(
        documented.len(),
        table.len(),
        "an operation is listed twice"
    );
    assert_eq!(
        documented, table,
        "docs/api.openapi.json lists the routes in another order than routes()"
    );
}

#[test]
fn every_operation_has_the_access_and_summary_of_the_route_table() {
    let spec = spec();
    let ops = operations(&spec);
    let mut wrong = Vec::new();
    for route in routes() {
        let op = ops
            .iter()
            .find(|o| o.method == route.method.as_str() && o.path == route.path)
            .unwrap_or_else(|| panic!("{} {} is not documented", route.method, route.path));
        let access = get_str(op.op, "x-berth-access");
        if access != Some(route.access.as_str()) {
            wrong.push(format!(
                "{}: x-berth-access {access:?}, the table says {:?}",
                op.name(),
                route.access.as_str()
            ));
        }
        let summary = get_str(op.op, "summary");
        if summary != Some(route.summary) {
            wrong.push(format!(
                "{}: summary {summary:?}, the table says {:?}",
                op.name(),
                route.summary
            ));
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

#[test]
fn every_path_parameter_is_declared_and_every_declared_one_is_in_the_path() {
    let spec = spec();
    let mut wrong = Vec::new();
    for op in operations(&spec) {
        let in_template: BTreeSet<String> = template_params(&op.path).into_iter().collect();
        let mut declared = BTreeSet::new();
        for p in parameters(&spec, &op) {
            if get_str(p, "in") == Some("path") {
                let name = get_str(p, "name").expect("a parameter has a name");
                if get(p, "required").and_then(Value::as_bool) != Some(true) {
                    wrong.push(format!("{}: path parameter {name} not required", op.name()));
                }
                declared.insert(name.to_string());
            }
        }
        if in_template != declared {
            wrong.push(format!(
                "{}: the path has {in_template:?}, the declared path parameters are {declared:?}",
                op.name()
            ));
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

/// Every `$ref` (and `externalValue`) in `v`, with where it was found.
fn refs(v: &Value, at: &str, out: &mut Vec<(String, String)>) {
    match v {
        Value::Mapping(m) => {
            for (k, child) in m {
                let k = k.as_str().unwrap_or("?");
                if k == "$ref" || k == "externalValue" {
                    if let Some(target) = child.as_str() {
                        out.push((at.to_string(), target.to_string()));
                    }
                }
                refs(child, &format!("{at}/{k}"), out);
            }
        }
        Value::Sequence(s) => {
            for (i, child) in s.iter().enumerate() {
                refs(child, &format!("{at}/{i}"), out);
            }
        }
        _ => {}
    }
}

#[test]
fn every_reference_resolves() {
    let spec = spec();
    let mut found = Vec::new();
    refs(&spec, "", &mut found);
    assert!(!found.is_empty(), "no $ref at all: the walk is broken");
    let mut wrong = Vec::new();
    for (at, target) in &found {
        let (file, fragment) = match target.split_once('#') {
            Some((f, frag)) => (f, Some(frag)),
            None => (target.as_str(), None),
        };
        if file.is_empty() {
            if pointer(&spec, fragment.unwrap_or("")).is_none() {
                wrong.push(format!("{at}: {target} does not exist in the spec"));
            }
            continue;
        }
        if file.contains("://") {
            wrong.push(format!(
                "{at}: {target}: only relative file references are allowed"
            ));
            continue;
        }
        let path = docs_dir().join(file);
        let Ok(text) = std::fs::read_to_string(&path) else {
            wrong.push(format!("{at}: {target}: no file {}", path.display()));
            continue;
        };
        if let Some(frag) = fragment.filter(|f| !f.is_empty()) {
            let doc: Value =
                serde_yaml::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
            if pointer(&doc, frag).is_none() {
                wrong.push(format!("{at}: {target}: no {frag} in {}", path.display()));
            }
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

#[test]
fn every_operation_is_named_secured_and_answered() {
    let spec = spec();
    let schemes = get(&spec, "components")
        .and_then(|c| get(c, "securitySchemes"))
        .map(|s| mapping(s, "securitySchemes"))
        .expect("components.securitySchemes");
    let mut ids = BTreeSet::new();
    let mut wrong = Vec::new();
    for op in operations(&spec) {
        let name = op.name();
        match get_str(op.op, "operationId") {
            None => wrong.push(format!("{name}: no operationId")),
            Some(id) => {
                if !ids.insert(id.to_string()) {
                    wrong.push(format!("{name}: operationId {id} used twice"));
                }
            }
        }
        let codes: BTreeSet<String> = get(op.op, "responses")
            .map(|r| mapping(r, "responses"))
            .into_iter()
            .flatten()
            .filter_map(|(k, _)| k.as_str().map(String::from))
            .collect();
        if !codes.iter().any(|c| c.starts_with('2')) {
            wrong.push(format!("{name}: no 2xx response"));
        }
        let public = get_str(op.op, "x-berth-access") == Some("public");
        if !public {
            for code in ["401", "403"] {
                if !codes.contains(code) {
                    wrong.push(format!("{name}: no {code} response"));
                }
            }
        }
        // Security: present on every operation; empty exactly for public
        // routes; bearer or cookie otherwise, with the CSRF header beside
        // the cookie exactly when the method changes state (auth.rs).
        let Some(security) = get(op.op, "security").and_then(Value::as_sequence) else {
            wrong.push(format!("{name}: no `security` list"));
            continue;
        };
        if public != security.is_empty() {
            wrong.push(format!(
                "{name}: security {security:?} for access {:?}",
                get_str(op.op, "x-berth-access")
            ));
        }
        let safe = op.method == "GET";
        let mut schemes_used = BTreeSet::new();
        for requirement in security {
            let req: BTreeSet<&str> = mapping(requirement, "a security requirement")
                .keys()
                .filter_map(Value::as_str)
                .collect();
            for s in &req {
                if !schemes.contains_key(*s) {
                    wrong.push(format!("{name}: no security scheme {s}"));
                }
                schemes_used.insert(s.to_string());
            }
            if req.contains("cookieAuth") && req.contains("csrfHeader") == safe {
                wrong.push(format!(
                    "{name}: the cookie requirement {} the CSRF header",
                    if safe { "must not carry" } else { "must carry" }
                ));
            }
        }
        let both = schemes_used.contains("bearerAuth") && schemes_used.contains("cookieAuth");
        if !public && !both {
            wrong.push(format!(
                "{name}: must accept both bearerAuth and cookieAuth"
            ));
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

/// The structural check of a real validator. `make test` installs it
/// (scripts/install-tools.sh); without it this fails rather than skips.
#[test]
fn openapi_spec_validator_accepts_the_spec() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let out = std::process::Command::new("python3")
        .args(["-m", "openapi_spec_validator", "docs/api.openapi.json"])
        .current_dir(&root)
        .output()
        .unwrap_or_else(|e| {
            panic!("cannot run python3 (needed for openapi-spec-validator; `make tools`): {e}")
        });
    assert!(
        out.status.success(),
        "openapi-spec-validator refused docs/api.openapi.json ({}); if the module is \
         missing, run `make tools`.\nstdout:\n{}\nstderr:\n{}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

// ---- the real router ---------------------------------------------------

/// Check `v` against the parts of a schema this test reads: internal
/// `$ref`, `allOf`, `anyOf`, `oneOf`, `type`, `const`, `enum`, `required`,
/// `properties` and `items`. Other keywords
/// (and external references) are not checked here: the validator in
/// `openapi_spec_validator_accepts_the_spec` covers the spec's own shape.
///
/// Objects whose schema names any `properties` (its own and those of its
/// `allOf` members together) are closed: a field it does not name is an
/// error, so a response cannot carry a field the spec does not document.
fn check_schema(spec: &Value, schema: &Value, v: &Value, at: &str, errs: &mut Vec<String>) {
    check_schema_part(spec, schema, v, at, true, errs);
}

/// The property names a schema declares, its `allOf` members' included.
fn declared_properties(spec: &Value, schema: &Value, out: &mut BTreeSet<String>) {
    if get_str(schema, "$ref").is_some_and(|r| !r.starts_with('#')) {
        return;
    }
    let schema = deref(spec, schema);
    if let Some(props) = get(schema, "properties").and_then(Value::as_mapping) {
        out.extend(props.keys().filter_map(Value::as_str).map(String::from));
    }
    for sub in get(schema, "allOf")
        .and_then(Value::as_sequence)
        .into_iter()
        .flatten()
    {
        declared_properties(spec, sub, out);
    }
}

/// `closed`: this is the whole schema of `v`, not one `allOf` member.
fn check_schema_part(
    spec: &Value,
    schema: &Value,
    v: &Value,
    at: &str,
    closed: bool,
    errs: &mut Vec<String>,
) {
    if get_str(schema, "$ref").is_some_and(|r| !r.starts_with('#')) {
        return;
    }
    if let (true, Value::Mapping(obj)) = (closed, v) {
        let mut declared = BTreeSet::new();
        declared_properties(spec, schema, &mut declared);
        if !declared.is_empty() {
            for key in obj.keys().filter_map(Value::as_str) {
                if !declared.contains(key) {
                    errs.push(format!("{at}: field {key} is not documented"));
                }
            }
        }
    }
    let schema = deref(spec, schema);
    for sub in get(schema, "allOf")
        .and_then(Value::as_sequence)
        .into_iter()
        .flatten()
    {
        check_schema_part(spec, sub, v, at, false, errs);
    }
    if let Some(options) = get(schema, "anyOf").and_then(Value::as_sequence) {
        let matching = options
            .iter()
            .filter(|o| {
                let mut e = Vec::new();
                check_schema(spec, o, v, at, &mut e);
                e.is_empty()
            })
            .count();
        if matching == 0 {
            errs.push(format!("{at}: matches none of anyOf: {v:?}"));
        }
    }
    if let Some(options) = get(schema, "oneOf").and_then(Value::as_sequence) {
        let matching = options
            .iter()
            .filter(|o| {
                let mut e = Vec::new();
                check_schema(spec, o, v, at, &mut e);
                e.is_empty()
            })
            .count();
        if matching != 1 {
            errs.push(format!("{at}: matches {matching} of oneOf, not 1: {v:?}"));
        }
    }
    if let Some(types) = get(schema, "type") {
        let types: Vec<&str> = match types {
            Value::String(s) => vec![s.as_str()],
            Value::Sequence(s) => s.iter().filter_map(Value::as_str).collect(),
            _ => vec![],
        };
        let ok = types.iter().any(|t| match *t {
            "object" => v.is_mapping(),
            "array" => v.is_sequence(),
            "string" => v.is_string(),
            "boolean" => v.is_bool(),
            "null" => v.is_null(),
            "integer" => v.is_i64() || v.is_u64(),
            "number" => v.is_number(),
            _ => false,
        });
        if !ok {
            errs.push(format!("{at}: expected type {types:?}, found {v:?}"));
            return;
        }
    }
    if let Some(c) = get(schema, "const") {
        if c != v {
            errs.push(format!("{at}: expected {c:?}, found {v:?}"));
        }
    }
    if let Some(options) = get(schema, "enum").and_then(Value::as_sequence) {
        if !options.contains(v) {
            errs.push(format!("{at}: {v:?} is not one of {options:?}"));
        }
    }
    if let Value::Mapping(obj) = v {
        for key in get(schema, "required")
            .and_then(Value::as_sequence)
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
        {
            if !obj.contains_key(key) {
                errs.push(format!("{at}: required field {key} is missing"));
            }
        }
        let props = get(schema, "properties").and_then(Value::as_mapping);
        for (k, child) in obj {
            let key = k.as_str().unwrap_or("?");
            if let Some(sub) = props.and_then(|p| p.get(key)) {
                check_schema(spec, sub, child, &format!("{at}/{key}"), errs);
            }
        }
    }
    if let (Value::Sequence(items), Some(item_schema)) = (v, get(schema, "items")) {
        for (i, item) in items.iter().enumerate() {
            check_schema(spec, item_schema, item, &format!("{at}/{i}"), errs);
        }
    }
}

/// The request body an operation documents: its first media type, and
/// the example (inline, first of `examples`, or an `externalValue` file).
fn example_body(spec: &Value, op: &Op) -> Payload {
    let body = deref(spec, get(op.op, "requestBody")?);
    let content = mapping(
        get(body, "content").expect("requestBody.content"),
        "content",
    );
    let (media, m) = content.iter().next().expect("a media type");
    let media = media.as_str().expect("media types are strings").to_string();
    let example = get(m, "example").cloned().or_else(|| {
        let first = get(m, "examples")?.as_mapping()?.values().next()?;
        let first = deref(spec, first);
        if let Some(v) = get(first, "value") {
            return Some(v.clone());
        }
        let file = docs_dir().join(get_str(first, "externalValue")?);
        let text =
            std::fs::read_to_string(&file).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
        Some(serde_yaml::from_str(&text).expect("example files are JSON or YAML"))
    });
    let example =
        example.unwrap_or_else(|| panic!("{}: the request body has no example", op.name()));
    let bytes = serde_json::to_vec(&example).expect("examples convert to JSON");
    Some((media, bytes))
}

/// The path with each parameter replaced by its documented example.
fn example_uri(spec: &Value, op: &Op) -> String {
    let mut uri = op.path.clone();
    for p in parameters(spec, op) {
        if get_str(p, "in") != Some("path") {
            continue;
        }
        let name = get_str(p, "name").expect("name");
        let example = get_str(p, "example")
            .unwrap_or_else(|| panic!("{}: path parameter {name} has no example", op.name()));
        uri = uri.replace(&format!("{{{name}}}"), example);
    }
    assert!(
        !uri.contains('{'),
        "{}: {uri} still has a parameter",
        op.name()
    );
    // An operation whose example only holds at one evaluation time (a
    // review names a recommendation of the advice then) says so.
    match get_str(op.op, "x-berth-example-query") {
        Some(q) => format!("{uri}?{q}"),
        None => uri,
    }
}

/// What the fallback answers: `not_found`, "no route …".
fn is_fallback(status: u16, body: &serde_json::Value) -> bool {
    status == 404
        && body["error"] == "not_found"
        && body["message"]
            .as_str()
            .is_some_and(|m| m.starts_with("no route"))
}

/// A router on a fresh SQLite database, seeded with the sample estate, with
/// [`ADMIN_TOKEN`] as an administrator token. The guards keep the database
/// alive.
async fn router() -> (axum::Router, support::TestDb, tempfile::TempDir) {
    router_on(support::Backend::Sqlite).await
}

/// [`router`] on the given database backend.
async fn router_on(
    backend: support::Backend,
) -> (axum::Router, support::TestDb, tempfile::TempDir) {
    let (state, db, dir) = prepared(backend, None).await;
    (berth::http::app(state), db, dir)
}

/// The server state behind [`router`], with the advice driver configured
/// (passes every `driver_every_s` seconds) or not. Nothing runs passes
/// here: a test calls `driver::pass` itself.
async fn prepared(
    backend: support::Backend,
    driver_every_s: Option<u64>,
) -> (berth::AppState, support::TestDb, tempfile::TempDir) {
    let db = support::TestDb::new(backend).await;
    let data_dir = tempfile::tempdir().expect("temp dir");
    let opts = berth::serve::ServeOptions {
        listen: "127.0.0.1:0".parse().unwrap(),
        database_url: Some(db.url.clone()),
        data_dir: data_dir.path().to_path_buf(),
        admin_token: Some(ADMIN_TOKEN.into()),
        seed: true,
        sample_at: Some(berth::serve::sample_designed_at()),
        max_connections: 4,
        secret_key: Some(SECRET_KEY.into()),
        secret_key_file: None,
        decider_allow: Vec::new(),
        driver_every_s,
        history_retention_days: berth::external::driver::DEFAULT_HISTORY_RETENTION_DAYS,
        net: Default::default(),
        config: berth::Config::default(),
    };
    let (state, generated) = berth::serve::prepare(&opts).await.expect("prepare");
    assert!(
        generated.is_none(),
        "an admin token was given: none is generated"
    );
    (state, db, data_dir)
}

/// A request body: its media type and bytes.
type Payload = Option<(String, Vec<u8>)>;

/// A response, read whole.
struct Answer {
    status: u16,
    headers: axum::http::HeaderMap,
    content_type: String,
    bytes: Vec<u8>,
}

impl Answer {
    fn json(&self) -> serde_json::Value {
        serde_json::from_slice(&self.bytes).unwrap_or_default()
    }
    fn text(&self) -> String {
        String::from_utf8_lossy(&self.bytes).into_owned()
    }
}

async fn send(
    app: &axum::Router,
    method: &str,
    uri: &str,
    token: Option<&str>,
    body: Payload,
) -> Answer {
    let mut req = Request::builder().method(method).uri(uri);
    if let Some(t) = token {
        req = req.header("authorization", format!("Bearer {t}"));
    }
    let body = match body {
        Some((media, bytes)) => {
            req = req.header("content-type", media);
            Body::from(bytes)
        }
        None => Body::empty(),
    };
    let resp = app
        .clone()
        .oneshot(req.body(body).unwrap())
        .await
        .expect("the router answers");
    let status = resp.status().as_u16();
    let content_type = resp
        .headers()
        .get("content-type")
        .and_then(|v| v.to_str().ok())
        .unwrap_or("")
        .to_string();
    let headers = resp.headers().clone();
    let bytes = axum::body::to_bytes(resp.into_body(), 64 << 20)
        .await
        .expect("body")
        .to_vec();
    Answer {
        status,
        headers,
        content_type,
        bytes,
    }
}

/// Everything wrong with `a` as an answer of `op`: an undocumented status
/// or content type, a body where none is documented, or a JSON body that
/// does not match its documented schema.
fn undocumented(spec: &Value, op: &Op, a: &Answer) -> Vec<String> {
    let name = op.name();
    let status = a.status;
    let Some(response) = get(op.op, "responses").and_then(|r| get(r, &status.to_string())) else {
        return vec![format!(
            "{name}: status {status} is not documented: {}",
            a.text()
        )];
    };
    let response = deref(spec, response);
    let Some(content) = get(response, "content").and_then(Value::as_mapping) else {
        if a.bytes.is_empty() {
            return vec![];
        }
        return vec![format!("{name}: {status} documents no body, but one came")];
    };
    let essence = |t: &str| {
        t.split(';')
            .next()
            .unwrap_or("")
            .trim()
            .to_ascii_lowercase()
    };
    let Some((_, media)) = content
        .iter()
        .find(|(k, _)| k.as_str().map(essence) == Some(essence(&a.content_type)))
    else {
        return vec![format!(
            "{name}: {status} with Content-Type {:?}, which is not documented",
            a.content_type
        )];
    };
    let mut errs = Vec::new();
    if essence(&a.content_type) == "application/json" {
        let value: Value = serde_yaml::to_value(a.json()).expect("JSON converts");
        if let Some(schema) = get(media, "schema") {
            check_schema(spec, schema, &value, "", &mut errs);
        }
    }
    errs.into_iter()
        .map(|e| format!("{name}: {status} body: {e}"))
        .collect()
}

fn find_op<'a, 'b>(ops: &'b [Op<'a>], method: &str, path: &str) -> &'b Op<'a> {
    ops.iter()
        .find(|o| o.method == method && o.path == path)
        .unwrap_or_else(|| panic!("{method} {path} is not documented"))
}

/// Operations whose documented example is expected to be refused, with
/// the status; every other operation must succeed with its example.
const EXPECTED_REFUSALS: &[(&str, &str, u16)] = &[
    // The example user is created later, by POST /api/users.
    ("POST", "/api/session", 403),
    // The example scenario is saved later, by its PUT.
    ("GET", "/api/estates/{id}/scenarios/{name}", 404),
    // No token has the example id (ids are random).
    ("DELETE", "/api/tokens/{token_id}", 404),
    // The example decider is registered later, by POST /api/deciders.
    ("POST", "/api/estates/{id}/deciders/{name}/runs", 404),
];

#[tokio::test]
async fn every_documented_operation_reaches_its_handler_and_answers_as_documented() {
    let (app, _db, _dir) = router().await;
    let spec = spec();
    let ops = operations(&spec);
    assert_eq!(ops.len(), routes().len());

    // Everything but deletions in document order, then the deletions in
    // reverse, so that what the examples create exists when it is used
    // and is deleted after (scenario before estate, estate before
    // session).
    let (mut deletes, mut order): (Vec<&Op>, Vec<&Op>) =
        ops.iter().partition(|o| o.method == "DELETE");
    deletes.reverse();
    order.extend(deletes);

    let mut wrong = Vec::new();
    let mut seen = BTreeMap::new();
    for op in order {
        let name = op.name();
        let uri = example_uri(&spec, op);
        let a = send(
            &app,
            &op.method,
            &uri,
            Some(ADMIN_TOKEN),
            example_body(&spec, op),
        )
        .await;
        seen.insert(name.clone(), a.status);
        if is_fallback(a.status, &a.json()) || a.status == 405 {
            wrong.push(format!(
                "{name} ({uri}): {}, the route does not exist: {}",
                a.status,
                a.text()
            ));
            continue;
        }
        let expected_refusal = EXPECTED_REFUSALS
            .iter()
            .find(|(m, p, _)| *m == op.method && *p == op.path)
            .map(|r| r.2);
        match expected_refusal {
            Some(code) if a.status != code => wrong.push(format!(
                "{name}: expected {code} with the documented example, got {}: {}",
                a.status,
                a.text()
            )),
            None if !(200..300).contains(&a.status) => wrong.push(format!(
                "{name}: the documented example was refused with {}: {}",
                a.status,
                a.text()
            )),
            _ => {}
        }
        wrong.extend(undocumented(&spec, op, &a));
    }
    assert!(
        wrong.is_empty(),
        "{}\n\nstatuses: {seen:#?}",
        wrong.join("\n")
    );
    assert_eq!(seen.len(), routes().len(), "every operation was sent");

    // And what is not documented is the fallback.
    for (method, uri) in [
        ("GET", "/api/not-documented"),
        ("POST", "/api/estates/sample/nothing"),
    ] {
        let a = send(&app, method, uri, Some(ADMIN_TOKEN), None).await;
        assert!(
            is_fallback(a.status, &a.json()),
            "{method} {uri}: expected the fallback, got {} {}",
            a.status,
            a.text()
        );
    }
}

/// Refusals, each answered as documented: without credentials, with too
/// weak a role, and with bad input of every kind the handlers check.
#[tokio::test]
async fn refusals_are_answered_as_documented() {
    let (app, db, _dir) = router().await;
    let spec = spec();
    let ops = operations(&spec);
    let mut wrong = Vec::new();

    // Every signed-in route without credentials: 401; with a viewer token,
    // every operator and admin route: 403.
    let viewer = "berth_openapi_test_viewer_token_0123456789abcdef";
    let conn = berth::db::Db::connect(&db.url, 1).await.expect("connect");
    berth::store::insert_token(
        &conn,
        berth::store::NewToken {
            id: "viewer",
            hash: &berth::auth::sha256_hex(viewer),
            name: "viewer",
            role: berth::auth::Role::Viewer,
            estate_id: None,
            created_by: "test",
            may_create_clusters: false,
            may_sync_services: false,
            clusters: None,
        },
        0,
    )
    .await
    .expect("insert token");
    for op in &ops {
        let access = get_str(op.op, "x-berth-access").unwrap_or("");
        if access == "public" {
            continue;
        }
        let uri = example_uri(&spec, op);
        let cases = [(None, 401)]
            .into_iter()
            .chain((access != "viewer").then_some((Some(viewer), 403)));
        for (token, expected) in cases {
            let a = send(&app, &op.method, &uri, token, example_body(&spec, op)).await;
            if a.status != expected {
                wrong.push(format!(
                    "{}: expected {expected}, got {}: {}",
                    op.name(),
                    a.status,
                    a.text()
                ));
            }
            wrong.extend(undocumented(&spec, op, &a));
        }
    }

    // A token scoped to one estate: other estates and routes are 403, the
    // list shows its estate only.
    let scoped = "berth_openapi_test_scoped_token_0123456789abcdef";
    berth::store::insert_token(
        &conn,
        berth::store::NewToken {
            id: "scoped",
            hash: &berth::auth::sha256_hex(scoped),
            name: "scoped",
            role: berth::auth::Role::Operator,
            estate_id: Some("sample"),
            created_by: "test",
            may_create_clusters: false,
            may_sync_services: false,
            clusters: None,
        },
        0,
    )
    .await
    .expect("insert token");
    for (method, path, uri, expected) in [
        ("GET", "/api/estates/{id}", "/api/estates/other", 403),
        ("GET", "/api/estates/{id}", "/api/estates/sample", 200),
        ("POST", "/api/estates", "/api/estates", 403),
        ("GET", "/api/estates", "/api/estates", 200),
    ] {
        let a = send(&app, method, uri, Some(scoped), None).await;
        if a.status != expected {
            wrong.push(format!(
                "scoped token, {method} {uri}: expected {expected}, got {}: {}",
                a.status,
                a.text()
            ));
        }
        wrong.extend(undocumented(&spec, find_op(&ops, method, path), &a));
        if uri == "/api/estates" && method == "GET" {
            assert_eq!(a.json()["estates"].as_array().map(Vec::len), Some(1));
        }
    }

    // Bad input, route by route.
    let json =
        |v: serde_json::Value| Some(("application/json".to_string(), v.to_string().into_bytes()));
    let sample = std::fs::read(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples/estates/sample.json"),
    )
    .expect("sample estate");
    let probes: Vec<(&str, &str, &str, Payload, u16)> = vec![
        (
            "GET",
            "/api/estates/{id}/advice",
            "/api/estates/sample/advice?now=2026-11-30T04:05:00Z&why=true",
            None,
            200,
        ),
        (
            "GET",
            "/api/estates/{id}/advice",
            "/api/estates/sample/advice?now=yesterday",
            None,
            400,
        ),
        (
            "GET",
            "/api/estates/{id}/advice",
            "/api/estates/sample/advice?why=1",
            None,
            400,
        ),
        (
            "GET",
            "/api/estates/{id}/advice",
            "/api/estates/nope/advice",
            None,
            404,
        ),
        (
            "GET",
            "/api/estates/{id}/place/{service}",
            "/api/estates/sample/place/nope",
            None,
            404,
        ),
        (
            "GET",
            "/api/estates/{id}/file",
            "/api/estates/sample/file?format=xml",
            None,
            400,
        ),
        (
            "GET",
            "/api/estates/{id}/file",
            "/api/estates/sample/file?format=yaml",
            None,
            200,
        ),
        (
            "POST",
            "/api/estates",
            "/api/estates?id=Bad",
            Some(("application/json".into(), sample.clone())),
            400,
        ),
        (
            "POST",
            "/api/estates",
            "/api/estates?id=sample",
            Some(("application/json".into(), sample.clone())),
            409,
        ),
        (
            "POST",
            "/api/estates",
            "/api/estates",
            json(
                serde_json::json!({"schema": 1, "name": "x", "sites": [], "clusters": [], "services": [{"id": "a"}]}),
            ),
            422,
        ),
        (
            "PUT",
            "/api/estates/{id}/file",
            "/api/estates/sample/file",
            Some(("application/yaml".into(), b"schema: 1\nname: [".to_vec())),
            422,
        ),
        (
            "PUT",
            "/api/estates/{id}/policy",
            "/api/estates/sample/policy",
            json(serde_json::json!({"headroom_threshold": 1.5})),
            422,
        ),
        (
            "PUT",
            "/api/estates/{id}/policy",
            "/api/estates/sample/policy",
            Some(("application/json".into(), b"{bad".to_vec())),
            400,
        ),
        (
            "POST",
            "/api/estates/{id}/facts",
            "/api/estates/sample/facts",
            json(
                serde_json::json!({"updates": [{"fact": "cpu_free", "cluster": "c-fra-9", "value": 1, "class": "measured"}]}),
            ),
            422,
        ),
        (
            "POST",
            "/api/estates/{id}/facts",
            "/api/estates/sample/facts",
            Some(("application/json".into(), b"{\"updates\": [".to_vec())),
            400,
        ),
        (
            "POST",
            "/api/estates/{id}/whatif",
            "/api/estates/sample/whatif",
            json(serde_json::json!({"schema": 1, "name": "x", "steps": [{"evacuate": "c-par-9"}]})),
            422,
        ),
        (
            "PUT",
            "/api/estates/{id}/scenarios/{name}",
            "/api/estates/sample/scenarios/Bad%20Name",
            json(serde_json::json!({"schema": 1, "name": "x", "steps": []})),
            400,
        ),
        (
            "POST",
            "/api/estates/{id}/compare",
            "/api/estates/sample/compare",
            json(serde_json::json!({"responses": {"baseline": []}})),
            400,
        ),
        (
            "POST",
            "/api/estates/{id}/compare",
            "/api/estates/sample/compare",
            json(serde_json::json!({"responses": {"broken": "no"}})),
            200,
        ),
        (
            "POST",
            "/api/estates/{id}/whatif",
            "/api/estates/sample/whatif",
            Some(("application/json".into(), vec![b' '; (1 << 20) + 1])),
            413,
        ),
        (
            "POST",
            "/api/users",
            "/api/users",
            json(serde_json::json!({"name": "bob", "role": "viewer", "password": "short"})),
            400,
        ),
        (
            "POST",
            "/api/tokens",
            "/api/tokens",
            json(serde_json::json!({"name": "x", "role": "admin", "estate": "sample"})),
            400,
        ),
        (
            "POST",
            "/api/session",
            "/api/session",
            Some(("text/plain".into(), b"{}".to_vec())),
            400,
        ),
        (
            "DELETE",
            "/api/users/{name}",
            "/api/users/nobody",
            None,
            404,
        ),
        // External deciders. Every field wrong at once: one 422.
        (
            "POST",
            "/api/deciders",
            "/api/deciders",
            json(
                serde_json::json!({"name": "Bad Name", "url": "ftp://x", "timeout_ms": 30000, "interval_s": 10}),
            ),
            422,
        ),
        (
            "POST",
            "/api/deciders",
            "/api/deciders",
            json(serde_json::json!({"name": "x", "timeout_ms": 5000})),
            400,
        ),
        // Disabled: a run makes no call, so nothing leaves the test.
        (
            "POST",
            "/api/deciders",
            "/api/deciders",
            json(
                serde_json::json!({"name": "probe", "url": "https://probe.invalid/", "timeout_ms": 1000, "enabled": false}),
            ),
            201,
        ),
        (
            "POST",
            "/api/deciders",
            "/api/deciders",
            json(
                serde_json::json!({"name": "probe", "url": "https://probe.invalid/", "timeout_ms": 1000}),
            ),
            409,
        ),
        (
            "GET",
            "/api/deciders/{name}",
            "/api/deciders/nobody",
            None,
            404,
        ),
        (
            "PUT",
            "/api/deciders/{name}",
            "/api/deciders/probe",
            json(
                serde_json::json!({"name": "other", "url": "https://probe.invalid/", "timeout_ms": 1000, "generate_secret": true}),
            ),
            422,
        ),
        (
            "POST",
            "/api/deciders/{name}/secret",
            "/api/deciders/probe/secret",
            json(serde_json::json!({"overlap_s": -5})),
            422,
        ),
        (
            "POST",
            "/api/deciders/{name}/secret",
            "/api/deciders/nobody/secret",
            None,
            404,
        ),
        (
            "POST",
            "/api/estates/{id}/deciders/{name}/runs",
            "/api/estates/sample/deciders/probe/runs",
            None,
            200,
        ),
        (
            "GET",
            "/api/estates/{id}/deciders/{name}/runs",
            "/api/estates/sample/deciders/probe/runs?limit=1",
            None,
            200,
        ),
        (
            "GET",
            "/api/estates/{id}/deciders/{name}/runs",
            "/api/estates/sample/deciders/probe/runs?limit=0",
            None,
            400,
        ),
        (
            "GET",
            "/api/estates/{id}/advice-snapshots",
            "/api/estates/sample/advice-snapshots?limit=201",
            None,
            400,
        ),
        (
            "POST",
            "/api/estates/{id}/compare",
            "/api/estates/sample/compare",
            json(serde_json::json!({"external": ["probe"]})),
            200,
        ),
        (
            "POST",
            "/api/estates/{id}/compare",
            "/api/estates/sample/compare",
            json(serde_json::json!({"external": ["nobody"]})),
            400,
        ),
        (
            "POST",
            "/api/estates/{id}/compare",
            "/api/estates/sample/compare",
            json(serde_json::json!({"external": ["probe", "probe"]})),
            400,
        ),
        (
            "POST",
            "/api/estates/{id}/compare",
            "/api/estates/sample/compare",
            json(serde_json::json!({"external": ["probe"], "responses": {"probe": []}})),
            400,
        ),
        (
            "POST",
            "/api/estates/{id}/compare",
            "/api/estates/sample/compare",
            json(
                serde_json::json!({"external": (0..17).map(|i| format!("d{i}")).collect::<Vec<_>>()}),
            ),
            400,
        ),
        (
            "DELETE",
            "/api/deciders/{name}",
            "/api/deciders/probe",
            None,
            204,
        ),
    ];
    for (method, path, uri, body, expected) in probes {
        let op = find_op(&ops, method, path);
        let a = send(&app, method, uri, Some(ADMIN_TOKEN), body).await;
        if a.status != expected {
            wrong.push(format!(
                "{method} {uri}: expected {expected}, got {}: {}",
                a.status,
                a.text()
            ));
        }
        wrong.extend(undocumented(&spec, op, &a));
    }

    // The credential routes' rate limit: 429 with Retry-After.
    let op = find_op(&ops, "POST", "/api/session");
    let mut limited = None;
    for _ in 0..20 {
        let a = send(
            &app,
            "POST",
            "/api/session",
            None,
            json(serde_json::json!({"token": "nope"})),
        )
        .await;
        if a.status == 429 {
            limited = Some(a);
            break;
        }
    }
    match limited {
        Some(a) => {
            let retry = a.headers.get("retry-after").and_then(|v| v.to_str().ok());
            if !retry.is_some_and(|s| s.parse::<u64>().is_ok_and(|n| n >= 1)) {
                wrong.push(format!("POST /api/session: 429 with Retry-After {retry:?}"));
            }
            wrong.extend(undocumented(&spec, op, &a));
        }
        None => wrong.push("POST /api/session: 20 attempts, never rate-limited".into()),
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

/// The cookie session as `cookieAuth` and `csrfHeader` describe it.
#[tokio::test]
async fn cookie_sessions_work_as_documented() {
    let (app, _db, _dir) = router().await;
    let spec = spec();
    let ops = operations(&spec);
    let body = serde_json::json!({ "token": ADMIN_TOKEN }).to_string();
    let a = send(
        &app,
        "POST",
        "/api/session",
        None,
        Some(("application/json".into(), body.into_bytes())),
    )
    .await;
    assert_eq!(a.status, 200, "{}", a.text());
    let wrong = undocumented(&spec, find_op(&ops, "POST", "/api/session"), &a);
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
    let cookie = a.headers["set-cookie"].to_str().unwrap().to_string();
    for attr in [
        "berth_session=",
        "Path=/",
        "HttpOnly",
        "SameSite=Lax",
        "Max-Age=43200",
    ] {
        assert!(cookie.contains(attr), "Set-Cookie {cookie:?} lacks {attr}");
    }
    assert!(
        !cookie.contains("Secure"),
        "Secure only with --secure-cookies"
    );
    let session = cookie.split(';').next().unwrap().to_string();
    let csrf = a.json()["csrf_token"].as_str().unwrap().to_string();

    let with_cookie = |method: &str, uri: &str, csrf: Option<&str>| {
        let mut req = Request::builder()
            .method(method)
            .uri(uri)
            .header("cookie", &session);
        if let Some(c) = csrf {
            req = req.header("x-csrf-token", c);
        }
        app.clone().oneshot(req.body(Body::empty()).unwrap())
    };
    // Reading needs no CSRF token, and shows it.
    let resp = with_cookie("GET", "/api/session", None).await.unwrap();
    assert_eq!(resp.status(), 200);
    let bytes = axum::body::to_bytes(resp.into_body(), 1 << 20)
        .await
        .unwrap();
    let me: serde_json::Value = serde_json::from_slice(&bytes).unwrap();
    assert_eq!(me["csrf_token"], csrf.as_str());
    // Changing state needs it: refused without, or with a wrong one.
    for bad in [None, Some("wrong")] {
        let resp = with_cookie("DELETE", "/api/session", bad).await.unwrap();
        assert_eq!(resp.status(), 403, "CSRF header {bad:?}");
    }
    let resp = with_cookie("DELETE", "/api/session", Some(&csrf))
        .await
        .unwrap();
    assert_eq!(resp.status(), 204);
    // Signed out: the cookie no longer counts.
    let resp = with_cookie("GET", "/api/session", None).await.unwrap();
    assert_eq!(resp.status(), 401);
}

/// The driver's surfaces before and after passes, as documented: health
/// with no pass yet (`last_pass_at` null), then two passes over a changed
/// estate (two snapshots, only the newest with its result) and a backoff.
#[tokio::test]
async fn driver_surfaces_answer_as_documented_before_and_after_passes() {
    let (state, _db, _dir) = prepared(support::Backend::Sqlite, Some(60)).await;
    let cfg = state.driver.clone().expect("the driver is configured");
    let app = berth::http::app(state.clone());
    let spec = spec();
    let ops = operations(&spec);
    let mut wrong = Vec::new();
    let get = |uri: &'static str, path: &'static str| {
        let (app, spec, ops) = (&app, &spec, &ops);
        async move {
            let a = send(app, "GET", uri, Some(ADMIN_TOKEN), None).await;
            assert_eq!(a.status, 200, "{uri}: {}", a.text());
            (a.json(), undocumented(spec, find_op(ops, "GET", path), &a))
        }
    };

    let (health, errs) = get("/api/driver", "/api/driver").await;
    wrong.extend(errs);
    assert_eq!(health["enabled"], true);
    assert_eq!(health["every_s"], 60);
    assert!(health["last_pass_at"].is_null(), "{health}");
    assert!(health["last_pass"].is_null(), "{health}");
    assert_eq!(
        health["backlog"], 1,
        "the seeded estate has no snapshot yet"
    );

    let pass = |state: &berth::AppState| {
        let (state, cfg) = (state.clone(), cfg.clone());
        async move {
            berth::external::driver::pass(&state.external(), &cfg)
                .await
                .expect("a pass")
                .expect("no other pass runs")
        }
    };
    assert_eq!(pass(&state).await.evaluated, 1);
    // A new policy makes the estate stale again: a second snapshot.
    let put_policy = find_op(&ops, "PUT", "/api/estates/{id}/policy");
    let a = send(
        &app,
        "PUT",
        "/api/estates/sample/policy",
        Some(ADMIN_TOKEN),
        example_body(&spec, put_policy),
    )
    .await;
    assert!((200..300).contains(&a.status), "{}", a.text());
    assert_eq!(pass(&state).await.evaluated, 1);
    // A subject held back, as a failing decider would leave it.
    berth::store::put_backoff(
        &state.db,
        &berth::store::Backoff {
            subject: "decider:ranker@sample".into(),
            kind: "failed".into(),
            attempts: 2,
            until_at: berth::auth::now_s() + 60,
            last_error: "the decider answered HTTP 500; only 2xx carries proposals".into(),
        },
    )
    .await
    .expect("backoff");

    let (health, errs) = get("/api/driver", "/api/driver").await;
    wrong.extend(errs);
    assert!(health["last_pass_at"].is_string(), "{health}");
    assert_eq!(health["last_pass"]["evaluated"], 1, "{health}");
    assert_eq!(health["backoffs"].as_array().map(Vec::len), Some(1));

    let (snaps, errs) = get(
        "/api/estates/sample/advice-snapshots",
        "/api/estates/{id}/advice-snapshots",
    )
    .await;
    wrong.extend(errs);
    let snaps = snaps["snapshots"].as_array().cloned().unwrap_or_default();
    assert_eq!(snaps.len(), 2, "{snaps:?}");
    assert!(snaps[0]["result"].is_object(), "the newest has its result");
    assert!(snaps[1]["result"].is_null(), "older ones do not");
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

/// `POST …/runs` answers with the run it just made, as documented, whatever
/// evaluation time it was asked for; `started_at` is when it ran (the wall
/// clock), not that time. On both backends: the run's id comes back from
/// its `INSERT`.
#[tokio::test]
async fn a_run_answers_with_the_run_it_made() {
    for backend in [support::Backend::Sqlite, support::Backend::Postgres] {
        a_run_answers_with_the_run_it_made_on(backend).await;
    }
}

async fn a_run_answers_with_the_run_it_made_on(backend: support::Backend) {
    let (app, _db, _dir) = router_on(backend).await;
    let spec = spec();
    let ops = operations(&spec);
    let op = find_op(&ops, "POST", "/api/estates/{id}/deciders/{name}/runs");
    let body = serde_json::json!({"name": "probe", "url": "https://probe.invalid/", "timeout_ms": 1000, "enabled": false});
    let a = send(
        &app,
        "POST",
        "/api/deciders",
        Some(ADMIN_TOKEN),
        Some(("application/json".into(), body.to_string().into_bytes())),
    )
    .await;
    assert_eq!(a.status, 201, "{}", a.text());
    let mut ids = Vec::new();
    for now in ["2026-12-01T00:00:00Z", "2026-11-01T00:00:00Z"] {
        let uri = format!("/api/estates/sample/deciders/probe/runs?now={now}");
        let a = send(&app, "POST", &uri, Some(ADMIN_TOKEN), None).await;
        assert_eq!(a.status, 200, "{}", a.text());
        let wrong = undocumented(&spec, op, &a);
        assert!(wrong.is_empty(), "{}", wrong.join("\n"));
        let run = &a.json()["run"];
        assert_ne!(run["started_at"], now, "{run}");
        assert_eq!(run["outcome"], "failed", "{run}");
        assert_eq!(run["entry"]["error"]["code"], "disabled", "{run}");
        ids.push(run["id"].as_i64().expect("an id"));
    }
    assert!(ids[1] > ids[0], "two runs, two ids: {ids:?}");
}

/// The facts of a contract that a client relies on: every operation
/// (method, path, operationId, in order), its parameters, request body
/// schemas and answers (status, schema per content type, header names),
/// and the same of the shared parameters, bodies and answers, with the
/// names of the published schemas. Descriptions and examples are left
/// out: they are words, which may be reworded.
fn contract_facts(doc: &serde_json::Value) -> serde_json::Value {
    use serde_json::{json, Map, Value as J};
    let param = |p: &J| -> J {
        if let Some(r) = p.get("$ref") {
            return json!({"$ref": r});
        }
        json!({"name": p.get("name"), "in": p.get("in"), "required": p.get("required"), "schema": p.get("schema")})
    };
    let content = |c: Option<&J>| -> J {
        let mut out = Map::new();
        if let Some(J::Object(c)) = c {
            for (ct, media) in c {
                out.insert(ct.clone(), media.get("schema").cloned().unwrap_or(J::Null));
            }
        }
        J::Object(out)
    };
    let body = |b: &J| -> J {
        if let Some(r) = b.get("$ref") {
            return json!({"$ref": r});
        }
        json!({"required": b.get("required").cloned().unwrap_or(J::Bool(false)), "content": content(b.get("content"))})
    };
    let answer = |a: &J| -> J {
        if let Some(r) = a.get("$ref") {
            return json!({"$ref": r});
        }
        let mut headers: Vec<String> = a
            .get("headers")
            .and_then(J::as_object)
            .map(|h| h.keys().cloned().collect())
            .unwrap_or_default();
        headers.sort();
        json!({"content": content(a.get("content")), "headers": headers})
    };
    let mut ops = Vec::new();
    for (path, item) in doc["paths"].as_object().expect("paths") {
        for (method, op) in item.as_object().expect("a path item") {
            let mut answers = Map::new();
            for (status, a) in op["responses"].as_object().expect("responses") {
                answers.insert(status.clone(), answer(a));
            }
            ops.push(json!({
                "operationId": op["operationId"],
                "method": method,
                "path": path,
                "parameters": op.get("parameters").and_then(J::as_array).map(|ps| ps.iter().map(param).collect::<Vec<_>>()).unwrap_or_default(),
                "requestBody": op.get("requestBody").map(body),
                "responses": answers,
            }));
        }
    }
    // By path and method: the order is the route table's, checked above.
    ops.sort_by_key(|o| (o["path"].to_string(), o["method"].to_string()));
    let c = &doc["components"];
    let each = |kind: &str, f: &dyn Fn(&J) -> J| -> J {
        J::Object(
            c[kind]
                .as_object()
                .map(|m| m.iter().map(|(k, v)| (k.clone(), f(v))).collect())
                .unwrap_or_default(),
        )
    };
    let mut schemas: Vec<&String> = c["schemas"].as_object().expect("schemas").keys().collect();
    schemas.sort();
    json!({
        "operations": ops,
        "shared": {
            "parameters": each("parameters", &param),
            "requestBodies": each("requestBodies", &body),
            "responses": each("responses", &answer),
            "schemas": schemas,
        }
    })
}

/// The contract written from the endpoint declarations publishes what the
/// hand-kept YAML words did (issue 39): the same operations, parameters,
/// request bodies and answers, fact for fact, as
/// `fixtures/openapi-operations.json`, taken from `docs/api.openapi.json`
/// as it was before the words moved into Rust. A change of any of these
/// facts is a change of the contract: make it on purpose, then rewrite
/// the fixture (`UPDATE_EXPECT=1`).
#[test]
fn the_contract_publishes_the_same_operations_as_before() {
    let written = berth::http::openapi_text()
        .unwrap_or_else(|problems| panic!("the spec cannot be written:\n{}", problems.join("\n")));
    let doc: serde_json::Value = serde_json::from_str(&written).expect("the spec is JSON");
    let facts = contract_facts(&doc);
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/openapi-operations.json");
    if std::env::var_os("UPDATE_EXPECT").is_some() {
        let mut text = serde_json::to_string_pretty(&facts).unwrap();
        text.push('\n');
        std::fs::write(&path, text).unwrap();
        return;
    }
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("reading {}: {e}", path.display()));
    let before: serde_json::Value = serde_json::from_str(&text).expect("the fixture is JSON");
    let (a, b) = (&before["operations"], &facts["operations"]);
    assert_eq!(
        a.as_array().map(Vec::len),
        b.as_array().map(Vec::len),
        "how many operations"
    );
    for (was, is) in a.as_array().unwrap().iter().zip(b.as_array().unwrap()) {
        assert_eq!(was, is, "operation {}", was["operationId"]);
    }
    for kind in ["parameters", "requestBodies", "responses", "schemas"] {
        assert_eq!(
            before["shared"][kind], facts["shared"][kind],
            "shared {kind}"
        );
    }
}
