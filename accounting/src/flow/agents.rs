//! Reads the folder of node agents' state documents (`[accounting.agents] documents`) for the
//! meter: every `*.json` in it is one agent's `/v1/state` (`accelfed agent --publish`).

use std::path::{Path, PathBuf};

use crate::meter::AgentUsage;

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
    },
    /// The folder could not be listed: nothing was metered (records written without the agents'
    /// figures would replace the ones with them).
    Unread(String),
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
pub(super) fn read_folder(folder: &Path) -> Result<(AgentUsage, usize, Vec<String>), String> {
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
