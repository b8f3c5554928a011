//! The central service started in-process, as `accelfed serve` assembles it
//! ([`accelfed_central::run`] on listeners bound from `[listen]`, port 0 resolved), on a runtime
//! of its own thread; stopped, with calls in flight finished, when the [`Server`] is dropped.

use std::path::Path;
use std::sync::mpsc;
use std::thread::JoinHandle;
use std::time::Duration;

use accelfed_central::{CentralConfig, Listeners};
use tokio::sync::oneshot;

use super::central_config;
use super::listening::Listening;
use crate::pki::PkiFiles;

/// A running central service.
#[derive(Debug)]
pub struct Server {
    /// Where it listens (the struct dereferences to it).
    pub listening: Listening,
    stop: Option<oneshot::Sender<()>>,
    thread: Option<JoinHandle<Result<(), String>>>,
}

type Started = Result<accelfed_central::Addresses, String>;

impl Server {
    /// Starts a service whose repository is SQLite `accounting.sqlite` in `dir`, listening on
    /// free ports with `pki`'s certificate; returns it and the repository's path (what `accelfed
    /// report --database` takes).
    pub fn start_sqlite(dir: &Path, pki: &PkiFiles) -> (Server, String) {
        let database = dir.join("accounting.sqlite").display().to_string();
        let config = central_config(dir, pki, &format!("path = \"{database}\""), "127.0.0.1:0");
        (Server::start(&config), database)
    }

    /// Starts the service of the central.toml at `config`; panics with the reason when it does
    /// not start.
    pub fn start(config: &Path) -> Server {
        let loaded =
            CentralConfig::load(config).unwrap_or_else(|err| panic!("{}: {err}", config.display()));
        let (started_tx, started_rx) = mpsc::channel::<Started>();
        let (stop_tx, stop_rx) = oneshot::channel::<()>();
        let thread = std::thread::spawn(move || {
            let runtime = tokio::runtime::Builder::new_multi_thread()
                .worker_threads(2)
                .enable_all()
                .build()
                .map_err(|err| err.to_string())?;
            let result = runtime.block_on(async {
                let listeners = match Listeners::bind(&loaded.config.listen).await {
                    Ok(listeners) => listeners,
                    Err(err) => {
                        let _ = started_tx.send(Err(err.to_string()));
                        return Err(err.to_string());
                    }
                };
                let _ = started_tx.send(Ok(listeners.addresses()));
                let shutdown = async move {
                    let _ = stop_rx.await;
                };
                accelfed_central::run(&loaded, listeners, shutdown)
                    .await
                    .map_err(|err| err.to_string())
            });
            runtime.shutdown_timeout(Duration::from_secs(5));
            result
        });
        let addresses = match started_rx.recv_timeout(Duration::from_secs(30)) {
            Ok(Ok(addresses)) => addresses,
            Ok(Err(err)) => panic!("the central service did not start: {err}"),
            Err(_) => panic!("the central service did not bind its listeners within 30 s"),
        };
        Server {
            listening: Listening {
                grpc: addresses.grpc.expect("the gRPC listener's address"),
                metrics: addresses.metrics,
                https: addresses.https,
            },
            stop: Some(stop_tx),
            thread: Some(thread),
        }
    }

    /// Stops the service, lets calls in flight finish, and says how it ended.
    pub fn stop(mut self) -> Result<(), String> {
        self.stop_and_join()
    }

    fn stop_and_join(&mut self) -> Result<(), String> {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        match self.thread.take().map(JoinHandle::join) {
            None | Some(Ok(Ok(()))) => Ok(()),
            Some(Ok(Err(err))) => Err(err),
            Some(Err(_)) => Err("the service's thread panicked".to_owned()),
        }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        if let Err(err) = self.stop_and_join() {
            eprintln!("the central service stopped with an error: {err}");
        }
    }
}

impl std::ops::Deref for Server {
    type Target = Listening;
    fn deref(&self) -> &Listening {
        &self.listening
    }
}
