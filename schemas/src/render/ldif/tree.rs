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
use super::mapping::{Extra, Mappings, Stamp};

/// The creation time and validity every entry of `snapshot` carries.
pub fn stamp(snapshot: &SiteSnapshot) -> Stamp {
    Stamp {
        creation_time: entry::time(&snapshot.creation_time),
        validity: snapshot.validity_s.to_string(),
    }
}

/// The `resource` group the services live in.
pub fn group_entry() -> LdapEntry<'static> {
    let mut group = LdapEntry::new(RESOURCE_GROUP.to_owned(), &["GLUE2Group"]);
    group.add("GLUE2GroupID", "resource");
    group
}

/// Hands the entries of `entities` to `sink` in tree order. `extras` is indexed like `entities`
/// (missing means none).
pub fn entries<'e>(
    entities: &'e [Entity],
    stamp: &'e Stamp,
    mut extras: Vec<Extra<'e>>,
    mappings: &'e Mappings,
    mut sink: impl FnMut(LdapEntry<'e>),
) {
    // Only entities with children need their DN kept: a large site's accelerators have none.
    let mut is_parent = vec![false; entities.len()];
    for parent in entities.iter().filter_map(|entity| entity.parent) {
        if let Some(flag) = is_parent.get_mut(parent) {
            *flag = true;
        }
    }
    let mut dns: Vec<Option<String>> = vec![None; entities.len()];
    let mut group_written = false;
    for (index, entity) in entities.iter().enumerate() {
        let Some(mapping) = mappings.get(entity.class) else {
            continue;
        };
        let parent_dn = match entity.parent {
            Some(parent) => match dns.get(parent).and_then(Option::as_ref) {
                Some(dn) => dn.as_str(),
                // A parent without an entry cannot hold children; the model never nests under a
                // folded class, so this only guards against a future model change.
                None => continue,
            },
            None if entity.class == Class::AdminDomain => SUFFIX,
            None => {
                if !group_written {
                    sink(group_entry());
                    group_written = true;
                }
                RESOURCE_GROUP
            }
        };
        let dn = dn::child(&mapping.id, &entity.id, parent_dn);
        if is_parent[index] {
            dns[index] = Some(dn.clone());
        }
        let extra = extras
            .get_mut(index)
            .map(std::mem::take)
            .unwrap_or_default();
        sink(mapping.apply(entity, dn, stamp, extra));
    }
    if !group_written {
        sink(group_entry());
    }
}
