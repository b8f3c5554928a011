//! The Kubernetes provider: GPUs per node, product and sharing mode from the API's node and pod
//! lists and the GPU Feature Discovery labels, shares per VO from namespaces and ResourceQuotas, and
//! the pod observations the GPU-hours meter turns into usage records.
//!
//! `config.rs` is `[[kubernetes]]`; `client/` is the only IO (the API server through `kube`, and
//! Prometheus); the rest is pure: `api.rs` is the lean shape of the API objects, `page.rs` streams a list's pages, `quantity.rs`,
//! `labels.rs`, `nodes.rs` and `pods.rs` read them, `vo.rs` maps namespaces, `capacity.rs` counts,
//! `map.rs` builds GLUE2, `usage.rs` builds observations, `dcgm.rs` reads utilisation, and `meter.rs`
//! is the GPU-hours meter's entry point ([`observe`]).

pub mod api;
mod capacity;
mod client;
mod config;
mod dcgm;
mod error;
mod labels;
mod map;
mod meter;
mod nodes;
mod page;
mod pods;
mod quantity;
mod usage;
mod vo;

use accelfed_schemas::glue::Service;

pub use capacity::kind_id;
pub use client::{Inventory, KubeClient, MAX_RESTARTS};
pub use config::{KubernetesConfig, PrometheusConfig, ServiceKind};
pub use dcgm::{Metric, Utilisation};
pub use error::KubernetesError;
pub use map::{Mapped, service};
pub use meter::{Metered, observe, observe_inventory};
pub use nodes::{NodeGpus, NodeResource, read_node};
pub use page::read_page;
pub use pods::{Phase, PodGpus, read_pod};
pub use quantity::{QuantityError, whole};
pub use usage::observations;
pub use vo::{namespace_quotas, namespace_vos};

/// Reads the cluster and maps it to GLUE2; warnings (skipped objects, bad labels) are logged.
pub async fn provide(config: &KubernetesConfig) -> Result<Service, KubernetesError> {
    let inventory = KubeClient::new(config).await?.inventory().await?;
    let mapped = service(config, &inventory);
    for warning in &mapped.warnings {
        tracing::warn!(provider = "kubernetes", service = %config.id.get_ref(), "{warning}");
    }
    Ok(mapped.service)
}
