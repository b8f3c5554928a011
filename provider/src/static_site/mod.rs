//! The static provider: a whole site described in the configuration file. For bare-metal GPU nodes,
//! or middleware accelfed does not query yet. `config.rs` is the file format, `validate.rs` checks it
//! hangs together, `map.rs` builds the GLUE2 services (pure). No `client.rs`, `inventory.rs` or
//! `meter.rs`: the configuration is the listing, and manual usage has its own file
//! (`[accounting] observations`). This file is the entry point and the backend contract.

mod config;
mod map;
mod validate;

pub use config::{
    BatchConfig, BatchShareConfig, CloudConfig, EndpointConfig, FlavorConfig, GpuConfig,
    ImageConfig, NodeTypeConfig, OsConfig, ProjectConfig, StaticConfig, VoConfig,
};

use chrono::{DateTime, Utc};
use toml::Spanned;

use accelfed_schemas::names::{LocalId, SiteName};

use crate::backend::{Backend, Metering, Provision, manager_accelerators};
use crate::backend_error::BackendError;
use crate::config::Problem;

/// The static backend's contract: no IO, no failures, no meter (manual usage has its own file).
impl Backend for StaticConfig {
    const TABLE: &'static str = "static";
    const METERS: bool = false;

    /// `[static]` is one table, not a list, so it is named without an index.
    fn label(&self, _index: usize) -> String {
        Self::TABLE.to_owned()
    }

    fn validate(&self) -> Result<(), Problem> {
        StaticConfig::validate(self)
    }

    fn clouds(&self, _index: usize) -> Vec<(String, &Spanned<LocalId>)> {
        self.cloud
            .iter()
            .enumerate()
            .map(|(index, cloud)| (format!("static.cloud[{index}]"), &cloud.id))
            .collect()
    }

    async fn provide(&self) -> Result<Provision, BackendError> {
        Ok(Provision {
            services: self.services(),
            failures: Vec::new(),
        })
    }

    /// No usage of its own, but its GPUs bound the manual usage metered against them.
    async fn observe(
        &self,
        _site: &SiteName,
        _since: DateTime<Utc>,
        _now: DateTime<Utc>,
    ) -> Result<Metering, BackendError> {
        Ok(Metering {
            observations: Vec::new(),
            installed: Ok(manager_accelerators(&self.services())),
        })
    }
}
