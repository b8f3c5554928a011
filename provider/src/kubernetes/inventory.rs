//! What one run reads from a cluster: its GPU nodes, the pods that request GPUs, namespaces and
//! quotas. `client/` fills it page by page; `map.rs` (capacity) and `usage.rs` (the meter) read
//! it; a file of its own because both sides, and the fixture tests, use it.

use super::api::{Namespace, ResourceQuota};
use super::cpu::CpuRequests;
use super::nodes::NodeGpus;
use super::pods::PodGpus;

/// What one run reads from the cluster.
#[derive(Debug, Clone, Default)]
pub struct Inventory {
    /// Nodes that advertise GPUs.
    pub nodes: Vec<NodeGpus>,
    /// Pods that request GPUs, in every phase.
    pub pods: Vec<PodGpus>,
    /// CPU requested per node and namespace by every bound, unfinished pod (GPUs or not).
    pub cpu: CpuRequests,
    pub namespaces: Vec<Namespace>,
    pub quotas: Vec<ResourceQuota>,
    /// Objects skipped or defaulted while reading, each naming the object.
    pub warnings: Vec<String>,
}
