//! The meter's one spool transaction: the run's records, the retractions they imply, and the
//! records held back.

use std::collections::BTreeMap;

use accelfed_schemas::usage::{Source, UsageRecord};

use crate::meter::{MeteredResources, retractions};
use crate::spool::{Holds, Spool, SpoolError};

use super::meter::{MeterPlan, Written};

/// Writes `records` and their retractions to the plan's spool; the retractions (or why they
/// could not be worked out, in which case the records are written without them) and what was
/// written. With `keep_manual`, stored manual-usage records are never retracted.
pub(super) fn write(
    plan: &MeterPlan<'_>,
    mut records: Vec<UsageRecord>,
    resources: &MeteredResources,
    holds: &Holds,
    keep_manual: bool,
) -> (
    Result<Vec<UsageRecord>, SpoolError>,
    Result<Written, SpoolError>,
) {
    let mut spool = match Spool::open_with(&plan.spool, plan.accounting.spool_create) {
        Ok(spool) => spool,
        Err(err) => {
            let retracted = Ok(Vec::new());
            return (retracted, Err(err));
        }
    };
    let retracted = retract(&spool, &records, resources, keep_manual);
    if let Ok(retracted) = &retracted {
        records.extend(retracted.iter().cloned());
    }
    let written = spool
        .write_run_holding(&records, holds)
        .map(|summary| Written {
            spool: plan.spool.clone(),
            by_source: by_source(&records),
            summary,
        });
    (retracted, written)
}

/// Identities a metered resource no longer has this month (a renamed model, a split VO) are
/// retracted: sent again with no duration, so no repository keeps their hours.
fn retract(
    spool: &Spool,
    records: &[UsageRecord],
    resources: &MeteredResources,
    keep_manual: bool,
) -> Result<Vec<UsageRecord>, SpoolError> {
    let Some(first) = resources.iter().map(|(_, _, _, month)| *month).min() else {
        return Ok(Vec::new());
    };
    let stored = spool.records_since(first)?;
    let mut retracted = retractions(&stored, records, resources);
    if keep_manual {
        retracted.retain(|record| record.source != Source::Static);
    }
    Ok(retracted)
}

fn by_source(records: &[UsageRecord]) -> BTreeMap<Source, usize> {
    let mut counts = BTreeMap::new();
    for record in records {
        *counts.entry(record.source).or_default() += 1;
    }
    counts
}
