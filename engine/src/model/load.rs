//! Loading an estate file: text → raw shapes → validated [`Estate`].
//!
//! Two stages, so that each rule is written once:
//!
//! 1. **Shape**: the text becomes [`RawEstate`] — right JSON types, no
//!    unknown fields, required fields present. The fast path deserialises
//!    JSON straight into the raw types; only when that fails (or for YAML)
//!    does the slower walker over a `serde_json::Value` run, which collects
//!    *every* shape error with its path instead of stopping at the first.
//! 2. **Meaning**: [`validate`] turns the raw shapes into the model —
//!    ids, references, duplicates, ranges, classes, times — collecting every
//!    error with its JSON pointer.
//!
//! Errors come in those two rounds: a file with shape errors reports all of
//! them (and no meaning errors, which would mostly be echoes of the shape
//! errors). Loading is all-or-nothing; for JSON each error gets its line.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;

use serde::de::{Deserializer, MapAccess, Visitor};
use serde::Deserialize;
use serde_json::{Map, Value};

use crate::estate::{
    parse_time, Cluster, Constraints, Estate, EstateError, Flow, Format, Health, RttFact, Service,
    Site, Told, Traffic, TrafficDefault, Workload, NOT_STATED,
};
use crate::fact::{Class, Fact};
use crate::json_shape::describe;

mod meaning;
mod raw;
mod walk;
use meaning::*;
use raw::*;
use walk::*;

// ---------------------------------------------------------------------------
// Entry point.

/// Parse and validate an estate file. On any error, every error found.
pub fn load(text: &str, format: Format) -> Result<Estate, Vec<EstateError>> {
    let result = match format {
        Format::Json => match crate::strict::from_str::<RawEstate>(text) {
            Ok(raw) => validate(raw, &Broken::default()),
            Err(fast) => {
                let value: Value = serde_json::from_str(text).map_err(|e| {
                    vec![EstateError {
                        path: String::new(),
                        line: Some(e.line()),
                        message: format!("not valid JSON: {e}"),
                    }]
                })?;
                match slow(&value) {
                    // The walker found nothing serde did: report serde's.
                    Ok(_) => Err(vec![EstateError {
                        path: String::new(),
                        line: Some(fast.line()),
                        message: fast.to_string(),
                    }]),
                    Err(errors) => Err(errors),
                }
            }
        },
        Format::Yaml => slow(&yaml_value(text)?),
    };
    result.map_err(|mut errors| {
        if format == Format::Json {
            for e in &mut errors {
                if e.line.is_none() {
                    e.line = crate::locate::line_of(text, &e.path);
                }
            }
            // In file order, so they read top to bottom like the file.
            errors.sort_by_key(|e| e.line.unwrap_or(usize::MAX));
        }
        errors
    })
}

/// YAML text as a JSON value, as an estate is read: `.nan`, `.inf` and
/// `-.inf` refused with their paths (see [`non_finite_numbers`]), a
/// syntax error with its line. For readers of a YAML estate other than
/// [`load`] (the CLI's import reads the estate it merges into).
pub fn yaml_value(text: &str) -> Result<Value, Vec<EstateError>> {
    let non_finite = non_finite_numbers(text);
    if !non_finite.is_empty() {
        return Err(non_finite);
    }
    serde_yaml::from_str(text).map_err(|e| {
        vec![EstateError {
            path: String::new(),
            line: e.location().map(|l| l.line()),
            message: format!("not valid YAML: {e}"),
        }]
    })
}

/// YAML's `.nan`, `.inf` and `-.inf`, each with its path. JSON has no word
/// for them: converted to a JSON value they would become `null`, which
/// reads as *unknown* — a capacity or an RTT silently dropped. Refused
/// instead, before the conversion. (JSON text cannot spell them at all:
/// serde_json refuses `NaN` and numbers out of range.) Text that is not
/// valid YAML has none; the conversion reports it.
fn non_finite_numbers(text: &str) -> Vec<EstateError> {
    fn walk(v: &serde_yaml::Value, path: String, out: &mut Vec<EstateError>) {
        match v {
            serde_yaml::Value::Number(n) => {
                let word = match n.as_f64() {
                    Some(f) if f.is_nan() => ".nan",
                    Some(f) if f == f64::INFINITY => ".inf",
                    Some(f) if f == f64::NEG_INFINITY => "-.inf",
                    _ => return,
                };
                out.push(EstateError {
                    path,
                    line: None,
                    message: format!("expected a finite number, found {word}"),
                });
            }
            serde_yaml::Value::Sequence(items) => {
                for (i, item) in items.iter().enumerate() {
                    walk(item, format!("{path}/{i}"), out);
                }
            }
            serde_yaml::Value::Mapping(map) => {
                for (key, item) in map {
                    let key = match key {
                        serde_yaml::Value::String(s) => s.clone(),
                        other => serde_yaml::to_string(other)
                            .map(|s| s.trim_end().to_string())
                            .unwrap_or_default(),
                    };
                    walk(item, format!("{path}/{}", escape(&key)), out);
                }
            }
            serde_yaml::Value::Tagged(tagged) => walk(&tagged.value, path, out),
            serde_yaml::Value::Null | serde_yaml::Value::Bool(_) | serde_yaml::Value::String(_) => {
            }
        }
    }
    let mut out = Vec::new();
    if let Ok(doc) = serde_yaml::from_str::<serde_yaml::Value>(text) {
        walk(&doc, String::new(), &mut out);
    }
    out
}

/// The slow path: shape errors from the walker, then meaning errors on
/// whatever was readable, all in one list.
fn slow(value: &Value) -> Result<Estate, Vec<EstateError>> {
    let mut w = Walker::default();
    let raw = w.estate(value);
    match raw {
        Some(raw) if w.errors.is_empty() => validate(raw, &w.broken),
        Some(raw) => {
            let mut errors = w.errors;
            if let Err(meaning) = validate(raw, &w.broken) {
                errors.extend(meaning);
            }
            Err(errors)
        }
        None => Err(w.errors),
    }
}

fn escape(key: &str) -> String {
    key.replace('~', "~0").replace('/', "~1")
}
