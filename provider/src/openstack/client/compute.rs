//! Nova's listings (flavors, with their access lists for `provide`, and servers) at the newest
//! compute microversion accelfed reads, asked for at once with Nova's version document instead of
//! after it: the version document only says whether the cloud speaks that microversion, and on a
//! cloud that does the listings would otherwise wait one more round trip before they start (the
//! meter's wall is the chain token, version document, server listing). A cloud that does not speak
//! it answers the listings `406 Not Acceptable` at once; they are then asked again at the version
//! its document offers, as they were before.

use std::collections::BTreeMap;
use std::sync::Arc;

use super::super::api::{Flavor, Server};
use super::super::error::OpenstackError;
use super::listing;
use super::session::Session;

/// The newest compute microversion accelfed reads (Zed), the one asked for first.
pub const NEWEST: (u32, u32) = (2, 93);

/// The flavors, with their access lists where asked for.
pub type Flavors = (
    Vec<Flavor>,
    Option<Result<BTreeMap<String, Vec<String>>, OpenstackError>>,
);

/// What Nova answered: the microversion in use (`None`: the cloud's base version), the flavors
/// and the servers.
pub struct NovaListings {
    pub microversion: Option<String>,
    pub flavors: Result<Flavors, OpenstackError>,
    pub servers: Result<Vec<Server>, OpenstackError>,
}

/// Nova's listings; `access` adds the private flavors' access lists, `changes_since` the servers
/// deleted since then ([`listing::servers`]).
pub async fn listings(
    session: &Arc<Session>,
    compute: &str,
    access: bool,
    changes_since: Option<&str>,
) -> NovaListings {
    let newest = format!("{}.{}", NEWEST.0, NEWEST.1);
    let offered = listing::compute_microversion(session, compute);
    let first = at(
        session,
        compute,
        Some(newest.as_str()),
        access,
        changes_since,
    );
    let (offered, (flavors, servers)) = tokio::join!(offered, first);
    if !not_acceptable(flavors.as_ref().err()) && !not_acceptable(servers.as_ref().err()) {
        return NovaListings {
            microversion: Some(newest),
            flavors,
            servers,
        };
    }
    tracing::debug!(
        offered = offered.as_deref().unwrap_or("none"),
        "Nova does not speak compute {newest}; listing again at the version it offers"
    );
    let (flavors, servers) = at(session, compute, offered.as_deref(), access, changes_since).await;
    NovaListings {
        microversion: offered,
        flavors,
        servers,
    }
}

/// The listings at `microversion`, the flavors (then their access) beside the servers.
async fn at(
    session: &Arc<Session>,
    compute: &str,
    microversion: Option<&str>,
    access: bool,
    changes_since: Option<&str>,
) -> (
    Result<Flavors, OpenstackError>,
    Result<Vec<Server>, OpenstackError>,
) {
    let flavors = async {
        let flavors = listing::flavors(session, compute, microversion).await?;
        let access = if access {
            Some(listing::flavor_access(session, compute, &flavors).await)
        } else {
            None
        };
        Ok::<_, OpenstackError>((flavors, access))
    };
    let servers = listing::servers(session, compute, microversion, changes_since);
    tokio::join!(flavors, servers)
}

/// Nova's answer to a microversion it does not speak.
fn not_acceptable(err: Option<&OpenstackError>) -> bool {
    matches!(err, Some(OpenstackError::Http { status: 406, .. }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_406_asks_again() {
        let http = |status| OpenstackError::Http {
            service: "nova".into(),
            url: "http://nova/servers/detail".into(),
            status,
            message:
                "Version 2.93 is not supported by the API. Minimum is 2.1 and maximum is 2.90."
                    .into(),
            retry: false,
        };
        assert!(not_acceptable(Some(&http(406))));
        assert!(!not_acceptable(Some(&http(400))));
        assert!(!not_acceptable(Some(&http(503))));
        assert!(!not_acceptable(None));
    }
}
