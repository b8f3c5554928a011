//! `accelfed serve` reloads `central.toml` on SIGHUP (`systemctl reload`): the sites and their
//! tokens, the report API's access rules (`[access]`, `[[access.roles]]`, the OIDC provider) and
//! the TLS certificate and key are put in force without a restart. Nothing is closed: a connection
//! open before the signal keeps working, each call on it is checked against the tokens in force
//! when it arrives, and each new TLS handshake presents the certificate in force.
//!
//! The new configuration is checked as a start checks it (the file parses, its token hashes are
//! usable, the certificate and key are readable, a pair, and valid now) before anything of it is
//! used; a refused one leaves the old one in force and says why in the log, at error level. What a
//! running service cannot change (its listeners, its database, the ingest and registry limits, the
//! LDAP sync, a site's own limits) is left as it was, with a warning that it needs a restart
//! (`changes.rs`).

mod changes;

use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use chrono::Utc;
use tokio::signal::unix::{Signal, SignalKind, signal};
use tokio::sync::watch;

use crate::access::Access;
use crate::auth::Tokens;
use crate::certificate::Validity;
use crate::config::{CentralConfig, LoadedCentral};
use crate::listen::tls::Identity;
use crate::metrics::Metrics;
use changes::Changes;

/// The certificate the daily expiry check looks at, replaced by a reload.
#[derive(Debug, Clone)]
pub struct WatchedCertificate {
    pub validity: Validity,
    pub warning_days: u32,
    pub path: PathBuf,
}

/// What a reload replaces, shared with the parts of the service that use it.
#[derive(Debug)]
pub struct Live {
    /// The configuration the service started with: what cannot be reloaded is compared with it.
    started: LoadedCentral,
    /// The configuration in force: what a reload changed is said against it.
    in_force: Mutex<LoadedCentral>,
    pub tokens: Tokens,
    /// The report API's rules; none without `[listen] https`.
    pub access: Option<Arc<Access>>,
    pub identity: Arc<Identity>,
    pub certificate: watch::Sender<WatchedCertificate>,
    pub metrics: Arc<Metrics>,
}

impl Live {
    pub fn new(
        loaded: &LoadedCentral,
        tokens: Tokens,
        access: Option<Arc<Access>>,
        identity: Arc<Identity>,
        certificate: WatchedCertificate,
        metrics: Arc<Metrics>,
    ) -> Self {
        metrics.config_loaded(Utc::now());
        metrics.certificate_expires(certificate.validity.not_after);
        Self {
            started: loaded.clone(),
            in_force: Mutex::new(loaded.clone()),
            tokens,
            access,
            identity,
            certificate: watch::channel(certificate).0,
            metrics,
        }
    }

    /// Reads the configuration file again and puts what may change in force, or refuses it with
    /// the reason (the configuration in force is then kept whole). Returns what changed, for the
    /// log: names and counts, never a token or a hash.
    pub fn reload(&self) -> Result<String, String> {
        let path = &self.started.path;
        let loaded = CentralConfig::load(path).map_err(|error| error.to_string())?;
        let (certificate_pem, key_pem) =
            crate::run::check(&loaded).map_err(|error| error.to_string())?;
        let identity = Identity::from_pem(&certificate_pem, &key_pem).map_err(|error| {
            format!(
                "tls ({}): {error}",
                loaded.resolve(&loaded.config.tls.certificate).display()
            )
        })?;
        let validity = Validity::of_leaf(&certificate_pem)?;
        let access = match &self.access {
            Some(_) => {
                Some(crate::run::access(&loaded, &self.tokens).map_err(|error| error.to_string())?)
            }
            None => None,
        };
        for part in Changes::needing_restart(&self.started, &loaded) {
            tracing::warn!(
                "configuration reload: {part} changed, which takes a restart of `accelfed serve`; \
                 the running service keeps the value it started with"
            );
        }
        let mut in_force = match self.in_force.lock() {
            Ok(in_force) => in_force,
            Err(poisoned) => poisoned.into_inner(),
        };
        let changes = Changes::between(&in_force.config, &loaded.config);
        // Everything is checked: from here on nothing can fail, so nothing is half in force.
        self.tokens.replace(&loaded.config.tokens());
        if let (Some(live), Some(access)) = (&self.access, access) {
            live.replace(access);
        }
        self.identity.replace(identity);
        self.metrics.set_configured(
            loaded
                .config
                .sites
                .keys()
                .map(ToString::to_string)
                .collect(),
        );
        self.metrics.certificate_expires(validity.not_after);
        self.certificate.send_replace(WatchedCertificate {
            validity,
            warning_days: loaded.config.tls.expiry_warning_days,
            path: loaded.resolve(&loaded.config.tls.certificate),
        });
        *in_force = loaded;
        Ok(changes.describe(&in_force.config, validity))
    }

    /// [`Live::reload`], logged and counted.
    pub fn reload_and_log(&self) {
        let path = self.started.path.display();
        match self.reload() {
            Ok(changes) => {
                self.metrics.config_reloaded(Utc::now(), true);
                tracing::info!("configuration reloaded from {path}: {changes}");
            }
            Err(reason) => {
                self.metrics.config_reloaded(Utc::now(), false);
                tracing::error!(
                    "configuration reload refused, the configuration in force is kept: {reason}"
                );
            }
        }
    }
}

/// Listens for SIGHUP now (so a signal sent once this returns is never the default action, which
/// would end the process) and reloads on each one until `stop` turns true.
pub fn on_hangup(live: Live, stop: watch::Receiver<bool>) -> std::io::Result<()> {
    let hangups = signal(SignalKind::hangup())?;
    tokio::spawn(reload_on(hangups, live, stop));
    Ok(())
}

async fn reload_on(mut hangups: Signal, live: Live, mut stop: watch::Receiver<bool>) {
    loop {
        tokio::select! {
            _ = stop.wait_for(|stop| *stop) => return,
            received = hangups.recv() => {
                if received.is_none() {
                    return;
                }
            }
        }
        tracing::info!("SIGHUP: reloading {}", live.started.path.display());
        live.reload_and_log();
    }
}

#[cfg(test)]
mod tests;
