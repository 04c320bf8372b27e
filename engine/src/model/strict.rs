//! JSON into typed values where an object must be an object.
//!
//! serde's derived `Deserialize` for a struct accepts a JSON array as well
//! as an object, filling the fields by position. That slips past
//! `deny_unknown_fields` and every name check: `[0.5, 77]` passes for a
//! policy, `["x", "admin"]` for a new token. Everything Berth reads from
//! outside (estate files, policies, request bodies, decider requests and
//! replies) goes through [`from_str`] or [`from_slice`], which refuse an
//! array wherever a struct is expected, at any depth, with serde_json's own
//! message and position ("invalid type: sequence, expected struct Policy at
//! line 1 column 1").
//!
//! How: [`Strict`] wraps a deserializer and every visitor, seed and access
//! handed out below it, so the check reaches nested values too. Only
//! `deserialize_struct` (and struct variants) mark their visitor strict;
//! real sequences (`Vec`, tuples) are untouched.

use serde::de::{
    self, DeserializeOwned, DeserializeSeed, Deserializer, EnumAccess, MapAccess, SeqAccess,
    Unexpected, VariantAccess, Visitor,
};
use std::fmt;

/// Parse `text` as JSON into `T`, refusing arrays where structs belong.
pub fn from_str<T: DeserializeOwned>(text: &str) -> Result<T, serde_json::Error> {
    let mut de = serde_json::Deserializer::from_str(text);
    let value = T::deserialize(Strict(&mut de))?;
    de.end()?;
    Ok(value)
}

/// [`from_str`] for bytes.
pub fn from_slice<T: DeserializeOwned>(bytes: &[u8]) -> Result<T, serde_json::Error> {
    let mut de = serde_json::Deserializer::from_slice(bytes);
    let value = T::deserialize(Strict(&mut de))?;
    de.end()?;
    Ok(value)
}

/// [`from_str`] from an already parsed value.
pub fn from_value<T: DeserializeOwned>(value: serde_json::Value) -> Result<T, serde_json::Error> {
    T::deserialize(Strict(value))
}

/// A deserializer whose structs must be objects.
pub struct Strict<D>(pub D);

/// A visitor, seed or access wrapped so that what it hands on is wrapped.
struct Wrap<X> {
    inner: X,
    /// This visitor builds a struct: a sequence is refused.
    is_struct: bool,
}

fn wrap<X>(inner: X) -> Wrap<X> {
    Wrap {
        inner,
        is_struct: false,
    }
}

macro_rules! forward {
    ($($method:ident),* $(,)?) => {$(
        fn $method<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, D::Error> {
            self.0.$method(wrap(visitor))
        }
    )*};
}

impl<'de, D: Deserializer<'de>> Deserializer<'de> for Strict<D> {
    type Error = D::Error;

    forward!(
        deserialize_any,
        deserialize_bool,
        deserialize_i8,
        deserialize_i16,
        deserialize_i32,
        deserialize_i64,
        deserialize_i128,
        deserialize_u8,
        deserialize_u16,
        deserialize_u32,
        deserialize_u64,
        deserialize_u128,
        deserialize_f32,
        deserialize_f64,
        deserialize_char,
        deserialize_str,
        deserialize_string,
        deserialize_bytes,
        deserialize_byte_buf,
        deserialize_option,
        deserialize_unit,
        deserialize_seq,
        deserialize_map,
        deserialize_identifier,
        deserialize_ignored_any,
    );

    fn deserialize_unit_struct<V: Visitor<'de>>(
        self,
        name: &'static str,
        visitor: V,
    ) -> Result<V::Value, D::Error> {
        self.0.deserialize_unit_struct(name, wrap(visitor))
    }

    fn deserialize_newtype_struct<V: Visitor<'de>>(
        self,
        name: &'static str,
        visitor: V,
    ) -> Result<V::Value, D::Error> {
        self.0.deserialize_newtype_struct(name, wrap(visitor))
    }

    fn deserialize_tuple<V: Visitor<'de>>(
        self,
        len: usize,
        visitor: V,
    ) -> Result<V::Value, D::Error> {
        self.0.deserialize_tuple(len, wrap(visitor))
    }

    fn deserialize_tuple_struct<V: Visitor<'de>>(
        self,
        name: &'static str,
        len: usize,
        visitor: V,
    ) -> Result<V::Value, D::Error> {
        self.0.deserialize_tuple_struct(name, len, wrap(visitor))
    }

    fn deserialize_struct<V: Visitor<'de>>(
        self,
        name: &'static str,
        fields: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, D::Error> {
        let strict = Wrap {
            inner: visitor,
            is_struct: true,
        };
        self.0.deserialize_struct(name, fields, strict)
    }

    fn deserialize_enum<V: Visitor<'de>>(
        self,
        name: &'static str,
        variants: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, D::Error> {
        self.0.deserialize_enum(name, variants, wrap(visitor))
    }

    fn is_human_readable(&self) -> bool {
        self.0.is_human_readable()
    }
}

