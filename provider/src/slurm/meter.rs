//! Jobs -> usage observations: one [`Observation`] per job that held GPUs, which the accounting
//! meter cuts into monthly records (`accelfed_accounting::meter::records_for`).
//!
//! [`observe`] is the meter's entry point (it reads `sacct` or slurmrestd through the client);
//! [`observation`] is the pure mapping of one job, which carries the tests.
//!
//! The resource is `<cluster>:<jobid>` with the job id as Slurm prints it (`1230_4`, `1240+1`), so
//! the record id is stable across runs and a running job metered again replaces its earlier record.

use std::collections::BTreeSet;

use chrono::{DateTime, Utc};

use accelfed_schemas::gpu::{AcceleratorType, GpuCount, GpuModel, Sharing};
use accelfed_schemas::names::{LocalId, SiteName, Text};
use accelfed_schemas::usage::{Observation, RecordType, Source};

use crate::backend::Metering;

use super::client::SlurmClient;
use super::config::SlurmConfig;
use super::error::SlurmError;
use super::inventory::Inventory;
use super::jobs::{JobProblem, SlurmJob};
use super::lost_gpus::LostGpus;
use super::map::mig_profile;
use super::mig::slice_sharing;
use super::nodes::untracked_gpus_warnings;
use super::types::checked_service;

/// The GPU allocations of the jobs that ran in `[since, now)`, one observation per job (its whole
/// run, not only the part inside the window: records carry absolute values per month, so a job
/// metered twice replaces its earlier records). Steps are never counted; running jobs end `None`
/// and are metered up to `now`.
///
/// All or nothing: when `sacct` or slurmrestd fails, times out, or its document turns out to be
/// unusable (an unknown data format, Slurm's own errors), the error names the command or endpoint
/// and no observation of the run is returned, so nothing is written. A job that cannot be read
/// (an unparsable TRES) is skipped with a warning naming it, never metered as zero GPUs; a GPU
/// type missing from `[slurm.gpu_types]` is metered under its Slurm name with a warning. Jobs that
/// asked for GPUs and hold none in their allocated TRES (accounting without `gres/gpu`) are
/// counted in one warning naming the first few and the setting (`lost_gpus.rs`).
pub async fn observe(
    config: &SlurmConfig,
    site: &SiteName,
    since: DateTime<Utc>,
    now: DateTime<Utc>,
) -> Result<Vec<Observation>, SlurmError> {
    Ok(meter(config, site, since, now).await?.observations)
}

/// [`observe`], with the cluster's installed GPUs: the nodes (with the partitions the client reads
/// beside them) are listed while `sacct` runs, and mapped by the code `provide` publishes them with
/// ([`super::checked_service`]), so the bound is the published figure. A node listing that fails
/// leaves the installed GPUs unknown, never the usage unread.
pub async fn meter(
    config: &SlurmConfig,
    site: &SiteName,
    since: DateTime<Utc>,
    now: DateTime<Utc>,
) -> Result<Metering, SlurmError> {
    let (config_read, site) = (config.clone(), site.clone());
    let read =
        tokio::task::spawn_blocking(move || observe_blocking(&config_read, &site, since, now));
    let client = SlurmClient::new(config);
    let (read, inventory) = tokio::join!(read, client.inventory());
    let (observations, jobs) = match read {
        Ok(result) => result?,
        Err(err) if err.is_panic() => std::panic::resume_unwind(err.into_panic()),
        Err(err) => return Err(SlurmError::Worker(err.to_string())),
    };
    if observations.is_empty() && jobs > 0 {
        check_gpu_accounting(config, &inventory);
    }
    let installed = inventory
        .and_then(|inventory| checked_service(config, &inventory))
        .map(|mapped| mapped.service.manager.accelerators)
        .map_err(|err| err.to_string());
    Ok(Metering {
        observations,
        installed,
    })
}

