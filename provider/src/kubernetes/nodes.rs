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

#[cfg(test)]
mod tests {
    use super::*;

    fn node(json: &str) -> Node {
        serde_json::from_str(json).unwrap()
    }

    fn ready(capacity: &str, labels: &str) -> Node {
        node(&format!(
            r#"{{"metadata":{{"name":"n1","labels":{labels}}},
                "status":{{"capacity":{capacity},"allocatable":{capacity},
                          "conditions":[{{"type":"Ready","status":"True"}}]}}}}"#
        ))
    }

    #[test]
    fn time_slicing_divides_by_replicas_or_falls_back_to_the_count_label() {
        let mut warnings = Vec::new();
        let read = read_node(
            &ready(
                r#"{"nvidia.com/gpu":"8"}"#,
                r#"{"nvidia.com/gpu.product":"Tesla-T4-SHARED","nvidia.com/gpu.replicas":"4"}"#,
            ),
            &[],
            &mut warnings,
        )
        .unwrap();
        assert_eq!(read.resources[0].physical, GpuCount::whole(2));
        assert_eq!(
            read.resources[0].gpu.virtualization,
            Virtualization::TimeSlicing
        );
        // 10 replicas of 3 GPUs do not divide; the .count label says 3.
        let read = read_node(
            &ready(
                r#"{"nvidia.com/gpu":"10"}"#,
                r#"{"nvidia.com/gpu.replicas":"3","nvidia.com/gpu.count":"3"}"#,
            ),
            &[],
            &mut warnings,
        )
        .unwrap();
        assert_eq!(read.resources[0].physical, GpuCount::whole(3));
        assert!(warnings.is_empty(), "{warnings:?}");
    }

    #[test]
    fn a_shared_resource_with_an_unknowable_gpu_count_is_skipped_with_a_warning() {
        let mut warnings = Vec::new();
        let read = read_node(
            &ready(
                r#"{"nvidia.com/gpu":"10"}"#,
                r#"{"nvidia.com/gpu.replicas":"3","nvidia.com/gpu.count":"many"}"#,
            ),
            &[],
            &mut warnings,
        );
        assert_eq!(read, None);
        assert_eq!(
            warnings,
            [
                "node \"n1\": label nvidia.com/gpu.count=\"many\" is not a whole number; ignored",
                "node \"n1\": label nvidia.com/gpu.replicas=\"3\" does not divide the capacity 10 of shared nvidia.com/gpu and no .count label says how many GPUs it has; resource skipped",
            ]
        );
    }

    #[test]
    fn garbage_replicas_on_an_unshared_resource_count_whole_gpus() {
        let mut warnings = Vec::new();
        let read = read_node(
            &ready(
                r#"{"nvidia.com/gpu":"4"}"#,
                r#"{"nvidia.com/gpu.replicas":"lots","nvidia.com/gpu.product":"NVIDIA-H100-80GB-HBM3"}"#,
            ),
            &[],
            &mut warnings,
        )
        .unwrap();
        assert_eq!(read.resources[0].physical, GpuCount::whole(4));
        assert_eq!(read.resources[0].gpu.virtualization, Virtualization::None);
        assert_eq!(
            read.resources[0].gpu.model.as_str(),
            "NVIDIA H100-80GB-HBM3"
        );
        assert_eq!(
            warnings,
            ["node \"n1\": label nvidia.com/gpu.replicas=\"lots\" is not a whole number; ignored"]
        );
    }

    #[test]
    fn mig_single_strategy_publishes_the_slices() {
        let read = read_node(
            &ready(
                r#"{"nvidia.com/gpu":"14"}"#,
                r#"{"nvidia.com/mig.strategy":"single","nvidia.com/gpu.product":"NVIDIA-A100-SXM4-40GB-MIG-1g.5gb","nvidia.com/gpu.count":"2"}"#,
            ),
            &[],
            &mut Vec::new(),
        )
        .unwrap();
        let resource = &read.resources[0];
        assert_eq!(resource.gpu.virtualization, Virtualization::Mig);
        assert_eq!(
            resource.gpu.mig_profile.as_ref().map(Text::as_str),
            Some("1g.5gb")
        );
        assert_eq!(resource.gpu.model.as_str(), "NVIDIA A100-SXM4-40GB");
        assert_eq!(resource.capacity, 14);
    }

    #[test]
    fn not_ready_cordoned_and_tainted_nodes_are_unavailable() {
        let taint = |key: &str, effect: &str| {
            node(&format!(
                r#"{{"metadata":{{"name":"n"}},"spec":{{"taints":[{{"key":"{key}","effect":"{effect}"}}]}},
                    "status":{{"capacity":{{"amd.com/gpu":"8"}},"conditions":[{{"type":"Ready","status":"True"}}]}}}}"#
            ))
        };
        let tolerated = ["amd.com/gpu".to_owned()];
        let state = |n: &Node| {
            read_node(n, &tolerated, &mut Vec::new())
                .unwrap()
                .unavailable
        };
        assert_eq!(state(&taint("amd.com/gpu", "NoSchedule")), None);
        assert_eq!(state(&taint("maintenance", "PreferNoSchedule")), None);
        assert_eq!(
            state(&taint("maintenance", "NoExecute")).as_deref(),
            Some("tainted maintenance:NoExecute")
        );
        let not_ready =
            node(r#"{"metadata":{"name":"n"},"status":{"capacity":{"amd.com/gpu":"8"}}}"#);
        assert_eq!(state(&not_ready).as_deref(), Some("NotReady"));
        let cordoned = node(
            r#"{"metadata":{"name":"n"},"spec":{"unschedulable":true},
                "status":{"capacity":{"amd.com/gpu":"8"},"conditions":[{"type":"Ready","status":"True"}]}}"#,
        );
        assert_eq!(state(&cordoned).as_deref(), Some("cordoned"));
        // Without allocatable nothing is free to take.
        assert_eq!(
            read_node(&cordoned, &tolerated, &mut Vec::new())
                .unwrap()
                .resources[0]
                .allocatable,
            0
        );
    }
}
