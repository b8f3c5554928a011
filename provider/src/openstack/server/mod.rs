//! A Nova server as `GET /servers/detail?all_tenants=1` returns it, kept compact: the texts
//! accelfed reads (ids, name, status, times, the embedded flavor) in one shared buffer.
//!
//! Why not a struct of `String`s: a large cloud lists 100,000 servers, and nine owned strings per
//! server (plus the extra specs) cost more allocations than the rest of the meter together
//! (BENCHMARKS.md, `## OpenStack`). Here each server is read field by field straight into one
//! buffer, so it costs one allocation; cloning it (a [`super::super::VmUsage`] keeps its server) shares
//! that buffer. Only the fields used are read; serde skips the rest unread. Server pages are read
//! with the faster scanner of `scan.rs` into the same type; the serde reader of `read.rs` serves
//! servers inside other documents and is the reference the scanner is tested against.

use std::cell::RefCell;
use std::fmt;
use std::sync::Arc;

mod read;
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

#[cfg(test)]
mod tests;
