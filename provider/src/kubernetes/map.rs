//! The cluster as GLUE2: a ComputingService (or CloudComputingService) with the Kubernetes manager,
//! one execution environment per shape of GPU node, and one share per VO. Pure.
//!
//! A share's accelerator says what a member of the VO can reach: the cluster's devices of that
//! kind, capped by the VO's ResourceQuota on the kind's resource (summed over the VO's namespaces;
//! a namespace without a quota leaves the VO uncapped), with the VO's own use as used.
//!
//! A batch share's job slots count CPU cores, as GLUE2 and the Slurm backend do, over the GPU nodes
//! (the nodes its environments are made of): free = the whole cores not requested on each node
//! that takes new pods, summed; used = the cores the VO's unfinished pods request there (rounded
//! up); the most per job = the largest such node's allocatable cores, as a pod runs on one node.
//! Left out when a GPU node does not say its allocatable CPU.

use std::collections::BTreeMap;

use accelfed_schemas::glue::{
    AcceleratorCapacity, AcceleratorEnvironment, CloudManager, CloudService, CloudShare,
    ComputingManager, ComputingService, ComputingShare, ExecutionEnvironment, Service, ShareSlots,
    VoAccess,
};
use accelfed_schemas::gpu::Capacity;
use accelfed_schemas::names::{LocalId, Text};

use super::capacity::{KindTally, Tally, kind_id, tally};
use super::config::{KubernetesConfig, ServiceKind};
use super::inventory::Inventory;
use super::nodes::{NodeGpus, count};
use super::slots::ClusterSlots;
use super::vo::{namespace_quotas, namespace_vos};

/// The service and the warnings met building it.
#[derive(Debug, Clone)]
pub struct Mapped {
    pub service: Service,
    /// Per GPU kind id: the cluster's devices (for checks and the meter).
    pub totals: BTreeMap<String, Capacity>,
    pub warnings: Vec<String>,
}

/// The manager's accelerators, one per GPU kind: the cluster's installed devices as the service
/// publishes them. The meter takes its capacity bound from here, off the listing it read for the
/// pods, so the bound is the published figure.
pub fn installed(inventory: &Inventory) -> Vec<AcceleratorCapacity> {
    // The VO of a pod changes only the shares' figures, never the manager's.
    accelerators(&tally(&inventory.nodes, &inventory.pods, |_| None).kinds)
}

fn accelerators(kinds: &BTreeMap<String, KindTally>) -> Vec<AcceleratorCapacity> {
    kinds
        .iter()
        .map(|(id, kind)| AcceleratorCapacity {
            local_id: local_id(id),
            gpu: kind.gpu.clone(),
            capacity: capacity(kind.total, kind.used, kind.free),
            max_per_job: None,
        })
        .collect()
}

