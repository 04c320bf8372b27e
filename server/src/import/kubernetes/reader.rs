//! Reading an object's fields with their paths: every error names
//! where it is.

use super::*;

/// A reader over one object that records every error with its path.
pub(super) struct Reader<'o> {
    pub(super) obj: &'o Obj,
    pub(super) errors: Vec<ImportError>,
}

impl<'o> Reader<'o> {
    pub(super) fn new(obj: &'o Obj) -> Self {
        Reader {
            obj,
            errors: Vec::new(),
        }
    }

    pub(super) fn err(&mut self, path: &str, message: String) {
        self.errors.push(self.obj.err(path, message));
    }

    /// The value at `path` (a JSON pointer into the object); absent and
    /// null are both `None`.
    pub(super) fn at(&self, path: &str) -> Option<&'o Value> {
        self.obj.value.pointer(path).filter(|v| !v.is_null())
    }

    pub(super) fn map(&mut self, path: &str) -> Option<&'o Map> {
        match self.at(path)? {
            Value::Object(m) => Some(m),
            other => {
                self.err(
                    path,
                    format!("expected an object, found {}", describe(other)),
                );
                None
            }
        }
    }

    pub(super) fn list(&mut self, path: &str) -> &'o [Value] {
        match self.at(path) {
            None => &[],
            Some(Value::Array(a)) => a,
            Some(other) => {
                self.err(
                    path,
                    format!("expected an array, found {}", describe(other)),
                );
                &[]
            }
        }
    }

    pub(super) fn string(&mut self, path: &str) -> Option<&'o str> {
        match self.at(path)? {
            Value::String(s) => Some(s),
            other => {
                self.err(
                    path,
                    format!("expected a string, found {}", describe(other)),
                );
                None
            }
        }
    }

    /// A string-to-string map such as labels or a selector.
    pub(super) fn labels(&mut self, path: &str) -> BTreeMap<&'o str, String> {
        let mut out = BTreeMap::new();
        let Some(m) = self.map(path) else {
            return out;
        };
        for (k, v) in m.iter() {
            match v {
                Value::String(s) => {
                    out.insert(k, s.to_string());
                }
                // Unquoted YAML scalars (`enabled: true`, `tier: 1`) mean
                // the same text to Kubernetes tooling that quotes them.
                Value::Bool(_) | Value::Number(_) => {
                    out.insert(k, v.to_string());
                }
                other => self.err(
                    &format!("{path}/{}", escape(k)),
                    format!("expected a string, found {}", describe(other)),
                ),
            }
        }
        out
    }

    /// A non-negative whole number (replicas), or the default when absent.
    pub(super) fn count(&mut self, path: &str, default: u64) -> Option<u64> {
        match self.at(path) {
            None => Some(default),
            Some(Value::Number(n)) if n.as_u64().is_some() => n.as_u64(),
            Some(other) => {
                self.err(
                    path,
                    format!("expected a whole number ≥ 0, found {}", describe(other)),
                );
                None
            }
        }
    }

    /// A quantity at `path`, `None` when absent (or unreadable: error).
    pub(super) fn quantity(&mut self, path: &str) -> Option<quantity::Quantity> {
        let text = match self.at(path)? {
            Value::String(s) => s.to_string(),
            Value::Number(n) => n.to_string(),
            other => {
                self.err(
                    path,
                    format!(
                        "expected a quantity such as 100m or 64Mi, found {}",
                        describe(other)
                    ),
                );
                return None;
            }
        };
        match quantity::parse(&text) {
            Ok(q) => Some(q),
            Err(e) => {
                self.err(path, e);
                None
            }
        }
    }
}

impl Reader<'_> {
    /// A quantity in whole base units: millicores when `milli` (CPU),
    /// else bytes. Absent: `None`; unreadable or too large: an error.
    pub(super) fn amount(&mut self, path: &str, milli: bool) -> Option<i128> {
        let q = self.quantity(path)?;
        self.scaled(q, path, milli)
    }

    pub(super) fn scaled(
        &mut self,
        q: quantity::Quantity,
        path: &str,
        milli: bool,
    ) -> Option<i128> {
        let v = if milli { q.milli() } else { q.units() };
        if v.is_none() {
            self.err(path, "quantity out of range".into());
        }
        v
    }
}

pub(super) fn escape(key: &str) -> String {
    key.replace('~', "~0").replace('/', "~1")
}
