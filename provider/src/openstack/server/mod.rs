//! A Nova server as `GET /servers/detail?all_tenants=1` returns it, kept compact: the texts
//! accelfed reads (ids, name, status, times, the embedded flavor) in one shared buffer.
//!
//! Why not a struct of `String`s: a large cloud lists 100,000 servers, and nine owned strings per
//! server (plus the extra specs) cost more allocations than the rest of the meter together
//! (BENCHMARKS.md, `## OpenStack`). Here each server is read field by field straight into one
//! buffer, so it costs one allocation; cloning it (a [`super::super::VmUsage`] keeps its server) shares
//! that buffer. Only the fields used are read; serde skips the rest unread. Server pages are read
//! with the faster scanner of `scan.rs` into the same type; this serde reader serves
//! servers inside other documents and is the reference the scanner is tested against.

use std::cell::RefCell;
use std::fmt;
use std::sync::Arc;

use serde::Deserialize;
use serde::de::{DeserializeSeed, Deserializer, Error as _, IgnoredAny, MapAccess, Visitor};

mod scan;
mod specs;

pub use scan::scan;

/// The texts of a server, in buffer order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Part {
    Id,
    Name,
    Status,
    TenantId,
    UserId,
    Created,
    Updated,
    TerminatedAt,
    FlavorId,
    FlavorName,
    FlavorSpecs,
}

const PARTS: usize = 11;

/// A server, read from Nova 2.1 to 2.9x.
#[derive(Clone, PartialEq)]
pub struct Server {
    text: Arc<str>,
    /// `(start, end)` of each [`Part`] in `text`.
    spans: [(u32, u32); PARTS],
    /// Which parts Nova sent (a null counts as absent).
    present: u16,
    /// Whether `OS-SRV-USG:launched_at` is set: `Some(false)` when Nova says null (the server never
    /// started, so it held no GPU time, as cASO counts it), `None` when the field is absent.
    launched: Option<bool>,
}

impl Server {
    fn part(&self, part: Part) -> Option<&str> {
        if self.present & (1 << part as u16) == 0 {
            return None;
        }
        let (start, end) = self.spans[part as usize];
        self.text.get(start as usize..end as usize)
    }

    /// The server's UUID.
    pub fn id(&self) -> &str {
        self.part(Part::Id).unwrap_or_default()
    }

    /// The name; empty when Nova sends none.
    pub fn name(&self) -> &str {
        self.part(Part::Name).unwrap_or_default()
    }

    /// `ACTIVE`, `DELETED`, `SHELVED_OFFLOADED`...
    pub fn status(&self) -> &str {
        self.part(Part::Status).unwrap_or_default()
    }

    /// The project.
    pub fn tenant_id(&self) -> &str {
        self.part(Part::TenantId).unwrap_or_default()
    }

    /// The Keystone user; empty when Nova sends none.
    pub fn user_id(&self) -> &str {
        self.part(Part::UserId).unwrap_or_default()
    }

    /// RFC 3339; when the server was requested. cASO starts its records here, not at `launched_at`.
    pub fn created(&self) -> &str {
        self.part(Part::Created).unwrap_or_default()
    }

    /// RFC 3339; the last change, which for a deleted server is the deletion.
    pub fn updated(&self) -> Option<&str> {
        self.part(Part::Updated)
    }

    /// `OS-SRV-USG:terminated_at` (naive UTC with microseconds).
    pub fn terminated_at(&self) -> Option<&str> {
        self.part(Part::TerminatedAt)
    }

    /// See the field: `Some(false)` for a server that never launched.
    pub fn launched(&self) -> Option<bool> {
        self.launched
    }

    /// The flavor's id: the reference Nova sends before microversion 2.47.
    pub fn flavor_id(&self) -> Option<&str> {
        self.part(Part::FlavorId)
    }

    /// The embedded flavor's `original_name` (2.47 on).
    pub fn flavor_name(&self) -> Option<&str> {
        self.part(Part::FlavorName)
    }

    /// The embedded flavor's extra specs (2.47 on) as a JSON object's text: 100,000 servers share
    /// a few hundred flavors, so the text is read into a map once per distinct flavor (`map.rs`).
    pub fn flavor_specs(&self) -> Option<&str> {
        self.part(Part::FlavorSpecs)
    }
}

impl fmt::Debug for Server {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Server")
            .field("id", &self.id())
            .field("name", &self.name())
            .field("status", &self.status())
            .field("tenant_id", &self.tenant_id())
            .field("user_id", &self.user_id())
            .field("created", &self.created())
            .field("updated", &self.updated())
            .field("launched", &self.launched)
            .field("terminated_at", &self.terminated_at())
            .field("flavor_id", &self.flavor_id())
            .field("flavor_name", &self.flavor_name())
            .field("flavor_specs", &self.flavor_specs())
            .finish()
    }
}

/// The server being read: its buffer and where each part lies.
#[derive(Default)]
struct Building {
    text: String,
    spans: [(u32, u32); PARTS],
    present: u16,
}

