//! The GLUE 2.1 JSON rendering: its golden file; the shipped JSON Schema
//! (`schemas/json/glue21.schema.json`), which must accept what we render and refuse what
//! cloud-info-api could not read; the layout of the document cloud-info-provider 1.2.0 printed
//! (kept in `schemas/tests/reference/`); and the keys cloud-info-api reads, as
//! docs/formats-json.md lists them.

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

/// Every entity ID of a class-keyed document.
fn ids(document: &Value) -> Vec<String> {
    let mut ids = Vec::new();
    for entities in document.as_object().expect("an object").values() {
        let list = entities.as_array().expect("every class key holds a list");
        ids.extend(
            list.iter()
                .map(|e| e["ID"].as_str().expect("ID").to_owned()),
        );
    }
    ids
}

/// The sample with every optional image attribute set, so every key is there to compare.
fn full_document() -> Value {
    let mut snapshot = sample::snapshot("SAMPLE-SITE");
    for service in &mut snapshot.services {
        if let accelfed_schemas::glue::Service::Cloud(cloud) = service {
            for image in &mut cloud.images {
                let text = |s: &str| accelfed_schemas::names::Text::new(s).expect("valid");
                image.marketplace_url = Some(text("https://appdb.egi.eu/store/vo/image/1"));
                image.description = Some(text("Ubuntu with CUDA"));
            }
        }
    }
    serde_json::from_slice(&json::render(&snapshot)).expect("JSON")
}

/// The output of EGI's cloud-info-provider 1.2.0 for a test cloud (22 VO projects).
fn reference() -> Value {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/reference/cloud-info-provider-1.2.0-output.json"
    );
    serde_json::from_str(&std::fs::read_to_string(path).expect("the reference is there"))
        .expect("the reference is JSON")
}

/// The JSON type of a value, for comparing shapes.
fn kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "bool",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "list",
        Value::Object(_) => "object",
    }
}

/// For each key (`Associations.<key>` for associations) of a class's entities, its JSON type.
fn shapes(entities: &Value) -> std::collections::BTreeMap<String, &'static str> {
    let mut out = std::collections::BTreeMap::new();
    for entity in entities.as_array().expect("a list") {
        for (key, value) in entity.as_object().expect("an object") {
            if key == "Associations" {
                for (target, ids) in value.as_object().expect("an object") {
                    out.insert(format!("Associations.{target}"), kind(ids));
                }
            } else {
                out.insert(key.clone(), kind(value));
            }
        }
    }
    out
}

#[test]
fn the_layout_is_cloud_info_providers_key_for_key() {
    let reference = reference();
    let ours = full_document();
    for (class, theirs) in reference.as_object().expect("an object") {
        let mine = ours
            .get(class)
            .unwrap_or_else(|| panic!("{class} is missing"));
        assert_eq!(kind(mine), "list", "{class}");
        assert_eq!(kind(theirs), "list", "{class}");
        let (their_shapes, my_shapes) = (shapes(theirs), shapes(mine));
        for (key, my_kind) in &my_shapes {
            // The same key spelled differently (MarketPlaceURL) is a key the consumer misses.
            if let Some(their_key) = their_shapes
                .keys()
                .find(|their_key| their_key.eq_ignore_ascii_case(key))
            {
                assert_eq!(their_key, key, "{class}: spelling");
                assert_eq!(
                    their_shapes[their_key], *my_kind,
                    "{class}.{key}: {} there, {my_kind} here",
                    their_shapes[their_key]
                );
            }
            if key.starts_with("Associations.") {
                assert_eq!(*my_kind, "list", "{class}.{key}");
            }
        }
        // Every association the reference has for a class is one we write too.
        for key in their_shapes
            .keys()
            .filter(|k| k.starts_with("Associations."))
        {
            assert!(my_shapes.contains_key(key), "{class}: {key} is not written");
        }
    }
    // Every association value of every class is a list of IDs.
    for (class, entities) in ours.as_object().expect("an object") {
        for entity in entities.as_array().expect("a list") {
            for (key, ids) in entity["Associations"].as_object().expect("an object") {
                let ids = ids.as_array().unwrap_or_else(|| panic!("{class}.{key}"));
                assert!(ids.iter().all(Value::is_string), "{class}.{key}");
            }
        }
    }
}

/// The keys cloud-info-api's loader (app/glue.py: SiteStore.create_site) reads, as
/// docs/formats-json.md lists them: `(class, key path)`, `[]` for a list it indexes or searches.
const CONSUMER_KEYS: [(&str, &str); 16] = [
    ("CloudComputingService", "CreationTime"),
    ("CloudComputingService", "Validity"),
    ("CloudComputingService", "OtherInfo.gocdb_id"),
    ("CloudComputingService", "Associations.AdminDomain[]"),
    ("CloudComputingEndpoint", "URL"),
    ("Share", "ID"),
    ("Share", "Name"),
    ("Share", "ProjectID"),
    ("MappingPolicy", "Associations.Share[]"),
    ("MappingPolicy", "Associations.PolicyUserDomain[]"),
    ("CloudComputingImage", "ID"),
    ("CloudComputingImage", "Name"),
    ("CloudComputingImage", "Associations.Share[]"),
    ("CloudComputingInstanceType", "Name"),
    ("CloudComputingInstanceType", "Associations.Share[]"),
    ("CloudComputingVirtualAccelerator", "ID"),
];

#[test]
fn every_key_cloud_info_api_reads_is_there_and_documented() {
    let doc = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../docs/formats-json.md"
    ))
    .expect("docs/formats-json.md");
    let ours = sample_document();
    for (class, path) in CONSUMER_KEYS {
        assert!(
            doc.contains(&format!("| {class} | `{path}` |")),
            "docs/formats-json.md does not list {class} `{path}`"
        );
        let entities = ours[class].as_array().expect("a list");
        assert!(!entities.is_empty(), "no {class} in the sample");
        for (index, entity) in entities.iter().enumerate() {
            let mut value = entity;
            for part in path.trim_end_matches("[]").split('.') {
                value = &value[part];
            }
            let ok = if path.ends_with("[]") {
                value.as_array().is_some_and(|ids| {
                    !ids.is_empty()
                        && ids
                            .iter()
                            .all(|id| id.as_str().is_some_and(|s| !s.is_empty()))
                })
            } else {
                !value.is_null()
            };
            assert!(ok, "{class}[{index}].{path} is {value}");
        }
    }
    // A policy names its VO whole: the first element is the VO, not its first letter.
    assert_eq!(
        ours["MappingPolicy"][0]["Associations"]["PolicyUserDomain"][0],
        "atlas"
    );
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

    // Two VOs where cloud-info-api reads one, or a bare string that it would read letter by
    // letter.
    for domains in [json!(["atlas", "cms"]), json!("atlas")] {
        let mut document = sample_document();
        document["MappingPolicy"][0]["Associations"]["PolicyUserDomain"] = domains;
        let found = violations(&document);
        assert!(
            found
                .iter()
                .any(|v| v.contains("/MappingPolicy/0/Associations/PolicyUserDomain")),
            "{found:?}"
        );
    }
    let mut document = sample_document();
    document["Share"][0]
        .as_object_mut()
        .unwrap()
        .remove("ProjectID");
    let found = violations(&document);
    assert!(found.iter().any(|v| v.starts_with("/Share/0")), "{found:?}");

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
