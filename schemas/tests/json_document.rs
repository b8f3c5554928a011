//! The GLUE 2.1 JSON rendering: its golden file, and the shipped JSON Schema
//! (`schemas/json/glue21.schema.json`), which must accept what we render and refuse what
//! cloud-info-api could not read.

mod common;

use std::collections::HashSet;

use accelfed_schemas::glue::sample;
use accelfed_schemas::render::json;
use serde_json::{Value, json};

fn schema() -> jsonschema::Validator {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/json/glue21.schema.json");
    let text = std::fs::read_to_string(path).expect("the schema file is there");
    let schema: Value = serde_json::from_str(&text).expect("the schema is JSON");
    jsonschema::draft202012::new(&schema).expect("the schema is a valid 2020-12 schema")
}

fn sample_document() -> Value {
    serde_json::from_slice(&json::render(&sample::snapshot("SAMPLE-SITE"))).expect("JSON")
}

/// Every schema violation of `document`, as `path: message`.
fn violations(document: &Value) -> Vec<String> {
    schema()
        .iter_errors(document)
        .map(|error| format!("{}: {error}", error.instance_path))
        .collect()
}

/// Every entity ID of a class-keyed document (CloudComputingManager may be a single object).
fn ids(document: &Value) -> Vec<String> {
    let mut ids = Vec::new();
    for entities in document.as_object().expect("an object").values() {
        let list = match entities {
            Value::Array(list) => list.clone(),
            single => vec![single.clone()],
        };
        ids.extend(
            list.iter()
                .map(|e| e["ID"].as_str().expect("ID").to_owned()),
        );
    }
    ids
}

#[test]
fn golden_sample() {
    let bytes = json::render(&sample::snapshot("SAMPLE-SITE"));
    common::assert_golden("sample.glue21.json", &bytes);
}

#[test]
fn the_sample_validates_against_the_schema_and_repeats_no_id() {
    let document = sample_document();
    assert_eq!(violations(&document), Vec::<String>::new());
    let ids = ids(&document);
    let unique: HashSet<&String> = ids.iter().collect();
    assert_eq!(unique.len(), ids.len(), "{ids:?}");
}

#[test]
fn the_schema_refuses_what_cloud_info_api_could_not_read() {
    // No GOCDB id on the cloud service: cloud-info-api cannot place the site.
    let mut document = sample_document();
    document["CloudComputingService"][0]["OtherInfo"] = json!({});
    let found = violations(&document);
    assert!(
        found
            .iter()
            .any(|v| v.contains("/CloudComputingService/0/OtherInfo")),
        "{found:?}"
    );

    // A VO list where cloud-info-api reads one VO name.
    let mut document = sample_document();
    document["MappingPolicy"][0]["Associations"]["PolicyUserDomain"] = json!(["atlas", "cms"]);
    let found = violations(&document);
    assert!(
        found
            .iter()
            .any(|v| v.contains("/MappingPolicy/0/Associations/PolicyUserDomain")),
        "{found:?}"
    );

    // A class key missing altogether.
    let mut document = sample_document();
    document.as_object_mut().unwrap().remove("Share");
    assert!(violations(&document).iter().any(|v| v.contains("Share")));
}

#[test]
fn the_schema_refuses_bad_gpu_values_and_unknown_attributes() {
    let cases = [
        ("FreeAccelerators", json!(-1)),
        ("FreeAccelerators", json!("8")),
        ("VirtualizationType", json!("teleported")),
        ("Colour", json!("green")),
    ];
    for (attribute, value) in cases {
        let mut document = sample_document();
        document["CloudComputingManagerAccelerator"][0][attribute] = value.clone();
        let found = violations(&document);
        assert!(
            found
                .iter()
                .any(|v| v.starts_with("/CloudComputingManagerAccelerator/0")),
            "{attribute} = {value} was accepted: {found:?}"
        );
    }
    // Half a GPU is a count (a shared GPU), not an error.
    let mut document = sample_document();
    document["CloudComputingManagerAccelerator"][0]["FreeAccelerators"] = json!(0.5);
    assert_eq!(violations(&document), Vec::<String>::new());
}
