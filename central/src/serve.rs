//! `accelfed serve`: the gRPC ingest over TLS and the `/metrics` endpoint, on listeners the caller
//! binds (tests bind port 0), until `shutdown` completes (house-style rule 10).
//!
//! Connections come through [`crate::listen`] (limits, handshake and idle timeouts, TLS), and
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

use crate::auth::Tokens;
use crate::ingest::{IngestService, authenticator};
use crate::listen::{ConnectionLimits, Gate};
use crate::metrics::Metrics;

/// What the service needs, resolved from the configuration.
pub struct ServeSettings {
    pub repository: Repository,
    pub tokens: Tokens,
    /// PEM certificate chain and key.
    pub certificate_pem: Vec<u8>,
    pub key_pem: Vec<u8>,
    pub max_batch: usize,
    /// Connections at once, handshake and idle timeouts.
    pub limits: ConnectionLimits,
}

impl std::fmt::Debug for ServeSettings {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ServeSettings")
            .field("repository", &self.repository)
            .field("max_batch", &self.max_batch)
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

/// Serves until `shutdown` completes, then finishes the calls in flight.
pub async fn serve(
    settings: ServeSettings,
    grpc: TcpListener,
    metrics: Option<TcpListener>,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> Result<(), ServeError> {
    let counters = Arc::new(Metrics::default());
    let tokens = Arc::new(settings.tokens);
    let service = IngestService {
        repository: settings.repository,
        tokens: tokens.clone(),
        metrics: counters.clone(),
        max_batch: settings.max_batch,
    };
    // A batch at the limit must fit in one message (about 1 KB per record, with room).
    let message_limit = settings.max_batch.saturating_mul(2048).max(4 * 1024 * 1024);
    let tls = crate::listen::tls::acceptor(&settings.certificate_pem, &settings.key_pem, b"h2")
        .map_err(ServeError::Tls)?;
    let (stop_tx, stop_rx) = tokio::sync::watch::channel(false);
    let mut grpc_stop = stop_rx.clone();
    let mut metrics_stop = stop_rx.clone();
    let incoming = crate::listen::incoming("grpc", grpc, tls, Gate::new(settings.limits), stop_rx);

    let metrics_task = match metrics {
        Some(listener) => {
            let counters = counters.clone();
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
                            counters.render(),
                        )
                    }
                }),
            );
            Some(tokio::spawn(async move {
                axum::serve(listener, app)
                    .with_graceful_shutdown(async move {
                        let _ = metrics_stop.wait_for(|stop| *stop).await;
                    })
                    .await
            }))
        }
        None => None,
    };

    tokio::spawn(async move {
        shutdown.await;
        let _ = stop_tx.send(true);
    });

    let accounting = AccountingServer::new(service)
        .max_decoding_message_size(message_limit)
        .max_encoding_message_size(message_limit);
    let grpc_result = Server::builder()
        // A stream that never finishes (a sender that stops halfway through a message) ends here.
        .timeout(std::time::Duration::from_secs(600))
        .add_service(InterceptedService::new(
            accounting,
            authenticator(tokens, counters.clone()),
        ))
        .serve_with_incoming_shutdown(incoming, async move {
            let _ = grpc_stop.wait_for(|stop| *stop).await;
        })
        .await
        .map_err(|e| ServeError::Grpc(e.to_string()));
    if let Some(task) = metrics_task {
        match task.await {
            Ok(Ok(())) => {}
            Ok(Err(e)) => return Err(ServeError::Metrics(e.to_string())),
            Err(e) => return Err(ServeError::Metrics(e.to_string())),
        }
    }
    grpc_result
}
