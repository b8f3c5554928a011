//! The per-site series, from the repository (`site_contacts`, see
//! [`accelfed_accounting::repository::contacts`]) so they survive a restart and agree across
//! instances, for every site in `[sites]` (one that never called included) and every site that
//! ever called.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use accelfed_accounting::repository::contacts::SiteContact;

use super::escape;

/// What is rendered of one site.
#[derive(Debug, Default)]
struct Row<'a> {
    configured: bool,
    contact: Option<&'a SiteContact>,
}

/// Appends the per-site series: `configured` are the sites of `[sites]`, `contacts` what the
/// repository holds, `rejected` the records refused since this process started, per site and
/// reason.
pub fn render(
    out: &mut String,
    configured: &[String],
    contacts: &[SiteContact],
    rejected: &BTreeMap<String, BTreeMap<String, u64>>,
) {
    let mut rows: BTreeMap<&str, Row<'_>> = BTreeMap::new();
    for site in configured {
        rows.entry(site).or_default().configured = true;
    }
    for contact in contacts {
        rows.entry(&contact.site).or_default().contact = Some(contact);
    }
    let mut section =
        |name: &str, kind: &str, help: &str, value: &dyn Fn(&Row<'_>) -> Option<String>| {
            let _ = writeln!(out, "# HELP {name} {help}\n# TYPE {name} {kind}");
            for (site, row) in &rows {
                if let Some(value) = value(row) {
                    let _ = writeln!(out, "{name}{{site=\"{}\"}} {value}", escape(site));
                }
            }
        };
    section(
        "accelfed_site_configured",
        "gauge",
        "1 for a site of [sites], 0 for one that called before and is no longer configured.",
        &|row| Some(u8::from(row.configured).to_string()),
    );
    section(
        "accelfed_records_ingested_total",
        "counter",
        "Usage records the repository holds after the site's submits (stored, replaced or unchanged), kept in the repository.",
        &|row| Some(row.contact.map_or(0, |c| c.records_received).to_string()),
    );
    section(
        "accelfed_site_last_contact_timestamp_seconds",
        "gauge",
        "When the site last called: a batch, the empty call that ends every ship run, or a verification (Unix time; 0: never).",
        &|row| {
            Some(
                row.contact
                    .map_or(0, |c| c.last_contact.timestamp())
                    .to_string(),
            )
        },
    );
    section(
        "accelfed_site_spool_depth",
        "gauge",
        "Records waiting in the site's spool, as the site last reported (absent until it does).",
        &|row| {
            row.contact
                .and_then(|c| c.spool_depth)
                .map(|d| d.to_string())
        },
    );
    section(
        "accelfed_site_held_records",
        "gauge",
        "Records the site's capacity check holds back (kept, not shipped), as the site last reported (absent until it does).",
        &|row| {
            row.contact
                .and_then(|c| c.held_count)
                .map(|d| d.to_string())
        },
    );
    let _ = writeln!(
        out,
        "# HELP accelfed_records_rejected_total Usage records refused since this process started, per site and reason.\n\
         # TYPE accelfed_records_rejected_total counter"
    );
    for (site, reasons) in rejected {
        for (reason, n) in reasons {
            let _ = writeln!(
                out,
                "accelfed_records_rejected_total{{site=\"{}\",reason=\"{}\"}} {n}",
                escape(site),
                escape(reason)
            );
        }
    }
}
