//! The physical GPUs behind Placement's VGPU resource providers, and their capacity in vGPUs.
//!
//! Nova reports vGPUs in two layouts (Nova's "Attaching virtual GPU devices to guests" guide):
//! * mdev: each physical GPU is a child provider of its compute node (`<host>_pci_0000_81_00_0`)
//!   whose VGPU total is the instances of its type the GPU holds;
//! * SR-IOV (A100 and later NVIDIA datacenter GPUs): each virtual function is a provider
//!   (`<host>_pci_0000_41_00_4`, ...) holding one vGPU, so neither the provider count nor its
//!   total says anything per GPU.
//!
//! Virtual functions are grouped under their GPU: by the parent provider where Nova nests them
//! under one, else by host (the provider tree's root) and PCI bus, on which a GPU's functions sit
//! beside its physical function at `xx:00.0`. A provider holding more than one vGPU, or at a
//! bus's first function, is a physical GPU by itself. Each GPU's type then says its vGPUs' share
//! ([`super::vgpu`]); its capacity is counted in vGPUs of that share, so the physical GPUs it
//! publishes are exactly the GPUs there are. Pure.

use std::collections::BTreeMap;

use accelfed_schemas::glue::share_text;
use accelfed_schemas::gpu::{Capacity, GpuCount, GpuSpec, Sharing};
use accelfed_schemas::names::Text;

use super::api::{Inventory, ResourceProvider};
use super::capacity::ProviderState;
use super::conventions::{self, Devices};
use super::pci_ids::provider_address;
use super::vgpu::{
    Named, Parent, Resolved, Said, Types, assumed, resolve_spec, table_share, trait_type,
};

/// The vGPU types of the cloud and the capacity of each type's GPUs.
#[derive(Debug, Clone, Default)]
pub struct Layout {
    pub types: Types,
    /// Per physical GPU and type: the spec (its sharing resolved), the capacity in vGPUs and the
    /// resource providers counted.
    pub capacities: Vec<(GpuSpec, Capacity, usize)>,
}

/// One physical GPU's vGPUs of one type.
struct Part<'a> {
    /// The GPU's name for messages: its own provider's, or its physical function's.
    gpu: String,
    sriov: bool,
    key: String,
    traits: &'a [String],
    named: Option<(String, Named)>,
    inventory: Inventory,
    used: u64,
    providers: usize,
    /// Types on the same GPU (several only with MIG-backed types).
    types_on_gpu: usize,
}

/// Reads the layout of `providers`' VGPU inventories. A VGPU inventory on a compute node itself
/// (Nova before Stein) is no single GPU and is left to `capacity.rs`.
pub fn layout(
    providers: &[(ResourceProvider, ProviderState)],
    devices: &Devices,
    said: &mut Said,
) -> Layout {
    let parts = parts(providers, devices);
    let types = resolve_types(&parts, said);
    let mut capacities = Vec::with_capacity(parts.len());
    for part in &parts {
        let spec = match conventions::vgpu_spec(part.traits, devices) {
            Ok(spec) => spec,
            Err(why) => {
                said.warnings
                    .insert(format!("resource provider {:?}: {why}", part.gpu));
                continue;
            }
        };
        let mut spec = GpuSpec {
            sharing: conventions::vgpu_sharing(part.traits, devices),
            ..spec
        };
        // A configured per_gpu that disagrees is said once for all of a type's GPUs.
        resolve_spec(&mut spec, &types, devices, "Placement", said);
        let capacity = capacity(part, types.get(&part.key), said);
        capacities.push((spec, capacity, part.providers));
    }
    Layout { types, capacities }
}

