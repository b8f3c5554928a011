//! GPU capacity of one accelerator kind within a manager or a share. The four GLUE 2.1 classes
//! ComputingManagerAccelerator, ComputingShareAccelerator, CloudComputingManagerAccelerator and
//! CloudComputingShareAccelerator carry the same facts, so they share one type.
//!
//! Capacity is counted in slots (what a scheduler hands out: a MIG slice, a time-slicing replica, a
//! vGPU, or a whole GPU); the GPU's [`Sharing`] says what one slot is of a physical GPU, so the
//! physical GPUs behind any count are `slots x share` (DESIGN.md "Physical units": physical counts
//! are published beside slots, never instead of them).

use std::collections::BTreeMap;

use serde::Serialize;

use super::entity::Value;
use super::{Service, SiteSnapshot};
use crate::gpu::{Capacity, GpuCount, GpuSpec, Sharing};
use crate::names::LocalId;

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct AcceleratorCapacity {
    pub local_id: LocalId,
    /// What the device is, and in `gpu.sharing` what one slot of `capacity` is of it.
    pub gpu: GpuSpec,
    /// In slots.
    pub capacity: Capacity,
    /// The most one job or VM may get, where a share limits it.
    pub max_per_job: Option<GpuCount>,
}

impl AcceleratorCapacity {
    /// The capacity in physical GPUs: each count times the share one slot is.
    pub fn physical(&self) -> Capacity {
        physical_capacity(self.capacity, &self.gpu.sharing)
    }
}

/// The key prefix of the site's physical GPUs per model in the AdminDomain's OtherInfo
/// (`TotalPhysicalAccelerators:NVIDIA H100 80GB HBM3=8`): GLUE has no per-model attribute on the
/// domain, and OtherInfo reaches every rendering and every reader unchanged.
pub const SITE_TOTAL_PREFIX: &str = "TotalPhysicalAccelerators:";

/// `capacity` (in slots of `sharing`) in physical GPUs.
pub fn physical_capacity(capacity: Capacity, sharing: &Sharing) -> Capacity {
    Capacity {
        total: physical(capacity.total, sharing),
        used: physical(capacity.used, sharing),
        free: physical(capacity.free, sharing),
    }
}

/// The physical GPUs `slots` units of `sharing` stand for. Multiplies before dividing, so 56 slices
/// of 1/7 are exactly 8 GPUs, not 8.000000000000002.
pub fn physical(slots: GpuCount, sharing: &Sharing) -> GpuCount {
    let (numerator, denominator) = share(sharing);
    GpuCount::new(slots.get() * f64::from(numerator) / f64::from(denominator)).unwrap_or(slots)
}

/// The share one unit of `sharing` is of a physical GPU, as a fraction: (1, 7) for a 1g.10gb MIG
/// slice of an H100, (1, 8) for one of 8 replicas, (1, 1) for a whole GPU or a fractional flavor
/// (whose count is physical as written). A zero denominator (refused where configurations are read)
/// counts as a whole GPU, as [`Sharing::physical_share`] does.
pub fn share(sharing: &Sharing) -> (u32, u32) {
    let (numerator, denominator) = match sharing {
        Sharing::Whole | Sharing::Fraction => (1, 1),
        Sharing::Mig { slices, of, .. } => (*slices, *of),
        Sharing::TimeSlicing { replicas } | Sharing::Mps { replicas } => (1, *replicas),
        Sharing::Vgpu { per_gpu, .. } => (1, *per_gpu),
    };
    if denominator == 0 {
        (1, 1)
    } else {
        (numerator, denominator)
    }
}

/// The share as documents spell it (attribute `SlotShare`): `1/7`, `3/7`, `1/8`; `None` for a
/// whole GPU, whose slots are physical GPUs.
pub fn share_text(sharing: &Sharing) -> Option<String> {
    match share(sharing) {
        (n, d) if n == d => None,
        (n, d) => Some(format!("{n}/{d}")),
    }
}

/// The names of the physical counts: GLUE 2.1 types them UInt32 (cards), so a rendering writes
/// them as typed attributes only when whole; a fraction (a MIG profile's 3/7 of a GPU) goes to
/// the entity's OtherInfo under the same name, in every rendering.
pub const PHYSICAL_COUNTS: [&str; 4] = [
    "TotalPhysicalAccelerators",
    "UsedPhysicalAccelerators",
    "FreePhysicalAccelerators",
    "PhysicalAccelerators",
];

