//! The central service's configuration file (`central.toml`): where to listen, the TLS identity,
//! the repository's database, the ingest limits, and one hashed token per site.
//!
//! Strict like the site's file: unknown keys are refused, and every error names
//! `file:line:column` and the field. Loading needs no network and opens no database.

mod error;
mod ingest;

pub use ingest::IngestConfig;

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Deserializer};

use accelfed_schemas::confusable::confusable;
use accelfed_schemas::database_url::DatabaseUrl;
use accelfed_schemas::names::SiteName;

pub use error::CentralConfigError;

use crate::auth::TokenHash;

/// A whole `central.toml`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CentralConfig {
    /// Addresses to listen on.
    pub listen: ListenConfig,
    /// The server's certificate and key (gRPC is served over TLS only).
    pub tls: TlsConfig,
    /// The accounting repository.
    #[serde(default)]
    pub database: DatabaseConfig,
    /// Limits on what sites send.
    #[serde(default)]
    pub ingest: IngestConfig,
    /// The sites allowed to ship records, by GOCDB name, each with the SHA-256 of its token.
    #[serde(default)]
    pub sites: BTreeMap<SiteName, SiteEntry>,
    /// The federation registry (served on `[listen] https`).
    #[serde(default)]
    pub registry: crate::registry::config::RegistryConfig,
    /// A top-level slapd kept in sync with the registry's federation view. Left out: no sync.
    #[serde(default)]
    pub ldap: Option<crate::registry::ldap::LdapSyncConfig>,
    /// Who may read the report API: anonymous readers, OIDC sign-in and its roles.
    #[serde(default)]
    pub access: crate::access::AccessConfig,
}

/// `[listen]`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ListenConfig {
    /// gRPC over TLS, e.g. `0.0.0.0:9443`.
    pub grpc: SocketAddr,
    /// Plain HTTP for `GET /metrics` (Prometheus text format); keep it on a private address.
    /// Left out: no metrics endpoint.
    #[serde(default)]
    pub metrics: Option<SocketAddr>,
    /// The federation registry's HTTPS API (push and query), e.g. `0.0.0.0:8443`, with the `[tls]`
    /// certificate. Left out: no registry.
    #[serde(default)]
    pub https: Option<SocketAddr>,
    /// `[listen.limits]`: connections at once (per port, per client address), TLS handshake and
    /// idle timeouts; the defaults suit a federation of hundreds of sites.
    #[serde(default)]
    pub limits: crate::listen::ConnectionLimits,
}

/// `[tls]`: PEM files; relative paths are relative to the configuration file.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TlsConfig {
    /// The certificate chain, leaf first.
    pub certificate: PathBuf,
    /// The private key (PKCS#8, PKCS#1 or SEC1).
    pub key: PathBuf,
    /// Days before the certificate's end from which `serve`, `validate --central` and
    /// `init central` warn (and `serve` once a day); 0 never warns. An expired or not yet valid
    /// certificate is always refused.
    #[serde(default = "default_expiry_warning_days")]
    pub expiry_warning_days: u32,
}

fn default_expiry_warning_days() -> u32 {
    30
}

/// `[database]`: exactly one of `url` (PostgreSQL) or `path` (SQLite, the default).
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DatabaseConfig {
    /// `postgres://user@host/db`: PostgreSQL, for large federations. Its password (if it holds one)
    /// never shows in a message or log: the type prints it as `***`.
    #[serde(default)]
    pub url: Option<DatabaseUrl>,
    /// An SQLite file, created if missing; relative paths are relative to the configuration file.
    /// Default: `accounting.sqlite` beside the configuration file.
    #[serde(default)]
    pub path: Option<PathBuf>,
    /// Seconds `serve` waits at start for a PostgreSQL database that does not answer yet (refused,
    /// starting up, shutting down) before it gives up with exit 1; 0 tries once.
    #[serde(default = "default_start_wait_s")]
    pub start_wait_s: u64,
    /// MiB of report API answers kept until the next ingest commit (`report_api/cache.rs`); 0
    /// keeps none. Read at start.
    #[serde(default = "default_report_cache_mib")]
    pub report_cache_mib: usize,
}

fn default_report_cache_mib() -> usize {
    crate::report_api::cache::DEFAULT_BYTES >> 20
}

/// No `[database]` table: the fields' own defaults (not zeros: no table means no answer cache
/// otherwise).
impl Default for DatabaseConfig {
    fn default() -> Self {
        Self {
            url: None,
            path: None,
            start_wait_s: default_start_wait_s(),
            report_cache_mib: default_report_cache_mib(),
        }
    }
}

