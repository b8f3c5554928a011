//! Serving the registry's router over the connections the shared accept loop hands on
//! ([`crate::listen`]: limits, TLS handshake, idle timeout), as [`crate::listen::http1`] serves
//! every HTTP/1.1 port.

use std::time::Duration;

use axum::Router;

use crate::listen::Incoming;

/// Serves `app` on every connection of `incoming` until it ends (the accept loop stopped).
pub async fn serve(incoming: Incoming, app: Router, header_timeout: Duration) {
    crate::listen::http1::serve(incoming, app, header_timeout, "registry API").await;
}
