//! `GET /metrics`, in the Prometheus text exposition format (version 0.0.4).
//!
//! The per-site series are read from the repository at each scrape (`sites.rs`): a restart of
//! `serve` keeps them, every instance on one database shows the same, and every site of `[sites]`
//! has them, one that never called included (its last contact 0). The counters of this process
//! (refused records, refused calls, failed batches, registry pushes) are kept in memory, as
//! Prometheus counters are: each instance is scraped on its own and `rate()` reads through a
//! restart. Build information and the process's own gauges (`process.rs`) complete it.

mod process;
mod registry;
mod reloads;
mod sites;

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::sync::{Arc, Mutex, OnceLock};

use accelfed_accounting::repository::Repository;
use accelfed_accounting::repository::contacts::Contact;
use chrono::{DateTime, Utc};

use crate::registry::Registry;

#[derive(Debug, Default)]
struct State {
    /// Records refused, per site and reason.
    rejected: BTreeMap<String, BTreeMap<String, u64>>,
    auth_failures: u64,
    batches_failed: u64,
    certificate_not_after: Option<DateTime<Utc>>,
    reloads: reloads::Reloads,
}

/// The service's metrics.
#[derive(Debug, Default)]
pub struct Metrics {
    state: Mutex<State>,
    /// Where the per-site series are kept; none in tests of a part alone.
    repository: Option<Repository>,
    /// The sites of `[sites]` (replaced by a reload).
    configured: Mutex<Vec<String>>,
    /// Set once the registry has started (it starts after the metrics exist).
    registry: OnceLock<Arc<Registry>>,
}

impl Metrics {
    /// Metrics whose per-site series are kept in `repository`, for the sites `configured` and
    /// every site that called.
    pub fn new(repository: Repository, configured: Vec<String>) -> Self {
        Self {
            repository: Some(repository),
            configured: Mutex::new(configured),
            ..Self::default()
        }
    }

    /// The registry whose pushes and documents are rendered too.
    pub fn set_registry(&self, registry: Arc<Registry>) {
        let _ = self.registry.set(registry);
    }

    fn with<T>(&self, f: impl FnOnce(&mut State) -> T) -> T {
        let mut state = match self.state.lock() {
            Ok(state) => state,
            // Counters stay usable even if a holder panicked.
            Err(poisoned) => poisoned.into_inner(),
        };
        f(&mut state)
    }

    /// A site called (authenticated), with what it reported and the records the repository now
    /// holds of the call: written to the repository. A failure is logged, never the call's: its
    /// records matter, not the gauge.
    pub async fn contact(&self, site: &str, at: DateTime<Utc>, contact: Contact) {
        if let Some(repository) = &self.repository
            && let Err(err) = repository.record_contact(site, at, contact).await
        {
            tracing::warn!(
                site,
                "the site's contact was not recorded for /metrics: {}",
                accelfed_schemas::cause::chain(&err)
            );
        }
    }

    /// The sites of `[sites]` after a reload.
    pub fn set_configured(&self, configured: Vec<String>) {
        match self.configured.lock() {
            Ok(mut sites) => *sites = configured,
            Err(poisoned) => *poisoned.into_inner() = configured,
        }
    }

    /// The configuration in force was loaded at start.
    pub fn config_loaded(&self, at: DateTime<Utc>) {
        self.with(|s| s.reloads.started(at));
    }

    /// A reload was put in force (`ok`) or refused.
    pub fn config_reloaded(&self, at: DateTime<Utc>, ok: bool) {
        self.with(|s| s.reloads.reloaded(at, ok));
    }

    /// Records of a batch the repository refused, by kind.
    pub fn rejected(&self, site: &str, rejected: &[String]) {
        self.with(|s| {
            let reasons = s.rejected.entry(site.to_owned()).or_default();
            for kind in rejected {
                *reasons.entry(kind.clone()).or_default() += 1;
            }
        });
    }

    /// The end of the service certificate's validity, for the expiry gauge.
    pub fn certificate_expires(&self, not_after: DateTime<Utc>) {
        self.with(|s| s.certificate_not_after = Some(not_after));
    }

    pub fn auth_failure(&self) {
        self.with(|s| s.auth_failures += 1);
    }

