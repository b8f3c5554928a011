//! Whole-document checks: no ID twice, no association to an entity that is not there. Providers call
//! [`SiteSnapshot::validate`] before anything is rendered, so a broken snapshot is never published.

use std::collections::HashSet;

use super::SiteSnapshot;
use super::entity::Class;

/// A snapshot that must not be published.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SnapshotError {
    #[error("ID {id} appears twice (a {first} and a {second}); local ids must be unique per kind")]
    DuplicateId {
        id: String,
        first: &'static str,
        second: &'static str,
    },
    #[error("{class} {id} refers to {target_class} {target}, which the snapshot does not contain")]
    DanglingReference {
        class: &'static str,
        id: String,
        target_class: &'static str,
        target: String,
    },
}

impl SiteSnapshot {
    pub fn validate(&self) -> Result<(), SnapshotError> {
        let entities = self.entities();
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
        Ok(())
    }
}
