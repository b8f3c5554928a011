//! Cutting a usage interval at calendar-month boundaries (UTC): the one piece of time arithmetic
//! every meter shares, so OpenStack VMs, Kubernetes pods and Slurm jobs are cut the same way.
//!
//! It lives in `accounting::meter`, not in `schemas::usage`, because it is metering policy (how an
//! open interval is closed at `now`, how sub-second times are counted), not vocabulary: `schemas`
//! keeps the record and its [`Month`], this module decides how observations become records.
//! Providers hand over [`Observation`](accelfed_schemas::usage::Observation)s and never need it.
//!
//! Times are floored to whole seconds before cutting (APEL durations are whole seconds). Month
//! boundaries are whole seconds too, so the pieces add up exactly to the floored interval.

use chrono::{DateTime, Utc};

use accelfed_schemas::usage::Month;

/// The part of an interval inside one calendar month.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MonthPiece {
    pub month: Month,
    /// `last_seen - first_seen`, always > 0.
    pub seconds: u64,
    /// Where the piece starts: the interval's start or the month's first instant.
    pub first_seen: DateTime<Utc>,
    /// Where the piece ends (exclusive): the interval's end, `now`, or the next month's first
    /// instant.
    pub last_seen: DateTime<Utc>,
}

/// Cuts `[start, end)` into per-month pieces, oldest first. `end = None` means still running: the
/// interval is metered up to `now`. An `end` after `now` is clamped to `now` too, so no piece
/// reaches into the future. Empty and reversed intervals give no pieces; times before the
/// federation's epoch (2000) or from year 10,000 on (outside [`Month`]) are left out.
pub fn split_months(
    start: DateTime<Utc>,
    end: Option<DateTime<Utc>>,
    now: DateTime<Utc>,
) -> Vec<MonthPiece> {
    let (Some(first_month), Some(last_month)) = (
        Month::new(Month::MIN_YEAR, 1).ok(),
        Month::new(Month::MAX_YEAR, 12).ok(),
    ) else {
        return Vec::new();
    };
    let start = floor(start).max(first_month.start());
    let end = floor(end.unwrap_or(now).min(now)).min(last_month.end());
    let mut pieces = Vec::new();
    let mut cursor = start;
    while cursor < end {
        let Some(month) = Month::of(cursor) else {
            break;
        };
        let piece_end = month.end().min(end);
        pieces.push(MonthPiece {
            month,
            // piece_end > cursor, so the difference is positive.
            seconds: (piece_end - cursor).num_seconds().unsigned_abs(),
            first_seen: cursor,
            last_seen: piece_end,
        });
        cursor = piece_end;
    }
    pieces
}

/// `time` without its fraction of a second.
fn floor(time: DateTime<Utc>) -> DateTime<Utc> {
    DateTime::from_timestamp(time.timestamp(), 0).unwrap_or(time)
}

#[cfg(test)]
mod tests {
    use chrono::{Duration, TimeZone};
    use proptest::prelude::*;

    use super::*;

    fn at(y: i32, m: u32, d: u32, h: u32, min: u32, s: u32) -> DateTime<Utc> {
        Utc.with_ymd_and_hms(y, m, d, h, min, s).unwrap()
    }

    fn month(y: i32, m: u32) -> Month {
        Month::new(y, m).unwrap()
    }

    #[test]
    fn an_interval_inside_one_month_is_one_piece() {
        let pieces = split_months(
            at(2026, 1, 5, 0, 0, 0),
            Some(at(2026, 1, 6, 0, 0, 0)),
            at(2026, 3, 1, 0, 0, 0),
        );
        assert_eq!(
            pieces,
            vec![MonthPiece {
                month: month(2026, 1),
                seconds: 86_400,
                first_seen: at(2026, 1, 5, 0, 0, 0),
                last_seen: at(2026, 1, 6, 0, 0, 0),
            }]
        );
    }

    #[test]
    fn a_leap_february_has_29_days_and_a_year_boundary_is_cut() {
        let now = at(2026, 1, 1, 0, 0, 0);
        let pieces = split_months(at(2024, 1, 31, 0, 0, 0), Some(at(2024, 3, 2, 0, 0, 0)), now);
        let shape: Vec<(Month, u64)> = pieces.iter().map(|p| (p.month, p.seconds)).collect();
        assert_eq!(
            shape,
            vec![
                (month(2024, 1), 86_400),
                (month(2024, 2), 29 * 86_400),
                (month(2024, 3), 86_400)
            ]
        );
        let pieces = split_months(
            at(2024, 12, 31, 23, 59, 59),
            Some(at(2025, 1, 1, 0, 0, 1)),
            now,
        );
        let shape: Vec<(Month, u64)> = pieces.iter().map(|p| (p.month, p.seconds)).collect();
        assert_eq!(shape, vec![(month(2024, 12), 1), (month(2025, 1), 1)]);
    }

