//! `accelfed export`: the spool's records that changed since the last export, as APEL accelerator
//! messages, to ssmsend's outgoing queue or to ARGO AMS (signed with the host certificate).

use std::path::{Path, PathBuf};
use std::time::Duration;

use accelfed_accounting::apel::{
    AmsClient, AmsSettings, ApelError, Destination, DirqQueue, ExportOptions, ExportReport,
    Selection, Signer, Watermark, export,
};
use accelfed_accounting::apel::{AmsConfig, ApelConfig};
use accelfed_accounting::ship::Backoff;

use super::accounting_site::{load_accounting, open_spool, resolve, spool_failure, spool_path};
use crate::args::ExportArgs;
use crate::exit::Outcome;

pub fn run(args: &ExportArgs) -> Outcome {
    let (_, accounting) = match load_accounting(&args.config) {
        Ok(loaded) => loaded,
        Err(outcome) => return outcome,
    };
    let Some(apel) = &accounting.apel else {
        tracing::error!(
            "{}: no [accounting.apel] table (it names the destination; see docs/configuration.md)",
            args.config.display()
        );
        return Outcome::Config;
    };
    let spool_file = spool_path(&args.config, &accounting);
    let watermark = watermark(args, apel, &spool_file);
    let runtime = match super::runtime() {
        Ok(runtime) => runtime,
        Err(outcome) => return outcome,
    };
    let prepared = runtime.block_on(async {
        let destination = destination(args, apel).await?;
        let options = options(&destination, apel).await?;
        Ok::<_, String>((destination, options))
    });
    let (destination, options) = match prepared {
        Ok(prepared) => prepared,
        Err(message) => {
            tracing::error!("{}: {message}", args.config.display());
            return Outcome::Config;
        }
    };
    let spool = match open_spool(&spool_file, &accounting) {
        Ok(spool) => spool,
        Err(err) => {
            tracing::error!("{err}");
            return spool_failure(&err);
        }
    };
    let selection = if args.all {
        Selection::All
    } else {
        Selection::SinceWatermark
    };
    outcome(runtime.block_on(export(&spool, &destination, &watermark, selection, options)))
}

/// The watermark file: as configured, or beside the spool.
fn watermark(args: &ExportArgs, apel: &ApelConfig, spool_file: &Path) -> Watermark {
    Watermark::new(match &apel.watermark {
        Some(path) => resolve(&args.config, path),
        None => {
            let mut path = spool_file.to_owned().into_os_string();
            path.push(".apel-watermark");
            PathBuf::from(path)
        }
    })
}

/// The export's options: the database's charset and the message budget the destination leaves.
async fn options(destination: &Destination, apel: &ApelConfig) -> Result<ExportOptions, String> {
    let max_message_bytes = destination
        .message_budget(apel.max_message_bytes, apel.signature_allowance)
        .await
        .map_err(|err| format!("accounting.apel.max_message_bytes: {err}"))?;
    Ok(ExportOptions {
        charset: apel.charset.into(),
        max_message_bytes,
        limit: apel.max_message_bytes,
    })
}

/// Logs what the export did; the exit status.
fn outcome(result: Result<ExportReport, ApelError>) -> Outcome {
    match result {
        Ok(report) => {
            tracing::info!(
                records = report.records,
                messages = report.messages.len(),
                refused = report.refused.len(),
                normalised = report.normalised,
                skipped = report.skipped.len(),
                watermark = report.watermark,
                "exported to APEL"
            );
            if report.skipped.is_empty() && report.refused.is_empty() {
                Outcome::Ok
            } else {
                Outcome::Partial
            }
        }
        Err(err @ (ApelError::Settings { .. } | ApelError::Sign { .. })) => {
            tracing::error!("{err}");
            Outcome::Config
        }
        Err(err) => {
            tracing::error!("{err}");
            Outcome::Partial
        }
    }
}

/// The one configured destination, its files read, its client built and its signer checked.
async fn destination(args: &ExportArgs, apel: &ApelConfig) -> Result<Destination, String> {
    match (&apel.dirq, &apel.ams) {
        (Some(dirq), None) => DirqQueue::open(resolve(&args.config, &dirq.path))
            .map(Destination::Dirq)
            .map_err(|err| format!("accounting.apel.dirq: {err}")),
        (None, Some(ams)) => {
            let client = AmsClient::new(&ams_settings(args, ams)?)
                .map_err(|err| format!("accounting.apel.ams: {err}"))?;
            let signer = signer(args, ams).await?;
            Ok(Destination::Ams { client, signer })
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

/// The AMS client's settings, its token and CA files read.
fn ams_settings(args: &ExportArgs, ams: &AmsConfig) -> Result<AmsSettings, String> {
    let token_path = resolve(&args.config, &ams.token_file);
    let token = accelfed_net::secret::read_token("accounting.apel.ams.token_file", &token_path)?;
    let ca_pem = match &ams.ca {
        Some(ca) => Some(accelfed_net::trust::read_ca(
            "accounting.apel.ams.ca",
            &resolve(&args.config, ca),
        )?),
        None => None,
    };
    if ams.attempts == 0 {
        return Err("accounting.apel.ams.attempts must be at least 1".to_owned());
    }
    Ok(AmsSettings {
        endpoint: ams.endpoint.to_string(),
        project: ams.project.clone(),
        topic: ams.topic.clone(),
        token,
        ca_pem,
        timeout: Duration::from_secs(ams.timeout_s.max(1)),
        backoff: Backoff {
            attempts: ams.attempts,
            ..Backoff::default()
        },
    })
}

/// The host certificate that signs each AMS message; none only when asked for by `unsigned`.
async fn signer(args: &ExportArgs, ams: &AmsConfig) -> Result<Option<Signer>, String> {
    match (ams.unsigned, &ams.certificate, &ams.key) {
        (false, Some(certificate), Some(key)) => Signer::new(
            resolve(&args.config, certificate),
            resolve(&args.config, key),
        )
        .await
        .map(Some)
        .map_err(|err| format!("accounting.apel.ams.certificate: {err}")),
        (false, _, _) => Err(
            "accounting.apel.ams: certificate and key are required: APEL's \
             receiver refuses unsigned messages (set unsigned = true only for a \
             receiver that does not check)"
                .to_owned(),
        ),
        (true, None, None) => Ok(None),
        (true, _, _) => Err(
            "accounting.apel.ams: unsigned = true with a certificate or key; choose one".to_owned(),
        ),
    }
}
