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
//!   invisible formatting character (by Unicode property, see
//!   [`is_hidden`]).
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

/// A control character, a format character or an invisible one: what can
/// make text look other than it is. By property, not by a hand list:
///
/// - general category Cc (controls) and Cf (format: bidirectional
///   controls, zero-width joiners, shorthand and hieroglyph format
///   controls, Arabic prepended marks, tags — [`FORMAT`]);
/// - Zl and Zp (U+2028, U+2029: a line break inside a one-line name);
/// - `Default_Ignorable_Code_Point` ([`DEFAULT_IGNORABLE`]: what renders as
///   nothing although it is not Cf — Hangul fillers, variation selectors,
///   the combining grapheme joiner, Khmer inherent vowels);
/// - U+2800 BRAILLE PATTERN BLANK, a symbol (So) that renders as a space
///   and is used as one to fake blank names.
///
/// Spaces (Zs) stay allowed: names are prose and may hold them, and a
/// space of any width looks like a space. Ids are ASCII only anyway.
pub fn is_hidden(c: char) -> bool {
    c.is_control()
        || matches!(c, '\u{2028}' | '\u{2029}' | '\u{2800}')
        || in_ranges(FORMAT, c)
        || in_ranges(DEFAULT_IGNORABLE, c)
}

fn in_ranges(ranges: &[(char, char)], c: char) -> bool {
    ranges
        .binary_search_by(|&(lo, hi)| {
            if hi < c {
                std::cmp::Ordering::Less
            } else if lo > c {
                std::cmp::Ordering::Greater
            } else {
                std::cmp::Ordering::Equal
            }
        })
        .is_ok()
}

/// General category Cf (Format), as data: Unicode 16.0.0,
/// `extracted/DerivedGeneralCategory.txt`, every line `; Cf`, adjacent
/// ranges merged (the same table `ucd-generate general-category
/// ucd-16.0.0` writes). Sorted, for the binary search. The engine takes no
/// Unicode-table dependency: this is the one table it needs, 21 ranges,
/// and the browser bundle is at its size budget.
pub const FORMAT: &[(char, char)] = &[
    ('\u{00AD}', '\u{00AD}'),
    ('\u{0600}', '\u{0605}'),
    ('\u{061C}', '\u{061C}'),
    ('\u{06DD}', '\u{06DD}'),
    ('\u{070F}', '\u{070F}'),
    ('\u{0890}', '\u{0891}'),
    ('\u{08E2}', '\u{08E2}'),
    ('\u{180E}', '\u{180E}'),
    ('\u{200B}', '\u{200F}'),
    ('\u{202A}', '\u{202E}'),
    ('\u{2060}', '\u{2064}'),
    ('\u{2066}', '\u{206F}'),
    ('\u{FEFF}', '\u{FEFF}'),
    ('\u{FFF9}', '\u{FFFB}'),
    ('\u{110BD}', '\u{110BD}'),
    ('\u{110CD}', '\u{110CD}'),
    ('\u{13430}', '\u{1343F}'),
    ('\u{1BCA0}', '\u{1BCA3}'),
    ('\u{1D173}', '\u{1D17A}'),
    ('\u{E0001}', '\u{E0001}'),
    ('\u{E0020}', '\u{E007F}'),
];

/// `Default_Ignorable_Code_Point`, as data: Unicode 16.0.0,
/// `DerivedCoreProperties.txt`, adjacent ranges merged. Sorted.
pub const DEFAULT_IGNORABLE: &[(char, char)] = &[
    ('\u{00AD}', '\u{00AD}'),
    ('\u{034F}', '\u{034F}'),
    ('\u{061C}', '\u{061C}'),
    ('\u{115F}', '\u{1160}'),
    ('\u{17B4}', '\u{17B5}'),
    ('\u{180B}', '\u{180F}'),
    ('\u{200B}', '\u{200F}'),
    ('\u{202A}', '\u{202E}'),
    ('\u{2060}', '\u{206F}'),
    ('\u{3164}', '\u{3164}'),
    ('\u{FE00}', '\u{FE0F}'),
    ('\u{FEFF}', '\u{FEFF}'),
    ('\u{FFA0}', '\u{FFA0}'),
    ('\u{FFF0}', '\u{FFF8}'),
    ('\u{1BCA0}', '\u{1BCA3}'),
    ('\u{1D173}', '\u{1D17A}'),
    ('\u{E0000}', '\u{E0FFF}'),
];

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
    fn the_tables_are_sorted_and_disjoint_for_the_binary_search() {
        for table in [FORMAT, DEFAULT_IGNORABLE] {
            for w in table.windows(2) {
                assert!(w[0].0 <= w[0].1 && w[0].1 < w[1].0, "{w:?}");
            }
        }
    }

    /// Every format character (general category Cf) and every invisible
    /// one is refused in a name, not only a hand-picked few (issue 37):
    /// shorthand format controls, Egyptian hieroglyph format controls,
    /// Arabic prepended marks, the braille blank.
    #[test]
    fn every_format_and_invisible_character_is_refused_in_names() {
        let cases = ('\u{1BCA0}'..='\u{1BCA3}')
            .chain('\u{13430}'..='\u{13438}')
            .chain('\u{0600}'..='\u{0605}')
            .chain([
                '\u{2800}',
                '\u{06DD}',
                '\u{070F}',
                '\u{08E2}',
                '\u{110BD}',
                '\u{E0001}',
            ])
            .chain([
                '\u{2028}', '\u{2029}', '\u{3164}', '\u{115F}', '\u{FFA0}', '\u{FE0F}',
            ]);
        for c in cases {
            let text = format!("a{c}b");
            let problem = name_problem(&text);
            assert!(
                problem
                    .as_deref()
                    .is_some_and(|p| p.starts_with(&format!("character 2 is U+{:04X}", c as u32))),
                "U+{:04X}: {problem:?}",
                c as u32
            );
        }
        // Visible text, spaces included, still passes.
        for ok in [
            "Zürich – west ✓",
            "São Paulo",
            "東京 データセンター",
            "a\u{00A0}b",
            "⠁⠃",
        ] {
            assert_eq!(name_problem(ok), None, "{ok:?}");
        }
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
