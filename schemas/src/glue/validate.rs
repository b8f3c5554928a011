//! Whole-document checks: no ID twice, no ID too long for a BDII's LDAP, no association to an
//! entity that is not there, one physical GPU count at every level ([`super::physical`]).
//! Providers call
//! [`SiteSnapshot::validate`] before anything is rendered, so a broken snapshot is never published.

use std::collections::HashSet;

use super::SiteSnapshot;
use super::entity::Class;
use crate::render::ldif::dn::{MAX_RDN_BYTES, rdn_bytes_at_most};

/// A snapshot that must not be published.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SnapshotError {
    #[error("ID {id} appears twice (a {first} and a {second}); local ids must be unique per kind")]
    DuplicateId {
        id: String,
        first: &'static str,
        second: &'static str,
    },
    #[error(
        "{class} ID {id} makes an LDAP RDN of up to {bytes} bytes, more than the {max} a BDII's slapd stores (it would refuse the entry); shorten the site name or the local ids it is built from",
        max = crate::render::ldif::dn::MAX_RDN_BYTES
    )]
    TooLongForLdap {
        class: &'static str,
        /// An excerpt of the ID.
        id: String,
        bytes: usize,
    },
    #[error("{class} {id} refers to {target_class} {target}, which the snapshot does not contain")]
    DanglingReference {
        class: &'static str,
        id: String,
        target_class: &'static str,
        target: String,
    },
    #[error("{0}")]
    Physical(#[from] Box<super::physical::PhysicalMismatch>),
}

impl SiteSnapshot {
    pub fn validate(&self) -> Result<(), SnapshotError> {
        let entities = self.entities_unchecked();
        let mut seen = std::collections::HashMap::with_capacity(entities.len());
        for entity in &entities {
            if let Some(first) = seen.insert(entity.id.as_str(), entity.class) {
                return Err(SnapshotError::DuplicateId {
                    id: entity.id.clone(),
                    first: first.name(),
                    second: entity.class.name(),
                });
            }
        }
        if let Some(too_long) = entities
            .iter()
            .find_map(|entity| too_long_for_ldap(entity.class, &entity.id))
        {
            return Err(too_long);
        }
        let known: HashSet<&str> = seen.keys().copied().collect();
        for entity in &entities {
            for (class, target) in &entity.associations {
                if *class != Class::UserDomain && !known.contains(target.as_str()) {
                    return Err(SnapshotError::DanglingReference {
                        class: entity.class.name(),
                        id: entity.id.clone(),
                        target_class: class.name(),
                        target: target.clone(),
                    });
                }
            }
        }
        super::physical::check(&entities)?;
        Ok(())
    }
}

/// The refusal of an ID whose LDAP RDN would not fit [`MAX_RDN_BYTES`]; `None` when it fits.
pub fn too_long_for_ldap(class: Class, id: &str) -> Option<SnapshotError> {
    let bytes = rdn_bytes_at_most(class.name(), id);
    (bytes > MAX_RDN_BYTES).then(|| SnapshotError::TooLongForLdap {
        class: class.name(),
        id: crate::excerpt::excerpt(id),
        bytes,
    })
}