/// Jobs ran but none held GPUs: either no GPU job ran, or the cluster's accounting does not track
/// GPUs (`AccountingStorageTRES` without `gres/gpu`) and every GPU job reads as a CPU job. The
/// nodes tell which; a warning at the default level names the setting.
fn check_gpu_accounting(config: &SlurmConfig, inventory: &Result<Inventory, SlurmError>) {
    let service = config.id.get_ref().as_str();
    match inventory {
        Ok(inventory) => {
            for warning in untracked_gpus_warnings(&inventory.nodes) {
                tracing::warn!(provider = "slurm", service, "{warning}");
            }
        }
        Err(err) => tracing::debug!(
            provider = "slurm",
            service,
            "could not read the nodes to check that accounting tracks GPUs: {err}"
        ),
    }
}

fn observe_blocking(
    config: &SlurmConfig,
    site: &SiteName,
    since: DateTime<Utc>,
    now: DateTime<Utc>,
) -> Result<(Vec<Observation>, u64), SlurmError> {
    let service = config.id.get_ref().as_str();
    let mut observations = Vec::new();
    let mut problems = Vec::new();
    let mut unknown_types = BTreeSet::new();
    let mut lost = LostGpus::default();
    let summary = SlurmClient::new(config).jobs_blocking(since, now, &mut |job| {
        let job = match job {
            Ok(job) => job,
            Err(problem) => return problems.push(problem),
        };
        // sacct's window also selects jobs that only waited in it; keep those that ran in it.
        let ran_in_window =
            job.start.is_some_and(|start| start < now) && job.end.is_none_or(|end| end > since);
        if !ran_in_window {
            return;
        }
        if lost.note(&job) {
            tracing::debug!(
                provider = "slurm",
                service,
                job = %job.job_id,
                "job asked for GPUs but its allocated TRES holds none"
            );
        }
        match observation(config, site, &job) {
            Ok(Some(observation)) => {
                if let Some(kind) = &job.gpu_type
                    && !config.gpu_types.contains_key(kind)
                {
                    unknown_types.insert(kind.clone());
                }
                observations.push(observation);
            }
            Ok(None) => {}
            Err(problem) => problems.push(problem),
        }
    })?;
    for problem in &problems {
        tracing::warn!(provider = "slurm", service, "skipped {problem}");
    }
    if let Some(warning) = lost.warning() {
        tracing::warn!(provider = "slurm", service, "{warning}");
    }
    for kind in &unknown_types {
        tracing::warn!(
            provider = "slurm",
            service,
            "GPU type {kind:?} is not in [slurm.gpu_types]; its jobs are metered with model {:?}",
            super::mig::parent_model(kind).map_or_else(|| kind.clone(), |m| m.to_string())
        );
    }
    tracing::info!(
        provider = "slurm",
        service,
        data_version = %summary.version.name(),
        jobs = summary.jobs,
        observations = observations.len(),
        skipped = problems.len(),
        "read the jobs of {since} to {now}"
    );
    Ok((observations, summary.jobs))
}