/// Physical GPUs per model over `accelerators`, as `TotalPhysicalAccelerators:<model>` OtherInfo
/// pairs: what a manager, its service and (over every service) the site state.
pub(super) fn total_pairs<'a>(
    accelerators: impl IntoIterator<Item = &'a AcceleratorCapacity>,
) -> Vec<(String, String)> {
    let mut totals: BTreeMap<&str, GpuCount> = BTreeMap::new();
    for accelerator in accelerators {
        let total = totals
            .entry(accelerator.gpu.model.as_str())
            .or_insert(GpuCount::ZERO);
        *total = *total + accelerator.physical().total;
    }
    totals
        .into_iter()
        .map(|(model, total)| (format!("{SITE_TOTAL_PREFIX}{model}"), total.to_string()))
        .collect()
}

/// An entity's attributes and its OtherInfo pairs, as [`super::entity::Entity`] holds them.
type Attributes<'a> = Vec<(&'static str, Value<'a>)>;
type OtherInfo = Vec<(String, String)>;

/// GLUE 2.1 types the physical counts as whole cards: a fractional one leaves the attributes for
/// the OtherInfo pairs, under its name (docs/formats-json.md "Physical GPU counts"), in every
/// rendering alike. OtherInfo stays sorted.
pub(super) fn whole_physical_counts<'a>(
    mut attributes: Attributes<'a>,
    mut other_info: OtherInfo,
) -> (Attributes<'a>, OtherInfo) {
    let before = other_info.len();
    attributes.retain_mut(|(name, value)| {
        let Value::Count(count) = value else {
            return true;
        };
        if !PHYSICAL_COUNTS.contains(name) {
            return true;
        }
        // Whole as every rendering rounds it (to thousandths): 7 x 1/7 is 1, not 0.9999999.
        let text = count.to_string();
        match text.parse::<u32>() {
            Ok(whole) => {
                *count = GpuCount::whole(whole);
                true
            }
            Err(_) => {
                other_info.push(((*name).to_owned(), text));
                false
            }
        }
    });
    if other_info.len() != before {
        other_info.sort();
    }
    (attributes, other_info)
}

impl SiteSnapshot {
    /// Physical GPUs installed per model over every service of the site: the sum of the managers'
    /// accelerators in physical GPUs (shares are views of the same GPUs and are not added). MIG
    /// slices of several profiles of one model add up to the GPUs they partition.
    pub fn physical_totals(&self) -> BTreeMap<&str, GpuCount> {
        let mut totals: BTreeMap<&str, GpuCount> = BTreeMap::new();
        for service in &self.services {
            let accelerators = match service {
                Service::Computing(service) => &service.manager.accelerators,
                Service::Cloud(service) => &service.manager.accelerators,
            };
            for accelerator in accelerators {
                let total = totals
                    .entry(accelerator.gpu.model.as_str())
                    .or_insert(GpuCount::ZERO);
                *total = *total + accelerator.physical().total;
            }
        }
        totals
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::names::Text;

    fn mig(profile: &str, slices: u32, of: u32) -> Sharing {
        Sharing::Mig {
            profile: Text::new(profile).unwrap(),
            slices,
            of,
        }
    }

    #[test]
    fn slices_and_replicas_count_as_their_share_of_a_gpu() {
        let slots = GpuCount::whole(56);
        assert_eq!(physical(slots, &mig("1g.10gb", 1, 7)), GpuCount::whole(8));
        assert_eq!(physical(slots, &Sharing::Whole), slots);
        assert_eq!(
            physical(GpuCount::whole(32), &Sharing::TimeSlicing { replicas: 4 }),
            GpuCount::whole(8)
        );
        // Two 3g.40gb slices are 6 of an H100's 7 compute slices.
        let two = physical(GpuCount::whole(2), &mig("3g.40gb", 3, 7));
        assert!((two.get() - 6.0 / 7.0).abs() < 1e-12);
        assert_eq!(physical(slots, &Sharing::Mps { replicas: 0 }), slots);
    }

    #[test]
    fn shares_are_spelled_as_fractions_and_whole_gpus_not_at_all() {
        assert_eq!(share_text(&mig("3g.40gb", 3, 7)).as_deref(), Some("3/7"));
        assert_eq!(
            share_text(&Sharing::TimeSlicing { replicas: 8 }).as_deref(),
            Some("1/8")
        );
        assert_eq!(share_text(&Sharing::Whole), None);
        assert_eq!(share_text(&Sharing::Fraction), None);
        assert_eq!(share_text(&mig("7g.80gb", 7, 7)), None);
    }

    #[test]
    fn site_totals_add_managers_of_every_service_by_model() {
        let snapshot = crate::glue::sample::snapshot("S");
        let totals = snapshot.physical_totals();
        // 16 A100s in the batch manager, 8 in the cloud's.
        assert_eq!(
            totals.get("NVIDIA A100-SXM4-80GB"),
            Some(&GpuCount::whole(24))
        );
        assert_eq!(totals.len(), 1);
    }
}
