//! One LDAP entry as the renderers assemble it: DN, object classes, attributes in a fixed order.
//!
//! Keeping this separate from the writer lets tests look at entries (which classes, which
//! attributes) without parsing LDIF, and lets both GLUE modes share the value formatting.

use std::borrow::Cow;
use std::fmt::Write as _;

use chrono::{DateTime, Utc};

use crate::glue::entity::Value;

use super::writer::LdifWriter;

/// An entry to be written. Names and values borrow from the mapping and the entities where they
/// can (`'a`): rendering a large site this way allocates only what has to be formatted.
#[derive(Debug, Clone, PartialEq)]
pub struct LdapEntry<'a> {
    pub dn: String,
    pub object_classes: Vec<&'static str>,
    /// `(attribute, value)` in output order; a multi-valued attribute appears once per value.
    pub attributes: Vec<(Cow<'a, str>, Cow<'a, str>)>,
}

impl<'a> LdapEntry<'a> {
    pub fn new(dn: String, object_classes: &[&'static str]) -> Self {
        Self {
            dn,
            object_classes: object_classes.to_vec(),
            attributes: Vec::new(),
        }
    }

    /// Adds one value; empty values are dropped here already, so no renderer can emit one.
    pub fn add(&mut self, name: impl Into<Cow<'a, str>>, value: impl Into<Cow<'a, str>>) {
        let value = value.into();
        if !value.is_empty() {
            self.attributes.push((name.into(), value));
        }
    }

    /// Adds every value of `value` (one for scalars, each item of a list).
    pub fn add_value(&mut self, name: &'a str, value: &'a Value) {
        for text in texts(value) {
            self.add(name, text);
        }
    }

    /// The values of one attribute, in order.
    pub fn values<'s>(&'s self, name: &'s str) -> impl Iterator<Item = &'s str> + 's {
        self.attributes
            .iter()
            .filter(move |(key, _)| key == name)
            .map(|(_, value)| value.as_ref())
    }

    /// The same entry owning all its text, free of the mapping and entities it was built from.
    pub fn into_owned(self) -> LdapEntry<'static> {
        LdapEntry {
            dn: self.dn,
            object_classes: self.object_classes,
            attributes: self
                .attributes
                .into_iter()
                .map(|(name, value)| {
                    (
                        Cow::Owned(name.into_owned()),
                        Cow::Owned(value.into_owned()),
                    )
                })
                .collect(),
        }
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

/// Where [`super::mapping::Mapping::apply_to`] puts an entry's attributes: an [`LdapEntry`] for
/// callers that look at entries, or straight into the LDIF ([`super::writer::EntryWriter`]) when
/// rendering, which saves building a million small strings for a large site. Both drop empty
/// values.
pub trait EntryOut<'a> {
    /// Adds a value that lives as long as the mapping and the entities.
    fn add_str(&mut self, name: &'a str, value: &'a str);
    /// Adds a value made for this entry only.
    fn add_string(&mut self, name: &'a str, value: &str);
    /// Adds every value of `value` (one for scalars, each item of a list).
    fn add_value(&mut self, name: &'a str, value: &'a Value);
    /// Whether the entry has a value of `name`.
    fn has(&self, name: &str) -> bool;
    /// Whether the entry has `name: value`. Only asked for attributes [`super::mapping::Mapping`]
    /// says a foreign key may repeat.
    fn has_value(&self, name: &str, value: &str) -> bool;
}

impl<'a> EntryOut<'a> for LdapEntry<'a> {
    fn add_str(&mut self, name: &'a str, value: &'a str) {
        self.add(name, value);
    }

    fn add_string(&mut self, name: &'a str, value: &str) {
        self.add(name, value.to_owned());
    }

    fn add_value(&mut self, name: &'a str, value: &'a Value) {
        LdapEntry::add_value(self, name, value);
    }

    fn has(&self, name: &str) -> bool {
        self.values(name).next().is_some()
    }

    fn has_value(&self, name: &str, value: &str) -> bool {
        self.values(name).any(|existing| existing == value)
    }
}

/// GLUE2's time format (RFC 3339, UTC, whole seconds), as the JSON rendering writes it.
pub fn time(time: &DateTime<Utc>) -> String {
    time.format("%Y-%m-%dT%H:%M:%SZ").to_string()
}

