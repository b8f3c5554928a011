//! The site configuration file (TOML): the site itself and the providers that describe its services.
//! (The file's `[accounting]` and `[publish]` tables belong to accelfed-accounting and
//! accelfed-publishers; see [`Config`].)
//!
//! Parsing is strict (unknown keys are errors) and validating needs no network, so `accelfed validate`
//! can run anywhere. Every error names the file, line and column, and the field.

mod error;
mod ldap_length;
mod problem;
mod site;

use std::path::{Path, PathBuf};

use serde::Deserialize;
use serde::de::IgnoredAny;

pub use error::ConfigError;
pub use problem::Problem;
pub use site::{ContactConfig, LocationConfig, SiteConfig};

pub use crate::backend::{ProviderConfig, Provision};

/// The struct of a whole configuration file, one field per backend of the list in
/// `crate::backend`, and the one place that walks them ([`Config::providers_indexed`]).
macro_rules! config_tables {
    ($($(#[$doc:meta])* $variant:ident($table:ty) in $field:ident: $many:ident,)*) => {
        /// A whole configuration file.
        ///
        /// Each provider has its own top-level table named after its middleware (`[static]`,
        /// `[[openstack]]`, `[[slurm]]`, ...) rather than a `type = "..."` tag: serde reads tagged
        /// enums through a buffer that loses TOML's positions, and every configuration error must
        /// say `file:line:column`. The set stays closed: an unknown table is refused with the
        /// known names.
        ///
        /// `[accounting]` and `[publish]` are other crates' settings in the same file: this struct
        /// only names them (so they are not refused as unknown) and skips their contents; the
        /// binary reads them with their own types from the same text (`cli/src/site_file.rs`),
        /// where their errors are located the same way.
        #[derive(Debug, Clone, Deserialize)]
        #[serde(deny_unknown_fields)]
        pub struct Config {
            /// The site (GLUE2 AdminDomain).
            pub site: SiteConfig,
            $(
                $(#[$doc])*
                #[serde(default)]
                pub $field: $many<$table>,
            )*
            /// `[accounting]`: read by the accounting pipeline (accelfed-accounting's
            /// `AccountingConfig`), not here; named so that the set of tables stays closed (see
            /// the type's comment).
            #[serde(default)]
            pub accounting: Option<IgnoredAny>,
            /// `[publish]`: read by the publishers (accelfed-publishers' `PublishConfig`), not here.
            #[serde(default)]
            pub publish: Option<IgnoredAny>,
        }

        impl Config {
            /// The configured providers, each with its position in its own table (what
            /// [`ProviderConfig::label`] names it by), in the order of [`Config::providers`].
            pub fn providers_indexed(&self) -> Vec<(usize, ProviderConfig<'_>)> {
                let mut providers = Vec::new();
                $(
                    providers.extend(
                        self.$field
                            .iter()
                            .enumerate()
                            .map(|(index, table)| (index, ProviderConfig::$variant(table))),
                    );
                )*
                providers
            }
        }
    };
}

crate::backend::backends!(config_tables);

/// A configuration that parsed and validated, with where it came from.
#[derive(Debug, Clone)]
pub struct LoadedConfig {
    pub path: PathBuf,
    pub source: String,
    pub config: Config,
}

/// The largest configuration file read (1 MiB: a site's file is a few kilobytes).
pub const MAX_CONFIG_BYTES: u64 = 1 << 20;

impl Config {
    /// Reads, parses and validates a configuration file of at most [`MAX_CONFIG_BYTES`]; a larger
    /// one (or an endless one, such as `/dev/zero`) is refused after reading one byte past it.
    /// Text that is not UTF-8 is refused at the `file:line:column` of its first bad byte.
    pub fn load(path: &Path) -> Result<LoadedConfig, ConfigError> {
        let error = |message: String| ConfigError::Read {
            path: path.to_owned(),
            message,
        };
        let mut bytes = Vec::new();
        std::io::Read::read_to_end(
            &mut std::io::Read::take(
                std::fs::File::open(path).map_err(|err| error(err.to_string()))?,
                MAX_CONFIG_BYTES + 1,
            ),
            &mut bytes,
        )
        .map_err(|err| error(err.to_string()))?;
        if bytes.len() as u64 > MAX_CONFIG_BYTES {
            return Err(error(format!(
                "larger than {MAX_CONFIG_BYTES} bytes; a configuration is a few kilobytes"
            )));
        }
        let source = ConfigError::utf8(path, bytes)?;
        let config = Self::parse(path, &source)?;
        Ok(LoadedConfig {
            path: path.to_owned(),
            source,
            config,
        })
    }

    /// Parses and validates configuration text; `path` is only used in messages.
    pub fn parse(path: &Path, source: &str) -> Result<Config, ConfigError> {
        let config: Config =
            toml::from_str(source).map_err(|err| ConfigError::from_toml(path, source, &err))?;
        config
            .site
            .validate()
            .map_err(|problem| problem.into_config_error(path, source, "site"))?;
        for provider in config.providers() {
            provider
                .validate()
                .map_err(|problem| problem.into_config_error(path, source, provider.name()))?;
        }
        config.require_gocdb_id(path, source)?;
        config.require_project_ids(path, source)?;
        ldap_length::check(&config, path, source)?;
        Ok(config)
    }

    /// EGI's cloud-info-api reads a cloud site's GOCDB id from the CloudComputingService's
    /// `OtherInfo.gocdb_id` and refuses the whole document without it, so a configuration that
    /// publishes a cloud must give `site.gocdb_id`. The error points at the first cloud.
    fn require_gocdb_id(&self, path: &Path, source: &str) -> Result<(), ConfigError> {
        if self.site.gocdb_id.is_some() {
            return Ok(());
        }
        let first = self
            .providers_indexed()
            .into_iter()
            .find_map(|(index, provider)| provider.clouds(index).into_iter().next());
        match first {
            None => Ok(()),
            Some((field, id)) => Err(ConfigError::at(
                path,
                source,
                Some(id.span()),
                format!(
                    "{field}.id: {:?} is published as a cloud service, which needs the site's \
                     GOCDB id: set gocdb_id in [site] (EGI's cloud-info-api reads it from \
                     CloudComputingService OtherInfo.gocdb_id and skips a site without it)",
                    id.get_ref().as_str()
                ),
            )),
        }
    }

    /// EGI's cloud-info-api reads every cloud share's `ProjectID` and stops loading the site at a
    /// share without one (the registry's JSON Schema requires it too), so each project of a static
    /// cloud must give `project_id`. The error points at the project's id.
    fn require_project_ids(&self, path: &Path, source: &str) -> Result<(), ConfigError> {
        let Some(statics) = &self.r#static else {
            return Ok(());
        };
        for (cloud_index, cloud) in statics.cloud.iter().enumerate() {
            let missing = cloud
                .projects
                .iter()
                .enumerate()
                .find(|(_, project)| project.project_id.is_none());
            if let Some((index, project)) = missing {
                return Err(ConfigError::at(
                    path,
                    source,
                    Some(project.id.span()),
                    format!(
                        "static.cloud[{cloud_index}].project[{index}]: project {:?} needs \
                         project_id, the cloud's id of the project (EGI's cloud-info-api reads \
                         every cloud share's ProjectID and stops loading the site without it)",
                        project.id.get_ref().as_str()
                    ),
                ));
            }
        }
        Ok(())
    }

    /// The part of the configuration that gathers with no network: the site and its `[static]`
    /// services (what `accelfed validate` renders and checks). A struct literal on purpose: a new
    /// backend's field must be decided here, or this does not compile.
    pub fn static_part(&self) -> Config {
        Config {
            site: self.site.clone(),
            r#static: self.r#static.clone(),
            openstack: Vec::new(),
            slurm: Vec::new(),
            kubernetes: Vec::new(),
            accounting: None,
            publish: None,
        }
    }

    /// The configured providers, in a fixed order.
    pub fn providers(&self) -> Vec<ProviderConfig<'_>> {
        self.providers_indexed()
            .into_iter()
            .map(|(_, provider)| provider)
            .collect()
    }
}
