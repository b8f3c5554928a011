//! `[registry]` in central.toml: limits on pushed documents and how much history is kept. The API
//! listens on `[listen] https`, with the `[tls]` certificate; the store is `[database] url` when it
//! is PostgreSQL, else `registry.sqlite` beside the accounting SQLite file.

use serde::Deserialize;

use super::body::{BodyRate, DEFAULT_GRACE_S, DEFAULT_MIN_BYTES_PER_S};
use super::check::DEFAULT_MAX_ENTITIES;
use super::sanity::{DEFAULT_MAX_CLOCK_SKEW_S, DEFAULT_MAX_VALIDITY_S, TimeLimits};
use super::state::{DEFAULT_KEEP_HISTORY, DEFAULT_MAX_DOCUMENT_BYTES};
use super::store::{DEFAULT_KEEP_HISTORY_BYTES, Keep};

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
    /// The most GLUE2 entities one pushed document may hold (default 10000); more are refused
    /// with 413 and the stored document is kept.
    #[serde(default = "default_max_entities")]
    pub max_entities: usize,
    /// How many bytes of each site's history are kept (default 32 MiB): older documents past it
    /// are deleted, the latest always kept.
    #[serde(default = "default_keep_history_bytes")]
    pub keep_history_bytes: u64,
    /// The slowest a push body may arrive, in bytes a second after the first `push_grace_s`
    /// (default 32768); a slower push is refused with 408 and its connection closed.
    #[serde(default = "default_min_push_bytes_per_s")]
    pub min_push_bytes_per_s: u64,
    /// Seconds a push body is given before `min_push_bytes_per_s` counts (default 10).
    #[serde(default = "default_push_grace_s")]
    pub push_grace_s: u64,
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

impl RegistryConfig {
    /// The slowest a push body may arrive.
    pub fn body_rate(&self) -> BodyRate {
        BodyRate {
            min_bytes_per_s: self.min_push_bytes_per_s.max(1),
            grace: std::time::Duration::from_secs(self.push_grace_s),
        }
    }

    /// How much of each site's history is kept.
    pub fn keep(&self) -> Keep {
        Keep {
            documents: self.keep_history,
            bytes: self.keep_history_bytes,
        }
    }
}

impl Default for RegistryConfig {
    fn default() -> Self {
        Self {
            max_document_bytes: DEFAULT_MAX_DOCUMENT_BYTES,
            keep_history: DEFAULT_KEEP_HISTORY,
            max_entities: DEFAULT_MAX_ENTITIES,
            keep_history_bytes: DEFAULT_KEEP_HISTORY_BYTES,
            min_push_bytes_per_s: DEFAULT_MIN_BYTES_PER_S,
            push_grace_s: DEFAULT_GRACE_S,
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

fn default_min_push_bytes_per_s() -> u64 {
    DEFAULT_MIN_BYTES_PER_S
}

fn default_push_grace_s() -> u64 {
    DEFAULT_GRACE_S
}

fn default_max_entities() -> usize {
    DEFAULT_MAX_ENTITIES
}

fn default_keep_history_bytes() -> u64 {
    DEFAULT_KEEP_HISTORY_BYTES
}

fn default_max_clock_skew_s() -> u64 {
    DEFAULT_MAX_CLOCK_SKEW_S
}

fn default_max_validity_s() -> u64 {
    DEFAULT_MAX_VALIDITY_S
}
