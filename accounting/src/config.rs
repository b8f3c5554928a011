//! The `[accounting]` table of the site's file (`site.toml`): where `accelfed meter` keeps its
//! spool, an optional file of manual usage, and the tables of the record transports
//! (`[accounting.ship]`, `[accounting.apel]`). Relative paths are relative to the configuration
//! file.
//!
//! These settings live in this crate, which reads them, rather than in accelfed-provider, which
//! reads the rest of the file: the binary composes the two (`cli/src/site_file.rs`) over the same
//! text, so every error keeps its `file:line:column`.

use std::path::PathBuf;

use serde::Deserialize;

use crate::apel::ApelConfig;
use crate::ship::ShipConfig;

/// `[accounting]`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AccountingConfig {
    /// The spool (an SQLite file, created if missing in an existing folder) holding records until the repository has
    /// acknowledged them. Keep it on local disk, not NFS. Its folder must exist (the packages
    /// create /var/spool/accelfed), unless `spool_create` is set.
    #[serde(default = "default_spool")]
    pub spool: PathBuf,
    /// Create the spool's folder (mode 0750) when it is missing, instead of refusing to run: for
    /// a spool outside the packaged layout. Off by default, so a mistyped path is an error rather
    /// than a new, empty spool that nothing ships from.
    #[serde(default)]
    pub spool_create: bool,
    /// Usage no meter can read (bare-metal GPU nodes handed to a VO): a JSON-lines file of
    /// observations, see docs/formats/usage-observations.md. Metered on every run.
    #[serde(default)]
    pub observations: Option<PathBuf>,
    /// The node agents (`accelfed agent`) as a source of ActiveDuration and energy for every
    /// backend: `[accounting.agents]`.
    #[serde(default)]
    pub agents: Option<AgentsConfig>,
    /// The central repository. Needed by `accelfed ship`, not by `accelfed meter`.
    #[serde(default)]
    pub ship: Option<ShipConfig>,
    /// APEL export (`accelfed export`). Needed by `accelfed export` only.
    #[serde(default)]
    pub apel: Option<ApelConfig>,
}

/// `[accounting.agents]`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AgentsConfig {
    /// A folder holding one JSON state document per node agent (`accelfed agent --publish
    /// <folder>/<node>.json`, on a shared file system, or copied there by a node's job). Every
    /// `*.json` in it is read on every run.
    pub documents: PathBuf,
}

fn default_spool() -> PathBuf {
    PathBuf::from("/var/spool/accelfed/spool.sqlite")
}
