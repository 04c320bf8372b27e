//! A compact, read-only JSON tree for the manifests an import reads.
//!
//! Why not `serde_json::Value`: its objects are `BTreeMap`s, whose every
//! node reserves room for eleven entries (about 640 bytes), so a small
//! object such as an environment variable `{"name": …, "value": …}` (30
//! bytes of JSON) took twenty times its text. A Kubernetes import holds
//! every object of its input at once (Services and ConfigMaps are looked
//! up while workloads are read), and an agent's re-sync sends whole API
//! lists: a 9 MiB body took about 30× its size (issue 37 item 4).
//!
//! Here an object is one exactly sized slice of entries sorted by key (a
//! binary search finds one; iteration is in key order, as `serde_json`'s
//! maps iterate, so everything derived from it keeps its order), arrays
//! and strings are exactly sized too. A duplicate key keeps its last
//! value, as `serde_json` does. Numbers are `serde_json::Number`, so a
//! quantity such as `0.1` reads back as written.

use std::fmt;

use serde::de::{Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::Number;

/// One JSON value (see the module comment for why not `serde_json`'s).
#[derive(Clone, Debug, PartialEq)]
pub enum Value {
    Null,
    Bool(bool),
    Number(Number),
    String(Box<str>),
    Array(Box<[Value]>),
    Object(Map),
}

/// An object's entries, sorted by key, keys unique.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Map(Box<[(Box<str>, Value)]>);

impl Map {
    /// From entries in any order; a repeated key keeps its last value.
    pub fn from_entries(mut entries: Vec<(Box<str>, Value)>) -> Map {
        // Stable: among equal keys the input order stays, so the last of
        // each run is the last written.
        entries.sort_by(|a, b| a.0.cmp(&b.0));
        let mut out: Vec<(Box<str>, Value)> = Vec::with_capacity(entries.len());
        for e in entries {
            match out.last_mut() {
                Some(last) if last.0 == e.0 => *last = e,
                _ => out.push(e),
            }
        }
        Map(out.into_boxed_slice())
    }

    pub fn get(&self, key: &str) -> Option<&Value> {
        self.0
            .binary_search_by(|(k, _)| k.as_ref().cmp(key))
            .ok()
            .map(|i| &self.0[i].1)
    }

    pub fn contains_key(&self, key: &str) -> bool {
        self.get(key).is_some()
    }

    /// Entries in key order.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &Value)> {
        self.0.iter().map(|(k, v)| (k.as_ref(), v))
    }

    pub fn len(&self) -> usize {
        self.0.len()
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// The entries, for taking an object apart (a List's items).
    pub fn into_entries(self) -> Vec<(Box<str>, Value)> {
        self.0.into_vec()
    }
}

impl<'a> IntoIterator for &'a Map {
    type Item = (&'a str, &'a Value);
    type IntoIter = std::iter::Map<
        std::slice::Iter<'a, (Box<str>, Value)>,
        fn(&'a (Box<str>, Value)) -> (&'a str, &'a Value),
    >;

    fn into_iter(self) -> Self::IntoIter {
        self.0.iter().map(|(k, v)| (k.as_ref(), v))
    }
}

impl Value {
    /// The member `key` of an object; `None` for anything else.
    pub fn get(&self, key: &str) -> Option<&Value> {
        match self {
            Value::Object(m) => m.get(key),
            _ => None,
        }
    }

    /// The value a JSON pointer (RFC 6901) names: `/spec/containers/0`.
    pub fn pointer(&self, pointer: &str) -> Option<&Value> {
        if pointer.is_empty() {
            return Some(self);
        }
        let rest = pointer.strip_prefix('/')?;
        let mut at = self;
        for token in rest.split('/') {
            let token = token.replace("~1", "/").replace("~0", "~");
            at = match at {
                Value::Object(m) => m.get(&token)?,
                Value::Array(items) => items.get(array_index(&token)?)?,
                _ => return None,
            };
        }
        Some(at)
    }

    pub fn is_null(&self) -> bool {
        matches!(self, Value::Null)
    }

    pub fn as_str(&self) -> Option<&str> {
        match self {
            Value::String(s) => Some(s),
            _ => None,
        }
    }

    pub fn as_bool(&self) -> Option<bool> {
        match self {
            Value::Bool(b) => Some(*b),
            _ => None,
        }
    }

    pub fn as_u64(&self) -> Option<u64> {
        match self {
            Value::Number(n) => n.as_u64(),
            _ => None,
        }
    }

    pub fn as_i64(&self) -> Option<i64> {
        match self {
            Value::Number(n) => n.as_i64(),
            _ => None,
        }
    }

    pub fn as_f64(&self) -> Option<f64> {
        match self {
            Value::Number(n) => n.as_f64(),
            _ => None,
        }
    }

    pub fn as_array(&self) -> Option<&[Value]> {
        match self {
            Value::Array(a) => Some(a),
            _ => None,
        }
    }

    pub fn as_object(&self) -> Option<&Map> {
        match self {
            Value::Object(m) => Some(m),
            _ => None,
        }
    }
}

/// How a value is named in an error ("the string \"x\"", "an object"),
/// in the engine's words (`json_shape::describe`).
pub fn describe(v: &Value) -> String {
    use serde_json::Value as J;
    let shape = match v {
        Value::Null => J::Null,
        Value::Bool(b) => J::Bool(*b),
        Value::Number(n) => J::Number(n.clone()),
        Value::String(s) => J::String(s.to_string()),
        // Only the kind of a container is named, never its content.
        Value::Array(_) => J::Array(Vec::new()),
        Value::Object(_) => J::Object(serde_json::Map::new()),
    };
    berth_engine::json_shape::describe(&shape)
}

/// An array index as RFC 6901 writes one: digits, no leading zero.
fn array_index(token: &str) -> Option<usize> {
    if token.is_empty()
        || !token.bytes().all(|b| b.is_ascii_digit())
        || (token.len() > 1 && token.starts_with('0'))
    {
        return None;
    }
    token.parse().ok()
}

/// JSON text, as `serde_json` writes it (compact, keys in order).
impl fmt::Display for Value {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Value::Null => f.write_str("null"),
            Value::Bool(b) => write!(f, "{b}"),
            Value::Number(n) => write!(f, "{n}"),
            Value::String(s) => write!(f, "{}", serde_json::Value::from(s.as_ref())),
            Value::Array(items) => {
                f.write_str("[")?;
                for (i, v) in items.iter().enumerate() {
                    if i > 0 {
                        f.write_str(",")?;
                    }
                    write!(f, "{v}")?;
                }
                f.write_str("]")
            }
            Value::Object(m) => {
                f.write_str("{")?;
                for (i, (k, v)) in m.iter().enumerate() {
                    if i > 0 {
                        f.write_str(",")?;
                    }
                    write!(f, "{}:{v}", serde_json::Value::from(k))?;
                }
                f.write_str("}")
            }
        }
    }
}

