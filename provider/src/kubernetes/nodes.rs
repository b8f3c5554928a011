//! One node's GPUs: which resources it advertises, what device each one is, how many physical GPUs
//! stand behind them, and whether the node can take new pods.
//!
//! Resources read: `nvidia.com/gpu` (whole GPUs, time-sliced or MPS replicas, vGPUs, or MIG slices
//! under the single strategy), `nvidia.com/gpu.shared` (replicas renamed by the device plugin),
//! `nvidia.com/mig-<profile>` and `nvidia.com/mig-<profile>.shared` (mixed strategy); `amd.com/gpu`,
//! Intel's `gpu.intel.com/i915` and `gpu.intel.com/xe`, and GPU resources accelfed does not know
//! (read in [`super::vendors`]).
//! Under sharing, physical GPUs = capacity / replicas; when that does not divide, GFD's `.count`
//! label is used, and without one the resource is skipped with a warning rather than published
//! with a guessed count.
//!
//! Each resource also says what one of its devices is of a physical GPU ([`Sharing`]): a MIG slice
//! its profile's compute slices over the parent's (the table in `accelfed_schemas::gpu`), a
//! time-slicing or MPS replica (`.sharing-strategy=mps`) one over the replicas. Meters count a
//! pod's devices times that share, so usage is in physical GPUs. Model names go through the model
//! catalogue (`GpuModel::canonical`); a name outside it is reported once.

use accelfed_schemas::gpu::vgpu::VgpuShare;
use accelfed_schemas::gpu::{
    GpuCount, GpuModel, GpuSpec, MigBasis, Sharing, Virtualization, mig_sharing,
};
use accelfed_schemas::names::Text;

use super::api::Node;
use super::api::is_gpu_resource;
use super::labels::{Labels, mig_profile, nvidia_model, vgpu_type};
use super::quantity::{millicores, whole};

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
    /// CPU pods may request (`status.allocatable.cpu`), in millicores; `None` when the node does
    /// not say or says something unreadable (reported).
    pub allocatable_millicores: Option<u64>,
    pub resources: Vec<NodeResource>,
    /// Physical GPUs installed, per canonical model. Under the mixed MIG strategy GFD's
    /// `nvidia.com/gpu.count` (the parent GPUs) when it is at least what the slices are worth (a
    /// GPU may be partitioned only in part); otherwise the sum of the resources' physical worth.
    pub installed: Vec<(GpuModel, GpuCount)>,
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
    /// Physical GPUs the resource's devices are worth: capacity x `gpu.sharing.physical_share()`
    /// (7 `1g.10gb` slices of an H100 are 1; 8 time-slicing replicas of one T4 are 1).
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
        if let Some((mut gpu, sharing, physical)) = kind.read(resource, capacity, &mut labels) {
            // What one device is of a physical GPU travels with the GPU's description, so the
            // published capacity carries physical counts beside the slots.
            gpu.sharing = sharing;
            resources.push(NodeResource {
                resource: resource.clone(),
                gpu,
                capacity,
                allocatable,
                physical,
            });
        }
    }
    for note in labels.names.drain(..) {
        // Once per name: a model outside the catalogue would be named by every node that has it.
        if !warnings.iter().any(|warning| warning.ends_with(&note)) {
            warnings.push(format!("node {name:?}: {note}"));
        }
    }
    warnings.append(&mut labels.warnings);
    if resources.is_empty() {
        return None;
    }
    let installed = installed(&resources, &mut labels);
    warnings.append(&mut labels.warnings);
    let info = node.status.node_info.as_ref();
    let unavailable = unavailable(node, tolerated);
    if let Some(why) = ready_problem(node) {
        warnings.push(format!(
            "node {name:?}: {why}; its GPUs are not published as free"
        ));
    }
    let allocatable_millicores = allocatable_cpu(node, warnings);
    Some(NodeGpus {
        name: name.to_owned(),
        unavailable,
        architecture: info.map(|i| i.architecture.clone()).unwrap_or_default(),
        os_image: info.map(|i| i.os_image.clone()).unwrap_or_default(),
        allocatable_millicores,
        resources,
        installed,
    })
}

/// The node's allocatable CPU in millicores; an unreadable quantity is reported and read as
/// unknown, so the share's slots are left out rather than undercounted.
fn allocatable_cpu(node: &Node, warnings: &mut Vec<String>) -> Option<u64> {
    let text = node.status.allocatable.get("cpu")?;
    millicores(text)
        .map_err(|err| {
            warnings.push(format!(
                "node {:?}: allocatable cpu: {err}; its CPUs are not counted in job slots",
                node.metadata.name
            ));
        })
        .ok()
}

