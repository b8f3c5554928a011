//! Pure mapping from what Slurm reports to GLUE2: the cluster is a ComputingService, each node
//! configuration an ExecutionEnvironment with one AcceleratorEnvironment per GPU type, each
//! partition with GPU nodes a ComputingShare, and the manager carries GPU totals per type.
//!
//! GPUs on a node that is down, drained, draining or not responding are unavailable: they count in
//! the total, allocated ones count as used, none count as free.

use std::collections::{BTreeMap, BTreeSet};

use accelfed_schemas::glue::{
    AcceleratorCapacity, AcceleratorEnvironment, ComputingManager, ComputingService,
    ComputingShare, ExecutionEnvironment, ShareSlots, VoAccess, physical,
};
use accelfed_schemas::gpu::{Capacity, GpuCount, GpuModel, GpuSpec, MemoryMb, Virtualization};
use accelfed_schemas::names::{LocalId, Text};

use super::config::SlurmConfig;
use super::inventory::Inventory;
use super::nodes::{NodeGpus, SlurmNode, untracked_gpus_warnings};
use super::partitions::{Allow, SlurmPartition};

/// The service, and warnings worth a log line (unknown GPU types, skipped nodes).
#[derive(Debug, Clone)]
pub struct Mapped {
    pub service: ComputingService,
    pub warnings: Vec<String>,
}

/// Builds the cluster's ComputingService.
pub fn service(config: &SlurmConfig, inventory: &Inventory) -> Mapped {
    let mut warnings: Vec<String> = inventory
        .problems
        .iter()
        .map(|p| format!("skipped {p}"))
        .collect();
    warnings.extend(
        inventory
            .nodes
            .iter()
            .flat_map(|n| n.warnings.iter().cloned()),
    );
    warnings.extend(untracked_gpus_warnings(&inventory.nodes));
    let gpu_nodes: Vec<&SlurmNode> = inventory
        .nodes
        .iter()
        .filter(|n| !n.gpus.is_empty())
        .collect();
    let mut specs = Specs {
        config,
        warned: BTreeSet::new(),
        warnings: &mut warnings,
    };

    let mut environments: BTreeMap<String, Vec<&SlurmNode>> = BTreeMap::new();
    for node in &gpu_nodes {
        environments
            .entry(environment_id(node))
            .or_default()
            .push(node);
    }
    let environments: Vec<ExecutionEnvironment> = environments
        .iter()
        .filter_map(|(id, nodes)| environment(id, nodes, &mut specs))
        .collect();
    let accelerators = by_type(gpu_nodes.iter().copied(), &mut specs, None);
    let shares = inventory
        .partitions
        .iter()
        .filter_map(|partition| {
            let nodes: Vec<&SlurmNode> = gpu_nodes
                .iter()
                .copied()
                .filter(|n| n.partitions.contains(&partition.name))
                .collect();
            (!nodes.is_empty()).then(|| share(config, partition, &nodes, &mut specs))
        })
        .flatten()
        .collect();
    let mut other_info = BTreeMap::new();
    other_info.insert("slurm_data_version".to_owned(), inventory.version.name());
    Mapped {
        service: ComputingService {
            local_id: config.id.get_ref().clone(),
            name: config.name.clone(),
            quality_level: config.quality_level.clone(),
            capabilities: vec![Text::literal("executionmanagement.jobexecution")],
            endpoints: Vec::new(),
            manager: ComputingManager {
                product_name: Text::literal("SLURM"),
                product_version: Text::new(inventory.release.clone()).ok(),
                environments,
                accelerators,
            },
            shares,
            other_info,
        },
        warnings,
    }
}

/// Nodes alike in CPUs, memory and GPUs form one environment: `a100x4-64c-512000m`.
fn environment_id(node: &SlurmNode) -> String {
    let gpus: Vec<String> = node
        .gpus
        .iter()
        .map(|g| format!("{}x{}", type_key(g), g.total))
        .collect();
    format!(
        "{}-{}c-{}m",
        gpus.join("+"),
        node.cpus.unwrap_or(0),
        node.memory_mib.unwrap_or(0)
    )
}

fn type_key(gpu: &NodeGpus) -> &str {
    gpu.gpu_type.as_deref().unwrap_or("gpu")
}

fn local_id(text: &str) -> LocalId {
    LocalId::new(text).unwrap_or_else(|_| LocalId::literal("gpu"))
}

fn count(value: u64) -> GpuCount {
    GpuCount::whole(u32::try_from(value).unwrap_or(u32::MAX))
}

fn node_capacity(node: &SlurmNode, gpu: &NodeGpus) -> Capacity {
    // nodes.rs refuses used > total; the clamp keeps a hand-built node from panicking here.
    let used = gpu.used.min(gpu.total);
    let unavailable = if node.unavailable {
        gpu.total - used
    } else {
        0
    };
    Capacity::from_usage(count(gpu.total), count(used), count(unavailable)).unwrap_or_default()
}

/// GPU specs from the configuration, warning once per unknown type.
struct Specs<'a> {
    config: &'a SlurmConfig,
    warned: BTreeSet<String>,
    warnings: &'a mut Vec<String>,
}