fn default_start_wait_s() -> u64 {
    accelfed_accounting::database::reachable::START_WAIT.as_secs()
}

pub(super) fn positive<'de, D: Deserializer<'de>>(deserializer: D) -> Result<usize, D::Error> {
    let value = usize::deserialize(deserializer)?;
    if value == 0 {
        return Err(serde::de::Error::custom("must be at least 1"));
    }
    Ok(value)
}

fn positive_if_given<'de, D: Deserializer<'de>>(
    deserializer: D,
) -> Result<Option<usize>, D::Error> {
    positive(deserializer).map(Some)
}

/// `[sites.<NAME>]`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SiteEntry {
    /// Lower-case hex SHA-256 of the site's token (`accelfed token` prints both). The token itself
    /// is never stored here.
    pub token_sha256: TokenHash,
    /// The most records one call of this site may hold, instead of `[ingest] max_batch`.
    #[serde(default, deserialize_with = "positive_if_given")]
    pub max_batch: Option<usize>,
    /// The most bytes one call of this site may hold, instead of `[ingest] max_message_bytes`.
    #[serde(default, deserialize_with = "positive_if_given")]
    pub max_message_bytes: Option<usize>,
    /// The largest document this site may push, below `[registry] max_document_bytes`.
    #[serde(default, deserialize_with = "positive_if_given")]
    pub max_document_bytes: Option<usize>,
}

/// A loaded configuration with its paths resolved.
#[derive(Debug, Clone)]
pub struct LoadedCentral {
    pub path: PathBuf,
    pub config: CentralConfig,
}

impl LoadedCentral {
    /// Where the repository lives: a PostgreSQL URL or an SQLite file path.
    pub fn database_location(&self) -> String {
        match (&self.config.database.url, &self.config.database.path) {
            (Some(url), _) => url.expose().to_owned(),
            (None, Some(path)) => self.resolve(path).display().to_string(),
            (None, None) => self
                .resolve(Path::new("accounting.sqlite"))
                .display()
                .to_string(),
        }
    }

    /// Where the registry keeps documents: the PostgreSQL URL, or `registry.sqlite` beside the
    /// accounting SQLite file.
    pub fn registry_location(&self) -> String {
        if let Some(url) = &self.config.database.url {
            return url.expose().to_owned();
        }
        let accounting = PathBuf::from(self.database_location());
        accounting
            .with_file_name("registry.sqlite")
            .display()
            .to_string()
    }

    /// `path` relative to the configuration file's folder.
    pub fn resolve(&self, path: &Path) -> PathBuf {
        if path.is_absolute() {
            return path.to_owned();
        }
        self.path
            .parent()
            .unwrap_or_else(|| Path::new("."))
            .join(path)
    }
}

impl CentralConfig {
    /// Reads and checks a configuration file of at most 1 MiB (a larger or endless one is refused
    /// after reading one byte past it).
    pub fn load(path: &Path) -> Result<LoadedCentral, CentralConfigError> {
        const LIMIT: u64 = 1 << 20;
        let error = |message: String| CentralConfigError::Read {
            path: path.to_owned(),
            message,
        };
        let file = std::fs::File::open(path).map_err(|err| error(err.to_string()))?;
        let mut bytes = Vec::new();
        std::io::Read::read_to_end(&mut std::io::Read::take(file, LIMIT + 1), &mut bytes)
            .map_err(|err| error(err.to_string()))?;
        if bytes.len() as u64 > LIMIT {
            return Err(error(format!("larger than {LIMIT} bytes")));
        }
        let source = CentralConfigError::utf8(path, bytes)?;
        let config = Self::parse(path, &source)?;
        if config
            .database
            .url
            .as_ref()
            .is_some_and(DatabaseUrl::has_password)
        {
            // Anyone who reads the file can log in to the database as the service.
            use std::os::unix::fs::PermissionsExt;
            if let Ok(metadata) = std::fs::metadata(path)
                && let Some(risk) =
                    accelfed_schemas::secret::exposure(metadata.permissions().mode())
            {
                tracing::warn!(
                    file = %path.display(),
                    "database.url holds a password and the configuration file is {risk}"
                );
            }
        }
        Ok(LoadedCentral {
            path: path.to_owned(),
            config,
        })
    }

