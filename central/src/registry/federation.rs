//! Federation-wide posting lists: for each model word, VO and the cloud kind, every offer of every
//! site that has it, as (site rank << 32 | offer position), ascending, so in site-name order and
//! then offer order. A query that names no site intersects these once instead of visiting each
//! of the 1,000 sites' own lists.
//!
//! A push that replaces a site rewrites only the lists that site is in (its old entries out, its
//! new ones in; other lists are shared with the previous index); a push of a new site shifts the
//! ranks after it, and the lists are built again from every site's own lists.

use std::collections::HashMap;
use std::sync::Arc;

use super::index::SiteView;
use super::intersect::intersect;
use super::postings::{Key, Narrowing};

#[derive(Debug, Default, Clone, PartialEq)]
pub struct FederationPostings {
    lists: HashMap<Key, Arc<Vec<u64>>>,
}

fn entry(rank: usize, position: u32) -> u64 {
    ((rank as u64) << 32) | u64::from(position)
}

/// The entry's site rank and offer position.
pub fn split(entry: u64) -> (usize, usize) {
    ((entry >> 32) as usize, (entry & 0xffff_ffff) as usize)
}

impl FederationPostings {
    /// The lists of `sites`, in rank order.
    pub fn build(sites: &[Arc<SiteView>]) -> Self {
        let mut lists: HashMap<Key, Vec<u64>> = HashMap::new();
        for (rank, site) in sites.iter().enumerate() {
            for (key, positions) in site.postings().lists() {
                if positions.is_empty() {
                    continue;
                }
                let list = lists.entry(key).or_default();
                list.extend(positions.iter().map(|&position| entry(rank, position)));
            }
        }
        Self {
            lists: lists
                .into_iter()
                .map(|(key, list)| (key, Arc::new(list)))
                .collect(),
        }
    }

    /// These lists with the site at `rank` now `new` instead of `old`.
    pub fn replaced(&self, rank: usize, old: &SiteView, new: &SiteView) -> Self {
        let mut lists = self.lists.clone();
        let start = entry(rank, 0);
        let end = entry(rank + 1, 0);
        let mut new_lists: HashMap<Key, &[u32]> = new.postings().lists().collect();
        // Each key once: the old site's, then those only the new one has.
        let mut keys: Vec<Key> = old.postings().lists().map(|(key, _)| key).collect();
        keys.extend(
            new_lists
                .keys()
                .filter(|key| !keys.contains(key))
                .cloned()
                .collect::<Vec<_>>(),
        );
        for key in keys {
            let positions = new_lists.remove(&key).unwrap_or_default();
            let previous = lists
                .get(&key)
                .map(|list| list.as_slice())
                .unwrap_or_default();
            let from = previous.partition_point(|&e| e < start);
            let to = previous.partition_point(|&e| e < end);
            if from == to && positions.is_empty() {
                continue;
            }
            let mut list = Vec::with_capacity(previous.len() - (to - from) + positions.len());
            list.extend_from_slice(&previous[..from]);
            list.extend(positions.iter().map(|&position| entry(rank, position)));
            list.extend_from_slice(&previous[to..]);
            if list.is_empty() {
                lists.remove(&key);
            } else {
                lists.insert(key, Arc::new(list));
            }
        }
        Self { lists }
    }

    /// Calls `found` with every entry in all the lists `narrowing` names (which names at least one),
    /// ascending: the shortest list, each entry looked for in the others past the last one found.
    pub fn for_each_candidate(&self, narrowing: &Narrowing, found: impl FnMut(u64)) {
        let mut keys: Vec<Key> = Vec::new();
        if let Some(vo) = narrowing.vo {
            keys.push(Key::Vo(vo.to_owned()));
        }
        if narrowing.cloud_only {
            keys.push(Key::Cloud);
        }
        if let Some(step) = narrowing.gpu_step() {
            keys.push(Key::GpusAtLeast(step));
        }
        for token in narrowing.tokens.unwrap_or_default() {
            keys.push(Key::Token(token.clone()));
        }
        let mut lists: Vec<&[u64]> = Vec::with_capacity(keys.len());
        for key in &keys {
            match self.lists.get(key) {
                Some(list) => lists.push(list),
                None => return,
            }
        }
        lists.sort_by_key(|list| list.len());
        let Some((shortest, others)) = lists.split_first_mut() else {
            return;
        };
        intersect(shortest, others, found);
    }
}
