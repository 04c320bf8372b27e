//! The YAML documents in `docs/` (the OpenAPI specs) are read by YAML 1.2
//! tools (serde_yaml, most OpenAPI validators) and by YAML 1.1 ones
//! (PyYAML). A plain scalar like `1.0e6` is a number to the first and the
//! string "1.0e6" to the second (YAML 1.1 floats need a '.' and a signed
//! exponent), so a `maximum: 1.0e6` silently stops being a bound there.
//! This test refuses every plain scalar that YAML 1.2 reads as a number and
//! YAML 1.1 does not, and, as the simple rule to write by, every number in
//! exponent notation at all: write `1000000`.
//!
//! It reads the real YAML event stream (libyaml, which serde_yaml is built
//! on), so quoted strings and block text like "0 to 1e12" are not numbers.

use std::mem::MaybeUninit;
use std::path::PathBuf;

use unsafe_libyaml as unsafe_yaml;

/// Every plain (unquoted, non-block) scalar of a YAML text, keys included,
/// with its 1-based line and column.
fn plain_scalars(text: &str) -> Vec<(usize, usize, String)> {
    let mut out = Vec::new();
    // SAFETY: the parser and each event are initialised by libyaml before
    // use and freed after; `text` outlives the parser; a scalar's value is
    // `length` valid bytes until its event is deleted.
    unsafe {
        let mut parser = MaybeUninit::<unsafe_yaml::yaml_parser_t>::uninit();
        assert!(unsafe_yaml::yaml_parser_initialize(parser.as_mut_ptr()).ok);
        let parser = parser.as_mut_ptr();
        unsafe_yaml::yaml_parser_set_input_string(parser, text.as_ptr(), text.len() as _);
        loop {
            let mut event = MaybeUninit::<unsafe_yaml::yaml_event_t>::uninit();
            if !unsafe_yaml::yaml_parser_parse(parser, event.as_mut_ptr()).ok {
                unsafe_yaml::yaml_parser_delete(parser);
                panic!("not YAML (serde_yaml::from_str says where)");
            }
            let event = event.as_mut_ptr();
            let kind = (*event).type_;
            if kind == unsafe_yaml::YAML_SCALAR_EVENT {
                let s = (*event).data.scalar;
                if s.style == unsafe_yaml::YAML_PLAIN_SCALAR_STYLE && s.tag.is_null() {
                    let bytes = std::slice::from_raw_parts(s.value, s.length as usize);
                    let mark = (*event).start_mark;
                    out.push((
                        mark.line as usize + 1,
                        mark.column as usize + 1,
                        String::from_utf8_lossy(bytes).into_owned(),
                    ));
                }
            }
            unsafe_yaml::yaml_event_delete(event);
            if kind == unsafe_yaml::YAML_STREAM_END_EVENT {
                break;
            }
        }
        unsafe_yaml::yaml_parser_delete(parser);
    }
    out
}

/// Strip one leading sign.
fn unsigned(s: &str) -> &str {
    s.strip_prefix(['-', '+']).unwrap_or(s)
}

fn all(s: &str, f: impl Fn(char) -> bool) -> bool {
    !s.is_empty() && s.chars().all(f)
}

/// YAML 1.2 core schema: is this plain scalar an int or a float?
fn yaml12_number(s: &str) -> bool {
    if let Some(h) = s.strip_prefix("0x") {
        return all(h, |c| c.is_ascii_hexdigit());
    }
    if let Some(o) = s.strip_prefix("0o") {
        return all(o, |c| ('0'..='7').contains(&c));
    }
    if matches!(s, ".nan" | ".NaN" | ".NAN") {
        return true;
    }
    let u = unsigned(s);
    if matches!(u, ".inf" | ".Inf" | ".INF") {
        return true;
    }
    // [0-9]+ ( . [0-9]* )? | . [0-9]+ , then ( [eE] [-+]? [0-9]+ )?
    let (mantissa, exp) = match u.find(['e', 'E']) {
        Some(i) => (&u[..i], Some(unsigned(&u[i + 1..]))),
        None => (u, None),
    };
    let mantissa_ok = match mantissa.split_once('.') {
        None => all(mantissa, |c| c.is_ascii_digit()),
        Some(("", frac)) => all(frac, |c| c.is_ascii_digit()),
        Some((int, frac)) => {
            all(int, |c| c.is_ascii_digit()) && frac.chars().all(|c| c.is_ascii_digit())
        }
    };
    mantissa_ok && exp.is_none_or(|e| all(e, |c| c.is_ascii_digit()))
}

