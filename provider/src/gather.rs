//! Runs the configured providers and assembles the site's snapshot.

use chrono::{DateTime, Utc};

use accelfed_schemas::glue::{
    AdminDomain, Contact, Location, Service, SiteSnapshot, SnapshotError,
};

use crate::backend_error::Retry;
use crate::config::{Config, SiteConfig};

/// A provider that could not deliver; what the others delivered is still published.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProviderFailure {
    /// The provider as [`crate::config::ProviderConfig::label`] names it: `slurm[0]`,
    /// `kubernetes[1]`, `openstack "cloud"`.
    pub provider: String,
    pub message: String,
    /// Whether the next run may succeed as things stand (an outage) or not (a misconfiguration).
    pub retry: Retry,
}

/// The outcome of one run of the providers.
#[derive(Debug, Clone)]
pub struct Gathered {
    pub snapshot: SiteSnapshot,
    pub failures: Vec<ProviderFailure>,
}

/// Runs every provider of `config`, one after the other, and returns the site's snapshot as of
/// `now`. A provider that fails is reported in [`Gathered::failures`] and the others still
/// publish. Fails only when the assembled snapshot is inconsistent (an ID used by two providers),
/// which is a configuration error.
///
/// Async because the providers that query middleware do network IO; the static provider does none.
pub async fn gather(config: &Config, now: DateTime<Utc>) -> Result<Gathered, SnapshotError> {
    let mut services = Vec::new();
    let mut failures = Vec::new();
    for (index, provider) in config.providers_indexed() {
        let name = provider.label(index);
        match provider.provide().await {
            Ok(provision) => {
                services.extend(provision.services);
                failures.extend(
                    provision
                        .failures
                        .into_iter()
                        .map(|failure| ProviderFailure {
                            provider: name.clone(),
                            message: failure.message,
                            retry: failure.retry,
                        }),
                );
            }
            Err(failure) => failures.push(ProviderFailure {
                provider: name,
                message: failure.message,
                retry: failure.retry,
            }),
        }
    }
    // EGI's cloud-info-api finds a site's GOCDB id in each service's OtherInfo.
    if let Some(gocdb_id) = &config.site.gocdb_id {
        for service in &mut services {
            let other_info = match service {
                Service::Computing(service) => &mut service.other_info,
                Service::Cloud(service) => &mut service.other_info,
            };
            other_info
                .entry("gocdb_id".to_owned())
                .or_insert_with(|| gocdb_id.to_string());
        }
    }
    let snapshot = SiteSnapshot {
        domain: domain(&config.site),
        services,
        creation_time: now,
        validity_s: *config.site.validity.get_ref(),
    };
    snapshot.validate()?;
    Ok(Gathered { snapshot, failures })
}

fn domain(site: &SiteConfig) -> AdminDomain {
    AdminDomain {
        name: site.name.clone(),
        description: site.description.clone(),
        www: site.www.clone(),
        gocdb_id: site.gocdb_id.clone(),
        location: site.location.as_ref().map(|location| Location {
            place: location.place.clone(),
            country: location.country.clone(),
            latitude: location.latitude.as_ref().map(|degrees| *degrees.get_ref()),
            longitude: location
                .longitude
                .as_ref()
                .map(|degrees| *degrees.get_ref()),
        }),
        contacts: site
            .contacts
            .iter()
            .map(|contact| Contact {
                kind: contact.kind.clone(),
                detail: contact.detail.clone(),
            })
            .collect(),
        other_info: site.other_info.clone(),
    }
}
