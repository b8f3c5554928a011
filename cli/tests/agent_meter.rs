//! The node agent feeds the meter, end to end on this machine: `accelfed agent` on the stub NVML
//! library (an idle-but-allocated Slurm job alone on one H200; on the other an idle job and a busy
//! one) publishes its state document into the site's `[accounting.agents]` folder; `accelfed
//! meter` (the jobs as manual usage, the test's Slurm) fills ActiveDuration and energy from it;
//! `accelfed ship` sends the records over TLS to the central service; the repository and
//! `accelfed report` show exactly the idle GPU-time and watt-hours computed by hand from the
//! agent's counters. A manual line with its own `energy_wh` across a month boundary shows energy
//! shared out by seconds.

#![allow(clippy::unwrap_used)]

use std::process::{Command, Stdio};
use std::time::Duration;

use accelfed_accounting::repository::{Dimension, Repository, SummaryFilter, SummaryQuery};
use accelfed_testkit::nvml_stub::{self, BUSY_H200, BUSY_PID, IDLE_ALLOCATED_H200};
use accelfed_testkit::nvml_stub::{IDLE_HOLDER_PID, SHARED_IDLE_PID};
use accelfed_testkit::owned::OwnedProcess;
use accelfed_tests::central::*;
use accelfed_tests::pki::pki;
use chrono::{DateTime, Utc};
use serde_json::Value;

/// The stub's processes as three Slurm jobs: 4242 idle alone on GPU 0, 4243 idle and 4244 busy on
/// GPU 1.
const CGROUPS: [(u32, &str); 3] = [
    (
        IDLE_HOLDER_PID,
        "0::/system.slice/slurmstepd.scope/job_4242/step_0/user/task_0\n",
    ),
    (
        SHARED_IDLE_PID,
        "12:devices:/slurm/uid_1000/job_4243/step_batch\n",
    ),
    (
        BUSY_PID,
        "0::/system.slice/slurmstepd.scope/job_4244/step_0/user/task_0\n",
    ),
];

/// Runs the agent for a few seconds, publishing into `agents`; returns its last document.
fn run_agent(node: &std::path::Path, agents: &std::path::Path) -> Value {
    std::fs::create_dir_all(node).unwrap();
    nvml_stub::build(node).unwrap();
    nvml_stub::write_cgroups(&node.join("proc"), &CGROUPS).unwrap();
    let published = agents.join("node-1.json");
    let mut command = Command::new(env!("CARGO_BIN_EXE_accelfed"));
    command
        .arg("agent")
        .arg("--nvml-library")
        .arg(node.join("libnvidia-ml.so.1"))
        .arg("--state")
        .arg(node.join("state.json"))
        .arg("--proc-root")
        .arg(node.join("proc"))
        .arg("--publish")
        .arg(&published)
        .args(["--period", "0.25", "--listen", "127.0.0.1:0"])
        .env("NVML_STUB_GPUS", "2")
        .stdout(Stdio::null())
        .stderr(Stdio::inherit());
    let mut agent = OwnedProcess::spawn("accelfed agent", &mut command).unwrap();
    std::thread::sleep(Duration::from_millis(3500));
    agent.kill();
    serde_json::from_slice(&std::fs::read(&published).unwrap()).unwrap()
}

/// A holder's object in the agent's document.
fn holder<'a>(document: &'a Value, id: &str, gpu: &str) -> &'a Value {
    document["holders"]
        .as_array()
        .unwrap()
        .iter()
        .find(|h| h["kind"] == "slurm_job" && h["id"] == id && h["gpu_uuid"] == gpu)
        .unwrap_or_else(|| panic!("no job {id} on {gpu} in {document}"))
}

fn number(value: &Value) -> f64 {
    value.as_f64().unwrap()
}

/// The manual line of one job as the agent saw it: from its first reading, for its held seconds
/// rounded to whole seconds (the record's unit).
fn job_line(job: &Value) -> (String, u64) {
    let first = job["first_seen_unix_ms"].as_i64().unwrap() / 1000;
    let seconds = number(&job["held_seconds"]).round() as u64;
    let start = DateTime::<Utc>::from_timestamp(first, 0).unwrap();
    let end = start + chrono::Duration::seconds(seconds as i64);
    let line = format!(
        r#"{{"resource": "cluster:{}", "model": "H200", "count": 1, "vo": "atlas", "record_type": "job", "start": "{}", "end": "{}"}}"#,
        job["id"].as_str().unwrap(),
        start.to_rfc3339(),
        end.to_rfc3339()
    );
    (line, seconds)
}

