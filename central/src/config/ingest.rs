//! `[ingest]` of central.toml: the limits on what one site's calls may hold.

use serde::Deserialize;

use accelfed_accounting::repository::DEFAULT_MAX_BATCH;

use super::positive;

/// `[ingest]`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct IngestConfig {
    /// The most records one batch may hold; records past it are refused with `batch_too_large`.
    #[serde(default = "default_max_batch", deserialize_with = "positive")]
    pub max_batch: usize,
    /// The most bytes one call's message may hold (default 16 MiB, room for 50,000 records);
    /// larger ones are refused (`resource_exhausted`) without being decoded.
    #[serde(default = "default_max_message_bytes", deserialize_with = "positive")]
    pub max_message_bytes: usize,
    /// Distinct VOs one site may report in one month (default 1000); records past it are refused
    /// alone.
    #[serde(default = "default_max_vos_per_month", deserialize_with = "positive")]
    pub max_vos_per_month: usize,
    /// Distinct users (GlobalUserName) one site may report in one month (default 10000); records
    /// past it are refused alone, records without a user are not counted.
    #[serde(default = "default_max_users_per_month", deserialize_with = "positive")]
    pub max_users_per_month: usize,
    /// Distinct GPU models one site may report in one month (default 100).
    #[serde(
        default = "default_max_models_per_month",
        deserialize_with = "positive"
    )]
    pub max_models_per_month: usize,
}

fn default_max_vos_per_month() -> usize {
    crate::distinct_caps::DEFAULT_MAX_VOS_PER_MONTH
}

fn default_max_users_per_month() -> usize {
    crate::distinct_caps::DEFAULT_MAX_USERS_PER_MONTH
}

fn default_max_models_per_month() -> usize {
    crate::distinct_caps::DEFAULT_MAX_MODELS_PER_MONTH
}

impl Default for IngestConfig {
    fn default() -> Self {
        Self {
            max_batch: default_max_batch(),
            max_message_bytes: default_max_message_bytes(),
            max_vos_per_month: default_max_vos_per_month(),
            max_users_per_month: default_max_users_per_month(),
            max_models_per_month: default_max_models_per_month(),
        }
    }
}

fn default_max_message_bytes() -> usize {
    crate::batch_limits::DEFAULT_MAX_MESSAGE_BYTES
}

fn default_max_batch() -> usize {
    DEFAULT_MAX_BATCH
}
