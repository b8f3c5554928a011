//! Pure mapping from a validated static description to GLUE2 services.

use std::collections::BTreeMap;

use accelfed_schemas::glue::{
    AcceleratorCapacity, AcceleratorEnvironment, CloudManager, CloudService, CloudShare,
    ComputingManager, ComputingService, ComputingShare, Endpoint, ExecutionEnvironment, Image,
    InstanceType, Service, ShareSlots, VirtualAccelerator, VoAccess,
};
use accelfed_schemas::gpu::{Capacity, GpuCount, GpuSpec};
use accelfed_schemas::names::{LocalId, Text};

use super::config::{
    BatchConfig, CloudConfig, EndpointConfig, GpuConfig, NodeTypeConfig, StaticConfig, VoConfig,
};

mod cloud;

use cloud::cloud_service;

impl StaticConfig {
    /// The services this description declares. Call [`StaticConfig::validate`] first.
    pub fn services(&self) -> Vec<Service> {
        let batch = self
            .batch
            .iter()
            .map(|b| Service::Computing(batch_service(b)));
        let cloud = self.cloud.iter().map(|c| Service::Cloud(cloud_service(c)));
        batch.chain(cloud).collect()
    }
}

fn spec(gpu: &GpuConfig) -> GpuSpec {
    GpuSpec {
        kind: gpu.kind,
        vendor: gpu.vendor.clone(),
        model: gpu.model.clone(),
        memory: gpu.memory,
        compute_capability: gpu.compute_capability.clone(),
        virtualization: gpu.virtualization,
        mig_profile: gpu.mig_profile.clone(),
        driver_version: gpu.driver_version.clone(),
        cuda_version: gpu.cuda_version.clone(),
        clock_speed_mhz: gpu.clock_speed,
        sharing: gpu.sharing.clone().unwrap_or_default(),
    }
}

fn count(value: &Option<toml::Spanned<GpuCount>>) -> GpuCount {
    value.as_ref().map_or(GpuCount::ZERO, |v| *v.get_ref())
}

fn access(vo: &VoConfig) -> VoAccess {
    VoAccess {
        vo: vo.vo.clone(),
        fqan: vo.fqan.clone(),
    }
}

/// The id of an accelerator kind aggregated over node types or pools: same vendor, model,
/// virtualization and MIG profile means the same kind.
fn kind_id(gpu: &GpuSpec) -> LocalId {
    let mut id = gpu
        .model
        .as_str()
        .split(|c: char| !c.is_alphanumeric())
        .filter(|part| !part.is_empty())
        .map(str::to_lowercase)
        .collect::<Vec<_>>()
        .join("-");
    id.push('.');
    id.push_str(gpu.virtualization.as_str());
    if let Some(profile) = &gpu.mig_profile {
        id.push('.');
        id.push_str(profile.as_str());
    }
    LocalId::new(id).unwrap_or_else(|_| unreachable!("a model name has at least one character"))
}

/// Capacity of each accelerator kind over some node types.
fn by_kind<'a>(
    nodes: impl Iterator<Item = &'a NodeTypeConfig>,
) -> BTreeMap<LocalId, (GpuSpec, Capacity)> {
    let mut kinds: BTreeMap<LocalId, (GpuSpec, Capacity)> = BTreeMap::new();
    for node in nodes {
        for gpu in &node.gpus {
            let spec = spec(gpu);
            let capacity = node_gpu_capacity(node, gpu);
            kinds
                .entry(kind_id(&spec))
                .and_modify(|(_, sum)| *sum = *sum + capacity)
                .or_insert((spec, capacity));
        }
    }
    kinds
}

fn slices_per_node(gpu: &GpuConfig) -> GpuCount {
    gpu.slices
        .as_ref()
        .map_or(count(&gpu.count), |s| *s.get_ref())
}

fn node_gpu_capacity(node: &NodeTypeConfig, gpu: &GpuConfig) -> Capacity {
    let slices = slices_per_node(gpu);
    Capacity::from_usage(
        slices * node.count,
        count(&gpu.used),
        slices * node.unavailable,
    )
    .unwrap_or_else(|_| unreachable!("validated: used GPUs fit"))
}

