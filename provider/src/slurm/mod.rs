//! The Slurm provider: GPUs per node, partition and type from Slurm's JSON (CLI or slurmrestd), and
//! the jobs the GPU-hours meter reads from its accounting.
//!
//! `config.rs` is `[[slurm]]`; `client/` is the only IO; `inventory.rs` is what it read; the rest
//! is pure: `version.rs` picks the data format from each response's `meta`, `negotiate.rs` the one
//! to ask slurmrestd for, `json.rs` reads the shapes that changed between formats (streamed with
//! `crate::json`'s framer), `gres.rs` and `tres.rs` read GPU strings, `nodes.rs`,
//! `partitions.rs`, `documents.rs` and `jobs.rs` read the responses, `map.rs` builds GLUE2 (after
//! `types.rs` checked every GPU type can name a model) and `meter.rs` the usage observations;
//! `mig.rs` says what a MIG slice type is of its GPU, `lost_gpus.rs` finds jobs that asked for
//! GPUs the accounting did not record. This file is the entry point and the backend contract.

mod client;
mod config;
mod documents;
mod error;
mod gres;
mod inventory;
mod jobs;
mod json;
mod lost_gpus;
mod map;
mod meter;
mod mig;
mod negotiate;
mod nodes;
mod partitions;
#[cfg(test)]
mod signals_tests;
mod tres;
mod tres_json;
mod types;
mod version;

pub use crate::json::FrameError;
pub use client::SlurmClient;
pub use config::{CliConfig, GpuTypeConfig, RestConfig, SlurmConfig};
pub use documents::{DocumentError, NodesDocument, parse_nodes, parse_partitions};
pub use error::SlurmError;
pub use gres::{GpuGres, GresError, parse_gpu_gres};
pub use inventory::Inventory;
pub use jobs::{JobProblem, JobsError, JobsSummary, SlurmJob, read_jobs};
pub use lost_gpus::{LostGpus, names_gpus};
pub use map::{Mapped, admitted, service};
pub use meter::{meter, observation, observe};
pub use nodes::{NodeGpus, NodeProblem, SlurmNode, untracked_gpus_warnings};
pub use partitions::{Allow, SlurmPartition, parse_scontrol_text};
pub use tres::{GpuTres, TresError, parse_tres_string};
pub use types::checked_service;
pub use version::DataVersion;

use chrono::{DateTime, Utc};

use accelfed_schemas::glue::Service;
use accelfed_schemas::names::SiteName;

use crate::backend::{Backend, Metering, Provision, log_warnings};
use crate::backend_error::BackendError;
use crate::config::Problem;

/// Reads the cluster and maps it to GLUE2; warnings (unknown GPU types, skipped nodes) are logged.
pub async fn provide(
    config: &SlurmConfig,
) -> Result<accelfed_schemas::glue::ComputingService, SlurmError> {
    let inventory = SlurmClient::new(config).inventory().await?;
    let mapped = checked_service(config, &inventory)?;
    log_warnings(SlurmConfig::TABLE, config.id.get_ref(), &mapped.warnings);
    Ok(mapped.service)
}

/// The Slurm backend's contract.
impl Backend for SlurmConfig {
    const TABLE: &'static str = "slurm";

    fn validate(&self) -> Result<(), Problem> {
        SlurmConfig::validate(self)
    }

    async fn provide(&self) -> Result<Provision, BackendError> {
        let service = provide(self).await?;
        Ok(Provision {
            services: vec![Service::Computing(service)],
            failures: Vec::new(),
        })
    }

    async fn observe(
        &self,
        site: &SiteName,
        since: DateTime<Utc>,
        now: DateTime<Utc>,
    ) -> Result<Metering, BackendError> {
        Ok(meter(self, site, since, now).await?)
    }
}
