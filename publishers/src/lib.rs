//! Publishers: where rendered GLUE2 goes.
//!
//! * [`stdout`]: the BDII provider-script contract: the document on standard output and nothing
//!   else (logs go to standard error).
//! * [`file`]: a file replaced atomically, so a reader never sees half a document.
//! * [`config`]: `[publish]`, the publishers' table of the site's file.

pub mod config;
pub mod file;
pub mod registry;
pub mod stdout;

use std::path::PathBuf;

/// Where `accelfed provide` sends its document.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Destination {
    Stdout,
    File(PathBuf),
}

/// A publisher that could not deliver.
#[derive(Debug, thiserror::Error)]
pub enum PublishError {
    #[error("cannot write to standard output: {0}")]
    Stdout(#[source] std::io::Error),
    #[error("cannot write {path}: {source}")]
    File {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
}

/// Sends `document` to `destination`.
pub fn publish(document: &[u8], destination: &Destination) -> Result<(), PublishError> {
    match destination {
        Destination::Stdout => stdout::write(document),
        Destination::File(path) => file::replace(path, document),
    }
}
