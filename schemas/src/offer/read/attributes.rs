//! Reading one attribute of an entity as the offer needs it: text, an integer, a GPU count (or
//! why it is none), the last segment of an ID.

use crate::glue::entity::{Entity, Value};
use crate::gpu::{CountError, GpuCount};

use crate::offer::InvalidCount;

/// The last segment of an accelfed ID (`urn:accelfed:S:ee:hpc/a100` -> `a100`).
pub(super) fn local_part(id: &str) -> String {
    id.rsplit(['/', ':']).next().unwrap_or(id).to_owned()
}

pub(super) fn text(entity: &Entity, name: &str) -> Option<String> {
    match entity.attribute(name)? {
        Value::Text(text) => Some(text.to_string()),
        _ => None,
    }
}

pub(super) fn int(entity: &Entity, name: &str) -> Option<u64> {
    match entity.attribute(name)? {
        Value::Int(value) => Some(*value),
        Value::Count(count) => count.as_whole(),
        _ => None,
    }
}

/// The GPU count `name` of `entity`: `None` where it is not published, an error where what is
/// published is no count. A parsed document's counts are already [`GpuCount`]s; integers and
/// floats come from entities built by hand, and may be negative, not a number or too large.
pub(super) fn count(entity: &Entity, name: &str) -> Result<Option<GpuCount>, InvalidCount> {
    let value = match entity.attribute(name) {
        Some(Value::Count(count)) => return Ok(Some(*count)),
        // Past 2^53 the conversion rounds, but such a value is refused as too large anyway.
        Some(Value::Int(value)) => *value as f64,
        Some(Value::Float(value)) => *value,
        _ => return Ok(None),
    };
    GpuCount::new(value)
        .map(Some)
        .map_err(|source| invalid(entity, name, source))
}

pub(super) fn invalid(entity: &Entity, attribute: &str, source: CountError) -> InvalidCount {
    InvalidCount {
        entity: format!("{} {}", entity.class.name(), entity.id),
        attribute: attribute.to_owned(),
        source,
    }
}
