//! The policy table (`berth_engine::policy::FIELDS`) is the one list of
//! policy fields; the documents that describe them are checked against it:
//!
//! - `docs/advice.md` §8: the region between `<!-- policy-table:begin -->`
//!   and `<!-- policy-table:end -->` is exactly what the table renders
//!   (`UPDATE_DOCS=1 cargo test -p berth-engine --test policy_table`
//!   rewrites it), and §9's placement defaults agree with it;
//! - `docs/api.openapi.json`: the `Policy` schema has exactly the table's
//!   fields, each with its type, default, minimum and maximum.

use std::path::PathBuf;

use berth_engine::policy::{Kind, PolicyField, FIELDS};

const BEGIN: &str = "<!-- policy-table:begin -->";
const END: &str = "<!-- policy-table:end -->";
const UPDATE: &str = "UPDATE_DOCS=1 cargo test -p berth-engine --test policy_table";

fn docs(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../docs")
        .join(name)
}

/// `10⁶` for powers of ten from 10⁴ up, `86 400` for other large whole
/// numbers, Rust's shortest form (`0.15`, `1000`) for the rest.
fn number(v: f64) -> String {
    if v.fract() != 0.0 || v.abs() < 1e4 {
        return format!("{v}");
    }
    let digits = format!("{v}");
    if let Some(zeros) = digits.strip_prefix('1') {
        if zeros.chars().all(|c| c == '0') {
            const SUP: [char; 10] = ['⁰', '¹', '²', '³', '⁴', '⁵', '⁶', '⁷', '⁸', '⁹'];
            let exp = zeros.len().to_string();
            return format!(
                "10{}",
                exp.chars()
                    .map(|d| SUP[d as usize - '0' as usize])
                    .collect::<String>()
            );
        }
    }
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i) % 3 == 0 {
            out.push(' ');
        }
        out.push(c);
    }
    out
}

/// A whole number of seconds the way people say it: `15 min`, `1 day`.
fn duration(s: f64) -> Option<String> {
    let s = s as i64;
    let (n, unit) = [(86_400, "day"), (3_600, "h"), (60, "min")]
        .into_iter()
        .find(|(u, _)| s > 0 && s % u == 0)
        .map(|(u, name)| (s / u, name))?;
    Some(match unit {
        "day" if n != 1 => format!("{n} days"),
        _ => format!("{n} {unit}"),
    })
}

fn default_cell(f: &PolicyField) -> String {
    match (f.unit, duration(f.default)) {
        ("seconds", Some(d)) => format!("{} ({d})", number(f.default)),
        _ => number(f.default),
    }
}

/// The region of `docs/advice.md` §8, markers included.
fn render() -> String {
    let mut out = format!(
        "{BEGIN}\n<!-- Generated from FIELDS in engine/src/model/policy/fields.rs; do not edit here. \
         After changing the table: {UPDATE} -->\n\n\
         | group | field | unit | default | range (inclusive) | meaning |\n\
         |---|---|---|---|---|---|\n"
    );
    let mut group = None;
    for f in FIELDS {
        let g = if group == Some(f.group) {
            ""
        } else {
            f.group.as_str()
        };
        group = Some(f.group);
        out.push_str(&format!(
            "| {g} | `{}` | {} | {} | {} – {} | {} |\n",
            f.path,
            f.unit,
            default_cell(f),
            number(f.min),
            number(f.max),
            f.meaning
        ));
    }
    out.push_str(END);
    out
}

#[test]
fn advice_md_policy_table_is_what_the_table_renders() {
    let path = docs("advice.md");
    let text = std::fs::read_to_string(&path).expect("docs/advice.md");
    let (Some(start), Some(end)) = (text.find(BEGIN), text.find(END)) else {
        panic!("{} has no {BEGIN} … {END} region", path.display());
    };
    let (before, region, after) = (
        &text[..start],
        &text[start..end + END.len()],
        &text[end + END.len()..],
    );
    let want = render();
    if region == want {
        return;
    }
    if std::env::var_os("UPDATE_DOCS").is_some() {
        std::fs::write(&path, format!("{before}{want}{after}")).expect("write docs/advice.md");
        eprintln!("rewrote the policy table of {}", path.display());
        return;
    }
    panic!(
        "the policy table in {} is not what FIELDS (engine/src/model/policy/fields.rs) renders.\n\
         Update it with: {UPDATE}\n\nwant:\n{want}\n\nhave:\n{region}",
        path.display()
    );
}

