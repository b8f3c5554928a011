use std::collections::BTreeMap;

use serde_json::Value;

use super::*;
use crate::gpu::GpuCount;
use crate::names::{LocalId, Text, VoName};
use crate::usage::sample::record;

fn parse(message: &str) -> Value {
    let value: Value = serde_json::from_str(message).unwrap();
    assert_eq!(value["Type"], MESSAGE_TYPE);
    assert_eq!(value["Version"], VERSION);
    value
}

fn usage_records(message: &str) -> Vec<Value> {
    parse(message)["UsageRecords"].as_array().unwrap().clone()
}

fn many(n: usize, user: &str) -> Vec<UsageRecord> {
    (0..n)
        .map(|i| {
            let mut r = record(&format!("vm-{i:05}"));
            r.global_user_name = Some(Text::new(format!("{user}-{i}")).unwrap());
            r
        })
        .collect()
}

/// Every record id, from the messages, counted.
fn ids_across(export: &ApelExport) -> BTreeMap<String, usize> {
    let mut seen = BTreeMap::new();
    for message in &export.messages {
        for r in usage_records(message) {
            *seen
                .entry(r["AssociatedRecord"].as_str().unwrap().to_owned())
                .or_insert(0) += 1;
        }
    }
    seen
}

#[test]
fn one_record_has_apels_fields_in_apels_order() {
    let mut r = record("0f3c2a1e-7d1b-4b4e-9a57-1c2d3e4f5a6b");
    r.count = GpuCount::new(0.5).unwrap();
    let export = render(&[r]);
    assert!(export.skipped.is_empty());
    assert_eq!(
        export.messages,
        vec![
            r#"{"Type":"APEL-accelerator-message","Version":"0.1","UsageRecords":[{"MeasurementMonth":1,"MeasurementYear":2026,"AssociatedRecordType":"cloud","AssociatedRecord":"0f3c2a1e-7d1b-4b4e-9a57-1c2d3e4f5a6b","GlobalUserName":"alice@egi.eu","FQAN":"/vo.example.org","SiteName":"CESNET-MCC","Count":0.5,"Cores":8,"ActiveDuration":3600,"AvailableDuration":864000,"Type":"GPU","Model":"NVIDIA A100-SXM4-80GB"}]}"#
        ]
    );
}

#[test]
fn fqan_falls_back_to_the_vo_and_records_with_neither_are_skipped() {
    let mut with_vo = record("vm-1");
    with_vo.fqan = None;
    let mut neither = record("vm-2");
    neither.fqan = None;
    neither.vo = None;
    let export = render(&[with_vo, neither.clone()]);
    let records = usage_records(&export.messages[0]);
    assert_eq!(records.len(), 1);
    assert_eq!(records[0]["FQAN"], "/vo.example.org");
    assert_eq!(
        export.skipped,
        vec![Skipped {
            id: neither.id(),
            resource: "vm-2".to_owned(),
            month: neither.month,
            reason: SkipReason::NoFqan
        }]
    );
    let shown = export.skipped[0].to_string();
    assert!(
        shown.contains("vm-2") && shown.contains("2026-01"),
        "{shown}"
    );
}

