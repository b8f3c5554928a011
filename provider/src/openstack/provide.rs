//! One run of the OpenStack provider and of the meter's listing: credentials, listings, mapping.
//! Warnings (odd flavors, unreadable project properties) are logged; failures are returned so the
//! caller exits 1 while still publishing what was read.

use super::client::{self, Fetched, Listing};
use super::config::OpenstackConfig;
use super::error::OpenstackError;
use super::map::{Mapped, map, map_usage};
use super::usage::VmUsage;

/// The cloud's service and VM usage, with the failures that degraded it.
#[derive(Debug, Clone)]
pub struct Provided {
    pub mapped: Mapped,
    pub failures: Vec<String>,
}

/// Reads the whole service of the cloud ([`Listing::Service`]) and maps it; the meter reads less
/// ([`usage`]).
pub async fn provide(config: &OpenstackConfig) -> Result<Provided, OpenstackError> {
    let creds = client::credentials(config)?;
    let Fetched { state, failures } = client::fetch(config, creds, Listing::Service).await?;
    let mapped = map(config, &state);
    log(config, &mapped.warnings, &failures);
    Ok(Provided { mapped, failures })
}

/// The cloud's VM usage and the failures met while listing it.
#[derive(Debug, Clone)]
pub struct Used {
    pub usage: Vec<VmUsage>,
    pub failures: Vec<String>,
}

/// The meter's read: what [`Listing::Usage`] lists (servers deleted since `changes_since`, RFC
/// 3339, included), mapped to VM usage only.
pub async fn usage(config: &OpenstackConfig, changes_since: &str) -> Result<Used, OpenstackError> {
    let creds = client::credentials(config)?;
    let listing = Listing::Usage { changes_since };
    let Fetched { state, failures } = client::fetch(config, creds, listing).await?;
    let (usage, warnings) = map_usage(config, &state);
    log(config, &warnings, &failures);
    Ok(Used { usage, failures })
}

fn log(config: &OpenstackConfig, warnings: &[String], failures: &[String]) {
    for warning in warnings {
        tracing::warn!(cloud = %config.id.get_ref(), "{warning}");
    }
    for failure in failures {
        tracing::error!(cloud = %config.id.get_ref(), "{failure}");
    }
}
