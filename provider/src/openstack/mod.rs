//! The OpenStack provider and meter: reads a cloud's flavors, Placement resource providers, projects,
//! servers and images through its APIs, and yields the cloud's GLUE2 service and per-VM GPU usage.
//!
//! `config.rs` is `[[openstack]]`; `auth.rs` resolves credentials from `clouds.yaml` and `OS_*`;
//! `client/` is the only IO; `api.rs` declares the API objects (`server/` reads servers and their
//! embedded extra specs compactly, with `crate::json`'s scanner); `inventory.rs` is what one run lists.
//! The rest is pure: `conventions.rs` and `detect.rs` read GPUs from flavor extra specs,
//! `capacity.rs` reads them from Placement, `vo.rs` maps projects to VOs, `holdings.rs` reads
//! each server's GPUs and usage once, `map.rs` assembles the service, `layout.rs` groups
//! Placement's vGPU providers (SR-IOV virtual functions included) into physical GPUs, `vgpu.rs`
//! says what one vGPU of a type is of its GPU, `usage.rs` turns servers into GPU usage intervals and `meter.rs`
//! those into usage observations, `states.rs` cuts them at power-state changes and `settled.rs` says
//! which servers' changes the listing already tells.
//!
//! This file is the entry point: one run of the provider and of the meter's listing, and the
//! backend contract (`crate::backend`). Warnings (odd flavors, unreadable project properties) are
//! logged; failures are returned so the caller exits 1 while still publishing what was read.

pub mod api;
pub mod auth;
pub mod capacity;
pub mod client;
pub mod config;
pub mod conventions;
pub mod detect;
mod error;
mod holdings;
pub mod inventory;
mod layout;
pub mod map;
mod meter;
mod pci_ids;
mod server;
pub mod settled;
pub mod states;
pub mod usage;
mod vgpu;
pub mod vo;

pub use capacity::{KindCapacity, ProviderState};
pub use client::Listing;
pub use config::{Convention, DeviceConfig, OpenstackConfig};
pub use conventions::FlavorGpu;
pub use detect::{Detection, Detector};
pub use error::OpenstackError;
pub use inventory::CloudState;
pub use map::{Mapped, MeterMapped, map, map_metering, map_usage};
pub use meter::{meter, observations, observe};
pub use usage::VmUsage;

use std::collections::BTreeMap;

use chrono::{DateTime, Utc};
use toml::Spanned;

use accelfed_schemas::glue::{AcceleratorCapacity, Service};
use accelfed_schemas::names::{LocalId, SiteName};

use crate::backend::{Backend, Metering, Provision};
use crate::backend_error::BackendError;
use crate::config::Problem;
use client::Fetched;

/// The cloud's service and VM usage, with the failures that degraded it.
#[derive(Debug, Clone)]
pub struct Provided {
    pub mapped: Mapped,
    pub failures: Vec<BackendError>,
}

/// Reads the whole service of the cloud ([`Listing::Service`]) and maps it; the meter reads less
/// ([`usage()`]).
pub async fn provide(config: &OpenstackConfig) -> Result<Provided, OpenstackError> {
    let creds = client::credentials(config)?;
    let Fetched { state, failures } = client::fetch(config, creds, Listing::Service).await?;
    let mapped = map(config, &state);
    log(config, &mapped.warnings, &mapped.notes, &failures);
    Ok(Provided { mapped, failures })
}

/// The cloud's VM usage, its installed GPUs, and the failures met while listing them.
#[derive(Debug, Clone)]
pub struct Used {
    pub usage: Vec<VmUsage>,
    /// The manager's accelerators as `provide` publishes them, or why Placement could not say.
    pub installed: Result<Vec<AcceleratorCapacity>, String>,
    pub failures: Vec<BackendError>,
    /// Per server id, its power-state changes from its instance actions ([`states`]), for the
    /// GPU servers that held GPUs since `changes_since` and whose actions Nova answered.
    pub changes: BTreeMap<String, Vec<states::Change>>,
    /// Per server id, the state of the GPU servers settled since before `settled_from`, which were
    /// not asked for their actions ([`settled`]).
    pub settled: BTreeMap<String, states::State>,
    /// The start of the window's month: a settled server is metered from there on.
    pub settled_from: Option<DateTime<Utc>>,
}