#[test]
fn count_times_duration_is_the_gpu_seconds_within_a_second() {
    // (count, seconds held): a MIG slice, a tiny fraction, thirds, a whole month.
    let cases = [
        (0.0004, 3_600),
        (0.0004, 2_678_400),
        (1.0 / 3.0, 2_678_400),
        (1.0 / 7.0, 86_400),
        (0.142_857, 2_419_200),
        (2.5, 10),
        (3.0, 2_678_400),
    ];
    for (count, seconds) in cases {
        let mut r = record("vm-1");
        r.count = GpuCount::new(count).unwrap();
        r.available_duration = seconds;
        r.active_duration = None;
        let value = &usage_records(&render(&[r.clone()]).messages[0])[0];
        let written = value["Count"].as_f64().unwrap();
        let product = written * value["AvailableDuration"].as_f64().unwrap();
        assert!(
            (product - r.gpu_seconds()).abs() <= 1.0,
            "count {count} for {seconds} s written as {written}"
        );
        assert!(written > 0.0, "a count above zero stays above zero");
    }
    // Whole and three-decimal counts are written as before.
    let mut r = record("vm-1");
    r.count = GpuCount::new(0.5).unwrap();
    let message = &render(&[r]).messages[0];
    assert!(message.contains(r#""Count":0.5,"#), "{message}");
}

#[test]
fn optional_fields_are_left_out_and_mic_is_other() {
    let mut r = record("vm-1");
    r.global_user_name = None;
    r.cores = None;
    r.active_duration = None;
    r.accelerator_type = AcceleratorType::Mic;
    r.benchmark = Some(crate::usage::Benchmark {
        kind: Text::new("hepscore23").unwrap(),
        value: 10.5,
    });
    let value = &usage_records(&render(&[r]).messages[0])[0];
    let keys: Vec<&str> = value
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    assert_eq!(
        keys,
        [
            "MeasurementMonth",
            "MeasurementYear",
            "AssociatedRecordType",
            "AssociatedRecord",
            "FQAN",
            "SiteName",
            "Count",
            "AvailableDuration",
            "BenchmarkType",
            "Benchmark",
            "Type",
            "Model"
        ]
    );
    assert_eq!(value["Type"], "Other");
    assert_eq!(value["Benchmark"], 10.5);
}

#[test]
fn exactly_a_thousand_records_fill_one_message_and_one_more_starts_another() {
    let export = render(&many(1_000, "u"));
    assert_eq!(export.messages.len(), 1);
    assert_eq!(usage_records(&export.messages[0]).len(), 1_000);

    let export = render(&many(1_001, "u"));
    let lens: Vec<usize> = export
        .messages
        .iter()
        .map(|m| usage_records(m).len())
        .collect();
    assert_eq!(lens, vec![1_000, 1]);
    let seen = ids_across(&export);
    assert_eq!(seen.len(), 1_001);
    assert!(seen.values().all(|&n| n == 1));
}

#[test]
fn long_user_names_split_messages_by_bytes() {
    // ~2.1 kB per record: a 1,000-record message would be ~2 MB.
    let export = render(&many(1_000, &"x".repeat(2_000)));
    assert!(export.skipped.is_empty());
    assert!(export.messages.len() >= 3, "{}", export.messages.len());
    for message in &export.messages {
        assert!(message.len() <= MAX_BYTES && message.len() < 1_000_000);
        assert!(usage_records(message).len() <= MAX_RECORDS);
    }
    // Greedy: all but the last message are nearly full.
    for message in &export.messages[..export.messages.len() - 1] {
        assert!(message.len() > MAX_BYTES - 2_200, "{}", message.len());
    }
    let seen = ids_across(&export);
    assert_eq!(seen.len(), 1_000);
    assert!(seen.values().all(|&n| n == 1), "every record exactly once");
}

#[test]
fn a_record_too_large_for_any_message_is_skipped_not_sent() {
    let mut records = many(3, "u");
    records[1].global_user_name = Some(Text::new("y".repeat(MAX_BYTES)).unwrap());
    let export = render(&records);
    assert_eq!(ids_across(&export).len(), 2);
    assert_eq!(export.skipped.len(), 1);
    assert_eq!(export.skipped[0].id, records[1].id());
    assert!(matches!(
        export.skipped[0].reason,
        SkipReason::TooLarge { .. }
    ));
}

#[test]
fn non_ascii_is_escaped_and_parses_back() {
    let mut r = record("vm-ü");
    r.global_user_name = Some(Text::new("Jürgen Müller 🚀 \"quoted\" \\").unwrap());
    r.vo = Some(VoName::new("vo.ελληνικά.eu").unwrap());
    r.fqan = None;
    r.associated_record = LocalId::new("cluster/ns/pód").unwrap();
    let message = &render(&[r]).messages[0];
    assert!(message.is_ascii(), "{message}");
    assert!(message.contains(r"J\u00fcrgen"), "{message}");
    assert!(
        message.contains(r"\ud83d\ude80"),
        "surrogate pair: {message}"
    );
    let back = &usage_records(message)[0];
    assert_eq!(back["GlobalUserName"], "Jürgen Müller 🚀 \"quoted\" \\");
    assert_eq!(back["FQAN"], "/vo.ελληνικά.eu");
    assert_eq!(back["AssociatedRecord"], "cluster/ns/pód");
}

#[test]
fn output_does_not_depend_on_input_order() {
    let mut records = many(50, "u");
    records[7].month = crate::usage::Month::new(2025, 12).unwrap();
    let forward = render_with(&records, 8, MAX_BYTES);
    records.reverse();
    let backward = render_with(&records, 8, MAX_BYTES);
    assert_eq!(forward, backward);
    assert_eq!(forward.messages.len(), 7);
    // The older month comes first.
    assert_eq!(
        usage_records(&forward.messages[0])[0]["MeasurementYear"],
        2025
    );
}

#[test]
fn no_records_no_messages() {
    assert_eq!(render(&[]), ApelExport::default());
}

#[test]
fn known_idle_time_and_energy_are_not_sent_apel_has_no_field_for_them() {
    // A VM's stopped hours beside unknown running time: APEL's ActiveDuration stays absent (never
    // a guess), and the known-idle seconds have no APEL field, so the message is the one of the
    // same record without them.
    let mut r = record("vm-1");
    r.active_duration = None;
    let plain = render(std::slice::from_ref(&r)).messages;
    r.idle_duration = Some(18_000);
    r.energy_wh = Some(12.5);
    assert_eq!(render(&[r]).messages, plain);
    assert!(!plain[0].contains("ActiveDuration"), "{}", plain[0]);
}
