//! Places entities in the DIT and turns them into entries, parents before children.
//!
//! The site goes to `GLUE2DomainID=<site>,o=glue` with its location and contacts beneath it; the
//! services go under the `resource` group (written once, right after the site's subtree), which is
//! `GLUE2GroupID=resource,o=glue` in a resource BDII's layout and
//! `GLUE2GroupID=resource,GLUE2DomainID=<site>,o=glue` in a site BDII's ([`Dit`]); everything else
//! nests under the entity [`Entity::parent`] names, keyed by the ID attribute of its mapping. An
//! entity whose class has no mapping in a mode is folded into its parent by that mode and gets no
//! entry.

use crate::glue::SiteSnapshot;
use crate::glue::entity::{Class, Entity};

use std::ops::Range;

use super::Dit;
use super::dn::{self, RESOURCE_GROUP, SUFFIX};
use super::entry::{self, LdapEntry};
use super::mapping::{Extra, Mapping, Mappings, Stamp};
use super::other_info::Pairs;
use super::writer::{EntryWriter, LdifWriter};
use crate::render::parallel;

/// The creation time and validity every entry of `snapshot` carries.
pub fn stamp(snapshot: &SiteSnapshot) -> Stamp {
    Stamp {
        creation_time: entry::time(&snapshot.creation_time),
        validity: snapshot.validity_s.to_string(),
    }
}

/// The `resource` group the services live in, at `dn`.
pub fn group_entry(dn: &str) -> LdapEntry<'static> {
    let mut group = LdapEntry::new(dn.to_owned(), &["GLUE2Group"]);
    group.add("GLUE2GroupID", "resource");
    group
}

/// The DN of the `resource` group in `dit`: under the site's domain entry in a site BDII's layout
/// (when there is an AdminDomain to hang it under), else under the suffix.
fn resource_group(dit: Dit, entities: &[Entity], mappings: &Mappings) -> String {
    let domain = entities
        .iter()
        .find(|entity| entity.class == Class::AdminDomain && entity.parent.is_none());
    match (dit, domain, mappings.get(Class::AdminDomain)) {
        (Dit::Site, Some(domain), Some(mapping)) => {
            let domain_dn = dn::child(&mapping.id, &domain.id, SUFFIX);
            format!("GLUE2GroupID=resource,{domain_dn}")
        }
        _ => RESOURCE_GROUP.to_owned(),
    }
}

/// Where every entity's entry goes, worked out once (in tree order: a DN needs its parent's), so
/// the entries themselves can be made in any order, and on several threads.
pub struct Plan<'e> {
    entities: &'e [Entity<'e>],
    stamp: &'e Stamp,
    mappings: &'e Mappings,
    /// Indexed like `entities` (missing means none).
    extras: Vec<Extra<'e>>,
    /// The DN of each entity that has children; only those are kept (a large site's accelerators
    /// have none).
    dns: Vec<Option<String>>,
    /// The entity the `resource` group entry goes right before (the first service);
    /// `entities.len()` when it comes last.
    group_before: usize,
    /// The DN of the `resource` group.
    resource_group: String,
}

