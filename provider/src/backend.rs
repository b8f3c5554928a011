//! The backend contract: what every middleware folder (`openstack/`, `slurm/`, `kubernetes/`,
//! `static_site/`) provides, and the closed enum [`ProviderConfig`] the rest of the code goes
//! through.
//!
//! A backend's `mod.rs` implements [`Backend`] for its configuration table: how a failure names
//! it, how its table is checked, what it contributes to the snapshot and (where it has a meter)
//! its usage observations. [`ProviderConfig`]'s methods dispatch to those implementations, so
//! parsing, gathering and metering are one loop each. The backends are listed once (`backends!`),
//! and that list makes the enum, its dispatch and the configuration's tables, so a new backend is
//! its folder plus one entry there.

use chrono::{DateTime, Utc};
use toml::Spanned;

use accelfed_schemas::glue::{AcceleratorCapacity, Service};
use accelfed_schemas::names::{LocalId, SiteName};
use accelfed_schemas::usage::Observation;

use crate::backend_error::BackendError;
use crate::config::Problem;

/// What one backend delivered for the snapshot: its services, and the failures that degraded
/// them without stopping it (a cloud whose Placement did not answer still publishes its flavors).
#[derive(Debug, Clone, Default)]
pub struct Provision {
    pub services: Vec<Service>,
    pub failures: Vec<BackendError>,
}

/// What one backend's meter read: its usage observations, and the GPUs it has installed as
/// `provide` publishes them (its manager's accelerators), worked out from the listings the usage
/// pass read, by the code `provide` uses, so the meter's capacity bound needs no second pass.
#[derive(Debug, Clone)]
pub struct Metering {
    pub observations: Vec<Observation>,
    /// `Err` (why) where usage was read but the installed GPUs could not be (Placement or the
    /// nodes did not answer): usage of the backend's models then goes unchecked, never checked
    /// against too small a figure.
    pub installed: Result<Vec<AcceleratorCapacity>, String>,
}

impl Default for Metering {
    fn default() -> Self {
        Self {
            observations: Vec::new(),
            installed: Ok(Vec::new()),
        }
    }
}

/// The accelerators of the managers of `services` (each in slots of its sharing): what a backend
/// has installed, as the published document states it.
pub(crate) fn manager_accelerators(services: &[Service]) -> Vec<AcceleratorCapacity> {
    services
        .iter()
        .flat_map(|service| match service {
            Service::Computing(service) => service.manager.accelerators.clone(),
            Service::Cloud(service) => service.manager.accelerators.clone(),
        })
        .collect()
}

/// Logs the warnings of one provider run (skipped objects, unknown GPU types, bad labels), each
/// named by the backend's table and the service's id, as every backend's `provide` does.
pub(crate) fn log_warnings(provider: &'static str, service: &LocalId, warnings: &[String]) {
    for warning in warnings {
        tracing::warn!(provider, service = %service, "{warning}");
    }
}

/// The roles of one backend, implemented by its configuration table in its folder's `mod.rs`.
///
/// Async methods are fine here: the trait is only used through [`ProviderConfig`]'s match, never
/// as a trait object, so each call's future is a concrete type.
pub(crate) trait Backend {
    /// The table's name in the configuration file (`[[openstack]]` is `openstack`).
    const TABLE: &'static str;

    /// Whether the backend meters usage (`[static]` does not: manual usage has its own file).
    const METERS: bool = true;

    /// How messages name this backend; `index` is its position in its table. The default is
    /// `<table>[<index>]`.
    fn label(&self, index: usize) -> String {
        format!("{}[{index}]", Self::TABLE)
    }

    /// Checks what serde cannot (no network); the problem's field is relative to the table.
    fn validate(&self) -> Result<(), Problem>;

    /// The cloud services this table publishes, as (field path, id), for the check that a site
    /// publishing a cloud has a GOCDB id. `index` as for [`Backend::label`].
    fn clouds(&self, _index: usize) -> Vec<(String, &Spanned<LocalId>)> {
        Vec::new()
    }

    /// Reads the middleware and maps it to GLUE2 services. An error means nothing was delivered.
    async fn provide(&self) -> Result<Provision, BackendError>;

    /// One observation per VM, pod or job that held GPUs in `[since, now)`, each with its whole
    /// interval, and the backend's installed GPUs from the same read; all or nothing for the
    /// observations (a half-read cloud never writes records that look complete).
    async fn observe(
        &self,
        site: &SiteName,
        since: DateTime<Utc>,
        now: DateTime<Utc>,
    ) -> Result<Metering, BackendError>;
}

