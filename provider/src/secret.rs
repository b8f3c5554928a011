//! The warning for a backend's secret file (a Slurm or Kubernetes token) that other local users
//! may read: once per file and run, although slurmrestd's token is read again for every call (a
//! site may renew it between calls).

use std::collections::HashSet;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

static WARNED: Mutex<Option<HashSet<PathBuf>>> = Mutex::new(None);

/// Logs a warning naming `setting` and `path` when the file is readable by every local user.
pub(crate) fn warn_if_exposed(setting: &str, path: &Path) {
    let Ok(metadata) = std::fs::metadata(path) else {
        return;
    };
    let Some(risk) = accelfed_schemas::secret::exposure(metadata.permissions().mode()) else {
        return;
    };
    let mut warned = WARNED
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    if warned
        .get_or_insert_with(HashSet::new)
        .insert(path.to_owned())
    {
        tracing::warn!(file = %path.display(), "{setting}: the token file is {risk}");
    }
}
