//! `accelfed provide`: gather, render, publish.
//!
//! With `--keep-last-good FILE` every complete document (no provider failed) is also saved to
//! FILE, and when the configuration cannot be used or every provider fails, FILE is published in
//! its place, byte for byte: its entries keep their original CreationTime and Validity, so a BDII
//! keeps the site until they expire instead of dropping it at the first broken run. The exit status
//! still says what went wrong (2, 1). FILE's format and DIT layout are recorded beside it
//! (`last_good.rs`): a document saved as another is never published.

use std::path::Path;
use std::time::Instant;

use accelfed_publishers::config::{PublishConfig, RegistryPublishConfig, check_registry_url};
use accelfed_publishers::{Destination, RegistryTarget};
use accelfed_schemas::glue::SiteSnapshot;
use accelfed_schemas::render;
use accelfed_schemas::render::ldif::LdifMode;

use super::accounting_site::resolve;
use super::last_good;
use super::provide_summary::{self, Sent};
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
    let gathered = match gather(&runtime, &loaded.config) {
        Ok(gathered) => gathered,
        Err(err) => {
            tracing::error!("{}: {err}", args.config.display());
            return last_good(args, &runtime, Outcome::Config);
        }
    };
    let providers = loaded.config.providers().len();
    if registry.is_none() && providers > 0 && gathered.failures.len() >= providers {
        return last_good(args, &runtime, Outcome::Partial);
    }
    let document = document(&gathered.snapshot, args);
    let mut partial = !gathered.failures.is_empty();
    if let Some(registry) = registry {
        partial |= !push(
            &runtime,
            registry,
            &gathered.snapshot,
            args,
            &document,
            started,
        );
        if args.output.is_none() {
            return Outcome::finished(partial);
        }
    }
    write_out(
        &runtime,
        args,
        &gathered.snapshot,
        &document,
        partial,
        started,
    )
}

/// The site's snapshot from every provider, each provider's failure logged (the run goes on
/// without it).
fn gather(
    runtime: &tokio::runtime::Runtime,
    config: &accelfed_provider::config::Config,
) -> Result<accelfed_provider::Gathered, accelfed_schemas::glue::SnapshotError> {
    let gathered = runtime.block_on(accelfed_provider::gather(config, chrono::Utc::now()))?;
    for failure in &gathered.failures {
        let retry = failure.retry.may_help();
        tracing::error!(provider = %failure.provider, retry, "{}", failure.message);
    }
    Ok(gathered)
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

/// The snapshot in `--format`.
fn document(snapshot: &SiteSnapshot, args: &ProvideArgs) -> Vec<u8> {
    match args.format {
        render::Format::LdifGlue20 => render::ldif::render(snapshot, LdifMode::Glue20, args.dit),
        render::Format::LdifGlue21 => render::ldif::render(snapshot, LdifMode::Glue21, args.dit),
        other => render::render(snapshot, other),
    }
}

/// Pushes the snapshot's GLUE 2.1 JSON to the registry; whether it was taken.
fn push(
    runtime: &tokio::runtime::Runtime,
    registry: RegistryTarget,
    snapshot: &SiteSnapshot,
    args: &ProvideArgs,
    document: &[u8],
    started: Instant,
) -> bool {
    // The registry reads GLUE 2.1 JSON whatever --format the file gets.
    let json = if args.format == render::Format::Glue21Json {
        document.to_vec()
    } else {
        render::render(snapshot, render::Format::Glue21Json)
    };
    let url = registry.url.to_string();
    match runtime.block_on(accelfed_publishers::publish(
        &json,
        &Destination::Registry(registry),
    )) {
        Ok(answer) => {
            tracing::debug!(answer = %answer.unwrap_or_default(), "the registry's answer");
            provide_summary::log(snapshot, Sent::Pushed { url: &url }, json.len(), started);
            true
        }
        Err(err) => {
            tracing::error!("{err}");
            false
        }
    }
}

/// Writes the document to `-o` or stdout and, for a complete one, to `--keep-last-good`.
fn write_out(
    runtime: &tokio::runtime::Runtime,
    args: &ProvideArgs,
    snapshot: &SiteSnapshot,
    document: &[u8],
    partial: bool,
    started: Instant,
) -> Outcome {
    let destination = match &args.output {
        Some(path) => Destination::File(path.clone()),
        None => Destination::Stdout,
    };
    if let Err(err) = runtime.block_on(accelfed_publishers::publish(document, &destination)) {
        tracing::error!("{err}");
        return Outcome::Partial;
    }
    let to = args
        .output
        .as_ref()
        .map_or_else(|| "stdout".to_owned(), |path| path.display().to_string());
    let sent = Sent::Written {
        to: &to,
        format: args.format,
    };
    provide_summary::log(snapshot, sent, document.len(), started);
    if partial {
        return Outcome::Partial;
    }
    if let Some(path) = &args.keep_last_good {
        // Saved after publishing, so a document that could not be written out is never "good".
        if let Err(err) = last_good::save(runtime, path, document, saved_as(args)) {
            tracing::error!("--keep-last-good: {err}");
            return Outcome::Partial;
        }
    }
    Outcome::Ok
}

/// Publishes the document saved by `--keep-last-good`, if any, in place of one that could not be
/// made; `outcome` is what went wrong, and stays the exit status.
fn last_good(args: &ProvideArgs, runtime: &tokio::runtime::Runtime, outcome: Outcome) -> Outcome {
    let Some(path) = &args.keep_last_good else {
        return outcome;
    };
    if args.publish.is_some() {
        // The registry judges freshness itself; an old document is not pushed again.
        return outcome;
    }
    let document = match std::fs::read(path) {
        Ok(document) => document,
        Err(err) => {
            tracing::error!(
                "--keep-last-good {}: no last good document to publish instead: {err}",
                path.display()
            );
            return outcome;
        }
    };
    if let Err(problem) = last_good::check(path, &document, saved_as(args)) {
        tracing::error!(
            "--keep-last-good {}: not published: {problem}",
            path.display()
        );
        return outcome;
    }
    let destination = match &args.output {
        Some(output) => Destination::File(output.clone()),
        None => Destination::Stdout,
    };
    match runtime.block_on(accelfed_publishers::publish(&document, &destination)) {
        Ok(_) => warn_published(path, document.len()),
        Err(err) => tracing::error!("{err}"),
    }
    outcome
}

fn warn_published(path: &Path, bytes: usize) {
    tracing::warn!(
        file = %path.display(),
        bytes,
        "published the last good document instead, with its original timestamps"
    );
}

/// What this run publishes, as `--keep-last-good` records it.
fn saved_as(args: &ProvideArgs) -> last_good::SavedAs {
    last_good::SavedAs {
        format: args.format,
        dit: args.dit,
    }
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
    let url = match (&args.registry_url, table) {
        (Some(url), _) => {
            // The file's URL was checked when the file was read; a flag's by the same rule.
            check_registry_url(url).map_err(|message| format!("--registry-url: {message}"))?
        }
        (None, Some(table)) => check_registry_url(table.url.get_ref())
            .map_err(|message| format!("publish.registry.url: {message}"))?,
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
        url,
        token,
        trust,
        timeout,
    })
}
