//! Starting the registry inside `accelfed serve`: open the store, load the index, serve the API
//! over TLS on the listener the caller bound, until `stop` turns true.

use std::sync::Arc;

use tokio::net::TcpListener;

use super::check::Checker;
use super::config::RegistryConfig;
use super::http::{ApiState, router};
use super::registry::Registry;
use super::store::DocumentStore;
use crate::auth::Tokens;

/// Why the registry could not start.
#[derive(Debug, thiserror::Error)]
pub enum StartError {
    #[error("registry store: {0}")]
    Store(#[from] super::store::StoreError),
    #[error("{0}")]
    Schema(#[from] super::check::SchemaError),
    #[error("registry TLS: {0}")]
    Tls(String),
}

/// Opens the registry on `location` (see [`DocumentStore::open`]) and serves it on `listener`,
/// the API and the web page ([`super::web`], with the accounting charts from `repository`).
/// Returns the registry (for other views of it, such as the LDAP sync) and the serving task.
#[allow(clippy::too_many_arguments)]
pub async fn start(
    location: &str,
    config: &RegistryConfig,
    tokens: Tokens,
    certificate_pem: &[u8],
    key_pem: &[u8],
    listener: TcpListener,
    stop: tokio::sync::watch::Receiver<bool>,
    repository: Option<accelfed_accounting::repository::Repository>,
) -> Result<(Arc<Registry>, tokio::task::JoinHandle<()>), StartError> {
    let store = DocumentStore::open(location).await?;
    let checker = Checker::new(config.max_document_bytes)?;
    let registry = Arc::new(Registry::open(store, checker, config.keep_history).await?);
    let acceptor = super::https::acceptor(certificate_pem, key_pem).map_err(StartError::Tls)?;
    let app = router(ApiState {
        registry: registry.clone(),
        tokens: Arc::new(tokens),
        max_body: config.max_document_bytes,
    })
    .merge(super::web::routes(super::web::WebState {
        registry: registry.clone(),
        repository,
    }));
    let task = tokio::spawn(super::https::serve(listener, acceptor, app, stop));
    Ok((registry, task))
}
