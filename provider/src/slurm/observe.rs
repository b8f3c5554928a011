//! Jobs -> usage observations (pure): one [`Observation`] per job that held GPUs, which the
//! accounting meter cuts into monthly records (`accelfed_accounting::meter::records_for`).
//!
//! The resource is `<cluster>:<jobid>` with the job id as Slurm prints it (`1230_4`, `1240+1`), so
//! the record id is stable across runs and a running job metered again replaces its earlier record.

use accelfed_schemas::gpu::{AcceleratorType, GpuCount, GpuModel};
use accelfed_schemas::names::{LocalId, SiteName, Text};
use accelfed_schemas::usage::{Observation, RecordType, Source};

use super::config::SlurmConfig;
use super::jobs::{JobProblem, SlurmJob};

/// The observation of one job, or `None` for a job that held no GPU or never started.
///
/// The model comes from `[slurm.gpu_types]` by the job's GPU type (untyped jobs: the `gpu` entry,
/// or the only configured type); a type not configured is metered with its Slurm name as the
/// model, never dropped. `gres/gpuutil` (percent, summed over the job's GPUs) becomes the mean
/// utilisation `gpuutil / (100 x GPUs)`, capped at 1.
pub fn observation(
    config: &SlurmConfig,
    site: &SiteName,
    job: &SlurmJob,
) -> Result<Option<Observation>, JobProblem> {
    let (Some(start), true) = (job.start, job.gpus > 0) else {
        return Ok(None);
    };
    let problem = |reason: String| JobProblem {
        cluster: job.cluster.clone(),
        job_id: job.job_id.clone(),
        reason,
    };
    let resource = LocalId::new(format!("{}:{}", job.cluster, job.job_id))
        .map_err(|err| problem(format!("no usable record name: {err}")))?;
    let count = u32::try_from(job.gpus)
        .map(GpuCount::whole)
        .map_err(|_| problem(format!("{} GPUs is not a plausible count", job.gpus)))?;
    let vo = config.vo_of(&job.account, &job.qos, &job.partition);
    let utilisation = job
        .gpuutil
        .map(|percent| (percent as f64 / (100.0 * job.gpus as f64)).min(1.0));
    Ok(Some(Observation {
        site: site.clone(),
        record_type: RecordType::Job,
        resource,
        model: model(config, job.gpu_type.as_deref()),
        accelerator_type: AcceleratorType::Gpu,
        count,
        vo: vo.map(|v| v.vo.clone()),
        fqan: vo.and_then(|v| v.fqan.clone()),
        user: Text::new(job.user.clone()).ok(),
        source: Source::Slurm,
        cores: None,
        benchmark: None,
        utilisation,
        start,
        end: job.end,
    }))
}

fn model(config: &SlurmConfig, gpu_type: Option<&str>) -> GpuModel {
    let known = match gpu_type {
        Some(kind) => config.gpu_types.get(kind),
        None => config.gpu_types.get("gpu").or_else(|| {
            let mut types = config.gpu_types.values();
            match (types.next(), types.next()) {
                (Some(only), None) => Some(only),
                _ => None,
            }
        }),
    };
    match known {
        Some(known) => known.model.clone(),
        None => GpuModel::new(gpu_type.unwrap_or("GPU"))
            .unwrap_or_else(|_| unreachable!("type names are non-empty")),
    }
}
