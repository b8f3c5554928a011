//! An independent check of APEL accelerator messages (`APEL-accelerator-message`, version 0.1),
//! written from APEL's own definition rather than from accelfed's writer, so a test that exports
//! messages can hold each one against what APEL's loader and database take.
//!
//! The facts, from APEL's pull request #459 (github.com/apel/apel, head c1e5bca, the only server
//! code for accelerator records):
//! - `apel/common/message_schemas.py` (`ACCELERATOR_MSG_SCHEMA`, what the record factory
//!   validates first): `Type` is `APEL-accelerator-message`, `Version` `0.1`, `UsageRecords` 1 to
//!   1,000 objects; `MeasurementMonth` 1-12, `MeasurementYear` 2000 to the current year,
//!   `AssociatedRecordType` `cloud` or `job`, `Type` `GPU`, `FPGA` or `Other`; integers
//!   (`MeasurementMonth`, `MeasurementYear`, `AvailableDuration`; `Cores`, `ActiveDuration` or
//!   null), numbers (`Count`; `Benchmark` or null), strings (the rest; `GlobalUserName` and
//!   `BenchmarkType` may be null).
//! - `apel/db/records/accelerator.py`: the fifteen fields, the nine mandatory ones, `CloudType`
//!   and `CloudComputeService` allowed and ignored; `apel/db/records/record.py`: any other field is
//!   "Unknown field", and a value whose text is `none`, `null` or empty (any case) is NULL, which
//!   a mandatory field refuses. No accelerator field is a datetime.
//! - `schemas/accelerator.sql`: every text column `VARCHAR(255)`, `Model` `NOT NULL` although the
//!   message schema does not require it, `Count` and `Benchmark` `DECIMAL(10,3)`, the integers
//!   `INT`; primary key (MeasurementMonth, MeasurementYear, AssociatedRecordType,
//!   AssociatedRecord, SiteID, Model) under MySQL's case-insensitive collation. The server's
//!   `utf8` (3-byte) character set stores no character outside the Basic Multilingual Plane.

use std::collections::BTreeMap;

use serde_json::Value;

/// The fields APEL's accelerator record stores.
const FIELDS: [&str; 15] = [
    "MeasurementMonth",
    "MeasurementYear",
    "AssociatedRecordType",
    "AssociatedRecord",
    "GlobalUserName",
    "FQAN",
    "SiteName",
    "Count",
    "Cores",
    "ActiveDuration",
    "AvailableDuration",
    "BenchmarkType",
    "Benchmark",
    "Type",
    "Model",
];
/// Allowed in a message and ignored by the loader.
const IGNORED: [&str; 2] = ["CloudType", "CloudComputeService"];
/// Mandatory in the record (and the message schema), plus `Model`, which the table's `NOT NULL`
/// makes mandatory at insert.
const MANDATORY: [&str; 10] = [
    "MeasurementMonth",
    "MeasurementYear",
    "AssociatedRecordType",
    "AssociatedRecord",
    "FQAN",
    "SiteName",
    "Count",
    "AvailableDuration",
    "Type",
    "Model",
];
const INTEGERS: [&str; 5] = [
    "MeasurementMonth",
    "MeasurementYear",
    "Cores",
    "ActiveDuration",
    "AvailableDuration",
];
const DECIMALS: [&str; 2] = ["Count", "Benchmark"];

/// What is wrong with one message for APEL, each problem naming the record (by index and
/// AssociatedRecord) and field; empty when APEL takes it whole.
pub fn accelerator_message_problems(message: &Value) -> Vec<String> {
    let mut problems = Vec::new();
    if message["Type"] != "APEL-accelerator-message" {
        problems.push(format!("Type is {}", message["Type"]));
    }
    if message["Version"] != "0.1" {
        problems.push(format!("Version is {}", message["Version"]));
    }
    let Some(records) = message["UsageRecords"].as_array() else {
        problems.push("UsageRecords is not a list".to_owned());
        return problems;
    };
    if records.is_empty() || records.len() > 1_000 {
        problems.push(format!("{} records, not 1 to 1,000", records.len()));
    }
    for (index, record) in records.iter().enumerate() {
        let name = format!("record {index} ({})", record["AssociatedRecord"]);
        match record.as_object() {
            Some(fields) => record_problems(fields, &mut |problem| {
                problems.push(format!("{name}: {problem}"));
            }),
            None => problems.push(format!("{name}: not an object")),
        }
    }
    problems
}

