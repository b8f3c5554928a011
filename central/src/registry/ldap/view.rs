//! The federation view as LDAP entries: what a top-level BDII publishes for the sites it knows.
//!
//! ```text
//! GLUE2GroupID=grid,o=glue                                       the base (a GLUE2Group)
//!   GLUE2DomainID=<site>,GLUE2GroupID=grid,o=glue                the site's AdminDomain
//!     GLUE2LocationID=...,GLUE2DomainID=<site>,...               its location and contacts
//!     GLUE2GroupID=resource,GLUE2DomainID=<site>,...             the site's services, as in
//!       GLUE2ServiceID=...,GLUE2GroupID=resource,...             the site's own LDIF
//! ```
//!
//! This is the layout a top-level BDII builds from its site BDIIs: each site's `o=glue` becomes
//! `GLUE2DomainID=<site>,GLUE2GroupID=grid,o=glue`, so GLUE2 clients that know a top-BDII find
//! everything where they expect it. The entries themselves come from the project's LDIF renderer
//! (`accelfed_schemas::render::ldif::entries_of`), so a site's entries carry the same classes,
//! attributes and values as its own `accelfed provide --format ldif-glue20` output; only the DN
//! suffix moves.

use chrono::{DateTime, Utc};

use accelfed_schemas::glue::entity::Entity;
use accelfed_schemas::render::ldif::dn::{self, RESOURCE_GROUP, SUFFIX};
use accelfed_schemas::render::ldif::{LdifMode, entries_of};

use accelfed_schemas::render::ldif::dn::rdns;

use super::entry::DirEntry;

/// One site's part of the view: its entities as the registry read them from its latest document.
#[derive(Debug, Clone, Copy)]
pub struct SiteEntities<'a> {
    pub site: &'a str,
    pub entities: &'a [Entity<'a>],
    pub creation_time: DateTime<Utc>,
    pub validity_s: u64,
}

