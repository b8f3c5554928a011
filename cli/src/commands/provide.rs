//! `accelfed provide`: resolves the plan from the site file and flags, runs the library's flow
//! ([`accelfed_publishers::flow::provide_site`]) and maps its report to log lines and an exit
//! status.
//!
//! With `--keep-last-good FILE` every complete document (no provider failed) is also saved to
//! FILE, and when the configuration cannot be used or every provider fails, FILE is published in
//! its place, byte for byte: its entries keep their original CreationTime and Validity, so a BDII
//! keeps the site until they expire instead of dropping it at the first broken run. The exit status
//! still says what went wrong (2, 1). FILE's format and DIT layout are recorded beside it
//! (`accelfed_publishers::flow::last_good`): a document saved as another is never published.

use std::path::Path;
use std::time::Instant;

use accelfed_publishers::config::{PublishConfig, RegistryPublishConfig, check_registry_url};
use accelfed_publishers::flow::{
    Checked, Kept, LastGood, ProvidePlan, ProvideReport, Provided, SavedAs, Sent, provide_site,
    publish_last_good,
};
use accelfed_publishers::{Destination, RegistryTarget};

use super::accounting_site::resolve;
use super::provide_summary::{self, Sent as Summary};
use crate::args::{ProvideArgs, PublishTarget};
use crate::exit::Outcome;
use crate::site_file::SiteFile;

pub fn run(args: &ProvideArgs) -> Outcome {
    let started = Instant::now();
    // First: every destination, the registry's included, is reached through
    // `accelfed_publishers::publish`, which is async.
    let runtime = match super::runtime() {
        Ok(runtime) => runtime,
        Err(outcome) => return outcome,
    };
    let SiteFile {
        loaded, publish, ..
    } = match SiteFile::load(&args.config) {
        Ok(file) => file,
        Err(err) => {
            tracing::error!("{err}");
            return last_good(args, &runtime, Outcome::Config);
        }
    };
    // Where to push is settled (and the token read) before anything is gathered: a usage error
    // should not wait for every provider to answer.
    let registry = match registry(args, publish.as_ref()) {
        Ok(registry) => registry,
        Err(message) => {
            tracing::error!("{message}");
            return Outcome::Config;
        }
    };
    // So is the document's file: a folder this user may not write (or root on the service user's
    // document) is named with its owner, mode and fix before any provider is asked.
    if let Some(path) = &args.output
        && let Err(message) = accelfed_publishers::file::check_writable(path)
    {
        tracing::error!("cannot write {}: {message}", path.display());
        return Outcome::Config;
    }
    let plan = ProvidePlan {
        config: &loaded.config,
        now: chrono::Utc::now(),
        format: args.format,
        dit: args.dit,
        // A push alone writes nowhere; otherwise the document goes to `-o` or stdout.
        write: match (&registry, &args.output) {
            (Some(_), None) => None,
            (_, Some(path)) => Some(Destination::File(path.clone())),
            (None, None) => Some(Destination::Stdout),
        },
        registry,
        keep_last_good: args.keep_last_good.clone(),
    };
    let report = runtime.block_on(provide_site(&plan));
    log(args, &report, started)
}

/// The report as log lines, in the order the run met them, and the exit status it gives.
fn log(args: &ProvideArgs, report: &ProvideReport, started: Instant) -> Outcome {
    for failure in &report.failures {
        let retry = failure.retry.may_help();
        tracing::error!(provider = %failure.provider, retry, "{}", failure.message);
    }
    match &report.provided {
        Provided::Inconsistent { error, last_good } => {
            tracing::error!("{}: {error}", args.config.display());
            log_last_good(last_good.as_ref());
            Outcome::Config
        }
        Provided::NothingGathered { last_good } => {
            log_last_good(last_good.as_ref());
            Outcome::Partial
        }
        Provided::Sent(sent) => {
            log_sent(sent, started);
            Outcome::finished(!report.complete())
        }
    }
}

/// The push, the write and the save of a document that was made.
fn log_sent(sent: &Sent, started: Instant) {
    match &sent.pushed {
        Some(Ok(pushed)) => {
            tracing::debug!(answer = %pushed.answer.clone().unwrap_or_default(), "the registry's answer");
            let summary = Summary::Pushed { url: &pushed.url };
            provide_summary::log(&sent.snapshot, summary, pushed.bytes, started);
        }
        Some(Err(err)) => tracing::error!("{err}"),
        None => {}
    }
    match &sent.written {
        Some(Ok(written)) => {
            let summary = Summary::Written {
                to: &written.to,
                format: sent.format,
            };
            provide_summary::log(&sent.snapshot, summary, sent.bytes, started);
        }
        Some(Err(err)) => tracing::error!("{err}"),
        None => {}
    }
    if let Some(Err(err)) = &sent.saved {
        tracing::error!("--keep-last-good: {err}");
    }
}

