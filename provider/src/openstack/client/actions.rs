//! Each GPU server's instance actions (`GET /servers/{id}/os-instance-actions`), for the meter's
//! idle time ([`super::super::states`]). One request per server, at most the session's limit at
//! once; only servers that held GPUs in the metering window are asked about. Asked at the compute
//! microversion of the listings: from 2.21 Nova also answers for deleted servers.

use std::sync::Arc;

use super::super::error::OpenstackError;
use super::super::states::{self, Change};
use super::listing::fan_out;
use super::session::Session;

/// Per server id (in the order given), its state changes or why Nova could not say.
pub async fn changes(
    session: &Arc<Session>,
    compute: &str,
    microversion: Option<&str>,
    servers: Vec<String>,
) -> Vec<(String, Result<Vec<Change>, OpenstackError>)> {
    let answers = fan_out(servers.clone(), |id| {
        let session = Arc::clone(session);
        let url = format!("{compute}/servers/{id}/os-instance-actions");
        let version = microversion.map(str::to_owned);
        async move {
            let microversion = version.as_deref().map(|v| ("compute", v));
            session
                .get_read("nova", &url, microversion, states::read)
                .await
        }
    })
    .await;
    servers.into_iter().zip(answers).collect()
}
