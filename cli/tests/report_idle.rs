//! `accelfed report --idle` on a real SQLite repository filled with records whose idle GPU-hours
//! are computed by hand below: the idle share is over the records that carry an ActiveDuration,
//! and the GPU-hours of those that carry none are shown apart. Then a VM's stopped hours beside
//! its unmeasured running time, metered, shipped and served by the real processes, reach
//! `report --idle` as known idle time exactly.

#![allow(clippy::unwrap_used)]

use std::path::Path;
use std::process::{Command, Output};

use accelfed_accounting::repository::{IngestOptions, Repository};
use accelfed_accounting::wire::{Outcome, Submission};
use accelfed_schemas::gpu::GpuCount;
use accelfed_schemas::names::{SiteName, VoName};
use accelfed_schemas::usage::{Month, sample};
use chrono::{TimeZone, Utc};

const HOUR: u64 = 3_600;

fn accelfed(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_accelfed"))
        .args(args)
        .env_remove("ACCELFED_DATABASE")
        .output()
        .unwrap()
}

fn stdout(output: &Output) -> String {
    assert!(output.status.success(), "{output:?}");
    String::from_utf8(output.stdout.clone()).unwrap()
}

/// (resource, site, VO, month, GPUs, allocated hours, active hours):
///
/// | VO    | site   | month   | GPUs | allocated | active | allocated GPU-h | idle GPU-h      |
/// |-------|--------|---------|------|-----------|--------|-----------------|-----------------|
/// | atlas | SITE-A | 2026-01 | 2    | 10 h      | 4 h    | 20              | 12              |
/// | atlas | SITE-B | 2026-02 | 1    | 5 h       | 5 h    | 5               | 0               |
/// | cms   | SITE-A | 2026-01 | 4    | 10 h      | none   | 40 (unmeasured) | -               |
/// | cms   | SITE-A | 2026-02 | 1    | 2 h       | 0.5 h  | 2               | 1.5             |
///
/// atlas: 12 of 25 idle (48.0 %); cms: 1.5 of 2 (75.0 %), 40 unmeasured; all: 13.5 of 27 (50.0 %).
type Held = (
    &'static str,
    &'static str,
    &'static str,
    u32,
    u32,
    u64,
    Option<u64>,
);
const RECORDS: [Held; 4] = [
    ("vm-1", "SITE-A", "atlas", 1, 2, 10 * HOUR, Some(4 * HOUR)),
    ("vm-2", "SITE-B", "atlas", 2, 1, 5 * HOUR, Some(5 * HOUR)),
    ("vm-3", "SITE-A", "cms", 1, 4, 10 * HOUR, None),
    ("vm-4", "SITE-A", "cms", 2, 1, 2 * HOUR, Some(HOUR / 2)),
];

fn repository(path: &Path) {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async {
        let repo = Repository::open(path.to_str().unwrap()).await.unwrap();
        let options = IngestOptions {
            max_batch: 100,
            now: Utc.with_ymd_and_hms(2026, 3, 1, 0, 0, 0).unwrap(),
        };
        for (resource, site, vo, month, gpus, allocated, active) in RECORDS {
            let mut r = sample::record(resource);
            r.site = SiteName::new(site).unwrap();
            r.vo = Some(VoName::new(vo).unwrap());
            r.month = Month::new(2026, month).unwrap();
            r.count = GpuCount::whole(gpus);
            r.first_seen = Utc.with_ymd_and_hms(2026, month, 3, 0, 0, 0).unwrap();
            r.last_seen = r.first_seen + chrono::Duration::seconds(allocated as i64);
            r.available_duration = allocated;
            r.active_duration = active;
            let batch: Vec<Submission> = vec![r.into()];
            let site = SiteName::new(site).unwrap();
            let report = repo.ingest(&site, batch, options).await.unwrap();
            assert_eq!(report.outcomes, vec![Outcome::Stored]);
        }
    });
}