fn resolve_types(parts: &[Part<'_>], said: &mut Said) -> Types {
    let mut types: Types = BTreeMap::new();
    for part in parts {
        if let Some(resolved) = resolve_part(part, said) {
            merge(&mut types, part, resolved, said);
        }
    }
    types
}

/// The VGPU providers as (physical GPU, type) parts.
fn parts<'a>(
    providers: &'a [(ResourceProvider, ProviderState)],
    devices: &Devices,
) -> Vec<Part<'a>> {
    let names: BTreeMap<&str, &str> = providers
        .iter()
        .map(|(rp, _)| (rp.uuid.as_str(), rp.name.as_str()))
        .collect();
    // (group, key) -> part; group is a provider uuid, or root/bus of virtual functions
    let mut parts: BTreeMap<(String, String), Part<'a>> = BTreeMap::new();
    for (rp, state) in providers {
        let Some(inventory) = state.inventories.get("VGPU") else {
            continue;
        };
        let Some(parent) = rp.parent_provider_uuid.as_deref().filter(|p| *p != rp.uuid) else {
            continue;
        };
        let root = rp.root_provider_uuid.as_deref().unwrap_or(parent);
        let address = provider_address(&rp.name);
        let (group, gpu, sriov) = match address {
            _ if parent != root => {
                // nested under a device provider: its physical function
                let name = names.get(parent).copied().unwrap_or(parent);
                (format!("parent {parent}"), name.to_owned(), true)
            }
            Some((host, at)) if inventory.total <= 1 && !at.is_first_function() => (
                format!("root {root} {:04x}:{:02x}", at.domain, at.bus),
                format!("{host}_pci_{:04x}_{:02x}_00_0", at.domain, at.bus),
                true,
            ),
            _ => (format!("provider {}", rp.uuid), rp.name.clone(), false),
        };
        let Sharing::Vgpu { vgpu_type, .. } = conventions::vgpu_sharing(&state.traits, devices)
        else {
            continue;
        };
        let key = vgpu_type.as_str().to_owned();
        let named = named_for(&rp.name, &gpu, &key, &state.traits, devices);
        let used = state.usages.get("VGPU").copied().unwrap_or(0);
        let part = parts.entry((group, key.clone())).or_insert_with(|| Part {
            gpu,
            sriov,
            key,
            traits: &state.traits,
            named: named.clone(),
            inventory: Inventory {
                total: 0,
                reserved: 0,
                allocation_ratio: inventory.allocation_ratio,
            },
            used: 0,
            providers: 0,
            types_on_gpu: 1,
        });
        part.inventory.total += inventory.total;
        part.inventory.reserved += inventory.reserved.min(inventory.total);
        part.used += used;
        part.providers += 1;
        if part.named.is_none() {
            part.named = named;
        }
    }
    let mut per_gpu: BTreeMap<&str, usize> = BTreeMap::new();
    for (group, _) in parts.keys() {
        *per_gpu.entry(group.as_str()).or_default() += 1;
    }
    let counts: BTreeMap<String, usize> = per_gpu
        .into_iter()
        .map(|(group, n)| (group.to_owned(), n))
        .collect();
    parts
        .into_iter()
        .map(|((group, _), mut part)| {
            part.types_on_gpu = counts.get(&group).copied().unwrap_or(1);
            part
        })
        .collect()
}

/// The NVIDIA type of a provider's vGPUs: configured for the provider, its physical GPU or one of
/// its traits, else spelled by its type's trait.
fn named_for(
    provider: &str,
    gpu: &str,
    key: &str,
    traits: &[String],
    devices: &Devices,
) -> Option<(String, Named)> {
    let profile = &devices.vgpu_profile;
    profile
        .get(provider)
        .or_else(|| profile.get(gpu))
        .or_else(|| profile.get(key))
        .or_else(|| traits.iter().find_map(|t| profile.get(t)))
        .map(|name| (name.clone(), Named::Configured))
        .or_else(|| trait_type(key).map(|name| (name, Named::Trait)))
}

