//! What one offer gives a workload, in physical GPUs: whole GPUs, or slots of a shared GPU (MIG
//! slices, time-slicing or MPS replicas, vGPUs) with the physical GPUs behind them.
//!
//! Read from the facts a document publishes (`SlotShare`, `PhysicalAccelerators`,
//! `LogicalAccelerators`, `Number`, `VirtualizationType`), the same from GLUE 2.1 entities and from
//! GLUE 2.0 OtherInfo. A document from before `SlotShare` still reads right where it can: a node
//! type with more logical than physical devices is shared, and its share is physical / logical.

use crate::gpu::{CountError, GpuCount};

/// The published facts of one accelerator of an offer.
#[derive(Debug, Clone, Copy)]
pub struct Facts<'a> {
    pub model: &'a str,
    /// `VirtualizationType`: none, passthrough, vgpu, mig, time-slicing, mps.
    pub virtualization: &'a str,
    pub mig_profile: Option<&'a str>,
    /// `SlotShare`, e.g. `1/7`.
    pub slot_share: Option<&'a str>,
    /// Units per instance or node: a flavor's `Number`, a node's `LogicalAccelerators`.
    pub slots: GpuCount,
    /// Physical GPUs behind them, where published.
    pub physical: Option<GpuCount>,
}

/// What a user gets from one instance or node.
#[derive(Debug, Clone, PartialEq)]
pub struct Unit {
    /// Whole physical GPUs (a fractional flavor counts as written); zero for shared units.
    pub gpus_each: GpuCount,
    pub slots_each: GpuCount,
    pub physical_each: GpuCount,
    /// The share one slot is, as published (`1/7`), for shared units.
    pub slot_share: Option<String>,
    /// Physical GPUs per slot. A ratio of two counts, not a count: it scales slots into GPUs and
    /// may be above one (a node publishing more physical GPUs than slots), so it stays an `f64`
    /// and only its products, checked, become counts.
    ratio: f64,
    /// In words: `1g.10gb slice of NVIDIA H100 80GB HBM3, 7 per GPU, 56 slices on 8 GPUs`.
    pub gets: String,
}

/// Modes in which a unit is a part of a GPU shared with others, whatever the counts say.
const SHARED_MODES: [&str; 4] = ["mig", "time-slicing", "mps", "vgpu"];

impl Unit {
    pub fn of(facts: Facts) -> Unit {
        let published = facts.slot_share.and_then(fraction);
        let shared_mode = SHARED_MODES
            .iter()
            .any(|mode| facts.virtualization.eq_ignore_ascii_case(mode));
        let slots = facts.slots;
        let ratio = match (published, facts.physical) {
            (Some((n, d)), _) => f64::from(n) / f64::from(d),
            (None, Some(physical)) if slots > GpuCount::ZERO => physical.get() / slots.get(),
            _ => 1.0,
        };
        // Without a published physical count the ratio is a published share (at most one) or
        // one, so the product is at most `slots`, itself a count: nothing to refuse.
        let physical_each = facts
            .physical
            .unwrap_or_else(|| GpuCount::new(slots.get() * ratio).unwrap_or(slots));
        let shared = shared_mode || published.is_some() || ratio < 1.0 - 1e-9;
        let slot_share = match published {
            Some((n, d)) => Some(format!("{n}/{d}")),
            None if shared && ratio < 1.0 - 1e-9 => Some(ratio_text(ratio)),
            None => None,
        };
        let gets = if shared {
            shared_words(
                &facts,
                slot_share.as_deref(),
                published,
                slots,
                physical_each,
            )
        } else {
            format!("{slots} x {}", facts.model)
        };
        Unit {
            gpus_each: if shared {
                GpuCount::ZERO
            } else {
                physical_each
            },
            slots_each: slots,
            physical_each,
            slot_share,
            ratio,
            gets,
        }
    }

    /// Whether one unit is a part of a GPU rather than whole GPUs.
    pub fn is_shared(&self) -> bool {
        self.slot_share.is_some()
            || (self.gpus_each == GpuCount::ZERO && self.slots_each > GpuCount::ZERO)
    }

    /// `slots` of this unit in physical GPUs. Refused when the ratio is above one and the product
    /// passes [`GpuCount::MAX`]: the caller skips the offer rather than publish a made-up count.
    pub fn physical(&self, slots: GpuCount) -> Result<GpuCount, CountError> {
        GpuCount::new(slots.get() * self.ratio)
    }
}

fn shared_words(
    facts: &Facts,
    share: Option<&str>,
    published: Option<(u32, u32)>,
    slots: GpuCount,
    physical: GpuCount,
) -> String {
    let (noun, plural) = match facts.virtualization.to_ascii_lowercase().as_str() {
        "mig" => ("slice", "slices"),
        "time-slicing" => ("time-slicing replica", "replicas"),
        "mps" => ("MPS replica", "replicas"),
        "vgpu" => ("vGPU", "vGPUs"),
        _ => ("share", "shares"),
    };
    let mut words = match facts.mig_profile {
        Some(profile) => format!("{profile} {noun} of {}", facts.model),
        None => format!("{noun} of {}", facts.model),
    };
    match (published, share) {
        (Some((1, d)), _) => words.push_str(&format!(", {d} per GPU")),
        (_, Some(share)) => words.push_str(&format!(" ({share} of a GPU)")),
        _ => {}
    }
    let one = GpuCount::whole(1);
    let plural = if slots == one { noun } else { plural };
    let gpus = if physical == one { "GPU" } else { "GPUs" };
    words.push_str(&format!(", {slots} {plural} on {physical} {gpus}"));
    words
}

