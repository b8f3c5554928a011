//! Jobs from Slurm's accounting (`sacct --json`, slurmrestd `GET /slurmdb/v0.0.NN/jobs`), read one
//! at a time from a stream: a month of a large site is millions of jobs and gigabytes of JSON, so
//! memory must not grow with it.
//!
//! Each job becomes a [`SlurmJob`]: the allocation (not its steps), its GPUs from the allocated TRES,
//! its times, and `gres/gpuutil` from the steps' `TRESUsageInTot` where Slurm recorded it.

use std::io::Read;

use chrono::{DateTime, Utc};
use serde::Deserialize;
use serde::de::IgnoredAny;

use super::json::{Num, States, opt_string};
use super::lost_gpus::GpuRequest;
use super::tres_json::TresList;
use super::version::{DataVersion, Meta};
use crate::json::{AHEAD, FrameError, Framer};

/// One job's allocation, as the meter needs it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SlurmJob {
    pub cluster: String,
    /// As Slurm prints it: `1234`, `1230_4` (array task), `1240+1` (heterogeneous component).
    pub job_id: String,
    /// The job's own id (sacct's JobIDRaw, the JSON's `job_id`): an array task's or a
    /// heterogeneous component's differs from the printed one, and names its cgroup (`job_<id>`).
    pub raw_id: String,
    pub account: String,
    pub user: String,
    pub partition: String,
    pub qos: String,
    /// The first state: `COMPLETED`, `RUNNING`, `FAILED`...
    pub state: String,
    /// `None` when the job never started.
    pub start: Option<DateTime<Utc>>,
    /// `None` while it runs.
    pub end: Option<DateTime<Utc>>,
    /// `time.elapsed`: Slurm's run time, suspended time excluded (so far, for a running job).
    pub elapsed_s: u64,
    /// `time.suspended`: seconds the job spent suspended.
    pub suspended_s: u64,
    /// Allocated GPUs (`gres/gpu`); 0 for CPU jobs.
    pub gpus: u64,
    /// The GPU type when the allocation names exactly one (`gres/gpu:a100`).
    pub gpu_type: Option<String>,
    /// The largest `gres/gpuutil` of the job's steps' `TRESUsageInTot`.
    pub gpuutil: Option<u64>,
    /// Allocated GPU shards (`gres/shard`); 0 when none.
    pub shards: u64,
    /// Whether the request (`submit_line`, `tres_per_*`) names GPUs; compared with `gpus` to
    /// find accounting that does not record them (`lost_gpus.rs`).
    pub requests_gpus: bool,
}

impl SlurmJob {
    pub fn is_running(&self) -> bool {
        self.end.is_none() && self.start.is_some()
    }
}

/// A job that was skipped, with why.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("job {job_id} of cluster {cluster}: {reason}")]
pub struct JobProblem {
    pub cluster: String,
    pub job_id: String,
    pub reason: String,
}

/// Why a whole jobs document could not be read: no job of it may be used.
#[derive(Debug, thiserror::Error)]
pub enum JobsError {
    #[error(transparent)]
    Json(#[from] FrameError),
    #[error("{0}")]
    Version(String),
    #[error("Slurm reported errors: {}", .0.join("; "))]
    Slurm(Vec<String>),
}

/// What the document said about itself.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JobsSummary {
    pub version: DataVersion,
    pub release: String,
    /// Jobs read, including skipped ones.
    pub jobs: u64,
}

/// Reads a jobs document from `reader`, calling `on_job` for each job in the order printed.
///
/// The `meta` block decides whether the document is accepted: where it comes first (22.05) an
/// unknown version stops before any job; where it comes last (24.05+ put data first) the jobs have
/// already been passed on, so callers must treat them as provisional until this returns `Ok`. The
/// job reader accepts the field shapes of every known version (see [`super::json`]). Memory stays
/// at one window of input ([`Framer`]) whatever the number of jobs.
pub fn read_jobs<R: Read>(
    reader: R,
    on_job: &mut dyn FnMut(Result<SlurmJob, JobProblem>),
) -> Result<JobsSummary, JobsError> {
    let mut input = Framer::new(reader);
    let mut meta: Option<Meta> = None;
    let mut slurm_errors = Vec::new();
    let mut jobs = 0u64;
    input.next_of(b"{", "the document's `{`")?;
    if input.peek()? == Some(b'}') {
        input.next_of(b"}", "`}`")?;
    } else {
        loop {
            let key: String = input.value()?;
            input.next_of(b":", "`:` after a key")?;
            match key.as_str() {
                "meta" => {
                    let read: Meta = input.value()?;
                    read.version().map_err(JobsError::Version)?;
                    meta = Some(read);
                }
                "errors" => {
                    let errors: Option<Vec<serde_json::Value>> = input.value()?;
                    slurm_errors.extend(errors.iter().flatten().map(describe_error));
                }
                "jobs" => {
                    input.next_of(b"[", "the list of jobs")?;
                    if input.peek()? == Some(b']') {
                        input.next_of(b"]", "`]`")?;
                    } else {
                        loop {
                            let raw: RawJob = input.value_ahead(AHEAD)?;
                            jobs += 1;
                            on_job(raw.read());
                            if input.next_of(b",]", "`,` or `]` after a job")? == b']' {
                                break;
                            }
                        }
                    }
                }
                _ => {
                    input.value::<IgnoredAny>()?;
                }
            }
            if input.next_of(b",}", "`,` or `}` after a value")? == b'}' {
                break;
            }
        }
    }
    if input.peek()?.is_some() {
        return Err(FrameError::Syntax {
            at: input.at(),
            message: "trailing characters after the document".to_owned(),
        }
        .into());
    }
    if !slurm_errors.is_empty() {
        return Err(JobsError::Slurm(slurm_errors));
    }
    let meta =
        meta.ok_or_else(|| JobsError::Version("the document has no meta block".to_owned()))?;
    let version = meta.version().map_err(JobsError::Version)?;
    Ok(JobsSummary {
        version,
        release: meta.slurm.release,
        jobs,
    })
}

