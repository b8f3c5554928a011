//! What a workload held of a physical GPU: the whole device, a MIG slice, a time-slicing or MPS
//! replica, a vGPU, or a fraction a flavor names. Usage is always counted in physical GPUs (DESIGN.md
//! "Physical units"); this records what stood behind the count, so a record of one MIG slice is
//! never mistaken for a whole-GPU record of the same model.
//!
//! Meters compute the physical count ([`Sharing::physical_share`] for one unit held); the record keeps
//! the sharing in accelfed's own fields (APEL's Model names the physical GPU).

use serde::{Deserialize, Serialize};

use crate::names::Text;

/// How one unit the scheduler handed out relates to a physical GPU.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Default, Serialize, Deserialize)]
#[serde(tag = "mode", rename_all = "kebab-case")]
pub enum Sharing {
    /// Whole GPUs (passthrough, bare metal, a batch job's GRES).
    #[default]
    Whole,
    /// A Multi-Instance GPU slice: `slices` of the parent's `of` compute slices (`1g.10gb` of an
    /// H100 is 1 of 7).
    Mig { profile: Text, slices: u32, of: u32 },
    /// A time-slicing replica: one of `replicas` sharing a GPU in turn.
    TimeSlicing { replicas: u32 },
    /// An MPS replica: one of `replicas` clients sharing a GPU.
    Mps { replicas: u32 },
    /// A mediated vGPU of `vgpu_type`, `per_gpu` of which one physical GPU holds.
    Vgpu { vgpu_type: Text, per_gpu: u32 },
    /// A fractional flavor or manual count: the count is already physical as written.
    Fraction,
}

impl Sharing {
    /// The physical GPUs one unit of this sharing stands for: 1 for whole GPUs and fractions (whose
    /// count is already physical), `slices / of` for MIG, `1 / replicas`, `1 / per_gpu`. Zero
    /// denominators (refused where configurations are read) count as one whole GPU, never as
    /// infinity.
    pub fn physical_share(&self) -> f64 {
        let ratio = |num: u32, den: u32| {
            if den == 0 {
                1.0
            } else {
                f64::from(num) / f64::from(den)
            }
        };
        match self {
            Self::Whole | Self::Fraction => 1.0,
            Self::Mig { slices, of, .. } => ratio(*slices, *of),
            Self::TimeSlicing { replicas } | Self::Mps { replicas } => ratio(1, *replicas),
            Self::Vgpu { per_gpu, .. } => ratio(1, *per_gpu),
        }
    }

    /// The mode's name as records and documents spell it.
    pub fn mode(&self) -> &'static str {
        match self {
            Self::Whole => "whole",
            Self::Mig { .. } => "mig",
            Self::TimeSlicing { .. } => "time-slicing",
            Self::Mps { .. } => "mps",
            Self::Vgpu { .. } => "vgpu",
            Self::Fraction => "fraction",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shares_of_one_physical_gpu() {
        let mig = Sharing::Mig {
            profile: Text::new("3g.40gb").unwrap(),
            slices: 3,
            of: 7,
        };
        assert!((mig.physical_share() - 3.0 / 7.0).abs() < 1e-12);
        assert_eq!(Sharing::TimeSlicing { replicas: 8 }.physical_share(), 0.125);
        assert_eq!(Sharing::Mps { replicas: 4 }.physical_share(), 0.25);
        assert_eq!(Sharing::Whole.physical_share(), 1.0);
        assert_eq!(Sharing::Mps { replicas: 0 }.physical_share(), 1.0);
        let vgpu = Sharing::Vgpu {
            vgpu_type: Text::new("GRID A100-10C").unwrap(),
            per_gpu: 4,
        };
        assert_eq!(vgpu.physical_share(), 0.25);
        assert_eq!(vgpu.mode(), "vgpu");
    }
}
