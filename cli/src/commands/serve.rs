//! `accelfed serve`: the central accounting service until SIGINT or SIGTERM.

use tokio::net::TcpListener;

use accelfed_accounting::repository::Repository;
use accelfed_central::registry::ldap::LdapSync;
use accelfed_central::registry::ldap::task as ldap_task;
use accelfed_central::{CentralConfig, ServeSettings, serve};

use crate::args::ServeArgs;
use crate::exit::Outcome;

pub fn run(args: &ServeArgs) -> Outcome {
    let loaded = match CentralConfig::load(&args.config) {
        Ok(loaded) => loaded,
        Err(err) => {
            eprintln!("error: {err}");
            return Outcome::Config;
        }
    };
    let read = |what: &str, path: &std::path::Path| {
        let path = loaded.resolve(path);
        std::fs::read(&path).map_err(|err| format!("tls.{what} {}: {err}", path.display()))
    };
    let (certificate_pem, key_pem) = match (
        read("certificate", &loaded.config.tls.certificate),
        read("key", &loaded.config.tls.key),
    ) {
        (Ok(cert), Ok(key)) => (cert, key),
        (Err(err), _) | (_, Err(err)) => {
            eprintln!("error: {err}");
            return Outcome::Config;
        }
    };
    if loaded.config.sites.is_empty() {
        tracing::warn!("no [sites.*] in the configuration: every submission will be refused");
    }
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(err) => {
            eprintln!("error: cannot start the async runtime: {err}");
            return Outcome::Partial;
        }
    };
    runtime.block_on(async {
        let location = loaded.database_location();
        let repository = match Repository::open(&location).await {
            Ok(repository) => repository,
            Err(err) => {
                eprintln!("error: {err}");
                return Outcome::Partial;
            }
        };
        let grpc = match TcpListener::bind(loaded.config.listen.grpc).await {
            Ok(listener) => listener,
            Err(err) => {
                eprintln!("error: listen.grpc {}: {err}", loaded.config.listen.grpc);
                return Outcome::Partial;
            }
        };
        let metrics = match loaded.config.listen.metrics {
            Some(address) => match TcpListener::bind(address).await {
                Ok(listener) => Some(listener),
                Err(err) => {
                    eprintln!("error: listen.metrics {address}: {err}");
                    return Outcome::Partial;
                }
            },
            None => None,
        };
        let https = match loaded.config.listen.https {
            Some(address) => match TcpListener::bind(address).await {
                Ok(listener) => Some(listener),
                Err(err) => {
                    eprintln!("error: listen.https {address}: {err}");
                    return Outcome::Partial;
                }
            },
            None => None,
        };
        let tokens = loaded.config.tokens();
        // One stop signal for every listener.
        let (stop_tx, stop_rx) = tokio::sync::watch::channel(false);
        tokio::spawn(async move {
            shutdown_signal().await;
            let _ = stop_tx.send(true);
        });
        if https.is_none() && loaded.config.ldap.is_some() {
            eprintln!(
                "error: [ldap] syncs the registry's view, and the registry needs [listen] https"
            );
            return Outcome::Config;
        }
        let mut registry_task = None;
        if let Some(listener) = https {
            let address = listener.local_addr().ok();
            match accelfed_central::registry::service::start(
                &loaded.registry_location(),
                &loaded.config.registry,
                tokens.clone(),
                &certificate_pem,
                &key_pem,
                listener,
                stop_rx.clone(),
                Some(repository.clone()),
            )
            .await
            {
                Ok((registry, task)) => {
                    registry_task = Some(task);
                    if let Some(ldap) = &loaded.config.ldap {
                        match LdapSync::new(ldap, |path| loaded.resolve(path)) {
                            Ok(sync) => {
                                let mut ldap_stop = stop_rx.clone();
                                tokio::spawn(ldap_task::run(sync, registry, async move {
                                    let _ = ldap_stop.wait_for(|stop| *stop).await;
                                }));
                            }
                            Err(err) => {
                                eprintln!("error: [ldap]: {err}");
                                return Outcome::Config;
                            }
                        }
                    }
                }
                Err(err) => {
                    eprintln!("error: {err}");
                    return Outcome::Partial;
                }
            }
            if let Some(address) = address {
                eprintln!("listening https {address}");
            }
        }
        // Print where we listen (port 0 resolved), so scripts and tests can find us.
        let grpc_address = grpc.local_addr().ok();
        let metrics_address = metrics.as_ref().and_then(|l| l.local_addr().ok());
        tracing::info!(
            grpc = ?grpc_address,
            metrics = ?metrics_address,
            sites = loaded.config.sites.len(),
            "accelfed serve: listening"
        );
        if let Some(address) = grpc_address {
            eprintln!("listening grpc {address}");
        }
        if let Some(address) = metrics_address {
            eprintln!("listening metrics {address}");
        }
        let settings = ServeSettings {
            repository,
            tokens,
            certificate_pem,
            key_pem,
            max_batch: loaded.config.ingest.max_batch,
        };
        let mut grpc_stop = stop_rx;
        let stopped = async move {
            let _ = grpc_stop.wait_for(|stop| *stop).await;
        };
        let served = serve(settings, grpc, metrics, stopped).await;
        if let Some(task) = registry_task {
            let _ = task.await;
        }
        match served {
            Ok(()) => Outcome::Ok,
            Err(err) => {
                tracing::error!("{err}");
                Outcome::Partial
            }
        }
    })
}

async fn shutdown_signal() {
    let interrupt = tokio::signal::ctrl_c();
    #[cfg(unix)]
    {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut terminate) => {
                tokio::select! {
                    _ = interrupt => {}
                    _ = terminate.recv() => {}
                }
            }
            Err(_) => {
                let _ = interrupt.await;
            }
        }
    }
    #[cfg(not(unix))]
    {
        let _ = interrupt.await;
    }
    tracing::info!("stopping");
}
