//! `accelfed serve`: the central service until SIGINT or SIGTERM. The service itself is assembled
//! by [`accelfed_central::run`]; this binds its listeners and maps the outcome to an exit status.

use accelfed_central::{CentralConfig, Listeners, RunError};

use crate::args::ServeArgs;
use crate::exit::Outcome;

pub fn run(args: &ServeArgs) -> Outcome {
    let loaded = match CentralConfig::load(&args.config) {
        Ok(loaded) => loaded,
        Err(err) => {
            tracing::error!("{err}");
            return Outcome::Config;
        }
    };
    // The certificate, key and settings first: nothing is bound, and no "listening" printed, for
    // a service that would then refuse to start.
    let checked = match accelfed_central::check(&loaded) {
        Ok(checked) => checked,
        Err(err) => {
            tracing::error!("{err}");
            return Outcome::Config;
        }
    };
    // Every connection the limits allow is a descriptor: a limit that cannot hold them is a
    // configuration error (exit 2) now, not EMFILE in the middle of a flood.
    if let Err(err) = accelfed_central::ensure_descriptors(&loaded.config.listen) {
        tracing::error!("{err}");
        return Outcome::Config;
    }
    // A long-running service that idles between sites' calls: pages freed after a large call go
    // back to the system then, not on the allocator's next busy moment.
    crate::allocator::return_freed_pages_at_once();
    let runtime = match super::service_runtime() {
        Ok(runtime) => runtime,
        Err(outcome) => return outcome,
    };
    runtime.block_on(async {
        let listeners = match Listeners::bind(&loaded.config.listen).await {
            Ok(listeners) => listeners,
            Err(err) => {
                tracing::error!("{err}");
                return Outcome::Partial;
            }
        };
        // Where we listen (port 0 resolved), for scripts and the test harness: log lines like every
        // other (`-q` and `--log-format` apply), whose message is `listening <port> <address>`.
        let addresses = listeners.addresses();
        for (name, address) in [
            ("https", addresses.https),
            ("grpc", addresses.grpc),
            ("metrics", addresses.metrics),
        ] {
            if let Some(address) = address {
                tracing::info!("listening {name} {address}");
            }
        }
        match accelfed_central::run_checked(&loaded, checked, listeners, shutdown_signal()).await {
            Ok(()) => Outcome::Ok,
            Err(RunError::Config(err)) => {
                tracing::error!("{err}");
                Outcome::Config
            }
            Err(err) => {
                tracing::error!("{err}");
                Outcome::Partial
            }
        }
    })
}

/// SIGINT or SIGTERM.
async fn shutdown_signal() {
    let interrupt = tokio::signal::ctrl_c();
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
    tracing::info!("stopping");
}
