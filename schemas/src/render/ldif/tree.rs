//! Places entities in the DIT and turns them into entries, parents before children.
//!
//! The site goes to `GLUE2DomainID=<site>,o=glue` with its location and contacts beneath it; the
//! services go under `GLUE2GroupID=resource,o=glue` (written once, right after the site's subtree);
//! everything else nests under the entity [`Entity::parent`] names, keyed by the ID attribute of its
//! mapping. An entity whose class has no mapping in a mode is folded into its parent by that mode
//! and gets no entry.

use crate::glue::SiteSnapshot;
use crate::glue::entity::{Class, Entity};

use super::dn::{self, RESOURCE_GROUP, SUFFIX};
use super::entry::{self, LdapEntry};
use super::mapping::{Extra, Mapping, Stamp};

/// The creation time and validity every entry of `snapshot` carries.
pub fn stamp(snapshot: &SiteSnapshot) -> Stamp {
    Stamp {
        creation_time: entry::time(&snapshot.creation_time),
        validity: snapshot.validity_s.to_string(),
    }
}

/// The `resource` group the services live in.
pub fn group_entry() -> LdapEntry {
    let mut group = LdapEntry::new(RESOURCE_GROUP.to_owned(), &["GLUE2Group"]);
    group.add("GLUE2GroupID", "resource");
    group
}

/// The entries of `entities` in tree order. `extras` is indexed like `entities` (missing means none).
pub fn entries(
    entities: &[Entity],
    stamp: &Stamp,
    extras: &[Extra],
    mapping: impl Fn(Class) -> Option<Mapping>,
) -> Vec<LdapEntry> {
    let none = Extra::default();
    let mut dns: Vec<Option<String>> = vec![None; entities.len()];
    let mut out = Vec::with_capacity(entities.len() + 1);
    let mut group_written = false;
    for (index, entity) in entities.iter().enumerate() {
        let Some(mapping) = mapping(entity.class) else {
            continue;
        };
        let parent_dn = match entity.parent {
            Some(parent) => match dns.get(parent).and_then(Option::as_ref) {
                Some(dn) => dn.clone(),
                // A parent without an entry cannot hold children; the model never nests under a
                // folded class, so this only guards against a future model change.
                None => continue,
            },
            None if entity.class == Class::AdminDomain => SUFFIX.to_owned(),
            None => {
                if !group_written {
                    out.push(group_entry());
                    group_written = true;
                }
                RESOURCE_GROUP.to_owned()
            }
        };
        let dn = dn::child(&mapping.id, &entity.id, &parent_dn);
        out.push(mapping.apply(
            entity,
            dn.clone(),
            stamp,
            extras.get(index).unwrap_or(&none),
        ));
        dns[index] = Some(dn);
    }
    if !group_written {
        out.push(group_entry());
    }
    out
}
