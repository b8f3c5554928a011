//! The composition root of `accelfed serve`: everything the service runs (repository, gRPC ingest,
//! metrics, the registry's API and page, the LDAP sync), assembled from a loaded `central.toml` on
//! listeners the caller bound, with one stop signal (house-style rules 1 and 10). The binary only
//! parses arguments, binds and prints; tests start the whole service in-process on port 0.

use std::future::Future;
use std::net::SocketAddr;
use std::sync::Arc;

use tokio::net::TcpListener;

use accelfed_schemas::cause;

use crate::certificate::{Standing, Validity};
use crate::config::{ListenConfig, LoadedCentral};
use crate::listen::{Gate, incoming, tls};
use crate::metrics::Metrics;
use crate::registry::ldap::{LdapSync, task as ldap_task};
use crate::reload::{self, Live, WatchedCertificate};
use crate::serve::{ServeError, ServeSettings, serve};

/// The service's sockets, bound by the caller.
#[derive(Debug)]
pub struct Listeners {
    pub grpc: TcpListener,
    pub metrics: Option<TcpListener>,
    pub https: Option<TcpListener>,
}

/// Where each listener is bound (port 0 resolved).
#[derive(Debug, Clone, Copy)]
pub struct Addresses {
    pub grpc: Option<SocketAddr>,
    pub metrics: Option<SocketAddr>,
    pub https: Option<SocketAddr>,
}

impl Listeners {
    /// Binds the addresses of `[listen]`.
    pub async fn bind(listen: &ListenConfig) -> Result<Self, RunError> {
        async fn one(what: &str, address: SocketAddr) -> Result<TcpListener, RunError> {
            TcpListener::bind(address)
                .await
                .map_err(|err| RunError::Start(format!("listen.{what} {address}: {err}")))
        }
        let metrics = match listen.metrics {
            Some(address) => Some(one("metrics", address).await?),
            None => None,
        };
        let https = match listen.https {
            Some(address) => Some(one("https", address).await?),
            None => None,
        };
        Ok(Self {
            grpc: one("grpc", listen.grpc).await?,
            metrics,
            https,
        })
    }

    pub fn addresses(&self) -> Addresses {
        let address = |listener: &TcpListener| listener.local_addr().ok();
        Addresses {
            grpc: address(&self.grpc),
            metrics: self.metrics.as_ref().and_then(address),
            https: self.https.as_ref().and_then(address),
        }
    }
}

