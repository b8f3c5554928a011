//! Observation -> monthly usage records: the split of [`super::split`] plus the observation's facts.
//!
//! Records carry absolute values for their month. Metering the same running VM again later gives
//! the same ids with larger durations, which replace the earlier versions downstream.

use chrono::{DateTime, Utc};

use accelfed_schemas::usage::{Observation, UsageRecord};

use super::error::MeterError;
use super::split::split_months;

/// The usage records of `observation`, one per calendar month it overlaps up to `now`, oldest first.
/// A zero count holds no GPU and gives no records. ActiveDuration is the observation's utilisation
/// times each month's AvailableDuration, rounded down (never more than available). Every record is
/// validated against `now` before it is returned.
///
/// The observation's energy is shared out across its months by seconds held: a source that knows
/// each month's energy exactly (the node agent's monthly buckets) hands the meter one observation
/// per month, so the share is then the whole.
pub fn records_for(
    observation: &Observation,
    now: DateTime<Utc>,
) -> Result<Vec<UsageRecord>, MeterError> {
    if observation.count.get() <= 0.0 {
        return Ok(Vec::new());
    }
    if let Some(value) = observation.utilisation
        && !(0.0..=1.0).contains(&value)
    {
        return Err(MeterError::Utilisation {
            site: observation.site.to_string(),
            resource: observation.resource.to_string(),
            value,
        });
    }
    if let Some(value) = observation.energy_wh
        && !(value.is_finite() && value >= 0.0)
    {
        return Err(MeterError::Energy {
            site: observation.site.to_string(),
            resource: observation.resource.to_string(),
            value,
        });
    }
    let pieces = split_months(observation.start, observation.end, now);
    let total_seconds: u64 = pieces.iter().map(|piece| piece.seconds).sum();
    pieces
        .into_iter()
        .map(|piece| {
            let record = UsageRecord {
                month: piece.month,
                record_type: observation.record_type,
                associated_record: observation.resource.clone(),
                global_user_name: observation.user.clone(),
                fqan: observation.fqan.clone(),
                site: observation.site.clone(),
                count: observation.count,
                cores: observation.cores,
                // A millionth of a second's tolerance keeps a fraction made from whole seconds
                // (the agents' held minus idle) at its seconds; capped, never above available.
                active_duration: observation.utilisation.map(|value| {
                    ((piece.seconds as f64 * value + 1e-6).floor() as u64).min(piece.seconds)
                }),
                available_duration: piece.seconds,
                // A piece whose utilisation is known says its idle time through ActiveDuration;
                // known idle beside unknown activity arises only where pieces merge (`merge.rs`).
                idle_duration: None,
                // total_seconds >= piece.seconds > 0 wherever there is a piece.
                energy_wh: observation
                    .energy_wh
                    .map(|energy| energy * piece.seconds as f64 / total_seconds as f64),
                benchmark: observation.benchmark.clone(),
                accelerator_type: observation.accelerator_type,
                model: observation.model.clone(),
                sharing: observation.sharing.clone(),
                installed: None,
                source: observation.source,
                vo: observation.vo.clone(),
                first_seen: piece.first_seen,
                last_seen: piece.last_seen,
            };
            record.validate(now)?;
            Ok(record)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use chrono::{Duration, TimeZone};
    use proptest::prelude::*;

    use accelfed_schemas::gpu::{AcceleratorType, GpuCount, GpuModel, Sharing};
    use accelfed_schemas::names::{LocalId, SiteName, VoName};
    use accelfed_schemas::usage::{RecordType, Source};

    use super::*;

    fn observation(start: DateTime<Utc>, end: Option<DateTime<Utc>>) -> Observation {
        Observation {
            site: SiteName::new("CESNET-MCC").unwrap(),
            record_type: RecordType::Cloud,
            resource: LocalId::new("0f3c2a1e-7d1b-4b4e-9a57-1c2d3e4f5a6b").unwrap(),
            model: GpuModel::new("NVIDIA A100-SXM4-80GB").unwrap(),
            accelerator_type: AcceleratorType::Gpu,
            count: GpuCount::new(0.5).unwrap(),
            sharing: Sharing::Whole,
            vo: Some(VoName::new("vo.example.org").unwrap()),
            fqan: None,
            user: None,
            source: Source::Openstack,
            cores: Some(4),
            benchmark: None,
            utilisation: Some(0.5),
            energy_wh: None,
            agent_id: None,
            start,
            end,
        }
    }

    fn at(y: i32, m: u32, d: u32) -> DateTime<Utc> {
        Utc.with_ymd_and_hms(y, m, d, 0, 0, 0).unwrap()
    }

    #[test]
    fn an_interval_inside_one_month_gives_one_record() {
        let obs = observation(at(2026, 1, 5), Some(at(2026, 1, 15)));
        let records = records_for(&obs, at(2026, 2, 1)).unwrap();
        assert_eq!(records.len(), 1);
        let r = &records[0];
        assert_eq!((r.month.year(), r.month.month()), (2026, 1));
        assert_eq!(r.available_duration, 10 * 86_400);
        assert_eq!(r.active_duration, Some(5 * 86_400));
        assert_eq!(r.gpu_seconds(), 5.0 * 86_400.0);
        assert_eq!(r.associated_record, obs.resource);
    }

    #[test]
    fn a_running_vm_gets_one_record_per_month_with_stable_ids() {
        let obs = observation(at(2025, 12, 20), None);
        let early = records_for(&obs, at(2026, 1, 10)).unwrap();
        let later = records_for(&obs, at(2026, 1, 20)).unwrap();
        assert_eq!(early.len(), 2);
        assert_eq!(later.len(), 2);
        assert_eq!(early[0], later[0], "a closed month does not change");
        assert_eq!(
            early[1].id(),
            later[1].id(),
            "the growing month keeps its id"
        );
        assert_eq!(
            later[1].available_duration - early[1].available_duration,
            10 * 86_400
        );
    }

    #[test]
    fn zero_counts_give_nothing_and_bad_utilisation_is_refused() {
        let mut obs = observation(at(2026, 1, 5), None);
        obs.count = GpuCount::ZERO;
        assert!(records_for(&obs, at(2026, 2, 1)).unwrap().is_empty());
        let mut obs = observation(at(2026, 1, 5), None);
        obs.utilisation = Some(1.5);
        let err = records_for(&obs, at(2026, 2, 1)).unwrap_err().to_string();
        assert!(err.contains("0f3c2a1e") && err.contains("1.5"), "{err}");
    }

    #[test]
    fn energy_is_shared_out_across_months_by_seconds() {
        // 10 days in January, 5 in February: two thirds and one third of 1500 Wh.
        let mut obs = observation(at(2026, 1, 22), Some(at(2026, 2, 6)));
        obs.energy_wh = Some(1500.0);
        let records = records_for(&obs, at(2026, 3, 1)).unwrap();
        let energy: Vec<_> = records.iter().map(|r| r.energy_wh).collect();
        assert_eq!(energy, [Some(1000.0), Some(500.0)]);
        obs.energy_wh = None;
        let records = records_for(&obs, at(2026, 3, 1)).unwrap();
        assert!(
            records.iter().all(|r| r.energy_wh.is_none()),
            "absent, not 0"
        );
        obs.energy_wh = Some(f64::NAN);
        let err = records_for(&obs, at(2026, 3, 1)).unwrap_err().to_string();
        assert!(err.contains("energy") && err.contains("NaN"), "{err}");
    }

    proptest! {
        #[test]
        fn records_are_valid_and_add_up(
            offset in 0i64..(2 * 366 * 86_400),
            length in 1i64..(400 * 86_400),
            utilisation in 0.0f64..=1.0,
            running in any::<bool>(),
        ) {
            let start = at(2024, 1, 1) + Duration::seconds(offset);
            let now = at(2026, 6, 1);
            let end = (!running).then(|| start + Duration::seconds(length));
            let mut obs = observation(start, end);
            obs.utilisation = Some(utilisation);
            let records = records_for(&obs, now).unwrap();
            let total: u64 = records.iter().map(|r| r.available_duration).sum();
            let stop = end.unwrap_or(now).min(now);
            prop_assert_eq!(total as i64, (stop - start).num_seconds());
            let mut ids: Vec<_> = records.iter().map(UsageRecord::id).collect();
            ids.dedup();
            prop_assert_eq!(ids.len(), records.len(), "one id per month");
            for r in &records {
                prop_assert!(r.validate(now).is_ok());
                prop_assert!(r.active_duration.unwrap() <= r.available_duration);
            }
        }
    }
}
