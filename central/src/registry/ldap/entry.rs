//! A directory entry as the sync compares it: a DN and a set of values per attribute.
//!
//! Both sides of the diff become this shape: the entries the renderer produces for the federation
//! view, and the entries read back from the server. LDAP compares attribute names without regard
//! to case and treats values as sets, so attributes are keyed by their lower-cased name and hold a
//! sorted set; DNs are compared by `dn::dn_key` (schemas), which undoes escaping differences (a server may
//! answer `\2C` where we wrote `\,`).

use std::collections::{BTreeMap, BTreeSet};

use accelfed_schemas::render::ldif::entry::LdapEntry;

/// One attribute: its name as first written, and its values.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Attribute {
    pub name: String,
    pub values: BTreeSet<String>,
}

/// One entry: DN and attributes (`objectClass` among them), keyed by lower-cased name.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct DirEntry {
    pub dn: String,
    pub attributes: BTreeMap<String, Attribute>,
}

impl DirEntry {
    pub fn new(dn: impl Into<String>) -> Self {
        Self {
            dn: dn.into(),
            attributes: BTreeMap::new(),
        }
    }

    /// Adds one value of `name` (a value given twice is kept once, as LDAP would).
    pub fn add(&mut self, name: &str, value: impl Into<String>) {
        self.attributes
            .entry(name.to_ascii_lowercase())
            .or_insert_with(|| Attribute {
                name: name.to_owned(),
                values: BTreeSet::new(),
            })
            .values
            .insert(value.into());
    }

    /// The values of `name` (any case).
    pub fn values(&self, name: &str) -> Option<&BTreeSet<String>> {
        self.attributes
            .get(&name.to_ascii_lowercase())
            .map(|attribute| &attribute.values)
    }

    /// An entry the LDIF renderer produced, with its DN replaced by `dn`.
    pub fn from_rendered(entry: &LdapEntry<'_>, dn: String) -> Self {
        let mut out = Self::new(dn);
        for class in &entry.object_classes {
            out.add("objectClass", *class);
        }
        for (name, value) in &entry.attributes {
            out.add(name, value.as_ref());
        }
        out
    }

    /// An entry as ldap3 returns it from a search.
    pub fn from_search(dn: String, attrs: impl IntoIterator<Item = (String, Vec<String>)>) -> Self {
        let mut out = Self::new(dn);
        for (name, values) in attrs {
            for value in values {
                out.add(&name, value);
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn attributes_ignore_name_case_and_repeated_values() {
        let mut entry = DirEntry::new("o=x");
        entry.add("GLUE2EntityOtherInfo", "a");
        entry.add("glue2entityotherinfo", "a");
        entry.add("GLUE2EntityOtherInfo", "b");
        assert_eq!(entry.attributes.len(), 1);
        assert_eq!(
            entry.values("GLUE2ENTITYOTHERINFO").map(BTreeSet::len),
            Some(2)
        );
        assert_eq!(
            entry.attributes["glue2entityotherinfo"].name,
            "GLUE2EntityOtherInfo"
        );
    }
}
