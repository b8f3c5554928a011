//! Rendered pages kept for their next reader: a page is built from the registry's index, the
//! accounting repository and the clock, and at 1,000 sites building it costs tens of
//! milliseconds (BENCHMARKS.md, "Web page") while serving its bytes costs next to nothing. A kept
//! page is served again while the index it was built from is still the registry's (a push, here
//! or on another instance, makes a new one), while the repository's report generation is the
//! same (usage stored since, on any instance, makes a new one), and for at most [`MAX_AGE`],
//! which bounds how far it can lag what neither shows: a site going stale as the clock passes its
//! document's expiry. Its "Generated" line says when it was built.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::body::Bytes;

use crate::registry::index::Index;

/// How long a page is served again at most.
pub const MAX_AGE: Duration = Duration::from_secs(5);
/// Pages kept at most (one per query string); past it the oldest go, so any number of distinct
/// queries costs a bounded amount of memory.
pub const MAX_PAGES: usize = 64;

/// A built page and what it was built from.
#[derive(Debug, Clone)]
pub struct Kept {
    pub body: Bytes,
    pub ok: bool,
    index: Arc<Index>,
    public: bool,
    generation: i64,
    made: Instant,
}

/// The kept pages, by query string.
#[derive(Debug, Default)]
pub struct PageCache {
    pages: Mutex<HashMap<String, Kept>>,
}

impl PageCache {
    /// The page kept for `query`, if it was built from `index` and the repository's report
    /// `generation` with usage `public` as now, and is younger than [`MAX_AGE`].
    pub fn get(
        &self,
        query: &str,
        index: &Arc<Index>,
        public: bool,
        generation: i64,
    ) -> Option<Kept> {
        let pages = self.pages.lock().unwrap_or_else(|p| p.into_inner());
        pages
            .get(query)
            .filter(|kept| {
                Arc::ptr_eq(&kept.index, index)
                    && kept.public == public
                    && kept.generation == generation
                    && kept.made.elapsed() < MAX_AGE
            })
            .cloned()
    }

    /// Keeps `body` for `query`, built from `index` and the report `generation`.
    pub fn put(
        &self,
        query: &str,
        index: Arc<Index>,
        public: bool,
        generation: i64,
        body: Bytes,
        ok: bool,
    ) {
        let mut pages = self.pages.lock().unwrap_or_else(|p| p.into_inner());
        pages.retain(|_, kept| kept.made.elapsed() < MAX_AGE && Arc::ptr_eq(&kept.index, &index));
        if pages.len() >= MAX_PAGES
            && let Some(oldest) = pages
                .iter()
                .min_by_key(|(_, kept)| kept.made)
                .map(|(query, _)| query.clone())
        {
            pages.remove(&oldest);
        }
        pages.insert(
            query.to_owned(),
            Kept {
                body,
                ok,
                index,
                public,
                generation,
                made: Instant::now(),
            },
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_page_is_served_again_only_from_the_same_index_and_while_young() {
        let cache = PageCache::default();
        let index = Arc::new(Index::default());
        cache.put(
            "vo=atlas",
            index.clone(),
            true,
            7,
            Bytes::from("page"),
            true,
        );
        assert_eq!(cache.get("vo=atlas", &index, true, 7).unwrap().body, "page");
        assert!(cache.get("vo=cms", &index, true, 7).is_none());
        assert!(cache.get("vo=atlas", &index, false, 7).is_none());
        // Usage stored since (a newer report generation) is not served from the kept page.
        assert!(cache.get("vo=atlas", &index, true, 8).is_none());
        // A push makes a new index: the page is built again.
        assert!(
            cache
                .get("vo=atlas", &Arc::new(Index::default()), true, 7)
                .is_none()
        );
        for n in 0..MAX_PAGES + 10 {
            cache.put(
                &format!("n={n}"),
                index.clone(),
                true,
                0,
                Bytes::new(),
                true,
            );
        }
        assert_eq!(cache.pages.lock().unwrap().len(), MAX_PAGES);
    }
}
