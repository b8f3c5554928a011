//! A spool whose quota is spent is refused naming EDQUOT and the fix, not SQLite's "database or
//! disk is full". The quota is real: a btrfs file system on a loop device, the spool's folder a
//! subvolume with a qgroup limit of 1 MiB, filled until the kernel answers EDQUOT. Btrfs because
//! the test machine's kernel has neither tmpfs user quotas (CONFIG_TMPFS_QUOTA) nor the quota
//! formats ext4 and the `setquota` tools need (CONFIG_QFMT_V2); a qgroup limit needs neither and
//! holds for root too. Needs root (mount, losetup) and btrfs-progs, which scripts/test installs.

#![allow(clippy::unwrap_used)]

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;

use accelfed_tests::central::*;
use accelfed_tests::pki::pki;

const USAGE: &str = r#"{"resource": "node-1", "model": "H100", "count": 1, "vo": "atlas", "start": "2026-01-01T00:00:00Z", "end": "2026-01-02T00:00:00Z"}
"#;

/// Runs `program args`, panicking with its output when it fails.
fn must(program: &str, args: &[&str]) {
    let output = Command::new(program).args(args).output().unwrap();
    assert!(
        output.status.success(),
        "{program} {args:?}: {}",
        String::from_utf8_lossy(&output.stderr)
    );
}

/// A btrfs image mounted through a loop device; unmounted (and the loop device released, as
/// `mount -o loop` sets it to clear itself) when dropped.
struct Btrfs(PathBuf);

impl Btrfs {
    fn mount(image: &Path, folder: &Path) -> Btrfs {
        // 128 MiB: about the least mkfs.btrfs accepts with its default profiles.
        std::fs::File::create(image)
            .unwrap()
            .set_len(128 << 20)
            .unwrap();
        must("mkfs.btrfs", &["-q", &image.display().to_string()]);
        std::fs::create_dir_all(folder).unwrap();
        let folder_text = folder.display().to_string();
        must(
            "mount",
            &["-o", "loop", &image.display().to_string(), &folder_text],
        );
        Btrfs(folder.to_owned())
    }
}

impl Drop for Btrfs {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg(&self.0).status();
    }
}

#[test]
#[ignore = "needs root and a quota-capable filesystem (btrfs-progs, a loop device); scripts/test runs as root"]
fn a_spent_quota_is_named() {
    assert_eq!(
        accelfed_accounting::access::effective_uid(),
        Some(0),
        "this test needs root"
    );
    let dir = tempfile::tempdir().unwrap();
    let mount = Btrfs::mount(&dir.path().join("btrfs.img"), &dir.path().join("fs"));
    let quota = mount.0.join("spool");
    let quota_text = quota.display().to_string();
    must(
        "btrfs",
        &["quota", "enable", &mount.0.display().to_string()],
    );
    must("btrfs", &["subvolume", "create", &quota_text]);
    must("btrfs", &["qgroup", "limit", "1M", &quota_text]);
    // Spend it: zeros until the kernel says the quota is exceeded.
    let spent = {
        let mut filler = std::fs::File::create(quota.join("filler")).unwrap();
        let chunk = vec![0u8; 16 * 1024];
        loop {
            if let Err(error) = filler.write_all(&chunk).and_then(|()| filler.sync_data()) {
                break error;
            }
        }
    };
    assert_eq!(spent.raw_os_error(), Some(122), "EDQUOT, not {spent}");

    let pki = pki(dir.path());
    let site = site(
        &dir.path().join("site"),
        "SITE-A",
        "https://127.0.0.1:9",
        TOKEN_A,
        &pki,
        USAGE,
        "",
    );
    let config = std::fs::read_to_string(&site.config).unwrap();
    std::fs::write(
        &site.config,
        config.replace(
            "spool = \"spool.sqlite\"",
            &format!("spool = \"{}\"", quota.join("spool.sqlite").display()),
        ),
    )
    .unwrap();
    let refused = accelfed()
        .args(["meter", "--since", "2026-01-01", "--config"])
        .arg(&site.config)
        .output()
        .unwrap();
    let log = stderr(&refused);
    assert_ne!(status(&refused), 0, "{log}");
    assert!(log.contains("Disk quota exceeded (EDQUOT)"), "{log}");
    assert!(log.contains("raise the quota of root"), "{log}");
    assert!(!log.contains("database or disk is full"), "{log}");
}
