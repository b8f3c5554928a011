//! What the summary table keeps per (site, VO, model, month), in exact integer units.
//!
//! Re-sending a record subtracts its old contribution and adds the new one. With floating-point
//! sums, `a + b - b` need not equal `a`, and totals would drift with every replacement; integers make
//! subtraction exact. Counts are kept in thousandths of a GPU (the precision every rendering of a
//! `GpuCount` uses) and durations in whole seconds, so GPU-time is in milli-GPU-seconds.

use std::ops::{AddAssign, SubAssign};
use std::sync::Arc;

use serde::Serialize;

use super::period::Period;

/// The key of one summary row.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct SummaryKey {
    pub site: Arc<str>,
    /// Empty for records of no VO.
    pub vo: Arc<str>,
    pub model: Arc<str>,
    pub period: Period,
}

/// The summed columns of both summary tables, in the order of [`Totals::summed`]: what the
/// backends' upserts add and their reports sum. A summed figure more (as energy was) is a field of
/// [`Totals`], a name here, and its place in `summed`, `from_summed` and the two operators below,
/// all in this file; the tables get the column in a migration.
pub(crate) const SUMMED: [&str; 10] = [
    "records",
    "gpu_milli",
    "gpu_milli_seconds",
    "active_records",
    "active_gpu_milli_seconds",
    "active_available_gpu_milli_seconds",
    "energy_records",
    "energy_milli_wh",
    "known_idle_records",
    "known_idle_gpu_milli_seconds",
];

/// The key of one row of the user rollup (`user_summaries`): a summary row's key and the
/// records' GlobalUserName (empty for records that name none).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct UserKey {
    pub summary: SummaryKey,
    pub user: Arc<str>,
}

/// Additive totals over a set of records. Every field is a plain sum, so a group's totals are the
/// sum of its members' and a record's removal is an exact subtraction.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
pub struct Totals {
    /// Number of records.
    pub records: i64,
    /// Sum of the records' GPU counts, in thousandths of a GPU.
    pub gpu_milli: i64,
    /// Sum of Count x AvailableDuration, in milli-GPU-seconds.
    pub gpu_milli_seconds: i64,
    /// Number of records that report an ActiveDuration.
    pub active_records: i64,
    /// Sum of Count x ActiveDuration over those records, in milli-GPU-seconds.
    pub active_gpu_milli_seconds: i64,
    /// Sum of Count x AvailableDuration over the same records, so active and available time can be
    /// compared on equal footing even when only some records know their active time.
    pub active_available_gpu_milli_seconds: i64,
    /// Number of records that carry their energy.
    pub energy_records: i64,
    /// Sum of their energy, in milliwatt-hours (integers, so replacements subtract exactly).
    pub energy_milli_wh: i64,
    /// Number of records without an ActiveDuration that carry known-idle seconds (IdleDuration).
    pub known_idle_records: i64,
    /// Sum of Count x IdleDuration over those records, in milli-GPU-seconds. Records with an
    /// ActiveDuration say their idle time through it and add nothing here (see
    /// `report::idle_hours` for the one rule).
    pub known_idle_gpu_milli_seconds: i64,
}

impl Totals {
    /// The contribution of one record.
    pub fn of_record(gpu_milli: i64, available_seconds: i64, active_seconds: Option<i64>) -> Self {
        let milli_seconds = |seconds: i64| gpu_milli.saturating_mul(seconds);
        Self::one(
            gpu_milli,
            milli_seconds(available_seconds),
            active_seconds.map(milli_seconds),
        )
    }

    /// The contribution of one record from its unrounded count: GPU-time is Count x duration in
    /// milli-GPU-seconds rounded once, so a 1/7 slice for a month counts 1/7 of the month, not
    /// 0.143 of it.
    pub fn of_exact(
        gpu_milli: i64,
        count: f64,
        available_seconds: i64,
        active_seconds: Option<i64>,
    ) -> Self {
        // Counts are at most a million GPUs and durations a month, so the products fit.
        let milli_seconds = |seconds: i64| (count * 1000.0 * seconds as f64).round() as i64;
        Self::one(
            gpu_milli,
            milli_seconds(available_seconds),
            active_seconds.map(milli_seconds),
        )
    }

