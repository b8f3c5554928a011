//! The usage record: one VM, pod or job on one GPU model in one calendar month (UTC), with the
//! fields and meaning of EGI's APEL accelerator record v0.1, plus what accelfed's own repository
//! needs (the meter that saw it, the VO, when it was seen).
//!
//! Values are absolute, not increments: a running job's record for the current month grows from
//! run to run, and each new version replaces the last (see [`super::id`]).

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use super::error::{Problem, UsageError};
use super::id::{Identity, RecordId};
use super::kind::{RecordType, Source};
use super::month::Month;
use crate::gpu::{AcceleratorType, GpuCount, GpuModel, Sharing};
use crate::names::{Fqan, LocalId, SiteName, Text, VoName};

/// APEL's BenchmarkType and Benchmark, which only mean something together.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Benchmark {
    /// E.g. `hepscore23`.
    #[serde(rename = "type")]
    pub kind: Text,
    /// Per accelerator, finite and non-negative.
    pub value: f64,
}

/// One usage record. Build it, then [`validate`](UsageRecord::validate) it; deserialising checks
/// everything except the clock-dependent "not in the future".
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(try_from = "super::raw::RawRecord", into = "super::raw::RawRecord")]
pub struct UsageRecord {
    /// MeasurementYear and MeasurementMonth.
    pub month: Month,
    /// AssociatedRecordType.
    pub record_type: RecordType,
    /// AssociatedRecord: the VM's UUID, `<cluster>:<jobid>` or `<cluster>/<namespace>/<pod uid>`.
    pub associated_record: LocalId,
    /// GlobalUserName: the user's DN or federated id, where the middleware knows it.
    pub global_user_name: Option<Text>,
    /// FQAN, e.g. `/atlas/Role=production`.
    pub fqan: Option<Fqan>,
    /// SiteName (GOCDB).
    pub site: SiteName,
    /// Count: physical GPUs held, fractional for shares (a MIG `3g.40gb` of an H100 counts 3/7, one
    /// of 8 time-slicing replicas 0.125). Where several periods of the resource in the month were
    /// merged, their GPU-seconds over the summed AvailableDuration, kept unrounded so that
    /// Count x AvailableDuration is the GPU-seconds exactly.
    pub count: GpuCount,
    /// Cores: CPU cores that came with the GPUs, where known.
    pub cores: Option<u32>,
    /// ActiveDuration: seconds the GPUs were busy (from utilisation), at most `available_duration`.
    pub active_duration: Option<u64>,
    /// AvailableDuration: seconds within this month the GPUs were held.
    pub available_duration: u64,
    /// Seconds of AvailableDuration known to be idle where ActiveDuration is not known (accelfed's
    /// own field; APEL's record has none): a VM's stretches stopped, suspended, paused or shelved
    /// in a month it also ran, when Nova cannot say what the running part did. `None` where
    /// nothing is known idle, and on records that carry an ActiveDuration, whose idle time is
    /// AvailableDuration - ActiveDuration (a value there is within it and counted no second time).
    pub idle_duration: Option<u64>,
    /// Energy the held GPUs used within this month, in watt-hours (accelfed's own field; APEL's
    /// record has none), where a source measured it: the node agent's or DCGM's energy counter,
    /// a shared GPU's energy shared out by held time. `None` where nothing measured it, never 0.
    pub energy_wh: Option<f64>,
    /// BenchmarkType and Benchmark.
    pub benchmark: Option<Benchmark>,
    /// Type (APEL knows GPU, FPGA and Other; MIC is published as Other).
    pub accelerator_type: AcceleratorType,
    /// Model, as the device names itself: the physical GPU, also for a slice, replica or vGPU.
    pub model: GpuModel,
    /// What stood behind the count (accelfed's own field; APEL's record has no place for it).
    pub sharing: Sharing,
    /// Physical GPUs of this model the site had installed in this month, as the meter knew them
    /// from the site's own inventory (accelfed's own field): the central repository checks the
    /// site's GPU-hours per model and month against it (`accelfed report --check`). `None` where
    /// the meter did not know.
    pub installed: Option<GpuCount>,
    /// Which meter saw it.
    pub source: Source,
    /// The VO the usage is charged to; `None` where the site maps the project/namespace/account to
    /// no VO.
    pub vo: Option<VoName>,
    /// The first and last instant of usage this record covers, within its month.
    pub first_seen: DateTime<Utc>,
    pub last_seen: DateTime<Utc>,
}

