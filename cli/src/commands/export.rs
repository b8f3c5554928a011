//! `accelfed export`: the spool's records that changed since the last export, as APEL accelerator
//! messages, to ssmsend's outgoing queue or to ARGO AMS.

use std::path::PathBuf;
use std::time::Duration;

use accelfed_accounting::apel::{
    AmsClient, AmsSettings, ApelError, Destination, DirqQueue, Selection, Watermark, export,
};
use accelfed_accounting::ship::Backoff;
use accelfed_accounting::spool::Spool;
use accelfed_provider::config::ApelConfig;

use super::meter::{load_accounting, resolve, spool_path};
use crate::args::ExportArgs;
use crate::exit::Outcome;

pub fn run(args: &ExportArgs) -> Outcome {
    let (_, accounting) = match load_accounting(&args.config) {
        Ok(loaded) => loaded,
        Err(outcome) => return outcome,
    };
    let accounting = &accounting;
    let Some(apel) = &accounting.apel else {
        eprintln!(
            "error: {}: no [accounting.apel] table (it names the destination; see docs/configuration.md)",
            args.config.display()
        );
        return Outcome::Config;
    };
    let spool_file = spool_path(&args.config, accounting);
    let watermark = Watermark::new(match &apel.watermark {
        Some(path) => resolve(&args.config, path),
        None => {
            let mut path = spool_file.clone().into_os_string();
            path.push(".apel-watermark");
            PathBuf::from(path)
        }
    });
    let destination = match destination(args, apel) {
        Ok(destination) => destination,
        Err(message) => {
            eprintln!("error: {}: {message}", args.config.display());
            return Outcome::Config;
        }
    };
    let spool = match Spool::open(&spool_file) {
        Ok(spool) => spool,
        Err(err) => {
            tracing::error!("{err}");
            return Outcome::Partial;
        }
    };
    let selection = if args.all {
        Selection::All
    } else {
        Selection::SinceWatermark
    };
    let runtime = match super::runtime() {
        Ok(runtime) => runtime,
        Err(outcome) => return outcome,
    };
    match runtime.block_on(export(&spool, &destination, &watermark, selection)) {
        Ok(report) => {
            tracing::info!(
                records = report.records,
                messages = report.messages.len(),
                skipped = report.skipped.len(),
                watermark = report.watermark,
                "exported to APEL"
            );
            if report.skipped.is_empty() {
                Outcome::Ok
            } else {
                Outcome::Partial
            }
        }
        Err(err @ ApelError::Settings { .. }) => {
            eprintln!("error: {err}");
            Outcome::Config
        }
        Err(err) => {
            tracing::error!("{err}");
            Outcome::Partial
        }
    }
}

/// The one configured destination, its files read and its client built.
fn destination(args: &ExportArgs, apel: &ApelConfig) -> Result<Destination, String> {
    match (&apel.dirq, &apel.ams) {
        (Some(dirq), None) => DirqQueue::open(resolve(&args.config, &dirq.path))
            .map(Destination::Dirq)
            .map_err(|err| format!("accounting.apel.dirq: {err}")),
        (None, Some(ams)) => {
            let token_path = resolve(&args.config, &ams.token_file);
            let token = match std::fs::read_to_string(&token_path) {
                Ok(token) if !token.trim().is_empty() => token.trim().to_owned(),
                Ok(_) => {
                    return Err(format!(
                        "accounting.apel.ams.token_file {}: empty",
                        token_path.display()
                    ));
                }
                Err(err) => {
                    return Err(format!(
                        "accounting.apel.ams.token_file {}: {err}",
                        token_path.display()
                    ));
                }
            };
            let ca_pem = match &ams.ca {
                Some(ca) => {
                    let path = resolve(&args.config, ca);
                    Some(std::fs::read(&path).map_err(|err| {
                        format!("accounting.apel.ams.ca {}: {err}", path.display())
                    })?)
                }
                None => None,
            };
            if ams.attempts == 0 {
                return Err("accounting.apel.ams.attempts must be at least 1".to_owned());
            }
            let settings = AmsSettings {
                endpoint: ams.endpoint.clone(),
                project: ams.project.clone(),
                topic: ams.topic.clone(),
                token,
                ca_pem,
                timeout: Duration::from_secs(ams.timeout_s.max(1)),
                backoff: Backoff {
                    attempts: ams.attempts,
                    ..Backoff::default()
                },
            };
            AmsClient::new(&settings)
                .map(Destination::Ams)
                .map_err(|err| format!("accounting.apel.ams: {err}"))
        }
        (Some(_), Some(_)) => Err(
            "[accounting.apel] has both a dirq and an ams table; configure one destination"
                .to_owned(),
        ),
        (None, None) => Err(
            "[accounting.apel] needs a destination: an [accounting.apel.dirq] or [accounting.apel.ams] table"
                .to_owned(),
        ),
    }
}
