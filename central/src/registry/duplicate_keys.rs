//! One meaning per pushed document: a JSON object that names a key twice is refused. serde_json
//! (like most readers) keeps the last of two equal keys and other readers keep the first, so such a
//! document would mean one thing to the registry and another to whoever reads it next.
//!
//! The check is a pass of its own over the bytes, before the document is read as a value: the
//! value the rest of the checks read has already lost the first of the two keys. Only keys are kept
//! (one set per open object), so the pass costs a fraction of the full read.

use std::cell::RefCell;
use std::collections::HashSet;
use std::fmt;

use serde::de::{self, DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};

/// A key found twice in one object: its excerpt and where its second use ends (1-based, serde_json's
/// line and column, counted in bytes).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DuplicateKey {
    pub key: String,
    pub line: usize,
    pub column: usize,
}

/// The first key that appears twice in one object of `body`, if any. A body that is not JSON has
/// none: the full read that follows names its syntax error.
pub fn first_duplicate(body: &[u8]) -> Option<DuplicateKey> {
    let found = RefCell::new(None);
    let mut deserializer = serde_json::Deserializer::from_slice(body);
    // The visitor fails at the duplicate, so serde_json's error has its position; the key itself
    // is handed out beside the error, not parsed back from the error's text.
    let error = NoDuplicates { found: &found }
        .deserialize(&mut deserializer)
        .err()?;
    let key = found.into_inner()?;
    Some(DuplicateKey {
        key: accelfed_schemas::excerpt::excerpt(&key),
        line: error.line(),
        column: error.column(),
    })
}

/// A JSON value read only to find duplicate keys; nothing of it is kept but the first duplicate.
#[derive(Debug, Clone, Copy)]
struct NoDuplicates<'f> {
    found: &'f RefCell<Option<String>>,
}

impl<'de> DeserializeSeed<'de> for NoDuplicates<'_> {
    type Value = ();

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<(), D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for NoDuplicates<'_> {
    type Value = ();

    fn expecting(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        formatter.write_str("any JSON value")
    }

    fn visit_bool<E: de::Error>(self, _: bool) -> Result<(), E> {
        Ok(())
    }
    fn visit_i64<E: de::Error>(self, _: i64) -> Result<(), E> {
        Ok(())
    }
    fn visit_u64<E: de::Error>(self, _: u64) -> Result<(), E> {
        Ok(())
    }
    fn visit_f64<E: de::Error>(self, _: f64) -> Result<(), E> {
        Ok(())
    }
    fn visit_str<E: de::Error>(self, _: &str) -> Result<(), E> {
        Ok(())
    }
    fn visit_unit<E: de::Error>(self) -> Result<(), E> {
        Ok(())
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        while seq.next_element_seed(self)?.is_some() {}
        Ok(())
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        let mut seen: HashSet<String> = HashSet::new();
        while let Some(key) = map.next_key::<String>()? {
            if seen.contains(&key) {
                *self.found.borrow_mut() = Some(key);
                return Err(de::Error::custom("duplicate key"));
            }
            seen.insert(key);
            map.next_value_seed(self)?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_key_named_twice_is_found_with_its_line_and_column() {
        // Line 3 is `  "Name": "b"`: the second "Name" ends at byte 8 of it, where serde_json
        // stands when the key has been read.
        let body = b"{\"Location\": [{\n  \"Name\": \"a\",\n  \"Name\": \"b\"\n}]}";
        assert_eq!(
            first_duplicate(body),
            Some(DuplicateKey {
                key: "Name".to_owned(),
                line: 3,
                column: 8,
            })
        );
    }

    #[test]
    fn equal_keys_in_different_objects_and_documents_that_are_not_json_pass() {
        assert_eq!(
            first_duplicate(
                b"{\"a\": {\"x\": 1}, \"b\": {\"x\": 1}, \"c\": [{\"x\": 1}, {\"x\": 2}]}"
            ),
            None
        );
        assert_eq!(first_duplicate(b"{\"a\": "), None);
        assert_eq!(first_duplicate(b"[1, \"two\", null, 3.5, -4]"), None);
    }

    #[test]
    fn a_huge_key_is_quoted_as_an_excerpt_and_a_key_like_a_position_whole() {
        let key = "k".repeat(100_000);
        let body = format!("{{\"{key}\": 1, \"{key}\": 2}}");
        let found = first_duplicate(body.as_bytes()).unwrap();
        assert!(found.key.len() < 100, "{}", found.key.len());
        let found = first_duplicate(b"{\"a at line 1 column 2\": 1, \"a at line 1 column 2\": 2}");
        assert_eq!(found.unwrap().key, "a at line 1 column 2");
    }
}