#[test]
fn idle_time_and_energy_from_the_agent_reach_the_report_exactly() {
    let dir = tempfile::tempdir().unwrap();
    let site_dir = dir.path().join("site-a");
    let agents = site_dir.join("agents");
    std::fs::create_dir_all(&agents).unwrap();
    let document = run_agent(&dir.path().join("node"), &agents);
    let idle_alone = holder(&document, "4242", IDLE_ALLOCATED_H200);
    let idle_shared = holder(&document, "4243", BUSY_H200);
    let busy = holder(&document, "4244", BUSY_H200);
    for job in [idle_alone, idle_shared] {
        assert_eq!(job["idle_seconds"], job["held_seconds"], "idle: {job}");
    }
    assert_eq!(busy["active_seconds"], busy["held_seconds"], "busy: {busy}");
    assert!(number(&busy["held_seconds"]) > 2.0, "{busy}");

    let (lines, seconds): (Vec<String>, Vec<u64>) = [idle_alone, idle_shared, busy]
        .into_iter()
        .map(job_line)
        .unzip();
    let manual = format!(
        "{}\n{}\n",
        lines.join("\n"),
        r#"{"resource": "node-9", "model": "H100", "count": 2, "vo": "cms", "start": "2026-01-31T12:00:00Z", "end": "2026-02-01T12:00:00Z", "energy_wh": 1000.5}"#
    );
    let pki = pki(dir.path());
    let (server, database) = Server::start_sqlite(dir.path(), &pki);
    let site = site(
        &site_dir,
        "SITE-A",
        &server.endpoint(),
        TOKEN_A,
        &pki,
        &manual,
        "\n[accounting.agents]\ndocuments = \"agents\"\n",
    );
    let metered = site.meter();
    assert_eq!(status(&metered), 0, "{}", stderr(&metered));
    assert!(
        stderr(&metered).contains("read the node agents' documents"),
        "{}",
        stderr(&metered)
    );
    let shipped = site.ship(false);
    assert_eq!(status(&shipped), 0, "{}", stderr(&shipped));

    // By hand: the idle jobs' whole held time is idle GPU-time (one GPU each), the busy job's is
    // active; energy is each job's joules over 3600, per record to the milliwatt-hour.
    let idle_milli_gpu_seconds = 1000 * (seconds[0] + seconds[1]) as i64;
    let available_milli_gpu_seconds = 1000 * seconds.iter().sum::<u64>() as i64;
    let milli_wh = |job: &Value| (number(&job["energy_joules"]) / 3.6).round() as i64;
    let agent_milli_wh = milli_wh(idle_alone) + milli_wh(idle_shared) + milli_wh(busy);
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let rows = runtime.block_on(async {
        let repo = Repository::open(&database).await.unwrap();
        repo.summaries(SummaryQuery {
            group_by: vec![Dimension::Vo, Dimension::Month],
            filter: SummaryFilter::default(),
        })
        .await
        .unwrap()
    });
    let atlas = rows
        .iter()
        .find(|r| r.key.vo.as_deref() == Some("atlas"))
        .unwrap()
        .totals;
    assert_eq!(atlas.records, 3);
    assert_eq!(atlas.gpu_milli_seconds, available_milli_gpu_seconds);
    assert_eq!(
        atlas.active_available_gpu_milli_seconds - atlas.active_gpu_milli_seconds,
        idle_milli_gpu_seconds,
        "idle GPU-time"
    );
    assert_eq!(
        (atlas.energy_records, atlas.energy_milli_wh),
        (3, agent_milli_wh)
    );
    // The GPU's counter at the captured powers: 122.09 W alone; 691.87 W shared by two.
    let expected_joules =
        122.09 * number(&idle_alone["held_seconds"]) + 691.87 * number(&busy["held_seconds"]);
    assert!(
        (agent_milli_wh as f64 / 1000.0 - expected_joules / 3600.0).abs() < 0.01,
        "{agent_milli_wh} mWh"
    );
    let cms: Vec<_> = rows
        .iter()
        .filter(|r| r.key.vo.as_deref() == Some("cms"))
        .map(|r| (r.key.month.unwrap().to_string(), r.totals.energy_wh()))
        .collect();
    assert_eq!(
        cms,
        [
            ("2026-01".to_owned(), Some(500.25)),
            ("2026-02".to_owned(), Some(500.25))
        ]
    );

    let report = run(&[
        "report",
        "--by",
        "vo",
        "--format",
        "json",
        "--database",
        &database,
    ]);
    assert_eq!(status(&report), 0, "{}", stderr(&report));
    let report: Value = serde_json::from_slice(&report.stdout).unwrap();
    let energy = (agent_milli_wh as f64 / 1000.0 * 1000.0).round() / 1000.0;
    assert_eq!(report["rows"][0]["vo"], "atlas");
    assert_eq!(report["rows"][0]["energy_wh"], energy);
    assert_eq!(report["rows"][1]["energy_wh"], 1000.5);
    let idle_hours = (idle_milli_gpu_seconds as f64 / 3_600_000.0 * 1000.0).round() / 1000.0;
    assert_eq!(number(&report["rows"][0]["idle_gpu_hours"]), idle_hours);
    drop(server);
}

