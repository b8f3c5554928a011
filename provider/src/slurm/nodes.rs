//! Nodes as Slurm reports them (22.05 `sinfo --json`, 23.02+ `scontrol show nodes --json`,
//! slurmrestd `GET /slurm/v0.0.NN/nodes`): name, state, GPUs configured and allocated, partitions.

use serde::Deserialize;

use super::gres::{GpuGres, GresError, gpus_under_shards, parse_gpu_gres, shard_count};
use super::json::{Names, Num, States, opt_string};
use super::tres::parse_tres_string;

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
    /// The node's trackable resources (`cpu=64,mem=512000M,billing=64,gres/gpu=4`): lists GPUs
    /// only when slurm.conf's `AccountingStorageTRES` tracks `gres/gpu`.
    #[serde(default, deserialize_with = "opt_string")]
    pub tres: String,
    #[serde(default)]
    pub partitions: Names,
    #[serde(default)]
    pub cpus: Num,
    /// CPUs allocated to jobs (every JSON version spells it so).
    #[serde(default)]
    pub alloc_cpus: Num,
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
    /// CPUs allocated to jobs; `None` where Slurm did not say.
    pub alloc_cpus: Option<u64>,
    pub memory_mib: Option<u64>,
    /// Whether the node's `tres` lists `gres/gpu` (the cluster's accounting tracks GPUs); `None`
    /// where Slurm printed no `tres`.
    pub tres_tracks_gpus: Option<bool>,
    /// GPU shards configured (`shard` entries of `gres`), 0 when none.
    pub shards: u64,
    /// Whether the node's `tres` lists `gres/shard`; `None` where Slurm printed no `tres`.
    pub tres_tracks_shards: Option<bool>,
    /// What was odd but still read (GPUs taken from `tres` because `gres` was unreadable).
    pub warnings: Vec<String>,
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

/// The warnings for a cluster whose accounting does not track GPUs or GPU shards: nodes have
/// them but no node's `tres` lists `gres/gpu` (`gres/shard`), so `sacct` and slurmrestd carry none
/// for any job, and every such job reads as a CPU job, metered as nothing. Slurm lists a gres in a
/// node's `tres` (`CfgTRES`) only when `AccountingStorageTRES` tracks it. Nothing is said when the
/// nodes print no `tres`.
pub fn untracked_gpus_warnings(nodes: &[SlurmNode]) -> Vec<String> {
    let reported = nodes.iter().any(|n| n.tres_tracks_gpus.is_some());
    // Saturating: a node may claim any count, and a warning must not overflow on it.
    let gpus = nodes
        .iter()
        .flat_map(|n| &n.gpus)
        .fold(0, |sum: u64, g| sum.saturating_add(g.total));
    let shards = nodes
        .iter()
        .fold(0, |sum: u64, n| sum.saturating_add(n.shards));
    let gpus_tracked = nodes.iter().any(|n| n.tres_tracks_gpus == Some(true));
    let shards_tracked = nodes.iter().any(|n| n.tres_tracks_shards == Some(true));
    let mut warnings = Vec::new();
    if reported && gpus > 0 && !gpus_tracked {
        warnings.push(format!(
            "the cluster's nodes have {gpus} GPUs but its accounting tracks no gres/gpu TRES (no node's tres lists it): jobs' GPUs are not recorded and GPU jobs are metered as 0 GPUs; add gres/gpu (and gres/gpu:<type> per type) to AccountingStorageTRES in slurm.conf and restart slurmctld and slurmdbd"
        ));
    }
    if reported && shards > 0 && !shards_tracked {
        warnings.push(format!(
            "the cluster's nodes have {shards} GPU shards but its accounting tracks no gres/shard TRES (no node's tres lists it): jobs' shards are not recorded and shard jobs are not metered; add gres/shard (and gres/shard:<type> per type) to AccountingStorageTRES in slurm.conf and restart slurmctld and slurmdbd"
        ));
    }
    warnings
}

