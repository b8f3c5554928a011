//! What one vGPU of a type is of its physical GPU, so a VM's vGPU is metered as that share
//! (DESIGN.md "Physical units"). The share comes from the type: NVIDIA's vGPU type tables give a
//! time-sliced type's instances per GPU (board memory over framebuffer: A100-10C of a 40 GB A100 is
//! a quarter) and a MIG-backed type's slice (A100-3-20C is 3 of 7), read by
//! [`accelfed_schemas::gpu::vgpu`]. The type's NVIDIA name comes from `[openstack.vgpu_profile]`
//! (keyed by trait or resource provider) or from a trait that spells it (`CUSTOM_NVIDIA_A100_10C`).
//! On an mdev layout Placement also says it: each physical GPU is a provider whose VGPU total is
//! the instances of its type, and that count is what Nova schedules by, so it wins there
//! (`layout.rs` reads the providers). Without either, the configuration's `per_gpu`. Pure.

use std::collections::{BTreeMap, BTreeSet};

use accelfed_schemas::glue::share_text;
use accelfed_schemas::gpu::vgpu::{self, VgpuShare};
use accelfed_schemas::gpu::{GpuModel, GpuSpec, MemoryMb, Sharing};
use accelfed_schemas::names::Text;

use super::conventions::{Devices, FlavorGpu};

/// The physical GPU a vGPU type is a share of, as NVIDIA's type tables name it.
#[derive(Debug, Clone, PartialEq)]
pub struct Parent {
    /// The catalogue's canonical name (`NVIDIA A100-PCIE-40GB`).
    pub model: &'static str,
    pub vendor: &'static str,
    /// The framebuffer of one vGPU, in GB.
    pub framebuffer_gb: u32,
}

/// What one vGPU of a type is.
#[derive(Debug, Clone, PartialEq)]
pub struct Resolved {
    /// `Vgpu { per_gpu }` for a time-sliced type, `Mig` for a MIG-backed one.
    pub sharing: Sharing,
    /// The physical GPU, where the type's NVIDIA name is known.
    pub parent: Option<Parent>,
    /// Where the share came from, for messages: `Placement's GPUs hold 8 each`.
    pub basis: String,
}

impl Resolved {
    /// How many vGPUs of this type one physical GPU holds: `per_gpu`, or the MIG-backed type's
    /// instances that fit the GPU's slices (a 3-of-7 slice: 2).
    pub fn per_gpu(&self) -> u32 {
        match &self.sharing {
            Sharing::Vgpu { per_gpu, .. } => (*per_gpu).max(1),
            Sharing::Mig { slices, of, .. } if *slices > 0 => (of / slices).max(1),
            _ => 1,
        }
    }
}

/// The cloud's vGPU types by key (the type as [`super::conventions::vgpu_sharing`] names it: the
/// configured or first `CUSTOM_*` trait, `VGPU` for none).
pub type Types = BTreeMap<String, Resolved>;

/// What resolving said: warnings, and at info level what was assumed.
#[derive(Debug, Default)]
pub struct Said {
    pub warnings: BTreeSet<String>,
    pub notes: BTreeSet<String>,
}

/// How a type's NVIDIA name was found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Named {
    /// `[openstack.vgpu_profile]` names it.
    Configured,
    /// A trait spells it.
    Trait,
}

/// The NVIDIA vGPU type a trait spells: `CUSTOM_NVIDIA_A100_10C` -> `A100-10C`,
/// `CUSTOM_NVIDIA_A100_3_20C` -> `A100-3-20C`. `None` for traits that name no type of a known board
/// (`CUSTOM_NVIDIA_471`, after Nova's `nvidia-471` mdev type).
pub fn trait_type(name: &str) -> Option<String> {
    let rest = name.strip_prefix("CUSTOM_")?;
    let rest = rest.strip_prefix("NVIDIA_").unwrap_or(rest);
    let candidate = rest.replace('_', "-");
    let known = matches!(vgpu::parse(&candidate)?.share(), VgpuShare::Known { .. });
    known.then_some(candidate)
}

/// The NVIDIA type of the vGPUs of type `key`, from the configuration (by trait) or the trait's own
/// name, where neither needs a resource provider.
pub fn named_by_key(key: &str, devices: &Devices) -> Option<(String, Named)> {
    match devices.vgpu_profile.get(key) {
        Some(name) => Some((name.clone(), Named::Configured)),
        None => trait_type(key).map(|name| (name, Named::Trait)),
    }
}

/// What one vGPU of NVIDIA type `name` is (validated configuration and [`trait_type`] only give
/// known types; `None` otherwise). `key` names the type in the sharing.
pub fn table_share(key: &str, name: &str) -> Option<Resolved> {
    let VgpuShare::Known {
        parent, sharing, ..
    } = vgpu::parse(name)?.share()
    else {
        return None;
    };
    let framebuffer_gb = vgpu::parse(name)?.framebuffer_gb;
    let sharing = match sharing {
        Sharing::Vgpu { per_gpu, .. } => Sharing::Vgpu {
            vgpu_type: Text::new(key).unwrap_or_else(|_| Text::literal("VGPU")),
            per_gpu,
        },
        mig => mig,
    };
    let basis = format!(
        "NVIDIA's type table makes {name} {} of an {}",
        share_text(&sharing).unwrap_or_else(|| "all".to_owned()),
        parent.name
    );
    Some(Resolved {
        sharing,
        parent: Some(Parent {
            model: parent.name,
            vendor: parent.vendor,
            framebuffer_gb,
        }),
        basis,
    })
}

