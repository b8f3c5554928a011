//! GPU capacity from Placement: which resource providers hold GPUs (VGPU children named
//! `<host>_pci_...`, Nova's PCI device children with `CUSTOM_PCI_*` inventory, configured classes),
//! what each is, and total / used / free per kind. Placement is the scheduler's truth, so the
//! published numbers are its numbers: total = inventory x allocation ratio, unavailable = reserved,
//! used = usages.

use std::collections::{BTreeMap, BTreeSet};

use accelfed_schemas::gpu::{Capacity, GpuCount, GpuSpec, Sharing, Virtualization};
use accelfed_schemas::names::LocalId;

use super::api::{Inventory, ResourceProvider};
use super::conventions::{self, Devices};
use super::layout::Layout;
use super::vgpu::{Said, resolve_spec};

/// What Placement says about one resource provider.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ProviderState {
    pub inventories: BTreeMap<String, Inventory>,
    pub usages: BTreeMap<String, u64>,
    pub traits: Vec<String>,
}

/// The GPUs of one kind over the whole cloud.
#[derive(Debug, Clone, PartialEq)]
pub struct KindCapacity {
    pub spec: GpuSpec,
    pub capacity: Capacity,
    /// The resource classes counted here.
    pub classes: Vec<String>,
    /// How many resource providers hold this kind.
    pub providers: usize,
}

/// Capacity per GPU kind (see [`kind_id`]), with a warning per provider whose numbers do not add
/// up (more used than exist), which is then counted as full rather than dropped.
///
/// VGPU inventories of per-GPU providers come from `layout` (one entry per physical GPU and vGPU
/// type, so SR-IOV virtual functions count as the GPU they are part of); a kind's spec says what
/// one vGPU is of a physical GPU, so the document publishes physical GPUs beside the vGPUs. A VGPU
/// inventory on a compute node itself (older Nova) is counted here, its share resolved like a
/// flavor's.
pub fn gpu_capacity(
    providers: &[(ResourceProvider, ProviderState)],
    devices: &Devices,
    layout: &Layout,
    said: &mut Said,
) -> BTreeMap<LocalId, KindCapacity> {
    let mut kinds: BTreeMap<LocalId, KindCapacity> = BTreeMap::new();
    for (provider, state) in providers {
        for (class, inventory) in &state.inventories {
            if !devices.is_gpu_class(class) {
                continue;
            }
            let per_gpu_provider = provider
                .parent_provider_uuid
                .as_deref()
                .is_some_and(|parent| parent != provider.uuid);
            if class == "VGPU" && per_gpu_provider {
                continue; // in the layout
            }
            let spec = if class == "VGPU" {
                conventions::vgpu_spec(&state.traits, devices)
            } else {
                conventions::class_spec(class, devices)
            };
            let mut spec = match spec {
                Ok(spec) => spec,
                Err(why) => {
                    said.warnings
                        .insert(format!("resource provider {:?}: {why}", provider.name));
                    continue;
                }
            };
            if class == "VGPU" {
                spec.sharing = conventions::vgpu_sharing(&state.traits, devices);
                let whose = format!("resource provider {:?}", provider.name);
                resolve_spec(&mut spec, &layout.types, devices, &whose, said);
            }
            let capacity = placement_capacity(provider, class, inventory, state, said);
            add(&mut kinds, spec, capacity, class, 1, said);
        }
    }
    for (spec, capacity, providers) in &layout.capacities {
        add(
            &mut kinds,
            spec.clone(),
            *capacity,
            "VGPU",
            *providers,
            said,
        );
    }
    kinds
}

