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

mod attributes;
mod order;
mod read_entity;

use attributes::*;
use order::*;
use read_entity::*;

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

#[cfg(test)]
mod tests;
