//! What can go wrong reading Slurm. Every message names the command or endpoint; [`SlurmError::retryable`]
//! says whether running again can help (a timeout or a refused connection may; a missing command or
//! an unknown data format will not).

use super::documents::DocumentError;
use super::jobs::JobsError;

#[derive(Debug, thiserror::Error)]
pub enum SlurmError {
    #[error(
        "`{command}` could not be started: {message} (is Slurm installed? retrying will not help)"
    )]
    Spawn { command: String, message: String },
    #[error("`{command}` failed with {status}: {stderr}")]
    Failed {
        command: String,
        status: String,
        stderr: String,
    },
    #[error(
        "`{command}` did not finish within {timeout_s} s and was killed (a retry may help); stderr: {stderr}"
    )]
    Timeout {
        command: String,
        timeout_s: u64,
        stderr: String,
    },
    #[error("{endpoint}: {message}{}", if *.retryable { " (a retry may help)" } else { "" })]
    Http {
        endpoint: String,
        message: String,
        retryable: bool,
    },
    #[error("cannot read the slurmrestd token file {path}: {message}")]
    Token { path: String, message: String },
    #[error("output of {source_name}: {error}")]
    Document {
        source_name: String,
        error: DocumentError,
    },
    #[error("output of {source_name}: {error}")]
    Jobs {
        source_name: String,
        error: JobsError,
    },
    #[error(
        "node {node}: GPU type {gpu_type:?} cannot be published as a model ({reason}); correct the node's Gres= in slurm.conf or gres.conf, or map the type in [slurm.gpu_types]"
    )]
    GpuType {
        node: String,
        gpu_type: String,
        reason: String,
    },
    #[error("the thread reading Slurm's jobs stopped: {0}")]
    Worker(String),
}

impl SlurmError {
    /// Whether running again may succeed without anyone changing anything.
    pub fn retryable(&self) -> bool {
        match self {
            SlurmError::Timeout { .. } => true,
            SlurmError::Http { retryable, .. } => *retryable,
            // slurmctld or slurmdbd being briefly unreachable makes the commands fail too.
            SlurmError::Failed { stderr, .. } => {
                stderr.contains("Unable to contact") || stderr.contains("Connection refused")
            }
            _ => false,
        }
    }
}