/// One provider's inventory of `class`: total = inventory x allocation ratio, unavailable =
/// reserved, used = usages.
fn placement_capacity(
    provider: &ResourceProvider,
    class: &str,
    inventory: &Inventory,
    state: &ProviderState,
    said: &mut Said,
) -> Capacity {
    let ratio = if inventory.allocation_ratio.is_finite() && inventory.allocation_ratio > 0.0 {
        inventory.allocation_ratio
    } else {
        1.0
    };
    let units = |n: u64| GpuCount::new((n as f64 * ratio).floor()).unwrap_or(GpuCount::ZERO);
    let total = units(inventory.total);
    let unavailable = units(inventory.reserved.min(inventory.total));
    let used = GpuCount::whole(
        u32::try_from(state.usages.get(class).copied().unwrap_or(0)).unwrap_or(u32::MAX),
    );
    Capacity::from_usage(total, used, unavailable).unwrap_or_else(|_| {
        said.warnings.insert(format!(
            "resource provider {:?}: {used} {class} used of {total} (reserved {unavailable}); counted as full",
            provider.name
        ));
        Capacity {
            total,
            used: total.checked_sub(unavailable).unwrap_or(GpuCount::ZERO),
            free: GpuCount::ZERO,
        }
    })
}

/// Adds `capacity` of `spec` to its kind.
fn add(
    kinds: &mut BTreeMap<LocalId, KindCapacity>,
    spec: GpuSpec,
    capacity: Capacity,
    class: &str,
    providers: usize,
    said: &mut Said,
) {
    let sharing = spec.sharing.clone();
    let entry = kinds.entry(kind_id(&spec)).or_insert_with(|| KindCapacity {
        spec,
        capacity: Capacity::default(),
        classes: Vec::new(),
        providers: 0,
    });
    keep_smaller_share(&mut entry.spec.sharing, sharing, &mut said.warnings);
    entry.capacity = entry.capacity + capacity;
    entry.providers += providers;
    if !entry.classes.iter().any(|c| c == class) {
        entry.classes.push(class.to_owned());
    }
}

/// Where two vGPU types meet in one kind with different densities, the larger density wins, so
/// physical counts are never above what the GPUs hold.
fn keep_smaller_share(kept: &mut Sharing, other: Sharing, warnings: &mut BTreeSet<String>) {
    if let (
        Sharing::Vgpu { vgpu_type, per_gpu },
        Sharing::Vgpu {
            vgpu_type: other_type,
            per_gpu: other_per_gpu,
        },
    ) = (&mut *kept, &other)
        && per_gpu != other_per_gpu
    {
        warnings.insert(format!(
            "vGPU types {vgpu_type} ({per_gpu} per GPU) and {other_type} ({other_per_gpu} per GPU) are one GPU kind; counting each vGPU as 1/{} of a GPU",
            (*per_gpu).max(*other_per_gpu)
        ));
        *per_gpu = (*per_gpu).max(*other_per_gpu);
    }
}

/// The id of a GPU kind: the model's words and the virtualization, so a flavor and the providers
/// that serve it meet on the same id (`tesla-v100-pcie-32gb.passthrough`). A vGPU kind adds its
/// type where the model does not already say it (`nvidia-a100-pcie-40gb.vgpu.nvidia-a100-10c`):
/// two types of one GPU model are two sizes, each with its own share of a GPU.
pub fn kind_id(spec: &GpuSpec) -> LocalId {
    let words = |text: &str| -> Vec<String> {
        text.split(|c: char| !c.is_alphanumeric())
            .filter(|part| !part.is_empty())
            .map(str::to_lowercase)
            .collect()
    };
    let model = words(spec.model.as_str()).join("-");
    let mut id = format!("{model}.{}", spec.virtualization.as_str());
    let vgpu_type = match &spec.sharing {
        Sharing::Vgpu { vgpu_type, .. } if vgpu_type.as_str() != "VGPU" => {
            let mut type_words = words(vgpu_type.as_str());
            if type_words.first().is_some_and(|w| w == "custom") {
                type_words.remove(0);
            }
            Some(type_words.join("-"))
        }
        Sharing::Mig { profile, .. } if spec.virtualization == Virtualization::Vgpu => {
            Some(format!("mig-{}", words(profile.as_str()).join("-")))
        }
        _ => None,
    };
    if let Some(vgpu_type) = vgpu_type.filter(|t| !t.is_empty() && !model.contains(t.as_str())) {
        id.push('.');
        id.push_str(&vgpu_type);
    }
    LocalId::new(id).unwrap_or_else(|_| unreachable!("never empty: it holds the virtualization"))
}

