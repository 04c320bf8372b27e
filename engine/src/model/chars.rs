//! Which characters ids and names may hold.
//!
//! An id is read by people in tables, logs and URLs, and compared by
//! machines byte for byte; a name is only read. Both must look like what
//! they are: a right-to-left override (U+202E) between `cart` and
//! `gnp.exe` makes the id read as `cartexe.png`, a zero-width space (U+200B) makes two ids that look the
//! same differ. So:
//!
//! - **Ids** (sites, clusters, services, links, paths — anything other
//!   records refer to) hold only ASCII letters, digits and `- _ . : / @`,
//!   start with a letter or digit, and are at most [`MAX_ID_CHARS`] long.
//!   That covers Kubernetes names (`boutique/cartservice`), DNS names and
//!   `owner@team` forms while leaving no two ids that look alike.
//! - **Names** (display names, owners, tiers, trust zones, reasons) may be
//!   any Unicode text but never a control, bidirectional-override or
//!   invisible formatting character (the list in [`is_hidden`]).
//!
//! Problems name the character, its code point and its position (1-based,
//! in characters), so the one to fix can be found in any editor.

/// Longest id, in characters: room for `namespace/kind/name` of
/// Kubernetes (63 + 1 + 20 + 1 + 63 = 148 would not fit, but real ones
/// are far shorter; 128 is what the estate format has always allowed).
pub const MAX_ID_CHARS: usize = 128;

/// The punctuation an id may hold besides ASCII letters and digits.
pub const ID_PUNCTUATION: &str = "-_.:/@";

/// What is wrong with `id` as an id, or `None` when it is fine.
pub fn id_problem(id: &str) -> Option<String> {
    let rule = "ids are 1–128 characters of A–Z, a–z, 0–9 and - _ . : / @, starting with a letter or digit";
    if id.is_empty() {
        return Some(format!("invalid id \"\": {rule}"));
    }
    let count = id.chars().count();
    if count > MAX_ID_CHARS {
        return Some(format!("invalid id: {count} characters, {rule}"));
    }
    for (i, c) in id.chars().enumerate() {
        let ok = c.is_ascii_alphanumeric() || (i > 0 && ID_PUNCTUATION.contains(c));
        if !ok {
            return Some(format!(
                "invalid id {}: character {} is {}; {rule}",
                shown(id),
                i + 1,
                describe(c)
            ));
        }
    }
    None
}

/// What is wrong with `text` as a name, or `None` when it is fine.
pub fn name_problem(text: &str) -> Option<String> {
    let (i, c) = text.chars().enumerate().find(|&(_, c)| is_hidden(c))?;
    Some(format!(
        "character {} is {}: names may not hold control, bidirectional or invisible formatting characters",
        i + 1,
        describe(c)
    ))
}

/// A control character, a bidirectional control or an invisible
/// formatting character: what can make text look other than it is.
pub fn is_hidden(c: char) -> bool {
    c.is_control()
        || matches!(c,
            '\u{00AD}'                  // soft hyphen
            | '\u{034F}'                // combining grapheme joiner
            | '\u{061C}'                // Arabic letter mark
            | '\u{115F}' | '\u{1160}'   // Hangul fillers
            | '\u{17B4}' | '\u{17B5}'   // Khmer inherent vowels
            | '\u{180B}'..='\u{180F}'   // Mongolian selectors and vowel separator
            | '\u{200B}'..='\u{200F}'   // zero-width space/joiners, LRM, RLM
            | '\u{2028}'..='\u{202E}'   // line/paragraph separators, embeddings, overrides
            | '\u{2060}'..='\u{206F}'   // word joiner, invisible operators, isolates
            | '\u{3164}'                // Hangul filler
            | '\u{FE00}'..='\u{FE0F}'   // variation selectors
            | '\u{FEFF}'                // zero-width no-break space (BOM)
            | '\u{FFA0}'                // halfwidth Hangul filler
            | '\u{FFF9}'..='\u{FFFB}'   // interlinear annotation
            | '\u{1D173}'..='\u{1D17A}' // musical formatting
            | '\u{E0000}'..='\u{E0FFF}' // tags and variation selectors supplement
        )
}

/// `'x'` for a visible character, its code point for any other.
fn describe(c: char) -> String {
    if is_hidden(c) || c.is_whitespace() {
        format!("U+{:04X}", c as u32)
    } else {
        format!("{c:?} (U+{:04X})", c as u32)
    }
}

/// The id as it may be shown: hidden characters as `\u{…}` escapes.
fn shown(id: &str) -> String {
    let mut out = String::from("\"");
    for c in id.chars() {
        if is_hidden(c) {
            out.push_str(&format!("\\u{{{:04x}}}", c as u32));
        } else if c == '"' || c == '\\' {
            out.push('\\');
            out.push(c);
        } else {
            out.push(c);
        }
    }
    out.push('"');
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_that_look_like_what_they_are_pass() {
        for id in ["cart", "c-fra-1", "boutique/cartservice", "a.b:c@d_e", "X9"] {
            assert_eq!(id_problem(id), None, "{id}");
        }
        assert_eq!(id_problem(&"a".repeat(128)), None);
    }

    #[test]
    fn spoofing_characters_are_named_with_their_position() {
        assert_eq!(
            id_problem("cart\u{202E}gnp").unwrap(),
            "invalid id \"cart\\u{202e}gnp\": character 5 is U+202E; ids are 1–128 characters of A–Z, a–z, 0–9 and - _ . : / @, starting with a letter or digit"
        );
        for bad in [
            "a\u{200B}b",
            "\u{2066}x",
            "my web",
            ".",
            "..",
            "-x",
            "café",
            "",
        ] {
            assert!(id_problem(bad).is_some(), "{bad:?}");
        }
        assert!(id_problem(&"a".repeat(129))
            .unwrap()
            .contains("129 characters"));
        assert_eq!(name_problem("Zürich – west ✓"), None);
        let rlo = name_problem("Paris\u{202E}").unwrap();
        assert!(rlo.starts_with("character 6 is U+202E"), "{rlo}");
        for bad in [
            "a\u{200B}",
            "\u{2066}",
            "x\u{0007}",
            "\u{FEFF}y",
            "t\u{E0041}",
        ] {
            assert!(name_problem(bad).is_some(), "{bad:?}");
        }
    }
}
