//! GLUE 2.1 JSON in the class-keyed layout of EGI's cloud-info-provider 1.x, the layout EGI's
//! cloud-info-api reads:
//!
//! ```text
//! {"AdminDomain": [...], "CloudComputingService": [...], "CloudComputingManager": {...},
//!  "Share": [...], "MappingPolicy": [...], ...}
//! ```
//!
//! Each entity is an object with `ID`, its attributes, `CreationTime`, `Validity`, `OtherInfo` (an
//! object) and `Associations` (lists of IDs keyed by class name). Where cloud-info-api reads a single
//! value, the layout gives it one, and those are the only exceptions to the rules above:
//! * `CloudComputingManager` is an object when the site has one cloud (a list otherwise);
//! * CloudComputingShare is keyed `Share`, as an entity list and as an association;
//! * a MappingPolicy (one per share and VO) has `Associations.Share` and
//!   `Associations.PolicyUserDomain` as strings (the share ID and the VO name);
//! * an instance type names its accelerator in
//!   `Associations.CloudComputingInstanceTypeCloudComputingVirtualAccelerator`, a string.
//!
//! Every class key is present, empty lists included, so consumers can index without checks. Keys
//! are in a fixed order and entities in tree order: the output is deterministic.

use serde_json::{Map, Value as Json};

use crate::glue::SiteSnapshot;
use crate::glue::entity::{Class, Entity, Value};

/// The key a class is listed under, and the key it has as an association target.
fn key(class: Class) -> &'static str {
    match class {
        Class::CloudComputingShare => "Share",
        Class::UserDomain => "PolicyUserDomain",
        other => other.name(),
    }
}

/// Renders the snapshot as pretty-printed GLUE 2.1 JSON.
pub fn render(snapshot: &SiteSnapshot) -> Vec<u8> {
    let mut out = serde_json::to_vec_pretty(&document(snapshot)).unwrap_or_default();
    out.push(b'\n');
    out
}

/// The document as a JSON value.
pub fn document(snapshot: &SiteSnapshot) -> Json {
    let entities = snapshot.entities();
    let creation_time = Json::String(
        snapshot
            .creation_time
            .format("%Y-%m-%dT%H:%M:%SZ")
            .to_string(),
    );
    let validity = Json::from(snapshot.validity_s);

    let mut by_class: Vec<Vec<Json>> = vec![Vec::new(); Class::ALL.len()];
    for entity in &entities {
        let slot = Class::ALL
            .iter()
            .position(|class| *class == entity.class)
            .unwrap_or(0);
        by_class[slot].push(object(entity, &creation_time, &validity));
    }

    let mut document = Map::new();
    for (class, mut objects) in Class::ALL.into_iter().zip(by_class) {
        let value = if class == Class::CloudComputingManager && objects.len() == 1 {
            objects.pop().unwrap_or_default()
        } else {
            Json::Array(objects)
        };
        document.insert(key(class).to_owned(), value);
    }
    Json::Object(document)
}

fn object(entity: &Entity, creation_time: &Json, validity: &Json) -> Json {
    let mut object = Map::new();
    object.insert("ID".into(), Json::String(entity.id.clone()));
    for (name, value) in &entity.attributes {
        object.insert((*name).into(), json_value(value));
    }
    object.insert("CreationTime".into(), creation_time.clone());
    object.insert("Validity".into(), validity.clone());
    let other_info = entity
        .other_info
        .iter()
        .map(|(k, v)| (k.clone(), Json::String(v.clone())))
        .collect();
    object.insert("OtherInfo".into(), Json::Object(other_info));
    object.insert("Associations".into(), associations(entity));
    Json::Object(object)
}

fn associations(entity: &Entity) -> Json {
    let mut map = Map::new();
    for (class, target) in &entity.associations {
        let scalar = matches!(
            (entity.class, class),
            (Class::MappingPolicy, _)
                | (
                    Class::CloudComputingInstanceType,
                    Class::CloudComputingVirtualAccelerator
                )
        );
        let name = match (entity.class, class) {
            (Class::MappingPolicy, Class::ComputingShare) => "Share",
            (Class::CloudComputingInstanceType, Class::CloudComputingVirtualAccelerator) => {
                "CloudComputingInstanceTypeCloudComputingVirtualAccelerator"
            }
            _ => key(*class),
        };
        if scalar {
            map.insert(name.to_owned(), Json::String(target.clone()));
        } else if let Some(Json::Array(list)) = map.get_mut(name) {
            list.push(Json::String(target.clone()));
        } else {
            map.insert(
                name.to_owned(),
                Json::Array(vec![Json::String(target.clone())]),
            );
        }
    }
    Json::Object(map)
}

fn json_value(value: &Value) -> Json {
    match value {
        Value::Text(text) => Json::String(text.clone()),
        Value::Int(int) => Json::from(*int),
        Value::Count(count) => serde_json::to_value(count).unwrap_or(Json::Null),
        Value::Float(float) => Json::from(*float),
        Value::List(list) => Json::Array(list.iter().cloned().map(Json::String).collect()),
        Value::Time(time) => Json::String(time.format("%Y-%m-%dT%H:%M:%SZ").to_string()),
    }
}
