//! The APEL export: any records (JSON lines in the spool's form; the first byte picks the
//! database's character set and the message limits) that pass APEL's safety check render into
//! messages that parse as APEL accelerator messages within the limits, every record once.
#![no_main]

use accelfed_accounting::apel::safety::{Charset, check};
use accelfed_fuzz::select;
use accelfed_schemas::render::apel::{MESSAGE_TYPE, VERSION, render_with};
use accelfed_schemas::usage::UsageRecord;
use libfuzzer_sys::fuzz_target;
use serde_json::Value;

const MANDATORY: [&str; 9] = [
    "MeasurementMonth",
    "MeasurementYear",
    "AssociatedRecordType",
    "AssociatedRecord",
    "FQAN",
    "SiteName",
    "Count",
    "Type",
    "Model",
];

fuzz_target!(|data: &[u8]| {
    let Some((selector, input)) = select(data) else {
        return;
    };
    let Ok(text) = std::str::from_utf8(input) else {
        return;
    };
    let records: Vec<UsageRecord> = text
        .lines()
        .filter_map(|line| serde_json::from_str(line).ok())
        .collect();
    let charset = if selector & 1 == 0 {
        Charset::Utf8mb3
    } else {
        Charset::Latin1
    };
    let max_records = usize::from(selector >> 1 & 7) + 1;
    let max_bytes = if selector & 0x10 == 0 { 999_999 } else { 600 };
    let checked = check(records, charset);
    for refused in &checked.refused {
        assert!(!refused.to_string().is_empty());
    }
    let export = render_with(&checked.records, max_records, max_bytes);
    let mut sent = 0;
    for message in &export.messages {
        assert!(message.is_ascii(), "a non-ASCII message");
        assert!(
            message.len() <= max_bytes,
            "{} bytes > {max_bytes}",
            message.len()
        );
        let parsed: Value = serde_json::from_str(message)
            .unwrap_or_else(|error| panic!("an APEL message that is not JSON: {error}\n{message}"));
        assert_eq!(parsed["Type"], MESSAGE_TYPE);
        assert_eq!(parsed["Version"], VERSION);
        let usage = parsed["UsageRecords"]
            .as_array()
            .expect("UsageRecords is a list");
        assert!(
            !usage.is_empty() && usage.len() <= max_records,
            "{} records",
            usage.len()
        );
        for record in usage {
            for field in MANDATORY {
                let value = &record[field];
                let present = match value {
                    Value::String(text) => !text.is_empty(),
                    Value::Number(_) => true,
                    _ => false,
                };
                assert!(present, "{field} is {value} in {record}");
            }
            for field in ["Cores", "ActiveDuration", "AvailableDuration", "Benchmark"] {
                let value = &record[field];
                assert!(
                    value.is_null() && record.get(field).is_none() || value.is_number(),
                    "{field} is {value} in {record}"
                );
            }
        }
        sent += usage.len();
    }
    assert_eq!(
        sent + export.skipped.len(),
        checked.records.len(),
        "every record sent or skipped once"
    );
});
