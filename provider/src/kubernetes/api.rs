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
use serde::de::{Deserializer, IgnoredAny, MapAccess, Visitor};

/// One page of a list (`kind: NodeList` and so on).
#[derive(Debug, Deserialize)]
pub struct List<T> {
    #[serde(default)]
    pub metadata: ListMeta,
    #[serde(default = "Vec::new")]
    pub items: Vec<T>,
}

/// Where the next page starts.
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

/// Pod metadata: the hot path of a large listing keeps no labels or annotations.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PodMeta {
    #[serde(default)]
    pub name: String,
    #[serde(default)]
    pub namespace: String,
    #[serde(default)]
    pub uid: String,
    pub deletion_timestamp: Option<String>,
}

/// A node.
#[derive(Debug, Clone, Default, Deserialize)]
pub struct Node {
    #[serde(default)]
    pub metadata: ObjectMeta,
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
    /// Resource name -> quantity (text, e.g. `"8"`).
    #[serde(default)]
    pub capacity: BTreeMap<String, String>,
    #[serde(default)]
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

/// A pod.
#[derive(Debug, Clone, Default, Deserialize)]
pub struct Pod {
    #[serde(default)]
    pub metadata: PodMeta,
    #[serde(default)]
    pub spec: PodSpec,
    #[serde(default)]
    pub status: PodStatus,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PodSpec {
    pub node_name: Option<String>,
    #[serde(default)]
    pub containers: Vec<Container>,
    #[serde(default)]
    pub init_containers: Vec<Container>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Container {
    #[serde(default)]
    pub resources: Resources,
    /// `Always` on an init container makes it a sidecar that runs beside the main containers.
    pub restart_policy: Option<String>,
}

/// A container's requests and limits, GPU resources only.
#[derive(Debug, Clone, Default, Deserialize)]
pub struct Resources {
    #[serde(default, deserialize_with = "gpu_resources")]
    pub requests: Vec<(String, String)>,
    #[serde(default, deserialize_with = "gpu_resources")]
    pub limits: Vec<(String, String)>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PodStatus {
    /// `Pending`, `Running`, `Succeeded`, `Failed`, `Unknown`.
    pub phase: Option<String>,
    pub start_time: Option<String>,
    #[serde(default)]
    pub container_statuses: Vec<ContainerStatus>,
    #[serde(default)]
    pub init_container_statuses: Vec<ContainerStatus>,
}

#[derive(Debug, Clone, Default, Deserialize)]
pub struct ContainerStatus {
    #[serde(default)]
    pub state: ContainerState,
}

#[derive(Debug, Clone, Default, Deserialize)]
pub struct ContainerState {
    pub running: Option<Running>,
    pub terminated: Option<Terminated>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Running {
    pub started_at: Option<String>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Terminated {
    pub finished_at: Option<String>,
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

/// Whether a resource name is one the GPU accounting reads (`nvidia.com/gpu`,
/// `nvidia.com/mig-1g.10gb`, `nvidia.com/gpu.shared`, `amd.com/gpu`).
pub fn is_gpu_resource(name: &str) -> bool {
    name.starts_with("nvidia.com/") || name.starts_with("amd.com/gpu")
}

/// Reads a resource map keeping only GPU entries, so `cpu` and `memory` cost no allocation.
fn gpu_resources<'de, D: Deserializer<'de>>(
    deserializer: D,
) -> Result<Vec<(String, String)>, D::Error> {
    struct GpuOnly;
    impl<'de> Visitor<'de> for GpuOnly {
        type Value = Vec<(String, String)>;
        fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.write_str("a map of resource names to quantities")
        }
        fn visit_unit<E: serde::de::Error>(self) -> Result<Self::Value, E> {
            Ok(Vec::new())
        }
        fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
            let mut kept = Vec::new();
            while let Some(key) = map.next_key::<std::borrow::Cow<'de, str>>()? {
                if is_gpu_resource(&key) {
                    let value: String = map.next_value()?;
                    kept.push((key.into_owned(), value));
                } else {
                    map.next_value::<IgnoredAny>()?;
                }
            }
            Ok(kept)
        }
    }
    deserializer.deserialize_any(GpuOnly)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn resources_keep_only_gpu_entries() {
        let resources: Resources = serde_json::from_str(
            r#"{"requests":{"cpu":"2","memory":"8Gi","nvidia.com/gpu":"1"},
                "limits":{"nvidia.com/mig-1g.10gb":"2"}}"#,
        )
        .unwrap();
        assert_eq!(
            resources.requests,
            vec![("nvidia.com/gpu".to_owned(), "1".to_owned())]
        );
        assert_eq!(resources.limits[0].0, "nvidia.com/mig-1g.10gb");
    }

    #[test]
    fn a_pod_without_status_or_spec_still_reads() {
        let pod: Pod = serde_json::from_str(r#"{"metadata":{"name":"p"}}"#).unwrap();
        assert_eq!(pod.metadata.name, "p");
        assert!(pod.status.phase.is_none());
    }
}