/// The closed set of backends, listed once. Each entry is a variant of [`ProviderConfig`] with
/// its documentation, the type of its configuration table, the table's name in the file (which is
/// the field of [`crate::config::Config`] that holds it) and whether the file has one such table
/// (`Option`: `[static]`) or a list of them (`Vec`: `[[slurm]]`). The list is handed to `$then`,
/// which builds what has to name every backend: the enum and its dispatch (below) and the
/// configuration's fields (`config/mod.rs`). Adding a backend is its folder and one entry here.
macro_rules! backends {
    ($then:ident) => {
        $then! {
            /// Services described entirely in the configuration file.
            Static(crate::static_site::StaticConfig) in r#static: Option,
            /// An OpenStack cloud, read through its APIs.
            Openstack(crate::openstack::OpenstackConfig) in openstack: Vec,
            /// A Slurm cluster, read through its JSON CLI output or slurmrestd.
            Slurm(crate::slurm::SlurmConfig) in slurm: Vec,
            /// A Kubernetes cluster, read through its API.
            Kubernetes(crate::kubernetes::KubernetesConfig) in kubernetes: Vec,
        }
    };
}
pub(crate) use backends;

/// The enum of the backends and its methods, each one match over the variants that calls the
/// variant's [`Backend`] implementation.
macro_rules! provider_config {
    ($($(#[$doc:meta])* $variant:ident($table:ty) in $field:ident: $many:ident,)*) => {
        /// One configured provider; the closed set of middleware accelfed reads.
        #[derive(Debug, Clone, Copy)]
        pub enum ProviderConfig<'a> {
            $($(#[$doc])* $variant(&'a $table),)*
        }

        impl<'a> ProviderConfig<'a> {
            /// The provider's table in the configuration file, for messages.
            pub fn name(&self) -> &'static str {
                match self {
                    $(Self::$variant(config) => table(*config),)*
                }
            }

            /// How a failure of this provider is named (`slurm[0]`, `kubernetes[1]`,
            /// `openstack "cloud"`); `index` is its position in its table, as
            /// [`crate::config::Config::providers_indexed`] gives it.
            pub fn label(&self, index: usize) -> String {
                match self {
                    $(Self::$variant(config) => Backend::label(*config, index),)*
                }
            }

            /// Checks the table after parsing; the problem's field is relative to the table.
            pub fn validate(&self) -> Result<(), Problem> {
                match self {
                    $(Self::$variant(config) => Backend::validate(*config),)*
                }
            }

            /// The cloud services the table publishes, as (field path, id).
            pub fn clouds(self, index: usize) -> Vec<(String, &'a Spanned<LocalId>)> {
                match self {
                    $(Self::$variant(config) => Backend::clouds(config, index),)*
                }
            }

            /// Whether the backend meters usage.
            pub fn meters(&self) -> bool {
                match self {
                    $(Self::$variant(config) => meters(*config),)*
                }
            }

            /// Reads the middleware into GLUE2 services.
            pub async fn provide(&self) -> Result<Provision, BackendError> {
                match self {
                    $(Self::$variant(config) => Backend::provide(*config).await,)*
                }
            }

            /// The usage observations of `[since, now)`.
            pub async fn observe(
                &self,
                site: &SiteName,
                since: DateTime<Utc>,
                now: DateTime<Utc>,
            ) -> Result<Metering, BackendError> {
                match self {
                    $(Self::$variant(config) => Backend::observe(*config, site, since, now).await,)*
                }
            }
        }
    };
}

backends!(provider_config);

/// A table's name, from its type (the trait's constant is crate-private).
fn table<B: Backend>(_: &B) -> &'static str {
    B::TABLE
}

/// Whether a backend meters, from its type.
fn meters<B: Backend>(_: &B) -> bool {
    B::METERS
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use crate::config::Config;

    #[test]
    fn every_backend_is_named_by_its_table_in_the_file() {
        let text = "[site]\nname = \"EXAMPLE-GPU\"\ngocdb_id = \"1G0\"\n\n\
                    [static]\n\n[[openstack]]\nid = \"cloud\"\n\n\
                    [[slurm]]\nid = \"b\"\n\n[[kubernetes]]\nid = \"k\"\n";
        let config = Config::parse(Path::new("site.toml"), text).unwrap();
        let names: Vec<&str> = config.providers().iter().map(|p| p.name()).collect();
        assert_eq!(names, ["static", "openstack", "slurm", "kubernetes"]);
    }

    #[test]
    fn each_backend_is_named_by_its_position_in_its_own_table() {
        let text = "[site]\nname = \"EXAMPLE-GPU\"\ngocdb_id = \"1G0\"\n\n\
                    [[slurm]]\nid = \"a\"\n\n[[openstack]]\nid = \"cloud\"\n\n\
                    [[slurm]]\nid = \"b\"\n";
        let config = Config::parse(Path::new("site.toml"), text).unwrap();
        let labels: Vec<String> = config
            .providers_indexed()
            .into_iter()
            .map(|(index, provider)| format!("{} {}", provider.name(), provider.label(index)))
            .collect();
        assert_eq!(
            labels,
            [
                "openstack openstack \"cloud\"",
                "slurm slurm[0]",
                "slurm slurm[1]"
            ]
        );
    }
}
