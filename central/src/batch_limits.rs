//! How many records one call of a site may hold: `[ingest] max_batch`, or the site's own
//! `max_batch` in its `[sites.<NAME>]` table (a large site given larger batches, a careless one
//! held to smaller ones). The site is known from its token, checked before the message is read;
//! the message size limit, which tonic applies before that, follows the largest of them.

use std::collections::HashMap;

use accelfed_schemas::names::SiteName;

#[derive(Debug, Clone)]
pub struct BatchLimits {
    default: usize,
    sites: HashMap<SiteName, usize>,
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
        }
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
    }
}
