//! Starting the registry inside `accelfed serve`: open the store, load the index, serve the API
//! on the connections the port's accept loop hands on, until that loop stops.

use std::sync::Arc;
use std::time::Duration;

use super::check::Checker;
use super::config::RegistryConfig;
use super::http::{ApiState, router};
use super::state::Registry;
use super::store::DocumentStore;
use crate::auth::Tokens;
use crate::listen::Incoming;

/// Why the registry could not start.
#[derive(Debug, thiserror::Error)]
pub enum StartError {
    #[error("registry store: {0}")]
    Store(#[from] super::store::StoreError),
    #[error("{0}")]
    Schema(#[from] super::check::SchemaError),
}

/// Opens the registry on `location` (see [`DocumentStore::open`]) and serves it on `incoming`:
/// the API, the web page ([`super::web`], with the accounting charts) and, with `accounting`, the
/// report API on its repository. A request's headers must arrive within `header_timeout`; the
/// sites in `site_max_body` push smaller documents than `config`'s limit. Returns the registry
/// (for other views of it, such as the LDAP sync) and the serving task.
pub async fn start(
    location: &str,
    config: &RegistryConfig,
    tokens: Tokens,
    incoming: Incoming,
    header_timeout: Duration,
    accounting: Option<crate::report_api::ReportState>,
    site_max_body: std::collections::HashMap<accelfed_schemas::names::SiteName, usize>,
) -> Result<(Arc<Registry>, tokio::task::JoinHandle<()>), StartError> {
    let store = DocumentStore::open(location).await?;
    let checker = Checker::new(config.max_document_bytes)?
        .with_time_limits(config.time_limits())
        .with_max_entities(config.max_entities);
    let registry = Arc::new(Registry::open(store, checker, config.keep()).await?);
    // Other instances' pushes, as the shared database announces them.
    tokio::spawn(Arc::clone(&registry).follow());
    let app = router(ApiState {
        registry: registry.clone(),
        tokens: Arc::new(tokens),
        max_body: config.max_document_bytes,
        body_rate: config.body_rate(),
        site_max_body: Arc::new(site_max_body),
    })
    .merge(super::web::routes(super::web::WebState {
        registry: registry.clone(),
        repository: accounting.as_ref().map(|a| a.repository.clone()),
        access: accounting.as_ref().map(|a| a.access.clone()),
        cache: Default::default(),
    }));
    let app = match accounting {
        Some(accounting) => app.merge(crate::report_api::routes(accounting)),
        None => app,
    };
    let task = tokio::spawn(super::https::serve(incoming, app, header_timeout));
    Ok((registry, task))
}
