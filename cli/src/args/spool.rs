//! `accelfed spool`: looking at and releasing the records the meter held back.

use std::path::PathBuf;

use super::SpoolOverride;

#[derive(Debug, clap::Args)]
pub struct SpoolArgs {
    /// The site configuration file (TOML) with an [accounting] table.
    #[arg(short, long, env = "ACCELFED_CONFIG", global = true)]
    pub config: Option<PathBuf>,
    #[command(flatten)]
    pub spool: SpoolOverride,
    #[command(subcommand)]
    pub action: SpoolAction,
}

#[derive(Debug, clap::Subcommand)]
pub enum SpoolAction {
    /// List the records held back (id, month, model, GPU-hours and why), one per line.
    Held,
    /// Release held records: they are shipped (and exported to APEL) as metered. Correcting the
    /// configuration or the manual-usage file and metering again releases them too.
    Release {
        /// The record ids to release, as `spool held` lists them.
        #[arg(value_name = "RECORD_ID", required_unless_present = "all")]
        ids: Vec<String>,
        /// Release every held record.
        #[arg(long, conflicts_with = "ids")]
        all: bool,
    },
}