impl Building {
    fn start(&self) -> usize {
        self.text.len()
    }

    fn mark<E: serde::de::Error>(&mut self, part: Part, start: usize) -> Result<(), E> {
        let span = (u32::try_from(start), u32::try_from(self.text.len()));
        let (Ok(start), Ok(end)) = span else {
            return Err(E::custom("server larger than 4 GiB"));
        };
        self.spans[part as usize] = (start, end);
        self.present |= 1 << part as u16;
        Ok(())
    }

    /// The first key every server has that this one lacks, by its API name.
    fn missing(&self) -> Option<&'static str> {
        [
            (Part::Id, "id"),
            (Part::Status, "status"),
            (Part::TenantId, "tenant_id"),
            (Part::Created, "created"),
        ]
        .into_iter()
        .find(|(part, _)| self.present & (1 << *part as u16) == 0)
        .map(|(_, name)| name)
    }
}

thread_local! {
    /// Reused between servers: the only allocation per server is its shared buffer.
    static SCRATCH: RefCell<String> = RefCell::new(String::with_capacity(1024));
}

/// A server's keys that are read; any other is skipped.
enum Key {
    Id,
    Name,
    Status,
    TenantId,
    UserId,
    Created,
    Updated,
    LaunchedAt,
    TerminatedAt,
    Flavor,
    Other,
}

impl Key {
    fn from_bytes(key: &[u8]) -> Key {
        match key {
            b"id" => Key::Id,
            b"name" => Key::Name,
            b"status" => Key::Status,
            b"tenant_id" => Key::TenantId,
            b"user_id" => Key::UserId,
            b"created" => Key::Created,
            b"updated" => Key::Updated,
            b"OS-SRV-USG:launched_at" => Key::LaunchedAt,
            b"OS-SRV-USG:terminated_at" => Key::TerminatedAt,
            b"flavor" => Key::Flavor,
            _ => Key::Other,
        }
    }
}

/// The embedded flavor's keys that are read.
enum FlavorKey {
    Id,
    OriginalName,
    ExtraSpecs,
    Other,
}

impl FlavorKey {
    fn from_bytes(key: &[u8]) -> FlavorKey {
        match key {
            b"id" => FlavorKey::Id,
            b"original_name" => FlavorKey::OriginalName,
            b"extra_specs" => FlavorKey::ExtraSpecs,
            _ => FlavorKey::Other,
        }
    }
}

/// Reads a key as bytes and names it with `.0`. As bytes, serde_json does not check that each of
/// a server's fifty-odd keys is UTF-8 (reading them as `str` did, and that check was the largest
/// cost of a page over the floor, which skips keys unchecked too); a key is only compared with
/// the ASCII names above.
struct KeyBytes<K>(fn(&[u8]) -> K);

impl<'de, K> DeserializeSeed<'de> for KeyBytes<K> {
    type Value = K;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<K, D::Error> {
        deserializer.deserialize_bytes(self)
    }
}

impl<'de, K> Visitor<'de> for KeyBytes<K> {
    type Value = K;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a field name")
    }

    fn visit_bytes<E: serde::de::Error>(self, v: &[u8]) -> Result<K, E> {
        Ok((self.0)(v))
    }

    fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<K, E> {
        Ok((self.0)(v.as_bytes()))
    }
}

impl Server {
    /// A server from what `read` writes into a [`Building`] (it returns `launched`), the buffer
    /// reused from the thread's scratch so the server's own text is the only allocation.
    fn build<E>(
        busy: impl FnOnce() -> E,
        read: impl FnOnce(&mut Building) -> Result<Option<bool>, E>,
    ) -> Result<Server, E> {
        SCRATCH.with(|scratch| {
            let mut scratch = scratch.try_borrow_mut().map_err(|_| busy())?;
            let mut building = Building {
                text: std::mem::take(&mut *scratch),
                ..Building::default()
            };
            building.text.clear();
            let server = read(&mut building).map(|launched| Server {
                text: Arc::from(building.text.as_str()),
                spans: building.spans,
                present: building.present,
                launched,
            });
            *scratch = building.text;
            server
        })
    }
}

impl<'de> Deserialize<'de> for Server {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        Server::build(
            || D::Error::custom("server scratch buffer in use"),
            |building| deserializer.deserialize_map(ServerVisitor(building)),
        )
    }
}

struct ServerVisitor<'b>(&'b mut Building);

