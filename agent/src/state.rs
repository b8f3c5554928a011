//! The ledger's file: JSON, replaced atomically (a temporary file beside it, flushed to disk, then
//! renamed over it), so a crash leaves the old state or the new one, never half of one. Saved
//! after every reading; what happened between the last save and a crash is counted once, in the
//! first window after the restart (its start is the saved last reading).

use std::io::Write;
use std::path::Path;

use crate::error::AgentError;
use crate::ledger::{Ledger, VERSION};

/// The saved ledger, or a new one where there is no file yet. A file that cannot be read or parsed
/// is an error: starting afresh would lose what it counted.
pub fn load(path: &Path) -> Result<Ledger, AgentError> {
    let text = match std::fs::read_to_string(path) {
        Ok(text) => text,
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => return Ok(Ledger::new()),
        Err(error) => return Err(state_error(path, error)),
    };
    let ledger: Ledger = serde_json::from_str(&text)
        .map_err(|e| state_error(path, format!("not an agent state: {e}")))?;
    if ledger.version != VERSION {
        return Err(state_error(
            path,
            format!(
                "format version {} (this agent writes {VERSION})",
                ledger.version
            ),
        ));
    }
    Ok(ledger)
}

pub fn save(path: &Path, ledger: &Ledger) -> Result<(), AgentError> {
    let text = serde_json::to_vec(ledger).map_err(|e| state_error(path, e))?;
    let dir = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let mut temporary = tempfile_in(dir, path)?;
    temporary
        .1
        .write_all(&text)
        .and_then(|()| temporary.1.sync_all())
        .map_err(|e| state_error(path, e))?;
    std::fs::rename(&temporary.0, path).map_err(|e| state_error(path, e))?;
    // The rename itself reaches the disk with the folder.
    if let Ok(folder) = std::fs::File::open(dir) {
        let _ = folder.sync_all();
    }
    Ok(())
}

/// Writes the JSON document to `path`, replaced whole (a reader never sees half of it).
pub fn publish(path: &Path, document: &serde_json::Value) -> Result<(), AgentError> {
    let dir = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let mut temporary = tempfile_in(dir, path)?;
    serde_json::to_writer(&mut temporary.1, document).map_err(|e| state_error(path, e))?;
    std::fs::rename(&temporary.0, path).map_err(|e| state_error(path, e))
}

fn tempfile_in(dir: &Path, path: &Path) -> Result<(std::path::PathBuf, std::fs::File), AgentError> {
    let name = path.file_name().map_or_else(
        || "agent-state".into(),
        |n| n.to_string_lossy().into_owned(),
    );
    let temporary = dir.join(format!(".{name}.{}.tmp", std::process::id()));
    let file = std::fs::File::create(&temporary).map_err(|e| state_error(path, e))?;
    Ok((temporary, file))
}

fn state_error(path: &Path, detail: impl std::fmt::Display) -> AgentError {
    AgentError::State {
        path: path.to_path_buf(),
        detail: detail.to_string(),
    }
}