impl RawNode {
    /// Reads the node's GPUs and state; a GRES we cannot read skips the node with the reason.
    ///
    /// A `gres` that says nothing (`(null)`) or cannot be read while the node's `tres` names GPUs
    /// (`gres/gpu=8`) is read from `tres`, with a warning naming the node: its GPUs exist.
    pub fn read(self) -> Result<SlurmNode, NodeProblem> {
        let node = self.name.clone();
        let tres = parse_tres_string(&self.tres).ok();
        let tres_gpus = tres.as_ref().and_then(|t| t.count).filter(|n| *n > 0);
        let mut warnings = Vec::new();
        let total = match (parse_gpu_gres(&self.gres), tres_gpus) {
            (Ok(gres), Some(count)) if gres.is_empty() => {
                warnings.push(format!(
                    "node {node}: gres {:?} names no GPUs but its tres {:?} names {count}; counting {count} GPUs from tres (check gres.conf and slurm.conf's Gres= for the node)",
                    self.gres, self.tres
                ));
                vec![GpuGres {
                    gpu_type: tres.and_then(|t| t.gpu_type),
                    count,
                }]
            }
            (Err(source), Some(count)) => {
                warnings.push(format!(
                    "node {node}: gres unreadable ({source}) but its tres {:?} names {count} GPUs; counting {count} GPUs from tres",
                    self.tres
                ));
                vec![GpuGres {
                    gpu_type: tres.and_then(|t| t.gpu_type),
                    count,
                }]
            }
            (gres, _) => gres.map_err(|source| NodeProblem::Gres {
                node: node.clone(),
                source,
            })?,
        };
        let tracks = |gres: &str| {
            (!self.tres.trim().is_empty()).then(|| {
                self.tres
                    .split(',')
                    .any(|item| item.trim_start().starts_with(gres))
            })
        };
        let (tres_tracks_gpus, tres_tracks_shards) = (tracks("gres/gpu"), tracks("gres/shard"));
        let shards = shard_count(&self.gres);
        let gres_used = |read: fn(&str) -> Result<Vec<GpuGres>, GresError>| {
            read(&self.gres_used).map_err(|source| NodeProblem::GresUsed {
                node: node.clone(),
                source,
            })
        };
        let mut used = gres_used(parse_gpu_gres)?;
        used.extend(gres_used(gpus_under_shards)?);
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
                Some(gpu) => gpu.used = gpu.used.saturating_add(allocated.count),
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
            alloc_cpus: self.alloc_cpus.as_u64(),
            memory_mib: self.real_memory.as_u64(),
            tres_tracks_gpus,
            shards,
            tres_tracks_shards,
            warnings,
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
    fn gpus_that_shards_in_use_sit_on_are_not_free() {
        // The GRES of a node of the test harness's sharded Slurm 22.05 with one whole-GPU job and
        // shard jobs on GPUs 0 and 1: one GPU is free, not three.
        let node = node(
            r#"{"name": "n", "gres": "gpu:a100:4,shard:a100:16",
                "gres_used": "gpu:a100:1(IDX:2),shard:a100:5(IDX:0-1)"}"#,
        )
        .unwrap();
        assert_eq!((node.gpus[0].total, node.gpus[0].used), (4, 3));
    }

    #[test]
    fn shards_that_accounting_does_not_track_are_warned_about() {
        // The node of the test harness's sharded Slurm 22.05 (its CfgTRES as `scontrol show node`
        // printed it), then the same without gres/shard tracked.
        let tracked = node(
            r#"{"name": "afnode", "gres": "gpu:a100:4,shard:a100:16",
                "tres": "cpu=8,mem=4000M,billing=8,gres/gpu=4,gres/gpu:a100=4,gres/shard=16,gres/shard:a100=16"}"#,
        )
        .unwrap();
        assert_eq!(tracked.shards, 16);
        assert!(untracked_gpus_warnings(&[tracked]).is_empty());
        let untracked = node(
            r#"{"name": "afnode", "gres": "gpu:a100:4,shard:a100:16",
                "tres": "cpu=8,mem=4000M,billing=8,gres/gpu=4,gres/gpu:a100=4"}"#,
        )
        .unwrap();
        let warnings = untracked_gpus_warnings(&[untracked]);
        assert_eq!(warnings.len(), 1, "{warnings:?}");
        assert!(
            warnings[0].contains("16 GPU shards") && warnings[0].contains("AccountingStorageTRES"),
            "{warnings:?}"
        );
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
