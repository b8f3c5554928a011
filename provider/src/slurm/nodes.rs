//! Nodes as Slurm reports them (22.05 `sinfo --json`, 23.02+ `scontrol show nodes --json`,
//! slurmrestd `GET /slurm/v0.0.NN/nodes`): name, state, GPUs configured and allocated, partitions.

use serde::Deserialize;

use super::gres::{GresError, parse_gpu_gres};
use super::json::{Names, Num, States, opt_string};

/// A node as the JSON carries it; fields of every format version, all optional.
#[derive(Debug, Clone, Deserialize)]
pub struct RawNode {
    pub name: String,
    #[serde(default)]
    pub state: States,
    /// 22.05 keeps flags (`DRAIN`, `NOT_RESPONDING`) apart from the base state.
    #[serde(default)]
    pub state_flags: States,
    #[serde(default, deserialize_with = "opt_string")]
    pub gres: String,
    #[serde(default, deserialize_with = "opt_string")]
    pub gres_used: String,
    #[serde(default)]
    pub partitions: Names,
    #[serde(default)]
    pub cpus: Num,
    /// MiB, as slurm.conf's RealMemory.
    #[serde(default)]
    pub real_memory: Num,
}

/// GPUs of one type on one node.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NodeGpus {
    /// The Slurm GRES type; `None` for untyped GPUs (`gpu:4`).
    pub gpu_type: Option<String>,
    pub total: u64,
    pub used: u64,
}

/// A node, read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SlurmNode {
    pub name: String,
    /// Upper-case states and flags: `IDLE`, `MIXED`, `DRAIN`...
    pub states: Vec<String>,
    /// Down, drained, draining, failing or not responding: its idle GPUs cannot be had.
    pub unavailable: bool,
    pub gpus: Vec<NodeGpus>,
    pub partitions: Vec<String>,
    pub cpus: Option<u64>,
    pub memory_mib: Option<u64>,
}

/// States in which a node takes no new jobs. A draining node still runs its jobs (their GPUs are
/// used) but its idle GPUs are not free.
const UNAVAILABLE: &[&str] = &[
    "DOWN",
    "DRAIN",
    "DRAINED",
    "DRAINING",
    "NOT_RESPONDING",
    "NO_RESPOND",
    "FAIL",
    "FAILING",
    "FUTURE",
    "POWERED_DOWN",
    "POWERING_DOWN",
    "POWER_DOWN",
    "INVALID_REG",
    "MAINTENANCE",
    "REBOOT_ISSUED",
];

/// Why one node was skipped.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum NodeProblem {
    #[error("node {node}: configured GPUs: {source}")]
    Gres { node: String, source: GresError },
    #[error("node {node}: allocated GPUs: {source}")]
    GresUsed { node: String, source: GresError },
    #[error("node {node}: {used} {kind} GPUs allocated but {total} configured")]
    Overused {
        node: String,
        kind: String,
        used: u64,
        total: u64,
    },
}

impl RawNode {
    /// Reads the node's GPUs and state; a GRES we cannot read skips the node with the reason.
    pub fn read(self) -> Result<SlurmNode, NodeProblem> {
        let node = self.name.clone();
        let total = parse_gpu_gres(&self.gres).map_err(|source| NodeProblem::Gres {
            node: node.clone(),
            source,
        })?;
        let used = parse_gpu_gres(&self.gres_used).map_err(|source| NodeProblem::GresUsed {
            node: node.clone(),
            source,
        })?;
        let mut gpus: Vec<NodeGpus> = total
            .into_iter()
            .map(|g| NodeGpus {
                gpu_type: g.gpu_type,
                total: g.count,
                used: 0,
            })
            .collect();
        for allocated in used {
            // 23.02+ may print allocations untyped (`gpu:2`) on a node with one typed kind.
            let target = match &allocated.gpu_type {
                Some(_) => gpus.iter_mut().find(|g| g.gpu_type == allocated.gpu_type),
                None if gpus.len() == 1 => gpus.first_mut(),
                None => gpus.iter_mut().find(|g| g.gpu_type.is_none()),
            };
            match target {
                Some(gpu) => gpu.used += allocated.count,
                None if allocated.count == 0 => {}
                None => {
                    return Err(NodeProblem::Overused {
                        node,
                        kind: allocated.gpu_type.unwrap_or_else(|| "untyped".into()),
                        used: allocated.count,
                        total: 0,
                    });
                }
            }
        }
        if let Some(gpu) = gpus.iter().find(|g| g.used > g.total) {
            return Err(NodeProblem::Overused {
                node,
                kind: gpu.gpu_type.clone().unwrap_or_else(|| "untyped".into()),
                used: gpu.used,
                total: gpu.total,
            });
        }
        let states: Vec<String> = self
            .state
            .0
            .into_iter()
            .chain(self.state_flags.0)
            .map(|s| {
                s.trim_end_matches(['*', '~', '#', '%', '!', '@', '^', '-'])
                    .to_owned()
            })
            .collect();
        let unavailable = states.iter().any(|s| UNAVAILABLE.contains(&s.as_str()));
        Ok(SlurmNode {
            name: self.name,
            states,
            unavailable,
            gpus,
            partitions: self.partitions.0,
            cpus: self.cpus.as_u64(),
            memory_mib: self.real_memory.as_u64(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn node(json: &str) -> Result<SlurmNode, NodeProblem> {
        serde_json::from_str::<RawNode>(json).unwrap().read()
    }

    #[test]
    fn v0038_node_with_jobs() {
        let node = node(
            r#"{"name": "afnode", "gres": "gpu:a100:4", "gres_used": "gpu:a100:3(IDX:0-2)",
                "state": "allocated", "state_flags": [], "partitions": ["gpu", "atlas"],
                "cpus": 2, "real_memory": 4000}"#,
        )
        .unwrap();
        assert_eq!(
            node.gpus,
            vec![NodeGpus {
                gpu_type: Some("a100".into()),
                total: 4,
                used: 3
            }]
        );
        assert!(!node.unavailable);
        assert_eq!(node.partitions, vec!["gpu", "atlas"]);
    }

    #[test]
    fn drained_draining_down_and_not_responding_are_unavailable() {
        for (state, flags) in [
            (r#""idle""#, r#"["DRAIN"]"#),
            (r#"["MIXED", "DRAIN"]"#, "[]"),
            (r#"["DOWN"]"#, "[]"),
            (r#""idle""#, r#"["NOT_RESPONDING"]"#),
        ] {
            let node = node(&format!(
                r#"{{"name": "n", "gres": "gpu:2", "state": {state}, "state_flags": {flags}}}"#
            ))
            .unwrap();
            assert!(node.unavailable, "{state} {flags}");
        }
    }

    #[test]
    fn untyped_allocation_on_a_one_type_node_counts_for_that_type() {
        let node =
            node(r#"{"name": "n", "gres": "gpu:h100:8(S:0-1)", "gres_used": "gpu:3"}"#).unwrap();
        assert_eq!(node.gpus[0].used, 3);
    }

    #[test]
    fn bad_gres_names_the_node() {
        let err = node(r#"{"name": "gpu07", "gres": "gpu:a100:x"}"#).unwrap_err();
        assert!(
            err.to_string().starts_with("node gpu07: configured GPUs"),
            "{err}"
        );
        let err = node(r#"{"name": "gpu08", "gres": "gpu:a100:2", "gres_used": "gpu:a100:3"}"#)
            .unwrap_err();
        assert!(
            err.to_string().contains("3 a100 GPUs allocated but 2"),
            "{err}"
        );
    }
}
