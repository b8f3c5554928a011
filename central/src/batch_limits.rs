//! How many records, and how many bytes, one call of a site may hold: `[ingest] max_batch` and
//! `max_message_bytes`, or the site's own in its `[sites.<NAME>]` table (a large site given larger
//! batches, a careless one held to smaller ones). The site is known from its token, checked before
//! the message is read; the message size limit, which tonic applies while reading it (before the
//! service sees the site), is the largest of all sites' byte limits, and a message past its own
//! site's is refused by the service (`resource_exhausted`) before any record is decoded.

use std::collections::HashMap;

use accelfed_schemas::names::SiteName;

use crate::distinct_caps::DistinctCaps;

/// The default bound on one message: a batch of 50,000 records (`ingest.max_batch`'s default) is
/// about 15 MB.
pub const DEFAULT_MAX_MESSAGE_BYTES: usize = 16 * 1024 * 1024;

#[derive(Debug, Clone)]
pub struct BatchLimits {
    default: usize,
    sites: HashMap<SiteName, usize>,
    default_bytes: usize,
    site_bytes: HashMap<SiteName, usize>,
    /// Carried here with the other ingest limits (crate::distinct_caps applies them).
    distinct: DistinctCaps,
}

impl BatchLimits {
    /// `max_batch` for every site.
    pub fn uniform(max_batch: usize) -> Self {
        Self::new(max_batch, [])
    }

    /// `default`, except for the sites listed with their own.
    pub fn new(default: usize, sites: impl IntoIterator<Item = (SiteName, usize)>) -> Self {
        Self {
            default,
            sites: sites.into_iter().collect(),
            default_bytes: DEFAULT_MAX_MESSAGE_BYTES,
            site_bytes: HashMap::new(),
            distinct: DistinctCaps::default(),
        }
    }

    /// The same limits with `distinct` caps on a site's VOs and models a month.
    pub fn with_distinct_caps(self, distinct: DistinctCaps) -> Self {
        Self { distinct, ..self }
    }

    /// The caps on a site's distinct VOs and models a month.
    pub fn distinct_caps(&self) -> DistinctCaps {
        self.distinct
    }

    /// The same record limits with `default` bytes per message, except for the sites listed.
    pub fn with_message_bytes(
        self,
        default: usize,
        sites: impl IntoIterator<Item = (SiteName, usize)>,
    ) -> Self {
        Self {
            default_bytes: default,
            site_bytes: sites.into_iter().collect(),
            ..self
        }
    }

    /// The most bytes one message of `site` may hold.
    pub fn message_bytes_of(&self, site: &SiteName) -> usize {
        self.site_bytes
            .get(site)
            .copied()
            .unwrap_or(self.default_bytes)
    }

    /// The largest byte limit of any site: what tonic lets in before the site is known.
    pub fn largest_message_bytes(&self) -> usize {
        self.site_bytes
            .values()
            .copied()
            .fold(self.default_bytes, usize::max)
    }

    /// The most records one call of `site` may hold.
    pub fn of(&self, site: &SiteName) -> usize {
        self.sites.get(site).copied().unwrap_or(self.default)
    }

    /// The largest limit of any site: what a message must have room for.
    pub fn largest(&self) -> usize {
        self.sites.values().copied().fold(self.default, usize::max)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_site_of_its_own_gets_its_limit_and_the_message_room_follows_the_largest() {
        let big = SiteName::new("BIG").unwrap();
        let small = SiteName::new("SMALL").unwrap();
        let limits = BatchLimits::new(500, [(big.clone(), 5_000), (small.clone(), 50)]);
        assert_eq!(limits.of(&big), 5_000);
        assert_eq!(limits.of(&small), 50);
        assert_eq!(limits.of(&SiteName::new("OTHER").unwrap()), 500);
        assert_eq!(limits.largest(), 5_000);
        assert_eq!(BatchLimits::uniform(7).largest(), 7);
        let bytes = limits.with_message_bytes(1 << 20, [(big.clone(), 32 << 20)]);
        assert_eq!(bytes.message_bytes_of(&big), 32 << 20);
        assert_eq!(bytes.message_bytes_of(&small), 1 << 20);
        assert_eq!(bytes.largest_message_bytes(), 32 << 20);
        assert_eq!(
            BatchLimits::uniform(7).largest_message_bytes(),
            DEFAULT_MAX_MESSAGE_BYTES
        );
    }
}
