//! The registry's state and its one door: checks a push, stores it, and swaps in a new index;
//! answers queries from the index. Exported as `registry::Registry`.

use std::sync::{Arc, RwLock};

use chrono::{DateTime, Utc};
use tokio::sync::Mutex;

use super::check::{Checker, Rejection};
use super::index::{Index, SiteView};
use super::store::{DocumentStore, HistoryEntry, Keep, StoreError, StoredDocument};

/// How many documents of each site the history keeps, unless configured.
pub const DEFAULT_KEEP_HISTORY: u32 = 100;
/// The largest document accepted, unless configured: a site with thousands of flavors and node
/// types renders a few megabytes.
pub const DEFAULT_MAX_DOCUMENT_BYTES: usize = 16 * 1024 * 1024;

/// Why a push failed. Either way the site's stored document is unchanged.
#[derive(Debug, thiserror::Error)]
pub enum PushError {
    #[error("{0}")]
    Rejected(#[from] Rejection),
    #[error("{0}")]
    Store(#[from] StoreError),
}

/// What a successful push stored.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct PushReport {
    pub site: String,
    pub entities: usize,
    pub offers: usize,
    pub received_at: DateTime<Utc>,
}

#[derive(Debug)]
pub struct Registry {
    store: DocumentStore,
    checker: Checker,
    keep_history: Keep,
    index: RwLock<Arc<Index>>,
    /// Pushes are applied one at a time, so two sites' swaps cannot lose each other.
    push_lock: Mutex<()>,
    /// Pushes by outcome, for `/metrics` (the API counts each answer it gives).
    pub pushes: super::push_counts::PushCounts,
}

impl Registry {
    /// Opens the registry on `store`, loading every site's latest document into the index. Each
    /// stored document is checked again as a push of it would be now, at the time it was received:
    /// one stored under older rules (a CreationTime in 2200, a Validity of centuries, a physical
    /// count that disagrees with itself) would otherwise stay "fresh" and be offered. One that no
    /// longer passes is left out of the index with a warning naming the site and the reason; it
    /// stays in the site's history, and the site's next push replaces it.
    pub async fn open(
        store: DocumentStore,
        checker: Checker,
        keep_history: impl Into<Keep>,
    ) -> Result<Self, StoreError> {
        let mut index = Index::default();
        for stored in store.latest().await? {
            match checker.check_at(stored.document.as_bytes(), &stored.site, stored.received_at) {
                Ok(parsed) => {
                    index = index.with(SiteView::new(stored.site, stored.received_at, parsed));
                }
                Err(error) => {
                    tracing::warn!(
                        site = %stored.site,
                        received_at = %stored.received_at.to_rfc3339(),
                        "stored registry document fails today's checks; left out until the site pushes again: {error}"
                    );
                }
            }
        }
        Ok(Self {
            store,
            checker,
            keep_history: keep_history.into(),
            index: RwLock::new(Arc::new(index)),
            push_lock: Mutex::new(()),
            pushes: super::push_counts::PushCounts::default(),
        })
    }

    /// The current index; cheap (an `Arc` clone).
    pub fn index(&self) -> Arc<Index> {
        self.index
            .read()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .clone()
    }

    /// How many documents of each site the history keeps.
    pub fn keep_history(&self) -> u32 {
        self.keep_history.documents
    }

    /// `site`'s stored documents, newest first (the first is its current one); empty for a site
    /// that never pushed. Read from the store, not the index: a history is asked for rarely, and
    /// the store is what several instances on one PostgreSQL share, so every instance answers
    /// the same. Refused pushes are never stored, so they are not in it.
    pub async fn history(&self, site: &str) -> Result<Vec<HistoryEntry>, StoreError> {
        self.store.history(site).await
    }

    /// Checks and stores a document sent with `token_site`'s token.
    pub async fn push(
        &self,
        token_site: &str,
        body: &[u8],
        now: DateTime<Utc>,
    ) -> Result<PushReport, PushError> {
        let parsed = self.checker.check_at(body, token_site, now)?;
        let text = String::from_utf8_lossy(body).into_owned();
        let _guard = self.push_lock.lock().await;
        self.store
            .put(
                StoredDocument {
                    site: token_site.to_owned(),
                    received_at: now,
                    document: text,
                },
                self.keep_history,
            )
            .await?;
        let entities = parsed.entities.len();
        let view = SiteView::new(token_site.to_owned(), now, parsed);
        let offers = view.offers.len();
        let next = Arc::new(self.index().with(view));
        *self
            .index
            .write()
            .unwrap_or_else(|poisoned| poisoned.into_inner()) = next;
        Ok(PushReport {
            site: token_site.to_owned(),
            entities,
            offers,
            received_at: now,
        })
    }
}

#[cfg(test)]
mod tests;
