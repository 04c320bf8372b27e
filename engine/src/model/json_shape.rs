//! How a JSON value is named in an error about its shape: "expected a
//! number, found the string \"2\"". One wording for every reader that
//! walks JSON by hand — the estate loader, scenarios, decider responses
//! and the server's importers — and the one way a result becomes bytes
//! ([`to_bytes`]). A leaf: it imports nothing of the crate.

use serde_json::Value;

/// Strings up to this many characters are quoted in full; longer ones are
/// only named, so a message never carries a whole document.
pub const MAX_QUOTED_CHARS: usize = 40;

/// The value as a message names it: `null`, `true`, `the number 7`,
/// `the string "2"` (or `a string` when longer than
/// [`MAX_QUOTED_CHARS`]), `an array`, `an object`.
pub fn describe(v: &Value) -> String {
    match v {
        Value::Null => "null".into(),
        Value::Bool(b) => format!("{b}"),
        Value::Number(n) => format!("the number {n}"),
        Value::String(s) if s.chars().count() <= MAX_QUOTED_CHARS => {
            format!("the string {s:?}")
        }
        Value::String(_) => "a string".into(),
        Value::Array(_) => "an array".into(),
        Value::Object(_) => "an object".into(),
    }
}

/// Every result's bytes: compact JSON, members in declaration order. The
/// JSON front end ([`crate::front`]) and the plan writer both go through
/// here, so the CLI, the server and the browser write the same bytes.
pub fn to_bytes<T: serde::Serialize + ?Sized>(v: &T) -> String {
    serde_json::to_string(v).expect("engine results serialise")
}

/// A result member written from a closed set of words (a term's key, a
/// unit, an RTT derivation), read back with [`known_word`]. An alias and
/// not `&'static str` written out: serde's derive takes a field spelled
/// `&str` for text borrowed from the input, which would tie reading a
/// result to input that lives for ever.
pub type Word = &'static str;

/// Reading a result back: a member the engine writes from a closed set
/// of words (a term's key, a unit, an RTT derivation) as the engine's own
/// `&'static str`. Anything else is refused, naming `what` and the words
/// expected.
pub fn known_word<'de, D: serde::Deserializer<'de>>(
    d: D,
    known: &[&'static str],
    what: &str,
) -> Result<&'static str, D::Error> {
    use serde::de::Error as _;
    let word = <String as serde::Deserialize>::deserialize(d)?;
    known.iter().copied().find(|k| *k == word).ok_or_else(|| {
        D::Error::custom(format!(
            "unknown {what} {word:?}; expected one of {}",
            known
                .iter()
                .map(|k| format!("{k:?}"))
                .collect::<Vec<_>>()
                .join(", ")
        ))
    })
}

/// [`known_word`] of a member that may be `null` (or absent, with
/// `#[serde(default)]`).
pub fn known_word_opt<'de, D: serde::Deserializer<'de>>(
    d: D,
    known: &[&'static str],
    what: &str,
) -> Result<Option<&'static str>, D::Error> {
    use serde::de::Error as _;
    match <Option<String> as serde::Deserialize>::deserialize(d)? {
        None => Ok(None),
        Some(word) => known
            .iter()
            .copied()
            .find(|k| *k == word)
            .map(Some)
            .ok_or_else(|| D::Error::custom(format!("unknown {what} {word:?}"))),
    }
}

#[cfg(test)]
mod tests {
    use super::describe;
    use serde_json::json;

    #[test]
    fn every_json_kind_has_its_words() {
        assert_eq!(describe(&json!(null)), "null");
        assert_eq!(describe(&json!(true)), "true");
        assert_eq!(describe(&json!(false)), "false");
        assert_eq!(describe(&json!(7)), "the number 7");
        assert_eq!(describe(&json!(-3)), "the number -3");
        assert_eq!(describe(&json!(20.5)), "the number 20.5");
        assert_eq!(describe(&json!("2")), r#"the string "2""#);
        assert_eq!(describe(&json!("")), r#"the string """#);
        assert_eq!(describe(&json!("a \"b\"\n")), r#"the string "a \"b\"\n""#);
        // Up to 40 characters (not bytes) are quoted; beyond, only named.
        let forty = "x".repeat(40);
        assert_eq!(describe(&json!(forty)), format!("the string \"{forty}\""));
        let forty_wide = "é".repeat(40);
        assert_eq!(
            describe(&json!(forty_wide)),
            format!("the string \"{forty_wide}\"")
        );
        assert_eq!(describe(&json!("x".repeat(41))), "a string");
        assert_eq!(describe(&json!([])), "an array");
        assert_eq!(describe(&json!([1, "two"])), "an array");
        assert_eq!(describe(&json!({})), "an object");
        assert_eq!(describe(&json!({"a": 1})), "an object");
    }
}
