//! GLUE 2.1 JSON in the class-keyed layout of EGI's cloud-info-provider 1.x, the layout EGI's
//! cloud-info-api reads:
//!
//! ```text
//! {"AdminDomain": [...], "CloudComputingService": [...], "CloudComputingManager": [...],
//!  "Share": [...], "MappingPolicy": [...], ...}
//! ```
//!
//! Each entity is an object with `ID`, its attributes, `CreationTime`, `Validity`, `OtherInfo` (an
//! object) and `Associations`. As in cloud-info-provider 1.2.0's own output, every class key holds a
//! list and every `Associations` value is a list of IDs keyed by the target's class name:
//! cloud-info-api tests membership with `in` and takes `[0]`, so a string there would be read one
//! character at a time (a VO "atlas" became "a"). The spellings are cloud-info-provider's:
//! * CloudComputingShare is keyed `Share`, as an entity list and as an association;
//! * a MappingPolicy's VO is the association `PolicyUserDomain`;
//! * an instance type names its accelerator under `CloudComputingVirtualAccelerator`;
//! * a cloud share, image and instance type name the endpoints of their cloud under
//!   `CloudComputingEndpoint`, as cloud-info-provider links them.
//!
//! Every class key is present, empty lists included, so consumers can index without checks. Keys
//! are in a fixed order and entities in tree order: the output is deterministic. docs/formats-json.md
//! lists the keys cloud-info-api reads.

use std::collections::HashMap;
use std::ops::Range;

use serde::ser::{Serialize, SerializeMap, SerializeSeq, Serializer};
use serde_json::Value as Json;

use super::parallel;

use crate::glue::SiteSnapshot;
use crate::glue::entity::{Class, Entity, Value};

mod pretty;

use pretty::*;

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
/// The bytes are those of `serde_json::to_writer_pretty` of [`Document`]; long class lists are cut
/// into pieces written on threads of their own ([`super::parallel`]).
pub fn render(snapshot: &SiteSnapshot) -> Vec<u8> {
    render_in(snapshot, None)
}

/// [`render`] with long lists cut into `parts` pieces (`None`: one per core, and only lists long
/// enough to gain from it).
fn render_in(snapshot: &SiteSnapshot, parts: Option<usize>) -> Vec<u8> {
    let entities = snapshot.entities();
    let document = Document::new(snapshot, &entities);
    // A pretty-printed entity is about 800 bytes; room for all of them saves copying the buffer as
    // it grows.
    let mut out = Vec::with_capacity(entities.len() * BYTES_PER_ENTITY);
    // The outer object as serde_json's pretty printer writes it: each key on a line of its own,
    // indented one level.
    out.push(b'{');
    for (position, (class, entities)) in Class::ALL.into_iter().zip(&document.by_class).enumerate()
    {
        out.extend_from_slice(if position == 0 { b"\n  " } else { b",\n  " });
        string(&mut out, key(class));
        out.extend_from_slice(b": ");
        match entities.as_slice() {
            [] => out.extend_from_slice(b"[]"),
            _ => {
                out.push(b'[');
                document.elements(&mut out, entities, parts);
                out.extend_from_slice(b"\n  ]");
            }
        }
    }
    out.extend_from_slice(b"\n}\n");
    out
}

/// Room for one pretty-printed entity.
const BYTES_PER_ENTITY: usize = 900;

/// The document as a JSON value.
pub fn document(snapshot: &SiteSnapshot) -> Json {
    let entities = snapshot.entities();
    serde_json::to_value(Document::new(snapshot, &entities)).unwrap_or_default()
}

/// The whole document: every class key, in [`Class::ALL`] order, with its entities in tree order.
struct Document<'a> {
    by_class: Vec<Vec<&'a Entity<'a>>>,
    /// The endpoints of the cloud each cloud share, image and instance type belongs to, by the
    /// entity's ID (see [`cloud_endpoints`]).
    endpoints: HashMap<&'a str, Vec<&'a str>>,
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
            endpoints: cloud_endpoints(entities),
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
        let endpoints = self
            .endpoints
            .get(entity.id.as_str())
            .map_or(&[][..], Vec::as_slice);
        Object {
            entity,
            endpoints,
            stamp: &self.stamp,
        }
    }

    /// The elements of a class list (inside its `[`, without the closing line): the later pieces
    /// of a long list are written on threads of their own and appended.
    fn elements(&self, out: &mut Vec<u8>, entities: &[&Entity], parts: Option<usize>) {
        let weights: Vec<usize> = entities
            .iter()
            .map(|e| 4 + e.attributes.len() + e.associations.len() + e.other_info.len())
            .collect();
        let ranges = match parts {
            Some(parts) => parallel::split_exactly(&weights, parts),
            None => parallel::split(&weights, parallel::parts()),
        };
        let write = |out: &mut Vec<u8>, range: Range<usize>| {
            for (position, entity) in entities[range.clone()].iter().enumerate() {
                let first = range.start + position == 0;
                out.extend_from_slice(if first { b"\n    " } else { b",\n    " });
                write_object(out, 2, &self.object(entity));
            }
        };
        let ((), pieces) = parallel::run_here(
            &ranges,
            |range| write(out, range),
            |_, range| {
                let mut piece = Vec::with_capacity(range.len() * BYTES_PER_ENTITY);
                write(&mut piece, range);
                piece
            },
        );
        for piece in pieces {
            out.extend_from_slice(&piece);
        }
    }
}

