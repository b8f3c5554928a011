//! `accelfed serve`: the gRPC ingest over TLS and the `/metrics` endpoint, on listeners the caller
//! binds (tests bind port 0), until `shutdown` completes (house-style rule 10).
//!
//! Connections on both of its ports come through [`crate::listen`] (limits, handshake, idle and
//! header-read timeouts; on the gRPC port TLS, HTTP/2 limits and an idle timeout counted in calls,
//! not PINGs), and
//! every call's token is checked from its headers by an interceptor before the message body is
//! read or decoded, so an unauthenticated sender costs the service a header parse, not a 100 MB
//! decode.

use std::future::Future;
use std::sync::Arc;

use tokio::net::TcpListener;
use tonic::service::interceptor::InterceptedService;
use tonic::transport::Server;

use accelfed_accounting::repository::Repository;
use accelfed_accounting::wire::proto::accounting_server::AccountingServer;
use accelfed_schemas::cause;

use crate::auth::Tokens;
use crate::batch_limits::BatchLimits;
use crate::ingest::{IngestService, authenticator};
use crate::listen::requests::TrackRequests;
use crate::listen::{ConnectionLimits, Gate, Idle, Port, Security, http1};
use crate::metrics::Metrics;

/// What the service needs, resolved from the configuration.
pub struct ServeSettings {
    pub repository: Repository,
    pub tokens: Tokens,
    /// The certificate and key each new TLS handshake presents (a reload replaces them).
    pub identity: Arc<crate::listen::tls::Identity>,
    /// Records per call, per site.
    pub batches: BatchLimits,
    /// Connections at once, handshake and idle timeouts.
    pub limits: ConnectionLimits,
    /// What `/metrics` renders (its per-site series kept in the repository).
    pub metrics: Arc<Metrics>,
}

impl std::fmt::Debug for ServeSettings {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ServeSettings")
            .field("repository", &self.repository)
            .field("batches", &self.batches)
            .finish_non_exhaustive()
    }
}

/// Why the service stopped or could not start.
#[derive(Debug, thiserror::Error)]
pub enum ServeError {
    #[error("TLS: {0}")]
    Tls(String),
    #[error("gRPC server: {0}")]
    Grpc(String),
    #[error("metrics endpoint: {0}")]
    Metrics(String),
}

/// The gRPC port's HTTP/2 limits (issue #23: a client must not hold a connection, or the
/// service's memory, with frames that carry no request).
mod http2 {
    use std::time::Duration;

    /// Calls at once on one connection; `ship` sends at most 16 (its `in_flight` bound).
    pub const MAX_CONCURRENT_STREAMS: u32 = 32;
    /// A call's headers, all together: a gRPC call sends a handful of short ones (the token is 71
    /// bytes); h2 would otherwise accept 16 MiB.
    pub const MAX_HEADER_LIST_BYTES: u32 = 16 * 1024;
    /// How long the server waits for the answer to its keep-alive PING before closing.
    pub const KEEPALIVE_TIMEOUT: Duration = Duration::from_secs(20);
    /// After this a connection is asked to go away (GOAWAY; calls in flight finish, the client
    /// reconnects), so even a client that keeps calling cannot hold one place for ever.
    pub const MAX_CONNECTION_AGE: Duration = Duration::from_secs(3600);
    /// A stream that never finishes (a sender that stops halfway through a message) ends here.
    pub const CALL_TIMEOUT: Duration = Duration::from_secs(600);
    /// Streams a client opened and reset before the server took them (the "rapid reset" attack,
    /// CVE-2023-44487), and streams the server reset for the client's errors, past which the
    /// connection is closed with GOAWAY. PING and SETTINGS floods are bounded by listen::frames.
    pub const MAX_PENDING_RESETS: usize = 20;
    pub const MAX_ERROR_RESETS: usize = 64;
}

/// Serves until `shutdown` completes, then finishes the calls in flight.
pub async fn serve(
    settings: ServeSettings,
    grpc: TcpListener,
    metrics: Option<TcpListener>,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> Result<(), ServeError> {
    let counters = settings.metrics.clone();
    let tokens = Arc::new(settings.tokens);
    let limits = settings.limits;
    let service = IngestService {
        repository: settings.repository,
        tokens: tokens.clone(),
        metrics: counters.clone(),
        batches: Arc::new(settings.batches.clone()),
    };
    // The largest site's message; each site's own is checked by the service once it is known.
    let message_limit = settings.batches.largest_message_bytes();
    let tls =
        crate::listen::tls::acceptor_for(settings.identity, b"h2").map_err(ServeError::Tls)?;
    let (stop_tx, stop_rx) = tokio::sync::watch::channel(false);
    let mut grpc_stop = stop_rx.clone();
    let port = Port {
        name: "grpc",
        security: Security::Tls(tls),
        idle: Idle::Requests,
    };
    let incoming = crate::listen::accept(port, grpc, Gate::new(limits), stop_rx.clone());
    let metrics_task = metrics
        .map(|listener| tokio::spawn(serve_metrics(listener, counters.clone(), limits, stop_rx)));

    tokio::spawn(async move {
        shutdown.await;
        let _ = stop_tx.send(true);
    });

    let accounting = AccountingServer::new(service)
        .max_decoding_message_size(message_limit)
        .max_encoding_message_size(message_limit);
    let grpc_result = Server::builder()
        .timeout(http2::CALL_TIMEOUT)
        .max_concurrent_streams(http2::MAX_CONCURRENT_STREAMS)
        .http2_max_header_list_size(http2::MAX_HEADER_LIST_BYTES)
        // PINGs only where nothing was received for half the idle timeout: they find a peer that
        // vanished during a long call; an idle connection is closed by the request count, which
        // PINGs do not move (listen::requests).
        .http2_keepalive_interval(Some(limits.idle_timeout() / 2))
        .http2_keepalive_timeout(Some(http2::KEEPALIVE_TIMEOUT))
        .max_connection_age(http2::MAX_CONNECTION_AGE)
        .http2_max_pending_accept_reset_streams(Some(http2::MAX_PENDING_RESETS))
        .http2_max_local_error_reset_streams(Some(http2::MAX_ERROR_RESETS))
        .add_service(TrackRequests::new(InterceptedService::new(
            accounting,
            authenticator(tokens, counters.clone()),
        )))
        .serve_with_incoming_shutdown(incoming, async move {
            let _ = grpc_stop.wait_for(|stop| *stop).await;
        })
        .await
        .map_err(|e| ServeError::Grpc(cause::chain(&e)));
    if let Some(task) = metrics_task {
        task.await.map_err(|e| ServeError::Metrics(e.to_string()))?;
    }
    grpc_result
}

/// `GET /metrics` in plain HTTP/1.1 through the same accept path as the other ports (connection
/// limits, idle and header-read timeouts), until `stop` turns true.
async fn serve_metrics(
    listener: TcpListener,
    counters: Arc<Metrics>,
    limits: ConnectionLimits,
    stop: tokio::sync::watch::Receiver<bool>,
) {
    let app = axum::Router::new().route(
        "/metrics",
        axum::routing::get(move || {
            let counters = counters.clone();
            async move {
                (
                    [(
                        axum::http::header::CONTENT_TYPE,
                        "text/plain; version=0.0.4; charset=utf-8",
                    )],
                    counters.render().await,
                )
            }
        }),
    );
    let port = Port {
        name: "metrics",
        security: Security::Plain,
        idle: Idle::Bytes,
    };
    let connections = crate::listen::accept(port, listener, Gate::new(limits), stop);
    http1::serve(connections, app, limits.idle_timeout(), "metrics endpoint").await;
}
