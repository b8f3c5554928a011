//! Why a document could not be written where `-o` points: the OS error alone ("Permission denied")
//! names neither whose the folder is nor what to do. For the errors an owner or a mount causes
//! (EACCES, EPERM, EROFS) the message adds the folder's owner and mode, who this process runs as,
//! and the fix: the packaged folder for documents, /var/lib/accelfed, is the service user's, and
//! a BDII or an administrator running `provide -o` there as another user meets exactly this.
//!
//! Linux, as the rest of accelfed: the effective uid from `/proc/self/status`, names from
//! `/etc/passwd` (std has neither; the same two lines as accounting's spool checks, which this
//! crate may not depend on).

use std::io;
use std::os::unix::fs::MetadataExt;
use std::path::Path;

/// The effective uid of this process (`Uid:` in `/proc/self/status`: real, effective, saved, fs).
fn effective_uid() -> Option<u32> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let uids = status.lines().find_map(|line| line.strip_prefix("Uid:"))?;
    uids.split_whitespace().nth(1)?.parse().ok()
}

/// The name `/etc/passwd` gives `uid`, if any.
fn user_name(uid: u32) -> Option<String> {
    let passwd = std::fs::read_to_string("/etc/passwd").ok()?;
    passwd.lines().find_map(|line| {
        let mut fields = line.split(':');
        let name = fields.next()?;
        let id: u32 = fields.nth(1)?.parse().ok()?;
        (id == uid).then(|| name.to_owned())
    })
}

/// `accelfed (uid 998)`, or `uid 998` where `/etc/passwd` knows no name.
fn who(uid: u32) -> String {
    match user_name(uid) {
        Some(name) => format!("{name} (uid {uid})"),
        None => format!("uid {uid}"),
    }
}

/// The sentence to add to `error` met writing a file in `folder`; empty for other errors.
pub(crate) fn explain(folder: &Path, error: &io::Error) -> String {
    const EPERM: i32 = 1;
    const EACCES: i32 = 13;
    const EROFS: i32 = 30;
    // tempfile wraps the OS error with the temporary's path: its kind survives, its number not.
    let code = match (error.raw_os_error(), error.kind()) {
        (Some(code), _) => code,
        (None, io::ErrorKind::PermissionDenied) => EACCES,
        (None, io::ErrorKind::ReadOnlyFilesystem) => EROFS,
        (None, _) => return String::new(),
    };
    let Ok(meta) = std::fs::metadata(folder) else {
        return String::new();
    };
    let place = format!(
        "{} belongs to {}, mode {:04o}",
        folder.display(),
        who(meta.uid()),
        meta.mode() & 0o7777
    );
    match code {
        EACCES | EPERM => {
            let runner = effective_uid().map_or_else(|| "an unknown user".to_owned(), who);
            let name = if code == EACCES { "EACCES" } else { "EPERM" };
            let owner = user_name(meta.uid()).unwrap_or_else(|| meta.uid().to_string());
            format!(
                " ({name}: the folder {place}, and this command runs as {runner}; run it as the \
                 folder's owner (runuser -u {owner} -- accelfed ...), or write to a folder \
                 this user owns)"
            )
        }
        EROFS => format!(
            " (EROFS: the folder {place} is on a read-only file system; under systemd, add it to \
             the unit's ReadWritePaths=)"
        ),
        _ => String::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_refused_folder_is_named_with_its_owner_mode_and_who_runs() {
        let dir = tempfile::tempdir().unwrap();
        let text = explain(dir.path(), &io::Error::from_raw_os_error(13));
        let uid = std::fs::metadata(dir.path()).unwrap().uid();
        assert!(
            text.contains(&format!("{} belongs to", dir.path().display())),
            "{text}"
        );
        assert!(text.contains(&format!("(uid {uid}), mode 0")), "{text}");
        assert!(
            text.contains("this command runs as") && text.contains("runuser -u"),
            "{text}"
        );
        let read_only = explain(dir.path(), &io::Error::from_raw_os_error(30));
        assert!(
            read_only.contains("EROFS") && read_only.contains("ReadWritePaths="),
            "{read_only}"
        );
        assert_eq!(explain(dir.path(), &io::Error::from_raw_os_error(28)), "");
        // As tempfile hands it over: the kind, with the temporary's path instead of the number.
        let wrapped = io::Error::new(io::ErrorKind::PermissionDenied, "at path x");
        assert!(explain(dir.path(), &wrapped).contains("EACCES"));
    }
}