impl Serialize for Document<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(Some(Class::ALL.len()))?;
        for (class, entities) in Class::ALL.into_iter().zip(&self.by_class) {
            let objects = entities.iter().map(|entity| self.object(entity));
            map.serialize_entry(key(class), &Seq(objects))?
        }
        map.end()
    }
}

/// One entity as a JSON object: `ID`, its attributes, `CreationTime`, `Validity`, `OtherInfo`,
/// `Associations`.
struct Object<'a> {
    entity: &'a Entity<'a>,
    /// Endpoints written as its `CloudComputingEndpoint` association.
    endpoints: &'a [&'a str],
    stamp: &'a Stamp,
}

impl Serialize for Object<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let entity = self.entity;
        let mut map = serializer.serialize_map(None)?;
        map.serialize_entry("ID", &entity.id)?;
        for (name, value) in &entity.attributes {
            match value {
                Value::Text(text) if listed(entity.class, name) => {
                    map.serialize_entry(name, &[text])?
                }
                _ => map.serialize_entry(name, &Attribute(value))?,
            }
        }
        map.serialize_entry("CreationTime", &self.stamp.creation_time)?;
        map.serialize_entry("Validity", &self.stamp.validity)?;
        map.serialize_entry("OtherInfo", &OtherInfo(&entity.other_info))?;
        map.serialize_entry("Associations", &Associations(entity, self.endpoints))?;
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

/// The key an association is written under: the target's class as cloud-info-provider names it. A
/// policy names its share `Share` whatever the share's class, so a consumer finds the VO of a batch
/// share the way it finds a cloud share's.
fn association_key(entity: Class, target: Class) -> &'static str {
    match (entity, target) {
        (Class::MappingPolicy, Class::ComputingShare) => "Share",
        (_, other) => key(other),
    }
}

/// `Associations`: every key a list of IDs, keys in the order they first appear.
struct Associations<'a>(&'a Entity<'a>, &'a [&'a str]);

impl Serialize for Associations<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let entries = association_entries(self.0, self.1);
        let mut map = serializer.serialize_map(Some(entries.len()))?;
        for (name, targets) in entries {
            map.serialize_entry(name, &targets)?;
        }
        map.end()
    }
}

/// The keys of [`Associations`] in order, with the targets under each in association order, then
/// `endpoints` as the `CloudComputingEndpoint` association.
fn association_entries<'a>(
    entity: &'a Entity<'a>,
    endpoints: &[&'a str],
) -> Vec<(&'static str, Vec<&'a str>)> {
    let mut entries: Vec<(&'static str, Vec<&'a str>)> = Vec::new();
    let own = entity
        .associations
        .iter()
        .map(|(class, target)| (*class, target.as_str()));
    let derived = endpoints
        .iter()
        .map(|endpoint| (Class::CloudComputingEndpoint, *endpoint));
    for (class, target) in own.chain(derived) {
        let name = association_key(entity.class, class);
        match entries.iter_mut().find(|(existing, _)| *existing == name) {
            Some((_, targets)) => targets.push(target),
            None => entries.push((name, vec![target])),
        }
    }
    entries
}

/// Which endpoints each cloud share, image and instance type is reached through: those of its cloud
/// service. cloud-info-provider links them (`Associations.CloudComputingEndpoint`); the model does
/// not keep the link, since it follows from the tree, so it is added here and dropped again by
/// [`crate::glue::from_json`].
fn cloud_endpoints<'a>(entities: &'a [Entity<'a>]) -> HashMap<&'a str, Vec<&'a str>> {
    let mut of_service: HashMap<usize, Vec<&'a str>> = HashMap::new();
    for entity in entities {
        if entity.class == Class::CloudComputingEndpoint
            && let Some(service) = entity.parent
        {
            of_service
                .entry(service)
                .or_default()
                .push(entity.id.as_str());
        }
    }
    let mut out = HashMap::new();
    if of_service.is_empty() {
        return out;
    }
    for entity in entities {
        let service = match entity.class {
            Class::CloudComputingShare => entity.parent,
            Class::CloudComputingInstanceType | Class::CloudComputingImage => entity
                .parent
                .and_then(|manager| entities.get(manager))
                .and_then(|manager| manager.parent),
            _ => continue,
        };
        if let Some(endpoints) = service.and_then(|service| of_service.get(&service)) {
            out.insert(entity.id.as_str(), endpoints.clone());
        }
    }
    out
}

/// Whether a single-valued attribute is written as a list of one, as cloud-info-provider writes
/// it: a virtual accelerator's `ComputeCapability`.
fn listed(class: Class, name: &str) -> bool {
    class == Class::CloudComputingVirtualAccelerator && name == "ComputeCapability"
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

#[cfg(test)]
mod tests;
