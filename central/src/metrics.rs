//! Counters for `GET /metrics`, in the Prometheus text exposition format (version 0.0.4). Kept per
//! process: each `accelfed serve` behind a load balancer is scraped on its own and Prometheus sums.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::sync::Mutex;

use chrono::{DateTime, Utc};

#[derive(Debug, Default, Clone)]
struct SiteStats {
    ingested: u64,
    rejected: BTreeMap<String, u64>,
    last_contact: Option<DateTime<Utc>>,
    spool_depth: Option<u64>,
}

#[derive(Debug, Default)]
struct State {
    sites: BTreeMap<String, SiteStats>,
    auth_failures: u64,
    batches_failed: u64,
    certificate_not_after: Option<DateTime<Utc>>,
}

/// The service's counters.
#[derive(Debug, Default)]
pub struct Metrics {
    state: Mutex<State>,
}

impl Metrics {
    fn with<T>(&self, f: impl FnOnce(&mut State) -> T) -> T {
        let mut state = match self.state.lock() {
            Ok(state) => state,
            // Counters stay usable even if a holder panicked.
            Err(poisoned) => poisoned.into_inner(),
        };
        f(&mut state)
    }

    /// A site called (authenticated), optionally reporting its spool depth.
    pub fn contact(&self, site: &str, at: DateTime<Utc>, spool_depth: Option<u64>) {
        self.with(|s| {
            let stats = s.sites.entry(site.to_owned()).or_default();
            stats.last_contact = Some(at);
            if spool_depth.is_some() {
                stats.spool_depth = spool_depth;
            }
        });
    }

    /// The outcome of one batch: records the repository holds, and rejections by kind.
    pub fn ingested(&self, site: &str, acknowledged: u64, rejected: &[String]) {
        self.with(|s| {
            let stats = s.sites.entry(site.to_owned()).or_default();
            stats.ingested += acknowledged;
            for kind in rejected {
                *stats.rejected.entry(kind.clone()).or_default() += 1;
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
    pub fn render(&self) -> String {
        self.with(|s| {
            let mut out = String::from(
                "# HELP accelfed_records_ingested_total Usage records the repository holds after a \
                 submit (stored, replaced or unchanged), per site.\n\
                 # TYPE accelfed_records_ingested_total counter\n",
            );
            for (site, stats) in &s.sites {
                let _ = writeln!(
                    out,
                    "accelfed_records_ingested_total{{site=\"{}\"}} {}",
                    escape(site),
                    stats.ingested
                );
            }
            let _ = writeln!(
                out,
                "# HELP accelfed_records_rejected_total Usage records refused, per site and reason.\n\
                 # TYPE accelfed_records_rejected_total counter"
            );
            for (site, stats) in &s.sites {
                for (reason, n) in &stats.rejected {
                    let _ = writeln!(
                        out,
                        "accelfed_records_rejected_total{{site=\"{}\",reason=\"{}\"}} {n}",
                        escape(site),
                        escape(reason)
                    );
                }
            }
            let _ = writeln!(
                out,
                "# HELP accelfed_site_last_contact_timestamp_seconds When the site last called: a batch, an empty one (ship with nothing to send) or a verification (Unix time).\n\
                 # TYPE accelfed_site_last_contact_timestamp_seconds gauge"
            );
            for (site, stats) in &s.sites {
                if let Some(at) = stats.last_contact {
                    let _ = writeln!(
                        out,
                        "accelfed_site_last_contact_timestamp_seconds{{site=\"{}\"}} {}",
                        escape(site),
                        at.timestamp()
                    );
                }
            }
            let _ = writeln!(
                out,
                "# HELP accelfed_site_spool_depth Records waiting in the site's spool, as the site last reported.\n\
                 # TYPE accelfed_site_spool_depth gauge"
            );
            for (site, stats) in &s.sites {
                if let Some(depth) = stats.spool_depth {
                    let _ = writeln!(
                        out,
                        "accelfed_site_spool_depth{{site=\"{}\"}} {depth}",
                        escape(site)
                    );
                }
            }
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
            out
        })
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
    use chrono::TimeZone;

    use super::*;

    #[test]
    fn the_certificate_expiry_is_a_gauge_once_known() {
        let metrics = Metrics::default();
        assert!(!metrics.render().contains("certificate_expiry"));
        metrics.certificate_expires(Utc.with_ymd_and_hms(2027, 1, 1, 0, 0, 0).unwrap());
        assert!(
            metrics
                .render()
                .contains("\naccelfed_tls_certificate_expiry_timestamp_seconds 1798761600\n"),
            "{}",
            metrics.render()
        );
    }

    #[test]
    fn renders_per_site_counters_and_gauges() {
        let metrics = Metrics::default();
        let at = Utc.with_ymd_and_hms(2026, 1, 1, 0, 0, 0).unwrap();
        metrics.contact("CESNET-MCC", at, Some(42));
        metrics.ingested(
            "CESNET-MCC",
            10,
            &["wrong_site".to_owned(), "wrong_site".to_owned()],
        );
        metrics.contact("A\"B", at, None);
        metrics.auth_failure();
        let text = metrics.render();
        for line in [
            "accelfed_records_ingested_total{site=\"CESNET-MCC\"} 10",
            "accelfed_records_rejected_total{site=\"CESNET-MCC\",reason=\"wrong_site\"} 2",
            "accelfed_site_last_contact_timestamp_seconds{site=\"CESNET-MCC\"} 1767225600",
            "accelfed_site_spool_depth{site=\"CESNET-MCC\"} 42",
            "accelfed_records_ingested_total{site=\"A\\\"B\"} 0",
            "accelfed_auth_failures_total 1",
            "# TYPE accelfed_site_spool_depth gauge",
        ] {
            assert!(
                text.lines().any(|l| l == line),
                "missing {line:?} in\n{text}"
            );
        }
    }
}
