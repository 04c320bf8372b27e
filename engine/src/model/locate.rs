//! Finding the line of a JSON pointer in the original text, so that a
//! validation error can say *where* as well as *what*.
//!
//! serde_json's `Value` forgets positions; rather than carry spans through
//! the whole model we re-scan the text only when there is an error to
//! report. The scanner understands just enough JSON to walk to a pointer:
//! strings (with escapes), objects, arrays and scalars.

/// 1-based line of the value at `pointer` (e.g. `/clusters/3/cpu_free`),
/// or of its deepest existing ancestor when the last segments are missing
/// (an absent field is reported at the object that lacks it).
pub fn line_of(text: &str, pointer: &str) -> Option<usize> {
    let segments: Vec<String> = pointer
        .split('/')
        .skip(1)
        .map(|s| s.replace("~1", "/").replace("~0", "~"))
        .collect();
    let bytes = text.as_bytes();
    let mut pos = skip_ws(bytes, 0);
    if pos >= bytes.len() {
        return None;
    }
    for seg in &segments {
        match bytes.get(pos)? {
            b'{' => match find_member(bytes, pos, seg) {
                Some(p) => pos = p,
                None => break,
            },
            b'[' => {
                let Ok(index) = seg.parse::<usize>() else {
                    break;
                };
                match find_element(bytes, pos, index) {
                    Some(p) => pos = p,
                    None => break,
                }
            }
            _ => break,
        }
    }
    Some(1 + bytes[..pos].iter().filter(|&&b| b == b'\n').count())
}

fn skip_ws(b: &[u8], mut p: usize) -> usize {
    while p < b.len() && matches!(b[p], b' ' | b'\t' | b'\n' | b'\r') {
        p += 1;
    }
    p
}

/// Position just past a string starting at `p` (which is a `"`).
fn skip_string(b: &[u8], mut p: usize) -> Option<usize> {
    p += 1;
    while p < b.len() {
        match b[p] {
            b'\\' => p += 2,
            b'"' => return Some(p + 1),
            _ => p += 1,
        }
    }
    None
}

/// Position just past the value starting at `p`.
fn skip_value(b: &[u8], p: usize) -> Option<usize> {
    match *b.get(p)? {
        b'"' => skip_string(b, p),
        open @ (b'{' | b'[') => {
            let close = if open == b'{' { b'}' } else { b']' };
            let mut q = p + 1;
            loop {
                q = skip_ws(b, q);
                match *b.get(q)? {
                    c if c == close => return Some(q + 1),
                    b',' | b':' => q += 1,
                    _ => q = skip_value(b, q)?,
                }
            }
        }
        _ => {
            let mut q = p;
            while q < b.len() && !matches!(b[q], b',' | b'}' | b']' | b' ' | b'\n' | b'\r' | b'\t')
            {
                q += 1;
            }
            Some(q)
        }
    }
}

fn find_member(b: &[u8], obj: usize, key: &str) -> Option<usize> {
    let mut p = obj + 1;
    loop {
        p = skip_ws(b, p);
        match *b.get(p)? {
            b'}' => return None,
            b',' => p += 1,
            b'"' => {
                let end = skip_string(b, p)?;
                let raw = std::str::from_utf8(&b[p + 1..end - 1]).ok()?;
                let name: Option<String> = serde_json::from_str(&format!("\"{raw}\"")).ok();
                p = skip_ws(b, end);
                if b.get(p) != Some(&b':') {
                    return None;
                }
                p = skip_ws(b, p + 1);
                if name.as_deref() == Some(key) {
                    return Some(p);
                }
                p = skip_value(b, p)?;
            }
            _ => return None,
        }
    }
}

fn find_element(b: &[u8], arr: usize, index: usize) -> Option<usize> {
    let mut p = arr + 1;
    let mut i = 0;
    loop {
        p = skip_ws(b, p);
        match *b.get(p)? {
            b']' => return None,
            b',' => p += 1,
            _ => {
                if i == index {
                    return Some(p);
                }
                p = skip_value(b, p)?;
                i += 1;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::line_of;

    #[test]
    fn finds_nested_members_and_elements() {
        let text =
            "{\n  \"a\": [\n    {\"x\": 1},\n    {\"x\": \"q\\\"]\",\n     \"y\": 2}\n  ]\n}";
        assert_eq!(line_of(text, "/a/0/x"), Some(3));
        assert_eq!(line_of(text, "/a/1/y"), Some(5));
        // Missing member: reported at its parent.
        assert_eq!(line_of(text, "/a/1/z"), Some(4));
        assert_eq!(line_of(text, ""), Some(1));
    }
}
