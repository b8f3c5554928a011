//! The registry's state and its one door: checks a push, stores it, and swaps in a new index;
//! answers queries from the index. Exported as `registry::Registry`.

use std::sync::{Arc, RwLock};

use chrono::{DateTime, Utc};
use tokio::sync::Mutex;

use super::capacity::{CapacityHistory, OverTime, Sample};
use super::check::{Checker, Rejection};
use super::index::{Index, SiteView};
use super::store::{Change, DocumentStore, HistoryEntry, Keep, StoreError, StoredDocument};

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
    /// Each site's GPUs per model as its stored documents gave them (the charts over time).
    capacity: RwLock<CapacityHistory>,
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
            if let Some(view) = view_of(&checker, stored) {
                index = index.with(view);
            }
        }
        let keep_history = keep_history.into();
        let mut capacity = CapacityHistory::new(keep_history.documents);
        // Documents are parsed, not checked again: they were when pushed, and a sample is a few
        // numbers of what the site said then, whatever today's rules.
        for stored in store.history_documents().await? {
            if let Some(sample) = Sample::of_stored(stored.received_at, &stored.document) {
                capacity.record(&stored.site, sample);
            }
        }
        Ok(Self {
            store,
            checker,
            keep_history,
            index: RwLock::new(Arc::new(index)),
            capacity: RwLock::new(capacity),
            push_lock: Mutex::new(()),
            pushes: super::push_counts::PushCounts::default(),
        })
    }

    /// Keeps the index equal to the store's latest documents as other instances push, for as long
    /// as the store announces changes (PostgreSQL; on SQLite this instance is the only writer and
    /// this returns at once). The index is a copy of the store, never truth of its own: every
    /// instance on one database answers from the same documents.
    pub async fn follow(self: Arc<Self>) {
        let Some(mut changes) = self.store.changes() else {
            return;
        };
        while let Some(change) = changes.recv().await {
            if let Err(error) = self.reload(&change).await {
                tracing::warn!(
                    ?change,
                    "registry: cannot read another instance's push: {error}; reading every site"
                );
                // Read whatever was missed once the database answers again.
                loop {
                    tokio::time::sleep(std::time::Duration::from_secs(1)).await;
                    if self.reload(&Change::Everything).await.is_ok() {
                        break;
                    }
                }
            }
        }
    }

    /// Reads what `change` names from the store into the index.
    async fn reload(&self, change: &Change) -> Result<(), StoreError> {
        let _guard = self.push_lock.lock().await;
        let next = match change {
            Change::Site(site) => {
                let Some(stored) = self.store.latest_of(site).await? else {
                    return Ok(());
                };
                match view_of(&self.checker, stored) {
                    Some(view) => {
                        self.record_capacity(&view);
                        self.index().with(view)
                    }
                    None => return Ok(()),
                }
            }
            Change::Everything => {
                let mut index = Index::default();
                // Pushes announced while this instance was not listening are missed from the
                // capacity history except each site's latest.
                for stored in self.store.latest().await? {
                    if let Some(view) = view_of(&self.checker, stored) {
                        self.record_capacity(&view);
                        index = index.with(view);
                    }
                }
                index
            }
        };
        *self
            .index
            .write()
            .unwrap_or_else(|poisoned| poisoned.into_inner()) = Arc::new(next);
        Ok(())
    }

    /// The right to run the LDAP sync while no other instance on the store runs it; `None` while
    /// another does.
    pub async fn lead_ldap_sync(&self) -> Result<Option<super::store::Leadership>, StoreError> {
        self.store.try_lead(super::store::LDAP_SYNC).await
    }

    /// The current index; cheap (an `Arc` clone).
    pub fn index(&self) -> Arc<Index> {
        self.index
            .read()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .clone()
    }

    fn record_capacity(&self, view: &SiteView) {
        let sample = Sample::of(view.received_at, view.expires, &view.offers);
        self.capacity
            .write()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .record(&view.site, sample);
    }

    /// Free and total physical GPUs per model over time, of `site` or of every site
    /// ([`super::capacity`]).
    pub fn capacity_over_time(&self, site: Option<&str>, now: DateTime<Utc>) -> OverTime {
        self.capacity
            .read()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .over_time(site, now)
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
        self.record_capacity(&view);
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

/// A stored document checked again as a push of it would be now, at the time it was received:
/// one stored under older rules (a CreationTime in 2200, a Validity of centuries, a physical
/// count that disagrees with itself) would otherwise stay "fresh" and be offered. One that no
/// longer passes is left out with a warning naming the site and the reason.
fn view_of(checker: &Checker, stored: StoredDocument) -> Option<SiteView> {
    match checker.check_at(stored.document.as_bytes(), &stored.site, stored.received_at) {
        Ok(parsed) => Some(SiteView::new(stored.site, stored.received_at, parsed)),
        Err(error) => {
            tracing::warn!(
                site = %stored.site,
                received_at = %stored.received_at.to_rfc3339(),
                "stored registry document fails today's checks; left out until the site pushes again: {error}"
            );
            None
        }
    }
}

#[cfg(test)]
mod tests;

#[cfg(test)]
mod follow_tests;
