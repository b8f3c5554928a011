//! LDIF renderings for BDII, in two modes. Both write the same DIT:
//!
//! ```text
//! GLUE2DomainID=<site>,o=glue                       AdminDomain, with Location and Contact beneath
//! GLUE2GroupID=resource,o=glue                      GLUE2Group
//!   GLUE2ServiceID=<id>,GLUE2GroupID=resource,...   each service, with its endpoints, shares and
//!                                                   manager beneath it; environments and instance
//!                                                   types under the manager; policies under their
//!                                                   endpoint or share; accelerators under their parent
//! ```
//!
//! `o=glue` itself is not written (a BDII creates it). Entries come parents first, attributes in a
//! fixed order: the same snapshot always gives the same bytes.
//!
//! * [`render_glue20`]: only the official GLUE20.schema (Debian `glue-schema`). Cloud classes become
//!   their 2.0 counterparts and GPU facts become `GLUE2EntityOtherInfo` values
//!   `GPU.<lid>.<Attribute>=<value>` on the parent entry (`glue20.rs`, [`gpu_info`]).
//! * [`render_glue21`]: the accelerator and cloud classes as entries of their own, defined in
//!   `schemas/ldap/accelfed-glue21.schema` ([`schema21`]), with integer attributes for counts.
//!
//! `docs/formats-ldif.md` is the reader's guide to both.
//!
//! Escaping: DN values per RFC 4514 ([`dn`]); values that are not RFC 2849 SAFE-STRINGs are
//! base64-encoded and long lines folded at 76 characters ([`writer`]); empty values are never
//! written.

mod classes20;
pub mod dn;
pub mod entry;
mod glue20;
mod glue21;
pub mod gpu_info;
mod mapping;
pub mod other_info;
pub mod schema21;
mod schema_file;
mod tree;

pub use schema_file::schema_file;
pub mod writer;

#[cfg(test)]
mod tests;

use crate::glue::SiteSnapshot;
use crate::glue::entity::Entity;

use super::parallel;
use entry::LdapEntry;

/// LDIF with only the official GLUE 2.0 schema's classes and attributes.
pub fn render_glue20(snapshot: &SiteSnapshot) -> Vec<u8> {
    let entities = snapshot.entities();
    let stamp = tree::stamp(snapshot);
    let mappings = glue20::mappings();
    glue20::plan(&entities, &stamp, &mappings).render(parallel::parts())
}

/// LDIF with accelfed's GLUE 2.1 classes (schemas/ldap/accelfed-glue21.schema).
pub fn render_glue21(snapshot: &SiteSnapshot) -> Vec<u8> {
    let entities = snapshot.entities();
    let stamp = tree::stamp(snapshot);
    let mappings = glue21::mappings();
    glue21::plan(&entities, &stamp, &mappings).render(parallel::parts())
}

/// The GLUE 2.0 mode entries, for callers that want to look at entries rather than bytes (the LDAP
/// publisher diffs them).
pub fn entries_glue20(snapshot: &SiteSnapshot) -> Vec<LdapEntry<'static>> {
    let stamp = tree::stamp(snapshot);
    entries_of_stamped(LdifMode::Glue20, &snapshot.entities(), &stamp)
}

/// The GLUE 2.1 mode entries.
pub fn entries_glue21(snapshot: &SiteSnapshot) -> Vec<LdapEntry<'static>> {
    let stamp = tree::stamp(snapshot);
    entries_of_stamped(LdifMode::Glue21, &snapshot.entities(), &stamp)
}

/// The LDIF modes, for callers that choose one by configuration.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LdifMode {
    /// [`render_glue20`]: loads into a stock BDII.
    Glue20,
    /// [`render_glue21`]: needs `schemas/ldap/accelfed-glue21.schema`.
    Glue21,
}

/// The entries of an entity list that was read back from a document rather than built from a
/// snapshot (the federation registry holds sites' GLUE 2.1 JSON), every entry stamped with
/// `creation_time` and `validity_s`. Same DNs and attributes as [`entries_glue20`] and
/// [`entries_glue21`] give for the snapshot the entities came from.
pub fn entries_of(
    mode: LdifMode,
    entities: &[Entity],
    creation_time: &chrono::DateTime<chrono::Utc>,
    validity_s: u64,
) -> Vec<LdapEntry<'static>> {
    let stamp = mapping::Stamp {
        creation_time: entry::time(creation_time),
        validity: validity_s.to_string(),
    };
    entries_of_stamped(mode, entities, &stamp)
}

fn entries_of_stamped(
    mode: LdifMode,
    entities: &[Entity],
    stamp: &mapping::Stamp,
) -> Vec<LdapEntry<'static>> {
    let mut out = Vec::new();
    let sink = |entry: LdapEntry<'_>| out.push(entry.into_owned());
    match mode {
        LdifMode::Glue20 => {
            let mappings = glue20::mappings();
            glue20::plan(entities, stamp, &mappings).each(sink);
        }
        LdifMode::Glue21 => {
            let mappings = glue21::mappings();
            glue21::plan(entities, stamp, &mappings).each(sink);
        }
    }
    out
}
