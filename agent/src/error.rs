//! What stops the agent: each a sentence naming what failed and where, never a panic.

use std::path::PathBuf;

#[derive(Debug, thiserror::Error)]
pub enum AgentError {
    /// The NVML library could not be loaded (no driver installed, or a wrong path).
    #[error(
        "the NVIDIA management library could not be loaded from {library}: {detail} (is the NVIDIA driver installed? give its path with --nvml-library)"
    )]
    LibraryMissing { library: String, detail: String },
    /// The library loaded, but the kernel driver is not running.
    #[error("NVML from {library} found no running NVIDIA driver: {detail}")]
    DriverNotLoaded { library: String, detail: String },
    /// The driver runs but shows no GPU.
    #[error("NVML from {library} shows no GPU on this node")]
    NoGpu { library: String },
    /// An NVML call the agent needs failed.
    #[error("NVML {call} failed: {detail}")]
    Nvml { call: String, detail: String },
    /// The state file could not be read or written.
    #[error("agent state file {path}: {detail}")]
    State { path: PathBuf, detail: String },
    /// The HTTP endpoint could not be opened.
    #[error("the agent's endpoint {address}: {detail}")]
    Listen { address: String, detail: String },
}

impl AgentError {
    pub(crate) fn nvml(call: &str, error: impl std::fmt::Display) -> Self {
        Self::Nvml {
            call: call.to_owned(),
            detail: error.to_string(),
        }
    }
}
