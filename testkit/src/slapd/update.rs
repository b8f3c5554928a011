//! One BDII update cycle against the harness's slapd: the server's entries are brought to a new
//! LDIF the way a BDII's update brings its database to what the providers print now, by adding
//! what is new, modifying what changed (every attribute replaced, `objectClass` included) and
//! deleting what is gone.
//!
//! Debian 12's `bdii` package cannot stand in for this: its `bdii-update` calls `ldapadd -h HOST
//! -p PORT`, flags OpenLDAP 2.5's tools refuse, so a stock BDII's cycle fails on this distribution.
//! The cycle here compares with what slapd itself returns (DNs as slapd spells them), so an entry
//! whose DN we spell differently from slapd shows up as deleted and added on every cycle, and an
//! entry whose structural class changes is refused as slapd refuses it for a BDII
//! (`Cannot modify object class (69)`).

use std::collections::{BTreeMap, HashSet};
use std::fmt;

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use ldap3::{LdapConn, Mod, Scope, SearchEntry};

use super::{Result, SUFFIX, Slapd, SlapdError};

/// One entry: its DN and attributes (names as written, values in order).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LdifEntry {
    pub dn: String,
    pub attrs: Vec<(String, Vec<String>)>,
}

impl LdifEntry {
    /// The values of `name` (compared case-insensitively, as LDAP does).
    pub fn values(&self, name: &str) -> &[String] {
        self.attrs
            .iter()
            .find(|(key, _)| key.eq_ignore_ascii_case(name))
            .map_or(&[], |(_, values)| values.as_slice())
    }

    /// The entry as LDIF, every value base64-encoded (so any value and DN is safe).
    pub fn to_ldif(&self) -> String {
        let mut out = format!("dn:: {}\n", STANDARD.encode(&self.dn));
        for (name, values) in &self.attrs {
            for value in values {
                out.push_str(&format!("{name}:: {}\n", STANDARD.encode(value)));
            }
        }
        out.push('\n');
        out
    }
}

/// Why an LDIF could not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("LDIF record {record}, line {line:?}: {problem}")]
pub struct LdifError {
    pub record: usize,
    pub line: String,
    pub problem: &'static str,
}

/// Reads LDIF records (RFC 2849: folded lines, `::` base64 values, `#` comments).
pub fn parse_ldif(ldif: &[u8]) -> std::result::Result<Vec<LdifEntry>, LdifError> {
    let text = String::from_utf8_lossy(ldif).replace("\r\n", "\n");
    let unfolded = text.replace("\n ", "");
    let mut entries = Vec::new();
    for (record, block) in unfolded.split("\n\n").enumerate() {
        let mut dn = None;
        let mut attrs: Vec<(String, Vec<String>)> = Vec::new();
        for line in block.lines().filter(|line| !line.starts_with('#')) {
            let problem = |problem| LdifError {
                record,
                line: line.to_owned(),
                problem,
            };
            let (name, rest) = line.split_once(':').ok_or_else(|| problem("no `:`"))?;
            let value = match rest.strip_prefix(':') {
                Some(encoded) => {
                    let bytes = STANDARD
                        .decode(encoded.trim())
                        .map_err(|_| problem("bad base64"))?;
                    String::from_utf8(bytes).map_err(|_| problem("not UTF-8"))?
                }
                None => rest.trim_start().to_owned(),
            };
            if name.eq_ignore_ascii_case("dn") {
                dn = Some(value);
            } else if let Some((_, values)) = attrs
                .iter_mut()
                .find(|(key, _)| key.eq_ignore_ascii_case(name))
            {
                values.push(value);
            } else {
                attrs.push((name.to_owned(), vec![value]));
            }
        }
        match dn {
            Some(dn) => entries.push(LdifEntry { dn, attrs }),
            None if attrs.is_empty() => {}
            None => {
                return Err(LdifError {
                    record,
                    line: block.lines().next().unwrap_or_default().to_owned(),
                    problem: "a record without a dn",
                });
            }
        }
    }
    Ok(entries)
}

/// What one cycle did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct UpdateReport {
    pub added: usize,
    pub modified: usize,
    pub deleted: usize,
    /// `<dn>: <server's reason>` for each operation the server refused.
    pub refused: Vec<String>,
}

impl UpdateReport {
    /// Whether the cycle changed nothing and nothing was refused.
    pub fn is_unchanged(&self) -> bool {
        self.added == 0 && self.modified == 0 && self.deleted == 0 && self.refused.is_empty()
    }
}

impl fmt::Display for UpdateReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "added {} modified {} deleted {} refused {}",
            self.added,
            self.modified,
            self.deleted,
            self.refused.len()
        )?;
        for refusal in &self.refused {
            write!(f, "\n  {refusal}")?;
        }
        Ok(())
    }
}

/// Attribute name (lower case) -> values, the way entries are compared.
type Values = BTreeMap<String, (String, HashSet<String>)>;

fn values_of(attrs: impl IntoIterator<Item = (String, Vec<String>)>) -> Values {
    attrs
        .into_iter()
        .map(|(name, values)| {
            (
                name.to_ascii_lowercase(),
                (name, values.into_iter().collect()),
            )
        })
        .collect()
}

