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

use accelfed_schemas::gpu::{GpuCount, GpuModel, GpuSpec, Sharing};
use accelfed_schemas::names::Text;

use super::api::Node;
use super::labels::Labels;
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

mod resources;
#[cfg(test)]
mod tests;

use resources::ResourceKind;
pub(super) use resources::nvidia_spec;