fn describe_error(error: &serde_json::Value) -> String {
    let field = |name: &str| error.get(name).and_then(|v| v.as_str()).unwrap_or("");
    let (description, source) = (field("description"), field("source"));
    let number = error.get("error_number").or_else(|| error.get("errno"));
    match number {
        Some(n) => format!("{description} ({source}, error {n})"),
        None => error.to_string(),
    }
}

/// A job as the JSON carries it; only the fields the meter reads.
#[derive(Deserialize)]
struct RawJob {
    #[serde(default, deserialize_with = "opt_string")]
    account: String,
    #[serde(default, deserialize_with = "opt_string")]
    cluster: String,
    #[serde(default, deserialize_with = "opt_string")]
    user: String,
    #[serde(default, deserialize_with = "opt_string")]
    partition: String,
    #[serde(default, deserialize_with = "opt_string")]
    qos: String,
    #[serde(default)]
    job_id: Num,
    #[serde(default)]
    array: Option<RawArray>,
    #[serde(default)]
    het: Option<RawHet>,
    #[serde(default)]
    state: Option<RawState>,
    #[serde(default)]
    time: RawTime,
    #[serde(default)]
    tres: Option<RawTres>,
    #[serde(default)]
    steps: Option<Vec<RawStep>>,
    #[serde(default)]
    submit_line: GpuRequest,
    #[serde(default)]
    tres_per_job: GpuRequest,
    #[serde(default)]
    tres_per_node: GpuRequest,
    #[serde(default)]
    tres_per_task: GpuRequest,
}

#[derive(Deserialize)]
struct RawArray {
    #[serde(default)]
    job_id: Num,
    #[serde(default)]
    task_id: Num,
}

#[derive(Deserialize)]
struct RawHet {
    #[serde(default)]
    job_id: Num,
    #[serde(default)]
    job_offset: Num,
}

#[derive(Deserialize)]
struct RawState {
    #[serde(default)]
    current: States,
}

#[derive(Deserialize, Default)]
struct RawTime {
    #[serde(default)]
    elapsed: Num,
    #[serde(default)]
    start: Num,
    #[serde(default)]
    end: Num,
    #[serde(default)]
    suspended: Num,
}

#[derive(Deserialize)]
struct RawTres {
    #[serde(default)]
    allocated: TresList,
}

#[derive(Deserialize)]
struct RawStep {
    #[serde(default)]
    tres: Option<RawStepTres>,
}

#[derive(Deserialize)]
struct RawStepTres {
    /// TRESUsageIn*: `total` is TRESUsageInTot.
    #[serde(default)]
    requested: Option<RawUsage>,
}

#[derive(Deserialize)]
struct RawUsage {
    #[serde(default)]
    total: TresList,
}

impl RawJob {
    fn read(self) -> Result<SlurmJob, JobProblem> {
        let job_id = self.printed_id();
        let problem = |reason: String| JobProblem {
            cluster: self.cluster.clone(),
            job_id: job_id.clone(),
            reason,
        };
        let allocated = self.tres.map(|t| t.allocated).unwrap_or_default();
        if let Some(reason) = allocated.problem {
            return Err(problem(format!("allocated TRES: {reason}")));
        }
        let gpuutil = self
            .steps
            .iter()
            .flatten()
            .filter_map(|s| s.tres.as_ref()?.requested.as_ref()?.total.gpus.gpuutil)
            .max();
        let time = |n: Num| n.as_time().and_then(|s| DateTime::from_timestamp(s, 0));
        let start = time(self.time.start);
        let end = time(self.time.end);
        if let (Some(start), Some(end)) = (start, end)
            && end < start
        {
            return Err(problem(format!("ends ({end}) before it starts ({start})")));
        }
        Ok(SlurmJob {
            state: self
                .state
                .and_then(|s| s.current.0.into_iter().next())
                .unwrap_or_default(),
            start,
            end,
            elapsed_s: self.time.elapsed.as_u64().unwrap_or(0),
            suspended_s: self.time.suspended.as_u64().unwrap_or(0),
            gpus: allocated.gpus.count.unwrap_or(0),
            gpu_type: allocated.gpus.gpu_type,
            shards: allocated.gpus.shards.unwrap_or(0),
            gpuutil,
            requests_gpus: [
                self.submit_line,
                self.tres_per_job,
                self.tres_per_node,
                self.tres_per_task,
            ]
            .iter()
            .any(|request| request.0),
            cluster: self.cluster,
            raw_id: self.job_id.as_u64().unwrap_or(0).to_string(),
            job_id,
            account: self.account,
            user: self.user,
            partition: self.partition,
            qos: self.qos,
        })
    }

    /// The id as `sacct` prints it: `het_job_id+offset`, `array_job_id_task`, or the job id.
    fn printed_id(&self) -> String {
        let positive = |n: Num| n.as_u64().filter(|v| *v > 0);
        if let Some(het) = &self.het
            && let Some(leader) = positive(het.job_id)
        {
            return format!("{leader}+{}", het.job_offset.as_u64().unwrap_or(0));
        }
        if let Some(array) = &self.array
            && let (Some(parent), Some(task)) = (positive(array.job_id), array.task_id.as_u64())
        {
            return format!("{parent}_{task}");
        }
        self.job_id.as_u64().unwrap_or(0).to_string()
    }
}
