//! One LDAP entry as the renderers assemble it: DN, object classes, attributes in a fixed order.
//!
//! Keeping this separate from the writer lets tests look at entries (which classes, which
//! attributes) without parsing LDIF, and lets both GLUE modes share the value formatting.

use chrono::{DateTime, Utc};

use crate::glue::entity::Value;

use super::writer::LdifWriter;

/// An entry to be written.
#[derive(Debug, Clone, PartialEq)]
pub struct LdapEntry {
    pub dn: String,
    pub object_classes: Vec<&'static str>,
    /// `(attribute, value)` in output order; a multi-valued attribute appears once per value.
    pub attributes: Vec<(String, String)>,
}

impl LdapEntry {
    pub fn new(dn: String, object_classes: &[&'static str]) -> Self {
        Self {
            dn,
            object_classes: object_classes.to_vec(),
            attributes: Vec::new(),
        }
    }

    /// Adds one value; empty values are dropped here already, so no renderer can emit one.
    pub fn add(&mut self, name: impl Into<String>, value: impl Into<String>) {
        let value = value.into();
        if !value.is_empty() {
            self.attributes.push((name.into(), value));
        }
    }

    /// Adds every value of `value` (one for scalars, each item of a list).
    pub fn add_value(&mut self, name: &str, value: &Value) {
        for text in texts(value) {
            self.add(name, text);
        }
    }

    /// The values of one attribute, in order.
    pub fn values<'a>(&'a self, name: &'a str) -> impl Iterator<Item = &'a str> + 'a {
        self.attributes
            .iter()
            .filter(move |(key, _)| key == name)
            .map(|(_, value)| value.as_str())
    }

    pub fn write(&self, writer: &mut LdifWriter) {
        writer.dn(&self.dn);
        for class in &self.object_classes {
            writer.attribute("objectClass", class);
        }
        for (name, value) in &self.attributes {
            writer.attribute(name, value);
        }
    }
}

/// GLUE2's time format (RFC 3339, UTC, whole seconds), as the JSON rendering writes it.
pub fn time(time: &DateTime<Utc>) -> String {
    time.format("%Y-%m-%dT%H:%M:%SZ").to_string()
}

/// An entity value as LDAP strings: counts keep their fraction (`0.5`), floats print the shortest
/// form that reads back the same, lists give one string per item.
pub fn texts(value: &Value) -> Vec<String> {
    match value {
        Value::Text(text) => vec![text.clone()],
        Value::Int(int) => vec![int.to_string()],
        Value::Count(count) => vec![count.to_string()],
        Value::Float(float) => vec![float.to_string()],
        Value::List(list) => list.clone(),
        Value::Time(at) => vec![time(at)],
    }
}

/// A single-valued entity value as one string (lists joined by `,`, which only the OtherInfo
/// fallback ever needs).
pub fn text(value: &Value) -> String {
    texts(value).join(",")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gpu::GpuCount;

    #[test]
    fn empty_values_never_enter_an_entry() {
        let mut entry = LdapEntry::new("o=x".into(), &["top"]);
        entry.add("a", "");
        entry.add_value("b", &Value::List(vec![String::new(), "x".into()]));
        entry.add_value("c", &Value::Text(String::new()));
        assert_eq!(entry.attributes, vec![("b".to_owned(), "x".to_owned())]);
    }

    #[test]
    fn counts_keep_fractions_and_floats_read_back() {
        let half = GpuCount::new(0.5).expect("valid");
        assert_eq!(texts(&Value::Count(half)), ["0.5"]);
        assert_eq!(texts(&Value::Count(GpuCount::whole(4))), ["4"]);
        assert_eq!(texts(&Value::Float(52.37)), ["52.37"]);
        assert_eq!(
            texts(&Value::List(vec!["a".into(), "b".into()])),
            ["a", "b"]
        );
    }
}
