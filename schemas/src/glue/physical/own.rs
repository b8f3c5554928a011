//! An accelerator entity against itself: its physical counts are its slots times its
//! `SlotShare`, and its used and free physical GPUs are within its total.

use super::{PhysicalMismatch, Sum, model, named, number, slot_share, what};
use crate::glue::entity::Entity;

/// An accelerator entity against itself: physical counts are slots times `SlotShare`, and used
/// plus free physical GPUs are not more than the total.
pub(super) fn counts(entity: &Entity<'_>) -> Result<(), Box<PhysicalMismatch>> {
    let share = slot_share(entity);
    let pairs: &[(&str, &str)] = &[
        ("TotalPhysicalAccelerators", "TotalAcceleratorSlots"),
        ("UsedPhysicalAccelerators", "UsedAcceleratorSlots"),
        ("FreePhysicalAccelerators", "FreeAcceleratorSlots"),
        ("TotalPhysicalAccelerators", "TotalAccelerators"),
        ("UsedPhysicalAccelerators", "UsedAccelerators"),
        ("FreePhysicalAccelerators", "FreeAccelerators"),
        ("PhysicalAccelerators", "Number"),
    ];
    for (physical, slots) in pairs {
        let (Some(published), Some(count)) = (number(entity, physical), number(entity, slots))
        else {
            continue;
        };
        let expected = Sum::one(count * share);
        let published = Sum::one(published);
        if !published.agrees(expected) {
            return Err(Box::new(PhysicalMismatch {
                first: named(entity),
                first_count: published.text(),
                what: format!("{} ({physical})", what(model(entity))),
                second: format!("its {slots} times its SlotShare"),
                second_count: expected.text(),
                rule: "a physical count is the slots times the share of a GPU one slot is",
            }));
        }
    }
    let Some(total) = number(entity, "TotalPhysicalAccelerators") else {
        return Ok(());
    };
    let mut parts = Sum::default();
    for part in ["UsedPhysicalAccelerators", "FreePhysicalAccelerators"] {
        if let Some(value) = number(entity, part) {
            parts.add(value, 1.0);
        }
    }
    let total = Sum::one(total);
    if !parts.fits_in(total) {
        return Err(Box::new(PhysicalMismatch {
            first: named(entity),
            first_count: parts.text(),
            what: format!("{} used and free", what(model(entity))),
            second: "its TotalPhysicalAccelerators".to_owned(),
            second_count: total.text(),
            rule: "used and free GPUs are part of the total",
        }));
    }
    Ok(())
}
