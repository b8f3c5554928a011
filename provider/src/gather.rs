//! Runs the configured providers and assembles the site's snapshot.

use chrono::{DateTime, Utc};

use accelfed_schemas::glue::{
    AdminDomain, Contact, Location, Service, SiteSnapshot, SnapshotError,
};

use crate::config::{Config, ProviderConfig, SiteConfig};

/// A provider that could not deliver; what the others delivered is still published.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProviderFailure {
    /// `provider[1] (openstack)`.
    pub provider: String,
    pub message: String,
}

/// The outcome of one run of the providers.
#[derive(Debug, Clone)]
pub struct Gathered {
    pub snapshot: SiteSnapshot,
    pub failures: Vec<ProviderFailure>,
}

/// Runs every provider of `config` and returns the site's snapshot as of `now`. A provider that fails
/// is reported in [`Gathered::failures`] and the others still publish. Fails only when the assembled
/// snapshot is inconsistent (an ID used by two providers), which is a configuration error.
///
/// Async because the providers that query middleware do network IO; the static provider does none.
pub async fn gather(config: &Config, now: DateTime<Utc>) -> Result<Gathered, SnapshotError> {
    let mut services = Vec::new();
    #[allow(unused_mut, reason = "providers that can fail push here")]
    let mut failures = Vec::new();
    for provider in config.providers() {
        match provider {
            ProviderConfig::Static(static_config) => services.extend(static_config.services()),
            ProviderConfig::Openstack(openstack) => {
                let provider = format!("openstack {:?}", openstack.id.get_ref().as_str());
                match crate::openstack::provide(openstack).await {
                    Ok(provided) => {
                        services.push(Service::Cloud(provided.mapped.service));
                        failures.extend(provided.failures.into_iter().map(|message| {
                            ProviderFailure {
                                provider: provider.clone(),
                                message,
                            }
                        }));
                    }
                    Err(err) => failures.push(ProviderFailure {
                        provider,
                        message: err.to_string(),
                    }),
                }
            }
            // Run after the loop, with their index in `[[kubernetes]]`.
            ProviderConfig::Kubernetes(_) => {}
            ProviderConfig::Slurm(slurm) => {
                let index = config
                    .slurm
                    .iter()
                    .position(|s| std::ptr::eq(s, slurm))
                    .unwrap_or(0);
                match crate::slurm::provide(slurm).await {
                    Ok(service) => services.push(Service::Computing(service)),
                    Err(err) => failures.push(ProviderFailure {
                        provider: format!("slurm[{index}]"),
                        message: err.to_string(),
                    }),
                }
            }
        }
    }
    for (index, kubernetes) in config.kubernetes.iter().enumerate() {
        match crate::kubernetes::provide(kubernetes).await {
            Ok(service) => services.push(service),
            Err(err) => failures.push(ProviderFailure {
                provider: format!("kubernetes[{index}]"),
                message: err.to_string(),
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
        validity_s: config.site.validity,
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
            latitude: location.latitude,
            longitude: location.longitude,
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
