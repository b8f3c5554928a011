//! Capacity and occupancy over time per GPU model, from the registry's history: each stored
//! document is reduced to one sample per site (free and total physical GPUs per model, each pool
//! counted once, as [`super::web::free`] counts them now), and the federation at an instant is
//! every site's latest sample at or before it. A site whose document at that instant had expired
//! (stale) is not in the totals: its GPUs are given apart (`stale_total`), as on the page's
//! "free now" cards.
//!
//! Samples are kept in memory beside the index, as small as a few numbers per model: the
//! documents themselves are megabytes and stay in the store. They are read from the store's
//! history at start, added on every push and on every push another instance announces, and
//! bounded like the history (`keep_history` per site).

use std::collections::BTreeMap;

use chrono::{DateTime, TimeDelta, Utc};

use accelfed_schemas::glue::from_json::{self, ParsedDocument};
use accelfed_schemas::gpu::GpuCount;
use accelfed_schemas::offer::{self, Offer};

use super::web::free::{Seen, free_gpus};

/// The most instants a chart draws: past it, instants are spaced evenly from the first sample to
/// now, so a thousand sites' hundred pushes each cost a hundred columns, not a hundred thousand.
pub const MAX_POINTS: usize = 120;

/// One site's GPUs as one of its documents gave them.
#[derive(Debug, Clone, PartialEq)]
pub struct Sample {
    pub received_at: DateTime<Utc>,
    /// When the document went stale (its first entity's expiry).
    pub expires: DateTime<Utc>,
    /// Free and total physical GPUs per model.
    pub models: BTreeMap<String, (GpuCount, GpuCount)>,
}

impl Sample {
    /// The sample of a document whose offers are `offers`.
    pub fn of(received_at: DateTime<Utc>, expires: DateTime<Utc>, offers: &[Offer]) -> Self {
        // One site's pools, whatever the document's freshness: that is judged per instant.
        let counted = free_gpus(offers.iter().map(|offer| Seen {
            offer,
            fresh: true,
            free_physical: offer.free_physical,
        }));
        Self {
            received_at,
            expires,
            models: counted
                .federation
                .into_iter()
                .map(|(model, count)| (model, (count.free, count.total)))
                .collect(),
        }
    }
}

impl Sample {
    /// The sample of a stored document's text, as its push read it; `None` if it no longer
    /// parses (it was checked when pushed, so a bug or a hand-edited database).
    pub fn of_stored(received_at: DateTime<Utc>, text: &str) -> Option<Self> {
        let document = from_json::parse(text.as_bytes()).ok()?;
        Some(Self::of_document(received_at, &document))
    }

    /// The sample of a parsed document.
    pub fn of_document(received_at: DateTime<Utc>, document: &ParsedDocument) -> Self {
        let expires = expiry(document);
        let (offers, _) = offer::offers_and_skipped(&document.entities, &document.stamps);
        Self::of(received_at, expires, &offers)
    }
}

/// When the first of `document`'s entities stops being fresh: its offers' expiry in the index,
/// and its sample's here.
pub fn expiry(document: &ParsedDocument) -> DateTime<Utc> {
    document
        .stamps
        .iter()
        .map(|stamp| stamp.expires())
        .min()
        .unwrap_or(DateTime::<Utc>::MAX_UTC)
}

/// The federation's GPUs of one model at one instant.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Level {
    /// Free physical GPUs at fresh sites.
    pub free: GpuCount,
    /// Physical GPUs at fresh sites.
    pub total: GpuCount,
    /// Physical GPUs at sites whose document had gone stale: not in `total`.
    pub stale_total: GpuCount,
}

impl Level {
    /// GPUs in use at fresh sites.
    pub fn used(&self) -> GpuCount {
        self.total.checked_sub(self.free).unwrap_or(GpuCount::ZERO)
    }
}

/// What the charts draw: the instants, and per model its level at each.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct OverTime {
    pub instants: Vec<DateTime<Utc>>,
    pub models: BTreeMap<String, Vec<Level>>,
}

/// Every site's samples, oldest first.
#[derive(Debug, Clone, Default)]
pub struct CapacityHistory {
    sites: BTreeMap<String, Vec<Sample>>,
    keep: usize,
}

