//! The OpenStack meter: the cloud's servers as [`Observation`]s, one per VM that held GPUs in
//! `[since, now)`. [`observations`] is the pure part (VM usage intervals -> observations) and carries
//! the tests; [`observe`] lists the cloud (servers deleted since `since` included) and calls it.
//!
//! Each observation is the VM's whole interval, not only its part inside the window: records carry
//! absolute values per month, so metering a VM again replaces its earlier records. [`by_state`]
//! then cuts it where Nova's instance actions say the server stopped or came back
//! ([`super::states`]): its stopped stretches are idle pieces.

use std::sync::Arc;

use chrono::{DateTime, SecondsFormat, Utc};
use foldhash::{HashMap, HashMapExt};

use accelfed_schemas::gpu::GpuModel;
use accelfed_schemas::names::{Fqan, LocalId, SiteName, Text, VoName};
use accelfed_schemas::usage::{Observation, RecordType, Source};

use crate::backend::Metering;

use super::config::{Convention, OpenstackConfig};
use super::conventions::FlavorGpu;
use super::error::OpenstackError;
use super::states;
use super::usage::VmUsage;

/// The GPU observations of the cloud's VMs that held GPUs in `[since, now)`.
///
/// Fails (so nothing of this cloud is written) when Keystone or Nova cannot be read. Only flavors,
/// projects, servers and Placement's inventories are listed ([`super::Listing::Usage`]): Glance,
/// flavor access and quotas describe the service, not its usage.
pub async fn observe(
    config: &OpenstackConfig,
    site: &SiteName,
    since: DateTime<Utc>,
    now: DateTime<Utc>,
) -> Result<Vec<Observation>, OpenstackError> {
    Ok(meter(config, site, since, now).await?.observations)
}

/// [`observe`], with the cloud's installed GPUs from the same listing (Placement's inventories,
/// counted as `provide` publishes them).
pub async fn meter(
    config: &OpenstackConfig,
    site: &SiteName,
    since: DateTime<Utc>,
    now: DateTime<Utc>,
) -> Result<Metering, OpenstackError> {
    let changes_since = since.to_rfc3339_opts(SecondsFormat::Secs, true);
    let used = super::usage(config, &changes_since).await?;
    let (observations, mut warnings) = observations(site, &used.usage, since, now);
    let observations = by_state(observations, &used, &mut warnings);
    for warning in warnings {
        tracing::warn!(cloud = %config.id.get_ref(), "{warning}");
    }
    // The backend's line at the default level, as the Slurm and Kubernetes meters write theirs.
    tracing::info!(
        provider = "openstack",
        cloud = %config.id.get_ref(),
        gpu_servers = used.usage.len(),
        observations = observations.len(),
        "read the GPU servers of {since} to {now}"
    );
    Ok(Metering {
        observations,
        installed: used.installed,
    })
}

/// Observations cut where their servers' power state changed ([`super::states::split`]): stopped,
/// suspended, paused and shelved stretches idle, offloaded ones not held. A server whose status says
/// idle while its actions (read) do not say since when is reported, and its time left as it was. A
/// server settled since before the window's month ([`super::settled`]) is metered from that month
/// on, in the state its status says.
pub fn by_state(
    observations: Vec<Observation>,
    used: &super::Used,
    warnings: &mut Vec<String>,
) -> Vec<Observation> {
    let status: HashMap<&str, &str> = used
        .usage
        .iter()
        .map(|vm| (vm.server_id(), vm.status()))
        .collect();
    let mut out = Vec::with_capacity(observations.len());
    for observation in observations {
        let server = observation.resource.as_str();
        if let (Some(state), Some(from)) = (used.settled.get(server), used.settled_from) {
            out.extend(super::settled::clip(&observation, from, *state));
            continue;
        }
        // Servers whose actions were not read (not asked, or unreadable: warned already) say
        // nothing either way.
        let changes = used.changes.get(server).map_or(&[][..], Vec::as_slice);
        if used.changes.contains_key(server)
            && let Some(status) = status.get(server)
            && let Some(warning) = states::check(server, status, changes)
        {
            warnings.push(warning);
        }
        out.extend(states::split(&observation, changes));
    }
    out
}

