//! What a reload changes, said for the log: sites added and removed, sites whose token changed,
//! the access rules and the certificate's dates (names and counts only, never a token or a hash);
//! and the parts that only a restart puts in force.

use crate::certificate::Validity;
use crate::config::{CentralConfig, LoadedCentral, SiteEntry};

/// The sites' difference between two configurations.
#[derive(Debug, Default)]
pub struct Changes {
    added: Vec<String>,
    removed: Vec<String>,
    new_token: Vec<String>,
}

impl Changes {
    pub fn between(old: &CentralConfig, new: &CentralConfig) -> Self {
        let mut changes = Self::default();
        for (site, entry) in &new.sites {
            match old.sites.get(site) {
                None => changes.added.push(site.to_string()),
                Some(before) if before.token_sha256 != entry.token_sha256 => {
                    changes.new_token.push(site.to_string());
                }
                Some(_) => {}
            }
        }
        changes.removed = old
            .sites
            .keys()
            .filter(|site| !new.sites.contains_key(*site))
            .map(ToString::to_string)
            .collect();
        changes
    }

    /// One line: what changed in the sites, then the access rules and certificate in force.
    pub fn describe(&self, config: &CentralConfig, certificate: Validity) -> String {
        let list = |names: &[String]| {
            if names.is_empty() {
                "none".to_owned()
            } else {
                names.join(", ")
            }
        };
        format!(
            "{} sites (added: {}; removed: {}; new token: {}); access: {} role rules, OIDC {}, \
             anonymous reading {}; certificate valid until {}",
            config.sites.len(),
            list(&self.added),
            list(&self.removed),
            list(&self.new_token),
            config.access.roles.len(),
            if config.access.oidc.is_some() {
                "on"
            } else {
                "off"
            },
            if config.access.anonymous { "on" } else { "off" },
            certificate
                .not_after
                .to_rfc3339_opts(chrono::SecondsFormat::Secs, true)
        )
    }

    /// The parts of `new` that differ from what the service started with and that a running
    /// service cannot change, by their name in the file. (Compared by their debug form: these
    /// types hold addresses, paths and numbers, whose debug forms differ exactly when they do.)
    pub fn needing_restart(started: &LoadedCentral, new: &LoadedCentral) -> Vec<String> {
        let differs =
            |a: &dyn std::fmt::Debug, b: &dyn std::fmt::Debug| format!("{a:?}") != format!("{b:?}");
        let (old_config, new_config) = (&started.config, &new.config);
        let mut parts = Vec::new();
        if differs(&old_config.listen, &new_config.listen) {
            parts.push("[listen]".to_owned());
        }
        // The location itself, password included, compared but never shown.
        if started.database_location() != new.database_location() {
            parts.push("[database]".to_owned());
        }
        if differs(&old_config.ingest, &new_config.ingest) {
            parts.push("[ingest]".to_owned());
        }
        if differs(&old_config.registry, &new_config.registry) {
            parts.push("[registry]".to_owned());
        }
        if differs(&old_config.ldap, &new_config.ldap) {
            parts.push("[ldap]".to_owned());
        }
        for (site, entry) in &new_config.sites {
            let before = old_config.sites.get(site);
            if limits(before) != limits(Some(entry)) {
                parts.push(format!(
                    "sites.{site}'s own limits (max_batch, max_message_bytes, max_document_bytes)"
                ));
            }
        }
        parts
    }
}

/// A site's own limits; none for a site not configured.
fn limits(entry: Option<&SiteEntry>) -> (Option<usize>, Option<usize>, Option<usize>) {
    entry.map_or((None, None, None), |entry| {
        (
            entry.max_batch,
            entry.max_message_bytes,
            entry.max_document_bytes,
        )
    })
}
