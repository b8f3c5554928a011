//! Secret files (tokens, passwords, TLS keys): read trimmed and never empty, with errors naming the
//! setting and the file, and a warning when every local user may read the file, since anyone who
//! reads it can act as the site or the service. One reader for the binary's token files, the
//! backends' tokens (read again on every run, warned about once per file and process) and the
//! central service's key and LDAP password. The secret itself is never logged.

use std::collections::HashSet;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

/// The files already warned about in this process.
static WARNED: Mutex<Option<HashSet<PathBuf>>> = Mutex::new(None);

/// The secret in `path`, which the setting `what` names (for messages): trimmed, never empty.
pub fn read_token(what: &str, path: &Path) -> Result<String, String> {
    let text =
        std::fs::read_to_string(path).map_err(|err| format!("{what} {}: {err}", path.display()))?;
    let token = text.trim();
    if token.is_empty() {
        return Err(format!("{what} {}: empty", path.display()));
    }
    warn_if_exposed(what, path);
    Ok(token.to_owned())
}

/// Logs a warning naming `setting` and `path` when the file is readable by every local user;
/// once per file and process (a backend may read its token for every call).
pub fn warn_if_exposed(setting: &str, path: &Path) {
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
        tracing::warn!(file = %path.display(), "{setting}: the file is {risk}");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_are_trimmed_and_empty_or_missing_files_are_named() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("token");
        std::fs::write(&path, "abc\n").unwrap();
        assert_eq!(
            read_token("accounting.ship.token_file", &path).unwrap(),
            "abc"
        );
        std::fs::write(&path, " \n").unwrap();
        let err = read_token("accounting.ship.token_file", &path).unwrap_err();
        assert!(
            err.starts_with("accounting.ship.token_file ") && err.ends_with(": empty"),
            "{err}"
        );
        let err = read_token("x", &dir.path().join("missing")).unwrap_err();
        assert!(err.contains("missing"), "{err}");
    }
}
