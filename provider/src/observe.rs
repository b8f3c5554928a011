//! Runs every configured meter and collects the site's usage observations, as [`crate::gather`]
//! does for capacity, and beside them the GPUs each backend has installed.
//!
//! Each backend's meter is its [`crate::config::ProviderConfig::observe`] (the contract is in
//! `backend.rs`). A backend that fails contributes nothing and is reported in
//! [`Observed::failures`], named as `gather` names it, so provide and meter report the same
//! backend alike: all or nothing per backend, so a half-read cloud never writes records that look
//! complete. Backends without a meter (`[static]`: manual usage comes from an observations file)
//! contribute no observations, only their installed GPUs.
//!
//! The installed GPUs come from the listings the usage pass read (plus only what it lacked: an
//! OpenStack cloud's Placement inventories, a Slurm cluster's nodes), each backend computing them
//! with the code `provide` publishes them with, so the capacity bound is the published figure
//! without a second pass over the site.

use std::collections::BTreeSet;

use chrono::{DateTime, Utc};

use accelfed_schemas::glue::AcceleratorCapacity;
use accelfed_schemas::gpu::GpuModel;
use accelfed_schemas::usage::Observation;

use crate::config::Config;
use crate::gather::ProviderFailure;

/// A backend whose usage was read but whose installed GPUs were not.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Uncounted {
    /// The backend, named as [`ProviderFailure::provider`].
    pub provider: String,
    /// Why its installed GPUs are unknown.
    pub message: String,
    /// The models its observations name: their usage cannot be bounded this run.
    pub models: BTreeSet<GpuModel>,
}

/// The outcome of one run of the meters.
#[derive(Debug, Clone, Default)]
pub struct Observed {
    pub observations: Vec<Observation>,
    pub failures: Vec<ProviderFailure>,
    /// Every metered (or static) backend's installed GPUs: its manager's accelerators, as the
    /// document `provide` publishes states them (counts in slots of each accelerator's sharing).
    pub installed: Vec<AcceleratorCapacity>,
    /// Backends that metered but could not say what they have installed.
    pub uncounted: Vec<Uncounted>,
    /// How many configured backends meter usage (0: only `[static]`, whose usage comes from the
    /// manual-usage file alone).
    pub meters: usize,
}

/// Runs the meter of every configured backend for `[since, now)`. A failing backend is reported in
/// [`Observed::failures`] and the others still deliver.
pub async fn observe(config: &Config, since: DateTime<Utc>, now: DateTime<Utc>) -> Observed {
    let site = &config.site.name;
    let mut observed = Observed::default();
    for (index, provider) in config.providers_indexed() {
        observed.meters += usize::from(provider.meters());
        let started = std::time::Instant::now();
        let result = provider.observe(site, since, now).await;
        log_listing(&provider.label(index), &result, started.elapsed());
        match result {
            Ok(metering) => {
                match metering.installed {
                    Ok(installed) => observed.installed.extend(installed),
                    Err(message) => observed.uncounted.push(Uncounted {
                        provider: provider.label(index),
                        message,
                        models: metering
                            .observations
                            .iter()
                            .map(|o| o.model.clone())
                            .collect(),
                    }),
                }
                observed.observations.extend(metering.observations);
            }
            Err(failure) => observed.failures.push(ProviderFailure {
                provider: provider.label(index),
                message: failure.message,
                retry: failure.retry,
            }),
        }
    }
    observed
}

/// `-v`'s line per backend: what its listing gave (observations, installed accelerators in
/// physical GPUs) and how long it took, so a slow or empty backend is found without a trace.
fn log_listing(
    provider: &str,
    result: &Result<crate::backend::Metering, crate::backend_error::BackendError>,
    elapsed: std::time::Duration,
) {
    let elapsed_ms = u64::try_from(elapsed.as_millis()).unwrap_or(u64::MAX);
    match result {
        Ok(metering) => {
            let (accelerators, gpus) = match &metering.installed {
                Ok(installed) => (
                    installed.len(),
                    installed
                        .iter()
                        .map(|a| a.physical().total.get())
                        .sum::<f64>(),
                ),
                Err(_) => (0, 0.0),
            };
            tracing::debug!(
                provider,
                observations = metering.observations.len(),
                accelerators,
                installed_gpus = gpus,
                installed_read = metering.installed.is_ok(),
                elapsed_ms,
                "backend listed"
            );
        }
        Err(_) => tracing::debug!(provider, elapsed_ms, "backend listing failed"),
    }
}
