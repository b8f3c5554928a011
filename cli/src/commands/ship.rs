//! `accelfed ship`: the spool's pending records to the central repository, oldest first.

use std::collections::BTreeMap;
use std::time::Duration;

use accelfed_accounting::ship::{
    Backoff, Client, ClientSettings, Rejected, ShipConfig, ShipError, ShipOptions, ShipReport,
    ship, verify,
};
use accelfed_accounting::spool::{ShipLimits, Spool};

use super::accounting_site::{load_accounting, open_spool, resolve, spool_failure, spool_path};
use crate::args::ShipArgs;
use crate::exit::Outcome;

pub fn run(args: &ShipArgs) -> Outcome {
    let (_, mut accounting) = match load_accounting(&args.config) {
        Ok(loaded) => loaded,
        Err(outcome) => return outcome,
    };
    let settings = super::overrides::spool(&args.spool, None, &mut accounting).and_then(|()| {
        super::overrides::ship(&args.repository, accounting.ship.take(), &args.config)
    });
    let (settings, client_settings) = match settings.and_then(|s| {
        let client = client_settings(args, &s)?;
        Ok((s, client))
    }) {
        Ok(both) => both,
        Err(err) => {
            tracing::error!("{err}");
            return Outcome::Config;
        }
    };
    let runtime = match super::threaded_runtime() {
        Ok(runtime) => runtime,
        Err(outcome) => return outcome,
    };
    let mut spool = match open_spool(&spool_path(&args.config, &accounting), &accounting) {
        Ok(spool) => spool,
        Err(err) => {
            tracing::error!("{err}");
            return spool_failure(&err);
        }
    };
    tracing::debug!(
        spool = %spool.path().display(),
        pending = spool.depth().unwrap_or(0),
        endpoints = %settings.endpoints,
        batch_size = settings.batch_size,
        in_flight = settings.in_flight,
        "shipping"
    );
    let result = runtime.block_on(async {
        let mut client = Client::new(&client_settings)?;
        if args.verify {
            let found = verify(&mut spool, &mut client).await?;
            tracing::info!(
                months = found.resent.len(),
                records = found.reopened,
                "verified against the repository"
            );
        }
        ship(&mut spool, &mut client, &ship_options(&settings)).await
    });
    outcome(result, &spool)
}

/// Batch size, retries and how many batches travel at once, from `[accounting.ship]`.
fn ship_options(settings: &ShipConfig) -> ShipOptions {
    ShipOptions {
        limits: ShipLimits {
            max_records: settings.batch_size,
            ..ShipLimits::default()
        },
        backoff: Backoff {
            attempts: settings.attempts,
            initial: Duration::from_millis(settings.backoff_initial_ms),
            max: Duration::from_millis(settings.backoff_max_ms.max(settings.backoff_initial_ms)),
        },
        in_flight: settings.in_flight,
    }
}

/// Logs what the run shipped and what it left; the exit status.
fn outcome(result: Result<ShipReport, ShipError>, spool: &Spool) -> Outcome {
    match result {
        Ok(report) => {
            let depth = spool.depth().unwrap_or(0);
            warn_refusals(&report);
            let held = spool.held_count().unwrap_or(0);
            tracing::info!(
                batches = report.batches,
                acknowledged = report.acknowledged,
                rejected = report.rejected.len(),
                retries = report.retries,
                pending = depth,
                heartbeat = report.heartbeat,
                held,
                "shipped"
            );
            // Which instance took the data, when there are several to choose from.
            for (endpoint, records) in &report.taken_by {
                tracing::info!(%endpoint, records, "the repository at this endpoint acknowledged");
            }
            if held > 0 {
                // Not a failure of this run, but never silent: the meter held them back.
                tracing::warn!(
                    held,
                    "records held back above the installed GPUs are not shipped: see `accelfed \
                     spool held`, then correct the source or `accelfed spool release`"
                );
            }
            for id in &report.oversized {
                tracing::error!(record = %id, "too large for any batch; left in the spool");
            }
            if report.rejected.is_empty() && report.oversized.is_empty() {
                Outcome::Ok
            } else {
                Outcome::Partial
            }
        }
        Err(err @ ShipError::Settings { .. }) => {
            tracing::error!("{err}");
            Outcome::Config
        }
        Err(err) => {
            tracing::error!("{err}");
            Outcome::Partial
        }
    }
}

/// One warning per reason the repository gave, with how many records it refused for it and the
/// first of them (a token of another site has every record refused: one line, not thousands;
/// `-v` lists each record).
fn warn_refusals(report: &ShipReport) {
    let mut kinds: BTreeMap<&str, (usize, &Rejected)> = BTreeMap::new();
    for rejected in &report.rejected {
        kinds
            .entry(rejected.kind.as_str())
            .or_insert((0, rejected))
            .0 += 1;
    }
    for (kind, (count, first)) in kinds {
        tracing::warn!(
            kind,
            records = count,
            first = %first.id,
            identity = %first.identity,
            "the repository refused {count} record(s) as {kind}: {} (they stay in the spool)",
            first.reason
        );
    }
}

/// The channel's settings: the endpoint, the token and the CA, their files read.
fn client_settings(args: &ShipArgs, settings: &ShipConfig) -> Result<ClientSettings, String> {
    let flags = &args.repository;
    let token_source = source(
        flags.token_file.is_some(),
        "--token-file",
        "accounting.ship.token_file",
    );
    let token = accelfed_net::secret::read_token(
        token_source,
        &resolve(&args.config, &settings.token_file),
    )?;
    let ca_pem = match &settings.ca {
        Some(ca) => Some(accelfed_net::trust::read_ca(
            source(flags.ca.is_some(), "--ca", "accounting.ship.ca"),
            &resolve(&args.config, ca),
        )?),
        None => None,
    };
    let mut endpoints = settings
        .endpoints
        .as_slice()
        .iter()
        .map(ToString::to_string);
    Ok(ClientSettings {
        endpoint: endpoints.next().unwrap_or_default(),
        fallbacks: endpoints.collect(),
        ca_pem,
        token,
        timeout: Duration::from_secs(settings.timeout_s),
    })
}

/// The flag that set a value, or else its key in the file, for messages.
fn source(flag_given: bool, flag: &'static str, key: &'static str) -> &'static str {
    if flag_given { flag } else { key }
}