impl<'de> Visitor<'de> for ServerVisitor<'_> {
    /// `launched`.
    type Value = Option<bool>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a Nova server")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let b = self.0;
        let (mut launched, mut has_flavor) = (None, false);
        while let Some(key) = map.next_key_seed(KeyBytes(Key::from_bytes))? {
            let part = match key {
                Key::Id => Part::Id,
                Key::Name => Part::Name,
                Key::Status => Part::Status,
                Key::TenantId => Part::TenantId,
                Key::UserId => Part::UserId,
                Key::Created => Part::Created,
                Key::Updated => Part::Updated,
                Key::TerminatedAt => Part::TerminatedAt,
                Key::LaunchedAt => {
                    launched = Some(map.next_value::<Option<IgnoredAny>>()?.is_some());
                    continue;
                }
                Key::Flavor => {
                    map.next_value_seed(FlavorSeed(&mut *b))?;
                    has_flavor = true;
                    continue;
                }
                Key::Other => {
                    map.next_value::<IgnoredAny>()?;
                    continue;
                }
            };
            let start = b.start();
            if map.next_value_seed(OptionalText(&mut b.text))? {
                b.mark(part, start)?;
            }
        }
        if let Some(name) = b.missing() {
            return Err(A::Error::missing_field(name));
        }
        if !has_flavor {
            return Err(A::Error::missing_field("flavor"));
        }
        Ok(launched)
    }
}

/// Appends a string (or nothing, for null) to the buffer; says whether there was one.
struct OptionalText<'b>(&'b mut String);

impl<'de> DeserializeSeed<'de> for OptionalText<'_> {
    type Value = bool;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<bool, D::Error> {
        deserializer.deserialize_option(self)
    }
}

impl<'de> Visitor<'de> for OptionalText<'_> {
    type Value = bool;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a string or null")
    }

    fn visit_none<E: serde::de::Error>(self) -> Result<bool, E> {
        Ok(false)
    }

    fn visit_unit<E: serde::de::Error>(self) -> Result<bool, E> {
        Ok(false)
    }

    fn visit_some<D: Deserializer<'de>>(self, deserializer: D) -> Result<bool, D::Error> {
        deserializer.deserialize_str(self)
    }

    fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<bool, E> {
        self.0.push_str(v);
        Ok(true)
    }
}

/// Reads the `flavor` object into the buffer.
struct FlavorSeed<'b>(&'b mut Building);

impl<'de> DeserializeSeed<'de> for FlavorSeed<'_> {
    type Value = ();

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<(), D::Error> {
        deserializer.deserialize_map(self)
    }
}

impl<'de> Visitor<'de> for FlavorSeed<'_> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a server's flavor")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        let b = self.0;
        while let Some(key) = map.next_key_seed(KeyBytes(FlavorKey::from_bytes))? {
            let start = b.start();
            let (part, found) = match key {
                FlavorKey::Id => (
                    Part::FlavorId,
                    map.next_value_seed(OptionalText(&mut b.text))?,
                ),
                FlavorKey::OriginalName => (
                    Part::FlavorName,
                    map.next_value_seed(OptionalText(&mut b.text))?,
                ),
                FlavorKey::ExtraSpecs => (
                    Part::FlavorSpecs,
                    map.next_value_seed(specs::SpecsText(&mut b.text))?,
                ),
                FlavorKey::Other => {
                    map.next_value::<IgnoredAny>()?;
                    continue;
                }
            };
            if found {
                b.mark(part, start)?;
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_server_reads_its_parts_and_skips_the_rest() {
        let body = r#"{"id": "s-1", "name": "vm \"one\"", "status": "ACTIVE", "tenant_id": "p",
            "user_id": "u", "created": "2026-11-01T00:00:00Z", "updated": null,
            "addresses": {"net": [{"addr": "10.0.0.1"}]}, "OS-SRV-USG:launched_at": null,
            "flavor": {"vcpus": 4, "original_name": "g1", "extra_specs": {"a": "1", "b\"": "x\ny"}}}"#;
        let server: Server = serde_json::from_str(body).unwrap();
        assert_eq!(server.id(), "s-1");
        assert_eq!(server.name(), "vm \"one\"");
        assert_eq!(server.status(), "ACTIVE");
        assert_eq!(server.tenant_id(), "p");
        assert_eq!(server.user_id(), "u");
        assert_eq!(server.created(), "2026-11-01T00:00:00Z");
        assert_eq!(server.updated(), None);
        assert_eq!(server.terminated_at(), None);
        assert_eq!(server.launched(), Some(false));
        assert_eq!(server.flavor_id(), None);
        assert_eq!(server.flavor_name(), Some("g1"));
        let specs: std::collections::BTreeMap<String, String> =
            serde_json::from_str(server.flavor_specs().unwrap()).unwrap();
        assert_eq!(specs["b\""], "x\ny");
        // the same through a `Value`, where nothing can be borrowed
        let value: serde_json::Value = serde_json::from_str(body).unwrap();
        assert_eq!(serde_json::from_value::<Server>(value).unwrap(), server);
    }

    #[test]
    fn required_parts_are_required() {
        let err = serde_json::from_str::<Server>(r#"{"id": "s", "status": "ACTIVE"}"#)
            .unwrap_err()
            .to_string();
        assert!(err.contains("missing field `tenant_id`"), "{err}");
        let err = serde_json::from_str::<Server>(
            r#"{"id": "s", "status": "A", "tenant_id": "p", "created": "t"}"#,
        )
        .unwrap_err()
        .to_string();
        assert!(err.contains("missing field `flavor`"), "{err}");
    }
}
