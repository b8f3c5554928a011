//! A batch share's job slots, in CPU cores over the GPU nodes (the rule in [`super::map`]'s
//! documentation): what is free and the largest node are the cluster's, the same for every VO, and
//! what is used is the sum of the VO's namespaces; all read from the nodes once per run, not once
//! per VO (a cluster of 5,000 nodes and 40 VOs made the per-VO walk 8x the GLUE2 mapping).

use std::collections::HashMap;

use accelfed_schemas::glue::ShareSlots;

use super::cpu::CpuRequests;
use super::nodes::NodeGpus;

/// The GPU nodes' slot figures; `None` when a GPU node does not say its allocatable CPU, which
/// leaves every share's slots out.
#[derive(Debug, Clone)]
pub struct ClusterSlots<'a>(Option<Known<'a>>);

#[derive(Debug, Clone)]
struct Known<'a> {
    /// Whole cores not requested on the nodes that take new pods.
    free: u64,
    /// The largest such node's cores: one pod runs on one node.
    largest: u64,
    /// Millicores each namespace's pods request on the GPU nodes.
    used_millis: HashMap<&'a str, u64>,
}

impl<'a> ClusterSlots<'a> {
    pub fn of(nodes: &[NodeGpus], cpu: &'a CpuRequests) -> Self {
        let mut known = Known {
            free: 0,
            largest: 0,
            used_millis: HashMap::new(),
        };
        for node in nodes {
            let Some(allocatable) = node.allocatable_millicores else {
                return Self(None);
            };
            let requested = cpu.by_namespace_on(&node.name);
            for (namespace, millis) in requested.into_iter().flatten() {
                *known.used_millis.entry(namespace.as_str()).or_default() += millis;
            }
            if node.unavailable.is_none() {
                let on_node: u64 = requested.map_or(0, |by| by.values().sum());
                known.free += allocatable.saturating_sub(on_node) / 1000;
                known.largest = known.largest.max(allocatable / 1000);
            }
        }
        Self(Some(known))
    }

    /// The share of the VO whose pods run in `namespaces`.
    pub fn share(&self, namespaces: &[&str]) -> ShareSlots {
        let Some(known) = &self.0 else {
            return ShareSlots::default();
        };
        let used_millis: u64 = namespaces
            .iter()
            .filter_map(|namespace| known.used_millis.get(namespace))
            .sum();
        ShareSlots::known(known.free, used_millis.div_ceil(1000), known.largest)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn node(name: &str, millicores: Option<u64>, unavailable: bool) -> NodeGpus {
        NodeGpus {
            name: name.to_owned(),
            unavailable: unavailable.then(|| "cordoned".to_owned()),
            architecture: String::new(),
            os_image: String::new(),
            allocatable_millicores: millicores,
            resources: Vec::new(),
            installed: Vec::new(),
        }
    }

    fn pod_on(cpu: &mut CpuRequests, node: &str, namespace: &str, request: &str) {
        let json = format!(
            r#"{{"metadata":{{"name":"p","namespace":"{namespace}"}},
                "spec":{{"nodeName":"{node}","containers":[{{"resources":{{"requests":{{"cpu":"{request}"}}}}}}]}}}}"#
        );
        cpu.add(&serde_json::from_str(&json).unwrap(), &mut Vec::new());
    }

    #[test]
    fn slots_are_whole_cores_over_the_gpu_nodes() {
        let mut cpu = CpuRequests::default();
        pod_on(&mut cpu, "a", "vo-ns", "1500m");
        pod_on(&mut cpu, "a", "other", "2");
        pod_on(&mut cpu, "b", "vo-ns", "0.25");
        let nodes = [
            node("a", Some(16_000), false),
            node("b", Some(32_500), true),
            node("c", Some(8_000), false),
        ];
        // Free: a 16 - 3.5 = 12.5 -> 12, c 8; b is cordoned. Used: 1.5 + 0.25 -> 2 (rounded up).
        // Per job: the largest available node, a (b's 32 cores take no new pods).
        assert_eq!(
            ClusterSlots::of(&nodes, &cpu).share(&["vo-ns"]),
            ShareSlots::known(20, 2, 16)
        );
    }

    #[test]
    fn a_node_without_cpus_leaves_the_slots_out() {
        let nodes = [node("a", Some(16_000), false), node("b", None, false)];
        assert_eq!(
            ClusterSlots::of(&nodes, &CpuRequests::default()).share(&["vo-ns"]),
            ShareSlots::default()
        );
    }
}
