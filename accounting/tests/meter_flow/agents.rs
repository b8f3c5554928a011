//! The node agents' folder in the flow: a job an agent knows gets the agent's idle time and
//! energy, a document that is not an agent's is named and left out (the run incomplete), and a
//! folder that cannot be listed meters nothing rather than write records without the agents'
//! figures over those with them.

use std::path::{Path, PathBuf};

use accelfed_accounting::config::AccountingConfig;
use accelfed_accounting::flow::{AgentsRead, MeterPlan, MeterReport, meter_site};
use accelfed_accounting::spool::Spool;
use accelfed_schemas::usage::Month;

use super::{at, config};

const SITE: &str = "[site]\nname = \"SITE-A\"\n";

/// A 2-GPU job for the first ten days of April, and a VM no agent knows.
const USAGE: &str = r#"{"resource": "hpc:77", "model": "NVIDIA H100 80GB HBM3", "count": 2, "vo": "atlas", "record_type": "job", "start": "2026-04-01T00:00:00Z", "end": "2026-04-11T00:00:00Z"}
{"resource": "vm-1", "model": "NVIDIA H100 80GB HBM3", "count": 1, "vo": "cms", "start": "2026-04-01T00:00:00Z", "end": "2026-04-02T00:00:00Z", "utilisation": 0.25}
"#;

/// Job 77 on two GPUs: one idle 4 of its 10 days, the other 2; 36 MJ each (10 kWh).
const DOCUMENT: &str = r#"{"format_version": 1, "holders": [
 {"kind": "slurm_job", "id": "77", "place": "GPU-a", "months": {"2026-04": {"held_seconds": 864000, "idle_seconds": 345600, "energy_joules": 36000000}}},
 {"kind": "slurm_job", "id": "77", "place": "GPU-b", "months": {"2026-04": {"held_seconds": 864000, "idle_seconds": 172800, "energy_joules": 36000000}}}
]}"#;

async fn run(dir: &Path, agents: PathBuf) -> MeterReport {
    let manual = dir.join("usage.jsonl");
    std::fs::write(&manual, USAGE).unwrap();
    let accounting: AccountingConfig =
        toml::from_str(&format!("spool = {:?}", dir.join("spool.sqlite"))).unwrap();
    let config = config(SITE);
    let plan = MeterPlan {
        config: &config,
        accounting: &accounting,
        manual: Some(manual),
        agents: Some(agents),
        spool: dir.join("spool.sqlite"),
        since: at("2026-04-01T00:00:00Z"),
        now: at("2026-05-02T00:00:00Z"),
    };
    meter_site(&plan).await
}

#[tokio::test]
async fn a_job_an_agent_knows_gets_its_idle_time_and_energy() {
    let dir = tempfile::tempdir().unwrap();
    let agents = dir.path().join("agents");
    std::fs::create_dir(&agents).unwrap();
    std::fs::write(agents.join("node-1.json"), DOCUMENT).unwrap();
    std::fs::write(agents.join("node-2.json"), "{\"not\": \"an agent\"}").unwrap();
    let report = run(dir.path(), agents).await;
    let Some(AgentsRead::Read {
        documents,
        matched,
        refused,
        ..
    }) = &report.agents
    else {
        panic!("{:?}", report.agents);
    };
    assert_eq!((*documents, *matched), (1, 1));
    assert_eq!(refused.len(), 1);
    assert!(refused[0].contains("node-2.json"), "{refused:?}");
    assert!(!report.complete(), "a refused document needs an operator");
    let records = Spool::open(dir.path().join("spool.sqlite"))
        .unwrap()
        .records_since(Month::new(2026, 4).unwrap())
        .unwrap();
    let mut figures: Vec<_> = records
        .iter()
        .map(|r| {
            (
                r.associated_record.as_str().to_owned(),
                r.active_duration,
                r.energy_wh,
            )
        })
        .collect();
    figures.sort_by(|a, b| a.0.cmp(&b.0));
    // Job 77: 10 days less a mean of 3 idle days per GPU; 20 kWh. vm-1 as its backend said.
    assert_eq!(
        figures,
        [
            ("hpc:77".to_owned(), Some(7 * 86_400), Some(20_000.0)),
            ("vm-1".to_owned(), Some(21_600), None),
        ]
    );
}

#[tokio::test]
async fn a_folder_that_cannot_be_listed_meters_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let report = run(dir.path(), dir.path().join("missing")).await;
    let Some(AgentsRead::Unread(problem)) = &report.agents else {
        panic!("{:?}", report.agents);
    };
    assert!(problem.contains("missing"), "{problem}");
    assert!(!report.complete());
    let written = report.written.as_ref().unwrap();
    assert_eq!(written.summary.inserted, 0, "nothing written");
}

/// Node 2 (GPU-b) is down when the meter runs again: job 77 keeps what node 2's agent measured,
/// so its records do not change.
#[tokio::test]
async fn a_node_whose_document_is_missing_keeps_its_last_figures() {
    let dir = tempfile::tempdir().unwrap();
    let agents = dir.path().join("agents");
    std::fs::create_dir(&agents).unwrap();
    let document: serde_json::Value = serde_json::from_str(DOCUMENT).unwrap();
    for (node, holder) in ["node-1.json", "node-2.json"]
        .iter()
        .zip(document["holders"].as_array().unwrap())
    {
        let one = serde_json::json!({"format_version": 1, "holders": [holder]});
        std::fs::write(agents.join(node), one.to_string()).unwrap();
    }
    let first = run(dir.path(), agents.clone()).await;
    assert!(first.written.is_ok(), "{first:?}");
    std::fs::remove_file(agents.join("node-2.json")).unwrap();
    let second = run(dir.path(), agents).await;
    let Some(AgentsRead::Read {
        documents, kept, ..
    }) = &second.agents
    else {
        panic!("{:?}", second.agents);
    };
    assert_eq!((*documents, *kept), (1, 1), "GPU-b from the spool");
    let summary = second.written.as_ref().unwrap().summary;
    assert_eq!(
        (summary.inserted, summary.updated, summary.reopened),
        (0, 0, 0)
    );
    let records = Spool::open(dir.path().join("spool.sqlite"))
        .unwrap()
        .records_since(Month::new(2026, 4).unwrap())
        .unwrap();
    let job = records
        .iter()
        .find(|r| r.associated_record.as_str() == "hpc:77")
        .unwrap();
    assert_eq!(
        (job.active_duration, job.energy_wh),
        (Some(7 * 86_400), Some(20_000.0))
    );
}
