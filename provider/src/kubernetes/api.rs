//! The parts of Kubernetes API objects accelfed reads, as the API returns them (`v1` NodeList,
//! PodList, NamespaceList, ResourceQuotaList).
//!
//! Lean types rather than `k8s_openapi`'s full ones: a large cluster lists 150,000 pods of about
//! 4 KB each, and building every field of every pod would cost several times the parse itself.
//! Fields not named here are skipped by serde without allocation. Everything the API may leave out
//! is optional or defaulted, so a missing status field never fails a whole page; times and
//! quantities stay text and are checked where they are used, so one bad value names its object
//! instead of failing the listing.

use std::collections::BTreeMap;

use serde::Deserialize;

pub use crate::json::Str;

/// A list page's `metadata`: where the next page starts. ([`super::page`] reads the page's
/// `items` one by one.)
#[derive(Debug, Clone, Default, Deserialize)]
pub struct ListMeta {
    /// The token for the next page; absent or empty on the last one.
    #[serde(default, rename = "continue")]
    pub continue_token: Option<String>,
}

/// Object metadata.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ObjectMeta {
    #[serde(default)]
    pub name: String,
    #[serde(default)]
    pub namespace: String,
    #[serde(default)]
    pub uid: String,
    #[serde(default)]
    pub labels: BTreeMap<String, String>,
    #[serde(default)]
    pub annotations: BTreeMap<String, String>,
    pub deletion_timestamp: Option<String>,
}

/// Pod metadata: the hot path of a large listing keeps no labels or annotations, and borrows its
/// text from the page.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PodMeta<'a> {
    #[serde(default, borrow)]
    pub name: Str<'a>,
    #[serde(default, borrow)]
    pub namespace: Str<'a>,
    #[serde(default, borrow)]
    pub uid: Str<'a>,
    #[serde(borrow)]
    pub deletion_timestamp: Option<Str<'a>>,
}

/// Node metadata: the name and the GPU labels only (GPU Feature Discovery's `nvidia.com/*`, AMD's
/// `amd.com/*` and `beta.amd.com/*`, Intel's `gpu.intel.com/*`). A node carries dozens of other labels (NFD's CPU features,
/// topology, instance type) and annotations; they are skipped unread instead of copied.
#[derive(Debug, Clone, Default, Deserialize)]
pub struct NodeMeta {
    #[serde(default)]
    pub name: String,
    #[serde(default, deserialize_with = "gpu_labels")]
    pub labels: BTreeMap<String, String>,
}

/// A node.
#[derive(Debug, Clone, Default, Deserialize)]
pub struct Node {
    #[serde(default)]
    pub metadata: NodeMeta,
    #[serde(default)]
    pub spec: NodeSpec,
    #[serde(default)]
    pub status: NodeStatus,
}

#[derive(Debug, Clone, Default, Deserialize)]
pub struct NodeSpec {
    #[serde(default)]
    pub unschedulable: bool,
    #[serde(default)]
    pub taints: Vec<Taint>,
}