    /// One record's totals from its GPU-time, available and (where known) active, in
    /// milli-GPU-seconds: the two constructors differ only in how they compute those.
    fn one(gpu_milli: i64, available: i64, active: Option<i64>) -> Self {
        let (active_records, active, active_available) = match active {
            Some(active) => (1, active, available),
            None => (0, 0, 0),
        };
        Self {
            records: 1,
            gpu_milli,
            gpu_milli_seconds: available,
            active_records,
            active_gpu_milli_seconds: active,
            active_available_gpu_milli_seconds: active_available,
            energy_records: 0,
            energy_milli_wh: 0,
            known_idle_records: 0,
            known_idle_gpu_milli_seconds: 0,
        }
    }

    /// These totals with a record's known-idle seconds counted in, from its count in thousandths
    /// (rows stored before the unrounded count existed): only where ActiveDuration is unknown.
    pub fn with_known_idle(
        self,
        gpu_milli: i64,
        active_seconds: Option<i64>,
        idle_seconds: Option<i64>,
    ) -> Self {
        self.known_idle(active_seconds, idle_seconds, |s| {
            gpu_milli.saturating_mul(s)
        })
    }

    /// As [`Totals::with_known_idle`], from the unrounded count, rounded once as
    /// [`Totals::of_exact`] rounds.
    pub fn with_known_idle_exact(
        self,
        count: f64,
        active_seconds: Option<i64>,
        idle_seconds: Option<i64>,
    ) -> Self {
        self.known_idle(active_seconds, idle_seconds, |s| {
            (count * 1000.0 * s as f64).round() as i64
        })
    }

    fn known_idle(
        mut self,
        active_seconds: Option<i64>,
        idle_seconds: Option<i64>,
        milli_seconds: impl Fn(i64) -> i64,
    ) -> Self {
        if let (None, Some(idle)) = (active_seconds, idle_seconds) {
            self.known_idle_records += 1;
            self.known_idle_gpu_milli_seconds += milli_seconds(idle);
        }
        self
    }

    /// These totals with one record's energy (watt-hours, where measured) counted in.
    pub fn with_energy(mut self, energy_wh: Option<f64>) -> Self {
        if let Some(energy) = energy_wh {
            self.energy_records += 1;
            // Validated finite and non-negative; a record's month of GPUs is far below 2^63 mWh.
            self.energy_milli_wh += (energy * 1000.0).round() as i64;
        }
        self
    }

    /// Watt-hours, or `None` when no record in the group carries its energy (absent, not 0).
    pub fn energy_wh(&self) -> Option<f64> {
        (self.energy_records > 0).then(|| self.energy_milli_wh as f64 / 1000.0)
    }

    /// The figures in the order of [`SUMMED`].
    pub(crate) fn summed(&self) -> [i64; SUMMED.len()] {
        [
            self.records,
            self.gpu_milli,
            self.gpu_milli_seconds,
            self.active_records,
            self.active_gpu_milli_seconds,
            self.active_available_gpu_milli_seconds,
            self.energy_records,
            self.energy_milli_wh,
            self.known_idle_records,
            self.known_idle_gpu_milli_seconds,
        ]
    }

    /// Totals from figures in the order of [`SUMMED`].
    pub(crate) fn from_summed(values: [i64; SUMMED.len()]) -> Self {
        let [
            records,
            gpu_milli,
            gpu_milli_seconds,
            active_records,
            active_gpu_milli_seconds,
            active_available_gpu_milli_seconds,
            energy_records,
            energy_milli_wh,
            known_idle_records,
            known_idle_gpu_milli_seconds,
        ] = values;
        Self {
            records,
            gpu_milli,
            gpu_milli_seconds,
            active_records,
            active_gpu_milli_seconds,
            active_available_gpu_milli_seconds,
            energy_records,
            energy_milli_wh,
            known_idle_records,
            known_idle_gpu_milli_seconds,
        }
    }

    /// True when adding these totals changes nothing (a replacement that moved no numbers).
    pub fn is_zero(&self) -> bool {
        *self == Self::default()
    }

    /// GPU-hours (Count x AvailableDuration / 3600).
    pub fn gpu_hours(&self) -> f64 {
        self.gpu_milli_seconds as f64 / 3_600_000.0
    }

    /// Active GPU-hours, or `None` when no record in the group knows its active time.
    pub fn active_gpu_hours(&self) -> Option<f64> {
        (self.active_records > 0).then(|| self.active_gpu_milli_seconds as f64 / 3_600_000.0)
    }

    /// Available GPU-hours of the records that know their active time (the denominator of
    /// utilisation), or `None` when none does.
    pub fn active_available_gpu_hours(&self) -> Option<f64> {
        (self.active_records > 0)
            .then(|| self.active_available_gpu_milli_seconds as f64 / 3_600_000.0)
    }

