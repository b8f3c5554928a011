//! LDIF renderings for BDII, in two modes and two layouts ([`Dit`]). A resource BDII's layout:
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
//! A site BDII's layout puts the `resource` group under the domain,
//! `GLUE2GroupID=resource,GLUE2DomainID=<site>,o=glue`, so a top BDII that reads the site from
//! `GLUE2DomainID=<site>,o=glue` (and re-roots it under `GLUE2GroupID=grid,o=glue`) gets every
//! service and GPU entry with it.
//!
//! `o=glue` itself is not written (a BDII creates it). Entries come parents first, attributes in a
//! fixed order: the same snapshot always gives the same bytes. No DN is given one structural class
//! in one mode and another in the other (the GLUE 2.1 cloud entries have their own RDN attribute,
//! [`schema21`]), so a BDII can be switched between the modes.
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

/// LDIF with only the official GLUE 2.0 schema's classes and attributes, in a resource BDII's
/// layout.
pub fn render_glue20(snapshot: &SiteSnapshot) -> Vec<u8> {
    render(snapshot, LdifMode::Glue20, Dit::Resource)
}

/// LDIF with accelfed's GLUE 2.1 classes (schemas/ldap/accelfed-glue21.schema), in a resource
/// BDII's layout.
pub fn render_glue21(snapshot: &SiteSnapshot) -> Vec<u8> {
    render(snapshot, LdifMode::Glue21, Dit::Resource)
}

/// LDIF in `mode` and the layout `dit`.
pub fn render(snapshot: &SiteSnapshot, mode: LdifMode, dit: Dit) -> Vec<u8> {
    let entities = snapshot.entities();
    let stamp = tree::stamp(snapshot);
    let mappings = mode.mappings();
    mode.plan(&entities, &stamp, &mappings, dit)
        .render(parallel::parts())
}

/// Where the services go in the DIT.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Dit {
    /// A resource BDII's: under `GLUE2GroupID=resource,o=glue`, which a site BDII reads.
    #[default]
    Resource,
    /// A site BDII's: under `GLUE2GroupID=resource,GLUE2DomainID=<site>,o=glue`, inside the
    /// subtree a top BDII reads.
    Site,
}

impl Dit {
    pub fn as_str(self) -> &'static str {
        match self {
            Dit::Resource => "resource",
            Dit::Site => "site",
        }
    }
}

impl std::str::FromStr for Dit {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        [Dit::Resource, Dit::Site]
            .into_iter()
            .find(|dit| dit.as_str() == s)
            .ok_or_else(|| format!("unknown DIT layout {s:?} (expected resource or site)"))
    }
}

impl std::fmt::Display for Dit {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
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

impl LdifMode {
    /// This mode's mapping of every class.
    fn mappings(self) -> mapping::Mappings {
        match self {
            LdifMode::Glue20 => mapping::Mappings::new(glue20::mapping),
            LdifMode::Glue21 => mapping::Mappings::new(glue21::mapping),
        }
    }

    /// Where the entries of `entities` go in this mode. The modes differ only in what is folded:
    /// GLUE 2.0 folds GPU facts into their parents and gives cloud shares their instance types
    /// ([`glue20::extras`]); GLUE 2.1 folds nothing.
    fn plan<'e>(
        self,
        entities: &'e [Entity<'e>],
        stamp: &'e mapping::Stamp,
        mappings: &'e mapping::Mappings,
        dit: Dit,
    ) -> tree::Plan<'e> {
        let extras = match self {
            LdifMode::Glue20 => glue20::extras(entities),
            LdifMode::Glue21 => Vec::new(),
        };
        tree::Plan::new(entities, stamp, extras, mappings, dit)
    }
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
    let mappings = mode.mappings();
    mode.plan(entities, stamp, &mappings, Dit::Resource)
        .each(sink);
    out
}
