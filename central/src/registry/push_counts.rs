//! Registry pushes counted by outcome, for `/metrics`: accepted, and refused by reason (a push
//! without a known token included, which is also logged). Counted per process, as Prometheus
//! counters are: a restart starts them again at zero and `rate()` reads through it.

use std::collections::BTreeMap;
use std::sync::Mutex;

use super::check::Rejection;

/// The outcome a push is counted under.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum PushOutcome {
    Accepted,
    /// Refused, with the reason's label value.
    Refused(&'static str),
}

impl PushOutcome {
    /// The label value of a refused document.
    pub fn of_rejection(rejection: &Rejection) -> Self {
        Self::Refused(match rejection {
            Rejection::TooLarge { .. } => "too_large",
            Rejection::InvalidJson(_) => "invalid_json",
            Rejection::DuplicateKey { .. } => "duplicate_key",
            Rejection::Entities(_) => "entities",
            Rejection::TooManyEntities { .. } => "too_many_entities",
            Rejection::Schema { .. } => "schema",
            Rejection::WrongSite { .. } => "wrong_site",
            Rejection::Inconsistent(_) => "inconsistent",
            Rejection::Time(_) => "time",
            Rejection::Name(_) => "name",
        })
    }
}

/// The counts so far.
#[derive(Debug, Default)]
pub struct PushCounts {
    counts: Mutex<BTreeMap<PushOutcome, u64>>,
}

impl PushCounts {
    pub fn count(&self, outcome: PushOutcome) {
        let mut counts = self
            .counts
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        *counts.entry(outcome).or_default() += 1;
    }

    /// Accepted pushes, and the refused ones per reason.
    pub fn snapshot(&self) -> (u64, BTreeMap<&'static str, u64>) {
        let counts = self
            .counts
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        let mut accepted = 0;
        let mut refused = BTreeMap::new();
        for (outcome, n) in counts.iter() {
            match outcome {
                PushOutcome::Accepted => accepted += n,
                PushOutcome::Refused(reason) => *refused.entry(*reason).or_default() += n,
            }
        }
        (accepted, refused)
    }
}
