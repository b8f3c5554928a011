//! A site's folder for the accounting tests (site.toml, token file, manual usage as the test
//! meter) that meters and ships with the `accelfed` binary, and the per-VO report of a database.

use std::path::{Path, PathBuf};
use std::process::Output;

use crate::pki::PkiFiles;

use super::{accelfed, run, status, stderr};

/// One site's folder: site.toml, token file and manual usage.
#[derive(Debug, Clone)]
pub struct Site {
    pub config: PathBuf,
    pub spool: PathBuf,
}

/// Writes a site folder for `name` shipping to `endpoint` with `token`; `extra_ship` is appended
/// to site.toml after `[accounting.ship]`.
pub fn site(
    dir: &Path,
    name: &str,
    endpoint: &str,
    token: &str,
    pki: &PkiFiles,
    usage: &str,
    extra_ship: &str,
) -> Site {
    std::fs::create_dir_all(dir).expect("the site's folder");
    std::fs::write(dir.join("token"), format!("{token}\n")).expect("write the token");
    std::fs::write(dir.join("usage.jsonl"), usage).expect("write the usage");
    let config = dir.join("site.toml");
    std::fs::write(
        &config,
        format!(
            "[site]\nname = \"{name}\"\n\n[accounting]\nspool = \"spool.sqlite\"\n\
             observations = \"usage.jsonl\"\n\n[accounting.ship]\nendpoint = \"{endpoint}\"\n\
             token_file = \"token\"\nca = \"{}\"\nbatch_size = 3\nattempts = 2\n\
             backoff_initial_ms = 50\nbackoff_max_ms = 200\ntimeout_s = 10\n{extra_ship}",
            pki.ca.display()
        ),
    )
    .expect("write site.toml");
    Site {
        spool: dir.join("spool.sqlite"),
        config,
    }
}

/// SITE-A's folder `folder` under `parent` with the harness's ship settings, shipping to
/// `endpoint` with `token`, `usage` its manual usage: the accounting tests' sites, which differ
/// only in those (another site's token, an unknown one, the owner's).
pub fn site_a(
    parent: &Path,
    folder: &str,
    endpoint: &str,
    token: &str,
    pki: &PkiFiles,
    usage: &str,
) -> Site {
    site(
        &parent.join(folder),
        "SITE-A",
        endpoint,
        token,
        pki,
        usage,
        "",
    )
}

/// `ship` with a token the repository does not know: the call refused (exit 1) with the fix, and
/// the token never echoed in the log.
pub fn assert_unknown_token_refused(shipped: &Output, token: &str) {
    let log = stderr(shipped);
    assert_eq!(status(shipped), 1, "{log}");
    assert!(log.contains("refused the site"), "{log}");
    assert!(log.contains("check the token"), "{log}");
    assert!(!log.contains(token), "the token is never echoed: {log}");
}

impl Site {
    /// `accelfed meter --since 2025-12-01`.
    pub fn meter(&self) -> Output {
        accelfed()
            .args(["meter", "--since", "2025-12-01", "--config"])
            .arg(&self.config)
            .output()
            .expect("accelfed meter runs")
    }

    /// `accelfed ship`, with `--verify` when asked.
    pub fn ship(&self, verify: bool) -> Output {
        let mut command = accelfed();
        command.arg("ship").arg("--config").arg(&self.config);
        if verify {
            command.arg("--verify");
        }
        command.output().expect("accelfed ship runs")
    }

    /// Records waiting in the spool.
    pub fn spool_depth(&self) -> u64 {
        accelfed_accounting::spool::Spool::open(&self.spool)
            .expect("the spool opens")
            .depth()
            .expect("the spool's depth")
    }
}

/// The GPU-hours per VO that `accelfed report --by vo --format json` prints for `database`:
/// (VO, GPU-hours, records) per row, and the total GPU-hours.
pub fn report_by_vo(database: &str) -> (Vec<(String, f64, u64)>, f64) {
    let output = run(&[
        "report",
        "--by",
        "vo",
        "--format",
        "json",
        "--database",
        database,
    ]);
    assert_eq!(status(&output), 0, "{}", stderr(&output));
    let value: serde_json::Value =
        serde_json::from_slice(&output.stdout).expect("the report is JSON");
    let number = |value: &serde_json::Value| value.as_f64().expect("a number");
    let rows = value["rows"]
        .as_array()
        .expect("rows")
        .iter()
        .map(|row| {
            (
                row["vo"].as_str().unwrap_or("").to_owned(),
                number(&row["gpu_hours"]),
                row["records"].as_u64().expect("a record count"),
            )
        })
        .collect();
    (rows, number(&value["total"]["gpu_hours"]))
}