/// The meter's read: what [`Listing::Usage`] lists (servers deleted since `changes_since`, RFC
/// 3339, included), mapped to VM usage and installed GPUs only, and the instance actions of the
/// GPU servers that held GPUs since then (unless `idle_from_actions = false`), all at once on the
/// session's pool, except those settled since before the window's month ([`settled`]). A server
/// whose actions cannot be read is a warning: its idle time stays unknown, as its GPU-hours do not
/// depend on it.
pub async fn usage(config: &OpenstackConfig, changes_since: &str) -> Result<Used, OpenstackError> {
    let creds = client::credentials(config)?;
    let session = client::Session::connect(
        creds,
        std::time::Duration::from_secs(config.timeout),
        config.concurrency,
    )
    .await?;
    let listing = Listing::Usage { changes_since };
    let Fetched { state, failures } = client::fetch_with(config, &session, listing).await?;
    let mapped = map_metering(config, &state);
    log(config, &mapped.warnings, &mapped.notes, &failures);
    // A cloud whose Placement did not answer has GPUs of unknown number, not none.
    let installed = match state.degraded.iter().find(|d| d.starts_with("placement:")) {
        Some(why) => Err(why.clone()),
        None => Ok(mapped.installed),
    };
    let since = usage::parse_time(changes_since);
    let settled_from = since.map(settled::month_start);
    let mut gpu_servers = Vec::new();
    let mut settled = BTreeMap::new();
    let held_since = |vm: &&VmUsage| {
        vm.gpu.count.get() > 0.0 && vm.end.is_none_or(|end| since.is_none_or(|s| end > s))
    };
    for vm in mapped
        .usage
        .iter()
        .filter(|_| config.idle_from_actions)
        .filter(held_since)
    {
        let known = settled_from.and_then(|from| settled::settled(vm.status(), vm.updated(), from));
        match known {
            Some(state) => {
                settled.insert(vm.server_id().to_owned(), state);
            }
            None => gpu_servers.push(vm.server_id().to_owned()),
        }
    }
    tracing::debug!(
        cloud = %config.id.get_ref(),
        asked = gpu_servers.len(),
        settled = settled.len(),
        "GPU servers whose instance actions are read"
    );
    let microversion = state.compute_microversion.as_deref();
    let mut changes = BTreeMap::new();
    for (server, read) in
        client::actions::changes(&session, &state.compute_url, microversion, gpu_servers).await
    {
        match read {
            Ok(read) => {
                changes.insert(server, read);
            }
            Err(err) => tracing::warn!(
                cloud = %config.id.get_ref(),
                "server {server}: instance actions unreadable, its idle time stays unknown: {err}"
            ),
        }
    }
    Ok(Used {
        usage: mapped.usage,
        installed,
        failures,
        changes,
        settled,
        settled_from,
    })
}

fn log(config: &OpenstackConfig, warnings: &[String], notes: &[String], failures: &[BackendError]) {
    for note in notes {
        tracing::info!(cloud = %config.id.get_ref(), "{note}");
    }
    for warning in warnings {
        tracing::warn!(cloud = %config.id.get_ref(), "{warning}");
    }
    for failure in failures {
        let retry = failure.retry.may_help();
        tracing::error!(cloud = %config.id.get_ref(), retry, "{failure}");
    }
}

/// The OpenStack backend's contract. Named by its id rather than its index: a cloud's id is how
/// operators know it, and the failure messages have always said `openstack "<id>"`.
impl Backend for OpenstackConfig {
    const TABLE: &'static str = "openstack";

    fn label(&self, _index: usize) -> String {
        format!("{} {:?}", Self::TABLE, self.id.get_ref().as_str())
    }

    fn validate(&self) -> Result<(), Problem> {
        OpenstackConfig::validate(self)
    }

    fn clouds(&self, index: usize) -> Vec<(String, &Spanned<LocalId>)> {
        vec![(format!("{}[{index}]", Self::TABLE), &self.id)]
    }

    async fn provide(&self) -> Result<Provision, BackendError> {
        let provided = provide(self).await?;
        Ok(Provision {
            services: vec![Service::Cloud(provided.mapped.service)],
            failures: provided.failures,
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
