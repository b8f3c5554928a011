//! Whole node and partition documents: the data, the `meta` block that says which format they are
//! in, and Slurm's own `errors`. Pure, so the recorded-fixture tests run the same code as a site.

use serde::Deserialize;

use super::nodes::{NodeProblem, RawNode, SlurmNode};
use super::partitions::{RawPartition, SlurmPartition};
use super::version::{DataVersion, Meta};

/// A document that could not be used at all.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DocumentError {
    #[error("unreadable JSON: {0}")]
    Json(String),
    #[error("{0}")]
    Version(String),
    #[error("Slurm reported errors: {}", .0.join("; "))]
    Slurm(Vec<String>),
    #[error("no {0:?} list in the document")]
    Missing(&'static str),
}

/// Nodes read from one document.
#[derive(Debug, Clone)]
pub struct NodesDocument {
    pub version: DataVersion,
    pub release: String,
    pub nodes: Vec<SlurmNode>,
    /// Nodes skipped, with why.
    pub problems: Vec<NodeProblem>,
}

#[derive(Deserialize)]
struct Doc<T> {
    #[serde(default)]
    meta: Option<Meta>,
    #[serde(default)]
    errors: Vec<serde_json::Value>,
    nodes: Option<Vec<T>>,
    #[serde(default)]
    partitions: Option<Vec<RawPartition>>,
    /// 23.02+ `sinfo --json` lists `sinfo` records instead of nodes.
    #[serde(default)]
    sinfo: Option<serde::de::IgnoredAny>,
}

fn read_doc<T: serde::de::DeserializeOwned>(
    bytes: &[u8],
) -> Result<(Doc<T>, DataVersion, String), DocumentError> {
    let doc: Doc<T> =
        serde_json::from_slice(bytes).map_err(|err| DocumentError::Json(err.to_string()))?;
    let meta = doc
        .meta
        .clone()
        .ok_or_else(|| DocumentError::Version("the document has no meta block".to_owned()))?;
    let version = meta.version().map_err(DocumentError::Version)?;
    let errors: Vec<String> = doc
        .errors
        .iter()
        .map(|e| {
            e.get("description")
                .and_then(|d| d.as_str())
                .map_or_else(|| e.to_string(), str::to_owned)
        })
        .collect();
    if !errors.is_empty() {
        return Err(DocumentError::Slurm(errors));
    }
    Ok((doc, version, meta.slurm.release))
}

/// Reads a nodes document; nodes whose GRES cannot be read are listed in `problems`.
pub fn parse_nodes(bytes: &[u8]) -> Result<NodesDocument, DocumentError> {
    let (doc, version, release) = read_doc::<RawNode>(bytes)?;
    let raw = doc.nodes.ok_or(DocumentError::Missing("nodes"))?;
    let (mut nodes, mut problems) = (Vec::new(), Vec::new());
    for node in raw {
        match node.read() {
            Ok(node) => nodes.push(node),
            Err(problem) => problems.push(problem),
        }
    }
    Ok(NodesDocument {
        version,
        release,
        nodes,
        problems,
    })
}

/// Reads a partitions document.
pub fn parse_partitions(bytes: &[u8]) -> Result<Vec<SlurmPartition>, DocumentError> {
    let (doc, _, _) = read_doc::<serde::de::IgnoredAny>(bytes)?;
    Ok(doc
        .partitions
        .ok_or(DocumentError::Missing("partitions"))?
        .into_iter()
        .map(RawPartition::read)
        .collect())
}

/// Whether a `sinfo --json` document is 23.02+'s `sinfo` list (nodes must come from scontrol).
pub fn is_sinfo_list(bytes: &[u8]) -> bool {
    serde_json::from_slice::<Doc<serde::de::IgnoredAny>>(bytes)
        .map(|doc| doc.sinfo.is_some() && doc.nodes.is_none())
        .unwrap_or(false)
}
