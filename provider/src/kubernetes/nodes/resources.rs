//! What device each GPU resource of a node is: the resource families, NVIDIA's whole, shared,
//! MIG and vGPU devices (GFD's labels), and how many physical GPUs stand behind a capacity.
//! AMD's, Intel's and unknown resources are read in [`super::super::vendors`].

use accelfed_schemas::gpu::vgpu::VgpuShare;
use accelfed_schemas::gpu::{
    GpuCount, GpuModel, GpuSpec, MigBasis, Sharing, Virtualization, mig_sharing,
};

use super::super::api::is_gpu_resource;
use super::super::labels::{Labels, mig_profile, nvidia_model, vgpu_type};
use super::{count, spec, text};

/// The GPU resource families.
pub(super) enum ResourceKind<'r> {
    /// `nvidia.com/gpu` or `nvidia.com/gpu.shared`.
    NvidiaGpu {
        shared: bool,
    },
    /// `nvidia.com/mig-<profile>[.shared]`.
    NvidiaMig {
        profile: &'r str,
        shared: bool,
    },
    Amd,
    /// `gpu.intel.com/i915` or `gpu.intel.com/xe`.
    Intel,
    /// Another resource [`is_gpu_resource`] takes for a GPU.
    Unknown,
}

impl<'r> ResourceKind<'r> {
    pub(super) fn of(resource: &'r str) -> Option<Self> {
        match resource {
            "nvidia.com/gpu" => Some(Self::NvidiaGpu { shared: false }),
            "nvidia.com/gpu.shared" => Some(Self::NvidiaGpu { shared: true }),
            "amd.com/gpu" => Some(Self::Amd),
            "gpu.intel.com/i915" | "gpu.intel.com/xe" => Some(Self::Intel),
            _ => {
                let Some(profile) = resource.strip_prefix("nvidia.com/mig-") else {
                    return is_gpu_resource(resource).then_some(Self::Unknown);
                };
                let (profile, shared) = match profile.strip_suffix(".shared") {
                    Some(base) => (base, true),
                    None => (profile, false),
                };
                Some(Self::NvidiaMig { profile, shared })
            }
        }
    }

    /// The device spec, what one device is of a physical GPU, and the physical GPUs behind the
    /// whole capacity; `None` (with a warning) when the count is unknowable.
    pub(super) fn read(
        &self,
        resource: &str,
        capacity: u64,
        labels: &mut Labels<'_>,
    ) -> Option<(GpuSpec, Sharing, GpuCount)> {
        match self {
            Self::Amd => Some(super::super::vendors::amd(capacity, labels)),
            Self::Intel => Some(super::super::vendors::intel(capacity, labels)),
            Self::Unknown => Some(super::super::vendors::unknown(resource, capacity, labels)),
            Self::NvidiaGpu { shared } => {
                let prefix = "nvidia.com/gpu";
                let mut gpu = nvidia_spec(prefix, labels);
                let single = labels.text("nvidia.com/mig.strategy") == Some("single");
                let profile = labels
                    .text(&format!("{prefix}.product"))
                    .and_then(mig_profile)
                    .filter(|_| single);
                if let Some(profile) = profile {
                    // GFD labels the slices, not their parents: the slices are what is published,
                    // each worth its profile's share of the parent.
                    gpu.virtualization = Virtualization::Mig;
                    gpu.mig_profile = text(profile);
                    let shared = replicas(resource, prefix, capacity, *shared, labels)?;
                    let sharing = mig(&gpu.model, profile, shared.per_gpu, labels);
                    return Some((gpu, sharing.clone(), worth(capacity, &sharing)));
                }
                if labels.text("nvidia.com/vgpu.present") == Some("true") {
                    gpu.virtualization = Virtualization::Vgpu;
                    if let Some(host) = labels.text("nvidia.com/vgpu.host-driver-version") {
                        gpu.driver_version = text(host);
                    }
                }
                let shared = replicas(resource, prefix, capacity, *shared, labels)?;
                if let Some(sharing) = vgpu(&gpu.model, shared.per_gpu, labels) {
                    gpu.virtualization = Virtualization::Vgpu;
                    return Some((gpu, sharing.clone(), worth(capacity, &sharing)));
                }
                if shared.per_gpu <= 1 {
                    return Some((gpu, Sharing::Whole, count(capacity)));
                }
                let sharing = if shared.mps {
                    gpu.virtualization = Virtualization::Mps;
                    Sharing::Mps {
                        replicas: shared.per_gpu,
                    }
                } else {
                    gpu.virtualization = Virtualization::TimeSlicing;
                    Sharing::TimeSlicing {
                        replicas: shared.per_gpu,
                    }
                };
                Some((gpu, sharing, shared.gpus))
            }
            Self::NvidiaMig { profile, shared } => {
                let prefix = format!("nvidia.com/mig-{profile}");
                let mut gpu = nvidia_spec(&prefix, labels);
                if gpu.model.as_str() == "NVIDIA GPU" {
                    gpu = nvidia_spec("nvidia.com/gpu", labels);
                    gpu.memory = labels.memory_mib(&prefix);
                }
                if gpu.compute_capability.is_none() {
                    // GFD labels the compute capability of the parent GPU only.
                    gpu.compute_capability = labels
                        .compute_capability("nvidia.com/gpu")
                        .as_deref()
                        .and_then(text);
                }
                gpu.virtualization = Virtualization::Mig;
                gpu.mig_profile = text(profile);
                let shared = replicas(resource, &prefix, capacity, *shared, labels)?;
                let sharing = mig(&gpu.model, profile, shared.per_gpu, labels);
                Some((gpu, sharing.clone(), worth(capacity, &sharing)))
            }
        }
    }
}

