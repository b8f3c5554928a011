//! Who holds a GPU: the unit a site would free (a Slurm job, a pod, a VM), or a bare process.

use std::fmt;

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(tag = "kind", content = "id", rename_all = "snake_case")]
pub enum Holder {
    /// A Slurm job, by job id (from `.../job_<id>/...` in the process's cgroup).
    SlurmJob(String),
    /// A Kubernetes pod, by UID (from `...pod<uid>...` in the process's cgroup).
    KubernetesPod(String),
    /// A VM holding a vGPU, by libvirt domain UUID (Nova's server id on OpenStack), as NVML gives it.
    Vm(String),
    /// A VM NVML names by domain id only (Xen); no Nova server id.
    VmDomain(String),
    /// A process in no job or pod (a login session, a service): by pid.
    Process(u32),
}

impl fmt::Display for Holder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::SlurmJob(id) => write!(f, "slurm_job:{id}"),
            Self::KubernetesPod(uid) => write!(f, "kubernetes_pod:{uid}"),
            Self::Vm(uuid) => write!(f, "vm:{uuid}"),
            Self::VmDomain(id) => write!(f, "vm_domain:{id}"),
            Self::Process(pid) => write!(f, "process:{pid}"),
        }
    }
}

impl Holder {
    /// The kind as written in JSON and in Prometheus labels.
    pub fn kind(&self) -> &'static str {
        match self {
            Self::SlurmJob(_) => "slurm_job",
            Self::KubernetesPod(_) => "kubernetes_pod",
            Self::Vm(_) => "vm",
            Self::VmDomain(_) => "vm_domain",
            Self::Process(_) => "process",
        }
    }

    /// The id as written in JSON and in Prometheus labels.
    pub fn id(&self) -> String {
        match self {
            Self::SlurmJob(id) | Self::KubernetesPod(id) | Self::Vm(id) | Self::VmDomain(id) => {
                id.clone()
            }
            Self::Process(pid) => pid.to_string(),
        }
    }
}