#[test]
fn the_sites_idle_allocations_come_with_their_vo_and_user() {
    let dir = tempfile::tempdir().unwrap();
    let site_dir = dir.path().join("site-a");
    let agents = site_dir.join("agents");
    std::fs::create_dir_all(&agents).unwrap();
    let document = run_agent(&dir.path().join("node"), &agents);
    let idle_alone = holder(&document, "4242", IDLE_ALLOCATED_H200);
    let idle_shared = holder(&document, "4243", BUSY_H200);
    // Job 4242 is still running (no end) as the site's usage knows it; 4243 is unknown there.
    let manual = r#"{"resource": "cluster:4242", "model": "H200", "count": 1, "vo": "atlas", "user": "/DC=org/CN=alice", "record_type": "job", "start": "2026-01-01T00:00:00Z"}
"#;
    let pki = pki(dir.path());
    let site = site(
        &site_dir,
        "SITE-A",
        "https://127.0.0.1:1",
        TOKEN_A,
        &pki,
        manual,
        "\n[accounting.agents]\ndocuments = \"agents\"\n",
    );
    let output = accelfed()
        .args(["idle", "--format", "json", "--config"])
        .arg(&site.config)
        .output()
        .unwrap();
    assert_eq!(status(&output), 0, "{}", stderr(&output));
    let listed: Value = serde_json::from_slice(&output.stdout).unwrap();
    let rows = listed["allocations"].as_array().unwrap();
    let ids: Vec<&str> = rows.iter().map(|r| r["id"].as_str().unwrap()).collect();
    let mut sorted = ids.clone();
    sorted.sort_unstable();
    assert_eq!(
        sorted,
        ["4242", "4243"],
        "the busy job is not idle: {listed}"
    );
    let job = rows.iter().find(|r| r["id"] == "4242").unwrap();
    assert_eq!(
        (&job["vo"], &job["user"], &job["resource"], &job["gpus"]),
        (
            &Value::from("atlas"),
            &Value::from("/DC=org/CN=alice"),
            &Value::from("cluster:4242"),
            &Value::from(1)
        )
    );
    let other = rows.iter().find(|r| r["id"] == "4243").unwrap();
    assert_eq!(other["vo"], Value::Null, "not guessed: {other}");
    // Idle since the start of its idle run, up to the agent's last reading.
    let updated = document["updated_unix_ms"].as_u64().unwrap();
    let hours =
        |job: &Value| (updated - job["idle_since_unix_ms"].as_u64().unwrap()) as f64 / 3_600_000.0;
    assert!((number(&job["gpu_hours_lost"]) - hours(idle_alone)).abs() < 1e-9);
    assert!((number(&other["gpu_hours_lost"]) - hours(idle_shared)).abs() < 1e-9);
}
