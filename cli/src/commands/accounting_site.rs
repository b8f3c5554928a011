//! What every accounting command (meter, ship, export) starts from: the site file with its
//! `[accounting]` table, and paths in it resolved against the file's folder.

use std::path::{Path, PathBuf};

use accelfed_accounting::config::AccountingConfig;
use accelfed_accounting::spool::{Spool, SpoolError};
use accelfed_provider::config::Config;

use crate::exit::Outcome;
use crate::site_file::SiteFile;

/// The site configuration and its `[accounting]` table (read by accelfed-accounting), or, printed, why not and
/// the exit status: every accounting command (meter, ship, export) starts here.
pub fn load_accounting(path: &Path) -> Result<(Config, AccountingConfig), Outcome> {
    let file = match SiteFile::load(path) {
        Ok(file) => file,
        Err(err) => {
            tracing::error!("{err}");
            return Err(Outcome::Config);
        }
    };
    match file.accounting {
        Some(accounting) => Ok((file.loaded.config, accounting)),
        None => {
            tracing::error!(
                "{}: no [accounting] table (it names the spool; see docs/configuration.md)",
                path.display()
            );
            Err(Outcome::Config)
        }
    }
}

/// `path` relative to the configuration file's folder.
pub fn resolve(config: &Path, path: &Path) -> PathBuf {
    if path.is_absolute() {
        return path.to_owned();
    }
    config.parent().unwrap_or_else(|| Path::new(".")).join(path)
}

pub fn spool_path(config: &Path, accounting: &AccountingConfig) -> PathBuf {
    resolve(config, &accounting.spool)
}

/// Opens the spool at `path`, creating its folder only where `[accounting] spool_create` asks.
pub fn open_spool(path: &Path, accounting: &AccountingConfig) -> Result<Spool, SpoolError> {
    Spool::open_with(path, accounting.spool_create)
}

/// The exit status for a spool that did not open: 2 (configuration) where the path or the user
/// running the command is wrong and nothing was done, 1 otherwise.
pub fn spool_failure(err: &SpoolError) -> Outcome {
    match err {
        SpoolError::MissingFolder { .. } | SpoolError::Access { .. } => Outcome::Config,
        _ => Outcome::Partial,
    }
}
