//! The Slurm client against real processes standing in for the commands: missing, failing, hanging,
//! and printing good output. Each error names the command, its exit status and its stderr.

#![allow(clippy::unwrap_used)]

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use accelfed_provider::config::Config;
use accelfed_provider::gather;
use accelfed_provider::slurm::{SlurmClient, SlurmConfig, SlurmError};

mod observe;

fn block_on<F: std::future::Future>(future: F) -> F::Output {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
        .block_on(future)
}

/// A fresh folder of fake commands, removed when the guard drops.
struct Bin(PathBuf);

impl Drop for Bin {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

impl std::ops::Deref for Bin {
    type Target = Path;
    fn deref(&self) -> &Path {
        &self.0
    }
}

fn bin_dir(test: &str, scripts: &[(&str, &str)]) -> Bin {
    let dir = std::env::temp_dir().join(format!("accelfed-slurm-{test}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    for (name, body) in scripts {
        let path = dir.join(name);
        std::fs::write(&path, format!("#!/bin/sh\n{body}\n")).unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    Bin(dir)
}

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/slurm")
}

fn config_text(bin: &Path, timeout_s: u64) -> String {
    format!(
        "[site]\nname = \"T\"\n[static]\n[[static.batch]]\nid = \"other\"\nmanager = \"PBS\"\n\
         [[static.batch.node_type]]\nid = \"n\"\ncount = 1\n\
         [[slurm]]\nid = \"hpc\"\n[slurm.cli]\nbin_dir = {bin:?}\ntimeout_s = {timeout_s}\n"
    )
}

fn slurm_config(bin: &Path, timeout_s: u64) -> SlurmConfig {
    Config::parse(Path::new("t.toml"), &config_text(bin, timeout_s))
        .unwrap()
        .slurm
        .remove(0)
}

#[test]
fn a_missing_command_is_named() {
    let config = slurm_config(Path::new("/nonexistent/slurm/bin"), 5);
    let err = block_on(SlurmClient::new(&config).inventory()).unwrap_err();
    assert!(matches!(err, SlurmError::Spawn { .. }), "{err:?}");
    assert!(
        err.to_string()
            .starts_with("`/nonexistent/slurm/bin/sinfo --json` could not be started"),
        "{err}"
    );
    assert!(!err.retryable());
}

#[test]
fn a_failing_command_gives_its_status_and_stderr_and_the_other_providers_still_publish() {
    let bin = bin_dir(
        "failing",
        &[(
            "sinfo",
            "echo 'sinfo: error: slurm_load_node: Unable to contact slurm controller (connect failure)' >&2\nexit 1",
        )],
    );
    let config = Config::parse(Path::new("t.toml"), &config_text(&bin, 5)).unwrap();
    let now = chrono::Utc::now();
    let gathered = block_on(gather(&config, now)).unwrap();
    assert_eq!(
        gathered.snapshot.services.len(),
        1,
        "the static service is still published"
    );
    assert_eq!(gathered.failures.len(), 1);
    let failure = &gathered.failures[0];
    assert_eq!(failure.provider, "slurm[0]");
    assert!(
        failure
            .message
            .contains("sinfo --json` failed with exit status: 1"),
        "{}",
        failure.message
    );
    assert!(
        failure
            .message
            .contains("Unable to contact slurm controller"),
        "{}",
        failure.message
    );
    // Typed, not read out of the message: a controller out of reach may answer the next run.
    assert_eq!(failure.retry, accelfed_provider::Retry::MayHelp);
}

#[test]
fn a_command_that_fails_for_good_is_typed_so() {
    // The site's sinfo refuses the JSON flag (a Slurm without the data parser plugin): nothing
    // changes until the site does, and the failure says so in its type.
    let bin = bin_dir(
        "refusing",
        &[(
            "sinfo",
            "echo 'sinfo: unrecognized option --json' >&2\nexit 1",
        )],
    );
    let config = Config::parse(Path::new("t.toml"), &config_text(&bin, 5)).unwrap();
    let gathered = block_on(gather(&config, chrono::Utc::now())).unwrap();
    assert_eq!(gathered.failures.len(), 1);
    let failure = &gathered.failures[0];
    assert_eq!(
        failure.retry,
        accelfed_provider::Retry::WillNotHelp,
        "{}",
        failure.message
    );
}

#[test]
fn a_hanging_command_is_killed_at_its_timeout() {
    let bin = bin_dir(
        "hanging",
        &[
            (
                "sinfo",
                "echo 'sinfo: waiting for slurmctld to answer' >&2\nsleep 30",
            ),
            ("sacct", "echo '{\"jobs\": [' ; sleep 30"),
        ],
    );
    let config = slurm_config(&bin, 1);
    let started = Instant::now();
    let err = block_on(SlurmClient::new(&config).inventory()).unwrap_err();
    assert!(started.elapsed() < Duration::from_secs(10));
    assert!(
        err.to_string().starts_with(&format!(
            "`{}/sinfo --json` did not finish within 1 s",
            bin.display()
        )),
        "{err}"
    );
    // What it wrote before it was killed says why it hung.
    assert!(
        err.to_string()
            .ends_with("stderr: sinfo: waiting for slurmctld to answer"),
        "{err}"
    );
    assert!(err.retryable());
    let started = Instant::now();
    let mut jobs = 0;
    let err = SlurmClient::new(&config)
        .jobs_blocking(chrono::Utc::now(), chrono::Utc::now(), &mut |_| jobs += 1)
        .unwrap_err();
    assert!(started.elapsed() < Duration::from_secs(10));
    assert!(matches!(err, SlurmError::Timeout { .. }), "{err:?}");
    assert!(
        err.to_string()
            .starts_with(&format!("`{}/sacct --json --allusers", bin.display())),
        "{err}"
    );
    assert_eq!(jobs, 0);
}

#[test]
fn sacct_failing_after_printing_jobs_fails_the_run() {
    let sacct = fixtures().join("v0.0.38/sacct.json");
    let bin = bin_dir(
        "sacct-failing",
        &[(
            "sacct",
            &format!(
                "cat {}\necho 'sacct: error: slurmdbd: Connection refused' >&2\nexit 2",
                sacct.display()
            ),
        )],
    );
    let config = slurm_config(&bin, 5);
    let err = SlurmClient::new(&config)
        .jobs_blocking(chrono::Utc::now(), chrono::Utc::now(), &mut |_| {})
        .unwrap_err();
    assert!(
        err.to_string()
            .contains("failed with exit status: 2: sacct: error: slurmdbd: Connection refused"),
        "{err}"
    );
    assert!(err.retryable());
}

#[test]
fn recorded_22_05_output_through_the_commands() {
    let dir = fixtures().join("v0.0.38");
    let bin = bin_dir(
        "recorded",
        &[
            (
                "sinfo",
                &format!("cat {}", dir.join("sinfo-running.json").display()),
            ),
            (
                "scontrol",
                &format!("cat {}", dir.join("scontrol-partitions.txt").display()),
            ),
            (
                "sacct",
                &format!("cat {}", dir.join("sacct.json").display()),
            ),
        ],
    );
    let config = slurm_config(&bin, 5);
    let inventory = block_on(SlurmClient::new(&config).inventory()).unwrap();
    assert_eq!(inventory.nodes[0].gpus[0].used, 3);
    assert_eq!(inventory.partitions.len(), 2);
    let mut ids = Vec::new();
    let summary = SlurmClient::new(&config)
        .jobs_blocking(chrono::Utc::now(), chrono::Utc::now(), &mut |job| {
            ids.push(job.unwrap().job_id)
        })
        .unwrap();
    assert_eq!(summary.jobs, 4);
    assert_eq!(ids, vec!["1", "2", "3_1", "3_0"]);
}