    /// Parses and checks configuration text; `path` is only used in messages.
    pub fn parse(path: &Path, source: &str) -> Result<Self, CentralConfigError> {
        let config: Self = toml::from_str(source)
            .map_err(|err| CentralConfigError::from_toml(path, source, &err))?;
        if config.database.url.is_some() && config.database.path.is_some() {
            return Err(CentralConfigError::at(
                path,
                source,
                source.find("[database]"),
                "database: give either url (PostgreSQL) or path (SQLite), not both",
            ));
        }
        if let Some(url) = &config.database.url
            && !url.is_postgres()
        {
            return Err(CentralConfigError::at(
                path,
                source,
                source.find(url.expose()),
                "database.url: must start with postgres:// (for SQLite, use database.path)",
            ));
        }
        if let Some(problem) = config.access.problem() {
            return Err(CentralConfigError::at(
                path,
                source,
                source.find("[access"),
                &problem,
            ));
        }
        if let Some(problem) = config.listen.limits.problem() {
            return Err(CentralConfigError::at(
                path,
                source,
                source.find("[listen.limits]"),
                problem,
            ));
        }
        config.refuse_shared_token_hashes(path, source)?;
        config.refuse_confusable_sites(path, source)?;
        Ok(config)
    }

    /// Two sites with one token hash would let the second site's token log in as the first (and
    /// write its records): refused, naming both, at the second one's hash.
    fn refuse_shared_token_hashes(
        &self,
        path: &Path,
        source: &str,
    ) -> Result<(), CentralConfigError> {
        let tokens = self.tokens();
        let Some((first, second)) = tokens.shared_hash() else {
            return Ok(());
        };
        let hash = self.sites[&second].token_sha256.to_hex();
        let lower = source.to_ascii_lowercase();
        let at = lower.match_indices(&hash).nth(1).map(|(offset, _)| offset);
        Err(CentralConfigError::at(
            path,
            source,
            at,
            format!(
                "sites.{second}.token_sha256: the same token hash as sites.{first}; each site needs \
                 its own token (`accelfed token --site {second}`)"
            ),
        ))
    }

    /// Two site names drawn alike (`SITE-I` and `SITE-І` with a Cyrillic І) would be two sites
    /// that every page and report shows as one: refused, naming both, at the second one's table.
    fn refuse_confusable_sites(&self, path: &Path, source: &str) -> Result<(), CentralConfigError> {
        let names: Vec<&SiteName> = self.sites.keys().collect();
        for (i, first) in names.iter().enumerate() {
            let Some(second) = names[i + 1..]
                .iter()
                .find(|second| confusable(first.as_str(), second.as_str()))
            else {
                continue;
            };
            return Err(CentralConfigError::at(
                path,
                source,
                source.find(second.as_str()),
                format!(
                    "sites.{second}: looks like sites.{first} ({} and {} differ only in \
                     characters drawn alike); give each site a name of its own",
                    escaped(first.as_str()),
                    escaped(second.as_str())
                ),
            ));
        }
        Ok(())
    }

    /// The sites' token hashes, for authenticating requests.
    /// `[ingest] max_batch`, with the sites' own.
    pub fn batch_limits(&self) -> crate::batch_limits::BatchLimits {
        crate::batch_limits::BatchLimits::new(
            self.ingest.max_batch,
            self.sites
                .iter()
                .filter_map(|(site, entry)| entry.max_batch.map(|limit| (site.clone(), limit))),
        )
        .with_message_bytes(
            self.ingest.max_message_bytes,
            self.sites.iter().filter_map(|(site, entry)| {
                entry.max_message_bytes.map(|limit| (site.clone(), limit))
            }),
        )
        .with_distinct_caps(crate::distinct_caps::DistinctCaps {
            vos: self.ingest.max_vos_per_month,
            users: self.ingest.max_users_per_month,
            models: self.ingest.max_models_per_month,
        })
    }

    /// The sites with a document size of their own.
    pub fn document_limits(&self) -> std::collections::HashMap<SiteName, usize> {
        self.sites
            .iter()
            .filter_map(|(site, entry)| entry.max_document_bytes.map(|limit| (site.clone(), limit)))
            .collect()
    }

    pub fn tokens(&self) -> crate::auth::Tokens {
        crate::auth::Tokens::new(
            self.sites
                .iter()
                .map(|(site, entry)| (site.clone(), entry.token_sha256)),
        )
    }
}

/// `name` with every non-ASCII character as `\u{...}`, so that a message shows how two look-alike
/// names differ.
fn escaped(name: &str) -> String {
    name.chars()
        .map(|c| {
            if c.is_ascii() {
                c.to_string()
            } else {
                format!("\\u{{{:04X}}}", c as u32)
            }
        })
        .collect()
}

#[cfg(test)]
mod tests;
