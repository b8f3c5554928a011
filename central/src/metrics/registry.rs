//! The registry's series: pushes by outcome (this process's), and the sites' documents as the
//! index holds them (loaded from the store at start, so they survive a restart).

use std::fmt::Write as _;

use chrono::{DateTime, Utc};

use super::escape;
use crate::registry::Registry;

/// Appends the registry's series to `out`.
pub fn render(out: &mut String, registry: &Registry, now: DateTime<Utc>) {
    let (accepted, refused) = registry.pushes.snapshot();
    let _ = writeln!(
        out,
        "# HELP accelfed_registry_pushes_accepted_total Registry documents accepted since this process started.\n\
         # TYPE accelfed_registry_pushes_accepted_total counter\n\
         accelfed_registry_pushes_accepted_total {accepted}\n\
         # HELP accelfed_registry_pushes_refused_total Registry pushes refused since this process started, per reason (unauthorized: a missing or unknown token).\n\
         # TYPE accelfed_registry_pushes_refused_total counter"
    );
    // Always present, so an alert on it has a series before the first refusal.
    if !refused.contains_key("unauthorized") {
        let _ = writeln!(
            out,
            "accelfed_registry_pushes_refused_total{{reason=\"unauthorized\"}} 0"
        );
    }
    for (reason, n) in &refused {
        let _ = writeln!(
            out,
            "accelfed_registry_pushes_refused_total{{reason=\"{reason}\"}} {n}"
        );
    }
    let statuses = registry.index().site_statuses(now);
    let fresh = statuses.iter().filter(|s| s.fresh).count();
    let _ = writeln!(
        out,
        "# HELP accelfed_registry_sites Sites with a document in the registry, fresh (within its validity) or stale.\n\
         # TYPE accelfed_registry_sites gauge\n\
         accelfed_registry_sites{{state=\"fresh\"}} {fresh}\n\
         accelfed_registry_sites{{state=\"stale\"}} {}\n\
         # HELP accelfed_registry_document_age_seconds Age of each site's current registry document.\n\
         # TYPE accelfed_registry_document_age_seconds gauge",
        statuses.len() - fresh
    );
    for status in &statuses {
        let _ = writeln!(
            out,
            "accelfed_registry_document_age_seconds{{site=\"{}\"}} {}",
            escape(&status.site),
            (now - status.received_at).num_seconds().max(0)
        );
    }
    let _ = writeln!(
        out,
        "# HELP accelfed_registry_document_fresh 1 while the site's document is within its validity, 0 once stale.\n\
         # TYPE accelfed_registry_document_fresh gauge"
    );
    for status in &statuses {
        let _ = writeln!(
            out,
            "accelfed_registry_document_fresh{{site=\"{}\"}} {}",
            escape(&status.site),
            u8::from(status.fresh)
        );
    }
}
