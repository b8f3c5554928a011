//! `accelfed provide -o` into a folder that refuses the document: the error names the folder's
//! owner and mode, who the command runs as, and the fix, not only "Permission denied". Needs root
//! (setpriv to another user, mount); scripts/test runs as root.

#![allow(clippy::unwrap_used)]

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// The uid and gid of `nobody`, who owns nothing in the test's folders.
const NOBODY: u32 = 65534;

fn example() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples/site.toml")
}

/// `accelfed provide -o output` as nobody (through setpriv) or as this process.
fn provide(output: &Path, as_nobody: bool) -> Output {
    let binary = env!("CARGO_BIN_EXE_accelfed");
    let mut command = if as_nobody {
        let mut command = Command::new("setpriv");
        command
            .arg(format!("--reuid={NOBODY}"))
            .arg(format!("--regid={NOBODY}"))
            .arg("--clear-groups")
            .arg(binary);
        command
    } else {
        Command::new(binary)
    };
    command
        .args(["provide", "--format", "ldif-glue20", "--config"])
        .arg(example())
        .arg("-o")
        .arg(output)
        .env_remove("RUST_LOG")
        .env_remove("ACCELFED_CONFIG")
        .current_dir("/")
        .output()
        .unwrap()
}

/// A temporary folder that nobody may enter (tempfile makes them 0700).
fn open_dir() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    dir
}

#[test]
#[ignore = "needs root (setpriv); scripts/test runs as root"]
fn a_folder_of_another_user_is_named_with_its_owner_mode_and_the_runuser_line() {
    let dir = open_dir();
    let documents = dir.path().join("documents");
    std::fs::create_dir(&documents).unwrap();
    std::fs::set_permissions(&documents, std::fs::Permissions::from_mode(0o755)).unwrap();
    let out = provide(&documents.join("glue20.ldif"), true);
    let log = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{log}");
    assert!(out.stdout.is_empty());
    let folder = documents.display();
    assert!(
        log.contains(&format!(
            "EACCES: the folder {folder} belongs to root (uid 0), mode 0755"
        )),
        "{log}"
    );
    assert!(
        log.contains(&format!("this command runs as nobody (uid {NOBODY})")),
        "{log}"
    );
    assert!(log.contains("runuser -u root -- accelfed"), "{log}");
    assert!(!documents.join("glue20.ldif").exists());
}

#[test]
#[ignore = "needs root (mount); scripts/test runs as root"]
fn a_read_only_file_system_is_named_with_the_systemd_fix() {
    let dir = open_dir();
    let documents = dir.path().join("documents");
    std::fs::create_dir(&documents).unwrap();
    let status = Command::new("mount")
        .args(["-t", "tmpfs", "-o", "ro,size=1m", "tmpfs"])
        .arg(&documents)
        .status()
        .unwrap();
    assert!(status.success(), "mount -t tmpfs -o ro");
    let out = provide(&documents.join("glue20.ldif"), false);
    let _ = Command::new("umount").arg(&documents).status();
    let log = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{log}");
    assert!(
        log.contains(&format!(
            "EROFS: the folder {} belongs to root (uid 0)",
            documents.display()
        )),
        "{log}"
    );
    assert!(log.contains("ReadWritePaths="), "{log}");
}
