//! `accelfed agent`'s flags.

use std::net::SocketAddr;
use std::path::PathBuf;

#[derive(Debug, clap::Args)]
pub struct AgentArgs {
    /// The NVML library to load (default: libnvidia-ml.so.1 through the loader's search path).
    #[arg(long, env = "ACCELFED_NVML_LIBRARY")]
    pub nvml_library: Option<PathBuf>,
    /// Seconds between two readings: one sampling window of the idle rule.
    #[arg(long, default_value_t = 5.0, value_parser = parse_period)]
    pub period: f64,
    /// Address of the local endpoint (/metrics, /v1/state); port 0 picks a free port, printed on
    /// standard output.
    #[arg(long, default_value = "127.0.0.1:9477")]
    pub listen: SocketAddr,
    /// The state file (held, active, idle seconds and energy per holder), kept across restarts.
    #[arg(long, default_value = "/var/lib/accelfed/agent-state.json")]
    pub state: PathBuf,
    /// Where processes' cgroup files are read (<proc-root>/<pid>/cgroup): the host's /proc.
    #[arg(long, default_value = "/proc")]
    pub proc_root: PathBuf,
    /// SM activity (percent) below which a whole window counts as idle.
    #[arg(long, default_value_t = 5.0, value_parser = parse_percent)]
    pub idle_below: f64,
    /// Also write the JSON document (/v1/state) to this file every period, replaced whole: the
    /// site's meter reads a folder of them (`[accounting.agents] documents` in site.toml).
    #[arg(long)]
    pub publish: Option<PathBuf>,
    /// Read once, print the JSON document on standard output, save the state, and leave.
    #[arg(long)]
    pub once: bool,
}

fn parse_period(text: &str) -> Result<f64, String> {
    match text.parse::<f64>() {
        Ok(seconds) if (0.1..=3600.0).contains(&seconds) => Ok(seconds),
        _ => Err(format!("{text:?}: seconds between 0.1 and 3600")),
    }
}

fn parse_percent(text: &str) -> Result<f64, String> {
    match text.parse::<f64>() {
        Ok(percent) if (0.0..=100.0).contains(&percent) => Ok(percent),
        _ => Err(format!("{text:?}: a percentage between 0 and 100")),
    }
}

/// `accelfed idle`'s flags.
#[derive(Debug, clap::Args)]
pub struct IdleArgs {
    /// The agent's endpoint on this node (a loopback address: plain HTTP never leaves the host).
    #[arg(long, default_value = "127.0.0.1:9477", conflicts_with = "from")]
    pub agent: SocketAddr,
    /// The whole site instead of this node: every agent document in site.toml's
    /// `[accounting.agents] documents`, with the VO, FQAN and user its backends know, one row per
    /// job, pod or VM (its idle GPUs, idle since, GPU-hours lost).
    #[arg(long, conflicts_with_all = ["from", "agent"])]
    pub config: Option<PathBuf>,
    /// Read a saved state document (the agent's /v1/state, or `accelfed agent --once`) instead.
    #[arg(long)]
    pub from: Option<PathBuf>,
    /// Only allocations idle for at least this many hours.
    #[arg(long, default_value_t = 0.0, value_parser = parse_hours)]
    pub min_hours: f64,
    /// Output: a table, or JSON for the site's automation.
    #[arg(long, value_enum, default_value = "table")]
    pub format: IdleFormat,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum IdleFormat {
    Table,
    Json,
}

fn parse_hours(text: &str) -> Result<f64, String> {
    match text.parse::<f64>() {
        Ok(hours) if hours >= 0.0 && hours.is_finite() => Ok(hours),
        _ => Err(format!("{text:?}: hours, 0 or more")),
    }
}
