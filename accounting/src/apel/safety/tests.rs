use accelfed_schemas::gpu::{GpuCount, GpuModel};
use accelfed_schemas::names::{SiteName, Text};
use accelfed_schemas::usage::Benchmark;
use accelfed_schemas::usage::sample::record;

use super::*;

fn one(record: UsageRecord, charset: Charset) -> Checked {
    check(vec![record], charset)
}

fn refused_field(checked: &Checked) -> Vec<&'static str> {
    checked.refused.iter().map(|r| r.field).collect()
}

#[test]
fn a_plain_record_passes_unchanged() {
    let r = record("vm-1");
    let checked = one(r.clone(), Charset::Utf8mb3);
    assert_eq!(checked.records, vec![r]);
    assert!(checked.refused.is_empty() && checked.normalised.is_empty());
}

#[test]
fn an_emoji_in_the_user_name_becomes_a_question_mark_and_the_record_goes() {
    let mut r = record("vm-1");
    r.global_user_name = Some(Text::new("Jürgen 🚀 Müller").unwrap());
    let checked = one(r, Charset::Utf8mb3);
    assert!(checked.refused.is_empty());
    let user = checked.records[0].global_user_name.as_ref().unwrap();
    assert_eq!(user.as_str(), "Jürgen ? Müller", "BMP text stays as it is");
    assert_eq!(checked.normalised[0].field, "GlobalUserName");

    // Latin-1: the umlauts stay, Greek does not.
    let mut r = record("vm-1");
    r.global_user_name = Some(Text::new("Jürgen Παπαδόπουλος").unwrap());
    let checked = one(r, Charset::Latin1);
    assert_eq!(
        checked.records[0]
            .global_user_name
            .as_ref()
            .unwrap()
            .as_str(),
        format!("Jürgen {}", "?".repeat(12))
    );
}

#[test]
fn unstorable_characters_in_identifying_fields_refuse_the_record_naming_it() {
    let r =
        accelfed_schemas::usage::sample::in_month(record("vm-🚀"), Month::new(2026, 3).unwrap());
    let checked = one(r, Charset::Utf8mb3);
    assert!(checked.records.is_empty());
    let refused = &checked.refused[0];
    assert_eq!(refused.field, "AssociatedRecord");
    let shown = refused.to_string();
    assert!(
        shown.contains("vm-🚀") && shown.contains("2026-03") && shown.contains("U+1F680"),
        "{shown}"
    );

    let mut r = record("vm-1");
    r.site = SiteName::new("ΕΛΛΑΔΑ-01").unwrap();
    assert_eq!(
        refused_field(&one(r.clone(), Charset::Latin1)),
        ["SiteName"]
    );
    assert!(
        one(r, Charset::Utf8mb3).refused.is_empty(),
        "Greek is in the BMP"
    );
}

#[test]
fn null_like_mandatory_values_are_refused_and_a_null_like_user_is_left_out() {
    for value in ["None", "null", "NULL", "none"] {
        let r = record(value);
        assert_eq!(
            refused_field(&one(r, Charset::Utf8mb3)),
            ["AssociatedRecord"],
            "{value}"
        );
        let mut r = record("vm-1");
        r.model = GpuModel::new(value).unwrap();
        assert_eq!(refused_field(&one(r, Charset::Utf8mb3)), ["Model"]);
        let mut r = record("vm-1");
        r.site = SiteName::new(value).unwrap();
        assert_eq!(refused_field(&one(r, Charset::Utf8mb3)), ["SiteName"]);
    }
    let mut r = record("vm-1");
    r.global_user_name = Some(Text::new("None").unwrap());
    let checked = one(r, Charset::Utf8mb3);
    assert!(checked.refused.is_empty());
    assert_eq!(checked.records[0].global_user_name, None);
    // "None" inside a longer value is a value.
    assert!(one(record("None-1"), Charset::Utf8mb3).refused.is_empty());
}

/// Names (resource, FQAN, VO, site) cannot pass 255 characters: the name types refuse them where
/// they enter. Free text can, and is checked here.
#[test]
fn text_longer_than_the_column_is_refused_counting_characters() {
    let user = |text: String| {
        let mut r = record("vm-1");
        r.global_user_name = Some(Text::new(text).unwrap());
        one(r, Charset::Utf8mb3)
    };
    assert!(
        user("é".repeat(255)).refused.is_empty(),
        "255 characters fit, whatever their bytes"
    );
    assert!(
        one(record(&"é".repeat(255)), Charset::Utf8mb3)
            .refused
            .is_empty()
    );
    let checked = user("é".repeat(256));
    assert_eq!(refused_field(&checked), ["GlobalUserName"]);
    assert!(checked.refused[0].reason.contains("256 characters"));
    assert_eq!(
        refused_field(&user(format!("/CN={}", "x".repeat(300)))),
        ["GlobalUserName"]
    );
}

