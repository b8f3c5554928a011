//! One entity of the document, read from its JSON object.

use super::*;

pub(super) fn entity(class: Class, index: usize, item: &Json) -> Result<Read, FromJsonError> {
    let object = item.as_object().ok_or(FromJsonError::NotAnEntity {
        class: class.name(),
        index,
    })?;
    let field = |field: &str, problem: &str| FromJsonError::Field {
        class: class.name(),
        index,
        field: field.to_owned(),
        problem: problem.to_owned(),
    };
    let id = match object.get("ID") {
        Some(Json::String(id)) if !id.is_empty() => id.clone(),
        Some(_) => return Err(field("ID", "must be a non-empty string")),
        None => return Err(field("ID", "is missing")),
    };
    let creation_time = match object.get("CreationTime") {
        Some(Json::String(text)) => time(text).ok_or_else(|| {
            field(
                "CreationTime",
                "must be an RFC 3339 UTC time (2026-11-01T12:00:00Z)",
            )
        })?,
        _ => return Err(field("CreationTime", "must be an RFC 3339 UTC time")),
    };
    // A document of the federation cannot predate it: a time before its epoch is a clock or a
    // generator gone wrong, and would sort and expire as if from another era.
    if creation_time.year() < crate::usage::Month::MIN_YEAR {
        return Err(field(
            "CreationTime",
            "is before 2000, the federation's epoch (check the clock of the host that made it)",
        ));
    }
    let validity_s = object
        .get("Validity")
        .and_then(Json::as_u64)
        .ok_or_else(|| field("Validity", "must be a non-negative whole number of seconds"))?;
    let other_info = match object.get("OtherInfo") {
        None => Vec::new(),
        Some(Json::Object(pairs)) => pairs
            .iter()
            .map(|(key, value)| match value {
                Json::String(value) => Ok((key.clone(), value.clone())),
                _ => Err(field(&format!("OtherInfo.{key}"), "must be a string")),
            })
            .collect::<Result<_, _>>()?,
        Some(_) => return Err(field("OtherInfo", "must be an object of strings")),
    };
    let raw_associations = match object.get("Associations") {
        None => Vec::new(),
        Some(Json::Object(keys)) => associations(keys)
            .map_err(|(key, problem)| field(&format!("Associations.{key}"), problem))?,
        Some(_) => return Err(field("Associations", "must be an object")),
    };
    let mut attributes = Vec::new();
    for (key, value) in object {
        if ENVELOPE.contains(&key.as_str()) {
            continue;
        }
        let current = FORMER_NAMES
            .iter()
            .find(|(former, _)| former == key)
            .map_or(key.as_str(), |(_, current)| current);
        let Some(&(name, kind)) = ATTRIBUTES.iter().find(|(name, _)| *name == current) else {
            return Err(FromJsonError::UnknownAttribute {
                class: class.name(),
                index,
                field: excerpt(key),
            });
        };
        let value = match (kind, value) {
            // cloud-info-provider writes some single values as lists: `[]` when unknown.
            (Kind::Text, Json::Array(items)) if items.is_empty() => continue,
            (Kind::Text, Json::Array(items)) if items.len() == 1 => &items[0],
            _ => value,
        };
        let value = attribute(kind, value).map_err(|problem| field(name, problem))?;
        attributes.push((name, value));
    }
    Ok(Read {
        entity: Entity {
            class,
            id,
            parent: None,
            attributes,
            other_info,
            associations: Vec::new(),
        },
        stamp: Stamp {
            creation_time,
            validity_s,
        },
        index,
        raw_associations,
    })
}

pub(super) fn associations(
    keys: &Map<String, Json>,
) -> Result<Vec<(String, String)>, (String, &'static str)> {
    let mut out = Vec::new();
    for (key, targets) in keys {
        // A single string is what earlier accelfed versions wrote for a policy's share and VO.
        let problem = || (key.clone(), "must be a non-empty string or a list of them");
        match targets {
            Json::String(target) if !target.is_empty() => out.push((key.clone(), target.clone())),
            Json::Array(targets) => {
                for target in targets {
                    match target {
                        Json::String(target) if !target.is_empty() => {
                            out.push((key.clone(), target.clone()))
                        }
                        _ => return Err(problem()),
                    }
                }
            }
            _ => return Err(problem()),
        }
    }
    Ok(out)
}
