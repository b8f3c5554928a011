//! The agent's settings (`accelfed agent`'s flags).

use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

use crate::idle::IdleRule;

/// The name Debian's packages and NVIDIA's container toolkit give the library.
pub const DEFAULT_LIBRARY: &str = "libnvidia-ml.so.1";

#[derive(Debug, Clone)]
pub struct AgentConfig {
    /// The NVML library to load; `None` is [`DEFAULT_LIBRARY`] through the loader's search path.
    pub library: Option<PathBuf>,
    /// How often the GPUs are read: one sampling window.
    pub period: Duration,
    /// Where the endpoint listens (127.0.0.1 by default: the meter runs on the node).
    pub listen: SocketAddr,
    /// The state file (held, active, idle seconds and energy per holder).
    pub state_file: PathBuf,
    /// Where processes' cgroup files are read (`<proc_root>/<pid>/cgroup`); `/proc` on a node,
    /// the host's `/proc` mounted elsewhere in a container.
    pub proc_root: PathBuf,
    /// What counts as idle.
    pub idle_rule: IdleRule,
    /// A gap between two readings longer than this (the agent stopped, the node slept) is not
    /// attributed to holders: who held the GPU then is unknown. Its energy is kept as unattributed.
    pub max_gap: Duration,
    /// Holders not seen for this long leave the state file (the meter has read them by then).
    pub retention: Duration,
    /// Where the JSON document is also written every period (replaced whole, never half-written):
    /// a folder the site's meter reads (`[accounting.agents] documents`), on a shared file system
    /// or one a node's job copies from. `None`: the endpoint only.
    pub publish: Option<PathBuf>,
}

impl AgentConfig {
    /// The settings for a node: the given state file, everything else default.
    pub fn new(state_file: PathBuf) -> Self {
        Self {
            library: None,
            period: Duration::from_secs(5),
            listen: SocketAddr::from(([127, 0, 0, 1], 9477)),
            state_file,
            proc_root: PathBuf::from("/proc"),
            idle_rule: IdleRule::default(),
            max_gap: Duration::from_secs(60),
            // Longer than the meter's default window (from the previous month's start: up to 62
            // days back), so a record the meter builds again still finds its holder's figures.
            retention: Duration::from_secs(70 * 24 * 3600),
            publish: None,
        }
    }

    /// The library path as written in messages.
    pub fn library_name(&self) -> String {
        self.library
            .as_ref()
            .map_or_else(|| DEFAULT_LIBRARY.to_owned(), |p| p.display().to_string())
    }

    /// The longest window still attributed: [`AgentConfig::max_gap`], and never under three periods.
    pub fn attributable_gap_ms(&self) -> u64 {
        let gap = self.max_gap.max(self.period * 3);
        u64::try_from(gap.as_millis()).unwrap_or(u64::MAX)
    }
}