#[cfg(test)]
pub(crate) mod tests {
    use serde::Deserialize;

    use super::*;
    use crate::openstack::api::{Inventories, Traits, Usages};
    use crate::openstack::config::OpenstackConfig;
    use crate::openstack::detect::Detector;
    use crate::openstack::layout::layout;
    use accelfed_schemas::glue::physical_capacity;

    fn kinds_of(
        providers: &[(ResourceProvider, ProviderState)],
        devices: &Devices,
    ) -> (BTreeMap<LocalId, KindCapacity>, Said) {
        let mut said = Said::default();
        let layout = layout(providers, devices, &mut said);
        let kinds = gpu_capacity(providers, devices, &layout, &mut said);
        (kinds, said)
    }

    fn fixture<T: for<'de> Deserialize<'de>>(name: &str) -> T {
        let path = format!(
            "{}/tests/fixtures/openstack/{name}",
            env!("CARGO_MANIFEST_DIR")
        );
        serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap()
    }

    /// The captured cloud: providers with their inventories, usages and traits.
    pub(crate) fn captured_providers() -> Vec<(ResourceProvider, ProviderState)> {
        #[derive(Deserialize)]
        struct List {
            resource_providers: Vec<ResourceProvider>,
        }
        let list: List = fixture("placement-resource_providers-1.39.json");
        list.resource_providers
            .into_iter()
            .map(|rp| {
                let stem = format!("placement-rp-{}", rp.name.replace(':', "-"));
                let state = ProviderState {
                    inventories: fixture::<Inventories>(&format!("{stem}-inventories.json"))
                        .inventories,
                    usages: fixture::<Usages>(&format!("{stem}-usages.json")).usages,
                    traits: fixture::<Traits>(&format!("{stem}-traits.json")).traits,
                };
                (rp, state)
            })
            .collect()
    }

    pub(crate) fn devices(source: &str) -> Devices {
        #[derive(Deserialize)]
        struct File {
            openstack: Vec<OpenstackConfig>,
        }
        let file: File = toml::from_str(source).unwrap();
        Detector::new(&file.openstack[0]).devices().clone()
    }

    #[test]
    fn captured_cloud_has_four_v100s_and_sixteen_vgpus() {
        let devices = devices("[[openstack]]\nid = \"c\"\n");
        let (kinds, said) = kinds_of(&captured_providers(), &devices);
        assert!(said.warnings.is_empty(), "{:?}", said.warnings);
        let ids: Vec<&str> = kinds.keys().map(LocalId::as_str).collect();
        // The trait CUSTOM_NVIDIA_A100_4C spells NVIDIA's A100-4C: the kind names the A100.
        let vgpu_id = "nvidia-a100-pcie-40gb.vgpu.nvidia-a100-4c";
        assert_eq!(ids, [vgpu_id, "tesla-v100-pcie-16gb.passthrough"]);
        assert!(
            said.notes
                .iter()
                .any(|n| n.contains("NVIDIA A100-4C (read from the trait's name)")),
            "{:?}",
            said.notes
        );
        let v100 = &kinds[&LocalId::new("tesla-v100-pcie-16gb.passthrough").unwrap()];
        // populate.py booted g1.v100x2 and g1.v100x1: three of the four devices are allocated
        assert_eq!(v100.capacity.total, GpuCount::whole(4));
        assert_eq!(v100.capacity.used, GpuCount::whole(3));
        assert_eq!(v100.capacity.free, GpuCount::whole(1));
        assert_eq!(v100.providers, 4);
        assert_eq!(v100.classes, ["CUSTOM_PCI_10DE_1DB4"]);
        let vgpu = &kinds[&LocalId::new(vgpu_id).unwrap()];
        assert_eq!(vgpu.capacity.total, GpuCount::whole(16));
        assert_eq!(vgpu.capacity.used, GpuCount::whole(3));
        assert_eq!(vgpu.capacity.free, GpuCount::whole(13));
        // Two A100s, each a child provider (mdev layout) with a VGPU inventory of 8 from the
        // fake driver: Placement's count is the density there, and the physical capacity is 2
        // GPUs of which 3/8 are used.
        let physical = physical_capacity(vgpu.capacity, &vgpu.spec.sharing);
        assert_eq!(physical.total, GpuCount::whole(2));
        assert_eq!(physical.used.get(), 3.0 / 8.0);
    }

