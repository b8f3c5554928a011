//! What the central knows of each site's calls, kept in the repository rather than in the
//! service's memory, so `/metrics` says the same after a restart of `serve` and on every instance
//! that shares one database: when the site last called, the spool depth and the held records it
//! last reported, and how many records the repository received from it.
//!
//! Written once per authenticated call (a batch, with its count, once stored; a heartbeat; a sync
//! count); a failure to write is the caller's to log, never a reason to refuse the call (the
//! records matter, not the gauge).

use chrono::{DateTime, TimeZone, Utc};

use super::backend::Repository;
use super::error::RepositoryError;

/// The most held records a site reports by id; past it only their number. `accelfed report
/// --check` is read by a person: a hundred ids per site are plenty to find the cause.
pub const MAX_HELD_REPORTED: usize = 100;

/// One site's calls, as the repository holds them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SiteContact {
    pub site: String,
    pub last_contact: DateTime<Utc>,
    /// Records waiting in its spool, as it last reported; `None` if it never did.
    pub spool_depth: Option<u64>,
    /// Records the repository holds after its calls (stored, replaced or unchanged), summed.
    pub records_received: u64,
    /// Records its capacity check holds back, as it last reported; `None` if it never did
    /// (a site older than this report).
    pub held_count: Option<u64>,
}

/// A record a site holds back, as it reported it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HeldEntry {
    pub record_id: String,
    pub reason: String,
    /// When the site first held it.
    pub since: DateTime<Utc>,
}

/// The held records a site reports with a call: all of them counted, the first
/// [`MAX_HELD_REPORTED`] named.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct HeldReport {
    pub total: u64,
    pub records: Vec<HeldEntry>,
}

/// One site's held records as the repository holds them, for `report --check`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SiteHeld {
    pub site: String,
    pub total: u64,
    /// Oldest first; at most [`MAX_HELD_REPORTED`].
    pub records: Vec<HeldEntry>,
}

/// What one call says of the site.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Contact {
    pub spool_depth: Option<u64>,
    /// Records of the call the repository now holds (stored, replaced or unchanged), added to
    /// the site's count.
    pub received: u64,
    /// `None`: the call did not report them (a batch, or a site older than the report); the
    /// stored list stays. `Some`: the list replaces the stored one.
    pub held: Option<HeldReport>,
}

/// Unix seconds as stored, back to a time (out of range reads as the epoch: a gauge, not data).
pub(crate) fn time_of(seconds: i64) -> DateTime<Utc> {
    Utc.timestamp_opt(seconds, 0)
        .single()
        .unwrap_or(DateTime::UNIX_EPOCH)
}

/// A count as stored (a signed 64-bit column), saturated rather than wrapped.
pub(crate) fn stored_count(count: u64) -> i64 {
    i64::try_from(count).unwrap_or(i64::MAX)
}

impl Repository {
    /// Records a call of `site` at `at`, with what it reported.
    pub async fn record_contact(
        &self,
        site: &str,
        at: DateTime<Utc>,
        contact: Contact,
    ) -> Result<(), RepositoryError> {
        let mut held = contact.held;
        if let Some(report) = held.as_mut() {
            report.records.truncate(MAX_HELD_REPORTED);
        }
        match self {
            Self::Sqlite(r) => {
                r.record_contact(
                    site.to_owned(),
                    at,
                    contact.spool_depth,
                    contact.received,
                    held,
                )
                .await
            }
            Self::Postgres(r) => {
                r.record_contact(site, at, contact.spool_depth, contact.received, held)
                    .await
            }
        }
    }

    /// Every site that ever called, by name.
    pub async fn site_contacts(&self) -> Result<Vec<SiteContact>, RepositoryError> {
        match self {
            Self::Sqlite(r) => r.site_contacts().await,
            Self::Postgres(r) => r.site_contacts().await,
        }
    }

    /// The held records of every site that reports any, by site name.
    pub async fn held_records(&self) -> Result<Vec<SiteHeld>, RepositoryError> {
        let contacts = self.site_contacts().await?;
        let mut entries = match self {
            Self::Sqlite(r) => r.held_entries().await?,
            Self::Postgres(r) => r.held_entries().await?,
        };
        let mut sites = Vec::new();
        for contact in contacts {
            let total = contact.held_count.unwrap_or(0);
            let records: Vec<HeldEntry> = entries
                .iter()
                .filter(|(site, _)| *site == contact.site)
                .map(|(_, entry)| entry.clone())
                .collect();
            entries.retain(|(site, _)| *site != contact.site);
            if total > 0 || !records.is_empty() {
                sites.push(SiteHeld {
                    site: contact.site,
                    total: total.max(records.len() as u64),
                    records,
                });
            }
        }
        Ok(sites)
    }
}