/// Physical GPUs per model; see [`NodeGpus::installed`].
fn installed(resources: &[NodeResource], labels: &mut Labels<'_>) -> Vec<(GpuModel, GpuCount)> {
    let mut out: Vec<(GpuModel, f64)> = Vec::new();
    for resource in resources {
        match out
            .iter_mut()
            .find(|(model, _)| *model == resource.gpu.model)
        {
            Some((_, sum)) => *sum += resource.physical.get(),
            None => out.push((resource.gpu.model.clone(), resource.physical.get())),
        }
    }
    let mixed = resources
        .iter()
        .any(|r| r.resource.starts_with("nvidia.com/mig-"));
    if mixed && let Some(parents) = labels.number("nvidia.com/gpu.count") {
        for (model, sum) in &mut out {
            let is_mig = resources
                .iter()
                .any(|r| r.gpu.model == *model && matches!(r.gpu.sharing, Sharing::Mig { .. }));
            // A small tolerance: the slices' shares are sevenths, summed in floating point.
            if is_mig && parents as f64 + 1e-9 >= *sum {
                *sum = parents as f64;
            }
        }
    }
    out.into_iter()
        .map(|(model, sum)| (model, GpuCount::new(sum).unwrap_or(GpuCount::ZERO)))
        .collect()
}

/// What is wrong with a node's Ready condition, if anything: missing, `False` or `Unknown`.
fn ready_problem(node: &Node) -> Option<String> {
    let ready = node
        .status
        .conditions
        .iter()
        .find(|condition| condition.kind == "Ready");
    match ready.map(|condition| condition.status.as_str()) {
        None => Some("has no Ready condition".to_owned()),
        Some("True") => None,
        Some(status) => Some(format!("is not Ready (Ready={status})")),
    }
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
    /// `gpu.intel.com/i915` or `gpu.intel.com/xe`.
    Intel,
    /// Another resource [`is_gpu_resource`] takes for a GPU.
    Unknown,
}

