//! What one read of a cluster found: its data format, nodes and partitions. `client/` fills it
//! (from the CLI or slurmrestd) and `map.rs` turns it into GLUE2; a file of its own because both,
//! and the fixture tests, build it.

use super::documents::NodesDocument;
use super::nodes::{NodeProblem, SlurmNode};
use super::partitions::SlurmPartition;
use super::version::DataVersion;

/// What the cluster looks like now.
#[derive(Debug, Clone)]
pub struct Inventory {
    pub version: DataVersion,
    /// `22.05.8`, where Slurm says.
    pub release: String,
    pub nodes: Vec<SlurmNode>,
    pub partitions: Vec<SlurmPartition>,
    /// Nodes skipped because their GRES could not be read.
    pub problems: Vec<NodeProblem>,
}

impl Inventory {
    /// The cluster as a nodes document and the partitions read after it say (the CLI and
    /// slurmrestd read the two separately).
    pub fn new(nodes: NodesDocument, partitions: Vec<SlurmPartition>) -> Self {
        Self {
            version: nodes.version,
            release: nodes.release,
            nodes: nodes.nodes,
            partitions,
            problems: nodes.problems,
        }
    }
}