#[derive(Debug, Clone, Default, Deserialize)]
pub struct Taint {
    #[serde(default)]
    pub key: String,
    /// `NoSchedule`, `PreferNoSchedule`, `NoExecute`.
    #[serde(default)]
    pub effect: String,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct NodeStatus {
    /// GPU resource name -> quantity (text, e.g. `"8"`); `cpu`, `memory` and the like are
    /// skipped unread.
    #[serde(default, deserialize_with = "gpu_resource_map")]
    pub capacity: BTreeMap<String, String>,
    /// The GPU resources as in `capacity`, and `cpu` (what pods may request: a share's job
    /// slots); `memory` and the like are skipped unread.
    #[serde(default, deserialize_with = "gpu_and_cpu_resource_map")]
    pub allocatable: BTreeMap<String, String>,
    #[serde(default)]
    pub conditions: Vec<Condition>,
    pub node_info: Option<NodeInfo>,
}

#[derive(Debug, Clone, Default, Deserialize)]
pub struct Condition {
    #[serde(default, rename = "type")]
    pub kind: String,
    /// `True`, `False`, `Unknown`.
    #[serde(default)]
    pub status: String,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct NodeInfo {
    #[serde(default)]
    pub architecture: String,
    #[serde(default)]
    pub operating_system: String,
    #[serde(default)]
    pub os_image: String,
}

/// A pod. Pods are most of a large cluster's text (150,000 of about 4 KB each), so their fields
/// borrow from the page's text (`Cow`: borrowed unless the JSON string has escapes) instead of
/// allocating; only what [`super::pods::read_pod`] keeps is copied.
#[derive(Debug, Clone, Default, Deserialize)]
pub struct Pod<'a> {
    #[serde(default, borrow)]
    pub metadata: PodMeta<'a>,
    #[serde(default, borrow)]
    pub spec: PodSpec<'a>,
    #[serde(default, borrow)]
    pub status: PodStatus<'a>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PodSpec<'a> {
    #[serde(borrow)]
    pub node_name: Option<Str<'a>>,
    #[serde(default, borrow)]
    pub containers: Vec<Container<'a>>,
    #[serde(default, borrow)]
    pub init_containers: Vec<Container<'a>>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Container<'a> {
    #[serde(default, borrow)]
    pub resources: Resources<'a>,
    /// `Always` on an init container makes it a sidecar that runs beside the main containers.
    #[serde(borrow)]
    pub restart_policy: Option<Str<'a>>,
}

/// A container's requests and limits, GPU resources and CPU only.
#[derive(Debug, Clone, Default, Deserialize)]
pub struct Resources<'a> {
    #[serde(default, borrow)]
    pub requests: GpuQuantities<'a>,
    #[serde(default, borrow)]
    pub limits: GpuQuantities<'a>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PodStatus<'a> {
    /// `Pending`, `Running`, `Succeeded`, `Failed`, `Unknown`.
    #[serde(borrow)]
    pub phase: Option<Str<'a>>,
    #[serde(borrow)]
    pub start_time: Option<Str<'a>>,
    #[serde(default, borrow)]
    pub container_statuses: Vec<ContainerStatus<'a>>,
    #[serde(default, borrow)]
    pub init_container_statuses: Vec<ContainerStatus<'a>>,
}

#[derive(Debug, Clone, Default, Deserialize)]
pub struct ContainerStatus<'a> {
    #[serde(default, borrow)]
    pub state: ContainerState<'a>,
}

#[derive(Debug, Clone, Default, Deserialize)]
pub struct ContainerState<'a> {
    #[serde(borrow)]
    pub running: Option<Running<'a>>,
    #[serde(borrow)]
    pub terminated: Option<Terminated<'a>>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Running<'a> {
    #[serde(borrow)]
    pub started_at: Option<Str<'a>>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Terminated<'a> {
    #[serde(borrow)]
    pub finished_at: Option<Str<'a>>,
}

/// A namespace.
#[derive(Debug, Clone, Default, Deserialize)]
pub struct Namespace {
    #[serde(default)]
    pub metadata: ObjectMeta,
}

/// A namespace's resource quota.
#[derive(Debug, Clone, Default, Deserialize)]
pub struct ResourceQuota {
    #[serde(default)]
    pub metadata: ObjectMeta,
    #[serde(default)]
    pub spec: QuotaSpec,
}

#[derive(Debug, Clone, Default, Deserialize)]
pub struct QuotaSpec {
    /// `requests.nvidia.com/gpu` -> `"8"`.
    #[serde(default)]
    pub hard: BTreeMap<String, String>,
}

mod filter;

pub use filter::{GpuQuantities, is_gpu_label, is_gpu_resource};
use filter::{gpu_and_cpu_resource_map, gpu_labels, gpu_resource_map};

#[cfg(test)]
mod tests {
    use std::borrow::Cow;

    use super::*;

    #[test]
    fn resources_keep_only_gpu_entries() {
        let resources: Resources = serde_json::from_str(
            r#"{"requests":{"cpu":"2","memory":"8Gi","nvidia.com/gpu":"1"},
                "limits":{"nvidia.com/mig-1g.10gb":"2"}}"#,
        )
        .unwrap();
        let requests: Vec<(&str, &str)> = resources
            .requests
            .iter()
            .map(|(name, value)| (&**name, &**value))
            .collect();
        assert_eq!(requests, [("nvidia.com/gpu", "1")]);
        assert_eq!(resources.requests.cpu(), Some("2"));
        assert_eq!(resources.limits.cpu(), None);
        let (name, value) = resources.limits.iter().next().unwrap();
        assert_eq!(*name, "nvidia.com/mig-1g.10gb");
        // Borrowed from the text, not copied.
        assert!(matches!(value.0, Cow::Borrowed("2")));
    }

    #[test]
    fn nodes_keep_gpu_labels_and_resources_only() {
        let node: Node = serde_json::from_str(
            r#"{"metadata":{"name":"n","labels":{"kubernetes.io/os":"linux",
                  "nvidia.com/gpu.product":"A100","beta.amd.com/gpu.family":"AI"},
                  "annotations":{"a":"b"}},
                "status":{"capacity":{"cpu":"8","nvidia.com/gpu":"4"},"allocatable":null}}"#,
        )
        .unwrap();
        let labels: Vec<&str> = node.metadata.labels.keys().map(String::as_str).collect();
        assert_eq!(
            labels,
            ["beta.amd.com/gpu.family", "nvidia.com/gpu.product"]
        );
        let capacity: Vec<&str> = node.status.capacity.keys().map(String::as_str).collect();
        assert_eq!(capacity, ["nvidia.com/gpu"]);
        assert!(node.status.allocatable.is_empty());
    }

    #[test]
    fn a_pod_without_status_or_spec_still_reads() {
        let pod: Pod = serde_json::from_str(r#"{"metadata":{"name":"p","uid":"a\"b"}}"#).unwrap();
        assert_eq!(pod.metadata.uid, "a\"b");
        assert_eq!(pod.metadata.name, "p");
        assert!(pod.status.phase.is_none());
    }
}
