//! Before a command writes a database file that the service user owns (the site spool), it checks
//! who owns the file and its folder and whether this process may write them, so that a failure is
//! a sentence naming the owner, the mode and the fix instead of SQLite's "unable to open database
//! file". Two traps it closes:
//!
//! * **root running a command once** (the documented backfill `accelfed meter --since ...`): the
//!   files it would create (the database, its `-wal` and `-shm`) would belong to root, and every
//!   later run as the service user would fail. Root is refused, with the `runuser` line that runs
//!   the same command as the owner. (Dropping privileges instead needs setuid(2), which the
//!   workspace's `forbid(unsafe_code)` rules out, and which a process with threads cannot do
//!   safely anyway.)
//! * **a file or folder this process cannot write** (another owner, a read-only mount): named with
//!   the OS's own error (EACCES, EROFS), the owner, the mode and the fix.
//!
//! After SQLite failed anyway, [`explain`] probes the folder to name the OS error behind SQLite's
//! words ("disk I/O error", "database or disk is full"): ENOSPC, EDQUOT, EROFS, EACCES.
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
fn who(uid: u32) -> String {
    match user_name(uid) {
        Some(name) => format!("{name} (uid {uid})"),
        None => format!("uid {uid}"),
    }
}

/// The name to give `runuser -u` and `chown`: the user's name, else its number.
fn login(uid: u32) -> String {
    user_name(uid).unwrap_or_else(|| uid.to_string())
}

/// The symbolic name of the OS errors a database write meets (Linux numbers).
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

/// An OS error with its symbolic name: `Permission denied (EACCES)`.
pub fn describe_os(error: &io::Error) -> String {
    let Some(code) = error.raw_os_error() else {
        return error.to_string();
    };
    let text = io::Error::from_raw_os_error(code).to_string();
    let words = text.split(" (os error").next().unwrap_or(&text).to_owned();
    match errno_name(code) {
        Some(name) => format!("{words} ({name})"),
        None => format!("{words} (os error {code})"),
    }
}

/// SQLite's special names (`:memory:`, `file:` URIs) are no files to check.
fn is_special(path: &Path) -> bool {
    let text = path.as_os_str().to_string_lossy();
    text.starts_with(':') || text.starts_with("file:")
}

/// The folder `path` lives in (`.` for a bare file name).
pub fn folder_of(path: &Path) -> PathBuf {
    match path.parent() {
        Some(folder) if !folder.as_os_str().is_empty() => folder.to_owned(),
        _ => PathBuf::from("."),
    }
}

