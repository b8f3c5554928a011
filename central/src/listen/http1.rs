//! Serving an axum router over HTTP/1.1 on the connections an accept loop hands on (limits, TLS
//! handshake where the port has TLS, idle timeout): keep-alive, one task per connection, and a
//! bound on how long a request's headers may take to arrive. The registry's HTTPS API and the
//! plain-HTTP metrics port both serve this way.

use std::time::Duration;

use axum::Router;
use hyper::Request;
use hyper::body::Incoming;
use hyper::service::{Service as _, service_fn};
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::service::TowerToHyperService;

use super::Incoming as Connections;

/// The most bytes of a request's head (request line and headers) read before it is refused with
/// 431 Request Header Fields Too Large: a bearer token and a few headers are well under 1 KiB, so
/// 64 KiB leaves room for any client, where hyper's own bound is its read buffer (about 400 KB per
/// connection, and a head that arrives in one read may pass it). Bodies are not bound by it (the
/// registry's `max_document_bytes` bounds them).
pub const MAX_HEAD_BYTES: usize = 64 * 1024;

/// Serves `app` on every connection of `incoming` until it ends (the accept loop stopped); `what`
/// names the service in the debug log of connections that ended with an error.
pub async fn serve(mut incoming: Connections, app: Router, header_timeout: Duration, what: &str) {
    while let Some(connection) = incoming.next().await {
        let app = app.clone();
        let what = what.to_owned();
        tokio::spawn(async move {
            let peer = connection.peer();
            let info = connection.info();
            let app = TowerToHyperService::new(app);
            // Each request carries its connection's info (a push with a site's token marks the
            // connection as a site's) and counts as in flight until its response is ready, so a
            // full port closes idle keep-alive connections before busy ones (listen::gate).
            let service = service_fn(move |mut request: Request<Incoming>| {
                request.extensions_mut().insert(info.clone());
                let in_flight = info.requests.begin();
                let response = app.call(request);
                async move {
                    let response = response.await;
                    drop(in_flight);
                    response
                }
            });
            if let Err(error) = hyper::server::conn::http1::Builder::new()
                .timer(TokioTimer::new())
                .header_read_timeout(header_timeout)
                .max_header_size(MAX_HEAD_BYTES)
                .serve_connection(TokioIo::new(connection), service)
                .await
            {
                tracing::debug!(%peer, %error, "{what}: connection ended");
            }
        });
    }
}
