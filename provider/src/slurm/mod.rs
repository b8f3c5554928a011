//! The Slurm provider: GPUs per node, partition and type from Slurm's JSON (CLI or slurmrestd), and
//! the jobs the GPU-hours meter reads from its accounting.
//!
//! `config.rs` is `[[slurm]]`; `client.rs` is the only IO; the rest is pure: `version.rs` picks the
//! data format from each response's `meta`, `negotiate.rs` the one to ask slurmrestd for, `json.rs` reads the shapes that changed between formats,
//! `gres.rs` and `tres.rs` read GPU strings, `nodes.rs`, `partitions.rs`, `documents.rs` and
//! `jobs.rs` read the responses, and `map.rs` builds GLUE2.

mod client;
mod config;
mod documents;
mod error;
mod gres;
mod jobs;
mod json;
mod map;
mod negotiate;
mod nodes;
mod observe;
mod partitions;
mod stream;
mod tres;
mod tres_json;
mod version;

pub use client::{Inventory, SlurmClient};
pub use config::{CliConfig, GpuTypeConfig, RestConfig, SlurmConfig};
pub use documents::{DocumentError, NodesDocument, parse_nodes, parse_partitions};
pub use error::SlurmError;
pub use gres::{GpuGres, GresError, parse_gpu_gres};
pub use jobs::{JobProblem, JobsError, JobsSummary, SlurmJob, read_jobs};
pub use map::{Mapped, admitted, service};
pub use nodes::{NodeGpus, NodeProblem, SlurmNode, untracked_gpus_warning};
pub use observe::{observation, observe};
pub use partitions::{Allow, SlurmPartition, parse_scontrol_text};
pub use stream::FrameError;
pub use tres::{GpuTres, TresError, parse_tres_string};
pub use version::DataVersion;

/// Reads the cluster and maps it to GLUE2; warnings (unknown GPU types, skipped nodes) are logged.
pub async fn provide(
    config: &SlurmConfig,
) -> Result<accelfed_schemas::glue::ComputingService, SlurmError> {
    let inventory = SlurmClient::new(config).inventory().await?;
    let mapped = service(config, &inventory);
    for warning in &mapped.warnings {
        tracing::warn!(provider = "slurm", service = %config.id.get_ref(), "{warning}");
    }
    Ok(mapped.service)
}
