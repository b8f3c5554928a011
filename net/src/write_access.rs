//! Whether this process may write a file, and when not, the sentence that says why: the owner,
//! the mode, who runs the command, the OS error by its symbolic name and the fix. Every command
//! that writes a file the service user owns asks it first: the site spool and the central
//! repository (accelfed-accounting, for SQLite's database and the files beside it) and documents
//! written with `provide --output` (accelfed-publishers). It lives here because both crates take
//! this one, so the checks and their words are one piece.
//!
//! Two traps it closes:
//!
//! * **root running a command once** (the documented backfill `accelfed meter --since ...`): the
//!   files it would create would belong to root, and later runs as the service user could not
//!   write them. Root is refused, with the `runuser` line that runs the same command as the
//!   owner. (Dropping privileges instead needs setuid(2), which the workspace's
//!   `forbid(unsafe_code)` rules out, and which a process with threads cannot do safely anyway.)
//! * **a file or folder this process cannot write** (another owner, a read-only mount, a full
//!   disk): named with the OS's own error (EACCES, EROFS, ENOSPC, EDQUOT), the owner, the mode
//!   and the fix.
//!
//! Linux, as the rest of accelfed: the effective uid comes from `/proc/self/status` and user names
//! from `/etc/passwd` (std has neither, and a crate for two lines is not worth its place).

use std::fs::{Metadata, OpenOptions};
use std::io::{self, Write};
use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

/// The effective uid of this process (`Uid:` in `/proc/self/status`: real, effective, saved, fs).
pub fn effective_uid() -> Option<u32> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let uids = status.lines().find_map(|line| line.strip_prefix("Uid:"))?;
    uids.split_whitespace().nth(1)?.parse().ok()
}

/// The name `/etc/passwd` gives `uid`, if any (users of a directory service stay numbers).
pub fn user_name(uid: u32) -> Option<String> {
    let passwd = std::fs::read_to_string("/etc/passwd").ok()?;
    passwd.lines().find_map(|line| {
        let mut fields = line.split(':');
        let name = fields.next()?;
        let id: u32 = fields.nth(1)?.parse().ok()?;
        (id == uid).then(|| name.to_owned())
    })
}

/// `accelfed (uid 998)`, or `uid 998` where no name is known.
pub fn who(uid: u32) -> String {
    match user_name(uid) {
        Some(name) => format!("{name} (uid {uid})"),
        None => format!("uid {uid}"),
    }
}

/// The name to give `runuser -u` and `chown`: the user's name, else its number.
fn login(uid: u32) -> String {
    user_name(uid).unwrap_or_else(|| uid.to_string())
}

/// The symbolic name of the OS errors a write meets (Linux numbers).
pub fn errno_name(code: i32) -> Option<&'static str> {
    Some(match code {
        1 => "EPERM",
        2 => "ENOENT",
        5 => "EIO",
        13 => "EACCES",
        20 => "ENOTDIR",
        27 => "EFBIG",
        28 => "ENOSPC",
        30 => "EROFS",
        122 => "EDQUOT",
        _ => return None,
    })
}

/// The OS error number of `error`; for an error that lost it (tempfile wraps the OS error with
/// its temporary's path: the kind survives, the number not), the number its kind stands for.
fn os_code(error: &io::Error) -> Option<i32> {
    error.raw_os_error().or(match error.kind() {
        io::ErrorKind::PermissionDenied => Some(13),
        io::ErrorKind::ReadOnlyFilesystem => Some(30),
        io::ErrorKind::StorageFull => Some(28),
        _ => None,
    })
}

/// The symbolic name of `error`'s OS error (`EACCES`), where it has one [`errno_name`] knows.
pub fn errno_of(error: &io::Error) -> Option<&'static str> {
    os_code(error).and_then(errno_name)
}

/// An OS error with its symbolic name: `Permission denied (EACCES)`.
pub fn describe_os(error: &io::Error) -> String {
    let Some(code) = os_code(error) else {
        return error.to_string();
    };
    let text = io::Error::from_raw_os_error(code).to_string();
    let words = text.split(" (os error").next().unwrap_or(&text).to_owned();
    match errno_name(code) {
        Some(name) => format!("{words} ({name})"),
        None => format!("{words} (os error {code})"),
    }
}