/// The database file and the files SQLite keeps beside it.
fn companions(path: &Path) -> Vec<PathBuf> {
    let mut files = vec![path.to_owned()];
    for suffix in ["-wal", "-shm", "-journal"] {
        let mut name = path.as_os_str().to_owned();
        name.push(suffix);
        files.push(PathBuf::from(name));
    }
    files
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

/// Checks, before SQLite opens it, that this process may write the database `path` (which may not
/// exist yet), the files beside it and its folder (where SQLite creates and deletes its `-wal` and
/// `-shm`). `Err` is a sentence naming the owner, the mode and the fix. The folder must exist.
pub fn check_writable(path: &Path) -> Result<(), String> {
    if is_special(path) {
        return Ok(());
    }
    let folder = folder_of(path);
    let folder_meta = std::fs::metadata(&folder)
        .map_err(|e| format!("its folder {}: {}", folder.display(), describe_os(&e)))?;
    let existing: Vec<(PathBuf, Metadata)> = companions(path)
        .into_iter()
        .filter_map(|file| std::fs::metadata(&file).ok().map(|meta| (file, meta)))
        .collect();
    let euid = effective_uid();
    if euid == Some(0) {
        // The database (or, before it exists, its folder) says whose it is.
        let (owned, meta) = existing
            .first()
            .map_or((folder.as_path(), &folder_meta), |(file, meta)| {
                (file.as_path(), meta)
            });
        if meta.uid() != 0 {
            let owner = meta.uid();
            return Err(format!(
                "{} belongs to {} (mode {:04o}) and this command runs as root: files it wrote \
                 there would belong to root, and {}'s own runs (the timers, cron) could not open \
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
    for (file, meta) in &existing {
        if let Err(error) = OpenOptions::new().read(true).write(true).open(file) {
            return Err(not_writable(path, file, meta, euid, &error));
        }
    }
    probe(&folder, 0).map_err(|error| not_writable(path, &folder, &folder_meta, euid, &error))
}

/// Creates (and removes) an empty file in `folder`, writing `bytes` zeros to it and waiting for
/// the disk: the OS error a database write there would meet, if any.
fn probe(folder: &Path, bytes: usize) -> io::Result<()> {
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

/// `what` (the database or its folder) cannot be written: the OS error, the owner, the mode, who
/// this process is, and the fix for that error.
fn not_writable(
    database: &Path,
    what: &Path,
    meta: &Metadata,
    euid: Option<u32>,
    error: &io::Error,
) -> String {
    let owner = meta.uid();
    let runs_as = euid.map_or_else(|| "an unknown user".to_owned(), who);
    let fix = match error.raw_os_error().and_then(errno_name) {
        Some("EROFS") => format!(
            "its file system is mounted read-only: remount it read-write, or put the database on \
             a writable one (and change the path in the configuration); {} is untouched",
            database.display()
        ),
        Some("ENOSPC" | "EDQUOT") => format!(
            "free space on the file system of {} (or raise the quota of {runs_as})",
            what.display()
        ),
        _ => match euid {
            // The trap of a command once run as root: the user meant to run it gets the files.
            Some(me) if owner == 0 => format!(
                "give the files to the user that runs this command, as root: chown {}: {}* \
                 (a run as root left them to root; run such commands as {} from now on: \
                 runuser -u {} -- ...)",
                login(me),
                database.display(),
                login(me),
                login(me)
            ),
            Some(me) if me != owner => format!(
                "run the command as its owner (runuser -u {} -- {}), or, if {runs_as} is the \
                 user meant to run it, give it the files as root: chown {}: {}*",
                login(owner),
                command_line(),
                login(me),
                database.display()
            ),
            _ => format!(
                "give its owner write permission: chmod u+w {}",
                what.display()
            ),
        },
    };
    format!(
        "cannot write {}: {}; it belongs to {}, mode {:04o}, and this command runs as {runs_as}. \
         Fix: {fix}",
        what.display(),
        describe_os(error),
        who(owner),
        meta.mode() & 0o7777,
    )
}

/// How large the probe after a failed write is: a few pages more than SQLite's largest single
/// write to its log, so a file system with less room than a transaction needs says so.
const SPACE_PROBE_BYTES: usize = 256 * 1024;

/// The OS error behind a failed SQLite call on the database `path`, in words with the fix, where
/// the call failed for want of access or space; `None` for other errors, or when the folder shows
/// no fault (the fault was passing).
pub fn explain(path: &Path, error: &rusqlite::Error) -> Option<String> {
    use rusqlite::ErrorCode;
    let code = error.sqlite_error_code()?;
    if !matches!(
        code,
        ErrorCode::CannotOpen
            | ErrorCode::ReadOnly
            | ErrorCode::SystemIoFailure
            | ErrorCode::DiskFull
            | ErrorCode::PermissionDenied
    ) || is_special(path)
    {
        return None;
    }
    if let Err(access) = check_writable(path) {
        return Some(access);
    }
    let folder = folder_of(path);
    match probe(&folder, SPACE_PROBE_BYTES) {
        Err(error) => {
            let meta = std::fs::metadata(&folder).ok()?;
            Some(not_writable(path, &folder, &meta, effective_uid(), &error))
        }
        Ok(()) if code == ErrorCode::DiskFull => Some(format!(
            "the file system of {} or its owner's quota was full (ENOSPC or EDQUOT); it has room \
             again now, run the command again",
            folder.display()
        )),
        Ok(()) => None,
    }
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
        check_writable(&path).unwrap();
        std::fs::write(&path, b"").unwrap();
        check_writable(&path).unwrap();
        let left: Vec<_> = std::fs::read_dir(dir.path()).unwrap().collect();
        assert_eq!(left.len(), 1, "{left:?}");
    }

    #[test]
    fn a_missing_folder_is_named() {
        let dir = tempfile::tempdir().unwrap();
        let err = check_writable(&dir.path().join("nope/spool.sqlite")).unwrap_err();
        assert!(err.contains("nope") && err.contains("ENOENT"), "{err}");
    }
}
