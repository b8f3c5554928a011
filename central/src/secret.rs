//! The warning for the service's secret files (its TLS key, the LDAP bind password) when other
//! local users may read them.

/// Logs a warning when the secret file `path` (setting `setting`) is readable by every local user.
pub(crate) fn warn_if_exposed(setting: &str, path: &std::path::Path) {
    use std::os::unix::fs::PermissionsExt;
    if let Ok(metadata) = std::fs::metadata(path)
        && let Some(risk) = accelfed_schemas::secret::exposure(metadata.permissions().mode())
    {
        tracing::warn!(file = %path.display(), "{setting}: the file is {risk}");
    }
}
