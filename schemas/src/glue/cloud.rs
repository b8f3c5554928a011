//! IaaS clouds: CloudComputingService, Manager, Share (one per VO project), InstanceType (flavor),
//! Image, and the GLUE 2.1 cloud accelerator entities.

use std::collections::BTreeMap;

use serde::Serialize;

use super::{AcceleratorCapacity, Endpoint, OsFamily, VoAccess};
use crate::gpu::{GpuCount, GpuSpec, MemoryMb};
use crate::names::{LocalId, Text};

/// GLUE 2.1 CloudComputingService: one cloud (an OpenStack region).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CloudService {
    pub local_id: LocalId,
    pub name: Option<Text>,
    pub quality_level: Text,
    pub capabilities: Vec<Text>,
    pub endpoints: Vec<Endpoint>,
    pub manager: CloudManager,
    pub shares: Vec<CloudShare>,
    pub instance_types: Vec<InstanceType>,
    pub images: Vec<Image>,
    pub other_info: BTreeMap<String, String>,
}

/// GLUE 2.1 CloudComputingManager.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CloudManager {
    /// `OpenStack`, `OpenNebula`.
    pub product_name: Text,
    pub product_version: Option<Text>,
    pub hypervisor_name: Option<Text>,
    pub total_cpus: Option<u32>,
    pub total_ram: Option<MemoryMb>,
    /// GLUE 2.1 CloudComputingManagerAccelerator: GPUs per model and virtualization.
    pub accelerators: Vec<AcceleratorCapacity>,
}

/// GLUE2 Share of a cloud: one project, mapped to one VO.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CloudShare {
    pub local_id: LocalId,
    pub name: Option<Text>,
    pub access: VoAccess,
    /// The OpenStack project id.
    pub project_id: Option<Text>,
    pub max_vm: Option<u32>,
    pub running_vm: Option<u32>,
    /// GPU quota of the project, where the cloud sets one.
    pub max_gpus: Option<GpuCount>,
    pub accelerators: Vec<AcceleratorCapacity>,
}

/// GLUE 2.1 CloudComputingInstanceType: a flavor.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct InstanceType {
    pub local_id: LocalId,
    pub name: Text,
    pub platform: Text,
    pub cpu: u32,
    pub ram: MemoryMb,
    pub disk_gb: u32,
    /// The OS family its VMs run, where the site states it (an instance type has no OS of its
    /// own; unstated, the GLUE 2.0 rendering works it out from the shares' images).
    pub os_family: Option<OsFamily>,
    pub accelerator: Option<VirtualAccelerator>,
    /// Local ids of the shares (projects) that may use this flavor.
    pub shares: Vec<LocalId>,
    pub other_info: BTreeMap<String, String>,
}

/// GLUE 2.1 CloudComputingVirtualAccelerator: the GPUs a flavor gives each VM.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct VirtualAccelerator {
    pub gpu: GpuSpec,
    pub count: GpuCount,
}

/// GLUE 2.1 CloudComputingImage.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Image {
    pub local_id: LocalId,
    pub name: Text,
    pub os_platform: Option<Text>,
    pub os_name: Option<Text>,
    pub os_version: Option<Text>,
    pub marketplace_url: Option<Text>,
    pub description: Option<Text>,
    /// Local ids of the shares that may use this image.
    pub shares: Vec<LocalId>,
    /// GPU driver and CUDA versions baked into the image, where its properties say.
    pub gpu_driver_version: Option<Text>,
    pub cuda_version: Option<Text>,
}
