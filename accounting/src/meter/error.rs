//! Why an observation could not become usage records.

use accelfed_schemas::usage::UsageError;

/// A refused observation; names the resource so the site admin can find the VM, pod or job.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum MeterError {
    #[error("{site} {resource}: utilisation must be a fraction within 0..=1, got {value}")]
    Utilisation {
        site: String,
        resource: String,
        value: f64,
    },
    #[error(
        "{site} {resource}: energy must be a finite, non-negative number of watt-hours, got {value}"
    )]
    Energy {
        site: String,
        resource: String,
        value: f64,
    },
    #[error(transparent)]
    Record(#[from] UsageError),
}
