//! GLUE 2.1 mode: the classes GLUE 2.0 has stay GLUE 2.0 entries ([`super::classes20`]); the
//! accelerator and cloud classes are entries of their own, with the classes and attributes of
//! `schemas/ldap/accelfed-glue21.schema` ([`super::schema21`]). Nothing is folded, so no GPU
//! OtherInfo keys: a fractional count is the only thing that goes to OtherInfo (`Number=0.5`).

use crate::glue::SiteSnapshot;
use crate::glue::entity::{Class, Entity};

use super::classes20;
use super::entry::LdapEntry;
use super::mapping::{Mapping, Mappings, Stamp};
use super::schema21;
use super::tree;

/// Hands each entry of `snapshot` (whose entities are `entities`) in GLUE 2.1 mode to `sink`, in
/// order.
pub fn entries(snapshot: &SiteSnapshot, entities: &[Entity], sink: impl FnMut(LdapEntry<'_>)) {
    entries_stamped(entities, &tree::stamp(snapshot), sink);
}

/// [`entries`] for entities that come with their own stamp rather than a snapshot's.
pub fn entries_stamped(entities: &[Entity], stamp: &Stamp, sink: impl FnMut(LdapEntry<'_>)) {
    let mappings = Mappings::new(mapping);
    tree::entries(entities, stamp, Vec::new(), &mappings, sink);
}

fn mapping(class: Class) -> Option<Mapping> {
    classes20::mapping(class).or_else(|| schema21::def(class).map(schema21::ClassDef::mapping))
}