/// Panics listing every problem of every message, and when two records of the messages have
/// one primary key as APEL compares it (case-insensitively), so that one would replace the other;
/// returns the number of records.
pub fn assert_accelerator_messages<'a>(
    messages: impl IntoIterator<Item = (String, &'a Value)>,
) -> usize {
    let mut problems = Vec::new();
    let mut keys: BTreeMap<String, String> = BTreeMap::new();
    for (name, message) in messages {
        problems.extend(
            accelerator_message_problems(message)
                .into_iter()
                .map(|problem| format!("{name}: {problem}")),
        );
        for (index, record) in message["UsageRecords"]
            .as_array()
            .into_iter()
            .flatten()
            .enumerate()
        {
            let key = primary_key(record);
            let here = format!("{name} record {index}");
            if let Some(first) = keys.insert(key.clone(), here.clone()) {
                problems.push(format!("{here} has the primary key of {first}: {key}"));
            }
        }
    }
    assert!(
        problems.is_empty(),
        "{} problems for APEL:\n{}",
        problems.len(),
        problems.join("\n")
    );
    keys.len()
}

/// APEL's primary key of a record, as its collation compares it (SiteName stands for SiteID).
fn primary_key(record: &Value) -> String {
    [
        "MeasurementMonth",
        "MeasurementYear",
        "AssociatedRecordType",
        "AssociatedRecord",
        "SiteName",
        "Model",
    ]
    .iter()
    .map(|field| match &record[*field] {
        Value::String(text) => text.to_lowercase(),
        other => other.to_string(),
    })
    .collect::<Vec<_>>()
    .join(" | ")
}

fn record_problems(fields: &serde_json::Map<String, Value>, problem: &mut dyn FnMut(String)) {
    for key in fields.keys() {
        if !FIELDS.contains(&key.as_str()) && !IGNORED.contains(&key.as_str()) {
            problem(format!("unknown field {key}"));
        }
    }
    for field in MANDATORY {
        if fields.get(field).is_none_or(is_null_like) {
            problem(format!(
                "mandatory {field} is missing or null ({:?})",
                fields.get(field)
            ));
        }
    }
    for (field, value) in fields
        .iter()
        .filter(|(key, _)| FIELDS.contains(&key.as_str()))
    {
        if !is_null_like(value) {
            value_problems(field, value, problem);
        }
    }
}

/// APEL reads `None`, `null` and empty text (any case) as NULL; JSON null too.
fn is_null_like(value: &Value) -> bool {
    match value {
        Value::Null => true,
        Value::String(text) => ["none", "null", ""].contains(&text.to_lowercase().as_str()),
        _ => false,
    }
}

fn value_problems(field: &str, value: &Value, problem: &mut dyn FnMut(String)) {
    if INTEGERS.contains(&field) {
        let Some(number) = value.as_i64() else {
            return problem(format!("{field} {value} is not an integer"));
        };
        let range = match field {
            "MeasurementMonth" => 1..=12,
            "MeasurementYear" => 2000..=current_year(),
            // MySQL's INT.
            _ => i64::from(i32::MIN)..=i64::from(i32::MAX),
        };
        if !range.contains(&number) {
            problem(format!("{field} {number} is outside {range:?}"));
        }
    } else if DECIMALS.contains(&field) {
        match value.as_f64() {
            // DECIMAL(10,3): seven digits before the point.
            Some(number) if number.abs() < 1e7 => {}
            _ => problem(format!(
                "{field} {value} is not a number DECIMAL(10,3) holds"
            )),
        }
    } else {
        let Some(text) = value.as_str() else {
            return problem(format!("{field} {value} is not a string"));
        };
        text_problems(field, text, problem);
    }
}

fn text_problems(field: &str, text: &str, problem: &mut dyn FnMut(String)) {
    let allowed: &[&str] = match field {
        "AssociatedRecordType" => &["cloud", "job"],
        "Type" => &["GPU", "FPGA", "Other"],
        _ => &[],
    };
    if !allowed.is_empty() && !allowed.contains(&text) {
        problem(format!("{field} {text:?} is not one of {allowed:?}"));
    }
    let characters = text.chars().count();
    if characters > 255 {
        problem(format!(
            "{field} has {characters} characters, over VARCHAR(255)"
        ));
    }
    if let Some(wide) = text.chars().find(|c| u32::from(*c) > 0xFFFF) {
        problem(format!(
            "{field} holds {wide:?} (U+{:X}), outside MySQL's 3-byte utf8",
            u32::from(wide)
        ));
    }
}

