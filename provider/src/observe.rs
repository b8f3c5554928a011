//! Runs every configured meter and collects the site's usage observations, as [`crate::gather`]
//! does for capacity.
//!
//! The contract for a backend: its module exposes
//! `pub async fn observe(config: &<Backend>Config, site: &SiteName, since, now) ->
//! Result<Vec<Observation>, <Backend>Error>` returning one observation per VM, pod or job that held
//! GPUs in `[since, now)`, each with its whole interval (records are absolute per month). A backend
//! that fails contributes nothing and is reported in [`Observed::failures`]: all or nothing per
//! backend, so a half-read cloud never writes records that look complete. Backends without a meter
//! (`[static]`) contribute nothing.

use chrono::{DateTime, Utc};

use accelfed_schemas::usage::Observation;

use crate::config::{Config, ProviderConfig};
use crate::gather::ProviderFailure;

/// The outcome of one run of the meters.
#[derive(Debug, Clone, Default)]
pub struct Observed {
    pub observations: Vec<Observation>,
    pub failures: Vec<ProviderFailure>,
}

/// Runs the meter of every configured backend for `[since, now)`. A failing backend is reported in
/// [`Observed::failures`] and the others still deliver.
pub async fn observe(config: &Config, since: DateTime<Utc>, now: DateTime<Utc>) -> Observed {
    let site = &config.site.name;
    let mut observed = Observed::default();
    for provider in config.providers() {
        match provider {
            // Static services declare capacity only; manual usage comes from an observations file.
            ProviderConfig::Static(_) => {}
            ProviderConfig::Openstack(openstack) => {
                let name = format!("openstack {:?}", openstack.id.get_ref().as_str());
                match crate::openstack::observe(openstack, site, since, now).await {
                    Ok(found) => observed.observations.extend(found),
                    Err(err) => observed.failures.push(ProviderFailure {
                        provider: name,
                        message: err.to_string(),
                    }),
                }
            }
            ProviderConfig::Slurm(slurm) => {
                let index = config
                    .slurm
                    .iter()
                    .position(|s| std::ptr::eq(s, slurm))
                    .unwrap_or(0);
                match crate::slurm::observe(slurm, site, since, now).await {
                    Ok(found) => observed.observations.extend(found),
                    Err(err) => observed.failures.push(ProviderFailure {
                        provider: format!("slurm[{index}]"),
                        message: err.to_string(),
                    }),
                }
            }
            ProviderConfig::Kubernetes(kubernetes) => {
                // Named as `gather` names it, so provide and meter report the same cluster alike.
                let index = config
                    .kubernetes
                    .iter()
                    .position(|k| std::ptr::eq(k, kubernetes))
                    .unwrap_or(0);
                match crate::kubernetes::observe(kubernetes, site, since, now).await {
                    Ok(found) => observed.observations.extend(found),
                    Err(err) => observed.failures.push(ProviderFailure {
                        provider: format!("kubernetes[{index}]"),
                        message: err.to_string(),
                    }),
                }
            }
        }
    }
    observed
}
