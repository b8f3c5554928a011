//! One `ship` run with the accounting library's own client, as the central service's tests push
//! records: a new client (a new connection) with the site's token, one attempt, one batch on the
//! wire, so what the service does to that one call is what the test sees.

use std::time::Duration;

use accelfed_accounting::ship::{
    Backoff, Client, ClientSettings, ShipError, ShipOptions, ShipReport, ship,
};
use accelfed_accounting::spool::{ShipLimits, Spool};

/// Ships `spool`'s pending records to the gRPC endpoint `https://localhost:{port}`, trusting
/// `ca_pem`, with `token`: once, no retry.
pub async fn ship_once(
    spool: &mut Spool,
    port: u16,
    ca_pem: &str,
    token: &str,
) -> Result<ShipReport, ShipError> {
    let mut client = Client::new(&ClientSettings {
        endpoint: format!("https://localhost:{port}"),
        fallbacks: Vec::new(),
        ca_pem: Some(ca_pem.as_bytes().to_vec()),
        token: token.to_owned(),
        timeout: Duration::from_secs(10),
    })?;
    let options = ShipOptions {
        limits: ShipLimits::default(),
        backoff: Backoff {
            attempts: 1,
            initial: Duration::from_millis(1),
            max: Duration::from_millis(1),
        },
        in_flight: 1,
    };
    ship(spool, &mut client, &options).await
}
