//! `accelfed provide` as a library call: [`provide_site`] takes a [`ProvidePlan`] and returns a
//! [`ProvideReport`]; the binary logs the report and picks the exit status from it.
//!
//! The steps, in order: every provider of the site (`accelfed_provider::gather`; a provider that
//! fails is reported with whether a retry may help, and the others are still published); the
//! document in the plan's format; the push to the registry, as GLUE 2.1 JSON whatever that format;
//! the write to standard output or a file; and, for a complete run (no provider, push or write
//! failed), the save of the document as the last good one. A run that cannot make its document
//! (the snapshot is inconsistent, or every provider failed and nothing is pushed) publishes the
//! last good document instead ([`super::publish_last_good`]).

use std::path::PathBuf;

use chrono::{DateTime, Utc};

use accelfed_provider::ProviderFailure;
use accelfed_provider::config::Config;
use accelfed_schemas::glue::{SiteSnapshot, SnapshotError};
use accelfed_schemas::render::ldif::{Dit, LdifMode};
use accelfed_schemas::render::{self, Format};

use super::fall_back::{LastGood, publish_last_good};
use super::last_good::{self, SavedAs};
use crate::{Destination, PublishError, RegistryTarget};

/// What one provide run is to do, as the caller resolved it from the site file and its flags.
#[derive(Debug, Clone)]
pub struct ProvidePlan<'a> {
    /// The site and its backends.
    pub config: &'a Config,
    /// The time the snapshot is taken at (its CreationTime).
    pub now: DateTime<Utc>,
    pub format: Format,
    /// The DIT layout of an LDIF document.
    pub dit: Dit,
    /// Where the document is pushed, with its token and trust already read.
    pub registry: Option<RegistryTarget>,
    /// Where the document is written ([`Destination::Stdout`] or [`Destination::File`]); `None`
    /// for a run that only pushes.
    pub write: Option<Destination>,
    /// Where a complete document is saved, and read back in place of one that cannot be made.
    pub keep_last_good: Option<PathBuf>,
}

impl ProvidePlan<'_> {
    /// What this run publishes, as keep-last-good records it.
    pub fn saved_as(&self) -> SavedAs {
        SavedAs {
            format: self.format,
            dit: self.dit,
        }
    }
}

/// What one provide run did.
#[derive(Debug)]
pub struct ProvideReport {
    /// Providers configured.
    pub providers: usize,
    /// Providers that could not be read, each with whether a retry may help; nothing of theirs
    /// was published.
    pub failures: Vec<ProviderFailure>,
    pub provided: Provided,
}

/// Whether the run made its document, and what became of it.
#[derive(Debug)]
pub enum Provided {
    /// The providers' services do not make one snapshot (an ID used by two providers): a
    /// configuration error.
    Inconsistent {
        error: SnapshotError,
        last_good: Option<LastGood>,
    },
    /// Every provider failed and nothing is pushed: there is nothing of this run to publish.
    NothingGathered { last_good: Option<LastGood> },
    /// The document was made and sent where the plan says.
    Sent(Box<Sent>),
}

/// The document of a run and where it went.
#[derive(Debug)]
pub struct Sent {
    /// What the providers that answered gave.
    pub snapshot: SiteSnapshot,
    pub format: Format,
    /// The document's size in the plan's format.
    pub bytes: usize,
    /// `None` when the plan pushes nowhere.
    pub pushed: Option<Result<Pushed, PublishError>>,
    /// `None` when the plan writes nowhere (a push alone).
    pub written: Option<Result<Written, PublishError>>,
    /// Whether the document was saved as the last good one: `None` when the plan keeps none or
    /// the run was not complete (a document that was not all published is never "good").
    pub saved: Option<Result<PathBuf, String>>,
}

/// A document the registry took.
#[derive(Debug)]
pub struct Pushed {
    pub url: String,
    /// The GLUE 2.1 JSON's size.
    pub bytes: usize,
    /// The registry's answer.
    pub answer: Option<String>,
}

/// A document written out.
#[derive(Debug)]
pub struct Written {
    /// `stdout` or the file's path.
    pub to: String,
}

impl ProvideReport {
    /// Everything was gathered and published (and saved where the plan keeps the last good
    /// document): exit status 0.
    pub fn complete(&self) -> bool {
        match &self.provided {
            Provided::Sent(sent) => self.failures.is_empty() && sent.all_delivered(),
            Provided::Inconsistent { .. } | Provided::NothingGathered { .. } => false,
        }
    }
}

