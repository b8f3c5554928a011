//! The columns of the `records` table, as both backends store them.
//!
//! This is not a second usage-record type: it is the storage projection of
//! [`UsageRecord`], built only from one (see [`RecordRow::from_record`]), with counts in integer
//! thousandths so that summaries subtract exactly. Keeping the projection in one place means both
//! backends bind, read and compare the same columns.
//!
//! Text columns share the record's own text (`Arc<str>`; the closed sets are `'static`), so building
//! a row copies no string: ingest builds one per received record, and copying its eight texts was a
//! visible part of the service's time.
//!
//! The record id (SHA-256) is stored as its 32 bytes rather than 64 hex digits: the id index is
//! what limits ingest speed (its pages are written at random), and halving its entries halves the
//! pages a batch dirties.

use std::borrow::Cow;
use std::sync::Arc;

use accelfed_schemas::gpu::Sharing;
use accelfed_schemas::usage::UsageRecord;

use super::period::Period;
use super::totals::{SummaryKey, Totals, UserKey};
use crate::wire::Rejection;

/// The most GPUs one record may hold: far above any real allocation, and low enough that
/// Count x AvailableDuration in milli-GPU-seconds summed over billions of records fits in 64 bits.
pub(crate) const MAX_GPUS: f64 = 1_000_000.0;

/// One stored record, column by column.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct RecordRow {
    /// The SHA-256 record id, as bytes.
    pub record_id: [u8; 32],
    pub period: Period,
    pub site: Arc<str>,
    /// `None` where the site maps the usage to no VO; summaries file it under the empty VO.
    pub vo: Option<Arc<str>>,
    pub model: Arc<str>,
    /// `cloud` or `job` (APEL's AssociatedRecordType).
    pub record_type: Cow<'static, str>,
    /// The VM, pod or job id (APEL's AssociatedRecord).
    pub associated_record: Arc<str>,
    pub global_user_name: Option<Arc<str>>,
    pub fqan: Option<Arc<str>>,
    /// Count, in thousandths of a GPU.
    pub gpu_milli: i64,
    pub cores: Option<i64>,
    pub active_seconds: Option<i64>,
    pub available_seconds: i64,
    pub benchmark_type: Option<Arc<str>>,
    pub benchmark: Option<f64>,
    /// APEL's Type: GPU, FPGA, ...
    pub accelerator_type: Cow<'static, str>,
    /// Which meter produced the record (openstack, kubernetes, slurm, static).
    pub source: Cow<'static, str>,
    /// First and last instant of usage, Unix microseconds.
    pub first_seen: Option<i64>,
    pub last_seen: Option<i64>,
    /// Count as the record has it, unrounded (a MIG slice's 3/7, a merged record's GPU-seconds over
    /// its duration): summaries are computed from it, so GPU-hours stay exact. `None` in rows
    /// stored before the column existed, whose summaries came from `gpu_milli`.
    pub gpu_count: Option<f64>,
    /// What stood behind the count, as the record's JSON (`{"mode":"mig",...}`); `None` for whole
    /// GPUs.
    pub sharing: Option<Arc<str>>,
    /// Physical GPUs of the model the site had installed in the month, where its meter knew.
    pub installed: Option<f64>,
    /// Energy the held GPUs used in the month, watt-hours, where the site's source measured it.
    pub energy_wh: Option<f64>,
    /// Seconds known idle where ActiveDuration is unknown (the record's IdleDuration).
    pub idle_seconds: Option<i64>,
}

/// Column names in binding order; both backends' SQL is built from this list.
pub(crate) const COLUMNS: [&str; 24] = [
    "record_id",
    "period",
    "site",
    "vo",
    "model",
    "record_type",
    "associated_record",
    "global_user_name",
    "fqan",
    "gpu_milli",
    "cores",
    "active_seconds",
    "available_seconds",
    "benchmark_type",
    "benchmark",
    "accelerator_type",
    "source",
    "first_seen",
    "last_seen",
    "gpu_count",
    "sharing",
    "installed",
    "energy_wh",
    "idle_seconds",
];