/// The folder `path` lives in (`.` for a bare file name).
pub fn folder_of(path: &Path) -> PathBuf {
    match path.parent() {
        Some(folder) if !folder.as_os_str().is_empty() => folder.to_owned(),
        _ => PathBuf::from("."),
    }
}

/// This process's command line, quoted for a shell, for the `runuser` line.
fn command_line() -> String {
    std::env::args_os()
        .map(|arg| {
            let arg = arg.to_string_lossy().into_owned();
            let plain = !arg.is_empty()
                && arg
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || "-_./=:,@+%".contains(c));
            if plain {
                arg
            } else {
                format!("'{}'", arg.replace('\'', r"'\''"))
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// Checks, before anything is written, that this process may write `target` (which may not exist
/// yet): its folder must take a new file (a database's `-wal`, a document's temporary), and each
/// existing file of `in_place` (the files written where they are, not replaced) must open for
/// writing. Root is refused where `target` (or, before it exists, its folder) belongs to another
/// user. `Err` is a sentence naming the owner, the mode and the fix. The folder must exist.
pub fn check_writable(target: &Path, in_place: &[PathBuf]) -> Result<(), String> {
    let folder = folder_of(target);
    let folder_meta = std::fs::metadata(&folder)
        .map_err(|e| format!("its folder {}: {}", folder.display(), describe_os(&e)))?;
    let euid = effective_uid();
    if euid == Some(0) {
        // The target (or, before it exists, its folder) says whose it is.
        let existing = std::fs::metadata(target).ok();
        let (owned, meta) = match &existing {
            Some(meta) => (target, meta),
            None => (folder.as_path(), &folder_meta),
        };
        if meta.uid() != 0 {
            let owner = meta.uid();
            return Err(format!(
                "{} belongs to {} (mode {:04o}) and this command runs as root: files it wrote \
                 there would belong to root, and {}'s own runs (the timers, cron) could not write \
                 them any more; nothing was written. Run it as the owner: runuser -u {} -- {}",
                owned.display(),
                who(owner),
                meta.mode() & 0o7777,
                login(owner),
                login(owner),
                command_line()
            ));
        }
    }
    for file in in_place {
        let Ok(meta) = std::fs::metadata(file) else {
            continue;
        };
        if let Err(error) = OpenOptions::new().read(true).write(true).open(file) {
            return Err(not_writable(target, file, &meta, &error));
        }
    }
    probe(&folder, 0).map_err(|error| not_writable(target, &folder, &folder_meta, &error))
}

/// Creates (and removes) an empty file in `folder`, writing `bytes` zeros to it and waiting for
/// the disk: the OS error a write there would meet, if any.
pub fn probe(folder: &Path, bytes: usize) -> io::Result<()> {
    // One name per probe, not per process: a service opens its repository and its registry in
    // one folder at once, and two probes of one name met as "File exists".
    static PROBES: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let probe = PROBES.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let name = folder.join(format!(".accelfed-probe-{}-{probe}", std::process::id()));
    let result = (|| {
        let mut file = OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o600)
            .open(&name)?;
        if bytes > 0 {
            file.write_all(&vec![0; bytes])?;
            file.sync_all()?;
        }
        Ok(())
    })();
    if result.as_ref().err().map(io::Error::kind) != Some(io::ErrorKind::AlreadyExists) {
        let _ = std::fs::remove_file(&name);
    }
    result
}

/// `what` (the target or its folder, described by `meta`) cannot be written: the OS error, the
/// owner, the mode, who this process is, and the fix for that error.
pub fn not_writable(target: &Path, what: &Path, meta: &Metadata, error: &io::Error) -> String {
    format!(
        "cannot write {}: {}; {}",
        what.display(),
        describe_os(error),
        owner_and_fix(target, what, meta, error)
    )
}

/// The second half of [`not_writable`], for a caller that names the file and the OS error itself:
/// `it belongs to accelfed (uid 998), mode 0755, and this command runs as root. Fix: ...`.
pub fn owner_and_fix(target: &Path, what: &Path, meta: &Metadata, error: &io::Error) -> String {
    let owner = meta.uid();
    let euid = effective_uid();
    let runs_as = euid.map_or_else(|| "an unknown user".to_owned(), who);
    // What to give the user: a folder that refuses new files, or the target and its companions.
    let to_give = if meta.is_dir() {
        what.display().to_string()
    } else {
        format!("{}*", target.display())
    };
    let fix = match errno_of(error) {
        Some("EROFS") => format!(
            "its file system is mounted read-only: remount it read-write (under systemd, add the \
             folder to the unit's ReadWritePaths=), or write to a writable one (and change the \
             path in the configuration); {} is untouched",
            target.display()
        ),
        Some("ENOSPC" | "EDQUOT") => format!(
            "free space on the file system of {} (or raise the quota of {runs_as})",
            what.display()
        ),
        _ => match euid {
            // A root folder (one nobody gave the service user): give it, or write elsewhere.
            Some(me) if owner == 0 && meta.is_dir() => format!(
                "give the folder to the user that runs this command, as root: chown {}: {}, or \
                 write to a folder {} may write",
                login(me),
                what.display(),
                login(me)
            ),
            // The trap of a command once run as root: the user meant to run it gets the files.
            Some(me) if owner == 0 => format!(
                "give the files to the user that runs this command, as root: chown {}: {to_give} \
                 (a run as root left them to root; run such commands as {} from now on: \
                 runuser -u {} -- ...)",
                login(me),
                login(me),
                login(me)
            ),
            Some(me) if me != owner => format!(
                "run the command as its owner (runuser -u {} -- {}), or, if {runs_as} is the \
                 user meant to run it, give it the files as root: chown {}: {to_give}",
                login(owner),
                command_line(),
                login(me),
            ),
            _ => format!(
                "give its owner write permission: chmod u+w {}",
                what.display()
            ),
        },
    };
    format!(
        "it belongs to {}, mode {:04o}, and this command runs as {runs_as}. Fix: {fix}",
        who(owner),
        meta.mode() & 0o7777,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn errors_get_their_symbolic_names() {
        assert_eq!(
            describe_os(&io::Error::from_raw_os_error(28)),
            "No space left on device (ENOSPC)"
        );
        assert_eq!(
            describe_os(&io::Error::from_raw_os_error(13)),
            "Permission denied (EACCES)"
        );
        assert!(describe_os(&io::Error::from_raw_os_error(4)).ends_with("(os error 4)"));
        // As tempfile hands it over: the kind, with the temporary's path instead of the number.
        let wrapped = io::Error::new(io::ErrorKind::PermissionDenied, "at path x");
        assert_eq!(describe_os(&wrapped), "Permission denied (EACCES)");
    }

    #[test]
    fn this_process_has_an_effective_uid_and_root_a_name() {
        assert!(effective_uid().is_some());
        assert_eq!(user_name(0).as_deref(), Some("root"));
        assert_eq!(who(0), "root (uid 0)");
    }

    #[test]
    fn a_writable_folder_passes_and_leaves_no_probe_behind() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("spool.sqlite");
        check_writable(&path, std::slice::from_ref(&path)).unwrap();
        std::fs::write(&path, b"").unwrap();
        check_writable(&path, std::slice::from_ref(&path)).unwrap();
        let left: Vec<_> = std::fs::read_dir(dir.path()).unwrap().collect();
        assert_eq!(left.len(), 1, "{left:?}");
    }

    #[test]
    fn a_missing_folder_is_named() {
        let dir = tempfile::tempdir().unwrap();
        let err = check_writable(&dir.path().join("nope/spool.sqlite"), &[]).unwrap_err();
        assert!(err.contains("nope") && err.contains("ENOENT"), "{err}");
    }

    #[test]
    fn a_refusal_names_owner_mode_runner_and_the_fix_for_its_error() {
        let dir = tempfile::tempdir().unwrap();
        let meta = std::fs::metadata(dir.path()).unwrap();
        let target = dir.path().join("site.ldif");
        let denied = not_writable(
            &target,
            dir.path(),
            &meta,
            &io::Error::from_raw_os_error(13),
        );
        assert!(denied.contains("Permission denied (EACCES)"), "{denied}");
        assert!(
            denied.contains(&format!("belongs to {}, mode 0", who(meta.uid()))),
            "{denied}"
        );
        assert!(denied.contains("this command runs as"), "{denied}");
        let read_only = not_writable(
            &target,
            dir.path(),
            &meta,
            &io::Error::from_raw_os_error(30),
        );
        assert!(read_only.contains("(EROFS)") && read_only.contains("ReadWritePaths="));
        let full = not_writable(
            &target,
            dir.path(),
            &meta,
            &io::Error::from_raw_os_error(122),
        );
        assert!(
            full.contains("(EDQUOT)") && full.contains("quota"),
            "{full}"
        );
    }
}