impl Sent {
    /// Every push, write and save the run attempted succeeded.
    fn all_delivered(&self) -> bool {
        !matches!(self.pushed, Some(Err(_)))
            && !matches!(self.written, Some(Err(_)))
            && !matches!(self.saved, Some(Err(_)))
    }
}

/// Runs provide as `plan` says; see the module documentation.
pub async fn provide_site(plan: &ProvidePlan<'_>) -> ProvideReport {
    let providers = plan.config.providers().len();
    let gathered = match accelfed_provider::gather(plan.config, plan.now).await {
        Ok(gathered) => gathered,
        Err(error) => {
            let last_good = fall_back(plan).await;
            return ProvideReport {
                providers,
                failures: Vec::new(),
                provided: Provided::Inconsistent { error, last_good },
            };
        }
    };
    let failures = gathered.failures;
    let provided = if plan.registry.is_none() && providers > 0 && failures.len() >= providers {
        Provided::NothingGathered {
            last_good: fall_back(plan).await,
        }
    } else {
        Provided::Sent(Box::new(
            send(plan, gathered.snapshot, failures.is_empty()).await,
        ))
    };
    ProvideReport {
        providers,
        failures,
        provided,
    }
}

/// Renders the snapshot, pushes, writes and, for a complete run, saves it.
async fn send(plan: &ProvidePlan<'_>, snapshot: SiteSnapshot, gathered_all: bool) -> Sent {
    let document = document(&snapshot, plan.format, plan.dit);
    let pushed = match &plan.registry {
        Some(registry) => Some(push(registry, &snapshot, plan.format, &document).await),
        None => None,
    };
    let written = match &plan.write {
        Some(to) => Some(
            crate::publish(&document, to)
                .await
                .map(|_| Written { to: shown(to) }),
        ),
        None => None,
    };
    let delivered = !matches!(pushed, Some(Err(_))) && !matches!(written, Some(Err(_)));
    // Saved after publishing, so a document that could not be written out is never "good"; a run
    // that only pushes keeps no file (the registry judges freshness itself).
    let saved = match (&plan.keep_last_good, &written) {
        (Some(path), Some(Ok(_))) if gathered_all && delivered => Some(
            last_good::save(path, &document, plan.saved_as())
                .await
                .map(|()| path.clone()),
        ),
        _ => None,
    };
    Sent {
        snapshot,
        format: plan.format,
        bytes: document.len(),
        pushed,
        written,
        saved,
    }
}

/// The snapshot in `format` (LDIF in the plan's DIT layout).
fn document(snapshot: &SiteSnapshot, format: Format, dit: Dit) -> Vec<u8> {
    match format {
        Format::LdifGlue20 => render::ldif::render(snapshot, LdifMode::Glue20, dit),
        Format::LdifGlue21 => render::ldif::render(snapshot, LdifMode::Glue21, dit),
        other => render::render(snapshot, other),
    }
}

/// Pushes the snapshot's GLUE 2.1 JSON to the registry.
async fn push(
    registry: &RegistryTarget,
    snapshot: &SiteSnapshot,
    format: Format,
    document: &[u8],
) -> Result<Pushed, PublishError> {
    // The registry reads GLUE 2.1 JSON whatever format the file gets.
    let rendered;
    let json = if format == Format::Glue21Json {
        document
    } else {
        rendered = render::render(snapshot, Format::Glue21Json);
        &rendered
    };
    let (answer, url) = crate::registry::publish(registry, json).await?;
    Ok(Pushed {
        // The instance that took it, where several are listed.
        url: url.to_string(),
        bytes: json.len(),
        answer: Some(answer),
    })
}

/// The last good document in place of this run's, where the plan keeps one.
async fn fall_back(plan: &ProvidePlan<'_>) -> Option<LastGood> {
    let path = plan.keep_last_good.as_ref()?;
    let to = match (&plan.registry, &plan.write) {
        (Some(registry), _) => Destination::Registry(registry.clone()),
        (None, Some(to)) => to.clone(),
        (None, None) => return None,
    };
    Some(publish_last_good(path, plan.saved_as(), &to).await)
}

/// A destination as the summary line names it.
fn shown(to: &Destination) -> String {
    match to {
        Destination::Stdout => "stdout".to_owned(),
        Destination::File(path) => path.display().to_string(),
        Destination::Registry(target) => target.urls.to_string(),
    }
}