impl RecordRow {
    /// The row of a validated record; refuses a count too large to account.
    pub fn from_record(record: &UsageRecord) -> Result<Self, Rejection> {
        let count = record.count.get();
        if !(count.is_finite() && count > 0.0 && count <= MAX_GPUS) {
            return Err(Rejection::BadCount {
                detail: format!("Count {count} is not above 0 and at most {MAX_GPUS}"),
            });
        }
        let period = Period::new(record.month.year(), record.month.month()).map_err(|e| {
            Rejection::BadMonth {
                detail: e.to_string(),
            }
        })?;
        let too_long = |what: &str, value: u64| Rejection::BadDuration {
            detail: format!("{what} {value} s is out of range"),
        };
        Ok(Self {
            record_id: record.identity().digest(),
            period,
            site: Arc::clone(record.site.shared()),
            vo: record.vo.as_ref().map(|v| Arc::clone(v.shared())),
            model: Arc::clone(record.model.shared()),
            record_type: Cow::Borrowed(record.record_type.as_str()),
            associated_record: Arc::clone(record.associated_record.shared()),
            global_user_name: record
                .global_user_name
                .as_ref()
                .map(|t| Arc::clone(t.shared())),
            fqan: record.fqan.as_ref().map(|f| Arc::clone(f.shared())),
            // Bounded above, so the rounded value fits.
            gpu_milli: (count * 1000.0).round() as i64,
            cores: record.cores.map(i64::from),
            active_seconds: record
                .active_duration
                .map(|a| i64::try_from(a).map_err(|_| too_long("ActiveDuration", a)))
                .transpose()?,
            available_seconds: i64::try_from(record.available_duration)
                .map_err(|_| too_long("AvailableDuration", record.available_duration))?,
            benchmark_type: record
                .benchmark
                .as_ref()
                .map(|b| Arc::clone(b.kind.shared())),
            benchmark: record.benchmark.as_ref().map(|b| b.value),
            accelerator_type: Cow::Borrowed(record.accelerator_type.as_str()),
            source: Cow::Borrowed(record.source.as_str()),
            first_seen: Some(record.first_seen.timestamp_micros()),
            last_seen: Some(record.last_seen.timestamp_micros()),
            gpu_count: Some(count),
            sharing: match record.sharing {
                Sharing::Whole => None,
                ref sharing => serde_json::to_string(sharing).ok().map(Arc::from),
            },
            installed: record.installed.map(|gpus| gpus.get()),
            energy_wh: record.energy_wh,
            idle_seconds: record
                .idle_duration
                .map(|i| i64::try_from(i).map_err(|_| too_long("IdleDuration", i)))
                .transpose()?,
        })
    }

    /// The summary row this record counts in.
    pub fn summary_key(&self) -> SummaryKey {
        SummaryKey {
            site: Arc::clone(&self.site),
            vo: self.vo.clone().unwrap_or_default(),
            model: Arc::clone(&self.model),
            period: self.period,
        }
    }

    /// The key of the user rollup row this record counts in.
    pub fn user_key(&self) -> UserKey {
        UserKey {
            summary: self.summary_key(),
            user: self.global_user_name.clone().unwrap_or_default(),
        }
    }

    /// What this record adds to its summary row.
    pub fn totals(&self) -> Totals {
        let totals = match self.gpu_count {
            Some(count) => Totals::of_exact(
                self.gpu_milli,
                count,
                self.available_seconds,
                self.active_seconds,
            )
            .with_known_idle_exact(count, self.active_seconds, self.idle_seconds),
            None => Totals::of_record(self.gpu_milli, self.available_seconds, self.active_seconds)
                .with_known_idle(self.gpu_milli, self.active_seconds, self.idle_seconds),
        };
        totals.with_energy(self.energy_wh)
    }
}

#[cfg(test)]
pub(crate) mod sample {
    use super::*;

    /// A plausible row; tests vary the fields they care about.
    pub fn row(id: u8, vo: &str, gpu_milli: i64, available_seconds: i64) -> RecordRow {
        RecordRow {
            record_id: [id; 32],
            period: Period::new(2026, 1).unwrap(),
            site: "CESNET-MCC".into(),
            vo: Some(vo.into()),
            model: "NVIDIA A100".into(),
            record_type: "cloud".into(),
            associated_record: format!("vm-{id}").into(),
            global_user_name: None,
            fqan: None,
            gpu_milli,
            cores: Some(8),
            active_seconds: None,
            available_seconds,
            benchmark_type: None,
            benchmark: None,
            accelerator_type: "GPU".into(),
            source: "openstack".into(),
            first_seen: None,
            last_seen: None,
            gpu_count: Some(gpu_milli as f64 / 1000.0),
            sharing: None,
            installed: None,
            energy_wh: None,
            idle_seconds: None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn projects_a_record() {
        let record = accelfed_schemas::usage::sample::record("vm-1");
        let row = RecordRow::from_record(&record).unwrap();
        let hex: String = row.record_id.iter().map(|b| format!("{b:02x}")).collect();
        assert_eq!(
            hex,
            record.id().as_str(),
            "the id's bytes are its hex digits"
        );
        assert_eq!(row.gpu_milli, 1000);
        assert_eq!(row.available_seconds, 864_000);
        assert_eq!(&*row.summary_key().vo, "vo.example.org");
        assert_eq!(row.totals().gpu_hours(), 240.0);
    }
}
