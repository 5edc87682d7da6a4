//! Reading a parsed TOML table into the raw shapes, strictly: a table is expected where
//! `raw.rs` has a struct, and an array is refused there. (Serde's derived structs also
//! accept a sequence, read by position, so `service = ["lognormal", "1s", 2.0]` would
//! silently become a service law; a TOML reader expects a table.)
//!
//! [`Strict`] is a serde `Deserializer` over a `toml::Value` that behaves as toml's own
//! but for that; `serde_path_to_error` wraps it as before, so key paths are kept.

use serde::de::value::{Error, MapDeserializer, SeqDeserializer, StrDeserializer};
use serde::de::{self, Deserializer, IntoDeserializer, Unexpected, Visitor};
use toml::Value;

/// A TOML value to deserialize strictly (see the module doc).
pub struct Strict(pub Value);

impl<'de> IntoDeserializer<'de, Error> for Strict {
    type Deserializer = Self;
    fn into_deserializer(self) -> Self {
        self
    }
}

impl Strict {
    /// How serde names the value in an "invalid type" message (mapped to TOML's names by
    /// [`super::error::toml_types`]).
    fn unexpected(&self) -> Unexpected<'_> {
        match &self.0 {
            Value::String(s) => Unexpected::Str(s),
            Value::Integer(i) => Unexpected::Signed(*i),
            Value::Float(f) => Unexpected::Float(*f),
            Value::Boolean(b) => Unexpected::Bool(*b),
            Value::Datetime(_) => Unexpected::Other("datetime"),
            Value::Array(_) => Unexpected::Seq,
            Value::Table(_) => Unexpected::Map,
        }
    }
}

impl<'de> Deserializer<'de> for Strict {
    type Error = Error;

    fn deserialize_any<V: Visitor<'de>>(self, v: V) -> Result<V::Value, Error> {
        match self.0 {
            Value::String(s) => v.visit_string(s),
            Value::Integer(i) => v.visit_i64(i),
            Value::Float(f) => v.visit_f64(f),
            Value::Boolean(b) => v.visit_bool(b),
            Value::Datetime(d) => v.visit_string(d.to_string()),
            Value::Array(a) => {
                let mut seq = SeqDeserializer::new(a.into_iter().map(Strict));
                let out = v.visit_seq(&mut seq)?;
                seq.end()?;
                Ok(out)
            }
            Value::Table(t) => {
                let mut map = MapDeserializer::new(t.into_iter().map(|(k, v)| (k, Strict(v))));
                let out = v.visit_map(&mut map)?;
                map.end()?;
                Ok(out)
            }
        }
    }

    fn deserialize_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        _fields: &'static [&'static str],
        v: V,
    ) -> Result<V::Value, Error> {
        match self.0 {
            Value::Table(_) => self.deserialize_any(v),
            _ => Err(de::Error::invalid_type(self.unexpected(), &"a table")),
        }
    }

    fn deserialize_option<V: Visitor<'de>>(self, v: V) -> Result<V::Value, Error> {
        // TOML has no null: a present key is always `Some`.
        v.visit_some(self)
    }

    fn deserialize_newtype_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        v: V,
    ) -> Result<V::Value, Error> {
        v.visit_newtype_struct(self)
    }

    fn deserialize_enum<V: Visitor<'de>>(
        self,
        _name: &'static str,
        _variants: &'static [&'static str],
        v: V,
    ) -> Result<V::Value, Error> {
        // The scenario's enums are plain words (`law = "gamma"`).
        match &self.0 {
            Value::String(s) => v.visit_enum(StrDeserializer::<Error>::new(s)),
            _ => Err(de::Error::invalid_type(self.unexpected(), &"a string")),
        }
    }

    serde::forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string
        bytes byte_buf unit unit_struct seq tuple tuple_struct map identifier ignored_any
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde::Deserialize;

    #[derive(Debug, Deserialize, PartialEq)]
    #[serde(deny_unknown_fields)]
    struct Pair {
        a: f64,
        b: Option<String>,
    }

    fn read<T: for<'de> Deserialize<'de>>(text: &str) -> Result<T, String> {
        let mut t: toml::Table = toml::from_str(text).unwrap();
        T::deserialize(Strict(t.remove("v").unwrap())).map_err(|e| e.to_string())
    }

    #[test]
    fn a_struct_is_read_from_a_table_only() {
        assert_eq!(
            read::<Pair>("v = { a = 1, b = \"x\" }"),
            Ok(Pair {
                a: 1.0,
                b: Some("x".into())
            })
        );
        let e = read::<Pair>("v = [1.0, \"x\"]").unwrap_err();
        assert!(
            e.contains("invalid type: sequence, expected a table"),
            "{e}"
        );
        assert!(read::<Pair>("v = 3").is_err());
    }

    #[test]
    fn tuples_and_lists_are_still_arrays() {
        assert_eq!(read::<(u64, f64)>("v = [1, 2]"), Ok((1, 2.0)));
        assert!(read::<(u64, f64)>("v = [1, 2, 3]").is_err());
        assert_eq!(read::<Vec<i64>>("v = [1, 2]"), Ok(vec![1, 2]));
    }
}