    pub fn batch_failed(&self) {
        self.with(|s| s.batches_failed += 1);
    }

    /// The text exposition.
    pub async fn render(&self) -> String {
        let mut out = format!(
            "# HELP accelfed_build_info The version and commit of this accelfed, always 1.\n\
             # TYPE accelfed_build_info gauge\n\
             accelfed_build_info{{version=\"{}\",commit=\"{}\"}} 1\n",
            escape(crate::build_info::VERSION),
            escape(crate::build_info::COMMIT)
        );
        let contacts = match &self.repository {
            Some(repository) => match repository.site_contacts().await {
                Ok(contacts) => Some(contacts),
                Err(err) => {
                    tracing::warn!(
                        "/metrics: the sites' contacts could not be read: {}",
                        accelfed_schemas::cause::chain(&err)
                    );
                    None
                }
            },
            None => Some(Vec::new()),
        };
        let _ = writeln!(
            out,
            "# HELP accelfed_repository_up 1 when the repository answered this scrape's read of the sites.\n\
             # TYPE accelfed_repository_up gauge\n\
             accelfed_repository_up {}",
            u8::from(contacts.is_some())
        );
        let rejected = self.with(|s| s.rejected.clone());
        let configured = match self.configured.lock() {
            Ok(sites) => sites.clone(),
            Err(poisoned) => poisoned.into_inner().clone(),
        };
        sites::render(
            &mut out,
            &configured,
            &contacts.unwrap_or_default(),
            &rejected,
        );
        self.with(|s| {
            let _ = writeln!(
                out,
                "# HELP accelfed_auth_failures_total Calls refused for a missing or unknown token.\n\
                 # TYPE accelfed_auth_failures_total counter\n\
                 accelfed_auth_failures_total {}\n\
                 # HELP accelfed_batches_failed_total Batches the repository could not store (sites retry).\n\
                 # TYPE accelfed_batches_failed_total counter\n\
                 accelfed_batches_failed_total {}",
                s.auth_failures, s.batches_failed
            );
            if let Some(not_after) = s.certificate_not_after {
                let _ = writeln!(
                    out,
                    "# HELP accelfed_tls_certificate_expiry_timestamp_seconds When the service's TLS certificate expires (Unix time).\n\
                     # TYPE accelfed_tls_certificate_expiry_timestamp_seconds gauge\n\
                     accelfed_tls_certificate_expiry_timestamp_seconds {}",
                    not_after.timestamp()
                );
            }
            s.reloads.render(&mut out);
        });
        if let Some(registry) = self.registry.get() {
            registry::render(&mut out, registry, Utc::now());
        }
        process::render(&mut out);
        out
    }
}

/// Label values escape backslash, double quote and newline.
fn escape(value: &str) -> String {
    value
        .replace('\\', "\\\\")
        .replace('"', "\\\"")
        .replace('\n', "\\n")
}

#[cfg(test)]
mod tests {
    use accelfed_accounting::repository::contacts::{HeldEntry, HeldReport};
    use chrono::TimeZone;

    use super::*;

    fn has(text: &str, line: &str) {
        assert!(
            text.lines().any(|l| l == line),
            "missing {line:?} in\n{text}"
        );
    }

    #[tokio::test]
    async fn the_certificate_expiry_is_a_gauge_once_known() {
        let metrics = Metrics::default();
        assert!(!metrics.render().await.contains("certificate_expiry"));
        metrics.certificate_expires(Utc.with_ymd_and_hms(2027, 1, 1, 0, 0, 0).unwrap());
        has(
            &metrics.render().await,
            "accelfed_tls_certificate_expiry_timestamp_seconds 1798761600",
        );
    }

    #[tokio::test]
    async fn reloads_are_counted_by_result_and_the_last_good_one_is_dated() {
        let metrics = Metrics::default();
        let start = Utc.with_ymd_and_hms(2026, 1, 1, 0, 0, 0).unwrap();
        metrics.config_loaded(start);
        metrics.config_reloaded(start + chrono::Duration::hours(1), true);
        metrics.config_reloaded(start + chrono::Duration::hours(2), false);
        metrics.set_configured(vec!["ADDED".to_owned()]);
        let text = metrics.render().await;
        for line in [
            "accelfed_config_reloads_total{result=\"ok\"} 1",
            "accelfed_config_reloads_total{result=\"refused\"} 1",
            "accelfed_config_last_reload_successful 0",
            // The refused one changed nothing: the one in force is the 01:00 reload.
            "accelfed_config_last_reload_timestamp_seconds 1767229200",
            "accelfed_site_configured{site=\"ADDED\"} 1",
        ] {
            has(&text, line);
        }
    }