/// Every entry of the view under `base` (whose first RDN is `GLUE2GroupID=<name>`, checked when
/// the configuration is read), the base entry first, then each site's subtree parents first.
pub fn federation_entries(base: &str, mode: LdifMode, sites: &[SiteEntities<'_>]) -> Vec<DirEntry> {
    let mut out = vec![base_entry(base)];
    for site in sites {
        site_entries(base, mode, site, &mut out);
    }
    out
}

/// The GLUE2Group entry at `base`.
pub fn base_entry(base: &str) -> DirEntry {
    let mut entry = DirEntry::new(base);
    entry.add("objectClass", "GLUE2Group");
    let name = rdns(base)
        .first()
        .and_then(|rdn| rdn.split_once('='))
        .and_then(|(_, value)| dn::unescape_value(value).ok())
        .unwrap_or_default();
    entry.add("GLUE2GroupID", name);
    entry
}

/// Appends the subtree of one site.
fn site_entries(base: &str, mode: LdifMode, site: &SiteEntities<'_>, out: &mut Vec<DirEntry>) {
    let domain_dn = dn::child("GLUE2DomainID", site.site, base);
    let rendered = entries_of(mode, site.entities, &site.creation_time, site.validity_s);
    let mut has_domain = false;
    let start = out.len();
    for entry in &rendered {
        let Some(moved) = rebase(&entry.dn, &domain_dn, base) else {
            continue;
        };
        has_domain |= moved == domain_dn;
        out.push(DirEntry::from_rendered(entry, moved));
    }
    if !has_domain {
        // A document without an AdminDomain still needs the entry its services hang under.
        let mut domain = DirEntry::new(domain_dn);
        domain.add("objectClass", "GLUE2Domain");
        domain.add("objectClass", "GLUE2AdminDomain");
        domain.add("GLUE2DomainID", site.site);
        out.insert(start, domain);
    }
}

/// The DN a rendered entry gets in the view: the resource group and what is under it move under
/// the site's domain entry; the domain's own subtree moves from `o=glue` to `base`. `None` for a
/// DN outside both (the renderer writes none).
fn rebase(rendered: &str, domain_dn: &str, base: &str) -> Option<String> {
    let head = rendered.strip_suffix(SUFFIX)?;
    if rendered == RESOURCE_GROUP || rendered.ends_with(&format!(",{RESOURCE_GROUP}")) {
        Some(format!("{head}{domain_dn}"))
    } else {
        Some(format!("{head}{base}"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use accelfed_schemas::glue::entity::Class;
    use accelfed_schemas::glue::sample::snapshot;
    use accelfed_schemas::render::ldif::dn::{dn_key, is_under};
    use accelfed_schemas::render::ldif::{entries_glue20, entries_glue21};

    const BASE: &str = "GLUE2GroupID=grid,o=glue";

    fn view_of(site: &str, mode: LdifMode) -> Vec<DirEntry> {
        let snapshot = snapshot(site);
        let entities = snapshot.entities();
        federation_entries(
            BASE,
            mode,
            &[SiteEntities {
                site,
                entities: &entities,
                creation_time: snapshot.creation_time,
                validity_s: snapshot.validity_s,
            }],
        )
    }

    #[test]
    fn entries_of_an_entity_list_equal_the_snapshots_own() {
        let snapshot = snapshot("SAMPLE-SITE");
        let entities = snapshot.entities();
        for (mode, own) in [
            (LdifMode::Glue20, entries_glue20(&snapshot)),
            (LdifMode::Glue21, entries_glue21(&snapshot)),
        ] {
            let read_back = entries_of(
                mode,
                &entities,
                &snapshot.creation_time,
                snapshot.validity_s,
            );
            assert_eq!(read_back, own, "{mode:?}");
        }
    }

    #[test]
    fn each_site_gets_a_subtree_under_the_grid_group() {
        let view = view_of("SITE-A", LdifMode::Glue20);
        assert_eq!(view[0].dn, BASE);
        assert_eq!(view[1].dn, "GLUE2DomainID=SITE-A,GLUE2GroupID=grid,o=glue");
        let domain = &view[1].dn;
        assert!(view[1..].iter().all(|entry| is_under(&entry.dn, domain)));
        assert!(view.iter().any(|entry| entry.dn
            == "GLUE2GroupID=resource,GLUE2DomainID=SITE-A,GLUE2GroupID=grid,o=glue"));
        let service = view
            .iter()
            .find(|entry| {
                entry
                    .dn
                    .starts_with("GLUE2ServiceID=urn:accelfed:SITE-A:service:cloud,")
            })
            .expect("the cloud service is in the view");
        assert!(
            service
                .dn
                .ends_with(",GLUE2GroupID=resource,GLUE2DomainID=SITE-A,GLUE2GroupID=grid,o=glue")
        );
        // Every entry's parent is in the view before it.
        let mut seen = std::collections::HashSet::from([dn_key("o=glue")]);
        for entry in &view {
            let parent = rdns(&entry.dn)[1..].join(",");
            assert!(seen.contains(&dn_key(&parent)), "{}", entry.dn);
            seen.insert(dn_key(&entry.dn));
        }
    }

    #[test]
    fn a_site_name_that_needs_escaping_stays_one_rdn() {
        let view = view_of("a,b+c", LdifMode::Glue21);
        assert_eq!(
            view[1].dn,
            "GLUE2DomainID=a\\2Cb\\2Bc,GLUE2GroupID=grid,o=glue"
        );
        assert!(
            view[1..]
                .iter()
                .all(|entry| is_under(&entry.dn, &view[1].dn))
        );
    }

    /// `entities` without those of `drop`'s classes, parent indices moved to match.
    fn without<'a>(entities: Vec<Entity<'a>>, drop: &[Class]) -> Vec<Entity<'a>> {
        let mut new_index = vec![None; entities.len()];
        let mut kept = Vec::new();
        for (index, mut entity) in entities.into_iter().enumerate() {
            if drop.contains(&entity.class) {
                continue;
            }
            entity.parent = entity.parent.and_then(|parent| new_index[parent]);
            new_index[index] = Some(kept.len());
            kept.push(entity);
        }
        kept
    }

    #[test]
    fn a_document_without_an_admin_domain_still_gets_its_domain_entry() {
        let snapshot = snapshot("SITE-B");
        let entities = without(
            snapshot.entities(),
            &[Class::AdminDomain, Class::Location, Class::Contact],
        );
        let view = federation_entries(
            BASE,
            LdifMode::Glue20,
            &[SiteEntities {
                site: "SITE-B",
                entities: &entities,
                creation_time: snapshot.creation_time,
                validity_s: snapshot.validity_s,
            }],
        );
        assert_eq!(view[1].dn, "GLUE2DomainID=SITE-B,GLUE2GroupID=grid,o=glue");
        assert!(
            view[1]
                .values("objectClass")
                .expect("classes")
                .contains("GLUE2AdminDomain")
        );
        assert!(
            view[2..]
                .iter()
                .all(|entry| is_under(&entry.dn, &view[1].dn))
        );
    }

    #[test]
    fn the_base_entry_is_a_group_named_by_its_rdn() {
        let entry = base_entry("GLUE2GroupID=grid,o=glue");
        assert_eq!(
            entry
                .values("GLUE2GroupID")
                .map(|v| v.iter().cloned().collect::<Vec<_>>()),
            Some(vec!["grid".to_owned()])
        );
    }
}
