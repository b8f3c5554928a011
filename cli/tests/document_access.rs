//! `accelfed provide -o` where the document cannot or should not be written is refused before
//! anything is gathered (exit status 2, nothing written), with the folder's owner and mode, who the
//! command runs as, the OS error by name and the fix, not only "Permission denied": a folder of
//! another user, root on the service user's document (the `runuser` line to use instead), and a
//! read-only file system. Needs root (setpriv to another user, chown, mount); scripts/test runs as
//! root.

#![allow(clippy::unwrap_used)]

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use accelfed_tests::central::{NOBODY, accelfed_as};

fn example() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples/site.toml")
}

/// `accelfed provide -o output` as nobody (through setpriv) or as this process.
fn provide(output: &Path, as_nobody: bool) -> Output {
    accelfed_as(as_nobody)
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

/// Makes `path` nobody's.
fn give_to_nobody(path: &Path) {
    std::os::unix::fs::chown(path, Some(NOBODY), Some(NOBODY)).unwrap();
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
    assert_eq!(out.status.code(), Some(2), "{log}");
    assert!(out.stdout.is_empty());
    assert!(
        log.contains(&format!(
            "cannot write {}: Permission denied (EACCES); it belongs to root (uid 0), mode 0755, \
             and this command runs as nobody (uid {NOBODY})",
            documents.display()
        )),
        "{log}"
    );
    assert!(
        log.contains(&format!("chown nobody: {}", documents.display())),
        "{log}"
    );
    // Refused before the site was gathered: no summary line of a published document.
    assert!(!log.contains("published"), "{log}");
    assert!(!documents.join("glue20.ldif").exists());
}

#[test]
#[ignore = "needs root (chown); scripts/test runs as root"]
fn root_on_the_service_users_document_is_refused_with_the_runuser_line() {
    let dir = open_dir();
    let documents = dir.path().join("documents");
    std::fs::create_dir(&documents).unwrap();
    give_to_nobody(&documents);
    let document = documents.join("glue20.ldif");
    std::fs::write(&document, "dn: previous\n").unwrap();
    give_to_nobody(&document);
    let out = provide(&document, false);
    let log = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{log}");
    assert!(
        log.contains(&format!(
            "{} belongs to nobody (uid {NOBODY}) (mode 0",
            document.display()
        )),
        "{log}"
    );
    assert!(log.contains("and this command runs as root"), "{log}");
    assert!(log.contains("nothing was written"), "{log}");
    assert!(log.contains("runuser -u nobody -- "), "{log}");
    assert_eq!(
        std::fs::read_to_string(&document).unwrap(),
        "dn: previous\n"
    );
    let owner = std::os::unix::fs::MetadataExt::uid(&std::fs::metadata(&document).unwrap());
    assert_eq!(owner, NOBODY, "the document is still nobody's");

    // Before the document exists, its folder says whose it is.
    std::fs::remove_file(&document).unwrap();
    let out = provide(&document, false);
    let log = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{log}");
    assert!(
        log.contains(&format!(
            "{} belongs to nobody (uid {NOBODY})",
            documents.display()
        )),
        "{log}"
    );
    assert!(!document.exists());

    // As its owner the same command writes it.
    let out = provide(&document, true);
    let log = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{log}");
    assert!(std::fs::read_to_string(&document).unwrap().contains("dn: "));
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
    assert_eq!(out.status.code(), Some(2), "{log}");
    assert!(
        log.contains(&format!(
            "cannot write {}: Read-only file system (EROFS); it belongs to root (uid 0)",
            documents.display()
        )),
        "{log}"
    );
    assert!(log.contains("ReadWritePaths="), "{log}");
}
