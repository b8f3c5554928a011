//! `accelfed query --ldap`: the registry's GPU filters against any BDII-like server.

use chrono::Utc;

use super::client::Connection;
use super::error::LdapError;
use super::{filter, read};
use accelfed_schemas::offer::{Filter, Offer};

/// The base a top-level BDII publishes under.
pub const DEFAULT_BASE: &str = "o=glue";

/// Searches `url` anonymously (trusting `trust` for `ldaps://`) under `base` and answers with the offers that pass `filter`, marked
/// fresh or stale now. The search narrows on the server (escaped values only); the registry's own
/// [`Filter::matches`] decides.
pub async fn query(
    url: &str,
    base: &str,
    filter: &Filter,
    trust: &accelfed_net::Trust,
) -> Result<Vec<Offer>, LdapError> {
    let mut connection = Connection::open(url, None, trust).await?;
    let environments = connection
        .search(base, &filter::environments(filter), &["*"])
        .await?;
    // With a VO asked for, the server first says whether any share admits it (the VO escaped in
    // the filter); the offers then list all their VOs, as the registry's answers do.
    if filter.vo.is_some()
        && connection
            .search(base, &filter::policies(filter), &["1.1"])
            .await?
            .is_empty()
    {
        connection.close().await;
        return Ok(Vec::new());
    }
    let policies = connection
        .search(
            base,
            &filter::policies(&Filter::default()),
            &["GLUE2PolicyRule"],
        )
        .await?;
    let shares = connection
        .search(
            base,
            filter::SHARES,
            &[
                "GLUE2ShareResourceForeignKey",
                "GLUE2ComputingShareExecutionEnvironmentForeignKey",
            ],
        )
        .await?;
    connection.close().await;
    let now = Utc::now();
    let (offers, skipped) = read::offers(&environments, &policies, &shares);
    for reason in &skipped {
        tracing::warn!(server = url, "{reason}");
    }
    let mut offers: Vec<Offer> = offers
        .into_iter()
        .map(|offer| offer.at(now))
        .filter(|offer| filter.matches(offer))
        .collect();
    offers.sort_by(|a, b| {
        (&a.site, &a.service_id, &a.resource_id).cmp(&(&b.site, &b.service_id, &b.resource_id))
    });
    Ok(offers)
}
