//! Reads a GLUE 2.1 JSON document, as [`crate::render::json`] writes it, back into the entity list
//! every renderer starts from. The federation registry stores what sites push and answers queries
//! from these entities, so a document from another producer is held to the same rules: known classes
//! and attributes only, unique IDs, every entity reachable from its parent.
//!
//! The document groups entities by class; the entity list is in tree order. The order is rebuilt
//! from the associations (an entity's first association is its parent, as [`super::entity`]
//! builds them), with one limit: the document does not say whether a batch service came before a
//! cloud service, so batch services come first.
//!
//! Each entity also carries its own `CreationTime` and `Validity` ([`Stamp`]): they decide freshness.

use crate::excerpt::{excerpt, shorten_quotes};
use std::borrow::Cow;
use std::collections::HashMap;

use chrono::{DateTime, Datelike, NaiveDateTime, Utc};
use serde_json::{Map, Value as Json};

use super::entity::{Class, Entity, Value};
use crate::gpu::GpuCount;

/// When an entity was made and for how long it holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Stamp {
    pub creation_time: DateTime<Utc>,
    pub validity_s: u64,
}

impl Stamp {
    /// When the entity stops being fresh.
    pub fn expires(&self) -> DateTime<Utc> {
        let seconds = i64::try_from(self.validity_s).unwrap_or(i64::MAX);
        self.creation_time
            .checked_add_signed(
                chrono::TimeDelta::try_seconds(seconds).unwrap_or(chrono::TimeDelta::MAX),
            )
            .unwrap_or(DateTime::<Utc>::MAX_UTC)
    }

    pub fn is_fresh_at(&self, now: DateTime<Utc>) -> bool {
        now <= self.expires()
    }
}

/// A parsed document: the entities in tree order and, at the same positions, their stamps.
#[derive(Debug, Clone, PartialEq)]
pub struct ParsedDocument {
    pub entities: Vec<Entity<'static>>,
    pub stamps: Vec<Stamp>,
}

impl ParsedDocument {
    /// The site's name: the ID of the (one) AdminDomain.
    pub fn site(&self) -> &str {
        self.entities
            .first()
            .filter(|entity| entity.class == Class::AdminDomain)
            .map_or("", |entity| entity.id.as_str())
    }
}

/// Why a document was refused. Messages name the class, the entity's position in its list and the
/// field.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum FromJsonError {
    #[error("the document is not JSON: {0}")]
    Syntax(String),
    #[error("the document must be a JSON object keyed by GLUE2 class")]
    NotAnObject,
    #[error("unknown class {0:?}")]
    UnknownClass(String),
    #[error("{class} must be a list of objects")]
    NotAList { class: &'static str },
    #[error("{class}[{index}] is not an object")]
    NotAnEntity { class: &'static str, index: usize },
    #[error("{class}[{index}].{field}: {problem}")]
    Field {
        class: &'static str,
        index: usize,
        field: String,
        problem: String,
    },
    #[error("{class}[{index}] has an unknown attribute {field:?}")]
    UnknownAttribute {
        class: &'static str,
        index: usize,
        /// An excerpt of the attribute's name (a pushed document may make it megabytes long).
        field: String,
    },
    #[error("ID {id} appears twice ({first} and {second})")]
    DuplicateId {
        /// An excerpt of the ID.
        id: String,
        first: String,
        second: String,
    },
    #[error("the document must have exactly one AdminDomain, it has {0}")]
    AdminDomains(usize),
    #[error("{class}[{index}] ({id}) hangs under nothing in the document: {reason}")]
    Unplaced {
        class: &'static str,
        index: usize,
        /// An excerpt of the ID.
        id: String,
        /// Quotes excerpts of the IDs it names.
        reason: String,
    },
}

/// How an attribute's value is read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Text,
    Int,
    Count,
    Float,
    List,
}

