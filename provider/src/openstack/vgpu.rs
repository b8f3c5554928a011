//! How many vGPUs of a type one physical GPU holds, so a VM's vGPU is metered as its share of a
//! physical GPU (DESIGN.md "Physical units"). Nova (Stein on) reports each physical GPU as a child
//! resource provider of its compute node with a `VGPU` inventory whose total is the number of
//! instances of the GPU's configured type, and the type as a `CUSTOM_*` trait: that total is the
//! density. A `VGPU` inventory on the compute node itself (older Nova) sums several GPUs and says
//! nothing per GPU; there the configuration's `per_gpu` is used. Pure.

use std::collections::BTreeMap;

use accelfed_schemas::gpu::Sharing;

use super::api::ResourceProvider;
use super::capacity::ProviderState;
use super::conventions::{Devices, FlavorGpu, vgpu_sharing};

/// vGPU type (as [`vgpu_sharing`] names it) -> instances one physical GPU holds, from Placement,
/// with a warning per type whose GPUs disagree (the largest is kept: each vGPU then counts the
/// smaller share, so usage never exceeds what the GPUs can give).
pub fn placement_density(
    providers: &[(ResourceProvider, ProviderState)],
    devices: &Devices,
) -> (BTreeMap<String, u32>, Vec<String>) {
    let mut density: BTreeMap<String, u32> = BTreeMap::new();
    let mut warnings = Vec::new();
    for (provider, state) in providers {
        let Some(inventory) = state.inventories.get("VGPU") else {
            continue;
        };
        let per_gpu_provider = provider
            .parent_provider_uuid
            .as_deref()
            .is_some_and(|parent| parent != provider.uuid);
        if !per_gpu_provider || inventory.total == 0 {
            continue;
        }
        let Sharing::Vgpu { vgpu_type, .. } = vgpu_sharing(&state.traits, devices) else {
            continue;
        };
        let total = u32::try_from(inventory.total).unwrap_or(u32::MAX);
        match density.get_mut(vgpu_type.as_str()) {
            None => {
                density.insert(vgpu_type.as_str().to_owned(), total);
            }
            Some(known) if *known != total => {
                warnings.push(format!(
                    "resource provider {:?}: {total} vGPUs of type {vgpu_type} per GPU where other GPUs hold {known}; counting each as 1/{}",
                    provider.name,
                    total.max(*known)
                ));
                *known = total.max(*known);
            }
            Some(_) => {}
        }
    }
    (density, warnings)
}

/// Fills in a vGPU flavor's instances per physical GPU: Placement's density of its type (of the
/// only type Placement knows, for a flavor that names none), else the configuration's `per_gpu`.
/// Returns a warning naming the flavor when neither says (the vGPU is then metered as a whole
/// GPU) or when they disagree (Placement wins: it is what Nova schedules by).
pub fn resolve(
    gpu: &mut FlavorGpu,
    density: &BTreeMap<String, u32>,
    flavor: &str,
) -> Option<String> {
    resolve_sharing(
        &mut gpu.spec.sharing,
        density,
        &format!("flavor {flavor:?}"),
    )
}

/// [`resolve`] for any holder of vGPUs (`whose` names it in the warning: a flavor, a resource
/// provider); other sharings are left as they are.
pub fn resolve_sharing(
    sharing: &mut Sharing,
    density: &BTreeMap<String, u32>,
    whose: &str,
) -> Option<String> {
    let Sharing::Vgpu { vgpu_type, per_gpu } = sharing else {
        return None;
    };
    let listed = density.get(vgpu_type.as_str()).copied().or_else(|| {
        let mut types = density.values();
        match (vgpu_type.as_str() == "VGPU", types.next(), types.next()) {
            (true, Some(only), None) => Some(*only),
            _ => None,
        }
    });
    match (listed, *per_gpu) {
        (Some(listed), 0) => {
            *per_gpu = listed;
            None
        }
        (Some(listed), configured) if listed != configured => {
            *per_gpu = listed;
            Some(format!(
                "{whose}: vGPU type {vgpu_type}: per_gpu = {configured} in the configuration, but Placement's GPUs hold {listed} each; counting each vGPU as 1/{listed} of a GPU"
            ))
        }
        (_, 0) => Some(format!(
            "{whose}: vGPU type {vgpu_type}: how many one physical GPU holds is unknown (no per-GPU VGPU inventory in Placement, no per_gpu under [openstack.vgpu_type.{vgpu_type}]); its vGPUs are counted as whole GPUs"
        )),
        _ => None,
    }
}
