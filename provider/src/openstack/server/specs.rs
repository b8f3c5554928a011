//! A server's embedded extra specs, written into the server's buffer as a JSON object's text.
//!
//! Nova's specs are string to string, and they are read into a map only once per distinct flavor
//! (`map.rs`); per server they are only copied. A value that is not a string is kept as JSON so
//! that reading the specs later fails there and names the flavor, as before, instead of failing the
//! whole page of servers here.

use std::fmt;

use serde::de::{DeserializeSeed, Deserializer, MapAccess, Visitor};

/// Appends the specs object (or nothing, for null) to the buffer; says whether there was one.
pub(super) struct SpecsText<'b>(pub(super) &'b mut String);

impl<'de> DeserializeSeed<'de> for SpecsText<'_> {
    type Value = bool;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<bool, D::Error> {
        deserializer.deserialize_option(self)
    }
}

impl<'de> Visitor<'de> for SpecsText<'_> {
    type Value = bool;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("extra specs (an object) or null")
    }

    fn visit_none<E: serde::de::Error>(self) -> Result<bool, E> {
        Ok(false)
    }

    fn visit_unit<E: serde::de::Error>(self) -> Result<bool, E> {
        Ok(false)
    }

    fn visit_some<D: Deserializer<'de>>(self, deserializer: D) -> Result<bool, D::Error> {
        deserializer.deserialize_map(self)
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<bool, A::Error> {
        let text = self.0;
        text.push('{');
        let mut first = true;
        while map
            .next_key_seed(JsonText(&mut *text, Some(!first)))?
            .is_some()
        {
            text.push(':');
            map.next_value_seed(JsonText(&mut *text, None))?;
            first = false;
        }
        text.push('}');
        Ok(true)
    }
}

/// Appends one JSON value as text: a string escaped, anything else as serde_json writes it. The
/// flag, for keys, says whether a comma goes first.
struct JsonText<'b>(&'b mut String, Option<bool>);

impl<'de> DeserializeSeed<'de> for JsonText<'_> {
    type Value = ();

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<(), D::Error> {
        if self.1.is_some() {
            deserializer.deserialize_str(self)
        } else {
            deserializer.deserialize_any(self)
        }
    }
}

impl JsonText<'_> {
    fn comma(&mut self) {
        if self.1 == Some(true) {
            self.0.push(',');
        }
    }

    fn other<E: serde::de::Error>(mut self, value: serde_json::Value) -> Result<(), E> {
        self.comma();
        self.0.push_str(&value.to_string());
        Ok(())
    }
}

impl<'de> Visitor<'de> for JsonText<'_> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON value")
    }

    fn visit_str<E: serde::de::Error>(mut self, v: &str) -> Result<(), E> {
        self.comma();
        let plain = !v.bytes().any(|b| b == b'"' || b == b'\\' || b < 0x20);
        if plain {
            self.0.push('"');
            self.0.push_str(v);
            self.0.push('"');
        } else {
            self.0.push_str(&serde_json::Value::from(v).to_string());
        }
        Ok(())
    }

    fn visit_bool<E: serde::de::Error>(self, v: bool) -> Result<(), E> {
        self.other(v.into())
    }

    fn visit_i64<E: serde::de::Error>(self, v: i64) -> Result<(), E> {
        self.other(v.into())
    }

    fn visit_u64<E: serde::de::Error>(self, v: u64) -> Result<(), E> {
        self.other(v.into())
    }

    fn visit_f64<E: serde::de::Error>(self, v: f64) -> Result<(), E> {
        self.other(v.into())
    }

    fn visit_unit<E: serde::de::Error>(self) -> Result<(), E> {
        self.other(serde_json::Value::Null)
    }

    fn visit_none<E: serde::de::Error>(self) -> Result<(), E> {
        self.other(serde_json::Value::Null)
    }

    fn visit_seq<A: serde::de::SeqAccess<'de>>(self, seq: A) -> Result<(), A::Error> {
        let value =
            serde::Deserialize::deserialize(serde::de::value::SeqAccessDeserializer::new(seq))?;
        self.other(value)
    }

    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<(), A::Error> {
        let value =
            serde::Deserialize::deserialize(serde::de::value::MapAccessDeserializer::new(map))?;
        self.other(value)
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use serde::de::DeserializeSeed;

    use super::*;

    fn text(json: &str) -> String {
        let mut out = String::new();
        let mut de = serde_json::Deserializer::from_str(json);
        SpecsText(&mut out).deserialize(&mut de).unwrap();
        out
    }

    #[test]
    fn specs_keep_their_pairs_and_escapes() {
        let written = text(r#"{"resources:VGPU": "1", "note\\": "a \"b\"\n", "x": "é"}"#);
        let read: BTreeMap<String, String> = serde_json::from_str(&written).unwrap();
        assert_eq!(read["resources:VGPU"], "1");
        assert_eq!(read["note\\"], "a \"b\"\n");
        assert_eq!(read["x"], "é");
        assert_eq!(text("{}"), "{}");
        assert_eq!(text("null"), "");
    }

    #[test]
    fn a_value_that_is_not_a_string_fails_later_not_here() {
        let written = text(r#"{"a": 1, "b": [true], "c": {"d": null}}"#);
        assert_eq!(written, r#"{"a":1,"b":[true],"c":{"d":null}}"#);
        assert!(serde_json::from_str::<BTreeMap<String, String>>(&written).is_err());
    }
}
