//! Reads the folder of node agents' state documents (`[accounting.agents] documents`) for the
//! meter: every `*.json` in it is one agent's `/v1/state` (`accelfed agent --publish`). Their
//! figures are stored in the spool first, and the run's observations are filled from what the
//! spool holds for their holders, so a node whose document is missing on a run keeps its
//! holders' last figures (`spool/agent_figures.rs`).

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use accelfed_schemas::usage::Observation;

use crate::meter::{AgentUsage, holders_of};
use crate::spool::Spool;

use super::meter::MeterPlan;

/// The largest agent document read (a node's holders over the retention: far below this).
const MAX_DOCUMENT_BYTES: u64 = 64 << 20;

/// What the agents' folder gave.
#[derive(Debug)]
pub enum AgentsRead {
    Read {
        folder: PathBuf,
        documents: usize,
        /// Observations an agent knew (their ActiveDuration and energy are the agents').
        matched: usize,
        /// Documents not used, each naming its file.
        refused: Vec<String>,
        /// Places (a holder's GPU, MIG or vGPU instance) of the observations metered from the
        /// figures an earlier run kept, because no document of this run names them.
        kept: usize,
    },
    /// The folder could not be listed, or the spool that keeps the agents' figures not opened:
    /// nothing was metered (records written without the agents' figures would replace the ones
    /// with them).
    Unread(String),
}

/// Reads `folder`, keeps its figures in the plan's spool and fills `observations` with what the
/// spool holds for their holders. Where the folder or the spool cannot be read, `observations`
/// are emptied: records without the agents' figures would replace the ones with them.
pub(super) fn fill(
    plan: &MeterPlan<'_>,
    folder: &Path,
    observations: &mut Vec<Observation>,
) -> AgentsRead {
    match kept_and_applied(plan, folder, observations) {
        Ok(read) => read,
        Err(problem) => {
            observations.clear();
            AgentsRead::Unread(problem)
        }
    }
}

fn kept_and_applied(
    plan: &MeterPlan<'_>,
    folder: &Path,
    observations: &mut Vec<Observation>,
) -> Result<AgentsRead, String> {
    let (usage, documents, refused) = read_folder(folder)?;
    let kept_in = |e: crate::spool::SpoolError| format!("cannot keep the agents' figures: {e}");
    let mut spool = Spool::open_with(&plan.spool, plan.accounting.spool_create).map_err(kept_in)?;
    spool
        .remember_agent_figures(usage.figures())
        .map_err(kept_in)?;
    let keys: BTreeSet<(String, String)> = observations.iter().flat_map(holders_of).collect();
    let read: BTreeSet<(String, String, String)> =
        usage.figures().map(|f| (f.kind, f.id, f.place)).collect();
    let mut stored = AgentUsage::default();
    let mut kept = BTreeSet::new();
    for figure in spool.agent_figures_of(&keys).map_err(kept_in)? {
        let place = (figure.kind.clone(), figure.id.clone(), figure.place.clone());
        if !read.contains(&place) {
            kept.insert(place);
        }
        stored.add_figure(figure);
    }
    let (filled, matched) = stored.apply(std::mem::take(observations), plan.now);
    *observations = filled;
    Ok(AgentsRead::Read {
        folder: folder.to_owned(),
        documents,
        matched,
        refused,
        kept: kept.len(),
    })
}

/// The `*.json` files of `folder`, in name order.
pub fn documents_in(folder: &Path) -> Result<Vec<PathBuf>, String> {
    let entries = std::fs::read_dir(folder)
        .map_err(|e| format!("{}: cannot list the agent documents: {e}", folder.display()))?;
    let mut paths: Vec<PathBuf> = entries
        .filter_map(Result::ok)
        .map(|entry| entry.path())
        .filter(|path| path.extension().is_some_and(|ext| ext == "json"))
        .collect();
    paths.sort();
    Ok(paths)
}

/// One agent document's bytes, refused above the size any node's document reaches.
pub fn read_document(path: &Path) -> Result<Vec<u8>, String> {
    match std::fs::metadata(path) {
        Ok(meta) if meta.len() > MAX_DOCUMENT_BYTES => Err(format!(
            "{}: larger than {MAX_DOCUMENT_BYTES} bytes",
            path.display()
        )),
        _ => std::fs::read(path).map_err(|e| format!("{}: {e}", path.display())),
    }
}

/// Reads every `*.json` of `folder`, in name order.
fn read_folder(folder: &Path) -> Result<(AgentUsage, usize, Vec<String>), String> {
    let paths = documents_in(folder)?;
    let mut usage = AgentUsage::default();
    let mut documents = 0;
    let mut refused = Vec::new();
    for path in paths {
        let added = read_document(&path).and_then(|text| {
            usage
                .add_document(&text)
                .map_err(|problem| format!("{}: {problem}", path.display()))
        });
        match added {
            Ok(_) => documents += 1,
            Err(problem) => refused.push(problem),
        }
    }
    Ok((usage, documents, refused))
}
