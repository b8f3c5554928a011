//! One node's GPUs: which resources it advertises, what device each one is, how many physical GPUs
//! stand behind them, and whether the node can take new pods.
//!
//! Resources read: `nvidia.com/gpu` (whole GPUs, time-sliced or MPS replicas, vGPUs, or MIG slices
//! under the single strategy), `nvidia.com/gpu.shared` (replicas renamed by the device plugin),
//! `nvidia.com/mig-<profile>` and `nvidia.com/mig-<profile>.shared` (mixed strategy), `amd.com/gpu`.
//! Under sharing, physical GPUs = capacity / replicas; when that does not divide, GFD's `.count`
//! label is used, and without one the resource is skipped with a warning rather than published
//! with a guessed count.

use accelfed_schemas::gpu::{GpuCount, GpuModel, GpuSpec, Virtualization};
use accelfed_schemas::names::Text;

use super::api::Node;
use super::labels::{Labels, amd_model, nvidia_model};
use super::quantity::whole;

/// The GPUs of one node.
#[derive(Debug, Clone, PartialEq)]
pub struct NodeGpus {
    pub name: String,
    /// Why the node takes no new pods (`NotReady`, `cordoned`, `tainted key:NoSchedule`).
    pub unavailable: Option<String>,
    /// `amd64`, `arm64`.
    pub architecture: String,
    /// `Ubuntu 22.04.4 LTS`.
    pub os_image: String,
    pub resources: Vec<NodeResource>,
}

/// One GPU resource a node advertises.
#[derive(Debug, Clone, PartialEq)]
pub struct NodeResource {
    /// `nvidia.com/gpu`, `nvidia.com/mig-1g.10gb`.
    pub resource: String,
    pub gpu: GpuSpec,
    /// Schedulable devices (`status.capacity`).
    pub capacity: u64,
    /// What pods may request (`status.allocatable`; less than capacity when devices are unhealthy
    /// or reserved).
    pub allocatable: u64,
    /// Physical GPUs behind the resource (a MIG profile: its parent GPUs).
    pub physical: GpuCount,
}

/// Reads a node; `None` when it advertises no GPU resource. `tolerated` are taint keys that do not
/// make a node unavailable (GPU nodes are commonly tainted to keep other pods off).
pub fn read_node(
    node: &Node,
    tolerated: &[String],
    warnings: &mut Vec<String>,
) -> Option<NodeGpus> {
    let name = node.metadata.name.as_str();
    let mut labels = Labels::new(name, &node.metadata.labels);
    let mut resources = Vec::new();
    for (resource, capacity_text) in &node.status.capacity {
        let Some(kind) = ResourceKind::of(resource) else {
            continue;
        };
        let capacity = match whole(capacity_text) {
            Ok(value) => value,
            Err(err) => {
                warnings.push(format!(
                    "node {name:?}: capacity of {resource}: {err}; resource skipped"
                ));
                continue;
            }
        };
        let allocatable = match node
            .status
            .allocatable
            .get(resource)
            .map(|text| whole(text))
        {
            Some(Ok(value)) => value.min(capacity),
            Some(Err(err)) => {
                warnings.push(format!(
                    "node {name:?}: allocatable {resource}: {err}; counted as 0"
                ));
                0
            }
            None => 0,
        };
        if capacity == 0 {
            continue;
        }
        if let Some(read) = kind.read(resource, capacity, &mut labels) {
            resources.push(NodeResource {
                resource: resource.clone(),
                gpu: read.0,
                capacity,
                allocatable,
                physical: read.1,
            });
        }
    }
    warnings.append(&mut labels.warnings);
    if resources.is_empty() {
        return None;
    }
    let info = node.status.node_info.as_ref();
    Some(NodeGpus {
        name: name.to_owned(),
        unavailable: unavailable(node, tolerated),
        architecture: info.map(|i| i.architecture.clone()).unwrap_or_default(),
        os_image: info.map(|i| i.os_image.clone()).unwrap_or_default(),
        resources,
    })
}

/// Why a node takes no new pods, if it does not.
fn unavailable(node: &Node, tolerated: &[String]) -> Option<String> {
    let ready = node
        .status
        .conditions
        .iter()
        .find(|condition| condition.kind == "Ready");
    if ready.is_none_or(|condition| condition.status != "True") {
        return Some("NotReady".to_owned());
    }
    if node.spec.unschedulable {
        return Some("cordoned".to_owned());
    }
    node.spec
        .taints
        .iter()
        .find(|taint| {
            matches!(taint.effect.as_str(), "NoSchedule" | "NoExecute")
                && !tolerated.contains(&taint.key)
        })
        .map(|taint| format!("tainted {}:{}", taint.key, taint.effect))
}

/// The GPU resource families.
enum ResourceKind<'r> {
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
}

