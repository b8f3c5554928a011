//! The serde reader of a [`Server`]: field by field into the thread's [`Building`], keys compared
//! as bytes. Server pages go through the faster scanner of `scan.rs`; this reader serves servers
//! inside other documents and is the reference the scanner is tested against.

use std::fmt;

use serde::Deserialize;
use serde::de::{DeserializeSeed, Deserializer, Error as _, IgnoredAny, MapAccess, Visitor};

use super::{Building, Part, Server, specs};

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
