//! What a meter saw: one VM, pod or job holding GPUs over an interval. Providers produce these
//! (they talk to the middleware); accounting's meter cuts them into monthly [`UsageRecord`]s.
//!
//! It lives in `schemas` because both sides need it and `provider` may not depend on `accounting`.
//!
//! [`UsageRecord`]: super::UsageRecord

use chrono::{DateTime, Utc};

use super::kind::{RecordType, Source};
use super::record::Benchmark;
use crate::gpu::{AcceleratorType, GpuCount, GpuModel, Sharing};
use crate::names::{Fqan, LocalId, SiteName, Text, VoName};

/// One resource's hold on GPUs over `[start, end)`.
#[derive(Debug, Clone, PartialEq)]
pub struct Observation {
    pub site: SiteName,
    /// `cloud` for VMs and pods, `job` for batch jobs.
    pub record_type: RecordType,
    /// The VM's UUID, `<cluster>:<jobid>` or `<cluster>/<namespace>/<pod uid>`.
    pub resource: LocalId,
    pub model: GpuModel,
    pub accelerator_type: AcceleratorType,
    /// Physical GPUs held for the whole interval: a MIG slice, replica or vGPU counts its share of
    /// one GPU ([`Sharing::physical_share`]), a fractional flavor as written.
    pub count: GpuCount,
    /// What stood behind the count (whole GPUs, a MIG profile, replicas, a vGPU type).
    pub sharing: Sharing,
    pub vo: Option<VoName>,
    pub fqan: Option<Fqan>,
    /// GlobalUserName.
    pub user: Option<Text>,
    pub source: Source,
    pub cores: Option<u32>,
    pub benchmark: Option<Benchmark>,
    /// The mean fraction (0..=1) of the interval the GPUs were busy, where the middleware reports
    /// utilisation; becomes ActiveDuration.
    pub utilisation: Option<f64>,
    /// Energy the observation's GPUs used over its interval, in watt-hours, where a source
    /// measures it (the node agent's energy counter, DCGM's); `None` elsewhere.
    pub energy_wh: Option<f64>,
    /// The id a node agent knows this holder by where it is not the one in `resource`: a Slurm
    /// array task's or heterogeneous job component's own job id (JobIDRaw; `resource` has the
    /// printed `1230_4` or `1240+1`), which is what its cgroup `job_<id>` names. `None` elsewhere.
    pub agent_id: Option<String>,
    pub start: DateTime<Utc>,
    /// `None` while the resource still holds its GPUs: metered up to the meter's `now`.
    pub end: Option<DateTime<Utc>>,
}
