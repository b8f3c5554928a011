//! Pods -> usage observations for the GPU-hours meter. Pure.
//!
//! One observation per pod and GPU resource: `AssociatedRecordType = job`, `AssociatedRecord =
//! <cluster>/<namespace>/<pod uid>`, the model (the physical GPU's canonical name) from the labels
//! of the node the pod ran on, the VO of its namespace. The count is in physical GPUs: devices held
//! x the resource's `Sharing::physical_share` (3 `1g.10gb` slices of an A100 are 3/7 of a GPU, 1 of
//! 8 time-slicing replicas is 1/8), and the observation keeps the sharing. A pod that never started (pending) has no usage. A running pod is open (`end =
//! None`, metered up to now); a finished pod ends at its last container's finish, or its deletion.
//! A finished pod with neither time is left out here: its records stay as the last run that saw it
//! running metered them (see [`super::meter`]).

use foldhash::HashMap;
use std::collections::BTreeMap;

use accelfed_schemas::glue::VoAccess;
use accelfed_schemas::gpu::{AcceleratorType, GpuCount, GpuModel, Sharing};
use accelfed_schemas::names::{LocalId, SiteName};
use accelfed_schemas::usage::{Observation, RecordType, Source};

use super::dcgm::DcgmReadings;
use super::inventory::Inventory;
use super::nodes::count;
use super::pods::Phase;

/// The observations of every GPU pod that started, with a warning per pod left out.
pub fn observations(
    site: &SiteName,
    cluster: &str,
    inventory: &Inventory,
    vos: &BTreeMap<String, VoAccess>,
    dcgm: Option<&DcgmReadings>,
    warnings: &mut Vec<String>,
) -> Vec<Observation> {
    // Hashed: looked up once per pod, and a cluster has thousands of nodes and hundreds of
    // namespaces. FNV rather than the default SipHash: the keys are the cluster's own names, not
    // attacker-chosen, and hashing was a tenth of this function's time.
    let models: HashMap<(&str, &str), (&GpuModel, &Sharing)> = inventory
        .nodes
        .iter()
        .flat_map(|node| {
            node.resources.iter().map(move |r| {
                (
                    (node.name.as_str(), r.resource.as_str()),
                    (&r.gpu.model, &r.gpu.sharing),
                )
            })
        })
        .collect();
    let vos: HashMap<&str, &VoAccess> = vos
        .iter()
        .map(|(namespace, access)| (namespace.as_str(), access))
        .collect();
    let mut out = Vec::with_capacity(inventory.pods.len());
    for pod in &inventory.pods {
        let who = Who(&pod.namespace, &pod.name);
        let Some(start) = pod.start else {
            if pod.phase != Phase::Pending {
                warnings.push(format!("{who}: no start time; not metered"));
            }
            continue;
        };
        if pod.phase.is_terminal() && pod.end.is_none() {
            warnings.push(format!(
                "{who}: finished without a finish or deletion time; closed at its last sighting"
            ));
            continue;
        }
        if pod.uid.trim().is_empty() || pod.namespace.trim().is_empty() {
            warnings.push(format!(
                "{who}: no metadata.uid or namespace, so no stable record name; not metered"
            ));
            continue;
        }
        let mut name =
            String::with_capacity(cluster.len() + pod.namespace.len() + pod.uid.len() + 2);
        for part in [cluster, "/", &pod.namespace, "/", &pod.uid] {
            name.push_str(part);
        }
        let Ok(resource) = LocalId::new(name) else {
            warnings.push(format!("{who}: unusable uid {:?}; not metered", pod.uid));
            continue;
        };
        let vo = vos.get(pod.namespace.as_str()).copied();
        if vo.is_none() {
            warnings.push(format!("{who}: namespace has no VO; metered without one"));
        }
        let key = (pod.namespace.clone(), pod.name.clone());
        let busy = dcgm.and_then(|d| d.utilisation.get(&key)).copied();
        // A pod's GPUs' energy, shared among its GPU resources (one observation each) by count.
        let energy = dcgm.and_then(|d| d.energy.get(&key)).copied();
        let devices_held: u64 = pod.gpus.iter().map(|(_, devices)| devices).sum();
        for (name, devices) in &pod.gpus {
            let (model, sharing) = pod
                .node
                .as_deref()
                .and_then(|node| models.get(&(node, name.as_str())))
                .map(|(model, sharing)| ((*model).clone(), (*sharing).clone()))
                .unwrap_or_else(|| {
                    warnings.push(format!(
                        "{who}: node {:?} does not describe {name}; model recorded as the resource name, each device as a whole GPU",
                        pod.node.as_deref().unwrap_or("")
                    ));
                    let model = GpuModel::new(name.clone()).unwrap_or_else(|_| GpuModel::literal("GPU"));
                    (model, Sharing::Whole)
                });
            // Physical GPUs: a MIG slice, time-slicing or MPS replica is its share of one GPU.
            let physical = *devices as f64 * sharing.physical_share();
            let held = GpuCount::new(physical).unwrap_or_else(|_| count(*devices));
            out.push(Observation {
                site: site.clone(),
                record_type: RecordType::Job,
                resource: resource.clone(),
                model,
                accelerator_type: AcceleratorType::Gpu,
                count: held,
                sharing,
                vo: vo.map(|access| access.vo.clone()),
                fqan: vo.and_then(|access| access.fqan.clone()),
                user: None,
                source: Source::Kubernetes,
                cores: None,
                benchmark: None,
                utilisation: busy,
                energy_wh: energy.map(|wh| wh * *devices as f64 / devices_held.max(1) as f64),
                agent_id: None,
                start,
                end: pod.end,
            });
        }
    }
    out
}

/// Names a pod in warnings; formatted only when one is written.
#[derive(Clone, Copy)]
struct Who<'a>(&'a str, &'a str);

impl std::fmt::Display for Who<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "pod {}/{}", self.0, self.1)
    }
}