/// Publishes the document saved by `--keep-last-good`, if any, in place of a configuration that
/// could not be read; `outcome` is what went wrong, and stays the exit status.
fn last_good(args: &ProvideArgs, runtime: &tokio::runtime::Runtime, outcome: Outcome) -> Outcome {
    let Some(path) = &args.keep_last_good else {
        return outcome;
    };
    if args.publish.is_some() {
        // The registry judges freshness itself; an old document is not pushed again.
        return outcome;
    }
    let to = match &args.output {
        Some(output) => Destination::File(output.clone()),
        None => Destination::Stdout,
    };
    let wanted = SavedAs {
        format: args.format,
        dit: args.dit,
    };
    let last_good = runtime.block_on(publish_last_good(path, wanted, &to));
    log_last_good(Some(&last_good));
    outcome
}

/// What became of the last good document (nothing to say where none is kept).
fn log_last_good(last_good: Option<&LastGood>) {
    let Some(LastGood { path, kept }) = last_good else {
        return;
    };
    let shown = path.display();
    match kept {
        Kept::Published { bytes, checked } => {
            if let Checked::ByContentOnly { record } = checked {
                tracing::warn!(
                    record = %record.display(),
                    "no record of the format the last good document was saved in (saved by an \
                     older accelfed?): only its content was checked; the next complete run writes it"
                );
            }
            warn_published(path, *bytes);
        }
        Kept::NotForRegistry => {}
        Kept::Absent(err) => tracing::error!(
            "--keep-last-good {shown}: no last good document to publish instead: {err}"
        ),
        Kept::Refused(problem) => {
            tracing::error!("--keep-last-good {shown}: not published: {problem}");
        }
        Kept::NotPublished(err) => tracing::error!("{err}"),
    }
}

fn warn_published(path: &Path, bytes: usize) {
    tracing::warn!(
        file = %path.display(),
        bytes,
        "published the last good document instead, with its original timestamps"
    );
}

/// The registry to push to, when `--publish registry` asks for it: settled before gathering.
fn registry(
    args: &ProvideArgs,
    publish: Option<&PublishConfig>,
) -> Result<Option<RegistryTarget>, String> {
    if args.publish != Some(PublishTarget::Registry) {
        return Ok(None);
    }
    let table = publish.and_then(|publish| publish.registry.as_ref());
    registry_target(args, table).map(Some)
}

/// Where `--publish registry` sends, with the token and CA already read: every error is a usage
/// error. Each setting is its flag (or environment variable), else its key in `[publish.registry]`
/// (`table`); paths from the file are relative to the file.
fn registry_target(
    args: &ProvideArgs,
    table: Option<&RegistryPublishConfig>,
) -> Result<RegistryTarget, String> {
    let missing = |flag: &str| {
        format!("--publish registry needs {flag}, or [publish.registry] in the configuration file")
    };
    let urls = match (&args.registry_url, table) {
        (Some(urls), _) => {
            // The file's URLs were checked when the file was read; a flag's by the same rule.
            let checked = urls
                .split(',')
                .map(check_registry_url)
                .collect::<Result<Vec<_>, String>>()
                .and_then(accelfed_net::HttpsUrls::new);
            checked.map_err(|message| format!("--registry-url: {message}"))?
        }
        (None, Some(table)) => table
            .urls()
            .map_err(|invalid| format!("publish.{}: {}", invalid.field, invalid.message))?,
        (None, None) => return Err(missing("--registry-url")),
    };
    // Each path with where it came from, for messages.
    let (token_path, token_source) = match (&args.registry_token_file, table) {
        (Some(path), _) => (path.clone(), "--registry-token-file"),
        (None, Some(table)) => (
            resolve(&args.config, &table.token_file),
            "publish.registry.token_file",
        ),
        (None, None) => return Err(missing("--registry-token-file")),
    };
    let token = accelfed_net::secret::read_token(token_source, &token_path)?;
    let ca = match (&args.registry_ca, table.and_then(|table| table.ca.as_ref())) {
        (Some(path), _) => Some((path.clone(), "--registry-ca")),
        (None, Some(path)) => Some((resolve(&args.config, path), "publish.registry.ca")),
        (None, None) => None,
    };
    let trust = match ca {
        Some((path, source)) => accelfed_net::Trust::with_ca(source, &path)?,
        None => accelfed_net::Trust::system(),
    };
    let timeout = table.map_or(accelfed_publishers::registry::DEFAULT_TIMEOUT, |table| {
        std::time::Duration::from_secs(*table.timeout_s.get_ref())
    });
    Ok(RegistryTarget {
        urls,
        token,
        trust,
        timeout,
    })
}
