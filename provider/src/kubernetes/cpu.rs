//! CPU requested on each node, per namespace: what a share's job slots are counted from.
//!
//! GLUE2 counts a share's slots in CPU cores, as the Slurm backend does; on Kubernetes the cores a
//! pod holds are its effective CPU request (the scheduler's rule of [`super::pods`], a request
//! defaulting to the limit), whether or not it holds GPUs: a pod without GPUs on a GPU node takes
//! CPUs a GPU pod then cannot have. So every pod of the listing is read here, while only GPU pods
//! are kept whole. Finished pods (`Succeeded`, `Failed`) and unbound ones hold nothing.

use std::collections::BTreeMap;

use super::api::{Container, Pod};
use super::page::read_page;
use super::pods::{Phase, PodGpus, effective, read_pod};
use super::quantity::millicores;

/// Node -> namespace -> millicores requested by the pods bound there and not finished.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CpuRequests(BTreeMap<String, BTreeMap<String, u64>>);

impl CpuRequests {
    /// Adds one pod's request; an unreadable CPU quantity is reported with the pod's name and
    /// the pod counted as requesting none.
    pub fn add(&mut self, pod: &Pod<'_>, warnings: &mut Vec<String>) {
        let Some(node) = pod.spec.node_name.as_deref().filter(|n| !n.is_empty()) else {
            return;
        };
        if Phase::of(pod.status.phase.as_deref()).is_terminal() {
            return;
        }
        let spec = &pod.spec;
        let millis = match effective(&spec.containers, &spec.init_containers, cpu_request) {
            Ok(millis) => millis,
            Err(message) => {
                warnings.push(format!(
                    "pod {}/{}: cpu: {message}; its CPUs are not counted in job slots",
                    pod.metadata.namespace, pod.metadata.name
                ));
                return;
            }
        };
        if millis == 0 {
            return;
        }
        // Looked up by `&str` first: most pods land on a node and namespace already seen.
        let namespaces = match self.0.get_mut(node) {
            Some(namespaces) => namespaces,
            None => self.0.entry(node.to_owned()).or_default(),
        };
        match namespaces.get_mut(&*pod.metadata.namespace) {
            Some(sum) => *sum = sum.saturating_add(millis),
            None => {
                namespaces.insert(pod.metadata.namespace.to_string(), millis);
            }
        }
    }

    /// Millicores requested on `node`, per namespace.
    pub fn by_namespace_on(&self, node: &str) -> Option<&BTreeMap<String, u64>> {
        self.0.get(node)
    }
}

/// What the pod listing keeps: the GPU pods whole, and every pod's CPU request. One value per
/// listing, so a listing read over again (its continue token expired) starts from nothing.
#[derive(Debug, Clone, Default)]
pub struct PodsRead {
    pub gpu_pods: Vec<PodGpus>,
    pub cpu: CpuRequests,
}

impl PodsRead {
    /// Reads one page of the pod list into what it keeps ([`super::read_page`] with
    /// [`super::read_pod`], each pod's CPU request added on the way); returns the continue token.
    /// The client's listing runs exactly this, and so does the benchmark.
    pub fn read_page(
        &mut self,
        text: &str,
        warnings: &mut Vec<String>,
    ) -> Result<Option<String>, serde_json::Error> {
        let Self { gpu_pods, cpu } = self;
        read_page(
            text,
            &mut |pod: Pod<'_>, warnings| {
                cpu.add(&pod, warnings);
                read_pod(&pod, warnings)
            },
            gpu_pods,
            warnings,
        )
    }
}

/// One container's CPU request in millicores, defaulting to its limit as Kubernetes does.
fn cpu_request(container: &Container<'_>) -> Result<u64, String> {
    let resources = &container.resources;
    match resources.requests.cpu().or_else(|| resources.limits.cpu()) {
        Some(text) => millicores(text).map_err(|err| err.to_string()),
        None => Ok(0),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pod(json: &str) -> Pod<'_> {
        serde_json::from_str(json).unwrap()
    }

    #[test]
    fn bound_unfinished_pods_add_their_effective_request() {
        let mut cpu = CpuRequests::default();
        let mut warnings = Vec::new();
        // Main 1.5 cores + a 250m sidecar is 1.75; an ordinary init container of 2 beside the
        // sidecar peaks at 2.25, the larger.
        cpu.add(
            &pod(r#"{"metadata":{"name":"a","namespace":"ns1"},
                "spec":{"nodeName":"n1","containers":[{"resources":{"requests":{"cpu":"1.5"}}}],
                  "initContainers":[{"restartPolicy":"Always","resources":{"limits":{"cpu":"250m"}}},
                                    {"resources":{"requests":{"cpu":"2"}}}]},
                "status":{"phase":"Running"}}"#),
            &mut warnings,
        );
        // A pod without GPUs counts too; finished and unbound ones do not.
        cpu.add(
            &pod(r#"{"metadata":{"name":"b","namespace":"ns2"},
                "spec":{"nodeName":"n1","containers":[{"resources":{"requests":{"cpu":"1"}}}]}}"#),
            &mut warnings,
        );
        cpu.add(
            &pod(r#"{"metadata":{"name":"c","namespace":"ns1"},
                "spec":{"nodeName":"n1","containers":[{"resources":{"requests":{"cpu":"8"}}}]},
                "status":{"phase":"Succeeded"}}"#),
            &mut warnings,
        );
        cpu.add(
            &pod(r#"{"metadata":{"name":"d","namespace":"ns1"},
                "spec":{"containers":[{"resources":{"requests":{"cpu":"8"}}}]}}"#),
            &mut warnings,
        );
        assert!(warnings.is_empty(), "{warnings:?}");
        let on_n1 = cpu.by_namespace_on("n1").unwrap();
        assert_eq!(on_n1.values().sum::<u64>(), 2250 + 1000);
        assert_eq!(on_n1["ns1"], 2250);
        assert_eq!(cpu.by_namespace_on("n2"), None);
    }

    #[test]
    fn an_unreadable_cpu_request_is_reported_by_pod() {
        let mut cpu = CpuRequests::default();
        let mut warnings = Vec::new();
        cpu.add(
            &pod(r#"{"metadata":{"name":"odd","namespace":"ns"},
                "spec":{"nodeName":"n1","containers":[{"resources":{"requests":{"cpu":"lots"}}}]}}"#),
            &mut warnings,
        );
        assert_eq!(cpu.by_namespace_on("n1"), None);
        assert_eq!(warnings.len(), 1);
        assert!(
            warnings[0].starts_with("pod ns/odd: cpu: quantity \"lots\""),
            "{warnings:?}"
        );
    }
}
