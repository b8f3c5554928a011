//! Calendar months in UTC: the unit of a usage record (APEL's MeasurementYear and MeasurementMonth).
//!
//! A month knows its own length so that a record's AvailableDuration can be checked against it, and
//! its first and last instants so that the meter can cut intervals at month boundaries.

use std::fmt;

use chrono::{DateTime, Datelike, NaiveDate, Utc};

/// Why a month was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum MonthError {
    #[error("MeasurementMonth must be 1..=12, got {0}")]
    Month(u32),
    #[error("MeasurementYear must be {min}..={max}, got {0}", min = Month::MIN_YEAR, max = Month::MAX_YEAR)]
    Year(i32),
}

/// One calendar month in UTC. Ordered by time.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Month {
    year: i32,
    month: u32,
}

impl Month {
    /// The federation's epoch: no GPU usage record predates 2000 (APEL's repository began in 2004,
    /// general-purpose GPUs in 2007), and a month from 1970 is a zero timestamp, not usage. Records
    /// before it are refused where they enter, so one cannot stretch every report back to 1970.
    /// Four-digit years keep the text forms (`2026-01`) fixed-width.
    pub const MIN_YEAR: i32 = 2000;
    pub const MAX_YEAR: i32 = 9999;

    /// Validates `year` and `month` (1..=12).
    pub fn new(year: i32, month: u32) -> Result<Self, MonthError> {
        if !(1..=12).contains(&month) {
            return Err(MonthError::Month(month));
        }
        if !(Self::MIN_YEAR..=Self::MAX_YEAR).contains(&year) {
            return Err(MonthError::Year(year));
        }
        Ok(Self { year, month })
    }

    /// The month that contains `time`; `None` outside the supported years.
    pub fn of(time: DateTime<Utc>) -> Option<Self> {
        Self::new(time.year(), time.month()).ok()
    }

    pub fn year(self) -> i32 {
        self.year
    }

    /// 1..=12.
    pub fn month(self) -> u32 {
        self.month
    }

    /// The first instant of the month.
    pub fn start(self) -> DateTime<Utc> {
        first_instant(self.year, self.month)
    }

    /// The first instant after the month (the start of the next one): months are `[start, end)`.
    pub fn end(self) -> DateTime<Utc> {
        if self.month == 12 {
            first_instant(self.year + 1, 1)
        } else {
            first_instant(self.year, self.month + 1)
        }
    }

    /// The month's length in seconds (2,419,200 for a 28-day February ... 2,678,400 for 31 days).
    pub fn seconds(self) -> u64 {
        // end > start always, so the difference is positive.
        (self.end() - self.start()).num_seconds().unsigned_abs()
    }

    /// The month after this one; `None` after December 9999.
    pub fn next(self) -> Option<Self> {
        if self.month == 12 {
            Self::new(self.year + 1, 1).ok()
        } else {
            Self::new(self.year, self.month + 1).ok()
        }
    }
}

/// Midnight UTC on the first of the month. Valid for every year `Month` accepts (and the year after,
/// for `end`), which chrono supports up to year 262,142.
fn first_instant(year: i32, month: u32) -> DateTime<Utc> {
    NaiveDate::from_ymd_opt(year, month, 1)
        .and_then(|date| date.and_hms_opt(0, 0, 0))
        .map(|naive| naive.and_utc())
        .unwrap_or(DateTime::<Utc>::MAX_UTC)
}

impl fmt::Display for Month {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:04}-{:02}", self.year, self.month)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lengths_follow_the_calendar_and_leap_years() {
        assert_eq!(Month::new(2024, 2).unwrap().seconds(), 29 * 86_400);
        assert_eq!(Month::new(2025, 2).unwrap().seconds(), 28 * 86_400);
        assert_eq!(Month::new(2000, 2).unwrap().seconds(), 29 * 86_400);
        assert_eq!(Month::new(2100, 2).unwrap().seconds(), 28 * 86_400);
        assert_eq!(Month::new(2026, 12).unwrap().seconds(), 31 * 86_400);
        assert_eq!(Month::new(2026, 4).unwrap().seconds(), 30 * 86_400);
    }

    #[test]
    fn december_ends_where_january_starts() {
        let december = Month::new(2025, 12).unwrap();
        let january = december.next().unwrap();
        assert_eq!(january, Month::new(2026, 1).unwrap());
        assert_eq!(december.end(), january.start());
        assert_eq!(Month::of(december.end()), Some(january));
        assert_eq!(
            Month::of(december.end() - chrono::Duration::seconds(1)),
            Some(december)
        );
        assert_eq!(december.to_string(), "2025-12");
        assert!(december < january);
    }

    #[test]
    fn refuses_months_and_years_out_of_range() {
        assert_eq!(Month::new(2026, 13), Err(MonthError::Month(13)));
        assert_eq!(Month::new(2026, 0), Err(MonthError::Month(0)));
        assert_eq!(Month::new(1999, 12), Err(MonthError::Year(1999)));
        assert_eq!(Month::new(9999, 12).unwrap().next(), None);
        assert!(
            MonthError::Month(13)
                .to_string()
                .contains("MeasurementMonth")
        );
    }
}
