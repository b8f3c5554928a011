//! Why a backend delivered nothing, typed: its message (the cause chain, as the backend's own error
//! renders it) and whether the next run may succeed as things stand. `gather` and `observe` pass it
//! on in [`crate::ProviderFailure`], so their callers can tell an outage (a timeout, a 503, a
//! daemon briefly unreachable: the next timer run may succeed) from a misconfiguration (a refused
//! credential, a CA that does not match, a command the site's Slurm does not have: nothing changes
//! until someone fixes it), instead of reading it out of a string.

use crate::kubernetes::KubernetesError;
use crate::openstack::OpenstackError;
use crate::slurm::SlurmError;

/// Whether trying again, unchanged, may help.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Retry {
    /// An outage or a timeout: the next run may succeed.
    MayHelp,
    /// The configuration, the credentials or the middleware's answer must change first.
    WillNotHelp,
}

impl Retry {
    pub fn may_help(self) -> bool {
        self == Retry::MayHelp
    }

    pub(crate) fn of(retryable: bool) -> Self {
        if retryable {
            Retry::MayHelp
        } else {
            Retry::WillNotHelp
        }
    }
}

/// A backend's failure: nothing was delivered.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct BackendError {
    pub message: String,
    pub retry: Retry,
}

impl From<OpenstackError> for BackendError {
    fn from(err: OpenstackError) -> Self {
        Self {
            retry: Retry::of(err.retryable()),
            message: err.to_string(),
        }
    }
}

impl From<SlurmError> for BackendError {
    fn from(err: SlurmError) -> Self {
        Self {
            retry: Retry::of(err.retryable()),
            message: err.to_string(),
        }
    }
}

impl From<KubernetesError> for BackendError {
    fn from(err: KubernetesError) -> Self {
        Self {
            retry: Retry::of(err.retryable()),
            message: err.to_string(),
        }
    }
}