impl UsageRecord {
    /// The fields that identify the record (APEL's key).
    pub fn identity(&self) -> Identity<'_> {
        Identity {
            site: self.site.as_str(),
            record_type: self.record_type,
            associated_record: self.associated_record.as_str(),
            model: self.model.as_str(),
            year: self.month.year(),
            month: self.month.month(),
        }
    }

    /// The deterministic id (SHA-256 of the identity; see [`super::id`]).
    pub fn id(&self) -> RecordId {
        self.identity().id()
    }

    /// Count x AvailableDuration.
    pub fn gpu_seconds(&self) -> f64 {
        self.count.get() * self.available_duration as f64
    }

    /// GPU-hours, as reports show them.
    pub fn gpu_hours(&self) -> f64 {
        self.gpu_seconds() / 3600.0
    }

    /// The smallest Count a record may carry: a billionth of a GPU. Shares below a thousandth are
    /// real and kept exactly (a 0.0004 share is rendered `0.0004`, and the APEL message carries
    /// as many decimals as the GPU-seconds need, twelve at most), but a count below this is no
    /// share anyone hands out, and past twelve decimals it would be sent and stored as 0 GPUs
    /// beside its hours (1e-300 was).
    pub const MIN_COUNT: f64 = 1e-9;

    /// Checks what the types cannot: durations against the month and each other, a positive finite
    /// count and benchmark, ordered timestamps, and no month after the one containing `now`.
    pub fn validate(&self, now: DateTime<Utc>) -> Result<(), UsageError> {
        self.validate_shape()?;
        if self.month.start() > now {
            return Err(self.error(Problem::FutureMonth {
                month: self.month.to_string(),
                now,
            }));
        }
        Ok(())
    }

    /// Everything `validate` checks except the clock: for stores and receivers, whose clock may
    /// differ from the meter's.
    pub fn validate_shape(&self) -> Result<(), UsageError> {
        let count = self.count.get();
        if count <= 0.0 {
            return Err(self.error(Problem::Count(count)));
        }
        if count < Self::MIN_COUNT {
            return Err(self.error(Problem::CountBelowShare(count)));
        }
        if let Some(problem) = sharing_problem(&self.sharing) {
            return Err(self.error(Problem::Sharing(problem)));
        }
        if let Some(benchmark) = &self.benchmark
            && (!benchmark.value.is_finite() || benchmark.value < 0.0)
        {
            return Err(self.error(Problem::Benchmark(benchmark.value)));
        }
        if let Some(energy) = self.energy_wh
            && (!energy.is_finite() || energy < 0.0)
        {
            return Err(self.error(Problem::Energy(energy)));
        }
        if self.available_duration > self.month.seconds() {
            return Err(self.error(Problem::AvailableTooLong {
                seconds: self.available_duration,
                month: self.month.to_string(),
                month_seconds: self.month.seconds(),
            }));
        }
        if let Some(active) = self.active_duration
            && active > self.available_duration
        {
            return Err(self.error(Problem::ActiveTooLong {
                active,
                available: self.available_duration,
            }));
        }
        // Known-idle time is time not active: with ActiveDuration beside it, both fit in the hold.
        if let Some(idle) = self.idle_duration
            && idle.saturating_add(self.active_duration.unwrap_or(0)) > self.available_duration
        {
            return Err(self.error(Problem::IdleTooLong {
                idle,
                active: self.active_duration,
                available: self.available_duration,
            }));
        }
        if self.first_seen > self.last_seen {
            return Err(self.error(Problem::SeenOrder {
                first: self.first_seen,
                last: self.last_seen,
            }));
        }
        // The meter cuts usage at month boundaries, so a record's usage lies inside its month;
        // one whose seen times leave it was not cut by a meter and its hours belong elsewhere.
        if self.first_seen < self.month.start() || self.last_seen > self.month.end() {
            return Err(self.error(Problem::SeenOutsideMonth {
                first: self.first_seen,
                last: self.last_seen,
                month: self.month.to_string(),
            }));
        }
        Ok(())
    }

    fn error(&self, problem: Problem) -> UsageError {
        let identity = self.identity();
        UsageError {
            id: identity.id(),
            identity: identity.to_string(),
            problem,
        }
    }
}

/// What makes a sharing impossible (a zero denominator, more MIG slices than the GPU has), or
/// `None`: a record's count is physical GPUs and must not rest on a share that is not one.
fn sharing_problem(sharing: &Sharing) -> Option<String> {
    match sharing {
        Sharing::Mig {
            profile,
            slices,
            of,
        } if *slices == 0 || *of == 0 || slices > of => Some(format!(
            "MIG profile {profile} holds {slices} of {of} compute slices"
        )),
        Sharing::TimeSlicing { replicas: 0 } | Sharing::Mps { replicas: 0 } => {
            Some(format!("{} with 0 replicas", sharing.mode()))
        }
        Sharing::Vgpu {
            vgpu_type,
            per_gpu: 0,
        } => Some(format!("vGPU type {vgpu_type} with 0 per physical GPU")),
        _ => None,
    }
}
