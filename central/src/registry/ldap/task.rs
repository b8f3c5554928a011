//! The sync as `accelfed serve` runs it: after each accepted push and every `interval_s`.
//!
//! A push swaps in a new [`Index`]; the task notices by comparing the index it last synced with
//! the current one (a pointer comparison, once a second), so the push path neither waits for LDAP
//! nor knows about it. Pushes that arrive while a sync runs are covered by the next round, which
//! always syncs the latest index: a burst of pushes costs one or two syncs, not one each. Of the
//! instances sharing one PostgreSQL database, one syncs at a time (an advisory lock, see
//! [`crate::registry::store::Leadership`]).

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use tokio::time::Instant;

use super::round::LdapSync;
use crate::registry::Registry;
use crate::registry::index::Index;

/// How often the task looks for a new index.
const POLL: Duration = Duration::from_secs(1);

/// Syncs until `shutdown` completes. Failures are logged and retried on the next round (the next
/// push or the interval); the registry keeps serving either way.
pub async fn run(sync: LdapSync, registry: Arc<Registry>, shutdown: impl Future<Output = ()>) {
    let interval = (sync.interval_s() > 0).then(|| Duration::from_secs(sync.interval_s()));
    let mut synced: Option<Arc<Index>> = None;
    let mut last_attempt = Instant::now();
    let mut failed = false;
    tokio::pin!(shutdown);
    loop {
        let index = registry.index();
        let pushed = synced.as_ref().is_none_or(|old| !Arc::ptr_eq(old, &index));
        let due = interval.is_some_and(|every| last_attempt.elapsed() >= every);
        // A failed round is retried at most once per interval (or per 30 s without one), so a
        // server that is down does not get a connection a second.
        let retry_wait = interval.unwrap_or(Duration::from_secs(30));
        if (pushed && !(failed && last_attempt.elapsed() < retry_wait)) || due {
            last_attempt = Instant::now();
            // One instance of those sharing a database syncs at a time; the others leave this
            // round to it (their indexes hold the same documents: they follow the store).
            failed = match registry.lead_ldap_sync().await {
                Ok(Some(_leading)) => !round(&sync, &index).await,
                Ok(None) => {
                    tracing::debug!(
                        "LDAP sync: another instance is syncing; leaving it this round"
                    );
                    false
                }
                Err(error) => {
                    tracing::warn!(%error, "LDAP sync: cannot ask the database who syncs; retrying later");
                    true
                }
            };
            if !failed {
                synced = Some(index);
            }
        }
        tokio::select! {
            () = &mut shutdown => return,
            () = tokio::time::sleep(POLL) => {}
        }
    }
}

/// One sync of `index`, logged; whether it went through.
async fn round(sync: &LdapSync, index: &Index) -> bool {
    let documents: Vec<_> = index
        .sites()
        .iter()
        .map(|site| site.document.as_ref())
        .collect();
    match sync.sync(documents).await {
        Ok(report) => {
            let done = report.applied.done;
            if report.applied.failed.is_empty() {
                tracing::info!(
                    url = sync.url(),
                    entries = report.entries,
                    adds = done.adds,
                    modifies = done.modifies,
                    deletes = done.deletes,
                    "LDAP sync done"
                );
            } else {
                tracing::warn!(
                    url = sync.url(),
                    refused = report.applied.failed.len(),
                    first = %report.applied.failed[0],
                    "LDAP sync: the server refused some operations; they are planned again next round"
                );
            }
            true
        }
        Err(error) => {
            tracing::warn!(%error, "LDAP sync failed; retrying later");
            false
        }
    }
}