impl Specs<'_> {
    fn spec(&mut self, key: &str) -> GpuSpec {
        let mig_profile = mig_profile(key);
        let mut spec = match self.config.gpu_types.get(key) {
            Some(known) => {
                let mut spec = GpuSpec::new(known.vendor.clone(), known.canonical_model());
                spec.memory = known.memory_mb;
                spec.compute_capability = known.compute_capability.clone();
                spec
            }
            None => {
                // An AutoDetect MIG name (`nvidia_h100_80gb_hbm3_1g.10gb`) names its GPU.
                let parent = mig_profile
                    .as_ref()
                    .and_then(|_| super::mig::parent_model(key));
                if self.warned.insert(key.to_owned()) {
                    self.warnings.push(match &parent {
                        Some(model) => format!(
                            "GPU type {key:?} is not in [slurm.gpu_types]: read as AutoDetect's name of a MIG slice of {model}, published under that model, no memory"
                        ),
                        None => format!(
                            "GPU type {key:?} is not in [slurm.gpu_types]: published with its Slurm name as the model, no vendor or memory"
                        ),
                    });
                }
                // A type no model can be named after (`-SHARED`, 256+ characters) fails the
                // backend before mapping (`types::checked_service`); never a panic here.
                let vendor = if parent.is_some() {
                    "NVIDIA"
                } else {
                    "unknown"
                };
                let model = parent.unwrap_or_else(|| {
                    GpuModel::canonical(key).unwrap_or_else(|_| GpuModel::literal("unknown"))
                });
                let mut spec = GpuSpec::new(Text::literal(vendor), model);
                // `1g.10gb`: the profile names the slice's memory in GB.
                spec.memory = mig_profile.as_deref().and_then(mig_memory);
                spec
            }
        };
        if let Some(profile) = mig_profile {
            spec.virtualization = Virtualization::Mig;
            // What one slot is of the parent GPU, so the published capacity has physical counts.
            spec.sharing = super::mig::slice_sharing(key, &spec.model, &profile);
            spec.mig_profile = Text::new(profile).ok();
        }
        spec
    }
}

/// `1g.10gb`, `a100_3g.40gb`, `nvidia_a100_1g.10gb` name MIG slices; the profile is the tail.
pub(super) fn mig_profile(key: &str) -> Option<String> {
    let tail = key.rsplit(['_', '-']).next()?;
    let (compute, memory) = tail.split_once('.')?;
    let is_units = |s: &str, unit: &str| {
        s.strip_suffix(unit)
            .is_some_and(|n| !n.is_empty() && n.chars().all(|c| c.is_ascii_digit()))
    };
    (is_units(compute, "g") && is_units(memory, "gb")).then(|| tail.to_owned())
}

fn mig_memory(profile: &str) -> Option<MemoryMb> {
    let gb: u64 = profile
        .split_once('.')?
        .1
        .strip_suffix("gb")?
        .parse()
        .ok()?;
    Some(MemoryMb::new(gb * 1000))
}

/// Capacity per GPU type over some nodes.
fn by_type<'n>(
    nodes: impl Iterator<Item = &'n SlurmNode>,
    specs: &mut Specs<'_>,
    max_per_job: Option<GpuCount>,
) -> Vec<AcceleratorCapacity> {
    let mut totals: BTreeMap<String, Capacity> = BTreeMap::new();
    for node in nodes {
        for gpu in &node.gpus {
            *totals.entry(type_key(gpu).to_owned()).or_default() =
                totals.get(type_key(gpu)).copied().unwrap_or_default() + node_capacity(node, gpu);
        }
    }
    totals
        .into_iter()
        .map(|(key, capacity)| AcceleratorCapacity {
            local_id: local_id(&key),
            gpu: specs.spec(&key),
            capacity,
            max_per_job,
        })
        .collect()
}

/// `None` for no nodes (never built so: every group holds the node that made it).
fn environment(
    id: &str,
    nodes: &[&SlurmNode],
    specs: &mut Specs<'_>,
) -> Option<ExecutionEnvironment> {
    let first = nodes.first()?;
    let accelerators = first
        .gpus
        .iter()
        .map(|gpu| {
            let key = type_key(gpu);
            let capacity = nodes
                .iter()
                .flat_map(|n| {
                    n.gpus
                        .iter()
                        .filter(|g| type_key(g) == key)
                        .map(|g| node_capacity(n, g))
                })
                .sum();
            let spec = specs.spec(key);
            // GRES counts slots: 7 MIG instances of 1/7 are one physical GPU, not 7 (issue #28).
            let physical_per_instance = physical(count(gpu.total), &spec.sharing);
            AcceleratorEnvironment {
                local_id: local_id(key),
                gpu: spec,
                physical_per_instance,
                logical_per_instance: count(gpu.total),
                capacity,
            }
        })
        .collect();
    let len = |f: &dyn Fn(&SlurmNode) -> bool| {
        u32::try_from(nodes.iter().filter(|n| f(n)).count()).unwrap_or(u32::MAX)
    };
    Some(ExecutionEnvironment {
        local_id: local_id(id),
        name: None,
        platform: Text::literal("amd64"),
        total_instances: len(&|_| true),
        used_instances: len(&|n| n.gpus.iter().any(|g| g.used > 0)),
        unavailable_instances: len(&|n| n.unavailable),
        physical_cpus: None,
        logical_cpus: first.cpus.and_then(|c| u32::try_from(c).ok()),
        main_memory: first.memory_mib.map(MemoryMb::from_mib),
        os_family: Text::literal("linux"),
        os_name: None,
        os_version: None,
        accelerators,
    })
}