/// Physical GPUs `capacity` devices of one sharing are worth.
fn worth(capacity: u64, sharing: &Sharing) -> GpuCount {
    GpuCount::new(capacity as f64 * sharing.physical_share()).unwrap_or_else(|_| count(capacity))
}

/// The share of a MIG instance of `profile` on a `parent`, divided among `replicas` when the
/// slices are time-sliced too (kept as a MIG share of `of x replicas`: the sharing vocabulary has
/// one mode per device, and the slice is what a site configured).
fn mig(parent: &GpuModel, profile: &str, replicas: u32, labels: &mut Labels<'_>) -> Sharing {
    let (sharing, basis) = mig_sharing(parent.as_str(), profile);
    let Sharing::Mig {
        profile: name,
        slices,
        of,
    } = sharing
    else {
        return sharing;
    };
    match basis {
        MigBasis::Table => {}
        MigBasis::MemoryFraction => labels.note(&format!(
            "MIG profile {profile} of {parent} is not in the profile table; counted by its memory as {slices}/{of} of the GPU"
        )),
        MigBasis::Guess => labels.note(&format!(
            "MIG profile {profile} of {parent}: neither the profile table nor its memory gives its share; counted as {slices}/{of} of the GPU"
        )),
    }
    Sharing::Mig {
        profile: name,
        slices,
        of: of.saturating_mul(replicas.max(1)),
    }
}

/// What one device of a vGPU guest is of its physical GPU, when GFD's product names a vGPU type
/// (`NVIDIA-A10-12Q`: half an A10), divided among `replicas` when the vGPU is time-sliced too. A type
/// of a board accelfed does not know is reported and its devices count whole (`None`).
fn vgpu(parent: &GpuModel, replicas: u32, labels: &mut Labels<'_>) -> Option<Sharing> {
    let product = labels.text("nvidia.com/gpu.product")?;
    let vgpu = vgpu_type(product)?;
    if let Some(profile) = vgpu.mig_profile() {
        return Some(mig(parent, &profile, replicas, labels));
    }
    match vgpu.share() {
        VgpuShare::Known {
            sharing: Sharing::Vgpu { vgpu_type, per_gpu },
            ..
        } => Some(Sharing::Vgpu {
            vgpu_type,
            per_gpu: per_gpu.saturating_mul(replicas.max(1)),
        }),
        _ => {
            labels.note_name(format!(
                "vGPU type {} is not of a GPU accelfed knows (board {}, {} GB); its devices are counted as whole GPUs",
                vgpu.name, vgpu.board, vgpu.framebuffer_gb
            ));
            None
        }
    }
}

/// How the devices of a resource share physical GPUs.
struct Shared {
    /// Devices per physical GPU (1 when not shared).
    per_gpu: u32,
    /// The physical GPUs behind the capacity.
    gpus: GpuCount,
    /// MPS rather than time-slicing.
    mps: bool,
}

/// Devices per GPU of a possibly shared resource: GFD's `.replicas`; when that does not divide the
/// capacity, the `.count` label's GPUs (devices per GPU rounded up, so a pod's share never counts
/// more than a GPU gives); without either, `None` with a warning rather than a guessed count.
fn replicas(
    resource: &str,
    prefix: &str,
    capacity: u64,
    shared: bool,
    labels: &mut Labels<'_>,
) -> Option<Shared> {
    let replicas_key = format!("{prefix}.replicas");
    let replicas = labels.number(&replicas_key);
    let strategy = labels.text(&format!("{prefix}.sharing-strategy"));
    let mps = strategy == Some("mps");
    let sharing = shared
        || replicas.is_some_and(|r| r > 1)
        || matches!(strategy, Some("time-slicing" | "mps"));
    let whole = |n: u64| u32::try_from(n).unwrap_or(u32::MAX);
    if !sharing {
        return Some(Shared {
            per_gpu: 1,
            gpus: count(capacity),
            mps,
        });
    }
    if let Some(replicas) = replicas.filter(|r| *r > 0 && capacity.is_multiple_of(*r)) {
        return Some(Shared {
            per_gpu: whole(replicas),
            gpus: count(capacity / replicas),
            mps,
        });
    }
    if let Some(devices) = labels.number(&format!("{prefix}.count")).filter(|n| *n > 0) {
        return Some(Shared {
            per_gpu: whole(capacity.div_ceil(devices)),
            gpus: count(devices),
            mps,
        });
    }
    let value = labels.text(&replicas_key).unwrap_or("absent").to_owned();
    labels.warn(
        &replicas_key,
        &value,
        &format!("does not divide the capacity {capacity} of shared {resource} and no .count label says how many GPUs it has; resource skipped"),
    );
    None
}

pub(in crate::kubernetes) fn nvidia_spec(prefix: &str, labels: &mut Labels<'_>) -> GpuSpec {
    let model = labels
        .text(&format!("{prefix}.product"))
        .map_or_else(|| "NVIDIA GPU".to_owned(), nvidia_model);
    let mut gpu = spec("NVIDIA", &model, labels);
    gpu.memory = labels.memory_mib(prefix);
    gpu.compute_capability = labels.compute_capability(prefix).as_deref().and_then(text);
    gpu.driver_version = labels.nvidia_driver().as_deref().and_then(text);
    gpu.cuda_version = labels.cuda().as_deref().and_then(text);
    gpu
}