/// Why the service did not start or stopped with an error.
#[derive(Debug, thiserror::Error)]
pub enum RunError {
    /// Something in the configuration or a file it names: exit status 2.
    #[error("{0}")]
    Config(String),
    /// A resource that is not there now (a port, the database): exit status 1.
    #[error("{0}")]
    Start(String),
    #[error(transparent)]
    Serve(#[from] ServeError),
}

/// What `accelfed validate --central` checks, with no network and no database: the configuration
/// (already parsed), the TLS certificate and key (readable, PEM, a pair rustls accepts), and that
/// `[ldap]` has the registry it syncs. Returns the PEM certificate and key.
pub fn check(loaded: &LoadedCentral) -> Result<(Vec<u8>, Vec<u8>), RunError> {
    let config = &loaded.config;
    let read = |what: &str, path: &std::path::Path| {
        let path = loaded.resolve(path);
        std::fs::read(&path)
            .map_err(|err| RunError::Config(format!("tls.{what} {}: {err}", path.display())))
    };
    let certificate_pem = read("certificate", &config.tls.certificate)?;
    let key_pem = read("key", &config.tls.key)?;
    accelfed_net::secret::warn_if_exposed("tls.key", &loaded.resolve(&config.tls.key));
    tls::acceptor(&certificate_pem, &key_pem, b"h2").map_err(|err| {
        RunError::Config(format!(
            "tls ({} and {}): {err}",
            loaded.resolve(&config.tls.certificate).display(),
            loaded.resolve(&config.tls.key).display()
        ))
    })?;
    let certificate_path = loaded.resolve(&config.tls.certificate);
    let validity = Validity::of_leaf(&certificate_pem).map_err(|err| {
        RunError::Config(format!(
            "tls.certificate {}: {err}",
            certificate_path.display()
        ))
    })?;
    match validity.standing(chrono::Utc::now(), config.tls.expiry_warning_days) {
        Standing::Valid => {}
        Standing::Expiring(why) => {
            tracing::warn!("tls.certificate {}: {why}", certificate_path.display());
        }
        Standing::Unusable(why) => {
            return Err(RunError::Config(format!(
                "tls.certificate {}: {why}",
                certificate_path.display()
            )));
        }
    }
    if config.listen.https.is_none() && config.ldap.is_some() {
        return Err(RunError::Config(
            "[ldap] syncs the registry's view, and the registry needs [listen] https".to_owned(),
        ));
    }
    Ok((certificate_pem, key_pem))
}

/// Runs the central service until `shutdown` completes, then lets calls in flight finish.
pub async fn run(
    loaded: &LoadedCentral,
    listeners: Listeners,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> Result<(), RunError> {
    let checked = check(loaded)?;
    run_checked(loaded, checked, listeners, shutdown).await
}

/// [`run`] with what [`check`] returned, for a caller that checked before binding (the binary
/// binds only for a configuration that will start, and warns once).
pub async fn run_checked(
    loaded: &LoadedCentral,
    (certificate_pem, key_pem): (Vec<u8>, Vec<u8>),
    listeners: Listeners,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> Result<(), RunError> {
    let config = &loaded.config;
    if config.sites.is_empty() {
        tracing::warn!("no [sites.*] in the configuration: every submission will be refused");
    }
    // A database that is starting or restarting as `serve` starts is waited for, and one that
    // goes away during the migrations too: waiting, connecting and migrating are one step.
    let repository = accelfed_accounting::database::start::open_repository(
        &loaded.database_location(),
        std::time::Duration::from_secs(config.database.start_wait_s),
    )
    .await
    .map_err(RunError::Start)?;
    let metrics = Arc::new(Metrics::new(
        repository.clone(),
        config.sites.keys().map(ToString::to_string).collect(),
    ));
    let (stop_tx, stop_rx) = tokio::sync::watch::channel(false);
    tokio::spawn(async move {
        shutdown.await;
        let _ = stop_tx.send(true);
    });
    // The certificate and key every TLS port presents, the site tokens and the report API's rules:
    // shared with the ports, and replaced in them by a reload (SIGHUP).
    let identity = Arc::new(
        tls::Identity::from_pem(&certificate_pem, &key_pem)
            .map_err(|err| RunError::Config(format!("tls: {err}")))?,
    );
    let validity = Validity::of_leaf(&certificate_pem).map_err(|err| {
        RunError::Config(format!(
            "tls.certificate {}: {err}",
            loaded.resolve(&config.tls.certificate).display()
        ))
    })?;
    let watched = WatchedCertificate {
        validity,
        warning_days: config.tls.expiry_warning_days,
        path: loaded.resolve(&config.tls.certificate),
    };
    let tokens = config.tokens();
    let access = match listeners.https {
        Some(_) => Some(Arc::new(access(loaded, &tokens)?)),
        None => None,
    };
    let live = Live::new(
        loaded,
        tokens,
        access,
        identity.clone(),
        watched,
        metrics.clone(),
    );
    tokio::spawn(watch_certificate(
        live.certificate.subscribe(),
        stop_rx.clone(),
    ));
    let registry_task = match listeners.https {
        Some(listener) => {
            let acceptor = tls::acceptor_for(identity.clone(), b"http/1.1")
                .map_err(|err| RunError::Config(format!("tls: {err}")))?;
            let limits = config.listen.limits;
            let connections = incoming(
                "https",
                listener,
                acceptor,
                Gate::new(limits),
                stop_rx.clone(),
            );
            let (registry, task) = crate::registry::service::start(
                &loaded.registry_location(),
                &config.registry,
                live.tokens.clone(),
                connections,
                limits.idle_timeout(),
                live.access
                    .clone()
                    .map(|access| crate::report_api::ReportState {
                        repository: repository.clone(),
                        access,
                        cache: Arc::new(crate::report_api::cache::AnswerCache::new(
                            config.database.report_cache_mib.saturating_mul(1 << 20),
                        )),
                    }),
                config.document_limits(),
            )
            .await
            .map_err(|err| RunError::Start(cause::chain(&err)))?;
            metrics.set_registry(registry.clone());
            if let Some(ldap) = &config.ldap {
                let sync = LdapSync::new(ldap, |path| loaded.resolve(path))
                    .map_err(|err| RunError::Config(format!("[ldap]: {err}")))?;
                let mut ldap_stop = stop_rx.clone();
                tokio::spawn(ldap_task::run(sync, registry, async move {
                    let _ = ldap_stop.wait_for(|stop| *stop).await;
                }));
            }
            Some(task)
        }
        None => None,
    };
    let settings = ServeSettings {
        repository,
        tokens: live.tokens.clone(),
        identity,
        batches: config.batch_limits(),
        limits: config.listen.limits,
        metrics,
    };
    // Before the line that says the service is up: from then on SIGHUP reloads, never ends it.
    if let Err(err) = reload::on_hangup(live, stop_rx.clone()) {
        tracing::warn!(
            "SIGHUP cannot be caught ({err}): the configuration reloads only on restart"
        );
    }
    tracing::info!(sites = config.sites.len(), "accelfed serve: listening");
    let mut grpc_stop = stop_rx;
    let stopped = async move {
        let _ = grpc_stop.wait_for(|stop| *stop).await;
    };
    let served = serve(settings, listeners.grpc, listeners.metrics, stopped).await;
    if let Some(task) = registry_task {
        let _ = task.await;
    }
    served.map_err(RunError::from)
}

/// `[access]` made ready: the site tokens (`tokens`, the set in force), and the OIDC provider's
/// keys (read on first use).
pub(crate) fn access(
    loaded: &LoadedCentral,
    tokens: &crate::auth::Tokens,
) -> Result<crate::access::Access, RunError> {
    use crate::access::jwks::{KeySource, Keys};
    let config = &loaded.config.access;
    let oidc = match &config.oidc {
        None => None,
        Some(oidc) => {
            let source = match &oidc.jwks_file {
                Some(path) => KeySource::File(loaded.resolve(path)),
                None => {
                    let ca = oidc.ca.as_ref().map(|path| loaded.resolve(path));
                    let trust = accelfed_net::Trust::optional("access.oidc.ca", ca.as_deref())
                        .map_err(RunError::Config)?;
                    let settings = accelfed_net::ClientSettings::new(
                        trust,
                        std::time::Duration::from_secs(10),
                    );
                    let client = accelfed_net::HttpsClient::new(&settings)
                        .map_err(|err| RunError::Config(format!("access.oidc: {err}")))?;
                    KeySource::Discovery {
                        issuer: oidc.issuer.clone(),
                        client,
                    }
                }
            };
            let keys = Keys::new(source, std::sync::Arc::new(std::time::Instant::now));
            Some(crate::access::oidc::Verifier::new(
                oidc,
                keys,
                config.roles.clone(),
            ))
        }
    };
    Ok(crate::access::Access::new(
        config.anonymous,
        std::sync::Arc::new(tokens.clone()),
        oidc,
    ))
}

/// Once a day while the service runs: a warning in the certificate's last `warning_days`, an error
/// once it has expired (sites are refused from then on), so a service that runs for months says
/// so in its journal, not only at start. It looks at the certificate in force (a reload replaces
/// it).
async fn watch_certificate(
    certificate: tokio::sync::watch::Receiver<WatchedCertificate>,
    mut stop: tokio::sync::watch::Receiver<bool>,
) {
    const DAY: std::time::Duration = std::time::Duration::from_secs(24 * 3600);
    loop {
        tokio::select! {
            _ = stop.wait_for(|stop| *stop) => return,
            () = tokio::time::sleep(DAY) => {}
        }
        let watched = certificate.borrow().clone();
        let path = watched.path.display();
        match watched
            .validity
            .standing(chrono::Utc::now(), watched.warning_days)
        {
            Standing::Valid => {}
            Standing::Expiring(why) => tracing::warn!("tls.certificate {path}: {why}"),
            Standing::Unusable(why) => tracing::error!("tls.certificate {path}: {why}"),
        }
    }
}