/// The info line saying which type was assumed for `key`.
pub fn assumed(key: &str, name: &str, how: Named, resolved: &Resolved) -> String {
    let source = match how {
        Named::Configured => "as [openstack.vgpu_profile] names it",
        Named::Trait => "read from the trait's name",
    };
    format!(
        "vGPU type {key}: NVIDIA {name} ({source}); {}",
        resolved.basis
    )
}

/// Fills in a vGPU flavor's share of a physical GPU (see [`resolve_spec`]).
pub fn resolve(
    gpu: &mut FlavorGpu,
    types: &Types,
    devices: &Devices,
    flavor: &str,
    said: &mut Said,
) {
    resolve_spec(
        &mut gpu.spec,
        types,
        devices,
        &format!("flavor {flavor:?}"),
        said,
    );
}

/// Fills in what one vGPU of `spec` is: the cloud's type of its key (of the only type there is,
/// for a flavor that names none), else the NVIDIA type its trait or the configuration names, else
/// the configuration's `per_gpu`. A spec not named by `[openstack.vgpu_type]` takes the physical
/// GPU's model, vendor and the vGPU's memory where the type names them, so records and capacity
/// name the GPU, not the trait. Warns (naming `whose`) when nothing says (the vGPU is then counted
/// as a whole GPU) or when `per_gpu` disagrees with what the cloud says (the cloud wins: it is what
/// Nova schedules by and what the hardware holds). Other sharings are left as they are.
pub fn resolve_spec(
    spec: &mut GpuSpec,
    types: &Types,
    devices: &Devices,
    whose: &str,
    said: &mut Said,
) {
    let Sharing::Vgpu { vgpu_type, per_gpu } = &spec.sharing else {
        return;
    };
    let (key, configured) = (vgpu_type.as_str().to_owned(), *per_gpu);
    let listed = types.get(&key).cloned().or_else(|| {
        let mut all = types.values();
        match (key == "VGPU", all.next(), all.next()) {
            (true, Some(only), None) => Some(only.clone()),
            _ => None,
        }
    });
    let found = listed.or_else(|| {
        let (name, how) = named_by_key(&key, devices)?;
        let resolved = table_share(&key, &name)?;
        said.notes.insert(assumed(&key, &name, how, &resolved));
        Some(resolved)
    });
    match found {
        Some(resolved) => {
            let differs = match resolved.sharing {
                Sharing::Vgpu { per_gpu, .. } => per_gpu != configured,
                _ => true,
            };
            if configured != 0 && differs {
                said.warnings.insert(format!(
                    "{whose}: vGPU type {key}: per_gpu = {configured} in the configuration, but {}; counting each vGPU as {} of a GPU",
                    resolved.basis,
                    share_text(&resolved.sharing).unwrap_or_else(|| "1".to_owned())
                ));
            }
            apply(spec, &resolved, &key, devices);
        }
        None if configured == 0 => {
            said.warnings.insert(format!(
                "{whose}: vGPU type {key}: how many one physical GPU holds is unknown (no per-GPU VGPU inventory in Placement, no NVIDIA type under [openstack.vgpu_profile], no per_gpu under [openstack.vgpu_type.{key}]); its vGPUs are counted as whole GPUs"
            ));
        }
        None => {}
    }
}

/// Puts `resolved` into `spec`: its sharing, and the physical GPU where the site did not describe
/// the type itself.
fn apply(spec: &mut GpuSpec, resolved: &Resolved, key: &str, devices: &Devices) {
    spec.sharing = resolved.sharing.clone();
    let described =
        devices.vgpu_type.contains_key(key) || devices.vgpu_type.contains_key("default");
    if let Some(parent) = resolved.parent.as_ref().filter(|_| !described)
        && let (Ok(model), Ok(vendor)) =
            (GpuModel::canonical(parent.model), Text::new(parent.vendor))
    {
        spec.model = model;
        spec.vendor = vendor;
        spec.memory = Some(MemoryMb::new(u64::from(parent.framebuffer_gb) * 1000));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn traits_that_spell_a_type_name_it_and_others_do_not() {
        assert_eq!(
            trait_type("CUSTOM_NVIDIA_A100_10C").as_deref(),
            Some("A100-10C")
        );
        assert_eq!(
            trait_type("CUSTOM_NVIDIA_A100_3_20C").as_deref(),
            Some("A100-3-20C")
        );
        assert_eq!(
            trait_type("CUSTOM_H100XM_20C").as_deref(),
            Some("H100XM-20C")
        );
        for name in [
            "CUSTOM_NVIDIA_471",
            "CUSTOM_NVIDIA_11",
            "VGPU",
            "CUSTOM_GPU_T4",
        ] {
            assert_eq!(trait_type(name), None, "{name}");
        }
    }

    #[test]
    fn table_shares_of_time_sliced_and_mig_backed_types() {
        // NVIDIA vGPU user guide, A100 PCIe 40GB types: A100-10C holds 4 per GPU, A100-20C 2;
        // A100-3-20C sits on a 3g.20gb instance, 3 of the 7 slices (2 fit one GPU).
        let ten = table_share("CUSTOM_NVIDIA_471", "A100-10C").unwrap();
        assert_eq!(ten.sharing.physical_share(), 0.25);
        assert_eq!(ten.per_gpu(), 4);
        assert_eq!(ten.parent.as_ref().unwrap().model, "NVIDIA A100-PCIE-40GB");
        assert_eq!(table_share("K", "A100-20C").unwrap().per_gpu(), 2);
        let mig = table_share("K", "A100-3-20C").unwrap();
        assert!((mig.sharing.physical_share() - 3.0 / 7.0).abs() < 1e-12);
        assert_eq!(mig.per_gpu(), 2);
        assert_eq!(table_share("K", "A100-SXM4-40GB"), None);
    }
}