/// Builds the cluster's service from what the client read.
pub fn service(config: &KubernetesConfig, inventory: &Inventory) -> Mapped {
    let mut warnings = inventory.warnings.clone();
    let vos = namespace_vos(config, &inventory.namespaces, &mut warnings);
    let quotas = namespace_quotas(&inventory.quotas, &mut warnings);
    let mut missing_vo: BTreeMap<&str, u64> = BTreeMap::new();
    for pod in inventory
        .pods
        .iter()
        .filter(|p| !p.phase.is_terminal() && p.node.is_some())
    {
        if !vos.contains_key(&pod.namespace) {
            *missing_vo.entry(&pod.namespace).or_default() += 1;
        }
    }
    for (namespace, pods) in missing_vo {
        warnings.push(format!(
            "namespace {namespace:?} has no VO: its {pods} GPU pods count in the totals but in no share"
        ));
    }
    let Tally {
        kinds,
        slots,
        installed,
        warnings: tally_warnings,
        ..
    } = tally(&inventory.nodes, &inventory.pods, |ns| {
        vos.get(ns).map(|access| access.vo.to_string())
    });
    warnings.extend(tally_warnings);
    let totals: BTreeMap<String, Capacity> = kinds
        .iter()
        .map(|(id, kind)| (id.clone(), capacity(kind.total, kind.used, kind.free)))
        .collect();
    let manager_accelerators = accelerators(&kinds);
    let environments = environments(&inventory.nodes, &slots);
    let environment_ids: Vec<LocalId> = environments.iter().map(|e| e.local_id.clone()).collect();

    // What the shares' slots are counted from, once for every VO.
    let cluster_slots = ClusterSlots::of(&inventory.nodes, &inventory.cpu);
    // VO -> its accesses and namespaces.
    let mut by_vo: BTreeMap<String, (VoAccess, Vec<&str>)> = BTreeMap::new();
    for (namespace, access) in &vos {
        by_vo
            .entry(access.vo.to_string())
            .or_insert_with(|| (access.clone(), Vec::new()))
            .1
            .push(namespace);
    }
    let shares: Vec<VoShare> = by_vo
        .iter()
        .map(|(vo, (access, namespaces))| {
            let accelerators = kinds
                .iter()
                .map(|(id, kind)| {
                    let cap = vo_cap(kind, namespaces, &quotas);
                    share_capacity(id, kind, vo, cap)
                })
                .collect();
            let max_gpus = kinds
                .values()
                .flat_map(|kind| kind.resources.iter())
                .collect::<std::collections::BTreeSet<_>>()
                .into_iter()
                .map(|resource| resource_cap(resource, namespaces, &quotas))
                .try_fold(0_u64, |sum, cap| cap.map(|c| sum + c));
            VoShare {
                vo: vo.clone(),
                access: access.clone(),
                slots: cluster_slots.share(namespaces),
                namespaces: namespaces.join(","),
                accelerators,
                max_gpus,
            }
        })
        .collect();

    let mut other_info = BTreeMap::new();
    other_info.insert(
        "kubernetes_cluster".to_owned(),
        config.cluster_name().to_owned(),
    );
    // Physical GPUs installed per canonical model, whatever the sharing (MIG slices, replicas):
    // the bound every published and metered GPU count is checked against.
    let mut physical: BTreeMap<&str, f64> = BTreeMap::new();
    for ((_, model), gpus) in &installed {
        *physical.entry(model.as_str()).or_default() += gpus;
    }
    for (model, gpus) in physical {
        other_info.insert(format!("physical_gpus:{model}"), gpus.to_string());
    }
    let service = match config.service {
        ServiceKind::Computing => Service::Computing(ComputingService {
            local_id: config.id.get_ref().clone(),
            name: config.name.clone(),
            quality_level: config.quality_level.clone(),
            capabilities: vec![Text::literal("executionmanagement.jobexecution")],
            endpoints: Vec::new(),
            manager: ComputingManager {
                product_name: Text::literal("Kubernetes"),
                product_version: None,
                environments,
                accelerators: manager_accelerators,
            },
            shares: shares
                .into_iter()
                .map(|share| ComputingShare {
                    local_id: local_id(&share.vo),
                    name: Text::new(share.vo.clone()).ok(),
                    mapping_queue: Text::new(share.namespaces).ok(),
                    serving_state: Text::literal("production"),
                    max_wall_time_s: None,
                    slots: share.slots,
                    access: vec![share.access],
                    environments: environment_ids.clone(),
                    accelerators: share.accelerators,
                })
                .collect(),
            other_info,
        }),
        ServiceKind::Cloud => Service::Cloud(CloudService {
            local_id: config.id.get_ref().clone(),
            name: config.name.clone(),
            quality_level: config.quality_level.clone(),
            capabilities: vec![Text::literal("executionmanagement.jobexecution")],
            endpoints: Vec::new(),
            manager: CloudManager {
                product_name: Text::literal("Kubernetes"),
                product_version: None,
                hypervisor_name: None,
                total_cpus: None,
                total_ram: None,
                accelerators: manager_accelerators,
            },
            shares: shares
                .into_iter()
                .map(|share| CloudShare {
                    local_id: local_id(&share.vo),
                    name: Text::new(share.vo.clone()).ok(),
                    access: share.access,
                    project_id: Text::new(share.namespaces).ok(),
                    max_vm: None,
                    running_vm: None,
                    max_gpus: share.max_gpus.map(count),
                    accelerators: share.accelerators,
                })
                .collect(),
            instance_types: Vec::new(),
            images: Vec::new(),
            other_info,
        }),
    };
    Mapped {
        service,
        totals,
        warnings,
    }
}

struct VoShare {
    vo: String,
    access: VoAccess,
    slots: ShareSlots,
    namespaces: String,
    accelerators: Vec<AcceleratorCapacity>,
    max_gpus: Option<u64>,
}

/// The VO's cap on one resource: the sum of its namespaces' quotas, `None` if one has none.
fn resource_cap(
    resource: &str,
    namespaces: &[&str],
    quotas: &BTreeMap<String, BTreeMap<String, u64>>,
) -> Option<u64> {
    namespaces.iter().try_fold(0_u64, |sum, namespace| {
        quotas.get(*namespace)?.get(resource).map(|cap| sum + cap)
    })
}

/// The VO's cap on a kind: the smallest cap of the resources carrying it.
fn vo_cap(
    kind: &KindTally,
    namespaces: &[&str],
    quotas: &BTreeMap<String, BTreeMap<String, u64>>,
) -> Option<u64> {
    kind.resources
        .iter()
        .filter_map(|resource| resource_cap(resource, namespaces, quotas))
        .min()
}

fn share_capacity(id: &str, kind: &KindTally, vo: &str, cap: Option<u64>) -> AcceleratorCapacity {
    let used = kind.used_by_vo.get(vo).copied().unwrap_or(0);
    let total = cap.map_or(kind.total, |cap| cap.min(kind.total)).max(used);
    let free = cap
        .map_or(kind.free, |cap| cap.saturating_sub(used).min(kind.free))
        .min(total - used);
    AcceleratorCapacity {
        local_id: local_id(id),
        gpu: kind.gpu.clone(),
        capacity: capacity(total, used, free),
        max_per_job: None,
    }
}