/// Every attribute name accelfed writes, and how its value is read. A name means the same in every
/// class that has it.
const ATTRIBUTES: &[(&str, Kind)] = &[
    ("Name", Kind::Text),
    ("Description", Kind::Text),
    ("WWW", Kind::Text),
    ("Place", Kind::Text),
    ("Country", Kind::Text),
    ("Latitude", Kind::Float),
    ("Longitude", Kind::Float),
    ("Detail", Kind::Text),
    ("Type", Kind::Text),
    ("URL", Kind::Text),
    ("Capability", Kind::List),
    ("Technology", Kind::Text),
    ("InterfaceName", Kind::Text),
    ("InterfaceVersion", Kind::Text),
    ("ImplementationName", Kind::Text),
    ("ImplementationVersion", Kind::Text),
    ("QualityLevel", Kind::Text),
    ("HealthState", Kind::Text),
    ("HealthStateInfo", Kind::Text),
    ("ServingState", Kind::Text),
    ("Scheme", Kind::Text),
    ("Rule", Kind::List),
    ("Vendor", Kind::Text),
    ("Model", Kind::Text),
    ("Memory", Kind::Int),
    ("ComputeCapability", Kind::Text),
    ("ClockSpeed", Kind::Int),
    ("VirtualizationType", Kind::Text),
    ("MIGProfile", Kind::Text),
    ("DriverVersion", Kind::Text),
    ("CUDAVersion", Kind::Text),
    ("TotalAcceleratorSlots", Kind::Count),
    ("UsedAcceleratorSlots", Kind::Count),
    ("FreeAcceleratorSlots", Kind::Count),
    ("TotalAccelerators", Kind::Count),
    ("UsedAccelerators", Kind::Count),
    ("FreeAccelerators", Kind::Count),
    ("MaxAcceleratorSlotsPerJob", Kind::Count),
    ("MaxAccelerators", Kind::Count),
    ("TotalPhysicalAccelerators", Kind::Count),
    ("UsedPhysicalAccelerators", Kind::Count),
    ("FreePhysicalAccelerators", Kind::Count),
    ("SlotShare", Kind::Text),
    ("ProductName", Kind::Text),
    ("ProductVersion", Kind::Text),
    ("TotalLogicalCPUs", Kind::Int),
    ("MappingQueue", Kind::Text),
    ("MaxWallTime", Kind::Int),
    ("MaxSlotsPerJob", Kind::Int),
    ("FreeSlots", Kind::Int),
    ("UsedSlots", Kind::Int),
    ("Platform", Kind::Text),
    ("TotalInstances", Kind::Int),
    ("UsedInstances", Kind::Int),
    ("UnavailableInstances", Kind::Int),
    ("PhysicalCPUs", Kind::Int),
    ("LogicalCPUs", Kind::Int),
    ("MainMemorySize", Kind::Int),
    ("OSFamily", Kind::Text),
    ("OSName", Kind::Text),
    ("OSVersion", Kind::Text),
    ("PhysicalAccelerators", Kind::Count),
    ("LogicalAccelerators", Kind::Count),
    ("HypervisorName", Kind::Text),
    ("TotalCPUs", Kind::Int),
    ("TotalRAM", Kind::Int),
    ("ProjectID", Kind::Text),
    ("MaxVM", Kind::Int),
    ("RunningVM", Kind::Int),
    ("CPU", Kind::Int),
    ("RAM", Kind::Int),
    ("Disk", Kind::Int),
    ("Number", Kind::Count),
    ("MarketplaceURL", Kind::Text),
    ("OSPlatform", Kind::Text),
    ("AccessInfo", Kind::Text),
];

/// Attribute names earlier accelfed versions wrote, and the name they mean: documents pushed before
/// the spelling followed cloud-info-provider's stay readable.
const FORMER_NAMES: &[(&str, &str)] = &[("MarketPlaceURL", "MarketplaceURL")];

/// The keys every entity has besides its attributes.
const ENVELOPE: [&str; 5] = [
    "ID",
    "CreationTime",
    "Validity",
    "OtherInfo",
    "Associations",
];

/// The class listed under a document key (clouds' shares are keyed `Share`).
fn class_of_key(key: &str) -> Option<Class> {
    if key == "Share" {
        return Some(Class::CloudComputingShare);
    }
    Class::ALL.into_iter().find(|class| class.name() == key)
}

/// The class an association key names when its target is not in the document (a VO, or a
/// reference the checks below refuse). Earlier accelfed versions wrote an instance type's
/// accelerator under the long key; it is still read.
fn class_of_association(key: &str) -> Option<Class> {
    match key {
        "PolicyUserDomain" => Some(Class::UserDomain),
        "CloudComputingInstanceTypeCloudComputingVirtualAccelerator" => {
            Some(Class::CloudComputingVirtualAccelerator)
        }
        other => class_of_key(other),
    }
}

/// Parses a document from its bytes.
pub fn parse(bytes: &[u8]) -> Result<ParsedDocument, FromJsonError> {
    let json: Json = serde_json::from_slice(bytes)
        .map_err(|error| FromJsonError::Syntax(shorten_quotes(&error.to_string())))?;
    from_value(&json)
}

/// One entity as read, before it is placed in the tree.
struct Read {
    entity: Entity<'static>,
    stamp: Stamp,
    /// Position in its class's list, for messages.
    index: usize,
    /// Association keys as written, to resolve the target classes once all IDs are known.
    raw_associations: Vec<(String, String)>,
}

