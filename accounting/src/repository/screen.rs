//! Checks each submitted record before anything touches the database: the batch limit, the
//! authenticated site, the record's own validation against the clock, and duplicates within the
//! batch. What passes becomes a storage row; what fails gets its reason at its position.

use std::collections::HashMap;

use accelfed_schemas::names::SiteName;
use chrono::{DateTime, Duration, Utc};

use super::row::RecordRow;
use crate::wire::Submission;
use crate::wire::{Outcome, Rejection};

/// How far a site's clock may run ahead of ours before `last_seen` counts as the future.
const CLOCK_SKEW: Duration = Duration::minutes(5);

/// The records that passed (position, row; ids unique) and the outcome of every record that did
/// not, by position (`None` for those that passed).
pub(crate) struct Screened {
    pub candidates: Vec<(usize, RecordRow)>,
    pub outcomes: Vec<Option<Outcome>>,
}

pub(crate) fn screen(
    site: &SiteName,
    batch: Vec<Submission>,
    now: DateTime<Utc>,
    max_batch: usize,
) -> Screened {
    let mut outcomes = vec![None; batch.len()];
    let mut candidates: Vec<(usize, RecordRow)> = Vec::with_capacity(batch.len().min(max_batch));
    let mut last_position: HashMap<[u8; 32], usize> = HashMap::with_capacity(candidates.capacity());
    for (position, submission) in batch.into_iter().enumerate() {
        let result = if position >= max_batch {
            Err(Rejection::BatchTooLarge { limit: max_batch })
        } else {
            check(site, submission, now)
        };
        match result {
            Ok(row) => {
                last_position.insert(row.record_id, position);
                candidates.push((position, row));
            }
            Err(reason) => outcomes[position] = Some(Outcome::Rejected { reason }),
        }
    }
    // A record sent twice in one batch: the later copy is the newer one.
    candidates.retain(|(position, row)| {
        let kept = last_position
            .get(&row.record_id)
            .copied()
            .unwrap_or(*position);
        if kept != *position {
            outcomes[*position] = Some(Outcome::Rejected {
                reason: Rejection::Duplicate { kept },
            });
        }
        kept == *position
    });
    Screened {
        candidates,
        outcomes,
    }
}

fn check(
    site: &SiteName,
    submission: Submission,
    now: DateTime<Utc>,
) -> Result<RecordRow, Rejection> {
    let record = match submission {
        Submission::Record(record) => record,
        Submission::Invalid(reason) => return Err(reason),
    };
    if record.site != *site {
        return Err(Rejection::WrongSite {
            record: record.site.to_string(),
            authenticated: site.to_string(),
        });
    }
    record.validate(now).map_err(Rejection::from)?;
    if record.last_seen > now + CLOCK_SKEW {
        return Err(Rejection::Future {
            detail: format!("last_seen {} is after now ({now})", record.last_seen),
        });
    }
    RecordRow::from_record(&record)
}

#[cfg(test)]
mod tests {
    use super::*;
    use accelfed_schemas::usage::sample::record;
    use chrono::TimeZone;

    fn now() -> DateTime<Utc> {
        Utc.with_ymd_and_hms(2026, 2, 10, 0, 0, 0).unwrap()
    }

    fn site() -> SiteName {
        SiteName::new("CESNET-MCC").unwrap()
    }

    fn reason(outcome: &Option<Outcome>) -> &Rejection {
        match outcome {
            Some(Outcome::Rejected { reason }) => reason,
            other => panic!("expected a rejection, got {other:?}"),
        }
    }

    #[test]
    fn refuses_per_record_and_keeps_the_rest() {
        let mut other_site = record("vm-2");
        other_site.site = SiteName::new("PRAGUE").unwrap();
        let future = accelfed_schemas::usage::sample::in_month(
            record("vm-3"),
            accelfed_schemas::usage::Month::new(2026, 3).unwrap(),
        );
        let mut active_too_long = record("vm-4");
        active_too_long.active_duration = Some(active_too_long.available_duration + 1);
        let batch = vec![
            record("vm-1").into(),
            other_site.into(),
            future.into(),
            active_too_long.into(),
            crate::wire::encoded::decode_submission(&[0xff, 0xff, 0xff]),
            record("vm-5").into(),
        ];
        let screened = screen(&site(), batch, now(), 100);
        let positions: Vec<usize> = screened.candidates.iter().map(|(p, _)| *p).collect();
        assert_eq!(positions, [0, 5]);
        assert!(
            matches!(reason(&screened.outcomes[1]), Rejection::WrongSite { record, .. } if record == "PRAGUE")
        );
        assert!(matches!(
            reason(&screened.outcomes[2]),
            Rejection::Future { .. }
        ));
        assert!(matches!(
            reason(&screened.outcomes[3]),
            Rejection::BadDuration { .. }
        ));
        assert!(matches!(
            reason(&screened.outcomes[4]),
            Rejection::Malformed { .. }
        ));
    }

    #[test]
    fn limits_the_batch_and_keeps_the_last_duplicate() {
        let mut newer = record("vm-1");
        newer.available_duration += 60;
        let batch = vec![
            record("vm-1").into(),
            newer.clone().into(),
            record("vm-2").into(),
        ];
        let screened = screen(&site(), batch, now(), 2);
        assert_eq!(screened.candidates.len(), 1);
        assert_eq!(screened.candidates[0].0, 1);
        assert_eq!(screened.candidates[0].1.available_seconds, 864_060);
        assert_eq!(
            reason(&screened.outcomes[0]),
            &Rejection::Duplicate { kept: 1 }
        );
        assert_eq!(
            reason(&screened.outcomes[2]),
            &Rejection::BatchTooLarge { limit: 2 }
        );
    }

    #[test]
    fn refuses_last_seen_in_the_future() {
        let mut r = record("vm-1");
        r.month = accelfed_schemas::usage::Month::new(2026, 2).unwrap();
        r.first_seen = Utc.with_ymd_and_hms(2026, 2, 1, 0, 0, 0).unwrap();
        r.last_seen = now() + Duration::hours(1);
        r.available_duration = 3600;
        r.active_duration = None;
        let screened = screen(&site(), vec![r.into()], now(), 10);
        assert!(matches!(
            reason(&screened.outcomes[0]),
            Rejection::Future { .. }
        ));
    }
}