/// An entity value as LDAP strings: counts keep their fraction (`0.5`), floats print the shortest
/// form that reads back the same, lists give one string per item. Text is borrowed, not copied.
pub fn texts<'v>(value: &'v Value<'_>) -> impl Iterator<Item = Cow<'v, str>> {
    let (scalar, list) = match value {
        Value::List(list) => (None, list.as_slice()),
        Value::Text(text) => (Some(Cow::Borrowed(text.as_ref())), &[][..]),
        other => {
            let mut text = String::new();
            push_text(&mut text, other);
            (Some(Cow::Owned(text)), &[][..])
        }
    };
    scalar
        .into_iter()
        .chain(list.iter().map(|item| Cow::Borrowed(item.as_str())))
}

/// A single-valued entity value as one string (lists joined by `,`, which only the OtherInfo
/// fallback ever needs).
pub fn text<'v>(value: &'v Value<'_>) -> Cow<'v, str> {
    match value {
        Value::Text(text) => Cow::Borrowed(text.as_ref()),
        other => {
            let mut text = String::new();
            push_text(&mut text, other);
            Cow::Owned(text)
        }
    }
}

/// Appends `int` in decimal, as `{int}` formats it; without the formatting machinery, which costs
/// more than the digits when a site has a million numbers.
fn push_int(out: &mut String, mut int: u64) {
    let mut digits = [0u8; 20];
    let mut start = digits.len();
    loop {
        start -= 1;
        digits[start] = b'0' + (int % 10) as u8;
        int /= 10;
        if int == 0 {
            break;
        }
    }
    out.extend(digits[start..].iter().map(|&digit| char::from(digit)));
}

/// Appends [`text`] of `value` to `out`.
pub fn push_text(out: &mut String, value: &Value) {
    // Writing to a String cannot fail.
    let _ = match value {
        Value::Text(text) => {
            out.push_str(text);
            Ok(())
        }
        Value::Int(int) => {
            push_int(out, *int);
            Ok(())
        }
        Value::Count(count) => match count.as_whole() {
            // Whole counts print as integers (GpuCount's Display), the common case. Below 2^43,
            // Display's rounding to the thousandth is exact and cannot change them.
            Some(whole) if whole < 1 << 43 => {
                push_int(out, whole);
                Ok(())
            }
            _ => write!(out, "{count}"),
        },
        Value::Float(float) => write!(out, "{float}"),
        Value::List(list) => {
            for (index, item) in list.iter().enumerate() {
                if index > 0 {
                    out.push(',');
                }
                out.push_str(item);
            }
            Ok(())
        }
        Value::Time(at) => write!(out, "{}", at.format("%Y-%m-%dT%H:%M:%SZ")),
    };
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gpu::GpuCount;

    #[test]
    fn empty_values_never_enter_an_entry() {
        let list = Value::List(vec![String::new(), "x".into()]);
        let empty = Value::Text("".into());
        let mut entry = LdapEntry::new("o=x".into(), &["top"]);
        entry.add("a", "");
        entry.add_value("b", &list);
        entry.add_value("c", &empty);
        let names: Vec<&str> = entry.attributes.iter().map(|(n, _)| n.as_ref()).collect();
        assert_eq!(names, ["b"]);
        assert_eq!(entry.values("b").collect::<Vec<_>>(), ["x"]);
    }

    #[test]
    fn integers_print_as_display_does() {
        for int in [0, 7, 10, 99, 100, 999_999_999, u64::MAX] {
            let mut out = String::from("x");
            push_int(&mut out, int);
            assert_eq!(out, format!("x{int}"));
        }
        let mut out = String::new();
        push_text(&mut out, &Value::Count(GpuCount::whole(12)));
        push_text(
            &mut out,
            &Value::Count(GpuCount::new(2.0004).expect("valid")),
        );
        assert_eq!(out, "122");
    }

    #[test]
    fn counts_keep_fractions_and_floats_read_back() {
        let half = GpuCount::new(0.5).expect("valid");
        let all = |value: &Value| texts(value).map(Cow::into_owned).collect::<Vec<_>>();
        assert_eq!(all(&Value::Count(half)), ["0.5"]);
        assert_eq!(all(&Value::Count(GpuCount::whole(4))), ["4"]);
        assert_eq!(all(&Value::Float(52.37)), ["52.37"]);
        assert_eq!(all(&Value::List(vec!["a".into(), "b".into()])), ["a", "b"]);
        assert_eq!(text(&Value::List(vec!["a".into(), "b".into()])), "a,b");
    }
}
