//! `[registry]` in central.toml: limits on pushed documents and how much history is kept. The API
//! listens on `[listen] https`, with the `[tls]` certificate; the store is `[database] url` when it
//! is PostgreSQL, else `registry.sqlite` beside the accounting SQLite file.

use serde::Deserialize;

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
}

impl Default for RegistryConfig {
    fn default() -> Self {
        Self {
            max_document_bytes: DEFAULT_MAX_DOCUMENT_BYTES,
            keep_history: DEFAULT_KEEP_HISTORY,
        }
    }
}

fn default_max_document_bytes() -> usize {
    DEFAULT_MAX_DOCUMENT_BYTES
}

fn default_keep_history() -> u32 {
    DEFAULT_KEEP_HISTORY
}