#[test]
fn a_record_with_neither_fqan_nor_vo_is_refused_by_its_resource() {
    let mut r = record("cluster-a/ns/pod-7");
    r.fqan = None;
    r.vo = None;
    let checked = one(r.clone(), Charset::Utf8mb3);
    assert_eq!(refused_field(&checked), ["FQAN"]);
    let shown = checked.refused[0].to_string();
    assert!(
        shown.contains("cluster-a/ns/pod-7") && shown.contains("2026-01"),
        "{shown}"
    );
    // With a VO, the VO's FQAN stands in (as the renderer writes it).
    r.vo = Some(accelfed_schemas::names::VoName::new("atlas").unwrap());
    assert!(one(r, Charset::Utf8mb3).refused.is_empty());
}

#[test]
fn numbers_past_their_columns_are_refused() {
    let mut r = record("vm-1");
    r.count = GpuCount::new(10_000_000.0).unwrap();
    assert_eq!(refused_field(&one(r, Charset::Utf8mb3)), ["Count"]);
    let mut r = record("vm-1");
    r.available_duration = MAX_INT + 1;
    assert_eq!(
        refused_field(&one(r, Charset::Utf8mb3)),
        ["AvailableDuration"]
    );
    let mut r = record("vm-1");
    r.benchmark = Some(Benchmark {
        kind: Text::new("hepscore23").unwrap(),
        value: 1e8,
    });
    assert_eq!(refused_field(&one(r, Charset::Utf8mb3)), ["Benchmark"]);
}

#[test]
fn keys_equal_but_for_case_or_accents_keep_one_record_and_refuse_the_others() {
    let upper = record("GPU-Node-1");
    let lower = record("gpu-node-1");
    let accented = record("gpu-nöde-1");
    let other = record("gpu-node-2");
    let forward = check(
        vec![
            lower.clone(),
            upper.clone(),
            accented.clone(),
            other.clone(),
        ],
        Charset::Utf8mb3,
    );
    let backward = check(
        vec![other.clone(), accented, upper.clone(), lower],
        Charset::Utf8mb3,
    );
    for checked in [&forward, &backward] {
        let kept: Vec<&str> = checked
            .records
            .iter()
            .map(|r| r.associated_record.as_str())
            .collect();
        assert_eq!(kept.len(), 2, "{kept:?}");
        assert!(kept.contains(&"GPU-Node-1") && kept.contains(&"gpu-node-2"));
        assert_eq!(checked.refused.len(), 2);
        for refused in &checked.refused {
            assert!(refused.reason.contains("GPU-Node-1"), "{}", refused.reason);
        }
    }
    // Another month, site or model is another key.
    let next_month = accelfed_schemas::usage::sample::in_month(
        record("gpu-node-1"),
        Month::new(2026, 2).unwrap(),
    );
    let mut other_model = record("gpu-node-1");
    other_model.model = GpuModel::new("NVIDIA H100 80GB HBM3").unwrap();
    let checked = check(vec![upper, next_month, other_model], Charset::Utf8mb3);
    assert_eq!(checked.records.len(), 3);
}

#[test]
fn a_checker_finds_collisions_across_batches_and_lets_the_same_record_through_again() {
    let mut checker = Checker::new(Charset::Utf8mb3);
    let first = checker.check(vec![record("GPU-Node-1"), record("vm-1")]);
    assert_eq!(first.records.len(), 2);
    let second = checker.check(vec![record("gpu-node-1"), record("vm-1"), record("vm-2")]);
    assert_eq!(refused_field(&second), ["AssociatedRecord"]);
    assert_eq!(second.refused[0].resource, "gpu-node-1");
    assert!(second.refused[0].reason.contains("GPU-Node-1"));
    let kept: Vec<&str> = second
        .records
        .iter()
        .map(|r| r.associated_record.as_str())
        .collect();
    assert_eq!(kept, ["vm-1", "vm-2"]);
}

#[test]
fn folding_matches_a_case_and_accent_insensitive_collation() {
    assert_eq!(fold("GPU-Nöde-É"), fold("gpu-node-e"));
    assert_eq!(fold("ÅNGSTRÖM"), "angstrom");
    assert_ne!(fold("gpu-node-1"), fold("gpu-node-2"));
}