/// This year (UTC) from the system clock: APEL's schema refuses a later MeasurementYear.
fn current_year() -> i64 {
    let seconds = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |elapsed| elapsed.as_secs());
    year_of(seconds)
}

/// The civil (UTC) year of a Unix time: Howard Hinnant's civil_from_days, year part only.
fn year_of(unix_seconds: u64) -> i64 {
    let days = i64::try_from(unix_seconds / 86_400).unwrap_or(0);
    let shifted = days + 719_468;
    let era = shifted.div_euclid(146_097);
    let day_of_era = shifted - era * 146_097;
    let year_of_era =
        (day_of_era - day_of_era / 1_460 + day_of_era / 36_524 - day_of_era / 146_096) / 365;
    let day_of_year = day_of_era - (365 * year_of_era + year_of_era / 4 - year_of_era / 100);
    // Its years start in March; January and February belong to the next civil year.
    let month_index = (5 * day_of_year + 2) / 153;
    year_of_era + era * 400 + i64::from(month_index >= 10)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn good() -> Value {
        serde_json::json!({
            "Type": "APEL-accelerator-message", "Version": "0.1",
            "UsageRecords": [{
                "MeasurementMonth": 1, "MeasurementYear": 2026, "AssociatedRecordType": "cloud",
                "AssociatedRecord": "vm-1", "GlobalUserName": null, "FQAN": "/atlas",
                "SiteName": "SITE", "Count": 0.5, "Cores": null, "ActiveDuration": null,
                "AvailableDuration": 3600, "BenchmarkType": null, "Benchmark": null,
                "Type": "GPU", "Model": "NVIDIA A100", "CloudType": "accelfed"
            }]
        })
    }

    #[test]
    fn a_good_message_passes() {
        assert_eq!(accelerator_message_problems(&good()), Vec::<String>::new());
        assert_eq!(assert_accelerator_messages([("m".to_owned(), &good())]), 1);
    }

    #[test]
    fn each_apel_rule_is_caught() {
        let cases: [(&str, Value, &str); 9] = [
            ("FQAN", "None".into(), "mandatory FQAN"),
            ("Model", Value::Null, "mandatory Model"),
            ("Count", "1".into(), "Count \"1\" is not a number"),
            (
                "MeasurementMonth",
                13.into(),
                "MeasurementMonth 13 is outside",
            ),
            (
                "MeasurementYear",
                9999.into(),
                "MeasurementYear 9999 is outside",
            ),
            ("Type", "MIC".into(), "Type \"MIC\" is not one of"),
            ("GlobalUserName", "x".repeat(256).into(), "256 characters"),
            (
                "GlobalUserName",
                "rocket 🚀".into(),
                "outside MySQL's 3-byte utf8",
            ),
            ("Colour", "red".into(), "unknown field Colour"),
        ];
        for (field, value, expected) in cases {
            let mut message = good();
            message["UsageRecords"][0][field] = value;
            let problems = accelerator_message_problems(&message);
            assert!(
                problems.len() == 1 && problems[0].contains(expected),
                "{field}: {problems:?}"
            );
        }
    }

    #[test]
    fn keys_that_differ_only_in_case_collide() {
        let mut other = good();
        other["UsageRecords"][0]["AssociatedRecord"] = "VM-1".into();
        let result = std::panic::catch_unwind(|| {
            assert_accelerator_messages([("a".to_owned(), &good()), ("b".to_owned(), &other)])
        });
        assert!(result.is_err());
    }

    #[test]
    fn years_turn_at_midnight_of_new_year() {
        assert_eq!(year_of(0), 1970);
        // 2024-02-29 12:00 (a leap day), 2025-12-31 23:59:59 and 2026-01-01 00:00:00.
        assert_eq!(year_of(1_709_208_000), 2024);
        assert_eq!(year_of(1_767_225_599), 2025);
        assert_eq!(year_of(1_767_225_600), 2026);
    }
}