/// The record's model, through [`GpuModel::canonical`] (one GPU is one model in every record). For
/// flavors with EGI's `Accelerator:*` keys it is read from "<Vendor> <Model>", as cASO 5.x writes
/// it, so where the catalogue does not know the name a site moving from cASO keeps the same record
/// identity (site, VM, model, month) and a re-sent month replaces cASO's record instead of adding
/// to it. A model that already starts with its vendor's name is not prefixed twice.
fn record_model(vm: &VmUsage) -> GpuModel {
    let model = &vm.gpu.spec.model;
    let vendor = vm.gpu.spec.vendor.as_str();
    let named_with_vendor = model
        .as_str()
        .get(..vendor.len())
        .is_some_and(|head| head.eq_ignore_ascii_case(vendor));
    if vm.gpu.convention == Convention::Egi && !named_with_vendor {
        GpuModel::canonical(&vm.apel_model()).unwrap_or_else(|_| model.clone())
    } else {
        GpuModel::canonical(model.as_str()).unwrap_or_else(|_| model.clone())
    }
}

/// Pure: the VMs of `usage` that held GPUs in `[since, now)` as observations, with a warning for
/// each VM that cannot be one (its id is not a usable record id). A VM's VO becomes its FQAN
/// `/<vo>`; its Keystone user id is the GlobalUserName.
///
/// The count is in physical GPUs ([`FlavorGpu::physical_count`]): a passthrough GPU is one
/// (`Sharing::Whole`), a vGPU of a type that one GPU holds 4 of is 0.25 (`Sharing::Vgpu`), a
/// fractional EGI flavor counts as written (`Sharing::Fraction`).
///
/// The model, FQAN and user are built once per flavor, VO and user and cloned per VM: a large
/// cloud has 100,000 VMs of a few hundred flavors, 50 VOs and a few thousand users.
pub fn observations(
    site: &SiteName,
    usage: &[VmUsage],
    since: DateTime<Utc>,
    now: DateTime<Utc>,
) -> (Vec<Observation>, Vec<String>) {
    let mut observations = Vec::with_capacity(usage.len());
    let mut warnings = Vec::new();
    let mut models: HashMap<*const FlavorGpu, GpuModel> = HashMap::new();
    let mut fqans: HashMap<*const VoName, Option<Fqan>> = HashMap::new();
    let mut users: HashMap<&str, Option<Text>> = HashMap::new();
    for vm in usage {
        if vm.seconds_within(since, now) == 0 || vm.gpu.count.get() <= 0.0 {
            continue;
        }
        let resource = match LocalId::new(vm.server_id()) {
            Ok(resource) => resource,
            Err(err) => {
                warnings.push(format!(
                    "server {:?}: id {:?} cannot identify a usage record ({err}); not metered",
                    vm.server_name(),
                    vm.server_id()
                ));
                continue;
            }
        };
        let model = models
            .entry(Arc::as_ptr(&vm.gpu))
            .or_insert_with(|| record_model(vm))
            .clone();
        let fqan = vm.vo.as_ref().and_then(|vo| {
            fqans
                .entry(Arc::as_ptr(vo))
                .or_insert_with(|| Fqan::new(format!("/{vo}")).ok())
                .clone()
        });
        let user = users
            .entry(vm.user_id())
            .or_insert_with(|| Text::new(vm.user_id()).ok())
            .clone();
        observations.push(Observation {
            site: site.clone(),
            record_type: RecordType::Cloud,
            resource,
            model,
            accelerator_type: vm.gpu.spec.kind,
            count: vm.gpu.physical_count(),
            sharing: vm.gpu.spec.sharing.clone(),
            fqan,
            vo: vm.vo.as_deref().cloned(),
            user,
            source: Source::Openstack,
            cores: None,
            benchmark: None,
            utilisation: None,
            energy_wh: None,
            agent_id: None,
            start: vm.start,
            end: vm.end,
        });
    }
    (observations, warnings)
}
