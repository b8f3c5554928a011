//! Serving an axum router over HTTP/1.1 on the connections an accept loop hands on (limits, TLS
//! handshake where the port has TLS, idle timeout): keep-alive, one task per connection, and a
//! bound on how long a request's headers may take to arrive. The registry's HTTPS API and the
//! plain-HTTP metrics port both serve this way.

use std::time::Duration;

use axum::Router;
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::service::TowerToHyperService;

use super::Incoming;

/// Serves `app` on every connection of `incoming` until it ends (the accept loop stopped); `what`
/// names the service in the debug log of connections that ended with an error.
pub async fn serve(mut incoming: Incoming, app: Router, header_timeout: Duration, what: &str) {
    while let Some(connection) = incoming.next().await {
        let app = app.clone();
        let what = what.to_owned();
        tokio::spawn(async move {
            let peer = connection.peer();
            let service = TowerToHyperService::new(app);
            if let Err(error) = hyper::server::conn::http1::Builder::new()
                .timer(TokioTimer::new())
                .header_read_timeout(header_timeout)
                .serve_connection(TokioIo::new(connection), service)
                .await
            {
                tracing::debug!(%peer, %error, "{what}: connection ended");
            }
        });
    }
}
