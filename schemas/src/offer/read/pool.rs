//! The pool of physical GPUs an offer draws on ([`super::super::Offer::pool`]): flavors of one
//! manager's accelerators share it, so their repeated free counts are summed once.

use crate::glue::entity::Entity;

use super::View;

impl View<'_, '_> {
    /// The pool a flavor's `gpu` draws on: the IDs of the manager accelerators of its model and
    /// virtualization among `accelerators` (those [`View::capacity`] counts), or the flavor's own
    /// accelerator (at `own`) where the manager publishes none.
    pub(super) fn pool(
        &self,
        accelerators: impl Iterator<Item = usize>,
        gpu: &Entity,
        own: usize,
    ) -> String {
        let mut ids: Vec<&str> = accelerators
            .map(|position| &self.entities[position])
            .filter(|other| same_kind(other, gpu))
            .map(|other| other.id.as_str())
            .collect();
        if ids.is_empty() {
            return self.entities[own].id.clone();
        }
        ids.sort_unstable();
        ids.join(" ")
    }
}

/// Whether `other` is an accelerator of `gpu`'s model and virtualization.
pub(super) fn same_kind(other: &Entity, gpu: &Entity) -> bool {
    other.attribute("Model") == gpu.attribute("Model")
        && other.attribute("VirtualizationType") == gpu.attribute("VirtualizationType")
}