impl<'r> ResourceKind<'r> {
    fn of(resource: &'r str) -> Option<Self> {
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
    fn read(
        &self,
        resource: &str,
        capacity: u64,
        labels: &mut Labels<'_>,
    ) -> Option<(GpuSpec, Sharing, GpuCount)> {
        match self {
            Self::Amd => Some(super::vendors::amd(capacity, labels)),
            Self::Intel => Some(super::vendors::intel(capacity, labels)),
            Self::Unknown => Some(super::vendors::unknown(resource, capacity, labels)),
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

pub(super) fn nvidia_spec(prefix: &str, labels: &mut Labels<'_>) -> GpuSpec {
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

/// A spec of the canonical model (see `GpuModel::canonical`); a name outside the catalogue is kept
/// and reported (not the placeholder used when a node has no product label).
pub(super) fn spec(vendor: &'static str, model: &str, labels: &mut Labels<'_>) -> GpuSpec {
    let model = match GpuModel::canonical_with_note(model) {
        Ok((canonical, recognised)) => {
            if !model.ends_with(" GPU")
                && let Some(warning) = recognised.warning(model)
            {
                labels.note_name(warning);
            }
            canonical
        }
        Err(_) => GpuModel::literal("GPU"),
    };
    GpuSpec::new(Text::literal(vendor), model)
}

pub(super) fn text(value: &str) -> Option<Text> {
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
        // GFD's dashes become the catalogue's canonical name.
        assert_eq!(
            read.resources[0].gpu.model.as_str(),
            "NVIDIA H100 80GB HBM3"
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
        // 14 slices of 1/7: two physical GPUs.
        assert_eq!(
            resource.gpu.sharing,
            Sharing::Mig {
                profile: Text::new("1g.5gb").unwrap(),
                slices: 1,
                of: 7
            }
        );
        assert_eq!(resource.physical, GpuCount::whole(2));
        assert_eq!(read.installed[0].1, GpuCount::whole(2));
    }

    #[test]
    fn a_vgpu_guest_publishes_its_board_gpu_and_counts_each_vgpu_as_its_share() {
        // What GFD labels in a VM with two A10-12Q vGPUs (the guest driver's product name, dashed).
        let mut warnings = Vec::new();
        let read = read_node(
            &ready(
                r#"{"nvidia.com/gpu":"2"}"#,
                r#"{"nvidia.com/gpu.product":"NVIDIA-A10-12Q","nvidia.com/vgpu.present":"true","nvidia.com/gpu.memory":"12288","nvidia.com/gpu.count":"2"}"#,
            ),
            &[],
            &mut warnings,
        )
        .unwrap();
        let resource = &read.resources[0];
        assert_eq!(resource.gpu.model.as_str(), "NVIDIA A10");
        assert_eq!(resource.gpu.virtualization, Virtualization::Vgpu);
        assert_eq!(
            resource.gpu.sharing,
            Sharing::Vgpu {
                vgpu_type: Text::new("A10-12Q").unwrap(),
                per_gpu: 2
            }
        );
        // Two halves of an A10: one physical GPU.
        assert_eq!(resource.physical, GpuCount::whole(1));
        assert_eq!(
            read.installed,
            [(resource.gpu.model.clone(), GpuCount::whole(1))]
        );
        assert!(warnings.is_empty(), "{warnings:?}");

        // A MIG-backed type is its slice; a board nobody knows counts whole, reported once.
        let read = read_node(
            &ready(
                r#"{"nvidia.com/gpu":"7"}"#,
                r#"{"nvidia.com/gpu.product":"NVIDIA-A100-1-5C"}"#,
            ),
            &[],
            &mut warnings,
        )
        .unwrap();
        assert_eq!(
            read.resources[0].gpu.model.as_str(),
            "NVIDIA A100-PCIE-40GB"
        );
        assert_eq!(read.resources[0].physical, GpuCount::whole(1));
        let read = read_node(
            &ready(
                r#"{"nvidia.com/gpu":"2"}"#,
                r#"{"nvidia.com/gpu.product":"NVIDIA-Z9-8Q"}"#,
            ),
            &[],
            &mut warnings,
        )
        .unwrap();
        assert_eq!(read.resources[0].physical, GpuCount::whole(2));
        assert!(
            warnings
                .iter()
                .any(|w| w.contains("vGPU type Z9-8Q is not of a GPU accelfed knows")),
            "{warnings:?}"
        );
    }

    #[test]
    fn mig_mixed_slices_are_shares_of_their_parent_and_the_node_has_its_parents() {
        let mut warnings = Vec::new();
        let read = read_node(
            &ready(
                r#"{"nvidia.com/gpu":"0","nvidia.com/mig-1g.10gb":"7","nvidia.com/mig-3g.40gb":"2","nvidia.com/mig-2g.12gb":"1"}"#,
                r#"{"nvidia.com/mig.strategy":"mixed","nvidia.com/gpu.product":"NVIDIA-H100-80GB-HBM3","nvidia.com/gpu.count":"3",
                    "nvidia.com/mig-1g.10gb.product":"NVIDIA-H100-80GB-HBM3-MIG-1g.10gb"}"#,
            ),
            &[],
            &mut warnings,
        )
        .unwrap();
        let share = |resource: &str| {
            let r = read
                .resources
                .iter()
                .find(|r| r.resource == resource)
                .unwrap();
            (
                r.gpu.model.as_str().to_owned(),
                r.gpu.sharing.physical_share(),
                r.physical.get(),
            )
        };
        let h100 = "NVIDIA H100 80GB HBM3".to_owned();
        assert_eq!(
            share("nvidia.com/mig-1g.10gb"),
            (h100.clone(), 1.0 / 7.0, 1.0)
        );
        assert_eq!(share("nvidia.com/mig-3g.40gb").1, 3.0 / 7.0);
        // Not a profile of an H100 80GB: 12 of its 80 GB.
        assert_eq!(share("nvidia.com/mig-2g.12gb").1, 0.15);
        assert_eq!(
            warnings,
            [
                "node \"n1\": MIG profile 2g.12gb of NVIDIA H100 80GB HBM3 is not in the profile table; counted by its memory as 3/20 of the GPU"
            ]
        );
        // The slices are worth 1 + 6/7 + 0.15 GPUs; GFD says 3 parents are installed.
        assert_eq!(
            read.installed,
            vec![(GpuModel::new(&h100).unwrap(), GpuCount::whole(3))]
        );
    }

    #[test]
    fn mps_and_time_slicing_replicas_are_one_over_the_replicas() {
        let read = read_node(
            &ready(
                r#"{"nvidia.com/gpu":"4"}"#,
                r#"{"nvidia.com/gpu.product":"NVIDIA-L4-SHARED","nvidia.com/gpu.replicas":"4","nvidia.com/gpu.sharing-strategy":"mps"}"#,
            ),
            &[],
            &mut Vec::new(),
        )
        .unwrap();
        let resource = &read.resources[0];
        assert_eq!(resource.gpu.model.as_str(), "NVIDIA L4");
        assert_eq!(resource.gpu.virtualization, Virtualization::Mps);
        assert_eq!(resource.gpu.sharing, Sharing::Mps { replicas: 4 });
        assert_eq!(resource.physical, GpuCount::whole(1));
    }

    #[test]
    fn a_node_without_a_ready_condition_is_reported_and_unknown_models_once() {
        let mut warnings = Vec::new();
        let node = |name: &str, conditions: &str| {
            self::node(&format!(
                r#"{{"metadata":{{"name":"{name}","labels":{{"nvidia.com/gpu.product":"NVIDIA-X9"}}}},
                    "status":{{"capacity":{{"nvidia.com/gpu":"2"}},"allocatable":{{"nvidia.com/gpu":"2"}},"conditions":{conditions}}}}}"#
            ))
        };
        let none = read_node(&node("n1", "[]"), &[], &mut warnings).unwrap();
        assert_eq!(none.unavailable.as_deref(), Some("NotReady"));
        let unknown = read_node(
            &node("n2", r#"[{"type":"Ready","status":"Unknown"}]"#),
            &[],
            &mut warnings,
        )
        .unwrap();
        assert_eq!(unknown.unavailable.as_deref(), Some("NotReady"));
        // The unknown model is named once, on the first node that has it.
        assert_eq!(
            warnings,
            [
                "node \"n1\": GPU model \"NVIDIA X9\" is not in the model catalogue; kept as given",
                "node \"n1\": has no Ready condition; its GPUs are not published as free",
                "node \"n2\": is not Ready (Ready=Unknown); its GPUs are not published as free",
            ]
        );
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
