//! Serving the registry's router over the connections the shared accept loop hands on
//! ([`crate::listen`]: limits, TLS handshake, idle timeout): HTTP/1.1 with keep-alive, one task per
//! connection, and a bound on how long a request's headers may take to arrive.

use std::time::Duration;

use axum::Router;
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::service::TowerToHyperService;

use crate::listen::Incoming;

/// Serves `app` on every connection of `incoming` until it ends (the accept loop stopped).
pub async fn serve(mut incoming: Incoming, app: Router, header_timeout: Duration) {
    while let Some(connection) = incoming.next().await {
        let app = app.clone();
        tokio::spawn(async move {
            let peer = connection.peer();
            let service = TowerToHyperService::new(app);
            if let Err(error) = hyper::server::conn::http1::Builder::new()
                .timer(TokioTimer::new())
                .header_read_timeout(header_timeout)
                .serve_connection(TokioIo::new(connection), service)
                .await
            {
                tracing::debug!(%peer, %error, "registry API: connection ended");
            }
        });
    }
}
