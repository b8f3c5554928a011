//! Everything between a run's observations and the spool, as one pure function: observations are
//! cut into monthly pieces ([`super::records_for`]), the pieces of each holding merged
//! ([`super::merge`]), each record told the installed GPUs of its model, and the result checked
//! against that capacity ([`super::capacity`]). `accelfed meter` calls it and only logs and writes
//! what comes out.

use chrono::{DateTime, Utc};

use accelfed_schemas::gpu::GpuCount;
use accelfed_schemas::usage::{Observation, UsageRecord};

use super::capacity::{Installed, Overrun, check_capacity};
use super::error::MeterError;
use super::merge::{Capped, merge_periods};
use super::records::records_for;

/// What one run of the meter makes of its observations.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Metered {
    /// One record per holding and month, ready for the spool (no two share an id).
    pub records: Vec<UsageRecord>,
    /// Observations that gave no records, and why (each names its resource).
    pub refused: Vec<MeterError>,
    /// Holdings whose overlapping periods summed past their month (capped; see [`super::merge`]).
    pub capped: Vec<Capped>,
    /// (site, model, month)s whose records exceed the installed GPUs.
    pub overruns: Vec<Overrun>,
    /// Every resource the run metered, per month (for [`super::retractions`]).
    pub resources: super::retract::MeteredResources,
}

/// Meters `observations` as of `now` against the site's `installed` GPUs.
pub fn meter(observations: &[Observation], now: DateTime<Utc>, installed: &Installed) -> Metered {
    let mut pieces = Vec::new();
    let mut refused = Vec::new();
    let mut resources = super::retract::MeteredResources::new();
    for observation in observations {
        match records_for(observation, now) {
            Ok(found) => {
                resources.extend(found.iter().map(|record| {
                    (
                        record.site.as_str().to_owned(),
                        record.record_type,
                        record.associated_record.as_str().to_owned(),
                        record.month,
                    )
                }));
                pieces.extend(found);
            }
            Err(err) => refused.push(err),
        }
    }
    let (mut records, capped) = merge_periods(pieces);
    for record in &mut records {
        record.installed = installed
            .get(&record.model)
            .and_then(|gpus| GpuCount::new(gpus).ok());
    }
    let overruns = check_capacity(&records);
    Metered {
        records,
        refused,
        capped,
        overruns,
        resources,
    }
}