impl From<i64> for Value {
    fn from(i: i64) -> Value {
        Value::Number(i.into())
    }
}

impl From<u64> for Value {
    fn from(u: u64) -> Value {
        Value::Number(u.into())
    }
}

impl<'de> Deserialize<'de> for Value {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Value, D::Error> {
        d.deserialize_any(ValueVisitor)
    }
}

struct ValueVisitor;

impl<'de> Visitor<'de> for ValueVisitor {
    type Value = Value;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a JSON value")
    }

    fn visit_bool<E>(self, b: bool) -> Result<Value, E> {
        Ok(Value::Bool(b))
    }

    fn visit_i64<E>(self, i: i64) -> Result<Value, E> {
        Ok(Value::from(i))
    }

    fn visit_u64<E>(self, u: u64) -> Result<Value, E> {
        Ok(Value::from(u))
    }

    fn visit_f64<E>(self, f: f64) -> Result<Value, E> {
        // As serde_json: a float JSON cannot hold is null.
        Ok(Number::from_f64(f).map_or(Value::Null, Value::Number))
    }

    fn visit_str<E>(self, s: &str) -> Result<Value, E> {
        Ok(Value::String(s.into()))
    }

    fn visit_string<E>(self, s: String) -> Result<Value, E> {
        Ok(Value::String(s.into_boxed_str()))
    }

    fn visit_none<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }

    fn visit_unit<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }

    fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<Value, D::Error> {
        Deserialize::deserialize(d)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        let mut items = Vec::with_capacity(seq.size_hint().unwrap_or(0).min(1024));
        while let Some(v) = seq.next_element()? {
            items.push(v);
        }
        Ok(Value::Array(items.into_boxed_slice()))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        let mut entries = Vec::with_capacity(map.size_hint().unwrap_or(0).min(1024));
        while let Some((k, v)) = map.next_entry::<String, Value>()? {
            entries.push((k.into_boxed_str(), v));
        }
        Ok(Value::Object(Map::from_entries(entries)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Value {
        serde_json::from_str(text).unwrap()
    }

    #[test]
    fn reads_like_serde_json() {
        let text = r#"{"b":[1,-2,0.1,true,null,"x\"y"],"a":{"k/1":{"~t":7}},"c":{}}"#;
        let ours = parse(text);
        let theirs: serde_json::Value = serde_json::from_str(text).unwrap();
        // Same text back (keys in the same order), same pointers.
        assert_eq!(ours.to_string(), theirs.to_string());
        for p in [
            "",
            "/b/2",
            "/b/5",
            "/a/k~11/~0t",
            "/b/01",
            "/b/9",
            "/c",
            "/z",
        ] {
            assert_eq!(
                ours.pointer(p).map(ToString::to_string),
                theirs.pointer(p).map(ToString::to_string),
                "{p}"
            );
        }
        assert_eq!(ours.pointer("/b/2").and_then(Value::as_f64), Some(0.1));
        assert_eq!(ours.pointer("/b/1").and_then(Value::as_i64), Some(-2));
    }

    #[test]
    fn a_repeated_key_keeps_its_last_value() {
        let v = parse(r#"{"a":1,"b":2,"a":3}"#);
        assert_eq!(v.to_string(), r#"{"a":3,"b":2}"#);
        let theirs: serde_json::Value = serde_json::from_str(r#"{"a":1,"b":2,"a":3}"#).unwrap();
        assert_eq!(v.to_string(), theirs.to_string());
    }
}
