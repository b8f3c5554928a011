//! A spool that cannot or should not be written is refused with its owner, its mode, the OS error
//! and the fix, never SQLite's bare "unable to open database file" or "disk I/O error": root
//! running `meter` on the service user's spool (the documented backfill), a spool a root run left
//! behind, a spool its own user may not write (chmod 0400), a read-only file system (EROFS) and a
//! full one (ENOSPC, a tmpfs with `size=`); and
//! `serve` run as root on the central repository of another user. Needs root (chown, setpriv,
//! mount), as the test command runs.

#![allow(clippy::unwrap_used)]

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use accelfed_tests::central::*;
use accelfed_tests::pki::pki;
use std::time::{Duration, Instant};

/// One record's worth of manual usage.
const USAGE: &str = r#"{"resource": "node-1", "model": "H100", "count": 1, "vo": "atlas", "start": "2026-01-01T00:00:00Z", "end": "2026-01-02T00:00:00Z"}
"#;

fn is_root() -> bool {
    accelfed_accounting::access::effective_uid() == Some(0)
}

/// `accelfed meter` for `site`, as root or (with `as_nobody`) as nobody through setpriv.
fn meter(site: &Site, as_nobody: bool) -> Output {
    accelfed_as(as_nobody)
        .args(["meter", "--since", "2026-01-01", "--config"])
        .arg(&site.config)
        .output()
        .unwrap()
}

/// A site folder every user may enter and read (the temporary folder is root's, 0700).
fn open_site(dir: &Path, name: &str) -> Site {
    std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o755)).unwrap();
    let pki = pki(dir);
    let site = site(
        &dir.join(name),
        "SITE-A",
        "https://127.0.0.1:9",
        TOKEN_A,
        &pki,
        USAGE,
        "",
    );
    std::fs::set_permissions(
        site.config.parent().unwrap(),
        std::fs::Permissions::from_mode(0o755),
    )
    .unwrap();
    site
}

/// A tmpfs mounted on a folder, unmounted when dropped.
struct Tmpfs(PathBuf);

impl Tmpfs {
    fn mount(folder: &Path, options: &str) -> Tmpfs {
        std::fs::create_dir_all(folder).unwrap();
        let status = Command::new("mount")
            .args(["-t", "tmpfs", "-o", options, "tmpfs"])
            .arg(folder)
            .status()
            .unwrap();
        assert!(status.success(), "mount -t tmpfs -o {options} failed");
        Tmpfs(folder.to_owned())
    }

    fn remount(&self, options: &str) {
        let status = Command::new("mount")
            .args(["-o", &format!("remount,{options}")])
            .arg(&self.0)
            .status()
            .unwrap();
        assert!(status.success(), "mount -o remount,{options} failed");
    }
}

impl Drop for Tmpfs {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg(&self.0).status();
    }
}

/// `site`'s spool moved into `folder`.
fn spool_in(site: &Site, folder: &Path) -> PathBuf {
    let spool = folder.join("spool.sqlite");
    let config = std::fs::read_to_string(&site.config).unwrap();
    std::fs::write(
        &site.config,
        config.replace(
            "spool = \"spool.sqlite\"",
            &format!("spool = \"{}\"", spool.display()),
        ),
    )
    .unwrap();
    spool
}

#[test]
#[ignore = "needs root (chown, setpriv, mount); scripts/test runs as root"]
fn root_is_refused_a_spool_of_another_user_and_told_the_runuser_line() {
    assert!(is_root(), "this test needs root");
    let dir = tempfile::tempdir().unwrap();
    let site = open_site(dir.path(), "site");
    let folder = site.config.parent().unwrap();
    std::os::unix::fs::chown(folder, Some(NOBODY), Some(NOBODY)).unwrap();

    let refused = meter(&site, false);
    let log = stderr(&refused);
    assert_ne!(status(&refused), 0, "{log}");
    assert!(log.contains("belongs to nobody (uid 65534)"), "{log}");
    assert!(log.contains("runs as root"), "{log}");
    assert!(log.contains("runuser -u nobody -- "), "{log}");
    assert!(log.contains(" meter --since 2026-01-01 --config "), "{log}");
    assert!(!site.spool.exists(), "root wrote nothing");

    // ship says the same, as a configuration error (exit 2).
    let shipped = site.ship(false);
    assert_eq!(status(&shipped), 2, "{}", stderr(&shipped));
    assert!(stderr(&shipped).contains("runuser -u nobody -- "));

    // As its owner, the same command works.
    let owned = meter(&site, true);
    assert_eq!(status(&owned), 0, "{}", stderr(&owned));
    assert!(site.spool.is_file());
}