    #[tokio::test]
    async fn per_site_series_come_from_the_repository_for_every_configured_site() {
        let dir = tempfile::tempdir().unwrap();
        let location = dir.path().join("repository.sqlite").display().to_string();
        let repository = Repository::open(&location).await.unwrap();
        let configured = vec!["CESNET-MCC".to_owned(), "NEVER-CALLED".to_owned()];
        let metrics = Metrics::new(repository, configured.clone());
        let at = Utc.with_ymd_and_hms(2026, 1, 1, 0, 0, 0).unwrap();
        let since = Utc.with_ymd_and_hms(2025, 12, 1, 0, 0, 0).unwrap();
        metrics
            .contact(
                "CESNET-MCC",
                at,
                Contact {
                    spool_depth: Some(42),
                    received: 10,
                    held: Some(HeldReport {
                        total: 3,
                        records: vec![HeldEntry {
                            record_id: "r1".to_owned(),
                            reason: "over capacity".to_owned(),
                            since,
                        }],
                    }),
                },
            )
            .await;
        metrics.rejected(
            "CESNET-MCC",
            &["wrong_site".to_owned(), "wrong_site".to_owned()],
        );
        // A call without a depth or held records keeps the last reported ones.
        metrics.contact("CESNET-MCC", at, Contact::default()).await;
        metrics.contact("A\"B", at, Contact::default()).await;
        metrics.auth_failure();
        let text = metrics.render().await;
        for line in [
            "accelfed_build_info{version=\"0.1.0\",commit=\"".to_owned()
                + crate::build_info::COMMIT
                + "\"} 1",
            "accelfed_repository_up 1".to_owned(),
            "accelfed_records_ingested_total{site=\"CESNET-MCC\"} 10".to_owned(),
            "accelfed_records_rejected_total{site=\"CESNET-MCC\",reason=\"wrong_site\"} 2"
                .to_owned(),
            "accelfed_site_last_contact_timestamp_seconds{site=\"CESNET-MCC\"} 1767225600"
                .to_owned(),
            "accelfed_site_spool_depth{site=\"CESNET-MCC\"} 42".to_owned(),
            "accelfed_site_held_records{site=\"CESNET-MCC\"} 3".to_owned(),
            "accelfed_records_ingested_total{site=\"A\\\"B\"} 0".to_owned(),
            "accelfed_site_configured{site=\"A\\\"B\"} 0".to_owned(),
            "accelfed_site_configured{site=\"NEVER-CALLED\"} 1".to_owned(),
            "accelfed_site_last_contact_timestamp_seconds{site=\"NEVER-CALLED\"} 0".to_owned(),
            "accelfed_records_ingested_total{site=\"NEVER-CALLED\"} 0".to_owned(),
            "accelfed_auth_failures_total 1".to_owned(),
            "# TYPE accelfed_site_spool_depth gauge".to_owned(),
        ] {
            has(&text, &line);
        }
        assert!(!text.contains("accelfed_site_spool_depth{site=\"NEVER-CALLED\"}"));

        // Another process on the same repository (a restart): the same per-site series.
        let again = Metrics::new(Repository::open(&location).await.unwrap(), configured);
        let text = again.render().await;
        for line in [
            "accelfed_records_ingested_total{site=\"CESNET-MCC\"} 10",
            "accelfed_site_spool_depth{site=\"CESNET-MCC\"} 42",
            "accelfed_site_last_contact_timestamp_seconds{site=\"CESNET-MCC\"} 1767225600",
        ] {
            has(&text, line);
        }
        let held = again
            .repository
            .as_ref()
            .unwrap()
            .held_records()
            .await
            .unwrap();
        assert_eq!(held.len(), 1);
        assert_eq!(held[0].total, 3);
        assert_eq!(held[0].records[0].since, since);
    }
}