/// YAML 1.1 (PyYAML's resolver): is this plain scalar an int or a float?
fn yaml11_number(s: &str) -> bool {
    let digit_ = |c: char| c.is_ascii_digit() || c == '_';
    let u = unsigned(s);
    let int = if let Some(b) = u.strip_prefix("0b") {
        all(b, |c| matches!(c, '0' | '1' | '_'))
    } else if let Some(h) = u.strip_prefix("0x") {
        all(h, |c| c.is_ascii_hexdigit() || c == '_')
    } else if let Some(o) = u.strip_prefix('0') {
        o.chars().all(|c| ('0'..='7').contains(&c) || c == '_')
    } else if u.starts_with(|c: char| c.is_ascii_digit()) {
        // Decimal, or base 60 (`1:30`).
        let mut parts = u.split(':');
        all(parts.next().unwrap_or(""), digit_)
            && parts.all(|p| (1..=2).contains(&p.len()) && all(p, |c| c.is_ascii_digit()))
    } else {
        false
    };
    if int {
        return true;
    }
    if matches!(u, ".inf" | ".Inf" | ".INF") || matches!(s, ".nan" | ".NaN" | ".NAN") {
        return true;
    }
    // [0-9][0-9_]* . [0-9_]* ( [eE] [-+] [0-9]+ )?  (base 60 floats aside)
    let Some((int, rest)) = u.split_once('.') else {
        return false;
    };
    let (frac, exp) = match rest.find(['e', 'E']) {
        Some(i) => (&rest[..i], Some(&rest[i + 1..])),
        None => (rest, None),
    };
    let int_ok = (int.is_empty() && s == u && !frac.is_empty())
        || (int.starts_with(|c: char| c.is_ascii_digit()) && int.chars().all(digit_));
    let exp_ok =
        exp.is_none_or(|e| e.starts_with(['-', '+']) && all(&e[1..], |c| c.is_ascii_digit()));
    int_ok && frac.chars().all(digit_) && exp_ok
}

/// Why a plain scalar is refused, if it is.
fn refusal(s: &str) -> Option<&'static str> {
    if !yaml12_number(s) {
        return None;
    }
    if !yaml11_number(s) {
        return Some("a number to YAML 1.2, a string to YAML 1.1");
    }
    let decimal = !s.starts_with("0x");
    if decimal && s.contains(['e', 'E']) {
        return Some("exponent notation");
    }
    None
}

#[test]
fn the_classifier_agrees_with_both_specs_on_examples() {
    for s in ["1.0e6", "1e6", "1E+6", "12e45", "0o17", "1.0e12"] {
        assert!(yaml12_number(s), "{s}");
        assert!(!yaml11_number(s), "{s}");
        assert!(refusal(s).is_some(), "{s}");
    }
    assert_eq!(refusal("1.0e+6"), Some("exponent notation"));
    for s in [
        "0", "1000000", "-3", "0.5", "1.", ".5", "+2.25", "0x1e", ".inf", "-.inf", ".nan",
    ] {
        assert!(yaml12_number(s), "{s}");
        assert!(yaml11_number(s), "{s}");
        assert_eq!(refusal(s), None, "{s}");
    }
    for s in [
        "sha256:5d1a9e20",
        "1e",
        "e6",
        "1.0e6x",
        "v1",
        "",
        ".",
        "1_000",
        "yes",
        "1:30",
    ] {
        assert!(!yaml12_number(s), "{s}");
        assert_eq!(refusal(s), None, "{s}");
    }
}

#[test]
fn docs_yaml_numbers_read_the_same_in_yaml_1_1_and_1_2() {
    // The published YAML documents (docs/api.openapi.json is JSON, its
    // numbers written plainly; its words are Rust since the endpoints are
    // declared in berth-api).
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..");
    let mut files: Vec<PathBuf> = std::fs::read_dir(root.join("docs"))
        .unwrap_or_else(|e| panic!("docs/: {e}"))
        .map(|e| e.expect("an entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "yaml" || e == "yml"))
        .collect();
    files.sort();
    assert!(
        files
            .iter()
            .any(|p| p.ends_with("decider-webhook.openapi.yaml")),
        "the decider spec is scanned"
    );
    let mut errs = Vec::new();
    for path in &files {
        let text = std::fs::read_to_string(path).expect("read");
        for (line, col, s) in plain_scalars(&text) {
            if let Some(why) = refusal(&s) {
                let plain = s.parse::<f64>().map(|v| format!("{v}")).unwrap_or_default();
                errs.push(format!(
                    "{}:{line}:{col}: `{s}`: {why}; write it plainly{}",
                    path.strip_prefix(&root).unwrap_or(path).display(),
                    if plain.is_empty() {
                        String::new()
                    } else {
                        format!(" ({plain})")
                    }
                ));
            }
        }
    }
    assert!(errs.is_empty(), "{}", errs.join("\n"));
}