    /// Whether some record of the group knows part of its time as active or idle.
    pub fn knows_idle(&self) -> bool {
        self.active_records > 0 || self.known_idle_records > 0
    }

    /// Idle GPU-hours by the one rule for every source (docs/architecture.md, "What counts as
    /// idle"): available minus active time of the records that carry an ActiveDuration, plus the
    /// known-idle time of those that carry none; `None` when no record knows either (an unknown
    /// active time is not idle time).
    pub fn idle_gpu_hours(&self) -> Option<f64> {
        self.knows_idle().then(|| {
            (self.active_available_gpu_milli_seconds - self.active_gpu_milli_seconds
                + self.known_idle_gpu_milli_seconds) as f64
                / 3_600_000.0
        })
    }

    /// GPU-hours whose activity is known (the base of the idle share): all of those of the
    /// records that carry an ActiveDuration and the known-idle part of those that carry none;
    /// `None` when no record knows either.
    pub fn measured_gpu_hours(&self) -> Option<f64> {
        self.knows_idle().then(|| {
            (self.active_available_gpu_milli_seconds + self.known_idle_gpu_milli_seconds) as f64
                / 3_600_000.0
        })
    }

    /// Mean number of GPUs per record, or `None` for an empty group.
    pub fn mean_gpus(&self) -> Option<f64> {
        (self.records > 0).then(|| self.gpu_milli as f64 / 1000.0 / self.records as f64)
    }
}

impl AddAssign for Totals {
    fn add_assign(&mut self, rhs: Self) {
        self.records += rhs.records;
        self.gpu_milli += rhs.gpu_milli;
        self.gpu_milli_seconds += rhs.gpu_milli_seconds;
        self.active_records += rhs.active_records;
        self.active_gpu_milli_seconds += rhs.active_gpu_milli_seconds;
        self.active_available_gpu_milli_seconds += rhs.active_available_gpu_milli_seconds;
        self.energy_records += rhs.energy_records;
        self.energy_milli_wh += rhs.energy_milli_wh;
        self.known_idle_records += rhs.known_idle_records;
        self.known_idle_gpu_milli_seconds += rhs.known_idle_gpu_milli_seconds;
    }
}

impl SubAssign for Totals {
    fn sub_assign(&mut self, rhs: Self) {
        self.records -= rhs.records;
        self.gpu_milli -= rhs.gpu_milli;
        self.gpu_milli_seconds -= rhs.gpu_milli_seconds;
        self.active_records -= rhs.active_records;
        self.active_gpu_milli_seconds -= rhs.active_gpu_milli_seconds;
        self.active_available_gpu_milli_seconds -= rhs.active_available_gpu_milli_seconds;
        self.energy_records -= rhs.energy_records;
        self.energy_milli_wh -= rhs.energy_milli_wh;
        self.known_idle_records -= rhs.known_idle_records;
        self.known_idle_gpu_milli_seconds -= rhs.known_idle_gpu_milli_seconds;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn replacement_is_exact() {
        let a = Totals::of_record(500, 3600, Some(1800));
        let b = Totals::of_record(1000, 7200, None);
        let mut sum = a;
        sum += b;
        sum -= b;
        assert_eq!(sum, a);
        assert_eq!(a.gpu_hours(), 0.5);
        assert_eq!(a.active_gpu_hours(), Some(0.25));
        assert_eq!(b.active_gpu_hours(), None);
        assert_eq!(b.mean_gpus(), Some(1.0));
        let c = Totals::of_record(1000, 3600, None).with_energy(Some(0.1234));
        let mut sum = a;
        sum += c;
        assert_eq!(sum.energy_wh(), Some(0.123), "to the milliwatt-hour");
        sum -= c;
        assert_eq!((sum, a.energy_wh()), (a, None), "absent, not 0");
        // Known idle counts only where ActiveDuration is unknown, and subtracts exactly.
        let d = Totals::of_exact(2000, 2.0, 18 * 3600, None).with_known_idle_exact(
            2.0,
            None,
            Some(5 * 3600),
        );
        assert_eq!(
            (d.known_idle_records, d.known_idle_gpu_milli_seconds),
            (1, 36_000_000)
        );
        let e = Totals::of_record(1000, 3600, Some(600)).with_known_idle(1000, Some(600), Some(60));
        assert_eq!(e.known_idle_records, 0, "ActiveDuration says the idle time");
        let mut sum = a;
        sum += d;
        sum -= d;
        assert_eq!(sum, a);
    }
}
