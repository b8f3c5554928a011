//! Calendar months (UTC) as the repository keys and partitions them.

use std::fmt;
use std::str::FromStr;

use accelfed_schemas::usage::Month;
use serde::{Serialize, Serializer};

/// Why a month was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PeriodError {
    #[error("month must be 1..=12, got {0}")]
    Month(u32),
    #[error("year must be {min}..={max}, got {0}", min = Month::MIN_YEAR, max = Month::MAX_YEAR)]
    Year(i32),
    #[error("expected a month as YYYY-MM, got {0:?}")]
    Syntax(String),
}

/// One calendar month in UTC, the unit of a usage record.
///
/// Stored as one integer (`year * 12 + month - 1`) so that month ranges are integer ranges, which
/// both an SQLite index and PostgreSQL's range partitions handle best.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Period(i32);

impl Period {
    /// Validates `year` and `month` (1..=12).
    pub fn new(year: i32, month: u32) -> Result<Self, PeriodError> {
        if !(1..=12).contains(&month) {
            return Err(PeriodError::Month(month));
        }
        if !(Month::MIN_YEAR..=Month::MAX_YEAR).contains(&year) {
            return Err(PeriodError::Year(year));
        }
        // month <= 12, so the cast cannot truncate.
        Ok(Self(year * 12 + month as i32 - 1))
    }

    /// The month a stored integer stands for; `None` for values no [`Period::new`] produces.
    pub fn from_index(index: i32) -> Option<Self> {
        (Month::MIN_YEAR * 12..=Month::MAX_YEAR * 12 + 11)
            .contains(&index)
            .then_some(Self(index))
    }

    /// The month that contains `time`.
    pub fn of(time: chrono::DateTime<chrono::Utc>) -> Self {
        use chrono::Datelike;
        Self(time.year() * 12 + time.month0() as i32)
    }

    pub fn index(self) -> i32 {
        self.0
    }

    pub fn year(self) -> i32 {
        self.0.div_euclid(12)
    }

    pub fn month(self) -> u32 {
        // rem_euclid(12) is 0..=11.
        self.0.rem_euclid(12) as u32 + 1
    }

    /// The month after this one.
    pub fn next(self) -> Self {
        Self(self.0 + 1)
    }
}

impl fmt::Display for Period {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:04}-{:02}", self.year(), self.month())
    }
}

impl FromStr for Period {
    type Err = PeriodError;
    fn from_str(s: &str) -> Result<Self, PeriodError> {
        let syntax = || PeriodError::Syntax(s.to_owned());
        let (year, month) = s.split_once('-').ok_or_else(syntax)?;
        if year.len() != 4 || month.is_empty() || month.len() > 2 {
            return Err(syntax());
        }
        let year: i32 = year.parse().map_err(|_| syntax())?;
        let month: u32 = month.parse().map_err(|_| syntax())?;
        Self::new(year, month)
    }
}

impl Serialize for Period {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_through_text_and_index() {
        let p: Period = "2026-01".parse().unwrap();
        assert_eq!((p.year(), p.month()), (2026, 1));
        assert_eq!(p.to_string(), "2026-01");
        assert_eq!(Period::from_index(p.index()), Some(p));
        assert_eq!("2025-12".parse::<Period>().unwrap().next(), p);
    }

    #[test]
    fn refuses_bad_months() {
        assert_eq!(Period::new(2026, 13), Err(PeriodError::Month(13)));
        assert_eq!(Period::new(2026, 0), Err(PeriodError::Month(0)));
        assert!("2026-1x".parse::<Period>().is_err());
        assert!("26-01".parse::<Period>().is_err());
        assert_eq!(Period::from_index(5), None);
    }
}