/// What one vGPU of a part is: on SR-IOV its type's share (the virtual functions' count, with a
/// warning, where the type is unknown); on mdev Placement's count of the GPU's instances, the
/// type naming the physical GPU.
fn resolve_part(part: &Part<'_>, said: &mut Said) -> Option<Resolved> {
    let table = part.named.as_ref().and_then(|(name, how)| {
        let resolved = table_share(&part.key, name)?;
        said.notes.insert(assumed(&part.key, name, *how, &resolved));
        Some(resolved)
    });
    let total = u32::try_from(part.inventory.total).unwrap_or(u32::MAX);
    match table {
        Some(table) if part.sriov || !matches!(table.sharing, Sharing::Vgpu { .. }) => Some(table),
        _ if total == 0 => None,
        None if part.sriov => {
            said.warnings.insert(format!(
                "GPU {:?}: {total} SR-IOV virtual functions of vGPU type {} whose NVIDIA type is unknown; counting each vGPU as 1/{total} of the GPU (name the type under [openstack.vgpu_profile])",
                part.gpu, part.key
            ));
            Some(placement_count(part, total, None))
        }
        table => Some(placement_count(part, total, table.and_then(|t| t.parent))),
    }
}

/// `total` vGPUs of the part's type on one GPU, as Placement counts them.
fn placement_count(part: &Part<'_>, total: u32, parent: Option<Parent>) -> Resolved {
    Resolved {
        sharing: Sharing::Vgpu {
            vgpu_type: Text::new(part.key.as_str()).unwrap_or_else(|_| Text::literal("VGPU")),
            per_gpu: total,
        },
        parent,
        basis: format!("Placement's GPUs hold {total} each"),
    }
}

/// Adds a GPU's resolution of its type to the cloud's; where GPUs disagree the smaller share is
/// kept (usage then never exceeds what the GPUs give), with a warning.
fn merge(types: &mut Types, part: &Part<'_>, resolved: Resolved, said: &mut Said) {
    match types.get_mut(&part.key) {
        None => {
            types.insert(part.key.clone(), resolved);
        }
        Some(known) if known.sharing != resolved.sharing => {
            let basis = resolved.basis.clone();
            if resolved.sharing.physical_share() < known.sharing.physical_share() {
                *known = resolved;
            }
            said.warnings.insert(format!(
                "GPU {:?}: vGPU type {}: {basis}, other GPUs differ; counting each vGPU as {} of a GPU",
                part.gpu,
                part.key,
                share_text(&known.sharing).unwrap_or_else(|| "1".to_owned())
            ));
        }
        Some(_) => {}
    }
}

/// The part's capacity in vGPUs of its type. On mdev, Placement's numbers (total x allocation
/// ratio, reserved unavailable, usages used). On SR-IOV, one GPU's worth of its type (the
/// instances it holds, whatever the number of virtual functions); what the functions offer less
/// reserved can be had, the rest is unavailable. More used than can be is a warning and counts
/// as full.
fn capacity(part: &Part<'_>, resolved: Option<&Resolved>, said: &mut Said) -> Capacity {
    let inventory = part.inventory;
    let ratio = if inventory.allocation_ratio.is_finite() && inventory.allocation_ratio > 0.0 {
        inventory.allocation_ratio
    } else {
        1.0
    };
    let (total, offered) = match resolved {
        Some(resolved) if part.sriov => {
            let per_gpu = u64::from(resolved.per_gpu());
            // Several MIG-backed types share one GPU's slices: each counts what its functions
            // offer, never more than fit the GPU.
            let total = if part.types_on_gpu > 1 {
                per_gpu.min(inventory.total)
            } else {
                per_gpu
            };
            let offered = inventory
                .total
                .min(total)
                .saturating_sub(inventory.reserved);
            (total, offered)
        }
        _ => {
            let units = |n: u64| (n as f64 * ratio).floor() as u64;
            let total = units(inventory.total);
            (total, total.saturating_sub(units(inventory.reserved)))
        }
    };
    let unavailable = total.saturating_sub(offered);
    if part.used > offered {
        said.warnings.insert(format!(
            "GPU {:?}: {} vGPUs of type {} used where {offered} of {total} can be; counted as full",
            part.gpu, part.used, part.key
        ));
        return Capacity {
            total: count(total),
            used: count(total - unavailable),
            free: GpuCount::ZERO,
        };
    }
    Capacity {
        total: count(total),
        used: count(part.used),
        free: count(offered - part.used),
    }
}

fn count(n: u64) -> GpuCount {
    GpuCount::whole(u32::try_from(n).unwrap_or(u32::MAX))
}

#[cfg(test)]
mod tests;
