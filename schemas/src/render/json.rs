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

use serde::ser::{Serialize, SerializeMap, SerializeSeq, Serializer};
use serde_json::Value as Json;

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
///
/// The document is serialized straight from the entities into the output: building it as a
/// `serde_json::Value` first costs several allocations per attribute (a large site has a million).
pub fn render(snapshot: &SiteSnapshot) -> Vec<u8> {
    let entities = snapshot.entities();
    // A pretty-printed entity is about 800 bytes; room for all of them saves copying the buffer as
    // it grows.
    let mut out = Vec::with_capacity(entities.len() * 900);
    // Writing into a Vec cannot fail, and every value serializes.
    let _ = serde_json::to_writer_pretty(&mut out, &Document::new(snapshot, &entities));
    out.push(b'\n');
    out
}

/// The document as a JSON value.
pub fn document(snapshot: &SiteSnapshot) -> Json {
    let entities = snapshot.entities();
    serde_json::to_value(Document::new(snapshot, &entities)).unwrap_or_default()
}

/// The whole document: every class key, in [`Class::ALL`] order, with its entities in tree order.
struct Document<'a> {
    by_class: Vec<Vec<&'a Entity<'a>>>,
    stamp: Stamp,
}

/// What every entity carries besides its own data.
struct Stamp {
    creation_time: String,
    validity: u64,
}

impl<'a> Document<'a> {
    fn new(snapshot: &SiteSnapshot, entities: &'a [Entity]) -> Self {
        let mut by_class: Vec<Vec<&Entity<'a>>> = vec![Vec::new(); Class::ALL.len()];
        for entity in entities {
            if let Some(list) = by_class.get_mut(entity.class.index()) {
                list.push(entity);
            }
        }
        Self {
            by_class,
            stamp: Stamp {
                creation_time: snapshot
                    .creation_time
                    .format("%Y-%m-%dT%H:%M:%SZ")
                    .to_string(),
                validity: snapshot.validity_s,
            },
        }
    }
}

impl Document<'_> {
    fn object<'s>(&'s self, entity: &'s Entity<'s>) -> Object<'s> {
        Object {
            entity,
            stamp: &self.stamp,
        }
    }
}

impl Serialize for Document<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(Some(Class::ALL.len()))?;
        for (class, entities) in Class::ALL.into_iter().zip(&self.by_class) {
            match entities.as_slice() {
                [single] if class == Class::CloudComputingManager => {
                    map.serialize_entry(key(class), &self.object(single))?
                }
                _ => {
                    let objects = entities.iter().map(|entity| self.object(entity));
                    map.serialize_entry(key(class), &Seq(objects))?
                }
            }
        }
        map.end()
    }
}

/// One entity as a JSON object: `ID`, its attributes, `CreationTime`, `Validity`, `OtherInfo`,
/// `Associations`.
struct Object<'a> {
    entity: &'a Entity<'a>,
    stamp: &'a Stamp,
}

impl Serialize for Object<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let entity = self.entity;
        let mut map = serializer.serialize_map(None)?;
        map.serialize_entry("ID", &entity.id)?;
        for (name, value) in &entity.attributes {
            map.serialize_entry(name, &Attribute(value))?;
        }
        map.serialize_entry("CreationTime", &self.stamp.creation_time)?;
        map.serialize_entry("Validity", &self.stamp.validity)?;
        map.serialize_entry("OtherInfo", &OtherInfo(&entity.other_info))?;
        map.serialize_entry("Associations", &Associations(entity))?;
        map.end()
    }
}

/// `OtherInfo` as an object. A key given twice keeps its first place and its last value, as a JSON
/// object built key by key does.
struct OtherInfo<'a>(&'a [(String, String)]);

impl Serialize for OtherInfo<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let pairs = self.0;
        let mut map = serializer.serialize_map(None)?;
        for (index, (key, _)) in pairs.iter().enumerate() {
            if pairs[..index].iter().any(|(earlier, _)| earlier == key) {
                continue;
            }
            let last = pairs.iter().rev().find(|(k, _)| k == key).map(|(_, v)| v);
            map.serialize_entry(key, &last)?;
        }
        map.end()
    }
}

/// How an association is written: its key, and whether it is a single string rather than a list
/// (where cloud-info-api reads one value).
fn association_key(entity: Class, target: Class) -> (&'static str, bool) {
    match (entity, target) {
        (Class::MappingPolicy, Class::ComputingShare) => ("Share", true),
        (Class::MappingPolicy, other) => (key(other), true),
        (Class::CloudComputingInstanceType, Class::CloudComputingVirtualAccelerator) => (
            "CloudComputingInstanceTypeCloudComputingVirtualAccelerator",
            true,
        ),
        (_, other) => (key(other), false),
    }
}

/// `Associations`: the targets under each key in the order the keys first appear. A single-string
/// key holds its last target; a list key the targets after the last single one (what building the
/// object association by association gives when one key is both, which the layout never has).
struct Associations<'a>(&'a Entity<'a>);

impl Serialize for Associations<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let entity = self.0;
        let keyed = || {
            entity.associations.iter().map(|(class, target)| {
                let (name, single) = association_key(entity.class, *class);
                (name, single, target.as_str())
            })
        };
        let mut names: Vec<&str> = Vec::new();
        for (name, _, _) in keyed() {
            if !names.contains(&name) {
                names.push(name);
            }
        }
        let mut map = serializer.serialize_map(Some(names.len()))?;
        for name in names {
            let mine = || keyed().filter(move |(n, _, _)| *n == name);
            let last_single = mine()
                .enumerate()
                .filter(|(_, (_, single, _))| *single)
                .map(|(position, _)| position)
                .last();
            match (last_single, mine().next_back()) {
                (Some(_), Some((_, true, target))) => map.serialize_entry(name, target)?,
                _ => {
                    let after = last_single.map_or(0, |position| position + 1);
                    let list = mine().skip(after).map(|(_, _, target)| target);
                    map.serialize_entry(name, &Seq(list))?
                }
            }
        }
        map.end()
    }
}

/// An attribute value.
struct Attribute<'a>(&'a Value<'a>);

impl Serialize for Attribute<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self.0 {
            Value::Text(text) => serializer.serialize_str(text),
            Value::Int(int) => serializer.serialize_u64(*int),
            Value::Count(count) => count.serialize(serializer),
            Value::Float(float) => serializer.serialize_f64(*float),
            Value::List(list) => list.serialize(serializer),
            Value::Time(time) => serializer.collect_str(&time.format("%Y-%m-%dT%H:%M:%SZ")),
        }
    }
}

/// A JSON array of what an iterator yields, written as it is iterated.
struct Seq<I>(I);

impl<I> Serialize for Seq<I>
where
    I: Iterator + Clone,
    I::Item: Serialize,
{
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut seq = serializer.serialize_seq(None)?;
        for item in self.0.clone() {
            seq.serialize_element(&item)?;
        }
        seq.end()
    }
}