impl CapacityHistory {
    /// An empty history keeping `keep` samples per site (the store's `keep_history`).
    pub fn new(keep: u32) -> Self {
        Self {
            sites: BTreeMap::new(),
            keep: usize::try_from(keep.max(1)).unwrap_or(usize::MAX),
        }
    }

    /// Adds `sample` of `site`, unless the site already has it or a later one (an instance hears
    /// its own pushes announced too).
    pub fn record(&mut self, site: &str, sample: Sample) {
        let samples = self.sites.entry(site.to_owned()).or_default();
        if samples
            .last()
            .is_some_and(|last| last.received_at >= sample.received_at)
        {
            return;
        }
        samples.push(sample);
        let excess = samples.len().saturating_sub(self.keep);
        samples.drain(..excess);
    }

    /// The levels per model from the first sample to `now`, of `site` alone or of every site.
    pub fn over_time(&self, site: Option<&str>, now: DateTime<Utc>) -> OverTime {
        let sites: Vec<&Vec<Sample>> = match site {
            Some(site) => self.sites.get(site).into_iter().collect(),
            None => self.sites.values().collect(),
        };
        let instants = instants(&sites, now);
        // Each model's row of levels, found once per sample rather than once per instant: a
        // thousand sites at 120 instants are 120,000 steps, which must not each look a name up.
        let mut names: BTreeMap<&str, usize> = BTreeMap::new();
        let mut rows: Vec<Vec<Level>> = Vec::new();
        for samples in &sites {
            // Every site's samples and every instant are in time order: one walk through both.
            let mut next = 0;
            let mut counts: Vec<(usize, GpuCount, GpuCount)> = Vec::new();
            for (position, at) in instants.iter().enumerate() {
                let before = next;
                while next < samples.len() && samples[next].received_at <= *at {
                    next += 1;
                }
                let Some(sample) = next.checked_sub(1).map(|i| &samples[i]) else {
                    continue;
                };
                if next != before || position == 0 {
                    counts.clear();
                    for (model, (free, total)) in &sample.models {
                        let row = *names.entry(model.as_str()).or_insert_with(|| {
                            rows.push(vec![Level::default(); instants.len()]);
                            rows.len() - 1
                        });
                        counts.push((row, *free, *total));
                    }
                }
                let fresh = *at < sample.expires;
                for (row, free, total) in &counts {
                    let level = &mut rows[*row][position];
                    if fresh {
                        level.free = level.free + *free;
                        level.total = level.total + *total;
                    } else {
                        level.stale_total = level.stale_total + *total;
                    }
                }
            }
        }
        let models = names
            .into_iter()
            .map(|(name, row)| (name.to_owned(), std::mem::take(&mut rows[row])))
            .collect();
        OverTime { instants, models }
    }
}

/// The instants to draw: every instant a level can change (a sample arriving, a document going
/// stale) up to `now`, and `now`; evenly spaced ones past [`MAX_POINTS`].
fn instants(sites: &[&Vec<Sample>], now: DateTime<Utc>) -> Vec<DateTime<Utc>> {
    // From the first sample received: a document gathered long before it was pushed may have
    // expired before then, and nothing was known before it arrived.
    let Some(start) = sites
        .iter()
        .filter_map(|samples| samples.first())
        .map(|s| s.received_at)
        .min()
    else {
        return Vec::new();
    };
    let mut changes: Vec<DateTime<Utc>> = sites
        .iter()
        .flat_map(|samples| samples.iter())
        .flat_map(|sample| [sample.received_at, sample.expires])
        .filter(|at| start <= *at && *at <= now)
        .collect();
    changes.push(now);
    changes.sort_unstable();
    changes.dedup();
    if changes.len() <= MAX_POINTS {
        return changes;
    }
    let first = changes[0];
    let span = (now - first).num_milliseconds();
    let last = i64::try_from(MAX_POINTS - 1).unwrap_or(1);
    (0..=last)
        .map(|i| first + TimeDelta::milliseconds(span * i / last))
        .collect()
}

#[cfg(test)]
mod tests;
