use super::*;
use crate::glue::sample;
use crate::render::json;

fn owned(entities: Vec<Entity<'_>>) -> Vec<Entity<'static>> {
    entities
        .into_iter()
        .map(|entity| Entity {
            class: entity.class,
            id: entity.id,
            parent: entity.parent,
            attributes: entity
                .attributes
                .into_iter()
                .map(|(name, value)| {
                    let value = match value {
                        Value::Text(text) => Value::Text(Cow::Owned(text.into_owned())),
                        Value::Int(v) => Value::Int(v),
                        Value::Count(v) => Value::Count(v),
                        Value::Float(v) => Value::Float(v),
                        Value::List(v) => Value::List(v),
                        Value::Time(v) => Value::Time(v),
                    };
                    (name, value)
                })
                .collect(),
            other_info: entity.other_info,
            associations: entity.associations,
        })
        .collect()
}

#[test]
fn the_sample_round_trips() {
    let snapshot = sample::snapshot("SAMPLE-SITE");
    let parsed = parse(&json::render(&snapshot)).unwrap();
    assert_eq!(parsed.entities, owned(snapshot.entities()));
    assert_eq!(parsed.site(), "SAMPLE-SITE");
    assert_eq!(parsed.stamps.len(), parsed.entities.len());
    assert!(
        parsed
            .stamps
            .iter()
            .all(|stamp| stamp.validity_s == 3600 && stamp.creation_time == snapshot.creation_time)
    );
}

fn sample_json() -> Json {
    json::document(&sample::snapshot("S"))
}

fn error_of(json: &Json) -> String {
    from_value(json).unwrap_err().to_string()
}

#[test]
fn errors_name_class_index_and_field() {
    let mut json = sample_json();
    json["ExecutionEnvironment"][1]["TotalInstances"] = Json::from("many");
    assert_eq!(
        error_of(&json),
        "ExecutionEnvironment[1].TotalInstances: must be a non-negative whole number"
    );

    let mut json = sample_json();
    json["AcceleratorEnvironment"][0]["FreeAcceleratorSlots"] = Json::from(-1);
    assert!(error_of(&json).starts_with("AcceleratorEnvironment[0].FreeAcceleratorSlots"));

    let mut json = sample_json();
    json["ComputingShare"][0]["Colour"] = Json::from("blue");
    assert_eq!(
        error_of(&json),
        "ComputingShare[0] has an unknown attribute \"Colour\""
    );

    let mut json = sample_json();
    json["Contact"][0]["CreationTime"] = Json::from("yesterday");
    assert!(error_of(&json).starts_with("Contact[0].CreationTime"));

    let mut json = sample_json();
    json["Contact"][0]["CreationTime"] = Json::from("1970-01-01T00:00:00Z");
    let epoch = error_of(&json);
    assert!(
        epoch.starts_with("Contact[0].CreationTime: is before 2000"),
        "{epoch}"
    );
}

#[test]
fn unknown_classes_and_duplicate_ids_are_refused() {
    let mut json = sample_json();
    json["Spaceship"] = Json::Array(vec![]);
    assert_eq!(error_of(&json), "unknown class \"Spaceship\"");

    let mut json = sample_json();
    let first = json["ComputingShare"][0]["ID"].clone();
    json["Location"][0]["ID"] = first.clone();
    let message = error_of(&json);
    assert!(message.contains("appears twice"), "{message}");
    assert!(message.contains(first.as_str().unwrap()), "{message}");
}

#[test]
fn an_entity_whose_parent_is_missing_is_refused() {
    let mut json = sample_json();
    json["AcceleratorEnvironment"][0]["Associations"]["ExecutionEnvironment"] =
        Json::Array(vec![Json::from("urn:nowhere")]);
    let message = error_of(&json);
    assert!(
        message.starts_with("AcceleratorEnvironment[0]") && message.contains("urn:nowhere"),
        "{message}"
    );
}

/// A pushed document may carry megabyte IDs and keys: the refusal quotes their first
/// characters only.
#[test]
fn huge_ids_and_keys_are_quoted_as_excerpts() {
    let huge = format!("urn:{}", "x".repeat(100_000));
    let shown = format!("urn:{}...", "x".repeat(36));
    let mut duplicate = sample_json();
    duplicate["Location"][0]["ID"] = Json::from(huge.clone());
    duplicate["Contact"][0]["ID"] = Json::from(huge.clone());
    let mut attribute = sample_json();
    attribute["ComputingShare"][0][huge.as_str()] = Json::from("blue");
    let mut unplaced = sample_json();
    unplaced["AcceleratorEnvironment"][0]["ID"] = Json::from(huge.clone());
    unplaced["AcceleratorEnvironment"][0]["Associations"]["ExecutionEnvironment"] =
        Json::Array(vec![Json::from(format!("{huge}y"))]);
    for (json, expected) in [
        (duplicate, format!("ID {shown} appears twice")),
        (attribute, format!("has an unknown attribute \"{shown}\"")),
        (
            unplaced,
            format!(
                "AcceleratorEnvironment[0] ({shown}) hangs under nothing in the document: its \
                 first association, ExecutionEnvironment {shown}, is not in the document"
            ),
        ),
    ] {
        let message = error_of(&json);
        assert!(message.len() < 300, "{} bytes", message.len());
        assert!(message.contains(&expected), "{message}");
    }
}

/// What accelfed wrote before its layout followed cloud-info-provider's is still read, to the
/// same entities.
#[test]
fn the_former_layout_is_still_read() {
    let mut snapshot = sample::snapshot("S");
    for service in &mut snapshot.services {
        if let crate::glue::Service::Cloud(cloud) = service {
            cloud.images[0].marketplace_url =
                Some(crate::names::Text::new("https://appdb.egi.eu/x").expect("valid"));
        }
    }
    let current = json::document(&snapshot);
    let mut former = current.clone();
    for policy in former["MappingPolicy"].as_array_mut().expect("a list") {
        for key in ["Share", "PolicyUserDomain"] {
            let first = policy["Associations"][key][0].clone();
            policy["Associations"][key] = first;
        }
    }
    let manager = former["CloudComputingManager"][0].clone();
    former["CloudComputingManager"] = manager;
    let flavor = &mut former["CloudComputingInstanceType"][0];
    let links = flavor["Associations"]
        .as_object_mut()
        .expect("an object")
        .remove("CloudComputingVirtualAccelerator")
        .expect("the flavor's accelerator");
    flavor["Associations"]["CloudComputingInstanceTypeCloudComputingVirtualAccelerator"] =
        links[0].clone();
    let image = &mut former["CloudComputingImage"][0];
    let renamed: Map<String, Json> = image
        .as_object()
        .expect("an object")
        .iter()
        .map(|(key, value)| match key.as_str() {
            "MarketplaceURL" => ("MarketPlaceURL".to_owned(), value.clone()),
            _ => (key.clone(), value.clone()),
        })
        .collect();
    assert!(renamed.contains_key("MarketPlaceURL"));
    *image = Json::Object(renamed);
    let accelerator = &mut former["CloudComputingVirtualAccelerator"][0];
    let capability = accelerator["ComputeCapability"][0].clone();
    accelerator["ComputeCapability"] = capability;
    former["Contact"][0]["CreationTime"] = Json::from("2026-11-01T12:00:00.000000+00:00");

    let read = from_value(&former).unwrap();
    let mut expected = from_value(&current).unwrap();
    expected.stamps[2].creation_time = time("2026-11-01T12:00:00Z").unwrap();
    assert_eq!(read, expected);
    assert_eq!(read.entities, owned(snapshot.entities()));
}

#[test]
fn not_json_is_a_syntax_error() {
    assert!(matches!(
        parse(b"{\"AdminDomain\": ["),
        Err(FromJsonError::Syntax(_))
    ));
    assert_eq!(from_value(&Json::from(3)), Err(FromJsonError::NotAnObject));
}

#[test]
fn freshness_is_creation_time_plus_validity() {
    let stamp = Stamp {
        creation_time: time("2026-11-01T12:00:00Z").unwrap(),
        validity_s: 60,
    };
    assert!(stamp.is_fresh_at(time("2026-11-01T12:01:00Z").unwrap()));
    assert!(!stamp.is_fresh_at(time("2026-11-01T12:01:01Z").unwrap()));
}
