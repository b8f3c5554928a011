//! The serialised form of a [`UsageRecord`]: accelfed's own field names (snake_case; the APEL
//! renderer maps them to APEL's), checked on the way in so that a record read from the spool or
//! the wire is as valid as one built by a meter.
//!
//! Text fields arrive as plain strings and the count as a plain number so that a bad value is
//! reported with the record's id and the APEL field name, not as a bare serde error.
//!
//! Decoders of other encodings (the gRPC service) fill a [`RawRecord`] and convert it with
//! `UsageRecord::try_from`, so every encoding is checked by this one conversion.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use super::error::{Problem, UsageError};
use super::id::Identity;
use super::kind::{RecordType, Source};
use super::month::{Month, MonthError};
use super::record::{Benchmark, UsageRecord};
use crate::gpu::{AcceleratorType, GpuCount, GpuModel, Sharing};
use crate::names::{Fqan, LocalId, NameError, SiteName, Text, VoName};

/// A usage record's fields before any check (see the module documentation).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct RawRecord {
    pub site: String,
    pub record_type: RecordType,
    pub associated_record: String,
    pub model: String,
    pub year: i32,
    pub month: u32,
    pub accelerator_type: AcceleratorType,
    pub count: f64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cores: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub active_duration: Option<u64>,
    pub available_duration: u64,
    /// Absent (nothing known idle, or a spool or sender older than the field): none known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub idle_duration: Option<u64>,
    /// Absent (no source measured it, or a spool or sender older than the field): no energy.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub energy_wh: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub global_user_name: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fqan: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub vo: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub benchmark: Option<RawBenchmark>,
    pub source: Source,
    pub first_seen: DateTime<Utc>,
    pub last_seen: DateTime<Utc>,
    /// Absent (spools and senders older than the field, and whole GPUs): [`Sharing::Whole`]. Left
    /// out when whole, so a whole-GPU record reads and writes as it did before the field existed.
    #[serde(default, skip_serializing_if = "is_whole")]
    pub sharing: Sharing,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub installed: Option<f64>,
}

fn is_whole(sharing: &Sharing) -> bool {
    *sharing == Sharing::Whole
}

/// BenchmarkType and Benchmark before any check.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct RawBenchmark {
    #[serde(rename = "type")]
    pub kind: String,
    pub value: f64,
}

impl RawRecord {
    fn error(&self, problem: Problem) -> UsageError {
        let identity = Identity {
            site: &self.site,
            record_type: self.record_type,
            associated_record: &self.associated_record,
            model: &self.model,
            year: self.year,
            month: self.month,
        };
        UsageError {
            id: identity.id(),
            identity: identity.to_string(),
            problem,
        }
    }
}

/// Wraps a name error with the APEL field it came from.
fn named(field: &'static str) -> impl Fn(NameError) -> Problem {
    move |source| Problem::Name { field, source }
}

impl TryFrom<RawRecord> for UsageRecord {
    type Error = UsageError;

    fn try_from(raw: RawRecord) -> Result<Self, UsageError> {
        let fail = |problem| raw.error(problem);
        let month = Month::new(raw.year, raw.month).map_err(|err| match err {
            MonthError::Month(month) => fail(Problem::Month(month)),
            MonthError::Year(year) => fail(Problem::Year(year)),
        })?;
        let optional = |field, value: &Option<String>| {
            value
                .as_deref()
                .map(Text::new)
                .transpose()
                .map_err(|err| fail(named(field)(err)))
        };
        let benchmark = match &raw.benchmark {
            Some(b) => Some(Benchmark {
                kind: Text::new(b.kind.as_str()).map_err(|e| fail(named("BenchmarkType")(e)))?,
                value: b.value,
            }),
            None => None,
        };
        let record = UsageRecord {
            month,
            record_type: raw.record_type,
            associated_record: LocalId::new(raw.associated_record.as_str())
                .map_err(|e| fail(named("AssociatedRecord")(e)))?,
            global_user_name: optional("GlobalUserName", &raw.global_user_name)?,
            fqan: raw
                .fqan
                .as_deref()
                .map(Fqan::new)
                .transpose()
                .map_err(|e| fail(named("FQAN")(e)))?,
            site: SiteName::new(raw.site.as_str()).map_err(|e| fail(named("SiteName")(e)))?,
            count: GpuCount::new(raw.count).map_err(|_| fail(Problem::Count(raw.count)))?,
            cores: raw.cores,
            active_duration: raw.active_duration,
            available_duration: raw.available_duration,
            idle_duration: raw.idle_duration,
            energy_wh: raw.energy_wh,
            benchmark,
            accelerator_type: raw.accelerator_type,
            model: GpuModel::new(raw.model.as_str()).map_err(|e| fail(named("Model")(e)))?,
            source: raw.source,
            sharing: raw.sharing.clone(),
            installed: raw
                .installed
                .map(GpuCount::new)
                .transpose()
                .map_err(|_| fail(Problem::Installed(raw.installed.unwrap_or(f64::NAN))))?,
            vo: raw
                .vo
                .as_deref()
                .map(VoName::new)
                .transpose()
                .map_err(|e| fail(named("VO")(e)))?,
            first_seen: raw.first_seen,
            last_seen: raw.last_seen,
        };
        record.validate_shape()?;
        Ok(record)
    }
}

impl From<UsageRecord> for RawRecord {
    fn from(record: UsageRecord) -> Self {
        RawRecord {
            site: record.site.as_str().to_owned(),
            record_type: record.record_type,
            associated_record: record.associated_record.as_str().to_owned(),
            model: record.model.as_str().to_owned(),
            year: record.month.year(),
            month: record.month.month(),
            accelerator_type: record.accelerator_type,
            count: record.count.get(),
            cores: record.cores,
            active_duration: record.active_duration,
            available_duration: record.available_duration,
            idle_duration: record.idle_duration,
            energy_wh: record.energy_wh,
            global_user_name: record.global_user_name.map(|t| t.as_str().to_owned()),
            fqan: record.fqan.map(|f| f.as_str().to_owned()),
            vo: record.vo.map(|v| v.as_str().to_owned()),
            benchmark: record.benchmark.map(|b| RawBenchmark {
                kind: b.kind.as_str().to_owned(),
                value: b.value,
            }),
            source: record.source,
            first_seen: record.first_seen,
            last_seen: record.last_seen,
            sharing: record.sharing,
            installed: record.installed.map(GpuCount::get),
        }
    }
}