    #[test]
    fn a_running_interval_and_a_future_end_stop_at_now() {
        let now = at(2026, 2, 10, 12, 0, 0);
        let start = at(2026, 1, 31, 12, 0, 0);
        for end in [None, Some(now + Duration::days(40))] {
            let pieces = split_months(start, end, now);
            assert_eq!(pieces.len(), 2);
            assert_eq!(pieces[1].last_seen, now);
            assert_eq!(pieces[0].seconds + pieces[1].seconds, 10 * 86_400);
        }
        assert!(split_months(now + Duration::seconds(1), None, now).is_empty());
        assert!(split_months(start, Some(start), now).is_empty());
        assert!(split_months(start, Some(start - Duration::days(1)), now).is_empty());
    }

    #[test]
    fn fractions_of_a_second_are_floored_at_both_ends() {
        let start = at(2026, 1, 1, 0, 0, 0) + Duration::milliseconds(900);
        let end = at(2026, 1, 1, 0, 0, 2) + Duration::milliseconds(100);
        let pieces = split_months(start, Some(end), at(2026, 2, 1, 0, 0, 0));
        assert_eq!(pieces[0].seconds, 2);
        assert!(split_months(start, Some(start + Duration::milliseconds(50)), end).is_empty());
    }

    /// Seconds from 2019 to 2031: crosses leap years 2020, 2024 and 2028.
    fn instant() -> impl Strategy<Value = DateTime<Utc>> {
        (1_546_300_800i64..1_924_992_000).prop_map(|s| DateTime::from_timestamp(s, 0).unwrap())
    }

    proptest! {
        #[test]
        fn pieces_tile_the_interval_up_to_now(
            start in instant(),
            length in 0i64..(3 * 366 * 86_400),
            open in any::<bool>(),
            now in instant(),
        ) {
            let end = (!open).then(|| start + Duration::seconds(length));
            let pieces = split_months(start, end, now);
            let stop = end.unwrap_or(now).min(now);
            let expected = (stop - start).num_seconds().max(0);
            let total: u64 = pieces.iter().map(|p| p.seconds).sum();
            prop_assert_eq!(total as i64, expected);
            for piece in &pieces {
                prop_assert!(piece.seconds > 0);
                prop_assert_eq!((piece.last_seen - piece.first_seen).num_seconds() as u64, piece.seconds);
                prop_assert!(piece.month.start() <= piece.first_seen);
                prop_assert!(piece.last_seen <= piece.month.end());
                prop_assert!(piece.seconds <= piece.month.seconds());
                prop_assert!(piece.month.start() <= now, "no piece in the future");
                prop_assert!(piece.last_seen <= now);
            }
            for pair in pieces.windows(2) {
                prop_assert_eq!(pair[0].last_seen, pair[1].first_seen);
                prop_assert_eq!(pair[0].month.next(), Some(pair[1].month));
                prop_assert_eq!(pair[0].last_seen, pair[0].month.end());
            }
            if let (Some(first), Some(last)) = (pieces.first(), pieces.last()) {
                prop_assert_eq!(first.first_seen, start);
                prop_assert_eq!(last.last_seen, stop);
            }
        }

        #[test]
        fn a_month_boundary_at_any_second_splits_exactly_there(
            boundary_month in 0i32..(12 * 12),
            before in 1i64..(28 * 86_400),
            after in 1i64..(28 * 86_400),
        ) {
            let m = Month::new(2019 + boundary_month / 12, (boundary_month % 12) as u32 + 1).unwrap();
            let boundary = m.end();
            let now = boundary + Duration::days(400);
            let pieces = split_months(
                boundary - Duration::seconds(before),
                Some(boundary + Duration::seconds(after)),
                now,
            );
            prop_assert_eq!(pieces.len(), 2);
            prop_assert_eq!(pieces[0].month, m);
            prop_assert_eq!(pieces[0].seconds as i64, before);
            prop_assert_eq!(pieces[1].seconds as i64, after);
            prop_assert_eq!(pieces[1].first_seen, boundary);
        }
    }
}
