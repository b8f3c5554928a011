//! `observe` (the Slurm meter's reading of sacct) against real processes standing in for the
//! commands: allocations metered, unreadable jobs skipped and named, the window kept, and a failing,
//! missing, hanging or unknown-format sacct failing the run instead of metering nothing.

use std::path::Path;
use std::time::{Duration, Instant};

use accelfed_provider::slurm::{SlurmError, observe};

use super::{bin_dir, block_on, fixtures, slurm_config};

fn meter_window() -> (chrono::DateTime<chrono::Utc>, chrono::DateTime<chrono::Utc>) {
    use chrono::TimeZone;
    (
        chrono::Utc.with_ymd_and_hms(2023, 11, 1, 0, 0, 0).unwrap(),
        chrono::Utc.with_ymd_and_hms(2023, 12, 1, 0, 0, 0).unwrap(),
    )
}

fn site() -> accelfed_schemas::names::SiteName {
    accelfed_schemas::names::SiteName::new("T").unwrap()
}

#[test]
fn observe_meters_allocations_and_skips_unreadable_jobs_instead_of_counting_zero() {
    let sacct = fixtures().join("v0.0.40/sacct.json");
    let bin = bin_dir(
        "observe-ok",
        &[("sacct", &format!("cat {}", sacct.display()))],
    );
    let config = slurm_config(&bin, 5);
    let (since, now) = meter_window();
    let observations = block_on(observe(&config, &site(), since, now)).unwrap();
    let names: Vec<&str> = observations.iter().map(|o| o.resource.as_str()).collect();
    // 105+1 holds no GPU, 107 never started, 108 and 106 are CPU jobs, 109's TRES is unreadable:
    // skipped (a warning), not metered as a job with 0 GPUs.
    assert_eq!(
        names,
        vec![
            "gpucluster:101",
            "gpucluster:102",
            "gpucluster:103",
            "gpucluster:100_3",
            "gpucluster:105+0"
        ]
    );
    let gpus: Vec<f64> = observations.iter().map(|o| o.count.get()).collect();
    assert_eq!(gpus, vec![2.0, 1.0, 4.0, 1.0, 2.0]);
    assert!(observations[2].end.is_none(), "103 runs: metered to now");
}

#[test]
fn observe_keeps_only_jobs_that_ran_in_the_window() {
    use chrono::TimeZone;
    let sacct = fixtures().join("v0.0.40/sacct.json");
    let bin = bin_dir(
        "observe-window",
        &[("sacct", &format!("cat {}", sacct.display()))],
    );
    let config = slurm_config(&bin, 5);
    // 2023-11-14T22:40:00Z = 1700001600: 101 (to 1700003600) and 102 (to 1700001800) and the
    // running 103 ran after it; 100_3 (to 1700001100) and 105+0 (to 1700000900) did not.
    let since = chrono::Utc.timestamp_opt(1_700_001_600, 0).unwrap();
    let now = chrono::Utc.with_ymd_and_hms(2023, 12, 1, 0, 0, 0).unwrap();
    let observations = block_on(observe(&config, &site(), since, now)).unwrap();
    let names: Vec<&str> = observations.iter().map(|o| o.resource.as_str()).collect();
    assert_eq!(
        names,
        vec!["gpucluster:101", "gpucluster:102", "gpucluster:103"]
    );
}

#[test]
fn observe_returns_nothing_when_sacct_fails_after_printing_jobs() {
    let sacct = fixtures().join("v0.0.40/sacct.json");
    let bin = bin_dir(
        "observe-failing",
        &[(
            "sacct",
            &format!(
                "cat {}\necho 'sacct: error: Problem talking to the database: Connection refused' >&2\nexit 1",
                sacct.display()
            ),
        )],
    );
    let config = slurm_config(&bin, 5);
    let (since, now) = meter_window();
    let err = block_on(observe(&config, &site(), since, now)).unwrap_err();
    let message = err.to_string();
    assert!(matches!(err, SlurmError::Failed { .. }), "{err:?}");
    assert!(
        message.starts_with(&format!("`{}/sacct --json --allusers", bin.display())),
        "{message}"
    );
    assert!(message.contains("exit status: 1"), "{message}");
    assert!(
        message.contains("Problem talking to the database: Connection refused"),
        "{message}"
    );
    assert!(err.retryable());
}

#[test]
fn observe_fails_naming_a_missing_or_hanging_sacct() {
    let (since, now) = meter_window();
    let config = slurm_config(Path::new("/nonexistent/slurm/bin"), 5);
    let err = block_on(observe(&config, &site(), since, now)).unwrap_err();
    assert!(
        err.to_string()
            .starts_with("`/nonexistent/slurm/bin/sacct --json --allusers --starttime 2023-11-01T00:00:00 --endtime 2023-12-01T00:00:00` could not be started"),
        "{err}"
    );

    let bin = bin_dir(
        "observe-hanging",
        &[(
            "sacct",
            "echo '{\"meta\": {\"plugin\": {\"type\": \"openapi/dbv0.0.38\"}}, \"jobs\": [' ; echo 'sacct: still waiting' >&2; sleep 30",
        )],
    );
    let config = slurm_config(&bin, 1);
    let started = Instant::now();
    let err = block_on(observe(&config, &site(), since, now)).unwrap_err();
    assert!(started.elapsed() < Duration::from_secs(10));
    assert!(matches!(err, SlurmError::Timeout { .. }), "{err:?}");
    assert!(
        err.to_string().contains("did not finish within 1 s"),
        "{err}"
    );
    assert!(err.to_string().contains("sacct: still waiting"), "{err}");
}

#[test]
fn observe_refuses_a_document_of_an_unknown_data_format() {
    let bin = bin_dir(
        "observe-version",
        &[(
            "sacct",
            r#"echo '{"meta": {"plugin": {"data_parser": "data_parser/v0.0.99"}}, "jobs": [{"job_id": 1}]}'"#,
        )],
    );
    let config = slurm_config(&bin, 5);
    let (since, now) = meter_window();
    let err = block_on(observe(&config, &site(), since, now)).unwrap_err();
    let message = err.to_string();
    assert!(message.contains("sacct --json"), "{message}");
    assert!(message.contains("v0.0.99"), "{message}");
}

#[test]
fn a_sacct_whose_document_is_refused_is_not_waited_for() {
    // The document is refused at its meta block while sacct still runs: the run fails at once
    // with the format error, and the command is stopped rather than waited for.
    let bin = bin_dir(
        "observe-abandoned",
        &[(
            "sacct",
            r#"echo '{"meta": {"plugin": {"data_parser": "data_parser/v0.0.99"}}, "jobs": ['; sleep 30"#,
        )],
    );
    let config = slurm_config(&bin, 25);
    let (since, now) = meter_window();
    let started = Instant::now();
    let err = block_on(observe(&config, &site(), since, now)).unwrap_err();
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "waited {:?} for an abandoned sacct",
        started.elapsed()
    );
    assert!(matches!(err, SlurmError::Jobs { .. }), "{err:?}");
    assert!(err.to_string().contains("v0.0.99"), "{err}");
}