/// How deep a DN is: its RDNs, counting commas that are not escaped.
fn depth(dn: &str) -> usize {
    let mut escaped = false;
    let mut commas = 0;
    for ch in dn.chars() {
        match ch {
            _ if escaped => escaped = false,
            '\\' => escaped = true,
            ',' => commas += 1,
            _ => {}
        }
    }
    commas + 1
}

impl Slapd {
    /// Every entry under `base` (the suffix entry itself left out), with its user attributes.
    pub fn entries(&self, base: &str) -> Result<Vec<LdifEntry>> {
        let mut ldap = self.connect()?;
        let (found, _) = ldap
            .search(base, Scope::Subtree, "(objectClass=*)", vec!["*"])
            .and_then(|result| result.success())
            .map_err(|source| self.ldap_error(format!("search under {base}"), source))?;
        Ok(found
            .into_iter()
            .map(SearchEntry::construct)
            .filter(|entry| entry.dn != SUFFIX)
            .map(|entry| LdifEntry {
                dn: entry.dn,
                attrs: entry.attrs.into_iter().collect(),
            })
            .collect())
    }

    /// Brings the server's entries under `o=glue` to `desired` (parents before children), as a
    /// BDII update cycle does; refused operations are reported, not errors.
    pub fn update(&self, desired: &[LdifEntry]) -> Result<UpdateReport> {
        let current: BTreeMap<String, Values> = self
            .entries(SUFFIX)?
            .into_iter()
            .map(|entry| (entry.dn, values_of(entry.attrs)))
            .collect();
        let wanted: HashSet<&str> = desired.iter().map(|entry| entry.dn.as_str()).collect();
        let mut ldap = self.connect()?;
        let mut report = UpdateReport::default();

        let mut gone: Vec<&String> = current
            .keys()
            .filter(|dn| !wanted.contains(dn.as_str()))
            .collect();
        gone.sort_by_key(|dn| std::cmp::Reverse(depth(dn)));
        for dn in gone {
            match ldap.delete(dn).and_then(|result| result.success()) {
                Ok(_) => report.deleted += 1,
                Err(err) => report.refused.push(format!("{dn}: delete: {err}")),
            }
        }
        for entry in desired {
            let new = values_of(entry.attrs.clone());
            match current.get(&entry.dn) {
                None => {
                    let attrs: Vec<(String, HashSet<String>)> = new.into_values().collect();
                    match ldap
                        .add(&entry.dn, attrs)
                        .and_then(|result| result.success())
                    {
                        Ok(_) => report.added += 1,
                        Err(err) => report.refused.push(format!("{}: add: {err}", entry.dn)),
                    }
                }
                Some(old) => {
                    let mods = changes(old, &new);
                    if mods.is_empty() {
                        continue;
                    }
                    match modify(&mut ldap, &entry.dn, mods) {
                        Ok(()) => report.modified += 1,
                        Err(err) => report.refused.push(format!("{}: modify: {err}", entry.dn)),
                    }
                }
            }
        }
        Ok(report)
    }

    fn ldap_error(&self, action: String, source: ldap3::LdapError) -> SlapdError {
        SlapdError::Ldap {
            action,
            url: self.url().to_owned(),
            source: Box::new(source),
        }
    }
}

/// The modifications that turn `old` into `new`: changed attributes replaced, missing ones deleted.
fn changes(old: &Values, new: &Values) -> Vec<Mod<String>> {
    let mut mods = Vec::new();
    for (key, (name, values)) in new {
        if old.get(key).map(|(_, old_values)| old_values) != Some(values) {
            mods.push(Mod::Replace(name.clone(), values.clone()));
        }
    }
    for (key, (name, _)) in old {
        if !new.contains_key(key) {
            mods.push(Mod::Delete(name.clone(), HashSet::new()));
        }
    }
    mods
}

fn modify(
    ldap: &mut LdapConn,
    dn: &str,
    mods: Vec<Mod<String>>,
) -> std::result::Result<(), ldap3::LdapError> {
    ldap.modify(dn, mods)
        .and_then(|result| result.success())
        .map(|_| ())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ldif_records_are_read_with_folding_and_base64() {
        let ldif = b"# comment\ndn:: R0xVRTJEb21haW5JRD3DnCxvPWdsdWU=\nobjectClass: GLUE2Domain\n\
                     objectClass: GLUE2AdminDomain\nGLUE2EntityOtherInfo: a long\n  value\n\n";
        let entries = parse_ldif(ldif).unwrap_or_default();
        assert_eq!(entries.len(), 1);
        assert_eq!(entries[0].dn, "GLUE2DomainID=Ü,o=glue");
        assert_eq!(
            entries[0].values("objectclass"),
            ["GLUE2Domain", "GLUE2AdminDomain"]
        );
        assert_eq!(entries[0].values("GLUE2EntityOtherInfo"), ["a long value"]);
        let again = parse_ldif(entries[0].to_ldif().as_bytes()).unwrap_or_default();
        assert_eq!(again, entries);
    }

    #[test]
    fn depth_counts_unescaped_commas() {
        assert_eq!(depth("a=b\\,c,o=glue"), 2);
        assert_eq!(depth("a=b\\2Cc,d=e,o=glue"), 3);
    }
}