#[test]
#[ignore = "needs root (chown, setpriv, mount); scripts/test runs as root"]
fn a_spool_a_root_run_left_behind_names_its_owner_mode_and_the_chown() {
    assert!(is_root(), "this test needs root");
    let dir = tempfile::tempdir().unwrap();
    let site = open_site(dir.path(), "site");
    // Root's run in root's folder: allowed, the spool is root's, 0600.
    assert_eq!(status(&meter(&site, false)), 0);
    // The folder is handed to the service user afterwards, the spool stays root's.
    let folder = site.config.parent().unwrap();
    std::os::unix::fs::chown(folder, Some(NOBODY), Some(NOBODY)).unwrap();

    let refused = meter(&site, true);
    let log = stderr(&refused);
    assert_ne!(status(&refused), 0, "{log}");
    for part in [
        "Permission denied (EACCES)",
        "it belongs to root (uid 0), mode 0600",
        "this command runs as nobody (uid 65534)",
        "chown nobody: ",
    ] {
        assert!(log.contains(part), "{part:?} in {log}");
    }
    assert!(!log.contains("unable to open database file"), "{log}");
}

#[test]
#[ignore = "needs root (chown, setpriv, mount); scripts/test runs as root"]
fn a_read_only_file_system_is_named() {
    assert!(is_root(), "this test needs root");
    let dir = tempfile::tempdir().unwrap();
    let site = open_site(dir.path(), "site");
    let mount = Tmpfs::mount(&dir.path().join("ro"), "size=4m,mode=0755");
    let spool = spool_in(&site, &mount.0);
    assert_eq!(status(&meter(&site, false)), 0);
    assert!(spool.is_file());
    mount.remount("ro");

    let refused = meter(&site, false);
    let log = stderr(&refused);
    assert_ne!(status(&refused), 0, "{log}");
    assert!(log.contains("Read-only file system (EROFS)"), "{log}");
    assert!(log.contains("mounted read-only"), "{log}");
}

#[test]
#[ignore = "needs root (chown, setpriv, mount); scripts/test runs as root"]
fn a_full_file_system_is_named() {
    assert!(is_root(), "this test needs root");
    let dir = tempfile::tempdir().unwrap();
    let site = open_site(dir.path(), "site");
    let mount = Tmpfs::mount(&dir.path().join("full"), "size=1m,mode=0755");
    spool_in(&site, &mount.0);
    // Fill it: a file of zeros until the file system says no more.
    {
        use std::io::Write;
        let mut filler = std::fs::File::create(mount.0.join("filler")).unwrap();
        let chunk = vec![0u8; 16 * 1024];
        while filler.write_all(&chunk).is_ok() {}
    }

    let refused = meter(&site, false);
    let log = stderr(&refused);
    assert_ne!(status(&refused), 0, "{log}");
    assert!(log.contains("No space left on device (ENOSPC)"), "{log}");
    assert!(log.contains("free space on the file system"), "{log}");
}

#[test]
#[ignore = "needs root (chown, setpriv, mount); scripts/test runs as root"]
fn serve_as_root_is_refused_the_repository_of_another_user() {
    assert!(is_root(), "this test needs root");
    let dir = tempfile::tempdir().unwrap();
    let pki = pki(dir.path());
    let folder = dir.path().join("lib");
    std::fs::create_dir(&folder).unwrap();
    std::os::unix::fs::chown(&folder, Some(NOBODY), Some(NOBODY)).unwrap();
    let database = folder.join("accounting.sqlite");
    let config = central_config(
        dir.path(),
        &pki,
        &format!("path = \"{}\"", database.display()),
        "127.0.0.1:0",
    );
    let mut serve = accelfed()
        .arg("serve")
        .arg("--config")
        .arg(&config)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let started = Instant::now();
    while serve.try_wait().unwrap().is_none() {
        if started.elapsed() > Duration::from_secs(30) {
            let _ = serve.kill();
            let _ = serve.wait();
            panic!("serve started on another user's repository");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let output = serve.wait_with_output().unwrap();
    let log = stderr(&output);
    assert_ne!(status(&output), 0, "{log}");
    assert!(log.contains("belongs to nobody (uid 65534)"), "{log}");
    assert!(log.contains("runuser -u nobody -- "), "{log}");
    assert!(!database.exists(), "root created nothing");
}

#[test]
#[ignore = "needs root (chown, setpriv, mount); scripts/test runs as root"]
fn a_read_only_spool_of_its_own_user_is_named_with_the_chmod() {
    assert!(is_root(), "this test needs root");
    let dir = tempfile::tempdir().unwrap();
    let site = open_site(dir.path(), "site");
    let folder = site.config.parent().unwrap();
    std::os::unix::fs::chown(folder, Some(NOBODY), Some(NOBODY)).unwrap();
    assert_eq!(status(&meter(&site, true)), 0, "nobody's own spool");
    // chmod 0400: its owner may read it, not write it (root would write it regardless).
    std::fs::set_permissions(&site.spool, std::fs::Permissions::from_mode(0o400)).unwrap();

    let refused = meter(&site, true);
    let log = stderr(&refused);
    assert_ne!(status(&refused), 0, "{log}");
    for part in [
        "Permission denied (EACCES)",
        "it belongs to nobody (uid 65534), mode 0400",
        "chmod u+w ",
    ] {
        assert!(log.contains(part), "{part:?} in {log}");
    }
}