#[test]
fn idle_gpu_hours_and_their_share_in_every_format() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("acc.sqlite");
    repository(&db);
    let db = db.to_str().unwrap();

    let csv = stdout(&accelfed(&[
        "report",
        "--database",
        db,
        "--idle",
        "-f",
        "csv",
    ]));
    assert_eq!(
        csv,
        "vo,records,gpu_hours,idle_gpu_hours,measured_gpu_hours,idle_percent,unmeasured_gpu_hours\r\n\
         atlas,2,25.000,12.000,25.000,48.0,0.000\r\n\
         cms,2,42.000,1.500,2.000,75.0,40.000\r\n"
    );

    let json = stdout(&accelfed(&[
        "report",
        "--database",
        db,
        "--idle",
        "--by",
        "site,month",
        "-f",
        "json",
    ]));
    let json: serde_json::Value = serde_json::from_str(&json).unwrap();
    let rows: Vec<(String, String, serde_json::Value, f64)> = json["rows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|row| {
            (
                row["site"].as_str().unwrap().to_owned(),
                row["month"].as_str().unwrap().to_owned(),
                row["idle_gpu_hours"].clone(),
                row["unmeasured_gpu_hours"].as_f64().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        rows,
        [
            ("SITE-A".into(), "2026-01".into(), 12.0.into(), 40.0),
            ("SITE-A".into(), "2026-02".into(), 1.5.into(), 0.0),
            ("SITE-B".into(), "2026-02".into(), 0.0.into(), 0.0),
        ]
    );
    assert_eq!(json["total"]["idle_gpu_hours"], 13.5);
    assert_eq!(json["total"]["measured_gpu_hours"], 27.0);
    assert_eq!(json["total"]["idle_percent"], 50.0);
    assert_eq!(json["total"]["unmeasured_gpu_hours"], 40.0);

    // A group none of whose records carries an ActiveDuration has no idle figure, only its
    // unmeasured GPU-hours.
    let table = stdout(&accelfed(&[
        "report",
        "--database",
        db,
        "--idle",
        "--vo",
        "cms",
        "--by",
        "month",
    ]));
    assert_eq!(
        table,
        "\
MONTH    RECORDS  GPU-HOURS  IDLE GPU-H  OF MEASURED  IDLE %  UNMEASURED GPU-H
------------------------------------------------------------------------------
2026-01        1     40.000           -            -       -            40.000
2026-02        1      2.000       1.500        2.000    75.0             0.000
------------------------------------------------------------------------------
TOTAL          2     42.000       1.500        2.000    75.0            40.000
"
    );

    // The chart shows usage: --idle with svg is a usage error.
    let svg = accelfed(&["report", "--database", db, "--idle", "-f", "svg"]);
    assert_eq!(svg.status.code(), Some(2), "{svg:?}");
}

/// By hand: a VM on a 2-GPU flavor ACTIVE 10 h, SHUTOFF 5 h, ACTIVE 3 h in January (the OpenStack
/// meter's pieces, written as manual usage: the stopped stretch with utilisation 0, the running
/// ones with none, as Nova knows nothing of them). One record: 18 h x 2 GPUs = 36 GPU-hours, no
/// ActiveDuration, 5 h known idle: 10 idle GPU-hours, all of the measured 10, 26 unmeasured.
#[test]
fn a_stopped_vms_known_idle_hours_reach_report_idle_through_ship_and_serve() {
    use accelfed_tests::central::{Server, TOKEN_A, site, status, stderr};
    use accelfed_tests::pki::pki;

    let line = |start: &str, end: &str, utilisation: &str| {
        format!(
            "{{\"resource\": \"vm-os-1\", \"model\": \"A100\", \"count\": 2, \"vo\": \"atlas\", \"start\": \"2026-01-05T{start}:00:00Z\", \"end\": \"2026-01-05T{end}:00:00Z\"{utilisation}}}\n"
        )
    };
    let usage =
        line("00", "10", "") + &line("10", "15", ", \"utilisation\": 0") + &line("15", "18", "");
    let dir = tempfile::tempdir().unwrap();
    let pki = pki(dir.path());
    let (server, database) = Server::start_sqlite(dir.path(), &pki);
    let site = site(
        &dir.path().join("site-a"),
        "SITE-A",
        &server.endpoint(),
        TOKEN_A,
        &pki,
        &usage,
        "",
    );
    let metered = site.meter();
    assert_eq!(status(&metered), 0, "{}", stderr(&metered));
    let shipped = site.ship(false);
    assert_eq!(status(&shipped), 0, "{}", stderr(&shipped));

    let csv = stdout(&accelfed(&[
        "report",
        "--database",
        &database,
        "--idle",
        "-f",
        "csv",
    ]));
    assert_eq!(
        csv,
        "vo,records,gpu_hours,idle_gpu_hours,measured_gpu_hours,idle_percent,unmeasured_gpu_hours\r\n\
         atlas,1,36.000,10.000,10.000,100.0,26.000\r\n"
    );
    // The usage view's idle column follows the same rule; ActiveDuration stays unknown.
    let json = stdout(&accelfed(&[
        "report",
        "--database",
        &database,
        "-f",
        "json",
    ]));
    let json: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(json["total"]["idle_gpu_hours"], 10.0);
    assert_eq!(json["total"]["active_gpu_hours"], serde_json::Value::Null);
    drop(server);
}