impl<'r> ResourceKind<'r> {
    fn of(resource: &'r str) -> Option<Self> {
        match resource {
            "nvidia.com/gpu" => Some(Self::NvidiaGpu { shared: false }),
            "nvidia.com/gpu.shared" => Some(Self::NvidiaGpu { shared: true }),
            "amd.com/gpu" => Some(Self::Amd),
            _ => {
                let profile = resource.strip_prefix("nvidia.com/mig-")?;
                let (profile, shared) = match profile.strip_suffix(".shared") {
                    Some(base) => (base, true),
                    None => (profile, false),
                };
                Some(Self::NvidiaMig { profile, shared })
            }
        }
    }

    /// The device spec and physical GPU count; `None` (with a warning) when the count is unknowable.
    fn read(
        &self,
        resource: &str,
        capacity: u64,
        labels: &mut Labels<'_>,
    ) -> Option<(GpuSpec, GpuCount)> {
        match self {
            Self::Amd => {
                let model = labels
                    .amd("product-name")
                    .map_or_else(|| "AMD GPU".to_owned(), amd_model);
                let mut gpu = spec("AMD", &model);
                gpu.memory = labels.amd("vram").and_then(|vram| {
                    accelfed_schemas::gpu::MemoryMb::parse(&vram.replace('G', " GiB")).ok()
                });
                gpu.driver_version = labels.amd("driver-version").and_then(text);
                Some((gpu, count(capacity)))
            }
            Self::NvidiaGpu { shared } => {
                let prefix = "nvidia.com/gpu";
                let mut gpu = nvidia_spec(prefix, labels);
                let mig_single = labels.text("nvidia.com/mig.strategy") == Some("single")
                    && labels
                        .text(&format!("{prefix}.product"))
                        .is_some_and(|p| p.contains("-MIG-"));
                if mig_single {
                    gpu.virtualization = Virtualization::Mig;
                    gpu.mig_profile = labels
                        .text(&format!("{prefix}.product"))
                        .and_then(|p| p.split("-MIG-").nth(1))
                        .and_then(text);
                    // GFD labels the slices, not their parents: the slices are what is published.
                    return Some((gpu, count(capacity)));
                }
                if labels.text("nvidia.com/vgpu.present") == Some("true") {
                    gpu.virtualization = Virtualization::Vgpu;
                    if let Some(host) = labels.text("nvidia.com/vgpu.host-driver-version") {
                        gpu.driver_version = text(host);
                    }
                }
                let physical = physical(resource, prefix, capacity, *shared, labels)?;
                if physical.get() < capacity as f64 {
                    gpu.virtualization = Virtualization::TimeSlicing;
                }
                Some((gpu, physical))
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
                let slices = physical(resource, &prefix, capacity, *shared, labels)?;
                let parents = labels.number("nvidia.com/gpu.count").map_or(slices, count);
                Some((gpu, parents))
            }
        }
    }
}

/// Devices behind a possibly shared resource: capacity / replicas.
fn physical(
    resource: &str,
    prefix: &str,
    capacity: u64,
    shared: bool,
    labels: &mut Labels<'_>,
) -> Option<GpuCount> {
    let replicas_key = format!("{prefix}.replicas");
    let replicas = labels.number(&replicas_key);
    let strategy = labels.text(&format!("{prefix}.sharing-strategy"));
    let sharing = shared
        || replicas.is_some_and(|r| r > 1)
        || matches!(strategy, Some("time-slicing" | "mps"));
    if !sharing {
        return Some(count(capacity));
    }
    if let Some(replicas) = replicas.filter(|r| *r > 0 && capacity.is_multiple_of(*r)) {
        return Some(count(capacity / replicas));
    }
    if let Some(devices) = labels.number(&format!("{prefix}.count")).filter(|n| *n > 0) {
        return Some(count(devices));
    }
    let value = labels.text(&replicas_key).unwrap_or("absent").to_owned();
    labels.warn(
        &replicas_key,
        &value,
        &format!("does not divide the capacity {capacity} of shared {resource} and no .count label says how many GPUs it has; resource skipped"),
    );
    None
}

fn nvidia_spec(prefix: &str, labels: &mut Labels<'_>) -> GpuSpec {
    let model = labels
        .text(&format!("{prefix}.product"))
        .map_or_else(|| "NVIDIA GPU".to_owned(), nvidia_model);
    let mut gpu = spec("NVIDIA", &model);
    gpu.memory = labels.memory_mib(prefix);
    gpu.compute_capability = labels.compute_capability(prefix).as_deref().and_then(text);
    gpu.driver_version = labels.nvidia_driver().as_deref().and_then(text);
    gpu.cuda_version = labels.cuda().as_deref().and_then(text);
    gpu
}

fn spec(vendor: &str, model: &str) -> GpuSpec {
    let model = GpuModel::new(model)
        .unwrap_or_else(|_| GpuModel::new("GPU").expect("literal model is valid"));
    GpuSpec::new(Text::new(vendor).expect("literal vendor is valid"), model)
}

fn text(value: &str) -> Option<Text> {
    Text::new(value).ok()
}

pub(crate) fn count(value: u64) -> GpuCount {
    GpuCount::whole(u32::try_from(value).unwrap_or(u32::MAX))
}