macro_rules! visit {
    ($($method:ident: $ty:ty),* $(,)?) => {$(
        fn $method<E: de::Error>(self, v: $ty) -> Result<V::Value, E> {
            self.inner.$method(v)
        }
    )*};
}

impl<'de, V: Visitor<'de>> Visitor<'de> for Wrap<V> {
    type Value = V::Value;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        self.inner.expecting(f)
    }

    visit!(
        visit_bool: bool,
        visit_i8: i8,
        visit_i16: i16,
        visit_i32: i32,
        visit_i64: i64,
        visit_i128: i128,
        visit_u8: u8,
        visit_u16: u16,
        visit_u32: u32,
        visit_u64: u64,
        visit_u128: u128,
        visit_f32: f32,
        visit_f64: f64,
        visit_char: char,
        visit_str: &str,
        visit_borrowed_str: &'de str,
        visit_string: String,
        visit_bytes: &[u8],
        visit_borrowed_bytes: &'de [u8],
        visit_byte_buf: Vec<u8>,
    );

    fn visit_none<E: de::Error>(self) -> Result<V::Value, E> {
        self.inner.visit_none()
    }

    fn visit_unit<E: de::Error>(self) -> Result<V::Value, E> {
        self.inner.visit_unit()
    }

    fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<V::Value, D::Error> {
        self.inner.visit_some(Strict(d))
    }

    fn visit_newtype_struct<D: Deserializer<'de>>(self, d: D) -> Result<V::Value, D::Error> {
        self.inner.visit_newtype_struct(Strict(d))
    }

    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<V::Value, A::Error> {
        if self.is_struct {
            return Err(de::Error::invalid_type(Unexpected::Seq, &self));
        }
        self.inner.visit_seq(wrap(seq))
    }

    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<V::Value, A::Error> {
        self.inner.visit_map(wrap(map))
    }

    fn visit_enum<A: EnumAccess<'de>>(self, data: A) -> Result<V::Value, A::Error> {
        self.inner.visit_enum(wrap(data))
    }
}

impl<'de, S: DeserializeSeed<'de>> DeserializeSeed<'de> for Wrap<S> {
    type Value = S::Value;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<S::Value, D::Error> {
        self.inner.deserialize(Strict(d))
    }
}

impl<'de, A: SeqAccess<'de>> SeqAccess<'de> for Wrap<A> {
    type Error = A::Error;

    fn next_element_seed<T: DeserializeSeed<'de>>(
        &mut self,
        seed: T,
    ) -> Result<Option<T::Value>, A::Error> {
        self.inner.next_element_seed(wrap(seed))
    }

    fn size_hint(&self) -> Option<usize> {
        self.inner.size_hint()
    }
}

impl<'de, A: MapAccess<'de>> MapAccess<'de> for Wrap<A> {
    type Error = A::Error;

    fn next_key_seed<K: DeserializeSeed<'de>>(
        &mut self,
        seed: K,
    ) -> Result<Option<K::Value>, A::Error> {
        self.inner.next_key_seed(wrap(seed))
    }

    fn next_value_seed<T: DeserializeSeed<'de>>(&mut self, seed: T) -> Result<T::Value, A::Error> {
        self.inner.next_value_seed(wrap(seed))
    }

    fn size_hint(&self) -> Option<usize> {
        self.inner.size_hint()
    }
}

