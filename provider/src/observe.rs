//! Runs every configured meter and collects the site's usage observations, as [`crate::gather`]
//! does for capacity.
//!
//! Each backend's meter is its [`crate::config::ProviderConfig::observe`] (the contract is in
//! `backend.rs`). A backend that fails contributes nothing and is reported in
//! [`Observed::failures`], named as `gather` names it, so provide and meter report the same
//! backend alike: all or nothing per backend, so a half-read cloud never writes records that look
//! complete. Backends without a meter (`[static]`: manual usage comes from an observations file)
//! contribute nothing.

use chrono::{DateTime, Utc};

use accelfed_schemas::usage::Observation;

use crate::config::Config;
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
    for (index, provider) in config.providers_indexed() {
        match provider.observe(site, since, now).await {
            Ok(found) => observed.observations.extend(found),
            Err(message) => observed.failures.push(ProviderFailure {
                provider: provider.label(index),
                message,
            }),
        }
    }
    observed
}
