//! The Kubernetes provider: GPUs per node, product and sharing mode from the API's node and pod
//! lists and the GPU Feature Discovery labels, shares per VO from namespaces and ResourceQuotas, and
//! the pod observations the GPU-hours meter turns into usage records.
//!
//! `config.rs` is `[[kubernetes]]`; `client/` is the only IO (the API server through `kube`, and
//! Prometheus); the rest is pure: `api.rs` is the lean shape of the API objects, `quantity.rs`,
//! `labels.rs`, `nodes.rs` and `pods.rs` read them, `vo.rs` maps namespaces, `capacity.rs` counts,
//! `map.rs` builds GLUE2, `usage.rs` builds observations and `dcgm.rs` reads utilisation.

pub mod api;
mod capacity;
mod client;
mod config;
mod dcgm;
mod error;
mod labels;
mod map;
mod nodes;
mod pods;
mod quantity;
mod usage;
mod vo;

use chrono::{DateTime, Utc};

use accelfed_schemas::glue::Service;
use accelfed_schemas::names::SiteName;
use accelfed_schemas::usage::Observation;

pub use capacity::kind_id;
pub use client::{Inventory, KubeClient, MAX_RESTARTS};
pub use config::{KubernetesConfig, PrometheusConfig, ServiceKind};
pub use dcgm::{Metric, Utilisation};
pub use error::KubernetesError;
pub use map::{Mapped, service};
pub use nodes::{NodeGpus, NodeResource, read_node};
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

/// What the meter needs from one run: observations of every GPU pod that started.
#[derive(Debug, Clone)]
pub struct Metered {
    pub observations: Vec<Observation>,
    pub warnings: Vec<String>,
}

/// Reads the cluster (and Prometheus, when configured, over the `window_s` before `now`) and turns
/// its GPU pods into observations. A Prometheus failure is a warning: GPU-hours do not depend on it.
pub async fn meter(
    config: &KubernetesConfig,
    site: &SiteName,
    window_s: u64,
) -> Result<Metered, KubernetesError> {
    let inventory = KubeClient::new(config).await?.inventory().await?;
    let mut warnings = inventory.warnings.clone();
    let utilisation = match &config.prometheus {
        Some(prometheus) => {
            match client::prometheus::utilisation(prometheus, window_s, &mut warnings).await {
                Ok(read) => Some(read),
                Err(err) => {
                    warnings.push(format!("{err}; ActiveDuration left out"));
                    None
                }
            }
        }
        None => None,
    };
    Ok(observe(
        config,
        site,
        &inventory,
        utilisation.as_ref(),
        warnings,
    ))
}

/// The pure part of [`meter`]: an inventory (and utilisation) to observations.
pub fn observe(
    config: &KubernetesConfig,
    site: &SiteName,
    inventory: &Inventory,
    utilisation: Option<&Utilisation>,
    mut warnings: Vec<String>,
) -> Metered {
    let vos = namespace_vos(config, &inventory.namespaces, &mut warnings);
    let observations = usage::observations(
        site,
        config.cluster_name(),
        inventory,
        &vos,
        utilisation,
        &mut warnings,
    );
    Metered {
        observations,
        warnings,
    }
}

/// The time the meter saw the pods, for callers that keep sightings: `now` truncated to seconds.
pub fn sighting_time(now: DateTime<Utc>) -> DateTime<Utc> {
    DateTime::from_timestamp(now.timestamp(), 0).unwrap_or(now)
}