fn share(
    config: &SlurmConfig,
    partition: &SlurmPartition,
    nodes: &[&SlurmNode],
    specs: &mut Specs<'_>,
) -> Option<ComputingShare> {
    let environments: BTreeSet<String> = nodes.iter().map(|n| environment_id(n)).collect();
    Some(ComputingShare {
        local_id: LocalId::new(partition.name.clone()).ok()?,
        name: None,
        mapping_queue: Text::new(partition.name.clone()).ok(),
        serving_state: Text::literal(match partition.state.as_str() {
            "UP" => "production",
            "DRAIN" => "draining",
            _ => "closed",
        }),
        max_wall_time_s: partition.max_time_s,
        slots: slots(nodes),
        access: admitted(config, partition),
        environments: environments.iter().map(|e| local_id(e)).collect(),
        accelerators: by_type(nodes.iter().copied(), specs, None),
    })
}

/// A partition's job slots (CPU cores, as GLUE2 counts them): used are the CPUs allocated on its
/// nodes, free the unallocated CPUs of nodes that take jobs, and one job may take every CPU of the
/// partition. Unknown when a node does not say its CPUs. A node in two partitions counts in both,
/// as the same free CPUs can be had through either.
fn slots(nodes: &[&SlurmNode]) -> ShareSlots {
    let mut slots = (0u64, 0u64, 0u64);
    for node in nodes {
        let (Some(cpus), Some(allocated)) = (node.cpus, node.alloc_cpus) else {
            return ShareSlots::default();
        };
        let allocated = allocated.min(cpus);
        let free = if node.unavailable {
            0
        } else {
            cpus - allocated
        };
        slots.0 = slots.0.saturating_add(free);
        slots.1 = slots.1.saturating_add(allocated);
        slots.2 = slots.2.saturating_add(cpus);
    }
    ShareSlots::known(slots.0, slots.1, slots.2)
}

/// The VOs a partition admits. A VO mapped from the partition itself is admitted. Any other VO
/// is admitted when every restriction the partition sets lets it through: AllowAccounts (and
/// DenyAccounts) by one of the accounts mapped to it, AllowQos (DenyQos) by one of its QOS,
/// AllowGroups by one of its groups. A restriction set to ALL lets every VO through.
pub fn admitted(config: &SlurmConfig, partition: &SlurmPartition) -> Vec<VoAccess> {
    let mut vos: BTreeMap<VoAccess, Names> = BTreeMap::new();
    let access = |vo: &crate::static_site::VoConfig| VoAccess {
        vo: vo.vo.clone(),
        fqan: vo.fqan.clone(),
    };
    for (account, vo) in &config.accounts {
        vos.entry(access(vo)).or_default().accounts.push(account);
    }
    for (qos, vo) in &config.qos {
        vos.entry(access(vo)).or_default().qos.push(qos);
    }
    for (group, vo) in &config.groups {
        vos.entry(access(vo)).or_default().groups.push(group);
    }
    let mut admitted: Vec<VoAccess> = vos
        .into_iter()
        .filter(|(_, names)| {
            let passes = |allow: &Allow, deny: &[String], mine: &[&String]| match allow {
                Allow::All => mine.is_empty() || mine.iter().any(|n| !deny.contains(n)),
                Allow::Only(_) => mine.iter().any(|n| allow.admits(n) && !deny.contains(n)),
            };
            passes(
                &partition.accounts,
                &partition.deny_accounts,
                &names.accounts,
            ) && passes(&partition.qos, &partition.deny_qos, &names.qos)
                && passes(&partition.groups, &[], &names.groups)
        })
        .map(|(vo, _)| vo)
        .collect();
    if let Some(vo) = config.partitions.get(&partition.name) {
        admitted.push(access(vo));
    }
    admitted.sort();
    admitted.dedup();
    admitted
}

/// The Slurm names mapped to one VO.
#[derive(Default)]
struct Names<'a> {
    accounts: Vec<&'a String>,
    qos: Vec<&'a String>,
    groups: Vec<&'a String>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mig_profiles_are_recognised_in_type_names() {
        assert_eq!(mig_profile("1g.10gb").as_deref(), Some("1g.10gb"));
        assert_eq!(
            mig_profile("nvidia_a100_3g.40gb").as_deref(),
            Some("3g.40gb")
        );
        assert_eq!(mig_profile("a100"), None);
        assert_eq!(mig_profile("a100.80gb"), None);
    }
}