impl<'de, A: EnumAccess<'de>> EnumAccess<'de> for Wrap<A> {
    type Error = A::Error;
    type Variant = Wrap<A::Variant>;

    fn variant_seed<T: DeserializeSeed<'de>>(
        self,
        seed: T,
    ) -> Result<(T::Value, Self::Variant), A::Error> {
        let (value, variant) = self.inner.variant_seed(wrap(seed))?;
        Ok((value, wrap(variant)))
    }
}

impl<'de, A: VariantAccess<'de>> VariantAccess<'de> for Wrap<A> {
    type Error = A::Error;

    fn unit_variant(self) -> Result<(), A::Error> {
        self.inner.unit_variant()
    }

    fn newtype_variant_seed<T: DeserializeSeed<'de>>(self, seed: T) -> Result<T::Value, A::Error> {
        self.inner.newtype_variant_seed(wrap(seed))
    }

    fn tuple_variant<V: Visitor<'de>>(self, len: usize, visitor: V) -> Result<V::Value, A::Error> {
        self.inner.tuple_variant(len, wrap(visitor))
    }

    fn struct_variant<V: Visitor<'de>>(
        self,
        fields: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, A::Error> {
        let strict = Wrap {
            inner: visitor,
            is_struct: true,
        };
        self.inner.struct_variant(fields, strict)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde::Deserialize;

    #[derive(Debug, Deserialize, PartialEq)]
    #[serde(deny_unknown_fields)]
    struct Inner {
        a: f64,
        b: u32,
    }

    #[derive(Debug, Deserialize, PartialEq)]
    #[serde(deny_unknown_fields)]
    struct Outer {
        name: String,
        inner: Inner,
        #[serde(default)]
        list: Vec<Inner>,
        #[serde(default)]
        pair: Option<(u8, u8)>,
        #[serde(default)]
        kind: Option<Kind>,
    }

    #[derive(Debug, Deserialize, PartialEq)]
    #[serde(rename_all = "lowercase")]
    enum Kind {
        Plain,
        Shaped { x: u8 },
    }

    #[test]
    fn objects_still_read() {
        let o: Outer = from_str(
            r#"{"name":"n","inner":{"a":0.5,"b":7},"list":[{"a":1,"b":2}],"pair":[1,2],"kind":{"shaped":{"x":3}}}"#,
        )
        .unwrap();
        assert_eq!(o.inner, Inner { a: 0.5, b: 7 });
        assert_eq!(o.list.len(), 1);
        assert_eq!(o.pair, Some((1, 2)));
        assert_eq!(o.kind, Some(Kind::Shaped { x: 3 }));
        let p: Outer = from_str(r#"{"name":"n","inner":{"a":0,"b":0},"kind":"plain"}"#).unwrap();
        assert_eq!(p.kind, Some(Kind::Plain));
    }

    #[test]
    fn arrays_for_structs_are_refused_at_any_depth() {
        // What plain serde_json accepts, to show the test can fail.
        assert!(serde_json::from_str::<Inner>("[0.5, 77]").is_ok());
        let top = from_str::<Inner>("[0.5, 77]").unwrap_err().to_string();
        assert_eq!(
            top,
            "invalid type: sequence, expected struct Inner at line 1 column 1"
        );
        let nested = from_str::<Outer>(r#"{"name":"n","inner":[0.5,7]}"#)
            .unwrap_err()
            .to_string();
        assert!(
            nested.starts_with("invalid type: sequence, expected struct Inner"),
            "{nested}"
        );
        let in_list = from_str::<Outer>(r#"{"name":"n","inner":{"a":1,"b":1},"list":[[1,2]]}"#)
            .unwrap_err()
            .to_string();
        assert!(in_list.contains("expected struct Inner"), "{in_list}");
        let variant =
            from_str::<Outer>(r#"{"name":"n","inner":{"a":1,"b":1},"kind":{"shaped":[3]}}"#)
                .unwrap_err()
                .to_string();
        assert!(variant.contains("invalid type: sequence"), "{variant}");
        let from_value = from_value::<Inner>(serde_json::json!([0.5, 77])).unwrap_err();
        assert!(from_value.to_string().contains("expected struct Inner"));
    }

    #[test]
    fn trailing_text_is_refused() {
        assert!(from_str::<Inner>(r#"{"a":1,"b":2} x"#).is_err());
    }
}
