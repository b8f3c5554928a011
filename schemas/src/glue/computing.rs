//! Batch and HPC systems: ComputingService, Manager, Share, ExecutionEnvironment and the GLUE 2.1
//! accelerator entities that hang off them.

use std::collections::BTreeMap;

use serde::Serialize;

use super::{AcceleratorCapacity, Endpoint, VoAccess};
use crate::gpu::{Capacity, GpuCount, GpuSpec, MemoryMb};
use crate::names::{LocalId, Text};

/// GLUE2 ComputingService: one batch system.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ComputingService {
    pub local_id: LocalId,
    pub name: Option<Text>,
    pub quality_level: Text,
    pub capabilities: Vec<Text>,
    pub endpoints: Vec<Endpoint>,
    pub manager: ComputingManager,
    pub shares: Vec<ComputingShare>,
    pub other_info: BTreeMap<String, String>,
}

/// GLUE2 ComputingManager, with its node types and its GPU totals per accelerator kind.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ComputingManager {
    /// `SLURM`, `PBSPro`, `HTCondor`...
    pub product_name: Text,
    pub product_version: Option<Text>,
    pub environments: Vec<ExecutionEnvironment>,
    /// GLUE 2.1 ComputingManagerAccelerator: one per GPU model and virtualization.
    pub accelerators: Vec<AcceleratorCapacity>,
}

/// GLUE2 ExecutionEnvironment: one kind of node.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ExecutionEnvironment {
    pub local_id: LocalId,
    pub name: Option<Text>,
    /// `amd64`, `aarch64`.
    pub platform: Text,
    pub total_instances: u32,
    pub used_instances: u32,
    pub unavailable_instances: u32,
    pub physical_cpus: Option<u32>,
    pub logical_cpus: Option<u32>,
    pub main_memory: Option<MemoryMb>,
    pub os_family: Text,
    pub os_name: Option<Text>,
    pub os_version: Option<Text>,
    /// GLUE 2.1 AcceleratorEnvironment: the accelerators each node of this kind carries.
    pub accelerators: Vec<AcceleratorEnvironment>,
}

/// GLUE 2.1 AcceleratorEnvironment: GPUs of one kind inside one node type.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct AcceleratorEnvironment {
    pub local_id: LocalId,
    pub gpu: GpuSpec,
    /// Physical devices per node.
    pub physical_per_instance: GpuCount,
    /// Schedulable devices per node (MIG slices, time-slicing replicas); equals physical when unshared.
    pub logical_per_instance: GpuCount,
    /// Over all nodes of the environment, in logical devices.
    pub capacity: Capacity,
}

/// A share's job slots as GLUE2 counts them (one slot is one CPU core); `None` where not known.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
pub struct ShareSlots {
    pub free: Option<u32>,
    pub used: Option<u32>,
    pub max_per_job: Option<u32>,
}

impl ShareSlots {
    /// All three known: CPUs free, used, and the most one job may take (on Slurm every CPU of
    /// the partition, as a job may span nodes; on Kubernetes the largest node's, as a pod may
    /// not); counts past `u32::MAX` are published as `u32::MAX`.
    pub fn known(free: u64, used: u64, max_per_job: u64) -> Self {
        let slot = |n: u64| Some(u32::try_from(n).unwrap_or(u32::MAX));
        Self {
            free: slot(free),
            used: slot(used),
            max_per_job: slot(max_per_job),
        }
    }
}

/// GLUE2 ComputingShare: a partition or queue, and who may use it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ComputingShare {
    pub local_id: LocalId,
    pub name: Option<Text>,
    /// The batch partition or queue name.
    pub mapping_queue: Option<Text>,
    pub serving_state: Text,
    pub max_wall_time_s: Option<u64>,
    /// Job slots (CPU cores) free, used and the most one job may take, where the batch system
    /// says: GLUE2's FreeSlots, UsedSlots and MaxSlotsPerJob, which EGI's GLUE 2.0 profile asks of
    /// every share.
    pub slots: ShareSlots,
    /// The VOs its MappingPolicy admits.
    pub access: Vec<VoAccess>,
    /// Local ids of the execution environments this share runs on.
    pub environments: Vec<LocalId>,
    /// GLUE 2.1 ComputingShareAccelerator: GPU capacity reachable through this share.
    pub accelerators: Vec<AcceleratorCapacity>,
}
