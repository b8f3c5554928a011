//! The Kubernetes provider: GPUs per node, product and sharing mode from the API's node and pod
//! lists and the GPU Feature Discovery labels, shares per VO from namespaces and ResourceQuotas, and
//! the pod observations the GPU-hours meter turns into usage records.
//!
//! `config.rs` is `[[kubernetes]]`; `client/` is the only IO (the API server through `kube`, and
//! Prometheus); `inventory.rs` is what it read; the rest is pure: `api.rs` is the lean shape of the
//! API objects (borrowing with `crate::json`'s text; `api/filter.rs` keeps only GPU resources and
//! labels), `page.rs` streams a list's pages, `quantity.rs`, `labels.rs`, `nodes.rs` (with
//! `nodes/resources.rs`, what device each resource is), `vendors.rs`, `pods.rs` and `cpu.rs` read
//! them, `vo.rs` maps namespaces, `capacity.rs` counts, `map.rs` builds GLUE2, `usage.rs` builds
//! observations, `dcgm.rs` reads utilisation and energy (`dcgm_energy.rs` shares a GPU's energy out), and `meter.rs` is the GPU-hours meter's entry point
//! ([`observe`]). This file is the entry point of the provider and the backend contract.

pub mod api;
mod capacity;
mod client;
mod config;
mod cpu;
mod dcgm;
mod dcgm_energy;
mod error;
mod inventory;
mod labels;
mod map;
mod meter;
mod nodes;
mod page;
mod pods;
mod quantity;
mod slots;
mod usage;
mod vendors;
mod vo;

use chrono::{DateTime, Utc};
use toml::Spanned;

use accelfed_schemas::glue::Service;
use accelfed_schemas::names::{LocalId, SiteName};

use crate::backend::{Backend, Metering, Provision, log_warnings};
use crate::backend_error::BackendError;
use crate::config::Problem;

pub use capacity::kind_id;
pub use client::{KubeClient, MAX_RESTARTS};
pub use config::{KubernetesConfig, PrometheusConfig, ServiceKind};
pub use cpu::{CpuRequests, PodsRead};
pub use dcgm::{DcgmReadings, Energy, Metric, Scheme, Series, Utilisation};
pub use dcgm_energy::{Holds, share as share_energy};
pub use error::KubernetesError;
pub use inventory::Inventory;
pub use map::{Mapped, installed, service};
pub use meter::{Metered, meter, observe, observe_inventory};
pub use nodes::{NodeGpus, NodeResource, read_node};
pub use page::read_page;
pub use pods::{Phase, PodGpus, read_pod};
pub use quantity::{CpuQuantityError, QuantityError, millicores, whole};
pub use usage::observations;
pub use vo::{namespace_quotas, namespace_vos};

/// Reads the cluster and maps it to GLUE2; warnings (skipped objects, bad labels) are logged.
pub async fn provide(config: &KubernetesConfig) -> Result<Service, KubernetesError> {
    let inventory = KubeClient::new(config).await?.inventory().await?;
    let mapped = service(config, &inventory);
    log_warnings(
        KubernetesConfig::TABLE,
        config.id.get_ref(),
        &mapped.warnings,
    );
    Ok(mapped.service)
}

/// The Kubernetes backend's contract.
impl Backend for KubernetesConfig {
    const TABLE: &'static str = "kubernetes";

    fn validate(&self) -> Result<(), Problem> {
        KubernetesConfig::validate(self)
    }

    /// A cluster published as a cloud service; one published as a batch service is no cloud.
    fn clouds(&self, index: usize) -> Vec<(String, &Spanned<LocalId>)> {
        if self.service == ServiceKind::Cloud {
            vec![(format!("{}[{index}]", Self::TABLE), &self.id)]
        } else {
            Vec::new()
        }
    }

    async fn provide(&self) -> Result<Provision, BackendError> {
        let service = provide(self).await?;
        Ok(Provision {
            services: vec![service],
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
