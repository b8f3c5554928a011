//! One sync: read what the server has under the base, plan, apply, report. Pure planning lives in
//! [`super::plan`], IO in [`super::client`]; this file only strings them together.

use std::path::{Path, PathBuf};

use accelfed_schemas::glue::from_json::{ParsedDocument, Stamp};
use accelfed_schemas::render::ldif::LdifMode;

use super::client::{ApplyReport, Connection};
use super::config::LdapSyncConfig;
use super::error::LdapError;
use super::plan::{PlanCounts, plan};
use super::view::{SiteEntities, federation_entries};

/// A configured sync target, with its password read.
pub struct LdapSync {
    url: String,
    bind_dn: String,
    password: String,
    base: String,
    mode: LdifMode,
    interval_s: u64,
    /// The system's roots plus `[ldap] ca`, read once when the service starts.
    trust: accelfed_net::Trust,
}

impl std::fmt::Debug for LdapSync {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // The password stays out of logs and panics.
        f.debug_struct("LdapSync")
            .field("url", &self.url)
            .field("bind_dn", &self.bind_dn)
            .field("base", &self.base)
            .field("mode", &self.mode)
            .finish_non_exhaustive()
    }
}

/// What one sync did.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct SyncReport {
    /// Entries in the federation view (the base entry included).
    pub entries: usize,
    /// What the plan asked for.
    pub planned: PlanCounts,
    /// What the server accepted and refused.
    pub applied: ApplyReport,
}

impl LdapSync {
    /// Reads the password file and the CA (`resolve` makes a relative path relative to the
    /// configuration).
    pub fn new(
        config: &LdapSyncConfig,
        resolve: impl Fn(&Path) -> PathBuf,
    ) -> Result<Self, LdapError> {
        let path = resolve(&config.password_file);
        let text = std::fs::read_to_string(&path).map_err(|source| LdapError::PasswordFile {
            path: path.clone(),
            source,
        })?;
        accelfed_net::secret::warn_if_exposed("ldap.password_file", &path);
        let password = text.trim_end_matches(['\n', '\r']).to_owned();
        if password.is_empty() {
            return Err(LdapError::EmptyPassword { path });
        }
        let ca = config.ca.as_deref().map(&resolve);
        let trust =
            accelfed_net::Trust::optional("ldap.ca", ca.as_deref()).map_err(LdapError::Ca)?;
        Ok(Self {
            url: config.url.as_str().to_owned(),
            bind_dn: config.bind_dn.clone(),
            password,
            base: config.base.as_str().to_owned(),
            mode: config.mode.into(),
            interval_s: config.interval_s,
            trust,
        })
    }

    pub fn url(&self) -> &str {
        &self.url
    }

    /// Seconds between syncs besides those after pushes (0: none).
    pub fn interval_s(&self) -> u64 {
        self.interval_s
    }

    /// Brings the server's subtree under the base to the view of `documents` (each site's latest).
    pub async fn sync<'d>(
        &self,
        documents: impl IntoIterator<Item = &'d ParsedDocument>,
    ) -> Result<SyncReport, LdapError> {
        let sites: Vec<SiteEntities<'_>> = documents.into_iter().map(site_entities).collect();
        let desired = federation_entries(&self.base, self.mode, &sites);
        let mut connection = Connection::open(
            &self.url,
            Some((&self.bind_dn, &self.password)),
            &self.trust,
        )
        .await?;
        let current = connection
            .search(&self.base, "(objectClass=*)", &["*"])
            .await?;
        let ops = plan(&desired, &current);
        let applied = connection.apply(&ops).await;
        connection.close().await;
        Ok(SyncReport {
            entries: desired.len(),
            planned: PlanCounts::of(&ops),
            applied,
        })
    }
}

/// A site's entities with one stamp for all its entries: the one that expires first, so no entry
/// claims to be fresher than the oldest part of what the site sent.
pub fn site_entities(document: &ParsedDocument) -> SiteEntities<'_> {
    let stamp = document
        .stamps
        .iter()
        .min_by_key(|stamp| stamp.expires())
        .copied()
        .unwrap_or(Stamp {
            creation_time: chrono::DateTime::<chrono::Utc>::UNIX_EPOCH,
            validity_s: 0,
        });
    SiteEntities {
        site: document.site(),
        entities: &document.entities,
        creation_time: stamp.creation_time,
        validity_s: stamp.validity_s,
    }
}
