//! `[accounting.apel]`: where `accelfed export` sends the spool's records as APEL accelerator
//! messages, for EGI's accounting repository. Exactly one destination: `[accounting.apel.dirq]`
//! (an ssmsend outgoing directory) or `[accounting.apel.ams]` (ARGO AMS directly).

use std::path::PathBuf;

use serde::Deserialize;

/// `[accounting.apel]`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ApelConfig {
    /// The file holding the last spool version exported; default: the spool's path with
    /// `.apel-watermark` appended. Delete it to export everything again.
    #[serde(default)]
    pub watermark: Option<PathBuf>,
    /// Write messages to ssmsend's outgoing queue (python-dirq `QueueSimple` layout).
    #[serde(default)]
    pub dirq: Option<DirqConfig>,
    /// Publish messages to ARGO AMS over its REST API.
    #[serde(default)]
    pub ams: Option<AmsConfig>,
}

/// `[accounting.apel.dirq]`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DirqConfig {
    /// The queue directory: ssmsend's `[messaging] path` (e.g. `/var/spool/apel/outgoing`).
    pub path: PathBuf,
}

/// `[accounting.apel.ams]`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AmsConfig {
    /// `https://host[:port]` of the AMS service (e.g. `https://msg.argo.grnet.gr`).
    pub endpoint: String,
    /// The AMS project (e.g. `accounting`).
    pub project: String,
    /// The topic APEL reads accelerator messages from, as EGI's accounting team gives it.
    pub topic: String,
    /// A file holding the AMS key (one line, readable by the accelfed user only).
    pub token_file: PathBuf,
    /// PEM file of a CA to trust besides the system's roots.
    #[serde(default)]
    pub ca: Option<PathBuf>,
    /// Seconds one request may take.
    #[serde(default = "default_timeout_s")]
    pub timeout_s: u64,
    /// Requests per message before the run gives up (at least 1; retried on no answer, 429, 5xx).
    #[serde(default = "default_attempts")]
    pub attempts: u32,
}

fn default_timeout_s() -> u64 {
    60
}
fn default_attempts() -> u32 {
    5
}