    #[test]
    fn a_compute_node_vgpu_inventory_of_unknown_type_counts_whole_with_a_warning() {
        // Nova before Stein: the VGPU inventory on the compute node itself, no type trait.
        let node = ResourceProvider {
            uuid: "n".into(),
            name: "old-node".into(),
            parent_provider_uuid: None,
            root_provider_uuid: Some("n".into()),
        };
        let state = ProviderState {
            inventories: [(
                "VGPU".to_owned(),
                Inventory {
                    total: 16,
                    reserved: 0,
                    allocation_ratio: 1.0,
                },
            )]
            .into(),
            usages: BTreeMap::new(),
            traits: vec![],
        };
        let devices = devices("[[openstack]]\nid = \"c\"\n");
        let (kinds, said) = kinds_of(&[(node, state)], &devices);
        let vgpu = kinds.values().next().unwrap();
        assert_eq!(
            physical_capacity(vgpu.capacity, &vgpu.spec.sharing).total,
            GpuCount::whole(16)
        );
        assert!(
            said.warnings
                .iter()
                .any(|w| w.contains("\"old-node\"") && w.contains("counted as whole GPUs")),
            "{:?}",
            said.warnings
        );
    }

    #[test]
    fn configured_aliases_name_the_placement_class_like_the_flavor() {
        let devices = devices(
            "[[openstack]]\nid = \"c\"\n[openstack.pci_alias.nvidia-v100]\nvendor = \"NVIDIA\"\nmodel = \"Tesla V100-PCIE-32GB\"\nvendor_id = \"10de\"\nproduct_id = \"1db4\"\n",
        );
        let (kinds, _) = kinds_of(&captured_providers(), &devices);
        assert!(kinds.contains_key(&LocalId::new("tesla-v100-pcie-32gb.passthrough").unwrap()));
    }

    #[test]
    fn reserved_is_unavailable_and_overcommitment_warns() {
        let rp = ResourceProvider {
            uuid: "u".into(),
            name: "node_pci_0000_81_00_0".into(),
            parent_provider_uuid: Some("p".into()),
            root_provider_uuid: Some("p".into()),
        };
        let inventory = |total, reserved| Inventory {
            total,
            reserved,
            allocation_ratio: 1.0,
        };
        let state = |total, reserved, used| ProviderState {
            inventories: [("VGPU".to_owned(), inventory(total, reserved))].into(),
            usages: [("VGPU".to_owned(), used)].into(),
            traits: vec![],
        };
        let devices = devices("[[openstack]]\nid = \"c\"\n");
        let of = |providers: &[(ResourceProvider, ProviderState)]| {
            let (kinds, said) = kinds_of(providers, &devices);
            (kinds, Vec::from_iter(said.warnings))
        };
        let (kinds, warnings) = of(&[(rp.clone(), state(8, 2, 3))]);
        let capacity = kinds.values().next().unwrap().capacity;
        assert_eq!(
            (capacity.total, capacity.used, capacity.free),
            (GpuCount::whole(8), GpuCount::whole(3), GpuCount::whole(3))
        );
        assert!(warnings.is_empty());
        let (kinds, warnings) = of(&[(rp, state(2, 0, 5))]);
        assert_eq!(kinds.values().next().unwrap().capacity.free, GpuCount::ZERO);
        assert!(
            warnings[0].contains("node_pci_0000_81_00_0"),
            "{warnings:?}"
        );
    }
}