fn endpoints(configs: &[EndpointConfig], default_access: &[VoAccess]) -> Vec<Endpoint> {
    configs
        .iter()
        .map(|e| Endpoint {
            local_id: e.id.clone(),
            url: e.url.clone(),
            interface_name: e.interface.clone(),
            interface_version: e.interface_version.clone(),
            implementation_name: e.implementation.clone(),
            implementation_version: e.implementation_version.clone(),
            technology: e.technology.clone(),
            quality_level: e.quality_level.clone(),
            serving_state: Text::literal("production"),
            health_state: e.health.clone(),
            health_state_info: None,
            capabilities: e.capabilities.clone(),
            access: match &e.vos {
                Some(vos) => vos.iter().map(access).collect(),
                None => default_access.to_vec(),
            },
        })
        .collect()
}

fn sorted_unique(mut access: Vec<VoAccess>) -> Vec<VoAccess> {
    access.sort();
    access.dedup();
    access
}

/// A share's job slots (CPUs) from its node types' counts: a busy node's CPUs are used, an idle
/// available one's free, one job may take them all. Unknown when a node type does not say its
/// CPUs.
fn slots<'a>(nodes: impl Iterator<Item = &'a NodeTypeConfig>) -> ShareSlots {
    let (mut free, mut used, mut all) = (0u64, 0u64, 0u64);
    for node in nodes {
        let Some(cpus) = node.cpus.map(u64::from) else {
            return ShareSlots::default();
        };
        let idle = node.count.saturating_sub(node.busy + node.unavailable);
        free += u64::from(idle) * cpus;
        used += u64::from(node.busy) * cpus;
        all += u64::from(node.count) * cpus;
    }
    ShareSlots::known(free, used, all)
}

fn batch_service(batch: &BatchConfig) -> ComputingService {
    let environments = batch.node_types.iter().map(environment).collect();
    let accelerators = by_kind(batch.node_types.iter())
        .into_iter()
        .map(|(local_id, (gpu, capacity))| AcceleratorCapacity {
            local_id,
            gpu,
            capacity,
            max_per_job: None,
        })
        .collect();
    let shares: Vec<ComputingShare> = batch
        .shares
        .iter()
        .map(|share| {
            let nodes = batch.node_types.iter().filter(|n| {
                share
                    .node_types
                    .iter()
                    .any(|id| id.get_ref() == n.id.get_ref())
            });
            ComputingShare {
                local_id: share.id.get_ref().clone(),
                name: share.name.clone(),
                mapping_queue: share
                    .queue
                    .clone()
                    .or_else(|| Text::new(share.id.get_ref().as_str()).ok()),
                serving_state: share.serving_state.clone(),
                max_wall_time_s: share.max_wall_time,
                slots: slots(nodes.clone()),
                access: share.vos.iter().map(access).collect(),
                environments: share
                    .node_types
                    .iter()
                    .map(|id| id.get_ref().clone())
                    .collect(),
                accelerators: by_kind(nodes)
                    .into_iter()
                    .map(|(local_id, (gpu, capacity))| AcceleratorCapacity {
                        local_id,
                        gpu,
                        capacity,
                        max_per_job: share.max_gpus_per_job,
                    })
                    .collect(),
            }
        })
        .collect();
    let all_vos = sorted_unique(
        shares
            .iter()
            .flat_map(|s| s.access.iter().cloned())
            .collect(),
    );
    ComputingService {
        local_id: batch.id.get_ref().clone(),
        name: batch.name.clone(),
        quality_level: batch.quality_level.clone(),
        capabilities: vec![Text::literal("executionmanagement.jobexecution")],
        endpoints: endpoints(&batch.endpoints, &all_vos),
        manager: ComputingManager {
            product_name: batch.manager.clone(),
            product_version: batch.manager_version.clone(),
            environments,
            accelerators,
        },
        shares,
        other_info: BTreeMap::new(),
    }
}

fn environment(node: &NodeTypeConfig) -> ExecutionEnvironment {
    ExecutionEnvironment {
        local_id: node.id.get_ref().clone(),
        name: node.name.clone(),
        platform: node.platform.clone(),
        total_instances: node.count,
        used_instances: node.busy,
        unavailable_instances: node.unavailable,
        physical_cpus: node.sockets,
        logical_cpus: node.cpus,
        main_memory: node.memory,
        os_family: Text::literal(node.os.family.as_str()),
        os_name: node.os.name.clone(),
        os_version: node.os.version.clone(),
        accelerators: node
            .gpus
            .iter()
            .map(|gpu| AcceleratorEnvironment {
                local_id: gpu.id.get_ref().clone(),
                gpu: spec(gpu),
                physical_per_instance: count(&gpu.count),
                logical_per_instance: slices_per_node(gpu),
                capacity: node_gpu_capacity(node, gpu),
            })
            .collect(),
    }
}
