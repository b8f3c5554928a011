//! `[registry]` in central.toml: limits on pushed documents and how much history is kept. The API
//! listens on `[listen] https`, with the `[tls]` certificate; the store is `[database] url` when it
//! is PostgreSQL, else `registry.sqlite` beside the accounting SQLite file.

use serde::Deserialize;

use super::sanity::{DEFAULT_MAX_CLOCK_SKEW_S, DEFAULT_MAX_VALIDITY_S, TimeLimits};
use super::state::{DEFAULT_KEEP_HISTORY, DEFAULT_MAX_DOCUMENT_BYTES};

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RegistryConfig {
    /// The largest document a site may push, in bytes (default 16 MiB); larger ones are refused
    /// with 413 and the stored document is kept.
    #[serde(default = "default_max_document_bytes")]
    pub max_document_bytes: usize,
    /// How many documents of each site the history keeps (default 100).
    #[serde(default = "default_keep_history")]
    pub keep_history: u32,
    /// How far in the future (seconds past the time of the push) an entity's CreationTime may lie
    /// (default 300); later ones are a site's clock gone wrong, refused with 422.
    #[serde(default = "default_max_clock_skew_s")]
    pub max_clock_skew_s: u64,
    /// The longest Validity an entity may state, in seconds (default 604800, 7 days); longer ones
    /// are refused with 422, as they would keep a document fresh long after it stopped being true.
    #[serde(default = "default_max_validity_s")]
    pub max_validity_s: u64,
}

impl RegistryConfig {
    /// The limits on a pushed document's times.
    pub fn time_limits(&self) -> TimeLimits {
        TimeLimits {
            max_clock_skew_s: self.max_clock_skew_s,
            max_validity_s: self.max_validity_s,
        }
    }
}

impl Default for RegistryConfig {
    fn default() -> Self {
        Self {
            max_document_bytes: DEFAULT_MAX_DOCUMENT_BYTES,
            keep_history: DEFAULT_KEEP_HISTORY,
            max_clock_skew_s: DEFAULT_MAX_CLOCK_SKEW_S,
            max_validity_s: DEFAULT_MAX_VALIDITY_S,
        }
    }
}

fn default_max_document_bytes() -> usize {
    DEFAULT_MAX_DOCUMENT_BYTES
}

fn default_keep_history() -> u32 {
    DEFAULT_KEEP_HISTORY
}

fn default_max_clock_skew_s() -> u64 {
    DEFAULT_MAX_CLOCK_SKEW_S
}

fn default_max_validity_s() -> u64 {
    DEFAULT_MAX_VALIDITY_S
}