/// Nodes with the same GPUs (kinds and counts), architecture and OS form one environment.
fn environments(
    nodes: &[NodeGpus],
    slots: &BTreeMap<(String, String), (u64, u64, u64)>,
) -> Vec<ExecutionEnvironment> {
    let mut groups: BTreeMap<String, Vec<&NodeGpus>> = BTreeMap::new();
    for node in nodes {
        let mut parts: Vec<String> = node
            .resources
            .iter()
            .map(|r| format!("{}-x{}", kind_id(&r.gpu), r.capacity))
            .collect();
        parts.sort();
        if !node.architecture.is_empty() {
            parts.push(node.architecture.clone());
        }
        groups
            .entry(environment_id(&parts.join("+")))
            .or_default()
            .push(node);
    }
    groups
        .into_iter()
        .map(|(id, members)| {
            let first = members[0];
            let accelerators = first
                .resources
                .iter()
                .map(|resource| {
                    let (total, used, free) = members.iter().fold((0, 0, 0), |acc, node| {
                        let slot = slots
                            .get(&(node.name.clone(), resource.resource.clone()))
                            .copied()
                            .unwrap_or_default();
                        (acc.0 + slot.0, acc.1 + slot.1, acc.2 + slot.2)
                    });
                    AcceleratorEnvironment {
                        // Its ID carries the environment's already (`<service>/<ee>/<kind>`).
                        local_id: local_id(&kind_id(&resource.gpu)),
                        gpu: resource.gpu.clone(),
                        physical_per_instance: resource.physical,
                        logical_per_instance: count(resource.capacity),
                        capacity: capacity(total, used, free),
                    }
                })
                .collect();
            let count_nodes = |f: &dyn Fn(&NodeGpus) -> bool| {
                u32::try_from(members.iter().filter(|n| f(n)).count()).unwrap_or(u32::MAX)
            };
            ExecutionEnvironment {
                local_id: local_id(&id),
                name: None,
                platform: Text::new(first.architecture.clone()).unwrap_or(Text::literal("amd64")),
                total_instances: count_nodes(&|_| true),
                used_instances: count_nodes(&|n| {
                    n.resources.iter().any(|r| {
                        slots
                            .get(&(n.name.clone(), r.resource.clone()))
                            .is_some_and(|slot| slot.1 > 0)
                    })
                }),
                unavailable_instances: count_nodes(&|n| n.unavailable.is_some()),
                physical_cpus: None,
                logical_cpus: None,
                main_memory: None,
                os_family: Text::literal("linux"),
                os_name: Text::new(first.os_image.clone()).ok(),
                os_version: None,
                accelerators,
            }
        })
        .collect()
}

fn capacity(total: u64, used: u64, free: u64) -> Capacity {
    Capacity::from_usage(
        count(total),
        count(used),
        count(total.saturating_sub(used + free)),
    )
    .unwrap_or_default()
}

/// An execution environment's id: its node shape (`<kind>-x<count>+...+<arch>`), or, when that is
/// long (MIG nodes with several profiles), its first 40 characters and a hash of the whole, stable
/// across runs. Accelerator environments' LDAP DNs carry this id twice, and slapd's mdb backend
/// refuses DNs over 511 bytes.
fn environment_id(shape: &str) -> String {
    const LONGEST: usize = 64;
    if shape.len() <= LONGEST {
        return shape.to_owned();
    }
    let hash = shape.bytes().fold(0xcbf2_9ce4_8422_2325_u64, |hash, byte| {
        (hash ^ u64::from(byte)).wrapping_mul(0x0100_0000_01b3)
    });
    let mut cut = 40;
    while !shape.is_char_boundary(cut) {
        cut -= 1;
    }
    format!("{}-{:08x}", &shape[..cut], hash >> 32)
}

fn local_id(text: &str) -> LocalId {
    LocalId::new(text).unwrap_or_else(|_| LocalId::literal("unnamed"))
}

#[cfg(test)]
mod tests {
    use super::environment_id;

    #[test]
    fn long_node_shapes_get_short_stable_ids() {
        let short = "nvidia-a100-sxm4-80gb-x4+amd64";
        assert_eq!(environment_id(short), short);
        let mig = "nvidia-a100-sxm4-80gb.mig-1g.10gb-x7+nvidia-a100-sxm4-80gb.mig-3g.40gb-x2+amd64";
        let id = environment_id(mig);
        assert_eq!(id.len(), 49, "{id}");
        assert!(
            id.starts_with("nvidia-a100-sxm4-80gb.mig-1g.10gb-x7+nvi-"),
            "{id}"
        );
        assert_eq!(environment_id(mig), id, "the same on every run");
        let other = mig.replace("x2", "x1");
        assert_ne!(environment_id(&other), id);
    }
}