/// Parses a document already read as JSON.
pub fn from_value(json: &Json) -> Result<ParsedDocument, FromJsonError> {
    let document = json.as_object().ok_or(FromJsonError::NotAnObject)?;
    let mut read: Vec<Read> = Vec::new();
    for (key, list) in document {
        let class = class_of_key(key)
            .ok_or_else(|| FromJsonError::UnknownClass(crate::excerpt::excerpt(key)))?;
        let items: Vec<&Json> = match list {
            Json::Array(items) => items.iter().collect(),
            // Earlier accelfed versions wrote a site's one cloud manager as an object.
            Json::Object(_) if class == Class::CloudComputingManager => vec![list],
            _ => {
                return Err(FromJsonError::NotAList {
                    class: class.name(),
                });
            }
        };
        for (index, item) in items.into_iter().enumerate() {
            read.push(entity(class, index, item)?);
        }
    }
    let mut by_id: HashMap<String, usize> = HashMap::with_capacity(read.len());
    for (position, item) in read.iter().enumerate() {
        if let Some(first) = by_id.insert(item.entity.id.clone(), position) {
            let first = &read[first];
            return Err(FromJsonError::DuplicateId {
                id: excerpt(&item.entity.id),
                first: format!("{}[{}]", first.entity.class.name(), first.index),
                second: format!("{}[{}]", item.entity.class.name(), item.index),
            });
        }
    }
    let classes: Vec<Class> = read.iter().map(|item| item.entity.class).collect();
    for item in &mut read {
        let raw = std::mem::take(&mut item.raw_associations);
        for (key, target) in raw {
            let class = match by_id.get(&target) {
                Some(&position) => classes[position],
                None => class_of_association(&key).ok_or_else(|| FromJsonError::Field {
                    class: item.entity.class.name(),
                    index: item.index,
                    field: format!("Associations.{}", crate::excerpt::excerpt(&key)),
                    problem: "names no GLUE2 class".to_owned(),
                })?,
            };
            // The renderer links a cloud's shares, images and instance types to its endpoints,
            // as cloud-info-provider does; the tree already says that, so the link is not kept.
            if class == Class::CloudComputingEndpoint
                && matches!(
                    item.entity.class,
                    Class::CloudComputingShare
                        | Class::CloudComputingImage
                        | Class::CloudComputingInstanceType
                )
            {
                continue;
            }
            item.entity.associations.push((class, target));
        }
    }
    order(read, &by_id)
}

fn entity(class: Class, index: usize, item: &Json) -> Result<Read, FromJsonError> {
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

/// A UTC time as accelfed writes it (`2026-11-01T12:00:00Z`), or any RFC 3339 time, such as the
/// `2026-11-22T10:02:01.032130+00:00` cloud-info-provider writes.
fn time(text: &str) -> Option<DateTime<Utc>> {
    NaiveDateTime::parse_from_str(text, "%Y-%m-%dT%H:%M:%SZ")
        .ok()
        .map(|naive| naive.and_utc())
        .or_else(|| {
            DateTime::parse_from_rfc3339(text)
                .ok()
                .map(|time| time.with_timezone(&Utc))
        })
}

fn associations(keys: &Map<String, Json>) -> Result<Vec<(String, String)>, (String, &'static str)> {
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

fn attribute(kind: Kind, value: &Json) -> Result<Value<'static>, &'static str> {
    match kind {
        Kind::Text => match value {
            Json::String(text) if !text.is_empty() => Ok(Value::Text(Cow::Owned(text.clone()))),
            _ => Err("must be a non-empty string"),
        },
        Kind::Int => value
            .as_u64()
            .map(Value::Int)
            .ok_or("must be a non-negative whole number"),
        Kind::Count => value
            .as_f64()
            .and_then(|number| GpuCount::new(number).ok())
            .map(Value::Count)
            .ok_or("must be a non-negative number of accelerators"),
        Kind::Float => value
            .as_f64()
            .filter(|number| number.is_finite())
            .map(Value::Float)
            .ok_or("must be a number"),
        Kind::List => match value {
            Json::Array(items) => items
                .iter()
                .map(|item| item.as_str().map(str::to_owned))
                .collect::<Option<Vec<_>>>()
                .map(Value::List)
                .ok_or("must be a list of strings"),
            _ => Err("must be a list of strings"),
        },
    }
}

/// Puts the entities in tree order, as [`crate::glue::SiteSnapshot::entities`] lists them, and
/// sets each one's parent.
fn order(read: Vec<Read>, by_id: &HashMap<String, usize>) -> Result<ParsedDocument, FromJsonError> {
    let domains = read
        .iter()
        .filter(|item| item.entity.class == Class::AdminDomain)
        .count();
    if domains != 1 {
        return Err(FromJsonError::AdminDomains(domains));
    }
    // An entity's parent is the target of its first association; sites and services have none.
    let mut children: Vec<Vec<usize>> = vec![Vec::new(); read.len()];
    let mut roots = Vec::new();
    for (position, item) in read.iter().enumerate() {
        let class = item.entity.class;
        if matches!(
            class,
            Class::AdminDomain | Class::ComputingService | Class::CloudComputingService
        ) {
            roots.push(position);
            continue;
        }
        let unplaced = |reason: String| FromJsonError::Unplaced {
            class: class.name(),
            index: item.index,
            id: excerpt(&item.entity.id),
            reason,
        };
        let (target_class, target) = item
            .entity
            .associations
            .first()
            .ok_or_else(|| unplaced("it has no associations".to_owned()))?;
        let parent = by_id.get(target).copied().ok_or_else(|| {
            unplaced(format!(
                "its first association, {} {}, is not in the document",
                target_class.name(),
                excerpt(target)
            ))
        })?;
        children[parent].push(position);
    }
    // Roots: the site, then batch services, then clouds, each in document order.
    roots.sort_by_key(|&position| read[position].entity.class);

    let mut placement: Vec<usize> = Vec::with_capacity(read.len());
    for root in roots {
        place_root(root, &read, &children, &mut placement);
    }
    if placement.len() != read.len() {
        let mut placed = vec![false; read.len()];
        for &position in &placement {
            placed[position] = true;
        }
        if let Some(position) = placed.iter().position(|placed| !placed) {
            let item = &read[position];
            let (parent_class, parent) = &item.entity.associations[0];
            return Err(FromJsonError::Unplaced {
                class: item.entity.class.name(),
                index: item.index,
                id: excerpt(&item.entity.id),
                reason: format!(
                    "a {} cannot hang under {} {}",
                    item.entity.class.name(),
                    parent_class.name(),
                    excerpt(parent)
                ),
            });
        }
    }

    let mut new_position = vec![0; read.len()];
    for (new, &old) in placement.iter().enumerate() {
        new_position[old] = new;
    }
    let mut slots: Vec<Option<Read>> = read.into_iter().map(Some).collect();
    let mut entities = Vec::with_capacity(slots.len());
    let mut stamps = Vec::with_capacity(slots.len());
    for &old in &placement {
        let Some(mut item) = slots[old].take() else {
            continue;
        };
        item.entity.parent = parent_of(&item.entity)
            .and_then(|target| by_id.get(target).map(|&parent| new_position[parent]));
        entities.push(item.entity);
        stamps.push(item.stamp);
    }
    Ok(ParsedDocument { entities, stamps })
}

fn parent_of<'e>(entity: &'e Entity) -> Option<&'e str> {
    match entity.class {
        Class::AdminDomain | Class::ComputingService | Class::CloudComputingService => None,
        _ => entity.associations.first().map(|(_, id)| id.as_str()),
    }
}

