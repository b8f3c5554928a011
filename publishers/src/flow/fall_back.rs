//! Keep-last-good's fallback: the document a complete run saved, published in place of one this
//! run could not make (a configuration that cannot be used, every provider failed), byte for byte,
//! so its entries keep their original CreationTime and Validity and a BDII keeps the site until
//! they expire instead of dropping it at the first broken run.

use std::path::{Path, PathBuf};

use super::last_good::{self, Checked, SavedAs};
use crate::{Destination, PublishError};

/// What became of the last good document in a run that could not make its own.
#[derive(Debug)]
pub struct LastGood {
    /// The `--keep-last-good` file.
    pub path: PathBuf,
    pub kept: Kept,
}

/// Whether the last good document was published, and why not.
#[derive(Debug)]
pub enum Kept {
    /// Published in this run's place, byte for byte (`bytes` long); `checked` says how it was
    /// found to be what this run publishes.
    Published { bytes: usize, checked: Checked },
    /// The run pushes to the registry, which judges freshness itself: an old document is not
    /// pushed again.
    NotForRegistry,
    /// No document could be read at the path (none saved yet, or unreadable).
    Absent(std::io::Error),
    /// The saved document is not what this run publishes (another format or DIT layout); why.
    Refused(String),
    /// It fitted but could not be written to the destination.
    NotPublished(PublishError),
}

/// Publishes the document saved at `path` to `to` when it was saved as this run publishes
/// (`wanted`). A registry destination is never given an old document ([`Kept::NotForRegistry`]).
pub async fn publish_last_good(path: &Path, wanted: SavedAs, to: &Destination) -> LastGood {
    let kept = match to {
        Destination::Registry(_) => Kept::NotForRegistry,
        Destination::Stdout | Destination::File(_) => publish_checked(path, wanted, to).await,
    };
    LastGood {
        path: path.to_owned(),
        kept,
    }
}

async fn publish_checked(path: &Path, wanted: SavedAs, to: &Destination) -> Kept {
    let document = match std::fs::read(path) {
        Ok(document) => document,
        Err(err) => return Kept::Absent(err),
    };
    let checked = match last_good::check(path, &document, wanted) {
        Ok(checked) => checked,
        Err(problem) => return Kept::Refused(problem),
    };
    match crate::publish(&document, to).await {
        Ok(_) => Kept::Published {
            bytes: document.len(),
            checked,
        },
        Err(err) => Kept::NotPublished(err),
    }
}
