//! One period's readings of a node's GPUs: what [`crate::nvml_reader`] makes and the ledger counts.

use serde::{Deserialize, Serialize};

use crate::holder::Holder;

/// What identifies a GPU and how it is divided.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GpuIdentity {
    pub uuid: String,
    /// NVML's index on this node (not stable across reboots; the UUID is).
    pub index: u32,
    /// The name NVML gives (`NVIDIA H200`).
    pub name: String,
    /// The canonical model of the project's GPU vocabulary (schemas' catalogue).
    pub model: String,
    pub memory_total_bytes: Option<u64>,
    /// `Some(true)` in MIG mode; `None` where the GPU has no MIG.
    pub mig_mode: Option<bool>,
    pub mig_instances: Vec<MigInstance>,
    pub vgpu_instances: Vec<VgpuInstance>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MigInstance {
    pub uuid: String,
    /// NVML's MIG device name (`NVIDIA H100 80GB HBM3 MIG 3g.40gb`).
    pub name: String,
    /// The GPU instance id, known from the processes NVML lists on it.
    pub gpu_instance_id: Option<u32>,
    pub memory_total_bytes: Option<u64>,
    /// GPM's SM activity over the last window (Hopper and newer); `None` where the driver gives none.
    pub sm_activity_percent: Option<f64>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct VgpuInstance {
    pub uuid: String,
    /// The VM holding it (NVML's vGPU VM id).
    pub vm: Holder,
}

/// One GPU in one period.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GpuReading {
    pub identity: GpuIdentity,
    /// NVML's GPU utilisation; absent in MIG mode (NOT_SUPPORTED there).
    pub utilisation_percent: Option<u32>,
    pub memory_used_bytes: Option<u64>,
    pub power_mw: Option<u32>,
    /// The GPU's energy counter since the driver loaded, in millijoules.
    pub energy_mj: Option<u64>,
    /// Unix milliseconds when the energy counter was read: the end of this GPU's window.
    pub read_at_ms: u64,
    /// Who held the GPU (or one of its MIG or vGPU instances) at this reading.
    pub holdings: Vec<Holding>,
}

/// A holder on a GPU or one of its instances, with how active it was in the window just ended.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Holding {
    pub holder: Holder,
    /// The GPU's UUID, or the MIG instance's, or the vGPU's.
    pub place: String,
    /// The holder's processes (empty for a VM).
    pub pids: Vec<u32>,
    /// The highest SM activity seen for the holder in the window; `None` where nothing tells.
    pub highest_sm_percent: Option<f64>,
    pub memory_bytes: Option<u64>,
}
