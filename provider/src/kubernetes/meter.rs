//! The GPU-hours meter's entry point: [`observe`] reads the cluster (and Prometheus, when
//! configured) and returns one [`Observation`] per pod and GPU resource that held GPUs in
//! `[since, now)`; [`observe_inventory`] is its pure part, which carries the tests.
//!
//! Each observation covers the pod's whole life, not only the part inside the window: records are
//! absolute per month, so metering a pod again replaces its earlier records.
//!
//! **Pods deleted between two runs.** A pod that was running at one run and is gone (deleted and
//! garbage-collected) at the next is not listed any more, so the next run produces nothing for it.
//! Its records stay in the spool as they were at the last run that saw it running: the spool keeps
//! the running pods the meter saw, as records metered up to that sighting, and so closes them at
//! the last sighting. The error is an undercount, never an overcount, of at most one metering
//! interval per such pod (the time between its last sighting and its deletion). A finished pod
//! still listed but without a finish or deletion time is closed the same way.
//!
//! **Utilisation.** With `[kubernetes.prometheus]`, the mean of DCGM's GPU utilisation (or its
//! graphics-engine activity under MIG; both of the exporter's naming schemes, see
//! [`super::dcgm`]) over `[since, now)` per pod becomes the observation's utilisation, hence
//! ActiveDuration = utilisation x AvailableDuration in each month's record. It is the utilisation
//! of the last metering interval applied to the pod's whole month, so it is exact for pods that
//! started within the interval and an estimate for older ones. A Prometheus failure is a warning:
//! GPU-hours do not depend on it, and ActiveDuration and energy are then left out.
//!
//! **Energy.** The increase of DCGM's energy counter per pod and GPU, over the whole hold of the
//! pods listed (from the earliest start among them to `now`), shared among the pods that held one
//! GPU at once by held time ([`super::dcgm_energy`]), becomes the observation's `energy_wh`. It
//! covers what Prometheus still keeps: a pod older than its retention gets the energy of the
//! retained part only (an undercount, never an overcount).

use chrono::{DateTime, Utc};

use accelfed_schemas::names::SiteName;
use accelfed_schemas::usage::Observation;

use crate::backend::Metering;

use super::client::{self, KubeClient};
use super::config::KubernetesConfig;
use super::dcgm::{self, DcgmReadings};
use super::dcgm_energy::{self, Holds};
use super::error::KubernetesError;
use super::inventory::Inventory;
use super::usage;
use super::vo::namespace_vos;

/// What the pure part of the meter makes of one run: observations and the warnings met.
#[derive(Debug, Clone)]
pub struct Metered {
    pub observations: Vec<Observation>,
    /// Objects skipped or defaulted, each naming the object.
    pub warnings: Vec<String>,
}

/// The GPU pods that held GPUs in `[since, now)`, one observation per pod and GPU resource
/// (`AssociatedRecordType = job`, `AssociatedRecord = <cluster>/<namespace>/<pod uid>`).
///
/// All or nothing for the API server: a list that fails, times out or keeps expiring is an error
/// naming the cluster and path, and no observation of the run is returned. Prometheus failing is
/// a warning (observations without utilisation). Warnings (pods skipped, namespaces without a VO,
/// bad quantities or times) are logged with `tracing`, each naming its object.
pub async fn observe(
    config: &KubernetesConfig,
    site: &SiteName,
    since: DateTime<Utc>,
    now: DateTime<Utc>,
) -> Result<Vec<Observation>, KubernetesError> {
    Ok(meter(config, site, since, now).await?.observations)
}

/// [`observe`], with the cluster's installed GPUs from the same listing ([`super::map::installed`]):
/// the nodes the pods were read with are the nodes `provide` publishes.
pub async fn meter(
    config: &KubernetesConfig,
    site: &SiteName,
    since: DateTime<Utc>,
    now: DateTime<Utc>,
) -> Result<Metering, KubernetesError> {
    let service = config.id.get_ref().as_str();
    let inventory = KubeClient::new(config).await?.inventory().await?;
    let mut warnings = Vec::new();
    let energy_since = inventory
        .pods
        .iter()
        .filter_map(|pod| pod.start)
        .min()
        .unwrap_or(since)
        .min(since);
    let readings = match &config.prometheus {
        Some(prometheus) => {
            let asked =
                client::prometheus::answers(prometheus, since, energy_since, now, &mut warnings);
            match asked.await {
                Ok(answers) => Some(DcgmReadings {
                    utilisation: dcgm::utilisation(&answers.gpu_util, &answers.gr_engine),
                    energy: dcgm_energy::share(
                        &answers.energy,
                        &holds(&inventory, energy_since, now),
                    ),
                }),
                Err(err) => {
                    warnings.push(format!("{err}; ActiveDuration and energy left out"));
                    None
                }
            }
        }
        None => None,
    };
    let metered = observe_inventory(config, site, &inventory, readings.as_ref(), since, now);
    for warning in warnings.iter().chain(&metered.warnings) {
        tracing::warn!(provider = "kubernetes", service, "{warning}");
    }
    tracing::info!(
        provider = "kubernetes",
        service,
        gpu_pods = inventory.pods.len(),
        observations = metered.observations.len(),
        "read the GPU pods of {since} to {now}"
    );
    Ok(Metering {
        observations: metered.observations,
        installed: Ok(super::map::installed(&inventory)),
    })
}

/// Each started pod's hold within `[from, now)`, the span the energy query covered.
fn holds(inventory: &Inventory, from: DateTime<Utc>, now: DateTime<Utc>) -> Holds {
    inventory
        .pods
        .iter()
        .filter_map(|pod| {
            let start = pod.start?.max(from);
            let end = pod.end.unwrap_or(now).min(now);
            Some(((pod.namespace.clone(), pod.name.clone()), (start, end)))
        })
        .collect()
}

/// The pure part of [`observe`]: an inventory (and utilisation) to the observations of the pods
/// that held GPUs in `[since, now)`. The inventory's own warnings are included.
pub fn observe_inventory(
    config: &KubernetesConfig,
    site: &SiteName,
    inventory: &Inventory,
    dcgm: Option<&DcgmReadings>,
    since: DateTime<Utc>,
    now: DateTime<Utc>,
) -> Metered {
    let mut warnings = inventory.warnings.clone();
    let vos = namespace_vos(config, &inventory.namespaces, &mut warnings);
    let observations = usage::observations(
        site,
        config.cluster_name(),
        inventory,
        &vos,
        dcgm,
        &mut warnings,
    )
    .into_iter()
    .filter(|o| o.start < now && o.end.is_none_or(|end| end > since))
    .collect();
    Metered {
        observations,
        warnings,
    }
}