/// `3/7` as (3, 7); `None` unless both are whole numbers from 1 and the share is at most 1.
fn fraction(text: &str) -> Option<(u32, u32)> {
    let (n, d) = text.trim().split_once('/')?;
    let (n, d): (u32, u32) = (n.trim().parse().ok()?, d.trim().parse().ok()?);
    (n >= 1 && n <= d).then_some((n, d))
}

/// A derived share as text: `1/4` when it is one over a whole number, else a decimal.
fn ratio_text(ratio: f64) -> String {
    let inverse = 1.0 / ratio;
    if (inverse - inverse.round()).abs() < 1e-9 {
        format!("1/{}", inverse.round() as u64)
    } else {
        // Called for shares below one GPU only: the physical GPUs of one slot, a valid count,
        // printed the one way counts are.
        GpuCount::new(ratio).map_or_else(|_| ratio.to_string(), |share| share.to_string())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn count(value: f64) -> GpuCount {
        GpuCount::new(value).unwrap()
    }

    fn facts<'a>(virtualization: &'a str, slots: f64, physical: Option<f64>) -> Facts<'a> {
        Facts {
            model: "NVIDIA H100 80GB HBM3",
            virtualization,
            mig_profile: None,
            slot_share: None,
            slots: count(slots),
            physical: physical.map(count),
        }
    }

    #[test]
    fn a_mig_node_offers_slices_not_gpus() {
        let unit = Unit::of(Facts {
            mig_profile: Some("1g.10gb"),
            slot_share: Some("1/7"),
            ..facts("mig", 56.0, Some(8.0))
        });
        assert_eq!(unit.gpus_each, GpuCount::ZERO);
        assert_eq!(unit.slots_each, GpuCount::whole(56));
        assert_eq!(unit.physical_each, GpuCount::whole(8));
        assert_eq!(
            unit.gets,
            "1g.10gb slice of NVIDIA H100 80GB HBM3, 7 per GPU, 56 slices on 8 GPUs"
        );
        assert_eq!(unit.physical(GpuCount::whole(14)), Ok(GpuCount::whole(2)));
    }

    #[test]
    fn whole_gpus_are_gpus_each() {
        let unit = Unit::of(facts("none", 4.0, Some(4.0)));
        assert_eq!(unit.gpus_each, GpuCount::whole(4));
        assert!(!unit.is_shared());
        assert_eq!(unit.gets, "4 x NVIDIA H100 80GB HBM3");
        // A fractional flavor's count is physical as written.
        assert_eq!(
            Unit::of(facts("passthrough", 0.5, None)).gpus_each,
            count(0.5)
        );
    }

    #[test]
    fn older_documents_share_by_physical_over_logical() {
        let unit = Unit::of(facts("time-slicing", 8.0, Some(2.0)));
        assert_eq!(unit.gpus_each, GpuCount::ZERO);
        assert_eq!(unit.slot_share.as_deref(), Some("1/4"));
        assert_eq!(
            unit.gets,
            "time-slicing replica of NVIDIA H100 80GB HBM3 (1/4 of a GPU), 8 replicas on 2 GPUs"
        );
        // A vGPU with nothing said about its share is still not a whole GPU.
        let vgpu = Unit::of(facts("vgpu", 1.0, None));
        assert_eq!(vgpu.gpus_each, GpuCount::ZERO);
        assert!(vgpu.is_shared());
    }

    #[test]
    fn shares_that_are_not_fractions_of_one_gpu_are_ignored() {
        for bad in ["0/7", "8/7", "x/7", "1/0", "1"] {
            let unit = Unit::of(Facts {
                slot_share: Some(bad),
                ..facts("none", 2.0, Some(2.0))
            });
            assert_eq!(unit.gpus_each, GpuCount::whole(2), "{bad}");
        }
    }

    #[test]
    fn slots_scaled_past_the_largest_count_are_refused_not_invented() {
        // More physical GPUs than slots: each slot is two GPUs, and 6 million free slots would
        // be 12 million GPUs, more than a count may be.
        let unit = Unit::of(facts("none", 1.0, Some(2.0)));
        assert_eq!(unit.physical(GpuCount::whole(3)), Ok(GpuCount::whole(6)));
        assert!(matches!(
            unit.physical(GpuCount::whole(6_000_000)),
            Err(CountError::TooLarge(_))
        ));
    }

    #[test]
    fn a_share_that_is_no_unit_fraction_prints_as_a_count() {
        // 3 GPUs behind 7 slots: a slot is 0.429 of a GPU.
        let unit = Unit::of(facts("time-slicing", 7.0, Some(3.0)));
        assert_eq!(unit.slot_share.as_deref(), Some("0.429"));
        assert_eq!(
            unit.gets,
            "time-slicing replica of NVIDIA H100 80GB HBM3 (0.429 of a GPU), 7 replicas on 3 GPUs"
        );
    }
}