#[test]
fn advice_md_placement_defaults_agree_with_the_table() {
    // §9 explains each placement weight in its own table (field, in the
    // formula, unit, default, why); its default column must be the table's.
    let text = std::fs::read_to_string(docs("advice.md")).expect("docs/advice.md");
    for f in FIELDS.iter().filter(|f| f.path.starts_with("placement.")) {
        let name = f.path.trim_start_matches("placement.");
        let row = text
            .lines()
            .find(|l| l.starts_with(&format!("| `{name}` |")))
            .unwrap_or_else(|| panic!("docs/advice.md §9 has no row for `{name}`"));
        let cells: Vec<&str> = row.split('|').map(str::trim).collect();
        let default: f64 = cells[4]
            .replace(' ', "")
            .parse()
            .unwrap_or_else(|e| panic!("§9 `{name}` default {:?}: {e}", cells[4]));
        assert_eq!(default, f.default, "docs/advice.md §9 `{name}` default");
    }
}

fn yaml_f64(v: &serde_yaml::Value, what: &str) -> f64 {
    v.as_f64()
        .unwrap_or_else(|| panic!("{what}: expected a number, got {v:?}"))
}

/// Leaves of a schema's `properties`, by dotted path.
fn schema_leaves<'a>(
    schema: &'a serde_yaml::Value,
    prefix: &str,
    out: &mut Vec<(String, &'a serde_yaml::Value)>,
) {
    assert_eq!(
        schema["additionalProperties"],
        serde_yaml::Value::Bool(false),
        "Policy schema {prefix:?}: unknown fields are refused, so additionalProperties must be false"
    );
    let props = schema["properties"]
        .as_mapping()
        .unwrap_or_else(|| panic!("Policy schema {prefix:?} has no properties"));
    for (k, v) in props {
        let k = k.as_str().expect("property names are strings");
        let path = if prefix.is_empty() {
            k.to_string()
        } else {
            format!("{prefix}.{k}")
        };
        if v.get("properties").is_some() {
            schema_leaves(v, &path, out);
        } else {
            out.push((path, v));
        }
    }
}

#[test]
fn openapi_policy_schema_agrees_with_the_table() {
    let path = docs("api.openapi.json");
    let text = std::fs::read_to_string(&path).expect("docs/api.openapi.json");
    let spec: serde_yaml::Value = serde_yaml::from_str(&text).expect("the spec is JSON");
    let schema = &spec["components"]["schemas"]["Policy"];
    let mut leaves = Vec::new();
    schema_leaves(schema, "", &mut leaves);
    let mut have: Vec<&str> = leaves.iter().map(|(p, _)| p.as_str()).collect();
    let mut want: Vec<&str> = FIELDS.iter().map(|f| f.path).collect();
    have.sort();
    want.sort();
    assert_eq!(have, want, "Policy schema properties vs FIELDS");
    let mut errs = Vec::new();
    for (p, s) in &leaves {
        let f = FIELDS.iter().find(|f| f.path == p).expect("same paths");
        let ty = match f.kind {
            Kind::Number => "number",
            Kind::Integer => "integer",
        };
        if s["type"].as_str() != Some(ty) {
            errs.push(format!("{p}: type {:?}, the table says {ty}", s["type"]));
        }
        for (key, want) in [
            ("default", f.default),
            ("minimum", f.min),
            ("maximum", f.max),
        ] {
            let have = yaml_f64(&s[key], &format!("Policy {p} {key}"));
            if have != want {
                errs.push(format!("{p}: {key} {have}, the table says {want}"));
            }
        }
    }
    assert!(
        errs.is_empty(),
        "{} disagrees with FIELDS (engine/src/model/policy/fields.rs):\n{}",
        path.display(),
        errs.join("\n")
    );
}
