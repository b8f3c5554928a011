//! What a GPU is: the attributes GLUE 2.1 accelerator entities carry, plus the sharing facts a user
//! needs to choose (virtualization, MIG profile) and the software stack (driver, CUDA).

use serde::{Deserialize, Serialize};

use super::{GpuModel, MemoryMb, Sharing};
use crate::names::Text;

/// GLUE 2.1 `AcceleratorType_t`.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize, Default,
)]
pub enum AcceleratorType {
    #[default]
    #[serde(rename = "GPU", alias = "gpu")]
    Gpu,
    #[serde(rename = "FPGA", alias = "fpga")]
    Fpga,
    #[serde(rename = "MIC", alias = "mic")]
    Mic,
    #[serde(rename = "Other", alias = "other")]
    Other,
}

impl AcceleratorType {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Gpu => "GPU",
            Self::Fpga => "FPGA",
            Self::Mic => "MIC",
            Self::Other => "Other",
        }
    }
}

/// How a physical GPU reaches the workload.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize, Default,
)]
#[serde(rename_all = "kebab-case")]
pub enum Virtualization {
    /// Bare metal or a batch job: the process sees the device directly.
    #[default]
    None,
    /// PCI passthrough into a VM.
    Passthrough,
    /// A mediated vGPU (NVIDIA GRID / AI Enterprise).
    Vgpu,
    /// A Multi-Instance GPU slice.
    Mig,
    /// Time-slicing: several workloads share one device in turn.
    TimeSlicing,
    /// CUDA Multi-Process Service: several clients share one device at once.
    Mps,
}

impl Virtualization {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::None => "none",
            Self::Passthrough => "passthrough",
            Self::Vgpu => "vgpu",
            Self::Mig => "mig",
            Self::TimeSlicing => "time-slicing",
            Self::Mps => "mps",
        }
    }
}

/// One kind of accelerator.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct GpuSpec {
    pub kind: AcceleratorType,
    /// `NVIDIA`, `AMD`, `Intel`.
    pub vendor: Text,
    pub model: GpuModel,
    /// Device memory, or for a MIG slice the slice's memory.
    pub memory: Option<MemoryMb>,
    /// CUDA compute capability (`8.0`) or the vendor's equivalent (`gfx90a`).
    pub compute_capability: Option<Text>,
    pub virtualization: Virtualization,
    /// The MIG profile of a slice, e.g. `1g.10gb`.
    pub mig_profile: Option<Text>,
    pub driver_version: Option<Text>,
    pub cuda_version: Option<Text>,
    pub clock_speed_mhz: Option<u32>,
    /// What one unit of this kind (a slot a scheduler hands out, a VM's device) is of a physical
    /// GPU, so documents publish physical GPUs beside slots (DESIGN.md "Physical units"). Whole by
    /// default: a provider that does not say counts every slot as one physical GPU.
    pub sharing: Sharing,
}

impl GpuSpec {
    /// A spec with only the essentials known.
    pub fn new(vendor: Text, model: GpuModel) -> Self {
        Self {
            kind: AcceleratorType::Gpu,
            vendor,
            model,
            memory: None,
            compute_capability: None,
            virtualization: Virtualization::None,
            mig_profile: None,
            driver_version: None,
            cuda_version: None,
            clock_speed_mhz: None,
            sharing: Sharing::Whole,
        }
    }
}
