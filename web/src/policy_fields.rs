//! The Policy page's fields: the engine's table
//! ([`berth_engine::policy::FIELDS`]: path, unit, meaning, default, range),
//! so the page lists exactly the fields the engine has, and helpers to read
//! and write a field of the policy's JSON by its dotted path.

pub use berth_engine::policy::{PolicyField, FIELDS};

/// The value at a dotted path of a JSON object.
pub fn get<'a>(v: &'a serde_json::Value, path: &str) -> Option<&'a serde_json::Value> {
    path.split('.').try_fold(v, |v, k| v.get(k))
}

/// Set the value at a dotted path (creating objects on the way).
pub fn set(v: &mut serde_json::Value, path: &str, value: serde_json::Value) {
    let mut cur = v;
    let mut parts = path.split('.').peekable();
    while let Some(k) = parts.next() {
        if !cur.is_object() {
            *cur = serde_json::json!({});
        }
        let obj = cur.as_object_mut().expect("made an object");
        if parts.peek().is_none() {
            obj.insert(k.to_string(), value);
            return;
        }
        cur = obj
            .entry(k.to_string())
            .or_insert_with(|| serde_json::json!({}));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_field_is_at_its_path_in_the_policy_json() {
        let v = serde_json::to_value(berth_engine::Policy::default()).unwrap();
        for f in FIELDS {
            assert_eq!(get(&v, f.path).and_then(|v| v.as_f64()), Some(f.default));
        }
    }

    #[test]
    fn set_then_get_at_a_dotted_path() {
        let mut v = serde_json::json!({});
        set(&mut v, "rtt.unknown_ms", serde_json::json!(90.0));
        assert_eq!(get(&v, "rtt.unknown_ms"), Some(&serde_json::json!(90.0)));
    }
}
