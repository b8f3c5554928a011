//! One run of the OpenStack provider and of the meter's listing: credentials, listings, mapping.
//! Warnings (odd flavors, unreadable project properties) are logged; failures are returned so the
//! caller exits 1 while still publishing what was read.

use super::client::{self, Fetched, Listing};
use super::config::OpenstackConfig;
use super::error::OpenstackError;
use super::map::{Mapped, map};

/// The cloud's service and VM usage, with the failures that degraded it.
#[derive(Debug, Clone)]
pub struct Provided {
    pub mapped: Mapped,
    pub failures: Vec<String>,
}

/// Reads what `listing` names of the cloud and maps it; with [`Listing::Usage`] the service is
/// only a by-product (no capacity, images or quotas) and the usage is what counts.
pub async fn provide(
    config: &OpenstackConfig,
    listing: Listing<'_>,
) -> Result<Provided, OpenstackError> {
    let creds = client::credentials(config)?;
    let Fetched { state, failures } = client::fetch(config, creds, listing).await?;
    let mapped = map(config, &state);
    for warning in &mapped.warnings {
        tracing::warn!(cloud = %config.id.get_ref(), "{warning}");
    }
    for failure in &failures {
        tracing::error!(cloud = %config.id.get_ref(), "{failure}");
    }
    Ok(Provided { mapped, failures })
}
