//! Reading a token file (the site's repository, registry and AMS tokens): trimmed, never empty,
//! errors naming the setting and the file, and a warning when the file is readable by every local
//! user, since anyone who reads it can ship or push as the site.

use std::os::unix::fs::PermissionsExt;
use std::path::Path;

/// The token in `path`, which the setting `what` names (for messages). The token is never logged.
pub fn read_token(what: &str, path: &Path) -> Result<String, String> {
    let text =
        std::fs::read_to_string(path).map_err(|err| format!("{what} {}: {err}", path.display()))?;
    let token = text.trim();
    if token.is_empty() {
        return Err(format!("{what} {}: empty", path.display()));
    }
    if let Ok(metadata) = std::fs::metadata(path)
        && let Some(risk) = accelfed_schemas::secret::exposure(metadata.permissions().mode())
    {
        tracing::warn!(file = %path.display(), "{what}: the token file is {risk}");
    }
    Ok(token.to_owned())
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