impl<'e> Plan<'e> {
    /// The plan for `entities`. `extras` is indexed like `entities` (missing means none).
    pub fn new(
        entities: &'e [Entity<'e>],
        stamp: &'e Stamp,
        extras: Vec<Extra<'e>>,
        mappings: &'e Mappings,
        dit: Dit,
    ) -> Self {
        let mut is_parent = vec![false; entities.len()];
        for parent in entities.iter().filter_map(|entity| entity.parent) {
            if let Some(flag) = is_parent.get_mut(parent) {
                *flag = true;
            }
        }
        let mut plan = Plan {
            entities,
            stamp,
            mappings,
            extras,
            dns: vec![None; entities.len()],
            group_before: entities.len(),
            resource_group: resource_group(dit, entities, mappings),
        };
        for (index, entity) in entities.iter().enumerate() {
            let Some((mapping, parent_dn)) = plan.place(index) else {
                continue;
            };
            let dn = is_parent[index].then(|| dn::child(&mapping.id, &entity.id, parent_dn));
            if entity.parent.is_none()
                && entity.class != Class::AdminDomain
                && plan.group_before == entities.len()
            {
                plan.group_before = index;
            }
            plan.dns[index] = dn;
        }
        plan
    }

    /// The mapping and parent DN of entity `index`; `None` when it gets no entry: its class is
    /// folded in this mode, or its parent has no entry (the model never nests under a folded
    /// class, so that only guards against a future model change).
    fn place(&self, index: usize) -> Option<(&'e Mapping, &str)> {
        let entity = self.entities.get(index)?;
        let mapping = self.mappings.get(entity.class)?;
        let parent_dn = match entity.parent {
            Some(parent) => self.dns.get(parent)?.as_deref()?,
            None if entity.class == Class::AdminDomain => SUFFIX,
            None => self.resource_group.as_str(),
        };
        Some((mapping, parent_dn))
    }

    fn extra(&self, index: usize) -> Option<&Extra<'e>> {
        self.extras.get(index)
    }

    /// Hands the entries to `sink` in tree order.
    pub fn each(&self, mut sink: impl FnMut(LdapEntry<'e>)) {
        let mut pairs = Pairs::default();
        let none = Extra::default();
        for (index, entity) in self.entities.iter().enumerate() {
            if index == self.group_before {
                sink(group_entry(&self.resource_group));
            }
            let Some((mapping, parent_dn)) = self.place(index) else {
                continue;
            };
            let dn = dn::child(&mapping.id, &entity.id, parent_dn);
            let mut entry = LdapEntry::new(dn, &mapping.object_classes);
            let extra = self.extra(index).unwrap_or(&none);
            mapping.apply_to(entity, self.stamp, extra, &mut pairs, &mut entry);
            sink(entry);
        }
        if self.group_before == self.entities.len() {
            sink(group_entry(&self.resource_group));
        }
    }

    /// The LDIF of all entries, rendered in up to `parts` pieces (one per thread).
    pub fn render(&self, parts: usize) -> Vec<u8> {
        self.render_in(&parallel::split(&self.weights(), parts))
    }

    /// What each entity costs to write, roughly: its lines.
    pub fn weights(&self) -> Vec<usize> {
        self.entities
            .iter()
            .map(|entity| 4 + entity.attributes.len() + entity.associations.len())
            .collect()
    }

    /// The LDIF of all entries, each of `ranges` (contiguous, in order, covering every entity)
    /// rendered on its own thread.
    pub fn render_in(&self, ranges: &[Range<usize>]) -> Vec<u8> {
        let pieces = parallel::run(ranges, |position, range| {
            let ldif = if position == 0 {
                // Room for the whole document: the other pieces are appended to this one.
                LdifWriter::with_capacity(self.entities.len() * BYTES_PER_ENTITY)
            } else {
                LdifWriter::following(range.len() * BYTES_PER_ENTITY)
            };
            let mut writer = EntryWriter::new(ldif);
            self.write(range, &mut writer);
            writer.ldif.finish()
        });
        let mut out = parallel::concat(pieces);
        // A piece that follows an empty one starts with the separator it did not need.
        if out.first() == Some(&b'\n') {
            out.remove(0);
        }
        out
    }

    /// Writes the entries of the entities in `range`.
    fn write(&self, range: Range<usize>, writer: &mut EntryWriter<'e>) {
        let mut pairs = Pairs::default();
        let mut dn = String::new();
        let none = Extra::default();
        let end = range.end;
        for index in range {
            if index == self.group_before {
                group_entry(&self.resource_group).write(&mut writer.ldif);
            }
            let Some((mapping, parent_dn)) = self.place(index) else {
                continue;
            };
            let entity = &self.entities[index];
            dn.clear();
            dn::push_child(&mut dn, &mapping.id, &entity.id, parent_dn);
            writer.begin(&dn, &mapping.object_classes, mapping.asks_values());
            let extra = self.extra(index).unwrap_or(&none);
            mapping.apply_to(entity, self.stamp, extra, &mut pairs, writer);
        }
        if end == self.entities.len() && self.group_before == end {
            group_entry(&self.resource_group).write(&mut writer.ldif);
        }
    }
}

/// Room for the LDIF of one entity, a little more than either mode needs (about 1.3 KB: an entry
/// is ~1 KB with its long DN; GLUE 2.0 mode moves the accelerators' lines to their parents).
/// Growing a 30 MB buffer instead copies it several times; room never written costs no memory.
const BYTES_PER_ENTITY: usize = 1_400;