/// The observation of one job, or `None` for a job that held no GPU or never started.
///
/// The job is charged its `time.elapsed` (Slurm's run time, suspended time excluded), not end -
/// start: the observed interval ends when the job ended and is `elapsed` long, its start moved
/// forward by the time the job was suspended. A running job's start moves forward by its
/// `time.suspended` so far. An `elapsed` longer than end - start (a record that does not add up)
/// is ignored for end - start.
///
/// The model comes from `[slurm.gpu_types]` by the job's GPU type (untyped jobs: the `gpu` entry,
/// or the only configured type); a type not configured is metered with its Slurm name as the
/// model, never dropped. `gres/gpuutil` (percent, summed over the job's GPUs) becomes the mean
/// utilisation `gpuutil / (100 x GPUs)`, capped at 1.
///
/// A job that holds GPU shards (`gres/shard`) and no whole GPU is metered as `shards /
/// shards_per_gpu` physical GPUs of the untyped model (`Sharing::Mps`); without `shards_per_gpu`
/// it is skipped with a problem that says to set it, never counted as whole GPUs.
pub fn observation(
    config: &SlurmConfig,
    site: &SiteName,
    job: &SlurmJob,
) -> Result<Option<Observation>, JobProblem> {
    let (Some(start), true) = (job.start, job.gpus > 0 || job.shards > 0) else {
        return Ok(None);
    };
    let problem = |reason: String| JobProblem {
        cluster: job.cluster.clone(),
        job_id: job.job_id.clone(),
        reason,
    };
    let resource = LocalId::new(format!("{}:{}", job.cluster, job.job_id))
        .map_err(|err| problem(format!("no usable record name: {err}")))?;
    let shared = job.gpus == 0;
    let held = if shared { job.shards } else { job.gpus };
    let units = u32::try_from(held)
        .map_err(|_| problem(format!("{held} GPUs is not a plausible count")))?;
    let model = model(config, job.gpu_type.as_deref()).map_err(problem)?;
    let sharing = if shared {
        let per_gpu = config.shards_per_gpu.ok_or_else(|| {
            problem(format!(
                "holds gres/shard={held} and no whole GPU, but [slurm] shards_per_gpu is not set: \
                 how much of a GPU a shard is is unknown"
            ))
        })?;
        Sharing::Mps {
            replicas: per_gpu.get(),
        }
    } else {
        sharing(job.gpu_type.as_deref(), &model)
    };
    // Physical GPUs: a MIG slice counts its share of the parent GPU.
    let count = GpuCount::new(f64::from(units) * sharing.physical_share())
        .map_err(|err| problem(format!("{units} GPUs: {err}")))?;
    let vo = config.vo_of(&job.account, &job.qos, &job.partition);
    // Slurm sums gpuutil over whole GPUs; a shard job's share of it is not known.
    let utilisation = job
        .gpuutil
        .filter(|_| !shared)
        .map(|percent| (percent as f64 / (100.0 * job.gpus as f64)).min(1.0));
    Ok(Some(Observation {
        site: site.clone(),
        record_type: RecordType::Job,
        resource,
        model,
        accelerator_type: AcceleratorType::Gpu,
        count,
        sharing,
        vo: vo.map(|v| v.vo.clone()),
        fqan: vo.and_then(|v| v.fqan.clone()),
        user: Text::new(job.user.clone()).ok(),
        source: Source::Slurm,
        cores: None,
        benchmark: None,
        utilisation,
        energy_wh: None,
        agent_id: (job.raw_id != job.job_id && job.raw_id != "0").then(|| job.raw_id.clone()),
        start: charged_start(job, start),
        end: job.end,
    }))
}

/// The start of the interval a job is charged for (see [`observation`]).
fn charged_start(job: &SlurmJob, start: DateTime<Utc>) -> DateTime<Utc> {
    let seconds = |s: u64| chrono::Duration::seconds(i64::try_from(s).unwrap_or(i64::MAX));
    match job.end {
        Some(end) => {
            let wall = (end - start).num_seconds();
            match i64::try_from(job.elapsed_s) {
                // sacct and slurmrestd always carry elapsed; 0 for a job that ran is a record
                // without it, charged end - start.
                Ok(elapsed @ 1..) if elapsed < wall => end - seconds(job.elapsed_s),
                _ => start,
            }
        }
        None if job.suspended_s > 0 => start
            .checked_add_signed(seconds(job.suspended_s))
            .unwrap_or(start),
        None => start,
    }
}

/// Whole GPUs, or a MIG slice where the GRES type names a profile (`1g.10gb`, `a100_3g.40gb`):
/// its share of the parent GPU from the one MIG table ([`accelfed_schemas::gpu::mig_sharing`]).
fn sharing(gpu_type: Option<&str>, model: &GpuModel) -> Sharing {
    match gpu_type.and_then(|kind| Some((kind, mig_profile(kind)?))) {
        Some((kind, profile)) => slice_sharing(kind, model, &profile),
        None => Sharing::Whole,
    }
}

/// Fails for a type no model can be named after (`-SHARED`, 256+ characters).
fn model(config: &SlurmConfig, gpu_type: Option<&str>) -> Result<GpuModel, String> {
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
        Some(known) => Ok(known.canonical_model()),
        // An AutoDetect MIG name is metered under its GPU, as the service publishes it.
        None => match gpu_type.and_then(super::mig::parent_model) {
            Some(parent) => Ok(parent),
            None => GpuModel::canonical(gpu_type.unwrap_or("GPU"))
                .map_err(|err| format!("its GPU type cannot name a model: {err}")),
        },
    }
}
