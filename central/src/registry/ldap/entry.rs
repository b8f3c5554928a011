//! A directory entry as the sync compares it: a DN and a set of values per attribute.
//!
//! Both sides of the diff become this shape: the entries the renderer produces for the federation
//! view, and the entries read back from the server. LDAP compares attribute names without regard
//! to case and treats values as sets, so attributes are keyed by their lower-cased name and hold a
//! sorted set; DNs are compared by [`dn_key`], which undoes escaping differences (a server may
//! answer `\2C` where we wrote `\,`).

use std::collections::{BTreeMap, BTreeSet};

use accelfed_schemas::render::ldif::dn::unescape_value;
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

/// The RDNs of a DN, outermost last, split at unescaped commas (values stay escaped). Spaces
/// around an RDN (which RFC 2253 allowed after a comma) are dropped; nothing else is: a value's
/// own leading or trailing space is escaped (`\20`, `\ `), and any other white space or control
/// character at its edge (a pushed ID may end in a tab or a newline) is part of the value.
pub fn rdns(dn: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut start = 0;
    let mut escaped = false;
    for (index, ch) in dn.char_indices() {
        if escaped {
            escaped = false;
            continue;
        }
        match ch {
            '\\' => escaped = true,
            ',' => {
                out.push(trim_rdn(&dn[start..index]));
                start = index + 1;
            }
            _ => {}
        }
    }
    let last = trim_rdn(&dn[start..]);
    if !out.is_empty() || !last.is_empty() {
        out.push(last);
    }
    out
}

/// `rdn` without the spaces around it, keeping an escaped trailing space (`a\ `).
fn trim_rdn(rdn: &str) -> &str {
    let mut rdn = rdn.trim_start_matches(' ');
    while let Some(rest) = rdn.strip_suffix(' ') {
        let backslashes = rest.bytes().rev().take_while(|&byte| byte == b'\\').count();
        if backslashes % 2 == 1 {
            break;
        }
        rdn = rest;
    }
    rdn
}

/// How many RDNs `dn` has: a parent always has fewer than its children.
pub fn depth(dn: &str) -> usize {
    rdns(dn).len()
}

/// A DN in a form two spellings of the same name share: attribute types lower-cased, values
/// unescaped (GLUE2 values compare case-exactly, so their case is kept). A value that does not
/// unescape is kept as written: it can then only equal itself.
pub fn dn_key(dn: &str) -> String {
    let mut key = String::with_capacity(dn.len());
    for (index, rdn) in rdns(dn).into_iter().enumerate() {
        if index > 0 {
            // A character no unescaped value can hold is a safe separator.
            key.push('\u{1}');
        }
        match rdn.split_once('=') {
            Some((kind, value)) => {
                key.push_str(&kind.trim().to_ascii_lowercase());
                key.push('=');
                match unescape_value(value) {
                    Ok(value) => key.push_str(&value),
                    Err(_) => key.push_str(value),
                }
            }
            None => key.push_str(rdn),
        }
    }
    key
}

/// Whether `dn` is `base` or lies under it.
pub fn is_under(dn: &str, base: &str) -> bool {
    let dn = rdns(dn);
    let base = rdns(base);
    dn.len() >= base.len()
        && dn[dn.len() - base.len()..]
            .iter()
            .zip(&base)
            .all(|(a, b)| dn_key(a) == dn_key(b))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rdns_split_at_unescaped_commas_only() {
        assert_eq!(
            rdns("GLUE2DomainID=a\\,b,GLUE2GroupID=grid,o=glue"),
            ["GLUE2DomainID=a\\,b", "GLUE2GroupID=grid", "o=glue"]
        );
        assert_eq!(rdns("o=glue"), ["o=glue"]);
        assert!(rdns("").is_empty());
        assert_eq!(depth("x=a\\\\,y=b"), 2);
    }

    #[test]
    fn only_spaces_around_rdns_are_dropped() {
        // Found by the ldap_dn fuzz target: an ID ending in a newline (a registry push may carry
        // one) lost it in the key, so `x\n` and `x` were one entry to the sync's plan.
        assert_ne!(
            dn_key("GLUE2DomainID=x\n,o=glue"),
            dn_key("GLUE2DomainID=x,o=glue")
        );
        assert_eq!(rdns("a=x\t, b=y "), ["a=x\t", "b=y"]);
        assert_eq!(dn_key("a=x\\ ,o=glue"), "a=x \u{1}o=glue");
        assert_eq!(dn_key("a=x\\\\ ,o=glue"), "a=x\\\u{1}o=glue");
        assert!(rdns("  ").is_empty());
    }

    #[test]
    fn two_escapings_of_the_same_dn_share_a_key() {
        assert_eq!(
            dn_key("GLUE2DomainID=a\\,b,o=glue"),
            dn_key("glue2domainid=a\\2Cb, O=glue")
        );
        assert_ne!(
            dn_key("GLUE2DomainID=A,o=glue"),
            dn_key("GLUE2DomainID=a,o=glue")
        );
        assert_ne!(dn_key("x=a\\,b"), dn_key("x=a,b"));
    }

    #[test]
    fn under_compares_whole_rdns() {
        assert!(is_under(
            "a=1,GLUE2GroupID=grid,o=glue",
            "GLUE2GroupID=grid,o=glue"
        ));
        assert!(is_under(
            "GLUE2GroupID=grid,o=glue",
            "glue2groupid=grid,o=glue"
        ));
        assert!(!is_under(
            "a=1,GLUE2GroupID=gridx,o=glue",
            "GLUE2GroupID=grid,o=glue"
        ));
        assert!(!is_under("o=glue", "GLUE2GroupID=grid,o=glue"));
    }

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
