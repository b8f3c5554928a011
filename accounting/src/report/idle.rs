//! The idle view (`accelfed report --idle`, `idle=true` on the report API): per group the idle
//! GPU-hours, the allocated GPU-hours they are a share of, that share, and the GPU-hours of no
//! known activity. A record with an ActiveDuration is measured throughout; one without is measured
//! for its known-idle seconds (IdleDuration: a VM's stopped stretches) and idle for them. The share
//! is over the measured GPU-hours alone; the rest is shown beside it, never counted as idle or
//! active (see `super::idle_hours`).
//!
//! The layouts are the usage view's (table, CSV, JSON); only the figure columns differ.

use serde_json::{Map, Value};

use super::{IdleFigures, Report, TextFormat, csv, hours, json, table};
use crate::repository::Totals;

/// Table headers, in the order of [`cells`].
const HEADERS: [&str; 6] = [
    "RECORDS",
    "GPU-HOURS",
    "IDLE GPU-H",
    "OF MEASURED",
    "IDLE %",
    "UNMEASURED GPU-H",
];
/// CSV and JSON names, in the same order. `records` and `gpu_hours` are the usage view's, so a
/// reader of either view finds them.
const NAMES: [&str; 6] = [
    "records",
    "gpu_hours",
    "idle_gpu_hours",
    "measured_gpu_hours",
    "idle_percent",
    "unmeasured_gpu_hours",
];

pub(super) fn render(report: &Report, format: TextFormat) -> String {
    match format {
        TextFormat::Table => table::layout(report, &HEADERS, |t| cells(t, "-")),
        TextFormat::Csv => csv::lines(report, &NAMES, |t| cells(t, "")),
        TextFormat::Json => json::document(report, figures),
    }
}

/// The figures as text, `absent` for those no record measured.
fn cells(t: &Totals, absent: &str) -> Vec<String> {
    let f = IdleFigures::of(t);
    let or = |value: Option<String>| value.unwrap_or_else(|| absent.to_owned());
    vec![
        t.records.to_string(),
        hours(t.gpu_hours()),
        or(f.idle.map(hours)),
        or(f.measured.map(hours)),
        or(f.percent.map(|p| format!("{p:.1}"))),
        hours(f.unmeasured),
    ]
}

/// The figures for JSON: `null` where no record measured, as the usage view does.
fn figures(t: &Totals) -> Map<String, Value> {
    let f = IdleFigures::of(t);
    let round = |v: f64| (v * 1000.0).round() / 1000.0;
    let values: [Value; 6] = [
        t.records.into(),
        round(t.gpu_hours()).into(),
        f.idle.map(round).into(),
        f.measured.map(round).into(),
        f.percent.map(|p| (p * 10.0).round() / 10.0).into(),
        round(f.unmeasured).into(),
    ];
    NAMES
        .iter()
        .map(|name| (*name).to_owned())
        .zip(values)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::super::{TextFormat, View, sample};

    #[test]
    fn shows_idle_hours_and_their_share_of_the_measured_allocation() {
        let report = sample::report().with_view(View::Idle);
        let csv = report.render(TextFormat::Csv);
        let lines: Vec<&str> = csv.split("\r\n").collect();
        assert_eq!(
            lines[0],
            "vo,records,gpu_hours,idle_gpu_hours,measured_gpu_hours,idle_percent,unmeasured_gpu_hours"
        );
        // atlas: 4,500 allocated, 3,500 active: 1,000 idle, 22.2 %.
        assert_eq!(lines[1], "atlas,22,4500.000,1000.000,4500.000,22.2,0.000");
        // biomed carries no ActiveDuration: nothing idle to say, its 100 GPU-hours unmeasured.
        assert_eq!(lines[2], "\"biomed, \"\"eu\"\"\",3,100.000,,,,100.000");
        assert_eq!(lines[3], "cms,5,900.000,600.000,900.000,66.7,0.000");
        let json: serde_json::Value =
            serde_json::from_str(&report.render(TextFormat::Json)).unwrap();
        assert_eq!(json["total"]["idle_gpu_hours"], 1600.0);
        assert_eq!(json["total"]["measured_gpu_hours"], 5400.0);
        assert_eq!(json["total"]["idle_percent"], 29.6);
        assert_eq!(json["total"]["unmeasured_gpu_hours"], 100.0);
        assert_eq!(json["rows"][1]["idle_percent"], serde_json::Value::Null);
        let table = report.render(TextFormat::Table);
        let expected = "\
VO            RECORDS  GPU-HOURS  IDLE GPU-H  OF MEASURED  IDLE %  UNMEASURED GPU-H
-----------------------------------------------------------------------------------
atlas              22   4500.000    1000.000     4500.000    22.2             0.000
biomed, \"eu\"        3    100.000           -            -       -           100.000
cms                 5    900.000     600.000      900.000    66.7             0.000
-----------------------------------------------------------------------------------
TOTAL              30   5500.000    1600.000     5400.000    29.6           100.000
";
        assert_eq!(table, expected);
    }

    #[test]
    fn known_idle_time_of_records_without_activedurations_is_idle_and_measured() {
        // biomed's 100 GPU-hours carry no ActiveDuration, 40 of them known idle (stopped VMs):
        // those 40 are idle and measured, the other 60 unmeasured.
        let mut report = sample::report().with_view(View::Idle);
        let known = 40 * 3_600_000;
        report.lines[1].totals.known_idle_records = 3;
        report.lines[1].totals.known_idle_gpu_milli_seconds = known;
        report.total.known_idle_records = 3;
        report.total.known_idle_gpu_milli_seconds = known;
        let csv = report.render(TextFormat::Csv);
        let lines: Vec<&str> = csv.split("\r\n").collect();
        assert_eq!(
            lines[2],
            "\"biomed, \"\"eu\"\"\",3,100.000,40.000,40.000,100.0,60.000"
        );
        // Total: 1,600 + 40 idle of 5,400 + 40 measured; 60 unmeasured.
        let json: serde_json::Value =
            serde_json::from_str(&report.render(TextFormat::Json)).unwrap();
        assert_eq!(json["total"]["idle_gpu_hours"], 1640.0);
        assert_eq!(json["total"]["measured_gpu_hours"], 5440.0);
        assert_eq!(json["total"]["idle_percent"], 30.1);
        assert_eq!(json["total"]["unmeasured_gpu_hours"], 60.0);
    }
}
