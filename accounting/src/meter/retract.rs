//! Renames do not double count: when a resource's records of a month get new identities (the
//! configuration now maps it to another model name, or a second VO appeared and the identity was
//! split), the records under its old identities are retracted instead of being left beside the
//! new ones.
//!
//! Neither the repository nor EGI's APEL can delete a record, but both replace one sent again
//! under the same identity. A retraction is therefore the old record sent once more with
//! AvailableDuration (and ActiveDuration) 0: it keeps its id, so it replaces what each repository
//! holds, and it weighs 0 GPU-hours everywhere. It stays in the spool, so later runs produce the
//! same retraction again (unchanged, nothing re-sent).
//!
//! Only what the run proves stale is retracted: a stored record whose resource (the plain
//! AssociatedRecord, or one with the `@<VO>`/`#<sharing>` suffix of [`super::merge`]) was metered
//! in the same month, by this run, under other ids. A resource the run did not see at all (a
//! deleted VM no longer listed, a backend that failed) keeps its records.

use std::collections::BTreeSet;

use accelfed_schemas::usage::{Month, RecordType, UsageRecord};

/// A resource metered in a month: site, kind, resource (as the meter names it, before any
/// suffix) and month.
pub type MeteredResources = BTreeSet<(String, RecordType, String, Month)>;

/// The retractions of `stored` records that `metered` resources no longer have (see the module
/// documentation); `current` are the run's records.
pub fn retractions(
    stored: &[UsageRecord],
    current: &[UsageRecord],
    metered: &MeteredResources,
) -> Vec<UsageRecord> {
    let ids: BTreeSet<_> = current.iter().map(UsageRecord::id).collect();
    stored
        .iter()
        .filter(|record| !ids.contains(&record.id()))
        .filter(|record| {
            resource_candidates(record.associated_record.as_str())
                .into_iter()
                .any(|resource| {
                    metered.contains(&(
                        record.site.as_str().to_owned(),
                        record.record_type,
                        resource.to_owned(),
                        record.month,
                    ))
                })
        })
        .map(|record| {
            let mut retracted = record.clone();
            retracted.available_duration = 0;
            retracted.active_duration = record.active_duration.map(|_| 0);
            retracted.energy_wh = record.energy_wh.map(|_| 0.0);
            retracted.idle_duration = record.idle_duration.map(|_| 0);
            retracted
        })
        .collect()
}

/// The resources a stored AssociatedRecord may stand for: itself, and what precedes each `@` or
/// `#` in it (the suffixes [`super::merge`] adds; a resource whose own name holds one of these
/// characters is still found as itself).
fn resource_candidates(associated_record: &str) -> Vec<&str> {
    let mut candidates = vec![associated_record];
    for (at, c) in associated_record.char_indices() {
        if (c == '@' || c == '#') && at > 0 {
            candidates.push(&associated_record[..at]);
        }
    }
    candidates
}
