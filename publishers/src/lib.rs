//! Publishers: where rendered GLUE2 goes. The project's rule for transports (docs/architecture.md,
//! "Transports"): an outbound transport lives with the pipeline whose data it carries, so every
//! transport of GLUE2 documents is here, behind the one entry point [`publish`]; record transports
//! (gRPC shipping, APEL) are accelfed-accounting's, and the LDAP sync of the federation's documents
//! is the central service's.
//!
//! * [`stdout`]: the BDII provider-script contract: the document on standard output and nothing
//!   else (logs go to standard error).
//! * [`file`]: a file replaced atomically, so a reader never sees half a document, and the check
//!   that it can be written, made before anything is gathered.
//! * [`registry`]: the federation registry of `accelfed serve` (HTTPS push with the site's token;
//!   also the client `accelfed query` reads offers with).
//! * [`config`]: `[publish]`, the publishers' table of the site's file.
//! * [`flow`]: `accelfed provide` as a library call (gather, render, push, write, keep the last
//!   good document).

pub mod config;
pub mod file;
mod file_access;
pub mod flow;
pub mod registry;
pub mod stdout;

use std::path::PathBuf;

pub use registry::RegistryTarget;

/// Where a document is sent.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Destination {
    Stdout,
    File(PathBuf),
    /// The federation registry (`accelfed provide --publish registry`).
    Registry(RegistryTarget),
}

/// A publisher that could not deliver.
#[derive(Debug, thiserror::Error)]
pub enum PublishError {
    #[error("cannot write to standard output: {0}")]
    Stdout(#[source] std::io::Error),
    #[error("cannot write {path}: {why}")]
    File {
        path: PathBuf,
        source: std::io::Error,
        /// The OS error by its symbolic name and, for the errors an owner, a mount or a full disk
        /// causes, the folder's owner, its mode and the fix.
        why: String,
    },
    #[error(transparent)]
    Registry(#[from] registry::RegistryError),
}

/// Sends `document` to `destination`; returns the destination's answer where it gives one (the
/// registry's JSON). Async because the registry is reached over the network; standard output and
/// files are written in place.
pub async fn publish(
    document: &[u8],
    destination: &Destination,
) -> Result<Option<String>, PublishError> {
    match destination {
        Destination::Stdout => stdout::write(document).map(|()| None),
        Destination::File(path) => file::replace(path, document).map(|()| None),
        Destination::Registry(target) => Ok(Some(registry::publish(target, document).await?.0)),
    }
}
