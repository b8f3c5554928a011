//! GPU capacity of a cluster, per GPU kind (product, sharing mode, MIG profile) and per VO.
//!
//! Per node and resource: total = `status.capacity`; used = the requests of the non-terminal pods
//! bound to the node (a pending pod bound to a node already holds its devices); on an available
//! node free = allocatable - used, on a NotReady, cordoned or tainted node free = 0. What is neither
//! used nor free is unavailable. Counts are in schedulable devices (MIG slices, replicas), and
//! beside them in physical GPUs: each device times its resource's `Sharing::physical_share` (7
//! `1g.10gb` slots of one H100 are 1 physical GPU, 8 time-slicing replicas of one T4 are 1), with the
//! GPUs installed per node and model (see `NodeGpus::installed`).

use std::collections::{BTreeMap, BTreeSet};

use accelfed_schemas::gpu::{GpuSpec, Virtualization};

use super::nodes::NodeGpus;
use super::pods::PodGpus;

/// The devices of one kind over the whole cluster.
#[derive(Debug, Clone, PartialEq)]
pub struct KindTally {
    pub gpu: GpuSpec,
    pub total: u64,
    pub used: u64,
    pub free: u64,
    /// The resource names that carry this kind (`nvidia.com/gpu`), for quotas.
    pub resources: BTreeSet<String>,
    /// Used per VO (pods in namespaces without a VO are in `used` only).
    pub used_by_vo: BTreeMap<String, u64>,
    /// `total`, `used` and `free` in physical GPUs.
    pub physical: Physical,
}

/// Devices of one kind counted in physical GPUs.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Physical {
    pub total: f64,
    pub used: f64,
    pub free: f64,
}

/// Kind id -> tally, and what could not be attributed.
#[derive(Debug, Default)]
pub struct Tally {
    pub kinds: BTreeMap<String, KindTally>,
    /// (node, resource) -> (total, used, free), for execution environments.
    pub slots: BTreeMap<(String, String), (u64, u64, u64)>,
    /// (node, resource) -> the same slots in physical GPUs.
    pub physical: BTreeMap<(String, String), Physical>,
    /// (node, canonical model) -> physical GPUs installed.
    pub installed: BTreeMap<(String, String), f64>,
    pub warnings: Vec<String>,
}

/// A stable id for a kind: `nvidia-a100-sxm4-40gb`, `tesla-t4.time-slicing`,
/// `nvidia-a100-sxm4-40gb.mig-1g.10gb`.
pub fn kind_id(gpu: &GpuSpec) -> String {
    let mut id: String = gpu
        .model
        .as_str()
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() {
                c.to_ascii_lowercase()
            } else {
                '-'
            }
        })
        .collect();
    match gpu.virtualization {
        Virtualization::None => {}
        Virtualization::Mig => {
            id.push_str(".mig-");
            id.push_str(gpu.mig_profile.as_ref().map_or("unknown", |p| p.as_str()));
        }
        other => {
            id.push('.');
            id.push_str(other.as_str());
        }
    }
    id
}

/// Counts every node's devices and every bound pod's requests. `vo_of` maps a namespace to its VO.
pub fn tally(
    nodes: &[NodeGpus],
    pods: &[PodGpus],
    vo_of: impl Fn(&str) -> Option<String>,
) -> Tally {
    let mut out = Tally::default();
    // (node, resource) -> (kind id, capacity) for attributing pods.
    let mut slots: BTreeMap<(&str, &str), (String, u64)> = BTreeMap::new();
    for node in nodes {
        for resource in &node.resources {
            let id = kind_id(&resource.gpu);
            slots.insert((&node.name, &resource.resource), (id, resource.capacity));
        }
    }
    let mut used: BTreeMap<(&str, &str), u64> = BTreeMap::new();
    for pod in pods.iter().filter(|pod| !pod.phase.is_terminal()) {
        let Some(node) = pod.node.as_deref() else {
            continue;
        };
        for (resource, devices) in &pod.gpus {
            let Some((id, _)) = slots.get(&(node, resource.as_str())) else {
                out.warnings.push(format!(
                    "pod {}/{} holds {devices} {resource} on node {node:?}, which does not advertise it; not counted",
                    pod.namespace, pod.name
                ));
                continue;
            };
            *used.entry((node, resource)).or_default() += devices;
            if let Some(vo) = vo_of(&pod.namespace) {
                let kind = out
                    .kinds
                    .entry(id.clone())
                    .or_insert_with(|| empty(nodes, id));
                *kind.used_by_vo.entry(vo).or_default() += devices;
            }
        }
    }
    for node in nodes {
        for resource in &node.resources {
            let id = kind_id(&resource.gpu);
            let mut node_used = used
                .get(&(node.name.as_str(), resource.resource.as_str()))
                .copied()
                .unwrap_or(0);
            if node_used > resource.capacity {
                out.warnings.push(format!(
                    "node {:?}: pods hold {node_used} {} but it has {}; counted as {}",
                    node.name, resource.resource, resource.capacity, resource.capacity
                ));
                node_used = resource.capacity;
            }
            let free = if node.unavailable.is_some() {
                0
            } else {
                resource.allocatable.saturating_sub(node_used)
            };
            let kind = out
                .kinds
                .entry(id.clone())
                .or_insert_with(|| empty(nodes, &id));
            let share = resource.gpu.sharing.physical_share();
            let physical = Physical {
                total: resource.capacity as f64 * share,
                used: node_used as f64 * share,
                free: free as f64 * share,
            };
            kind.total += resource.capacity;
            kind.used += node_used;
            kind.free += free;
            kind.physical.total += physical.total;
            kind.physical.used += physical.used;
            kind.physical.free += physical.free;
            out.physical
                .insert((node.name.clone(), resource.resource.clone()), physical);
            kind.resources.insert(resource.resource.clone());
            out.slots.insert(
                (node.name.clone(), resource.resource.clone()),
                (resource.capacity, node_used, free),
            );
        }
    }
    for node in nodes {
        for (model, gpus) in &node.installed {
            out.installed
                .insert((node.name.clone(), model.as_str().to_owned()), gpus.get());
        }
    }
    out
}

/// A kind with nothing counted yet, its spec taken from the first node that has it.
fn empty(nodes: &[NodeGpus], id: &str) -> KindTally {
    let gpu = nodes
        .iter()
        .flat_map(|node| &node.resources)
        .find(|resource| kind_id(&resource.gpu) == id)
        .map(|resource| resource.gpu.clone())
        .unwrap_or_else(|| {
            GpuSpec::new(
                accelfed_schemas::names::Text::literal("unknown"),
                accelfed_schemas::gpu::GpuModel::literal("GPU"),
            )
        });
    KindTally {
        gpu,
        total: 0,
        used: 0,
        free: 0,
        resources: BTreeSet::new(),
        used_by_vo: BTreeMap::new(),
        physical: Physical::default(),
    }
}
