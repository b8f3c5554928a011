//! The flow's rules, on a site of static services with a manual-usage file (no network) and a
//! real spool: what it holds back, what it says when it can meter nothing, what a failed backend
//! leaves.

use std::path::Path;

use accelfed_accounting::flow::{ManualRead, MeterReport};
use accelfed_accounting::spool::{Release, Spool};

use super::{at, config, meter};

/// One node with one A100: 720 GPU-hours in April 2026.
const ONE_A100: &str = r#"[site]
name = "SITE-A"

[[static.batch]]
id = "hpc"
manager = "SLURM"

[[static.batch.node_type]]
id = "a100"
count = 1

[[static.batch.node_type.gpu]]
id = "a100"
vendor = "NVIDIA"
model = "NVIDIA A100-SXM4-80GB"
count = 1

[[static.batch.share]]
id = "gpu"
vos = ["atlas"]
node_types = ["a100"]
"#;

const NODE_1: &str = r#"{"resource": "node-1", "model": "NVIDIA A100-SXM4-80GB", "count": 1, "vo": "atlas", "start": "2026-04-01T00:00:00Z", "end": "2026-04-11T00:00:00Z"}"#;
/// The same GPU described again, for the whole of April: 960 GPU-hours on one A100.
const NODE_2: &str = r#"{"resource": "node-2", "model": "NVIDIA A100-SXM4-80GB", "count": 1, "vo": "atlas", "start": "2026-04-01T00:00:00Z", "end": "2026-05-01T00:00:00Z"}"#;

fn manual(dir: &Path, lines: &[&str]) -> std::path::PathBuf {
    let path = dir.join("usage.jsonl");
    std::fs::write(&path, lines.join("\n") + "\n").unwrap();
    path
}

async fn april(dir: &Path, text: &str, lines: &[&str]) -> MeterReport {
    let manual = manual(dir, lines);
    meter(
        dir,
        &config(text),
        Some(manual),
        at("2026-04-01T00:00:00Z"),
        at("2026-05-02T00:00:00Z"),
    )
    .await
}

fn spool(dir: &Path) -> Spool {
    Spool::open(dir.join("spool.sqlite")).unwrap()
}

#[tokio::test]
async fn usage_above_capacity_is_held_back_until_an_operator_releases_it() {
    let dir = tempfile::tempdir().unwrap();
    let report = april(dir.path(), ONE_A100, &[NODE_1, NODE_2]).await;
    assert_eq!(report.overruns.len(), 1, "{:?}", report.overruns);
    assert_eq!(report.held.len(), 2, "both records of the model-month");
    assert!(!report.complete(), "held records need an operator");
    let written = report.written.as_ref().unwrap();
    assert_eq!(written.summary.holds.held, 2);

    let mut spool = spool(dir.path());
    assert_eq!(spool.len().unwrap(), 2, "written to the spool");
    assert_eq!(spool.depth().unwrap(), 0, "but not for shipping");
    assert!(spool.pending(10).unwrap().is_empty());
    assert!(
        spool.changed_after(0, 10).unwrap().is_empty(),
        "nor for the APEL export"
    );
    let held = spool.held().unwrap();
    assert_eq!(held.len(), 2);
    assert!(
        held[0].reason.contains("above installed capacity"),
        "{held:?}"
    );
    // `ship --verify` neither counts them nor re-sends their month.
    assert!(spool.month_counts().unwrap().is_empty());
    spool
        .reopen_month(accelfed_schemas::usage::Month::new(2026, 4).unwrap())
        .unwrap();
    assert_eq!(spool.depth().unwrap(), 0);

    // The operator looked and releases them: shipped (and exported) as metered.
    let released = spool.release(&Release::All).unwrap();
    assert_eq!(released.released, 2);
    assert_eq!(spool.depth().unwrap(), 2);
    assert_eq!(spool.changed_after(0, 10).unwrap().len(), 2);
    assert_eq!(spool.held_count().unwrap(), 0);

    // The next hourly run meters the same values: released stays released.
    let again = april(dir.path(), ONE_A100, &[NODE_1, NODE_2]).await;
    assert_eq!(again.overruns.len(), 1);
    assert_eq!(again.written.as_ref().unwrap().summary.holds.held, 0);
    assert_eq!(spool.held_count().unwrap(), 0);
    assert_eq!(spool.depth().unwrap(), 2);
}

#[tokio::test]
async fn correcting_the_source_releases_what_the_run_no_longer_doubts() {
    let dir = tempfile::tempdir().unwrap();
    april(dir.path(), ONE_A100, &[NODE_1, NODE_2]).await;
    let spool = spool(dir.path());
    assert_eq!(spool.held_count().unwrap(), 2);

    // node-2 was the GPU described twice: the file is corrected and the meter runs again.
    let fixed = april(dir.path(), ONE_A100, &[NODE_1]).await;
    assert!(fixed.overruns.is_empty());
    assert!(fixed.complete(), "{fixed:?}");
    assert_eq!(fixed.written.as_ref().unwrap().summary.holds.released, 1);
    let pending: Vec<String> = spool
        .pending(10)
        .unwrap()
        .iter()
        .map(|p| p.record().unwrap().associated_record.as_str().to_owned())
        .collect();
    assert_eq!(pending, ["node-1"], "node-1 ships");
    let held = spool.held().unwrap();
    assert_eq!(held.len(), 1, "node-2 stays held: nothing stands behind it");
    assert_eq!(held[0].record.associated_record.as_str(), "node-2");

    // An id that is not held is named, and nothing else changes.
    let mut spool = spool;
    let shipping = spool.pending(1).unwrap()[0].id.clone();
    let released = spool.release(&Release::Ids(vec![shipping])).unwrap();
    assert_eq!(released.released, 0);
    assert_eq!(released.not_held.len(), 1);
}

#[tokio::test]
async fn a_site_that_can_meter_nothing_says_so() {
    let dir = tempfile::tempdir().unwrap();
    let report = meter(
        dir.path(),
        &config(ONE_A100),
        None,
        at("2026-04-01T00:00:00Z"),
        at("2026-05-02T00:00:00Z"),
    )
    .await;
    assert_eq!(report.meters, 0);
    assert!(report.manual.is_none());
    assert!(report.nothing_to_meter());
    // With a manual-usage file the same site meters it.
    let report = april(dir.path(), ONE_A100, &[NODE_1]).await;
    assert!(!report.nothing_to_meter());
    assert!(matches!(
        report.manual,
        Some(ManualRead::Read {
            observations: 1,
            ..
        })
    ));
    assert!(report.complete(), "{report:?}");
}

#[tokio::test]
async fn a_failed_backend_is_reported_and_the_rest_is_written() {
    let dir = tempfile::tempdir().unwrap();
    let text = format!(
        "{ONE_A100}\n[[slurm]]\nid = \"hpc-slurm\"\n[slurm.cli]\nbin_dir = \"/nonexistent/slurm/bin\"\n"
    );
    let report = april(dir.path(), &text, &[NODE_1]).await;
    assert_eq!(report.meters, 1);
    assert!(!report.nothing_to_meter());
    assert_eq!(report.failures.len(), 1, "{:?}", report.failures);
    assert_eq!(report.failures[0].provider, "slurm[0]");
    assert!(
        report.failures[0].message.contains("sacct"),
        "{}",
        report.failures[0].message
    );
    assert!(!report.complete());
    let written = report.written.as_ref().unwrap();
    assert_eq!(written.summary.inserted, 1, "the manual usage is written");
}