/// Appends a root and what hangs under it, in the order the builder emits them.
fn place_root(root: usize, read: &[Read], children: &[Vec<usize>], out: &mut Vec<usize>) {
    let of = |parent: usize, classes: &[Class]| -> Vec<usize> {
        children[parent]
            .iter()
            .copied()
            .filter(|&child| classes.contains(&read[child].entity.class))
            .collect()
    };
    out.push(root);
    match read[root].entity.class {
        Class::AdminDomain => {
            for child in of(root, &[Class::Location]) {
                out.push(child);
            }
            for child in of(root, &[Class::Contact]) {
                out.push(child);
            }
        }
        _ => {
            let endpoints = of(
                root,
                &[Class::ComputingEndpoint, Class::CloudComputingEndpoint],
            );
            for endpoint in endpoints {
                out.push(endpoint);
                out.extend(of(endpoint, &[Class::AccessPolicy]));
            }
            let managers = of(
                root,
                &[Class::ComputingManager, Class::CloudComputingManager],
            );
            for &manager in &managers {
                out.push(manager);
                out.extend(of(
                    manager,
                    &[
                        Class::ComputingManagerAccelerator,
                        Class::CloudComputingManagerAccelerator,
                    ],
                ));
                for environment in of(manager, &[Class::ExecutionEnvironment]) {
                    out.push(environment);
                    out.extend(of(environment, &[Class::AcceleratorEnvironment]));
                }
            }
            for share in of(root, &[Class::ComputingShare, Class::CloudComputingShare]) {
                out.push(share);
                out.extend(of(share, &[Class::MappingPolicy]));
                out.extend(of(
                    share,
                    &[
                        Class::ComputingShareAccelerator,
                        Class::CloudComputingShareAccelerator,
                    ],
                ));
            }
            // A cloud lists its flavors and images after its shares.
            for &manager in &managers {
                for flavor in of(manager, &[Class::CloudComputingInstanceType]) {
                    out.push(flavor);
                    out.extend(of(flavor, &[Class::CloudComputingVirtualAccelerator]));
                }
                out.extend(of(manager, &[Class::CloudComputingImage]));
            }
        }
    }
}

#[cfg(test)]
mod tests {
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
                .all(|stamp| stamp.validity_s == 3600
                    && stamp.creation_time == snapshot.creation_time)
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
}
